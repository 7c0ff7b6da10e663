/* grpo_config.c - the trainer's JSON config: defaults and strict parsing.
 *
 * Fields are described once, in a table of dotted names ("loss.eps_low"):
 * the parser walks the JSON objects and looks every member up in it, so an
 * unknown field, a wrong type or a value out of range is an error naming
 * the field; the writer prints the same table back (config.json of a run,
 * and the comparison a resume makes).
 */
#include "grpo/grpo.h"

#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "common/str.h"
#include "corpus/task.h"
#include "protocol/template.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void grpo_config_default(grpo_config *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->out, sizeof c->out, "runs/grpo");
    snprintf(c->tasks_dir, sizeof c->tasks_dir, "tasks");
    snprintf(c->repos_dir, sizeof c->repos_dir, "repos");
    snprintf(c->prompts_dir, sizeof c->prompts_dir, "prompts");
    snprintf(c->train_tasks, sizeof c->train_tasks, "split:train");
    model_config_default(&c->model);
    c->init_seed = 1;
    c->seed = 1;
    c->steps = 100;
    c->group_size = 8;
    c->tasks_per_step = 8;
    snprintf(c->prompt, sizeof c->prompt, "v2");
    c->think = 1;
    c->edit_hints = 1;
    c->history_keep = 1;
    c->max_turns = 12;
    c->max_context_tokens = 3072;
    c->max_reply_tokens = 512;
    c->max_wall_s = 600;
    c->obs_budget = RL_EP_OBS_BUDGET;
    c->temperature = 0.7;
    c->top_p = 1.0;
    ep_shaping_default(&c->shaping);
    c->std_mode = STATS_STD_POPULATION;
    c->adv_eps = 1e-6;
    c->adv_clip = 2.0;
    c->dynamic_sampling = 0;
    c->max_extra_groups = 8;
    grpo_loss_opts_default(&c->loss);
    c->updates_per_step = 1;
    opt_config_default(&c->optim);
    c->optim.lr = 2e-6f;
    c->optim.weight_decay = 0.0f;
    c->optim.warmup_steps = 5;
    c->optim.min_lr_ratio = 0.1f;
    c->micro_batch_tokens = 4096;
    c->records = 1;
    c->mode = GRPO_SYNC;
    c->lambda = 0.7;
    c->eval_every = 10;
    snprintf(c->eval_tasks, sizeof c->eval_tasks, "split:heldout");
    c->eval_seeds = 2;
    c->eval_temperature = 0.7;
    c->rollback_drop = 0.15;
    c->ckpt_every = 10;
    c->ckpt_keep = 3;
    c->warn_window = 5;
    c->warn_kl_jump = 4.0;
    c->warn_len_collapse = 0.4;
    c->warn_format_rise = 0.1;
    c->warn_integrity = 0.05;
    c->fw_probe_seeds = 2;
    c->fw_worst_tasks = 4;
    c->fw_samples = 8;
    c->fw_temperature = 1.0;
    c->fw_sft_epochs = 2;
    c->fw_sft_lr = 1e-5;
    c->fw_rl_steps = 5;
    c->fw_rounds = 1;
    snprintf(c->results, sizeof c->results, "runs");
    snprintf(c->results_name, sizeof c->results_name, "grpo-experiment");
    c->final_seed = 1;
}

/* ---- the field table ----------------------------------------------------------- */

typedef enum ftype { F_INT, F_LONG, F_DBL, F_FLT, F_BOOL, F_STR, F_ENUM } ftype;

typedef struct field {
    const char *name;
    ftype type;
    size_t off;
    size_t size;          /* F_STR: buffer size */
    double lo, hi;        /* numbers: inclusive range */
    const char *const *names; /* F_ENUM: value i is names[i] (NULL-terminated) */
    int inv;              /* F_BOOL stored inverted / F_ENUM offset */
} field;

#define OFF(f) offsetof(grpo_config, f)
#define STR(n, f) {n, F_STR, OFF(f), sizeof(((grpo_config *)0)->f), 0, 0, NULL, 0}
#define INT(n, f, lo, hi) {n, F_INT, OFF(f), 0, lo, hi, NULL, 0}
#define LNG(n, f, lo, hi) {n, F_LONG, OFF(f), 0, lo, hi, NULL, 0}
#define DBL(n, f, lo, hi) {n, F_DBL, OFF(f), 0, lo, hi, NULL, 0}
#define FLT(n, f, lo, hi) {n, F_FLT, OFF(f), 0, lo, hi, NULL, 0}
#define BOOL(n, f) {n, F_BOOL, OFF(f), 0, 0, 1, NULL, 0}
#define ENUM(n, f, names) {n, F_ENUM, OFF(f), 0, 0, 0, names, 0}

static const char *const HISTORY[] = {"drop", "keep", NULL};
static const char *const STD[] = {"population", "unbiased", "none", NULL};
static const char *const AGG[] = {"token_mean", "seq_mean", NULL};
static const char *const BALANCE[] = {"none", "mutation", "repo", NULL};
static const char *const MODE[] = {"sync", "async", "compare", NULL};
static const char *const INTEGRITY[] = {"enforce", "flag", NULL};
static const char *const POLICY[] = {"model", "openai", NULL};
static const char *const OAI_API[] = {"chat", "completions", NULL};

static const field FIELDS[] = {
    STR("init", init),
    STR("tokenizer", tokenizer),
    STR("out", out),
    STR("tasks_dir", tasks_dir),
    STR("repos_dir", repos_dir),
    STR("prompts_dir", prompts_dir),
    STR("ws_root", ws_root),
    STR("train_tasks", train_tasks),
    ENUM("balance", balance, BALANCE),
    INT("model.vocab", model.vocab, 1, RL_MODEL_VOCAB_MAX),
    INT("model.d_model", model.d_model, 1, RL_MODEL_DIM_MAX),
    INT("model.n_layer", model.n_layer, 1, RL_MODEL_LAYERS_MAX),
    INT("model.n_head", model.n_head, 1, RL_MODEL_HEADS_MAX),
    INT("model.n_kv_head", model.n_kv_head, 1, RL_MODEL_HEADS_MAX),
    INT("model.d_ff", model.d_ff, 1, RL_MODEL_DIM_MAX),
    INT("model.max_seq", model.max_seq, 2, RL_MODEL_SEQ_MAX),
    BOOL("model.qk_norm", model.qk_norm),
    FLT("model.rope_theta", model.rope_theta, 1, 1e9),
    FLT("model.norm_eps", model.norm_eps, 1e-12, 1e-1),
    LNG("init_seed", init_seed, 0, 9007199254740991.0),
    LNG("seed", seed, 0, 9007199254740991.0),
    LNG("steps", steps, 1, RL_GRPO_STEPS_MAX),
    INT("group_size", group_size, 2, RL_GRPO_GROUP_MAX),
    INT("tasks_per_step", tasks_per_step, 1, RL_GRPO_TASKS_PER_STEP_MAX),
    STR("episode.prompt", prompt),
    BOOL("episode.think", think),
    BOOL("episode.edit_hints", edit_hints),
    ENUM("episode.integrity", integrity_flag_only, INTEGRITY),
    LNG("episode.test_mem_mb", test_mem_mb, 0, RL_TESTRUN_MEM_MB_MAX),
    INT("episode.test_procs", test_procs, 0, 100000),
    LNG("episode.test_disk_mb", test_disk_mb, 0, SB_DISK_MB_HARD),
    ENUM("episode.history", history_keep, HISTORY),
    STR("episode.template", chat_template),
    INT("episode.max_turns", max_turns, 1, RL_EP_HARD_TURNS),
    DBL("episode.tail_share", tail_share, 0, 1),
    INT("episode.tail_min_turns", tail_min_turns, 0, RL_EP_HARD_TURNS),
    INT("episode.tail_max_turns", tail_max_turns, 0, RL_EP_HARD_TURNS),
    INT("episode.max_context_tokens", max_context_tokens, 16, RL_MODEL_SEQ_MAX),
    INT("episode.max_reply_tokens", max_reply_tokens, 1, RL_MODEL_SEQ_MAX),
    INT("episode.max_wall_s", max_wall_s, 0, 86400),
    LNG("episode.obs_budget", obs_budget, 64, RL_TOOL_READ_MAX),
    DBL("temperature", temperature, 0.05, 2.0),
    DBL("top_p", top_p, 0.01, 1.0),
    BOOL("reward.shaped", shaping.on),
    DBL("reward.pass", shaping.pass, -100, 100),
    DBL("reward.fail", shaping.fail, -100, 100),
    DBL("reward.tool_ok", shaping.tool_ok, -100, 100),
    DBL("reward.well_formed", shaping.well_formed, -100, 100),
    DBL("reward.identical", shaping.identical, -100, 100),
    DBL("reward.over_turn", shaping.over_turn, -100, 100),
    INT("reward.turn_limit", shaping.turn_limit, 0, RL_EP_HARD_TURNS),
    ENUM("advantage.std", std_mode, STD),
    DBL("advantage.eps", adv_eps, 0, 1),
    DBL("advantage.clip", adv_clip, 0, 1000),
    BOOL("dynamic_sampling.on", dynamic_sampling),
    INT("dynamic_sampling.max_extra_groups", max_extra_groups, 0, RL_GRPO_TASKS_PER_STEP_MAX * RL_GRPO_RESAMPLE_FACTOR_MAX),
    DBL("loss.eps_low", loss.eps_low, 0, 1),
    DBL("loss.eps_high", loss.eps_high, 0, 10),
    DBL("loss.dual_clip", loss.dual_clip, 0, 1000),
    DBL("loss.kl_coef", loss.kl_coef, 0, 100),
    ENUM("loss.aggregation", loss.agg, AGG),
    LNG("loss.max_staleness", loss.max_staleness, 0, 1000),
    INT("loss.updates_per_step", updates_per_step, 1, 64),
    FLT("optim.lr", optim.lr, 0, 1),
    FLT("optim.beta1", optim.beta1, 0, 0.999999),
    FLT("optim.beta2", optim.beta2, 0, 0.999999),
    FLT("optim.eps", optim.eps, 1e-12, 1),
    FLT("optim.weight_decay", optim.weight_decay, 0, 10),
    FLT("optim.grad_clip", optim.grad_clip, 0, 1e6),
    LNG("optim.warmup_steps", optim.warmup_steps, 0, RL_GRPO_STEPS_MAX),
    FLT("optim.min_lr_ratio", optim.min_lr_ratio, 0, 1),
    BOOL("optim.decay_embed", decay_embed),
    INT("train.micro_batch_tokens", micro_batch_tokens, 16, RL_GRPO_MICRO_TOKENS_MAX),
    INT("train.threads", threads, 0, RL_MODEL_THREADS_MAX),
    BOOL("train.records", records),
    ENUM("rollout.mode", mode, MODE),
    DBL("rollout.lambda", lambda, 0.01, 1),
    INT("rollout.max_active", max_active, 0, RL_ROLLOUT_ACTIVE_MAX),
    INT("rollout.tool_threads", tool_threads, 0, RL_ROLLOUT_THREADS_MAX),
    LNG("rollout.compare_sync_steps", compare_sync_steps, 0, RL_GRPO_STEPS_MAX),
    LNG("eval.every", eval_every, 0, RL_GRPO_STEPS_MAX),
    STR("eval.tasks", eval_tasks),
    INT("eval.seeds", eval_seeds, 1, RL_EXP_MAX_SEEDS),
    DBL("eval.temperature", eval_temperature, 0, 2),
    DBL("eval.rollback_drop", rollback_drop, 0, 1),
    ENUM("eval.policy", eval_policy, POLICY),
    LNG("checkpoint.every", ckpt_every, 0, RL_GRPO_STEPS_MAX),
    INT("checkpoint.keep", ckpt_keep, 1, RL_GRPO_KEEP_MAX),
    INT("warnings.window", warn_window, 1, 1000),
    DBL("warnings.kl_jump", warn_kl_jump, 1, 1e6),
    DBL("warnings.length_collapse", warn_len_collapse, 0, 1),
    DBL("warnings.format_rise", warn_format_rise, 0, 1),
    DBL("warnings.integrity_warn", warn_integrity, 0, 1),
    INT("flywheel.probe_seeds", fw_probe_seeds, 1, RL_EXP_MAX_SEEDS),
    INT("flywheel.worst_tasks", fw_worst_tasks, 1, RL_GRPO_TASKS_PER_STEP_MAX),
    INT("flywheel.samples", fw_samples, 1, RL_EXP_MAX_SEEDS),
    DBL("flywheel.temperature", fw_temperature, 0.05, 2),
    INT("flywheel.sft_epochs", fw_sft_epochs, 0, 1000),
    DBL("flywheel.sft_lr", fw_sft_lr, 0, 1),
    LNG("flywheel.rl_steps", fw_rl_steps, 0, RL_GRPO_STEPS_MAX),
    INT("flywheel.rounds", fw_rounds, 1, 1000),
    ENUM("flywheel.policy", fw_policy, POLICY),
    STR("openai.base_url", oai_base_url),
    STR("openai.model", oai_model),
    ENUM("openai.api", oai_api, OAI_API),
    STR("openai.api_key_env", oai_api_key_env),
    STR("openai.tokenizer", oai_tokenizer),
    INT("openai.max_inflight", oai_max_inflight, 0, HTTP_MANY_INFLIGHT_MAX),
    LNG("openai.timeout_ms", oai_timeout_ms, 0, 86400000),
    INT("openai.retries", oai_retries, 0, 11),
    STR("fleet.generate", fleet_generate),
    STR("fleet.env", fleet_env),
    STR("fleet.model", fleet_model),
    STR("fleet.token_env", fleet_token_env),
    STR("fleet.weights", fleet_weights),
    INT("fleet.max_inflight", fleet_max_inflight, 0, HTTP_MANY_INFLIGHT_MAX),
    LNG("fleet.timeout_ms", fleet_timeout_ms, 0, 86400000),
    STR("final.results", results),
    STR("final.name", results_name),
    INT("final.seed", final_seed, 1, RL_GRPO_FINAL_SEED_MAX),
    BOOL("quiet", quiet),
};
#define NFIELDS (sizeof FIELDS / sizeof FIELDS[0])

static const field *find_field(const char *name)
{
    for (size_t i = 0; i < NFIELDS; i++)
        if (!strcmp(FIELDS[i].name, name))
            return &FIELDS[i];
    return NULL;
}

/* 1 if some field lives under the object `prefix` ("loss" for loss.*). */
static int is_section(const char *prefix)
{
    size_t n = strlen(prefix);
    for (size_t i = 0; i < NFIELDS; i++)
        if (str_has_prefix(FIELDS[i].name, prefix) && FIELDS[i].name[n] == '.')
            return 1;
    return !strcmp(prefix, "final");
}

static int set_field(grpo_config *c, const field *f, const cJSON *v, const char *name, char *err)
{
    char *base = (char *)c + f->off;
    switch (f->type) {
    case F_STR:
        if (!cJSON_IsString(v))
            return rl_err(err, RL_EINVAL, "%s: %s: expected a string", name, f->name);
        if (strlen(v->valuestring) >= f->size)
            return rl_err(err, RL_EINVAL, "%s: %s: expected at most %zu bytes", name, f->name, f->size - 1);
        memcpy(base, v->valuestring, strlen(v->valuestring) + 1);
        return 0;
    case F_BOOL:
        if (!cJSON_IsBool(v))
            return rl_err(err, RL_EINVAL, "%s: %s: expected true or false", name, f->name);
        *(int *)base = cJSON_IsTrue(v);
        return 0;
    case F_ENUM: {
        if (cJSON_IsString(v))
            for (int i = 0; f->names[i]; i++)
                if (!strcmp(v->valuestring, f->names[i])) {
                    *(int *)base = i;
                    return 0;
                }
        char list[256] = "";
        for (int i = 0; f->names[i]; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s\"%s\"", i ? ", " : "", f->names[i]);
        return rl_err(err, RL_EINVAL, "%s: %s: expected one of %s", name, f->name, list);
    }
    default:
        break;
    }
    int integer = f->type == F_INT || f->type == F_LONG;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || (integer && v->valuedouble != floor(v->valuedouble)) ||
        v->valuedouble < f->lo || v->valuedouble > f->hi)
        return rl_err(err, RL_EINVAL, "%s: %s: expected %s in [%g, %g]", name, f->name,
                      integer ? "an integer" : "a number", f->lo, f->hi);
    double d = v->valuedouble;
    if (f->type == F_INT)
        *(int *)base = (int)d;
    else if (f->type == F_LONG)
        *(long *)base = (long)d;
    else if (f->type == F_DBL)
        *(double *)base = d;
    else
        *(float *)base = (float)d;
    return 0;
}

static int parse_final_sets(grpo_config *c, const cJSON *a, const char *name, char *err)
{
    if (!cJSON_IsArray(a))
        return rl_err(err, RL_EINVAL, "%s: final.sets: expected an array of {name, tasks, episodes}", name);
    c->n_final = 0;
    const cJSON *s;
    cJSON_ArrayForEach(s, a)
    {
        if (c->n_final >= GRPO_FINAL_SETS_MAX)
            return rl_err(err, RL_ELIMIT, "%s: final.sets: at most %d sets", name, GRPO_FINAL_SETS_MAX);
        grpo_final_set *fs = &c->final_sets[c->n_final];
        memset(fs, 0, sizeof *fs);
        int got = 0;
        if (!cJSON_IsObject(s))
            return rl_err(err, RL_EINVAL, "%s: final.sets[%d]: expected an object", name, c->n_final);
        const cJSON *m;
        cJSON_ArrayForEach(m, s)
        {
            if (!strcmp(m->string, "name") && cJSON_IsString(m) && m->valuestring[0] &&
                strlen(m->valuestring) < sizeof fs->name) {
                snprintf(fs->name, sizeof fs->name, "%s", m->valuestring);
                got |= 1;
            } else if (!strcmp(m->string, "tasks") && cJSON_IsString(m) && m->valuestring[0] &&
                       strlen(m->valuestring) < sizeof fs->tasks) {
                snprintf(fs->tasks, sizeof fs->tasks, "%s", m->valuestring);
                got |= 2;
            } else if (!strcmp(m->string, "episodes") && cJSON_IsNumber(m) && m->valuedouble >= 1 &&
                       m->valuedouble <= RL_GRPO_EVAL_EPISODES_MAX && m->valuedouble == floor(m->valuedouble)) {
                fs->episodes = (int)m->valuedouble;
                got |= 4;
            } else if (!strcmp(m->string, "split") && cJSON_IsString(m) &&
                       task_split_from_name(m->valuestring) >= 0) {
                snprintf(fs->split, sizeof fs->split, "%s", m->valuestring);
            } else if (strcmp(m->string, "name") && strcmp(m->string, "tasks") && strcmp(m->string, "episodes") &&
                       strcmp(m->string, "split")) {
                return rl_err(err, RL_EINVAL,
                              "%s: final.sets[%d].%s: unknown field (expected name, tasks, split, episodes)",
                              name, c->n_final, m->string);
            } else {
                return rl_err(err, RL_EINVAL,
                              "%s: final.sets[%d].%s: expected a non-empty string (name, tasks), \"train\" or "
                              "\"heldout\" (split) or an integer in [1, %d] (episodes)",
                              name, c->n_final, m->string, RL_GRPO_EVAL_EPISODES_MAX);
            }
        }
        if (got != 7)
            return rl_err(err, RL_EINVAL, "%s: final.sets[%d]: expected name, tasks and episodes", name, c->n_final);
        c->n_final++;
    }
    return 0;
}

/* A list of URLs (fleet.generate, fleet.env) into one comma-joined string. */
static int parse_url_list(char *out, size_t cap, const cJSON *a, const char *full, const char *name, char *err)
{
    size_t len = 0;
    int i = 0;
    const cJSON *e;
    out[0] = '\0';
    cJSON_ArrayForEach(e, a)
    {
        const char *u = cJSON_GetStringValue(e);
        if (!u || !u[0] || strchr(u, ',') || strpbrk(u, " \t\r\n"))
            return rl_err(err, RL_EINVAL, "%s: %s[%d]: expected a URL (no blanks or commas)", name, full, i);
        size_t l = strlen(u);
        if (len + l + 2 > cap)
            return rl_err(err, RL_ELIMIT, "%s: %s: expected at most %zu bytes of URLs", name, full, cap - 1);
        if (len)
            out[len++] = ',';
        memcpy(out + len, u, l + 1);
        len += l;
        i++;
    }
    if (!i)
        return rl_err(err, RL_EINVAL, "%s: %s: expected at least one URL", name, full);
    return 0;
}

static int parse_object(grpo_config *c, const cJSON *o, const char *prefix, const char *name, char *err)
{
    const cJSON *m;
    cJSON_ArrayForEach(m, o)
    {
        if (!prefix[0] && !strcmp(m->string, "extends"))
            continue; /* read by parse_text before the fields */
        char full[160];
        if (snprintf(full, sizeof full, "%s%s%s", prefix, prefix[0] ? "." : "", m->string) >= (int)sizeof full)
            return rl_err(err, RL_EINVAL, "%s: field name too long", name);
        const field *f = find_field(full);
        int rc;
        if (f && cJSON_IsArray(m) && (!strcmp(full, "fleet.generate") || !strcmp(full, "fleet.env"))) {
            rc = parse_url_list((char *)c + f->off, f->size, m, full, name, err);
        } else if (f) {
            rc = set_field(c, f, m, name, err);
        } else if (!strcmp(full, "final.sets")) {
            rc = parse_final_sets(c, m, name, err);
        } else if (is_section(full)) {
            if (!cJSON_IsObject(m))
                return rl_err(err, RL_EINVAL, "%s: %s: expected an object", name, full);
            rc = parse_object(c, m, full, name, err);
        } else {
            return rl_err(err, RL_EINVAL, "%s: %s: unknown field", name, full);
        }
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Checks that need several fields. */
static int check_config(const grpo_config *c, const char *name, char *err)
{
    if (!c->out[0])
        return rl_err(err, RL_EINVAL, "%s: out: expected a run directory", name);
    if (!c->init[0]) {
        char merr[RL_ERR_MAX];
        if (model_config_check(&c->model, merr) < 0)
            return rl_err(err, RL_EINVAL, "%s: model: %s", name, merr);
    }
    tpl_kind kind;
    char terr[RL_ERR_MAX];
    if (c->chat_template[0] && tpl_kind_parse(&kind, c->chat_template, terr) < 0)
        return rl_err(err, RL_EINVAL, "%s: episode.template: %s", name, terr);
    if (c->max_context_tokens + c->max_reply_tokens > RL_MODEL_SEQ_MAX)
        return rl_err(err, RL_EINVAL, "%s: episode.max_context_tokens + max_reply_tokens: expected at most %d", name,
                      RL_MODEL_SEQ_MAX);
    if (c->tail_share > 0 && (c->tail_min_turns < 1 || c->tail_max_turns < c->tail_min_turns))
        return rl_err(err, RL_EINVAL,
                      "%s: episode.tail_min_turns and tail_max_turns: expected 1 <= min <= max with a tail_share", name);
    if (c->loss.dual_clip != 0 && c->loss.dual_clip <= 1)
        return rl_err(err, RL_EINVAL, "%s: loss.dual_clip: expected 0 (off) or a number > 1", name);
    if ((long)c->tasks_per_step * c->group_size > RL_ROLLOUT_ACTIVE_MAX && c->max_active == 0)
        return rl_err(err, RL_EINVAL, "%s: tasks_per_step x group_size is %ld: set rollout.max_active (at most %d)",
                      name, (long)c->tasks_per_step * c->group_size, RL_ROLLOUT_ACTIVE_MAX);
    if ((c->eval_policy == GRPO_POLICY_OPENAI || c->fw_policy == GRPO_POLICY_OPENAI) &&
        (!c->oai_base_url[0] || !c->oai_model[0]))
        return rl_err(err, RL_EINVAL, "%s: openai.base_url and openai.model: expected both when %s is \"openai\"",
                      name, c->eval_policy == GRPO_POLICY_OPENAI ? "eval.policy" : "flywheel.policy");
    if ((c->fleet_generate[0] || c->fleet_env[0]) && (!c->fleet_generate[0] || !c->fleet_env[0] || !c->fleet_model[0]))
        return rl_err(err, RL_EINVAL, "%s: fleet: expected generate, env and model together", name);
    if (c->eval_every > 0 && !c->eval_tasks[0])
        return rl_err(err, RL_EINVAL, "%s: eval.tasks: expected a task selector", name);
    return 0;
}

static int load_file(grpo_config *c, const char *path, int depth, char *err);

/* A config may extend another ("extends": "base.json", a path relative to
 * the file that names it): the base's fields are applied first, then the
 * file's own, section by section and field by field; a list (final.sets)
 * is replaced whole. */
static int parse_text(grpo_config *c, const char *json, const char *name, int depth, char *err)
{
    cJSON *o = cJSON_Parse(json);
    if (!o)
        return rl_err(err, RL_EPARSE, "%s: not valid JSON", name);
    int rc = 0;
    const cJSON *ext = cJSON_GetObjectItemCaseSensitive(o, "extends");
    if (!cJSON_IsObject(o)) {
        rc = rl_err(err, RL_EINVAL, "%s: expected a JSON object", name);
    } else if (ext && (!cJSON_IsString(ext) || !ext->valuestring[0])) {
        rc = rl_err(err, RL_EINVAL, "%s: extends: expected the path of a config file", name);
    } else if (ext && depth >= RL_GRPO_CONFIG_EXTENDS_MAX) {
        rc = rl_err(err, RL_ELIMIT, "%s: extends: more than %d levels (a cycle?)", name, RL_GRPO_CONFIG_EXTENDS_MAX);
    } else if (ext) {
        char dir[GRPO_PATH_MAX], path[2 * GRPO_PATH_MAX + 2];
        fs_dirname(dir, sizeof dir, name);
        if (ext->valuestring[0] == '/')
            snprintf(path, sizeof path, "%s", ext->valuestring);
        else if (snprintf(path, sizeof path, "%s/%s", dir, ext->valuestring) >= (int)sizeof path)
            rc = rl_err(err, RL_EINVAL, "%s: extends: path too long", name);
        char inner[RL_ERR_MAX] = "";
        if (!rc && (rc = load_file(c, path, depth + 1, inner)) < 0)
            rl_err(err, rc, "%s: extends: %s", name, inner);
    }
    if (!rc)
        rc = parse_object(c, o, "", name, err);
    cJSON_Delete(o);
    return rc;
}

static int load_file(grpo_config *c, const char *path, int depth, char *err)
{
    char *text;
    int rc = fs_read_file(&text, NULL, path, RL_GRPO_CONFIG_MAX, err);
    if (rc < 0)
        return rc;
    rc = parse_text(c, text, path, depth, err);
    free(text);
    return rc;
}

int grpo_config_parse(grpo_config *c, const char *json, const char *name, char *err)
{
    int rc = parse_text(c, json, name, 0, err);
    return rc < 0 ? rc : check_config(c, name, err);
}

int grpo_config_load(grpo_config *c, const char *path, char *err)
{
    int rc = load_file(c, path, 0, err);
    return rc < 0 ? rc : check_config(c, path, err);
}

/* ---- writing --------------------------------------------------------------------- */

static cJSON *section(cJSON *root, const char *name, const char **leaf)
{
    cJSON *o = root;
    char part[64];
    const char *p = name, *dot;
    while ((dot = strchr(p, '.'))) {
        size_t n = (size_t)(dot - p) < sizeof part - 1 ? (size_t)(dot - p) : sizeof part - 1;
        memcpy(part, p, n);
        part[n] = '\0';
        cJSON *s = cJSON_GetObjectItemCaseSensitive(o, part);
        if (!s)
            s = cJSON_AddObjectToObject(o, part);
        o = s;
        p = dot + 1;
    }
    *leaf = p;
    return o;
}

char *grpo_config_to_json(const grpo_config *c)
{
    cJSON *root = cJSON_CreateObject();
    for (size_t i = 0; root && i < NFIELDS; i++) {
        const field *f = &FIELDS[i];
        const char *base = (const char *)c + f->off, *leaf;
        cJSON *o = section(root, f->name, &leaf);
        switch (f->type) {
        case F_STR: cJSON_AddStringToObject(o, leaf, base); break;
        case F_BOOL: cJSON_AddBoolToObject(o, leaf, *(const int *)base); break;
        case F_ENUM: cJSON_AddStringToObject(o, leaf, f->names[*(const int *)base]); break;
        case F_INT: cJSON_AddNumberToObject(o, leaf, *(const int *)base); break;
        case F_LONG: cJSON_AddNumberToObject(o, leaf, (double)*(const long *)base); break;
        case F_DBL: cJSON_AddNumberToObject(o, leaf, *(const double *)base); break;
        case F_FLT: {
            /* shortest text that reads back as the same float */
            char s[32];
            snprintf(s, sizeof s, "%.9g", (double)*(const float *)base);
            cJSON_AddItemToObject(o, leaf, cJSON_CreateRaw(s));
            break;
        }
        }
    }
    cJSON *fin = cJSON_GetObjectItemCaseSensitive(root, "final");
    cJSON *sets = cJSON_AddArrayToObject(fin, "sets");
    for (int i = 0; i < c->n_final; i++) {
        cJSON *s = cJSON_CreateObject();
        cJSON_AddStringToObject(s, "name", c->final_sets[i].name);
        cJSON_AddStringToObject(s, "tasks", c->final_sets[i].tasks);
        if (c->final_sets[i].split[0])
            cJSON_AddStringToObject(s, "split", c->final_sets[i].split);
        cJSON_AddNumberToObject(s, "episodes", c->final_sets[i].episodes);
        cJSON_AddItemToArray(sets, s);
    }
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    return s;
}

void grpo_config_carry_free(grpo_config *dst, const grpo_config *src)
{
    memcpy(dst->out, src->out, sizeof dst->out);
    dst->quiet = src->quiet;
    dst->records = src->records;
    dst->warn_window = src->warn_window;
    dst->warn_kl_jump = src->warn_kl_jump;
    dst->warn_len_collapse = src->warn_len_collapse;
    dst->warn_format_rise = src->warn_format_rise;
    dst->warn_integrity = src->warn_integrity;
    dst->fw_probe_seeds = src->fw_probe_seeds;
    dst->fw_worst_tasks = src->fw_worst_tasks;
    dst->fw_samples = src->fw_samples;
    dst->fw_sft_epochs = src->fw_sft_epochs;
    dst->fw_rounds = src->fw_rounds;
    dst->fw_rl_steps = src->fw_rl_steps;
    dst->fw_temperature = src->fw_temperature;
    dst->fw_sft_lr = src->fw_sft_lr;
    dst->fw_policy = src->fw_policy;
    /* where the openai server is and how to reach it */
    memcpy(dst->oai_base_url, src->oai_base_url, sizeof dst->oai_base_url);
    memcpy(dst->oai_model, src->oai_model, sizeof dst->oai_model);
    dst->oai_api = src->oai_api;
    memcpy(dst->oai_api_key_env, src->oai_api_key_env, sizeof dst->oai_api_key_env);
    memcpy(dst->oai_tokenizer, src->oai_tokenizer, sizeof dst->oai_tokenizer);
    dst->oai_max_inflight = src->oai_max_inflight;
    dst->oai_timeout_ms = src->oai_timeout_ms;
    dst->oai_retries = src->oai_retries;
    /* where the fleet's servers are */
    memcpy(dst->fleet_generate, src->fleet_generate, sizeof dst->fleet_generate);
    memcpy(dst->fleet_env, src->fleet_env, sizeof dst->fleet_env);
    memcpy(dst->fleet_model, src->fleet_model, sizeof dst->fleet_model);
    memcpy(dst->fleet_token_env, src->fleet_token_env, sizeof dst->fleet_token_env);
    memcpy(dst->fleet_weights, src->fleet_weights, sizeof dst->fleet_weights);
    dst->fleet_max_inflight = src->fleet_max_inflight;
    dst->fleet_timeout_ms = src->fleet_timeout_ms;
    memcpy(dst->final_sets, src->final_sets, sizeof dst->final_sets);
    dst->n_final = src->n_final;
    memcpy(dst->results, src->results, sizeof dst->results);
    memcpy(dst->results_name, src->results_name, sizeof dst->results_name);
    dst->final_seed = src->final_seed;
}
