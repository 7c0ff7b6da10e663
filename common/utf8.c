/* utf8.c - UTF-8 validity (see utf8.h). */
#include "common/utf8.h"

size_t utf8_seq_len(const unsigned char *p, size_t n)
{
    unsigned char c = p[0];
    if (c < 0x80)
        return 1;
    size_t k = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (!k || k > n)
        return 0;
    for (size_t i = 1; i < k; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    if ((c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] > 0x9F) || (c == 0xF0 && p[1] < 0x90) ||
        (c == 0xF4 && p[1] > 0x8F))
        return 0;
    return k;
}

size_t utf8_scrub(char *s, size_t n)
{
    unsigned char *p = (unsigned char *)s;
    size_t bad = 0;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_seq_len(p + i, n - i);
        if (k) {
            i += k;
        } else {
            p[i++] = '?';
            bad++;
        }
    }
    return bad;
}
