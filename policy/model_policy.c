/* model_policy.c - `model:CKPT`: the built-in transformer as a policy.
 *
 * Opens a checkpoint and the tokenizer its metadata names (checked against
 * the recorded hash: a model only makes sense with the ids it was trained
 * on), then answers requests by sampling with a KV cache, all requests of
 * one call decoded together. The prompt is the request's context ids when
 * the harness gives them (they are the exact sequence the policy saw on
 * earlier turns, sampled ids included), else the context text encoded with
 * special tokens allowed. Generation stops at <|im_end|>, which the reply's
 * ids include and its text does not.
 *
 * A context that leaves no room in the model's window is answered honestly
 * with an empty reply and finish LENGTH (the episode then ends with
 * max_context); otherwise a reply never runs past the window either.
 *
 * Seeds: model_sample draws sequence i of a call from stream i of one
 * seed; the call uses the first request's seed. So a reply is a function of
 * (that seed, its position in the batch, the weights, the context): the
 * harness asks one request at a time, and then it is "same seed, same
 * reply".
 */
#include "common/err.h"
#include "common/limits.h"
#include "model/model.h"
#include "policy/scripted.h"
#include "protocol/tokenizer.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct mpol {
    model *m;
    model_kvset *kv; /* prefix caches across turns */
    tok_t *tok;
    int32_t stop_id;
    float temperature, top_p;
} mpol;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
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
    model_free(mp->m);
    tok_free(mp->tok);
    free(mp);
}

/* The prompt of one request as model ids (caller frees). */
static int prompt_ids(int **out, int *n, const mpol *mp, const pol_request *r, char *err)
{
    *out = NULL;
    *n = 0;
    int vocab = mp->m->cfg.vocab;
    if (r->context_ids && r->n_context_ids) {
        if (r->n_context_ids > (size_t)RL_MODEL_SEQ_MAX * 4)
            return rl_err(err, RL_ELIMIT, "model policy: context of %zu ids", r->n_context_ids);
        int *v = malloc(r->n_context_ids * sizeof *v);
        if (!v)
            return rl_err(err, RL_ENOMEM, "model policy: out of memory");
        for (size_t i = 0; i < r->n_context_ids; i++) {
            if (r->context_ids[i] < 0 || r->context_ids[i] >= vocab) {
                free(v);
                return rl_err(err, RL_EINVAL, "model policy: context id %d at %zu, expected 0..%d", r->context_ids[i],
                              i, vocab - 1);
            }
            v[i] = r->context_ids[i];
        }
        *out = v;
        *n = (int)r->n_context_ids;
        return 0;
    }
    int32_t *ids;
    size_t cnt;
    int rc = tok_encode(&ids, &cnt, mp->tok, r->context ? r->context : "", r->context ? r->context_len : 0,
                        TOK_SPECIAL_ALLOW, err);
    if (rc < 0)
        return rc;
    if (cnt > (size_t)RL_MODEL_SEQ_MAX * 4) {
        free(ids);
        return rl_err(err, RL_ELIMIT, "model policy: context of %zu tokens", cnt);
    }
    int *v = malloc((cnt ? cnt : 1) * sizeof *v);
    if (!v) {
        free(ids);
        return rl_err(err, RL_ENOMEM, "model policy: out of memory");
    }
    for (size_t i = 0; i < cnt; i++)
        v[i] = ids[i];
    free(ids);
    *out = v;
    *n = (int)cnt;
    return 0;
}

/* Fills a response from sampled tokens: text without the stop token. */
static int fill_response(pol_response *r, const mpol *mp, const model_sample_out *o, char *err)
{
    int n = o->n;
    r->ids = malloc(((size_t)n + 1) * sizeof *r->ids);
    r->logprobs = malloc(((size_t)n + 1) * sizeof *r->logprobs);
    if (!r->ids || !r->logprobs)
        return rl_err(err, RL_ENOMEM, "model policy: out of memory");
    for (int i = 0; i < n; i++) {
        r->ids[i] = o->tokens[i];
        r->logprobs[i] = o->logprobs[i];
    }
    r->n_ids = (size_t)n;
    int stopped = o->stop == MODEL_STOP_TOKEN && n > 0 && o->tokens[n - 1] == mp->stop_id;
    r->finish = stopped ? POL_FINISH_STOP : POL_FINISH_LENGTH;
    return tok_decode(&r->text, &r->text_len, mp->tok, r->ids, (size_t)(n - stopped), err);
}

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

static int mpol_generate(policy *p, pol_response *resp, const pol_request *req, size_t n, char *err)
{
    mpol *mp = p->impl;
    double t0 = now_ms();
    memset(resp, 0, n * sizeof *resp);
    if (n > RL_MODEL_SAMPLE_BATCH_MAX)
        return rl_err(err, RL_ELIMIT, "model policy: %zu requests in one call, at most %d", n,
                      RL_MODEL_SAMPLE_BATCH_MAX);
    int max_seq = mp->m->cfg.max_seq;
    int **prompts = calloc(n ? n : 1, sizeof *prompts);
    int *lens = calloc(n ? n : 1, sizeof *lens);
    int *which = calloc(n ? n : 1, sizeof *which); /* request of each sampled sequence */
    uint64_t *seeds = calloc(n ? n : 1, sizeof *seeds); /* its seed: its own stream */
    model_sample_out *outs = calloc(n ? n : 1, sizeof *outs);
    int rc = 0, n_seq = 0, max_new = 0;
    if (!prompts || !lens || !which || !seeds || !outs)
        rc = rl_err(err, RL_ENOMEM, "model policy: out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        int *ids, len;
        if ((rc = prompt_ids(&ids, &len, mp, &req[i], err)) < 0)
            break;
        /* no room for one new token: answered honestly, nothing sampled */
        if (len < 1 || len >= max_seq) {
            free(ids);
            rc = empty_response(&resp[i], err);
            continue;
        }
        int room = max_seq - len;
        int want = req[i].max_tokens > 0 && req[i].max_tokens < room ? req[i].max_tokens : room;
        max_new = want > max_new ? want : max_new;
        prompts[n_seq] = ids;
        lens[n_seq] = len;
        seeds[n_seq] = req[i].seed;
        which[n_seq++] = (int)i;
    }
    if (rc == 0 && n_seq) {
        /* one call for all: max_new is the largest allowance; the window
         * (prompt + max_new capped at max_seq) bounds each sequence, and
         * shorter allowances are enforced by cutting below */
        model_sample_opts so;
        model_sample_opts_default(&so);
        so.temperature = mp->temperature;
        so.top_p = mp->top_p;
        so.seeds = seeds;
        so.max_new = max_new;
        so.stop_ids = &mp->stop_id;
        so.n_stop = 1;
        rc = mp->kv && n_seq <= RL_MODEL_KV_CACHES
                 ? model_sample_cached(mp->m, mp->kv, outs, (const int *const *)prompts, lens, n_seq, &so, err)
                 : model_sample(mp->m, outs, (const int *const *)prompts, lens, n_seq, &so, err);
        for (int s = 0; rc == 0 && s < n_seq; s++) {
            const pol_request *r = &req[which[s]];
            int room = max_seq - lens[s];
            int want = r->max_tokens > 0 && r->max_tokens < room ? r->max_tokens : room;
            if (outs[s].n > want) {
                outs[s].n = want;
                outs[s].stop = MODEL_STOP_LENGTH;
            }
            rc = fill_response(&resp[which[s]], mp, &outs[s], err);
        }
        for (int s = 0; s < n_seq; s++)
            model_sample_out_dispose(&outs[s]);
    }
    long ms = (long)(now_ms() - t0);
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
    free(which);
    free(seeds);
    free(outs);
    return rc;
}

static const pol_vtable MODEL_VT = {mpol_generate, mpol_free};

int model_policy_open(policy **out, const char *ckpt, const pol_env *env, char *err)
{
    *out = NULL;
    if (!ckpt || !ckpt[0])
        return rl_err(err, RL_EINVAL, "policy model:CKPT: expected a checkpoint path after 'model:'");
    if (!(env->temperature >= 0 && env->temperature <= 1e3) || !(env->top_p > 0 && env->top_p <= 1))
        return rl_err(err, RL_EINVAL, "policy model:%s: temperature %g, top_p %g: expected >= 0 and in (0, 1]", ckpt,
                      env->temperature, env->top_p);
    mpol *mp = calloc(1, sizeof *mp);
    policy *p = calloc(1, sizeof *p);
    if (!mp || !p) {
        free(mp);
        free(p);
        return rl_err(err, RL_ENOMEM, "policy model:%s: out of memory", ckpt);
    }
    p->vt = &MODEL_VT;
    p->impl = mp;
    snprintf(p->name, sizeof p->name, "model:%s", ckpt);
    mp->temperature = (float)env->temperature;
    mp->top_p = (float)env->top_p;
    model_opts mo;
    model_opts_default(&mo);
    model_meta meta;
    int rc = model_load(&mp->m, &meta, ckpt, &mo, err);
    if (rc == 0)
        rc = open_tokenizer(&mp->tok, &meta, ckpt, err);
    if (rc == 0 && tok_vocab_size(mp->tok) != mp->m->cfg.vocab)
        rc = rl_err(err, RL_EINVAL, "%s: the model has %d token ids, its tokenizer %d", ckpt, mp->m->cfg.vocab,
                    tok_vocab_size(mp->tok));
    if (rc == 0 && (mp->stop_id = tok_special_id(mp->tok, "<|im_end|>")) < 0)
        rc = rl_err(err, RL_EINVAL, "%s: its tokenizer has no <|im_end|> token", ckpt);
    if (rc == 0)
        rc = model_kvset_new(&mp->kv, mp->m, RL_MODEL_KV_CACHES, err);
    if (rc < 0) {
        pol_free(p);
        return rc;
    }
    p->tok = mp->tok;
    *out = p;
    return 0;
}
