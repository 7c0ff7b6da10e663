/* cmd_exec.c - `harness exec`: executes the `sbx` program next to this
 * binary (sandbox/main.c) with argv[0] = "harness exec" and the same
 * arguments, so the command runs under the same sandbox and options. */
#include "harness/cli.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cmd_exec(int argc, char **argv)
{
    char self[PATH_MAX], sbx[PATH_MAX + 8];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(stderr, "harness exec: /proc/self/exe: %s (expected the path of this binary)\n",
                strerror(errno));
        return 125;
    }
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    snprintf(sbx, sizeof sbx, "%s/sbx", slash ? self : ".");
    char **args = calloc((size_t)argc + 1, sizeof *args);
    if (!args) {
        fprintf(stderr, "harness exec: out of memory\n");
        return 125;
    }
    args[0] = "harness exec";
    for (int i = 1; i < argc; i++)
        args[i] = argv[i];
    execv(sbx, args);
    fprintf(stderr, "harness exec: %s: %s (expected the sbx program next to harness)\n", sbx,
            strerror(errno));
    free(args);
    return 125;
}
