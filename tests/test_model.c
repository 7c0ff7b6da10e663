/* test_model.c - the built-in model: gradient checks of every op and of the
 * whole model against finite differences, masking, sampling vs scoring,
 * checkpoints (round trip and every kind of bad file), AdamW, bf16
 * weights, and `grpo generate`. */
#include "model/optim.h"
#include "model/blascore.h"
#include "model/model.h"
#include "model/model_ops.h"

#include "common/err.h"
#include "common/fsutil.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- helpers ---------------------------------------------------------------- */

static void fill_normal(float *x, size_t n, float std, uint64_t seed)
{
    mrng r;
    mrng_seed(&r, seed);
    for (size_t i = 0; i < n; i++)
        x[i] = std * mrng_normal(&r);
}

static double dot_d(const float *a, const float *b, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += (double)a[i] * b[i];
    return s;
}

typedef double (*loss_fn)(void *ctx);

/* Central differences on up to max_checks entries of x against grad.
 * Returns the number of entries that disagree beyond atol + rtol*|g|. */
static int gradcheck(const char *what, float *x, const float *grad, size_t n, loss_fn f, void *ctx,
                     float eps, double rtol, double atol, size_t max_checks)
{
    size_t stride = n > max_checks ? n / max_checks : 1;
    int bad = 0;
    for (size_t i = 0; i < n; i += stride) {
        float old = x[i];
        float xp = old + eps, xm = old - eps;
        x[i] = xp;
        double lp = f(ctx);
        x[i] = xm;
        double lm = f(ctx);
        x[i] = old;
        double num = (lp - lm) / ((double)xp - (double)xm);
        double a = grad[i];
        double scale = fabs(num) > fabs(a) ? fabs(num) : fabs(a);
        if (!(fabs(num - a) <= atol + rtol * scale)) {
            if (bad < 5)
                fprintf(stderr, "gradcheck %s[%zu]: analytic %.6g numeric %.6g\n", what, i, a, num);
            bad++;
        }
    }
    return bad;
}

/* ---- ops_vexp ------------------------------------------------------------------- */

START_TEST(test_vexp_accuracy)
{
    enum { n = 2003 };
    float x[n], y[n];
    for (int i = 0; i < n; i++)
        x[i] = -87.0f + 175.0f * i / (n - 1);
    ops_vexp(y, x, n);
    double worst = 0.0;
    for (int i = 0; i < n; i++) {
        double ref = exp((double)x[i]);
        double rel = fabs(y[i] - ref) / ref;
        worst = rel > worst ? rel : worst;
    }
    ck_assert_msg(worst < 5e-7, "ops_vexp relative error %g", worst);
    float z[3] = {-INFINITY, -100.0f, 0.0f};
    ops_vexp(z, z, 3);
    ck_assert(z[0] == 0.0f && z[1] == 0.0f && z[2] == 1.0f);
}
END_TEST

/* ---- per-op gradient checks ------------------------------------------------ */

typedef struct op_ctx {
    int N, C, OC, V, B, T, nh, nkv, hd;
    float *a, *b, *w, *out, *aux, *R, *scratch, *cos_t, *sin_t;
    int *idx;
    float temp;
    mpool *pool;
} op_ctx;

static double loss_rmsnorm(void *v)
{
    op_ctx *c = v;
    ops_rmsnorm_forward(c->pool, c->out, c->aux, c->a, c->w, c->N, c->C, 1e-5f);
    return dot_d(c->out, c->R, (size_t)c->N * c->C);
}

START_TEST(test_grad_rmsnorm)
{
    op_ctx c = {.N = 5, .C = 12};
    size_t n = (size_t)c.N * c.C;
    float a[60], w[12], out[60], aux[5], R[60], da[60] = {0}, dw[12] = {0};
    fill_normal(a, n, 1.0f, 1);
    fill_normal(w, 12, 1.0f, 2);
    fill_normal(R, n, 1.0f, 3);
    c.a = a, c.w = w, c.out = out, c.aux = aux, c.R = R;
    loss_rmsnorm(&c);
    ops_rmsnorm_backward(c.pool, da, dw, R, a, w, aux, c.N, c.C);
    ck_assert_int_eq(gradcheck("rmsnorm.x", a, da, n, loss_rmsnorm, &c, 1e-2f, 1e-2, 1e-3, 60), 0);
    ck_assert_int_eq(gradcheck("rmsnorm.w", w, dw, 12, loss_rmsnorm, &c, 1e-2f, 1e-2, 1e-3, 12), 0);
}
END_TEST

static double loss_matmul(void *v)
{
    op_ctx *c = v;
    ops_matmul_forward(c->pool, c->out, c->a, c->w, c->N, c->C, c->OC, 0.0f);
    return dot_d(c->out, c->R, (size_t)c->N * c->OC);
}

static void check_matmul(int N, int C, int OC, int threads)
{
    char err[RL_ERR_MAX];
    op_ctx c = {.N = N, .C = C, .OC = OC};
    ck_assert_int_eq(mpool_new(&c.pool, threads, err), 0);
    size_t na = (size_t)N * C, nw = (size_t)OC * C, no = (size_t)N * OC;
    float *a = malloc(na * 4), *w = malloc(nw * 4), *out = malloc(no * 4), *R = malloc(no * 4);
    float *da = calloc(na, 4), *dw = calloc(nw, 4);
    fill_normal(a, na, 1.0f, 4);
    fill_normal(w, nw, 1.0f, 5);
    fill_normal(R, no, 1.0f, 6);
    c.a = a, c.w = w, c.out = out, c.R = R;
    loss_matmul(&c);
    /* the product itself, against a plain triple loop */
    for (int i = 0; i < N; i += 7)
        for (int o = 0; o < OC; o++) {
            double s = dot_d(a + (size_t)i * C, w + (size_t)o * C, (size_t)C);
            ck_assert(fabs(s - out[(size_t)i * OC + o]) < 1e-4 * (1 + fabs(s)));
        }
    ops_matmul_backward(c.pool, da, dw, R, a, w, N, C, OC, 1.0f);
    ck_assert_int_eq(gradcheck("matmul.x", a, da, na, loss_matmul, &c, 1e-2f, 1e-2, 2e-3, 80), 0);
    ck_assert_int_eq(gradcheck("matmul.W", w, dw, nw, loss_matmul, &c, 1e-2f, 1e-2, 2e-3, 80), 0);
    free(a), free(w), free(out), free(R), free(da), free(dw);
    mpool_free(c.pool);
}

START_TEST(test_grad_matmul)
{
    check_matmul(5, 7, 9, 1);
    check_matmul(5, 7, 9, 2);     /* few rows: split over output features */
    check_matmul(150, 16, 12, 2); /* many rows: split over rows */
}
END_TEST

/* Decode-sized products (1-8 rows; on AVX-512 machines a kernel of their
 * own, in blocks of 4 x 4 with tails) against a plain loop, overwriting
 * (beta 0, over NaN garbage) and accumulating (beta 1). */
START_TEST(test_matmul_decode_sizes)
{
    char err[RL_ERR_MAX];
    mpool *pool;
    ck_assert_int_eq(mpool_new(&pool, 2, err), 0);
    const int Cs[] = {32, 48, 256}, OCs[] = {4, 9, 131, 260};
    for (int N = 1; N <= 8; N++)
        for (int ci = 0; ci < 3; ci++)
            for (int oi = 0; oi < 4; oi++) {
                int C = Cs[ci], OC = OCs[oi];
                size_t na = (size_t)N * C, nw = (size_t)OC * C, no = (size_t)N * OC;
                float *a = malloc(na * 4), *w = malloc(nw * 4), *out = malloc(no * 4);
                float *prev = malloc(no * 4);
                fill_normal(a, na, 1.0f, 7 + (uint64_t)N);
                fill_normal(w, nw, 1.0f, 8);
                fill_normal(prev, no, 1.0f, 9);
                for (size_t k = 0; k < no; k++)
                    out[k] = NAN;
                ops_matmul_forward(pool, out, a, w, N, C, OC, 0.0f);
                for (int i = 0; i < N; i++)
                    for (int o = 0; o < OC; o++) {
                        double s = dot_d(a + (size_t)i * C, w + (size_t)o * C, (size_t)C);
                        ck_assert_msg(fabs(s - out[(size_t)i * OC + o]) < 1e-4 * (1 + fabs(s)),
                                      "N %d C %d OC %d row %d col %d: %g vs %g", N, C, OC, i, o,
                                      out[(size_t)i * OC + o], s);
                    }
                memcpy(out, prev, no * 4);
                ops_matmul_forward(pool, out, a, w, N, C, OC, 1.0f);
                for (int i = 0; i < N; i++)
                    for (int o = 0; o < OC; o++) {
                        size_t k = (size_t)i * OC + o;
                        double s = prev[k] + dot_d(a + (size_t)i * C, w + (size_t)o * C, (size_t)C);
                        ck_assert(fabs(s - out[k]) < 1e-4 * (1 + fabs(s)));
                    }
                free(a), free(w), free(out), free(prev);
            }
    mpool_free(pool);
}
END_TEST

static void make_rope(op_ctx *c, int max_pos, float theta)
{
    int half = c->hd / 2;
    c->cos_t = malloc(sizeof(float) * max_pos * half);
    c->sin_t = malloc(sizeof(float) * max_pos * half);
    for (int p = 0; p < max_pos; p++)
        for (int j = 0; j < half; j++) {
            double ang = p * pow(theta, -2.0 * j / c->hd);
            c->cos_t[p * half + j] = (float)cos(ang);
            c->sin_t[p * half + j] = (float)sin(ang);
        }
}

static double loss_rope(void *v)
{
    op_ctx *c = v;
    size_t n = (size_t)c->N * c->nh * c->hd;
    memcpy(c->out, c->a, n * 4);
    ops_rope_forward(c->pool, c->out, c->idx, c->cos_t, c->sin_t, c->N, c->nh, c->hd);
    return dot_d(c->out, c->R, n);
}

START_TEST(test_grad_rope)
{
    op_ctx c = {.N = 6, .nh = 2, .hd = 8};
    make_rope(&c, 40, 10000.0f);
    int pos[6] = {0, 1, 5, 17, 33, 39};
    size_t n = 6 * 2 * 8;
    float a[96], out[96], R[96], da[96];
    fill_normal(a, n, 1.0f, 7);
    fill_normal(R, n, 1.0f, 8);
    c.a = a, c.out = out, c.R = R, c.idx = pos;
    loss_rope(&c);
    /* position 0 is the identity; rotation keeps norms */
    ck_assert(fabs(out[0] - a[0]) < 1e-6);
    ck_assert(fabs(dot_d(out + 80, out + 80, 16) - dot_d(a + 80, a + 80, 16)) < 1e-4);
    memcpy(da, R, sizeof da);
    ops_rope_backward(NULL, da, pos, c.cos_t, c.sin_t, c.N, c.nh, c.hd);
    ck_assert_int_eq(gradcheck("rope.x", a, da, n, loss_rope, &c, 1e-2f, 1e-2, 1e-3, 96), 0);
    free(c.cos_t), free(c.sin_t);
}
END_TEST

static double loss_swiglu(void *v)
{
    op_ctx *c = v;
    ops_swiglu_forward(c->pool, c->out, c->a, c->b, (size_t)c->N);
    return dot_d(c->out, c->R, (size_t)c->N);
}

START_TEST(test_grad_swiglu)
{
    enum { n = 1100 }; /* more than one internal chunk */
    static float g[n], u[n], out[n], R[n], dg[n], du[n];
    fill_normal(g, n, 2.0f, 9);
    fill_normal(u, n, 1.0f, 10);
    fill_normal(R, n, 1.0f, 11);
    op_ctx c = {.N = n, .a = g, .b = u, .out = out, .R = R};
    loss_swiglu(&c);
    ck_assert(fabs(out[3] - g[3] / (1 + exp(-g[3])) * u[3]) < 1e-5);
    ops_swiglu_backward(c.pool, dg, du, R, g, u, n);
    ck_assert_int_eq(gradcheck("swiglu.gate", g, dg, n, loss_swiglu, &c, 1e-2f, 1e-2, 1e-3, 100), 0);
    ck_assert_int_eq(gradcheck("swiglu.up", u, du, n, loss_swiglu, &c, 1e-2f, 1e-2, 1e-3, 100), 0);
}
END_TEST

static double loss_logp(void *v)
{
    op_ctx *c = v;
    size_t n = (size_t)c->N * c->V;
    memcpy(c->out, c->a, n * 4);
    float logp[8], lse[8], ent[8];
    ops_logp_forward(c->pool, logp, ent, lse, c->out, c->idx, c->N, c->V, c->temp);
    return dot_d(logp, c->R, (size_t)c->N);
}

START_TEST(test_grad_logp)
{
    enum { N = 5, V = 37 };
    float a[N * V], out[N * V], dl[N] = {0.7f, -1.3f, 0.0f, 2.0f, 0.5f};
    int tg[N] = {3, 36, 5, 0, -1};
    fill_normal(a, N * V, 2.0f, 12);
    op_ctx c = {.N = N, .V = V, .a = a, .out = out, .R = dl, .idx = tg, .temp = 0.7f};
    loss_logp(&c);
    /* logp, lse and entropy against double references */
    memcpy(out, a, sizeof a);
    float logp[N], lse[N], ent[N];
    ops_logp_forward(NULL, logp, ent, lse, out, tg, N, V, 0.7f);
    for (int i = 0; i < N; i++) {
        double mx = -1e30, s = 0, sz = 0;
        for (int j = 0; j < V; j++)
            mx = fmax(mx, a[i * V + j] / 0.7);
        for (int j = 0; j < V; j++) {
            double z = a[i * V + j] / 0.7;
            s += exp(z - mx);
            sz += exp(z - mx) * z;
        }
        double l = mx + log(s);
        ck_assert(fabs(lse[i] - l) < 1e-4);
        if (tg[i] >= 0)
            ck_assert(fabs(logp[i] - (a[i * V + tg[i]] / 0.7 - l)) < 1e-4);
        else
            ck_assert(logp[i] == 0.0f);
        ck_assert(fabs(ent[i] - (l - sz / s)) < 1e-4);
    }
    float da[N * V];
    memcpy(da, out, sizeof da);
    ops_logp_backward(NULL, da, dl, lse, tg, N, V, 0.7f);
    for (int j = 0; j < V; j++) /* zero coefficient or no target: exactly zero */
        ck_assert(da[2 * V + j] == 0.0f && da[4 * V + j] == 0.0f);
    ck_assert_int_eq(gradcheck("logp.logits", a, da, N * V, loss_logp, &c, 1e-2f, 1e-2, 1e-3, 200),
                     0);
}
END_TEST

static double loss_attention(void *v)
{
    op_ctx *c = v;
    float *q = c->a, *k = q + (size_t)c->B * c->T * c->nh * c->hd;
    float *vv = k + (size_t)c->B * c->T * c->nkv * c->hd;
    ops_attention_forward(c->pool, c->out, c->aux, q, k, vv, c->B, c->T, c->nh, c->nkv, c->hd, c->scratch);
    return dot_d(c->out, c->R, (size_t)c->B * c->T * c->nh * c->hd);
}

START_TEST(test_grad_attention)
{
    char err[RL_ERR_MAX];
    /* T crosses the 64-row query block; 2 query heads share each kv head */
    op_ctx c = {.B = 2, .T = 70, .nh = 4, .nkv = 2, .hd = 8};
    ck_assert_int_eq(mpool_new(&c.pool, 2, err), 0);
    size_t nq = (size_t)c.B * c.T * c.nh * c.hd, nk = (size_t)c.B * c.T * c.nkv * c.hd;
    size_t n = nq + 2 * nk;
    float *x = malloc(n * 4), *dx = malloc(n * 4), *out = malloc(nq * 4), *R = malloc(nq * 4);
    float *lse = malloc(sizeof(float) * c.B * c.nh * c.T);
    c.scratch = malloc(2 * ops_attn_scratch_floats(c.T, c.nh / c.nkv, c.hd) * 4);
    fill_normal(x, n, 1.0f, 13);
    fill_normal(R, nq, 1.0f, 14);
    c.a = x, c.out = out, c.R = R, c.aux = lse;
    loss_attention(&c);
    /* row 0 attends only to itself: out = v[0] */
    float *v0 = x + nq + nk;
    for (int d = 0; d < c.hd; d++)
        ck_assert(fabs(out[d] - v0[d]) < 1e-5);
    /* one late row against a direct softmax */
    {
        int b = 1, t = 66, h = 3, g = h / 2;
        double sc[70], mx = -1e30, s = 0;
        for (int j = 0; j <= t; j++) {
            sc[j] = dot_d(x + ((size_t)(b * c.T + t) * c.nh + h) * c.hd,
                          x + nq + ((size_t)(b * c.T + j) * c.nkv + g) * c.hd, (size_t)c.hd) /
                    sqrt(8.0);
            mx = fmax(mx, sc[j]);
        }
        for (int j = 0; j <= t; j++)
            s += exp(sc[j] - mx);
        for (int d = 0; d < c.hd; d++) {
            double o = 0;
            for (int j = 0; j <= t; j++)
                o += exp(sc[j] - mx) / s * v0[((size_t)(b * c.T + j) * c.nkv + g) * c.hd + d];
            ck_assert(fabs(o - out[((size_t)(b * c.T + t) * c.nh + h) * c.hd + d]) < 1e-5);
        }
    }
    ops_attention_backward(c.pool, dx, dx + nq, dx + nq + nk, R, out, lse, x, x + nq, x + nq + nk, c.B,
                           c.T, c.nh, c.nkv, c.hd, c.scratch);
    ck_assert_int_eq(gradcheck("attn.q", x, dx, nq, loss_attention, &c, 1e-2f, 2e-2, 2e-3, 150), 0);
    ck_assert_int_eq(
        gradcheck("attn.k", x + nq, dx + nq, nk, loss_attention, &c, 1e-2f, 2e-2, 2e-3, 150), 0);
    ck_assert_int_eq(gradcheck("attn.v", x + nq + nk, dx + nq + nk, nk, loss_attention, &c, 1e-2f,
                               2e-2, 2e-3, 150),
                     0);
    free(x), free(dx), free(out), free(R), free(lse), free(c.scratch);
    mpool_free(c.pool);
}
END_TEST

static double loss_embed(void *v)
{
    op_ctx *c = v;
    ops_embed_forward(c->out, c->idx, c->w, c->N, c->C);
    return dot_d(c->out, c->R, (size_t)c->N * c->C);
}

START_TEST(test_grad_embed)
{
    int tok[4] = {2, 0, 2, 3};
    float wte[4 * 3], out[12], R[12], dwte[12] = {0};
    fill_normal(wte, 12, 1.0f, 15);
    fill_normal(R, 12, 1.0f, 16);
    op_ctx c = {.N = 4, .C = 3, .idx = tok, .w = wte, .out = out, .R = R};
    loss_embed(&c);
    ck_assert(out[0] == wte[6] && out[3] == wte[0]);
    ops_embed_backward(dwte, R, tok, 4, 3);
    /* row 2 is read twice (gradients add up), row 1 never (stays 0) */
    ck_assert(dwte[3] == 0.0f && dwte[4] == 0.0f && dwte[5] == 0.0f);
    ck_assert_int_eq(gradcheck("embed.wte", wte, dwte, 12, loss_embed, &c, 1e-2f, 1e-3, 1e-4, 12), 0);
}
END_TEST


/* The row-parallel ops give the same results on 2 threads as on one. */
START_TEST(test_ops_threads_agree)
{
    char err[RL_ERR_MAX];
    mpool *pool;
    ck_assert_int_eq(mpool_new(&pool, 2, err), 0);
    enum { N = 300, C = 64, V = 100, NL = 40 };
    size_t n = (size_t)N * C;
    float *x = malloc(n * 4), *w = malloc(C * 4), *dy = malloc(n * 4);
    float *y1 = malloc(n * 4), *y2 = malloc(n * 4), r1[N], r2[N];
    float *dx1 = calloc(n, 4), *dx2 = calloc(n, 4), dw1[C] = {0}, dw2[C] = {0};
    fill_normal(x, n, 1.0f, 40);
    fill_normal(w, C, 1.0f, 41);
    fill_normal(dy, n, 1.0f, 42);
    ops_rmsnorm_forward(NULL, y1, r1, x, w, N, C, 1e-6f);
    ops_rmsnorm_forward(pool, y2, r2, x, w, N, C, 1e-6f);
    ck_assert_int_eq(memcmp(y1, y2, n * 4), 0);
    ops_rmsnorm_backward(NULL, dx1, dw1, dy, x, w, r1, N, C);
    ops_rmsnorm_backward(pool, dx2, dw2, dy, x, w, r2, N, C);
    ck_assert_int_eq(memcmp(dx1, dx2, n * 4), 0);
    for (int c = 0; c < C; c++)
        ck_assert(fabsf(dw1[c] - dw2[c]) <= 1e-4f * (1.0f + fabsf(dw1[c])));
    size_t ns = n - 5; /* not a multiple of the internal chunk */
    ops_swiglu_forward(NULL, y1, x, dy, ns);
    ops_swiglu_forward(pool, y2, x, dy, ns);
    ck_assert_int_eq(memcmp(y1, y2, ns * 4), 0);
    float *cs = malloc(N * 8 * 4), *sn = malloc(N * 8 * 4);
    int pos[N];
    for (int i = 0; i < N; i++)
        pos[i] = i;
    for (int i = 0; i < N * 8; i++) {
        cs[i] = cosf(0.01f * i);
        sn[i] = sinf(0.01f * i);
    }
    memcpy(y1, x, n * 4);
    memcpy(y2, x, n * 4);
    ops_rope_forward(NULL, y1, pos, cs, sn, N, 4, 16);
    ops_rope_forward(pool, y2, pos, cs, sn, N, 4, 16);
    ck_assert_int_eq(memcmp(y1, y2, n * 4), 0);
    int tg[NL];
    float lp1[NL], lp2[NL], l1[NL], l2[NL], e1[NL], e2[NL], g[NL];
    for (int i = 0; i < NL; i++) {
        tg[i] = (i * 7) % V;
        g[i] = (i % 5) ? 0.3f : 0.0f;
    }
    memcpy(y1, x, (size_t)NL * V * 4);
    memcpy(y2, x, (size_t)NL * V * 4);
    ops_logp_forward(NULL, lp1, e1, l1, y1, tg, NL, V, 0.8f);
    ops_logp_forward(pool, lp2, e2, l2, y2, tg, NL, V, 0.8f);
    ck_assert_int_eq(memcmp(lp1, lp2, sizeof lp1), 0);
    ck_assert_int_eq(memcmp(e1, e2, sizeof e1), 0);
    ops_logp_backward(NULL, y1, g, l1, tg, NL, V, 0.8f);
    ops_logp_backward(pool, y2, g, l2, tg, NL, V, 0.8f);
    ck_assert_int_eq(memcmp(y1, y2, (size_t)NL * V * 4), 0);
    free(x), free(w), free(dy), free(y1), free(y2), free(dx1), free(dx2), free(cs), free(sn);
    mpool_free(pool);
}
END_TEST

/* ---- whole model -------------------------------------------------------------- */

static void tiny_config(model_config *c)
{
    model_config_default(c);
    c->vocab = 11;
    c->d_model = 8;
    c->n_layer = 2;
    c->n_head = 2;
    c->n_kv_head = 1;
    c->d_ff = 12;
    c->max_seq = 16;
    c->rope_theta = 10000.0f;
}

typedef struct whole_ctx {
    model *m;
    int *tok, *tgt, B, T;
    float *dlogp, *logp;
} whole_ctx;

static double loss_whole(void *v)
{
    whole_ctx *c = v;
    char err[RL_ERR_MAX];
    ck_assert_int_eq(model_forward(c->m, c->tok, c->tgt, c->B, c->T, 0.9f, c->logp, NULL, err), 0);
    return dot_d(c->logp, c->dlogp, (size_t)c->B * c->T);
}

/* variant 1: the Qwen2 / Llama parts too: a head_dim other than
 * d_model / n_head, an untied head and q/k/v biases. */
static void whole_model_check(int qk_norm, int variant)
{
    char err[RL_ERR_MAX];
    model_config cfg;
    tiny_config(&cfg);
    cfg.qk_norm = qk_norm;
    if (variant) {
        cfg.head_dim = 6;
        cfg.untied = 1;
        cfg.qkv_bias = !qk_norm;
    }
    model_opts mo = {.n_threads = 2};
    model *m;
    ck_assert_int_eq(model_new(&m, &cfg, &mo, err), 0);
    /* larger weights than the 0.02 init so every path carries signal */
    fill_normal(m->params, m->n_params, 0.4f, 17);
    for (int i = 0; i < m->n_tensors; i++)
        if (m->tensors[i].is_norm)
            for (size_t j = 0; j < m->tensors[i].numel; j++)
                m->params[m->tensors[i].offset + j] += 1.0f;
    enum { B = 2, T = 7 };
    int tok[B * T], tgt[B * T];
    float dl[B * T], logp[B * T];
    mrng r;
    mrng_seed(&r, 18);
    for (int i = 0; i < B * T; i++) {
        tok[i] = (int)(mrng_next(&r) % 11);
        dl[i] = mrng_normal(&r);
    }
    for (int i = 0; i < B * T; i++)
        tgt[i] = (i % T == T - 1) ? -1 : tok[i + 1];
    dl[3] = 0.0f; /* a masked position */
    whole_ctx c = {.m = m, .tok = tok, .tgt = tgt, .B = B, .T = T, .dlogp = dl, .logp = logp};
    loss_whole(&c);
    ck_assert_int_eq(model_zero_grad(m, err), 0);
    ck_assert_int_eq(model_backward(m, dl, err), 0);
    float *g = malloc(m->n_params * 4);
    memcpy(g, m->grads, m->n_params * 4);
    int bad = 0;
    for (int i = 0; i < m->n_tensors; i++) {
        const model_tensor *t = &m->tensors[i];
        bad += gradcheck(t->name, m->params + t->offset, g + t->offset, t->numel, loss_whole, &c,
                         4e-3f, 2e-2, 3e-3, 40);
    }
    ck_assert_int_eq(bad, 0);
    free(g);
    model_free(m);
}

START_TEST(test_grad_whole_model)
{
    whole_model_check(1, 0);
    whole_model_check(0, 0);
    whole_model_check(1, 1);
    whole_model_check(0, 1);
}
END_TEST

/* A position with coefficient 0 contributes exactly nothing: the gradients
 * are bitwise the same whatever its target is, and an all-zero coefficient
 * vector gives all-zero gradients. */
START_TEST(test_masked_tokens_zero_grad)
{
    char err[RL_ERR_MAX];
    model_config cfg;
    tiny_config(&cfg);
    model *m;
    ck_assert_int_eq(model_new(&m, &cfg, NULL, err), 0);
    model_random_init(m, 3);
    enum { B = 2, T = 8 };
    int tok[B * T], tgt[B * T];
    float dl[B * T], logp[B * T];
    for (int i = 0; i < B * T; i++) {
        tok[i] = (i * 7 + 3) % 11;
        tgt[i] = (i * 5 + 1) % 11;
        dl[i] = (i % 3 == 0) ? 0.0f : -1.0f / (B * T);
    }
    ck_assert_int_eq(model_forward(m, tok, tgt, B, T, 1.0f, logp, NULL, err), 0);
    ck_assert_int_eq(model_zero_grad(m, err), 0);
    ck_assert_int_eq(model_backward(m, dl, err), 0);
    float *g1 = malloc(m->n_params * 4);
    memcpy(g1, m->grads, m->n_params * 4);
    for (int i = 0; i < B * T; i += 3)
        tgt[i] = (tgt[i] + 4) % 11; /* change only masked targets */
    ck_assert_int_eq(model_forward(m, tok, tgt, B, T, 1.0f, logp, NULL, err), 0);
    ck_assert_int_eq(model_zero_grad(m, err), 0);
    ck_assert_int_eq(model_backward(m, dl, err), 0);
    ck_assert_int_eq(memcmp(g1, m->grads, m->n_params * 4), 0);
    float zero[B * T] = {0};
    ck_assert_int_eq(model_forward(m, tok, tgt, B, T, 1.0f, logp, NULL, err), 0);
    ck_assert_int_eq(model_zero_grad(m, err), 0);
    ck_assert_int_eq(model_backward(m, zero, err), 0);
    for (size_t i = 0; i < m->n_params; i++)
        ck_assert(m->grads[i] == 0.0f);
    /* backward without a fresh forward is refused */
    ck_assert_int_eq(model_backward(m, zero, err), RL_EINVAL);
    free(g1);
    model_free(m);
}
END_TEST

/* Causality and padding: a sequence's logprobs do not depend on what
 * follows it, nor on the other sequences of the batch. */
START_TEST(test_forward_causal_batch)
{
    char err[RL_ERR_MAX];
    model_config cfg;
    tiny_config(&cfg);
    model *m;
    ck_assert_int_eq(model_new(&m, &cfg, NULL, err), 0);
    fill_normal(m->params, m->n_params, 0.3f, 21);
    int tok[2 * 8], tgt[2 * 8];
    float lp2[16], lp1[8], ent[16];
    for (int i = 0; i < 16; i++) {
        tok[i] = (i * 3 + 1) % 11;
        tgt[i] = (i * 5 + 2) % 11;
    }
    ck_assert_int_eq(model_forward(m, tok, tgt, 2, 8, 1.0f, lp2, ent, err), 0);
    int t1[8], g1[8];
    memcpy(t1, tok + 8, sizeof t1);
    memcpy(g1, tgt + 8, sizeof g1);
    t1[6] = t1[7] = 0; /* change the tail only */
    g1[6] = g1[7] = -1;
    ck_assert_int_eq(model_forward(m, t1, g1, 1, 8, 1.0f, lp1, NULL, err), 0);
    for (int t = 0; t < 6; t++)
        ck_assert(fabs(lp1[t] - lp2[8 + t]) < 1e-5);
    ck_assert(lp1[6] == 0.0f && lp1[7] == 0.0f);
    for (int i = 0; i < 16; i++)
        ck_assert(lp2[i] < 0.0f && ent[i] > 0.0f && ent[i] <= logf(11.0f) + 1e-4f);
    model_free(m);
}
END_TEST

/* ---- sampling and scoring --------------------------------------------------- */

static model *sample_model(int vocab, uint64_t seed)
{
    char err[RL_ERR_MAX];
    model_config cfg;
    model_config_default(&cfg);
    cfg.vocab = vocab;
    cfg.d_model = 32;
    cfg.n_layer = 2;
    cfg.n_head = 4;
    cfg.n_kv_head = 2;
    cfg.d_ff = 48;
    cfg.max_seq = 256;
    model *m;
    ck_assert_int_eq(model_new(&m, &cfg, NULL, err), 0);
    /* sharper than the default init so sampling is not uniform noise */
    fill_normal(m->params, m->n_params, 0.3f, seed);
    for (int i = 0; i < m->n_tensors; i++)
        if (m->tensors[i].is_norm)
            for (size_t j = 0; j < m->tensors[i].numel; j++)
                m->params[m->tensors[i].offset + j] = 1.0f;
    return m;
}

static void check_sample_vs_score(model *m, float temperature, float top_p)
{
    char err[RL_ERR_MAX];
    enum { S = 3 };
    int p0[5] = {1, 2, 3, 4, 5}, p1[70], p2[1] = {7};
    for (int i = 0; i < 70; i++)
        p1[i] = (i * 13) % m->cfg.vocab;
    const int *prompts[S] = {p0, p1, p2};
    int lens[S] = {5, 70, 1};
    model_sample_opts o;
    model_sample_opts_default(&o);
    o.temperature = temperature;
    o.top_p = top_p;
    o.seed = 42;
    o.max_new = 30;
    model_sample_out out[S];
    ck_assert_int_eq(model_sample(m, out, prompts, lens, S, &o, err), 0);
    for (int s = 0; s < S; s++) {
        ck_assert_int_eq(out[s].n, 30);
        ck_assert_int_eq(out[s].stop, MODEL_STOP_LENGTH);
        int L = lens[s] + out[s].n;
        int *seq = malloc(sizeof(int) * L);
        float *lp = malloc(sizeof(float) * L);
        memcpy(seq, prompts[s], sizeof(int) * lens[s]);
        memcpy(seq + lens[s], out[s].tokens, sizeof(int) * out[s].n);
        const int *seqs[1] = {seq};
        float *lps[1] = {lp};
        ck_assert_int_eq(model_score(m, lps, seqs, &L, 1, temperature, err), 0);
        for (int i = 0; i < out[s].n; i++) {
            float a = out[s].logprobs[i], b = lp[lens[s] - 1 + i];
            ck_assert_msg(fabsf(a - b) < 1e-4f, "seq %d token %d: sample %g score %g", s, i, a, b);
            ck_assert(a <= 0.0f);
        }
        free(seq);
        free(lp);
    }
    for (int s = 0; s < S; s++)
        model_sample_out_dispose(&out[s]);
}

START_TEST(test_sample_matches_score)
{
    model *m = sample_model(300, 31);
    check_sample_vs_score(m, 1.0f, 1.0f);
    check_sample_vs_score(m, 0.7f, 0.9f);
    check_sample_vs_score(m, 0.0f, 1.0f); /* greedy, logprobs at temperature 1 */
    model_free(m);
}
END_TEST

/* An active vocabulary smaller than the embedding (a padded Hugging Face
 * vocabulary): at a high temperature the masked ids are never drawn, the
 * sampled logprobs still equal the scored ones, a masked target's logprob
 * is hopeless (about -1e30). */
START_TEST(test_active_vocab_masks_padding)
{
    char err[RL_ERR_MAX];
    model *m = sample_model(300, 41);
    model_set_active_vocab(m, 200);
    ck_assert_int_eq(m->n_active, 200);
    int p[4] = {1, 2, 3, 4};
    const int *prompts[1] = {p};
    int lens[1] = {4};
    model_sample_opts o;
    model_sample_opts_default(&o);
    o.temperature = 5.0f; /* nearly uniform: unmasked, 1/3 of draws would be >= 200 */
    o.max_new = 60;
    o.seed = 7;
    model_sample_out out;
    ck_assert_int_eq(model_sample(m, &out, prompts, lens, 1, &o, err), 0);
    for (int i = 0; i < out.n; i++)
        ck_assert_int_lt(out.tokens[i], 200);
    check_sample_vs_score(m, 5.0f, 1.0f);
    int tok[2] = {1, 250}, tgt[2] = {250, -1};
    float logp[2];
    ck_assert_int_eq(model_forward(m, tok, tgt, 1, 2, 1.0f, logp, NULL, err), 0);
    ck_assert(logp[0] < -1e29f);
    model_sample_out_dispose(&out);
    model_set_active_vocab(m, 0);
    ck_assert_int_eq(m->n_active, 0);
    model_free(m);
}
END_TEST

/* Step-wise decoding: sequences with their own temperature, top_p and
 * seed, joining at different steps, give the
 * tokens and logprobs model_sample gives each alone with the same seed;
 * the top-k lists are sorted and hold the drawn token's logprob or more. */
START_TEST(test_dec_matches_sample)
{
    char err[RL_ERR_MAX];
    model *m = sample_model(300, 33);
    enum { S = 4 };
    int p0[5] = {1, 2, 3, 4, 5}, p1[70], p2[1] = {7}, p3[3] = {9, 8, 7};
    for (int i = 0; i < 70; i++)
        p1[i] = (i * 13) % m->cfg.vocab;
    const int *prompts[S] = {p0, p1, p2, p3};
    int lens[S] = {5, 70, 1, 3}, join[S] = {0, 0, 3, -1};
    float temps[S] = {1.0f, 0.7f, 0.0f, 0.9f}, tops[S] = {1.0f, 0.9f, 1.0f, 0.8f};
    model_sample_opts o[S];
    for (int s = 0; s < S; s++) {
        model_sample_opts_default(&o[s]);
        o[s].temperature = temps[s];
        o[s].top_p = tops[s];
        o[s].seed = 1000 + (uint64_t)s;
        o[s].max_new = 20 + s;
    }
    model_dec *d;
    ck_assert_int_eq(model_dec_new(&d, m, 3, err), 0);
    int slot[S] = {-1, -1, -1, -1}, extra = -1;
    for (int step = 0; step < 200; step++) {
        for (int s = 0; s < S; s++)
            if (join[s] == step && slot[s] < 0 && s < 3)
                ck_assert_msg(model_dec_add(d, &slot[s], prompts[s], lens[s], &o[s], 4, err) == 0, "%s", err);
        if (step == 4) /* three slots, all taken */
            ck_assert_int_eq(model_dec_add(d, &extra, p3, 3, &o[3], 0, err), RL_ELIMIT);
        int rows = 0;
        ck_assert_int_eq(model_dec_step(d, &rows, err), 0);
        if (rows == 0)
            break;
    }
    for (int s = 0; s < 3; s++) {
        ck_assert(model_dec_done(d, slot[s]));
        const model_sample_out *got = model_dec_out(d, slot[s]);
        model_sample_opts so = o[s];
        uint64_t seeds[1] = {so.seed};
        so.seeds = seeds;
        model_sample_out want;
        ck_assert_int_eq(model_sample(m, &want, &prompts[s], &lens[s], 1, &so, err), 0);
        ck_assert_int_eq(got->n, want.n);
        ck_assert_int_eq(got->stop, want.stop);
        for (int i = 0; i < want.n; i++) {
            ck_assert_int_eq(got->tokens[i], want.tokens[i]);
            ck_assert_msg(fabsf(got->logprobs[i] - want.logprobs[i]) < 1e-4f, "seq %d token %d", s, i);
            const int *ids;
            const float *lps;
            ck_assert_int_eq(model_dec_top(d, slot[s], i, &ids, &lps), 4);
            for (int k = 1; k < 4; k++)
                ck_assert(lps[k] <= lps[k - 1]);
            ck_assert(lps[0] >= got->logprobs[i] - 1e-6f);
        }
        model_sample_out_dispose(&want);
    }
    model_dec_remove(d, slot[1]);
    ck_assert_int_eq(model_dec_free_slots(d), 1);
    model_dec_free(d);
    model_free(m);
}
END_TEST

/* Prefix reuse in model_dec: three samples of one prompt added together
 * (prefilled once), then a second turn extending the first turn's prompt
 * + reply (taken from the pool): every token and logprob equals
 * model_sample's without any cache, and the reused count is what was
 * skipped. */
START_TEST(test_dec_prefix_reuse)
{
    char err[RL_ERR_MAX];
    model *m = sample_model(300, 35);
    model_dec *d;
    ck_assert_int_eq(model_dec_new(&d, m, 4, err), 0);
    model_dec_prefix_cache(d, 64u << 20);
    int p1[60];
    for (int i = 0; i < 60; i++)
        p1[i] = (i * 11 + 5) % 300;
    model_sample_opts o;
    model_sample_opts_default(&o);
    o.temperature = 0.9f;
    o.max_new = 12;
    int slot[3];
    for (int k = 0; k < 3; k++) {
        o.seed = 70 + (uint64_t)k;
        ck_assert_msg(model_dec_add(d, &slot[k], p1, 60, &o, 0, err) == 0, "%s", err);
    }
    for (int rows = 1; rows > 0;)
        ck_assert_int_eq(model_dec_step(d, &rows, err), 0);
    long reused = 0;
    model_dec_prefix_stats(d, &reused, NULL, NULL);
    ck_assert_int_eq(reused, 2 * 59); /* choices 1 and 2 take 59 rows of choice 0 */
    int p2[120], n2 = 0, n0 = 0;
    for (int k = 0; k < 3; k++) {
        const model_sample_out *got = model_dec_out(d, slot[k]);
        model_sample_opts so = o;
        uint64_t seeds[1] = {70 + (uint64_t)k};
        so.seeds = seeds;
        const int *pp[1] = {p1};
        int len = 60;
        model_sample_out want;
        ck_assert_int_eq(model_sample(m, &want, pp, &len, 1, &so, err), 0);
        ck_assert_int_eq(got->n, want.n);
        for (int i = 0; i < want.n; i++) {
            ck_assert_int_eq(got->tokens[i], want.tokens[i]);
            ck_assert_msg(fabsf(got->logprobs[i] - want.logprobs[i]) < 1e-4f, "choice %d token %d", k, i);
        }
        if (k == 0) { /* turn 2: prompt, reply, a new message */
            memcpy(p2, p1, sizeof p1);
            n2 = 60;
            n0 = got->n;
            for (int i = 0; i < got->n; i++)
                p2[n2++] = got->tokens[i];
            for (int i = 0; i < 20; i++)
                p2[n2++] = (i * 17 + 1) % 300;
        }
        model_sample_out_dispose(&want);
    }
    for (int k = 0; k < 3; k++)
        model_dec_remove(d, slot[k]);
    int entries = 0;
    model_dec_prefix_stats(d, NULL, &entries, NULL);
    ck_assert_int_ge(entries, 1);
    o.seed = 90;
    int s2;
    ck_assert_msg(model_dec_add(d, &s2, p2, n2, &o, 0, err) == 0, "%s", err);
    for (int rows = 1; rows > 0;)
        ck_assert_int_eq(model_dec_step(d, &rows, err), 0);
    long reused2 = 0;
    model_dec_prefix_stats(d, &reused2, NULL, NULL);
    /* choice 0's cache holds its prompt and every reply token but the last */
    ck_assert_int_eq(reused2 - reused, 60 + n0 - 1);
    const model_sample_out *got = model_dec_out(d, s2);
    model_sample_opts so = o;
    uint64_t seeds[1] = {90};
    so.seeds = seeds;
    const int *pp[1] = {p2};
    model_sample_out want;
    ck_assert_int_eq(model_sample(m, &want, pp, &n2, 1, &so, err), 0);
    ck_assert_int_eq(got->n, want.n);
    for (int i = 0; i < want.n; i++) {
        ck_assert_int_eq(got->tokens[i], want.tokens[i]);
        ck_assert_msg(fabsf(got->logprobs[i] - want.logprobs[i]) < 1e-4f, "turn 2 token %d", i);
    }
    model_sample_out_dispose(&want);
    model_dec_remove(d, s2);
    model_dec_prefix_clear(d);
    model_dec_prefix_stats(d, NULL, &entries, NULL);
    ck_assert_int_eq(entries, 0);
    model_dec_free(d);
    model_free(m);
}
END_TEST

/* Two turns of two episodes through a cache set: turn 2's prompts extend
 * turn 1's prompt + reply, so most of them is reused, and every token and
 * logprob equals plain model_sample's. New weights empty the set. */
START_TEST(test_sample_cached_prefix)
{
    char err[RL_ERR_MAX];
    model *m = sample_model(300, 33);
    model_kvset *set;
    ck_assert_int_eq(model_kvset_new(&set, m, 4, err), 0);
    enum { S = 2 };
    int a0[40], b0[9];
    for (int i = 0; i < 40; i++)
        a0[i] = (i * 7 + 3) % 300;
    for (int i = 0; i < 9; i++)
        b0[i] = (i * 11 + 1) % 300;
    const int *p[S] = {a0, b0};
    int lens[S] = {40, 9};
    model_sample_opts o;
    model_sample_opts_default(&o);
    o.temperature = 0.8f;
    o.seed = 5;
    o.max_new = 12;
    model_sample_out ref[S], got[S];
    for (int turn = 0; turn < 3; turn++) {
        if (turn == 2) /* a weight update: nothing cached may be read */
            m->params[7] += 0.5f;
        ck_assert_int_eq(model_sample(m, ref, p, lens, S, &o, err), 0);
        long before = model_kvset_reused(set);
        ck_assert_int_eq(model_sample_cached(m, set, got, p, lens, S, &o, err), 0);
        long reused = model_kvset_reused(set) - before;
        if (turn == 1) /* all of turn 1's prompts and replies but the last drawn tokens */
            ck_assert_int_eq(reused, (40 + 11) + (9 + 11));
        else
            ck_assert_int_eq(reused, 0);
        for (int s = 0; s < S; s++) {
            ck_assert_int_eq(got[s].n, ref[s].n);
            for (int i = 0; i < ref[s].n; i++) {
                ck_assert_int_eq(got[s].tokens[i], ref[s].tokens[i]);
                ck_assert_msg(fabsf(got[s].logprobs[i] - ref[s].logprobs[i]) < 1e-4f, "turn %d seq %d token %d", turn,
                              s, i);
            }
        }
        /* the next turn: prompt + reply + 5 new tokens (in the other order, to
         * show caches are found by content, not position) */
        int *next[S];
        int nl[S];
        for (int s = 0; s < S; s++) {
            nl[s] = lens[s] + ref[s].n + 5;
            next[s] = malloc(sizeof(int) * (size_t)nl[s]);
            memcpy(next[s], p[s], sizeof(int) * (size_t)lens[s]);
            memcpy(next[s] + lens[s], ref[s].tokens, sizeof(int) * (size_t)ref[s].n);
            for (int i = 0; i < 5; i++)
                next[s][lens[s] + ref[s].n + i] = (s * 50 + i + turn) % 300;
            model_sample_out_dispose(&ref[s]);
            model_sample_out_dispose(&got[s]);
        }
        if (turn > 0) {
            free((void *)p[0]);
            free((void *)p[1]);
        }
        p[0] = next[1];
        p[1] = next[0];
        lens[0] = nl[1];
        lens[1] = nl[0];
    }
    free((void *)p[0]);
    free((void *)p[1]);
    model_kvset_free(set);
    model_free(m);
}
END_TEST

START_TEST(test_sample_deterministic_and_stop)
{
    char err[RL_ERR_MAX];
    model *m = sample_model(300, 32);
    int p0[3] = {5, 6, 7}, p1[2] = {9, 10};
    const int *prompts[2] = {p0, p1};
    int lens[2] = {3, 2};
    model_sample_opts o;
    model_sample_opts_default(&o);
    o.seed = 7;
    o.max_new = 20;
    model_sample_out a[2], b[2], one;
    ck_assert_int_eq(model_sample(m, a, prompts, lens, 2, &o, err), 0);
    ck_assert_int_eq(model_sample(m, b, prompts, lens, 2, &o, err), 0);
    for (int s = 0; s < 2; s++)
        ck_assert_int_eq(memcmp(a[s].tokens, b[s].tokens, sizeof(int) * 20), 0);
    /* different seed, different draws (20 tokens over 300 ids) */
    o.seed = 8;
    model_sample_out c[2];
    ck_assert_int_eq(model_sample(m, c, prompts, lens, 2, &o, err), 0);
    ck_assert(memcmp(a[0].tokens, c[0].tokens, sizeof(int) * 20) != 0);
    /* per-sequence seeds: a sequence draws the same tokens alone, first or
     * second in a batch; alone it matches the call seed's stream 0 */
    {
        uint64_t s2[2] = {99, 7}, s1[1] = {7};
        const int *swapped[2] = {p1, p0};
        int swapped_lens[2] = {2, 3};
        model_sample_opts ps = o;
        ps.seed = 12345; /* ignored once seeds is set */
        ps.seeds = s2;
        model_sample_out pair[2], alone, stream0;
        ck_assert_int_eq(model_sample(m, pair, swapped, swapped_lens, 2, &ps, err), 0);
        ps.seeds = s1;
        ck_assert_int_eq(model_sample(m, &alone, prompts, lens, 1, &ps, err), 0);
        ck_assert_int_eq(memcmp(pair[1].tokens, alone.tokens, sizeof(int) * 20), 0);
        model_sample_opts s0 = o;
        s0.seed = 7;
        ck_assert_int_eq(model_sample(m, &stream0, prompts, lens, 1, &s0, err), 0);
        ck_assert_int_eq(memcmp(stream0.tokens, alone.tokens, sizeof(int) * 20), 0);
        ck_assert_int_eq(memcmp(a[0].tokens, pair[1].tokens, sizeof(int) * 20), 0);
        /* with only the call seed, p0 second in the batch draws from stream 1 */
        model_sample_out moved[2];
        ck_assert_int_eq(model_sample(m, moved, swapped, swapped_lens, 2, &s0, err), 0);
        ck_assert(memcmp(a[0].tokens, moved[1].tokens, sizeof(int) * 20) != 0);
        model_sample_out_dispose(&moved[0]);
        model_sample_out_dispose(&moved[1]);
        model_sample_out_dispose(&pair[0]);
        model_sample_out_dispose(&pair[1]);
        model_sample_out_dispose(&alone);
        model_sample_out_dispose(&stream0);
    }
    /* a tiny nucleus keeps only the most likely token: greedy decoding */
    model_sample_opts g = o;
    g.temperature = 0.0f;
    model_sample_out greedy, nucleus;
    ck_assert_int_eq(model_sample(m, &greedy, prompts, lens, 1, &g, err), 0);
    g.temperature = 1.0f;
    g.top_p = 1e-6f;
    ck_assert_int_eq(model_sample(m, &nucleus, prompts, lens, 1, &g, err), 0);
    ck_assert_int_eq(memcmp(greedy.tokens, nucleus.tokens, sizeof(int) * 20), 0);
    model_sample_out_dispose(&greedy);
    model_sample_out_dispose(&nucleus);
    /* a stop id ends that sequence right after it is drawn */
    o.seed = 7;
    int stop = a[0].tokens[4];
    o.stop_ids = &stop;
    o.n_stop = 1;
    ck_assert_int_eq(model_sample(m, &one, prompts, lens, 1, &o, err), 0);
    int first = 0;
    while (a[0].tokens[first] != stop)
        first++;
    ck_assert_int_eq(one.n, first + 1);
    ck_assert_int_eq(one.stop, MODEL_STOP_TOKEN);
    ck_assert_int_eq(memcmp(one.tokens, a[0].tokens, sizeof(int) * one.n), 0);
    model_sample_out_dispose(&one);
    /* the context limit stops generation */
    int long_p[250];
    for (int i = 0; i < 250; i++)
        long_p[i] = i;
    const int *lp[1] = {long_p};
    int ll = 250;
    o.n_stop = 0;
    ck_assert_int_eq(model_sample(m, &one, lp, &ll, 1, &o, err), 0);
    ck_assert_int_eq(one.stop, MODEL_STOP_CONTEXT);
    ck_assert_int_eq(one.n, 256 - 250 + 1);
    model_sample_out_dispose(&one);
    /* bad input is refused, not crashed on */
    int badp[1] = {300};
    const int *bp[1] = {badp};
    int bl = 1;
    ck_assert_int_eq(model_sample(m, &one, bp, &bl, 1, &o, err), RL_EINVAL);
    ck_assert_ptr_null(strchr(err, '\n'));
    for (int s = 0; s < 2; s++) {
        model_sample_out_dispose(&a[s]);
        model_sample_out_dispose(&b[s]);
        model_sample_out_dispose(&c[s]);
    }
    model_free(m);
}
END_TEST


static int cmp_desc(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x < y) - (x > y);
}

/* The top-p set against a sort: every draw lands in it, and with u
 * sweeping [0, 1) every token of it is drawn. Includes ties and zeros. */
START_TEST(test_top_p_set)
{
    enum { V = 500 };
    static float prob[V], sorted[V];
    static double scratch[MODEL_TOPP_SCRATCH];
    mrng r;
    mrng_seed(&r, 50);
    for (int trial = 0; trial < 40; trial++) {
        double sum = 0;
        for (int j = 0; j < V; j++) {
            float x = mrng_uniform(&r);
            prob[j] = trial % 3 == 0 ? (float)(j % 7) : x * x * x * x; /* ties, skew */
            if (j % 11 == 0)
                prob[j] = 0.0f;
            sum += prob[j];
        }
        for (int j = 0; j < V; j++)
            prob[j] = (float)(prob[j] / sum);
        float top_p = 0.05f + 0.9f * mrng_uniform(&r);
        memcpy(sorted, prob, sizeof prob);
        qsort(sorted, V, sizeof(float), cmp_desc);
        double acc = 0;
        int k = 0;
        while (k < V && acc < top_p)
            acc += sorted[k++];
        float least = sorted[k - 1]; /* least likely kept token */
        int hit[V] = {0};
        for (int i = 0; i < 4000; i++) {
            int t = model_draw_token(prob, V, top_p, (float)i / 4000.0f, scratch);
            ck_assert_msg(prob[t] >= least, "trial %d: drew p %g below the nucleus %g", trial,
                          prob[t], least);
            hit[t] = 1;
        }
        for (int j = 0; j < V; j++)
            if (prob[j] > least * 1.5f && prob[j] > 1.0f / 2000)
                ck_assert_msg(hit[j], "trial %d: token %d (p %g) never drawn", trial, j, prob[j]);
    }
}
END_TEST

/* ---- training reduces the loss --------------------------------------------- */

/* One optimizer span per tensor; norm gains are not decayed. */
static void model_spans(const model *m, opt_span *spans)
{
    for (int i = 0; i < m->n_tensors; i++) {
        spans[i].offset = m->tensors[i].offset;
        spans[i].n = m->tensors[i].numel;
        spans[i].decay = !m->tensors[i].is_norm;
    }
}

START_TEST(test_adamw_training_step)
{
    char err[RL_ERR_MAX];
    model_config cfg;
    tiny_config(&cfg);
    model *m;
    ck_assert_int_eq(model_new(&m, &cfg, NULL, err), 0);
    model_random_init(m, 5);
    opt_span spans[64];
    model_spans(m, spans);
    opt_config oc;
    opt_config_default(&oc);
    oc.lr = 1e-2f;
    oc.warmup_steps = 2;
    oc.total_steps = 60;
    adamw *opt;
    ck_assert_int_eq(opt_new(&opt, &oc, m->n_params, spans, m->n_tensors, err), 0);
    enum { T = 12 };
    int tok[T], tgt[T];
    float lp[T], dl[T];
    for (int t = 0; t < T; t++) {
        tok[t] = (t * 4) % 11;
        tgt[t] = t + 1 < T ? ((t + 1) * 4) % 11 : -1;
        dl[t] = t + 1 < T ? -1.0f / (T - 1) : 0.0f;
    }
    double first = 0, last = 0;
    for (int step = 0; step < 60; step++) {
        ck_assert_int_eq(model_forward(m, tok, tgt, 1, T, 1.0f, lp, NULL, err), 0);
        double loss = -dot_d(lp, dl, T) * -1.0; /* mean NLL = -mean logp */
        loss = 0;
        for (int t = 0; t < T - 1; t++)
            loss -= lp[t] / (T - 1);
        if (step == 0)
            first = loss;
        last = loss;
        ck_assert_int_eq(model_zero_grad(m, err), 0);
        ck_assert_int_eq(model_backward(m, dl, err), 0);
        double norm;
        ck_assert_int_eq(opt_step(opt, m->params, m->grads, &norm, NULL, err), 0);
        ck_assert(isfinite(norm));
    }
    ck_assert_msg(last < 0.5 * first, "loss %g -> %g", first, last);
    opt_free(opt);
    model_free(m);
}
END_TEST

/* ---- copying from the context -------------------------------------------------
 * A two-layer model must learn to repeat what it has seen: each sample is
 * 16 random tokens, then the same 16 again, drawn fresh every step. The
 * second half becomes predictable (an attention head that looks exactly 15
 * positions back); the first half stays at chance, which shows the model
 * copies rather than memorizes. A bug in the causal mask, the rotary
 * positions or the attention backward keeps the second half at chance.
 * (Copying at an offset that varies, an induction head, takes this model
 * some 3,000 steps: too slow for a test. results/copy-probe.md.) */

START_TEST(test_learns_to_copy)
{
    char err[RL_ERR_MAX];
    model_config cfg;
    model_config_default(&cfg);
    cfg.vocab = 32;
    cfg.d_model = 32;
    cfg.n_layer = 2;
    cfg.n_head = 2;
    cfg.n_kv_head = 1;
    cfg.d_ff = 96;
    cfg.max_seq = 32;
    cfg.rope_theta = 10000.0f;
    model_opts mo;
    model_opts_default(&mo);
    mo.n_threads = 1;
    model *m;
    ck_assert_int_eq(model_new(&m, &cfg, &mo, err), 0);
    model_random_init(m, 1);
    opt_span spans[64];
    model_spans(m, spans);
    enum { STEPS = 400, B = 16, L = 16, T = 2 * L };
    opt_config oc;
    opt_config_default(&oc);
    oc.lr = 5e-3f;
    oc.warmup_steps = 20;
    oc.total_steps = STEPS;
    oc.weight_decay = 0.0f;
    adamw *opt;
    ck_assert_int_eq(opt_new(&opt, &oc, m->n_params, spans, m->n_tensors, err), 0);
    static int tok[B * T], tgt[B * T];
    static float lp[B * T], dl[B * T];
    uint64_t rng = 7;
    double first = 0, second = 0;
    for (int step = 0; step < STEPS; step++) {
        for (int b = 0; b < B; b++)
            for (int t = 0; t < L; t++) {
                rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
                tok[b * T + t] = tok[b * T + L + t] = 1 + (int)((rng >> 33) % (uint64_t)(cfg.vocab - 1));
            }
        for (int i = 0; i < B * T; i++) {
            int t = i % T;
            tgt[i] = t + 1 < T ? tok[i + 1] : -1;
            dl[i] = t + 1 < T ? -1.0f / (float)(B * (T - 1)) : 0.0f;
        }
        ck_assert_int_eq(model_forward(m, tok, tgt, B, T, 1.0f, lp, NULL, err), 0);
        first = second = 0;
        for (int i = 0; i < B * T; i++) {
            int t = i % T;
            if (t < L - 1)
                first -= lp[i] / (B * (L - 1));
            else if (t >= L && t < T - 1)
                second -= lp[i] / (B * (L - 1));
        }
        ck_assert_int_eq(model_zero_grad(m, err), 0);
        ck_assert_int_eq(model_backward(m, dl, err), 0);
        double norm;
        ck_assert_int_eq(opt_step(opt, m->params, m->grads, &norm, NULL, err), 0);
    }
    double chance = log(cfg.vocab - 1);
    ck_assert_msg(second < 0.5, "second half %.3f nats/token after %d steps: the model does not copy", second,
                  STEPS);
    ck_assert_msg(first > 0.8 * chance, "first half %.3f nats/token, chance %.3f: random tokens predicted?",
                  first, chance);
    opt_free(opt);
    model_free(m);
}
END_TEST

/* ---- AdamW against a hand computation ------------------------------------- */

START_TEST(test_adamw_reference)
{
    char err[RL_ERR_MAX];
    opt_config c;
    opt_config_default(&c);
    c.lr = 0.1f;
    c.weight_decay = 0.5f;
    c.grad_clip = 0.0f;
    c.warmup_steps = 0;
    c.total_steps = 0; /* constant lr */
    opt_span sp[2] = {{0, 2, 1}, {2, 1, 0}};
    adamw *o;
    ck_assert_int_eq(opt_new(&o, &c, 3, sp, 2, err), 0);
    float w[3] = {1.0f, -2.0f, 3.0f};
    double rw[3] = {1.0, -2.0, 3.0}, rm[3] = {0}, rv[3] = {0};
    for (int t = 1; t <= 3; t++) {
        float g[3] = {0.5f * t, -1.0f, 0.25f};
        for (int i = 0; i < 3; i++) {
            rm[i] = 0.9 * rm[i] + 0.1 * g[i];
            rv[i] = 0.95 * rv[i] + 0.05 * g[i] * g[i];
            double mh = rm[i] / (1 - pow(0.9, t)), vh = rv[i] / (1 - pow(0.95, t));
            if (i < 2)
                rw[i] -= 0.1 * 0.5 * rw[i];
            rw[i] -= 0.1 * mh / (sqrt(vh) + 1e-8);
        }
        ck_assert_int_eq(opt_step(o, w, g, NULL, NULL, err), 0);
    }
    for (int i = 0; i < 3; i++)
        ck_assert_msg(fabs(w[i] - rw[i]) < 1e-5, "w[%d] %g vs %g", i, w[i], rw[i]);
    ck_assert_int_eq(o->step, 3);
    /* a non-finite gradient changes nothing */
    float wb[3];
    memcpy(wb, w, sizeof w);
    float gn[3] = {NAN, 0, 0};
    ck_assert_int_eq(opt_step(o, w, gn, NULL, NULL, err), RL_EINVAL);
    ck_assert_int_eq(memcmp(wb, w, sizeof w), 0);
    ck_assert_int_eq(o->step, 3);
    opt_free(o);
}
END_TEST

START_TEST(test_lr_schedule_and_clip)
{
    opt_config c;
    opt_config_default(&c);
    c.lr = 1.0f;
    c.warmup_steps = 10;
    c.total_steps = 110;
    c.min_lr_ratio = 0.1f;
    ck_assert(fabsf(opt_lr_at(&c, 0) - 0.1f) < 1e-6f);
    ck_assert(fabsf(opt_lr_at(&c, 9) - 1.0f) < 1e-6f);
    ck_assert(fabsf(opt_lr_at(&c, 10) - 1.0f) < 1e-6f);
    ck_assert(fabsf(opt_lr_at(&c, 60) - 0.55f) < 1e-5f); /* cosine midpoint */
    ck_assert(fabsf(opt_lr_at(&c, 110) - 0.1f) < 1e-6f);
    ck_assert(fabsf(opt_lr_at(&c, 500) - 0.1f) < 1e-6f);
    for (long s = 11; s < 110; s++)
        ck_assert(opt_lr_at(&c, s) <= opt_lr_at(&c, s - 1));
    float g[2] = {3.0f, 4.0f};
    ck_assert(fabs(opt_clip_grad_norm(g, 2, 1.0f) - 5.0) < 1e-9);
    ck_assert(fabsf(g[0] - 0.6f) < 1e-6f && fabsf(g[1] - 0.8f) < 1e-6f);
    ck_assert(fabs(opt_clip_grad_norm(g, 2, 10.0f) - 1.0) < 1e-6);
    ck_assert(fabsf(g[0] - 0.6f) < 1e-6f); /* under the cap: unchanged */
}
END_TEST

/* ---- checkpoints ------------------------------------------------------------ */

static char tmpdir[64];

static void setup_tmp(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/rl-model-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown_tmp(void)
{
    fs_remove_tree(tmpdir, NULL);
}

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, n, f), n);
    fclose(f);
}

/* A checkpoint of the tiny model, returned as bytes. */
static char *tiny_ckpt(size_t *len, char *path)
{
    char err[RL_ERR_MAX];
    model_config cfg;
    tiny_config(&cfg);
    model *m;
    ck_assert_int_eq(model_new(&m, &cfg, NULL, err), 0);
    model_random_init(m, 9);
    ck_assert_int_eq(model_save(m, path, NULL, err), 0);
    model_free(m);
    char *data;
    ck_assert_int_eq(fs_read_file(&data, len, path, 1 << 24, err), 0);
    return data;
}

START_TEST(test_ckpt_roundtrip)
{
    char err[RL_ERR_MAX], path[128], tokp[128];
    model_config cfg;
    tiny_config(&cfg);
    cfg.rope_theta = 12345.5f;
    model *m, *m2;
    ck_assert_int_eq(model_new(&m, &cfg, NULL, err), 0);
    model_random_init(m, 11);
    snprintf(tokp, sizeof tokp, "%s/tok.json", tmpdir);
    write_bytes(tokp, "{\"v\":1}", 7);
    model_meta meta, meta2;
    model_meta_default(&meta);
    snprintf(meta.tokenizer, sizeof meta.tokenizer, "%s", tokp);
    ck_assert_int_eq(model_file_hash(meta.tokenizer_hash, tokp, err), 0);
    ck_assert_int_eq((int)strlen(meta.tokenizer_hash), 16);
    meta.step = 77;
    snprintf(path, sizeof path, "%s/m.safetensors", tmpdir);
    ck_assert_int_eq(model_save(m, path, &meta, err), 0);
    ck_assert_int_eq(model_load(&m2, &meta2, path, NULL, err), 0);
    ck_assert_int_eq(memcmp(&m->cfg, &m2->cfg, sizeof cfg), 0);
    ck_assert_int_eq(memcmp(m->params, m2->params, m->n_params * 4), 0);
    ck_assert_str_eq(meta2.tokenizer, tokp);
    ck_assert_str_eq(meta2.tokenizer_hash, meta.tokenizer_hash);
    ck_assert_int_eq(meta2.step, 77);
    /* header length is a multiple of 8 (aligned tensors) */
    char *data;
    size_t len;
    ck_assert_int_eq(fs_read_file(&data, &len, path, 1 << 24, err), 0);
    uint64_t h;
    memcpy(&h, data, 8);
    ck_assert_uint_eq(h % 8, 0);
    ck_assert_uint_eq(len, 8 + h + m->n_params * 4);
    free(data);
    model_free(m);
    model_free(m2);
}
END_TEST

/* Writes bytes to a file, loads it, expects failure with a one-line message
 * containing `want`. */
static void expect_load_error(const char *name, const void *bytes, size_t n, const char *want)
{
    char err[RL_ERR_MAX], path[128];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    write_bytes(path, bytes, n);
    model *m = (model *)1;
    err[0] = 0;
    int rc = model_load(&m, NULL, path, NULL, err);
    ck_assert_msg(rc < 0, "%s: loaded", name);
    ck_assert_ptr_null(m);
    ck_assert_ptr_null(strchr(err, '\n'));
    ck_assert_msg(strstr(err, want) != NULL, "%s: error '%s' lacks '%s'", name, err, want);
}

/* The checkpoint with its header replaced by `hdr` (data kept). */
static char *with_header(const char *orig, size_t len, const char *hdr, size_t *out_len)
{
    uint64_t h;
    memcpy(&h, orig, 8);
    size_t data = len - 8 - h, hl = strlen(hdr);
    char *b = malloc(8 + hl + data);
    uint64_t nh = hl;
    memcpy(b, &nh, 8);
    memcpy(b + 8, hdr, hl);
    memcpy(b + 8 + hl, orig + 8 + h, data);
    *out_len = 8 + hl + data;
    return b;
}

static char *replace(const char *s, const char *from, const char *to)
{
    const char *p = strstr(s, from);
    ck_assert_ptr_nonnull(p);
    size_t a = (size_t)(p - s), fl = strlen(from), tl = strlen(to), sl = strlen(s);
    char *r = malloc(sl - fl + tl + 1);
    memcpy(r, s, a);
    memcpy(r + a, to, tl);
    memcpy(r + a + tl, p + fl, sl - a - fl + 1);
    return r;
}

START_TEST(test_ckpt_bad_files)
{
    char path[128], err[RL_ERR_MAX];
    snprintf(path, sizeof path, "%s/good.safetensors", tmpdir);
    size_t len;
    char *good = tiny_ckpt(&len, path);
    uint64_t h;
    memcpy(&h, good, 8);
    char *hdr = malloc(h + 1);
    memcpy(hdr, good + 8, h);
    hdr[h] = 0;

    model *m = NULL;
    ck_assert_int_ne(model_load(&m, NULL, "/nonexistent/x.safetensors", NULL, err), 0);
    ck_assert_ptr_null(strchr(err, '\n'));
    expect_load_error("empty", "", 0, "too short");
    expect_load_error("short", good, 5, "too short");
    expect_load_error("truncated", good, len / 2, "truncated");
    char past[16];
    uint64_t big = len; /* header length past EOF */
    memcpy(past, &big, 8);
    memcpy(past + 8, "{}      ", 8);
    expect_load_error("past_eof", past, 16, "past the end");

    size_t n;
    char *b = with_header(good, len, "{\"__metadata__\": {\"format\": ", &n);
    expect_load_error("bad_json", b, n, "not a JSON object");
    free(b);
    b = with_header(good, len, "[1, 2]", &n);
    expect_load_error("not_object", b, n, "not a JSON object");
    free(b);

    char *h2 = replace(hdr, "\"dtype\":\"F32\"", "\"dtype\":\"F16\"");
    b = with_header(good, len, h2, &n);
    expect_load_error("f16", b, n, "expected F32");
    free(b), free(h2);

    h2 = replace(hdr, "\"shape\":[11,8]", "\"shape\":[8,11]");
    b = with_header(good, len, h2, &n);
    expect_load_error("shape", b, n, "has shape");
    free(b), free(h2);

    /* metadata says a different config than the tensors have */
    h2 = replace(hdr, "\"d_ff\":\"12\"", "\"d_ff\":\"16\"");
    b = with_header(good, len, h2, &n);
    expect_load_error("mismatch", b, n, "expected [16, 8]");
    free(b), free(h2);

    h2 = replace(hdr, "\"model.norm.weight\"", "\"model.norm.weigh\"");
    b = with_header(good, len, h2, &n);
    expect_load_error("unexpected", b, n, "unexpected tensor");
    free(b), free(h2);

    h2 = replace(hdr, "\"model.norm.weight\"", "\"extra.norm.weight\"");
    b = with_header(good, len, h2, &n);
    expect_load_error("missing", b, n, "model.norm.weight is missing");
    free(b), free(h2);

    h2 = replace(hdr, "\"vocab\":\"11\"", "\"vocab\":\"eleven\"");
    b = with_header(good, len, h2, &n);
    expect_load_error("meta_int", b, n, "expected an integer");
    free(b), free(h2);

    h2 = replace(hdr, "\"n_head\":\"2\"", "\"n_head\":\"3\"");
    b = with_header(good, len, h2, &n);
    expect_load_error("bad_config", b, n, "n_head");
    free(b), free(h2);

    /* a NaN in the weights */
    char *nan_ck = malloc(len);
    memcpy(nan_ck, good, len);
    float nanv = NAN;
    memcpy(nan_ck + len - 4, &nanv, 4);
    expect_load_error("nan", nan_ck, len, "non-finite");
    free(nan_ck);

    free(hdr);
    free(good);
}
END_TEST


/* A run interrupted after 2 steps and resumed from saved state ends with
 * the same weights as an uninterrupted run of 4 steps. */
START_TEST(test_adamw_resume_exact)
{
    char err[RL_ERR_MAX], path[128];
    snprintf(path, sizeof path, "%s/opt.safetensors", tmpdir);
    opt_config c;
    opt_config_default(&c);
    c.warmup_steps = 2;
    c.total_steps = 4;
    opt_span sp = {0, 5, 1};
    float w1[5] = {1, 2, 3, 4, 5}, w2[5] = {1, 2, 3, 4, 5};
    adamw *a, *b;
    ck_assert_int_eq(opt_new(&a, &c, 5, &sp, 1, err), 0);
    for (int t = 0; t < 4; t++) {
        float g[5] = {0.1f * t, -0.2f, 0.3f, 0.05f * t, 1.0f};
        ck_assert_int_eq(opt_step(a, w1, g, NULL, NULL, err), 0);
    }
    opt_free(a);
    ck_assert_int_eq(opt_new(&a, &c, 5, &sp, 1, err), 0);
    for (int t = 0; t < 2; t++) {
        float g[5] = {0.1f * t, -0.2f, 0.3f, 0.05f * t, 1.0f};
        ck_assert_int_eq(opt_step(a, w2, g, NULL, NULL, err), 0);
    }
    ck_assert_int_eq(opt_save(a, path, err), 0);
    opt_free(a);
    ck_assert_int_eq(opt_new(&b, &c, 5, &sp, 1, err), 0);
    ck_assert_int_eq(opt_load(b, path, err), 0);
    ck_assert_int_eq(b->step, 2);
    for (int t = 2; t < 4; t++) {
        float g[5] = {0.1f * t, -0.2f, 0.3f, 0.05f * t, 1.0f};
        ck_assert_int_eq(opt_step(b, w2, g, NULL, NULL, err), 0);
    }
    ck_assert_int_eq(memcmp(w1, w2, sizeof w1), 0);
    opt_free(b);
    /* a state of another size, or a model checkpoint, is refused */
    ck_assert_int_eq(opt_new(&b, &c, 6, &sp, 1, err), 0);
    ck_assert_int_ne(opt_load(b, path, err), 0);
    ck_assert_ptr_null(strchr(err, '\n'));
    ck_assert_int_eq(b->step, 0);
    size_t len;
    snprintf(path, sizeof path, "%s/model.safetensors", tmpdir);
    free(tiny_ckpt(&len, path));
    ck_assert_int_ne(opt_load(b, path, err), 0);
    ck_assert_ptr_nonnull(strstr(err, "not an optimizer state"));
    opt_free(b);
}
END_TEST

/* Runs a command line; returns its exit code and its stdout (caller frees). */
static int run_cmd(const char *cmd, char **out)
{
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t r;
    while ((r = fread(buf + n, 1, cap - 1 - n, p)) > 0)
        n += r;
    buf[n] = 0;
    int st = pclose(p);
    *out = buf;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The checkpoint reads the same in Python (a stdlib-only parser). */
START_TEST(test_ckpt_python_reader)
{
    if (access("/usr/bin/python3", X_OK) != 0 || access("bench/st_read.py", R_OK) != 0) {
        fprintf(stderr, "test_ckpt_python_reader: no python3 or bench/st_read.py, skipped\n");
        return;
    }
    char path[128], err[RL_ERR_MAX], cmd[512];
    snprintf(path, sizeof path, "%s/py.safetensors", tmpdir);
    size_t len;
    free(tiny_ckpt(&len, path));
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 -B bench/st_read.py --check %s 2>/dev/null", path);
    char *out;
    ck_assert_int_eq(run_cmd(cmd, &out), 0);
    model *m;
    ck_assert_int_eq(model_load(&m, NULL, path, NULL, err), 0);
    ck_assert_ptr_nonnull(strstr(out, "meta d_model 8\n"));
    for (int i = 0; i < m->n_tensors; i++) {
        const model_tensor *t = &m->tensors[i];
        char line[160];
        snprintf(line, sizeof line, "tensor %s ", t->name);
        char *at = strstr(out, line);
        ck_assert_msg(at != NULL, "python lacks %s", t->name);
        double sum = 0;
        for (size_t j = 0; j < t->numel; j++)
            sum += m->params[t->offset + j];
        double py = strtod(strchr(at + strlen(line), ' ') + 1, NULL);
        ck_assert_msg(fabs(py - sum) <= 1e-5 * (1 + fabs(sum)), "%s: %g vs %g", t->name, py, sum);
    }
    free(out);
    model_free(m);
}
END_TEST

START_TEST(test_generate_cli)
{
    const char *bin = getenv("RL_BIN") ? getenv("RL_BIN") : "bin";
    char path[128], cmd[768], err[RL_ERR_MAX];
    model *m = sample_model(300, 33);
    snprintf(path, sizeof path, "%s/gen.safetensors", tmpdir);
    ck_assert_int_eq(model_save(m, path, NULL, err), 0);
    snprintf(cmd, sizeof cmd,
             "%s/grpo generate --ckpt %s --prompt-ids 1,2,3 --max-tokens 12 --seed 5 --ids "
             "2>/dev/null",
             bin, path);
    char *out;
    ck_assert_int_eq(run_cmd(cmd, &out), 0);
    char *js = strstr(out, "{\"tokens\": [");
    ck_assert_ptr_nonnull(js);
    /* the same draws as the library call */
    model_sample_opts o;
    model_sample_opts_default(&o);
    o.temperature = 0.8f;
    o.top_p = 0.95f;
    o.seed = 5;
    o.max_new = 12;
    int p[3] = {1, 2, 3}, pl = 3;
    const int *pp[1] = {p};
    model_sample_out so;
    ck_assert_int_eq(model_sample(m, &so, pp, &pl, 1, &o, err), 0);
    char want[256];
    int k = snprintf(want, sizeof want, "{\"tokens\": [");
    for (int i = 0; i < so.n; i++)
        k += snprintf(want + k, sizeof want - (size_t)k, "%s%d", i ? ", " : "", so.tokens[i]);
    ck_assert_ptr_nonnull(strstr(js, want));
    model_sample_out_dispose(&so);
    free(out);

    snprintf(cmd, sizeof cmd, "%s/grpo generate --ckpt %s --prompt hi --max-tokens 4 2>/dev/null",
             bin, path);
    ck_assert_int_eq(run_cmd(cmd, &out), 0);
    free(out);
    snprintf(cmd, sizeof cmd, "%s/grpo generate --ckpt %s/none --prompt hi 2>&1", bin, tmpdir);
    ck_assert_int_eq(run_cmd(cmd, &out), 1);
    ck_assert_ptr_nonnull(strstr(out, "cannot open"));
    free(out);
    snprintf(cmd, sizeof cmd, "%s/grpo generate --prompt hi 2>/dev/null", bin);
    ck_assert_int_eq(run_cmd(cmd, &out), 2);
    free(out);
    /* a bad flag value: 2, one line naming the flag */
    const char *bad_flags[][2] = {
        {"--max-tokens 12x", "--max-tokens"}, {"--max-tokens -1", "--max-tokens"},
        {"--seed -1", "--seed"},              {"--threads 99999", "--threads"},
        {"--temperature -1", "--temperature"}, {"--temperature nan", "--temperature"},
        {"--top-p 1.5", "--top-p"},           {"--top-p 0", "--top-p"},
        {"--prompt-ids 1,,2", "--prompt-ids"}, {"--stop 1,x", "--stop"},
    };
    for (size_t k = 0; k < sizeof bad_flags / sizeof *bad_flags; k++) {
        int ids = !strncmp(bad_flags[k][0], "--prompt-ids", 12);
        snprintf(cmd, sizeof cmd, "%s/grpo generate --ckpt %s %s %s 2>&1 >/dev/null", bin, path,
                 ids ? "" : "--prompt hi", bad_flags[k][0]);
        ck_assert_int_eq(run_cmd(cmd, &out), 2);
        ck_assert_msg(strstr(out, bad_flags[k][1]) && strchr(out, '\n') == out + strlen(out) - 1, "%s: %s",
                      bad_flags[k][0], out);
        free(out);
    }
    model_free(m);
}
END_TEST

/* ---- bf16 weights --------------------------------------------------------------- */

/* Rounds the matrices of an fp32 model to bf16 values, in place. */
static void round_matrices(model *m)
{
    for (int i = 0; i < m->n_tensors; i++) {
        const model_tensor *t = &m->tensors[i];
        if (t->ndim != 2)
            continue;
        float *w = m->params + t->offset;
        for (size_t j = 0; j < t->numel; j++) {
            uint16_t h;
            ops_bf16_from_f32(&h, &w[j], 1);
            ops_bf16_to_f32(&w[j], &h, 1);
        }
    }
}

/* log-softmax rows (T x V, row t at position t) of a token sequence. */
static float *logp_rows(model *m, const int *seq, int T)
{
    char err[RL_ERR_MAX];
    int V = m->cfg.vocab;
    int *tok = calloc((size_t)V * T, sizeof(int)), *tgt = calloc((size_t)V * T, sizeof(int));
    float *lp = malloc(sizeof(float) * (size_t)V * T), *rows = malloc(sizeof(float) * (size_t)V * T);
    for (int b = 0; b < V; b++)
        for (int t = 0; t < T; t++) {
            tok[b * T + t] = seq[t];
            tgt[b * T + t] = b;
        }
    ck_assert_msg(model_forward(m, tok, tgt, V, T, 1.0f, lp, NULL, err) == 0, "%s", err);
    for (int b = 0; b < V; b++)
        for (int t = 0; t < T; t++)
            rows[(size_t)t * V + b] = lp[b * T + t];
    free(tok), free(tgt), free(lp);
    return rows;
}

/* Largest |a - b| / (|b| + 1e-3) over n values. */
static double max_rel_diff(const float *a, const float *b, size_t n)
{
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]) / (fabs((double)b[i]) + 1e-3);
        worst = d > worst ? d : worst;
    }
    return worst;
}

/* A checkpoint loaded with bf16 matrices holds half the bytes of them and
 * gives the log-probabilities (every id, every position), the samples and
 * the scores of the fp32 model whose matrices were rounded to bf16; its
 * norm gains stay fp32; random init in bf16 is the fp32 init rounded. */
START_TEST(test_bf16_matches_rounded)
{
    char err[RL_ERR_MAX], path[160];
    model *m32 = sample_model(300, 61);
    for (int i = 0; i < m32->n_tensors; i++) /* gains other than 1, which bf16 would not hold */
        if (m32->tensors[i].is_norm)
            for (size_t j = 0; j < m32->tensors[i].numel; j++)
                m32->params[m32->tensors[i].offset + j] = 1.0f + 0.001f * (float)(j % 7) + 1e-5f;
    snprintf(path, sizeof path, "%s/m.safetensors", tmpdir);
    ck_assert_int_eq(model_save(m32, path, NULL, err), 0);
    model_opts mo;
    model_opts_default(&mo);
    mo.dtype = MODEL_DTYPE_BF16;
    model *mb;
    ck_assert_msg(model_load(&mb, NULL, path, &mo, err) == 0, "%s", err);
    ck_assert_int_eq(mb->dtype, MODEL_DTYPE_BF16);
    size_t mat = 0;
    for (int i = 0; i < mb->n_tensors; i++)
        if (mb->tensors[i].ndim == 2) {
            mat += mb->tensors[i].numel;
            ck_assert(mb->tensors[i].bf16);
        } else {
            ck_assert(!mb->tensors[i].bf16);
            ck_assert_int_eq(memcmp(mb->params + mb->tensors[i].offset,
                                    m32->params + m32->tensors[i].offset,
                                    mb->tensors[i].numel * sizeof(float)), 0); /* exact fp32 */
        }
    ck_assert_uint_eq(mb->n_bf16, mat);
    ck_assert_uint_eq(mb->n_f32 + mb->n_bf16, m32->n_params);
    ck_assert_ptr_null(mb->layer[0].wq);
    ck_assert_ptr_nonnull(mb->layer16[0].wq);

    round_matrices(m32);
    enum { T = 40 };
    int seq[T];
    for (int t = 0; t < T; t++)
        seq[t] = (t * 37 + 5) % 300;
    float *a = logp_rows(mb, seq, T), *b = logp_rows(m32, seq, T);
    double d = max_rel_diff(a, b, (size_t)T * 300);
    fprintf(stderr, "test_bf16_matches_rounded: largest relative logprob difference %.2e\n", d);
    ck_assert_msg(d < 1e-4, "bf16 and rounded fp32 differ by %g (relative)", d);
    free(a), free(b);

    /* sampling: the same draws, logprobs equal to the scores */
    int p1[3] = {1, 2, 3}, p2[5] = {9, 8, 7, 6, 5}, lens[2] = {3, 5};
    const int *pp[2] = {p1, p2};
    model_sample_opts o;
    model_sample_opts_default(&o);
    o.temperature = 0.9f;
    o.max_new = 20;
    o.seed = 3;
    model_sample_out ob[2], o32[2];
    ck_assert_int_eq(model_sample(mb, ob, pp, lens, 2, &o, err), 0);
    ck_assert_int_eq(model_sample(m32, o32, pp, lens, 2, &o, err), 0);
    for (int s = 0; s < 2; s++) {
        ck_assert_int_eq(ob[s].n, o32[s].n);
        ck_assert_int_eq(memcmp(ob[s].tokens, o32[s].tokens, sizeof(int) * (size_t)ob[s].n), 0);
        ck_assert_double_lt(max_rel_diff(ob[s].logprobs, o32[s].logprobs, (size_t)ob[s].n), 1e-4);
        model_sample_out_dispose(&ob[s]);
        model_sample_out_dispose(&o32[s]);
    }
    check_sample_vs_score(mb, 1.0f, 0.95f);

    /* random init in bf16: the fp32 init's draws, rounded */
    model *rb, *r32;
    ck_assert_int_eq(model_new(&rb, &mb->cfg, &mo, err), 0);
    ck_assert_int_eq(model_new(&r32, &mb->cfg, NULL, err), 0);
    model_random_init(rb, 9);
    model_random_init(r32, 9);
    round_matrices(r32);
    for (int i = 0; i < rb->n_tensors; i++) {
        const model_tensor *t = &rb->tensors[i];
        for (size_t j = 0; j < t->numel; j += 7) {
            float v;
            if (t->bf16)
                ops_bf16_to_f32(&v, rb->wbf + t->offset + j, 1);
            else
                v = rb->params[t->offset + j];
            ck_assert(v == r32->params[r32->tensors[i].offset + j]);
        }
    }
    model_free(rb);
    model_free(r32);
    model_free(mb);
    model_free(m32);
}
END_TEST

/* A bf16 model refuses everything training needs, and saving, in one
 * line that says to load it in f32; its forward still runs. */
START_TEST(test_bf16_refuses_training)
{
    char err[RL_ERR_MAX];
    model_config cfg;
    tiny_config(&cfg);
    model_opts mo;
    model_opts_default(&mo);
    mo.dtype = MODEL_DTYPE_BF16;
    model *m;
    ck_assert_int_eq(model_new(&m, &cfg, &mo, err), 0);
    model_random_init(m, 2);
    int tok[4] = {1, 2, 3, 4}, tgt[4] = {2, 3, 4, -1};
    float lp[4], dl[4] = {-1, -1, -1, 0};
    ck_assert_int_eq(model_forward(m, tok, tgt, 1, 4, 1.0f, lp, NULL, err), 0);
    ck_assert(lp[0] < 0 && lp[3] == 0);
    err[0] = 0;
    ck_assert_int_eq(model_backward(m, dl, err), RL_EINVAL);
    ck_assert_msg(strstr(err, "bf16") && strstr(err, "f32 to train") && !strchr(err, '\n'), "%s", err);
    ck_assert_ptr_null(m->grads);
    err[0] = 0;
    ck_assert_int_eq(model_zero_grad(m, err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "f32 to train"));
    char path[160];
    snprintf(path, sizeof path, "%s/x.safetensors", tmpdir);
    ck_assert_int_eq(model_save(m, path, NULL, err), RL_EINVAL);
    ck_assert_int_eq(access(path, F_OK), -1);
    snprintf(path, sizeof path, "%s/hf", tmpdir);
    ck_assert_int_eq(model_save_hf(m, path, 1, err), RL_EINVAL);
    int dt;
    ck_assert_int_eq(model_dtype_parse(&dt, "--dtype", "bf16", err), 0);
    ck_assert_int_eq(dt, MODEL_DTYPE_BF16);
    ck_assert_int_eq(model_dtype_parse(&dt, "--dtype", "f32", err), 0);
    ck_assert_int_eq(dt, MODEL_DTYPE_F32);
    ck_assert_int_eq(model_dtype_parse(&dt, "--dtype", "f16", err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "--dtype f16"));
    model_free(m);
}
END_TEST

/* A Hugging Face directory in BF16 loads with bf16 matrices holding
 * exactly the file's values (the same as an fp32 load then rounding);
 * `grpo generate --dtype bf16` samples what the library samples. */
START_TEST(test_bf16_hf_and_cli)
{
    char err[RL_ERR_MAX], dir[160], path[160];
    model *m32 = sample_model(300, 71);
    snprintf(dir, sizeof dir, "%s/hf", tmpdir);
    ck_assert_int_eq(model_save_hf(m32, dir, 1, err), 0);
    model_opts mo;
    model_opts_default(&mo);
    mo.dtype = MODEL_DTYPE_BF16;
    model *mb, *mf;
    ck_assert_msg(model_load_hf(&mb, dir, &mo, err) == 0, "%s", err);
    ck_assert_msg(model_load_hf(&mf, dir, NULL, err) == 0, "%s", err);
    for (int i = 0; i < mb->n_tensors; i++) {
        const model_tensor *t = &mb->tensors[i];
        for (size_t j = 0; j < t->numel; j++) {
            float v;
            if (t->bf16)
                ops_bf16_to_f32(&v, mb->wbf + t->offset + j, 1);
            else
                v = mb->params[t->offset + j];
            ck_assert(v == mf->params[mf->tensors[i].offset + j]);
        }
    }
    model_free(mf);

    /* the CLI: a checkpoint of the rounded model, sampled in bf16 */
    round_matrices(m32);
    snprintf(path, sizeof path, "%s/g.safetensors", tmpdir);
    ck_assert_int_eq(model_save(m32, path, NULL, err), 0);
    const char *bin = getenv("RL_BIN") ? getenv("RL_BIN") : "bin";
    char cmd[768], *out;
    snprintf(cmd, sizeof cmd,
             "%s/grpo generate --ckpt %s --dtype bf16 --prompt-ids 4,5,6 --max-tokens 10 --seed 2 "
             "--ids 2>/dev/null", bin, path);
    ck_assert_int_eq(run_cmd(cmd, &out), 0);
    model_sample_opts o;
    model_sample_opts_default(&o);
    o.temperature = 0.8f;
    o.top_p = 0.95f;
    o.seed = 2;
    o.max_new = 10;
    int p[3] = {4, 5, 6}, pl = 3;
    const int *pp[1] = {p};
    model_sample_out so;
    ck_assert_int_eq(model_sample(mb, &so, pp, &pl, 1, &o, err), 0);
    char want[256];
    int k = snprintf(want, sizeof want, "{\"tokens\": [");
    for (int i = 0; i < so.n; i++)
        k += snprintf(want + k, sizeof want - (size_t)k, "%s%d", i ? ", " : "", so.tokens[i]);
    ck_assert_msg(strstr(out, want) != NULL, "%s lacks %s", out, want);
    model_sample_out_dispose(&so);
    free(out);
    snprintf(cmd, sizeof cmd, "%s/grpo generate --ckpt %s --dtype f8 --prompt hi 2>&1 >/dev/null", bin,
             path);
    ck_assert_int_eq(run_cmd(cmd, &out), 2);
    ck_assert_msg(strstr(out, "--dtype f8") && strchr(out, '\n') == out + strlen(out) - 1, "%s", out);
    free(out);
    model_free(mb);
    model_free(m32);
}
END_TEST

START_TEST(test_config_check)
{
    char err[RL_ERR_MAX];
    model_config c;
    model_config_default(&c);
    ck_assert_int_eq(model_config_check(&c, err), 0);
    size_t n = model_config_params(&c);
    ck_assert(n > 5500000 && n < 6000000); /* the 5.8 M default */
    c.n_kv_head = 3;
    ck_assert_int_eq(model_config_check(&c, err), RL_EINVAL);
    model_config_default(&c);
    c.d_model = 250;
    ck_assert_int_eq(model_config_check(&c, err), RL_EINVAL);
    model_config_default(&c);
    c.vocab = 1 << 20;
    ck_assert_int_eq(model_config_check(&c, err), RL_EINVAL);
    model_config_default(&c);
    c.rope_theta = NAN;
    ck_assert_int_eq(model_config_check(&c, err), RL_EINVAL);
    ck_assert_ptr_null(strchr(err, '\n'));
}
END_TEST

START_TEST(test_blascore_pick)
{
    /* an AVX-512 CPU that OpenBLAS took for a Prescott: ask for SkylakeX */
    ck_assert_str_eq(blascore_pick("Prescott", 1, 1), "SkylakeX");
    ck_assert_str_eq(blascore_pick("prescott", 1, 1), "SkylakeX");
    ck_assert_str_eq(blascore_pick("Haswell", 1, 1), "SkylakeX");
    /* AVX2 only: Haswell, and nothing newer than what it has */
    ck_assert_str_eq(blascore_pick("Sandybridge", 0, 1), "Haswell");
    ck_assert_ptr_null(blascore_pick("Haswell", 0, 1));
    ck_assert_ptr_null(blascore_pick("Zen", 0, 1));
    /* no AVX2: keep; already right or newer, or a name not in the lists: keep */
    ck_assert_ptr_null(blascore_pick("Prescott", 0, 0));
    ck_assert_ptr_null(blascore_pick("SkylakeX", 1, 1));
    ck_assert_ptr_null(blascore_pick("Cooperlake", 1, 1));
    ck_assert_ptr_null(blascore_pick("SomeFutureCore", 1, 1));
    ck_assert_ptr_null(blascore_pick(NULL, 1, 1));

    /* the environment wins: a set OPENBLAS_CORETYPE (which is also how the
     * re-executed run knows it is done) or RL_BLAS_CORE=keep */
    char *old = getenv("OPENBLAS_CORETYPE") ? strdup(getenv("OPENBLAS_CORETYPE")) : NULL;
    setenv("OPENBLAS_CORETYPE", "Prescott", 1);
    ck_assert_ptr_null(blascore_wanted());
    unsetenv("OPENBLAS_CORETYPE");
    setenv("RL_BLAS_CORE", "keep", 1);
    ck_assert_ptr_null(blascore_wanted());
    unsetenv("RL_BLAS_CORE");
    if (old) {
        setenv("OPENBLAS_CORETYPE", old, 1);
        free(old);
    }
}
END_TEST

/* The re-exec itself: told that OpenBLAS picked Prescott, bin/grpo runs
 * again with the kernels the CPU supports (OPENBLAS_VERBOSE=2 makes each
 * load print its "Core:" line). */
START_TEST(test_blascore_reexec_cli)
{
    const char *bin = getenv("RL_BIN") ? getenv("RL_BIN") : "bin";
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "env -u OPENBLAS_CORETYPE RL_BLAS_CORE=assume:Prescott OPENBLAS_VERBOSE=2 "
             "%s/grpo --help 2>&1",
             bin);
    char *out;
    ck_assert_int_eq(run_cmd(cmd, &out), 0);
    ck_assert_ptr_nonnull(strstr(out, "usage: grpo"));
    int avx512, avx2;
    blascore_cpu(&avx512, &avx2);
    const char *want = blascore_pick("Prescott", avx512, avx2);
    int loads = 0;
    const char *last = NULL;
    for (const char *at = out; (at = strstr(at, "Core: ")); at += 6)
        loads++, last = at + 6;
    if (want) {
        ck_assert_int_eq(loads, 2); /* once, then once more after the exec */
        ck_assert_int_eq(strncmp(last, want, strlen(want)), 0);
    } else {
        ck_assert_int_le(loads, 1);
    }
    /* the first process was replaced, so the command ran once */
    ck_assert_ptr_null(strstr(strstr(out, "usage: grpo") + 1, "usage: grpo"));
    free(out);
}
END_TEST

/* ---- Hugging Face checkpoints ------------------------------------------------ */

static int have_torch(void)
{
    return access("/usr/bin/python3", X_OK) == 0 && access("bench/torch_model.py", R_OK) == 0 &&
           system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0;
}

/* Runs bench/torch_model.py --batch on the lines given; returns the JSON
 * objects it printed, one per line (caller deletes). */
static cJSON *torch_batch(const char *lines)
{
    char path[160], out[160], cmd[512];
    snprintf(path, sizeof path, "%s/batch.txt", tmpdir);
    snprintf(out, sizeof out, "%s/batch.out", tmpdir);
    write_bytes(path, lines, strlen(lines));
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 -B bench/torch_model.py --batch %s > %s", path, out);
    ck_assert_int_eq(system(cmd), 0);
    char *text, err[RL_ERR_MAX];
    ck_assert_int_eq(fs_read_file(&text, NULL, out, 64u << 20, err), 0);
    cJSON *arr = cJSON_CreateArray();
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        cJSON *o = cJSON_Parse(line);
        ck_assert_msg(o != NULL, "torch_model.py printed %.80s", line);
        cJSON_AddItemToArray(arr, o);
    }
    free(text);
    return arr;
}

enum { HF_LEN = 9 };
static const int HF_TOKS[HF_LEN] = {3, 17, 150, 42, 42, 7, 99, 0, 121};

/* The C model's log-softmax rows of HF_TOKS (a forward pass with one batch
 * row per vocabulary entry) and its decoder's logprobs (model_score)
 * against PyTorch's rows: the largest difference. */
static double hf_max_diff(model *m, const cJSON *py_logp)
{
    char err[RL_ERR_MAX];
    int V = m->cfg.vocab, T = HF_LEN - 1;
    ck_assert_int_eq(cJSON_GetArraySize(py_logp), T);
    int *tok = malloc(sizeof(int) * (size_t)V * T), *tgt = malloc(sizeof(int) * (size_t)V * T);
    float *lp = malloc(sizeof(float) * (size_t)V * T);
    for (int b = 0; b < V; b++)
        for (int t = 0; t < T; t++) {
            tok[b * T + t] = HF_TOKS[t];
            tgt[b * T + t] = b;
        }
    ck_assert_int_eq(model_forward(m, tok, tgt, V, T, 1.0f, lp, NULL, err), 0);
    double worst = 0;
    for (int t = 0; t < T; t++) {
        const cJSON *row = cJSON_GetArrayItem(py_logp, t);
        ck_assert_int_eq(cJSON_GetArraySize(row), V);
        for (int b = 0; b < V; b++) {
            double d = fabs(lp[b * T + t] - cJSON_GetArrayItem(row, b)->valuedouble);
            worst = d > worst ? d : worst;
        }
    }
    float sc[HF_LEN - 1];
    float *scp = sc;
    const int *seq = HF_TOKS;
    int len = HF_LEN;
    ck_assert_int_eq(model_score(m, &scp, &seq, &len, 1, 1.0f, err), 0);
    for (int t = 0; t < T; t++) {
        double d = fabs(sc[t] - cJSON_GetArrayItem(cJSON_GetArrayItem(py_logp, t), HF_TOKS[t + 1])->valuedouble);
        worst = d > worst ? d : worst;
    }
    free(tok);
    free(tgt);
    free(lp);
    return worst;
}

/* Random checkpoints written by PyTorch in Hugging Face layout (Qwen3 with
 * an untied head and head_dim 16 != 48/4 in BF16; Qwen2 with biases,
 * sharded, in F16; Llama with one kv head in F32) load here and give
 * PyTorch's logits; a C model exported to Hugging Face layout gives the
 * same logits in PyTorch; export then import is exact. */
START_TEST(test_hf_vs_torch)
{
    if (!have_torch()) {
        fprintf(stderr, "test_hf_vs_torch: no python3 with torch, skipped\n");
        return;
    }
    char err[RL_ERR_MAX], path[256], lines[2048], tokfile[160];
    snprintf(tokfile, sizeof tokfile, "%s/tokens.txt", tmpdir);
    char toks[128];
    int n = 0;
    for (int i = 0; i < HF_LEN; i++)
        n += snprintf(toks + n, sizeof toks - (size_t)n, "%d ", HF_TOKS[i]);
    write_bytes(tokfile, toks, (size_t)n);

    /* a C-born Qwen2-shaped model (biases, untied, head_dim 10) exported */
    model_config cfg;
    tiny_config(&cfg);
    cfg.vocab = 160;
    cfg.d_model = 32;
    cfg.n_head = 4;
    cfg.n_kv_head = 2;
    cfg.head_dim = 10;
    cfg.untied = 1;
    cfg.qkv_bias = 1;
    cfg.qk_norm = 0;
    cfg.max_seq = 64;
    model *c_model;
    ck_assert_int_eq(model_new(&c_model, &cfg, NULL, err), 0);
    fill_normal(c_model->params, c_model->n_params, 0.2f, 71);
    snprintf(path, sizeof path, "%s/exported", tmpdir);
    ck_assert_int_eq(model_save_hf(c_model, path, 0, err), 0);

    snprintf(lines, sizeof lines,
             "--hf-random %s/qwen3 Qwen3ForCausalLM head_dim=16 tie=0 dtype=BF16 tokens=%s\n"
             "--hf-random %s/qwen2 Qwen2ForCausalLM dtype=F16 shards=3 tokens=%s\n"
             "--hf-random %s/llama LlamaForCausalLM n_kv_head=1 tie=0 dtype=F32 tokens=%s\n"
             "--hf-logp %s/exported %s\n",
             tmpdir, tokfile, tmpdir, tokfile, tmpdir, tokfile, tmpdir, tokfile);
    cJSON *res = torch_batch(lines);
    ck_assert_int_eq(cJSON_GetArraySize(res), 4);
    const char *names[] = {"qwen3", "qwen2", "llama"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", tmpdir, names[i]);
        model *m;
        model_meta meta;
        ck_assert_msg(model_load(&m, &meta, path, NULL, err) == 0, "%s", err);
        ck_assert_int_eq(m->cfg.qk_norm, i == 0);
        ck_assert_int_eq(m->cfg.qkv_bias, i == 1);
        ck_assert_int_eq(m->cfg.untied, i != 1);
        double d = hf_max_diff(m, cJSON_GetObjectItem(cJSON_GetArrayItem(res, i), "logp"));
        fprintf(stderr, "test_hf_vs_torch: %s: largest logprob difference %.2e\n", names[i], d);
        ck_assert_msg(d < 1e-4, "%s: C and PyTorch differ by %g", names[i], d);

        /* export and import again: identical tensors (fp32, and bf16 for
         * the bf16 source, whose values bf16 holds exactly) */
        for (int bf16 = 0; bf16 <= (i == 0); bf16++) {
            char out[256];
            snprintf(out, sizeof out, "%s/%s-again-%d", tmpdir, names[i], bf16);
            ck_assert_int_eq(model_save_hf(m, out, bf16, err), 0);
            model *m2;
            ck_assert_msg(model_load_hf(&m2, out, NULL, err) == 0, "%s", err);
            ck_assert_int_eq(memcmp(&m->cfg, &m2->cfg, sizeof m->cfg), 0);
            ck_assert_int_eq(memcmp(m->params, m2->params, m->n_params * sizeof(float)), 0);
            model_free(m2);
        }
        model_free(m);
    }
    double d = hf_max_diff(c_model, cJSON_GetObjectItem(cJSON_GetArrayItem(res, 3), "logp"));
    fprintf(stderr, "test_hf_vs_torch: exported: largest logprob difference %.2e\n", d);
    ck_assert_msg(d < 1e-4, "exported: C and PyTorch differ by %g", d);
    cJSON_Delete(res);
    model_free(c_model);
}
END_TEST

/* Replaces the first `from` in file path by `to`. */
static void edit_file(const char *path, const char *from, const char *to)
{
    char *text, err[RL_ERR_MAX];
    size_t len;
    ck_assert_int_eq(fs_read_file(&text, &len, path, 1 << 20, err), 0);
    char *at = memmem(text, len, from, strlen(from));
    ck_assert_msg(at != NULL, "%s lacks %s", path, from);
    size_t nf = strlen(from), nt = strlen(to);
    char *out = malloc(len - nf + nt + 1);
    memcpy(out, text, (size_t)(at - text));
    memcpy(out + (at - text), to, nt);
    memcpy(out + (at - text) + nt, at + nf, len - (size_t)(at - text) - nf);
    write_bytes(path, out, len - nf + nt);
    free(out);
    free(text);
}

static void expect_hf_error(const char *dir, const char *want)
{
    char err[RL_ERR_MAX] = "";
    model *m = NULL;
    int rc = model_load_hf(&m, dir, NULL, err);
    ck_assert_msg(rc != 0 && m == NULL, "%s loaded, expected an error with '%s'", dir, want);
    ck_assert_msg(strstr(err, want) != NULL, "error '%s' lacks '%s'", err, want);
    ck_assert_ptr_null(strchr(err, '\n'));
}

/* Unsupported settings and damaged directories are refused in one line. */
START_TEST(test_hf_refused)
{
    char err[RL_ERR_MAX], dir[160], cfgp[200], st[200];
    model_config cfg;
    tiny_config(&cfg);
    cfg.untied = 1;
    model *m;
    ck_assert_int_eq(model_new(&m, &cfg, NULL, err), 0);
    model_random_init(m, 5);
    snprintf(dir, sizeof dir, "%s/hf", tmpdir);
    snprintf(cfgp, sizeof cfgp, "%s/config.json", dir);
    snprintf(st, sizeof st, "%s/model.safetensors", dir);
    struct {
        const char *from, *to, *want;
    } cases[] = {
        {"Qwen3ForCausalLM", "MistralForCausalLM", "architecture MistralForCausalLM"},
        {"\"rope_scaling\":\tnull", "\"rope_scaling\": {\"type\": \"yarn\"}", "rope_scaling"},
        {"\"use_sliding_window\":\tfalse", "\"use_sliding_window\": true", "use_sliding_window"},
        {"\"attention_bias\":\tfalse", "\"attention_bias\": true", "attention_bias"},
        {"\"hidden_act\":\t\"silu\"", "\"hidden_act\": \"gelu\"", "hidden_act"},
        {"\"num_key_value_heads\":\t1", "\"num_key_value_heads\": 3", "n_kv_head is 3"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert_int_eq(model_save_hf(m, dir, 0, err), 0);
        edit_file(cfgp, cases[i].from, cases[i].to);
        expect_hf_error(dir, cases[i].want);
    }
    /* weights: a wrong dtype, a truncated file, a missing one */
    ck_assert_int_eq(model_save_hf(m, dir, 0, err), 0);
    edit_file(st, "\"F32\"", "\"I64\"");
    expect_hf_error(dir, "expected BF16, F16 or F32");
    ck_assert_int_eq(model_save_hf(m, dir, 0, err), 0);
    ck_assert_int_eq(truncate(st, 4000), 0);
    expect_hf_error(dir, "data_offsets");
    unlink(st);
    expect_hf_error(dir, "neither model.safetensors nor model.safetensors.index.json");
    /* an untied config whose files hold no head */
    model_free(m);
    cfg.untied = 0;
    ck_assert_int_eq(model_new(&m, &cfg, NULL, err), 0);
    ck_assert_int_eq(model_save_hf(m, dir, 0, err), 0);
    edit_file(cfgp, "\"tie_word_embeddings\":\ttrue", "\"tie_word_embeddings\": false");
    expect_hf_error(dir, "tensor lm_head.weight is missing");
    /* q/k norm with biases has no Hugging Face architecture */
    model_free(m);
    cfg.qkv_bias = 1;
    ck_assert_int_eq(model_new(&m, &cfg, NULL, err), 0);
    ck_assert_int_eq(model_save_hf(m, dir, 0, err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "no Hugging Face architecture"));
    model_free(m);
}
END_TEST

Suite *model_suite(void)
{
    Suite *s = suite_create("model");
    TCase *ops = tcase_create("ops");
    tcase_add_test(ops, test_vexp_accuracy);
    tcase_add_test(ops, test_grad_rmsnorm);
    tcase_add_test(ops, test_grad_matmul);
    tcase_add_test(ops, test_matmul_decode_sizes);
    tcase_add_test(ops, test_grad_rope);
    tcase_add_test(ops, test_grad_swiglu);
    tcase_add_test(ops, test_grad_logp);
    tcase_add_test(ops, test_grad_attention);
    tcase_add_test(ops, test_grad_embed);
    tcase_add_test(ops, test_ops_threads_agree);
    tcase_set_timeout(ops, 120);
    suite_add_tcase(s, ops);

    TCase *mdl = tcase_create("model");
    tcase_add_test(mdl, test_config_check);
    tcase_add_test(mdl, test_blascore_pick);
    tcase_add_test(mdl, test_grad_whole_model);
    tcase_add_test(mdl, test_masked_tokens_zero_grad);
    tcase_add_test(mdl, test_forward_causal_batch);
    tcase_add_test(mdl, test_sample_matches_score);
    tcase_add_test(mdl, test_active_vocab_masks_padding);
    tcase_add_test(mdl, test_sample_cached_prefix);
    tcase_add_test(mdl, test_dec_matches_sample);
    tcase_add_test(mdl, test_dec_prefix_reuse);
    tcase_add_test(mdl, test_sample_deterministic_and_stop);
    tcase_add_test(mdl, test_top_p_set);
    tcase_add_test(mdl, test_adamw_training_step);
    tcase_add_test(mdl, test_adamw_reference);
    tcase_add_test(mdl, test_lr_schedule_and_clip);
    tcase_add_test(mdl, test_learns_to_copy);
    tcase_set_timeout(mdl, 120);
    suite_add_tcase(s, mdl);

    TCase *io = tcase_create("checkpoint");
    tcase_add_checked_fixture(io, setup_tmp, teardown_tmp);
    tcase_add_test(io, test_ckpt_roundtrip);
    tcase_add_test(io, test_ckpt_bad_files);
    tcase_add_test(io, test_ckpt_python_reader);
    tcase_add_test(io, test_adamw_resume_exact);
    tcase_add_test(io, test_generate_cli);
    tcase_add_test(io, test_blascore_reexec_cli);
    tcase_set_timeout(io, 120);
    suite_add_tcase(s, io);

    TCase *b16 = tcase_create("bf16");
    tcase_add_checked_fixture(b16, setup_tmp, teardown_tmp);
    tcase_add_test(b16, test_bf16_matches_rounded);
    tcase_add_test(b16, test_bf16_refuses_training);
    tcase_add_test(b16, test_bf16_hf_and_cli);
    tcase_set_timeout(b16, 120);
    suite_add_tcase(s, b16);

    TCase *hf = tcase_create("hf");
    tcase_add_checked_fixture(hf, setup_tmp, teardown_tmp);
    tcase_add_test(hf, test_hf_refused);
    tcase_add_test(hf, test_hf_vs_torch);
    tcase_set_timeout(hf, 300);
    suite_add_tcase(s, hf);
    return s;
}
