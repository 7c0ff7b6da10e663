/* model_policy.c - the built-in transformer as a policy (model_policy.h):
 * `model:CKPT` for the harness, and the trainer's policy over the weights
 * it is training. One prompt builder and one response filler serve both.
 */
#include "policy/model_policy.h"

#include "common/err.h"
#include "common/limits.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct mpol {
    model *m;
    model_kvset *kv;   /* prefix caches across turns */
    const tok_t *tok;
    model *own_m;      /* what the policy frees (model:CKPT); NULL when borrowed */
    tok_t *own_tok;
    model_policy_opts o;
    int32_t stop_id;
    /* counters read by other threads (the trainer's learner) */
    _Atomic long tokens, prompt_tokens, nanos;
} mpol;

void model_policy_opts_default(model_policy_opts *o)
{
    o->temperature = 0.7f;
    o->top_p = 1.0f;
    o->max_tokens = 0;
    o->name = "model";
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The tokenizer a checkpoint names: its path as recorded (relative to the
 * working directory), else the same file name next to the checkpoint. */
static int open_tokenizer(tok_t **out, const model_meta *meta, const char *ckpt, char *err)
{
    *out = NULL;
    if (!meta->tokenizer[0])
        return rl_err(err, RL_EINVAL, "%s: the checkpoint names no tokenizer (expected metadata \"tokenizer\")", ckpt);
    char path[PATH_MAX + 1200];
    snprintf(path, sizeof path, "%s", meta->tokenizer);
    if (access(path, R_OK) != 0 && meta->tokenizer[0] != '/') {
        const char *base = strrchr(meta->tokenizer, '/');
        base = base ? base + 1 : meta->tokenizer;
        const char *slash = strrchr(ckpt, '/');
        int dlen = slash ? (int)(slash - ckpt) : 1;
        snprintf(path, sizeof path, "%.*s/%s", dlen, slash ? ckpt : ".", base);
    }
    if (access(path, R_OK) != 0)
        return rl_err(err, RL_ENOENT, "%s: tokenizer %s not found (also looked for %s)", ckpt, meta->tokenizer, path);
    char hash[17];
    int rc = model_file_hash(hash, path, err);
    if (rc < 0)
        return rc;
    if (meta->tokenizer_hash[0] && strcmp(hash, meta->tokenizer_hash))
        return rl_err(err, RL_EINVAL, "%s: tokenizer %s has hash %s, the checkpoint was trained with %s", ckpt, path,
                      hash, meta->tokenizer_hash);
    return tok_load(out, path, err);
}

static void mpol_free(policy *p)
{
    mpol *mp = p->impl;
    if (!mp)
        return;
    model_kvset_free(mp->kv);
    model_free(mp->own_m);
    tok_free(mp->own_tok);
    free(mp);
}

/* The prompt of one request as model ids (*out, caller frees). A prompt
 * longer than any window gets *n = RL_MODEL_SEQ_MAX + 1 and no ids: the
 * caller answers it with an empty reply. */
static int prompt_ids(int **out, int *n, const mpol *mp, const pol_request *r, char *err)
{
    *out = NULL;
    *n = 0;
    size_t cnt = r->n_context_ids;
    const int32_t *src = r->context_ids;
    int32_t *enc = NULL;
    if (!src || !cnt) {
        int rc = tok_encode(&enc, &cnt, mp->tok, r->context ? r->context : "", r->context ? r->context_len : 0,
                            TOK_SPECIAL_ALLOW, err);
        if (rc < 0)
            return rc;
        src = enc;
    }
    if (cnt > (size_t)RL_MODEL_SEQ_MAX) {
        free(enc);
        *n = RL_MODEL_SEQ_MAX + 1;
        return 0;
    }
    int vocab = mp->m->cfg.vocab;
    int *v = malloc((cnt ? cnt : 1) * sizeof *v);
    if (!v) {
        free(enc);
        return rl_err(err, RL_ENOMEM, "model policy: out of memory");
    }
    for (size_t i = 0; i < cnt; i++) {
        if (src[i] < 0 || src[i] >= vocab) {
            int bad = src[i];
            free(v);
            free(enc);
            return rl_err(err, RL_EINVAL, "model policy: context id %d at %zu, expected 0..%d", bad, i, vocab - 1);
        }
        v[i] = src[i];
    }
    free(enc);
    *out = v;
    *n = (int)cnt;
    return 0;
}

/* Fills a response from sampled tokens cut at cap: ids with the stop
 * token, text without. */
static int fill_response(pol_response *r, const mpol *mp, const model_sample_out *o, int cap, char *err)
{
    int n = o->n < cap ? o->n : cap;
    int stopped = n > 0 && n == o->n && o->stop == MODEL_STOP_TOKEN && o->tokens[n - 1] == mp->stop_id;
    r->ids = malloc(((size_t)n + 1) * sizeof *r->ids);
    r->logprobs = malloc(((size_t)n + 1) * sizeof *r->logprobs);
    if (!r->ids || !r->logprobs)
        return rl_err(err, RL_ENOMEM, "model policy: out of memory");
    for (int i = 0; i < n; i++) {
        r->ids[i] = o->tokens[i];
        r->logprobs[i] = o->logprobs[i];
    }
    r->n_ids = (size_t)n;
    r->finish = stopped ? POL_FINISH_STOP : POL_FINISH_LENGTH;
    return tok_decode(&r->text, &r->text_len, mp->tok, r->ids, (size_t)(n - stopped), err);
}

/* The answer to a prompt that leaves no room: empty, finish LENGTH. */
static int empty_response(pol_response *r, char *err)
{
    r->text = strdup("");
    r->ids = malloc(sizeof *r->ids);
    r->logprobs = malloc(sizeof *r->logprobs);
    if (!r->text || !r->ids || !r->logprobs)
        return rl_err(err, RL_ENOMEM, "model policy: out of memory");
    r->n_ids = 0;
    r->finish = POL_FINISH_LENGTH;
    return 0;
}

/* One model_sample call for up to RL_MODEL_SAMPLE_BATCH_MAX requests. */
static int generate_chunk(mpol *mp, pol_response *resp, const pol_request *req, size_t n, char *err)
{
    double t0 = now_s();
    int max_seq = mp->m->cfg.max_seq;
    int **prompts = calloc(n, sizeof *prompts);
    int *lens = calloc(n, sizeof *lens), *caps = calloc(n, sizeof *caps);
    int *which = calloc(n, sizeof *which);        /* request of each sampled sequence */
    uint64_t *seeds = calloc(n, sizeof *seeds);   /* its seed: its own stream */
    model_sample_out *outs = calloc(n, sizeof *outs);
    int rc = 0, n_seq = 0, max_new = 0;
    if (!prompts || !lens || !caps || !which || !seeds || !outs)
        rc = rl_err(err, RL_ENOMEM, "model policy: out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        int *ids, len;
        if ((rc = prompt_ids(&ids, &len, mp, &req[i], err)) < 0)
            break;
        int room = max_seq - len;
        int want = req[i].max_tokens > 0 ? req[i].max_tokens : mp->o.max_tokens > 0 ? mp->o.max_tokens : room;
        int cap = want < room ? want : room;
        if (len < 1 || cap < 1) { /* no room for one new token: answered honestly, nothing sampled */
            free(ids);
            rc = empty_response(&resp[i], err);
            continue;
        }
        max_new = cap > max_new ? cap : max_new;
        prompts[n_seq] = ids;
        lens[n_seq] = len;
        caps[n_seq] = cap;
        seeds[n_seq] = req[i].seed;
        atomic_fetch_add(&mp->prompt_tokens, (long)len);
        which[n_seq++] = (int)i;
    }
    if (rc == 0 && n_seq) {
        /* one call for all: max_new is the largest allowance; the window
         * bounds each sequence, and smaller allowances are cut below */
        model_sample_opts so;
        model_sample_opts_default(&so);
        so.temperature = mp->o.temperature;
        so.top_p = mp->o.top_p;
        so.seeds = seeds;
        so.max_new = max_new;
        so.stop_ids = &mp->stop_id;
        so.n_stop = 1;
        long reused = model_kvset_reused(mp->kv);
        rc = mp->kv && n_seq <= RL_MODEL_KV_CACHES
                 ? model_sample_cached(mp->m, mp->kv, outs, (const int *const *)prompts, lens, n_seq, &so, err)
                 : model_sample(mp->m, outs, (const int *const *)prompts, lens, n_seq, &so, err);
        atomic_fetch_sub(&mp->prompt_tokens, model_kvset_reused(mp->kv) - reused); /* not prefilled */
        for (int s = 0; rc == 0 && s < n_seq; s++) {
            rc = fill_response(&resp[which[s]], mp, &outs[s], caps[s], err);
            if (rc == 0)
                atomic_fetch_add(&mp->tokens, (long)resp[which[s]].n_ids);
        }
        for (int s = 0; s < n_seq; s++)
            model_sample_out_dispose(&outs[s]);
    }
    double dt = now_s() - t0;
    long ms = (long)(dt * 1000.0);
    for (size_t i = 0; i < n; i++) {
        if (rc < 0)
            pol_response_dispose(&resp[i]);
        else
            resp[i].gen_ms = ms > 0 ? ms : 1;
    }
    for (int s = 0; prompts && s < n_seq; s++)
        free(prompts[s]);
    free(prompts);
    free(lens);
    free(caps);
    free(which);
    free(seeds);
    free(outs);
    atomic_fetch_add(&mp->nanos, (long)(dt * 1e9));
    return rc;
}

static int mpol_generate(policy *p, pol_response *resp, const pol_request *req, size_t n, char *err)
{
    mpol *mp = p->impl;
    memset(resp, 0, n * sizeof *resp);
    for (size_t i = 0; i < n; i += RL_MODEL_SAMPLE_BATCH_MAX) {
        size_t k = n - i < RL_MODEL_SAMPLE_BATCH_MAX ? n - i : RL_MODEL_SAMPLE_BATCH_MAX;
        int rc = generate_chunk(mp, resp + i, req + i, k, err);
        if (rc < 0) {
            for (size_t j = 0; j < i; j++)
                pol_response_dispose(&resp[j]);
            return rc;
        }
    }
    return 0;
}

static const pol_vtable MODEL_VT = {mpol_generate, mpol_free};

/* The policy shell over m and tok (borrowed; the caller sets own_*). */
static int mpol_new(policy **out, model *m, const tok_t *tok, const model_policy_opts *o, const char *what,
                    char *err)
{
    *out = NULL;
    if (!(o->temperature >= 0.0f && o->temperature <= 1e3f) || !(o->top_p > 0.0f && o->top_p <= 1.0f))
        return rl_err(err, RL_EINVAL, "policy %s: temperature %g, top_p %g: expected >= 0 and in (0, 1]", what,
                      (double)o->temperature, (double)o->top_p);
    int stop = tok_special_id(tok, "<|im_end|>");
    if (stop < 0)
        return rl_err(err, RL_EINVAL, "policy %s: the tokenizer has no <|im_end|> token", what);
    if (tok_vocab_size(tok) > m->cfg.vocab)
        return rl_err(err, RL_EINVAL, "policy %s: tokenizer vocabulary %d, expected at most the model's %d", what,
                      tok_vocab_size(tok), m->cfg.vocab);
    model_set_active_vocab(m, tok_vocab_size(tok)); /* padded rows are never drawn */
    policy *p = calloc(1, sizeof *p);
    mpol *mp = calloc(1, sizeof *mp);
    if (!p || !mp) {
        free(p);
        free(mp);
        return rl_err(err, RL_ENOMEM, "policy %s: out of memory", what);
    }
    int rc = model_kvset_new(&mp->kv, m, RL_MODEL_KV_CACHES, err);
    if (rc < 0) {
        free(p);
        free(mp);
        return rc;
    }
    mp->m = m;
    mp->tok = tok;
    mp->o = *o;
    mp->stop_id = stop;
    p->vt = &MODEL_VT;
    p->impl = mp;
    p->tok = tok;
    snprintf(p->name, sizeof p->name, "%s", o->name ? o->name : "model");
    *out = p;
    return 0;
}

int model_policy_new(policy **out, model *m, const tok_t *tok, const model_policy_opts *o, char *err)
{
    *out = NULL;
    model_policy_opts dflt;
    if (!o) {
        model_policy_opts_default(&dflt);
        o = &dflt;
    }
    if (!m || !tok)
        return rl_err(err, RL_EINVAL, "policy %s: needs a model and a tokenizer", o->name ? o->name : "model");
    return mpol_new(out, m, tok, o, o->name ? o->name : "model", err);
}

int model_policy_open(policy **out, const char *ckpt, const pol_env *env, char *err)
{
    *out = NULL;
    if (!ckpt || !ckpt[0])
        return rl_err(err, RL_EINVAL, "policy model:CKPT: expected a checkpoint path after 'model:'");
    if (!(env->temperature >= 0 && env->temperature <= 1e3) || !(env->top_p > 0 && env->top_p <= 1))
        return rl_err(err, RL_EINVAL, "policy model:%s: temperature %g, top_p %g: expected >= 0 and in (0, 1]", ckpt,
                      env->temperature, env->top_p);
    model_opts mo;
    model_opts_default(&mo);
    mo.dtype = env->model_dtype;
    model_meta meta;
    model *m = NULL;
    tok_t *tok = NULL;
    int rc = model_load(&m, &meta, ckpt, &mo, err);
    if (rc == 0)
        rc = open_tokenizer(&tok, &meta, ckpt, err);
    if (rc == 0 && tok_vocab_size(tok) > m->cfg.vocab)
        rc = rl_err(err, RL_EINVAL, "%s: the model has %d token ids, its tokenizer more (%d)", ckpt, m->cfg.vocab,
                    tok_vocab_size(tok));
    if (rc == 0 && tok_special_id(tok, "<|im_end|>") < 0)
        rc = rl_err(err, RL_EINVAL, "%s: its tokenizer has no <|im_end|> token", ckpt);
    char name[sizeof ((policy *)0)->name];
    snprintf(name, sizeof name, "model:%s", ckpt);
    model_policy_opts o;
    model_policy_opts_default(&o);
    o.temperature = (float)env->temperature;
    o.top_p = (float)env->top_p;
    o.name = name;
    if (rc == 0)
        rc = mpol_new(out, m, tok, &o, name, err);
    if (rc < 0) {
        model_free(m);
        tok_free(tok);
        return rc;
    }
    mpol *mp = (*out)->impl;
    mp->own_m = m;
    mp->own_tok = tok;
    mp->o.name = NULL; /* name was on this stack; p->name holds the copy */
    return 0;
}

model *model_policy_model(const policy *p)
{
    const mpol *mp = p->impl;
    return mp->m;
}

void model_policy_set_temperature(policy *p, float temperature)
{
    mpol *mp = p->impl;
    mp->o.temperature = temperature;
}

void model_policy_counters(const policy *p, long *tokens, long *prompt_tokens, double *seconds)
{
    const mpol *mp = p->impl;
    if (tokens)
        *tokens = atomic_load(&mp->tokens);
    if (prompt_tokens)
        *prompt_tokens = atomic_load(&mp->prompt_tokens);
    if (seconds)
        *seconds = (double)atomic_load(&mp->nanos) * 1e-9;
}
