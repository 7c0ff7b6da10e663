/* search.c - the search policy: a repair agent without the gold patch.
 *
 * It sees only the context text: the system prompt, the problem statement,
 * its own earlier calls and the tool responses. What it learns is kept in
 * a per-episode state (one policy instance per episode); every turn it
 * reads the responses to the calls it made last turn, updates the state
 * and decides the next message. Same seed and same observations give the
 * same messages.
 *
 * Working method (when the system prompt asks for it, see below):
 *   1. run the tests; parse the failing tests and their messages;
 *   2. search for each failing test by name and read its body;
 *   3. take the functions the tests call (and those the failure messages
 *      and traceback lines name), search for their definitions and read
 *      those files; then one level further: the helpers those functions
 *      call, searched in other files too (a cross-file defect sits in a
 *      helper of the function the test calls);
 *   4. rank candidate repairs (policy/search_cand.c) and try them one by
 *      one: edit_file, then run_tests in the same message; keep an edit
 *      that strictly shrinks the set of failing tests without breaking a
 *      passing one, revert any other (edit_file back, in front of the next
 *      attempt) and go on from the kept state, so a second defect can be
 *      fixed after the first. The analysis then follows only the tests
 *      that still fail;
 *   5. a kept edit after which RL_SEARCH_BACKTRACK_TRIES attempts lead
 *      nowhere is undone as a wrong turn (an edit that silences a test by
 *      disabling a branch): the attempts made on top of it become
 *      available again and an attempt that leads to the same failures
 *      again is not kept;
 *   6. an attempt that makes some failing test pass, kept or not, marks
 *      its line as near the defect (mutation-based fault localisation):
 *      candidates around it rank higher;
 *   7. submit when every test passes, or after RL_SEARCH_TRIES_MAX
 *      candidates or RL_SEARCH_TURNS_MAX turns.

 * Seeds: equally ranked candidates are tried in an order drawn from the
 * episode seed, and the order in which leads (failing tests, names) are
 * followed is shuffled by it, so a group of seeds can disagree.
 *
 * Prompt sensitivity, modelled honestly. The policy reads the system
 * prompt. Only when it spells out the working method (run the tests first,
 * run them again after an edit, submit only when they pass: detected in
 * the prompt text, search_prompt_wants_verify) does the policy follow the
 * verify loop above. With a minimal prompt (v1) it behaves like an agent
 * that was not told to verify: it works from the problem statement alone
 * (searches the names the statement mentions, reads that code, makes the
 * single edit its heuristics rank first) and submits without running the
 * tests. This mirrors the reference result for one model (parse_date: v1
 * passed 0/3 seeds, v2 passed 2/3) without faking it: the reward always
 * comes from the real tests, and whether the one blind edit is right
 * depends only on the ranking.
 *
 * Thinking: with thinking on, each turn carries a short, honest account
 * (what failed, what it tries next and why); with thinking off, none.
 */
#include "policy/search.h"

#include "common/buf.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/vec.h"
#include "protocol/chat.h"
#include "protocol/template.h"
#include "policy/scripted.h"

#include <cJSON.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum {
    K_RUN,         /* run_tests: baseline or the evaluation of a candidate */
    K_FIND_TEST,   /* search for a failing test's definition */
    K_READ_TEST,   /* read_file of a test's body (or a test helper's) */
    K_FIND_NAME,   /* search for a name's definition */
    K_READ_FILE,   /* read_file of a source file (or of the gap in it) */
    K_EDIT,        /* edit_file applying a candidate */
    K_REVERT,      /* edit_file undoing a candidate */
    K_REAPPLY,     /* edit_file redoing the best partial improvement */
    K_SUBMIT,
} call_kind;

typedef struct pend {
    call_kind kind;
    int ref;       /* test, name or file index */
} pend;

typedef struct search_test {
    char *name;                 /* as reported */
    char key[SR_NAME_MAX];      /* the name searched for */
    char *msg;
    int searched, located, read;
    int fixed;                  /* passes in the best state so far */
    int file;                   /* test file index once located */
    int line;                   /* line of its definition */
    char (*refs)[SR_NAME_MAX];  /* names its body calls */
    size_t nrefs;
} search_test;

typedef struct search_name {
    char name[SR_NAME_MAX];
    int searched;
} search_name;

/* A helper defined in a test file (dec(), fmt()): its body counts as part
 * of the tests that call it. */
typedef struct search_helper {
    char name[SR_NAME_MAX];
    int file, line, read;
    char (*refs)[SR_NAME_MAX];
    size_t nrefs;
} search_helper;

typedef struct search {
    uint64_t seed;
    double temperature;       /* pol_env.temperature: noise on the ranking */
    int turn;                 /* turns written in this episode */
    int verify;               /* 1: the verify loop; 0: blind single edit */
    char *problem;
    buf_t hints;              /* failure messages + problem: ranking words */
    pend pend[RL_TC_CALLS_MAX];
    int npend;
    int have_best, eval;      /* baseline known; a candidate awaits its run */
    search_result best;
    search_test tests[RL_SEARCH_TESTS_MAX];
    size_t ntests;
    search_helper helpers[RL_SEARCH_TESTS_MAX];
    size_t nhelpers;
    search_name names[RL_SEARCH_NAMES_MAX];
    size_t nnames;
    search_file files[RL_SEARCH_FILES_MAX];
    search_def *defs[RL_SEARCH_FILES_MAX];
    size_t ndefs[RL_SEARCH_FILES_MAX];
    int read_tries[RL_SEARCH_FILES_MAX];
    char *loc_path[RL_SEARCH_FAILS_MAX];
    int loc_line[RL_SEARCH_FAILS_MAX];
    size_t nloc;
    search_cand *cands;
    size_t ncands, cap;
    int dirty;                /* candidates must be ranked again */
    uint64_t *tried;
    size_t ntried, tried_cap;
    int tries, kept;
    search_cand applied;          /* the candidate under evaluation */
    int applied_ok;
    search_cand revert[RL_SEARCH_KEEP_MAX + 1]; /* to undo in the next message, in order */
    int nrevert;
    /* Kept edits, innermost last: each with the result before it and the
     * size of the tried list when it was kept (backtracking restores
     * both). */
    struct {
        search_cand cand;
        search_result prev;
        size_t tried_mark;
    } kept_stack[RL_SEARCH_KEEP_MAX];
    int nkept;
    int since_keep;           /* tries since the innermost kept edit */
    /* The best partial improvement seen since the last commit: undone at
     * once, built on after RL_SEARCH_LOOKAHEAD more attempts (a full fix
     * among them wins outright). */
    search_cand partial;
    search_result partial_res;
    int have_partial, since_partial, need_commit;
    /* Every partial improvement of the window: the ones not built on may
     * be the next defect's fix, tried again on top of the chosen one. */
    uint64_t partial_keys[RL_SEARCH_LOOKAHEAD + 1];
    int npartial_keys;
    /* Outcomes abandoned by backtracking: (failing set before, after). An
     * attempt that leads to the same place again is not kept. */
    uint64_t dead_from[RL_SEARCH_HOT_MAX], dead_to[RL_SEARCH_HOT_MAX];
    size_t ndead;
    char *hot_path[RL_SEARCH_HOT_MAX];
    int hot_line[RL_SEARCH_HOT_MAX];
    size_t nhot;
    int done;                 /* every test passes */
    int name_searches;        /* search calls for names so far */
    int blind_edits;          /* blind mode: edits sent */
    int blind_ok;             /* blind mode: an edit was confirmed */
    char last_note[600];      /* what the last evaluation showed */
} search;

/* ---- small helpers --------------------------------------------------------- */

static void name_copy(char *dst, const char *src)
{
    size_t n = strnlen(src, SR_NAME_MAX - 1);
    memmove(dst, src, n);
    dst[n] = 0;
}

static int file_find(search *s, const char *path)
{
    for (size_t i = 0; i < RL_SEARCH_FILES_MAX; i++)
        if (s->files[i].path && !strcmp(s->files[i].path, path))
            return (int)i;
    return -1;
}

static int file_add(search *s, const char *path)
{
    int f = file_find(s, path);
    if (f >= 0)
        return f;
    for (size_t i = 0; i < RL_SEARCH_FILES_MAX; i++) {
        if (s->files[i].path)
            continue;
        search_file *fl = &s->files[i];
        memset(fl, 0, sizeof *fl);
        if (!(fl->path = strdup(path)))
            return -1;
        fl->lang = mut_lang_of_path(path);
        fl->is_test = mut_is_test_path(path);
        fl->level = SR_LEVEL_NONE;
        return (int)i;
    }
    return -1;
}

static int tried_has(const search *s, uint64_t k)
{
    for (size_t i = 0; i < s->ntried; i++)
        if (s->tried[i] == k)
            return 1;
    return 0;
}

/* Removes k keeping the order (the kept edits' marks index the list). */
static void tried_del(search *s, uint64_t k)
{
    for (size_t i = 0; i < s->ntried; i++)
        if (s->tried[i] == k) {
            memmove(&s->tried[i], &s->tried[i + 1], (s->ntried - i - 1) * sizeof *s->tried);
            s->ntried--;
            for (int j = 0; j < s->nkept; j++)
                if (s->kept_stack[j].tried_mark > i)
                    s->kept_stack[j].tried_mark--;
            return;
        }
}

static void tried_add(search *s, uint64_t k)
{
    if (tried_has(s, k))
        return;
    if (VEC_GROW(s->tried, s->tried_cap, s->ntried + 1, RL_SEARCH_TRIED_MAX) < 0)
        return; /* out of memory; the cap is past what an episode tries */
    s->tried[s->ntried++] = k;
}

static int cand_copy(search_cand *dst, const search_cand *src)
{
    *dst = *src;
    dst->old_block = strdup(src->old_block);
    dst->new_block = strdup(src->new_block);
    dst->desc = strdup(src->desc);
    if (!dst->old_block || !dst->new_block || !dst->desc) {
        search_cand_dispose(dst);
        return -1;
    }
    return 0;
}

/* First line of a message, cut to n bytes, for the think text. */
static void first_line(char *out, size_t n, const char *msg)
{
    const char *m = msg ? msg : "";
    size_t k = strcspn(m, "\n");
    if (k > n - 4)
        snprintf(out, n, "%.*s...", (int)(n - 4), m);
    else
        snprintf(out, n, "%.*s", (int)k, m);
}

/* ---- the state ------------------------------------------------------------- */

static void state_clear(search *s)
{
    free(s->problem);
    buf_dispose(&s->hints);
    search_result_dispose(&s->best);
    for (size_t i = 0; i < s->ntests; i++) {
        free(s->tests[i].name);
        free(s->tests[i].msg);
        free(s->tests[i].refs);
    }
    for (size_t i = 0; i < s->nhelpers; i++)
        free(s->helpers[i].refs);
    for (size_t i = 0; i < RL_SEARCH_FILES_MAX; i++) {
        search_file_dispose(&s->files[i]);
        free(s->defs[i]);
    }
    for (size_t i = 0; i < s->nloc; i++)
        free(s->loc_path[i]);
    for (size_t i = 0; i < s->ncands; i++)
        search_cand_dispose(&s->cands[i]);
    free(s->cands);
    free(s->tried);
    search_cand_dispose(&s->applied);
    for (int i = 0; i < s->nrevert; i++)
        search_cand_dispose(&s->revert[i]);
    for (int i = 0; i < s->nkept; i++) {
        search_cand_dispose(&s->kept_stack[i].cand);
        search_result_dispose(&s->kept_stack[i].prev);
    }
    for (size_t i = 0; i < s->nhot; i++)
        free(s->hot_path[i]);
    search_cand_dispose(&s->partial);
    search_result_dispose(&s->partial_res);
    uint64_t seed = s->seed;
    double temperature = s->temperature;
    memset(s, 0, sizeof *s);
    s->seed = seed;
    s->temperature = temperature;
    buf_init(&s->hints, RL_SEARCH_OBS_MAX);
}

static void hints_add(search *s, const char *text)
{
    if (!text)
        return;
    size_t room = s->hints.max - s->hints.len;
    if (room < 2)
        return;
    buf_append_trunc(&s->hints, text, strnlen(text, room - 1));
    buf_append_trunc(&s->hints, "\n", 1);
}

/* "got G, expected V" in a failure message, in the forms our runners
 * print: Check "X == G, V == V", TAP "got G, expected V", pytest
 * "assert G == V". Returns 1 with both numbers. */
static int number_pair(const char *m, long *g, long *v)
{
    const char *p;
    if ((p = strstr(m, "got ")) && sscanf(p, "got %ld, expected %ld", g, v) == 2)
        return 1;
    if ((p = strstr(m, "assert ")) && sscanf(p, "assert %ld == %ld", g, v) == 2)
        return 1;
    for (p = strstr(m, " == "); p; p = strstr(p + 4, " == ")) {
        long a, b, c;
        int n = 0;
        if (sscanf(p, " == %ld, %ld == %ld%n", &a, &b, &c, &n) == 3 && n > 0 && b == c) {
            *g = a;
            *v = b;
            return 1;
        }
    }
    return 0;
}

/* +1 or -1 when the failing tests show results one too small or one too
 * large (and agree), else 0. */
static int off_by_one(const search_result *r)
{
    int dir = 0;
    for (size_t i = 0; i < r->nfail; i++) {
        long g, v;
        if (!r->fail[i].msg || !number_pair(r->fail[i].msg, &g, &v) || (v - g != 1 && v - g != -1))
            continue;
        int d = (int)(v - g);
        if (dir && d != dir)
            return 0;
        dir = d;
    }
    return dir;
}

/* Every numeric (got, expected) pair the failing tests show. */
static size_t number_pairs(const search_result *r, long *got, long *want, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nfail && n < max; i++)
        if (r->fail[i].msg && number_pair(r->fail[i].msg, &got[n], &want[n]))
            n++;
    return n;
}

/* The ranking words: the problem statement and what still fails. */
static void hints_rebuild(search *s)
{
    buf_clear(&s->hints);
    hints_add(s, s->problem);
    for (size_t i = 0; i < s->best.nfail; i++)
        hints_add(s, s->best.fail[i].msg);
}

/* "path.py:33" and "path.c:12" in a message: where the failure was seen.
 * Test files are left out (their lines are not the defect). */
static void locs_add(search *s, const char *msg)
{
    const char *p = msg;
    while (p && *p && s->nloc < RL_SEARCH_FAILS_MAX) {
        const char *c = strstr(p, ".py:");
        const char *d = strstr(p, ".c:");
        const char *h = !c ? d : !d ? c : c < d ? c : d;
        if (!h)
            break;
        size_t ext = h == c ? 3 : 2;
        const char *b = h;
        while (b > msg && (isalnum((unsigned char)b[-1]) || strchr("_./-", b[-1])))
            b--;
        const char *q = h + ext + 1;
        int line = 0;
        while (*q >= '0' && *q <= '9' && line < 1000000)
            line = line * 10 + (*q++ - '0');
        p = h + ext + 1;
        if (b == h || line <= 0 || (size_t)(h + ext - b) >= RL_TASK_PATH_MAX)
            continue;
        char path[RL_TASK_PATH_MAX];
        snprintf(path, sizeof path, "%.*s", (int)(h + ext - b), b);
        if (path[0] == '/' || mut_is_test_path(path))
            continue;
        int dup = 0;
        for (size_t i = 0; i < s->nloc; i++)
            dup |= s->loc_line[i] == line && !strcmp(s->loc_path[i], path);
        if (dup)
            continue;
        if (!(s->loc_path[s->nloc] = strdup(path)))
            break;
        s->loc_line[s->nloc++] = line;
        int f = file_add(s, path);
        if (f >= 0)
            s->files[f].wanted = 1;
    }
}

/* The name a test is defined under: "tests/t.py::TestX::test_y[2]" ->
 * "test_y". */
static void test_key(char *out, const char *name)
{
    const char *p = name, *q;
    while ((q = strstr(p, "::")))
        p = q + 2;
    const char *dot = strrchr(p, '.');
    if (dot && dot[1])
        p = dot + 1;
    size_t n = strcspn(p, "[ ");
    if (n >= SR_NAME_MAX)
        n = SR_NAME_MAX - 1;
    memcpy(out, p, n);
    out[n] = 0;
}

static void tests_register(search *s, const search_result *r)
{
    /* Followed in a seed-dependent order when there are more than fit. */
    size_t n = r->nfail, idx[RL_SEARCH_FAILS_MAX];
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    uint64_t st = search_mix(s->seed, 0x7e57);
    for (size_t i = n; i > 1; i--) {
        st = search_mix(st, i);
        size_t j = st % i, t = idx[i - 1];
        idx[i - 1] = idx[j];
        idx[j] = t;
    }
    for (size_t k = 0; k < n; k++) {
        const search_fail *f = &r->fail[idx[k]];
        locs_add(s, f->msg);
        if (s->ntests >= RL_SEARCH_TESTS_MAX)
            continue;
        search_test *t = &s->tests[s->ntests];
        memset(t, 0, sizeof *t);
        t->name = strdup(f->name);
        t->msg = strdup(f->msg ? f->msg : "");
        t->file = -1;
        if (!t->name || !t->msg) {
            free(t->name);
            free(t->msg);
            continue;
        }
        test_key(t->key, t->name);
        s->ntests++;
    }
}

/* ---- analysis: levels of the definitions -------------------------------- */

typedef struct lvl {
    char (*name)[SR_NAME_MAX];
    int *level;
    size_t n, max;
} lvl;

static int lvl_set(lvl *L, const char *name, int level)
{
    for (size_t i = 0; i < L->n; i++)
        if (!strcmp(L->name[i], name)) {
            if (level < L->level[i]) {
                L->level[i] = level;
                return 1;
            }
            return 0;
        }
    if (L->n >= L->max)
        return 0;
    name_copy(L->name[L->n], name);
    L->level[L->n++] = level;
    return 1;
}

static char *file_lines_text(const search_file *f, int from, int to, size_t *len)
{
    buf_t b;
    buf_init(&b, RL_SEARCH_OBS_MAX);
    for (int l = from; l <= to && l >= 1 && (size_t)l <= f->n; l++) {
        if (!f->line[l - 1])
            break;
        buf_puts(&b, f->line[l - 1]);
        buf_putc(&b, '\n');
    }
    return buf_detach(&b, len);
}

/* Python "from .x import a, b": names a file brings in. */
static size_t py_imports(char (*names)[SR_NAME_MAX], size_t n, size_t max, const search_file *f)
{
    for (size_t i = 0; i < f->n && n < max; i++) {
        const char *l = f->line[i];
        if (!l || strncmp(l, "from ", 5))
            continue;
        const char *imp = strstr(l, " import ");
        if (!imp)
            continue;
        const char *p = imp + 8;
        while (*p && n < max) {
            while (*p == ' ' || *p == ',' || *p == '(')
                p++;
            size_t k = 0;
            while (p[k] && (isalnum((unsigned char)p[k]) || p[k] == '_'))
                k++;
            if (!k)
                break;
            if (k < SR_NAME_MAX) {
                char w[SR_NAME_MAX];
                memcpy(w, p, k);
                w[k] = 0;
                int dup = 0;
                for (size_t j = 0; j < n; j++)
                    dup |= !strcmp(names[j], w);
                if (!dup && !search_name_ignored(w))
                    memcpy(names[n++], w, k + 1);
            }
            p += k;
            if (!strncmp(p, " as ", 4)) {
                p += 4;
                while (*p && (isalnum((unsigned char)*p) || *p == '_'))
                    p++;
            }
        }
    }
    return n;
}

/* Recomputes every file's definitions (complete non-test files). */
static void defs_refresh(search *s)
{
    for (size_t f = 0; f < RL_SEARCH_FILES_MAX; f++) {
        free(s->defs[f]);
        s->defs[f] = NULL;
        s->ndefs[f] = 0;
        search_file *fl = &s->files[f];
        if (!fl->path || fl->is_test || !search_file_complete(fl))
            continue;
        size_t len;
        char *t = search_file_text(fl, &len);
        if (!t)
            continue;
        s->ndefs[f] = search_find_defs(&s->defs[f], t, len, fl->lang, RL_SEARCH_DEFS_MAX);
        free(t);
    }
}

/* Level of every definition for one failing test (or, in blind mode, the
 * problem statement): seeds at level 0, then what reached definitions
 * refer to, one level further each time. Fills lv (per file, per def). */
static void reach_from(search *s, lvl *L, int **lv)
{
    for (int level = 0; level <= RL_SEARCH_LEVEL_MAX; level++) {
        int changed = 0;
        /* Traceback lines: the definition holding them is at level 0. */
        if (level == 0)
            for (size_t i = 0; i < s->nloc; i++) {
                int f = file_find(s, s->loc_path[i]);
                for (size_t d = 0; f >= 0 && d < s->ndefs[f]; d++) {
                    search_def *df = &s->defs[f][d];
                    if (!df->is_class && s->loc_line[i] >= df->start && s->loc_line[i] <= df->end &&
                        lv[f][d] > 0)
                        lv[f][d] = 0;
                }
            }
        for (size_t f = 0; f < RL_SEARCH_FILES_MAX; f++)
            for (size_t d = 0; d < s->ndefs[f]; d++) {
                search_def *df = &s->defs[f][d];
                for (size_t i = 0; i < L->n; i++) {
                    if (L->level[i] != level)
                        continue;
                    int hit = 0, at = level;
                    if (!strcmp(df->name, L->name[i])) {
                        hit = 1;
                    } else if (!strcmp(df->cls, L->name[i]) && df->name[0] == '_' && df->name[1] == '_') {
                        /* A class used by name: its constructor runs at
                         * once, its operators a step later. */
                        hit = 1;
                        at = strcmp(df->name, "__init__") ? level + 1 : level;
                    }
                    if (hit && at < lv[f][d]) {
                        lv[f][d] = at;
                        changed = 1;
                    }
                }
            }
        /* What the definitions at this level refer to is one level on. */
        for (size_t f = 0; f < RL_SEARCH_FILES_MAX; f++) {
            if (!s->ndefs[f])
                continue;
            search_file *fl = &s->files[f];
            int any = 0;
            for (size_t d = 0; d < s->ndefs[f]; d++) {
                search_def *df = &s->defs[f][d];
                if (lv[f][d] != level || df->is_class)
                    continue;
                any = 1;
                char names[64][SR_NAME_MAX];
                size_t len, nn;
                char *t = file_lines_text(fl, df->start, df->end, &len);
                nn = search_refs(names, 0, 64, t, len, fl->lang, 2, df->end - df->start + 1, fl->lang != MUT_LANG_PY);
                free(t);
                for (size_t i = 0; i < nn && level < RL_SEARCH_LEVEL_MAX; i++)
                    changed |= lvl_set(L, names[i], level + 1);
            }
            if (any && fl->lang == MUT_LANG_PY && level < RL_SEARCH_LEVEL_MAX) {
                char names[64][SR_NAME_MAX];
                size_t nn = py_imports(names, 0, 64, fl);
                for (size_t i = 0; i < nn; i++)
                    changed |= lvl_set(L, names[i], level + 1);
            }
        }
        (void)changed;
    }
}

/* Seeds of one test: what its body (and the helpers it calls) call, and
 * what its message names. */
static void test_seeds(search *s, lvl *L, const search_test *t)
{
    for (size_t i = 0; i < t->nrefs; i++) {
        lvl_set(L, t->refs[i], 0);
        for (size_t h = 0; h < s->nhelpers; h++)
            if (!strcmp(s->helpers[h].name, t->refs[i]))
                for (size_t j = 0; j < s->helpers[h].nrefs; j++)
                    lvl_set(L, s->helpers[h].refs[j], 0);
    }
    char names[64][SR_NAME_MAX];
    size_t nn = search_text_names(names, 0, 64, t->msg ? t->msg : "");
    for (size_t i = 0; i < nn; i++) {
        lvl_set(L, names[i], 0);
        for (size_t h = 0; h < s->nhelpers; h++)
            if (!strcmp(s->helpers[h].name, names[i]))
                for (size_t j = 0; j < s->helpers[h].nrefs; j++)
                    lvl_set(L, s->helpers[h].refs[j], 0);
    }
}

/* Names to look for: referred to at level <= max_level by some seed set
 * and defined in no file read so far. Kept with their best level. */
typedef struct want {
    char name[SR_NAME_MAX];
    int level, count;
    uint64_t jitter;
} want;

static int name_defined(const search *s, const char *name)
{
    for (size_t f = 0; f < RL_SEARCH_FILES_MAX; f++)
        for (size_t d = 0; d < s->ndefs[f]; d++)
            if (!strcmp(s->defs[f][d].name, name))
                return 1;
    for (size_t h = 0; h < s->nhelpers; h++)
        if (!strcmp(s->helpers[h].name, name))
            return 1;
    return 0;
}

static size_t want_add(want *w, size_t n, size_t max, const char *name, int level, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(w[i].name, name)) {
            if (level < w[i].level)
                w[i].level = level;
            w[i].count++;
            return n;
        }
    if (n >= max)
        return n;
    name_copy(w[n].name, name);
    w[n].level = level;
    w[n].count = 1;
    w[n].jitter = search_mix(seed, search_hash(name, strlen(name), 5));
    return n + 1;
}

/* Runs the level analysis over every seed set; sets each definition's
 * level and reach, each file's level, and lists unresolved names. */
static size_t analyze(search *s, want *w, size_t wmax)
{
    defs_refresh(s);
    int *lv[RL_SEARCH_FILES_MAX];
    size_t nw = 0;
    for (size_t f = 0; f < RL_SEARCH_FILES_MAX; f++) {
        lv[f] = s->ndefs[f] ? malloc(s->ndefs[f] * sizeof **lv) : NULL;
        for (size_t d = 0; d < s->ndefs[f]; d++) {
            s->defs[f][d].level = SR_LEVEL_NONE;
            s->defs[f][d].reach = 0;
        }
        s->files[f].level = SR_LEVEL_NONE;
    }
    size_t nsets = s->verify && s->ntests ? s->ntests : 1;
    char (*names)[SR_NAME_MAX] = malloc(RL_SEARCH_NAMES_MAX * sizeof *names);
    int *levels = malloc(RL_SEARCH_NAMES_MAX * sizeof *levels);
    size_t nfixed = 0;
    for (size_t k = 0; k < s->ntests; k++)
        nfixed += s->tests[k].fixed != 0;
    for (size_t k = 0; names && levels && k < nsets; k++) {
        lvl L = {names, levels, 0, RL_SEARCH_NAMES_MAX};
        if (s->verify && s->ntests && s->tests[k].fixed && nfixed < s->ntests)
            continue;
        if (s->verify && s->ntests) {
            test_seeds(s, &L, &s->tests[k]);
        } else {
            char pn[64][SR_NAME_MAX];
            size_t np = search_text_names(pn, 0, 64, s->problem ? s->problem : "");
            for (size_t i = 0; i < np; i++)
                lvl_set(&L, pn[i], 0);
        }
        for (size_t f = 0; f < RL_SEARCH_FILES_MAX; f++)
            for (size_t d = 0; d < s->ndefs[f]; d++)
                if (lv[f])
                    lv[f][d] = SR_LEVEL_NONE;
        reach_from(s, &L, lv);
        for (size_t f = 0; f < RL_SEARCH_FILES_MAX; f++)
            for (size_t d = 0; d < s->ndefs[f]; d++) {
                search_def *df = &s->defs[f][d];
                if (!lv[f] || lv[f][d] > RL_SEARCH_LEVEL_MAX)
                    continue;
                df->reach++;
                if (lv[f][d] < df->level)
                    df->level = lv[f][d];
                if (df->level < s->files[f].level)
                    s->files[f].level = df->level;
            }
        for (size_t i = 0; i < L.n; i++)
            if (L.level[i] <= 1 && !name_defined(s, L.name[i]))
                nw = want_add(w, nw, wmax, L.name[i], L.level[i], s->seed);
    }
    free(names);
    free(levels);
    for (size_t f = 0; f < RL_SEARCH_FILES_MAX; f++)
        free(lv[f]);
    return nw;
}

static int want_cmp(const void *a, const void *b)
{
    const want *x = a, *y = b;
    if (x->level != y->level)
        return x->level - y->level;
    if (x->count != y->count)
        return y->count - x->count;
    return x->jitter < y->jitter ? -1 : x->jitter > y->jitter;
}

/* ---- observations ----------------------------------------------------------- */

/* Line where the body of the test (or helper) at line `line` ends, from
 * what is known of the file. */
static int body_end(const search_file *f, int line)
{
    if (line < 1 || (size_t)line > f->n || !f->line[line - 1])
        return line;
    if (f->lang == MUT_LANG_PY) {
        const char *h = f->line[line - 1];
        int ind = (int)strspn(h, " ");
        int last = line;
        for (size_t l = (size_t)line + 1; l <= f->n && f->line[l - 1]; l++) {
            const char *t = f->line[l - 1];
            size_t sp = strspn(t, " \t");
            if (!t[sp])
                continue;
            if ((int)sp <= ind)
                break;
            last = (int)l;
        }
        return last;
    }
    int depth = 0, opened = 0;
    for (size_t l = (size_t)line; l <= f->n && f->line[l - 1] && l < (size_t)line + 400; l++) {
        for (const char *p = f->line[l - 1]; *p; p++) {
            if (*p == '{') {
                depth++;
                opened = 1;
            } else if (*p == '}') {
                depth--;
            }
        }
        if (opened && depth <= 0)
            return (int)l;
        if (!strncmp(f->line[l - 1], "END_TEST", 8))
            return (int)l;
    }
    return line;
}

static void body_refs(const search_file *f, int line, char (**refs)[SR_NAME_MAX], size_t *nrefs)
{
    int end = body_end(f, line);
    size_t len;
    char *t = file_lines_text(f, line, end, &len);
    char (*names)[SR_NAME_MAX] = calloc(64, sizeof *names);
    if (!t || !names) {
        free(t);
        free(names);
        return;
    }
    /* From the second line on for Python (the header names the test
     * itself); C bodies start on the START_TEST line. */
    int from = f->lang == MUT_LANG_PY ? 2 : 1;
    size_t n = search_refs(names, 0, 64, t, len, f->lang, from, end - line + 1, f->lang != MUT_LANG_PY);
    free(t);
    free(*refs);
    *refs = names;
    *nrefs = n;
}

static void on_find_test(search *s, search_test *t, const char *obs)
{
    search_hit *h;
    size_t n = search_parse_search(&h, obs, RL_SEARCH_HITS_MAX);
    int best = -1, score = 0;
    for (size_t i = 0; i < n; i++) {
        if (!mut_is_test_path(h[i].path) || !search_has_word(h[i].text, t->key))
            continue;
        const char *tx = h[i].text;
        size_t tl = strlen(tx);
        while (tl && (tx[tl - 1] == ' ' || tx[tl - 1] == '\t'))
            tl--;
        int sc = 1;
        if (search_line_defines(tx, t->key) || strstr(tx, "START_TEST"))
            sc = 3;
        else if (tl && (tx[tl - 1] == ';' || tx[tl - 1] == ','))
            sc = 0;
        if (sc > score) {
            score = sc;
            best = (int)i;
        }
    }
    if (best >= 0) {
        int f = file_add(s, h[best].path);
        if (f >= 0) {
            t->file = f;
            t->line = h[best].line;
            t->located = 1;
        }
    }
    search_hits_free(h, n);
}

static void on_read_test(search *s, int ti, const char *obs)
{
    /* ti >= 0: a test; ti < 0: helper -ti-1 */
    int f = ti >= 0 ? s->tests[ti].file : s->helpers[-ti - 1].file;
    if (f < 0)
        return;
    if (search_parse_read(&s->files[f], obs) < 0)
        return;
    if (ti >= 0)
        body_refs(&s->files[f], s->tests[ti].line, &s->tests[ti].refs, &s->tests[ti].nrefs);
    else
        body_refs(&s->files[f], s->helpers[-ti - 1].line, &s->helpers[-ti - 1].refs,
                  &s->helpers[-ti - 1].nrefs);
}

static void on_find_name(search *s, const search_name *nm, const char *obs)
{
    search_hit *h;
    size_t n = search_parse_search(&h, obs, RL_SEARCH_HITS_MAX);
    for (size_t i = 0; i < n; i++) {
        if (!search_line_defines(h[i].text, nm->name))
            continue;
        if (mut_is_test_path(h[i].path)) {
            if (s->nhelpers >= RL_SEARCH_TESTS_MAX)
                continue;
            int f = file_add(s, h[i].path);
            if (f < 0)
                continue;
            search_helper *hp = &s->helpers[s->nhelpers++];
            memset(hp, 0, sizeof *hp);
            name_copy(hp->name, nm->name);
            hp->file = f;
            hp->line = h[i].line;
            continue;
        }
        if (mut_lang_of_path(h[i].path) == MUT_LANG_NONE)
            continue;
        int f = file_add(s, h[i].path);
        if (f >= 0)
            s->files[f].wanted = 1;
    }
    search_hits_free(h, n);
}

/* Keep when strictly fewer tests fail and none that passed fails now. */
static int improved(const search_result *best, const search_result *r)
{
    if (!r->parsed || !r->ran)
        return 0;
    if (!best->ran)
        return 1;
    if (r->failed >= best->failed || r->passed + r->failed < best->passed + best->failed)
        return 0;
    for (size_t i = 0; i < r->nfail; i++)
        if (!search_result_has(best, r->fail[i].name) && !best->cut)
            return 0;
    return 1;
}

static int all_pass(const search_result *best, const search_result *r)
{
    return r->parsed && r->ran && r->failed == 0 && r->passed > 0 &&
           (!best->parsed || r->passed >= best->passed);
}

static void names_list(char *out, size_t n, const search_result *r, size_t max)
{
    out[0] = 0;
    for (size_t i = 0; i < r->nfail && i < max; i++) {
        size_t k = strlen(out);
        snprintf(out + k, n - k, "%s%s", i ? ", " : "", r->fail[i].name);
    }
    if (r->nfail > max) {
        size_t k = strlen(out);
        snprintf(out + k, n - k, ", ...");
    }
}

/* Identity of a result's failing set (order-free). */
static uint64_t result_sig(const search_result *r)
{
    uint64_t h = (uint64_t)r->failed * 0x9e3779b97f4a7c15ULL;
    for (size_t i = 0; i < r->nfail; i++)
        h ^= search_hash(r->fail[i].name, strlen(r->fail[i].name), 7);
    return h;
}

static int dead_end(const search *s, const search_result *from, const search_result *to)
{
    uint64_t a = result_sig(from), b = result_sig(to);
    for (size_t i = 0; i < s->ndead; i++)
        if (s->dead_from[i] == a && s->dead_to[i] == b)
            return 1;
    return 0;
}

static void revert_push(search *s, const search_cand *c)
{
    if (s->nrevert > RL_SEARCH_KEEP_MAX || cand_copy(&s->revert[s->nrevert], c) < 0) {
        s->files[c->file].stale = 1; /* cannot undo it: read the truth */
        return;
    }
    s->nrevert++;
}

/* A test counts as fixed once the best state passes it: the analysis
 * then follows only what still fails. */
static void tests_mark_fixed(search *s)
{
    if (s->best.cut)
        return;
    for (size_t i = 0; i < s->ntests; i++)
        s->tests[i].fixed = !search_result_has(&s->best, s->tests[i].name);
}

/* An attempt that made a failing test pass (even if it broke others or
 * left the count unchanged) touched code on the failure's path. */
static void hot_add(search *s, const search_result *r)
{
    if (!r->parsed || !r->ran || r->cut || s->best.cut || s->nhot >= RL_SEARCH_HOT_MAX)
        return;
    int fixed_one = 0;
    for (size_t i = 0; i < s->best.nfail && !fixed_one; i++)
        fixed_one = !search_result_has(r, s->best.fail[i].name);
    if (!fixed_one || !(s->hot_path[s->nhot] = strdup(s->files[s->applied.file].path)))
        return;
    s->hot_line[s->nhot++] = s->applied.line;
    s->dirty = 1;
}

/* The innermost kept edit led nowhere for RL_SEARCH_BACKTRACK_TRIES
 * attempts: undo it, go back to the result before it, and make the
 * attempts tried on top of it available again (they may work without
 * it). The kept edit itself stays tried. */
static void backtrack(search *s)
{
    int k = s->nkept - 1;
    char note[200];
    snprintf(note, sizeof note, " Nothing helped on top of %.120s; I undo it and go back.",
             s->kept_stack[k].cand.desc);
    size_t l = strlen(s->last_note);
    snprintf(s->last_note + l, sizeof s->last_note - l, "%s", note);
    revert_push(s, &s->kept_stack[k].cand);
    if (s->ndead < RL_SEARCH_HOT_MAX) {
        s->dead_from[s->ndead] = result_sig(&s->kept_stack[k].prev);
        s->dead_to[s->ndead++] = result_sig(&s->best);
    }
    search_cand_dispose(&s->kept_stack[k].cand);
    search_result_dispose(&s->best);
    s->best = s->kept_stack[k].prev;
    if (s->kept_stack[k].tried_mark < s->ntried)
        s->ntried = s->kept_stack[k].tried_mark;
    s->nkept--;
    s->since_keep = 0;
    tests_mark_fixed(s);
    hints_rebuild(s);
    s->dirty = 1;
}

static void on_run(search *s, const char *obs)
{
    search_result r;
    search_parse_tests(&r, obs);
    if (!s->have_best) {
        s->have_best = 1;
        s->best = r;
        tests_register(s, &s->best);
        hints_rebuild(s);
        if (all_pass(&r, &r))
            s->done = 1;
        s->dirty = 1;
        return;
    }
    if (!s->eval) {
        search_result_dispose(&r);
        return;
    }
    s->eval = 0;
    char fl[300];
    if (!s->applied_ok) {
        snprintf(s->last_note, sizeof s->last_note, "The edit (%s) did not apply.", s->applied.desc);
        search_result_dispose(&r);
        return;
    }
    if (all_pass(&s->best, &r)) {
        snprintf(s->last_note, sizeof s->last_note, "After %s all %ld tests pass.", s->applied.desc,
                 r.passed);
        search_result_dispose(&s->best);
        s->best = r;
        s->done = 1;
        s->kept++;
        return;
    }
    if (improved(&s->best, &r) && dead_end(s, &s->best, &r)) {
        snprintf(s->last_note, sizeof s->last_note,
                 "%s leads to the same failures as an edit I already abandoned; I revert it.", s->applied.desc);
        revert_push(s, &s->applied);
        search_result_dispose(&r);
        if (s->have_partial) {
            if (++s->since_partial >= RL_SEARCH_LOOKAHEAD)
                s->need_commit = 1;
        } else if (s->nkept && ++s->since_keep >= RL_SEARCH_BACKTRACK_TRIES) {
            backtrack(s);
        }
        return;
    }
    if (improved(&s->best, &r)) {
        names_list(fl, sizeof fl, &r, 4);
        int better = !s->have_partial || r.failed < s->partial_res.failed;
        snprintf(s->last_note, sizeof s->last_note,
                 "%s helped: %ld failing before, %ld now (%s). %s", s->applied.desc, s->best.failed, r.failed, fl,
                 better ? "I undo it for now and try a few more candidates before I build on the best of them."
                        : "An earlier candidate did better; I revert it.");
        hot_add(s, &r);
        revert_push(s, &s->applied);
        if (s->npartial_keys <= RL_SEARCH_LOOKAHEAD)
            s->partial_keys[s->npartial_keys++] = s->applied.key;
        if (better) {
            search_cand_dispose(&s->partial);
            search_result_dispose(&s->partial_res);
            if (cand_copy(&s->partial, &s->applied) == 0) {
                s->partial_res = r;
                s->have_partial = 1;
            } else {
                search_result_dispose(&r);
            }
        } else {
            search_result_dispose(&r);
        }
        if (s->have_partial && ++s->since_partial >= RL_SEARCH_LOOKAHEAD)
            s->need_commit = 1;
        return;
    }
    hot_add(s, &r);
    if (!r.parsed || !r.ran)
        snprintf(s->last_note, sizeof s->last_note, "%s broke the build or the run; I revert it.",
                 s->applied.desc);
    else if (r.failed < s->best.failed)
        snprintf(s->last_note, sizeof s->last_note,
                 "%s fixed some tests but broke others (%ld failing); I revert it.", s->applied.desc,
                 r.failed);
    else
        snprintf(s->last_note, sizeof s->last_note, "%s did not help (%ld failing); I revert it.",
                 s->applied.desc, r.failed);
    revert_push(s, &s->applied);
    search_result_dispose(&r);
    if (s->have_partial) {
        if (++s->since_partial >= RL_SEARCH_LOOKAHEAD)
            s->need_commit = 1;
    } else if (s->nkept && ++s->since_keep >= RL_SEARCH_BACKTRACK_TRIES) {
        backtrack(s);
    }
}

/* Replaces the unique old block with the new one in the file we track. */
static void local_edit(search *s, int f, const char *from, const char *to)
{
    search_file *fl = &s->files[f];
    size_t len;
    char *t = search_file_text(fl, &len);
    const char *p = t ? strstr(t, from) : NULL;
    if (!p) {
        fl->stale = 1;
        free(t);
        return;
    }
    size_t fl_ = strlen(from), tl = strlen(to);
    char *n = malloc(len - fl_ + tl + 1);
    if (n) {
        size_t a = (size_t)(p - t);
        memcpy(n, t, a);
        memcpy(n + a, to, tl);
        memcpy(n + a + tl, p + fl_, len - a - fl_ + 1);
        if (search_file_set_text(fl, n, len - fl_ + tl) < 0)
            fl->stale = 1;
    } else {
        fl->stale = 1;
    }
    free(n);
    free(t);
    s->dirty = 1;
}

static int edited(const char *obs) { return !strncmp(obs, "edited ", 7); }

static void on_response(search *s, const pend *p, const char *obs)
{
    switch (p->kind) {
    case K_RUN:
        on_run(s, obs);
        break;
    case K_FIND_TEST:
        if (p->ref >= 0 && (size_t)p->ref < s->ntests)
            on_find_test(s, &s->tests[p->ref], obs);
        break;
    case K_READ_TEST:
        if (p->ref >= 0 ? (size_t)p->ref < s->ntests : (size_t)(-p->ref - 1) < s->nhelpers)
            on_read_test(s, p->ref, obs);
        break;
    case K_FIND_NAME:
        if (p->ref >= 0 && (size_t)p->ref < s->nnames)
            on_find_name(s, &s->names[p->ref], obs);
        break;
    case K_READ_FILE:
        if (p->ref >= 0 && p->ref < RL_SEARCH_FILES_MAX && s->files[p->ref].path) {
            search_file *f = &s->files[p->ref];
            if (search_parse_read(f, obs) == 0 && search_file_complete(f))
                f->stale = 0;
            s->dirty = 1;
        }
        break;
    case K_EDIT:
        if (edited(obs)) {
            s->applied_ok = 1;
            local_edit(s, s->applied.file, s->applied.old_block, s->applied.new_block);
            if (!s->verify)
                s->blind_ok = 1;
        } else {
            s->applied_ok = 0;
            s->files[s->applied.file].stale = 1;
            s->dirty = 1;
        }
        break;
    case K_REVERT:
    case K_REAPPLY:
        /* our copy was changed when the call was sent */
        if (!edited(obs) && p->ref >= 0 && p->ref < RL_SEARCH_FILES_MAX)
            s->files[p->ref].stale = 1;
        s->dirty = 1;
        break;
    case K_SUBMIT:
        break;
    }
}

/* ---- replies ------------------------------------------------------------------ */

typedef struct reply {
    chat_call calls[RL_TC_CALLS_MAX];
    char *args[RL_TC_CALLS_MAX];
    int n;
    buf_t think;
} reply;

static void think(reply *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void think(reply *r, const char *fmt, ...)
{
    if (r->think.len)
        buf_putc(&r->think, ' ');
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(&r->think, fmt, ap);
    va_end(ap);
}

/* Adds a call (args: cJSON object, consumed) remembering its purpose. */
static int call(search *s, reply *r, const char *tool, cJSON *args, call_kind kind, int ref)
{
    if (r->n >= RL_TC_CALLS_MAX - 1 || !args) {
        cJSON_Delete(args);
        return -1;
    }
    char *a = cJSON_PrintUnformatted(args);
    cJSON_Delete(args);
    if (!a)
        return -1;
    r->args[r->n] = a;
    r->calls[r->n] = (chat_call){"call", (char *)tool, a};
    s->pend[r->n] = (pend){kind, ref};
    r->n++;
    s->npend = r->n;
    return 0;
}

static cJSON *obj_path(const char *path)
{
    cJSON *o = cJSON_CreateObject();
    if (o && path)
        cJSON_AddStringToObject(o, "path", path);
    return o;
}

static void call_read(search *s, reply *r, int f, size_t from, size_t to, call_kind kind, int ref)
{
    cJSON *o = obj_path(s->files[f].path);
    if (o && from) {
        cJSON_AddNumberToObject(o, "start_line", (double)from);
        cJSON_AddNumberToObject(o, "end_line", (double)to);
    }
    call(s, r, "read_file", o, kind, ref);
}

static void call_search(search *s, reply *r, const char *pattern, call_kind kind, int ref)
{
    cJSON *o = cJSON_CreateObject();
    if (o)
        cJSON_AddStringToObject(o, "pattern", pattern);
    call(s, r, "search", o, kind, ref);
}

static void call_edit(search *s, reply *r, int f, const char *old, const char *new, call_kind kind)
{
    cJSON *o = obj_path(s->files[f].path);
    if (o) {
        cJSON_AddStringToObject(o, "old_string", old);
        cJSON_AddStringToObject(o, "new_string", new);
    }
    call(s, r, "edit_file", o, kind, f);
}

/* ---- deciding ------------------------------------------------------------------ */

/* Failing tests not yet searched: search them (a few per message). */
static int step_find_tests(search *s, reply *r)
{
    int n = 0;
    char list[400] = "";
    for (size_t i = 0; i < s->ntests && n < RL_SEARCH_CALLS_PER_TURN; i++) {
        search_test *t = &s->tests[i];
        if (t->searched || !t->key[0])
            continue;
        t->searched = 1;
        call_search(s, r, t->key, K_FIND_TEST, (int)i);
        size_t k = strlen(list);
        snprintf(list + k, sizeof list - k, "%s%.60s", n ? ", " : "", t->key);
        n++;
    }
    if (n)
        think(r, "I look for where %s %s defined.", list, n > 1 ? "are" : "is");
    return n;
}

static int step_read_tests(search *s, reply *r)
{
    int n = 0;
    for (size_t i = 0; i < s->ntests && n < 4; i++) {
        search_test *t = &s->tests[i];
        if (!t->located || t->read)
            continue;
        t->read = 1;
        search_file *f = &s->files[t->file];
        /* Already on screen from an earlier read: no call needed. */
        if (f->line && (size_t)t->line <= f->n && f->line[t->line - 1] &&
            body_end(f, t->line) > t->line) {
            body_refs(f, t->line, &t->refs, &t->nrefs);
            continue;
        }
        if (!n)
            think(r, "I read the failing test%s to see what %s.", s->ntests > 1 ? "s" : "",
                  s->ntests > 1 ? "they exercise" : "it exercises");
        call_read(s, r, t->file, (size_t)t->line, (size_t)t->line + RL_SEARCH_TEST_LINES - 1, K_READ_TEST,
                  (int)i);
        n++;
    }
    for (size_t i = 0; i < s->nhelpers && n < 4; i++) {
        search_helper *h = &s->helpers[i];
        if (h->read)
            continue;
        h->read = 1;
        search_file *f = &s->files[h->file];
        if (f->line && (size_t)h->line <= f->n && f->line[h->line - 1] && body_end(f, h->line) > h->line) {
            body_refs(f, h->line, &h->refs, &h->nrefs);
            continue;
        }
        think(r, "%s is a helper of the tests; I read it.", h->name);
        call_read(s, r, h->file, (size_t)h->line, (size_t)h->line + RL_SEARCH_TEST_LINES - 1, K_READ_TEST,
                  -(int)i - 1);
        n++;
    }
    return n;
}

/* Source files that hold implicated definitions, or went stale: read them
 * (the whole file, or the part an earlier read did not show). */
static int step_read_files(search *s, reply *r)
{
    int n = 0;
    int order[RL_SEARCH_FILES_MAX], no = 0;
    for (int f = 0; f < RL_SEARCH_FILES_MAX; f++)
        if (s->files[f].path && !s->files[f].is_test && (s->files[f].wanted || s->files[f].stale))
            order[no++] = f;
    for (int i = 0; i < no && n < 4; i++) {
        int f = order[i];
        search_file *fl = &s->files[f];
        if (s->read_tries[f] >= 2)
            continue;
        size_t a, b;
        if (!fl->line && !fl->stale) {
            s->read_tries[f]++;
            if (!n)
                think(r, "I read %s, where the code the %s is defined.", fl->path,
                      s->verify ? "tests exercise" : "problem is about");
            call_read(s, r, f, 0, 0, K_READ_FILE, f);
            n++;
        } else if (fl->stale) {
            s->read_tries[f]++;
            think(r, "I read %s again to see its current text.", fl->path);
            call_read(s, r, f, 0, 0, K_READ_FILE, f);
            n++;
        } else if (search_file_gap(fl, &a, &b)) {
            s->read_tries[f]++;
            think(r, "Part of %s was cut from the output; I read lines %zu-%zu.", fl->path, a, b);
            call_read(s, r, f, a, b, K_READ_FILE, f);
            n++;
        }
    }
    return n;
}

static int name_index(search *s, const char *name)
{
    for (size_t i = 0; i < s->nnames; i++)
        if (!strcmp(s->names[i].name, name))
            return (int)i;
    if (s->nnames >= RL_SEARCH_NAMES_MAX)
        return -1;
    name_copy(s->names[s->nnames].name, name);
    s->names[s->nnames].searched = 0;
    return (int)s->nnames++;
}

/* Names the failure implicates that no file read so far defines. */
static int step_find_names(search *s, reply *r, int max_level)
{
    want w[RL_SEARCH_NAMES_MAX];
    size_t nw = analyze(s, w, RL_SEARCH_NAMES_MAX);
    qsort(w, nw, sizeof *w, want_cmp);
    int n = 0;
    char list[400] = "";
    int lvl0 = 1;
    for (size_t i = 0; i < nw && n < RL_SEARCH_CALLS_PER_TURN && s->name_searches < RL_SEARCH_NAME_SEARCHES_MAX;
         i++) {
        if (w[i].level > max_level)
            continue;
        int k = name_index(s, w[i].name);
        if (k < 0 || s->names[k].searched)
            continue;
        s->names[k].searched = 1;
        call_search(s, r, w[i].name, K_FIND_NAME, k);
        s->name_searches++;
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%.60s", n ? ", " : "", w[i].name);
        lvl0 &= w[i].level == 0;
        n++;
    }
    if (n) {
        if (!s->verify)
            think(r, "The problem statement mentions %s; I look for the definition%s.", list, n > 1 ? "s" : "");
        else if (lvl0)
            think(r, "The failing tests call %s; I look for the definition%s.", list, n > 1 ? "s" : "");
        else
            think(r, "The implicated functions call %s, defined elsewhere; I look for %s.", list,
                  n > 1 ? "them" : "it");
    }
    return n;
}

static void rank(search *s)
{
    want w[8];
    analyze(s, w, 8);
    for (size_t i = 0; i < s->ncands; i++)
        search_cand_dispose(&s->cands[i]);
    s->ncands = 0;
    search_cmp *cmps = NULL;
    size_t ncmps = 0, ccap = 0;
    for (int f = 0; f < RL_SEARCH_FILES_MAX; f++) {
        search_file *fl = &s->files[f];
        size_t len;
        char *t = fl->path && !fl->is_test ? search_file_text(fl, &len) : NULL;
        if (t)
            ncmps = search_find_cmps(&cmps, ncmps, &ccap, RL_SEARCH_CMPS_MAX, t, len, fl->lang, f);
        free(t);
    }
    long got[RL_SEARCH_TESTS_MAX], want[RL_SEARCH_TESTS_MAX];
    size_t npairs = number_pairs(&s->best, got, want, RL_SEARCH_TESTS_MAX);
    search_rank_in in = {buf_str(&s->hints), s->problem, s->seed, (const char *const *)s->loc_path,
                     s->loc_line, s->nloc, (const char *const *)s->hot_path, s->hot_line, s->nhot,
                     cmps, ncmps, off_by_one(&s->best), s->temperature, got, want, npairs};
    for (int f = 0; f < RL_SEARCH_FILES_MAX; f++) {
        search_file *fl = &s->files[f];
        if (!fl->path || fl->is_test || fl->stale || !search_file_complete(fl))
            continue;
        s->ncands = search_cands_for_file(&s->cands, s->ncands, &s->cap, RL_SEARCH_CANDS_MAX, f, fl, s->defs[f],
                                      s->ndefs[f], &in);
    }
    free(cmps);
    search_cands_sort(s->cands, s->ncands);
    s->dirty = 0;
}

static const search_cand *next_cand(search *s)
{
    if (s->dirty)
        rank(s);
    for (size_t i = 0; i < s->ncands; i++)
        if (!tried_has(s, s->cands[i].key) && !s->files[s->cands[i].file].stale)
            return &s->cands[i];
    return NULL;
}

static void flush_revert(search *s, reply *r)
{
    for (int i = 0; i < s->nrevert; i++) {
        search_cand *c = &s->revert[i];
        call_edit(s, r, c->file, c->new_block, c->old_block, K_REVERT);
        /* The next candidate is ranked on the reverted text: apply the
         * revert to our copy now; a failed revert marks the file stale. */
        local_edit(s, c->file, c->new_block, c->old_block);
        search_cand_dispose(c);
    }
    s->nrevert = 0;
}

static void submit(search *s, reply *r)
{
    call(s, r, "submit", cJSON_CreateObject(), K_SUBMIT, 0);
}

static void note_flush(search *s, reply *r)
{
    if (s->last_note[0]) {
        think(r, "%s", s->last_note);
        s->last_note[0] = 0;
    }
}

/* Builds on the best partial improvement: it is applied again and kept
 * (the result it gave becomes the one to beat). */
static void commit_partial(search *s, reply *r)
{
    if (!s->have_partial)
        return;
    search_cand *p = &s->partial;
    call_edit(s, r, p->file, p->old_block, p->new_block, K_REAPPLY);
    local_edit(s, p->file, p->old_block, p->new_block);
    think(r, "The best of them was %s (%ld failing); I apply it again and build on it.", p->desc,
          s->partial_res.failed);
    tried_add(s, p->rkey);
    for (int i = 0; i < s->npartial_keys; i++)
        if (s->partial_keys[i] != p->key)
            tried_del(s, s->partial_keys[i]);
    s->npartial_keys = 0;
    if (s->nkept < RL_SEARCH_KEEP_MAX && cand_copy(&s->kept_stack[s->nkept].cand, p) == 0) {
        s->kept_stack[s->nkept].prev = s->best;
        s->kept_stack[s->nkept].tried_mark = s->ntried;
        s->nkept++;
    } else {
        search_result_dispose(&s->best);
    }
    s->best = s->partial_res;
    memset(&s->partial_res, 0, sizeof s->partial_res);
    search_cand_dispose(&s->partial);
    s->have_partial = s->since_partial = s->need_commit = 0;
    s->kept++;
    s->since_keep = 0;
    tests_mark_fixed(s);
    hints_rebuild(s);
    s->dirty = 1;
}

static void decide_verify(search *s, reply *r, int turn)
{
    note_flush(s, r);
    flush_revert(s, r);
    if (s->need_commit)
        commit_partial(s, r);
    if (s->done) {
        think(r, "All tests pass; I submit.");
        submit(s, r);
        return;
    }
    if (!s->have_best) {
        think(r, "I run the tests first to see which fail and how.");
        call(s, r, "run_tests", cJSON_CreateObject(), K_RUN, 0);
        return;
    }
    if (turn >= RL_SEARCH_TURNS_MAX - 1 || s->tries >= RL_SEARCH_TRIES_MAX) {
        commit_partial(s, r);
        think(r, "I have tried %d candidate repairs without making every test pass; I stop here and submit "
                 "(%ld test%s still fail).", s->tries, s->best.failed, s->best.failed == 1 ? "" : "s");
        submit(s, r);
        return;
    }
    if (turn == 1 && s->best.parsed) {
        char first[160];
        first_line(first, sizeof first, s->best.nfail ? s->best.fail[0].msg : "");
        think(r, "%ld test%s fail%s", s->best.failed, s->best.failed == 1 ? "" : "s",
              s->best.failed == 1 ? "s" : "");
        if (s->best.nfail)
            think(r, "(first: %s: %s).", s->best.fail[0].name, first);
        else
            think(r, "and the output does not name them.");
    }
    if (step_find_tests(s, r) || step_read_tests(s, r) || step_read_files(s, r) ||
        step_find_names(s, r, 0) || step_read_files(s, r) || step_find_names(s, r, 1) ||
        step_read_files(s, r))
        return;
    /* An attempt needs its edit and a test run in this message. */
    if (r->n + 2 > RL_TC_CALLS_MAX - 1)
        return;
    const search_cand *c = next_cand(s);
    if (!c && s->have_partial) {
        commit_partial(s, r);
        c = next_cand(s);
    }
    if (!c) {
        think(r, "I have no candidate repair left to try; I submit (%ld test%s still fail).", s->best.failed,
              s->best.failed == 1 ? "" : "s");
        submit(s, r);
        return;
    }
    search_cand_dispose(&s->applied);
    if (cand_copy(&s->applied, c) < 0) {
        submit(s, r);
        return;
    }
    tried_add(s, c->key);
    s->tries++;
    s->eval = 1;
    s->applied_ok = 0;
    think(r, "Candidate %d: %s. I apply it and run the tests.", s->tries, c->desc);
    call_edit(s, r, c->file, c->old_block, c->new_block, K_EDIT);
    call(s, r, "run_tests", cJSON_CreateObject(), K_RUN, 0);
}

static void decide_blind(search *s, reply *r, int turn)
{
    if (s->blind_ok || turn >= RL_SEARCH_TURNS_MAX - 1 || s->blind_edits >= 3) {
        think(r, s->blind_ok ? "The edit is in place; I submit." : "I could not make an edit; I submit.");
        submit(s, r);
        return;
    }
    if (step_find_names(s, r, 0) || step_read_files(s, r))
        return;
    const search_cand *c = next_cand(s);
    if (!c) {
        think(r, "Nothing in the code I read looks like the defect; I submit.");
        submit(s, r);
        return;
    }
    search_cand_dispose(&s->applied);
    if (cand_copy(&s->applied, c) < 0) {
        submit(s, r);
        return;
    }
    tried_add(s, c->key);
    s->blind_edits++;
    think(r, "The most likely defect: %s. I fix it.", c->desc);
    call_edit(s, r, c->file, c->old_block, c->new_block, K_EDIT);
}

/* ---- the policy -------------------------------------------------------------- */

static int build_reply(pol_response *resp, const char *ctx, size_t len, reply *r, char *err)
{
    memset(resp, 0, sizeof *resp);
    int think_on = !scripted_think_off(ctx, len);
    chat_msg m = {0};
    m.role = CHAT_ASSISTANT;
    m.content = "";
    m.reasoning = think_on ? (char *)buf_str(&r->think) : NULL;
    m.calls = r->n ? r->calls : NULL;
    m.ncalls = (size_t)r->n;
    size_t n;
    char *text = tpl_assistant_text_as(&m, (tpl_kind)scripted_template(ctx, len), think_on, &n);
    if (!text)
        return rl_err(err, RL_ENOMEM, "policy search: out of memory");
    resp->text = text;
    resp->text_len = n;
    resp->finish = POL_FINISH_STOP;
    return 0;
}

static void start(search *s, const char *ctx, size_t len)
{
    state_clear(s);
    char *sys = search_system_prompt(ctx, len);
    s->verify = sys && search_prompt_wants_verify(sys);
    free(sys);
    s->problem = scripted_problem(ctx, len);
    hints_add(s, s->problem);
}

static int search_one(search *s, pol_response *resp, const pol_request *req, char *err)
{
    const char *ctx = req->context ? req->context : "";
    size_t len = req->context ? req->context_len : 0;
    int turn = (int)scripted_turn(ctx, len);
    if (turn == 0 || turn != s->turn) {
        /* A new episode, or a context this state did not follow: start
         * over from what the context shows. */
        start(s, ctx, len);
        s->turn = turn;
    } else if (s->npend) {
        char **obs;
        size_t n = search_last_responses(&obs, ctx, len);
        for (int i = 0; i < s->npend; i++) {
            /* A format error answers a whole message with one line: every
             * call of it counts as not done. */
            const char *o = (size_t)i < n && n == (size_t)s->npend ? obs[i] : "error: no response";
            on_response(s, &s->pend[i], o);
        }
        for (size_t i = 0; i < n; i++)
            free(obs[i]);
        free(obs);
    }
    s->npend = 0;
    reply r = {0};
    buf_init(&r.think, 8192);
    if (s->verify)
        decide_verify(s, &r, turn);
    else
        decide_blind(s, &r, turn);
    if (r.n == 0)
        submit(s, &r);
    int rc = build_reply(resp, ctx, len, &r, err);
    for (int i = 0; i < r.n; i++)
        free(r.args[i]);
    buf_dispose(&r.think);
    s->turn = turn + 1;
    return rc;
}

static int search_generate(policy *p, pol_response *resp, const pol_request *req, size_t n, char *err)
{
    for (size_t i = 0; i < n; i++) {
        int rc = search_one(p->impl, &resp[i], &req[i], err);
        if (rc < 0) {
            for (size_t j = 0; j < i; j++)
                pol_response_dispose(&resp[j]);
            return rc;
        }
    }
    return 0;
}

static void search_free(policy *p)
{
    search *s = p->impl;
    if (s) {
        state_clear(s);
        buf_dispose(&s->hints);
    }
    free(s);
}

static const pol_vtable SEARCH_VT = {search_generate, search_free};

int search_open(policy **out, const pol_env *env, char *err)
{
    *out = NULL;
    policy *p = calloc(1, sizeof *p);
    search *s = calloc(1, sizeof *s);
    if (!p || !s) {
        free(p);
        free(s);
        return rl_err(err, RL_ENOMEM, "policy search: out of memory");
    }
    s->seed = env ? env->seed : 0;
    s->temperature = env && env->temperature > 0 ? env->temperature : 0;
    buf_init(&s->hints, RL_SEARCH_OBS_MAX);
    p->vt = &SEARCH_VT;
    p->impl = s;
    snprintf(p->name, sizeof p->name, "search");
    *out = p;
    return 0;
}
