/* sample.h - a model-policy trajectory record turned into GRPO training
 * sequences: tokens, which targets the policy wrote (the loss mask), the
 * behaviour logprob of each and the policy version that sampled it.
 *
 * Records of a model policy carry exact ids (docs/trajectory-schema.md):
 * per turn the context ids (in full, or {prefix_turn, append_ids}: the
 * referenced turn's context + its sampled ids + append_ids) and the
 * sampled ids with their logprobs and the turn's policy_version. They are
 * used as recorded, never re-tokenized.
 *
 * Sequences: turn k's sequence is its context followed by its sampled ids.
 * When that context starts with the whole sequence built so far (history
 * `keep`: it always does), turn k extends it; otherwise (history `drop`)
 * a new sequence starts. So `keep` gives one sequence per trajectory and
 * `drop` one per turn, each with its own recorded context. Extending is
 * exact either way: a token's logprob depends only on the tokens before it.
 *
 * Position t of a sequence predicts token t+1: targets[t] = tokens[t+1]
 * where the policy wrote that token, else -1 (model_forward then skips
 * the output head there and its coefficient is 0). Sequences longer than
 * max_len, or without a policy token, are skipped and counted.
 */
#ifndef RL_GRPO_SAMPLE_H
#define RL_GRPO_SAMPLE_H

#include <cJSON.h>
#include <stddef.h>

typedef struct grpo_seq {
    int *tokens;     /* n */
    int *targets;    /* n: next token where policy-written, else -1 */
    float *behav;    /* n: behaviour logprob of targets[t] (0 elsewhere) */
    long *version;   /* n: policy version that sampled targets[t] (0: unknown) */
    int n;
    int n_policy;    /* targets >= 0 */
    int traj;        /* the caller's trajectory index */
    int turn;        /* first turn the sequence covers */
} grpo_seq;

typedef struct grpo_seqs {
    grpo_seq *v;
    size_t n, cap;
    size_t skipped_long;   /* sequences over max_len */
    size_t skipped_empty;  /* sequences without a policy token */
    size_t tokens;         /* tokens of the kept sequences */
    size_t policy_tokens;  /* of which targets */
} grpo_seqs;

void grpo_seqs_init(grpo_seqs *s);
void grpo_seqs_dispose(grpo_seqs *s);

/* Appends the sequences of one record. vocab bounds every id (ids outside
 * 0..vocab-1 are an error: the record is not of this model). A record
 * whose turns contradict themselves (bad prefix reference, ids and
 * logprobs of different lengths) is RL_EPARSE; a record without any
 * sampled ids is RL_EINVAL (not a model-policy record). */
int grpo_seqs_add_record(grpo_seqs *s, const cJSON *rec, int traj, int vocab, int max_len, char *err);

/* The same from a record's JSON text. */
int grpo_seqs_add_json(grpo_seqs *s, const char *json, int traj, int vocab, int max_len, char *err);

#endif
