/* batch.h - many episodes in parallel worker processes, resumable.
 *
 * Each job is one (task, config, seed). Workers are forked processes, each
 * with its own work tree slot; the parent hands out jobs one at a time (so
 * long episodes do not hold up a static share) and shows progress. Every
 * record is appended whole to one JSONL file; a job whose key is already
 * there is skipped, so running the same command again after kill -9
 * finishes only the missing episodes. A worker that dies mid-episode gets
 * an error record for that episode and is replaced; the batch goes on.
 *
 * Jobs of the openai policy run in this process instead, each config's
 * jobs as one rollout (harness/rollout.h): all active episodes step
 * together and their requests go out in one policy call, max-inflight of
 * them open at once. An episode its server could not answer is recorded
 * with end_reason "policy_error" and no reward, and a later run of the
 * same batch runs it again.
 */
#ifndef RL_BATCH_H
#define RL_BATCH_H

#include "common/log.h"
#include "harness/episode.h"
#include "corpus/task.h"

#include <stddef.h>

typedef struct batch_job {
    const task *task;
    const ep_config *cfg;  /* borrowed; cfg->seed is overridden by seed */
    uint64_t seed;
} batch_job;

/* Called in the parent after each finished job and a few times a second:
 * done of total jobs of this run, extra a short summary ("pass 0.50 ..."). */
typedef void (*batch_progress_fn)(void *ctx, size_t done, size_t total, const char *extra);

typedef struct batch_opts {
    int workers;           /* default: number of online CPUs */
    const char *out;       /* JSONL path */
    const char *ws_root;   /* workspace root; NULL: the workspace default */
    batch_progress_fn progress;  /* NULL: none */
    void *progress_ctx;
    rl_log_fn log;         /* skipped jobs, records that could not be written; NULL: none */
    void *log_ctx;
} batch_opts;

void batch_opts_default(batch_opts *o);

typedef struct batch_stats {
    size_t jobs, skipped, done, passed, errors;
    size_t flagged;        /* episodes the integrity check flagged */
    double wall_s;
} batch_stats;

/* The record key of a job: task, run label or config digest, seed. */
void batch_job_key(char *out, size_t n, const batch_job *j);

int batch_run(batch_stats *st, const batch_job *jobs, size_t n, const batch_opts *o, char *err);

#endif
