/* srvutil.c - see srvutil.h. */
#include "tests/srvutil.h"

#include "common/err.h"
#include "common/fsutil.h"
#include "http/http.h"
#include "tests/srvproc.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char *su_bin_dir(void)
{
    const char *b = getenv("RL_BIN");
    return b && *b ? b : "bin";
}

pid_t su_spawn(int *port, const char *log, const char *const *argv, const char *const *env)
{
    pid_t pid = sp_start(port, log, argv, env, 20000);
    ck_assert_msg(pid > 0, "%s did not start (see %s)", argv[0], log);
    return pid;
}

void su_stop(pid_t pid, int sig, int want_exit0)
{
    kill(pid, sig);
    int st = 0;
    waitpid(pid, &st, 0);
    if (want_exit0)
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "pid %d: status %d after signal %d", (int)pid, st, sig);
}

long su_call(int port, const char *token, const char *method, const char *path, const char *json, size_t len,
             char **body)
{
    char err[RL_ERR_MAX], url[512], auth[600];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token ? token : "");
    const char *hdr[] = {auth, NULL};
    http_client_opts o;
    http_client_opts_default(&o);
    o.retries = 0;
    o.timeout_ms = 300000;
    http_client *c;
    ck_assert_int_eq(http_client_new(&c, &o, err), 0);
    http_request rq = {.method = method, .url = url, .headers = token ? hdr : NULL,
                       .content_type = json ? "application/json" : NULL, .body = json,
                       .body_len = json ? (len ? len : strlen(json)) : 0};
    http_response rs;
    int rc = http_client_request(c, &rs, &rq, err);
    ck_assert_msg(rc == 0, "%s %s: %s", method, path, err);
    long st = rs.status;
    *body = strdup(rs.body);
    http_response_dispose(&rs);
    http_client_free(c);
    return st;
}
