/* swebench.h - SWE-bench instances in, predictions out (tasks/README.md,
 * "Importing SWE-bench instances").
 *
 * An instance (one line of SWE-bench's JSONL: instance_id, repo,
 * base_commit, patch, test_patch, FAIL_TO_PASS, PASS_TO_PASS,
 * problem_statement, and further fields) becomes a task of this project
 * against a local git repository of its upstream:
 * - the repository snapshot: the tree at base_commit, read with libgit2
 *   (no checkout, the repository is only read), written as the folder
 *   <out>/repos/<instance_id>/;
 * - `bug` = test_patch, so the task's base (what the agent starts from)
 *   is base_commit with the instance's tests added, and the protected
 *   paths are the files test_patch touches (plus the test runner's
 *   configuration files at the root that the gold patch leaves alone);
 * - `patch` = the gold patch; FAIL_TO_PASS / PASS_TO_PASS = the ids mapped
 *   to the names the result parsers report (swb_test_name);
 * - test_cmd, test_format and timeout_s from the repository's settings
 *   (swb_repo); every other field of the instance, base_commit, the
 *   upstream name and the ids as the instance spelled them, under `extra`.
 * Validation is the validator's (harness/validate.h).
 */
#ifndef RL_SWEBENCH_H
#define RL_SWEBENCH_H

#include "common/log.h"
#include "corpus/task.h"
#include "harness/validate.h"

#include <cjson/cJSON.h>
#include <stddef.h>

/* One upstream repository: where its git history is and how its tests run. */
typedef struct swb_repo {
    const char *name;        /* as instances spell `repo` ("owner/name"); an
                                instance also matches on the part after '/' */
    const char *dir;         /* a local git repository (work tree or bare) */
    const char *test_cmd;    /* NULL: the instance cannot be imported */
    const char *test_format; /* "check", "tap" or "junit"; NULL: "junit" */
    int timeout_s;           /* 0: SWB_TIMEOUT_DEFAULT */
} swb_repo;

#define SWB_TIMEOUT_DEFAULT 120

typedef struct swb_opts {
    const swb_repo *repos;
    size_t nrepos;
    const char *out_dir;     /* snapshots under out_dir/repos/, tasks under out_dir/tasks/ */
    const char *split;       /* "train" (default) or "heldout" */
    rl_log_fn log;
    void *log_ctx;
} swb_opts;

void swb_opts_default(swb_opts *o);

/* Maps one SWE-bench test id onto the name the result parsers report:
 *   tests/test_x.py::test_y            -> test_y
 *   tests/test_x.py::TestC::test_y     -> test_y
 *   tests/test_x.py::test_y[a-b]       -> test_y[a-b]   ("::" inside [...] kept)
 *   test_y (module.TestC)              -> test_y        (Django, unittest)
 *   test_y (module.TestC.test_y)       -> test_y
 *   test_y                             -> test_y        (bare names)
 * Only the first line counts. RL_EINVAL (err names the id) when nothing
 * is left or the name has blanks or control characters. */
int swb_test_name(char *out, size_t n, const char *id, char *err);

/* An imported instance: the task (its repos_dir is out_dir/repos) and the
 * ids as the instance spelled them, FAIL_TO_PASS then PASS_TO_PASS, in the
 * order of the task's lists. */
typedef struct swb_instance {
    task *task;
    char **ids;
    size_t nids;
} swb_instance;

/* Reads one instance (a JSON object; `where` prefixes every error, e.g.
 * "x.jsonl:3"), writes its snapshot (replacing an earlier one of the same
 * instance_id) and builds its task; the task file is not written. Errors
 * are one line: a missing or mistyped field ("field \"base_commit\":
 * missing"), a repo with no --repo, a base_commit the repository lacks, a
 * test_patch that does not apply, an id that maps to nothing. RL_ENOENT
 * for an instance naming a repository that swb_opts lacks. */
int swb_import(swb_instance *out, const cJSON *inst, const swb_opts *o, const char *where, char *err);
void swb_instance_dispose(swb_instance *x);

/* Validates an imported task (val_task with `runs` runs per stage on work
 * tree `slot`) and, when it is not valid because a listed test was not
 * reported, names the instance's id: "test id 'tests/t.py::test_z' (read
 * as test_z) matches no test the run reports (with the gold patch)". */
int swb_validate(val_result *out, const swb_instance *x, int runs, int slot, char *err);

/* Writes the task file out_dir/tasks/<instance_id>.json (atomic). */
int swb_write_task(const swb_instance *x, const char *out_dir, char *err);
/* Removes the snapshot of an instance that did not validate. */
void swb_discard(const swb_instance *x, const char *out_dir);

/* ---- predictions out ---- */

typedef struct swb_export_stats {
    size_t records;     /* lines written */
    size_t no_patch;    /* of them with an empty model_patch (no or null "patch") */
} swb_export_stats;

/* Writes SWE-bench's predictions JSONL to out_path (temp + rename): one
 * line per record of records_path, {"instance_id": record.task,
 * "model_name_or_path": model (NULL: the record's config.policy), "model_patch":
 * record.patch or ""}. Errors name the file and line (a line that is not
 * a JSON object, a record without "task"); nothing is written then. */
int swb_export(swb_export_stats *st, const char *out_path, const char *records_path, const char *model,
               char *err);

#endif
