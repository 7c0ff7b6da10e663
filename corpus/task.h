/* task.h - task specs: loading and strict validation (tasks/README.md).
 *
 * Loading never crashes on a bad file: unknown fields, wrong types, a
 * missing repo, an empty FAIL_TO_PASS each give an error naming the file,
 * the field and what was expected. Whether the patches apply is checked
 * by the validator (it needs a work tree), not by the loader.
 */
#ifndef RL_TASK_H
#define RL_TASK_H

#include <stddef.h>

typedef enum task_format { TASK_FMT_CHECK, TASK_FMT_TAP, TASK_FMT_JUNIT, TASK_FMT_UNITY, TASK_FMT_TESTHELP } task_format;
typedef enum task_split { TASK_SPLIT_TRAIN, TASK_SPLIT_HELDOUT } task_split;
typedef enum task_kind {
    TASK_KIND_SINGLE_EDIT,
    TASK_KIND_LOOK_AGAIN,
    TASK_KIND_CROSS_FILE,
    TASK_KIND_GENERATED,
} task_kind;

typedef struct task_strs {
    char **v;
    size_t n;
} task_strs;

typedef struct task {
    char *path;              /* file it was loaded from */
    char *instance_id;
    char *repo;
    char *repos_dir;         /* folder holding repo/: the repos_dir it was
                                loaded with, "repos" when that was NULL */
    char *problem_statement;
    char *bug;               /* diff upstream -> base */
    char *patch;             /* gold fix: diff base -> fixed */
    task_strs fail_to_pass;
    task_strs pass_to_pass;
    char *test_cmd;
    task_format test_format;
    char *test_result_file;  /* may be NULL */
    task_strs protected_paths;
    int timeout_s;
    task_split split;
    task_kind kind;
    /* generator provenance (generated tasks), else seed = -1 */
    long gen_seed;
    char *gen_mutation;
    char *gen_file;
    int gen_line;
    /* "extra": an object of further fields kept as they came (an imported
     * SWE-bench instance's other fields), its JSON text, or NULL; freed
     * with cJSON_free. */
    char *extra;
} task;

/* Parses and validates one task file. repos_dir ("repos") is checked for
 * the repo folder (NULL skips that check). The first problem found gives
 * one line: `FILE: field "NAME": expected ...`. */
int task_load(task **out, const char *path, const char *repos_dir, char *err);
/* Same from a JSON string; `path` is used in messages, and when it ends
 * in ".json" its base name must equal instance_id. */
int task_parse(task **out, const char *json, const char *path, const char *repos_dir, char *err);
void task_free(task *t);

/* The task as JSON (the file format, fields in README order); caller
 * frees with free(). NULL on allocation failure. */
char *task_to_json(const task *t);

typedef struct task_set {
    task **v;
    size_t n;
} task_set;

/* Loads the *.json files of tasks_dir and of tasks_dir/generated/
 * (recursively), sorted by instance_id. Fails on the first bad file or a duplicate instance_id. */
int task_set_load(task_set *out, const char *tasks_dir, const char *repos_dir, char *err);
void task_set_dispose(task_set *s);
/* The task with that id, or NULL. */
task *task_set_find(const task_set *s, const char *instance_id);

/* Selectors, as for `harness batch --tasks`: comma-separated terms, each an
 * id, a glob (fnmatch), `split:train|heldout`, `repo:NAME`, `kind:K`,
 * `all`. Fills out with borrowed pointers in set order, without duplicates. */
int task_select(task_set *out, const task_set *all, const char *selector, char *err);
/* Frees a selection's array, not the tasks it borrows. */
void task_select_dispose(task_set *sel);

/* ---- scoring (the SWE-bench rule) ---- */

struct tr_report;

/* How one test run went for a task. A test the report lacks (crash,
 * timeout, no output) did not pass. */
typedef struct task_outcome {
    size_t f2p_pass, f2p_total;
    size_t p2p_pass, p2p_total;
    int resolved;               /* every FAIL_TO_PASS and PASS_TO_PASS test passed */
    const char *first_f2p_fail; /* first FAIL_TO_PASS id that did not pass, or NULL (borrowed) */
    const char *first_p2p_fail; /* first PASS_TO_PASS id that did not pass, or NULL */
} task_outcome;

void task_score(task_outcome *out, const task *t, const struct tr_report *r);

/* Parses a run's output with the task's test_format (for junit, `text` is
 * the XML of test_result_file). Same contract as the tr_parse_* functions:
 * out is valid even on error. */
int task_parse_results(struct tr_report *out, const task *t, const char *text, size_t len, char *err);

const char *task_format_name(task_format f);
const char *task_split_name(task_split s);
const char *task_kind_name(task_kind k);
/* Name -> enum value; -1 for an unknown name. */
int task_format_from_name(const char *s);
int task_split_from_name(const char *s);
int task_kind_from_name(const char *s);

#endif
