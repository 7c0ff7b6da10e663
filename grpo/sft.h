/* sft.h - supervised fine-tuning of the built-in model on trajectories.
 *
 * Cross-entropy on policy-written tokens only (the loss mask of grpo/traj),
 * averaged over the tokens of a step (token mean); AdamW with warmup +
 * cosine and global-norm clipping (model/optim). A step takes `batch`
 * samples from a seeded shuffle of the data (reshuffled each epoch), sorts
 * them by length and runs them as micro-batches of at most `micro_tokens`
 * padded tokens, accumulating gradients. Everything is deterministic given
 * the seed (and the thread count).
 *
 * Config file (JSON; unknown fields are errors):
 *   {"model": {"d_model": 256, "n_layer": 6, ...} | "init": "CKPT",
 *    "tokenizer": "models/tokenizer.json",
 *    "lr": 1e-3, "min_lr_ratio": 0.1, "warmup": 50, "weight_decay": 0.1,
 *    "beta1": 0.9, "beta2": 0.95, "grad_clip": 1.0,
 *    "steps": 1000 | "epochs": 10, "stop_after": 0, "batch": 8, "seq_len": 4096,
 *    "micro_tokens": 8192, "seed": 1, "min_reward": 1, "threads": 0,
 *    "eval_data": ["FILE.jsonl"], "eval_every": 100, "eval_max": 64,
 *    "save_every": 200, "log_every": 1, "loss_on": "policy",
 *    "mask_failed_calls": false}
 * "model" fields are those of model_config (missing ones take the defaults;
 * vocab defaults to the tokenizer's). With "init" the run continues from a
 * checkpoint or a Hugging Face directory (its config; its tokenizer unless
 * "tokenizer" is given).
 *
 * "loss_on": "policy" (the default) is SFT: only tokens the policy wrote
 * are trained. "all" is language-model pretraining on the same text: every
 * token after the first is a target, tool output and prompts included. It
 * is a stage before SFT, never a replacement: a model trained from scratch
 * on the masked loss alone sees too few targets to learn to copy from its
 * context (a path from a listing, old_string into new_string), and the
 * environment's text is full of such repeats. Its checkpoint predicts tool
 * output too; the SFT stage after it restores the policy's objective.
 */
#ifndef RL_SFT_H
#define RL_SFT_H

#include "model/optim.h"
#include "model/model.h"

#include <stdint.h>
#include <stdio.h>

typedef struct sft_config {
    model_config model;
    int have_model;            /* "model" given */
    char init[1024];           /* "" : random init from the seed */
    char tokenizer[1024];      /* "" : the init checkpoint's */
    opt_config opt;            /* total_steps is set by the run */
    long steps;                /* 0: from epochs */
    long stop_after;           /* 0: all; else stop after this many steps
                                  (the schedule still spans all of them) */
    double epochs;
    int batch;                 /* samples per optimizer step */
    int seq_len;               /* longest sample; 0: the model's max_seq */
    int micro_tokens;          /* padded tokens per forward */
    uint64_t seed;
    double min_reward;         /* skip records below (-inf: keep all) */
    int mask_failed;           /* "mask_failed_calls": a turn whose tool call
                                  failed is context, not a target (demonstrations
                                  of recovery teach the repair, not the mistake) */
    int threads;               /* 0: the model's default */
    char **eval_data;          /* files of the evaluation set */
    int n_eval_data;
    long eval_every;           /* steps; 0: only at the end */
    int eval_max;              /* samples evaluated at most */
    long save_every;           /* steps; 0: only at the end */
    long log_every;            /* steps between progress lines */
    int loss_all;              /* "loss_on": "all": every token is a target */
} sft_config;

void sft_config_default(sft_config *c);
void sft_config_dispose(sft_config *c);
/* Parses a config JSON text (name: for messages); unknown fields, wrong
 * types and out-of-range values are one-line errors. */
int sft_config_parse(sft_config *c, const char *json, size_t len, const char *name, char *err);
int sft_config_load(sft_config *c, const char *path, char *err);

typedef struct sft_result {
    long steps;
    double first_loss, last_loss;  /* mean train loss of the first / last step */
    double eval_loss;              /* last evaluation (NAN if none) */
    double tokens_per_s;           /* real (unpadded) tokens through forward+backward */
    size_t train_samples, eval_samples;
    size_t skipped_steps;          /* non-finite gradient: no update */
} sft_result;

typedef struct sft_io {
    /* progress lines, one per call, no newline (NULL: none); level 0
     * information, 1 a warning */
    void (*log)(void *ctx, int level, const char *msg);
    void *log_ctx;
    const char *metrics;     /* JSONL of per-step metrics, or NULL */
} sft_io;

/* Trains on the records of data[0..n_data) and writes the checkpoint to
 * out (atomically, also every save_every steps). */
int sft_run(sft_result *res, const sft_config *c, const char *const *data, int n_data, const char *out,
            const sft_io *io, char *err);

#endif
