/* bench_rollout.c - synchronous against asynchronous rollouts on a
 * workload whose episode lengths have a long tail
 * (configs/grpo-longtail.json: the shipped model, most episodes capped at
 * 3 turns, a seeded share with a cap of 16-32 turns; docs/grpo.md, "The
 * long tail"). Two `grpo train` runs of the same config, seed and number
 * of steps (RL_BENCH_ROLLOUT_STEPS, default 6), one with rollout.mode
 * "sync", then one "async": the same groups in the same order, so the
 * same episode seeds and turn caps. Figures are over steps 2 on.
 *
 * Prints one JSON line, `rollout_longtail`: episodes per second of step
 * time (metrics.jsonl: episodes of the groups each step took / step_s,
 * the figure `compare` reports) async, sync as baseline, their ratio
 * (target 2), the time-weighted slot utilization of each, seconds per
 * step with the rollout, learner and generation seconds in it, the
 * policy tokens generated per second of step time (the rollout's work
 * rate, episodes finished or not), the old
 * turns async dropped as stale, the load average, and the turn counts of
 * every recorded episode (share at or under the config's max_turns, share
 * of 10 turns or more, mean, p90, max). RL_BENCH_ROLLOUT_CONFIG names
 * another config; RL_BIN the binaries. */
#include "common/fsutil.h"

#include <cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_EPISODES 4096

typedef struct mode_sums {
    double step_s, busy_s, episodes, rollout_s, train_s, gen_s, gen_tokens, stale;
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

int main(void)
{
    const char *bin = getenv("RL_BIN") ? getenv("RL_BIN") : "bin";
    const char *config = getenv("RL_BENCH_ROLLOUT_CONFIG") ? getenv("RL_BENCH_ROLLOUT_CONFIG")
                                                           : "configs/grpo-longtail.json";
    char dir[] = "/tmp/rl-bench-rollout-XXXXXX", cmd[2048], run[600], err[512];
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
    int steps = getenv("RL_BENCH_ROLLOUT_STEPS") ? atoi(getenv("RL_BENCH_ROLLOUT_STEPS")) : 6;
    if (steps < 2 || steps > 100)
        steps = 6;
    char base[PATH_MAX];
    if (!realpath(config, base)) {
        fprintf(stderr, "bench_rollout: %s: not found\n", config);
        return 1;
    }
    double load0[1] = {0}, load1[1] = {0};
    getloadavg(load0, 1);
    /* the same config, seed and steps in each mode: the same groups drawn
     * in the same order, so the same episode seeds and turn caps */
    static const char *const modes[2] = {"sync", "async"};
    mode_sums m[2];
    static int turns[MAX_EPISODES];
    int n = 0;
    for (int k = 0; k < 2; k++) {
        char cfgpath[700], *cfgtext = NULL;
        snprintf(cfgpath, sizeof cfgpath, "%s/%s.json", dir, modes[k]);
        if (asprintf(&cfgtext, "{\"extends\": \"%s\", \"out\": \"%s/%s\", \"steps\": %d, \"rollout\": {\"mode\": \"%s\"}}",
                     base, dir, modes[k], steps, modes[k]) < 0 ||
            fs_write_atomic(cfgpath, cfgtext, strlen(cfgtext), err) < 0) {
            fprintf(stderr, "bench_rollout: %s: %s\n", cfgpath, err);
            return 1;
        }
        free(cfgtext);
        snprintf(run, sizeof run, "%s/%s", dir, modes[k]);
        snprintf(cmd, sizeof cmd, "%s/grpo train --config %s --no-report --quiet > %s/%s.log 2>&1", bin, cfgpath, dir,
                 modes[k]);
        if (system(cmd) != 0) {
            fprintf(stderr, "bench_rollout: %s failed (log in %s/%s.log)\n", cmd, dir, modes[k]);
            return 1;
        }
        if (read_metrics(run, &m[k]) < 0 || read_turns(run, turns, &n) < 0)
            return 1;
    }
    getloadavg(load1, 1);
    if (n == 0) {
        fprintf(stderr, "bench_rollout: no records\n");
        return 1;
    }
    qsort(turns, (size_t)n, sizeof *turns, cmp_int);
    double es = m[0].episodes / m[0].step_s, ea = m[1].episodes / m[1].step_s;
    int nshort = 0, nlong = 0;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        nshort += turns[i] <= short_cap;
        nlong += turns[i] >= 10;
        sum += turns[i];
    }
    printf("{\"bench\": \"rollout_longtail\", \"value\": %.4f, \"unit\": \"episodes/s\", \"baseline\": \"sync\", "
           "\"baseline_value\": %.4f, \"ratio\": %.3f, \"target_ratio\": 2, \"util_sync\": %.3f, \"util_async\": "
           "%.3f, \"steps\": %d, \"step_s_sync\": %.1f, \"step_s_async\": %.1f, \"episodes_sync\": %.0f, "
           "\"episodes_async\": %.0f, \"rollout_s_sync\": %.1f, \"rollout_s_async\": %.1f, \"train_s_sync\": %.1f, "
           "\"train_s_async\": %.1f, \"gen_s_sync\": %.1f, \"gen_s_async\": %.1f, \"gen_tokens_per_s_sync\": %.1f, \"gen_tokens_per_s_async\": %.1f, \"stale_dropped_async\": %.0f, "
           "\"episodes_recorded\": %d, \"tail_share\": %.2f, \"turns_share_le_%d\": %.3f, \"turns_share_ge_10\": %.3f, "
           "\"turns_mean\": %.2f, \"turns_p90\": %d, \"turns_max\": %d, \"loadavg\": [%.2f, %.2f]}\n",
           ea, es, es > 0 ? ea / es : 0, m[0].busy_s / m[0].step_s, m[1].busy_s / m[1].step_s, steps,
           m[0].step_s / m[0].steps, m[1].step_s / m[1].steps, m[0].episodes, m[1].episodes,
           m[0].rollout_s / m[0].steps, m[1].rollout_s / m[1].steps, m[0].train_s / m[0].steps,
           m[1].train_s / m[1].steps, m[0].gen_s / m[0].steps, m[1].gen_s / m[1].steps, m[0].gen_tokens / m[0].step_s,
           m[1].gen_tokens / m[1].step_s, m[1].stale, n, tail_share,
           short_cap, (double)nshort / n, (double)nlong / n, sum / n, turns[(n * 9) / 10], turns[n - 1], load0[0],
           load1[0]);
    if (getenv("RL_BENCH_ROLLOUT_KEEP"))
        fprintf(stderr, "bench_rollout: runs kept in %s\n", dir);
    else
        fs_remove_tree(dir, err);
    return 0;
}
