/* tools.h - the agent's tools: specs, and the file tools on a work tree.
 *
 * Seven tools: list_files, read_file, search, edit_file, write_file (run
 * here), run_tests and submit (only their specs here; the episode loop runs
 * them through the hooks in tool_ctx).
 *
 * Every path an agent names is confined to the work tree: relative, no ".."
 * component, no ".git" component, resolved with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_MAGICLINKS) from a descriptor of the work-tree root, so a
 * symlink leading out (absolute, or up through "..") is refused by the
 * kernel. Without openat2 (ENOSYS) a component-by-component O_NOFOLLOW walk
 * is used, which refuses every symlink. Only regular files with one link
 * are read or written; FIFOs, devices and sockets are refused without
 * being opened for I/O. Sizes, entries visited and bytes read are capped
 * (common/limits.h) and a clock is checked between files, which bounds
 * each call's time (RL_TOOL_TIME_MS by default). A bad argument is an
 * error observation, never a crash.
 */
#ifndef RL_TOOLS_H
#define RL_TOOLS_H

#include "common/buf.h"
#include "protocol/toolcall.h"

#include <stddef.h>

/* Hook for run_tests: names[0..n) are the tests asked for (n == 0: all).
 * Writes the observation into obs; returns 0 (the tool call succeeded,
 * whatever the tests did) or a negative RL_E* with err filled. */
typedef int (*tool_run_tests_fn)(void *user, const char *const *names, size_t n, buf_t *obs,
                                 char *err);
/* Hook for submit: same contract, no arguments. */
typedef int (*tool_submit_fn)(void *user, buf_t *obs, char *err);

typedef struct tool_ctx {
    int root_fd;          /* O_PATH|O_DIRECTORY descriptor of the work tree; -1 unset */
    char root[1024];      /* its path, for messages */
    size_t obs_budget;    /* observation bytes kept (head + tail); 0 = no cut */
    unsigned time_ms;     /* wall-clock budget of one file-tool call */
    size_t read_max;      /* bytes read from one file */
    size_t read_window;   /* lines read_file shows from start_line alone (0: to the end) */
    int edit_hints;       /* 1 (default): a failed edit_file old_string is answered with
                             the file's most similar lines or the lines it occurs on */
    size_t write_max;     /* bytes written to one file */
    size_t list_show_max; /* entries list_files prints */
    size_t visit_max;     /* entries list_files / search visit */
    size_t search_files_max, search_bytes_max, search_matches_max;
    int walk_only;        /* resolve with the O_NOFOLLOW walk even if openat2 exists */
    tool_run_tests_fn run_tests;
    tool_submit_fn submit;
    void *user;           /* passed to the hooks */
} tool_ctx;

/* Defaults from common/limits.h, no root, no hooks. */
void tool_ctx_default(tool_ctx *c);
/* Opens the work-tree root (must be a directory; symlinks are resolved
 * here, once, by the trusted caller). */
int tool_ctx_init(tool_ctx *c, const char *root, char *err);
void tool_ctx_dispose(tool_ctx *c);

/* The error kinds of edit_file's own failures (tool_result.kind). */
#define TOOL_KIND_NO_MATCH "no_match"     /* old_string is not in the file */
#define TOOL_KIND_NOT_UNIQUE "not_unique" /* it is there more than once */
#define TOOL_KIND_NO_CHANGE "no_change"   /* old_string equals new_string */

typedef struct tool_result {
    int code;       /* 0: the call succeeded; else the RL_E* of the error */
    char *obs;      /* observation for the policy (valid UTF-8, cut to budget) */
    size_t obs_len;
    size_t cut;     /* bytes removed by the observation budget */
    double ms;      /* wall time of the call */
    const char *kind; /* NULL on success; else a stable name of what went wrong (static string):
                         edit_file: "no_match" (old_string absent), "not_unique", "no_change";
                         any tool: "invalid", "not_found", "denied", "limit", "timeout", "io", ... */
} tool_result;

void tool_result_dispose(tool_result *r);

/* The seven specs, in a fixed order. */
const tc_spec *tool_specs(size_t *n);

/* Runs one validated call (from tc_parse or tc_call_init). Always fills
 * out (an error observation reads "error: ..."); returns out->code. For
 * run_tests / submit without a hook: RL_EUNSUP. err gets the one-line
 * error as well. */
int tool_exec(tool_result *out, const tool_ctx *ctx, const tc_call *call, char *err);

/* Cuts text longer than budget bytes to its head and tail (about half
 * each, on line boundaries when a newline is near, never inside a UTF-8
 * sequence) joined by the line "[... N bytes (L lines) cut ...]".
 * Returns a new string (caller frees) or NULL; *cut = bytes removed. */
char *tool_obs_cut(const char *s, size_t len, size_t budget, size_t *out_len, size_t *cut);

/* Checks a path argument without touching the disk: non-empty, relative,
 * under RL_TOOL_PATH_MAX, no "..", no ".git" component, no NUL. */
int tool_path_check(const char *path, char *err);

#endif
