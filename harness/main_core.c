/* main_core.c - `harness-core`: every `harness` subcommand (harness/cmd_*.c,
 * listed in harness/commands.h), with the model, libgit2 and the rest
 * linked in. The `harness` program (harness/main.c) executes it for all
 * commands but `exec` and the usage. */
#include "common/subcmd.h"
#include "harness/cli.h"
#include "harness/commands.h"
#include "model/blascore.h"

#define ROW(name, fn, help) {name, fn, help},
static const subcmd COMMANDS[] = {HARNESS_COMMANDS(ROW)};

int main(int argc, char **argv)
{
    blascore_reexec(argv); /* returns only when the kernels are already right */
    return subcmd_dispatch("harness", COMMANDS, sizeof COMMANDS / sizeof COMMANDS[0], argc, argv);
}
