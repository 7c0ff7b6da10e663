/* cmd_list.c - `harness list`: validates every task file and lists the tasks.
 *
 * Loading is the full strict validation of task_set_load, so `list` is also
 * the quickest check that the task folder is sound: a bad file prints its
 * one-line error and exits 1. Filters combine (AND); output is a table with
 * a count line, or one JSON array with --json.
 */
#include "harness/cli.h"

#include "common/err.h"
#include "common/str.h"
#include "corpus/task.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct list_opts {
    const char *tasks_dir;
    const char *repos_dir;
    const char *repo;
    int split; /* -1: any */
    int kind;  /* -1: any */
    int json;
} list_opts;

static void list_usage(FILE *f)
{
    fprintf(f,
            "usage: harness list [--split train|heldout] [--repo NAME] [--kind KIND] [--json]\n"
            "                    [--tasks-dir DIR] [--repos-dir DIR]\n"
            "\n"
            "Loads and validates every task (DIR/*.json and DIR/generated/**) and lists\n"
            "them: id, repo, kind, split, number of FAIL_TO_PASS and PASS_TO_PASS tests.\n"
            "  --split S       only tasks of split S\n"
            "  --repo R        only tasks of repository R\n"
            "  --kind K        single_edit, look_again, cross_file or generated\n"
            "  --json          one JSON array of {instance_id, repo, kind, split,\n"
            "                  test_format, timeout_s, FAIL_TO_PASS, PASS_TO_PASS, path}\n"
            "  --tasks-dir D   folder of task files (default: tasks)\n"
            "  --repos-dir D   folder of repositories (default: repos)\n"
            "Exit: 0 listed, 1 a task file is invalid, 2 usage error.\n");
}

/* Accepts "--flag VALUE" and "--flag=VALUE"; returns the value or NULL. */
static const char *flag_value(int argc, char **argv, int *i, const char *flag)
{
    size_t n = strlen(flag);
    if (!str_has_prefix(argv[*i], flag))
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] != '\0')
        return NULL;
    if (*i + 1 >= argc)
        return "";
    return argv[++*i];
}

static int list_parse_args(list_opts *o, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            list_usage(stdout);
            return 1;
        }
        if (!strcmp(a, "--json")) {
            o->json = 1;
        } else if ((v = flag_value(argc, argv, &i, "--tasks-dir"))) {
            o->tasks_dir = v;
        } else if ((v = flag_value(argc, argv, &i, "--repos-dir"))) {
            o->repos_dir = v;
        } else if ((v = flag_value(argc, argv, &i, "--repo"))) {
            o->repo = v;
        } else if ((v = flag_value(argc, argv, &i, "--split"))) {
            if ((o->split = task_split_from_name(v)) < 0) {
                fprintf(stderr, "harness list: --split '%s': expected train or heldout\n", v);
                return -1;
            }
        } else if ((v = flag_value(argc, argv, &i, "--kind"))) {
            if ((o->kind = task_kind_from_name(v)) < 0) {
                fprintf(stderr,
                        "harness list: --kind '%s': expected single_edit, look_again, cross_file or generated\n",
                        v);
                return -1;
            }
        } else {
            fprintf(stderr, "harness list: unknown argument '%s' (see harness list --help)\n", a);
            return -1;
        }
        if (v && !*v) {
            fprintf(stderr, "harness list: %s: expected a value\n", a);
            return -1;
        }
    }
    return 0;
}

static int list_keep(const list_opts *o, const task *t)
{
    return (o->split < 0 || (int)t->split == o->split) && (o->kind < 0 || (int)t->kind == o->kind) &&
           (!o->repo || !strcmp(o->repo, t->repo));
}

static cJSON *strs_array(const task_strs *s)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < s->n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(s->v[i]));
    return a;
}

static int list_print_json(task **v, size_t n)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; arr && i < n; i++) {
        const task *t = v[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "instance_id", t->instance_id);
        cJSON_AddStringToObject(o, "repo", t->repo);
        cJSON_AddStringToObject(o, "kind", task_kind_name(t->kind));
        cJSON_AddStringToObject(o, "split", task_split_name(t->split));
        cJSON_AddStringToObject(o, "test_format", task_format_name(t->test_format));
        cJSON_AddNumberToObject(o, "timeout_s", t->timeout_s);
        cJSON_AddItemToObject(o, "FAIL_TO_PASS", strs_array(&t->fail_to_pass));
        cJSON_AddItemToObject(o, "PASS_TO_PASS", strs_array(&t->pass_to_pass));
        cJSON_AddStringToObject(o, "path", t->path);
        cJSON_AddItemToArray(arr, o);
    }
    char *s = arr ? cJSON_PrintUnformatted(arr) : NULL;
    cJSON_Delete(arr);
    if (!s) {
        fprintf(stderr, "harness list: out of memory\n");
        return 1;
    }
    printf("%s\n", s);
    cJSON_free(s);
    return 0;
}

static void list_print_table(task **v, size_t n)
{
    int wid = 2, wrepo = 4, wkind = 4;
    for (size_t i = 0; i < n; i++) {
        int a = (int)strlen(v[i]->instance_id), b = (int)strlen(v[i]->repo),
            c = (int)strlen(task_kind_name(v[i]->kind));
        wid = a > wid ? a : wid;
        wrepo = b > wrepo ? b : wrepo;
        wkind = c > wkind ? c : wkind;
    }
    size_t train = 0;
    printf("%-*s  %-*s  %-*s  %-7s  %4s  %4s\n", wid, "id", wrepo, "repo", wkind, "kind", "split",
           "F2P", "P2P");
    for (size_t i = 0; i < n; i++) {
        const task *t = v[i];
        train += t->split == TASK_SPLIT_TRAIN;
        printf("%-*s  %-*s  %-*s  %-7s  %4zu  %4zu\n", wid, t->instance_id, wrepo, t->repo, wkind,
               task_kind_name(t->kind), task_split_name(t->split), t->fail_to_pass.n,
               t->pass_to_pass.n);
    }
    printf("%zu task%s (%zu train, %zu heldout)\n", n, n == 1 ? "" : "s", train, n - train);
}

int cmd_list(int argc, char **argv)
{
    list_opts o = {"tasks", "repos", NULL, -1, -1, 0};
    int rc = list_parse_args(&o, argc, argv);
    if (rc)
        return rc > 0 ? 0 : 2;
    task_set all;
    char err[RL_ERR_MAX];
    if (task_set_load(&all, o.tasks_dir, o.repos_dir, err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    task **keep = malloc((all.n ? all.n : 1) * sizeof *keep);
    if (!keep) {
        task_set_dispose(&all);
        fprintf(stderr, "harness list: out of memory\n");
        return 1;
    }
    size_t n = 0;
    for (size_t i = 0; i < all.n; i++)
        if (list_keep(&o, all.v[i]))
            keep[n++] = all.v[i];
    rc = 0;
    if (o.json)
        rc = list_print_json(keep, n);
    else
        list_print_table(keep, n);
    free(keep);
    task_set_dispose(&all);
    return rc;
}
