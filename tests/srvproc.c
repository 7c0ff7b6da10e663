/* srvproc.c - see srvproc.h. */
#include "tests/srvproc.h"

#include "common/fsutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

pid_t sp_start(int *port, const char *log, const char *const *argv, const char *const *env, int wait_ms)
{
    *port = 0;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (!freopen(log, "w", stderr))
            _exit(126);
        for (size_t i = 0; env && env[i]; i++)
            putenv((char *)env[i]);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    for (int waited = 0; waited < wait_ms && !*port; waited += 50) {
        usleep(50000);
        char *txt = NULL;
        if (fs_read_file(&txt, NULL, log, 1 << 20, NULL) == 0) {
            const char *q = strstr(txt, "127.0.0.1:");
            if (q)
                *port = atoi(q + 10);
        }
        free(txt);
        if (!*port && waitpid(pid, NULL, WNOHANG) == pid)
            return -1; /* it exited: no use waiting */
    }
    if (!*port) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return -1;
    }
    return pid;
}
