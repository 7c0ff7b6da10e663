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

/* ---- harness: tools, template, episode ------------------------------- */

/* ---- policy / model --------------------------------------------------- */

/* ---- grpo ------------------------------------------------------------ */

#endif
