/* sb_probe.c - what the kernel offers, found out once per process.
 *
 * Trial clones tell which namespaces can be created; Landlock reports its
 * ABI; the seccomp filter is compiled. As root, one empty network namespace
 * is made here and every run joins it with setns (creating a fresh one
 * costs about a millisecond, joining one microseconds; runs cannot talk
 * through it: loopback is down, seccomp allows only unix sockets and
 * Landlock scopes abstract sockets to the run). Also here: the user
 * namespaces that idmapped mounts of work dirs use, one per owner.
 */
#include "sandbox/sb_internal.h"

#include "common/err.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif

static sb_caps g_caps = {.net_fd = -1, .etc_fd = -1, .cg_fd = {-1, -1}};
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* Trial children share the harness's memory (CLONE_VM) and run on a stack
 * of their own: no page tables to copy, so a trial costs 0.1-0.7 ms (the
 * namespaces' own making) where a fork costs a millisecond more. They make
 * only system calls. Those that return (fn != sb_pause) run with the parent
 * suspended (CLONE_VFORK); the probe and the idmap cache each own a stack,
 * used by one child at a time (under pthread_once and g_idmap_lock). */
#define SB_TRIAL __attribute__((no_sanitize("address", "undefined")))

typedef struct sb_stack {
    _Alignas(16) char mem[SB_TRIAL_STACK];
} sb_stack;

static sb_stack g_probe_stack, g_idmap_stack;

SB_TRIAL static int sb_exit0(void *arg)
{
    (void)arg;
    return 0;
}

SB_TRIAL static int sb_pause(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return 0;
}

/* A child in new namespaces (flags) running fn (NULL: exit 0); its pid or -1. */
static pid_t sb_fork_ns(sb_stack *st, int flags, int (*fn)(void *), void *arg)
{
    int wait = fn == sb_pause ? 0 : CLONE_VFORK;
    return clone(fn ? fn : sb_exit0, st->mem + sizeof st->mem, flags | CLONE_VM | wait | SIGCHLD,
                 arg);
}

static int sb_reap(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int sb_can_clone(int flags)
{
    pid_t pid = sb_fork_ns(&g_probe_stack, flags, NULL, NULL);
    return pid > 0 && sb_reap(pid) == 0;
}

/* Opens /proc/PID/ns/NAME of a paused helper, then kills the helper. */
static int sb_ns_fd(pid_t pid, const char *name)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/ns/%s", (int)pid, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    kill(pid, SIGKILL);
    sb_reap(pid);
    return fd;
}

static int sb_write_str(const char *path, const char *s)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, s, strlen(s));
    close(fd);
    return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* Root: a user namespace that maps SB_NS_UID to the sandbox uid, made the
 * way the init makes the command's (clone, then write its maps). */
static int sb_can_map_userns(void)
{
    pid_t pid = sb_fork_ns(&g_probe_stack, CLONE_NEWUSER, sb_pause, NULL);
    if (pid < 0)
        return 0;
    char path[64], map[48];
    snprintf(map, sizeof map, "%d %d 1", SB_NS_UID, SB_HOST_UID);
    snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
    int ok = !sb_write_str(path, map);
    snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
    ok = ok && !sb_write_str(path, map);
    kill(pid, SIGKILL);
    sb_reap(pid);
    return ok;
}

/* The empty directory TMPDIR tmpfs mounts go on: one per harness uid, made
 * once, trusted only if it is ours and nobody else can write there.
 * Landlock ignores rules on a directory hidden by a mount, so the rule
 * goes on its parent, which is read-only (0555) for everyone without
 * CAP_DAC_OVERRIDE: nothing can be written next to the mount. */
static void sb_tmp_mountpoint(sb_caps *c)
{
    const char *fmt[3] = {"/tmp/.rl-sandbox-%u", "/tmp/.rl-sandbox-%u/mnt", "/tmp/.rl-sandbox-%u/mnt/tmp"};
    const mode_t mode[3] = {0755, 0555, 0755};
    char path[3][80];
    for (int i = 0; i < 3; i++) {
        snprintf(path[i], sizeof path[i], fmt[i], (unsigned)geteuid());
        if (mkdir(path[i], mode[i]) < 0 && errno != EEXIST)
            return;
        struct stat st;
        if (lstat(path[i], &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
            (st.st_mode & 07777) != mode[i])
            return;
    }
    snprintf(c->tmp_mnt, sizeof c->tmp_mnt, "%s", path[2]);
    snprintf(c->tmp_rule, sizeof c->tmp_rule, "%s", path[1]);
}

/* Can a fresh /proc be mounted in a new mount and PID namespace? Not in
 * containers that mask parts of theirs. */
SB_TRIAL static int sb_try_proc(void *arg)
{
    (void)arg;
    if (syscall(SYS_mount, NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) ||
        syscall(SYS_mount, "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
        return 1;
    return 0;
}

static int sb_can_mount_proc(int base)
{
    pid_t pid = sb_fork_ns(&g_probe_stack, base | CLONE_NEWPID | CLONE_NEWNS, sb_try_proc, NULL);
    return pid > 0 && sb_reap(pid) == 0;
}

/* The namespace flags that work, all together, else one by one. */
static int sb_probe_flags(int want, int base)
{
    if (sb_can_clone(want | base))
        return want | base;
    int got = 0;
    for (int bit = 1; bit; bit <<= 1)
        if ((want & bit) && sb_can_clone(bit | base))
            got |= bit;
    return got ? got | base : 0;
}

/* The namespace flags that work, and whether a fresh /proc mounts in them:
 * one trial when everything does (the common case), else one per flag. */
static int sb_probe_ns(int want, int base, int *proc)
{
    if (sb_can_mount_proc(want | base)) {
        *proc = 1;
        return want | base;
    }
    int flags = sb_probe_flags(want, base);
    *proc = (flags & (CLONE_NEWPID | CLONE_NEWNS)) == (CLONE_NEWPID | CLONE_NEWNS) &&
            sb_can_mount_proc(base);
    return flags;
}

static void sb_probe(void)
{
    sb_caps *c = &g_caps;
    c->root = geteuid() == 0;
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    c->landlock_abi = abi > 0 ? (int)abi : 0;
    const int ns = CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNS;
    if (c->root) {
        c->clone_flags = sb_probe_ns(ns, 0, &c->proc);
        pid_t pid = sb_fork_ns(&g_probe_stack, CLONE_NEWNET, sb_pause, NULL);
        if (pid > 0)
            c->net_fd = sb_ns_fd(pid, "net");
        if (c->net_fd < 0 && sb_can_clone(CLONE_NEWNET))
            c->clone_flags |= CLONE_NEWNET;
        /* The init writes the command's maps through its own /proc, which
         * it needs when it has a PID namespace. */
        c->userns = sb_can_map_userns() && (!(c->clone_flags & CLONE_NEWPID) || c->proc);
    } else {
        /* Unprivileged: every namespace hangs off a user namespace, and
         * each run gets a fresh network namespace. */
        c->clone_flags = sb_probe_ns(ns | CLONE_NEWNET, CLONE_NEWUSER, &c->proc);
        c->userns = (c->clone_flags & CLONE_NEWUSER) != 0;
    }
    if (c->clone_flags & CLONE_NEWNS) {
        sb_tmp_mountpoint(c);
        struct stat st;
        c->shm = lstat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode);
        /* A root of its own per run: the init pivots into it and hides
         * the host's root under the run's /proc. */
        if (c->root && c->proc && c->tmp_mnt[0])
            sb_root_probe(c);
    }
    /* Totals of each run's tree, where the harness's own cgroups allow. */
    if (c->clone_flags & CLONE_NEWPID)
        sb_cgroup_probe(c);
    unsigned l = SB_LAYER_RLIMITS;
    if (c->userns)
        l |= SB_LAYER_USERNS;
    if (c->clone_flags & CLONE_NEWPID)
        l |= SB_LAYER_PIDNS;
    if ((c->clone_flags & CLONE_NEWNET) || c->net_fd >= 0)
        l |= SB_LAYER_NETNS;
    if (c->clone_flags & CLONE_NEWNS)
        l |= SB_LAYER_MNTNS;
    if (c->clone_flags & CLONE_NEWIPC)
        l |= SB_LAYER_IPCNS;
    if (c->clone_flags & CLONE_NEWUTS)
        l |= SB_LAYER_UTSNS;
    if (sb_seccomp_prog(NULL))
        l |= SB_LAYER_SECCOMP;
    if (c->landlock_abi)
        l |= SB_LAYER_LANDLOCK;
    if (c->cg_fd[0] >= 0)
        l |= SB_LAYER_CGROUP; /* a run reports it only when its tree was in them */
    c->layers = l;
}

const sb_caps *sb_caps_get(void)
{
    pthread_once(&g_once, sb_probe);
    return &g_caps;
}

unsigned sb_layers_available(void) { return sb_caps_get()->layers; }

/* ---- idmapped mounts -------------------------------------------------- */

typedef struct sb_idmap_ent {
    uid_t uid;
    gid_t gid;
    int fd;
} sb_idmap_ent;

typedef struct sb_dev_ent {
    dev_t dev;
    int ok;
} sb_dev_ent;

static pthread_mutex_t g_idmap_lock = PTHREAD_MUTEX_INITIALIZER;
static sb_idmap_ent g_idmaps[SB_IDMAP_CACHE];
static int g_nidmaps;
static sb_dev_ent g_devs[SB_IDMAP_CACHE];
static int g_ndevs;

/* A user namespace whose only mapping is owner -> SB_HOST_UID. */
static int sb_idmap_make(uid_t uid, gid_t gid)
{
    pid_t pid = sb_fork_ns(&g_idmap_stack, CLONE_NEWUSER, sb_pause, NULL);
    if (pid < 0)
        return -1;
    char path[64], map[64];
    int ok = 1;
    snprintf(map, sizeof map, "%u %d 1", (unsigned)uid, SB_HOST_UID);
    snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
    ok = ok && !sb_write_str(path, map);
    snprintf(map, sizeof map, "%u %d 1", (unsigned)gid, SB_HOST_UID);
    snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
    ok = ok && !sb_write_str(path, map);
    int fd = sb_ns_fd(pid, "user");
    if (!ok && fd >= 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

typedef struct sb_idmap_try {
    const char *path;
    int userns_fd;
} sb_idmap_try;

/* In a throwaway mount namespace: can this file system be idmapped? */
SB_TRIAL static int sb_idmap_try_child(void *arg)
{
    const sb_idmap_try *t = arg;
    int fd = (int)syscall(SYS_open_tree, AT_FDCWD, t->path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    if (fd < 0)
        return 1;
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (unsigned)t->userns_fd};
    return syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH, &attr, sizeof attr) ? 1 : 0;
}

int sb_idmap_fd(uid_t uid, gid_t gid, dev_t dev, const char *path)
{
    int fd = -1, i;
    pthread_mutex_lock(&g_idmap_lock);
    for (i = 0; i < g_nidmaps; i++)
        if (g_idmaps[i].uid == uid && g_idmaps[i].gid == gid)
            break;
    if (i < g_nidmaps) {
        fd = g_idmaps[i].fd;
    } else if (g_nidmaps < SB_IDMAP_CACHE) {
        fd = sb_idmap_make(uid, gid);
        g_idmaps[g_nidmaps++] = (sb_idmap_ent){uid, gid, fd};
    }
    if (fd >= 0) {
        for (i = 0; i < g_ndevs; i++)
            if (g_devs[i].dev == dev)
                break;
        if (i == g_ndevs) {
            sb_idmap_try t = {path, fd};
            pid_t pid = sb_fork_ns(&g_idmap_stack, CLONE_NEWNS, sb_idmap_try_child, &t);
            int ok = pid > 0 && sb_reap(pid) == 0;
            if (g_ndevs < SB_IDMAP_CACHE)
                g_devs[g_ndevs++] = (sb_dev_ent){dev, ok};
            if (!ok)
                fd = -1;
        } else if (!g_devs[i].ok) {
            fd = -1;
        }
    }
    pthread_mutex_unlock(&g_idmap_lock);
    return fd;
}
