/* optim.h - AdamW with a warmup + cosine learning-rate schedule and
 * global-norm gradient clipping.
 *
 * The optimizer owns its moment buffers (m, v) for n parameters laid out
 * flat, and a list of spans saying which ranges get weight decay (the
 * model's matrices) and which do not (norm gains; the embedding is the
 * caller's choice). Decay is decoupled (AdamW): w -= lr * wd * w, applied
 * apart from the Adam step.
 *
 * Schedule: lr(step) rises linearly from lr/warmup to lr over warmup steps
 * (step counted from 0), then follows a cosine from lr down to
 * lr * min_lr_ratio at total_steps, and stays there.
 */
#ifndef RL_OPTIM_H
#define RL_OPTIM_H

#include <stddef.h>

typedef struct opt_config {
    float lr;           /* peak learning rate */
    float beta1, beta2, eps;
    float weight_decay; /* on spans with decay = 1 */
    float grad_clip;    /* max global L2 norm; <= 0: no clipping */
    long warmup_steps;
    long total_steps;   /* end of the cosine; <= warmup: constant lr after warmup */
    float min_lr_ratio; /* floor of the cosine, as a fraction of lr */
} opt_config;

/* lr 3e-4, betas 0.9 / 0.95, eps 1e-8, wd 0.1, clip 1.0, warmup 100,
 * total 10000, floor 0.1. */
void opt_config_default(opt_config *c);

typedef struct opt_span {
    size_t offset, n; /* in floats */
    int decay;        /* 1: weight decay applies */
} opt_span;

typedef struct adamw {
    opt_config cfg;
    size_t n;
    float *m, *v;
    unsigned char *decay; /* per parameter, from the spans */
    long step;            /* updates done so far */
} adamw;

/* Spans must cover disjoint ranges inside [0, n); uncovered parameters
 * get no decay. */
int opt_new(adamw **out, const opt_config *cfg, size_t n, const opt_span *spans, int n_spans,
            char *err);
void opt_free(adamw *o);

/* Learning rate at a step under the schedule. */
float opt_lr_at(const opt_config *c, long step);

/* Global L2 norm of g (accumulated in double). If max_norm > 0 and the norm
 * exceeds it, scales g so its norm is max_norm. Returns the norm BEFORE
 * clipping (inf/nan if any gradient is not finite; g is then untouched). */
double opt_clip_grad_norm(float *g, size_t n, float max_norm);

/* One AdamW update at the current step: clips grads (global norm), then
 * updates params, step++. A non-finite gradient norm changes nothing and
 * returns RL_EINVAL (the caller decides: skip the batch or roll back).
 * out_norm (may be NULL) receives the pre-clip norm, out_lr the lr used. */
int opt_step(adamw *o, float *params, float *grads, double *out_norm, float *out_lr, char *err);

/* Optimizer state (step, m, v) as a safetensors file (tensors "m" and "v",
 * F32 [n]; __metadata__ format "rl-adamw-v1" and the step), written via
 * temp file + rename, so a killed run resumes exactly. opt_load needs an
 * optimizer of the same size; any defect is a one-line error and leaves
 * the optimizer unchanged. */
int opt_save(const adamw *o, const char *path, char *err);
int opt_load(adamw *o, const char *path, char *err);

#endif
