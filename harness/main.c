/* main.c - the `harness` command as a small program: linked with the common
 * and sandbox layers only, it prints the usage and runs `exec` (the
 * sandbox command, in this process) itself, and executes `harness-core`
 * (harness/main_core.c), next to it, for every other command. So `harness
 * --help` and `harness exec` load no model, BLAS or git library
 * (docs/DEVELOPING.md, Binaries). */
#include "common/subcmd.h"
#include "harness/cli.h"
#include "harness/commands.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Executes harness-core with "harness-core" and argv (from the command's
 * name on); returns only when that failed. */
static int to_core(int argc, char **argv)
{
    char self[PATH_MAX], core[PATH_MAX + 16];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(stderr, "harness: /proc/self/exe: %s (expected the path of this binary)\n", strerror(errno));
        return 1;
    }
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    snprintf(core, sizeof core, "%s/harness-core", slash ? self : ".");
    char **args = calloc((size_t)argc + 2, sizeof *args);
    if (!args) {
        fprintf(stderr, "harness: out of memory\n");
        return 1;
    }
    args[0] = core;
    for (int i = 0; i < argc; i++)
        args[i + 1] = argv[i];
    execv(core, args);
    fprintf(stderr, "harness: %s: %s (expected the harness-core program next to harness)\n", core,
            strerror(errno));
    free(args);
    return 1;
}

#define ROW(name, fn, help) {name, !strcmp(name, "exec") ? cmd_exec : to_core, help},
int main(int argc, char **argv)
{
    const subcmd commands[] = {HARNESS_COMMANDS(ROW)};
    return subcmd_dispatch("harness", commands, sizeof commands / sizeof commands[0], argc, argv);
}
