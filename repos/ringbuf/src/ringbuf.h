/* ringbuf.h - a fixed-capacity byte ring buffer (FIFO) over caller storage.
 *
 * The buffer keeps the index of the oldest byte (head) and the number of
 * stored bytes (len), so full and empty are distinguishable without
 * wasting a slot. Nothing allocates; capacity is fixed at init.
 */
#ifndef RINGBUF_H
#define RINGBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ringbuf {
    uint8_t *buf;
    size_t cap;
    size_t head; /* index of the oldest byte */
    size_t len;  /* bytes stored */
} ringbuf;

/* cap must be at least 1. */
void rb_init(ringbuf *rb, uint8_t *storage, size_t cap);
void rb_clear(ringbuf *rb);
size_t rb_len(const ringbuf *rb);
size_t rb_space(const ringbuf *rb);
bool rb_is_empty(const ringbuf *rb);
bool rb_is_full(const ringbuf *rb);

/* One byte at a time: 0, or -1 when full (push) / empty (pop, peek). */
int rb_push(ringbuf *rb, uint8_t byte);
int rb_pop(ringbuf *rb, uint8_t *out);
/* The byte at position idx from the oldest (0 = next to pop). */
int rb_peek(const ringbuf *rb, size_t idx, uint8_t *out);
/* Pushes, dropping the oldest byte when full. Returns true if one was dropped. */
bool rb_push_overwrite(ringbuf *rb, uint8_t byte);

/* Bulk: copy as much as fits / is stored, return the count. */
size_t rb_write(ringbuf *rb, const uint8_t *data, size_t n);
size_t rb_read(ringbuf *rb, uint8_t *out, size_t n);
/* Like rb_read without consuming. */
size_t rb_copy_out(const ringbuf *rb, uint8_t *out, size_t n);
/* Drops up to n oldest bytes; returns how many were dropped. */
size_t rb_discard(ringbuf *rb, size_t n);
/* Position (from the oldest) of the first byte equal to b, or -1. */
long rb_find(const ringbuf *rb, uint8_t b);
/* Reads one line ending in '\n' (included) into out (size bytes with the
 * NUL); returns its length, 0 when no complete line is stored, -1 when
 * the line does not fit in out (nothing is consumed then). */
long rb_read_line(ringbuf *rb, char *out, size_t size);

#endif
