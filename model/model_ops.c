/* model_ops.c - forward and backward of each operation of the model.
 *
 * One function per op and direction, on flat row-major float buffers.
 * Matrix products go through OpenBLAS sgemm, split across the model's
 * thread pool; the elementwise loops that dominate the rest (exp in the
 * softmaxes, row reductions) are vectorized (model_simd.h).
 */
#include "model/model_ops.h"

#include "common/limits.h"
#include "common/rng.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- vector helpers ------------------------------------------------------
 * The loops that dominate besides sgemm (exp in the softmaxes, row
 * reductions) are written once in model_simd.h with GCC vector extensions
 * and compiled twice: 16 lanes for AVX-512 machines (with fused
 * multiply-adds: the build's -std=c11 otherwise forbids contraction), and
 * 8 lanes with AVX2 / plain clones chosen at load time. The CPU decides
 * once; a machine always runs the same code, so sampling, scoring and
 * training agree bit for bit. (On the 2-core Skylake-X machines here the
 * 16-lane exp is ~3x faster than the 8-lane one.) */

/* Vector values never cross a call boundary (the helpers are inlined), so
 * the AVX calling-convention note does not apply. */
#pragma GCC diagnostic ignored "-Wpsabi"

typedef float v8f __attribute__((vector_size(32)));
typedef int v8i __attribute__((vector_size(32)));
typedef float v16f __attribute__((vector_size(64)));
typedef int v16i __attribute__((vector_size(64)));

#define VW 8
#define VF v8f
#define VI v8i
#define SFX _v8
#define VATTR __attribute__((target_clones("avx2", "default")))
#include "model/model_simd.h"
#undef VW
#undef VF
#undef VI
#undef SFX
#undef VATTR

#if defined(__x86_64__)
#define HAVE_V16 1
#define VW 16
#define VF v16f
#define VI v16i
#define SFX _v16
#define VATTR __attribute__((target("avx512f"), optimize("O2", "fp-contract=fast")))
#include "model/model_simd.h"
#undef VW
#undef VF
#undef VI
#undef SFX
#undef VATTR
#endif

static int use_v16(void)
{
#ifdef HAVE_V16
    static int cached = -1; /* a benign race: every thread computes the same */
    if (cached < 0)
        cached = __builtin_cpu_supports("avx512f") ? 1 : 0;
    return cached;
#else
    return 0;
#endif
}

#ifdef HAVE_V16
#define DISPATCH(name, ...) (use_v16() ? name##_v16(__VA_ARGS__) : name##_v8(__VA_ARGS__))
#else
#define DISPATCH(name, ...) name##_v8(__VA_ARGS__)
#endif

void ops_vexp(float *y, const float *x, int n)
{
    DISPATCH(ops_vexp, y, x, n);
}

static double vexp_sub_sum(float *y, const float *x, float sub, int n)
{
    return DISPATCH(vexp_sub_sum, y, x, sub, n);
}

static double vexp_stats(const float *x, float sub, int n, double *sez)
{
    return DISPATCH(vexp_stats, x, sub, n, sez);
}

static float vmax(const float *x, int n)
{
    return DISPATCH(vmax, x, n);
}

static void vscale(float *x, float s, int n)
{
    DISPATCH(vscale, x, s, n);
}

static double vdot(const float *a, const float *b, int n)
{
    return DISPATCH(vdot, a, b, n);
}

static void vsoftmax_bwd(float *d, const float *p, float D, int n)
{
    DISPATCH(vsoftmax_bwd, d, p, D, n);
}

static double vdot3(const float *w, const float *dy, const float *x, int n)
{
    return DISPATCH(vdot3, w, dy, x, n);
}

static void vswiglu_fwd(float *out, const float *gate, const float *up, int n)
{
    DISPATCH(vswiglu_fwd, out, gate, up, n);
}

static void vswiglu_bwd(float *dgate, float *dup, const float *dout, const float *gate,
                        const float *up, int n)
{
    DISPATCH(vswiglu_bwd, dgate, dup, dout, gate, up, n);
}

void ops_attn_decode(float *out, const float *q, const float *Kt, int ldk, const float *V, int ldv,
                     int nk, int hd, int hpg, float scale, float *S)
{
    DISPATCH(vattn_decode, out, q, Kt, ldk, V, ldv, nk, hd, hpg, scale, S);
}

static void vnorm_bwd(float *dx, float *dw, const float *w, const float *dy, const float *x,
                      float r, float k, int n)
{
    DISPATCH(vnorm_bwd, dx, dw, w, dy, x, r, k, n);
}

/* ---- random numbers ------------------------------------------------------- */

void mrng_seed(mrng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = rl_splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t mrng_next(mrng *r)
{
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

float mrng_uniform(mrng *r)
{
    return (float)(mrng_next(r) >> 40) * (1.0f / 16777216.0f);
}

float mrng_normal(mrng *r)
{
    double u1 = ((double)(mrng_next(r) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
    double u2 = (double)(mrng_next(r) >> 11) * (1.0 / 9007199254740992.0);
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

/* ---- splitting row loops across the pool ----------------------------------- */

typedef void (*range_fn)(void *arg, int lo, int hi, int thread);

typedef struct range_ctx {
    range_fn fn;
    void *arg;
    int n, chunks;
} range_ctx;

static void range_task(void *vctx, int t, int thread)
{
    range_ctx *c = vctx;
    int lo = (int)((long)c->n * t / c->chunks), hi = (int)((long)c->n * (t + 1) / c->chunks);
    if (hi > lo)
        c->fn(c->arg, lo, hi, thread);
}

/* fn over [0, n) in one chunk per thread (a single call when n is small). */
static void parallel_range(mpool *p, int n, int min_chunk, range_fn fn, void *arg)
{
    int chunks = mpool_threads(p);
    if (n < 2 * min_chunk || chunks == 1) {
        fn(arg, 0, n, 0);
        return;
    }
    range_ctx c = {.fn = fn, .arg = arg, .n = n, .chunks = chunks};
    mpool_run(p, chunks, range_task, &c);
}

/* ---- column blocks ----------------------------------------------------------- */

typedef struct cols_args {
    float *const *parts;
    const int *widths;
    int n_parts, total;
    float *fused;
    int join;
} cols_args;

static void cols_rows(void *va, int lo, int hi, int thread)
{
    (void)thread;
    cols_args *a = va;
    for (int i = lo; i < hi; i++) {
        float *row = a->fused + (size_t)i * a->total;
        for (int k = 0, off = 0; k < a->n_parts; off += a->widths[k], k++) {
            float *part = a->parts[k] + (size_t)i * a->widths[k];
            if (a->join)
                memcpy(row + off, part, sizeof(float) * (size_t)a->widths[k]);
            else
                memcpy(part, row + off, sizeof(float) * (size_t)a->widths[k]);
        }
    }
}

void ops_cols_split(mpool *p, float *const *parts, const int *widths, int n_parts, const float *fused, int N)
{
    int total = 0;
    for (int k = 0; k < n_parts; k++)
        total += widths[k];
    cols_args a = {parts, widths, n_parts, total, (float *)fused, 0};
    parallel_range(p, N, 256, cols_rows, &a);
}

void ops_cols_join(mpool *p, float *fused, float *const *parts, const int *widths, int n_parts, int N)
{
    int total = 0;
    for (int k = 0; k < n_parts; k++)
        total += widths[k];
    cols_args a = {parts, widths, n_parts, total, fused, 1};
    parallel_range(p, N, 256, cols_rows, &a);
}

/* ---- biases ------------------------------------------------------------------- */

void ops_bias_forward(float *out, const float *b, int N, int C)
{
    for (int i = 0; i < N; i++) {
        float *row = out + (size_t)i * C;
        for (int c = 0; c < C; c++)
            row[c] += b[c];
    }
}

void ops_bias_backward(float *db, const float *dout, int N, int C)
{
    for (int i = 0; i < N; i++) {
        const float *row = dout + (size_t)i * C;
        for (int c = 0; c < C; c++)
            db[c] += row[c];
    }
}

/* ---- embedding ------------------------------------------------------------ */

void ops_embed_forward(float *out, const int *tokens, const float *wte, int N, int C)
{
    for (int i = 0; i < N; i++)
        memcpy(out + (size_t)i * C, wte + (size_t)tokens[i] * C, sizeof(float) * (size_t)C);
}

void ops_bf16_from_f32(uint16_t *out, const float *in, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &in[i], 4);
        u += 0x7fffu + ((u >> 16) & 1u);
        out[i] = (uint16_t)(u >> 16);
    }
}

typedef uint16_t v16u16 __attribute__((vector_size(32)));
typedef uint32_t v16u32 __attribute__((vector_size(64)));

/* 16 values a step (one AVX-512 register: vpmovzxwd + vpslld; two on AVX2),
 * the tail one by one. */
__attribute__((target_clones("avx512f", "avx2", "default")))
void ops_bf16_to_f32(float *out, const uint16_t *in, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        v16u16 h;
        memcpy(&h, in + i, sizeof h);
        v16u32 w = __builtin_convertvector(h, v16u32) << 16;
        memcpy(out + i, &w, sizeof w);
    }
    for (; i < n; i++) {
        uint32_t u = (uint32_t)in[i] << 16;
        memcpy(&out[i], &u, 4);
    }
}

void ops_embed_forward_any(float *out, const int *tokens, const float *wte, const uint16_t *wte16,
                           int N, int C)
{
    if (!wte16) {
        ops_embed_forward(out, tokens, wte, N, C);
        return;
    }
    for (int i = 0; i < N; i++)
        ops_bf16_to_f32(out + (size_t)i * C, wte16 + (size_t)tokens[i] * C, (size_t)C);
}

void ops_embed_backward(float *dwte, const float *dout, const int *tokens, int N, int C)
{
    for (int i = 0; i < N; i++) {
        float *d = dwte + (size_t)tokens[i] * C;
        const float *g = dout + (size_t)i * C;
        for (int c = 0; c < C; c++)
            d[c] += g[c];
    }
}

/* ---- RMSNorm ---------------------------------------------------------------- */

typedef struct norm_args {
    float *out, *rstd, *dinp, *dw_parts;
    const float *inp, *w, *dout, *rstd_in;
    int C;
    float eps;
} norm_args;

static void rmsnorm_fwd_rows(void *va, int lo, int hi, int thread)
{
    (void)thread;
    norm_args *a = va;
    int C = a->C;
    for (int i = lo; i < hi; i++) {
        const float *x = a->inp + (size_t)i * C;
        float *y = a->out + (size_t)i * C;
        double ss = vdot(x, x, C);
        float r = (float)(1.0 / sqrt(ss / C + a->eps));
        for (int c = 0; c < C; c++)
            y[c] = x[c] * r * a->w[c];
        a->rstd[i] = r;
    }
}

void ops_rmsnorm_forward(mpool *p, float *out, float *rstd, const float *inp, const float *w, int N, int C, float eps)
{
    norm_args a = {.out = out, .rstd = rstd, .inp = inp, .w = w, .C = C, .eps = eps};
    parallel_range(p, N, 64, rmsnorm_fwd_rows, &a);
}

/* y = x r w with r = (mean x^2 + eps)^-1/2:
 * dx = r (w dy) - x r^3 / C * sum(w dy x),  dw = sum over rows of dy x r.
 * Each thread sums dw over its rows into its own slice of dw_parts. */
static void rmsnorm_bwd_rows(void *va, int lo, int hi, int thread)
{
    norm_args *a = va;
    int C = a->C;
    float *dw = a->dw_parts ? a->dw_parts + (size_t)thread * C : NULL;
    for (int i = lo; i < hi; i++) {
        const float *x = a->inp + (size_t)i * C;
        const float *dy = a->dout + (size_t)i * C;
        float *dx = a->dinp + (size_t)i * C;
        float r = a->rstd_in[i];
        double dot = vdot3(a->w, dy, x, C);
        float k = (float)(dot * r * r * r / C);
        vnorm_bwd(dx, dw, a->w, dy, x, r, k, C);
    }
}

void ops_rmsnorm_backward(mpool *p, float *dinp, float *dw, const float *dout, const float *inp,
                          const float *w, const float *rstd, int N, int C)
{
    int nt = mpool_threads(p);
    norm_args a = {.dinp = dinp, .dout = dout, .inp = inp, .w = w, .rstd_in = rstd, .C = C};
    if (dw) {
        a.dw_parts = calloc((size_t)nt * C, sizeof(float));
        if (!a.dw_parts) { /* no room for per-thread sums: one thread does it all */
            a.dw_parts = dw;
            rmsnorm_bwd_rows(&a, 0, N, 0);
            return;
        }
    }
    parallel_range(p, N, 64, rmsnorm_bwd_rows, &a);
    if (dw) {
        for (int t = 0; t < nt; t++)
            for (int c = 0; c < C; c++)
                dw[c] += a.dw_parts[(size_t)t * C + c];
        free(a.dw_parts);
    }
}

/* ---- matmul -------------------------------------------------------------- */

/* Work is split into one chunk per thread along rows (tokens) when there
 * are many, else along output features; each chunk is one sgemm call. */
typedef struct mm_ctx {
    float *out, *dinp, *dW;
    const float *inp, *W, *dout;
    int N, C, OC, chunks;
    float beta;
} mm_ctx;

static void chunk_range(int total, int chunks, int t, int *lo, int *hi)
{
    *lo = (int)((long)total * t / chunks);
    *hi = (int)((long)total * (t + 1) / chunks);
}

static void mm_fwd_rows(void *vctx, int t, int thread)
{
    (void)thread;
    mm_ctx *c = vctx;
    int lo, hi;
    chunk_range(c->N, c->chunks, t, &lo, &hi);
    if (hi > lo)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, hi - lo, c->OC, c->C, 1.0f,
                    c->inp + (size_t)lo * c->C, c->C, c->W, c->C, c->beta,
                    c->out + (size_t)lo * c->OC, c->OC);
}

static void mm_fwd_cols(void *vctx, int t, int thread)
{
    (void)thread;
    mm_ctx *c = vctx;
    int lo, hi;
    chunk_range(c->OC, c->chunks, t, &lo, &hi);
    if (hi > lo)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, c->N, hi - lo, c->C, 1.0f, c->inp,
                    c->C, c->W + (size_t)lo * c->C, c->C, c->beta, c->out + lo, c->OC);
}

/* Rows enough to give every thread a worthwhile sgemm of its own. */
static int split_rows(mpool *p, int N)
{
    return N >= 64 * mpool_threads(p);
}

/* Output features per task when there are few rows (decoding). OpenBLAS
 * 0.3.21 on Skylake-X runs a product without packing the weights (its
 * "small matrix" kernels) only when rows x features <= 1200 and
 * rows x features x inputs <= 1e6 (measured: 8 x 144 x 256 runs at ~3x
 * the speed of 8 x 160 x 256). Packing a whole weight matrix for a handful
 * of rows costs more than the product, so decode-sized products are cut
 * into such pieces. */
static int small_chunk(int N, int C)
{
    long a = 1200L / N, b = 1000000L / ((long)N * C);
    long c = a < b ? a : b;
    if (c >= 16)
        c &= ~15L;
    return c < 8 ? 8 : (int)c;
}

static void mm_fwd_small(void *vctx, int t, int thread)
{
    (void)thread;
    mm_ctx *c = vctx;
    int lo = t * c->chunks, hi = lo + c->chunks < c->OC ? lo + c->chunks : c->OC;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, c->N, hi - lo, c->C, 1.0f, c->inp, c->C,
                c->W + (size_t)lo * c->C, c->C, c->beta, c->out + lo, c->OC);
}

void ops_matmul_forward(mpool *p, float *out, const float *inp, const float *W, int N, int C, int OC, float beta)
{
    mm_ctx c = {.out = out, .inp = inp, .W = W, .N = N, .C = C, .OC = OC, .beta = beta,
                .chunks = mpool_threads(p)};
    if (split_rows(p, N)) {
        mpool_run(p, c.chunks, mm_fwd_rows, &c);
    } else if (N <= 32) {
        c.chunks = small_chunk(N, C); /* here: features per task */
        mpool_run(p, (OC + c.chunks - 1) / c.chunks, mm_fwd_small, &c);
    } else {
        mpool_run(p, c.chunks, mm_fwd_cols, &c);
    }
}

/* fp32 values of one block of bf16 weight rows, per thread: 256 KB, which
 * stays in L2 beside the input rows the sgemm reads, and enough rows (64 of
 * d 1024) that packing the input for each block costs little; at least
 * one row of the widest input (RL_MODEL_DIM_MAX). */
#define MM16_BLOCK_FLOATS 65536
_Static_assert(MM16_BLOCK_FLOATS >= RL_MODEL_DIM_MAX, "a bf16 block holds one row");

typedef struct mm16_ctx {
    float *out;
    const float *inp;
    const uint16_t *W;
    float *scratch; /* MM16_BLOCK_FLOATS per thread */
    int N, C, OC, rows; /* rows: of W per task */
    float beta;
} mm16_ctx;

static void mm16_fwd_block(void *vctx, int t, int thread)
{
    mm16_ctx *c = vctx;
    float *scratch = c->scratch + (size_t)thread * MM16_BLOCK_FLOATS;
    int lo = t * c->rows, hi = lo + c->rows < c->OC ? lo + c->rows : c->OC;
    ops_bf16_to_f32(scratch, c->W + (size_t)lo * c->C, (size_t)(hi - lo) * c->C);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, c->N, hi - lo, c->C, 1.0f, c->inp, c->C,
                scratch, c->C, c->beta, c->out + lo, c->OC);
}

typedef float v16f32 __attribute__((vector_size(64)));

/* Sums of wf * x over 16-wide steps for NN (1..4, a constant once inlined,
 * so the accumulators stay in registers) input rows x, C apart. */
static inline __attribute__((always_inline)) void mm16_dot_group(v16f32 *acc, const uint16_t *w, const float *x,
                                                                 int C, int C16, const int NN)
{
    v16f32 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
    for (int k = 0; k < C16; k += 16) {
        v16u16 h;
        memcpy(&h, w + k, sizeof h);
        v16u32 u = __builtin_convertvector(h, v16u32) << 16;
        v16f32 wf, xv;
        memcpy(&wf, &u, sizeof wf);
        memcpy(&xv, x + k, sizeof xv);
        a0 += wf * xv;
        if (NN > 1) {
            memcpy(&xv, x + (size_t)C + k, sizeof xv);
            a1 += wf * xv;
        }
        if (NN > 2) {
            memcpy(&xv, x + 2 * (size_t)C + k, sizeof xv);
            a2 += wf * xv;
        }
        if (NN > 3) {
            memcpy(&xv, x + 3 * (size_t)C + k, sizeof xv);
            a3 += wf * xv;
        }
    }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
}

/* out[n][o] = dot(inp[n], W[o]) (+ beta out) for rows o in [lo, hi), input
 * rows four at a time: each weight row (a few KB) is read from memory once
 * and widened from L1 for the other groups. */
__attribute__((target_clones("avx512f", "avx2", "default"), optimize("O2", "fp-contract=fast")))
static void mm16_dot_rows(float *out, const float *inp, const uint16_t *W, int N, int C, int OC, int lo,
                          int hi, float beta)
{
    int C16 = C & ~15;
    for (int o = lo; o < hi; o++) {
        const uint16_t *w = W + (size_t)o * C;
        for (int n0 = 0; n0 < N; n0 += 4) {
            int nn = N - n0 < 4 ? N - n0 : 4;
            const float *x = inp + (size_t)n0 * C;
            v16f32 acc[4];
            switch (nn) {
            case 1: mm16_dot_group(acc, w, x, C, C16, 1); break;
            case 2: mm16_dot_group(acc, w, x, C, C16, 2); break;
            case 3: mm16_dot_group(acc, w, x, C, C16, 3); break;
            default: mm16_dot_group(acc, w, x, C, C16, 4); break;
            }
            for (int j = 0; j < nn; j++) {
                float sum = 0.0f;
                for (int l = 0; l < 16; l++)
                    sum += acc[j][l];
                for (int k = C16; k < C; k++) {
                    uint32_t u = (uint32_t)w[k] << 16;
                    float wk;
                    memcpy(&wk, &u, 4);
                    sum += wk * x[(size_t)j * C + k];
                }
                float *y = out + (size_t)(n0 + j) * OC + o;
                *y = beta == 0.0f ? sum : beta * *y + sum;
            }
        }
    }
}

static void mm16_fwd_dot(void *vctx, int t, int thread)
{
    (void)thread;
    mm16_ctx *c = vctx;
    int lo = t * c->rows, hi = lo + c->rows < c->OC ? lo + c->rows : c->OC;
    mm16_dot_rows(c->out, c->inp, c->W, c->N, c->C, c->OC, lo, hi, c->beta);
}

/* Rows up to which a product reads the bf16 weights directly (dot
 * products, one pass over W): decoding. More rows amortize widening a
 * block for sgemm. */
#define MM16_DOT_ROWS_MAX 8

void ops_matmul_forward_bf16(mpool *p, float *out, const float *inp, const uint16_t *W, int N, int C, int OC,
                             float beta)
{
    mm16_ctx c = {.out = out, .inp = inp, .W = W, .N = N, .C = C, .OC = OC, .beta = beta,
                  .rows = MM16_BLOCK_FLOATS / C};
    if (N > MM16_DOT_ROWS_MAX)
        c.scratch = malloc(sizeof(float) * MM16_BLOCK_FLOATS * (size_t)mpool_threads(p));
    if (!c.scratch) { /* few rows, or no memory for the blocks: dot products */
        c.rows = 64;
        mpool_run(p, (OC + c.rows - 1) / c.rows, mm16_fwd_dot, &c);
        return;
    }
    mpool_run(p, (OC + c.rows - 1) / c.rows, mm16_fwd_block, &c);
    free(c.scratch);
}

void ops_linear_forward(mpool *p, float *out, const float *inp, const float *W, const uint16_t *W16, int N,
                        int C, int OC, float beta)
{
    if (W16)
        ops_matmul_forward_bf16(p, out, inp, W16, N, C, OC, beta);
    else
        ops_matmul_forward(p, out, inp, W, N, C, OC, beta);
}

static void mm_bwd_dinp(void *vctx, int t, int thread)
{
    (void)thread;
    mm_ctx *c = vctx;
    int lo, hi;
    chunk_range(c->N, c->chunks, t, &lo, &hi);
    if (hi > lo)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, hi - lo, c->C, c->OC, 1.0f,
                    c->dout + (size_t)lo * c->OC, c->OC, c->W, c->C, c->beta,
                    c->dinp + (size_t)lo * c->C, c->C);
}

static void mm_bwd_dinp_cols(void *vctx, int t, int thread)
{
    (void)thread;
    mm_ctx *c = vctx;
    int lo, hi;
    chunk_range(c->C, c->chunks, t, &lo, &hi);
    if (hi > lo)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, c->N, hi - lo, c->OC, 1.0f, c->dout,
                    c->OC, c->W + lo, c->C, c->beta, c->dinp + lo, c->C);
}

static void mm_bwd_dW(void *vctx, int t, int thread)
{
    (void)thread;
    mm_ctx *c = vctx;
    int lo, hi;
    chunk_range(c->OC, c->chunks, t, &lo, &hi);
    if (hi > lo)
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, hi - lo, c->C, c->N, 1.0f,
                    c->dout + lo, c->OC, c->inp, c->C, 1.0f, c->dW + (size_t)lo * c->C, c->C);
}

void ops_matmul_backward(mpool *p, float *dinp, float *dW, const float *dout, const float *inp,
                         const float *W, int N, int C, int OC, float dinp_beta)
{
    mm_ctx c = {.dinp = dinp, .dW = dW, .dout = dout, .inp = inp, .W = W, .N = N, .C = C,
                .OC = OC, .chunks = mpool_threads(p), .beta = dinp_beta};
    if (dinp)
        mpool_run(p, c.chunks, split_rows(p, N) ? mm_bwd_dinp : mm_bwd_dinp_cols, &c);
    if (dW)
        mpool_run(p, c.chunks, mm_bwd_dW, &c);
}

/* ---- rotary embedding -------------------------------------------------- */

typedef struct rope_args {
    float *x;
    const int *pos;
    const float *cos_t, *sin_t;
    int n_head, hd;
    float sign;
} rope_args;

static void rope_rows(void *va, int lo, int hi, int thread)
{
    (void)thread;
    rope_args *r = va;
    int half = r->hd / 2;
    for (int i = lo; i < hi; i++) {
        const float *cs = r->cos_t + (size_t)r->pos[i] * half;
        const float *sn = r->sin_t + (size_t)r->pos[i] * half;
        for (int h = 0; h < r->n_head; h++) {
            float *a = r->x + ((size_t)i * r->n_head + h) * r->hd;
            float *b = a + half;
            for (int j = 0; j < half; j++) {
                float s = r->sign * sn[j];
                float x0 = a[j], x1 = b[j];
                a[j] = x0 * cs[j] - x1 * s;
                b[j] = x1 * cs[j] + x0 * s;
            }
        }
    }
}

void ops_rope_forward(mpool *p, float *x, const int *pos, const float *cos_t, const float *sin_t,
                      int N, int n_head, int hd)
{
    rope_args r = {x, pos, cos_t, sin_t, n_head, hd, 1.0f};
    parallel_range(p, N, 64, rope_rows, &r);
}

/* The rotation is orthogonal: its gradient is the inverse rotation. */
void ops_rope_backward(mpool *p, float *dx, const int *pos, const float *cos_t, const float *sin_t,
                       int N, int n_head, int hd)
{
    rope_args r = {dx, pos, cos_t, sin_t, n_head, hd, -1.0f};
    parallel_range(p, N, 64, rope_rows, &r);
}

/* ---- SwiGLU --------------------------------------------------------------- */

/* Elementwise over n values, split across threads in chunks. */
#define SWIGLU_CHUNK 4096

typedef struct swiglu_args {
    float *out, *dgate, *dup;
    const float *gate, *up, *dout;
    size_t n;
} swiglu_args;

static void swiglu_fwd_range(void *va, int lo, int hi, int thread)
{
    (void)thread;
    swiglu_args *a = va;
    size_t i0 = (size_t)lo * SWIGLU_CHUNK, i1 = (size_t)hi * SWIGLU_CHUNK;
    i1 = i1 < a->n ? i1 : a->n;
    vswiglu_fwd(a->out + i0, a->gate + i0, a->up + i0, (int)(i1 - i0));
}

void ops_swiglu_forward(mpool *p, float *out, const float *gate, const float *up, size_t n)
{
    swiglu_args a = {.out = out, .gate = gate, .up = up, .n = n};
    parallel_range(p, (int)((n + SWIGLU_CHUNK - 1) / SWIGLU_CHUNK), 2, swiglu_fwd_range, &a);
}

static void swiglu_bwd_range(void *va, int lo, int hi, int thread)
{
    (void)thread;
    swiglu_args *a = va;
    size_t i0 = (size_t)lo * SWIGLU_CHUNK, i1 = (size_t)hi * SWIGLU_CHUNK;
    i1 = i1 < a->n ? i1 : a->n;
    vswiglu_bwd(a->dgate + i0, a->dup + i0, a->dout + i0, a->gate + i0, a->up + i0,
                (int)(i1 - i0));
}

void ops_swiglu_backward(mpool *p, float *dgate, float *dup, const float *dout, const float *gate,
                         const float *up, size_t n)
{
    swiglu_args a = {.dgate = dgate, .dup = dup, .dout = dout, .gate = gate, .up = up, .n = n};
    parallel_range(p, (int)((n + SWIGLU_CHUNK - 1) / SWIGLU_CHUNK), 2, swiglu_bwd_range, &a);
}

/* ---- log-probabilities of targets -------------------------------------- */

typedef struct logp_args {
    float *logp, *ent, *lse, *z;
    const float *dlogp, *lse_in;
    const int *targets;
    int V;
    float temp;
} logp_args;

static void logp_fwd_rows(void *va, int lo, int hi, int thread)
{
    (void)thread;
    logp_args *a = va;
    int V = a->V;
    float inv = 1.0f / a->temp;
    for (int i = lo; i < hi; i++) {
        float *row = a->z + (size_t)i * V;
        if (a->temp != 1.0f)
            vscale(row, inv, V);
        float mx = vmax(row, V);
        double sez = 0.0;
        double sum = vexp_stats(row, mx, V, a->ent ? &sez : NULL);
        float l = mx + (float)log(sum);
        a->lse[i] = l;
        a->logp[i] = a->targets[i] >= 0 ? row[a->targets[i]] - l : 0.0f;
        if (a->ent)
            a->ent[i] = (float)(l - sez / sum);
    }
}

void ops_logp_forward(mpool *p, float *logp, float *ent, float *lse, float *z, const int *targets,
                      int N, int V, float temp)
{
    logp_args a = {.logp = logp, .ent = ent, .lse = lse, .z = z, .targets = targets, .V = V,
                   .temp = temp};
    parallel_range(p, N, 4, logp_fwd_rows, &a);
}

static void logp_bwd_rows(void *va, int lo, int hi, int thread)
{
    (void)thread;
    logp_args *a = va;
    int V = a->V;
    float inv = 1.0f / a->temp;
    for (int i = lo; i < hi; i++) {
        float *row = a->z + (size_t)i * V;
        float g = a->dlogp[i];
        int t = a->targets[i];
        if (g == 0.0f || t < 0) {
            memset(row, 0, sizeof(float) * (size_t)V);
            continue;
        }
        vexp_sub_sum(row, row, a->lse_in[i], V); /* row = softmax */
        vscale(row, -g * inv, V);
        row[t] += g * inv;
    }
}

void ops_logp_backward(mpool *p, float *z, const float *dlogp, const float *lse, const int *targets,
                       int N, int V, float temp)
{
    logp_args a = {.z = z, .dlogp = dlogp, .lse_in = lse, .targets = targets, .V = V,
                   .temp = temp};
    parallel_range(p, N, 4, logp_bwd_rows, &a);
}

/* ---- attention ------------------------------------------------------------ */

/* Query rows are processed in blocks of ATT_BQ, and the query heads that
 * share a kv head are stacked (copied) into one matrix: a block's scores
 * against all keys up to its last row are then one sgemm for the whole
 * group, so the keys are packed once per block instead of once per head.
 * The masked upper triangle of the diagonal block is the only waste. */

size_t ops_attn_scratch_floats(int T, int heads_per_kv, int hd)
{
    size_t rows = (size_t)ATT_BQ * (size_t)heads_per_kv;
    return 2 * rows * (size_t)T + 3 * rows * (size_t)hd;
}

typedef struct att_ctx {
    float *out, *lse, *dq, *dk, *dv;
    const float *q, *k, *v, *dout, *o, *lse_in;
    int B, T, n_head, n_kv, hd;
    float *scratch;
    size_t scratch_stride;
} att_ctx;

/* Copies rows i0..i0+m-1 of the heads h0..h0+hpg-1 of x (row stride
 * ld) into dst as hpg stacked m x hd blocks; unstack does the reverse. */
static void stack_heads(float *dst, const float *x, int i0, int m, int h0, int hpg, int hd, int ld)
{
    for (int k = 0; k < hpg; k++)
        for (int r = 0; r < m; r++)
            memcpy(dst + ((size_t)k * m + r) * hd, x + (size_t)(i0 + r) * ld + (size_t)(h0 + k) * hd,
                   sizeof(float) * (size_t)hd);
}

static void unstack_heads(float *x, const float *src, int i0, int m, int h0, int hpg, int hd,
                          int ld)
{
    for (int k = 0; k < hpg; k++)
        for (int r = 0; r < m; r++)
            memcpy(x + (size_t)(i0 + r) * ld + (size_t)(h0 + k) * hd, src + ((size_t)k * m + r) * hd,
                   sizeof(float) * (size_t)hd);
}

float ops_softmax_row(float *s, int n, int total)
{
    float mx = vmax(s, n);
    double sum = vexp_sub_sum(s, s, mx, n);
    vscale(s, (float)(1.0 / sum), n);
    if (total > n)
        memset(s + n, 0, sizeof(float) * (size_t)(total - n));
    return mx + (float)log(sum);
}

static void att_fwd_task(void *vctx, int task, int thread)
{
    att_ctx *c = vctx;
    int b = task / c->n_kv, g = task % c->n_kv, hd = c->hd, T = c->T;
    int qs = c->n_head * hd, ks = c->n_kv * hd, hpg = c->n_head / c->n_kv, h0 = g * hpg;
    float scale = 1.0f / sqrtf((float)hd);
    float *S = c->scratch + c->scratch_stride * (size_t)thread;
    float *Qs = S + (size_t)2 * ATT_BQ * hpg * T, *Os = Qs + (size_t)ATT_BQ * hpg * hd;
    const float *K = c->k + (size_t)b * T * ks + (size_t)g * hd;
    const float *Vv = c->v + (size_t)b * T * ks + (size_t)g * hd;
    const float *Q = c->q + (size_t)b * T * qs;
    float *O = c->out + (size_t)b * T * qs;
    for (int i0 = 0; i0 < T; i0 += ATT_BQ) {
        int i1 = i0 + ATT_BQ < T ? i0 + ATT_BQ : T, m = i1 - i0, nk = i1;
        stack_heads(Qs, Q, i0, m, h0, hpg, hd, qs);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, hpg * m, nk, hd, scale, Qs, hd, K, ks,
                    0.0f, S, nk);
        for (int k = 0; k < hpg; k++) {
            float *L = c->lse + ((size_t)b * c->n_head + h0 + k) * T;
            for (int r = 0; r < m; r++)
                L[i0 + r] = ops_softmax_row(S + ((size_t)k * m + r) * nk, i0 + r + 1, nk);
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, hpg * m, hd, nk, 1.0f, S, nk, Vv, ks,
                    0.0f, Os, hd);
        unstack_heads(O, Os, i0, m, h0, hpg, hd, qs);
    }
}

void ops_attention_forward(mpool *p, float *out, float *lse, const float *q, const float *k,
                           const float *v, int B, int T, int n_head, int n_kv, int hd,
                           float *scratch)
{
    att_ctx c = {.out = out, .lse = lse, .q = q, .k = k, .v = v, .B = B, .T = T,
                 .n_head = n_head, .n_kv = n_kv, .hd = hd, .scratch = scratch,
                 .scratch_stride = ops_attn_scratch_floats(T, n_head / n_kv, hd)};
    mpool_run(p, B * n_kv, att_fwd_task, &c);
}

/* Backward of O = P V with P = softmax(scale Q K^T), per query block:
 *   P  = exp(scale Q K^T - lse)          (recomputed)
 *   dV += P^T dO,   dP = dO V^T,   dS = P (dP - rowsum(dO O))
 *   dQ = scale dS K,   dK += scale dS^T Q
 * One task owns a (sequence, kv head) pair, so dK and dV of the heads
 * sharing it accumulate without races. */
static void att_bwd_task(void *vctx, int task, int thread)
{
    att_ctx *c = vctx;
    int b = task / c->n_kv, g = task % c->n_kv, hd = c->hd, T = c->T;
    int qs = c->n_head * hd, ks = c->n_kv * hd, hpg = c->n_head / c->n_kv, h0 = g * hpg;
    float scale = 1.0f / sqrtf((float)hd);
    float *P = c->scratch + c->scratch_stride * (size_t)thread;
    float *dP = P + (size_t)ATT_BQ * hpg * T;
    float *Qs = dP + (size_t)ATT_BQ * hpg * T, *dOs = Qs + (size_t)ATT_BQ * hpg * hd;
    float *dQs = dOs + (size_t)ATT_BQ * hpg * hd;
    const float *K = c->k + (size_t)b * T * ks + (size_t)g * hd;
    const float *Vv = c->v + (size_t)b * T * ks + (size_t)g * hd;
    float *dK = c->dk + (size_t)b * T * ks + (size_t)g * hd;
    float *dV = c->dv + (size_t)b * T * ks + (size_t)g * hd;
    size_t off = (size_t)b * T * qs;
    const float *Q = c->q + off, *O = c->o + off, *dO = c->dout + off;
    float *dQ = c->dq + off;
    for (int t = 0; t < T; t++) {
        memset(dK + (size_t)t * ks, 0, sizeof(float) * (size_t)hd);
        memset(dV + (size_t)t * ks, 0, sizeof(float) * (size_t)hd);
    }
    for (int i0 = 0; i0 < T; i0 += ATT_BQ) {
        int i1 = i0 + ATT_BQ < T ? i0 + ATT_BQ : T, m = i1 - i0, nk = i1, M = hpg * m;
        stack_heads(Qs, Q, i0, m, h0, hpg, hd, qs);
        stack_heads(dOs, dO, i0, m, h0, hpg, hd, qs);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, nk, hd, scale, Qs, hd, K, ks, 0.0f,
                    P, nk);
        for (int k = 0; k < hpg; k++) {
            const float *L = c->lse_in + ((size_t)b * c->n_head + h0 + k) * T;
            for (int r = 0; r < m; r++) {
                float *row = P + ((size_t)k * m + r) * nk;
                int n = i0 + r + 1;
                vexp_sub_sum(row, row, L[i0 + r], n);
                if (nk > n)
                    memset(row + n, 0, sizeof(float) * (size_t)(nk - n));
            }
        }
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, nk, hd, M, 1.0f, P, nk, dOs, hd, 1.0f,
                    dV, ks);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, nk, hd, 1.0f, dOs, hd, Vv, ks, 0.0f,
                    dP, nk);
        for (int k = 0; k < hpg; k++)
            for (int r = 0; r < m; r++) {
                size_t i = (size_t)(i0 + r) * qs + (size_t)(h0 + k) * hd;
                float D = (float)vdot(O + i, dO + i, hd);
                size_t row = ((size_t)k * m + r) * nk;
                int n = i0 + r + 1;
                vsoftmax_bwd(dP + row, P + row, D, n);
                if (nk > n)
                    memset(dP + row + n, 0, sizeof(float) * (size_t)(nk - n));
            }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, hd, nk, scale, dP, nk, K, ks, 0.0f,
                    dQs, hd);
        unstack_heads(dQ, dQs, i0, m, h0, hpg, hd, qs);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, nk, hd, M, scale, dP, nk, Qs, hd, 1.0f,
                    dK, ks);
    }
}

void ops_attention_backward(mpool *p, float *dq, float *dk, float *dv, const float *dout,
                            const float *out, const float *lse, const float *q, const float *k,
                            const float *v, int B, int T, int n_head, int n_kv, int hd,
                            float *scratch)
{
    att_ctx c = {.dq = dq, .dk = dk, .dv = dv, .dout = dout, .o = out, .lse_in = lse, .q = q,
                 .k = k, .v = v, .B = B, .T = T, .n_head = n_head, .n_kv = n_kv, .hd = hd,
                 .scratch = scratch,
                 .scratch_stride = ops_attn_scratch_floats(T, n_head / n_kv, hd)};
    mpool_run(p, B * n_kv, att_bwd_task, &c);
}
