/* subcmd.h - the subcommand table shared by the `harness`,
 * `harness-core` and `grpo` programs.
 *
 * Each program has one table of {name, function, help} rows and hands its
 * argv to subcmd_dispatch, which prints the usage or runs the named command.
 * It prints, so it is program code (common/cmd_subcmd.c), not part of the
 * common library: the programs link its object.
 */
#ifndef RL_SUBCMD_H
#define RL_SUBCMD_H

#include <stddef.h>

typedef struct subcmd {
    const char *name;
    int (*fn)(int argc, char **argv); /* gets argv from the command's name on */
    const char *help;                 /* one line for the usage */
} subcmd;

/* Runs argv[1] from `cmds` (n rows) and returns its exit code; "--help",
 * "-h" and "help" print the usage to stdout (0); no command or an unknown
 * one prints to stderr (2). `prog` names the binary in the messages. */
int subcmd_dispatch(const char *prog, const subcmd *cmds, size_t n, int argc, char **argv);

#endif
