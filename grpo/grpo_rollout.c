/* grpo_rollout.c - the synchronous rollout of one step: draw
 * tasks_per_step groups, queue G episodes of each in the rollout, step it
 * until every episode is done (one batched policy call per turn), and with
 * dynamic sampling (DAPO) replace zero-variance groups by fresh ones.
 *
 * Data-parallel (grpo_dp.h, N ranks): every rank draws the same groups,
 * runs the episodes of groups r, r + N, ... (r its rank) and then hands
 * its finished trajectories to every other rank, which finish them in
 * their groups too; so every rank ends the rollout with all the step's
 * records, as one process would, and takes the same decisions (zero
 * variance, replacements) from them. */
#include "grpo/grpo_int.h"

#include "common/clock.h"
#include "common/err.h"
#include "grpo/grpo_dp.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct sync_ctx {
    grpo_group **gs;
    size_t ng;
    int G;
    const grpo_config *c;
    const grpo_opts *o;
    grpo_durs *durs;
    double *raw;  /* the rollout's reward of each tag (before shaping and hooks) */
} sync_ctx;

static void sync_done(void *user, long tag, char *rec, double reward)
{
    sync_ctx *x = user;
    size_t gi = (size_t)tag / (size_t)x->G;
    if (tag < 0 || gi >= x->ng) {
        free(rec);
        return;
    }
    x->raw[tag] = reward;
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

/* One trajectory in an exchange: tag, the rollout's reward, the record's
 * length (-1: no record) and its bytes. */
typedef struct xhead {
    int64_t tag;
    double reward;
    int64_t len;
} xhead;

/* Data-parallel: the trajectories of this rank's groups among gs[first..ng)
 * to every rank; each finishes the other ranks' ones in its groups. */
static int exchange(grpo_group **gs, size_t first, size_t ng, sync_ctx *x, char *err)
{
    int R = dp_size(), me = dp_rank(), G = x->G;
    buf_t out;
    buf_init(&out, RL_GRPO_DP_GATHER_MAX);
    int rc = 0;
    for (size_t k = first; k < ng && rc == 0; k++) {
        if ((int)(k % (size_t)R) != me)
            continue;
        for (int i = 0; i < G && rc == 0; i++) {
            const grpo_traj *tr = &gs[k]->tr[i];
            int64_t tag = (int64_t)(k * (size_t)G + (size_t)i);
            xhead h = {tag, x->raw[tag], tr->rec ? (int64_t)strlen(tr->rec) : -1};
            if ((rc = buf_append(&out, &h, sizeof h)) == 0 && tr->rec)
                rc = buf_append(&out, tr->rec, (size_t)h.len);
        }
    }
    if (rc < 0) {
        buf_dispose(&out);
        return rl_err(err, rc, "data-parallel exchange: this rank's records pass %u bytes, or out of memory",
                      (unsigned)RL_GRPO_DP_GATHER_MAX);
    }
    size_t *offs = malloc((size_t)(R + 1) * sizeof *offs), all_n;
    char *all = NULL;
    if (!offs)
        rc = rl_err(err, RL_ENOMEM, "data-parallel exchange: out of memory");
    else
        rc = dp_allgather_bytes(&all, &all_n, offs, out.data, out.len, err);
    buf_dispose(&out);
    for (int r = 0; r < R && rc == 0; r++) {
        if (r == me)
            continue;
        for (size_t at = offs[r]; at < offs[r + 1] && rc == 0;) {
            xhead h;
            if (offs[r + 1] - at < sizeof h) {
                rc = rl_err(err, RL_EPARSE, "data-parallel exchange: rank %d sent a cut entry", r);
                break;
            }
            memcpy(&h, all + at, sizeof h);
            at += sizeof h;
            size_t gi = h.tag >= 0 ? (size_t)h.tag / (size_t)G : ng;
            if (gi < first || gi >= ng || h.len > (int64_t)(offs[r + 1] - at)) {
                rc = rl_err(err, RL_EPARSE, "data-parallel exchange: rank %d sent tag %lld outside this step", r,
                            (long long)h.tag);
                break;
            }
            char *rec = NULL;
            if (h.len >= 0) {
                if (!(rec = malloc((size_t)h.len + 1))) {
                    rc = rl_err(err, RL_ENOMEM, "data-parallel exchange: out of memory");
                    break;
                }
                memcpy(rec, all + at, (size_t)h.len);
                rec[h.len] = '\0';
                at += (size_t)h.len;
            }
            x->raw[h.tag] = h.reward;
            grpo_traj_finish(gs[gi], (int)(h.tag % G), rec, h.reward, x->c, x->o, x->durs);
        }
    }
    free(all);
    free(offs);
    return rc;
}

/* Runs groups gs[first..ng) to completion (tags index gs): at N ranks,
 * this rank's share, then the exchange. */
static int run_groups(rollout *ro, const grpo_run_env *env, grpo_group **gs, size_t first, size_t ng, sync_ctx *x,
                      double *busy, char *err)
{
    int G = x->G, R = dp_size(), me = dp_rank();
    rollout_set_version(ro, env->version);
    for (size_t k = first; k < ng; k++)
        for (int i = 0; i < G && (int)(k % (size_t)R) == me; i++) {
            int rc = rollout_add(ro, gs[k]->task, env->ep, grpo_ep_seed(env->seed, (uint64_t)gs[k]->gid, i),
                                 (long)(k * (size_t)G + (size_t)i), err);
            if (rc < 0)
                return rc;
        }
    x->gs = gs;
    x->ng = ng;
    int rc = drain(ro, env->max_active, x, busy, err);
    if (rc == 0 && R > 1)
        rc = exchange(gs, first, ng, x, err);
    return rc;
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
    double *raw = calloc(cap * (size_t)c->group_size, sizeof *raw);
    if (!gs || !raw) {
        free(gs);
        free(raw);
        return rl_err(err, RL_ENOMEM, "grpo: out of memory");
    }
    size_t ng = 0;
    int rc = 0;
    sync_ctx x = {gs, 0, c->group_size, c, o, durs, raw};
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
    free(raw);
    if (rc < 0) {
        for (size_t k = 0; k < ng; k++)
            grpo_group_free(gs[k]);
        free(gs);
        return rc;
    }
    sm->finished = ng * (size_t)c->group_size;
    *out = gs;
    *n_out = ng;
    return 0;
}
