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
 *
 * Recovery demonstrations (oracle:recover=PERCENT): in that share of tasks
 * (a hash of the gold patch decides, so a task always gets the same
 * episode), the first edit is one a policy gets wrong in practice, and
 * the next turn repairs it from the tool's answer. Two mistakes, the ones
 * the built-in model makes (results/README.md, variant g5): an old_string
 * shrunk until it occurs more than once (the repair takes the minimal
 * edit: more of the line), or one with a name swapped for another of the
 * file's names, a number off by one when it has no name (the repair copies
 * the text edit_file shows as the most similar). Only single-hunk fixes get
 * one, and only when such a mistake exists in the file the policy read.
 * SFT with "mask_failed_calls" trains on the repair, never on the mistake.
 */
#include "common/err.h"
#include "common/limits.h"
#include "common/vec.h"
#include "policy/scripted.h"
#include "corpus/patch.h"

#include <cJSON.h>
#include <stdint.h>
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
    size_t n, alloc; /* at most RL_ORACLE_STEPS_MAX */
    size_t demo;  /* the edit step that a recovery demonstration precedes; n: none */
    uint64_t h;   /* hash of the gold patch: picks which mistake */
} oracle;

/* Appends a step. Returns 0, RL_ELIMIT or RL_ENOMEM. */
static int push(oracle *o, const char *tool, cJSON *args, const char *why)
{
    int rc = VEC_GROW(o->steps, o->alloc, o->n + 1, RL_ORACLE_STEPS_MAX);
    if (rc < 0) {
        cJSON_Delete(args);
        return rc;
    }
    step *s = o->steps;
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

/* The text of read_file's numbered lines ("   N| text") from l to e, one
 * '\n' per line, prefixes stripped; it ends at the first line that is not
 * numbered, whose start *stop gets (e when every line is). Caller frees. */
static char *unnumber(const char *l, const char *e, size_t *out_n, const char **stop)
{
    char *out = malloc((size_t)(e - l) + 1);
    size_t n = 0;
    if (!out)
        return NULL;
    for (; l < e; l++) {
        const char *le = memchr(l, '\n', (size_t)(e - l)), *c = l;
        le = le ? le : e;
        while (c < le && *c == ' ')
            c++;
        const char *d = c;
        while (d < le && *d >= '0' && *d <= '9')
            d++;
        if (d == c || d == le || *d != '|')
            break;
        d += d + 1 < le && d[1] == ' ' ? 2 : 1;
        memcpy(out + n, d, (size_t)(le - d));
        n += (size_t)(le - d);
        out[n++] = '\n';
        l = le;
    }
    out[n] = '\0';
    *out_n = n;
    *stop = l < e ? l : e;
    return out;
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
    const char *stop;
    char *out = unnumber(nl + 1, q, out_n, &stop);
    if (out && stop != q && !(*stop == '\n' && stop + 1 == q)) { /* only the blank line before </tool_response> may follow */
        free(out);
        return NULL;
    }
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

/* Lengths of the common prefix and (not overlapping it) suffix of a and b. */
static void common_ends(const char *a, size_t an, const char *b, size_t bn, size_t *pre, size_t *suf)
{
    size_t p = 0, q = 0;
    while (p < an && p < bn && a[p] == b[p])
        p++;
    while (q < an - p && q < bn - p && a[an - 1 - q] == b[bn - 1 - q])
        q++;
    *pre = p;
    *suf = q;
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
    size_t pre, suf;
    common_ends(old, on, neu, nn, &pre, &suf);
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

/* The args JSON of an edit_file call (NULL: out of memory). */
static char *edit_args(const char *path, const char *old, size_t on, const char *neu, size_t nn)
{
    cJSON *a = cJSON_CreateObject();
    char *ov = strndup(old, on), *nv = strndup(neu, nn), *out = NULL;
    if (a && ov && nv) {
        cJSON_AddStringToObject(a, "path", path);
        cJSON_AddStringToObject(a, "old_string", ov);
        cJSON_AddStringToObject(a, "new_string", nv);
        out = cJSON_PrintUnformatted(a);
    }
    cJSON_Delete(a);
    free(ov);
    free(nv);
    return out;
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
                args = edit_args(s->path, os, on, ws, wn);
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

/* ---- recovery demonstrations ------------------------------------------------ */

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static int unit_edge(const char *t, size_t n, size_t i)
{
    return i == 0 || i == n || !(is_word(t[i - 1]) && is_word(t[i]));
}

/* Words no one misremembers as another name. */
static int is_keyword(const char *w, size_t n)
{
    static const char *const KW[] = {"if", "else", "for", "while", "do", "return", "int", "long", "char",
                                      "void", "const", "static", "unsigned", "struct", "double", "float",
                                      "size_t", "include", "define", "break", "continue", "sizeof", NULL};
    for (size_t i = 0; KW[i]; i++)
        if (strlen(KW[i]) == n && !memcmp(KW[i], w, n))
            return 1;
    return 0;
}

/* Longest old_string a demonstration shrinks (longer edits are whole hunks). */
#define ORACLE_DEMO_OLD_MAX 400

/* The mistake "too short": the shortest piece of old (cut at unit edges
 * inside the text old and new share, so new is cut alike) with at least
 * ORACLE_MIN_EDIT_CHARS non-blank characters that occurs more than once
 * in file. NULL when every such piece is unique. */
static char *shrunk_edit(const char *path, const char *old, const char *neu, const char *file, size_t fn)
{
    size_t on = strlen(old), nn = strlen(neu), pre, suf;
    if (on > ORACLE_DEMO_OLD_MAX)
        return NULL;
    common_ends(old, on, neu, nn, &pre, &suf);
    size_t best_lo = 0, best_hi = 0;
    for (size_t lo = 0; lo <= pre; lo++) {
        if (!unit_edge(old, on, lo) || (lo < on && is_blank(old[lo])))
            continue;
        for (size_t hi = on; hi >= on - suf && hi > lo; hi--) {
            if (!unit_edge(old, on, hi) || is_blank(old[hi - 1]))
                continue;
            size_t shown = 0;
            for (size_t i = lo; i < hi; i++)
                shown += !is_blank(old[i]) && old[i] != '\n';
            if (shown < ORACLE_MIN_EDIT_CHARS || (best_hi && hi - lo >= best_hi - best_lo))
                continue;
            if (count_upto2(file, fn, old + lo, hi - lo) == 2) {
                best_lo = lo;
                best_hi = hi;
            }
        }
    }
    if (!best_hi)
        return NULL;
    return edit_args(path, old + best_lo, best_hi - best_lo, neu + best_lo, nn - (on - best_hi) - best_lo);
}

/* The mistake "misremembered": one word of old replaced, a name by another
 * name of the file (h picks which), a number by the next one, wherever
 * that leaves old_string absent from the file. The same word in the text
 * new shares with old is replaced too, so the edit stays coherent. NULL
 * when no replacement works. */
static char *swapped_edit(const char *path, const char *old, const char *neu, const char *file, size_t fn,
                          uint64_t h)
{
    size_t on = strlen(old), nn = strlen(neu), pre, suf;
    if (on > ORACLE_DEMO_OLD_MAX)
        return NULL;
    common_ends(old, on, neu, nn, &pre, &suf);
    /* the file's names, in order of first appearance */
    const char *names[64];
    size_t lens[64], nnames = 0;
    for (size_t i = 0; i < fn && nnames < 64;) {
        if (!is_word(file[i]) || (file[i] >= '0' && file[i] <= '9') || (i && is_word(file[i - 1]))) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < fn && is_word(file[j]))
            j++;
        size_t k = 0;
        while (k < nnames && !(lens[k] == j - i && !memcmp(names[k], file + i, j - i)))
            k++;
        if (k == nnames && !is_keyword(file + i, j - i)) {
            names[nnames] = file + i;
            lens[nnames++] = j - i;
        }
        i = j;
    }
    char *out = NULL;
    for (int pass = 0; pass < 2 && !out; pass++) /* names first, then numbers */
        for (size_t w = 0; w < on && !out;) {
            if (!is_word(old[w]) || !unit_edge(old, on, w)) {
                w++;
                continue;
            }
            size_t we = w;
            while (we < on && is_word(old[we]))
                we++;
            int number = old[w] >= '0' && old[w] <= '9';
            char num[32];
            const char *rep = NULL;
            size_t rl = 0;
            if (pass == 1 && number && we - w < 18) {
                rl = (size_t)snprintf(num, sizeof num, "%lld", strtoll(old + w, NULL, 10) + 1);
                rep = num;
            }
            for (size_t t = 0; pass == 0 && !number && !is_keyword(old + w, we - w) && t < nnames && !rep; t++) {
                size_t k = (size_t)((h + t) % nnames);
                if (!(lens[k] == we - w && !memcmp(names[k], old + w, we - w))) {
                    rep = names[k];
                    rl = lens[k];
                }
            }
            if (rep) {
                char *bo = malloc(on - (we - w) + rl + 1), *bn = malloc(nn + rl + 1);
                if (bo && bn) {
                    memcpy(bo, old, w);
                    memcpy(bo + w, rep, rl);
                    memcpy(bo + w + rl, old + we, on - we + 1);
                    size_t bon = on - (we - w) + rl, bnn = nn;
                    memcpy(bn, neu, nn + 1);
                    if (we <= pre || w >= on - suf) { /* shared text: the same place in new */
                        size_t nw = we <= pre ? w : nn - (on - w);
                        memcpy(bn, neu, nw);
                        memcpy(bn + nw, rep, rl);
                        memcpy(bn + nw + rl, neu + nw + (we - w), nn - nw - (we - w) + 1);
                        bnn = nn - (we - w) + rl;
                    }
                    if (count_upto2(file, fn, bo, bon) == 0 && strcmp(bo, bn))
                        out = edit_args(path, bo, bon, bn, bnn);
                }
                free(bo);
                free(bn);
            }
            w = we;
        }
    return out;
}

/* For a demonstration, the mistaken edit (args JSON) and the repair, both
 * from the file the policy read; 0 when the task gets none (then the
 * episode is the plain one). *kind: 0 misremembered, 1 too short.
 * Made again on each turn that needs it rather than kept: a reply is a
 * function of its context alone, as for every policy. */
static int demo_edits(const oracle *o, const char *ctx, size_t len, char **bad, char **fix, int *kind)
{
    *bad = *fix = NULL;
    if (o->demo >= o->n)
        return 0;
    const step *s = &o->steps[o->demo];
    size_t fn = 0;
    char *file = seen_file(ctx, len, s->read_turn, &fn);
    *fix = file ? minimal_edit(s, file, fn) : NULL;
    cJSON *a = *fix ? cJSON_Parse(*fix) : NULL;
    const cJSON *ov = cJSON_GetObjectItem(a, "old_string"), *nv = cJSON_GetObjectItem(a, "new_string");
    if (cJSON_IsString(ov) && cJSON_IsString(nv)) {
        int first = (int)(o->h >> 32 & 1);
        for (int t = 0; t < 2 && !*bad; t++) {
            *kind = first ^ t;
            *bad = *kind ? shrunk_edit(s->path, ov->valuestring, nv->valuestring, file, fn)
                         : swapped_edit(s->path, ov->valuestring, nv->valuestring, file, fn, o->h);
        }
    }
    cJSON_Delete(a);
    free(file);
    if (!*bad) {
        free(*fix);
        *fix = NULL;
        return 0;
    }
    return 1;
}

static const char *const REPAIR_WHY[3] = {
    "The old_string is not an exact copy of the file; copy it from the most similar lines shown.",
    "The old_string occurs more than once; take more of its line so that it is unique.",
    "The old_string is not an exact copy of the file; copy it from the file as read.",
};

/* Whether text occurs in the numbered lines ("N| text") that the last tool
 * response shows after its "most similar" header. */
static int hint_shows(const char *ctx, size_t len, const char *text)
{
    char *r = scripted_last_response(ctx, len), *out = NULL;
    const char *h = r ? strstr(r, "the most similar text in ") : NULL;
    const char *l = h ? strchr(h, '\n') : NULL, *stop;
    size_t n = 0;
    int found = 0;
    if (l && (out = unnumber(l + 1, l + strlen(l), &n, &stop))) {
        cJSON *a = cJSON_Parse(text);
        const cJSON *ov = cJSON_GetObjectItem(a, "old_string");
        found = cJSON_IsString(ov) && strstr(out, ov->valuestring);
        cJSON_Delete(a);
    }
    free(out);
    free(r);
    return found;
}

static int oracle_generate(policy *p, pol_response *resp, const pol_request *req, size_t n, char *err)
{
    oracle *o = p->impl;
    for (size_t i = 0; i < n; i++) {
        size_t turn = scripted_turn(req[i].context, req[i].context_len);
        int rc;
        char *bad = NULL, *fix = NULL;
        int kind = 0;
        if (turn >= o->demo && o->demo < o->n && demo_edits(o, req[i].context, req[i].context_len, &bad, &fix, &kind)) {
            if (turn == o->demo || turn == o->demo + 1) {
                const step *s = &o->steps[o->demo];
                rc = scripted_reply(&resp[i], req[i].context, req[i].context_len,
                               turn == o->demo                                 ? s->why
                               : kind || hint_shows(req[i].context, req[i].context_len, fix) ? REPAIR_WHY[kind]
                                                                                             : REPAIR_WHY[2],
                               NULL, s->tool,
                               turn == o->demo ? bad : fix, err);
                free(bad);
                free(fix);
                if (rc < 0)
                    return rc;
                continue;
            }
            turn--; /* one turn more than the plan: the mistake */
        }
        free(bad);
        free(fix);
        if (turn < o->n) {
            const step *s = &o->steps[turn];
            char *small = NULL;
            if (s->old_text) {
                size_t fn = 0;
                char *file = seen_file(req[i].context, req[i].context_len, s->read_turn, &fn);
                small = file ? minimal_edit(s, file, fn) : NULL;
                free(file);
            }
            rc = scripted_reply(&resp[i], req[i].context, req[i].context_len, s->why, NULL, s->tool,
                           small ? small : s->args, err);
            free(small);
        } else {
            rc = scripted_reply(&resp[i], req[i].context, req[i].context_len, NULL, "Done.", NULL, NULL, err);
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

int oracle_open(policy **out, const pol_env *env, int recover_pct, char *err)
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
    rc = p && o ? plan(o, &pt) : RL_ENOMEM;
    if (rc < 0) {
        patch_dispose(&pt);
        free(p);
        if (o) {
            policy tmp = {.impl = o};
            oracle_free(&tmp);
        }
        if (rc == RL_ELIMIT)
            return rl_err(err, rc, "policy oracle: gold patch: more than %d steps (a read per "
                          "file, an edit per hunk)", RL_ORACLE_STEPS_MAX);
        return rl_err(err, RL_ENOMEM, "policy oracle: out of memory");
    }
    patch_dispose(&pt);
    o->h = fnv1a(env->gold_patch);
    o->demo = o->n;
    size_t edits = 0, at = o->n;
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->steps[i].tool, "edit_file") || !strcmp(o->steps[i].tool, "write_file")) {
            edits++;
            at = i;
        }
    if (edits == 1 && o->steps[at].old_text && (int)(o->h % 100) < recover_pct)
        o->demo = at;
    p->vt = &ORACLE_VT;
    p->impl = o;
    snprintf(p->name, sizeof p->name, "oracle");
    *out = p;
    return 0;
}
