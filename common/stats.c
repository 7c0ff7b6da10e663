/* stats.c - advantages, Wilson intervals, rollout utilization. */
#include "common/stats.h"

#include "common/err.h"
#include "common/rng.h"

#include <math.h>
#include <stdlib.h>

void stats_mean_std(double *mean, double *std, const double *x, size_t n)
{
    double m = 0, v = 0;
    for (size_t i = 0; i < n; i++)
        m += x[i];
    m = n ? m / (double)n : 0;
    for (size_t i = 0; i < n; i++)
        v += (x[i] - m) * (x[i] - m);
    *mean = m;
    *std = n ? sqrt(v / (double)n) : 0;
}

stats_group stats_advantages(double *adv, const double *r, size_t n, stats_std mode, double eps,
                             double clip)
{
    stats_group g = {0, 0, 1};
    double ss = 0;
    stats_mean_std(&g.mean, &g.std, r, n);
    for (size_t i = 0; i < n; i++) {
        ss += (r[i] - g.mean) * (r[i] - g.mean);
        if (r[i] != r[0])
            g.zero_variance = 0;
    }
    if (mode == STATS_STD_UNBIASED)
        g.std = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
    for (size_t i = 0; i < n; i++) {
        double a = 0;
        if (!g.zero_variance)
            a = mode == STATS_STD_NONE ? r[i] - g.mean : (r[i] - g.mean) / (g.std + eps);
        if (clip > 0)
            a = a > clip ? clip : a < -clip ? -clip : a;
        adv[i] = a;
    }
    return g;
}

void stats_wilson(double *lo, double *hi, size_t k, size_t n, double z)
{
    if (n == 0) {
        *lo = 0;
        *hi = 1;
        return;
    }
    double p = (double)k / (double)n, nn = (double)n, z2 = z * z;
    double den = 1 + z2 / nn;
    double c = (p + z2 / (2 * nn)) / den;
    double h = z * sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn)) / den;
    *lo = c - h < 0 ? 0 : c - h;
    *hi = c + h > 1 ? 1 : c + h;
}

double stats_two_prop_z(size_t k1, size_t n1, size_t k2, size_t n2)
{
    if (!n1 || !n2)
        return 0;
    double p = (double)(k1 + k2) / (double)(n1 + n2);
    double se = sqrt(p * (1 - p) * (1.0 / (double)n1 + 1.0 / (double)n2));
    return se > 0 ? ((double)k2 / (double)n2 - (double)k1 / (double)n1) / se : 0;
}

double stats_sign_test(size_t up, size_t down)
{
    size_t n = up + down, k = up < down ? up : down;
    if (n == 0)
        return 1;
    /* 2 * P(X <= k), X ~ Binomial(n, 1/2), summed in logs (n may be large) */
    double tail = 0;
    for (size_t i = 0; i <= k; i++)
        tail += exp(lgamma((double)n + 1) - lgamma((double)i + 1) - lgamma((double)(n - i) + 1) - (double)n * log(2.0));
    return 2 * tail > 1 ? 1 : 2 * tail;
}

double stats_paired_perm_p(const double *d, size_t n, size_t iters, unsigned long long seed)
{
    uint64_t st = seed;
    double obs = 0;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        obs += d[i];
        m += d[i] != 0;
    }
    if (m == 0)
        return 1;
    obs = fabs(obs) - 1e-9; /* ties count as at least as extreme */
    if (m <= STATS_PERM_EXACT_MAX) {
        double v[STATS_PERM_EXACT_MAX];
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (d[i] != 0)
                v[k++] = d[i];
        unsigned long hits = 0, total = 1ul << m;
        for (unsigned long mask = 0; mask < total; mask++) {
            double s = 0;
            for (size_t j = 0; j < m; j++)
                s += (mask >> j & 1) ? -v[j] : v[j];
            hits += fabs(s) >= obs;
        }
        return (double)hits / (double)total;
    }
    size_t hits = 0;
    for (size_t it = 0; it < iters; it++) {
        double s = 0;
        for (size_t i = 0; i < n; i++)
            if (d[i] != 0)
                s += (rl_splitmix64(&st) & 1) ? -d[i] : d[i];
        hits += fabs(s) >= obs;
    }
    return (double)(hits + 1) / (double)(iters + 1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int stats_paired_boot_ci(double *lo, double *hi, const double *d, size_t n, double scale, size_t iters,
                         unsigned long long seed)
{
    uint64_t st = seed;
    *lo = *hi = 0;
    if (n == 0 || iters == 0)
        return 0;
    double *means = malloc(iters * sizeof *means);
    if (!means)
        return RL_ENOMEM;
    for (size_t it = 0; it < iters; it++) {
        double s = 0;
        for (size_t i = 0; i < n; i++)
            s += d[rl_splitmix64(&st) % n];
        means[it] = scale * s / (double)n;
    }
    qsort(means, iters, sizeof *means, cmp_double);
    *lo = means[(size_t)(0.025 * (double)(iters - 1) + 0.5)];
    *hi = means[(size_t)(0.975 * (double)(iters - 1) + 0.5)];
    free(means);
    return 0;
}

double stats_utilization(const double *dur, size_t n, size_t slots, double lambda, size_t steps)
{
    if (!n || !slots || !steps)
        return 0;
    double *left = malloc(slots * sizeof *left); /* remaining time per slot */
    if (!left)
        return 0;
    size_t next = 0;
    for (size_t s = 0; s < slots; s++)
        left[s] = dur[next++ % n];
    size_t need = (size_t)ceil(lambda * (double)slots - 1e-9);
    if (need < 1)
        need = 1;
    if (need > slots)
        need = slots;
    double busy = 0, total = 0;
    double *sorted = malloc(slots * sizeof *sorted);
    if (!sorted) {
        free(left);
        return 0;
    }
    for (size_t step = 0; step < steps; step++) {
        /* the step ends when the need-th shortest remaining time elapses */
        for (size_t s = 0; s < slots; s++)
            sorted[s] = left[s];
        for (size_t i = 1; i < slots; i++) /* insertion sort: slots is small */
            for (size_t j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
                double t = sorted[j];
                sorted[j] = sorted[j - 1];
                sorted[j - 1] = t;
            }
        double t_end = sorted[need - 1];
        for (size_t s = 0; s < slots; s++) {
            double run = left[s] < t_end ? left[s] : t_end;
            busy += run;
            left[s] -= run;
            if (left[s] <= 1e-12) /* finished: the slot takes a new episode next step */
                left[s] = dur[next++ % n];
        }
        total += t_end * (double)slots;
    }
    free(sorted);
    free(left);
    return total > 0 ? busy / total : 0;
}
