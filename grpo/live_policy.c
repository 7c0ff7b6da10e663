/* live_policy.c - pol vtable over the trainer's in-memory model. */
#include "grpo/live_policy.h"

#include "common/err.h"
#include "common/limits.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct live {
    model *m;
    model_kvset *kv; /* prefix caches across turns (emptied when the weights change) */
    const tok_t *tok;
    live_policy_opts o;
    int stop_id;
    /* counters read by other threads (the trainer's learner) */
    _Atomic long tokens, prompt_tokens, nanos;
} live;

void live_policy_opts_default(live_policy_opts *o)
{
    o->temperature = 0.7f;
    o->top_p = 1.0f;
    o->max_tokens = RL_EP_REPLY_TOKENS;
    o->name = "live";
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Prompt ids of one request (borrowed from the request, or encoded into
 * *owned). */
static int prompt_of(const live *L, const pol_request *q, int **ids, int *n, int **owned, char *err)
{
    *owned = NULL;
    size_t cnt = q->n_context_ids;
    const int32_t *src = q->context_ids;
    int32_t *enc = NULL;
    if (!src) {
        int rc = tok_encode(&enc, &cnt, L->tok, q->context ? q->context : "", q->context_len,
                            TOK_SPECIAL_ALLOW, err);
        if (rc < 0)
            return rc;
        src = enc;
    }
    if (cnt > (size_t)RL_MODEL_SEQ_MAX) {
        free(enc);
        cnt = (size_t)RL_MODEL_SEQ_MAX + 1; /* too long: caller answers empty */
        *n = (int)cnt;
        *ids = NULL;
        return 0;
    }
    /* model_sample takes int; int32_t is int on every target we build for,
     * but copy rather than cast so the types never have to agree */
    int *p = malloc((cnt ? cnt : 1) * sizeof *p);
    if (!p) {
        free(enc);
        return rl_err(err, RL_ENOMEM, "policy live: out of memory");
    }
    for (size_t i = 0; i < cnt; i++) {
        if (src[i] < 0 || src[i] >= L->m->cfg.vocab) {
            int bad = src[i];
            free(p);
            free(enc);
            return rl_err(err, RL_EINVAL, "policy live: context id %d at %zu, expected 0..%d", bad, i,
                          L->m->cfg.vocab - 1);
        }
        p[i] = src[i];
    }
    free(enc);
    *owned = p;
    *ids = p;
    *n = (int)cnt;
    return 0;
}

/* Fills one response from a sample: ids with the stop token, text without. */
static int fill_response(const live *L, pol_response *r, const model_sample_out *s, int cap, char *err)
{
    int n = s->n < cap ? s->n : cap;
    int stopped = n > 0 && n == s->n && s->stop == MODEL_STOP_TOKEN;
    r->ids = malloc(((size_t)n + 1) * sizeof *r->ids);
    r->logprobs = malloc(((size_t)n + 1) * sizeof *r->logprobs);
    if (!r->ids || !r->logprobs)
        return rl_err(err, RL_ENOMEM, "policy live: out of memory");
    for (int i = 0; i < n; i++) {
        r->ids[i] = s->tokens[i];
        r->logprobs[i] = s->logprobs[i];
    }
    r->n_ids = (size_t)n;
    r->finish = stopped ? POL_FINISH_STOP : POL_FINISH_LENGTH;
    int rc = tok_decode(&r->text, &r->text_len, L->tok, r->ids, (size_t)(stopped ? n - 1 : n), err);
    return rc < 0 ? rc : 0;
}

/* One model_sample call for up to RL_MODEL_SAMPLE_BATCH_MAX requests. */
static int generate_chunk(live *L, pol_response *resp, const pol_request *req, size_t n, char *err)
{
    double t0 = now_s();
    int max_seq = L->m->cfg.max_seq;
    int **ids = calloc(n, sizeof *ids), **owned = calloc(n, sizeof *owned);
    int *lens = calloc(n, sizeof *lens), *caps = calloc(n, sizeof *caps), *pick = calloc(n, sizeof *pick);
    const int **prompts = calloc(n, sizeof *prompts);
    int *plens = calloc(n, sizeof *plens);
    uint64_t *seeds = calloc(n, sizeof *seeds);
    model_sample_out *out = calloc(n, sizeof *out);
    int rc = 0, nb = 0, max_new = 0;
    if (!ids || !owned || !lens || !caps || !pick || !prompts || !plens || !seeds || !out) {
        rc = rl_err(err, RL_ENOMEM, "policy live: out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        if ((rc = prompt_of(L, &req[i], &ids[i], &lens[i], &owned[i], err)) < 0)
            goto done;
        int want = req[i].max_tokens > 0 ? req[i].max_tokens : L->o.max_tokens;
        int room = max_seq - lens[i];
        caps[i] = want < room ? want : room;
        if (lens[i] < 1 || caps[i] < 1)
            continue; /* no room: an empty, truncated reply */
        prompts[nb] = ids[i];
        plens[nb] = lens[i];
        seeds[nb] = req[i].seed; /* its own stream, whatever it is batched with */
        atomic_fetch_add(&L->prompt_tokens, (long)lens[i]);
        pick[nb++] = (int)i;
        if (caps[i] > max_new)
            max_new = caps[i];
    }
    if (nb > 0) {
        int stop = L->stop_id;
        model_sample_opts so;
        model_sample_opts_default(&so);
        so.temperature = L->o.temperature;
        so.top_p = L->o.top_p;
        so.seeds = seeds;
        so.max_new = max_new;
        so.stop_ids = &stop;
        so.n_stop = 1;
        long reused = model_kvset_reused(L->kv);
        rc = L->kv && nb <= RL_MODEL_KV_CACHES ? model_sample_cached(L->m, L->kv, out, prompts, plens, nb, &so, err)
                                               : model_sample(L->m, out, prompts, plens, nb, &so, err);
        atomic_fetch_sub(&L->prompt_tokens, model_kvset_reused(L->kv) - reused); /* not prefilled */
        if (rc < 0) {
            memset(out, 0, n * sizeof *out);
            goto done;
        }
    }
    long gen_ms = (long)((now_s() - t0) * 1000.0);
    for (int k = 0; k < nb; k++) {
        pol_response *r = &resp[pick[k]];
        if ((rc = fill_response(L, r, &out[k], caps[pick[k]], err)) < 0)
            goto done;
        atomic_fetch_add(&L->tokens, (long)r->n_ids);
    }
    for (size_t i = 0; i < n; i++) {
        pol_response *r = &resp[i];
        r->gen_ms = gen_ms;
        if (!r->text) { /* skipped: no room */
            r->text = strdup("");
            r->ids = malloc(sizeof *r->ids);
            r->logprobs = malloc(sizeof *r->logprobs);
            if (!r->text || !r->ids || !r->logprobs) {
                rc = rl_err(err, RL_ENOMEM, "policy live: out of memory");
                goto done;
            }
            r->finish = POL_FINISH_LENGTH;
        }
    }
done:
    if (out)
        for (int k = 0; k < nb; k++)
            model_sample_out_dispose(&out[k]);
    if (rc < 0)
        for (size_t i = 0; i < n; i++)
            pol_response_dispose(&resp[i]);
    for (size_t i = 0; owned && i < n; i++)
        free(owned[i]);
    free(ids);
    free(owned);
    free(lens);
    free(caps);
    free(pick);
    free(prompts);
    free(plens);
    free(seeds);
    free(out);
    atomic_fetch_add(&L->nanos, (long)((now_s() - t0) * 1e9));
    return rc;
}

static int live_generate(policy *p, pol_response *resp, const pol_request *req, size_t n, char *err)
{
    live *L = p->impl;
    memset(resp, 0, n * sizeof *resp);
    for (size_t i = 0; i < n; i += RL_MODEL_SAMPLE_BATCH_MAX) {
        size_t k = n - i < RL_MODEL_SAMPLE_BATCH_MAX ? n - i : RL_MODEL_SAMPLE_BATCH_MAX;
        int rc = generate_chunk(L, resp + i, req + i, k, err);
        if (rc < 0) {
            for (size_t j = 0; j < i; j++)
                pol_response_dispose(&resp[j]);
            return rc;
        }
    }
    return 0;
}

static void live_free(policy *p)
{
    live *L = p->impl;
    if (L)
        model_kvset_free(L->kv);
    free(L);
}

static const pol_vtable LIVE_VT = {live_generate, live_free};

int live_policy_new(policy **out, model *m, const tok_t *tok, const live_policy_opts *o, char *err)
{
    *out = NULL;
    live_policy_opts dflt;
    if (!o) {
        live_policy_opts_default(&dflt);
        o = &dflt;
    }
    if (!m || !tok)
        return rl_err(err, RL_EINVAL, "policy live: needs a model and a tokenizer");
    int stop = tok_special_id(tok, "<|im_end|>");
    if (stop < 0)
        return rl_err(err, RL_EINVAL, "policy live: the tokenizer has no <|im_end|> token");
    if (tok_vocab_size(tok) > m->cfg.vocab)
        return rl_err(err, RL_EINVAL, "policy live: tokenizer vocabulary %d, expected at most the model's %d",
                      tok_vocab_size(tok), m->cfg.vocab);
    if (!(o->top_p > 0.0f && o->top_p <= 1.0f) || !(o->temperature >= 0.0f))
        return rl_err(err, RL_EINVAL, "policy live: temperature %g, top_p %g; expected >= 0 and (0, 1]",
                      (double)o->temperature, (double)o->top_p);
    policy *p = calloc(1, sizeof *p);
    live *L = calloc(1, sizeof *L);
    if (!p || !L) {
        free(p);
        free(L);
        return rl_err(err, RL_ENOMEM, "policy live: out of memory");
    }
    int rc = model_kvset_new(&L->kv, m, RL_MODEL_KV_CACHES, err);
    if (rc < 0) {
        free(p);
        free(L);
        return rc;
    }
    L->m = m;
    L->tok = tok;
    L->o = *o;
    L->stop_id = stop;
    p->vt = &LIVE_VT;
    snprintf(p->name, sizeof p->name, "%s", o->name ? o->name : "live");
    p->tok = tok;
    p->impl = L;
    *out = p;
    return 0;
}

void live_policy_set_temperature(policy *p, float temperature)
{
    live *L = p->impl;
    L->o.temperature = temperature;
}

void live_policy_counters(const policy *p, long *tokens, long *prompt_tokens, double *seconds)
{
    live *L = p->impl;
    if (tokens)
        *tokens = atomic_load(&L->tokens);
    if (prompt_tokens)
        *prompt_tokens = atomic_load(&L->prompt_tokens);
    if (seconds)
        *seconds = (double)atomic_load(&L->nanos) * 1e-9;
}
