/* strutil.c - predicates, case, trimming and bounded string building. */
#include <ctype.h>
#include <string.h>

#include "strutil.h"

bool str_starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool str_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    if (m > n)
        return false;
    return memcmp(s + n - m, suffix, m) == 0;
}

char *str_trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    s[n] = '\0';
    return s;
}

void str_to_upper(char *s)
{
    for (; *s; s++)
        *s = (char)toupper((unsigned char)*s);
}

void str_to_lower(char *s)
{
    for (; *s; s++)
        *s = (char)tolower((unsigned char)*s);
}

int str_icmp(const char *a, const char *b)
{
    for (;; a++, b++) {
        int x = tolower((unsigned char)*a), y = tolower((unsigned char)*b);
        if (x != y || x == 0)
            return x - y;
    }
}

size_t str_count(const char *s, const char *needle)
{
    size_t k = strlen(needle), count = 0;
    if (k == 0)
        return 0;
    for (const char *p = strstr(s, needle); p; p = strstr(p + k, needle))
        count++;
    return count;
}

int str_append(char *out, size_t size, size_t *len, const char *text, size_t n)
{
    /* room for the text and the terminating NUL */
    if (*len + n + 1 > size)
        return -1;
    memcpy(out + *len, text, n);
    *len += n;
    out[*len] = '\0';
    return 0;
}

long str_replace(char *out, size_t size, const char *s, const char *from, const char *to)
{
    size_t len = 0, flen = strlen(from), tlen = strlen(to);
    if (size == 0 || flen == 0)
        return -1;
    out[0] = '\0';
    const char *p = s;
    for (const char *hit = strstr(p, from); hit; hit = strstr(p, from)) {
        if (str_append(out, size, &len, p, (size_t)(hit - p)) ||
            str_append(out, size, &len, to, tlen))
            return -1;
        p = hit + flen;
    }
    if (str_append(out, size, &len, p, strlen(p)))
        return -1;
    return (long)len;
}

/* Pads s to width with fill, on the left or the right. */
static long pad(char *out, size_t size, const char *s, size_t width, char fill, bool left)
{
    size_t len = 0, n = strlen(s);
    size_t extra = width > n ? width - n : 0;
    if (size == 0)
        return -1;
    out[0] = '\0';
    if (!left && str_append(out, size, &len, s, n))
        return -1;
    for (size_t i = 0; i < extra; i++) {
        if (str_append(out, size, &len, &fill, 1))
            return -1;
    }
    if (left && str_append(out, size, &len, s, n))
        return -1;
    return (long)len;
}

long str_pad_left(char *out, size_t size, const char *s, size_t width, char fill)
{
    return pad(out, size, s, width, fill, true);
}

long str_pad_right(char *out, size_t size, const char *s, size_t width, char fill)
{
    return pad(out, size, s, width, fill, false);
}

long str_repeat(char *out, size_t size, const char *s, size_t times)
{
    size_t len = 0, n = strlen(s);
    if (size == 0)
        return -1;
    out[0] = '\0';
    for (size_t i = 0; i < times; i++) {
        if (str_append(out, size, &len, s, n))
            return -1;
    }
    return (long)len;
}
