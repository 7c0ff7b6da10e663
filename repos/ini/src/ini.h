/* ini.h - a small INI file parser.
 *
 * Syntax: `[section]` headers, `key = value` (or `key: value`) pairs,
 * comments starting with ';' or '#' on their own line or after a value
 * (after whitespace), double-quoted values that keep spaces and comment
 * characters. Keys before any header belong to the section "". Keys and
 * section names compare case-insensitively; a repeated key keeps the last
 * value. Lines are at most INI_LINE_MAX bytes.
 */
#ifndef INI_H
#define INI_H

#include <stdbool.h>
#include <stddef.h>

#define INI_LINE_MAX 256
#define INI_MAX_ENTRIES 64
#define INI_NAME_MAX 32
#define INI_VALUE_MAX 128

typedef struct ini_entry {
    char section[INI_NAME_MAX];
    char key[INI_NAME_MAX];
    char value[INI_VALUE_MAX];
} ini_entry;

typedef struct ini_doc {
    ini_entry entries[INI_MAX_ENTRIES];
    size_t n;
    int error_line; /* 1-based line of the first error, 0 when none */
} ini_doc;

/* text.c: in-place helpers on NUL-terminated strings */
char *ini_trim(char *s);           /* strips leading and trailing blanks */
void ini_strip_comment(char *s);   /* cuts an unquoted " ;..." or " #..." */
int ini_unquote(char *s);          /* "a b" -> a b; -1 on an unterminated quote */
bool ini_name_eq(const char *a, const char *b); /* case-insensitive */
/* Copies src into dst of size n; -1 (dst untouched) when it does not fit. */
int ini_copy(char *dst, size_t n, const char *src);

/* ini.c */
/* Parses the whole text; returns 0, or -1 with doc->error_line set. */
int ini_parse(ini_doc *doc, const char *text);
const char *ini_get(const ini_doc *doc, const char *section, const char *key);
/* Typed getters return 0 and fill *out, or -1 when missing or malformed. */
int ini_get_int(const ini_doc *doc, const char *section, const char *key, long *out);
int ini_get_bool(const ini_doc *doc, const char *section, const char *key, bool *out);
/* Number of distinct sections that hold at least one key. */
size_t ini_section_count(const ini_doc *doc);

#endif
