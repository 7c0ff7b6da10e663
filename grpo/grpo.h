/* grpo.h - the GRPO trainer: masked GRPO from the 0/1 test reward.
 *
 * One step: draw tasks from the train split, run G episodes of each
 * through harness/rollout with the model policy over the weights being
 * trained (policy/model_policy.h), score them (the tests decide), compute
 * group advantages (common/stats), turn the records into sequences
 * (grpo/sample), and take one AdamW step on the PPO-clip + KL objective
 * (grpo/loss) over the policy-written tokens only.
 *
 * A run lives in a directory:
 *   config.json          the config it was started with
 *   reference.safetensors the frozen reference model (when kl_coef > 0)
 *   metrics.jsonl        one line per step (and "eval" / "event" lines)
 *   records.jsonl        every training episode's record (train.records)
 *   ckpt/step-NNNNNNNN/  model.safetensors, optim.safetensors, state.json,
 *                        profile.json (behaviour profile), eval.jsonl
 *   ckpt/latest          name of the newest complete checkpoint
 *   ckpt/best            name of the checkpoint with the best evaluation
 * A checkpoint directory is written under a temporary name and renamed,
 * so a killed run always resumes from a complete one; resuming restores
 * weights, optimizer moments, step, data position and RNG, and (in the
 * synchronous mode) continues exactly as if it had not stopped.
 *
 * Rollout modes: "sync" (the learner waits for every episode of the step),
 * "async" (a rollout thread keeps sampling with a copy of the weights; the
 * learner trains once a fraction lambda of the step's episodes are done,
 * on the groups complete by then; the rest continue and their tokens carry
 * the version that sampled them) and "compare" (sync for the first half of
 * the steps, async after, both measured in the same run).
 */
#ifndef RL_GRPO_H
#define RL_GRPO_H

#include "grpo/loss.h"
#include "model/optim.h"
#include "harness/episode.h"
#include "common/stats.h"
#include "model/model.h"

#include "common/limits.h"
#include "common/log.h"

#include <cJSON.h>
#include <stddef.h>
#include <stdint.h>

typedef enum grpo_mode { GRPO_SYNC = 0, GRPO_ASYNC, GRPO_COMPARE } grpo_mode;
/* How train tasks are drawn: "none" walks them all in shuffled epochs;
 * "mutation" and "repo" give each generated bug kind (generator.mutation)
 * or repository the same share of groups, so a dominant kind does not set
 * the curriculum. */
typedef enum grpo_balance { GRPO_BALANCE_NONE = 0, GRPO_BALANCE_MUTATION, GRPO_BALANCE_REPO } grpo_balance;

/* Which policy runs the episodes outside training (eval.policy,
 * flywheel.policy): the built-in model being trained, or the openai
 * client of the config's "openai" section (a model behind an
 * OpenAI-compatible server, policy/openai.h). Training itself always
 * samples and updates the built-in model. */
typedef enum grpo_policy_kind { GRPO_POLICY_MODEL = 0, GRPO_POLICY_OPENAI } grpo_policy_kind;

typedef struct grpo_final_set {
    char name[64];
    char tasks[GRPO_SEL_MAX];   /* task selector */
    char split[16];             /* "" or "train" / "heldout": keeps only that split */
    int episodes;               /* at least this many (tasks x seeds) */
} grpo_final_set;

typedef struct grpo_config {
    /* where things are */
    char init[GRPO_PATH_MAX];        /* starting checkpoint or Hugging Face directory; "" = random init from `model` */
    char tokenizer[GRPO_PATH_MAX];   /* "" = the one the checkpoint names */
    char out[GRPO_PATH_MAX];         /* run directory */
    char tasks_dir[GRPO_PATH_MAX], repos_dir[GRPO_PATH_MAX], prompts_dir[GRPO_PATH_MAX];
    char ws_root[GRPO_PATH_MAX];     /* "" = the workspace default */
    char train_tasks[GRPO_SEL_MAX];  /* "split:train" */
    int balance;                     /* GRPO_BALANCE_*: equal shares of groups per stratum */
    model_config model;              /* random init only */
    long init_seed;
    /* steps and groups */
    long seed;
    long steps;
    int group_size;                  /* G: 8 */
    int tasks_per_step;              /* 8 */
    /* episodes */
    char prompt[256];
    int think, history_keep, max_turns, max_context_tokens, max_reply_tokens, max_wall_s;
    double tail_share;               /* episode.tail_share: this share of episodes gets a
                                        turn cap from [tail_min_turns, tail_max_turns]
                                        (ep_config_turn_cap); 0 (default): none */
    int tail_min_turns, tail_max_turns;
    char chat_template[16];          /* episode.template: "qwen3-xml" or "qwen3"; "": the
                                        one the init checkpoint records, else qwen3-xml */
    int edit_hints;                  /* episode.edit_hints (default true) */
    int integrity_flag_only;         /* episode.integrity: "enforce" (0, default)
                                        or "flag" (1) */
    long test_mem_mb, test_disk_mb;  /* episode.test_mem_mb, test_disk_mb (0: default) */
    int test_procs;                  /* episode.test_procs (0: default) */
    long obs_budget;
    double temperature, top_p;
    ep_shaping shaping;              /* reward.shaped: off = 0/1 tests */
    /* advantages */
    stats_std std_mode;
    double adv_eps, adv_clip;        /* 1e-6, 2.0 */
    int dynamic_sampling;            /* DAPO: replace zero-variance groups,
                                        and leave those left out of the batch */
    int max_extra_groups;            /* per step */
    /* loss and optimizer */
    grpo_loss_opts loss;
    int updates_per_step;            /* PPO epochs over one batch: 1 */
    opt_config optim;
    int decay_embed;                 /* weight decay on the tied embedding */
    int micro_batch_tokens;          /* B*T of one forward: 4096 */
    int records;                     /* train.records: every training episode's
                                        record to records.jsonl (default true) */
    int threads;                     /* model threads, 0 = online CPUs */
    /* rollout */
    grpo_mode mode;
    double lambda;                   /* async: train once this share is done */
    int max_active;                  /* 0: tasks_per_step * G */
    int tool_threads;                /* 0: online CPUs */
    long compare_sync_steps;         /* compare: sync steps first (0: steps / 2) */
    /* evaluation, checkpoints, rollback */
    long eval_every;                 /* 0: never */
    char eval_tasks[GRPO_SEL_MAX];   /* "split:heldout" */
    int eval_seeds;
    double eval_temperature;
    double rollback_drop;            /* roll back when eval pass rate < best - this */
    int eval_policy;                 /* grpo_policy_kind; openai: no rollback, no best */
    long ckpt_every;
    int ckpt_keep;
    /* warnings */
    int warn_window;
    double warn_kl_jump;             /* KL above this factor of its recent mean */
    double warn_len_collapse;        /* policy tokens below this share of the recent max */
    double warn_format_rise;         /* format-error share up by more than this, window on window */
    double warn_integrity;           /* warnings.integrity_warn: a step's share of episodes
                                        flagged by the integrity check above this (0.05) */
    /* flywheel */
    int fw_probe_seeds, fw_worst_tasks, fw_samples, fw_sft_epochs, fw_rounds;
    long fw_rl_steps;
    double fw_temperature, fw_sft_lr;
    int fw_policy;                   /* grpo_policy_kind of the samples (the probe is the model's) */
    /* the openai policy: its server (policy/openai.h; "" / 0: its defaults) */
    char oai_base_url[GRPO_PATH_MAX];
    char oai_model[256];
    int oai_api;                     /* oai_api: chat (0) or completions */
    char oai_api_key_env[128];
    char oai_tokenizer[GRPO_PATH_MAX];
    int oai_max_inflight;
    long oai_timeout_ms;
    int oai_retries;                 /* attempts per request */
    /* rollouts on a fleet (docs/grpo.md): generation on `grpo serve`
     * instances, episodes on `harness serve` instances; URLs comma-joined */
    char fleet_generate[GRPO_FLEET_URLS_CHARS]; /* API roots ending in /v1 */
    char fleet_env[GRPO_FLEET_URLS_CHARS];      /* server roots */
    char fleet_model[256];           /* the served model's name */
    char fleet_token_env[128];       /* the variable holding both kinds' bearer token */
    char fleet_weights[GRPO_PATH_MAX]; /* checkpoint path every server reads; "": OUT/fleet/weights.safetensors */
    int fleet_max_inflight;          /* generation requests open at once; 0: the episodes stepped */
    long fleet_timeout_ms;           /* per request attempt; 0: the http client's default */
    /* final evaluation (the experiment report) */
    grpo_final_set final_sets[GRPO_FINAL_SETS_MAX];
    int n_final;
    char results[GRPO_PATH_MAX];     /* where the report goes ("runs") */
    char results_name[128];          /* "grpo-experiment" */
    int final_seed;                  /* first episode seed of every final set (1): another
                                        value evaluates the same checkpoints on fresh seeds */
    int quiet;                       /* no terminal line (tests) */
} grpo_config;

void grpo_config_default(grpo_config *c);

/* Strict: unknown fields, wrong types and out-of-range values are errors
 * naming the field ("config.json: loss.eps_low: expected a number in
 * [0, 1]"). Fields not given keep their defaults. */
int grpo_config_parse(grpo_config *c, const char *json, const char *name, char *err);
int grpo_config_load(grpo_config *c, const char *path, char *err);
/* Copies the fields a resumed run may change (out, quiet, train.records, warnings,
 * flywheel, final report) from src into dst, before comparing configs. */
void grpo_config_carry_free(grpo_config *dst, const grpo_config *src);
/* The config as JSON (every field); caller frees. */
char *grpo_config_to_json(const grpo_config *c);

/* ---- the trainer ------------------------------------------------------------ */

typedef struct grpo_trainer grpo_trainer;

/* What the trainer is given besides its config. */
typedef struct grpo_opts {
    /* Replaces a finished episode's reward (record parsed); NULL: none. */
    double (*reward)(void *user, const cJSON *record, double reward);
    void *user;
    /* Step lines, evaluations, rollbacks, the final report's figures;
     * NULL: silent. Not called when the config says quiet. The log
     * callback of common/log.h: one line per call, no newline; levels
     * RL_LOG_INFO and RL_LOG_WARN. */
    rl_log_fn log;
    void *log_ctx;
} grpo_opts;

void grpo_opts_default(grpo_opts *o);

/* Starts a run in cfg->out (which must not hold a run yet), or resumes the
 * run of resume_dir (a run directory or one of its checkpoint
 * directories) when it is non-NULL; cfg must then equal the run's config.
 * opts may be NULL (defaults). */
int grpo_open(grpo_trainer **out, const grpo_config *cfg, const char *resume_dir, const grpo_opts *opts,
              char *err);
void grpo_close(grpo_trainer *t);

/* Trains until `until` optimizer steps are done (cfg.steps when <= 0).
 * Checkpoints at every ckpt_every and at the end. */
int grpo_train(grpo_trainer *t, long until, char *err);

/* Steps done so far, and the trainer's model (for tests and tools). */
long grpo_step_count(const grpo_trainer *t);
model *grpo_model(grpo_trainer *t);
const char *grpo_run_dir(const grpo_trainer *t);

/* Writes a checkpoint now (no-op if the latest is this step). */
int grpo_checkpoint(grpo_trainer *t, char *err);

/* ---- evaluation and episodes -------------------------------------------------- */

typedef struct grpo_eval_result {
    size_t episodes, passed;
    double pass_rate, tool_success, mean_turns, mean_policy_tokens;
    /* code edits (edit_file, write_file): calls, those that applied, the
     * episodes with at least one applied, and how many of those passed. A
     * pass with no applied edit means the tests pass without a fix. */
    size_t edits, edits_ok, edited, edited_passed;
    /* edits that failed because old_string was not in the file, was there
     * more than once, or equalled new_string (the record's error_kind) */
    size_t edit_no_match, edit_not_unique, edit_no_change;
    /* failed edits that a later applied edit of the same episode followed:
     * a policy that reads edit_file's answer and tries again */
    size_t edit_repaired;
    /* fixes (an episode's last applied edit_file, old -> new): how many
     * episodes had one, how many distinct, and the most frequent one with
     * its episodes and passes. A policy that applies one string edit to
     * every bug shows here. */
    size_t fix_episodes, fixes_distinct, top_fix_episodes, top_fix_passed;
    char top_fix[RL_GRPO_FIX_TEXT_MAX];
} grpo_eval_result;

/* Runs the tasks of selector x seeds 1..seeds with model m (the trainer's
 * if NULL) at temperature; appends records to out_jsonl if non-NULL. */
int grpo_evaluate(grpo_eval_result *res, grpo_trainer *t, model *m, const char *selector, int seeds,
                  double temperature, const char *out_jsonl, char *err);

/* Collected episodes (records as JSON text) with their rewards. */
typedef struct grpo_episodes {
    char **rec;
    double *reward;
    const char **task;   /* instance ids (borrowed from the task set) */
    size_t n;
} grpo_episodes;

void grpo_episodes_dispose(grpo_episodes *e);

/* Runs `seeds` episodes of each task of selector at temperature, seeds
 * starting at seed0, with the current weights (GRPO_POLICY_MODEL) or the
 * config's openai policy (GRPO_POLICY_OPENAI). */
int grpo_collect(grpo_episodes *out, grpo_trainer *t, grpo_policy_kind pk, const char *selector, int seeds,
                 uint64_t seed0, double temperature, char *err);

/* Supervised fine-tuning of the trainer's model on the policy tokens of
 * records (cross-entropy, token mean), epochs passes at a constant lr,
 * with a fresh AdamW whose moments are then dropped. Returns the mean
 * NLL of the last epoch in *loss. */
int grpo_sft(double *loss, grpo_trainer *t, char *const *records, size_t n, int epochs, double lr, char *err);

/* Appends an event line ({"event": kind, ...fields}) to metrics.jsonl. */
int grpo_log_event(grpo_trainer *t, cJSON *fields, char *err);

/* ---- the experiment report (grpo_report.c) ------------------------------------- */

/* Evaluates the starting checkpoint (SFT) and the trainer's current model
 * (RL) on every final set, then writes <results>/<name>.json (sets with
 * name, n, sft, rl and Wilson intervals), <name>.md and the SVGs
 * (training curves, SFT vs RL). */
int grpo_final_report(grpo_trainer *t, char *err);

/* Training curves (SVG) from the run's metrics.jsonl. */
int grpo_write_curves(const char *run_dir, const char *svg_path, char *err);

#endif
