/* testrun.c - run a task's tests under the sandbox and score them. */
#include "harness/testrun.h"

#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "harness/workspace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static int parse_output(testrun *r, const task *t, const char *dir, char *err)
{
    if (t->test_format == TASK_FMT_JUNIT) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, t->test_result_file);
        char *xml = NULL;
        size_t len = 0;
        if (fs_read_file(&xml, &len, path, RL_TESTRUN_RESULT_MAX, NULL) < 0)
            return 0; /* no file: every test counts as missing */
        int rc = tr_parse_junit(&r->report, xml, len, err);
        free(xml);
        return rc == 0;
    }
    const char *out = r->sb.out ? r->sb.out : "";
    int rc = t->test_format == TASK_FMT_TAP ? tr_parse_tap(&r->report, out, r->sb.out_len, err)
                                            : tr_parse_check(&r->report, out, r->sb.out_len, err);
    return rc == 0;
}

int testrun_run(testrun *out, const task *t, const char *dir, char *err)
{
    memset(out, 0, sizeof *out);
    if (t->test_format == TASK_FMT_JUNIT && t->test_result_file) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, t->test_result_file);
        unlink(path); /* a stale or forged result file must not count */
    }
    const char *argv[] = {"/bin/sh", "-c", t->test_cmd, NULL};
    sb_opts o;
    sb_opts_default(&o);
    o.argv = argv;
    o.dir = dir;
    o.lim.timeout_ms = t->timeout_s * 1000;
    o.lim.cpu_ms = t->timeout_s * 1000;
    int rc = sb_run(&out->sb, &o, err);
    if (rc < 0)
        return rc;
    char perr[RL_ERR_MAX];
    out->parse_ok = parse_output(out, t, dir, perr);
    return 0;
}

void testrun_free(testrun *r)
{
    tr_report_free(&r->report);
    sb_result_free(&r->sb);
}

static void score_tests(score *s, const task *t)
{
    size_t n = t->fail_to_pass.n + t->pass_to_pass.n;
    s->tests = calloc(n ? n : 1, sizeof *s->tests);
    if (!s->tests)
        return;
    s->n_tests = n;
    for (size_t i = 0; i < n; i++) {
        int f2p = i < t->fail_to_pass.n;
        const char *name = f2p ? t->fail_to_pass.v[i] : t->pass_to_pass.v[i - t->fail_to_pass.n];
        const tr_case *c = tr_find(&s->run.report, name);
        test_outcome *o = &s->tests[i];
        o->name = name;
        o->must_pass = 1;
        o->from_f2p = f2p;
        o->status = c ? c->status : TR_MISSING;
        o->message = c ? c->message : NULL;
        int pass = o->status == TR_PASS;
        if (f2p) {
            s->f2p_total++;
            s->f2p_pass += pass;
        } else {
            s->p2p_total++;
            s->p2p_pass += pass;
        }
    }
}

int testrun_fresh(testrun *out, char **patch, const task *t, struct ws_tree *ws, int protect,
                  char *err)
{
    memset(out, 0, sizeof *out);
    if (patch)
        *patch = NULL;
    const char *const *prot = protect ? (const char *const *)t->protected_paths.v : NULL;
    size_t np = protect ? t->protected_paths.n : 0;
    char *change = NULL;
    ws_tree *run = NULL;
    int rc = ws_change(&change, ws, prot, np, err);
    if (!rc)
        rc = ws_stage(&run, ws, change, err);
    if (!rc && protect)
        rc = ws_restore_paths(run, prot, np, err);
    if (!rc)
        rc = testrun_run(out, t, ws_path(run), err);
    if (!rc && patch)
        *patch = change;
    else
        free(change);
    return rc;
}

int testrun_score(score *out, const task *t, struct ws_tree *ws, char *err)
{
    memset(out, 0, sizeof *out);
    long t0 = now_ms();
    int rc = testrun_fresh(&out->run, &out->patch, t, ws, 1, err);
    if (rc < 0) {
        testrun_free(&out->run);
        return rc;
    }
    score_tests(out, t);
    if (!out->tests)
        return rl_err(err, RL_ENOMEM, "score: out of memory");
    out->reward = out->f2p_pass == out->f2p_total && out->p2p_pass == out->p2p_total;
    out->ms = now_ms() - t0;
    return 0;
}

void score_free(score *s)
{
    free(s->tests);
    free(s->patch);
    testrun_free(&s->run);
    memset(s, 0, sizeof *s);
}

static int wanted(const char *name, const char *const *only, size_t n_only)
{
    if (!only || !n_only)
        return 1;
    for (size_t i = 0; i < n_only; i++)
        if (!strcmp(only[i], name))
            return 1;
    return 0;
}

char *testrun_summary(const testrun *r, const task *t, const char *const *only, size_t n_only)
{
    (void)t;
    buf_t b;
    buf_init(&b, RL_TESTRUN_SUMMARY_MAX);
    size_t pass = 0, fail = 0, skip = 0, shown = 0;
    for (size_t i = 0; i < r->report.n; i++) {
        const tr_case *c = &r->report.cases[i];
        if (!wanted(c->name, only, n_only))
            continue;
        shown++;
        if (c->status == TR_PASS)
            pass++;
        else if (c->status == TR_SKIP)
            skip++;
        else
            fail++;
    }
    if (r->sb.stop == SB_STOP_TIMEOUT)
        buf_printf(&b, "test command timed out after %ld ms\n", r->sb.wall_ms);
    else if (r->sb.stop != SB_STOP_EXIT)
        buf_printf(&b, "test command stopped: %s\n", r->sb.reason);
    buf_printf(&b, "%zu passed, %zu failed", pass, fail);
    if (skip)
        buf_printf(&b, ", %zu skipped", skip);
    buf_puts(&b, "\n");
    for (size_t i = 0; i < r->report.n; i++) {
        const tr_case *c = &r->report.cases[i];
        if (!wanted(c->name, only, n_only) || c->status == TR_PASS || c->status == TR_SKIP)
            continue;
        const char *msg = c->message ? c->message : "";
        size_t ml = strlen(msg);
        char *cut = str_cut_middle(msg, ml, RL_TESTRUN_MSG_MAX, NULL);
        buf_printf(&b, "%s %s: %s\n", tr_status_name(c->status), c->name, cut ? cut : "");
        free(cut);
    }
    /* Names asked for but never reported: say so, they count as failed. */
    for (size_t i = 0; only && i < n_only; i++)
        if (!tr_find(&r->report, only[i]))
            buf_printf(&b, "not run %s: no result reported for this test\n", only[i]);
    /* When the tests did not run at all (build error), the output is the
     * only useful observation: show its head and tail. */
    if (shown == 0 || !r->parse_ok) {
        const char *out = r->sb.out ? r->sb.out : "";
        char *cut = str_cut_middle(out, r->sb.out_len, RL_TESTRUN_OUTPUT_SHOWN, NULL);
        buf_printf(&b, "exit status %d; output:\n%s\n", sb_result_status(&r->sb), cut ? cut : "");
        free(cut);
    }
    return buf_detach(&b, NULL);
}
