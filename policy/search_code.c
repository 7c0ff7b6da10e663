/* search_code.c - just enough of C and Python for the search policy:
 * tokens (comments skipped, strings whole), function definitions with
 * their line ranges, the names a body calls or refers to, and the
 * code-looking names of free text such as a failure message. It is a
 * reader's approximation, not a parser: it only has to rank leads. */
#include "policy/search.h"

#include "common/limits.h"
#include "common/vec.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static int is_id0(int c) { return isalpha(c) || c == '_'; }
static int is_id(int c) { return isalnum(c) || c == '_'; }

/* ---- tokens -------------------------------------------------------------- */

static const char *const OPS2[] = {"->", "==", "!=", "<=", ">=", "&&", "||", "++", "--", "<<",
                                   ">>", "+=", "-=", "*=", "/=", "%=", "//", "**", "::"};

static size_t skip_string(const char *t, size_t i, size_t len, char q, int triple, int *line)
{
    i += triple ? 3 : 1;
    while (i < len) {
        if (t[i] == '\\' && i + 1 < len) {
            if (t[i + 1] == '\n')
                (*line)++;
            i += 2;
            continue;
        }
        if (t[i] == '\n') {
            if (!triple)
                return i; /* unterminated: stop at the line end */
            (*line)++;
        }
        if (t[i] == q && (!triple || (i + 2 < len && t[i + 1] == q && t[i + 2] == q)))
            return i + (triple ? 3 : 1);
        i++;
    }
    return len;
}

size_t search_tokenize(search_tok **out, const char *t, size_t len, mut_lang lang, size_t max)
{
    *out = NULL;
    size_t n = 0, cap = 0, i = 0;
    int line = 1;
    search_tok *v = NULL;
    if (max > RL_SEARCH_TOKENS_MAX)
        max = RL_SEARCH_TOKENS_MAX;
    while (i < len && n < max) {
        char c = t[i];
        if (c == '\n') {
            line++;
            i++;
            continue;
        }
        if (isspace((unsigned char)c)) {
            i++;
            continue;
        }
        if ((lang == MUT_LANG_PY && c == '#') ||
            (lang != MUT_LANG_PY && c == '/' && i + 1 < len && t[i + 1] == '/')) {
            while (i < len && t[i] != '\n')
                i++;
            continue;
        }
        if (lang != MUT_LANG_PY && c == '/' && i + 1 < len && t[i + 1] == '*') {
            i += 2;
            while (i + 1 < len && !(t[i] == '*' && t[i + 1] == '/')) {
                line += t[i] == '\n';
                i++;
            }
            i = i + 2 < len ? i + 2 : len;
            continue;
        }
        search_tok k = {SR_T_PUNCT, line, i, i + 1};
        if (c == '"' || c == '\'') {
            int triple = lang == MUT_LANG_PY && i + 2 < len && t[i + 1] == c && t[i + 2] == c;
            k.kind = c == '\'' && lang != MUT_LANG_PY ? SR_T_CHAR : SR_T_STR;
            k.e = skip_string(t, i, len, c, triple, &line);
        } else if (is_id0((unsigned char)c)) {
            size_t j = i;
            while (j < len && is_id((unsigned char)t[j]))
                j++;
            /* Python string prefixes (f"", rb'') belong to the string. */
            if (lang == MUT_LANG_PY && j - i <= 2 && j < len && (t[j] == '"' || t[j] == '\'') &&
                strspn(t + i, "rRbBfFuU") >= j - i) {
                int triple = j + 2 < len && t[j + 1] == t[j] && t[j + 2] == t[j];
                k.kind = SR_T_STR;
                k.e = skip_string(t, j, len, t[j], triple, &line);
            } else {
                k.kind = SR_T_IDENT;
                k.e = j;
            }
        } else if (isdigit((unsigned char)c) || (c == '.' && i + 1 < len && isdigit((unsigned char)t[i + 1]))) {
            size_t j = i + 1;
            while (j < len && (is_id((unsigned char)t[j]) || t[j] == '.'))
                j++;
            k.kind = SR_T_NUM;
            k.e = j;
        } else {
            for (size_t o = 0; o < sizeof OPS2 / sizeof *OPS2; o++)
                if (i + 1 < len && t[i] == OPS2[o][0] && t[i + 1] == OPS2[o][1]) {
                    k.e = i + 2;
                    break;
                }
        }
        if (VEC_GROW(v, cap, n + 1, max) < 0)
            break; /* out of memory: the loop stays below max */
        v[n++] = k;
        i = k.e > i ? k.e : i + 1;
    }
    *out = v;
    return n;
}

static int tok_is(const char *t, const search_tok *k, const char *s)
{
    size_t n = strlen(s);
    return k->e - k->s == n && !memcmp(t + k->s, s, n);
}

static void tok_name(char *out, const char *t, const search_tok *k)
{
    size_t n = k->e - k->s;
    if (n >= SR_NAME_MAX)
        n = SR_NAME_MAX - 1;
    memcpy(out, t + k->s, n);
    out[n] = 0;
}

/* ---- names we never follow ----------------------------------------------- */

static const char *const IGNORED[] = {
    /* C */
    "if", "while", "for", "switch", "return", "sizeof", "do", "else", "case", "default", "break",
    "continue", "goto", "typedef", "struct", "union", "enum", "static", "const", "volatile",
    "extern", "inline", "unsigned", "signed", "int", "long", "short", "char", "float", "double",
    "void", "bool", "size_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "int32_t", "int64_t",
    "strlen", "strcmp", "strncmp", "memcmp", "memcpy", "memmove", "memset", "strcpy", "strncpy",
    "strcat", "strchr", "strrchr", "strstr", "printf", "fprintf", "sprintf", "snprintf", "puts",
    "putchar", "malloc", "calloc", "realloc", "free", "abort", "exit", "assert", "isdigit",
    "isalpha", "isspace", "isupper", "islower", "isalnum", "toupper", "tolower", "atoi", "strtol",
    "strtoul", "labs", "abs", "qsort", "bsearch", "fopen", "fclose", "fread", "fwrite", "main",
    "offsetof", "defined", "include", "define", "NULL", "true", "false",
    /* Python */
    "def", "class", "in", "not", "and", "or", "is", "None", "True", "False", "self", "cls",
    "import", "from", "as", "with", "try", "except", "finally", "raise", "pass", "lambda",
    "yield", "global", "nonlocal", "del", "elif", "print", "len", "range", "list", "dict", "set",
    "tuple", "str", "float", "isinstance", "issubclass", "sorted", "reversed", "enumerate", "zip",
    "map", "filter", "min", "max", "sum", "any", "all", "repr", "hash", "iter", "next", "object",
    "super", "type", "getattr", "setattr", "hasattr", "open", "format", "divmod", "round", "ord",
    "chr", "bytes", "bytearray", "Exception", "ValueError", "TypeError", "KeyError", "IndexError",
    "AttributeError", "NotImplemented", "NotImplementedError", "StopIteration", "RuntimeError",
    "ZeroDivisionError", "AssertionError", "pytest", "raises", "approx", "mark", "parametrize",
    "fixture", "datetime", "total_ordering", "functools", "re", "os", "sys", "math", "strip",
    "append", "extend", "items", "keys", "values", "group", "fullmatch", "compile", "startswith",
    "endswith", "lower", "upper", "where", "method", "bound", "built", "expected", "got", "failed",
    "Assertion",
};

int search_name_ignored(const char *name)
{
    size_t n = strlen(name);
    if (n < 2 || n >= SR_NAME_MAX)
        return 1;
    static const char *const PREFIX[] = {"ck_", "CHECK", "START_TEST", "END_TEST", "TAP_", "ASSERT",
                                         "EXPECT", "suite_", "tcase_", "srunner_", "test_", "__"};
    for (size_t i = 0; i < sizeof PREFIX / sizeof *PREFIX; i++)
        if (!strncmp(name, PREFIX[i], strlen(PREFIX[i])))
            return 1;
    int upper = 1;
    for (size_t i = 0; i < n; i++)
        if (islower((unsigned char)name[i]))
            upper = 0;
    if (upper) /* constants and macros */
        return 1;
    for (size_t i = 0; i < sizeof IGNORED / sizeof *IGNORED; i++)
        if (!strcmp(name, IGNORED[i]))
            return 1;
    return 0;
}

static size_t name_add(char (*names)[SR_NAME_MAX], size_t n, size_t max, const char *s, size_t len)
{
    if (len == 0 || len >= SR_NAME_MAX || n >= max)
        return n;
    char tmp[SR_NAME_MAX];
    memcpy(tmp, s, len);
    tmp[len] = 0;
    if (search_name_ignored(tmp))
        return n;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], tmp))
            return n;
    memcpy(names[n], tmp, len + 1);
    return n + 1;
}

/* ---- definitions ----------------------------------------------------------- */

/* max is at most RL_SEARCH_DEFS_MAX (search_find_defs). */
static size_t def_push(search_def **v, size_t n, size_t *cap, size_t max, const search_def *d)
{
    if (n >= max || VEC_GROW(*v, *cap, n + 1, max) < 0)
        return n;
    (*v)[n] = *d;
    return n + 1;
}

static int c_keyword(const char *t, const search_tok *k)
{
    static const char *const KW[] = {"if", "while", "for", "switch", "return", "sizeof", "do"};
    for (size_t i = 0; i < sizeof KW / sizeof *KW; i++)
        if (tok_is(t, k, KW[i]))
            return 1;
    return 0;
}

/* Index of the token closing the bracket at i, or n. */
static size_t match_close(const char *t, const search_tok *k, size_t n, size_t i)
{
    char open = t[k[i].s], close = open == '(' ? ')' : open == '[' ? ']' : '}';
    int depth = 0;
    for (size_t j = i; j < n; j++) {
        if (k[j].kind != SR_T_PUNCT || k[j].e - k[j].s != 1)
            continue;
        if (t[k[j].s] == open)
            depth++;
        else if (t[k[j].s] == close && --depth == 0)
            return j;
    }
    return n;
}

static size_t c_defs(search_def **out, const char *t, size_t len, size_t max)
{
    search_tok *k;
    size_t nt = search_tokenize(&k, t, len, MUT_LANG_C, RL_SEARCH_TOKENS_MAX), n = 0, cap = 0;
    for (size_t i = 0; i < nt; i++) {
        if (k[i].kind == SR_T_PUNCT && t[k[i].s] == '{' && k[i].e - k[i].s == 1) {
            /* A body at file level: is it a function's? name ( ... ) { */
            size_t close = match_close(t, k, nt, i);
            if (i >= 3 && tok_is(t, &k[i - 1], ")")) {
                int depth = 0;
                size_t j = i - 1;
                for (;; j--) {
                    if (tok_is(t, &k[j], ")"))
                        depth++;
                    else if (tok_is(t, &k[j], "(") && --depth == 0)
                        break;
                    if (j == 0)
                        break;
                }
                if (depth == 0 && j >= 1 && k[j - 1].kind == SR_T_IDENT && !c_keyword(t, &k[j - 1])) {
                    search_def d = {0};
                    tok_name(d.name, t, &k[j - 1]);
                    d.start = k[j - 1].line;
                    d.end = close < nt ? k[close].line : k[nt - 1].line;
                    d.level = SR_LEVEL_NONE;
                    n = def_push(out, n, &cap, max, &d);
                }
            }
            if (close >= nt)
                break;
            i = close;
        }
    }
    free(k);
    return n;
}

static int indent_of(const char *l, size_t n)
{
    int w = 0;
    for (size_t i = 0; i < n; i++) {
        if (l[i] == ' ')
            w++;
        else if (l[i] == '\t')
            w = (w / 8 + 1) * 8;
        else
            return w;
    }
    return -1; /* blank */
}

static size_t py_defs(search_def **out, const char *t, size_t len, size_t max)
{
    /* Lines inside a multi-line string are neither headers nor ends. */
    search_tok *k;
    size_t nt = search_tokenize(&k, t, len, MUT_LANG_PY, RL_SEARCH_TOKENS_MAX);
    size_t nlines = 1;
    for (size_t i = 0; i < len; i++)
        nlines += t[i] == '\n';
    if (nlines > RL_SEARCH_FILE_LINES_MAX)
        nlines = RL_SEARCH_FILE_LINES_MAX;
    char *in_str = calloc(nlines + 2, 1);
    const char **lp = calloc(nlines + 2, sizeof *lp);
    size_t *ll = calloc(nlines + 2, sizeof *ll);
    size_t n = 0, cap = 0;
    if (!in_str || !lp || !ll)
        goto out;
    for (size_t i = 0; i < nt; i++) {
        if (k[i].kind != SR_T_STR)
            continue;
        int first = k[i].line, last = first;
        for (size_t j = k[i].s; j < k[i].e; j++)
            last += t[j] == '\n';
        for (int l = first + 1; l <= last && (size_t)l <= nlines; l++)
            in_str[l] = 1;
    }
    const char *p = t, *end = t + len;
    for (size_t l = 1; l <= nlines && p <= end; l++) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        lp[l] = p;
        ll[l] = e ? (size_t)(e - p) : (size_t)(end - p);
        p = e ? e + 1 : end + 1;
    }
    struct { int indent; char name[SR_NAME_MAX]; } cls[32];
    int ncls = 0;
    for (size_t l = 1; l <= nlines; l++) {
        if (!lp[l] || in_str[l])
            continue;
        int ind = indent_of(lp[l], ll[l]);
        if (ind < 0)
            continue;
        while (ncls > 0 && cls[ncls - 1].indent >= ind)
            ncls--;
        const char *s = lp[l] + strspn(lp[l], " \t");
        size_t rest = ll[l] - (size_t)(s - lp[l]);
        int is_class = 0;
        if (rest > 6 && !strncmp(s, "async ", 6)) {
            s += 6;
            rest -= 6;
        }
        if (rest > 4 && !strncmp(s, "def ", 4))
            s += 4;
        else if (rest > 6 && !strncmp(s, "class ", 6))
            s += 6, is_class = 1;
        else
            continue;
        s += strspn(s, " ");
        size_t nl = 0;
        while (s + nl < lp[l] + ll[l] && is_id((unsigned char)s[nl]))
            nl++;
        if (!nl || nl >= SR_NAME_MAX)
            continue;
        search_def d = {0};
        memcpy(d.name, s, nl);
        d.is_class = is_class;
        d.start = (int)l;
        d.end = (int)l;
        d.level = SR_LEVEL_NONE;
        if (ncls > 0)
            memcpy(d.cls, cls[ncls - 1].name, sizeof d.cls);
        for (size_t m = l + 1; m <= nlines; m++) {
            if (!lp[m])
                break;
            int mi = indent_of(lp[m], ll[m]);
            if (!in_str[m] && mi >= 0 && mi <= ind)
                break;
            if (mi >= 0 || in_str[m])
                d.end = (int)m;
        }
        n = def_push(out, n, &cap, max, &d);
        if (is_class && ncls < 32) {
            cls[ncls].indent = ind;
            memcpy(cls[ncls].name, d.name, sizeof d.name);
            ncls++;
        }
    }
out:
    free(in_str);
    free(lp);
    free(ll);
    free(k);
    return n;
}

size_t search_find_defs(search_def **out, const char *text, size_t len, mut_lang lang, size_t max)
{
    *out = NULL;
    if (max > RL_SEARCH_DEFS_MAX)
        max = RL_SEARCH_DEFS_MAX;
    if (lang == MUT_LANG_PY)
        return py_defs(out, text, len, max);
    if (lang == MUT_LANG_C)
        return c_defs(out, text, len, max);
    return 0;
}

/* ---- references ------------------------------------------------------------ */

size_t search_refs(char (*names)[SR_NAME_MAX], size_t n, size_t max, const char *text, size_t len,
               mut_lang lang, int from, int to, int calls_only)
{
    search_tok *k;
    size_t nt = search_tokenize(&k, text, len, lang, RL_SEARCH_TOKENS_MAX);
    for (size_t i = 0; i < nt && n < max; i++) {
        if (k[i].line < from || k[i].line > to || k[i].kind != SR_T_IDENT)
            continue;
        int call = i + 1 < nt && tok_is(text, &k[i + 1], "(");
        /* Python: a class is used by name too (Version, Interval). */
        int cls = !calls_only && isupper((unsigned char)text[k[i].s]);
        if (!call && !cls)
            continue;
        n = name_add(names, n, max, text + k[i].s, k[i].e - k[i].s);
    }
    free(k);
    return n;
}

size_t search_text_names(char (*names)[SR_NAME_MAX], size_t n, size_t max, const char *s)
{
    size_t len = strnlen(s, RL_SEARCH_OBS_MAX);
    for (size_t i = 0; i < len && n < max;) {
        if (!is_id0((unsigned char)s[i]) || (i > 0 && is_id((unsigned char)s[i - 1]))) {
            i++;
            continue;
        }
        size_t j = i;
        int under = 0, caps = 0, lower = 0;
        while (j < len && is_id((unsigned char)s[j])) {
            under |= s[j] == '_';
            caps += isupper((unsigned char)s[j]) != 0;
            lower |= islower((unsigned char)s[j]);
            j++;
        }
        int call = j < len && s[j] == '(';
        int method = i > 1 && s[i - 1] == '.' && is_id((unsigned char)s[i - 2]);
        int camel = isupper((unsigned char)s[i]) && lower && caps >= 1 && j - i > 3 &&
                    (call || caps >= 2);
        /* C type names (date_t, size_t) are not what a test calls */
        int type_name = j - i > 2 && s[j - 2] == '_' && s[j - 1] == 't' && !call;
        if ((call || (under && lower) || camel || method) && !type_name && !isdigit((unsigned char)s[i]))
            n = name_add(names, n, max, s + i, j - i);
        i = j;
    }
    return n;
}

int search_has_word(const char *s, const char *word)
{
    size_t wl = strlen(word);
    if (!wl)
        return 0;
    for (const char *p = s; (p = strstr(p, word)); p++) {
        int before = p > s && is_id((unsigned char)p[-1]);
        int after = is_id((unsigned char)p[wl]);
        if (!before && !after)
            return 1;
    }
    return 0;
}

int search_line_defines(const char *line, const char *name)
{
    const char *s = line + strspn(line, " \t");
    size_t nl = strlen(name);
    /* Python */
    if (!strncmp(s, "async ", 6))
        s += 6;
    if (!strncmp(s, "def ", 4) || !strncmp(s, "class ", 6)) {
        const char *p = s + (s[0] == 'd' ? 4 : 6);
        p += strspn(p, " ");
        return !strncmp(p, name, nl) && (p[nl] == '(' || p[nl] == ':');
    }
    /* C: "type name(" at the start of a line, not a prototype or a call */
    if (s != line || !*s || *s == '#' || *s == '/' || *s == '*' || *s == '{' || *s == '}')
        return 0;
    const char *p;
    for (p = line; (p = strstr(p, name)); p++) {
        if ((p > line && is_id((unsigned char)p[-1])) || p[nl] != '(')
            continue;
        const char *end = line + strlen(line);
        while (end > line && isspace((unsigned char)end[-1]))
            end--;
        if (end > line && (end[-1] == ';' || end[-1] == ','))
            return 0;
        for (const char *q = line; q < p; q++)
            if (*q == '=' || *q == '(' || *q == ';')
                return 0;
        return strncmp(line, "return", 6) != 0;
    }
    return 0;
}
