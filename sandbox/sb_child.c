/* sb_child.c - the sandbox's init process and the command before exec.
 *
 * The harness clones the init with CLONE_VM (like posix_spawn): no page
 * table copy, so spawning stays cheap even when the harness holds a model
 * in memory, and no copy-on-write faults in the harness while a command
 * runs. The price: this code shares the harness's memory and its thread's
 * TLS. So it only reads the sb_child record, keeps its state on its own
 * stack and makes system calls through the raw wrappers below, which never
 * touch errno or any libc state. All signals stay blocked in the init.
 *
 * The init (pid 1 of a new PID namespace):
 *   - closes every inherited fd but its own, joins the empty netns,
 *   - mounts a /proc of its own and (root) idmapped mounts of the work
 *     dir, drops to the sandbox uid, enters a fresh user namespace (the
 *     parent writes its maps), drops every capability,
 *   - vforks the command, which sets its limits, Landlock and seccomp and
 *     execs,
 *   - reaps every process that ends up as its child, and exits as soon as
 *     the command exits: the kernel then kills whatever is left in the PID
 *     namespace (daemons, setsid'ed grandchildren).
 * Each step that fails is reported on the message pipe and nothing runs.
 */
#include "sandbox/sb_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* Code that runs on the child stacks is not instrumented: ASan would try
 * to unpoison the harness thread's stack on the no-return paths. */
#define SB_CHILD __attribute__((no_sanitize("address", "undefined")))

/* ---- raw system calls: no errno, returns -errno ----------------------- */

#if defined(__x86_64__)
SB_CHILD static inline long sb_sys6(long n, long a, long b, long c, long d, long e, long f)
{
    long ret;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}
#elif defined(__aarch64__)
SB_CHILD static inline long sb_sys6(long n, long a, long b, long c, long d, long e, long f)
{
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    register long x5 __asm__("x5") = f;
    __asm__ volatile("svc 0"
                     : "+r"(x0)
                     : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                     : "memory");
    return x0;
}
#else
#error "sandbox/sb_child.c: raw system calls are written for x86_64 and aarch64"
#endif

#define SYS0(n) sb_sys6((n), 0, 0, 0, 0, 0, 0)
#define SYS1(n, a) sb_sys6((n), (long)(a), 0, 0, 0, 0, 0)
#define SYS2(n, a, b) sb_sys6((n), (long)(a), (long)(b), 0, 0, 0, 0)
#define SYS3(n, a, b, c) sb_sys6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define SYS4(n, a, b, c, d) sb_sys6((n), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)
#define SYS5(n, a, b, c, d, e) \
    sb_sys6((n), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), 0)

SB_CHILD __attribute__((noreturn)) static void sb_exit(int code)
{
    for (;;)
        SYS1(SYS_exit_group, code);
}

/* Reports a failed step and exits: nothing runs after a failed layer. */
SB_CHILD __attribute__((noreturn)) static void sb_fail(const sb_child *c, int stage, long ret)
{
    sb_msg m;
    memset(&m, 0, sizeof m); /* inlined by gcc: no libc call */
    m.kind = SB_MSG_FAIL;
    m.stage = stage;
    m.err = (int)-ret;
    SYS3(SYS_write, c->msg_fd, &m, sizeof m);
    sb_exit(stage == SB_ST_EXEC ? (m.err == ENOENT ? 127 : 126) : 125);
}

SB_CHILD static long sb_strlen(const char *s)
{
    long n = 0;
    while (s[n])
        n++;
    return n;
}

SB_CHILD static long sb_write_file(const char *path, const char *text)
{
    long fd = SYS4(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return fd;
    long len = sb_strlen(text);
    long ret = SYS3(SYS_write, fd, text, len);
    SYS1(SYS_close, fd);
    if (ret < 0)
        return ret;
    return ret == len ? 0 : -EIO;
}

/* ---- init steps ---------------------------------------------------------- */

/* Every handler back to default (handlers of the harness must never run
 * here, and SIG_IGN would survive exec); the mask stays full. */
SB_CHILD static void sb_reset_signals(const sb_child *c)
{
    struct {
        void *handler;
        unsigned long flags;
        void *restorer;
        unsigned long mask;
    } act = {0};
    for (int sig = 1; sig < 65; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP)
            continue;
        long r = SYS4(SYS_rt_sigaction, sig, &act, 0, 8);
        if (r < 0 && r != -EINVAL)
            sb_fail(c, SB_ST_SIGNALS, r);
    }
}

/* The init got a copy of every fd of the harness (other runs' pipes,
 * sockets): keep only ours, or another run would never see EOF. */
SB_CHILD static void sb_close_others(const sb_child *c)
{
    unsigned lo = 3;
    for (int i = 0; i < c->nkeep; i++) {
        unsigned fd = (unsigned)c->keep[i];
        if (fd > lo) {
            long r = SYS3(SYS_close_range, lo, fd - 1, 0);
            if (r < 0)
                sb_fail(c, SB_ST_FDS, r);
        }
        lo = fd + 1;
    }
    long r = SYS3(SYS_close_range, lo, ~0U, 0);
    if (r < 0)
        sb_fail(c, SB_ST_FDS, r);
}

/* Mount the work dir (and extra writable dirs) over itself through an
 * idmapping, in this mount namespace only: files owned by their owner on
 * disk appear owned by the sandbox uid, and files the command creates are
 * owned by that owner on disk. */
SB_CHILD static void sb_mounts(const sb_child *c)
{
    if (!c->nidmap && !c->mount_proc)
        return;
    /* Nothing mounted here may propagate back to the host. */
    long r = SYS5(SYS_mount, 0, "/", 0, MS_REC | MS_SLAVE, 0);
    if (r < 0)
        sb_fail(c, SB_ST_MOUNTS, r);
    /* Only the processes of this run are visible. */
    if (c->mount_proc &&
        (r = SYS5(SYS_mount, "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, 0)) < 0)
        sb_fail(c, SB_ST_PROC, r);
    for (int i = 0; i < c->nidmap; i++) {
        long t = SYS3(SYS_open_tree, AT_FDCWD, c->idmap_path[i], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        if (t < 0)
            sb_fail(c, SB_ST_IDMAP, t);
        struct mount_attr attr = {0};
        attr.attr_set = MOUNT_ATTR_IDMAP;
        attr.userns_fd = (unsigned)c->idmap_fd[i];
        r = SYS5(SYS_mount_setattr, t, "", AT_EMPTY_PATH, &attr, sizeof attr);
        if (r >= 0)
            r = SYS5(SYS_move_mount, t, "", AT_FDCWD, c->idmap_path[i], MOVE_MOUNT_F_EMPTY_PATH);
        SYS1(SYS_close, t);
        if (r < 0)
            sb_fail(c, SB_ST_IDMAP, r);
    }
}

/* Root: become the sandbox uid, then (if the kernel allows) enter a user
 * namespace of our own, which the parent maps (it has CAP_SETUID; we
 * could only write our own maps by making the harness's memory dumpable
 * again, and that is shared with concurrent runs). RLIMIT_NPROC is
 * counted per user namespace and uid, so the process cap of this run does
 * not mix with other runs that use the same host uid. */
SB_CHILD static void sb_drop_root(const sb_child *c)
{
    /* The count of the host uid across all runs must not limit this one:
     * the user namespace records our soft limit as its parent-level cap. */
    struct rlimit rl;
    long r = SYS4(SYS_prlimit64, 0, RLIMIT_NPROC, 0, &rl);
    if (r >= 0) {
        rl.rlim_cur = rl.rlim_max;
        r = SYS4(SYS_prlimit64, 0, RLIMIT_NPROC, &rl, 0);
    }
    if (r >= 0)
        r = SYS2(SYS_setgroups, 0, 0);
    if (r >= 0)
        r = SYS3(SYS_setresgid, c->gid, c->gid, c->gid);
    if (r >= 0)
        r = SYS3(SYS_setresuid, c->uid, c->uid, c->uid);
    if (r < 0)
        sb_fail(c, SB_ST_CREDS, r);
    if (!c->unshare_user)
        return;
    if ((r = SYS1(SYS_unshare, CLONE_NEWUSER)) < 0)
        sb_fail(c, SB_ST_USERNS, r);
    sb_msg m;
    memset(&m, 0, sizeof m);
    m.kind = SB_MSG_READY;
    SYS3(SYS_write, c->msg_fd, &m, sizeof m);
    char go = 0;
    do
        r = SYS3(SYS_read, c->go_fd, &go, 1);
    while (r == -EINTR);
    if (r != 1)
        sb_fail(c, SB_ST_GO, r < 0 ? r : -EPIPE);
    SYS1(SYS_close, c->go_fd);
}

/* Unprivileged: map ourselves in the user namespace we were cloned into. */
SB_CHILD static void sb_write_maps(const sb_child *c)
{
    long r = sb_write_file("/proc/self/setgroups", "deny");
    if (r >= 0)
        r = sb_write_file("/proc/self/uid_map", c->uid_map);
    if (r >= 0)
        r = sb_write_file("/proc/self/gid_map", c->gid_map);
    if (r < 0)
        sb_fail(c, SB_ST_IDMAPS, r);
}

/* No capability in any namespace, none to regain: empty bounding,
 * ambient and inheritable sets, and no_new_privs (which seccomp and
 * Landlock need anyway). */
SB_CHILD static void sb_drop_caps(const sb_child *c)
{
    /* EPERM: no CAP_SETPCAP, so no capability at all; no_new_privs below
     * keeps file capabilities from adding any at exec. */
    for (long cap = 0; cap < 64; cap++) {
        long r = SYS2(SYS_prctl, PR_CAPBSET_DROP, cap);
        if (r == -EINVAL || r == -EPERM)
            break;
        if (r < 0)
            sb_fail(c, SB_ST_CAPS, r);
    }
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2] = {{0, 0, 0}, {0, 0, 0}};
    long r = SYS5(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    if (r >= 0)
        r = SYS2(SYS_capset, &hdr, data);
    if (r >= 0)
        r = SYS5(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    if (r < 0)
        sb_fail(c, SB_ST_CAPS, r);
}

/* ---- the command ----------------------------------------------------------- */

SB_CHILD static int sb_child_cmd(void *arg)
{
    const sb_child *c = arg;
    long r = SYS0(SYS_setsid); /* no controlling terminal, own group */
    (void)r;
    if ((r = SYS3(SYS_dup3, c->in_fd, 0, 0)) < 0 || (r = SYS3(SYS_dup3, c->out_fd, 1, 0)) < 0 ||
        (r = SYS3(SYS_dup3, c->out_fd, 2, 0)) < 0)
        sb_fail(c, SB_ST_STDIO, r);
    if ((r = SYS1(SYS_chdir, c->dir)) < 0)
        sb_fail(c, SB_ST_CHDIR, r);
    SYS1(SYS_umask, 022);
    for (int i = 0; i < c->nrlim; i++)
        if ((r = SYS4(SYS_prlimit64, 0, c->rlim[i].resource, &c->rlim[i].lim, 0)) < 0)
            sb_fail(c, SB_ST_RLIMIT, r);
    if (c->ruleset_fd >= 0 && (r = SYS2(SYS_landlock_restrict_self, c->ruleset_fd, 0)) < 0)
        sb_fail(c, SB_ST_LANDLOCK, r);
    if (c->seccomp && (r = SYS3(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, c->seccomp)) < 0)
        sb_fail(c, SB_ST_SECCOMP, r);
    /* Every fd above 2 goes at exec; the message pipe stays until then so
     * that an exec failure can still be reported. */
    if ((r = SYS3(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC)) < 0)
        sb_fail(c, SB_ST_FDS, r);
    unsigned long none = 0;
    SYS4(SYS_rt_sigprocmask, SIG_SETMASK, &none, 0, 8);
    r = SYS3(SYS_execve, c->path, c->argv, c->envp);
    sb_fail(c, SB_ST_EXEC, r);
}

/* ---- the init ------------------------------------------------------------- */

SB_CHILD static void sb_init_setup(const sb_child *c)
{
    sb_reset_signals(c);
    sb_close_others(c);
    if (c->write_maps)
        sb_write_maps(c);
    long r;
    if (c->set_hostname && (r = SYS2(SYS_sethostname, "sandbox", 7)) < 0)
        sb_fail(c, SB_ST_HOSTNAME, r);
    if (c->net_fd >= 0 && (r = SYS2(SYS_setns, c->net_fd, CLONE_NEWNET)) < 0)
        sb_fail(c, SB_ST_NETNS, r);
    sb_mounts(c);
    if (c->drop_root)
        sb_drop_root(c);
    /* We share the harness's memory: its environment must not be readable
     * through /proc/1/environ by a command of the same uid. (Root: the uid
     * change above already did this.) */
    if (c->no_dump && (r = SYS5(SYS_prctl, PR_SET_DUMPABLE, 0, 0, 0, 0)) < 0)
        sb_fail(c, SB_ST_CAPS, r);
    sb_drop_caps(c);
    /* If the harness dies, so does the whole sandbox. Set after the uid
     * change, which clears it. */
    SYS5(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
}

SB_CHILD int sb_child_init(void *arg)
{
    const sb_child *c = arg;
    sb_init_setup(c);

    /* vfork: the command runs on its own stack in our memory until it
     * execs; we resume after. glibc's clone() touches no TLS in the
     * child and sets errno only on failure. */
    int pid = clone(sb_child_cmd, c->cmd_stack, CLONE_VM | CLONE_VFORK | SIGCHLD, (void *)c);
    if (pid < 0)
        sb_fail(c, SB_ST_CLONE, -EAGAIN);
    /* Keep only the message pipe: the output pipe must reach EOF when the
     * command's tree is gone. */
    if (c->msg_fd > 3)
        SYS3(SYS_close_range, 3, c->msg_fd - 1, 0);
    SYS3(SYS_close_range, c->msg_fd + 1, ~0U, 0);

    long maxrss = 0;
    for (;;) {
        int st = 0;
        struct rusage ru;
        long w = SYS4(SYS_wait4, -1, &st, __WALL, &ru);
        if (w < 0)
            sb_fail(c, SB_ST_WAIT, w);
        if (ru.ru_maxrss > maxrss)
            maxrss = ru.ru_maxrss;
        if (w == pid) {
            sb_msg m;
            memset(&m, 0, sizeof m);
            m.kind = SB_MSG_DONE;
            m.wstatus = st;
            m.maxrss_kb = maxrss;
            SYS3(SYS_write, c->msg_fd, &m, sizeof m);
            sb_exit(0); /* the kernel kills the rest of the namespace */
        }
    }
}

const char *sb_stage_name(int stage)
{
    switch (stage) {
    case SB_ST_SIGNALS: return "reset signal handlers";
    case SB_ST_FDS: return "close inherited fds";
    case SB_ST_HOSTNAME: return "set hostname";
    case SB_ST_NETNS: return "join the network namespace";
    case SB_ST_MOUNTS: return "make mounts private";
    case SB_ST_IDMAP: return "idmapped mount of the work dir";
    case SB_ST_CREDS: return "drop to the sandbox uid";
    case SB_ST_USERNS: return "create the user namespace";
    case SB_ST_IDMAPS: return "write uid_map/gid_map";
    case SB_ST_CAPS: return "drop capabilities";
    case SB_ST_CLONE: return "start the command";
    case SB_ST_WAIT: return "wait for the command";
    case SB_ST_STDIO: return "set up stdin/stdout/stderr";
    case SB_ST_CHDIR: return "enter the work dir";
    case SB_ST_RLIMIT: return "set resource limits";
    case SB_ST_LANDLOCK: return "enforce Landlock";
    case SB_ST_SECCOMP: return "load the seccomp filter";
    case SB_ST_EXEC: return "exec";
    case SB_ST_PROC: return "mount /proc";
    case SB_ST_GO: return "wait for the uid maps";
    default: return "unknown step";
    }
}
