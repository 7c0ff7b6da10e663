/* rollout.c - step many episodes together, one policy call per step. */
#include "harness/rollout.h"

#include "common/buf.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/str.h"
#include "common/vec.h"
#include "harness/workspace.h"
#include "http/http.h"
#include "protocol/template.h"

#include <cJSON.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct slot {
    ep_state *ep;      /* NULL: free */
    ws_tree *ws;
    long tag;
    ep_config cfg;     /* the episode's copy (seed set) */
    pol_request req;
    pol_response resp;
    int pending;       /* req filled this step */
    /* a remote episode (rollout_opts.env_urls): its id and server, the
     * pending turn's context ids, cap and seed as the server sent them */
    int remote;
    char rid[RL_ROLLOUT_REMOTE_ID_MAX];
    const char *renv;
    int32_t *rctx;
    size_t nrctx;
    int rmax;
    uint64_t rseed;
    int rdone;
    double rreward;
    char *rrec;
    http_client *rh;   /* this slot's client (one thread at a time) */
    struct rollout *owner;
    pthread_t rth;     /* the thread running the episode's turns */
    int rthread;       /* 1: rth to join; 2: the turns ran on the caller */
    int rfinished;     /* rth has returned (under rollout.mu) */
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
    size_t next_env;   /* round robin over env_urls */
    char auth[HTTP_HEADER_LINE_MAX];
    /* remote episodes' threads: rfinished, stop; gen_mu serializes the
     * policy's calls when it is not concurrent */
    pthread_mutex_t mu, gen_mu;
    pthread_cond_t cv;
    int stop;
};

void rollout_opts_default(rollout_opts *o)
{
    o->ws_root = NULL;
    o->slot_base = 0;
    o->max_active = RL_ROLLOUT_ACTIVE;
    o->threads = 0;
    o->log = NULL;
    o->log_ctx = NULL;
    o->env_urls = NULL;
    o->n_env = 0;
    o->env_token = NULL;
    o->env_timeout_ms = 0;
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
    if (r->o.n_env > RL_ROLLOUT_ENV_URLS_MAX || (r->o.n_env && !r->o.env_urls)) {
        free(r);
        return rl_err(err, RL_EINVAL, "rollout: env servers: expected 1..%d URLs", RL_ROLLOUT_ENV_URLS_MAX);
    }
    if (r->o.env_token && (strlen(r->o.env_token) > HTTP_HEADER_LINE_MAX - 40 || strpbrk(r->o.env_token, "\r\n"))) {
        free(r);
        return rl_err(err, RL_EINVAL, "rollout: env token: expected one line under %d bytes", HTTP_HEADER_LINE_MAX - 40);
    }
    if (r->o.env_token && r->o.env_token[0])
        snprintf(r->auth, sizeof r->auth, "Authorization: Bearer %s", r->o.env_token);
    r->slots = calloc((size_t)r->o.max_active, sizeof *r->slots);
    if (!r->slots) {
        free(r);
        return rl_err(err, RL_ENOMEM, "rollout: out of memory");
    }
    pthread_mutex_init(&r->mu, NULL);
    pthread_mutex_init(&r->gen_mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    for (int i = 0; i < r->o.max_active; i++)
        r->slots[i].owner = r;
    for (int i = 0; i < r->o.max_active && r->o.n_env; i++) {
        http_client_opts ho;
        http_client_opts_default(&ho);
        if (r->o.env_timeout_ms > 0)
            ho.timeout_ms = r->o.env_timeout_ms;
        int rc = http_client_new(&r->slots[i].rh, &ho, err);
        if (rc < 0) {
            rollout_free(r);
            return rc;
        }
    }
    *out = r;
    return 0;
}

void rollout_free(rollout *r)
{
    if (!r)
        return;
    /* remote episodes still running stop after their turn under way and
     * stay open on their servers (which record them after their idle
     * timeout) */
    pthread_mutex_lock(&r->mu);
    r->stop = 1;
    pthread_mutex_unlock(&r->mu);
    for (int i = 0; i < r->o.max_active; i++)
        if (r->slots[i].rthread == 1)
            pthread_join(r->slots[i].rth, NULL);
    for (int i = 0; i < r->o.max_active; i++) {
        ep_free(r->slots[i].ep);
        ws_free(r->slots[i].ws);
        pol_response_dispose(&r->slots[i].resp);
        free(r->slots[i].rctx);
        free(r->slots[i].rrec);
        http_client_free(r->slots[i].rh);
    }
    free(r->slots);
    free(r->q);
    pthread_mutex_destroy(&r->mu);
    pthread_mutex_destroy(&r->gen_mu);
    pthread_cond_destroy(&r->cv);
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
        n += r->slots[i].ep != NULL || r->slots[i].remote;
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
    /* with one tool thread the episodes are scored in turn by the caller
     * (score_end): scoring beside the generation would be a second thread */
    int nt = r->o.threads > 1 ? (r->o.threads < n ? r->o.threads : n) : 0;
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

/* ---- remote episodes: the env server's /v1/reset, /v1/step, /v1/state ---- */

/* One request to the slot's env server: 0 and the parsed 200 answer in
 * *out, else an error naming the URL and what came back. */
static int env_call(cJSON **out, const rollout *r, slot *s, const char *method, const char *path, const char *body,
                    char *err)
{
    *out = NULL;
    char url[HTTP_URL_MAX + 256];
    snprintf(url, sizeof url, "%s%s", s->renv, path);
    const char *hdr[] = {r->auth[0] ? r->auth : NULL, NULL};
    http_request rq = {.method = method, .url = url, .headers = hdr, .content_type = body ? "application/json" : NULL,
                       .body = body, .body_len = body ? strlen(body) : 0};
    http_response rs;
    char herr[RL_ERR_MAX];
    int rc = http_client_request(s->rh, &rs, &rq, herr);
    if (rc < 0) {
        http_response_dispose(&rs);
        return rl_err(err, rc, "env server %s: %s", s->renv, herr);
    }
    cJSON *j = cJSON_ParseWithLength(rs.body, rs.body_len);
    if (rs.status != 200 || !cJSON_IsObject(j)) {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
        const char *m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "message"));
        rc = rl_err(err, RL_EIO, "env server %s: %s %s: status %ld%s%.200s", s->renv, method, path, rs.status,
                    m ? ": " : "", m ? m : "");
        cJSON_Delete(j);
        http_response_dispose(&rs);
        return rc;
    }
    http_response_dispose(&rs);
    *out = j;
    return 0;
}

/* The pending turn of an answer's "generation" into the slot. */
static int remote_generation(slot *s, const cJSON *ans, char *err)
{
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(ans, "generation");
    const cJSON *ids = cJSON_GetObjectItemCaseSensitive(g, "context_ids");
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(g, "max_tokens");
    const cJSON *sd = cJSON_GetObjectItemCaseSensitive(g, "seed");
    if (!cJSON_IsArray(ids) || !cJSON_IsNumber(mt) || !cJSON_IsNumber(sd))
        return rl_err(err, RL_EPARSE, "env server %s: expected \"generation\" with context_ids, max_tokens and seed",
                      s->renv);
    size_t n = (size_t)cJSON_GetArraySize(ids);
    int32_t *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return rl_err(err, RL_ENOMEM, "rollout: out of memory");
    size_t k = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, ids) v[k++] = cJSON_IsNumber(e) ? (int32_t)e->valuedouble : 0;
    free(s->rctx);
    s->rctx = v;
    s->nrctx = n;
    s->rmax = (int)mt->valuedouble;
    s->rseed = (uint64_t)sd->valuedouble;
    return 0;
}

/* Resets a remote episode on the next env server. */
static int remote_start(rollout *r, slot *s, const queued *q, char *err)
{
    s->renv = r->o.env_urls[r->next_env++ % r->o.n_env];
    const ep_config *c = q->cfg;
    cJSON *b = cJSON_CreateObject(), *cf = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "task", q->t->instance_id);
    cJSON_AddNumberToObject(b, "seed", (double)(q->seed % 2147483648ULL));
    cJSON_AddTrueToObject(b, "return_context_ids");
    if (c->prompt && !strchr(c->prompt, '/'))
        cJSON_AddStringToObject(cf, "prompt", c->prompt);
    cJSON_AddBoolToObject(cf, "think", c->think);
    cJSON_AddStringToObject(cf, "history", c->history_keep ? "keep" : "drop");
    int kind = ep_config_template(c, NULL);
    if (kind >= 0) /* the server renders and parses as the trainer's policy speaks */
        cJSON_AddStringToObject(cf, "template", tpl_kind_name((tpl_kind)kind));
    ep_config seeded = *c; /* the episode's own turn cap (its draw of the long tail) */
    seeded.seed = q->seed;
    int cap = ep_config_turn_cap(&seeded);
    if (cap > 0)
        cJSON_AddNumberToObject(cf, "max_turns", cap);
    if (c->max_context_tokens > 0)
        cJSON_AddNumberToObject(cf, "max_context_tokens", c->max_context_tokens);
    if (c->max_wall_s > 0)
        cJSON_AddNumberToObject(cf, "max_wall_s", c->max_wall_s);
    if (c->max_reply_tokens > 0)
        cJSON_AddNumberToObject(cf, "max_reply_tokens", c->max_reply_tokens);
    if (c->obs_budget > 0)
        cJSON_AddNumberToObject(cf, "obs_budget", (double)c->obs_budget);
    cJSON_AddItemToObject(b, "config", cf);
    char *body = cJSON_PrintUnformatted(b);
    cJSON_Delete(b);
    if (!body)
        return rl_err(err, RL_ENOMEM, "rollout: out of memory");
    cJSON *ans = NULL;
    int rc = env_call(&ans, r, s, "POST", "/v1/reset", body, err);
    free(body);
    if (rc < 0)
        return rc;
    const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ans, "episode_id"));
    if (!id || strlen(id) >= sizeof s->rid)
        rc = rl_err(err, RL_EPARSE, "env server %s: /v1/reset: expected an episode_id", s->renv);
    else
        str_copy(s->rid, sizeof s->rid, id);
    if (rc == 0)
        rc = remote_generation(s, ans, err);
    cJSON_Delete(ans);
    if (rc == 0) {
        s->remote = 1;
        s->rdone = 0;
        s->rreward = 0;
    }
    return rc;
}

/* The ids of a reply as a raw JSON array (cJSON prints numbers slowly). */
static cJSON *ids_raw(const int32_t *ids, size_t n)
{
    buf_t a;
    buf_init(&a, n * 12 + 16);
    int rc = buf_putc(&a, '[');
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = buf_printf(&a, i ? ",%d" : "%d", (int)ids[i]);
    if (rc == 0)
        rc = buf_putc(&a, ']');
    cJSON *o = rc == 0 ? cJSON_CreateRaw(buf_str(&a)) : NULL;
    buf_dispose(&a);
    return o;
}

/* Closes a remote episode whose turn could not be generated; the server
 * scores and records it as closed. */
static void remote_close(const rollout *r, slot *s)
{
    char body[RL_ROLLOUT_REMOTE_ID_MAX + 32], err[RL_ERR_MAX];
    snprintf(body, sizeof body, "{\"episode_id\": \"%s\"}", s->rid);
    cJSON *ans = NULL;
    if (env_call(&ans, r, s, "POST", "/v1/close", body, err) < 0)
        rl_logf(r->o.log, r->o.log_ctx, RL_LOG_ERROR, "rollout: %s", err);
    cJSON_Delete(ans);
}

/* Sends the policy's reply as the episode's next step; at the end fetches
 * its record (the server's, with the reply's ids, logprobs and version). */
static int remote_feed(const rollout *r, slot *s, char *err)
{
    pol_response *p = &s->resp;
    if (p->error) {
        int rc = rl_err(err, RL_EIO, "%s", p->error);
        remote_close(r, s);
        return rc;
    }
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "episode_id", s->rid);
    cJSON_AddStringToObject(b, "message", p->text ? p->text : "");
    cJSON_AddStringToObject(b, "finish_reason", p->finish == POL_FINISH_LENGTH ? "length" : "stop");
    if (p->ids && p->logprobs) {
        cJSON_AddItemToObject(b, "token_ids", ids_raw(p->ids, p->n_ids));
        cJSON *lp = cJSON_AddArrayToObject(b, "logprobs");
        for (size_t i = 0; i < p->n_ids; i++)
            cJSON_AddItemToArray(lp, cJSON_CreateNumber(p->logprobs[i]));
    }
    cJSON_AddNumberToObject(b, "policy_version", (double)p->policy_version);
    char *body = cJSON_PrintUnformatted(b);
    cJSON_Delete(b);
    if (!body)
        return rl_err(err, RL_ENOMEM, "rollout: out of memory");
    cJSON *ans = NULL;
    int rc = env_call(&ans, r, s, "POST", "/v1/step", body, err);
    free(body);
    if (rc < 0)
        return rc;
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ans, "done"))) {
        rc = remote_generation(s, ans, err);
        cJSON_Delete(ans);
        return rc;
    }
    const cJSON *rw = cJSON_GetObjectItemCaseSensitive(ans, "reward");
    s->rreward = cJSON_IsNumber(rw) ? rw->valuedouble : 0;
    s->rdone = 1;
    cJSON_Delete(ans);
    char path[RL_ROLLOUT_REMOTE_ID_MAX + 32];
    snprintf(path, sizeof path, "/v1/state?episode_id=%s", s->rid);
    if ((rc = env_call(&ans, r, s, "GET", path, NULL, err)) < 0)
        return rc;
    s->rrec = cJSON_PrintUnformatted(ans);
    cJSON_Delete(ans);
    return s->rrec ? 0 : rl_err(err, RL_ENOMEM, "rollout: out of memory");
}

/* Hands a finished remote episode over and frees the slot. */
static void remote_finish(slot *s, rollout_done_fn done, void *user)
{
    char *rec = s->rrec;
    s->rrec = NULL;
    s->remote = 0;
    free(s->rctx);
    s->rctx = NULL;
    s->nrctx = 0;
    if (done)
        done(user, s->tag, rec, s->rreward);
    else
        free(rec);
}

/* Fills free slots from the queue. An episode that cannot start (its work
 * tree or prompt failed) is reported with a NULL record. */
static void start_queued(rollout *r, rollout_done_fn done, void *user)
{
    for (int i = 0; i < r->o.max_active && r->qhead < r->nq; i++) {
        slot *s = &r->slots[i];
        if (s->ep || s->remote)
            continue;
        if (r->o.n_env) {
            const queued *q = &r->q[r->qhead++];
            char err[RL_ERR_MAX];
            s->tag = q->tag;
            if (remote_start(r, s, q, err) < 0) {
                rl_logf(r->o.log, r->o.log_ctx, RL_LOG_ERROR, "rollout: %s seed %llu: %s", q->t->instance_id,
                        (unsigned long long)q->seed, err);
                if (done)
                    done(user, q->tag, NULL, 0);
                i--;
            }
            continue;
        }
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

/* A remote episode's turns, on its own thread until the episode is done
 * (or the rollout is freed): its context ids to the policy, the reply to
 * its env server, again. An episode waits only for its own generation and
 * its own server's step, never for the other episodes' (the generation
 * server batches the requests that arrive together). */
static void *remote_run(void *arg)
{
    slot *s = arg;
    rollout *r = s->owner;
    char err[RL_ERR_MAX];
    for (;;) {
        pthread_mutex_lock(&r->mu);
        int stop = r->stop;
        pthread_mutex_unlock(&r->mu);
        if (stop || s->rdone)
            break;
        pol_request q = {.context_ids = s->rctx, .n_context_ids = s->nrctx, .max_tokens = s->rmax,
                         .seed = s->rseed, .episode = (int)(s - r->slots)};
        if (!r->pol->concurrent)
            pthread_mutex_lock(&r->gen_mu);
        int rc = pol_generate(r->pol, &s->resp, &q, 1, err);
        if (!r->pol->concurrent)
            pthread_mutex_unlock(&r->gen_mu);
        if (rc < 0) {
            rl_logf(r->o.log, r->o.log_ctx, RL_LOG_ERROR, "rollout: episode %ld: %s", s->tag, err);
            remote_close(r, s);
            s->rdone = 1; /* handed back without a record */
            break;
        }
        /* the reply carries the version of the server's weights */
        if (remote_feed(r, s, err) < 0) {
            rl_logf(r->o.log, r->o.log_ctx, RL_LOG_ERROR, "rollout: episode %ld: %s", s->tag, err);
            s->rdone = 1; /* handed back without a record */
            free(s->rrec);
            s->rrec = NULL;
            s->rreward = 0;
        }
        pol_response_dispose(&s->resp);
    }
    pthread_mutex_lock(&r->mu);
    s->rfinished = 1;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

/* A step of remote episodes: starts the queued ones on free slots, each
 * on its own thread, then waits until at least one has finished (or
 * RL_ROLLOUT_REMOTE_WAIT_MS have passed, so that a caller stepping in a
 * loop notices its own stop in time) and hands the finished ones over. */
static int remote_step(rollout *r, rollout_done_fn done, void *user)
{
    start_queued(r, done, user);
    for (int i = 0; i < r->o.max_active; i++) {
        slot *s = &r->slots[i];
        if (!s->remote || s->rthread)
            continue;
        s->rfinished = 0;
        if (pthread_create(&s->rth, NULL, remote_run, s) == 0) {
            s->rthread = 1;
        } else {
            s->rthread = 2; /* no thread to be had: its turns run here */
            remote_run(s);
        }
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += RL_ROLLOUT_REMOTE_WAIT_MS * 1000000L;
    until.tv_sec += until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    pthread_mutex_lock(&r->mu);
    for (;;) {
        int running = 0, finished = 0;
        for (int i = 0; i < r->o.max_active; i++) {
            running += r->slots[i].rthread && !r->slots[i].rfinished;
            finished += r->slots[i].rthread && r->slots[i].rfinished;
        }
        if (finished || !running || pthread_cond_timedwait(&r->cv, &r->mu, &until) == ETIMEDOUT)
            break;
    }
    pthread_mutex_unlock(&r->mu);
    for (int i = 0; i < r->o.max_active; i++) {
        slot *s = &r->slots[i];
        pthread_mutex_lock(&r->mu);
        int fin = s->rthread && s->rfinished;
        pthread_mutex_unlock(&r->mu);
        if (!fin)
            continue;
        if (s->rthread == 1)
            pthread_join(s->rth, NULL);
        s->rthread = 0;
        remote_finish(s, done, user);
    }
    return (int)rollout_pending(r);
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
    if (r->o.n_env)
        return remote_step(r, done, user);
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
                slot *s = &r->slots[who[k]];
                pol_response_dispose(&resps[k]);
                ep_abort(s->ep, "policy_error", perr);
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
