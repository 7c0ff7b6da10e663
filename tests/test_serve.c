/* test_serve.c - `grpo serve` on loopback: every endpoint and the 4xx
 * answers through the project's HTTP client, streaming, concurrent
 * requests, the same tokens and logprobs as `--policy model:CKPT` for the
 * same prompt ids and seed, and a clean stop on SIGTERM. The checkpoint is
 * a tiny random model over the shipped tokenizer. */
#include "common/err.h"
#include "common/fsutil.h"
#include "http/http.h"
#include "model/model.h"
#include "policy/policy.h"
#include "protocol/tokenizer.h"
#include "tests/srvutil.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TOKPATH "models/tokenizer.json"
#define WINDOW 1024

static char dir[64], ckpt[128], logpath[128];
/* 1: the checkpoint is a Hugging Face directory of a Qwen2-shaped model
 * (q/k/v biases, untied head, head_dim 24 with d_model 32) taken through
 * `grpo import-hf` */
static int hf_mode;
static pid_t srv_pid;
static int srv_port;

static void make_ckpt(void)
{
    char err[RL_ERR_MAX], abs[PATH_MAX];
    ck_assert_ptr_nonnull(realpath(TOKPATH, abs));
    tok_t *tok;
    ck_assert_msg(tok_load(&tok, abs, err) == 0, "%s", err);
    model_config c;
    model_config_default(&c);
    c.vocab = tok_vocab_size(tok);
    c.d_model = 32;
    c.n_layer = 2;
    c.n_head = 2;
    c.n_kv_head = 1;
    c.d_ff = 48;
    c.max_seq = WINDOW;
    if (hf_mode) {
        c.qk_norm = 0;
        c.qkv_bias = 1;
        c.untied = 1;
        c.head_dim = 24;
    }
    model *m;
    ck_assert_int_eq(model_new(&m, &c, NULL, err), 0);
    model_random_init(m, 5);
    if (hf_mode) {
        char hf[160], cmd[PATH_MAX + 1024];
        snprintf(hf, sizeof hf, "%s/hf", dir);
        ck_assert_msg(model_save_hf(m, hf, 1, err) == 0, "%s", err);
        snprintf(cmd, sizeof cmd, "%s/grpo import-hf %s --out %s --tokenizer %s 2>/dev/null", su_bin_dir(), hf, ckpt,
                 abs);
        ck_assert_int_eq(system(cmd), 0);
    } else {
        model_meta meta;
        model_meta_default(&meta);
        snprintf(meta.tokenizer, sizeof meta.tokenizer, "%.1000s", abs);
        ck_assert_int_eq(model_file_hash(meta.tokenizer_hash, abs, err), 0);
        ck_assert_int_eq(model_save(m, ckpt, &meta, err), 0);
    }
    model_free(m);
    tok_free(tok);
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/rl-serve-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(ckpt, sizeof ckpt, "%s/m.safetensors", dir);
    snprintf(logpath, sizeof logpath, "%s/serve.log", dir);
    make_ckpt();
    char exe[256];
    snprintf(exe, sizeof exe, "%s/grpo", su_bin_dir());
    const char *argv[] = {exe, "serve", "--ckpt", ckpt, "--port", "0", "--served-model-name", "tiny",
                          "--max-batch", "8", NULL};
    srv_pid = su_spawn(&srv_port, logpath, argv, NULL);
}

static void setup_hf(void)
{
    hf_mode = 1;
    setup();
}

static void teardown(void)
{
    hf_mode = 0;
    if (srv_pid > 0)
        su_stop(srv_pid, SIGKILL, 0);
    srv_pid = 0;
    fs_remove_tree(dir, NULL);
}

/* One request; returns the status, *body the answer (caller frees). */
static long req(const char *method, const char *path, const char *json, char **body)
{
    return su_call(srv_port, NULL, method, path, json, 0, body);
}

/* The value of one line of the server's /metrics (the line must be there). */
static long metric(int port, const char *name)
{
    char *body, key[128];
    ck_assert_int_eq(su_call(port, NULL, "GET", "/metrics", NULL, 0, &body), 200);
    snprintf(key, sizeof key, "\n%s ", name);
    const char *m = strstr(body, key);
    ck_assert_msg(m != NULL, "/metrics has no %s", name);
    long v = atol(m + strlen(key));
    free(body);
    return v;
}

static cJSON *req_json(const char *method, const char *path, const char *json, long want)
{
    char *body;
    long st = req(method, path, json, &body);
    ck_assert_msg(st == want, "%s %s: status %ld, expected %ld: %s", method, path, st, want, body);
    cJSON *o = cJSON_Parse(body);
    ck_assert_msg(o != NULL, "%s %s: not JSON: %s", method, path, body);
    free(body);
    return o;
}

START_TEST(test_endpoints)
{
    cJSON *o = req_json("GET", "/health", NULL, 200);
    ck_assert_str_eq(cJSON_GetObjectItem(o, "status")->valuestring, "ok");
    cJSON_Delete(o);
    o = req_json("GET", "/v1/models", NULL, 200);
    ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "data"), 0)->child->valuestring, "tiny");
    cJSON_Delete(o);

    o = req_json("POST", "/v1/completions",
                 "{\"model\": \"tiny\", \"prompt\": \"<|im_start|>user\\nhi<|im_end|>\\n\", \"max_tokens\": 9, "
                 "\"seed\": 3, \"logprobs\": 2, \"n\": 2}",
                 200);
    cJSON *chs = cJSON_GetObjectItem(o, "choices");
    ck_assert_int_eq(cJSON_GetArraySize(chs), 2);
    for (int i = 0; i < 2; i++) {
        cJSON *ch = cJSON_GetArrayItem(chs, i), *lp = cJSON_GetObjectItem(ch, "logprobs");
        int nt = cJSON_GetArraySize(cJSON_GetObjectItem(ch, "token_ids"));
        ck_assert_int_ge(nt, 1);
        ck_assert_int_le(nt, 9);
        ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(lp, "token_logprobs")), nt);
        cJSON *top0 = cJSON_GetArrayItem(cJSON_GetObjectItem(lp, "top_logprobs"), 0);
        ck_assert_int_eq(cJSON_GetArraySize(top0), 2);
        ck_assert(cJSON_IsString(cJSON_GetObjectItem(ch, "text")));
    }
    ck_assert_int_eq((int)cJSON_GetObjectItem(cJSON_GetObjectItem(o, "usage"), "completion_tokens")->valuedouble >= 2,
                     1);
    cJSON_Delete(o);

    /* chat with a tool, logprobs with top alternatives */
    o = req_json("POST", "/v1/chat/completions",
                 "{\"model\": \"tiny\", \"max_tokens\": 12, \"seed\": 1, \"logprobs\": true, \"top_logprobs\": 3,"
                 " \"messages\": [{\"role\": \"system\", \"content\": \"fix bugs\"},"
                 " {\"role\": \"user\", \"content\": \"leap.c is wrong\"},"
                 " {\"role\": \"assistant\", \"content\": \"\", \"tool_calls\": [{\"id\": \"call_0\", \"type\": "
                 "\"function\", \"function\": {\"name\": \"read_file\", \"arguments\": \"{\\\"path\\\": \\\"leap.c\\\"}\"}}]},"
                 " {\"role\": \"tool\", \"tool_call_id\": \"call_0\", \"content\": \"int leap(int y);\"}],"
                 " \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"read_file\", \"description\": "
                 "\"read a file\", \"parameters\": {\"type\": \"object\", \"properties\": {\"path\": {\"type\": "
                 "\"string\"}}, \"required\": [\"path\"]}}}]}",
                 200);
    cJSON *ch = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "choices"), 0);
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(ch, "message"), "role")->valuestring, "assistant");
    cJSON *content = cJSON_GetObjectItem(cJSON_GetObjectItem(ch, "logprobs"), "content");
    ck_assert_int_ge(cJSON_GetArraySize(content), 1);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(content, 0), "top_logprobs")), 3);
    cJSON_Delete(o);

    /* streaming: events, then [DONE] */
    char *body;
    ck_assert_int_eq(req("POST", "/v1/completions",
                         "{\"model\": \"tiny\", \"prompt\": [1, 2, 3], \"max_tokens\": 6, \"stream\": true, "
                         "\"stream_options\": {\"include_usage\": true}}",
                         &body),
                     200);
    ck_assert_ptr_nonnull(strstr(body, "data: {"));
    ck_assert_ptr_nonnull(strstr(body, "\"usage\""));
    size_t bl = strlen(body);
    ck_assert_msg(bl > 16 && !strcmp(body + bl - 14, "data: [DONE]\n\n"), "%s", body);
    free(body);

    ck_assert_int_eq(req("GET", "/metrics", NULL, &body), 200);
    ck_assert_ptr_nonnull(strstr(body, "rl_serve_requests_total{endpoint=\"completions\",code=\"200\"} 2"));
    ck_assert_ptr_nonnull(strstr(body, "rl_serve_request_latency_seconds{quantile=\"0.99\"}"));
    ck_assert_ptr_nonnull(strstr(body, "rl_serve_queue_length 0"));
    free(body);

    /* every event is what cJSON prints for it, and a stream carries the
     * tokens and text of the same request answered whole */
    static const char *const reqs[][2] = {
        {"/v1/completions", "{\"model\": \"tiny\", \"prompt\": \"<|im_start|>user\\nhi<|im_end|>\\n\", "
                            "\"max_tokens\": 24, \"seed\": 5, \"n\": 2%s}"},
        {"/v1/chat/completions", "{\"model\": \"tiny\", \"max_tokens\": 24, \"seed\": 2, \"messages\": "
                                 "[{\"role\": \"user\", \"content\": \"hi\"}]%s}"}};
    for (int r = 0; r < 2; r++) {
        char q[512];
        snprintf(q, sizeof q, reqs[r][1], "");
        cJSON *whole = req_json("POST", reqs[r][0], q, 200);
        snprintf(q, sizeof q, reqs[r][1], ", \"stream\": true");
        ck_assert_int_eq(req("POST", reqs[r][0], q, &body), 200);
        char text[2][4096] = {"", ""}, ids[2][4096] = {"", ""};
        int events = 0;
        for (char *line = body, *nl; (nl = strstr(line, "\n\n")); line = nl + 2) {
            *nl = '\0';
            ck_assert_msg(!strncmp(line, "data: ", 6), "%s", line);
            if (!strcmp(line + 6, "[DONE]"))
                continue;
            cJSON *ev = cJSON_Parse(line + 6);
            ck_assert_ptr_nonnull(ev);
            char *canon = cJSON_PrintUnformatted(ev);
            ck_assert_str_eq(line + 6, canon);
            free(canon);
            /* every event names the weights' version, as the whole answer does */
            ck_assert_ptr_nonnull(cJSON_GetObjectItem(ev, "policy_version"));
            ck_assert_double_eq(cJSON_GetObjectItem(ev, "policy_version")->valuedouble,
                                cJSON_GetObjectItem(whole, "policy_version")->valuedouble);
            cJSON *ch = cJSON_GetArrayItem(cJSON_GetObjectItem(ev, "choices"), 0);
            int i = (int)cJSON_GetObjectItem(ch, "index")->valuedouble;
            cJSON *t = r == 0 ? cJSON_GetObjectItem(ch, "text")
                              : cJSON_GetObjectItem(cJSON_GetObjectItem(ch, "delta"), "content");
            if (cJSON_IsString(t))
                strncat(text[i], t->valuestring, sizeof text[i] - strlen(text[i]) - 1);
            cJSON *e;
            cJSON_ArrayForEach(e, cJSON_GetObjectItem(ch, "token_ids"))
                snprintf(ids[i] + strlen(ids[i]), sizeof ids[i] - strlen(ids[i]), "%d,", e->valueint);
            cJSON_Delete(ev);
            events++;
        }
        ck_assert_int_ge(events, 2); /* the tokens of one stream interval share an event */
        cJSON *c;
        cJSON_ArrayForEach(c, cJSON_GetObjectItem(whole, "choices"))
        {
            int i = (int)cJSON_GetObjectItem(c, "index")->valuedouble;
            char want[4096] = "";
            cJSON *e;
            cJSON_ArrayForEach(e, cJSON_GetObjectItem(c, "token_ids"))
                snprintf(want + strlen(want), sizeof want - strlen(want), "%d,", e->valueint);
            ck_assert_str_eq(ids[i], want);
            if (r == 0)
                ck_assert_str_eq(text[i], cJSON_GetObjectItem(c, "text")->valuestring);
        }
        cJSON_Delete(whole);
        free(body);
    }
}
END_TEST

/* Each user error: its status and the field it names. */
START_TEST(test_errors)
{
    static const struct {
        const char *path, *body;
        long status;
        const char *param; /* NULL: null */
    } cases[] = {
        {"/v1/completions", "{not json", 400, NULL},
        {"/v1/completions", "{\"prompt\": \"a\"}", 400, "model"},
        {"/v1/completions", "{\"model\": \"other\", \"prompt\": \"a\"}", 404, "model"},
        {"/v1/chat/completions", "{\"model\": \"nope\", \"messages\": []}", 404, "model"},
        {"/v1/completions", "{\"model\": \"tiny\"}", 400, "prompt"},
        {"/v1/completions", "{\"model\": \"tiny\", \"prompt\": \"a\", \"temperature\": -1}", 400, "temperature"},
        {"/v1/completions", "{\"model\": \"tiny\", \"prompt\": \"a\", \"top_p\": 0}", 400, "top_p"},
        {"/v1/completions", "{\"model\": \"tiny\", \"prompt\": \"a\", \"max_tokens\": 0}", 400, "max_tokens"},
        {"/v1/completions", "{\"model\": \"tiny\", \"prompt\": \"a\", \"n\": 9}", 400, "n"},
        {"/v1/completions", "{\"model\": \"tiny\", \"prompt\": \"a\", \"stop\": 5}", 400, "stop"},
        {"/v1/completions", "{\"model\": \"tiny\", \"prompt\": [1, 99999]}", 400, "prompt"},
        {"/v1/completions", "{\"model\": \"tiny\", \"prompt\": \"a\", \"logprobs\": 50}", 400, "logprobs"},
        {"/v1/chat/completions", "{\"model\": \"tiny\", \"messages\": []}", 400, "messages"},
        {"/v1/chat/completions", "{\"model\": \"tiny\", \"messages\": [{\"role\": \"wizard\"}]}", 400, "messages"},
        {"/v1/chat/completions", "{\"model\": \"tiny\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"tools\": [{\"type\": \"function\"}]}", 400, "tools"},
        {"/v1/nothing", "{}", 404, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cJSON *o = req_json("POST", cases[i].path, cases[i].body, cases[i].status);
        cJSON *e = cJSON_GetObjectItem(o, "error");
        ck_assert_msg(cJSON_IsString(cJSON_GetObjectItem(e, "message")), "case %zu", i);
        cJSON *p = cJSON_GetObjectItem(e, "param");
        if (cases[i].param)
            ck_assert_msg(cJSON_IsString(p) && !strcmp(p->valuestring, cases[i].param), "case %zu: param", i);
        else
            ck_assert_msg(cJSON_IsNull(p), "case %zu: param", i);
        cJSON_Delete(o);
    }
    /* a prompt past the window */
    char *big = malloc(WINDOW * 8 + 64), *w = big;
    w += sprintf(w, "{\"model\": \"tiny\", \"prompt\": [");
    for (int i = 0; i < WINDOW; i++)
        w += sprintf(w, "%s%d", i ? "," : "", 65 + i % 20);
    sprintf(w, "]}");
    cJSON *o = req_json("POST", "/v1/completions", big, 400);
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "error"), "param")->valuestring, "prompt");
    ck_assert_ptr_nonnull(strstr(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "error"), "message")->valuestring, "window"));
    cJSON_Delete(o);
    free(big);
    o = req_json("GET", "/v1/completions", NULL, 405);
    cJSON_Delete(o);
}
END_TEST

/* Seed for seed the tokens and logprobs of model:CKPT, alone and with
 * other requests in the batch. */
typedef struct par_arg {
    int seed;
    char *body;
} par_arg;

static void *par_req(void *v)
{
    par_arg *a = v;
    char json[256];
    snprintf(json, sizeof json,
             "{\"model\": \"tiny\", \"prompt\": [20, 30, 40, 50, 60, 70], \"max_tokens\": 24, \"seed\": %d, "
             "\"temperature\": 0.8, \"logprobs\": 0}", a->seed);
    req("POST", "/v1/completions", json, &a->body);
    return NULL;
}

/* `--policy model:CKPT` at temperature 0.8, as the requests ask. */
static policy *open_model_policy(void)
{
    char spec[160], err[RL_ERR_MAX];
    snprintf(spec, sizeof spec, "model:%s", ckpt);
    pol_env env;
    pol_env_default(&env);
    env.temperature = 0.8;
    env.top_p = 1.0;
    policy *p;
    ck_assert_msg(pol_open(&p, spec, &env, err) == 0, "%s", err);
    return p;
}

START_TEST(test_same_as_model_policy)
{
    char err[RL_ERR_MAX];
    policy *p = open_model_policy();
    enum { N = 6 };
    par_arg args[N];
    pthread_t th[N];
    for (int i = 0; i < N; i++) {
        args[i].seed = 100 + i;
        ck_assert_int_eq(pthread_create(&th[i], NULL, par_req, &args[i]), 0);
    }
    for (int i = 0; i < N; i++)
        pthread_join(th[i], NULL);
    static const int32_t prompt[] = {20, 30, 40, 50, 60, 70};
    long compared = 0;
    for (int i = 0; i < N; i++) {
        pol_request rq = {.context_ids = prompt, .n_context_ids = 6, .max_tokens = 24, .seed = (uint64_t)(100 + i)};
        pol_response rs;
        ck_assert_msg(pol_generate(p, &rs, &rq, 1, err) == 0, "%s", err);
        cJSON *o = cJSON_Parse(args[i].body);
        ck_assert_msg(o != NULL, "%s", args[i].body);
        cJSON *ch = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "choices"), 0);
        cJSON *ids = cJSON_GetObjectItem(ch, "token_ids");
        cJSON *lps = cJSON_GetObjectItem(cJSON_GetObjectItem(ch, "logprobs"), "token_logprobs");
        ck_assert_int_eq(cJSON_GetArraySize(ids), (int)rs.n_ids);
        for (size_t k = 0; k < rs.n_ids; k++) {
            ck_assert_int_eq((int)cJSON_GetArrayItem(ids, (int)k)->valuedouble, rs.ids[k]);
            double d = fabs(cJSON_GetArrayItem(lps, (int)k)->valuedouble - rs.logprobs[k]);
            ck_assert_msg(d < 1e-4, "seed %d token %zu: logprob differs by %g", 100 + i, k, d);
            compared++;
        }
        const char *text = cJSON_GetObjectItem(ch, "text")->valuestring;
        ck_assert_int_eq(strlen(text), rs.text_len);
        ck_assert_str_eq(cJSON_GetObjectItem(ch, "finish_reason")->valuestring,
                         rs.finish == POL_FINISH_STOP ? "stop" : "length");
        pol_response_dispose(&rs);
        cJSON_Delete(o);
        free(args[i].body);
    }
    ck_assert_int_ge(compared, N);
    pol_free(p);
}
END_TEST

/* The openai policy called from several threads at once (a fleet's
 * remote episodes each generate on their own thread), through a pool of
 * two HTTP clients: every call answers the tokens and logprobs of
 * model:CKPT for its seed. */
typedef struct oai_arg {
    policy *p;
    int seed;
    pol_response rs;
    int rc;
    char err[RL_ERR_MAX];
} oai_arg;

static void *oai_call(void *v)
{
    oai_arg *a = v;
    static const int32_t prompt[] = {20, 30, 40, 50, 60, 70};
    pol_request rq = {.context_ids = prompt, .n_context_ids = 6, .max_tokens = 24, .seed = (uint64_t)a->seed};
    a->rc = pol_generate(a->p, &a->rs, &rq, 1, a->err);
    return NULL;
}

START_TEST(test_openai_policy_threads)
{
    char err[RL_ERR_MAX], url[64], tokpath[PATH_MAX];
    ck_assert_ptr_nonnull(realpath(TOKPATH, tokpath));
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", srv_port);
    pol_env env;
    pol_env_default(&env);
    env.base_url = url;
    env.model = "tiny";
    env.api = "completions";
    env.tokenizer = tokpath;
    env.max_inflight = 2;
    env.temperature = 0.8;
    env.top_p = 1.0;
    policy *oai;
    ck_assert_msg(pol_open(&oai, "openai", &env, err) == 0, "%s", err);
    ck_assert_int_eq(oai->concurrent, 1);
    policy *p = open_model_policy();
    ck_assert_int_eq(p->concurrent, 0);
    enum { N = 6 };
    oai_arg args[N];
    pthread_t th[N];
    for (int i = 0; i < N; i++) {
        memset(&args[i], 0, sizeof args[i]);
        args[i].p = oai;
        args[i].seed = 300 + i;
        ck_assert_int_eq(pthread_create(&th[i], NULL, oai_call, &args[i]), 0);
    }
    for (int i = 0; i < N; i++)
        pthread_join(th[i], NULL);
    static const int32_t prompt[] = {20, 30, 40, 50, 60, 70};
    for (int i = 0; i < N; i++) {
        ck_assert_msg(args[i].rc == 0 && !args[i].rs.error, "call %d: %s %s", i, args[i].err,
                      args[i].rs.error ? args[i].rs.error : "");
        pol_request rq = {.context_ids = prompt, .n_context_ids = 6, .max_tokens = 24, .seed = (uint64_t)(300 + i)};
        pol_response rs;
        ck_assert_msg(pol_generate(p, &rs, &rq, 1, err) == 0, "%s", err);
        ck_assert_int_eq(args[i].rs.n_ids, rs.n_ids);
        for (size_t k = 0; k < rs.n_ids; k++) {
            ck_assert_int_eq(args[i].rs.ids[k], rs.ids[k]);
            ck_assert_msg(fabs(args[i].rs.logprobs[k] - rs.logprobs[k]) < 1e-4, "seed %d token %zu", 300 + i, k);
        }
        pol_response_dispose(&rs);
        pol_response_dispose(&args[i].rs);
    }
    pol_free(p);
    pol_free(oai);
}
END_TEST

/* A conversation's second turn (turn 1's prompt + reply ids + more)
 * reuses turn 1's keys and values: /metrics counts them, and the tokens
 * and logprobs are still those of model:CKPT for the same context. */
START_TEST(test_prefix_reuse)
{
    char err[RL_ERR_MAX], json[4096];
    policy *p = open_model_policy();
    int32_t ctx[400];
    int n = 0;
    for (int i = 0; i < 40; i++)
        ctx[n++] = 30 + (i * 7) % 200;
    long reused_before = -1;
    for (int turn = 0; turn < 2; turn++) {
        int w = snprintf(json, sizeof json, "{\"model\": \"tiny\", \"max_tokens\": 10, \"seed\": %d, "
                                            "\"temperature\": 0.8, \"logprobs\": 0, \"prompt\": [", 7 + turn);
        for (int i = 0; i < n; i++)
            w += snprintf(json + w, sizeof json - (size_t)w, "%s%d", i ? "," : "", ctx[i]);
        snprintf(json + w, sizeof json - (size_t)w, "]}");
        cJSON *o = req_json("POST", "/v1/completions", json, 200);
        cJSON *ch = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "choices"), 0);
        cJSON *ids = cJSON_GetObjectItem(ch, "token_ids");
        cJSON *lps = cJSON_GetObjectItem(cJSON_GetObjectItem(ch, "logprobs"), "token_logprobs");
        pol_request rq = {.context_ids = ctx, .n_context_ids = (size_t)n, .max_tokens = 10, .seed = (uint64_t)(7 + turn)};
        pol_response rs;
        ck_assert_msg(pol_generate(p, &rs, &rq, 1, err) == 0, "%s", err);
        ck_assert_int_eq(cJSON_GetArraySize(ids), (int)rs.n_ids);
        for (size_t k = 0; k < rs.n_ids; k++) {
            ck_assert_int_eq((int)cJSON_GetArrayItem(ids, (int)k)->valuedouble, rs.ids[k]);
            double d = fabs(cJSON_GetArrayItem(lps, (int)k)->valuedouble - rs.logprobs[k]);
            ck_assert_msg(d < 1e-4, "turn %d token %zu: logprob differs by %g", turn, k, d);
        }
        for (size_t k = 0; k < rs.n_ids; k++) /* the next turn extends this one */
            ctx[n++] = rs.ids[k];
        for (int i = 0; i < 15; i++)
            ctx[n++] = 40 + (i * 5) % 100;
        pol_response_dispose(&rs);
        cJSON_Delete(o);
        long reused = metric(srv_port, "rl_serve_prefix_tokens_reused_total");
        if (turn == 0)
            reused_before = reused;
        else /* at least turn 1's prompt */
            ck_assert_msg(reused - reused_before >= 40, "reused %ld then %ld", reused_before, reused);
        metric(srv_port, "rl_serve_prefix_cache_entries");
    }
    pol_free(p);
}
END_TEST

/* --min-step-ms: every decoding step lasts at least the floor, so a
 * request's wall time is at least its steps times the floor (the tiny
 * model's own step is well under a millisecond). */
START_TEST(test_min_step_floor)
{
    char exe[256], log2[160];
    snprintf(exe, sizeof exe, "%s/grpo", su_bin_dir());
    snprintf(log2, sizeof log2, "%s/serve-floor.log", dir);
    const char *argv[] = {exe, "serve", "--ckpt", ckpt, "--port", "0", "--served-model-name", "tiny",
                          "--min-step-ms", "60", NULL};
    int port;
    pid_t pid = su_spawn(&port, log2, argv, NULL);
    long steps0 = metric(port, "rl_serve_steps_total");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char *body;
    long st = su_call(port, NULL, "POST", "/v1/completions",
                      "{\"model\": \"tiny\", \"prompt\": [30, 31, 32], \"max_tokens\": 6, \"seed\": 3}", 0, &body);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ck_assert_msg(st == 200, "status %ld: %s", st, body);
    free(body);
    long steps = metric(port, "rl_serve_steps_total") - steps0;
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    ck_assert_msg(steps >= 1, "no decoding step counted");
    ck_assert_msg(ms >= 60.0 * (double)steps, "%ld steps in %.1f ms: under the 60 ms floor", steps, ms);
    su_stop(pid, SIGTERM, 1);
}
END_TEST

START_TEST(test_sigterm_stops)
{
    ck_assert_int_eq(kill(srv_pid, SIGTERM), 0);
    int st = 0;
    for (int i = 0; i < 100; i++) {
        if (waitpid(srv_pid, &st, WNOHANG) == srv_pid) {
            srv_pid = 0;
            break;
        }
        usleep(50000);
    }
    ck_assert_msg(srv_pid == 0, "grpo serve still running 5 s after SIGTERM");
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}
END_TEST

START_TEST(test_usage_errors)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s/grpo serve >/dev/null 2>&1", su_bin_dir());
    int st = system(cmd);
    ck_assert_int_eq(WEXITSTATUS(st), 2);
    snprintf(cmd, sizeof cmd, "%s/grpo serve --ckpt %s --port 70000 >/dev/null 2>&1", su_bin_dir(), ckpt);
    st = system(cmd);
    ck_assert_int_eq(WEXITSTATUS(st), 2);
    snprintf(cmd, sizeof cmd, "%s/grpo serve --ckpt %s --stream-interval-ms 1001 2>&1 | grep -q 'expected an integer 0..1000'",
             su_bin_dir(), ckpt);
    st = system(cmd);
    ck_assert_int_eq(WEXITSTATUS(st), 0);
    snprintf(cmd, sizeof cmd, "%s/grpo serve --ckpt %s --min-step-ms 1001 2>&1 | grep -q 'expected an integer 0..1000'",
             su_bin_dir(), ckpt);
    st = system(cmd);
    ck_assert_int_eq(WEXITSTATUS(st), 0);
    snprintf(cmd, sizeof cmd, "%s/grpo serve --ckpt %s/none.safetensors --port 0 >/dev/null 2>&1", su_bin_dir(), dir);
    st = system(cmd);
    ck_assert_int_eq(WEXITSTATUS(st), 1);
}
END_TEST

/* The official OpenAI Node SDK (pinned in tests/npm/, fetched into
 * $RL_BUILD/npm by scripts/install-npm.sh) as the client. */
START_TEST(test_openai_sdk)
{
    if (system("command -v node >/dev/null 2>&1") != 0) {
        fprintf(stderr, "serve: node not found: the OpenAI SDK test is skipped\n");
        return;
    }
    const char *b = getenv("RL_BUILD");
    char mods[512], probe[600], cmd[1400];
    snprintf(mods, sizeof mods, "%s/npm/node_modules", b && *b ? b : "build");
    snprintf(probe, sizeof probe, "%s/openai/package.json", mods);
    ck_assert_msg(access(probe, R_OK) == 0, "%s missing: run scripts/install-npm.sh (make deps)", probe);
    snprintf(cmd, sizeof cmd, "NODE_PATH=%s timeout 120 node tests/npm/sdk_test.js http://127.0.0.1:%d/v1 tiny 2>&1",
             mods, srv_port);
    FILE *f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    char out[4096] = "";
    size_t n = fread(out, 1, sizeof out - 1, f);
    out[n] = '\0';
    int st = pclose(f);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0 && strstr(out, "ok"), "sdk_test.js: %s", out);
}
END_TEST

Suite *serve_suite(void)
{
    Suite *s = suite_create("serve");
    TCase *tc = tcase_create("serve");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_endpoints);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_same_as_model_policy);
    tcase_add_test(tc, test_openai_policy_threads);
    tcase_add_test(tc, test_prefix_reuse);
    tcase_add_test(tc, test_openai_sdk);
    tcase_add_test(tc, test_min_step_floor);
    tcase_add_test(tc, test_sigterm_stops);
    tcase_add_test(tc, test_usage_errors);
    suite_add_tcase(s, tc);
    /* a checkpoint imported from a Hugging Face directory serves the same
     * tokens and logprobs as the model policy over it */
    TCase *hf = tcase_create("hf");
    tcase_add_checked_fixture(hf, setup_hf, teardown);
    tcase_set_timeout(hf, 120);
    tcase_add_test(hf, test_same_as_model_policy);
    suite_add_tcase(s, hf);
    return s;
}
