/* grpo.c - the GRPO trainer: rollouts, advantages, the update, metrics.
 *
 * A step (synchronous): draw tasks_per_step tasks from the train split (a
 * shuffled order per epoch, so the data position is one counter), queue G
 * episodes of each in the rollout, step the rollout until every episode
 * is done (one batched policy call per turn), compute advantages per
 * group, optionally replace zero-variance groups (dynamic sampling), turn
 * the records into sequences and take one optimizer step on the masked
 * PPO-clip + KL loss, accumulated over micro-batches.
 *
 * Asynchronous: a rollout thread samples with its own copy of the weights
 * and keeps every generation slot busy; the learner trains once lambda of
 * a step's episodes have finished (on the groups complete by then), then
 * publishes its weights, which the thread picks up between two turns.
 * Unfinished episodes go on; each turn records the version that sampled
 * it, and the loss drops tokens older than max_staleness versions.
 */
#include "grpo/grpo_int.h"

#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "grpo/live_policy.h"
#include "grpo/sample.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- small helpers ------------------------------------------------------------ */

double grpo_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

uint64_t grpo_mix(uint64_t a, uint64_t b)
{
    uint64_t x = a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2));
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Episode seeds are recorded as JSON numbers: keep them below 2^52. */
static uint64_t ep_seed(const grpo_trainer *t, uint64_t gid, int i)
{
    return (grpo_mix(grpo_mix((uint64_t)t->cfg.seed, gid), (uint64_t)i) & ((1ull << 52) - 1)) + 1;
}

long grpo_step_count(const grpo_trainer *t) { return t->step; }
model *grpo_model(grpo_trainer *t) { return t->m; }
const char *grpo_run_dir(const grpo_trainer *t) { return t->run_dir; }

static double jnum(const cJSON *o, const char *k, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

void grpo_traj_parse(grpo_traj *tr, const cJSON *rec)
{
    tr->passed = jnum(rec, "reward", 0) > 0.5;
    const cJSON *turns = cJSON_GetObjectItemCaseSensitive(rec, "turns"), *turn;
    tr->turns = cJSON_GetArraySize(turns);
    cJSON_ArrayForEach(turn, turns)
    {
        const cJSON *fe = cJSON_GetObjectItemCaseSensitive(turn, "format_error");
        tr->format_errors += fe && cJSON_IsString(fe);
        const cJSON *c;
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(turn, "tool_calls"))
        {
            tr->calls++;
            tr->calls_ok += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "ok"));
            tr->identical += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "identical_to_previous"));
        }
    }
    tr->policy_tokens = (long)jnum(cJSON_GetObjectItemCaseSensitive(rec, "tokens"), "policy", 0);
    tr->dur_s = jnum(cJSON_GetObjectItemCaseSensitive(rec, "timings"), "total_ms", 0) / 1000.0;
}

int grpo_load_weights(model *m, const char *path, char *err)
{
    model_opts mo;
    model_opts_default(&mo);
    mo.n_threads = 1;
    model *tmp;
    int rc = model_load(&tmp, NULL, path, &mo, err);
    if (rc < 0)
        return rc;
    if (memcmp(&tmp->cfg, &m->cfg, sizeof m->cfg) != 0 || tmp->n_params != m->n_params) {
        model_free(tmp);
        return rl_err(err, RL_EINVAL, "%s: model config differs from the trainer's", path);
    }
    memcpy(m->params, tmp->params, m->n_params * sizeof(float));
    model_free(tmp);
    return 0;
}

/* ---- groups ----------------------------------------------------------------------- */

static grpo_group *group_new(const task *tk, long gid, int G)
{
    grpo_group *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->tr = calloc((size_t)G, sizeof *g->tr);
    g->adv = calloc((size_t)G, sizeof *g->adv);
    if (!g->tr || !g->adv) {
        free(g->tr);
        free(g->adv);
        free(g);
        return NULL;
    }
    g->task = tk;
    g->gid = gid;
    g->n = G;
    return g;
}

static void group_free(grpo_group *g)
{
    if (!g)
        return;
    for (int i = 0; i < g->n; i++)
        free(g->tr[i].rec);
    free(g->tr);
    free(g->adv);
    free(g);
}

static void group_score(const grpo_trainer *t, grpo_group *g)
{
    double r[RL_GRPO_GROUP_MAX];
    for (int i = 0; i < g->n; i++)
        r[i] = g->tr[i].reward;
    g->st = stats_advantages(g->adv, r, (size_t)g->n, t->cfg.std_mode, t->cfg.adv_eps, t->cfg.adv_clip);
}

/* A trajectory arrived: its counters, its reward (tests, shaped or hook). */
static void traj_finish(grpo_trainer *t, grpo_group *g, int i, char *rec, double reward)
{
    grpo_traj *tr = &g->tr[i];
    if (tr->done) { /* cannot happen: one record per tag */
        free(rec);
        return;
    }
    tr->done = 1;
    tr->rec = rec;
    g->n_done++;
    cJSON *j = rec ? cJSON_Parse(rec) : NULL;
    if (!j) {
        tr->error = 1;
        tr->reward = 0;
    } else {
        grpo_traj_parse(tr, j);
        double r = reward;
        if (t->cfg.shaping.on)
            r = jnum(j, "shaped_reward", r);
        if (t->hooks.reward)
            r = t->hooks.reward(t->hooks.user, j, r);
        tr->reward = r;
        const cJSON *why = cJSON_GetObjectItemCaseSensitive(j, "end_reason");
        tr->error = cJSON_IsString(why) && (!strcmp(why->valuestring, "error") ||
                                            !strcmp(why->valuestring, "policy_error"));
    }
    cJSON_Delete(j);
    if (tr->dur_s > 0 && t->n_durs < RL_GRPO_CURVE_MAX) {
        if (t->n_durs == t->cap_durs) {
            size_t nc = t->cap_durs ? t->cap_durs * 2 : 256;
            double *d = realloc(t->durs, nc * sizeof *d);
            if (d) {
                t->durs = d;
                t->cap_durs = nc;
            }
        }
        if (t->n_durs < t->cap_durs)
            t->durs[t->n_durs++] = tr->dur_s;
    }
    if (g->n_done == g->n)
        group_score(t, g);
}

/* Next train task in the shuffled order of its epoch. */
static const task *next_task(grpo_trainer *t)
{
    size_t N = t->train.n;
    uint64_t epoch = t->data_pos / N;
    if (!t->perm || t->perm_epoch != epoch) {
        if (!t->perm)
            t->perm = malloc(N * sizeof *t->perm);
        if (!t->perm)
            return t->train.v[t->data_pos++ % N];
        for (size_t i = 0; i < N; i++)
            t->perm[i] = i;
        uint64_t s = grpo_mix((uint64_t)t->cfg.seed ^ 0x7461736b73ull, epoch);
        for (size_t i = N; i > 1; i--) {
            s = grpo_mix(s, i);
            size_t j = (size_t)(s % i);
            uint64_t x = t->perm[i - 1];
            t->perm[i - 1] = t->perm[j];
            t->perm[j] = x;
        }
        t->perm_epoch = epoch;
    }
    return t->train.v[t->perm[t->data_pos++ % N]];
}

/* ---- synchronous rollout ------------------------------------------------------------ */

typedef struct sync_ctx {
    grpo_trainer *t;
    grpo_group **gs;
    size_t ng;
} sync_ctx;

static void sync_done(void *user, long tag, char *rec, double reward)
{
    sync_ctx *c = user;
    int G = c->t->cfg.group_size;
    size_t gi = (size_t)tag / (size_t)G;
    if (tag < 0 || gi >= c->ng) {
        free(rec);
        return;
    }
    traj_finish(c->t, c->gs[gi], (int)(tag % G), rec, reward);
}

/* Steps the rollout until it is empty, measuring busy slot-seconds. */
static int drain(rollout *ro, int max_active, rollout_done_fn fn, void *user, double *busy, char *err)
{
    while (rollout_pending(ro) > 0) {
        size_t p = rollout_pending(ro);
        size_t act = p < (size_t)max_active ? p : (size_t)max_active;
        double t0 = grpo_now();
        int rc = rollout_step(ro, fn, user, err);
        if (rc < 0)
            return rc;
        if (busy)
            *busy += (double)act * (grpo_now() - t0);
    }
    return 0;
}

/* Runs groups gs[first..ng) to completion (tags index gs). */
static int run_groups_sync(grpo_trainer *t, grpo_group **gs, size_t first, size_t ng, double *busy, char *err)
{
    int G = t->cfg.group_size;
    rollout_set_version(t->ro, t->step + 1);
    for (size_t k = first; k < ng; k++)
        for (int i = 0; i < G; i++) {
            int rc = rollout_add(t->ro, gs[k]->task, &t->ep, ep_seed(t, (uint64_t)gs[k]->gid, i),
                                 (long)(k * (size_t)G + (size_t)i), err);
            if (rc < 0)
                return rc;
        }
    sync_ctx c = {t, gs, ng};
    return drain(t->ro, t->max_active, sync_done, &c, busy, err);
}

/* ---- generic episode runner (evaluation, collection) ------------------------------------ */

typedef struct run_ctx {
    grpo_ep_fn fn;
    void *user;
    int seeds;
} run_ctx;

static void run_done(void *user, long tag, char *rec, double reward)
{
    run_ctx *c = user;
    c->fn(c->user, (size_t)tag / (size_t)c->seeds, (int)(tag % c->seeds), rec, reward);
}

int grpo_run_episodes(grpo_trainer *t, policy *pol, const task *const *tasks, size_t n_tasks, int seeds,
                      uint64_t seed0, double temperature, grpo_ep_fn fn, void *user, char *err)
{
    rollout_opts ro;
    rollout_opts_default(&ro);
    ro.ws_root = t->cfg.ws_root[0] ? t->cfg.ws_root : NULL;
    ro.max_active = t->max_active;
    ro.slot_base = t->max_active; /* training episodes use the slots below */
    ro.threads = t->cfg.tool_threads;
    rollout *r;
    int rc = rollout_new(&r, pol, &ro, err);
    if (rc < 0)
        return rc;
    ep_config ep = t->ep;
    ep.temperature = temperature;
    live_policy_set_temperature(pol, (float)temperature);
    rollout_set_version(r, t->step + 1);
    for (size_t k = 0; k < n_tasks && rc == 0; k++)
        for (int s = 0; s < seeds && rc == 0; s++)
            rc = rollout_add(r, tasks[k], &ep, seed0 + (uint64_t)s, (long)(k * (size_t)seeds + (size_t)s), err);
    run_ctx c = {fn, user, seeds};
    if (rc == 0)
        rc = drain(r, ro.max_active, run_done, &c, NULL, err);
    rollout_free(r);
    live_policy_set_temperature(pol, (float)t->cfg.temperature);
    return rc;
}

/* ---- the update ---------------------------------------------------------------------- */

typedef struct mbatch {
    size_t first, count; /* into the length-sorted order */
    int T;
} mbatch;

typedef struct train_buf {
    int *tok, *tgt;
    float *behav, *adv, *w, *logp, *ent, *ref, *coef;
    size_t cap;
} train_buf;

static void train_buf_free(train_buf *b)
{
    free(b->tok);
    free(b->tgt);
    free(b->behav);
    free(b->adv);
    free(b->w);
    free(b->logp);
    free(b->ent);
    free(b->ref);
    free(b->coef);
}

static int train_buf_reserve(train_buf *b, size_t n, char *err)
{
    if (n <= b->cap)
        return 0;
    train_buf_free(b);
    memset(b, 0, sizeof *b);
    b->tok = malloc(n * sizeof(int));
    b->tgt = malloc(n * sizeof(int));
    float **f[] = {&b->behav, &b->adv, &b->w, &b->logp, &b->ent, &b->ref, &b->coef};
    int ok = b->tok && b->tgt;
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        ok &= (*f[i] = malloc(n * sizeof(float))) != NULL;
    if (!ok)
        return rl_err(err, RL_ENOMEM, "grpo: out of memory for a micro-batch of %zu tokens", n);
    b->cap = n;
    return 0;
}

static const grpo_seq *const *g_sort_v; /* qsort context (single-threaded use) */

static int by_len(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int li = g_sort_v[i]->n, lj = g_sort_v[j]->n;
    if (li != lj)
        return li < lj ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* Fills the micro-batch arrays of sequences order[first..first+count). */
static void fill_batch(train_buf *b, const grpo_seqs *S, const size_t *order, const mbatch *mb,
                       const float *seq_adv, const float *seq_w, long current, long max_stale)
{
    size_t N = mb->count * (size_t)mb->T;
    memset(b->tok, 0, N * sizeof(int));
    for (size_t i = 0; i < N; i++) {
        b->tgt[i] = -1;
        b->behav[i] = b->adv[i] = b->w[i] = 0.0f;
    }
    for (size_t r = 0; r < mb->count; r++) {
        size_t si = order[mb->first + r];
        const grpo_seq *q = &S->v[si];
        size_t base = r * (size_t)mb->T;
        for (int p = 0; p < q->n; p++) {
            b->tok[base + p] = q->tokens[p];
            if (q->targets[p] >= 0 && grpo_token_fresh(q->version[p], current, max_stale)) {
                b->tgt[base + p] = q->targets[p];
                b->behav[base + p] = q->behav[p];
                b->adv[base + p] = seq_adv[si];
                b->w[base + p] = seq_w[si];
            }
        }
    }
}

/* One optimizer step on the groups' trajectories. Returns RL_EINVAL with
 * *nonfinite set when the loss or the gradient is not finite. */
static int train_groups(grpo_trainer *t, grpo_group **gs, size_t ng, grpo_step_metrics *sm, int *nonfinite,
                        char *err)
{
    const grpo_config *c = &t->cfg;
    *nonfinite = 0;
    grpo_seqs S;
    grpo_seqs_init(&S);
    float *traj_adv = NULL, *seq_adv = NULL, *seq_w = NULL;
    size_t *order = NULL, *kept = NULL;
    mbatch *mbs = NULL;
    train_buf b = {0};
    int rc = 0;
    size_t ntraj = 0;
    for (size_t k = 0; k < ng; k++)
        ntraj += (size_t)gs[k]->n;
    traj_adv = malloc((ntraj ? ntraj : 1) * sizeof *traj_adv);
    if (!traj_adv) {
        rc = rl_err(err, RL_ENOMEM, "grpo: out of memory");
        goto done;
    }
    /* sequences of every trajectory, each tagged with its trajectory */
    size_t ti = 0;
    for (size_t k = 0; k < ng; k++)
        for (int i = 0; i < gs[k]->n; i++, ti++) {
            traj_adv[ti] = (float)gs[k]->adv[i];
            if (!gs[k]->tr[i].rec)
                continue;
            char rerr[RL_ERR_MAX];
            int r = grpo_seqs_add_json(&S, gs[k]->tr[i].rec, (int)ti, t->m->cfg.vocab, t->m->cfg.max_seq, rerr);
            if (r == RL_ENOMEM) {
                rc = rl_err(err, r, "%s", rerr);
                goto done;
            }
            if (r < 0)
                sm->skipped_records++;
        }
    sm->skipped_long = S.skipped_long;
    sm->seqs = S.n;
    /* trained tokens per sequence: policy targets recent enough */
    long current = t->step + 1;
    kept = calloc(S.n ? S.n : 1, sizeof *kept);
    seq_adv = malloc((S.n ? S.n : 1) * sizeof *seq_adv);
    seq_w = malloc((S.n ? S.n : 1) * sizeof *seq_w);
    order = malloc((S.n ? S.n : 1) * sizeof *order);
    if (!kept || !seq_adv || !seq_w || !order) {
        rc = rl_err(err, RL_ENOMEM, "grpo: out of memory");
        goto done;
    }
    size_t kept_total = 0, seqs_kept = 0;
    for (size_t s = 0; s < S.n; s++) {
        const grpo_seq *q = &S.v[s];
        for (int p = 0; p < q->n; p++)
            if (q->targets[p] >= 0) {
                if (grpo_token_fresh(q->version[p], current, c->loss.max_staleness))
                    kept[s]++;
                else
                    sm->stale_dropped++;
            }
        kept_total += kept[s];
        seqs_kept += kept[s] > 0;
        seq_adv[s] = traj_adv[S.v[s].traj];
        order[s] = s;
    }
    for (size_t s = 0; s < S.n; s++)
        seq_w[s] = (float)grpo_loss_weight(&c->loss, kept[s], kept_total, seqs_kept);
    sm->trained_tokens = kept_total;
    /* micro-batches of similar lengths */
    const grpo_seq *const *vp = malloc((S.n ? S.n : 1) * sizeof *vp);
    if (!vp) {
        rc = rl_err(err, RL_ENOMEM, "grpo: out of memory");
        goto done;
    }
    for (size_t s = 0; s < S.n; s++)
        ((const grpo_seq **)vp)[s] = &S.v[s];
    g_sort_v = vp;
    qsort(order, S.n, sizeof *order, by_len);
    free((void *)vp);
    g_sort_v = NULL;
    mbs = malloc((S.n ? S.n : 1) * sizeof *mbs);
    if (!mbs) {
        rc = rl_err(err, RL_ENOMEM, "grpo: out of memory");
        goto done;
    }
    size_t nmb = 0, maxN = 0;
    for (size_t s = 0; s < S.n;) {
        mbatch mb = {s, 0, 0};
        while (s < S.n) {
            int T = S.v[order[s]].n > mb.T ? S.v[order[s]].n : mb.T;
            if (mb.count > 0 && (size_t)T * (mb.count + 1) > (size_t)c->micro_batch_tokens)
                break;
            mb.T = T;
            mb.count++;
            s++;
        }
        mbs[nmb++] = mb;
        if (mb.count * (size_t)mb.T > maxN)
            maxN = mb.count * (size_t)mb.T;
    }
    if ((rc = train_buf_reserve(&b, maxN ? maxN : 1, err)) < 0)
        goto done;

    double t0 = grpo_now();
    int use_ref = t->ref && c->loss.kl_coef > 0;
    grpo_loss_stats_init(&sm->loss);
    int any = 0;
    for (int pass = 0; pass < c->updates_per_step; pass++) {
        sm->passes = pass + 1;
        if ((rc = model_zero_grad(t->m, err)) < 0)
            goto done;
        double loss = 0;
        for (size_t k = 0; k < nmb; k++) {
            const mbatch *mb = &mbs[k];
            size_t N = mb->count * (size_t)mb->T;
            fill_batch(&b, &S, order, mb, seq_adv, seq_w, current, c->loss.max_staleness);
            int has = 0;
            for (size_t i = 0; i < N && !has; i++)
                has = b.w[i] > 0.0f;
            if (!has)
                continue; /* nothing trained here: no forward needed */
            if (use_ref && (rc = model_forward(t->ref, b.tok, b.tgt, (int)mb->count, mb->T, (float)c->temperature,
                                               b.ref, NULL, err)) < 0)
                goto done;
            if ((rc = model_forward(t->m, b.tok, b.tgt, (int)mb->count, mb->T, (float)c->temperature, b.logp, b.ent,
                                    err)) < 0)
                goto done;
            sm->forward_tokens += N;
            loss += grpo_loss_tokens(b.coef, &sm->loss, &c->loss, b.logp, b.behav, use_ref ? b.ref : NULL, b.ent,
                                     b.adv, b.w, N);
            for (size_t i = 0; i < N && !any; i++)
                any = b.coef[i] != 0.0f;
            if ((rc = model_backward(t->m, b.coef, err)) < 0)
                goto done;
        }
        if (!isfinite(loss)) {
            *nonfinite = 1;
            rc = rl_err(err, RL_EINVAL, "grpo: loss is not finite at step %ld", t->step + 1);
            goto done;
        }
        sm->updated = any;
        if (!any) {
            /* no gradient signal at all (zero-variance groups, no KL): the
             * weights and the optimizer state stay exactly as they are */
            sm->lr = opt_lr_at(&t->opt->cfg, t->step);
            break;
        }
        t->opt->step = t->step; /* the schedule follows trainer steps */
        float lr;
        if ((rc = opt_step(t->opt, t->m->params, t->m->grads, &sm->grad_norm, &lr, err)) < 0) {
            *nonfinite = 1;
            goto done;
        }
        sm->lr = lr;
    }
    sm->train_s = grpo_now() - t0;
done:
    train_buf_free(&b);
    grpo_seqs_free(&S);
    free(traj_adv);
    free(seq_adv);
    free(seq_w);
    free(order);
    free(kept);
    free(mbs);
    return rc;
}

/* ---- metrics ---------------------------------------------------------------------------- */

static void metrics_from_groups(grpo_step_metrics *sm, grpo_group *const *gs, size_t ng)
{
    double rew = 0, tok = 0, turns = 0;
    size_t n = 0, pass = 0, calls = 0, ok = 0, ident = 0, fe = 0, nturns = 0;
    for (size_t k = 0; k < ng; k++) {
        const grpo_group *g = gs[k];
        sm->groups++;
        sm->zero_var += g->st.zero_variance;
        for (int i = 0; i < g->n; i++) {
            const grpo_traj *tr = &g->tr[i];
            n++;
            sm->errors += tr->error;
            rew += tr->reward;
            pass += tr->passed;
            calls += (size_t)tr->calls;
            ok += (size_t)tr->calls_ok;
            ident += (size_t)tr->identical;
            fe += (size_t)tr->format_errors;
            nturns += (size_t)tr->turns;
            tok += (double)tr->policy_tokens;
            turns += tr->turns;
        }
    }
    sm->episodes = n;
    sm->reward_mean = n ? rew / (double)n : 0;
    sm->pass_rate = n ? (double)pass / (double)n : 0;
    sm->tool_success = calls ? (double)ok / (double)calls : 0;
    sm->identical_share = calls ? (double)ident / (double)calls : 0;
    sm->format_error_rate = nturns ? (double)fe / (double)nturns : 0;
    sm->policy_tokens_mean = n ? tok / (double)n : 0;
    sm->turns_mean = n ? turns / (double)n : 0;
}

static double mean_of(const double *x, size_t from, size_t to)
{
    double s = 0;
    for (size_t i = from; i < to; i++)
        s += x[i];
    return to > from ? s / (double)(to - from) : 0;
}

static int hist_push(grpo_trainer *t, const grpo_step_metrics *sm)
{
    if (t->h_n == t->h_cap) {
        size_t nc = t->h_cap ? t->h_cap * 2 : 64;
        double **h[] = {&t->h_reward, &t->h_pass, &t->h_tool, &t->h_tokens, &t->h_kl};
        for (size_t i = 0; i < 5; i++) {
            double *p = realloc(*h[i], nc * sizeof *p);
            if (!p)
                return RL_ENOMEM;
            *h[i] = p;
        }
        t->h_cap = nc;
    }
    t->h_reward[t->h_n] = sm->reward_mean;
    t->h_pass[t->h_n] = sm->pass_rate;
    t->h_tool[t->h_n] = sm->tool_success;
    t->h_tokens[t->h_n] = sm->policy_tokens_mean;
    t->h_kl[t->h_n] = sm->loss.tokens ? sm->loss.kl_sum / (double)sm->loss.tokens : 0;
    t->h_n++;
    return 0;
}

/* The warnings of issue 7: reward up while pass rate or tool success is
 * not (the reward is being gamed), responses collapsing, KL jumping. */
void grpo_warnings(const grpo_trainer *t, cJSON *arr, buf_t *line)
{
    size_t n = t->h_n, W = (size_t)t->cfg.warn_window;
    char w[256];
    if (n >= 2 * W) {
        double dr = mean_of(t->h_reward, n - W, n) - mean_of(t->h_reward, n - 2 * W, n - W);
        double dp = mean_of(t->h_pass, n - W, n) - mean_of(t->h_pass, n - 2 * W, n - W);
        double dt = mean_of(t->h_tool, n - W, n) - mean_of(t->h_tool, n - 2 * W, n - W);
        if (dr > 0.05 && (dp <= 0 || dt <= 0)) {
            snprintf(w, sizeof w, "reward rose by %.3f over %zu steps while %s did not (%+.3f)", dr, W,
                     dp <= 0 ? "the pass rate" : "tool success", dp <= 0 ? dp : dt);
            cJSON_AddItemToArray(arr, cJSON_CreateString(w));
            buf_printf(line, "\n  warning: %s", w);
        }
    }
    if (n > W) {
        double best = 0;
        for (size_t i = 0; i + W <= n - 1; i++) {
            double m = mean_of(t->h_tokens, i, i + W);
            best = m > best ? m : best;
        }
        double cur = t->h_tokens[n - 1];
        if (best > 0 && cur < t->cfg.warn_len_collapse * best) {
            snprintf(w, sizeof w, "response length collapsed: %.0f policy tokens per episode, recent best %.0f", cur,
                     best);
            cJSON_AddItemToArray(arr, cJSON_CreateString(w));
            buf_printf(line, "\n  warning: %s", w);
        }
        double prev = mean_of(t->h_kl, n - 1 - W, n - 1), kl = t->h_kl[n - 1];
        if (kl > 1e-3 && kl > t->cfg.warn_kl_jump * prev) {
            snprintf(w, sizeof w, "KL jumped to %.4g (%.1fx its mean over the previous %zu steps)", kl,
                     prev > 0 ? kl / prev : INFINITY, W);
            cJSON_AddItemToArray(arr, cJSON_CreateString(w));
            buf_printf(line, "\n  warning: %s", w);
        }
    }
}

static cJSON *metrics_json(const grpo_step_metrics *sm)
{
    cJSON *o = cJSON_CreateObject();
    const grpo_loss_stats *L = &sm->loss;
    double tok = L->tokens ? (double)L->tokens : 1;
    cJSON_AddNumberToObject(o, "step", (double)sm->step);
    cJSON_AddStringToObject(o, "mode", sm->mode);
    cJSON_AddNumberToObject(o, "lr", sm->lr);
    cJSON_AddNumberToObject(o, "reward_mean", sm->reward_mean);
    cJSON_AddNumberToObject(o, "pass_rate", sm->pass_rate);
    cJSON_AddNumberToObject(o, "groups", (double)sm->groups);
    cJSON_AddNumberToObject(o, "zero_var_groups", (double)sm->zero_var);
    cJSON_AddNumberToObject(o, "resampled_groups", (double)sm->resampled);
    cJSON_AddNumberToObject(o, "dropped_groups", (double)sm->dropped);
    cJSON_AddNumberToObject(o, "episodes", (double)sm->episodes);
    cJSON_AddNumberToObject(o, "episode_errors", (double)sm->errors);
    cJSON_AddNumberToObject(o, "tool_success", sm->tool_success);
    cJSON_AddNumberToObject(o, "format_error_rate", sm->format_error_rate);
    cJSON_AddNumberToObject(o, "policy_tokens_mean", sm->policy_tokens_mean);
    cJSON_AddNumberToObject(o, "turns_mean", sm->turns_mean);
    cJSON_AddNumberToObject(o, "identical_share", sm->identical_share);
    /* sums over the update passes: report one pass's worth */
    double passes = sm->passes > 0 ? sm->passes : 1;
    cJSON_AddNumberToObject(o, "loss", L->loss / passes);
    cJSON_AddNumberToObject(o, "pg_loss", L->pg / passes);
    if (L->has_kl)
        cJSON_AddNumberToObject(o, "kl", L->kl_sum / tok);
    else
        cJSON_AddNullToObject(o, "kl");
    cJSON_AddNumberToObject(o, "clip_frac", L->tokens ? (double)L->clipped / tok : 0);
    cJSON_AddNumberToObject(o, "entropy", L->has_ent ? L->ent_sum / tok : 0);
    cJSON_AddNumberToObject(o, "ratio_mean", L->tokens ? L->ratio_sum / tok : 1);
    cJSON_AddNumberToObject(o, "ratio_min", L->tokens ? L->ratio_min : 1);
    cJSON_AddNumberToObject(o, "ratio_max", L->tokens ? L->ratio_max : 1);
    cJSON_AddNumberToObject(o, "grad_norm", sm->grad_norm);
    cJSON_AddBoolToObject(o, "updated", sm->updated);
    cJSON_AddNumberToObject(o, "seqs", (double)sm->seqs);
    cJSON_AddNumberToObject(o, "trained_tokens", (double)sm->trained_tokens);
    cJSON_AddNumberToObject(o, "stale_dropped", (double)sm->stale_dropped);
    cJSON_AddNumberToObject(o, "skipped_long", (double)sm->skipped_long);
    cJSON_AddNumberToObject(o, "skipped_records", (double)sm->skipped_records);
    cJSON_AddNumberToObject(o, "step_s", sm->step_s);
    cJSON_AddNumberToObject(o, "rollout_s", sm->rollout_s);
    cJSON_AddNumberToObject(o, "train_s", sm->train_s);
    cJSON_AddNumberToObject(o, "train_tokens_per_s", sm->train_s > 0 ? (double)sm->forward_tokens / sm->train_s : 0);
    cJSON_AddNumberToObject(o, "gen_tokens", (double)sm->gen_tokens);
    cJSON_AddNumberToObject(o, "gen_tokens_per_s", sm->gen_s > 0 ? (double)sm->gen_tokens / sm->gen_s : 0);
    cJSON_AddNumberToObject(o, "prefill_tokens", (double)sm->prefill_tokens);
    cJSON_AddNumberToObject(o, "gen_s", sm->gen_s);
    cJSON_AddNumberToObject(o, "util", sm->util);
    return o;
}

int grpo_log_event(grpo_trainer *t, cJSON *fields, char *err)
{
    char *s = cJSON_PrintUnformatted(fields);
    if (!s)
        return rl_err(err, RL_ENOMEM, "grpo: out of memory");
    int rc = fs_append_record(t->metrics_path, s, strlen(s), err);
    free(s);
    return rc;
}

static int log_step(grpo_trainer *t, grpo_step_metrics *sm, char *err)
{
    if (hist_push(t, sm) < 0)
        return rl_err(err, RL_ENOMEM, "grpo: out of memory");
    cJSON *o = metrics_json(sm);
    cJSON *warn = cJSON_AddArrayToObject(o, "warnings");
    buf_t line;
    buf_init(&line, 1 << 16);
    const grpo_loss_stats *L = &sm->loss;
    double tok = L->tokens ? (double)L->tokens : 1;
    buf_printf(&line,
               "step %ld/%ld [%s] reward %.3f pass %.3f zero-var %zu/%zu tool %.2f fmt %.3f tok %.0f kl %.4f "
               "clip %.3f ent %.3f turns %.1f ident %.3f | %.1f s (rollout %.1f, train %.1f) util %.2f",
               sm->step, t->cfg.steps, sm->mode, sm->reward_mean, sm->pass_rate, sm->zero_var, sm->groups,
               sm->tool_success, sm->format_error_rate, sm->policy_tokens_mean, L->has_kl ? L->kl_sum / tok : 0.0,
               L->tokens ? (double)L->clipped / tok : 0.0, L->has_ent ? L->ent_sum / tok : 0.0, sm->turns_mean,
               sm->identical_share, sm->step_s, sm->rollout_s, sm->train_s, sm->util);
    grpo_warnings(t, warn, &line);
    int rc = grpo_log_event(t, o, err);
    cJSON_Delete(o);
    if (!t->cfg.quiet)
        fprintf(stderr, "%s\n", buf_str(&line));
    buf_free(&line);
    return rc;
}

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
    grpo_trainer *t;
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
    if (A->nout == A->capout) {
        size_t nc = A->capout ? A->capout * 2 : 64;
        as_item *p = realloc(A->out, nc * sizeof *p);
        if (!p) {
            A->failed = 1;
            snprintf(A->err, sizeof A->err, "grpo async: out of memory");
            free(rec);
            pthread_cond_broadcast(&A->cv_done);
            pthread_mutex_unlock(&A->mu);
            return;
        }
        A->out = p;
        A->capout = nc;
    }
    A->out[A->nout++] = (as_item){tag, rec, reward};
    pthread_cond_broadcast(&A->cv_done);
    pthread_mutex_unlock(&A->mu);
}

static void *as_main(void *arg)
{
    grpo_async *A = arg;
    grpo_trainer *t = A->t;
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
            rc = rollout_add(A->ro, in[i].t, &t->ep, in[i].seed, in[i].tag, err);
        free(in);
        size_t p = rollout_pending(A->ro);
        if (rc == 0 && p > 0) {
            size_t act = p < (size_t)t->max_active ? p : (size_t)t->max_active;
            pthread_mutex_lock(&A->mu);
            double t0 = A->cur_t0 = grpo_now();
            A->cur_act = act;
            pthread_mutex_unlock(&A->mu);
            rc = rollout_step(A->ro, as_done, A, err);
            pthread_mutex_lock(&A->mu);
            A->busy += (double)act * (grpo_now() - t0);
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
        b += (double)A->cur_act * (grpo_now() - A->cur_t0);
    pthread_mutex_unlock(&A->mu);
    return b;
}

static void as_publish(grpo_async *A, const model *m, long version)
{
    pthread_mutex_lock(&A->mu);
    memcpy(A->pub, m->params, m->n_params * sizeof(float));
    A->pub_version = version;
    A->pub_new = 1;
    pthread_cond_broadcast(&A->cv_work);
    pthread_mutex_unlock(&A->mu);
}

static void as_free(grpo_async *A)
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
        group_free(A->groups[i]);
    free(A->groups);
    pthread_mutex_destroy(&A->mu);
    pthread_cond_destroy(&A->cv_work);
    pthread_cond_destroy(&A->cv_done);
    free(A);
}

static int as_start(grpo_trainer *t, char *err)
{
    grpo_async *A = calloc(1, sizeof *A);
    if (!A)
        return rl_err(err, RL_ENOMEM, "grpo async: out of memory");
    A->t = t;
    pthread_mutex_init(&A->mu, NULL);
    pthread_cond_init(&A->cv_work, NULL);
    pthread_cond_init(&A->cv_done, NULL);
    model_opts mo;
    model_opts_default(&mo);
    mo.n_threads = t->cfg.threads;
    int rc = model_new(&A->sm, &t->m->cfg, &mo, err);
    A->pub = rc == 0 ? malloc(t->m->n_params * sizeof(float)) : NULL;
    if (rc == 0 && !A->pub)
        rc = rl_err(err, RL_ENOMEM, "grpo async: out of memory");
    if (rc == 0) {
        memcpy(A->sm->params, t->m->params, t->m->n_params * sizeof(float));
        live_policy_opts lo;
        live_policy_opts_default(&lo);
        lo.temperature = (float)t->cfg.temperature;
        lo.top_p = (float)t->cfg.top_p;
        lo.max_tokens = t->cfg.max_reply_tokens;
        lo.name = "grpo-async";
        rc = live_policy_new(&A->spol, A->sm, t->tok, &lo, err);
    }
    if (rc == 0) {
        rollout_opts ro;
        rollout_opts_default(&ro);
        ro.ws_root = t->cfg.ws_root[0] ? t->cfg.ws_root : NULL;
        ro.max_active = t->max_active;
        ro.threads = t->cfg.tool_threads;
        rc = rollout_new(&A->ro, A->spol, &ro, err);
    }
    if (rc == 0) {
        rollout_set_version(A->ro, t->step + 1);
        if (pthread_create(&A->th, NULL, as_main, A) != 0)
            rc = rl_err(err, RL_EIO, "grpo async: cannot start the rollout thread");
        else
            A->started = 1;
    }
    if (rc < 0) {
        as_free(A);
        return rc;
    }
    t->as = A;
    return 0;
}

/* Learner side: queues a new group's episodes. */
static int as_queue_group(grpo_trainer *t, int replacement, char *err)
{
    grpo_async *A = t->as;
    int G = t->cfg.group_size;
    grpo_group *g = group_new(next_task(t), (long)t->groups_drawn++, G);
    if (!g || (A->ng == A->capg && !(A->groups = realloc(A->groups, (A->capg = A->capg ? A->capg * 2 : 32) *
                                                                        sizeof *A->groups)))) {
        group_free(g);
        return rl_err(err, RL_ENOMEM, "grpo async: out of memory");
    }
    g->replacement = replacement;
    A->groups[A->ng++] = g;
    pthread_mutex_lock(&A->mu);
    if (A->nin + (size_t)G > A->capin) {
        size_t nc = (A->nin + (size_t)G) * 2;
        as_add *p = realloc(A->in, nc * sizeof *p);
        if (!p) {
            pthread_mutex_unlock(&A->mu);
            return rl_err(err, RL_ENOMEM, "grpo async: out of memory");
        }
        A->in = p;
        A->capin = nc;
    }
    for (int i = 0; i < G; i++)
        A->in[A->nin++] = (as_add){g->task, ep_seed(t, (uint64_t)g->gid, i), g->gid * G + i};
    pthread_cond_broadcast(&A->cv_work);
    pthread_mutex_unlock(&A->mu);
    A->in_flight += (size_t)G;
    return 0;
}

/* ---- one step ---------------------------------------------------------------------------- */

static void keep_last_records(grpo_trainer *t, grpo_group *const *gs, size_t ng)
{
    for (size_t i = 0; i < t->n_last; i++)
        free(t->last_recs[i]);
    free(t->last_recs);
    t->last_recs = NULL;
    t->n_last = 0;
    size_t n = 0;
    for (size_t k = 0; k < ng; k++)
        n += (size_t)gs[k]->n;
    t->last_recs = calloc(n ? n : 1, sizeof *t->last_recs);
    if (!t->last_recs)
        return;
    for (size_t k = 0; k < ng; k++)
        for (int i = 0; i < gs[k]->n; i++)
            if (gs[k]->tr[i].rec) {
                t->last_recs[t->n_last++] = gs[k]->tr[i].rec;
                gs[k]->tr[i].rec = NULL; /* moved */
            }
}

/* Zero-variance groups to replace (dynamic sampling), at most budget. */
static size_t zero_var_unreplaced(grpo_group *const *gs, size_t ng)
{
    size_t n = 0;
    for (size_t k = 0; k < ng; k++)
        n += gs[k]->n_done == gs[k]->n && gs[k]->st.zero_variance && !gs[k]->dropped;
    return n;
}

static int step_sync(grpo_trainer *t, grpo_step_metrics *sm, int *nonfinite, char *err)
{
    const grpo_config *c = &t->cfg;
    size_t cap = (size_t)c->tasks_per_step + (size_t)(c->dynamic_sampling ? c->max_extra_groups : 0);
    grpo_group **gs = calloc(cap, sizeof *gs);
    if (!gs)
        return rl_err(err, RL_ENOMEM, "grpo: out of memory");
    size_t ng = 0;
    int rc = 0;
    double busy = 0, t0 = grpo_now();
    long gen0, pre0;
    double gs0;
    live_policy_counters(t->pol, &gen0, &pre0, &gs0);
    for (int k = 0; k < c->tasks_per_step; k++) {
        if (!(gs[ng] = group_new(next_task(t), (long)t->groups_drawn++, c->group_size))) {
            rc = rl_err(err, RL_ENOMEM, "grpo: out of memory");
            goto done;
        }
        ng++;
    }
    if ((rc = run_groups_sync(t, gs, 0, ng, &busy, err)) < 0)
        goto done;
    /* DAPO dynamic sampling: replace zero-variance groups by fresh ones */
    int budget = c->dynamic_sampling ? c->max_extra_groups : 0;
    size_t zv;
    while (budget > 0 && (zv = zero_var_unreplaced(gs, ng)) > 0) {
        size_t first = ng;
        for (size_t k = 0; k < first && budget > 0; k++) {
            if (!(gs[k]->st.zero_variance && !gs[k]->dropped))
                continue;
            gs[k]->dropped = 1;
            sm->dropped++;
            if (!(gs[ng] = group_new(next_task(t), (long)t->groups_drawn++, c->group_size))) {
                rc = rl_err(err, RL_ENOMEM, "grpo: out of memory");
                goto done;
            }
            gs[ng++]->replacement = 1;
            sm->resampled++;
            budget--;
        }
        if ((rc = run_groups_sync(t, gs, first, ng, &busy, err)) < 0)
            goto done;
    }
    sm->rollout_s = grpo_now() - t0;
    long gen1, pre1;
    double gs1;
    live_policy_counters(t->pol, &gen1, &pre1, &gs1);
    sm->gen_tokens = gen1 - gen0;
    sm->prefill_tokens = pre1 - pre0;
    sm->gen_s = gs1 - gs0;
    metrics_from_groups(sm, gs, ng);
    /* train on the groups not dropped */
    grpo_group **batch = calloc(ng ? ng : 1, sizeof *batch);
    size_t nb = 0;
    if (!batch) {
        rc = rl_err(err, RL_ENOMEM, "grpo: out of memory");
        goto done;
    }
    for (size_t k = 0; k < ng; k++)
        if (!gs[k]->dropped)
            batch[nb++] = gs[k];
    rc = train_groups(t, batch, nb, sm, nonfinite, err);
    free(batch);
    sm->step_s = grpo_now() - t0;
    sm->util = sm->step_s > 0 ? busy / ((double)t->max_active * sm->step_s) : 0;
    keep_last_records(t, gs, ng);
done:
    for (size_t k = 0; k < ng; k++)
        group_free(gs[k]);
    free(gs);
    return rc;
}

static int step_async(grpo_trainer *t, grpo_step_metrics *sm, int *nonfinite, char *err)
{
    const grpo_config *c = &t->cfg;
    int rc;
    if (!t->as && (rc = as_start(t, err)) < 0)
        return rc;
    grpo_async *A = t->as;
    double t0 = grpo_now();
    double busy0 = as_busy_now(A);
    long gen0, pre0;
    double gs0;
    live_policy_counters(A->spol, &gen0, &pre0, &gs0);
    for (int k = 0; k < c->tasks_per_step; k++)
        if ((rc = as_queue_group(t, 0, err)) < 0)
            return rc;
    int G = c->group_size;
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
            if (!g) {
                free(out[i].rec);
                continue;
            }
            traj_finish(t, g, (int)(out[i].tag % G), out[i].rec, out[i].reward);
            if (g->n_done == g->n && g->st.zero_variance && budget > 0) {
                g->dropped = 1;
                sm->dropped++;
                sm->resampled++;
                budget--;
                if ((rc = as_queue_group(t, 1, err)) < 0) {
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
    sm->rollout_s = grpo_now() - t0;
    /* the batch: complete groups; dropped complete groups are discarded */
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
    /* the metrics count every group sampled, dropped ones too (as in sync) */
    for (size_t k = 0; k < nd; k++)
        batch[nb + k] = dropped[k];
    metrics_from_groups(sm, batch, nb + nd);
    rc = train_groups(t, batch, nb, sm, nonfinite, err);
    if (rc == 0)
        as_publish(A, t->m, t->step + 2); /* the version after this step */
    long gen1, pre1;
    double gs1;
    live_policy_counters(A->spol, &gen1, &pre1, &gs1);
    sm->gen_tokens = gen1 - gen0;
    sm->prefill_tokens = pre1 - pre0;
    sm->gen_s = gs1 - gs0;
    sm->step_s = grpo_now() - t0;
    double busy = as_busy_now(A) - busy0;
    sm->util = sm->step_s > 0 ? busy / ((double)t->max_active * sm->step_s) : 0;
    keep_last_records(t, batch, nb);
    for (size_t k = 0; k < nb; k++)
        group_free(batch[k]);
    for (size_t k = 0; k < nd; k++)
        group_free(dropped[k]);
    free(batch);
    free(dropped);
    return rc;
}

static int use_async(const grpo_trainer *t)
{
    if (t->cfg.mode == GRPO_ASYNC)
        return 1;
    if (t->cfg.mode == GRPO_COMPARE) {
        long s = t->cfg.compare_sync_steps > 0 ? t->cfg.compare_sync_steps : t->cfg.steps / 2;
        return t->step >= s;
    }
    return 0;
}

/* Evaluation on the held-out tasks; rollback when it drops too far. */
static int maybe_eval(grpo_trainer *t, int *evaluated, char ***recs, size_t *nrec, char *err);

int grpo_train(grpo_trainer *t, long until, char *err)
{
    if (until <= 0 || until > t->cfg.steps)
        until = t->cfg.steps;
    int rollbacks = 0;
    while (t->step < until) {
        grpo_step_metrics sm;
        memset(&sm, 0, sizeof sm);
        sm.step = t->step + 1;
        int as = use_async(t), nonfinite = 0;
        sm.mode = as ? "async" : "sync";
        int rc = as ? step_async(t, &sm, &nonfinite, err) : step_sync(t, &sm, &nonfinite, err);
        if (rc < 0 && !nonfinite)
            return rc;
        if (nonfinite) {
            if (++rollbacks > 3)
                return rc; /* the same step keeps failing: stop, the error says why */
            char why[RL_ERR_MAX];
            snprintf(why, sizeof why, "%s", err);
            if ((rc = grpo_rollback(t, why, err)) < 0)
                return rc;
            continue; /* the step is redone from the restored weights */
        }
        rollbacks = 0;
        t->step++;
        if ((rc = log_step(t, &sm, err)) < 0)
            return rc;
        t->cmp_wall[as] += sm.step_s;
        t->cmp_busy[as] += sm.util * sm.step_s;
        t->cmp_eps[as] += (double)sm.episodes;
        t->cmp_steps[as]++;
        int evaluated = 0;
        char **erecs = NULL;
        size_t nerec = 0;
        if ((rc = maybe_eval(t, &evaluated, &erecs, &nerec, err)) < 0)
            return rc;
        if (evaluated || (t->cfg.ckpt_every > 0 && t->step % t->cfg.ckpt_every == 0) || t->step == until) {
            rc = evaluated ? grpo_ckpt_write(t, erecs, nerec, err) : grpo_ckpt_write(t, t->last_recs, t->n_last, err);
        }
        for (size_t i = 0; i < nerec; i++)
            free(erecs[i]);
        free(erecs);
        if (rc < 0)
            return rc;
    }
    if (t->cmp_steps[0] && t->cmp_steps[1]) {
        /* per mode: wall time per step, slot utilization (time-weighted),
         * and episodes trained on per second -- async steps may train on
         * fewer groups than sync ones, so the last is the fair figure */
        double w[2], u[2], eps[2];
        for (int k = 0; k < 2; k++) {
            w[k] = t->cmp_wall[k] / (double)t->cmp_steps[k];
            u[k] = t->cmp_wall[k] > 0 ? t->cmp_busy[k] / t->cmp_wall[k] : 0;
            eps[k] = t->cmp_wall[k] > 0 ? t->cmp_eps[k] / t->cmp_wall[k] : 0;
        }
        /* what the model of harness/stats predicts from the same episodes'
         * durations (it ignores training time and batching effects) */
        double m1 = stats_utilization(t->durs, t->n_durs, (size_t)t->max_active, 1.0, RL_REPORT_UTIL_STEPS);
        double ml = stats_utilization(t->durs, t->n_durs, (size_t)t->max_active, t->cfg.lambda, RL_REPORT_UTIL_STEPS);
        if (!t->cfg.quiet)
            fprintf(stderr,
                    "rollout modes: sync %ld steps, %.1f s/step, slot utilization %.2f, %.3f episodes/s; "
                    "async (lambda %.2f) %ld steps, %.1f s/step, utilization %.2f, %.3f episodes/s "
                    "(stats_utilization on these episodes: %.2f / %.2f)\n",
                    t->cmp_steps[0], w[0], u[0], eps[0], t->cfg.lambda, t->cmp_steps[1], w[1], u[1], eps[1], m1, ml);
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "event", "compare");
        cJSON_AddNumberToObject(e, "lambda", t->cfg.lambda);
        cJSON_AddNumberToObject(e, "model_sync_util", m1);
        cJSON_AddNumberToObject(e, "model_async_util", ml);
        const char *name[2] = {"sync", "async"};
        for (int k = 0; k < 2; k++) {
            cJSON *m = cJSON_AddObjectToObject(e, name[k]);
            cJSON_AddNumberToObject(m, "steps", (double)t->cmp_steps[k]);
            cJSON_AddNumberToObject(m, "step_s", w[k]);
            cJSON_AddNumberToObject(m, "util", u[k]);
            cJSON_AddNumberToObject(m, "episodes_per_s", eps[k]);
        }
        int rc = grpo_log_event(t, e, err);
        cJSON_Delete(e);
        if (rc < 0)
            return rc;
    }
    return 0;
}

typedef struct eval_keep {
    char **recs;
    size_t n, cap;
} eval_keep;

static int maybe_eval(grpo_trainer *t, int *evaluated, char ***recs, size_t *nrec, char *err)
{
    *evaluated = 0;
    if (t->cfg.eval_every <= 0 || t->step % t->cfg.eval_every != 0)
        return 0;
    char path[GRPO_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/eval-step-%08ld.jsonl", t->run_dir, t->step);
    grpo_eval_result r;
    int rc = grpo_evaluate(&r, t, NULL, t->cfg.eval_tasks, t->cfg.eval_seeds, t->cfg.eval_temperature, path, err);
    if (rc < 0)
        return rc;
    *evaluated = 1;
    /* the records for the checkpoint's profile */
    char *text = NULL;
    size_t len = 0;
    if (fs_read_file(&text, &len, path, RL_REPORT_FILE_MAX, NULL) == 0) {
        eval_keep k = {0};
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
            if (k.n == k.cap) {
                size_t nc = k.cap ? k.cap * 2 : 64;
                char **p = realloc(k.recs, nc * sizeof *p);
                if (!p)
                    break;
                k.recs = p;
                k.cap = nc;
            }
            if (!(k.recs[k.n] = strdup(line)))
                break;
            k.n++;
        }
        free(text);
        *recs = k.recs;
        *nrec = k.n;
    }
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "event", "eval");
    cJSON_AddNumberToObject(e, "step", (double)t->step);
    cJSON_AddNumberToObject(e, "episodes", (double)r.episodes);
    cJSON_AddNumberToObject(e, "pass_rate", r.pass_rate);
    cJSON_AddNumberToObject(e, "tool_success", r.tool_success);
    cJSON_AddNumberToObject(e, "mean_turns", r.mean_turns);
    cJSON_AddNumberToObject(e, "mean_policy_tokens", r.mean_policy_tokens);
    cJSON_AddNumberToObject(e, "best", t->best_eval);
    rc = grpo_log_event(t, e, err);
    cJSON_Delete(e);
    if (rc < 0)
        return rc;
    if (!t->cfg.quiet)
        fprintf(stderr, "eval step %ld: pass %.3f (%zu/%zu) tool %.2f turns %.1f (best %.3f)\n", t->step, r.pass_rate,
                r.passed, r.episodes, r.tool_success, r.mean_turns, t->best_eval);
    if (t->best_eval >= 0 && r.pass_rate < t->best_eval - t->cfg.rollback_drop) {
        char why[256];
        snprintf(why, sizeof why, "evaluation pass rate %.3f fell below the best %.3f by more than %.3f", r.pass_rate,
                 t->best_eval, t->cfg.rollback_drop);
        *evaluated = 0; /* no checkpoint of the weights rolled back from */
        for (size_t i = 0; i < *nrec; i++)
            free((*recs)[i]);
        free(*recs);
        *recs = NULL;
        *nrec = 0;
        return grpo_rollback(t, why, err);
    }
    if (r.pass_rate > t->best_eval) {
        t->best_eval = r.pass_rate;
        t->best_step = t->step;
    }
    return 0;
}

/* ---- open / close ------------------------------------------------------------------------- */

static int load_tasks(grpo_trainer *t, char *err)
{
    int rc = task_set_load(&t->all, t->cfg.tasks_dir, t->cfg.repos_dir, err);
    if (rc < 0)
        return rc;
    if ((rc = task_select(&t->train, &t->all, t->cfg.train_tasks, err)) < 0)
        return rc;
    if (t->train.n == 0)
        return rl_err(err, RL_EINVAL, "train_tasks \"%s\": selects no task", t->cfg.train_tasks);
    return 0;
}

static int open_model(grpo_trainer *t, const char *weights, char *err)
{
    const grpo_config *c = &t->cfg;
    model_opts mo;
    model_opts_default(&mo);
    mo.n_threads = c->threads;
    model_meta meta;
    model_meta_default(&meta);
    int rc;
    if (c->init[0]) {
        if ((rc = model_load(&t->m, &meta, c->init, &mo, err)) < 0)
            return rc;
    } else {
        if ((rc = model_new(&t->m, &c->model, &mo, err)) < 0)
            return rc;
        model_random_init(t->m, (uint64_t)c->init_seed);
    }
    const char *tp = c->tokenizer[0] ? c->tokenizer : meta.tokenizer;
    if (!tp[0])
        return rl_err(err, RL_EINVAL, "config: tokenizer: the checkpoint names none, expected a tokenizer path");
    snprintf(t->tok_path, sizeof t->tok_path, "%s", tp);
    if ((rc = tok_load(&t->tok, tp, err)) < 0)
        return rc;
    if (tok_vocab_size(t->tok) > t->m->cfg.vocab)
        return rl_err(err, RL_EINVAL, "tokenizer %s: %d ids, the model has only %d", tp, tok_vocab_size(t->tok),
                      t->m->cfg.vocab);
    if (c->max_context_tokens + c->max_reply_tokens > t->m->cfg.max_seq)
        return rl_err(err, RL_EINVAL,
                      "config: episode.max_context_tokens + max_reply_tokens is %d, the model's context is %d",
                      c->max_context_tokens + c->max_reply_tokens, t->m->cfg.max_seq);
    if (weights && (rc = grpo_load_weights(t->m, weights, err)) < 0)
        return rc;
    return 0;
}

static int open_reference(grpo_trainer *t, int resuming, char *err)
{
    if (!(t->cfg.loss.kl_coef > 0))
        return 0;
    char path[GRPO_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/reference.safetensors", t->run_dir);
    model_opts mo;
    model_opts_default(&mo);
    mo.n_threads = t->cfg.threads;
    int rc = model_new(&t->ref, &t->m->cfg, &mo, err);
    if (rc < 0)
        return rc;
    if (resuming)
        return grpo_load_weights(t->ref, path, err);
    memcpy(t->ref->params, t->m->params, t->m->n_params * sizeof(float));
    model_meta meta;
    model_meta_default(&meta);
    snprintf(meta.tokenizer, sizeof meta.tokenizer, "%s", t->tok_path);
    return model_save(t->ref, path, &meta, err);
}

static int open_optimizer(grpo_trainer *t, char *err)
{
    const model *m = t->m;
    opt_span *sp = calloc((size_t)m->n_tensors, sizeof *sp);
    if (!sp)
        return rl_err(err, RL_ENOMEM, "grpo: out of memory");
    for (int i = 0; i < m->n_tensors; i++) {
        sp[i].offset = m->tensors[i].offset;
        sp[i].n = m->tensors[i].numel;
        sp[i].decay = !m->tensors[i].is_norm && (t->cfg.decay_embed || !m->tensors[i].is_embed);
    }
    opt_config oc = t->cfg.optim;
    oc.total_steps = t->cfg.steps;
    int rc = opt_new(&t->opt, &oc, m->n_params, sp, m->n_tensors, err);
    free(sp);
    return rc;
}

static void episode_config(grpo_trainer *t)
{
    const grpo_config *c = &t->cfg;
    ep_config *e = &t->ep;
    ep_config_default(e);
    e->policy = "grpo-live";
    e->prompt = c->prompt;
    e->prompts_dir = c->prompts_dir;
    e->think = c->think;
    e->history_keep = c->history_keep;
    e->max_turns = c->max_turns;
    e->max_context_tokens = c->max_context_tokens;
    e->max_wall_s = c->max_wall_s;
    e->max_reply_tokens = c->max_reply_tokens;
    e->temperature = c->temperature;
    e->top_p = c->top_p;
    e->obs_budget = (size_t)c->obs_budget;
    e->shaping = c->shaping;
    e->tok = t->tok;
}

int grpo_open(grpo_trainer **out, const grpo_config *cfg, const char *resume_dir, const grpo_hooks *hooks, char *err)
{
    *out = NULL;
    grpo_trainer *t = calloc(1, sizeof *t);
    if (!t)
        return rl_err(err, RL_ENOMEM, "grpo: out of memory");
    t->cfg = *cfg;
    if (hooks)
        t->hooks = *hooks;
    t->best_eval = -1;
    t->best_step = -1;
    t->last_ckpt = -1;
    t->t_open = grpo_now();
    t->max_active = cfg->max_active > 0 ? cfg->max_active : cfg->tasks_per_step * cfg->group_size;
    if (t->max_active > RL_ROLLOUT_ACTIVE_MAX)
        t->max_active = RL_ROLLOUT_ACTIVE_MAX;
    int rc;
    char ckpt[GRPO_PATH_MAX + 64] = "";
    if (resume_dir) {
        if ((rc = grpo_ckpt_resolve(t->run_dir, sizeof t->run_dir, ckpt, sizeof ckpt, resume_dir, err)) < 0)
            goto fail;
        /* the run's own config must be the one given, except for what does
         * not change training: where things go, reports, the flywheel */
        char path[GRPO_PATH_MAX + 32], what[256];
        snprintf(path, sizeof path, "%s/config.json", t->run_dir);
        grpo_config saved;
        grpo_config_default(&saved);
        if ((rc = grpo_config_load(&saved, path, err)) < 0)
            goto fail;
        grpo_config given = *cfg;
        grpo_config_carry_free(&given, &saved);
        if (!grpo_config_same(&saved, &given, what, sizeof what)) {
            rc = rl_err(err, RL_EINVAL, "--resume %s: the config differs from the run's config.json at %s", resume_dir,
                        what);
            goto fail;
        }
    } else {
        snprintf(t->run_dir, sizeof t->run_dir, "%s", cfg->out);
        char path[GRPO_PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/config.json", t->run_dir);
        if (access(path, F_OK) == 0) {
            rc = rl_err(err, RL_EINVAL, "%s: a run is already there (use --resume %s, or another out)", t->run_dir,
                        t->run_dir);
            goto fail;
        }
        if ((rc = fs_mkdirs(t->run_dir, err)) < 0)
            goto fail;
        char *json = grpo_config_to_json(cfg);
        if (!json) {
            rc = rl_err(err, RL_ENOMEM, "grpo: out of memory");
            goto fail;
        }
        rc = fs_write_atomic(path, json, strlen(json), err);
        free(json);
        if (rc < 0)
            goto fail;
    }
    snprintf(t->metrics_path, sizeof t->metrics_path, "%s/metrics.jsonl", t->run_dir);
    if ((rc = load_tasks(t, err)) < 0)
        goto fail;
    char wpath[GRPO_PATH_MAX + 96];
    snprintf(wpath, sizeof wpath, "%s/model.safetensors", ckpt);
    if ((rc = open_model(t, resume_dir ? wpath : NULL, err)) < 0 || (rc = open_reference(t, resume_dir != NULL, err)) < 0 ||
        (rc = open_optimizer(t, err)) < 0)
        goto fail;
    if (resume_dir) {
        snprintf(wpath, sizeof wpath, "%s/optim.safetensors", ckpt);
        if ((rc = opt_load(t->opt, wpath, err)) < 0 || (rc = grpo_ckpt_read_state(t, ckpt, err)) < 0)
            goto fail;
    }
    episode_config(t);
    live_policy_opts lo;
    live_policy_opts_default(&lo);
    lo.temperature = (float)cfg->temperature;
    lo.top_p = (float)cfg->top_p;
    lo.max_tokens = cfg->max_reply_tokens;
    lo.name = "grpo-live";
    if ((rc = live_policy_new(&t->pol, t->m, t->tok, &lo, err)) < 0)
        goto fail;
    rollout_opts ro;
    rollout_opts_default(&ro);
    ro.ws_root = cfg->ws_root[0] ? cfg->ws_root : NULL;
    ro.max_active = t->max_active;
    ro.threads = cfg->tool_threads;
    if ((rc = rollout_new(&t->ro, t->pol, &ro, err)) < 0)
        goto fail;
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "event", resume_dir ? "resume" : "start");
    cJSON_AddNumberToObject(e, "step", (double)t->step);
    cJSON_AddNumberToObject(e, "params", (double)t->m->n_params);
    cJSON_AddNumberToObject(e, "train_tasks", (double)t->train.n);
    rc = grpo_log_event(t, e, err);
    cJSON_Delete(e);
    if (rc < 0)
        goto fail;
    if (!resume_dir && (rc = grpo_ckpt_write(t, NULL, 0, err)) < 0) /* step 0: what rollback can return to */
        goto fail;
    *out = t;
    return 0;
fail:
    grpo_close(t);
    return rc;
}

void grpo_close(grpo_trainer *t)
{
    if (!t)
        return;
    as_free(t->as);
    rollout_free(t->ro);
    pol_free(t->pol);
    opt_free(t->opt);
    model_free(t->m);
    model_free(t->ref);
    tok_free(t->tok);
    task_select_free(&t->train);
    task_set_free(&t->all);
    free(t->perm);
    free(t->h_reward);
    free(t->h_pass);
    free(t->h_tool);
    free(t->h_tokens);
    free(t->h_kl);
    free(t->durs);
    for (size_t i = 0; i < t->n_last; i++)
        free(t->last_recs[i]);
    free(t->last_recs);
    free(t);
}

/* ---- supervised fine-tuning (the flywheel) ------------------------------------------------- */

int grpo_sft(double *loss, grpo_trainer *t, char *const *records, size_t n, int epochs, double lr, char *err)
{
    *loss = 0;
    grpo_seqs S;
    grpo_seqs_init(&S);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        char rerr[RL_ERR_MAX];
        int r = grpo_seqs_add_json(&S, records[i], (int)i, t->m->cfg.vocab, t->m->cfg.max_seq, rerr);
        if (r == RL_ENOMEM) {
            grpo_seqs_free(&S);
            return rl_err(err, r, "%s", rerr);
        }
    }
    if (S.n == 0 || epochs <= 0) {
        grpo_seqs_free(&S);
        return 0;
    }
    opt_config oc = t->cfg.optim;
    oc.lr = (float)lr;
    oc.warmup_steps = 0;
    oc.total_steps = 0; /* constant */
    opt_span *sp = calloc((size_t)t->m->n_tensors, sizeof *sp);
    adamw *opt = NULL;
    train_buf b = {0};
    if (!sp) {
        rc = rl_err(err, RL_ENOMEM, "grpo sft: out of memory");
        goto done;
    }
    for (int i = 0; i < t->m->n_tensors; i++) {
        sp[i].offset = t->m->tensors[i].offset;
        sp[i].n = t->m->tensors[i].numel;
        sp[i].decay = !t->m->tensors[i].is_norm;
    }
    if ((rc = opt_new(&opt, &oc, t->m->n_params, sp, t->m->n_tensors, err)) < 0)
        goto done;
    /* one sequence per optimizer step keeps memory flat; token mean */
    int maxT = 0;
    for (size_t s = 0; s < S.n; s++)
        maxT = S.v[s].n > maxT ? S.v[s].n : maxT;
    if ((rc = train_buf_reserve(&b, (size_t)maxT, err)) < 0)
        goto done;
    for (int ep = 0; ep < epochs; ep++) {
        double nll = 0;
        size_t ntok = 0;
        for (size_t s = 0; s < S.n; s++) {
            const grpo_seq *q = &S.v[s];
            for (int p = 0; p < q->n; p++) {
                b.tok[p] = q->tokens[p];
                b.tgt[p] = q->targets[p];
                b.w[p] = q->targets[p] >= 0 ? 1.0f / (float)q->n_policy : 0.0f;
            }
            if ((rc = model_zero_grad(t->m, err)) < 0 ||
                (rc = model_forward(t->m, b.tok, b.tgt, 1, q->n, 1.0f, b.logp, NULL, err)) < 0)
                goto done;
            nll += grpo_ce_tokens(b.coef, b.logp, b.w, (size_t)q->n) * q->n_policy;
            ntok += (size_t)q->n_policy;
            if ((rc = model_backward(t->m, b.coef, err)) < 0 ||
                (rc = opt_step(opt, t->m->params, t->m->grads, NULL, NULL, err)) < 0)
                goto done;
        }
        *loss = ntok ? nll / (double)ntok : 0;
    }
done:
    train_buf_free(&b);
    opt_free(opt);
    free(sp);
    grpo_seqs_free(&S);
    if (rc == 0 && t->as)
        as_publish(t->as, t->m, t->step + 1);
    return rc;
}

void grpo_weights_changed(grpo_trainer *t)
{
    if (t->as)
        as_publish(t->as, t->m, t->step + 1);
}

int grpo_checkpoint(grpo_trainer *t, char *err)
{
    if (t->last_ckpt == t->step)
        return 0;
    return grpo_ckpt_write(t, t->last_recs, t->n_last, err);
}
