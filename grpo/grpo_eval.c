/* grpo_eval.c - episodes outside training: evaluation on held-out tasks,
 * episode collection for the flywheel, and the behaviour profile written next to each checkpoint
 * (turn counts, tool-call mix, why episodes ended, the commonest
 * failures). */
#include "grpo/grpo_int.h"

#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "common/vec.h"
#include "policy/model_policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- generic episode runner (evaluation, collection) ------------------------------------ */

typedef struct run_ctx {
    grpo_ep_fn fn;
    void *user;
    int seeds;
} run_ctx;

static void run_done(void *user, long tag, char *rec, double reward)
{
    run_ctx *c = user;
    c->fn(c->user, (size_t)tag / (size_t)c->seeds, (int)(tag % c->seeds), rec, reward);
}

/* Steps the rollout until it is empty. */
static int drain(rollout *r, rollout_done_fn fn, void *user, char *err)
{
    while (rollout_pending(r) > 0) {
        int rc = rollout_step(r, fn, user, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int grpo_run_episodes(const grpo_run_env *env, policy *pol, double base_temperature, const task *const *tasks,
                      size_t n_tasks, int seeds, uint64_t seed0, double temperature, grpo_ep_fn fn, void *user,
                      char *err)
{
    rollout_opts ro;
    rollout_opts_default(&ro);
    ro.ws_root = env->ws_root;
    ro.max_active = env->max_active;
    ro.slot_base = env->max_active; /* training episodes use the slots below */
    ro.threads = env->tool_threads;
    rollout *r;
    int rc = rollout_new(&r, pol, &ro, err);
    if (rc < 0)
        return rc;
    ep_config ep = *env->ep;
    ep.temperature = temperature;
    int own_model = !ep_config_is_openai(env->ep); /* openai: its temperature is the policy's own */
    if (own_model)
        model_policy_set_temperature(pol, (float)temperature);
    rollout_set_version(r, env->version);
    for (size_t k = 0; k < n_tasks && rc == 0; k++)
        for (int s = 0; s < seeds && rc == 0; s++)
            rc = rollout_add(r, tasks[k], &ep, seed0 + (uint64_t)s, (long)(k * (size_t)seeds + (size_t)s), err);
    run_ctx c = {fn, user, seeds};
    if (rc == 0)
        rc = drain(r, run_done, &c, err);
    rollout_free(r);
    if (own_model)
        model_policy_set_temperature(pol, (float)base_temperature);
    return rc;
}

/* ---- evaluation --------------------------------------------------------------------- */

/* Episodes and passes that ended on one fix. */
typedef struct fix_count {
    uint64_t hash;
    size_t episodes, passed;
    char text[RL_GRPO_FIX_TEXT_MAX];
} fix_count;

typedef struct eval_acc {
    fix_count *fixes;    /* distinct fixes, up to RL_GRPO_FIXES_MAX */
    size_t n_fixes, cap_fixes, fixes_unranked;
    size_t n, passed, edits, edits_ok, edited, edited_passed;
    size_t edit_no_match, edit_not_unique, edit_no_change, edit_repaired;
    long calls, ok, turns, tokens;
    const char *out;
    size_t *task_passed;
    int write_failed;
} eval_acc;

/* Counts an episode's fix; past the cap (or out of memory) it counts as
 * distinct, unranked. */
static void fix_count_add(eval_acc *a, const grpo_traj *tr, int passed)
{
    size_t i = 0;
    while (i < a->n_fixes && a->fixes[i].hash != tr->fix_hash)
        i++;
    if (i == a->n_fixes) {
        if (VEC_GROW(a->fixes, a->cap_fixes, a->n_fixes + 1, RL_GRPO_FIXES_MAX) < 0) {
            a->fixes_unranked++;
            return;
        }
        memset(&a->fixes[i], 0, sizeof a->fixes[i]);
        a->fixes[i].hash = tr->fix_hash;
        memcpy(a->fixes[i].text, tr->fix, sizeof tr->fix);
        a->n_fixes++;
    }
    a->fixes[i].episodes++;
    a->fixes[i].passed += passed;
}

static void eval_done(void *user, size_t ti, int si, char *rec, double reward)
{
    eval_acc *a = user;
    (void)si;
    a->n++;
    if (rec) {
        cJSON *j = cJSON_Parse(rec);
        if (j) {
            grpo_traj tr;
            memset(&tr, 0, sizeof tr);
            grpo_traj_parse(&tr, j);
            a->passed += reward > 0.5;
            if (a->task_passed)
                a->task_passed[ti] += reward > 0.5;
            a->calls += tr.calls;
            a->ok += tr.calls_ok;
            a->turns += tr.turns;
            a->tokens += tr.policy_tokens;
            a->edits += (size_t)tr.edits;
            a->edits_ok += (size_t)tr.edits_ok;
            a->edited += tr.edits_ok > 0;
            a->edit_no_match += (size_t)tr.edit_no_match;
            a->edit_not_unique += (size_t)tr.edit_not_unique;
            a->edit_no_change += (size_t)tr.edit_no_change;
            a->edit_repaired += (size_t)tr.edit_repaired;
            a->edited_passed += tr.edits_ok > 0 && reward > 0.5;
            if (tr.fix_hash)
                fix_count_add(a, &tr, reward > 0.5);
            cJSON_Delete(j);
        }
        if (a->out && fs_append_record(a->out, rec, strlen(rec), NULL) < 0)
            a->write_failed = 1;
    }
    free(rec);
}

int grpo_evaluate_tasks(grpo_eval_result *res, size_t *task_passed, const grpo_run_env *env, policy *pol,
                        double base_temperature, const task *const *tasks, size_t n_tasks, int first_seed, int seeds,
                        double temperature, const char *out_jsonl, char *err)
{
    memset(res, 0, sizeof *res);
    if (task_passed)
        memset(task_passed, 0, n_tasks * sizeof *task_passed);
    eval_acc a = {0};
    a.out = out_jsonl;
    a.task_passed = task_passed;
    int rc = grpo_run_episodes(env, pol, base_temperature, tasks, n_tasks, seeds, (uint64_t)first_seed, temperature,
                               eval_done, &a, err);
    res->fixes_distinct = a.n_fixes + a.fixes_unranked;
    res->fix_episodes = a.fixes_unranked;
    for (size_t i = 0; i < a.n_fixes; i++) {
        const fix_count *f = &a.fixes[i];
        res->fix_episodes += f->episodes;
        if (f->episodes > res->top_fix_episodes ||
            (f->episodes == res->top_fix_episodes && f->passed > res->top_fix_passed)) {
            res->top_fix_episodes = f->episodes;
            res->top_fix_passed = f->passed;
            memcpy(res->top_fix, f->text, sizeof f->text);
        }
    }
    free(a.fixes);
    if (rc < 0)
        return rc;
    if (a.write_failed)
        return rl_err(err, RL_EIO, "%s: could not append the evaluation records", out_jsonl);
    res->episodes = a.n;
    res->passed = a.passed;
    res->pass_rate = a.n ? (double)a.passed / (double)a.n : 0;
    res->tool_success = a.calls ? (double)a.ok / (double)a.calls : 0;
    res->mean_turns = a.n ? (double)a.turns / (double)a.n : 0;
    res->mean_policy_tokens = a.n ? (double)a.tokens / (double)a.n : 0;
    res->edits = a.edits;
    res->edits_ok = a.edits_ok;
    res->edited = a.edited;
    res->edited_passed = a.edited_passed;
    res->edit_no_match = a.edit_no_match;
    res->edit_not_unique = a.edit_not_unique;
    res->edit_no_change = a.edit_no_change;
    res->edit_repaired = a.edit_repaired;
    return 0;
}

/* ---- collection ------------------------------------------------------------------------ */

typedef struct collect_acc {
    grpo_episodes *e;
    const task *const *tasks;
    size_t cap;
    int oom;
} collect_acc;

static void collect_done(void *user, size_t ti, int si, char *rec, double reward)
{
    collect_acc *a = user;
    (void)si;
    grpo_episodes *e = a->e;
    /* three parallel arrays: each grows from the same count by the same
     * rule, so they stay the same size */
    size_t ar = a->cap, aw = a->cap, at = a->cap;
    if (VEC_GROW(e->rec, ar, e->n + 1, RL_GRPO_EVAL_EPISODES_MAX) < 0 ||
        VEC_GROW(e->reward, aw, e->n + 1, RL_GRPO_EVAL_EPISODES_MAX) < 0 ||
        VEC_GROW(e->task, at, e->n + 1, RL_GRPO_EVAL_EPISODES_MAX) < 0) {
        a->oom = 1;
        free(rec);
        return;
    }
    a->cap = ar;
    e->rec[e->n] = rec;
    e->reward[e->n] = rec ? reward : 0;
    e->task[e->n] = a->tasks[ti]->instance_id;
    e->n++;
}

void grpo_episodes_dispose(grpo_episodes *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->rec[i]);
    free(e->rec);
    free(e->reward);
    free(e->task);
    memset(e, 0, sizeof *e);
}

int grpo_collect_tasks(grpo_episodes *out, const grpo_run_env *env, policy *pol, double base_temperature,
                       const task *const *tasks, size_t n_tasks, int seeds, uint64_t seed0, double temperature,
                       char *err)
{
    memset(out, 0, sizeof *out);
    collect_acc a = {out, tasks, 0, 0};
    int rc = grpo_run_episodes(env, pol, base_temperature, tasks, n_tasks, seeds, seed0, temperature, collect_done, &a,
                               err);
    if (rc == 0 && a.oom)
        rc = rl_err(err, RL_ELIMIT, "grpo collect: more than %d episodes, or out of memory",
                    RL_GRPO_EVAL_EPISODES_MAX);
    if (rc < 0)
        grpo_episodes_dispose(out);
    return rc;
}

/* ---- behaviour profile ------------------------------------------------------------------ */

typedef struct counter {
    char **key;
    long *n, *aux;
    size_t len, cap;
} counter;

static void count(counter *c, const char *key, long aux)
{
    char k[160];
    snprintf(k, sizeof k, "%s", key); /* keys are cut: a failure kind, not a log */
    for (size_t i = 0; i < c->len; i++)
        if (!strcmp(c->key[i], k)) {
            c->n[i]++;
            c->aux[i] += aux;
            return;
        }
    if (c->len >= RL_GRPO_PROFILE_KEYS_MAX) {
        if (strcmp(key, "other"))
            count(c, "other", aux);
        return;
    }
    /* parallel arrays, grown alike (see collect_done) */
    size_t ak = c->cap, an = c->cap, aa = c->cap;
    if (VEC_GROW(c->key, ak, c->len + 1, RL_GRPO_PROFILE_KEYS_MAX) < 0 ||
        VEC_GROW(c->n, an, c->len + 1, RL_GRPO_PROFILE_KEYS_MAX) < 0 ||
        VEC_GROW(c->aux, aa, c->len + 1, RL_GRPO_PROFILE_KEYS_MAX) < 0)
        return;
    c->cap = ak;
    if (!(c->key[c->len] = strdup(k)))
        return;
    c->n[c->len] = 1;
    c->aux[c->len] = aux;
    c->len++;
}

static void counter_free(counter *c)
{
    for (size_t i = 0; i < c->len; i++)
        free(c->key[i]);
    free(c->key);
    free(c->n);
    free(c->aux);
}

/* The top entries as [{key_name: key, "count": n}, ...]. */
static cJSON *top(const counter *c, size_t k, const char *key_name, const char *aux_name)
{
    cJSON *a = cJSON_CreateArray();
    unsigned char *used = calloc(c->len ? c->len : 1, 1);
    for (size_t r = 0; used && r < k && r < c->len; r++) {
        size_t best = c->len;
        for (size_t i = 0; i < c->len; i++)
            if (!used[i] && (best == c->len || c->n[i] > c->n[best]))
                best = i;
        used[best] = 1;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, key_name, c->key[best]);
        cJSON_AddNumberToObject(o, "count", (double)c->n[best]);
        if (aux_name)
            cJSON_AddNumberToObject(o, aux_name, (double)c->aux[best]);
        cJSON_AddItemToArray(a, o);
    }
    free(used);
    return a;
}

/* What went wrong in an episode that did not pass: the first failing
 * FAIL_TO_PASS test, else how it ended. */
static void failures_of(counter *fail, const cJSON *rec)
{
    const cJSON *turns = cJSON_GetObjectItemCaseSensitive(rec, "turns"), *turn;
    cJSON_ArrayForEach(turn, turns)
    {
        const cJSON *fe = cJSON_GetObjectItemCaseSensitive(turn, "format_error");
        if (cJSON_IsString(fe)) {
            char k[160];
            snprintf(k, sizeof k, "format error: %.100s", fe->valuestring);
            count(fail, k, 0);
        }
        const cJSON *c;
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(turn, "tool_calls"))
        {
            const cJSON *e = cJSON_GetObjectItemCaseSensitive(c, "error");
            const cJSON *nm = cJSON_GetObjectItemCaseSensitive(c, "name");
            if (cJSON_IsString(e)) {
                char k[160];
                size_t line = strcspn(e->valuestring, "\n");
                snprintf(k, sizeof k, "tool %s failed: %.*s", cJSON_IsString(nm) ? nm->valuestring : "?",
                         (int)(line < 90 ? line : 90), e->valuestring);
                count(fail, k, 0);
            }
        }
    }
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(rec, "reward");
    if (cJSON_IsNumber(r) && r->valuedouble > 0.5)
        return;
    const cJSON *tests = cJSON_GetObjectItemCaseSensitive(rec, "tests"), *tc;
    cJSON_ArrayForEach(tc, tests)
    {
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(tc, "status");
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(tc, "name");
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(tc, "f2p")) && cJSON_IsString(st) &&
            strcmp(st->valuestring, "pass") && cJSON_IsString(nm)) {
            const cJSON *task = cJSON_GetObjectItemCaseSensitive(rec, "task");
            char k[160];
            snprintf(k, sizeof k, "test still fails: %.60s %.60s", cJSON_IsString(task) ? task->valuestring : "?",
                     nm->valuestring);
            count(fail, k, 0);
            return;
        }
    }
    const cJSON *why = cJSON_GetObjectItemCaseSensitive(rec, "end_reason");
    char k[160];
    snprintf(k, sizeof k, "failed, ended by %.60s", cJSON_IsString(why) ? why->valuestring : "?");
    count(fail, k, 0);
}

cJSON *grpo_profile(char *const *recs, size_t n)
{
    counter turns = {0}, tools = {0}, ends = {0}, fail = {0};
    size_t eps = 0, passed = 0;
    for (size_t i = 0; i < n; i++) {
        cJSON *rec = recs[i] ? cJSON_Parse(recs[i]) : NULL;
        if (!rec)
            continue;
        eps++;
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(rec, "reward");
        passed += cJSON_IsNumber(r) && r->valuedouble > 0.5;
        const cJSON *tl = cJSON_GetObjectItemCaseSensitive(rec, "turns"), *turn;
        char k[32];
        snprintf(k, sizeof k, "%d", cJSON_GetArraySize(tl));
        count(&turns, k, 0);
        cJSON_ArrayForEach(turn, tl)
        {
            const cJSON *c;
            cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(turn, "tool_calls"))
            {
                const cJSON *nm = cJSON_GetObjectItemCaseSensitive(c, "name");
                count(&tools, cJSON_IsString(nm) ? nm->valuestring : "?",
                      cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "ok")));
            }
        }
        const cJSON *why = cJSON_GetObjectItemCaseSensitive(rec, "end_reason");
        count(&ends, cJSON_IsString(why) ? why->valuestring : "?", 0);
        failures_of(&fail, rec);
        cJSON_Delete(rec);
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "episodes", (double)eps);
    cJSON_AddNumberToObject(o, "pass_rate", eps ? (double)passed / (double)eps : 0);
    cJSON_AddItemToObject(o, "turn_counts", top(&turns, turns.len, "turns", NULL));
    cJSON_AddItemToObject(o, "tool_calls", top(&tools, tools.len, "tool", "ok"));
    cJSON_AddItemToObject(o, "end_reasons", top(&ends, ends.len, "end_reason", NULL));
    cJSON_AddItemToObject(o, "top_failures", top(&fail, RL_GRPO_PROFILE_TOP, "failure", NULL));
    counter_free(&turns);
    counter_free(&tools);
    counter_free(&ends);
    counter_free(&fail);
    return o;
}
