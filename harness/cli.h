/* cli.h - entry points of the `harness` subcommands (harness/cmd_*.c).
 * Each takes argv with argv[0] = the subcommand name and returns the exit
 * code: 0 ok, 1 the run or validation failed, 2 usage error. */
#ifndef RL_CLI_H
#define RL_CLI_H

int cmd_exec(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_batch(int argc, char **argv);
int cmd_experiment(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_env_serve(int argc, char **argv);

/* Shared by the subcommands (harness/cmd_common.c). */
#include <stddef.h>

/* A log callback (common/log.h) that prints each message as one line on
 * ctx, a FILE * (NULL: stderr). */
void cli_log(void *ctx, int level, const char *msg);

/* A progress line on stderr: a bar on a terminal, else a plain line every
 * RL_BATCH_PLAIN_EVERY_S seconds. `what` names the unit ("episodes"). */
typedef struct cli_progress {
    double t0, last_line;
    int bar;              /* -1: decide from isatty(2) */
    const char *what;
} cli_progress;

void cli_progress_init(cli_progress *p, int bar, const char *what);
/* Shows done of total; ctx is a cli_progress (the shape of a progress
 * callback in batch_opts). */
void cli_progress_show(void *ctx, size_t done, size_t total, const char *extra);

/* Shared by the subcommands (harness/cmd_run.c). */
struct tok;

/* The policy `harness run` and `harness batch` use without --policy: the
 * shipped checkpoint (models/policy.safetensors) when it is readable, else
 * the oracle. */
const char *cli_default_policy(void);

/* Loads the tokenizer used for token accounting when the policy has none:
 * PATH, or models/tokenizer.json when PATH is NULL. A missing default file
 * is not an error unless REQUIRED (then *out stays NULL). */
int cli_load_tokenizer(struct tok **out, const char *path, int required, char *err);

#endif
