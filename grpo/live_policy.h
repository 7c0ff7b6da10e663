/* live_policy.h - a policy over an in-memory model that the trainer
 * updates in place.
 *
 * The `model:CKPT` policy (policy/model_policy.c) loads its weights from a
 * file; the trainer instead samples from the very weights it is training:
 * every pol_generate call uses whatever m->params hold at that moment.
 * Requests of one call are sampled as one batch (model_sample, KV cache;
 * calls of more than RL_MODEL_SAMPLE_BATCH_MAX requests in several). The
 * caches are kept across calls (model_sample_cached): a turn prefills only
 * the tokens its episode's last turn did not see; a weight update empties
 * them.
 *
 * Prompts are req.context_ids when given, else the context text encoded
 * with special tokens allowed (the rendered template). Generation stops
 * after <|im_end|>; the response's ids include that stop token, its text is
 * the decode of the ids without it, and logprobs are of the tempered
 * distribution (model.h), i.e. the behaviour logprobs GRPO needs.
 *
 * A prompt that leaves no room for a reply (context >= max_seq - 1) gets
 * an empty, truncated reply: the episode ends with max_context instead of
 * failing the whole batch.
 *
 * Determinism: each request draws from its own stream of its seed
 * (model_sample_opts.seeds), so its reply depends on its prompt, its seed
 * and the weights, not on which other requests share the call (up to
 * the rounding of batched matrix products): an evaluation gives the same
 * episodes however the rollout workers happen to interleave, and a
 * resumed run the same replies. The model:CKPT policy draws the same way,
 * so both policies sample alike from the same weights.
 */
#ifndef RL_GRPO_LIVE_POLICY_H
#define RL_GRPO_LIVE_POLICY_H

#include "model/model.h"
#include "policy/policy.h"
#include "protocol/tokenizer.h"

typedef struct live_policy_opts {
    float temperature;  /* 0.7 */
    float top_p;        /* 1.0 */
    int max_tokens;     /* cap on a reply when the request gives none (RL_EP_REPLY_TOKENS) */
    const char *name;   /* policy name, "live" */
} live_policy_opts;

void live_policy_opts_default(live_policy_opts *o);

/* The policy borrows m and tok: both must outlive it. Fails if tok has no
 * <|im_end|> or its vocabulary does not fit the model's. */
int live_policy_new(policy **out, model *m, const tok_t *tok, const live_policy_opts *o, char *err);

/* Changes the sampling temperature (evaluation may sample differently). */
void live_policy_set_temperature(policy *p, float temperature);

/* Since creation: tokens generated, prompt tokens prefilled (a turn
 * prefills only what its episode's cached prefix lacks: model_kvset) and
 * wall time spent in generate. Any pointer may be NULL. */
void live_policy_counters(const policy *p, long *tokens, long *prompt_tokens, double *seconds);

#endif
