/* traj.h - trajectory records (JSONL, docs/trajectory-schema.md) turned
 * into training samples for SFT and GRPO.
 *
 * A sample is one token sequence with, per token, whether the policy wrote
 * it (the loss mask) and the behaviour logprob it was sampled with. Token
 * t is predicted at position t-1, so a trainer sets targets[t-1] =
 * tokens[t] where mask[t] is 1 (traj_sample_targets).
 *
 * Where the tokens come from:
 * - Records of a model policy carry the exact ids: per turn the context ids
 *   (in full, or as the previous turn's context ids + its sampled ids +
 *   appended ids) and the sampled ids incl. the stop token. They are used
 *   as recorded: the sequence the policy saw is never re-tokenized, and the
 *   mask is 1 exactly on the sampled ids.
 * - Records without ids (scripted policies) are tokenized here with the
 *   harness's rule (harness/episode.c): each context segment on its own;
 *   template and assistant segments may hold special tokens, everything
 *   else (system prompt, tools, problem, tool output) is plain bytes. The
 *   mask is 1 on assistant segments and on the generated text + <|im_end|>
 *   (unless the turn was truncated: then the policy wrote no stop token).
 *   When the record also has the context ids, they must equal this
 *   encoding (else the tokenizer is not the one the record was made with).
 *
 * History: with "keep" a trajectory is one sequence (the last context + the
 * last generated text) that carries every turn, turn = -1. With "drop"
 * each turn is its own sample (its recorded context + its generated text);
 * earlier turns inside that context are history, mask 0.
 *
 * Sequences longer than max_len are cut from the left when that loses no
 * policy token (nor the token before the first one, which predicts it),
 * else skipped and counted. Samples without any policy token are skipped.
 */
#ifndef RL_TRAJ_H
#define RL_TRAJ_H

#include "protocol/tokenizer.h"

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

typedef struct traj_sample {
    int32_t *tokens;
    unsigned char *mask;   /* 1: written by the policy (trained on) */
    float *behav_logp;     /* logprob the token was sampled with; NaN when
                              unknown (scripted policies) and where mask is 0 */
    size_t n;
    size_t n_policy;       /* tokens with mask 1 */
    size_t cut;            /* tokens cut from the left to fit max_len */
    double reward;
    char *task;            /* instance id */
    char *group;           /* record key without its seed: task + config */
    char *policy;          /* config.policy of the record */
    double temperature;    /* config.temperature of the record */
    uint64_t seed;
    int turn;              /* drop: turn index; keep: -1 (whole trajectory) */
    int n_turns;           /* turns of the record */
    size_t record;         /* index of the record in its file(s) */
} traj_sample;

typedef struct traj_opts {
    const tok_t *tok;      /* needed for records without ids */
    size_t max_len;        /* 0: no limit */
    double min_reward;     /* records with a lower reward are skipped */
    int use_ids;           /* 1 (default): use recorded ids when complete;
                              0: always re-tokenize the text (tests) */
    int mask_failed;       /* 1: a turn whose tool call failed is context, not
                              trained on (SFT on demonstrations of recovery:
                              the mistake is shown, the repair is learned);
                              0 (default): every policy turn is trained */
} traj_opts;

void traj_opts_default(traj_opts *o);

typedef struct traj_stats {
    size_t records;        /* records read */
    size_t samples;        /* samples built */
    size_t from_ids;       /* samples built from recorded ids */
    size_t skipped_reward; /* records under min_reward */
    size_t skipped_empty;  /* records or samples without a policy token */
    size_t skipped_long;   /* samples over max_len that could not be cut */
    size_t cut;            /* samples cut from the left */
    size_t tokens;         /* tokens in built samples */
    size_t policy_tokens;  /* of which policy-written */
    size_t masked_turns;   /* turns left untrained by mask_failed */
} traj_stats;

typedef struct traj_set {
    traj_sample *v;
    size_t n, cap;
    traj_stats st;
} traj_set;

void traj_set_init(traj_set *s);
void traj_set_dispose(traj_set *s);
void traj_sample_dispose(traj_sample *x);

/* Appends the samples of one parsed record. `where` names it in errors
 * ("file.jsonl:12"). A record that contradicts itself (ids out of range,
 * bad prefix references, segments that do not cover the context) is an
 * RL_EPARSE error. */
int traj_add_record(traj_set *s, const cJSON *rec, size_t index, const traj_opts *o,
                    const char *where, char *err);

/* Reads a JSONL file of records (one per line, blank lines allowed) and
 * appends their samples. Record indexes continue from s->st.records. */
int traj_load_file(traj_set *s, const char *path, const traj_opts *o, char *err);

/* Training arrays of one sample for a row of length T >= s->n:
 * tokens[0..T) (padded with 0), targets[t] = tokens[t+1] where mask[t+1]
 * is 1, else -1 (so only policy tokens are predicted). Returns the number
 * of targets set. */
size_t traj_sample_targets(const traj_sample *s, int *tokens, int *targets, size_t T);

#endif
