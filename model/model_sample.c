/* model_sample.c - sampling with a KV cache, and teacher-forced scoring.
 *
 * Inference runs "rows": each row is one token of one sequence at a known
 * position. Prefill feeds every prompt token as a row (in chunks); each
 * decoding step feeds one row per unfinished sequence. A row's key and
 * value vectors go into its sequence's cache, and its attention reads the
 * cache up to its own position, so prompts of different lengths decode
 * together in one batch of matrix products.
 *
 * Logprobs of sampled tokens come from the same ops_logp_forward as training
 * and scoring (log softmax of logits / temperature), so sampling, scoring
 * and the training forward agree to rounding.
 */
#include "model/model.h"
#include "model/model_ops.h"

#include "common/err.h"
#include "common/limits.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Rows per prefill chunk: large enough for efficient sgemm, small enough
 * that the workspace stays a few tens of MB for the default model. */
#define PREFILL_ROWS 1024
/* Tokens per teacher-forced scoring forward (B * T_max): the size of a
 * training batch, so scoring needs no more activation memory than training
 * (a single longer sequence is scored alone). */
#define SCORE_TOKENS 4096

/* Keys are stored transposed (n_layer x n_kv x head_dim x cap): a decoding
 * step then scores a query against many keys with vertical multiply-adds
 * (ops_attn_decode), and prefill multiplies by them without a transpose.
 * Values are rows (n_layer x cap x dkv). */
typedef struct kv_cache {
    int cap;      /* positions held */
    float *k, *v;
} kv_cache;

struct model_kvset {
    int n, layers, dkv, cap;
    kv_cache *c;          /* k, v NULL until first used */
    int **ids;            /* the tokens whose keys and values cache i holds */
    int *len;
    unsigned long *stamp; /* last use, for least-recently-used eviction */
    unsigned long clock;
    uint64_t weights;     /* fingerprint of the weights the caches hold */
    long reused;
};

typedef struct run {
    int seq, r0, r1; /* rows r0..r1-1 belong to seq, positions ascending */
} run;

typedef struct infer_ws {
    int cap_rows, cap_ctx;
    float *x, *ln, *q, *k, *v, *att, *gate, *up, *rstd, *h, *logits, *lse, *lp, *fused;
    float *att_scratch;
    int *pos, *seq, *tok, *out_rows, *no_target;
    run *runs;
} infer_ws;

void model_sample_opts_default(model_sample_opts *o)
{
    memset(o, 0, sizeof *o);
    o->temperature = 1.0f;
    o->top_p = 1.0f;
    o->max_new = 256;
}

void model_sample_out_dispose(model_sample_out *o)
{
    if (!o)
        return;
    free(o->tokens);
    free(o->logprobs);
    o->tokens = NULL;
    o->logprobs = NULL;
    o->n = 0;
}

static void ws_free(infer_ws *w)
{
    free(w->x);
    free(w->ln);
    free(w->q);
    free(w->k);
    free(w->v);
    free(w->att);
    free(w->gate);
    free(w->up);
    free(w->rstd);
    free(w->h);
    free(w->logits);
    free(w->lse);
    free(w->lp);
    free(w->fused);
    free(w->att_scratch);
    free(w->pos);
    free(w->seq);
    free(w->tok);
    free(w->out_rows);
    free(w->no_target);
    free(w->runs);
    memset(w, 0, sizeof *w);
}

static int ws_alloc(infer_ws *w, const model *m, int rows, int ctx, char *err)
{
    const model_config *c = &m->cfg;
    size_t R = (size_t)rows, d = (size_t)c->d_model, dq = (size_t)m->head_dim * c->n_head;
    size_t dkv = (size_t)m->head_dim * c->n_kv_head, ff = (size_t)c->d_ff;
    memset(w, 0, sizeof *w);
    w->cap_rows = rows;
    w->cap_ctx = ctx;
    w->x = malloc(R * d * sizeof(float));
    w->ln = malloc(R * d * sizeof(float));
    w->q = malloc(R * dq * sizeof(float));
    w->k = malloc(R * dkv * sizeof(float));
    w->v = malloc(R * dkv * sizeof(float));
    w->att = malloc(R * dq * sizeof(float));
    w->gate = malloc(R * ff * sizeof(float));
    w->up = malloc(R * ff * sizeof(float));
    w->rstd = malloc(R * (size_t)c->n_head * sizeof(float));
    w->h = malloc(R * d * sizeof(float));
    w->logits = malloc(R * (size_t)c->vocab * sizeof(float));
    w->lse = malloc(R * sizeof(float));
    w->lp = malloc(R * sizeof(float));
    w->fused = malloc(R * (dq + 2 * dkv > 2 * ff ? dq + 2 * dkv : 2 * ff) * sizeof(float));
    w->att_scratch =
        malloc((size_t)mpool_threads(m->pool) * ATT_BQ * (size_t)ctx * sizeof(float));
    w->pos = malloc(R * sizeof(int));
    w->seq = malloc(R * sizeof(int));
    w->tok = malloc(R * sizeof(int));
    w->out_rows = malloc(R * sizeof(int));
    w->no_target = malloc(R * sizeof(int));
    w->runs = malloc(R * sizeof(run));
    if (!w->x || !w->ln || !w->q || !w->k || !w->v || !w->att || !w->gate || !w->up || !w->rstd ||
        !w->h || !w->logits || !w->lse || !w->lp || !w->fused || !w->att_scratch || !w->pos || !w->seq ||
        !w->tok || !w->out_rows || !w->no_target || !w->runs) {
        ws_free(w);
        return rl_err(err, RL_ENOMEM, "model_sample: out of memory for %d rows", rows);
    }
    for (int i = 0; i < rows; i++)
        w->no_target[i] = -1;
    return 0;
}

/* ---- attention against the cache ------------------------------------------ */

typedef struct iatt_ctx {
    const model *m;
    const infer_ws *w;
    const kv_cache *cache;
    int layer, n_runs;
} iatt_ctx;

static void iatt_task(void *vctx, int task, int thread)
{
    const iatt_ctx *c = vctx;
    const model *m = c->m;
    const infer_ws *w = c->w;
    int hd = m->head_dim, nh = m->cfg.n_head, nkv = m->cfg.n_kv_head, hpg = nh / nkv;
    int qs = hd * nh, ks = hd * nkv;
    const run *r = &w->runs[task / nkv];
    int g = task % nkv;
    const kv_cache *kc = &c->cache[r->seq];
    const float *Kt = kc->k + ((size_t)c->layer * nkv + g) * hd * kc->cap;
    const float *V = kc->v + (size_t)c->layer * kc->cap * ks + (size_t)g * hd;
    float *S = w->att_scratch + (size_t)thread * ATT_BQ * w->cap_ctx;
    float scale = 1.0f / sqrtf((float)hd);
    if (r->r1 - r->r0 < 4 && hpg <= ATT_BQ) {
        /* decoding: a row or two per sequence; the query heads sharing
         * this kv head sit side by side in the row */
        for (int i = r->r0; i < r->r1; i++) {
            size_t off = (size_t)i * qs + (size_t)g * hpg * hd;
            ops_attn_decode(w->att + off, w->q + off, Kt, kc->cap, V, ks, w->pos[i] + 1, hd, hpg, scale, S);
        }
        return;
    }
    for (int h = g * hpg; h < (g + 1) * hpg; h++)
        for (int i0 = r->r0; i0 < r->r1; i0 += ATT_BQ) {
            int i1 = i0 + ATT_BQ < r->r1 ? i0 + ATT_BQ : r->r1, n = i1 - i0;
            int nk = w->pos[i1 - 1] + 1;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, nk, hd, scale,
                        w->q + (size_t)i0 * qs + (size_t)h * hd, qs, Kt, kc->cap, 0.0f, S, nk);
            for (int i = 0; i < n; i++)
                ops_softmax_row(S + (size_t)i * nk, w->pos[i0 + i] + 1, nk);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, hd, nk, 1.0f, S, nk, V, ks,
                        0.0f, w->att + (size_t)i0 * qs + (size_t)h * hd, qs);
        }
}

/* Runs n rows (w->seq, w->pos, w->tok) through the model, writing their
 * keys and values into the caches; leaves in w->logits the tempered logits
 * (and w->lse their logsumexp) of the rows listed in w->out_rows[0..n_out). */
static void infer_rows(model *m, infer_ws *w, kv_cache *cache, int n, int n_out, float temp,
                       const float *temps)
{
    const model_config *c = &m->cfg;
    int d = c->d_model, hd = m->head_dim, nh = c->n_head, nkv = c->n_kv_head, ff = c->d_ff;
    int dq = hd * nh, dkv = hd * nkv;
    mpool *p = m->pool;
    int n_runs = 0;
    for (int i = 0; i < n; i++) {
        if (i == 0 || w->seq[i] != w->seq[i - 1]) {
            w->runs[n_runs].seq = w->seq[i];
            w->runs[n_runs].r0 = i;
            n_runs++;
        }
        w->runs[n_runs - 1].r1 = i + 1;
    }
    ops_embed_forward_any(w->x, w->tok, m->wte, m->wte16, n, d);
    for (int l = 0; l < c->n_layer; l++) {
        const model_layer *W = &m->layer[l];
        const model_layer16 *W16 = &m->layer16[l];
        ops_rmsnorm_forward(p, w->ln, w->rstd, w->x, W->attn_norm, n, d, c->norm_eps);
        ops_linear_forward(p, w->fused, w->ln, W->wq, W16->wq, n, d, dq + 2 * dkv, 0.0f); /* q | k | v */
        if (c->qkv_bias)
            ops_bias_forward(w->fused, W->bq, n, dq + 2 * dkv);
        ops_cols_split(p, (float *const[]){w->q, w->k, w->v}, (const int[]){dq, dkv, dkv}, 3, w->fused, n);
        if (c->qk_norm) {
            ops_rmsnorm_forward(p, w->q, w->rstd, w->q, W->q_norm, n * nh, hd, c->norm_eps);
            ops_rmsnorm_forward(p, w->k, w->rstd, w->k, W->k_norm, n * nkv, hd, c->norm_eps);
        }
        ops_rope_forward(p, w->q, w->pos, m->rope_cos, m->rope_sin, n, nh, hd);
        ops_rope_forward(p, w->k, w->pos, m->rope_cos, m->rope_sin, n, nkv, hd);
        for (int i = 0; i < n; i++) {
            kv_cache *kc = &cache[w->seq[i]];
            size_t off = ((size_t)l * kc->cap + (size_t)w->pos[i]) * dkv;
            memcpy(kc->v + off, w->v + (size_t)i * dkv, (size_t)dkv * sizeof(float));
            float *kt = kc->k + (size_t)l * dkv * kc->cap + (size_t)w->pos[i];
            for (int e = 0; e < dkv; e++) /* e = g * hd + d: row e of the transposed keys */
                kt[(size_t)e * kc->cap] = w->k[(size_t)i * dkv + e];
        }
        iatt_ctx ac = {.m = m, .w = w, .cache = cache, .layer = l, .n_runs = n_runs};
        mpool_run(p, n_runs * nkv, iatt_task, &ac);
        ops_linear_forward(p, w->x, w->att, W->wo, W16->wo, n, dq, d, 1.0f);
        ops_rmsnorm_forward(p, w->ln, w->rstd, w->x, W->mlp_norm, n, d, c->norm_eps);
        ops_linear_forward(p, w->fused, w->ln, W->w_gate, W16->w_gate, n, d, 2 * ff, 0.0f); /* gate | up */
        ops_cols_split(p, (float *const[]){w->gate, w->up}, (const int[]){ff, ff}, 2, w->fused, n);
        ops_swiglu_forward(p, w->gate, w->gate, w->up, (size_t)n * ff);
        ops_linear_forward(p, w->x, w->gate, W->w_down, W16->w_down, n, ff, d, 1.0f);
    }
    if (n_out == 0)
        return;
    for (int j = 0; j < n_out; j++)
        memcpy(w->ln + (size_t)j * d, w->x + (size_t)w->out_rows[j] * d, (size_t)d * sizeof(float));
    ops_rmsnorm_forward(p, w->h, w->rstd, w->ln, m->final_norm, n_out, d, c->norm_eps);
    ops_linear_forward(p, w->logits, w->h, m->lm_head, m->lm_head16, n_out, d, c->vocab, 0.0f);
    model_mask_logits(m, w->logits, n_out);
    if (!temps) {
        ops_logp_forward(p, w->lp, NULL, w->lse, w->logits, w->no_target, n_out, c->vocab, temp);
        return;
    }
    /* a temperature per output row: one call per run of equal ones */
    for (int j0 = 0; j0 < n_out;) {
        int j1 = j0 + 1;
        while (j1 < n_out && temps[j1] == temps[j0])
            j1++;
        size_t V = (size_t)c->vocab;
        ops_logp_forward(p, w->lp + j0, NULL, w->lse + j0, w->logits + (size_t)j0 * V, w->no_target + j0,
                         j1 - j0, c->vocab, temps[j0]);
        j0 = j1;
    }
}

/* ---- choosing a token ------------------------------------------------------- */

/* Top-p threshold by radix selection on the probabilities' bit patterns
 * (non-negative floats order like their bits): three passes of 11, 11 and
 * 10 bits, each histogramming the probability mass of the tokens that
 * share the prefix chosen so far, walking buckets from the most likely
 * down until the mass reaches top_p. The result is the exact bit pattern
 * of the least likely kept token: the kept set is every token at least
 * that likely (ties included), i.e. the smallest set of most likely tokens
 * whose mass reaches top_p, found without sorting. *mass gets its mass. */
#define RADIX_BUCKETS MODEL_TOPP_SCRATCH

static uint32_t prob_key(float p)
{
    uint32_t k;
    memcpy(&k, &p, sizeof k);
    return k;
}

static uint32_t top_p_threshold(const float *prob, int V, float top_p, double *hist, double *mass)
{
    static const int shift[3] = {21, 10, 0};
    static const uint32_t width[3] = {0x7ff, 0x7ff, 0x3ff};
    uint32_t prefix = 0, pmask = 0;
    double above = 0.0; /* mass of tokens above the current prefix's range */
    for (int lv = 0; lv < 3; lv++) {
        memset(hist, 0, sizeof(double) * RADIX_BUCKETS);
        for (int j = 0; j < V; j++) {
            uint32_t k = prob_key(prob[j]);
            if ((k & pmask) == prefix)
                hist[(k >> shift[lv]) & width[lv]] += prob[j];
        }
        int b = (int)width[lv];
        while (b > 0 && above + hist[b] < top_p) {
            above += hist[b];
            b--;
        }
        prefix |= (uint32_t)b << shift[lv];
        pmask |= width[lv] << shift[lv];
        if (lv == 2)
            *mass = above + hist[b];
    }
    return prefix;
}

int model_draw_token(const float *prob, int V, float top_p, float u, double *hist)
{
    uint32_t lo = 0;
    double mass = 1.0;
    if (top_p < 1.0f)
        lo = top_p_threshold(prob, V, top_p, hist, &mass);
    double target = (double)u * mass, acc = 0.0;
    int last = -1;
    for (int j = 0; j < V; j++) {
        if (prob_key(prob[j]) < lo || prob[j] <= 0.0f)
            continue;
        acc += prob[j];
        last = j;
        if (acc > target)
            return j;
    }
    return last >= 0 ? last : 0; /* rounding left u*mass past the sum */
}

static int argmax(const float *x, int n)
{
    int best = 0;
    for (int j = 1; j < n; j++)
        if (x[j] > x[best])
            best = j;
    return best;
}

/* ---- model_sample ------------------------------------------------------------- */

/* ---- prefix caches --------------------------------------------------------- */

int model_kvset_new(model_kvset **out, const model *m, int n, char *err)
{
    *out = NULL;
    if (n < 1 || n > RL_MODEL_SAMPLE_BATCH_MAX)
        return rl_err(err, RL_EINVAL, "model_kvset: %d caches, expected 1..%d", n, RL_MODEL_SAMPLE_BATCH_MAX);
    model_kvset *s = calloc(1, sizeof *s);
    if (!s)
        return rl_err(err, RL_ENOMEM, "model_kvset: out of memory");
    s->n = n;
    s->layers = m->cfg.n_layer;
    s->dkv = m->head_dim * m->cfg.n_kv_head;
    s->cap = m->cfg.max_seq;
    s->c = calloc((size_t)n, sizeof *s->c);
    s->ids = calloc((size_t)n, sizeof *s->ids);
    s->len = calloc((size_t)n, sizeof *s->len);
    s->stamp = calloc((size_t)n, sizeof *s->stamp);
    if (!s->c || !s->ids || !s->len || !s->stamp) {
        model_kvset_free(s);
        return rl_err(err, RL_ENOMEM, "model_kvset: out of memory");
    }
    *out = s;
    return 0;
}

void model_kvset_free(model_kvset *s)
{
    if (!s)
        return;
    for (int i = 0; s->c && i < s->n; i++) {
        free(s->c[i].k);
        free(s->c[i].v);
        free(s->ids[i]);
    }
    free(s->c);
    free(s->ids);
    free(s->len);
    free(s->stamp);
    free(s);
}

long model_kvset_reused(const model_kvset *s) { return s ? s->reused : 0; }

/* Every parameter's bits, mixed: any optimizer step changes it. A few ms
 * for the default model, against seconds of sampling per call. */
static uint64_t weights_fingerprint(const model *m)
{
    const uint32_t *w = (const uint32_t *)(const void *)m->params;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)m->n_params;
    for (size_t i = 0; i < m->n_f32; i++)
        h = (h ^ w[i]) * 0x100000001b3ull + (h >> 29);
    for (size_t i = 0; i < m->n_bf16; i++)
        h = (h ^ m->wbf[i]) * 0x100000001b3ull + (h >> 29);
    return h;
}

static int common_prefix(const int *a, int na, const int *b, int nb)
{
    int n = na < nb ? na : nb, i = 0;
    while (i < n && a[i] == b[i])
        i++;
    return i;
}

/* Picks a cache for each prompt (a distinct one each): the longest cached
 * prefix first, else the least recently used. reuse[s] gets the prefix
 * length; the caches are allocated here. */
static int kvset_assign(model_kvset *set, const model *m, int *pick, int *reuse, const int *const *prompts,
                        const int *lens, int n_seq, char *err)
{
    if (n_seq > set->n)
        return rl_err(err, RL_EINVAL, "model_sample_cached: %d prompts, the set has %d caches", n_seq, set->n);
    if (set->layers != m->cfg.n_layer || set->dkv != m->head_dim * m->cfg.n_kv_head ||
        set->cap != m->cfg.max_seq)
        return rl_err(err, RL_EINVAL, "model_sample_cached: the cache set was made for another model shape");
    uint64_t fp = weights_fingerprint(m);
    if (fp != set->weights) { /* new weights: every cached key is stale */
        for (int i = 0; i < set->n; i++)
            set->len[i] = 0;
        set->weights = fp;
    }
    char taken[RL_MODEL_SAMPLE_BATCH_MAX] = {0};
    for (int s = 0; s < n_seq; s++) {
        int best = -1, best_len = 0;
        for (int i = 0; i < set->n; i++) {
            if (taken[i] || set->len[i] == 0)
                continue;
            int l = common_prefix(set->ids[i], set->len[i], prompts[s], lens[s]);
            if (l > best_len) {
                best = i;
                best_len = l;
            }
        }
        if (best < 0) { /* nothing to reuse: the least recently used cache */
            for (int i = 0; i < set->n; i++)
                if (!taken[i] && (best < 0 || set->stamp[i] < set->stamp[best]))
                    best = i;
            best_len = 0;
        }
        kv_cache *c = &set->c[best];
        if (!c->k) {
            size_t n = (size_t)set->layers * (size_t)set->cap * (size_t)set->dkv;
            c->k = malloc(n * sizeof(float));
            c->v = malloc(n * sizeof(float));
            set->ids[best] = malloc((size_t)set->cap * sizeof(int));
            if (!c->k || !c->v || !set->ids[best]) { /* all or nothing: a later call retries */
                free(c->k);
                free(c->v);
                free(set->ids[best]);
                c->k = c->v = NULL;
                set->ids[best] = NULL;
                return rl_err(err, RL_ENOMEM, "model_sample_cached: out of memory for a cache");
            }
            c->cap = set->cap;
        }
        taken[best] = 1;
        set->stamp[best] = ++set->clock;
        pick[s] = best;
        reuse[s] = best_len;
    }
    return 0;
}

static int check_sample_args(const model *m, const int *const *prompts, const int *lens,
                             int n_seq, const model_sample_opts *o, char *err)
{
    if (n_seq < 1 || n_seq > RL_MODEL_SAMPLE_BATCH_MAX)
        return rl_err(err, RL_EINVAL, "model_sample: %d sequences, expected 1..%d", n_seq,
                      RL_MODEL_SAMPLE_BATCH_MAX);
    if (o->max_new < 0 || o->n_stop < 0 || o->n_stop > RL_MODEL_STOP_IDS_MAX ||
        (o->n_stop > 0 && !o->stop_ids))
        return rl_err(err, RL_EINVAL,
                      "model_sample: max_new %d, %d stop ids; expected max_new >= 0 and at most "
                      "%d stop ids",
                      o->max_new, o->n_stop, RL_MODEL_STOP_IDS_MAX);
    if (!isfinite(o->temperature) || !(o->top_p > 0.0f && o->top_p <= 1.0f))
        return rl_err(err, RL_EINVAL,
                      "model_sample: temperature %g, top_p %g; expected a finite temperature and "
                      "0 < top_p <= 1",
                      (double)o->temperature, (double)o->top_p);
    for (int s = 0; s < n_seq; s++) {
        if (lens[s] < 1 || lens[s] > m->cfg.max_seq)
            return rl_err(err, RL_EINVAL, "model_sample: prompt %d has %d tokens, expected 1..%d",
                          s, lens[s], m->cfg.max_seq);
        for (int t = 0; t < lens[s]; t++)
            if (prompts[s][t] < 0 || prompts[s][t] >= m->cfg.vocab)
                return rl_err(err, RL_EINVAL,
                              "model_sample: prompt %d token %d is %d, expected 0..%d", s, t,
                              prompts[s][t], m->cfg.vocab - 1);
    }
    return 0;
}

typedef struct sampler {
    const model_sample_opts *o;
    int V, greedy;
    mrng *rng;    /* one stream per sequence: batching never changes draws */
    float *prob;  /* V floats */
    double *hist; /* RADIX_BUCKETS, top-p scratch */
} sampler;

/* Draws the next token of sequence s from logits row r of the workspace. */
static void draw(const sampler *sp, model_sample_out *out, int s, const infer_ws *w, int r)
{
    const float *z = w->logits + (size_t)r * sp->V;
    int tok;
    if (sp->greedy) {
        tok = argmax(z, sp->V);
    } else {
        for (int v = 0; v < sp->V; v++)
            sp->prob[v] = z[v] - w->lse[r];
        ops_vexp(sp->prob, sp->prob, sp->V);
        tok = model_draw_token(sp->prob, sp->V, sp->o->top_p, mrng_uniform(&sp->rng[s]), sp->hist);
    }
    out->tokens[out->n] = tok;
    out->logprobs[out->n] = z[tok] - w->lse[r];
    out->n++;
}

/* 1 (and sets out->stop) when sequence s must not be fed its last token. */
static int finished(const model_sample_opts *o, model_sample_out *out, int len, int cap)
{
    int tok = out->tokens[out->n - 1];
    for (int k = 0; k < o->n_stop; k++)
        if (tok == o->stop_ids[k]) {
            out->stop = MODEL_STOP_TOKEN;
            return 1;
        }
    if (out->n >= o->max_new) {
        out->stop = MODEL_STOP_LENGTH;
        return 1;
    }
    if (len >= cap) {
        out->stop = MODEL_STOP_CONTEXT;
        return 1;
    }
    return 0;
}

static int sample_impl(model *m, model_kvset *set, model_sample_out *out, const int *const *prompts,
                       const int *prompt_lens, int n_seq, const model_sample_opts *o, char *err)
{
    int rc = check_sample_args(m, prompts, prompt_lens, n_seq, o, err);
    if (rc)
        return rc;
    const model_config *c = &m->cfg;
    int dkv = m->head_dim * c->n_kv_head;
    memset(out, 0, sizeof *out * (size_t)n_seq);
    sampler sp = {.o = o, .V = c->vocab, .greedy = !(o->temperature > 0.0f)};
    float temp = sp.greedy ? 1.0f : o->temperature;

    kv_cache *cache = calloc((size_t)n_seq, sizeof *cache);
    int *len = calloc((size_t)n_seq, sizeof *len);   /* tokens in the cache */
    int *done = calloc((size_t)n_seq, sizeof *done);
    int *start = calloc((size_t)n_seq, sizeof *start); /* first prompt position to prefill */
    int *pick = calloc((size_t)n_seq, sizeof *pick);
    int *row_seq = calloc((size_t)n_seq + PREFILL_ROWS, sizeof *row_seq);
    sp.rng = calloc((size_t)n_seq, sizeof *sp.rng);
    sp.prob = malloc((size_t)c->vocab * sizeof(float));
    sp.hist = malloc(RADIX_BUCKETS * sizeof(double));
    infer_ws w;
    memset(&w, 0, sizeof w);
    if (!cache || !len || !done || !start || !pick || !row_seq || !sp.rng || !sp.prob || !sp.hist) {
        rc = rl_err(err, RL_ENOMEM, "model_sample: out of memory");
        goto out;
    }
    if (set && (rc = kvset_assign(set, m, pick, start, prompts, prompt_lens, n_seq, err)) < 0)
        goto out;
    int ctx = 1;
    for (int s = 0; s < n_seq; s++) {
        if (set) { /* the set's cache; at least the last prompt token is run for its logits */
            cache[s] = set->c[pick[s]];
            set->len[pick[s]] = 0; /* rewritten below: valid again only on success */
            if (start[s] > prompt_lens[s] - 1)
                start[s] = prompt_lens[s] - 1;
            set->reused += start[s];
        } else {
            long cap = (long)prompt_lens[s] + o->max_new;
            cache[s].cap = (int)(cap < c->max_seq ? cap : c->max_seq);
            size_t n = (size_t)c->n_layer * cache[s].cap * dkv;
            cache[s].k = malloc(n * sizeof(float));
            cache[s].v = malloc(n * sizeof(float));
        }
        ctx = cache[s].cap > ctx ? cache[s].cap : ctx;
        out[s].tokens = malloc(((size_t)o->max_new + 1) * sizeof(int));
        out[s].logprobs = malloc(((size_t)o->max_new + 1) * sizeof(float));
        if (!cache[s].k || !cache[s].v || !out[s].tokens || !out[s].logprobs) {
            rc = rl_err(err, RL_ENOMEM, "model_sample: out of memory for the cache of sequence %d",
                        s);
            goto out;
        }
        uint64_t base = o->seeds ? o->seeds[s] : o->seed;
        uint64_t stream = o->seeds ? 0 : (uint64_t)s;
        mrng_seed(&sp.rng[s], base ^ (0x9e3779b97f4a7c15ull * (stream + 1)));
        len[s] = prompt_lens[s];
    }
    if (o->max_new == 0)
        goto out;
    if ((rc = ws_alloc(&w, m, n_seq > PREFILL_ROWS ? n_seq : PREFILL_ROWS, ctx, err)) != 0)
        goto out;

    /* prefill every prompt token not cached, in chunks; draw at each prompt's end */
    int n = 0, n_out = 0;
    for (int s = 0; s < n_seq; s++)
        for (int t = start[s]; t < prompt_lens[s]; t++) {
            w.seq[n] = s;
            w.pos[n] = t;
            w.tok[n] = prompts[s][t];
            if (t == prompt_lens[s] - 1) {
                row_seq[n_out] = s;
                w.out_rows[n_out++] = n;
            }
            n++;
            if (n == PREFILL_ROWS || (s == n_seq - 1 && t == prompt_lens[s] - 1)) {
                infer_rows(m, &w, cache, n, n_out, temp, NULL);
                for (int j = 0; j < n_out; j++)
                    draw(&sp, &out[row_seq[j]], row_seq[j], &w, j);
                n = n_out = 0;
            }
        }

    /* decode: one row per unfinished sequence per step */
    for (;;) {
        int n_active = 0;
        for (int s = 0; s < n_seq; s++) {
            if (done[s] || (done[s] = finished(o, &out[s], len[s], cache[s].cap)))
                continue;
            w.seq[n_active] = s;
            w.pos[n_active] = len[s]++;
            w.tok[n_active] = out[s].tokens[out[s].n - 1];
            w.out_rows[n_active] = n_active;
            row_seq[n_active++] = s;
        }
        if (n_active == 0)
            break;
        infer_rows(m, &w, cache, n_active, n_active, temp, NULL);
        for (int j = 0; j < n_active; j++)
            draw(&sp, &out[row_seq[j]], row_seq[j], &w, j);
    }

out:
    if (rc)
        for (int s = 0; s < n_seq; s++)
            model_sample_out_dispose(&out[s]);
    if (set && rc == 0 && o->max_new > 0) /* what each cache now holds: prompt + fed tokens */
        for (int s = 0; s < n_seq; s++) {
            int *ids = set->ids[pick[s]];
            memcpy(ids, prompts[s], (size_t)prompt_lens[s] * sizeof(int));
            for (int j = 0; j + 1 < out[s].n && prompt_lens[s] + j < set->cap; j++)
                ids[prompt_lens[s] + j] = out[s].tokens[j];
            set->len[pick[s]] = len[s];
        }
    if (cache && !set)
        for (int s = 0; s < n_seq; s++) {
            free(cache[s].k);
            free(cache[s].v);
        }
    free(cache);
    free(len);
    free(done);
    free(start);
    free(pick);
    free(row_seq);
    free(sp.rng);
    free(sp.prob);
    free(sp.hist);
    ws_free(&w);
    return rc;
}

int model_sample(model *m, model_sample_out *out, const int *const *prompts, const int *prompt_lens,
                 int n_seq, const model_sample_opts *o, char *err)
{
    return sample_impl(m, NULL, out, prompts, prompt_lens, n_seq, o, err);
}

int model_sample_cached(model *m, model_kvset *set, model_sample_out *out, const int *const *prompts,
                        const int *prompt_lens, int n_seq, const model_sample_opts *o, char *err)
{
    if (!set)
        return rl_err(err, RL_EINVAL, "model_sample_cached: no cache set");
    return sample_impl(m, set, out, prompts, prompt_lens, n_seq, o, err);
}

/* ---- model_score ----------------------------------------------------------- */

int model_score(model *m, float *const *logp, const int *const *seqs, const int *lens,
                int n_seq, float temperature, char *err)
{
    if (n_seq < 0)
        return rl_err(err, RL_EINVAL, "model_score: %d sequences", n_seq);
    for (int s = 0; s < n_seq; s++)
        if (lens[s] < 1 || lens[s] > m->cfg.max_seq)
            return rl_err(err, RL_EINVAL, "model_score: sequence %d has %d tokens, expected 1..%d",
                          s, lens[s], m->cfg.max_seq);
    if (!(temperature > 0.0f))
        temperature = 1.0f;
    int s0 = 0, rc = 0;
    while (s0 < n_seq && rc == 0) {
        /* a group of consecutive sequences within the token budget */
        int s1 = s0, T = 0;
        while (s1 < n_seq) {
            int t = lens[s1] > T ? lens[s1] : T;
            if (s1 > s0 && (size_t)t * (s1 - s0 + 1) > SCORE_TOKENS)
                break;
            T = t;
            s1++;
        }
        int B = s1 - s0;
        size_t N = (size_t)B * T;
        int *tok = calloc(N, sizeof(int)), *tgt = malloc(N * sizeof(int));
        float *lp = malloc(N * sizeof(float));
        if (!tok || !tgt || !lp) {
            rc = rl_err(err, RL_ENOMEM, "model_score: out of memory");
        } else {
            for (int b = 0; b < B; b++) {
                const int *x = seqs[s0 + b];
                int L = lens[s0 + b];
                for (int t = 0; t < T; t++) {
                    tok[(size_t)b * T + t] = t < L ? x[t] : 0;
                    tgt[(size_t)b * T + t] = t + 1 < L ? x[t + 1] : -1;
                }
            }
            rc = model_forward(m, tok, tgt, B, T, temperature, lp, NULL, err);
            for (int b = 0; rc == 0 && b < B; b++)
                memcpy(logp[s0 + b], lp + (size_t)b * T,
                       (size_t)(lens[s0 + b] - 1) * sizeof(float));
        }
        free(tok);
        free(tgt);
        free(lp);
        s0 = s1;
    }
    model_acts_invalidate(m); /* scoring is not a training forward */
    return rc;
}

/* ---- step-wise decoding (model_dec) ------------------------------------------ */

typedef struct dec_seq {
    int used, done, order;
    int *prompt, plen, start;   /* prompt positions before start are in the cache */
    int len;                    /* tokens in the cache */
    kv_cache cache;
    model_sample_opts o;
    int stop_ids[RL_MODEL_STOP_IDS_MAX];
    mrng rng;
    model_sample_out out;
    int top_k;
    int *top_ids;               /* top_k per drawn token */
    float *top_lps;
} dec_seq;

/* A retired sequence's cache kept for the prefixes of later ones. */
typedef struct dec_entry {
    kv_cache cache;
    int *ids, len;       /* the tokens whose keys and values it holds */
    unsigned long stamp; /* last use, for least-recently-used eviction */
} dec_entry;

struct model_dec {
    model *m;
    int max_seqs, order;
    dec_seq *s;
    dec_entry *pool;     /* RL_MODEL_DEC_PREFIX_ENTRIES */
    int n_pool;
    size_t pool_bytes, max_bytes; /* max_bytes 0: no prefix reuse */
    unsigned long clock;
    long reused;
    kv_cache *caches;  /* the slots' caches side by side, as infer_rows reads them */
    infer_ws w;
    int *row_seq, *wait;
    float *temps, *prob;
    double *hist;
};

int model_dec_new(model_dec **out, model *m, int max_seqs, char *err)
{
    *out = NULL;
    if (max_seqs < 1 || max_seqs > RL_MODEL_SAMPLE_BATCH_MAX)
        return rl_err(err, RL_EINVAL, "model_dec: %d sequences, expected 1..%d", max_seqs, RL_MODEL_SAMPLE_BATCH_MAX);
    model_dec *d = calloc(1, sizeof *d);
    if (!d)
        return rl_err(err, RL_ENOMEM, "model_dec: out of memory");
    d->m = m;
    d->max_seqs = max_seqs;
    int rows = max_seqs + PREFILL_ROWS;
    d->s = calloc((size_t)max_seqs, sizeof *d->s);
    d->pool = calloc(RL_MODEL_DEC_PREFIX_ENTRIES, sizeof *d->pool);
    d->caches = calloc((size_t)max_seqs, sizeof *d->caches);
    d->row_seq = malloc((size_t)rows * sizeof *d->row_seq);
    d->wait = calloc((size_t)max_seqs, sizeof *d->wait);
    d->temps = malloc((size_t)rows * sizeof *d->temps);
    d->prob = malloc((size_t)m->cfg.vocab * sizeof *d->prob);
    d->hist = malloc(RADIX_BUCKETS * sizeof *d->hist);
    if (!d->s || !d->pool || !d->caches || !d->row_seq || !d->wait || !d->temps || !d->prob || !d->hist) {
        model_dec_free(d);
        return rl_err(err, RL_ENOMEM, "model_dec: out of memory");
    }
    int rc = ws_alloc(&d->w, m, rows, m->cfg.max_seq, err);
    if (rc < 0) {
        model_dec_free(d);
        return rc;
    }
    *out = d;
    return 0;
}

static size_t cache_bytes(const model *m, int cap)
{
    return 2 * sizeof(float) * (size_t)m->cfg.n_layer * (size_t)cap * (size_t)(m->head_dim * m->cfg.n_kv_head);
}

static void pool_drop(model_dec *d, int e)
{
    dec_entry *x = &d->pool[e];
    d->pool_bytes -= cache_bytes(d->m, x->cache.cap);
    free(x->cache.k);
    free(x->cache.v);
    free(x->ids);
    d->pool[e] = d->pool[--d->n_pool];
}

/* Token t of what slot q's cache holds (its prompt, then the tokens fed). */
static int seq_tok(const dec_seq *q, int t)
{
    return t < q->plen ? q->prompt[t] : q->out.tokens[t - q->plen];
}

/* Positions of slot q's cache already computed. */
static int seq_done_len(const dec_seq *q)
{
    return q->start < q->plen ? q->start : q->len;
}

/* Keeps a removed sequence's cache in the pool (taking its buffers):
 * entries it extends are dropped, then the least recently used ones
 * until it fits. Returns 1 if taken. */
static int pool_keep(model_dec *d, dec_seq *q)
{
    int len = seq_done_len(q);
    size_t bytes = cache_bytes(d->m, q->cache.cap);
    if (d->max_bytes == 0 || len < RL_MODEL_DEC_PREFIX_MIN || bytes > d->max_bytes)
        return 0;
    int *ids = malloc((size_t)len * sizeof *ids);
    if (!ids)
        return 0;
    for (int t = 0; t < len; t++)
        ids[t] = seq_tok(q, t);
    for (int e = 0; e < d->n_pool;) { /* an entry this one extends serves nothing it does not */
        dec_entry *x = &d->pool[e];
        if (x->len <= len && common_prefix(x->ids, x->len, ids, len) == x->len)
            pool_drop(d, e);
        else
            e++;
    }
    while (d->n_pool > 0 && (d->n_pool >= RL_MODEL_DEC_PREFIX_ENTRIES || d->pool_bytes + bytes > d->max_bytes)) {
        int lru = 0;
        for (int e = 1; e < d->n_pool; e++)
            if (d->pool[e].stamp < d->pool[lru].stamp)
                lru = e;
        pool_drop(d, lru);
    }
    d->pool[d->n_pool++] = (dec_entry){.cache = q->cache, .ids = ids, .len = len, .stamp = ++d->clock};
    d->pool_bytes += bytes;
    return 1;
}

void model_dec_remove(model_dec *d, int slot)
{
    if (!d || slot < 0 || slot >= d->max_seqs || !d->s[slot].used)
        return;
    dec_seq *q = &d->s[slot];
    if (!pool_keep(d, q)) {
        free(q->cache.k);
        free(q->cache.v);
    }
    free(q->prompt);
    free(q->top_ids);
    free(q->top_lps);
    model_sample_out_dispose(&q->out);
    memset(q, 0, sizeof *q);
    memset(&d->caches[slot], 0, sizeof d->caches[slot]);
}

void model_dec_free(model_dec *d)
{
    if (!d)
        return;
    d->max_bytes = 0; /* nothing more to keep */
    for (int i = 0; d->s && i < d->max_seqs; i++)
        model_dec_remove(d, i);
    model_dec_prefix_clear(d);
    free(d->pool);
    free(d->s);
    free(d->caches);
    free(d->row_seq);
    free(d->wait);
    free(d->temps);
    free(d->prob);
    free(d->hist);
    ws_free(&d->w);
    free(d);
}

int model_dec_add(model_dec *d, int *slot, const int *prompt, int len, const model_sample_opts *o, int top_k,
                  char *err)
{
    *slot = -1;
    const int *prompts[1] = {prompt};
    int rc = check_sample_args(d->m, prompts, &len, 1, o, err);
    if (rc)
        return rc;
    if (o->max_new < 1 || top_k < 0 || top_k > RL_MODEL_TOP_LOGPROBS_MAX)
        return rl_err(err, RL_EINVAL, "model_dec: max_new %d, top_k %d; expected max_new >= 1 and top_k 0..%d",
                      o->max_new, top_k, RL_MODEL_TOP_LOGPROBS_MAX);
    int s = -1;
    for (int i = 0; i < d->max_seqs && s < 0; i++)
        if (!d->s[i].used)
            s = i;
    if (s < 0)
        return rl_err(err, RL_ELIMIT, "model_dec: all %d sequences in use", d->max_seqs);
    dec_seq *q = &d->s[s];
    memset(q, 0, sizeof *q);
    const model_config *c = &d->m->cfg;
    long cap = (long)len + o->max_new;
    q->cache.cap = (int)(cap < c->max_seq ? cap : c->max_seq);
    size_t n = (size_t)c->n_layer * (size_t)q->cache.cap * (size_t)(d->m->head_dim * c->n_kv_head);
    q->cache.k = malloc(n * sizeof(float));
    q->cache.v = malloc(n * sizeof(float));
    q->prompt = malloc((size_t)len * sizeof(int));
    q->out.tokens = malloc(((size_t)o->max_new + 1) * sizeof(int));
    q->out.logprobs = malloc(((size_t)o->max_new + 1) * sizeof(float));
    if (top_k) {
        q->top_ids = malloc(((size_t)o->max_new + 1) * (size_t)top_k * sizeof(int));
        q->top_lps = malloc(((size_t)o->max_new + 1) * (size_t)top_k * sizeof(float));
    }
    q->used = 1;
    if (!q->cache.k || !q->cache.v || !q->prompt || !q->out.tokens || !q->out.logprobs ||
        (top_k && (!q->top_ids || !q->top_lps))) {
        model_dec_remove(d, s);
        return rl_err(err, RL_ENOMEM, "model_dec: out of memory for a sequence of %d tokens", len);
    }
    memcpy(q->prompt, prompt, (size_t)len * sizeof(int));
    q->plen = len;
    q->o = *o;
    if (o->n_stop)
        memcpy(q->stop_ids, o->stop_ids, (size_t)o->n_stop * sizeof(int));
    q->o.stop_ids = q->stop_ids;
    q->o.seeds = NULL;
    q->top_k = top_k;
    q->order = ++d->order;
    /* the stream model_sample gives sequence i through opts.seeds[i] */
    mrng_seed(&q->rng, o->seed ^ (0x9e3779b97f4a7c15ull * 1));
    d->caches[s] = q->cache;
    *slot = s;
    return 0;
}

/* Draws the next token of slot s from output row r; notes its top-k. */
static void dec_draw(model_dec *d, int s, int r)
{
    dec_seq *q = &d->s[s];
    const infer_ws *w = &d->w;
    int V = d->m->cfg.vocab;
    const float *z = w->logits + (size_t)r * V;
    int tok;
    if (!(q->o.temperature > 0.0f)) {
        tok = argmax(z, V);
    } else {
        for (int v = 0; v < V; v++)
            d->prob[v] = z[v] - w->lse[r];
        ops_vexp(d->prob, d->prob, V);
        tok = model_draw_token(d->prob, V, q->o.top_p, mrng_uniform(&q->rng), d->hist);
    }
    int i = q->out.n;
    if (q->top_k) { /* insertion into a list kept sorted, most likely first */
        int *ids = q->top_ids + (size_t)i * q->top_k;
        float *lps = q->top_lps + (size_t)i * q->top_k;
        int k = 0;
        for (int v = 0; v < V; v++) {
            float lp = z[v] - w->lse[r];
            if (k == q->top_k && lp <= lps[k - 1])
                continue;
            int j = k < q->top_k ? k++ : k - 1;
            while (j > 0 && lps[j - 1] < lp) {
                ids[j] = ids[j - 1];
                lps[j] = lps[j - 1];
                j--;
            }
            ids[j] = v;
            lps[j] = lp;
        }
    }
    q->out.tokens[i] = tok;
    q->out.logprobs[i] = z[tok] - w->lse[r];
    q->out.n++;
    q->done = finished(&q->o, &q->out, q->len, d->m->cfg.max_seq);
}

/* Copies the keys and values of positions [from, to) between caches. */
static void cache_copy(const model *m, kv_cache *dst, const kv_cache *src, int from, int to)
{
    size_t dkv = (size_t)(m->head_dim * m->cfg.n_kv_head), n = (size_t)(to - from);
    for (int l = 0; l < m->cfg.n_layer; l++) {
        for (size_t e = 0; e < dkv; e++) /* keys: one row per (layer, e), positions along it */
            memcpy(dst->k + ((size_t)l * dkv + e) * dst->cap + from, src->k + ((size_t)l * dkv + e) * src->cap + from,
                   n * sizeof(float));
        memcpy(dst->v + ((size_t)l * dst->cap + from) * dkv, src->v + ((size_t)l * src->cap + from) * dkv,
               n * dkv * sizeof(float));
    }
}

/* Before slot s prefills: takes the longest prefix of its prompt that
 * another slot or the pool has computed (all but the last prompt token,
 * which runs for its logits). Returns 1 when an older slot still
 * prefilling will compute more of it: s waits for that rather than
 * computing the same rows. */
static int dec_reuse(model_dec *d, int s)
{
    dec_seq *q = &d->s[s];
    int want = q->plen - 1, best = q->start, pending = 0;
    const kv_cache *src = NULL;
    dec_entry *ent = NULL;
    for (int e = 0; e < d->n_pool; e++) {
        dec_entry *x = &d->pool[e];
        int l = common_prefix(x->ids, x->len, q->prompt, want);
        if (l > best) {
            best = l;
            src = &x->cache;
            ent = x;
        }
    }
    for (int i = 0; i < d->max_seqs; i++) {
        const dec_seq *r = &d->s[i];
        if (i == s || !r->used)
            continue;
        int done = seq_done_len(r), known = r->plen > done ? r->plen : done, t = 0;
        while (t < want && t < known && seq_tok(r, t) == q->prompt[t])
            t++;
        if ((t < done ? t : done) > best) {
            best = t < done ? t : done;
            src = &r->cache;
            ent = NULL;
        }
        if (r->start < r->plen && r->order < q->order && t > pending)
            pending = t;
    }
    if (src) {
        cache_copy(d->m, &q->cache, src, q->start, best);
        d->reused += best - q->start;
        q->start = best;
        if (ent)
            ent->stamp = ++d->clock;
    }
    return pending > q->start;
}

int model_dec_step(model_dec *d, int *n_rows, char *err)
{
    infer_ws *w = &d->w;
    int n = 0, n_out = 0;
    /* prefixes first, while every slot's cache holds only computed rows */
    for (int s = 0; s < d->max_seqs; s++) {
        dec_seq *q = &d->s[s];
        d->wait[s] = q->used && !q->done && q->start < q->plen && d->max_bytes > 0 && dec_reuse(d, s);
    }
    /* one row per sequence past its prefill */
    for (int s = 0; s < d->max_seqs; s++) {
        dec_seq *q = &d->s[s];
        if (!q->used || q->done || q->start < q->plen)
            continue;
        w->seq[n] = s;
        w->pos[n] = q->len++;
        w->tok[n] = q->out.tokens[q->out.n - 1];
        w->out_rows[n_out] = n;
        d->temps[n_out] = q->o.temperature > 0.0f ? q->o.temperature : 1.0f;
        d->row_seq[n_out++] = s;
        n++;
    }
    /* then prompt tokens, oldest sequence first, up to a chunk */
    int n_pre = 0;
    for (;;) {
        int s = -1;
        for (int i = 0; i < d->max_seqs; i++) {
            dec_seq *q = &d->s[i];
            if (q->used && !q->done && q->start < q->plen && !d->wait[i] && (s < 0 || q->order < d->s[s].order))
                s = i;
        }
        if (s < 0 || n_pre >= PREFILL_ROWS)
            break;
        dec_seq *q = &d->s[s];
        while (q->start < q->plen && n_pre < PREFILL_ROWS) {
            int t = q->start++;
            n_pre++;
            w->seq[n] = s;
            w->pos[n] = t;
            w->tok[n] = q->prompt[t];
            if (t == q->plen - 1) {
                w->out_rows[n_out] = n;
                d->temps[n_out] = q->o.temperature > 0.0f ? q->o.temperature : 1.0f;
                d->row_seq[n_out++] = s;
                q->len = q->plen;
            }
            n++;
        }
        if (q->start < q->plen)
            break;
    }
    if (n_rows)
        *n_rows = n;
    if (n == 0)
        return 0;
    (void)err;
    infer_rows(d->m, w, d->caches, n, n_out, 1.0f, d->temps);
    for (int j = 0; j < n_out; j++)
        dec_draw(d, d->row_seq[j], j);
    return 0;
}

const model_sample_out *model_dec_out(const model_dec *d, int slot)
{
    return &d->s[slot].out;
}

int model_dec_done(const model_dec *d, int slot)
{
    return d->s[slot].done;
}

int model_dec_top(const model_dec *d, int slot, int i, const int **ids, const float **lps)
{
    const dec_seq *q = &d->s[slot];
    if (!q->top_k || i < 0 || i >= q->out.n)
        return 0;
    *ids = q->top_ids + (size_t)i * q->top_k;
    *lps = q->top_lps + (size_t)i * q->top_k;
    return q->top_k;
}

int model_dec_free_slots(const model_dec *d)
{
    int k = 0;
    for (int i = 0; i < d->max_seqs; i++)
        k += !d->s[i].used;
    return k;
}

void model_dec_prefix_cache(model_dec *d, size_t max_bytes)
{
    d->max_bytes = max_bytes;
    while (d->n_pool > 0 && d->pool_bytes > d->max_bytes)
        pool_drop(d, d->n_pool - 1);
}

void model_dec_prefix_clear(model_dec *d)
{
    while (d && d->n_pool > 0)
        pool_drop(d, d->n_pool - 1);
}

void model_dec_prefix_stats(const model_dec *d, long *reused, int *entries, size_t *bytes)
{
    if (reused)
        *reused = d->reused;
    if (entries)
        *entries = d->n_pool;
    if (bytes)
        *bytes = d->pool_bytes;
}
