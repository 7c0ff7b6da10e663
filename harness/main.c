/* main.c - the `harness` command: one binary, one subcommand per file. */
#include "harness/cli.h"

#include <stdio.h>
#include <string.h>

typedef struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
} command;

static const command COMMANDS[] = {
    {"exec", cmd_exec, "run a command in a directory under the sandbox"},
    {"report", cmd_report, "summarize trajectory records: pass rates, GRPO groups, utilization"},
    {"list", cmd_list, "validate and list the tasks"},
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
