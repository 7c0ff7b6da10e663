/* grpo_update.c - the GRPO update: trajectories -> sequences ->
 * micro-batches -> per-token coefficients (grpo/loss) -> model_backward ->
 * one AdamW step; and the cross-entropy fine-tune of the flywheel.
 *
 * Sequences are sorted by length and packed into micro-batches of at most
 * train.micro_batch_tokens padded tokens; gradients accumulate over them.
 * Positions that are not trained (context, tool output, stale tokens,
 * padding) get target -1, so the output head skips them and their
 * coefficient is exactly 0.
 *
 * Data-parallel (grpo_dp.h, N ranks): every rank holds every record of the
 * step (grpo_rollout.c), builds the same sequences and weights, and runs
 * forward and backward on every N-th micro-batch that trains a token; one
 * sum over the ranks of the gradient buffer and of the loss sums then
 * gives each rank the gradient of one process over the whole batch, and
 * the same AdamW step keeps the weights identical.
 */
#include "grpo/grpo_int.h"

#include "common/clock.h"
#include "common/err.h"
#include "common/limits.h"
#include "grpo/grpo_dp.h"
#include "grpo/sample.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the update ---------------------------------------------------------------------- */

typedef struct mbatch {
    size_t first, count; /* into the length-sorted order */
    int T;
} mbatch;

typedef struct train_buf {
    int *tok, *tgt;
    float *behav, *adv, *w, *logp, *ent, *ref, *coef;
    size_t cap;
} train_buf;

static void train_buf_free(train_buf *b)
{
    free(b->tok);
    free(b->tgt);
    free(b->behav);
    free(b->adv);
    free(b->w);
    free(b->logp);
    free(b->ent);
    free(b->ref);
    free(b->coef);
}

static int train_buf_reserve(train_buf *b, size_t n, char *err)
{
    if (n <= b->cap)
        return 0;
    train_buf_free(b);
    memset(b, 0, sizeof *b);
    b->tok = malloc(n * sizeof(int));
    b->tgt = malloc(n * sizeof(int));
    float **f[] = {&b->behav, &b->adv, &b->w, &b->logp, &b->ent, &b->ref, &b->coef};
    int ok = b->tok && b->tgt;
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        ok &= (*f[i] = malloc(n * sizeof(float))) != NULL;
    if (!ok)
        return rl_err(err, RL_ENOMEM, "grpo: out of memory for a micro-batch of %zu tokens", n);
    b->cap = n;
    return 0;
}

static const grpo_seq *const *g_sort_v; /* qsort context (single-threaded use) */

static int by_len(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int li = g_sort_v[i]->n, lj = g_sort_v[j]->n;
    if (li != lj)
        return li < lj ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* Fills the micro-batch arrays of sequences order[first..first+count). */
static void fill_batch(train_buf *b, const grpo_seqs *S, const size_t *order, const mbatch *mb,
                       const float *seq_adv, const float *seq_w, long current, long max_stale)
{
    size_t N = mb->count * (size_t)mb->T;
    memset(b->tok, 0, N * sizeof(int));
    for (size_t i = 0; i < N; i++) {
        b->tgt[i] = -1;
        b->behav[i] = b->adv[i] = b->w[i] = 0.0f;
    }
    for (size_t r = 0; r < mb->count; r++) {
        size_t si = order[mb->first + r];
        const grpo_seq *q = &S->v[si];
        size_t base = r * (size_t)mb->T;
        for (int p = 0; p < q->n; p++) {
            b->tok[base + p] = q->tokens[p];
            if (q->targets[p] >= 0 && grpo_token_fresh(q->version[p], current, max_stale)) {
                b->tgt[base + p] = q->targets[p];
                b->behav[base + p] = q->behav[p];
                b->adv[base + p] = seq_adv[si];
                b->w[base + p] = seq_w[si];
            }
        }
    }
}

/* Adds the sums of src into dst (minima and maxima kept). */
static void stats_merge(grpo_loss_stats *dst, const grpo_loss_stats *src)
{
    dst->loss += src->loss;
    dst->pg += src->pg;
    dst->kl_term += src->kl_term;
    dst->kl_sum += src->kl_sum;
    dst->ent_sum += src->ent_sum;
    dst->ratio_sum += src->ratio_sum;
    dst->ratio_min = src->ratio_min < dst->ratio_min ? src->ratio_min : dst->ratio_min;
    dst->ratio_max = src->ratio_max > dst->ratio_max ? src->ratio_max : dst->ratio_max;
    dst->abs_logp_diff_max = src->abs_logp_diff_max > dst->abs_logp_diff_max ? src->abs_logp_diff_max
                                                                             : dst->abs_logp_diff_max;
    dst->tokens += src->tokens;
    dst->clipped += src->clipped;
    dst->has_kl |= src->has_kl;
    dst->has_ent |= src->has_ent;
}

/* Data-parallel: one pass's gradient, loss sums and counters summed over
 * the ranks (no-op at one rank). */
static int reduce_pass(model *m, grpo_loss_stats *ps, double *loss, int *any, size_t *fwd, char *err)
{
    if (dp_size() <= 1)
        return 0;
    int rc = dp_allreduce_sum_f(m->grads, m->n_params, err);
    double sum[9] = {*loss,        ps->loss,          ps->pg,          ps->kl_term,     ps->kl_sum,
                     ps->ent_sum,  ps->ratio_sum,     (double)ps->tokens, (double)ps->clipped};
    double sum2[1] = {(double)*fwd};
    double mx[6] = {ps->ratio_max, -ps->ratio_min, ps->abs_logp_diff_max, ps->has_kl, ps->has_ent, *any};
    if (rc == 0)
        rc = dp_allreduce_sum_d(sum, 9, err);
    if (rc == 0)
        rc = dp_allreduce_sum_d(sum2, 1, err);
    if (rc == 0)
        rc = dp_allreduce_max_d(mx, 6, err);
    if (rc < 0)
        return rc;
    *loss = sum[0];
    ps->loss = sum[1];
    ps->pg = sum[2];
    ps->kl_term = sum[3];
    ps->kl_sum = sum[4];
    ps->ent_sum = sum[5];
    ps->ratio_sum = sum[6];
    ps->tokens = (long)sum[7];
    ps->clipped = (long)sum[8];
    *fwd = (size_t)sum2[0];
    ps->ratio_max = mx[0];
    ps->ratio_min = -mx[1];
    ps->abs_logp_diff_max = mx[2];
    ps->has_kl = mx[3] > 0;
    ps->has_ent = mx[4] > 0;
    *any = mx[5] > 0;
    return 0;
}

int grpo_update(model *m, const model *ref, adamw *opt, long step, const grpo_config *c, grpo_group **gs, size_t ng,
                grpo_step_metrics *sm, int *nonfinite, char *err)
{
    *nonfinite = 0;
    grpo_seqs S;
    grpo_seqs_init(&S);
    float *traj_adv = NULL, *seq_adv = NULL, *seq_w = NULL;
    size_t *order = NULL, *kept = NULL;
    mbatch *mbs = NULL;
    train_buf b = {0};
    int rc = 0;
    size_t ntraj = 0;
    for (size_t k = 0; k < ng; k++)
        ntraj += (size_t)gs[k]->n;
    traj_adv = malloc((ntraj ? ntraj : 1) * sizeof *traj_adv);
    if (!traj_adv) {
        rc = rl_err(err, RL_ENOMEM, "grpo: out of memory");
        goto done;
    }
    /* sequences of every trajectory, each tagged with its trajectory */
    size_t ti = 0;
    for (size_t k = 0; k < ng; k++)
        for (int i = 0; i < gs[k]->n; i++, ti++) {
            traj_adv[ti] = (float)gs[k]->adv[i];
            if (!gs[k]->tr[i].rec)
                continue;
            /* DAPO's filter: with dynamic sampling a group without reward
             * variance is not in the batch (no policy-gradient signal; its
             * tokens would only dilute the token mean and cost a forward) */
            if (c->dynamic_sampling && gs[k]->st.zero_variance) {
                sm->filtered_seqs++;
                continue;
            }
            char rerr[RL_ERR_MAX];
            int r = grpo_seqs_add_json(&S, gs[k]->tr[i].rec, (int)ti, m->cfg.vocab, m->cfg.max_seq, rerr);
            if (r == RL_ENOMEM) {
                rc = rl_err(err, r, "%s", rerr);
                goto done;
            }
            if (r < 0)
                sm->skipped_records++;
        }
    sm->skipped_long = S.skipped_long;
    sm->seqs = S.n;
    /* trained tokens per sequence: policy targets recent enough */
    long current = step + 1;
    kept = calloc(S.n ? S.n : 1, sizeof *kept);
    seq_adv = malloc((S.n ? S.n : 1) * sizeof *seq_adv);
    seq_w = malloc((S.n ? S.n : 1) * sizeof *seq_w);
    order = malloc((S.n ? S.n : 1) * sizeof *order);
    if (!kept || !seq_adv || !seq_w || !order) {
        rc = rl_err(err, RL_ENOMEM, "grpo: out of memory");
        goto done;
    }
    size_t kept_total = 0, seqs_kept = 0;
    for (size_t s = 0; s < S.n; s++) {
        const grpo_seq *q = &S.v[s];
        for (int p = 0; p < q->n; p++)
            if (q->targets[p] >= 0) {
                if (grpo_token_fresh(q->version[p], current, c->loss.max_staleness))
                    kept[s]++;
                else
                    sm->stale_dropped++;
            }
        kept_total += kept[s];
        seqs_kept += kept[s] > 0;
        seq_adv[s] = traj_adv[S.v[s].traj];
        order[s] = s;
    }
    for (size_t s = 0; s < S.n; s++)
        seq_w[s] = (float)grpo_loss_weight(&c->loss, kept[s], kept_total, seqs_kept);
    sm->trained_tokens = kept_total;
    /* micro-batches of similar lengths */
    const grpo_seq *const *vp = malloc((S.n ? S.n : 1) * sizeof *vp);
    if (!vp) {
        rc = rl_err(err, RL_ENOMEM, "grpo: out of memory");
        goto done;
    }
    for (size_t s = 0; s < S.n; s++)
        ((const grpo_seq **)vp)[s] = &S.v[s];
    g_sort_v = vp;
    qsort(order, S.n, sizeof *order, by_len);
    free((void *)vp);
    g_sort_v = NULL;
    mbs = malloc((S.n ? S.n : 1) * sizeof *mbs);
    if (!mbs) {
        rc = rl_err(err, RL_ENOMEM, "grpo: out of memory");
        goto done;
    }
    size_t nmb = 0, maxN = 0;
    for (size_t s = 0; s < S.n;) {
        mbatch mb = {s, 0, 0};
        while (s < S.n) {
            int T = S.v[order[s]].n > mb.T ? S.v[order[s]].n : mb.T;
            if (mb.count > 0 && (size_t)T * (mb.count + 1) > (size_t)c->micro_batch_tokens)
                break;
            mb.T = T;
            mb.count++;
            s++;
        }
        mbs[nmb++] = mb;
        if (mb.count * (size_t)mb.T > maxN)
            maxN = mb.count * (size_t)mb.T;
    }
    if ((rc = train_buf_reserve(&b, maxN ? maxN : 1, err)) < 0)
        goto done;

    double t0 = clk_s();
    int use_ref = ref && c->loss.kl_coef > 0;
    grpo_loss_stats_init(&sm->loss);
    int any = 0, R = dp_size(), me = dp_rank();
    for (int pass = 0; pass < c->updates_per_step; pass++) {
        sm->passes = pass + 1;
        if ((rc = model_zero_grad(m, err)) < 0)
            goto done;
        double loss = 0;
        grpo_loss_stats ps;
        grpo_loss_stats_init(&ps);
        size_t fwd = 0, trained_mb = 0;
        for (size_t k = 0; k < nmb; k++) {
            const mbatch *mb = &mbs[k];
            size_t N = mb->count * (size_t)mb->T;
            int has = 0;
            for (size_t r = 0; r < mb->count && !has; r++)
                has = kept[order[mb->first + r]] > 0 && seq_w[order[mb->first + r]] > 0.0f;
            if (!has)
                continue; /* nothing trained here: no forward needed */
            if ((int)(trained_mb++ % (size_t)R) != me)
                continue; /* another rank's micro-batch */
            fill_batch(&b, &S, order, mb, seq_adv, seq_w, current, c->loss.max_staleness);
            if (use_ref && (rc = model_forward((model *)ref, b.tok, b.tgt, (int)mb->count, mb->T, (float)c->temperature,
                                               b.ref, NULL, err)) < 0)
                goto done;
            if ((rc = model_forward(m, b.tok, b.tgt, (int)mb->count, mb->T, (float)c->temperature, b.logp, b.ent,
                                    err)) < 0)
                goto done;
            fwd += N;
            loss += grpo_loss_tokens(b.coef, &ps, &c->loss, b.logp, b.behav, use_ref ? b.ref : NULL, b.ent,
                                     b.adv, b.w, N);
            for (size_t i = 0; i < N && !any; i++)
                any = b.coef[i] != 0.0f;
            if ((rc = model_backward(m, b.coef, err)) < 0)
                goto done;
        }
        if ((rc = reduce_pass(m, &ps, &loss, &any, &fwd, err)) < 0)
            goto done;
        sm->forward_tokens += fwd;
        stats_merge(&sm->loss, &ps);
        if (!isfinite(loss)) {
            *nonfinite = 1;
            rc = rl_err(err, RL_EINVAL, "grpo: loss is not finite at step %ld", step + 1);
            goto done;
        }
        sm->updated = any;
        if (!any) {
            /* no gradient signal at all (zero-variance groups, no KL): the
             * weights and the optimizer state stay exactly as they are */
            sm->lr = opt_lr_at(&opt->cfg, step);
            break;
        }
        opt->step = step; /* the schedule follows trainer steps */
        float lr;
        if ((rc = opt_step(opt, m->params, m->grads, &sm->grad_norm, &lr, err)) < 0) {
            *nonfinite = 1;
            goto done;
        }
        sm->lr = lr;
    }
    sm->train_s = clk_s() - t0;
done:
    train_buf_free(&b);
    grpo_seqs_dispose(&S);
    free(traj_adv);
    free(seq_adv);
    free(seq_w);
    free(order);
    free(kept);
    free(mbs);
    return rc;
}


/* ---- supervised fine-tuning (the flywheel) ------------------------------------------------- */

int grpo_update_sft(double *loss, model *m, const grpo_config *c, char *const *records, size_t n, int epochs, double lr,
                    char *err)
{
    *loss = 0;
    grpo_seqs S;
    grpo_seqs_init(&S);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        char rerr[RL_ERR_MAX];
        int r = grpo_seqs_add_json(&S, records[i], (int)i, m->cfg.vocab, m->cfg.max_seq, rerr);
        if (r == RL_ENOMEM) {
            grpo_seqs_dispose(&S);
            return rl_err(err, r, "%s", rerr);
        }
    }
    if (S.n == 0 || epochs <= 0) {
        grpo_seqs_dispose(&S);
        return 0;
    }
    opt_config oc = c->optim;
    oc.lr = (float)lr;
    oc.warmup_steps = 0;
    oc.total_steps = 0; /* constant */
    opt_span *sp = calloc((size_t)m->n_tensors, sizeof *sp);
    adamw *opt = NULL;
    train_buf b = {0};
    if (!sp) {
        rc = rl_err(err, RL_ENOMEM, "grpo sft: out of memory");
        goto done;
    }
    for (int i = 0; i < m->n_tensors; i++) {
        sp[i].offset = m->tensors[i].offset;
        sp[i].n = m->tensors[i].numel;
        sp[i].decay = !m->tensors[i].is_norm;
    }
    if ((rc = opt_new(&opt, &oc, m->n_params, sp, m->n_tensors, err)) < 0)
        goto done;
    /* one sequence per optimizer step keeps memory flat; token mean */
    int maxT = 0;
    for (size_t s = 0; s < S.n; s++)
        maxT = S.v[s].n > maxT ? S.v[s].n : maxT;
    if ((rc = train_buf_reserve(&b, (size_t)maxT, err)) < 0)
        goto done;
    for (int ep = 0; ep < epochs; ep++) {
        double nll = 0;
        size_t ntok = 0;
        for (size_t s = 0; s < S.n; s++) {
            const grpo_seq *q = &S.v[s];
            for (int p = 0; p < q->n; p++) {
                b.tok[p] = q->tokens[p];
                b.tgt[p] = q->targets[p];
                b.w[p] = q->targets[p] >= 0 ? 1.0f / (float)q->n_policy : 0.0f;
            }
            if ((rc = model_zero_grad(m, err)) < 0 ||
                (rc = model_forward(m, b.tok, b.tgt, 1, q->n, 1.0f, b.logp, NULL, err)) < 0)
                goto done;
            nll += grpo_ce_tokens(b.coef, b.logp, b.w, (size_t)q->n) * q->n_policy;
            ntok += (size_t)q->n_policy;
            if ((rc = model_backward(m, b.coef, err)) < 0 ||
                (rc = opt_step(opt, m->params, m->grads, NULL, NULL, err)) < 0)
                goto done;
        }
        *loss = ntok ? nll / (double)ntok : 0;
    }
done:
    train_buf_free(&b);
    opt_free(opt);
    free(sp);
    grpo_seqs_dispose(&S);
    return rc;
}
