/* http.h - an HTTP client (libcurl) and an HTTP server (libmicrohttpd).
 *
 * The client sends one request at a time and waits for the whole
 * response: status, headers and a body capped at opts.body_max (a larger
 * body is an error naming the URL and the cap, never a truncated
 * success). Refused or dropped connections, timeouts, 429 and 5xx are
 * retried opts.retries times, waiting opts.backoff_ms, then twice as long
 * each time (up to opts.backoff_max_ms; a Retry-After header may ask for
 * longer, within the same max). Redirects are not followed; only http and
 * https are spoken; loopback addresses never go through a proxy.
 *
 *   http_client *c;
 *   http_client_opts o;
 *   http_client_opts_default(&o);
 *   if (http_client_new(&c, &o, err) < 0) return ...;
 *   const char *hdr[] = {"Authorization: Bearer sk-...", NULL};
 *   http_request rq = {.method = "POST", .url = "http://127.0.0.1:8000/v1/completions",
 *                      .headers = hdr, .content_type = "application/json",
 *                      .body = json, .body_len = strlen(json)};
 *   http_response rs;
 *   if (http_client_request(c, &rs, &rq, err) == 0 && rs.status == 200) use(rs.body);
 *   http_response_dispose(&rs);
 *   http_client_free(c);
 *
 * Error messages name the method and the URL without its user info and
 * query (they may hold credentials); header values never appear in them.
 * A client is used by one thread at a time; it keeps its connections open
 * between requests. http_client_many keeps several requests in flight at
 * once on the calling thread, for a batch of model calls.
 *
 * The server listens on one address, runs each connection in a thread of
 * its own and calls the handler once per request with the whole body
 * (capped at opts.body_max: a larger body gets 413 and the handler is
 * not called; one sent in chunks more than HTTP_SERVER_DRAIN_MAX past the
 * cap has its connection closed instead). The handler answers through http_reply() and
 * http_reply_header(). The server's own answers (413, and 500 when the
 * handler fails or sets nothing) are JSON in the OpenAI error shape:
 *   {"error": {"message": "...", "type": "..."}}
 * Malformed requests are answered 4xx, or their connection closed, by
 * libmicrohttpd; they never reach the handler. Neither side prints: messages go to opts.log when set.
 */
#ifndef RL_HTTP_H
#define RL_HTTP_H

#include "common/buf.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/log.h"

#include <stddef.h>

/* ---- client ---------------------------------------------------------- */

typedef struct http_client_opts {
    long connect_timeout_ms;  /* per attempt */
    long timeout_ms;          /* per attempt, connect to last byte */
    size_t body_max;          /* response body cap */
    int retries;              /* extra attempts (0: one attempt only) */
    long backoff_ms;          /* wait before the first retry */
    long backoff_max_ms;      /* cap of every wait */
    const char *user_agent;   /* NULL: "rl-fix" */
    rl_log_fn log;            /* one line per retry; NULL: silent */
    void *log_ctx;
} http_client_opts;

/* Fills the defaults from common/limits.h. */
void http_client_opts_default(http_client_opts *o);

typedef struct http_client http_client;

/* Checks the options against the hard caps. */
int http_client_new(http_client **c, const http_client_opts *o, char *err);
void http_client_free(http_client *c);

typedef struct http_request {
    const char *method;               /* "GET", "POST", ... */
    const char *url;                  /* http:// or https:// */
    const char *const *headers;       /* "Name: value" lines, NULL-terminated,
                                         may be NULL */
    const char *content_type;         /* sent with the body; NULL: none */
    const char *body;                 /* may be NULL */
    size_t body_len;
} http_request;

typedef struct http_response {
    long status;        /* HTTP status of the last attempt */
    char *body;         /* NUL-terminated, never NULL after success */
    size_t body_len;
    int attempts;       /* 1 + retries made */
    long elapsed_ms;    /* all attempts and waits */
    buf_t headers;      /* the last response's header lines, raw */
} http_response;

/* Sends the request, retrying as the options say. Returns 0 once a whole
 * response arrived, whatever its status (after the last retry, a 429 or
 * 5xx is returned as such); else RL_EIO (connection refused, dropped,
 * host not found), RL_ETIMEOUT, RL_ELIMIT (response body over the cap)
 * or RL_EINVAL (bad method, URL or header). resp is initialised in every
 * case: dispose it. */
int http_client_request(http_client *c, http_response *resp, const http_request *req,
                        char *err);

/* Runs reqs[0..n) on the calling thread with at most max_inflight of them
 * open at once (libcurl's multi interface: one event loop, no thread per
 * request), each with the client's timeouts, caps and retry rules (a
 * request waiting for its retry leaves its place to the next one). Every
 * request gets its own outcome: rcs[i] as http_client_request would
 * return it, errs[i] its one-line error (errs may be NULL), resps[i]
 * initialised in every case (dispose each). Returns 0, or RL_EINVAL /
 * RL_ELIMIT for max_inflight outside 1..HTTP_MANY_INFLIGHT_MAX or more
 * than HTTP_MANY_REQUESTS_MAX requests (then nothing was sent and resps
 * are untouched). */
int http_client_many(http_client *c, http_response *resps, int *rcs, char (*errs)[RL_ERR_MAX],
                     const http_request *reqs, size_t n, int max_inflight, char *err);

/* The value of a response header (case-insensitive name), copied into out
 * with surrounding blanks trimmed. Returns its length, or -1 if absent.
 * Values longer than out_cap - 1 are cut. */
int http_response_header(const http_response *r, const char *name, char *out, size_t out_cap);

void http_response_dispose(http_response *r);

/* ---- server ---------------------------------------------------------- */

typedef struct http_server_req {
    const char *method;
    const char *path;       /* URL path, percent-decoded, without the query */
    const char *version;    /* "HTTP/1.1" */
    const char *body;       /* NUL-terminated ("" when none) */
    size_t body_len;
    void *conn_;            /* the connection, for the lookups below;
                               every field is valid during the handler call only */
} http_server_req;

/* A request header (case-insensitive name) or NULL. */
const char *http_server_req_header(const http_server_req *r, const char *name);
/* A query argument, percent-decoded, or NULL. */
const char *http_server_req_query(const http_server_req *r, const char *name);
/* 1 when token is NULL (no token configured) or the request carries
 * "Authorization: Bearer TOKEN" with exactly that token, compared in time
 * that does not depend on where the two first differ; else 0. */
int http_server_req_bearer_ok(const http_server_req *r, const char *token);

/* A streamed body (server-sent events): next(ctx, buf, max) is called
 * from the connection's thread for the next bytes and may block until it
 * has some; it returns how many it wrote (1..max), 0 at the end, or -1 to
 * cut the connection. done(ctx) is called once, when the answer is over
 * or the client left, and never while next runs. */
typedef long (*http_stream_fn)(void *ctx, char *buf, size_t max);
typedef void (*http_stream_done_fn)(void *ctx);

typedef struct http_server_resp {
    int status;                                  /* 0 until http_reply */
    char content_type[HTTP_CONTENT_TYPE_MAX];
    char *body;
    size_t body_len;
    int n_headers;
    char *headers[HTTP_SERVER_RESP_HEADERS_MAX]; /* "Name\0value" */
    http_stream_fn stream;                       /* set by http_reply_stream */
    http_stream_done_fn stream_done;
    void *stream_ctx;
} http_server_resp;

/* Sets the answer; the body is copied. Calling it again replaces it.
 * RL_EINVAL for a status outside 100..599 or a content type with line
 * breaks or over HTTP_CONTENT_TYPE_MAX. */
int http_reply(http_server_resp *r, int status, const char *content_type, const void *body,
               size_t len);
/* Sets a streamed answer (chunked transfer encoding): the body comes
 * from next, as described at http_stream_fn. done is called in every
 * case once this returned 0, also when the server cannot send the
 * answer. RL_EINVAL as http_reply. */
int http_reply_stream(http_server_resp *r, int status, const char *content_type, http_stream_fn next,
                      http_stream_done_fn done, void *ctx);
/* Adds a header to the answer. RL_EINVAL for line breaks in either part, a
 * name with ':' or blanks, or over HTTP_HEADER_LINE_MAX; RL_ELIMIT past
 * HTTP_SERVER_RESP_HEADERS_MAX. */
int http_reply_header(http_server_resp *r, const char *name, const char *value);

/* Appends s[0..n) to b as a JSON string literal, quotes included, escaped
 * byte for byte as cJSON_PrintUnformatted escapes: '"', '\\', \b \f \n
 * \r \t, the other bytes below 0x20 as \u00XX, every other byte as it
 * is (the caller makes the text valid UTF-8). RL_ELIMIT past b's cap,
 * RL_ENOMEM. */
int http_json_str(buf_t *b, const char *s, size_t n);

/* Sets an error answer in the OpenAI shape, as one line of JSON:
 *   {"error":{"message":MSG,"type":TYPE,"param":PARAM|null,"code":CODE|null}}
 * MSG is printf-formatted (cut at RL_ERR_MAX); TYPE follows the status:
 * 401 authentication_error, 404 not_found_error, 409 conflict_error, 429
 * rate_limit_error (with a Retry-After: 1 header), 5xx server_error, any
 * other invalid_request_error. param and code may be NULL. Returns
 * http_reply's code. */
int http_reply_error(http_server_resp *r, int status, const char *param, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Called once per request with a complete body, from the connection's
 * thread (several run at once: the handler must be thread-safe). Returns
 * 0; a negative code (with a line in err) makes the server answer 500,
 * as does returning without a reply. */
typedef int (*http_handler_fn)(void *ctx, const http_server_req *req, http_server_resp *resp,
                               char *err);

typedef struct http_server_opts {
    const char *host;          /* address or host name to listen on */
    int port;                  /* 0: any free port */
    size_t body_max;           /* request body cap */
    unsigned max_conns;        /* connections at once; more are closed */
    unsigned idle_timeout_s;   /* close a connection silent this long */
    http_handler_fn handler;
    void *ctx;
    rl_log_fn log;             /* libmicrohttpd's messages, handler
                                  failures; NULL: silent */
    void *log_ctx;
} http_server_opts;

/* host "127.0.0.1", port 0, caps from common/limits.h, no handler. */
void http_server_opts_default(http_server_opts *o);

typedef struct http_server http_server;

/* Binds, listens and starts serving. RL_EINVAL for bad options, RL_EIO
 * when the address cannot be bound (in use, not local, no permission). */
int http_server_new(http_server **s, const http_server_opts *o, char *err);
/* The port the server listens on (the one chosen when opts.port was 0). */
int http_server_port(const http_server *s);
/* Stops accepting, waits for the handlers running to return, closes
 * every connection and frees the server. */
void http_server_free(http_server *s);

#endif
