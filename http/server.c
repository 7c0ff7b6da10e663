/* server.c - the HTTP server of http.h on libmicrohttpd.
 *
 * libmicrohttpd runs one thread per connection (a handler may take long:
 * a model generating, a test suite running) and parses the requests; this
 * file gathers each request's body under its cap and turns the handler's
 * reply into a response. The listening socket is made here, so that a
 * failed bind reports its reason.
 */
#include "http/http.h"

#include "common/err.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct http_server {
    struct MHD_Daemon *d;
    http_server_opts o;
    int port;
};

/* One request in progress. */
typedef struct conn_state {
    buf_t body;
    int too_large;   /* over the cap: the rest is dropped, the answer is 413 */
    int answered;
    size_t dropped;
} conn_state;

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    const http_server_opts *o = cls;
    char line[RL_ERR_MAX];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
    o->log(o->log_ctx, RL_LOG_WARN, line);
}

void http_server_opts_default(http_server_opts *o)
{
    memset(o, 0, sizeof *o);
    o->host = "127.0.0.1";
    o->port = 0;
    o->body_max = HTTP_SERVER_BODY_MAX_DEFAULT;
    o->max_conns = HTTP_SERVER_CONNS_DEFAULT;
    o->idle_timeout_s = HTTP_SERVER_IDLE_TIMEOUT_S_DEFAULT;
}

/* ---- requests and replies ---------------------------------------------- */

const char *http_server_req_header(const http_server_req *r, const char *name)
{
    return MHD_lookup_connection_value(r->conn_, MHD_HEADER_KIND, name);
}

const char *http_server_req_query(const http_server_req *r, const char *name)
{
    return MHD_lookup_connection_value(r->conn_, MHD_GET_ARGUMENT_KIND, name);
}

int http_server_req_bearer_ok(const http_server_req *r, const char *token)
{
    if (!token)
        return 1;
    const char *h = http_server_req_header(r, "Authorization");
    if (!h || strncmp(h, "Bearer ", 7))
        return 0;
    h += 7;
    size_t a = strlen(h), b = strlen(token);
    unsigned char d = a != b;
    for (size_t i = 0; i < b; i++)
        d |= (unsigned char)(h[i < a ? i : 0] ^ token[i]);
    return d == 0;
}

int http_reply(http_server_resp *r, int status, const char *content_type, const void *body,
               size_t len)
{
    if (status < 100 || status > 599)
        return RL_EINVAL;
    if (!content_type)
        content_type = "";
    if (strlen(content_type) >= sizeof r->content_type || strpbrk(content_type, "\r\n"))
        return RL_EINVAL;
    char *copy = malloc(len ? len : 1);
    if (!copy)
        return RL_ENOMEM;
    if (len)
        memcpy(copy, body, len);
    free(r->body);
    r->body = copy;
    r->body_len = len;
    r->status = status;
    snprintf(r->content_type, sizeof r->content_type, "%s", content_type);
    return 0;
}

int http_reply_stream(http_server_resp *r, int status, const char *content_type, http_stream_fn next,
                      http_stream_done_fn done, void *ctx)
{
    int rc = http_reply(r, status, content_type, NULL, 0);
    if (rc < 0)
        return rc;
    r->stream = next;
    r->stream_done = done;
    r->stream_ctx = ctx;
    return 0;
}

int http_reply_header(http_server_resp *r, const char *name, const char *value)
{
    size_t nl = strlen(name), vl = strlen(value);
    if (nl == 0 || nl + vl + 2 > HTTP_HEADER_LINE_MAX || strpbrk(value, "\r\n"))
        return RL_EINVAL;
    for (const char *p = name; *p; p++)
        if (*p <= 32 || *p >= 127 || strchr("()<>@,;:\\\"/[]?={}", *p))
            return RL_EINVAL;
    if (r->n_headers >= HTTP_SERVER_RESP_HEADERS_MAX)
        return RL_ELIMIT;
    char *h = malloc(nl + vl + 2);
    if (!h)
        return RL_ENOMEM;
    memcpy(h, name, nl + 1);
    memcpy(h + nl + 1, value, vl + 1);
    r->headers[r->n_headers++] = h;
    return 0;
}

int http_json_str(buf_t *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    int rc = buf_putc(b, '"');
    size_t run = 0; /* bytes copied as they are, appended in one go */
    for (size_t i = 0; i < n && rc == 0; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        rc = buf_append(b, s + run, i - run);
        run = i + 1;
        char esc[6] = {'\\', (char)c, 0, 0, 0, 0};
        size_t el = 2;
        switch (c) {
        case '"': case '\\': break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        default:
            memcpy(esc + 1, "u00", 3);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            el = 6;
        }
        if (rc == 0)
            rc = buf_append(b, esc, el);
    }
    if (rc == 0)
        rc = buf_append(b, s + run, n - run);
    return rc ? rc : buf_putc(b, '"');
}

int http_reply_error(http_server_resp *r, int status, const char *param, const char *code, const char *fmt, ...)
{
    char msg[RL_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *type = status == 401   ? "authentication_error"
                       : status == 404 ? "not_found_error"
                       : status == 409 ? "conflict_error"
                       : status == 429 ? "rate_limit_error"
                       : status >= 500 ? "server_error"
                                       : "invalid_request_error";
    buf_t b;
    buf_init(&b, 0);
    int rc = buf_puts(&b, "{\"error\":{\"message\":");
    if (rc == 0)
        rc = http_json_str(&b, msg, strlen(msg));
    if (rc == 0)
        rc = buf_printf(&b, ",\"type\":\"%s\",\"param\":", type);
    if (rc == 0)
        rc = param ? http_json_str(&b, param, strlen(param)) : buf_puts(&b, "null");
    if (rc == 0)
        rc = buf_puts(&b, ",\"code\":");
    if (rc == 0)
        rc = code ? http_json_str(&b, code, strlen(code)) : buf_puts(&b, "null");
    if (rc == 0)
        rc = buf_puts(&b, "}}");
    if (rc == 0 && status == 429)
        rc = http_reply_header(r, "Retry-After", "1");
    if (rc == 0)
        rc = http_reply(r, status, "application/json", b.data, b.len);
    buf_dispose(&b);
    return rc;
}

/* A streamed body: the handler's callbacks behind libmicrohttpd's. */
typedef struct stream_state {
    http_stream_fn next;
    http_stream_done_fn done;
    void *ctx;
} stream_state;

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    stream_state *st = cls;
    long n = st->next(st->ctx, buf, max);
    if (n > 0)
        return (ssize_t)n;
    return n == 0 ? MHD_CONTENT_READER_END_OF_STREAM : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void stream_free(void *cls)
{
    stream_state *st = cls;
    if (st->done)
        st->done(st->ctx);
    free(st);
}

static void resp_dispose(http_server_resp *r)
{
    if (r->stream && r->stream_done) /* never handed to libmicrohttpd */
        r->stream_done(r->stream_ctx);
    r->stream = NULL;
    free(r->body);
    for (int i = 0; i < r->n_headers; i++)
        free(r->headers[i]);
}

/* ---- the libmicrohttpd callbacks --------------------------------------- */

/* The server's own JSON error answers. */
static enum MHD_Result answer_error(struct MHD_Connection *conn, unsigned status, const char *type,
                                    const char *message)
{
    char body[512];
    int n = snprintf(body, sizeof body, "{\"error\": {\"message\": \"%s\", \"type\": \"%s\"}}",
                     message, type);
    struct MHD_Response *r =
        MHD_create_response_from_buffer((size_t)n, body, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    enum MHD_Result ok = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result answer_too_large(struct MHD_Connection *conn, const http_server *s)
{
    char msg[128];
    snprintf(msg, sizeof msg, "request body over the cap of %zu bytes", s->o.body_max);
    return answer_error(conn, MHD_HTTP_CONTENT_TOO_LARGE, "request_too_large", msg);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    http_server *s = cls;
    conn_state *st = *con_cls;
    if (!st) {
        st = calloc(1, sizeof *st);
        if (!st)
            return MHD_NO;
        buf_init(&st->body, s->o.body_max);
        *con_cls = st;
        const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                                     MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl) {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(cl, &end, 10);
            if (errno == 0 && end != cl && v > s->o.body_max) {
                st->too_large = 1;
                if (v - s->o.body_max > HTTP_SERVER_DRAIN_MAX) {
                    st->answered = 1;
                    return answer_too_large(conn, s);
                }
            }
        }
        return MHD_YES;
    }
    if (*upload_data_size) {
        if (!st->too_large) {
            int rc = buf_append(&st->body, upload_data, *upload_data_size);
            if (rc == RL_ENOMEM)
                return MHD_NO;
            if (rc == RL_ELIMIT)
                st->too_large = 1;
        }
        if (st->too_large) {
            st->dropped += *upload_data_size;
            /* libmicrohttpd cannot answer in the middle of an upload:
             * past the drain bound the connection is closed. The bound
             * counts from the cap: a body refused by its Content-Length
             * alone has nothing buffered, all of it is dropped. */
            size_t allow = HTTP_SERVER_DRAIN_MAX + (st->body.len ? 0 : s->o.body_max);
            if (st->dropped > allow) {
                rl_logf(s->o.log, s->o.log_ctx, RL_LOG_WARN, "%s %s: request body over %zu bytes, connection closed",
                        method, url, s->o.body_max + HTTP_SERVER_DRAIN_MAX);
                return MHD_NO;
            }
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (st->answered)
        return MHD_YES;
    if (st->too_large) {
        st->answered = 1;
        return answer_too_large(conn, s);
    }

    http_server_req req = {
        .method = method,
        .path = url,
        .version = version,
        .body = buf_str(&st->body),
        .body_len = st->body.len,
        .conn_ = conn,
    };
    http_server_resp out;
    memset(&out, 0, sizeof out);
    char err[RL_ERR_MAX] = "";
    int rc = s->o.handler(s->o.ctx, &req, &out, err);
    enum MHD_Result ok;
    if (rc < 0 || out.status == 0) {
        if (rc < 0)
            rl_logf(s->o.log, s->o.log_ctx, RL_LOG_ERROR, "%s %s: handler failed: %s", method, url, err[0] ? err : rl_strerror(rc));
        else
            rl_logf(s->o.log, s->o.log_ctx, RL_LOG_ERROR, "%s %s: handler set no reply", method, url);
        resp_dispose(&out);
        return answer_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal_error",
                            "the handler failed");
    }
    struct MHD_Response *r;
    if (out.stream) {
        stream_state *ss = malloc(sizeof *ss);
        r = NULL;
        if (ss) {
            *ss = (stream_state){out.stream, out.stream_done, out.stream_ctx};
            r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, HTTP_SERVER_STREAM_BLOCK, stream_read, ss,
                                                  stream_free);
            if (r)
                out.stream = NULL; /* stream_free calls done from now on */
            else
                free(ss);
        }
    } else if (out.body_len) {
        r = MHD_create_response_from_buffer(out.body_len, out.body, MHD_RESPMEM_MUST_FREE);
        if (r)
            out.body = NULL; /* the response owns it */
    } else {
        r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    }
    if (!r) {
        resp_dispose(&out);
        return MHD_NO;
    }
    if (out.content_type[0])
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, out.content_type);
    for (int i = 0; i < out.n_headers; i++) {
        const char *name = out.headers[i];
        MHD_add_response_header(r, name, name + strlen(name) + 1);
    }
    ok = MHD_queue_response(conn, (unsigned)out.status, r);
    MHD_destroy_response(r);
    resp_dispose(&out);
    return ok;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    conn_state *st = *con_cls;
    if (st) {
        buf_dispose(&st->body);
        free(st);
        *con_cls = NULL;
    }
}

/* ---- start and stop ------------------------------------------------------ */

/* A listening socket on host:port; *v6 tells libmicrohttpd the family. */
static int listen_on(const http_server_opts *o, int *fd_out, int *v6, char *err)
{
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    char port[16];
    snprintf(port, sizeof port, "%d", o->port);
    int g = getaddrinfo(o->host, port, &hints, &ai);
    if (g != 0)
        return rl_err(err, RL_EINVAL, "http server: host %s: expected an address or a host name (%s)",
                      o->host, gai_strerror(g));
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        int e = errno;
        freeaddrinfo(ai);
        return rl_err(err, rl_from_errno(e), "http server: socket: %s", strerror(e));
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    *v6 = ai->ai_family == AF_INET6;
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, HTTP_SERVER_BACKLOG) != 0) {
        int e = errno;
        close(fd);
        freeaddrinfo(ai);
        return rl_err(err, RL_EIO, "http server: cannot listen on %s port %d: %s", o->host, o->port,
                      strerror(e));
    }
    freeaddrinfo(ai);
    *fd_out = fd;
    return 0;
}

static int bound_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
        return -1;
    if (ss.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

int http_server_new(http_server **out, const http_server_opts *o, char *err)
{
    *out = NULL;
    if (!o->handler)
        return rl_err(err, RL_EINVAL, "http server: expected a handler");
    if (!o->host || !*o->host)
        return rl_err(err, RL_EINVAL, "http server: expected a host to listen on");
    if (o->port < 0 || o->port > 65535)
        return rl_err(err, RL_EINVAL, "http server: port %d: expected 0..65535", o->port);
    if (o->body_max < 1 || o->body_max > HTTP_SERVER_BODY_MAX_HARD)
        return rl_err(err, RL_EINVAL, "http server: body_max %zu: expected 1..%u", o->body_max,
                      HTTP_SERVER_BODY_MAX_HARD);
    if (o->max_conns < 1 || o->max_conns > HTTP_SERVER_CONNS_HARD)
        return rl_err(err, RL_EINVAL, "http server: max_conns %u: expected 1..%d", o->max_conns,
                      HTTP_SERVER_CONNS_HARD);
    if (o->idle_timeout_s < 1 || o->idle_timeout_s > HTTP_SERVER_IDLE_TIMEOUT_S_HARD)
        return rl_err(err, RL_EINVAL, "http server: idle_timeout_s %u: expected 1..%d",
                      o->idle_timeout_s, HTTP_SERVER_IDLE_TIMEOUT_S_HARD);

    http_server *s = calloc(1, sizeof *s);
    if (!s)
        return rl_err(err, RL_ENOMEM, "http server: out of memory");
    s->o = *o;
    int fd = -1, v6 = 0;
    int rc = listen_on(o, &fd, &v6, err);
    if (rc < 0) {
        free(s);
        return rc;
    }
    s->port = bound_port(fd);

    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                     MHD_USE_AUTO | MHD_USE_ITC;
    if (v6)
        flags |= MHD_USE_IPv6;
    if (o->log)
        flags |= MHD_USE_ERROR_LOG;
    /* The logger first, so that start-up messages reach it too. */
    s->d = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, s,
        MHD_OPTION_EXTERNAL_LOGGER, mhd_log, (void *)&s->o,
        MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, (void *)s,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)o->max_conns,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)o->idle_timeout_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_SERVER_CONN_MEMORY,
        MHD_OPTION_END);
    if (!s->d) {
        int e = errno; /* the socket was handed to libmicrohttpd: not closed here */
        free(s);
        return rl_err(err, RL_EIO, "http server: libmicrohttpd did not start on %s port %d%s%s",
                      o->host, o->port, e ? ": " : "", e ? strerror(e) : "");
    }
    *out = s;
    return 0;
}

int http_server_port(const http_server *s)
{
    return s->port;
}

void http_server_free(http_server *s)
{
    if (!s)
        return;
    if (s->d)
        MHD_stop_daemon(s->d);
    free(s);
}
