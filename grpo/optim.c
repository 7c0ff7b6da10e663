/* optim.c - AdamW, its learning-rate schedule and gradient clipping
 * (see optim.h). */
#include "grpo/optim.h"

#include "common/err.h"
#include "common/limits.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void opt_config_default(opt_config *c)
{
    c->lr = 3e-4f;
    c->beta1 = 0.9f;
    c->beta2 = 0.95f;
    c->eps = 1e-8f;
    c->weight_decay = 0.1f;
    c->grad_clip = 1.0f;
    c->warmup_steps = 100;
    c->total_steps = 10000;
    c->min_lr_ratio = 0.1f;
}

int opt_new(adamw **out, const opt_config *cfg, size_t n, const opt_span *spans, int n_spans,
            char *err)
{
    *out = NULL;
    if (n == 0 || n > RL_OPT_PARAMS_MAX)
        return rl_err(err, RL_EINVAL, "optimizer: %zu parameters, expected 1..%u", n,
                      RL_OPT_PARAMS_MAX);
    if (n_spans < 0 || n_spans > RL_OPT_SPANS_MAX)
        return rl_err(err, RL_EINVAL, "optimizer: %d spans, expected 0..%d", n_spans,
                      RL_OPT_SPANS_MAX);
    if (!(cfg->lr >= 0.0f) || !(cfg->beta1 >= 0.0f && cfg->beta1 < 1.0f) ||
        !(cfg->beta2 >= 0.0f && cfg->beta2 < 1.0f) || !(cfg->eps > 0.0f) ||
        !(cfg->weight_decay >= 0.0f) || cfg->warmup_steps < 0 ||
        !(cfg->min_lr_ratio >= 0.0f && cfg->min_lr_ratio <= 1.0f))
        return rl_err(err, RL_EINVAL,
                      "optimizer: expected lr >= 0, betas in [0,1), eps > 0, weight_decay >= 0, "
                      "warmup >= 0, min_lr_ratio in [0,1]");
    adamw *o = calloc(1, sizeof *o);
    if (!o)
        return rl_err(err, RL_ENOMEM, "optimizer: out of memory");
    o->cfg = *cfg;
    o->n = n;
    o->m = calloc(n, sizeof(float));
    o->v = calloc(n, sizeof(float));
    o->decay = calloc(n, 1);
    if (!o->m || !o->v || !o->decay) {
        opt_free(o);
        return rl_err(err, RL_ENOMEM, "optimizer: out of memory for %zu parameters", n);
    }
    for (int i = 0; i < n_spans; i++) {
        if (spans[i].offset > n || spans[i].n > n - spans[i].offset) {
            opt_free(o);
            return rl_err(err, RL_EINVAL, "optimizer: span %d [%zu, +%zu) outside %zu parameters",
                          i, spans[i].offset, spans[i].n, n);
        }
        memset(o->decay + spans[i].offset, spans[i].decay ? 1 : 0, spans[i].n);
    }
    *out = o;
    return 0;
}

void opt_free(adamw *o)
{
    if (!o)
        return;
    free(o->m);
    free(o->v);
    free(o->decay);
    free(o);
}

float opt_lr_at(const opt_config *c, long step)
{
    if (step < c->warmup_steps)
        return c->lr * (float)(step + 1) / (float)c->warmup_steps;
    if (c->total_steps <= c->warmup_steps)
        return c->lr;
    double progress = (double)(step - c->warmup_steps) / (double)(c->total_steps - c->warmup_steps);
    if (progress > 1.0)
        progress = 1.0;
    double floor = c->lr * (double)c->min_lr_ratio;
    return (float)(floor + (c->lr - floor) * 0.5 * (1.0 + cos(M_PI * progress)));
}

double opt_clip_grad_norm(float *g, size_t n, float max_norm)
{
    double ss = 0.0;
    for (size_t i = 0; i < n; i++)
        ss += (double)g[i] * g[i];
    double norm = sqrt(ss);
    if (!isfinite(norm))
        return norm;
    if (max_norm > 0.0f && norm > max_norm) {
        float s = (float)(max_norm / norm);
        for (size_t i = 0; i < n; i++)
            g[i] *= s;
    }
    return norm;
}

int opt_step(adamw *o, float *params, float *grads, double *out_norm, float *out_lr, char *err)
{
    const opt_config *c = &o->cfg;
    double norm = opt_clip_grad_norm(grads, o->n, c->grad_clip);
    if (out_norm)
        *out_norm = norm;
    float lr = opt_lr_at(c, o->step);
    if (out_lr)
        *out_lr = lr;
    if (!isfinite(norm))
        return rl_err(err, RL_EINVAL, "optimizer step %ld: gradient norm is %g, update skipped",
                      o->step, norm);
    long t = o->step + 1;
    float bc1 = 1.0f - powf(c->beta1, (float)t), bc2 = 1.0f - powf(c->beta2, (float)t);
    for (size_t i = 0; i < o->n; i++) {
        float g = grads[i];
        float m = o->m[i] = c->beta1 * o->m[i] + (1.0f - c->beta1) * g;
        float v = o->v[i] = c->beta2 * o->v[i] + (1.0f - c->beta2) * g * g;
        float mhat = m / bc1, vhat = v / bc2;
        float w = params[i];
        if (o->decay[i])
            w -= lr * c->weight_decay * w;
        params[i] = w - lr * mhat / (sqrtf(vhat) + c->eps);
    }
    o->step = t;
    return 0;
}
