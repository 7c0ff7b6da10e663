/* policy.h - the policy interface: context in, next assistant message out.
 *
 * A policy maps a rendered context (the exact text, and token ids when the
 * caller has them) to the next assistant message. It knows nothing of the
 * episode loop, tools or tasks: scripted policies read the conversation
 * text like a model would. Requests are batched so that a model can sample
 * several sequences at once with a KV cache, and every response carries
 * the token ids and per-token logprobs when the policy has a tokenizer.
 *
 * Implementations: oracle and search (scripted, policy/scripted_*.c),
 * replay (policy/replay.c), model (the built-in transformer), openai (a
 * client of OpenAI-compatible servers, policy/openai.h).
 */
#ifndef RL_POLICY_H
#define RL_POLICY_H

#include "common/log.h"

#include <stddef.h>
#include <stdint.h>

typedef struct pol_request {
    const char *context;       /* rendered context, ending in the
                                  generation prompt */
    size_t context_len;
    const int32_t *context_ids;/* the same context as token ids, or NULL
                                  (the policy then tokenizes the text) */
    size_t n_context_ids;
    int max_tokens;            /* cap on the reply, in tokens (or bytes/4
                                  for policies without a tokenizer) */
    uint64_t seed;             /* per request: same seed, same reply */
    int episode;               /* which episode of the batch this is (for
                                  policies that keep per-episode state) */
    /* The conversation and the tools behind the context, for a policy that
     * sends messages rather than text (openai's chat mode); may be NULL,
     * other policies ignore them. */
    const struct chat *chat;
    const struct tc_spec *tools;
    size_t ntools;
} pol_request;

typedef enum pol_finish { POL_FINISH_STOP = 0, POL_FINISH_LENGTH } pol_finish;

typedef struct pol_response {
    char *text;                /* the assistant message as generated:
                                  everything after the generation prompt,
                                  without the end-of-turn marker */
    size_t text_len;
    int32_t *ids;              /* sampled token ids (incl. the stop token),
                                  NULL for policies without a tokenizer */
    float *logprobs;           /* behaviour logprob of each sampled id */
    size_t n_ids;
    pol_finish finish;
    long gen_ms;
    long policy_version;       /* set by the driver: the weights' version
                                  that produced these tokens (0: n/a) */
    char *error;               /* this request failed (one line) while the
                                  others of the call went on; text etc.
                                  empty. NULL: it succeeded */
    char *meta;                /* a JSON object the record keeps with the
                                  turn (openai: mode, model, request id,
                                  usage, latency); NULL: none */
    int32_t *context_ids;      /* the prompt's ids as the policy's server
                                  counted them, when the caller's context
                                  ids are not what it saw; NULL: none */
    size_t n_context_ids;
} pol_response;

typedef struct policy policy;

typedef struct pol_vtable {
    /* Fills resp[0..n) for req[0..n). Returns 0 or RL_E* with err. */
    int (*generate)(policy *p, pol_response *resp, const pol_request *req, size_t n, char *err);
    void (*free)(policy *p);
} pol_vtable;

struct tok;

struct policy {
    const pol_vtable *vt;
    char name[64];                   /* "oracle", "search", "model:ckpt" */
    const struct tok *tok;           /* NULL when the policy has none */
    int concurrent;                  /* 1: generate may run on several threads
                                        at once (openai); 0: one at a time */
    void *impl;
};

/* What a scripted policy may know besides the context. The oracle gets the
 * gold patch (it demonstrates the shortest path); search gets nothing the
 * context does not show. */
typedef struct pol_env {
    const char *gold_patch;    /* oracle only */
    uint64_t seed;
    double temperature;        /* model policies */
    double top_p;
    int model_dtype;           /* model policies: MODEL_DTYPE_* of model/model.h (0: f32) */
    /* openai (policy/openai.h); NULL / 0: its defaults */
    const char *base_url;
    const char *model;
    const char *api;           /* "chat" or "completions" */
    const char *api_key_env;
    const char *tokenizer;
    int max_inflight;
    long timeout_ms;           /* per request attempt */
    int retries;               /* 1 + the extra attempts (0: the default) */
    rl_log_fn log;             /* retries and the like; NULL: silent */
    void *log_ctx;
} pol_env;

void pol_env_default(pol_env *e);

/* Opens a policy from a spec: "oracle", "search", "replay:FILE[:K]",
 * "model:CKPT", "openai" (its options in env). One-line error for an unknown or unusable spec. */
int pol_open(policy **out, const char *spec, const pol_env *env, char *err);
void pol_free(policy *p);

int pol_generate(policy *p, pol_response *resp, const pol_request *req, size_t n, char *err);
void pol_response_dispose(pol_response *r);

#endif
