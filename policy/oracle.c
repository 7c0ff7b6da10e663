/* oracle.c - the shortest path to a fix, from the gold patch.
 *
 * Run the tests, list the files, read each file the fix touches, apply
 * the fix as edit_file calls (one per hunk; write_file for new files),
 * re-run the tests, submit. This is the demonstration SFT data is made of:
 * it shows the tool-call format and a clean working order, never a
 * recovery. The listing comes before the read so that the path a policy
 * reads is one it can copy from its context rather than recall: a small
 * model trained without it guessed file names of other repositories.
 *
 * An edit is minimal, as a careful engineer writes it: the hunk's changed
 * lines only, with just enough of its context lines to make old_string
 * unique in the file. When the change sits inside one line, the edit
 * shrinks further, to the changed characters grown by whole words
 * (identifiers, numbers, single punctuation) until unique: `400 ==` ->
 * `400 !=` on leapyear rather than the whole line. Every character of
 * old_string is one a policy must copy exactly from the file it read, so
 * the shorter string is the easier demonstration to learn. Uniqueness is checked
 * against the file as the policy saw it, the numbered lines of the
 * read_file response in the context; when that response was cut, or the
 * file has several hunks, the whole hunk is the edit (always unique: it is
 * what the patch applies to).
 */
#include "common/err.h"
#include "policy/scripted.h"
#include "tasks/patch.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct step {
    const char *tool;
    char *args;     /* JSON object text */
    const char *why;
    /* edit_file steps that may shrink: the hunk, and the turn that read the file */
    char *path, *old_text, *new_text;
    size_t read_turn;
} step;

typedef struct oracle {
    step *steps;
    size_t n;
} oracle;

static int push(oracle *o, const char *tool, cJSON *args, const char *why)
{
    step *s = realloc(o->steps, (o->n + 1) * sizeof *s);
    if (!s) {
        cJSON_Delete(args);
        return RL_ENOMEM;
    }
    o->steps = s;
    memset(&s[o->n], 0, sizeof s[o->n]);
    s[o->n].tool = tool;
    s[o->n].args = cJSON_PrintUnformatted(args);
    s[o->n].why = why;
    cJSON_Delete(args);
    return s[o->n++].args ? 0 : RL_ENOMEM;
}

static int plan(oracle *o, const patch *p)
{
    int rc = push(o, "run_tests", cJSON_CreateObject(), "First, run the tests to see what fails.");
    if (!rc)
        rc = push(o, "list_files", cJSON_CreateObject(), "List the files to find the code under test.");
    size_t *read_turn = calloc(p->nfiles ? p->nfiles : 1, sizeof *read_turn);
    if (!read_turn)
        return RL_ENOMEM;
    for (size_t i = 0; !rc && i < p->nfiles; i++) {
        const patch_file *f = &p->files[i];
        if (!f->old_path)
            continue;
        cJSON *a = cJSON_CreateObject();
        cJSON_AddStringToObject(a, "path", f->old_path);
        read_turn[i] = o->n;
        rc = push(o, "read_file", a, "Read the code the failing test exercises.");
    }
    for (size_t i = 0; !rc && i < p->nfiles; i++) {
        const patch_file *f = &p->files[i];
        for (size_t j = 0; !rc && j < f->nhunks; j++) {
            cJSON *a = cJSON_CreateObject();
            cJSON_AddStringToObject(a, "path", f->new_path ? f->new_path : f->old_path);
            if (!f->old_path) {
                cJSON_AddStringToObject(a, "content", f->hunks[j].new_text);
                rc = push(o, "write_file", a, "Add the missing file.");
            } else {
                cJSON_AddStringToObject(a, "old_string", f->hunks[j].old_text);
                cJSON_AddStringToObject(a, "new_string", f->hunks[j].new_text);
                rc = push(o, "edit_file", a, "Fix the defect with a minimal edit.");
                if (!rc && f->nhunks == 1) {
                    step *e = &o->steps[o->n - 1];
                    e->path = strdup(f->old_path);
                    e->old_text = strdup(f->hunks[j].old_text);
                    e->new_text = strdup(f->hunks[j].new_text);
                    e->read_turn = read_turn[i];
                    if (!e->path || !e->old_text || !e->new_text)
                        rc = RL_ENOMEM;
                }
            }
        }
    }
    free(read_turn);
    if (!rc)
        rc = push(o, "run_tests", cJSON_CreateObject(), "Re-run the tests to check the fix.");
    if (!rc)
        rc = push(o, "submit", cJSON_CreateObject(), "The tests pass; submit.");
    return rc;
}


/* ---- minimal edits ---------------------------------------------------------- */

/* Splits text into lines (each keeps its '\n'): starts[k], ends[k]. */
typedef struct lines {
    const char **b, **e;
    size_t n;
} lines;

static int lines_split(lines *l, const char *t)
{
    size_t cap = 1;
    for (const char *p = t; *p; p++)
        cap += *p == '\n';
    l->b = malloc(cap * sizeof *l->b);
    l->e = malloc(cap * sizeof *l->e);
    l->n = 0;
    if (!l->b || !l->e)
        return RL_ENOMEM;
    for (const char *p = t; *p;) {
        const char *nl = strchr(p, '\n');
        const char *end = nl ? nl + 1 : p + strlen(p);
        l->b[l->n] = p;
        l->e[l->n++] = end;
        p = end;
    }
    return 0;
}

static void lines_free(lines *l)
{
    free(l->b);
    free(l->e);
}

static int line_eq(const lines *a, size_t i, const lines *b, size_t j)
{
    size_t n = (size_t)(a->e[i] - a->b[i]);
    return n == (size_t)(b->e[j] - b->b[j]) && !memcmp(a->b[i], b->b[j], n);
}

/* Occurrences of needle (length n) in hay, counting up to 2. */
static int count_upto2(const char *hay, size_t hn, const char *needle, size_t n)
{
    int c = 0;
    for (const char *p = hay, *e = hay + hn; n && p + n <= e && c < 2; p++) {
        p = memmem(p, (size_t)(e - p), needle, n);
        if (!p)
            break;
        c++;
    }
    return c;
}

/* The file behind the k-th tool response of the context (0-based), rebuilt
 * from read_file's numbered lines; NULL when that response is not a whole,
 * uncut listing. Caller frees. */
static char *seen_file(const char *ctx, size_t len, size_t k, size_t *out_n)
{
    static const char OPEN[] = "<tool_response>\n", CLOSE[] = "</tool_response>";
    const char *p = ctx, *e = ctx + len;
    for (size_t i = 0;; i++) {
        p = memmem(p, (size_t)(e - p), OPEN, sizeof OPEN - 1);
        if (!p)
            return NULL;
        p += sizeof OPEN - 1;
        if (i == k)
            break;
    }
    const char *q = memmem(p, (size_t)(e - p), CLOSE, sizeof CLOSE - 1);
    if (!q || memmem(p, (size_t)(q - p), "bytes cut ...]", 14) ||
        memmem(p, (size_t)(q - p), "were read)", 10))
        return NULL;
    const char *nl = memchr(p, '\n', (size_t)(q - p)); /* the "PATH: lines A-B of N" header */
    if (!nl || !memmem(p, (size_t)(nl - p), ": lines 1-", 10))
        return NULL;
    char *out = malloc((size_t)(q - p) + 1);
    size_t n = 0;
    if (!out)
        return NULL;
    for (const char *l = nl + 1; l < q;) {
        const char *le = memchr(l, '\n', (size_t)(q - l));
        if (!le)
            break;
        if (le == l && le + 1 == q) /* the blank line before </tool_response> */
            break;
        const char *c = l;
        while (c < le && *c == ' ')
            c++;
        const char *d = c;
        while (d < le && *d >= '0' && *d <= '9')
            d++;
        if (d == c || d == le || *d != '|') {
            free(out);
            return NULL;
        }
        d++;
        if (d < le && *d == ' ')
            d++;
        memcpy(out + n, d, (size_t)(le - d));
        n += (size_t)(le - d);
        out[n++] = '\n';
        l = le + 1;
    }
    out[n] = '\0';
    *out_n = n;
    return out;
}

static int is_word(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* The start of the unit that ends at t[i] (i > 0 exclusive end): a run of
 * word characters, a run of blanks, or one other character. */
static size_t unit_left(const char *t, size_t i)
{
    size_t j = i - 1;
    if (is_word(t[j]))
        while (j > 0 && is_word(t[j - 1]))
            j--;
    else if (is_blank(t[j]))
        while (j > 0 && is_blank(t[j - 1]))
            j--;
    return j;
}

/* The end of the unit that starts at t[i] (i < n). */
static size_t unit_right(const char *t, size_t n, size_t i)
{
    size_t j = i + 1;
    if (is_word(t[i]))
        while (j < n && is_word(t[j]))
            j++;
    else if (is_blank(t[i]))
        while (j < n && is_blank(t[j]))
            j++;
    return j;
}

/* At least this many non-blank characters of old_string: a lone "4" or
 * "<=" is unique in some files, but names no place a reader could find;
 * three characters ("+ 4", "m <") keep an anchor and cost a policy little
 * more to copy. */
#define ORACLE_MIN_EDIT_CHARS 3

/* Shrinks a unique edit old -> new (on, nn bytes) whose change lies inside
 * one line: the differing characters, grown by one unit left and right in
 * turn (blanks at an edge taken along with the next unit) until the old
 * side has ORACLE_MIN_EDIT_CHARS non-blank characters, cuts no word, and is
 * unique in file. Returns 1 with the span [*b, *e_old) of old and
 * [*b, *e_new) of new (both keep the same prefix and suffix), 0 to keep
 * the lines. */
static int inline_span(const char *old, size_t on, const char *neu, size_t nn, const char *file, size_t fn,
                       size_t *b, size_t *e_old, size_t *e_new)
{
    size_t pre = 0, suf = 0;
    while (pre < on && pre < nn && old[pre] == neu[pre])
        pre++;
    while (suf < on - pre && suf < nn - pre && old[on - 1 - suf] == neu[nn - 1 - suf])
        suf++;
    if (memchr(old + pre, '\n', on - pre - suf) || memchr(neu + pre, '\n', nn - pre - suf))
        return 0;
    /* no word is cut: the span starts and ends on unit boundaries */
    size_t lo = pre, hi = on - suf;
    while (lo > 0 && is_word(old[lo - 1]) && lo < on && is_word(old[lo]))
        lo--;
    while (hi < on && hi > 0 && is_word(old[hi - 1]) && is_word(old[hi]))
        hi++;
    for (int left = 1;; left = !left) {
        int edge_blank = (lo < hi) && (is_blank(old[lo]) || is_blank(old[hi - 1]));
        size_t shown = 0;
        for (size_t i = lo; i < hi; i++)
            shown += !is_blank(old[i]);
        if (shown >= ORACLE_MIN_EDIT_CHARS && !edge_blank && count_upto2(file, fn, old + lo, hi - lo) == 1)
            break;
        int can_l = lo > 0 && old[lo - 1] != '\n', can_r = hi < on && old[hi] != '\n';
        if (!can_l && !can_r)
            return 0;
        if ((left && can_l) || !can_r)
            lo = unit_left(old, lo);
        else
            hi = unit_right(old, on, hi);
    }
    *b = lo;
    *e_old = hi;
    *e_new = nn - (on - hi);
    return 1;
}

/* The smallest edit inside the hunk whose old_string occurs once in file:
 * the changed lines, grown by context lines (before, then after, in turn)
 * until unique, then shrunk inside the line when the change is one
 * (inline_span). Returns the args JSON, or NULL to keep the whole hunk. */
static char *minimal_edit(const step *s, const char *file, size_t fn)
{
    lines o = {0}, w = {0};
    char *args = NULL;
    if (lines_split(&o, s->old_text) || lines_split(&w, s->new_text))
        goto out;
    size_t pre = 0, suf = 0;
    while (pre < o.n && pre < w.n && line_eq(&o, pre, &w, pre))
        pre++;
    while (suf < o.n - pre && suf < w.n - pre && line_eq(&o, o.n - 1 - suf, &w, w.n - 1 - suf))
        suf++;
    size_t before = 0, after = 0;
    for (;;) {
        size_t ob = pre - before, oe = o.n - suf + after;
        if (oe > ob) {
            const char *os = o.b[ob];
            size_t on = (size_t)(o.e[oe - 1] - os);
            int c = count_upto2(file, fn, os, on);
            if (c == 0)
                break; /* the listing is not the file the hunk expects */
            if (c == 1) {
                size_t wb = pre - before, we = w.n - suf + after;
                const char *ws = we > wb ? w.b[wb] : "";
                size_t wn = we > wb ? (size_t)(w.e[we - 1] - ws) : 0;
                size_t b, eo, en;
                if (inline_span(os, on, ws, wn, file, fn, &b, &eo, &en)) {
                    ws += b;
                    wn = en - b;
                    os += b;
                    on = eo - b;
                }
                cJSON *a = cJSON_CreateObject();
                char *ov = strndup(os, on), *nv = strndup(ws, wn);
                if (a && ov && nv) {
                    cJSON_AddStringToObject(a, "path", s->path);
                    cJSON_AddStringToObject(a, "old_string", ov);
                    cJSON_AddStringToObject(a, "new_string", nv);
                    args = cJSON_PrintUnformatted(a);
                }
                cJSON_Delete(a);
                free(ov);
                free(nv);
                break;
            }
        }
        if (before < pre && (before <= after || after >= suf))
            before++;
        else if (after < suf)
            after++;
        else
            break;
    }
out:
    lines_free(&o);
    lines_free(&w);
    return args;
}

static int oracle_generate(policy *p, pol_response *resp, const pol_request *req, size_t n, char *err)
{
    oracle *o = p->impl;
    for (size_t i = 0; i < n; i++) {
        size_t turn = scr_turn(req[i].context, req[i].context_len);
        int rc;
        if (turn < o->n) {
            const step *s = &o->steps[turn];
            char *small = NULL;
            if (s->old_text) {
                size_t fn = 0;
                char *file = seen_file(req[i].context, req[i].context_len, s->read_turn, &fn);
                small = file ? minimal_edit(s, file, fn) : NULL;
                free(file);
            }
            rc = scr_reply(&resp[i], req[i].context, req[i].context_len, s->why, NULL, s->tool,
                           small ? small : s->args, err);
            free(small);
        } else {
            rc = scr_reply(&resp[i], req[i].context, req[i].context_len, NULL, "Done.", NULL, NULL, err);
        }
        if (rc < 0)
            return rc;
    }
    return 0;
}

static void oracle_free(policy *p)
{
    oracle *o = p->impl;
    for (size_t i = 0; o && i < o->n; i++) {
        free(o->steps[i].args);
        free(o->steps[i].path);
        free(o->steps[i].old_text);
        free(o->steps[i].new_text);
    }
    if (o)
        free(o->steps);
    free(o);
}

static const pol_vtable ORACLE_VT = {oracle_generate, oracle_free};

int oracle_open(policy **out, const pol_env *env, char *err)
{
    *out = NULL;
    if (!env || !env->gold_patch || !env->gold_patch[0])
        return rl_err(err, RL_EINVAL, "policy oracle: needs the task's gold patch");
    patch pt;
    int rc = patch_parse(&pt, env->gold_patch, err);
    if (rc < 0)
        return rl_err(err, rc, "policy oracle: gold patch: %s", err);
    policy *p = calloc(1, sizeof *p);
    oracle *o = calloc(1, sizeof *o);
    if (!p || !o || plan(o, &pt) < 0) {
        patch_free(&pt);
        free(p);
        if (o) {
            policy tmp = {.impl = o};
            oracle_free(&tmp);
        }
        return rl_err(err, RL_ENOMEM, "policy oracle: out of memory");
    }
    patch_free(&pt);
    p->vt = &ORACLE_VT;
    p->impl = o;
    snprintf(p->name, sizeof p->name, "oracle");
    *out = p;
    return 0;
}
