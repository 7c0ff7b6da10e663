/* base64.c - encoder and decoder, three bytes <-> four characters. */
#include <string.h>

#include "base64.h"

size_t b64_encoded_len(size_t n, b64_variant var)
{
    if (var == B64_URL) {
        /* unpadded: 4 chars per full group, then 2 or 3 for the tail */
        size_t tail = n % 3;
        return n / 3 * 4 + (tail ? tail + 1 : 0);
    }
    return (n + 2) / 3 * 4;
}

size_t b64_decoded_max(size_t n)
{
    return (n + 3) / 4 * 3;
}

long b64_encode(char *out, size_t out_size, const uint8_t *in, size_t n, b64_variant var)
{
    size_t need = b64_encoded_len(n, var);
    if (out_size < need + 1)
        return -1;
    size_t o = 0, i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        out[o++] = b64_char(v >> 18 & 63, var);
        out[o++] = b64_char(v >> 12 & 63, var);
        out[o++] = b64_char(v >> 6 & 63, var);
        out[o++] = b64_char(v & 63, var);
    }
    size_t rest = n - i;
    if (rest > 0) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (rest == 2)
            v |= (uint32_t)in[i + 1] << 8;
        out[o++] = b64_char(v >> 18 & 63, var);
        out[o++] = b64_char(v >> 12 & 63, var);
        if (rest == 2)
            out[o++] = b64_char(v >> 6 & 63, var);
        if (var == B64_STANDARD) {
            /* pad the last quantum to four characters */
            while (o % 4 != 0)
                out[o++] = '=';
        }
    }
    out[o] = '\0';
    return (long)o;
}

/* Emits the bytes of one quantum of `got` 6-bit values (2, 3 or 4). */
static int flush_quantum(uint8_t *out, size_t out_size, size_t *o, const int *q, int got)
{
    int nbytes = got - 1;
    if (*o + (size_t)nbytes > out_size)
        return -1;
    uint32_t v = (uint32_t)q[0] << 18 | (uint32_t)q[1] << 12;
    if (got > 2)
        v |= (uint32_t)q[2] << 6;
    if (got > 3)
        v |= (uint32_t)q[3];
    out[(*o)++] = (uint8_t)(v >> 16);
    if (nbytes > 1)
        out[(*o)++] = (uint8_t)(v >> 8);
    if (nbytes > 2)
        out[(*o)++] = (uint8_t)v;
    return 0;
}

long b64_decode(uint8_t *out, size_t out_size, const char *in, size_t n, b64_variant var)
{
    int q[4];
    int got = 0, pad = 0;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char c = in[i];
        if (b64_is_space(c))
            continue;
        if (c == '=') {
            /* padding may only complete a quantum of 2 or 3 values */
            if (got < 2 || got + pad >= 4)
                return -1;
            pad++;
            continue;
        }
        if (pad > 0)
            return -1; /* data after padding */
        int v = b64_value(c, var);
        if (v < 0)
            return -1;
        q[got++] = v;
        if (got == 4) {
            if (flush_quantum(out, out_size, &o, q, got))
                return -1;
            got = 0;
        }
    }
    if (got == 1)
        return -1; /* one character carries only 6 bits: not a byte */
    if (got > 0) {
        /* the standard alphabet requires the padding, the URL one not */
        if (var == B64_STANDARD && got + pad != 4)
            return -1;
        if (flush_quantum(out, out_size, &o, q, got))
            return -1;
    } else if (pad > 0) {
        return -1;
    }
    return (long)o;
}

long b64_wrap(char *out, size_t out_size, const char *enc, size_t width)
{
    size_t len = strlen(enc), o = 0;
    if (width == 0)
        return -1;
    for (size_t i = 0; i < len; i += width) {
        size_t chunk = len - i < width ? len - i : width;
        size_t sep = i > 0 ? 2 : 0;
        if (o + sep + chunk + 1 > out_size)
            return -1;
        if (sep) {
            out[o++] = '\r';
            out[o++] = '\n';
        }
        memcpy(out + o, enc + i, chunk);
        o += chunk;
    }
    if (o + 1 > out_size)
        return -1;
    out[o] = '\0';
    return (long)o;
}
