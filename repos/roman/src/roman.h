/* roman.h - Roman numerals: conversion both ways, validation, arithmetic.
 *
 * Canonical numerals use the subtractive pairs IV IX XL XC CD CM and no
 * symbol more than three times in a row, which covers 1..3999. The strict
 * parser accepts only canonical numerals; the lenient one also reads
 * additive forms found on clocks and old inscriptions (IIII, VIIII).
 */
#ifndef ROMAN_H
#define ROMAN_H

#include <stdbool.h>
#include <stddef.h>

#define ROMAN_MIN 1
#define ROMAN_MAX 3999

/* numeral.c: value of one symbol (either case), or 0 when not a symbol. */
int roman_symbol_value(char c);
/* Longest canonical numeral is MMMDCCCLXXXVIII: 15 chars + NUL. */
#define ROMAN_BUF 16

/* roman.c */
/* Writes the canonical numeral of n (1..3999); returns its length, or -1
 * when n is out of range or buf is too small. */
int roman_format(char *buf, size_t size, int n);
/* Lenient: any sequence of symbols, subtractive where a smaller symbol
 * precedes a larger one. Returns the value, or -1 on an empty string or a
 * character that is not a symbol. */
int roman_parse_lenient(const char *s);
/* Strict: canonical numerals only (either case); -1 otherwise. */
int roman_parse(const char *s);
bool roman_is_valid(const char *s);
/* Sum of two numerals as a numeral in buf; -1 on a bad input or overflow. */
int roman_add(char *buf, size_t size, const char *a, const char *b);
/* Compares two numerals by value: -1, 0, 1; -2 when either is invalid. */
int roman_compare(const char *a, const char *b);

#endif
