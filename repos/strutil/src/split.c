/* split.c - splitting strings into fields and joining them back. */
#include <ctype.h>
#include <string.h>

#include "strutil.h"

size_t str_split(char *s, char sep, char **parts, size_t max)
{
    size_t count = 0;
    char *start = s;
    for (char *p = s;; p++) {
        if (*p == sep || *p == '\0') {
            bool end = *p == '\0';
            if (count < max) {
                *p = '\0';
                parts[count] = start;
            }
            count++;
            if (end)
                break;
            start = p + 1;
        }
    }
    return count;
}

size_t str_split_trim(char *s, char sep, char **parts, size_t max)
{
    size_t count = str_split(s, sep, parts, max);
    size_t set = count < max ? count : max;
    for (size_t i = 0; i < set; i++)
        parts[i] = str_trim(parts[i]);
    return count;
}

long str_join(char *out, size_t size, const char *const *parts, size_t n, const char *sep)
{
    size_t len = 0, slen = strlen(sep);
    if (size == 0)
        return -1;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && str_append(out, size, &len, sep, slen))
            return -1;
        if (str_append(out, size, &len, parts[i], strlen(parts[i])))
            return -1;
    }
    return (long)len;
}

size_t str_word_count(const char *s)
{
    size_t words = 0;
    bool in_word = false;
    for (; *s; s++) {
        bool blank = isspace((unsigned char)*s) != 0;
        if (!blank && !in_word)
            words++;
        in_word = !blank;
    }
    return words;
}
