/* buf.h - growable byte buffers with a hard cap.
 *
 * Every buffer that grows from untrusted input (agent text, tool output,
 * test output) is a buf_t with `max` set: appends past the cap fail with
 * RL_ELIMIT instead of growing without bound. The data is always
 * NUL-terminated so it can be used as a C string.
 *
 * buf_ht_t keeps the head and the tail of a stream that may be far larger
 * than its cap (command output): the first `head_max` bytes and the last
 * `tail_max` bytes, and counts what fell in between.
 */
#ifndef RL_BUF_H
#define RL_BUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct buf {
    char *data;   /* NUL-terminated; NULL until the first append */
    size_t len;
    size_t alloc;
    size_t max;   /* cap on len; 0 means RL_BUF_DEFAULT_MAX */
} buf_t;

void buf_init(buf_t *b, size_t max);
void buf_dispose(buf_t *b);
void buf_clear(buf_t *b);
/* Returns 0, RL_ELIMIT (nothing appended) or RL_ENOMEM. */
int buf_append(buf_t *b, const void *data, size_t n);
int buf_puts(buf_t *b, const char *s);
int buf_putc(buf_t *b, char c);
int buf_printf(buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int buf_vprintf(buf_t *b, const char *fmt, va_list ap);
/* Appends as much as fits; returns the number of bytes dropped. */
size_t buf_append_trunc(buf_t *b, const void *data, size_t n);
/* Hands the data to the caller (never NULL: "" for an empty buffer). */
char *buf_detach(buf_t *b, size_t *len);
/* A NUL-terminated view ("" when empty). */
const char *buf_str(const buf_t *b);

typedef struct buf_ht {
    buf_t head;
    char *tail;        /* ring buffer of tail_max bytes */
    size_t tail_max;
    size_t tail_len;   /* bytes in the ring (<= tail_max) */
    size_t tail_pos;   /* next write position in the ring */
    size_t total;      /* every byte ever offered */
} buf_ht_t;

int buf_ht_init(buf_ht_t *h, size_t head_max, size_t tail_max);
void buf_ht_dispose(buf_ht_t *h);
void buf_ht_append(buf_ht_t *h, const void *data, size_t n);
/* Bytes dropped between head and tail. */
size_t buf_ht_cut(const buf_ht_t *h);
/* Head, then a marker line "\n[... N bytes cut ...]\n" if anything was cut,
 * then tail. Caller frees. */
char *buf_ht_render(const buf_ht_t *h, size_t *len);

/* Cuts text longer than max bytes, keeping head and tail halves and
 * inserting a marker that says how many bytes were cut. Returns a new
 * string (caller frees) or NULL on allocation failure. */
char *str_cut_middle(const char *s, size_t len, size_t max, size_t *out_len);

#endif
