/* loss.c - PPO-clip + k3 KL coefficients per token (loss.h). */
#include "grpo/loss.h"

#include <math.h>

/* |logp - behav| past this is clamped before exp: the ratio is e^20 ~ 5e8,
 * clipped anyway; the clamp only keeps inf out of the metrics. */
#define LOG_RATIO_MAX 20.0

void grpo_loss_opts_default(grpo_loss_opts *o)
{
    o->eps_low = 0.2;
    o->eps_high = 0.28;
    o->dual_clip = 3.0;
    o->kl_coef = 0.05;
    o->agg = GRPO_AGG_TOKEN_MEAN;
    o->max_staleness = 1;
}

int grpo_token_fresh(long version, long current, long max_staleness)
{
    if (version <= 0)
        return 1;
    return current - version <= max_staleness;
}

double grpo_loss_weight(const grpo_loss_opts *o, size_t kept, size_t kept_total, size_t seqs_total)
{
    if (!kept || !kept_total || !seqs_total)
        return 0.0;
    if (o->agg == GRPO_AGG_SEQ_MEAN)
        return 1.0 / ((double)seqs_total * (double)kept);
    return 1.0 / (double)kept_total;
}

void grpo_loss_stats_init(grpo_loss_stats *s)
{
    *s = (grpo_loss_stats){0};
    s->ratio_min = INFINITY;
    s->ratio_max = -INFINITY;
}

double grpo_loss_tokens(float *coef, grpo_loss_stats *st, const grpo_loss_opts *o, const float *logp,
                        const float *behav, const float *ref, const float *entropy, const float *adv,
                        const float *w, size_t n)
{
    double total = 0.0;
    int use_kl = ref && o->kl_coef != 0.0;
    for (size_t t = 0; t < n; t++) {
        if (!(w[t] > 0.0f)) {
            coef[t] = 0.0f;
            continue;
        }
        double W = w[t], A = adv[t];
        double d = (double)logp[t] - (double)behav[t];
        double dc = d > LOG_RATIO_MAX ? LOG_RATIO_MAX : d < -LOG_RATIO_MAX ? -LOG_RATIO_MAX : d;
        double r = exp(dc);
        double lo = 1.0 - o->eps_low, hi = 1.0 + o->eps_high;
        double rc = r < lo ? lo : r > hi ? hi : r;
        /* min(r A, clip(r) A): the clipped side wins when it is smaller */
        int clipped = (A > 0 && r > hi) || (A < 0 && r < lo);
        double pg = clipped ? -rc * A : -r * A;
        double dpg = clipped ? 0.0 : -A * r;
        if (o->dual_clip > 1.0 && A < 0 && -o->dual_clip * A < pg) {
            /* dual clip: a negative-advantage token with a huge ratio */
            pg = -o->dual_clip * A;
            dpg = 0.0;
            clipped = 1;
        }
        double kl = 0.0, dkl = 0.0;
        if (ref) {
            double x = (double)ref[t] - (double)logp[t];
            x = x > LOG_RATIO_MAX ? LOG_RATIO_MAX : x < -LOG_RATIO_MAX ? -LOG_RATIO_MAX : x;
            double ex = exp(x);
            kl = ex - x - 1.0;
            dkl = 1.0 - ex;
        }
        double term = pg + (use_kl ? o->kl_coef * kl : 0.0);
        coef[t] = (float)(W * (dpg + (use_kl ? o->kl_coef * dkl : 0.0)));
        total += W * term;
        if (st) {
            st->loss += W * term;
            st->pg += W * pg;
            st->kl_term += use_kl ? W * o->kl_coef * kl : 0.0;
            if (ref) {
                st->kl_sum += kl;
                st->has_kl = 1;
            }
            if (entropy) {
                st->ent_sum += entropy[t];
                st->has_ent = 1;
            }
            st->ratio_sum += r;
            st->ratio_min = r < st->ratio_min ? r : st->ratio_min;
            st->ratio_max = r > st->ratio_max ? r : st->ratio_max;
            st->abs_logp_diff_max = fabs(d) > st->abs_logp_diff_max ? fabs(d) : st->abs_logp_diff_max;
            st->tokens++;
            st->clipped += clipped;
        }
    }
    return total;
}

double grpo_ce_tokens(float *coef, const float *logp, const float *w, size_t n)
{
    double nll = 0.0;
    for (size_t t = 0; t < n; t++) {
        if (w[t] > 0.0f) {
            coef[t] = -w[t];
            nll -= (double)w[t] * logp[t];
        } else {
            coef[t] = 0.0f;
        }
    }
    return nll;
}
