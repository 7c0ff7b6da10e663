/* test_date.c - Check tests for datelib. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "date.h"

#define ck_assert_date(d, y, m, dd) do {                                  \
        ck_assert_msg((d).year == (y) && (d).month == (m) && (d).day == (dd), \
                      "got %04d-%02d-%02d, expected %04d-%02d-%02d",        \
                      (d).year, (d).month, (d).day, (y), (m), (dd));        \
    } while (0)

START_TEST(test_parse_date)
{
    date_t d;
    ck_assert_int_eq(parse_date("2023-07-14", &d), 0);
    ck_assert_date(d, 2023, 7, 14);
    ck_assert_int_eq(parse_date("1999-12-31", &d), 0);
    ck_assert_date(d, 1999, 12, 31);
    ck_assert_int_eq(parse_date("2024-02-29", &d), 0);
    ck_assert_date(d, 2024, 2, 29);
    ck_assert_int_eq(parse_date("0001-01-01", &d), 0);
    ck_assert_date(d, 1, 1, 1);
}
END_TEST

START_TEST(test_parse_date_day_first)
{
    date_t d;
    ck_assert_int_eq(parse_date("14/07/2023", &d), 0);
    ck_assert_date(d, 2023, 7, 14);
    ck_assert_int_eq(parse_date("01.02.2003", &d), 0);
    ck_assert_date(d, 2003, 2, 1);
}
END_TEST

START_TEST(test_parse_date_invalid)
{
    date_t d = { 1, 1, 1 };
    ck_assert_int_eq(parse_date("2023-02-29", &d), -1);
    ck_assert_int_eq(parse_date("2023-13-01", &d), -1);
    ck_assert_int_eq(parse_date("2023-00-10", &d), -1);
    ck_assert_int_eq(parse_date("2023-1-01", &d), -1);
    ck_assert_int_eq(parse_date("2023-01-0x", &d), -1);
    ck_assert_int_eq(parse_date("31/04/2023", &d), -1);
    ck_assert_int_eq(parse_date("14-07/2023", &d), -1);
    ck_assert_int_eq(parse_date("", &d), -1);
    /* a failed parse leaves the output alone */
    ck_assert_date(d, 1, 1, 1);
}
END_TEST

START_TEST(test_format_date)
{
    char buf[64];
    date_t d = { 2023, 7, 4 };
    ck_assert_int_eq(format_date(buf, sizeof buf, &d, "%Y-%m-%d"), 10);
    ck_assert_str_eq(buf, "2023-07-04");
    ck_assert_int_eq(format_date(buf, sizeof buf, &d, "%d/%m/%Y"), 10);
    ck_assert_str_eq(buf, "04/07/2023");
    ck_assert_int_eq(format_date(buf, sizeof buf, &d, "day %j, 100%%"), 13);
    ck_assert_str_eq(buf, "day 185, 100%");
}
END_TEST

START_TEST(test_format_date_names)
{
    char buf[64];
    date_t d = { 2024, 3, 1 };
    ck_assert_int_ge(format_date(buf, sizeof buf, &d, "%a %d %b %Y"), 0);
    ck_assert_str_eq(buf, "Fri 01 Mar 2024");
    date_t e = { 2023, 12, 31 };
    ck_assert_int_ge(format_date(buf, sizeof buf, &e, "%a, %b %d"), 0);
    ck_assert_str_eq(buf, "Sun, Dec 31");
}
END_TEST

START_TEST(test_format_date_errors)
{
    char buf[8];
    date_t d = { 2023, 7, 4 };
    ck_assert_int_eq(format_date(buf, sizeof buf, &d, "%Y-%m-%d"), -1);
    ck_assert_int_eq(format_date(buf, sizeof buf, &d, "%q"), -1);
    ck_assert_int_eq(format_date(buf, sizeof buf, &d, "%"), -1);
    ck_assert_int_eq(format_date(buf, sizeof buf, &d, "%Y-%m"), 7);
    ck_assert_str_eq(buf, "2023-07");
}
END_TEST

START_TEST(test_days_in_month)
{
    ck_assert_int_eq(date_days_in_month(2023, 2), 28);
    ck_assert_int_eq(date_days_in_month(2024, 2), 29);
    ck_assert_int_eq(date_days_in_month(1900, 2), 28);
    ck_assert_int_eq(date_days_in_month(2000, 2), 29);
    ck_assert_int_eq(date_days_in_month(2023, 9), 30);
    ck_assert_int_eq(date_days_in_month(2023, 0), 0);
}
END_TEST

START_TEST(test_day_of_year)
{
    date_t a = { 2023, 1, 1 }, b = { 2023, 3, 1 }, c = { 2024, 12, 31 };
    ck_assert_int_eq(date_day_of_year(&a), 1);
    ck_assert_int_eq(date_day_of_year(&b), 60);
    ck_assert_int_eq(date_day_of_year(&c), 366);
}
END_TEST

START_TEST(test_add_days)
{
    date_t d = { 2023, 12, 30 };
    date_t r = date_add_days(&d, 3);
    ck_assert_date(r, 2024, 1, 2);
    date_t f = { 2024, 2, 27 };
    r = date_add_days(&f, 2);
    ck_assert_date(r, 2024, 2, 29);
    r = date_add_days(&f, 3);
    ck_assert_date(r, 2024, 3, 1);
    date_t m = { 2023, 3, 1 };
    r = date_add_days(&m, -1);
    ck_assert_date(r, 2023, 2, 28);
    r = date_add_days(&m, 365);
    ck_assert_date(r, 2024, 2, 29);
}
END_TEST

START_TEST(test_diff_days)
{
    date_t a = { 2024, 1, 1 }, b = { 2024, 12, 31 };
    ck_assert_int_eq(date_diff_days(&a, &b), 365);
    ck_assert_int_eq(date_diff_days(&b, &a), -365);
    date_t c = { 2024, 2, 10 }, e = { 2024, 3, 1 };
    ck_assert_int_eq(date_diff_days(&c, &e), 20);
    date_t epoch = { 1970, 1, 1 }, y2k = { 2000, 1, 1 };
    ck_assert_int_eq(date_diff_days(&epoch, &y2k), 10957);
}
END_TEST

START_TEST(test_serial_days)
{
    date_t epoch = { 1970, 1, 1 }, before = { 1969, 12, 31 }, y2k = { 2000, 3, 1 };
    ck_assert_int_eq(date_to_days(&epoch), 0);
    ck_assert_int_eq(date_to_days(&before), -1);
    date_t r = date_from_days(date_to_days(&y2k));
    ck_assert_date(r, 2000, 3, 1);
    r = date_from_days(-719468);
    ck_assert_date(r, 0, 3, 1);
}
END_TEST

START_TEST(test_weekday)
{
    date_t a = { 1970, 1, 1 }, b = { 2024, 2, 29 }, c = { 2023, 12, 31 }, e = { 1969, 12, 29 };
    ck_assert_int_eq(date_weekday(&a), THURSDAY);
    ck_assert_int_eq(date_weekday(&b), THURSDAY);
    ck_assert_int_eq(date_weekday(&c), SUNDAY);
    ck_assert_int_eq(date_weekday(&e), MONDAY);
    ck_assert_str_eq(weekday_name(date_weekday(&c)), "Sun");
}
END_TEST

START_TEST(test_add_months_end_of_month)
{
    date_t d = { 2024, 1, 31 };
    date_t r = date_add_months(&d, 1);
    ck_assert_date(r, 2024, 2, 29);
    r = date_add_months(&d, 13);
    ck_assert_date(r, 2025, 2, 28);
    r = date_add_months(&d, 3);
    ck_assert_date(r, 2024, 4, 30);
}
END_TEST

START_TEST(test_add_months_year_carry)
{
    date_t n = { 2023, 11, 15 };
    date_t r = date_add_months(&n, 2);
    ck_assert_date(r, 2024, 1, 15);
    r = date_add_months(&n, -11);
    ck_assert_date(r, 2022, 12, 15);
    r = date_add_months(&n, 0);
    ck_assert_date(r, 2023, 11, 15);
}
END_TEST

START_TEST(test_compare)
{
    date_t a = { 2023, 5, 1 }, b = { 2023, 5, 2 }, c = { 2022, 12, 31 };
    ck_assert_int_eq(date_compare(&a, &b), -1);
    ck_assert_int_eq(date_compare(&b, &a), 1);
    ck_assert_int_eq(date_compare(&a, &a), 0);
    ck_assert_int_eq(date_compare(&c, &a), -1);
}
END_TEST

START_TEST(test_next_weekday)
{
    date_t d = { 2024, 2, 28 }; /* a Wednesday */
    date_t r = date_next_weekday(&d, WEDNESDAY);
    ck_assert_date(r, 2024, 2, 28);
    r = date_next_weekday(&d, MONDAY);
    ck_assert_date(r, 2024, 3, 4);
    r = date_next_weekday(&d, FRIDAY);
    ck_assert_date(r, 2024, 3, 1);
}
END_TEST

static Suite *date_suite(void)
{
    Suite *s = suite_create("datelib");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 2);
    tcase_add_test(tc, test_parse_date);
    tcase_add_test(tc, test_parse_date_day_first);
    tcase_add_test(tc, test_parse_date_invalid);
    tcase_add_test(tc, test_format_date);
    tcase_add_test(tc, test_format_date_names);
    tcase_add_test(tc, test_format_date_errors);
    tcase_add_test(tc, test_days_in_month);
    tcase_add_test(tc, test_day_of_year);
    tcase_add_test(tc, test_add_days);
    tcase_add_test(tc, test_diff_days);
    tcase_add_test(tc, test_serial_days);
    tcase_add_test(tc, test_weekday);
    tcase_add_test(tc, test_add_months_end_of_month);
    tcase_add_test(tc, test_add_months_year_carry);
    tcase_add_test(tc, test_compare);
    tcase_add_test(tc, test_next_weekday);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(date_suite());
    /* Fork each test so a crash is reported as an error and the rest run. */
    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_VERBOSE);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
