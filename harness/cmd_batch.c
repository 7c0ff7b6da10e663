/* cmd_batch.c - `harness batch` and `harness experiment`. */
#include "harness/cli.h"

#include "common/arg.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "harness/batch.h"
#include "harness/cliopt.h"
#include "harness/experiment.h"
#include "harness/report.h"
#include "protocol/tokenizer.h"
#include "corpus/task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SEEDS 4096

static int run_jobs(const batch_job *jobs, size_t n, const char *dir, const batch_opts *bo_in, int bar)
{
    char out[4096], err[RL_ERR_MAX];
    snprintf(out, sizeof out, "%s/trajectories.jsonl", dir);
    batch_opts bo = *bo_in;
    bo.out = out;
    cli_progress prog;
    cli_progress_init(&prog, bar, "episodes");
    bo.progress = cli_progress_show;
    bo.progress_ctx = &prog;
    bo.log = cli_log;
    bo.log_ctx = stderr;
    batch_stats st;
    if (batch_run(&st, jobs, n, &bo, err) < 0) {
        fprintf(stderr, "harness: %s\n", err);
        return 1;
    }
    fprintf(stderr,
            "batch: %zu episodes run (%zu already recorded), %zu passed, %zu errors, %zu flagged by the integrity "
            "check, %.1f s -> %s\n",
            st.done, st.skipped, st.passed, st.errors, st.flagged, st.wall_s, out);
    report_opts ro;
    report_opts_default(&ro);
    ro.log = cli_log;
    ro.log_ctx = stdout;
    if (report_write(dir, &ro, err) < 0) {
        fprintf(stderr, "harness: report: %s\n", err);
        return 1;
    }
    return st.errors ? 1 : 0;
}

typedef struct dirs {
    const char *tasks, *repos, *out;
    int bar;    /* --progress: -1 auto (a bar on a terminal), 0 plain lines, 1 bar */
} dirs;

static int common_flag(batch_opts *bo, dirs *d, int *i, int argc, char **argv, const char *cmd)
{
    const char *f = argv[*i];
    if (strcmp(f, "--workers") && strcmp(f, "--out") && strcmp(f, "--tasks-dir") && strcmp(f, "--repos-dir") &&
        strcmp(f, "--progress"))
        return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "harness %s: %s: expected a value\n", cmd, f);
        return 2;
    }
    const char *v = argv[++*i];
    long l;
    if (!strcmp(f, "--workers")) {
        if (arg_long(&l, f, v, 1, 256, NULL) < 0) {
            fprintf(stderr, "harness %s: --workers: expected 1-256, got '%s'\n", cmd, v);
            return 2;
        }
        bo->workers = (int)l;
    } else if (!strcmp(f, "--out")) {
        d->out = v;
    } else if (!strcmp(f, "--tasks-dir")) {
        d->tasks = v;
    } else if (!strcmp(f, "--repos-dir")) {
        d->repos = v;
    } else if (!strcmp(v, "bar") || !strcmp(v, "plain")) {
        d->bar = !strcmp(v, "bar");
    } else {
        fprintf(stderr, "harness %s: --progress: expected bar or plain, got '%s'\n", cmd, v);
        return 2;
    }
    return 1;
}

static void batch_usage(FILE *f)
{
    fprintf(f, "usage: harness batch --tasks SELECTOR [--policy P] [--seeds 1-3] [--workers N] [--out DIR]\n"
               "                     [--tasks-dir DIR] [--repos-dir DIR]\n"
               "                     [--progress bar|plain] [config flags]\n"
               "SELECTOR: comma-separated ids, globs, split:train|heldout, repo:NAME, kind:K, all.\n"
               "One episode per (task, seed); records go to DIR/trajectories.jsonl (default\n"
               "runs/batch/<digest of the command>), then DIR/summary.md. Running the same\n"
               "command again finishes only the missing episodes.\nconfig flags:\n%s",
            cliopt_config_help());
}

int cmd_batch(int argc, char **argv)
{
    ep_config cfg;
    ep_config_default(&cfg);
    cfg.policy = cli_default_policy();
    batch_opts bo;
    batch_opts_default(&bo);
    const char *sel = NULL, *seeds = "1";
    char err[RL_ERR_MAX];
    dirs d = {"tasks", "repos", NULL, -1};
    for (int i = 1; i < argc; i++) {
        int r;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            batch_usage(stdout);
            return 0;
        }
        if ((r = cliopt_config(&cfg, &i, argc, argv, "batch", err)) == 2) {
            fprintf(stderr, "%s\n", err);
            return 2;
        }
        if (r || (r = common_flag(&bo, &d, &i, argc, argv, "batch"))) {
            if (r == 2)
                return 2;
            continue;
        }
        if ((!strcmp(argv[i], "--tasks") || !strcmp(argv[i], "--seeds")) && i + 1 < argc) {
            *(argv[i][2] == 't' ? &sel : &seeds) = argv[i + 1];
            i++;
            continue;
        }
        fprintf(stderr, "harness batch: unexpected argument '%s' (see --help)\n", argv[i]);
        return 2;
    }
    if (!sel) {
        batch_usage(stderr);
        return 2;
    }
    uint64_t sv[MAX_SEEDS];
    size_t ns;
    if (cliopt_seeds(sv, &ns, MAX_SEEDS, seeds, err) < 0) {
        fprintf(stderr, "harness batch: --seeds: %s\n", err);
        return 2;
    }
    task_set all, chosen;
    if (task_set_load(&all, d.tasks, d.repos, err) < 0) {
        fprintf(stderr, "harness batch: %s\n", err);
        return 1;
    }
    if (task_select(&chosen, &all, sel, err) < 0) {
        fprintf(stderr, "harness batch: --tasks: %s\n", err);
        task_set_dispose(&all);
        return 2;
    }
    tok_t *tok = NULL; /* token accounting for policies without a tokenizer */
    if (cli_load_tokenizer(&tok, NULL, 0, err) < 0)
        fprintf(stderr, "harness batch: token accounting off: %s\n", err);
    cfg.tok = tok;
    batch_job *jobs = calloc(chosen.n * ns + 1, sizeof *jobs);
    size_t n = 0;
    for (size_t t = 0; jobs && t < chosen.n; t++)
        for (size_t s = 0; s < ns; s++)
            jobs[n++] = (batch_job){chosen.v[t], &cfg, sv[s]};
    char dir[4096];
    if (d.out) {
        snprintf(dir, sizeof dir, "%s", d.out);
    } else {
        /* the same command lands in the same directory, so it resumes */
        uint64_t h = ep_config_digest(&cfg);
        for (const char *p = sel; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ULL;
        for (const char *p = seeds; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ULL;
        snprintf(dir, sizeof dir, "runs/batch/%016llx", (unsigned long long)h);
    }
    int rc = jobs ? run_jobs(jobs, n, dir, &bo, d.bar) : 1;
    free(jobs);
    tok_free(tok);
    free(chosen.v);
    task_set_dispose(&all);
    return rc;
}

static void exp_usage(FILE *f)
{
    fprintf(f, "usage: harness experiment FILE [--policy P] [--workers N] [--out DIR] [--progress bar|plain]\n"
               "Runs every run of the experiment (task set x config x seeds) into\n"
               "runs/<experiment>/ (or DIR) and writes the report there. Resumable.\n");
}

int cmd_experiment(int argc, char **argv)
{
    batch_opts bo;
    batch_opts_default(&bo);
    const char *file = NULL, *policy = NULL;
    dirs d = {"tasks", "repos", NULL, -1};
    for (int i = 1; i < argc; i++) {
        int r;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            exp_usage(stdout);
            return 0;
        }
        if ((r = common_flag(&bo, &d, &i, argc, argv, "experiment"))) {
            if (r == 2)
                return 2;
            continue;
        }
        if (!strcmp(argv[i], "--policy") && i + 1 < argc) {
            policy = argv[++i];
            continue;
        }
        if (argv[i][0] == '-' || file) {
            fprintf(stderr, "harness experiment: unexpected argument '%s' (see --help)\n", argv[i]);
            return 2;
        }
        file = argv[i];
    }
    if (!file) {
        exp_usage(stderr);
        return 2;
    }
    char err[RL_ERR_MAX];
    experiment *e;
    if (exp_load(&e, file, err) < 0) {
        fprintf(stderr, "harness experiment: %s\n", err);
        return 1;
    }
    task_set all;
    if (task_set_load(&all, d.tasks, d.repos, err) < 0) {
        fprintf(stderr, "harness experiment: %s\n", err);
        exp_free(e);
        return 1;
    }
    batch_job *jobs;
    size_t n;
    int rc = 1;
    tok_t *tok = NULL;
    if (cli_load_tokenizer(&tok, NULL, 0, err) < 0)
        fprintf(stderr, "harness experiment: token accounting off: %s\n", err);
    for (size_t i = 0; i < e->nruns; i++)
        e->runs[i].cfg.tok = tok;
    if (exp_jobs(&jobs, &n, e, &all, policy, err) < 0) {
        fprintf(stderr, "harness experiment: %s: %s\n", file, err);
    } else {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", d.out ? d.out : "");
        if (!d.out)
            snprintf(dir, sizeof dir, "runs/%s", e->name);
        fprintf(stderr, "experiment %s: %zu runs, %zu episodes -> %s\n", e->name, e->nruns, n, dir);
        rc = run_jobs(jobs, n, dir, &bo, d.bar);
        free(jobs);
    }
    task_set_dispose(&all);
    exp_free(e);
    tok_free(tok);
    return rc;
}
