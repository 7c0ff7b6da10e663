/* cmd_gen.c - `harness gen`: synthesize validated bugs by mutation.
 *
 * In the spirit of SWE-smith: every non-test source file of a repository
 * is lexed for mutation sites (corpus/mutate.h) of the kinds --mutations
 * selects (operator mutations, function-level rewrites, or both, the
 * default); candidates are tried in
 * the seed's order, each validated in a sandboxed work tree: the tests
 * must run, at least one must fail at the base, two base runs must agree
 * (three for C: the third built under ASan and UBSan),
 * and the gold patch (the reverse diff) must make every test pass.
 * Candidates whose mutated source was already seen, and candidates whose
 * bug is that of a task already in tasks/ (another seed's), are dropped
 * before any test runs. Test command, format and protected paths come from the
 * repository's hand-written tasks; the split holds out every repository
 * whose hand-written tasks are all held out, and a fixed share (1 in
 * RL_GEN_HELDOUT_EVERY by id hash) of the others.
 */
#include "harness/cli.h"

#include "common/buf.h"
#include "common/arg.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/str.h"
#include "common/limits.h"
#include "common/vec.h"
#include "harness/cliopt.h"
#include "harness/pool.h"
#include "harness/testrun.h"
#include "harness/validate.h"
#include "harness/workspace.h"
#include "corpus/diff.h"
#include "corpus/mutate.h"
#include "corpus/task.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct src_file {
    char *path; /* relative to the repo */
    char *text;
    size_t len;
    mut_list sites;
} src_file;

typedef struct cand {
    size_t file, site;
    char *bug, *fix; /* diffs */
} cand;

typedef struct gen_ctx {
    const char *repo;
    const char *outdir;    /* where tasks (and the workers' test lists) go */
    const task *profile;   /* a hand-written task of the repo */
    const task_set *known; /* the tasks already there: their bugs are not made again */
    src_file *files;
    size_t nfiles, files_alloc;
    cand *cands;
    size_t ncands, cands_alloc;
    char **results;        /* per candidate, from the workers */
    uint64_t seed;
    unsigned kinds;        /* mutation kinds, a MUT_MASK_* set */
    cli_progress prog;
    size_t accepted, tried;
    int log_fd;            /* --log: one line per validated candidate, or -1 */
} gen_ctx;

static uint64_t fnv(const char *s, size_t n, uint64_t h)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

static int collect(gen_ctx *g, const char *root, const char *rel, int depth, char *err)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s%s%s", root, rel[0] ? "/" : "", rel);
    char **names;
    size_t n;
    int rc = fs_list_dir(&names, &n, dir, err); /* sorted: the same seed gives the same tasks */
    for (size_t i = 0; i < n; i++) {
        char r2[1024], full[4096];
        snprintf(r2, sizeof r2, "%s%s%s", rel, rel[0] ? "/" : "", names[i]);
        snprintf(full, sizeof full, "%s/%s", root, r2);
        struct stat st;
        if (!rc && lstat(full, &st) == 0) {
            if (S_ISDIR(st.st_mode) && depth < 4 && strcmp(names[i], "build"))
                rc = collect(g, root, r2, depth + 1, err);
            else if (S_ISREG(st.st_mode) && mut_lang_of_path(r2) != MUT_LANG_NONE && !mut_is_test_path(r2)) {
                src_file f = {0};
                f.path = strdup(r2);
                if ((rc = fs_read_file(&f.text, &f.len, full, RL_MUT_SRC_MAX, err)) == 0) {
                    rc = mut_enumerate_kinds(&f.sites, f.text, f.len, mut_lang_of_path(r2),
                                             g->seed ^ fnv(r2, strlen(r2), 1469598103934665603ULL),
                                             g->kinds, err);
                    int grc = VEC_GROW(g->files, g->files_alloc, g->nfiles + 1, RL_GEN_FILES_MAX);
                    if (grc < 0) {
                        rc = grc == RL_ELIMIT
                                 ? rl_err(err, grc, "%s: more than %d source files", root, RL_GEN_FILES_MAX)
                                 : rl_err(err, grc, "%s: out of memory", root);
                        free(f.path);
                        free(f.text);
                        mut_list_dispose(&f.sites);
                    } else {
                        g->files[g->nfiles++] = f;
                    }
                }
            }
        }
    }
    fs_names_free(names, n);
    return rc;
}

/* Is bug the bug of a task of the repository already there? */
static int known_bug(const gen_ctx *g, const char *bug)
{
    for (size_t i = 0; g->known && i < g->known->n; i++) {
        const task *t = g->known->v[i];
        if (t->bug && !strcmp(t->repo, g->repo) && !strcmp(t->bug, bug))
            return 1;
    }
    return 0;
}

/* Candidates round-robin over files, so the first tasks are spread over
 * the repository; identical mutated sources are dropped. */
static int make_candidates(gen_ctx *g, char *err)
{
    size_t most = 0;
    for (size_t f = 0; f < g->nfiles; f++)
        most = g->files[f].sites.n > most ? g->files[f].sites.n : most;
    uint64_t *seen = NULL;
    size_t nseen = 0, seen_alloc = 0;
    int rc = 0;
    for (size_t k = 0; k < most && g->ncands < RL_GEN_MAX_CANDIDATES && rc == 0; k++) {
        for (size_t f = 0; f < g->nfiles && g->ncands < RL_GEN_MAX_CANDIDATES && rc == 0; f++) {
            src_file *sf = &g->files[f];
            if (k >= sf->sites.n)
                continue;
            char *mut;
            size_t ml;
            if (mut_apply(&mut, &ml, sf->text, sf->len, &sf->sites.v[k], err) < 0)
                continue;
            uint64_t h = fnv(mut, ml, fnv(sf->path, strlen(sf->path), 1469598103934665603ULL));
            int dup = ml == sf->len && !memcmp(mut, sf->text, ml);
            for (size_t i = 0; i < nseen && !dup; i++)
                dup = seen[i] == h;
            if (dup) {
                free(mut);
                continue;
            }
            if ((rc = VEC_GROW(seen, seen_alloc, nseen + 1, RL_GEN_SEEN_MAX)) < 0) {
                free(mut);
                rc = rc == RL_ELIMIT ? rl_err(err, rc, "%s: more than %d distinct mutated sources", g->repo,
                                              (int)RL_GEN_SEEN_MAX)
                                     : rl_err(err, rc, "%s: out of memory", g->repo);
                break;
            }
            seen[nseen++] = h;
            buf_t bug, fix;
            buf_init(&bug, RL_TASK_DIFF_MAX);
            buf_init(&fix, RL_TASK_DIFF_MAX);
            int drc = diff_unified(&bug, sf->path, sf->text, sf->len, mut, ml, err);
            if (drc == 0)
                drc = diff_unified(&fix, sf->path, mut, ml, sf->text, sf->len, err);
            free(mut);
            if (drc == 0 && bug.len &&
                (rc = VEC_GROW(g->cands, g->cands_alloc, g->ncands + 1, RL_GEN_MAX_CANDIDATES)) < 0)
                rc = rl_err(err, rc, "%s: out of memory", g->repo); /* the loops stop at the cap */
            if (drc < 0 || !bug.len || rc < 0 || known_bug(g, buf_str(&bug))) {
                buf_dispose(&bug);
                buf_dispose(&fix);
                continue;
            }
            g->cands[g->ncands++] = (cand){f, k, buf_detach(&bug, NULL), buf_detach(&fix, NULL)};
        }
    }
    free(seen);
    return rc;
}

/* A task for a candidate, its tests still to be filled in. */
static task *cand_task(const gen_ctx *g, size_t i)
{
    const cand *c = &g->cands[i];
    const task *p = g->profile;
    task *t = calloc(1, sizeof *t);
    char id[128];
    snprintf(id, sizeof id, "%s__gen%llu_%04zu", g->repo, (unsigned long long)g->seed, i);
    t->instance_id = strdup(id);
    t->repo = strdup(g->repo);
    t->bug = c->bug;
    t->patch = c->fix;
    t->test_cmd = p->test_cmd;
    t->test_format = p->test_format;
    t->test_result_file = p->test_result_file;
    t->timeout_s = p->timeout_s;
    return t;
}

/* Separators of a worker's result line: test ids hold spaces, commas and
 * '|' (testhelp descriptions, pytest parameters) but never control
 * characters other than these two. */
#define ID_SEP "\x1f"
#define LIST_SEP "\x1e"

/* Where a worker leaves the test lists of candidate idx for the parent. */
static void ids_path(char *out, size_t n, const gen_ctx *g, size_t idx)
{
    snprintf(out, n, "%.4000s/.gen-%zu.ids", g->outdir, idx);
}

/* Keeps the names the run reported exactly once: a name reported more
 * often (a unittest method name in two classes, a check in a loop) cannot
 * be a listed test (the scorer fails a run that reports one twice). */
static void once_only(const tr_report *r, const char **names, size_t *n)
{
    size_t k = 0;
    for (size_t i = 0; names && i < *n; i++) {
        const tr_case *c = tr_find(r, names[i]);
        if (c && c->count == 1)
            names[k++] = names[i];
    }
    *n = k;
}

/* Appends a failure message for a problem statement: at most
 * RL_GEN_PROBLEM_MSG_MAX bytes and RL_GEN_PROBLEM_MSG_LINES lines, control
 * characters other than newlines and tabs (our separators among them)
 * shown as '?'. */
static void put_message(buf_t *b, const char *msg)
{
    size_t n = 0;
    int lines = 1;
    for (const char *p = msg; *p && n < RL_GEN_PROBLEM_MSG_MAX; p++, n++) {
        unsigned char c = (unsigned char)*p;
        if (c == '\n' && ++lines > RL_GEN_PROBLEM_MSG_LINES)
            break;
        buf_putc(b, c < 0x20 && c != '\n' && c != '\t' ? '?' : (char)c);
    }
    if (msg[n] && n >= RL_GEN_PROBLEM_MSG_MAX)
        buf_puts(b, " ...");
}

/* In a worker: validate candidate idx; its lists go to a file as
 * "FAILED\x1ePASSED\x1eMESSAGES" (ids joined by \x1f; MESSAGES alternates
 * a failing test's id and what the base run reported for it), the result
 * line is "ok ids" or "no why". */
static void gen_run(void *user, size_t idx, int slot, buf_t *res)
{
    gen_ctx *g = user;
    double t0 = clk_ms(), base_ms = 0;
    val_result v = {0};
    buf_t line;
    buf_init(&line, 4096);
    buf_t *out = &line;
    task *t = cand_task(g, idx);
    char err[RL_ERR_MAX];
    ws_opts wo;
    ws_opts_default(&wo);
    ws_tree *ws;
    if (ws_open_task(&ws, &wo, t, 768 + slot, err) < 0) {
        buf_printf(out, "no bug does not apply: %s", err);
        goto done;
    }
    testrun r[3];
    memset(r, 0, sizeof r);
    testrun_limits vary = {.variant = 1}; /* the second run under MALLOC_PERTURB_ and a larger environment */
    testrun_limits san = {.sanitize = 1}; /* a C repository's third: built under ASan and UBSan */
    int nr = val_sanitized(t) ? 3 : 2;
    int ok = testrun_run(&r[0], t, ws_path(ws), NULL, err) == 0;
    ok = ok && testrun_run(&r[1], t, ws_path(ws), &vary, err) == 0;
    ok = ok && (nr < 3 || testrun_run(&r[2], t, ws_path(ws), &san, err) == 0);
    if (!ok) {
        buf_printf(out, "no sandbox: %s", err);
        ws_free(ws);
        goto done;
    }
    base_ms = (double)r[0].sb.wall_ms;
    const char **failed, **passed;
    size_t nf, np;
    val_split(&r[0].report, &failed, &nf, &passed, &np);
    once_only(&r[0].report, failed, &nf);
    once_only(&r[0].report, passed, &np);
    int same = val_same_outcome(&r[0].report, &r[1].report);
    if (r[0].report.n == 0)
        buf_puts(out, "no tests did not run at the base (build error)");
    else if (r[0].report.integrity[0] || r[1].report.integrity[0])
        buf_printf(out, "no results not trusted at the base: %.200s",
                   r[0].report.integrity[0] ? r[0].report.integrity : r[1].report.integrity);
    else if (!nf)
        buf_puts(out, "no no test fails at the base");
    else if (!same)
        buf_puts(out, "no flaky: two base runs disagree");
    else if (nr == 3 && !val_same_passes(&r[0].report, &r[2].report))
        buf_puts(out, "no memory error: the base built under ASan and UBSan disagrees with the plain build");
    else {
        /* the gold patch must make every test pass */
        t->fail_to_pass.v = (char **)failed;
        t->fail_to_pass.n = nf;
        t->pass_to_pass.v = (char **)passed;
        t->pass_to_pass.n = np;
        /* the base was just run twice; the gold patch gets two runs too */
        if (val_gold(&v, t, ws, 2, err) < 0)
            buf_printf(out, "no %s", err);
        else if (!v.ok)
            buf_printf(out, "no %s", v.why);
        else {
            /* The lists go through a file: they outgrow a pool result line. */
            buf_t ids;
            buf_init(&ids, RL_TASK_FILE_MAX);
            for (size_t i = 0; i < nf; i++)
                buf_printf(&ids, "%s%s", i ? ID_SEP : "", failed[i]);
            buf_puts(&ids, LIST_SEP);
            for (size_t i = 0; i < np; i++)
                buf_printf(&ids, "%s%s", i ? ID_SEP : "", passed[i]);
            buf_puts(&ids, LIST_SEP);
            for (size_t i = 0, k = 0; i < nf && k < RL_GEN_PROBLEM_TESTS; i++) {
                const tr_case *c = tr_find(&r[0].report, failed[i]);
                if (!c || !c->message || !c->message[0])
                    continue;
                buf_printf(&ids, "%s%s" ID_SEP, k++ ? ID_SEP : "", failed[i]);
                put_message(&ids, c->message);
            }
            char path[4400];
            ids_path(path, sizeof path, g, idx);
            if (fs_write_atomic(path, buf_str(&ids), ids.len, err) < 0)
                buf_printf(out, "no %s", err);
            else
                buf_puts(out, "ok ids");
            buf_dispose(&ids);
        }
        t->fail_to_pass.v = t->pass_to_pass.v = NULL;
    }
    free(failed);
    free(passed);
    for (int i = 0; i < nr; i++)
        testrun_dispose(&r[i]);
    ws_free(ws);
done:
    free(t->instance_id);
    free(t->repo);
    free(t);
    /* "ok|no TOTAL_MS BASE_MS GOLD_MS rest": the whole candidate's time,
     * one base run's and one gold run's */
    const char *l = buf_str(&line);
    int accepted = str_has_prefix(l, "ok ");
    buf_printf(res, "%s %.0f %.0f %.0f %s", accepted ? "ok" : "no", clk_ms() - t0, base_ms, v.gold_ms,
               l + (str_has_prefix(l, "no ") || accepted ? 3 : 0));
    buf_dispose(&line);
}

static void gen_done(void *user, size_t idx, const char *line)
{
    gen_ctx *g = user;
    g->results[idx] = strdup(line);
}

static void gen_died(void *user, size_t idx, const char *why)
{
    gen_ctx *g = user;
    char line[200];
    snprintf(line, sizeof line, "no %s", why);
    g->results[idx] = strdup(line);
}

static void gen_tick(void *user, size_t done, size_t total)
{
    gen_ctx *g = user;
    char extra[64];
    snprintf(extra, sizeof extra, "accepted so far %zu", g->accepted);
    cli_progress_show(&g->prog, done, total, extra);
}

static cJSON *names_json(const char *list)
{
    cJSON *a = cJSON_CreateArray();
    char *dup = strdup(list), *save = NULL;
    for (char *s = strtok_r(dup, ID_SEP, &save); s; s = strtok_r(NULL, ID_SEP, &save))
        cJSON_AddItemToArray(a, cJSON_CreateString(s));
    free(dup);
    return a;
}

static int write_task(gen_ctx *g, size_t i, const char *line, int heldout_repo, const char *outdir, char *err)
{
    const cand *c = &g->cands[i];
    const src_file *f = &g->files[c->file];
    const mut_site *s = &f->sites.v[c->site];
    char id[128];
    snprintf(id, sizeof id, "%s__gen%llu_%04zu", g->repo, (unsigned long long)g->seed, i);
    (void)line;
    char ipath[4400], *lists = NULL;
    size_t llen = 0;
    ids_path(ipath, sizeof ipath, g, i);
    int lrc = fs_read_file(&lists, &llen, ipath, RL_TASK_FILE_MAX, err);
    unlink(ipath);
    if (lrc < 0)
        return lrc;
    char *bar = strstr(lists, LIST_SEP), *msgs = bar ? strstr(bar + 1, LIST_SEP) : NULL;
    if (msgs)
        *msgs++ = '\0'; /* PASSED ends there */
    char *f2p = strndup(lists, bar ? (size_t)(bar - lists) : llen);
    const task *p = g->profile;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "instance_id", id);
    cJSON_AddStringToObject(o, "repo", g->repo);
    cJSON *fails = names_json(f2p);
    int nf = cJSON_GetArraySize(fails);
    buf_t ps;
    buf_init(&ps, RL_TASK_PROBLEM_MAX);
    buf_printf(&ps, "After a recent change to %s, %s ", g->repo, nf == 1 ? "the test" : "the tests");
    for (int k = 0; k < nf; k++)
        buf_printf(&ps, "%s`%s`", k == 0 ? "" : k == nf - 1 ? " and " : ", ",
                   cJSON_GetArrayItem(fails, k)->valuestring);
    buf_printf(&ps, " %s.\n\n", nf == 1 ? "fails" : "fail");
    /* what the failing run said, test by test */
    if (msgs && *msgs) {
        buf_puts(&ps, "The test run reports:\n\n```\n");
        char *save = NULL;
        for (char *name = strtok_r(msgs, ID_SEP, &save); name; name = strtok_r(NULL, ID_SEP, &save)) {
            char *msg = strtok_r(NULL, ID_SEP, &save);
            if (!msg)
                break;
            size_t ml = strlen(msg);
            buf_printf(&ps, "%s:\n%s%s", name, msg, ml && msg[ml - 1] == '\n' ? "" : "\n");
        }
        buf_puts(&ps, "```\n\n");
    }
    buf_puts(&ps, "The tests describe the intended behaviour and are correct; fix the library code so "
                  "that they pass again without breaking the others.");
    cJSON_AddStringToObject(o, "problem_statement", buf_str(&ps));
    buf_dispose(&ps);
    cJSON_AddStringToObject(o, "bug", c->bug);
    cJSON_AddStringToObject(o, "patch", c->fix);
    cJSON_AddItemToObject(o, "FAIL_TO_PASS", fails);
    cJSON_AddItemToObject(o, "PASS_TO_PASS", names_json(bar ? bar + 1 : ""));
    free(lists);
    cJSON_AddStringToObject(o, "test_cmd", p->test_cmd);
    cJSON_AddStringToObject(o, "test_format", task_format_name(p->test_format));
    if (p->test_result_file)
        cJSON_AddStringToObject(o, "test_result_file", p->test_result_file);
    cJSON *prot = cJSON_AddArrayToObject(o, "protected_paths");
    for (size_t k = 0; k < p->protected_paths.n; k++)
        cJSON_AddItemToArray(prot, cJSON_CreateString(p->protected_paths.v[k]));
    cJSON_AddNumberToObject(o, "timeout_s", p->timeout_s);
    int held = heldout_repo || fnv(id, strlen(id), 1469598103934665603ULL) % RL_GEN_HELDOUT_EVERY == 0;
    cJSON_AddStringToObject(o, "split", held ? "heldout" : "train");
    cJSON_AddStringToObject(o, "kind", "generated");
    cJSON *gen = cJSON_AddObjectToObject(o, "generator");
    cJSON_AddNumberToObject(gen, "seed", (double)g->seed);
    cJSON_AddStringToObject(gen, "mutation", mut_kind_name(s->kind));
    cJSON_AddStringToObject(gen, "file", f->path);
    cJSON_AddNumberToObject(gen, "line", s->line);
    char *js = cJSON_Print(o);
    cJSON_Delete(o);
    free(f2p);
    char path[4400];
    snprintf(path, sizeof path, "%.4000s/%s.json", outdir, id);
    int rc = js ? fs_write_atomic(path, js, strlen(js), err) : rl_err(err, RL_ENOMEM, "gen: out of memory");
    free(js);
    return rc;
}

/* --log: the candidate's line, appended with one write (O_APPEND), so
 * lines of concurrent generators do not interleave. */
static void log_candidate(const gen_ctx *g, size_t c, const char *line, const char *verdict)
{
    const cand *cd = &g->cands[c];
    const src_file *f = &g->files[cd->file];
    const mut_site *s = &f->sites.v[cd->site];
    double total = 0, base = 0, gold = 0;
    int off = 0;
    if (sscanf(line, "%*s %lf %lf %lf %n", &total, &base, &gold, &off) < 3)
        off = 0;
    char id[128], where[300], buf[1024];
    snprintf(id, sizeof id, "%s__gen%llu_%04zu", g->repo, (unsigned long long)g->seed, c);
    snprintf(where, sizeof where, "%s:%d", f->path, s->line);
    int n = snprintf(buf, sizeof buf, "%-30s %-15s %-14s %-28s %-8s %8.0f %8.0f %8.0f  %.400s\n", id, g->repo,
                     mut_kind_name(s->kind), where, verdict, total, base, gold,
                     off && str_has_prefix(line, "no ") ? line + off : "");
    if (n > (int)sizeof buf - 1) {
        n = (int)sizeof buf - 1;
        buf[n - 1] = '\n';
    }
    for (char *p = buf; p < buf + n - 1; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    if (write(g->log_fd, buf, (size_t)n) != n)
        fprintf(stderr, "harness gen: --log: write failed\n");
}

static void usage(FILE *f)
{
    fprintf(f, "usage: harness gen --repo NAME --count N --seed S [--out DIR] [--mutations KINDS] [--workers N]\n"
               "                  [--log FILE] [--progress bar|plain]\n"
               "Mutates the repository's sources, validates each candidate bug in the sandbox, and\n"
               "writes N tasks to DIR/NAME/ (default tasks/generated). Same seed and kinds, same tasks.\n"
               "KINDS: ops (one-token operator mutations), rewrites (function-level: drop_guard,\n"
               "swap_branches, swap_stmts, move_break, default_return, drop_elif), all (default), or\n"
               "a comma-separated list of kind names. --log FILE appends one line per validated\n"
               "candidate: id, repo, kind, file:line, verdict (task, rejected, extra), the candidate's\n"
               "validation ms, one base run's ms, one gold run's ms, and why it was rejected.\n");
}

int cmd_gen(int argc, char **argv)
{
    const char *repo = NULL, *out = "tasks/generated", *log_path = NULL;
    long count = 0, seed = 1, workers = cliopt_workers();
    int bar = -1;
    unsigned kinds = MUT_MASK_ALL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--repo") && i + 1 < argc) {
            repo = argv[++i];
        } else if (!strcmp(a, "--out") && i + 1 < argc) {
            out = argv[++i];
        } else if (!strcmp(a, "--count") && i + 1 < argc) {
            if (arg_long(&count, a, argv[++i], 1, 100000, NULL) < 0) {
                fprintf(stderr, "harness gen: --count: expected 1-100000, got '%s'\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(a, "--seed") && i + 1 < argc) {
            if (arg_long(&seed, a, argv[++i], 0, 0x7fffffffL, NULL) < 0) {
                fprintf(stderr, "harness gen: --seed: expected 0-2147483647, got '%s'\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(a, "--workers") && i + 1 < argc) {
            if (arg_long(&workers, a, argv[++i], 1, 256, NULL) < 0) {
                fprintf(stderr, "harness gen: --workers: expected 1-256, got '%s'\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(a, "--mutations") && i + 1 < argc) {
            char merr[RL_ERR_MAX];
            if (mut_mask_parse(&kinds, argv[++i], merr) < 0) {
                fprintf(stderr, "harness gen: --mutations: %s\n", merr);
                return 2;
            }
        } else if (!strcmp(a, "--log") && i + 1 < argc) {
            log_path = argv[++i];
        } else if (!strcmp(a, "--progress") && i + 1 < argc) {
            bar = !strcmp(argv[++i], "bar");
        } else {
            fprintf(stderr, "harness gen: unexpected argument '%s' (see --help)\n", a);
            return 2;
        }
    }
    if (!repo || !count) {
        usage(stderr);
        return 2;
    }
    char err[RL_ERR_MAX];
    task_set all;
    if (task_set_load(&all, "tasks", "repos", err) < 0) {
        fprintf(stderr, "harness gen: %s\n", err);
        return 1;
    }
    /* the repo's hand-written tasks give the test command; held out when all are */
    const task *profile = NULL;
    int heldout_repo = 1;
    for (size_t i = 0; i < all.n; i++) {
        const task *t = all.v[i];
        if (strcmp(t->repo, repo) || t->kind == TASK_KIND_GENERATED)
            continue;
        if (!profile)
            profile = t;
        heldout_repo &= t->split == TASK_SPLIT_HELDOUT;
    }
    if (!profile) {
        fprintf(stderr, "harness gen: --repo %s: no hand-written task of this repository to take the test "
                        "command from (add one to tasks/)\n", repo);
        task_set_dispose(&all);
        return 2;
    }
    gen_ctx g = {.repo = repo, .profile = profile, .seed = (uint64_t)seed, .kinds = kinds, .known = &all,
                 .log_fd = -1};
    char root[4096], outdir[4096];
    snprintf(root, sizeof root, "repos/%s", repo);
    snprintf(outdir, sizeof outdir, "%s/%s", out, repo);
    g.outdir = outdir;
    int rc = collect(&g, root, "", 0, err);
    if (rc == 0)
        rc = make_candidates(&g, err);
    if (rc == 0)
        rc = fs_mkdirs(outdir, err);
    if (rc == 0 && log_path && (g.log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0)
        rc = rl_err(err, RL_EIO, "--log %s: cannot open for appending", log_path);
    if (rc < 0) {
        fprintf(stderr, "harness gen: %s\n", err);
        task_set_dispose(&all);
        return 1;
    }
    fprintf(stderr, "gen %s: %zu source files, %zu distinct candidates, seed %ld\n", repo, g.nfiles, g.ncands, seed);
    g.results = calloc(g.ncands + 1, sizeof *g.results);
    cli_progress_init(&g.prog, bar, "candidates");
    /* validate in chunks; accept in candidate order so the result does
     * not depend on which worker finished first */
    size_t next = 0, chunk = (size_t)workers * 4;
    size_t *jobs = calloc(chunk, sizeof *jobs);
    while (g.accepted < (size_t)count && next < g.ncands && rc == 0) {
        size_t n = 0;
        while (n < chunk && next + n < g.ncands)
            jobs[n] = next + n, n++;
        pool_cbs cb = {gen_run, gen_done, gen_died, gen_tick, &g};
        rc = pool_run(jobs, n, (int)workers, &cb, err);
        for (size_t i = 0; i < n && rc == 0; i++) {
            size_t c = next + i;
            g.tried++;
            const char *line = g.results[c] ? g.results[c] : "no";
            if (getenv("RL_GEN_DEBUG"))
                fprintf(stderr, "candidate %zu: %.200s\n", c, line);
            int accept = g.accepted < (size_t)count && str_has_prefix(line, "ok ");
            if (g.log_fd >= 0)
                log_candidate(&g, c, line, accept ? "task" : str_has_prefix(line, "ok ") ? "extra" : "rejected");
            if (accept) {
                if ((rc = write_task(&g, c, line, heldout_repo, outdir, err)) == 0)
                    g.accepted++;
            } else if (str_has_prefix(line, "ok ")) {
                char ipath[4400];
                ids_path(ipath, sizeof ipath, &g, c);
                unlink(ipath);
            }
        }
        next += n;
    }
    if (rc < 0)
        fprintf(stderr, "harness gen: %s\n", err);
    fprintf(stderr, "gen %s: %zu tasks written to %s (%zu candidates validated)\n", repo, g.accepted, outdir, g.tried);
    for (size_t i = 0; i < g.ncands; i++) {
        free(g.cands[i].bug);
        free(g.cands[i].fix);
        free(g.results[i]);
    }
    for (size_t f = 0; f < g.nfiles; f++) {
        free(g.files[f].path);
        free(g.files[f].text);
        mut_list_dispose(&g.files[f].sites);
    }
    free(g.files);
    free(g.cands);
    free(g.results);
    free(jobs);
    if (g.log_fd >= 0)
        close(g.log_fd);
    task_set_dispose(&all);
    return rc < 0 || g.accepted < (size_t)count ? 1 : 0;
}
