/* cmd_validate.c - `harness validate`: every task is honest. */
#include "harness/cli.h"

#include "common/arg.h"
#include "common/err.h"
#include "common/limits.h"
#include "harness/cliopt.h"
#include "harness/pool.h"
#include "harness/validate.h"
#include "harness/workspace.h"
#include "corpus/task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct vctx {
    task_set *sel;
    int runs;       /* test runs per stage */
    char **lines;   /* result line per task */
    size_t failed;
    cli_progress prog;
} vctx;

static void v_run(void *user, size_t idx, int slot, buf_t *out)
{
    vctx *v = user;
    const task *t = v->sel->v[idx];
    char err[RL_ERR_MAX];
    ws_opts wo;
    ws_opts_default(&wo);
    ws_tree *ws;
    /* slots above the episode range: validation may run beside a batch */
    if (ws_open_task(&ws, &wo, t, 512 + slot, err) < 0) {
        buf_printf(out, "0 0 0 %s", err);
        return;
    }
    val_result r;
    if (val_task(&r, t, ws, v->runs, err) < 0)
        buf_printf(out, "0 0 0 %s", err);
    else
        buf_printf(out, "%d %.0f %.0f %s", r.ok, r.base_ms, r.gold_ms, r.ok ? r.warn : r.why);
    ws_free(ws);
}

static void v_done(void *user, size_t idx, const char *line)
{
    vctx *v = user;
    v->lines[idx] = strdup(line);
    if (line[0] != '1')
        v->failed++;
}

static void v_died(void *user, size_t idx, const char *why)
{
    vctx *v = user;
    char line[256];
    snprintf(line, sizeof line, "0 0 0 %s", why);
    v->lines[idx] = strdup(line);
    v->failed++;
}

static void v_tick(void *user, size_t done, size_t total)
{
    vctx *v = user;
    char extra[64];
    snprintf(extra, sizeof extra, "failed %zu", v->failed);
    cli_progress_show(&v->prog, done, total, extra);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: harness validate [--task ID | --all | --tasks SELECTOR] [--tasks-dir DIR] [--repos-dir DIR]\n"
               "                        [--runs N] [--workers N] [--progress bar|plain]\n"
               "SELECTOR: comma-separated ids, globs, split:train|heldout, repo:NAME, kind:K, all\n"
               "(--all is --tasks all; --task ID is --tasks ID).\n"
               "At the base every FAIL_TO_PASS test must fail and every PASS_TO_PASS test pass;\n"
               "with the gold patch all must pass. --runs N (default 1, at most %d) runs each\n"
               "stage N times, the later runs under MALLOC_PERTURB_ and a larger environment;\n"
               "with N >= 2 a C task (check or tap, test_cmd runs make) runs once more built\n"
               "under AddressSanitizer and UndefinedBehaviorSanitizer (make's CC, given through\n"
               "MAKEFLAGS; where the sandbox has cgroups), and every test must pass or fail\n"
               "as in run 1. A task whose runs disagree fails, naming the variation (flaky, or\n"
               "reading memory contents or the environment, or a memory error the plain build\n"
               "hides). Prints a table; exit 1 on any failure. A valid task whose test\n"
               "run leaves files that no ignore rule covers (build products, result files) is\n"
               "marked with a warning: they would show in list_files and in recorded patches.\n", RL_VALIDATE_RUNS_MAX);
}

int cmd_validate(int argc, char **argv)
{
    const char *sel = NULL, *tasks_dir = "tasks", *repos_dir = "repos";
    long workers = cliopt_workers(), runs = 1;
    int bar = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--all")) {
            sel = "all";
        } else if ((!strcmp(a, "--task") || !strcmp(a, "--tasks")) && i + 1 < argc) {
            sel = argv[++i];
        } else if (!strcmp(a, "--tasks-dir") && i + 1 < argc) {
            tasks_dir = argv[++i];
        } else if (!strcmp(a, "--repos-dir") && i + 1 < argc) {
            repos_dir = argv[++i];
        } else if (!strcmp(a, "--workers") && i + 1 < argc) {
            if (arg_long(&workers, a, argv[++i], 1, 256, NULL) < 0) {
                fprintf(stderr, "harness validate: --workers: expected 1-256, got '%s'\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(a, "--runs") && i + 1 < argc) {
            if (arg_long(&runs, a, argv[++i], 1, RL_VALIDATE_RUNS_MAX, NULL) < 0) {
                fprintf(stderr, "harness validate: --runs: expected 1-%d, got '%s'\n", RL_VALIDATE_RUNS_MAX, argv[i]);
                return 2;
            }
        } else if (!strcmp(a, "--progress") && i + 1 < argc) {
            const char *v = argv[++i];
            if (strcmp(v, "bar") && strcmp(v, "plain")) {
                fprintf(stderr, "harness validate: --progress: expected bar or plain, got '%s'\n", v);
                return 2;
            }
            bar = !strcmp(v, "bar");
        } else {
            fprintf(stderr, "harness validate: unexpected argument '%s' (see --help)\n", a);
            return 2;
        }
    }
    if (!sel) {
        usage(stderr);
        return 2;
    }
    char err[RL_ERR_MAX];
    task_set all, chosen;
    if (task_set_load(&all, tasks_dir, repos_dir, err) < 0) {
        fprintf(stderr, "harness validate: %s\n", err);
        return 1;
    }
    if (task_select(&chosen, &all, sel, err) < 0) {
        fprintf(stderr, "harness validate: %s\n", err);
        task_set_dispose(&all);
        return 2;
    }
    vctx v = {.sel = &chosen, .runs = (int)runs};
    v.lines = calloc(chosen.n + 1, sizeof *v.lines);
    size_t *jobs = calloc(chosen.n + 1, sizeof *jobs);
    for (size_t i = 0; i < chosen.n; i++)
        jobs[i] = i;
    cli_progress_init(&v.prog, bar, "tasks");
    pool_cbs cb = {v_run, v_done, v_died, v_tick, &v};
    int rc = pool_run(jobs, chosen.n, (int)workers, &cb, err);
    if (rc < 0)
        fprintf(stderr, "harness validate: %s\n", err);
    printf("%-36s %-10s %4s %4s %8s %8s  %s\n", "task", "repo", "F2P", "P2P", "base ms", "gold ms", "result");
    for (size_t i = 0; i < chosen.n; i++) {
        const task *t = chosen.v[i];
        int ok = 0;
        double bms = 0, gms = 0;
        int off = 0;
        const char *line = v.lines[i] ? v.lines[i] : "0 0 0 not run";
        sscanf(line, "%d %lf %lf %n", &ok, &bms, &gms, &off);
        printf("%-36s %-10s %4zu %4zu %8.0f %8.0f  %s%s%s\n", t->instance_id, t->repo, t->fail_to_pass.n,
               t->pass_to_pass.n, bms, gms, ok ? "ok" : "", ok && line[off] ? "; warning: " : "", line + off);
        free(v.lines[i]);
    }
    printf("%zu tasks, %zu valid, %zu failed\n", chosen.n, chosen.n - v.failed, v.failed);
    free(v.lines);
    free(jobs);
    free(chosen.v);
    task_set_dispose(&all);
    return rc < 0 || v.failed ? 1 : 0;
}
