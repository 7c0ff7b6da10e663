/* test_leapyear.c - Check tests for the leapyear library. */
#include <check.h>
#include <stdlib.h>

#include "leapyear.h"

START_TEST(test_leap_divisible_by_four)
{
    ck_assert(is_leap_year(2024));
    ck_assert(is_leap_year(1996));
    ck_assert(is_leap_year(4));
    ck_assert(!is_leap_year(2023));
    ck_assert(!is_leap_year(2019));
    ck_assert(!is_leap_year(1));
}
END_TEST

START_TEST(test_century_not_leap)
{
    ck_assert_msg(!is_leap_year(1900), "1900 is not a leap year");
    ck_assert_msg(!is_leap_year(2100), "2100 is not a leap year");
    ck_assert_msg(!is_leap_year(1800), "1800 is not a leap year");
}
END_TEST

START_TEST(test_quadricentennial_leap)
{
    ck_assert_msg(is_leap_year(2000), "2000 is a leap year");
    ck_assert_msg(is_leap_year(1600), "1600 is a leap year");
    ck_assert_msg(is_leap_year(0), "year 0 is a leap year");
}
END_TEST

START_TEST(test_days_in_year)
{
    ck_assert_int_eq(days_in_year(2023), 365);
    ck_assert_int_eq(days_in_year(2024), 366);
    ck_assert_int_eq(days_in_year(2000), 366);
}
END_TEST

START_TEST(test_days_in_month)
{
    ck_assert_int_eq(days_in_month(2023, 1), 31);
    ck_assert_int_eq(days_in_month(2023, 2), 28);
    ck_assert_int_eq(days_in_month(2024, 2), 29);
    ck_assert_int_eq(days_in_month(2023, 4), 30);
    ck_assert_int_eq(days_in_month(2023, 12), 31);
    ck_assert_int_eq(days_in_month(2023, 0), 0);
    ck_assert_int_eq(days_in_month(2023, 13), 0);
}
END_TEST

START_TEST(test_is_valid_date)
{
    ck_assert(is_valid_date(2024, 2, 29));
    ck_assert(!is_valid_date(2023, 2, 29));
    ck_assert(is_valid_date(2023, 12, 31));
    ck_assert(!is_valid_date(2023, 4, 31));
    ck_assert(!is_valid_date(2023, 1, 0));
    ck_assert(!is_valid_date(2023, 13, 1));
}
END_TEST

START_TEST(test_day_of_year)
{
    ck_assert_int_eq(day_of_year(2023, 1, 1), 1);
    ck_assert_int_eq(day_of_year(2023, 2, 1), 32);
    ck_assert_int_eq(day_of_year(2023, 3, 1), 60);
    ck_assert_int_eq(day_of_year(2024, 3, 1), 61);
    ck_assert_int_eq(day_of_year(2023, 12, 31), 365);
    ck_assert_int_eq(day_of_year(2024, 12, 31), 366);
    ck_assert_int_eq(day_of_year(2023, 2, 30), -1);
}
END_TEST

START_TEST(test_date_from_day_of_year)
{
    int m = 0, d = 0;
    ck_assert_int_eq(date_from_day_of_year(2023, 1, &m, &d), 0);
    ck_assert_int_eq(m, 1);
    ck_assert_int_eq(d, 1);
    ck_assert_int_eq(date_from_day_of_year(2024, 60, &m, &d), 0);
    ck_assert_int_eq(m, 2);
    ck_assert_int_eq(d, 29);
    ck_assert_int_eq(date_from_day_of_year(2023, 365, &m, &d), 0);
    ck_assert_int_eq(m, 12);
    ck_assert_int_eq(d, 31);
    ck_assert_int_eq(date_from_day_of_year(2023, 366, &m, &d), -1);
    ck_assert_int_eq(date_from_day_of_year(2023, 0, &m, &d), -1);
}
END_TEST

START_TEST(test_next_prev_leap_year)
{
    ck_assert_int_eq(next_leap_year(2023), 2024);
    ck_assert_int_eq(next_leap_year(2024), 2028);
    ck_assert_int_eq(next_leap_year(2096), 2104);
    ck_assert_int_eq(prev_leap_year(2024), 2020);
    ck_assert_int_eq(prev_leap_year(2001), 2000);
}
END_TEST

START_TEST(test_leap_years_between)
{
    ck_assert_int_eq(leap_years_between(2000, 2024), 6);
    ck_assert_int_eq(leap_years_between(2000, 2025), 7);
    ck_assert_int_eq(leap_years_between(1900, 2000), 24);
    ck_assert_int_eq(leap_years_between(-8, 0), 2);
    ck_assert_int_eq(leap_years_between(2024, 2000), 0);
}
END_TEST

START_TEST(test_days_left_in_year)
{
    ck_assert_int_eq(days_left_in_year(2023, 12, 31), 0);
    ck_assert_int_eq(days_left_in_year(2023, 1, 1), 364);
    ck_assert_int_eq(days_left_in_year(2024, 1, 1), 365);
    ck_assert_int_eq(days_left_in_year(2023, 2, 29), -1);
}
END_TEST

static Suite *leapyear_suite(void)
{
    Suite *s = suite_create("leapyear");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 2);
    tcase_add_test(tc, test_leap_divisible_by_four);
    tcase_add_test(tc, test_century_not_leap);
    tcase_add_test(tc, test_quadricentennial_leap);
    tcase_add_test(tc, test_days_in_year);
    tcase_add_test(tc, test_days_in_month);
    tcase_add_test(tc, test_is_valid_date);
    tcase_add_test(tc, test_day_of_year);
    tcase_add_test(tc, test_date_from_day_of_year);
    tcase_add_test(tc, test_next_prev_leap_year);
    tcase_add_test(tc, test_leap_years_between);
    tcase_add_test(tc, test_days_left_in_year);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(leapyear_suite());
    /* Fork each test so a crash is reported as an error and the rest run. */
    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_VERBOSE);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
