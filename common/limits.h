/* limits.h - every limit in the project, in one place, with its reason.
 *
 * Untrusted input is everywhere (agent-written code, agent-written tool
 * calls, test output): every buffer that grows from it is capped by a
 * constant from this file. Each module owns one section; keep the reason
 * next to the value. Runtime options may lower these defaults, never
 * raise a hard cap (the HARD ones).
 */
#ifndef RL_LIMITS_H
#define RL_LIMITS_H

/* ---- common ---------------------------------------------------------- */

/* Default cap of a buf_t when the caller gives none: far above any honest
 * tool observation or test log, small enough that a runaway loop fails
 * fast instead of swapping. */
#define RL_BUF_DEFAULT_MAX (64u << 20)

/* Largest file fs_read_file will read: task files, trajectories lines and
 * source files are far smaller; checkpoints use their own reader. */
#define RL_FILE_MAX (256u << 20)

/* ---- sandbox --------------------------------------------------------- */

/* ---- workspace (harness/workspace) ----------------------------------- */

/* ---- tasks ----------------------------------------------------------- */

/* ---- harness: tools, template, episode ------------------------------- */

/* ---- policy / model --------------------------------------------------- */

/* Largest model dimensions a checkpoint or config may ask for. They bound
 * the allocations a (possibly corrupt) checkpoint header can trigger: the
 * built-in policy is a few million parameters; 64 M leaves room for larger
 * experiments while keeping the parameter, gradient and Adam buffers
 * (4 copies) under 1 GiB. */
#define RL_MODEL_PARAMS_MAX (64u << 20)
#define RL_MODEL_VOCAB_MAX (1 << 18)   /* BPE vocabularies here are 4-32 k */
#define RL_MODEL_DIM_MAX 8192          /* d_model and d_ff */
#define RL_MODEL_LAYERS_MAX 256
#define RL_MODEL_HEADS_MAX 256
/* Longest context: episodes are capped far below this; attention memory
 * grows linearly (scores are recomputed, never stored as T x T). */
#define RL_MODEL_SEQ_MAX 65536
/* Tokens in one training forward (B*T): the default model keeps about
 * 130 KB of activations per token (6 layers of ~19 KB, plus the logits
 * row), so 65536 tokens is ~8.5 GB -- a third of the machine. Training
 * uses B*T = 4096 (~0.6 GB); T 4096 x B 4 is ~2.2 GB. */
#define RL_MODEL_BATCH_TOKENS_MAX (1 << 16)
/* Sequences decoded together by model_sample: each holds a KV cache. */
#define RL_MODEL_SAMPLE_BATCH_MAX 256
/* Stop token ids per sampling call. */
#define RL_MODEL_STOP_IDS_MAX 64
/* Worker threads of the model's pool (the machines have 2 cores). */
#define RL_MODEL_THREADS_MAX 64
/* safetensors header JSON: the default model's header is ~10 KB; a
 * corrupt length field must not make the loader allocate gigabytes. */
#define RL_MODEL_CKPT_HEADER_MAX (16u << 20)
/* Tensors listed in one checkpoint header (11 per layer + 2). */
#define RL_MODEL_CKPT_TENSORS_MAX 4096
/* Metadata strings (paths, hashes, config values) in a checkpoint. */
#define RL_MODEL_CKPT_META_STR_MAX 1024

/* ---- grpo ------------------------------------------------------------ */

/* Parameters the optimizer will hold state for (m and v, fp32 each):
 * the model's own cap. */
#define RL_OPT_PARAMS_MAX RL_MODEL_PARAMS_MAX
/* Parameter spans (tensors) given to the optimizer. */
#define RL_OPT_SPANS_MAX 4096

#endif
