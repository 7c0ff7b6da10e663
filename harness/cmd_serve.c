/* cmd_serve.c - `harness serve`: the environment as an HTTP service
 * (harness/envsrv.h, docs/env-server.md). */
#include "harness/cli.h"

#include "common/arg.h"
#include "common/err.h"
#include "common/limits.h"
#include "harness/envsrv.h"
#include "http/http.h"
#include "protocol/tokenizer.h"
#include "corpus/task.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: harness serve [--host 127.0.0.1] [--port N] [--max-episodes K] [--token-env VAR]\n"
            "                     [--out FILE.jsonl] [--server-id ID] [--idle-timeout S]\n"
            "                     [--max-test-runs N] [--tokenizer FILE|none] [--tasks-dir DIR]\n"
            "                     [--repos-dir DIR]\n"
            "Serves episodes over HTTP for an external trainer (docs/env-server.md):\n"
            "POST /v1/reset, /v1/step, /v1/close; GET /v1/state, /v1/tasks, /health, /metrics.\n"
            "  --host H            address to listen on (default 127.0.0.1, loopback only)\n"
            "  --port N            port (default 8100; 0: any free port, printed at start)\n"
            "  --max-episodes K    episodes open at once, 1-%d (default %d); more resets get 429\n"
            "  --token-env VAR     every /v1 request must carry \"Authorization: Bearer $VAR\"\n"
            "  --out FILE          records of finished episodes, appended (default\n"
            "                      runs/serve/trajectories.jsonl); FILE.open.d/ holds a journal\n"
            "                      file per open episode, read again at start\n"
            "  --server-id ID      prefix of the episode ids, [A-Za-z0-9_] (default env): a load\n"
            "                      balancer routes an id to the server named by its prefix\n"
            "  --idle-timeout S    close and record episodes idle S seconds (default %d; 0: never)\n"
            "  --max-test-runs N   test runs in the sandbox at once (default: online CPUs); more wait\n"
            "  --tokenizer FILE    token counts and context ids (default models/tokenizer.json when\n"
            "                      present; none: no tokenizer)\n"
            "  --tasks-dir D       folder of task files (default: tasks)\n"
            "  --repos-dir D       folder of repositories (default: repos)\n"
            "SIGINT or SIGTERM stops the server; episodes still open are recorded with\n"
            "end_reason \"shutdown\" (after a kill, the next start records them as \"restart\").\n"
            "Exit: 0 stopped by a signal, 1 could not start, 2 usage error.\n",
            ENVSRV_EPISODES_HARD, ENVSRV_EPISODES_DEFAULT, ENVSRV_IDLE_S_DEFAULT);
}

int cmd_env_serve(int argc, char **argv)
{
    envsrv_opts so;
    envsrv_opts_default(&so);
    const char *host = "127.0.0.1", *token_env = NULL, *tok_path = NULL, *tasks_dir = "tasks",
               *repos_dir = "repos";
    so.out = "runs/serve/trajectories.jsonl";
    long port = 8100, v;
    char err[RL_ERR_MAX];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        }
        if (!val || strncmp(a, "--", 2)) {
            fprintf(stderr, "harness serve: %s: %s (see --help)\n", a,
                    strncmp(a, "--", 2) ? "unexpected argument" : "expected a value");
            return 2;
        }
        i++;
        int rc = 0;
        if (!strcmp(a, "--host"))
            host = val;
        else if (!strcmp(a, "--port"))
            rc = arg_long(&port, a, val, 0, 65535, err);
        else if (!strcmp(a, "--max-episodes") && (rc = arg_long(&v, a, val, 1, ENVSRV_EPISODES_HARD, err)) == 0)
            so.max_episodes = (int)v;
        else if (!strcmp(a, "--idle-timeout") && (rc = arg_long(&v, a, val, 0, ENVSRV_IDLE_S_HARD, err)) == 0)
            so.idle_timeout_s = (int)v;
        else if (!strcmp(a, "--max-test-runs") && (rc = arg_long(&v, a, val, 1, ENVSRV_TEST_RUNS_HARD, err)) == 0)
            so.max_test_runs = (int)v;
        else if (!strcmp(a, "--token-env"))
            token_env = val;
        else if (!strcmp(a, "--out"))
            so.out = val;
        else if (!strcmp(a, "--server-id"))
            so.server_id = val;
        else if (!strcmp(a, "--tokenizer"))
            tok_path = val;
        else if (!strcmp(a, "--tasks-dir"))
            tasks_dir = val;
        else if (!strcmp(a, "--repos-dir"))
            repos_dir = val;
        else if (strcmp(a, "--max-episodes") && strcmp(a, "--idle-timeout") && strcmp(a, "--max-test-runs")) {
            fprintf(stderr, "harness serve: unknown argument '%s' (see --help)\n", a);
            return 2;
        }
        if (rc < 0) {
            fprintf(stderr, "harness serve: %s\n", err);
            return 2;
        }
    }
    if (token_env) {
        so.token = getenv(token_env);
        if (!so.token || !*so.token) {
            fprintf(stderr, "harness serve: --token-env %s: the variable is unset or empty\n", token_env);
            return 2;
        }
    }
    /* open files: each episode holds a few (ENVSRV_FDS_PER_EPISODE); a
     * soft limit of 1024 would fail resets past ~500 open episodes */
    struct rlimit rl;
    rlim_t need = (rlim_t)so.max_episodes * ENVSRV_FDS_PER_EPISODE + 256;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < need) {
        if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
            fprintf(stderr,
                    "harness serve: --max-episodes %d needs %lu open files; the hard limit is %lu (raise `ulimit -Hn` "
                    "or lower --max-episodes)\n",
                    so.max_episodes, (unsigned long)need, (unsigned long)rl.rlim_max);
            return 1;
        }
        rl.rlim_cur = need;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
            fprintf(stderr, "harness serve: cannot raise the open-file limit to %lu: %s\n", (unsigned long)need,
                    strerror(errno));
            return 1;
        }
    }
    /* the signals go to sigwait below, not to the server's threads */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);

    task_set tasks;
    if (task_set_load(&tasks, tasks_dir, repos_dir, err) < 0) {
        fprintf(stderr, "harness serve: %s\n", err);
        return 1;
    }
    tok_t *tok = NULL;
    int rc = 1;
    envsrv *s = NULL;
    http_server *hs = NULL;
    if (!(tok_path && !strcmp(tok_path, "none")) && cli_load_tokenizer(&tok, tok_path, tok_path != NULL, err) < 0) {
        fprintf(stderr, "harness serve: --tokenizer: %s\n", err);
        goto out;
    }
    ep_config base;
    ep_config_default(&base);
    base.tok = tok;
    so.tasks = &tasks;
    so.base = &base;
    so.log = cli_log;
    so.log_ctx = stderr;
    if (envsrv_new(&s, &so, err) < 0) {
        fprintf(stderr, "harness serve: %s\n", err);
        goto out;
    }
    http_server_opts ho;
    http_server_opts_default(&ho);
    ho.host = host;
    ho.port = (int)port;
    ho.body_max = ENVSRV_BODY_MAX;
    unsigned conns = 2u * (unsigned)so.max_episodes + 16;
    ho.max_conns = conns > HTTP_SERVER_CONNS_DEFAULT ? (conns < HTTP_SERVER_CONNS_HARD ? conns : HTTP_SERVER_CONNS_HARD)
                                                     : HTTP_SERVER_CONNS_DEFAULT;
    ho.handler = envsrv_handle;
    ho.ctx = s;
    ho.log = cli_log;
    ho.log_ctx = stderr;
    if (http_server_new(&hs, &ho, err) < 0) {
        fprintf(stderr, "harness serve: %s\n", err);
        goto out;
    }
    fprintf(stderr, "harness serve: listening on http://%s%s%s:%d (%zu tasks, %d episodes at most, records %s)\n",
            strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "", http_server_port(hs), tasks.n,
            so.max_episodes, so.out);
    fflush(stderr);
    int sig = 0;
    sigwait(&sigs, &sig);
    fprintf(stderr, "harness serve: %s, stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    rc = 0;
out:
    http_server_free(hs);
    envsrv_stats st;
    if (s) {
        envsrv_get_stats(s, &st);
        fprintf(stderr, "harness serve: %ld episodes opened, %ld recorded, %ld steps\n", st.opened, st.finished,
                st.steps);
    }
    envsrv_free(s);
    tok_free(tok);
    task_set_dispose(&tasks);
    return rc;
}
