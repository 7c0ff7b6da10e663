/* testrun.c - run a task's tests under the sandbox and score them. */
#include "harness/testrun.h"

#include "common/buf.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "harness/workspace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* ---- the result channel ---------------------------------------------------- */

/* Name of the result file inside the run's private directory. */
#define RESULT_NAME "results.xml"

/* Creates the run's private result directory (mode 0700, random name)
 * next to the work tree, where the command cannot see it before the run
 * and only this run is given write access to it; else under $TMPDIR. */
static int result_dir_make(char *out, size_t n, const char *dir, char *err)
{
    unsigned char rnd[8];
    char hex[17];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        memset(rnd, 0, sizeof rnd); /* mkdtemp's own six random characters remain */
    for (size_t i = 0; i < sizeof rnd; i++)
        snprintf(hex + 2 * i, 3, "%02x", rnd[i]);
    char parent[4096];
    fs_dirname(parent, sizeof parent, dir);
    const char *tmp = getenv("TMPDIR");
    const char *bases[] = {parent, tmp && *tmp == '/' ? tmp : "/tmp"};
    for (size_t i = 0; i < 2; i++) {
        if (snprintf(out, n, "%s/.rl-results-%s-XXXXXX", bases[i], hex) >= (int)n)
            continue;
        if (mkdtemp(out))
            return 0;
    }
    return rl_err(err, rl_from_errno(errno), "%s: cannot create a private result directory: %s", parent,
                  strerror(errno));
}

/* Reads and parses the structured result file. A missing file (the build
 * failed, the runner never started) leaves the report empty: every test
 * counts as not run. Any other problem (a FIFO, a link, too large, not
 * the format) makes the run untrusted. Returns 1 when parsed. */
static int read_results(testrun *r, const char *path, int check_xml)
{
    char *xml = NULL, perr[RL_ERR_MAX];
    size_t len = 0;
    int rc = fs_read_file_ex(&xml, &len, path, RL_TESTRUN_RESULT_MAX, FS_NOFOLLOW, perr);
    if (rc == RL_ENOENT)
        return 0;
    if (rc < 0) {
        tr_report_set_integrity(&r->report, "result file: %s", perr);
        return 0;
    }
    rc = check_xml ? tr_parse_check_xml(&r->report, xml, len, perr)
                   : tr_parse_junit(&r->report, xml, len, perr);
    free(xml);
    if (rc < 0) {
        tr_report_set_integrity(&r->report, "result file: %s", perr);
        return 0;
    }
    return 1;
}

static int parse_output(testrun *r, const task *t, const char *dir, const char *result_path)
{
    const char *out = r->sb.out ? r->sb.out : "";
    char perr[RL_ERR_MAX];
    if (t->test_format == TASK_FMT_TAP) {
        /* The stream the runner wrote to RL_RESULT_FILE (the corpus's TAP
         * harness does, judged by its parent process); else stdout. */
        char *tap = NULL;
        size_t len = 0;
        int rc = fs_read_file_ex(&tap, &len, result_path, RL_TESTRUN_RESULT_MAX, FS_NOFOLLOW, perr);
        if (rc == RL_ENOENT)
            return tr_parse_tap(&r->report, out, r->sb.out_len, perr) == 0;
        if (rc < 0) {
            tr_report_set_integrity(&r->report, "result file: %s", perr);
            return 0;
        }
        rc = tr_parse_tap(&r->report, tap, len, perr);
        free(tap);
        return rc == 0;
    }
    if (t->test_format == TASK_FMT_JUNIT) {
        char named[4096];
        if (t->test_result_file) { /* the task names the file: the weaker channel */
            snprintf(named, sizeof named, "%s/%s", dir, t->test_result_file);
            result_path = named;
        }
        return read_results(r, result_path, 0);
    }
    /* Unity and testhelp print their results: stdout, cross-checked
     * against the summary lines (corpus/testres.h). */
    if (t->test_format == TASK_FMT_UNITY)
        return tr_parse_unity(&r->report, out, r->sb.out_len, perr) == 0;
    if (t->test_format == TASK_FMT_TESTHELP)
        return tr_parse_testhelp(&r->report, out, r->sb.out_len, perr) == 0;
    /* Check: the XML log, cross-checked against the verbose stdout. */
    if (!read_results(r, result_path, 1))
        return 0;
    tr_report so;
    tr_parse_check(&so, out, r->sb.out_len, perr);
    tr_check_agrees(&r->report, &so, r->sb.out_truncated);
    tr_report_dispose(&so);
    return 1;
}

/* The strict checks of a scoring run (docs/scoring.md). A run that fails
 * one has every reported test turned into an error. */
static void strict_checks(testrun *r, const task *t)
{
    tr_report *rep = &r->report;
    if (r->sb.stop != SB_STOP_EXIT)
        tr_report_set_integrity(rep, "the test command did not exit normally: %s", r->sb.reason);
    /* Every listed test at most once (not at all reads as not run). */
    for (size_t i = 0; i < t->fail_to_pass.n + t->pass_to_pass.n; i++) {
        const char *name = i < t->fail_to_pass.n ? t->fail_to_pass.v[i]
                                                 : t->pass_to_pass.v[i - t->fail_to_pass.n];
        const tr_case *c = tr_find(rep, name);
        if (c && c->count > 1)
            tr_report_set_integrity(rep, "test %s was reported %d times (expected once)", name, c->count);
    }
    /* The exit status agrees with the results. */
    if (rep->n && r->sb.stop == SB_STOP_EXIT) {
        size_t bad = 0;
        for (size_t i = 0; i < rep->n; i++)
            bad += rep->cases[i].status == TR_FAIL || rep->cases[i].status == TR_ERROR;
        if (bad && r->sb.exit_code == 0)
            tr_report_set_integrity(rep, "the test command exited 0 although %zu tests failed", bad);
        else if (!bad && r->sb.exit_code != 0)
            tr_report_set_integrity(rep, "the test command exited %d although every reported test passed",
                                    r->sb.exit_code);
    }
    if (rep->integrity[0])
        tr_report_fail_all(rep);
}

/* testrun_run, with the paths of ro (relative to dir, as protected_paths
 * are written) read-only for the command. */
static int run_tests(testrun *out, const task *t, const char *dir, const task_strs *ro,
                     const testrun_limits *lim, char *err)
{
    memset(out, 0, sizeof *out);
    char ro_abs[SB_RO_PATHS_MAX][4096];
    const char *ro_v[SB_RO_PATHS_MAX + 1] = {NULL};
    size_t nro = 0;
    for (size_t i = 0; ro && i < ro->n; i++) {
        if (nro == SB_RO_PATHS_MAX)
            return rl_err(err, RL_ELIMIT, "%s: more than %d protected paths", t->instance_id, SB_RO_PATHS_MAX);
        size_t l = strlen(ro->v[i]);
        snprintf(ro_abs[nro], sizeof ro_abs[nro], "%s/%.*s", dir, (int)(l && ro->v[i][l - 1] == '/' ? l - 1 : l),
                 ro->v[i]);
        ro_v[nro] = ro_abs[nro];
        nro++;
    }
    if (t->test_format == TASK_FMT_JUNIT && t->test_result_file) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, t->test_result_file);
        unlink(path); /* a stale or forged result file must not count */
    }
    /* A fresh private directory per run for the structured results. */
    char rdir[4096] = "", rpath[4200] = "";
    char env_file[4300], env_ck[4300], env_py[4300], env_perturb[32], *env_pad = NULL;
    const char *env[9] = {NULL};
    const char *rw[2] = {NULL};
    {
        int rc = result_dir_make(rdir, sizeof rdir, dir, err);
        if (rc < 0)
            return rc;
        snprintf(rpath, sizeof rpath, "%s/" RESULT_NAME, rdir);
        snprintf(env_file, sizeof env_file, "RL_RESULT_FILE=%s", rpath);
        snprintf(env_ck, sizeof env_ck, "CK_XML_LOG_FILE_NAME=%s", rpath);
        snprintf(env_py, sizeof env_py, "PYTEST_ADDOPTS=--junitxml=%s", rpath);
        size_t ne = 0;
        env[ne++] = env_file;
        if (t->test_format == TASK_FMT_CHECK || t->test_format == TASK_FMT_JUNIT)
            env[ne++] = t->test_format == TASK_FMT_CHECK ? env_ck : env_py;
        rw[0] = rdir;
        int k = lim ? lim->variant : 0;
        if (k > 0 && k <= RL_VALIDATE_RUNS_MAX) {
            /* a nonzero byte that differs from run to run (testrun_perturb_byte) */
            snprintf(env_perturb, sizeof env_perturb, "MALLOC_PERTURB_=%d", testrun_perturb_byte(k));
            size_t pad = (size_t)k * 1024;
            if (!(env_pad = malloc(pad + 16))) {
                fs_remove_tree(rdir, NULL);
                return rl_err(err, RL_ENOMEM, "%s: out of memory", t->instance_id);
            }
            memcpy(env_pad, "RL_ENV_PAD=", 11);
            memset(env_pad + 11, 'x', pad);
            env_pad[11 + pad] = 0;
            env[ne++] = env_perturb;
            env[ne++] = env_pad;
        }
        if (lim && lim->sanitize) {
            env[ne++] = TESTRUN_SANITIZE_MAKEFLAGS;
            env[ne++] = "ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:exitcode=86:halt_on_error=1";
            env[ne++] = "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=86";
        }
    }
    const char *argv[] = {"/bin/sh", "-c", t->test_cmd, NULL};
    sb_opts o;
    sb_opts_default(&o);
    o.argv = argv;
    o.dir = dir;
    o.env = env;
    o.rw_paths = rw[0] ? rw : NULL;
    o.ro_paths = nro ? ro_v : NULL;
    o.lim.timeout_ms = t->timeout_s * 1000;
    o.lim.cpu_ms = t->timeout_s * 1000;
    if (lim && lim->mem_mb > 0)
        o.lim.mem_mb = lim->mem_mb;
    if (lim && lim->procs > 0)
        o.lim.procs = lim->procs;
    if (lim && lim->disk_mb > 0)
        o.lim.disk_mb = lim->disk_mb;
    if (lim && lim->sanitize)
        o.lim.no_as_limit = 1;
    int rc = sb_run(&out->sb, &o, err);
    free(env_pad);
    if (rc < 0) {
        if (rdir[0])
            fs_remove_tree(rdir, NULL);
        return rc;
    }
    out->parse_ok = parse_output(out, t, dir, rpath);
    if (rdir[0]) {
        char rerr[RL_ERR_MAX];
        if (fs_remove_tree(rdir, rerr) < 0)
            tr_report_set_integrity(&out->report, "result directory: %s", rerr);
    }
    strict_checks(out, t);
    return 0;
}

int testrun_run(testrun *out, const task *t, const char *dir, const testrun_limits *lim, char *err)
{
    return run_tests(out, t, dir, NULL, lim, err);
}

int testrun_can_sanitize(void)
{
    return (sb_layers_available() & SB_LAYER_CGROUP) != 0;
}

int testrun_perturb_byte(int variant)
{
    return (0x55 * variant) % 255 + 1;
}

void testrun_dispose(testrun *r)
{
    tr_report_dispose(&r->report);
    sb_result_dispose(&r->sb);
}

static void score_tests(testrun_verdict *s, const task *t)
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
        testrun_outcome *o = &s->tests[i];
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
                  const testrun_limits *lim, char *err)
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
        rc = run_tests(out, t, ws_path(run), protect ? &t->protected_paths : NULL, lim, err);
    if (!rc && patch)
        *patch = change;
    else
        free(change);
    return rc;
}

int testrun_score(testrun_verdict *out, const task *t, struct ws_tree *ws, const testrun_limits *lim, char *err)
{
    memset(out, 0, sizeof *out);
    long t0 = clk_ms_int();
    int rc = testrun_fresh(&out->run, &out->patch, t, ws, 1, lim, err);
    if (rc < 0) {
        testrun_dispose(&out->run);
        return rc;
    }
    score_tests(out, t);
    if (!out->tests)
        return rl_err(err, RL_ENOMEM, "score: out of memory");
    out->reward = out->f2p_pass == out->f2p_total && out->p2p_pass == out->p2p_total;
    out->ms = clk_ms_int() - t0;
    return 0;
}

void testrun_verdict_dispose(testrun_verdict *s)
{
    free(s->tests);
    free(s->patch);
    testrun_dispose(&s->run);
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
    if (r->report.integrity[0])
        buf_printf(&b, "results not trusted, every test counts as failed: %s\n", r->report.integrity);
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
        if (r->report.integrity[0] && !strcmp(msg, r->report.integrity))
            msg = ""; /* said once above */
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
