/* encode.c - encoding code points as UTF-8. */
#include "utf8.h"

int utf8_encoded_len(uint32_t cp)
{
    if (cp < 0x80)
        return 1;
    if (cp < 0x800)
        return 2;
    if (cp >= 0xD800 && cp <= 0xDFFF)
        return 0; /* surrogates are not scalar values */
    if (cp < 0x10000)
        return 3;
    if (cp <= UTF8_MAX_CP)
        return 4;
    return 0;
}

int utf8_encode(uint8_t *out, uint32_t cp)
{
    int n = utf8_encoded_len(cp);
    switch (n) {
    case 1:
        out[0] = (uint8_t)cp;
        break;
    case 2:
        out[0] = (uint8_t)(0xC0 | cp >> 6);
        out[1] = (uint8_t)(0x80 | (cp & 0x3F));
        break;
    case 3:
        out[0] = (uint8_t)(0xE0 | cp >> 12);
        out[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (uint8_t)(0x80 | (cp & 0x3F));
        break;
    case 4:
        out[0] = (uint8_t)(0xF0 | cp >> 18);
        out[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3F));
        out[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
        out[3] = (uint8_t)(0x80 | (cp & 0x3F));
        break;
    default:
        return 0;
    }
    return n;
}
