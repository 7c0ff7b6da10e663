/* cmd_run.c - `harness run`: one episode with a readable transcript. */
#include "harness/cli.h"

#include "common/err.h"
#include "common/fsutil.h"
#include "harness/cliopt.h"
#include "harness/episode.h"
#include "harness/workspace.h"
#include "policy/policy.h"
#include "protocol/tokenizer.h"
#include "corpus/task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_MODEL "models/policy.safetensors"
#define DEFAULT_TOKENIZER "models/tokenizer.json"

static void usage(FILE *f)
{
    fprintf(f, "usage: harness run --task ID [--out FILE] [--tokenizer FILE] [--tasks-dir DIR] [--repos-dir DIR]\n"
               "                   [config flags]\n"
               "Runs one episode, prints a transcript, appends the record to FILE\n"
               "(default runs/<timestamp>/trajectories.jsonl).\nconfig flags:\n%s",
            cliopt_config_help());
}

const char *cli_default_policy(void)
{
    return access(DEFAULT_MODEL, R_OK) == 0 ? "model:" DEFAULT_MODEL : "oracle";
}

int cli_load_tokenizer(tok_t **out, const char *path, int required, char *err)
{
    *out = NULL;
    if (!path)
        path = DEFAULT_TOKENIZER;
    if (!required && access(path, R_OK) != 0)
        return 0;
    return tok_load(out, path, err);
}

int cmd_run(int argc, char **argv)
{
    ep_config cfg;
    ep_config_default(&cfg);
    cfg.policy = cli_default_policy();
    const char *task_id = NULL, *out = NULL, *tok_path = NULL, *tasks_dir = "tasks", *repos_dir = "repos";
    char err[RL_ERR_MAX];
    for (int i = 1; i < argc; i++) {
        int r;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        }
        if ((r = cliopt_config(&cfg, &i, argc, argv, "run", err))) {
            if (r == 2) {
                fprintf(stderr, "%s\n", err);
                return 2;
            }
            continue;
        }
        if (i + 1 < argc && !strcmp(argv[i], "--task")) {
            task_id = argv[++i];
        } else if (i + 1 < argc && !strcmp(argv[i], "--out")) {
            out = argv[++i];
        } else if (i + 1 < argc && !strcmp(argv[i], "--tokenizer")) {
            tok_path = argv[++i];
        } else if (i + 1 < argc && !strcmp(argv[i], "--tasks-dir")) {
            tasks_dir = argv[++i];
        } else if (i + 1 < argc && !strcmp(argv[i], "--repos-dir")) {
            repos_dir = argv[++i];
        } else {
            fprintf(stderr, "harness run: unexpected argument '%s' (see --help)\n", argv[i]);
            return 2;
        }
    }
    if (!task_id) {
        usage(stderr);
        return 2;
    }
    task *t;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.json", tasks_dir, task_id);
    task_set all = {0};
    if (access(path, R_OK) == 0) {
        if (task_load(&t, path, repos_dir, err) < 0) {
            fprintf(stderr, "harness run: %s\n", err);
            return 1;
        }
    } else {
        if (task_set_load(&all, tasks_dir, repos_dir, err) < 0) {
            fprintf(stderr, "harness run: %s\n", err);
            return 1;
        }
        task *found = task_set_find(&all, task_id);
        if (!found) {
            fprintf(stderr, "harness run: --task: no task '%s' (see 'harness list')\n", task_id);
            task_set_dispose(&all);
            return 2;
        }
        t = found;
    }
    int rc = 1;
    tok_t *tok = NULL;
    policy *pol = NULL;
    ws_tree *ws = NULL;
    char *rec = NULL;
    pol_env env;
    ep_config_pol_env(&env, &cfg);
    env.gold_patch = t->patch;
    env.log = cli_log;
    env.log_ctx = stderr;
    if (cli_load_tokenizer(&tok, tok_path, tok_path != NULL, err) < 0) {
        fprintf(stderr, "harness run: --tokenizer: %s\n", err);
        goto out;
    }
    if (pol_open(&pol, cfg.policy, &env, err) < 0) {
        fprintf(stderr, "harness run: --policy: %s\n", err);
        rc = 2;
        goto out;
    }
    /* a chat server applies its own template: the harness's ids would
     * not be what it saw */
    cfg.tok = pol->tok ? pol->tok : ep_config_is_openai(&cfg) ? NULL : tok;
    ws_opts wo;
    ws_opts_default(&wo);
    if (ws_open_task(&ws, &wo, t, 0, err) < 0) {
        fprintf(stderr, "harness run: %s\n", err);
        goto out;
    }
    cfg.log = cli_log;
    cfg.log_ctx = stdout;
    cfg.color = isatty(1);
    if (ep_run(&rec, t, &cfg, ws, pol, err) < 0) {
        fprintf(stderr, "harness run: %s\n", err);
        goto out;
    }
    char outp[4096];
    if (out) {
        snprintf(outp, sizeof outp, "%s", out);
    } else {
        char stamp[32];
        time_t now = time(NULL);
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", gmtime(&now));
        snprintf(outp, sizeof outp, "runs/%s-%ld/trajectories.jsonl", stamp, (long)getpid());
    }
    char dir[4096];
    fs_dirname(dir, sizeof dir, outp);
    if (fs_mkdirs(dir, err) < 0 || fs_append_record(outp, rec, strlen(rec), err) < 0) {
        fprintf(stderr, "harness run: %s\n", err);
        goto out;
    }
    printf("record: %s\n", outp);
    rc = 0;
out:
    free(rec);
    ws_free(ws);
    pol_free(pol);
    tok_free(tok);
    if (all.v)
        task_set_dispose(&all);
    else if (t)
        task_free(t);
    return rc;
}
