/* cmd_subcmd.c - see subcmd.h. Program code: it prints the usage and
 * the unknown-command message, so it stays out of libcommon.a and is
 * linked into the programs (and bin/check_all) as an object. */
#include "common/subcmd.h"

#include <stdio.h>
#include <string.h>

static void subcmd_usage(FILE *f, const char *prog, const subcmd *cmds, size_t n)
{
    fprintf(f, "usage: %s COMMAND [ARGS...]\n\ncommands:\n", prog);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].help);
    fprintf(f, "\n'%s COMMAND --help' describes a command.\n", prog);
}

int subcmd_dispatch(const char *prog, const subcmd *cmds, size_t n, int argc, char **argv)
{
    if (argc < 2) {
        subcmd_usage(stderr, prog, cmds, n);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        subcmd_usage(stdout, prog, cmds, n);
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        if (!strcmp(argv[1], cmds[i].name))
            return cmds[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "%s: unknown command '%s' (expected one of the commands in '%s --help')\n", prog,
            argv[1], prog);
    return 2;
}
