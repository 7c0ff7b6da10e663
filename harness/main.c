/* main.c - the `harness` command: one binary, one subcommand per file
 * (harness/cmd_*.c). To add one: declare it in harness/cli.h and add a row. */
#include "common/subcmd.h"
#include "harness/cli.h"
#include "model/blascore.h"

#include <string.h>

static const subcmd COMMANDS[] = {
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

int main(int argc, char **argv)
{
    /* `exec` runs in the sbx program, which loads no model library: first,
     * before OpenBLAS is set up again for nothing. */
    if (argc > 1 && !strcmp(argv[1], "exec"))
        return cmd_exec(argc - 1, argv + 1);
    blascore_reexec(argv); /* returns only when the kernels are already right */
    return subcmd_dispatch("harness", COMMANDS, sizeof COMMANDS / sizeof COMMANDS[0], argc, argv);
}
