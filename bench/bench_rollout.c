/* bench_rollout.c - synchronous against asynchronous rollouts on a
 * workload whose episode lengths have a long tail
 * (configs/grpo-longtail.json: the shipped model, most episodes capped at
 * 3 turns, a seeded share with a cap of 16-32 turns; docs/grpo.md, "The
 * long tail"). Two `grpo train` runs of the same config, seed and number
 * of steps (RL_BENCH_ROLLOUT_STEPS, default 10), one with rollout.mode
 * "sync", then one "async": the same groups in the same order, so the
 * same episode seeds and turn caps. Figures are over steps 2 on.
 *
 * Prints one JSON line, `rollout_longtail`: episodes per second of step
 * time (metrics.jsonl: episodes of the groups each step took / step_s,
 * the figure `compare` reports) async, sync as baseline, their ratio
 * (target 2), the time-weighted slot utilization of each, seconds per
 * step with the rollout, learner and generation seconds in it, the
 * episodes finished per second of step time (async: trained on or still
 * waiting for the rest of their group; the rate trained episodes reach
 * once a run is long enough) and their ratio, the policy tokens generated
 * per second of step time (the rollout's work rate, episodes finished or
 * not), the old
 * turns async dropped as stale, the load average, and the turn counts of
 * every recorded episode (share at or under the config's max_turns, share
 * of 10 turns or more, mean, p90, max).
 *
 * A second line, `rollout_longtail_accel`, runs the same pair with
 * generation on an emulated accelerator: the config's rollouts go to a
 * fleet of one `grpo serve --min-step-ms MS` (RL_BENCH_ROLLOUT_ACCEL_MS,
 * default 25, a decoding step of a 7B-class model on one GPU; 0 skips the
 * line) and one `harness serve` on loopback, started afresh for each
 * mode. Every decoding step then costs the same at batch 1 as at batch 8,
 * as on a GPU, where on this CPU it grows with the batch; the tests still
 * run here. RL_BENCH_ROLLOUT_ONLY=local or accel prints that line alone;
 * RL_BENCH_ROLLOUT_CONFIG names another config; RL_BIN the binaries. */
#include "common/fsutil.h"
#include "tests/srvproc.h"

#include <cJSON.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_EPISODES 4096

typedef struct mode_sums {
    double step_s, busy_s, episodes, finished, rollout_s, train_s, gen_s, gen_tokens, stale;
    int steps;
} mode_sums;

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* Sums over the step lines of run/metrics.jsonl but the first: a run's
 * first step starts with no episode under way (the async one also starts
 * its rollout thread), and from the second on, the episodes under way when
 * a step starts (work of the step before, not counted) stand for those
 * under way when the run ends (work done, not counted either). */
static int read_metrics(const char *run, mode_sums *m)
{
    char path[700], *text, err[512];
    snprintf(path, sizeof path, "%s/metrics.jsonl", run);
    if (fs_read_file(&text, NULL, path, 1 << 26, err) < 0) {
        fprintf(stderr, "bench_rollout: %s\n", err);
        return -1;
    }
    memset(m, 0, sizeof *m);
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        cJSON *o = cJSON_Parse(line);
        if (o && !cJSON_GetObjectItemCaseSensitive(o, "event") && cJSON_GetObjectItemCaseSensitive(o, "step_s") &&
            num(o, "step") > 1) {
            double st = num(o, "step_s");
            m->step_s += st;
            m->busy_s += num(o, "util") * st;
            m->episodes += num(o, "episodes");
            m->finished += num(o, "episodes_finished");
            m->rollout_s += num(o, "rollout_s");
            m->train_s += num(o, "train_s");
            m->gen_s += num(o, "gen_s");
            m->gen_tokens += num(o, "gen_tokens");
            m->stale += num(o, "stale_dropped");
            m->steps++;
        }
        cJSON_Delete(o);
    }
    free(text);
    if (m->steps == 0 || m->step_s <= 0) {
        fprintf(stderr, "bench_rollout: %s has no step lines\n", path);
        return -1;
    }
    return 0;
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* Turn counts of the episodes in records.jsonl, appended at turns + *n. */
static int read_turns(const char *run, int *turns, int *n)
{
    char path[700], *text, err[512];
    snprintf(path, sizeof path, "%s/records.jsonl", run);
    if (fs_read_file(&text, NULL, path, 1 << 30, err) < 0) {
        fprintf(stderr, "bench_rollout: %s\n", err);
        return -1;
    }
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line && *n < MAX_EPISODES;
         line = strtok_r(NULL, "\n", &save)) {
        cJSON *o = cJSON_Parse(line);
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "turns");
        if (cJSON_IsArray(t))
            turns[(*n)++] = cJSON_GetArraySize(t);
        cJSON_Delete(o);
    }
    free(text);
    return 0;
}

static void stop_server(pid_t pid)
{
    if (pid > 0) {
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
    }
}

typedef struct pair_run {
    const char *bin, *base, *dir;
    int steps;
    int accel_ms; /* > 0: generation on an emulated accelerator (a fleet) */
    mode_sums m[2];
    int *turns, n;
} pair_run;

static const char *const MODES[2] = {"sync", "async"};

/* The same config, seed and steps in each mode: the same groups drawn in
 * the same order, so the same episode seeds and turn caps. */
static int run_pair(pair_run *pr)
{
    char err[512];
    const char *tag = pr->accel_ms > 0 ? "accel-" : "";
    for (int k = 0; k < 2; k++) {
        char cfgpath[700], run[600], cmd[2048], fleet[512] = "", *cfgtext = NULL;
        pid_t gen_pid = -1, env_pid = -1;
        if (pr->accel_ms > 0) {
            char exe[600], log[700], ms[16], out[700];
            int gport = 0, eport = 0;
            snprintf(exe, sizeof exe, "%s/grpo", pr->bin);
            snprintf(log, sizeof log, "%s/%sgen-%s.log", pr->dir, tag, MODES[k]);
            snprintf(ms, sizeof ms, "%d", pr->accel_ms);
            char *gargv[] = {exe, "serve", "--ckpt", "models/policy.safetensors", "--port", "0",
                             "--served-model-name", "policy", "--max-batch", "32", "--min-step-ms", ms, NULL};
            gen_pid = sp_start(&gport, log, (const char *const *)gargv, NULL, 30000);
            snprintf(exe, sizeof exe, "%s/harness", pr->bin);
            snprintf(log, sizeof log, "%s/%senv-%s.log", pr->dir, tag, MODES[k]);
            snprintf(out, sizeof out, "%s/%senv-%s.jsonl", pr->dir, tag, MODES[k]);
            char *eargv[] = {exe, "serve", "--port", "0", "--out", out, NULL};
            env_pid = sp_start(&eport, log, (const char *const *)eargv, NULL, 30000);
            if (gen_pid < 0 || env_pid < 0) {
                fprintf(stderr, "bench_rollout: a server did not start (logs in %s)\n", pr->dir);
                stop_server(gen_pid);
                stop_server(env_pid);
                return -1;
            }
            snprintf(fleet, sizeof fleet,
                     ", \"fleet\": {\"generate\": \"http://127.0.0.1:%d/v1\", \"env\": \"http://127.0.0.1:%d\", "
                     "\"model\": \"policy\"}",
                     gport, eport);
        }
        snprintf(cfgpath, sizeof cfgpath, "%s/%s%s.json", pr->dir, tag, MODES[k]);
        snprintf(run, sizeof run, "%s/%s%s", pr->dir, tag, MODES[k]);
        int rc = asprintf(&cfgtext, "{\"extends\": \"%s\", \"out\": \"%s\", \"steps\": %d, "
                                    "\"rollout\": {\"mode\": \"%s\"}%s}",
                          pr->base, run, pr->steps, MODES[k], fleet);
        if (rc < 0 || fs_write_atomic(cfgpath, cfgtext, strlen(cfgtext), err) < 0) {
            fprintf(stderr, "bench_rollout: %s: %s\n", cfgpath, rc < 0 ? "out of memory" : err);
            free(rc < 0 ? NULL : cfgtext);
            stop_server(gen_pid);
            stop_server(env_pid);
            return -1;
        }
        free(cfgtext);
        snprintf(cmd, sizeof cmd, "%s/grpo train --config %s --no-report --quiet > %s.log 2>&1", pr->bin, cfgpath,
                 run);
        rc = system(cmd);
        stop_server(gen_pid);
        stop_server(env_pid);
        if (rc != 0) {
            fprintf(stderr, "bench_rollout: %s failed (log in %s.log)\n", cmd, run);
            return -1;
        }
        if (read_metrics(run, &pr->m[k]) < 0 || read_turns(run, pr->turns, &pr->n) < 0)
            return -1;
    }
    if (pr->n == 0) {
        fprintf(stderr, "bench_rollout: no records\n");
        return -1;
    }
    return 0;
}

static void print_pair(const char *name, pair_run *pr, int short_cap, double tail_share, double load0, double load1)
{
    mode_sums *m = pr->m;
    int n = pr->n, *turns = pr->turns;
    qsort(turns, (size_t)n, sizeof *turns, cmp_int);
    double es = m[0].episodes / m[0].step_s, ea = m[1].episodes / m[1].step_s;
    double fs = m[0].finished / m[0].step_s, fa = m[1].finished / m[1].step_s;
    int nshort = 0, nlong = 0;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        nshort += turns[i] <= short_cap;
        nlong += turns[i] >= 10;
        sum += turns[i];
    }
    printf("{\"bench\": \"%s\", \"value\": %.4f, \"unit\": \"episodes/s\", \"baseline\": \"sync\", "
           "\"baseline_value\": %.4f, \"ratio\": %.3f, \"target_ratio\": 2, \"finished_per_s_sync\": %.4f, "
           "\"finished_per_s_async\": %.4f, \"finished_ratio\": %.3f, \"min_step_ms\": %d, \"util_sync\": %.3f, \"util_async\": "
           "%.3f, \"steps\": %d, \"step_s_sync\": %.1f, \"step_s_async\": %.1f, \"episodes_sync\": %.0f, "
           "\"episodes_async\": %.0f, \"rollout_s_sync\": %.1f, \"rollout_s_async\": %.1f, \"train_s_sync\": %.1f, "
           "\"train_s_async\": %.1f, \"gen_s_sync\": %.1f, \"gen_s_async\": %.1f, \"gen_tokens_per_s_sync\": %.1f, \"gen_tokens_per_s_async\": %.1f, \"stale_dropped_async\": %.0f, "
           "\"episodes_recorded\": %d, \"tail_share\": %.2f, \"turns_share_le_%d\": %.3f, \"turns_share_ge_10\": %.3f, "
           "\"turns_mean\": %.2f, \"turns_p90\": %d, \"turns_max\": %d, \"loadavg\": [%.2f, %.2f]}\n",
           name, ea, es, es > 0 ? ea / es : 0, fs, fa, fs > 0 ? fa / fs : 0, pr->accel_ms, m[0].busy_s / m[0].step_s, m[1].busy_s / m[1].step_s,
           pr->steps, m[0].step_s / m[0].steps, m[1].step_s / m[1].steps, m[0].episodes, m[1].episodes,
           m[0].rollout_s / m[0].steps, m[1].rollout_s / m[1].steps, m[0].train_s / m[0].steps,
           m[1].train_s / m[1].steps, m[0].gen_s / m[0].steps, m[1].gen_s / m[1].steps, m[0].gen_tokens / m[0].step_s,
           m[1].gen_tokens / m[1].step_s, m[1].stale, n, tail_share, short_cap, (double)nshort / n,
           (double)nlong / n, sum / n, turns[(n * 9) / 10], turns[n - 1], load0, load1);
    fflush(stdout);
}

int main(void)
{
    const char *bin = getenv("RL_BIN") ? getenv("RL_BIN") : "bin";
    const char *config = getenv("RL_BENCH_ROLLOUT_CONFIG") ? getenv("RL_BENCH_ROLLOUT_CONFIG")
                                                           : "configs/grpo-longtail.json";
    char dir[] = "/tmp/rl-bench-rollout-XXXXXX", cmd[2048], err[512];
    if (!mkdtemp(dir)) {
        perror("bench_rollout: mkdtemp");
        return 1;
    }
    /* the config's own max_turns: the cap of the episodes outside the tail */
    snprintf(cmd, sizeof cmd, "%s/grpo train --config %s --check", bin, config);
    FILE *p = popen(cmd, "r");
    char *merged = NULL;
    size_t len = 0;
    if (p) {
        char chunk[4096];
        size_t k;
        while ((k = fread(chunk, 1, sizeof chunk, p)) > 0) {
            char *nb = realloc(merged, len + k + 1);
            if (!nb)
                break;
            merged = nb;
            memcpy(merged + len, chunk, k);
            merged[len += k] = '\0';
        }
        pclose(p);
    }
    cJSON *cfg = merged ? cJSON_Parse(merged) : NULL;
    free(merged);
    const cJSON *ep = cJSON_GetObjectItemCaseSensitive(cfg, "episode");
    int short_cap = (int)num(ep, "max_turns");
    double tail_share = num(ep, "tail_share");
    cJSON_Delete(cfg);
    if (short_cap < 1) {
        fprintf(stderr, "bench_rollout: %s --check gave no episode.max_turns\n", config);
        return 1;
    }
    int steps = getenv("RL_BENCH_ROLLOUT_STEPS") ? atoi(getenv("RL_BENCH_ROLLOUT_STEPS")) : 10;
    if (steps < 2 || steps > 100)
        steps = 10;
    char base[PATH_MAX];
    if (!realpath(config, base)) {
        fprintf(stderr, "bench_rollout: %s: not found\n", config);
        return 1;
    }
    int accel_ms = getenv("RL_BENCH_ROLLOUT_ACCEL_MS") ? atoi(getenv("RL_BENCH_ROLLOUT_ACCEL_MS")) : 25;
    if (accel_ms < 0 || accel_ms > 1000)
        accel_ms = 25;
    static int turns[MAX_EPISODES];
    const char *only = getenv("RL_BENCH_ROLLOUT_ONLY"); /* "local" or "accel": that line alone */
    for (int variant = 0; variant < 2; variant++) {
        if ((variant == 1 && accel_ms == 0) || (only && strcmp(only, variant ? "accel" : "local")))
            continue;
        pair_run pr = {.bin = bin, .base = base, .dir = dir, .steps = steps, .accel_ms = variant ? accel_ms : 0,
                       .turns = turns};
        double load0[1] = {0}, load1[1] = {0};
        getloadavg(load0, 1);
        if (run_pair(&pr) < 0)
            return 1;
        getloadavg(load1, 1);
        print_pair(variant ? "rollout_longtail_accel" : "rollout_longtail", &pr, short_cap, tail_share, load0[0],
                   load1[0]);
    }
    if (getenv("RL_BENCH_ROLLOUT_KEEP"))
        fprintf(stderr, "bench_rollout: runs kept in %s\n", dir);
    else
        fs_remove_tree(dir, err);
    return 0;
}
