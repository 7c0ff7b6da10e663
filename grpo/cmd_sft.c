/* cmd_sft.c - `grpo sft`: supervised fine-tuning on trajectory records.
 *
 *   grpo sft --data TRAJ.jsonl[,...] --config FILE --out CKPT [--log FILE] [--quiet]
 *
 * Exit codes: 0 trained and saved; 1 the run failed (bad data file, no
 * samples, I/O); 2 usage (flags, or a config file that is not valid).
 */
#include "grpo/cli.h"

#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "grpo/sft.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: grpo sft --data TRAJ.jsonl[,...] --config FILE --out CKPT [--log FILE] [--quiet]\n"
               "Trains the built-in model on the policy-written tokens of trajectory records\n"
               "(cross-entropy, AdamW, warmup + cosine). --data may be repeated; --log appends\n"
               "one JSON line of metrics per step. Config fields: see grpo/sft.h.\n");
}

/* Splits a comma list into files[] (pointers into the copy s). */
static int add_files(const char **files, int *n, char *s)
{
    for (char *save = NULL, *p = strtok_r(s, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        if (*n >= RL_SFT_DATA_FILES_MAX)
            return -1;
        files[(*n)++] = p;
    }
    return 0;
}

int cmd_sft(int argc, char **argv)
{
    const char *files[RL_SFT_DATA_FILES_MAX];
    char *copies[RL_SFT_DATA_FILES_MAX];
    int n_files = 0, n_copies = 0, quiet = 0, rc = 2;
    const char *config = NULL, *out = NULL, *log = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            rc = 0;
            goto done;
        }
        if (!strcmp(a, "--quiet")) {
            quiet = 1;
            continue;
        }
        if (i + 1 >= argc || (strcmp(a, "--data") && strcmp(a, "--config") && strcmp(a, "--out") && strcmp(a, "--log"))) {
            fprintf(stderr, "grpo sft: unexpected argument '%s' (see --help)\n", a);
            goto done;
        }
        const char *v = argv[++i];
        if (!strcmp(a, "--data")) {
            if (n_copies >= RL_SFT_DATA_FILES_MAX || !(copies[n_copies] = strdup(v))) {
                fprintf(stderr, "grpo sft: --data: at most %d files\n", RL_SFT_DATA_FILES_MAX);
                goto done;
            }
            if (add_files(files, &n_files, copies[n_copies++]) < 0) {
                fprintf(stderr, "grpo sft: --data: at most %d files\n", RL_SFT_DATA_FILES_MAX);
                goto done;
            }
        } else if (!strcmp(a, "--config")) {
            config = v;
        } else if (!strcmp(a, "--out")) {
            out = v;
        } else {
            log = v;
        }
    }
    if (!n_files || !config || !out) {
        fprintf(stderr, "grpo sft: needs --data, --config and --out (see --help)\n");
        goto done;
    }
    char err[RL_ERR_MAX];
    sft_config c;
    sft_config_default(&c);
    if (sft_config_load(&c, config, err) < 0) {
        fprintf(stderr, "grpo sft: %s\n", err);
        sft_config_dispose(&c);
        goto done;
    }
    /* the checkpoint and the metrics go where asked: make their folders */
    const char *paths[2] = {out, log};
    for (int k = 0; k < 2; k++) {
        char d[4096];
        if (!paths[k])
            continue;
        fs_dirname(d, sizeof d, paths[k]);
        if (fs_mkdirs(d, err) < 0) {
            fprintf(stderr, "grpo sft: %s\n", err);
            sft_config_dispose(&c);
            rc = 1;
            goto done;
        }
    }
    sft_io io = {.log = quiet ? NULL : cli_log_stderr, .metrics = log};
    sft_result res;
    rc = 0;
    if (sft_run(&res, &c, files, n_files, out, &io, err) < 0) {
        fprintf(stderr, "grpo sft: %s\n", err);
        rc = 1;
    }
    sft_config_dispose(&c);
done:
    for (int i = 0; i < n_copies; i++)
        free(copies[i]);
    return rc;
}
