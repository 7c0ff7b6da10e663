#include "common/stats.h"

#include <check.h>
#include <math.h>

START_TEST(test_advantages_reference)
{
    /* The reference numbers: pd-unlimited 0/3 and pd-v2-unlimited 2/3. */
    double r0[] = {0, 0, 0}, a0[3];
    stats_group g = stats_advantages(a0, r0, 3, STATS_STD_POPULATION, 1e-6, 0);
    ck_assert(g.zero_variance);
    for (int i = 0; i < 3; i++)
        ck_assert_double_eq(a0[i], 0.0);

    double r1[] = {0, 1, 1}, a1[3];
    g = stats_advantages(a1, r1, 3, STATS_STD_POPULATION, 1e-6, 0);
    ck_assert(!g.zero_variance);
    ck_assert_double_eq_tol(a1[0], -1.414, 1e-3);
    ck_assert_double_eq_tol(a1[1], 0.707, 1e-3);
    ck_assert_double_eq_tol(a1[2], 0.707, 1e-3);

    g = stats_advantages(a1, r1, 3, STATS_STD_UNBIASED, 1e-6, 0);
    ck_assert_double_eq_tol(a1[0], -1.1547, 1e-3);
    g = stats_advantages(a1, r1, 3, STATS_STD_NONE, 1e-6, 0);
    ck_assert_double_eq_tol(a1[0], -2.0 / 3.0, 1e-9);

    double r2[] = {1, 0, 0, 0, 0, 0, 0, 0}, a2[8];
    stats_advantages(a2, r2, 8, STATS_STD_POPULATION, 1e-6, 2.0);
    ck_assert_double_eq_tol(a2[0], 2.0, 1e-12); /* 2.645 clipped */
    ck_assert_double_eq_tol(a2[1], -0.378, 1e-3);
}
END_TEST

/* Values worked by hand: 7/288 -> 23/288 pools to 30/576, z 3.00; 8 up and
 * 2 down is 2 * (1 + 10 + 45) / 1024; 5 up, 5 down is no evidence. */
START_TEST(test_change_tests)
{
    ck_assert_double_eq_tol(stats_two_prop_z(7, 288, 23, 288), 3.00, 0.01);
    ck_assert_double_eq_tol(stats_two_prop_z(23, 288, 7, 288), -3.00, 0.01);
    ck_assert_double_eq(stats_two_prop_z(0, 100, 0, 100), 0);
    ck_assert_double_eq(stats_two_prop_z(3, 0, 1, 10), 0);
    ck_assert_double_eq_tol(stats_sign_test(8, 2), 112.0 / 1024.0, 1e-12);
    ck_assert_double_eq_tol(stats_sign_test(2, 8), 112.0 / 1024.0, 1e-12);
    ck_assert_double_eq_tol(stats_sign_test(0, 6), 2.0 / 64.0, 1e-12);
    ck_assert_double_eq(stats_sign_test(5, 5), 1);
    ck_assert_double_eq(stats_sign_test(0, 0), 1);
    ck_assert_double_lt(stats_sign_test(0, 2000), 1e-12);
    /* permutation: five tasks all up by one: 2 of 32 sign patterns are as extreme */
    double up5[7] = {1, 1, 0, 1, 1, 1, 0};
    ck_assert_double_eq_tol(stats_paired_perm_p(up5, 7, 0, 1), 2.0 / 32.0, 1e-12);
    double mixed[4] = {3, -1, 0, -1}; /* sum 1: every pattern of +-3 +-1 +-1 has |sum| >= 1 */
    ck_assert_double_eq_tol(stats_paired_perm_p(mixed, 4, 0, 1), 1.0, 1e-12);
    double big[3] = {4, 1, 1}; /* sums +-4 +-1 +-1: |s| >= 6 for 2 of 8 */
    ck_assert_double_eq_tol(stats_paired_perm_p(big, 3, 0, 1), 2.0 / 8.0, 1e-12);
    double zeros[3] = {0, 0, 0};
    ck_assert_double_eq(stats_paired_perm_p(zeros, 3, 100, 1), 1);
    /* past the exact limit: sampled, deterministic in the seed, tiny for 30 ups */
    double ups[30];
    for (int i = 0; i < 30; i++)
        ups[i] = 1;
    double p1 = stats_paired_perm_p(ups, 30, 20000, 7), p2 = stats_paired_perm_p(ups, 30, 20000, 7);
    ck_assert_double_eq(p1, p2);
    ck_assert_double_eq_tol(p1, 1.0 / 20001.0, 1e-12);
    for (int i = 0; i < 30; i += 2)
        ups[i] = -1; /* 15 up, 15 down: sum 0, every pattern as extreme */
    ck_assert_double_eq(stats_paired_perm_p(ups, 30, 1000, 7), 1);
    /* bootstrap: constant changes give a point; mixed ones bracket the mean */
    double lo, hi;
    double same[5] = {2, 2, 2, 2, 2};
    ck_assert_int_eq(stats_paired_boot_ci(&lo, &hi, same, 5, 0.25, 2000, 3), 0);
    ck_assert_double_eq_tol(lo, 0.5, 1e-12);
    ck_assert_double_eq_tol(hi, 0.5, 1e-12);
    double spread[8] = {4, 0, 0, -1, 0, 2, 0, 1}; /* mean 0.75 */
    ck_assert_int_eq(stats_paired_boot_ci(&lo, &hi, spread, 8, 1.0, 4000, 3), 0);
    ck_assert_double_lt(lo, 0.75);
    ck_assert_double_gt(hi, 0.75);
    ck_assert_double_ge(lo, -1.0);
    ck_assert_double_le(hi, 4.0);
    ck_assert_double_lt(lo, 0.0); /* one task carries most of it: the interval reaches below 0 */
}
END_TEST

START_TEST(test_wilson)
{
    double lo, hi;
    stats_wilson(&lo, &hi, 0, 3, 1.96);
    ck_assert_double_eq_tol(lo, 0.0, 1e-9);
    ck_assert_double_eq_tol(hi, 0.5615, 1e-3);
    stats_wilson(&lo, &hi, 53, 100, 1.96);
    ck_assert_double_eq_tol(lo, 0.4325, 1e-3);
    ck_assert_double_eq_tol(hi, 0.6252, 1e-3);
}
END_TEST

START_TEST(test_utilization)
{
    /* Equal durations: always fully busy. */
    double eq[] = {5, 5, 5, 5};
    ck_assert_double_eq_tol(stats_utilization(eq, 4, 4, 1.0, 10), 1.0, 1e-9);
    /* One slow episode in eight: synchronous steps wait for it. */
    double d[] = {1, 1, 1, 1, 1, 1, 1, 10};
    double sync = stats_utilization(d, 8, 8, 1.0, 1);
    ck_assert_double_eq_tol(sync, 17.0 / 80.0, 1e-9);
    double part = stats_utilization(d, 8, 8, 0.7, 50);
    ck_assert(part > 0.55); /* measured 0.614 with this schedule */
    ck_assert(stats_utilization(d, 8, 8, 0.5, 50) > part);
    ck_assert(part <= 1.0);
}
END_TEST

Suite *stats_suite(void)
{
    Suite *s = suite_create("stats");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_advantages_reference);
    tcase_add_test(tc, test_wilson);
    tcase_add_test(tc, test_change_tests);
    tcase_add_test(tc, test_utilization);
    suite_add_tcase(s, tc);
    return s;
}
