/* loss.h - the GRPO objective as per-token coefficients for model_backward.
 *
 * For every trained token t (a policy-written target, recent enough):
 *
 *   r_t   = exp(logp_t - behav_t)              ratio to the behaviour policy
 *   pg_t  = -min(r_t A, clip(r_t, 1 - eps_low, 1 + eps_high) A)
 *           (dual clip: when A < 0, pg_t is capped at -c A, c = dual_clip)
 *   kl_t  = exp(ref_t - logp_t) - (ref_t - logp_t) - 1     (k3 estimator)
 *   L     = sum_t w_t (pg_t + kl_coef kl_t)
 *
 * A is the trajectory's group advantage, w_t the aggregation weight:
 * token-mean gives every trained token of the step 1 / N_tokens, sequence
 * mean gives sequence s's tokens 1 / (N_seqs n_s). The coefficient handed to
 * model_backward is dL/dlogp_t:
 *
 *   w_t (-A r_t [unclipped] + kl_coef (1 - exp(ref_t - logp_t)))
 *
 * A token whose clipped branch is active gets no policy-gradient term (the
 * clip fraction counts them). Tokens not trained (context, tool output,
 * prompts; tokens sampled more than max_staleness policy versions before the
 * current one) have w_t = 0 and so exactly zero gradient. kl_coef 0 needs
 * no reference logprobs at all (ref may be NULL).
 */
#ifndef RL_GRPO_LOSS_H
#define RL_GRPO_LOSS_H

#include <stddef.h>

typedef enum grpo_agg {
    GRPO_AGG_TOKEN_MEAN = 0, /* every trained token of the step weighs the same (DAPO) */
    GRPO_AGG_SEQ_MEAN,       /* mean over each sequence, then over sequences (GRPO paper) */
} grpo_agg;

typedef struct grpo_loss_opts {
    double eps_low, eps_high; /* 0.2 / 0.28 (clip-higher) */
    double dual_clip;         /* 3.0; 0: off */
    double kl_coef;           /* 0.05; 0: no KL term, no reference model */
    grpo_agg agg;             /* token mean */
    long max_staleness;       /* drop tokens sampled more than this many
                                 versions ago (1) */
} grpo_loss_opts;

void grpo_loss_opts_default(grpo_loss_opts *o);

/* 1 if a target sampled by policy `version` is trained at `current`.
 * version <= 0 (unknown) is never dropped. */
int grpo_token_fresh(long version, long current, long max_staleness);

/* Weight of one trained token of a sequence with `kept` trained tokens,
 * in a step with `kept_total` trained tokens over `seqs_total` sequences
 * that have any. */
double grpo_loss_weight(const grpo_loss_opts *o, size_t kept, size_t kept_total, size_t seqs_total);

/* Sums over the trained tokens of a step (several calls accumulate). */
typedef struct grpo_loss_stats {
    double loss, pg, kl_term;   /* sum of w * (...) */
    double kl_sum, ent_sum;     /* unweighted sums over trained tokens */
    double ratio_sum, ratio_min, ratio_max;
    double abs_logp_diff_max;   /* max |logp - behav| */
    long tokens;                /* trained tokens (w > 0) */
    long clipped;               /* of which the clipped branch was active */
    int has_kl, has_ent;
} grpo_loss_stats;

void grpo_loss_stats_init(grpo_loss_stats *s);

/* Fills coef[0..n) and returns sum_t w_t loss_t for n positions. ref and
 * entropy may be NULL (no KL term / no entropy metric); where w[t] == 0 the
 * coefficient is exactly 0 and nothing is read but w[t]. st may be NULL. */
double grpo_loss_tokens(float *coef, grpo_loss_stats *st, const grpo_loss_opts *o, const float *logp,
                        const float *behav, const float *ref, const float *entropy, const float *adv,
                        const float *w, size_t n);

/* Cross-entropy (SFT) coefficients: -w[t] where w[t] > 0. Returns
 * -sum w logp (the weighted NLL). */
double grpo_ce_tokens(float *coef, const float *logp, const float *w, size_t n);

#endif
