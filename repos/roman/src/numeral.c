/* numeral.c - the seven Roman symbols and their values. */
#include "roman.h"

struct symbol {
    char upper;
    char lower;
    int value;
};

static const struct symbol symbols[] = {
    { 'M', 'm', 1000 }, { 'D', 'd', 500 }, { 'C', 'c', 100 }, { 'L', 'l', 50 },
    { 'X', 'x', 10 },   { 'V', 'v', 5 },   { 'I', 'i', 1 },
};
#define NSYMBOLS (sizeof symbols / sizeof symbols[0])

int roman_symbol_value(char c)
{
    for (unsigned i = 0; i < NSYMBOLS; i++) {
        if (symbols[i].upper == c || symbols[i].lower == c)
            return symbols[i].value;
    }
    return 0;
}
