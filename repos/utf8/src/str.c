/* str.c - whole-string operations built on the one-sequence decoder. */
#include <string.h>

#include "utf8.h"

bool utf8_validate(const uint8_t *s, size_t len)
{
    return utf8_strlen(s, len) >= 0;
}

long utf8_strlen(const uint8_t *s, size_t len)
{
    long count = 0;
    size_t i = 0;
    while (i < len) {
        uint32_t cp;
        int n = utf8_decode(&cp, s + i, len - i);
        if (n < 0)
            return -1;
        i += (size_t)n;
        count++;
    }
    return count;
}

long utf8_offset(const uint8_t *s, size_t len, size_t idx)
{
    size_t i = 0;
    for (size_t k = 0; k < idx; k++) {
        uint32_t cp;
        if (i >= len)
            return -1;
        int n = utf8_decode(&cp, s + i, len - i);
        if (n < 0)
            return -1;
        i += (size_t)n;
    }
    return i < len ? (long)i : -1;
}

size_t utf8_truncate(const uint8_t *s, size_t len, size_t max)
{
    size_t i = 0;
    while (i < len) {
        uint32_t cp;
        int n = utf8_decode(&cp, s + i, len - i);
        if (n < 0 || i + (size_t)n > max)
            break;
        i += (size_t)n;
    }
    return i;
}

long utf8_sanitize(uint8_t *out, size_t out_size, const uint8_t *s, size_t len)
{
    size_t i = 0, o = 0;
    while (i < len) {
        uint32_t cp;
        int n = utf8_decode(&cp, s + i, len - i);
        if (n < 0) {
            /* skip the bad lead byte and any continuation bytes after it,
             * so one broken sequence gives one replacement character */
            cp = UTF8_REPLACEMENT;
            n = 1;
            while (i + (size_t)n < len && (s[i + (size_t)n] & 0xC0) == 0x80 && n < 4)
                n++;
        }
        int k = utf8_encoded_len(cp);
        if (o + (size_t)k > out_size)
            return -1;
        utf8_encode(out + o, cp);
        o += (size_t)k;
        i += (size_t)n;
    }
    return (long)o;
}
