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

/* A task file holds two small diffs and a problem statement: 4 MiB is
 * far above any honest one and keeps a corrupt file from eating memory. */
#define RL_TASK_FILE_MAX (4u << 20)
/* instance_id: "<repo>-gen-<seed>-<n>" style ids stay well under this,
 * and they become file names (NAME_MAX is 255 with ".json"). */
#define RL_TASK_ID_MAX 128
/* repo: a folder name under repos/. */
#define RL_TASK_REPO_MAX 64
/* problem_statement: an issue text the agent reads in its prompt; 16 KiB
 * is a long issue and still a small part of the context window. */
#define RL_TASK_PROBLEM_MAX (16u << 10)
/* bug / patch: diffs of a small repository; generated ones are a few
 * lines, hand-written ones at most a few hundred. */
#define RL_TASK_DIFF_MAX (1u << 20)
/* test_cmd: one shell line. */
#define RL_TASK_CMD_MAX 4096
/* Paths (test_result_file, protected_paths entries, generator.file). */
#define RL_TASK_PATH_MAX 256
/* Test ids: pytest ids with long parameters stay below this. */
#define RL_TASK_TEST_ID_MAX 256
/* Entries of FAIL_TO_PASS + PASS_TO_PASS: our repositories have tens of
 * tests; a thousand leaves room for a real project. */
#define RL_TASK_TESTS_MAX 1000
/* Entries of protected_paths. */
#define RL_TASK_PATHS_MAX 64
/* timeout_s range: a test run of a small repo takes seconds; 10 minutes
 * is the most a single scoring run may block a worker. */
#define RL_TASK_TIMEOUT_MIN 1
#define RL_TASK_TIMEOUT_MAX 600
/* generator.mutation names are short words ("flip_cmp"). */
#define RL_TASK_NAME_MAX 64
/* Tasks in one set: 300 generated plus hand-written now; 100k keeps a
 * runaway generator from making `list` quadratic in memory. */
#define RL_TASK_SET_MAX 100000
/* Folder depth under tasks/generated/ (generated/<repo>/ is depth 1). */
#define RL_TASK_DIR_DEPTH 8
/* Terms in one selector ("a,b,repo:x,..."). */
#define RL_TASK_SELECT_TERMS_MAX 1024

/* ---- tasks: test-result parsers (tasks/testres) ----------------------- */

/* Test cases kept from one run. Our repositories have tens; output of a
 * misbehaving (agent-edited) test binary can claim millions. Cases past
 * the cap are dropped, so they read as TR_MISSING (a failure). */
#define RL_TR_CASES_MAX 20000
/* A test name longer than any valid task test id (RL_TASK_TEST_ID_MAX)
 * can never match one: keep a little more, cut the rest. */
#define RL_TR_NAME_MAX 512
/* Failure message kept per test: enough for an assertion and the tail of
 * a Python traceback; it goes into the agent's observation. */
#define RL_TR_MSG_MAX 4096
/* Element nesting in JUnit XML: pytest writes 4 levels. */
#define RL_TR_XML_DEPTH 64
/* Attributes on one XML element (pytest writes at most 6). */
#define RL_TR_XML_ATTRS_MAX 32
/* Longest XML element or attribute name. */
#define RL_TR_XML_NAME_MAX 128

/* ---- tasks: bug generator (tasks/mutate, tasks/diff) ------------------ */

/* Largest source file the mutator lexes: repository files are a few
 * hundred lines. */
#define RL_MUT_SRC_MAX (1u << 20)
/* Candidate sites kept per file (a 400-line file has a few hundred). */
#define RL_MUT_SITES_MAX 50000
/* Bracket nesting the mutator tracks; deeper code is left unmutated. */
#define RL_MUT_DEPTH_MAX 256
/* Lines per side the diff writer accepts. */
#define RL_DIFF_LINES_MAX 200000
/* Edits Myers' search may need for the changed middle (after trimming the
 * common head and tail). Its trace costs about D^2 longs: 1024 edits is
 * 8 MiB, far above a mutation's one or two changed lines; past it the
 * writer emits one delete-all/insert-all run, still a correct diff. */
#define RL_DIFF_EDITS_MAX 1024

/* ---- harness: tools, template, episode ------------------------------- */

/* ---- policy / model --------------------------------------------------- */

/* ---- grpo ------------------------------------------------------------ */

#endif
