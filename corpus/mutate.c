/* mutate.c - candidate bug sites in C and Python sources (see mutate.h).
 *
 * A small lexer turns the text into tokens (identifiers, numbers, strings,
 * operators; comments dropped, Python logical-line ends kept), brackets are
 * matched, and each token learns its enclosing function. Each mutation kind
 * is then one short pass over the tokens that adds sites. The heuristics
 * aim at mutants that still compile: operators are only changed where they
 * are binary, statements are only dropped when they stand alone on their
 * line and are not the body of an unbraced if, a returned variable is only
 * replaced by one declared with the same type.
 */
#include "corpus/mutate.h"

#include "common/buf.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/rng.h"
#include "common/str.h"
#include "common/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- names, random numbers, paths --------------------------------------- */

static const char *const KIND_NAMES[MUT_KIND_COUNT] = {
    "flip_cmp", "flip_bool", "arith", "const", "loop_bound", "swap_cmp",
    "swap_args", "negate_cond", "drop_cond", "drop_stmt", "wrong_return", "drop_guard",
    "swap_branches", "swap_stmts", "move_break", "default_return", "drop_elif",
};

const char *mut_kind_name(mut_kind k) { return (unsigned)k < MUT_KIND_COUNT ? KIND_NAMES[k] : "?"; }

int mut_kind_from_name(const char *name)
{
    for (int i = 0; name && i < MUT_KIND_COUNT; i++)
        if (!strcmp(KIND_NAMES[i], name))
            return i;
    return -1;
}

int mut_mask_parse(unsigned *mask, const char *spec, char *err)
{
    *mask = 0;
    if (!spec || !spec[0])
        return rl_err(err, RL_EINVAL, "mutation kinds: expected ops, rewrites, all or kind names, got ''");
    const char *p = spec;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char word[32];
        int k = -1;
        if (n < sizeof word) {
            memcpy(word, p, n);
            word[n] = '\0';
            k = mut_kind_from_name(word);
            if (!strcmp(word, "ops"))
                *mask |= MUT_MASK_OPS, k = MUT_KIND_COUNT;
            else if (!strcmp(word, "rewrites"))
                *mask |= MUT_MASK_REWRITES, k = MUT_KIND_COUNT;
            else if (!strcmp(word, "all"))
                *mask |= MUT_MASK_ALL, k = MUT_KIND_COUNT;
        }
        if (k < 0) {
            *mask = 0;
            return rl_err(err, RL_EINVAL,
                          "mutation kinds: unknown word '%.*s' (expected ops, rewrites, all or a kind name "
                          "such as drop_guard)",
                          (int)(n < 40 ? n : 40), p);
        }
        if (k < MUT_KIND_COUNT)
            *mask |= 1u << k;
        p = e ? e + 1 : p + n;
    }
    return 0;
}

mut_lang mut_lang_of_path(const char *path)
{
    if (str_has_suffix(path, ".c") || str_has_suffix(path, ".h"))
        return MUT_LANG_C;
    if (str_has_suffix(path, ".py"))
        return MUT_LANG_PY;
    return MUT_LANG_NONE;
}

int mut_is_test_path(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    /* a folder component tests/ or test/ anywhere in the path */
    for (const char *p = path; p < base; p = strchr(p, '/') + 1) {
        const char *e = strchr(p, '/');
        size_t n = (size_t)(e - p);
        if ((n == 5 && !strncmp(p, "tests", 5)) || (n == 4 && !strncmp(p, "test", 4)))
            return 1;
    }
    if (!strcmp(base, "conftest.py"))
        return 1;
    if (!strncmp(base, "test_", 5) && (str_has_suffix(base, ".py") || str_has_suffix(base, ".c")))
        return 1;
    return str_has_suffix(base, "_test.py") || str_has_suffix(base, "_test.c");
}

/* ---- lexer --------------------------------------------------------------- */

typedef enum { T_IDENT, T_NUM, T_STR, T_OP, T_NL } tkind;

enum {
    TF_BOL = 1, /* first token of its line (C) or logical line (Python) */
    TF_PP = 2,  /* inside a C preprocessor directive */
    TF_DEF = 4, /* inside a C #define (a subset of TF_PP) */
};

typedef struct tok {
    tkind k;
    unsigned flags;
    size_t s, e; /* byte range */
    int line;
    int col;     /* bytes from the line start */
    int match;   /* index of the matching bracket, -1 if none */
    int func;    /* index into lex.funcs, -1 at file level */
    int blk;     /* C: index of the innermost enclosing '{', -1 if none */
} tok;

typedef struct func_info {
    size_t name_s, name_e; /* byte range of the name */
    int params_open;       /* token index of the '(' of the parameter list */
    int indent;            /* Python: column of `def` */
} func_info;

typedef struct var {
    size_t s, e;    /* name */
    size_t ts, te;  /* C: type text (from declaration start to the name) */
    int array;      /* C: declared with [..] */
    int loop;       /* C: declared in a for header (scope: that loop) */
} var;

#define MAX_VARS 64

typedef struct lex {
    const char *src;
    size_t len;
    mut_lang lang;
    size_t *lines;  /* byte offset of each line start */
    int nlines;
    tok *t;
    int n;      /* tokens: int indexes (at most RL_MUT_TOKENS_MAX) */
    size_t cap;
    func_info *funcs;
    int nfuncs; /* at most RL_MUT_TOKENS_MAX too */
    size_t capfuncs;
} lex;

/* Returns 0, RL_ELIMIT or RL_ENOMEM. */
static int lex_push(lex *L, tkind k, size_t s, size_t e, int line, int col, unsigned flags)
{
    int rc = VEC_GROW(L->t, L->cap, (size_t)L->n + 1, RL_MUT_TOKENS_MAX);
    if (rc)
        return rc;
    L->t[L->n++] = (tok){k, flags, s, e, line, col, -1, -1, -1};
    return 0;
}

static int is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_alnum(char c) { return is_alpha(c) || is_digit(c) || (unsigned char)c >= 0x80; }

static const char *const C_OPS[] = {
    ">>=", "<<=", "...", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
    "+=", "-=", "*=", "/=", "%=", "&=", "^=", "|=", "##", NULL,
};
static const char *const PY_OPS[] = {
    "**=", "//=", ">>=", "<<=", "...", "->", ":=", "**", "//", "<<", ">>", "<=", ">=", "==", "!=",
    "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", NULL,
};

static size_t op_len(const lex *L, size_t i)
{
    const char *const *ops = L->lang == MUT_LANG_PY ? PY_OPS : C_OPS;
    for (int k = 0; ops[k]; k++) {
        size_t n = strlen(ops[k]);
        if (i + n <= L->len && !memcmp(L->src + i, ops[k], n))
            return n;
    }
    return 1;
}

/* End of a string or char literal starting at the quote at i (C), never
 * past the end of its line: an unterminated literal stops there. */
static size_t c_string_end(const lex *L, size_t i)
{
    char q = L->src[i];
    for (size_t j = i + 1; j < L->len; j++) {
        if (L->src[j] == '\\')
            j++;
        else if (L->src[j] == q || L->src[j] == '\n')
            return j + 1 > L->len ? L->len : j + 1;
    }
    return L->len;
}

/* Python string at i (after any prefix), single or triple quoted. */
static size_t py_string_end(const lex *L, size_t i)
{
    char q = L->src[i];
    int triple = i + 2 < L->len && L->src[i + 1] == q && L->src[i + 2] == q;
    size_t j = i + (triple ? 3 : 1);
    for (; j < L->len; j++) {
        char c = L->src[j];
        if (c == '\\') {
            j++;
            continue;
        }
        if (!triple && c == '\n')
            return j; /* unterminated: the line ends it */
        if (c == q && (!triple || (j + 2 < L->len && L->src[j + 1] == q && L->src[j + 2] == q)))
            return j + (triple ? 3 : 1);
    }
    return L->len;
}

/* Length of a Python string prefix (r, b, f, u, rb, br, fr, rf, any case)
 * at i when a quote follows it, else 0. */
static size_t py_prefix(const lex *L, size_t i)
{
    size_t n = 0;
    while (n < 2 && i + n < L->len && strchr("rRbBfFuU", L->src[i + n]))
        n++;
    if (n && i + n < L->len && (L->src[i + n] == '"' || L->src[i + n] == '\''))
        return n;
    return 0;
}

static int lex_lines(lex *L)
{
    int n = 1;
    for (size_t i = 0; i < L->len; i++)
        n += L->src[i] == '\n';
    L->lines = malloc((size_t)n * sizeof *L->lines);
    if (!L->lines)
        return RL_ENOMEM;
    L->lines[0] = 0;
    L->nlines = 1;
    for (size_t i = 0; i < L->len; i++)
        if (L->src[i] == '\n')
            L->lines[L->nlines++] = i + 1;
    return 0;
}

/* 1-based line of byte offset off. */
static int line_of(const lex *L, size_t off)
{
    int lo = 0, hi = L->nlines - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (L->lines[mid] <= off)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo + 1;
}

static int lex_run(lex *L)
{
    const char *s = L->src;
    size_t i = 0, line_start = 0;
    int line = 1, depth = 0, in_pp = 0, in_def = 0, bol = 1;
    int pending_bol = 1; /* Python: the next token starts a logical line */
    while (i < L->len) {
        char c = s[i];
        if (c == '\n') {
            if (L->lang == MUT_LANG_PY && depth == 0 && L->n && L->t[L->n - 1].k != T_NL &&
                !pending_bol) {
                int rc = lex_push(L, T_NL, i, i, line, (int)(i - line_start), 0);
                if (rc)
                    return rc;
                pending_bol = 1;
            }
            in_pp = in_def = 0;
            bol = 1;
            line++;
            line_start = ++i;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            i++;
            continue;
        }
        if (c == '\\' && i + 1 < L->len && (s[i + 1] == '\n' || s[i + 1] == '\r')) {
            /* line continuation: no logical line end, a C directive goes on */
            i += s[i + 1] == '\r' && i + 2 < L->len && s[i + 2] == '\n' ? 3 : 2;
            line++;
            line_start = i;
            continue;
        }
        if (L->lang == MUT_LANG_C && c == '/' && i + 1 < L->len && s[i + 1] == '/') {
            while (i < L->len && s[i] != '\n')
                i++;
            continue;
        }
        if (L->lang == MUT_LANG_C && c == '/' && i + 1 < L->len && s[i + 1] == '*') {
            const char *e = memmem(s + i + 2, L->len - i - 2, "*/", 2);
            size_t end = e ? (size_t)(e - s) + 2 : L->len;
            for (; i < end; i++)
                if (s[i] == '\n') {
                    line++;
                    line_start = i + 1;
                }
            continue;
        }
        if (L->lang == MUT_LANG_PY && c == '#') {
            while (i < L->len && s[i] != '\n')
                i++;
            continue;
        }
        if (L->lang == MUT_LANG_C && c == '#' && bol) {
            in_pp = 1;
            size_t j = i + 1;
            while (j < L->len && (s[j] == ' ' || s[j] == '\t'))
                j++;
            in_def = L->len - j >= 6 && !memcmp(s + j, "define", 6);
        }
        unsigned flags = (L->lang == MUT_LANG_PY ? pending_bol : bol) ? TF_BOL : 0;
        flags |= in_pp ? TF_PP : 0;
        flags |= in_def ? TF_DEF : 0;
        int col = (int)(i - line_start), tline = line;
        size_t st = i;
        tkind k;
        size_t pre = L->lang == MUT_LANG_PY ? py_prefix(L, i) : 0;
        if (c == '"' || c == '\'' || pre) {
            k = T_STR;
            if (L->lang == MUT_LANG_PY)
                i = py_string_end(L, i + pre);
            else
                i = c_string_end(L, i);
            for (size_t j = st; j < i; j++) /* triple-quoted strings span lines */
                if (s[j] == '\n') {
                    line++;
                    line_start = j + 1;
                }
        } else if (is_alpha(c) || (unsigned char)c >= 0x80) {
            k = T_IDENT;
            while (i < L->len && is_alnum(s[i]))
                i++;
        } else if (is_digit(c) || (c == '.' && i + 1 < L->len && is_digit(s[i + 1]))) {
            k = T_NUM;
            while (i < L->len) {
                char d = s[i];
                /* a pp-number: exponent signs belong to it (even 0x1e+1 in C) */
                char p = i > st ? s[i - 1] : 0;
                if ((d == '+' || d == '-') && (p == 'e' || p == 'E' || p == 'p' || p == 'P'))
                    i++;
                else if (is_alnum(d) || d == '.')
                    i++;
                else
                    break;
            }
        } else {
            k = T_OP;
            i += op_len(L, i);
            if (c == '(' || c == '[' || c == '{')
                depth++;
            else if ((c == ')' || c == ']' || c == '}') && depth > 0)
                depth--;
        }
        int rc = lex_push(L, k, st, i, tline, col, flags);
        if (rc)
            return rc;
        bol = 0;
        pending_bol = 0;
    }
    if (L->lang == MUT_LANG_PY && L->n && L->t[L->n - 1].k != T_NL)
        return lex_push(L, T_NL, L->len, L->len, line, 0, 0);
    return 0;
}

/* ---- token helpers -------------------------------------------------------- */

static size_t tlen(const lex *L, int i) { return L->t[i].e - L->t[i].s; }

static int is(const lex *L, int i, const char *text)
{
    if (i < 0 || i >= L->n)
        return 0;
    size_t n = strlen(text);
    return tlen(L, i) == n && !memcmp(L->src + L->t[i].s, text, n) && L->t[i].k != T_STR;
}

static int is_any(const lex *L, int i, const char *const *set)
{
    for (int k = 0; set[k]; k++)
        if (is(L, i, set[k]))
            return 1;
    return 0;
}

static const char *const C_KEYWORDS[] = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
    "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict",
    "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union",
    "unsigned", "void", "volatile", "while", "_Bool", "bool", "_Static_assert", NULL,
};
static const char *const C_TYPE_WORDS[] = {
    "char", "const", "double", "enum", "float", "int", "long", "short", "signed", "static",
    "struct", "union", "unsigned", "void", "volatile", "extern", "register", "_Bool", "bool",
    "FILE", NULL,
};
static const char *const PY_KEYWORDS[] = {
    "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif",
    "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda",
    "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield", NULL,
};

static int is_keyword(const lex *L, int i)
{
    return is_any(L, i, L->lang == MUT_LANG_PY ? PY_KEYWORDS : C_KEYWORDS);
}

/* An identifier that names a value (not a keyword). */
static int is_name(const lex *L, int i)
{
    return i >= 0 && i < L->n && L->t[i].k == T_IDENT && !is_keyword(L, i);
}

/* A C identifier that looks like a type: size_t, uint8_t, FILE. */
static int looks_like_type(const lex *L, int i)
{
    if (i < 0 || i >= L->n || L->t[i].k != T_IDENT)
        return 0;
    if (is_any(L, i, C_TYPE_WORDS))
        return 1;
    return tlen(L, i) > 2 && !memcmp(L->src + L->t[i].e - 2, "_t", 2);
}

/* Tokens where a mutation makes sense: code inside a function, outside C
 * preprocessor lines. */
static int in_code(const lex *L, int i)
{
    return i >= 0 && i < L->n && L->t[i].func >= 0 && !(L->t[i].flags & TF_PP);
}

/* Ends an operand: a value, a closing bracket. */
static int c_is_cast_close(const lex *L, int j);

static int ends_operand(const lex *L, int i)
{
    if (i < 0)
        return 0;
    if (L->lang == MUT_LANG_C && is(L, i, ")") &&
        (c_is_cast_close(L, i) || (L->t[i].match > 0 && (is(L, L->t[i].match - 1, "if") ||
                                                         is(L, L->t[i].match - 1, "for") ||
                                                         is(L, L->t[i].match - 1, "while") ||
                                                         is(L, L->t[i].match - 1, "switch")))))
        return 0; /* "(unsigned char)*s", "for (...) *s = ..": a dereference follows */
    const tok *t = &L->t[i];
    if (t->k == T_NUM || t->k == T_STR)
        return 1;
    if (t->k == T_IDENT)
        return !is_keyword(L, i) || is(L, i, "True") || is(L, i, "False") || is(L, i, "None");
    return is(L, i, ")") || is(L, i, "]");
}

/* Does the ')' at j close a cast like "(unsigned char)" or "(size_t *)"? */
static int c_is_cast_close(const lex *L, int j)
{
    int o = L->t[j].match;
    if (o < 0 || o >= j - 1)
        return 0;
    for (int k = o + 1; k < j; k++) {
        int tagged = is_name(L, k) && (is(L, k - 1, "struct") || is(L, k - 1, "enum") || is(L, k - 1, "union"));
        if (!is_any(L, k, C_TYPE_WORDS) && !looks_like_type(L, k) && !is(L, k, "*") && !tagged)
            return 0;
    }
    return 1;
}

static int c_collect_vars(const lex *L, int f, int upto, var *v);
static int c_find_var(const lex *L, int i, var *out);

/* C: 1 if the expression of tokens [s, e] is a pointer, 0 if it is not,
 * -1 when the lexer cannot tell (calls, casts, arithmetic). Uses the
 * declarations of the enclosing function. */
static int c_pointerness(const lex *L, int s, int e)
{
    if (s == e && L->t[s].k == T_STR)
        return L->src[L->t[s].s] != '\''; /* "text" is a pointer, 'c' is not */
    if (is(L, s, "&") || (s == e && is(L, s, "NULL")))
        return 1;
    /* "p + n", "p - 1": pointer arithmetic keeps the pointer */
    if (s + 2 <= e && (is(L, s + 1, "+") || is(L, s + 1, "-")))
        return c_pointerness(L, s, s) == 1 ? 1 : -1;
    if (s != e)
        return -1;
    if (L->t[s].k == T_NUM)
        return 0;
    var v;
    if (!c_find_var(L, s, &v))
        return -1;
    return v.array || memchr(L->src + v.ts, '*', v.te - v.ts) != NULL;
}

/* C: the declaration of the plain variable at token i; 0 if unknown. */
static int c_find_var(const lex *L, int i, var *out)
{
    int f = L->t[i].func;
    if (f < 0 || !is_name(L, i) || is(L, i - 1, ".") || is(L, i - 1, "->"))
        return 0;
    var v[MAX_VARS];
    int n = c_collect_vars(L, f, i, v);
    size_t ns = L->t[i].s, nl = tlen(L, i);
    for (int k = 0; k < n; k++)
        if (v[k].e - v[k].s == nl && !memcmp(L->src + v[k].s, L->src + ns, nl)) {
            *out = v[k];
            return 1;
        }
    return 0;
}

/* Type text of a declaration without blanks, into out. */
static void type_key(const lex *L, const var *v, char *out, size_t max)
{
    size_t k = 0;
    for (size_t i = v->ts; i < v->te && k + 1 < max; i++)
        if (L->src[i] != ' ' && L->src[i] != '\t' && L->src[i] != '\n')
            out[k++] = L->src[i];
    out[k] = '\0';
}

/* C: are the two arguments pointers of one type? Plain variables compare
 * their declared types; a string literal matches a char pointer. */
static int c_same_pointer(const lex *L, int as, int ae, int bs, int be)
{
    var va, vb;
    char ka[128], kb[128];
    int a_var = as == ae && c_find_var(L, as, &va), b_var = bs == be && c_find_var(L, bs, &vb);
    int a_str = as == ae && L->t[as].k == T_STR && L->src[L->t[as].s] == '"';
    int b_str = bs == be && L->t[bs].k == T_STR && L->src[L->t[bs].s] == '"';
    if (a_var)
        type_key(L, &va, ka, sizeof ka);
    if (b_var)
        type_key(L, &vb, kb, sizeof kb);
    if (a_var && b_var)
        return !strcmp(ka, kb) && strchr(ka, '*');
    if (a_var && b_str)
        return strstr(ka, "char*") != NULL;
    if (b_var && a_str)
        return strstr(kb, "char*") != NULL;
    return a_str && b_str;
}

static void match_brackets(lex *L)
{
    int stack[RL_MUT_DEPTH_MAX], sp = 0, overflow = 0;
    for (int i = 0; i < L->n; i++) {
        if (L->t[i].k != T_OP || tlen(L, i) != 1)
            continue;
        char c = L->src[L->t[i].s];
        if (c == '(' || c == '[' || c == '{') {
            if (sp < RL_MUT_DEPTH_MAX)
                stack[sp++] = i;
            else
                overflow++; /* too deep: left unmatched, hence unmutated */
        } else if (c == ')' || c == ']' || c == '}') {
            if (overflow) {
                overflow--;
                continue;
            }
            if (!sp)
                continue;
            int o = stack[sp - 1];
            char oc = L->src[L->t[o].s];
            if ((oc == '(' && c == ')') || (oc == '[' && c == ']') || (oc == '{' && c == '}')) {
                L->t[o].match = i;
                L->t[i].match = o;
                sp--;
            }
        }
    }
}

/* Returns the index of the new function, or RL_ELIMIT or RL_ENOMEM. */
static int add_func(lex *L, size_t ns, size_t ne, int params_open, int indent)
{
    int rc = VEC_GROW(L->funcs, L->capfuncs, (size_t)L->nfuncs + 1, RL_MUT_TOKENS_MAX);
    if (rc)
        return rc;
    L->funcs[L->nfuncs] = (func_info){ns, ne, params_open, indent};
    return L->nfuncs++;
}

/* C: the innermost '{' around each token, for variable scopes. */
static void find_blocks(lex *L)
{
    int cur = -1;
    for (int i = 0; i < L->n; i++) {
        L->t[i].blk = cur;
        if (is(L, i, "{") && L->t[i].match > i)
            cur = i;
        else if (is(L, i, "}") && L->t[i].match >= 0 && L->t[i].match < i)
            cur = L->t[L->t[i].match].blk;
    }
}

/* C: is the '{' at o that of a linkage block, extern "C" { ... }? Its
 * contents are at file level (headers wrap their functions in one for
 * C++). */
static int c_linkage_brace(const lex *L, int o)
{
    return o >= 2 && L->t[o - 1].k == T_STR && is(L, o - 2, "extern");
}

/* C: a '{' at file level right after "name(...)" opens a function body. */
static int find_funcs_c(lex *L)
{
    int depth = 0;
    for (int i = 0; i < L->n; i++) {
        if (L->t[i].flags & TF_PP)
            continue;
        if ((is(L, i, "{") && depth == 0 && c_linkage_brace(L, i)) ||
            (is(L, i, "}") && L->t[i].match >= 0 && c_linkage_brace(L, L->t[i].match)))
            continue;
        if (is(L, i, "{")) {
            if (depth == 0 && is(L, i - 1, ")") && L->t[i - 1].match > 0 &&
                is_name(L, L->t[i - 1].match - 1) && L->t[i].match > i) {
                int o = L->t[i - 1].match;
                int f = add_func(L, L->t[o - 1].s, L->t[o - 1].e, o, 0);
                if (f < 0)
                    return f;
                for (int j = i + 1; j < L->t[i].match; j++)
                    L->t[j].func = f;
            }
            depth++;
        } else if (is(L, i, "}") && depth > 0) {
            depth--;
        }
    }
    return 0;
}

/* Python: a def's body is every later logical line indented deeper. */
static int find_funcs_py(lex *L)
{
    int stack[RL_MUT_DEPTH_MAX], sp = 0, cur = -1;
    for (int i = 0; i < L->n; i++) {
        if (L->t[i].flags & TF_BOL) {
            while (sp && L->funcs[stack[sp - 1]].indent >= L->t[i].col)
                sp--;
            cur = sp ? stack[sp - 1] : -1;
            int d = i;
            if (is(L, d, "async"))
                d++;
            if (is(L, d, "def") && is_name(L, d + 1) && is(L, d + 2, "(") && sp < RL_MUT_DEPTH_MAX) {
                int f = add_func(L, L->t[d + 1].s, L->t[d + 1].e, d + 2, L->t[i].col);
                if (f < 0)
                    return f;
                stack[sp++] = f;
                /* the header line belongs to the outer scope; the body follows */
            }
        }
        L->t[i].func = cur;
    }
    return 0;
}

/* ---- site list ------------------------------------------------------------- */

typedef struct sites {
    const lex *L;
    mut_site *v;
    size_t n, cap;
    uint64_t rng;
    int oom, full;
} sites;

static char *dup_range(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

/* A short one-line excerpt of source text for descriptions. */
static void excerpt(char *out, size_t max, const char *s, size_t n)
{
    size_t k = 0;
    int space = 0;
    for (size_t i = 0; i < n && k + 4 < max; i++) {
        char c = s[i];
        if (c == '\n' || c == '\t' || c == '\r' || c == ' ') {
            space = k > 0;
            continue;
        }
        if (space)
            out[k++] = ' ';
        space = 0;
        out[k++] = c;
    }
    if (k + 4 >= max)
        memcpy(out + k, "...", 4), k += 3;
    out[k] = '\0';
}

/* Adds a site replacing bytes [s, e) with repl; what describes it. */
static void add_site(sites *S, mut_kind kind, int at_tok, size_t s, size_t e, const char *repl,
                     size_t rn, const char *what)
{
    const lex *L = S->L;
    if (S->oom || S->full)
        return;
    if (e - s == rn && !memcmp(L->src + s, repl, rn))
        return; /* no change */
    int rc = VEC_GROW(S->v, S->cap, S->n + 1, RL_MUT_SITES_MAX);
    if (rc < 0) {
        if (rc == RL_ELIMIT)
            S->full = 1;
        else
            S->oom = 1;
        return;
    }
    mut_site *m = &S->v[S->n];
    memset(m, 0, sizeof *m);
    m->kind = kind;
    m->start = s;
    m->end = e;
    m->line = line_of(L, s);
    int f = L->t[at_tok].func;
    m->repl = dup_range(repl, rn);
    if (f >= 0)
        m->func = dup_range(L->src + L->funcs[f].name_s, L->funcs[f].name_e - L->funcs[f].name_s);
    buf_t d;
    buf_init(&d, 512);
    buf_printf(&d, "%s: %s", KIND_NAMES[kind], what);
    if (m->func)
        buf_printf(&d, " in %s()", m->func);
    buf_printf(&d, " at line %d", m->line);
    m->desc = buf_detach(&d, NULL);
    if (!m->repl || !m->desc || (f >= 0 && !m->func)) {
        free(m->repl);
        free(m->desc);
        free(m->func);
        S->oom = 1;
        return;
    }
    S->n++;
}

/* Replaces one token with text. */
static void add_tok_site(sites *S, mut_kind kind, int i, const char *repl)
{
    const lex *L = S->L;
    char what[128];
    snprintf(what, sizeof what, "'%.*s' -> '%s'", (int)tlen(L, i), L->src + L->t[i].s, repl);
    add_site(S, kind, i, L->t[i].s, L->t[i].e, repl, strlen(repl), what);
}

/* ---- kinds: operators ------------------------------------------------------- */

static void gen_flip_cmp(sites *S)
{
    static const char *const from[] = {"<", "<=", ">", ">=", "==", "!=", NULL};
    static const char *const to[] = {"<=", "<", ">=", ">", "!=", "=="};
    const lex *L = S->L;
    for (int i = 0; i < L->n; i++)
        for (int k = 0; from[k] && in_code(L, i); k++)
            if (is(L, i, from[k]) && ends_operand(L, i - 1)) {
                add_tok_site(S, MUT_FLIP_CMP, i, to[k]);
                break;
            }
}

static const char *const C_EXPR_LEFT_END[] = {
    "(", "[", "{", "}", ",", ";", "=", "?", ":", "return", "+=", "-=", "*=", "/=", "%=", "|=",
    "&=", "^=", "<<=", ">>=", NULL,
};
static const char *const C_EXPR_RIGHT_END[] = {")", "]", "}", ",", ";", "?", ":", NULL};

/* C: flipping one operator of a chain "a || b || c" would read as
 * "a || b && c", which -Wparentheses rejects; the flipped pair is wrapped
 * instead: "a || (b && c)". Returns 1 when it added the wrapped site. */
static int c_flip_in_chain(sites *S, int i, const char *to)
{
    const lex *L = S->L;
    int lo = i, hi = i, prev = -1, next = -1, nops = 1;
    for (int j = i - 1; j >= 0; j--) {
        if ((is(L, j, ")") || is(L, j, "]")) && L->t[j].match >= 0 && L->t[j].match < j) {
            j = L->t[j].match;
            lo = j;
            continue;
        }
        if (is_any(L, j, C_EXPR_LEFT_END))
            break;
        if (is(L, j, "&&") || is(L, j, "||")) {
            nops++;
            prev = prev < 0 ? j : prev;
        }
        lo = j;
    }
    for (int j = i + 1; j < L->n; j++) {
        if ((is(L, j, "(") || is(L, j, "[")) && L->t[j].match > j) {
            j = L->t[j].match;
            hi = j;
            continue;
        }
        if (is_any(L, j, C_EXPR_RIGHT_END))
            break;
        if (is(L, j, "&&") || is(L, j, "||")) {
            nops++;
            next = next < 0 ? j : next;
        }
        hi = j;
    }
    if (nops == 1)
        return 0;
    int ls = prev >= 0 ? prev + 1 : lo, re = next >= 0 ? next - 1 : hi;
    if (ls >= i || re <= i)
        return 1; /* malformed: no site */
    size_t s0 = L->t[ls].s, s1 = L->t[re].e;
    buf_t b;
    buf_init(&b, RL_MUT_SRC_MAX);
    buf_putc(&b, '(');
    buf_append(&b, L->src + s0, L->t[i].s - s0);
    buf_puts(&b, to);
    buf_append(&b, L->src + L->t[i].e, s1 - L->t[i].e);
    buf_putc(&b, ')');
    char what[96];
    snprintf(what, sizeof what, "'%.*s' -> '%s'", (int)tlen(L, i), L->src + L->t[i].s, to);
    add_site(S, MUT_FLIP_BOOL, i, s0, s1, buf_str(&b), b.len, what);
    buf_dispose(&b);
    return 1;
}

static void gen_flip_bool(sites *S)
{
    const lex *L = S->L;
    for (int i = 0; i < L->n; i++) {
        if (!in_code(L, i))
            continue;
        const char *to = NULL;
        if (L->lang == MUT_LANG_C && is(L, i, "&&"))
            to = "||";
        else if (L->lang == MUT_LANG_C && is(L, i, "||"))
            to = "&&";
        else if (L->lang == MUT_LANG_PY && is(L, i, "and"))
            to = "or";
        else if (L->lang == MUT_LANG_PY && is(L, i, "or"))
            to = "and";
        if (to && !(L->lang == MUT_LANG_C && c_flip_in_chain(S, i, to)))
            add_tok_site(S, MUT_FLIP_BOOL, i, to);
    }
}

/* Is the '*' at i a multiplication (not a pointer declarator or a
 * dereference)? Declarations start a statement or a parameter with a type
 * name: "size_t *p", "(foo *)x", "const char *s". */
static int c_star_is_binary(const lex *L, int i)
{
    int p = i - 1;
    if (is(L, p, ")") || is(L, p, "]") || (p >= 0 && L->t[p].k == T_NUM))
        return 1;
    if (!is_name(L, p) || looks_like_type(L, p))
        return 0;
    static const char *const starts[] = {";", "{", "}", "(", ",", NULL};
    return p > 0 && !is_any(L, p - 1, starts) && !(L->t[p].flags & TF_BOL) &&
           !is_any(L, p - 1, C_TYPE_WORDS);
}

static void gen_arith(sites *S)
{
    const lex *L = S->L;
    int py = L->lang == MUT_LANG_PY;
    static const char *const c_from[] = {"+", "-", "*", "/", "%", "+=", "-=", "*=", "/=", "%=", NULL};
    static const char *const c_to[] = {"-", "+", "/", "*", "/", "-=", "+=", "/=", "*=", "/="};
    static const char *const p_from[] = {"+", "-", "*", "/", "%", "//", "**", "+=", "-=", "*=", "//=", NULL};
    static const char *const p_to[] = {"-", "+", "//", "*", "//", "/", "*", "-=", "+=", "//=", "*="};
    const char *const *from = py ? p_from : c_from;
    const char *const *to = py ? p_to : c_to;
    for (int i = 0; i < L->n; i++) {
        if (!in_code(L, i) || L->t[i].k != T_OP)
            continue;
        for (int k = 0; from[k]; k++) {
            if (!is(L, i, from[k]))
                continue;
            int compound = from[k][strlen(from[k]) - 1] == '=';
            if (!compound && !ends_operand(L, i - 1))
                break; /* unary, or a pointer */
            if (!compound && !py && is(L, i, "*") && !c_star_is_binary(L, i))
                break;
            /* C: p - q of two pointers has no '+' counterpart. */
            if (!py && is(L, i, "-") && c_pointerness(L, i - 1, i - 1) == 1 &&
                c_pointerness(L, i + 1, i + 1) == 1)
                break;
            /* Python "text" % args is formatting, not arithmetic. */
            if (py && is(L, i, "%") && L->t[i - 1].k == T_STR)
                break;
            add_tok_site(S, MUT_ARITH, i, to[k]);
            break;
        }
    }
}

/* Plain decimal integer with an optional C suffix (u, l, ul, ...). */
static int decimal_value(const lex *L, int i, unsigned long long *v, size_t *digits)
{
    const tok *t = &L->t[i];
    if (t->k != T_NUM)
        return 0;
    const char *s = L->src + t->s;
    size_t n = t->e - t->s, d = 0;
    while (d < n && is_digit(s[d]))
        d++;
    if (d == 0 || d > 9 || (d > 1 && s[0] == '0'))
        return 0; /* octal, hex, huge */
    for (size_t k = d; k < n; k++)
        if (L->lang == MUT_LANG_PY || !strchr("uUlL", s[k]))
            return 0; /* float, Python suffix j, ... */
    *v = strtoull(s, NULL, 10);
    *digits = d;
    return 1;
}

static void gen_const(sites *S)
{
    const lex *L = S->L;
    for (int i = 0; i < L->n; i++) {
        const tok *t = &L->t[i];
        /* Everywhere but #include / #if lines: file-level tables and the
         * values of a #define make realistic bugs too. */
        if (t->k != T_NUM || ((t->flags & TF_PP) && !(t->flags & TF_DEF)))
            continue;
        /* "case N:" would collide with its neighbour label. */
        if (is(L, i - 1, "case"))
            continue;
        /* A file-level "[N]" is an array size: changing it breaks the
         * initializer, not the logic. */
        if (t->func < 0 && is(L, i - 1, "[") && is(L, i + 1, "]"))
            continue;
        unsigned long long v;
        size_t d;
        if (!decimal_value(L, i, &v, &d))
            continue;
        char repl[48], what[96];
        const char *suffix = L->src + t->s + d;
        int sl = (int)(tlen(L, i) - d);
        for (int dir = 1; dir >= -1; dir -= 2) {
            if (dir < 0 && v == 0)
                continue;
            snprintf(repl, sizeof repl, "%llu%.*s", dir > 0 ? v + 1 : v - 1, sl, suffix);
            snprintf(what, sizeof what, "%.*s -> %s", (int)tlen(L, i), L->src + t->s, repl);
            add_site(S, MUT_CONST, i, t->s, t->e, repl, strlen(repl), what);
        }
    }
}

/* ---- operands and argument lists ---------------------------------------------- */

/* First token of the postfix expression that ends at token i (a name,
 * number, call, index or member chain, or a parenthesized group), or -1. */
static int operand_start(const lex *L, int i)
{
    int j = i;
    for (int guard = 0; j >= 0 && guard < 10000; guard++) {
        if (is(L, j, ")") || is(L, j, "]")) {
            int o = L->t[j].match;
            if (o < 0 || o > j)
                return -1;
            if (is_name(L, o - 1) || is(L, o - 1, ")") || is(L, o - 1, "]")) {
                j = o - 1;
                continue;
            }
            return o;
        }
        if (ends_operand(L, j)) {
            if ((is(L, j - 1, ".") || is(L, j - 1, "->")) && j >= 2) {
                j -= 2;
                continue;
            }
            return j;
        }
        return -1;
    }
    return -1;
}

/* Last token of the postfix expression that starts at token i, or -1. */
static int operand_end(const lex *L, int i)
{
    int j;
    if (i >= L->n)
        return -1;
    if (is(L, i, "(") || is(L, i, "[")) {
        if (L->t[i].match < i)
            return -1;
        j = L->t[i].match + 1;
    } else if (L->t[i].k == T_NUM || L->t[i].k == T_STR || ends_operand(L, i)) {
        if (is(L, i, "]") || is(L, i, ")"))
            return -1;
        j = i + 1;
    } else {
        return -1;
    }
    for (int guard = 0; j < L->n && guard < 10000; guard++) {
        if ((is(L, j, "(") || is(L, j, "[")) && L->t[j].match > j)
            j = L->t[j].match + 1;
        else if ((is(L, j, ".") || is(L, j, "->")) && is_name(L, j + 1))
            j += 2;
        else
            break;
    }
    return j - 1;
}

static const char *const BEFORE_CMP[] = {
    "(", ",", ";", "{", "}", "=", "&&", "||", "?", ":", "return", "if", "while", "and", "or",
    "not", "assert", "elif", "+=", "-=", "|=", "&=", NULL,
};
static const char *const AFTER_CMP[] = {")", ",", ";", "&&", "||", "?", ":", "and", "or", "]", "if",
                                        "else", NULL};

static void gen_swap_cmp(sites *S)
{
    static const char *const ops[] = {"<", "<=", ">", ">=", NULL};
    const lex *L = S->L;
    for (int i = 1; i + 1 < L->n; i++) {
        if (!in_code(L, i) || !is_any(L, i, ops))
            continue;
        int ls = operand_start(L, i - 1), re = operand_end(L, i + 1);
        if (ls < 0 || re < 0 || !in_code(L, ls))
            continue;
        /* The comparison must be a whole sub-expression, or swapping its
         * neighbours would change precedence. */
        int lb = (L->t[ls].flags & TF_BOL) || is_any(L, ls - 1, BEFORE_CMP);
        int rb = re + 1 >= L->n || L->t[re + 1].k == T_NL || is_any(L, re + 1, AFTER_CMP);
        if (!lb || !rb)
            continue;
        size_t l0 = L->t[ls].s, l1 = L->t[i - 1].e, r0 = L->t[i + 1].s, r1 = L->t[re].e;
        if (l1 - l0 == r1 - r0 && !memcmp(L->src + l0, L->src + r0, l1 - l0))
            continue;
        buf_t b;
        buf_init(&b, RL_MUT_SRC_MAX);
        buf_append(&b, L->src + r0, r1 - r0);
        buf_append(&b, L->src + l1, r0 - l1);
        buf_append(&b, L->src + l0, l1 - l0);
        char what[160], ex[100];
        excerpt(ex, sizeof ex, L->src + l0, r1 - l0);
        snprintf(what, sizeof what, "swap the operands of '%s'", ex);
        add_site(S, MUT_SWAP_CMP, i, l0, r1, buf_str(&b), b.len, what);
        buf_dispose(&b);
    }
}

/* Top-level arguments of the call whose '(' is at o: token ranges. */
static int split_args(const lex *L, int o, int *as, int *ae, int max)
{
    int c = L->t[o].match, n = 0, st = o + 1;
    if (c <= o)
        return -1;
    for (int j = o + 1; j <= c; j++) {
        if (j < c && (is(L, j, "(") || is(L, j, "[") || is(L, j, "{")) && L->t[j].match > j) {
            j = L->t[j].match;
            continue;
        }
        if (j == c || is(L, j, ",")) {
            if (j == st)
                return j == c && n == 0 ? 0 : -1; /* empty argument (or no arguments) */
            if (n == max)
                return -1;
            as[n] = st;
            ae[n] = j - 1;
            n++;
            st = j + 1;
        }
    }
    return n;
}

static void gen_swap_args(sites *S)
{
    const lex *L = S->L;
    for (int o = 1; o < L->n; o++) {
        if (!in_code(L, o) || !is(L, o, "(") || !is_name(L, o - 1))
            continue;
        if (is(L, o - 2, "def") || is(L, o - 2, "class"))
            continue;
        int as[3], ae[3];
        if (split_args(L, o, as, ae, 3) != 2)
            continue;
        /* Keyword or starred arguments and generator expressions cannot
         * trade places. */
        int bad = 0;
        for (int a = 0; a < 2 && !bad; a++) {
            bad = is(L, as[a], "*") || is(L, as[a], "**");
            for (int j = as[a]; j <= ae[a] && !bad; j++) {
                if ((is(L, j, "(") || is(L, j, "[") || is(L, j, "{")) && L->t[j].match > j)
                    j = L->t[j].match;
                else
                    bad = is(L, j, "=") || is(L, j, "for");
            }
        }
        if (bad)
            continue;
        /* C: a pointer and a number cannot trade places, nor pointers of
         * different types; when one side is a pointer the other must be
         * known to be one of the same type. */
        if (L->lang == MUT_LANG_C) {
            int pa = c_pointerness(L, as[0], ae[0]), pb = c_pointerness(L, as[1], ae[1]);
            if ((pa == 1 || pb == 1) && !c_same_pointer(L, as[0], ae[0], as[1], ae[1]))
                continue;
            if (pa >= 0 && pb >= 0 && pa != pb)
                continue;
        }
        size_t a0 = L->t[as[0]].s, a1 = L->t[ae[0]].e, b0 = L->t[as[1]].s, b1 = L->t[ae[1]].e;
        if (a1 - a0 == b1 - b0 && !memcmp(L->src + a0, L->src + b0, a1 - a0))
            continue;
        buf_t b;
        buf_init(&b, RL_MUT_SRC_MAX);
        buf_append(&b, L->src + b0, b1 - b0);
        buf_append(&b, L->src + a1, b0 - a1);
        buf_append(&b, L->src + a0, a1 - a0);
        char what[160];
        snprintf(what, sizeof what, "swap the arguments of %.*s()", (int)tlen(L, o - 1),
                 L->src + L->t[o - 1].s);
        add_site(S, MUT_SWAP_ARGS, o, a0, b1, buf_str(&b), b.len, what);
        buf_dispose(&b);
    }
}

/* ---- kinds: conditions ------------------------------------------------------------ */

/* Token range [*cs, *ce] of the condition of the if/elif/while at i. */
static int cond_range(const lex *L, int i, int *cs, int *ce)
{
    if (L->lang == MUT_LANG_C) {
        if (!is(L, i + 1, "(") || L->t[i + 1].match <= i + 2)
            return 0;
        *cs = i + 2;
        *ce = L->t[i + 1].match - 1;
        return 1;
    }
    if (!(L->t[i].flags & TF_BOL))
        return 0; /* "x if c else y" is an expression */
    for (int j = i + 1; j < L->n && L->t[j].k != T_NL; j++) {
        if ((is(L, j, "(") || is(L, j, "[") || is(L, j, "{")) && L->t[j].match > j) {
            j = L->t[j].match;
            continue;
        }
        if (is(L, j, "lambda"))
            return 0;
        if (is(L, j, ":")) {
            if (j == i + 1)
                return 0;
            *cs = i + 1;
            *ce = j - 1;
            return 1;
        }
    }
    return 0;
}

static int is_cond_keyword(const lex *L, int i)
{
    return is(L, i, "if") || is(L, i, "while") || (L->lang == MUT_LANG_PY && is(L, i, "elif"));
}

static void gen_negate_cond(sites *S)
{
    const lex *L = S->L;
    for (int i = 0; i < L->n; i++) {
        int cs, ce;
        if (!in_code(L, i) || !is_cond_keyword(L, i) || !cond_range(L, i, &cs, &ce))
            continue;
        size_t s = L->t[cs].s, e = L->t[ce].e;
        buf_t b;
        buf_init(&b, RL_MUT_SRC_MAX);
        buf_puts(&b, L->lang == MUT_LANG_C ? "!(" : "not (");
        buf_append(&b, L->src + s, e - s);
        buf_puts(&b, ")");
        char what[160], ex[100];
        excerpt(ex, sizeof ex, L->src + s, e - s);
        snprintf(what, sizeof what, "negate the condition '%s' of %.*s", ex, (int)tlen(L, i),
                 L->src + L->t[i].s);
        add_site(S, MUT_NEGATE_COND, i, s, e, buf_str(&b), b.len, what);
        buf_dispose(&b);
    }
}

static void gen_drop_cond(sites *S)
{
    const lex *L = S->L;
    int py = L->lang == MUT_LANG_PY;
    for (int i = 0; i < L->n; i++) {
        int cs, ce, op = -1, nops = 0;
        if (!in_code(L, i) || !is_cond_keyword(L, i) || !cond_range(L, i, &cs, &ce))
            continue;
        for (int j = cs; j <= ce; j++) {
            if ((is(L, j, "(") || is(L, j, "[") || is(L, j, "{")) && L->t[j].match > j) {
                j = L->t[j].match;
                continue;
            }
            if (py ? (is(L, j, "and") || is(L, j, "or")) : (is(L, j, "&&") || is(L, j, "||"))) {
                op = j;
                nops++;
            }
        }
        /* One operator only: with mixed && and || dropping a side would
         * regroup the rest. */
        if (nops != 1 || op == cs || op == ce)
            continue;
        size_t s = L->t[cs].s, e = L->t[ce].e;
        size_t ls = s, le = L->t[op - 1].e, rs = L->t[op + 1].s, re = e;
        char what[200], ex[100];
        excerpt(ex, sizeof ex, L->src + rs, re - rs);
        snprintf(what, sizeof what, "drop the condition '%s'", ex);
        add_site(S, MUT_DROP_COND, i, s, e, L->src + ls, le - ls, what);
        excerpt(ex, sizeof ex, L->src + ls, le - ls);
        snprintf(what, sizeof what, "drop the condition '%s'", ex);
        add_site(S, MUT_DROP_COND, i, s, e, L->src + rs, re - rs, what);
    }
}

/* ---- kinds: loop bounds --------------------------------------------------------- */

/* Wraps an expression in parentheses when " - 1" would bind into it. */
static int needs_parens(const lex *L, int s, int e)
{
    static const char *const low[] = {"<", "<=", ">", ">=", "==", "!=", "&&", "||", "?", "<<", ">>",
                                      "&", "|", "^", "and", "or", "not", "if", "lambda", "=", NULL};
    for (int j = s; j <= e; j++) {
        if ((is(L, j, "(") || is(L, j, "[")) && L->t[j].match > j) {
            j = L->t[j].match;
            continue;
        }
        if (is_any(L, j, low))
            return 1;
    }
    return 0;
}

static void add_bound_site(sites *S, int at, int s, int e, const char *delta)
{
    const lex *L = S->L;
    if (s == e && L->t[s].k == T_NUM)
        return; /* a constant bound: MUT_CONST covers it */
    size_t bs = L->t[s].s, be = L->t[e].e;
    int par = needs_parens(L, s, e);
    buf_t b;
    buf_init(&b, RL_MUT_SRC_MAX);
    buf_puts(&b, par ? "(" : "");
    buf_append(&b, L->src + bs, be - bs);
    buf_printf(&b, "%s %s", par ? ")" : "", delta);
    char what[200], ex[100];
    excerpt(ex, sizeof ex, L->src + bs, be - bs);
    snprintf(what, sizeof what, "loop bound '%s' -> '%s'", ex, buf_str(&b));
    add_site(S, MUT_LOOP_BOUND, at, bs, be, buf_str(&b), b.len, what);
    buf_dispose(&b);
}

static void gen_loop_bound(sites *S)
{
    const lex *L = S->L;
    for (int i = 0; i < L->n; i++) {
        if (!in_code(L, i))
            continue;
        if (L->lang == MUT_LANG_C && is(L, i, "for") && is(L, i + 1, "(") && L->t[i + 1].match > i) {
            /* for (init; i < BOUND; step) */
            int c = L->t[i + 1].match, semi1 = -1, semi2 = -1;
            for (int j = i + 2; j < c; j++) {
                if ((is(L, j, "(") || is(L, j, "[")) && L->t[j].match > j) {
                    j = L->t[j].match;
                    continue;
                }
                if (is(L, j, ";")) {
                    if (semi1 < 0)
                        semi1 = j;
                    else if (semi2 < 0)
                        semi2 = j;
                }
            }
            if (semi1 < 0 || semi2 < 0 || semi2 - semi1 < 4)
                continue;
            for (int j = semi1 + 1; j < semi2; j++) {
                if ((is(L, j, "(") || is(L, j, "[")) && L->t[j].match > j) {
                    j = L->t[j].match;
                    continue;
                }
                if (is(L, j, "<") || is(L, j, "<="))
                    add_bound_site(S, j, j + 1, semi2 - 1, "- 1");
                else if (is(L, j, ">") || is(L, j, ">="))
                    add_bound_site(S, j, j + 1, semi2 - 1, "+ 1");
                else if (is(L, j, "&&") || is(L, j, "||"))
                    break; /* compound condition: not a plain bound */
                else
                    continue;
                break;
            }
        } else if (L->lang == MUT_LANG_PY && is(L, i, "range") && is(L, i + 1, "(") &&
                   !is(L, i - 1, ".") && !is(L, i - 1, "def")) {
            int as[3], ae[3];
            int n = split_args(L, i + 1, as, ae, 3);
            if (n == 1 || n == 2)
                add_bound_site(S, i, as[n - 1], ae[n - 1], "- 1");
        }
    }
}

/* ---- kinds: statements ------------------------------------------------------------ */

static const char *const C_NO_DROP[] = {
    "return", "goto", "case", "default", "else", "if", "for", "while", "do", "switch", "{", "}",
    "typedef", "#", NULL,
};
static const char *const PY_NO_DROP[] = {
    "def", "class", "if", "elif", "else", "for", "while", "try", "except", "finally", "with",
    "return", "pass", "import", "from", "global", "nonlocal", "@", "async", "yield", "match",
    "case", NULL,
};

/* Does the C statement starting at s declare a variable? */
static int c_is_declaration(const lex *L, int s)
{
    if (is_any(L, s, C_TYPE_WORDS) || looks_like_type(L, s))
        return 1;
    if (!is_name(L, s))
        return 0;
    if (is_name(L, s + 1))
        return 1; /* "foo_type x" */
    int j = s + 1;
    while (is(L, j, "*"))
        j++;
    return j > s + 1 && is_name(L, j) &&
           (is(L, j + 1, "=") || is(L, j + 1, ";") || is(L, j + 1, ",") || is(L, j + 1, "["));
}

static size_t line_begin(const lex *L, size_t off)
{
    while (off > 0 && L->src[off - 1] != '\n')
        off--;
    return off;
}

static void gen_drop_stmt_c(sites *S)
{
    const lex *L = S->L;
    for (int s = 1; s < L->n; s++) {
        if (!in_code(L, s) || !(L->t[s].flags & TF_BOL) || is_any(L, s, C_NO_DROP))
            continue;
        /* Not the body of an unbraced if / for / while / else. */
        if (!is(L, s - 1, ";") && !is(L, s - 1, "{") && !is(L, s - 1, "}") && !is(L, s - 1, ":"))
            continue;
        if (c_is_declaration(L, s))
            continue;
        int e = s;
        while (e < L->n && !is(L, e, ";") && L->t[e].line == L->t[s].line) {
            if ((is(L, e, "(") || is(L, e, "[")) && L->t[e].match > e)
                e = L->t[e].match;
            e++;
        }
        if (e >= L->n || !is(L, e, ";") || L->t[e].line != L->t[s].line)
            continue;
        if (e + 1 < L->n && L->t[e + 1].line == L->t[s].line)
            continue; /* more on the same line */
        if (is(L, s, "break") && is(L, s - 1, ":"))
            continue; /* "case X: break;" on its own: still compiles, but keep it simple */
        size_t a = line_begin(L, L->t[s].s), b = L->t[e].e;
        while (b < L->len && L->src[b] != '\n')
            b++;
        if (b < L->len)
            b++;
        char what[160], ex[100];
        excerpt(ex, sizeof ex, L->src + L->t[s].s, L->t[e].e - L->t[s].s);
        snprintf(what, sizeof what, "drop '%s'", ex);
        add_site(S, MUT_DROP_STMT, s, a, b, "", 0, what);
    }
}

static void gen_drop_stmt_py(sites *S)
{
    const lex *L = S->L;
    for (int s = 0; s < L->n; s++) {
        if (!in_code(L, s) || !(L->t[s].flags & TF_BOL) || is_any(L, s, PY_NO_DROP) ||
            L->t[s].k == T_STR)
            continue;
        int e = s, colon = 0;
        for (; e + 1 < L->n && L->t[e + 1].k != T_NL; e++) {
            if ((is(L, e + 1, "(") || is(L, e + 1, "[") || is(L, e + 1, "{")) && L->t[e + 1].match > e + 1) {
                e = L->t[e + 1].match - 1;
                continue;
            }
            colon |= is(L, e + 1, ":") || is(L, e + 1, ";");
        }
        if (colon) /* compound header, annotation, or several statements */
            continue;
        /* "pass" keeps the block non-empty and the indentation intact. */
        char what[160], ex[100];
        excerpt(ex, sizeof ex, L->src + L->t[s].s, L->t[e].e - L->t[s].s);
        snprintf(what, sizeof what, "drop '%s'", ex);
        add_site(S, MUT_DROP_STMT, s, L->t[s].s, L->t[e].e, "pass", 4, what);
    }
}

/* ---- kinds: wrong return ------------------------------------------------------------ */


static int var_add(var *v, int n, const lex *L, int name, int type_start, int array)
{
    if (n >= MAX_VARS)
        return n;
    size_t s = L->t[name].s, e = L->t[name].e;
    for (int k = 0; k < n; k++)
        if (v[k].e - v[k].s == e - s && !memcmp(L->src + v[k].s, L->src + s, e - s))
            return n;
    v[n] = (var){s, e, type_start >= 0 ? L->t[type_start].s : 0, type_start >= 0 ? L->t[name].s : 0, array,
                 type_start >= 0 && is(L, type_start - 1, "(") && is(L, type_start - 2, "for")};
    return n + 1;
}

/* Type text equality, ignoring whitespace differences. */
static int same_type(const lex *L, const var *a, const var *b)
{
    size_t i = a->ts, j = b->ts;
    for (;;) {
        while (i < a->te && (L->src[i] == ' ' || L->src[i] == '\t' || L->src[i] == '\n'))
            i++;
        while (j < b->te && (L->src[j] == ' ' || L->src[j] == '\t' || L->src[j] == '\n'))
            j++;
        if (i >= a->te || j >= b->te)
            return i >= a->te && j >= b->te && a->te > a->ts;
        if (L->src[i++] != L->src[j++])
            return 0;
    }
}

/* C: parameters and the locals declared before token `upto` in function f. */
static int c_collect_vars(const lex *L, int f, int upto, var *v)
{
    int n = 0, o = L->funcs[f].params_open, c = L->t[o].match;
    for (int j = o + 1, st = o + 1; j <= c && c > o; j++) {
        if (j == c || is(L, j, ",")) {
            if (is_name(L, j - 1) && j - 1 > st)
                n = var_add(v, n, L, j - 1, st, 0);
            st = j + 1;
        }
    }
    for (int s = c + 2; s < upto; s++) {
        int for_init = is(L, s - 1, "(") && is(L, s - 2, "for");
        if (!((L->t[s].flags & TF_BOL) || for_init) || L->t[s].func != f || !c_is_declaration(L, s))
            continue;
        int j = s;
        while (j < upto && (L->t[j].k == T_IDENT || is(L, j, "*")) && !is(L, j, ";"))
            j++;
        /* j is past the name: it must be followed by = ; , [ and its block
         * must still be open at the return */
        int b = L->t[s].blk;
        if (j - 1 > s && is_name(L, j - 1) &&
            (is(L, j, "=") || is(L, j, ";") || is(L, j, ",") || is(L, j, "[")) &&
            (b < 0 || L->t[b].match > upto))
            n = var_add(v, n, L, j - 1, s, is(L, j, "["));
    }
    return n;
}

/* Python: parameters and names assigned before token `upto` in function f. */
static int py_collect_vars(const lex *L, int f, int upto, var *v)
{
    int n = 0, o = L->funcs[f].params_open, c = L->t[o].match;
    for (int j = o + 1; c > o && j < c; j++) {
        if ((is(L, j, "(") || is(L, j, "[")) && L->t[j].match > j) {
            j = L->t[j].match;
            continue;
        }
        if (is_name(L, j) && (is(L, j - 1, "(") || is(L, j - 1, ",") || is(L, j - 1, "*") || is(L, j - 1, "**")) &&
            !is(L, j, "self") && !is(L, j, "cls"))
            n = var_add(v, n, L, j, -1, 0);
    }
    for (int s = c + 1; s < upto; s++) {
        if (L->t[s].func != f)
            continue;
        if ((L->t[s].flags & TF_BOL) && is_name(L, s) && (is(L, s + 1, "=") || is(L, s + 1, ":")) &&
            !is(L, s + 1, "=="))
            n = var_add(v, n, L, s, -1, 0);
        if (is(L, s, "for") && is_name(L, s + 1) && is(L, s + 2, "in"))
            n = var_add(v, n, L, s + 1, -1, 0);
    }
    return n;
}

static void gen_wrong_return(sites *S)
{
    const lex *L = S->L;
    int py = L->lang == MUT_LANG_PY;
    var v[MAX_VARS];
    for (int i = 0; i + 2 < L->n; i++) {
        if (!in_code(L, i) || !is(L, i, "return") || !is_name(L, i + 1))
            continue;
        if (py ? L->t[i + 2].k != T_NL : !is(L, i + 2, ";"))
            continue;
        int f = L->t[i].func;
        int n = py ? py_collect_vars(L, f, i, v) : c_collect_vars(L, f, i, v);
        const var *ret = NULL;
        size_t rs = L->t[i + 1].s, re = L->t[i + 1].e;
        for (int k = 0; k < n; k++)
            if (v[k].e - v[k].s == re - rs && !memcmp(L->src + v[k].s, L->src + rs, re - rs))
                ret = &v[k];
        if (!ret)
            continue; /* a global or a constant: no known peers */
        int cand[MAX_VARS], nc = 0;
        for (int k = 0; k < n; k++)
            if (&v[k] != ret && !v[k].loop && (py || same_type(L, &v[k], ret)))
                cand[nc++] = k;
        if (!nc)
            continue;
        const var *w = &v[cand[rl_splitmix64(&S->rng) % (uint64_t)nc]];
        char what[160];
        snprintf(what, sizeof what, "return %.*s instead of %.*s", (int)(w->e - w->s), L->src + w->s,
                 (int)(re - rs), L->src + rs);
        add_site(S, MUT_WRONG_RETURN, i, rs, re, L->src + w->s, w->e - w->s, what);
    }
}

/* ---- kinds: function-level rewrites ------------------------------------------------ */

static const char *const C_EXITS[] = {"return", "break", "continue", "goto", NULL};
static const char *const PY_EXITS[] = {"return", "raise", "break", "continue", NULL};

/* Offset just past the '\n' that ends the line holding off (or len). */
static size_t line_after(const lex *L, size_t off)
{
    while (off < L->len && L->src[off] != '\n')
        off++;
    return off < L->len ? off + 1 : off;
}

/* C: the ';' that ends the simple statement starting at s, or -1 when a
 * brace comes first (a compound statement). */
static int c_simple_end(const lex *L, int s)
{
    for (int e = s; e < L->n; e++) {
        if ((is(L, e, "(") || is(L, e, "[")) && L->t[e].match > e) {
            e = L->t[e].match;
            continue;
        }
        if (is(L, e, "{") || is(L, e, "}"))
            return -1;
        if (is(L, e, ";"))
            return e;
    }
    return -1;
}

/* C: does the statement at s stand alone at the start of its line, after
 * the end of another statement or a block brace? */
static int c_stmt_start(const lex *L, int s)
{
    return in_code(L, s) && (L->t[s].flags & TF_BOL) &&
           (is(L, s - 1, ";") || is(L, s - 1, "{") || is(L, s - 1, "}"));
}

/* C: the guard at i, "if (cond) EXIT;" or "if (cond) { EXIT; }" with EXIT
 * one of return, break, continue, goto, not followed by else and last on
 * its line. Sets *last to its last token and *exit_tok to EXIT's. */
static int c_guard(const lex *L, int i, int *last, int *exit_tok)
{
    if (!is(L, i, "if") || !c_stmt_start(L, i) || !is(L, i + 1, "(") || L->t[i + 1].match <= i + 2)
        return 0;
    int b = L->t[i + 1].match + 1, braced = is(L, b, "{");
    int x = braced ? b + 1 : b;
    if (!is_any(L, x, C_EXITS))
        return 0;
    int e = c_simple_end(L, x);
    if (e < 0)
        return 0;
    if (braced) {
        if (!is(L, e + 1, "}") || L->t[e + 1].match != b)
            return 0;
        e++;
    }
    if (is(L, e + 1, "else") || (e + 1 < L->n && L->t[e + 1].line == L->t[e].line))
        return 0;
    *last = e;
    *exit_tok = x;
    return 1;
}

/* Python: the logical-line end (T_NL) of the simple statement at s, or -1
 * when the line holds a compound header, an annotation or several
 * statements. */
static int py_simple_end(const lex *L, int s)
{
    int e = s;
    for (; e < L->n && L->t[e].k != T_NL; e++) {
        if ((is(L, e, "(") || is(L, e, "[") || is(L, e, "{")) && L->t[e].match > e) {
            e = L->t[e].match;
            continue;
        }
        if (is(L, e, ":") || is(L, e, ";"))
            return -1;
    }
    return e < L->n ? e : -1;
}

/* Offset just past a T_NL token's '\n' (the text's end at the last one). */
static size_t nl_after(const lex *L, int nl) { return L->t[nl].s < L->len ? L->t[nl].s + 1 : L->len; }

/* Python: the guard at i, "if cond: EXIT" with EXIT one of return, raise,
 * break, continue as the whole body (on the header line or the next).
 * Sets *nl to the T_NL that ends it and *next to the following token (n
 * at the end); the caller checks what follows. */
static int py_guard(const lex *L, int i, int *nl, int *exit_tok, int *next)
{
    int cs, ce;
    if (!in_code(L, i) || !is(L, i, "if") || !cond_range(L, i, &cs, &ce))
        return 0;
    int b = ce + 2;
    if (b < L->n && L->t[b].k == T_NL) {
        b++;
        if (b >= L->n || !(L->t[b].flags & TF_BOL) || L->t[b].col <= L->t[i].col)
            return 0;
    }
    if (!is_any(L, b, PY_EXITS))
        return 0;
    int e = py_simple_end(L, b);
    if (e < 0)
        return 0;
    int nx = e + 1;
    if (nx < L->n && L->t[nx].col > L->t[i].col)
        return 0; /* the body goes on */
    if (nx < L->n && L->t[nx].col == L->t[i].col && (is(L, nx, "elif") || is(L, nx, "else")))
        return 0;
    *nl = e;
    *exit_tok = b;
    *next = nx;
    return 1;
}

static void add_text_site(sites *S, mut_kind kind, int at, size_t s, size_t e, const char *repl, size_t rn,
                          const char *verb, size_t xs, size_t xe)
{
    char what[200], ex[110];
    excerpt(ex, sizeof ex, S->L->src + xs, xe - xs);
    snprintf(what, sizeof what, "%s '%s'", verb, ex);
    add_site(S, kind, at, s, e, repl, rn, what);
}

static void gen_drop_guard(sites *S)
{
    const lex *L = S->L;
    for (int i = 0; i < L->n; i++) {
        int e, x, nx;
        if (L->lang == MUT_LANG_C && c_guard(L, i, &e, &x)) {
            size_t a = line_begin(L, L->t[i].s), b = line_after(L, L->t[e].s);
            add_text_site(S, MUT_DROP_GUARD, i, a, b, "", 0, "drop the guard", L->t[i].s, L->t[e].e);
        } else if (L->lang == MUT_LANG_PY && py_guard(L, i, &e, &x, &nx)) {
            /* a statement must follow in the block, or it would be left empty */
            if (nx >= L->n || L->t[nx].col != L->t[i].col || L->t[nx].func != L->t[i].func)
                continue;
            size_t a = line_begin(L, L->t[i].s), b = nl_after(L, e);
            add_text_site(S, MUT_DROP_GUARD, i, a, b, "", 0, "drop the guard", L->t[i].s, L->t[e - 1].e);
        }
    }
}

/* C: is the block opened at '{' o a loop body? */
static int c_loop_body(const lex *L, int o)
{
    if (o < 1)
        return 0;
    if (is(L, o - 1, "do"))
        return 1;
    int p = is(L, o - 1, ")") ? L->t[o - 1].match : -1;
    return p > 0 && (is(L, p - 1, "for") || is(L, p - 1, "while"));
}

/* Python: is the statement at s directly in the body of a for or while? */
static int py_in_loop(const lex *L, int s)
{
    for (int j = s - 1; j >= 0; j--) {
        if (!(L->t[j].flags & TF_BOL) || L->t[j].col >= L->t[s].col)
            continue;
        int h = is(L, j, "async") ? j + 1 : j;
        return is(L, h, "for") || is(L, h, "while");
    }
    return 0;
}

static void gen_move_break(sites *S)
{
    const lex *L = S->L;
    for (int i = 1; i < L->n; i++) {
        int e, x, nx, p;
        size_t gs = line_begin(L, L->t[i].s), ge, ps;
        if (L->lang == MUT_LANG_C) {
            if (!c_guard(L, i, &e, &x) || !is(L, x, "break") || !is(L, i - 1, ";"))
                continue;
            int blk = L->t[i].blk;
            if (blk < 0 || !c_loop_body(L, blk))
                continue;
            for (p = i - 1; p > 0 && !(L->t[p].flags & TF_BOL); p--)
                ;
            if (!c_stmt_start(L, p) || is_any(L, p, C_NO_DROP) || c_is_declaration(L, p) ||
                c_simple_end(L, p) != i - 1 || L->t[p].blk != blk || L->t[p].line != L->t[i - 1].line)
                continue;
            ge = line_after(L, L->t[e].s);
        } else {
            if (i < 2 || !py_guard(L, i, &e, &x, &nx) || !is(L, x, "break") || L->t[i - 1].k != T_NL ||
                !py_in_loop(L, i))
                continue;
            for (p = i - 2; p > 0 && !(L->t[p].flags & TF_BOL); p--)
                ;
            if (L->t[p].col != L->t[i].col || L->t[p].func != L->t[i].func || is_any(L, p, PY_NO_DROP) ||
                L->t[p].k == T_STR || py_simple_end(L, p) != i - 1)
                continue;
            ge = nl_after(L, e);
        }
        ps = line_begin(L, L->t[p].s);
        if (line_after(L, L->t[i - 1].s) != gs || ge <= gs || (ge == L->len && L->src[ge - 1] != '\n'))
            continue; /* comments between them, or no line end to keep */
        buf_t b;
        buf_init(&b, RL_MUT_SRC_MAX);
        buf_append(&b, L->src + gs, ge - gs);
        buf_append(&b, L->src + ps, gs - ps);
        add_text_site(S, MUT_MOVE_BREAK, i, ps, ge, buf_str(&b), b.len, "move the loop exit above",
                      L->t[p].s, L->t[i - 1].e);
        buf_dispose(&b);
    }
}

/* Do the token ranges [a0, a1] and [b0, b1] mention a common name (a
 * variable or member; self and cls do not count)? */
static int share_name(const lex *L, int a0, int a1, int b0, int b1)
{
    for (int i = a0; i <= a1; i++) {
        if (!is_name(L, i) || is(L, i, "self") || is(L, i, "cls"))
            continue;
        for (int j = b0; j <= b1; j++)
            if (tlen(L, j) == tlen(L, i) && L->t[j].k == T_IDENT &&
                !memcmp(L->src + L->t[i].s, L->src + L->t[j].s, tlen(L, i)))
                return 1;
    }
    return 0;
}

/* The two adjacent statements [s1 .. e1] and [s2 .. e2] that each fill
 * their lines trade places. */
static void add_swap_lines(sites *S, int s1, int e1, int s2, int e2, size_t end2)
{
    const lex *L = S->L;
    size_t a = line_begin(L, L->t[s1].s), m = line_begin(L, L->t[s2].s);
    if (!share_name(L, s1, e1, s2, e2) || end2 <= m || L->src[end2 - 1] != '\n')
        return;
    buf_t b;
    buf_init(&b, RL_MUT_SRC_MAX);
    buf_append(&b, L->src + m, end2 - m);
    buf_append(&b, L->src + a, m - a);
    add_text_site(S, MUT_SWAP_STMTS, s1, a, end2, buf_str(&b), b.len, "swap the statements", L->t[s1].s,
                  L->t[e2].e);
    buf_dispose(&b);
}

static void gen_swap_stmts(sites *S)
{
    const lex *L = S->L;
    for (int s = 1; s < L->n; s++) {
        if (L->lang == MUT_LANG_C) {
            if (!c_stmt_start(L, s) || is_any(L, s, C_NO_DROP) || c_is_declaration(L, s))
                continue;
            int e = c_simple_end(L, s), s2 = e + 1;
            if (e < 0 || L->t[e].line != L->t[s].line || s2 >= L->n || !c_stmt_start(L, s2) ||
                is_any(L, s2, C_NO_DROP) || c_is_declaration(L, s2) || is(L, s2, "break") ||
                is(L, s2, "continue") || L->t[s2].blk != L->t[s].blk)
                continue;
            int e2 = c_simple_end(L, s2);
            if (e2 < 0 || L->t[e2].line != L->t[s2].line || (e2 + 1 < L->n && L->t[e2 + 1].line == L->t[e2].line))
                continue;
            if (line_after(L, L->t[e].s) != line_begin(L, L->t[s2].s))
                continue;
            add_swap_lines(S, s, e - 1, s2, e2 - 1, line_after(L, L->t[e2].s));
        } else {
            if (!in_code(L, s) || !(L->t[s].flags & TF_BOL) || is_any(L, s, PY_NO_DROP) || L->t[s].k == T_STR)
                continue;
            int e = py_simple_end(L, s), s2 = e + 1;
            if (e < 0 || s2 >= L->n || L->t[s2].col != L->t[s].col || L->t[s2].func != L->t[s].func ||
                is_any(L, s2, PY_NO_DROP) || L->t[s2].k == T_STR || is(L, s2, "raise"))
                continue;
            int e2 = py_simple_end(L, s2);
            if (e2 < 0 || nl_after(L, e) != line_begin(L, L->t[s2].s))
                continue;
            add_swap_lines(S, s, e - 1, s2, e2 - 1, nl_after(L, e2));
        }
    }
}

/* C: 1 if function f returns a pointer, 0 for a scalar, -1 for void or a
 * struct or union by value (no default to give). */
static int c_returns_pointer(const lex *L, int f)
{
    int nm = L->funcs[f].params_open - 1, ptr = 0, agg = 0, voidt = 0;
    for (int k = nm - 1; k >= 0 && (L->t[k].k == T_IDENT || is(L, k, "*")) && !(L->t[k].flags & TF_PP); k--) {
        ptr |= is(L, k, "*");
        agg |= is(L, k, "struct") || is(L, k, "union");
        voidt |= is(L, k, "void");
        if (L->t[k].flags & TF_BOL)
            break;
    }
    return ptr ? 1 : agg || voidt ? -1 : 0;
}

static int is_bool_expr_py(const lex *L, int s, int e)
{
    static const char *const rel[] = {"==", "!=", "<", "<=", ">", ">=", "in", "is", NULL};
    if (s == e && (is(L, s, "True") || is(L, s, "False")))
        return 1;
    if (is(L, s, "not"))
        return 1;
    for (int j = s; j <= e; j++) {
        if ((is(L, j, "(") || is(L, j, "[") || is(L, j, "{")) && L->t[j].match > j) {
            j = L->t[j].match;
            continue;
        }
        if (is(L, j, "if") || is(L, j, "lambda"))
            return 0;
        if (is_any(L, j, rel))
            return 1;
    }
    return 0;
}

static void gen_default_return(sites *S)
{
    const lex *L = S->L;
    int py = L->lang == MUT_LANG_PY, has_null = memmem(L->src, L->len, "NULL", 4) != NULL;
    for (int i = 0; i + 1 < L->n; i++) {
        if (!in_code(L, i) || !is(L, i, "return") || is(L, i + 1, ";") || L->t[i + 1].k == T_NL)
            continue;
        int f = L->t[i].func, e = py ? py_simple_end(L, i) : c_simple_end(L, i);
        if (e < 0)
            continue;
        /* "on one path": the function returns a value somewhere else too */
        int others = 0;
        for (int j = 0; j + 1 < L->n && !others; j++)
            others = j != i && L->t[j].func == f && is(L, j, "return") && !is(L, j + 1, ";") &&
                     L->t[j + 1].k != T_NL;
        if (!others)
            continue;
        const char *repl;
        if (py) {
            repl = is_bool_expr_py(L, i + 1, e - 1) ? "False" : "None";
        } else {
            int p = c_returns_pointer(L, f);
            if (p < 0)
                continue;
            repl = p && has_null ? "NULL" : "0";
        }
        size_t s0 = L->t[i + 1].s, s1 = L->t[e - 1].e;
        if ((s1 - s0 == 1 && L->src[s0] == '0') || (s1 - s0 == 4 && !memcmp(L->src + s0, "NULL", 4)) ||
            (s1 - s0 == 4 && !memcmp(L->src + s0, "None", 4)) || (s1 - s0 == 5 && !memcmp(L->src + s0, "false", 5)))
            continue;
        char what[200], ex[100];
        excerpt(ex, sizeof ex, L->src + s0, s1 - s0);
        snprintf(what, sizeof what, "return %s instead of '%s'", repl, ex);
        add_site(S, MUT_DEFAULT_RETURN, i, s0, s1, repl, strlen(repl), what);
    }
}

/* Python: the first logical line after token `from` that starts at column
 * col or less (n if none); *end is the offset past the block before it. */
static int py_block_end(const lex *L, int from, int col, size_t *end)
{
    int k = from + 1;
    while (k < L->n && !((L->t[k].flags & TF_BOL) && L->t[k].col <= col))
        k++;
    int nl = k - 1;
    *end = nl >= 0 && L->t[nl].k == T_NL ? nl_after(L, nl) : L->len;
    return k;
}

static void gen_drop_elif(sites *S)
{
    const lex *L = S->L;
    for (int i = 1; i < L->n; i++) {
        if (!in_code(L, i))
            continue;
        if (L->lang == MUT_LANG_PY) {
            if (!is(L, i, "elif") || !(L->t[i].flags & TF_BOL))
                continue;
            size_t end;
            py_block_end(L, i, L->t[i].col, &end);
            size_t a = line_begin(L, L->t[i].s);
            int cs, ce;
            if (end > a && cond_range(L, i, &cs, &ce))
                add_text_site(S, MUT_DROP_ELIF, i, a, end, "", 0, "drop the branch", L->t[i].s, L->t[ce + 1].e);
        } else {
            if (!is(L, i, "else") || !is(L, i + 1, "if") || !is(L, i - 1, "}") || !is(L, i + 2, "(") ||
                L->t[i + 2].match <= i + 2)
                continue;
            int c = L->t[i + 2].match;
            if (!is(L, c + 1, "{") || L->t[c + 1].match <= c + 1)
                continue;
            add_text_site(S, MUT_DROP_ELIF, i, L->t[i - 1].e, L->t[L->t[c + 1].match].e, "", 0,
                          "drop the branch", L->t[i].s, L->t[c].e);
        }
    }
}

static void gen_swap_branches(sites *S)
{
    const lex *L = S->L;
    for (int i = 1; i < L->n; i++) {
        if (!in_code(L, i) || !is(L, i, "if"))
            continue;
        buf_t b;
        size_t s0, s1;
        int cs, ce;
        if (L->lang == MUT_LANG_C) {
            if (is(L, i - 1, "else") || !is(L, i + 1, "(") || L->t[i + 1].match <= i + 1)
                continue;
            int o1 = L->t[i + 1].match + 1;
            if (!is(L, o1, "{"))
                continue;
            int c1 = L->t[o1].match;
            if (c1 <= o1 || !is(L, c1 + 1, "else") || !is(L, c1 + 2, "{") ||
                L->t[c1 + 2].match <= c1 + 2)
                continue;
            int o2 = c1 + 2, c2 = L->t[o2].match;
            buf_init(&b, RL_MUT_SRC_MAX);
            buf_puts(&b, "{");
            buf_append(&b, L->src + L->t[o2].e, L->t[c2].s - L->t[o2].e);
            buf_append(&b, L->src + L->t[c1].s, L->t[o2].e - L->t[c1].s);
            buf_append(&b, L->src + L->t[o1].e, L->t[c1].s - L->t[o1].e);
            buf_puts(&b, "}");
            s0 = L->t[o1].s;
            s1 = L->t[c2].e;
            cs = i + 2;
            ce = L->t[i + 1].match - 1;
        } else {
            if (!cond_range(L, i, &cs, &ce) || ce + 2 >= L->n || L->t[ce + 2].k != T_NL)
                continue;
            int col = L->t[i].col;
            size_t a0 = nl_after(L, ce + 2), a1;
            int k = py_block_end(L, ce + 2, col, &a1);
            if (k + 2 >= L->n || !is(L, k, "else") || L->t[k].col != col || !is(L, k + 1, ":") ||
                L->t[k + 2].k != T_NL)
                continue;
            size_t b0 = nl_after(L, k + 2), b1;
            py_block_end(L, k + 2, col, &b1);
            if (b1 <= b0 || a1 <= a0 || L->src[b1 - 1] != '\n')
                continue;
            buf_init(&b, RL_MUT_SRC_MAX);
            buf_append(&b, L->src + b0, b1 - b0);
            buf_append(&b, L->src + a1, b0 - a1);
            buf_append(&b, L->src + a0, a1 - a0);
            s0 = a0;
            s1 = b1;
        }
        add_text_site(S, MUT_SWAP_BRANCHES, i, s0, s1, buf_str(&b), b.len, "swap the branches of if",
                      L->t[cs].s, L->t[ce].e);
        buf_dispose(&b);
    }
}

/* ---- enumerate ------------------------------------------------------------------------- */

static void sites_free(mut_site *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].repl);
        free(v[i].desc);
        free(v[i].func);
    }
    free(v);
}

void mut_list_dispose(mut_list *l)
{
    if (!l)
        return;
    sites_free(l->v, l->n);
    l->v = NULL;
    l->n = 0;
}

static int site_cmp(const void *a, const void *b)
{
    const mut_site *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return strcmp(x->repl, y->repl);
}

/* Textual order, duplicates (same range and replacement) dropped, then the
 * seed's order: kinds in a shuffled round-robin, each kind shuffled. */
static int order_sites(sites *S, uint64_t seed, unsigned mask)
{
    if (S->n > 1)
        qsort(S->v, S->n, sizeof *S->v, site_cmp);
    size_t w = 0;
    for (size_t r = 0; r < S->n; r++) {
        if (w && S->v[w - 1].start == S->v[r].start && S->v[w - 1].end == S->v[r].end &&
            !strcmp(S->v[w - 1].repl, S->v[r].repl)) {
            free(S->v[r].repl);
            free(S->v[r].desc);
            free(S->v[r].func);
            continue;
        }
        S->v[w++] = S->v[r];
    }
    S->n = w;
    if (!S->n)
        return 0;
    uint64_t rng = seed ^ 0x6d75746174652121ull; /* "mutate!!" */
    size_t *idx[MUT_KIND_COUNT], cnt[MUT_KIND_COUNT] = {0}, pos[MUT_KIND_COUNT] = {0};
    mut_site *out = malloc(S->n * sizeof *out);
    size_t *all = malloc(S->n * sizeof *all);
    if (!out || !all) {
        free(out);
        free(all);
        return RL_ENOMEM;
    }
    for (size_t i = 0; i < S->n; i++)
        cnt[S->v[i].kind]++;
    size_t off = 0;
    for (int k = 0; k < MUT_KIND_COUNT; k++) {
        idx[k] = all + off;
        off += cnt[k];
        cnt[k] = 0;
    }
    for (size_t i = 0; i < S->n; i++)
        idx[S->v[i].kind][cnt[S->v[i].kind]++] = i;
    for (int k = 0; k < MUT_KIND_COUNT; k++)
        for (size_t i = cnt[k]; i > 1; i--) {
            size_t j = (size_t)(rl_splitmix64(&rng) % i), t = idx[k][i - 1];
            idx[k][i - 1] = idx[k][j];
            idx[k][j] = t;
        }
    /* the round-robin over the mask's kinds only: a mask's order for a
     * seed does not change when kinds are added outside it */
    int korder[MUT_KIND_COUNT], nk = 0;
    for (int k = 0; k < MUT_KIND_COUNT; k++)
        if (mask & (1u << k))
            korder[nk++] = k;
    for (int i = nk; i > 1; i--) {
        int j = (int)(rl_splitmix64(&rng) % (uint64_t)i), t = korder[i - 1];
        korder[i - 1] = korder[j];
        korder[j] = t;
    }
    size_t n = 0;
    while (n < S->n)
        for (int q = 0; q < nk; q++) {
            int k = korder[q];
            if (pos[k] < cnt[k])
                out[n++] = S->v[idx[k][pos[k]++]];
        }
    free(all);
    free(S->v);
    S->v = out;
    return 0;
}

int mut_enumerate(mut_list *out, const char *text, size_t len, mut_lang lang, uint64_t seed, char *err)
{
    return mut_enumerate_kinds(out, text, len, lang, seed, MUT_MASK_OPS, err);
}

int mut_enumerate_kinds(mut_list *out, const char *text, size_t len, mut_lang lang, uint64_t seed,
                        unsigned mask, char *err)
{
    out->v = NULL;
    out->n = 0;
    mask &= MUT_MASK_ALL;
    if (!mask)
        return rl_err(err, RL_EINVAL, "mutate: no mutation kind selected");
    if (lang != MUT_LANG_C && lang != MUT_LANG_PY)
        return rl_err(err, RL_EINVAL, "mutate: expected a C or Python source");
    if (len > RL_MUT_SRC_MAX)
        return rl_err(err, RL_ELIMIT, "mutate: source is %zu bytes, limit is %u", len, RL_MUT_SRC_MAX);
    lex L = {.src = text, .len = len, .lang = lang};
    sites S = {&L, NULL, 0, 0, seed ^ 0x9e3779b97f4a7c15ull, 0, 0};
    int rc = lex_lines(&L);
    if (!rc)
        rc = lex_run(&L);
    if (!rc) {
        match_brackets(&L);
        if (lang == MUT_LANG_C)
            find_blocks(&L);
        rc = lang == MUT_LANG_C ? find_funcs_c(&L) : find_funcs_py(&L);
    }
    if (!rc) {
        static void (*const gens[MUT_KIND_COUNT])(sites *) = {
            gen_flip_cmp,     gen_flip_bool,     gen_arith,       gen_const,      gen_loop_bound,
            gen_swap_cmp,     gen_swap_args,     gen_negate_cond, gen_drop_cond,  NULL,
            gen_wrong_return, gen_drop_guard,    gen_swap_branches, gen_swap_stmts, gen_move_break,
            gen_default_return, gen_drop_elif,
        };
        for (int k = 0; k < MUT_KIND_COUNT; k++) {
            if (!(mask & (1u << k)))
                continue;
            if (k == MUT_DROP_STMT)
                (lang == MUT_LANG_C ? gen_drop_stmt_c : gen_drop_stmt_py)(&S);
            else
                gens[k](&S);
        }
        rc = S.oom ? RL_ENOMEM : order_sites(&S, seed, mask);
    }
    free(L.t);
    free(L.funcs);
    free(L.lines);
    if (rc) {
        sites_free(S.v, S.n);
        if (rc == RL_ELIMIT)
            return rl_err(err, rc, "mutate: more than %u tokens or functions in the source",
                          RL_MUT_TOKENS_MAX);
        return rl_err(err, rc, "mutate: out of memory");
    }
    out->v = S.v;
    out->n = S.n;
    return 0;
}

int mut_apply(char **out, size_t *out_len, const char *text, size_t len, const mut_site *s, char *err)
{
    *out = NULL;
    if (s->start > s->end || s->end > len)
        return rl_err(err, RL_EINVAL, "mutate: site %zu..%zu is outside the %zu-byte text", s->start,
                      s->end, len);
    size_t rn = strlen(s->repl), n = len - (s->end - s->start) + rn;
    char *p = malloc(n + 1);
    if (!p)
        return rl_err(err, RL_ENOMEM, "mutate: out of memory");
    memcpy(p, text, s->start);
    memcpy(p + s->start, s->repl, rn);
    memcpy(p + s->start + rn, text + s->end, len - s->end);
    p[n] = '\0';
    *out = p;
    if (out_len)
        *out_len = n;
    return 0;
}
