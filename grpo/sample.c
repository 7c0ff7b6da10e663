/* sample.c - trajectory record -> GRPO training sequences (sample.h). */
#include "grpo/sample.h"

#include "common/err.h"
#include "common/limits.h"
#include "common/vec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void grpo_seqs_init(grpo_seqs *s) { memset(s, 0, sizeof *s); }

static void seq_free(grpo_seq *q)
{
    free(q->tokens);
    free(q->targets);
    free(q->behav);
    free(q->version);
}

void grpo_seqs_dispose(grpo_seqs *s)
{
    for (size_t i = 0; i < s->n; i++)
        seq_free(&s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* ---- one record's turns ---------------------------------------------------- */

typedef struct turn_ids {
    int *ctx;        /* resolved full context */
    size_t n_ctx;
    int *ids;        /* sampled ids (NULL: the turn has none) */
    float *lp;
    size_t n_ids;
    long version;
} turn_ids;

/* A growing token sequence with per-token origin (the open sequence). */
typedef struct open_seq {
    int *tok;
    unsigned char *pol;   /* 1: policy-written */
    float *lp;
    long *ver;
    size_t n, cap;
    int turn;
} open_seq;

static int ids_array(int **out, size_t *n, const cJSON *a, int vocab, const char *what, size_t k, char *err)
{
    *out = NULL;
    *n = 0;
    if (!cJSON_IsArray(a))
        return rl_err(err, RL_EPARSE, "record turn %zu: %s: expected an array of token ids", k, what);
    size_t cnt = (size_t)cJSON_GetArraySize(a);
    if (cnt > RL_GRPO_RECORD_TOKENS_MAX)
        return rl_err(err, RL_ELIMIT, "record turn %zu: %s: %zu ids, expected at most %u", k, what, cnt,
                      RL_GRPO_RECORD_TOKENS_MAX);
    int *v = malloc((cnt ? cnt : 1) * sizeof *v);
    if (!v)
        return rl_err(err, RL_ENOMEM, "record: out of memory");
    size_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a)
    {
        double d = cJSON_IsNumber(e) ? e->valuedouble : -1;
        if (!(d >= 0 && d < vocab && d == floor(d))) {
            free(v);
            return rl_err(err, RL_EINVAL, "record turn %zu: %s[%zu]: expected a token id in 0..%d", k, what,
                          i, vocab - 1);
        }
        v[i++] = (int)d;
    }
    *out = v;
    *n = cnt;
    return 0;
}

static int floats_array(float **out, const cJSON *a, size_t want, size_t k, char *err)
{
    *out = NULL;
    if (!cJSON_IsArray(a) || (size_t)cJSON_GetArraySize(a) != want)
        return rl_err(err, RL_EPARSE, "record turn %zu: logprobs: expected %zu numbers, one per id", k, want);
    float *v = malloc((want ? want : 1) * sizeof *v);
    if (!v)
        return rl_err(err, RL_ENOMEM, "record: out of memory");
    size_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a)
    {
        if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble) || e->valuedouble > 0) {
            free(v);
            return rl_err(err, RL_EPARSE, "record turn %zu: logprobs[%zu]: expected a finite number <= 0", k, i);
        }
        v[i++] = (float)e->valuedouble;
    }
    *out = v;
    return 0;
}

/* Resolves turn k's context ids (full array, or a prefix reference). */
static int resolve_ctx(turn_ids *T, size_t k, const cJSON *ci, int vocab, size_t *budget, char *err)
{
    turn_ids *t = &T[k];
    int rc;
    if (cJSON_IsArray(ci)) {
        rc = ids_array(&t->ctx, &t->n_ctx, ci, vocab, "context_ids", k, err);
    } else if (cJSON_IsObject(ci)) {
        const cJSON *pt = cJSON_GetObjectItemCaseSensitive(ci, "prefix_turn");
        const cJSON *ap = cJSON_GetObjectItemCaseSensitive(ci, "append_ids");
        const cJSON *kp = cJSON_GetObjectItemCaseSensitive(ci, "keep");
        double p = cJSON_IsNumber(pt) ? pt->valuedouble : -1;
        if (!(p >= 0 && p < (double)k && p == floor(p)))
            return rl_err(err, RL_EPARSE, "record turn %zu: context_ids.prefix_turn: expected an earlier turn", k);
        const turn_ids *pr = &T[(size_t)p];
        /* {"keep": M}: the first M ids of that turn's context (it sampled
         * none); else its context and its sampled ids */
        double keep = cJSON_IsNumber(kp) ? kp->valuedouble : -1;
        if (kp && !(pr->ctx && keep >= 0 && keep <= (double)pr->n_ctx && keep == floor(keep)))
            return rl_err(err, RL_EPARSE, "record turn %zu: context_ids.keep: expected 0..%zu ids of turn %d's context",
                          k, pr->ctx ? pr->n_ctx : 0, (int)p);
        if (!kp && (!pr->ctx || !pr->ids))
            return rl_err(err, RL_EPARSE,
                          "record turn %zu: context_ids.prefix_turn %d: that turn has no context or sampled ids",
                          k, (int)p);
        size_t n_pre = kp ? (size_t)keep : pr->n_ctx, n_smp = kp ? 0 : pr->n_ids;
        int *app;
        size_t na;
        if ((rc = ids_array(&app, &na, ap, vocab, "context_ids.append_ids", k, err)) < 0)
            return rc;
        size_t n = n_pre + n_smp + na;
        if (n > RL_GRPO_RECORD_TOKENS_MAX) {
            free(app);
            return rl_err(err, RL_ELIMIT, "record turn %zu: context of %zu ids, expected at most %u", k, n,
                          RL_GRPO_RECORD_TOKENS_MAX);
        }
        t->ctx = malloc((n ? n : 1) * sizeof *t->ctx);
        if (!t->ctx) {
            free(app);
            return rl_err(err, RL_ENOMEM, "record: out of memory");
        }
        memcpy(t->ctx, pr->ctx, n_pre * sizeof *t->ctx);
        if (n_smp)
            memcpy(t->ctx + n_pre, pr->ids, n_smp * sizeof *t->ctx);
        if (na)
            memcpy(t->ctx + n_pre + n_smp, app, na * sizeof *t->ctx);
        t->n_ctx = n;
        free(app);
        rc = 0;
    } else {
        return rl_err(err, RL_EINVAL, "record turn %zu: no context_ids (not a record of a model policy)", k);
    }
    if (rc < 0)
        return rc;
    if (t->n_ctx > *budget)
        return rl_err(err, RL_ELIMIT, "record: contexts resolve to more than %u ids", RL_GRPO_RECORD_TOKENS_MAX);
    *budget -= t->n_ctx;
    return 0;
}

static int turn_parse(turn_ids *T, size_t k, const cJSON *turn, int vocab, size_t *budget, char *err)
{
    if (!cJSON_IsObject(turn))
        return rl_err(err, RL_EPARSE, "record turn %zu: expected an object", k);
    int rc = resolve_ctx(T, k, cJSON_GetObjectItemCaseSensitive(turn, "context_ids"), vocab, budget, err);
    if (rc < 0)
        return rc;
    const cJSON *ids = cJSON_GetObjectItemCaseSensitive(turn, "ids");
    if (!ids || cJSON_IsNull(ids))
        return 0; /* a turn without sampled ids trains nothing */
    turn_ids *t = &T[k];
    if ((rc = ids_array(&t->ids, &t->n_ids, ids, vocab, "ids", k, err)) < 0)
        return rc;
    if ((rc = floats_array(&t->lp, cJSON_GetObjectItemCaseSensitive(turn, "logprobs"), t->n_ids, k, err)) < 0)
        return rc;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(turn, "policy_version");
    if (v && !cJSON_IsNull(v)) {
        if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble != floor(v->valuedouble))
            return rl_err(err, RL_EPARSE, "record turn %zu: policy_version: expected an integer >= 0", k);
        t->version = (long)v->valuedouble;
    }
    return 0;
}

/* ---- the open sequence -------------------------------------------------------- */

static int open_push(open_seq *o, const int *tok, size_t n, int policy, const float *lp, long ver, char *err)
{
    /* parallel arrays: each grows from the same count by the same rule */
    size_t at = o->cap, ap = o->cap, al = o->cap, av = o->cap;
    if (VEC_GROW(o->tok, at, o->n + n, RL_GRPO_RECORD_TOKENS_MAX) < 0 ||
        VEC_GROW(o->pol, ap, o->n + n, RL_GRPO_RECORD_TOKENS_MAX) < 0 ||
        VEC_GROW(o->lp, al, o->n + n, RL_GRPO_RECORD_TOKENS_MAX) < 0 ||
        VEC_GROW(o->ver, av, o->n + n, RL_GRPO_RECORD_TOKENS_MAX) < 0)
        return rl_err(err, RL_ELIMIT, "record: a sequence of more than %u tokens, or out of memory",
                      RL_GRPO_RECORD_TOKENS_MAX);
    o->cap = at;
    for (size_t i = 0; i < n; i++) {
        o->tok[o->n + i] = tok[i];
        o->pol[o->n + i] = (unsigned char)policy;
        o->lp[o->n + i] = policy ? lp[i] : 0.0f;
        o->ver[o->n + i] = policy ? ver : 0;
    }
    o->n += n;
    return 0;
}

static int seqs_push(grpo_seqs *s, grpo_seq *q, char *err)
{
    if (VEC_GROW(s->v, s->cap, s->n + 1, RL_GRPO_SEQS_MAX) < 0)
        return rl_err(err, RL_ELIMIT, "samples: more than %u sequences, or out of memory", RL_GRPO_SEQS_MAX);
    s->v[s->n++] = *q;
    return 0;
}

/* Turns the open sequence into a training sequence (or counts it as
 * skipped) and empties it. */
static int open_emit(grpo_seqs *s, open_seq *o, int traj, int max_len, char *err)
{
    size_t n = o->n;
    o->n = 0;
    if (n == 0)
        return 0;
    if (max_len > 0 && n > (size_t)max_len) {
        s->skipped_long++;
        return 0;
    }
    int np = 0;
    for (size_t j = 1; j < n; j++)
        np += o->pol[j];
    if (np == 0) {
        s->skipped_empty++;
        return 0;
    }
    grpo_seq q = {0};
    q.n = (int)n;
    q.n_policy = np;
    q.traj = traj;
    q.turn = o->turn;
    q.tokens = malloc(n * sizeof *q.tokens);
    q.targets = malloc(n * sizeof *q.targets);
    q.behav = malloc(n * sizeof *q.behav);
    q.version = malloc(n * sizeof *q.version);
    if (!q.tokens || !q.targets || !q.behav || !q.version) {
        seq_free(&q);
        return rl_err(err, RL_ENOMEM, "samples: out of memory");
    }
    memcpy(q.tokens, o->tok, n * sizeof *q.tokens);
    for (size_t t = 0; t < n; t++) {
        int has = t + 1 < n && o->pol[t + 1];
        q.targets[t] = has ? o->tok[t + 1] : -1;
        q.behav[t] = has ? o->lp[t + 1] : 0.0f;
        q.version[t] = has ? o->ver[t + 1] : 0;
    }
    int rc = seqs_push(s, &q, err);
    if (rc < 0) {
        seq_free(&q);
        return rc;
    }
    s->tokens += n;
    s->policy_tokens += (size_t)np;
    return 0;
}

/* 1 if the open sequence is a prefix of ctx. */
static int extends(const open_seq *o, const int *ctx, size_t n)
{
    return o->n > 0 && o->n <= n && !memcmp(o->tok, ctx, o->n * sizeof *ctx);
}

int grpo_seqs_add_record(grpo_seqs *s, const cJSON *rec, int traj, int vocab, int max_len, char *err)
{
    const cJSON *turns = cJSON_GetObjectItemCaseSensitive(rec, "turns");
    if (!cJSON_IsArray(turns))
        return rl_err(err, RL_EPARSE, "record: field \"turns\": expected an array");
    size_t K = (size_t)cJSON_GetArraySize(turns);
    if (K > RL_GRPO_TURNS_MAX)
        return rl_err(err, RL_ELIMIT, "record: %zu turns, expected at most %d", K, RL_GRPO_TURNS_MAX);
    turn_ids *T = calloc(K ? K : 1, sizeof *T);
    if (!T)
        return rl_err(err, RL_ENOMEM, "record: out of memory");
    open_seq o = {0};
    size_t budget = RL_GRPO_RECORD_TOKENS_MAX;
    int rc = 0, any_ids = 0;
    size_t k = 0;
    const cJSON *turn;
    cJSON_ArrayForEach(turn, turns)
    {
        if ((rc = turn_parse(T, k, turn, vocab, &budget, err)) < 0)
            goto done;
        turn_ids *t = &T[k];
        if (t->ids) {
            any_ids = 1;
            if (!extends(&o, t->ctx, t->n_ctx)) {
                if ((rc = open_emit(s, &o, traj, max_len, err)) < 0)
                    goto done;
                o.turn = (int)k;
            }
            if ((rc = open_push(&o, t->ctx + o.n, t->n_ctx - o.n, 0, NULL, 0, err)) < 0 ||
                (rc = open_push(&o, t->ids, t->n_ids, 1, t->lp, t->version, err)) < 0)
                goto done;
        }
        k++;
    }
    if (!any_ids) {
        rc = rl_err(err, RL_EINVAL, "record: no turn has sampled ids (not a record of a model policy)");
        goto done;
    }
    rc = open_emit(s, &o, traj, max_len, err);
done:
    for (size_t i = 0; i < K; i++) {
        free(T[i].ctx);
        free(T[i].ids);
        free(T[i].lp);
    }
    free(T);
    free(o.tok);
    free(o.pol);
    free(o.lp);
    free(o.ver);
    return rc;
}

int grpo_seqs_add_json(grpo_seqs *s, const char *json, int traj, int vocab, int max_len, char *err)
{
    if (!json)
        return rl_err(err, RL_EINVAL, "record: missing");
    if (strlen(json) > RL_GRPO_RECORD_MAX)
        return rl_err(err, RL_ELIMIT, "record: longer than %u bytes", RL_GRPO_RECORD_MAX);
    cJSON *rec = cJSON_Parse(json);
    if (!rec)
        return rl_err(err, RL_EPARSE, "record: not valid JSON");
    int rc = grpo_seqs_add_record(s, rec, traj, vocab, max_len, err);
    cJSON_Delete(rec);
    return rc;
}
