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
