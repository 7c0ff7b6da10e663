/* grpo.c - the GRPO trainer: groups, rollouts, metrics, the step loop,
 * evaluation schedule, open and close.
 *
 * A step (synchronous): draw tasks_per_step tasks from the train split (a
 * shuffled order per epoch, so the data position is one counter), queue G
 * episodes of each in the rollout, step the rollout until every episode
 * is done (one batched policy call per turn), compute advantages per
 * group, optionally replace zero-variance groups (dynamic sampling), then
 * one optimizer step (grpo_update.c). The asynchronous mode lives in
 * grpo_async.c, checkpoints in grpo_ckpt.c.
 */
#include "grpo/grpo_int.h"

#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "grpo/live_policy.h"
#include "harness/tools.h"

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
uint64_t grpo_ep_seed(const grpo_trainer *t, uint64_t gid, int i)
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

/* One character of the fix: into the text (cut at its cap) and into the
 * FNV-1a hash of the whole. */
static void fix_put(grpo_traj *tr, size_t *len, char ch)
{
    tr->fix_hash = (tr->fix_hash ^ (unsigned char)ch) * 0x100000001b3ull;
    if (*len + 1 < sizeof tr->fix)
        tr->fix[(*len)++] = ch;
    tr->fix[*len] = '\0';
}

/* Appends s to the fix with blank runs collapsed to one space and the
 * ends trimmed. */
static void fix_append(grpo_traj *tr, size_t *len, const char *s)
{
    int space = 0, any = 0;
    for (; *s; s++) {
        if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') {
            space = any;
            continue;
        }
        if (space)
            fix_put(tr, len, ' ');
        fix_put(tr, len, *s);
        space = 0;
        any = 1;
    }
}

/* The fix of an applied edit_file call: "old -> new". */
static void fix_set(grpo_traj *tr, const cJSON *args)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(args, "old_string");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(args, "new_string");
    if (!cJSON_IsString(o) || !cJSON_IsString(n))
        return;
    size_t len = 0;
    tr->fix_hash = 0xcbf29ce484222325ull;
    fix_append(tr, &len, o->valuestring);
    for (const char *sep = " -> "; *sep; sep++)
        fix_put(tr, &len, *sep);
    fix_append(tr, &len, n->valuestring);
    tr->fix_hash |= 1; /* 0 means no fix */
}

void grpo_traj_parse(grpo_traj *tr, const cJSON *rec)
{
    tr->passed = jnum(rec, "reward", 0) > 0.5;
    tr->flagged = cJSON_IsTrue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rec, "integrity"), "flagged"));
    const cJSON *turns = cJSON_GetObjectItemCaseSensitive(rec, "turns"), *turn;
    tr->turns = cJSON_GetArraySize(turns);
    int unrepaired = 0; /* failed edits since the last applied one */
    cJSON_ArrayForEach(turn, turns)
    {
        const cJSON *fe = cJSON_GetObjectItemCaseSensitive(turn, "format_error");
        tr->format_errors += fe && cJSON_IsString(fe);
        const cJSON *c;
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(turn, "tool_calls"))
        {
            int ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "ok"));
            const cJSON *name = cJSON_GetObjectItemCaseSensitive(c, "name");
            int edit = cJSON_IsString(name) &&
                       (!strcmp(name->valuestring, "edit_file") || !strcmp(name->valuestring, "write_file"));
            tr->calls++;
            tr->calls_ok += ok;
            tr->edits += edit;
            tr->edits_ok += edit && ok;
            if (edit && ok) {
                tr->edit_repaired += unrepaired;
                unrepaired = 0;
                if (!strcmp(name->valuestring, "edit_file"))
                    fix_set(tr, cJSON_GetObjectItemCaseSensitive(c, "arguments"));
            }
            unrepaired += edit && !ok;
            const cJSON *kind = cJSON_GetObjectItemCaseSensitive(c, "error_kind");
            if (edit && !ok && cJSON_IsString(kind)) {
                tr->edit_no_match += !strcmp(kind->valuestring, TOOL_KIND_NO_MATCH);
                tr->edit_not_unique += !strcmp(kind->valuestring, TOOL_KIND_NOT_UNIQUE);
                tr->edit_no_change += !strcmp(kind->valuestring, TOOL_KIND_NO_CHANGE);
            }
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

grpo_group *grpo_group_new(const task *tk, long gid, int G)
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

void grpo_group_free(grpo_group *g)
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
void grpo_traj_finish(grpo_trainer *t, grpo_group *g, int i, char *rec, double reward)
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
/* Fisher-Yates over 0..n-1 from seed s (the train order of one epoch). */
static void shuffle_ids(size_t *a, size_t n, uint64_t s)
{
    for (size_t i = 0; i < n; i++)
        a[i] = i;
    for (size_t i = n; i > 1; i--) {
        s = grpo_mix(s, i);
        size_t j = (size_t)(s % i);
        size_t x = a[i - 1];
        a[i - 1] = a[j];
        a[j] = x;
    }
}

size_t grpo_draw(const grpo_strata *st, uint64_t seed, uint64_t pos, size_t *scratch)
{
    uint64_t round = pos / st->n;
    size_t k = (size_t)(pos % st->n);
    if (st->n > 1) { /* every stratum once per round, in a fresh order */
        shuffle_ids(scratch, st->n, grpo_mix(seed ^ 0x7374726174ull, round));
        k = scratch[k];
    }
    size_t nk = st->start[k + 1] - st->start[k];
    uint64_t epoch = round / nk;
    shuffle_ids(scratch, nk, grpo_mix((seed ^ 0x7461736b73ull) + k, epoch));
    return st->member[st->start[k] + scratch[round % nk]];
}

typedef struct keyed {
    const char *key;
    size_t i;
} keyed;

static int keyed_cmp(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->i > y->i) - (x->i < y->i);
}

int grpo_strata_build(grpo_strata *st, size_t **scratch, const task_set *train, int balance, char *err)
{
    size_t n = train->n;
    memset(st, 0, sizeof *st);
    keyed *ks = calloc(n, sizeof *ks);
    st->start = calloc(n + 1, sizeof *st->start);
    st->member = calloc(n, sizeof *st->member);
    *scratch = calloc(n + 1, sizeof **scratch);
    if (!ks || !st->start || !st->member || !*scratch) {
        free(ks);
        grpo_strata_free(st);
        free(*scratch);
        *scratch = NULL;
        return rl_err(err, RL_ENOMEM, "grpo: out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        const task *tk = train->v[i];
        ks[i].i = i;
        ks[i].key = balance == GRPO_BALANCE_MUTATION ? (tk->gen_mutation ? tk->gen_mutation : "")
                    : balance == GRPO_BALANCE_REPO   ? tk->repo
                                                     : "";
    }
    qsort(ks, n, sizeof *ks, keyed_cmp);
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || strcmp(ks[i].key, ks[i - 1].key))
            st->start[st->n++] = i;
        st->member[i] = ks[i].i;
    }
    st->start[st->n] = n;
    free(ks);
    return 0;
}

void grpo_strata_free(grpo_strata *st)
{
    free(st->start);
    free(st->member);
    memset(st, 0, sizeof *st);
}

const task *grpo_next_task(grpo_trainer *t)
{
    return t->train.v[grpo_draw(&t->strata, (uint64_t)t->cfg.seed, t->data_pos++, t->scratch)];
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
    grpo_traj_finish(c->t, c->gs[gi], (int)(tag % G), rec, reward);
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
            int rc = rollout_add(t->ro, gs[k]->task, &t->ep, grpo_ep_seed(t, (uint64_t)gs[k]->gid, i),
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

/* ---- metrics ---------------------------------------------------------------------------- */

void grpo_metrics_from_groups(grpo_step_metrics *sm, grpo_group *const *gs, size_t ng)
{
    double rew = 0, tok = 0, turns = 0;
    size_t n = 0, pass = 0, calls = 0, ok = 0, ident = 0, fe = 0, nturns = 0, edits = 0, edits_ok = 0, flagged = 0;
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
            flagged += tr->flagged != 0;
            calls += (size_t)tr->calls;
            ok += (size_t)tr->calls_ok;
            edits += (size_t)tr->edits;
            edits_ok += (size_t)tr->edits_ok;
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
    sm->flagged = flagged;
    sm->flagged_share = n ? (double)flagged / (double)n : 0;
    sm->tool_success = calls ? (double)ok / (double)calls : 0;
    sm->identical_share = calls ? (double)ident / (double)calls : 0;
    sm->edit_calls = edits;
    sm->edit_applied = edits ? (double)edits_ok / (double)edits : 0;
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

/* The step-history arrays of t, for growing and freeing them all. */
#define HIST_ARRAYS 7
static void hist_arrays(grpo_trainer *t, double **h[HIST_ARRAYS])
{
    double **a[HIST_ARRAYS] = {&t->h_reward, &t->h_pass, &t->h_tool, &t->h_tokens, &t->h_kl, &t->h_fmt, &t->h_flag};
    memcpy(h, a, sizeof a);
}

static int hist_push(grpo_trainer *t, const grpo_step_metrics *sm)
{
    if (t->h_n == t->h_cap) {
        size_t nc = t->h_cap ? t->h_cap * 2 : 64;
        double **h[HIST_ARRAYS];
        hist_arrays(t, h);
        for (size_t i = 0; i < HIST_ARRAYS; i++) {
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
    t->h_fmt[t->h_n] = sm->format_error_rate;
    t->h_flag[t->h_n] = sm->flagged_share;
    t->h_n++;
    return 0;
}

/* The warnings of issue 7: reward up while pass rate or tool success is
 * not (the reward is being gamed), responses collapsing, KL jumping; and
 * malformed replies spreading (the reward does not see the format, so
 * nothing but the KL term holds it). */
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
        double f0 = mean_of(t->h_fmt, n - 2 * W, n - W), f1 = mean_of(t->h_fmt, n - W, n);
        if (f1 - f0 > t->cfg.warn_format_rise) {
            snprintf(w, sizeof w, "malformed replies rose from %.0f%% to %.0f%% of turns over %zu steps", 100 * f0,
                     100 * f1, W);
            cJSON_AddItemToArray(arr, cJSON_CreateString(w));
            buf_printf(line, "\n  warning: %s", w);
        }
    }
    /* a step whose episodes change how the tests run rather than fix code:
     * enforced, they score 0, but the policy is learning to try */
    if (n >= 1 && t->h_flag && t->h_flag[n - 1] > t->cfg.warn_integrity) {
        snprintf(w, sizeof w, "%.0f%% of the step's episodes were flagged by the integrity check (threshold %.0f%%)",
                 100 * t->h_flag[n - 1], 100 * t->cfg.warn_integrity);
        cJSON_AddItemToArray(arr, cJSON_CreateString(w));
        buf_printf(line, "\n  warning: %s", w);
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
    cJSON_AddNumberToObject(o, "integrity_flagged", (double)sm->flagged);
    cJSON_AddNumberToObject(o, "integrity_flagged_share", sm->flagged_share);
    cJSON_AddNumberToObject(o, "policy_tokens_mean", sm->policy_tokens_mean);
    cJSON_AddNumberToObject(o, "turns_mean", sm->turns_mean);
    cJSON_AddNumberToObject(o, "identical_share", sm->identical_share);
    cJSON_AddNumberToObject(o, "edit_calls", (double)sm->edit_calls);
    cJSON_AddNumberToObject(o, "edit_applied", sm->edit_applied);
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
    cJSON_AddNumberToObject(o, "filtered_records", (double)sm->filtered_seqs);
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
               "step %ld/%ld [%s] reward %.3f pass %.3f zero-var %zu/%zu tool %.2f edit %.2f fmt %.3f flagged %.3f "
               "tok %.0f kl %.4f clip %.3f ent %.3f turns %.1f ident %.3f | %.1f s (rollout %.1f, train %.1f) util %.2f",
               sm->step, t->cfg.steps, sm->mode, sm->reward_mean, sm->pass_rate, sm->zero_var, sm->groups,
               sm->tool_success, sm->edit_applied, sm->format_error_rate, sm->flagged_share, sm->policy_tokens_mean, L->has_kl ? L->kl_sum / tok : 0.0,
               L->tokens ? (double)L->clipped / tok : 0.0, L->has_ent ? L->ent_sum / tok : 0.0, sm->turns_mean,
               sm->identical_share, sm->step_s, sm->rollout_s, sm->train_s, sm->util);
    grpo_warnings(t, warn, &line);
    int rc = grpo_log_event(t, o, err);
    cJSON_Delete(o);
    if (!t->cfg.quiet)
        fprintf(stderr, "%s\n", buf_str(&line));
    buf_dispose(&line);
    return rc;
}

/* ---- one step ---------------------------------------------------------------------------- */

void grpo_keep_last_records(grpo_trainer *t, grpo_group *const *gs, size_t ng)
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
        if (!(gs[ng] = grpo_group_new(grpo_next_task(t), (long)t->groups_drawn++, c->group_size))) {
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
            if (!(gs[ng] = grpo_group_new(grpo_next_task(t), (long)t->groups_drawn++, c->group_size))) {
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
    grpo_metrics_from_groups(sm, gs, ng);
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
    rc = grpo_train_groups(t, batch, nb, sm, nonfinite, err);
    free(batch);
    sm->step_s = grpo_now() - t0;
    sm->util = sm->step_s > 0 ? busy / ((double)t->max_active * sm->step_s) : 0;
    grpo_keep_last_records(t, gs, ng);
done:
    for (size_t k = 0; k < ng; k++)
        grpo_group_free(gs[k]);
    free(gs);
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
        int rc = as ? grpo_step_async(t, &sm, &nonfinite, err) : step_sync(t, &sm, &nonfinite, err);
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
        /* what the model of common/stats predicts from the same episodes'
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
    return grpo_strata_build(&t->strata, &t->scratch, &t->train, t->cfg.balance, err);
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
    e->edit_hints = c->edit_hints;
    e->integrity_flag_only = c->integrity_flag_only;
    e->test_limits.mem_mb = c->test_mem_mb;
    e->test_limits.procs = c->test_procs;
    e->test_limits.disk_mb = c->test_disk_mb;
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
    cJSON_AddNumberToObject(e, "train_strata", (double)t->strata.n);
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
    grpo_async_free(t->as);
    rollout_free(t->ro);
    pol_free(t->pol);
    opt_free(t->opt);
    model_free(t->m);
    model_free(t->ref);
    tok_free(t->tok);
    task_select_dispose(&t->train);
    task_set_dispose(&t->all);
    grpo_strata_free(&t->strata);
    free(t->scratch);
    double **h[HIST_ARRAYS];
    hist_arrays(t, h);
    for (size_t i = 0; i < HIST_ARRAYS; i++)
        free(*h[i]);
    free(t->durs);
    for (size_t i = 0; i < t->n_last; i++)
        free(t->last_recs[i]);
    free(t->last_recs);
    free(t);
}

int grpo_checkpoint(grpo_trainer *t, char *err)
{
    if (t->last_ckpt == t->step)
        return 0;
    return grpo_ckpt_write(t, t->last_recs, t->n_last, err);
}
