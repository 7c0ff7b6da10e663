#include "common/arg.h"
#include "common/buf.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "common/str.h"
#include "common/subcmd.h"
#include "common/utf8.h"
#include "common/vec.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

START_TEST(test_buf_cap)
{
    buf_t b;
    buf_init(&b, 8);
    ck_assert_int_eq(buf_puts(&b, "12345"), 0);
    ck_assert_int_eq(buf_puts(&b, "6789"), RL_ELIMIT);
    ck_assert_str_eq(buf_str(&b), "12345");
    ck_assert_int_eq(buf_printf(&b, "%d", 678), 0);
    ck_assert_str_eq(buf_str(&b), "12345678");
    ck_assert_uint_eq(buf_append_trunc(&b, "x", 1), 1);
    buf_dispose(&b);
}
END_TEST

START_TEST(test_buf_head_tail)
{
    buf_ht_t h;
    ck_assert_int_eq(buf_ht_init(&h, 4, 3), 0);
    for (int i = 0; i < 10; i++) {
        char c = (char)('0' + i);
        buf_ht_append(&h, &c, 1);
    }
    ck_assert_uint_eq(buf_ht_cut(&h), 3);
    char *s = buf_ht_render(&h, NULL);
    ck_assert_str_eq(s, "0123\n[... 3 bytes cut ...]\n789");
    free(s);
    buf_ht_dispose(&h);

    size_t n;
    char *c = str_cut_middle("abcdefghij", 10, 20, &n);
    ck_assert_str_eq(c, "abcdefghij");
    free(c);
}
END_TEST

START_TEST(test_fs_atomic_and_append)
{
    char dir[] = "/tmp/rl-test-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[256], err[RL_ERR_MAX];
    snprintf(path, sizeof path, "%s/a/b/f.txt", dir);
    char parent[256];
    fs_dirname(parent, sizeof parent, path);
    ck_assert_int_eq(fs_mkdirs(parent, err), 0);
    ck_assert_int_eq(fs_write_atomic(path, "hello", 5, err), 0);
    ck_assert_int_eq(fs_append_record(path, "x", 1, err), 0);
    char *data;
    size_t len;
    ck_assert_int_eq(fs_read_file(&data, &len, path, 100, err), 0);
    ck_assert_str_eq(data, "hellox\n");
    free(data);
    ck_assert_int_eq(fs_read_file(&data, &len, path, 3, err), RL_ELIMIT);
    ck_assert_ptr_nonnull(strstr(err, path));
    ck_assert_int_eq(fs_read_file(&data, &len, "/nonexistent/x", 3, err), RL_ENOENT);
    /* a listing: sorted, without dot files */
    const char *more[] = {"c.txt", ".hidden", "b"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, more[i]);
        ck_assert_int_eq(fs_write_atomic(path, "", 0, err), 0);
    }
    char **names;
    size_t n;
    ck_assert_int_eq(fs_list_dir(&names, &n, dir, err), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert_str_eq(names[0], "a");
    ck_assert_str_eq(names[1], "b");
    ck_assert_str_eq(names[2], "c.txt");
    fs_names_free(names, n);
    ck_assert_int_eq(fs_list_dir(&names, &n, "/nonexistent", err), RL_ENOENT);
    ck_assert_str_eq(err, "/nonexistent: cannot open directory");
    fs_names_free(names, n);
    ck_assert_int_eq(fs_remove_tree(dir, err), 0);
    ck_assert_int_eq(access(dir, F_OK), -1);
}
END_TEST

START_TEST(test_utf8)
{
    const struct {
        const char *s;
        size_t len;
    } ok[] = {{"a", 1}, {"\xc3\xa9", 2}, {"\xe2\x82\xac", 3}, {"\xf0\x9f\x98\x80", 4}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        ck_assert_uint_eq(utf8_seq_len((const unsigned char *)ok[i].s, strlen(ok[i].s)), ok[i].len);
    /* a lone continuation, a cut sequence, overlong, a surrogate, past U+10FFFF */
    const char *bad[] = {"\x80", "\xc3", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xff"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_uint_eq(utf8_seq_len((const unsigned char *)bad[i], strlen(bad[i])), 0);
    char s[] = "ok \xc3\xa9 \xc3 x\xff\xe2\x82";
    ck_assert_uint_eq(utf8_scrub(s, strlen(s)), 4);
    ck_assert_str_eq(s, "ok \xc3\xa9 ? x???");
}
END_TEST

static int subcmd_seen_argc;
static const char *subcmd_seen_arg;

static int subcmd_fake(int argc, char **argv)
{
    subcmd_seen_argc = argc;
    subcmd_seen_arg = argc > 1 ? argv[1] : NULL;
    return 7;
}

START_TEST(test_subcmd_dispatch)
{
    static const subcmd cmds[] = {{"one", subcmd_fake, "the fake command"}};
    char prog[] = "prog", one[] = "one", x[] = "--x", nope[] = "nope", help[] = "--help";
    char *run[] = {prog, one, x};
    /* the command gets argv from its own name on, and its code comes back */
    ck_assert_int_eq(subcmd_dispatch("prog", cmds, 1, 3, run), 7);
    ck_assert_int_eq(subcmd_seen_argc, 2);
    ck_assert_str_eq(subcmd_seen_arg, "--x");
    /* no command and an unknown one are usage errors; help is not */
    char *none[] = {prog};
    char *bad[] = {prog, nope};
    char *ask[] = {prog, help};
    subcmd_seen_argc = 0;
    ck_assert_int_eq(subcmd_dispatch("prog", cmds, 1, 1, none), 2);
    ck_assert_int_eq(subcmd_dispatch("prog", cmds, 1, 2, bad), 2);
    FILE *saved = stdout;
    stdout = fopen("/dev/null", "w");
    ck_assert_ptr_nonnull(stdout);
    int rc = subcmd_dispatch("prog", cmds, 1, 2, ask);
    fclose(stdout);
    stdout = saved;
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(subcmd_seen_argc, 0); /* none of those ran the command */
}
END_TEST

START_TEST(test_clock)
{
    double ms0 = clk_ms(), s0 = clk_s();
    long long ns0 = clk_ns();
    long i0 = clk_ms_int();
    struct timespec d = {0, 20 * 1000000L};
    nanosleep(&d, NULL);
    double dms = clk_ms() - ms0, ds = clk_s() - s0;
    long long dns = clk_ns() - ns0;
    ck_assert(dms >= 19.0 && dms < 5000.0);
    ck_assert(ds >= 0.019 && ds < 5.0);
    ck_assert(dns >= 19000000LL && dns < 5000000000LL);
    ck_assert(clk_ms_int() - i0 >= 19);
    /* the wall clock in UTC, and a buffer too small for it */
    char when[32];
    ck_assert_int_eq(clk_utc(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ"), 0);
    ck_assert_uint_eq(strlen(when), 20);
    ck_assert_int_eq(when[4], '-');
    ck_assert_int_eq(when[19], 'Z');
    char y[5];
    snprintf(y, sizeof y, "%.4s", when);
    ck_assert_int_ge(atoi(y), 2024);
    char tiny[4];
    ck_assert_int_eq(clk_utc(tiny, sizeof tiny, "%Y-%m-%d"), RL_ELIMIT);
    ck_assert_str_eq(tiny, "");
}
END_TEST

START_TEST(test_str)
{
    ck_assert_int_eq(str_has_prefix("tests/x.py", "tests/"), 1);
    ck_assert_int_eq(str_has_prefix("test", "tests/"), 0);
    ck_assert_int_eq(str_has_prefix("abc", ""), 1);
    ck_assert_int_eq(str_has_suffix("a/b.c", ".c"), 1);
    ck_assert_int_eq(str_has_suffix("a/b.cc", ".c"), 0);
    ck_assert_int_eq(str_has_suffix(".c", "x.c"), 0);
    ck_assert_int_eq(str_has_suffix("abc", ""), 1);
    char b[6];
    ck_assert_int_eq(str_copy(b, sizeof b, "hello"), 0);
    ck_assert_str_eq(b, "hello");
    ck_assert_int_eq(str_copy(b, sizeof b, "hello!"), RL_ELIMIT);
    ck_assert_str_eq(b, "hello");
    ck_assert_int_eq(str_fmt(b, sizeof b, "%d-%s", 12, "ab"), 0);
    ck_assert_str_eq(b, "12-ab");
    ck_assert_int_eq(str_fmt(b, sizeof b, "%d-%s", 123, "ab"), RL_ELIMIT);
    ck_assert_str_eq(b, "123-a");
}
END_TEST

typedef struct pair {
    int a;
    double b;
} pair;

START_TEST(test_vec)
{
    vec_t v;
    vec_init(&v, sizeof(pair), 40);
    for (int i = 0; i < 40; i++) {
        pair p = {i, i * 0.5};
        ck_assert_int_eq(vec_push(&v, &p), 0);
    }
    /* past the cap: an error, nothing appended, nothing lost */
    pair extra = {99, 0};
    ck_assert_int_eq(vec_push(&v, &extra), RL_ELIMIT);
    ck_assert_uint_eq(v.len, 40);
    ck_assert_uint_le(v.alloc, 40);
    for (int i = 0; i < 40; i++) {
        ck_assert_int_eq(VEC_AT(&v, pair, i).a, i);
        ck_assert(VEC_AT(&v, pair, i).b == i * 0.5);
    }
    vec_clear(&v);
    void *slot;
    ck_assert_int_eq(vec_add(&v, &slot), 0);
    ck_assert_int_eq(((pair *)slot)->a, 0); /* zeroed, even over old data */
    ck_assert_int_eq(vec_reserve(&v, 41), RL_ELIMIT);
    size_t n;
    pair *out = vec_detach(&v, &n);
    ck_assert_uint_eq(n, 1);
    ck_assert_ptr_nonnull(out);
    free(out);
    ck_assert_ptr_null(v.data);
    ck_assert_ptr_null(vec_detach(&v, &n));
    ck_assert_uint_eq(n, 0);
    vec_dispose(&v);

    /* the default cap */
    vec_init(&v, 1, 0);
    ck_assert_uint_eq(v.max, RL_VEC_DEFAULT_MAX);
    ck_assert_int_eq(vec_reserve(&v, (size_t)RL_VEC_DEFAULT_MAX + 1), RL_ELIMIT);
    vec_dispose(&v);

    /* VEC_GROW on a struct's own array and counts */
    struct {
        long *v;
        size_t n, alloc;
    } s = {0};
    for (long i = 0; i < 100; i++) {
        ck_assert_int_eq(VEC_GROW(s.v, s.alloc, s.n + 1, 100), 0);
        s.v[s.n++] = i * i;
    }
    ck_assert_int_eq(VEC_GROW(s.v, s.alloc, s.n + 1, 100), RL_ELIMIT);
    ck_assert_uint_eq(s.alloc, 100);
    ck_assert_int_eq(s.v[99], 99 * 99);
    ck_assert_int_eq(VEC_GROW(s.v, s.alloc, SIZE_MAX / 2, SIZE_MAX), RL_ELIMIT);
    free(s.v);
}
END_TEST

START_TEST(test_arg)
{
    char err[RL_ERR_MAX];
    long l = -1;
    ck_assert_int_eq(arg_long(&l, "--n", "42", 1, 100, err), 0);
    ck_assert_int_eq(l, 42);
    ck_assert_int_eq(arg_long(&l, "--n", "-3", -5, 5, err), 0);
    ck_assert_int_eq(l, -3);
    const char *bad[] = {"", "12x", "0x10", " 7", "101", "0", "99999999999999999999999", "4.0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        l = -1;
        ck_assert_int_eq(arg_long(&l, "--max-turns", bad[i], 1, 100, err), RL_EINVAL);
        ck_assert_int_eq(l, -1);
        ck_assert_ptr_nonnull(strstr(err, "--max-turns: expected an integer 1..100"));
    }
    int n;
    ck_assert_int_eq(arg_int(&n, "--k", "7", 0, 9, err), 0);
    ck_assert_int_eq(n, 7);
    ck_assert_int_eq(arg_int(&n, "--k", "10", 0, 9, err), RL_EINVAL);
    uint64_t u;
    ck_assert_int_eq(arg_u64(&u, "--seed", "18446744073709551615", 0, UINT64_MAX, err), 0);
    ck_assert(u == UINT64_MAX);
    ck_assert_int_eq(arg_u64(&u, "--seed", "-1", 0, UINT64_MAX, err), RL_EINVAL);
    ck_assert_str_eq(err, "--seed: expected an integer 0..18446744073709551615, got '-1'");
    ck_assert_int_eq(arg_u64(&u, "--seed", "18446744073709551616", 0, UINT64_MAX, err), RL_EINVAL);
    double d;
    ck_assert_int_eq(arg_double(&d, "--top-p", "0.95", 0, 1, err), 0);
    ck_assert(d == 0.95);
    ck_assert_int_eq(arg_double(&d, "--top-p", "1.5", 0, 1, err), RL_EINVAL);
    ck_assert_int_eq(arg_double(&d, "--top-p", "nan", 0, 1, err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "--top-p: expected a number 0..1"));
}
END_TEST

Suite *common_suite(void)
{
    Suite *s = suite_create("common");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_buf_cap);
    tcase_add_test(tc, test_buf_head_tail);
    tcase_add_test(tc, test_fs_atomic_and_append);
    tcase_add_test(tc, test_utf8);
    tcase_add_test(tc, test_subcmd_dispatch);
    tcase_add_test(tc, test_clock);
    tcase_add_test(tc, test_str);
    tcase_add_test(tc, test_vec);
    tcase_add_test(tc, test_arg);
    suite_add_tcase(s, tc);
    return s;
}
