#include "common/buf.h"
#include "common/err.h"
#include "common/limits.h"
#include "corpus/patch.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static const char *DIFF = "diff --git a/src/leap.c b/src/leap.c\n"
                          "index 1111111..2222222 100644\n"
                          "--- a/src/leap.c\n"
                          "+++ b/src/leap.c\n"
                          "@@ -1,4 +1,4 @@\n"
                          " int is_leap(int y)\n"
                          " {\n"
                          "-    return y % 4 == 0;\n"
                          "+    return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);\n"
                          " }\n"
                          "@@ -10,2 +10,3 @@ int f(void)\n"
                          " a\n"
                          "+b\n"
                          " c\n"
                          "\\ No newline at end of file\n"
                          "diff --git a/new.txt b/new.txt\n"
                          "new file mode 100644\n"
                          "--- /dev/null\n"
                          "+++ b/new.txt\n"
                          "@@ -0,0 +1 @@\n"
                          "+hello\n";

START_TEST(test_patch_parse)
{
    patch p;
    char err[RL_ERR_MAX];
    ck_assert_int_eq(patch_parse(&p, DIFF, err), 0);
    ck_assert_uint_eq(p.nfiles, 2);
    ck_assert_str_eq(p.files[0].old_path, "src/leap.c");
    ck_assert_uint_eq(p.files[0].nhunks, 2);
    ck_assert_str_eq(p.files[0].hunks[0].old_text, "int is_leap(int y)\n{\n    return y % 4 == 0;\n}\n");
    ck_assert_ptr_nonnull(strstr(p.files[0].hunks[0].new_text, "y % 400 == 0);\n}\n"));
    ck_assert_str_eq(p.files[0].hunks[1].old_text, "a\nc");
    ck_assert_str_eq(p.files[0].hunks[1].new_text, "a\nb\nc");
    ck_assert_ptr_null(p.files[1].old_path);
    ck_assert_str_eq(p.files[1].new_path, "new.txt");
    ck_assert_str_eq(p.files[1].hunks[0].new_text, "hello\n");
    patch_dispose(&p);
}
END_TEST

START_TEST(test_patch_errors)
{
    patch p;
    char err[RL_ERR_MAX];
    ck_assert_int_eq(patch_parse(&p, "", err), RL_EPARSE);
    ck_assert_int_eq(patch_parse(&p, "--- a/x\n@@ -1 +1 @@\n", err), RL_EPARSE);
    ck_assert_int_eq(patch_parse(&p, "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n", err), RL_EPARSE);
    ck_assert_ptr_nonnull(strstr(err, "shorter"));
    ck_assert_int_eq(patch_parse(&p, "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n+c\n", err), 0);
    patch_dispose(&p);
    ck_assert_int_eq(patch_parse(&p, "--- a/x\n+++ b/x\n@@ junk @@\n", err), RL_EPARSE);
    ck_assert_ptr_nonnull(strstr(err, "line 3"));
}
END_TEST

/* A diff of nfiles files with nhunks one-line hunks each. */
static char *many(size_t nfiles, size_t nhunks)
{
    buf_t b;
    buf_init(&b, 0);
    for (size_t f = 0; f < nfiles; f++) {
        ck_assert_int_eq(buf_printf(&b, "--- a/f%zu\n+++ b/f%zu\n", f, f), 0);
        for (size_t h = 0; h < nhunks; h++)
            ck_assert_int_eq(buf_printf(&b, "@@ -%zu +%zu @@\n-a\n+b\n", h + 1, h + 1), 0);
    }
    return buf_detach(&b, NULL);
}

START_TEST(test_patch_caps)
{
    patch p;
    char err[RL_ERR_MAX];
    char *d = many(RL_PATCH_FILES_MAX, 1);
    ck_assert_int_eq(patch_parse(&p, d, err), 0);
    ck_assert_uint_eq(p.nfiles, RL_PATCH_FILES_MAX);
    patch_dispose(&p);
    free(d);
    d = many(RL_PATCH_FILES_MAX + 1, 1);
    ck_assert_int_eq(patch_parse(&p, d, err), RL_ELIMIT);
    ck_assert_ptr_nonnull(strstr(err, "more than 1024 files"));
    ck_assert_uint_eq(p.nfiles, 0);
    free(d);
    d = many(1, RL_PATCH_HUNKS_MAX);
    ck_assert_int_eq(patch_parse(&p, d, err), 0);
    ck_assert_uint_eq(p.files[0].nhunks, RL_PATCH_HUNKS_MAX);
    patch_dispose(&p);
    free(d);
    d = many(1, RL_PATCH_HUNKS_MAX + 1);
    ck_assert_int_eq(patch_parse(&p, d, err), RL_ELIMIT);
    ck_assert_ptr_nonnull(strstr(err, "more than 10000 hunks in one file"));
    free(d);
}
END_TEST

Suite *patch_suite(void)
{
    Suite *s = suite_create("patch");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_patch_parse);
    tcase_add_test(tc, test_patch_errors);
    tcase_add_test(tc, test_patch_caps);
    suite_add_tcase(s, tc);
    return s;
}
