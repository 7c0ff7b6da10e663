/* unicode.c - classes, combining classes and NFC over the generated tables
 * (see unicode.h). */
#include "protocol/unicode.h"

#include "common/err.h"
#include "common/utf8.h"
#include "common/vec.h"

#include <stdlib.h>
#include <string.h>

#define INVALID_BASE 0x110000u

uint32_t uni_decode(const unsigned char *p, size_t n, size_t *len)
{
    if (p[0] < 0x80) {
        *len = 1;
        return p[0];
    }
    size_t k = utf8_seq_len(p, n);
    if (!k) {
        *len = 1;
        return INVALID_BASE + p[0];
    }
    *len = k;
    if (k == 2)
        return (uint32_t)(p[0] & 0x1f) << 6 | (p[1] & 0x3f);
    if (k == 3)
        return (uint32_t)(p[0] & 0x0f) << 12 | (uint32_t)(p[1] & 0x3f) << 6 | (p[2] & 0x3f);
    return (uint32_t)(p[0] & 0x07) << 18 | (uint32_t)(p[1] & 0x3f) << 12 |
           (uint32_t)(p[2] & 0x3f) << 6 | (p[3] & 0x3f);
}

static size_t encode_cp(unsigned char *o, uint32_t cp)
{
    if (cp >= INVALID_BASE) {
        o[0] = (unsigned char)(cp - INVALID_BASE);
        return 1;
    }
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xc0 | cp >> 6);
        o[1] = (unsigned char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xe0 | cp >> 12);
        o[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
        o[2] = (unsigned char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (unsigned char)(0xf0 | cp >> 18);
    o[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
    o[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
    o[3] = (unsigned char)(0x80 | (cp & 0x3f));
    return 4;
}

/* Row of a sorted table of rows [first, last, ...] (`width` values each)
 * whose range holds cp, or NULL. */
static const uint32_t *range_row(const uint32_t *rows, size_t n, size_t width, uint32_t cp)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const uint32_t *r = rows + mid * width;
        if (cp < r[0])
            hi = mid;
        else if (cp > r[1])
            lo = mid + 1;
        else
            return r;
    }
    return NULL;
}

/* ECMAScript's WhiteSpace and LineTerminator: what \s matches in JS. */
static int is_js_space(uint32_t cp)
{
    switch (cp) {
    case 0x09: case 0x0a: case 0x0b: case 0x0c: case 0x0d: case 0x20: case 0xa0: case 0x1680:
    case 0x2028: case 0x2029: case 0x202f: case 0x205f: case 0x3000: case 0xfeff:
        return 1;
    default:
        return cp >= 0x2000 && cp <= 0x200a;
    }
}

/* Classes of the ASCII characters (UNI_*_C values). */
static const char ASCII_CLASS[129] =
    "\0\0\0\0\0\0\0\0\0\3\3\3\3\3\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
    "\3\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\2\2\2\2\2\2\2\2\2\2\0\0\0\0\0\0"
    "\0\1\1\1\1\1\1\1\1\1\1\1\1\1\1\1\1\1\1\1\1\1\1\1\1\1\1\0\0\0\0\0"
    "\0\1\1\1\1\1\1\1\1\1\1\1\1\1\1\1\1\1\1\1\1\1\1\1\1\1\1\0\0\0\0\0";

int uni_class(uint32_t cp)
{
    if (cp < 128)
        return ASCII_CLASS[cp];
    if (cp >= INVALID_BASE)
        return UNI_OTHER;
    if (is_js_space(cp))
        return UNI_SPACE_C;
    if (range_row(UNI_LETTER[0], UNI_LETTER_N, 2, cp))
        return UNI_LETTER_C;
    if (range_row(UNI_NUMBER[0], UNI_NUMBER_N, 2, cp))
        return UNI_NUMBER_C;
    return UNI_OTHER;
}

int uni_ccc(uint32_t cp)
{
    if (cp < 0x300 || cp >= INVALID_BASE)
        return 0;
    const uint32_t *r = range_row(UNI_CCC[0], UNI_CCC_N, 3, cp);
    return r ? (int)r[2] : 0;
}

/* ---- NFC ---------------------------------------------------------------- */

enum { SBASE = 0xac00, LBASE = 0x1100, VBASE = 0x1161, TBASE = 0x11a7 };
enum { LCOUNT = 19, VCOUNT = 21, TCOUNT = 28, NCOUNT = VCOUNT * TCOUNT, SCOUNT = LCOUNT * NCOUNT };

static const uint32_t *decomp_of(uint32_t cp)
{
    /* rows [cp, first, second]: cp's range is [cp, first] only when
     * first >= cp, so compare the key alone */
    size_t lo = 0, hi = UNI_DECOMP_N;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp == UNI_DECOMP[mid][0])
            return UNI_DECOMP[mid];
        if (cp < UNI_DECOMP[mid][0])
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

/* Composite of the pair, or 0. */
static uint32_t compose(uint32_t a, uint32_t b)
{
    if (a >= LBASE && a < LBASE + LCOUNT && b >= VBASE && b < VBASE + VCOUNT)
        return SBASE + ((a - LBASE) * VCOUNT + (b - VBASE)) * TCOUNT;
    if (a >= SBASE && a < SBASE + SCOUNT && (a - SBASE) % TCOUNT == 0 && b > TBASE &&
        b < TBASE + TCOUNT)
        return a + (b - TBASE);
    size_t lo = 0, hi = UNI_COMP_N;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const uint32_t *e = UNI_COMP[mid];
        if (a < e[0] || (a == e[0] && b < e[1]))
            hi = mid;
        else if (a > e[0] || b > e[1])
            lo = mid + 1;
        else
            return e[2];
    }
    return 0;
}

typedef struct cpvec {
    uint32_t *v;
    size_t n, cap, max;
} cpvec;

static int cp_push(cpvec *c, uint32_t cp)
{
    int rc = VEC_GROW(c->v, c->cap, c->n + 1, c->max);
    if (!rc)
        c->v[c->n++] = cp;
    return rc;
}

/* Full canonical decomposition of cp appended to c. */
static int decompose(cpvec *c, uint32_t cp)
{
    if (cp >= SBASE && cp < SBASE + SCOUNT) {
        uint32_t s = cp - SBASE;
        int rc = cp_push(c, LBASE + s / NCOUNT);
        if (!rc)
            rc = cp_push(c, VBASE + s % NCOUNT / TCOUNT);
        if (!rc && s % TCOUNT)
            rc = cp_push(c, TBASE + s % TCOUNT);
        return rc;
    }
    const uint32_t *d = cp >= 0xc0 && cp < INVALID_BASE ? decomp_of(cp) : NULL;
    if (!d)
        return cp_push(c, cp);
    int rc = decompose(c, d[1]);
    if (!rc && d[2])
        rc = decompose(c, d[2]);
    return rc;
}

int uni_nfc_trivial(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len; i++)
        if (p[i] >= 0xcc) /* lead bytes of U+0300 and above */
            return 0;
    return 1;
}

int uni_nfc(char **out, size_t *olen, const char *s, size_t len, size_t max)
{
    *out = NULL;
    *olen = 0;
    const unsigned char *p = (const unsigned char *)s;
    /* The decomposition holds at most `max` code points. */
    cpvec c = {.max = max};
    int rc = 0;
    for (size_t i = 0; i < len && !rc;) {
        size_t k;
        uint32_t cp = uni_decode(p + i, len - i, &k);
        rc = decompose(&c, cp);
        i += k;
    }
    /* Canonical ordering: stable insertion sort of each run of non-starters. */
    for (size_t i = 1; i < c.n && !rc; i++) {
        int cc = uni_ccc(c.v[i]);
        if (!cc)
            continue;
        size_t j = i;
        uint32_t x = c.v[i];
        while (j > 0 && uni_ccc(c.v[j - 1]) > cc) {
            c.v[j] = c.v[j - 1];
            j--;
        }
        c.v[j] = x;
    }
    /* Composition: each character joins the last starter unless blocked. */
    size_t w = 0;
    if (!rc && c.n) {
        size_t starter = 0;
        int have_starter = uni_ccc(c.v[0]) == 0;
        int last_cc = have_starter ? 0 : 256;
        w = 1;
        for (size_t i = 1; i < c.n; i++) {
            uint32_t x = c.v[i];
            int cc = uni_ccc(x);
            uint32_t comp = 0;
            if (have_starter && (last_cc < cc || (last_cc == 0 && w == starter + 1)))
                comp = compose(c.v[starter], x);
            if (comp) {
                c.v[starter] = comp;
                continue;
            }
            if (cc == 0) {
                starter = w;
                have_starter = 1;
                last_cc = 0;
            } else {
                last_cc = cc;
            }
            c.v[w++] = x;
        }
    }
    unsigned char *o = NULL;
    if (!rc && !(o = malloc(w * 4 + 1)))
        rc = RL_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < w && o; i++)
        n += encode_cp(o + n, c.v[i]);
    free(c.v);
    if (rc)
        return rc;
    if (n > max) {
        free(o);
        return RL_ELIMIT;
    }
    o[n] = '\0';
    *out = (char *)o;
    *olen = n;
    return 0;
}
