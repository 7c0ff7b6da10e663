/* stats.h - the numbers a report and the trainer share.
 *
 * GRPO advantages of a group of rewards, the Wilson interval of a pass
 * rate, two tests of a change in pass rate (per episode and, paired, per
 * task), and the rollout-utilization model (how busy the generation slots
 * stay when a step waits for its slowest episode, or only for a fraction
 * lambda of them).
 */
#ifndef RL_STATS_H
#define RL_STATS_H

#include <stddef.h>

typedef enum stats_std {
    STATS_STD_POPULATION = 0, /* divide by n: [0,1,1] -> -1.414, .707, .707 */
    STATS_STD_UNBIASED,       /* divide by n-1 */
    STATS_STD_NONE,           /* Dr. GRPO: r - mean, no division */
} stats_std;

typedef struct stats_group {
    double mean, std;
    int zero_variance;        /* every reward equal: no gradient */
} stats_group;

/* adv[i] = (r[i] - mean) / (std + eps), clipped to [-clip, clip] when
 * clip > 0. Zero-variance groups give all-zero advantages. */
stats_group stats_advantages(double *adv, const double *r, size_t n, stats_std mode, double eps,
                             double clip);

/* Wilson score interval for k successes in n trials at z (1.96 for 95%). */
void stats_wilson(double *lo, double *hi, size_t k, size_t n, double z);

/* Two-proportion z statistic of k2/n2 against k1/n1 (pooled standard
 * error; positive when the second rate is higher). 0 when undefined (an
 * empty sample, or both rates 0 or both 1). */
double stats_two_prop_z(size_t k1, size_t n1, size_t k2, size_t n2);

/* Two-sided exact sign test: the probability, with no real difference,
 * of a split at least as uneven as `up` against `down` (ties left out).
 * 1 when up + down = 0. */
double stats_sign_test(size_t up, size_t down);

/* Paired tests over clusters: d[i] is a task's change (RL passes minus SFT
 * passes over the same seeds). The seeds of a task are not independent, so
 * these resample tasks, not episodes. */

/* Two-sided sign-flip permutation test of sum(d) = 0: the share of the
 * 2^m sign assignments of the m nonzero d[i] whose |sum| is at least the
 * observed one; exact for m <= STATS_PERM_EXACT_MAX, else estimated from
 * `iters` random assignments drawn from seed ((hits + 1) / (iters + 1)).
 * 1 when every d[i] is 0. */
#define STATS_PERM_EXACT_MAX 20
double stats_paired_perm_p(const double *d, size_t n, size_t iters, unsigned long long seed);

/* Percentile bootstrap interval (2.5%, 97.5%) of scale * mean(d), tasks
 * resampled with replacement `iters` times from seed. Returns 0, or
 * RL_ENOMEM (lo = hi = 0). */
int stats_paired_boot_ci(double *lo, double *hi, const double *d, size_t n, double scale, size_t iters,
                         unsigned long long seed);

/* Share of generation-slot time kept busy over a run of steps with
 * `slots` episodes per step, drawing episode durations from dur[0..n) in
 * order (cycled). A step ends once ceil(lambda * slots) of its episodes
 * have finished (lambda = 1: synchronous, wait for the slowest); the
 * unfinished ones carry over into the next step, freed slots take new
 * episodes. Busy time / (slots * total step time). */
double stats_utilization(const double *dur, size_t n, size_t slots, double lambda, size_t steps);

/* Mean and population std of x[0..n). */
void stats_mean_std(double *mean, double *std, const double *x, size_t n);

#endif
