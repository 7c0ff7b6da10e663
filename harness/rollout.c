/* rollout.c - step many episodes together, one policy call per step. */
#include "harness/rollout.h"

#include "common/err.h"
#include "common/limits.h"
#include "common/vec.h"
#include "harness/workspace.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct slot {
    ep_state *ep;      /* NULL: free */
    ws_tree *ws;
    long tag;
    ep_config cfg;     /* the episode's copy (seed set) */
    pol_request req;
    pol_response resp;
    int pending;       /* req filled this step */
} slot;

typedef struct queued {
    const task *t;
    const ep_config *cfg;
    uint64_t seed;
    long tag;
} queued;

struct rollout {
    policy *pol;
    rollout_opts o;
    slot *slots;
    queued *q;
    size_t nq, qhead, qcap;
    long version;
};

void rollout_opts_default(rollout_opts *o)
{
    o->ws_root = NULL;
    o->slot_base = 0;
    o->max_active = RL_ROLLOUT_ACTIVE;
    o->threads = 0;
    o->log = NULL;
    o->log_ctx = NULL;
}

int rollout_new(rollout **out, policy *pol, const rollout_opts *o, char *err)
{
    *out = NULL;
    rollout *r = calloc(1, sizeof *r);
    if (!r)
        return rl_err(err, RL_ENOMEM, "rollout: out of memory");
    r->pol = pol;
    if (o)
        r->o = *o;
    else
        rollout_opts_default(&r->o);
    if (r->o.max_active < 1 || r->o.max_active > RL_ROLLOUT_ACTIVE_MAX) {
        int bad = r->o.max_active;
        free(r);
        return rl_err(err, RL_EINVAL, "rollout: max_active %d: expected 1-%d", bad, RL_ROLLOUT_ACTIVE_MAX);
    }
    if (r->o.threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        r->o.threads = n > 0 ? (int)n : 1;
    }
    r->slots = calloc((size_t)r->o.max_active, sizeof *r->slots);
    if (!r->slots) {
        free(r);
        return rl_err(err, RL_ENOMEM, "rollout: out of memory");
    }
    *out = r;
    return 0;
}

void rollout_free(rollout *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->o.max_active; i++) {
        ep_free(r->slots[i].ep);
        ws_free(r->slots[i].ws);
        pol_response_dispose(&r->slots[i].resp);
    }
    free(r->slots);
    free(r->q);
    free(r);
}

int rollout_add(rollout *r, const task *t, const ep_config *cfg, uint64_t seed, long tag, char *err)
{
    int rc = VEC_GROW(r->q, r->qcap, r->nq + 1, RL_VEC_DEFAULT_MAX);
    if (rc == RL_ELIMIT)
        return rl_err(err, rc, "rollout: more than %u episodes queued", RL_VEC_DEFAULT_MAX);
    if (rc < 0)
        return rl_err(err, rc, "rollout: out of memory");
    r->q[r->nq++] = (queued){t, cfg, seed, tag};
    return 0;
}

size_t rollout_pending(const rollout *r)
{
    size_t n = r->nq - r->qhead;
    for (int i = 0; i < r->o.max_active; i++)
        n += r->slots[i].ep != NULL;
    return n;
}

void rollout_set_version(rollout *r, long version) { r->version = version; }

/* Hands a scored episode's record over and frees the slot. */
static void hand_over(const rollout *r, slot *s, char *rec, const char *ferr, rollout_done_fn done, void *user)
{
    if (ferr) {
        rl_logf(r->o.log, r->o.log_ctx, RL_LOG_ERROR, "rollout: episode %ld: %s", s->tag, ferr);
        free(rec);
        rec = NULL;
    }
    double reward = ep_reward(s->ep);
    ep_free(s->ep);
    s->ep = NULL;
    ws_free(s->ws);
    s->ws = NULL;
    if (done)
        done(user, s->tag, rec, reward);
    else
        free(rec);
}

typedef struct score_job {
    slot **slots;   /* the episodes that ended */
    char **recs;
    char (*errs)[RL_ERR_MAX];
    int *failed;
    int n, next;
    pthread_mutex_t mu;
} score_job;

static void *score_worker(void *arg)
{
    score_job *j = arg;
    for (;;) {
        pthread_mutex_lock(&j->mu);
        int i = j->next++;
        pthread_mutex_unlock(&j->mu);
        if (i >= j->n)
            return NULL;
        j->failed[i] = ep_finish(&j->recs[i], j->slots[i]->ep, j->errs[i]) < 0;
    }
}

/* Scoring the episodes that ended: each runs its tests in its own sandbox
 * and companion tree, so several run at once, on up to threads threads,
 * while the caller goes on (generation and tool calls of the other
 * episodes); score_end joins them and hands the records over in slot
 * order. */
typedef struct scoring {
    score_job j;
    pthread_t th[RL_ROLLOUT_THREADS_MAX];
    int started;
} scoring;

static int score_begin(scoring *sc, const rollout *r, slot **ended, int n)
{
    memset(sc, 0, sizeof *sc);
    sc->j.slots = ended;
    sc->j.n = n;
    pthread_mutex_init(&sc->j.mu, NULL);
    if (n == 0)
        return 0;
    sc->j.recs = calloc((size_t)n, sizeof *sc->j.recs);
    sc->j.errs = calloc((size_t)n, sizeof *sc->j.errs);
    sc->j.failed = calloc((size_t)n, sizeof *sc->j.failed);
    if (!sc->j.recs || !sc->j.errs || !sc->j.failed) {
        free(sc->j.recs);
        free(sc->j.errs);
        free(sc->j.failed);
        return RL_ENOMEM;
    }
    int nt = r->o.threads < n ? r->o.threads : n;
    if (nt > RL_ROLLOUT_THREADS_MAX)
        nt = RL_ROLLOUT_THREADS_MAX;
    for (int t = 0; t < nt; t++)
        if (pthread_create(&sc->th[sc->started], NULL, score_worker, &sc->j) == 0)
            sc->started++;
    return 0;
}

static void score_end(scoring *sc, const rollout *r, rollout_done_fn done, void *user)
{
    if (sc->j.n > 0) {
        score_worker(&sc->j); /* what the threads have not taken (all, without threads) */
        for (int t = 0; t < sc->started; t++)
            pthread_join(sc->th[t], NULL);
        for (int i = 0; i < sc->j.n; i++)
            hand_over(r, sc->j.slots[i], sc->j.recs[i], sc->j.failed[i] ? sc->j.errs[i] : NULL, done, user);
        free(sc->j.recs);
        free(sc->j.errs);
        free(sc->j.failed);
    }
    pthread_mutex_destroy(&sc->j.mu);
}

/* Out of memory for the scoring's arrays: each episode scored in turn. */
static void score_each(const rollout *r, slot **ended, int n, rollout_done_fn done, void *user)
{
    for (int i = 0; i < n; i++) {
        char ferr[RL_ERR_MAX], *rec = NULL;
        int bad = ep_finish(&rec, ended[i]->ep, ferr) < 0;
        hand_over(r, ended[i], rec, bad ? ferr : NULL, done, user);
    }
}

/* Fills free slots from the queue. An episode that cannot start (its work
 * tree or prompt failed) is reported with a NULL record. */
static void start_queued(rollout *r, rollout_done_fn done, void *user)
{
    for (int i = 0; i < r->o.max_active && r->qhead < r->nq; i++) {
        slot *s = &r->slots[i];
        if (s->ep)
            continue;
        const queued *q = &r->q[r->qhead++];
        char err[RL_ERR_MAX];
        ws_opts wo;
        ws_opts_default(&wo);
        if (r->o.ws_root)
            wo.root = r->o.ws_root;
        s->cfg = *q->cfg;
        s->cfg.seed = q->seed;
        s->cfg.log = NULL;
        if (!s->cfg.tok)
            s->cfg.tok = r->pol->tok;
        s->tag = q->tag;
        if (ws_open_task(&s->ws, &wo, q->t, r->o.slot_base + i, err) < 0 ||
            ep_new(&s->ep, q->t, &s->cfg, s->ws, err) < 0) {
            rl_logf(r->o.log, r->o.log_ctx, RL_LOG_ERROR, "rollout: %s seed %llu: %s", q->t->instance_id,
                    (unsigned long long)q->seed, err);
            ws_free(s->ws);
            s->ws = NULL;
            s->ep = NULL;
            if (done)
                done(user, q->tag, NULL, 0);
            i--; /* try this slot again with the next queued episode */
        }
    }
}

typedef struct feed_job {
    slot *slots;
    int n, next;
    pthread_mutex_t mu;
} feed_job;

/* Tool calls of different episodes run on several threads: each episode
 * touches only its own work tree and sandbox runs. */
static void *feed_worker(void *arg)
{
    feed_job *j = arg;
    for (;;) {
        pthread_mutex_lock(&j->mu);
        int i = j->next++;
        pthread_mutex_unlock(&j->mu);
        if (i >= j->n)
            return NULL;
        slot *s = &j->slots[i];
        if (!s->pending)
            continue;
        char err[RL_ERR_MAX];
        if (ep_feed(s->ep, &s->resp, err) < 0)
            ep_abort(s->ep, "error", err);
        pol_response_dispose(&s->resp);
    }
}

int rollout_step(rollout *r, rollout_done_fn done, void *user, char *err)
{
    start_queued(r, done, user);
    size_t n = r->o.max_active > 0 && r->o.max_active <= RL_ROLLOUT_ACTIVE_MAX ? (size_t)r->o.max_active : 1;
    int nreq = 0;
    pol_request *reqs = calloc(n, sizeof *reqs);
    pol_response *resps = calloc(n, sizeof *resps);
    int *who = calloc(n, sizeof *who);
    slot **ended = calloc(n, sizeof *ended);
    int nended = 0;
    if (!reqs || !resps || !who || !ended) {
        free(reqs);
        free(resps);
        free(who);
        free(ended);
        return rl_err(err, RL_ENOMEM, "rollout: out of memory");
    }
    for (int i = 0; i < (int)n; i++) {
        slot *s = &r->slots[i];
        s->pending = 0;
        if (!s->ep)
            continue;
        if (!ep_request(s->ep, &s->req)) {
            ended[nended++] = s;
            continue;
        }
        s->req.episode = i;
        reqs[nreq] = s->req;
        who[nreq++] = i;
    }
    /* the episodes that ended at their limits are scored while the others
     * generate and run their tools */
    scoring sc;
    if (score_begin(&sc, r, ended, nended) < 0) {
        score_each(r, ended, nended, done, user);
        score_begin(&sc, r, ended, 0);
    }
    if (nreq) {
        char perr[RL_ERR_MAX];
        if (pol_generate(r->pol, resps, reqs, (size_t)nreq, perr) < 0) {
            for (int k = 0; k < nreq; k++) {
                pol_response_dispose(&resps[k]);
                ep_abort(r->slots[who[k]].ep, "policy_error", perr);
            }
        } else {
            for (int k = 0; k < nreq; k++) {
                slot *s = &r->slots[who[k]];
                s->resp = resps[k];
                s->resp.policy_version = r->version;
                s->pending = 1;
            }
            feed_job j = {r->slots, (int)n, 0, PTHREAD_MUTEX_INITIALIZER};
            int nt = r->o.threads < nreq ? r->o.threads : nreq;
            pthread_t th[RL_ROLLOUT_THREADS_MAX];
            if (nt > RL_ROLLOUT_THREADS_MAX)
                nt = RL_ROLLOUT_THREADS_MAX;
            int started = 0;
            for (int t = 1; t < nt; t++)
                if (pthread_create(&th[started], NULL, feed_worker, &j) == 0)
                    started++;
            feed_worker(&j);
            for (int t = 0; t < started; t++)
                pthread_join(th[t], NULL);
        }
    }
    free(reqs);
    free(resps);
    free(who);
    score_end(&sc, r, done, user);
    /* the episodes that ended in this step are scored now, together */
    int first = nended;
    for (int i = 0; i < (int)n; i++) {
        slot *s = &r->slots[i];
        if (s->ep && s->pending && ep_done(s->ep))
            ended[nended++] = s;
    }
    if (score_begin(&sc, r, ended + first, nended - first) < 0)
        score_each(r, ended + first, nended - first, done, user);
    else
        score_end(&sc, r, done, user);
    free(ended);
    return (int)rollout_pending(r);
}

int rollout_drain(rollout *r, rollout_done_fn done, void *user, char *err)
{
    while (rollout_pending(r) > 0) {
        int rc = rollout_step(r, done, user, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}
