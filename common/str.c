/* str.c - prefix and suffix tests, bounded copy and format. */
#include "common/str.h"

#include "common/err.h"

#include <stdio.h>
#include <string.h>

int str_has_prefix(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

int str_has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !memcmp(s + n - m, suffix, m);
}

int str_copy(char *dst, size_t n, const char *src)
{
    size_t len = strlen(src);
    if (len < n) {
        memcpy(dst, src, len + 1);
        return 0;
    }
    memcpy(dst, src, n - 1);
    dst[n - 1] = 0;
    return RL_ELIMIT;
}

int str_vfmt(char *dst, size_t n, const char *fmt, va_list ap)
{
    int k = vsnprintf(dst, n, fmt, ap);
    if (k < 0) {
        dst[0] = 0;
        return RL_EINVAL;
    }
    return (size_t)k < n ? 0 : RL_ELIMIT;
}

int str_fmt(char *dst, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = str_vfmt(dst, n, fmt, ap);
    va_end(ap);
    return rc;
}
