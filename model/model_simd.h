/* model_simd.h - the model's vector loops, written once for a vector width.
 *
 * model_ops.c includes this file twice: 8 lanes (AVX2 / SSE clones) and
 * 16 lanes (AVX-512, with fused multiply-adds). Before including, it
 * defines VW (lanes), VF / VI (float / int vector types of VW lanes), SFX
 * (the name suffix) and VATTR (the functions' target attributes). Not a
 * normal header: no include guard, on purpose.
 */

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, SFX)

static inline __attribute__((always_inline)) VF FN(vload)(const float *p)
{
    VF v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline __attribute__((always_inline)) void FN(vstore)(float *p, VF v)
{
    memcpy(p, &v, sizeof v);
}

static inline __attribute__((always_inline)) VF FN(vset)(float x)
{
    return (VF){0} + x;
}

static inline __attribute__((always_inline)) VF FN(vsel)(VI m, VF a, VF b)
{
    return (VF)(((VI)a & m) | ((VI)b & ~m)); /* m ? a : b, lane by lane */
}

/* exp on VW lanes: exp(x) = 2^n * exp(r), n = round(x / ln 2), r = x - n ln 2
 * (ln 2 split in two for accuracy), exp(r) = 1 + r + r^2 p(r) with a degree-5
 * p evaluated as Estrin's scheme (short dependency chains); ~2 ulp.
 * Inputs below -87 give exactly 0 (so -inf masks work); above 88 saturate. */
static inline __attribute__((always_inline)) VF FN(vexp_lanes)(VF x)
{
    const VF hi = FN(vset)(88.0f), lo = FN(vset)(-87.0f);
    VI under = x < lo;
    x = FN(vsel)(x > hi, hi, x);
    x = FN(vsel)(under, lo, x);
    const VF magic = FN(vset)(12582912.0f); /* 1.5 * 2^23: round to nearest */
    VF n = (x * FN(vset)(1.44269504088896341f) + magic) - magic;
    VF r = x - n * FN(vset)(0.693359375f);
    r = r - n * FN(vset)(-2.12194440e-4f);
    VF r2 = r * r, r4 = r2 * r2;
    VF t0 = FN(vset)(5.0000001201e-1f) + FN(vset)(1.6666665459e-1f) * r;
    VF t1 = FN(vset)(4.1665795894e-2f) + FN(vset)(8.3334519073e-3f) * r;
    VF t2 = FN(vset)(1.3981999507e-3f) + FN(vset)(1.9875691500e-4f) * r;
    VF p = t0 + t1 * r2 + t2 * r4;
    p = p * r2 + r + FN(vset)(1.0f);
    VI ni = __builtin_convertvector(n, VI);
    VI bits = (ni + 127) << 23;
    VF y = p * (VF)bits;
    return (VF)((VI)y & ~under);
}

VATTR static void FN(ops_vexp)(float *y, const float *x, int n)
{
    int i = 0;
    for (; i + VW <= n; i += VW)
        FN(vstore)(y + i, FN(vexp_lanes)(FN(vload)(x + i)));
    if (i < n) {
        float tmp[VW] = {0};
        memcpy(tmp, x + i, sizeof(float) * (size_t)(n - i));
        FN(vstore)(tmp, FN(vexp_lanes)(FN(vload)(tmp)));
        memcpy(y + i, tmp, sizeof(float) * (size_t)(n - i));
    }
}

/* Lane partial sums are flushed into a double every 1024 values. */
#define FLUSH(i) (((i) & 1023) == 1024 - VW)

/* y = exp(x - sub) for n values; returns the sum of y. */
VATTR static double FN(vexp_sub_sum)(float *y, const float *x, float sub, int n)
{
    VF s = FN(vset)(0.0f), vs = FN(vset)(sub);
    int i = 0;
    double total = 0.0;
    for (; i + VW <= n; i += VW) {
        VF e = FN(vexp_lanes)(FN(vload)(x + i) - vs);
        FN(vstore)(y + i, e);
        s += e;
        if (FLUSH(i)) {
            for (int k = 0; k < VW; k++)
                total += s[k];
            s = FN(vset)(0.0f);
        }
    }
    for (int k = 0; k < VW; k++)
        total += s[k];
    if (i < n) {
        float tmp[VW];
        for (int k = 0; k < VW; k++)
            tmp[k] = i + k < n ? x[i + k] - sub : -INFINITY;
        VF e = FN(vexp_lanes)(FN(vload)(tmp));
        for (int k = 0; i + k < n; k++) {
            y[i + k] = e[k];
            total += e[k];
        }
    }
    return total;
}

/* sum of exp(x - sub) over n values, and (if sez) sum of exp(x - sub) * x,
 * without storing the exponentials. */
VATTR static double FN(vexp_stats)(const float *x, float sub, int n, double *sez)
{
    VF s = FN(vset)(0.0f), sz = FN(vset)(0.0f), vs = FN(vset)(sub);
    double total = 0.0, tz = 0.0;
    int i = 0;
    for (; i + VW <= n; i += VW) {
        VF xv = FN(vload)(x + i);
        VF e = FN(vexp_lanes)(xv - vs);
        s += e;
        sz += e * xv;
        if (FLUSH(i)) {
            for (int k = 0; k < VW; k++) {
                total += s[k];
                tz += sz[k];
            }
            s = sz = FN(vset)(0.0f);
        }
    }
    for (int k = 0; k < VW; k++) {
        total += s[k];
        tz += sz[k];
    }
    if (i < n) {
        float tmp[VW];
        for (int k = 0; k < VW; k++)
            tmp[k] = i + k < n ? x[i + k] - sub : -INFINITY;
        VF e = FN(vexp_lanes)(FN(vload)(tmp));
        for (int k = 0; i + k < n; k++) {
            total += e[k];
            tz += (double)e[k] * x[i + k];
        }
    }
    if (sez)
        *sez = tz;
    return total;
}

VATTR static float FN(vmax)(const float *x, int n)
{
    float m = -INFINITY;
    int i = 0;
    if (n >= VW) {
        VF vm = FN(vload)(x);
        for (i = VW; i + VW <= n; i += VW) {
            VF v = FN(vload)(x + i);
            vm = FN(vsel)(v > vm, v, vm);
        }
        for (int k = 0; k < VW; k++)
            m = vm[k] > m ? vm[k] : m;
    }
    for (; i < n; i++)
        m = x[i] > m ? x[i] : m;
    return m;
}

VATTR static void FN(vscale)(float *x, float s, int n)
{
    int i = 0;
    VF vs = FN(vset)(s);
    for (; i + VW <= n; i += VW)
        FN(vstore)(x + i, FN(vload)(x + i) * vs);
    for (; i < n; i++)
        x[i] *= s;
}

VATTR static double FN(vdot)(const float *a, const float *b, int n)
{
    VF s = FN(vset)(0.0f);
    int i = 0;
    for (; i + VW <= n; i += VW)
        s += FN(vload)(a + i) * FN(vload)(b + i);
    double t = 0.0;
    for (int k = 0; k < VW; k++)
        t += s[k];
    for (; i < n; i++)
        t += (double)a[i] * b[i];
    return t;
}

/* d[j] = p[j] * (d[j] - D): the softmax backward of one attention row. */
VATTR static void FN(vsoftmax_bwd)(float *d, const float *p, float D, int n)
{
    int i = 0;
    VF vD = FN(vset)(D);
    for (; i + VW <= n; i += VW)
        FN(vstore)(d + i, FN(vload)(p + i) * (FN(vload)(d + i) - vD));
    for (; i < n; i++)
        d[i] = p[i] * (d[i] - D);
}

/* sum of w[c] * dy[c] * x[c] (the RMSNorm backward's row reduction). */
VATTR static double FN(vdot3)(const float *w, const float *dy, const float *x, int n)
{
    VF s = FN(vset)(0.0f);
    int i = 0;
    for (; i + VW <= n; i += VW)
        s += FN(vload)(w + i) * FN(vload)(dy + i) * FN(vload)(x + i);
    double t = 0.0;
    for (int k = 0; k < VW; k++)
        t += s[k];
    for (; i < n; i++)
        t += (double)w[i] * dy[i] * x[i];
    return t;
}

/* dx += r * w * dy - k * x;  dw += dy * x * r (dw may be NULL). */
VATTR static void FN(vnorm_bwd)(float *dx, float *dw, const float *w, const float *dy,
                                const float *x, float r, float k, int n)
{
    int i = 0;
    VF vr = FN(vset)(r), vk = FN(vset)(k);
    for (; i + VW <= n; i += VW) {
        VF xv = FN(vload)(x + i), dyv = FN(vload)(dy + i);
        FN(vstore)(dx + i, FN(vload)(dx + i) + vr * FN(vload)(w + i) * dyv - vk * xv);
        if (dw)
            FN(vstore)(dw + i, FN(vload)(dw + i) + dyv * xv * vr);
    }
    for (; i < n; i++) {
        dx[i] += r * w[i] * dy[i] - k * x[i];
        if (dw)
            dw[i] += dy[i] * x[i] * r;
    }
}

/* out = silu(g) * u = g / (1 + exp(-g)) * u. */
VATTR static void FN(vswiglu_fwd)(float *out, const float *gate, const float *up, int n)
{
    int i = 0;
    VF one = FN(vset)(1.0f);
    for (; i + VW <= n; i += VW) {
        VF g = FN(vload)(gate + i);
        FN(vstore)(out + i, g / (one + FN(vexp_lanes)(-g)) * FN(vload)(up + i));
    }
    for (; i < n; i++) {
        float e[VW] = {0};
        e[0] = -gate[i];
        VF v = FN(vexp_lanes)(FN(vload)(e));
        out[i] = gate[i] / (1.0f + v[0]) * up[i];
    }
}

/* silu(g) = g s, s = sigmoid(g); d silu / dg = s (1 + g (1 - s)):
 * dgate = dout u s (1 + g (1 - s)), dup = dout g s (both overwritten). */
VATTR static void FN(vswiglu_bwd)(float *dgate, float *dup, const float *dout, const float *gate,
                                  const float *up, int n)
{
    int i = 0;
    VF one = FN(vset)(1.0f);
    for (; i + VW <= n; i += VW) {
        VF g = FN(vload)(gate + i), d = FN(vload)(dout + i);
        VF sg = one / (one + FN(vexp_lanes)(-g));
        FN(vstore)(dgate + i, d * FN(vload)(up + i) * sg * (one + g * (one - sg)));
        FN(vstore)(dup + i, d * g * sg);
    }
    for (; i < n; i++) {
        float e[VW] = {0};
        e[0] = -gate[i];
        VF v = FN(vexp_lanes)(FN(vload)(e));
        float sg = 1.0f / (1.0f + v[0]);
        dgate[i] = dout[i] * up[i] * sg * (1.0f + gate[i] * (1.0f - sg));
        dup[i] = dout[i] * gate[i] * sg;
    }
}

/* Attention of one query row for the hpg query heads q[hpg x hd] that
 * share a kv head, over nk cached positions: keys transposed (Kt is
 * hd x ldk: Kt[d * ldk + j] is dimension d of key j), values as rows
 * (V[j * ldv + d]). Scores are built VW keys at a time with plain
 * multiply-adds (no horizontal sums), then softmax, then the weighted sum
 * of values. S is hpg x nk scratch; out is hpg x hd. */
VATTR static void FN(vattn_decode)(float *out, const float *q, const float *Kt, int ldk,
                                   const float *V, int ldv, int nk, int hd, int hpg, float scale,
                                   float *S)
{
    for (int k = 0; k < hpg; k++) {
        const float *qk = q + (size_t)k * hd;
        float *s = S + (size_t)k * nk;
        int j = 0;
        /* four key blocks at once: independent chains of multiply-adds */
        for (; j + 4 * VW <= nk; j += 4 * VW) {
            VF a0 = FN(vset)(0.0f), a1 = a0, a2 = a0, a3 = a0;
            for (int d = 0; d < hd; d++) {
                const float *row = Kt + (size_t)d * ldk + j;
                VF qd = FN(vset)(qk[d]);
                a0 += qd * FN(vload)(row);
                a1 += qd * FN(vload)(row + VW);
                a2 += qd * FN(vload)(row + 2 * VW);
                a3 += qd * FN(vload)(row + 3 * VW);
            }
            VF sc = FN(vset)(scale);
            FN(vstore)(s + j, a0 * sc);
            FN(vstore)(s + j + VW, a1 * sc);
            FN(vstore)(s + j + 2 * VW, a2 * sc);
            FN(vstore)(s + j + 3 * VW, a3 * sc);
        }
        for (; j + VW <= nk; j += VW) {
            VF acc = FN(vset)(0.0f);
            for (int d = 0; d < hd; d++)
                acc += FN(vset)(qk[d]) * FN(vload)(Kt + (size_t)d * ldk + j);
            FN(vstore)(s + j, acc * FN(vset)(scale));
        }
        for (; j < nk; j++) {
            float a = 0.0f;
            for (int d = 0; d < hd; d++)
                a += qk[d] * Kt[(size_t)d * ldk + j];
            s[j] = a * scale;
        }
    }
    for (int k = 0; k < hpg; k++)
        ops_softmax_row(S + (size_t)k * nk, nk, nk);
    for (int k = 0; k < hpg; k++) {
        const float *s = S + (size_t)k * nk;
        float *o = out + (size_t)k * hd;
        int c = 0;
        for (; c + VW <= hd; c += VW) {
            VF a0 = FN(vset)(0.0f), a1 = a0, a2 = a0, a3 = a0;
            const float *vc = V + c;
            int j = 0;
            for (; j + 4 <= nk; j += 4) {
                a0 += FN(vset)(s[j]) * FN(vload)(vc + (size_t)j * ldv);
                a1 += FN(vset)(s[j + 1]) * FN(vload)(vc + (size_t)(j + 1) * ldv);
                a2 += FN(vset)(s[j + 2]) * FN(vload)(vc + (size_t)(j + 2) * ldv);
                a3 += FN(vset)(s[j + 3]) * FN(vload)(vc + (size_t)(j + 3) * ldv);
            }
            for (; j < nk; j++)
                a0 += FN(vset)(s[j]) * FN(vload)(vc + (size_t)j * ldv);
            FN(vstore)(o + c, (a0 + a1) + (a2 + a3));
        }
        for (; c < hd; c++) {
            float a = 0.0f;
            for (int j = 0; j < nk; j++)
                a += s[j] * V[(size_t)j * ldv + c];
            o[c] = a;
        }
    }
}

#undef FLUSH
#undef FN
#undef CAT
#undef CAT_
