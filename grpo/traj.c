/* traj.c - trajectory records to training samples (see traj.h). */
#include "grpo/traj.h"

#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "common/vec.h"
#include "harness/record.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void traj_opts_default(traj_opts *o)
{
    memset(o, 0, sizeof *o);
    o->min_reward = -INFINITY;
    o->use_ids = 1;
}

void traj_set_init(traj_set *s) { memset(s, 0, sizeof *s); }

void traj_sample_dispose(traj_sample *x)
{
    free(x->tokens);
    free(x->mask);
    free(x->behav_logp);
    free(x->task);
    free(x->group);
    free(x->policy);
}

void traj_set_dispose(traj_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        traj_sample_dispose(&s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* ---- a sequence under construction ---------------------------------------- */

typedef struct seq {
    int32_t *tok;
    unsigned char *mask;
    float *lp;
    size_t n, cap;
} seq;

static void seq_free(seq *q)
{
    free(q->tok);
    free(q->mask);
    free(q->lp);
    memset(q, 0, sizeof *q);
}

static int seq_reserve(seq *q, size_t more, const char *where, char *err)
{
    if (q->n + more <= q->cap)
        return 0;
    if (q->n + more > RL_TRAJ_TOKENS_MAX)
        return rl_err(err, RL_ELIMIT, "%s: sequence of more than %u tokens", where, RL_TRAJ_TOKENS_MAX);
    /* parallel arrays: each grows from the same count by the same rule */
    size_t at = q->cap, am = q->cap, al = q->cap;
    if (VEC_GROW(q->tok, at, q->n + more, RL_TRAJ_TOKENS_MAX) < 0 ||
        VEC_GROW(q->mask, am, q->n + more, RL_TRAJ_TOKENS_MAX) < 0 ||
        VEC_GROW(q->lp, al, q->n + more, RL_TRAJ_TOKENS_MAX) < 0)
        return rl_err(err, RL_ENOMEM, "%s: out of memory", where);
    q->cap = at;
    return 0;
}

/* Appends ids with one mask value; logprobs may be NULL (NaN). */
static int seq_push(seq *q, const int32_t *ids, const float *lp, size_t n, int mask, const char *where,
                    char *err)
{
    int rc = seq_reserve(q, n, where, err);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        q->tok[q->n + i] = ids[i];
        q->mask[q->n + i] = (unsigned char)mask;
        q->lp[q->n + i] = lp && mask ? lp[i] : NAN;
    }
    q->n += n;
    return 0;
}

static int seq_encode(seq *q, const tok_t *tok, const char *text, size_t len, tok_mode mode, int mask,
                      const char *where, char *err)
{
    if (!len)
        return 0;
    int32_t *ids = NULL;
    size_t n = 0;
    char terr[RL_ERR_MAX];
    if (tok_encode(&ids, &n, tok, text, len, mode, terr) < 0)
        return rl_err(err, RL_EINVAL, "%s: %s", where, terr);
    int rc = seq_push(q, ids, NULL, n, mask, where, err);
    free(ids);
    return rc;
}

/* ---- reading the record ----------------------------------------------------- */

typedef struct rturn {
    const char *text;      /* context "text" form, or NULL */
    size_t text_len;
    int prefix;            /* context {"prefix_turn"}: that turn, else -1 */
    const char *append;
    size_t append_len;
    const char *gen;
    size_t gen_len;
    const cJSON *ctx_ids;  /* context_ids as a full array, or NULL */
    int ids_prefix;        /* context_ids {"prefix_turn"}: that turn, else -1 */
    const cJSON *append_ids;
    const cJSON *ids, *logprobs;
    int truncated;
    int untrained;         /* mask_failed and a tool call of this turn failed */
} rturn;

static const cJSON *item(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

static int get_prefix(const cJSON *o, size_t k)
{
    const cJSON *p = item(o, "prefix_turn");
    if (!cJSON_IsNumber(p) || p->valuedouble != (double)(long)p->valuedouble)
        return -2;
    /* the harness always chains to the previous turn; anything else is
     * not a record it wrote */
    return p->valuedouble == (double)k - 1 ? (int)k - 1 : -2;
}

static int read_turn(rturn *t, const cJSON *j, size_t k, const char *where, char *err)
{
    memset(t, 0, sizeof *t);
    t->prefix = t->ids_prefix = -1;
    const cJSON *ctx = item(j, "context"), *g = item(j, "generated");
    if (!cJSON_IsObject(ctx) || !cJSON_IsString(g))
        return rl_err(err, RL_EPARSE, "%s: turn %zu: expected \"context\" (object) and \"generated\" (string)", where, k);
    t->gen = g->valuestring;
    t->gen_len = strlen(g->valuestring);
    const cJSON *tx = item(ctx, "text");
    if (cJSON_IsString(tx)) {
        t->text = tx->valuestring;
        t->text_len = strlen(tx->valuestring);
    } else {
        const cJSON *ap = item(ctx, "append");
        t->prefix = get_prefix(ctx, k);
        if (t->prefix < 0 || !cJSON_IsString(ap))
            return rl_err(err, RL_EPARSE,
                          "%s: turn %zu: context: expected {\"text\"} or {\"prefix_turn\": %zu, \"append\"}", where, k,
                          k ? k - 1 : 0);
        t->append = ap->valuestring;
        t->append_len = strlen(ap->valuestring);
    }
    const cJSON *ci = item(j, "context_ids");
    if (cJSON_IsArray(ci)) {
        t->ctx_ids = ci;
    } else if (cJSON_IsObject(ci)) {
        t->ids_prefix = get_prefix(ci, k);
        t->append_ids = item(ci, "append_ids");
        if (t->ids_prefix < 0 || !cJSON_IsArray(t->append_ids))
            return rl_err(err, RL_EPARSE,
                          "%s: turn %zu: context_ids: expected an array or {\"prefix_turn\": %zu, \"append_ids\"}", where,
                          k, k ? k - 1 : 0);
    } else if (ci && !cJSON_IsNull(ci)) {
        return rl_err(err, RL_EPARSE, "%s: turn %zu: context_ids: expected an array or an object", where, k);
    }
    t->ids = item(j, "ids");
    t->logprobs = item(j, "logprobs");
    if (t->ids && cJSON_IsNull(t->ids))
        t->ids = NULL;
    if (t->ids && !cJSON_IsArray(t->ids))
        return rl_err(err, RL_EPARSE, "%s: turn %zu: ids: expected an array", where, k);
    if (t->logprobs && cJSON_IsNull(t->logprobs))
        t->logprobs = NULL;
    if (t->logprobs && (!cJSON_IsArray(t->logprobs) || !t->ids ||
                        cJSON_GetArraySize(t->logprobs) != cJSON_GetArraySize(t->ids)))
        return rl_err(err, RL_EPARSE, "%s: turn %zu: logprobs: expected an array as long as ids", where, k);
    t->truncated = cJSON_IsTrue(item(j, "truncated"));
    return 0;
}

/* A JSON array of token ids into a new int32 array. */
static int ids_from_json(int32_t **out, size_t *n, const cJSON *a, int vocab, const char *what, const char *where,
                         char *err)
{
    *out = NULL;
    *n = 0;
    size_t cnt = (size_t)cJSON_GetArraySize(a);
    if (cnt > RL_TRAJ_TOKENS_MAX)
        return rl_err(err, RL_ELIMIT, "%s: %s: more than %u ids", where, what, RL_TRAJ_TOKENS_MAX);
    int32_t *v = malloc((cnt ? cnt : 1) * sizeof *v);
    if (!v)
        return rl_err(err, RL_ENOMEM, "%s: out of memory", where);
    size_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a)
    {
        double d = cJSON_IsNumber(e) ? e->valuedouble : -1;
        if (!(d >= 0 && d < vocab) || d != (double)(int32_t)d) {
            free(v);
            return rl_err(err, RL_EPARSE, "%s: %s[%zu]: expected a token id in 0..%d", where, what, i, vocab - 1);
        }
        v[i++] = (int32_t)d;
    }
    *out = v;
    *n = i;
    return 0;
}

static int floats_from_json(float **out, const cJSON *a, const char *where, char *err)
{
    size_t cnt = (size_t)cJSON_GetArraySize(a), i = 0;
    float *v = malloc((cnt ? cnt : 1) * sizeof *v);
    if (!v)
        return rl_err(err, RL_ENOMEM, "%s: out of memory", where);
    const cJSON *e;
    cJSON_ArrayForEach(e, a)
    {
        if (!cJSON_IsNumber(e) || !(e->valuedouble <= 0)) {
            free(v);
            return rl_err(err, RL_EPARSE, "%s: logprobs[%zu]: expected a number <= 0", where, i);
        }
        v[i++] = (float)e->valuedouble;
    }
    *out = v;
    return 0;
}

/* Appends a JSON id array with one mask value (and logprobs if given). */
static int push_json_ids(seq *q, const cJSON *ids, const cJSON *lps, int mask, int vocab, const char *what,
                         const char *where, char *err)
{
    int32_t *v;
    size_t n;
    float *lp = NULL;
    int rc = ids_from_json(&v, &n, ids, vocab, what, where, err);
    if (rc < 0)
        return rc;
    if (lps && (rc = floats_from_json(&lp, lps, where, err)) < 0) {
        free(v);
        return rc;
    }
    rc = seq_push(q, v, lp, n, mask, where, err);
    free(v);
    free(lp);
    return rc;
}

/* ---- the text path: tokenize segments like the harness ---------------------- */

/* Encodes a context segment by segment (the walker has checked that they
 * cover it): template and assistant segments may hold special tokens,
 * everything else is plain bytes. t: the turns whose assistant segments
 * are trained on (keep), where turn j's own start at byte start[j] (its
 * context's length: its reply and the next turn's appended text follow),
 * unless it is marked untrained; NULL: they are history (drop). */
static int encode_context(seq *q, const tok_t *tok, const char *text, const rec_seg *segs, size_t nsegs,
                          const rturn *t, const size_t *start, size_t k, const char *where, char *err)
{
    size_t j = 0;
    for (size_t i = 0; i < nsegs; i++) {
        size_t at = segs[i].off, n = segs[i].len;
        tpl_origin o = segs[i].origin;
        while (t && j + 1 < k && start[j + 1] <= at)
            j++;
        int train = o == TPL_ASSISTANT && t && !(j < k && at >= start[j] && t[j].untrained);
        tok_mode mode = o == TPL_ASSISTANT || o == TPL_TEMPLATE ? TOK_SPECIAL_ALLOW : TOK_SPECIAL_PLAIN;
        int rc = seq_encode(q, tok, text + at, n, mode, train, where, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* The generated text of a turn and, unless it was cut at a length limit,
 * the stop token the policy wrote: all policy tokens. */
static int encode_generated(seq *q, const tok_t *tok, const rturn *t, const char *where, char *err)
{
    int rc = seq_encode(q, tok, t->gen, t->gen_len, TOK_SPECIAL_ALLOW, !t->untrained, where, err);
    if (rc < 0 || t->truncated)
        return rc;
    int32_t end = tok_special_id(tok, "<|im_end|>");
    if (end < 0)
        return rl_err(err, RL_EINVAL, "%s: the tokenizer has no <|im_end|> token", where);
    return seq_push(q, &end, NULL, 1, !t->untrained, where, err);
}

/* The recorded context ids of a turn (rebuilt by the walker) must be
 * what we encoded. */
static int check_same(const seq *q, size_t from, const int32_t *v, size_t n, size_t k, const char *where, char *err)
{
    size_t have = q->n - from, i = 0;
    while (i < n && i < have && v[i] == q->tok[from + i])
        i++;
    if (i == n && n == have)
        return 0;
    return rl_err(err, RL_EINVAL,
                  "%s: turn %zu: the recorded context ids differ from this tokenizer's encoding at token %zu "
                  "(%zu recorded, %zu encoded): not the tokenizer the record was made with",
                  where, k, i, n, have);
}

/* ---- building samples ------------------------------------------------------- */

typedef struct rec_info {
    double reward;
    const char *task, *key, *policy;
    double temperature;
    uint64_t seed;
    int n_turns;
    size_t index;
} rec_info;

static char *dup_or_empty(const char *s) { return strdup(s ? s : ""); }

/* Cuts, checks and stores a finished sequence (ownership moves to s). */
static int finish_sample(traj_set *s, seq *q, const rec_info *ri, int turn, int from_ids, const traj_opts *o,
                         const char *where, char *err)
{
    size_t first = q->n, n_policy = 0;
    for (size_t i = 0; i < q->n; i++)
        if (q->mask[i]) {
            n_policy++;
            if (first == q->n)
                first = i;
        }
    /* the first token is never predicted: a policy token there is useless */
    if (first == 0) {
        q->mask[0] = 0;
        q->lp[0] = NAN;
        n_policy--;
    }
    if (!n_policy) {
        s->st.skipped_empty++;
        seq_free(q);
        return 0;
    }
    size_t cut = 0;
    if (o->max_len && q->n > o->max_len) {
        cut = q->n - o->max_len;
        /* the token before the first policy token must stay: it predicts it */
        if (cut >= first) {
            s->st.skipped_long++;
            seq_free(q);
            return 0;
        }
        memmove(q->tok, q->tok + cut, (q->n - cut) * sizeof *q->tok);
        memmove(q->mask, q->mask + cut, q->n - cut);
        memmove(q->lp, q->lp + cut, (q->n - cut) * sizeof *q->lp);
        q->n -= cut;
        s->st.cut++;
    }
    if (s->n >= RL_TRAJ_SAMPLES_MAX) {
        seq_free(q);
        return rl_err(err, RL_ELIMIT, "%s: more than %u samples", where, RL_TRAJ_SAMPLES_MAX);
    }
    if (VEC_GROW(s->v, s->cap, s->n + 1, RL_TRAJ_SAMPLES_MAX) < 0) {
        seq_free(q);
        return rl_err(err, RL_ENOMEM, "%s: out of memory", where);
    }
    traj_sample *x = &s->v[s->n];
    memset(x, 0, sizeof *x);
    x->tokens = q->tok;
    x->mask = q->mask;
    x->behav_logp = q->lp;
    x->n = q->n;
    x->n_policy = n_policy;
    x->cut = cut;
    x->reward = ri->reward;
    x->task = dup_or_empty(ri->task);
    x->policy = dup_or_empty(ri->policy);
    x->temperature = ri->temperature;
    x->seed = ri->seed;
    x->turn = turn;
    x->n_turns = ri->n_turns;
    x->record = ri->index;
    /* group: the key without its seed (task + config digest or run) */
    const char *key = ri->key ? ri->key : ri->task;
    const char *sd = key ? strstr(key, "#seed=") : NULL;
    x->group = key ? strndup(key, sd ? (size_t)(sd - key) : strlen(key)) : strdup("");
    memset(q, 0, sizeof *q);
    if (!x->task || !x->policy || !x->group) {
        traj_sample_dispose(x);
        return rl_err(err, RL_ENOMEM, "%s: out of memory", where);
    }
    s->n++;
    s->st.samples++;
    s->st.from_ids += from_ids != 0;
    s->st.tokens += x->n;
    s->st.policy_tokens += x->n_policy;
    return 0;
}

static int vocab_of(const traj_opts *o) { return o->tok ? tok_vocab_size(o->tok) : RL_TOK_VOCAB_MAX; }

static int need_tok(const traj_opts *o, const char *where, char *err)
{
    return o->tok ? 0
                  : rl_err(err, RL_EINVAL, "%s: a record without token ids needs a tokenizer to build samples", where);
}

/* keep: every turn has ids and context ids chained to the previous turn */
static int keep_has_ids(const rturn *t, size_t nt)
{
    for (size_t k = 0; k < nt; k++) {
        if (!t[k].ids || !t[k].logprobs)
            return 0;
        if (k == 0 ? !t[k].ctx_ids : t[k].ids_prefix != (int)k - 1)
            return 0;
    }
    return 1;
}

static int build_keep(traj_set *s, const cJSON *rec, const rturn *t, size_t nt, const rec_info *ri,
                      const traj_opts *o, const char *where, char *err)
{
    seq q = {0};
    int rc = 0, vocab = vocab_of(o);
    /* every turn's context, segments and ids are checked, whichever path
     * builds the sample; the walk ends on the last turn's */
    rec_walk w;
    size_t *start = malloc(nt * sizeof *start); /* where each turn's context ends: its reply starts */
    if (!start)
        return rl_err(err, RL_ENOMEM, "%s: out of memory", where);
    if ((rc = rec_walk_init(&w, rec, where, vocab, err)) < 0) {
        free(start);
        return rc;
    }
    size_t k = 0;
    while (k < nt && (rc = rec_walk_next(&w, err)) == 1)
        start[k++] = w.context_len;
    if (rc < 0)
        goto out;
    if (o->use_ids && keep_has_ids(t, nt)) {
        for (k = 0; k < nt && rc >= 0; k++) {
            rc = k == 0 ? push_json_ids(&q, t[0].ctx_ids, NULL, 0, vocab, "context_ids", where, err)
                        : push_json_ids(&q, t[k].append_ids, NULL, 0, vocab, "append_ids", where, err);
            if (rc == 0)
                rc = push_json_ids(&q, t[k].ids, t[k].logprobs, !t[k].untrained, vocab, "ids", where, err);
        }
        if (rc >= 0)
            rc = finish_sample(s, &q, ri, -1, 1, o, where, err);
        goto out;
    }
    if ((rc = need_tok(o, where, err)) < 0)
        goto out;
    rc = encode_context(&q, o->tok, w.context, w.segs, w.nsegs, t, start, nt - 1, where, err);
    if (rc == 0 && w.has_ctx_ids && w.ctx_ids_encoded)
        rc = check_same(&q, 0, w.ctx_ids, w.n_ctx_ids, nt - 1, where, err);
    if (rc == 0)
        rc = encode_generated(&q, o->tok, &t[nt - 1], where, err);
    if (rc == 0)
        rc = finish_sample(s, &q, ri, -1, 0, o, where, err);
out:
    if (rc < 0)
        seq_free(&q);
    rec_walk_dispose(&w);
    free(start);
    return rc < 0 ? rc : 0;
}

static int build_drop(traj_set *s, const cJSON *rec, const rturn *t, size_t nt, const rec_info *ri,
                      const traj_opts *o, const char *where, char *err)
{
    int vocab = vocab_of(o);
    rec_walk w;
    int rc = rec_walk_init(&w, rec, where, vocab, err);
    for (size_t k = 0; rc == 0 && k < nt; k++) {
        const rturn *u = &t[k];
        seq q = {0};
        int from_ids = 0;
        if ((rc = rec_walk_next(&w, err)) < 0)
            break;
        rc = 0;
        if (u->untrained)
            continue; /* its sample would have no policy token */
        if (!u->text) {
            rc = rl_err(err, RL_EPARSE, "%s: turn %zu: history drop: expected the context as {\"text\"}", where, k);
            break;
        }
        if (o->use_ids && u->ctx_ids) {
            rc = push_json_ids(&q, u->ctx_ids, NULL, 0, vocab, "context_ids", where, err);
        } else if ((rc = need_tok(o, where, err)) == 0) {
            rc = encode_context(&q, o->tok, w.context, w.segs, w.nsegs, NULL, NULL, k, where, err);
            if (rc == 0 && w.has_ctx_ids && w.ctx_ids_encoded)
                rc = check_same(&q, 0, w.ctx_ids, w.n_ctx_ids, k, where, err);
        }
        if (rc == 0 && o->use_ids && u->ids && u->logprobs) {
            rc = push_json_ids(&q, u->ids, u->logprobs, 1, vocab, "ids", where, err);
            from_ids = 1;
        } else if (rc == 0 && (rc = need_tok(o, where, err)) == 0) {
            rc = encode_generated(&q, o->tok, u, where, err);
        }
        if (rc < 0) {
            seq_free(&q);
            break;
        }
        rc = finish_sample(s, &q, ri, (int)k, from_ids, o, where, err);
    }
    rec_walk_dispose(&w);
    return rc;
}

/* Whether a tool call of the turn failed (its record says "ok": false). */
static int turn_failed(const cJSON *turn)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, item(turn, "tool_calls"))
    {
        if (cJSON_IsFalse(item(c, "ok")))
            return 1;
    }
    return 0;
}

int traj_add_record(traj_set *s, const cJSON *rec, size_t index, const traj_opts *o, const char *where, char *err)
{
    if (!cJSON_IsObject(rec))
        return rl_err(err, RL_EPARSE, "%s: expected a trajectory record (JSON object)", where);
    s->st.records++;
    const cJSON *turns = item(rec, "turns"), *cfg = item(rec, "config"), *rw = item(rec, "reward");
    const cJSON *task = item(rec, "task"), *key = item(rec, "key");
    if (cJSON_IsNull(rw)) {
        s->st.skipped_empty++; /* the policy could not answer: no outcome */
        return 0;
    }
    if (!cJSON_IsArray(turns) || !cJSON_IsNumber(rw) || !cJSON_IsString(task))
        return rl_err(err, RL_EPARSE, "%s: expected \"task\" (string), \"reward\" (number) and \"turns\" (array)", where);
    if (rw->valuedouble < o->min_reward) {
        s->st.skipped_reward++;
        return 0;
    }
    size_t nt = (size_t)cJSON_GetArraySize(turns);
    if (nt == 0) {
        s->st.skipped_empty++; /* an error record: nothing was generated */
        return 0;
    }
    if (nt > RL_TRAJ_TURNS_MAX)
        return rl_err(err, RL_ELIMIT, "%s: %zu turns, at most %d", where, nt, RL_TRAJ_TURNS_MAX);
    const cJSON *hist = item(cfg, "history"), *pol = item(cfg, "policy"), *temp = item(cfg, "temperature");
    const cJSON *seed = item(cfg, "seed");
    if (!cJSON_IsString(hist) || (strcmp(hist->valuestring, "keep") && strcmp(hist->valuestring, "drop")))
        return rl_err(err, RL_EPARSE, "%s: config.history: expected \"keep\" or \"drop\"", where);
    rec_info ri = {.reward = rw->valuedouble,
                   .task = task->valuestring,
                   .key = cJSON_IsString(key) ? key->valuestring : NULL,
                   .policy = cJSON_IsString(pol) ? pol->valuestring : NULL,
                   .temperature = cJSON_IsNumber(temp) ? temp->valuedouble : 1.0,
                   .seed = cJSON_IsNumber(seed) && seed->valuedouble >= 0 ? (uint64_t)seed->valuedouble : 0,
                   .n_turns = (int)nt,
                   .index = index};
    rturn *t = calloc(nt, sizeof *t);
    if (!t)
        return rl_err(err, RL_ENOMEM, "%s: out of memory", where);
    int rc = 0;
    size_t k = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, turns)
    {
        if ((rc = read_turn(&t[k], j, k, where, err)) < 0)
            break;
        if (o->mask_failed && turn_failed(j)) {
            t[k].untrained = 1;
            s->st.masked_turns++;
        }
        if (k == 0 && !t[0].text) {
            rc = rl_err(err, RL_EPARSE, "%s: turn 0: expected the context as {\"text\"}", where);
            break;
        }
        k++;
    }
    if (rc == 0)
        rc = !strcmp(hist->valuestring, "keep") ? build_keep(s, rec, t, nt, &ri, o, where, err)
                                                : build_drop(s, rec, t, nt, &ri, o, where, err);
    free(t);
    return rc;
}

/* Reads one line into b (without its newline). 1: a line, 0: end of file,
 * RL_ELIMIT: longer than the cap (the rest is not read into memory). */
static int read_line(FILE *f, buf_t *b)
{
    buf_clear(b);
    char chunk[1 << 16];
    while (fgets(chunk, sizeof chunk, f)) {
        size_t n = strlen(chunk);
        int eol = n && chunk[n - 1] == '\n';
        if (buf_append(b, chunk, n - eol) < 0)
            return RL_ELIMIT;
        if (eol)
            return 1;
    }
    return b->len ? 1 : 0;
}

int traj_load_file(traj_set *s, const char *path, const traj_opts *o, char *err)
{
    FILE *f;
    int orc = fs_fopen_read(&f, path, 0, err);
    if (orc < 0)
        return orc;
    buf_t line;
    buf_init(&line, RL_TRAJ_LINE_MAX);
    size_t lineno = 0;
    int rc = 0, got;
    while (rc == 0 && (got = read_line(f, &line)) != 0) {
        lineno++;
        char where[512];
        snprintf(where, sizeof where, "%.400s:%zu", path, lineno);
        if (got < 0) {
            rc = rl_err(err, RL_ELIMIT, "%s: record longer than %u bytes", where, RL_TRAJ_LINE_MAX);
            break;
        }
        const char *p = buf_str(&line);
        if (!p[strspn(p, " \t\r")])
            continue;
        cJSON *rec = cJSON_ParseWithLength(line.data, line.len);
        if (!rec) {
            rc = rl_err(err, RL_EPARSE, "%s: not a JSON record (expected one trajectory object per line)", where);
            break;
        }
        rc = traj_add_record(s, rec, s->st.records, o, where, err);
        cJSON_Delete(rec);
    }
    if (rc == 0 && ferror(f))
        rc = rl_err(err, RL_EIO, "%s: read error", path);
    buf_dispose(&line);
    fclose(f);
    return rc;
}

size_t traj_sample_targets(const traj_sample *s, int *tokens, int *targets, size_t T)
{
    size_t set = 0;
    for (size_t t = 0; t < T; t++) {
        tokens[t] = t < s->n ? s->tokens[t] : 0;
        int m = t + 1 < s->n && s->mask[t + 1];
        targets[t] = m ? s->tokens[t + 1] : -1;
        set += m;
    }
    return set;
}
