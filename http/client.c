/* client.c - the HTTP client of http.h on libcurl's easy interface. */
#include "http/http.h"

#include "common/err.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

struct http_client {
    CURL *easy;
    CURLM *multi;       /* http_client_many's, kept so that its cached
                           connections serve the next call (NULL until then) */
    http_client_opts o;
};

/* State of one attempt, seen by the write and header callbacks. */
typedef struct attempt {
    buf_t *body;
    buf_t *headers;
    int over;   /* the body passed its cap */
} attempt;

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc = CURLE_OK;

static void global_init(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* The URL as error messages show it: scheme, host, port and path; user
 * info dropped, a query or fragment shown as "?..." (both may carry
 * credentials), the whole cut to fit a one-line message. */
static void url_for_msg(char *out, size_t cap, const char *url)
{
    const char *p = strstr(url, "://");
    size_t o = 0;
    const char *rest = url;
    if (p) {
        size_t n = (size_t)(p + 3 - url);
        const char *auth = p + 3;
        size_t alen = strcspn(auth, "/?#");
        const char *at = NULL;
        for (size_t i = 0; i < alen; i++)
            if (auth[i] == '@')
                at = auth + i;
        if (n >= cap)
            n = cap - 1;
        memcpy(out, url, n);
        o = n;
        rest = at ? at + 1 : auth;
    }
    size_t keep = strcspn(rest, "?#");
    int more = rest[keep] != '\0';
    const size_t show_max = 160;
    int cut = 0;
    if (keep > show_max) {
        keep = show_max;
        cut = 1;
    }
    if (o + keep >= cap)
        keep = cap - 1 - o;
    memcpy(out + o, rest, keep);
    o += keep;
    const char *tail = cut ? "..." : more ? "?..." : "";
    size_t tl = strlen(tail);
    if (o + tl < cap) {
        memcpy(out + o, tail, tl);
        o += tl;
    }
    out[o] = '\0';
}

void http_client_opts_default(http_client_opts *o)
{
    memset(o, 0, sizeof *o);
    o->connect_timeout_ms = HTTP_CONNECT_TIMEOUT_MS_DEFAULT;
    o->timeout_ms = HTTP_TIMEOUT_MS_DEFAULT;
    o->body_max = HTTP_RESPONSE_MAX_DEFAULT;
    o->retries = HTTP_RETRIES_DEFAULT;
    o->backoff_ms = HTTP_BACKOFF_MS_DEFAULT;
    o->backoff_max_ms = HTTP_BACKOFF_MAX_MS_DEFAULT;
}

int http_client_new(http_client **out, const http_client_opts *o, char *err)
{
    *out = NULL;
    if (o->timeout_ms < 1 || o->timeout_ms > HTTP_TIMEOUT_MS_HARD)
        return rl_err(err, RL_EINVAL, "http client: timeout_ms %ld: expected 1..%d", o->timeout_ms,
                      HTTP_TIMEOUT_MS_HARD);
    if (o->connect_timeout_ms < 1 || o->connect_timeout_ms > o->timeout_ms)
        return rl_err(err, RL_EINVAL, "http client: connect_timeout_ms %ld: expected 1..timeout_ms (%ld)",
                      o->connect_timeout_ms, o->timeout_ms);
    if (o->body_max < 1 || o->body_max > HTTP_RESPONSE_MAX_HARD)
        return rl_err(err, RL_EINVAL, "http client: body_max %zu: expected 1..%u", o->body_max,
                      HTTP_RESPONSE_MAX_HARD);
    if (o->retries < 0 || o->retries > HTTP_RETRIES_HARD)
        return rl_err(err, RL_EINVAL, "http client: retries %d: expected 0..%d", o->retries,
                      HTTP_RETRIES_HARD);
    if (o->backoff_max_ms < 0 || o->backoff_max_ms > HTTP_BACKOFF_MAX_MS_HARD)
        return rl_err(err, RL_EINVAL, "http client: backoff_max_ms %ld: expected 0..%d",
                      o->backoff_max_ms, HTTP_BACKOFF_MAX_MS_HARD);
    if (o->backoff_ms < 0 || o->backoff_ms > o->backoff_max_ms)
        return rl_err(err, RL_EINVAL, "http client: backoff_ms %ld: expected 0..backoff_max_ms (%ld)",
                      o->backoff_ms, o->backoff_max_ms);
    pthread_once(&global_once, global_init);
    if (global_rc != CURLE_OK)
        return rl_err(err, RL_EIO, "http client: libcurl did not initialise: %s",
                      curl_easy_strerror(global_rc));
    http_client *c = calloc(1, sizeof *c);
    if (!c)
        return rl_err(err, RL_ENOMEM, "http client: out of memory");
    c->easy = curl_easy_init();
    if (!c->easy) {
        free(c);
        return rl_err(err, RL_ENOMEM, "http client: curl_easy_init failed");
    }
    c->o = *o;
    *out = c;
    return 0;
}

void http_client_free(http_client *c)
{
    if (!c)
        return;
    curl_easy_cleanup(c->easy);
    if (c->multi)
        curl_multi_cleanup(c->multi);
    free(c);
}

static size_t on_body(char *data, size_t size, size_t n, void *ud)
{
    attempt *a = ud;
    size_t len = size * n;
    int rc = buf_append(a->body, data, len);
    if (rc == RL_ELIMIT)
        a->over = 1;
    return rc == 0 ? len : 0;
}

static size_t on_header(char *data, size_t size, size_t n, void *ud)
{
    attempt *a = ud;
    size_t len = size * n;
    /* A status line starts the headers of a new response (after a 100
     * Continue, or on a retry): keep only the last response's. */
    if (len >= 5 && memcmp(data, "HTTP/", 5) == 0)
        buf_clear(a->headers);
    buf_append_trunc(a->headers, data, len);
    return len;
}

static int is_token_char(int ch)
{
    return ch > 32 && ch < 127 && !strchr("()<>@,;:\\\"/[]?={}", ch);
}

/* Checks the request and builds curl's header list. */
static int build_headers(const http_request *req, int has_body, struct curl_slist **out, char *err)
{
    struct curl_slist *l = NULL;
    int has_ctype = 0;
    size_t n = 0;
    for (; req->headers && req->headers[n]; n++) {
        const char *h = req->headers[n];
        size_t len = strlen(h);
        size_t name = strcspn(h, ":");
        int ok = n < HTTP_REQ_HEADERS_MAX && len < HTTP_HEADER_LINE_MAX && name > 0 &&
                 h[name] == ':' && !strpbrk(h, "\r\n");
        for (size_t i = 0; ok && i < name; i++)
            ok = is_token_char((unsigned char)h[i]);
        if (!ok) {
            curl_slist_free_all(l);
            if (n >= HTTP_REQ_HEADERS_MAX)
                return rl_err(err, RL_EINVAL, "http request: more than %d headers",
                              HTTP_REQ_HEADERS_MAX);
            /* The value may be a key: the message names the header's
             * position only. */
            return rl_err(err, RL_EINVAL,
                          "http request: header %zu: expected 'Name: value' on one line, under %d bytes",
                          n + 1, HTTP_HEADER_LINE_MAX);
        }
        if (name == 12 && strncasecmp(h, "content-type", 12) == 0)
            has_ctype = 1;
        struct curl_slist *t = curl_slist_append(l, h);
        if (!t) {
            curl_slist_free_all(l);
            return rl_err(err, RL_ENOMEM, "http request: out of memory");
        }
        l = t;
    }
    char line[HTTP_CONTENT_TYPE_MAX + 32];
    const char *extra[3] = {"Expect:", NULL, NULL};
    if (req->content_type) {
        if (strlen(req->content_type) >= HTTP_CONTENT_TYPE_MAX || strpbrk(req->content_type, "\r\n")) {
            curl_slist_free_all(l);
            return rl_err(err, RL_EINVAL,
                          "http request: content type: expected one line under %d bytes",
                          HTTP_CONTENT_TYPE_MAX);
        }
        snprintf(line, sizeof line, "Content-Type: %s", req->content_type);
        extra[1] = line;
    } else if (!has_ctype && has_body) {
        extra[1] = "Content-Type:"; /* none, rather than curl's form type */
    }
    for (int i = 0; i < 3 && extra[i]; i++) {
        struct curl_slist *t = curl_slist_append(l, extra[i]);
        if (!t) {
            curl_slist_free_all(l);
            return rl_err(err, RL_ENOMEM, "http request: out of memory");
        }
        l = t;
    }
    *out = l;
    return 0;
}

static int check_request(const http_request *req, char *err)
{
    if (!req->method || !*req->method || strlen(req->method) > 32)
        return rl_err(err, RL_EINVAL, "http request: method: expected a token like GET or POST");
    for (const char *p = req->method; *p; p++)
        if (!is_token_char((unsigned char)*p))
            return rl_err(err, RL_EINVAL, "http request: method: expected a token like GET or POST");
    if (!req->url || !*req->url)
        return rl_err(err, RL_EINVAL, "http request: expected a URL");
    if (strlen(req->url) > HTTP_URL_MAX)
        return rl_err(err, RL_EINVAL, "http request: URL over %d bytes", HTTP_URL_MAX);
    if (strncasecmp(req->url, "http://", 7) != 0 && strncasecmp(req->url, "https://", 8) != 0)
        return rl_err(err, RL_EINVAL, "http request: URL: expected http:// or https://");
    if (strpbrk(req->url, " \t\r\n"))
        return rl_err(err, RL_EINVAL, "http request: URL: expected no blanks or line breaks");
    if (req->body_len && !req->body)
        return rl_err(err, RL_EINVAL, "http request: body_len %zu with no body", req->body_len);
    return 0;
}

/* Outcome of one attempt. */
enum { A_DONE, A_RETRY, A_FAIL };

/* A request checked and ready to send: its header list, its body and the
 * URL as messages show it. */
typedef struct prepared {
    struct curl_slist *hl;
    const char *body_data;
    char shown[256];
} prepared;

static int prepare(prepared *p, const http_request *req, char *err)
{
    memset(p, 0, sizeof *p);
    int rc = check_request(req, err);
    if (rc < 0)
        return rc;
    /* POST, PUT and PATCH always carry a body, if empty: Content-Length: 0. */
    p->body_data = req->body;
    if (!p->body_data && (strcmp(req->method, "POST") == 0 || strcmp(req->method, "PUT") == 0 ||
                          strcmp(req->method, "PATCH") == 0))
        p->body_data = "";
    if ((rc = build_headers(req, p->body_data != NULL, &p->hl, err)) < 0)
        return rc;
    url_for_msg(p->shown, sizeof p->shown, req->url);
    return 0;
}

/* Sets up e for one attempt of req. */
static void setup_easy(CURL *e, const http_client_opts *o, const http_request *req, const prepared *p, attempt *at,
                       char *cerr)
{
    curl_easy_reset(e);
    curl_easy_setopt(e, CURLOPT_URL, req->url);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_NOPROXY, "localhost,127.0.0.1,::1");
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, o->timeout_ms);
    curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)o->body_max);
    curl_easy_setopt(e, CURLOPT_USERAGENT, o->user_agent ? o->user_agent : "rl-fix");
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, p->hl);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, at);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, at);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, cerr);
    if (strcmp(req->method, "HEAD") == 0)
        curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    else if (p->body_data) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, p->body_data);
    }
    if (strcmp(req->method, "GET") != 0 && strcmp(req->method, "HEAD") != 0 &&
        !(p->body_data && strcmp(req->method, "POST") == 0))
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, req->method);
}

/* Judges a finished attempt: A_DONE, A_RETRY (why says what went wrong)
 * or A_FAIL; *rc and err hold the error of a failed one. */
static int judge(CURL *e, CURLcode cc, const attempt *at, const http_client_opts *o, const http_request *req,
                 const char *shown, long *status_out, char *why, size_t why_cap, int *rc, char *err)
{
    long status = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    *status_out = status;
    why[0] = '\0';
    if (cc == CURLE_OK) {
        if (status == 429 || (status >= 500 && status <= 599)) {
            snprintf(why, why_cap, "status %ld", status);
            return A_RETRY;
        }
        return A_DONE;
    }
    if (at->over || cc == CURLE_FILESIZE_EXCEEDED) {
        *rc = rl_err(err, RL_ELIMIT, "%s %s: response body over the cap of %zu bytes", req->method, shown,
                     o->body_max);
        return A_FAIL;
    }
    if (cc == CURLE_COULDNT_CONNECT) {
        long oe = 0;
        curl_easy_getinfo(e, CURLINFO_OS_ERRNO, &oe);
        if (oe == ECONNREFUSED)
            snprintf(why, why_cap, "connection refused (is the server running?)");
        else
            snprintf(why, why_cap, "could not connect (%s)", oe ? strerror((int)oe) : "no route");
        *rc = rl_err(err, RL_EIO, "%s %s: %s", req->method, shown, why);
        return A_RETRY;
    }
    if (cc == CURLE_OPERATION_TIMEDOUT) {
        curl_off_t ct = 0;
        curl_easy_getinfo(e, CURLINFO_CONNECT_TIME_T, &ct);
        if (ct == 0)
            snprintf(why, why_cap, "no connection within %ld ms", o->connect_timeout_ms);
        else
            snprintf(why, why_cap, "no complete response within %ld ms", o->timeout_ms);
        *rc = rl_err(err, RL_ETIMEOUT, "%s %s: %s", req->method, shown, why);
        return A_RETRY;
    }
    if (cc == CURLE_GOT_NOTHING || cc == CURLE_RECV_ERROR || cc == CURLE_SEND_ERROR || cc == CURLE_PARTIAL_FILE) {
        snprintf(why, why_cap, "%s",
                 cc == CURLE_GOT_NOTHING ? "the server closed the connection without answering"
                                         : "the connection dropped before the response ended");
        *rc = rl_err(err, RL_EIO, "%s %s: %s", req->method, shown, why);
        return A_RETRY;
    }
    if (cc == CURLE_COULDNT_RESOLVE_HOST)
        *rc = rl_err(err, RL_EIO, "%s %s: host not found", req->method, shown);
    else if (cc == CURLE_URL_MALFORMAT || cc == CURLE_UNSUPPORTED_PROTOCOL)
        *rc = rl_err(err, RL_EINVAL, "%s %s: expected a well-formed http:// or https:// URL", req->method, shown);
    else /* curl's static description: the error buffer may quote the request */
        *rc = rl_err(err, RL_EIO, "%s %s: %s", req->method, shown, curl_easy_strerror(cc));
    return A_FAIL;
}

/* The wait before the next attempt: the current backoff, lengthened by a
 * Retry-After header, within the max. */
static long retry_wait(CURL *e, CURLcode cc, const http_client_opts *o, long wait)
{
    long w = wait;
    curl_off_t ra = -1;
    if (cc == CURLE_OK && curl_easy_getinfo(e, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK && ra > 0 && ra * 1000 > w)
        w = ra > o->backoff_max_ms / 1000 ? o->backoff_max_ms : (long)ra * 1000;
    return w > o->backoff_max_ms ? o->backoff_max_ms : w;
}

static long next_backoff(const http_client_opts *o, long wait)
{
    return wait > o->backoff_max_ms / 2 ? o->backoff_max_ms : wait * 2;
}

/* The response of a request whose last attempt ended with verdict: 0 and
 * the body, or the error (with the number of attempts it came after). */
static int conclude(http_response *resp, buf_t *body, int verdict, int rc, const http_request *req,
                    const char *shown, char *err)
{
    if (verdict == A_FAIL || (verdict == A_RETRY && resp->status == 0)) {
        if (verdict == A_RETRY && resp->attempts > 1) {
            size_t l = err ? strlen(err) : 0;
            if (err && l + 1 < RL_ERR_MAX)
                snprintf(err + l, RL_ERR_MAX - l, " (%d attempts)", resp->attempts);
        }
        buf_dispose(body);
        resp->status = 0;
        return rc < 0 ? rc : rl_err(err, RL_EIO, "%s %s: failed", req->method, shown);
    }
    resp->body = buf_detach(body, &resp->body_len);
    if (!resp->body)
        return rl_err(err, RL_ENOMEM, "%s %s: out of memory", req->method, shown);
    return 0;
}

int http_client_request(http_client *c, http_response *resp, const http_request *req, char *err)
{
    memset(resp, 0, sizeof *resp);
    buf_init(&resp->headers, HTTP_RESPONSE_HEADERS_MAX);
    prepared p;
    int rc = prepare(&p, req, err);
    if (rc < 0)
        return rc;
    const http_client_opts *o = &c->o;
    buf_t body;
    buf_init(&body, o->body_max);
    attempt at = {&body, &resp->headers, 0};
    char cerr[CURL_ERROR_SIZE];
    long t0 = now_ms();
    long wait = o->backoff_ms;
    CURL *e = c->easy;
    int verdict = A_FAIL;

    for (int n = 0; n <= o->retries; n++) {
        buf_clear(&body);
        buf_clear(&resp->headers);
        at.over = 0;
        cerr[0] = '\0';
        resp->attempts = n + 1;
        setup_easy(e, o, req, &p, &at, cerr);
        CURLcode cc = curl_easy_perform(e);
        char why[192];
        verdict = judge(e, cc, &at, o, req, p.shown, &resp->status, why, sizeof why, &rc, err);
        if (verdict != A_RETRY || n == o->retries)
            break;
        long w = retry_wait(e, cc, o, wait);
        rl_logf(o->log, o->log_ctx, RL_LOG_WARN, "%s %s: %s, retry %d of %d in %ld ms", req->method, p.shown, why,
                n + 1, o->retries, w);
        sleep_ms(w);
        wait = next_backoff(o, wait);
    }
    curl_slist_free_all(p.hl);
    resp->elapsed_ms = now_ms() - t0;
    return conclude(resp, &body, verdict, rc, req, p.shown, err);
}

/* ---- many requests on one thread (libcurl's multi interface) --------- */

/* One request of http_client_many. */
typedef struct xfer {
    CURL *e;
    prepared p;
    buf_t body;
    attempt at;
    char cerr[CURL_ERROR_SIZE];
    long wait;     /* the next backoff */
    long due;      /* when it may start (queued or waiting for a retry) */
    long t0;       /* first attempt started */
    int state;     /* 0 queued, 1 in flight, 2 done */
} xfer;

int http_client_many(http_client *c, http_response *resps, int *rcs, char (*errs)[RL_ERR_MAX],
                     const http_request *reqs, size_t n, int max_inflight, char *err)
{
    if (max_inflight < 1 || max_inflight > HTTP_MANY_INFLIGHT_MAX)
        return rl_err(err, RL_EINVAL, "http client: max_inflight %d: expected 1..%d", max_inflight,
                      HTTP_MANY_INFLIGHT_MAX);
    if (n > HTTP_MANY_REQUESTS_MAX)
        return rl_err(err, RL_ELIMIT, "http client: %zu requests at once, expected at most %d", n,
                      HTTP_MANY_REQUESTS_MAX);
    const http_client_opts *o = &c->o;
    xfer *x = calloc(n ? n : 1, sizeof *x);
    if (x && !c->multi)
        c->multi = curl_multi_init();
    CURLM *m = c->multi;
    if (!x || !m) {
        free(x);
        return rl_err(err, RL_ENOMEM, "http client: out of memory");
    }
    char scratch[RL_ERR_MAX];
    size_t left = 0;
    long now = now_ms();
    for (size_t i = 0; i < n; i++) {
        char *ei = errs ? errs[i] : scratch;
        ei[0] = '\0';
        memset(&resps[i], 0, sizeof resps[i]);
        buf_init(&resps[i].headers, HTTP_RESPONSE_HEADERS_MAX);
        buf_init(&x[i].body, o->body_max);
        x[i].at = (attempt){&x[i].body, &resps[i].headers, 0};
        x[i].wait = o->backoff_ms;
        x[i].due = now;
        x[i].t0 = now;
        rcs[i] = prepare(&x[i].p, &reqs[i], ei);
        if (rcs[i] == 0 && !(x[i].e = curl_easy_init()))
            rcs[i] = rl_err(ei, RL_ENOMEM, "http client: curl_easy_init failed");
        if (rcs[i] < 0)
            x[i].state = 2;
        else
            left++;
    }
    int inflight = 0;
    while (left > 0) {
        now = now_ms();
        long next_due = -1;
        for (size_t i = 0; i < n && inflight < max_inflight; i++) {
            xfer *t = &x[i];
            if (t->state != 0)
                continue;
            if (t->due > now) {
                next_due = next_due < 0 || t->due < next_due ? t->due : next_due;
                continue;
            }
            buf_clear(&t->body);
            buf_clear(&resps[i].headers);
            t->at.over = 0;
            t->cerr[0] = '\0';
            resps[i].attempts++;
            setup_easy(t->e, o, &reqs[i], &t->p, &t->at, t->cerr);
            curl_easy_setopt(t->e, CURLOPT_PRIVATE, (void *)t);
            if (curl_multi_add_handle(m, t->e) != CURLM_OK) {
                char *ei = errs ? errs[i] : scratch;
                rcs[i] = rl_err(ei, RL_EIO, "%s %s: could not start the transfer", reqs[i].method, t->p.shown);
                t->state = 2;
                left--;
                continue;
            }
            t->state = 1;
            inflight++;
        }
        if (left == 0)
            break;
        int running = 0;
        curl_multi_perform(m, &running);
        CURLMsg *msg;
        int queued;
        while ((msg = curl_multi_info_read(m, &queued))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            CURL *e = msg->easy_handle;
            CURLcode cc = msg->data.result;
            xfer *t = NULL;
            curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&t);
            size_t i = (size_t)(t - x);
            char *ei = errs ? errs[i] : scratch;
            char why[192];
            int rc = 0;
            int verdict = judge(e, cc, &t->at, o, &reqs[i], t->p.shown, &resps[i].status, why, sizeof why, &rc, ei);
            curl_multi_remove_handle(m, e);
            inflight--;
            if (verdict == A_RETRY && resps[i].attempts <= o->retries) {
                long w = retry_wait(e, cc, o, t->wait);
                rl_logf(o->log, o->log_ctx, RL_LOG_WARN, "%s %s: %s, retry %d of %d in %ld ms", reqs[i].method,
                        t->p.shown, why, resps[i].attempts, o->retries, w);
                t->wait = next_backoff(o, t->wait);
                t->due = now_ms() + w;
                t->state = 0;
                continue;
            }
            resps[i].elapsed_ms = now_ms() - t->t0;
            rcs[i] = conclude(&resps[i], &t->body, verdict, rc, &reqs[i], t->p.shown, ei);
            t->state = 2;
            left--;
        }
        if (left == 0)
            break;
        /* sleep until a socket is ready, a transfer's timer fires or a
         * retry is due */
        long wait_ms = 1000;
        if (next_due >= 0 && inflight < max_inflight) {
            long d = next_due - now_ms();
            wait_ms = d < 0 ? 0 : d < wait_ms ? d : wait_ms;
        }
        if (inflight > 0) {
            long mt = -1;
            curl_multi_timeout(m, &mt);
            if (mt >= 0 && mt < wait_ms)
                wait_ms = mt;
            curl_multi_poll(m, NULL, 0, (int)wait_ms, NULL);
        } else if (wait_ms > 0) {
            sleep_ms(wait_ms);
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (x[i].state == 1)
            curl_multi_remove_handle(m, x[i].e);
        if (x[i].e)
            curl_easy_cleanup(x[i].e);
        curl_slist_free_all(x[i].p.hl);
        buf_dispose(&x[i].body);
    }
    free(x);
    return 0;
}

int http_response_header(const http_response *r, const char *name, char *out, size_t out_cap)
{
    size_t nl = strlen(name);
    const char *p = buf_str(&r->headers);
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        if (len > nl && strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
            const char *v = p + nl + 1;
            const char *end = p + len;
            while (v < end && (*v == ' ' || *v == '\t'))
                v++;
            while (end > v && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
                end--;
            size_t vl = (size_t)(end - v);
            if (out_cap) {
                size_t k = vl < out_cap - 1 ? vl : out_cap - 1;
                memcpy(out, v, k);
                out[k] = '\0';
            }
            return (int)vl;
        }
        if (!eol)
            break;
        p = eol + 1;
    }
    return -1;
}

void http_response_dispose(http_response *r)
{
    if (!r)
        return;
    free(r->body);
    r->body = NULL;
    r->body_len = 0;
    buf_dispose(&r->headers);
}
