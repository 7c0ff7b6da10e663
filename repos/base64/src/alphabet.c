/* alphabet.c - the two Base64 alphabets and their reverse lookup. */
#include "base64.h"

static const char std_chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char b64_char(unsigned v, b64_variant var)
{
    if (v == 62)
        return var == B64_URL ? '-' : '+';
    if (v == 63)
        return var == B64_URL ? '_' : '/';
    return std_chars[v & 63];
}

/* Computed rather than a 256-entry table: the ranges are the spec. */
int b64_value(char c, b64_variant var)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (var == B64_URL) {
        if (c == '-')
            return 62;
        if (c == '_')
            return 63;
    } else {
        if (c == '+')
            return 62;
        if (c == '/')
            return 63;
    }
    return -1;
}

bool b64_is_space(char c)
{
    return c == '\r' || c == '\n';
}
