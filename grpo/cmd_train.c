/* cmd_train.c - `grpo train`: GRPO from the 0/1 test reward.
 *
 *   grpo train --config FILE [--resume DIR] [--out DIR] [--stop-after N]
 *              [--no-report | --report-only] [--quiet] [--check] [--dp]
 *
 * Starts a run in the config's `out` directory (or --out), or continues
 * the run of --resume DIR (a run directory or one of its checkpoints)
 * exactly where its last checkpoint left it. --stop-after N stops after
 * step N with a checkpoint, as a kill would (the schedule still spans the
 * config's steps). When the run reaches its last step and the config has
 * final.sets, the experiment report is written (SFT vs RL on each held-out
 * set); --report-only writes it for a finished run without training.
 * --check validates the config and prints it with every default filled in.
 *
 * Started by `mpirun -n N` (or with --dp), the run is data-parallel over
 * the N ranks (grpo/grpo_dp.h; sync mode): rank 0 writes the run's files
 * and prints; a failure on any rank ends every rank (MPI_Abort) after its
 * one line, and the run continues with --resume from its last checkpoint,
 * at any N.
 */
#include "grpo/cli.h"

#include "common/arg.h"
#include "common/err.h"
#include "common/limits.h"
#include "grpo/grpo.h"
#include "grpo/grpo_dp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: grpo train --config FILE [--resume DIR] [--out DIR] [--stop-after N]\n"
            "                  [--no-report | --report-only] [--quiet] [--check] [--dp]\n"
            "       mpirun -n N grpo train --config FILE ...   (data-parallel over N ranks)\n"
            "\n"
            "GRPO on the train split from the tests' 0/1 reward (docs in grpo/grpo.h).\n"
            "  --config FILE    trainer config (JSON; unknown fields are errors)\n"
            "  --resume DIR     continue a run (its directory or a checkpoint in it)\n"
            "  --out DIR        run directory (overrides the config's out)\n"
            "  --stop-after N   stop after step N with a checkpoint (resume later)\n"
            "  --no-report      skip the final SFT-vs-RL report\n"
            "  --report-only    only write the report of a finished run (needs --resume)\n"
            "  --quiet          no per-step line on stderr\n"
            "  --check          validate the config, print it with defaults, exit\n"
            "  --dp             data-parallel over MPI even at one rank (implied under mpirun);\n"
            "                   sync mode only; rank 0 writes the run; resume at any N\n");
}

static int train(const char *config, const char *resume, const char *out, long stop_after, int no_report,
                 int report_only, int quiet, int check);

int cmd_train(int argc, char **argv)
{
    const char *config = NULL, *resume = NULL, *out = NULL;
    long stop_after = 0;
    int no_report = 0, report_only = 0, quiet = 0, check = 0, dp = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--no-report")) {
            no_report = 1;
        } else if (!strcmp(a, "--report-only")) {
            report_only = 1;
        } else if (!strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (!strcmp(a, "--check")) {
            check = 1;
        } else if (!strcmp(a, "--dp")) {
            dp = 1;
        } else if (v && !strcmp(a, "--config")) {
            config = argv[++i];
        } else if (v && !strcmp(a, "--resume")) {
            resume = argv[++i];
        } else if (v && !strcmp(a, "--out")) {
            out = argv[++i];
        } else if (v && !strcmp(a, "--stop-after")) {
            char aerr[RL_ERR_MAX];
            if (arg_long(&stop_after, a, argv[++i], 1, RL_GRPO_STEPS_MAX, aerr) < 0) {
                fprintf(stderr, "grpo train: %s\n", aerr);
                return 2;
            }
        } else {
            fprintf(stderr, "grpo train: unexpected argument '%s' (see --help)\n", a);
            return 2;
        }
    }
    if (!config || (report_only && !resume)) {
        fprintf(stderr, "grpo train: needs --config FILE%s\n", report_only ? " and --resume DIR" : "");
        usage(stderr);
        return 2;
    }
    char err[RL_ERR_MAX];
    if (!check && dp_init(dp, err) < 0) {
        fprintf(stderr, "grpo train: %s\n", err);
        return 1;
    }
    int rc = train(config, resume, out, stop_after, no_report, report_only, quiet, check);
    dp_finalize();
    return rc;
}

/* One failure: its line (naming the rank at N ranks), and at N ranks the
 * end of every rank. */
static int fail(const char *err)
{
    if (dp_size() > 1) {
        fprintf(stderr, "grpo train: rank %d of %d: %s\n", dp_rank(), dp_size(), err);
        fflush(stderr);
        dp_abort(1);
    }
    fprintf(stderr, "grpo train: %s\n", err);
    return 1;
}

static int train(const char *config, const char *resume, const char *out, long stop_after, int no_report,
                 int report_only, int quiet, int check)
{
    char err[RL_ERR_MAX];
    grpo_config cfg;
    grpo_config_default(&cfg);
    if (grpo_config_load(&cfg, config, err) < 0)
        return fail(err);
    if (out) {
        if (strlen(out) >= sizeof cfg.out) {
            fprintf(stderr, "grpo train: --out: path too long\n");
            return 2;
        }
        snprintf(cfg.out, sizeof cfg.out, "%s", out);
    }
    if (quiet || dp_rank() != 0)
        cfg.quiet = 1;
    if (check) {
        char *json = grpo_config_to_json(&cfg);
        if (!json)
            return 1;
        printf("%s\n", json);
        free(json);
        return 0;
    }
    grpo_trainer *t;
    grpo_opts opts;
    grpo_opts_default(&opts);
    opts.log = cli_log_stderr;
    if (grpo_open(&t, &cfg, resume, &opts, err) < 0)
        return fail(err);
    int rc = 0;
    if (!report_only)
        rc = grpo_train(t, stop_after, err);
    if (rc == 0 && dp_rank() == 0 && cfg.n_final > 0 && !no_report &&
        (report_only || grpo_step_count(t) >= cfg.steps))
        rc = grpo_final_report(t, err);
    if (rc < 0) {
        grpo_close(t);
        return fail(err);
    } else if (!cfg.quiet)
        fprintf(stderr, "grpo train: %ld steps done, run in %s\n", grpo_step_count(t), grpo_run_dir(t));
    grpo_close(t);
    return rc < 0 ? 1 : 0;
}
