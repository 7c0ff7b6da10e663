/* strutil.h - string utilities for NUL-terminated strings.
 *
 * Functions that build a string write into a caller buffer of `size`
 * bytes and return the length written (without the NUL), or -1 when the
 * result does not fit; the buffer then holds a valid but unspecified
 * prefix. Nothing allocates.
 */
#ifndef STRUTIL_H
#define STRUTIL_H

#include <stdbool.h>
#include <stddef.h>

/* strutil.c */
bool str_starts_with(const char *s, const char *prefix);
bool str_ends_with(const char *s, const char *suffix);
/* Trims blanks in place; returns the first non-blank character of s. */
char *str_trim(char *s);
void str_to_upper(char *s);
void str_to_lower(char *s);
/* Case-insensitive ASCII compare, like strcmp. */
int str_icmp(const char *a, const char *b);
/* Non-overlapping occurrences of needle (non-empty) in s. */
size_t str_count(const char *s, const char *needle);
long str_replace(char *out, size_t size, const char *s, const char *from, const char *to);
long str_pad_left(char *out, size_t size, const char *s, size_t width, char fill);
long str_pad_right(char *out, size_t size, const char *s, size_t width, char fill);
long str_repeat(char *out, size_t size, const char *s, size_t times);
/* Appends n bytes of text at out[*len], keeping out NUL-terminated;
 * returns -1 (nothing appended) when they do not fit. */
int str_append(char *out, size_t size, size_t *len, const char *text, size_t n);

/* split.c */
/* Splits s in place at each sep; fills at most max parts and returns the
 * number of fields found (which may exceed max: then only max are set). */
size_t str_split(char *s, char sep, char **parts, size_t max);
/* Like str_split, then trims each field. */
size_t str_split_trim(char *s, char sep, char **parts, size_t max);
long str_join(char *out, size_t size, const char *const *parts, size_t n, const char *sep);
/* Number of blank-separated words. */
size_t str_word_count(const char *s);

#endif
