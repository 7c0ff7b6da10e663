/* rollout.h - many episodes in one process, their generation batched.
 *
 * The trainer's way to collect trajectories: episodes are queued, then
 * stepped together. Each step gathers the pending requests of every
 * active episode into ONE policy call (the model samples them as a batch
 * with its KV cache), then runs each episode's tool calls on a few
 * threads. Finished episodes are scored (their tests run, several at
 * once on those threads; an episode that ended at a limit is scored
 * while the others generate) and handed back with their record. A step can be interleaved with training: the policy version set
 * with rollout_set_version is stamped on every turn generated afterwards,
 * so partial (asynchronous) rollouts know which tokens are off-policy.
 */
#ifndef RL_ROLLOUT_H
#define RL_ROLLOUT_H

#include "common/log.h"
#include "harness/episode.h"
#include "policy/policy.h"
#include "corpus/task.h"

typedef struct rollout rollout;

typedef struct rollout_opts {
    const char *ws_root;   /* NULL: the workspace default */
    int slot_base;         /* work-tree slots used: slot_base .. +max_active */
    int max_active;        /* episodes stepped at once (RL_ROLLOUT_ACTIVE) */
    int threads;           /* tool-call threads; 0: online CPUs */
    rl_log_fn log;         /* why an episode could not start or be scored
                              (it comes back with a NULL record); NULL: none */
    void *log_ctx;
    /* Remote episodes: with n_env > 0 every episode runs on a `harness
     * serve` (docs/env-server.md), the i-th reset going to env_urls[i %
     * n_env] (base URLs without /v1). Its turns' context ids come from the
     * server (reset with "return_context_ids"); the policy's replies go
     * back with their ids, logprobs and policy_version (the version the
     * policy's response carries, not rollout_set_version's), and the
     * record handed back is the server's (/v1/state once done). The seed
     * sent is the episode's modulo 2^31 (the server's range). An episode
     * whose reset, step or generation fails comes back with a NULL record
     * (a failed generation closes it on the server). Each remote episode
     * runs its turns on its own thread, never waiting for the others'
     * (the policy's calls are serialized unless policy.concurrent). */
    const char *const *env_urls;
    int n_env;
    const char *env_token; /* bearer token of the env servers; NULL: none */
    long env_timeout_ms;   /* per request attempt; 0: the http client's default */
} rollout_opts;

void rollout_opts_default(rollout_opts *o);

int rollout_new(rollout **out, policy *pol, const rollout_opts *o, char *err);
void rollout_free(rollout *r);

/* Queues an episode of t under cfg with this seed; tag comes back with
 * its record. cfg and t are borrowed until the episode finishes. */
int rollout_add(rollout *r, const task *t, const ep_config *cfg, uint64_t seed, long tag, char *err);

/* Called once per finished episode; the callee owns record (free it). */
typedef void (*rollout_done_fn)(void *user, long tag, char *record, double reward);

/* Starts queued episodes up to max_active, then advances every active
 * episode by one turn; with env servers, starts the queued ones on their
 * threads and returns once at least one episode has finished. Returns the
 * number still active or queued. */
int rollout_step(rollout *r, rollout_done_fn done, void *user, char *err);

/* Steps until nothing is active or queued. */
int rollout_drain(rollout *r, rollout_done_fn done, void *user, char *err);

/* Episodes active or queued. */
size_t rollout_pending(const rollout *r);

/* Policy version stamped on turns generated from now on. */
void rollout_set_version(rollout *r, long version);

#endif
