/* test_docs.c - Check suite for the documentation that can drift from the
 * code: docs/cli.md must hold every command's --help text verbatim
 * (scripts/cli-doc.sh writes it), and the README must stay a user's guide
 * (at most about 200 lines, with the set-up and test commands). */
#include "common/err.h"
#include "common/fsutil.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static const char *bin(void)
{
    const char *b = getenv("RL_BIN");
    return b && *b ? b : "bin";
}

/* Output of cmd (stdout and stderr), at most 1 MiB; returns its exit status. */
static int run_out(const char *cmd, char **out)
{
    char full[1024];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    ck_assert_ptr_nonnull(p);
    size_t cap = 1 << 20, n = 0, r;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    while (n < cap - 1 && (r = fread(buf + n, 1, cap - 1 - n, p)) > 0)
        n += r;
    buf[n] = 0;
    int st = pclose(p);
    *out = buf;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *read_doc(const char *path)
{
    char *text = NULL, err[RL_ERR_MAX];
    ck_assert_msg(fs_read_file(&text, NULL, path, 1 << 22, err) == 0, "%s", err);
    return text;
}

/* The command names listed under "commands:" in a top-level --help. */
static size_t commands(const char *help, char names[][32], size_t max)
{
    const char *p = strstr(help, "commands:\n");
    ck_assert_ptr_nonnull(p);
    p += strlen("commands:\n");
    size_t n = 0;
    while (n < max && p[0] == ' ' && p[1] == ' ' && p[2] != ' ') {
        size_t len = strcspn(p + 2, " \n");
        ck_assert_uint_lt(len, 32);
        memcpy(names[n], p + 2, len);
        names[n][len] = 0;
        n++;
        p = strchr(p, '\n');
        if (!p)
            break;
        p++;
    }
    return n;
}

START_TEST(test_cli_doc_matches_help)
{
    char *doc = read_doc("docs/cli.md");
    const char *tools[] = {"harness", "grpo"};
    size_t checked = 0;
    for (size_t t = 0; t < 2; t++) {
        char cmd[2048], *help, names[32][32];
        snprintf(cmd, sizeof cmd, "%s/%s --help", bin(), tools[t]);
        ck_assert_int_eq(run_out(cmd, &help), 0);
        ck_assert_msg(strstr(doc, help), "docs/cli.md lacks the text of `%s` (run scripts/cli-doc.sh)", cmd);
        size_t n = commands(help, names, 32);
        ck_assert_uint_ge(n, 5);
        for (size_t i = 0; i < n; i++) {
            char *sub;
            snprintf(cmd, sizeof cmd, "%s/%s %s --help", bin(), tools[t], names[i]);
            run_out(cmd, &sub);
            ck_assert_msg(strlen(sub) > 20, "`%s` printed no help", cmd);
            ck_assert_msg(strstr(doc, sub), "docs/cli.md lacks the text of `%s` (run scripts/cli-doc.sh)", cmd);
            free(sub);
            checked++;
        }
        free(help);
    }
    ck_assert_uint_ge(checked, 12);
    char cmd[2048], *help;
    snprintf(cmd, sizeof cmd, "%s/sbx --help", bin());
    ck_assert_int_eq(run_out(cmd, &help), 0);
    ck_assert_msg(strstr(doc, help), "docs/cli.md lacks the text of `%s` (run scripts/cli-doc.sh)", cmd);
    free(help);
    free(doc);
}
END_TEST

START_TEST(test_readme_is_a_guide)
{
    char *readme = read_doc("README.md");
    size_t lines = 0;
    for (const char *p = readme; *p; p++)
        lines += *p == '\n';
    ck_assert_msg(lines <= 210, "README.md has %zu lines: a user's guide fits in about 200", lines);
    ck_assert_ptr_nonnull(strstr(readme, "make test"));
    ck_assert_ptr_nonnull(strstr(readme, "make run"));
    free(readme);
}
END_TEST

Suite *docs_suite(void)
{
    Suite *s = suite_create("docs");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_cli_doc_matches_help);
    tcase_add_test(tc, test_readme_is_a_guide);
    suite_add_tcase(s, tc);
    return s;
}
