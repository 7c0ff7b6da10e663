/* test_mutate.c - the bug generator's pure parts: the mutation engine
 * (determinism, each kind on fixtures, comments and strings untouched,
 * every mutant of the fixtures still compiles) and the diff writer (exact
 * output, and `git apply` accepting it in a temp git repository). */
#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "common/rng.h"
#include "corpus/diff.h"
#include "corpus/mutate.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define DATA "tests/data/mutate/"

static char *slurp(const char *path, size_t *len)
{
    char *s, err[RL_ERR_MAX];
    ck_assert_msg(fs_read_file(&s, len, path, 1 << 20, err) == 0, "%s", err);
    return s;
}

static void enumerate(mut_list *l, const char *text, size_t len, mut_lang lang, uint64_t seed)
{
    char err[RL_ERR_MAX] = "";
    ck_assert_msg(mut_enumerate(l, text, len, lang, seed, err) == 0, "%s", err);
}

/* The site of that kind on that line whose replacement is repl, or NULL. */
static const mut_site *find_site(const mut_list *l, mut_kind k, int line, const char *repl)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].kind == k && l->v[i].line == line && (!repl || !strcmp(l->v[i].repl, repl)))
            return &l->v[i];
    return NULL;
}

static size_t count_kind_line(const mut_list *l, mut_kind k, int line)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += l->v[i].kind == k && l->v[i].line == line;
    return n;
}

/* The mutant's text (caller frees). */
static char *mutant(const char *text, size_t len, const mut_site *s)
{
    char *out, err[RL_ERR_MAX];
    ck_assert_msg(mut_apply(&out, NULL, text, len, s, err) == 0, "%s", err);
    return out;
}

/* ---- names ---------------------------------------------------------------- */

START_TEST(test_paths_and_names)
{
    ck_assert_int_eq(mut_lang_of_path("src/date.c"), MUT_LANG_C);
    ck_assert_int_eq(mut_lang_of_path("include/date.h"), MUT_LANG_C);
    ck_assert_int_eq(mut_lang_of_path("pkg/dates.py"), MUT_LANG_PY);
    ck_assert_int_eq(mut_lang_of_path("Makefile"), MUT_LANG_NONE);
    ck_assert_int_eq(mut_lang_of_path("notes.cc"), MUT_LANG_NONE);

    const char *tests[] = {"tests/test_date.c", "tests/helpers.h", "pkg/tests/data.py", "test/x.c",
                           "test_dates.py", "src/dates_test.py", "src/date_test.c", "conftest.py",
                           "pkg/conftest.py", "test_main.c"};
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
        ck_assert_msg(mut_is_test_path(tests[i]), "%s should be a test path", tests[i]);
    const char *code[] = {"src/date.c", "dates.py", "src/testing.c", "contest.py", "latest/x.c",
                          "src/attest_test_helper.py", "tests.py", "mytests/x.c"};
    for (size_t i = 0; i < sizeof code / sizeof code[0]; i++)
        ck_assert_msg(!mut_is_test_path(code[i]), "%s should not be a test path", code[i]);

    for (int k = 0; k < MUT_KIND_COUNT; k++)
        ck_assert_int_eq(mut_kind_from_name(mut_kind_name((mut_kind)k)), k);
    ck_assert_int_eq(mut_kind_from_name("nope"), -1);
}
END_TEST

/* ---- determinism --------------------------------------------------------------- */

static int site_cmp(const void *a, const void *b)
{
    const mut_site *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return strcmp(x->repl, y->repl);
}

START_TEST(test_deterministic)
{
    size_t len;
    char *src = slurp(DATA "sample.c", &len);
    mut_list a, b, c;
    enumerate(&a, src, len, MUT_LANG_C, 1);
    enumerate(&b, src, len, MUT_LANG_C, 1);
    enumerate(&c, src, len, MUT_LANG_C, 2);
    ck_assert_uint_gt(a.n, 100);
    ck_assert_uint_eq(a.n, b.n);
    ck_assert_uint_eq(a.n, c.n);
    size_t same_pos = 0;
    for (size_t i = 0; i < a.n; i++) {
        ck_assert_int_eq(a.v[i].kind, b.v[i].kind);
        ck_assert_uint_eq(a.v[i].start, b.v[i].start);
        ck_assert_uint_eq(a.v[i].end, b.v[i].end);
        ck_assert_str_eq(a.v[i].repl, b.v[i].repl);
        ck_assert_str_eq(a.v[i].desc, b.v[i].desc);
        same_pos += a.v[i].start == c.v[i].start && !strcmp(a.v[i].repl, c.v[i].repl);
    }
    /* Another seed: another order ... */
    ck_assert_uint_lt(same_pos, a.n / 2);
    /* ... of the same sites (wrong_return may pick another variable). */
    qsort(a.v, a.n, sizeof *a.v, site_cmp);
    qsort(c.v, c.n, sizeof *c.v, site_cmp);
    for (size_t i = 0; i < a.n; i++) {
        ck_assert_uint_eq(a.v[i].start, c.v[i].start);
        ck_assert_int_eq(a.v[i].kind, c.v[i].kind);
        if (a.v[i].kind != MUT_WRONG_RETURN)
            ck_assert_str_eq(a.v[i].repl, c.v[i].repl);
    }
    /* The first sites of the order cover many kinds (round-robin). */
    int seen[MUT_KIND_COUNT] = {0}, kinds = 0;
    for (size_t i = 0; i < MUT_KIND_OPS && i < b.n; i++)
        kinds += !seen[b.v[i].kind]++;
    ck_assert_int_eq(kinds, MUT_KIND_OPS);
    /* mut_enumerate lists the operator kinds, in the order the ops mask
     * gives; all kinds add the rewrites and keep the ops sites. */
    mut_list o, all;
    char err[RL_ERR_MAX];
    ck_assert_int_eq(mut_enumerate_kinds(&o, src, len, MUT_LANG_C, 1, MUT_MASK_OPS, err), 0);
    ck_assert_uint_eq(o.n, b.n);
    for (size_t i = 0; i < o.n; i++) {
        ck_assert_uint_eq(o.v[i].start, b.v[i].start);
        ck_assert_str_eq(o.v[i].repl, b.v[i].repl);
    }
    ck_assert_int_eq(mut_enumerate_kinds(&all, src, len, MUT_LANG_C, 1, MUT_MASK_ALL, err), 0);
    size_t rewrites = 0;
    for (size_t i = 0; i < all.n; i++)
        rewrites += all.v[i].kind >= MUT_KIND_OPS;
    ck_assert_uint_gt(rewrites, 0);
    ck_assert_uint_eq(all.n, o.n + rewrites);
    mut_list_dispose(&all);
    ck_assert_int_eq(mut_enumerate_kinds(&all, src, len, MUT_LANG_C, 1, 0, err), RL_EINVAL);
    ck_assert_uint_eq(all.n, 0);
    mut_list_dispose(&o);
    mut_list_dispose(&a);
    mut_list_dispose(&b);
    mut_list_dispose(&c);
    free(src);
}
END_TEST

/* ---- each kind, C ------------------------------------------------------------------- */

START_TEST(test_kinds_c)
{
    size_t len;
    char *src = slurp(DATA "sample.c", &len);
    mut_list l;
    enumerate(&l, src, len, MUT_LANG_C, 7);
    const mut_site *s;

    ck_assert_ptr_nonnull(s = find_site(&l, MUT_FLIP_CMP, 24, "<="));
    ck_assert_str_eq(s->func, "days_in_month");
    ck_assert_str_eq(s->desc, "flip_cmp: '<' -> '<=' in days_in_month() at line 24");
    char *m = mutant(src, len, s);
    ck_assert_ptr_nonnull(strstr(m, "    if (m <= 1 || m > 12)\n"));
    free(m);
    ck_assert_ptr_nonnull(find_site(&l, MUT_FLIP_CMP, 15, "!="));
    ck_assert_ptr_nonnull(find_site(&l, MUT_FLIP_BOOL, 24, "&&"));
    ck_assert_ptr_nonnull(find_site(&l, MUT_FLIP_BOOL, 26, "||"));

    /* Arithmetic: '*' of a product, not of pointers or dereferences. */
    ck_assert_ptr_nonnull(find_site(&l, MUT_ARITH, 37, "/"));
    ck_assert_ptr_nonnull(find_site(&l, MUT_ARITH, 79, "/"));
    ck_assert_ptr_nonnull(find_site(&l, MUT_ARITH, 61, "-="));
    ck_assert_uint_eq(count_kind_line(&l, MUT_ARITH, 39), 0); /* *out = v; */
    ck_assert_uint_eq(count_kind_line(&l, MUT_ARITH, 80), 0); /* unsigned char *p = (unsigned char *)&r */
    ck_assert_uint_eq(count_kind_line(&l, MUT_ARITH, 43), 0); /* const char *text, int *y */
    ck_assert_uint_eq(count_kind_line(&l, MUT_ARITH, 28), 1); /* DAYS[m - 1] */

    /* Constants: in code and #define, not #include nor an array size. */
    ck_assert_ptr_nonnull(find_site(&l, MUT_CONST, 15, "401"));
    ck_assert_ptr_nonnull(find_site(&l, MUT_CONST, 15, "399"));
    ck_assert_ptr_nonnull(find_site(&l, MUT_CONST, 7, "10000"));
    ck_assert_ptr_nonnull(find_site(&l, MUT_CONST, 10, "29"));          /* February in the table */
    ck_assert_ptr_null(find_site(&l, MUT_CONST, 10, "13"));             /* DAYS[12] */
    ck_assert_ptr_null(find_site(&l, MUT_CONST, 8, NULL));              /* function-like macro */
    ck_assert_ptr_null(find_site(&l, MUT_CONST, 33, "-1"));             /* 0 has no -1 site */

    ck_assert_ptr_nonnull(s = find_site(&l, MUT_LOOP_BOUND, 34, "n - 1"));
    m = mutant(src, len, s);
    ck_assert_ptr_nonnull(strstr(m, "for (size_t i = 0; i < n - 1; i++)"));
    free(m);

    ck_assert_ptr_nonnull(find_site(&l, MUT_SWAP_CMP, 71, "best > other"));
    ck_assert_ptr_nonnull(find_site(&l, MUT_SWAP_CMP, 24, "1 < m"));
    ck_assert_ptr_null(find_site(&l, MUT_SWAP_CMP, 15, NULL)); /* '==' is symmetric */
    ck_assert_ptr_nonnull(find_site(&l, MUT_SWAP_ARGS, 61, "month, y"));
    ck_assert_ptr_null(find_site(&l, MUT_SWAP_ARGS, 22, NULL)); /* a definition, not a call */

    ck_assert_ptr_nonnull(find_site(&l, MUT_NEGATE_COND, 15, "!(y % 400 == 0)"));
    ck_assert_ptr_nonnull(find_site(&l, MUT_NEGATE_COND, 60, "!(month < m)"));
    ck_assert_ptr_nonnull(find_site(&l, MUT_DROP_COND, 24, "m < 1"));
    ck_assert_ptr_nonnull(find_site(&l, MUT_DROP_COND, 24, "m > 12"));
    ck_assert_ptr_null(find_site(&l, MUT_DROP_COND, 47, NULL)); /* three clauses */

    ck_assert_ptr_nonnull(s = find_site(&l, MUT_DROP_STMT, 62, ""));
    m = mutant(src, len, s);
    ck_assert_ptr_null(strstr(m, "month++;"));
    ck_assert_ptr_nonnull(strstr(m, "        total += days_in_month(y, month);\n    }\n"));
    free(m);
    ck_assert_ptr_null(find_site(&l, MUT_DROP_STMT, 16, NULL)); /* return, body of an if */
    ck_assert_ptr_null(find_site(&l, MUT_DROP_STMT, 33, NULL)); /* declaration */
    ck_assert_ptr_nonnull(find_site(&l, MUT_DROP_STMT, 72, "")); /* best = other; in braces */

    /* Wrong return: another int variable in scope. */
    ck_assert_ptr_nonnull(s = find_site(&l, MUT_WRONG_RETURN, 74, NULL));
    ck_assert_msg(!strcmp(s->repl, "a") || !strcmp(s->repl, "b") || !strcmp(s->repl, "other"), "%s", s->repl);
    ck_assert_ptr_nonnull(s = find_site(&l, MUT_WRONG_RETURN, 64, NULL));
    ck_assert_msg(strchr("ymd", s->repl[0]) && (s->repl[1] == '\0' || !strcmp(s->repl, "month")), "%s", s->repl);
    ck_assert_ptr_null(find_site(&l, MUT_WRONG_RETURN, 82, NULL)); /* an expression */

    /* Nothing inside comments or strings. */
    const char *holes[] = {"/* returns 1 when y < 0 || y > 9999 is false and ... */",
                           "\"a < b\"", "/* \"a < b\" in a string */", "#include <stdio.h>"};
    for (size_t h = 0; h < 4; h++) {
        size_t hs = (size_t)(strstr(src, holes[h]) - src), he = hs + strlen(holes[h]);
        for (size_t i = 0; i < l.n; i++)
            ck_assert_msg(l.v[i].end <= hs || l.v[i].start >= he || (l.v[i].start <= hs && l.v[i].end >= he),
                          "site %s touches %s", l.v[i].desc, holes[h]);
    }
    /* Every operator kind occurs. */
    for (int k = 0; k < MUT_KIND_OPS; k++) {
        size_t n = 0;
        for (size_t i = 0; i < l.n; i++)
            n += l.v[i].kind == (mut_kind)k;
        ck_assert_msg(n > 0, "no %s site", mut_kind_name((mut_kind)k));
    }
    mut_list_dispose(&l);
    free(src);
}
END_TEST

/* ---- each kind, Python ---------------------------------------------------------------- */

START_TEST(test_kinds_py)
{
    size_t len;
    char *src = slurp(DATA "sample.py", &len);
    mut_list l;
    enumerate(&l, src, len, MUT_LANG_PY, 7);
    const mut_site *s;
    ck_assert_ptr_nonnull(find_site(&l, MUT_FLIP_CMP, 16, "<="));
    ck_assert_ptr_nonnull(find_site(&l, MUT_FLIP_BOOL, 12, "or"));
    ck_assert_ptr_null(find_site(&l, MUT_FLIP_BOOL, 11, NULL)); /* docstring */
    ck_assert_ptr_nonnull(find_site(&l, MUT_ARITH, 12, "//"));
    ck_assert_ptr_null(find_site(&l, MUT_ARITH, 26, NULL));     /* "..." % text */
    ck_assert_ptr_nonnull(find_site(&l, MUT_ARITH, 36, "-="));
    ck_assert_ptr_nonnull(find_site(&l, MUT_CONST, 6, "29"));
    ck_assert_ptr_null(find_site(&l, MUT_CONST, 7, NULL));      /* inside r"..." */
    ck_assert_ptr_nonnull(s = find_site(&l, MUT_LOOP_BOUND, 35, "m - 1"));
    char *m = mutant(src, len, s);
    ck_assert_ptr_nonnull(strstr(m, "    for month in range(1, m - 1):\n"));
    free(m);
    ck_assert_ptr_null(find_site(&l, MUT_LOOP_BOUND, 63, NULL)); /* range(12): a constant */
    ck_assert_ptr_nonnull(find_site(&l, MUT_SWAP_CMP, 51, "width < len(out)"));
    ck_assert_ptr_nonnull(find_site(&l, MUT_SWAP_ARGS, 36, "month, y"));
    ck_assert_ptr_null(find_site(&l, MUT_SWAP_ARGS, 49, NULL)); /* def pad(...) */
    ck_assert_ptr_nonnull(s = find_site(&l, MUT_NEGATE_COND, 44, "not (result > high)"));
    ck_assert_str_eq(s->func, "clamp");
    ck_assert_ptr_nonnull(find_site(&l, MUT_DROP_COND, 16, "m < 1"));
    ck_assert_ptr_nonnull(s = find_site(&l, MUT_DROP_STMT, 52, "pass"));
    m = mutant(src, len, s);
    ck_assert_ptr_nonnull(strstr(m, "    while len(out) < width:\n        pass\n    return out\n"));
    free(m);
    ck_assert_ptr_null(find_site(&l, MUT_DROP_STMT, 11, NULL)); /* docstring */
    ck_assert_ptr_null(find_site(&l, MUT_DROP_STMT, 6, NULL));  /* file level */
    ck_assert_ptr_nonnull(s = find_site(&l, MUT_WRONG_RETURN, 46, NULL));
    ck_assert_msg(!strcmp(s->repl, "value") || !strcmp(s->repl, "low") || !strcmp(s->repl, "high"), "%s",
                  s->repl);
    ck_assert_str_eq(find_site(&l, MUT_DROP_STMT, 58, NULL)->func, "__init__");
    for (int k = 0; k < MUT_KIND_OPS; k++) {
        size_t n = 0;
        for (size_t i = 0; i < l.n; i++)
            n += l.v[i].kind == (mut_kind)k;
        ck_assert_msg(n > 0, "no %s site", mut_kind_name((mut_kind)k));
    }
    mut_list_dispose(&l);
    free(src);
}
END_TEST

/* ---- function-level rewrites ------------------------------------------------------ */

/* The only site of kind k on line `line` of text, applied: its text. */
static char *rewrite(const char *text, mut_lang lang, mut_kind k, int line)
{
    mut_list l;
    char err[RL_ERR_MAX];
    ck_assert_int_eq(mut_enumerate_kinds(&l, text, strlen(text), lang, 5, 1u << k, err), 0);
    ck_assert_msg(count_kind_line(&l, k, line) == 1, "%zu %s sites on line %d", count_kind_line(&l, k, line),
                  mut_kind_name(k), line);
    for (size_t i = 0; i < l.n; i++)
        ck_assert_int_eq(l.v[i].kind, k);
    char *m = mutant(text, strlen(text), find_site(&l, k, line, NULL));
    mut_list_dispose(&l);
    return m;
}

/* Lines holding a site of kind k, as a bit set (lines 1-63). */
static unsigned long long site_lines(const char *text, mut_lang lang, mut_kind k)
{
    mut_list l;
    char err[RL_ERR_MAX];
    ck_assert_int_eq(mut_enumerate_kinds(&l, text, strlen(text), lang, 5, MUT_MASK_ALL, err), 0);
    unsigned long long set = 0;
    for (size_t i = 0; i < l.n; i++)
        if (l.v[i].kind == k && l.v[i].line < 64)
            set |= 1ull << l.v[i].line;
    mut_list_dispose(&l);
    return set;
}

#define L_(n) (1ull << (n))

/* Every rewrite kind has a site in the fixture (so that the mutants-compile
 * checks cover them all). */
static void fixture_has_rewrites(const char *fixture, mut_lang lang)
{
    size_t len;
    char *src = slurp(fixture, &len), err[RL_ERR_MAX];
    mut_list l;
    ck_assert_int_eq(mut_enumerate_kinds(&l, src, len, lang, 3, MUT_MASK_REWRITES, err), 0);
    for (int k = MUT_KIND_OPS; k < MUT_KIND_COUNT; k++) {
        size_t n = 0;
        for (size_t i = 0; i < l.n; i++)
            n += l.v[i].kind == (mut_kind)k;
        ck_assert_msg(n > 0, "%s: no %s site", fixture, mut_kind_name((mut_kind)k));
    }
    mut_list_dispose(&l);
    free(src);
}

static const char C_LOOP[] =
    "int find(const int *v, int n, int x)\n"      /* 1 */
    "{\n"                                         /* 2 */
    "    int i, seen = 0;\n"                      /* 3 */
    "    if (n <= 0)\n"                           /* 4 */
    "        return -1;\n"                        /* 5 */
    "    for (i = 0; i < n; i++) {\n"             /* 6 */
    "        seen++;\n"                           /* 7 */
    "        if (v[i] == x)\n"                    /* 8 */
    "            break;\n"                        /* 9 */
    "    }\n"                                     /* 10 */
    "    if (!v) { return -2; }\n"                /* 11 */
    "    if (seen > n) { seen = n; return 0; }\n" /* 12 */
    "    if (x) return 1; else x = 2;\n"          /* 13 */
    "    x = seen;\n"                             /* 14 */
    "    seen = x + 1;\n"                         /* 15 */
    "    g(n);\n"                                 /* 16 */
    "    return seen;\n"                          /* 17 */
    "}\n"                                         /* 18 */
    "int one(int a)\n"                            /* 19 */
    "{\n"                                         /* 20 */
    "    return a + 1;\n"                         /* 21 */
    "}\n";

static const char C_BRANCH[] =
    "#include <stddef.h>\n"                       /* 1 */
    "const char *sign(int x, int *count)\n"       /* 2 */
    "{\n"                                         /* 3 */
    "    if (x > 0) {\n"                          /* 4 */
    "        *count += 1;\n"                      /* 5 */
    "        return \"pos\";\n"                   /* 6 */
    "    } else if (x < 0) {\n"                   /* 7 */
    "        return \"neg\";\n"                   /* 8 */
    "    } else {\n"                              /* 9 */
    "        *count = 0;\n"                       /* 10 */
    "    }\n"                                     /* 11 */
    "    if (x == 0) {\n"                         /* 12 */
    "        return NULL;\n"                      /* 13 */
    "    } else {\n"                              /* 14 */
    "        return \"zero\";\n"                  /* 15 */
    "    }\n"                                     /* 16 */
    "}\n"                                         /* 17 */
    "struct pt { int x; };\n"                     /* 18 */
    "struct pt mk(int x)\n"                       /* 19 */
    "{\n"                                         /* 20 */
    "    struct pt p = {x};\n"                    /* 21 */
    "    if (x) return p;\n"                      /* 22 */
    "    return p;\n"                             /* 23 */
    "}\n";

START_TEST(test_rewrites_c)
{
    /* drop_guard: the whole if with its lone exit, braced or not */
    char *m = rewrite(C_LOOP, MUT_LANG_C, MUT_DROP_GUARD, 4);
    ck_assert_ptr_nonnull(strstr(m, "    int i, seen = 0;\n    for (i = 0;"));
    ck_assert_uint_eq(strlen(m), strlen(C_LOOP) - strlen("    if (n <= 0)\n        return -1;\n"));
    free(m);
    m = rewrite(C_LOOP, MUT_LANG_C, MUT_DROP_GUARD, 11);
    ck_assert_ptr_nonnull(strstr(m, "    }\n    if (seen > n)"));
    free(m);
    /* not: more than an exit in the body (12), followed by else (13) */
    ck_assert_uint_eq(site_lines(C_LOOP, MUT_LANG_C, MUT_DROP_GUARD), L_(4) | L_(8) | L_(11));

    /* move_break: the loop's exit goes above the statement before it */
    m = rewrite(C_LOOP, MUT_LANG_C, MUT_MOVE_BREAK, 7);
    ck_assert_ptr_nonnull(strstr(m, "i++) {\n        if (v[i] == x)\n            break;\n        seen++;\n    }\n"));
    ck_assert_uint_eq(strlen(m), strlen(C_LOOP));
    free(m);
    ck_assert_uint_eq(site_lines(C_LOOP, MUT_LANG_C, MUT_MOVE_BREAK), L_(7));

    /* swap_stmts: adjacent statements sharing a name; not g(n) after them */
    m = rewrite(C_LOOP, MUT_LANG_C, MUT_SWAP_STMTS, 14);
    ck_assert_ptr_nonnull(strstr(m, "    seen = x + 1;\n    x = seen;\n    g(n);\n"));
    free(m);
    ck_assert_uint_eq(site_lines(C_LOOP, MUT_LANG_C, MUT_SWAP_STMTS), L_(14));

    /* default_return: 0 for an int on every return of a function with
     * several; not one(), whose return is its only one */
    m = rewrite(C_LOOP, MUT_LANG_C, MUT_DEFAULT_RETURN, 17);
    ck_assert_ptr_nonnull(strstr(m, "    g(n);\n    return 0;\n}\n"));
    free(m);
    ck_assert_uint_eq(site_lines(C_LOOP, MUT_LANG_C, MUT_DEFAULT_RETURN), L_(5) | L_(11) | L_(13) | L_(17));
    /* NULL for a pointer (the source knows NULL); none for a struct */
    m = rewrite(C_BRANCH, MUT_LANG_C, MUT_DEFAULT_RETURN, 6);
    ck_assert_ptr_nonnull(strstr(m, "        *count += 1;\n        return NULL;\n"));
    free(m);
    ck_assert_uint_eq(site_lines(C_BRANCH, MUT_LANG_C, MUT_DEFAULT_RETURN), L_(6) | L_(8) | L_(15));

    /* swap_branches: the bodies trade places; not an if with else-if */
    m = rewrite(C_BRANCH, MUT_LANG_C, MUT_SWAP_BRANCHES, 12);
    ck_assert_ptr_nonnull(strstr(m, "    if (x == 0) {\n        return \"zero\";\n    } else {\n        return NULL;\n    }\n}\n"));
    free(m);
    ck_assert_uint_eq(site_lines(C_BRANCH, MUT_LANG_C, MUT_SWAP_BRANCHES), L_(12));

    /* drop_elif: the whole else-if branch */
    m = rewrite(C_BRANCH, MUT_LANG_C, MUT_DROP_ELIF, 7);
    ck_assert_ptr_nonnull(strstr(m, "        return \"pos\";\n    } else {\n        *count = 0;\n    }\n"));
    ck_assert_ptr_null(strstr(m, "neg"));
    free(m);
    ck_assert_uint_eq(site_lines(C_BRANCH, MUT_LANG_C, MUT_DROP_ELIF), L_(7));
    fixture_has_rewrites(DATA "sample.c", MUT_LANG_C);
}
END_TEST

static const char PY_SRC[] =
    "def classify(x, items):\n"                   /* 1 */
    "    if x is None:\n"                         /* 2 */
    "        return None\n"                       /* 3 */
    "    total = 0\n"                             /* 4 */
    "    start = total\n"                         /* 5 */
    "    for item in items:\n"                    /* 6 */
    "        total += item\n"                     /* 7 */
    "        if total > x:\n"                     /* 8 */
    "            break\n"                         /* 9 */
    "    if total > 10:\n"                        /* 10 */
    "        label = \"big\"\n"                   /* 11 */
    "    elif total > 5:\n"                       /* 12 */
    "        label = \"medium\"\n"                /* 13 */
    "    else:\n"                                 /* 14 */
    "        label = \"small\"\n"                 /* 15 */
    "    if start:\n"                             /* 16 */
    "        return label\n"                      /* 17 */
    "    else:\n"                                 /* 18 */
    "        return total > 3\n"                  /* 19 */
    "\n"                                          /* 20 */
    "\n"                                          /* 21 */
    "class Box:\n"                                /* 22 */
    "    def __init__(self, a):\n"                /* 23 */
    "        self.a = a\n"                        /* 24 */
    "        self.b = 2\n"                        /* 25 */
    "        if a: raise ValueError(a)\n"         /* 26 */
    "        self.c = 3\n"                        /* 27 */
    "\n"                                          /* 28 */
    "    def get(self):\n"                        /* 29 */
    "        return self.a\n";                    /* 30 */

START_TEST(test_rewrites_py)
{
    /* drop_guard: a guard with a statement after it in its block; not the
     * loop's (its body would be left empty) */
    char *m = rewrite(PY_SRC, MUT_LANG_PY, MUT_DROP_GUARD, 2);
    ck_assert_ptr_nonnull(strstr(m, "def classify(x, items):\n    total = 0\n"));
    free(m);
    m = rewrite(PY_SRC, MUT_LANG_PY, MUT_DROP_GUARD, 26);
    ck_assert_ptr_nonnull(strstr(m, "        self.b = 2\n        self.c = 3\n"));
    free(m);
    ck_assert_uint_eq(site_lines(PY_SRC, MUT_LANG_PY, MUT_DROP_GUARD), L_(2) | L_(26));

    m = rewrite(PY_SRC, MUT_LANG_PY, MUT_MOVE_BREAK, 7);
    ck_assert_ptr_nonnull(strstr(m, "    for item in items:\n        if total > x:\n            break\n"
                                    "        total += item\n    if total > 10:\n"));
    free(m);
    ck_assert_uint_eq(site_lines(PY_SRC, MUT_LANG_PY, MUT_MOVE_BREAK), L_(7));

    /* swap_stmts: names shared; self alone does not count (24, 25) */
    m = rewrite(PY_SRC, MUT_LANG_PY, MUT_SWAP_STMTS, 4);
    ck_assert_ptr_nonnull(strstr(m, "        return None\n    start = total\n    total = 0\n    for item"));
    free(m);
    ck_assert_uint_eq(site_lines(PY_SRC, MUT_LANG_PY, MUT_SWAP_STMTS), L_(4));

    /* default_return: None, or False for a truth value; not get() (one return) */
    m = rewrite(PY_SRC, MUT_LANG_PY, MUT_DEFAULT_RETURN, 19);
    ck_assert_ptr_nonnull(strstr(m, "    else:\n        return False\n\n"));
    free(m);
    m = rewrite(PY_SRC, MUT_LANG_PY, MUT_DEFAULT_RETURN, 17);
    ck_assert_ptr_nonnull(strstr(m, "    if start:\n        return None\n"));
    free(m);
    ck_assert_uint_eq(site_lines(PY_SRC, MUT_LANG_PY, MUT_DEFAULT_RETURN), L_(17) | L_(19));

    /* swap_branches (the site starts at the first body's first line): not
     * the if with an elif (10) */
    m = rewrite(PY_SRC, MUT_LANG_PY, MUT_SWAP_BRANCHES, 17);
    ck_assert_ptr_nonnull(strstr(m, "    if start:\n        return total > 3\n    else:\n        return label\n\n\nclass"));
    free(m);
    ck_assert_uint_eq(site_lines(PY_SRC, MUT_LANG_PY, MUT_SWAP_BRANCHES), L_(17));

    m = rewrite(PY_SRC, MUT_LANG_PY, MUT_DROP_ELIF, 12);
    ck_assert_ptr_nonnull(strstr(m, "        label = \"big\"\n    else:\n        label = \"small\"\n"));
    free(m);
    ck_assert_uint_eq(site_lines(PY_SRC, MUT_LANG_PY, MUT_DROP_ELIF), L_(12));
    fixture_has_rewrites(DATA "sample.py", MUT_LANG_PY);

    /* C++ linkage blocks: their functions are at file level */
    const char *hdr = "#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
                      "int f(int a)\n{\n    if (a < 0)\n        return 0;\n    return a;\n}\n"
                      "#ifdef __cplusplus\n}\n#endif\n";
    m = rewrite(hdr, MUT_LANG_C, MUT_DROP_GUARD, 6);
    ck_assert_ptr_nonnull(strstr(m, "{\n    return a;\n}\n"));
    free(m);

    /* kind names and sets */
    unsigned mask;
    char err[RL_ERR_MAX];
    ck_assert_int_eq(mut_mask_parse(&mask, "ops", err), 0);
    ck_assert_uint_eq(mask, MUT_MASK_OPS);
    ck_assert_int_eq(mut_mask_parse(&mask, "rewrites,flip_cmp", err), 0);
    ck_assert_uint_eq(mask, MUT_MASK_REWRITES | (1u << MUT_FLIP_CMP));
    ck_assert_int_eq(mut_mask_parse(&mask, "all", err), 0);
    ck_assert_uint_eq(mask, MUT_MASK_ALL);
    ck_assert_int_eq(mut_mask_parse(&mask, "drop_guard,nope", err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "'nope'"));
    ck_assert_int_eq(mut_mask_parse(&mask, "", err), RL_EINVAL);
    ck_assert_int_eq(mut_kind_from_name("drop_elif"), MUT_DROP_ELIF);
}
END_TEST

START_TEST(test_small_inputs)
{
    mut_list l;
    const char *c = "int f(int a, int b) {\n    return g(a, b) < h(b);\n}\n";
    enumerate(&l, c, strlen(c), MUT_LANG_C, 3);
    ck_assert_ptr_nonnull(find_site(&l, MUT_SWAP_CMP, 2, "h(b) < g(a, b)"));
    ck_assert_ptr_nonnull(find_site(&l, MUT_SWAP_ARGS, 2, "b, a"));
    ck_assert_ptr_null(find_site(&l, MUT_SWAP_ARGS, 1, NULL));
    mut_list_dispose(&l);

    const char *py = "def f(a, b):\n    return g(a, key=b) + g(*a, b) + g(b, b)\n";
    enumerate(&l, py, strlen(py), MUT_LANG_PY, 3);
    ck_assert_ptr_null(find_site(&l, MUT_SWAP_ARGS, 2, NULL));
    ck_assert_ptr_null(find_site(&l, MUT_SWAP_ARGS, 1, NULL));
    mut_list_dispose(&l);

    /* Precedence: a loop bound with a low-precedence operator is wrapped. */
    const char *lb = "void f(int n, int k) {\n    for (int i = 0; i < n >> k; i++)\n        g(i);\n}\n";
    enumerate(&l, lb, strlen(lb), MUT_LANG_C, 3);
    ck_assert_ptr_nonnull(find_site(&l, MUT_LOOP_BOUND, 2, "(n >> k) - 1"));
    mut_list_dispose(&l);

    /* Wrong return keeps the type: no char * for an int. */
    const char *wr = "int f(const char *s, int n) {\n    int k = 0;\n    char *p = 0;\n    return n;\n}\n";
    enumerate(&l, wr, strlen(wr), MUT_LANG_C, 3);
    ck_assert_ptr_nonnull(find_site(&l, MUT_WRONG_RETURN, 4, "k"));
    mut_list_dispose(&l);
    /* A variable of a closed block is out of scope. */
    const char *sc = "int f(int n) {\n    {\n        int k = 1;\n        n += k;\n    }\n    return n;\n}\n";
    enumerate(&l, sc, strlen(sc), MUT_LANG_C, 3);
    ck_assert_ptr_null(find_site(&l, MUT_WRONG_RETURN, 6, NULL));
    mut_list_dispose(&l);

    /* Types from declarations: no pointer/number or mixed-pointer swaps,
     * no '+' between two pointers, casts and loop headers before a '*'
     * dereference, no case label collisions, no loop-scoped variable. */
    const char *ty = "typedef struct rb rb;\n"
                     "int g(rb *r, size_t i, const char *s, const char *t, int *q) {\n"
                     "    int k = slot(r, i) + f(s, t) + f(s, \"x\") + h(q, s) + h(i, k);\n"
                     "    for (; *s; s++)\n"
                     "        *q = (unsigned char)*s;\n"
                     "    for (int j = 0; j < k; j++)\n"
                     "        k += j;\n"
                     "    switch (k) {\n"
                     "    case 2: return 1;\n"
                     "    }\n"
                     "    k = (int)(t - s);\n"
                     "    return k;\n"
                     "}\n";
    enumerate(&l, ty, strlen(ty), MUT_LANG_C, 3);
    ck_assert_ptr_nonnull(find_site(&l, MUT_SWAP_ARGS, 3, "t, s"));
    ck_assert_ptr_nonnull(find_site(&l, MUT_SWAP_ARGS, 3, "\"x\", s"));
    ck_assert_ptr_nonnull(find_site(&l, MUT_SWAP_ARGS, 3, "k, i"));
    ck_assert_uint_eq(count_kind_line(&l, MUT_SWAP_ARGS, 3), 3); /* not slot(r, i), not h(q, s) */
    ck_assert_uint_eq(count_kind_line(&l, MUT_ARITH, 4), 0);
    ck_assert_uint_eq(count_kind_line(&l, MUT_ARITH, 5), 0);
    ck_assert_ptr_null(find_site(&l, MUT_CONST, 9, "3"));
    ck_assert_ptr_nonnull(find_site(&l, MUT_CONST, 9, "2")); /* return 1 -> 2 */
    ck_assert_uint_eq(count_kind_line(&l, MUT_ARITH, 11), 0);   /* t - s */
    const mut_site *w = find_site(&l, MUT_WRONG_RETURN, 12, NULL);
    ck_assert_ptr_null(w); /* k's peers: j is out of scope, i is size_t */
    mut_list_dispose(&l);

    char err[RL_ERR_MAX];
    ck_assert_int_eq(mut_enumerate(&l, "x", 1, MUT_LANG_NONE, 1, err), RL_EINVAL);
    mut_site bad = {MUT_CONST, 1, 5, 9, (char *)"x", (char *)"d", NULL};
    char *out;
    ck_assert_int_eq(mut_apply(&out, NULL, "abc", 3, &bad, err), RL_EINVAL);
    ck_assert_ptr_null(out);
}
END_TEST

/* ---- every mutant compiles ------------------------------------------------------------ */

static int sh(const char *cmd)
{
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Writes every mutant of the fixture to dir/mNNN.EXT and checks them all
 * with one compiler run. */
static void check_mutants_compile(const char *fixture, mut_lang lang, unsigned mask, const char *ext,
                                  const char *checker)
{
    char dir[] = "/tmp/rl-mut-XXXXXX", path[256], cmd[1024], err[RL_ERR_MAX];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    size_t len;
    char *src = slurp(fixture, &len);
    mut_list l;
    ck_assert_int_eq(mut_enumerate_kinds(&l, src, len, lang, 11, mask, err), 0);
    for (size_t i = 0; i < l.n; i++) {
        size_t n;
        char *m;
        ck_assert_int_eq(mut_apply(&m, &n, src, len, &l.v[i], err), 0);
        ck_assert_msg(n != len || memcmp(m, src, len), "site %s changes nothing", l.v[i].desc);
        snprintf(path, sizeof path, "%s/m%03zu.%s", dir, i, ext);
        ck_assert_int_eq(fs_write_atomic(path, m, n, err), 0);
        free(m);
    }
    snprintf(cmd, sizeof cmd, "cd %s && %s > log.txt 2>&1", dir, checker);
    int rc = sh(cmd);
    if (rc != 0) {
        char *log;
        snprintf(path, sizeof path, "%s/log.txt", dir);
        fs_read_file(&log, NULL, path, 1 << 20, err);
        ck_abort_msg("%zu mutants of %s: checker failed:\n%.2000s", l.n, fixture, log);
    }
    fs_remove_tree(dir, err);
    mut_list_dispose(&l);
    free(src);
}

START_TEST(test_mutants_compile_c)
{
    /* -Wall -Werror minus the warnings a mutant may rightly cause (unused
     * values after dropping a statement). */
    check_mutants_compile(DATA "sample.c", MUT_LANG_C, MUT_MASK_ALL, "c",
                          "for f in m*.c; do gcc -std=c11 -fsyntax-only -Wall -Werror "
                          "-Wno-unused-variable -Wno-unused-but-set-variable -Wno-unused-value "
                          "-Wno-maybe-uninitialized $f || { echo \"in $f\"; exit 1; }; done");
}
END_TEST

START_TEST(test_mutants_compile_py)
{
    check_mutants_compile(DATA "sample.py", MUT_LANG_PY, MUT_MASK_ALL, "py",
                          "/usr/bin/python3 -c 'import sys, py_compile\n"
                          "for f in sys.argv[1:]: py_compile.compile(f, doraise=True)' m*.py");
}
END_TEST

/* ---- garbage ------------------------------------------------------------------------- */

START_TEST(test_mutate_garbage)
{
    size_t len;
    char *src = slurp(DATA "sample.c", &len), *py = NULL, err[RL_ERR_MAX];
    size_t plen;
    py = slurp(DATA "sample.py", &plen);
    mut_list l;
    /* Every prefix: no crash, every site inside the text. */
    for (int lang = 0; lang < 2; lang++) {
        const char *t = lang ? py : src;
        size_t n = lang ? plen : len;
        for (size_t k = 0; k <= n; k += 3) {
            ck_assert_int_eq(mut_enumerate_kinds(&l, t, k, lang ? MUT_LANG_PY : MUT_LANG_C, 5, MUT_MASK_ALL, err), 0);
            for (size_t i = 0; i < l.n; i++)
                ck_assert(l.v[i].start <= l.v[i].end && l.v[i].end <= k);
            mut_list_dispose(&l);
        }
    }
    /* Random bytes of a code-ish alphabet, and deep nesting. */
    const char alpha[] = "(){}[];,=<>+-*/%!&|\"'#\\\n ifwhilereturnabc0123:.";
    uint64_t st = 99;
    char buf[600];
    for (int it = 0; it < 400; it++) {
        size_t n = rl_splitmix64(&st) % sizeof buf;
        for (size_t k = 0; k < n; k++)
            buf[k] = alpha[rl_splitmix64(&st) % (sizeof alpha - 1)];
        ck_assert_int_eq(mut_enumerate_kinds(&l, buf, n, it & 1 ? MUT_LANG_PY : MUT_LANG_C, 1, MUT_MASK_ALL, err), 0);
        for (size_t i = 0; i < l.n; i++)
            ck_assert(l.v[i].end <= n);
        mut_list_dispose(&l);
    }
    /* Random sequences of the rewrites' keywords and brackets. */
    static const char *const words[] = {"if", "else", "elif", "break", "return", "raise", "for", "while",
                                        "(", ")", "{", "}", ";", ":", "\n", "    ", "x", "y", "=", "extern",
                                        "\"C\"", "def", "f", "0", "NULL", " ", "*", "int", "continue", "in"};
    for (int it = 0; it < 2000; it++) {
        size_t n = 0, words_n = rl_splitmix64(&st) % 120;
        for (size_t k = 0; k < words_n; k++) {
            const char *w = words[rl_splitmix64(&st) % (sizeof words / sizeof words[0])];
            size_t wl = strlen(w);
            if (n + wl + 1 >= sizeof buf)
                break;
            memcpy(buf + n, w, wl);
            n += wl;
            buf[n++] = ' ';
        }
        ck_assert_int_eq(mut_enumerate_kinds(&l, buf, n, it & 1 ? MUT_LANG_PY : MUT_LANG_C, 1, MUT_MASK_ALL, err), 0);
        for (size_t i = 0; i < l.n; i++)
            ck_assert(l.v[i].start <= l.v[i].end && l.v[i].end <= n);
        mut_list_dispose(&l);
    }
    size_t depth = 5000;
    char *deep = malloc(2 * depth + 64);
    strcpy(deep, "int f(int a) {\n return ");
    size_t o = strlen(deep);
    memset(deep + o, '(', depth);
    strcpy(deep + o + depth, "a < 1");
    memset(deep + o + depth + 5, ')', depth);
    strcpy(deep + o + 2 * depth + 5, ";\n}\n");
    ck_assert_int_eq(mut_enumerate_kinds(&l, deep, strlen(deep), MUT_LANG_C, 1, MUT_MASK_ALL, err), 0);
    mut_list_dispose(&l);
    free(deep);
    ck_assert_int_eq(mut_enumerate(&l, "x", (size_t)RL_MUT_SRC_MAX + 1, MUT_LANG_C, 1, err), RL_ELIMIT);
    free(src);
    free(py);
}
END_TEST

/* ---- diff ----------------------------------------------------------------------------- */

static char *make_diff(const char *path, const char *a, const char *b)
{
    buf_t out;
    char err[RL_ERR_MAX];
    buf_init(&out, 0);
    ck_assert_msg(diff_unified(&out, path, a, strlen(a), b, strlen(b), err) == 0, "%s", err);
    return buf_detach(&out, NULL);
}

START_TEST(test_diff_exact)
{
    char *d = make_diff("f.c", "a\nb\nc\n", "a\nB\nc\n");
    ck_assert_str_eq(d, "diff --git a/f.c b/f.c\n--- a/f.c\n+++ b/f.c\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
    free(d);
    d = make_diff("f.c", "same\n", "same\n");
    ck_assert_str_eq(d, "");
    free(d);
    d = make_diff("f", "x\ny", "x\ny\n");
    ck_assert_str_eq(d, "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n x\n-y\n"
                        "\\ No newline at end of file\n+y\n");
    free(d);
    d = make_diff("f", "", "new\n");
    ck_assert_str_eq(d, "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -0,0 +1 @@\n+new\n");
    free(d);
    /* Two far regions: two hunks, with 3 lines of context each. */
    d = make_diff("f", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "1\nX\n3\n4\n5\n6\n7\n8\n9\n10\nY\n12\n");
    ck_assert_str_eq(d, "diff --git a/f b/f\n--- a/f\n+++ b/f\n"
                        "@@ -1,5 +1,5 @@\n 1\n-2\n+X\n 3\n 4\n 5\n"
                        "@@ -8,5 +8,5 @@\n 8\n 9\n 10\n-11\n+Y\n 12\n");
    free(d);
    buf_t out;
    char err[RL_ERR_MAX];
    buf_init(&out, 0);
    ck_assert_int_eq(diff_unified(&out, "../x", "a", 1, "b", 1, err), RL_EINVAL);
    ck_assert_int_eq(diff_unified(&out, "a b", "a", 1, "b", 1, err), RL_EINVAL);
    buf_dispose(&out);
    buf_init(&out, 16); /* too small: nothing appended */
    ck_assert_int_eq(diff_unified(&out, "f", "a\n", 2, "b\n", 2, err), RL_ELIMIT);
    ck_assert_uint_eq(out.len, 0);
    buf_dispose(&out);
}
END_TEST

/* Writes old into repo/src/f.c, applies the diff old->new with git apply
 * (--check first), and expects new. */
static void git_roundtrip(const char *repo, const char *old, size_t olen, const char *nw, size_t nlen)
{
    char path[512], cmd[1024], err[RL_ERR_MAX];
    snprintf(path, sizeof path, "%s/src/f.c", repo);
    ck_assert_int_eq(fs_write_atomic(path, old, olen, err), 0);
    buf_t d;
    buf_init(&d, 0);
    ck_assert_msg(diff_unified(&d, "src/f.c", old, olen, nw, nlen, err) == 0, "%s", err);
    if (d.len == 0) {
        ck_assert(olen == nlen && !memcmp(old, nw, olen));
        buf_dispose(&d);
        return;
    }
    snprintf(path, sizeof path, "%s/p.diff", repo);
    ck_assert_int_eq(fs_write_atomic(path, buf_str(&d), d.len, err), 0);
    snprintf(cmd, sizeof cmd, "cd %s && git apply --check p.diff && git apply p.diff", repo);
    ck_assert_msg(sh(cmd) == 0, "git apply refused:\n%s", buf_str(&d));
    char *got;
    size_t glen;
    snprintf(path, sizeof path, "%s/src/f.c", repo);
    ck_assert_int_eq(fs_read_file(&got, &glen, path, 1 << 20, err), 0);
    ck_assert_msg(glen == nlen && !memcmp(got, nw, nlen), "applied text differs for diff:\n%s", buf_str(&d));
    free(got);
    buf_dispose(&d);
}

static char *new_repo(char *dir)
{
    char cmd[512], sub[300], err[RL_ERR_MAX];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(sub, sizeof sub, "%s/src", dir);
    ck_assert_int_eq(fs_mkdirs(sub, err), 0);
    snprintf(cmd, sizeof cmd, "cd %s && git init -q .", dir);
    ck_assert_int_eq(sh(cmd), 0);
    return dir;
}

START_TEST(test_diff_git_apply)
{
    char dir[] = "/tmp/rl-diff-XXXXXX", err[RL_ERR_MAX];
    new_repo(dir);
    const char *cases[][2] = {
        {"a\nb\nc\n", "a\nB\nc\n"},
        {"first\n2\n3\n4\n5\n", "FIRST\n2\n3\n4\n5\n"},
        {"1\n2\n3\n4\nlast\n", "1\n2\n3\n4\nLAST\n"},
        {"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n", "1\nX\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\nY\n14\n"},
        {"1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\nX\n3\n4\n5\n6\n7\nY\n9\n"},
        {"x\ny", "x\ny\n"},
        {"x\ny\n", "x\ny"},
        {"x\ny", "x\nz"},
        {"a\nb\nc\n", "a\nb\nc\nd\ne\n"},
        {"a\nb\nc\nd\n", "a\nd\n"},
        {"", "new\nfile\n"},
        {"gone\n", ""},
        {"a\nb\na\nb\na\n", "b\na\nb\na\nb\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        git_roundtrip(dir, cases[i][0], strlen(cases[i][0]), cases[i][1], strlen(cases[i][1]));
        git_roundtrip(dir, cases[i][1], strlen(cases[i][1]), cases[i][0], strlen(cases[i][0]));
    }
    /* Random edits of random line texts. */
    uint64_t st = 2024;
    for (int it = 0; it < 40; it++) {
        buf_t a, b;
        buf_init(&a, 0);
        buf_init(&b, 0);
        size_t n = 1 + rl_splitmix64(&st) % 40;
        for (size_t k = 0; k < n; k++) {
            unsigned r = (unsigned)(rl_splitmix64(&st) % 6);
            buf_printf(&a, "line %u\n", r);
            uint64_t e = rl_splitmix64(&st) % 10;
            if (e == 0)
                continue;                                     /* deleted */
            if (e == 1)
                buf_printf(&b, "line %u changed\n", r);       /* changed */
            else
                buf_printf(&b, "line %u\n", r);
            if (e == 2)
                buf_printf(&b, "inserted %zu\n", k);           /* inserted */
        }
        if (rl_splitmix64(&st) % 4 == 0 && b.len)
            b.len--, b.data[b.len] = '\0'; /* no final newline */
        git_roundtrip(dir, buf_str(&a), a.len, buf_str(&b), b.len);
        buf_dispose(&a);
        buf_dispose(&b);
    }
    fs_remove_tree(dir, err);
}
END_TEST

/* The generator's use: bug diff upstream -> mutant applies to upstream,
 * gold patch mutant -> upstream applies to the mutant. */
START_TEST(test_bug_and_gold_patch)
{
    char dir[] = "/tmp/rl-gold-XXXXXX", err[RL_ERR_MAX];
    new_repo(dir);
    size_t len;
    char *src = slurp(DATA "sample.c", &len);
    mut_list l;
    enumerate(&l, src, len, MUT_LANG_C, 3);
    for (size_t i = 0; i < l.n && i < 25; i++) {
        size_t n;
        char *m;
        ck_assert_int_eq(mut_apply(&m, &n, src, len, &l.v[i], err), 0);
        git_roundtrip(dir, src, len, m, n); /* bug */
        git_roundtrip(dir, m, n, src, len); /* gold patch */
        free(m);
    }
    mut_list_dispose(&l);
    free(src);
    fs_remove_tree(dir, err);
}
END_TEST

Suite *mutate_suite(void)
{
    Suite *s = suite_create("mutate");
    TCase *tc = tcase_create("mutate");
    tcase_add_test(tc, test_paths_and_names);
    tcase_add_test(tc, test_deterministic);
    tcase_add_test(tc, test_kinds_c);
    tcase_add_test(tc, test_kinds_py);
    tcase_add_test(tc, test_small_inputs);
    tcase_add_test(tc, test_rewrites_c);
    tcase_add_test(tc, test_rewrites_py);
    tcase_add_test(tc, test_mutants_compile_c);
    tcase_add_test(tc, test_mutants_compile_py);
    tcase_add_test(tc, test_mutate_garbage);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    TCase *td = tcase_create("diff");
    tcase_add_test(td, test_diff_exact);
    tcase_add_test(td, test_diff_git_apply);
    tcase_add_test(td, test_bug_and_gold_patch);
    tcase_set_timeout(td, 120);
    suite_add_tcase(s, td);
    return s;
}
