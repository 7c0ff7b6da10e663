/* err.h - error codes and messages shared by every module.
 *
 * Convention (libgit2 style): a function returns 0 on success or one of the
 * negative codes below, and on failure writes a one-line, human-readable
 * message into the caller's buffer `err` (RL_ERR_MAX bytes, may be NULL).
 * Messages name the thing that failed and what was expected, e.g.
 *   "tasks/leapyear.json: field FAIL_TO_PASS: expected a non-empty array".
 */
#ifndef RL_ERR_H
#define RL_ERR_H

#include <stddef.h>

#define RL_ERR_MAX 512

enum {
    RL_OK = 0,
    RL_EINVAL = -1,   /* bad argument or bad input data */
    RL_ENOMEM = -2,   /* allocation failed */
    RL_EIO = -3,      /* read/write/exec failed */
    RL_ENOSPC = -4,   /* disk full or quota */
    RL_ENOENT = -5,   /* missing file, repo, task, test */
    RL_EPARSE = -6,   /* malformed JSON, diff, tool call, test output */
    RL_ELIMIT = -7,   /* a cap from common/limits.h was hit */
    RL_ETIMEOUT = -8, /* a wall-clock limit was hit */
    RL_EUNSUP = -9,   /* the kernel or build lacks a feature */
    RL_EGIT = -10,    /* libgit2 reported an error */
    RL_EDENIED = -11, /* refused by policy (path escapes, protected file) */
};

/* Formats a message into err (if non-NULL) and returns code. */
int rl_err(char *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Short name of a code: "invalid", "io", ... */
const char *rl_strerror(int code);

/* Maps an errno value to an RL_E* code. */
int rl_from_errno(int e);

#endif
