/* The environment server (harness/envsrv.h, `harness serve`): the API
 * and its errors on a real loopback server, 50 episodes replaying the
 * oracle's moves with 16 open at once, a kill -9 and restart, and the
 * Python and Node clients. */
#include "common/err.h"
#include "common/fsutil.h"
#include "harness/envsrv.h"
#include "harness/workspace.h"
#include "http/http.h"
#include "policy/policy.h"
#include "corpus/task.h"
#include "tests/srvutil.h"

#include <cJSON.h>
#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- an in-process server --------------------------------------------------- */

typedef struct srv {
    char dir[64], out[128], ws[128];
    task_set tasks;
    ep_config base;
    envsrv *env;
    http_server *http;
    int port;
    const char *token;
} srv;

static void srv_start(srv *s, int max_episodes, int idle_s, const char *token, int finished_keep)
{
    char err[RL_ERR_MAX];
    memset(s, 0, sizeof *s);
    snprintf(s->dir, sizeof s->dir, "/tmp/rl-envsrv-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(s->dir));
    chmod(s->dir, 0755); /* the sandbox's uid must reach the work trees */
    snprintf(s->out, sizeof s->out, "%s/rec.jsonl", s->dir);
    snprintf(s->ws, sizeof s->ws, "%s/ws", s->dir);
    ck_assert_msg(task_set_load(&s->tasks, "tasks", "repos", err) == 0, "%s", err);
    ep_config_default(&s->base);
    envsrv_opts o;
    envsrv_opts_default(&o);
    o.tasks = &s->tasks;
    o.base = &s->base;
    o.out = s->out;
    o.ws_root = s->ws;
    o.server_id = "t1";
    o.token = token;
    o.max_episodes = max_episodes;
    o.max_test_runs = 2;
    o.idle_timeout_s = idle_s;
    if (finished_keep)
        o.finished_keep = finished_keep;
    s->token = token;
    ck_assert_msg(envsrv_new(&s->env, &o, err) == 0, "%s", err);
    http_server_opts ho;
    http_server_opts_default(&ho);
    ho.body_max = ENVSRV_BODY_MAX;
    ho.handler = envsrv_handle;
    ho.ctx = s->env;
    ck_assert_msg(http_server_new(&s->http, &ho, err) == 0, "%s", err);
    s->port = http_server_port(s->http);
}

static void srv_stop(srv *s)
{
    http_server_free(s->http);
    envsrv_free(s->env);
    task_set_dispose(&s->tasks);
    fs_remove_tree(s->dir, NULL);
}

static cJSON *call_json(const srv *s, const char *method, const char *path, const char *json, long want)
{
    char *body;
    long st = su_call(s->port, s->token, method, path, json, 0, &body);
    ck_assert_msg(st == want, "%s %s: status %ld, expected %ld: %s", method, path, st, want, body);
    cJSON *o = cJSON_Parse(body);
    ck_assert_msg(o != NULL || want == 200, "%s %s: not JSON: %s", method, path, body);
    free(body);
    return o;
}

/* An error answer naming param. */
static void want_error(const srv *s, const char *method, const char *path, const char *json, long status,
                       const char *param)
{
    cJSON *o = call_json(s, method, path, json, status);
    const cJSON *e = cJSON_GetObjectItem(o, "error");
    ck_assert_ptr_nonnull(e);
    ck_assert_ptr_nonnull(cJSON_GetStringValue(cJSON_GetObjectItem(e, "message")));
    if (param)
        ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(e, "param")), param);
    cJSON_Delete(o);
}

static const char *str_of(const cJSON *o, const char *k)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(o, k));
    ck_assert_msg(v != NULL, "field %s missing", k);
    return v;
}

static char *step_body(const char *id, const char *text)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "episode_id", id);
    cJSON_AddStringToObject(o, "message", text);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

/* The records of a file, one cJSON per line (the caller deletes). */
static int read_records(cJSON **v, int max, const char *path)
{
    char *text = NULL, err[RL_ERR_MAX];
    if (fs_read_file(&text, NULL, path, 1 << 30, err) < 0)
        return 0;
    int n = 0;
    for (char *p = text, *nl; p && *p && n < max; p = nl ? nl + 1 : NULL) {
        nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        v[n] = cJSON_Parse(p);
        ck_assert_msg(v[n] != NULL, "%s: record %d is not JSON", path, n);
        n++;
    }
    free(text);
    return n;
}

START_TEST(test_api_and_errors)
{
    srv s;
    srv_start(&s, 2, 0, "sekret", 1);
    char *body;
    /* health needs no token; the API does */
    ck_assert_int_eq(su_call(s.port, NULL, "GET", "/health", NULL, 0, &body), 200);
    ck_assert_ptr_nonnull(strstr(body, "\"server_id\":\"t1\""));
    free(body);
    ck_assert_int_eq(su_call(s.port, NULL, "GET", "/v1/tasks", NULL, 0, &body), 401);
    ck_assert_ptr_nonnull(strstr(body, "\"param\":\"Authorization\""));
    free(body);
    ck_assert_int_eq(su_call(s.port, "wrong", "GET", "/v1/tasks", NULL, 0, &body), 401);
    free(body);

    cJSON *o = call_json(&s, "GET", "/v1/tasks?select=repo:leapyear", NULL, 200);
    const cJSON *tl = cJSON_GetObjectItem(o, "tasks");
    ck_assert_int_ge(cJSON_GetArraySize(tl), 1);
    ck_assert_str_eq(str_of(cJSON_GetArrayItem(tl, 0), "repo"), "leapyear");
    cJSON_Delete(o);
    want_error(&s, "GET", "/v1/tasks?select=kind:nope", NULL, 400, "select");

    /* bad requests name their field */
    want_error(&s, "POST", "/v1/reset", "[1]", 400, "body");
    want_error(&s, "POST", "/v1/reset", "{}", 400, "task");
    want_error(&s, "POST", "/v1/reset", "{\"task\":\"no_such_task\"}", 404, "task");
    want_error(&s, "POST", "/v1/reset", "{\"task\":\"leapyear\",\"seed\":-1}", 400, "seed");
    want_error(&s, "POST", "/v1/reset", "{\"task\":\"leapyear\",\"config\":{\"prompts_dir\":\"/etc\"}}", 400,
               "config.prompts_dir");
    want_error(&s, "POST", "/v1/reset", "{\"task\":\"leapyear\",\"config\":{\"prompt\":\"../../etc/passwd\"}}", 400,
               "config.prompt");
    want_error(&s, "POST", "/v1/reset", "{\"task\":\"leapyear\",\"config\":{\"max_turns\":0}}", 400,
               "config.max_turns");
    want_error(&s, "POST", "/v1/reset", "{\"task\":\"leapyear\",\"config\":{\"template\":\"llama\"}}", 400,
               "config.template");
    want_error(&s, "GET", "/v1/reset", NULL, 405, NULL);
    want_error(&s, "GET", "/v1/nothing", NULL, 404, NULL);
    want_error(&s, "POST", "/v1/step", "{\"message\":\"x\"}", 400, "episode_id");
    want_error(&s, "POST", "/v1/step", "{\"episode_id\":\"t1-x-1\",\"message\":\"x\"}", 404, "episode_id");
    want_error(&s, "GET", "/v1/state", NULL, 400, "episode_id");
    /* a body over the cap never reaches the handler */
    char bigf[160], cmd[512];
    snprintf(bigf, sizeof bigf, "%s/big.json", s.dir);
    FILE *bf = fopen(bigf, "w");
    for (size_t i = 0; i < ENVSRV_BODY_MAX + 10; i++)
        fputc(' ', bf);
    fclose(bf);
    snprintf(cmd, sizeof cmd,
             "/usr/bin/curl -sS -H 'Expect:' -H 'Authorization: Bearer sekret' --data-binary @%s -o /dev/null -w '%%{http_code}' "
             "http://127.0.0.1:%d/v1/step",
             bigf, s.port);
    FILE *cf = popen(cmd, "r");
    char code[16] = "";
    ck_assert(fgets(code, sizeof code, cf) != NULL);
    pclose(cf);
    ck_assert_str_eq(code, "413");
    /* an episode: reset, a malformed turn, a tool call, state, close */
    o = call_json(&s, "POST", "/v1/reset", "{\"task\":\"leapyear\",\"seed\":3,\"config\":{\"max_turns\":5}}", 200);
    char id[ENVSRV_ID_MAX];
    snprintf(id, sizeof id, "%s", str_of(o, "episode_id"));
    ck_assert(strncmp(id, "t1-", 3) == 0);
    const cJSON *msgs = cJSON_GetObjectItem(o, "messages");
    ck_assert_int_eq(cJSON_GetArraySize(msgs), 2);
    ck_assert_str_eq(str_of(cJSON_GetArrayItem(msgs, 0), "role"), "system");
    ck_assert_str_eq(str_of(cJSON_GetArrayItem(msgs, 1), "role"), "user");
    char *tools = cJSON_PrintUnformatted(cJSON_GetObjectItem(o, "tools"));
    ck_assert_ptr_nonnull(strstr(tools, "\"name\":\"run_tests\""));
    ck_assert_ptr_nonnull(strstr(tools, "\"parameters\":{\"type\":\"object\""));
    free(tools);
    cJSON_Delete(o);

    char req[512];
    snprintf(req, sizeof req, "{\"episode_id\":\"%s\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}", id);
    want_error(&s, "POST", "/v1/step", req, 400, "message.role");
    snprintf(req, sizeof req, "{\"episode_id\":\"%s\",\"message\":\"x\",\"finish_reason\":\"maybe\"}", id);
    want_error(&s, "POST", "/v1/step", req, 400, "finish_reason");

    char *b = step_body(id, "<tool_call>\n<function=no_such_tool>\n</function>\n</tool_call>");
    o = call_json(&s, "POST", "/v1/step", b, 200);
    free(b);
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(o, "done")));
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(o, "reward")));
    msgs = cJSON_GetObjectItem(o, "messages");
    ck_assert_int_eq(cJSON_GetArraySize(msgs), 1); /* the format error's observation */
    ck_assert_str_eq(str_of(cJSON_GetArrayItem(msgs, 0), "role"), "tool");
    ck_assert_ptr_nonnull(strstr(str_of(cJSON_GetArrayItem(msgs, 0), "content"), "no_such_tool"));
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "info"), "turn")->valueint, 2);
    cJSON_Delete(o);

    /* an OpenAI assistant message with tool_calls */
    snprintf(req, sizeof req,
             "{\"episode_id\":\"%s\",\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\","
             "\"type\":\"function\",\"function\":{\"name\":\"list_files\",\"arguments\":\"{}\"}}]}}",
             id);
    o = call_json(&s, "POST", "/v1/step", req, 200);
    msgs = cJSON_GetObjectItem(o, "messages");
    ck_assert_int_eq(cJSON_GetArraySize(msgs), 1);
    ck_assert_str_eq(str_of(cJSON_GetArrayItem(msgs, 0), "name"), "list_files");
    ck_assert_ptr_nonnull(strstr(str_of(cJSON_GetArrayItem(msgs, 0), "content"), "leap"));
    cJSON_Delete(o);

    /* two episodes at most: the third reset waits for room (429) */
    cJSON *o2 = call_json(&s, "POST", "/v1/reset",
                          "{\"task\":\"roman_subtractive\",\"config\":{\"template\":\"qwen3\"}}", 200);
    {
        char q[256];
        snprintf(q, sizeof q, "/v1/state?episode_id=%s", str_of(o2, "episode_id"));
        cJSON *st = call_json(&s, "GET", q, NULL, 200);
        ck_assert_str_eq(str_of(cJSON_GetObjectItem(st, "config"), "template"), "qwen3");
        cJSON_Delete(st);
    }
    want_error(&s, "POST", "/v1/reset", "{\"task\":\"leapyear\"}", 429, NULL);

    snprintf(req, sizeof req, "/v1/state?episode_id=%s", id);
    o = call_json(&s, "GET", req, NULL, 200);
    ck_assert_int_eq(cJSON_GetObjectItem(o, "schema")->valueint, 2);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "turns")), 2);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(o, "reward")));
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(o, "end_reason")));
    ck_assert_str_eq(str_of(cJSON_GetObjectItem(o, "config"), "policy"), "external");
    cJSON_Delete(o);

    snprintf(req, sizeof req, "{\"episode_id\":\"%s\"}", id);
    o = call_json(&s, "POST", "/v1/close", req, 200);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(o, "done")));
    ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(o, "reward"))); /* the tests scored the tree as left */
    ck_assert_str_eq(str_of(cJSON_GetObjectItem(o, "info"), "end_reason"), "closed");
    cJSON_Delete(o);
    want_error(&s, "POST", "/v1/close", req, 404, "episode_id");
    /* the state of a finished episode: its record, read back */
    snprintf(req, sizeof req, "/v1/state?episode_id=%s", id);
    o = call_json(&s, "GET", req, NULL, 200);
    ck_assert_str_eq(str_of(o, "episode_id"), id);
    ck_assert_str_eq(str_of(o, "end_reason"), "closed");
    ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(o, "reward")));
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "turns")), 2);
    cJSON_Delete(o);
    char req2[512];
    snprintf(req2, sizeof req2, "{\"episode_id\":\"%s\"}", str_of(o2, "episode_id"));
    cJSON_Delete(call_json(&s, "POST", "/v1/close", req2, 200));
    cJSON_Delete(o2);
    /* one finished record kept (finished_keep 1): the first is gone */
    o = call_json(&s, "GET", req, NULL, 404);
    const char *msg = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "error"), "message"));
    ck_assert_ptr_nonnull(msg);
    ck_assert_msg(strstr(msg, "the last 1 finished") != NULL, "%s", msg);
    cJSON_Delete(o);
    want_error(&s, "GET", "/v1/state?episode_id=t1-x-99", NULL, 404, "episode_id");

    char *m;
    ck_assert_int_eq(su_call(s.port, "sekret", "GET", "/metrics", NULL, 0, &m), 200);
    ck_assert_ptr_nonnull(strstr(m, "rl_env_open_episodes 0\n"));
    ck_assert_ptr_nonnull(strstr(m, "rl_env_episodes_finished_total 2\n"));
    ck_assert_ptr_nonnull(strstr(m, "rl_env_steps_total 2\n"));
    ck_assert_ptr_nonnull(strstr(m, "rl_env_test_queue_length 0\n"));
    free(m);

    cJSON *recs[8];
    int n = read_records(recs, 8, s.out);
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(str_of(recs[0], "episode_id"), id);
    ck_assert_str_eq(str_of(recs[0], "end_reason"), "closed");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(recs[0], "turns")), 2);
    for (int i = 0; i < n; i++)
        cJSON_Delete(recs[i]);
    srv_stop(&s);
}
END_TEST

START_TEST(test_idle_timeout)
{
    srv s;
    srv_start(&s, 4, 1, NULL, 0);
    cJSON *o = call_json(&s, "POST", "/v1/reset", "{\"task\":\"leapyear\"}", 200);
    char path[128];
    snprintf(path, sizeof path, "/v1/state?episode_id=%s", str_of(o, "episode_id"));
    for (int i = 0; i < 100; i++) { /* closed within a second or two of the timeout */
        char *body;
        long st = su_call(s.port, NULL, "GET", path, NULL, 0, &body);
        int ended = st == 200 && strstr(body, "\"end_reason\":\"idle_timeout\"");
        free(body);
        if (ended)
            break;
        usleep(100000);
    }
    cJSON *fin = call_json(&s, "GET", path, NULL, 200);
    ck_assert_str_eq(str_of(fin, "end_reason"), "idle_timeout");
    cJSON_Delete(fin);
    char body_step[256];
    snprintf(body_step, sizeof body_step, "{\"episode_id\":\"%s\",\"message\":\"x\"}", str_of(o, "episode_id"));
    want_error(&s, "POST", "/v1/step", body_step, 404, "episode_id");
    cJSON *recs[4];
    int n = read_records(recs, 4, s.out);
    ck_assert_int_eq(n, 1);
    ck_assert_str_eq(str_of(recs[0], "episode_id"), str_of(o, "episode_id"));
    ck_assert_str_eq(str_of(recs[0], "end_reason"), "idle_timeout");
    cJSON_Delete(recs[0]);
    cJSON_Delete(o);
    srv_stop(&s);
}
END_TEST

/* ---- 50 episodes, the oracle's moves ------------------------------------------- */

#define LOAD_EPISODES 50
#define LOAD_OPEN 16
static const char *LOAD_TASKS[] = {"leapyear", "roman_subtractive", "strutil_ends_with", "base64_lowercase_z",
                                   "ringbuf_capacity"};
#define LOAD_NTASKS 5

typedef struct load {
    srv *s;
    cJSON *ref[LOAD_NTASKS];     /* harness run --policy oracle's record of each task */
    pthread_mutex_t mu;
    int next, played, wrong;
    double reward[LOAD_EPISODES];
    char msg[RL_ERR_MAX];
} load;

static void *load_worker(void *arg)
{
    load *L = arg;
    for (;;) {
        pthread_mutex_lock(&L->mu);
        int i = L->next++;
        pthread_mutex_unlock(&L->mu);
        if (i >= LOAD_EPISODES)
            return NULL;
        const cJSON *ref = L->ref[i % LOAD_NTASKS];
        char req[256], *body;
        snprintf(req, sizeof req, "{\"task\":\"%s\",\"seed\":%d}", LOAD_TASKS[i % LOAD_NTASKS], i + 1);
        long st = su_call(L->s->port, NULL, "POST", "/v1/reset", req, 0, &body);
        cJSON *o = cJSON_Parse(body);
        free(body);
        char id[ENVSRV_ID_MAX] = "";
        if (st == 200)
            snprintf(id, sizeof id, "%s", cJSON_GetStringValue(cJSON_GetObjectItem(o, "episode_id")));
        cJSON_Delete(o);
        double reward = -1;
        const cJSON *turn;
        cJSON_ArrayForEach(turn, cJSON_GetObjectItem(ref, "turns"))
        {
            if (!id[0])
                break;
            char *b = step_body(id, cJSON_GetStringValue(cJSON_GetObjectItem(turn, "generated")));
            st = su_call(L->s->port, NULL, "POST", "/v1/step", b, 0, &body);
            free(b);
            o = cJSON_Parse(body);
            free(body);
            int done = st == 200 && cJSON_IsTrue(cJSON_GetObjectItem(o, "done"));
            if (done && cJSON_IsNumber(cJSON_GetObjectItem(o, "reward")))
                reward = cJSON_GetObjectItem(o, "reward")->valuedouble;
            cJSON_Delete(o);
            if (done || st != 200)
                break;
        }
        pthread_mutex_lock(&L->mu);
        L->reward[i] = reward;
        L->played++;
        if (reward != cJSON_GetObjectItem(ref, "reward")->valuedouble && !L->wrong++)
            snprintf(L->msg, sizeof L->msg, "episode %d (%s): reward %g, harness run %g", i, LOAD_TASKS[i % LOAD_NTASKS],
                     reward, cJSON_GetObjectItem(ref, "reward")->valuedouble);
        pthread_mutex_unlock(&L->mu);
    }
}

START_TEST(test_load50_oracle_moves)
{
    srv s;
    srv_start(&s, LOAD_OPEN, 0, NULL, 0);
    load L;
    memset(&L, 0, sizeof L);
    L.s = &s;
    pthread_mutex_init(&L.mu, NULL);
    /* the reference: each task's episode as `harness run --policy oracle` plays it */
    for (int k = 0; k < LOAD_NTASKS; k++) {
        char cmd[1024], ref[256];
        snprintf(ref, sizeof ref, "%s/ref-%d.jsonl", s.dir, k);
        snprintf(cmd, sizeof cmd, "RL_WS_ROOT=%s/refws %s/harness run --task %s --policy oracle --out %s >/dev/null 2>&1",
                 s.dir, su_bin_dir(), LOAD_TASKS[k], ref);
        ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
        cJSON *r[1];
        ck_assert_int_eq(read_records(r, 1, ref), 1);
        L.ref[k] = r[0];
    }
    pthread_t th[LOAD_OPEN];
    for (int i = 0; i < LOAD_OPEN; i++)
        pthread_create(&th[i], NULL, load_worker, &L);
    for (int i = 0; i < LOAD_OPEN; i++)
        pthread_join(th[i], NULL);
    ck_assert_int_eq(L.played, LOAD_EPISODES);
    ck_assert_msg(L.wrong == 0, "%d rewards differ from harness run's; first: %s", L.wrong, L.msg);

    envsrv_stats st;
    envsrv_get_stats(s.env, &st);
    ck_assert_int_eq(st.opened, LOAD_EPISODES);
    ck_assert_int_eq(st.finished, LOAD_EPISODES);
    ck_assert_int_eq(st.open, 0);
    fprintf(stderr, "envsrv: %d episodes, %d open at once, %ld steps: step latency p50 %.1f ms p99 %.1f ms, "
                    "without test runs p50 %.2f ms p99 %.2f ms\n",
            LOAD_EPISODES, LOAD_OPEN, st.steps, st.step_ms_p50, st.step_ms_p99, st.step_ms_p50_x, st.step_ms_p99_x);

    /* every episode recorded once, with the reward its client saw */
    cJSON **recs = calloc(LOAD_EPISODES + 8, sizeof *recs);
    int n = read_records(recs, LOAD_EPISODES + 8, s.out);
    ck_assert_int_eq(n, LOAD_EPISODES);
    cJSON *ids = cJSON_CreateObject();
    for (int i = 0; i < n; i++) {
        const char *id = str_of(recs[i], "episode_id");
        ck_assert_msg(!cJSON_GetObjectItem(ids, id), "episode %s recorded twice", id);
        cJSON_AddTrueToObject(ids, id);
        ck_assert_str_eq(str_of(recs[i], "end_reason"), "submit");
        int seed = cJSON_GetObjectItem(cJSON_GetObjectItem(recs[i], "config"), "seed")->valueint;
        ck_assert(seed >= 1 && seed <= LOAD_EPISODES);
        ck_assert(cJSON_GetObjectItem(recs[i], "reward")->valuedouble == L.reward[seed - 1]);
        ck_assert_str_eq(str_of(recs[i], "task"), LOAD_TASKS[(seed - 1) % LOAD_NTASKS]);
        cJSON_Delete(recs[i]);
    }
    cJSON_Delete(ids);
    free(recs);
    for (int k = 0; k < LOAD_NTASKS; k++)
        cJSON_Delete(L.ref[k]);
    pthread_mutex_destroy(&L.mu);
    srv_stop(&s);
}
END_TEST

/* ---- the program: kill -9, restart; the clients ------------------------------------ */

typedef struct proc {
    pid_t pid;
    int port;
    char log[160];
} proc;

/* harness serve as server id, its work trees under dir/ws (k9) or dir/ws-ID */
static void serve_start_as(proc *p, const char *dir, const char *out, int n, const char *id)
{
    char exe[256], ws[256];
    snprintf(p->log, sizeof p->log, "%s/serve-%d.log", dir, n);
    snprintf(exe, sizeof exe, "%s/harness", su_bin_dir());
    snprintf(ws, sizeof ws, "RL_WS_ROOT=%s/ws%s%s", dir, strcmp(id, "k9") ? "-" : "", strcmp(id, "k9") ? id : "");
    const char *argv[] = {exe, "serve", "--port", "0", "--out", out, "--server-id", id, "--max-test-runs", "2", NULL};
    const char *env[] = {ws, NULL};
    p->pid = su_spawn(&p->port, p->log, argv, env);
}

static void serve_start(proc *p, const char *dir, const char *out, int n)
{
    serve_start_as(p, dir, out, n, "k9");
}

static void serve_stop(proc *p, int sig)
{
    su_stop(p->pid, sig, sig == SIGTERM);
}

/* Runs a shell command that must exit 0; its output goes into the failure. */
static void run_ok(const char *cmd)
{
    FILE *f = popen(cmd, "r");
    char text[4096] = "";
    size_t k = fread(text, 1, sizeof text - 1, f);
    text[k] = '\0';
    int st = pclose(f);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: %s", cmd, text);
}

/* The files in the journal folder of records file out. */
static int journal_files(const char *out)
{
    char dir[300], **names = NULL;
    size_t n = 0;
    snprintf(dir, sizeof dir, "%s.open.d", out);
    ck_assert_int_eq(fs_list_dir(&names, &n, dir, NULL), 0);
    fs_names_free(names, n);
    return (int)n;
}

static char *tmpdir_new(void)
{
    char *d = strdup("/tmp/rl-envsrv-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(d));
    chmod(d, 0755);
    return d;
}

START_TEST(test_kill9_restart)
{
    char *dir = tmpdir_new(), out[256], ref[256], cmd[1024];
    snprintf(out, sizeof out, "%s/rec.jsonl", dir);
    snprintf(ref, sizeof ref, "%s/ref.jsonl", dir);
    snprintf(cmd, sizeof cmd, "RL_WS_ROOT=%s/refws %s/harness run --task leapyear --policy oracle --out %s >/dev/null 2>&1",
             dir, su_bin_dir(), ref);
    ck_assert_int_eq(system(cmd), 0);
    cJSON *refr[1];
    ck_assert_int_eq(read_records(refr, 1, ref), 1);
    proc p;
    serve_start(&p, dir, out, 1);
    char ids[3][ENVSRV_ID_MAX], *body;
    for (int i = 0; i < 3; i++) {
        char req[128];
        snprintf(req, sizeof req, "{\"task\":\"leapyear\",\"seed\":%d}", i + 1);
        ck_assert_int_eq(su_call(p.port, NULL, "POST", "/v1/reset", req, 0, &body), 200);
        cJSON *o = cJSON_Parse(body);
        snprintf(ids[i], sizeof ids[i], "%s", cJSON_GetStringValue(cJSON_GetObjectItem(o, "episode_id")));
        cJSON_Delete(o);
        free(body);
    }
    /* episode 0 plays to the end; 1 takes one step; 2 none */
    const cJSON *turn;
    cJSON_ArrayForEach(turn, cJSON_GetObjectItem(refr[0], "turns"))
    {
        char *b = step_body(ids[0], cJSON_GetStringValue(cJSON_GetObjectItem(turn, "generated")));
        ck_assert_int_eq(su_call(p.port, NULL, "POST", "/v1/step", b, 0, &body), 200);
        free(b);
        free(body);
    }
    char *b = step_body(ids[1], "<tool_call>\n<function=list_files>\n</function>\n</tool_call>");
    ck_assert_int_eq(su_call(p.port, NULL, "POST", "/v1/step", b, 0, &body), 200);
    free(b);
    free(body);
    serve_stop(&p, SIGKILL);
    char tree[300];
    snprintf(tree, sizeof tree, "%s/ws/trees", dir);
    ck_assert(fs_is_dir(tree));
    int trees_before = 0;
    snprintf(cmd, sizeof cmd, "ls %s/ws/trees | grep -vc score", dir);
    FILE *f = popen(cmd, "r");
    ck_assert(fscanf(f, "%d", &trees_before) == 1);
    pclose(f);
    ck_assert_int_eq(trees_before, 3);
    /* the journal: a file for each episode still open at the kill */
    ck_assert_int_eq(journal_files(out), 2);

    serve_start(&p, dir, out, 2);
    ck_assert_int_eq(su_call(p.port, NULL, "GET", "/health", NULL, 0, &body), 200);
    ck_assert_ptr_nonnull(strstr(body, "\"open_episodes\":0"));
    free(body);
    serve_stop(&p, SIGTERM);
    cJSON *recs[8];
    int n = read_records(recs, 8, out);
    ck_assert_int_eq(n, 3);
    ck_assert_str_eq(str_of(recs[0], "episode_id"), ids[0]);
    ck_assert_str_eq(str_of(recs[0], "end_reason"), "submit");
    ck_assert(cJSON_GetObjectItem(recs[0], "reward")->valuedouble == cJSON_GetObjectItem(refr[0], "reward")->valuedouble);
    for (int i = 1; i < 3; i++) {
        const char *id = str_of(recs[i], "episode_id");
        ck_assert(!strcmp(id, ids[1]) || !strcmp(id, ids[2]));
        ck_assert_str_eq(str_of(recs[i], "end_reason"), "restart");
        ck_assert(cJSON_IsNull(cJSON_GetObjectItem(recs[i], "reward")));
        /* the turns journaled before the kill: one step of episode 1, none of 2 */
        int one = !strcmp(id, ids[1]);
        const cJSON *turns = cJSON_GetObjectItem(recs[i], "turns"), *msgs = cJSON_GetObjectItem(recs[i], "messages");
        ck_assert_int_eq(cJSON_GetArraySize(turns), one ? 1 : 0);
        ck_assert_int_eq(cJSON_GetArraySize(msgs), one ? 4 : 2); /* system, user[, assistant, tool] */
        if (one)
            ck_assert_ptr_nonnull(strstr(str_of(cJSON_GetArrayItem(turns, 0), "generated"), "list_files"));
        ck_assert_str_eq(str_of(recs[i], "task"), "leapyear");
        ck_assert_str_eq(str_of(cJSON_GetObjectItem(recs[i], "config"), "policy"), "external");
    }
    /* the journal holds no episode once they are recorded */
    ck_assert_int_eq(journal_files(out), 0);
    ck_assert_str_ne(str_of(recs[1], "episode_id"), str_of(recs[2], "episode_id"));
    /* the open episodes' trees are reclaimed, the finished one's kept for reuse */
    snprintf(cmd, sizeof cmd, "ls %s/ws/trees | grep -vc score", dir);
    f = popen(cmd, "r");
    int trees_after = -1;
    ck_assert(fscanf(f, "%d", &trees_after) == 1);
    pclose(f);
    ck_assert_int_eq(trees_after, 1);
    for (int i = 0; i < n; i++)
        cJSON_Delete(recs[i]);
    cJSON_Delete(refr[0]);
    fs_remove_tree(dir, NULL);
    free(dir);
}
END_TEST

START_TEST(test_clients)
{
    char *dir = tmpdir_new(), out[256], ref[256], cmd[1400];
    snprintf(out, sizeof out, "%s/rec.jsonl", dir);
    snprintf(ref, sizeof ref, "%s/ref.jsonl", dir);
    snprintf(cmd, sizeof cmd, "RL_WS_ROOT=%s/refws %s/harness run --task leapyear --policy oracle --out %s >/dev/null 2>&1",
             dir, su_bin_dir(), ref);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "RL_WS_ROOT=%s/refws %s/harness run --task roman_subtractive --policy oracle --out %s >/dev/null 2>&1",
             dir, su_bin_dir(), ref);
    ck_assert_int_eq(system(cmd), 0);
    proc p;
    serve_start(&p, dir, out, 1);
    int have_node = system("command -v node >/dev/null 2>&1") == 0, expected = 0;
    if (!have_node)
        fprintf(stderr, "envsrv: node not found: the Node client is not tested\n");
    const char *clients[] = {"/usr/bin/python3 examples/env_client.py", "node examples/env_client.mjs"};
    for (int c = 0; c < 1 + have_node; c++) {
        snprintf(cmd, sizeof cmd,
                 "timeout 300 %s --url http://127.0.0.1:%d --replay %s --episodes 4 --parallel 2 --as-messages 2>&1",
                 clients[c], p.port, ref);
        run_ok(cmd);
        expected += 4;
    }
    serve_stop(&p, SIGTERM);
    cJSON *recs[16];
    int n = read_records(recs, 16, out);
    ck_assert_int_eq(n, expected);
    for (int i = 0; i < n; i++) {
        ck_assert_str_eq(str_of(recs[i], "end_reason"), "submit");
        cJSON_Delete(recs[i]);
    }
    fs_remove_tree(dir, NULL);
    free(dir);
}
END_TEST

/* Three servers behind scripts/env-router.py: resets go round robin, the
 * other calls by the episode id's server part. */
START_TEST(test_balancer)
{
    char *dir = tmpdir_new(), ref[256], cmd[2048];
    snprintf(ref, sizeof ref, "%s/ref.jsonl", dir);
    static const char *tasks[] = {"leapyear", "roman_subtractive", "strutil_ends_with"};
    for (int k = 0; k < 3; k++) {
        snprintf(cmd, sizeof cmd, "RL_WS_ROOT=%s/refws %s/harness run --task %s --policy oracle --out %s >/dev/null 2>&1",
                 dir, su_bin_dir(), tasks[k], ref);
        ck_assert_int_eq(system(cmd), 0);
    }
    enum { NSRV = 3, NEP = 12 };
    proc p[NSRV];
    char outs[NSRV][256], ids[NSRV][8], backs[NSRV][64];
    for (int k = 0; k < NSRV; k++) {
        snprintf(outs[k], sizeof outs[k], "%s/rec-%d.jsonl", dir, k);
        snprintf(ids[k], sizeof ids[k], "b%d", k + 1);
        serve_start_as(&p[k], dir, outs[k], k + 1, ids[k]);
        snprintf(backs[k], sizeof backs[k], "%s=http://127.0.0.1:%d", ids[k], p[k].port);
    }
    char rlog[256];
    snprintf(rlog, sizeof rlog, "%s/router.log", dir);
    const char *rargv[] = {"/usr/bin/python3", "scripts/env-router.py", "--port", "0", backs[0], backs[1], backs[2], NULL};
    int rport;
    pid_t router = su_spawn(&rport, rlog, rargv, NULL);
    char *body;
    ck_assert_int_eq(su_call(rport, NULL, "GET", "/health", NULL, 0, &body), 200);
    ck_assert_msg(strstr(body, "\"b3\"") && strstr(body, "\"status\": \"ok\""), "%s", body);
    free(body);
    ck_assert_int_eq(su_call(rport, NULL, "POST", "/v1/step", "{\"episode_id\":\"zz-1-1\",\"message\":\"x\"}", 0, &body),
                     404);
    ck_assert_ptr_nonnull(strstr(body, "names no server"));
    free(body);
    /* 12 episodes, 4 open at once, each checked against harness run's reward
     * and its final state fetched through the router */
    snprintf(cmd, sizeof cmd,
             "timeout 600 /usr/bin/python3 examples/env_client.py --url http://127.0.0.1:%d --replay %s --episodes %d "
             "--parallel 4 --summary %s/summary.json 2>&1",
             rport, ref, NEP, dir);
    run_ok(cmd);
    su_stop(router, SIGTERM, 0);
    for (int k = 0; k < NSRV; k++)
        serve_stop(&p[k], SIGTERM);
    /* every episode recorded once, by the server its id names */
    char sumpath[300], *sum = NULL;
    snprintf(sumpath, sizeof sumpath, "%s/summary.json", dir);
    ck_assert_int_eq(fs_read_file(&sum, NULL, sumpath, 1 << 24, NULL), 0);
    cJSON *summary = cJSON_Parse(sum);
    free(sum);
    const cJSON *results = cJSON_GetObjectItem(summary, "results");
    ck_assert_int_eq(cJSON_GetArraySize(results), NEP);
    int total = 0;
    for (int k = 0; k < NSRV; k++) {
        cJSON *recs[NEP + 1];
        int n = read_records(recs, NEP + 1, outs[k]);
        ck_assert_msg(n == NEP / NSRV, "server %s recorded %d episodes, expected %d", ids[k], n, NEP / NSRV);
        for (int i = 0; i < n; i++) {
            const char *id = str_of(recs[i], "episode_id");
            ck_assert_msg(!strncmp(id, ids[k], 2) && id[2] == '-', "%s recorded by %s", id, ids[k]);
            const cJSON *r = cJSON_GetObjectItem(results, id);
            ck_assert_msg(r != NULL, "%s: not an episode the client played", id);
            ck_assert_str_eq(str_of(recs[i], "end_reason"), "submit");
            ck_assert(cJSON_GetObjectItem(recs[i], "reward")->valuedouble == cJSON_GetObjectItem(r, "expected")->valuedouble);
            cJSON_Delete(recs[i]);
        }
        total += n;
    }
    ck_assert_int_eq(total, NEP);
    cJSON_Delete(summary);
    fs_remove_tree(dir, NULL);
    free(dir);
}
END_TEST

Suite *envsrv_suite(void)
{
    Suite *s = suite_create("envsrv");
    TCase *api = tcase_create("api");
    tcase_set_timeout(api, 120);
    tcase_add_test(api, test_api_and_errors);
    tcase_add_test(api, test_idle_timeout);
    suite_add_tcase(s, api);
    TCase *prog = tcase_create("program");
    tcase_set_timeout(prog, 600);
    tcase_add_test(prog, test_kill9_restart);
    tcase_add_test(prog, test_clients);
    tcase_add_test(prog, test_balancer);
    suite_add_tcase(s, prog);
    TCase *load = tcase_create("load");
    tcase_set_timeout(load, 900);
    tcase_add_test(load, test_load50_oracle_moves);
    suite_add_tcase(s, load);
    return s;
}
