/* cmd_report.c - `harness report DIR`: summary.md, summary.json, plots. */
#include "harness/cli.h"

#include "common/arg.h"
#include "common/err.h"
#include "harness/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: harness report DIR [--std population|unbiased] [--lambda F] [--quiet]\n"
               "Reads every *.jsonl trajectory file under DIR and writes DIR/summary.md,\n"
               "DIR/summary.json and SVG plots.\n");
}

int cmd_report(int argc, char **argv)
{
    report_opts o;
    int quiet = 0;
    report_opts_default(&o);
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--std") && i + 1 < argc) {
            const char *v = argv[++i];
            if (!strcmp(v, "population"))
                o.std_mode = STATS_STD_POPULATION;
            else if (!strcmp(v, "unbiased"))
                o.std_mode = STATS_STD_UNBIASED;
            else {
                fprintf(stderr, "harness report: --std: expected population or unbiased, got '%s'\n", v);
                return 2;
            }
        } else if (!strcmp(a, "--lambda") && i + 1 < argc) {
            char aerr[RL_ERR_MAX];
            if (arg_double(&o.lambda, a, argv[++i], 0, 1, aerr) < 0 || !(o.lambda > 0)) {
                fprintf(stderr, "harness report: --lambda: expected a number in (0, 1], got '%s'\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (a[0] == '-' || dir) {
            fprintf(stderr, "harness report: unexpected argument '%s' (see --help)\n", a);
            return 2;
        } else {
            dir = a;
        }
    }
    if (!dir) {
        usage(stderr);
        return 2;
    }
    if (!quiet) {
        o.log = cli_log;
        o.log_ctx = stdout;
    }
    char err[RL_ERR_MAX];
    if (report_write(dir, &o, err) < 0) {
        fprintf(stderr, "harness report: %s\n", err);
        return 1;
    }
    return 0;
}
