/* test_base64.c - Check tests for the base64 library (RFC 4648 vectors). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"

static const char *enc_std(const char *s)
{
    static char buf[256];
    long n = b64_encode(buf, sizeof buf, (const uint8_t *)s, strlen(s), B64_STANDARD);
    ck_assert_int_ge(n, 0);
    return buf;
}

/* Decodes and NUL-terminates; returns NULL on a decode error. */
static const char *dec(const char *s, b64_variant var)
{
    static uint8_t buf[256];
    long n = b64_decode(buf, sizeof buf - 1, s, strlen(s), var);
    if (n < 0)
        return NULL;
    buf[n] = '\0';
    return (const char *)buf;
}

START_TEST(test_encode_rfc_vectors)
{
    ck_assert_str_eq(enc_std(""), "");
    ck_assert_str_eq(enc_std("f"), "Zg==");
    ck_assert_str_eq(enc_std("fo"), "Zm8=");
    ck_assert_str_eq(enc_std("foo"), "Zm9v");
    ck_assert_str_eq(enc_std("foob"), "Zm9vYg==");
    ck_assert_str_eq(enc_std("fooba"), "Zm9vYmE=");
    ck_assert_str_eq(enc_std("foobar"), "Zm9vYmFy");
}
END_TEST

START_TEST(test_encoded_len)
{
    ck_assert_uint_eq(b64_encoded_len(0, B64_STANDARD), 0);
    ck_assert_uint_eq(b64_encoded_len(1, B64_STANDARD), 4);
    ck_assert_uint_eq(b64_encoded_len(3, B64_STANDARD), 4);
    ck_assert_uint_eq(b64_encoded_len(4, B64_STANDARD), 8);
    ck_assert_uint_eq(b64_encoded_len(1, B64_URL), 2);
    ck_assert_uint_eq(b64_encoded_len(2, B64_URL), 3);
    ck_assert_uint_eq(b64_encoded_len(6, B64_URL), 8);
    ck_assert_uint_eq(b64_decoded_max(4), 3);
    ck_assert_uint_eq(b64_decoded_max(6), 6);
}
END_TEST

START_TEST(test_encode_small_buffer)
{
    char buf[5];
    ck_assert_int_eq(b64_encode(buf, sizeof buf, (const uint8_t *)"foo", 3, B64_STANDARD), 4);
    ck_assert_int_eq(b64_encode(buf, 4, (const uint8_t *)"foo", 3, B64_STANDARD), -1);
    ck_assert_int_eq(b64_encode(buf, sizeof buf, (const uint8_t *)"foob", 4, B64_STANDARD), -1);
}
END_TEST

START_TEST(test_decode_rfc_vectors)
{
    ck_assert_str_eq(dec("", B64_STANDARD), "");
    ck_assert_str_eq(dec("Zg==", B64_STANDARD), "f");
    ck_assert_str_eq(dec("Zm8=", B64_STANDARD), "fo");
    ck_assert_str_eq(dec("Zm9v", B64_STANDARD), "foo");
    ck_assert_str_eq(dec("Zm9vYg==", B64_STANDARD), "foob");
    ck_assert_str_eq(dec("Zm9vYmE=", B64_STANDARD), "fooba");
    ck_assert_str_eq(dec("Zm9vYmFy", B64_STANDARD), "foobar");
    /* the returned lengths, not only the text */
    uint8_t out[8];
    ck_assert_int_eq(b64_decode(out, sizeof out, "Zg==", 4, B64_STANDARD), 1);
    ck_assert_int_eq(b64_decode(out, sizeof out, "Zm8=", 4, B64_STANDARD), 2);
    ck_assert_int_eq(b64_decode(out, sizeof out, "Zm9vYmE=", 8, B64_STANDARD), 5);
}
END_TEST

START_TEST(test_decode_text)
{
    ck_assert_str_eq(dec("aGVsbG8gd29ybGQ=", B64_STANDARD), "hello world");
    ck_assert_str_eq(dec("eno=", B64_STANDARD), "zz");
    ck_assert_str_eq(dec("ZnV6enk=", B64_STANDARD), "fuzzy");
    ck_assert_str_eq(dec("QmFzZTY0IGlzIGZ1bg==", B64_STANDARD), "Base64 is fun");
    ck_assert_str_eq(dec("VGhlIHF1aWNrIGJyb3duIGZveA==", B64_STANDARD), "The quick brown fox");
}
END_TEST

START_TEST(test_decode_rejects_garbage)
{
    ck_assert_ptr_null(dec("Zm9v!", B64_STANDARD));
    ck_assert_ptr_null(dec("Z", B64_STANDARD));
    ck_assert_ptr_null(dec("Zg", B64_STANDARD));   /* standard needs padding */
    ck_assert_ptr_null(dec("Zg=", B64_STANDARD));
    ck_assert_ptr_null(dec("Zg===", B64_STANDARD));
    ck_assert_ptr_null(dec("=Zg=", B64_STANDARD));
    ck_assert_ptr_null(dec("Zg==Zg==", B64_STANDARD));
    ck_assert_ptr_null(dec("Zm9v-_", B64_STANDARD));
}
END_TEST

START_TEST(test_decode_small_buffer)
{
    uint8_t buf[4];
    ck_assert_int_eq(b64_decode(buf, 3, "Zm9v", 4, B64_STANDARD), 3);
    ck_assert_int_eq(b64_decode(buf, 2, "Zm9v", 4, B64_STANDARD), -1);
    ck_assert_int_eq(b64_decode(buf, 1, "Zm8=", 4, B64_STANDARD), -1);
}
END_TEST

START_TEST(test_url_variant)
{
    const uint8_t bytes[] = { 0xfb, 0xff, 0xbf };
    char buf[16];
    ck_assert_int_eq(b64_encode(buf, sizeof buf, bytes, 3, B64_STANDARD), 4);
    ck_assert_str_eq(buf, "+/+/");
    ck_assert_int_eq(b64_encode(buf, sizeof buf, bytes, 3, B64_URL), 4);
    ck_assert_str_eq(buf, "-_-_");
    ck_assert_int_eq(b64_encode(buf, sizeof buf, bytes, 2, B64_URL), 3);
    ck_assert_str_eq(buf, "-_8");
    uint8_t out[4];
    ck_assert_int_eq(b64_decode(out, sizeof out, "-_-_", 4, B64_URL), 3);
    ck_assert_mem_eq(out, bytes, 3);
    ck_assert_int_eq(b64_decode(out, sizeof out, "-_8", 3, B64_URL), 2);
    ck_assert_int_eq(b64_decode(out, sizeof out, "-_8=", 4, B64_URL), 2);
    ck_assert_mem_eq(out, bytes, 2);
    ck_assert_int_eq(b64_decode(out, sizeof out, "+/+/", 4, B64_URL), -1);
}
END_TEST

START_TEST(test_roundtrip_all_bytes)
{
    uint8_t in[256], back[256];
    char enc[400];
    for (int i = 0; i < 256; i++)
        in[i] = (uint8_t)i;
    for (size_t n = 0; n <= 256; n += 37) {
        for (int var = B64_STANDARD; var <= B64_URL; var++) {
            long e = b64_encode(enc, sizeof enc, in, n, (b64_variant)var);
            ck_assert_int_eq(e, (long)b64_encoded_len(n, (b64_variant)var));
            long d = b64_decode(back, sizeof back, enc, (size_t)e, (b64_variant)var);
            ck_assert_msg(d == (long)n, "n=%zu variant=%d: decoded %ld bytes", n, var, d);
            ck_assert_mem_eq(back, in, n);
        }
    }
}
END_TEST

START_TEST(test_wrap_and_decode_lines)
{
    char wrapped[64];
    const char *enc = "VGhlIHF1aWNrIGJyb3duIGZveA==";
    ck_assert_int_eq(b64_wrap(wrapped, sizeof wrapped, enc, 12), 32);
    ck_assert_str_eq(wrapped, "VGhlIHF1aWNr\r\nIGJyb3duIGZv\r\neA==");
    ck_assert_str_eq(dec(wrapped, B64_STANDARD), "The quick brown fox");
    ck_assert_int_eq(b64_wrap(wrapped, 8, enc, 12), -1);
    ck_assert_int_eq(b64_wrap(wrapped, sizeof wrapped, enc, 0), -1);
}
END_TEST

START_TEST(test_alphabet)
{
    ck_assert_int_eq(b64_value('A', B64_STANDARD), 0);
    ck_assert_int_eq(b64_value('/', B64_STANDARD), 63);
    ck_assert_int_eq(b64_value('_', B64_URL), 63);
    ck_assert_int_eq(b64_value('=', B64_STANDARD), -1);
    ck_assert_int_eq(b64_char(0, B64_URL), 'A');
    ck_assert_int_eq(b64_char(62, B64_URL), '-');
    ck_assert_int_eq(b64_char(62, B64_STANDARD), '+');
}
END_TEST

static Suite *base64_suite(void)
{
    Suite *s = suite_create("base64");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 2);
    tcase_add_test(tc, test_encode_rfc_vectors);
    tcase_add_test(tc, test_encoded_len);
    tcase_add_test(tc, test_encode_small_buffer);
    tcase_add_test(tc, test_decode_rfc_vectors);
    tcase_add_test(tc, test_decode_text);
    tcase_add_test(tc, test_decode_rejects_garbage);
    tcase_add_test(tc, test_decode_small_buffer);
    tcase_add_test(tc, test_url_variant);
    tcase_add_test(tc, test_roundtrip_all_bytes);
    tcase_add_test(tc, test_wrap_and_decode_lines);
    tcase_add_test(tc, test_alphabet);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(base64_suite());
    /* Fork each test so a crash is reported as an error and the rest run. */
    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_VERBOSE);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
