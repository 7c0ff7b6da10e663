/* text.c - string helpers for the INI parser, all in place. */
#include <ctype.h>
#include <string.h>

#include "ini.h"

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

char *ini_trim(char *s)
{
    while (is_blank(*s))
        s++;
    size_t len = strlen(s);
    while (len > 0 && is_blank(s[len - 1]))
        len--;
    s[len] = '\0';
    return s;
}

void ini_strip_comment(char *s)
{
    bool quoted = false;
    for (size_t i = 0; s[i]; i++) {
        if (s[i] == '"')
            quoted = !quoted;
        /* a comment starts the line or follows a blank, so a#b stays */
        else if (!quoted && (s[i] == ';' || s[i] == '#') && (i == 0 || is_blank(s[i - 1]))) {
            s[i] = '\0';
            return;
        }
    }
}

int ini_unquote(char *s)
{
    size_t len = strlen(s);
    if (len == 0 || s[0] != '"')
        return 0;
    if (len < 2 || s[len - 1] != '"')
        return -1;
    memmove(s, s + 1, len - 2);
    s[len - 2] = '\0';
    return 0;
}

bool ini_name_eq(const char *a, const char *b)
{
    while (*a && *b) {
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
        a++;
        b++;
    }
    return *a == *b;
}

int ini_copy(char *dst, size_t n, const char *src)
{
    size_t len = strlen(src);
    if (len >= n)
        return -1;
    memcpy(dst, src, len + 1);
    return 0;
}
