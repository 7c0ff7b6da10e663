/* validate.c - the base fails where it should, the gold patch fixes it. */
#include "harness/validate.h"

#include "common/clock.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/str.h"
#include "harness/testrun.h"
#include "harness/workspace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void val_split(const tr_report *r, const char ***failed, size_t *nf, const char ***passed, size_t *np)
{
    *failed = calloc(r->n + 1, sizeof **failed);
    *passed = calloc(r->n + 1, sizeof **passed);
    *nf = *np = 0;
    if (!*failed || !*passed)
        return;
    for (size_t i = 0; i < r->n; i++) {
        if (r->cases[i].status == TR_PASS)
            (*passed)[(*np)++] = r->cases[i].name;
        else if (r->cases[i].status != TR_SKIP)
            (*failed)[(*nf)++] = r->cases[i].name;
    }
}

/* Checks one run against the expectation; fills why on the first miss. */
static int expect(const testrun *r, const task *t, int gold, char *why, size_t n)
{
    const char *stage = gold ? "with the gold patch" : "at the base";
    if (r->report.integrity[0]) {
        snprintf(why, n, "%s: results not trusted: %.300s", stage, r->report.integrity);
        return 0;
    }
    if (r->report.n == 0) {
        const char *out = r->sb.out ? r->sb.out : "";
        size_t len = strlen(out);
        snprintf(why, n, "%s: no test results (exit %d): %.200s", stage, sb_result_status(&r->sb),
                 len > 200 ? out + len - 200 : out);
        return 0;
    }
    for (size_t i = 0; i < t->fail_to_pass.n; i++) {
        tr_status s = tr_status_of(&r->report, t->fail_to_pass.v[i]);
        if (gold ? s != TR_PASS : s == TR_PASS) {
            snprintf(why, n, "%s: FAIL_TO_PASS test %s %s (expected it to %s)", stage, t->fail_to_pass.v[i],
                     s == TR_MISSING ? "was not reported" : tr_status_name(s), gold ? "pass" : "fail");
            return 0;
        }
    }
    for (size_t i = 0; i < t->pass_to_pass.n; i++) {
        tr_status s = tr_status_of(&r->report, t->pass_to_pass.v[i]);
        if (s != TR_PASS) {
            snprintf(why, n, "%s: PASS_TO_PASS test %s %s (expected it to pass)", stage, t->pass_to_pass.v[i],
                     s == TR_MISSING ? "was not reported" : tr_status_name(s));
            return 0;
        }
    }
    return 1;
}

int val_same_outcome(const tr_report *a, const tr_report *b)
{
    if (a->n != b->n)
        return 0;
    for (size_t i = 0; i < a->n; i++)
        if (tr_status_of(b, a->cases[i].name) != a->cases[i].status)
            return 0;
    return 1;
}

int val_same_passes(const tr_report *a, const tr_report *b)
{
    for (size_t i = 0; i < a->n; i++)
        if ((a->cases[i].status == TR_PASS) != (tr_status_of(b, a->cases[i].name) == TR_PASS))
            return 0;
    for (size_t i = 0; i < b->n; i++)
        if (b->cases[i].status == TR_PASS && tr_status_of(a, b->cases[i].name) != TR_PASS)
            return 0;
    return 1;
}

/* 1 for a task whose test command runs make (the C repositories, Check or
 * TAP): validation runs it once more under the sanitizers, where the
 * sandbox can bound such a run's memory (cgroups). */
int val_sanitized(const task *t)
{
    if (t->test_format == TASK_FMT_JUNIT || !testrun_can_sanitize())
        return 0;
    for (const char *p = strstr(t->test_cmd, "make"); p; p = strstr(p + 4, "make")) {
        int start = p == t->test_cmd || strchr(" \t;&|(", p[-1]);
        if (start && (!p[4] || strchr(" \t;&|)", p[4])))
            return 1;
    }
    return 0;
}

/* Runs the tests `runs` times on the work tree's change, each time in a
 * fresh checkout as scoring does (testrun_fresh): the first run must
 * meet the expectation (gold or base) and every later run, each under
 * another variation of the environment (testrun_limits.variant), must
 * report the same outcome; with runs >= 2 a C task (val_sanitized) gets
 * one run more, built under ASan and UBSan (testrun_limits.sanitize),
 * where every test must pass or not as in run 1.
 * Fills *mean_ms (the mean over every run); returns 1 ok, 0 not (why
 * filled, naming the variation), < 0 error. */
static int run_stage(const task *t, struct ws_tree *ws, int gold, int runs, double *mean_ms, char *why, size_t n,
                     char *err)
{
    testrun first, again;
    const char *stage = gold ? "with the gold patch" : "at the base";
    double t0 = clk_ms();
    int rc = testrun_fresh(&first, NULL, t, ws, 1, NULL, err);
    if (rc < 0) {
        testrun_dispose(&first);
        return rc;
    }
    int ok = expect(&first, t, gold, why, n);
    int total = runs + (runs >= 2 && val_sanitized(t));
    int done = 1;
    for (; ok && done < total; done++) {
        testrun_limits vary = {.variant = done < runs ? done : 0, .sanitize = done >= runs};
        if ((rc = testrun_fresh(&again, NULL, t, ws, 1, &vary, err)) < 0) {
            testrun_dispose(&again);
            testrun_dispose(&first);
            return rc;
        }
        if (vary.sanitize ? !val_same_passes(&first.report, &again.report)
                          : !val_same_outcome(&first.report, &again.report)) {
            ok = 0;
            if (vary.sanitize)
                snprintf(why, n, "%s: the run built under AddressSanitizer and UndefinedBehaviorSanitizer "
                         "disagrees with run 1 (a memory or undefined-behaviour error the plain build hides)%s%.120s",
                         stage, again.report.integrity[0] ? ": " : "", again.report.integrity);
            else
                snprintf(why, n, "%s: run %d of %d (MALLOC_PERTURB_=%d, environment %d KiB larger) disagrees "
                         "with run 1 (flaky, or reading memory contents or the environment)", stage, done + 1,
                         runs, testrun_perturb_byte(done), done);
        }
        testrun_dispose(&again);
    }
    *mean_ms = (clk_ms() - t0) / done;
    testrun_dispose(&first);
    return ok;
}

/* What both entry points check first: the counts, and runs in range. */
static int val_begin(val_result *out, const task *t, int runs, char *err)
{
    out->f2p = t->fail_to_pass.n;
    out->p2p = t->pass_to_pass.n;
    if (runs < 1 || runs > RL_VALIDATE_RUNS_MAX)
        return rl_err(err, RL_EINVAL, "validate: %d test runs per stage, expected 1-%d", runs, RL_VALIDATE_RUNS_MAX);
    return 0;
}

/* 1 if the unified diff `patch` has a file header for path (a/PATH or
 * b/PATH on a "diff --git" line). */
static int diff_names(const char *patch, const char *path, size_t len)
{
    for (const char *p = patch; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (!str_has_prefix(p, "diff --git a/"))
            continue;
        const char *a = p + 13;
        if (!strncmp(a, path, len) && a[len] == ' ')
            return 1;
    }
    return 0;
}

/* After the gold stage's runs, the scoring checkout (ws's companion) holds
 * the gold change plus whatever the test command left behind. Files of
 * the second kind that the repository's ignore rules do not cover would
 * show up in an agent's list_files output and in its recorded patch: they
 * are named in out->warn. */
static int leftover_check(val_result *out, const task *t, struct ws_tree *ws, char *err)
{
    struct ws_tree *run;
    char *diff = NULL;
    int rc = ws_companion(&run, ws, err);
    if (rc < 0 || (rc = ws_diff(&diff, run, err)) < 0)
        return rc;
    size_t used = 0, extra = 0;
    for (const char *p = diff; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "") {
        if (!str_has_prefix(p, "diff --git a/"))
            continue;
        const char *a = p + 13, *sp = strstr(a, " b/"), *nl = strchr(a, '\n');
        size_t len = sp && (!nl || sp < nl) ? (size_t)(sp - a) : 0;
        if (!len || diff_names(t->patch, a, len))
            continue;
        if (extra++ == 0)
            used = (size_t)snprintf(out->warn, sizeof out->warn, "the tests leave files no ignore rule covers: ");
        if (extra <= RL_VALIDATE_LEFTOVERS_SHOWN && used < sizeof out->warn)
            used += (size_t)snprintf(out->warn + used, sizeof out->warn - used, "%s%.*s", extra > 1 ? ", " : "",
                                     (int)(len < 120 ? len : 120), a);
    }
    if (extra > RL_VALIDATE_LEFTOVERS_SHOWN && used < sizeof out->warn)
        snprintf(out->warn + used, sizeof out->warn - used, " and %zu more", extra - RL_VALIDATE_LEFTOVERS_SHOWN);
    free(diff);
    return 0;
}

/* Gold patch on ws (at the base), its runs, then ws back to the base. */
static int gold_stage(val_result *out, const task *t, struct ws_tree *ws, int runs, char *err)
{
    char aerr[RL_ERR_MAX];
    if (ws_apply(ws, t->patch, aerr) < 0) {
        out->ok = 0;
        snprintf(out->why, sizeof out->why, "gold patch does not apply: %.300s", aerr);
        return 0;
    }
    int rc = run_stage(t, ws, 1, runs, &out->gold_ms, out->why, sizeof out->why, err);
    if (rc < 0)
        return rc;
    out->ok = rc;
    if (out->ok && (rc = leftover_check(out, t, ws, err)) < 0)
        return rc;
    return ws_reset(ws, err);
}

int val_task(val_result *out, const task *t, struct ws_tree *ws, int runs, char *err)
{
    memset(out, 0, sizeof *out);
    int rc = val_begin(out, t, runs, err);
    if (rc < 0 || (rc = ws_reset(ws, err)) < 0)
        return rc;
    if ((rc = run_stage(t, ws, 0, runs, &out->base_ms, out->why, sizeof out->why, err)) < 0)
        return rc;
    if (!(out->ok = rc))
        return 0;
    return gold_stage(out, t, ws, runs, err);
}

int val_gold(val_result *out, const task *t, struct ws_tree *ws, int runs, char *err)
{
    int rc = val_begin(out, t, runs, err);
    return rc < 0 ? rc : gold_stage(out, t, ws, runs, err);
}
