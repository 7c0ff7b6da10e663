/* test_loss.c - the GRPO objective (grpo/loss.c): coefficients against
 * finite differences of the scalar loss (clipped and unclipped branches,
 * both signs of the advantage, with and without KL, both aggregations),
 * exact zeros where tokens are not trained, clip counting, staleness,
 * aggregation weights, and the whole chain through a tiny model: the
 * parameter gradient model_backward accumulates from the coefficients
 * equals finite differences of the loss of the model's logprobs. */
#include "grpo/loss.h"
#include "model/model.h"

#include "common/err.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 42;

static double urand(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

typedef struct case_t {
    size_t n;
    float logp[64], behav[64], ref[64], adv[64], w[64], coef[64];
} case_t;

static double loss_of(case_t *c, const grpo_loss_opts *o, int with_ref)
{
    float tmp[64];
    return grpo_loss_tokens(tmp, NULL, o, c->logp, c->behav, with_ref ? c->ref : NULL, NULL, c->adv, c->w, c->n);
}

/* Random tokens away from the clip boundaries (where the loss has a kink). */
static void make_case(case_t *c, const grpo_loss_opts *o, size_t n)
{
    c->n = n;
    for (size_t t = 0; t < n; t++) {
        double r;
        do {
            r = exp((urand() - 0.5) * 1.2); /* ratios 0.55 .. 1.8 */
        } while (fabs(r - (1 - o->eps_low)) < 0.02 || fabs(r - (1 + o->eps_high)) < 0.02 ||
                 fabs(r - o->dual_clip) < 0.02);
        c->behav[t] = (float)(-0.2 - 3.0 * urand());
        c->logp[t] = (float)(c->behav[t] + log(r));
        c->ref[t] = (float)(c->logp[t] + (urand() - 0.5));
        c->adv[t] = (float)((urand() - 0.5) * 4.0);
        c->w[t] = t % 5 == 4 ? 0.0f : (float)(0.1 + urand());
    }
}

static void check_fd(const grpo_loss_opts *o, int with_ref)
{
    for (int trial = 0; trial < 20; trial++) {
        case_t c;
        make_case(&c, o, 40);
        grpo_loss_tokens(c.coef, NULL, o, c.logp, c.behav, with_ref ? c.ref : NULL, NULL, c.adv, c.w, c.n);
        for (size_t t = 0; t < c.n; t++) {
            float old = c.logp[t];
            float h = 1e-3f;
            c.logp[t] = old + h;
            double lp = loss_of(&c, o, with_ref);
            c.logp[t] = old - h;
            double lm = loss_of(&c, o, with_ref);
            c.logp[t] = old;
            double num = (lp - lm) / (((double)(old + h)) - (double)(old - h));
            ck_assert_msg(fabs(num - c.coef[t]) <= 2e-3 * (1 + fabs(num)),
                          "trial %d token %zu: coefficient %.6g, finite difference %.6g (A %g, ratio %g)", trial, t,
                          (double)c.coef[t], num, (double)c.adv[t], exp(c.logp[t] - c.behav[t]));
        }
    }
}

START_TEST(test_coefficients_match_finite_differences)
{
    grpo_loss_opts o;
    grpo_loss_opts_default(&o);
    check_fd(&o, 1); /* PPO clip + dual clip + k3 KL */
    check_fd(&o, 0); /* no reference: no KL term */
    o.kl_coef = 0.0;
    check_fd(&o, 1); /* kl_coef 0 ignores ref */
    o.kl_coef = 0.5;
    o.dual_clip = 0.0;
    o.eps_low = 0.1;
    o.eps_high = 0.5;
    check_fd(&o, 1);
}
END_TEST

/* The coefficient is zero where the clipped branch is active, -A r w
 * where it is not; every clipped token is counted. */
START_TEST(test_clip_branches_and_counts)
{
    grpo_loss_opts o;
    grpo_loss_opts_default(&o);
    o.kl_coef = 0;
    /* ratio 1.5 with A > 0: clipped (above 1.28); ratio 0.5 with A < 0:
     * clipped (below 0.8); ratio 1.5 with A < 0: not clipped; ratio 5 with
     * A < 0: dual clip (above 3); ratio 1: never clipped */
    float behav[5] = {-1, -1, -1, -1, -1};
    float r[5] = {1.5f, 0.5f, 1.5f, 5.0f, 1.0f};
    float adv[5] = {1, -1, -1, -1, 2}, w[5] = {1, 1, 1, 1, 1}, logp[5], coef[5];
    for (int i = 0; i < 5; i++)
        logp[i] = behav[i] + logf(r[i]);
    grpo_loss_stats st;
    grpo_loss_stats_init(&st);
    double L = grpo_loss_tokens(coef, &st, &o, logp, behav, NULL, NULL, adv, w, 5);
    ck_assert(coef[0] == 0.0f);
    ck_assert(coef[1] == 0.0f);
    ck_assert(fabsf(coef[2] - 1.5f) < 1e-5f); /* -A r = 1.5 */
    ck_assert(coef[3] == 0.0f);
    ck_assert(fabsf(coef[4] + 2.0f) < 1e-5f);
    ck_assert_int_eq(st.tokens, 5);
    ck_assert_int_eq(st.clipped, 3);
    /* L = -(1.28*1) - (0.8*-1) - (1.5*-1) - (-3) - 2*1 */
    ck_assert_msg(fabs(L - (-1.28 + 0.8 + 1.5 + 3.0 - 2.0)) < 1e-5, "loss %g", L);
    ck_assert(fabs(st.ratio_max - 5.0) < 1e-4 && fabs(st.ratio_min - 0.5) < 1e-5);
}
END_TEST

/* A token with weight 0 gets exactly 0 and nothing else about it is read:
 * NaNs there change nothing. */
START_TEST(test_untrained_tokens_exact_zero)
{
    grpo_loss_opts o;
    grpo_loss_opts_default(&o);
    case_t c;
    make_case(&c, &o, 30);
    grpo_loss_stats s1, s2;
    grpo_loss_stats_init(&s1);
    grpo_loss_stats_init(&s2);
    double L1 = grpo_loss_tokens(c.coef, &s1, &o, c.logp, c.behav, c.ref, NULL, c.adv, c.w, c.n);
    float c1[64];
    memcpy(c1, c.coef, sizeof c1);
    for (size_t t = 0; t < c.n; t++)
        if (c.w[t] == 0.0f)
            c.logp[t] = c.behav[t] = c.ref[t] = c.adv[t] = NAN;
    double L2 = grpo_loss_tokens(c.coef, &s2, &o, c.logp, c.behav, c.ref, NULL, c.adv, c.w, c.n);
    ck_assert(L1 == L2 && isfinite(L2));
    for (size_t t = 0; t < c.n; t++) {
        ck_assert(c.coef[t] == c1[t]);
        if (c.w[t] == 0.0f)
            ck_assert(c.coef[t] == 0.0f && !signbit(c.coef[t]));
    }
    ck_assert_int_eq(s1.tokens, s2.tokens);
    /* on-policy, at the reference, A = 0: every coefficient is 0 */
    for (size_t t = 0; t < c.n; t++) {
        c.logp[t] = c.behav[t] = c.ref[t] = -1.0f;
        c.adv[t] = 0.0f;
    }
    grpo_loss_tokens(c.coef, NULL, &o, c.logp, c.behav, c.ref, NULL, c.adv, c.w, c.n);
    for (size_t t = 0; t < c.n; t++)
        ck_assert(c.coef[t] == 0.0f);
}
END_TEST

START_TEST(test_staleness_and_weights)
{
    /* version <= 0: unknown, kept; current 5 with bound 1 keeps 4 and 5 */
    ck_assert(grpo_token_fresh(0, 5, 1));
    ck_assert(grpo_token_fresh(5, 5, 1));
    ck_assert(grpo_token_fresh(4, 5, 1));
    ck_assert(!grpo_token_fresh(3, 5, 1));
    ck_assert(grpo_token_fresh(3, 5, 2));
    ck_assert(!grpo_token_fresh(4, 5, 0));
    grpo_loss_opts o;
    grpo_loss_opts_default(&o);
    /* token mean: 1/N for every token; sequence mean: 1/(S n_s) */
    ck_assert(fabs(grpo_loss_weight(&o, 3, 10, 2) - 0.1) < 1e-12);
    o.agg = GRPO_AGG_SEQ_MEAN;
    ck_assert(fabs(grpo_loss_weight(&o, 3, 10, 2) - 1.0 / 6) < 1e-12);
    ck_assert(grpo_loss_weight(&o, 0, 10, 2) == 0.0);
    /* the weights of a step sum to 1 either way */
    size_t kept[3] = {3, 5, 2};
    for (int agg = 0; agg < 2; agg++) {
        o.agg = (grpo_agg)agg;
        double sum = 0;
        for (int s = 0; s < 3; s++)
            sum += (double)kept[s] * grpo_loss_weight(&o, kept[s], 10, 3);
        ck_assert(fabs(sum - 1.0) < 1e-12);
    }
}
END_TEST

START_TEST(test_cross_entropy_coefficients)
{
    float logp[4] = {-1, -2, -3, -4}, w[4] = {0.5f, 0, 0.5f, 0}, coef[4];
    double nll = grpo_ce_tokens(coef, logp, w, 4);
    ck_assert(fabs(nll - 2.0) < 1e-6);
    ck_assert(coef[0] == -0.5f && coef[1] == 0.0f && coef[2] == -0.5f && coef[3] == 0.0f);
}
END_TEST

/* ---- through the model ------------------------------------------------------------- */

typedef struct chain {
    model *m;
    int tok[24], tgt[24];
    float behav[24], ref[24], adv[24], w[24], logp[24], coef[24];
    grpo_loss_opts o;
} chain;

static double chain_loss(chain *c)
{
    char err[RL_ERR_MAX];
    ck_assert_int_eq(model_forward(c->m, c->tok, c->tgt, 2, 12, 0.8f, c->logp, NULL, err), 0);
    return grpo_loss_tokens(c->coef, NULL, &c->o, c->logp, c->behav, c->ref, NULL, c->adv, c->w, 24);
}

START_TEST(test_gradient_through_model)
{
    char err[RL_ERR_MAX];
    model_config cfg;
    model_config_default(&cfg);
    cfg.vocab = 13;
    cfg.d_model = 8;
    cfg.n_layer = 1;
    cfg.n_head = 2;
    cfg.n_kv_head = 1;
    cfg.d_ff = 12;
    cfg.max_seq = 16;
    chain c;
    memset(&c, 0, sizeof c);
    model_opts mo = {.n_threads = 1};
    ck_assert_int_eq(model_new(&c.m, &cfg, &mo, err), 0);
    model_random_init(c.m, 11);
    for (size_t i = 0; i < c.m->n_params; i++) /* bigger weights: every path carries signal */
        c.m->params[i] *= 4.0f;
    grpo_loss_opts_default(&c.o);
    c.o.kl_coef = 0.3;
    for (int i = 0; i < 24; i++) {
        c.tok[i] = (i * 5 + 2) % 13;
        c.tgt[i] = (i % 12 == 11 || i % 12 < 4) ? -1 : (i * 3 + 1) % 13; /* a prompt, then policy tokens */
    }
    /* behaviour = current weights perturbed: ratios spread around 1 */
    ck_assert_int_eq(model_forward(c.m, c.tok, c.tgt, 2, 12, 0.8f, c.logp, NULL, err), 0);
    for (int i = 0; i < 24; i++) {
        c.behav[i] = c.tgt[i] >= 0 ? c.logp[i] + (float)((urand() - 0.5) * 0.3) : 0.0f;
        c.ref[i] = c.tgt[i] >= 0 ? c.logp[i] + (float)((urand() - 0.5) * 0.6) : 0.0f;
        c.adv[i] = (i < 12) ? 1.2f : -0.7f;
        c.w[i] = c.tgt[i] >= 0 ? 1.0f / 14.0f : 0.0f;
    }
    chain_loss(&c);
    ck_assert_int_eq(model_zero_grad(c.m, err), 0);
    ck_assert_int_eq(model_backward(c.m, c.coef, err), 0);
    float *g = malloc(c.m->n_params * sizeof *g);
    memcpy(g, c.m->grads, c.m->n_params * sizeof *g);
    int bad = 0, checked = 0;
    for (size_t i = 0; i < c.m->n_params; i += c.m->n_params / 60 + 1) {
        float old = c.m->params[i];
        float h = 1e-3f;
        c.m->params[i] = old + h;
        double lp = chain_loss(&c);
        c.m->params[i] = old - h;
        double lm = chain_loss(&c);
        c.m->params[i] = old;
        double num = (lp - lm) / ((double)(old + h) - (double)(old - h));
        checked++;
        if (fabs(num - g[i]) > 3e-3 + 3e-2 * fabs(num)) {
            if (bad < 5)
                fprintf(stderr, "param %zu: backward %.6g, finite difference %.6g\n", i, (double)g[i], num);
            bad++;
        }
    }
    ck_assert_msg(bad == 0 && checked >= 50, "%d of %d parameters disagree", bad, checked);
    free(g);
    model_free(c.m);
}
END_TEST

Suite *loss_suite(void)
{
    Suite *s = suite_create("loss");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_coefficients_match_finite_differences);
    tcase_add_test(tc, test_clip_branches_and_counts);
    tcase_add_test(tc, test_untrained_tokens_exact_zero);
    tcase_add_test(tc, test_staleness_and_weights);
    tcase_add_test(tc, test_cross_entropy_coefficients);
    tcase_add_test(tc, test_gradient_through_model);
    suite_add_tcase(s, tc);
    return s;
}
