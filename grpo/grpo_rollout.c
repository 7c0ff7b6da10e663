/* grpo_rollout.c - the synchronous rollout of one step: draw
 * tasks_per_step groups, queue G episodes of each in the rollout, step it
 * until every episode is done (one batched policy call per turn), and with
 * dynamic sampling (DAPO) replace zero-variance groups by fresh ones. */
#include "grpo/grpo_int.h"

#include "common/clock.h"
#include "common/err.h"

#include <stdlib.h>

typedef struct sync_ctx {
    grpo_group **gs;
    size_t ng;
    int G;
    const grpo_config *c;
    const grpo_opts *o;
    grpo_durs *durs;
} sync_ctx;

static void sync_done(void *user, long tag, char *rec, double reward)
{
    sync_ctx *x = user;
    size_t gi = (size_t)tag / (size_t)x->G;
    if (tag < 0 || gi >= x->ng) {
        free(rec);
        return;
    }
    grpo_traj_finish(x->gs[gi], (int)(tag % x->G), rec, reward, x->c, x->o, x->durs);
}

/* Steps the rollout until it is empty, measuring busy slot-seconds. */
static int drain(rollout *ro, int max_active, sync_ctx *x, double *busy, char *err)
{
    while (rollout_pending(ro) > 0) {
        size_t p = rollout_pending(ro);
        size_t act = p < (size_t)max_active ? p : (size_t)max_active;
        double t0 = clk_s();
        int rc = rollout_step(ro, sync_done, x, err);
        if (rc < 0)
            return rc;
        *busy += (double)act * (clk_s() - t0);
    }
    return 0;
}

/* Runs groups gs[first..ng) to completion (tags index gs). */
static int run_groups(rollout *ro, const grpo_run_env *env, grpo_group **gs, size_t first, size_t ng, sync_ctx *x,
                      double *busy, char *err)
{
    int G = x->G;
    rollout_set_version(ro, env->version);
    for (size_t k = first; k < ng; k++)
        for (int i = 0; i < G; i++) {
            int rc = rollout_add(ro, gs[k]->task, env->ep, grpo_ep_seed(env->seed, (uint64_t)gs[k]->gid, i),
                                 (long)(k * (size_t)G + (size_t)i), err);
            if (rc < 0)
                return rc;
        }
    x->gs = gs;
    x->ng = ng;
    return drain(ro, env->max_active, x, busy, err);
}

/* Complete zero-variance groups not yet replaced. */
static size_t zero_var_unreplaced(grpo_group *const *gs, size_t ng)
{
    size_t n = 0;
    for (size_t k = 0; k < ng; k++)
        n += gs[k]->n_done == gs[k]->n && gs[k]->st.zero_variance && !gs[k]->dropped;
    return n;
}

int grpo_rollout_groups(grpo_group ***out, size_t *n_out, rollout *ro, const grpo_run_env *env, grpo_data *d,
                        const grpo_config *c, const grpo_opts *o, grpo_durs *durs, grpo_step_metrics *sm, double *busy,
                        char *err)
{
    *out = NULL;
    *n_out = 0;
    *busy = 0;
    size_t cap = (size_t)c->tasks_per_step + (size_t)(c->dynamic_sampling ? c->max_extra_groups : 0);
    grpo_group **gs = calloc(cap, sizeof *gs);
    if (!gs)
        return rl_err(err, RL_ENOMEM, "grpo: out of memory");
    size_t ng = 0;
    int rc = 0;
    sync_ctx x = {gs, 0, c->group_size, c, o, durs};
    for (int k = 0; k < c->tasks_per_step && rc == 0; k++)
        if ((rc = grpo_data_next_group(&gs[ng], d, err)) == 0)
            ng++;
    if (rc == 0)
        rc = run_groups(ro, env, gs, 0, ng, &x, busy, err);
    int budget = c->dynamic_sampling ? c->max_extra_groups : 0;
    while (rc == 0 && budget > 0 && zero_var_unreplaced(gs, ng) > 0) {
        size_t first = ng;
        for (size_t k = 0; k < first && budget > 0 && rc == 0; k++) {
            if (!(gs[k]->st.zero_variance && !gs[k]->dropped))
                continue;
            gs[k]->dropped = 1;
            sm->dropped++;
            if ((rc = grpo_data_next_group(&gs[ng], d, err)) < 0)
                break;
            gs[ng++]->replacement = 1;
            sm->resampled++;
            budget--;
        }
        if (rc == 0)
            rc = run_groups(ro, env, gs, first, ng, &x, busy, err);
    }
    if (rc < 0) {
        for (size_t k = 0; k < ng; k++)
            grpo_group_free(gs[k]);
        free(gs);
        return rc;
    }
    *out = gs;
    *n_out = ng;
    return 0;
}
