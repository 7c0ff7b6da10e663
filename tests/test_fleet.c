/* Rollouts on a fleet (docs/grpo.md): two `grpo serve` and two `harness
 * serve` processes on loopback, a two-step GRPO run whose generation and
 * episodes all go to them; the weights endpoint and its refusals; a
 * generation server that is down. */
#include "common/err.h"
#include "common/fsutil.h"
#include "grpo/grpo.h"
#include "grpo/grpo_int.h"
#include "grpo/sample.h"
#include "http/http.h"
#include "model/model.h"
#include "tests/srvutil.h"

#include <cJSON.h>
#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FLEET_TOKEN "fleet-test-token"

typedef struct fleet {
    char dir[64];
    pid_t gen[2], env[2];
    int gport[2], eport[2];
} fleet;

static void fleet_start(fleet *f)
{
    memset(f, 0, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/rl-fleet-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(f->dir));
    chmod(f->dir, 0755); /* the sandbox's uid must reach the work trees */
    char exe[256], log[128];
    const char *env[] = {"RL_FLEET_TOKEN=" FLEET_TOKEN, NULL};
    snprintf(exe, sizeof exe, "%s/grpo", su_bin_dir());
    for (int i = 0; i < 2; i++) {
        snprintf(log, sizeof log, "%s/gen%d.log", f->dir, i);
        const char *argv[] = {exe, "serve", "--ckpt", "models/policy.safetensors", "--port", "0",
                              "--served-model-name", "fleet", "--max-batch", "8", "--token-env", "RL_FLEET_TOKEN",
                              NULL};
        f->gen[i] = su_spawn(&f->gport[i], log, argv, env);
    }
    snprintf(exe, sizeof exe, "%s/harness", su_bin_dir());
    for (int i = 0; i < 2; i++) {
        char out[128], id[8], ws[160];
        snprintf(log, sizeof log, "%s/env%d.log", f->dir, i);
        snprintf(out, sizeof out, "%s/env%d.jsonl", f->dir, i);
        snprintf(id, sizeof id, "e%d", i);
        snprintf(ws, sizeof ws, "RL_WS_ROOT=%s/ws-e%d", f->dir, i);
        const char *argv[] = {exe, "serve", "--port", "0", "--out", out, "--server-id", id, "--max-test-runs", "1",
                              "--token-env", "RL_FLEET_TOKEN", NULL};
        const char *eenv[] = {ws, "RL_FLEET_TOKEN=" FLEET_TOKEN, NULL};
        f->env[i] = su_spawn(&f->eport[i], log, argv, eenv);
    }
}

static void fleet_stop(fleet *f)
{
    for (int i = 0; i < 2; i++) {
        if (f->gen[i] > 0)
            su_stop(f->gen[i], SIGTERM, 1);
        if (f->env[i] > 0)
            su_stop(f->env[i], SIGTERM, 1);
    }
    fs_remove_tree(f->dir, NULL);
}

static void fleet_config(grpo_config *c, const fleet *f, const char *out)
{
    grpo_config_default(c);
    snprintf(c->init, sizeof c->init, "models/policy.safetensors");
    snprintf(c->out, sizeof c->out, "%s/%s", f->dir, out);
    snprintf(c->ws_root, sizeof c->ws_root, "%s/ws-trainer", f->dir);
    snprintf(c->train_tasks, sizeof c->train_tasks, "leapyear");
    c->steps = 2;
    c->tasks_per_step = 1;
    c->group_size = 2;
    c->max_turns = 2;
    c->max_reply_tokens = 24;
    c->think = 0;
    c->eval_every = 0;
    c->loss.kl_coef = 0;
    c->quiet = 1;
    snprintf(c->fleet_generate, sizeof c->fleet_generate, "http://127.0.0.1:%d/v1,http://127.0.0.1:%d/v1",
             f->gport[0], f->gport[1]);
    snprintf(c->fleet_env, sizeof c->fleet_env, "http://127.0.0.1:%d,http://127.0.0.1:%d", f->eport[0],
             f->eport[1]);
    snprintf(c->fleet_model, sizeof c->fleet_model, "fleet");
    snprintf(c->fleet_token_env, sizeof c->fleet_token_env, "RL_FLEET_TOKEN");
}

/* The policy_version a generation server reports on /v1/models and /metrics (they must agree). */
static long served_version(int port)
{
    char *body = NULL;
    ck_assert_int_eq(su_call(port, FLEET_TOKEN, "GET", "/v1/models", NULL, 0, &body), 200);
    cJSON *o = cJSON_Parse(body);
    const cJSON *v = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "data"), 0), "policy_version");
    ck_assert(cJSON_IsNumber(v));
    long ver = (long)v->valuedouble;
    cJSON_Delete(o);
    free(body);
    ck_assert_int_eq(su_call(port, NULL, "GET", "/metrics", NULL, 0, &body), 200);
    char line[64];
    snprintf(line, sizeof line, "\nrl_serve_policy_version %ld\n", ver);
    ck_assert_msg(strstr(body, line), "/metrics does not say version %ld", ver);
    free(body);
    return ver;
}

/* The records of a JSONL file (up to max). */
static int read_jsonl(cJSON **out, int max, const char *path)
{
    char *text, err[RL_ERR_MAX];
    ck_assert_msg(fs_read_file(&text, NULL, path, 1 << 26, err) == 0, "%s", err);
    int n = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        ck_assert_int_lt(n, max);
        out[n] = cJSON_Parse(line);
        ck_assert_ptr_nonnull(out[n]);
        n++;
    }
    free(text);
    return n;
}

/* A long completion on another thread (no assertions off the test's thread). */
typedef struct long_req {
    int port;
    long status;
    char *body;
} long_req;

static void *long_completion(void *arg)
{
    long_req *q = arg;
    char err[RL_ERR_MAX], url[128];
    http_client *c;
    http_client_opts o;
    http_client_opts_default(&o);
    if (http_client_new(&c, &o, err) < 0)
        return NULL;
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/completions", q->port);
    const char *hdr[] = {"Authorization: Bearer " FLEET_TOKEN, NULL};
    const char *body = "{\"model\": \"fleet\", \"prompt\": [1, 2, 3], \"max_tokens\": 1500, "
                       "\"ignore_eos\": true, \"seed\": 1}";
    http_request rq = {.method = "POST", .url = url, .headers = hdr, .content_type = "application/json",
                       .body = body, .body_len = strlen(body)};
    http_response rs;
    if (http_client_request(c, &rs, &rq, err) == 0) {
        q->status = rs.status;
        q->body = strdup(rs.body);
    }
    http_response_dispose(&rs);
    http_client_free(c);
    return NULL;
}

START_TEST(test_fleet_two_steps)
{
    fleet f;
    fleet_start(&f);
    setenv("RL_FLEET_TOKEN", FLEET_TOKEN, 1);
    char err[RL_ERR_MAX];

    /* the weights endpoint: token, fields, another config */
    char *body = NULL;
    ck_assert_int_eq(su_call(f.gport[0], NULL, "POST", "/v1/weights", "{}", 0, &body), 401);
    free(body);
    ck_assert_int_eq(su_call(f.gport[0], FLEET_TOKEN, "POST", "/v1/weights", "{\"path\": \"models/policy.safetensors\"}",
                             0, &body), 400);
    ck_assert_msg(strstr(body, "\"param\":\"version\""), "%s", body);
    free(body);
    model_config mc;
    model_config_default(&mc);
    mc.d_model = 64, mc.n_head = 4, mc.n_kv_head = 2, mc.d_ff = 96, mc.n_layer = 1, mc.max_seq = 64;
    model_opts mo;
    model_opts_default(&mo);
    mo.n_threads = 1;
    model *other;
    ck_assert_int_eq(model_new(&other, &mc, &mo, err), 0);
    char opath[128], req[256];
    snprintf(opath, sizeof opath, "%s/other.safetensors", f.dir);
    ck_assert_msg(model_save(other, opath, NULL, err) == 0, "%s", err);
    model_free(other);
    snprintf(req, sizeof req, "{\"path\": \"%s\", \"version\": 7}", opath);
    ck_assert_int_eq(su_call(f.gport[0], FLEET_TOKEN, "POST", "/v1/weights", req, 0, &body), 400);
    ck_assert_msg(strstr(body, "\"param\":\"path\"") && strstr(body, "d_model 64, expected the served model's"), "%s",
                  body);
    free(body);
    ck_assert_int_eq(served_version(f.gport[0]), 0);

    /* a swap while a request decodes: its first token is of version 0,
     * its last of version 5 */
    long_req q = {f.gport[0], 0, NULL};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, long_completion, &q), 0);
    usleep(300 * 1000);
    ck_assert_int_eq(su_call(f.gport[0], FLEET_TOKEN, "POST", "/v1/weights",
                             "{\"path\": \"models/policy.safetensors\", \"version\": 5}", 0, &body), 200);
    ck_assert_msg(strstr(body, "\"policy_version\":5"), "%s", body);
    free(body);
    pthread_join(th, NULL);
    ck_assert_int_eq(q.status, 200);
    cJSON *a = cJSON_Parse(q.body);
    ck_assert_int_eq((long)cJSON_GetObjectItem(a, "policy_version")->valuedouble, 0);
    ck_assert_msg(cJSON_GetObjectItem(a, "policy_version_last") &&
                      (long)cJSON_GetObjectItem(a, "policy_version_last")->valuedouble == 5,
                  "the swap did not land during the request: %.300s", q.body);
    cJSON_Delete(a);
    free(q.body);
    ck_assert_int_eq(served_version(f.gport[0]), 5);

    /* the env server's token fields: context ids at reset, refusals at a step */
    ck_assert_int_eq(su_call(f.eport[0], FLEET_TOKEN, "POST", "/v1/reset",
                             "{\"task\": \"leapyear\", \"seed\": 3, \"return_context_ids\": true}", 0, &body),
                     200);
    cJSON *r = cJSON_Parse(body);
    free(body);
    const cJSON *g = cJSON_GetObjectItem(r, "generation");
    ck_assert_int_gt(cJSON_GetArraySize(cJSON_GetObjectItem(g, "context_ids")), 100);
    ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(g, "max_tokens")) && cJSON_IsNumber(cJSON_GetObjectItem(g, "seed")));
    snprintf(req, sizeof req, "{\"episode_id\": \"%s\", \"message\": \"hi\", \"token_ids\": [1, 2], \"logprobs\": [-1]}",
             cJSON_GetStringValue(cJSON_GetObjectItem(r, "episode_id")));
    ck_assert_int_eq(su_call(f.eport[0], FLEET_TOKEN, "POST", "/v1/step", req, 0, &body), 400);
    ck_assert_msg(strstr(body, "\"param\":\"logprobs\""), "%s", body);
    free(body);
    snprintf(req, sizeof req, "{\"episode_id\": \"%s\", \"message\": \"hi\", \"token_ids\": [999999], \"logprobs\": [-1]}",
             cJSON_GetStringValue(cJSON_GetObjectItem(r, "episode_id")));
    ck_assert_int_eq(su_call(f.eport[0], FLEET_TOKEN, "POST", "/v1/step", req, 0, &body), 400);
    ck_assert_msg(strstr(body, "token_ids[0]"), "%s", body);
    free(body);
    snprintf(req, sizeof req, "{\"episode_id\": \"%s\"}", cJSON_GetStringValue(cJSON_GetObjectItem(r, "episode_id")));
    ck_assert_int_eq(su_call(f.eport[0], FLEET_TOKEN, "POST", "/v1/close", req, 0, &body), 200);
    free(body);
    cJSON_Delete(r);

    /* two steps on the fleet */
    grpo_config c;
    fleet_config(&c, &f, "run");
    grpo_trainer *t = NULL;
    ck_assert_msg(grpo_open(&t, &c, NULL, NULL, err) == 0, "%s", err);
    for (long step = 1; step <= 2; step++) {
        ck_assert_msg(grpo_train(t, step, err) == 0, "%s", err);
        /* after each update every generation server decodes with the next version */
        for (int i = 0; i < 2; i++)
            ck_assert_int_eq(served_version(f.gport[i]), step + 1);
    }
    /* the servers' records train as they are: one sequence per episode
     * (history keep) holding every sampled id as a target of version 2 */
    size_t nlast = 0;
    char *const *last = grpo_last_records(t, &nlast);
    ck_assert_uint_eq(nlast, 2);
    for (size_t i = 0; i < nlast; i++) {
        grpo_seqs S;
        grpo_seqs_init(&S);
        ck_assert_msg(grpo_seqs_add_json(&S, last[i], 0, grpo_model(t)->cfg.vocab, grpo_model(t)->cfg.max_seq, err) == 0,
                      "%s", err);
        ck_assert_uint_eq(S.n, 1);
        cJSON *rec = cJSON_Parse(last[i]);
        int nids = 0;
        const cJSON *turn;
        cJSON_ArrayForEach(turn, cJSON_GetObjectItem(rec, "turns")) nids += cJSON_GetArraySize(cJSON_GetObjectItem(turn, "ids"));
        cJSON_Delete(rec);
        ck_assert_int_eq(S.v[0].n_policy, nids);
        for (int p = 0; p < S.v[0].n; p++)
            if (S.v[0].targets[p] >= 0)
                ck_assert_int_eq(S.v[0].version[p], 2);
        grpo_seqs_dispose(&S);
    }
    grpo_close(t);

    /* every episode recorded once by one env server, the trainer's record
     * equal to it; step-1 turns carry version 1, step-2 turns version 2 */
    char path[160];
    cJSON *tr[8], *ev[32];
    snprintf(path, sizeof path, "%s/run/records.jsonl", f.dir);
    int nt = read_jsonl(tr, 8, path);
    ck_assert_int_eq(nt, 4);
    int ne = 0;
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/env%d.jsonl", f.dir, i);
        int k = read_jsonl(ev + ne, 32 - ne, path);
        ck_assert_int_eq(k, i == 0 ? 3 : 2); /* resets go round robin; env 0 also has the closed one */
        ne += k;
    }
    for (int i = 0; i < nt; i++) {
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(tr[i], "episode_id"));
        ck_assert_ptr_nonnull(id);
        int found = 0;
        for (int k = 0; k < ne; k++) {
            if (strcmp(id, cJSON_GetStringValue(cJSON_GetObjectItem(ev[k], "episode_id"))))
                continue;
            found++;
            ck_assert(cJSON_Compare(cJSON_GetObjectItem(tr[i], "reward"), cJSON_GetObjectItem(ev[k], "reward"), 1));
            ck_assert(cJSON_Compare(tr[i], ev[k], 1));
        }
        ck_assert_int_eq(found, 1);
        const cJSON *turn;
        int nturns = 0;
        cJSON_ArrayForEach(turn, cJSON_GetObjectItem(tr[i], "turns"))
        {
            nturns++;
            const cJSON *ids = cJSON_GetObjectItem(turn, "ids"), *lps = cJSON_GetObjectItem(turn, "logprobs");
            ck_assert_int_gt(cJSON_GetArraySize(ids), 0);
            ck_assert_int_eq(cJSON_GetArraySize(ids), cJSON_GetArraySize(lps));
            ck_assert(cJSON_GetObjectItem(turn, "context_ids"));
            ck_assert_int_eq((long)cJSON_GetObjectItem(turn, "policy_version")->valuedouble, i < 2 ? 1 : 2);
        }
        ck_assert_int_gt(nturns, 0);
    }
    for (int i = 0; i < nt; i++)
        cJSON_Delete(tr[i]);
    for (int k = 0; k < ne; k++)
        cJSON_Delete(ev[k]);

    /* asynchronous: the same servers, turns stamped by the servers'
     * versions, every episode the trainer took recorded once */
    fleet_config(&c, &f, "run-async");
    c.mode = GRPO_ASYNC;
    c.lambda = 0.5;
    ck_assert_msg(grpo_open(&t, &c, NULL, NULL, err) == 0, "%s", err);
    ck_assert_msg(grpo_train(t, 0, err) == 0, "%s", err);
    grpo_close(t);
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(served_version(f.gport[i]), 3);
    snprintf(path, sizeof path, "%s/run-async/records.jsonl", f.dir);
    nt = read_jsonl(tr, 8, path);
    ck_assert_int_ge(nt, 2);
    ne = 0;
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/env%d.jsonl", f.dir, i);
        ne += read_jsonl(ev + ne, 32 - ne, path);
    }
    for (int i = 0; i < nt; i++) {
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(tr[i], "episode_id"));
        int found = 0;
        for (int k = 0; k < ne; k++)
            found += !strcmp(id, cJSON_GetStringValue(cJSON_GetObjectItem(ev[k], "episode_id")));
        ck_assert_int_eq(found, 1);
        const cJSON *turn;
        cJSON_ArrayForEach(turn, cJSON_GetObjectItem(tr[i], "turns"))
        {
            long v = (long)cJSON_GetObjectItem(turn, "policy_version")->valuedouble;
            ck_assert(v >= 1 && v <= 2);
        }
    }
    for (int i = 0; i < nt; i++)
        cJSON_Delete(tr[i]);
    for (int k = 0; k < ne; k++)
        cJSON_Delete(ev[k]);

    /* a generation server that is down: one line naming its URL */
    int down = f.gport[1];
    su_stop(f.gen[1], SIGTERM, 1);
    f.gen[1] = 0;
    fleet_config(&c, &f, "run-down");
    ck_assert_int_lt(grpo_open(&t, &c, NULL, NULL, err), 0);
    char want[64];
    snprintf(want, sizeof want, "http://127.0.0.1:%d/v1", down);
    ck_assert_msg(strstr(err, want) && !strchr(err, '\n'), "%s", err);
    fleet_stop(&f);
}
END_TEST

Suite *fleet_suite(void)
{
    Suite *s = suite_create("fleet");
    TCase *tc = tcase_create("fleet");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_fleet_two_steps);
    suite_add_tcase(s, tc);
    return s;
}
