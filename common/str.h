/* str.h - small string helpers: prefix and suffix tests, bounded copy
 * and format.
 *
 * The bounded forms always NUL-terminate and say when the text did not
 * fit, so a truncated path or name is an error instead of a wrong value.
 */
#ifndef RL_STR_H
#define RL_STR_H

#include <stdarg.h>
#include <stddef.h>

/* 1 when s starts with prefix (every string starts with ""), else 0. */
int str_has_prefix(const char *s, const char *prefix);
/* 1 when s ends with suffix (every string ends with ""), else 0. */
int str_has_suffix(const char *s, const char *suffix);

/* Copies src into dst (n bytes, n > 0). Returns 0, or RL_ELIMIT when src
 * was cut to fit (dst then holds the first n - 1 bytes). */
int str_copy(char *dst, size_t n, const char *src);
/* snprintf into dst (n bytes, n > 0). Returns 0, or RL_ELIMIT when the
 * text was cut to fit, RL_EINVAL on a format error. */
int str_fmt(char *dst, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int str_vfmt(char *dst, size_t n, const char *fmt, va_list ap);

#endif
