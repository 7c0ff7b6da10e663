/* grpo_ckpt.c - checkpoints of a GRPO run, resume and rollback.
 *
 * A checkpoint is a directory ckpt/step-NNNNNNNN/ holding the weights, the
 * optimizer moments, state.json (step, data position, RNG counter, best
 * evaluation) and profile.json (the behaviour profile). It is written under
 * a temporary name and renamed when complete; ckpt/latest and ckpt/best
 * name checkpoints and are replaced atomically. Only complete checkpoints
 * are ever named, so a run killed at any moment resumes from one.
 */
#include "grpo/grpo_int.h"

#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int write_json(const char *path, const cJSON *o, char *err)
{
    char *s = cJSON_Print(o);
    if (!s)
        return rl_err(err, RL_ENOMEM, "grpo: out of memory");
    int rc = fs_write_atomic(path, s, strlen(s), err);
    free(s);
    return rc;
}

static cJSON *state_json(const grpo_ckpt_state *st)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "format", "rl-grpo-state-v1");
    cJSON_AddNumberToObject(o, "step", (double)st->step);
    cJSON_AddNumberToObject(o, "version", (double)(st->step + 1));
    cJSON_AddNumberToObject(o, "data_pos", (double)st->data_pos);
    cJSON *rng = cJSON_AddObjectToObject(o, "rng");
    /* every random choice derives from (seed, counter): tasks from
     * (seed, data_pos), episode seeds from (seed, group number, member),
     * sampling from the episode seeds */
    cJSON_AddNumberToObject(rng, "seed", (double)st->seed);
    cJSON_AddNumberToObject(rng, "groups_drawn", (double)st->groups_drawn);
    cJSON_AddNumberToObject(o, "best_eval", st->best_eval);
    cJSON_AddNumberToObject(o, "best_step", (double)st->best_step);
    cJSON_AddNumberToObject(o, "elapsed_s", st->elapsed_s);
    /* a policy model:CKPT renders with this template unless told otherwise */
    cJSON_AddStringToObject(o, "chat_template", tpl_kind_name((tpl_kind)st->chat_template));
    return o;
}

/* Removes old checkpoints: keeps the newest `keep` and the best. */
static void prune(const char *dir, int keep, long best_step)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    long steps[4096];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < sizeof steps / sizeof steps[0]) {
        long s;
        char tail;
        if (sscanf(e->d_name, "step-%ld%c", &s, &tail) == 1)
            steps[n++] = s;
    }
    closedir(d);
    for (size_t i = 0; i < n; i++) {
        size_t newer = 0;
        for (size_t j = 0; j < n; j++)
            newer += steps[j] > steps[i];
        if (newer < (size_t)keep || steps[i] == best_step || steps[i] == 0)
            continue; /* step 0 stays: rollback's last resort */
        char path[GRPO_PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/step-%08ld", dir, steps[i]);
        fs_remove_tree(path, NULL);
    }
}

int grpo_ckpt_write(const char *run_dir, const char *tok_path, const model_meta *hf, const model *m, const adamw *opt,
                    const grpo_ckpt_state *st, int keep, const cJSON *profile, char *err)
{
    char dir[GRPO_PATH_MAX + 16], tmp[GRPO_PATH_MAX + 64], fin[GRPO_PATH_MAX + 64], path[GRPO_PATH_MAX + 128];
    snprintf(dir, sizeof dir, "%s/ckpt", run_dir);
    snprintf(tmp, sizeof tmp, "%s/.tmp-step-%08ld", dir, st->step);
    snprintf(fin, sizeof fin, "%s/step-%08ld", dir, st->step);
    int rc;
    if ((rc = fs_mkdirs(dir, err)) < 0 || (rc = fs_remove_tree(tmp, err)) < 0 || (rc = fs_mkdirs(tmp, err)) < 0)
        return rc;
    model_meta meta;
    model_meta_default(&meta);
    snprintf(meta.tokenizer, sizeof meta.tokenizer, "%s", tok_path);
    char hash[17];
    if (model_file_hash(hash, tok_path, NULL) == 0)
        snprintf(meta.tokenizer_hash, sizeof meta.tokenizer_hash, "%s", hash);
    meta.step = st->step;
    if (hf) {
        memcpy(meta.hf_tokenizer, hf->hf_tokenizer, sizeof meta.hf_tokenizer);
        memcpy(meta.hf_tokenizer_config, hf->hf_tokenizer_config, sizeof meta.hf_tokenizer_config);
    }
    snprintf(path, sizeof path, "%s/model.safetensors", tmp);
    if ((rc = model_save(m, path, &meta, err)) < 0)
        return rc;
    snprintf(path, sizeof path, "%s/optim.safetensors", tmp);
    if ((rc = opt_save(opt, path, err)) < 0)
        return rc;
    cJSON *sj = state_json(st);
    snprintf(path, sizeof path, "%s/state.json", tmp);
    rc = write_json(path, sj, err);
    cJSON_Delete(sj);
    if (rc < 0)
        return rc;
    if (profile) {
        snprintf(path, sizeof path, "%s/profile.json", tmp);
        if ((rc = write_json(path, profile, err)) < 0)
            return rc;
    }
    if ((rc = fs_remove_tree(fin, err)) < 0)
        return rc;
    if (rename(tmp, fin) != 0)
        return rl_err(err, rl_from_errno(errno), "%s: cannot rename to %s: %s", tmp, fin, strerror(errno));
    char name[32];
    int nl = snprintf(name, sizeof name, "step-%08ld\n", st->step);
    snprintf(path, sizeof path, "%s/latest", dir);
    if ((rc = fs_write_atomic(path, name, (size_t)nl, err)) < 0)
        return rc;
    if (st->best_step == st->step) {
        snprintf(path, sizeof path, "%s/best", dir);
        if ((rc = fs_write_atomic(path, name, (size_t)nl, err)) < 0)
            return rc;
    }
    prune(dir, keep, st->best_step);
    return 0;
}

/* Reads "step-NNNNNNNN" from a pointer file (latest, best). */
static int read_pointer(char *name, size_t n, const char *path, char *err)
{
    char *text;
    int rc = fs_read_file(&text, NULL, path, 256, err);
    if (rc < 0)
        return rc;
    text[strcspn(text, "\r\n")] = '\0';
    long s;
    char tail;
    if (sscanf(text, "step-%ld%c", &s, &tail) != 1 || s < 0) {
        free(text);
        return rl_err(err, RL_EPARSE, "%s: expected a checkpoint name step-NNNNNNNN", path);
    }
    snprintf(name, n, "step-%08ld", s);
    free(text);
    return 0;
}

int grpo_ckpt_resolve(char *run_dir, size_t rn, char *ckpt_dir, size_t cn, const char *resume, char *err)
{
    char path[GRPO_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/state.json", resume);
    if (access(path, F_OK) == 0) { /* a checkpoint directory: its run is two levels up */
        char ck[GRPO_PATH_MAX];
        snprintf(ckpt_dir, cn, "%s", resume);
        fs_dirname(ck, sizeof ck, resume);
        fs_dirname(run_dir, rn, ck);
        return 0;
    }
    char name[64];
    snprintf(path, sizeof path, "%s/ckpt/latest", resume);
    if (access(path, F_OK) != 0)
        return rl_err(err, RL_ENOENT, "--resume %s: neither a checkpoint (no state.json) nor a run (no ckpt/latest)",
                      resume);
    int rc = read_pointer(name, sizeof name, path, err);
    if (rc < 0)
        return rc;
    snprintf(run_dir, rn, "%s", resume);
    snprintf(ckpt_dir, cn, "%s/ckpt/%s", resume, name);
    return 0;
}

static int num_field(double *out, const cJSON *o, const char *k, const char *path, char *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(v))
        return rl_err(err, RL_EPARSE, "%s: field \"%s\": expected a number", path, k);
    *out = v->valuedouble;
    return 0;
}

int grpo_ckpt_read_state(grpo_ckpt_state *st, const char *ckpt_dir, long cfg_seed, char *err)
{
    char path[GRPO_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/state.json", ckpt_dir);
    char *text;
    int rc = fs_read_file(&text, NULL, path, RL_GRPO_STATE_MAX, err);
    if (rc < 0)
        return rc;
    cJSON *o = cJSON_Parse(text);
    free(text);
    if (!o)
        return rl_err(err, RL_EPARSE, "%s: not valid JSON", path);
    double step = 0, pos = 0, groups = 0, best = -1, best_step = -1, seed = 0;
    const cJSON *rng = cJSON_GetObjectItemCaseSensitive(o, "rng");
    if ((rc = num_field(&step, o, "step", path, err)) < 0 || (rc = num_field(&pos, o, "data_pos", path, err)) < 0 ||
        (rc = num_field(&groups, rng, "groups_drawn", path, err)) < 0 ||
        (rc = num_field(&seed, rng, "seed", path, err)) < 0 || (rc = num_field(&best, o, "best_eval", path, err)) < 0 ||
        (rc = num_field(&best_step, o, "best_step", path, err)) < 0) {
        cJSON_Delete(o);
        return rc;
    }
    cJSON_Delete(o);
    if (step < 0 || step > RL_GRPO_STEPS_MAX || pos < 0 || groups < 0)
        return rl_err(err, RL_EPARSE, "%s: step, data_pos or groups_drawn out of range", path);
    if ((long)seed != cfg_seed)
        return rl_err(err, RL_EINVAL, "%s: rng.seed %ld, the config says %ld", path, (long)seed, cfg_seed);
    memset(st, 0, sizeof *st);
    st->step = (long)step;
    st->data_pos = (uint64_t)pos;
    st->groups_drawn = (uint64_t)groups;
    st->seed = cfg_seed;
    st->best_eval = best;
    st->best_step = (long)best_step;
    return 0;
}

int grpo_ckpt_restore(char *name, size_t n, model *m, adamw *opt, const char *run_dir, char *err)
{
    char dir[GRPO_PATH_MAX + 16], path[GRPO_PATH_MAX + 64];
    snprintf(dir, sizeof dir, "%s/ckpt", run_dir);
    snprintf(path, sizeof path, "%s/best", dir);
    int rc;
    if (access(path, F_OK) != 0)
        snprintf(path, sizeof path, "%s/latest", dir);
    if ((rc = read_pointer(name, n, path, err)) < 0)
        return rc;
    char wpath[GRPO_PATH_MAX + 128];
    snprintf(wpath, sizeof wpath, "%s/%s/model.safetensors", dir, name);
    if ((rc = grpo_load_weights(m, wpath, err)) < 0)
        return rc;
    snprintf(wpath, sizeof wpath, "%s/%s/optim.safetensors", dir, name);
    return opt_load(opt, wpath, err);
}

/* Compares two JSON values; on the first difference writes its path. */
static int json_same(const cJSON *a, const cJSON *b, char *path, size_t n, size_t at)
{
    if (cJSON_IsObject(a) && cJSON_IsObject(b)) {
        const cJSON *x;
        cJSON_ArrayForEach(x, a)
        {
            const cJSON *y = cJSON_GetObjectItemCaseSensitive(b, x->string);
            int w = snprintf(path + at, n - at, "%s%s", at ? "." : "", x->string);
            size_t end = at + (w > 0 && (size_t)w < n - at ? (size_t)w : 0);
            if (!y || !json_same(x, y, path, n, end))
                return 0;
            path[at] = '\0';
        }
        return cJSON_GetArraySize(a) == cJSON_GetArraySize(b);
    }
    return cJSON_Compare(a, b, 1);
}

int grpo_config_same(const grpo_config *a, const grpo_config *b, char *what, size_t n)
{
    char *ja = grpo_config_to_json(a), *jb = grpo_config_to_json(b);
    cJSON *oa = ja ? cJSON_Parse(ja) : NULL, *ob = jb ? cJSON_Parse(jb) : NULL;
    what[0] = '\0';
    int same = oa && ob && json_same(oa, ob, what, n, 0);
    if (!same && !what[0])
        snprintf(what, n, "(top level)");
    cJSON_Delete(oa);
    cJSON_Delete(ob);
    free(ja);
    free(jb);
    return same;
}
