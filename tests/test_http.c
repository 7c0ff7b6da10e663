/* test_http.c - the HTTP layer on loopback: our client against our server,
 * against Python's http.server, our server against curl and urllib, and
 * the error paths (server down, no answer, bodies over the caps, 429 then
 * 200, malformed bytes on a raw socket, connection cap, idle timeout). */
#include "common/err.h"
#include "http/http.h"

#include <arpa/inet.h>
#include <check.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PY "/usr/bin/python3"
#define PEER "tests/data/http/peer.py"
#define SECRET "sk-test-7f3a9c"

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- our server's handler ---------------------------------------------- */

typedef struct srv_ctx {
    atomic_int calls;
    atomic_int flaky_left;    /* /flaky answers flaky_status this many times */
    int flaky_status;
    const char *retry_after;  /* Retry-After of /flaky's failures, or NULL */
    size_t big_len;           /* /big answers this many bytes */
    atomic_int last_body_len;
    atomic_int open, max_open;  /* /slow requests being answered */
} srv_ctx;

static int handler(void *vctx, const http_server_req *rq, http_server_resp *rs, char *err)
{
    srv_ctx *c = vctx;
    atomic_fetch_add(&c->calls, 1);
    atomic_store(&c->last_body_len, (int)rq->body_len);
    if (strcmp(rq->path, "/echo") == 0 || strcmp(rq->path, "/a b") == 0) {
        const char *ct = http_server_req_header(rq, "content-type");
        const char *auth = http_server_req_header(rq, "Authorization");
        const char *q = http_server_req_query(rq, "q");
        char id[32];
        snprintf(id, sizeof id, "req-%d", atomic_load(&c->calls));
        ck_assert_int_eq(http_reply(rs, 200, ct ? ct : "text/plain", rq->body, rq->body_len), 0);
        ck_assert_int_eq(http_reply_header(rs, "X-Request-Id", id), 0);
        ck_assert_int_eq(http_reply_header(rs, "X-Method", rq->method), 0);
        ck_assert_int_eq(http_reply_header(rs, "X-Path", rq->path), 0);
        ck_assert_int_eq(http_reply_header(rs, "X-Auth",
                                           auth && strcmp(auth, "Bearer " SECRET) == 0 ? "ok" : "no"),
                         0);
        if (q)
            ck_assert_int_eq(http_reply_header(rs, "X-Query", q), 0);
        return 0;
    }
    if (strcmp(rq->path, "/flaky") == 0) {
        if (atomic_fetch_sub(&c->flaky_left, 1) > 0) {
            if (c->retry_after)
                http_reply_header(rs, "Retry-After", c->retry_after);
            return http_reply(rs, c->flaky_status, "text/plain", "busy", 4);
        }
        return http_reply(rs, 200, "text/plain", "ok", 2);
    }
    if (strcmp(rq->path, "/big") == 0) {
        char *b = malloc(c->big_len);
        memset(b, 'b', c->big_len);
        int rc = http_reply(rs, 200, "application/octet-stream", b, c->big_len);
        free(b);
        return rc;
    }
    if (strcmp(rq->path, "/slow") == 0) {
        int o = atomic_fetch_add(&c->open, 1) + 1, m = atomic_load(&c->max_open);
        while (o > m && !atomic_compare_exchange_weak(&c->max_open, &m, o)) {
        }
        usleep(150 * 1000);
        atomic_fetch_sub(&c->open, 1);
        return http_reply(rs, 200, "text/plain", rq->body, rq->body_len);
    }
    if (strcmp(rq->path, "/fail") == 0)
        return rl_err(err, RL_EIO, "the test handler fails on purpose");
    if (strcmp(rq->path, "/noreply") == 0)
        return 0;
    return http_reply(rs, 404, "text/plain", "no such path", 12);
}

static http_server *start_server(srv_ctx *c, size_t body_max, unsigned max_conns, unsigned idle_s)
{
    http_server_opts o;
    http_server_opts_default(&o);
    o.handler = handler;
    o.ctx = c;
    if (body_max)
        o.body_max = body_max;
    if (max_conns)
        o.max_conns = max_conns;
    if (idle_s)
        o.idle_timeout_s = idle_s;
    http_server *s;
    char err[RL_ERR_MAX] = "";
    ck_assert_msg(http_server_new(&s, &o, err) == 0, "%s", err);
    ck_assert_int_gt(http_server_port(s), 0);
    return s;
}

typedef struct log_lines {
    int n;
    char last[RL_ERR_MAX];
    int leaked;   /* a line held SECRET */
} log_lines;

static void on_log(void *ctx, int level, const char *line)
{
    (void)level;
    log_lines *l = ctx;
    l->n++;
    snprintf(l->last, sizeof l->last, "%s", line);
    if (strstr(line, "sk-"))
        l->leaked = 1;
}

static http_client *new_client(int retries, long backoff_ms, long timeout_ms, size_t body_max,
                               log_lines *log)
{
    http_client_opts o;
    http_client_opts_default(&o);
    o.retries = retries;
    o.backoff_ms = backoff_ms;
    if (timeout_ms) {
        o.timeout_ms = timeout_ms;
        if (o.connect_timeout_ms > timeout_ms)
            o.connect_timeout_ms = timeout_ms;
    }
    if (body_max)
        o.body_max = body_max;
    if (log) {
        o.log = on_log;
        o.log_ctx = log;
    }
    http_client *c;
    char err[RL_ERR_MAX] = "";
    ck_assert_msg(http_client_new(&c, &o, err) == 0, "%s", err);
    return c;
}

/* GET or POST with the usual test headers; fills rs, returns the code. */
static int do_req(http_client *c, http_response *rs, const char *method, const char *url,
                  const char *body, size_t len, char *err)
{
    static const char *hdr[] = {"Authorization: Bearer " SECRET, "X-Test: 1", NULL};
    http_request rq = {.method = method, .url = url, .headers = hdr,
                       .content_type = body ? "application/json" : NULL,
                       .body = body, .body_len = len};
    err[0] = '\0';
    return http_client_request(c, rs, &rq, err);
}

/* A port nothing listens on (bound once, then closed). */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t l = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &l);
    close(fd);
    return ntohs(a.sin_port);
}

static int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

/* Sends raw bytes, then reads until the server closes or 5 s pass. */
static void raw_exchange(int port, const void *data, size_t len, char *out, size_t cap, int shut)
{
    int fd = connect_to(port);
    ssize_t w = send(fd, data, len, MSG_NOSIGNAL);
    (void)w;
    if (shut)
        shutdown(fd, SHUT_WR);
    size_t got = 0;
    ssize_t n;
    while (got + 1 < cap && (n = recv(fd, out + got, cap - 1 - got, 0)) > 0)
        got += (size_t)n;
    out[got] = '\0';
    close(fd);
}

static int count_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while ((e = readdir(d)))
        n++;
    closedir(d);
    return n;
}

/* ---- foreign peers ----------------------------------------------------- */

typedef struct peer {
    pid_t pid;
    int port;
} peer;

/* Starts argv with stdout on a pipe; when read_port, the first line it
 * prints is its port. */
static peer spawn(char *const argv[], int read_port)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int nul = open("/dev/null", O_WRONLY);
        dup2(nul, 2);
        if (!read_port)
            dup2(nul, p[1]);
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(p[1]);
    peer pr = {pid, 0};
    if (read_port) {
        char line[32] = "";
        size_t got = 0;
        while (got + 1 < sizeof line && read(p[0], line + got, 1) == 1 && line[got] != '\n')
            got++;
        line[got] = '\0';
        pr.port = atoi(line);
        ck_assert_msg(pr.port > 0, "%s printed no port", argv[1]);
    }
    close(p[0]);
    return pr;
}

static void stop(peer *p)
{
    kill(p->pid, SIGTERM);
    waitpid(p->pid, NULL, 0);
}

static peer start_peer(void)
{
    char *argv[] = {PY, PEER, NULL};
    return spawn(argv, 1);
}

/* Runs a shell command and returns its stdout (caller frees). */
static char *run(const char *cmd)
{
    FILE *f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    size_t n;
    while ((n = fread(out + len, 1, cap - 1 - len, f)) > 0)
        len += n;
    out[len] = '\0';
    pclose(f);
    return out;
}

/* ---- tests --------------------------------------------------------------- */

START_TEST(test_client_server_roundtrip)
{
    srv_ctx ctx = {0};
    int fds0 = count_fds();
    http_server *s = start_server(&ctx, 0, 0, 0);
    http_client *c = new_client(0, 0, 5000, 0, NULL);
    char url[256], err[RL_ERR_MAX], v[128];
    http_response rs;
    const char *json = "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}";

    snprintf(url, sizeof url, "http://127.0.0.1:%d/echo", http_server_port(s));
    ck_assert_msg(do_req(c, &rs, "POST", url, json, strlen(json), err) == 0, "%s", err);
    ck_assert_int_eq(rs.status, 200);
    ck_assert_int_eq(rs.attempts, 1);
    ck_assert_str_eq(rs.body, json);
    ck_assert_uint_eq(rs.body_len, strlen(json));
    ck_assert_int_eq(http_response_header(&rs, "content-type", v, sizeof v), 16);
    ck_assert_str_eq(v, "application/json");
    ck_assert_int_gt(http_response_header(&rs, "X-Request-Id", v, sizeof v), 0);
    ck_assert_str_eq(v, "req-1");
    http_response_header(&rs, "x-auth", v, sizeof v);
    ck_assert_str_eq(v, "ok");
    http_response_header(&rs, "X-Method", v, sizeof v);
    ck_assert_str_eq(v, "POST");
    ck_assert_int_eq(http_response_header(&rs, "X-Absent", v, sizeof v), -1);
    http_response_dispose(&rs);

    /* Percent-decoded path and query; a GET has no body. */
    snprintf(url, sizeof url, "http://127.0.0.1:%d/a%%20b?q=x%%26y&other=1", http_server_port(s));
    ck_assert_msg(do_req(c, &rs, "GET", url, NULL, 0, err) == 0, "%s", err);
    ck_assert_int_eq(rs.status, 200);
    ck_assert_str_eq(rs.body, "");
    http_response_header(&rs, "X-Path", v, sizeof v);
    ck_assert_str_eq(v, "/a b");
    http_response_header(&rs, "X-Query", v, sizeof v);
    ck_assert_str_eq(v, "x&y");
    http_response_dispose(&rs);

    /* Other methods, an empty POST, a status the handler chose. */
    snprintf(url, sizeof url, "http://127.0.0.1:%d/echo", http_server_port(s));
    ck_assert_msg(do_req(c, &rs, "DELETE", url, NULL, 0, err) == 0, "%s", err);
    http_response_header(&rs, "X-Method", v, sizeof v);
    ck_assert_str_eq(v, "DELETE");
    http_response_dispose(&rs);
    ck_assert_msg(do_req(c, &rs, "PUT", url, "abc", 3, err) == 0, "%s", err);
    http_response_header(&rs, "X-Method", v, sizeof v);
    ck_assert_str_eq(v, "PUT");
    ck_assert_str_eq(rs.body, "abc");
    http_response_dispose(&rs);
    ck_assert_msg(do_req(c, &rs, "POST", url, NULL, 0, err) == 0, "%s", err);
    ck_assert_int_eq(rs.status, 200);
    ck_assert_int_eq(atomic_load(&ctx.last_body_len), 0);
    http_response_dispose(&rs);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/nowhere", http_server_port(s));
    ck_assert_msg(do_req(c, &rs, "GET", url, NULL, 0, err) == 0, "%s", err);
    ck_assert_int_eq(rs.status, 404);
    ck_assert_int_eq(rs.attempts, 1); /* 4xx other than 429 is not retried */
    ck_assert_str_eq(rs.body, "no such path");
    http_response_dispose(&rs);

    /* A binary body of 1 MB both ways, bytes intact. */
    size_t big = 1 << 20;
    char *b = malloc(big);
    for (size_t i = 0; i < big; i++)
        b[i] = (char)(i * 7 + (i >> 8));
    snprintf(url, sizeof url, "http://127.0.0.1:%d/echo", http_server_port(s));
    ck_assert_msg(do_req(c, &rs, "POST", url, b, big, err) == 0, "%s", err);
    ck_assert_uint_eq(rs.body_len, big);
    ck_assert_int_eq(memcmp(rs.body, b, big), 0);
    http_response_dispose(&rs);
    free(b);
    ck_assert_int_eq(atomic_load(&ctx.calls), 7);

    /* The server stops with the client's connection still open, and
     * leaves no descriptor behind. */
    long t0 = now_ms();
    http_server_free(s);
    ck_assert_int_lt(now_ms() - t0, 2000);
    http_client_free(c);
    ck_assert_int_eq(count_fds(), fds0);
}
END_TEST

START_TEST(test_handler_failure)
{
    srv_ctx ctx = {0};
    log_lines log = {0};
    http_server_opts o;
    http_server_opts_default(&o);
    o.handler = handler;
    o.ctx = &ctx;
    o.log = on_log;
    o.log_ctx = &log;
    http_server *s;
    char err[RL_ERR_MAX], url[256];
    ck_assert_msg(http_server_new(&s, &o, err) == 0, "%s", err);
    http_client *c = new_client(0, 0, 5000, 0, NULL);
    http_response rs;
    snprintf(url, sizeof url, "http://127.0.0.1:%d/fail", http_server_port(s));
    ck_assert_int_eq(do_req(c, &rs, "GET", url, NULL, 0, err), 0);
    ck_assert_int_eq(rs.status, 500);
    ck_assert_ptr_nonnull(strstr(rs.body, "\"type\": \"internal_error\""));
    http_response_dispose(&rs);
    ck_assert_int_eq(log.n, 1);
    ck_assert_ptr_nonnull(strstr(log.last, "GET /fail: handler failed: the test handler fails"));
    snprintf(url, sizeof url, "http://127.0.0.1:%d/noreply", http_server_port(s));
    ck_assert_int_eq(do_req(c, &rs, "GET", url, NULL, 0, err), 0);
    ck_assert_int_eq(rs.status, 500);
    http_response_dispose(&rs);
    ck_assert_ptr_nonnull(strstr(log.last, "/noreply: handler set no reply"));
    http_client_free(c);
    http_server_free(s);
}
END_TEST

START_TEST(test_reply_checks)
{
    http_server_resp r;
    memset(&r, 0, sizeof r);
    ck_assert_int_eq(http_reply(&r, 99, "text/plain", "", 0), RL_EINVAL);
    ck_assert_int_eq(http_reply(&r, 600, "text/plain", "", 0), RL_EINVAL);
    ck_assert_int_eq(http_reply(&r, 200, "text/plain\r\nX-Evil: 1", "", 0), RL_EINVAL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_int_eq(http_reply_header(&r, "X-Ok", "v\r\nSet-Cookie: a"), RL_EINVAL);
    ck_assert_int_eq(http_reply_header(&r, "Bad Name", "v"), RL_EINVAL);
    ck_assert_int_eq(http_reply_header(&r, "Bad:Name", "v"), RL_EINVAL);
    for (int i = 0; i < HTTP_SERVER_RESP_HEADERS_MAX; i++)
        ck_assert_int_eq(http_reply_header(&r, "X-N", "1"), 0);
    ck_assert_int_eq(http_reply_header(&r, "X-N", "1"), RL_ELIMIT);
    ck_assert_int_eq(http_reply(&r, 201, "a/b", "xy", 2), 0);
    ck_assert_int_eq(http_reply(&r, 202, "a/c", "xyz", 3), 0);
    ck_assert_int_eq(r.status, 202);
    ck_assert_uint_eq(r.body_len, 3);
    free(r.body);
    for (int i = 0; i < r.n_headers; i++)
        free(r.headers[i]);
}
END_TEST

START_TEST(test_options_and_bad_requests)
{
    char err[RL_ERR_MAX];
    http_client_opts co;
    http_client *c;
    http_client_opts_default(&co);
    co.retries = HTTP_RETRIES_HARD + 1;
    ck_assert_int_eq(http_client_new(&c, &co, err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "retries"));
    http_client_opts_default(&co);
    co.body_max = 0;
    ck_assert_int_eq(http_client_new(&c, &co, err), RL_EINVAL);
    http_client_opts_default(&co);
    co.connect_timeout_ms = co.timeout_ms + 1;
    ck_assert_int_eq(http_client_new(&c, &co, err), RL_EINVAL);

    c = new_client(0, 0, 1000, 0, NULL);
    http_response rs;
    ck_assert_int_eq(do_req(c, &rs, "GET", "ftp://127.0.0.1/x", NULL, 0, err), RL_EINVAL);
    http_response_dispose(&rs);
    ck_assert_int_eq(do_req(c, &rs, "GET", "http://127.0.0.1/a b", NULL, 0, err), RL_EINVAL);
    http_response_dispose(&rs);
    ck_assert_int_eq(do_req(c, &rs, "GE T", "http://127.0.0.1/", NULL, 0, err), RL_EINVAL);
    http_response_dispose(&rs);
    const char *bad[] = {"Authorization: Bearer " SECRET "\r\nX-Injected: 1", NULL};
    http_request rq = {.method = "GET", .url = "http://127.0.0.1:1/", .headers = bad};
    ck_assert_int_eq(http_client_request(c, &rs, &rq, err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "header 1"));
    ck_assert_ptr_null(strstr(err, SECRET));
    http_response_dispose(&rs);
    http_client_free(c);

    /* The server: no handler, a host that is not one, a port in use. */
    http_server_opts so;
    http_server *s;
    http_server_opts_default(&so);
    ck_assert_int_eq(http_server_new(&s, &so, err), RL_EINVAL);
    so.handler = handler;
    so.host = "not a host name!";
    ck_assert_int_eq(http_server_new(&s, &so, err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "not a host name!"));
    srv_ctx ctx = {0};
    http_server *s1 = start_server(&ctx, 0, 0, 0);
    http_server_opts_default(&so);
    so.handler = handler;
    so.port = http_server_port(s1);
    ck_assert_int_eq(http_server_new(&s, &so, err), RL_EIO);
    ck_assert_msg(strstr(err, "cannot listen") && strstr(err, "in use"), "%s", err);
    http_server_free(s1);

    /* IPv6 loopback, when the machine has it. */
    so.host = "::1";
    so.port = 0;
    so.ctx = &ctx;
    if (http_server_new(&s, &so, err) == 0) {
        c = new_client(0, 0, 5000, 0, NULL);
        char url[128];
        snprintf(url, sizeof url, "http://[::1]:%d/echo", http_server_port(s));
        ck_assert_msg(do_req(c, &rs, "POST", url, "v6", 2, err) == 0, "%s", err);
        ck_assert_str_eq(rs.body, "v6");
        http_response_dispose(&rs);
        http_client_free(c);
        http_server_free(s);
    }
}
END_TEST

START_TEST(test_client_against_python)
{
    ck_assert_int_eq(access(PY, X_OK), 0);
    /* python3 -m http.server over a temporary directory. */
    char dir[] = "/tmp/rl-http-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/hello.txt", dir);
    FILE *f = fopen(path, "w");
    fputs("hello from a file\n", f);
    fclose(f);
    int port = free_port();
    char ports[16];
    snprintf(ports, sizeof ports, "%d", port);
    char *argv[] = {PY, "-m", "http.server", "--bind", "127.0.0.1", "--directory", dir, ports, NULL};
    peer fs = spawn(argv, 0);
    fs.port = port;

    /* Connection refused until it listens: the retries ride it out. */
    http_client *c = new_client(8, 100, 5000, 0, NULL);
    char url[256], err[RL_ERR_MAX], v[64];
    http_response rs;
    snprintf(url, sizeof url, "http://127.0.0.1:%d/hello.txt", port);
    ck_assert_msg(do_req(c, &rs, "GET", url, NULL, 0, err) == 0, "%s", err);
    ck_assert_int_eq(rs.status, 200);
    ck_assert_str_eq(rs.body, "hello from a file\n");
    ck_assert_int_eq(http_response_header(&rs, "Content-Length", v, sizeof v), 2);
    ck_assert_str_eq(v, "18");
    http_response_dispose(&rs);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/missing.txt", port);
    ck_assert_msg(do_req(c, &rs, "GET", url, NULL, 0, err) == 0, "%s", err);
    ck_assert_int_eq(rs.status, 404);
    ck_assert_int_eq(rs.attempts, 1);
    http_response_dispose(&rs);
    stop(&fs);
    unlink(path);
    rmdir(dir);

    /* A POST handler written with http.server. */
    peer p = start_peer();
    snprintf(url, sizeof url, "http://127.0.0.1:%d/echo", p.port);
    size_t n = 100000;
    char *body = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        body[i] = (char)('a' + i % 26);
    body[n] = '\0';
    ck_assert_msg(do_req(c, &rs, "POST", url, body, n, err) == 0, "%s", err);
    ck_assert_int_eq(rs.status, 200);
    ck_assert_uint_eq(rs.body_len, n);
    ck_assert_str_eq(rs.body, body);
    http_response_header(&rs, "X-Seen-Auth", v, sizeof v);
    ck_assert_str_eq(v, "yes");
    http_response_header(&rs, "Content-Type", v, sizeof v);
    ck_assert_str_eq(v, "application/json");
    http_response_dispose(&rs);
    free(body);

    /* 429 twice, then 200: retried. */
    snprintf(url, sizeof url, "http://127.0.0.1:%d/flaky?n=2&id=a", p.port);
    ck_assert_msg(do_req(c, &rs, "GET", url, NULL, 0, err) == 0, "%s", err);
    ck_assert_int_eq(rs.status, 200);
    ck_assert_int_eq(rs.attempts, 3);
    ck_assert_str_eq(rs.body, "ok after 2");
    http_response_dispose(&rs);

    /* Dropped without an answer: an error after the retries. */
    http_client_free(c);
    c = new_client(1, 10, 5000, 0, NULL);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/drop", p.port);
    ck_assert_int_eq(do_req(c, &rs, "GET", url, NULL, 0, err), RL_EIO);
    ck_assert_msg(strstr(err, "closed the connection without answering") && strstr(err, "/drop") &&
                      strstr(err, "(2 attempts)"),
                  "%s", err);
    ck_assert_ptr_null(rs.body);
    http_response_dispose(&rs);

    /* A body with no length (ends at close) over the cap. */
    http_client_free(c);
    c = new_client(2, 10, 5000, 1000, NULL);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/big?n=5000", p.port);
    ck_assert_int_eq(do_req(c, &rs, "GET", url, NULL, 0, err), RL_ELIMIT);
    ck_assert_msg(strstr(err, "over the cap of 1000 bytes") && strstr(err, "/big?..."), "%s", err);
    ck_assert_int_eq(rs.attempts, 1);
    http_response_dispose(&rs);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/big?n=1000", p.port);
    ck_assert_msg(do_req(c, &rs, "GET", url, NULL, 0, err) == 0, "%s", err);
    ck_assert_uint_eq(rs.body_len, 1000);
    http_response_dispose(&rs);

    /* A server that accepts and never answers. */
    http_client_free(c);
    c = new_client(1, 10, 400, 0, NULL);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/stall", p.port);
    long t0 = now_ms();
    ck_assert_int_eq(do_req(c, &rs, "GET", url, NULL, 0, err), RL_ETIMEOUT);
    long dt = now_ms() - t0;
    ck_assert_msg(dt >= 800 && dt < 5000, "two attempts of 400 ms took %ld ms", dt);
    ck_assert_msg(strstr(err, "no complete response within 400 ms"), "%s", err);
    ck_assert_int_eq(rs.attempts, 2);
    http_response_dispose(&rs);
    http_client_free(c);
    stop(&p);
}
END_TEST

START_TEST(test_server_against_curl_and_urllib)
{
    ck_assert_msg(access("/usr/bin/curl", X_OK) == 0, "the curl command is needed");
    srv_ctx ctx = {0};
    http_server *s = start_server(&ctx, 4096, 0, 0);
    int port = http_server_port(s);
    char dir[] = "/tmp/rl-http-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char small[256], big[256], cmd[1024];
    snprintf(small, sizeof small, "%s/small.json", dir);
    snprintf(big, sizeof big, "%s/big.bin", dir);
    FILE *f = fopen(small, "w");
    fputs("{\"task\": \"leapyear\", \"seed\": 3}", f);
    fclose(f);
    f = fopen(big, "w");
    for (int i = 0; i < 5000; i++)
        fputc('z', f);
    fclose(f);

    snprintf(cmd, sizeof cmd,
             "/usr/bin/curl -sS -X POST -H 'Content-Type: application/json' "
             "-H 'Authorization: Bearer " SECRET "' --data-binary @%s "
             "-w '\\n%%{http_code} %%{content_type}' 'http://127.0.0.1:%d/echo?q=curl'",
             small, port);
    char *out = run(cmd);
    ck_assert_str_eq(out, "{\"task\": \"leapyear\", \"seed\": 3}\n200 application/json");
    free(out);
    ck_assert_int_eq(atomic_load(&ctx.calls), 1);

    /* Over the cap, with a Content-Length, then chunked: 413, handler not
     * called. */
    snprintf(cmd, sizeof cmd,
             "/usr/bin/curl -sS --data-binary @%s -w '\\n%%{http_code}' http://127.0.0.1:%d/echo",
             big, port);
    out = run(cmd);
    ck_assert_msg(strstr(out, "\"type\": \"request_too_large\"") && strstr(out, "\n413"), "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "over the cap of 4096 bytes"));
    free(out);
    snprintf(cmd, sizeof cmd,
             "/usr/bin/curl -sS -H 'Transfer-Encoding: chunked' --data-binary @%s "
             "-w '\\n%%{http_code}' http://127.0.0.1:%d/echo 2>&1",
             big, port);
    out = run(cmd);
    ck_assert_msg(strstr(out, "\n413"), "%s", out);
    free(out);
    ck_assert_int_eq(atomic_load(&ctx.calls), 1);

    /* urllib, Python's own client. */
    snprintf(cmd, sizeof cmd,
             PY " -c \"import urllib.request as u; "
                "r = u.urlopen(u.Request('http://127.0.0.1:%d/echo', data=b'from urllib', "
                "headers={'Content-Type': 'text/plain'})); "
                "print(r.status, r.headers['X-Request-Id'], r.read().decode())\"",
             port);
    out = run(cmd);
    ck_assert_str_eq(out, "200 req-2 from urllib\n");
    free(out);
    snprintf(cmd, sizeof cmd,
             PY " -c \"import urllib.request as u, urllib.error as e\n"
                "try: u.urlopen(u.Request('http://127.0.0.1:%d/echo', data=b'x' * 5000))\n"
                "except e.HTTPError as x: print(x.code)\"",
             port);
    out = run(cmd);
    ck_assert_str_eq(out, "413\n");
    free(out);
    ck_assert_int_eq(atomic_load(&ctx.calls), 2);

    unlink(small);
    unlink(big);
    rmdir(dir);
    http_server_free(s);
}
END_TEST

START_TEST(test_server_down)
{
    log_lines log = {0};
    http_client *c = new_client(2, 20, 2000, 0, &log);
    int port = free_port();
    char url[256], err[RL_ERR_MAX];
    http_response rs;
    snprintf(url, sizeof url, "http://user:" SECRET "@127.0.0.1:%d/v1/chat?key=" SECRET, port);
    long t0 = now_ms();
    ck_assert_int_eq(do_req(c, &rs, "POST", url, "{}", 2, err), RL_EIO);
    long dt = now_ms() - t0;
    char want[128];
    snprintf(want, sizeof want, "POST http://127.0.0.1:%d/v1/chat?...: connection refused", port);
    ck_assert_msg(strstr(err, want), "%s", err);
    ck_assert_msg(strstr(err, "(3 attempts)"), "%s", err);
    ck_assert_ptr_null(strstr(err, "sk-"));
    ck_assert_int_eq(rs.attempts, 3);
    ck_assert_int_eq(rs.status, 0);
    ck_assert_msg(dt >= 60 && dt < 3000, "waits of 20 + 40 ms took %ld ms", dt);
    http_response_dispose(&rs);
    ck_assert_int_eq(log.n, 2);
    ck_assert_int_eq(log.leaked, 0);
    ck_assert_ptr_nonnull(strstr(log.last, "retry 2 of 2 in 40 ms"));

    /* A host that does not resolve: not retried. */
    ck_assert_int_eq(do_req(c, &rs, "GET", "http://no-such-host.invalid/", NULL, 0, err), RL_EIO);
    ck_assert_msg(strstr(err, "host not found"), "%s", err);
    ck_assert_int_eq(rs.attempts, 1);
    http_response_dispose(&rs);
    http_client_free(c);
}
END_TEST

START_TEST(test_timeout)
{
    /* A socket that listens and never accepts: the kernel completes the
     * handshake, nothing ever answers. */
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ck_assert_int_eq(bind(lfd, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(listen(lfd, 4), 0);
    socklen_t l = sizeof a;
    getsockname(lfd, (struct sockaddr *)&a, &l);
    http_client *c = new_client(0, 0, 300, 0, NULL);
    char url[256], err[RL_ERR_MAX];
    http_response rs;
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/completions", ntohs(a.sin_port));
    long t0 = now_ms();
    ck_assert_int_eq(do_req(c, &rs, "POST", url, "{}", 2, err), RL_ETIMEOUT);
    long dt = now_ms() - t0;
    ck_assert_msg(dt >= 280 && dt < 3000, "a 300 ms timeout took %ld ms", dt);
    ck_assert_msg(strstr(err, "/v1/completions: no complete response within 300 ms"), "%s", err);
    ck_assert_ptr_null(strstr(err, "sk-"));
    http_response_dispose(&rs);
    http_client_free(c);
    close(lfd);
}
END_TEST

START_TEST(test_caps_both_ways)
{
    srv_ctx ctx = {0};
    ctx.big_len = 5000;
    http_server *s = start_server(&ctx, 1000, 0, 0);
    int port = http_server_port(s);
    http_client *c = new_client(2, 10, 5000, 1000, NULL);
    char url[256], err[RL_ERR_MAX];
    http_response rs;

    /* Response over the client's cap (a Content-Length says so). */
    snprintf(url, sizeof url, "http://127.0.0.1:%d/big", port);
    ck_assert_int_eq(do_req(c, &rs, "GET", url, NULL, 0, err), RL_ELIMIT);
    char want[160];
    snprintf(want, sizeof want, "GET http://127.0.0.1:%d/big: response body over the cap of 1000 bytes",
             port);
    ck_assert_str_eq(err, want);
    ck_assert_int_eq(rs.attempts, 1);
    ck_assert_ptr_null(rs.body);
    http_response_dispose(&rs);
    ctx.big_len = 1000;
    ck_assert_msg(do_req(c, &rs, "GET", url, NULL, 0, err) == 0, "%s", err);
    ck_assert_uint_eq(rs.body_len, 1000);
    http_response_dispose(&rs);

    /* Request over the server's cap: 413, the handler never sees it. */
    int calls = atomic_load(&ctx.calls);
    char body[1001];
    memset(body, 'q', sizeof body);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/echo", port);
    ck_assert_msg(do_req(c, &rs, "POST", url, body, 1001, err) == 0, "%s", err);
    ck_assert_int_eq(rs.status, 413);
    ck_assert_int_eq(rs.attempts, 1);
    ck_assert_ptr_nonnull(strstr(rs.body, "over the cap of 1000 bytes"));
    http_response_dispose(&rs);
    ck_assert_int_eq(atomic_load(&ctx.calls), calls);
    ck_assert_msg(do_req(c, &rs, "POST", url, body, 1000, err) == 0, "%s", err);
    ck_assert_int_eq(rs.status, 200);
    ck_assert_uint_eq(rs.body_len, 1000);
    http_response_dispose(&rs);
    ck_assert_int_eq(atomic_load(&ctx.calls), calls + 1);

    /* Chunked over the cap on a raw socket: 413 once past the cap. */
    char req[4096], out[4096];
    int n = snprintf(req, sizeof req,
                     "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                     "258\r\n%0600d\r\n258\r\n%0600d\r\n0\r\n\r\n",
                     0, 0);
    raw_exchange(port, req, (size_t)n, out, sizeof out, 0);
    ck_assert_msg(strncmp(out, "HTTP/1.1 413", 12) == 0, "%s", out);
    ck_assert_int_eq(atomic_load(&ctx.calls), calls + 1);
    http_client_free(c);
    http_server_free(s);
}
END_TEST

START_TEST(test_retries)
{
    srv_ctx ctx = {0};
    http_server *s = start_server(&ctx, 0, 0, 0);
    char url[256], err[RL_ERR_MAX];
    http_response rs;
    snprintf(url, sizeof url, "http://127.0.0.1:%d/flaky", http_server_port(s));

    log_lines log = {0};
    http_client *c = new_client(3, 10, 5000, 0, &log);
    ctx.flaky_status = 429;
    atomic_store(&ctx.flaky_left, 2);
    ck_assert_msg(do_req(c, &rs, "GET", url, NULL, 0, err) == 0, "%s", err);
    ck_assert_int_eq(rs.status, 200);
    ck_assert_int_eq(rs.attempts, 3);
    ck_assert_str_eq(rs.body, "ok");
    http_response_dispose(&rs);
    ck_assert_int_eq(log.n, 2);
    ck_assert_ptr_nonnull(strstr(log.last, "status 429, retry 2 of 3 in 20 ms"));

    /* 5xx too; and when the retries run out, the last answer is returned. */
    ctx.flaky_status = 503;
    atomic_store(&ctx.flaky_left, 5);
    ck_assert_msg(do_req(c, &rs, "POST", url, "{}", 2, err) == 0, "%s", err);
    ck_assert_int_eq(rs.status, 503);
    ck_assert_int_eq(rs.attempts, 4);
    ck_assert_str_eq(rs.body, "busy");
    http_response_dispose(&rs);
    http_client_free(c);

    /* Retry-After lengthens the wait, within backoff_max_ms. */
    c = new_client(1, 10, 5000, 0, NULL);
    ctx.flaky_status = 429;
    ctx.retry_after = "1";
    atomic_store(&ctx.flaky_left, 1);
    long t0 = now_ms();
    ck_assert_msg(do_req(c, &rs, "GET", url, NULL, 0, err) == 0, "%s", err);
    long dt = now_ms() - t0;
    ck_assert_int_eq(rs.status, 200);
    ck_assert_msg(dt >= 1000 && dt < 5000, "Retry-After: 1 waited %ld ms", dt);
    http_response_dispose(&rs);
    http_client_free(c);

    /* No retries: one attempt, its answer. */
    c = new_client(0, 10, 5000, 0, NULL);
    atomic_store(&ctx.flaky_left, 1);
    ck_assert_msg(do_req(c, &rs, "GET", url, NULL, 0, err) == 0, "%s", err);
    ck_assert_int_eq(rs.status, 429);
    ck_assert_int_eq(rs.attempts, 1);
    http_response_dispose(&rs);
    http_client_free(c);
    http_server_free(s);
}
END_TEST

START_TEST(test_malformed_requests)
{
    srv_ctx ctx = {0};
    http_server *s = start_server(&ctx, 1000, 0, 2);
    int port = http_server_port(s);
    char out[8192];
    static const char binary[] = "\x00\xff\xfe\x01\r\n\r\n\x80\x81";
    struct {
        const char *name;
        const char *data;
        size_t len;       /* 0: strlen */
        const char *want; /* the answer's start, or NULL: any 4xx or a close */
    } cases[] = {
        {"garbage line", "GARBAGE\r\n\r\n", 0, NULL},
        {"binary", binary, sizeof binary - 1, NULL},
        {"header without colon", "GET / HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n", 0, NULL},
        {"bad content length", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 0, NULL},
        {"bad chunk size", "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n", 0, NULL},
        {"truncated body", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc", 0, NULL},
        {"bad version", "GET / HTTP/9.9\r\nHost: x\r\n\r\n", 0, NULL},
        {"unknown method", "BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n", 0, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        raw_exchange(port, cases[i].data, cases[i].len ? cases[i].len : strlen(cases[i].data), out,
                     sizeof out, 1);
        if (cases[i].want)
            ck_assert_msg(strncmp(out, cases[i].want, strlen(cases[i].want)) == 0, "%s: %.80s",
                          cases[i].name, out);
        else
            ck_assert_msg(out[0] == '\0' || strncmp(out, "HTTP/1.1 4", 10) == 0 ||
                              strncmp(out, "HTTP/1.1 505", 12) == 0,
                          "%s: %.80s", cases[i].name, out);
    }
    /* Headers past the connection's memory. */
    size_t hl = 100000;
    char *huge = malloc(hl + 64);
    int n = snprintf(huge, 64, "GET /echo HTTP/1.1\r\nHost: x\r\nX-Big: ");
    memset(huge + n, 'h', hl - (size_t)n - 4);
    memcpy(huge + hl - 4, "\r\n\r\n", 4);
    raw_exchange(port, huge, hl, out, sizeof out, 0);
    ck_assert_msg(out[0] == '\0' || strncmp(out, "HTTP/1.1 4", 10) == 0, "huge header: %.80s", out);
    free(huge);
    /* Only the well-formed BREW request reached the handler. */
    ck_assert_int_eq(atomic_load(&ctx.calls), 1);

    /* The server still answers. */
    http_client *c = new_client(0, 0, 5000, 0, NULL);
    char url[256], err[RL_ERR_MAX];
    http_response rs;
    snprintf(url, sizeof url, "http://127.0.0.1:%d/echo", port);
    ck_assert_msg(do_req(c, &rs, "POST", url, "alive", 5, err) == 0, "%s", err);
    ck_assert_str_eq(rs.body, "alive");
    http_response_dispose(&rs);
    http_client_free(c);
    http_server_free(s);
}
END_TEST

START_TEST(test_connection_cap_and_idle_timeout)
{
    srv_ctx ctx = {0};
    http_server *s = start_server(&ctx, 0, 2, 1);
    int port = http_server_port(s);
    http_client *c = new_client(0, 0, 3000, 0, NULL);
    char url[256], err[RL_ERR_MAX];
    http_response rs;
    snprintf(url, sizeof url, "http://127.0.0.1:%d/echo", port);

    /* Two silent connections hold the cap: a third is closed unanswered. */
    int a = connect_to(port), b = connect_to(port);
    usleep(100000);
    ck_assert_int_eq(do_req(c, &rs, "POST", url, "x", 1, err), RL_EIO);
    ck_assert_msg(strstr(err, "without answering") || strstr(err, "dropped"), "%s", err);
    http_response_dispose(&rs);
    ck_assert_int_eq(atomic_load(&ctx.calls), 0);

    /* Silent connections are closed after the idle timeout (1 s). */
    char ch;
    long t0 = now_ms();
    ck_assert_int_eq(recv(a, &ch, 1, 0), 0);
    ck_assert_int_eq(recv(b, &ch, 1, 0), 0);
    long dt = now_ms() - t0;
    ck_assert_msg(dt < 4000, "idle connections closed after %ld ms", dt);
    close(a);
    close(b);
    usleep(100000);
    ck_assert_msg(do_req(c, &rs, "POST", url, "x", 1, err) == 0, "%s", err);
    ck_assert_int_eq(rs.status, 200);
    http_response_dispose(&rs);
    http_client_free(c);
    http_server_free(s);
}
END_TEST

/* Concurrent clients, one thread each, against one server. */
typedef struct par_arg {
    int port;
    int ok;
} par_arg;

static void *par_worker(void *v)
{
    par_arg *a = v;
    http_client *c = new_client(0, 0, 5000, 0, NULL);
    char url[128], err[RL_ERR_MAX], body[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/echo", a->port);
    for (int i = 0; i < 20; i++) {
        http_response rs;
        int n = snprintf(body, sizeof body, "{\"i\": %d, \"t\": %p}", i, (void *)a);
        if (do_req(c, &rs, "POST", url, body, (size_t)n, err) == 0 && rs.status == 200 &&
            strcmp(rs.body, body) == 0)
            a->ok++;
        http_response_dispose(&rs);
    }
    http_client_free(c);
    return NULL;
}

START_TEST(test_concurrent_clients)
{
    srv_ctx ctx = {0};
    http_server *s = start_server(&ctx, 0, 0, 0);
    pthread_t t[8];
    par_arg args[8];
    for (int i = 0; i < 8; i++) {
        args[i] = (par_arg){http_server_port(s), 0};
        pthread_create(&t[i], NULL, par_worker, &args[i]);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(t[i], NULL);
        ck_assert_int_eq(args[i].ok, 20);
    }
    ck_assert_int_eq(atomic_load(&ctx.calls), 160);
    http_server_free(s);
}
END_TEST

/* Many requests on one thread: never more than max_inflight open, each
 * with its own outcome, retries of one not holding up the others. */
START_TEST(test_many_inflight)
{
    srv_ctx ctx = {0};
    ctx.flaky_status = 503;
    atomic_store(&ctx.flaky_left, 1);
    http_server *s = start_server(&ctx, 0, 0, 0);
    log_lines log = {0};
    http_client *c = new_client(2, 50, 5000, 1 << 20, &log);
    enum { N = 8 };
    char urls[N][128], bodies[N][16], errs[N][RL_ERR_MAX], err[RL_ERR_MAX];
    http_request rq[N];
    http_response rs[N];
    int rcs[N];
    for (int i = 0; i < N; i++) {
        const char *path = i == 6 ? "/flaky" : "/slow";
        snprintf(urls[i], sizeof urls[i], "http://127.0.0.1:%d%s", i == 7 ? 9 : http_server_port(s), path);
        snprintf(bodies[i], sizeof bodies[i], "req %d", i);
        rq[i] = (http_request){.method = "POST", .url = urls[i], .body = bodies[i], .body_len = strlen(bodies[i])};
    }
    long t0 = now_ms();
    ck_assert_int_eq(http_client_many(c, rs, rcs, errs, rq, N, 3, err), 0);
    long dt = now_ms() - t0;
    for (int i = 0; i < 6; i++) {
        ck_assert_msg(rcs[i] == 0, "%s", errs[i]);
        ck_assert_int_eq(rs[i].status, 200);
        ck_assert_str_eq(rs[i].body, bodies[i]);
    }
    ck_assert_int_eq(rcs[6], 0);
    ck_assert_int_eq(rs[6].status, 200);
    ck_assert_int_eq(rs[6].attempts, 2);
    ck_assert_int_eq(rcs[7], RL_EIO);
    ck_assert_ptr_nonnull(strstr(errs[7], "connection refused"));
    ck_assert_ptr_null(strchr(errs[7], '\n'));
    ck_assert_int_eq(atomic_load(&ctx.max_open), 3);
    ck_assert_int_ge(dt, 2 * 150); /* six slow answers, three at a time */
    for (int i = 0; i < N; i++)
        http_response_dispose(&rs[i]);
    ck_assert_int_eq(http_client_many(c, rs, rcs, errs, rq, N, 0, err), RL_EINVAL);
    http_client_free(c);
    http_server_free(s);
}
END_TEST

/* The JSON writers match cJSON byte for byte: every byte value in a string,
 * and the error answer as cJSON built it field by field. */
START_TEST(test_json_writers)
{
    char all[256];
    for (int i = 0; i < 255; i++)
        all[i] = (char)(i + 1);
    all[255] = '\0';
    const char *cases[] = {"", "plain", "q\"uote \\ back/slash", "\b\f\n\r\t\x01\x1f\x7f", "caf\xc3\xa9 \xe2\x82\xac", all};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        buf_t b;
        buf_init(&b, 0);
        ck_assert_int_eq(http_json_str(&b, cases[k], strlen(cases[k])), 0);
        cJSON *o = cJSON_CreateString(cases[k]);
        char *want = cJSON_PrintUnformatted(o);
        ck_assert_str_eq(buf_str(&b), want);
        free(want);
        cJSON_Delete(o);
        buf_dispose(&b);
    }
    buf_t small;
    buf_init(&small, 4);
    ck_assert_int_eq(http_json_str(&small, "abcdef", 6), RL_ELIMIT);
    buf_dispose(&small);

    static const struct { int status; const char *param, *code, *type; } errs[] = {
        {400, "messages", NULL, "invalid_request_error"}, {401, NULL, NULL, "authentication_error"},
        {404, "model", "model_not_found", "not_found_error"}, {409, NULL, NULL, "conflict_error"},
        {429, NULL, NULL, "rate_limit_error"}, {503, NULL, NULL, "server_error"}};
    for (size_t k = 0; k < sizeof errs / sizeof *errs; k++) {
        http_server_resp r;
        memset(&r, 0, sizeof r);
        ck_assert_int_eq(http_reply_error(&r, errs[k].status, errs[k].param, errs[k].code, "%s \"%d\"\n", "bad", 7), 0);
        cJSON *o = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(o, "error");
        cJSON_AddStringToObject(e, "message", "bad \"7\"\n");
        cJSON_AddStringToObject(e, "type", errs[k].type);
        if (errs[k].param)
            cJSON_AddStringToObject(e, "param", errs[k].param);
        else
            cJSON_AddNullToObject(e, "param");
        if (errs[k].code)
            cJSON_AddStringToObject(e, "code", errs[k].code);
        else
            cJSON_AddNullToObject(e, "code");
        char *want = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
        ck_assert_int_eq(r.status, errs[k].status);
        ck_assert_str_eq(r.content_type, "application/json");
        ck_assert_uint_eq(r.body_len, strlen(want));
        ck_assert(memcmp(r.body, want, r.body_len) == 0);
        ck_assert_int_eq(r.n_headers, errs[k].status == 429);
        if (r.n_headers) {
            ck_assert_str_eq(r.headers[0], "Retry-After");
            ck_assert_str_eq(r.headers[0] + strlen("Retry-After") + 1, "1");
        }
        free(want);
        free(r.body);
        for (int i = 0; i < r.n_headers; i++)
            free(r.headers[i]);
    }
}
END_TEST

Suite *http_suite(void)
{
    Suite *s = suite_create("http");
    TCase *tc = tcase_create("http");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_client_server_roundtrip);
    tcase_add_test(tc, test_handler_failure);
    tcase_add_test(tc, test_reply_checks);
    tcase_add_test(tc, test_options_and_bad_requests);
    tcase_add_test(tc, test_client_against_python);
    tcase_add_test(tc, test_server_against_curl_and_urllib);
    tcase_add_test(tc, test_server_down);
    tcase_add_test(tc, test_timeout);
    tcase_add_test(tc, test_caps_both_ways);
    tcase_add_test(tc, test_retries);
    tcase_add_test(tc, test_malformed_requests);
    tcase_add_test(tc, test_connection_cap_and_idle_timeout);
    tcase_add_test(tc, test_concurrent_clients);
    tcase_add_test(tc, test_many_inflight);
    tcase_add_test(tc, test_json_writers);
    suite_add_tcase(s, tc);
    return s;
}
