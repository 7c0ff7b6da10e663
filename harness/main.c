/* main.c - the `harness` command: one binary, one subcommand per file. */
#include "harness/cli.h"
#include "policy/blascore.h"

#include <stdio.h>
#include <string.h>

typedef struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
} command;

static const command COMMANDS[] = {
    {"run", cmd_run, "run one episode of a task with a policy, with a transcript"},
    {"batch", cmd_batch, "run many episodes in parallel workers (resumable)"},
    {"experiment", cmd_experiment, "run an experiment file: named runs of tasks x config x seeds"},
    {"report", cmd_report, "summarize trajectory records: pass rates, GRPO groups, utilization"},
    {"show", cmd_show, "render a recorded trajectory with token accounting per turn"},
    {"list", cmd_list, "validate and list the tasks"},
    {"validate", cmd_validate, "check tasks: base fails where it should, the gold patch fixes it"},
    {"gen", cmd_gen, "synthesize validated bug tasks by mutating a repository"},
    {"exec", cmd_exec, "run a command in a directory under the sandbox"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: harness COMMAND [ARGS...]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        fprintf(f, "  %-10s %s\n", COMMANDS[i].name, COMMANDS[i].help);
    fprintf(f, "\n'harness COMMAND --help' describes a command.\n");
}

int main(int argc, char **argv)
{
    blascore_reexec(argv); /* returns only when the kernels are already right */
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        if (!strcmp(argv[1], COMMANDS[i].name))
            return COMMANDS[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "harness: unknown command '%s' (expected one of the commands in 'harness --help')\n", argv[1]);
    return 2;
}
