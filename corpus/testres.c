/* testres.c - parsers of test-runner output: TAP, JUnit XML (pytest
 * --junitxml), Check's XML log and Check's CK_VERBOSE / CK_NORMAL lines.
 *
 * Besides per-test results each parser records (tr_report.integrity) where
 * the output contradicts itself: a stated total (JUnit testsuite counts, a
 * TAP plan, Check's stdout summary against its XML log) that disagrees
 * with the per-test results, or a log cut short.
 *
 * The output comes from a process that runs agent-written code, so it is
 * untrusted: names and messages are capped (common/limits.h), the number of
 * cases is capped, and a test reported twice keeps its worst status (a
 * failing test cannot be turned into a pass by printing a second "ok").
 * Line formats tolerate noise around them (build output, prints from the
 * code under test). The JUnit reader is a small XML tokenizer of our own:
 * elements, attributes in either quote, the five named entities and
 * numeric references, CDATA, comments, <? ?> and <! > declarations.
 *
 * Every parser leaves `out` valid (possibly partial) even on error, so a
 * caller may score what was reported and count the rest as missing.
 */
#include "corpus/testres.h"

#include "common/buf.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/vec.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- report building ---------------------------------------------------- */

/* Worse statuses win when a name is reported twice. */
static int status_rank(tr_status s)
{
    switch (s) {
    case TR_PASS: return 0;
    case TR_SKIP: return 1;
    case TR_FAIL: return 2;
    case TR_ERROR: return 3;
    default: return 4;
    }
}

typedef struct builder {
    tr_report *r;
    size_t cap;
    size_t *slot;   /* open-addressing index: case index + 1, 0 = empty */
    size_t nslot;   /* power of two */
    int oom;
} builder;

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int builder_init(builder *b, tr_report *out)
{
    memset(b, 0, sizeof *b);
    memset(out, 0, sizeof *out);
    b->r = out;
    b->nslot = 64;
    b->slot = calloc(b->nslot, sizeof *b->slot);
    return b->slot ? 0 : RL_ENOMEM;
}

static void builder_done(builder *b)
{
    free(b->slot);
    b->slot = NULL;
}

static size_t *builder_lookup(builder *b, const char *name)
{
    size_t mask = b->nslot - 1, i = (size_t)hash_str(name) & mask;
    while (b->slot[i] && strcmp(b->r->cases[b->slot[i] - 1].name, name))
        i = (i + 1) & mask;
    return &b->slot[i];
}

static int builder_grow_index(builder *b)
{
    size_t n = b->nslot * 2;
    size_t *old = b->slot, oldn = b->nslot;
    b->slot = calloc(n, sizeof *b->slot);
    if (!b->slot) {
        b->slot = old;
        return RL_ENOMEM;
    }
    b->nslot = n;
    for (size_t i = 0; i < oldn; i++)
        if (old[i])
            *builder_lookup(b, b->r->cases[old[i] - 1].name) = old[i];
    free(old);
    return 0;
}

/* A copy of s[0..n) with a cap: long messages keep their head and tail
 * (an assertion's start and a traceback's end are both informative). */
static char *capped_copy(const char *s, size_t n, size_t max)
{
    if (n > max)
        return str_cut_middle(s, n, max, NULL);
    char *p = malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

/* Adds or merges one result. name and msg need not be NUL-terminated. */
static void builder_add(builder *b, const char *name, size_t nlen, tr_status st, const char *msg,
                        size_t mlen)
{
    if (b->oom || nlen == 0)
        return;
    b->r->reported[st]++;
    char key[RL_TR_NAME_MAX + 1];
    if (nlen > RL_TR_NAME_MAX)
        nlen = RL_TR_NAME_MAX; /* too long to match any task's test id anyway */
    memcpy(key, name, nlen);
    key[nlen] = '\0';
    if (!key[0])
        return;
    size_t *slot = builder_lookup(b, key);
    if (*slot) {
        tr_case *c = &b->r->cases[*slot - 1];
        c->count++;
        int worse = status_rank(st) > status_rank(c->status);
        if (worse || (status_rank(st) == status_rank(c->status) && !c->message && msg && st != TR_PASS)) {
            char *m = st != TR_PASS && msg ? capped_copy(msg, mlen, RL_TR_MSG_MAX) : NULL;
            free(c->message);
            c->message = m;
            c->status = st;
        }
        return;
    }
    int rc = VEC_GROW(b->r->cases, b->cap, b->r->n + 1, RL_TR_CASES_MAX);
    if (rc == RL_ELIMIT)
        return; /* dropped: reads as TR_MISSING, i.e. a failure */
    if (rc < 0) {
        b->oom = 1;
        return;
    }
    tr_case *c = &b->r->cases[b->r->n];
    c->name = strdup(key);
    c->status = st;
    c->count = 1;
    c->message = st != TR_PASS && msg ? capped_copy(msg, mlen, RL_TR_MSG_MAX) : NULL;
    if (!c->name) {
        free(c->message);
        b->oom = 1;
        return;
    }
    b->r->n++;
    *slot = b->r->n;
    if (b->r->n * 2 > b->nslot && builder_grow_index(b))
        b->oom = 1;
}

void tr_report_dispose(tr_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        free(r->cases[i].name);
        free(r->cases[i].message);
    }
    free(r->cases);
    r->cases = NULL;
    r->n = 0;
}

void tr_report_set_integrity(tr_report *r, const char *fmt, ...)
{
    if (r->integrity[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->integrity, sizeof r->integrity, fmt, ap);
    va_end(ap);
    for (char *p = r->integrity; *p; p++) /* one line, whatever the names held */
        if ((unsigned char)*p < 0x20)
            *p = ' ';
}

void tr_report_fail_all(tr_report *r)
{
    const char *why = r->integrity[0] ? r->integrity : "results not trusted";
    for (size_t i = 0; i < r->n; i++) {
        tr_case *c = &r->cases[i];
        char *m = strdup(why);
        if (m) {
            free(c->message);
            c->message = m;
        }
        c->status = TR_ERROR;
    }
}

const tr_case *tr_find(const tr_report *r, const char *name)
{
    for (size_t i = 0; r && name && i < r->n; i++)
        if (!strcmp(r->cases[i].name, name))
            return &r->cases[i];
    return NULL;
}

tr_status tr_status_of(const tr_report *r, const char *name)
{
    const tr_case *c = tr_find(r, name);
    return c ? c->status : TR_MISSING;
}

const char *tr_status_name(tr_status s)
{
    switch (s) {
    case TR_PASS: return "pass";
    case TR_FAIL: return "fail";
    case TR_ERROR: return "error";
    case TR_SKIP: return "skip";
    case TR_MISSING: return "missing";
    }
    return "?";
}

/* ---- lines ------------------------------------------------------------------ */

typedef struct line_iter {
    const char *s;
    size_t len, pos;
} line_iter;

/* Next line without its "\n" or "\r\n"; 0 at the end. */
static int next_line(line_iter *it, const char **l, size_t *n)
{
    if (it->pos >= it->len)
        return 0;
    const char *p = it->s + it->pos;
    const char *e = memchr(p, '\n', it->len - it->pos);
    size_t k = e ? (size_t)(e - p) : it->len - it->pos;
    it->pos += k + (e ? 1 : 0);
    if (k && p[k - 1] == '\r')
        k--;
    *l = p;
    *n = k;
    return 1;
}

static int starts(const char *l, size_t n, const char *pre)
{
    size_t k = strlen(pre);
    return n >= k && !memcmp(l, pre, k);
}

static int starts_ci(const char *l, size_t n, const char *pre)
{
    size_t k = strlen(pre);
    if (n < k)
        return 0;
    for (size_t i = 0; i < k; i++) {
        char a = l[i] >= 'A' && l[i] <= 'Z' ? (char)(l[i] + 32) : l[i];
        if (a != pre[i])
            return 0;
    }
    return 1;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int is_ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_';
}

static void trim(const char **s, size_t *n)
{
    while (*n && (**s == ' ' || **s == '\t')) {
        (*s)++;
        (*n)--;
    }
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

static int not_this_format(char *err, int code, const char *what, size_t len)
{
    return rl_err(err, code, "%s: no recognizable line in %zu bytes of output", what, len);
}

/* ---- TAP ------------------------------------------------------------------------ */

/* The test whose diagnostics are being collected. */
typedef struct tap_pending {
    int active;
    char name[RL_TR_NAME_MAX + 1];
    size_t nlen;
    tr_status status;
    buf_ht_t msg;
} tap_pending;

static void tap_flush(builder *b, tap_pending *p)
{
    if (!p->active)
        return;
    size_t mlen = 0;
    char *m = p->msg.total ? buf_ht_render(&p->msg, &mlen) : NULL;
    while (m && mlen && m[mlen - 1] == '\n')
        mlen--;
    builder_add(b, p->name, p->nlen, p->status, m, mlen);
    free(m);
    p->active = 0;
    buf_ht_dispose(&p->msg);
}

static void tap_note(tap_pending *p, const char *s, size_t n)
{
    if (!p->active || p->status == TR_PASS)
        return;
    buf_ht_append(&p->msg, s, n);
    buf_ht_append(&p->msg, "\n", 1);
}

/* "ok 3 - name # SKIP why" / "not ok name # TODO later" */
static void tap_test_line(builder *b, tap_pending *p, const char *l, size_t n, int ok, long *count)
{
    size_t i = ok ? 2 : 6;
    (*count)++;
    while (i < n && (l[i] == ' ' || l[i] == '\t'))
        i++;
    size_t ns = i;
    while (i < n && is_digit(l[i]))
        i++;
    char num[32];
    if (i > ns && i - ns < sizeof num) {
        memcpy(num, l + ns, i - ns);
        num[i - ns] = '\0';
    } else {
        i = ns;
        snprintf(num, sizeof num, "%ld", *count);
    }
    while (i < n && (l[i] == ' ' || l[i] == '\t'))
        i++;
    if (i < n && l[i] == '-')
        i++;
    while (i < n && (l[i] == ' ' || l[i] == '\t'))
        i++;
    /* Description up to an unescaped '#', unescaping "\#" and "\\". */
    char name[RL_TR_NAME_MAX + 1];
    size_t k = 0;
    for (; i < n && l[i] != '#'; i++) {
        if (l[i] == '\\' && i + 1 < n && (l[i + 1] == '#' || l[i + 1] == '\\'))
            i++;
        if (k < RL_TR_NAME_MAX)
            name[k++] = l[i];
    }
    const char *nm = name;
    trim(&nm, &k);
    tr_status st = ok ? TR_PASS : TR_FAIL;
    const char *why = NULL;
    size_t wn = 0;
    if (i < n) { /* directive */
        const char *d = l + i + 1;
        size_t dn = n - i - 1;
        trim(&d, &dn);
        if (starts_ci(d, dn, "skip")) {
            st = TR_SKIP;
            why = d;
            wn = dn;
        } else if (starts_ci(d, dn, "todo")) {
            /* TAP: a TODO test's failure is expected and not counted. */
            st = ok ? TR_PASS : TR_SKIP;
            why = d;
            wn = dn;
        }
    }
    tap_flush(b, p);
    p->active = 1;
    if (k == 0) {
        nm = num;
        k = strlen(num);
    }
    memcpy(p->name, nm, k);
    p->nlen = k;
    p->status = st;
    buf_ht_init(&p->msg, RL_TR_MSG_MAX / 2, RL_TR_MSG_MAX / 2);
    if (why)
        tap_note(p, why, wn);
}

int tr_parse_tap(tr_report *out, const char *text, size_t len, char *err)
{
    builder b;
    if (builder_init(&b, out))
        return rl_err(err, RL_ENOMEM, "TAP: out of memory");
    tap_pending p = {0};
    line_iter it = {text, text ? len : 0, 0};
    const char *l;
    size_t n;
    long count = 0, seen = 0, plan = -1;
    int in_yaml = 0, plans = 0, bailed = 0;
    while (next_line(&it, &l, &n)) {
        size_t ind = 0;
        while (ind < n && (l[ind] == ' ' || l[ind] == '\t'))
            ind++;
        const char *t = l + ind;
        size_t tn = n - ind;
        if (in_yaml) { /* YAML diagnostics block: "  ---" ... "  ..." */
            if (tn == 3 && !memcmp(t, "...", 3))
                in_yaml = 0;
            else
                tap_note(&p, t, tn);
            continue;
        }
        if (ind > 0) { /* indented: YAML start, or a subtest's own lines */
            if (tn == 3 && !memcmp(t, "---", 3) && p.active)
                in_yaml = 1;
            continue;
        }
        if (starts(l, n, "ok") && (n == 2 || l[2] == ' ' || l[2] == '\t')) {
            tap_test_line(&b, &p, l, n, 1, &count);
            seen++;
        } else if (starts(l, n, "not ok") && (n == 6 || l[6] == ' ' || l[6] == '\t')) {
            tap_test_line(&b, &p, l, n, 0, &count);
            seen++;
        } else if (starts(l, n, "# Subtest:")) {
            tap_flush(&b, &p); /* the subtest's own lines follow, indented */
            seen++;
        } else if (l[0] == '#') {
            /* Keep the alignment of diagnostics ("#     expected: '2'"); drop
             * Test::More's closing summary, which belongs to no test. */
            const char *d = l + 1;
            size_t dn = n - 1;
            if (dn && *d == ' ') {
                d++;
                dn--;
            }
            while (dn && (d[dn - 1] == ' ' || d[dn - 1] == '\t'))
                dn--;
            if (!starts(d, dn, "Looks like you"))
                tap_note(&p, d, dn);
        } else if (starts(l, n, "1..") && n > 3 && is_digit(l[3])) {
            tap_flush(&b, &p);
            seen++;
            plans++;
            long v = 0;
            for (size_t i = 3; i < n && is_digit(l[i]) && v < 1000000000L; i++)
                v = v * 10 + (l[i] - '0');
            plan = v;
        } else if (starts(l, n, "TAP version")) {
            seen++;
        } else if (starts(l, n, "Bail out!")) {
            /* Everything not yet reported stays missing (a failure). */
            tap_flush(&b, &p);
            seen++;
            bailed = 1;
            break;
        }
    }
    tap_flush(&b, &p);
    builder_done(&b);
    if (b.oom)
        return rl_err(err, RL_ENOMEM, "TAP: out of memory");
    if (!seen && len)
        return not_this_format(err, RL_EPARSE, "TAP", len);
    /* The plan is TAP's summary: the run must state it once and meet it. */
    if (bailed)
        tr_report_set_integrity(out, "TAP: the run bailed out after %ld test lines", count);
    else if (plans == 0)
        tr_report_set_integrity(out, "TAP: no plan line (1..N) for %ld test lines", count);
    else if (plans > 1)
        tr_report_set_integrity(out, "TAP: %d plan lines (expected one)", plans);
    else if (plan != count)
        tr_report_set_integrity(out, "TAP: plan 1..%ld but %ld test lines", plan, count);
    return 0;
}

/* ---- Unity ---------------------------------------------------------------------- */

/* Reads an unsigned decimal at l[*i], advancing *i; -1 when there is none. */
static long read_num(const char *l, size_t n, size_t *i)
{
    long v = 0;
    size_t s = *i;
    for (; *i < n && is_digit(l[*i]); (*i)++)
        if (v < 1000000000L)
            v = v * 10 + (l[*i] - '0');
    return *i > s ? v : -1;
}

/* 1 when l[*i..] starts with word (then skips it). */
static int eat(const char *l, size_t n, size_t *i, const char *word)
{
    size_t k = strlen(word);
    if (n - *i < k || memcmp(l + *i, word, k))
        return 0;
    *i += k;
    return 1;
}

/* One result line "path:line:name:PASS|FAIL|IGNORE[: message]". The path
 * may hold ':' (or text the test printed without a newline), so every
 * ":digits:" is tried as the anchor. Fills *st; 1 when added. */
static int unity_line(builder *b, const char *l, size_t n, tr_status *st)
{
    for (size_t a = 1; a < n; a++) {
        if (l[a] != ':' || a + 1 >= n || !is_digit(l[a + 1]))
            continue;
        size_t i = a + 1;
        read_num(l, n, &i);
        if (i >= n || l[i] != ':')
            continue;
        size_t ns = ++i;
        while (i < n && is_ident_char(l[i]))
            i++;
        size_t ne = i;
        if (ne == ns || i >= n || l[i] != ':')
            continue;
        i++;
        if (eat(l, n, &i, "PASS"))
            *st = TR_PASS;
        else if (eat(l, n, &i, "FAIL"))
            *st = TR_FAIL;
        else if (eat(l, n, &i, "IGNORE"))
            *st = TR_SKIP;
        else
            continue;
        if (i < n && l[i] != ':')
            continue;
        if (i < n)
            i++;
        if (i < n && l[i] == ' ')
            i++;
        builder_add(b, l + ns, ne - ns, *st, l + i, n - i);
        return 1;
    }
    return 0;
}

/* "N Tests M Failures K Ignored": 1 with the three numbers. */
static int unity_summary(const char *l, size_t n, long v[3])
{
    static const char *const words[3] = {" Tests ", " Failures ", " Ignored"};
    size_t i = 0;
    for (int k = 0; k < 3; k++)
        if ((v[k] = read_num(l, n, &i)) < 0 || !eat(l, n, &i, words[k]))
            return 0;
    while (i < n && l[i] == ' ')
        i++;
    return i == n;
}

/* Every case added since case index `from` becomes an error: its test
 * program ended without the summary that closes its results. */
static void fail_since(tr_report *r, size_t from, const char *why)
{
    for (size_t i = from; i < r->n; i++) {
        if (r->cases[i].status == TR_ERROR)
            continue;
        free(r->cases[i].message);
        r->cases[i].message = strdup(why);
        r->cases[i].status = TR_ERROR;
    }
}

int tr_parse_unity(tr_report *out, const char *text, size_t len, char *err)
{
    builder b;
    if (builder_init(&b, out))
        return rl_err(err, RL_ENOMEM, "Unity: out of memory");
    line_iter it = {text, text ? len : 0, 0};
    const char *l;
    size_t n;
    long seen = 0, got[TR_MISSING + 1] = {0}, block = 0;
    size_t block_from = 0; /* first case of the running program's block */
    while (next_line(&it, &l, &n)) {
        tr_status st;
        long v[3];
        if (unity_line(&b, l, n, &st)) {
            seen++;
            got[st]++;
            block++;
        } else if (unity_summary(l, n, v)) {
            seen++;
            out->summary_lines++;
            out->summary_checks += v[0];
            out->summary_failures += v[1];
            if (v[0] != block || v[1] != got[TR_FAIL] || v[2] != got[TR_SKIP])
                tr_report_set_integrity(out,
                                        "Unity: a summary says %ld tests, %ld failures, %ld ignored; its "
                                        "program printed %ld results, %ld failed, %ld ignored",
                                        v[0], v[1], v[2], block, got[TR_FAIL], got[TR_SKIP]);
            memset(got, 0, sizeof got);
            block = 0;
            block_from = out->n;
        }
    }
    builder_done(&b);
    if (b.oom)
        return rl_err(err, RL_ENOMEM, "Unity: out of memory");
    if (!seen && len)
        return not_this_format(err, RL_EPARSE, "Unity", len);
    if (block)
        fail_since(out, block_from, "Unity: the test program ended before its summary line (crashed or exited)");
    return 0;
}

/* ---- testhelp ------------------------------------------------------------------- */

/* "N - description: PASSED|FAILED" (antirez's testhelp.h, the sds and Redis
 * unit tests): 1 when added, with N in *num. */
static int testhelp_line(builder *b, const char *l, size_t n, long *num, tr_status *st)
{
    size_t i = 0;
    if ((*num = read_num(l, n, &i)) < 0 || !eat(l, n, &i, " - "))
        return 0;
    size_t ds = i, de;
    if (n >= ds + 8 && !memcmp(l + n - 8, ": PASSED", 8)) {
        *st = TR_PASS;
        de = n - 8;
    } else if (n >= ds + 8 && !memcmp(l + n - 8, ": FAILED", 8)) {
        *st = TR_FAIL;
        de = n - 8;
    } else {
        return 0;
    }
    builder_add(b, l + ds, de - ds, *st, "testhelp: the condition was false", 33);
    return 1;
}

int tr_parse_testhelp(tr_report *out, const char *text, size_t len, char *err)
{
    builder b;
    if (builder_init(&b, out))
        return rl_err(err, RL_ENOMEM, "testhelp: out of memory");
    line_iter it = {text, text ? len : 0, 0};
    const char *l;
    size_t n;
    long seen = 0, lines = 0, got[TR_MISSING + 1] = {0}, num;
    long sum[3] = {-1, -1, -1};
    while (next_line(&it, &l, &n)) {
        tr_status st;
        size_t i = 0;
        if (testhelp_line(&b, l, n, &num, &st)) {
            seen++;
            got[st]++;
            if (num != ++lines)
                tr_report_set_integrity(out, "testhelp: result line %ld is numbered %ld", lines, num);
            if (out->summary_lines)
                tr_report_set_integrity(out, "testhelp: a result line after the summary");
        } else if ((sum[0] = read_num(l, n, &i)) >= 0 && eat(l, n, &i, " tests, ") &&
                   (sum[1] = read_num(l, n, &i)) >= 0 && eat(l, n, &i, " passed, ") &&
                   (sum[2] = read_num(l, n, &i)) >= 0 && eat(l, n, &i, " failed") && i == n) {
            seen++;
            if (++out->summary_lines > 1)
                tr_report_set_integrity(out, "testhelp: %d summary lines (expected one)", out->summary_lines);
            out->summary_checks = sum[0];
            out->summary_failures = sum[2];
            if (sum[0] != lines || sum[1] != got[TR_PASS] || sum[2] != got[TR_FAIL])
                tr_report_set_integrity(out,
                                        "testhelp: the summary says %ld tests, %ld passed, %ld failed; the "
                                        "run printed %ld, %ld passed, %ld failed",
                                        sum[0], sum[1], sum[2], lines, got[TR_PASS], got[TR_FAIL]);
        } else if ((n == 6 && (!memcmp(l, "PASSED", 6) || !memcmp(l, "FAILED", 6))) ||
                   (n > 8 && (!memcmp(l + n - 8, ": PASSED", 8) || !memcmp(l + n - 8, ": FAILED", 8)))) {
            /* A verdict on a line of its own, or after something other
             * than "N - ": printed output cut a result line in two. */
            seen++;
            tr_report_set_integrity(out, "testhelp: a verdict outside a result line: %.80s", l);
        }
    }
    builder_done(&b);
    if (b.oom)
        return rl_err(err, RL_ENOMEM, "testhelp: out of memory");
    if (!seen && len)
        return not_this_format(err, RL_EPARSE, "testhelp", len);
    if (lines && !out->summary_lines)
        fail_since(out, 0, "testhelp: the program ended before its summary line (crashed or exited)");
    return 0;
}

/* ---- Check --------------------------------------------------------------------- */

/* One result line "path:line:R:tcase:name:iter: message". The path may hold
 * ':' in theory, so every ":digits:R:" is tried as the anchor; the message
 * (everything after "iter: ") may hold ':' freely. */
static int check_line(builder *b, const char *l, size_t n)
{
    for (size_t a = 1; a < n; a++) {
        if (l[a] != ':' || a + 1 >= n || !is_digit(l[a + 1]))
            continue;
        size_t i = a + 1;
        while (i < n && is_digit(l[i]))
            i++;
        if (i + 2 >= n || l[i] != ':' || l[i + 2] != ':' ||
            (l[i + 1] != 'P' && l[i + 1] != 'F' && l[i + 1] != 'E'))
            continue;
        char r = l[i + 1];
        size_t tc = i + 3, te = tc;
        while (te < n && l[te] != ':')
            te++;
        size_t ns = te + 1, ne = ns;
        while (ne < n && is_ident_char(l[ne]))
            ne++;
        if (te >= n || ne == ns || ne >= n || l[ne] != ':')
            continue;
        size_t j = ne + 1, js = j;
        while (j < n && (is_digit(l[j]) || (j == js && l[j] == '-')))
            j++;
        if (j == js || j >= n || l[j] != ':')
            continue;
        j++;
        if (j < n && l[j] == ' ')
            j++;
        tr_status st = r == 'P' ? TR_PASS : r == 'F' ? TR_FAIL : TR_ERROR;
        builder_add(b, l + ns, ne - ns, st, l + j, n - j);
        return 1;
    }
    return 0;
}

/* Reads the number after `key` in l[0..n); -1 when absent. */
static long number_after(const char *l, size_t n, const char *key)
{
    const char *k = memmem(l, n, key, strlen(key));
    if (!k)
        return -1;
    size_t i = (size_t)(k - l) + strlen(key);
    long v = 0;
    int digits = 0;
    for (; i < n && is_digit(l[i]) && v < 1000000000L; i++, digits++)
        v = v * 10 + (l[i] - '0');
    return digits ? v : -1;
}

/* "100%: Checks: 11, Failures: 0, Errors: 0": totals summed over lines. */
static void check_summary(tr_report *out, const char *l, size_t n)
{
    long c = number_after(l, n, "Checks: "), f = number_after(l, n, "Failures: "),
         e = number_after(l, n, "Errors: ");
    if (c < 0 || f < 0 || e < 0)
        return;
    out->summary_lines++;
    out->summary_checks += c;
    out->summary_failures += f;
    out->summary_errors += e;
}

int tr_parse_check(tr_report *out, const char *text, size_t len, char *err)
{
    builder b;
    if (builder_init(&b, out))
        return rl_err(err, RL_ENOMEM, "Check: out of memory");
    line_iter it = {text, text ? len : 0, 0};
    const char *l;
    size_t n;
    long seen = 0;
    while (next_line(&it, &l, &n)) {
        if (check_line(&b, l, n))
            seen++;
        else if (starts(l, n, "Running suite(s):"))
            seen++;
        else if (n > 2 && is_digit(l[0]) && memmem(l, n, "%: Checks: ", 11)) {
            seen++;
            check_summary(out, l, n);
        }
    }
    builder_done(&b);
    if (b.oom)
        return rl_err(err, RL_ENOMEM, "Check: out of memory");
    if (!seen && len)
        return not_this_format(err, RL_EPARSE, "Check", len);
    return 0;
}

/* ---- a small XML reader ------------------------------------------------------ */

typedef struct xattr {
    char name[RL_TR_XML_NAME_MAX + 1];
    buf_t value; /* decoded, capped */
} xattr;

typedef struct xml {
    const char *s;
    size_t len, pos;
    int line;
    char *err;
    const char *what;                /* "JUnit XML" or "Check XML" */
    int depth;
    char stack[RL_TR_XML_DEPTH][RL_TR_XML_NAME_MAX + 1];
    xattr attrs[RL_TR_XML_ATTRS_MAX];
    int nattrs;
} xml;

/* What a <testsuite> (or <testsuites>) element states about its test
 * cases, and what it holds: tests, failures, errors, skipped. */
enum { SUITE_TESTS, SUITE_FAILURES, SUITE_ERRORS, SUITE_SKIPPED, SUITE_N };
static const char *const SUITE_ATTRS[SUITE_N] = {"tests", "failures", "errors", "skipped"};

typedef struct suite_frame {
    int depth;
    int line;
    long want[SUITE_N];              /* -1: attribute absent */
    long got[SUITE_N];
} suite_frame;

/* Parsing state of the JUnit reader proper (and of the Check XML log,
 * which shares the tokenizer). */
typedef struct junit {
    builder *b;
    int check;                       /* reading Check's XML log */
    int root_seen, root_closed;
    int in_case;                     /* depth of the open <testcase> (<test>), 0 if none */
    char name[RL_TR_NAME_MAX + 1];
    size_t nlen;
    tr_status status;
    int in_result;                   /* depth of <failure>/<error>/<skipped>, 0 if none */
    int need_sep;                    /* a message attribute awaits its body */
    buf_ht_t msg;
    int in_id, in_message;           /* Check: depth of <id> / <message>, 0 if none */
    buf_t id;                        /* Check: text of <id> */
    suite_frame suites[RL_TR_XML_DEPTH];
    int nsuites;
} junit;

static int xml_fail(xml *x, const char *what)
{
    return rl_err(x->err, RL_EPARSE, "%s: line %d: %s", x->what, x->line, what);
}

static void put_utf8(uint32_t c, void (*emit)(void *, const char *, size_t), void *ctx)
{
    char u[4];
    size_t n;
    if (c == 0 || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        c = 0xFFFD; /* not a character: the replacement character */
    if (c < 0x80) {
        u[0] = (char)c;
        n = 1;
    } else if (c < 0x800) {
        u[0] = (char)(0xC0 | (c >> 6));
        u[1] = (char)(0x80 | (c & 0x3F));
        n = 2;
    } else if (c < 0x10000) {
        u[0] = (char)(0xE0 | (c >> 12));
        u[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        u[2] = (char)(0x80 | (c & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | (c >> 18));
        u[1] = (char)(0x80 | ((c >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((c >> 6) & 0x3F));
        u[3] = (char)(0x80 | (c & 0x3F));
        n = 4;
    }
    emit(ctx, u, n);
}

/* Decodes entity and character references of s[0..n). Unknown or broken
 * references are kept as written: lenient, since the text is only shown. */
static void xml_decode(const char *s, size_t n, void (*emit)(void *, const char *, size_t), void *ctx)
{
    static const struct { const char *name; char c; } NAMED[] = {
        {"lt;", '<'}, {"gt;", '>'}, {"amp;", '&'}, {"quot;", '"'}, {"apos;", '\''},
    };
    size_t run = 0; /* start of the pending literal run */
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '&')
            continue;
        const char *p = s + i + 1;
        size_t rest = n - i - 1, used = 0;
        char one = 0;
        uint32_t code = 0;
        int numeric = 0;
        for (size_t k = 0; k < sizeof NAMED / sizeof NAMED[0]; k++) {
            size_t kl = strlen(NAMED[k].name);
            if (rest >= kl && !memcmp(p, NAMED[k].name, kl)) {
                one = NAMED[k].c;
                used = kl;
                break;
            }
        }
        if (!used && rest >= 3 && p[0] == '#') {
            int hex = p[1] == 'x' || p[1] == 'X';
            size_t j = hex ? 2 : 1, digits = 0;
            uint64_t v = 0;
            for (; j < rest && digits < 9; j++, digits++) {
                char c = p[j];
                int d = is_digit(c) ? c - '0'
                        : hex && c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : hex && c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
                if (d < 0)
                    break;
                v = v * (hex ? 16 : 10) + (uint64_t)d;
            }
            if (digits && j < rest && p[j] == ';') {
                numeric = 1;
                code = v > 0x10FFFF ? 0xFFFD : (uint32_t)v;
                used = j + 1;
            }
        }
        if (!used)
            continue;
        if (i > run)
            emit(ctx, s + run, i - run);
        if (numeric)
            put_utf8(code, emit, ctx);
        else
            emit(ctx, &one, 1);
        i += used;
        run = i + 1;
    }
    if (n > run)
        emit(ctx, s + run, n - run);
}

static void emit_buf(void *ctx, const char *p, size_t n) { buf_append_trunc(ctx, p, n); }
static void emit_ht(void *ctx, const char *p, size_t n) { buf_ht_append(ctx, p, n); }

static void count_lines(xml *x, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        x->line += x->s[i] == '\n';
}

static int is_name_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
           (unsigned char)c >= 0x80;
}
static int is_name_char(char c) { return is_name_start(c) || is_digit(c) || c == '-' || c == '.'; }
static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Reads a name at pos into out; 0 when there is none or it is too long. */
static int xml_name(xml *x, char *out)
{
    size_t st = x->pos;
    if (st >= x->len || !is_name_start(x->s[st]))
        return 0;
    while (x->pos < x->len && is_name_char(x->s[x->pos]))
        x->pos++;
    size_t n = x->pos - st;
    if (n > RL_TR_XML_NAME_MAX)
        return 0;
    memcpy(out, x->s + st, n);
    out[n] = '\0';
    return 1;
}

static void xml_skip_space(xml *x)
{
    while (x->pos < x->len && is_space(x->s[x->pos])) {
        x->line += x->s[x->pos] == '\n';
        x->pos++;
    }
}

static const char *xml_attr(const xml *x, const char *name)
{
    for (int i = 0; i < x->nattrs; i++)
        if (!strcmp(x->attrs[i].name, name))
            return buf_str(&x->attrs[i].value);
    return NULL;
}

/* A count attribute: a number, -1 when absent; -2 when not a number. */
static long count_attr(const xml *x, const char *name)
{
    const char *v = xml_attr(x, name);
    if (!v)
        return -1;
    long n = 0;
    if (!*v)
        return -2;
    for (; *v; v++) {
        if (!is_digit(*v) || n > 100000000L)
            return -2;
        n = n * 10 + (*v - '0');
    }
    return n;
}

static void suite_count(junit *j, int k)
{
    for (int i = 0; i < j->nsuites; i++)
        j->suites[i].got[k]++;
}

/* Check's <test result="..."><id>..</id>..<message>..</message></test>. */
static void check_start(junit *j, xml *x, const char *name, int depth)
{
    if (!strcmp(name, "test") && !j->in_case) {
        const char *r = xml_attr(x, "result");
        j->status = r && !strcmp(r, "success") ? TR_PASS
                    : r && !strcmp(r, "failure") ? TR_FAIL : TR_ERROR;
        j->nlen = 0;
        j->in_case = depth;
        j->in_id = j->in_message = 0;
        buf_dispose(&j->id);
        buf_init(&j->id, RL_TR_NAME_MAX);
        buf_ht_init(&j->msg, RL_TR_MSG_MAX / 2, RL_TR_MSG_MAX / 2);
    } else if (j->in_case && !j->in_id && !j->in_message && !strcmp(name, "id")) {
        j->in_id = depth;
    } else if (j->in_case && !j->in_id && !j->in_message && !strcmp(name, "message")) {
        j->in_message = depth;
    }
}

static void junit_start(junit *j, xml *x, const char *name, int self_closing)
{
    int depth = x->depth + (self_closing ? 1 : 0); /* depth of this element */
    if (j->check) {
        check_start(j, x, name, depth);
        return;
    }
    if ((!strcmp(name, "testsuite") || !strcmp(name, "testsuites")) && j->nsuites < RL_TR_XML_DEPTH) {
        suite_frame *f = &j->suites[j->nsuites++];
        f->depth = depth;
        f->line = x->line;
        for (int k = 0; k < SUITE_N; k++) {
            f->want[k] = count_attr(x, SUITE_ATTRS[k]);
            f->got[k] = 0;
            if (f->want[k] == -2)
                tr_report_set_integrity(j->b->r, "JUnit XML: line %d: <%s> attribute %s is not a count",
                                        x->line, name, SUITE_ATTRS[k]);
        }
        return;
    }
    if (j->in_case && (!strcmp(name, "failure") || !strcmp(name, "error") || !strcmp(name, "skipped")))
        suite_count(j, name[0] == 'f' ? SUITE_FAILURES : name[0] == 'e' ? SUITE_ERRORS : SUITE_SKIPPED);
    if (!strcmp(name, "testcase") && !j->in_case) {
        const char *nm = xml_attr(x, "name");
        j->nlen = nm ? strlen(nm) : 0;
        if (j->nlen > RL_TR_NAME_MAX)
            j->nlen = RL_TR_NAME_MAX;
        memcpy(j->name, nm ? nm : "", j->nlen);
        j->status = TR_PASS;
        j->need_sep = 0;
        j->in_case = depth;
        buf_ht_init(&j->msg, RL_TR_MSG_MAX / 2, RL_TR_MSG_MAX / 2);
    } else if (j->in_case && !j->in_result &&
               (!strcmp(name, "failure") || !strcmp(name, "error") || !strcmp(name, "skipped"))) {
        tr_status st = name[0] == 'f' ? TR_FAIL : name[0] == 'e' ? TR_ERROR : TR_SKIP;
        if (status_rank(st) > status_rank(j->status)) {
            j->status = st; /* keep only the worst result's text */
            buf_ht_dispose(&j->msg);
            buf_ht_init(&j->msg, RL_TR_MSG_MAX / 2, RL_TR_MSG_MAX / 2);
        }
        if (st == j->status) {
            const char *m = xml_attr(x, "message");
            if (m && *m) {
                if (j->msg.total)
                    buf_ht_append(&j->msg, "\n", 1);
                buf_ht_append(&j->msg, m, strlen(m));
                j->need_sep = 1;
            }
            j->in_result = depth;
        }
    }
}

static void junit_commit(junit *j)
{
    if (j->check) { /* the name is the text of <id>, trimmed */
        const char *id = buf_str(&j->id);
        size_t n = strlen(id);
        while (n && is_space(*id)) {
            id++;
            n--;
        }
        while (n && is_space(id[n - 1]))
            n--;
        memcpy(j->name, id, n);
        j->nlen = n;
    } else {
        suite_count(j, SUITE_TESTS);
    }
    size_t mlen = 0;
    char *m = j->msg.total ? buf_ht_render(&j->msg, &mlen) : NULL;
    while (m && mlen && (m[mlen - 1] == '\n' || m[mlen - 1] == ' '))
        mlen--;
    builder_add(j->b, j->name, j->nlen, j->status, m, mlen);
    free(m);
    buf_ht_dispose(&j->msg);
    j->in_case = 0;
}

/* Called with x->depth still counting the element being closed. */
static void junit_end(junit *j, xml *x)
{
    if (j->in_result == x->depth)
        j->in_result = 0;
    if (j->in_id == x->depth)
        j->in_id = 0;
    if (j->in_message == x->depth)
        j->in_message = 0;
    if (j->in_case == x->depth)
        junit_commit(j);
    if (j->nsuites && j->suites[j->nsuites - 1].depth == x->depth) {
        const suite_frame *f = &j->suites[--j->nsuites];
        for (int k = 0; k < SUITE_N; k++) {
            /* pytest counts a test that passed but whose teardown failed
             * twice in `tests` (once passed, once an error). */
            long slack = k == SUITE_TESTS ? f->got[SUITE_ERRORS] : 0;
            if (f->want[k] >= 0 && (f->want[k] < f->got[k] || f->want[k] > f->got[k] + slack)) {
                tr_report_set_integrity(j->b->r,
                                        "JUnit XML: line %d: the suite states %s=\"%ld\" but holds %ld",
                                        f->line, SUITE_ATTRS[k], f->want[k], f->got[k]);
                break;
            }
        }
    }
}

static void junit_text(junit *j, const char *s, size_t n, int raw)
{
    if (j->check) {
        if (j->in_id)
            raw ? (void)buf_append_trunc(&j->id, s, n) : xml_decode(s, n, emit_buf, &j->id);
        else if (j->in_message && j->status != TR_PASS)
            raw ? buf_ht_append(&j->msg, s, n) : xml_decode(s, n, emit_ht, &j->msg);
        return;
    }
    if (!j->in_result)
        return;
    int blank = 1;
    for (size_t i = 0; i < n && blank; i++)
        blank = is_space(s[i]);
    if (j->need_sep && !blank) { /* a line between the message and the body */
        buf_ht_append(&j->msg, "\n", 1);
        j->need_sep = 0;
    }
    if (raw)
        buf_ht_append(&j->msg, s, n);
    else
        xml_decode(s, n, emit_ht, &j->msg);
}

/* Start tag after '<'. Returns 0, 1 at a truncated end, or an error. */
static int xml_start_tag(xml *x, junit *j)
{
    char name[RL_TR_XML_NAME_MAX + 1];
    if (!xml_name(x, name))
        return x->pos >= x->len ? 1 : xml_fail(x, "expected an element name after '<'");
    for (int i = 0; i < x->nattrs; i++)
        buf_dispose(&x->attrs[i].value);
    x->nattrs = 0;
    for (;;) {
        xml_skip_space(x);
        if (x->pos >= x->len)
            return 1;
        char c = x->s[x->pos];
        if (c == '>' || c == '/') {
            int self = c == '/';
            if (self && (x->pos + 1 >= x->len || x->s[x->pos + 1] != '>'))
                return x->pos + 1 >= x->len ? 1 : xml_fail(x, "expected '>' after '/'");
            x->pos += self ? 2 : 1;
            if (!j->root_seen) {
                if (strcmp(name, "testsuites") && (j->check || strcmp(name, "testsuite")))
                    return rl_err(x->err, RL_EPARSE, "%s: root element is <%s>, expected %s", x->what,
                                  name, j->check ? "<testsuites>" : "<testsuites> or <testsuite>");
                j->root_seen = 1;
            }
            if (self) {
                junit_start(j, x, name, 1);
                x->depth++;
                junit_end(j, x);
                x->depth--;
                if (x->depth == 0)
                    j->root_closed = 1;
                return 0;
            }
            if (x->depth >= RL_TR_XML_DEPTH)
                return xml_fail(x, "elements nested too deep");
            strcpy(x->stack[x->depth++], name);
            junit_start(j, x, name, 0);
            return 0;
        }
        if (x->nattrs >= RL_TR_XML_ATTRS_MAX)
            return xml_fail(x, "too many attributes");
        xattr *a = &x->attrs[x->nattrs];
        if (!xml_name(x, a->name))
            return x->pos >= x->len ? 1 : xml_fail(x, "expected an attribute name");
        xml_skip_space(x);
        if (x->pos >= x->len)
            return 1;
        if (x->s[x->pos] != '=')
            return xml_fail(x, "expected '=' after an attribute name");
        x->pos++;
        xml_skip_space(x);
        if (x->pos >= x->len)
            return 1;
        char q = x->s[x->pos];
        if (q != '"' && q != '\'')
            return xml_fail(x, "expected a quoted attribute value");
        const char *v = x->s + x->pos + 1;
        const char *e = memchr(v, q, x->len - x->pos - 1);
        if (!e)
            return 1;
        buf_init(&a->value, RL_TR_MSG_MAX);
        x->nattrs++;
        xml_decode(v, (size_t)(e - v), emit_buf, &a->value);
        count_lines(x, x->pos, (size_t)(e - x->s));
        x->pos = (size_t)(e - x->s) + 1;
    }
}

static int xml_end_tag(xml *x, junit *j)
{
    char name[RL_TR_XML_NAME_MAX + 1];
    if (!xml_name(x, name))
        return x->pos >= x->len ? 1 : xml_fail(x, "expected an element name after '</'");
    xml_skip_space(x);
    if (x->pos >= x->len)
        return 1;
    if (x->s[x->pos] != '>')
        return xml_fail(x, "expected '>' to close an end tag");
    x->pos++;
    if (x->depth == 0 || strcmp(x->stack[x->depth - 1], name)) {
        char msg[RL_TR_XML_NAME_MAX * 2 + 64];
        snprintf(msg, sizeof msg, "unexpected </%s> (expected </%s>)", name,
                 x->depth ? x->stack[x->depth - 1] : "nothing");
        return xml_fail(x, msg);
    }
    junit_end(j, x);
    x->depth--;
    if (x->depth == 0)
        j->root_closed = 1;
    return 0;
}

/* Skips past the terminator `end`; 1 when the input ends first. */
static int xml_skip_to(xml *x, const char *end)
{
    size_t el = strlen(end);
    const char *e = memmem(x->s + x->pos, x->len - x->pos, end, el);
    if (!e)
        return 1;
    size_t to = (size_t)(e - x->s) + el;
    count_lines(x, x->pos, to);
    x->pos = to;
    return 0;
}

/* One markup construct at '<'. Returns 0, 1 at a truncated end, or an error. */
static int xml_markup(xml *x, junit *j)
{
    const char *p = x->s + x->pos;
    size_t rest = x->len - x->pos;
    if (rest >= 4 && !memcmp(p, "<!--", 4)) {
        x->pos += 4;
        return xml_skip_to(x, "-->");
    }
    if (rest >= 9 && !memcmp(p, "<![CDATA[", 9)) {
        x->pos += 9;
        const char *e = memmem(x->s + x->pos, x->len - x->pos, "]]>", 3);
        if (!e)
            return 1;
        junit_text(j, x->s + x->pos, (size_t)(e - x->s) - x->pos, 1);
        return xml_skip_to(x, "]]>");
    }
    if (rest >= 2 && p[1] == '?') {
        x->pos += 2;
        return xml_skip_to(x, "?>");
    }
    if (rest >= 2 && p[1] == '!') { /* DOCTYPE, maybe with an internal subset */
        int bracket = 0;
        for (size_t i = x->pos + 2; i < x->len; i++) {
            char c = x->s[i];
            bracket += c == '[' ? 1 : c == ']' ? -1 : 0;
            if (c == '>' && bracket <= 0) {
                count_lines(x, x->pos, i + 1);
                x->pos = i + 1;
                return 0;
            }
        }
        return 1;
    }
    if (rest >= 2 && p[1] == '/') {
        x->pos += 2;
        return xml_end_tag(x, j);
    }
    x->pos++;
    return xml_start_tag(x, j);
}

static int parse_xml(tr_report *out, const char *text, size_t len, int check, char *err)
{
    const char *what = check ? "Check XML" : "JUnit XML";
    const char *roots = check ? "<testsuites>" : "<testsuites> or <testsuite>";
    builder b;
    if (builder_init(&b, out))
        return rl_err(err, RL_ENOMEM, "%s: out of memory", what);
    xml *x = calloc(1, sizeof *x);
    junit *j = calloc(1, sizeof *j);
    if (!x || !j) {
        free(x);
        free(j);
        builder_done(&b);
        return rl_err(err, RL_ENOMEM, "%s: out of memory", what);
    }
    x->s = text ? text : "";
    x->len = text ? len : 0;
    x->line = 1;
    x->err = err;
    x->what = what;
    j->b = &b;
    j->check = check;
    if (x->len >= 3 && !memcmp(x->s, "\xEF\xBB\xBF", 3))
        x->pos = 3; /* byte order mark */
    int rc = 0;
    while (x->pos < x->len) {
        if (x->s[x->pos] == '<') {
            if (j->root_closed && x->pos + 1 < x->len && is_name_start(x->s[x->pos + 1]))
                tr_report_set_integrity(out, "%s: line %d: an element after the root element ended",
                                        what, x->line);
            rc = xml_markup(x, j);
            if (rc)
                break;
            continue;
        }
        const char *lt = memchr(x->s + x->pos, '<', x->len - x->pos);
        size_t end = lt ? (size_t)(lt - x->s) : x->len;
        if (!j->root_seen) {
            for (size_t i = x->pos; i < end && !rc; i++)
                if (!is_space(x->s[i])) {
                    char msg[96];
                    snprintf(msg, sizeof msg, "text before the root element (expected %s)", roots);
                    rc = xml_fail(x, msg);
                }
            if (rc)
                break;
        }
        junit_text(j, x->s + x->pos, end - x->pos, 0);
        count_lines(x, x->pos, end);
        x->pos = end;
    }
    if (rc == 1)
        rc = 0; /* truncated: keep the test cases that were complete */
    if (j->in_case)
        buf_ht_dispose(&j->msg); /* an unfinished test case is not reported */
    buf_dispose(&j->id);
    for (int i = 0; i < x->nattrs; i++)
        buf_dispose(&x->attrs[i].value);
    if (!rc && !j->root_seen)
        rc = rl_err(err, RL_EPARSE, "%s: no %s element in %zu bytes", what, roots, len);
    if (!rc && !j->root_closed)
        tr_report_set_integrity(out, "%s: the file ends before its root element does (the run was cut short)",
                                what);
    free(x);
    free(j);
    builder_done(&b);
    if (b.oom)
        return rl_err(err, RL_ENOMEM, "%s: out of memory", what);
    return rc;
}

int tr_parse_junit(tr_report *out, const char *text, size_t len, char *err)
{
    return parse_xml(out, text, len, 0, err);
}

int tr_parse_check_xml(tr_report *out, const char *text, size_t len, char *err)
{
    return parse_xml(out, text, len, 1, err);
}

/* ---- Check: XML log against stdout -------------------------------------------- */

static int cmp_case_ptr(const void *a, const void *b)
{
    return strcmp((*(const tr_case *const *)a)->name, (*(const tr_case *const *)b)->name);
}

static const tr_case **sorted_cases(const tr_report *r)
{
    const tr_case **v = malloc((r->n ? r->n : 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < r->n; i++)
        v[i] = &r->cases[i];
    qsort(v, r->n, sizeof *v, cmp_case_ptr);
    return v;
}

int tr_check_agrees(tr_report *log, const tr_report *out, int out_cut)
{
    if (log->integrity[0])
        return RL_EINVAL;
    long fails = log->reported[TR_FAIL], errors = log->reported[TR_ERROR];
    long total = log->reported[TR_PASS] + log->reported[TR_SKIP] + fails + errors;
    if (out->summary_lines == 0 && !out_cut) {
        tr_report_set_integrity(log, "Check: no summary line (N%%: Checks: N, Failures: N, Errors: N) on stdout");
        return RL_EINVAL;
    }
    if (out->summary_lines > 1) { /* a second runner would have overwritten the log */
        tr_report_set_integrity(log, "Check: %d summary lines on stdout (expected one runner)",
                                out->summary_lines);
        return RL_EINVAL;
    }
    if (out->summary_lines == 1 && (out->summary_checks != total || out->summary_failures != fails || out->summary_errors != errors)) {
        tr_report_set_integrity(log,
                                "Check: stdout says Checks: %ld, Failures: %ld, Errors: %ld; the XML log "
                                "holds %ld, %ld, %ld",
                                out->summary_checks, out->summary_failures, out->summary_errors, total,
                                fails, errors);
        return RL_EINVAL;
    }
    const tr_case **a = sorted_cases(log), **b = sorted_cases(out);
    int rc = 0;
    if (!a || !b) {
        tr_report_set_integrity(log, "Check: out of memory comparing stdout with the XML log");
        rc = RL_ENOMEM;
    }
    size_t i = 0, k = 0;
    while (!rc && (i < log->n || k < out->n)) {
        int c = i == log->n ? 1 : k == out->n ? -1 : strcmp(a[i]->name, b[k]->name);
        if (c < 0) { /* in the log only: fine for a pass (CK_NORMAL), or when stdout lost lines */
            if (a[i]->status != TR_PASS && !out_cut) {
                tr_report_set_integrity(log, "Check: test %s is a %s in the XML log but not on stdout",
                                        a[i]->name, tr_status_name(a[i]->status));
                rc = RL_EINVAL;
            }
            i++;
        } else if (c > 0) {
            tr_report_set_integrity(log, "Check: test %s is on stdout but not in the XML log", b[k]->name);
            rc = RL_EINVAL;
        } else {
            /* Stdout may show fewer iterations of a loop test (CK_NORMAL
             * prints failures only), never more, never another status. */
            if (a[i]->status != b[k]->status || a[i]->count < b[k]->count) {
                tr_report_set_integrity(log,
                                        "Check: test %s: stdout says %s (%d times), the XML log %s (%d times)",
                                        a[i]->name, tr_status_name(b[k]->status), b[k]->count,
                                        tr_status_name(a[i]->status), a[i]->count);
                rc = RL_EINVAL;
            }
            i++;
            k++;
        }
    }
    free(a);
    free(b);
    return rc;
}
