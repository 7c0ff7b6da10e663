/* grpo_int.h - the trainer's state, shared by grpo.c (steps, training),
 * grpo_ckpt.c (checkpoints, resume), grpo_eval.c (evaluation, profiles,
 * episode collection) and grpo_report.c. Not a public interface. */
#ifndef RL_GRPO_INT_H
#define RL_GRPO_INT_H

#include "grpo/grpo.h"
#include "common/limits.h"
#include "harness/rollout.h"
#include "policy/policy.h"
#include "protocol/tokenizer.h"
#include "corpus/task.h"

#include <cJSON.h>
#include <pthread.h>

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

/* The asynchronous rollout thread (grpo.c). */
typedef struct grpo_async grpo_async;

/* The train tasks in strata (see grpo_draw): member[start[k] .. start[k+1])
 * are the train-set indices of stratum k. */
typedef struct grpo_strata {
    size_t n;
    size_t *start;  /* n + 1 */
    size_t *member; /* train.n */
} grpo_strata;

struct grpo_trainer {
    grpo_config cfg;
    grpo_hooks hooks;
    char run_dir[GRPO_PATH_MAX];
    char metrics_path[GRPO_PATH_MAX + 32];
    task_set all, train;
    tok_t *tok;
    char tok_path[GRPO_PATH_MAX];
    model *m, *ref;
    adamw *opt;
    policy *pol;          /* live policy over m */
    rollout *ro;          /* synchronous rollout over pol */
    grpo_async *as;
    ep_config ep;
    int max_active;
    long step;            /* optimizer steps done; tokens sampled now carry version step + 1 */
    uint64_t data_pos;    /* tasks drawn from the train split */
    uint64_t groups_drawn;
    grpo_strata strata;   /* the train tasks by cfg.balance */
    size_t *scratch;      /* train.n + 1 entries, for grpo_draw */
    double best_eval;     /* < 0: none yet */
    long best_step;
    long last_ckpt;       /* step of the newest checkpoint, -1: none */
    /* recent metrics, for warnings */
    double *h_reward, *h_pass, *h_tool, *h_tokens, *h_kl, *h_fmt, *h_flag;
    size_t h_n, h_cap;
    /* records of the last step (profile when no evaluation ran) */
    char **last_recs;
    size_t n_last;
    /* mode comparison */
    double cmp_wall[2], cmp_busy[2];  /* per mode: step seconds, util x seconds */
    double cmp_eps[2];                /* episodes trained on */
    double *durs;                     /* every episode's duration (s), for the */
    size_t n_durs, cap_durs;          /* utilization model of common/stats */
    long cmp_steps[2];
    double t_open;
};

/* grpo.c */
double grpo_now(void);
/* Seed of member i of group gid (below 2^52: it is recorded as a number). */
uint64_t grpo_ep_seed(const grpo_trainer *t, uint64_t gid, int i);
grpo_group *grpo_group_new(const task *tk, long gid, int G);
void grpo_group_free(grpo_group *g);
/* A finished episode of group g, member i (record may be NULL): counters,
 * reward (tests, shaped or hook); advantages once the group is complete. */
void grpo_traj_finish(grpo_trainer *t, grpo_group *g, int i, char *rec, double reward);
/* Next train task (grpo_draw at data_pos; advances data_pos). */
const task *grpo_next_task(grpo_trainer *t);
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
void grpo_strata_free(grpo_strata *st);
void grpo_metrics_from_groups(grpo_step_metrics *sm, grpo_group *const *gs, size_t ng);
/* Moves the groups' records into t->last_recs (the profile's source). */
void grpo_keep_last_records(grpo_trainer *t, grpo_group *const *gs, size_t ng);
uint64_t grpo_mix(uint64_t a, uint64_t b);
/* Fills a trajectory's counters from its record. */
void grpo_traj_parse(grpo_traj *tr, const cJSON *rec);
/* Runs the episodes of tasks x seeds with policy pol; on_done gets each
 * record (may be NULL) -- the engine behind evaluation and collection. */
typedef void (*grpo_ep_fn)(void *user, size_t task_index, int seed_index, char *rec, double reward);
int grpo_run_episodes(grpo_trainer *t, policy *pol, const task *const *tasks, size_t n_tasks, int seeds,
                      uint64_t seed0, double temperature, grpo_ep_fn fn, void *user, char *err);
/* Warnings from the metric history (h_*): appended to arr as strings and
 * to line as "\n  warning: ..." lines. */
struct buf;
void grpo_warnings(const grpo_trainer *t, cJSON *arr, struct buf *line);
/* The weights changed outside a step (rollback, SFT): the asynchronous
 * sampler picks them up. */
void grpo_weights_changed(grpo_trainer *t);
/* Loads weights into m (same config) from a checkpoint file. */
int grpo_load_weights(model *m, const char *path, char *err);

/* grpo_update.c: one optimizer step on the groups' trajectories. Returns
 * RL_EINVAL with *nonfinite set when the loss or gradient is not finite. */
int grpo_train_groups(grpo_trainer *t, grpo_group **gs, size_t ng, grpo_step_metrics *sm, int *nonfinite,
                      char *err);

/* grpo_async.c */
int grpo_step_async(grpo_trainer *t, grpo_step_metrics *sm, int *nonfinite, char *err);
void grpo_async_publish(grpo_async *A, const model *m, long version);
void grpo_async_free(grpo_async *A);

/* grpo_ckpt.c */
int grpo_ckpt_write(grpo_trainer *t, char *const *profile_recs, size_t n_profile, char *err);
int grpo_ckpt_resolve(char *run_dir, size_t rn, char *ckpt_dir, size_t cn, const char *resume, char *err);
int grpo_ckpt_read_state(grpo_trainer *t, const char *ckpt_dir, char *err);
int grpo_rollback(grpo_trainer *t, const char *why, char *err);
int grpo_config_same(const grpo_config *a, const grpo_config *b, char *what, size_t n);

/* grpo_eval.c */
/* grpo_evaluate on a list of tasks at seeds first_seed .. first_seed +
 * seeds - 1; task_passed (NULL, or n_tasks entries) gets each task's
 * passed episodes. */
int grpo_evaluate_tasks(grpo_eval_result *res, size_t *task_passed, grpo_trainer *t, model *m,
                        const task *const *tasks, size_t n_tasks, int first_seed, int seeds, double temperature,
                        const char *out_jsonl, char *err);
cJSON *grpo_profile(char *const *recs, size_t n);

/* grpo_report.c: SFT vs RL on one held-out set, task by task. */
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

/* Compares the passes per task, sft[i] and rl[i] of `seeds` episodes each
 * for task sel->v[i] (same seeds for both), with the paired tests of
 * common/stats.h, and sums them by bug kind (generated tasks only).
 * Returns 0 or RL_ENOMEM. */
int grpo_compare_by_task(grpo_task_compare *r, const task_set *sel, const size_t *sft, const size_t *rl, int seeds);

#endif
