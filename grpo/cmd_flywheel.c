/* cmd_flywheel.c - `grpo flywheel`: rejection sampling into SFT data, a
 * short fine-tune, then RL again.
 *
 *   grpo flywheel --config FILE [--resume DIR] [--out DIR] [--rounds N] [--quiet]
 *
 * One round:
 *   1. probe: flywheel.probe_seeds episodes of every train task with the
 *      current weights, giving each task's pass rate;
 *   2. the flywheel.worst_tasks tasks it fails most (lowest pass rate,
 *      ties by id) get flywheel.samples episodes each at
 *      flywheel.temperature; the successful ones are kept (rejection
 *      sampling) and appended, as trajectory records, to
 *      <run>/flywheel/round-K.jsonl and <run>/flywheel/sft-data.jsonl;
 *   3. cross-entropy on their policy tokens for flywheel.sft_epochs passes
 *      at flywheel.sft_lr, then a checkpoint;
 *   4. flywheel.rl_steps GRPO steps (up to the config's steps).
 */
#include "grpo/cli.h"

#include "common/buf.h"
#include "common/arg.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "grpo/grpo.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: grpo flywheel --config FILE [--resume DIR] [--out DIR] [--rounds N] [--quiet]\n"
               "\n"
               "Samples the current policy on the train tasks it fails most, keeps the\n"
               "successful trajectories as SFT data, fine-tunes on them briefly, then\n"
               "resumes GRPO (settings under \"flywheel\" in the config).\n");
}

typedef struct task_rate {
    const char *id;
    size_t n, pass;
} task_rate;

static int by_rate(const void *a, const void *b)
{
    const task_rate *x = a, *y = b;
    double rx = x->n ? (double)x->pass / (double)x->n : 0, ry = y->n ? (double)y->pass / (double)y->n : 0;
    if (rx != ry)
        return rx < ry ? -1 : 1;
    return strcmp(x->id, y->id);
}

/* Pass rate of every task from a probe. */
static int rates_of(task_rate **out, size_t *n, const grpo_episodes *e)
{
    task_rate *r = calloc(e->n ? e->n : 1, sizeof *r);
    if (!r)
        return RL_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < e->n; i++) {
        size_t j = 0;
        while (j < k && strcmp(r[j].id, e->task[i]))
            j++;
        if (j == k)
            r[k++].id = e->task[i];
        r[j].n++;
        r[j].pass += e->reward[i] > 0.5;
    }
    qsort(r, k, sizeof *r, by_rate);
    *out = r;
    *n = k;
    return 0;
}

static int round_run(grpo_trainer *t, const grpo_config *c, int round, char *err)
{
    char dir[GRPO_PATH_MAX + 32], path[GRPO_PATH_MAX + 64], all[GRPO_PATH_MAX + 64];
    snprintf(dir, sizeof dir, "%s/flywheel", grpo_run_dir(t));
    snprintf(path, sizeof path, "%s/round-%d-step-%ld.jsonl", dir, round, grpo_step_count(t));
    snprintf(all, sizeof all, "%s/sft-data.jsonl", dir);
    int rc = fs_mkdirs(dir, err);
    if (rc < 0)
        return rc;
    /* 1. probe */
    uint64_t seed0 = 1000000ull * (uint64_t)(round + 1) + (uint64_t)grpo_step_count(t) * 1000;
    grpo_episodes probe;
    if ((rc = grpo_collect(&probe, t, GRPO_POLICY_MODEL, c->train_tasks, c->fw_probe_seeds, seed0, c->temperature, err)) < 0)
        return rc;
    task_rate *rates;
    size_t nr;
    if (rates_of(&rates, &nr, &probe) < 0) {
        grpo_episodes_dispose(&probe);
        return rl_err(err, RL_ENOMEM, "flywheel: out of memory");
    }
    /* 2. the tasks it fails most, as a selector of ids */
    buf_t sel;
    buf_init(&sel, RL_TASK_SELECT_TERMS_MAX * (RL_TASK_ID_MAX + 1));
    size_t picked = 0;
    for (size_t i = 0; i < nr && picked < (size_t)c->fw_worst_tasks; i++) {
        if (rates[i].n && rates[i].pass == rates[i].n)
            break; /* solved every time: nothing to learn there */
        buf_printf(&sel, "%s%s", picked ? "," : "", rates[i].id);
        picked++;
    }
    if (!c->quiet) {
        fprintf(stderr, "flywheel round %d: probe of %zu episodes; worst tasks:", round, probe.n);
        for (size_t i = 0; i < picked; i++)
            fprintf(stderr, " %s (%zu/%zu)", rates[i].id, rates[i].pass, rates[i].n);
        fprintf(stderr, "\n");
    }
    free(rates);
    grpo_episodes_dispose(&probe);
    size_t kept = 0;
    double loss = 0;
    grpo_episodes s = {0};
    if (picked > 0) {
        rc = grpo_collect(&s, t, (grpo_policy_kind)c->fw_policy, buf_str(&sel), c->fw_samples, seed0 + 500000, c->fw_temperature, err);
        char **good = rc == 0 ? calloc(s.n ? s.n : 1, sizeof *good) : NULL;
        if (rc == 0 && !good)
            rc = rl_err(err, RL_ENOMEM, "flywheel: out of memory");
        for (size_t i = 0; rc == 0 && i < s.n; i++) {
            if (!s.rec[i] || !(s.reward[i] > 0.5))
                continue; /* rejection sampling: only what passed the tests */
            good[kept++] = s.rec[i];
            if ((rc = fs_append_record(path, s.rec[i], strlen(s.rec[i]), err)) == 0)
                rc = fs_append_record(all, s.rec[i], strlen(s.rec[i]), err);
        }
        /* 3. a brief fine-tune on them */
        if (rc == 0 && kept > 0)
            rc = grpo_sft(&loss, t, good, kept, c->fw_sft_epochs, c->fw_sft_lr, err);
        free(good);
    }
    buf_dispose(&sel);
    size_t sampled = s.n;
    grpo_episodes_dispose(&s);
    if (rc < 0)
        return rc;
    if (!c->quiet)
        fprintf(stderr, "flywheel round %d: kept %zu of %zu samples; SFT loss %.4f\n", round, kept, sampled, loss);
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "event", "flywheel");
    cJSON_AddNumberToObject(e, "round", round);
    cJSON_AddNumberToObject(e, "step", (double)grpo_step_count(t));
    cJSON_AddNumberToObject(e, "tasks", (double)picked);
    cJSON_AddNumberToObject(e, "sampled", (double)sampled);
    cJSON_AddNumberToObject(e, "kept", (double)kept);
    cJSON_AddNumberToObject(e, "sft_loss", loss);
    rc = grpo_log_event(t, e, err);
    cJSON_Delete(e);
    if (rc < 0)
        return rc;
    /* 4. resume RL */
    if (c->fw_rl_steps > 0)
        return grpo_train(t, grpo_step_count(t) + c->fw_rl_steps, err);
    return grpo_checkpoint(t, err);
}

int cmd_flywheel(int argc, char **argv)
{
    const char *config = NULL, *resume = NULL, *out = NULL;
    long rounds = 0;
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (v && !strcmp(a, "--config")) {
            config = argv[++i];
        } else if (v && !strcmp(a, "--resume")) {
            resume = argv[++i];
        } else if (v && !strcmp(a, "--out")) {
            out = argv[++i];
        } else if (v && !strcmp(a, "--rounds")) {
            char aerr[RL_ERR_MAX];
            if (arg_long(&rounds, a, argv[++i], 1, RL_GRPO_FLYWHEEL_ROUNDS_MAX, aerr) < 0) {
                fprintf(stderr, "grpo flywheel: %s\n", aerr);
                return 2;
            }
        } else {
            fprintf(stderr, "grpo flywheel: unexpected argument '%s' (see --help)\n", a);
            return 2;
        }
    }
    if (!config) {
        usage(stderr);
        return 2;
    }
    char err[RL_ERR_MAX];
    grpo_config cfg;
    grpo_config_default(&cfg);
    if (grpo_config_load(&cfg, config, err) < 0) {
        fprintf(stderr, "grpo flywheel: %s\n", err);
        return 1;
    }
    if (out)
        snprintf(cfg.out, sizeof cfg.out, "%s", out);
    if (quiet)
        cfg.quiet = 1;
    grpo_trainer *t;
    grpo_opts opts;
    grpo_opts_default(&opts);
    opts.log = cli_log_stderr;
    if (grpo_open(&t, &cfg, resume, &opts, err) < 0) {
        fprintf(stderr, "grpo flywheel: %s\n", err);
        return 1;
    }
    int rc = 0;
    for (long r = 0; rc == 0 && r < (rounds ? rounds : cfg.fw_rounds); r++)
        rc = round_run(t, &cfg, (int)r, err);
    if (rc < 0)
        fprintf(stderr, "grpo flywheel: %s\n", err);
    grpo_close(t);
    return rc < 0 ? 1 : 0;
}
