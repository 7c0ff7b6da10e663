#include "common/buf.h"

#include "common/err.h"
#include "common/limits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_init(buf_t *b, size_t max)
{
    b->data = NULL;
    b->len = b->alloc = 0;
    b->max = max ? max : RL_BUF_DEFAULT_MAX;
}

void buf_dispose(buf_t *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->alloc = 0;
}

void buf_clear(buf_t *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

static int buf_reserve(buf_t *b, size_t extra)
{
    size_t need = b->len + extra + 1;
    if (need <= b->alloc)
        return 0;
    size_t n = b->alloc ? b->alloc : 64;
    while (n < need)
        n *= 2;
    char *p = realloc(b->data, n);
    if (!p)
        return RL_ENOMEM;
    b->data = p;
    b->alloc = n;
    return 0;
}

int buf_append(buf_t *b, const void *data, size_t n)
{
    if (n > b->max || b->len > b->max - n)
        return RL_ELIMIT;
    if (buf_reserve(b, n))
        return RL_ENOMEM;
    if (n)
        memcpy(b->data + b->len, data, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

size_t buf_append_trunc(buf_t *b, const void *data, size_t n)
{
    size_t room = b->max > b->len ? b->max - b->len : 0;
    size_t take = n < room ? n : room;
    if (take && buf_append(b, data, take))
        return n;
    return n - take;
}

int buf_puts(buf_t *b, const char *s) { return buf_append(b, s, strlen(s)); }

int buf_putc(buf_t *b, char c) { return buf_append(b, &c, 1); }

int buf_vprintf(buf_t *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return RL_EINVAL;
    if ((size_t)n > b->max || b->len > b->max - (size_t)n)
        return RL_ELIMIT;
    if (buf_reserve(b, (size_t)n))
        return RL_ENOMEM;
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
    return 0;
}

int buf_printf(buf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = buf_vprintf(b, fmt, ap);
    va_end(ap);
    return rc;
}

char *buf_detach(buf_t *b, size_t *len)
{
    char *p = b->data;
    if (!p)
        p = calloc(1, 1);
    if (len)
        *len = b->len;
    b->data = NULL;
    b->len = b->alloc = 0;
    return p;
}

const char *buf_str(const buf_t *b) { return b->data ? b->data : ""; }

int buf_ht_init(buf_ht_t *h, size_t head_max, size_t tail_max)
{
    memset(h, 0, sizeof *h);
    buf_init(&h->head, head_max ? head_max : 1);
    h->tail_max = tail_max;
    if (tail_max) {
        h->tail = malloc(tail_max);
        if (!h->tail)
            return RL_ENOMEM;
    }
    return 0;
}

void buf_ht_dispose(buf_ht_t *h)
{
    buf_dispose(&h->head);
    free(h->tail);
    h->tail = NULL;
}

void buf_ht_append(buf_ht_t *h, const void *data, size_t n)
{
    const char *p = data;
    h->total += n;
    size_t room = h->head.max - h->head.len;
    size_t take = n < room ? n : room;
    if (take) {
        buf_append(&h->head, p, take);
        p += take;
        n -= take;
    }
    if (!n || !h->tail_max)
        return;
    if (n >= h->tail_max) { /* only the last tail_max bytes matter */
        p += n - h->tail_max;
        n = h->tail_max;
    }
    for (size_t i = 0; i < n; i++) {
        h->tail[h->tail_pos] = p[i];
        h->tail_pos = (h->tail_pos + 1) % h->tail_max;
    }
    h->tail_len = h->tail_len + n > h->tail_max ? h->tail_max : h->tail_len + n;
}

size_t buf_ht_cut(const buf_ht_t *h) { return h->total - h->head.len - h->tail_len; }

char *buf_ht_render(const buf_ht_t *h, size_t *len)
{
    char marker[80] = "";
    size_t cut = buf_ht_cut(h);
    if (cut)
        snprintf(marker, sizeof marker, "\n[... %zu bytes cut ...]\n", cut);
    size_t ml = strlen(marker);
    size_t n = h->head.len + ml + h->tail_len;
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    memcpy(out, buf_str(&h->head), h->head.len);
    memcpy(out + h->head.len, marker, ml);
    size_t start = (h->tail_pos + h->tail_max - h->tail_len) % (h->tail_max ? h->tail_max : 1);
    for (size_t i = 0; i < h->tail_len; i++)
        out[h->head.len + ml + i] = h->tail[(start + i) % h->tail_max];
    out[n] = '\0';
    if (len)
        *len = n;
    return out;
}

char *str_cut_middle(const char *s, size_t len, size_t max, size_t *out_len)
{
    buf_ht_t h;
    size_t head = max / 2, tail = max - max / 2;
    if (buf_ht_init(&h, head ? head : 1, tail)) {
        buf_ht_dispose(&h);
        return NULL;
    }
    buf_ht_append(&h, s, len);
    char *out = buf_ht_render(&h, out_len);
    buf_ht_dispose(&h);
    return out;
}
