/* experiment.h - experiment files: named runs, each a task set x config x
 * seeds, run as one batch into runs/<experiment>/.
 *
 *   {"name": "pd-prompts", "description": "...",
 *    "runs": [{"name": "pd-v1-unlimited", "tasks": "parse_date",
 *              "policy": "search", "prompt": "v1", "max_turns": "unlimited",
 *              "think": "on", "history": "keep", "seeds": "1-3"}]}
 *
 * Run fields: name, tasks (a selector), seeds, and any of policy, prompt,
 * max_turns (number or "unlimited"), think ("on"/"off"), history
 * ("keep"/"drop"), template ("qwen3-xml"/"qwen3"), temperature, top_p, obs_budget, max_wall_s,
 * max_context_tokens, integrity ("enforce"/"flag": whether a diff the
 * integrity check flags scores 0), and for the openai policy base_url,
 * model, api ("chat"/"completions"), api_key_env and max_inflight.
 * Unknown fields are an error.
 */
#ifndef RL_EXPERIMENT_H
#define RL_EXPERIMENT_H

#include "harness/batch.h"
#include "harness/episode.h"
#include "corpus/task.h"

typedef struct exp_run {
    char *name;
    char *tasks;            /* selector */
    ep_config cfg;          /* cfg.run = name */
    uint64_t *seeds;
    size_t nseeds;
    char *policy_buf, *prompt_buf;
    char *openai_buf[4];    /* base_url, model, api, api_key_env */
} exp_run;

typedef struct experiment {
    char *name;
    char *description;
    exp_run *runs;
    size_t nruns;
} experiment;

int exp_load(experiment **out, const char *path, char *err);
void exp_free(experiment *e);

/* Expands runs into batch jobs (pointers into e and all). *jobs is freed
 * by the caller. policy_override replaces every run's policy if non-NULL. */
int exp_jobs(batch_job **jobs, size_t *n, experiment *e, const task_set *all,
             const char *policy_override, char *err);

#endif
