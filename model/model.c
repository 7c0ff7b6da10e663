/* model.c - the built-in policy's model: config, parameters, training
 * forward and backward (see model.h for the architecture and contract).
 *
 * Flow of model_forward, per layer l (N = B*T rows):
 *   ln1 = rmsnorm(res[l]); q,k,v = ln1 @ Wq,Wk,Wv^T; q,k = rmsnorm per head;
 *   rope(q,k); att = attention(q,k,v); res_mid = res[l] + att @ Wo^T;
 *   ln2 = rmsnorm(res_mid); act = swiglu(ln2 @ Wgate^T, ln2 @ Wup^T);
 *   res[l+1] = res_mid + act @ Wdown^T
 * then lnf = rmsnorm(res[L]) and, only for rows with a target, logits =
 * lnf @ wte^T and their log-probabilities. model_backward walks the same
 * steps in reverse.
 */
#include "model/model.h"
#include "model/model_ops.h"

#include "common/err.h"
#include "common/limits.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Activations of the last model_forward, sized for cap_tokens rows. */
struct model_acts {
    size_t cap_tokens;       /* rows the buffers hold */
    int B, T, N, valid;      /* shape of the last forward; valid once it ran */
    float temperature;
    float *mem;              /* one allocation for every float buffer */
    int *imem;               /* tokens, targets, pos, active rows */
    int *tokens, *targets, *pos, *rows, *row_targets;
    int n_rows;              /* rows with a target (lm head rows) */
    /* per layer, L x N x width */
    float *res;              /* (L+1) x N x d: residual stream entering each layer */
    float *ln1, *ln1_rstd, *qraw, *q_rstd, *q, *kraw, *k_rstd, *k, *v, *att, *att_lse;
    float *res_mid, *ln2, *ln2_rstd, *gate, *up, *act;
    float *lnf, *lnf_rstd;
    float *h, *logits, *lse; /* lm head rows: n_rows x d, n_rows x V, n_rows */
    float *head_dlogp;       /* n_rows */
    /* backward scratch */
    float *d_res, *d_ln, *d_att, *d_q, *d_k, *d_kraw, *d_v, *d_act, *d_gate, *d_up;
    float *fused;            /* N x max(dq + 2 dkv, 2 d_ff): fused products */
    float *att_scratch;      /* n_threads x ops_attn_scratch_floats(T, ...) */
};

void model_config_default(model_config *c)
{
    c->vocab = 4096;
    c->d_model = 256;
    c->n_layer = 6;
    c->n_head = 8;
    c->n_kv_head = 4;
    c->d_ff = 768;
    c->max_seq = 4096;
    c->qk_norm = 1;
    c->head_dim = 0;
    c->untied = 0;
    c->qkv_bias = 0;
    c->rope_theta = 1e6f;
    c->norm_eps = 1e-6f;
}

void model_opts_default(model_opts *o)
{
    o->n_threads = 0;
    o->dtype = MODEL_DTYPE_F32;
}

int model_dtype_parse(int *dtype, const char *flag, const char *s, char *err)
{
    if (!strcmp(s, "f32") || !strcmp(s, "fp32"))
        *dtype = MODEL_DTYPE_F32;
    else if (!strcmp(s, "bf16"))
        *dtype = MODEL_DTYPE_BF16;
    else
        return rl_err(err, RL_EINVAL, "%s %.32s: expected f32 or bf16", flag, s);
    return 0;
}

static int head_dim_of(const model_config *c)
{
    return c->head_dim > 0 ? c->head_dim : c->d_model / c->n_head;
}

static size_t params_of(const model_config *c)
{
    size_t d = (size_t)c->d_model, hd = (size_t)head_dim_of(c);
    size_t dq = hd * (size_t)c->n_head, dkv = hd * (size_t)c->n_kv_head, ff = (size_t)c->d_ff;
    size_t per_layer = d + dq * d + 2 * dkv * d + d * dq + d + 3 * ff * d;
    if (c->qk_norm)
        per_layer += 2 * hd;
    if (c->qkv_bias)
        per_layer += dq + 2 * dkv;
    size_t head = c->untied ? (size_t)c->vocab * d : 0;
    return (size_t)c->vocab * d + (size_t)c->n_layer * per_layer + d + head;
}

size_t model_config_params(const model_config *c)
{
    return params_of(c);
}

/* Values in the 2-D tensors (the matrices) of a config. */
static size_t matrix_params_of(const model_config *c)
{
    size_t d = (size_t)c->d_model, hd = (size_t)head_dim_of(c);
    size_t dq = hd * (size_t)c->n_head, dkv = hd * (size_t)c->n_kv_head, ff = (size_t)c->d_ff;
    size_t per_layer = dq * d + 2 * dkv * d + d * dq + 3 * ff * d;
    return (size_t)c->vocab * d * (c->untied ? 2 : 1) + (size_t)c->n_layer * per_layer;
}

int model_config_check(const model_config *c, char *err)
{
#define RANGE(field, lo, hi)                                                                   \
    if (c->field < (lo) || c->field > (hi))                                                    \
        return rl_err(err, RL_EINVAL, "model config: " #field " is %d, expected %d..%d",      \
                      (int)c->field, (int)(lo), (int)(hi));
    RANGE(vocab, 2, RL_MODEL_VOCAB_MAX);
    RANGE(d_model, 2, RL_MODEL_DIM_MAX);
    RANGE(n_layer, 1, RL_MODEL_LAYERS_MAX);
    RANGE(n_head, 1, RL_MODEL_HEADS_MAX);
    RANGE(n_kv_head, 1, c->n_head);
    RANGE(d_ff, 1, RL_MODEL_DIM_MAX);
    RANGE(max_seq, 1, RL_MODEL_SEQ_MAX);
    RANGE(qk_norm, 0, 1);
    RANGE(head_dim, 0, RL_MODEL_DIM_MAX);
    RANGE(untied, 0, 1);
    RANGE(qkv_bias, 0, 1);
#undef RANGE
    if (c->head_dim == 0 && (c->d_model % c->n_head != 0 || (c->d_model / c->n_head) % 2 != 0))
        return rl_err(err, RL_EINVAL,
                      "model config: d_model %d must split into n_head %d heads of even size",
                      c->d_model, c->n_head);
    if (c->head_dim % 2 != 0)
        return rl_err(err, RL_EINVAL, "model config: head_dim %d, expected an even width", c->head_dim);
    if ((size_t)head_dim_of(c) * (size_t)c->n_head > RL_MODEL_DIM_MAX)
        return rl_err(err, RL_EINVAL, "model config: head_dim %d x n_head %d is more than %d",
                      head_dim_of(c), c->n_head, RL_MODEL_DIM_MAX);
    if (c->n_head % c->n_kv_head != 0)
        return rl_err(err, RL_EINVAL,
                      "model config: n_head %d must be a multiple of n_kv_head %d", c->n_head,
                      c->n_kv_head);
    if (!(c->rope_theta > 1.0f) || !isfinite(c->rope_theta))
        return rl_err(err, RL_EINVAL, "model config: rope_theta %g, expected a finite value > 1",
                      (double)c->rope_theta);
    if (!(c->norm_eps > 0.0f) || !(c->norm_eps < 1.0f))
        return rl_err(err, RL_EINVAL, "model config: norm_eps %g, expected 0 < eps < 1",
                      (double)c->norm_eps);
    if (params_of(c) > RL_MODEL_PARAMS_MAX)
        return rl_err(err, RL_ELIMIT, "model config: %zu parameters, more than the cap %u",
                      params_of(c), RL_MODEL_PARAMS_MAX);
    return 0;
}

/* ---- tensor table ----------------------------------------------------------- */

/* Adds a tensor at the end of its buffer: a matrix (cols > 0) of a bf16
 * model goes to wbf (view16; *view is NULL), everything else to params. */
static model_tensor *add_tensor(model *m, size_t *off, size_t *off16, float **view,
                                uint16_t **view16, const char *name, int rows, int cols,
                                int is_norm, int is_embed)
{
    model_tensor *t = &m->tensors[m->n_tensors++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->ndim = cols ? 2 : 1;
    t->shape[0] = rows;
    t->shape[1] = cols;
    t->numel = (size_t)rows * (size_t)(cols ? cols : 1);
    t->is_norm = is_norm;
    t->is_embed = is_embed;
    t->bf16 = cols && m->dtype == MODEL_DTYPE_BF16;
    if (t->bf16) {
        t->offset = *off16;
        *view16 = m->wbf + *off16;
        *view = NULL;
        *off16 += t->numel;
    } else {
        t->offset = *off;
        *view = m->params + *off;
        if (view16)
            *view16 = NULL;
        *off += t->numel;
    }
    return t;
}

/* Lays out every tensor in a fixed order and points the views at them. */
static void build_tensors(model *m)
{
    const model_config *c = &m->cfg;
    int d = c->d_model, hd = m->head_dim, dq = hd * c->n_head, dkv = hd * c->n_kv_head;
    size_t off = 0, off16 = 0;
    char name[64];
    m->n_tensors = 0;
    add_tensor(m, &off, &off16, &m->wte, &m->wte16, "model.embed_tokens.weight", c->vocab, d, 0, 1);
    for (int l = 0; l < c->n_layer; l++) {
        model_layer *L = &m->layer[l];
        model_layer16 *L16 = &m->layer16[l];
#define T(view, suffix, rows, cols, norm)                                                      \
    snprintf(name, sizeof name, "model.layers.%d.%s", l, suffix);                             \
    add_tensor(m, &off, &off16, &L->view, NULL, name, rows, cols, norm, 0)
#define M(view, suffix, rows, cols)                                                            \
    snprintf(name, sizeof name, "model.layers.%d.%s", l, suffix);                             \
    add_tensor(m, &off, &off16, &L->view, &L16->view, name, rows, cols, 0, 0)
        T(attn_norm, "input_layernorm.weight", d, 0, 1);
        M(wq, "self_attn.q_proj.weight", dq, d);
        M(wk, "self_attn.k_proj.weight", dkv, d);
        M(wv, "self_attn.v_proj.weight", dkv, d);
        if (c->qkv_bias) { /* adjacent too: one bias of the fused q | k | v product */
            T(bq, "self_attn.q_proj.bias", dq, 0, 1)->is_bias = 1;
            T(bk, "self_attn.k_proj.bias", dkv, 0, 1)->is_bias = 1;
            T(bv, "self_attn.v_proj.bias", dkv, 0, 1)->is_bias = 1;
        } else {
            L->bq = L->bk = L->bv = NULL;
        }
        M(wo, "self_attn.o_proj.weight", d, dq);
        if (c->qk_norm) {
            T(q_norm, "self_attn.q_norm.weight", hd, 0, 1);
            T(k_norm, "self_attn.k_norm.weight", hd, 0, 1);
        } else {
            L->q_norm = L->k_norm = NULL;
        }
        T(mlp_norm, "post_attention_layernorm.weight", d, 0, 1);
        M(w_gate, "mlp.gate_proj.weight", c->d_ff, d);
        M(w_up, "mlp.up_proj.weight", c->d_ff, d);
        M(w_down, "mlp.down_proj.weight", d, c->d_ff);
#undef T
#undef M
    }
    add_tensor(m, &off, &off16, &m->final_norm, NULL, "model.norm.weight", d, 0, 1, 0);
    if (c->untied) {
        add_tensor(m, &off, &off16, &m->lm_head, &m->lm_head16, "lm_head.weight", c->vocab, d, 0, 1);
    } else {
        m->lm_head = m->wte;
        m->lm_head16 = m->wte16;
    }
    assert(off == m->n_f32 && off16 == m->n_bf16);
    /* the fused products rely on these tensors being adjacent */
    for (int l = 0; l < c->n_layer; l++) {
        const model_layer *L = &m->layer[l];
        const model_layer16 *L16 = &m->layer16[l];
        assert(L->wk == (L->wq ? L->wq + (size_t)dq * d : NULL) && L->wv == (L->wk ? L->wk + (size_t)dkv * d : NULL));
        assert(L->w_up == (L->w_gate ? L->w_gate + (size_t)c->d_ff * d : NULL));
        assert(L16->wk == (L16->wq ? L16->wq + (size_t)dq * d : NULL) &&
               L16->wv == (L16->wk ? L16->wk + (size_t)dkv * d : NULL));
        assert(L16->w_up == (L16->w_gate ? L16->w_gate + (size_t)c->d_ff * d : NULL));
        assert(!c->qkv_bias || (L->bk == L->bq + dq && L->bv == L->bk + dkv));
    }
}

/* The same views into the gradient buffer. */
static void point_grads(model *m)
{
    ptrdiff_t shift = m->grads - m->params;
    m->gwte = m->wte + shift;
    m->gfinal_norm = m->final_norm + shift;
    m->glm_head = m->lm_head + shift;
    for (int l = 0; l < m->cfg.n_layer; l++) {
        model_layer *L = &m->layer[l], *G = &m->glayer[l];
        float **src = (float **)L, **dst = (float **)G;
        for (size_t i = 0; i < sizeof *L / sizeof(float *); i++)
            dst[i] = src[i] ? src[i] + shift : NULL;
    }
}

static void build_rope(model *m)
{
    int half = m->head_dim / 2;
    for (int p = 0; p < m->cfg.max_seq; p++)
        for (int j = 0; j < half; j++) {
            double freq = pow((double)m->cfg.rope_theta, -2.0 * j / m->head_dim);
            double a = p * freq;
            m->rope_cos[(size_t)p * half + j] = (float)cos(a);
            m->rope_sin[(size_t)p * half + j] = (float)sin(a);
        }
}

static int default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        n = 1;
    if (n > RL_MODEL_THREADS_MAX)
        n = RL_MODEL_THREADS_MAX;
    return (int)n;
}

int model_new(model **out, const model_config *cfg, const model_opts *opts, char *err)
{
    *out = NULL;
    int rc = model_config_check(cfg, err);
    if (rc)
        return rc;
    model_opts o;
    model_opts_default(&o);
    if (opts)
        o = *opts;
    model *m = calloc(1, sizeof *m);
    if (!m)
        return rl_err(err, RL_ENOMEM, "model: out of memory");
    m->cfg = *cfg;
    m->head_dim = head_dim_of(cfg);
    m->cfg.head_dim = m->head_dim;
    if (o.dtype != MODEL_DTYPE_F32 && o.dtype != MODEL_DTYPE_BF16) {
        free(m);
        return rl_err(err, RL_EINVAL, "model: dtype %d, expected MODEL_DTYPE_F32 or MODEL_DTYPE_BF16", o.dtype);
    }
    m->dtype = o.dtype;
    m->n_params = params_of(cfg);
    m->n_bf16 = m->dtype == MODEL_DTYPE_BF16 ? matrix_params_of(cfg) : 0;
    m->n_f32 = m->n_params - m->n_bf16;
    m->params = calloc(m->n_f32, sizeof(float));
    if (m->n_bf16 && !(m->wbf = calloc(m->n_bf16, sizeof(uint16_t)))) {
        model_free(m);
        return rl_err(err, RL_ENOMEM, "model: out of memory for %zu bf16 weights", m->n_bf16);
    }
    m->layer16 = calloc((size_t)cfg->n_layer, sizeof *m->layer16);
    m->layer = calloc((size_t)cfg->n_layer, sizeof *m->layer);
    m->glayer = calloc((size_t)cfg->n_layer, sizeof *m->glayer);
    m->tensors = calloc((size_t)cfg->n_layer * 14 + 3, sizeof *m->tensors);
    size_t rope_n = (size_t)cfg->max_seq * (size_t)(m->head_dim / 2);
    m->rope_cos = malloc(rope_n * sizeof(float));
    m->rope_sin = malloc(rope_n * sizeof(float));
    if (!m->params || !m->layer || !m->layer16 || !m->glayer || !m->tensors || !m->rope_cos || !m->rope_sin) {
        model_free(m);
        return rl_err(err, RL_ENOMEM, "model: out of memory for %zu parameters", params_of(cfg));
    }
    build_tensors(m);
    build_rope(m);
    rc = mpool_new(&m->pool, o.n_threads > 0 ? o.n_threads : default_threads(), err);
    if (rc) {
        model_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

static void acts_free(model_acts *a)
{
    if (!a)
        return;
    free(a->mem);
    free(a->imem);
    free(a);
}

void model_free(model *m)
{
    if (!m)
        return;
    mpool_free(m->pool);
    acts_free(m->acts);
    free(m->params);
    free(m->wbf);
    free(m->grads);
    free(m->layer);
    free(m->layer16);
    free(m->glayer);
    free(m->tensors);
    free(m->rope_cos);
    free(m->rope_sin);
    free(m);
}

void model_set_active_vocab(model *m, int n)
{
    m->n_active = n > 0 && n < m->cfg.vocab ? n : 0;
}

void model_mask_logits(const model *m, float *logits, int n)
{
    int V = m->cfg.vocab, a = m->n_active;
    if (a <= 0)
        return;
    for (int r = 0; r < n; r++)
        for (int v = a; v < V; v++)
            logits[(size_t)r * V + v] = MODEL_LOGIT_MASKED;
}

void model_random_init(model *m, uint64_t seed)
{
    mrng r;
    mrng_seed(&r, seed);
    float resid_std = 0.02f / sqrtf(2.0f * (float)m->cfg.n_layer);
    for (int i = 0; i < m->n_tensors; i++) {
        const model_tensor *t = &m->tensors[i];
        int is_resid = strstr(t->name, "o_proj") || strstr(t->name, "down_proj");
        float std = is_resid ? resid_std : 0.02f;
        if (t->bf16) { /* the same draws as in fp32, rounded */
            uint16_t *w = m->wbf + t->offset;
            for (size_t j = 0; j < t->numel; j++) {
                float v = std * mrng_normal(&r);
                ops_bf16_from_f32(&w[j], &v, 1);
            }
            continue;
        }
        float *w = m->params + t->offset;
        for (size_t j = 0; j < t->numel; j++)
            w[j] = t->is_bias ? 0.0f : t->is_norm ? 1.0f : std * mrng_normal(&r);
    }
}

/* Training needs fp32 weights. */
static int refuse_bf16(const model *m, const char *what, char *err)
{
    if (m->dtype == MODEL_DTYPE_F32)
        return 0;
    return rl_err(err, RL_EINVAL, "model: %s: the weights are held in bf16 (inference only); "
                  "load the model in f32 to train", what);
}

int model_zero_grad(model *m, char *err)
{
    int rc = refuse_bf16(m, "gradients", err);
    if (rc)
        return rc;
    if (!m->grads) {
        m->grads = malloc(m->n_params * sizeof(float));
        if (!m->grads)
            return rl_err(err, RL_ENOMEM, "model: out of memory for gradients");
        point_grads(m);
    }
    memset(m->grads, 0, m->n_params * sizeof(float));
    return 0;
}

/* ---- activations ------------------------------------------------------------ */

/* Carves the float buffers out of one allocation (first pass counts). */
static int acts_alloc(model *m, size_t N, int T, char *err)
{
    const model_config *c = &m->cfg;
    size_t d = (size_t)c->d_model, hd = (size_t)m->head_dim, L = (size_t)c->n_layer;
    size_t nh = (size_t)c->n_head, nkv = (size_t)c->n_kv_head, ff = (size_t)c->d_ff;
    size_t dq = hd * nh, dkv = hd * nkv, V = (size_t)c->vocab;
    size_t nthr = (size_t)mpool_threads(m->pool);
    model_acts *a = calloc(1, sizeof *a);
    if (!a)
        return rl_err(err, RL_ENOMEM, "model activations: out of memory");
    struct {
        float **p;
        size_t n;
    } plan[] = {
        {&a->res, (L + 1) * N * d},   {&a->ln1, L * N * d},       {&a->ln1_rstd, L * N},
        {&a->qraw, L * N * dq},       {&a->q_rstd, L * N * nh},   {&a->q, L * N * dq},
        {&a->kraw, L * N * dkv},      {&a->k_rstd, L * N * nkv},  {&a->k, L * N * dkv},
        {&a->v, L * N * dkv},         {&a->att, L * N * dq},      {&a->att_lse, L * N * nh},
        {&a->res_mid, L * N * d},     {&a->ln2, L * N * d},       {&a->ln2_rstd, L * N},
        {&a->gate, L * N * ff},       {&a->up, L * N * ff},       {&a->act, L * N * ff},
        {&a->lnf, N * d},             {&a->lnf_rstd, N},          {&a->h, N * d},
        {&a->logits, N * V},          {&a->lse, N},               {&a->head_dlogp, N},
        {&a->d_res, N * d},           {&a->d_ln, N * d},          {&a->d_att, N * dq},
        {&a->d_q, N * dq},            {&a->d_k, N * dkv},         {&a->d_kraw, N * dkv},
        {&a->d_v, N * dkv},           {&a->d_act, N * ff},        {&a->d_gate, N * ff},
        {&a->d_up, N * ff},
        {&a->fused, N * (dq + 2 * dkv > 2 * ff ? dq + 2 * dkv : 2 * ff)},
        {&a->att_scratch, nthr * ops_attn_scratch_floats(T, c->n_head / c->n_kv_head, m->head_dim)},
    };
    size_t total = 0;
    for (size_t i = 0; i < sizeof plan / sizeof plan[0]; i++)
        total += (plan[i].n + 15) & ~(size_t)15; /* 64-byte aligned starts */
    a->mem = aligned_alloc(64, total * sizeof(float));
    a->imem = malloc(5 * N * sizeof(int));
    if (!a->mem || !a->imem) {
        acts_free(a);
        return rl_err(err, RL_ENOMEM, "model activations: out of memory for %zu tokens (%zu MB)",
                      N, total * sizeof(float) >> 20);
    }
    float *p = a->mem;
    for (size_t i = 0; i < sizeof plan / sizeof plan[0]; i++) {
        *plan[i].p = p;
        p += (plan[i].n + 15) & ~(size_t)15;
    }
    a->tokens = a->imem;
    a->targets = a->tokens + N;
    a->pos = a->targets + N;
    a->rows = a->pos + N;
    a->row_targets = a->rows + N;
    a->cap_tokens = N;
    a->T = T;
    acts_free(m->acts);
    m->acts = a;
    return 0;
}

/* ---- forward ------------------------------------------------------------ */

int model_forward(model *m, const int *tokens, const int *targets, int B, int T,
                  float temperature, float *logp, float *entropy, char *err)
{
    const model_config *c = &m->cfg;
    if (B < 1 || T < 1 || T > c->max_seq || (size_t)B * T > RL_MODEL_BATCH_TOKENS_MAX)
        return rl_err(err, RL_EINVAL,
                      "model_forward: batch %d x %d, expected T in 1..%d and B*T <= %d", B, T,
                      c->max_seq, RL_MODEL_BATCH_TOKENS_MAX);
    if (!(temperature > 0.0f) || !isfinite(temperature))
        temperature = 1.0f;
    size_t N = (size_t)B * T;
    for (size_t i = 0; i < N; i++)
        if (tokens[i] < 0 || tokens[i] >= c->vocab || targets[i] >= c->vocab)
            return rl_err(err, RL_EINVAL,
                          "model_forward: token %d / target %d at %zu, expected ids below %d",
                          tokens[i], targets[i], i, c->vocab);
    if (!m->acts || m->acts->cap_tokens < N || m->acts->T < T) {
        int rc = acts_alloc(m, N, T, err);
        if (rc)
            return rc;
    }
    model_acts *a = m->acts;
    a->B = B;
    a->T = T;
    a->N = (int)N;
    a->temperature = temperature;
    a->valid = 0;
    memcpy(a->tokens, tokens, N * sizeof(int));
    memcpy(a->targets, targets, N * sizeof(int));
    for (size_t i = 0; i < N; i++)
        a->pos[i] = (int)(i % (size_t)T);

    int d = c->d_model, hd = m->head_dim, nh = c->n_head, nkv = c->n_kv_head, ff = c->d_ff;
    int dq = hd * nh, dkv = hd * nkv, n = (int)N;
    mpool *p = m->pool;
    ops_embed_forward_any(a->res, tokens, m->wte, m->wte16, n, d);
    for (int l = 0; l < c->n_layer; l++) {
        const model_layer *W = &m->layer[l];
        const model_layer16 *W16 = &m->layer16[l];
        float *x = a->res + (size_t)l * N * d;
        float *ln1 = a->ln1 + (size_t)l * N * d, *ln1_rstd = a->ln1_rstd + (size_t)l * N;
        float *qraw = a->qraw + (size_t)l * N * dq, *q = a->q + (size_t)l * N * dq;
        float *kraw = a->kraw + (size_t)l * N * dkv, *k = a->k + (size_t)l * N * dkv;
        float *v = a->v + (size_t)l * N * dkv, *att = a->att + (size_t)l * N * dq;
        float *lse = a->att_lse + (size_t)l * N * nh;
        float *mid = a->res_mid + (size_t)l * N * d, *ln2 = a->ln2 + (size_t)l * N * d;
        float *gate = a->gate + (size_t)l * N * ff, *up = a->up + (size_t)l * N * ff;
        float *act = a->act + (size_t)l * N * ff, *xo = x + N * d;

        ops_rmsnorm_forward(p, ln1, ln1_rstd, x, W->attn_norm, n, d, c->norm_eps);
        /* wq, wk, wv are one (dq + 2 dkv) x d matrix: one product */
        ops_linear_forward(p, a->fused, ln1, W->wq, W16->wq, n, d, dq + 2 * dkv, 0.0f);
        if (c->qkv_bias)
            ops_bias_forward(a->fused, W->bq, n, dq + 2 * dkv);
        ops_cols_split(p, (float *const[]){qraw, kraw, v}, (const int[]){dq, dkv, dkv}, 3, a->fused, n);
        if (c->qk_norm) {
            ops_rmsnorm_forward(p, q, a->q_rstd + (size_t)l * N * nh, qraw, W->q_norm, n * nh, hd, c->norm_eps);
            ops_rmsnorm_forward(p, k, a->k_rstd + (size_t)l * N * nkv, kraw, W->k_norm, n * nkv, hd, c->norm_eps);
        } else {
            memcpy(q, qraw, N * dq * sizeof(float));
            memcpy(k, kraw, N * dkv * sizeof(float));
        }
        ops_rope_forward(p, q, a->pos, m->rope_cos, m->rope_sin, n, nh, hd);
        ops_rope_forward(p, k, a->pos, m->rope_cos, m->rope_sin, n, nkv, hd);
        ops_attention_forward(p, att, lse, q, k, v, B, T, nh, nkv, hd, a->att_scratch);
        memcpy(mid, x, N * d * sizeof(float));
        ops_linear_forward(p, mid, att, W->wo, W16->wo, n, dq, d, 1.0f);

        ops_rmsnorm_forward(p, ln2, a->ln2_rstd + (size_t)l * N, mid, W->mlp_norm, n, d, c->norm_eps);
        ops_linear_forward(p, a->fused, ln2, W->w_gate, W16->w_gate, n, d, 2 * ff, 0.0f); /* gate | up */
        ops_cols_split(p, (float *const[]){gate, up}, (const int[]){ff, ff}, 2, a->fused, n);
        ops_swiglu_forward(p, act, gate, up, N * ff);
        memcpy(xo, mid, N * d * sizeof(float));
        ops_linear_forward(p, xo, act, W->w_down, W16->w_down, n, ff, d, 1.0f);
    }
    ops_rmsnorm_forward(p, a->lnf, a->lnf_rstd, a->res + (size_t)c->n_layer * N * d, m->final_norm, n, d, c->norm_eps);

    /* The head runs only on rows that have a target. */
    int nr = 0;
    for (int i = 0; i < n; i++)
        if (targets[i] >= 0) {
            a->rows[nr] = i;
            a->row_targets[nr] = targets[i];
            memcpy(a->h + (size_t)nr * d, a->lnf + (size_t)i * d, (size_t)d * sizeof(float));
            nr++;
        }
    a->n_rows = nr;
    if (nr > 0) {
        ops_linear_forward(p, a->logits, a->h, m->lm_head, m->lm_head16, nr, d, c->vocab, 0.0f);
        model_mask_logits(m, a->logits, nr);
        /* head_dlogp doubles as the row logp / entropy scratch here */
        float *row_logp = a->head_dlogp, *row_ent = entropy ? a->d_res : NULL;
        ops_logp_forward(p, row_logp, row_ent, a->lse, a->logits, a->row_targets, nr, c->vocab, temperature);
        memset(logp, 0, N * sizeof(float));
        if (entropy)
            memset(entropy, 0, N * sizeof(float));
        for (int r = 0; r < nr; r++) {
            logp[a->rows[r]] = row_logp[r];
            if (entropy)
                entropy[a->rows[r]] = row_ent[r];
        }
    } else {
        memset(logp, 0, N * sizeof(float));
        if (entropy)
            memset(entropy, 0, N * sizeof(float));
    }
    a->valid = 1;
    return 0;
}

void model_acts_invalidate(model *m)
{
    if (m->acts)
        m->acts->valid = 0;
}

/* ---- backward ------------------------------------------------------------ */

/* Head: keeps only rows with a nonzero coefficient (moving them to the
 * front of the head buffers), so masked positions cost nothing and
 * contribute exactly nothing. Leaves dL/dlnf in a->d_ln (all N rows). */
static void head_backward(model *m, const float *dlogp)
{
    model_acts *a = m->acts;
    int d = m->cfg.d_model, V = m->cfg.vocab;
    int k = 0;
    for (int r = 0; r < a->n_rows; r++) {
        float g = dlogp[a->rows[r]];
        if (g == 0.0f)
            continue;
        if (k != r) {
            memcpy(a->logits + (size_t)k * V, a->logits + (size_t)r * V, (size_t)V * sizeof(float));
            memcpy(a->h + (size_t)k * d, a->h + (size_t)r * d, (size_t)d * sizeof(float));
            a->lse[k] = a->lse[r];
            a->rows[k] = a->rows[r];
            a->row_targets[k] = a->row_targets[r];
        }
        a->head_dlogp[k] = g;
        k++;
    }
    a->n_rows = k;
    memset(a->d_ln, 0, (size_t)a->N * d * sizeof(float));
    if (k == 0)
        return;
    ops_logp_backward(m->pool, a->logits, a->head_dlogp, a->lse, a->row_targets, k, V, a->temperature);
    float *dh = a->d_res; /* k x d scratch, cleared by the caller afterwards */
    ops_matmul_backward(m->pool, dh, m->glm_head, a->logits, a->h, m->lm_head, k, d, V, 0.0f);
    for (int r = 0; r < k; r++)
        memcpy(a->d_ln + (size_t)a->rows[r] * d, dh + (size_t)r * d, (size_t)d * sizeof(float));
}

int model_backward(model *m, const float *dlogp, char *err)
{
    int rc0 = refuse_bf16(m, "backward", err);
    if (rc0)
        return rc0;
    model_acts *a = m->acts;
    if (!a || !a->valid)
        return rl_err(err, RL_EINVAL, "model_backward: no forward pass to differentiate");
    if (!m->grads) {
        int rc = model_zero_grad(m, err);
        if (rc)
            return rc;
    }
    a->valid = 0; /* the head buffers are consumed */
    const model_config *c = &m->cfg;
    size_t N = (size_t)a->N;
    int n = a->N, d = c->d_model, hd = m->head_dim, nh = c->n_head, nkv = c->n_kv_head;
    int ff = c->d_ff, dq = hd * nh, dkv = hd * nkv;
    mpool *p = m->pool;

    head_backward(m, dlogp);
    memset(a->d_res, 0, N * d * sizeof(float));
    ops_rmsnorm_backward(p, a->d_res, m->gfinal_norm, a->d_ln, a->res + (size_t)c->n_layer * N * d,
                         m->final_norm, a->lnf_rstd, n, d);
    for (int l = c->n_layer - 1; l >= 0; l--) {
        const model_layer *W = &m->layer[l];
        const model_layer *G = &m->glayer[l];
        float *x = a->res + (size_t)l * N * d;
        float *ln1 = a->ln1 + (size_t)l * N * d, *ln1_rstd = a->ln1_rstd + (size_t)l * N;
        float *qraw = a->qraw + (size_t)l * N * dq, *q = a->q + (size_t)l * N * dq;
        float *kraw = a->kraw + (size_t)l * N * dkv, *k = a->k + (size_t)l * N * dkv;
        float *v = a->v + (size_t)l * N * dkv, *att = a->att + (size_t)l * N * dq;
        float *lse = a->att_lse + (size_t)l * N * nh;
        float *mid = a->res_mid + (size_t)l * N * d, *ln2 = a->ln2 + (size_t)l * N * d;
        float *gate = a->gate + (size_t)l * N * ff, *up = a->up + (size_t)l * N * ff;
        float *act = a->act + (size_t)l * N * ff;

        /* MLP branch; d_res holds dL/dres[l+1] = dL/d(mlp out) */
        ops_matmul_backward(p, a->d_act, G->w_down, a->d_res, act, W->w_down, n, ff, d, 0.0f);
        ops_swiglu_backward(p, a->d_gate, a->d_up, a->d_act, gate, up, N * ff);
        ops_cols_join(p, a->fused, (float *const[]){a->d_gate, a->d_up}, (const int[]){ff, ff}, 2, n);
        ops_matmul_backward(p, a->d_ln, G->w_gate, a->fused, ln2, W->w_gate, n, d, 2 * ff, 0.0f);
        ops_rmsnorm_backward(p, a->d_res, G->mlp_norm, a->d_ln, mid, W->mlp_norm, a->ln2_rstd + (size_t)l * N, n, d);

        /* attention branch; d_res now holds dL/dres_mid */
        ops_matmul_backward(p, a->d_att, G->wo, a->d_res, att, W->wo, n, dq, d, 0.0f);
        ops_attention_backward(p, a->d_q, a->d_k, a->d_v, a->d_att, att, lse, q, k, v, a->B, a->T, nh,
                               nkv, hd, a->att_scratch);
        ops_rope_backward(p, a->d_q, a->pos, m->rope_cos, m->rope_sin, n, nh, hd);
        ops_rope_backward(p, a->d_k, a->pos, m->rope_cos, m->rope_sin, n, nkv, hd);
        float *dqraw = a->d_q, *dkraw = a->d_k;
        if (c->qk_norm) {
            dqraw = a->d_att; /* free again after ops_attention_backward */
            dkraw = a->d_kraw;
            memset(dqraw, 0, N * dq * sizeof(float));
            memset(dkraw, 0, N * dkv * sizeof(float));
            ops_rmsnorm_backward(p, dqraw, G->q_norm, a->d_q, qraw, W->q_norm,
                                 a->q_rstd + (size_t)l * N * nh, n * nh, hd);
            ops_rmsnorm_backward(p, dkraw, G->k_norm, a->d_k, kraw, W->k_norm,
                                 a->k_rstd + (size_t)l * N * nkv, n * nkv, hd);
        }
        ops_cols_join(p, a->fused, (float *const[]){dqraw, dkraw, a->d_v}, (const int[]){dq, dkv, dkv}, 3, n);
        if (c->qkv_bias)
            ops_bias_backward(G->bq, a->fused, n, dq + 2 * dkv);
        ops_matmul_backward(p, a->d_ln, G->wq, a->fused, ln1, W->wq, n, d, dq + 2 * dkv, 0.0f);
        ops_rmsnorm_backward(p, a->d_res, G->attn_norm, a->d_ln, x, W->attn_norm, ln1_rstd, n, d);
    }
    ops_embed_backward(m->gwte, a->d_res, a->tokens, n, d);
    return 0;
}
