/* model_policy.h - the built-in transformer as a policy.
 *
 * One policy serves both the harness (`--policy model:CKPT`, which loads a
 * checkpoint and its tokenizer and owns them) and the trainer (a policy
 * over the in-memory weights being trained, which it borrows: every
 * pol_generate call samples from whatever m->params hold at that moment).
 *
 * Prompts are the request's context ids when given (the exact sequence the
 * policy saw on earlier turns, sampled ids included), else the context
 * text encoded with special tokens allowed (the rendered template).
 * Requests of one call are sampled together (model_sample with a KV cache;
 * calls of more than RL_MODEL_SAMPLE_BATCH_MAX requests in several). The
 * caches are kept across calls (model_sample_cached): a turn prefills only
 * the tokens its episode's last turn did not see. Generation stops after
 * <|im_end|>; the response's ids include that stop token, its text is the
 * decode of the ids without it, and logprobs are of the tempered
 * distribution (model.h), i.e. the behaviour logprobs GRPO needs.
 *
 * A prompt that leaves no room for a reply (context >= max_seq) gets an
 * empty reply with finish LENGTH: the episode then ends with max_context
 * instead of failing the whole batch.
 *
 * Determinism: each request draws from its own stream of its seed
 * (model_sample_opts.seeds), so its reply depends on its prompt, its seed
 * and the weights, not on which other requests share the call (up to the
 * rounding of batched matrix products).
 */
#ifndef RL_MODEL_POLICY_H
#define RL_MODEL_POLICY_H

#include "model/model.h"
#include "policy/policy.h"
#include "protocol/tokenizer.h"

typedef struct model_policy_opts {
    float temperature;  /* 0.7 */
    float top_p;        /* 1.0 */
    int max_tokens;     /* cap on a reply when the request gives none; 0: the room left in the window */
    const char *name;   /* policy name, "model" */
} model_policy_opts;

void model_policy_opts_default(model_policy_opts *o);

/* A policy over a model it does not own: m and tok must outlive it. Fails
 * if tok has no <|im_end|> or its vocabulary does not fit the model's. */
int model_policy_new(policy **out, model *m, const tok_t *tok, const model_policy_opts *o, char *err);

/* `model:CKPT`: opens a checkpoint and the tokenizer its metadata names
 * (checked against the recorded hash: a model only makes sense with the
 * ids it was trained on); the policy owns both. */
int model_policy_open(policy **out, const char *ckpt, const pol_env *env, char *err);

/* The model the policy samples from (owned or borrowed as above): for a
 * program that opened `model:CKPT` and serves the same weights. */
model *model_policy_model(const policy *p);

/* Changes the sampling temperature (evaluation may sample differently). */
void model_policy_set_temperature(policy *p, float temperature);

/* Since creation: tokens generated, prompt tokens prefilled (a turn
 * prefills only what its episode's cached prefix lacks: model_kvset) and
 * wall time spent in generate. Safe to read from another thread. Any
 * pointer may be NULL. */
void model_policy_counters(const policy *p, long *tokens, long *prompt_tokens, double *seconds);

#endif
