/* bench_model.c - the built-in model against PyTorch on this machine.
 *
 * In one run, on the default 5.8 M-parameter config:
 *   - the machine's sgemm peak: best GFLOP/s of a 2048^3 cblas_sgemm on all
 *     cores (OpenBLAS' own threads), measured before and after training
 *     (the best of both: a busy machine only lowers it), the denominator
 *     of MFU;
 *   - training tokens/s: forward + backward + AdamW, B 4, T 1024;
 *   - MFU: model FLOPs/s in training / sgemm peak, where model FLOPs per
 *     token = 3 x forward FLOPs (matrix products incl. the tied head, plus
 *     causal attention scores and mixing; backward's recomputation of the
 *     attention scores is not counted);
 *   - generation tokens/s with the KV cache: batch 8, prompt 32, 128 new
 *     tokens, temperature 1, top-p 0.95 (prefill included in the time);
 *     one warm-up run, then the median of GEN_REPS runs, on both sides;
 *   - long context: one training step at B 1, T 4096, and the peak RSS;
 *   - agreement: PyTorch loads a C checkpoint and recomputes logprobs
 *     (max abs difference), to show both sides run the same model.
 * The machines are shared (other builds may run at the same time), which
 * makes wall-clock figures noisy. So the bench also reports throughput per
 * CPU-second of the process (C and PyTorch alike), and an MFU on CPU time:
 * model FLOPs per CPU-second / single-thread sgemm FLOPs per CPU-second.
 * These do not move when another process takes a core.
 * The PyTorch side is bench/torch_model.py run by /usr/bin/python3 with
 * Debian's python3-torch; without it the baselines are null (stderr says).
 * One JSON object per line, as docs/DEVELOPING.md describes, plus
 * "speedup" = value / baseline_value for throughputs, and "blas_core", the
 * OpenBLAS kernel set both sides ran. This bench does not re-exec itself
 * (model/blascore.h): `--blas-core` prints the set OpenBLAS picked and the
 * one the binaries would ask for ("-" if none), and make bench runs the
 * bench a second time with OPENBLAS_CORETYPE set to the latter.
 */
#include "model/optim.h"
#include "model/blascore.h"
#include "model/model.h"

#include "common/err.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define TRAIN_B 4
#define TRAIN_T 1024
#define TRAIN_STEPS 3
#define TORCH_TRAIN_STEPS 1 /* PyTorch takes ~10 s a step here: keep make bench short */
#define GEN_BATCH 8
#define GEN_PROMPT 32
#define GEN_NEW 128
#define GEN_REPS 3 /* timed generation runs after a warm-up; the median is reported */
#define LONG_T 4096
#define PY "/usr/bin/python3 -B"

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void die(const char *what, const char *err)
{
    fprintf(stderr, "bench_model: %s: %s\n", what, err);
    exit(1);
}

static void emit(const char *name, double value, const char *unit, const char *baseline,
                 double base)
{
    printf("{\"bench\": \"%s\", \"value\": %.6g, \"unit\": \"%s\", \"blas_core\": \"%s\", ", name,
           value, unit, openblas_get_corename());
    if (baseline && base > 0)
        printf("\"baseline\": \"%s\", \"baseline_value\": %.6g, \"ratio\": %.6g, \"speedup\": "
               "%.4g}\n",
               baseline, base, base / value, value / base);
    else
        printf("\"baseline\": null, \"baseline_value\": null, \"ratio\": null}\n");
    fflush(stdout);
}

/* Single-thread sgemm GFLOP per CPU-second (the per-core peak). */
static double sgemm_peak_cpu(void)
{
    int n = 1024, prev = openblas_get_num_threads();
    float *a = calloc((size_t)n * n, sizeof(float)), *b = calloc((size_t)n * n, sizeof(float));
    float *c = calloc((size_t)n * n, sizeof(float));
    openblas_set_num_threads(1);
    double best = 0;
    for (int rep = 0; rep < 5; rep++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c,
                    n);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
        double dt = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        double g = 2.0 * n * n * n / dt / 1e9;
        best = g > best ? g : best;
    }
    free(a), free(b), free(c);
    openblas_set_num_threads(prev);
    return best;
}

static double sgemm_peak(void)
{
    int n = 2048;
    float *a = malloc(sizeof(float) * n * n), *b = malloc(sizeof(float) * n * n);
    float *c = malloc(sizeof(float) * n * n);
    for (long i = 0; i < (long)n * n; i++) {
        a[i] = (float)((i * 7) % 13) * 0.01f;
        b[i] = (float)((i * 5) % 11) * 0.01f;
    }
    int prev = openblas_get_num_threads();
    openblas_set_num_threads((int)sysconf(_SC_NPROCESSORS_ONLN));
    double best = 0;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c,
                    n);
        double g = 2.0 * n * n * n / (now() - t0) / 1e9;
        best = g > best ? g : best;
    }
    free(a), free(b), free(c);
    openblas_set_num_threads(prev); /* the model's pool runs sgemm single-threaded */
    return best;
}

/* Forward FLOPs per token at context T (causal: mean context (T+1)/2). */
static double fwd_flops_per_token(const model *m, int T)
{
    const model_config *c = &m->cfg;
    double d = c->d_model, hd = m->head_dim, dq = hd * c->n_head, dkv = hd * c->n_kv_head;
    double per_layer = 2 * (d * dq + 2 * d * dkv + dq * d + 3 * d * c->d_ff);
    double attn = 2 * 2 * dq * (T + 1) / 2.0;
    return c->n_layer * (per_layer + attn) + 2.0 * d * c->vocab;
}

/* Runs the PyTorch script; returns its tokens_per_s (or -1) and, in
 * *per_cpu, its tokens_per_cpu_s. */
static double torch_run(const char *args, double *per_cpu)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, PY " bench/torch_model.py %s", args);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    char line[65536];
    double v = -1;
    while (fgets(line, sizeof line, p)) {
        char *at = strstr(line, "\"tokens_per_s\": ");
        if (at)
            v = strtod(at + 16, NULL);
        at = strstr(line, "\"tokens_per_cpu_s\": ");
        if (at)
            *per_cpu = strtod(at + 20, NULL);
    }
    int st = pclose(p);
    return st == 0 ? v : -1;
}

/* Median of n values (sorts them). */
static double median(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void train_steps(model *m, adamw *opt, const int *tok, const int *tgt, const float *dl,
                        int B, int T, int steps, float *logp)
{
    char err[RL_ERR_MAX];
    for (int s = 0; s < steps; s++) {
        if (model_forward(m, tok, tgt, B, T, 1.0f, logp, NULL, err) ||
            model_zero_grad(m, err) || model_backward(m, dl, err) ||
            opt_step(opt, m->params, m->grads, NULL, NULL, err))
            die("training step", err);
    }
}

int main(int argc, char **argv)
{
    char err[RL_ERR_MAX];
    if (argc == 2 && !strcmp(argv[1], "--blas-core")) { /* for make bench */
        const char *want = blascore_wanted();
        printf("%s %s\n", openblas_get_corename(), want ? want : "-");
        return 0;
    }
    /* RL_BENCH_NO_TORCH=1 skips the baseline (quick runs while tuning) */
    int have_torch = !getenv("RL_BENCH_NO_TORCH") &&
                     system(PY " -c 'import torch' >/dev/null 2>&1") == 0;
    if (!have_torch)
        fprintf(stderr, "bench_model: PyTorch not available (%s with python3-torch; see "
                        "scripts/install-bench-deps.sh): baselines are null\n",
                PY);
    const char *base = have_torch ? "pytorch-cpu" : NULL;

    double peak = sgemm_peak();

    model_config cfg;
    model_config_default(&cfg);
    model *m;
    if (model_new(&m, &cfg, NULL, err))
        die("model", err);
    model_random_init(m, 1);
    opt_span *spans = calloc((size_t)m->n_tensors, sizeof *spans);
    for (int i = 0; i < m->n_tensors; i++) {
        spans[i].offset = m->tensors[i].offset;
        spans[i].n = m->tensors[i].numel;
        spans[i].decay = !m->tensors[i].is_norm;
    }
    opt_config oc;
    opt_config_default(&oc);
    adamw *opt;
    if (opt_new(&opt, &oc, m->n_params, spans, m->n_tensors, err))
        die("optimizer", err);

    /* training */
    size_t N = (size_t)TRAIN_B * TRAIN_T;
    int *tok = malloc(sizeof(int) * (size_t)LONG_T), *tgt = malloc(sizeof(int) * (size_t)LONG_T);
    float *dl = malloc(sizeof(float) * (size_t)LONG_T), *logp = malloc(sizeof(float) * LONG_T);
    int *btok = malloc(sizeof(int) * N), *btgt = malloc(sizeof(int) * N);
    float *bdl = malloc(sizeof(float) * N), *blogp = malloc(sizeof(float) * N);
    for (size_t i = 0; i < N; i++) {
        btok[i] = (int)((i * 2654435761u) % (unsigned)cfg.vocab);
        btgt[i] = (int)(((i + 1) * 2654435761u) % (unsigned)cfg.vocab);
        bdl[i] = -1.0f / (float)N;
    }
    train_steps(m, opt, btok, btgt, bdl, TRAIN_B, TRAIN_T, 1, blogp); /* warm-up */
    double t0 = now(), c0 = cpu_now();
    train_steps(m, opt, btok, btgt, bdl, TRAIN_B, TRAIN_T, TRAIN_STEPS, blogp);
    double train_tps = (double)N * TRAIN_STEPS / (now() - t0);
    double train_tpc = (double)N * TRAIN_STEPS / (cpu_now() - c0);
    double torch_train = -1, torch_train_cpu = -1;
    if (have_torch) {
        char args[64];
        snprintf(args, sizeof args, "--train %d %d %d", TRAIN_B, TRAIN_T, TORCH_TRAIN_STEPS);
        torch_train = torch_run(args, &torch_train_cpu);
    }
    double peak2 = sgemm_peak();
    peak = peak2 > peak ? peak2 : peak;
    emit("model_sgemm_peak", peak, "GFLOP/s (2048^3, all cores, best of 10)", NULL, 0);
    emit("model_train_tokens_per_s", train_tps, "tokens/s (B 4, T 1024, fwd+bwd+AdamW)", base,
         torch_train);
    double flops = 3.0 * fwd_flops_per_token(m, TRAIN_T);
    emit("model_train_mfu", train_tps * flops / (peak * 1e9), "fraction of measured sgemm peak",
         NULL, 0);
    double core_peak = sgemm_peak_cpu();
    emit("model_sgemm_peak_per_core", core_peak, "GFLOP per CPU-second (1024^3, one thread)",
         NULL, 0);
    emit("model_train_tokens_per_cpu_s", train_tpc, "tokens per CPU-second (B 4, T 1024)", base,
         torch_train_cpu);
    emit("model_train_mfu_cpu_time", train_tpc * flops / (core_peak * 1e9),
         "model FLOPs per CPU-second / per-core sgemm peak", NULL, 0);

    /* generation */
    int *prompts[GEN_BATCH], lens[GEN_BATCH];
    for (int s = 0; s < GEN_BATCH; s++) {
        prompts[s] = malloc(sizeof(int) * GEN_PROMPT);
        lens[s] = GEN_PROMPT;
        for (int t = 0; t < GEN_PROMPT; t++)
            prompts[s][t] = (s * 131 + t * 17) % cfg.vocab;
    }
    model_sample_opts so;
    model_sample_opts_default(&so);
    so.temperature = 1.0f;
    so.top_p = 0.95f;
    so.max_new = GEN_NEW;
    /* one warm-up run (first-touch of the KV caches), then the median of
     * GEN_REPS timed runs; the PyTorch side does the same */
    double gen_s[GEN_REPS], gen_c[GEN_REPS];
    for (int r = -1; r < GEN_REPS; r++) {
        model_sample_out out[GEN_BATCH];
        so.seed = (uint64_t)(r + 2);
        t0 = now();
        c0 = cpu_now();
        if (model_sample(m, out, (const int *const *)prompts, lens, GEN_BATCH, &so, err))
            die("sampling", err);
        double secs = now() - t0, csecs = cpu_now() - c0;
        long n = 0;
        for (int s = 0; s < GEN_BATCH; s++) {
            n += out[s].n;
            model_sample_out_dispose(&out[s]);
        }
        if (r >= 0) {
            gen_s[r] = (double)n / secs;
            gen_c[r] = (double)n / csecs;
        }
    }
    for (int s = 0; s < GEN_BATCH; s++)
        free(prompts[s]);
    double torch_gen = -1, torch_gen_cpu = -1;
    if (have_torch) {
        char args[64];
        snprintf(args, sizeof args, "--gen %d %d %d %d", GEN_BATCH, GEN_PROMPT, GEN_NEW, GEN_REPS);
        torch_gen = torch_run(args, &torch_gen_cpu);
    }
    emit("model_generate_tokens_per_s", median(gen_s, GEN_REPS),
         "tokens/s (batch 8, prompt 32, 128 new, KV cache, median of 3)", base, torch_gen);
    emit("model_generate_tokens_per_cpu_s", median(gen_c, GEN_REPS),
         "tokens per CPU-second (batch 8, prompt 32, 128 new)", base, torch_gen_cpu);

    /* long context: one step at T 4096 */
    for (int t = 0; t < LONG_T; t++) {
        tok[t] = (t * 31 + 7) % cfg.vocab;
        tgt[t] = (t * 31 + 38) % cfg.vocab;
        dl[t] = -1.0f / LONG_T;
    }
    t0 = now();
    train_steps(m, opt, tok, tgt, dl, 1, LONG_T, 1, logp);
    emit("model_train_T4096_tokens_per_s", LONG_T / (now() - t0), "tokens/s (B 1, T 4096)", NULL,
         0);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    emit("model_peak_rss", (double)ru.ru_maxrss / 1024.0, "MB (whole bench, incl. T 4096 step)",
         NULL, 0);

    /* agreement with PyTorch on a C checkpoint */
    if (have_torch) {
        char dir[] = "/tmp/rl-bench-XXXXXX", ck[64], tf[64], args[192];
        if (mkdtemp(dir)) {
            snprintf(ck, sizeof ck, "%s/m.safetensors", dir);
            snprintf(tf, sizeof tf, "%s/tokens.txt", dir);
            enum { L = 200 };
            int seq[L];
            FILE *f = fopen(tf, "w");
            for (int t = 0; t < L && f; t++) {
                seq[t] = (t * 997 + 3) % cfg.vocab;
                fprintf(f, "%d ", seq[t]);
            }
            if (f)
                fclose(f);
            /* sharper weights than the init, so the check has signal */
            for (size_t i = 0; i < m->n_params; i++)
                m->params[i] *= 3.0f;
            float lp[L];
            const int *seqs[1] = {seq};
            float *lps[1] = {lp};
            int len = L;
            if (model_save(m, ck, NULL, err) || model_score(m, lps, seqs, &len, 1, 0.8f, err))
                die("agreement check", err);
            snprintf(args, sizeof args, PY " bench/torch_model.py --logp %s %s 0.8", ck, tf);
            FILE *p = popen(args, "r");
            static char line[1 << 16];
            double worst = -1;
            if (p && fgets(line, sizeof line, p)) {
                char *at = strstr(line, "[");
                worst = 0;
                for (int t = 0; at && t < L - 1; t++) {
                    double v = strtod(at + 1, &at);
                    double d = fabs(v - lp[t]);
                    worst = d > worst ? d : worst;
                }
            }
            if (p)
                pclose(p);
            unlink(ck);
            unlink(tf);
            rmdir(dir);
            if (worst >= 0)
                emit("model_torch_logp_max_abs_diff", worst, "nats (200 tokens, C vs PyTorch)",
                     NULL, 0);
            else
                fprintf(stderr, "bench_model: PyTorch could not score the C checkpoint\n");
        }
    }
    free(tok), free(tgt), free(dl), free(logp), free(btok), free(btgt), free(bdl), free(blogp);
    free(spans);
    opt_free(opt);
    model_free(m);
    return 0;
}
