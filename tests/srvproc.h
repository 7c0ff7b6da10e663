/* srvproc.h - starting a server program and waiting until it listens:
 * what the tests of the HTTP servers (srvutil.h) and bench_rollout share.
 * No test framework here, so a benchmark can link it. */
#ifndef RL_TESTS_SRVPROC_H
#define RL_TESTS_SRVPROC_H

#include <sys/types.h>

/* Starts argv (argv[0] a path; NULL-terminated) with stderr to log and
 * the "NAME=VALUE" strings of env (NULL-terminated, or NULL) set, and
 * waits up to wait_ms until the log names its address "127.0.0.1:PORT"
 * (the servers print it once listening; started with --port 0 they pick
 * a free port). Returns the pid and the port in *port, or -1 when the
 * program exited or did not listen in time (it is then killed). */
pid_t sp_start(int *port, const char *log, const char *const *argv, const char *const *env, int wait_ms);

#endif
