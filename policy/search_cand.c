/* search_cand.c - candidate repairs and their ranking for the search policy.
 *
 * A small bug is usually the inverse of another small bug, so most
 * candidates are the mutation sites of corpus/mutate.h, enumerated on the
 * file text the policy reconstructed from read_file output. A few kinds the
 * mutator does not make (because a bug generator has no use for them) are
 * added here: the same comparison flipped on every side of a symmetric
 * condition, two arguments of a longer call swapped, a member read from the
 * wrong variable, a sibling function called instead of the right one, a
 * missing character in a chain of comparisons, a step of 1 that should be a
 * length.
 *
 * Each candidate becomes one edit_file call: the changed lines, grown with
 * neighbours until the old text is unique in the file and the new text
 * unique in the result (so that the edit can be reverted the same way).
 *
 * Ranking, highest first: how close the enclosing function is to the
 * failing tests (its level), how many failing tests reach it, the prior of
 * the kind of change (boundary flips are the most common defects), words
 * of the changed line that also occur in the failure messages or the
 * problem statement, and traceback lines that point at it. Ties are broken
 * by a hash of the episode seed and the candidate, so different seeds try
 * equally ranked candidates in different orders.
 */
#include "policy/search.h"

#include "common/err.h"
#include "common/limits.h"
#include "common/vec.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t search_mix(uint64_t a, uint64_t b)
{
    uint64_t z = a ^ (b + 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t search_hash(const void *p, size_t n, uint64_t h)
{
    const unsigned char *s = p;
    h ^= 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

void search_cand_dispose(search_cand *c)
{
    free(c->old_block);
    free(c->new_block);
    free(c->desc);
    memset(c, 0, sizeof *c);
}

/* ---- edit blocks -------------------------------------------------------- */

typedef struct rep {
    size_t s, e;       /* byte range of the original text */
    const char *repl;  /* replacement */
} rep;

static size_t count_occ(const char *hay, size_t hn, const char *nd, size_t nn)
{
    if (!nn)
        return 2;
    size_t c = 0;
    const char *p = hay, *end = hay + hn;
    while (c < 2 && p < end && (p = memmem(p, (size_t)(end - p), nd, nn))) {
        c++;
        p++;
    }
    return c;
}

static int blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isspace((unsigned char)s[i]))
            return 0;
    return 1;
}

static size_t line_start(const char *t, size_t i)
{
    while (i > 0 && t[i - 1] != '\n')
        i--;
    return i;
}

static size_t line_end(const char *t, size_t len, size_t i)
{
    while (i < len && t[i] != '\n')
        i++;
    return i;
}

static int line_no(const char *t, size_t i)
{
    int l = 1;
    for (size_t k = 0; k < i; k++)
        l += t[k] == '\n';
    return l;
}

/* Applies reps (sorted, disjoint) to text: a new string. */
static char *apply_reps(const char *t, size_t len, const rep *r, size_t nr, size_t *out_len)
{
    size_t n = len;
    for (size_t i = 0; i < nr; i++)
        n = n - (r[i].e - r[i].s) + strlen(r[i].repl);
    char *o = malloc(n + 1);
    if (!o)
        return NULL;
    size_t at = 0, w = 0;
    for (size_t i = 0; i < nr; i++) {
        memcpy(o + w, t + at, r[i].s - at);
        w += r[i].s - at;
        size_t k = strlen(r[i].repl);
        memcpy(o + w, r[i].repl, k);
        w += k;
        at = r[i].e;
    }
    memcpy(o + w, t + at, len - at);
    w += len - at;
    o[w] = 0;
    *out_len = w;
    return o;
}

/* Unicode replacement character: the observation had a byte it could not
 * show, so the reconstructed line is not the file's. */
static int has_fffd(const char *s, size_t n)
{
    return memmem(s, n, "\xef\xbf\xbd", 3) != NULL;
}

typedef struct cand_in {
    const char *path;
    const char *text;
    size_t len;
    const search_def *defs;
    size_t ndefs;
    const search_rank_in *rk;
    int file_index;
} cand_in;

/* Innermost definition holding line (not a class when a method holds it). */
static const search_def *def_at(const cand_in *ci, int line)
{
    const search_def *best = NULL;
    for (size_t i = 0; i < ci->ndefs; i++) {
        const search_def *d = &ci->defs[i];
        if (line < d->start || line > d->end)
            continue;
        if (!best || d->start >= best->start)
            best = d;
    }
    return best;
}

static int level_points(int level)
{
    static const int P[] = {40, 35, 30, 20};
    if (level < 0)
        return 0;
    return level <= RL_SEARCH_LEVEL_MAX ? P[level] : 0;
}

/* Words of the changed line that the failure or the problem mentions. */
static int hint_points(const cand_in *ci, size_t ls, size_t le)
{
    if (!ci->rk->hint_text)
        return 0;
    search_tok *k;
    size_t nt = search_tokenize(&k, ci->text + ls, le - ls, MUT_LANG_C, 256);
    int pts = 0;
    char seen[8][SR_NAME_MAX];
    int nseen = 0;
    for (size_t i = 0; i < nt && pts < 6; i++) {
        if (k[i].kind != SR_T_IDENT && k[i].kind != SR_T_NUM)
            continue;
        size_t n = k[i].e - k[i].s;
        if (n < 2 || n >= SR_NAME_MAX)
            continue;
        char w[SR_NAME_MAX];
        memcpy(w, ci->text + ls + k[i].s, n);
        w[n] = 0;
        if (k[i].kind == SR_T_IDENT && search_name_ignored(w))
            continue;
        if (k[i].kind == SR_T_NUM && (!strcmp(w, "0") || !strcmp(w, "1")))
            continue;
        int dup = 0;
        for (int j = 0; j < nseen; j++)
            dup |= !strcmp(seen[j], w);
        if (dup || !search_has_word(ci->rk->hint_text, w))
            continue;
        if (nseen < 8)
            memcpy(seen[nseen++], w, n + 1);
        pts += 2;
    }
    free(k);
    return pts;
}

/* The number a change replaces appears in the failure text. */
static int old_number_shown(const cand_in *ci, const rep *r)
{
    size_t n = r->e - r->s;
    if (n == 0 || n >= 32 || !isdigit((unsigned char)ci->text[r->s]))
        return 0;
    char w[32];
    memcpy(w, ci->text + r->s, n);
    w[n] = 0;
    return search_has_word(ci->rk->hint_text, w);
}

/* A change that brings in a value or a name the failure shows (63 where
 * the test expected 63, '\r' for a problem about carriage returns). */
static int intro_points(const cand_in *ci, const rep *r, size_t nr)
{
    const char *h = ci->rk->hint_text;
    if (!h)
        return 0;
    for (size_t i = 0; i < nr; i++) {
        const char *p = r[i].repl;
        size_t ol = r[i].e - r[i].s;
        while (*p) {
            if (isalnum((unsigned char)*p) || *p == '_' || *p == '\\') {
                size_t k = *p == '\\' ? 2 : 0;
                while (p[k] && (isalnum((unsigned char)p[k]) || p[k] == '_'))
                    k++;
                if (*p == '\\' && !p[1])
                    break;
                char w[SR_NAME_MAX];
                if (k >= 2 && k < SR_NAME_MAX && !(k == 1 && (*p == '0' || *p == '1'))) {
                    memcpy(w, p, k);
                    w[k] = 0;
                    int common = !strcmp(w, "0") || !strcmp(w, "1") || search_name_ignored(w);
                    int fresh = !memmem(ci->text + r[i].s, ol, w, k);
                    int shown = w[0] == '\\' ? strstr(h, w) != NULL : search_has_word(h, w);
                    /* a number: the failure must show the old value too
                     * (got 62, expected 63), else any date or count in the
                     * message would vote */
                    if (isdigit((unsigned char)w[0]) && !old_number_shown(ci, &r[i]))
                        shown = 0;
                    /* an escape the problem spells out (\r, \t) is a
                     * strong sign: a character class that misses it */
                    if (fresh && shown && w[0] == '\\')
                        return 8;
                    if (fresh && shown && (!common || isdigit((unsigned char)w[0])))
                        return 4;
                } else if (k == 1 && isdigit((unsigned char)*p) && *p > '1') {
                    w[0] = *p;
                    w[1] = 0;
                    if (!memmem(ci->text + r[i].s, ol, w, 1) && search_has_word(h, w) && old_number_shown(ci, &r[i]))
                        return 4;
                }
                p += k ? k : 1;
            } else {
                p++;
            }
        }
    }
    return 0;
}

/* Places where an earlier attempt changed the outcome of a failing test:
 * the defect is likely near (mutation-based fault localisation). */
static int hot_points(const cand_in *ci, int line, const search_def *d)
{
    int best = 0;
    for (size_t i = 0; i < ci->rk->nhot; i++) {
        if (strcmp(ci->rk->hot_path[i], ci->path))
            continue;
        int l = ci->rk->hot_line[i], p = 0;
        if (d && l >= d->start && l <= d->end)
            p = 5;
        if (l >= line - 2 && l <= line + 2)
            p += 4;
        best = p > best ? p : best;
    }
    return best;
}

static int loc_points(const cand_in *ci, int line, const search_def *d)
{
    int best = 0;
    for (size_t i = 0; i < ci->rk->nloc; i++) {
        if (strcmp(ci->rk->loc_path[i], ci->path))
            continue;
        int l = ci->rk->loc_line[i];
        if (l >= line - 3 && l <= line + 3)
            best = best > 10 ? best : 10;
        else if (d && l >= d->start && l <= d->end)
            best = best > 5 ? best : 5;
    }
    return best;
}

typedef struct cands {
    search_cand **v;
    size_t n, *cap, max;
} cands;

/* Sampling, the way a model samples at a temperature: adding Gumbel noise
 * of scale beta to the scores and taking the best is drawing from
 * softmax(score / beta). beta = RL_SEARCH_NOISE_SCALE * temperature; at
 * temperature 0 only exact ties are broken by the seed. */
static int gumbel_points(double temperature, uint64_t r)
{
    if (temperature <= 0)
        return 0;
    double u = ((double)(r >> 11) + 0.5) / 9007199254740992.0; /* (0, 1) */
    double g = -log(-log(u));
    return (int)lround(RL_SEARCH_NOISE_SCALE * temperature * g);
}

/* Builds the candidate of reps (a change of one or a few nearby spots):
 * the edit block, its identity and its score. */
/* extra: points the caller computed (consistency with siblings). */
static void add_cand_x(cands *C, const cand_in *ci, const rep *r, size_t nr, int prior, int extra, const char *what)
{
    if (C->n >= C->max || nr == 0)
        return;
    size_t nlen;
    char *nt = apply_reps(ci->text, ci->len, r, nr, &nlen);
    if (!nt)
        return;
    if (nlen == ci->len && !memcmp(nt, ci->text, nlen)) {
        free(nt);
        return;
    }
    /* Changed lines, then grown until both sides are unique. */
    /* The block ends at the end of the line holding the end of the last
     * change (past it when the change removes a whole line): b >= e, so
     * the new side b + delta is never before a. */
    size_t a = line_start(ci->text, r[0].s), b = line_end(ci->text, ci->len, r[nr - 1].e);
    long delta = (long)nlen - (long)ci->len;
    size_t a0 = a, b0 = b;
    int grow = 0, ok = 0;
    for (int step = 0; step <= 2 * RL_SEARCH_CONTEXT_LINES; step++) {
        size_t ol = b - a, nl = (size_t)((long)b + delta) - a;
        const char *ob = ci->text + a, *nb = nt + a;
        if (!blank(ob, ol) && !blank(nb, nl) && count_occ(ci->text, ci->len, ob, ol) == 1 &&
            count_occ(nt, nlen, nb, nl) == 1) {
            ok = 1;
            break;
        }
        /* Alternate: one line below, then one above. */
        if ((grow++ % 2 == 0 && b < ci->len) || a == 0) {
            if (b >= ci->len)
                break;
            b = line_end(ci->text, ci->len, b + 1);
        } else {
            a = line_start(ci->text, a - 1);
        }
    }
    if (!ok || b - a > RL_SEARCH_BLOCK_MAX || has_fffd(ci->text + a, b - a)) {
        free(nt);
        return;
    }
    search_cand c = {0};
    c.file = ci->file_index;
    c.line = line_no(ci->text, r[0].s);
    c.old_block = strndup(ci->text + a, b - a);
    c.new_block = strndup(nt + a, (size_t)((long)b + delta) - a);
    /* Identity: the file and the minimal changed lines, both ways. */
    uint64_t hp = search_hash(ci->path, strlen(ci->path), 0);
    uint64_t ho = search_hash(ci->text + a0, b0 - a0, 1), hn = search_hash(nt + a0, (size_t)((long)b0 + delta) - a0, 2);
    uint64_t ho2 = search_hash(ci->text + a0, b0 - a0, 2), hn2 = search_hash(nt + a0, (size_t)((long)b0 + delta) - a0, 1);
    c.key = search_mix(hp, ho ^ (hn * 31));
    c.rkey = search_mix(hp, hn2 ^ (ho2 * 31));
    const search_def *d = def_at(ci, c.line);
    c.level = d ? d->level : SR_LEVEL_NONE;
    int pts = d ? level_points(d->level) : 0;
    if (d && d->level <= RL_SEARCH_LEVEL_MAX && d->reach > 1)
        pts += 4 * (d->reach - 1 < 3 ? d->reach - 1 : 3);
    size_t ls = line_start(ci->text, r[0].s), le = line_end(ci->text, ci->len, r[0].s);
    pts += prior + extra + hint_points(ci, ls, le) + loc_points(ci, c.line, d) + intro_points(ci, r, nr) +
           hot_points(ci, c.line, d);
    c.fn = d ? search_mix(hp, (uint64_t)d->start) : hp;
    c.jitter = search_mix(ci->rk->seed, c.key);
    c.score = pts + gumbel_points(ci->rk->temperature, search_mix(c.jitter, 0x6a09e667f3bcc908ULL));
    /* The changed line as it would read, so that two changes of one line
     * are told apart in the reasoning. */
    size_t nls = line_start(nt, r[0].s), nle = line_end(nt, nlen, nls);
    while (nls < nle && isspace((unsigned char)nt[nls]))
        nls++;
    int shown = (int)(nle - nls < 70 ? nle - nls : 70);
    char desc[512];
    if (d)
        snprintf(desc, sizeof desc, "%s in %s() at %s:%d (\"%.*s%s\")", what, d->name, ci->path, c.line, shown,
                 nt + nls, nle - nls > 70 ? "..." : "");
    else
        snprintf(desc, sizeof desc, "%s at %s:%d (\"%.*s%s\")", what, ci->path, c.line, shown, nt + nls,
                 nle - nls > 70 ? "..." : "");
    c.desc = strdup(desc);
    free(nt);
    if (!c.old_block || !c.new_block || !c.desc) {
        search_cand_dispose(&c);
        return;
    }
    if (VEC_GROW(*C->v, *C->cap, C->n + 1, C->max) < 0) {
        search_cand_dispose(&c); /* out of memory: C->n is below C->max */
        return;
    }
    (*C->v)[C->n++] = c;
}

static void add_cand(cands *C, const cand_in *ci, const rep *r, size_t nr, int prior, const char *what)
{
    add_cand_x(C, ci, r, nr, prior, 0, what);
}

/* ---- priors -------------------------------------------------------------- */

enum {
    PRI_FLIP_BOUNDARY = 12, PRI_SYM_FLIP = 10, PRI_FLIP_EQ = 9, PRI_LOOP_BOUND = 8, PRI_CONST = 5,
    PRI_ARITH = 7, PRI_SWAP_ARGS = 7, PRI_FLIP_BOOL = 6, PRI_DISJUNCT = 6, PRI_LEN_STEP = 5,
    PRI_WRONG_RETURN = 5, PRI_MEMBER = 4, PRI_SIBLING = 4, PRI_DROP_COND = 4, PRI_NEGATE = 3,
    PRI_SWAP_CMP = 2, PRI_DROP_STMT = 1,
};

static int site_prior(const mut_site *s, const char *text)
{
    switch (s->kind) {
    case MUT_FLIP_CMP: {
        /* < <-> <= and > <-> >= are off-by-one fixes; == <-> != inverts. */
        size_t ol = s->end - s->start;
        const char *o = text + s->start;
        if ((ol == 1 || ol == 2) && (o[0] == '<' || o[0] == '>') && s->repl[0] == o[0])
            return PRI_FLIP_BOUNDARY;
        if ((o[0] == '=' || o[0] == '!') && (s->repl[0] == '=' || s->repl[0] == '!'))
            return PRI_FLIP_EQ;
        return PRI_FLIP_EQ - 3;
    }
    case MUT_LOOP_BOUND: return PRI_LOOP_BOUND;
    case MUT_CONST: return PRI_CONST;
    case MUT_ARITH: return PRI_ARITH;
    case MUT_SWAP_ARGS: return PRI_SWAP_ARGS;
    case MUT_FLIP_BOOL: return PRI_FLIP_BOOL;
    case MUT_WRONG_RETURN: return PRI_WRONG_RETURN;
    case MUT_DROP_COND: return PRI_DROP_COND;
    case MUT_NEGATE_COND: return PRI_NEGATE;
    case MUT_SWAP_CMP: return PRI_SWAP_CMP;
    case MUT_DROP_STMT: return PRI_DROP_STMT;
    default: return 0;
    }
}

/* ---- consistency with sibling comparisons ------------------------------- */

static int tis(const char *t, const search_tok *k, const char *s)
{
    size_t n = strlen(s);
    return k->e - k->s == n && !memcmp(t + k->s, s, n);
}


static int is_lit(const search_tok *k) { return k->kind == SR_T_NUM || k->kind == SR_T_CHAR || k->kind == SR_T_STR; }

/* Operand key of token i, extended over member access (a->b.c). */
static void operand_key(char *out, const char *t, const search_tok *k, size_t nt, size_t i, int backward)
{
    out[0] = 0;
    if (i >= nt || (k[i].kind != SR_T_IDENT && !is_lit(&k[i])))
        return;
    size_t a = i, b = i;
    if (k[i].kind == SR_T_IDENT) {
        if (backward)
            while (a >= 2 && (tis(t, &k[a - 1], "->") || tis(t, &k[a - 1], ".")) && k[a - 2].kind == SR_T_IDENT)
                a -= 2;
        else
            while (b + 2 < nt && (tis(t, &k[b + 1], "->") || tis(t, &k[b + 1], ".")) && k[b + 2].kind == SR_T_IDENT)
                b += 2;
        if (!backward && b + 1 < nt && (tis(t, &k[b + 1], "(") || tis(t, &k[b + 1], "[")))
            return; /* a call or an index: not a plain operand */
        if (backward && a >= 1 && tis(t, &k[a - 1], "]"))
            return;
    }
    size_t n = k[b].e - k[a].s;
    if (n >= SR_NAME_MAX)
        return;
    memcpy(out, t + k[a].s, n);
    out[n] = 0;
}

size_t search_find_cmps(search_cmp **out, size_t n, size_t *cap, size_t max, const char *t, size_t len, mut_lang lang,
                    int file)
{
    search_tok *k;
    size_t nt = search_tokenize(&k, t, len, lang, RL_SEARCH_TOKENS_MAX);
    if (max > RL_SEARCH_CMPS_MAX)
        max = RL_SEARCH_CMPS_MAX;
    for (size_t i = 1; i + 1 < nt && n < max; i++) {
        int lt = tis(t, &k[i], "<") || tis(t, &k[i], "<="), gt = tis(t, &k[i], ">") || tis(t, &k[i], ">=");
        if (!lt && !gt)
            continue;
        search_cmp c = {0};
        c.file = file;
        c.off = k[i].s;
        c.line = k[i].line;
        c.dir = lt ? -1 : 1;
        c.strict = k[i].e - k[i].s == 1;
        operand_key(c.lkey, t, k, nt, i - 1, 1);
        operand_key(c.rkey, t, k, nt, i + 1, 0);
        int llit = is_lit(&k[i - 1]), rlit = is_lit(&k[i + 1]);
        const search_tok *bt = &k[i + 1];
        if (llit && !rlit) {
            bt = &k[i - 1];
            char tmp[SR_NAME_MAX];
            memcpy(tmp, c.lkey, sizeof tmp);
            memcpy(c.lkey, c.rkey, sizeof tmp);
            memcpy(c.rkey, tmp, sizeof tmp);
            c.dir = -c.dir;
        }
        c.rkind = bt->kind == SR_T_NUM ? 'n' : bt->kind == SR_T_CHAR ? 'c' : bt->kind == SR_T_STR ? 's' : 'i';
        if (!c.lkey[0] && !c.rkey[0])
            continue;
        if (VEC_GROW(*out, *cap, n + 1, max) < 0)
            break; /* out of memory: the loop stays below max */
        (*out)[n++] = c;
    }
    free(k);
    return n;
}

/* <= and > put the bound inside the lower side: the cut lies after it. */
static int cut_after(int dir, int strict) { return (dir < 0 && !strict) || (dir > 0 && strict); }

/* Points for making the comparison at byte off strict or not: code that
 * tests the same variable the same way in this file (c >= 'A' && c <=
 * 'Z' next to c < 'z'), or cuts at the same bound anywhere (v >= MAX in
 * one file, cp <= MAX in another: MAX on different sides), suggests the
 * odd one out is the defect. */
static int consistency_points(const cand_in *ci, size_t off, int new_strict)
{
    const search_rank_in *rk = ci->rk;
    const search_cmp *me = NULL;
    for (size_t i = 0; i < rk->ncmps && !me; i++)
        if (rk->cmps[i].file == ci->file_index && rk->cmps[i].off == off)
            me = &rk->cmps[i];
    if (!me)
        return 0;
    const search_def *dm = def_at(ci, me->line);
    int pro = 0, con = 0;
    int new_cut = cut_after(me->dir, new_strict), old_cut = cut_after(me->dir, me->strict);
    int bound_ok = me->rkey[0] && strcmp(me->rkey, "0") && strcmp(me->rkey, "1");
    for (size_t i = 0; i < rk->ncmps; i++) {
        const search_cmp *c = &rk->cmps[i];
        if (c == me)
            continue;
        int here = c->file == ci->file_index;
        int w = here && def_at(ci, c->line) == dm ? 2 : 1;
        /* Same variable against literals of one kind ('A'..'Z', 'a'..'z'):
         * one style of bounds. Against a name, the bound decides. */
        if (here && me->lkey[0] && c->dir == me->dir && !strcmp(c->lkey, me->lkey) && me->rkind != 'i' &&
            c->rkind == me->rkind) {
            if (c->strict == new_strict)
                pro += w;
            else
                con += w;
        } else if (bound_ok && !strcmp(c->rkey, me->rkey)) {
            int cc = cut_after(c->dir, c->strict);
            if (cc == new_cut)
                pro += 2 * w;
            else if (cc == old_cut)
                con += 2 * w;
        }
    }
    return pro > con ? 6 : con > pro ? -3 : 0;
}

/* The argument text of the call whose '(' is token o, with reps applied
 * and whitespace removed. */
static char *call_text(const cand_in *ci, const search_tok *k, size_t nt, size_t o, const rep *r, size_t nr)
{
    int depth = 0;
    size_t close = nt;
    for (size_t j = o; j < nt && close == nt; j++) {
        if (tis(ci->text, &k[j], "("))
            depth++;
        else if (tis(ci->text, &k[j], ")") && --depth == 0)
            close = j;
    }
    if (close == nt || k[close].e - k[o].s > 1000)
        return NULL;
    size_t a = k[o].s, b = k[close].e;
    char *out = malloc(2 * (b - a) + 256);
    if (!out)
        return NULL;
    size_t w = 0;
    for (size_t i = a; i < b;) {
        const rep *hit = NULL;
        for (size_t q = 0; q < nr; q++)
            if (r[q].s == i && r[q].e <= b)
                hit = &r[q];
        if (hit) {
            for (const char *p = hit->repl; *p && w < 2 * (b - a) + 200; p++)
                if (!isspace((unsigned char)*p))
                    out[w++] = *p;
            i = hit->e > i ? hit->e : i + 1;
            continue;
        }
        if (!isspace((unsigned char)ci->text[i]))
            out[w++] = ci->text[i];
        i++;
    }
    out[w] = 0;
    return out;
}

/* A swap that makes a call read like another call of the same function
 * (make_date(out, y, d, m) when the other branch has make_date(out, y, m,
 * d)) is likely the repair; one that breaks such a likeness is not. */
static int call_points(const cand_in *ci, const search_tok *k, size_t nt, size_t o, const rep *r, size_t nr)
{
    if (o == 0 || k[o - 1].kind != SR_T_IDENT)
        return 0;
    char *mine = call_text(ci, k, nt, o, r, nr), *orig = call_text(ci, k, nt, o, NULL, 0);
    int pts = 0;
    for (size_t j = 1; mine && orig && j < nt; j++) {
        if (j == o || !tis(ci->text, &k[j], "(") || k[j - 1].kind != SR_T_IDENT ||
            k[j - 1].e - k[j - 1].s != k[o - 1].e - k[o - 1].s ||
            memcmp(ci->text + k[j - 1].s, ci->text + k[o - 1].s, k[o - 1].e - k[o - 1].s))
            continue;
        char *other = call_text(ci, k, nt, j, NULL, 0);
        if (other && !strcmp(other, mine))
            pts = 8;
        else if (other && !strcmp(other, orig) && pts == 0)
            pts = -2;
        free(other);
    }
    free(mine);
    free(orig);
    return pts;
}

/* mutate's description without its location (we add ours). */
static void site_what(char *out, size_t n, const mut_site *s)
{
    const char *d = s->desc ? s->desc : mut_kind_name(s->kind);
    const char *cut = strstr(d, " in ");
    const char *at = strstr(d, " at line ");
    size_t k = cut ? (size_t)(cut - d) : at ? (size_t)(at - d) : strlen(d);
    snprintf(out, n, "%.*s", (int)k, d);
}

/* ---- kinds of our own --------------------------------------------------- */

static int tok_in_def(const search_tok *k, const search_def *d)
{
    return d && k->line >= d->start && k->line <= d->end;
}

/* Flips of the same operator to the same replacement on one line, all at
 * once: a symmetric condition (a.lo < b.hi and b.lo < a.hi) is wrong on
 * both sides or on neither. */
static void gen_sym_flips(cands *C, const cand_in *ci, const mut_list *ml)
{
    for (size_t i = 0; i < ml->n; i++) {
        const mut_site *s = &ml->v[i];
        if (s->kind != MUT_FLIP_CMP || !strchr("<>", ci->text[s->start]))
            continue; /* ordering comparisons: bounds on both sides */
        rep r[8];
        size_t nr = 0;
        int first = 1;
        for (size_t j = 0; j < ml->n && nr < 8; j++) {
            const mut_site *o = &ml->v[j];
            if (o->kind != MUT_FLIP_CMP || o->line != s->line || strcmp(o->repl, s->repl) ||
                o->end - o->start != s->end - s->start ||
                memcmp(ci->text + o->start, ci->text + s->start, s->end - s->start))
                continue;
            if (j < i)
                first = 0; /* the group is made once, from its first site */
            r[nr++] = (rep){o->start, o->end, o->repl};
        }
        if (!first || nr < 2)
            continue;
        /* separate comparisons joined by && / || (not a chain 1 <= x <= n) */
        size_t ls = line_start(ci->text, r[0].s), le = line_end(ci->text, ci->len, r[0].s);
        if (!memmem(ci->text + ls, le - ls, "&&", 2) && !memmem(ci->text + ls, le - ls, "||", 2) &&
            !memmem(ci->text + ls, le - ls, " and ", 5) && !memmem(ci->text + ls, le - ls, " or ", 4))
            continue;
        for (size_t a = 1; a < nr; a++) /* sort by position */
            for (size_t b = a; b > 0 && r[b].s < r[b - 1].s; b--) {
                rep t = r[b];
                r[b] = r[b - 1];
                r[b - 1] = t;
            }
        char what[160];
        snprintf(what, sizeof what, "flip every '%.*s' on the line to '%s'", (int)(s->end - s->start),
                 ci->text + s->start, s->repl);
        add_cand(C, ci, r, nr, PRI_SYM_FLIP, what);
    }
}

/* Top-level argument ranges of the call whose '(' is token o. */
static size_t call_args(const char *t, const search_tok *k, size_t nt, size_t o, size_t *as, size_t *ae, size_t max)
{
    int depth = 0;
    size_t n = 0, st = o + 1;
    for (size_t j = o; j < nt; j++) {
        if (k[j].kind != SR_T_PUNCT)
            continue;
        char c = t[k[j].s];
        size_t w = k[j].e - k[j].s;
        if (w == 1 && (c == '(' || c == '[' || c == '{'))
            depth++;
        else if (w == 1 && (c == ')' || c == ']' || c == '}'))
            depth--;
        if ((depth == 1 && w == 1 && c == ',') || depth == 0) {
            if (j == st || n >= max)
                return 0;
            as[n] = st;
            ae[n] = j - 1;
            n++;
            st = j + 1;
            if (depth == 0)
                return n;
        }
    }
    return 0;
}

/* 1 when a and b are declared together ("int y, m, d;") or are both
 * parameters of the function: values of one kind that can trade places. */
static int same_decl(const cand_in *ci, const search_def *d, const char *a, const char *b)
{
    if (!d)
        return 0;
    const char *p = ci->text;
    for (int l = 1; l <= d->end && p; l++) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (l >= d->start && n < 400) {
            char line[400];
            memcpy(line, p, n);
            line[n] = 0;
            /* Python parameters carry no type: a shared header is a hint;
             * a C header mixes types (char *out, size_t n). */
            int hdr = l == d->start && ci->defs && strstr(ci->path, ".py");
            int decl = !hdr && line[n ? n - 1 : 0] == ';' && !strchr(line, '(') && !strchr(line, '=');
            if ((hdr || decl) && search_has_word(line, a) && search_has_word(line, b))
                return 1;
        }
        p = e ? e + 1 : NULL;
    }
    return 0;
}

/* Two neighbouring plain-name arguments of a call with three or more
 * arguments swapped (mutate swaps the arguments of two-argument calls). */
static void gen_swap_adjacent(cands *C, const cand_in *ci, const search_tok *k, size_t nt)
{
    const char *t = ci->text;
    for (size_t o = 1; o < nt; o++) {
        if (!tis(t, &k[o], "(") || k[o - 1].kind != SR_T_IDENT)
            continue;
        const search_def *d = def_at(ci, k[o].line);
        if (!d || d->level > RL_SEARCH_LEVEL_MAX || k[o].line == d->start)
            continue;
        size_t as[16], ae[16];
        size_t na = call_args(t, k, nt, o, as, ae, 16);
        if (na < 3)
            continue;
        for (size_t i = 0; i + 1 < na; i++) {
            if (as[i] != ae[i] || as[i + 1] != ae[i + 1] || k[as[i]].kind != SR_T_IDENT ||
                k[as[i + 1]].kind != SR_T_IDENT)
                continue;
            char a[SR_NAME_MAX], b[SR_NAME_MAX];
            size_t la = k[as[i]].e - k[as[i]].s, lb = k[as[i + 1]].e - k[as[i + 1]].s;
            if (la >= SR_NAME_MAX || lb >= SR_NAME_MAX || (la == lb && !memcmp(t + k[as[i]].s, t + k[as[i + 1]].s, la)))
                continue;
            memcpy(a, t + k[as[i]].s, la);
            a[la] = 0;
            memcpy(b, t + k[as[i + 1]].s, lb);
            b[lb] = 0;
            rep r[2] = {{k[as[i]].s, k[as[i]].e, b}, {k[as[i + 1]].s, k[as[i + 1]].e, a}};
            char what[200];
            snprintf(what, sizeof what, "swap the arguments %s and %s of %.*s()", a, b,
                     (int)(k[o - 1].e - k[o - 1].s), t + k[o - 1].s);
            add_cand_x(C, ci, r, 2, PRI_SWAP_ARGS - 1 + (same_decl(ci, d, a, b) ? 3 : 0),
                       call_points(ci, k, nt, o, r, 2), what);
        }
    }
}

/* A member read from the wrong variable: a->f or a.f where another
 * variable of the function is used with members too (d->year vs r.year). */
static void gen_member(cands *C, const cand_in *ci, const search_tok *k, size_t nt)
{
    const char *t = ci->text;
    for (size_t i = 0; i + 2 < nt; i++) {
        if (k[i].kind != SR_T_IDENT || !(tis(t, &k[i + 1], "->") || tis(t, &k[i + 1], ".")) ||
            k[i + 2].kind != SR_T_IDENT)
            continue;
        if (i > 0 && (tis(t, &k[i - 1], ".") || tis(t, &k[i - 1], "->")))
            continue; /* a.b.c: only the first base */
        if (i + 3 < nt && tis(t, &k[i + 3], "("))
            continue; /* a method call */
        const search_def *d = def_at(ci, k[i].line);
        if (!d || d->level > 2 || k[i].line == d->start)
            continue;
        /* Other bases in the same function, with their own operator. */
        char done[16][SR_NAME_MAX];
        int ndone = 0;
        for (size_t j = 0; j + 2 < nt && ndone < 16; j++) {
            if (!tok_in_def(&k[j], d) || k[j].line > k[i].line || k[j].kind != SR_T_IDENT || k[j + 2].kind != SR_T_IDENT ||
                !(tis(t, &k[j + 1], "->") || tis(t, &k[j + 1], ".")))
                continue;
            if (j > 0 && (tis(t, &k[j - 1], ".") || tis(t, &k[j - 1], "->")))
                continue;
            size_t bl = k[j].e - k[j].s;
            if (bl >= SR_NAME_MAX || (bl == k[i].e - k[i].s && !memcmp(t + k[j].s, t + k[i].s, bl)))
                continue;
            char base[SR_NAME_MAX];
            memcpy(base, t + k[j].s, bl);
            base[bl] = 0;
            if (isupper((unsigned char)base[0]) || !strcmp(base, "self") || (bl > 1 && search_name_ignored(base)))
                continue; /* modules and classes are not values */
            int dup = 0;
            for (int q = 0; q < ndone; q++)
                dup |= !strcmp(done[q], base);
            if (dup)
                continue;
            memcpy(done[ndone++], base, bl + 1);
            char repl[2 * SR_NAME_MAX + 4];
            snprintf(repl, sizeof repl, "%s%.*s%.*s", base, (int)(k[j + 1].e - k[j + 1].s), t + k[j + 1].s,
                     (int)(k[i + 2].e - k[i + 2].s), t + k[i + 2].s);
            rep r = {k[i].s, k[i + 2].e, repl};
            char what[300];
            snprintf(what, sizeof what, "read %s instead of %.*s", repl, (int)(k[i + 2].e - k[i].s), t + k[i].s);
            /* Members read on the same line from the other variable make
             * the line consistent (f(d->year, r.month) -> f(r.year, r.month)). */
            int with_new = 0, with_old = 0;
            for (size_t q = 0; q + 2 < nt; q++) {
                if (q == i || k[q].line != k[i].line || k[q].kind != SR_T_IDENT ||
                    !(tis(t, &k[q + 1], "->") || tis(t, &k[q + 1], ".")))
                    continue;
                if (k[q].e - k[q].s == bl && !memcmp(t + k[q].s, base, bl))
                    with_new++;
                else if (k[q].e - k[q].s == k[i].e - k[i].s && !memcmp(t + k[q].s, t + k[i].s, k[i].e - k[i].s))
                    with_old++;
            }
            add_cand_x(C, ci, &r, 1, PRI_MEMBER, with_new > with_old ? 6 : 0, what);
        }
    }
}

/* Parameters of a definition: commas at depth 1 of its header. */
static int def_arity(const cand_in *ci, const search_def *d)
{
    const char *p = ci->text;
    for (int l = 1; l < d->start && p; l++) {
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    if (!p)
        return -1;
    const char *o = strstr(p, d->name);
    if (!o)
        return -1;
    o = strchr(o, '(');
    if (!o)
        return -1;
    int depth = 0, commas = 0, any = 0;
    for (const char *q = o; *q && q - o < 2000; q++) {
        if (*q == '(')
            depth++;
        else if (*q == ')' && --depth == 0)
            return any ? commas + 1 : 0;
        else if (*q == ',' && depth == 1)
            commas++;
        else if (depth == 1 && !isspace((unsigned char)*q))
            any = 1;
    }
    return -1;
}

/* A sibling called instead of the right function: a call of a function of
 * this file replaced by another of the same file (same class) and arity. */
static void gen_sibling(cands *C, const cand_in *ci, const search_tok *k, size_t nt)
{
    const char *t = ci->text;
    for (size_t i = 0; i + 1 < nt; i++) {
        if (k[i].kind != SR_T_IDENT || !tis(t, &k[i + 1], "("))
            continue;
        const search_def *d = def_at(ci, k[i].line);
        if (!d || d->level > 2 || k[i].line == d->start)
            continue;
        const search_def *callee = NULL;
        for (size_t j = 0; j < ci->ndefs && !callee; j++)
            if (!ci->defs[j].is_class && tis(t, &k[i], ci->defs[j].name))
                callee = &ci->defs[j];
        if (!callee || callee->name[0] == '_')
            continue;
        int ar = def_arity(ci, callee);
        for (size_t j = 0; j < ci->ndefs; j++) {
            const search_def *o = &ci->defs[j];
            if (o == callee || o->is_class || strcmp(o->cls, callee->cls) || o->name[0] == '_' ||
                def_arity(ci, o) != ar)
                continue;
            rep r = {k[i].s, k[i].e, o->name};
            char what[200];
            snprintf(what, sizeof what, "call %s() instead of %s()", o->name, callee->name);
            add_cand(C, ci, &r, 1, PRI_SIBLING, what);
        }
    }
}

/* A chain "c == ' ' || c == '\t'" missing a character that the failure or
 * the problem statement shows as an escape (\r, \t, \n, \0, \f, \v). */
static void gen_disjunct(cands *C, const cand_in *ci, const search_tok *k, size_t nt)
{
    const char *t = ci->text, *h = ci->rk->hint_text;
    if (!h)
        return;
    static const char ESC[] = "rtn0fv";
    for (size_t i = 0; i + 2 < nt; i++) {
        /* start of a chain: X == LIT not preceded by || X == LIT */
        if (k[i].kind != SR_T_IDENT || !tis(t, &k[i + 1], "==") ||
            (k[i + 2].kind != SR_T_CHAR && k[i + 2].kind != SR_T_STR))
            continue;
        if (i >= 2 && (tis(t, &k[i - 1], "||") || tis(t, &k[i - 1], "or")))
            continue;
        /* a plain variable: not *p, a.b or a[i] (the chain repeats it
         * by name) */
        if (i >= 1 && (tis(t, &k[i - 1], "*") || tis(t, &k[i - 1], ".") || tis(t, &k[i - 1], "->")))
            continue;
        const search_def *d = def_at(ci, k[i].line);
        if (!d || d->level > RL_SEARCH_LEVEL_MAX)
            continue;
        size_t j = i, last = i + 2;
        char have[64] = "";
        const char *orop = NULL;
        while (j + 2 < nt) {
            if (!(k[j].e - k[j].s == k[i].e - k[i].s && !memcmp(t + k[j].s, t + k[i].s, k[i].e - k[i].s)) ||
                !tis(t, &k[j + 1], "==") || (k[j + 2].kind != SR_T_CHAR && k[j + 2].kind != SR_T_STR))
                break;
            size_t ll = k[j + 2].e - k[j + 2].s;
            if (ll < 24 && strlen(have) + ll + 1 < sizeof have) {
                strncat(have, t + k[j + 2].s, ll);
                strcat(have, " ");
            }
            last = j + 2;
            if (j + 3 < nt && (tis(t, &k[j + 3], "||") || tis(t, &k[j + 3], "or"))) {
                orop = tis(t, &k[j + 3], "||") ? "||" : "or";
                j += 4;
            } else {
                break;
            }
        }
        if (!orop)
            continue; /* one comparison is not a chain */
        char q = t[k[i + 2].s];
        for (const char *e = ESC; *e; e++) {
            char esc[3] = {'\\', *e, 0};
            char lit[8];
            snprintf(lit, sizeof lit, "%c\\%c%c", q, *e, q);
            if (!strstr(h, esc) || strstr(have, lit))
                continue;
            char repl[160];
            snprintf(repl, sizeof repl, "%.*s %s %.*s == %s", (int)(k[last].e - k[last].s), t + k[last].s, orop,
                     (int)(k[i].e - k[i].s), t + k[i].s, lit);
            rep r = {k[last].s, k[last].e, repl};
            char what[200];
            snprintf(what, sizeof what, "also accept %s", lit);
            add_cand(C, ci, &r, 1, PRI_DISJUNCT, what);
        }
    }
}

/* "x + 1" where the function holds lengths (n = strlen(..), n = len(..)):
 * a step that should be a length. */
static void gen_len_step(cands *C, const cand_in *ci, const search_tok *k, size_t nt)
{
    const char *t = ci->text;
    for (size_t i = 2; i < nt; i++) {
        if (k[i].kind != SR_T_NUM || !tis(t, &k[i], "1") ||
            !(tis(t, &k[i - 1], "+") || tis(t, &k[i - 1], "-")) ||
            !(k[i - 2].kind == SR_T_IDENT || tis(t, &k[i - 2], ")")))
            continue;
        const search_def *d = def_at(ci, k[i].line);
        if (!d || d->level > 2)
            continue;
        for (size_t j = 0; j + 3 < nt; j++) {
            if (!tok_in_def(&k[j], d) || k[j].kind != SR_T_IDENT || !tis(t, &k[j + 1], "=") ||
                !(tis(t, &k[j + 2], "strlen") || tis(t, &k[j + 2], "len")) || !tis(t, &k[j + 3], "("))
                continue;
            char name[SR_NAME_MAX];
            size_t nl = k[j].e - k[j].s;
            if (nl >= SR_NAME_MAX)
                continue;
            memcpy(name, t + k[j].s, nl);
            name[nl] = 0;
            rep r = {k[i].s, k[i].e, name};
            char what[200];
            snprintf(what, sizeof what, "step by %s instead of 1", name);
            add_cand(C, ci, &r, 1, PRI_LEN_STEP, what);
        }
    }
}

/* ---- entry ---------------------------------------------------------------- */

size_t search_cands_for_file(search_cand **v, size_t n, size_t *cap, size_t max, int file_index,
                         const search_file *f, const search_def *defs, size_t ndefs, const search_rank_in *in)
{
    size_t len;
    char *text = search_file_text(f, &len);
    if (!text || f->is_test || f->lang == MUT_LANG_NONE)
        return free(text), n;
    cands C = {v, n, cap, max < RL_SEARCH_CANDS_MAX ? max : RL_SEARCH_CANDS_MAX};
    cand_in ci = {f->path, text, len, defs, ndefs, in, file_index};
    mut_list ml = {0};
    char err[RL_ERR_MAX];
    search_tok *k;
    size_t nt = search_tokenize(&k, text, len, f->lang, RL_SEARCH_TOKENS_MAX);
    if (mut_enumerate(&ml, text, len, f->lang, in->seed, err) == 0) {
        for (size_t i = 0; i < ml.n; i++) {
            const mut_site *s = &ml.v[i];
            if (s->end < s->start || s->end > len)
                continue;
            char what[200];
            site_what(what, sizeof what, s);
            rep r = {s->start, s->end, s->repl};
            int prior = site_prior(s, text), extra = 0;
            if (prior == PRI_FLIP_BOUNDARY)
                for (size_t j = 0; j < nt; j++)
                    if (k[j].s == s->start) {
                        extra = consistency_points(&ci, k[j].s, strlen(s->repl) == 1);
                        break;
                    }
            /* Results one off: a constant added (or subtracted) that
             * moves them the right way is the likely fix. */
            if (s->kind == MUT_CONST && in->off_by)
                for (size_t j = 1; j < nt; j++)
                    if (k[j].s == s->start) {
                        long ov = strtol(text + s->start, NULL, 0), nv = strtol(s->repl, NULL, 0);
                        int sign = tis(text, &k[j - 1], "+") ? 1 : tis(text, &k[j - 1], "-") ? -1 : 0;
                        /* binary + and - only: "return -1" is a code */
                        if (j < 2 || !(k[j - 2].kind == SR_T_IDENT || k[j - 2].kind == SR_T_NUM ||
                                       tis(text, &k[j - 2], ")") || tis(text, &k[j - 2], "]")) ||
                            tis(text, &k[j - 2], "return"))
                            sign = 0;
                        if (sign && (nv - ov) * sign == in->off_by)
                            extra += 5;
                        break;
                    }
            /* A returned constant that is the value a test got, changed
             * into the value it expected ("return 62" when a test got 62
             * and expected 63). */
            int returned = 0;
            for (size_t j = 1; s->kind == MUT_CONST && j < nt; j++)
                if (k[j].s == s->start) {
                    returned = tis(text, &k[j - 1], "return");
                    break;
                }
            if (s->kind == MUT_CONST && in->npairs && returned) {
                long ov = strtol(text + s->start, NULL, 0), nv = strtol(s->repl, NULL, 0);
                for (size_t q = 0; q < in->npairs; q++) {
                    if (ov == in->got[q] && nv == in->want[q] && ov != nv) {
                        extra += 6;
                        break;
                    }
                    if (ov == in->want[q] && nv == in->got[q] && ov != nv) {
                        extra -= 4;
                        break;
                    }
                }
            }
            if (s->kind == MUT_SWAP_ARGS)
                for (size_t j = 1; j < nt; j++)
                    if (k[j].s == s->start && tis(text, &k[j - 1], "(")) {
                        extra = call_points(&ci, k, nt, j - 1, &r, 1);
                        break;
                    }
            add_cand_x(&C, &ci, &r, 1, prior, extra, what);
        }
        gen_sym_flips(&C, &ci, &ml);
    }
    gen_swap_adjacent(&C, &ci, k, nt);
    gen_member(&C, &ci, k, nt);
    gen_sibling(&C, &ci, k, nt);
    gen_disjunct(&C, &ci, k, nt);
    gen_len_step(&C, &ci, k, nt);
    free(k);
    mut_list_dispose(&ml);
    free(text);
    return C.n;
}

static int cand_cmp(const void *a, const void *b)
{
    const search_cand *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    if (x->jitter != y->jitter)
        return x->jitter < y->jitter ? -1 : 1;
    return x->key < y->key ? -1 : x->key > y->key;
}

void search_cands_sort(search_cand *v, size_t n)
{
    if (n < 2)
        return;
    qsort(v, n, sizeof *v, cand_cmp);
    /* The k-th candidate of a function loses k points (capped), then the
     * order is made again: big functions share the budget. */
    uint64_t *fn = malloc(n * sizeof *fn);
    int *cnt = malloc(n * sizeof *cnt);
    size_t nf = 0;
    if (fn && cnt) {
        for (size_t i = 0; i < n; i++) {
            size_t j = 0;
            while (j < nf && fn[j] != v[i].fn)
                j++;
            if (j == nf) {
                fn[nf] = v[i].fn;
                cnt[nf++] = 0;
            }
            v[i].score -= cnt[j] < 12 ? cnt[j] : 12;
            cnt[j]++;
        }
        qsort(v, n, sizeof *v, cand_cmp);
    }
    free(fn);
    free(cnt);
}
