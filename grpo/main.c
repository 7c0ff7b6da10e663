/* main.c - the `grpo` command: one binary, one subcommand per file
 * (grpo/cmd_*.c). To add one: declare it in grpo/cli.h and add a row. */
#include "grpo/cli.h"
#include "policy/blascore.h"

#include <stdio.h>
#include <string.h>

typedef struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
} command;

static const command COMMANDS[] = {
    {"tokenizer", cmd_tokenizer, "train the BPE tokenizer (--vocab N --out FILE)"},
    {"generate", cmd_generate, "sample text from a model checkpoint"},
    {"sft", cmd_sft, "supervised fine-tuning on trajectories (--data F --config C --out CKPT)"},
    {"score", cmd_score, "logprobs of recorded policy tokens, copy tokens apart (--ckpt C --data F)"},
    {"train", cmd_train, "GRPO from the test reward (--config FILE [--resume DIR])"},
    {"flywheel", cmd_flywheel, "rejection-sample successes, fine-tune on them, resume RL"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: grpo COMMAND [ARGS...]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        fprintf(f, "  %-10s %s\n", COMMANDS[i].name, COMMANDS[i].help);
    fprintf(f, "\n'grpo COMMAND --help' describes a command.\n");
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
    fprintf(stderr, "grpo: unknown command '%s' (expected one of the commands in 'grpo --help')\n",
            argv[1]);
    return 2;
}
