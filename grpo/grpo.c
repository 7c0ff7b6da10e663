/* grpo.c - the GRPO trainer: open a run, then the step loop.
 *
 * One step (grpo_train):
 *   1. draw groups and roll them out: tasks_per_step train tasks, G
 *      episodes each, scored by the tests (grpo_rollout.c in the sync mode,
 *      grpo_async.c in the async one);
 *   2. advantages per group as each completes (grpo_group.c), zero-variance
 *      groups replaced (dynamic sampling);
 *   3. records -> sequences -> one optimizer step on the PPO-clip + KL
 *      objective (grpo_update.c, grpo/sample.c, grpo/loss.c);
 *   4. the metrics line and warnings (grpo_metrics.c);
 *   5. every eval_every steps an evaluation on held-out tasks, rollback
 *      when it drops (grpo_eval.c, grpo_ckpt.c); a checkpoint every
 *      ckpt_every steps and at the end (grpo_ckpt.c);
 * and after the last step the experiment report (grpo_report.c).
 *
 * Call graph (from nm of the objects: no stage calls grpo.c or a sibling
 * stage):
 *   grpo.c -> grpo_rollout, grpo_async, grpo_update, grpo_eval, grpo_ckpt,
 *             grpo_metrics, grpo_report, grpo_data, grpo_group, grpo_config
 *   grpo_rollout, grpo_async -> grpo_data, grpo_group
 *   grpo_update -> grpo_group, sample, loss
 *   grpo_eval -> grpo_group
 *   grpo_ckpt -> grpo_group, grpo_config
 *   grpo_data -> grpo_group
 *   grpo_metrics, grpo_report, grpo_group -> nothing in grpo/
 * The trainer below is private to this file: stages get its parts as
 * arguments.
 *
 * Data-parallel (grpo_dp.h, started by mpirun with N ranks; sync mode):
 * every rank opens the same run and draws the same groups; the rollout
 * splits the groups over the ranks and hands every record to every rank,
 * the update splits the micro-batches and sums the gradient over the
 * ranks, so all ranks take the same steps on the same weights (their hash
 * is compared every RL_GRPO_DP_HASH_EVERY steps and at each checkpoint).
 * Rank 0 alone writes: config, metrics, records, checkpoints, evaluations
 * (a rollback it decides is broadcast with the restored weights and
 * optimizer moments).
 */
#include "grpo/grpo_int.h"

#include "common/buf.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "common/vec.h"
#include "grpo/grpo_dp.h"
#include "policy/model_policy.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct grpo_trainer {
    grpo_config cfg;
    grpo_opts opts;
    char run_dir[GRPO_PATH_MAX];
    char metrics_path[GRPO_PATH_MAX + 32];
    char records_path[GRPO_PATH_MAX + 32];
    grpo_data data;       /* the tasks, and where the run is in the train order */
    tok_t *tok;
    char tok_path[GRPO_PATH_MAX];
    model_meta init_meta; /* the metadata of "init" (its Hugging Face tokenizer files) */
    model *m, *ref;       /* the weights trained, the frozen reference (KL) */
    adamw *opt;
    policy *pol;          /* model policy over m */
    rollout *ro;          /* synchronous rollout over pol (a fleet: over fleet_pol) */
    grpo_fleet *fleet;    /* fleet section: its servers; NULL: local rollouts */
    policy *fleet_pol;    /* the openai policy over the fleet's generation servers */
    ep_config fleet_ep;   /* t->ep with the fleet's policy */
    grpo_async *as;       /* the rollout thread, once an async step ran */
    ep_config ep;
    int max_active;
    long step;            /* optimizer steps done; tokens sampled now carry version step + 1 */
    double best_eval;     /* < 0: none yet */
    long best_step;
    long last_ckpt;       /* step of the newest checkpoint, -1: none */
    grpo_history hist;    /* recent metrics, for warnings */
    char **last_recs;     /* records of the last step (profile when no evaluation ran) */
    size_t n_last;
    /* mode comparison, per mode: step seconds, util x seconds, episodes trained on, steps */
    double cmp_wall[2], cmp_busy[2], cmp_eps[2];
    long cmp_steps[2];
    grpo_durs durs;       /* every episode's duration, for the utilization model */
    double t_open;
    int root;             /* rank 0 (or the only process): writes the run's files */
    long rollbacks_done;  /* rollbacks so far (rank 0 tells the others about its own) */
};

void grpo_opts_default(grpo_opts *o)
{
    memset(o, 0, sizeof *o);
}

long grpo_step_count(const grpo_trainer *t) { return t->step; }
model *grpo_model(grpo_trainer *t) { return t->m; }
const char *grpo_run_dir(const grpo_trainer *t) { return t->run_dir; }
grpo_config *grpo_config_of(grpo_trainer *t) { return &t->cfg; }
const model *grpo_reference(const grpo_trainer *t) { return t->ref; }

char *const *grpo_last_records(const grpo_trainer *t, size_t *n)
{
    if (n)
        *n = t->n_last;
    return t->last_recs;
}

/* One line to the log callback (none when quiet). */
static void say(const grpo_trainer *t, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(const grpo_trainer *t, int level, const char *fmt, ...)
{
    if (t->cfg.quiet || !t->opts.log || !t->root)
        return;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    t->opts.log(t->opts.log_ctx, level, msg);
}

/* Where episodes run, with the version the next sampled tokens carry. */
static grpo_run_env run_env(const grpo_trainer *t)
{
    grpo_run_env e = {.ep = &t->ep,
                      .ws_root = t->cfg.ws_root[0] ? t->cfg.ws_root : NULL,
                      .max_active = t->max_active,
                      .tool_threads = t->cfg.tool_threads,
                      .version = t->step + 1,
                      .seed = t->cfg.seed};
    return e;
}

/* A model policy over m with the run's sampling settings. */
static int policy_over(policy **out, const grpo_trainer *t, model *m, const char *name, char *err)
{
    model_policy_opts po;
    model_policy_opts_default(&po);
    po.temperature = (float)t->cfg.temperature;
    po.top_p = (float)t->cfg.top_p;
    po.max_tokens = t->cfg.max_reply_tokens;
    po.name = name;
    return model_policy_new(out, m, t->tok, &po, err);
}

/* The openai policy of the config sampling at temperature, and the
 * episode config of its episodes in *ep (policy "openai" and its options,
 * recorded; the policy's tokenizer, none in chat mode). */
static int openai_over(policy **out, ep_config *ep, const grpo_trainer *t, double temperature, char *err)
{
    static const char *const api[] = {"chat", "completions"};
    const grpo_config *c = &t->cfg;
    *ep = t->ep;
    ep->policy = "openai";
    ep->temperature = temperature;
    ep->openai = (ep_openai){.base_url = c->oai_base_url,
                             .model = c->oai_model,
                             .api = api[c->oai_api ? 1 : 0],
                             .api_key_env = c->oai_api_key_env[0] ? c->oai_api_key_env : NULL,
                             .tokenizer = c->oai_tokenizer[0] ? c->oai_tokenizer : NULL,
                             .max_inflight = c->oai_max_inflight,
                             .timeout_ms = c->oai_timeout_ms,
                             .retries = c->oai_retries};
    pol_env env;
    ep_config_pol_env(&env, ep);
    env.log = t->opts.log;
    env.log_ctx = t->opts.log_ctx;
    int rc = pol_open(out, "openai", &env, err);
    if (rc == 0)
        ep->tok = (*out)->tok;
    return rc;
}

int grpo_log_event(grpo_trainer *t, cJSON *fields, char *err)
{
    if (!t->root)
        return 0;
    char *s = cJSON_PrintUnformatted(fields);
    if (!s)
        return rl_err(err, RL_ENOMEM, "grpo: out of memory");
    int rc = fs_append_record(t->metrics_path, s, strlen(s), err);
    free(s);
    return rc;
}

/* ---- checkpoints, rollback ------------------------------------------------------------ */

/* Writes the checkpoint of this step, with the profile of recs (if any). */
static int checkpoint(grpo_trainer *t, char *const *recs, size_t n, char *err)
{
    if (!t->root) {
        t->last_ckpt = t->step;
        return 0;
    }
    grpo_ckpt_state st = {t->step,      t->data.data_pos, t->data.groups_drawn, t->cfg.seed,
                          t->best_eval, t->best_step,     clk_s() - t->t_open,
                          t->ep.chat_template};
    cJSON *profile = NULL;
    if (recs && n && !(profile = grpo_profile(recs, n)))
        return rl_err(err, RL_ENOMEM, "grpo: out of memory");
    int rc = grpo_ckpt_write(t->run_dir, t->tok_path, &t->init_meta, t->m, t->opt, &st, t->cfg.ckpt_keep, profile, err);
    cJSON_Delete(profile);
    if (rc == 0)
        t->last_ckpt = t->step;
    return rc;
}

int grpo_checkpoint(grpo_trainer *t, char *err)
{
    if (t->last_ckpt == t->step)
        return 0;
    return checkpoint(t, t->last_recs, t->n_last, err);
}

/* The weights changed outside a step (rollback, SFT): the rollout thread
 * picks them up. */
static void weights_changed(grpo_trainer *t)
{
    if (t->as)
        grpo_async_publish(t->as, t->m, t->step + 1);
}

/* Back to the best checkpoint (else the latest); the schedule goes on. */
static int rollback(grpo_trainer *t, const char *why, char *err)
{
    char name[64] = "";
    int rc = t->root ? grpo_ckpt_restore(name, sizeof name, t->m, t->opt, t->run_dir, err) : 0;
    if (rc < 0)
        return rc;
    t->rollbacks_done++;
    t->opt->step = t->step;
    weights_changed(t);
    say(t, RL_LOG_WARN, "rollback at step %ld to %s: %s", t->step, name, why);
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "event", "rollback");
    cJSON_AddNumberToObject(e, "step", (double)t->step);
    cJSON_AddStringToObject(e, "to", name);
    cJSON_AddStringToObject(e, "why", why);
    rc = grpo_log_event(t, e, err);
    cJSON_Delete(e);
    return rc;
}

/* ---- data-parallel ------------------------------------------------------------------------ */

/* Rank 0's weights and optimizer moments to every rank (after a rollback
 * rank 0 restored). */
static int sync_from_root(grpo_trainer *t, char *err)
{
    int rc = dp_bcast(t->m->params, t->m->n_params * sizeof(float), 0, err);
    if (rc == 0)
        rc = dp_bcast(t->opt->m, t->opt->n * sizeof(float), 0, err);
    if (rc == 0)
        rc = dp_bcast(t->opt->v, t->opt->n * sizeof(float), 0, err);
    return rc;
}

/* Every rank's parameter hash against rank 0's: a mismatch on any rank is
 * an error on every rank. */
static int check_same_weights(grpo_trainer *t, char *err)
{
    if (dp_size() <= 1)
        return 0;
    uint64_t h = dp_hash(t->m->params, t->m->n_params * sizeof(float)), h0 = h;
    int rc = dp_bcast(&h0, sizeof h0, 0, err);
    double bad[2] = {h != h0 ? 1.0 : 0.0, h != h0 ? (double)dp_rank() : -1.0};
    if (rc == 0)
        rc = dp_allreduce_max_d(bad, 2, err);
    if (rc < 0)
        return rc;
    if (bad[0] > 0)
        return rl_err(err, RL_EINVAL,
                      "data-parallel: after step %ld the weights of rank %d differ from rank 0's (expected identical "
                      "weights on every rank; resume from the last checkpoint)",
                      t->step, (int)bad[1]);
    return 0;
}

/* Rank 0 appends every record of the step's groups to records.jsonl
 * (train.records). */
static int write_records(const grpo_trainer *t, grpo_group *const *gs, size_t ng, char *err)
{
    if (!t->root || !t->cfg.records)
        return 0;
    for (size_t k = 0; k < ng; k++)
        for (int i = 0; i < gs[k]->n; i++) {
            const char *r = gs[k]->tr[i].rec;
            int rc = r ? fs_append_record(t->records_path, r, strlen(r), err) : 0;
            if (rc < 0)
                return rc;
        }
    return 0;
}

/* ---- one step --------------------------------------------------------------------------- */

/* Moves the groups' records into t->last_recs (the profile's source). */
static void keep_last_records(grpo_trainer *t, grpo_group *const *gs, size_t ng)
{
    for (size_t i = 0; i < t->n_last; i++)
        free(t->last_recs[i]);
    free(t->last_recs);
    t->last_recs = NULL;
    t->n_last = 0;
    size_t n = 0;
    for (size_t k = 0; k < ng; k++)
        n += (size_t)gs[k]->n;
    t->last_recs = calloc(n ? n : 1, sizeof *t->last_recs);
    if (!t->last_recs)
        return; /* the next checkpoint has no profile */
    for (size_t k = 0; k < ng; k++)
        for (int i = 0; i < gs[k]->n; i++)
            if (gs[k]->tr[i].rec) {
                t->last_recs[t->n_last++] = gs[k]->tr[i].rec;
                gs[k]->tr[i].rec = NULL; /* moved */
            }
}

static void free_groups(grpo_group **gs, size_t ng)
{
    for (size_t k = 0; k < ng; k++)
        grpo_group_free(gs[k]);
    free(gs);
}

/* Sync: every episode of the step is done before the update. */
/* A fleet's generation servers get the weights the next rollouts are
 * stamped with (version step + 1) unless they have them: after every
 * update, and before the first step or after a rollback. */
static int fleet_sync(grpo_trainer *t, char *err)
{
    long v = t->step + 1;
    if (!t->fleet || grpo_fleet_version(t->fleet) == v)
        return 0;
    double tp = clk_s();
    int rc = grpo_fleet_push(t->fleet, t->m, &t->init_meta, v, err);
    if (rc == 0)
        say(t, RL_LOG_INFO, "fleet: weights version %ld on every generation server (%.2f s)", v, clk_s() - tp);
    return rc;
}

static int step_sync(grpo_trainer *t, grpo_step_metrics *sm, int *nonfinite, char *err)
{
    double t0 = clk_s(), busy = 0;
    long gen0, pre0, gen1, pre1;
    double gs0, gs1;
    model_policy_counters(t->pol, &gen0, &pre0, &gs0);
    grpo_run_env env = run_env(t);
    if (t->fleet) {
        int prc = fleet_sync(t, err);
        if (prc < 0)
            return prc;
        env.ep = &t->fleet_ep;
    }
    grpo_group **gs;
    size_t ng;
    int rc = grpo_rollout_groups(&gs, &ng, t->ro, &env, &t->data, &t->cfg, &t->opts, &t->durs, sm, &busy, err);
    if (rc < 0)
        return rc;
    sm->rollout_s = clk_s() - t0;
    model_policy_counters(t->pol, &gen1, &pre1, &gs1);
    /* at N ranks: the counters of all ranks, busy slots of all ranks */
    double cnt[4] = {(double)(gen1 - gen0), (double)(pre1 - pre0), gs1 - gs0, busy};
    if ((rc = dp_allreduce_sum_d(cnt, 4, err)) < 0) {
        free_groups(gs, ng);
        return rc;
    }
    sm->gen_tokens = (long)cnt[0];
    sm->prefill_tokens = (long)cnt[1];
    sm->gen_s = cnt[2];
    busy = cnt[3];
    grpo_metrics_from_groups(sm, gs, ng);
    /* train on the groups not dropped */
    grpo_group **batch = calloc(ng ? ng : 1, sizeof *batch);
    size_t nb = 0;
    if (!batch) {
        free_groups(gs, ng);
        return rl_err(err, RL_ENOMEM, "grpo: out of memory");
    }
    for (size_t k = 0; k < ng; k++)
        if (!gs[k]->dropped)
            batch[nb++] = gs[k];
    rc = grpo_update(t->m, t->ref, t->opt, t->step, &t->cfg, batch, nb, sm, nonfinite, err);
    free(batch);
    if (rc == 0)
        rc = write_records(t, gs, ng, err);
    sm->step_s = clk_s() - t0;
    sm->util = sm->step_s > 0 ? busy / ((double)t->max_active * dp_size() * sm->step_s) : 0;
    keep_last_records(t, gs, ng);
    free_groups(gs, ng);
    return rc;
}

/* Async: train on the groups complete once lambda of the step is done;
 * the rest go on sampling with the weights they started with. */
static int step_async(grpo_trainer *t, grpo_step_metrics *sm, int *nonfinite, char *err)
{
    int rc;
    grpo_run_env env = run_env(t);
    if (t->fleet) {
        if ((rc = fleet_sync(t, err)) < 0)
            return rc;
        env.ep = &t->fleet_ep;
        env.pol = t->fleet_pol;
        env.env_urls = grpo_fleet_env_urls(t->fleet, &env.n_env);
        env.env_token = t->cfg.fleet_token_env[0] ? getenv(t->cfg.fleet_token_env) : NULL;
        env.env_timeout_ms = t->cfg.fleet_timeout_ms;
    }
    if (!t->as && (rc = grpo_async_new(&t->as, t->m, t->tok, &env, &t->cfg, err)) < 0)
        return rc;
    double t0 = clk_s(), busy0, busy1, gs0, gs1;
    long gen0, pre0, gen1, pre1;
    grpo_async_counters(t->as, &gen0, &pre0, &gs0, &busy0);
    grpo_group **gs;
    size_t nb, nd;
    if ((rc = grpo_async_collect(t->as, &t->data, &t->cfg, &t->opts, &t->durs, sm, &gs, &nb, &nd, err)) < 0)
        return rc;
    sm->rollout_s = clk_s() - t0;
    /* the metrics count every group sampled, dropped ones too (as in sync) */
    grpo_metrics_from_groups(sm, gs, nb + nd);
    rc = grpo_update(t->m, t->ref, t->opt, t->step, &t->cfg, gs, nb, sm, nonfinite, err);
    if (rc == 0)
        grpo_async_publish(t->as, t->m, t->step + 2); /* the version after this step */
    if (rc == 0)
        rc = write_records(t, gs, nb + nd, err);
    grpo_async_counters(t->as, &gen1, &pre1, &gs1, &busy1);
    sm->gen_tokens = gen1 - gen0;
    sm->prefill_tokens = pre1 - pre0;
    sm->gen_s = gs1 - gs0;
    sm->step_s = clk_s() - t0;
    sm->util = sm->step_s > 0 ? (busy1 - busy0) / ((double)t->max_active * sm->step_s) : 0;
    keep_last_records(t, gs, nb);
    free_groups(gs, nb + nd);
    return rc;
}

static int use_async(const grpo_trainer *t)
{
    if (t->cfg.mode == GRPO_ASYNC)
        return 1;
    if (t->cfg.mode == GRPO_COMPARE) {
        long s = t->cfg.compare_sync_steps > 0 ? t->cfg.compare_sync_steps : t->cfg.steps / 2;
        return t->step >= s;
    }
    return 0;
}

/* The step's metrics line, its warnings, and the terminal line. */
static int log_step(grpo_trainer *t, const grpo_step_metrics *sm, char *err)
{
    int rc = grpo_history_push(&t->hist, sm, err);
    if (rc < 0 || !t->root)
        return rc;
    cJSON *o = grpo_metrics_json(sm);
    cJSON *warn = cJSON_AddArrayToObject(o, "warnings");
    buf_t line;
    buf_init(&line, 1 << 16);
    grpo_metrics_line(&line, sm, t->cfg.steps);
    grpo_warnings(&t->hist, &t->cfg, warn, &line);
    rc = grpo_log_event(t, o, err);
    cJSON_Delete(o);
    if (!t->cfg.quiet && t->opts.log)
        t->opts.log(t->opts.log_ctx, cJSON_GetArraySize(warn) ? RL_LOG_WARN : RL_LOG_INFO, buf_str(&line));
    buf_dispose(&line);
    return rc;
}

/* ---- evaluation ------------------------------------------------------------------------- */

/* Evaluation of m (NULL: the trainer's model) on tasks. */
static int evaluate_model(grpo_eval_result *res, size_t *task_passed, grpo_trainer *t, model *m,
                          const task *const *tasks, size_t n_tasks, int first_seed, int seeds, double temperature,
                          const char *out_jsonl, char *err)
{
    policy *own = NULL, *pol = t->pol;
    int rc;
    if (m && m != t->m) {
        if ((rc = policy_over(&own, t, m, "grpo-eval", err)) < 0)
            return rc;
        pol = own;
    }
    grpo_run_env env = run_env(t);
    rc = grpo_evaluate_tasks(res, task_passed, &env, pol, t->cfg.temperature, tasks, n_tasks, first_seed, seeds,
                             temperature, out_jsonl, err);
    pol_free(own);
    return rc;
}

int grpo_evaluate(grpo_eval_result *res, grpo_trainer *t, model *m, const char *selector, int seeds,
                  double temperature, const char *out_jsonl, char *err)
{
    memset(res, 0, sizeof *res);
    task_set sel;
    int rc = task_select(&sel, &t->data.all, selector, err);
    if (rc < 0)
        return rc;
    if (sel.n == 0) {
        task_select_dispose(&sel);
        return rl_err(err, RL_EINVAL, "evaluation tasks \"%s\": selects no task", selector);
    }
    if (!m && t->cfg.eval_policy == GRPO_POLICY_OPENAI) {
        policy *pol;
        ep_config ep;
        if ((rc = openai_over(&pol, &ep, t, temperature, err)) == 0) {
            grpo_run_env env = run_env(t);
            env.ep = &ep;
            rc = grpo_evaluate_tasks(res, NULL, &env, pol, temperature, (const task *const *)sel.v, sel.n, 1, seeds,
                                     temperature, out_jsonl, err);
            pol_free(pol);
        }
    } else {
        rc = evaluate_model(res, NULL, t, m, (const task *const *)sel.v, sel.n, 1, seeds, temperature, out_jsonl,
                            err);
    }
    task_select_dispose(&sel);
    return rc;
}

/* The records of an evaluation file, one string per line. */
static int read_records(char ***recs, size_t *n, const char *path, char *err)
{
    *recs = NULL;
    *n = 0;
    char *text = NULL;
    size_t len = 0;
    int rc = fs_read_file(&text, &len, path, RL_REPORT_FILE_MAX, err);
    if (rc < 0)
        return rc;
    size_t cap = 0;
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (VEC_GROW(*recs, cap, *n + 1, RL_GRPO_EVAL_EPISODES_MAX) < 0) {
            rc = rl_err(err, RL_ELIMIT, "%s: more than %d records, or out of memory", path, RL_GRPO_EVAL_EPISODES_MAX);
            break;
        }
        if (!((*recs)[*n] = strdup(line))) {
            rc = rl_err(err, RL_ENOMEM, "grpo: out of memory");
            break;
        }
        (*n)++;
    }
    free(text);
    return rc;
}

static void free_records(char **recs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(recs[i]);
    free(recs);
}

/* Every eval_every steps: evaluation on the held-out tasks (its records,
 * for the checkpoint's profile, in *recs); rollback when it drops more
 * than rollback_drop below the best. */
static int maybe_eval(grpo_trainer *t, int *evaluated, char ***recs, size_t *nrec, char *err)
{
    *evaluated = 0;
    *recs = NULL;
    *nrec = 0;
    if (t->cfg.eval_every <= 0 || t->step % t->cfg.eval_every != 0)
        return 0;
    char path[GRPO_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/eval-step-%08ld.jsonl", t->run_dir, t->step);
    grpo_eval_result r;
    int rc = grpo_evaluate(&r, t, NULL, t->cfg.eval_tasks, t->cfg.eval_seeds, t->cfg.eval_temperature, path, err);
    if (rc < 0)
        return rc;
    *evaluated = 1;
    if (r.episodes > 0 && (rc = read_records(recs, nrec, path, err)) < 0)
        return rc;
    cJSON *e = cJSON_CreateObject();
    int openai = t->cfg.eval_policy == GRPO_POLICY_OPENAI;
    cJSON_AddStringToObject(e, "event", "eval");
    cJSON_AddStringToObject(e, "policy", openai ? "openai" : "model");
    cJSON_AddNumberToObject(e, "step", (double)t->step);
    cJSON_AddNumberToObject(e, "episodes", (double)r.episodes);
    cJSON_AddNumberToObject(e, "pass_rate", r.pass_rate);
    cJSON_AddNumberToObject(e, "tool_success", r.tool_success);
    cJSON_AddNumberToObject(e, "mean_turns", r.mean_turns);
    cJSON_AddNumberToObject(e, "mean_policy_tokens", r.mean_policy_tokens);
    cJSON_AddNumberToObject(e, "best", t->best_eval);
    rc = grpo_log_event(t, e, err);
    cJSON_Delete(e);
    if (rc < 0)
        return rc;
    say(t, RL_LOG_INFO, "eval step %ld%s: pass %.3f (%zu/%zu) tool %.2f turns %.1f (best %.3f)", t->step,
        openai ? " (openai policy)" : "", r.pass_rate, r.passed, r.episodes, r.tool_success, r.mean_turns,
        t->best_eval);
    if (openai)
        return 0; /* another model's pass rate: no rollback, no best checkpoint */
    if (t->best_eval >= 0 && r.pass_rate < t->best_eval - t->cfg.rollback_drop) {
        char why[256];
        snprintf(why, sizeof why, "evaluation pass rate %.3f fell below the best %.3f by more than %.3f", r.pass_rate,
                 t->best_eval, t->cfg.rollback_drop);
        *evaluated = 0; /* no checkpoint of the weights rolled back from */
        free_records(*recs, *nrec);
        *recs = NULL;
        *nrec = 0;
        return rollback(t, why, err);
    }
    if (r.pass_rate > t->best_eval) {
        t->best_eval = r.pass_rate;
        t->best_step = t->step;
    }
    return 0;
}

/* After a "compare" run: both modes' figures, logged and as an event. */
static int report_compare(grpo_trainer *t, char *err)
{
    /* per mode: wall time per step, slot utilization (time-weighted), and
     * episodes trained on per second -- async steps may train on fewer
     * groups than sync ones, so the last is the fair figure */
    double w[2], u[2], eps[2];
    for (int k = 0; k < 2; k++) {
        w[k] = t->cmp_wall[k] / (double)t->cmp_steps[k];
        u[k] = t->cmp_wall[k] > 0 ? t->cmp_busy[k] / t->cmp_wall[k] : 0;
        eps[k] = t->cmp_wall[k] > 0 ? t->cmp_eps[k] / t->cmp_wall[k] : 0;
    }
    /* what the model of common/stats predicts from the same episodes'
     * durations (it ignores training time and batching effects) */
    double m1 = stats_utilization(t->durs.v, t->durs.n, (size_t)t->max_active, 1.0, RL_REPORT_UTIL_STEPS);
    double ml = stats_utilization(t->durs.v, t->durs.n, (size_t)t->max_active, t->cfg.lambda, RL_REPORT_UTIL_STEPS);
    say(t, RL_LOG_INFO,
        "rollout modes: sync %ld steps, %.1f s/step, slot utilization %.2f, %.3f episodes/s; "
        "async (lambda %.2f) %ld steps, %.1f s/step, utilization %.2f, %.3f episodes/s "
        "(stats_utilization on these episodes: %.2f / %.2f)",
        t->cmp_steps[0], w[0], u[0], eps[0], t->cfg.lambda, t->cmp_steps[1], w[1], u[1], eps[1], m1, ml);
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "event", "compare");
    cJSON_AddNumberToObject(e, "lambda", t->cfg.lambda);
    cJSON_AddNumberToObject(e, "model_sync_util", m1);
    cJSON_AddNumberToObject(e, "model_async_util", ml);
    const char *name[2] = {"sync", "async"};
    for (int k = 0; k < 2; k++) {
        cJSON *m = cJSON_AddObjectToObject(e, name[k]);
        cJSON_AddNumberToObject(m, "steps", (double)t->cmp_steps[k]);
        cJSON_AddNumberToObject(m, "step_s", w[k]);
        cJSON_AddNumberToObject(m, "util", u[k]);
        cJSON_AddNumberToObject(m, "episodes_per_s", eps[k]);
    }
    int rc = grpo_log_event(t, e, err);
    cJSON_Delete(e);
    return rc;
}

/* ---- the loop --------------------------------------------------------------------------- */

int grpo_train(grpo_trainer *t, long until, char *err)
{
    if (until <= 0 || until > t->cfg.steps)
        until = t->cfg.steps;
    int rollbacks = 0;
    while (t->step < until) {
        /* roll out, score, update */
        grpo_step_metrics sm;
        memset(&sm, 0, sizeof sm);
        sm.step = t->step + 1;
        int as = use_async(t), nonfinite = 0;
        sm.mode = as ? "async" : "sync";
        int rc = as ? step_async(t, &sm, &nonfinite, err) : step_sync(t, &sm, &nonfinite, err);
        if (rc < 0 && !nonfinite)
            return rc;
        if (nonfinite) {
            if (++rollbacks > 3)
                return rc; /* the same step keeps failing: stop, the error says why */
            char why[RL_ERR_MAX];
            snprintf(why, sizeof why, "%s", err);
            if ((rc = rollback(t, why, err)) < 0 || (dp_size() > 1 && (rc = sync_from_root(t, err)) < 0))
                return rc;
            continue; /* the step is redone from the restored weights */
        }
        rollbacks = 0;
        t->step++;
        /* report */
        if ((rc = log_step(t, &sm, err)) < 0)
            return rc;
        t->cmp_wall[as] += sm.step_s;
        t->cmp_busy[as] += sm.util * sm.step_s;
        t->cmp_eps[as] += (double)sm.episodes;
        t->cmp_steps[as]++;
        /* evaluate, checkpoint */
        int evaluated = 0;
        char **erecs = NULL;
        size_t nerec = 0;
        long rb = t->rollbacks_done;
        if (t->root && (rc = maybe_eval(t, &evaluated, &erecs, &nerec, err)) < 0) {
            free_records(erecs, nerec);
            return rc;
        }
        if (dp_size() > 1) {
            /* rank 0 evaluates; a rollback it took reaches every rank */
            long rolled = t->rollbacks_done - rb;
            if ((rc = dp_bcast(&rolled, sizeof rolled, 0, err)) < 0 ||
                (rolled && (rc = sync_from_root(t, err)) < 0) ||
                ((t->step % RL_GRPO_DP_HASH_EVERY == 0 || t->step == until) && (rc = check_same_weights(t, err)) < 0)) {
                free_records(erecs, nerec);
                return rc;
            }
        }
        if (evaluated || (t->cfg.ckpt_every > 0 && t->step % t->cfg.ckpt_every == 0) || t->step == until)
            rc = evaluated ? checkpoint(t, erecs, nerec, err) : checkpoint(t, t->last_recs, t->n_last, err);
        free_records(erecs, nerec);
        if (rc < 0 || (rc = fleet_sync(t, err)) < 0)
            return rc;
    }
    if (t->cmp_steps[0] && t->cmp_steps[1])
        return report_compare(t, err);
    return 0;
}

/* ---- flywheel: collection and fine-tuning ------------------------------------------------ */

int grpo_collect(grpo_episodes *out, grpo_trainer *t, grpo_policy_kind pk, const char *selector, int seeds,
                 uint64_t seed0, double temperature, char *err)
{
    memset(out, 0, sizeof *out);
    task_set sel;
    int rc = task_select(&sel, &t->data.all, selector, err);
    if (rc < 0)
        return rc;
    grpo_run_env env = run_env(t);
    if (pk == GRPO_POLICY_OPENAI) {
        policy *pol;
        ep_config ep;
        if ((rc = openai_over(&pol, &ep, t, temperature, err)) == 0) {
            env.ep = &ep;
            rc = grpo_collect_tasks(out, &env, pol, temperature, (const task *const *)sel.v, sel.n, seeds, seed0,
                                    temperature, err);
            pol_free(pol);
        }
    } else {
        rc = grpo_collect_tasks(out, &env, t->pol, t->cfg.temperature, (const task *const *)sel.v, sel.n, seeds,
                                seed0, temperature, err);
    }
    task_select_dispose(&sel);
    return rc;
}

int grpo_sft(double *loss, grpo_trainer *t, char *const *records, size_t n, int epochs, double lr, char *err)
{
    int rc = grpo_update_sft(loss, t->m, &t->cfg, records, n, epochs, lr, err);
    if (rc == 0)
        weights_changed(t);
    return rc;
}

/* ---- the experiment report ---------------------------------------------------------------- */

int grpo_final_report(grpo_trainer *t, char *err)
{
    const grpo_config *c = &t->cfg;
    if (c->n_final == 0)
        return rl_err(err, RL_EINVAL, "config: final.sets: no held-out set to report on");
    int rc = fs_mkdirs(c->results, err);
    if (rc < 0)
        return rc;
    /* the SFT policy: the run's starting weights */
    char path[GRPO_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/ckpt/step-00000000/model.safetensors", t->run_dir);
    model_opts mo;
    model_opts_default(&mo);
    mo.n_threads = c->threads;
    model *sft;
    if ((rc = model_new(&sft, &t->m->cfg, &mo, err)) < 0)
        return rc;
    model_set_active_vocab(sft, t->m->n_active);
    if ((rc = grpo_load_weights(sft, path, err)) < 0) {
        model_free(sft);
        return rc;
    }
    grpo_set_result sr[GRPO_FINAL_SETS_MAX];
    memset(sr, 0, sizeof sr);
    for (int i = 0; i < c->n_final && rc == 0; i++) {
        const grpo_final_set *fs = &c->final_sets[i];
        task_set sel;
        if ((rc = grpo_report_select(&sel, &t->data.all, fs, err)) < 0)
            break;
        int seeds = (int)((fs->episodes + sel.n - 1) / sel.n);
        sr[i].set = fs;
        sr[i].tasks = sel.n;
        sr[i].seeds = seeds;
        sr[i].n = sel.n * (size_t)seeds;
        size_t *passed[2] = {calloc(sel.n, sizeof(size_t)), calloc(sel.n, sizeof(size_t))};
        if (!passed[0] || !passed[1])
            rc = rl_err(err, RL_ENOMEM, "report: out of memory");
        for (int k = 0; k < 2 && rc == 0; k++) {
            grpo_eval_result *r = k ? &sr[i].rl : &sr[i].sft;
            char out[GRPO_PATH_MAX + 200];
            snprintf(out, sizeof out, "%s/%s-%s-%s.jsonl", c->results, c->results_name, fs->name, k ? "rl" : "sft");
            fs_remove_tree(out, NULL); /* a rerun replaces the records */
            rc = evaluate_model(r, passed[k], t, k ? t->m : sft, (const task *const *)sel.v, sel.n, c->final_seed,
                                seeds, c->eval_temperature, out, err);
            if (rc == 0)
                say(t, RL_LOG_INFO, "final %s %s: pass %.3f (%zu/%zu)", fs->name, k ? "RL" : "SFT", r->pass_rate,
                    r->passed, r->episodes);
        }
        if (rc == 0 && (rc = grpo_compare_by_task(&sr[i].cmp, &sel, passed[0], passed[1], seeds)) < 0)
            rl_err(err, rc, "report: out of memory");
        free(passed[0]);
        free(passed[1]);
        task_select_dispose(&sel);
    }
    model_free(sft);
    if (rc < 0)
        return rc;
    return grpo_report_write(c, t->run_dir, t->step, sr, c->n_final, err);
}

/* ---- open / close ------------------------------------------------------------------------- */

static int open_model(grpo_trainer *t, const char *weights, char *err)
{
    const grpo_config *c = &t->cfg;
    model_opts mo;
    model_opts_default(&mo);
    mo.n_threads = c->threads;
    model_meta meta;
    model_meta_default(&meta);
    int rc;
    if (c->init[0]) {
        if ((rc = model_load(&t->m, &meta, c->init, &mo, err)) < 0)
            return rc;
        t->init_meta = meta;
    } else {
        if ((rc = model_new(&t->m, &c->model, &mo, err)) < 0)
            return rc;
        model_random_init(t->m, (uint64_t)c->init_seed);
    }
    const char *tp = c->tokenizer[0] ? c->tokenizer : meta.tokenizer;
    if (!tp[0])
        return rl_err(err, RL_EINVAL, "config: tokenizer: the checkpoint names none, expected a tokenizer path");
    snprintf(t->tok_path, sizeof t->tok_path, "%s", tp);
    if ((rc = tok_load(&t->tok, tp, err)) < 0)
        return rc;
    if (tok_vocab_size(t->tok) > t->m->cfg.vocab)
        return rl_err(err, RL_EINVAL, "tokenizer %s: %d ids, the model has only %d", tp, tok_vocab_size(t->tok),
                      t->m->cfg.vocab);
    model_set_active_vocab(t->m, tok_vocab_size(t->tok)); /* padded rows get no probability */
    if (c->max_context_tokens + c->max_reply_tokens > t->m->cfg.max_seq)
        return rl_err(err, RL_EINVAL,
                      "config: episode.max_context_tokens + max_reply_tokens is %d, the model's context is %d",
                      c->max_context_tokens + c->max_reply_tokens, t->m->cfg.max_seq);
    if (weights && (rc = grpo_load_weights(t->m, weights, err)) < 0)
        return rc;
    return 0;
}

static int open_reference(grpo_trainer *t, int resuming, char *err)
{
    if (!(t->cfg.loss.kl_coef > 0))
        return 0;
    char path[GRPO_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/reference.safetensors", t->run_dir);
    model_opts mo;
    model_opts_default(&mo);
    mo.n_threads = t->cfg.threads;
    int rc = model_new(&t->ref, &t->m->cfg, &mo, err);
    if (rc < 0)
        return rc;
    model_set_active_vocab(t->ref, t->m->n_active);
    if (resuming)
        return grpo_load_weights(t->ref, path, err);
    memcpy(t->ref->params, t->m->params, t->m->n_params * sizeof(float));
    if (!t->root)
        return 0; /* rank 0 writes the run's files */
    model_meta meta;
    model_meta_default(&meta);
    snprintf(meta.tokenizer, sizeof meta.tokenizer, "%s", t->tok_path);
    return model_save(t->ref, path, &meta, err);
}

static int open_optimizer(grpo_trainer *t, char *err)
{
    const model *m = t->m;
    opt_span *sp = calloc((size_t)m->n_tensors, sizeof *sp);
    if (!sp)
        return rl_err(err, RL_ENOMEM, "grpo: out of memory");
    for (int i = 0; i < m->n_tensors; i++) {
        sp[i].offset = m->tensors[i].offset;
        sp[i].n = m->tensors[i].numel;
        sp[i].decay = !m->tensors[i].is_norm && (t->cfg.decay_embed || !m->tensors[i].is_embed);
    }
    opt_config oc = t->cfg.optim;
    oc.total_steps = t->cfg.steps;
    int rc = opt_new(&t->opt, &oc, m->n_params, sp, m->n_tensors, err);
    free(sp);
    return rc;
}

/* The episode options of the config; the template resolved once (the
 * config's, else the one the init checkpoint records, else qwen3-xml). */
static int episode_config(grpo_trainer *t, char *err)
{
    const grpo_config *c = &t->cfg;
    ep_config *e = &t->ep;
    ep_config_default(e);
    e->policy = "grpo-live";
    e->prompt = c->prompt;
    e->prompts_dir = c->prompts_dir;
    e->think = c->think;
    e->edit_hints = c->edit_hints;
    e->integrity_flag_only = c->integrity_flag_only;
    e->test_limits.mem_mb = c->test_mem_mb;
    e->test_limits.procs = c->test_procs;
    e->test_limits.disk_mb = c->test_disk_mb;
    e->history_keep = c->history_keep;
    e->max_turns = c->max_turns;
    e->tail_share = c->tail_share;
    e->tail_min_turns = c->tail_min_turns;
    e->tail_max_turns = c->tail_max_turns;
    e->max_context_tokens = c->max_context_tokens;
    e->max_wall_s = c->max_wall_s;
    e->max_reply_tokens = c->max_reply_tokens;
    e->temperature = c->temperature;
    e->top_p = c->top_p;
    e->obs_budget = (size_t)c->obs_budget;
    e->shaping = c->shaping;
    e->tok = t->tok;
    tpl_kind k = TPL_QWEN3_XML;
    if (c->chat_template[0]) {
        char terr[RL_ERR_MAX];
        if (tpl_kind_parse(&k, c->chat_template, terr) < 0)
            return rl_err(err, RL_EINVAL, "grpo: episode.template: %s", terr);
    } else if (c->init[0]) {
        char pol[GRPO_PATH_MAX + 8];
        snprintf(pol, sizeof pol, "model:%s", c->init);
        ep_config probe = *e;
        probe.policy = pol;
        int rc = ep_config_template(&probe, err);
        if (rc < 0)
            return rc;
        k = (tpl_kind)rc;
    }
    e->chat_template = (int)k;
    return 0;
}

int grpo_open(grpo_trainer **out, const grpo_config *cfg, const char *resume_dir, const grpo_opts *opts, char *err)
{
    *out = NULL;
    grpo_trainer *t = calloc(1, sizeof *t);
    if (!t)
        return rl_err(err, RL_ENOMEM, "grpo: out of memory");
    t->cfg = *cfg;
    if (opts)
        t->opts = *opts;
    else
        grpo_opts_default(&t->opts);
    t->best_eval = -1;
    t->best_step = -1;
    t->last_ckpt = -1;
    t->t_open = clk_s();
    t->root = dp_rank() == 0;
    t->max_active = cfg->max_active > 0 ? cfg->max_active : cfg->tasks_per_step * cfg->group_size;
    int ranks = dp_size();
    if (ranks > 1 && cfg->fleet_generate[0]) {
        free(t);
        return rl_err(err, RL_EINVAL, "fleet: data-parallel training (%d ranks) with a fleet is not supported", ranks);
    }
    if (ranks > 1) {
        if (cfg->mode != GRPO_SYNC) {
            free(t);
            return rl_err(err, RL_EINVAL,
                          "rollout.mode: data-parallel training (%d ranks) runs the \"sync\" mode only", ranks);
        }
        /* each rank runs its share of the slots on its share of the machine */
        t->max_active = (t->max_active + ranks - 1) / ranks;
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        int per = (int)(ncpu > 0 ? ncpu : 1) / dp_local_size();
        if (t->cfg.threads == 0)
            t->cfg.threads = per > 0 ? per : 1;
        if (t->cfg.tool_threads == 0)
            t->cfg.tool_threads = per > 0 ? per : 1;
    }
    if (t->max_active > RL_ROLLOUT_ACTIVE_MAX)
        t->max_active = RL_ROLLOUT_ACTIVE_MAX;
    int rc;
    char ckpt[GRPO_PATH_MAX + 64] = "";
    if (resume_dir) {
        if ((rc = grpo_ckpt_resolve(t->run_dir, sizeof t->run_dir, ckpt, sizeof ckpt, resume_dir, err)) < 0)
            goto fail;
        /* the run's own config must be the one given, except for what does
         * not change training: where things go, reports, the flywheel */
        char path[GRPO_PATH_MAX + 32], what[256];
        snprintf(path, sizeof path, "%s/config.json", t->run_dir);
        grpo_config saved;
        grpo_config_default(&saved);
        if ((rc = grpo_config_load(&saved, path, err)) < 0)
            goto fail;
        grpo_config given = *cfg;
        grpo_config_carry_free(&given, &saved);
        if (!grpo_config_same(&saved, &given, what, sizeof what)) {
            rc = rl_err(err, RL_EINVAL, "--resume %s: the config differs from the run's config.json at %s", resume_dir,
                        what);
            goto fail;
        }
    } else if (!t->root) {
        snprintf(t->run_dir, sizeof t->run_dir, "%s", cfg->out); /* rank 0 writes the run's files */
    } else {
        snprintf(t->run_dir, sizeof t->run_dir, "%s", cfg->out);
        char path[GRPO_PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/config.json", t->run_dir);
        if (access(path, F_OK) == 0) {
            rc = rl_err(err, RL_EINVAL, "%s: a run is already there (use --resume %s, or another out)", t->run_dir,
                        t->run_dir);
            goto fail;
        }
        if ((rc = fs_mkdirs(t->run_dir, err)) < 0)
            goto fail;
        char *json = grpo_config_to_json(cfg);
        if (!json) {
            rc = rl_err(err, RL_ENOMEM, "grpo: out of memory");
            goto fail;
        }
        rc = fs_write_atomic(path, json, strlen(json), err);
        free(json);
        if (rc < 0)
            goto fail;
    }
    snprintf(t->metrics_path, sizeof t->metrics_path, "%s/metrics.jsonl", t->run_dir);
    snprintf(t->records_path, sizeof t->records_path, "%s/records.jsonl", t->run_dir);
    if ((rc = grpo_data_init(&t->data, &t->cfg, err)) < 0)
        goto fail;
    char wpath[GRPO_PATH_MAX + 96];
    snprintf(wpath, sizeof wpath, "%s/model.safetensors", ckpt);
    if ((rc = open_model(t, resume_dir ? wpath : NULL, err)) < 0 || (rc = open_reference(t, resume_dir != NULL, err)) < 0 ||
        (rc = open_optimizer(t, err)) < 0)
        goto fail;
    if (resume_dir) {
        snprintf(wpath, sizeof wpath, "%s/optim.safetensors", ckpt);
        grpo_ckpt_state st;
        if ((rc = opt_load(t->opt, wpath, err)) < 0 || (rc = grpo_ckpt_read_state(&st, ckpt, cfg->seed, err)) < 0)
            goto fail;
        t->step = st.step;
        t->data.data_pos = st.data_pos;
        t->data.groups_drawn = st.groups_drawn;
        t->best_eval = st.best_eval;
        t->best_step = st.best_step;
        t->last_ckpt = t->step;
        t->opt->step = t->step;
    }
    if ((rc = episode_config(t, err)) < 0)
        goto fail;
    if ((rc = policy_over(&t->pol, t, t->m, "grpo-live", err)) < 0)
        goto fail;
    rollout_opts ro;
    rollout_opts_default(&ro);
    ro.ws_root = cfg->ws_root[0] ? cfg->ws_root : NULL;
    ro.max_active = t->max_active;
    /* each rank of a machine its own work trees (evaluation: the next ones) */
    ro.slot_base = dp_local_rank() * 2 * t->max_active;
    ro.threads = t->cfg.tool_threads;
    ro.log = cfg->quiet ? NULL : t->opts.log; /* episodes that could not start */
    ro.log_ctx = t->opts.log_ctx;
    if (cfg->fleet_generate[0]) {
        /* generation on the fleet's grpo serve instances in completions
         * mode, episodes on its harness serve instances */
        if ((rc = grpo_fleet_new(&t->fleet, cfg, t->run_dir, err)) < 0)
            goto fail;
        t->fleet_ep = t->ep;
        t->fleet_ep.policy = "openai";
        t->fleet_ep.openai = (ep_openai){.base_url = cfg->fleet_generate,
                                         .model = cfg->fleet_model,
                                         .api = "completions",
                                         .api_key_env = cfg->fleet_token_env[0] ? cfg->fleet_token_env : NULL,
                                         .tokenizer = t->tok_path,
                                         .max_inflight = cfg->fleet_max_inflight ? cfg->fleet_max_inflight
                                                                                 : t->max_active,
                                         .timeout_ms = cfg->fleet_timeout_ms};
        pol_env pe;
        ep_config_pol_env(&pe, &t->fleet_ep);
        pe.log = t->opts.log;
        pe.log_ctx = t->opts.log_ctx;
        if ((rc = pol_open(&t->fleet_pol, "openai", &pe, err)) < 0)
            goto fail;
        ro.env_urls = grpo_fleet_env_urls(t->fleet, &ro.n_env);
        ro.env_token = cfg->fleet_token_env[0] ? getenv(cfg->fleet_token_env) : NULL;
        ro.env_timeout_ms = cfg->fleet_timeout_ms;
    }
    if ((rc = rollout_new(&t->ro, t->fleet_pol ? t->fleet_pol : t->pol, &ro, err)) < 0)
        goto fail;
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "event", resume_dir ? "resume" : "start");
    cJSON_AddNumberToObject(e, "step", (double)t->step);
    cJSON_AddNumberToObject(e, "params", (double)t->m->n_params);
    cJSON_AddNumberToObject(e, "train_tasks", (double)t->data.train.n);
    cJSON_AddNumberToObject(e, "train_strata", (double)t->data.strata.n);
    rc = grpo_log_event(t, e, err);
    cJSON_Delete(e);
    if (rc < 0)
        goto fail;
    if (!resume_dir && (rc = checkpoint(t, NULL, 0, err)) < 0) /* step 0: what rollback can return to */
        goto fail;
    if ((rc = check_same_weights(t, err)) < 0)
        goto fail;
    *out = t;
    return 0;
fail:
    grpo_close(t);
    return rc;
}

void grpo_close(grpo_trainer *t)
{
    if (!t)
        return;
    grpo_async_free(t->as);
    rollout_free(t->ro);
    pol_free(t->fleet_pol);
    grpo_fleet_free(t->fleet);
    pol_free(t->pol);
    opt_free(t->opt);
    model_free(t->m);
    model_free(t->ref);
    tok_free(t->tok);
    grpo_data_dispose(&t->data);
    grpo_history_dispose(&t->hist);
    grpo_durs_dispose(&t->durs);
    free_records(t->last_recs, t->n_last);
    free(t);
}
