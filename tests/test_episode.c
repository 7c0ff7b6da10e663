/* The episode loop end to end: real work trees, sandboxed tests. */
#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/utf8.h"
#include "harness/episode.h"
#include "harness/record.h"
#include "harness/workspace.h"
#include "model/model.h"
#include "policy/policy.h"
#include "protocol/template.h"
#include "protocol/tokenizer.h"
#include "corpus/task.h"

#include <cJSON.h>
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char g_root[64];

static void setup(void)
{
    snprintf(g_root, sizeof g_root, "/tmp/rl-episode-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(g_root));
    chmod(g_root, 0755);
}

static void teardown(void)
{
    char err[RL_ERR_MAX];
    fs_remove_tree(g_root, err);
}

/* Runs one episode of task `id` with policy `given`, or when NULL the
 * policy `spec`; returns the record. */
static cJSON *episode_of(const char *id, policy *given, const char *spec, const ep_config *cfg_in)
{
    char err[RL_ERR_MAX], path[256];
    snprintf(path, sizeof path, "tasks/%s.json", id);
    task *t;
    ck_assert_msg(task_load(&t, path, "repos", err) == 0, "%s", err);
    pol_env env;
    pol_env_default(&env);
    env.gold_patch = t->patch;
    policy *pol = given;
    if (!given)
        ck_assert_msg(pol_open(&pol, spec, &env, err) == 0, "%s", err);
    ws_opts wo;
    ws_opts_default(&wo);
    wo.root = g_root;
    ws_tree *ws;
    ck_assert_msg(ws_open(&ws, &wo, t->repo, t->instance_id, t->bug, 0, err) == 0, "%s", err);
    ep_config cfg;
    if (cfg_in)
        cfg = *cfg_in;
    else
        ep_config_default(&cfg);
    char *rec;
    ck_assert_msg(ep_run(&rec, t, &cfg, ws, pol, err) == 0, "%s", err);
    cJSON *r = cJSON_Parse(rec);
    ck_assert_ptr_nonnull(r);
    free(rec);
    ws_free(ws);
    if (!given)
        pol_free(pol);
    task_free(t);
    return r;
}

static cJSON *episode(const char *id, const char *spec, const ep_config *cfg)
{
    return episode_of(id, NULL, spec, cfg);
}

static double num(const cJSON *o, const char *k) { return cJSON_GetNumberValue(cJSON_GetObjectItem(o, k)); }
static const char *str(const cJSON *o, const char *k) { return cJSON_GetStringValue(cJSON_GetObjectItem(o, k)); }

/* Replays one recorded line of replies (file `name` in the test root) on
 * leapyear for at most max_turns turns; returns the record. */
static cJSON *replay_episode(const char *name, const char *line, int max_turns)
{
    char err[RL_ERR_MAX], path[128], spec[160];
    snprintf(path, sizeof path, "%s/%s", g_root, name);
    ck_assert_int_eq(fs_append_record(path, line, strlen(line), err), 0);
    snprintf(spec, sizeof spec, "replay:%s", path);
    ep_config cfg;
    ep_config_default(&cfg);
    cfg.max_turns = max_turns;
    return episode("leapyear", spec, &cfg);
}

START_TEST(test_oracle_fixes_leapyear)
{
    cJSON *r = episode("leapyear", "oracle", NULL);
    ck_assert_double_eq(num(r, "reward"), 1);
    ck_assert_str_eq(str(r, "end_reason"), "submit");
    ck_assert_ptr_nonnull(strstr(str(r, "patch"), "src/leapyear.c"));
    const cJSON *t;
    int passed = 0;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(r, "tests")) passed += !strcmp(str(t, "status"), "pass");
    ck_assert_int_eq(passed, cJSON_GetArraySize(cJSON_GetObjectItem(r, "tests")));
    /* the tree is listed before the read, so the path read is in the context */
    const cJSON *turns = cJSON_GetObjectItem(r, "turns");
    const cJSON *list = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(turns, 1), "tool_calls"), 0);
    ck_assert_str_eq(str(list, "name"), "list_files");
    const char *ctx2 = str(cJSON_GetObjectItem(cJSON_GetArrayItem(turns, 2), "context"), "append");
    ck_assert_ptr_nonnull(strstr(ctx2, "\nsrc/leapyear.c\n"));
    /* the edit is minimal: the changed characters grown by whole words until
     * unique in the file as read ("== 0" alone occurs twice in the line) */
    const cJSON *call = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(turns, 3),
                                                               "tool_calls"), 0);
    ck_assert_str_eq(str(call, "name"), "edit_file");
    const cJSON *args = cJSON_GetObjectItem(call, "arguments");
    ck_assert_str_eq(str(args, "old_string"), "400 ==");
    ck_assert_str_eq(str(args, "new_string"), "400 !=");
    /* The episode ran the tests twice, each time in the companion tree: the
     * policy's own tree holds only what it wrote, and the scored patch is
     * that one edit. */
    char p[256];
    struct stat st;
    snprintf(p, sizeof p, "%s/trees/leapyear-0/build", g_root);
    ck_assert_msg(lstat(p, &st) != 0, "%s: a test run wrote into the policy's tree", p);
    snprintf(p, sizeof p, "%s/trees/leapyear-0.score/build/run_tests", g_root);
    ck_assert_msg(lstat(p, &st) == 0, "%s: the scoring run built nothing there", p);
    const char *patch = str(r, "patch");
    ck_assert_ptr_null(strstr(strstr(patch, "diff --git") + 1, "diff --git"));
    cJSON_Delete(r);
}
END_TEST

/* The transcript goes to the config's log callback, one message per
 * transcript entry (the printer ends each with a newline). */
static void keep_line(void *ctx, int level, const char *msg)
{
    buf_t *b = ctx;
    ck_assert_int_eq(level, RL_LOG_INFO);
    buf_printf(b, "%s\n", msg);
}

START_TEST(test_transcript_through_log)
{
    buf_t said;
    buf_init(&said, 0);
    ep_config cfg;
    ep_config_default(&cfg);
    cfg.log = keep_line;
    cfg.log_ctx = &said;
    cJSON *r = episode("leapyear", "oracle", &cfg);
    ck_assert_double_eq(num(r, "reward"), 1);
    const char *t = buf_str(&said);
    ck_assert_msg(!strncmp(t, "task leapyear\n", 14), "%s", t);
    ck_assert_ptr_nonnull(strstr(t, "\ncall edit_file "));
    ck_assert_ptr_nonnull(strstr(t, "\nleapyear: reward 1, "));
    ck_assert_ptr_null(strstr(t, "\033["));  /* colour only when asked */
    cJSON_Delete(r);
    buf_dispose(&said);
}
END_TEST

/* A read cut by the observation budget cannot prove a small old_string
 * unique: the oracle edits the whole hunk, and still fixes the bug. */
/* A repository without ignore rules scores the same: the policy's test
 * runs built into the companion tree, so its own tree, and the scored
 * patch, hold nothing but its edit. */
START_TEST(test_no_ignore_rules_scores_the_edit)
{
    char repos[160], cmd[1024], err[RL_ERR_MAX];
    snprintf(repos, sizeof repos, "%s/repos-noignore", g_root);
    snprintf(cmd, sizeof cmd, "mkdir -p %s && cp -r repos/leapyear %s/ && rm %s/leapyear/.gitignore", repos, repos,
             repos);
    ck_assert_int_eq(system(cmd), 0);
    task *t;
    ck_assert_msg(task_load(&t, "tasks/leapyear.json", repos, err) == 0, "%s", err);
    pol_env env;
    pol_env_default(&env);
    env.gold_patch = t->patch;
    policy *pol;
    ck_assert_msg(pol_open(&pol, "oracle", &env, err) == 0, "%s", err);
    ws_opts wo;
    ws_opts_default(&wo);
    wo.root = g_root;
    ws_tree *ws;
    ck_assert_msg(ws_open_task(&ws, &wo, t, 3, err) == 0, "%s", err);
    ep_config cfg;
    ep_config_default(&cfg);
    char *rec;
    ck_assert_msg(ep_run(&rec, t, &cfg, ws, pol, err) == 0, "%s", err);
    cJSON *r = cJSON_Parse(rec);
    ck_assert_ptr_nonnull(r);
    ck_assert_double_eq(num(r, "reward"), 1);
    const char *patch = str(r, "patch");
    ck_assert_ptr_nonnull(strstr(patch, "diff --git a/src/leapyear.c b/src/leapyear.c"));
    ck_assert_ptr_null(strstr(strstr(patch, "diff --git") + 1, "diff --git"));
    ck_assert_ptr_null(strstr(patch, "build/"));
    cJSON_Delete(r);
    free(rec);
    ws_free(ws);
    pol_free(pol);
    task_free(t);
}
END_TEST

/* The episode's test limits reach every test run: the gold fix under a
 * one-process bound cannot even build (reward 0, recorded), and under a
 * roomy bound passes. */
START_TEST(test_test_limits)
{
    ep_config cfg;
    ep_config_default(&cfg);
    cfg.test_limits.procs = 1;
    cJSON *r = episode("leapyear", "oracle", &cfg);
    ck_assert_double_eq(num(r, "reward"), 0);
    const cJSON *tl = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "config"), "test_limits");
    ck_assert_ptr_nonnull(tl);
    ck_assert_double_eq(num(tl, "procs"), 1);
    cJSON_Delete(r);
    cfg.test_limits.procs = 0;
    cfg.test_limits.mem_mb = 512;
    cfg.test_limits.disk_mb = 16;
    r = episode("leapyear", "oracle", &cfg);
    ck_assert_double_eq(num(r, "reward"), 1);
    cJSON_Delete(r);
    /* Unset: nothing recorded, the config digest of older runs holds. */
    ep_config_default(&cfg);
    r = episode("leapyear", "oracle", &cfg);
    ck_assert_ptr_null(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "config"), "test_limits"));
    cJSON_Delete(r);
}
END_TEST

START_TEST(test_oracle_cut_read_whole_hunk)
{
    ep_config cfg;
    ep_config_default(&cfg);
    cfg.obs_budget = 1200;
    cJSON *r = episode("leapyear", "oracle", &cfg);
    ck_assert_double_eq(num(r, "reward"), 1);
    const cJSON *call = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "turns"), 3),
                                                               "tool_calls"), 0);
    const char *old = str(cJSON_GetObjectItem(call, "arguments"), "old_string");
    ck_assert_ptr_nonnull(old);
    ck_assert_ptr_nonnull(strstr(old, "bool is_leap_year(int year)\n"));
    cJSON_Delete(r);
}
END_TEST

/* The in-line shrink never cuts a word and keeps whole lines when the
 * change spans them: the edits of three tasks, each still a fix. */
START_TEST(test_oracle_edit_whole_words)
{
    static const struct {
        const char *task, *old, *neu;
    } cases[] = {
        /* " - 1" is removed; "NSYMBOLS" is not cut to "S" */
        {"roman_symbol_table", "NSYMBOLS - 1", "NSYMBOLS"},
        /* a lone "1" is unique but too short to place: grown to three characters */
        {"strutil_replace_overlap", "+ 1;", "+ flen;"},
        /* two changed lines: the edit stays line-wise */
        {"utf8_surrogate_max", "    if (v > 0xD800 && v <= 0xDFFF)\n", "    if (v >= 0xD800 && v <= 0xDFFF)\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cJSON *r = episode(cases[i].task, "oracle", NULL);
        ck_assert_msg(num(r, "reward") == 1, "%s", cases[i].task);
        const cJSON *t, *c;
        const char *old = NULL, *neu = NULL;
        cJSON_ArrayForEach(t, cJSON_GetObjectItem(r, "turns")) cJSON_ArrayForEach(c, cJSON_GetObjectItem(t, "tool_calls"))
            if (!strcmp(str(c, "name"), "edit_file") && !old) {
                old = str(cJSON_GetObjectItem(c, "arguments"), "old_string");
                neu = str(cJSON_GetObjectItem(c, "arguments"), "new_string");
            }
        ck_assert_ptr_nonnull(old);
        ck_assert_msg(!strncmp(old, cases[i].old, strlen(cases[i].old)), "%s: old_string %s", cases[i].task, old);
        ck_assert_msg(!strncmp(neu, cases[i].neu, strlen(cases[i].neu)), "%s: new_string %s", cases[i].task, neu);
        cJSON_Delete(r);
    }
}
END_TEST

/* oracle:recover=100: every single-hunk fix first fails an edit in one of
 * the two ways a model does (a misremembered old_string, one too short to
 * be unique), then repairs it from the tool's answer; the episode still
 * passes. recover=0 is the plain oracle. */
START_TEST(test_oracle_recover)
{
    static const char *tasks[] = {"leapyear", "roman_symbol_table", "utf8_overlong_boundary", "parse_date",
                                  "pysemver_prerelease_numeric", "datelib_add_months"};
    int kinds[2] = {0, 0};
    for (size_t i = 0; i < sizeof tasks / sizeof tasks[0]; i++) {
        cJSON *r = episode(tasks[i], "oracle:recover=100", NULL);
        ck_assert_msg(num(r, "reward") == 1, "%s", tasks[i]);
        const cJSON *t, *c, *failed = NULL, *after = NULL;
        const char *repair_think = NULL;
        cJSON_ArrayForEach(t, cJSON_GetObjectItem(r, "turns")) cJSON_ArrayForEach(c, cJSON_GetObjectItem(t, "tool_calls"))
        {
            if (failed && !after) {
                after = c;
                repair_think = str(t, "generated");
            }
            if (!cJSON_IsTrue(cJSON_GetObjectItem(c, "ok"))) {
                ck_assert_msg(!failed, "%s: one mistake per episode", tasks[i]);
                failed = c;
            }
        }
        ck_assert_msg(failed != NULL, "%s: no demonstration", tasks[i]);
        ck_assert_str_eq(str(failed, "name"), "edit_file");
        ck_assert_str_eq(str(after, "name"), "edit_file");
        ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(after, "ok")));
        const char *kind = str(failed, "error_kind");
        ck_assert_msg(!strcmp(kind, "no_match") || !strcmp(kind, "not_unique"), "%s: %s", tasks[i], kind);
        kinds[!strcmp(kind, "not_unique")]++;
        ck_assert_ptr_nonnull(strstr(repair_think, !strcmp(kind, "no_match") ? "not an exact copy" : "more than once"));
        cJSON_Delete(r);
        /* recover=0: no mistake */
        r = episode(tasks[i], "oracle:recover=0", NULL);
        ck_assert_double_eq(num(r, "reward"), 1);
        cJSON_ArrayForEach(t, cJSON_GetObjectItem(r, "turns")) cJSON_ArrayForEach(c, cJSON_GetObjectItem(t, "tool_calls"))
            ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(c, "ok")));
        cJSON_Delete(r);
    }
    ck_assert_msg(kinds[0] && kinds[1], "both mistakes shown: %d misremembered, %d not unique", kinds[0], kinds[1]);
    char err[RL_ERR_MAX];
    policy *p;
    pol_env env;
    pol_env_default(&env);
    env.gold_patch = "x";
    ck_assert_int_eq(pol_open(&p, "oracle:recover=101", &env, err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "expected oracle:recover=PERCENT (0-100)"));
}
END_TEST

/* edit_hints off reaches the tools and the record's config (absent when
 * on, so a config with the default hints has the digest of one that does
 * not name them). */
START_TEST(test_edit_hints_off)
{
    for (int on = 0; on < 2; on++) {
        ep_config cfg;
        ep_config_default(&cfg);
        cfg.edit_hints = on;
        cJSON *r = episode("leapyear", "oracle:recover=100", &cfg); /* a no-match demonstration */
        const cJSON *key = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "config"), "edit_hints");
        ck_assert(on ? key == NULL : cJSON_IsFalse(key));
        const cJSON *turns = cJSON_GetObjectItem(r, "turns");
        int failed = 0;
        for (int k = 0; k + 1 < cJSON_GetArraySize(turns); k++) {
            const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(turns, k), "tool_calls"), 0);
            if (c && !cJSON_IsTrue(cJSON_GetObjectItem(c, "ok"))) {
                failed++;
                /* the tool response the policy saw next */
                const char *next = str(cJSON_GetObjectItem(cJSON_GetArrayItem(turns, k + 1), "context"), "append");
                ck_assert_ptr_nonnull(strstr(next, "old_string not found"));
                ck_assert_msg(!strstr(next, "the most similar text in") == !on, "hints %d: [%s]", on, next);
            }
        }
        ck_assert_int_eq(failed, 1);
        cJSON_Delete(r);
    }
}
END_TEST

/* Drops what legitimately differs between two runs: timings. */
static void strip_timings(cJSON *o)
{
    static const char *keys[] = {"timings", "started_at", "gen_ms", "ms", NULL};
    if (cJSON_IsObject(o))
        for (int i = 0; keys[i]; i++)
            cJSON_DeleteItemFromObject(o, keys[i]);
    cJSON *c;
    cJSON_ArrayForEach(c, o) strip_timings(c);
}

START_TEST(test_same_seed_same_record)
{
    ep_config cfg;
    ep_config_default(&cfg);
    cfg.seed = 7;
    cJSON *a = episode("parse_date", "oracle", &cfg), *b = episode("parse_date", "oracle", &cfg);
    strip_timings(a);
    strip_timings(b);
    char *sa = cJSON_PrintUnformatted(a), *sb = cJSON_PrintUnformatted(b);
    ck_assert_str_eq(sa, sb);
    free(sa);
    free(sb);
    cJSON_Delete(a);
    cJSON_Delete(b);
}
END_TEST

/* A policy that answers in prose and notes the seed of every request. */
typedef struct seed_log {
    unsigned long long seeds[8];
    int n;
} seed_log;

static int seedlog_generate(policy *p, pol_response *resp, const pol_request *req, size_t n, char *err)
{
    (void)err;
    seed_log *l = p->impl;
    for (size_t i = 0; i < n; i++) {
        if (l->n < 8)
            l->seeds[l->n++] = req[i].seed;
        memset(&resp[i], 0, sizeof resp[i]);
        resp[i].text = strdup("Nothing to call.");
        resp[i].text_len = strlen(resp[i].text);
        resp[i].finish = POL_FINISH_STOP;
    }
    return 0;
}

static void seedlog_free(policy *p) { (void)p; }

static const pol_vtable SEEDLOG_VT = {seedlog_generate, seedlog_free};

/* The request seeds of an episode of task id at episode seed `seed`. */
static void episode_seeds(seed_log *l, const char *id, unsigned long long seed)
{
    policy pol = {.vt = &SEEDLOG_VT, .name = "seedlog", .impl = l};
    ep_config cfg;
    ep_config_default(&cfg);
    cfg.seed = seed;
    cfg.max_turns = 2;
    memset(l, 0, sizeof *l);
    cJSON_Delete(episode_of(id, &pol, NULL, &cfg));
}

/* Request seeds depend on the task, the episode seed and the turn: the same
 * episode seed on two tasks must not hand the sampler the same draws. */
START_TEST(test_request_seeds)
{
    seed_log a, a2, b, c;
    episode_seeds(&a, "leapyear", 3);
    episode_seeds(&a2, "leapyear", 3);
    episode_seeds(&b, "parse_date", 3);
    episode_seeds(&c, "leapyear", 4);
    ck_assert_int_ge(a.n, 1);
    ck_assert_int_eq(a.n, a2.n);
    for (int i = 0; i < a.n; i++)
        ck_assert_uint_eq(a.seeds[i], a2.seeds[i]);
    ck_assert_uint_ne(a.seeds[0], b.seeds[0]);
    ck_assert_uint_ne(a.seeds[0], c.seeds[0]);
    if (a.n > 1)
        ck_assert_uint_ne(a.seeds[0], a.seeds[1]);
}
END_TEST

/* A policy that rewrites the tests so they pass must not earn reward: the
 * protected files are restored before scoring. */
START_TEST(test_editing_tests_earns_nothing)
{
    char err[RL_ERR_MAX];
    task *t;
    ck_assert_int_eq(task_load(&t, "tasks/leapyear.json", "repos", err), 0);
    buf_t suite, gen;
    buf_init(&suite, 1 << 20);
    buf_init(&gen, 1 << 20);
    buf_puts(&suite, "#include <check.h>\n#include <stdlib.h>\n");
    const task_strs *lists[] = {&t->fail_to_pass, &t->pass_to_pass};
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < lists[l]->n; i++)
            buf_printf(&suite, "START_TEST(%s) { ck_assert(1); }\nEND_TEST\n", lists[l]->v[i]);
    buf_puts(&suite, "int main(void) {\n    Suite *s = suite_create(\"x\");\n    TCase *tc = tcase_create(\"core\");\n");
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < lists[l]->n; i++)
            buf_printf(&suite, "    tcase_add_test(tc, %s);\n", lists[l]->v[i]);
    buf_puts(&suite, "    suite_add_tcase(s, tc);\n    SRunner *sr = srunner_create(s);\n"
                     "    srunner_run_all(sr, CK_VERBOSE);\n    return srunner_ntests_failed(sr) != 0;\n}\n");
    /* the replayed trajectory: rewrite the test file, check, submit */
    cJSON *rec = cJSON_CreateObject(), *turns = cJSON_AddArrayToObject(rec, "turns");
    const char *texts[3];
    buf_printf(&gen, "<tool_call>\n<function=write_file>\n<parameter=path>\ntests/test_leapyear.c\n</parameter>\n"
                     "<parameter=content>\n%s\n</parameter>\n</function>\n</tool_call>",
               buf_str(&suite));
    texts[0] = buf_str(&gen);
    texts[1] = "<tool_call>\n<function=run_tests>\n</function>\n</tool_call>";
    texts[2] = "<tool_call>\n<function=submit>\n</function>\n</tool_call>";
    for (int i = 0; i < 3; i++) {
        cJSON *turn = cJSON_CreateObject();
        cJSON_AddStringToObject(turn, "generated", texts[i]);
        cJSON_AddItemToArray(turns, turn);
    }
    char path[128], spec[160];
    snprintf(path, sizeof path, "%s/hack.jsonl", g_root);
    char *line = cJSON_PrintUnformatted(rec);
    ck_assert_int_eq(fs_append_record(path, line, strlen(line), err), 0);
    free(line);
    cJSON_Delete(rec);
    buf_dispose(&suite);
    buf_dispose(&gen);
    task_free(t);
    snprintf(spec, sizeof spec, "replay:%s", path);
    cJSON *r = episode("leapyear", spec, NULL);
    /* during the episode the forged suite passed... */
    const cJSON *t1 = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "turns"), 1);
    const cJSON *call = cJSON_GetArrayItem(cJSON_GetObjectItem(t1, "tool_calls"), 0);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(call, "ok")));
    const cJSON *m = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "messages"), 5);
    ck_assert_ptr_nonnull(strstr(str(m, "content"), "11 passed, 0 failed"));
    /* ...but the reward comes from the restored tests, and the scored
     * patch, which the record holds, leaves the protected tests out */
    ck_assert_double_eq(num(r, "reward"), 0);
    ck_assert_str_eq(str(r, "patch"), "");
    ck_assert_str_eq(str(r, "end_reason"), "submit");
    cJSON_Delete(r);
}
END_TEST

START_TEST(test_think_off_history_drop)
{
    ep_config cfg;
    ep_config_default(&cfg);
    cfg.think = 0;
    cfg.history_keep = 0;
    cJSON *r = episode("leapyear", "oracle", &cfg);
    ck_assert_double_eq(num(r, "reward"), 1);
    const cJSON *turns = cJSON_GetObjectItem(r, "turns");
    ck_assert_int_ge(cJSON_GetArraySize(turns), 4);
    /* drop mode: every turn carries its own full context, as the policy saw it */
    const cJSON *t;
    cJSON_ArrayForEach(t, turns)
    {
        const char *ctx = str(cJSON_GetObjectItem(t, "context"), "text");
        ck_assert_ptr_nonnull(ctx);
        size_t n = strlen(ctx);
        ck_assert(n > 19 && !strcmp(ctx + n - 19, "<think>\n\n</think>\n\n"));
    }
    cJSON_Delete(r);
}
END_TEST

/* The qwen3 template: the record names it, the contexts carry its tool
 * schemas and JSON calls, the oracle's calls run; a model:CKPT policy takes
 * the template its checkpoint's state.json names unless the config sets
 * one, and an unknown name there is refused in one line. */
START_TEST(test_qwen3_template)
{
    char err[RL_ERR_MAX];
    for (int keep = 0; keep < 2; keep++) {
        ep_config cfg;
        ep_config_default(&cfg);
        cfg.chat_template = TPL_QWEN3;
        cfg.history_keep = keep;
        cfg.think = keep;
        cJSON *r = episode("leapyear", "oracle", &cfg);
        ck_assert_double_eq(num(r, "reward"), 1);
        ck_assert_str_eq(str(cJSON_GetObjectItem(r, "config"), "template"), "qwen3");
        const cJSON *turns = cJSON_GetObjectItem(r, "turns");
        ck_assert_int_ge(cJSON_GetArraySize(turns), 4);
        const char *ctx0 = str(cJSON_GetObjectItem(cJSON_GetArrayItem(turns, 0), "context"), "text");
        ck_assert_ptr_nonnull(strstr(ctx0, "<tools>\n{\"type\": \"function\", \"function\": {\"name\": "));
        const char *gen = str(cJSON_GetArrayItem(turns, 1), "generated");
        ck_assert_ptr_nonnull(strstr(gen, "<tool_call>\n{\"name\": \""));
        cJSON_Delete(r);
    }

    char dir[256], path[300];
    snprintf(dir, sizeof dir, "%s/ckpt-q3", g_root);
    ck_assert_int_eq(fs_mkdirs(dir, err), 0);
    snprintf(path, sizeof path, "%s/state.json", dir);
    const char *st = "{\"step\": 3, \"chat_template\": \"qwen3\"}";
    ck_assert_int_eq(fs_write_atomic(path, st, strlen(st), err), 0);
    char pol[320];
    ep_config cfg;
    ep_config_default(&cfg);
    snprintf(pol, sizeof pol, "model:%s/model.safetensors", dir);
    cfg.policy = pol;
    ck_assert_int_eq(ep_config_template(&cfg, err), TPL_QWEN3);
    snprintf(pol, sizeof pol, "model:%s", dir);
    ck_assert_int_eq(ep_config_template(&cfg, err), TPL_QWEN3);
    cfg.chat_template = TPL_QWEN3_XML; /* told otherwise */
    ck_assert_int_eq(ep_config_template(&cfg, err), TPL_QWEN3_XML);
    cfg.chat_template = -1;
    cfg.policy = "model:/nonexistent/model.safetensors";
    ck_assert_int_eq(ep_config_template(&cfg, err), TPL_QWEN3_XML);
    cfg.policy = "oracle";
    ck_assert_int_eq(ep_config_template(&cfg, err), TPL_QWEN3_XML);
    st = "{\"chat_template\": \"llama\"}";
    ck_assert_int_eq(fs_write_atomic(path, st, strlen(st), err), 0);
    cfg.policy = pol;
    ck_assert_int_eq(ep_config_template(&cfg, err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "state.json: chat_template: unknown template \"llama\": expected one of: "
                                      "qwen3-xml, qwen3"));

    /* no state.json: the template the checkpoint's metadata names */
    snprintf(dir, sizeof dir, "%s/ckpt-meta", g_root);
    ck_assert_int_eq(fs_mkdirs(dir, err), 0);
    model_config mc;
    model_config_default(&mc);
    mc.vocab = 300;
    mc.d_model = 16;
    mc.n_layer = 1;
    mc.n_head = 2;
    mc.n_kv_head = 1;
    mc.d_ff = 32;
    mc.max_seq = 64;
    model *m;
    ck_assert_int_eq(model_new(&m, &mc, NULL, err), 0);
    model_meta meta, back;
    model_meta_default(&meta);
    snprintf(meta.chat_template, sizeof meta.chat_template, "qwen3");
    snprintf(path, sizeof path, "%s/a.safetensors", dir);
    ck_assert_int_eq(model_save(m, path, &meta, err), 0);
    ck_assert_int_eq(model_read_meta(&back, path, err), 0);
    ck_assert_str_eq(back.chat_template, "qwen3");
    snprintf(pol, sizeof pol, "model:%s", path);
    cfg.policy = pol;
    ck_assert_int_eq(ep_config_template(&cfg, err), TPL_QWEN3);
    snprintf(meta.chat_template, sizeof meta.chat_template, "chatml");
    ck_assert_int_eq(model_save(m, path, &meta, err), 0);
    ck_assert_int_eq(ep_config_template(&cfg, err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "a.safetensors: chat_template: unknown template \"chatml\""));
    meta.chat_template[0] = 0; /* none recorded: qwen3-xml, and no key written */
    ck_assert_int_eq(model_save(m, path, &meta, err), 0);
    ck_assert_int_eq(ep_config_template(&cfg, err), TPL_QWEN3_XML);
    model_free(m);
}
END_TEST

START_TEST(test_max_turns_and_format_error)
{
    /* a reply that is not a well-formed call, then silence */
    const char *line = "{\"turns\":[{\"generated\":\"<tool_call>\\n<function=read_file>\\n\"},"
                       "{\"generated\":\"<tool_call>\\n<function=list_files>\\n</function>\\n</tool_call>\"},"
                       "{\"generated\":\"<tool_call>\\n<function=list_files>\\n</function>\\n</tool_call>\"}]}";
    cJSON *r = replay_episode("bad.jsonl", line, 3);
    ck_assert_str_eq(str(r, "end_reason"), "max_turns");
    const cJSON *turns = cJSON_GetObjectItem(r, "turns");
    ck_assert_int_eq(cJSON_GetArraySize(turns), 3);
    ck_assert(cJSON_IsString(cJSON_GetObjectItem(cJSON_GetArrayItem(turns, 0), "format_error")));
    const cJSON *c2 = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(turns, 2), "tool_calls"), 0);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(c2, "identical_to_previous")));
    ck_assert_double_eq(num(r, "reward"), 0);
    cJSON_Delete(r);
}
END_TEST

/* A failed call is recorded with a stable error_kind beside its message;
 * a call that worked has none. */
START_TEST(test_tool_error_kind)
{
    const char *line = "{\"turns\":[{\"generated\":\"<tool_call>\\n<function=edit_file>\\n"
                       "<parameter=path>\\nsrc/leapyear.c\\n</parameter>\\n<parameter=old_string>\\n"
                       "no such text\\n</parameter>\\n<parameter=new_string>\\nx\\n</parameter>\\n"
                       "</function>\\n</tool_call>\"},"
                       "{\"generated\":\"<tool_call>\\n<function=list_files>\\n</function>\\n</tool_call>\"}]}";
    cJSON *r = replay_episode("kind.jsonl", line, 2);
    const cJSON *turns = cJSON_GetObjectItem(r, "turns");
    const cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(turns, 0), "tool_calls"), 0);
    const cJSON *c1 = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(turns, 1), "tool_calls"), 0);
    ck_assert_ptr_nonnull(c0);
    ck_assert_ptr_nonnull(c1);
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(c0, "ok")));
    ck_assert_ptr_nonnull(strstr(str(c0, "error"), "old_string not found"));
    ck_assert_str_eq(str(c0, "error_kind"), "no_match");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(c1, "ok")));
    ck_assert_ptr_null(cJSON_GetObjectItem(c1, "error_kind"));
    cJSON_Delete(r);
}
END_TEST

/* 1 if every string (and key) in o is valid UTF-8. */
static int all_utf8(const cJSON *o)
{
    for (; o; o = o->next) {
        const char *v[2] = {cJSON_IsString(o) ? o->valuestring : NULL, o->string};
        for (int i = 0; i < 2; i++)
            for (size_t j = 0, n = v[i] ? strlen(v[i]) : 0; j < n;) {
                size_t k = utf8_seq_len((const unsigned char *)v[i] + j, n - j);
                if (!k)
                    return 0;
                j += k;
            }
        if (!all_utf8(o->child))
            return 0;
    }
    return 1;
}

/* A policy that writes invalid UTF-8 (half a character, a stray byte, in
 * its text and in a tool argument) still yields a record of valid UTF-8,
 * each bad byte shown as '?'. */
START_TEST(test_record_invalid_utf8)
{
    const char *line = "{\"turns\":[{\"generated\":\"<think>\\nok \xc3\\n</think>\\n\\n<tool_call>\\n"
                       "<function=read_file>\\n<parameter=path>\\nsrc/\xff.c\\n</parameter>\\n</function>\\n"
                       "</tool_call>\"}]}";
    cJSON *r = replay_episode("bytes.jsonl", line, 1);
    ck_assert(all_utf8(r));
    const cJSON *t0 = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "turns"), 0);
    ck_assert_ptr_nonnull(strstr(str(t0, "generated"), "ok ?\n"));
    const cJSON *call = cJSON_GetArrayItem(cJSON_GetObjectItem(t0, "tool_calls"), 0);
    ck_assert_str_eq(str(cJSON_GetObjectItem(call, "arguments"), "path"), "src/?.c");
    cJSON_Delete(r);
}
END_TEST

/* Shaped rewards only when a reward config switches them on. */
START_TEST(test_shaped_reward_config)
{
    char err[RL_ERR_MAX], path[128];
    snprintf(path, sizeof path, "%s/reward.json", g_root);
    const char *cfgtext = "{\"shaped\": true, \"pass\": 2.0, \"fail\": -1.0, \"tool_ok\": 0.5,"
                          " \"well_formed\": 0.1, \"identical\": -1.0, \"over_turn\": -0.2, \"turn_limit\": 3}";
    ck_assert_int_eq(fs_write_atomic(path, cfgtext, strlen(cfgtext), err), 0);
    ep_config cfg;
    ep_config_default(&cfg);
    ck_assert_int_eq(ep_shaping_load(&cfg.shaping, path, err), 0);
    cJSON *r = episode("leapyear", "oracle", &cfg);
    /* oracle: 6 turns, 6 successful calls, all well formed, no repeats:
     * 2.0 + 6 * 0.5 + 6 * 0.1 - 0.2 * (6 - 3) */
    ck_assert_double_eq(num(r, "reward"), 1);
    ck_assert_double_eq_tol(num(r, "shaped_reward"), 2.0 + 3.0 + 0.6 - 0.6, 1e-9);
    ck_assert_str_eq(str(cJSON_GetObjectItem(r, "config"), "reward"), "shaped");
    cJSON_Delete(r);
    /* off by default: the reward is the test result alone */
    r = episode("leapyear", "oracle", NULL);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(r, "shaped_reward")));
    cJSON_Delete(r);
    const char *bad = "{\"shaped\": true, \"bonus\": 1}";
    ck_assert_int_eq(fs_write_atomic(path, bad, strlen(bad), err), 0);
    ck_assert_int_eq(ep_shaping_load(&cfg.shaping, path, err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "bonus"));
}
END_TEST

/* ---- what the policy saw is what the record rebuilds ------------------------ */

#define CAP_TURNS 64

/* A policy that wraps the oracle, keeps a copy of every request's context
 * and context ids, and (by `ids_every`) answers with token ids as a model
 * would: the reply encoded + <|im_end|>, on every turn (1), every other
 * turn (2) or never (0). */
typedef struct capture {
    policy *inner;
    const tok_t *tok;
    int ids_every;
    char *ctx[CAP_TURNS];
    size_t ctx_len[CAP_TURNS];
    int32_t *ids[CAP_TURNS];
    size_t n_ids[CAP_TURNS];
    int n;
} capture;

static int capture_generate(policy *p, pol_response *resp, const pol_request *req, size_t n, char *err)
{
    capture *c = p->impl;
    int rc = pol_generate(c->inner, resp, req, n, err);
    for (size_t i = 0; rc == 0 && i < n && c->n < CAP_TURNS; i++) {
        int k = c->n++;
        c->ctx[k] = strndup(req[i].context, req[i].context_len);
        c->ctx_len[k] = req[i].context_len;
        c->n_ids[k] = req[i].n_context_ids;
        c->ids[k] = malloc((req[i].n_context_ids + 1) * sizeof(int32_t));
        memcpy(c->ids[k], req[i].context_ids, req[i].n_context_ids * sizeof(int32_t));
        if (c->ids_every && k % c->ids_every == 0) {
            int32_t *v = NULL;
            size_t m = 0;
            ck_assert_int_eq(tok_encode(&v, &m, c->tok, resp[i].text, resp[i].text_len, TOK_SPECIAL_ALLOW, err), 0);
            v = realloc(v, (m + 1) * sizeof *v);
            v[m++] = tok_special_id(c->tok, "<|im_end|>");
            resp[i].ids = v;
            resp[i].n_ids = m;
            resp[i].logprobs = calloc(m, sizeof(float));
        }
    }
    return rc;
}

static void capture_free(policy *p) { (void)p; }

static const pol_vtable CAPTURE_VT = {capture_generate, capture_free};

/* Every context and every context id sequence the policy was given, for
 * history keep and drop, with and without sampled ids, equals what the
 * record rebuilds for that turn. */
START_TEST(test_record_is_what_policy_saw)
{
    char err[RL_ERR_MAX];
    tok_t *tok;
    ck_assert_msg(tok_load(&tok, "models/tokenizer.json", err) == 0, "%s", err);
    for (int kind = 0; kind < TPL_NKINDS; kind++)
    for (int keep = 0; keep < 2; keep++)
        for (int every = 0; every < 3; every++) {
            task *t;
            ck_assert_int_eq(task_load(&t, "tasks/leapyear.json", "repos", err), 0);
            pol_env env;
            pol_env_default(&env);
            env.gold_patch = t->patch;
            capture c = {.tok = tok, .ids_every = every};
            ck_assert_msg(pol_open(&c.inner, "oracle:recover=100", &env, err) == 0, "%s", err);
            policy pol = {.vt = &CAPTURE_VT, .name = "capture", .impl = &c};
            ep_config cfg;
            ep_config_default(&cfg);
            cfg.history_keep = keep;
            cfg.chat_template = kind;
            cfg.tok = tok;
            cJSON *r = episode_of("leapyear", &pol, NULL, &cfg);
            ck_assert_str_eq(str(cJSON_GetObjectItem(r, "config"), "template"), tpl_kind_name((tpl_kind)kind));
            ck_assert_int_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(r, "schema")), REC_SCHEMA);
            rec_walk w;
            ck_assert_int_eq(rec_walk_init(&w, r, "record", tok_vocab_size(tok), err), 0);
            int k = 0, rc;
            while ((rc = rec_walk_next(&w, err)) == 1) {
                ck_assert_int_lt(k, c.n);
                ck_assert_msg(w.context_len == c.ctx_len[k] && !memcmp(w.context, c.ctx[k], w.context_len),
                              "keep %d, ids %d: turn %d: context differs", keep, every, k);
                ck_assert(w.has_ctx_ids);
                ck_assert_msg(w.n_ctx_ids == c.n_ids[k] && !memcmp(w.ctx_ids, c.ids[k], w.n_ctx_ids * sizeof(int32_t)),
                              "keep %d, ids %d: turn %d: context ids differ (%zu vs %zu)", keep, every, k, w.n_ctx_ids,
                              c.n_ids[k]);
                ck_assert_int_eq(w.has_ids, every && k % every == 0);
                k++;
            }
            ck_assert_msg(rc == 0, "%s", err);
            ck_assert_int_eq(k, c.n);
            ck_assert_int_ge(k, 5);
            rec_walk_dispose(&w);
            ck_assert_double_eq(num(r, "reward"), 1);
            cJSON_Delete(r);
            for (int i = 0; i < c.n; i++) {
                free(c.ctx[i]);
                free(c.ids[i]);
            }
            pol_free(c.inner);
            task_free(t);
        }
    tok_free(tok);
}
END_TEST

/* ---- records and memory of long episodes --------------------------------- */

/* What one long episode cost: its record's size and how far the resident
 * set of the process that ran it grew (KiB). */
typedef struct long_cost {
    long record_bytes;
    long grown_kb;
} long_cost;

/* Writes a replay file of `turns` turns, each reading a source file eight
 * times (the parser's cap of calls in one message). */
static void write_reads_replay(const char *path, int turns)
{
    char err[RL_ERR_MAX];
    static const char call[] = "<tool_call>\n<function=read_file>\n<parameter=path>\nsrc/leapyear.h\n"
                               "</parameter>\n</function>\n</tool_call>\n";
    buf_t gen;
    buf_init(&gen, 1 << 20);
    buf_puts(&gen, "<think>\nread it again\n</think>\n\n");
    for (int i = 0; i < 8; i++)
        buf_puts(&gen, call);
    cJSON *rec = cJSON_CreateObject(), *tl = cJSON_AddArrayToObject(rec, "turns");
    for (int k = 0; k < turns; k++) {
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "generated", buf_str(&gen));
        cJSON_AddItemToArray(tl, t);
    }
    char *line = cJSON_PrintUnformatted(rec);
    unlink(path);
    ck_assert_int_eq(fs_append_record(path, line, strlen(line), err), 0);
    free(line);
    cJSON_Delete(rec);
    buf_dispose(&gen);
}

/* Runs the replayed episode in a child process, forked once everything
 * but the episode is loaded: a forked process starts its peak resident set
 * afresh, so the child's peak growth is the episode's own. Returns what it
 * cost. */
static long_cost long_episode(int turns, int keep, const char *tok_path)
{
    char path[160], spec[200], err[RL_ERR_MAX];
    snprintf(path, sizeof path, "%s/reads-%d.jsonl", g_root, turns);
    write_reads_replay(path, turns);
    snprintf(spec, sizeof spec, "replay:%s", path);
    task *t;
    ck_assert_msg(task_load(&t, "tasks/leapyear.json", "repos", err) == 0, "%s", err);
    pol_env env;
    pol_env_default(&env);
    policy *pol;
    ck_assert_msg(pol_open(&pol, spec, &env, err) == 0, "%s", err);
    tok_t *tok = NULL;
    if (tok_path)
        ck_assert_msg(tok_load(&tok, tok_path, err) == 0, "%s", err);
    ws_opts wo;
    ws_opts_default(&wo);
    wo.root = g_root;
    ws_tree *ws;
    ck_assert_msg(ws_open(&ws, &wo, t->repo, t->instance_id, t->bug, 0, err) == 0, "%s", err);
    ep_config cfg;
    ep_config_default(&cfg);
    cfg.max_turns = turns;
    cfg.history_keep = keep;
    cfg.max_wall_s = 0;
    cfg.tok = tok;
    int fd[2];
    ck_assert_int_eq(pipe(fd), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(fd[0]);
        long_cost c = {-1, -1};
        struct rusage ru0, ru1;
        getrusage(RUSAGE_SELF, &ru0);
        char *rec = NULL;
        if (ep_run(&rec, t, &cfg, ws, pol, err) == 0) {
            getrusage(RUSAGE_SELF, &ru1);
            c.record_bytes = (long)strlen(rec);
            c.grown_kb = ru1.ru_maxrss - ru0.ru_maxrss;
            /* the episode must have run every turn */
            cJSON *r = cJSON_Parse(rec);
            if (cJSON_GetArraySize(cJSON_GetObjectItem(r, "turns")) != turns)
                c.record_bytes = -2;
            cJSON_Delete(r);
        }
        if (write(fd[1], &c, sizeof c) != (ssize_t)sizeof c)
            _exit(1);
        _exit(0);
    }
    close(fd[1]);
    long_cost c = {-1, -1};
    ck_assert_int_eq(read(fd[0], &c, sizeof c), (ssize_t)sizeof c);
    close(fd[0]);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ws_free(ws);
    tok_free(tok);
    pol_free(pol);
    task_free(t);
    ck_assert_msg(c.record_bytes > 0, "the %d-turn episode failed (%ld)", turns, c.record_bytes);
    return c;
}

/* With history kept, a record and the memory of an episode grow linearly
 * with its turns: twice the turns cost at most 2.2 times as much. Each
 * turn reads a file eight times, so a turn's context is mostly tool
 * output; a copy of every context per turn would make both quadratic
 * (about 4 times). With and without a tokenizer (context ids). */
START_TEST(test_keep_grows_linearly)
{
    const char *toks[2] = {NULL, "models/tokenizer.json"};
    for (int i = 0; i < 2; i++) {
        if (toks[i] && access(toks[i], R_OK) != 0)
            continue;
        long_cost a = long_episode(200, 1, toks[i]), b = long_episode(400, 1, toks[i]);
        double rr = (double)b.record_bytes / (double)a.record_bytes;
        double mr = (double)b.grown_kb / (double)(a.grown_kb > 0 ? a.grown_kb : 1);
        fprintf(stderr, "keep, tokenizer %s: record %ld -> %ld bytes (x%.2f), peak RSS +%ld -> +%ld KiB (x%.2f)\n",
                toks[i] ? toks[i] : "none", a.record_bytes, b.record_bytes, rr, a.grown_kb, b.grown_kb, mr);
        ck_assert_msg(rr <= 2.2, "record grows x%.2f from 200 to 400 turns", rr);
#if !defined(__SANITIZE_ADDRESS__)
        /* (AddressSanitizer keeps freed memory in quarantine: the resident
         * set is then not what the episode holds) */
        ck_assert_msg(a.grown_kb > 1024, "the 200-turn episode grew only %ld KiB", a.grown_kb);
        ck_assert_msg(mr <= 2.2, "peak memory grows x%.2f from 200 to 400 turns", mr);
#endif
    }
}
END_TEST

Suite *episode_suite(void)
{
    Suite *s = suite_create("episode");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_oracle_fixes_leapyear);
    tcase_add_test(tc, test_transcript_through_log);
    tcase_add_test(tc, test_no_ignore_rules_scores_the_edit);
    tcase_add_test(tc, test_test_limits);
    tcase_add_test(tc, test_oracle_cut_read_whole_hunk);
    tcase_add_test(tc, test_request_seeds);
    tcase_add_test(tc, test_oracle_edit_whole_words);
    tcase_add_test(tc, test_oracle_recover);
    tcase_add_test(tc, test_edit_hints_off);
    tcase_add_test(tc, test_record_invalid_utf8);
    tcase_add_test(tc, test_same_seed_same_record);
    tcase_add_test(tc, test_editing_tests_earns_nothing);
    tcase_add_test(tc, test_think_off_history_drop);
    tcase_add_test(tc, test_qwen3_template);
    tcase_add_test(tc, test_max_turns_and_format_error);
    tcase_add_test(tc, test_tool_error_kind);
    tcase_add_test(tc, test_shaped_reward_config);
    suite_add_tcase(s, tc);
    TCase *rec = tcase_create("records");
    tcase_set_timeout(rec, 180);
    tcase_add_checked_fixture(rec, setup, teardown);
    tcase_add_test(rec, test_record_is_what_policy_saw);
    tcase_add_test(rec, test_keep_grows_linearly);
    suite_add_tcase(s, rec);
    return s;
}
