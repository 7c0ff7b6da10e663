/* cmd_import.c - `harness import --swebench`: SWE-bench instances become
 * validated tasks (harness/swebench.h). */
#include "harness/cli.h"

#include "common/arg.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "harness/swebench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMPORT_REPOS_MAX 64

/* --spec FILE: {"owner/name": {"dir": GITDIR, "test_cmd": CMD, "test_format": F,
 * "timeout_s": S}, ...}; the tree is kept in *keep (it owns the strings). */
static int load_spec(swb_repo *repos, size_t *nrepos, char **owned, cJSON **keep, const char *path)
{
    char *text, err[RL_ERR_MAX];
    size_t len;
    if (fs_read_file(&text, &len, path, RL_TASK_FILE_MAX, err) < 0) {
        fprintf(stderr, "harness import: --spec: %s\n", err);
        return -1;
    }
    cJSON *o = cJSON_ParseWithLength(text, len);
    free(text);
    if (!cJSON_IsObject(o)) {
        fprintf(stderr, "harness import: %s: expected a JSON object {\"owner/name\": {\"dir\": ..., \"test_cmd\": ...}}\n",
                path);
        cJSON_Delete(o);
        return -1;
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, o) {
        const cJSON *dir = cJSON_GetObjectItemCaseSensitive(it, "dir");
        const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(it, "test_cmd");
        const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(it, "test_format");
        const cJSON *to = cJSON_GetObjectItemCaseSensitive(it, "timeout_s");
        const char *bad = !cJSON_IsObject(it) ? "expected an object"
                          : !cJSON_IsString(dir) ? "field \"dir\": expected a string (the git repository)"
                          : !cJSON_IsString(cmd) ? "field \"test_cmd\": expected a string"
                          : fmt && (!cJSON_IsString(fmt) || task_format_from_name(fmt->valuestring) < 0)
                              ? "field \"test_format\": expected check, tap or junit"
                          : to && (!cJSON_IsNumber(to) || to->valuedouble != (int)to->valuedouble ||
                                   to->valueint < RL_TASK_TIMEOUT_MIN || to->valueint > RL_TASK_TIMEOUT_MAX)
                              ? "field \"timeout_s\": expected whole seconds, 1-600"
                              : NULL;
        if (!bad && *nrepos == IMPORT_REPOS_MAX)
            bad = "too many repositories";
        if (bad) {
            fprintf(stderr, "harness import: %s: \"%.100s\": %s\n", path, it->string, bad);
            cJSON_Delete(o);
            return -1;
        }
        owned[*nrepos] = strdup(it->string);
        repos[(*nrepos)++] = (swb_repo){.name = owned[*nrepos - 1],
                                        .dir = dir->valuestring,
                                        .test_cmd = cmd->valuestring,
                                        .test_format = fmt ? fmt->valuestring : NULL,
                                        .timeout_s = to ? to->valueint : 0};
    }
    *keep = o;
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: harness import --swebench FILE.jsonl --out DIR\n"
               "                      --repo NAME=GITDIR --test-cmd CMD [--test-format F] [--timeout S]\n"
               "                      [--repo ...] [--spec FILE] [--split train|heldout] [--runs N]\n"
               "                      [--no-validate]\n"
               "Turns SWE-bench instances (one JSON object per line: instance_id, repo,\n"
               "base_commit, patch, test_patch, FAIL_TO_PASS, PASS_TO_PASS, problem_statement;\n"
               "other fields are kept under the task's \"extra\") into tasks: DIR/repos/ID/ is\n"
               "the tree at base_commit read from the local git repository GITDIR given for the\n"
               "instance's repo (NAME is \"owner/name\" as the instances spell it, or the part\n"
               "after '/'); the task's bug is test_patch, its gold patch the instance's patch,\n"
               "its protected paths the files test_patch touches. Test ids are mapped to the\n"
               "names the result parsers report (tests/t.py::C::test_y -> test_y). --test-cmd,\n"
               "--test-format (check|tap|junit, default junit) and --timeout (seconds, default\n"
               "%d) apply to the --repo before them. --spec FILE gives repositories as JSON:\n"
               "{\"owner/name\": {\"dir\": GITDIR, \"test_cmd\": CMD, \"test_format\": F,\n"
               "\"timeout_s\": S}, ...}. Each task is validated (--runs N per stage, default 1,\n"
               "at most %d) and written to DIR/tasks/ID.json only when valid (--no-validate:\n"
               "written without running its tests).\n"
               "Exit 1 when an instance fails (one line each), 2 on a usage error.\n",
            SWB_TIMEOUT_DEFAULT, RL_VALIDATE_RUNS_MAX);
}

int cmd_import(int argc, char **argv)
{
    const char *file = NULL;
    swb_repo repos[IMPORT_REPOS_MAX];
    char *owned[IMPORT_REPOS_MAX];
    size_t nrepos = 0;
    long runs = 1;
    int validate = 1, rc = 2;
    cJSON *spec = NULL;
    swb_opts o;
    swb_opts_default(&o);
    o.out_dir = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            rc = 0;
            goto done;
        } else if (!strcmp(a, "--swebench") && has) {
            file = argv[++i];
        } else if (!strcmp(a, "--out") && has) {
            o.out_dir = argv[++i];
        } else if (!strcmp(a, "--repo") && has) {
            const char *v = argv[++i], *eq = strchr(v, '=');
            if (!eq || eq == v || !eq[1]) {
                fprintf(stderr, "harness import: --repo: expected NAME=GITDIR, got '%s'\n", v);
                goto done;
            }
            if (nrepos == IMPORT_REPOS_MAX) {
                fprintf(stderr, "harness import: --repo: at most %d repositories\n", IMPORT_REPOS_MAX);
                goto done;
            }
            owned[nrepos] = strndup(v, (size_t)(eq - v));
            repos[nrepos] = (swb_repo){.name = owned[nrepos], .dir = eq + 1};
            nrepos++;
        } else if ((!strcmp(a, "--test-cmd") || !strcmp(a, "--test-format") || !strcmp(a, "--timeout")) && has) {
            const char *v = argv[++i];
            if (!nrepos) {
                fprintf(stderr, "harness import: %s: expected after a --repo NAME=GITDIR it applies to\n", a);
                goto done;
            }
            swb_repo *r = &repos[nrepos - 1];
            if (a[2] == 't' && a[7] == 'c') {
                r->test_cmd = v;
            } else if (a[2] == 't' && a[7] == 'f') {
                if (task_format_from_name(v) < 0) {
                    fprintf(stderr, "harness import: --test-format: expected check, tap or junit, got '%s'\n", v);
                    goto done;
                }
                r->test_format = v;
            } else if (arg_int(&r->timeout_s, a, v, RL_TASK_TIMEOUT_MIN, RL_TASK_TIMEOUT_MAX, NULL) < 0) {
                fprintf(stderr, "harness import: --timeout: expected %d-%d seconds, got '%s'\n", RL_TASK_TIMEOUT_MIN,
                        RL_TASK_TIMEOUT_MAX, v);
                goto done;
            }
        } else if (!strcmp(a, "--split") && has) {
            o.split = argv[++i];
            if (task_split_from_name(o.split) < 0) {
                fprintf(stderr, "harness import: --split: expected train or heldout, got '%s'\n", o.split);
                goto done;
            }
        } else if (!strcmp(a, "--runs") && has) {
            if (arg_long(&runs, a, argv[++i], 1, RL_VALIDATE_RUNS_MAX, NULL) < 0) {
                fprintf(stderr, "harness import: --runs: expected 1-%d, got '%s'\n", RL_VALIDATE_RUNS_MAX, argv[i]);
                goto done;
            }
        } else if (!strcmp(a, "--spec") && has) {
            if (spec) {
                fprintf(stderr, "harness import: --spec: expected once\n");
                goto done;
            }
            if (load_spec(repos, &nrepos, owned, &spec, argv[++i]) < 0)
                goto done;
        } else if (!strcmp(a, "--no-validate")) {
            validate = 0;
        } else {
            fprintf(stderr, "harness import: unexpected argument '%s' (see --help)\n", a);
            goto done;
        }
    }
    if (!file || !o.out_dir || !nrepos) {
        fprintf(stderr, "harness import: expected --swebench FILE.jsonl, --out DIR and at least one --repo "
                        "NAME=GITDIR or a --spec FILE (see --help)\n");
        goto done;
    }
    o.repos = repos;
    o.nrepos = nrepos;

    char err[RL_ERR_MAX];
    FILE *f;
    if (fs_fopen_read(&f, file, 0, err) < 0) {
        fprintf(stderr, "harness import: %s\n", err);
        rc = 1;
        goto done;
    }
    char *line = NULL;
    size_t cap = 0, lineno = 0, total = 0, imported = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) {
        lineno++;
        if (line[strspn(line, " \t\r\n")] == 0)
            continue;
        total++;
        char where[4200];
        snprintf(where, sizeof where, "%s:%zu", file, lineno);
        if ((size_t)n > RL_SWB_INSTANCE_LINE_MAX) {
            fprintf(stderr, "harness import: %s: instance longer than %u bytes\n", where, RL_SWB_INSTANCE_LINE_MAX);
            continue;
        }
        cJSON *inst = cJSON_ParseWithLength(line, (size_t)n);
        if (!inst) {
            fprintf(stderr, "harness import: %s: invalid JSON (expected one SWE-bench instance per line)\n", where);
            continue;
        }
        swb_instance x;
        if (swb_import(&x, inst, &o, where, err) < 0) {
            fprintf(stderr, "harness import: %s\n", err);
            cJSON_Delete(inst);
            continue;
        }
        cJSON_Delete(inst);
        val_result v = {.ok = 1};
        if (validate && swb_validate(&v, &x, (int)runs, 768, err) < 0) {
            fprintf(stderr, "harness import: %s: %s\n", x.task->instance_id, err);
            swb_discard(&x, o.out_dir);
        } else if (!v.ok) {
            fprintf(stderr, "harness import: %s: %s: not valid: %s\n", where, x.task->instance_id, v.why);
            swb_discard(&x, o.out_dir);
        } else if (swb_write_task(&x, o.out_dir, err) < 0) {
            fprintf(stderr, "harness import: %s\n", err);
        } else {
            imported++;
            if (validate)
                printf("%s: ok (F2P %zu, P2P %zu, base %.0f ms, gold %.0f ms)%s%s\n", x.task->instance_id, v.f2p,
                       v.p2p, v.base_ms, v.gold_ms, v.warn[0] ? "; warning: " : "", v.warn);
            else
                printf("%s: written (not validated)\n", x.task->instance_id);
        }
        swb_instance_dispose(&x);
    }
    free(line);
    fclose(f);
    printf("%zu instances, %zu imported, %zu failed\n", total, imported, total - imported);
    rc = total && imported == total ? 0 : 1;
done:
    for (size_t i = 0; i < nrepos; i++)
        free(owned[i]);
    cJSON_Delete(spec);
    return rc;
}
