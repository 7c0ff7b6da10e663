/* test_utf8.c - Check tests for the utf8 library. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

#define B(s) ((const uint8_t *)(s))

/* Decodes s (a C string of bytes) and returns the code point, or -1. */
static long dec(const char *s)
{
    uint32_t cp = 0;
    size_t len = strlen(s);
    int n = utf8_decode(&cp, B(s), len);
    if (n < 0)
        return -1;
    ck_assert_int_eq(n, (int)len);
    return (long)cp;
}

START_TEST(test_decode_ascii_and_multibyte)
{
    ck_assert_int_eq(dec("A"), 0x41);
    ck_assert_int_eq(dec("\xc3\xa9"), 0xE9);          /* é */
    ck_assert_int_eq(dec("\xe2\x82\xac"), 0x20AC);    /* € */
    ck_assert_int_eq(dec("\xf0\x9f\x98\x80"), 0x1F600); /* grinning face */
    ck_assert_int_eq(dec("\xef\xbf\xbd"), 0xFFFD);
}
END_TEST

START_TEST(test_decode_boundaries)
{
    ck_assert_int_eq(dec("\x7f"), 0x7F);
    ck_assert_int_eq(dec("\xc2\x80"), 0x80);
    ck_assert_int_eq(dec("\xdf\xbf"), 0x7FF);
    ck_assert_int_eq(dec("\xef\xbf\xbf"), 0xFFFF);
    ck_assert_int_eq(dec("\xf0\x90\x80\x80"), 0x10000);
}
END_TEST

START_TEST(test_decode_rejects_overlong)
{
    ck_assert_int_eq(dec("\xc0\xaf"), -1);
    ck_assert_int_eq(dec("\xc1\xbf"), -1);
    ck_assert_int_eq(dec("\xe0\x80\xaf"), -1);
    ck_assert_int_eq(dec("\xe0\x9f\xbf"), -1);
    ck_assert_int_eq(dec("\xf0\x80\x80\xaf"), -1);
    ck_assert_int_eq(dec("\xf0\x8f\xbf\xbf"), -1);
}
END_TEST

START_TEST(test_decode_rejects_surrogates)
{
    ck_assert_int_eq(dec("\xed\xa0\x80"), -1); /* U+D800 */
    ck_assert_int_eq(dec("\xed\xad\xbf"), -1); /* U+DB7F */
    ck_assert_int_eq(dec("\xed\xbf\xbf"), -1); /* U+DFFF */
    ck_assert_int_eq(dec("\xed\x9f\xbf"), 0xD7FF);
    ck_assert_int_eq(dec("\xee\x80\x80"), 0xE000);
}
END_TEST

START_TEST(test_decode_max_code_point)
{
    ck_assert_int_eq(dec("\xf4\x8f\xbf\xbf"), 0x10FFFF);
    ck_assert_int_eq(dec("\xf4\x90\x80\x80"), -1);
    ck_assert_int_eq(dec("\xf5\x80\x80\x80"), -1);
    ck_assert_int_eq(dec("\xff"), -1);
}
END_TEST

START_TEST(test_decode_truncated)
{
    uint32_t cp;
    ck_assert_int_eq(utf8_decode(&cp, B("\xe2\x82"), 2), -1);
    ck_assert_int_eq(utf8_decode(&cp, B("\xf0\x9f\x98"), 3), -1);
    ck_assert_int_eq(utf8_decode(&cp, B("\x80"), 1), -1);
    ck_assert_int_eq(utf8_decode(&cp, B("\xc3\x28"), 2), -1);
    ck_assert_int_eq(utf8_decode(&cp, B(""), 0), -1);
}
END_TEST

START_TEST(test_encode)
{
    uint8_t buf[4];
    ck_assert_int_eq(utf8_encode(buf, 0x41), 1);
    ck_assert_int_eq(buf[0], 0x41);
    ck_assert_int_eq(utf8_encode(buf, 0xE9), 2);
    ck_assert_mem_eq(buf, "\xc3\xa9", 2);
    ck_assert_int_eq(utf8_encode(buf, 0x20AC), 3);
    ck_assert_mem_eq(buf, "\xe2\x82\xac", 3);
    ck_assert_int_eq(utf8_encode(buf, 0x1F600), 4);
    ck_assert_mem_eq(buf, "\xf0\x9f\x98\x80", 4);
    ck_assert_int_eq(utf8_encode(buf, 0xD800), 0);
    ck_assert_int_eq(utf8_encode(buf, 0x110000), 0);
}
END_TEST

START_TEST(test_roundtrip)
{
    uint8_t buf[4];
    for (uint32_t cp = 0; cp <= UTF8_MAX_CP; cp += (cp < 0x3000 ? 1 : 97)) {
        int n = utf8_encode(buf, cp);
        if (cp >= 0xD800 && cp <= 0xDFFF) {
            ck_assert_int_eq(n, 0);
            continue;
        }
        uint32_t back = 0;
        ck_assert_msg(n > 0 && utf8_decode(&back, buf, (size_t)n) == n && back == cp,
                      "U+%04X does not round-trip", (unsigned)cp);
    }
}
END_TEST

START_TEST(test_strlen_and_validate)
{
    const char *s = "na\xc3\xafve \xe2\x82\xac\xf0\x9f\x98\x80";
    ck_assert_int_eq(utf8_strlen(B(s), strlen(s)), 8);
    ck_assert(utf8_validate(B(s), strlen(s)));
    const char *hindi = "\xe0\xa4\xa8\xe0\xa4\xae\xe0\xa4\xb8\xe0\xa5\x8d\xe0\xa4\xa4\xe0\xa5\x87";
    ck_assert_int_eq(utf8_strlen(B(hindi), strlen(hindi)), 6);
    const char *samaritan = "\xe0\xa0\x80\xe0\xa0\x95";
    ck_assert_int_eq(utf8_strlen(B(samaritan), strlen(samaritan)), 2);
    ck_assert(!utf8_validate(B("ab\xc0\xafz"), 5));
    ck_assert(!utf8_validate(B("\xed\xa0\x80"), 3));
    ck_assert(utf8_validate(B("a\0b"), 3));
}
END_TEST

START_TEST(test_offset)
{
    const char *s = "a\xc3\xa9\xe2\x82\xac!";
    size_t len = strlen(s);
    ck_assert_int_eq(utf8_offset(B(s), len, 0), 0);
    ck_assert_int_eq(utf8_offset(B(s), len, 1), 1);
    ck_assert_int_eq(utf8_offset(B(s), len, 2), 3);
    ck_assert_int_eq(utf8_offset(B(s), len, 3), 6);
    ck_assert_int_eq(utf8_offset(B(s), len, 4), -1);
}
END_TEST

START_TEST(test_truncate)
{
    const char *s = "ab\xe2\x82\xac" "cd";
    size_t len = strlen(s);
    ck_assert_uint_eq(utf8_truncate(B(s), len, 2), 2);
    ck_assert_uint_eq(utf8_truncate(B(s), len, 3), 2);
    ck_assert_uint_eq(utf8_truncate(B(s), len, 4), 2);
    ck_assert_uint_eq(utf8_truncate(B(s), len, 5), 5);
    ck_assert_uint_eq(utf8_truncate(B(s), len, 100), 7);
    const char *deva = "\xe0\xa4\xa8\xe0\xa4\xae";
    ck_assert_uint_eq(utf8_truncate(B(deva), 6, 5), 3);
}
END_TEST

START_TEST(test_sanitize)
{
    uint8_t out[32];
    long n = utf8_sanitize(out, sizeof out, B("ok\xc3\x28!"), 5);
    ck_assert_int_eq(n, 7);
    ck_assert_mem_eq(out, "ok\xef\xbf\xbd(!", 7);
    n = utf8_sanitize(out, sizeof out, B("\xed\xa0\x80x"), 4);
    ck_assert_int_eq(n, 4);
    ck_assert_mem_eq(out, "\xef\xbf\xbdx", 4);
    n = utf8_sanitize(out, sizeof out, B("\xe0\xa4\xa8"), 3);
    ck_assert_int_eq(n, 3);
    ck_assert_mem_eq(out, "\xe0\xa4\xa8", 3);
    ck_assert_int_eq(utf8_sanitize(out, 2, B("\xff"), 1), -1);
}
END_TEST

START_TEST(test_seq_len)
{
    ck_assert_int_eq(utf8_seq_len(0x41), 1);
    ck_assert_int_eq(utf8_seq_len(0x80), 0);
    ck_assert_int_eq(utf8_seq_len(0xC0), 0);
    ck_assert_int_eq(utf8_seq_len(0xC3), 2);
    ck_assert_int_eq(utf8_seq_len(0xE2), 3);
    ck_assert_int_eq(utf8_seq_len(0xF0), 4);
    ck_assert_int_eq(utf8_seq_len(0xF8), 0);
}
END_TEST

static Suite *utf8_suite(void)
{
    Suite *s = suite_create("utf8");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 2);
    tcase_add_test(tc, test_decode_ascii_and_multibyte);
    tcase_add_test(tc, test_decode_boundaries);
    tcase_add_test(tc, test_decode_rejects_overlong);
    tcase_add_test(tc, test_decode_rejects_surrogates);
    tcase_add_test(tc, test_decode_max_code_point);
    tcase_add_test(tc, test_decode_truncated);
    tcase_add_test(tc, test_encode);
    tcase_add_test(tc, test_roundtrip);
    tcase_add_test(tc, test_strlen_and_validate);
    tcase_add_test(tc, test_offset);
    tcase_add_test(tc, test_truncate);
    tcase_add_test(tc, test_sanitize);
    tcase_add_test(tc, test_seq_len);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(utf8_suite());
    /* Fork each test so a crash is reported as an error and the rest run. */
    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_VERBOSE);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
