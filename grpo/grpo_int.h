/* grpo_int.h - the trainer's stages and the types they pass each other.
 * Not a public interface (grpo.h is).
 *
 * grpo.c owns the trainer and drives the stages; each stage takes what it
 * needs as arguments and calls only the helpers of grpo_group.c and
 * grpo_data.c, never grpo.c or another stage:
 *
 *   grpo.c -> grpo_rollout.c  the synchronous rollout of a step's groups
 *          -> grpo_async.c    the asynchronous rollout thread
 *          -> grpo_update.c   one optimizer step; the flywheel's fine-tune
 *          -> grpo_eval.c     evaluation, collection, behaviour profiles
 *          -> grpo_ckpt.c     checkpoints, resume, rollback
 *          -> grpo_metrics.c  a step's metrics line, history, warnings
 *          -> grpo_report.c   the SFT-vs-RL report, training curves
 *   stages -> grpo_group.c    trajectories, groups, seeds, weights
 *          -> grpo_data.c     the train tasks and the order they are drawn in
 */
#ifndef RL_GRPO_INT_H
#define RL_GRPO_INT_H

#include "grpo/grpo.h"
#include "common/buf.h"
#include "common/limits.h"
#include "harness/rollout.h"
#include "policy/policy.h"
#include "protocol/template.h"
#include "protocol/tokenizer.h"
#include "corpus/task.h"

#include <cJSON.h>

/* ---- grpo_group.c: trajectories, groups, seeds --------------------------------------- */

/* One finished (or pending) trajectory of a group. */
typedef struct grpo_traj {
    char *rec;           /* record JSON (NULL: not done, or the episode never started) */
    double reward;       /* what advantages are computed from */
    int passed;          /* the tests passed (record reward > 0.5) */
    int done, error;
    int turns, calls, calls_ok, identical, format_errors;
    int edits, edits_ok; /* edit_file / write_file calls, and those that changed the file */
    int edit_no_match, edit_not_unique, edit_no_change; /* failed edits by the record's error_kind */
    int edit_repaired;   /* failed edits that a later applied edit of the episode followed */
    int flagged;         /* the integrity check flagged the scored diff */
    /* the fix: the last applied edit_file call, "old -> new" (blanks
     * collapsed, cut at RL_GRPO_FIX_TEXT_MAX), and a hash of the whole;
     * fix_hash 0 when no edit_file call applied */
    uint64_t fix_hash;
    char fix[RL_GRPO_FIX_TEXT_MAX];
    long policy_tokens;
    double dur_s;        /* timings.total_ms of the record, in seconds */
} grpo_traj;

/* G trajectories of one task under one config. */
typedef struct grpo_group {
    const task *task;
    long gid;            /* global group number: seeds derive from it */
    int n, n_done;
    grpo_traj *tr;
    double *adv;
    stats_group st;
    int dropped;         /* zero variance, replaced by dynamic sampling */
    int replacement;     /* drawn to replace a zero-variance group */
} grpo_group;

/* What one step measured (one JSONL line). */
typedef struct grpo_step_metrics {
    long step;
    const char *mode;
    double lr, grad_norm;
    size_t groups, zero_var, resampled, dropped, episodes, errors;
    double reward_mean, pass_rate, tool_success, format_error_rate, policy_tokens_mean, turns_mean,
        identical_share;
    size_t edit_calls;   /* edit_file / write_file calls of the step's episodes */
    size_t flagged;      /* episodes the integrity check flagged */
    size_t finished;     /* episodes whose rollouts ended during the step: sync, every
                            episode of its groups (dropped ones included); async, those
                            trained on now or waiting for the rest of their group */
    double flagged_share;
    double edit_applied; /* the share of them that changed a file (0 with none) */
    grpo_loss_stats loss;
    size_t seqs, trained_tokens, forward_tokens, stale_dropped, skipped_long, skipped_records, filtered_seqs;
    int updated;         /* 0: no gradient signal, optimizer skipped */
    int passes;          /* update passes done (loss sums over them) */
    double step_s, rollout_s, train_s, util;
    long gen_tokens, prefill_tokens;
    double gen_s;
} grpo_step_metrics;

/* Every finished episode's duration (s), for the utilization model of
 * common/stats; at most RL_GRPO_CURVE_MAX are kept. */
typedef struct grpo_durs {
    double *v;
    size_t n, cap;
} grpo_durs;

uint64_t grpo_mix(uint64_t a, uint64_t b);
/* Seed of member i of group gid under the run's seed (below 2^52: it is
 * recorded as a number). */
uint64_t grpo_ep_seed(long seed, uint64_t gid, int i);
int grpo_group_new(grpo_group **out, const task *tk, long gid, int G, char *err);
void grpo_group_free(grpo_group *g);
/* Fills a trajectory's counters from its record. */
void grpo_traj_parse(grpo_traj *tr, const cJSON *rec);
/* A finished episode of group g, member i (record may be NULL, owned by
 * the group from now on): counters, reward (tests, shaped when
 * c->shaping.on, or the reward hook of o), the duration into durs (may be
 * NULL); advantages once the group is complete. */
void grpo_traj_finish(grpo_group *g, int i, char *rec, double reward, const grpo_config *c, const grpo_opts *o,
                      grpo_durs *durs);
void grpo_durs_dispose(grpo_durs *d);
/* Adds up the trajectories of gs into sm's episode figures. */
void grpo_metrics_from_groups(grpo_step_metrics *sm, grpo_group *const *gs, size_t ng);
/* Loads weights into m (same config) from a checkpoint file. */
int grpo_load_weights(model *m, const char *path, char *err);

/* ---- grpo_data.c: the train tasks and their order ----------------------------------- */

/* The train tasks in strata (see grpo_draw): member[start[k] .. start[k+1])
 * are the train-set indices of stratum k. */
typedef struct grpo_strata {
    size_t n;
    size_t *start;  /* n + 1 */
    size_t *member; /* train.n */
} grpo_strata;

/* The run's tasks and where the run is in its train order. */
typedef struct grpo_data {
    task_set all, train;
    grpo_strata strata;   /* the train tasks by the config's balance */
    size_t *scratch;      /* train.n + 1 entries, for grpo_draw */
    long seed;
    int group_size;
    uint64_t data_pos;    /* tasks drawn from the train split */
    uint64_t groups_drawn;
} grpo_data;

/* Index into the train set of draw number pos: a function of (seed, pos)
 * alone, so a resumed run draws what the killed one would have. With one
 * stratum, every task once per epoch in a fresh shuffle. With several,
 * each round of st->n draws visits every stratum once, in a shuffled
 * order, and each stratum walks its own tasks the same way, so every
 * stratum gets the same share of groups whatever its share of tasks.
 * scratch holds max(st->n, largest stratum) entries. */
size_t grpo_draw(const grpo_strata *st, uint64_t seed, uint64_t pos, size_t *scratch);
/* Groups the train tasks by `balance` (GRPO_BALANCE_*: one stratum for
 * none, else one per bug kind or repository, in name order) and
 * allocates *scratch for grpo_draw. */
int grpo_strata_build(grpo_strata *st, size_t **scratch, const task_set *train, int balance, char *err);
void grpo_strata_dispose(grpo_strata *st);
/* Loads the tasks of c and selects its train split. */
int grpo_data_init(grpo_data *d, const grpo_config *c, char *err);
void grpo_data_dispose(grpo_data *d);
/* A new group of the next train task (advances data_pos and groups_drawn). */
int grpo_data_next_group(grpo_group **out, grpo_data *d, char *err);

/* ---- grpo_rollout.c: the synchronous rollout ----------------------------------------- */

/* Where episodes run: what every rollout of the run shares. */
typedef struct grpo_run_env {
    const ep_config *ep;
    const char *ws_root;  /* NULL: the workspace default */
    int max_active;
    int tool_threads;
    long version;         /* stamped on the tokens sampled */
    long seed;            /* the run's seed: episode seeds derive from it */
    /* a fleet (grpo_fleet.c): the policy over its generation servers
     * (borrowed) and its env servers; pol NULL: local rollouts */
    policy *pol;
    const char *const *env_urls;
    int n_env;
    const char *env_token;
    long env_timeout_ms;
} grpo_run_env;

/* The groups of one synchronous step: tasks_per_step new groups run to
 * completion in ro, then (dynamic sampling) zero-variance groups marked
 * dropped and replaced by fresh ones, up to max_extra_groups. Returns the
 * groups in *gs (caller frees each and the array) and the busy
 * slot-seconds in *busy. */
int grpo_rollout_groups(grpo_group ***gs, size_t *ng, rollout *ro, const grpo_run_env *env, grpo_data *d,
                        const grpo_config *c, const grpo_opts *o, grpo_durs *durs, grpo_step_metrics *sm, double *busy,
                        char *err);

/* ---- grpo_fleet.c: generation and env servers of a fleet -------------------------------- */

typedef struct grpo_fleet grpo_fleet;

/* The fleet of c (fleet.generate, fleet.env, fleet.token_env,
 * fleet.weights): every server is asked once (GET /v1/models, /health);
 * one that does not answer 200 is an error naming its URL. */
int grpo_fleet_new(grpo_fleet **out, const grpo_config *c, const char *run_dir, char *err);
void grpo_fleet_free(grpo_fleet *f);
/* The env servers' base URLs (borrowed from f). */
const char *const *grpo_fleet_env_urls(const grpo_fleet *f, int *n);
const char *grpo_fleet_weights_path(const grpo_fleet *f);
/* The version pushed last, -1 before the first push. */
long grpo_fleet_version(const grpo_fleet *f);
/* Writes m to the weights path (temp + rename) and has every generation
 * server load it as version; returns once all acknowledged, else an
 * error naming the first server that did not. */
int grpo_fleet_push(grpo_fleet *f, const model *m, const model_meta *meta, long version, char *err);

/* ---- grpo_async.c: the asynchronous rollout thread ------------------------------------ */

typedef struct grpo_async grpo_async;

/* Starts a rollout thread with its own copy of m's weights and its own
 * policy (c's sampling settings) over them; tokens carry env->version
 * until the next publish. */
int grpo_async_new(grpo_async **out, const model *m, const tok_t *tok, const grpo_run_env *env, const grpo_config *c,
                   char *err);
void grpo_async_free(grpo_async *A);
/* Queues tasks_per_step new groups and waits until lambda of them are
 * done and one group is complete; replaces zero-variance groups (dynamic
 * sampling). *gs gets the complete groups: the *nb to train on first, then
 * the *nd dropped ones (caller frees each and the array); the unfinished
 * ones go on. */
int grpo_async_collect(grpo_async *A, grpo_data *d, const grpo_config *c, const grpo_opts *o, grpo_durs *durs,
                       grpo_step_metrics *sm, grpo_group ***gs, size_t *nb, size_t *nd, char *err);
/* The thread takes m's weights between two rollout steps and stamps
 * version on every later turn. */
void grpo_async_publish(grpo_async *A, const model *m, long version);
/* Tokens generated, prompt tokens prefilled, generation seconds, busy
 * slot-seconds so far (the rollout step under way included). */
void grpo_async_counters(grpo_async *A, long *gen, long *prefill, double *gen_s, double *busy);

/* ---- grpo_update.c: the optimizer step --------------------------------------------------- */

/* One optimizer step of opt on m from the groups' trajectories (ref: the
 * frozen reference for the KL term, or NULL); step is the number of steps
 * done. Returns RL_EINVAL with *nonfinite set when the loss or gradient is
 * not finite. */
int grpo_update(model *m, const model *ref, adamw *opt, long step, const grpo_config *c, grpo_group **gs, size_t ng,
                grpo_step_metrics *sm, int *nonfinite, char *err);
/* Cross-entropy fine-tune of m on the policy tokens of records with a
 * fresh AdamW of c->optim at constant lr (grpo_sft in grpo.h). */
int grpo_update_sft(double *loss, model *m, const grpo_config *c, char *const *records, size_t n, int epochs, double lr,
                    char *err);

/* ---- grpo_eval.c: evaluation, collection, profiles ---------------------------------------- */

/* Runs the episodes of tasks x seeds with policy pol at temperature
 * (pol's temperature is base_temperature again afterwards); fn gets each
 * record (may be NULL, fn owns it). */
typedef void (*grpo_ep_fn)(void *user, size_t task_index, int seed_index, char *rec, double reward);
int grpo_run_episodes(const grpo_run_env *env, policy *pol, double base_temperature, const task *const *tasks,
                      size_t n_tasks, int seeds, uint64_t seed0, double temperature, grpo_ep_fn fn, void *user,
                      char *err);
/* Evaluation of pol on tasks at seeds first_seed .. first_seed + seeds -
 * 1; task_passed (NULL, or n_tasks entries) gets each task's passed
 * episodes; records are appended to out_jsonl if non-NULL. */
int grpo_evaluate_tasks(grpo_eval_result *res, size_t *task_passed, const grpo_run_env *env, policy *pol,
                        double base_temperature, const task *const *tasks, size_t n_tasks, int first_seed, int seeds,
                        double temperature, const char *out_jsonl, char *err);
/* Episodes of tasks x seeds from seed0 (grpo_collect in grpo.h). */
int grpo_collect_tasks(grpo_episodes *out, const grpo_run_env *env, policy *pol, double base_temperature,
                       const task *const *tasks, size_t n_tasks, int seeds, uint64_t seed0, double temperature,
                       char *err);
/* The behaviour profile of records (turn counts, tool-call mix, why
 * episodes ended, the commonest failures). */
cJSON *grpo_profile(char *const *recs, size_t n);

/* ---- grpo_ckpt.c: checkpoints ------------------------------------------------------------- */

/* What a checkpoint records besides weights and optimizer moments. */
typedef struct grpo_ckpt_state {
    long step;
    uint64_t data_pos, groups_drawn;
    long seed;
    double best_eval;     /* < 0: none yet */
    long best_step;
    double elapsed_s;
    int chat_template;    /* the tpl_kind the run's episodes render with */
} grpo_ckpt_state;

/* Writes ckpt/step-N of run_dir (profile may be NULL), names it latest
 * (and best when st->best_step is its step), and prunes all but the newest
 * keep, the best and step 0. The weights' metadata names tok_path and the
 * Hugging Face tokenizer files of hf (may be NULL). */
int grpo_ckpt_write(const char *run_dir, const char *tok_path, const model_meta *hf, const model *m, const adamw *opt,
                    const grpo_ckpt_state *st, int keep, const cJSON *profile, char *err);
int grpo_ckpt_resolve(char *run_dir, size_t rn, char *ckpt_dir, size_t cn, const char *resume, char *err);
/* Reads state.json of ckpt_dir; its seed must be seed. */
int grpo_ckpt_read_state(grpo_ckpt_state *st, const char *ckpt_dir, long seed, char *err);
/* Loads the best checkpoint of run_dir (else the latest) into m and opt;
 * its name goes to name. */
int grpo_ckpt_restore(char *name, size_t n, model *m, adamw *opt, const char *run_dir, char *err);
int grpo_config_same(const grpo_config *a, const grpo_config *b, char *what, size_t n);

/* ---- grpo_metrics.c: per-step metrics and warnings ----------------------------------------- */

/* Recent metrics, for warnings. */
typedef struct grpo_history {
    double *reward, *pass, *tool, *tokens, *kl, *fmt, *flag;
    size_t n, cap;
} grpo_history;

int grpo_history_push(grpo_history *h, const grpo_step_metrics *sm, char *err);
void grpo_history_dispose(grpo_history *h);
/* Warnings from the history under c's thresholds: appended to arr as
 * strings and to line as "\n  warning: ..." lines. */
void grpo_warnings(const grpo_history *h, const grpo_config *c, cJSON *arr, buf_t *line);
/* The step's metrics line (JSON) and its terminal line. */
cJSON *grpo_metrics_json(const grpo_step_metrics *sm);
void grpo_metrics_line(buf_t *line, const grpo_step_metrics *sm, long steps);

/* ---- grpo_report.c: SFT vs RL on held-out sets --------------------------------------------- */

typedef struct grpo_kind_result {
    const char *name;      /* generator.mutation, borrowed from the tasks */
    size_t tasks, sft, rl; /* tasks, and episodes each policy passed */
} grpo_kind_result;

typedef struct grpo_task_compare {
    size_t up, down;       /* tasks RL passes more / less often than SFT */
    double diff;           /* RL pass rate - SFT pass rate */
    double diff_lo, diff_hi; /* its 95% interval, tasks resampled (bootstrap) */
    double perm_p;         /* paired sign-flip permutation test over tasks */
    grpo_kind_result kind[RL_GRPO_REPORT_KINDS_MAX];
    size_t n_kinds;        /* in order of first appearance; further kinds
                              past the cap are left out */
} grpo_task_compare;

/* One final set, evaluated with both policies. */
typedef struct grpo_set_result {
    const grpo_final_set *set;
    size_t tasks, n;
    int seeds;
    grpo_eval_result sft, rl;
    grpo_task_compare cmp;
} grpo_set_result;

/* Compares the passes per task, sft[i] and rl[i] of `seeds` episodes each
 * for task sel->v[i] (same seeds for both), with the paired tests of
 * common/stats.h, and sums them by bug kind (generated tasks only).
 * Returns 0 or RL_ENOMEM. */
int grpo_compare_by_task(grpo_task_compare *r, const task_set *sel, const size_t *sft, const size_t *rl, int seeds);
/* The tasks of a final set (its selector, kept to its split). */
int grpo_report_select(task_set *out, const task_set *all, const grpo_final_set *fs, char *err);
/* Writes <results>/<name>.json, .md and the SVGs of a run at step. */
int grpo_report_write(const grpo_config *c, const char *run_dir, long step, const grpo_set_result *sr, int ns,
                      char *err);

/* ---- grpo.c: what the tests look at ------------------------------------------------------- */

grpo_config *grpo_config_of(grpo_trainer *t);
const model *grpo_reference(const grpo_trainer *t);
/* The records of the last step (moved out of its groups). */
char *const *grpo_last_records(const grpo_trainer *t, size_t *n);

#endif
