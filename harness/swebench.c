/* swebench.c - SWE-bench instances become tasks; records become predictions. */
#include "harness/swebench.h"

#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "common/str.h"
#include "harness/workspace.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

void swb_opts_default(swb_opts *o)
{
    memset(o, 0, sizeof *o);
    o->out_dir = ".";
    o->split = "train";
}

/* An id as a message shows it: control characters as '?', at most 200 bytes. */
static void show_id(char *out, size_t n, const char *id)
{
    size_t k = 0;
    for (; id[k] && k < 200 && k + 1 < n; k++)
        out[k] = (unsigned char)id[k] < 0x20 || id[k] == 0x7f ? '?' : id[k];
    out[k] = 0;
}

/* ---- test ids ------------------------------------------------------------ */

int swb_test_name(char *out, size_t n, const char *id, char *err)
{
    size_t len = strcspn(id, "\n");
    const char *end = id + len;
    /* pytest node id: the last "::" part, parameters ([...]) included */
    const char *br = memchr(id, '[', len);
    const char *stop = br ? br : end, *start = id;
    for (const char *p = id; p + 1 < stop; p++)
        if (p[0] == ':' && p[1] == ':')
            start = p + 2;
    if (start == id) {
        /* unittest / Django: "test_y (module.TestC)" */
        const char *paren = strstr(id, " (");
        if (paren && paren < end && end[-1] == ')')
            end = paren;
    }
    size_t k = (size_t)(end - start);
    while (k && (start[k - 1] == ' ' || start[k - 1] == '\t' || start[k - 1] == '\r'))
        k--;
    int bad = k == 0 || k >= n || k > RL_TASK_TEST_ID_MAX;
    for (size_t i = 0; !bad && i < k; i++)
        bad = (unsigned char)start[i] < 0x20 || start[i] == 0x7f || (!br && start[i] == ' ') ||
              (br && start + i < br && start[i] == ' ');
    if (bad) {
        char shown[256];
        show_id(shown, sizeof shown, id);
        return rl_err(err, RL_EINVAL, "test id '%s' maps to no test name (expected a pytest node id "
                      "FILE::[CLASS::]NAME[PARAMS], 'NAME (module.Class)' or a bare NAME)", shown);
    }
    memcpy(out, start, k);
    out[k] = 0;
    return 0;
}

/* ---- fields ----------------------------------------------------------------- */

static int field_str(const char **out, const cJSON *inst, const char *name, int may_be_empty, const char *where,
                     char *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(inst, name);
    if (!v)
        return rl_err(err, RL_EINVAL, "%s: field \"%s\": missing (required field)", where, name);
    if (!cJSON_IsString(v) || !v->valuestring || (!may_be_empty && !*v->valuestring))
        return rl_err(err, RL_EINVAL, "%s: field \"%s\": expected a %sstring", where, name,
                      may_be_empty ? "" : "non-empty ");
    *out = v->valuestring;
    return 0;
}

/* FAIL_TO_PASS / PASS_TO_PASS: a JSON array of strings, or a string holding
 * one (SWE-bench's datasets ship both). *out is an array the caller frees
 * with cJSON_Delete. */
static int field_ids(cJSON **out, const cJSON *inst, const char *name, const char *where, char *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(inst, name);
    *out = NULL;
    if (!v)
        return rl_err(err, RL_EINVAL, "%s: field \"%s\": missing (required field)", where, name);
    cJSON *a = cJSON_IsString(v) ? cJSON_Parse(v->valuestring) : cJSON_Duplicate(v, 1);
    int ok = cJSON_IsArray(a) && cJSON_GetArraySize(a) <= RL_TASK_TESTS_MAX;
    const cJSON *it;
    cJSON_ArrayForEach(it, a) ok = ok && cJSON_IsString(it) && it->valuestring;
    if (!ok) {
        cJSON_Delete(a);
        return rl_err(err, RL_EINVAL, "%s: field \"%s\": expected an array of test ids (or a string holding "
                      "one), at most %d", where, name, RL_TASK_TESTS_MAX);
    }
    *out = a;
    return 0;
}

static int is_hex_id(const char *s)
{
    size_t n = strlen(s);
    if (n < 7 || n > 40)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isxdigit((unsigned char)s[i]))
            return 0;
    return 1;
}

static const swb_repo *find_repo(const swb_opts *o, const char *name)
{
    const char *slash = strrchr(name, '/');
    for (size_t i = 0; i < o->nrepos; i++)
        if (!strcmp(o->repos[i].name, name))
            return &o->repos[i];
    for (size_t i = 0; slash && i < o->nrepos; i++)
        if (!strcmp(o->repos[i].name, slash + 1))
            return &o->repos[i];
    return NULL;
}

/* ---- the snapshot -------------------------------------------------------- */

static pthread_once_t swb_once = PTHREAD_ONCE_INIT;
static int swb_git_rc;

static void swb_git_init(void)
{
    swb_git_rc = git_libgit2_init();
}

static int git_fail(char *err, const char *where, const char *what)
{
    const git_error *e = git_error_last();
    return rl_err(err, RL_EGIT, "%s: %s: %s", where, what, e && e->message ? e->message : "libgit2 error");
}

/* A path from a tree is written under the snapshot folder only when it
 * stays inside: no leading '/', no empty, '.', '..' or '.git' component. */
static int safe_path(const char *p)
{
    if (!*p || *p == '/')
        return 0;
    for (const char *c = p; *c;) {
        size_t k = strcspn(c, "/");
        if (k == 0 || (k == 1 && c[0] == '.') || (k == 2 && !strncmp(c, "..", 2)) ||
            (k == 4 && !strncasecmp(c, ".git", 4)))
            return 0;
        c += k;
        if (*c == '/')
            c++;
    }
    return 1;
}

static int write_entry(git_repository *r, const git_index_entry *e, const char *root, const char *where,
                       char *err)
{
    if (e->mode == GIT_FILEMODE_COMMIT)
        return 0; /* a submodule: not part of the snapshot */
    if (!safe_path(e->path))
        return rl_err(err, RL_EDENIED, "%s: tree path '%.200s' leaves the snapshot", where, e->path);
    char path[4096], dir[4096];
    if (str_fmt(path, sizeof path, "%s/%s", root, e->path) < 0)
        return rl_err(err, RL_ELIMIT, "%s: path too long: %.200s", where, e->path);
    fs_dirname(dir, sizeof dir, path);
    int rc = fs_mkdirs(dir, err);
    if (rc < 0)
        return rc;
    git_blob *b;
    if (git_blob_lookup(&b, r, &e->id) < 0)
        return git_fail(err, where, e->path);
    const void *data = git_blob_rawcontent(b);
    size_t len = (size_t)git_blob_rawsize(b);
    if (e->mode == GIT_FILEMODE_LINK) {
        char target[4096];
        if (len >= sizeof target) {
            git_blob_free(b);
            return rl_err(err, RL_ELIMIT, "%s: symlink target too long: %.200s", where, e->path);
        }
        memcpy(target, data, len);
        target[len] = 0;
        git_blob_free(b);
        if (symlink(target, path) < 0)
            return rl_err(err, rl_from_errno(errno), "%s: %s: %s", where, path, strerror(errno));
        return 0;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, e->mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0755 : 0644);
    if (fd < 0) {
        git_blob_free(b);
        return rl_err(err, rl_from_errno(errno), "%s: %s: %s", where, path, strerror(errno));
    }
    const char *p = data;
    size_t left = len;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e2 = errno;
            close(fd);
            git_blob_free(b);
            return rl_err(err, rl_from_errno(e2), "%s: %s: %s", where, path, strerror(e2));
        }
        p += w;
        left -= (size_t)w;
    }
    git_blob_free(b);
    if (close(fd) < 0)
        return rl_err(err, rl_from_errno(errno), "%s: %s: %s", where, path, strerror(errno));
    return 0;
}

/* The files a diff names (old and new sides), as a cJSON array of
 * strings without repeats. */
static int diff_paths(cJSON *out, const char *patch, const char *field, const char *where, char *err)
{
    git_diff *d;
    if (git_diff_from_buffer(&d, patch, strlen(patch)) < 0) {
        const git_error *e = git_error_last();
        return rl_err(err, RL_EPARSE, "%s: field \"%s\": not a unified diff: %s", where, field,
                      e && e->message ? e->message : "libgit2 error");
    }
    size_t n = git_diff_num_deltas(d);
    for (size_t i = 0; i < n; i++) {
        const git_diff_delta *dl = git_diff_get_delta(d, i);
        const char *ps[2] = {dl->old_file.path, dl->new_file.path};
        for (int k = 0; k < 2; k++) {
            if (!ps[k] || !*ps[k] || !strcmp(ps[k], "/dev/null"))
                continue;
            int seen = 0;
            const cJSON *it;
            cJSON_ArrayForEach(it, out) seen = seen || !strcmp(it->valuestring, ps[k]);
            if (!seen)
                cJSON_AddItemToArray(out, cJSON_CreateString(ps[k]));
        }
    }
    git_diff_free(d);
    return 0;
}

/* Writes the tree of `commit` in the repository at git_dir, with test_patch
 * applied, to root (made afresh). */
static int snapshot(const char *git_dir, const char *commit, const char *test_patch, const char *root,
                    const char *where, char *err)
{
    git_repository *r = NULL;
    git_object *obj = NULL;
    git_commit *c = NULL;
    git_tree *tree = NULL;
    git_diff *diff = NULL;
    git_index *idx = NULL;
    int rc = 0;
    pthread_once(&swb_once, swb_git_init);
    if (swb_git_rc < 0)
        return rl_err(err, RL_EGIT, "%s: libgit2 could not start", where);
    if (git_repository_open_ext(&r, git_dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
        rc = rl_err(err, RL_ENOENT, "%s: %s: not a git repository", where, git_dir);
        goto out;
    }
    if (git_revparse_single(&obj, r, commit) < 0 || git_object_peel((git_object **)&c, obj, GIT_OBJECT_COMMIT) < 0) {
        rc = rl_err(err, RL_ENOENT, "%s: field \"base_commit\": commit %s is not in %s", where, commit, git_dir);
        goto out;
    }
    if (git_commit_tree(&tree, c) < 0) {
        rc = git_fail(err, where, "base_commit's tree");
        goto out;
    }
    if (git_diff_from_buffer(&diff, test_patch, strlen(test_patch)) < 0) {
        rc = git_fail(err, where, "field \"test_patch\"");
        goto out;
    }
    if (git_apply_to_tree(&idx, r, tree, diff, NULL) < 0) {
        const git_error *e = git_error_last();
        rc = rl_err(err, RL_EPARSE, "%s: field \"test_patch\": does not apply at base_commit %.12s: %s", where,
                    commit, e && e->message ? e->message : "libgit2 error");
        goto out;
    }
    size_t n = git_index_entrycount(idx);
    if (n > RL_SWB_SNAPSHOT_FILES_MAX) {
        rc = rl_err(err, RL_ELIMIT, "%s: base_commit has %zu files, expected at most %d", where, n,
                    RL_SWB_SNAPSHOT_FILES_MAX);
        goto out;
    }
    if ((rc = fs_remove_tree(root, err)) < 0 || (rc = fs_mkdirs(root, err)) < 0)
        goto out;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = write_entry(r, git_index_get_byindex(idx, i), root, where, err);
out:
    git_index_free(idx);
    git_diff_free(diff);
    git_tree_free(tree);
    git_commit_free(c);
    git_object_free(obj);
    git_repository_free(r);
    return rc;
}

/* ---- import ------------------------------------------------------------------- */

static const char *const SWB_TAKEN[] = {"instance_id", "patch", "test_patch", "problem_statement"};
/* Configuration of the test runner at the repository's root: protected
 * like the tests, unless the gold patch changes it. */
static const char *const SWB_RUNNER_FILES[] = {"conftest.py", "pytest.ini", "tox.ini", "setup.cfg",
                                               "pyproject.toml", "Makefile", "GNUmakefile", "makefile"};

static int has_str(const cJSON *a, const char *s)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, a) if (!strcmp(it->valuestring, s)) return 1;
    return 0;
}

/* Maps the ids of one list into `names` (and keeps the originals in ids). */
static int map_ids(cJSON *names, swb_instance *x, const cJSON *given, const char *field, const char *where,
                   char *err)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, given) {
        char name[RL_TASK_TEST_ID_MAX + 1], e2[RL_ERR_MAX];
        if (swb_test_name(name, sizeof name, it->valuestring, e2) < 0)
            return rl_err(err, RL_EINVAL, "%s: field \"%s\": %s", where, field, e2);
        if (has_str(names, name)) {
            char shown[256];
            show_id(shown, sizeof shown, it->valuestring);
            return rl_err(err, RL_EINVAL, "%s: field \"%s\": test id '%s' maps to %s, as an earlier id does "
                          "(the result parsers report names without file or class)", where, field, shown, name);
        }
        char *keep = strdup(it->valuestring);
        if (!keep)
            return rl_err(err, RL_ENOMEM, "%s: out of memory", where);
        x->ids[x->nids++] = keep;
        cJSON_AddItemToArray(names, cJSON_CreateString(name));
    }
    return 0;
}

int swb_import(swb_instance *out, const cJSON *inst, const swb_opts *o, const char *where, char *err)
{
    memset(out, 0, sizeof *out);
    if (!cJSON_IsObject(inst))
        return rl_err(err, RL_EPARSE, "%s: expected a JSON object (one SWE-bench instance)", where);
    const char *id, *repo, *base, *patch, *tpatch, *problem;
    cJSON *f2p = NULL, *p2p = NULL, *t = NULL;
    char repos[4096], root[4200];
    const char *wrote = NULL; /* the snapshot, removed again on an error */
    int rc;
    if ((rc = field_str(&id, inst, "instance_id", 0, where, err)) < 0 ||
        (rc = field_str(&repo, inst, "repo", 0, where, err)) < 0 ||
        (rc = field_str(&base, inst, "base_commit", 0, where, err)) < 0 ||
        (rc = field_str(&patch, inst, "patch", 0, where, err)) < 0 ||
        (rc = field_str(&tpatch, inst, "test_patch", 0, where, err)) < 0 ||
        (rc = field_str(&problem, inst, "problem_statement", 0, where, err)) < 0 ||
        (rc = field_ids(&f2p, inst, "FAIL_TO_PASS", where, err)) < 0 ||
        (rc = field_ids(&p2p, inst, "PASS_TO_PASS", where, err)) < 0)
        goto out;
    if (strlen(id) > RL_TASK_REPO_MAX) {
        rc = rl_err(err, RL_ELIMIT, "%s: field \"instance_id\": expected at most %d bytes (it names the "
                    "snapshot folder), got %zu", where, RL_TASK_REPO_MAX, strlen(id));
        goto out;
    }
    for (const char *p = id; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-' && *p != '.') {
            rc = rl_err(err, RL_EINVAL, "%s: field \"instance_id\": expected only letters, digits, '_', '-' "
                        "and '.', got \"%.100s\"", where, id);
            goto out;
        }
    if (!strcmp(id, ".") || !strcmp(id, "..")) {
        rc = rl_err(err, RL_EINVAL, "%s: field \"instance_id\": expected a name, got \"%s\"", where, id);
        goto out;
    }
    if (!is_hex_id(base)) {
        rc = rl_err(err, RL_EINVAL, "%s: field \"base_commit\": expected a commit id (7-40 hex digits), got "
                    "\"%.60s\"", where, base);
        goto out;
    }
    const swb_repo *r = find_repo(o, repo);
    if (!r) {
        rc = rl_err(err, RL_ENOENT, "%s: repo \"%.100s\": no --repo %.100s=DIR given for it", where, repo, repo);
        goto out;
    }
    if (!r->test_cmd || !*r->test_cmd) {
        rc = rl_err(err, RL_EINVAL, "%s: repo \"%.100s\": no test command (--test-cmd after its --repo)", where,
                    repo);
        goto out;
    }
    if (cJSON_GetArraySize(f2p) == 0) {
        rc = rl_err(err, RL_EINVAL, "%s: field \"FAIL_TO_PASS\": expected at least one test id", where);
        goto out;
    }

    /* the ids, mapped */
    size_t nids = (size_t)cJSON_GetArraySize(f2p) + (size_t)cJSON_GetArraySize(p2p);
    if (!(out->ids = calloc(nids + 1, sizeof *out->ids))) {
        rc = rl_err(err, RL_ENOMEM, "%s: out of memory", where);
        goto out;
    }
    t = cJSON_CreateObject();
    cJSON *nf = cJSON_CreateArray(), *np = cJSON_CreateArray();
    cJSON_AddItemToObject(t, "FAIL_TO_PASS", nf);
    cJSON_AddItemToObject(t, "PASS_TO_PASS", np);
    if ((rc = map_ids(nf, out, f2p, "FAIL_TO_PASS", where, err)) < 0 ||
        (rc = map_ids(np, out, p2p, "PASS_TO_PASS", where, err)) < 0)
        goto out;
    const cJSON *it;
    cJSON_ArrayForEach(it, np) if (has_str(nf, it->valuestring)) {
        rc = rl_err(err, RL_EINVAL, "%s: test %s is in both FAIL_TO_PASS and PASS_TO_PASS (after mapping ids "
                    "to names)", where, it->valuestring);
        goto out;
    }

    /* the snapshot */
    if (str_fmt(repos, sizeof repos, "%s/repos", o->out_dir) < 0 || str_fmt(root, sizeof root, "%s/%s", repos, id) < 0) {
        rc = rl_err(err, RL_ELIMIT, "%s: output path too long", where);
        goto out;
    }
    if ((rc = snapshot(r->dir, base, tpatch, root, where, err)) < 0) {
        fs_remove_tree(root, NULL);
        goto out;
    }
    wrote = root;

    /* protected paths: the test files, the runner's configuration */
    cJSON *prot = cJSON_CreateArray(), *gold = cJSON_CreateArray();
    cJSON_AddItemToObject(t, "protected_paths", prot);
    rc = diff_paths(prot, tpatch, "test_patch", where, err);
    if (rc == 0)
        rc = diff_paths(gold, patch, "patch", where, err);
    for (size_t k = 0; rc == 0 && k < sizeof SWB_RUNNER_FILES / sizeof *SWB_RUNNER_FILES; k++) {
        char p[4400];
        struct stat st;
        str_fmt(p, sizeof p, "%s/%s", root, SWB_RUNNER_FILES[k]);
        if (!lstat(p, &st) && S_ISREG(st.st_mode) && !has_str(gold, SWB_RUNNER_FILES[k]) &&
            !has_str(prot, SWB_RUNNER_FILES[k]))
            cJSON_AddItemToArray(prot, cJSON_CreateString(SWB_RUNNER_FILES[k]));
    }
    int gold_files = cJSON_GetArraySize(gold);
    cJSON_Delete(gold);
    if (rc < 0)
        goto out;
    if (cJSON_GetArraySize(prot) > RL_TASK_PATHS_MAX) {
        rc = rl_err(err, RL_ELIMIT, "%s: field \"test_patch\": touches %d files, expected at most %d "
                    "(they become protected paths)", where, cJSON_GetArraySize(prot), RL_TASK_PATHS_MAX);
        goto out;
    }

    /* the task */
    cJSON *extra = cJSON_Duplicate(inst, 1);
    for (size_t k = 0; k < sizeof SWB_TAKEN / sizeof *SWB_TAKEN; k++)
        cJSON_DeleteItemFromObjectCaseSensitive(extra, SWB_TAKEN[k]);
    cJSON_AddStringToObject(t, "instance_id", id);
    cJSON_AddStringToObject(t, "repo", id);
    cJSON_AddStringToObject(t, "problem_statement", problem);
    cJSON_AddStringToObject(t, "bug", tpatch);
    cJSON_AddStringToObject(t, "patch", patch);
    cJSON_AddStringToObject(t, "test_cmd", r->test_cmd);
    cJSON_AddStringToObject(t, "test_format", r->test_format ? r->test_format : "junit");
    cJSON_AddNumberToObject(t, "timeout_s", r->timeout_s > 0 ? r->timeout_s : SWB_TIMEOUT_DEFAULT);
    cJSON_AddStringToObject(t, "split", o->split ? o->split : "train");
    cJSON_AddStringToObject(t, "kind", gold_files > 1 ? "cross_file" : "single_edit");
    cJSON_AddItemToObject(t, "extra", extra);
    char *json = cJSON_PrintUnformatted(t);
    if (!json) {
        rc = rl_err(err, RL_ENOMEM, "%s: out of memory", where);
        goto out;
    }
    rc = task_parse(&out->task, json, where, repos, err);
    cJSON_free(json);
out:
    cJSON_Delete(t);
    cJSON_Delete(f2p);
    cJSON_Delete(p2p);
    if (rc < 0) {
        if (wrote)
            fs_remove_tree(wrote, NULL);
        swb_instance_dispose(out);
    }
    return rc;
}

void swb_instance_dispose(swb_instance *x)
{
    task_free(x->task);
    for (size_t i = 0; i < x->nids; i++)
        free(x->ids[i]);
    free(x->ids);
    memset(x, 0, sizeof *x);
}

/* ---- validation --------------------------------------------------------------- */

int swb_validate(val_result *out, const swb_instance *x, int runs, int slot, char *err)
{
    ws_opts wo;
    ws_opts_default(&wo);
    ws_tree *ws;
    memset(out, 0, sizeof *out);
    int rc = ws_open_task(&ws, &wo, x->task, slot, err);
    if (rc < 0)
        return rc;
    rc = val_task(out, x->task, ws, runs, err);
    ws_free(ws);
    if (rc < 0 || out->ok)
        return rc;
    /* "...: FAIL_TO_PASS test NAME was not reported (...)": name the id */
    const task *t = x->task;
    for (size_t i = 0; i < x->nids; i++) {
        const char *name = i < t->fail_to_pass.n ? t->fail_to_pass.v[i] : t->pass_to_pass.v[i - t->fail_to_pass.n];
        char probe[RL_TASK_TEST_ID_MAX + 40];
        str_fmt(probe, sizeof probe, " test %s was not reported", name);
        const char *hit = strstr(out->why, probe);
        if (!hit)
            continue;
        char why[sizeof out->why];
        const char *stage = str_has_prefix(out->why, "at the base") ? "at the base" : "with the gold patch";
        char shown[256];
        show_id(shown, sizeof shown, x->ids[i]);
        snprintf(why, sizeof why, "test id '%.150s' (read as %.100s) matches no test the run reports (%s; or "
                 "the run stopped before it)", shown, name, stage);
        memcpy(out->why, why, sizeof why);
        break;
    }
    return 0;
}

int swb_write_task(const swb_instance *x, const char *out_dir, char *err)
{
    char dir[4096], path[4400];
    if (str_fmt(dir, sizeof dir, "%s/tasks", out_dir) < 0 ||
        str_fmt(path, sizeof path, "%s/%s.json", dir, x->task->instance_id) < 0)
        return rl_err(err, RL_ELIMIT, "%s: output path too long", out_dir);
    int rc = fs_mkdirs(dir, err);
    if (rc < 0)
        return rc;
    char *json = task_to_json(x->task);
    if (!json)
        return rl_err(err, RL_ENOMEM, "%s: out of memory", path);
    rc = fs_write_atomic(path, json, strlen(json), err);
    free(json);
    return rc;
}

void swb_discard(const swb_instance *x, const char *out_dir)
{
    char root[4400];
    if (x->task && str_fmt(root, sizeof root, "%s/repos/%s", out_dir, x->task->repo) == 0)
        fs_remove_tree(root, NULL);
}

/* ---- export ------------------------------------------------------------------- */

int swb_export(swb_export_stats *st, const char *out_path, const char *records_path, const char *model, char *err)
{
    memset(st, 0, sizeof *st);
    FILE *f;
    int rc = fs_fopen_read(&f, records_path, 0, err);
    if (rc < 0)
        return rc;
    buf_t out;
    buf_init(&out, RL_SWB_PREDICTIONS_MAX);
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t n;
    while (rc == 0 && (n = getline(&line, &cap, f)) > 0) {
        lineno++;
        if ((size_t)n > RL_SWB_RECORD_LINE_MAX) {
            rc = rl_err(err, RL_ELIMIT, "%s:%zu: record longer than %u bytes", records_path, lineno,
                        RL_SWB_RECORD_LINE_MAX);
            break;
        }
        size_t k = strspn(line, " \t\r\n");
        if (line[k] == 0)
            continue;
        cJSON *rec = cJSON_ParseWithLength(line, (size_t)n);
        const cJSON *task = cJSON_GetObjectItemCaseSensitive(rec, "task");
        const cJSON *patch = cJSON_GetObjectItemCaseSensitive(rec, "patch");
        const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(rec, "config");
        const cJSON *pol = cJSON_GetObjectItemCaseSensitive(cfg, "policy");
        if (!cJSON_IsObject(rec))
            rc = rl_err(err, RL_EPARSE, "%s:%zu: expected a trajectory record (one JSON object per line)",
                        records_path, lineno);
        else if (!cJSON_IsString(task) || !*task->valuestring)
            rc = rl_err(err, RL_EINVAL, "%s:%zu: field \"task\": expected the task's instance_id (a string)",
                        records_path, lineno);
        else if (patch && !cJSON_IsString(patch) && !cJSON_IsNull(patch))
            rc = rl_err(err, RL_EINVAL, "%s:%zu: field \"patch\": expected a string or null", records_path, lineno);
        else if (!model && !cJSON_IsString(pol))
            rc = rl_err(err, RL_EINVAL, "%s:%zu: field \"config.policy\": missing (give --model-name)",
                        records_path, lineno);
        if (rc == 0) {
            cJSON *p = cJSON_CreateObject();
            const char *mp = cJSON_IsString(patch) ? patch->valuestring : "";
            cJSON_AddStringToObject(p, "instance_id", task->valuestring);
            cJSON_AddStringToObject(p, "model_name_or_path", model ? model : pol->valuestring);
            cJSON_AddStringToObject(p, "model_patch", mp);
            char *s = cJSON_PrintUnformatted(p);
            cJSON_Delete(p);
            if (!s || buf_puts(&out, s) < 0 || buf_putc(&out, '\n') < 0)
                rc = rl_err(err, s ? RL_ELIMIT : RL_ENOMEM, "%s: predictions past %u bytes", out_path,
                            RL_SWB_PREDICTIONS_MAX);
            cJSON_free(s);
            st->records++;
            st->no_patch += !*mp;
        }
        cJSON_Delete(rec);
    }
    if (rc == 0 && ferror(f))
        rc = rl_err(err, RL_EIO, "%s: read error", records_path);
    free(line);
    fclose(f);
    if (rc == 0)
        rc = fs_write_atomic(out_path, out.len ? out.data : "", out.len, err);
    buf_dispose(&out);
    return rc;
}
