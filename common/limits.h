/* limits.h - every limit in the project, in one place, with its reason.
 *
 * Untrusted input is everywhere (agent-written code, agent-written tool
 * calls, test output): every buffer that grows from it is capped by a
 * constant from this file. Each module owns one section; keep the reason
 * next to the value. Runtime options may lower these defaults, never
 * raise a hard cap (the HARD ones).
 */
#ifndef RL_LIMITS_H
#define RL_LIMITS_H

/* ---- common ---------------------------------------------------------- */

/* Default cap of a buf_t when the caller gives none: far above any honest
 * tool observation or test log, small enough that a runaway loop fails
 * fast instead of swapping. */
#define RL_BUF_DEFAULT_MAX (64u << 20)

/* Largest file fs_read_file will read: task files, trajectories lines and
 * source files are far smaller; checkpoints use their own reader. */
#define RL_FILE_MAX (256u << 20)

/* ---- sandbox --------------------------------------------------------- */

/* ---- workspace (harness/workspace) ----------------------------------- */

/* ---- tasks ----------------------------------------------------------- */

/* One hunk's old or new side: our diffs touch a few lines; a whole file
 * rewritten stays far below this. */
#define RL_PATCH_HUNK_MAX (4u << 20)

/* ---- harness: tools, template, episode ------------------------------- */

/* A junit result file larger than this is not a real pytest report of a
 * small repository (ours are a few KB); refuse rather than parse. */
#define RL_TESTRUN_RESULT_MAX (8u << 20)

/* The test summary the agent sees: enough for every failing test of a
 * small repository with its message, before the observation budget. */
#define RL_TESTRUN_SUMMARY_MAX (256u << 10)

/* One failing test's message in the summary: an assertion with its
 * values fits; a dumped buffer is cut in the middle. */
#define RL_TESTRUN_MSG_MAX 600

/* Build/crash output shown when no test result was reported: the
 * compiler's first errors and the tail. */
#define RL_TESTRUN_OUTPUT_SHOWN 3000

/* Episodes one report reads: far above an experiment's few thousand; a
 * directory with more is not a run of this harness. */
#define RL_REPORT_MAX_EPISODES 1000000u

/* One JSONL file: records carry every turn's context and ids (~100 KB
 * each with history=drop); 1 GiB is ~10k such episodes. */
#define RL_REPORT_FILE_MAX (1024u << 20)

/* summary.md and each SVG. */
#define RL_REPORT_MD_MAX (16u << 20)
#define RL_REPORT_SVG_MAX (4u << 20)

/* Steps simulated for the utilization model: long enough for the
 * carry-over to reach its steady state. */
#define RL_REPORT_UTIL_STEPS 50

/* A batch's output file read back on resume: records of ~100 KB, so
 * about 20k episodes; a larger file belongs in several runs. */
#define RL_BATCH_OUT_MAX (2048u << 20)

/* Jobs of one batch: seeds x tasks of any sane experiment. */
#define RL_BATCH_MAX_JOBS 1000000u

/* Plain progress lines (not a terminal): one every so many seconds, so a
 * CI log shows life without drowning. */
#define RL_BATCH_PLAIN_EVERY_S 10.0

/* An experiment file is a few runs of a few fields. */
#define RL_EXP_FILE_MAX (1u << 20)

/* Seeds of one run: GRPO groups are 8-64; evaluation sets a few hundred. */
#define RL_EXP_MAX_SEEDS 4096

/* ---- policy / model --------------------------------------------------- */

/* ---- grpo ------------------------------------------------------------ */

#endif
