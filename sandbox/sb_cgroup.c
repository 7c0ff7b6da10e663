/* sb_cgroup.c - totals of one command tree: a memory and a pids cgroup.
 *
 * Each sandbox gets fresh cgroups nested under the harness's own (its
 * lines of /proc/self/cgroup): cgroup v1 memory and pids controllers, or
 * one cgroup v2 dir when the harness's v2 cgroup delegates both. The init
 * makes them while the sandbox is a spare (off the critical path: mkdir
 * and moving a process cost ~0.1-0.3 ms each here) and moves the command
 * into them before it is released; the init itself stays outside the
 * memory cgroup: it shares the harness's memory, and an OOM kill in the
 * cgroup must never pick it (that would take the harness down with it).
 * The command and everything it starts are then bounded together:
 * memory.limit_in_bytes / memory.max = mem_mb, pids.max = procs. A fresh
 * cgroup per run, not one reused: pages charged to a cgroup stay charged
 * after their writer exits (the files of a RAM-backed work tree), and the
 * next run must not start with them. The cgroups are removed once the
 * sandbox's init is reaped.
 */
#include "sandbox/sb_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* The harness's own cgroup in the hierarchy whose /proc/self/cgroup line
 * names ctrl ("" for v2's "0::" line), into path. */
static int sb_cg_self(const char *ctrl, char *path, size_t n)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return -1;
    char line[1024];
    int found = -1;
    while (found < 0 && fgets(line, sizeof line, f)) {
        char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
        if (!a || !b)
            continue;
        *b = '\0';
        const char *ctrls = a + 1;
        int match = 0;
        if (!ctrl[0]) {
            match = !ctrls[0] && !strncmp(line, "0:", 2);
        } else {
            size_t k = strlen(ctrl);
            for (const char *c = ctrls; *c && !match; c = strchr(c, ',') ? strchr(c, ',') + 1 : "")
                match = !strncmp(c, ctrl, k) && (c[k] == ',' || !c[k]);
        }
        if (!match)
            continue;
        b[1 + strcspn(b + 1, "\n")] = '\0';
        if (snprintf(path, n, "%s", b + 1) < (int)n)
            found = 0;
    }
    fclose(f);
    return found;
}

static int sb_cg_open(const char *mnt, const char *self)
{
    char dir[PATH_MAX];
    if (snprintf(dir, sizeof dir, "%s%s", mnt, self) >= (int)sizeof dir)
        return -1;
    int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    /* The dir can take children of ours (we are root: the check is only
     * that it is a cgroup dir we may write). */
    if (faccessat(fd, "cgroup.procs", W_OK, 0) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int sb_cg_has(int dfd, const char *file, const char *want)
{
    int fd = openat(dfd, file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char buf[512];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    size_t k = strlen(want);
    for (char *p = buf; (p = strstr(p, want)); p += k)
        if ((p == buf || p[-1] == ' ') && (p[k] == ' ' || p[k] == '\n' || !p[k]))
            return 1;
    return 0;
}

void sb_cgroup_probe(sb_caps *c)
{
    c->cg_fd[0] = c->cg_fd[1] = -1;
    c->cg_v2 = 0;
    if (!c->root)
        return;
    char mem[PATH_MAX], pids[PATH_MAX];
    if (!sb_cg_self("memory", mem, sizeof mem) && !sb_cg_self("pids", pids, sizeof pids)) {
        c->cg_fd[0] = sb_cg_open("/sys/fs/cgroup/memory", mem);
        c->cg_fd[1] = sb_cg_open("/sys/fs/cgroup/pids", pids);
        if (c->cg_fd[0] >= 0 && c->cg_fd[1] >= 0)
            return;
    }
    for (int i = 0; i < 2; i++)
        if (c->cg_fd[i] >= 0)
            close(c->cg_fd[i]);
    c->cg_fd[0] = c->cg_fd[1] = -1;
    /* v2: the unified hierarchy, at /sys/fs/cgroup or (hybrid) below it,
     * with both controllers enabled for our children. */
    char self[PATH_MAX];
    if (sb_cg_self("", self, sizeof self))
        return;
    const char *mnts[2] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
    for (int i = 0; i < 2; i++) {
        struct statfs sf;
        if (statfs(mnts[i], &sf) < 0 || sf.f_type != CGROUP2_SUPER_MAGIC)
            continue;
        int fd = sb_cg_open(mnts[i], self);
        if (fd < 0)
            continue;
        if (sb_cg_has(fd, "cgroup.subtree_control", "memory") &&
            sb_cg_has(fd, "cgroup.subtree_control", "pids")) {
            c->cg_fd[0] = c->cg_fd[1] = fd;
            c->cg_v2 = 1;
            return;
        }
        close(fd);
    }
}

void sb_cgroup_fill(sb_child *c, const sb_caps *caps)
{
    static unsigned long long counter;
    c->cg_fd[0] = caps->cg_fd[0];
    c->cg_fd[1] = caps->cg_fd[1];
    c->cg_ok = 0;
    if (caps->cg_fd[0] < 0)
        return;
    unsigned long long n = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
    snprintf(c->cg_name, sizeof c->cg_name, "rl-sb-%d-%llu", (int)getpid(), n);
    const char *lim[2] = {caps->cg_v2 ? "memory.max" : "memory.limit_in_bytes", "pids.max"};
    for (int i = 0; i < 2; i++) {
        snprintf(c->cg_lim_path[i], sizeof c->cg_lim_path[i], "%s/%s", c->cg_name, lim[i]);
        snprintf(c->cg_procs[i], sizeof c->cg_procs[i], "%s/cgroup.procs", c->cg_name);
    }
}

/* Writes v (decimal) to the file at (dfd, path). */
static int sb_cg_write(int dfd, const char *path, long long v)
{
    int fd = openat(dfd, path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%lld", v);
    ssize_t w = write(fd, buf, (size_t)n);
    close(fd);
    return w == n ? 0 : -1;
}

int sb_cgroup_set(const sb_child *c, long long mem, long long pids)
{
    if (sb_cg_write(c->cg_fd[0], c->cg_lim_path[0], mem) < 0 ||
        sb_cg_write(c->cg_fd[1], c->cg_lim_path[1], pids) < 0)
        return -1;
    return 0;
}

long sb_cgroup_oom_kills(const sb_child *c, int v2)
{
    if (c->cg_ok != 1)
        return 0;
    char path[sizeof c->cg_name + 32];
    snprintf(path, sizeof path, "%s/%s", c->cg_name, v2 ? "memory.events" : "memory.oom_control");
    int fd = openat(c->cg_fd[0], path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char buf[1024];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    const char *p = strstr(buf, "oom_kill ");
    return p ? atol(p + 9) : 0;
}

/* Cgroups whose removal failed (still busy), retried later. */
static pthread_mutex_t g_cg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int fd;
    char name[48];
} g_cg_pending[SB_CG_PENDING_MAX];
static int g_ncg_pending;

static int sb_cg_rmdir(int fd, const char *name)
{
    return unlinkat(fd, name, AT_REMOVEDIR) == 0 || errno == ENOENT ? 0 : -1;
}

/* Retries the busy ones; how many are still pending. Lock held. */
static int sb_cg_retry_pending(void)
{
    int k = 0;
    for (int i = 0; i < g_ncg_pending; i++)
        if (sb_cg_rmdir(g_cg_pending[i].fd, g_cg_pending[i].name) < 0)
            g_cg_pending[k++] = g_cg_pending[i];
    g_ncg_pending = k;
    return k;
}

void sb_cgroup_remove(const sb_child *c)
{
    pthread_mutex_lock(&g_cg_lock);
    sb_cg_retry_pending();
    if (c && c->cg_name[0] && c->cg_ok != 0) {
        for (int i = 0; i < 2; i++) {
            if (c->cg_fd[i] < 0 || (i == 1 && c->cg_fd[1] == c->cg_fd[0]))
                continue;
            if (sb_cg_rmdir(c->cg_fd[i], c->cg_name) < 0 && g_ncg_pending < SB_CG_PENDING_MAX) {
                g_cg_pending[g_ncg_pending].fd = c->cg_fd[i];
                snprintf(g_cg_pending[g_ncg_pending].name, sizeof g_cg_pending[0].name, "%s",
                         c->cg_name);
                g_ncg_pending++;
            }
        }
    }
    pthread_mutex_unlock(&g_cg_lock);
}

void sb_cgroup_flush(void)
{
    for (int waited = 0;; waited++) {
        pthread_mutex_lock(&g_cg_lock);
        int left = sb_cg_retry_pending();
        pthread_mutex_unlock(&g_cg_lock);
        if (!left || waited >= SB_CG_FLUSH_MS)
            return;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}
