/* test_search.c - Check suite for the search policy (policy/search*.c).
 *
 * Unit tests of its readers (run_tests summaries, read_file listings,
 * search hits, the prompt detector) and of its candidates, then real
 * episodes through ep_run on tasks/leapyear.json in a work tree under a
 * temp dir: it solves the task, the same seed gives the same texts,
 * another seed another trajectory, a minimal prompt makes it submit
 * without running the tests. Last, hand-made contexts with odd tool
 * responses: the policy never crashes, never writes a malformed call and
 * always ends.
 */
#include "policy/search.h"

#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "protocol/chat.h"
#include "protocol/template.h"
#include "harness/episode.h"
#include "protocol/toolcall.h"
#include "harness/tools.h"
#include "harness/workspace.h"
#include "policy/policy.h"
#include "policy/scripted.h"
#include "corpus/task.h"

#include <cJSON.h>
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- readers ---------------------------------------------------------- */

START_TEST(test_parse_tests_summary)
{
    const char *obs = "7 passed, 3 failed\n"
                      "fail test_a: Assertion 'f(1) == 2' failed: f(1) == 3, 2 == 2\n"
                      "error test_b: Traceback line one\n"
                      "  File \"pkg/mod.py\", line 3\n"
                      "[... 120 bytes cut ...]\n"
                      "pkg/mod.py:33: ValueError\n"
                      "fail tests/t.py::test_c[2]: assert 1 == 2\n";
    search_result r;
    search_parse_tests(&r, obs);
    ck_assert(r.parsed);
    ck_assert(r.ran);
    ck_assert_int_eq(r.passed, 7);
    ck_assert_int_eq(r.failed, 3);
    ck_assert_uint_eq(r.nfail, 3);
    ck_assert_str_eq(r.fail[0].name, "test_a");
    ck_assert_str_eq(r.fail[1].name, "test_b");
    ck_assert_str_eq(r.fail[2].name, "tests/t.py::test_c[2]");
    /* The message keeps its continuation lines, past an in-message cut. */
    ck_assert_ptr_nonnull(strstr(r.fail[1].msg, "pkg/mod.py:33: ValueError"));
    ck_assert(!r.cut);
    ck_assert(search_result_has(&r, "test_b"));
    ck_assert(!search_result_has(&r, "test_z"));
    search_result_dispose(&r);

    /* A build error: no test ran. */
    search_parse_tests(&r, "0 passed, 0 failed\nexit status 2; output:\nsrc/a.c:3: error: expected ';'\n");
    ck_assert(r.parsed);
    ck_assert(!r.ran);
    search_result_dispose(&r);

    /* The observation budget cut names away: the result says so. */
    search_parse_tests(&r, "1 passed, 4 failed\nfail t1: x\n[... 900 bytes (12 lines) cut ...]\nfail t4: y\n");
    ck_assert(r.cut);
    ck_assert_uint_eq(r.nfail, 2);
    search_result_dispose(&r);

    /* Not a summary at all. */
    search_parse_tests(&r, "error: run_tests: sandbox unavailable");
    ck_assert(!r.parsed);
    ck_assert(!r.ran);
    search_result_dispose(&r);
}
END_TEST

START_TEST(test_parse_read_listing)
{
    search_file f = {0};
    f.path = strdup("src/a.c");
    ck_assert_int_eq(search_parse_read(&f, "src/a.c: lines 1-4 of 5\n1| int f(void)\n2| {\n3|\n4|     return 1;\n"), 0);
    ck_assert_uint_eq(f.n, 5);
    ck_assert(!search_file_complete(&f));
    size_t a, b;
    ck_assert(search_file_gap(&f, &a, &b));
    ck_assert_uint_eq(a, 5);
    ck_assert_uint_eq(b, 5);
    ck_assert_str_eq(f.line[2], "");
    ck_assert_str_eq(f.line[3], "    return 1;");
    ck_assert_int_eq(search_parse_read(&f, "src/a.c: lines 5-5 of 5\n5| }\n"), 0);
    ck_assert(search_file_complete(&f));
    size_t len;
    char *t = search_file_text(&f, &len);
    ck_assert_str_eq(t, "int f(void)\n{\n\n    return 1;\n}\n");
    free(t);
    /* Another file's listing, an error, a header with absurd numbers. */
    ck_assert_int_lt(search_parse_read(&f, "src/b.c: lines 1-1 of 1\n1| x\n"), 0);
    ck_assert_int_lt(search_parse_read(&f, "error: src/a.c: no such file"), 0);
    ck_assert_int_lt(search_parse_read(&f, "src/a.c: lines 1-99999999 of 99999999\n1| x\n"), 0);
    ck_assert(search_file_complete(&f));
    search_file_dispose(&f);

    /* Lines next to the budget's cut marker may be partial: dropped. */
    search_file g = {0};
    g.path = strdup("b.py");
    ck_assert_int_eq(search_parse_read(&g, "b.py: lines 1-6 of 6\n 1| a = 1\n 2| b = 2\n 3| c = 3xx\n"
                                           "[... 40 bytes (2 lines) cut ...]\n 5| e = 5\n 6| f = 6\n"), 0);
    ck_assert_str_eq(g.line[0], "a = 1");
    ck_assert_ptr_null(g.line[2]);
    ck_assert_ptr_null(g.line[3]);
    ck_assert_ptr_null(g.line[4]);
    ck_assert_str_eq(g.line[5], "f = 6");
    search_file_dispose(&g);
}
END_TEST

START_TEST(test_parse_search_hits)
{
    search_hit *h;
    size_t n = search_parse_search(&h, "src/leap.c:21: bool is_leap(int y)\nnot a hit\nsrc/x.c:abc: no\n"
                                       "tests/t.c:5:     ck_assert(is_leap(4));\n[showing 2 of 9 matches]\n",
                                   10);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(h[0].path, "src/leap.c");
    ck_assert_int_eq(h[0].line, 21);
    ck_assert_str_eq(h[0].text, "bool is_leap(int y)");
    ck_assert_int_eq(h[1].line, 5);
    ck_assert(search_line_defines(h[0].text, "is_leap"));
    ck_assert(!search_line_defines(h[1].text, "is_leap"));
    ck_assert(!search_line_defines("int is_leap(int y);", "is_leap"));
    ck_assert(search_line_defines("    def touches(self, other):", "touches"));
    ck_assert(search_line_defines("class Interval:", "Interval"));
    search_hits_free(h, n);
}
END_TEST

START_TEST(test_prompt_detection)
{
    char err[RL_ERR_MAX], *v1, *v2;
    ck_assert_int_eq(tpl_load_prompt(&v1, "prompts", "v1", err), 0);
    ck_assert_int_eq(tpl_load_prompt(&v2, "prompts", "v2", err), 0);
    ck_assert(!search_prompt_wants_verify(v1));
    ck_assert(search_prompt_wants_verify(v2));
    ck_assert(search_prompt_wants_verify("Start by running the tests. Re-run them after each edit. "
                                         "Submit only when the tests pass."));
    ck_assert(!search_prompt_wants_verify("Fix the bug and submit."));
    ck_assert(!search_prompt_wants_verify(""));
    free(v1);
    free(v2);
}
END_TEST

/* ---- candidates ---------------------------------------------------------- */

static const char *LEAP_C = "int is_leap(int y)\n"
                            "{\n"
                            "    if (y % 100 == 0 && y % 400 == 0)\n"
                            "        return 0;\n"
                            "    return y % 4 == 0;\n"
                            "}\n"
                            "\n"
                            "int days(int y)\n"
                            "{\n"
                            "    return is_leap(y) ? 366 : 365;\n"
                            "}\n";

static size_t leap_cands(search_cand **v, uint64_t seed, int level_leap, double temperature)
{
    search_file f = {0};
    f.path = strdup("src/leap.c");
    f.lang = MUT_LANG_C;
    ck_assert_int_eq(search_file_set_text(&f, LEAP_C, strlen(LEAP_C)), 0);
    search_def *defs;
    size_t nd = search_find_defs(&defs, LEAP_C, strlen(LEAP_C), MUT_LANG_C, 100);
    ck_assert_uint_eq(nd, 2);
    ck_assert_str_eq(defs[0].name, "is_leap");
    ck_assert_int_eq(defs[0].start, 1);
    ck_assert_int_eq(defs[0].end, 6);
    defs[0].level = level_leap;
    defs[1].level = 0;
    defs[0].reach = defs[1].reach = 1;
    search_rank_in in = {"is_leap(1900) returns 1, expected 0; divisible by 400", "", seed, NULL, NULL, 0,
                     NULL, NULL, 0, NULL, 0, 0, temperature, NULL, NULL, 0};
    size_t cap = 0;
    *v = NULL;
    size_t n = search_cands_for_file(v, 0, &cap, 1000, 0, &f, defs, nd, &in);
    search_cands_sort(*v, n);
    free(defs);
    search_file_dispose(&f);
    return n;
}

START_TEST(test_candidates_hold_the_fix)
{
    search_cand *v;
    size_t n = leap_cands(&v, 1, 0, 0);
    ck_assert_uint_gt(n, 10);
    int found = -1;
    for (size_t i = 0; i < n; i++) {
        /* Every edit block is unique in the file, so edit_file accepts it. */
        const char *p = strstr(LEAP_C, v[i].old_block);
        ck_assert_ptr_nonnull(p);
        ck_assert_ptr_null(strstr(p + 1, v[i].old_block));
        ck_assert_str_ne(v[i].old_block, v[i].new_block);
        if (found < 0 && strstr(v[i].new_block, "y % 100 == 0 && y % 400 != 0"))
            found = (int)i;
    }
    ck_assert_int_ge(found, 0);
    /* Ranked among the first few: a flip in the function the test calls,
     * on a line holding a number the problem mentions. */
    ck_assert_int_lt(found, 8);
    for (size_t i = 0; i < n; i++)
        search_cand_dispose(&v[i]);
    free(v);
}
END_TEST

START_TEST(test_candidates_seed_order)
{
    search_cand *a, *b;
    size_t na = leap_cands(&a, 1, 0, 0), nb = leap_cands(&b, 2, 0, 0);
    ck_assert_uint_eq(na, nb);
    int differ = 0;
    for (size_t i = 0; i < na; i++) {
        /* Scores are the seed's business only within equal ranks. */
        ck_assert_int_eq(a[i].score, b[i].score);
        differ |= a[i].key != b[i].key;
    }
    ck_assert(differ);
    search_cand *c;
    ck_assert_uint_eq(leap_cands(&c, 1, 0, 0), na);
    for (size_t i = 0; i < na; i++)
        ck_assert(a[i].key == c[i].key);
    for (size_t i = 0; i < na; i++) {
        search_cand_dispose(&a[i]);
        search_cand_dispose(&b[i]);
        search_cand_dispose(&c[i]);
    }
    free(a);
    free(b);
    free(c);
    /* At a temperature the seed's noise moves scores too: another seed,
     * another order; the same seed, the same one. */
    na = leap_cands(&a, 1, 0, 0.7);
    nb = leap_cands(&b, 2, 0, 0.7);
    ck_assert_uint_eq(leap_cands(&c, 1, 0, 0.7), na);
    int scores_differ = 0;
    for (size_t i = 0; i < na; i++) {
        scores_differ |= a[i].score != b[i].score || a[i].key != b[i].key;
        ck_assert(a[i].key == c[i].key && a[i].score == c[i].score);
    }
    ck_assert(scores_differ);
    for (size_t i = 0; i < na; i++) {
        search_cand_dispose(&a[i]);
        search_cand_dispose(&b[i]);
        search_cand_dispose(&c[i]);
    }
    free(a);
    free(b);
    free(c);
}
END_TEST

START_TEST(test_python_defs)
{
    const char *py = "class Interval:\n"
                     "    \"\"\"Half-open.\n"
                     "def not_a_def(x):\n"
                     "    \"\"\"\n"
                     "    def touches(self, other):\n"
                     "        return self.lo <= other.hi and other.lo <= self.hi\n"
                     "\n"
                     "    def hull(self, other):\n"
                     "        return Interval(min(self.lo, other.lo), max(self.hi, other.hi))\n"
                     "\n"
                     "def merge(a, b):\n"
                     "    return a.hull(b)\n";
    search_def *d;
    size_t n = search_find_defs(&d, py, strlen(py), MUT_LANG_PY, 100);
    ck_assert_uint_eq(n, 4);
    ck_assert_str_eq(d[0].name, "Interval");
    ck_assert(d[0].is_class);
    ck_assert_int_eq(d[0].end, 9);
    ck_assert_str_eq(d[1].name, "touches");
    ck_assert_str_eq(d[1].cls, "Interval");
    ck_assert_int_eq(d[1].start, 5);
    ck_assert_int_eq(d[1].end, 6);
    ck_assert_str_eq(d[3].name, "merge");
    ck_assert_str_eq(d[3].cls, "");
    free(d);
    char names[16][SR_NAME_MAX];
    size_t nn = search_refs(names, 0, 16, py, strlen(py), MUT_LANG_PY, 9, 9, 0);
    /* hull's body makes an Interval; min and max are builtins */
    ck_assert_uint_eq(nn, 1);
    ck_assert_str_eq(names[0], "Interval");
}
END_TEST

/* ---- real episodes ------------------------------------------------------- */

static char g_root[128];

static void ws_setup(void)
{
    snprintf(g_root, sizeof g_root, "/tmp/rl-test-search-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(g_root));
    /* The sandboxed test command runs as another uid: it must be able to
     * walk down to the work tree. */
    ck_assert_int_eq(chmod(g_root, 0755), 0);
}

static void ws_teardown(void)
{
    char err[RL_ERR_MAX];
    fs_remove_tree(g_root, err);
}

typedef struct run {
    char *record;
    cJSON *json;
    double reward;
} run;

static void run_free(run *r)
{
    free(r->record);
    cJSON_Delete(r->json);
    memset(r, 0, sizeof *r);
}

static void episode(run *out, const char *task_id, const char *prompt, uint64_t seed, int max_turns)
{
    char err[RL_ERR_MAX], path[256];
    snprintf(path, sizeof path, "tasks/%s.json", task_id);
    task *t;
    ck_assert_msg(task_load(&t, path, "repos", err) == 0, "%s", err);
    ep_config cfg;
    ep_config_default(&cfg);
    cfg.policy = "search";
    cfg.prompt = prompt;
    cfg.seed = seed;
    cfg.max_turns = max_turns;
    pol_env env;
    pol_env_default(&env);
    env.seed = seed;
    env.temperature = cfg.temperature; /* as batch and run pass it */
    policy *pol;
    ck_assert_msg(pol_open(&pol, "search", &env, err) == 0, "%s", err);
    ws_opts wo;
    ws_opts_default(&wo);
    wo.root = g_root;
    ws_tree *ws;
    ck_assert_msg(ws_open(&ws, &wo, t->repo, t->instance_id, t->bug, 0, err) == 0, "%s", err);
    memset(out, 0, sizeof *out);
    ck_assert_msg(ep_run(&out->record, t, &cfg, ws, pol, err) == 0, "%s", err);
    out->json = cJSON_Parse(out->record);
    ck_assert_ptr_nonnull(out->json);
    cJSON *rw = cJSON_GetObjectItem(out->json, "reward");
    ck_assert(cJSON_IsNumber(rw));
    out->reward = rw->valuedouble;
    ws_free(ws);
    pol_free(pol);
    task_free(t);
}

/* Concatenation of the generated texts of every turn. */
static char *generated(const run *r)
{
    buf_t b;
    buf_init(&b, 0);
    cJSON *turns = cJSON_GetObjectItem(r->json, "turns"), *t;
    cJSON_ArrayForEach(t, turns)
    {
        cJSON *g = cJSON_GetObjectItem(t, "generated");
        buf_puts(&b, cJSON_IsString(g) ? g->valuestring : "?");
        buf_puts(&b, "\n----\n");
    }
    return buf_detach(&b, NULL);
}

/* Names of the tools called, in order, space-separated. */
static char *tools_called(const run *r)
{
    buf_t b;
    buf_init(&b, 0);
    cJSON *turns = cJSON_GetObjectItem(r->json, "turns"), *t, *c;
    cJSON_ArrayForEach(t, turns)
    {
        cJSON_ArrayForEach(c, cJSON_GetObjectItem(t, "tool_calls"))
        {
            cJSON *nm = cJSON_GetObjectItem(c, "name");
            buf_printf(&b, "%s ", cJSON_IsString(nm) ? nm->valuestring : "?");
        }
    }
    return buf_detach(&b, NULL);
}

START_TEST(test_solves_leapyear)
{
    run r;
    episode(&r, "leapyear", "v2", 1, 50);
    ck_assert_msg(r.reward == 1.0, "reward %g: %.3000s", r.reward, r.record);
    char *calls = tools_called(&r);
    /* the verify loop: tests first, an edit, tests again, submit */
    ck_assert_msg(!strncmp(calls, "run_tests ", 10), "%s", calls);
    ck_assert_ptr_nonnull(strstr(calls, "edit_file run_tests "));
    ck_assert_ptr_nonnull(strstr(calls, "submit"));
    free(calls);
    cJSON *end = cJSON_GetObjectItem(r.json, "end_reason");
    ck_assert_str_eq(end->valuestring, "submit");
    run_free(&r);
}
END_TEST

START_TEST(test_same_seed_same_texts)
{
    run a, b;
    episode(&a, "leapyear", "v2", 7, 50);
    episode(&b, "leapyear", "v2", 7, 50);
    char *ga = generated(&a), *gb = generated(&b);
    ck_assert_str_eq(ga, gb);
    ck_assert(a.reward == b.reward);
    free(ga);
    free(gb);
    run_free(&a);
    run_free(&b);
}
END_TEST

START_TEST(test_seeds_differ)
{
    /* The order in which failing tests are followed and equally ranked
     * candidates are tried depends on the seed. */
    char *g[4];
    int differ = 0;
    for (int s = 0; s < 4; s++) {
        run r;
        episode(&r, "leapyear", "v2", (uint64_t)s + 1, 50);
        g[s] = generated(&r);
        run_free(&r);
        for (int q = 0; q < s; q++)
            differ |= strcmp(g[q], g[s]) != 0;
    }
    ck_assert(differ);
    for (int s = 0; s < 4; s++)
        free(g[s]);
}
END_TEST

START_TEST(test_minimal_prompt_skips_tests)
{
    run r1, r2;
    episode(&r1, "leapyear", "v1", 1, 50);
    episode(&r2, "leapyear", "v2", 1, 50);
    char *c1 = tools_called(&r1), *c2 = tools_called(&r2);
    ck_assert_msg(!strstr(c1, "run_tests"), "v1 ran the tests: %s", c1);
    ck_assert_msg(strstr(c1, "edit_file") && strstr(c1, "submit"), "%s", c1);
    ck_assert_msg(strstr(c2, "run_tests"), "%s", c2);
    free(c1);
    free(c2);
    run_free(&r1);
    run_free(&r2);
}
END_TEST

/* ---- odd observations --------------------------------------------------- */

static const char *const ODD[] = {
    "",
    "error: path src/x.c leads outside the work tree (through a symlink): refused",
    "8 passed, 3 failed\nfail test_a: Assertion 'f(1) == 2' failed\nfail test_b: x\nfail test_c: y\n",
    "src/a.c:1: int f(void)\n../../etc/passwd:1: root\n/abs/p.c:2: g(\n:3: x\na:b:c\n",
    "src/a.c: lines 1-3 of 3\n1| int f(int a)\n2| { return a < 1; }\n3|\n",
    "src/a.c: lines 1-2 of 99999999\n1| x\n",
    "src/a.c: lines 5-1 of 3\n",
    "tests/t.c:7: START_TEST(test_a)\ntests/t.c:8: { ck_assert(f(1) == 2); }\n",
    "tests/t.c: lines 7-9 of 9\n7| START_TEST(test_a)\n8| { ck_assert(f(1) == 2); }\n9| END_TEST\n",
    "[... 99999 bytes (12 lines) cut ...]",
    "\xff\xfe\x01garbage\x7f<tool_call>",
    "0 passed, 0 failed\nexit status 2; output:\nsrc/a.c:2: error: expected ';'\n",
    "edited src/a.c: lines 2-2 replaced; the new text is at lines 2-2:\n2| { return a <= 1; }\n",
    "error: old_string not found in src/a.c",
    "test command timed out after 60000 ms\n3 passed, 1 failed\nfail test_a: timeout\n",
    "fail : \nfail x\n12345678901234567890 passed, -1 failed\n",
};

/* Plays an episode against hand-made observations: every reply must
 * parse, and the policy must end (submit or no call) in bounded turns. */
static void play_odd(const char *prompt_name, int think, uint64_t seed)
{
    char err[RL_ERR_MAX], *prompt;
    ck_assert_int_eq(tpl_load_prompt(&prompt, "prompts", prompt_name, err), 0);
    pol_env env;
    pol_env_default(&env);
    env.seed = seed;
    policy *pol;
    ck_assert_int_eq(pol_open(&pol, "search", &env, err), 0);
    chat *c;
    ck_assert_int_eq(chat_new(&c, NULL), 0);
    ck_assert_int_eq(chat_add_system(c, prompt, err), 0);
    ck_assert_int_eq(chat_add_user(c, "f(1) returns 3 in src/a.c, expected 2; see test_a and f().", err), 0);
    size_t nspecs;
    const tc_spec *specs = tool_specs(&nspecs);
    tpl_opts o;
    tpl_opts_default(&o);
    o.think = think;
    int ended = 0, turns = 0, k = (int)(seed % 7);
    for (; turns < RL_SEARCH_TURNS_MAX + 10 && !ended; turns++) {
        tpl_text ctx;
        ck_assert_int_eq(tpl_render(&ctx, &o, specs, nspecs, c->msgs, c->n, err), 0);
        pol_request req = {.context = ctx.text, .context_len = ctx.len, .max_tokens = 1024, .seed = seed * 1000003ULL + (uint64_t)turns};
        pol_response resp;
        ck_assert_int_eq(pol_generate(pol, &resp, &req, 1, err), 0);
        tc_parsed p;
        int rc = tc_parse(&p, resp.text, resp.text_len, specs, nspecs, NULL, err);
        ck_assert_msg(rc == 0, "turn %d: %s\n%s", turns, err, resp.text);
        if (!think)
            ck_assert_ptr_null(strstr(resp.text, "<think>"));
        ck_assert_int_eq(chat_add_generated(c, resp.text, resp.text_len, &p, 0, err), 0);
        if (p.ncalls == 0)
            ended = 1;
        for (size_t i = 0; i < p.ncalls; i++) {
            if (!strcmp(p.calls[i].name, "submit")) {
                ended = 1;
                ck_assert_uint_eq(i + 1, p.ncalls); /* nothing after submit */
            }
            const char *obs = ODD[(size_t)k++ % (sizeof ODD / sizeof *ODD)];
            ck_assert_int_eq(chat_add_tool(c, p.calls[i].id, p.calls[i].name, obs, err), 0);
        }
        tc_parsed_dispose(&p);
        pol_response_dispose(&resp);
        tpl_text_dispose(&ctx);
    }
    ck_assert_msg(ended, "no submit after %d turns", turns);
    ck_assert_int_le(turns, RL_SEARCH_TURNS_MAX);
    chat_free(c);
    pol_free(pol);
    free(prompt);
}

START_TEST(test_odd_observations)
{
    for (uint64_t seed = 1; seed <= 14; seed++) {
        play_odd("v2", seed % 2 == 0, seed);
        play_odd("v1", seed % 2 == 1, seed);
    }
}
END_TEST

START_TEST(test_direct_contexts)
{
    /* Contexts the policy did not follow (mid-episode, no system prompt,
     * truncated markup, empty): it starts over and answers sanely. */
    char err[RL_ERR_MAX];
    pol_env env;
    pol_env_default(&env);
    policy *pol;
    ck_assert_int_eq(pol_open(&pol, "search", &env, err), 0);
    size_t nspecs;
    const tc_spec *specs = tool_specs(&nspecs);
    const char *ctxs[] = {
        "",
        "<|im_start|>assistant\n",
        "<|im_start|>user\nfix it<|im_end|>\n<|im_start|>assistant\n<|im_end|>\n<|im_start|>user\n"
        "<tool_response>\n3 passed, 1 failed\nfail t: x\n</tool_response><|im_end|>\n<|im_start|>assistant\n",
        "<|im_start|>system\nRun the tests first. Run them again. Submit only when the tests pass."
        "<|im_end|>\n<|im_start|>user\n<tool_response>\n<tool_response>\n</tool_response><|im_end|>\n"
        "<|im_start|>assistant\n<think>\n\n</think>\n\n",
        "<|im_start|>user\n<tool_response>\nunclosed",
    };
    for (size_t i = 0; i < sizeof ctxs / sizeof *ctxs; i++) {
        pol_request req = {.context = ctxs[i], .context_len = strlen(ctxs[i]), .max_tokens = 1024, .seed = 5};
        pol_response resp;
        ck_assert_int_eq(pol_generate(pol, &resp, &req, 1, err), 0);
        tc_parsed p;
        ck_assert_msg(tc_parse(&p, resp.text, resp.text_len, specs, nspecs, NULL, err) == 0, "%zu: %s", i, err);
        ck_assert_uint_ge(p.ncalls, 1);
        tc_parsed_dispose(&p);
        pol_response_dispose(&resp);
    }
    pol_free(pol);
}
END_TEST

Suite *search_suite(void)
{
    Suite *s = suite_create("search");
    TCase *tc = tcase_create("readers");
    tcase_add_test(tc, test_parse_tests_summary);
    tcase_add_test(tc, test_parse_read_listing);
    tcase_add_test(tc, test_parse_search_hits);
    tcase_add_test(tc, test_prompt_detection);
    suite_add_tcase(s, tc);
    tc = tcase_create("candidates");
    tcase_add_test(tc, test_candidates_hold_the_fix);
    tcase_add_test(tc, test_candidates_seed_order);
    tcase_add_test(tc, test_python_defs);
    suite_add_tcase(s, tc);
    tc = tcase_create("episodes");
    tcase_add_checked_fixture(tc, ws_setup, ws_teardown);
    tcase_set_timeout(tc, 600); /* real episodes; generous for a loaded CI machine */
    tcase_add_test(tc, test_solves_leapyear);
    tcase_add_test(tc, test_same_seed_same_texts);
    tcase_add_test(tc, test_seeds_differ);
    tcase_add_test(tc, test_minimal_prompt_skips_tests);
    suite_add_tcase(s, tc);
    tc = tcase_create("robustness");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_odd_observations);
    tcase_add_test(tc, test_direct_contexts);
    suite_add_tcase(s, tc);
    return s;
}
