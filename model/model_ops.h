/* model_ops.h - the model's operations, one forward and one backward each,
 * on flat float buffers, plus the thread pool they run on.
 *
 * Internal to the model layer (model/) and its tests. Shapes are
 * row-major; N is a number of rows (tokens). Backward functions ACCUMULATE
 * (+=) into parameter gradients and, unless said otherwise, into input
 * gradients too, so residual branches simply add up.
 */
#ifndef RL_MODEL_OPS_H
#define RL_MODEL_OPS_H

#include <stddef.h>
#include <stdint.h>

/* ---- thread pool (model_pool.c) ----------------------------------------
 * A fixed set of workers; mpool_run hands out tasks 0..n_tasks-1 to the
 * caller and the workers and returns when all are done. `thread` is the
 * index (0..n_threads-1) of the thread running the task, for per-thread
 * scratch. A NULL pool runs everything on the caller as thread 0. */
typedef struct mpool mpool;
typedef void (*mpool_fn)(void *ctx, int task, int thread);

int mpool_new(mpool **out, int n_threads, char *err);
void mpool_free(mpool *p);
int mpool_threads(const mpool *p);
void mpool_run(mpool *p, int n_tasks, mpool_fn fn, void *ctx);

/* ---- random numbers ------------------------------------------------------
 * xoshiro256** seeded through splitmix64: fast, deterministic everywhere. */
typedef struct mrng {
    uint64_t s[4];
} mrng;

void mrng_seed(mrng *r, uint64_t seed);
uint64_t mrng_next(mrng *r);
/* Uniform in [0, 1) with 24 random bits. */
float mrng_uniform(mrng *r);
/* Standard normal (Box-Muller). */
float mrng_normal(mrng *r);

/* ---- math ---------------------------------------------------------------- */

/* y[i] = exp(x[i]) for n values (vectorizable; ~2 ulp; exp(-inf) = 0). */
void ops_vexp(float *y, const float *x, int n);

/* ---- ops ----------------------------------------------------------------- */

/* out[N x C] = wte[tokens[i]] rows. */
void ops_embed_forward(float *out, const int *tokens, const float *wte, int N, int C);
void ops_embed_backward(float *dwte, const float *dout, const int *tokens, int N, int C);

/* bfloat16 <-> fp32. To bf16: round to nearest, ties to even (the
 * values are finite). To fp32: exact. */
void ops_bf16_from_f32(uint16_t *out, const float *in, size_t n);
void ops_bf16_to_f32(float *out, const uint16_t *in, size_t n);

/* ops_embed_forward from a bf16 table (wte16) when it is non-NULL, else
 * from wte. */
void ops_embed_forward_any(float *out, const int *tokens, const float *wte, const uint16_t *wte16,
                           int N, int C);

/* out = inp * rstd * w, rstd = 1/sqrt(mean(inp^2) + eps), per row of C. */
void ops_rmsnorm_forward(mpool *p, float *out, float *rstd, const float *inp, const float *w, int N, int C, float eps);
/* dinp += ..., dw += ... (dw may be NULL when the gain is frozen). */
void ops_rmsnorm_backward(mpool *p, float *dinp, float *dw, const float *dout, const float *inp,
                          const float *w, const float *rstd, int N, int C);

/* out[N x OC] = inp[N x C] @ W^T, W is OC x C (nn.Linear layout).
 * beta 0 overwrites out, 1 accumulates. */
void ops_matmul_forward(mpool *p, float *out, const float *inp, const float *W, int N, int C, int OC, float beta);
/* ops_matmul_forward with W in bf16, computed in fp32 without an fp32 copy
 * of W: up to 8 rows (decoding) as dot products that widen W on the fly;
 * more rows by tasks that widen a block of rows of W (256 KB of fp32) into
 * a scratch of their thread and multiply it with sgemm. C <=
 * RL_MODEL_DIM_MAX. */
void ops_matmul_forward_bf16(mpool *p, float *out, const float *inp, const uint16_t *W, int N, int C, int OC,
                             float beta);
/* The bf16 product when W16 is non-NULL, else the fp32 one with W. */
void ops_linear_forward(mpool *p, float *out, const float *inp, const float *W, const uint16_t *W16, int N,
                        int C, int OC, float beta);

/* dinp[N x C] = dinp_beta * dinp + dout @ W (so 1 accumulates, 0
 * overwrites), dW[OC x C] += dout^T @ inp. Either may be NULL. */
void ops_matmul_backward(mpool *p, float *dinp, float *dW, const float *dout, const float *inp,
                         const float *W, int N, int C, int OC, float dinp_beta);

/* A row-major N x (w0 + w1 + ...) matrix <-> separate N x w_k matrices.
 * Weights stored one after another (wq, wk, wv; w_gate, w_up) form one
 * matrix, so their products are a single sgemm into a fused output, split
 * here (and the gradients joined before the fused backward). */
void ops_cols_split(mpool *p, float *const *parts, const int *widths, int n_parts, const float *fused, int N);
void ops_cols_join(mpool *p, float *fused, float *const *parts, const int *widths, int n_parts, int N);

/* out[N x C] += b[C] on every row; db[C] += the column sums of dout. */
void ops_bias_forward(float *out, const float *b, int N, int C);
void ops_bias_backward(float *db, const float *dout, int N, int C);

/* Rotary embedding in place on x[N x n_head x hd], row i at position
 * pos[i]; pairs (j, j + hd/2) rotate by pos * theta^(-2j/hd) (the
 * "rotate half" convention of Hugging Face models). cos/sin tables are
 * max_seq x hd/2. Backward rotates by the opposite angle, in place. */
void ops_rope_forward(mpool *p, float *x, const int *pos, const float *cos_t, const float *sin_t,
                      int N, int n_head, int hd);
void ops_rope_backward(mpool *p, float *dx, const int *pos, const float *cos_t, const float *sin_t,
                       int N, int n_head, int hd);

/* out = silu(gate) * up, elementwise over n values. */
void ops_swiglu_forward(mpool *p, float *out, const float *gate, const float *up, size_t n);
/* dgate, dup are OVERWRITTEN (they are fresh buffers in the model). */
void ops_swiglu_backward(mpool *p, float *dgate, float *dup, const float *dout, const float *gate,
                         const float *up, size_t n);

/* Per row of V logits: z = logits / temp (in place), lse = logsumexp(z),
 * logp = z[target] - lse, ent = lse - sum softmax(z) * z (ent may be NULL).
 * Rows whose target is < 0 get logp 0 (ent still computed). */
void ops_logp_forward(mpool *p, float *logp, float *ent, float *lse, float *z, const int *targets,
                      int N, int V, float temp);
/* Turns z (the tempered logits of ops_logp_forward) in place into dlogits,
 * the gradient wrt the UNtempered logits of sum dlogp[i] * logp[i]:
 * dlogits = dlogp * (onehot(target) - softmax(z)) / temp. A row with
 * dlogp 0 becomes exactly 0. */
void ops_logp_backward(mpool *p, float *z, const float *dlogp, const float *lse, const int *targets,
                       int N, int V, float temp);

/* Causal grouped-query attention over B sequences of T tokens.
 * q, out: [B*T x n_head*hd]; k, v: [B*T x n_kv*hd]; lse: [B x n_head x T]
 * (the softmax normalizer of each row, kept for the backward pass, which
 * recomputes the scores instead of storing T x T matrices).
 * scratch: per thread, ops_attn_scratch_floats(T, n_head / n_kv, hd) floats. */
#define ATT_BQ 64 /* query rows per attention block */
size_t ops_attn_scratch_floats(int T, int heads_per_kv, int hd);
/* Softmax in place over the first n of total entries (the rest become 0);
 * returns log of the normalizer (the row's logsumexp). */
float ops_softmax_row(float *s, int n, int total);
void ops_attention_forward(mpool *p, float *out, float *lse, const float *q, const float *k,
                           const float *v, int B, int T, int n_head, int n_kv, int hd,
                           float *scratch);
/* dq is OVERWRITTEN; dk, dv are OVERWRITTEN. */
void ops_attention_backward(mpool *p, float *dq, float *dk, float *dv, const float *dout,
                            const float *out, const float *lse, const float *q, const float *k,
                            const float *v, int B, int T, int n_head, int n_kv, int hd,
                            float *scratch);

/* Decoding attention of one query row: the hpg heads q[hpg x hd] sharing
 * a kv head, against nk cached keys stored transposed (Kt: hd rows of
 * ldk) and values stored as rows (V: nk rows of ldv). S: hpg x nk
 * scratch. out: hpg x hd. */
void ops_attn_decode(float *out, const float *q, const float *Kt, int ldk, const float *V, int ldv,
                     int nk, int hd, int hpg, float scale, float *S);

/* ---- sampling (model_sample.c) ------------------------------------------ */

#define MODEL_TOPP_SCRATCH 2048 /* doubles of scratch for model_draw_token */

/* Draws a token from the normalized distribution prob[V] restricted to
 * its top-p set (the smallest set of most likely tokens whose mass
 * reaches top_p; tokens tied with the least likely one are kept too; all
 * tokens when top_p >= 1), with u uniform in [0, 1): walks ids in order. */
int model_draw_token(const float *prob, int V, float top_p, float u, double *scratch);

/* ---- model internals shared by model*.c ------------------------------- */
struct model;
/* 1 if a safetensors header's "shape" array is the tensor's shape. */
struct cJSON;
struct model_tensor;
int model_shape_matches(const struct model_tensor *t, const struct cJSON *shape);
/* Forgets the activations of the last model_forward (model_backward will
 * then refuse): scoring reuses the training buffers. */
void model_acts_invalidate(struct model *m);

#endif
