/* bench_hf.c - the model at the shape of Qwen3-0.6B against PyTorch CPU.
 *
 * The shape: 28 layers, d_model 1024, 16 query / 8 key-value heads of
 * width 128, SwiGLU 3072, vocabulary 151,936, tied embedding, q/k norm,
 * theta 1e6 (596 M parameters). Random weights on both sides (C:
 * model_random_init; PyTorch: bench/torch_model.py's own init), nothing
 * downloaded or written. The window is HF_MAX_SEQ rather than the
 * checkpoint's 40,960: only the rotary tables depend on it.
 *
 * Lines (each with the PyTorch figure as baseline, in the same run):
 *   - generation tokens/s with the KV cache at batch 1 and 8: prompt
 *     HF_PROMPT, HF_NEW new tokens, temperature 1, top-p 0.95, prefill
 *     included; a short warm-up run first on both sides;
 *   - training tokens/s: forward + backward + AdamW at B 1, T HF_TRAIN_T,
 *     one warm-up step then HF_TRAIN_STEPS timed ones;
 *   - peak RSS of inference and of training: each runs in its own process
 *     (C: a forked child, whose ru_maxrss wait4 returns; PyTorch: the
 *     python process reports its own ru_maxrss);
 *   - the same generation with the weights kept in bf16 (model_opts.dtype)
 *     against fp32, and its peak RSS, both in C.
 * Training in fp32 holds weights, gradients and two AdamW moments (~10 GB
 * per side at this shape), so the sides run one after the other, never
 * together: at most one such process is alive at a time.
 * The bench runs itself again with the OpenBLAS kernels the CPU supports
 * (model/blascore.h) before anything else, so both sides use them.
 * RL_BENCH_NO_TORCH=1 skips the baselines; RL_BENCH_HF_SKIP=1 skips the
 * whole bench (a line says so) on machines without the memory.
 */
#include "model/optim.h"
#include "model/blascore.h"
#include "model/model.h"

#include "common/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HF_MAX_SEQ 512
#define HF_PROMPT 16
#define HF_NEW 8
#define HF_WARM_NEW 2   /* warm-up generation: first touch of caches and buffers */
#define HF_TRAIN_T 128
#define HF_TRAIN_STEPS 1
#define PY "/usr/bin/python3 -B"

static void shape(model_config *c)
{
    model_config_default(c);
    c->vocab = 151936;
    c->d_model = 1024;
    c->n_layer = 28;
    c->n_head = 16;
    c->n_kv_head = 8;
    c->head_dim = 128;
    c->d_ff = 3072;
    c->max_seq = HF_MAX_SEQ;
    c->qk_norm = 1;
    c->untied = 0;
    c->rope_theta = 1e6f;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void die(const char *what, const char *err)
{
    fprintf(stderr, "bench_hf: %s: %s\n", what, err);
    exit(1);
}

/* value: ours; base: the baseline's (<= 0: none); ratio = base / value as
 * everywhere, plus "speedup" = value / base for throughputs. */
static void emit(const char *name, double value, const char *unit, const char *baseline,
                 double base, int throughput)
{
    printf("{\"bench\": \"%s\", \"value\": %.6g, \"unit\": \"%s\", ", name, value, unit);
    if (baseline && base > 0 && value > 0 && throughput)
        printf("\"baseline\": \"%s\", \"baseline_value\": %.6g, \"ratio\": %.6g, \"speedup\": %.4g}\n",
               baseline, base, base / value, value / base);
    else if (baseline && base > 0 && value > 0)
        printf("\"baseline\": \"%s\", \"baseline_value\": %.6g, \"ratio\": %.6g}\n", baseline,
               base, base / value);
    else
        printf("\"baseline\": null, \"baseline_value\": null, \"ratio\": null}\n");
    fflush(stdout);
}

/* Results of one C child: generation tokens/s at batch 1 and 8, or
 * training tokens/s; peak RSS in MB from wait4. */
typedef struct side {
    double gen1, gen8, train, rss_mb;
} side;

static model *new_model(int bf16)
{
    char err[RL_ERR_MAX];
    model_config cfg;
    shape(&cfg);
    model_opts mo;
    model_opts_default(&mo);
    mo.dtype = bf16 ? MODEL_DTYPE_BF16 : MODEL_DTYPE_F32;
    model *m;
    if (model_new(&m, &cfg, &mo, err))
        die("model", err);
    model_random_init(m, 1);
    return m;
}

static double generate(model *m, int batch, int new_tokens, uint64_t seed)
{
    char err[RL_ERR_MAX];
    int *prompts[8], lens[8];
    for (int s = 0; s < batch; s++) {
        prompts[s] = malloc(sizeof(int) * HF_PROMPT);
        lens[s] = HF_PROMPT;
        for (int t = 0; t < HF_PROMPT; t++)
            prompts[s][t] = (s * 7919 + t * 104729) % m->cfg.vocab;
    }
    model_sample_opts so;
    model_sample_opts_default(&so);
    so.temperature = 1.0f;
    so.top_p = 0.95f;
    so.max_new = new_tokens;
    so.seed = seed;
    model_sample_out out[8];
    double t0 = now();
    if (model_sample(m, out, (const int *const *)prompts, lens, batch, &so, err))
        die("sampling", err);
    double secs = now() - t0;
    long n = 0;
    for (int s = 0; s < batch; s++) {
        n += out[s].n;
        model_sample_out_dispose(&out[s]);
        free(prompts[s]);
    }
    return (double)n / secs;
}

static void child_generate(FILE *to, int bf16)
{
    model *m = new_model(bf16);
    generate(m, 1, HF_WARM_NEW, 1);
    double g1 = generate(m, 1, HF_NEW, 2);
    double g8 = generate(m, 8, HF_NEW, 3);
    fprintf(to, "%g %g 0\n", g1, g8);
    model_free(m);
}

static void child_train(FILE *to)
{
    char err[RL_ERR_MAX];
    model *m = new_model(0);
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
    int T = HF_TRAIN_T, tok[HF_TRAIN_T], tgt[HF_TRAIN_T];
    float dl[HF_TRAIN_T], logp[HF_TRAIN_T];
    for (int t = 0; t < T; t++) {
        tok[t] = (int)(((unsigned)t * 2654435761u) % (unsigned)m->cfg.vocab);
        tgt[t] = (int)(((unsigned)(t + 1) * 2654435761u) % (unsigned)m->cfg.vocab);
        dl[t] = -1.0f / (float)T;
    }
    double t0 = 0;
    for (int s = 0; s < 1 + HF_TRAIN_STEPS; s++) {
        if (s == 1)
            t0 = now();
        if (model_forward(m, tok, tgt, 1, T, 1.0f, logp, NULL, err) || model_zero_grad(m, err) ||
            model_backward(m, dl, err) || opt_step(opt, m->params, m->grads, NULL, NULL, err))
            die("training step", err);
    }
    fprintf(to, "0 0 %g\n", (double)T * HF_TRAIN_STEPS / (now() - t0));
    opt_free(opt);
    free(spans);
    model_free(m);
}

/* Runs one side in a child process; returns 0 and fills *r. */
static int run_child(side *r, int train, int bf16)
{
    int fd[2];
    if (pipe(fd))
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(fd[0]);
        FILE *to = fdopen(fd[1], "w");
        if (!to)
            _exit(1);
        if (train)
            child_train(to);
        else
            child_generate(to, bf16);
        fclose(to);
        _exit(0);
    }
    close(fd[1]);
    FILE *from = fdopen(fd[0], "r");
    memset(r, 0, sizeof *r);
    int got = from && fscanf(from, "%lf %lf %lf", &r->gen1, &r->gen8, &r->train) == 3;
    if (from)
        fclose(from);
    int st;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || !got)
        return -1;
    r->rss_mb = (double)ru.ru_maxrss / 1024.0;
    return 0;
}

/* One run of bench/torch_model.py; fills the numbers it printed (-1 when
 * absent). */
static int torch_run(const char *args, double *tps, double *rss_mb)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, PY " bench/torch_model.py --shape qwen3-0.6b %s", args);
    *tps = *rss_mb = -1;
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    char line[4096];
    while (fgets(line, sizeof line, p)) {
        char *at = strstr(line, "\"tokens_per_s\": ");
        if (at)
            *tps = strtod(at + 16, NULL);
        at = strstr(line, "\"peak_rss_mb\": ");
        if (at)
            *rss_mb = strtod(at + 15, NULL);
    }
    return pclose(p) == 0 && *tps > 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    (void)argc;
    /* the kernels the binaries run with (model/blascore.h); the PyTorch
     * runs inherit OPENBLAS_CORETYPE */
    blascore_reexec(argv);
    if (getenv("RL_BENCH_HF_SKIP")) {
        fprintf(stderr, "bench_hf: skipped (RL_BENCH_HF_SKIP is set)\n");
        return 0;
    }
    int have_torch = !getenv("RL_BENCH_NO_TORCH") &&
                     system(PY " -c 'import torch' >/dev/null 2>&1") == 0;
    if (!have_torch)
        fprintf(stderr, "bench_hf: PyTorch not available (%s with python3-torch): baselines "
                        "are null\n", PY);
    const char *base = have_torch ? "pytorch-cpu" : NULL;

    side cg, ct, cb;
    if (run_child(&cg, 0, 0))
        die("C generation", "the child failed");
    double tg1 = -1, tg8 = -1, tgr1 = -1, tgr8 = -1, tt = -1, ttr = -1;
    if (have_torch) {
        char args[128];
        snprintf(args, sizeof args, "--gen 1 %d %d 1", HF_PROMPT, HF_NEW);
        if (torch_run(args, &tg1, &tgr1))
            fprintf(stderr, "bench_hf: PyTorch generation at batch 1 failed\n");
        snprintf(args, sizeof args, "--gen 8 %d %d 1", HF_PROMPT, HF_NEW);
        if (torch_run(args, &tg8, &tgr8))
            fprintf(stderr, "bench_hf: PyTorch generation at batch 8 failed\n");
    }
    char unit[160];
    snprintf(unit, sizeof unit, "tokens/s (Qwen3-0.6B shape, batch 1, prompt %d, %d new, KV cache)",
             HF_PROMPT, HF_NEW);
    emit("hf06b_generate_b1_tokens_per_s", cg.gen1, unit, base, tg1, 1);
    snprintf(unit, sizeof unit, "tokens/s (Qwen3-0.6B shape, batch 8, prompt %d, %d new, KV cache)",
             HF_PROMPT, HF_NEW);
    emit("hf06b_generate_b8_tokens_per_s", cg.gen8, unit, base, tg8, 1);
    emit("hf06b_generate_peak_rss", cg.rss_mb, "MB (process peak, fp32 weights, generation)", base,
         tgr1 > tgr8 ? tgr1 : tgr8, 0);

    if (run_child(&cb, 0, 1))
        die("C bf16 generation", "the child failed");
    emit("hf06b_generate_bf16_b1_tokens_per_s", cb.gen1,
         "tokens/s (bf16 weights, batch 1; baseline: C with fp32 weights)", "c-fp32", cg.gen1, 1);
    emit("hf06b_generate_bf16_b8_tokens_per_s", cb.gen8,
         "tokens/s (bf16 weights, batch 8; baseline: C with fp32 weights)", "c-fp32", cg.gen8, 1);
    emit("hf06b_generate_bf16_peak_rss", cb.rss_mb,
         "MB (process peak, bf16 weights; baseline: C with fp32 weights)", "c-fp32", cg.rss_mb, 0);

    if (run_child(&ct, 1, 0))
        die("C training", "the child failed");
    if (have_torch) {
        char args[128];
        snprintf(args, sizeof args, "--train 1 %d %d", HF_TRAIN_T, HF_TRAIN_STEPS);
        if (torch_run(args, &tt, &ttr))
            fprintf(stderr, "bench_hf: PyTorch training failed\n");
    }
    snprintf(unit, sizeof unit, "tokens/s (Qwen3-0.6B shape, B 1, T %d, fwd+bwd+AdamW)",
             HF_TRAIN_T);
    emit("hf06b_train_tokens_per_s", ct.train, unit, base, tt, 1);
    emit("hf06b_train_peak_rss", ct.rss_mb, "MB (process peak, fp32 training)", base, ttr, 0);
    return 0;
}
