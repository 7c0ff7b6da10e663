/* Rollout: several episodes stepped together through one policy. */
#include "common/err.h"
#include "common/fsutil.h"
#include "harness/rollout.h"
#include "policy/policy.h"
#include "corpus/task.h"

#include <cJSON.h>
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct seen {
    int n, passed;
    long tags;
    int max_batch;
} seen;

static void on_done(void *user, long tag, char *record, double reward)
{
    seen *s = user;
    s->n++;
    s->passed += reward > 0.5;
    s->tags |= 1L << tag;
    ck_assert_ptr_nonnull(record);
    cJSON *r = cJSON_Parse(record);
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(cJSON_GetObjectItem(r, "end_reason")->valuestring, "submit");
    cJSON_Delete(r);
    free(record);
}

/* Wraps the oracle to record how many requests arrive per call. */
static policy *g_inner;
static seen *g_seen;
static int count_generate(policy *p, pol_response *resp, const pol_request *req, size_t n, char *err)
{
    (void)p;
    if ((int)n > g_seen->max_batch)
        g_seen->max_batch = (int)n;
    return pol_generate(g_inner, resp, req, n, err);
}
static void count_free(policy *p) { (void)p; }
static const pol_vtable COUNT_VT = {count_generate, count_free};

START_TEST(test_rollout_batches_episodes)
{
    char err[RL_ERR_MAX], root[] = "/tmp/rl-rollout-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(root));
    chmod(root, 0755); /* the sandbox's uid must reach the work trees */
    task *t;
    ck_assert_msg(task_load(&t, "tasks/leapyear.json", "repos", err) == 0, "%s", err);
    pol_env env;
    pol_env_default(&env);
    env.gold_patch = t->patch;
    ck_assert_int_eq(pol_open(&g_inner, "oracle", &env, err), 0);
    seen s = {0};
    g_seen = &s;
    policy wrap = {.vt = &COUNT_VT};
    rollout_opts o;
    rollout_opts_default(&o);
    o.ws_root = root;
    o.max_active = 3;
    rollout *r;
    ck_assert_int_eq(rollout_new(&r, &wrap, &o, err), 0);
    ep_config cfg;
    ep_config_default(&cfg);
    for (long k = 0; k < 4; k++)
        ck_assert_int_eq(rollout_add(r, t, &cfg, (uint64_t)k + 1, k, err), 0);
    ck_assert_uint_eq(rollout_pending(r), 4);
    rollout_set_version(r, 7);
    ck_assert_int_eq(rollout_drain(r, on_done, &s, err), 0);
    ck_assert_int_eq(s.n, 4);
    ck_assert_int_eq(s.passed, 4);
    ck_assert_int_eq(s.tags, 0xf);
    ck_assert_int_eq(s.max_batch, 3); /* one policy call served three episodes */
    ck_assert_uint_eq(rollout_pending(r), 0);
    rollout_free(r);
    pol_free(g_inner);
    task_free(t);
    fs_remove_tree(root, err);
}
END_TEST

/* An episode that cannot start comes back with a NULL record, and why goes
 * to the log of the options (level error), naming the task and seed. */
static void on_done_null(void *user, long tag, char *record, double reward)
{
    int *n = user;
    ck_assert_ptr_null(record);
    ck_assert_int_eq(tag, 5);
    ck_assert_double_eq(reward, 0);
    (*n)++;
}

static void keep_msg(void *ctx, int level, const char *msg)
{
    ck_assert_int_eq(level, RL_LOG_ERROR);
    snprintf(ctx, 512, "%s", msg);
}

START_TEST(test_rollout_start_failure_logged)
{
    char err[RL_ERR_MAX], root[] = "/tmp/rl-rollout-XXXXXX", said[512] = "";
    ck_assert_ptr_nonnull(mkdtemp(root));
    task *t;
    ck_assert_msg(task_load(&t, "tasks/leapyear.json", "repos", err) == 0, "%s", err);
    char *repo = t->repo;
    t->repo = "no-such-repo";
    pol_env env;
    pol_env_default(&env);
    env.gold_patch = t->patch;
    policy *pol;
    ck_assert_int_eq(pol_open(&pol, "oracle", &env, err), 0);
    rollout_opts o;
    rollout_opts_default(&o);
    o.ws_root = root;
    o.log = keep_msg;
    o.log_ctx = said;
    rollout *r;
    ck_assert_int_eq(rollout_new(&r, pol, &o, err), 0);
    ep_config cfg;
    ep_config_default(&cfg);
    ck_assert_int_eq(rollout_add(r, t, &cfg, 3, 5, err), 0);
    int n = 0;
    ck_assert_int_eq(rollout_drain(r, on_done_null, &n, err), 0);
    ck_assert_int_eq(n, 1);
    ck_assert_msg(!strncmp(said, "rollout: leapyear seed 3: ", 26), "%s", said);
    ck_assert_ptr_nonnull(strstr(said, "no-such-repo"));
    rollout_free(r);
    pol_free(pol);
    t->repo = repo;
    task_free(t);
    fs_remove_tree(root, err);
}
END_TEST

Suite *rollout_suite(void)
{
    Suite *s = suite_create("rollout");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_rollout_batches_episodes);
    tcase_add_test(tc, test_rollout_start_failure_logged);
    suite_add_tcase(s, tc);
    return s;
}
