/* test_ini.c - Check tests for the INI parser. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ini.h"

static ini_doc doc;

START_TEST(test_basic_pairs)
{
    ck_assert_int_eq(ini_parse(&doc, "name = demo\nversion=3\n"), 0);
    ck_assert_uint_eq(doc.n, 2);
    ck_assert_str_eq(ini_get(&doc, "", "name"), "demo");
    ck_assert_str_eq(ini_get(&doc, "", "version"), "3");
    ck_assert_ptr_null(ini_get(&doc, "", "missing"));
}
END_TEST

START_TEST(test_sections)
{
    const char *text =
        "[server]\n"
        "host = example.org\n"
        "port = 8080\n"
        "\n"
        "[client]\n"
        "host = localhost\n";
    ck_assert_int_eq(ini_parse(&doc, text), 0);
    ck_assert_str_eq(ini_get(&doc, "server", "host"), "example.org");
    ck_assert_str_eq(ini_get(&doc, "client", "host"), "localhost");
    ck_assert_str_eq(ini_get(&doc, "SERVER", "Port"), "8080");
    ck_assert_ptr_null(ini_get(&doc, "client", "port"));
    ck_assert_uint_eq(ini_section_count(&doc), 2);
}
END_TEST

START_TEST(test_comments)
{
    const char *text =
        "; a comment\n"
        "# another\n"
        "[db]\n"
        "user = admin ; inline comment\n"
        "pass = se#cret\n"
        "url: postgres://db:5432/app   # where\n";
    ck_assert_int_eq(ini_parse(&doc, text), 0);
    ck_assert_str_eq(ini_get(&doc, "db", "user"), "admin");
    ck_assert_str_eq(ini_get(&doc, "db", "pass"), "se#cret");
    ck_assert_str_eq(ini_get(&doc, "db", "url"), "postgres://db:5432/app");
    ck_assert_uint_eq(doc.n, 3);
}
END_TEST

START_TEST(test_quoted_values)
{
    const char *text =
        "greeting = \"  hello ; world  \"\n"
        "empty = \"\"\n"
        "plain =\n";
    ck_assert_int_eq(ini_parse(&doc, text), 0);
    ck_assert_str_eq(ini_get(&doc, "", "greeting"), "  hello ; world  ");
    ck_assert_str_eq(ini_get(&doc, "", "empty"), "");
    ck_assert_str_eq(ini_get(&doc, "", "plain"), "");
    ck_assert_int_eq(ini_parse(&doc, "bad = \"open\n"), -1);
    ck_assert_int_eq(doc.error_line, 1);
}
END_TEST

START_TEST(test_duplicate_keys)
{
    ck_assert_int_eq(ini_parse(&doc, "[a]\nx = 1\nX = 2\n[b]\nx = 3\n[A]\nx = 4\n"), 0);
    ck_assert_str_eq(ini_get(&doc, "a", "x"), "4");
    ck_assert_str_eq(ini_get(&doc, "b", "x"), "3");
    ck_assert_uint_eq(doc.n, 2);
    ck_assert_uint_eq(ini_section_count(&doc), 2);
}
END_TEST

START_TEST(test_syntax_errors)
{
    ck_assert_int_eq(ini_parse(&doc, "[ok]\nkey value\n"), -1);
    ck_assert_int_eq(doc.error_line, 2);
    ck_assert_int_eq(ini_parse(&doc, "a = 1\n[broken\n"), -1);
    ck_assert_int_eq(doc.error_line, 2);
    ck_assert_int_eq(ini_parse(&doc, "[]\n"), -1);
    ck_assert_int_eq(ini_parse(&doc, " = nokey\n"), -1);
    ck_assert_int_eq(ini_parse(&doc, ""), 0);
    ck_assert_uint_eq(doc.n, 0);
}
END_TEST

START_TEST(test_crlf_lines)
{
    const char *text = "[win]\r\npath = C:\\temp\r\nretries = 3\r\n";
    long n = 0;
    ck_assert_int_eq(ini_parse(&doc, text), 0);
    ck_assert_str_eq(ini_get(&doc, "win", "path"), "C:\\temp");
    ck_assert_int_eq(ini_get_int(&doc, "win", "retries", &n), 0);
    ck_assert_int_eq(n, 3);
}
END_TEST

START_TEST(test_long_values)
{
    char text[INI_LINE_MAX * 2];
    char value[INI_VALUE_MAX + 1];
    memset(value, 'v', INI_VALUE_MAX - 1);
    value[INI_VALUE_MAX - 1] = '\0';
    snprintf(text, sizeof text, "k = %s\n", value);
    ck_assert_int_eq(ini_parse(&doc, text), 0);
    ck_assert_uint_eq(strlen(ini_get(&doc, "", "k")), INI_VALUE_MAX - 1);
    /* one more character no longer fits */
    value[INI_VALUE_MAX - 1] = 'v';
    value[INI_VALUE_MAX] = '\0';
    snprintf(text, sizeof text, "k = %s\n", value);
    ck_assert_int_eq(ini_parse(&doc, text), -1);
    ck_assert_int_eq(doc.error_line, 1);
    /* and a line longer than the limit is an error, not a truncation */
    char line[INI_LINE_MAX + 8];
    memset(line, 'x', sizeof line - 1);
    line[sizeof line - 1] = '\0';
    ck_assert_int_eq(ini_parse(&doc, line), -1);
}
END_TEST

START_TEST(test_get_int)
{
    long n = 0;
    ck_assert_int_eq(ini_parse(&doc, "a = 42\nb = -7\nc = 0x1f\nd = 12abc\ne =\n"), 0);
    ck_assert_int_eq(ini_get_int(&doc, "", "a", &n), 0);
    ck_assert_int_eq(n, 42);
    ck_assert_int_eq(ini_get_int(&doc, "", "b", &n), 0);
    ck_assert_int_eq(n, -7);
    ck_assert_int_eq(ini_get_int(&doc, "", "c", &n), 0);
    ck_assert_int_eq(n, 31);
    ck_assert_int_eq(ini_get_int(&doc, "", "d", &n), -1);
    ck_assert_int_eq(ini_get_int(&doc, "", "e", &n), -1);
    ck_assert_int_eq(ini_get_int(&doc, "", "zz", &n), -1);
}
END_TEST

START_TEST(test_get_bool)
{
    bool b = false;
    ck_assert_int_eq(ini_parse(&doc,
        "[f]\nverbose = yes\ncolor = Off\ndebug = TRUE\ncache = on\nfast = 0\nodd = maybe\n"), 0);
    ck_assert_int_eq(ini_get_bool(&doc, "f", "verbose", &b), 0);
    ck_assert(b);
    ck_assert_int_eq(ini_get_bool(&doc, "f", "color", &b), 0);
    ck_assert(!b);
    ck_assert_int_eq(ini_get_bool(&doc, "f", "debug", &b), 0);
    ck_assert(b);
    ck_assert_int_eq(ini_get_bool(&doc, "f", "cache", &b), 0);
    ck_assert(b);
    ck_assert_int_eq(ini_get_bool(&doc, "f", "fast", &b), 0);
    ck_assert(!b);
    ck_assert_int_eq(ini_get_bool(&doc, "f", "odd", &b), -1);
}
END_TEST

START_TEST(test_text_helpers)
{
    char a[] = "  padded\t ";
    ck_assert_str_eq(ini_trim(a), "padded");
    char q[] = "\"quoted\"";
    ck_assert_int_eq(ini_unquote(q), 0);
    ck_assert_str_eq(q, "quoted");
    char bad[] = "\"open";
    ck_assert_int_eq(ini_unquote(bad), -1);
    ck_assert(ini_name_eq("Section", "sECTION"));
    ck_assert(!ini_name_eq("sect", "section"));
    char small[4];
    ck_assert_int_eq(ini_copy(small, sizeof small, "toolong"), -1);
    ck_assert_int_eq(ini_copy(small, sizeof small, "ok"), 0);
    ck_assert_str_eq(small, "ok");
}
END_TEST

static Suite *ini_suite(void)
{
    Suite *s = suite_create("ini");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 2);
    tcase_add_test(tc, test_basic_pairs);
    tcase_add_test(tc, test_sections);
    tcase_add_test(tc, test_comments);
    tcase_add_test(tc, test_quoted_values);
    tcase_add_test(tc, test_duplicate_keys);
    tcase_add_test(tc, test_syntax_errors);
    tcase_add_test(tc, test_crlf_lines);
    tcase_add_test(tc, test_long_values);
    tcase_add_test(tc, test_get_int);
    tcase_add_test(tc, test_get_bool);
    tcase_add_test(tc, test_text_helpers);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(ini_suite());
    /* Fork each test so a crash is reported as an error and the rest run. */
    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_VERBOSE);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
