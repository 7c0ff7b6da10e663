/* pool.h - a pool of forked worker processes that run jobs by index.
 *
 * The parent hands out one job at a time through each worker's pipe, so
 * long jobs never hold up a static share; each worker reports one result
 * line per job on a shared pipe (a write under PIPE_BUF is atomic). A
 * worker that dies mid-job is reported through `died` and replaced, and
 * workers die with the parent (PR_SET_PDEATHSIG). Used by batch, validate
 * and gen.
 */
#ifndef RL_POOL_H
#define RL_POOL_H

#include "common/buf.h"

#include <stddef.h>

typedef struct pool_cbs {
    /* In the worker: run job idx in work slot `slot` (0..workers-1) and
     * write a one-line result into out (newlines become spaces; at most
     * RL_POOL_RESULT_MAX bytes are sent). */
    void (*run)(void *user, size_t idx, int slot, buf_t *out);
    /* In the parent: job idx finished with this result line. */
    void (*done)(void *user, size_t idx, const char *line);
    /* In the parent: the worker running idx died (why says how). */
    void (*died)(void *user, size_t idx, const char *why);
    /* In the parent, after each event and a few times a second. */
    void (*tick)(void *user, size_t done, size_t total);
    void *user;
} pool_cbs;

/* Runs jobs[0..n) (indices passed to run) on `workers` processes. */
int pool_run(const size_t *jobs, size_t n, int workers, const pool_cbs *cb, char *err);

#endif
