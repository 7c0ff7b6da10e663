/* stats.c - advantages, Wilson intervals, rollout utilization. */
#include "harness/stats.h"

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
