/* ringbuf.c - ring buffer operations. Bulk copies are split in at most
 * two memcpy calls: up to the end of the storage, then from its start. */
#include <string.h>

#include "ringbuf.h"

void rb_init(ringbuf *rb, uint8_t *storage, size_t cap)
{
    rb->buf = storage;
    rb->cap = cap;
    rb->head = 0;
    rb->len = 0;
}

void rb_clear(ringbuf *rb)
{
    rb->head = 0;
    rb->len = 0;
}

size_t rb_len(const ringbuf *rb) { return rb->len; }
size_t rb_space(const ringbuf *rb) { return rb->cap - rb->len; }
bool rb_is_empty(const ringbuf *rb) { return rb->len == 0; }
bool rb_is_full(const ringbuf *rb) { return rb->len == rb->cap; }

/* Storage index of logical position pos (0 = oldest byte). */
static size_t slot(const ringbuf *rb, size_t pos)
{
    return (rb->head + pos) % rb->cap;
}

int rb_push(ringbuf *rb, uint8_t byte)
{
    if (rb_is_full(rb))
        return -1;
    rb->buf[slot(rb, rb->len)] = byte;
    rb->len++;
    return 0;
}

int rb_pop(ringbuf *rb, uint8_t *out)
{
    if (rb_is_empty(rb))
        return -1;
    *out = rb->buf[rb->head];
    rb->head = slot(rb, 1);
    rb->len--;
    return 0;
}

int rb_peek(const ringbuf *rb, size_t idx, uint8_t *out)
{
    if (idx >= rb->len)
        return -1;
    *out = rb->buf[slot(rb, idx)];
    return 0;
}

bool rb_push_overwrite(ringbuf *rb, uint8_t byte)
{
    bool dropped = false;
    if (rb_is_full(rb)) {
        uint8_t old;
        rb_pop(rb, &old);
        dropped = true;
    }
    rb_push(rb, byte);
    return dropped;
}

size_t rb_write(ringbuf *rb, const uint8_t *data, size_t n)
{
    if (n > rb_space(rb))
        n = rb_space(rb);
    if (n == 0)
        return 0;
    size_t tail = slot(rb, rb->len);
    size_t first = rb->cap - tail; /* room before the end of storage */
    if (first > n)
        first = n;
    memcpy(rb->buf + tail, data, first);
    memcpy(rb->buf, data + first, n - first);
    rb->len += n;
    return n;
}

size_t rb_copy_out(const ringbuf *rb, uint8_t *out, size_t n)
{
    if (n > rb->len)
        n = rb->len;
    size_t first = rb->cap - rb->head;
    if (first > n)
        first = n;
    memcpy(out, rb->buf + rb->head, first);
    memcpy(out + first, rb->buf, n - first);
    return n;
}

size_t rb_discard(ringbuf *rb, size_t n)
{
    if (n > rb->len)
        n = rb->len;
    if (n == 0)
        return 0;
    rb->head = slot(rb, n);
    rb->len -= n;
    return n;
}

size_t rb_read(ringbuf *rb, uint8_t *out, size_t n)
{
    n = rb_copy_out(rb, out, n);
    return rb_discard(rb, n);
}

long rb_find(const ringbuf *rb, uint8_t b)
{
    for (size_t i = 0; i < rb->len; i++) {
        if (rb->buf[slot(rb, i)] == b)
            return (long)i;
    }
    return -1;
}

long rb_read_line(ringbuf *rb, char *out, size_t size)
{
    long nl = rb_find(rb, '\n');
    if (nl < 0)
        return 0;
    size_t n = (size_t)nl + 1;
    if (n + 1 > size)
        return -1;
    rb_read(rb, (uint8_t *)out, n);
    out[n] = '\0';
    return (long)n;
}
