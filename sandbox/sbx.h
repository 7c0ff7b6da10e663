/* sbx.h - the sandbox command (sandbox/cmd_sbx.c), program code outside
 * the sandbox library: `sbx` is only this, and the `harness` front runs it
 * as `harness exec`. */
#ifndef RL_SBX_H
#define RL_SBX_H

/* Parses argv (argv[0]: "sbx", or "harness exec" to be named so), runs
 * the command, prints its output and messages; returns the exit status:
 * the command's own, 124 timeout, 128+N signal, 125 sandbox failure, 2
 * usage error. */
int sbx_main(int argc, char **argv);

#endif
