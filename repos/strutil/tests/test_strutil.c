/* test_strutil.c - Check tests for strutil. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "strutil.h"

START_TEST(test_starts_with)
{
    ck_assert(str_starts_with("hello", "he"));
    ck_assert(str_starts_with("hello", "hello"));
    ck_assert(str_starts_with("hello", ""));
    ck_assert(!str_starts_with("he", "hello"));
    ck_assert(!str_starts_with("hello", "lo"));
}
END_TEST

START_TEST(test_ends_with)
{
    ck_assert(str_ends_with("report.txt", ".txt"));
    ck_assert(str_ends_with("report.txt", "report.txt"));
    ck_assert(str_ends_with("abc", ""));
    ck_assert(str_ends_with("", ""));
    ck_assert(!str_ends_with("report.txt", ".csv"));
    ck_assert(!str_ends_with("txt", ".txt"));
}
END_TEST

START_TEST(test_trim)
{
    char a[] = "  \thello world \n";
    ck_assert_str_eq(str_trim(a), "hello world");
    char b[] = "   ";
    ck_assert_str_eq(str_trim(b), "");
    char c[] = "x";
    ck_assert_str_eq(str_trim(c), "x");
}
END_TEST

START_TEST(test_case)
{
    char s[] = "Hello, World 42";
    str_to_upper(s);
    ck_assert_str_eq(s, "HELLO, WORLD 42");
    str_to_lower(s);
    ck_assert_str_eq(s, "hello, world 42");
    ck_assert_int_eq(str_icmp("ABC", "abc"), 0);
    ck_assert_int_lt(str_icmp("abc", "ABD"), 0);
    ck_assert_int_gt(str_icmp("abcd", "ABC"), 0);
}
END_TEST

START_TEST(test_count)
{
    ck_assert_uint_eq(str_count("banana", "an"), 2);
    ck_assert_uint_eq(str_count("aaaa", "aa"), 2);
    ck_assert_uint_eq(str_count("abc", "x"), 0);
    ck_assert_uint_eq(str_count("abc", ""), 0);
}
END_TEST

START_TEST(test_replace)
{
    char out[64];
    ck_assert_int_eq(str_replace(out, sizeof out, "a-b-c", "-", "+"), 5);
    ck_assert_str_eq(out, "a+b+c");
    ck_assert_int_eq(str_replace(out, sizeof out, "abab", "ab", "X"), 2);
    ck_assert_str_eq(out, "XX");
    ck_assert_int_eq(str_replace(out, sizeof out, "aaa", "aa", "b"), 2);
    ck_assert_str_eq(out, "ba");
    ck_assert_int_eq(str_replace(out, sizeof out, "hello", "l", ""), 3);
    ck_assert_str_eq(out, "heo");
    ck_assert_int_eq(str_replace(out, sizeof out, "none", "x", "y"), 4);
    ck_assert_str_eq(out, "none");
    ck_assert_int_eq(str_replace(out, 4, "a-b-c", "-", "+"), -1);
}
END_TEST

START_TEST(test_pad)
{
    char out[16];
    ck_assert_int_eq(str_pad_left(out, sizeof out, "42", 5, '0'), 5);
    ck_assert_str_eq(out, "00042");
    ck_assert_int_eq(str_pad_right(out, sizeof out, "ab", 4, '.'), 4);
    ck_assert_str_eq(out, "ab..");
    ck_assert_int_eq(str_pad_left(out, sizeof out, "toolong", 3, ' '), 7);
    ck_assert_str_eq(out, "toolong");
    ck_assert_int_eq(str_pad_left(out, 4, "1", 8, ' '), -1);
}
END_TEST

START_TEST(test_repeat)
{
    char out[16];
    ck_assert_int_eq(str_repeat(out, sizeof out, "ab", 3), 6);
    ck_assert_str_eq(out, "ababab");
    ck_assert_int_eq(str_repeat(out, sizeof out, "x", 0), 0);
    ck_assert_str_eq(out, "");
    ck_assert_int_eq(str_repeat(out, sizeof out, "abcd", 4), -1);
}
END_TEST

START_TEST(test_split)
{
    char s[] = "a,b,,c";
    char *parts[8];
    ck_assert_uint_eq(str_split(s, ',', parts, 8), 4);
    ck_assert_str_eq(parts[0], "a");
    ck_assert_str_eq(parts[1], "b");
    ck_assert_str_eq(parts[2], "");
    ck_assert_str_eq(parts[3], "c");
    char one[] = "single";
    ck_assert_uint_eq(str_split(one, ',', parts, 8), 1);
    ck_assert_str_eq(parts[0], "single");
    char many[] = "1:2:3:4";
    ck_assert_uint_eq(str_split(many, ':', parts, 2), 4);
    ck_assert_str_eq(parts[1], "2");
}
END_TEST

START_TEST(test_split_trim)
{
    char s[] = " name = value ,  x ,y  ";
    char *parts[4];
    ck_assert_uint_eq(str_split_trim(s, ',', parts, 4), 3);
    ck_assert_str_eq(parts[0], "name = value");
    ck_assert_str_eq(parts[1], "x");
    ck_assert_str_eq(parts[2], "y");
}
END_TEST

START_TEST(test_join)
{
    const char *parts[] = { "usr", "local", "bin" };
    char out[16];
    ck_assert_int_eq(str_join(out, sizeof out, parts, 3, "/"), 13);
    ck_assert_str_eq(out, "usr/local/bin");
    ck_assert_int_eq(str_join(out, sizeof out, parts, 1, "/"), 3);
    ck_assert_str_eq(out, "usr");
    ck_assert_int_eq(str_join(out, sizeof out, parts, 0, "/"), 0);
    ck_assert_str_eq(out, "");
    /* exactly fits: 13 characters and the NUL */
    ck_assert_int_eq(str_join(out, 14, parts, 3, "/"), 13);
    ck_assert_str_eq(out, "usr/local/bin");
    ck_assert_int_eq(str_join(out, 13, parts, 3, "/"), -1);
}
END_TEST

START_TEST(test_word_count)
{
    ck_assert_uint_eq(str_word_count("the quick  brown\tfox\n"), 4);
    ck_assert_uint_eq(str_word_count("   "), 0);
    ck_assert_uint_eq(str_word_count(""), 0);
    ck_assert_uint_eq(str_word_count("one"), 1);
}
END_TEST

static Suite *strutil_suite(void)
{
    Suite *s = suite_create("strutil");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 2);
    tcase_add_test(tc, test_starts_with);
    tcase_add_test(tc, test_ends_with);
    tcase_add_test(tc, test_trim);
    tcase_add_test(tc, test_case);
    tcase_add_test(tc, test_count);
    tcase_add_test(tc, test_replace);
    tcase_add_test(tc, test_pad);
    tcase_add_test(tc, test_repeat);
    tcase_add_test(tc, test_split);
    tcase_add_test(tc, test_split_trim);
    tcase_add_test(tc, test_join);
    tcase_add_test(tc, test_word_count);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(strutil_suite());
    /* Fork each test so a crash is reported as an error and the rest run. */
    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_VERBOSE);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
