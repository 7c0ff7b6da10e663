/* test_swebench.c - SWE-bench in and out: the test-id mapping, `harness
 * import --swebench` against a git repository the test builds (a small
 * Python package with pytest tests; upstream history of two commits, the
 * second fixing a bug and adding its tests, as SWE-bench instances are
 * made), validation, an oracle episode, `harness export --predictions`,
 * and the one-line errors of bad inputs.
 */
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "corpus/task.h"
#include "harness/swebench.h"

#include <cJSON.h>
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *bin(void)
{
    const char *b = getenv("RL_BIN");
    return b ? b : "bin";
}

/* Runs a shell command; returns its exit code, its stdout and stderr
 * together in *out (caller frees). */
static int run(char **out, const char *cmd)
{
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t cap = 1 << 20, n = 0, r;
    char *s = malloc(cap);
    while ((r = fread(s + n, 1, cap - 1 - n, p)) > 0)
        n += r;
    s[n] = '\0';
    int st = pclose(p);
    *out = s;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* ---- test ids -------------------------------------------------------------- */

static const struct {
    const char *id, *name;
} IDS[] = {
    {"tests/test_x.py::test_y", "test_y"},
    {"tests/test_x.py::TestC::test_y", "test_y"},
    {"tests/test_x.py::test_y[a-b]", "test_y[a-b]"},
    {"tests/test_x.py::TestC::test_y[a::b c]", "test_y[a::b c]"},
    {"test_y (module.TestC)", "test_y"},
    {"test_y (module.TestC.test_y)", "test_y"},
    {"test_y (module.TestC)\nThe docstring's first line", "test_y"},
    {"test_y", "test_y"},
    {"tests/test_x.py::test_y[]", "test_y[]"},
};

START_TEST(test_id_mapping)
{
    char name[RL_TASK_TEST_ID_MAX + 1], err[RL_ERR_MAX];
    for (size_t i = 0; i < sizeof IDS / sizeof *IDS; i++) {
        ck_assert_int_eq(swb_test_name(name, sizeof name, IDS[i].id, err), 0);
        ck_assert_str_eq(name, IDS[i].name);
    }
    const char *bad[] = {"", "tests/test_x.py::", "two words", "\nx", "a::b c"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_int_eq(swb_test_name(name, sizeof name, bad[i], err), RL_EINVAL);
        ck_assert_msg(strstr(err, "maps to no test name") && !strchr(err, '\n'), "%s", err);
    }
}
END_TEST

/* ---- the fixture ------------------------------------------------------------- */

static char dir[256];
static char base[41], fixed[41];

static const char *SETUP =
    "set -e; cd %s; mkdir -p up/calc up/tests; cd up; git init -q .; "
    "git config user.email t@example.org; git config user.name t; "
    "printf '__pycache__/\\n.pytest_cache/\\n' > .gitignore; : > calc/__init__.py; : > conftest.py; "
    "printf 'def add(a, b):\\n    return a + b\\n\\n\\ndef clamp(x, lo, hi):\\n    if x < lo:\\n"
    "        return lo\\n    if x > hi:\\n        return lo\\n    return x\\n' > calc/ops.py; "
    "printf 'import pytest\\nfrom calc.ops import add, clamp\\n\\n\\ndef test_add():\\n"
    "    assert add(1, 2) == 3\\n\\n\\n@pytest.mark.parametrize(\"a,b,want\", [(1, 2, 3)])\\n"
    "def test_add_many(a, b, want):\\n    assert add(a, b) == want\\n\\n\\nclass TestClamp:\\n"
    "    def test_low(self):\\n        assert clamp(-5, 0, 10) == 0\\n' > tests/test_ops.py; "
    "git add -A; git commit -q -m base; git rev-parse HEAD > ../base; "
    "sed -i 's/        return lo$/        return hi/; 7s/return hi/return lo/' calc/ops.py; "
    "printf '\\n    def test_high(self):\\n        assert clamp(50, 0, 10) == 10\\n\\n\\n"
    "@pytest.mark.parametrize(\"x,want\", [(20, 10), (5, 5)])\\ndef test_clamp_many(x, want):\\n"
    "    assert clamp(x, 0, 10) == want\\n' >> tests/test_ops.py; "
    "git commit -q -am fix; git rev-parse HEAD > ../fixed; "
    "git diff $(cat ../base) HEAD -- calc > ../patch; git diff $(cat ../base) HEAD -- tests > ../test_patch";

static char *slurp(const char *name)
{
    char p[512], *s, err[RL_ERR_MAX];
    size_t n;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    ck_assert_msg(fs_read_file(&s, &n, p, 1 << 20, err) == 0, "%s", err);
    return s;
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/rl-swb-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char cmd[4096], *out;
    snprintf(cmd, sizeof cmd, SETUP, dir);
    char full[4200];
    snprintf(full, sizeof full, "(%s) 2>&1", cmd);
    int rc = run(&out, full);
    ck_assert_msg(rc == 0, "fixture: %s", out);
    free(out);
    char *b = slurp("base"), *f = slurp("fixed");
    memcpy(base, b, 40);
    memcpy(fixed, f, 40);
    base[40] = fixed[40] = 0;
    free(b);
    free(f);
}

static void teardown(void)
{
    fs_remove_tree(dir, NULL);
}

/* Writes dir/NAME with one instance per line: the good instance changed by
 * `edit` (NULL: as is). */
static void write_instances(const char *name, void (*edit)(cJSON *))
{
    char *patch = slurp("patch"), *tpatch = slurp("test_patch");
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "repo", "example/calc");
    cJSON_AddStringToObject(o, "instance_id", "example__calc-1");
    cJSON_AddStringToObject(o, "base_commit", base);
    cJSON_AddStringToObject(o, "patch", patch);
    cJSON_AddStringToObject(o, "test_patch", tpatch);
    cJSON_AddStringToObject(o, "problem_statement", "clamp() returns lo for values above hi\n");
    cJSON_AddStringToObject(o, "hints_text", "");
    cJSON_AddStringToObject(o, "created_at", "2024-01-02T03:04:05Z");
    cJSON_AddStringToObject(o, "version", "1.0");
    /* SWE-bench's datasets ship the lists as JSON-encoded strings */
    cJSON_AddStringToObject(o, "FAIL_TO_PASS",
                            "[\"tests/test_ops.py::TestClamp::test_high\", \"tests/test_ops.py::test_clamp_many[20-10]\"]");
    cJSON *p2p = cJSON_AddArrayToObject(o, "PASS_TO_PASS");
    cJSON_AddItemToArray(p2p, cJSON_CreateString("tests/test_ops.py::test_add"));
    cJSON_AddItemToArray(p2p, cJSON_CreateString("tests/test_ops.py::test_add_many[1-2-3]"));
    cJSON_AddItemToArray(p2p, cJSON_CreateString("tests/test_ops.py::TestClamp::test_low"));
    cJSON_AddItemToArray(p2p, cJSON_CreateString("tests/test_ops.py::test_clamp_many[5-5]"));
    cJSON_AddStringToObject(o, "environment_setup_commit", base);
    if (edit)
        edit(o);
    char *s = cJSON_PrintUnformatted(o), path[512], err[RL_ERR_MAX];
    size_t n = strlen(s);
    char *line = malloc(n + 2);
    memcpy(line, s, n);
    line[n] = '\n';
    line[n + 1] = 0;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ck_assert_int_eq(fs_write_atomic(path, line, n + 1, err), 0);
    free(line);
    cJSON_free(s);
    cJSON_Delete(o);
    free(patch);
    free(tpatch);
}

static int import(char **out, const char *file, const char *more)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "%s/harness import --swebench %s/%s --out %s/out --repo example/calc=%s/up "
             "--test-cmd 'python3 -m pytest -q -p no:cacheprovider tests' --test-format junit %s 2>&1",
             bin(), dir, file, dir, dir, more);
    return run(out, cmd);
}

/* ---- import, validate, oracle, export ------------------------------------------ */

START_TEST(test_import_round_trip)
{
    char *out, cmd[2048], err[RL_ERR_MAX];
    write_instances("inst.jsonl", NULL);
    ck_assert_msg(import(&out, "inst.jsonl", "--runs 2") == 0, "%s", out);
    ck_assert_msg(strstr(out, "example__calc-1: ok (F2P 2, P2P 4") && strstr(out, "1 instances, 1 imported, 0 failed"),
                  "%s", out);
    free(out);

    /* the task: mapped ids, test_patch as bug, protected test file, extra fields */
    char path[512];
    snprintf(path, sizeof path, "%s/out/tasks/example__calc-1.json", dir);
    char repos[512];
    snprintf(repos, sizeof repos, "%s/out/repos", dir);
    task *t;
    ck_assert_msg(task_load(&t, path, repos, err) == 0, "%s", err);
    ck_assert_str_eq(t->repo, "example__calc-1");
    ck_assert_int_eq(t->fail_to_pass.n, 2);
    ck_assert_str_eq(t->fail_to_pass.v[0], "test_high");
    ck_assert_str_eq(t->fail_to_pass.v[1], "test_clamp_many[20-10]");
    ck_assert_int_eq(t->pass_to_pass.n, 4);
    ck_assert_str_eq(t->pass_to_pass.v[1], "test_add_many[1-2-3]");
    /* the test file and, at the root, the runner's conftest.py */
    ck_assert_int_eq(t->protected_paths.n, 2);
    ck_assert_str_eq(t->protected_paths.v[0], "tests/test_ops.py");
    ck_assert_str_eq(t->protected_paths.v[1], "conftest.py");
    char *tp = slurp("test_patch");
    ck_assert_str_eq(t->bug, tp);
    free(tp);
    ck_assert_int_eq(t->kind, TASK_KIND_SINGLE_EDIT);
    cJSON *x = cJSON_Parse(t->extra);
    ck_assert_str_eq(cJSON_GetObjectItem(x, "base_commit")->valuestring, base);
    ck_assert_str_eq(cJSON_GetObjectItem(x, "repo")->valuestring, "example/calc");
    ck_assert_str_eq(cJSON_GetObjectItem(x, "version")->valuestring, "1.0");
    ck_assert_ptr_nonnull(cJSON_GetObjectItem(x, "FAIL_TO_PASS"));
    ck_assert_ptr_null(cJSON_GetObjectItem(x, "test_patch"));
    cJSON_Delete(x);
    task_free(t);
    /* the snapshot is the tree at base_commit, not the repository's HEAD */
    snprintf(cmd, sizeof cmd, "grep -c 'return lo' %s/out/repos/example__calc-1/calc/ops.py", dir);
    ck_assert_int_eq(run(&out, cmd), 0);
    ck_assert_str_eq(out, "2\n");
    free(out);

    /* validate, as for any task */
    snprintf(cmd, sizeof cmd, "%s/harness validate --task example__calc-1 --tasks-dir %s/out/tasks --repos-dir %s "
             "--runs 2 --progress plain 2>&1", bin(), dir, repos);
    ck_assert_msg(run(&out, cmd) == 0, "%s", out);
    ck_assert_msg(strstr(out, "1 tasks, 1 valid, 0 failed"), "%s", out);
    free(out);

    /* the oracle resolves it */
    snprintf(cmd, sizeof cmd, "%s/harness run --task example__calc-1 --tasks-dir %s/out/tasks --repos-dir %s "
             "--policy oracle --out %s/rec.jsonl > /dev/null 2>&1", bin(), dir, repos, dir);
    ck_assert_int_eq(run(&out, cmd), 0);
    free(out);
    char *rec = slurp("rec.jsonl");
    cJSON *r = cJSON_Parse(rec);
    ck_assert_msg(r && cJSON_GetObjectItem(r, "reward")->valueint == 1, "%.300s", rec);
    cJSON_Delete(r);
    /* a second record without a patch */
    char recs[512];
    snprintf(recs, sizeof recs, "%s/recs.jsonl", dir);
    FILE *f = fopen(recs, "w");
    fprintf(f, "%s{\"task\":\"example__calc-1\",\"config\":{\"policy\":\"search\"},\"patch\":null,\"reward\":0}\n", rec);
    fclose(f);
    free(rec);

    snprintf(cmd, sizeof cmd, "%s/harness export --predictions %s/preds.jsonl --from %s --model-name rl-fix-test 2>&1",
             bin(), dir, recs);
    ck_assert_msg(run(&out, cmd) == 0, "%s", out);
    ck_assert_msg(strstr(out, "2 predictions, 1 with an empty model_patch"), "%s", out);
    free(out);
    char *preds = slurp("preds.jsonl");
    ck_assert_int_eq(count_lines(preds), 2);
    char *nl = strchr(preds, '\n');
    *nl = 0;
    cJSON *p = cJSON_Parse(preds), *q = cJSON_Parse(nl + 1);
    ck_assert_int_eq(cJSON_GetArraySize(p), 3);
    ck_assert_str_eq(cJSON_GetObjectItem(p, "instance_id")->valuestring, "example__calc-1");
    ck_assert_str_eq(cJSON_GetObjectItem(p, "model_name_or_path")->valuestring, "rl-fix-test");
    const char *mp = cJSON_GetObjectItem(p, "model_patch")->valuestring;
    /* the gold patch: it applies at the fixed commit's parent and gives the fixed tree */
    snprintf(path, sizeof path, "%s/model.patch", dir);
    ck_assert_int_eq(fs_write_atomic(path, mp, strlen(mp), err), 0);
    snprintf(cmd, sizeof cmd, "cd %s/up && git checkout -q %s && git apply %s/model.patch && git diff --quiet %s -- calc "
             "&& echo same 2>&1", dir, base, dir, fixed);
    ck_assert_int_eq(run(&out, cmd), 0);
    ck_assert_str_eq(out, "same\n");
    free(out);
    ck_assert_str_eq(cJSON_GetObjectItem(q, "model_patch")->valuestring, "");
    cJSON_Delete(p);
    cJSON_Delete(q);
    free(preds);
}
END_TEST

/* ---- bad inputs ------------------------------------------------------------------ */

static void drop_base(cJSON *o) { cJSON_DeleteItemFromObject(o, "base_commit"); }
static void other_repo(cJSON *o) { cJSON_ReplaceItemInObject(o, "repo", cJSON_CreateString("example/other")); }
static void absent_commit(cJSON *o)
{
    cJSON_ReplaceItemInObject(o, "base_commit", cJSON_CreateString("0123456789abcdef0123456789abcdef01234567"));
}
static void missing_test(cJSON *o)
{
    cJSON_ReplaceItemInObject(o, "FAIL_TO_PASS", cJSON_CreateString("[\"tests/test_ops.py::TestClamp::test_high\", "
                                                                    "\"tests/test_ops.py::TestClamp::test_nothing\"]"));
}
static void bad_list(cJSON *o) { cJSON_ReplaceItemInObject(o, "PASS_TO_PASS", cJSON_CreateString("not json")); }
static void bad_id(cJSON *o)
{
    cJSON_ReplaceItemInObject(o, "FAIL_TO_PASS", cJSON_CreateString("[\"tests/test_ops.py::\"]"));
}

static const struct {
    void (*edit)(cJSON *);
    const char *expect;
} BAD[] = {
    {drop_base, "inst.jsonl:1: field \"base_commit\": missing (required field)"},
    {other_repo, "inst.jsonl:1: repo \"example/other\": no --repo example/other=DIR given for it"},
    {absent_commit, "field \"base_commit\": commit 0123456789abcdef0123456789abcdef01234567 is not in"},
    {missing_test, "example__calc-1: not valid: test id 'tests/test_ops.py::TestClamp::test_nothing' (read as "
                   "test_nothing) matches no test the run reports (with the gold patch; or the run stopped before it)"},
    {bad_list, "inst.jsonl:1: field \"PASS_TO_PASS\": expected an array of test ids"},
    {bad_id, "inst.jsonl:1: field \"FAIL_TO_PASS\": test id 'tests/test_ops.py::' maps to no test name"},
};

START_TEST(test_import_errors)
{
    char *out;
    write_instances("inst.jsonl", BAD[_i].edit);
    ck_assert_int_eq(import(&out, "inst.jsonl", ""), 1);
    ck_assert_msg(strstr(out, BAD[_i].expect), "case %d: %s", _i, out);
    /* one line for the instance, one for the summary */
    ck_assert_msg(count_lines(out) == 2 && strstr(out, "1 instances, 0 imported, 1 failed"), "%s", out);
    free(out);
    char p[512];
    snprintf(p, sizeof p, "%s/out/tasks/example__calc-1.json", dir);
    ck_assert_int_ne(access(p, F_OK), 0);
    snprintf(p, sizeof p, "%s/out/repos/example__calc-1", dir);
    ck_assert_int_eq(fs_is_dir(p), 0);
}
END_TEST

START_TEST(test_usage_errors)
{
    char *out, cmd[1024];
    const char *args[] = {
        "--swebench x.jsonl --repo a=b --test-cmd true",               /* no --out */
        "--swebench x.jsonl --out o --test-cmd true --repo a=b",       /* --test-cmd before --repo */
        "--swebench x.jsonl --out o --repo a --test-cmd true",         /* no '=' */
        "--swebench x.jsonl --out o --repo a=b --test-format xml",
        "--swebench x.jsonl --out o --repo a=b --runs 0",
        "--bogus",
    };
    for (size_t i = 0; i < sizeof args / sizeof *args; i++) {
        snprintf(cmd, sizeof cmd, "%s/harness import %s 2>&1", bin(), args[i]);
        ck_assert_int_eq(run(&out, cmd), 2);
        ck_assert_msg(count_lines(out) == 1 && !strncmp(out, "harness import: ", 16), "%s", out);
        free(out);
    }
    snprintf(cmd, sizeof cmd, "%s/harness import --swebench %s/none.jsonl --out %s/o --repo a=b --test-cmd true 2>&1",
             bin(), dir, dir);
    ck_assert_int_eq(run(&out, cmd), 1);
    ck_assert_msg(strstr(out, "none.jsonl") && count_lines(out) == 1, "%s", out);
    free(out);

    snprintf(cmd, sizeof cmd, "%s/harness export --predictions %s/p.jsonl 2>&1", bin(), dir);
    ck_assert_int_eq(run(&out, cmd), 2);
    ck_assert_msg(count_lines(out) == 1, "%s", out);
    free(out);
    char recs[512];
    snprintf(recs, sizeof recs, "%s/bad.jsonl", dir);
    FILE *f = fopen(recs, "w");
    fprintf(f, "{\"task\":\"a\",\"config\":{\"policy\":\"oracle\"},\"patch\":\"\"}\nnot json\n");
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s/harness export --predictions %s/p.jsonl --from %s 2>&1", bin(), dir, recs);
    ck_assert_int_eq(run(&out, cmd), 1);
    ck_assert_msg(strstr(out, "bad.jsonl:2: expected a trajectory record") && count_lines(out) == 1, "%s", out);
    free(out);
    char p[512];
    snprintf(p, sizeof p, "%s/p.jsonl", dir);
    ck_assert_int_ne(access(p, F_OK), 0); /* nothing written */
    f = fopen(recs, "w");
    fprintf(f, "{\"config\":{\"policy\":\"oracle\"},\"patch\":\"\"}\n");
    fclose(f);
    ck_assert_int_eq(run(&out, cmd), 1);
    ck_assert_msg(strstr(out, "bad.jsonl:1: field \"task\"") && count_lines(out) == 1, "%s", out);
    free(out);
}
END_TEST

/* Repositories from a spec file instead of --repo flags. */
START_TEST(test_import_spec)
{
    char *out, cmd[2048], path[512], err[RL_ERR_MAX];
    write_instances("inst.jsonl", NULL);
    snprintf(path, sizeof path, "%s/spec.json", dir);
    char spec[1024];
    snprintf(spec, sizeof spec,
             "{\"example/calc\": {\"dir\": \"%s/up\", \"test_cmd\": \"python3 -m pytest -q tests\", "
             "\"test_format\": \"junit\", \"timeout_s\": 90}}\n", dir);
    ck_assert_int_eq(fs_write_atomic(path, spec, strlen(spec), err), 0);
    snprintf(cmd, sizeof cmd, "%s/harness import --swebench %s/inst.jsonl --out %s/out --spec %s --no-validate 2>&1",
             bin(), dir, dir, path);
    ck_assert_msg(run(&out, cmd) == 0, "%s", out);
    ck_assert_msg(strstr(out, "example__calc-1: written (not validated)"), "%s", out);
    free(out);
    char tpath[512], repos[512];
    snprintf(tpath, sizeof tpath, "%s/out/tasks/example__calc-1.json", dir);
    snprintf(repos, sizeof repos, "%s/out/repos", dir);
    task *t;
    ck_assert_msg(task_load(&t, tpath, repos, err) == 0, "%s", err);
    ck_assert_str_eq(t->test_cmd, "python3 -m pytest -q tests");
    ck_assert_int_eq(t->timeout_s, 90);
    task_free(t);
    const char *bad = "{\"example/calc\": {\"test_cmd\": \"true\"}}";
    ck_assert_int_eq(fs_write_atomic(path, bad, strlen(bad), err), 0);
    ck_assert_int_eq(run(&out, cmd), 2);
    ck_assert_msg(strstr(out, "\"example/calc\": field \"dir\": expected a string") && count_lines(out) == 1, "%s",
                  out);
    free(out);
}
END_TEST

Suite *swebench_suite(void)
{
    Suite *s = suite_create("swebench");
    TCase *tc = tcase_create("ids");
    tcase_add_test(tc, test_id_mapping);
    suite_add_tcase(s, tc);
    tc = tcase_create("import");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_import_round_trip);
    tcase_add_loop_test(tc, test_import_errors, 0, (int)(sizeof BAD / sizeof BAD[0]));
    tcase_add_test(tc, test_usage_errors);
    tcase_add_test(tc, test_import_spec);
    tcase_set_timeout(tc, 240);
    suite_add_tcase(s, tc);
    return s;
}
