#include "harness/cli.h"

#include <stdio.h>

/* Placeholder until the sandbox lands: refuses honestly. */
int cmd_exec(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "harness exec: the sandbox is not built yet\n");
    return 1;
}
