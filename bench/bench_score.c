/* bench_score.c - hermetic scoring against in-place scoring, interleaved
 * in the same run, on real tasks of the corpus (leapyear: C with Check,
 * pydate_parse_date: Python with pytest) with the gold patch as the
 * policy's change.
 *
 *   in place:  restore the protected paths in the policy's tree, run the
 *              tests there (the scorer before scoring went hermetic)
 *   hermetic:  testrun_score: the change as a diff against the base,
 *              applied to a fresh companion checkout, protected paths
 *              restored there, tests run there
 *
 * Prints one line per task: the median wall time of a scoring (ms) and
 * the median of the paired overheads; target <= 20% more per episode
 * (an episode's own test runs and policy time only lower the share). */
#include "common/err.h"
#include "harness/testrun.h"
#include "harness/workspace.h"
#include "corpus/task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ITERS 15

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void die(const char *what, const char *err)
{
    fprintf(stderr, "bench_score: %s: %s\n", what, err);
    exit(1);
}

static double in_place(const task *t, ws_tree *ws)
{
    char err[RL_ERR_MAX];
    double t0 = now_ms();
    if (ws_restore_paths(ws, (const char *const *)t->protected_paths.v, t->protected_paths.n, err))
        die("restore", err);
    testrun r;
    if (testrun_run(&r, t, ws_path(ws), NULL, err))
        die("test run", err);
    double dt = now_ms() - t0;
    testrun_dispose(&r);
    return dt;
}

static double hermetic(const task *t, ws_tree *ws, int *reward)
{
    char err[RL_ERR_MAX];
    double t0 = now_ms();
    testrun_verdict s;
    if (testrun_score(&s, t, ws, NULL, err))
        die("score", err);
    double dt = now_ms() - t0;
    *reward = s.reward;
    testrun_verdict_dispose(&s);
    return dt;
}

static void bench_task(const char *id)
{
    char err[RL_ERR_MAX], path[256];
    snprintf(path, sizeof path, "tasks/%s.json", id);
    task *t;
    if (task_load(&t, path, "repos", err))
        die(path, err);
    ws_opts o;
    ws_opts_default(&o);
    ws_tree *ws;
    if (ws_open_task(&ws, &o, t, 900, err))
        die("ws_open", err);
    if (ws_apply(ws, t->patch, err))
        die("gold patch", err);
    static double a[ITERS], b[ITERS], pair[ITERS];
    int reward = 0;
    in_place(t, ws); /* warm caches and the companion */
    hermetic(t, ws, &reward);
    for (int i = 0; i < ITERS; i++) {
        a[i] = in_place(t, ws);
        b[i] = hermetic(t, ws, &reward);
        if (!reward)
            die(id, "the gold patch did not score 1");
        pair[i] = 100.0 * (b[i] - a[i]) / a[i];
    }
    ws_free(ws);
    task_free(t);
    qsort(a, ITERS, sizeof a[0], cmp_double);
    qsort(b, ITERS, sizeof b[0], cmp_double);
    qsort(pair, ITERS, sizeof pair[0], cmp_double);
    double x = a[ITERS / 2], y = b[ITERS / 2];
    printf("{\"bench\": \"score_hermetic_%s\", \"value\": %.3f, \"unit\": \"ms\", \"baseline\": \"score_in_place\", "
           "\"baseline_value\": %.3f, \"ratio\": %.4f, \"overhead_pct_paired_median\": %.2f, \"iters\": %d}\n",
           id, y, x, x / y, pair[ITERS / 2], ITERS);
}

int main(void)
{
    bench_task("leapyear");
    bench_task("pydate_parse_date");
    return 0;
}
