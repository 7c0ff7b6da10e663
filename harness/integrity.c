/* integrity.c - the integrity check of a scored diff (integrity.h).
 *
 * The diff is read file by file: the `diff --git` header and its extended
 * lines give the path, whether the file is new, its mode and whether it is
 * binary; hunks give the added lines with their new-side numbers. Path
 * rules look at the file name; line rules at the added lines of C and
 * Python files, through two views where comments are blanked ("nocom")
 * and where string contents are blanked as well ("nostr"). Then the tree,
 * if given, is walked without following links for special files and links
 * out of it.
 */
#include "harness/integrity.h"

#include "common/err.h"
#include "common/limits.h"
#include "common/str.h"
#include "common/vec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void integ_opts_default(integ_opts *o) { memset(o, 0, sizeof *o); }

static const char *const RULES[] = {INTEG_CONSTRUCTOR, INTEG_ATEXIT,        INTEG_EXIT_CALL,   INTEG_INCLUDE_NEXT,
                                    INTEG_SHADOW_HEADER, INTEG_INTERPOSE,   INTEG_PYTHON_HOOK, INTEG_BUILD_CONFIG,
                                    INTEG_BYTECODE,    INTEG_BINARY,        INTEG_IGNORE_FILE, INTEG_SPECIAL_FILE,
                                    INTEG_LINK_OUT,    NULL};

int integ_allow_valid(const char *entry)
{
    const char *colon = entry ? strchr(entry, ':') : NULL;
    if (!colon || !colon[1])
        return 0;
    for (int i = 0; RULES[i]; i++)
        if (strlen(RULES[i]) == (size_t)(colon - entry) && !strncmp(RULES[i], entry, (size_t)(colon - entry)))
            return 1;
    return 0;
}

/* ---- the scan state --------------------------------------------------- */

typedef struct scan {
    integ_report *r;
    const integ_opts *o;
    int rc;         /* first error (RL_ENOMEM, RL_ELIMIT): the scan stops */
    char why[160];  /* with RL_ELIMIT: the list that is full */
    size_t nalloc;  /* findings allocated in r->v */
    char **sysdirs; /* lazily: the include dirs for shadow_header */
    size_t nsys, sysalloc;
    int sys_done;
} scan;

/* Notes a failed growth of a list (rc from VEC_GROW) named by what. */
static void grow_failed(scan *s, int rc, const char *what, const char *path, size_t max)
{
    if (s->rc)
        return;
    s->rc = rc;
    if (rc == RL_ELIMIT)
        snprintf(s->why, sizeof s->why, "%s%s%s: more than %zu", what, path ? " of " : "", path ? path : "", max);
}

static int allowed(const scan *s, const char *rule, const char *path)
{
    size_t rl = strlen(rule);
    for (size_t i = 0; i < s->o->n_allow; i++) {
        const char *a = s->o->allow[i];
        if (a && !strncmp(a, rule, rl) && a[rl] == ':' && !fnmatch(a + rl + 1, path, 0))
            return 1;
    }
    return 0;
}

static void add(scan *s, const char *rule, const char *path, int line, const char *text, size_t tlen)
{
    integ_report *r = s->r;
    if (allowed(s, rule, path))
        return;
    for (size_t i = 0; i < r->n; i++) /* one finding per rule, path and line */
        if (r->v[i].rule == rule && r->v[i].line == line && !strcmp(r->v[i].path, path))
            return;
    if (r->n >= INTEG_FINDINGS_MAX) {
        r->dropped++;
        return;
    }
    int rc = VEC_GROW(r->v, s->nalloc, r->n + 1, INTEG_FINDINGS_MAX);
    if (rc < 0) {
        grow_failed(s, rc, "findings", NULL, INTEG_FINDINGS_MAX);
        return;
    }
    integ_finding *v = r->v;
    if (tlen > INTEG_TEXT_MAX)
        tlen = INTEG_TEXT_MAX;
    while (tlen && (text[tlen - 1] == '\n' || text[tlen - 1] == '\r'))
        tlen--;
    integ_finding *f = &v[r->n];
    f->rule = rule;
    f->line = line;
    f->path = strdup(path);
    f->text = malloc(tlen + 1);
    if (!f->path || !f->text) {
        free(f->path);
        free(f->text);
        s->rc = RL_ENOMEM;
        return;
    }
    memcpy(f->text, text, tlen);
    f->text[tlen] = '\0';
    for (size_t i = 0; i < tlen; i++) /* one line of printable text */
        if ((unsigned char)f->text[i] < 0x20)
            f->text[i] = ' ';
    r->n++;
}

static void add_str(scan *s, const char *rule, const char *path, int line, const char *text)
{
    add(s, rule, path, line, text, strlen(text));
}

void integ_report_dispose(integ_report *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].path);
        free(r->v[i].text);
    }
    free(r->v);
    memset(r, 0, sizeof *r);
}

/* ---- paths ------------------------------------------------------------ */

static const char *base_name(const char *p)
{
    const char *b = strrchr(p, '/');
    return b ? b + 1 : p;
}

/* 1 when some '/'-separated component of p satisfies pred */
static int any_component(const char *p, int (*pred)(const char *c, size_t n))
{
    while (*p) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (pred(p, n))
            return 1;
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}

static int comp_info_dir(const char *c, size_t n)
{
    return (n > 10 && !memcmp(c + n - 10, ".dist-info", 10)) || (n > 9 && !memcmp(c + n - 9, ".egg-info", 9));
}
static int comp_pycache(const char *c, size_t n) { return n == 11 && !memcmp(c, "__pycache__", 11); }
static int comp_pytest_cache(const char *c, size_t n) { return n == 13 && !memcmp(c, ".pytest_cache", 13); }
static int comp_git(const char *c, size_t n) { return n >= 4 && !memcmp(c, ".git", 4); }

/* Under a protected path (test code): "tests/" is a prefix, "Makefile" a file. */
static int is_protected(const scan *s, const char *path)
{
    for (size_t i = 0; i < s->o->n_protected; i++) {
        const char *p = s->o->protected_paths[i];
        if (!p)
            continue;
        while (p[0] == '.' && p[1] == '/')
            p += 2;
        size_t n = strlen(p);
        if (!n)
            continue;
        if (p[n - 1] == '/' ? !strncmp(path, p, n) : !strcmp(path, p))
            return 1;
        if (p[n - 1] != '/' && !strncmp(path, p, n) && path[n] == '/') /* a folder given without '/' */
            return 1;
    }
    return 0;
}

static const char *const BUILD_FILES[] = {
    "Makefile",       "makefile",     "GNUmakefile", "CMakeLists.txt", "meson.build", "meson_options.txt",
    "meson.options",  "pyproject.toml", "setup.cfg", "setup.py",       "tox.ini",     "pytest.ini",
    ".pytest.ini",    "noxfile.py",   "configure",   "configure.ac",   "configure.in", "Makefile.am",
    "Makefile.in",    "build.ninja",  ".coveragerc", "CTestTestfile.cmake", NULL};

static int in_list(const char *s, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(s, list[i]))
            return 1;
    return 0;
}

static int is_object(const char *b)
{
    static const char *const SUF[] = {".o", ".a", ".so", ".obj", ".lib", ".dll", ".dylib", ".gch", ".pch", ".exe",
                                      ".lo", ".la", NULL};
    for (int i = 0; SUF[i]; i++)
        if (str_has_suffix(b, SUF[i]))
            return 1;
    return strstr(b, ".so.") != NULL; /* libx.so.1 */
}

/* ---- include dirs and shadow_header ------------------------------------ */

static void sys_add(scan *s, const char *d)
{
    int rc = VEC_GROW(s->sysdirs, s->sysalloc, s->nsys + 1, INTEG_SYSDIRS_MAX);
    if (rc < 0) {
        grow_failed(s, rc, "system include folders", NULL, INTEG_SYSDIRS_MAX);
        return;
    }
    if (!(s->sysdirs[s->nsys] = strdup(d))) {
        s->rc = RL_ENOMEM;
        return;
    }
    s->nsys++;
}

static void sys_load(scan *s)
{
    if (s->sys_done)
        return;
    s->sys_done = 1;
    if (s->o->include_dirs) {
        for (size_t i = 0; i < s->o->n_include_dirs; i++)
            sys_add(s, s->o->include_dirs[i]);
        return;
    }
    sys_add(s, "/usr/include");
    sys_add(s, "/usr/local/include");
    static const char *const GLOBS[] = {"/usr/include/*-linux-gnu*", "/usr/lib/gcc/*/*/include",
                                        "/usr/lib/gcc/*/*/include-fixed", "/usr/local/include/*-linux-gnu*", NULL};
    for (int i = 0; GLOBS[i]; i++) {
        glob_t g;
        if (glob(GLOBS[i], GLOB_ONLYDIR, NULL, &g) == 0)
            for (size_t k = 0; k < g.gl_pathc; k++)
                sys_add(s, g.gl_pathv[k]);
        globfree(&g);
    }
}

static const char *const FRAMEWORK_HEADERS[] = {
    "check.h",   "check_stdint.h", "unity.h",   "unity_internals.h", "unity_config.h", "cmocka.h",
    "cmocka_private.h", "cmockery.h", "munit.h", "greatest.h",      "acutest.h",      "utest.h",
    "minunit.h", "ctest.h",        "CUnit.h",   "criterion.h",       "catch.hpp",      "doctest.h",
    "gtest.h",   NULL};

static int is_header(const char *b)
{
    return str_has_suffix(b, ".h") || str_has_suffix(b, ".hh") || str_has_suffix(b, ".hpp") || str_has_suffix(b, ".hxx") ||
           str_has_suffix(b, ".H");
}

/* A new header: its base name a framework header, or any trailing part of
 * its path ("types.h", "sys/types.h") present in a system include dir. */
static void check_shadow_header(scan *s, const char *path)
{
    const char *b = base_name(path);
    if (in_list(b, FRAMEWORK_HEADERS)) {
        add_str(s, INTEG_SHADOW_HEADER, path, 0, "new header named like a test framework's");
        return;
    }
    sys_load(s);
    const char *suffix = path;
    for (;;) {
        for (size_t i = 0; i < s->nsys; i++) {
            char full[PATH_MAX];
            struct stat st;
            if ((size_t)snprintf(full, sizeof full, "%s/%s", s->sysdirs[i], suffix) < sizeof full &&
                lstat(full, &st) == 0) {
                char msg[PATH_MAX + 64];
                snprintf(msg, sizeof msg, "new header shadows %s", full);
                add_str(s, INTEG_SHADOW_HEADER, path, 0, msg);
                return;
            }
        }
        const char *sl = strchr(suffix, '/');
        if (!sl)
            break;
        suffix = sl + 1;
    }
}

static const char *const PY_FRAMEWORK_MODULES[] = {"pytest", "_pytest", "pluggy", "unittest", "py", NULL};

/* A new Python module or package named like a test framework's module
 * (anywhere: any folder may be on sys.path), or a new top-level module
 * named like a standard-library one. */
static void check_shadow_module(scan *s, const char *path)
{
    const char *p = path;
    while (*p) { /* every component: "pytest.py" or "_pytest/" */
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (!e && n > 3 && !memcmp(p + n - 3, ".py", 3))
            n -= 3;
        for (int i = 0; PY_FRAMEWORK_MODULES[i]; i++)
            if (strlen(PY_FRAMEWORK_MODULES[i]) == n && !memcmp(p, PY_FRAMEWORK_MODULES[i], n) &&
                (e || str_has_suffix(path, ".py"))) {
                add_str(s, INTEG_SHADOW_HEADER, path, 0, "new module named like a test framework's");
                return;
            }
        if (!e)
            break;
        p = e + 1;
    }
    if (strchr(path, '/') || !str_has_suffix(path, ".py") || !strcmp(path, "__init__.py"))
        return;
    char mod[NAME_MAX + 1];
    snprintf(mod, sizeof mod, "%.*s", (int)(strlen(path) - 3), path);
    char pat[PATH_MAX];
    snprintf(pat, sizeof pat, "/usr/lib/python3*/%s.py", mod);
    glob_t g;
    int hit = glob(pat, 0, NULL, &g) == 0;
    globfree(&g);
    if (!hit) {
        snprintf(pat, sizeof pat, "/usr/lib/python3*/%s/__init__.py", mod);
        hit = glob(pat, 0, NULL, &g) == 0;
        globfree(&g);
    }
    if (!hit) {
        snprintf(pat, sizeof pat, "/usr/lib/python3*/lib-dynload/%s.*", mod);
        hit = glob(pat, 0, NULL, &g) == 0;
        globfree(&g);
    }
    if (hit)
        add_str(s, INTEG_SHADOW_HEADER, path, 0, "new top-level module named like a standard-library one");
}

/* ---- lexing: comments and strings blanked ------------------------------ */

static int ident(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

typedef enum lang { L_NONE, L_C, L_C_ASM, L_PY } lang;

static lang lang_of(const char *path)
{
    const char *b = base_name(path);
    static const char *const C[] = {".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx", ".C", ".H",
                                    ".inc", ".def", ".i", NULL};
    for (int i = 0; C[i]; i++)
        if (str_has_suffix(b, C[i]))
            return L_C;
    if (str_has_suffix(b, ".s") || str_has_suffix(b, ".S") || str_has_suffix(b, ".asm"))
        return L_C_ASM; /* lexed like C (the preprocessor runs on .S) */
    if (str_has_suffix(b, ".py") || str_has_suffix(b, ".pyw") || str_has_suffix(b, ".pyi"))
        return L_PY;
    return L_NONE;
}

/* Lexer states that may carry over a hunk's first line. */
enum { LX_CODE, LX_BLOCK, LX_TRIPLE_DQ, LX_TRIPLE_SQ };

/* C: nocom gets comments blanked, nostr also string and char contents.
 * Newlines are kept so lines stay aligned. Returns 1 when a "*" "/" was
 * met in code (the text likely started inside a block comment). */
static int lex_c(const char *s, size_t n, char *nocom, char *nostr, int start)
{
    int st = start == LX_BLOCK ? 2 : 0, stray = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i], nx = i + 1 < n ? s[i + 1] : 0;
        nocom[i] = nostr[i] = c;
        switch (st) {
        case 0:
            if (c == '/' && nx == '/') {
                st = 1;
                nocom[i] = nostr[i] = ' ';
            } else if (c == '/' && nx == '*') {
                st = 2;
                nocom[i] = nostr[i] = ' ';
                i++;
                nocom[i] = nostr[i] = ' ';
            } else if (c == '*' && nx == '/') {
                stray = 1;
            } else if (c == '"') {
                st = 3;
            } else if (c == '\'') {
                st = 4;
            }
            break;
        case 1:
            if (c == '\n' && !(i && s[i - 1] == '\\'))
                st = 0;
            else
                nocom[i] = nostr[i] = ' ';
            break;
        case 2:
            if (c == '*' && nx == '/') {
                nocom[i] = nostr[i] = ' ';
                i++;
                nocom[i] = nostr[i] = ' ';
                st = 0;
            } else if (c != '\n') {
                nocom[i] = nostr[i] = ' ';
            }
            break;
        default: { /* string (3) or char (4) */
            char q = st == 3 ? '"' : '\'';
            if (c == '\n') {
                st = 0;
            } else if (c == '\\' && i + 1 < n && nx != '\n') {
                nostr[i] = ' ';
                i++;
                nocom[i] = s[i];
                nostr[i] = ' ';
            } else if (c == q) {
                st = 0;
            } else {
                nostr[i] = ' ';
            }
        }
        }
    }
    return stray;
}

/* Python: '#' comments; strings with prefixes (r, b, u, f), single or
 * triple quoted. f-strings keep their text in nostr (their braces hold
 * code). Returns the state at the end (LX_CODE or a triple quote). */
static int lex_py(const char *s, size_t n, char *nocom, char *nostr, int start)
{
    int st = start == LX_TRIPLE_DQ || start == LX_TRIPLE_SQ ? 2 : 0;
    char q = start == LX_TRIPLE_SQ ? '\'' : '"';
    int triple = st == 2, fstr = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        nocom[i] = nostr[i] = c;
        if (st == 0) {
            if (c == '#') {
                st = 1;
                nocom[i] = nostr[i] = ' ';
            } else if (c == '"' || c == '\'') {
                q = c;
                fstr = 0;
                size_t k = i; /* prefix letters, then not an identifier */
                while (k > 0 && i - k < 2 && s[k - 1] && strchr("rRbBuUfF", s[k - 1]))
                    k--;
                if (k == 0 || !ident(s[k - 1]))
                    for (size_t j = k; j < i; j++)
                        fstr |= s[j] == 'f' || s[j] == 'F';
                triple = i + 2 < n && s[i + 1] == q && s[i + 2] == q;
                if (triple) {
                    i += 2;
                    nocom[i - 1] = nostr[i - 1] = q;
                    nocom[i] = nostr[i] = q;
                }
                st = 2;
            }
        } else if (st == 1) {
            if (c == '\n')
                st = 0;
            else
                nocom[i] = nostr[i] = ' ';
        } else {
            if (c == '\\' && i + 1 < n) {
                if (!fstr)
                    nostr[i] = ' ';
                i++;
                nocom[i] = s[i];
                nostr[i] = fstr || s[i] == '\n' ? s[i] : ' ';
            } else if (c == q && (!triple || (i + 2 < n && s[i + 1] == q && s[i + 2] == q))) {
                if (triple) {
                    nocom[i + 1] = nostr[i + 1] = q;
                    nocom[i + 2] = nostr[i + 2] = q;
                    i += 2;
                }
                st = 0;
            } else if (c == '\n' && !triple) {
                st = 0;
            } else if (c != '\n' && !fstr) {
                nostr[i] = ' ';
            }
        }
    }
    return st == 2 && triple ? (q == '"' ? LX_TRIPLE_DQ : LX_TRIPLE_SQ) : LX_CODE;
}

/* ---- matching helpers --------------------------------------------------- */


/* The lexed text of one unit (a whole file, or a hunk's new side). */
typedef struct unit {
    const char *raw, *nocom, *nostr;
    size_t len;
} unit;

/* Next occurrence of word w in s[from, to) as a whole identifier; -1 if none. */
static long find_word(const char *s, size_t from, size_t to, const char *w)
{
    size_t m = strlen(w);
    for (size_t i = from; i + m <= to; i++)
        if (s[i] == w[0] && !memcmp(s + i, w, m) && (i == 0 || !ident(s[i - 1])) &&
            (i + m >= to || !ident(s[i + m])))
            return (long)i;
    return -1;
}

static size_t skip_ws(const char *s, size_t i, size_t to)
{
    while (i < to && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\\'))
        i++;
    return i;
}

/* Index of the first non-blank before i on the same line, or -1. */
static long prev_char(const char *s, size_t line_start, size_t i)
{
    while (i > line_start && (s[i - 1] == ' ' || s[i - 1] == '\t'))
        i--;
    return i > line_start ? (long)(i - 1) : -1;
}

/* A member access or a definition precedes position p ("x.exit(", "def exit("). */
static int member_or_def(const char *s, size_t ls, size_t p)
{
    long q = prev_char(s, ls, p);
    if (q < 0)
        return 0;
    if (s[q] == '.' || (s[q] == '>' && q > 0 && s[q - 1] == '-'))
        return 1;
    if (q >= 2 && !memcmp(s + q - 2, "def", 3) && (q == 2 || !ident(s[q - 3])))
        return 1;
    return 0;
}

/* The word w called on the line [ls, le): w, blanks, '('. */
static int has_call(const char *s, size_t ls, size_t le, const char *w)
{
    for (long p = find_word(s, ls, le, w); p >= 0; p = find_word(s, (size_t)p + 1, le, w)) {
        size_t a = skip_ws(s, (size_t)p + strlen(w), le);
        if (a < le && s[a] == '(' && !member_or_def(s, ls, (size_t)p))
            return 1;
    }
    return 0;
}

/* "mod.name" with word boundaries, blanks allowed around the dot. */
static int has_attr(const char *s, size_t ls, size_t le, const char *mod, const char *name)
{
    for (long p = find_word(s, ls, le, mod); p >= 0; p = find_word(s, (size_t)p + 1, le, mod)) {
        size_t a = skip_ws(s, (size_t)p + strlen(mod), le);
        if (a < le && s[a] == '.') {
            a = skip_ws(s, a + 1, le);
            if (find_word(s, a, le, name) == (long)a)
                return 1;
        }
    }
    return 0;
}

/* ".name" on any object, the module possibly imported under another name
 * ("import os as o; o._exit(0)"). */
static int has_any_attr(const char *s, size_t ls, size_t le, const char *name)
{
    for (long p = find_word(s, ls, le, name); p >= 0; p = find_word(s, (size_t)p + 1, le, name)) {
        size_t b = (size_t)p;
        while (b > ls && (s[b - 1] == ' ' || s[b - 1] == '\t'))
            b--;
        if (b > ls && s[b - 1] == '.')
            return 1;
    }
    return 0;
}

static int has_sub(const char *s, size_t ls, size_t le, const char *sub)
{
    size_t m = strlen(sub);
    for (size_t i = ls; i + m <= le; i++)
        if (!memcmp(s + i, sub, m))
            return 1;
    return 0;
}

/* ---- C rules ------------------------------------------------------------ */

static const char *const C_EXITS[] = {"exit", "_exit", "_Exit", "quick_exit", "abort", "kill", "killpg",
                                      "raise", "tgkill", "tkill", NULL};
static const char *const C_SYS_EXITS[] = {"SYS_exit", "SYS_exit_group", "__NR_exit", "__NR_exit_group",
                                          "SYS_kill", "__NR_kill", "SYS_tgkill", "__NR_tgkill", "SYS_tkill",
                                          "__NR_tkill", NULL};
static const char *const C_ATEXITS[] = {"atexit", "on_exit", "at_quick_exit", "__cxa_atexit",
                                        "__cxa_thread_atexit", "__cxa_thread_atexit_impl", NULL};

/* Functions whose definition in non-test code interposes on the test
 * framework or on the C library's output and exit path. */
static const char *const INTERPOSE_NAMES[] = {
    "write", "writev", "pwrite", "fwrite", "fwrite_unlocked", "printf", "fprintf", "vprintf", "vfprintf",
    "dprintf", "vdprintf", "puts", "fputs", "fputs_unlocked", "putchar", "fputc", "putc", "fflush", "fclose",
    "fopen", "fopen64", "fdopen", "freopen", "open", "open64", "openat", "creat", "close", "dup", "dup2", "dup3",
    "exit", "_exit", "_Exit", "quick_exit", "abort", "atexit", "on_exit", "__cxa_atexit", "fork", "vfork",
    "waitpid", "wait", "wait3", "wait4", "waitid", "kill", "raise", "signal", "sigaction", "setjmp", "longjmp",
    "__libc_start_main", "main", "_init", "_fini", "_start", "__stack_chk_fail", "__assert_fail", "assert",
    "fail_unless", "fail_if", "fail", "mark_point", "START_TEST", "END_TEST", "RUN_TEST", NULL};
static const char *const INTERPOSE_PREFIXES[] = {"srunner_", "tcase_", "suite_", "ck_", "_ck_", "check_fork",
                                                 "check_waitpid", "TEST_ASSERT", "TEST_FAIL", "TEST_PASS",
                                                 "UNITY_", "Unity", "cmocka_", "_cmocka_", "munit_", "MUNIT_",
                                                 "assert_int_", "assert_string_", "assert_true", "assert_false",
                                                 "assert_null", "assert_non_null", "assert_ptr_", "assert_return_code",
                                                 "_assert_", NULL};

static int interpose_name(const char *s, size_t n)
{
    for (int i = 0; INTERPOSE_NAMES[i]; i++)
        if (strlen(INTERPOSE_NAMES[i]) == n && !memcmp(INTERPOSE_NAMES[i], s, n))
            return 1;
    for (int i = 0; INTERPOSE_PREFIXES[i]; i++) {
        size_t m = strlen(INTERPOSE_PREFIXES[i]);
        if (n >= m && !memcmp(INTERPOSE_PREFIXES[i], s, m))
            return 1;
    }
    return 0;
}

/* Position p in u->nostr starts identifier name (length n) followed by an
 * argument list: is it a function definition? After the matching ')',
 * attributes or macros may come, then '{' (definition) or anything else. */
static int is_definition(const unit *u, size_t ls, size_t p, size_t n)
{
    const char *s = u->nostr;
    if (member_or_def(s, ls, p))
        return 0;
    long q = prev_char(s, ls, p);
    if (q >= 0 && !ident(s[q]) && s[q] != '*' && s[q] != ')') /* "= f(", "(f(", ", f(" */
        return 0;
    size_t end = u->len, lim = p + n + INTEG_DEF_LOOKAHEAD < end ? p + n + INTEG_DEF_LOOKAHEAD : end;
    size_t i = skip_ws(s, p + n, lim);
    for (int lists = 0; lists < 8; lists++) {
        if (i >= lim || s[i] != '(')
            return 0;
        int depth = 0;
        for (; i < lim; i++) {
            if (s[i] == '(')
                depth++;
            else if (s[i] == ')' && --depth == 0)
                break;
        }
        if (i >= lim)
            return 0;
        i = skip_ws(s, i + 1, lim);
        while (i < lim && ident(s[i])) { /* __attribute__, __THROW, const, K&R */
            while (i < lim && ident(s[i]))
                i++;
            i = skip_ws(s, i, lim);
        }
        if (i < lim && s[i] == '{')
            return 1;
        if (i >= lim || s[i] != '(')
            return 0; /* ';' ',' ')' '=' ... */
    }
    return 0;
}

typedef struct line_ctx {
    scan *sc;
    const char *path;
    int lineno;
    int test; /* under a protected path */
    const unit *u;
    size_t ls, le; /* the line in the unit */
} line_ctx;

static void flag(line_ctx *c, const char *rule)
{
    add(c->sc, rule, c->path, c->lineno, c->u->raw + c->ls, c->le - c->ls);
}

/* A quoted string starting with an environment variable that steers the
 * loader, the test framework or Python. */
static int env_string(const char *nocom, size_t ls, size_t le)
{
    static const char *const VARS[] = {"LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "PYTEST_", "CK_", "PYTHONPATH",
                                       "PYTHONSTARTUP", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONNOUSERSITE", NULL};
    for (size_t i = ls; i < le; i++)
        if (nocom[i] == '"' || nocom[i] == '\'')
            for (int k = 0; VARS[k]; k++) {
                size_t m = strlen(VARS[k]);
                if (i + 1 + m <= le && !memcmp(nocom + i + 1, VARS[k], m))
                    return 1;
            }
    return 0;
}

static int at(const char *s, size_t i, size_t le, const char *w)
{
    size_t m = strlen(w);
    return i + m <= le && !memcmp(s + i, w, m);
}

/* A string literal holding a test runner's result text: Check's verbose
 * lines (":P:"), its summary ("Checks: ", "Failures: "), JUnit XML, TAP's
 * "ok N" lines. Library code has no reason to print them. */
static int result_string(const char *nocom, size_t ls, size_t le)
{
    static const char *const IN[] = {":P:", "Checks: ", "Failures: ", "<testcase", "<testsuite", "junit", "JUnit",
                                     NULL};
    int in = 0;
    char q = 0;
    for (size_t i = ls; i < le; i++) {
        char ch = nocom[i];
        if (!in && (ch == '"' || ch == '\'')) {
            in = 1;
            q = ch;
            if (at(nocom, i + 1, le, "ok %") || at(nocom, i + 1, le, "ok 1") || at(nocom, i + 1, le, "not ok"))
                return 1;
            continue;
        }
        if (in && ch == '\\') {
            i++;
            continue;
        }
        if (in && ch == q) {
            in = 0;
            continue;
        }
        if (in)
            for (int k = 0; IN[k]; k++) {
                if (at(nocom, i, le, IN[k]))
                    return 1;
            }
    }
    return 0;
}

/* name used as a value, not called: "f = exit;", "g(abort)", "&_exit" */
static int used_as_value(const char *s, size_t ls, size_t le, const char *w)
{
    for (long p = find_word(s, ls, le, w); p >= 0; p = find_word(s, (size_t)p + 1, le, w)) {
        long q = prev_char(s, ls, (size_t)p);
        size_t a = skip_ws(s, (size_t)p + strlen(w), le);
        int before = q >= 0 && (s[q] == '=' || s[q] == '(' || s[q] == ',' || s[q] == '&' || s[q] == '?' ||
                                s[q] == ':' || s[q] == '{');
        int after = a >= le || s[a] == ';' || s[a] == ')' || s[a] == ',' || s[a] == '}';
        if (before && after)
            return 1;
    }
    return 0;
}

static void c_line(line_ctx *c)
{
    const unit *u = c->u;
    const char *ns = u->nostr, *nc = u->nocom;
    size_t ls = c->ls, le = c->le;
    /* constructor */
    int ctor = find_word(ns, ls, le, "__constructor__") >= 0 || find_word(ns, ls, le, "__destructor__") >= 0 ||
               has_sub(ns, ls, le, "gnu::constructor") || has_sub(ns, ls, le, "gnu::destructor");
    static const char *const CD[] = {"constructor", "destructor", NULL};
    for (int k = 0; !ctor && CD[k]; k++)
        for (long p = find_word(ns, ls, le, CD[k]); p >= 0 && !ctor; p = find_word(ns, (size_t)p + 1, le, CD[k])) {
            /* an attribute list item: "(constructor", ", destructor(101)" in an __attribute__ */
            long q = prev_char(ns, ls, (size_t)p);
            size_t a = skip_ws(ns, (size_t)p + strlen(CD[k]), le);
            int item = (q < 0 || ns[q] == '(' || ns[q] == ',') &&
                       (a >= le || ns[a] == ')' || ns[a] == ',' || ns[a] == '(');
            size_t back = ls > INTEG_DEF_LOOKAHEAD ? ls - INTEG_DEF_LOOKAHEAD : 0;
            ctor = item && (has_sub(ns, back, le, "__attribute") || has_sub(ns, back, le, "[["));
        }
    static const char *const SECTIONS[] = {".init_array", ".fini_array", ".preinit_array", ".ctors", ".dtors",
                                           NULL};
    for (int k = 0; !ctor && SECTIONS[k]; k++) {
        size_t m = strlen(SECTIONS[k]);
        for (size_t i = ls; i + m <= le && !ctor; i++)
            ctor = !memcmp(nc + i, SECTIONS[k], m) && (i + m >= le || !ident(nc[i + m]));
    }
    if (!ctor && (has_sub(nc, ls, le, "\".init\"") || has_sub(nc, ls, le, "\".fini\"") ||
                  has_sub(nc, ls, le, ".section .init") || has_sub(nc, ls, le, ".section .fini")))
        ctor = 1;
    size_t h = skip_ws(nc, ls, le);
    if (!ctor && h < le && nc[h] == '#') {
        size_t d = skip_ws(nc, h + 1, le);
        if (find_word(nc, d, le, "pragma") == (long)d) {
            size_t a = skip_ws(nc, d + 6, le);
            ctor = find_word(nc, a, le, "init") == (long)a || find_word(nc, a, le, "fini") == (long)a ||
                   find_word(nc, a, le, "startup") == (long)a;
        }
    }
    if (!ctor)
        for (long p = find_word(ns, ls, le, "_init"); p >= 0 && !ctor; p = find_word(ns, (size_t)p + 1, le, "_init"))
            ctor = is_definition(u, ls, (size_t)p, 5);
    if (!ctor)
        for (long p = find_word(ns, ls, le, "_fini"); p >= 0 && !ctor; p = find_word(ns, (size_t)p + 1, le, "_fini"))
            ctor = is_definition(u, ls, (size_t)p, 5);
    if (ctor)
        flag(c, INTEG_CONSTRUCTOR);
    /* atexit */
    for (int k = 0; C_ATEXITS[k]; k++)
        if (has_call(ns, ls, le, C_ATEXITS[k])) {
            flag(c, INTEG_ATEXIT);
            break;
        }
    /* include_next */
    if (h < le && nc[h] == '#') {
        size_t d = skip_ws(nc, h + 1, le);
        if (find_word(nc, d, le, "include_next") == (long)d)
            flag(c, INTEG_INCLUDE_NEXT);
    }
    if (c->test)
        return;
    /* exit_call */
    int ex = 0;
    for (int k = 0; !ex && C_EXITS[k]; k++)
        ex = has_call(ns, ls, le, C_EXITS[k]);
    for (int k = 0; !ex && C_SYS_EXITS[k]; k++)
        ex = find_word(ns, ls, le, C_SYS_EXITS[k]) >= 0;
    for (int k = 0; !ex && C_EXITS[k]; k++) /* through a pointer: "void (*f)(int) = exit;" */
        ex = used_as_value(ns, ls, le, C_EXITS[k]);
    if (!ex && (find_word(ns, ls, le, "asm") >= 0 || find_word(ns, ls, le, "__asm__") >= 0 ||
                find_word(ns, ls, le, "__asm") >= 0 || lang_of(c->path) == L_C_ASM))
        ex = has_sub(nc, ls, le, "syscall") || has_sub(nc, ls, le, "int $0x80") || has_sub(nc, ls, le, "int 0x80");
    if (ex)
        flag(c, INTEG_EXIT_CALL);
    /* interpose: definitions, macros, renamed symbols, preload tricks */
    int ip = 0;
    for (size_t i = ls; i < le && !ip; i++) {
        if (!ident(ns[i]) || (i > ls && ident(ns[i - 1])) || (ns[i] >= '0' && ns[i] <= '9'))
            continue;
        size_t e = i;
        while (e < le && ident(ns[e]))
            e++;
        if (interpose_name(ns + i, e - i) && is_definition(u, ls, i, e - i))
            ip = 1;
        i = e - 1;
    }
    if (!ip && h < le && nc[h] == '#') {
        size_t d = skip_ws(nc, h + 1, le);
        int def = find_word(nc, d, le, "define") == (long)d, undef = find_word(nc, d, le, "undef") == (long)d;
        if (def || undef) {
            size_t a = skip_ws(nc, d + (def ? 6 : 5), le), e = a;
            while (e < le && ident(nc[e]))
                e++;
            ip = e > a && interpose_name(nc + a, e - a);
        }
    }
    if (!ip) {
        static const char *const RENAMES[] = {"asm", "__asm__", "__asm", "alias", "__alias__", "weakref",
                                              "__weakref__", "symver", "__symver__", NULL};
        for (int k = 0; !ip && RENAMES[k]; k++)
            for (long p = find_word(nc, ls, le, RENAMES[k]); p >= 0 && !ip;
                 p = find_word(nc, (size_t)p + 1, le, RENAMES[k])) {
                size_t a = skip_ws(nc, (size_t)p + strlen(RENAMES[k]), le);
                if (a < le && nc[a] == '(') {
                    a = skip_ws(nc, a + 1, le);
                    if (a < le && nc[a] == '"') {
                        size_t e = a + 1;
                        while (e < le && (ident(nc[e]) || nc[e] == '@' || nc[e] == '.'))
                            e++;
                        size_t n = e - a - 1;
                        const char *at = memchr(nc + a + 1, '@', n);
                        ip = interpose_name(nc + a + 1, at ? (size_t)(at - nc - a - 1) : n);
                    }
                }
            }
    }
    if (!ip && h < le && nc[h] == '#') { /* #pragma weak printf = mine, #pragma redefine_extname */
        size_t d = skip_ws(nc, h + 1, le);
        if (find_word(nc, d, le, "pragma") == (long)d) {
            size_t a = skip_ws(nc, d + 6, le);
            if (find_word(nc, a, le, "weak") == (long)a || find_word(nc, a, le, "redefine_extname") == (long)a)
                for (size_t i = a; i < le && !ip; i++) {
                    if (!ident(nc[i]) || (i > ls && ident(nc[i - 1])))
                        continue;
                    size_t e = i;
                    while (e < le && ident(nc[e]))
                        e++;
                    ip = interpose_name(nc + i, e - i);
                    i = e - 1;
                }
        }
    }
    if (!ip)
        ip = find_word(ns, ls, le, "RTLD_NEXT") >= 0 || has_call(ns, ls, le, "dup2") ||
             has_call(ns, ls, le, "dup3") || has_call(ns, ls, le, "freopen") || has_call(ns, ls, le, "dlopen") ||
             has_call(ns, ls, le, "dlsym") || env_string(nc, ls, le) || result_string(nc, ls, le);
    if (ip)
        flag(c, INTEG_INTERPOSE);
}

/* ---- Python rules ------------------------------------------------------- */

/* "import a, b as c" / "from a.b import c": 1 when module m (or m.x) is imported. */
static int py_imports(const char *s, size_t ls, size_t le, const char *m)
{
    size_t a = skip_ws(s, ls, le);
    size_t ml = strlen(m);
    if (find_word(s, a, le, "from") == (long)a) {
        a = skip_ws(s, a + 4, le);
        return find_word(s, a, le, m) == (long)a || (a + ml < le && !memcmp(s + a, m, ml) && s[a + ml] == '.');
    }
    /* "import x" anywhere on the line (after ';' too) */
    for (long p = find_word(s, ls, le, "import"); p >= 0; p = find_word(s, (size_t)p + 1, le, "import")) {
        size_t i = (size_t)p + 6;
        while (i < le && s[i] != ';') {
            i = skip_ws(s, i, le);
            if (find_word(s, i, le, m) == (long)i)
                return 1;
            while (i < le && s[i] != ',' && s[i] != ';')
                i++;
            if (i < le && s[i] == ',')
                i++;
        }
    }
    return 0;
}

/* "__import__('m')" or "import_module('m')" with m quoted (nocom view). */
static int py_dyn_import(const char *nc, size_t ls, size_t le, const char *m)
{
    static const char *const F[] = {"__import__", "import_module", NULL};
    size_t ml = strlen(m);
    for (int k = 0; F[k]; k++)
        for (long p = find_word(nc, ls, le, F[k]); p >= 0; p = find_word(nc, (size_t)p + 1, le, F[k])) {
            size_t a = skip_ws(nc, (size_t)p + strlen(F[k]), le);
            if (a < le && nc[a] == '(') {
                a = skip_ws(nc, a + 1, le);
                if (a + ml + 1 < le && (nc[a] == '"' || nc[a] == '\'') && !memcmp(nc + a + 1, m, ml) &&
                    (nc[a + 1 + ml] == nc[a] || nc[a + 1 + ml] == '.'))
                    return 1;
            }
        }
    return 0;
}

/* "x = ...", "x.y = ...", "x += ..." right after position a (not "=="). */
static int assigned_after(const char *s, size_t a, size_t le)
{
    a = skip_ws(s, a, le);
    while (a < le && (s[a] == '.' || ident(s[a]))) /* sys.stdout.write = ... */
        a++;
    a = skip_ws(s, a, le);
    return a < le && s[a] == '=' && (a + 1 >= le || s[a + 1] != '=');
}

static void py_line(line_ctx *c)
{
    const char *ns = c->u->nostr, *nc = c->u->nocom;
    size_t ls = c->ls, le = c->le;
    /* atexit */
    if (find_word(ns, ls, le, "atexit") >= 0 || py_dyn_import(nc, ls, le, "atexit"))
        flag(c, INTEG_ATEXIT);
    if (c->test)
        return;
    /* exit_call */
    int ex = has_attr(ns, ls, le, "os", "_exit") || has_attr(ns, ls, le, "sys", "exit") ||
             has_attr(ns, ls, le, "os", "abort") || has_attr(ns, ls, le, "os", "kill") ||
             has_attr(ns, ls, le, "os", "killpg") || has_attr(ns, ls, le, "signal", "raise_signal") ||
             has_attr(ns, ls, le, "signal", "pthread_kill") || has_call(ns, ls, le, "exit") ||
             has_call(ns, ls, le, "quit") || has_call(ns, ls, le, "SystemExit") ||
             has_call(ns, ls, le, "KeyboardInterrupt");
    /* Names no other object carries: the os module's, under any alias. A
     * process replaced by exec ends with the status its new image picks. */
    static const char *const OS_ONLY[] = {"_exit", "execv", "execve", "execvp", "execvpe", "execl", "execle",
                                          "execlp", "execlpe", "posix_spawn", "posix_spawnp", "killpg", NULL};
    for (int k = 0; !ex && OS_ONLY[k]; k++)
        ex = has_any_attr(ns, ls, le, OS_ONLY[k]);
    for (long p = find_word(ns, ls, le, "raise"); !ex && p >= 0; p = find_word(ns, (size_t)p + 1, le, "raise")) {
        size_t a = skip_ws(ns, (size_t)p + 5, le);
        ex = find_word(ns, a, le, "KeyboardInterrupt") == (long)a || find_word(ns, a, le, "SystemExit") == (long)a;
    }
    if (!ex && find_word(ns, ls, le, "getattr") >= 0) { /* getattr(os, "_exit") */
        static const char *const Q[] = {"\"_exit\"", "'_exit'", "\"exit\"", "'exit'", "\"abort\"", "'abort'",
                                        "\"kill\"", "'kill'", NULL};
        for (int k = 0; !ex && Q[k]; k++)
            ex = has_sub(nc, ls, le, Q[k]);
    }
    if (!ex) {
        size_t a = skip_ws(ns, ls, le);
        if (find_word(ns, a, le, "from") == (long)a) {
            size_t m = skip_ws(ns, a + 4, le);
            if (find_word(ns, m, le, "os") == (long)m || find_word(ns, m, le, "sys") == (long)m ||
                find_word(ns, m, le, "signal") == (long)m) {
                long imp = find_word(ns, m, le, "import");
                static const char *const N[] = {"_exit", "exit", "abort", "kill", "killpg", "raise_signal",
                                                "pthread_kill", "*", NULL};
                for (int k = 0; imp >= 0 && !ex && N[k]; k++)
                    ex = k == 7 ? has_sub(ns, (size_t)imp, le, "*") : find_word(ns, (size_t)imp + 6, le, N[k]) >= 0;
            }
        }
    }
    if (ex)
        flag(c, INTEG_EXIT_CALL);
    /* interpose */
    static const char *const MODS[] = {"pytest", "_pytest", "unittest", "pluggy", "builtins", "__builtin__", NULL};
    int ip = 0;
    for (int k = 0; !ip && MODS[k]; k++)
        ip = py_imports(ns, ls, le, MODS[k]) || py_dyn_import(nc, ls, le, MODS[k]);
    if (!ip)
        ip = find_word(ns, ls, le, "__builtins__") >= 0 || find_word(ns, ls, le, "pytest_plugins") >= 0 ||
             has_attr(ns, ls, le, "sys", "modules") || has_attr(ns, ls, le, "sys", "meta_path") ||
             has_attr(ns, ls, le, "sys", "path_hooks") || has_attr(ns, ls, le, "sys", "settrace") ||
             has_attr(ns, ls, le, "sys", "setprofile") || has_attr(ns, ls, le, "sys", "_getframe") ||
             has_attr(ns, ls, le, "sys", "addaudithook") || has_attr(ns, ls, le, "sys", "__stdout__") ||
             has_attr(ns, ls, le, "sys", "__stderr__") || has_attr(ns, ls, le, "threading", "settrace") ||
             has_attr(ns, ls, le, "inspect", "currentframe") || has_attr(ns, ls, le, "inspect", "stack") ||
             has_attr(ns, ls, le, "os", "dup2") || find_word(ns, ls, le, "redirect_stdout") >= 0 ||
             find_word(ns, ls, le, "redirect_stderr") >= 0 || has_sub(ns, ls, le, "setattr(sys") ||
             has_attr(ns, ls, le, "gc", "get_objects") || has_attr(ns, ls, le, "gc", "get_referrers") ||
             py_imports(ns, ls, le, "ctypes") || has_call(ns, ls, le, "exec") || has_call(ns, ls, le, "eval") ||
             env_string(nc, ls, le) || result_string(nc, ls, le);
    static const char *const STREAMS[] = {"stdout", "stderr", "excepthook", "displayhook", NULL};
    for (int k = 0; !ip && STREAMS[k]; k++)
        for (long p = find_word(ns, ls, le, "sys"); p >= 0 && !ip; p = find_word(ns, (size_t)p + 1, le, "sys")) {
            size_t a = skip_ws(ns, (size_t)p + 3, le);
            if (a < le && ns[a] == '.') {
                a = skip_ws(ns, a + 1, le);
                if (find_word(ns, a, le, STREAMS[k]) == (long)a)
                    ip = assigned_after(ns, a + strlen(STREAMS[k]), le);
            }
        }
    for (long p = find_word(ns, ls, le, "def"); p >= 0 && !ip; p = find_word(ns, (size_t)p + 1, le, "def")) {
        size_t a = skip_ws(ns, (size_t)p + 3, le);
        ip = a + 7 <= le && !memcmp(ns + a, "pytest_", 7);
    }
    if (ip)
        flag(c, INTEG_INTERPOSE);
}

/* ---- one file of the diff ------------------------------------------------ */

typedef struct added {
    int lineno;
    const char *text; /* in the patch, without the '+' */
    size_t len;
} added;

typedef struct hunk {
    const char *start; /* first line after the @@ header */
    int new_start;
    int old_n, new_n;
} hunk;

typedef struct dfile {
    char *path;     /* new path, a/ b/ stripped */
    int is_new, is_deleted, binary;
    unsigned mode;  /* new mode (octal), 0 unknown */
    hunk *hunks;
    size_t nh, caph;
    added *add;
    size_t na, capa;
} dfile;

static void dfile_reset(dfile *f)
{
    free(f->path);
    free(f->hunks);
    free(f->add);
    memset(f, 0, sizeof *f);
}

/* Line rules over the added lines, lexed within unit u whose line k
 * starts at offs[k]; lines[k] = new-side number of unit line k, or 0. */
static void scan_unit(scan *sc, const dfile *f, lang lg, int test, const unit *u, const size_t *offs,
                      const int *linenos, size_t nlines, const unsigned char *is_added)
{
    for (size_t k = 0; k < nlines; k++) {
        if (!is_added[k])
            continue;
        size_t ls = offs[k], le = k + 1 < nlines ? offs[k + 1] : u->len;
        while (le > ls && (u->raw[le - 1] == '\n' || u->raw[le - 1] == '\r'))
            le--;
        line_ctx c = {sc, f->path, linenos[k], test, u, ls, le};
        if (lg == L_PY)
            py_line(&c);
        else
            c_line(&c);
    }
}

typedef struct lexed {
    char *nocom, *nostr;
    size_t *offs;
    int *linenos;
    unsigned char *is_added;
    size_t n;
} lexed;

static void lexed_free(lexed *l)
{
    free(l->nocom);
    free(l->nostr);
    free(l->offs);
    free(l->linenos);
    free(l->is_added);
    memset(l, 0, sizeof *l);
}

static int lexed_alloc(lexed *l, size_t len, size_t lines)
{
    l->nocom = malloc(len + 1);
    l->nostr = malloc(len + 1);
    l->offs = calloc(lines + 1, sizeof *l->offs);
    l->linenos = calloc(lines + 1, sizeof *l->linenos);
    l->is_added = calloc(lines + 1, 1);
    return l->nocom && l->nostr && l->offs && l->linenos && l->is_added ? 0 : -1;
}

static int lex(lang lg, const char *s, size_t n, char *nocom, char *nostr, int start)
{
    if (lg != L_PY)
        return lex_c(s, n, nocom, nostr, start);
    return lex_py(s, n, nocom, nostr, start);
}

/* Reads tree/path (a regular file, no links followed, no blocking) if
 * small enough; NULL otherwise. */
static char *read_tree_file(const char *tree, const char *path, size_t *len)
{
    int dfd = open(tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return NULL;
    /* each component without following links */
    char *copy = strdup(path);
    int fd = -1, cur = dfd;
    char *save = NULL, *tok = copy ? strtok_r(copy, "/", &save) : NULL;
    while (tok && strcmp(tok, "..")) {
        char *next = strtok_r(NULL, "/", &save);
        int nfd = openat(cur, tok, (next ? O_DIRECTORY : 0) | O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (cur != dfd)
            close(cur);
        cur = dfd;
        if (nfd < 0)
            break;
        if (!next) {
            fd = nfd;
            break;
        }
        cur = nfd;
        tok = next;
    }
    if (cur != dfd)
        close(cur);
    close(dfd);
    free(copy);
    if (fd < 0)
        return NULL;
    struct stat st;
    char *buf = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= (off_t)INTEG_FILE_MAX &&
        (buf = malloc((size_t)st.st_size + 1))) {
        size_t got = 0;
        ssize_t k;
        while (got < (size_t)st.st_size && (k = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
            got += (size_t)k;
        buf[got] = '\0';
        *len = got;
    }
    close(fd);
    return buf;
}

/* Whole-file lexing: the tree's copy of the file, when every added line is
 * where the diff says it is. 0 done, -1 not usable (the hunks are lexed). */
static int lines_from_tree(scan *sc, const dfile *f, lang lg, int test)
{
    if (!sc->o->tree_dir || !f->na)
        return -1;
    size_t len = 0;
    char *text = read_tree_file(sc->o->tree_dir, f->path, &len);
    if (!text)
        return -1;
    size_t nlines = 1;
    for (size_t i = 0; i < len; i++)
        nlines += text[i] == '\n';
    lexed l = {0};
    int rc = -1;
    if (lexed_alloc(&l, len, nlines) < 0) {
        sc->rc = RL_ENOMEM;
        goto out;
    }
    size_t k = 0;
    l.offs[k++] = 0;
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\n' && i + 1 < len)
            l.offs[k++] = i + 1;
    l.n = k;
    for (size_t j = 0; j < k; j++)
        l.linenos[j] = (int)j + 1;
    for (size_t a = 0; a < f->na; a++) {
        const added *ad = &f->add[a];
        size_t idx = (size_t)ad->lineno - 1;
        if (ad->lineno < 1 || idx >= l.n)
            goto out;
        size_t ls = l.offs[idx], le = idx + 1 < l.n ? l.offs[idx + 1] : len;
        size_t tl = ad->len;
        while (le > ls && text[le - 1] == '\n')
            le--;
        while (tl && (ad->text[tl - 1] == '\n'))
            tl--;
        if (le - ls != tl || memcmp(text + ls, ad->text, tl))
            goto out;
        l.is_added[idx] = 1;
    }
    lex(lg, text, len, l.nocom, l.nostr, LX_CODE);
    unit u = {text, l.nocom, l.nostr, len};
    scan_unit(sc, f, lg, test, &u, l.offs, l.linenos, l.n, l.is_added);
    rc = 0;
out:
    lexed_free(&l);
    free(text);
    return rc;
}

/* The hunk's new side (context and added lines), lexed alone. A hunk may
 * begin inside a block comment or a triple-quoted string: a stray comment
 * end in C, or a Python text that ends inside a triple quote, makes the
 * other start state the likelier one. */
static void lines_from_hunk(scan *sc, const dfile *f, const hunk *h, lang lg, int test)
{
    size_t cap = 0, nlines = 0;
    const char *p = h->start;
    int old_left = h->old_n, new_left = h->new_n;
    /* pass 1: size */
    for (const char *q = p; *q && (old_left > 0 || new_left > 0);) {
        const char *nl = strchr(q, '\n');
        const char *ln = nl ? nl + 1 : q + strlen(q);
        char c = *q;
        if (c == '+' || c == ' ' || c == '\n') {
            cap += (size_t)(ln - q);
            nlines++;
            if (c != '+')
                old_left--;
            new_left--;
        } else if (c == '-') {
            old_left--;
        } else if (c != '\\') {
            break;
        }
        q = ln;
    }
    if (!nlines)
        return;
    char *text = malloc(cap + 1);
    lexed l = {0};
    if (!text || lexed_alloc(&l, cap, nlines) < 0) {
        free(text);
        lexed_free(&l);
        sc->rc = RL_ENOMEM;
        return;
    }
    size_t len = 0, k = 0;
    int lineno = h->new_start;
    old_left = h->old_n;
    new_left = h->new_n;
    for (const char *q = p; *q && (old_left > 0 || new_left > 0);) {
        const char *nl = strchr(q, '\n');
        const char *ln = nl ? nl + 1 : q + strlen(q);
        char c = *q;
        if (c == '+' || c == ' ' || c == '\n') {
            l.offs[k] = len;
            l.linenos[k] = lineno++;
            l.is_added[k] = c == '+';
            k++;
            size_t body = c == '\n' ? 0 : (size_t)(ln - q) - 1;
            memcpy(text + len, c == '\n' ? "" : q + 1, body);
            len += body;
            if (!body || text[len - 1] != '\n')
                text[len++] = '\n';
            if (c != '+')
                old_left--;
            new_left--;
        } else if (c == '-') {
            old_left--;
        } else if (c != '\\') {
            break;
        }
        q = ln;
    }
    l.n = k;
    text[len] = '\0';
    int start = LX_CODE;
    if (lg != L_PY) {
        if (lex(lg, text, len, l.nocom, l.nostr, LX_CODE) == 1)
            start = LX_BLOCK;
    } else if (lex(lg, text, len, l.nocom, l.nostr, LX_CODE) != LX_CODE) {
        /* ends inside a triple quote: try starting inside one */
        if (lex(lg, text, len, l.nocom, l.nostr, LX_TRIPLE_DQ) == LX_CODE)
            start = LX_TRIPLE_DQ;
        else if (lex(lg, text, len, l.nocom, l.nostr, LX_TRIPLE_SQ) == LX_CODE)
            start = LX_TRIPLE_SQ;
    }
    lex(lg, text, len, l.nocom, l.nostr, start);
    unit u = {text, l.nocom, l.nostr, len};
    scan_unit(sc, f, lg, test, &u, l.offs, l.linenos, l.n, l.is_added);
    lexed_free(&l);
    free(text);
}

/* Is the symlink target t, stored at path (relative to the tree), outside
 * the tree? Absolute targets are; relative ones are resolved lexically. */
static int target_leaves(const char *path, const char *t, size_t tl)
{
    if (tl == 0)
        return 0;
    if (t[0] == '/')
        return 1;
    long depth = 0;
    for (const char *p = path; *p; p++)
        depth += *p == '/';
    size_t i = 0;
    while (i < tl) {
        size_t e = i;
        while (e < tl && t[e] != '/')
            e++;
        size_t n = e - i;
        if (n == 2 && t[i] == '.' && t[i + 1] == '.') {
            if (--depth < 0)
                return 1;
        } else if (n && !(n == 1 && t[i] == '.')) {
            depth++;
        }
        i = e + 1;
    }
    return 0;
}

static void finish_file(scan *sc, dfile *f)
{
    if (!f->path || f->is_deleted)
        return;
    const char *path = f->path, *b = base_name(path);
    int test = is_protected(sc, path);
    /* symlinks and submodules */
    if (f->mode == 0120000) {
        const char *t = f->na ? f->add[0].text : NULL;
        size_t tl = f->na ? f->add[0].len : 0;
        while (tl && t[tl - 1] == '\n')
            tl--;
        if (!t || target_leaves(path, t, tl)) {
            char msg[INTEG_TEXT_MAX + 16];
            snprintf(msg, sizeof msg, "symlink -> %.*s", (int)(tl > INTEG_TEXT_MAX ? INTEG_TEXT_MAX : tl),
                     t ? t : "?");
            add_str(sc, INTEG_LINK_OUT, path, 0, msg);
        }
        return;
    }
    if (f->mode == 0160000) {
        add_str(sc, INTEG_LINK_OUT, path, 0, "submodule (gitlink)");
        return;
    }
    /* path rules */
    if (str_has_suffix(b, ".pth") || str_has_suffix(b, ".egg-link") || any_component(path, comp_info_dir) ||
        !strcmp(b, "sitecustomize.py") || !strcmp(b, "usercustomize.py") || !strcmp(b, "conftest.py"))
        add_str(sc, INTEG_PYTHON_HOOK, path, 0, f->is_new ? "new file" : "changed file");
    if (str_has_suffix(b, ".pyc") || str_has_suffix(b, ".pyo") || any_component(path, comp_pycache))
        add_str(sc, INTEG_BYTECODE, path, 0, f->is_new ? "new file" : "changed file");
    if (f->binary)
        add_str(sc, INTEG_BINARY, path, 0, "binary content");
    else if (is_object(b))
        add_str(sc, INTEG_BINARY, path, 0, "object or library file");
    if (any_component(path, comp_git))
        add_str(sc, INTEG_IGNORE_FILE, path, 0, f->is_new ? "new file" : "changed file");
    if (!test && (in_list(b, BUILD_FILES) || str_has_suffix(b, ".mk") || str_has_suffix(b, ".cmake") ||
                  str_has_suffix(b, ".ninja") || any_component(path, comp_pytest_cache)))
        add_str(sc, INTEG_BUILD_CONFIG, path, 0, f->is_new ? "new file" : "changed file");
    if (f->is_new && is_header(b))
        check_shadow_header(sc, path);
    if (f->is_new && str_has_suffix(b, ".py"))
        check_shadow_module(sc, path);
    /* line rules */
    lang lg = lang_of(path);
    if (lg == L_NONE || !f->na)
        return;
    if (lines_from_tree(sc, f, lg, test) == 0)
        return;
    for (size_t i = 0; i < f->nh; i++)
        lines_from_hunk(sc, f, &f->hunks[i], lg, test);
}

/* ---- diff parsing --------------------------------------------------------- */

/* A path as git writes it: maybe C-quoted, with an a/ or b/ prefix. */
static char *diff_path(const char *s, size_t n)
{
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    if (n >= 2 && s[0] == '"') {
        for (size_t i = 1; i < n && s[i] != '"'; i++) {
            char c = s[i];
            if (c == '\\' && i + 1 < n) {
                c = s[++i];
                if (c >= '0' && c <= '7') {
                    int v = 0;
                    for (int k = 0; k < 3 && i < n && s[i] >= '0' && s[i] <= '7'; k++)
                        v = v * 8 + (s[i++] - '0');
                    i--;
                    c = (char)v;
                } else if (c == 'n')
                    c = '\n';
                else if (c == 't')
                    c = '\t';
                else if (c == 'r')
                    c = '\r';
                else if (c == 'a')
                    c = '\a';
                else if (c == 'b')
                    c = '\b';
                else if (c == 'f')
                    c = '\f';
                else if (c == 'v')
                    c = '\v';
            }
            out[o++] = c;
        }
    } else {
        memcpy(out, s, n);
        o = n;
    }
    while (o && (out[o - 1] == '\t' || out[o - 1] == '\r' || out[o - 1] == ' ')) /* "+++ b/x\t" */
        o--;
    out[o] = '\0';
    size_t skip = 0;
    if ((out[0] == 'a' || out[0] == 'b') && out[1] == '/')
        skip = 2;
    while (out[skip] == '.' && out[skip + 1] == '/')
        skip += 2;
    memmove(out, out + skip, o - skip + 1);
    return out;
}

/* "diff --git a/P b/P": the b/ path (renames say it again later). */
static char *git_header_path(const char *s, size_t n)
{
    if (n && s[0] == '"') { /* quoted a path: the b path follows it */
        size_t i = 1;
        while (i < n && s[i] != '"')
            i += s[i] == '\\' ? 2 : 1;
        if (i + 1 >= n)
            return diff_path(s, n);
        i = skip_ws(s, i + 1, n);
        return diff_path(s + i, n - i);
    }
    /* unquoted "a/P b/P": both halves are equal when not renamed */
    if (n >= 5 && (n - 5) % 2 == 0) {
        size_t L = (n - 5) / 2, sp = L + 2;
        if (!memcmp(s + sp, " b/", 3) && !memcmp(s + 2, s + sp + 3, L))
            return diff_path(s + sp + 1, n - sp - 1);
    }
    const char *b = NULL;
    for (size_t i = 0; i + 3 <= n; i++)
        if (!memcmp(s + i, " b/", 3))
            b = s + i + 1;
    return b ? diff_path(b, n - (size_t)(b - s)) : diff_path(s, n);
}

static int starts(const char *l, size_t n, const char *p)
{
    size_t m = strlen(p);
    return n >= m && !memcmp(l, p, m);
}

static void scan_patch(scan *sc, const char *patch)
{
    dfile f = {0};
    int in_file = 0;
    const char *p = patch;
    while (*p && !sc->rc) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        const char *next = nl ? nl + 1 : p + n;
        if (starts(p, n, "diff --git ")) {
            if (in_file)
                finish_file(sc, &f);
            dfile_reset(&f);
            in_file = 1;
            f.path = git_header_path(p + 11, n - 11);
            if (!f.path)
                sc->rc = RL_ENOMEM;
        } else if (in_file && starts(p, n, "@@ ")) {
            int os = 0, on = 1, ns = 0, nn = 1;
            const char *q = p + 3;
            char *e;
            if (*q == '-') {
                os = (int)strtol(q + 1, &e, 10);
                q = e;
                if (*q == ',') {
                    on = (int)strtol(q + 1, &e, 10);
                    q = e;
                }
            }
            while (*q == ' ')
                q++;
            if (*q == '+') {
                ns = (int)strtol(q + 1, &e, 10);
                q = e;
                if (*q == ',')
                    nn = (int)strtol(q + 1, &e, 10);
            }
            (void)os;
            if (on < 0 || nn < 0 || ns < 0) {
                p = next;
                continue;
            }
            int rc = VEC_GROW(f.hunks, f.caph, f.nh + 1, INTEG_DIFF_LINES_MAX);
            if (rc < 0) {
                grow_failed(sc, rc, "hunks", f.path, INTEG_DIFF_LINES_MAX);
                break;
            }
            f.hunks[f.nh++] = (hunk){next, ns, on, nn};
            /* walk the hunk's lines: added ones are kept */
            int old_left = on, new_left = nn, lineno = ns;
            const char *q2 = next;
            while (*q2 && (old_left > 0 || new_left > 0)) {
                const char *nl2 = strchr(q2, '\n');
                size_t n2 = nl2 ? (size_t)(nl2 - q2) : strlen(q2);
                char c = *q2;
                if (c == '+') {
                    if ((rc = VEC_GROW(f.add, f.capa, f.na + 1, INTEG_DIFF_LINES_MAX)) < 0) {
                        grow_failed(sc, rc, "added lines", f.path, INTEG_DIFF_LINES_MAX);
                        break;
                    }
                    f.add[f.na++] = (added){lineno, q2 + 1, n2 - 1};
                    lineno++;
                    new_left--;
                } else if (c == ' ' || c == '\n') {
                    lineno++;
                    old_left--;
                    new_left--;
                } else if (c == '-') {
                    old_left--;
                } else if (c != '\\') {
                    break;
                }
                q2 = nl2 ? nl2 + 1 : q2 + n2;
            }
            next = q2;
        } else if (in_file && f.nh == 0) {
            /* extended header lines */
            if (starts(p, n, "new file mode ")) {
                f.is_new = 1;
                f.mode = (unsigned)strtoul(p + 14, NULL, 8);
            } else if (starts(p, n, "deleted file mode ")) {
                f.is_deleted = 1;
            } else if (starts(p, n, "new mode ")) {
                f.mode = (unsigned)strtoul(p + 9, NULL, 8);
            } else if (starts(p, n, "index ")) {
                const char *sp = memchr(p + 6, ' ', n - 6);
                if (sp && !f.mode)
                    f.mode = (unsigned)strtoul(sp + 1, NULL, 8);
            } else if (starts(p, n, "rename to ") || starts(p, n, "copy to ")) {
                size_t k = p[0] == 'r' ? 10 : 8;
                free(f.path);
                f.path = diff_path(p + k, n - k);
                f.is_new = 1; /* a new name: path rules apply as to a new file */
                if (!f.path)
                    sc->rc = RL_ENOMEM;
            } else if (starts(p, n, "+++ ")) {
                if (!starts(p, n, "+++ /dev/null")) {
                    char *np = diff_path(p + 4, n - 4);
                    if (np) {
                        free(f.path);
                        f.path = np;
                    }
                } else {
                    f.is_deleted = 1;
                }
            } else if (starts(p, n, "--- /dev/null")) {
                f.is_new = 1;
            } else if (starts(p, n, "GIT binary patch") || (starts(p, n, "Binary files ") && n >= 7 &&
                                                            !memcmp(p + n - 7, " differ", 7))) {
                f.binary = 1;
            }
        }
        p = next;
    }
    if (in_file && !sc->rc)
        finish_file(sc, &f);
    dfile_reset(&f);
}

/* ---- the tree ------------------------------------------------------------- */

typedef struct walk {
    scan *sc;
    char root_real[PATH_MAX];
    size_t entries;
    int stopped;
} walk;

static int has_finding(const scan *sc, const char *rule, const char *path)
{
    for (size_t i = 0; i < sc->r->n; i++)
        if (sc->r->v[i].rule == rule && !strcmp(sc->r->v[i].path, path))
            return 1;
    return 0;
}

static void walk_dir(walk *w, int dfd, char *rel, size_t rlen, int depth)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) && !w->stopped && !w->sc->rc) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (++w->entries > INTEG_TREE_ENTRIES_MAX) {
            char msg[96];
            snprintf(msg, sizeof msg, "more than %u entries: the tree was not scanned to its end",
                     INTEG_TREE_ENTRIES_MAX);
            add_str(w->sc, INTEG_SPECIAL_FILE, ".", 0, msg);
            w->stopped = 1;
            break;
        }
        size_t nl = strlen(e->d_name);
        if (rlen + nl + 2 > PATH_MAX)
            continue;
        size_t save = rlen;
        if (rlen)
            rel[rlen++] = '/';
        memcpy(rel + rlen, e->d_name, nl + 1);
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
            if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode)) {
                add_str(w->sc, INTEG_SPECIAL_FILE, rel, 0,
                        S_ISFIFO(st.st_mode)   ? "FIFO"
                        : S_ISSOCK(st.st_mode) ? "socket"
                                               : "device");
            } else if (S_ISLNK(st.st_mode)) {
                char t[PATH_MAX];
                ssize_t tl = readlinkat(dirfd(d), e->d_name, t, sizeof t - 1);
                int out = tl < 0 || target_leaves(rel, t, (size_t)tl);
                if (!out && w->root_real[0]) { /* links through links: where it really ends */
                    char full[PATH_MAX + 8], real[PATH_MAX];
                    snprintf(full, sizeof full, "%s/%s", w->root_real, rel);
                    size_t rl = strlen(w->root_real);
                    if (realpath(full, real) && !(strncmp(real, w->root_real, rl) == 0 &&
                                                  (real[rl] == '/' || real[rl] == '\0')))
                        out = 1;
                }
                if (out && !has_finding(w->sc, INTEG_LINK_OUT, rel)) {
                    char msg[INTEG_TEXT_MAX + 16];
                    if (tl < 0)
                        tl = 0;
                    t[tl] = '\0';
                    snprintf(msg, sizeof msg, "symlink -> %.*s", INTEG_TEXT_MAX, t);
                    add_str(w->sc, INTEG_LINK_OUT, rel, 0, msg);
                }
            } else if (S_ISDIR(st.st_mode)) {
                if (depth + 1 > INTEG_TREE_DEPTH_MAX) {
                    add_str(w->sc, INTEG_SPECIAL_FILE, rel, 0, "folders nested too deep to scan");
                    w->stopped = 1;
                } else {
                    int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                    if (sub >= 0)
                        walk_dir(w, sub, rel, rlen + nl, depth + 1);
                }
            }
        }
        rlen = save;
        rel[rlen] = '\0';
    }
    closedir(d);
}

static int scan_tree(scan *sc, const char *dir, char *err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return rl_err(err, RL_EIO, "integrity: work tree %s: cannot open: %s", dir, strerror(errno));
    walk w = {.sc = sc};
    if (!realpath(dir, w.root_real))
        w.root_real[0] = '\0';
    char rel[PATH_MAX] = "";
    walk_dir(&w, fd, rel, 0, 0);
    return 0;
}

int integ_scan(integ_report *out, const char *patch, const integ_opts *o, char *err)
{
    memset(out, 0, sizeof *out);
    integ_opts def;
    if (!o) {
        integ_opts_default(&def);
        o = &def;
    }
    if (patch && strlen(patch) > RL_WS_DIFF_MAX)
        return rl_err(err, RL_ELIMIT, "integrity: patch of %zu bytes, limit is %u", strlen(patch), RL_WS_DIFF_MAX);
    scan sc = {.r = out, .o = o};
    int rc = 0;
    if (patch)
        scan_patch(&sc, patch);
    if (!sc.rc && o->tree_dir)
        rc = scan_tree(&sc, o->tree_dir, err);
    for (size_t i = 0; i < sc.nsys; i++)
        free(sc.sysdirs[i]);
    free(sc.sysdirs);
    if (sc.rc == RL_ELIMIT)
        return rl_err(err, RL_ELIMIT, "integrity: %s", sc.why);
    if (sc.rc)
        return rl_err(err, RL_ENOMEM, "integrity: out of memory");
    return rc;
}
