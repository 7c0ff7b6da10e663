/* batch.c - parallel, resumable batches of episodes.
 *
 * Parent: reads the keys already in the output file, forks `workers`
 * processes, sends each a job index through its own pipe, reads
 * "index reward status" lines back from one shared pipe, and keeps a
 * progress bar. Worker: opens the task's work tree in its own slot, runs
 * the episode, appends the record (one write + fsync), reports. The
 * parent writes a record itself only when a worker died mid-job, so every
 * job ends with exactly one record.
 */
#include "harness/batch.h"

#include "common/buf.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "common/vec.h"
#include "harness/pool.h"
#include "harness/rollout.h"
#include "harness/workspace.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void batch_opts_default(batch_opts *o)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    o->workers = n > 0 ? (int)n : 1;
    o->out = NULL;
    o->ws_root = NULL;
    o->progress = NULL;
    o->progress_ctx = NULL;
    o->log = NULL;
    o->log_ctx = NULL;
}

void batch_job_key(char *out, size_t n, const batch_job *j)
{
    if (j->cfg->run)
        snprintf(out, n, "%s#%s#seed=%llu", j->task->instance_id, j->cfg->run,
                 (unsigned long long)j->seed);
    else
        snprintf(out, n, "%s#cfg=%016llx#seed=%llu", j->task->instance_id,
                 (unsigned long long)ep_config_digest(j->cfg), (unsigned long long)j->seed);
}

/* Keys of the complete records already in path. A torn last line (the
 * writer was killed inside write(2)) is cut off so appends stay whole. */
static int load_done(char ***keys, size_t *nkeys, const char *path, char *err)
{
    *keys = NULL;
    *nkeys = 0;
    char *data;
    size_t len;
    int rc = fs_read_file(&data, &len, path, RL_BATCH_OUT_MAX, err);
    if (rc == RL_ENOENT)
        return 0;
    if (rc < 0)
        return rc;
    if (len && data[len - 1] != '\n') {
        char *last = strrchr(data, '\n');
        off_t keep = last ? (off_t)(last - data + 1) : 0;
        if (truncate(path, keep) < 0) {
            free(data);
            return rl_err(err, RL_EIO, "%s: cannot cut the torn last record: %s", path, strerror(errno));
        }
        data[keep] = '\0';
    }
    size_t cap = 0;
    char *save = NULL;
    for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        cJSON *rec = cJSON_Parse(line);
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(rec, "key");
        const char *why = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rec, "end_reason"));
        if (cJSON_IsString(k) && !(why && !strcmp(why, "policy_error"))) {
            /* a record takes more than one byte of the file: its cap bounds the keys */
            if (VEC_GROW(*keys, cap, *nkeys + 1, RL_BATCH_OUT_MAX) < 0) {
                cJSON_Delete(rec);
                free(data);
                return rl_err(err, RL_ENOMEM, "batch: out of memory");
            }
            (*keys)[(*nkeys)++] = strdup(k->valuestring);
        }
        cJSON_Delete(rec);
    }
    free(data);
    return 0;
}

/* 1 for the record of an episode the policy could not answer (its server
 * was down, say): it is kept, and a later run of the batch tries the
 * episode again. */
static int record_failed(const char *line)
{
    cJSON *rec = cJSON_Parse(line);
    const char *why = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rec, "end_reason"));
    int failed = why && !strcmp(why, "policy_error");
    cJSON_Delete(rec);
    return failed;
}

static int key_done(char **keys, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (keys[i] && !strcmp(keys[i], key))
            return 1;
    return 0;
}

/* A record for an episode that could not produce its own. */
static char *error_record(const batch_job *j, const char *key, const char *why)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddNumberToObject(r, "schema", 1);
    cJSON_AddStringToObject(r, "key", key);
    cJSON_AddStringToObject(r, "task", j->task->instance_id);
    cJSON_AddStringToObject(r, "repo", j->task->repo);
    cJSON *cfg = cJSON_AddObjectToObject(r, "config");
    cJSON_AddStringToObject(cfg, "policy", j->cfg->policy ? j->cfg->policy : "");
    if (j->cfg->run)
        cJSON_AddStringToObject(cfg, "run", j->cfg->run);
    cJSON_AddNumberToObject(cfg, "seed", (double)j->seed);
    cJSON_AddItemToObject(r, "turns", cJSON_CreateArray());
    cJSON_AddNumberToObject(r, "reward", 0);
    cJSON_AddStringToObject(r, "end_reason", "error");
    cJSON_AddStringToObject(r, "error", why);
    char *s = cJSON_PrintUnformatted(r);
    cJSON_Delete(r);
    return s;
}

typedef struct batch_ctx {
    const batch_job *jobs;
    const batch_opts *o;
    batch_stats *st;
} batch_ctx;

/* In a worker: one episode, its record appended, "reward status" back. */
static void batch_job_run(void *user, size_t idx, int slot, buf_t *out)
{
    batch_ctx *bc = user;
    const batch_job *j = &bc->jobs[idx];
    char key[512], err[RL_ERR_MAX] = "";
    batch_job_key(key, sizeof key, j);
    ep_config cfg = *j->cfg;
    cfg.seed = j->seed;
    cfg.log = NULL;
    ws_opts wo;
    ws_opts_default(&wo);
    if (bc->o->ws_root)
        wo.root = bc->o->ws_root;
    ws_tree *ws = NULL;
    policy *pol = NULL;
    char *rec = NULL;
    int rc = ws_open_task(&ws, &wo, j->task, slot, err);
    if (rc == 0) {
        pol_env env;
        ep_config_pol_env(&env, &cfg);
        env.gold_patch = j->task->patch;
        rc = pol_open(&pol, cfg.policy, &env, err);
    }
    if (rc == 0) {
        if (!cfg.tok)
            cfg.tok = pol->tok;
        rc = ep_run(&rec, j->task, &cfg, ws, pol, err);
    }
    if (rc < 0 || !rec) {
        free(rec);
        rec = error_record(j, key, err[0] ? err : "episode failed");
    }
    double reward = 0;
    cJSON *parsed = cJSON_Parse(rec);
    const cJSON *rw = cJSON_GetObjectItemCaseSensitive(parsed, "reward");
    if (cJSON_IsNumber(rw))
        reward = rw->valuedouble;
    int flagged = cJSON_IsTrue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(parsed, "integrity"), "flagged"));
    cJSON_Delete(parsed);
    int st = rc < 0 || record_failed(rec) ? 1 : 0;
    if (fs_append_record(bc->o->out, rec, strlen(rec), err) < 0) {
        rl_logf(bc->o->log, bc->o->log_ctx, RL_LOG_ERROR, "batch: %s", err);
        st = 2;
    }
    free(rec);
    pol_free(pol);
    ws_free(ws);
    buf_printf(out, "%.6f %d %d", reward, st, flagged);
}

static void batch_job_done(void *user, size_t idx, const char *line)
{
    batch_ctx *bc = user;
    (void)idx;
    double reward = 0;
    int st = 1, flagged = 0;
    sscanf(line, "%lf %d %d", &reward, &st, &flagged);
    bc->st->done++;
    bc->st->passed += reward > 0.5;
    bc->st->flagged += flagged != 0;
    bc->st->errors += st != 0;
}

/* The worker died mid-episode: the episode still gets its one record. */
static void batch_job_died(void *user, size_t idx, const char *why)
{
    batch_ctx *bc = user;
    const batch_job *j = &bc->jobs[idx];
    char key[512], err[RL_ERR_MAX];
    batch_job_key(key, sizeof key, j);
    /* killed after its record was appended but before it reported: the
     * record stands, no second one */
    char **keys;
    size_t nkeys;
    int have = 0;
    if (load_done(&keys, &nkeys, bc->o->out, err) == 0) {
        have = key_done(keys, nkeys, key);
        for (size_t i = 0; i < nkeys; i++)
            free(keys[i]);
        free(keys);
    }
    bc->st->done++;
    if (have)
        return;
    char *rec = error_record(j, key, why);
    if (rec && fs_append_record(bc->o->out, rec, strlen(rec), err) < 0)
        rl_logf(bc->o->log, bc->o->log_ctx, RL_LOG_ERROR, "batch: %s", err);
    free(rec);
    bc->st->errors++;
}

static void batch_tick(void *user, size_t done, size_t total)
{
    batch_ctx *bc = user;
    if (!bc->o->progress)
        return;
    char extra[96];
    snprintf(extra, sizeof extra, "pass %.2f errors %zu flagged %zu",
             bc->st->done ? (double)bc->st->passed / (double)bc->st->done : 0.0, bc->st->errors, bc->st->flagged);
    bc->o->progress(bc->o->progress_ctx, done, total, extra);
}

/* ---- jobs of the openai policy: one process, requests together -------- */

typedef struct inproc {
    batch_ctx *bc;
    size_t total;
} inproc;

static void inproc_done(void *user, long tag, char *record, double reward)
{
    inproc *ip = user;
    batch_ctx *bc = ip->bc;
    const batch_job *j = &bc->jobs[tag];
    char key[512], err[RL_ERR_MAX];
    batch_job_key(key, sizeof key, j);
    char *rec = record ? record : error_record(j, key, "the episode could not start (see the log)");
    int failed = !record || record_failed(rec);
    cJSON *parsed = cJSON_Parse(rec);
    int flagged = cJSON_IsTrue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(parsed, "integrity"), "flagged"));
    cJSON_Delete(parsed);
    if (rec && fs_append_record(bc->o->out, rec, strlen(rec), err) < 0) {
        rl_logf(bc->o->log, bc->o->log_ctx, RL_LOG_ERROR, "batch: %s", err);
        failed = 1;
    }
    free(rec);
    bc->st->done++;
    bc->st->passed += !failed && reward > 0.5;
    bc->st->flagged += flagged;
    bc->st->errors += failed;
    batch_tick(bc, bc->st->done, ip->total);
}

/* Runs the jobs todo[0..n) that share one config of the openai policy as
 * one rollout: every active episode's request goes out in the same
 * policy call, at most the policy's max-inflight open at once. */
static int run_inproc(batch_ctx *bc, const size_t *todo, size_t n, size_t total, char *err)
{
    const ep_config *cfg = bc->jobs[todo[0]].cfg;
    pol_env env;
    ep_config_pol_env(&env, cfg);
    env.log = bc->o->log;
    env.log_ctx = bc->o->log_ctx;
    policy *pol = NULL;
    int rc = pol_open(&pol, cfg->policy, &env, err);
    if (rc < 0)
        return rc;
    rollout_opts ro;
    rollout_opts_default(&ro);
    ro.ws_root = bc->o->ws_root;
    int active = cfg->openai.max_inflight > 0 ? cfg->openai.max_inflight : OAI_INFLIGHT_DEFAULT;
    active = active > bc->o->workers ? active : bc->o->workers;
    ro.max_active = active < RL_ROLLOUT_ACTIVE_MAX ? active : RL_ROLLOUT_ACTIVE_MAX;
    ro.threads = bc->o->workers;
    ro.log = bc->o->log;
    ro.log_ctx = bc->o->log_ctx;
    rollout *r = NULL;
    if ((rc = rollout_new(&r, pol, &ro, err)) < 0) {
        pol_free(pol);
        return rc;
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const batch_job *j = &bc->jobs[todo[i]];
        rc = rollout_add(r, j->task, j->cfg, j->seed, (long)todo[i], err);
    }
    inproc ip = {bc, total};
    if (rc == 0)
        rc = rollout_drain(r, inproc_done, &ip, err);
    rollout_free(r);
    pol_free(pol);
    return rc;
}

int batch_run(batch_stats *st, const batch_job *jobs, size_t n, const batch_opts *o, char *err)
{
    memset(st, 0, sizeof *st);
    st->jobs = n;
    if (!o->out)
        return rl_err(err, RL_EINVAL, "batch: no output file given");
    if (n > RL_BATCH_MAX_JOBS)
        return rl_err(err, RL_ELIMIT, "batch: %zu jobs, limit is %u", n, RL_BATCH_MAX_JOBS);
    char dir[4096];
    fs_dirname(dir, sizeof dir, o->out);
    int rc = fs_mkdirs(dir, err);
    if (rc < 0)
        return rc;
    char **keys;
    size_t nkeys;
    if ((rc = load_done(&keys, &nkeys, o->out, err)) < 0)
        return rc;
    size_t *todo = malloc((n ? n : 1) * sizeof *todo);
    size_t ntodo = 0;
    for (size_t i = 0; todo && i < n; i++) {
        char key[512];
        batch_job_key(key, sizeof key, &jobs[i]);
        if (key_done(keys, nkeys, key))
            st->skipped++;
        else
            todo[ntodo++] = i;
    }
    for (size_t i = 0; i < nkeys; i++)
        free(keys[i]);
    free(keys);
    if (!todo)
        return rl_err(err, RL_ENOMEM, "batch: out of memory");
    if (st->skipped)
        rl_logf(o->log, o->log_ctx, RL_LOG_INFO,
                "batch: %zu of %zu episodes already recorded in %s; running the other %zu", st->skipped, n, o->out,
                ntodo);
    double t0 = clk_s();
    batch_ctx bc = {.jobs = jobs, .o = o, .st = st};
    /* jobs of the openai policy: each config's jobs as one rollout */
    size_t nrest = 0, noa = 0;
    size_t *oa = malloc((ntodo ? ntodo : 1) * sizeof *oa), *grp = malloc((ntodo ? ntodo : 1) * sizeof *grp);
    if (!oa || !grp) {
        free(oa);
        free(grp);
        free(todo);
        return rl_err(err, RL_ENOMEM, "batch: out of memory");
    }
    for (size_t i = 0; i < ntodo; i++) {
        if (ep_config_is_openai(jobs[todo[i]].cfg))
            oa[noa++] = todo[i];
        else
            todo[nrest++] = todo[i];
    }
    rc = 0;
    for (size_t i = 0; i < noa && rc == 0; i++) {
        if (oa[i] == SIZE_MAX)
            continue;
        const ep_config *c = jobs[oa[i]].cfg;
        size_t ng = 0;
        for (size_t k = i; k < noa; k++)
            if (oa[k] != SIZE_MAX && jobs[oa[k]].cfg == c) {
                grp[ng++] = oa[k];
                oa[k] = SIZE_MAX;
            }
        rc = run_inproc(&bc, grp, ng, ntodo, err);
    }
    free(oa);
    free(grp);
    if (rc == 0 && nrest) {
        pool_cbs cb = {batch_job_run, batch_job_done, batch_job_died, batch_tick, &bc};
        rc = pool_run(todo, nrest, o->workers, &cb, err);
    }
    free(todo);
    st->wall_s = clk_s() - t0;
    return rc;
}
