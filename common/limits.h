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

/* Longest repo name or base key. Both become file names (<key>-<slot>)
 * and ref names; instance ids are far shorter. */
#define RL_WS_NAME_MAX 128

/* Slots per base: one per concurrent episode of a GRPO group, which is a
 * few dozen at most; a bound keeps a typo from making 10^9 directories. */
#define RL_WS_SLOT_MAX 1024

/* Largest patch ws_apply or a bug patch takes. An agent's edit or a bug is
 * a few KB; 8 MiB leaves room for generated files and stops a runaway
 * tool call from being parsed into memory. */
#define RL_WS_PATCH_MAX (8u << 20)

/* Largest diff ws_diff returns. It is stored in trajectory records; a diff
 * bigger than this is not a bug fix (past it ws_diff fails with
 * RL_ELIMIT instead of growing without bound). */
#define RL_WS_DIFF_MAX (8u << 20)

/* Files bigger than this are shown as binary without content in ws_diff
 * (libgit2's max_size), so a 1 GB data dump left by agent code is never
 * read into memory. Source files are far smaller. */
#define RL_WS_DIFF_FILE_MAX (1u << 20)

/* Base file contents a work tree keeps in memory so reset compares and
 * rewrites without the object store. Task repos are a few hundred KB;
 * past the cap the rest is read from the store when needed (slower, same
 * result). Per open work tree, so G slots hold G copies. */
#define RL_WS_BLOB_CACHE_MAX (32u << 20)

/* Directory depth the clean pass descends into an untracked tree before
 * it moves the rest up to the work tree root and continues in another
 * pass: bounds stack and fds against a nesting bomb (mkdir in a loop). */
#define RL_WS_CLEAN_DEPTH_MAX 64

/* Clean passes before reset gives up. Each pass removes at least
 * RL_WS_CLEAN_DEPTH_MAX levels of every chain, so this allows a nesting
 * of 64 * 4096 = 262144 levels, far past what the sandbox's inode and
 * file-size caps let agent code create. */
#define RL_WS_CLEAN_PASSES_MAX 4096

/* ---- tasks ----------------------------------------------------------- */

/* ---- harness: tools, template, episode ------------------------------- */

/* ---- policy / model --------------------------------------------------- */

/* ---- grpo ------------------------------------------------------------ */

#endif
