/* grpo_async.c - asynchronous partial rollouts.
 *
 * A rollout thread owns a copy of the weights (its own model), a model
 * policy over it and a rollout; it keeps every generation slot busy,
 * taking new episodes from an inbox and putting finished records in an
 * outbox. The learner queues groups (grpo_async_collect: enough to fill
 * the slots with a step's worth waiting behind them), waits
 * until lambda of a step's worth of episodes have finished and at least
 * one group is complete, trains on the complete groups, then publishes its
 * weights (grpo_async_publish): the thread copies them in between two rollout steps and stamps
 * the new version on every later turn. Unfinished episodes go on with
 * their older turns carrying older versions (grpo/loss drops those past
 * max_staleness and corrects the rest by the ratio to their behaviour
 * logprobs). The thread also measures busy slot time, exactly split
 * between learner steps.
 */
#include "grpo/grpo_int.h"

#include "common/clock.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/vec.h"
#include "policy/model_policy.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- asynchronous rollout thread --------------------------------------------------------- */

typedef struct as_add {
    const task *t;
    uint64_t seed;
    long tag;
} as_add;

typedef struct as_item {
    long tag;
    char *rec;
    double reward;
} as_item;

struct grpo_async {
    ep_config ep;        /* the episodes' config (tok borrowed from the trainer) */
    int max_active;
    long seed;           /* the run's seed: episode seeds derive from it */
    pthread_t th;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv_work, cv_done;
    model *sm;
    policy *spol;
    rollout *ro;
    as_add *in;
    size_t nin, capin;
    as_item *out;
    size_t nout, capout;
    float *pub;
    long pub_version;
    int pub_new;
    int stop, failed;
    char err[RL_ERR_MAX];
    double busy;         /* slot-seconds of finished rollout steps */
    double cur_t0;       /* start of the rollout step under way (0: none) */
    size_t cur_act;      /* its active episodes */
    /* learner side */
    size_t in_flight;
    grpo_group **groups;
    size_t ng, capg;
    size_t finished_since;
};

static void as_done(void *user, long tag, char *rec, double reward)
{
    grpo_async *A = user;
    pthread_mutex_lock(&A->mu);
    if (VEC_GROW(A->out, A->capout, A->nout + 1, RL_GRPO_ASYNC_EPISODES_MAX) < 0) {
        A->failed = 1;
        snprintf(A->err, sizeof A->err, "grpo async: more than %u finished episodes, or out of memory",
                 RL_GRPO_ASYNC_EPISODES_MAX);
        free(rec);
        pthread_cond_broadcast(&A->cv_done);
        pthread_mutex_unlock(&A->mu);
        return;
    }
    A->out[A->nout++] = (as_item){tag, rec, reward};
    pthread_cond_broadcast(&A->cv_done);
    pthread_mutex_unlock(&A->mu);
}

static void *as_main(void *arg)
{
    grpo_async *A = arg;
    char err[RL_ERR_MAX];
    pthread_mutex_lock(&A->mu);
    while (!A->stop) {
        if (A->pub_new) {
            memcpy(A->sm->params, A->pub, A->sm->n_params * sizeof(float));
            rollout_set_version(A->ro, A->pub_version);
            A->pub_new = 0;
        }
        as_add *in = A->in;
        size_t nin = A->nin;
        A->in = NULL;
        A->nin = A->capin = 0;
        pthread_mutex_unlock(&A->mu);
        int rc = 0;
        for (size_t i = 0; i < nin && rc == 0; i++)
            rc = rollout_add(A->ro, in[i].t, &A->ep, in[i].seed, in[i].tag, err);
        free(in);
        size_t p = rollout_pending(A->ro);
        if (rc == 0 && p > 0) {
            size_t act = p < (size_t)A->max_active ? p : (size_t)A->max_active;
            pthread_mutex_lock(&A->mu);
            double t0 = A->cur_t0 = clk_s();
            A->cur_act = act;
            pthread_mutex_unlock(&A->mu);
            rc = rollout_step(A->ro, as_done, A, err);
            pthread_mutex_lock(&A->mu);
            A->busy += (double)act * (clk_s() - t0);
            A->cur_t0 = 0;
            A->cur_act = 0;
        } else {
            pthread_mutex_lock(&A->mu);
            while (rc == 0 && !A->stop && A->nin == 0 && !A->pub_new)
                pthread_cond_wait(&A->cv_work, &A->mu);
        }
        if (rc < 0) {
            A->failed = 1;
            snprintf(A->err, sizeof A->err, "%s", err);
            pthread_cond_broadcast(&A->cv_done);
            break;
        }
    }
    pthread_mutex_unlock(&A->mu);
    return NULL;
}

/* Slot-seconds kept busy up to now, the rollout step under way included,
 * so that the busy time of a learner step is exactly its share. */
static double as_busy_now(grpo_async *A)
{
    pthread_mutex_lock(&A->mu);
    double b = A->busy;
    if (A->cur_t0 > 0)
        b += (double)A->cur_act * (clk_s() - A->cur_t0);
    pthread_mutex_unlock(&A->mu);
    return b;
}

void grpo_async_publish(grpo_async *A, const model *m, long version)
{
    pthread_mutex_lock(&A->mu);
    memcpy(A->pub, m->params, m->n_params * sizeof(float));
    A->pub_version = version;
    A->pub_new = 1;
    pthread_cond_broadcast(&A->cv_work);
    pthread_mutex_unlock(&A->mu);
}

void grpo_async_free(grpo_async *A)
{
    if (!A)
        return;
    if (A->started) {
        pthread_mutex_lock(&A->mu);
        A->stop = 1;
        pthread_cond_broadcast(&A->cv_work);
        pthread_mutex_unlock(&A->mu);
        pthread_join(A->th, NULL);
    }
    rollout_free(A->ro);
    pol_free(A->spol);
    model_free(A->sm);
    for (size_t i = 0; i < A->nout; i++)
        free(A->out[i].rec);
    free(A->out);
    free(A->in);
    free(A->pub);
    for (size_t i = 0; i < A->ng; i++)
        grpo_group_free(A->groups[i]);
    free(A->groups);
    pthread_mutex_destroy(&A->mu);
    pthread_cond_destroy(&A->cv_work);
    pthread_cond_destroy(&A->cv_done);
    free(A);
}

int grpo_async_new(grpo_async **out, const model *m, const tok_t *tok, const grpo_run_env *env, const grpo_config *c,
                   char *err)
{
    *out = NULL;
    grpo_async *A = calloc(1, sizeof *A);
    if (!A)
        return rl_err(err, RL_ENOMEM, "grpo async: out of memory");
    A->ep = *env->ep;
    A->max_active = env->max_active;
    A->seed = env->seed;
    pthread_mutex_init(&A->mu, NULL);
    pthread_cond_init(&A->cv_work, NULL);
    pthread_cond_init(&A->cv_done, NULL);
    model_opts mo;
    model_opts_default(&mo);
    mo.n_threads = c->threads;
    int rc = model_new(&A->sm, &m->cfg, &mo, err);
    if (rc == 0)
        model_set_active_vocab(A->sm, m->n_active);
    A->pub = rc == 0 ? malloc(m->n_params * sizeof(float)) : NULL;
    if (rc == 0 && !A->pub)
        rc = rl_err(err, RL_ENOMEM, "grpo async: out of memory");
    if (rc == 0) {
        memcpy(A->sm->params, m->params, m->n_params * sizeof(float));
        model_policy_opts po;
        model_policy_opts_default(&po);
        po.temperature = (float)c->temperature;
        po.top_p = (float)c->top_p;
        po.max_tokens = c->max_reply_tokens;
        po.name = "grpo-async";
        rc = model_policy_new(&A->spol, A->sm, tok, &po, err);
    }
    if (rc == 0) {
        rollout_opts ro;
        rollout_opts_default(&ro);
        ro.ws_root = env->ws_root;
        ro.max_active = env->max_active;
        ro.threads = env->tool_threads;
        ro.env_urls = env->env_urls; /* a fleet: remote episodes, generation by env->pol */
        ro.n_env = env->n_env;
        ro.env_token = env->env_token;
        ro.env_timeout_ms = env->env_timeout_ms;
        rc = rollout_new(&A->ro, env->pol ? env->pol : A->spol, &ro, err);
    }
    if (rc == 0) {
        rollout_set_version(A->ro, env->version);
        if (pthread_create(&A->th, NULL, as_main, A) != 0)
            rc = rl_err(err, RL_EIO, "grpo async: cannot start the rollout thread");
        else
            A->started = 1;
    }
    if (rc < 0) {
        grpo_async_free(A);
        return rc;
    }
    *out = A;
    return 0;
}

/* Learner side: queues a new group's episodes. */
static int as_queue_group(grpo_async *A, grpo_data *d, int replacement, char *err)
{
    int G = d->group_size;
    grpo_group *g;
    int rc = grpo_data_next_group(&g, d, err);
    if (rc < 0)
        return rc;
    if (VEC_GROW(A->groups, A->capg, A->ng + 1, RL_GRPO_ASYNC_GROUPS_MAX) < 0) {
        grpo_group_free(g);
        return rl_err(err, RL_ELIMIT, "grpo async: more than %u groups, or out of memory", RL_GRPO_ASYNC_GROUPS_MAX);
    }
    g->replacement = replacement;
    A->groups[A->ng++] = g;
    pthread_mutex_lock(&A->mu);
    if (VEC_GROW(A->in, A->capin, A->nin + (size_t)G, RL_GRPO_ASYNC_EPISODES_MAX) < 0) {
        pthread_mutex_unlock(&A->mu);
        return rl_err(err, RL_ELIMIT, "grpo async: more than %u queued episodes, or out of memory",
                      RL_GRPO_ASYNC_EPISODES_MAX);
    }
    for (int i = 0; i < G; i++)
        A->in[A->nin++] = (as_add){g->task, grpo_ep_seed(A->seed, (uint64_t)g->gid, i), g->gid * G + i};
    pthread_cond_broadcast(&A->cv_work);
    pthread_mutex_unlock(&A->mu);
    A->in_flight += (size_t)G;
    return 0;
}

void grpo_async_counters(grpo_async *A, long *gen, long *prefill, double *gen_s, double *busy)
{
    model_policy_counters(A->spol, gen, prefill, gen_s);
    if (busy)
        *busy = as_busy_now(A);
}

int grpo_async_collect(grpo_async *A, grpo_data *d, const grpo_config *c, const grpo_opts *o, grpo_durs *durs,
                       grpo_step_metrics *sm, grpo_group ***gs, size_t *nb_out, size_t *nd_out, char *err)
{
    *gs = NULL;
    *nb_out = *nd_out = 0;
    int rc;
    int G = c->group_size;
    /* Queue groups until the unfinished episodes fill every slot with a
     * step's worth waiting behind them. While the learner waits for a
     * group whose last episode runs long, the slots run the next groups'
     * episodes instead of sitting idle; and when episodes finish slower
     * than a step's worth per step, the queue stays this deep instead of
     * growing. A queued episode takes the newest weights when it starts,
     * so the depth adds no staleness. */
    size_t want = (size_t)c->tasks_per_step * (size_t)G + (size_t)A->max_active;
    while (A->in_flight < want)
        if ((rc = as_queue_group(A, d, 0, err)) < 0)
            return rc;
    size_t need = (size_t)ceil(c->lambda * (double)c->tasks_per_step * G);
    int budget = c->dynamic_sampling ? c->max_extra_groups : 0;
    for (;;) {
        pthread_mutex_lock(&A->mu);
        while (A->nout == 0 && !A->failed)
            pthread_cond_wait(&A->cv_done, &A->mu);
        if (A->failed) {
            pthread_mutex_unlock(&A->mu);
            return rl_err(err, RL_EIO, "grpo async rollout: %s", A->err);
        }
        as_item *out = A->out;
        size_t nout = A->nout;
        A->out = NULL;
        A->nout = A->capout = 0;
        pthread_mutex_unlock(&A->mu);
        for (size_t i = 0; i < nout; i++) {
            long gid = out[i].tag / G;
            grpo_group *g = NULL;
            for (size_t k = 0; k < A->ng && !g; k++)
                if (A->groups[k]->gid == gid)
                    g = A->groups[k];
            A->in_flight--;
            A->finished_since++;
            sm->finished++;
            if (!g) {
                free(out[i].rec);
                continue;
            }
            grpo_traj_finish(g, (int)(out[i].tag % G), out[i].rec, out[i].reward, c, o, durs);
            if (g->n_done == g->n && g->st.zero_variance && budget > 0) {
                g->dropped = 1;
                sm->dropped++;
                sm->resampled++;
                budget--;
                if ((rc = as_queue_group(A, d, 1, err)) < 0) {
                    for (size_t j = i + 1; j < nout; j++)
                        free(out[j].rec);
                    free(out);
                    return rc;
                }
            }
        }
        free(out);
        size_t complete = 0;
        for (size_t k = 0; k < A->ng; k++)
            complete += A->groups[k]->n_done == A->groups[k]->n && !A->groups[k]->dropped;
        if (complete > 0 && (A->finished_since >= need || A->in_flight == 0))
            break;
    }
    /* the complete groups: those to train on first, then the dropped */
    grpo_group **batch = calloc(A->ng, sizeof *batch), **dropped = calloc(A->ng, sizeof *dropped);
    size_t nb = 0, nd = 0, keep = 0;
    if (!batch || !dropped) {
        free(batch);
        free(dropped);
        return rl_err(err, RL_ENOMEM, "grpo: out of memory");
    }
    for (size_t k = 0; k < A->ng; k++) {
        grpo_group *g = A->groups[k];
        if (g->n_done < g->n)
            A->groups[keep++] = g;
        else if (g->dropped)
            dropped[nd++] = g;
        else
            batch[nb++] = g;
    }
    A->ng = keep;
    A->finished_since = 0;
    for (size_t k = 0; k < nd; k++)
        batch[nb + k] = dropped[k];
    free(dropped);
    *gs = batch;
    *nb_out = nb;
    *nd_out = nd;
    return 0;
}
