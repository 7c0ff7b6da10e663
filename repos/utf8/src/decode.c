/* decode.c - decoding one UTF-8 sequence, strictly. */
#include "utf8.h"

int utf8_seq_len(uint8_t b)
{
    if (b < 0x80)
        return 1;
    if (b < 0xC2)
        return 0; /* continuation byte, or C0/C1 which only spell overlongs */
    if (b < 0xE0)
        return 2;
    if (b < 0xF0)
        return 3;
    if (b < 0xF5)
        return 4; /* F5..FF would start code points above U+10FFFF */
    return 0;
}

/* Smallest code point that needs n bytes: anything below is overlong. */
static const uint32_t min_for_len[5] = { 0, 0, 0x80, 0x800, 0x10000 };

int utf8_decode(uint32_t *cp, const uint8_t *s, size_t len)
{
    if (len == 0)
        return -1;
    int n = utf8_seq_len(s[0]);
    if (n == 0 || (size_t)n > len)
        return -1;
    if (n == 1) {
        *cp = s[0];
        return 1;
    }
    /* payload bits of the lead byte: 5, 4 or 3 */
    uint32_t v = s[0] & (0x7Fu >> n);
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return -1;
        v = v << 6 | (s[i] & 0x3F);
    }
    if (v < min_for_len[n])
        return -1;
    if (v >= 0xD800 && v <= 0xDFFF)
        return -1;
    if (v > UTF8_MAX_CP)
        return -1;
    *cp = v;
    return n;
}
