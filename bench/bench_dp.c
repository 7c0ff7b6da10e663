/* bench_dp.c - data-parallel GRPO (grpo/grpo_dp.h): the step throughput of
 * `mpirun -n 2 grpo train` (one model thread and one tool thread per rank)
 * over one process with one thread, same config and global batch
 * (configs/grpo-dp.json: the smoke config in sync mode), each for
 * RL_BENCH_DP_STEPS steps (default 2). Throughput is episodes per second
 * of step time (metrics.jsonl's step_s: rollout and update, not start-up or
 * checkpoints). Prints one JSON line, `grpo_dp_scaling`: the 2-rank
 * throughput, the 1-rank one as baseline, the efficiency (speed-up / 2;
 * target 0.9) and the load average while it ran; then `grpo_dp_allreduce`:
 * the time of one dp_allreduce_sum_f of the policy model's gradient
 * (4,196,864 floats, 16.8 MB) at 2 ranks on this machine, median of 20
 * (the input of the scaling model in docs/grpo.md). Without MPI in the
 * build or mpirun on PATH the lines have value null and the reason. */
#include "common/clock.h"
#include "common/fsutil.h"
#include "grpo/grpo_dp.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Sums step_s and episodes over the step lines of run/metrics.jsonl. */
static int read_steps(const char *run, double *secs, double *eps, int *steps)
{
    char path[700], *text, err[512];
    snprintf(path, sizeof path, "%s/metrics.jsonl", run);
    if (fs_read_file(&text, NULL, path, 1 << 26, err) < 0) {
        fprintf(stderr, "bench_dp: %s\n", err);
        return -1;
    }
    *secs = *eps = 0;
    *steps = 0;
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        cJSON *o = cJSON_Parse(line);
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "step_s");
        if (o && !cJSON_GetObjectItemCaseSensitive(o, "event") && cJSON_IsNumber(s)) {
            *secs += s->valuedouble;
            *eps += cJSON_GetObjectItemCaseSensitive(o, "episodes")->valuedouble;
            (*steps)++;
        }
        cJSON_Delete(o);
    }
    free(text);
    return *steps > 0 ? 0 : -1;
}

#define AR_FLOATS 4196864 /* the parameters of models/policy.safetensors */
#define AR_ITERS 20

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One rank of the allreduce timing (under mpirun): rank 0 prints the
 * median milliseconds. */
static int allreduce_worker(void)
{
    char err[512];
    if (dp_init(1, err) < 0) {
        fprintf(stderr, "bench_dp: %s\n", err);
        return 1;
    }
    float *g = malloc((size_t)AR_FLOATS * sizeof *g);
    double ms[AR_ITERS];
    if (!g)
        return 1;
    for (size_t i = 0; i < AR_FLOATS; i++)
        g[i] = (float)(i % 7) * 1e-3f;
    for (int it = -2; it < AR_ITERS; it++) {
        double t0 = clk_ms();
        if (dp_allreduce_sum_f(g, AR_FLOATS, err) < 0) {
            fprintf(stderr, "bench_dp: %s\n", err);
            return 1;
        }
        if (it >= 0)
            ms[it] = clk_ms() - t0;
    }
    qsort(ms, AR_ITERS, sizeof ms[0], cmp_double);
    if (dp_rank() == 0)
        printf("%.3f\n", ms[AR_ITERS / 2]);
    free(g);
    dp_finalize();
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--allreduce-worker"))
        return allreduce_worker();
    const char *bin = getenv("RL_BIN") ? getenv("RL_BIN") : "bin";
    const char *st = getenv("RL_BENCH_DP_STEPS");
    int steps = st ? atoi(st) : 2;
    if (steps < 1 || steps > 100)
        steps = 2;
    if (!dp_available() || system("command -v mpirun >/dev/null 2>&1") != 0) {
        printf("{\"bench\": \"grpo_dp_scaling\", \"value\": null, \"unit\": \"episodes/s\", \"baseline\": "
               "\"grpo_1_rank\", \"baseline_value\": null, \"ratio\": null, \"reason\": \"%s\"}\n",
               dp_available() ? "mpirun not on PATH" : "this build has no MPI");
        printf("{\"bench\": \"grpo_dp_allreduce\", \"value\": null, \"unit\": \"ms\", \"baseline\": null, "
               "\"baseline_value\": null, \"ratio\": null, \"reason\": \"%s\"}\n",
               dp_available() ? "mpirun not on PATH" : "this build has no MPI");
        return 0;
    }
    char dir[] = "/tmp/rl-bench-dp-XXXXXX", cmd[2048], err[512];
    if (!mkdtemp(dir)) {
        perror("bench_dp: mkdtemp");
        return 1;
    }
    double load0[1] = {0}, load1[1] = {0};
    getloadavg(load0, 1);
    double secs[2], eps[2];
    int n[2];
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd,
                 "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1 %s %s/grpo train --config "
                 "configs/grpo-dp.json --out %s/run%d --stop-after %d --no-report --quiet > %s/run%d.log 2>&1",
                 k ? "mpirun -n 2 --oversubscribe" : "", bin, dir, k, steps, dir, k);
        char run[600];
        snprintf(run, sizeof run, "%s/run%d", dir, k);
        if (system(cmd) != 0 || read_steps(run, &secs[k], &eps[k], &n[k]) < 0) {
            fprintf(stderr, "bench_dp: %s failed (log in %s/run%d.log)\n", cmd, dir, k);
            return 1;
        }
    }
    getloadavg(load1, 1);
    double thr1 = eps[0] / secs[0], thr2 = eps[1] / secs[1];
    printf("{\"bench\": \"grpo_dp_scaling\", \"value\": %.4f, \"unit\": \"episodes/s\", \"baseline\": "
           "\"grpo_1_rank\", \"baseline_value\": %.4f, \"ratio\": %.4f, \"ranks\": 2, \"efficiency\": %.3f, "
           "\"target\": 0.9, \"steps\": %d, \"step_s_1\": %.2f, \"step_s_2\": %.2f, \"loadavg\": [%.2f, %.2f]}\n",
           thr2, thr1, thr1 / thr2, thr2 / thr1 / 2, n[0], secs[0] / n[0], secs[1] / n[1], load0[0], load1[0]);
    fs_remove_tree(dir, err);
    fflush(stdout);
    /* the allreduce alone */
    snprintf(cmd, sizeof cmd,
             "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1 mpirun -n 2 --oversubscribe %s "
             "--allreduce-worker",
             argv[0]);
    FILE *p = popen(cmd, "r");
    double ms = -1;
    if (!p || fscanf(p, "%lf", &ms) != 1)
        ms = -1;
    if (p)
        pclose(p);
    if (ms < 0) {
        fprintf(stderr, "bench_dp: %s failed\n", cmd);
        return 1;
    }
    printf("{\"bench\": \"grpo_dp_allreduce\", \"value\": %.3f, \"unit\": \"ms\", \"baseline\": null, "
           "\"baseline_value\": null, \"ratio\": null, \"ranks\": 2, \"floats\": %d, \"GB_per_s\": %.2f}\n",
           ms, AR_FLOATS, (double)AR_FLOATS * 4 / (ms * 1e-3) / 1e9);
    return 0;
}
