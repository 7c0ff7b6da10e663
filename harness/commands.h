/* commands.h - the `harness` subcommands, one X(name, function, help) row
 * each, shared by the two programs: harness/main.c (the small `harness`,
 * which runs the usage and `exec` itself and hands every other command to
 * `harness-core`) and harness/main_core.c (`harness-core`, all of them).
 * To add a command: a harness/cmd_*.c file, its declaration in
 * harness/cli.h and a row here. */
#ifndef RL_HARNESS_COMMANDS_H
#define RL_HARNESS_COMMANDS_H

#define HARNESS_COMMANDS(X)                                                                        \
    X("run", cmd_run, "run one episode of a task with a policy, with a transcript")                \
    X("batch", cmd_batch, "run many episodes in parallel workers (resumable)")                     \
    X("experiment", cmd_experiment, "run an experiment file: named runs of tasks x config x seeds") \
    X("report", cmd_report, "summarize trajectory records: pass rates, GRPO groups, utilization")  \
    X("show", cmd_show, "render a recorded trajectory with token accounting per turn")             \
    X("list", cmd_list, "validate and list the tasks")                                             \
    X("validate", cmd_validate, "check tasks: base fails where it should, the gold patch fixes it") \
    X("gen", cmd_gen, "synthesize validated bug tasks by mutating a repository")                   \
    X("import", cmd_import, "turn SWE-bench instances against local git repositories into tasks")  \
    X("export", cmd_export, "write SWE-bench predictions JSONL from trajectory records")           \
    X("serve", cmd_env_serve, "serve episodes over HTTP to an external trainer (reset/step/state)")     \
    X("exec", cmd_exec, "run a command in a directory under the sandbox")

#endif
