/* cmd_exec.c - `harness exec`: the sandbox command (sandbox/cmd_sbx.c),
 * named "harness exec" in its usage and messages. */
#include "harness/cli.h"

#include "sandbox/sbx.h"

int cmd_exec(int argc, char **argv)
{
    if (argc > 0)
        argv[0] = "harness exec";
    return sbx_main(argc, argv);
}
