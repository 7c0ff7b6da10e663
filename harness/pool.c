/* pool.c - forked workers, one job at a time, results on one pipe. */
#include "harness/pool.h"

#include "common/clock.h"
#include "common/err.h"
#include "common/limits.h"
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct worker {
    pid_t pid;
    int job_fd; /* parent's write end */
    long job;   /* index being run, -1 when idle */
} worker;

static void worker_main(int slot, int job_fd, int res_fd, const pool_cbs *cb)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* the parent is killed: so are we */
    uint32_t idx;
    buf_t out;
    buf_init(&out, RL_POOL_RESULT_MAX);
    while (read(job_fd, &idx, sizeof idx) == (ssize_t)sizeof idx) {
        buf_clear(&out);
        cb->run(cb->user, idx, slot, &out);
        char line[RL_POOL_RESULT_MAX + 32];
        int n = snprintf(line, sizeof line, "%u ", idx);
        for (size_t i = 0; i < out.len && (size_t)n < sizeof line - 2; i++)
            line[n++] = out.data[i] == '\n' ? ' ' : out.data[i];
        line[n++] = '\n';
        if (write(res_fd, line, (size_t)n) != n)
            _exit(3);
    }
    buf_dispose(&out);
    /* _exit skips atexit: the sandbox kept ready for a next run, and the
     * inits of finished runs still exiting, would be left to our reaper. */
    sb_release();
    _exit(0);
}

static int spawn(worker *w, int slot, int res_w, const pool_cbs *cb)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        close(p[1]);
        worker_main(slot, p[0], res_w, cb);
    }
    close(p[0]);
    w->pid = pid;
    w->job_fd = p[1];
    w->job = -1;
    return 0;
}

/* Gives worker w the next job, if any. */
static void feed(worker *w, const size_t *jobs, size_t n, size_t *next)
{
    if (*next >= n)
        return;
    uint32_t idx = (uint32_t)jobs[*next];
    if (write(w->job_fd, &idx, sizeof idx) == (ssize_t)sizeof idx) {
        w->job = (long)idx;
        (*next)++;
    }
}

int pool_run(const size_t *jobs, size_t n, int workers, const pool_cbs *cb, char *err)
{
    if (n == 0)
        return 0;
    int nw = workers < 1 ? 1 : workers;
    if ((size_t)nw > n)
        nw = (int)n;
    int res[2];
    if (pipe2(res, O_CLOEXEC) < 0)
        return rl_err(err, RL_EIO, "pool: pipe: %s", strerror(errno));
    worker *ws = calloc((size_t)nw, sizeof *ws);
    if (!ws) {
        close(res[0]);
        close(res[1]);
        return rl_err(err, RL_ENOMEM, "pool: out of memory");
    }
    int rc = 0, live = 0;
    size_t next = 0, done = 0;
    for (int i = 0; i < nw; i++) {
        if (spawn(&ws[i], i, res[1], cb) < 0) {
            rc = rl_err(err, RL_EIO, "pool: fork: %s", strerror(errno));
            break;
        }
        live++;
        feed(&ws[i], jobs, n, &next);
    }
    char buf[2 * (RL_POOL_RESULT_MAX + 32)];
    size_t bl = 0;
    double last_tick = 0;
    while (done < n && live > 0) {
        struct pollfd pf = {res[0], POLLIN, 0};
        if (poll(&pf, 1, 200) > 0) {
            ssize_t r = read(res[0], buf + bl, sizeof buf - 1 - bl);
            if (r > 0)
                bl += (size_t)r;
        }
        char *nl;
        while ((nl = memchr(buf, '\n', bl))) {
            *nl = '\0';
            char *sp = strchr(buf, ' ');
            unsigned long idx = strtoul(buf, NULL, 10);
            for (int i = 0; i < nw; i++) {
                if (ws[i].pid <= 0 || ws[i].job != (long)idx)
                    continue;
                ws[i].job = -1;
                done++;
                if (cb->done)
                    cb->done(cb->user, idx, sp ? sp + 1 : "");
                feed(&ws[i], jobs, n, &next);
                break;
            }
            size_t used = (size_t)(nl + 1 - buf);
            memmove(buf, nl + 1, bl - used);
            bl -= used;
        }
        int st;
        pid_t dead;
        while ((dead = waitpid(-1, &st, WNOHANG)) > 0) {
            for (int i = 0; i < nw; i++) {
                if (ws[i].pid != dead)
                    continue;
                close(ws[i].job_fd);
                ws[i].pid = 0;
                live--;
                if (ws[i].job >= 0) {
                    char why[128];
                    if (WIFSIGNALED(st))
                        snprintf(why, sizeof why, "worker died during the job: signal %d", WTERMSIG(st));
                    else
                        snprintf(why, sizeof why, "worker exited during the job: status %d", WEXITSTATUS(st));
                    done++;
                    if (cb->died)
                        cb->died(cb->user, (size_t)ws[i].job, why);
                    ws[i].job = -1;
                }
                if (next < n && spawn(&ws[i], i, res[1], cb) == 0) {
                    live++;
                    feed(&ws[i], jobs, n, &next);
                }
            }
        }
        if (cb->tick && (clk_s() - last_tick > 0.25 || done == n)) {
            cb->tick(cb->user, done, n);
            last_tick = clk_s();
        }
    }
    for (int i = 0; i < nw; i++)
        if (ws[i].pid > 0)
            close(ws[i].job_fd);
    for (int i = 0; i < nw; i++)
        if (ws[i].pid > 0)
            waitpid(ws[i].pid, NULL, 0);
    close(res[0]);
    close(res[1]);
    free(ws);
    return rc;
}
