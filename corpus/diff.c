/* diff.c - unified diffs that `git apply` accepts (see diff.h).
 *
 * Steps: split both texts into lines (a line keeps its '\n', so "x" at the
 * end of a file without a newline differs from "x\n"), trim the common
 * head and tail, align the rest with Myers' greedy O(ND) search (keeping
 * each round's frontier to walk the path back), then group the edit
 * script into hunks with DIFF_CONTEXT lines around each change, merging
 * hunks whose contexts touch. When the middle needs more than
 * RL_DIFF_EDITS_MAX edits it is written as one delete-all/insert-all run:
 * still a correct diff, only not a minimal one.
 */
#include "corpus/diff.h"

#include "common/err.h"
#include "common/limits.h"
#include "common/vec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct line {
    const char *p;
    size_t n;      /* bytes, including the '\n' if present */
    uint64_t h;    /* hash, to compare quickly */
} line;

typedef struct lines {
    line *v;
    size_t n;
} lines;

static uint64_t hash_bytes(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h;
}

static int split_lines(lines *out, const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += s[i] == '\n';
    n += len && s[len - 1] != '\n';
    out->n = 0;
    if (n > RL_DIFF_LINES_MAX)
        return RL_ELIMIT;
    out->v = malloc((n ? n : 1) * sizeof *out->v);
    if (!out->v)
        return RL_ENOMEM;
    for (size_t i = 0; i < len;) {
        const char *e = memchr(s + i, '\n', len - i);
        size_t k = e ? (size_t)(e - (s + i)) + 1 : len - i;
        out->v[out->n++] = (line){s + i, k, hash_bytes(s + i, k)};
        i += k;
    }
    return 0;
}

static int line_eq(const line *a, const line *b)
{
    return a->h == b->h && a->n == b->n && !memcmp(a->p, b->p, a->n);
}

/* Edit script: one op per line of the output, in order. */
typedef enum { OP_EQ, OP_DEL, OP_INS } op_kind;

typedef struct op {
    op_kind k;
    size_t o, n; /* index in old (EQ, DEL) and in new (EQ, INS) */
} op;

typedef struct script {
    op *v;
    size_t n, cap;
} script;

static int script_push(script *s, op_kind k, size_t o, size_t n)
{
    if (VEC_GROW(s->v, s->cap, s->n + 1, SIZE_MAX) < 0)
        return RL_ENOMEM;
    s->v[s->n++] = (op){k, o, n};
    return 0;
}

/* Myers on old[a, a+N) and new[c, c+M). Writes the middle's ops (in order)
 * to mid. Returns RL_ELIMIT when more than max_d edits are needed. */
static int myers(script *mid, const lines *A, size_t a, size_t N, const lines *B, size_t c, size_t M,
                 size_t max_d)
{
    long off = (long)max_d + 1;
    size_t width = 2 * max_d + 3;
    long *v = calloc(width, sizeof *v);
    long **trace = calloc(max_d + 1, sizeof *trace);
    int rc = RL_ELIMIT;
    long D = -1;
    if (!v || !trace) {
        rc = RL_ENOMEM;
        goto done;
    }
    for (long d = 0; d <= (long)max_d; d++) {
        for (long k = -d; k <= d; k += 2) {
            long x;
            if (k == -d || (k != d && v[off + k - 1] < v[off + k + 1]))
                x = v[off + k + 1]; /* down: take a line of new */
            else
                x = v[off + k - 1] + 1; /* right: drop a line of old */
            long y = x - k;
            while (x < (long)N && y < (long)M && line_eq(&A->v[a + (size_t)x], &B->v[c + (size_t)y]))
                x++, y++;
            v[off + k] = x;
            if (x >= (long)N && y >= (long)M) {
                D = d;
                break;
            }
        }
        /* Keep this round's frontier for the walk back. */
        trace[d] = malloc((size_t)(2 * d + 1) * sizeof **trace);
        if (!trace[d]) {
            rc = RL_ENOMEM;
            goto done;
        }
        memcpy(trace[d], v + off - d, (size_t)(2 * d + 1) * sizeof *v);
        if (D >= 0)
            break;
    }
    if (D < 0)
        goto done;
    /* Walk back from (N, M), collecting ops in reverse. */
    script rev = {0};
    long x = (long)N, y = (long)M;
    rc = 0;
    for (long d = D; d > 0 && !rc; d--) {
        long *pv = trace[d - 1] + (d - 1); /* pv[k] for k in [-(d-1), d-1] */
        long k = x - y, pk;
        if (k == -d || (k != d && pv[k - 1] < pv[k + 1]))
            pk = k + 1;
        else
            pk = k - 1;
        long px = pv[pk], py = px - pk;
        while (x > px && y > py && !rc) { /* the snake after the edit */
            x--, y--;
            rc = script_push(&rev, OP_EQ, a + (size_t)x, c + (size_t)y);
        }
        if (rc)
            break;
        if (pk == k + 1) {
            y--;
            rc = script_push(&rev, OP_INS, a + (size_t)x, c + (size_t)y);
        } else {
            x--;
            rc = script_push(&rev, OP_DEL, a + (size_t)x, c + (size_t)y);
        }
    }
    while (!rc && x > 0 && y > 0) { /* the snake of round 0 */
        x--, y--;
        rc = script_push(&rev, OP_EQ, a + (size_t)x, c + (size_t)y);
    }
    for (size_t i = rev.n; !rc && i > 0; i--)
        rc = script_push(mid, rev.v[i - 1].k, rev.v[i - 1].o, rev.v[i - 1].n);
    free(rev.v);
done:
    if (trace)
        for (size_t d = 0; d <= max_d; d++)
            free(trace[d]);
    free(trace);
    free(v);
    return rc;
}

static int build_script(script *s, const lines *A, const lines *B)
{
    size_t pre = 0, suf = 0;
    while (pre < A->n && pre < B->n && line_eq(&A->v[pre], &B->v[pre]))
        pre++;
    while (suf < A->n - pre && suf < B->n - pre &&
           line_eq(&A->v[A->n - 1 - suf], &B->v[B->n - 1 - suf]))
        suf++;
    int rc = 0;
    for (size_t i = 0; i < pre && !rc; i++)
        rc = script_push(s, OP_EQ, i, i);
    size_t N = A->n - pre - suf, M = B->n - pre - suf;
    size_t max_d = N + M < RL_DIFF_LINES_MAX ? N + M : RL_DIFF_LINES_MAX;
    if (max_d > RL_DIFF_EDITS_MAX)
        max_d = RL_DIFF_EDITS_MAX;
    size_t before = s->n;
    if (!rc && (N || M)) {
        rc = myers(s, A, pre, N, B, pre, M, max_d);
        if (rc == RL_ELIMIT) { /* too different: replace the whole middle */
            s->n = before;
            rc = 0;
            for (size_t i = 0; i < N && !rc; i++)
                rc = script_push(s, OP_DEL, pre + i, pre);
            for (size_t i = 0; i < M && !rc; i++)
                rc = script_push(s, OP_INS, pre + N, pre + i);
        }
    }
    for (size_t i = 0; i < suf && !rc; i++)
        rc = script_push(s, OP_EQ, A->n - suf + i, B->n - suf + i);
    return rc;
}

/* Each writer returns nonzero when the buffer refused bytes. */
static int put_line(buf_t *out, char mark, const line *l)
{
    int bad = buf_putc(out, mark) | buf_append(out, l->p, l->n);
    if (!l->n || l->p[l->n - 1] != '\n')
        bad |= buf_puts(out, "\n\\ No newline at end of file\n");
    return bad;
}

static int put_range(buf_t *out, char sign, size_t start, size_t count)
{
    /* git: "-5" for one line, "-5,0" after line 5 for none, "-0,0" when
     * the file is empty. */
    size_t first = count ? start + 1 : start;
    if (count == 1)
        return buf_printf(out, "%c%zu", sign, first);
    return buf_printf(out, "%c%zu,%zu", sign, first, count);
}

static int write_hunks(buf_t *out, const script *s, const lines *A, const lines *B)
{
    size_t i = 0;
    int bad = 0;
    while (i < s->n) {
        while (i < s->n && s->v[i].k == OP_EQ)
            i++;
        if (i == s->n)
            break;
        /* Hunk: from DIFF_CONTEXT lines before this change to DIFF_CONTEXT
         * lines after the last change that is within 2*DIFF_CONTEXT. */
        size_t start = i >= DIFF_CONTEXT ? i - DIFF_CONTEXT : 0;
        size_t end = i; /* one past the last change */
        for (size_t j = i; j < s->n; j++) {
            if (s->v[j].k != OP_EQ)
                end = j + 1;
            else if (j - end >= 2 * DIFF_CONTEXT)
                break;
        }
        size_t stop = end + DIFF_CONTEXT < s->n ? end + DIFF_CONTEXT : s->n;
        size_t ocount = 0, ncount = 0;
        for (size_t j = start; j < stop; j++) {
            ocount += s->v[j].k != OP_INS;
            ncount += s->v[j].k != OP_DEL;
        }
        bad |= buf_puts(out, "@@ ") | put_range(out, '-', s->v[start].o, ocount) |
               buf_putc(out, ' ') | put_range(out, '+', s->v[start].n, ncount) |
               buf_puts(out, " @@\n");
        for (size_t j = start; j < stop && !bad; j++) {
            const op *o = &s->v[j];
            if (o->k == OP_EQ)
                bad |= put_line(out, ' ', &A->v[o->o]);
            else if (o->k == OP_DEL)
                bad |= put_line(out, '-', &A->v[o->o]);
            else
                bad |= put_line(out, '+', &B->v[o->n]);
        }
        i = stop;
    }
    return bad;
}

static int path_ok(const char *p)
{
    if (!*p || *p == '/')
        return 0;
    for (const char *c = p; *c; c++)
        if ((unsigned char)*c <= ' ' || *c == '"' || *c == '\\' || *c == 0x7f)
            return 0;
    for (const char *c = p; (c = strstr(c, "..")); c += 2)
        if ((c == p || c[-1] == '/') && (c[2] == '/' || c[2] == '\0'))
            return 0;
    return 1;
}

int diff_unified(buf_t *out, const char *path, const char *old_text, size_t old_len,
                 const char *new_text, size_t new_len, char *err)
{
    if (!path_ok(path))
        return rl_err(err, RL_EINVAL,
                      "diff: path \"%s\": expected a relative path without spaces, quotes or ..", path);
    if (old_len == new_len && !memcmp(old_text, new_text, old_len))
        return 0;
    lines A = {0}, B = {0};
    script s = {0};
    int rc = split_lines(&A, old_text, old_len);
    if (!rc)
        rc = split_lines(&B, new_text, new_len);
    if (!rc)
        rc = build_script(&s, &A, &B);
    if (!rc) {
        /* Written aside, then appended whole: a cut diff is worse than none. */
        buf_t d;
        buf_init(&d, out->max);
        int bad = buf_printf(&d, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n", path, path, path, path) |
                  write_hunks(&d, &s, &A, &B);
        if (bad || buf_append(out, buf_str(&d), d.len))
            rc = RL_ELIMIT;
        buf_dispose(&d);
    }
    free(A.v);
    free(B.v);
    free(s.v);
    if (rc == RL_ELIMIT)
        return rl_err(err, rc, "diff %s: more than %d lines or the output buffer is full", path,
                      RL_DIFF_LINES_MAX);
    if (rc)
        return rl_err(err, rc, "diff %s: out of memory", path);
    return 0;
}
