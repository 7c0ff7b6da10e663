/* test_tasks.c - task loader: every validation error, fuzzing, round trip,
 * task sets, selectors and the `harness list` command.
 *
 * Fixtures: tests/data/tasks/{set,dup,bad} (task folders) and
 * tests/data/tasks/repos (the repo folders they name). Error cases edit a
 * valid task in memory and check the one-line message.
 */
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "corpus/task.h"
#include "corpus/testres.h"

#include <cJSON.h>
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define DATA "tests/data/tasks"
#define REPOS DATA "/repos"
#define GOOD DATA "/set/alpha-one.json"

static char *read_text(const char *path)
{
    char *s, err[RL_ERR_MAX];
    size_t n;
    ck_assert_msg(fs_read_file(&s, &n, path, 1 << 20, err) == 0, "%s", err);
    return s;
}

/* ---- error cases -------------------------------------------------------- */

typedef struct edit {
    const char *field;
    const char *value; /* JSON text; NULL deletes the field */
    const char *expect;
    int code;
} edit;

/* 17 KiB problem statement, built at run time. */
static char long_text[(RL_TASK_PROBLEM_MAX + 1024) + 3];

static const edit EDITS[] = {
    {"colour", "1", "field \"colour\": unknown field (expected one of: instance_id,", RL_EINVAL},
    {"repo", "5", "field \"repo\": expected a non-empty string", RL_EINVAL},
    {"repo", "null", "field \"repo\": expected a non-empty string", RL_EINVAL},
    {"repo", "\"\"", "field \"repo\": expected a non-empty string", RL_EINVAL},
    {"test_cmd", NULL, "field \"test_cmd\": missing (required field)", RL_EINVAL},
    {"PASS_TO_PASS", NULL, "field \"PASS_TO_PASS\": missing", RL_EINVAL},
    {"repo", "\"nope\"", "field \"repo\": expected a folder " REPOS "/nope (not found)", RL_ENOENT},
    {"repo", "\"../alpha\"", "field \"repo\": expected only letters, digits", RL_EINVAL},
    {"FAIL_TO_PASS", "[]", "field \"FAIL_TO_PASS\": expected a non-empty array of strings", RL_EINVAL},
    {"FAIL_TO_PASS", "\"test_leap_1900\"", "field \"FAIL_TO_PASS\": expected a non-empty array of strings",
     RL_EINVAL},
    {"FAIL_TO_PASS", "[1]", "field \"FAIL_TO_PASS[0]\": expected a non-empty string", RL_EINVAL},
    {"FAIL_TO_PASS", "[\"a\\nb\"]", "field \"FAIL_TO_PASS[0]\": expected one line", RL_EINVAL},
    {"PASS_TO_PASS", "{}", "field \"PASS_TO_PASS\": expected an array of strings", RL_EINVAL},
    {"PASS_TO_PASS", "[\"test_leap_2000\", \"test_leap_1900\"]",
     "field \"PASS_TO_PASS\": \"test_leap_1900\" is also in FAIL_TO_PASS (expected disjoint lists)", RL_EINVAL},
    {"FAIL_TO_PASS", "[\"x\", \"y\", \"x\"]", "field \"FAIL_TO_PASS\": \"x\" appears twice", RL_EINVAL},
    {"instance_id", "\"alpha-other\"",
     "field \"instance_id\": expected \"alpha-one\" (the file name without .json), got \"alpha-other\"",
     RL_EINVAL},
    {"instance_id", "\"a/b\"", "field \"instance_id\": expected only letters, digits", RL_EINVAL},
    {"split", "\"test\"", "field \"split\": expected \"train\" or \"heldout\"", RL_EINVAL},
    {"kind", "\"easy\"",
     "field \"kind\": expected \"single_edit\", \"look_again\", \"cross_file\" or \"generated\"", RL_EINVAL},
    {"test_format", "\"xml\"", "field \"test_format\": expected \"check\", \"tap\", \"junit\", \"unity\" or \"testhelp\"", RL_EINVAL},
    {"test_format", "1", "field \"test_format\": expected \"check\"", RL_EINVAL},
    {"timeout_s", "0", "field \"timeout_s\": expected an integer from 1 to 600", RL_EINVAL},
    {"timeout_s", "601", "field \"timeout_s\": expected an integer from 1 to 600", RL_EINVAL},
    {"timeout_s", "1.5", "field \"timeout_s\": expected an integer from 1 to 600", RL_EINVAL},
    {"timeout_s", "\"60\"", "field \"timeout_s\": expected an integer from 1 to 600", RL_EINVAL},
    {"timeout_s", "1e300", "field \"timeout_s\": expected an integer from 1 to 600", RL_EINVAL},
    {"problem_statement", long_text, "field \"problem_statement\": expected at most 16384 bytes", RL_ELIMIT},
    {"protected_paths", "[\"../secret\"]", "field \"protected_paths[0]\": expected a relative path", RL_EINVAL},
    {"protected_paths", "[\"/etc/passwd\"]", "field \"protected_paths[0]\": expected a relative path", RL_EINVAL},
    {"protected_paths", "[\"tests/\", \"tests/\"]", "field \"protected_paths\": \"tests/\" appears twice",
     RL_EINVAL},
    {"protected_paths", "[\"./tests/\"]", "field \"protected_paths[0]\": expected a relative path", RL_EINVAL},
    {"protected_paths", "[\"./\"]", "field \"protected_paths[0]\": expected a relative path", RL_EINVAL},
    {"protected_paths", "[\".\"]", "field \"protected_paths[0]\": expected a relative path", RL_EINVAL},
    {"protected_paths", "[\"..\"]", "field \"protected_paths[0]\": expected a relative path", RL_EINVAL},
    {"protected_paths", "[\"tests/../src\"]", "field \"protected_paths[0]\": expected a relative path",
     RL_EINVAL},
    {"protected_paths", "[\"tests/./a.c\"]", "field \"protected_paths[0]\": expected a relative path",
     RL_EINVAL},
    {"protected_paths", "[\"tests//a.c\"]", "field \"protected_paths[0]\": expected a relative path",
     RL_EINVAL},
    {"protected_paths", "[\".git\"]", "expected a relative path inside the work tree (no leading '/', no "
     "empty, '.' or '..' component, not .git), got \".git\"", RL_EINVAL},
    {"protected_paths", "[\"Makefile\", \".git/\"]", "field \"protected_paths[1]\": expected a relative path",
     RL_EINVAL},
    {"protected_paths", "[\".git/hooks/pre-commit\"]", "field \"protected_paths[0]\": expected a relative path",
     RL_EINVAL},
    {"protected_paths", "[\"sub/.git\"]", "field \"protected_paths[0]\": expected a relative path", RL_EINVAL},
    {"protected_paths", "[\"\"]", "field \"protected_paths[0]\": expected a non-empty string", RL_EINVAL},
    {"protected_paths", "[\"/\"]", "field \"protected_paths[0]\": expected a relative path", RL_EINVAL},
    {"test_result_file", "\"./out.xml\"", "field \"test_result_file\": expected a relative path", RL_EINVAL},
    {"test_result_file", "\"out.xml\"", "field \"test_result_file\": expected only with test_format \"junit\"",
     RL_EINVAL},
    {"kind", "\"generated\"", "field \"generator\": expected an object when kind is \"generated\"", RL_EINVAL},
    {"generator", "{\"seed\": 1, \"mutation\": \"flip_cmp\", \"file\": \"a.c\", \"line\": 3}",
     "field \"generator\": expected only when kind is \"generated\"", RL_EINVAL},
    {"generator", "[]", "field \"generator\": expected an object", RL_EINVAL},
    {"generator", "{\"seed\": -1, \"mutation\": \"flip_cmp\", \"file\": \"a.c\", \"line\": 3}",
     "field \"generator.seed\": expected an integer from 0", RL_EINVAL},
    {"generator", "{\"seed\": 1, \"mutation\": \"flip_cmp\", \"file\": \"a.c\", \"line\": 3, \"x\": 1}",
     "field \"generator.x\": unknown field (expected one of: seed, mutation, file, line)", RL_EINVAL},
    {"generator", "{\"seed\": 1, \"mutation\": \"flip_cmp\", \"line\": 3}",
     "field \"generator.file\": missing", RL_EINVAL},
    {"bug", "\"make it return false\"", "field \"bug\": expected a unified diff", RL_EINVAL},
    {"patch", "[\"diff\"]", "field \"patch\": expected a non-empty string", RL_EINVAL},
    {"extra", "[1]", "field \"extra\": expected an object", RL_EINVAL},
    {"extra", "\"x\"", "field \"extra\": expected an object", RL_EINVAL},
};

/* The good task with one field replaced (or removed), as JSON text. */
static char *edited(const char *base, const edit *e)
{
    cJSON *o = cJSON_Parse(base);
    ck_assert_ptr_nonnull(o);
    cJSON_DeleteItemFromObjectCaseSensitive(o, e->field);
    if (e->value) {
        cJSON *v = cJSON_Parse(e->value);
        ck_assert_msg(v != NULL, "bad test value %s", e->value);
        cJSON_AddItemToObject(o, e->field, v);
    }
    char *s = cJSON_Print(o);
    cJSON_Delete(o);
    return s;
}

START_TEST(test_task_errors)
{
    memset(long_text, 'x', sizeof long_text - 1);
    long_text[0] = long_text[sizeof long_text - 2] = '"';
    long_text[sizeof long_text - 1] = '\0';
    char *base = read_text(GOOD);
    size_t i = (size_t)_i;
    char *json = edited(base, &EDITS[i]);
    char err[RL_ERR_MAX] = "";
    task *t = NULL;
    int rc = task_parse(&t, json, GOOD, REPOS, err);
    ck_assert_msg(rc == EDITS[i].code, "case %zu (%s): rc %d, err: %s", i, EDITS[i].field, rc, err);
    ck_assert_ptr_null(t);
    ck_assert_msg(!strncmp(err, GOOD ": ", strlen(GOOD) + 2), "case %zu: no file name in: %s", i, err);
    ck_assert_msg(strstr(err, EDITS[i].expect), "case %zu: expected '%s' in '%s'", i, EDITS[i].expect, err);
    ck_assert_ptr_null(strchr(err, '\n'));
    cJSON_free(json);
    free(base);
}
END_TEST

START_TEST(test_task_syntax_errors)
{
    char err[RL_ERR_MAX];
    task *t;
    ck_assert_int_eq(task_parse(&t, "[1, 2]", "x.json", REPOS, err), RL_EPARSE);
    ck_assert_str_eq(err, "x.json: expected a JSON object at the top level");
    ck_assert_int_eq(task_parse(&t, "{\n  \"repo\": ,\n}", "x.json", REPOS, err), RL_EPARSE);
    ck_assert_msg(strstr(err, "x.json: invalid JSON at line 2, column"), "%s", err);
    ck_assert_int_eq(task_parse(&t, "{} {}", "x.json", REPOS, err), RL_EPARSE);
    ck_assert_msg(strstr(err, "invalid JSON at line 1, column 4"), "%s", err);
    ck_assert_int_eq(task_parse(&t, "", "x.json", REPOS, err), RL_EPARSE);

    /* A repeated key: cJSON keeps both, the loader refuses. */
    char *base = read_text(GOOD);
    char *p = strstr(base, "\"repo\"");
    ck_assert_ptr_nonnull(p);
    size_t n = strlen(base);
    char *dup = malloc(n + 32);
    size_t off = (size_t)(p - base);
    memcpy(dup, base, off);
    strcpy(dup + off, "\"repo\": \"beta\", ");
    strcat(dup, base + off);
    ck_assert_int_eq(task_parse(&t, dup, GOOD, REPOS, err), RL_EINVAL);
    ck_assert_msg(strstr(err, "field \"repo\": appears twice"), "%s", err);
    free(dup);
    free(base);

    ck_assert_int_eq(task_load(&t, DATA "/set/missing.json", REPOS, err), RL_ENOENT);
    ck_assert_msg(strstr(err, DATA "/set/missing.json"), "%s", err);
}
END_TEST

/* ---- fuzzing ------------------------------------------------------------ */

static uint64_t fz_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

START_TEST(test_task_fuzz)
{
    char err[RL_ERR_MAX];
    task *t;
    char *base = read_text(GOOD);
    size_t n = strlen(base);
    /* Every truncation of a valid file is an error, never a crash. */
    for (size_t k = 0; k + 2 < n; k++) {
        char *cut = strndup(base, k);
        ck_assert_int_ne(task_parse(&t, cut, GOOD, REPOS, err), 0);
        ck_assert_msg(err[0] && !strchr(err, '\n'), "truncated at %zu: %s", k, err);
        free(cut);
    }
    /* Random byte edits: either accepted or one clean error line. */
    uint64_t seed = 42;
    for (int it = 0; it < 2000; it++) {
        char *m = strdup(base);
        int edits = 1 + (int)(fz_next(&seed) % 4);
        for (int e = 0; e < edits; e++)
            m[fz_next(&seed) % n] = (char)(fz_next(&seed) % 255 + 1);
        err[0] = '\0';
        int rc = task_parse(&t, m, GOOD, REPOS, err);
        if (rc == 0)
            task_free(t);
        else
            ck_assert_msg(err[0] != '\0', "no message for rc %d", rc);
        free(m);
    }
    /* Random bytes. */
    for (int it = 0; it < 500; it++) {
        size_t len = fz_next(&seed) % 300;
        char *m = malloc(len + 1);
        for (size_t k = 0; k < len; k++)
            m[k] = (char)(fz_next(&seed) % 255 + 1);
        m[len] = '\0';
        ck_assert_int_ne(task_parse(&t, m, "r.json", REPOS, err), 0);
        free(m);
    }
    /* Deep nesting, at the top and inside a field. */
    size_t depth = 100000;
    char *deep = malloc(2 * depth + 64);
    memset(deep, '[', depth);
    memset(deep + depth, ']', depth);
    deep[2 * depth] = '\0';
    ck_assert_int_eq(task_parse(&t, deep, "d.json", REPOS, err), RL_EPARSE);
    strcpy(deep, "{\"FAIL_TO_PASS\": ");
    size_t o = strlen(deep);
    memset(deep + o, '[', depth);
    deep[o + depth] = '\0';
    ck_assert_int_eq(task_parse(&t, deep, "d.json", REPOS, err), RL_EPARSE);
    free(deep);
    free(base);
}
END_TEST

/* ---- round trip ------------------------------------------------------------ */

static void assert_strs_eq(const task_strs *a, const task_strs *b)
{
    ck_assert_uint_eq(a->n, b->n);
    for (size_t i = 0; i < a->n; i++)
        ck_assert_str_eq(a->v[i], b->v[i]);
}

START_TEST(test_task_round_trip)
{
    task_set s;
    char err[RL_ERR_MAX];
    ck_assert_msg(task_set_load(&s, DATA "/set", REPOS, err) == 0, "%s", err);
    ck_assert_str_eq(task_set_find(&s, "alpha-one")->extra,
                     "{\"base_commit\":\"0123abc\",\"version\":\"1.0\",\"ids\":[\"a::b\",\"c\"]}");
    for (size_t i = 0; i < s.n; i++) {
        const task *a = s.v[i];
        char *json = task_to_json(a);
        ck_assert_ptr_nonnull(json);
        task *b;
        ck_assert_msg(task_parse(&b, json, a->path, REPOS, err) == 0, "%s", err);
        ck_assert_str_eq(a->instance_id, b->instance_id);
        ck_assert_str_eq(a->repo, b->repo);
        ck_assert_str_eq(a->problem_statement, b->problem_statement);
        ck_assert_str_eq(a->bug, b->bug);
        ck_assert_str_eq(a->patch, b->patch);
        assert_strs_eq(&a->fail_to_pass, &b->fail_to_pass);
        assert_strs_eq(&a->pass_to_pass, &b->pass_to_pass);
        assert_strs_eq(&a->protected_paths, &b->protected_paths);
        ck_assert_str_eq(a->test_cmd, b->test_cmd);
        ck_assert_int_eq(a->test_format, b->test_format);
        ck_assert_int_eq(!a->test_result_file, !b->test_result_file);
        if (a->test_result_file)
            ck_assert_str_eq(a->test_result_file, b->test_result_file);
        ck_assert_int_eq(a->timeout_s, b->timeout_s);
        ck_assert_int_eq(a->split, b->split);
        ck_assert_int_eq(a->kind, b->kind);
        ck_assert_int_eq(a->gen_seed, b->gen_seed);
        ck_assert_int_eq(a->gen_line, b->gen_line);
        if (a->gen_seed >= 0) {
            ck_assert_str_eq(a->gen_mutation, b->gen_mutation);
            ck_assert_str_eq(a->gen_file, b->gen_file);
        }
        ck_assert_int_eq(!a->extra, !b->extra);
        if (a->extra)
            ck_assert_str_eq(a->extra, b->extra);
        char *json2 = task_to_json(b);
        ck_assert_str_eq(json, json2);
        free(json);
        free(json2);
        task_free(b);
    }
    task_set_dispose(&s);
}
END_TEST

/* ---- sets --------------------------------------------------------------- */

START_TEST(test_task_set_load)
{
    task_set s;
    char err[RL_ERR_MAX];
    ck_assert_msg(task_set_load(&s, DATA "/set", REPOS, err) == 0, "%s", err);
    const char *want[] = {"alpha-gen-7-0", "alpha-one", "alpha-two", "beta-py", "gamma-gen-7-0"};
    ck_assert_uint_eq(s.n, 5);
    for (size_t i = 0; i < 5; i++)
        ck_assert_str_eq(s.v[i]->instance_id, want[i]);
    task *g = task_set_find(&s, "gamma-gen-7-0");
    ck_assert_ptr_nonnull(g);
    ck_assert_str_eq(g->repos_dir, REPOS); /* where work trees find its upstream */
    ck_assert_str_eq(g->path, DATA "/set/generated/gamma/deeper/gamma-gen-7-0.json");
    ck_assert_int_eq(g->gen_seed, 7);
    ck_assert_str_eq(g->gen_mutation, "swap_args");
    ck_assert_int_eq(g->gen_line, 3);
    ck_assert_int_eq(g->test_format, TASK_FMT_TAP);
    task *b = task_set_find(&s, "beta-py");
    ck_assert_str_eq(b->test_result_file, ".results.xml");
    ck_assert_str_eq(b->pass_to_pass.v[0], "test_parse_time[12:00]");
    ck_assert_int_eq(task_set_find(&s, "alpha-one")->gen_seed, -1);
    ck_assert_ptr_null(task_set_find(&s, "nope"));
    task_set_dispose(&s);

    ck_assert_int_eq(task_set_load(&s, DATA "/dup", REPOS, err), RL_EINVAL);
    ck_assert_msg(strstr(err, "duplicate instance_id \"dup-x\""), "%s", err);
    ck_assert_ptr_null(s.v);
    ck_assert_int_eq(task_set_load(&s, DATA "/bad", REPOS, err), RL_EINVAL);
    ck_assert_str_eq(err, DATA "/bad/bad-empty.json: field \"FAIL_TO_PASS\": "
                          "expected a non-empty array of strings");
    ck_assert_int_eq(task_set_load(&s, DATA "/none", REPOS, err), RL_ENOENT);
    ck_assert_msg(strstr(err, DATA "/none"), "%s", err);
    /* Without repos_dir the repo check is skipped. */
    ck_assert_int_eq(task_set_load(&s, DATA "/set", DATA "/no-repos", err), RL_ENOENT);
    ck_assert_int_eq(task_set_load(&s, DATA "/set", NULL, err), 0);
    ck_assert_uint_eq(s.n, 5);
    ck_assert_str_eq(s.v[0]->repos_dir, "repos");
    task_set_dispose(&s);
}
END_TEST

static void assert_selects(const task_set *all, const char *sel, const char *want)
{
    task_set out;
    char err[RL_ERR_MAX], got[512] = "";
    ck_assert_msg(task_select(&out, all, sel, err) == 0, "%s: %s", sel, err);
    for (size_t i = 0; i < out.n; i++) {
        strcat(got, i ? " " : "");
        strcat(got, out.v[i]->instance_id);
    }
    ck_assert_msg(!strcmp(got, want), "selector '%s': got '%s', want '%s'", sel, got, want);
    task_select_dispose(&out);
}

static void assert_select_fails(const task_set *all, const char *sel, const char *expect)
{
    task_set out;
    char err[RL_ERR_MAX];
    ck_assert_msg(task_select(&out, all, sel, err) < 0, "selector '%s' should fail", sel);
    ck_assert_msg(strstr(err, expect), "selector '%s': expected '%s' in '%s'", sel, expect, err);
    ck_assert_ptr_null(out.v);
}

START_TEST(test_task_select)
{
    task_set s;
    char err[RL_ERR_MAX];
    ck_assert_msg(task_set_load(&s, DATA "/set", REPOS, err) == 0, "%s", err);
    assert_selects(&s, "alpha-one", "alpha-one");
    assert_selects(&s, "alpha-*", "alpha-gen-7-0 alpha-one alpha-two");
    assert_selects(&s, "*-gen-?-0", "alpha-gen-7-0 gamma-gen-7-0");
    assert_selects(&s, "split:heldout", "alpha-two gamma-gen-7-0");
    assert_selects(&s, "repo:beta", "beta-py");
    assert_selects(&s, "kind:generated", "alpha-gen-7-0 gamma-gen-7-0");
    assert_selects(&s, "all", "alpha-gen-7-0 alpha-one alpha-two beta-py gamma-gen-7-0");
    assert_selects(&s, "gamma-gen-7-0, alpha-one,alpha-*", "alpha-gen-7-0 alpha-one alpha-two gamma-gen-7-0");
    assert_selects(&s, "beta-py,split:heldout,beta-py", "alpha-two beta-py gamma-gen-7-0");
    assert_select_fails(&s, "nope", "selector \"nope\": no task with that id");
    assert_select_fails(&s, "alpha-one,nope", "selector \"nope\"");
    assert_select_fails(&s, "zzz*", "selector \"zzz*\": matches no task");
    assert_select_fails(&s, "split:test", "expected split:train or split:heldout");
    assert_select_fails(&s, "kind:hard", "selector \"kind:hard\": expected kind:");
    assert_select_fails(&s, "repo:delta", "selector \"repo:delta\": matches no task");
    assert_select_fails(&s, "kind:single_edit,kind:cross_file,split:train,kind:look_again,repo:gamma,"
                            "kind:generated,x", "selector \"x\"");
    assert_select_fails(&s, "alpha-one,,beta-py", "empty term");
    assert_select_fails(&s, "alpha-one,", "empty term");
    assert_select_fails(&s, "", "selector");
    task_set_dispose(&s);
}
END_TEST

/* ---- scoring ---------------------------------------------------------------- */

static void score_text(task_outcome *o, const task *t, const char *text)
{
    tr_report r;
    char err[RL_ERR_MAX];
    task_parse_results(&r, t, text, strlen(text), err);
    task_score(o, t, &r);
    tr_report_dispose(&r);
}

START_TEST(test_task_score)
{
    task_set s;
    char err[RL_ERR_MAX];
    ck_assert_msg(task_set_load(&s, DATA "/set", REPOS, err) == 0, "%s", err);
    const task *a = task_set_find(&s, "alpha-one"); /* F2P test_leap_1900; P2P test_leap_2000, test_leap_4 */
    task_outcome o;
    score_text(&o, a, "t.c:1:P:c:test_leap_1900:0: Passed\nt.c:2:P:c:test_leap_2000:0: Passed\n"
                      "t.c:3:P:c:test_leap_4:0: Passed\n");
    ck_assert_int_eq(o.resolved, 1);
    ck_assert_uint_eq(o.f2p_pass, 1);
    ck_assert_uint_eq(o.p2p_pass, 2);
    ck_assert_ptr_null(o.first_f2p_fail);
    /* the failing test still fails */
    score_text(&o, a, "t.c:1:F:c:test_leap_1900:0: 1900 is not leap\nt.c:2:P:c:test_leap_2000:0: Passed\n"
                      "t.c:3:P:c:test_leap_4:0: Passed\n");
    ck_assert_int_eq(o.resolved, 0);
    ck_assert_uint_eq(o.f2p_pass, 0);
    ck_assert_str_eq(o.first_f2p_fail, "test_leap_1900");
    ck_assert_ptr_null(o.first_p2p_fail);
    /* the binary died before test_leap_4: missing counts as failed */
    score_text(&o, a, "t.c:1:P:c:test_leap_1900:0: Passed\nt.c:2:P:c:test_leap_2000:0: Passed\nSegmentation fault\n");
    ck_assert_int_eq(o.resolved, 0);
    ck_assert_uint_eq(o.p2p_pass, 1);
    ck_assert_str_eq(o.first_p2p_fail, "test_leap_4");
    /* no output at all (compile error, timeout) */
    task_score(&o, a, NULL);
    ck_assert_int_eq(o.resolved, 0);
    ck_assert_uint_eq(o.f2p_pass + o.p2p_pass, 0);
    ck_assert_uint_eq(o.f2p_total + o.p2p_total, 3);

    /* the parser follows test_format */
    score_text(&o, task_set_find(&s, "beta-py"),
               "<testsuites><testsuite><testcase name=\"test_parse_date\"/>"
               "<testcase name=\"test_parse_time[12:00]\"/></testsuite></testsuites>");
    ck_assert_int_eq(o.resolved, 1);
    score_text(&o, task_set_find(&s, "gamma-gen-7-0"), "1..2\nok 1 - adds two numbers\nnot ok 2 - subtracts\n");
    ck_assert_int_eq(o.resolved, 0);
    ck_assert_uint_eq(o.f2p_pass, 1);
    ck_assert_str_eq(o.first_p2p_fail, "subtracts");
    task_set_dispose(&s);
}
END_TEST

/* ---- harness list --------------------------------------------------------- */

/* Runs a shell command; returns its exit code and its stdout (caller frees). */
static int run(char **out, const char *cmd)
{
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap);
    size_t r;
    while ((r = fread(s + n, 1, cap - 1 - n, p)) > 0)
        n += r;
    s[n] = '\0';
    int st = pclose(p);
    *out = s;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static const char *bin(void)
{
    const char *b = getenv("RL_BIN");
    return b ? b : "bin";
}

START_TEST(test_cmd_list)
{
    char cmd[1024], *out;
    const char *dirs = "--tasks-dir " DATA "/set --repos-dir " REPOS;
    snprintf(cmd, sizeof cmd, "%s/harness list %s", bin(), dirs);
    ck_assert_int_eq(run(&out, cmd), 0);
    ck_assert_msg(strstr(out, "alpha-one      alpha  single_edit  train       1     2\n"), "%s", out);
    ck_assert_msg(strstr(out, "\n5 tasks (3 train, 2 heldout)\n"), "%s", out);
    free(out);

    snprintf(cmd, sizeof cmd, "%s/harness list %s --split heldout --repo=alpha", bin(), dirs);
    ck_assert_int_eq(run(&out, cmd), 0);
    ck_assert_msg(strstr(out, "alpha-two") && !strstr(out, "gamma") && strstr(out, "\n1 task (0 train, 1 heldout)"),
                  "%s", out);
    free(out);

    snprintf(cmd, sizeof cmd, "%s/harness list %s --kind generated --json", bin(), dirs);
    ck_assert_int_eq(run(&out, cmd), 0);
    cJSON *a = cJSON_Parse(out);
    ck_assert_msg(cJSON_IsArray(a), "%s", out);
    ck_assert_int_eq(cJSON_GetArraySize(a), 2);
    cJSON *first = cJSON_GetArrayItem(a, 0);
    ck_assert_str_eq(cJSON_GetObjectItem(first, "instance_id")->valuestring, "alpha-gen-7-0");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(first, "FAIL_TO_PASS")), 1);
    cJSON_Delete(a);
    free(out);

    snprintf(cmd, sizeof cmd, "%s/harness list --tasks-dir %s/bad --repos-dir %s 2>&1", bin(), DATA, REPOS);
    ck_assert_int_eq(run(&out, cmd), 1);
    ck_assert_str_eq(out, DATA "/bad/bad-empty.json: field \"FAIL_TO_PASS\": expected a non-empty array of strings\n");
    free(out);

    snprintf(cmd, sizeof cmd, "%s/harness list --bogus 2>&1", bin());
    ck_assert_int_eq(run(&out, cmd), 2);
    ck_assert_str_eq(out, "harness list: unknown argument '--bogus' (see harness list --help)\n");
    free(out);
    snprintf(cmd, sizeof cmd, "%s/harness list --split dev 2>&1", bin());
    ck_assert_int_eq(run(&out, cmd), 2);
    ck_assert_msg(strstr(out, "expected train or heldout"), "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "%s/harness list --repo 2>&1", bin());
    ck_assert_int_eq(run(&out, cmd), 2);
    free(out);
}
END_TEST

Suite *tasks_suite(void)
{
    Suite *s = suite_create("tasks");
    TCase *tc = tcase_create("load");
    tcase_add_loop_test(tc, test_task_errors, 0, (int)(sizeof EDITS / sizeof EDITS[0]));
    tcase_add_test(tc, test_task_syntax_errors);
    tcase_add_test(tc, test_task_fuzz);
    tcase_add_test(tc, test_task_round_trip);
    tcase_add_test(tc, test_task_set_load);
    tcase_add_test(tc, test_task_select);
    tcase_add_test(tc, test_task_score);
    tcase_add_test(tc, test_cmd_list);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
