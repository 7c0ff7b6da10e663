/* test_roman.c - Check tests for the roman library. */
#include <check.h>
#include <stdlib.h>

#include "roman.h"

static const char *fmt(int n)
{
    static char buf[ROMAN_BUF];
    if (roman_format(buf, sizeof buf, n) < 0)
        return "(error)";
    return buf;
}

START_TEST(test_format_basic)
{
    ck_assert_str_eq(fmt(1), "I");
    ck_assert_str_eq(fmt(3), "III");
    ck_assert_str_eq(fmt(8), "VIII");
    ck_assert_str_eq(fmt(27), "XXVII");
    ck_assert_str_eq(fmt(2024), "MMXXIV");
}
END_TEST

START_TEST(test_format_subtractive)
{
    ck_assert_str_eq(fmt(4), "IV");
    ck_assert_str_eq(fmt(9), "IX");
    ck_assert_str_eq(fmt(40), "XL");
    ck_assert_str_eq(fmt(90), "XC");
    ck_assert_str_eq(fmt(400), "CD");
    ck_assert_str_eq(fmt(944), "CMXLIV");
    ck_assert_str_eq(fmt(1994), "MCMXCIV");
}
END_TEST

START_TEST(test_format_range)
{
    char buf[ROMAN_BUF];
    ck_assert_str_eq(fmt(3999), "MMMCMXCIX");
    ck_assert_str_eq(fmt(3888), "MMMDCCCLXXXVIII");
    ck_assert_int_eq(roman_format(buf, sizeof buf, 0), -1);
    ck_assert_int_eq(roman_format(buf, sizeof buf, 4000), -1);
    ck_assert_int_eq(roman_format(buf, sizeof buf, -5), -1);
    ck_assert_int_eq(roman_format(buf, 4, 8), -1);
    ck_assert_int_eq(roman_format(buf, 5, 8), 4);
}
END_TEST

START_TEST(test_parse_basic)
{
    ck_assert_int_eq(roman_parse("I"), 1);
    ck_assert_int_eq(roman_parse("III"), 3);
    ck_assert_int_eq(roman_parse("LVIII"), 58);
    ck_assert_int_eq(roman_parse("MMXXIV"), 2024);
    ck_assert_int_eq(roman_parse("mmxxiv"), 2024);
}
END_TEST

START_TEST(test_parse_subtractive)
{
    ck_assert_int_eq(roman_parse("IV"), 4);
    ck_assert_int_eq(roman_parse("IX"), 9);
    ck_assert_int_eq(roman_parse("XLII"), 42);
    ck_assert_int_eq(roman_parse("XCIX"), 99);
    ck_assert_int_eq(roman_parse("MCMXCIV"), 1994);
    ck_assert_int_eq(roman_parse("MMMCMXCIX"), 3999);
}
END_TEST

START_TEST(test_parse_rejects_noncanonical)
{
    ck_assert_int_eq(roman_parse("IIII"), -1);
    ck_assert_int_eq(roman_parse("VV"), -1);
    ck_assert_int_eq(roman_parse("IC"), -1);
    ck_assert_int_eq(roman_parse("IIX"), -1);
    ck_assert_int_eq(roman_parse("MMMM"), -1);
    ck_assert_int_eq(roman_parse(""), -1);
    ck_assert_int_eq(roman_parse("XIZ"), -1);
}
END_TEST

START_TEST(test_parse_lenient)
{
    ck_assert_int_eq(roman_parse_lenient("IIII"), 4);
    ck_assert_int_eq(roman_parse_lenient("VIIII"), 9);
    ck_assert_int_eq(roman_parse_lenient("MDCCCCX"), 1910);
    ck_assert_int_eq(roman_parse_lenient("XIV"), 14);
    ck_assert_int_eq(roman_parse_lenient("ABC"), -1);
    ck_assert_int_eq(roman_parse_lenient(""), -1);
}
END_TEST

START_TEST(test_roundtrip)
{
    char buf[ROMAN_BUF];
    for (int n = ROMAN_MIN; n <= ROMAN_MAX; n++) {
        ck_assert_int_gt(roman_format(buf, sizeof buf, n), 0);
        ck_assert_msg(roman_parse(buf) == n, "%d -> %s -> %d", n, buf, roman_parse(buf));
    }
}
END_TEST

START_TEST(test_is_valid)
{
    ck_assert(roman_is_valid("XIV"));
    ck_assert(roman_is_valid("cdxliv"));
    ck_assert(!roman_is_valid("XIIII"));
    ck_assert(!roman_is_valid("hello"));
}
END_TEST

START_TEST(test_add_and_compare)
{
    char buf[ROMAN_BUF];
    ck_assert_int_eq(roman_add(buf, sizeof buf, "XIV", "XXVIII"), 4);
    ck_assert_str_eq(buf, "XLII");
    ck_assert_int_eq(roman_add(buf, sizeof buf, "MMM", "M"), -1);
    ck_assert_int_eq(roman_add(buf, sizeof buf, "IIII", "I"), -1);
    ck_assert_int_eq(roman_compare("IX", "XI"), -1);
    ck_assert_int_eq(roman_compare("L", "XLIX"), 1);
    ck_assert_int_eq(roman_compare("C", "c"), 0);
    ck_assert_int_eq(roman_compare("C", "Q"), -2);
}
END_TEST

START_TEST(test_symbol_values)
{
    ck_assert_int_eq(roman_symbol_value('M'), 1000);
    ck_assert_int_eq(roman_symbol_value('d'), 500);
    ck_assert_int_eq(roman_symbol_value('L'), 50);
    ck_assert_int_eq(roman_symbol_value('Q'), 0);
}
END_TEST

static Suite *roman_suite(void)
{
    Suite *s = suite_create("roman");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 2);
    tcase_add_test(tc, test_format_basic);
    tcase_add_test(tc, test_format_subtractive);
    tcase_add_test(tc, test_format_range);
    tcase_add_test(tc, test_parse_basic);
    tcase_add_test(tc, test_parse_subtractive);
    tcase_add_test(tc, test_parse_rejects_noncanonical);
    tcase_add_test(tc, test_parse_lenient);
    tcase_add_test(tc, test_roundtrip);
    tcase_add_test(tc, test_is_valid);
    tcase_add_test(tc, test_add_and_compare);
    tcase_add_test(tc, test_symbol_values);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(roman_suite());
    /* Fork each test so a crash is reported as an error and the rest run. */
    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_VERBOSE);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
