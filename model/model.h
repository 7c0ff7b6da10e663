/* model.h - the built-in policy: a small Qwen3-style decoder in fp32 C.
 *
 * Architecture (one block, repeated n_layer times):
 *   x -> RMSNorm -> q,k,v projections -> per-head RMSNorm of q and k
 *     -> rotary embeddings -> causal grouped-query attention -> o projection
 *     -> + x
 *   x -> RMSNorm -> SwiGLU MLP (down(silu(gate(x)) * up(x))) -> + x
 * then a final RMSNorm and logits = h @ wte^T (embedding tied with the head)
 * or h @ lm_head^T (untied). The config also covers the Qwen2 and Llama
 * variants of the block: q/k/v biases, no q/k norm, a head_dim other than
 * d_model / n_head (model_hf.c reads and writes their Hugging Face form).
 *
 * Parameters, gradients and activations live in flat float buffers (llm.c
 * style); each tensor is a view into them (see model_tensor). A model made
 * for inference only may keep its weight matrices in bf16 instead
 * (model_opts.dtype; they then live in wbf, viewed by layer16). Weights use
 * PyTorch's nn.Linear layout (out_features x in_features) and Hugging Face
 * Qwen3 names, so a checkpoint reads the same in Python.
 *
 * The training interface is per-token log-probabilities: model_forward
 * computes logp_t = log softmax(logits_t / temperature)[target_t] for every
 * position of a B x T batch, model_backward takes dLoss/dlogp_t for every
 * position and accumulates parameter gradients. Cross-entropy (SFT), the
 * PPO/GRPO clipped objective and a KL penalty are all just different
 * per-token coefficients. A position whose coefficient is 0 (or whose target
 * is < 0) contributes exactly zero gradient.
 *
 * Log-probabilities everywhere (sampling, scoring, training) are of the
 * tempered distribution softmax(logits / temperature) -- the distribution a
 * token is actually drawn from, before top-p truncation (top-p only removes
 * the tail; the logprob of a kept token is not renormalized, as in common RL
 * frameworks). Temperature <= 0 means greedy sampling and logprobs at
 * temperature 1. Score and train at the temperature you sampled at, and the
 * on-policy importance ratio is 1 (tested to 1e-4).
 *
 * Threads: each model runs its matrix products and attention on its own
 * pool (model_opts.n_threads, default: the online CPUs) and sets OpenBLAS
 * to one thread per call (a process-wide setting). Checkpoints are
 * safetensors files (model_io.c); bench/st_read.py reads them with
 * Python's standard library, since Debian 12 packages no safetensors.
 */
#ifndef RL_MODEL_H
#define RL_MODEL_H

#include <stddef.h>
#include <stdint.h>

typedef struct model_config {
    int vocab;       /* token ids are 0 .. vocab-1 */
    int d_model;     /* residual width */
    int n_layer;
    int n_head;      /* query heads */
    int n_kv_head;   /* key/value heads (grouped-query attention) */
    int d_ff;        /* SwiGLU hidden width */
    int max_seq;     /* longest sequence (positions 0 .. max_seq-1) */
    int qk_norm;     /* 1: Qwen3 per-head RMSNorm of q and k */
    int head_dim;    /* width of one head (even); 0: d_model / n_head */
    int untied;      /* 1: a separate lm_head.weight, 0: logits use the embedding */
    int qkv_bias;    /* 1: q, k and v projections have biases (Qwen2) */
    float rope_theta;
    float norm_eps;
} model_config;

/* d 256, 6 layers, 8 query / 4 kv heads, SwiGLU 768, vocab 4096, context
 * 4096, theta 1e6, tied head, q/k norm, no biases: 5.8 M parameters. */
void model_config_default(model_config *c);
/* 0 if every field is in range and consistent, else RL_EINVAL + message. */
int model_config_check(const model_config *c, char *err);
/* Number of parameters of a (checked) config. */
size_t model_config_params(const model_config *c);

/* One named tensor: a view into the flat parameter (and gradient) buffer. */
typedef struct model_tensor {
    char name[64];   /* Hugging Face Qwen3 name, e.g. model.layers.0.mlp.up_proj.weight */
    int ndim;        /* 1 or 2 */
    int shape[2];
    size_t offset;   /* in floats, into params / grads */
    size_t numel;
    int is_norm;     /* RMSNorm gain or bias (no weight decay) */
    int is_embed;    /* the embedding or the output head */
    int is_bias;     /* a projection bias (initialized to 0) */
    int bf16;        /* 1: held in bf16, offset is into model.wbf instead */
} model_tensor;

typedef struct model_layer {
    float *attn_norm, *wq, *wk, *wv, *bq, *bk, *bv, *wo, *q_norm, *k_norm;
    float *mlp_norm, *w_gate, *w_up, *w_down;
} model_layer;

/* The bf16 views of the weight matrices (a model whose opts.dtype is
 * MODEL_DTYPE_BF16; all NULL in an fp32 model, whose matrices are the float
 * views of model_layer). */
typedef struct model_layer16 {
    uint16_t *wq, *wk, *wv, *wo, *w_gate, *w_up, *w_down;
} model_layer16;

typedef struct model_acts model_acts; /* training activations (model.c) */
typedef struct mpool mpool;           /* thread pool (model_pool.c) */

typedef struct model {
    model_config cfg;
    int head_dim;        /* cfg.head_dim, resolved (never 0) */
    int dtype;           /* MODEL_DTYPE_*: how the weight matrices are held */
    size_t n_params;     /* parameters of the config */
    size_t n_f32;        /* floats in params: n_params, or the 1-D tensors' in bf16 */
    size_t n_bf16;       /* values in wbf: 0, or the matrices' in bf16 */
    float *params;
    uint16_t *wbf;       /* bf16 matrices (NULL in an fp32 model) */
    model_layer16 *layer16; /* views into wbf, one per layer */
    uint16_t *wte16, *lm_head16; /* the embedding and head in wbf (lm_head16 = wte16 when tied) */
    float *grads;        /* NULL until model_zero_grad or model_backward */
    model_layer *layer;  /* views into params, one per layer */
    model_layer *glayer; /* the same views into grads (when allocated) */
    float *wte, *final_norm;
    float *lm_head;      /* the output head: wte when tied */
    float *gwte, *gfinal_norm, *glm_head;
    int n_tensors;
    model_tensor *tensors;
    float *rope_cos, *rope_sin; /* max_seq x head_dim/2 */
    model_acts *acts;
    mpool *pool;
    int n_active; /* ids 0..n_active-1 can be drawn and scored (0: all of vocab); see
                     model_set_active_vocab */
} model;

/* A model is not thread-safe: one caller at a time (it owns a thread pool
 * and the activation buffers). model_score reuses the training buffers, so
 * call it before model_forward or after model_backward, not in between. */
/* Weights kept in bf16 (MODEL_DTYPE_BF16): the 2-D matrices (projections,
 * embedding, head) are held as bfloat16, half the memory of fp32; norm gains
 * and biases stay fp32, and every product is computed in fp32 (blocks of a
 * weight matrix widened into a scratch, then sgemm). The logits equal those
 * of an fp32 model whose matrices were rounded to bf16, to the rounding of
 * the products. Such a model only runs inference: forward, scoring and
 * sampling; model_zero_grad, model_backward and model_save refuse it (load
 * fp32 to train). Loading rounds fp32 tensors to nearest (ties to even) and
 * copies bf16 ones, tensor by tensor, never holding an fp32 copy. */
enum { MODEL_DTYPE_F32 = 0, MODEL_DTYPE_BF16 = 1 };

typedef struct model_opts {
    int n_threads; /* 0: the number of online CPUs (capped) */
    int dtype;     /* MODEL_DTYPE_F32 (default) or MODEL_DTYPE_BF16 */
} model_opts;

/* "f32" / "bf16" -> MODEL_DTYPE_*; RL_EINVAL + a message naming flag (the
 * option or setting it came from) otherwise. */
int model_dtype_parse(int *dtype, const char *flag, const char *s, char *err);

void model_opts_default(model_opts *o);

/* A model with zeroed parameters (use model_random_init or model_load). */
int model_new(model **out, const model_config *cfg, const model_opts *opts, char *err);
void model_free(model *m);

/* Normal(0, 0.02) for matrices, residual output projections (o, down)
 * scaled by 1/sqrt(2 n_layer), norm gains 1. Deterministic in seed. */
void model_random_init(model *m, uint64_t seed);

/* Restricts the output distribution to ids 0..n-1: a checkpoint whose
 * embedding has more rows than its tokenizer has ids (Hugging Face models pad
 * the vocabulary, e.g. Qwen3's 151,936 rows for 151,669 ids) must never draw
 * an id the tokenizer cannot decode. The logits of the other ids are set to
 * MODEL_LOGIT_MASKED before the softmax everywhere (training, scoring,
 * sampling), so they get probability 0 and no gradient, and sampled logprobs
 * equal trained ones. n <= 0 or n >= vocab: no restriction. */
#define MODEL_LOGIT_MASKED (-1e30f)
void model_set_active_vocab(model *m, int n);
/* Sets the logits of ids n_active..vocab-1 of n rows (n x vocab) to
 * MODEL_LOGIT_MASKED; nothing when every id is active. */
void model_mask_logits(const model *m, float *logits, int n);

/* Allocates (if needed) and zeroes the gradient buffer. */
int model_zero_grad(model *m, char *err);

/* Training forward over a B x T batch (row-major tokens[b*T + t]).
 * targets[b*T + t] is the token whose logprob is wanted at position t
 * (normally tokens[b*T + t + 1]); a negative target marks a position
 * that is ignored (padding, the last position): its logp and entropy are 0.
 * Sequences shorter than T are right-padded (causal attention keeps
 * padding from affecting earlier positions).
 * Writes logp[B*T]; entropy[B*T] if non-NULL (entropy of the tempered
 * distribution, no gradient). Keeps the activations for model_backward. */
int model_forward(model *m, const int *tokens, const int *targets, int B, int T,
                  float temperature, float *logp, float *entropy, char *err);

/* Accumulates into m->grads the gradient of sum_t dlogp[t] * logp_t for
 * the batch of the last model_forward. Allocates grads if needed (zeroed). */
int model_backward(model *m, const float *dlogp, char *err);

/* ---- sampling and scoring (model_sample.c) ---------------------------- */

typedef struct model_sample_opts {
    float temperature;   /* <= 0: greedy */
    float top_p;         /* 1: no truncation */
    uint64_t seed;       /* sequence i draws from its own stream of seed */
    const uint64_t *seeds; /* if set, sequence i draws from stream 0 of seeds[i]
                              instead: its draws do not depend on what it is
                              batched with (seed is then unused) */
    int max_new;         /* new tokens per sequence */
    const int *stop_ids; /* generation of a sequence ends after one of these */
    int n_stop;
} model_sample_opts;

void model_sample_opts_default(model_sample_opts *o);

enum { MODEL_STOP_LENGTH = 0, MODEL_STOP_TOKEN = 1, MODEL_STOP_CONTEXT = 2 };

typedef struct model_sample_out {
    int *tokens;     /* n new tokens (the stop token included) */
    float *logprobs; /* logprob of each, see the header comment */
    int n;
    int stop;        /* MODEL_STOP_* */
} model_sample_out;

/* Samples continuations of n_seq prompts (different lengths allowed) with
 * a KV cache, decoding all unfinished sequences together. out[i] is filled
 * (free with model_sample_out_dispose). Deterministic given the seed,
 * independent of thread count. */
int model_sample(model *m, model_sample_out *out, const int *const *prompts,
                 const int *prompt_lens, int n_seq, const model_sample_opts *o,
                 char *err);
void model_sample_out_dispose(model_sample_out *o);

/* Prefix caches kept across calls. An episode's next prompt is its last
 * prompt + the reply + the new tool response, so the keys and values of
 * everything but the new part are already known: model_sample_cached gives
 * each prompt the cache holding its longest prefix (else the least
 * recently used one) and prefills only the rest. Results equal
 * model_sample's to rounding. The set notes a fingerprint of the weights
 * it filled its caches with and empties itself when they change (the
 * trainer updates weights in place), so a stale cache is never read.
 * Not thread-safe: one caller at a time, like the model. */
typedef struct model_kvset model_kvset;

/* n caches of the model's full window each, allocated on first use
 * (n_layer * max_seq * kv dims * 8 bytes: ~17 MB for the default model). */
int model_kvset_new(model_kvset **out, const model *m, int n, char *err);
void model_kvset_free(model_kvset *s);
/* Prompt tokens whose prefill was skipped, since creation. */
long model_kvset_reused(const model_kvset *s);

/* model_sample through the caches of set (which must belong to m's shape). */
int model_sample_cached(model *m, model_kvset *set, model_sample_out *out, const int *const *prompts,
                        const int *prompt_lens, int n_seq, const model_sample_opts *o, char *err);

/* Step-wise decoding for a server (continuous batching): sequences join
 * (model_dec_add) and leave (model_dec_remove) between steps, and each
 * model_dec_step runs one batch of rows: one new token for every sequence
 * past its prompt, plus up to a chunk of prompt tokens of the sequences
 * that joined (oldest first; a sequence's first token is drawn when its
 * whole prompt is in). Each sequence has its own temperature, top_p, stop
 * ids and length allowance (a model_sample_opts; its seed is the
 * sequence's stream, as model_sample_opts.seeds[i] would be), so its
 * tokens and logprobs equal model_sample's for that prompt and seed, to
 * the rounding of batched matrix products, whatever it shares a step
 * with. A sequence's KV cache holds prompt + max_new positions (at most
 * the window) and is freed when it is removed. Not thread-safe: one
 * caller at a time, like the model. */
typedef struct model_dec model_dec;

/* Room for max_seqs (1..RL_MODEL_SAMPLE_BATCH_MAX) sequences at once. */
int model_dec_new(model_dec **out, model *m, int max_seqs, char *err);
void model_dec_free(model_dec *d);
/* Adds a sequence in a free slot (*slot); the prompt and the stop ids
 * are copied. top_k (0..RL_MODEL_TOP_LOGPROBS_MAX) most likely tokens are
 * kept for every drawn one. RL_ELIMIT when every slot is taken. */
int model_dec_add(model_dec *d, int *slot, const int *prompt, int len, const model_sample_opts *o,
                  int top_k, char *err);
/* One step; *n_rows gets the rows run (0: nothing to do). */
int model_dec_step(model_dec *d, int *n_rows, char *err);
/* The tokens of a slot so far; stop says why it ended once done. */
const model_sample_out *model_dec_out(const model_dec *d, int slot);
/* 1 once the slot's sequence stopped (stop token, max_new, window). */
int model_dec_done(const model_dec *d, int slot);
/* The top-k alternatives of the slot's token i, most likely first
 * (logprobs of the tempered distribution). Returns k (0 when none). */
int model_dec_top(const model_dec *d, int slot, int i, const int **ids, const float **lps);
/* Frees the slot (finished or not). */
void model_dec_remove(model_dec *d, int slot);
int model_dec_free_slots(const model_dec *d);

/* Prefix reuse (off until model_dec_prefix_cache gives it room). Before a
 * sequence prefills, it takes the keys and values of the longest prefix
 * of its prompt that is already computed, copied from a sequence in the
 * batch or from the pool of removed sequences' caches, and prefills only
 * the rest (at least its last prompt token, whose logits it draws from).
 * A sequence whose prefix an older one is still prefilling waits for it
 * instead of computing the same rows (n samples of one prompt prefill it
 * once). The pool keeps what model_dec_remove frees (prompt + tokens fed,
 * at least RL_MODEL_DEC_PREFIX_MIN of them), at most max_bytes of caches
 * and RL_MODEL_DEC_PREFIX_ENTRIES of them; a cache that extends a kept
 * one replaces it, else the least recently used go first. Tokens and
 * logprobs are those without reuse, to the rounding of batched products.
 * The pool holds keys of the weights it was filled with: a caller that
 * changes the weights calls model_dec_prefix_clear. */
void model_dec_prefix_cache(model_dec *d, size_t max_bytes);
void model_dec_prefix_clear(model_dec *d);
/* Prompt tokens whose prefill was skipped since creation; the pool's
 * caches and their bytes. Any pointer may be NULL. */
void model_dec_prefix_stats(const model_dec *d, long *reused, int *entries, size_t *bytes);

/* Teacher-forced scoring: for each sequence i of tokens seqs[i][0..lens[i]),
 * logp[i][t] = log p(seqs[i][t+1] | seqs[i][0..t]) at the temperature, for
 * t < lens[i]-1 (logp[i] has room for lens[i]-1 values). Batched. */
int model_score(model *m, float *const *logp, const int *const *seqs, const int *lens,
                int n_seq, float temperature, char *err);

/* ---- checkpoints (model_io.c) ------------------------------------------ */

typedef struct model_meta {
    char tokenizer[1024];      /* path of the tokenizer file ("" if none); when the
                                  metadata names none, the hf_tokenizer below (a Hugging
                                  Face directory: its tokenizer.json) */
    char tokenizer_hash[64];   /* fnv1a64 of its bytes, 16 hex digits */
    long step;                 /* optimizer step; -1 if unknown */
    char hf_tokenizer[1024];   /* a Hugging Face tokenizer.json beside it ("" if none) */
    char hf_tokenizer_config[1024]; /* its tokenizer_config.json ("" if none) */
    char chat_template[32];    /* the chat template its policy speaks (a name of
                                  protocol/template.h: "qwen3", ...); "" if not recorded */
} model_meta;

void model_meta_default(model_meta *meta);

/* Writes a safetensors file (temp file + rename) with every tensor in F32
 * and __metadata__ = the config, the tokenizer reference and the step. */
int model_save(const model *m, const char *path, const model_meta *meta, char *err);

/* Reads a checkpoint written by model_save (or anything of the same
 * layout); every defect is a one-line error, never a crash. meta may be
 * NULL. */
int model_load(model **out, model_meta *meta, const char *path, const model_opts *opts,
               char *err);

/* The metadata of a checkpoint (the header only; no tensor is read). For a
 * Hugging Face directory: its tokenizer files. */
int model_read_meta(model_meta *meta, const char *path, char *err);

/* Hugging Face checkpoint directories (model_hf.c): config.json of a
 * Qwen3ForCausalLM, Qwen2ForCausalLM or LlamaForCausalLM plus
 * model.safetensors or shards listed in model.safetensors.index.json;
 * BF16, F16 and F32 tensors become fp32, or with opts->dtype
 * MODEL_DTYPE_BF16 the matrices become bf16 (files memory-mapped). Settings
 * the model does not implement (rope_scaling, sliding window, o_proj or
 * MLP biases, ...) are refused in one line. max_seq is the config's
 * max_position_embeddings, at most RL_MODEL_SEQ_MAX. model_load also
 * takes such a directory. */
int model_load_hf(model **out, const char *dir, const model_opts *opts, char *err);
/* Writes dir/config.json (the architecture matching the config) and one
 * dir/model.safetensors, fp32 or (bf16 1) bfloat16 rounded to nearest. */
int model_save_hf(const model *m, const char *dir, int bf16, char *err);
/* The Hugging Face architecture name of a config ("Qwen3ForCausalLM",
 * ...), or RL_EINVAL when it has none (q/k norm with q/k/v biases). */
int model_hf_arch(const model_config *c, const char **name, char *err);

/* Sets meta->hf_tokenizer / hf_tokenizer_config to dir/tokenizer.json and
 * dir/tokenizer_config.json where those files exist. */
void model_hf_tokenizer_files(model_meta *meta, const char *dir);

/* fnv1a64 of a file's bytes as 16 hex digits (for model_meta). */
int model_file_hash(char out[17], const char *path, char *err);

#endif
