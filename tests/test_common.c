#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/subcmd.h"
#include "common/utf8.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    buf_free(&b);
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
    buf_ht_free(&h);

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

Suite *common_suite(void)
{
    Suite *s = suite_create("common");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_buf_cap);
    tcase_add_test(tc, test_buf_head_tail);
    tcase_add_test(tc, test_fs_atomic_and_append);
    tcase_add_test(tc, test_utf8);
    tcase_add_test(tc, test_subcmd_dispatch);
    suite_add_tcase(s, tc);
    return s;
}
