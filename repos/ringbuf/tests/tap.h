/* tap.h - a tiny TAP (Test Anything Protocol) harness.
 *
 * Each test runs in a child process, so a crash or a hang is reported as
 * "not ok" for that test only and the rest still run. The child prints its
 * own result line ("ok N - name" or "not ok N - name") followed by one
 * "# ..." diagnostic per failed check; the parent prints the line itself
 * when the child died without doing so.
 *
 * When RL_RESULT_FILE names a file, the parent also writes the TAP stream
 * there, judged from each child's exit status alone: a line that code
 * under test prints on stdout never reaches that file.
 */
#ifndef TAP_H
#define TAP_H

#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct tap_test {
    const char *name;
    void (*fn)(void);
} tap_test;

#define TAP_TEST(name) { #name, name }
#define TAP_TIMEOUT_S 2

static char tap_diag[2048];
static size_t tap_diag_len;
static int tap_failed;

static void tap_note(const char *file, int line, const char *what)
{
    int n = snprintf(tap_diag + tap_diag_len, sizeof tap_diag - tap_diag_len,
                     "# %s:%d: %s\n", file, line, what);
    if (n > 0 && tap_diag_len + (size_t)n < sizeof tap_diag)
        tap_diag_len += (size_t)n;
    tap_failed = 1;
}

#define CHECK(cond) do {                                                   \
        if (!(cond))                                                       \
            tap_note(__FILE__, __LINE__, "check failed: " #cond);          \
    } while (0)

#define CHECK_EQ(a, b) do {                                                \
        long long a_ = (long long)(a), b_ = (long long)(b);                \
        if (a_ != b_) {                                                    \
            char m_[256];                                                  \
            snprintf(m_, sizeof m_, "%s == %s: got %lld, expected %lld",   \
                     #a, #b, a_, b_);                                      \
            tap_note(__FILE__, __LINE__, m_);                              \
        }                                                                  \
    } while (0)

#define CHECK_MEM(a, b, n) do {                                            \
        if (memcmp((a), (b), (n)) != 0)                                    \
            tap_note(__FILE__, __LINE__, "bytes differ: " #a " vs " #b);   \
    } while (0)

/* Runs all tests; returns the process exit status (0 when all passed). */
static int tap_run(const tap_test *tests, int n)
{
    int failures = 0;
    const char *rpath = getenv("RL_RESULT_FILE");
    FILE *rf = rpath && *rpath ? fopen(rpath, "w") : NULL;
    printf("1..%d\n", n);
    fflush(stdout);
    if (rf) {
        fprintf(rf, "1..%d\n", n);
        fflush(rf); /* nothing buffered for the children to inherit */
    }
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            alarm(TAP_TIMEOUT_S);
            tests[i].fn();
            printf("%s %d - %s\n%s", tap_failed ? "not ok" : "ok", i + 1, tests[i].name, tap_diag);
            fflush(stdout);
            _exit(tap_failed ? 1 : 0);
        }
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) < 0) {
            printf("not ok %d - %s\n# could not run the test\n", i + 1, tests[i].name);
            failures++;
        } else if (WIFSIGNALED(status)) {
            printf("not ok %d - %s\n# died from signal %d%s\n", i + 1, tests[i].name,
                   WTERMSIG(status), WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
            failures++;
        } else if (WEXITSTATUS(status) != 0) {
            failures++;
        }
        fflush(stdout);
        if (rf) {
            fprintf(rf, "%s %d - %s\n", pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "ok" : "not ok",
                    i + 1, tests[i].name);
            fflush(rf);
        }
    }
    if (rf)
        fclose(rf);
    return failures ? 1 : 0;
}

#endif
