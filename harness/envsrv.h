/* envsrv.h - the environment as an HTTP service (`harness serve`,
 * docs/env-server.md).
 *
 * An external trainer owns the policy and drives episodes over a JSON API
 * with a reset / step / state shape:
 *
 *   POST /v1/reset {task, seed?, config?}   -> {episode_id, messages, tools, info}
 *   POST /v1/step  {episode_id, message}    -> {messages, done, reward, info}
 *   POST /v1/close {episode_id}             -> {episode_id, done, reward, info}
 *   GET  /v1/state?episode_id=ID            -> the trajectory record so far
 *   GET  /v1/tasks?select=SELECTOR          -> [{instance_id, repo, kind, split}]
 *   GET  /health, GET /metrics (Prometheus text)
 *
 * Each episode is the state machine of harness/episode.h in a work tree
 * slot of its own, exactly as `harness run` plays it: reset opens the
 * slot's tree and renders the opening messages; a step takes the
 * assistant's message (text in the chat template, or an OpenAI assistant
 * message with tool_calls), runs its tool calls and answers the tool
 * messages. The server's lock guards only the episode table: steps of
 * different episodes run at once on the connection threads, and test
 * runs (run_tests calls and the scoring run) go through a queue of at
 * most max_test_runs at a time (a step waits there, it does not fail).
 *
 * Records: every finished episode (done, closed, idle past the timeout)
 * is appended whole to opts.out with fsync, with its "episode_id" first;
 * GET /v1/state answers the last finished_keep of them from that file.
 * A journal folder beside it (OUT.open.d) holds one file per open
 * episode: its work tree and its record so far, replaced (fsync, rename)
 * at the reset and after every step, removed once the record is written.
 * envsrv_new reads it: each episode of the last run that was open and has
 * no record is recorded with the turns journaled (end_reason "restart",
 * reward null) and its work tree removed. A server killed at any point
 * thus loses no finished record and writes none twice.
 *
 * Errors are JSON in the OpenAI shape, naming the field at fault:
 *   {"error": {"message": "...", "type": "invalid_request_error", "param": "FIELD", "code": null}}
 */
#ifndef RL_ENVSRV_H
#define RL_ENVSRV_H

#include "common/log.h"
#include "corpus/task.h"
#include "harness/episode.h"
#include "http/http.h"

typedef struct envsrv_opts {
    const task_set *tasks;    /* the tasks clients may ask for (borrowed) */
    const ep_config *base;    /* every episode's config before the client's
                                 config (borrowed); prompts_dir etc. */
    const char *out;          /* records JSONL (required); journal OUT.open.d/ */
    const char *ws_root;      /* workspace root; NULL: the workspace default */
    int slot_base;            /* work-tree slots slot_base .. +max_episodes */
    const char *server_id;    /* episode id prefix, [A-Za-z0-9_]+ (required) */
    const char *token;        /* bearer token every /v1 request must carry;
                                 NULL: none */
    int max_episodes;         /* open at once; more resets get 429 */
    int max_test_runs;        /* test runs at once; 0: online CPUs */
    int idle_timeout_s;       /* close episodes idle this long; 0: never */
    int finished_keep;        /* finished episodes GET /v1/state still answers
                                 (their records, read back from out) */
    rl_log_fn log;            /* episodes opened, ended, recorded; NULL: none */
    void *log_ctx;
} envsrv_opts;

/* max_episodes ENVSRV_EPISODES_DEFAULT, idle ENVSRV_IDLE_S_DEFAULT,
 * finished_keep ENVSRV_FINISHED_KEEP, server_id "env", the rest empty. */
void envsrv_opts_default(envsrv_opts *o);

typedef struct envsrv envsrv;

/* Reads the journal (recording the episodes a previous run left open),
 * then starts the idle reaper. */
int envsrv_new(envsrv **out, const envsrv_opts *o, char *err);

/* The http_handler_fn of the API; ctx is the envsrv. */
int envsrv_handle(void *ctx, const http_server_req *req, http_server_resp *resp, char *err);

/* Counters since the start. */
typedef struct envsrv_stats {
    long opened, steps, finished, restarted;
    int open;                 /* episodes open now */
    int tests_running, tests_waiting;
    double step_ms_p50, step_ms_p99;       /* whole steps */
    double step_ms_p50_x, step_ms_p99_x;   /* less the test runs and their queue */
} envsrv_stats;
void envsrv_get_stats(envsrv *s, envsrv_stats *st);

/* Refuses new requests, records every open episode as ended by the
 * shutdown (unscored, end_reason "shutdown") and frees. Stop the HTTP
 * server first. */
void envsrv_free(envsrv *s);

#endif
