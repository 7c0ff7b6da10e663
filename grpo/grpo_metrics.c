/* grpo_metrics.c - what a step measured: its metrics.jsonl line, its
 * terminal line, and the warnings drawn from the recent history. */
#include "grpo/grpo_int.h"

#include "common/err.h"
#include "common/limits.h"
#include "common/vec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double mean_of(const double *x, size_t from, size_t to)
{
    double s = 0;
    for (size_t i = from; i < to; i++)
        s += x[i];
    return to > from ? s / (double)(to - from) : 0;
}

/* The history's arrays, for growing and freeing them all. */
#define HIST_ARRAYS 7
static void hist_arrays(grpo_history *h, double **a[HIST_ARRAYS])
{
    double **v[HIST_ARRAYS] = {&h->reward, &h->pass, &h->tool, &h->tokens, &h->kl, &h->fmt, &h->flag};
    memcpy(a, v, sizeof v);
}

int grpo_history_push(grpo_history *h, const grpo_step_metrics *sm, char *err)
{
    if (h->n == h->cap) {
        /* parallel arrays: each grows from the same count by the same rule */
        double **a[HIST_ARRAYS];
        hist_arrays(h, a);
        size_t alloc = h->cap;
        for (size_t i = 0; i < HIST_ARRAYS; i++) {
            alloc = h->cap;
            if (vec_grow(a[i], &alloc, h->n + 1, sizeof(double), RL_GRPO_CURVE_MAX) < 0)
                return rl_err(err, RL_ELIMIT, "grpo: metrics history of more than %d steps, or out of memory",
                              RL_GRPO_CURVE_MAX);
        }
        h->cap = alloc;
    }
    h->reward[h->n] = sm->reward_mean;
    h->pass[h->n] = sm->pass_rate;
    h->tool[h->n] = sm->tool_success;
    h->tokens[h->n] = sm->policy_tokens_mean;
    h->kl[h->n] = sm->loss.tokens ? sm->loss.kl_sum / (double)sm->loss.tokens : 0;
    h->fmt[h->n] = sm->format_error_rate;
    h->flag[h->n] = sm->flagged_share;
    h->n++;
    return 0;
}

void grpo_history_dispose(grpo_history *h)
{
    double **a[HIST_ARRAYS];
    hist_arrays(h, a);
    for (size_t i = 0; i < HIST_ARRAYS; i++)
        free(*a[i]);
    memset(h, 0, sizeof *h);
}

/* The warnings: reward up while pass rate or tool success is not (the
 * reward is being gamed), responses collapsing, KL jumping; and malformed
 * replies spreading (the reward does not see the format, so nothing but
 * the KL term holds it). */
void grpo_warnings(const grpo_history *h, const grpo_config *c, cJSON *arr, buf_t *line)
{
    size_t n = h->n, W = (size_t)c->warn_window;
    char w[256];
    if (n >= 2 * W) {
        double dr = mean_of(h->reward, n - W, n) - mean_of(h->reward, n - 2 * W, n - W);
        double dp = mean_of(h->pass, n - W, n) - mean_of(h->pass, n - 2 * W, n - W);
        double dt = mean_of(h->tool, n - W, n) - mean_of(h->tool, n - 2 * W, n - W);
        if (dr > 0.05 && (dp <= 0 || dt <= 0)) {
            snprintf(w, sizeof w, "reward rose by %.3f over %zu steps while %s did not (%+.3f)", dr, W,
                     dp <= 0 ? "the pass rate" : "tool success", dp <= 0 ? dp : dt);
            cJSON_AddItemToArray(arr, cJSON_CreateString(w));
            buf_printf(line, "\n  warning: %s", w);
        }
        double f0 = mean_of(h->fmt, n - 2 * W, n - W), f1 = mean_of(h->fmt, n - W, n);
        if (f1 - f0 > c->warn_format_rise) {
            snprintf(w, sizeof w, "malformed replies rose from %.0f%% to %.0f%% of turns over %zu steps", 100 * f0,
                     100 * f1, W);
            cJSON_AddItemToArray(arr, cJSON_CreateString(w));
            buf_printf(line, "\n  warning: %s", w);
        }
    }
    /* a step whose episodes change how the tests run rather than fix code:
     * enforced, they score 0, but the policy is learning to try */
    if (n >= 1 && h->flag && h->flag[n - 1] > c->warn_integrity) {
        snprintf(w, sizeof w, "%.0f%% of the step's episodes were flagged by the integrity check (threshold %.0f%%)",
                 100 * h->flag[n - 1], 100 * c->warn_integrity);
        cJSON_AddItemToArray(arr, cJSON_CreateString(w));
        buf_printf(line, "\n  warning: %s", w);
    }
    if (n > W) {
        double best = 0;
        for (size_t i = 0; i + W <= n - 1; i++) {
            double m = mean_of(h->tokens, i, i + W);
            best = m > best ? m : best;
        }
        double cur = h->tokens[n - 1];
        if (best > 0 && cur < c->warn_len_collapse * best) {
            snprintf(w, sizeof w, "response length collapsed: %.0f policy tokens per episode, recent best %.0f", cur,
                     best);
            cJSON_AddItemToArray(arr, cJSON_CreateString(w));
            buf_printf(line, "\n  warning: %s", w);
        }
        double prev = mean_of(h->kl, n - 1 - W, n - 1), kl = h->kl[n - 1];
        if (kl > 1e-3 && kl > c->warn_kl_jump * prev) {
            snprintf(w, sizeof w, "KL jumped to %.4g (%.1fx its mean over the previous %zu steps)", kl,
                     prev > 0 ? kl / prev : INFINITY, W);
            cJSON_AddItemToArray(arr, cJSON_CreateString(w));
            buf_printf(line, "\n  warning: %s", w);
        }
    }
}

cJSON *grpo_metrics_json(const grpo_step_metrics *sm)
{
    cJSON *o = cJSON_CreateObject();
    const grpo_loss_stats *L = &sm->loss;
    double tok = L->tokens ? (double)L->tokens : 1;
    cJSON_AddNumberToObject(o, "step", (double)sm->step);
    cJSON_AddStringToObject(o, "mode", sm->mode);
    cJSON_AddNumberToObject(o, "lr", sm->lr);
    cJSON_AddNumberToObject(o, "reward_mean", sm->reward_mean);
    cJSON_AddNumberToObject(o, "pass_rate", sm->pass_rate);
    cJSON_AddNumberToObject(o, "groups", (double)sm->groups);
    cJSON_AddNumberToObject(o, "zero_var_groups", (double)sm->zero_var);
    cJSON_AddNumberToObject(o, "resampled_groups", (double)sm->resampled);
    cJSON_AddNumberToObject(o, "dropped_groups", (double)sm->dropped);
    cJSON_AddNumberToObject(o, "episodes", (double)sm->episodes);
    cJSON_AddNumberToObject(o, "episodes_finished", (double)sm->finished);
    cJSON_AddNumberToObject(o, "episode_errors", (double)sm->errors);
    cJSON_AddNumberToObject(o, "tool_success", sm->tool_success);
    cJSON_AddNumberToObject(o, "format_error_rate", sm->format_error_rate);
    cJSON_AddNumberToObject(o, "integrity_flagged", (double)sm->flagged);
    cJSON_AddNumberToObject(o, "integrity_flagged_share", sm->flagged_share);
    cJSON_AddNumberToObject(o, "policy_tokens_mean", sm->policy_tokens_mean);
    cJSON_AddNumberToObject(o, "turns_mean", sm->turns_mean);
    cJSON_AddNumberToObject(o, "identical_share", sm->identical_share);
    cJSON_AddNumberToObject(o, "edit_calls", (double)sm->edit_calls);
    cJSON_AddNumberToObject(o, "edit_applied", sm->edit_applied);
    /* sums over the update passes: report one pass's worth */
    double passes = sm->passes > 0 ? sm->passes : 1;
    cJSON_AddNumberToObject(o, "loss", L->loss / passes);
    cJSON_AddNumberToObject(o, "pg_loss", L->pg / passes);
    if (L->has_kl)
        cJSON_AddNumberToObject(o, "kl", L->kl_sum / tok);
    else
        cJSON_AddNullToObject(o, "kl");
    cJSON_AddNumberToObject(o, "clip_frac", L->tokens ? (double)L->clipped / tok : 0);
    cJSON_AddNumberToObject(o, "entropy", L->has_ent ? L->ent_sum / tok : 0);
    cJSON_AddNumberToObject(o, "ratio_mean", L->tokens ? L->ratio_sum / tok : 1);
    cJSON_AddNumberToObject(o, "ratio_min", L->tokens ? L->ratio_min : 1);
    cJSON_AddNumberToObject(o, "ratio_max", L->tokens ? L->ratio_max : 1);
    cJSON_AddNumberToObject(o, "grad_norm", sm->grad_norm);
    cJSON_AddBoolToObject(o, "updated", sm->updated);
    cJSON_AddNumberToObject(o, "seqs", (double)sm->seqs);
    cJSON_AddNumberToObject(o, "trained_tokens", (double)sm->trained_tokens);
    cJSON_AddNumberToObject(o, "stale_dropped", (double)sm->stale_dropped);
    cJSON_AddNumberToObject(o, "skipped_long", (double)sm->skipped_long);
    cJSON_AddNumberToObject(o, "skipped_records", (double)sm->skipped_records);
    cJSON_AddNumberToObject(o, "filtered_records", (double)sm->filtered_seqs);
    cJSON_AddNumberToObject(o, "step_s", sm->step_s);
    cJSON_AddNumberToObject(o, "rollout_s", sm->rollout_s);
    cJSON_AddNumberToObject(o, "train_s", sm->train_s);
    cJSON_AddNumberToObject(o, "train_tokens_per_s", sm->train_s > 0 ? (double)sm->forward_tokens / sm->train_s : 0);
    cJSON_AddNumberToObject(o, "gen_tokens", (double)sm->gen_tokens);
    cJSON_AddNumberToObject(o, "gen_tokens_per_s", sm->gen_s > 0 ? (double)sm->gen_tokens / sm->gen_s : 0);
    cJSON_AddNumberToObject(o, "prefill_tokens", (double)sm->prefill_tokens);
    cJSON_AddNumberToObject(o, "gen_s", sm->gen_s);
    cJSON_AddNumberToObject(o, "util", sm->util);
    return o;
}

void grpo_metrics_line(buf_t *line, const grpo_step_metrics *sm, long steps)
{
    const grpo_loss_stats *L = &sm->loss;
    double tok = L->tokens ? (double)L->tokens : 1;
    buf_printf(line,
               "step %ld/%ld [%s] reward %.3f pass %.3f zero-var %zu/%zu tool %.2f edit %.2f fmt %.3f flagged %.3f "
               "tok %.0f kl %.4f clip %.3f ent %.3f turns %.1f ident %.3f | %.1f s (rollout %.1f, train %.1f) util %.2f",
               sm->step, steps, sm->mode, sm->reward_mean, sm->pass_rate, sm->zero_var, sm->groups,
               sm->tool_success, sm->edit_applied, sm->format_error_rate, sm->flagged_share, sm->policy_tokens_mean,
               L->has_kl ? L->kl_sum / tok : 0.0, L->tokens ? (double)L->clipped / tok : 0.0,
               L->has_ent ? L->ent_sum / tok : 0.0, sm->turns_mean, sm->identical_share, sm->step_s, sm->rollout_s,
               sm->train_s, sm->util);
}
