/* test_testres.c - TAP, JUnit XML, Check, Unity and testhelp parsers on real
 * runner output
 * (tests/data/testres, made by regen.sh there), on hand-written edge
 * cases, and on garbage, truncated and oversized input. */
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "corpus/testres.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DATA "tests/data/testres/"

typedef int (*parser)(tr_report *, const char *, size_t, char *);

static char *slurp(const char *name, size_t *len)
{
    char *s, err[RL_ERR_MAX];
    ck_assert_msg(fs_read_file(&s, len, name, 1 << 20, err) == 0, "%s", err);
    return s;
}

static void parse_file(tr_report *r, parser p, const char *name)
{
    size_t len;
    char *s = slurp(name, &len), err[RL_ERR_MAX] = "";
    ck_assert_msg(p(r, s, len, err) == 0, "%s: %s", name, err);
    free(s);
}

static void parse_str(tr_report *r, parser p, const char *s, int want_rc)
{
    char err[RL_ERR_MAX] = "";
    int rc = p(r, s, strlen(s), err);
    ck_assert_msg(rc == want_rc, "rc %d (want %d): %s", rc, want_rc, err);
}

/* Asserts a case's status and that its message holds `frag` (NULL: no message). */
static void expect(const tr_report *r, const char *name, tr_status st, const char *frag)
{
    ck_assert_msg(tr_status_of(r, name) == st, "%s: status %s, want %s", name,
                  tr_status_name(tr_status_of(r, name)), tr_status_name(st));
    const tr_case *c = tr_find(r, name);
    if (st == TR_MISSING) {
        ck_assert_ptr_null(c);
        return;
    }
    if (!frag) {
        ck_assert_msg(c->message == NULL, "%s: unexpected message '%s'", name, c->message);
        return;
    }
    ck_assert_msg(c->message && strstr(c->message, frag), "%s: message '%s' lacks '%s'", name,
                  c->message ? c->message : "(null)", frag);
}

/* ---- Check ------------------------------------------------------------------ */

START_TEST(test_check_verbose)
{
    tr_report r;
    parse_file(&r, tr_parse_check, DATA "check_verbose.txt");
    ck_assert_uint_eq(r.n, 8);
    expect(&r, "test_add_small", TR_PASS, NULL);
    expect(&r, "test_parse_time", TR_FAIL, "expected 12:30:00, got 12:31:00");
    ck_assert_str_eq(tr_find(&r, "test_parse_time")->message, "expected 12:30:00, got 12:31:00");
    expect(&r, "test_segfault", TR_ERROR, "Received signal 11");
    expect(&r, "test_early_exit", TR_ERROR, "Early exit with return value 3");
    expect(&r, "test_loop_even", TR_FAIL, "iteration 2 is not allowed"); /* worst of 4 */
    expect(&r, "test_slow", TR_ERROR, "Test timeout expired");
    expect(&r, "test_str_eq", TR_PASS, NULL);
    expect(&r, "test_str_ne", TR_FAIL, "Assertion '\"leap\" == \"leaf\"' failed");
    expect(&r, "test_missing", TR_MISSING, NULL);
    /* Report order is output order. */
    ck_assert_str_eq(r.cases[0].name, "test_add_small");
    ck_assert_str_eq(r.cases[7].name, "test_str_ne");
    tr_report_dispose(&r);

    /* CK_NORMAL prints only the failures: passes read as missing. */
    parse_file(&r, tr_parse_check, DATA "check_normal.txt");
    ck_assert_uint_eq(r.n, 6);
    expect(&r, "test_add_small", TR_MISSING, NULL);
    expect(&r, "test_loop_even", TR_FAIL, "iteration 2");
    tr_report_dispose(&r);
}
END_TEST

START_TEST(test_check_edges)
{
    tr_report r;
    parse_str(&r, tr_parse_check,
              "make: Entering directory '/w'\n"
              "cc -o t t.c\n"
              "weird:dir/t.c:12:F:core:test_colons:0: msg: with: colons \r\n"
              "a:1:b.c:5:P:Core cases:test_y:0: Passed\n"
              "t.c:1:P:c:test_dup:0: Passed\n"
              "t.c:1:F:c:test_dup:1: boom\n"
              "t.c:1:P:c:test_dup:2: Passed\n"
              "t.c:1:E:c:test_dup:3: worse\n"
              "t.c:1:X:c:test_bad:0: not a result\n"
              "t.c:1:F:c:test bad:0: spaces in a name\n"
              "t.c:1:F:c:test_noiter: no iteration\n"
              "t.c:x:F:c:test_noline:0: no line\n",
              0);
    ck_assert_uint_eq(r.n, 3);
    expect(&r, "test_colons", TR_FAIL, "msg: with: colons");
    ck_assert_str_eq(tr_find(&r, "test_colons")->message, "msg: with: colons ");
    expect(&r, "test_y", TR_PASS, NULL);
    expect(&r, "test_dup", TR_ERROR, "worse");
    tr_report_dispose(&r);

    parse_str(&r, tr_parse_check, "", 0);
    ck_assert_uint_eq(r.n, 0);
    tr_report_dispose(&r);
    parse_str(&r, tr_parse_check, "t.c: In function 'main':\nt.c:3:5: error: expected ';'\n", RL_EPARSE);
    ck_assert_uint_eq(r.n, 0);
    tr_report_dispose(&r);
    /* CK_SILENT / CK_MINIMAL output: recognized, nothing reported. */
    parse_str(&r, tr_parse_check, "Running suite(s): s\n100%: Checks: 3, Failures: 0, Errors: 0\n", 0);
    ck_assert_uint_eq(r.n, 0);
    expect(&r, "test_any", TR_MISSING, NULL);
    tr_report_dispose(&r);
}
END_TEST

/* ---- TAP -------------------------------------------------------------------- */

START_TEST(test_tap_perl)
{
    tr_report r;
    parse_file(&r, tr_parse_tap, DATA "tap_sample.txt");
    ck_assert_uint_eq(r.n, 7);
    expect(&r, "adds two numbers", TR_PASS, NULL);
    expect(&r, "subtracts", TR_FAIL, "got: '1'");
    expect(&r, "subtracts", TR_FAIL, "Failed test 'subtracts'");
    expect(&r, "3", TR_SKIP, "skip no network here");
    expect(&r, "parses dates", TR_SKIP, "TODO not written yet");
    expect(&r, "nested group", TR_FAIL, "Failed test 'nested group'");
    expect(&r, "inner one", TR_MISSING, NULL); /* subtest lines belong to the group */
    expect(&r, "handles \\# hashes", TR_PASS, NULL);
    expect(&r, "compares lists", TR_FAIL, "Structures begin differing");
    tr_report_dispose(&r);
}
END_TEST

START_TEST(test_tap_yaml_bail)
{
    tr_report r;
    parse_file(&r, tr_parse_tap, DATA "tap_yaml.txt");
    ck_assert_uint_eq(r.n, 6);
    expect(&r, "parses an empty string", TR_PASS, NULL);
    expect(&r, "parses a date", TR_FAIL, "expected 2024-02-29, got 2024-03-01");
    expect(&r, "parses a date", TR_FAIL, "expected: '2024-02-29'");
    expect(&r, "handles leap years", TR_SKIP, "SKIP slow on CI");
    expect(&r, "keeps order", TR_SKIP, "todo flaky");
    expect(&r, "unnumbered test", TR_PASS, NULL);
    expect(&r, "6", TR_FAIL, NULL);
    expect(&r, "reported after the bail out", TR_MISSING, NULL);
    tr_report_dispose(&r);

    /* Duplicates keep the worst status: a later "ok" cannot hide a failure. */
    parse_str(&r, tr_parse_tap, "not ok 1 - x\n# boom\nok 2 - x\nok 3 - y # skip\nok 4 - y\n", 0);
    expect(&r, "x", TR_FAIL, "boom");
    expect(&r, "y", TR_SKIP, "skip");
    tr_report_dispose(&r);

    parse_str(&r, tr_parse_tap, "okay\nnot okay\nhello\n", RL_EPARSE);
    ck_assert_uint_eq(r.n, 0);
    tr_report_dispose(&r);
    parse_str(&r, tr_parse_tap, "", 0);
    tr_report_dispose(&r);
}
END_TEST

/* ---- JUnit -------------------------------------------------------------------- */

START_TEST(test_junit_pytest)
{
    tr_report r;
    parse_file(&r, tr_parse_junit, DATA "junit_pytest.xml");
    ck_assert_uint_eq(r.n, 11);
    expect(&r, "test_parse_date", TR_PASS, NULL);
    expect(&r, "test_compare_markup", TR_FAIL, "AssertionError: markup: <tag attr='x'>");
    expect(&r, "test_compare_markup", TR_FAIL, "assert 'a<b & \"c\"' == \"a<b & 'c'\"");
    expect(&r, "test_compare_markup", TR_FAIL, "\ndef test_compare_markup():");
    expect(&r, "test_compare_markup", TR_FAIL, "test_sample.py:19: AssertionError");
    expect(&r, "test_uses_fixture", TR_ERROR, "fixture broke: no database");
    expect(&r, "test_skipped", TR_SKIP, "not on this platform");
    expect(&r, "test_expected_failure", TR_SKIP, "known bug");
    expect(&r, "test_parse_time[12:00]", TR_PASS, NULL);
    expect(&r, "test_parse_time[25:00]", TR_FAIL, "assert 25 < 24");
    expect(&r, "test_parse_time[\\xe9]", TR_FAIL, "assert 0 <= -1");
    expect(&r, "test_1900", TR_FAIL, "is False");
    expect(&r, "test_2000", TR_PASS, NULL);
    /* 5000 x's and a traceback: capped, head and tail kept. */
    const tr_case *c = tr_find(&r, "test_long_traceback");
    ck_assert_int_eq(c->status, TR_FAIL);
    ck_assert_uint_le(strlen(c->message), RL_TR_MSG_MAX + 64);
    ck_assert_ptr_nonnull(strstr(c->message, "bytes cut"));
    ck_assert_ptr_nonnull(strstr(c->message, "ValueError: xxx"));
    ck_assert_ptr_nonnull(strstr(c->message, "test_sample.py:57: ValueError"));
    tr_report_dispose(&r);
}
END_TEST

START_TEST(test_junit_syntax)
{
    tr_report r;
    parse_str(&r, tr_parse_junit,
              "\xEF\xBB\xBF<?xml version='1.0'?>\n<!DOCTYPE x [ <!ENTITY e 'v'> ]>\n<!-- <testcase name='c'> -->\n"
              "<testsuites><testsuite name='s1'>\n"
              "  <testcase name='ents &#65;&#x42;&#x1F600;' classname=\"k\"/>\n"
              "  <testcase name=\"odd &#0; &#xD800; &bogus; &amp\" />\n"
              "  <testcase name='cdata'><failure message='m &lt;1&gt;'><![CDATA[x < y && <tag>]]> tail</failure></testcase>\n"
              "  <testcase name='dup'/>\n"
              "  <testcase name='both'><failure message='f'/><error message='e'>trace</error></testcase>\n"
              "  <testcase name='out'><system-out>lots of &lt;output&gt;</system-out></testcase>\n"
              "  <testcase name = 'spaced' time = \"1\" ></testcase >\n"
              "</testsuite><testsuite name='s2'><testsuite name='nested'>\n"
              "  <testcase name='dup'><error message=\"crashed\"/></testcase>\n"
              "  <testcase name='skip-only'><skipped/></testcase>\n"
              "</testsuite></testsuite></testsuites>\n",
              0);
    ck_assert_uint_eq(r.n, 8);
    expect(&r, "ents AB\xF0\x9F\x98\x80", TR_PASS, NULL);
    expect(&r, "odd \xEF\xBF\xBD \xEF\xBF\xBD &bogus; &amp", TR_PASS, NULL);
    expect(&r, "cdata", TR_FAIL, "m <1>\nx < y && <tag> tail");
    expect(&r, "dup", TR_ERROR, "crashed");
    expect(&r, "both", TR_ERROR, "e\ntrace");
    ck_assert_ptr_null(strstr(tr_find(&r, "both")->message, "f"));
    expect(&r, "out", TR_PASS, NULL);
    expect(&r, "spaced", TR_PASS, NULL);
    expect(&r, "skip-only", TR_SKIP, NULL);
    expect(&r, "c", TR_MISSING, NULL);
    tr_report_dispose(&r);
}
END_TEST

START_TEST(test_junit_errors)
{
    tr_report r;
    char err[RL_ERR_MAX];
    const char *bad[][2] = {
        {"hello world", "text before the root element"},
        {"<html><body/></html>", "root element is <html>, expected <testsuites> or <testsuite>"},
        {"", "no <testsuites> or <testsuite> element"},
        {"<?xml version='1.0'?>", "no <testsuites> or <testsuite> element"},
        {"<testsuite><testcase name='a'/></testcase></testsuite>", "line 1: unexpected </testcase> (expected </testsuite>)"},
        {"<testsuite>\n<testcase name=a/>", "line 2: expected a quoted attribute value"},
        {"<testsuite><testcase name='a' 9='x'/>", "expected an attribute name"},
        {"<testsuite><testcase name'a'/>", "expected '=' after an attribute name"},
        {"<testsuite><1tag/>", "expected an element name after '<'"},
        {"<testsuite></ x>", "expected an element name after '</'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        ck_assert_int_eq(tr_parse_junit(&r, bad[i][0], strlen(bad[i][0]), err), RL_EPARSE);
        ck_assert_msg(strstr(err, bad[i][1]), "case %zu: '%s' lacks '%s'", i, err, bad[i][1]);
        ck_assert_ptr_null(strchr(err, '\n'));
        tr_report_dispose(&r);
    }
    /* Results before a syntax error are kept. */
    const char *part = "<testsuite><testcase name='a'/><testcase name='b'><failure/></testcase></oops>";
    ck_assert_int_eq(tr_parse_junit(&r, part, strlen(part), err), RL_EPARSE);
    expect(&r, "a", TR_PASS, NULL);
    expect(&r, "b", TR_FAIL, NULL);
    tr_report_dispose(&r);

    /* Nesting deeper than the cap. */
    size_t depth = 10000;
    char *deep = malloc(depth * 3 + 32);
    strcpy(deep, "<testsuites>");
    for (size_t i = 0; i < depth; i++)
        strcat(deep + 12 + 3 * i, "<a>");
    ck_assert_int_eq(tr_parse_junit(&r, deep, strlen(deep), err), RL_EPARSE);
    ck_assert_msg(strstr(err, "nested too deep"), "%s", err);
    tr_report_dispose(&r);
    free(deep);
}
END_TEST

/* ---- Check's XML log and the integrity checks ------------------------------- */

START_TEST(test_check_xml)
{
    tr_report r, out;
    parse_file(&r, tr_parse_check_xml, DATA "check_log.xml");
    ck_assert_str_eq(r.integrity, "");
    ck_assert_uint_eq(r.n, 8);
    expect(&r, "test_add_small", TR_PASS, NULL);
    ck_assert_str_eq(tr_find(&r, "test_parse_time")->message, "expected 12:30:00, got 12:31:00");
    expect(&r, "test_segfault", TR_ERROR, "Received signal 11");
    expect(&r, "test_early_exit", TR_ERROR, "Early exit with return value 3");
    expect(&r, "test_loop_even", TR_FAIL, "iteration 2 is not allowed");
    ck_assert_int_eq(tr_find(&r, "test_loop_even")->count, 4); /* one per iteration */
    ck_assert_int_eq(tr_find(&r, "test_add_small")->count, 1);
    expect(&r, "test_slow", TR_ERROR, "Test timeout expired");
    expect(&r, "test_str_ne", TR_FAIL, "Assertion '\"leap\" == \"leaf\"' failed");
    expect(&r, "test_missing", TR_MISSING, NULL);

    /* The same run's stdout agrees, in CK_VERBOSE and in CK_NORMAL. */
    parse_file(&out, tr_parse_check, DATA "check_verbose.txt");
    ck_assert_int_eq(out.summary_lines, 1);
    ck_assert_int_eq(out.summary_checks, 11);
    ck_assert_int_eq(tr_check_agrees(&r, &out, 0), 0);
    ck_assert_str_eq(r.integrity, "");
    tr_report_dispose(&out);
    parse_file(&out, tr_parse_check, DATA "check_normal.txt");
    ck_assert_int_eq(tr_check_agrees(&r, &out, 0), 0);
    tr_report_dispose(&out);

    /* Stdout that disagrees with the log. */
    size_t len;
    char *verbose = slurp(DATA "check_verbose.txt", &len);
    struct { const char *add; const char *from, *to; const char *why; } bad[] = {
        {"x.c:1:P:core:test_parse_time:0: Passed\n", NULL, NULL, "test test_parse_time: stdout says fail (2 times)"},
        {"x.c:1:P:core:test_invented:0: Passed\n", NULL, NULL, "test test_invented is on stdout but not in the XML log"},
        {"100%: Checks: 0, Failures: 0, Errors: 0\n", NULL, NULL, "Check: 2 summary lines on stdout"},
        {"", "Checks: 11, Failures: 3, Errors: 3", "Checks: 11, Failures: 3, Errors: 4", "the XML log holds 11, 3, 3"},
        {"", "Checks: 11, Failures: 3", "Checks: 11, Failures: 2", "stdout says Checks: 11, Failures: 2"},
        {"", "Checks: 11", "Chex: 11", "no summary line"},
        {"", ":F:core:test_parse_time:", ":P:core:test_parse_time:", "stdout says pass"},
        {"", ":E:core:test_segfault:", ":E:core:test_segfaulx:", "test test_segfault is a error in the XML log but not on stdout"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *t = malloc(len + 256);
        strcpy(t, verbose);
        if (bad[i].from) {
            char *at = strstr(t, bad[i].from);
            ck_assert_ptr_nonnull(at);
            memcpy(at, bad[i].to, strlen(bad[i].to));
        }
        strcat(t, bad[i].add);
        parse_str(&out, tr_parse_check, t, 0);
        tr_report log;
        parse_file(&log, tr_parse_check_xml, DATA "check_log.xml");
        ck_assert_msg(tr_check_agrees(&log, &out, 0) == RL_EINVAL, "case %zu agrees", i);
        ck_assert_msg(strstr(log.integrity, bad[i].why), "case %zu: '%s' lacks '%s'", i, log.integrity, bad[i].why);
        ck_assert_ptr_null(strchr(log.integrity, '\n'));
        tr_report_dispose(&log);
        tr_report_dispose(&out);
        free(t);
    }
    /* Stdout cut in the middle: missing lines and summary are fine, a
     * line that disagrees is not. */
    parse_str(&out, tr_parse_check, "x.c:1:F:core:test_parse_time:0: expected\n", 0);
    ck_assert_int_eq(tr_check_agrees(&r, &out, 0), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(r.integrity, "no summary line"));
    r.integrity[0] = '\0';
    ck_assert_int_eq(tr_check_agrees(&r, &out, 1), 0);
    tr_report_dispose(&out);
    parse_str(&out, tr_parse_check, "x.c:1:P:core:test_parse_time:0: Passed\n", 0);
    ck_assert_int_eq(tr_check_agrees(&r, &out, 1), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(r.integrity, "stdout says pass"));
    r.integrity[0] = '\0';
    tr_report_dispose(&out);
    free(verbose);

    /* Everything fails once the run is not trusted. */
    tr_report_set_integrity(&r, "first %d", 1);
    tr_report_set_integrity(&r, "second");
    ck_assert_str_eq(r.integrity, "first 1");
    tr_report_fail_all(&r);
    for (size_t i = 0; i < r.n; i++) {
        ck_assert_int_eq(r.cases[i].status, TR_ERROR);
        ck_assert_str_eq(r.cases[i].message, "first 1");
    }
    tr_report_dispose(&r);

    /* A log cut short, a JUnit root, a second root. */
    parse_str(&r, tr_parse_check_xml,
              "<testsuites><suite><test result='success'><id>test_a</id></test>", 0);
    expect(&r, "test_a", TR_PASS, NULL);
    ck_assert_msg(strstr(r.integrity, "Check XML: the file ends before its root element"), "%s", r.integrity);
    tr_report_dispose(&r);
    parse_str(&r, tr_parse_check_xml, "<testsuite><test result='success'><id>a</id></test></testsuite>", RL_EPARSE);
    tr_report_dispose(&r);
    parse_str(&r, tr_parse_check_xml,
              "<testsuites><suite><test result='failure'><id> test_a </id><message>no</message></test>"
              "</suite></testsuites>\n<testsuites><suite><test result='success'><id>test_a</id></test>"
              "</suite></testsuites>", 0);
    ck_assert_msg(strstr(r.integrity, "line 2: an element after the root element ended"), "%s", r.integrity);
    expect(&r, "test_a", TR_FAIL, "no");
    ck_assert_int_eq(tr_find(&r, "test_a")->count, 2);
    tr_report_dispose(&r);
    /* An unknown result reads as an error. */
    parse_str(&r, tr_parse_check_xml, "<testsuites><test result='maybe'><id>t</id></test></testsuites>", 0);
    expect(&r, "t", TR_ERROR, NULL);
    ck_assert_str_eq(r.integrity, "");
    tr_report_dispose(&r);
}
END_TEST

START_TEST(test_summaries)
{
    tr_report r;
    /* Real outputs are consistent. */
    parse_file(&r, tr_parse_junit, DATA "junit_pytest.xml");
    ck_assert_str_eq(r.integrity, "");
    tr_report_dispose(&r);
    parse_file(&r, tr_parse_tap, DATA "tap_sample.txt");
    ck_assert_str_eq(r.integrity, "");
    tr_report_dispose(&r);
    parse_file(&r, tr_parse_tap, DATA "tap_yaml.txt");
    ck_assert_msg(strstr(r.integrity, "TAP: the run bailed out after 6 test lines"), "%s", r.integrity);
    tr_report_dispose(&r);

    struct { parser p; const char *in, *why; } c[] = {
        {tr_parse_junit, "<testsuites><testsuite tests='2' failures='0'><testcase name='a'/></testsuite></testsuites>",
         "JUnit XML: line 1: the suite states tests=\"2\" but holds 1"},
        {tr_parse_junit, "<testsuite tests='1' failures='0'><testcase name='a'><failure/></testcase></testsuite>",
         "states failures=\"0\" but holds 1"},
        {tr_parse_junit, "<testsuite tests='1' errors='0' skipped='0'><testcase name='a'><skipped/></testcase></testsuite>",
         "states skipped=\"0\" but holds 1"},
        {tr_parse_junit, "<testsuites tests='1'><testsuite tests='1'><testcase name='a'/></testsuite>\n"
                         "<testsuite><testcase name='b'/></testsuite></testsuites>",
         "states tests=\"1\" but holds 2"},
        {tr_parse_junit, "<testsuite tests='x'><testcase name='a'/></testsuite>", "attribute tests is not a count"},
        {tr_parse_junit, "<testsuite tests='1'><testcase name='a'/>", "JUnit XML: the file ends before its root"},
        {tr_parse_junit, "<testsuite tests='1'><testcase name='a'/></testsuite><testsuite tests='1'>"
                         "<testcase name='a'/></testsuite>", "an element after the root element ended"},
        {tr_parse_tap, "ok 1 - a\nok 2 - b\n", "TAP: no plan line (1..N) for 2 test lines"},
        {tr_parse_tap, "1..3\nok 1 - a\nok 2 - b\n", "TAP: plan 1..3 but 2 test lines"},
        {tr_parse_tap, "1..2\nok 1 - a\nok 2 - b\nok 3 - b\n", "TAP: plan 1..2 but 3 test lines"},
        {tr_parse_tap, "1..1\nok 1 - a\n1..1\n", "TAP: 2 plan lines"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        parse_str(&r, c[i].p, c[i].in, 0);
        ck_assert_msg(strstr(r.integrity, c[i].why), "case %zu: '%s' lacks '%s'", i, r.integrity, c[i].why);
        tr_report_dispose(&r);
    }
    /* Consistent ones. */
    const char *okj = "<testsuites><testsuite tests='3' failures='1' errors='1' skipped='0'>"
                      "<testcase name='a'/><testcase name='b'><failure/></testcase>"
                      "<testcase name='c'><error/></testcase></testsuite></testsuites>";
    parse_str(&r, tr_parse_junit, okj, 0);
    ck_assert_str_eq(r.integrity, "");
    tr_report_dispose(&r);
    /* pytest: a test that passed and then failed its teardown counts twice. */
    const char *teardown = "<testsuites><testsuite tests='2' errors='1'><testcase name='a'>"
                           "<error message='failed on teardown'/></testcase></testsuite></testsuites>";
    parse_str(&r, tr_parse_junit, teardown, 0);
    ck_assert_str_eq(r.integrity, "");
    tr_report_dispose(&r);
    parse_str(&r, tr_parse_tap, "ok 1 - a\nnot ok 2 - b\n1..2\n", 0);
    ck_assert_str_eq(r.integrity, "");
    ck_assert_int_eq(tr_find(&r, "a")->count, 1);
    tr_report_dispose(&r);
    parse_str(&r, tr_parse_tap, "1..3\nok 1 - a\nok 2 - a\nok 3 - a\n", 0);
    ck_assert_str_eq(r.integrity, "");
    ck_assert_int_eq(tr_find(&r, "a")->count, 3);
    tr_report_dispose(&r);
}
END_TEST

static int rank(tr_status s) { return s == TR_PASS ? 0 : s == TR_SKIP ? 1 : s == TR_FAIL ? 2 : 3; }

/* Every prefix of real output parses without a crash. JUnit: each case a
 * prefix reports has the full parse's status (an unfinished <testcase> is
 * never reported). Check: a prefix can only miss later, worse lines. */
START_TEST(test_truncated)
{
    struct { parser p; const char *file; } in[] = {
        {tr_parse_junit, DATA "junit_pytest.xml"},
        {tr_parse_check, DATA "check_verbose.txt"},
        {tr_parse_tap, DATA "tap_sample.txt"},
        {tr_parse_check_xml, DATA "check_log.xml"},
    };
    for (size_t f = 0; f < 4; f++) {
        size_t len;
        char *s = slurp(in[f].file, &len), err[RL_ERR_MAX];
        tr_report full, r;
        ck_assert_int_eq(in[f].p(&full, s, len, err), 0);
        size_t reported_max = 0;
        for (size_t k = 0; k < len; k += 1 + k % 5) {
            char *cut = malloc(k + 1);
            memcpy(cut, s, k);
            int rc = in[f].p(&r, cut, k, err);
            ck_assert(rc == 0 || rc == RL_EPARSE);
            reported_max = r.n > reported_max ? r.n : reported_max;
            for (size_t i = 0; i < r.n; i++) {
                tr_status want = tr_status_of(&full, r.cases[i].name), got = r.cases[i].status;
                if (in[f].p == tr_parse_junit)
                    ck_assert_msg(want == got, "%s cut at %zu: %s is %s, full parse says %s", in[f].file,
                                  k, r.cases[i].name, tr_status_name(got), tr_status_name(want));
                else if (in[f].p != tr_parse_tap && want != TR_MISSING) /* Check: a later iteration may be worse */
                    ck_assert_int_le(rank(got), rank(want));
            }
            tr_report_dispose(&r);
            free(cut);
        }
        ck_assert_uint_ge(reported_max + 1, full.n); /* prefixes did report results */
        tr_report_dispose(&full);
        free(s);
    }
}
END_TEST

/* ---- Unity ------------------------------------------------------------------ */

/* cJSON's 21 Unity programs with a bug in parse_hex4 (regen.sh). */
START_TEST(test_unity_cjson)
{
    tr_report r;
    parse_file(&r, tr_parse_unity, DATA "unity_cjson.txt");
    ck_assert_str_eq(r.integrity, "");
    ck_assert_int_eq(r.summary_lines, 21);
    ck_assert_int_eq(r.summary_checks, 162);
    ck_assert_int_eq(r.summary_failures, 2);
    ck_assert_int_eq(r.reported[TR_PASS], 159);
    ck_assert_int_eq(r.reported[TR_FAIL], 2);
    ck_assert_int_eq(r.reported[TR_SKIP], 1);
    ck_assert_uint_eq(r.n, 162);
    expect(&r, "parse_hex4_should_parse_all_combinations", TR_FAIL, "Failed to parse uppercase digits");
    expect(&r, "parse_hex4_should_parse_mixed_case", TR_FAIL, "Expected 48879 Was 0");
    expect(&r, "print_number_should_print_non_number", TR_SKIP, "");
    expect(&r, "parse_with_opts_should_handle_null", TR_PASS, NULL);
    expect(&r, "cjson_utils_functions_shouldnt_crash_with_null_pointers", TR_PASS, NULL);
    tr_report_dispose(&r);
}
END_TEST

START_TEST(test_unity_edges)
{
    tr_report r;
    /* Text the test printed without a newline stays in front of the path;
     * a message may hold ':'; IGNORE with a message. */
    parse_str(&r, tr_parse_unity,
              "hello tests/a.c:10:test_one:PASS\n"
              "tests/a.c:12:test_two:FAIL: Expected 1 Was 2: see a.c:3:x:PASS\n"
              "tests/a.c:14:test_three:IGNORE: later\n"
              "\n-----------------------\n3 Tests 1 Failures 1 Ignored \nFAIL\n",
              0);
    ck_assert_str_eq(r.integrity, "");
    expect(&r, "test_one", TR_PASS, NULL);
    expect(&r, "test_two", TR_FAIL, "Expected 1 Was 2: see a.c:3:x:PASS");
    expect(&r, "test_three", TR_SKIP, "later");
    ck_assert_uint_eq(r.n, 3);
    tr_report_dispose(&r);

    /* Library code printing a PASS line for a failing test: reported
     * twice, and its program's summary disagrees with the lines. */
    parse_str(&r, tr_parse_unity,
              "tests/a.c:12:test_two:PASS\ntests/a.c:12:test_two:FAIL: Expected 1 Was 2\n"
              "tests/a.c:20:test_other:PASS\n"
              "2 Tests 1 Failures 0 Ignored\nFAIL\n",
              0);
    expect(&r, "test_two", TR_FAIL, "Expected 1 Was 2");
    ck_assert_int_eq(tr_find(&r, "test_two")->count, 2);
    ck_assert_ptr_nonnull(strstr(r.integrity, "a summary says 2 tests, 1 failures"));
    tr_report_dispose(&r);

    /* A second program that crashed (or exited) before its summary: its
     * results become errors; the first program's stand. */
    parse_str(&r, tr_parse_unity,
              "tests/a.c:1:test_a:PASS\n1 Tests 0 Failures 0 Ignored\nOK\n"
              "tests/b.c:1:test_b:PASS\ntests/b.c:2:test_c:PASS\n",
              0);
    ck_assert_str_eq(r.integrity, "");
    expect(&r, "test_a", TR_PASS, NULL);
    expect(&r, "test_b", TR_ERROR, "before its summary");
    expect(&r, "test_c", TR_ERROR, "before its summary");
    tr_report_dispose(&r);

    /* Not Unity's output at all; nothing is fine. */
    parse_str(&r, tr_parse_unity, "make: *** [Makefile:3: all] Error 1\n", RL_EPARSE);
    tr_report_dispose(&r);
    parse_str(&r, tr_parse_unity, "", 0);
    ck_assert_uint_eq(r.n, 0);
    tr_report_dispose(&r);
}
END_TEST

/* ---- testhelp --------------------------------------------------------------- */

/* sds's tests with a bug in sdsrange (regen.sh). */
START_TEST(test_testhelp_sds)
{
    tr_report r;
    parse_file(&r, tr_parse_testhelp, DATA "testhelp_sds.txt");
    ck_assert_str_eq(r.integrity, "");
    ck_assert_int_eq(r.summary_lines, 1);
    ck_assert_int_eq(r.summary_checks, 46);
    ck_assert_int_eq(r.summary_failures, 2);
    ck_assert_int_eq(r.reported[TR_PASS], 44);
    ck_assert_int_eq(r.reported[TR_FAIL], 2);
    expect(&r, "sdsrange(...,1,-1)", TR_FAIL, "condition was false");
    expect(&r, "sdsrange(...,-2,-1)", TR_FAIL, "condition was false");
    expect(&r, "Create a string and obtain the length", TR_PASS, NULL);
    ck_assert_int_gt(tr_find(&r, "sdsMakeRoomFor() len")->count, 1); /* a check in a loop */
    tr_report_dispose(&r);
}
END_TEST

START_TEST(test_testhelp_edges)
{
    tr_report r;
    parse_str(&r, tr_parse_testhelp, "1 - a: b: PASSED\n2 - c: FAILED\n2 tests, 1 passed, 1 failed\n", 0);
    ck_assert_str_eq(r.integrity, "");
    expect(&r, "a: b", TR_PASS, NULL);
    expect(&r, "c", TR_FAIL, "condition was false");
    tr_report_dispose(&r);

    /* Library code printing "PASSED\n" inside the condition: the runner's
     * own verdict lands on a line of its own. */
    parse_str(&r, tr_parse_testhelp, "1 - a: PASSED\nFAILED\n1 tests, 0 passed, 1 failed\n", 0);
    ck_assert_ptr_nonnull(strstr(r.integrity, "a verdict outside a result line"));
    tr_report_dispose(&r);

    /* A forged line out of sequence; totals that disagree; two summaries. */
    parse_str(&r, tr_parse_testhelp, "1 - a: PASSED\n3 - b: PASSED\n2 tests, 2 passed, 0 failed\n", 0);
    ck_assert_ptr_nonnull(strstr(r.integrity, "numbered 3"));
    tr_report_dispose(&r);
    parse_str(&r, tr_parse_testhelp, "1 - a: PASSED\n2 tests, 2 passed, 0 failed\n", 0);
    ck_assert_ptr_nonnull(strstr(r.integrity, "the summary says 2 tests"));
    tr_report_dispose(&r);
    parse_str(&r, tr_parse_testhelp, "1 - a: PASSED\n1 tests, 1 passed, 0 failed\n1 tests, 1 passed, 0 failed\n",
              0);
    ck_assert_ptr_nonnull(strstr(r.integrity, "2 summary lines"));
    tr_report_dispose(&r);

    /* No summary (the program crashed): what it printed becomes errors. */
    parse_str(&r, tr_parse_testhelp, "1 - a: PASSED\n2 - b: ", 0);
    ck_assert_str_eq(r.integrity, "");
    expect(&r, "a", TR_ERROR, "before its summary");
    tr_report_dispose(&r);

    parse_str(&r, tr_parse_testhelp, "cc: error: no input files\n", RL_EPARSE);
    tr_report_dispose(&r);
}
END_TEST

static uint64_t fz_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

START_TEST(test_fuzz)
{
    parser ps[] = {tr_parse_junit, tr_parse_check, tr_parse_tap, tr_parse_check_xml, tr_parse_unity,
                   tr_parse_testhelp};
    const char *files[] = {DATA "junit_pytest.xml", DATA "check_verbose.txt", DATA "tap_yaml.txt",
                           DATA "check_log.xml",    DATA "unity_cjson.txt",   DATA "testhelp_sds.txt"};
    /* Interesting bytes for the formats, so the fuzz reaches deep states. */
    const char alpha[] = "<>/='\"&#;x![]?-: \n\tPFEok1.";
    uint64_t seed = 7;
    char err[RL_ERR_MAX];
    for (size_t f = 0; f < 6; f++) {
        size_t len;
        char *s = slurp(files[f], &len);
        for (int it = 0; it < 300; it++) {
            char *m = malloc(len + 1);
            memcpy(m, s, len + 1);
            int edits = 1 + (int)(fz_next(&seed) % 8);
            for (int e = 0; e < edits; e++) {
                uint64_t v = fz_next(&seed);
                m[v % len] = v & 1 ? alpha[(v >> 8) % (sizeof alpha - 1)] : (char)(v >> 16);
            }
            for (size_t p = 0; p < 6; p++) {
                tr_report r;
                int rc = ps[p](&r, m, len, err);
                ck_assert(rc == 0 || rc == RL_EPARSE);
                for (size_t i = 0; i < r.n; i++)
                    ck_assert(r.cases[i].name[0] && strlen(r.cases[i].name) <= RL_TR_NAME_MAX);
                tr_report_dispose(&r);
            }
            free(m);
        }
        free(s);
    }
    for (int it = 0; it < 1000; it++) {
        size_t len = fz_next(&seed) % 400;
        char *m = malloc(len + 1);
        for (size_t k = 0; k < len; k++)
            m[k] = alpha[fz_next(&seed) % (sizeof alpha - 1)];
        m[len] = '\0';
        for (size_t p = 0; p < 6; p++) {
            tr_report r;
            int rc = ps[p](&r, m, len, err);
            ck_assert(rc == 0 || rc == RL_EPARSE);
            tr_report_dispose(&r);
        }
        free(m);
    }
}
END_TEST

START_TEST(test_caps)
{
    /* More cases than the cap: the extra ones are dropped (read as missing). */
    size_t n = RL_TR_CASES_MAX + 500;
    char *s = malloc(n * 48);
    size_t off = 0;
    for (size_t i = 0; i < n; i++)
        off += (size_t)sprintf(s + off, "t.c:1:P:core:test_%zu:0: Passed\n", i);
    tr_report r;
    char err[RL_ERR_MAX];
    ck_assert_int_eq(tr_parse_check(&r, s, off, err), 0);
    ck_assert_uint_eq(r.n, RL_TR_CASES_MAX);
    ck_assert_int_eq(tr_status_of(&r, "test_0"), TR_PASS);
    ck_assert_int_eq(tr_status_of(&r, "test_20400"), TR_MISSING);
    tr_report_dispose(&r);

    /* A huge name is cut, a huge message capped. */
    size_t big = 100000;
    off = (size_t)sprintf(s, "not ok 1 - ");
    memset(s + off, 'n', big);
    off += big;
    off += (size_t)sprintf(s + off, "\n");
    for (int i = 0; i < 2000; i++)
        off += (size_t)sprintf(s + off, "# diagnostic line %d\n", i);
    ck_assert_int_eq(tr_parse_tap(&r, s, off, err), 0);
    ck_assert_uint_eq(r.n, 1);
    ck_assert_uint_eq(strlen(r.cases[0].name), RL_TR_NAME_MAX);
    ck_assert_uint_le(strlen(r.cases[0].message), RL_TR_MSG_MAX + 64);
    ck_assert_ptr_nonnull(strstr(r.cases[0].message, "diagnostic line 0\n"));
    ck_assert_ptr_nonnull(strstr(r.cases[0].message, "diagnostic line 1999"));
    tr_report_dispose(&r);
    free(s);

    ck_assert_int_eq(tr_status_of(NULL, "x"), TR_MISSING);
    ck_assert_str_eq(tr_status_name(TR_MISSING), "missing");
    ck_assert_str_eq(tr_status_name(TR_ERROR), "error");
}
END_TEST

Suite *testres_suite(void)
{
    Suite *s = suite_create("testres");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, test_check_verbose);
    tcase_add_test(tc, test_check_edges);
    tcase_add_test(tc, test_tap_perl);
    tcase_add_test(tc, test_tap_yaml_bail);
    tcase_add_test(tc, test_junit_pytest);
    tcase_add_test(tc, test_junit_syntax);
    tcase_add_test(tc, test_junit_errors);
    tcase_add_test(tc, test_check_xml);
    tcase_add_test(tc, test_summaries);
    tcase_add_test(tc, test_truncated);
    tcase_add_test(tc, test_unity_cjson);
    tcase_add_test(tc, test_unity_edges);
    tcase_add_test(tc, test_testhelp_sds);
    tcase_add_test(tc, test_testhelp_edges);
    tcase_add_test(tc, test_fuzz);
    tcase_add_test(tc, test_caps);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}
