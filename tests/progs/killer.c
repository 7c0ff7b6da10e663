/* killer.c - tries to signal and ptrace what is outside: its parent, the
 * pid given as argv[1] (the harness, seen from the host), argv[2] (a
 * victim), every process (kill -1) and pid 1. Prints each result. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

static void report(const char *what, int r)
{
    printf("%s: %s\n", what, r == 0 ? "ok" : strerror(errno));
}

int main(int argc, char **argv)
{
    pid_t harness = argc > 1 ? atoi(argv[1]) : 0;
    pid_t victim = argc > 2 ? atoi(argv[2]) : 0;
    report("ptrace parent", (int)ptrace(PTRACE_ATTACH, getppid(), 0, 0));
    if (harness)
        report("ptrace harness", (int)ptrace(PTRACE_ATTACH, harness, 0, 0));
    report("kill parent", kill(getppid(), SIGKILL));
    if (harness)
        report("kill harness", kill(harness, SIGKILL));
    if (victim)
        report("kill victim", kill(victim, SIGKILL));
    report("kill 1", kill(1, SIGKILL));
    report("kill -1", kill(-1, SIGKILL));
    fflush(stdout);
    return 0;
}
