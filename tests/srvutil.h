/* srvutil.h - what the tests of the HTTP servers share: starting a
 * server program on a free port, stopping it, and one request to it. */
#ifndef RL_TESTS_SRVUTIL_H
#define RL_TESTS_SRVUTIL_H

#include <stddef.h>
#include <sys/types.h>

/* $RL_BIN, else "bin": where the programs under test are. */
const char *su_bin_dir(void);

/* Starts argv (argv[0] a path; NULL-terminated) with stderr to log and
 * the "NAME=VALUE" strings of env (NULL-terminated, or NULL) set, and
 * waits until the log names its address "127.0.0.1:PORT" (the programs
 * print it once listening; started with --port 0 they pick a free port).
 * Returns the pid, the port in *port; fails the test when the program
 * has not started within 20 s. */
pid_t su_spawn(int *port, const char *log, const char *const *argv, const char *const *env);

/* Sends sig and waits for the process; with want_exit0, fails the test
 * unless it exited with status 0. */
void su_stop(pid_t pid, int sig, int want_exit0);

/* One request to 127.0.0.1:port (token: a bearer token, or NULL; json:
 * a body of len bytes, len 0 for strlen). Returns the HTTP status, *body
 * the answer (caller frees). Fails the test when no answer comes. */
long su_call(int port, const char *token, const char *method, const char *path, const char *json, size_t len,
             char **body);

#endif
