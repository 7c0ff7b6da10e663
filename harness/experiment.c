/* experiment.c - load experiment files and expand them into jobs. */
#include "harness/experiment.h"

#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "common/vec.h"
#include "harness/cliopt.h"
#include "protocol/template.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

static const char *RUN_FIELDS[] = {"name", "tasks", "seeds", "policy", "prompt", "max_turns", "think",
                                   "history", "template", "temperature", "top_p", "obs_budget", "max_wall_s",
                                   "max_context_tokens", "integrity", "test_mem_mb", "test_procs",
                                   "test_disk_mb", "base_url", "model", "api", "api_key_env", "max_inflight",
                                   NULL};

static int field_known(const char *k, const char **fields)
{
    for (int i = 0; fields[i]; i++)
        if (!strcmp(k, fields[i]))
            return 1;
    return 0;
}

static int want_str(const char **out, const cJSON *o, const char *k, int required, const char *path,
                    const char *run, char *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!v) {
        *out = NULL;
        return required ? rl_err(err, RL_EINVAL, "%s: run '%s': field \"%s\": expected a string, missing",
                                 path, run, k)
                        : 0;
    }
    if (!cJSON_IsString(v))
        return rl_err(err, RL_EINVAL, "%s: run '%s': field \"%s\": expected a string", path, run, k);
    *out = v->valuestring;
    return 0;
}

static int parse_run(exp_run *r, const cJSON *o, const char *path, size_t idx, char *err)
{
    char label[64];
    snprintf(label, sizeof label, "#%zu", idx);
    if (!cJSON_IsObject(o))
        return rl_err(err, RL_EINVAL, "%s: runs[%zu]: expected an object", path, idx);
    const cJSON *f;
    cJSON_ArrayForEach(f, o) if (!field_known(f->string, RUN_FIELDS)) return rl_err(
        err, RL_EINVAL, "%s: runs[%zu]: unknown field \"%s\"", path, idx, f->string);
    const char *name = NULL, *tasks = NULL, *seeds = NULL, *s = NULL;
    int rc;
    if ((rc = want_str(&name, o, "name", 1, path, label, err)) < 0 ||
        (rc = want_str(&tasks, o, "tasks", 1, path, name ? name : label, err)) < 0 ||
        (rc = want_str(&seeds, o, "seeds", 0, path, name, err)) < 0)
        return rc;
    r->name = strdup(name);
    r->tasks = strdup(tasks);
    ep_config_default(&r->cfg);
    r->cfg.run = r->name;
    r->seeds = calloc(RL_EXP_MAX_SEEDS, sizeof *r->seeds);
    if (!r->name || !r->tasks || !r->seeds)
        return rl_err(err, RL_ENOMEM, "%s: out of memory", path);
    char e2[RL_ERR_MAX];
    if (cliopt_seeds(r->seeds, &r->nseeds, RL_EXP_MAX_SEEDS, seeds ? seeds : "1", e2) < 0)
        return rl_err(err, RL_EINVAL, "%s: run '%s': field \"seeds\": %s", path, name, e2);
    if ((rc = want_str(&s, o, "policy", 0, path, name, err)) < 0)
        return rc;
    if (s)
        r->cfg.policy = r->policy_buf = strdup(s);
    static const char *OAI_FIELDS[4] = {"base_url", "model", "api", "api_key_env"};
    const char **oai_dst[4] = {&r->cfg.openai.base_url, &r->cfg.openai.model, &r->cfg.openai.api,
                               &r->cfg.openai.api_key_env};
    for (int k = 0; k < 4; k++) {
        if ((rc = want_str(&s, o, OAI_FIELDS[k], 0, path, name, err)) < 0)
            return rc;
        if (s && !(*oai_dst[k] = r->openai_buf[k] = strdup(s)))
            return rl_err(err, RL_ENOMEM, "%s: out of memory", path);
    }
    if (r->cfg.openai.api && strcmp(r->cfg.openai.api, "chat") && strcmp(r->cfg.openai.api, "completions"))
        return rl_err(err, RL_EINVAL, "%s: run '%s': field \"api\": expected \"chat\" or \"completions\"", path, name);
    const cJSON *mi = cJSON_GetObjectItemCaseSensitive(o, "max_inflight");
    if (mi) {
        if (!cJSON_IsNumber(mi) || mi->valuedouble < 1 || mi->valuedouble > HTTP_MANY_INFLIGHT_MAX ||
            mi->valuedouble != (int)mi->valuedouble)
            return rl_err(err, RL_EINVAL, "%s: run '%s': field \"max_inflight\": expected a number 1-%d", path, name,
                          HTTP_MANY_INFLIGHT_MAX);
        r->cfg.openai.max_inflight = mi->valueint;
    }
    if ((rc = want_str(&s, o, "prompt", 0, path, name, err)) < 0)
        return rc;
    if (s)
        r->cfg.prompt = r->prompt_buf = strdup(s);
    if ((rc = want_str(&s, o, "think", 0, path, name, err)) < 0)
        return rc;
    if (s) {
        if (strcmp(s, "on") && strcmp(s, "off"))
            return rl_err(err, RL_EINVAL, "%s: run '%s': field \"think\": expected \"on\" or \"off\"", path, name);
        r->cfg.think = !strcmp(s, "on");
    }
    if ((rc = want_str(&s, o, "history", 0, path, name, err)) < 0)
        return rc;
    if (s) {
        if (strcmp(s, "keep") && strcmp(s, "drop"))
            return rl_err(err, RL_EINVAL, "%s: run '%s': field \"history\": expected \"keep\" or \"drop\"",
                          path, name);
        r->cfg.history_keep = !strcmp(s, "keep");
    }
    if ((rc = want_str(&s, o, "template", 0, path, name, err)) < 0)
        return rc;
    if (s) {
        tpl_kind k;
        char e[RL_ERR_MAX];
        if (tpl_kind_parse(&k, s, e) < 0)
            return rl_err(err, RL_EINVAL, "%s: run '%s': field \"template\": %s", path, name, e);
        r->cfg.chat_template = (int)k;
    }
    if ((rc = want_str(&s, o, "integrity", 0, path, name, err)) < 0)
        return rc;
    if (s) {
        if (strcmp(s, "enforce") && strcmp(s, "flag"))
            return rl_err(err, RL_EINVAL, "%s: run '%s': field \"integrity\": expected \"enforce\" or \"flag\"",
                          path, name);
        r->cfg.integrity_flag_only = !strcmp(s, "flag");
    }
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(o, "max_turns");
    if (mt) {
        if (cJSON_IsString(mt) && !strcmp(mt->valuestring, "unlimited"))
            r->cfg.max_turns = 0;
        else if (cJSON_IsNumber(mt) && mt->valuedouble >= 1 && mt->valuedouble <= 100000)
            r->cfg.max_turns = mt->valueint;
        else
            return rl_err(err, RL_EINVAL, "%s: run '%s': field \"max_turns\": expected 1-100000 or \"unlimited\"",
                          path, name);
    }
    struct {
        const char *k;
        double lo, hi;
    } nums[] = {{"temperature", 0, 10}, {"top_p", 1e-6, 1}, {"obs_budget", 256, 16 << 20},
                {"max_wall_s", 0, 86400}, {"max_context_tokens", 0, 1e7},
                {"test_mem_mb", 0, RL_TESTRUN_MEM_MB_MAX}, {"test_procs", 0, 100000},
                {"test_disk_mb", 0, SB_DISK_MB_HARD}};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, nums[i].k);
        if (!v)
            continue;
        if (!cJSON_IsNumber(v) || v->valuedouble < nums[i].lo || v->valuedouble > nums[i].hi)
            return rl_err(err, RL_EINVAL, "%s: run '%s': field \"%s\": expected a number in [%g, %g]", path,
                          name, nums[i].k, nums[i].lo, nums[i].hi);
        double d = v->valuedouble;
        switch (i) {
        case 0: r->cfg.temperature = d; break;
        case 1: r->cfg.top_p = d; break;
        case 2: r->cfg.obs_budget = (size_t)d; break;
        case 3: r->cfg.max_wall_s = (int)d; break;
        case 4: r->cfg.max_context_tokens = (int)d; break;
        case 5: r->cfg.test_limits.mem_mb = (long)d; break;
        case 6: r->cfg.test_limits.procs = (int)d; break;
        case 7: r->cfg.test_limits.disk_mb = (long)d; break;
        }
    }
    return 0;
}

int exp_load(experiment **out, const char *path, char *err)
{
    *out = NULL;
    char *text;
    int rc = fs_read_file(&text, NULL, path, RL_EXP_FILE_MAX, err);
    if (rc < 0)
        return rc;
    cJSON *root = cJSON_Parse(text);
    free(text);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return rl_err(err, RL_EPARSE, "%s: expected a JSON object", path);
    }
    experiment *e = calloc(1, sizeof *e);
    static const char *TOP[] = {"name", "description", "runs", NULL};
    const cJSON *f, *name = cJSON_GetObjectItemCaseSensitive(root, "name"),
                    *desc = cJSON_GetObjectItemCaseSensitive(root, "description"),
                    *runs = cJSON_GetObjectItemCaseSensitive(root, "runs");
    rc = 0;
    cJSON_ArrayForEach(f, root) if (!rc && !field_known(f->string, TOP)) rc =
        rl_err(err, RL_EINVAL, "%s: unknown field \"%s\" (expected name, description, runs)", path, f->string);
    if (!rc && (!cJSON_IsString(name) || !name->valuestring[0] || strchr(name->valuestring, '/')))
        rc = rl_err(err, RL_EINVAL, "%s: field \"name\": expected a non-empty string without '/'", path);
    if (!rc && desc && !cJSON_IsString(desc))
        rc = rl_err(err, RL_EINVAL, "%s: field \"description\": expected a string", path);
    if (!rc && (!cJSON_IsArray(runs) || cJSON_GetArraySize(runs) == 0))
        rc = rl_err(err, RL_EINVAL, "%s: field \"runs\": expected a non-empty array", path);
    if (!rc) {
        e->name = strdup(name->valuestring);
        e->description = strdup(desc ? desc->valuestring : "");
        e->nruns = (size_t)cJSON_GetArraySize(runs);
        e->runs = calloc(e->nruns, sizeof *e->runs);
        if (!e->runs)
            rc = rl_err(err, RL_ENOMEM, "%s: out of memory", path);
        for (size_t i = 0; !rc && i < e->nruns; i++)
            rc = parse_run(&e->runs[i], cJSON_GetArrayItem(runs, (int)i), path, i, err);
        for (size_t i = 0; !rc && i < e->nruns; i++)
            for (size_t j = i + 1; !rc && j < e->nruns; j++)
                if (!strcmp(e->runs[i].name, e->runs[j].name))
                    rc = rl_err(err, RL_EINVAL, "%s: run name '%s' appears twice", path, e->runs[i].name);
    }
    cJSON_Delete(root);
    if (rc < 0) {
        exp_free(e);
        return rc;
    }
    *out = e;
    return 0;
}

void exp_free(experiment *e)
{
    if (!e)
        return;
    for (size_t i = 0; e->runs && i < e->nruns; i++) {
        free(e->runs[i].name);
        free(e->runs[i].tasks);
        free(e->runs[i].seeds);
        free(e->runs[i].policy_buf);
        free(e->runs[i].prompt_buf);
        for (int k = 0; k < 4; k++)
            free(e->runs[i].openai_buf[k]);
    }
    free(e->runs);
    free(e->name);
    free(e->description);
    free(e);
}

int exp_jobs(batch_job **jobs, size_t *n, experiment *e, const task_set *all, const char *policy_override,
             char *err)
{
    *jobs = NULL;
    *n = 0;
    size_t cap = 0;
    for (size_t r = 0; r < e->nruns; r++) {
        exp_run *run = &e->runs[r];
        if (policy_override)
            run->cfg.policy = policy_override;
        task_set sel;
        char e2[RL_ERR_MAX];
        if (task_select(&sel, all, run->tasks, e2) < 0) {
            free(*jobs);
            *jobs = NULL;
            return rl_err(err, RL_EINVAL, "run '%s': tasks: %s", run->name, e2);
        }
        for (size_t t = 0; t < sel.n; t++)
            for (size_t s = 0; s < run->nseeds; s++) {
                int rc = VEC_GROW(*jobs, cap, *n + 1, RL_BATCH_MAX_JOBS);
                if (rc < 0) {
                    free(sel.v);
                    free(*jobs);
                    *jobs = NULL;
                    return rc == RL_ELIMIT ? rl_err(err, rc, "experiment: more than %u jobs, the batch limit", RL_BATCH_MAX_JOBS)
                                           : rl_err(err, rc, "experiment: out of memory");
                }
                (*jobs)[(*n)++] = (batch_job){sel.v[t], &run->cfg, run->seeds[s]};
            }
        free(sel.v);
    }
    return 0;
}
