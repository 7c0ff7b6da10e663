/* roman.c - formatting and parsing Roman numerals. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "roman.h"

/* Greedy table: each value with the numeral that spells it, largest first,
 * subtractive pairs included so that the greedy walk yields canonical form. */
static const struct {
    int value;
    const char *text;
} steps[] = {
    { 1000, "M" }, { 900, "CM" }, { 500, "D" }, { 400, "CD" },
    { 100, "C" },  { 90, "XC" },  { 50, "L" },  { 40, "XL" },
    { 10, "X" },   { 9, "IX" },   { 5, "V" },   { 4, "IV" },
    { 1, "I" },
};
#define NSTEPS (sizeof steps / sizeof steps[0])

int roman_format(char *buf, size_t size, int n)
{
    if (n < ROMAN_MIN || n > ROMAN_MAX || size == 0)
        return -1;
    size_t len = 0;
    for (size_t i = 0; i < NSTEPS; i++) {
        while (n >= steps[i].value) {
            size_t k = strlen(steps[i].text);
            if (len + k + 1 > size)
                return -1;
            memcpy(buf + len, steps[i].text, k);
            len += k;
            n -= steps[i].value;
        }
    }
    buf[len] = '\0';
    return (int)len;
}

int roman_parse_lenient(const char *s)
{
    if (*s == '\0')
        return -1;
    int total = 0;
    for (size_t i = 0; s[i]; i++) {
        int v = roman_symbol_value(s[i]);
        if (v == 0)
            return -1;
        int next = s[i + 1] ? roman_symbol_value(s[i + 1]) : 0;
        /* a smaller symbol before a larger one is subtracted (IV = 4) */
        if (v < next)
            total -= v;
        else
            total += v;
        if (total > 100000)
            return -1; /* absurdly long input: stop before overflowing */
    }
    return total > 0 ? total : -1;
}

int roman_parse(const char *s)
{
    int n = roman_parse_lenient(s);
    if (n < ROMAN_MIN || n > ROMAN_MAX)
        return -1;
    /* canonical means: formatting the value gives the same text back */
    char canon[ROMAN_BUF];
    if (roman_format(canon, sizeof canon, n) < 0)
        return -1;
    size_t len = strlen(s);
    if (len != strlen(canon))
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (toupper((unsigned char)s[i]) != canon[i])
            return -1;
    }
    return n;
}

bool roman_is_valid(const char *s)
{
    return roman_parse(s) > 0;
}

int roman_add(char *buf, size_t size, const char *a, const char *b)
{
    int x = roman_parse(a), y = roman_parse(b);
    if (x < 0 || y < 0)
        return -1;
    return roman_format(buf, size, x + y);
}

int roman_compare(const char *a, const char *b)
{
    int x = roman_parse(a), y = roman_parse(b);
    if (x < 0 || y < 0)
        return -2;
    return (x > y) - (x < y);
}
