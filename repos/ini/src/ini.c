/* ini.c - parsing a document into entries, and looking values up. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ini.h"

static ini_entry *find_entry(ini_doc *doc, const char *section, const char *key)
{
    for (size_t i = 0; i < doc->n; i++) {
        ini_entry *e = &doc->entries[i];
        if (ini_name_eq(e->section, section) && ini_name_eq(e->key, key))
            return e;
    }
    return NULL;
}

/* Handles one "key = value" line in `section`; -1 when malformed. */
static int parse_pair(ini_doc *doc, const char *section, char *line)
{
    char *sep = strpbrk(line, "=:");
    if (sep == NULL || sep == line)
        return -1;
    *sep = '\0';
    char *key = ini_trim(line);
    char *value = ini_trim(sep + 1);
    if (*key == '\0' || ini_unquote(value) != 0)
        return -1;
    ini_entry *e = find_entry(doc, section, key);
    if (e == NULL) {
        if (doc->n == INI_MAX_ENTRIES)
            return -1;
        e = &doc->entries[doc->n];
        if (ini_copy(e->section, sizeof e->section, section) ||
            ini_copy(e->key, sizeof e->key, key))
            return -1;
        doc->n++;
    }
    return ini_copy(e->value, sizeof e->value, value);
}

/* Handles "[name]"; copies the trimmed name into section. */
static int parse_header(char *line, char *section, size_t size)
{
    size_t len = strlen(line);
    if (line[len - 1] != ']')
        return -1;
    line[len - 1] = '\0';
    char *name = ini_trim(line + 1);
    if (*name == '\0')
        return -1;
    return ini_copy(section, size, name);
}

int ini_parse(ini_doc *doc, const char *text)
{
    char section[INI_NAME_MAX] = "";
    char buf[INI_LINE_MAX + 1];
    int lineno = 0;
    doc->n = 0;
    doc->error_line = 0;
    const char *p = text;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        lineno++;
        if (len > INI_LINE_MAX) {
            doc->error_line = lineno;
            return -1;
        }
        memcpy(buf, p, len);
        buf[len] = '\0';
        p += eol ? len + 1 : len;

        ini_strip_comment(buf);
        char *line = ini_trim(buf);
        if (*line == '\0')
            continue;
        int rc = line[0] == '['
            ? parse_header(line, section, sizeof section)
            : parse_pair(doc, section, line);
        if (rc != 0) {
            doc->error_line = lineno;
            return -1;
        }
    }
    return 0;
}

const char *ini_get(const ini_doc *doc, const char *section, const char *key)
{
    ini_entry *e = find_entry((ini_doc *)doc, section, key);
    return e ? e->value : NULL;
}

int ini_get_int(const ini_doc *doc, const char *section, const char *key, long *out)
{
    const char *v = ini_get(doc, section, key);
    if (v == NULL || *v == '\0')
        return -1;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 0);
    if (errno != 0 || *end != '\0')
        return -1;
    *out = n;
    return 0;
}

int ini_get_bool(const ini_doc *doc, const char *section, const char *key, bool *out)
{
    static const char *const yes[] = { "1", "true", "yes", "on" };
    static const char *const no[] = { "0", "false", "no", "off" };
    const char *v = ini_get(doc, section, key);
    if (v == NULL)
        return -1;
    for (size_t i = 0; i < 4; i++) {
        if (ini_name_eq(v, yes[i])) {
            *out = true;
            return 0;
        }
        if (ini_name_eq(v, no[i])) {
            *out = false;
            return 0;
        }
    }
    return -1;
}

size_t ini_section_count(const ini_doc *doc)
{
    size_t count = 0;
    for (size_t i = 0; i < doc->n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = ini_name_eq(doc->entries[j].section, doc->entries[i].section);
        if (!seen)
            count++;
    }
    return count;
}
