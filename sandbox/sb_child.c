/* sb_child.c - the sandbox's init process and the command before exec.
 *
 * The harness clones the init with CLONE_VM (like posix_spawn): no page
 * table copy, so spawning stays cheap even when the harness holds a model
 * in memory, and no copy-on-write faults in the harness while a command
 * runs. The price: this code shares the harness's memory and its thread's
 * TLS. So it only touches the sb_child record, the job and its own stack,
 * and makes system calls through the raw wrappers below, which never touch
 * errno or any libc state. All signals stay blocked in the init.
 *
 * A sandbox is made ahead of its run (a "spare", see sb_spare.c) and does
 * all it can before it knows the job:
 *   init (pid 1 of new PID, mount, IPC, UTS namespaces; root stays root):
 *     closes every inherited fd but its own, joins the empty netns, mounts
 *     a /proc of its PID namespace and a tmpfs on TMPDIR and /dev/shm
 *     (keeping an fd of what each hides), clones the command (root: into
 *     a new user namespace, whose maps it writes), then mounts the
 *     writable paths of its thread's previous run ("premounts": idmapped,
 *     or into the private tmpfs when they lie below /dev/shm);
 *   command: no_new_privs, seccomp, drops to the sandbox uid and every
 *     capability, takes stdout/stderr.
 * Then both wait. The job (a pointer into the harness's memory, plus its
 * fds) goes straight to the command when the premounts are exactly its
 * writable paths, of the same directories (the common case: the same work
 * dir again); else to the init, which undoes the premounts, mounts the
 * job's paths and passes the job on. The command enforces Landlock, sets
 * its limits, enters the work dir and execs. The init reaps every process
 * that ends up as its child until the command exits or the harness says
 * stop (SIGUSR1), then kills and reaps whatever is left in the namespace
 * (daemons, setsid'ed grandchildren), reports and exits. Should it be
 * killed instead, the kernel takes the whole namespace down with it.
 * Each step that fails is reported on the message pipe and nothing runs.
 */
#include "sandbox/sb_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/futex.h>
#include <linux/mount.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
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

/* Reports a failed step and exits: nothing runs after a failed layer.
 * An init that fails after starting the command releases it with mapped = -1
 * so that it exits too (even without a PID namespace to take it down). */
SB_CHILD __attribute__((noreturn)) static void sb_fail(const sb_child *c, int stage, long ret)
{
    if (c->cmd_started) {
        __atomic_store_n(&((sb_child *)c)->mapped, -1, __ATOMIC_RELEASE);
        SYS3(SYS_futex, &((sb_child *)c)->mapped, FUTEX_WAKE_PRIVATE, 1);
    }
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

/* Writes v in decimal to the file at (dfd, path). */
SB_CHILD static long sb_write_num_at(long dfd, const char *path, long long v)
{
    char buf[24];
    int n = 0;
    char digits[24];
    int d = 0;
    if (v < 0)
        v = 0;
    do
        digits[d++] = (char)('0' + v % 10);
    while ((v /= 10) && d < 23);
    while (d)
        buf[n++] = digits[--d];
    long fd = SYS4(SYS_openat, dfd, path, O_WRONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return fd;
    long r = SYS3(SYS_write, fd, buf, n);
    SYS1(SYS_close, fd);
    return r < 0 ? r : r == n ? 0 : -EIO;
}

/* ---- init steps ---------------------------------------------------------- */

/* The signals we ignore (our copy of the harness's dispositions), from the
 * SigIgn line of /proc/self/status: one read instead of 64 rt_sigaction
 * calls (a system call costs ~1 us on a VM with PTI). All of them when it
 * cannot be read. */
SB_CHILD static unsigned long long sb_ignored(void)
{
    char buf[4096];
    long fd = SYS4(SYS_openat, AT_FDCWD, "/proc/self/status", O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return ~0ULL;
    long n = SYS3(SYS_read, fd, buf, sizeof buf - 1);
    SYS1(SYS_close, fd);
    if (n <= 0)
        return ~0ULL;
    static const char key[] = "\nSigIgn:";
    for (long i = 0; i + (long)sizeof key - 1 < n; i++) {
        long k = 0;
        while (key[k] && buf[i + k] == key[k])
            k++;
        if (key[k])
            continue;
        unsigned long long v = 0;
        long j = i + k;
        while (j < n && (buf[j] == ' ' || buf[j] == '\t'))
            j++;
        int digits = 0;
        for (; j < n; j++, digits++) {
            char ch = buf[j];
            int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
            if (d < 0)
                break;
            v = v << 4 | (unsigned)d;
        }
        return digits ? v : ~0ULL;
    }
    return ~0ULL;
}

/* Signals the harness ignores back to default: SIG_IGN survives exec, and
 * an ignored SIGCHLD would make the kernel reap the command for us.
 * Handlers need no reset: every signal stays blocked here and exec resets
 * them for the command. */
SB_CHILD static void sb_reset_signals(const sb_child *c)
{
    struct {
        void *handler;
        unsigned long flags;
        void *restorer;
        unsigned long mask;
    } act = {0};
    unsigned long long ign = sb_ignored();
    for (int sig = 1; sig < 65; sig++) {
        if (!(ign & (1ULL << (sig - 1))) || sig == SIGKILL || sig == SIGSTOP)
            continue;
        long r = SYS4(SYS_rt_sigaction, sig, &act, 0, 8);
        if (r < 0 && r != -EINVAL)
            sb_fail(c, SB_ST_SIGNALS, r);
    }
}

/* Closes every fd from 3 up except the ascending keep[0..n). */
SB_CHILD static long sb_close_except(const int *keep, int n)
{
    unsigned lo = 3;
    for (int i = 0; i < n; i++) {
        unsigned fd = (unsigned)keep[i];
        if (fd > lo) {
            long r = SYS3(SYS_close_range, lo, fd - 1, 0);
            if (r < 0)
                return r;
        }
        if (fd + 1 > lo)
            lo = fd + 1;
    }
    return SYS3(SYS_close_range, lo, ~0U, 0);
}

/* The mounts every run gets: private propagation, a /proc of our PID
 * namespace (only the run's processes are visible), tmpfs on TMPDIR and on
 * /dev/shm (private, bounded, gone with the namespace). Each tmpfs mount
 * point is opened first (O_PATH): a lookup from that fd starts on the
 * host's directory under the tmpfs, which is how sb_bind_mounts reaches a
 * work dir below it. */
SB_CHILD static void sb_mounts(sb_child *c)
{
    if (!c->mount_proc && !c->tmpfs_opts[0] && !c->shm_opts[0] && !c->rootfs)
        return;
    long r = SYS5(SYS_mount, 0, "/", 0, MS_REC | MS_SLAVE, 0);
    if (r < 0)
        sb_fail(c, SB_ST_MOUNTS, r);
    if (c->rootfs) {
        /* The host's root stays reachable through host_fd only (the binds'
         * source): the pivot puts it on the new root's /proc, which the
         * run's /proc then covers. */
        long fd = SYS4(SYS_openat, AT_FDCWD, "/", O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
        if (fd < 0)
            sb_fail(c, SB_ST_ROOT, fd);
        c->host_fd = (int)fd;
        r = SYS5(SYS_move_mount, c->root_fd, "", AT_FDCWD, c->tmp, MOVE_MOUNT_F_EMPTY_PATH);
        SYS1(SYS_close, c->root_fd);
        if (r >= 0)
            r = SYS1(SYS_chdir, c->tmp);
        if (r >= 0)
            r = SYS2(SYS_pivot_root, ".", "proc");
        if (r >= 0)
            r = SYS1(SYS_chdir, "/");
        if (r < 0)
            sb_fail(c, SB_ST_ROOT, r);
    }
    if (c->mount_proc &&
        (r = SYS5(SYS_mount, "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, 0)) < 0)
        sb_fail(c, SB_ST_PROC, r);
    const char *opts[SB_NCOVER] = {c->tmpfs_opts, c->shm_opts};
    for (int i = 0; i < SB_NCOVER; i++) {
        if (!c->cover[i] || !opts[i][0])
            continue;
        long fd = SYS4(SYS_openat, AT_FDCWD, c->cover[i], O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
        if (fd < 0)
            sb_fail(c, SB_ST_TMPFS, fd);
        c->cover_fd[i] = (int)fd;
        if ((r = SYS5(SYS_mount, "tmpfs", c->cover[i], "tmpfs", MS_NOSUID | MS_NODEV, opts[i])) < 0)
            sb_fail(c, SB_ST_TMPFS, r);
    }
}

/* Makes the missing directories of b->path from its offset rel on (below
 * a cover's mount point in the private tmpfs, or in the run's own root:
 * 0755, root-owned as root, so the command can search them and not
 * change them; unprivileged they are its own, which is harmless: they
 * exist only in this run), and the mount point itself (a directory, or an
 * empty file for a file). *made: the length of the path of the first
 * one made (what sb_unmake_mountpoint may remove), 0 when none was. */
SB_CHILD static long sb_make_mountpoint(const sb_bind *b, int *made)
{
    char p[PATH_MAX];
    *made = 0;
    long n = sb_strlen(b->path);
    if (n >= (long)sizeof p)
        return -ENAMETOOLONG;
    for (long i = 0; i <= n; i++)
        p[i] = b->path[i];
    if (!p[b->rel])
        return 0; /* the mount point itself */
    long r;
    for (long i = b->rel; i < n; i++) {
        if (p[i] != '/')
            continue;
        p[i] = '\0';
        r = SYS3(SYS_mkdirat, AT_FDCWD, p, 0755);
        p[i] = '/';
        if (r == 0 && !*made)
            *made = (int)i;
        if (r < 0 && r != -EEXIST)
            return r;
    }
    if (b->is_dir) {
        r = SYS3(SYS_mkdirat, AT_FDCWD, p, 0755);
        if (r == 0 && !*made)
            *made = (int)n;
        return r == -EEXIST ? 0 : r;
    }
    r = SYS4(SYS_openat, AT_FDCWD, p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (r >= 0 && !*made)
        *made = (int)n;
    if (r == -EEXIST)
        r = SYS4(SYS_openat, AT_FDCWD, p, O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0);
    if (r >= 0)
        SYS1(SYS_close, r);
    return r < 0 ? r : 0;
}

/* One writable path, in this mount namespace only:
 *   idmapped (root): mounted through an idmapping, so that files owned by
 *     their owner on disk appear owned by the sandbox uid and files the
 *     command creates belong to that owner on disk (userns_fd maps
 *     owner -> uid);
 *   below a cover: cloned from the host's directory under the private
 *     tmpfs and mounted on the same path in it. The rest of the host's
 *     /dev/shm (or TMPDIR) stays hidden.
 * Otherwise the path is mounted over itself. Landlock needs nothing more:
 * its rules hold the paths' inodes, which the mounts show unchanged.
 * *id gets what the mounted tree shows; *keep (if not NULL) the mount's
 * fd, else it is closed. Returns 0 or -errno with *stage. */
SB_CHILD static long sb_mount_one(const sb_child *c, const sb_bind *b, int userns_fd, sb_id *id,
                                  int *keep, int *made, int *stage, const int *disk_fd)
{
    if (b->disk) {
        /* The overlay the harness made (a detached mount): only moved. */
        *stage = SB_ST_DISK;
        if (!disk_fd)
            return -EINVAL;
        long r = sb_make_mountpoint(b, made);
        if (r >= 0)
            r = SYS5(SYS_move_mount, disk_fd[0], "", AT_FDCWD, b->path, MOVE_MOUNT_F_EMPTY_PATH);
        id->ok = 0;
        return r < 0 ? r : 0;
    }
    long dfd = AT_FDCWD;
    const char *src = b->path;
    unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC;
    *made = 0;
    *stage = b->ro ? SB_ST_RO : b->idmap >= 0 ? SB_ST_IDMAP : SB_ST_BIND;
    if (b->ro) {
        /* From the sandbox's own view: inside a bind made before it. */
    } else if (c->rootfs) {
        if ((dfd = c->host_fd) < 0)
            return -EINVAL;
        src = b->path + 1;
        if (!src[0])
            flags |= AT_EMPTY_PATH;
    } else if (b->cover >= 0) {
        if (b->cover >= SB_NCOVER || (dfd = c->cover_fd[b->cover]) < 0)
            return -EINVAL;
        src = b->path + b->rel;
        if (!src[0])
            flags |= AT_EMPTY_PATH;
    }
    /* An idmapping goes on the top mount only; a plain bind takes the
     * mounts below along (unprivileged, locked ones must come too). */
    if (b->idmap < 0)
        flags |= AT_RECURSIVE;
    else if (userns_fd < 0)
        return -EINVAL;
    long t = SYS3(SYS_open_tree, dfd, src, flags);
    if (t < 0)
        return t;
    struct statx sx;
    long r = SYS5(SYS_statx, t, "", AT_EMPTY_PATH, STATX_INO | STATX_BTIME, &sx);
    id->ok = r == 0 && (sx.stx_mask & (STATX_INO | STATX_BTIME)) == (STATX_INO | STATX_BTIME);
    if (id->ok) {
        id->dev_major = sx.stx_dev_major;
        id->dev_minor = sx.stx_dev_minor;
        id->ino = sx.stx_ino;
        id->btime_s = sx.stx_btime.tv_sec;
        id->btime_ns = sx.stx_btime.tv_nsec;
    }
    r = 0;
    if (b->ro) {
        struct mount_attr attr = {0};
        attr.attr_set = MOUNT_ATTR_RDONLY;
        r = SYS5(SYS_mount_setattr, t, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr);
    } else if (b->idmap >= 0) {
        struct mount_attr attr = {0};
        attr.attr_set = MOUNT_ATTR_IDMAP;
        attr.userns_fd = (unsigned)userns_fd;
        r = SYS5(SYS_mount_setattr, t, "", AT_EMPTY_PATH, &attr, sizeof attr);
    }
    if (r >= 0 && !b->ro && (b->cover >= 0 || c->rootfs)) {
        *stage = SB_ST_BIND;
        r = sb_make_mountpoint(b, made);
    }
    if (r >= 0) {
        if (!b->ro)
            *stage = b->cover >= 0 || c->rootfs ? SB_ST_BIND : SB_ST_IDMAP;
        r = SYS5(SYS_move_mount, t, "", AT_FDCWD, b->path, MOVE_MOUNT_F_EMPTY_PATH);
    }
    if (r >= 0 && keep)
        *keep = (int)t;
    else
        SYS1(SYS_close, t);
    return r < 0 ? r : 0;
}

/* The job's binds, in order; a failure is fatal. */
SB_CHILD static void sb_bind_mounts(sb_child *c, const sb_job *job, const int *userns_fd,
                                    const int *disk_fd)
{
    SYS1(SYS_umask, 0); /* our own: the command has its copy already */
    for (int i = 0; i < job->nbind; i++) {
        const sb_bind *b = &job->bind[i];
        if (b->idmap >= job->nidmap)
            sb_fail(c, SB_ST_IDMAP, -EINVAL);
        sb_id id;
        int stage, made;
        long r = sb_mount_one(c, b, b->idmap >= 0 ? userns_fd[b->idmap] : -1, &id, 0, &made, &stage,
                              disk_fd);
        if (r < 0)
            sb_fail(c, stage, r);
    }
    for (int i = 0; i < job->nidmap; i++)
        SYS1(SYS_close, userns_fd[i]);
    if (disk_fd)
        SYS1(SYS_close, disk_fd[0]);
}

SB_CHILD static void sb_unmake_mountpoint(const sb_bind *b, int made);

/* The premounts, best effort (a dir that is gone makes them no match for
 * any job); then the user namespace fds go. */
SB_CHILD static void sb_premount(sb_child *c)
{
    SYS1(SYS_umask, 0);
    int ok = 1;
    for (int i = 0; i < c->npre && ok; i++) {
        const sb_bind *b = &c->pre[i];
        int fd = b->idmap >= 0 && b->idmap < c->npre_userns ? c->pre_userns[b->idmap] : -1;
        int stage;
        ok = !b->disk &&
             sb_mount_one(c, b, fd, &c->pre_id[i], &c->pre_fd[i], &c->pre_mk[i], &stage, 0) == 0;
        c->pre_made += ok;
        if (!ok)
            sb_unmake_mountpoint(b, c->pre_mk[i]);
    }
    for (int i = 0; i < c->npre_userns; i++)
        SYS1(SYS_close, c->pre_userns[i]); /* harmless when repeated: EBADF */
    __atomic_store_n(&c->pre_ok, ok ? 1 : -1, __ATOMIC_RELEASE);
}

SB_CHILD int sb_pre_match(const sb_child *c, const sb_job *job)
{
    if (__atomic_load_n(&c->pre_ok, __ATOMIC_ACQUIRE) != 1 || c->npre != job->nbind ||
        job->has_disk)
        return 0;
    for (int i = 0; i < job->nbind; i++) {
        const sb_bind *p = &c->pre[i], *b = &job->bind[i];
        const sb_id *x = &c->pre_id[i], *y = &b->id;
        long k = 0;
        while (p->path[k] && p->path[k] == b->path[k])
            k++;
        if (p->path[k] != b->path[k] || p->cover != b->cover || p->rel != b->rel ||
            p->is_dir != b->is_dir || p->ro != b->ro || (p->idmap < 0) != (b->idmap < 0))
            return 0;
        /* the same fd of the harness's idmap cache: the same owner mapping */
        if (p->idmap >= 0 && (p->idmap >= c->npre_userns || b->idmap >= job->nidmap ||
                              c->pre_userns[p->idmap] != job->userns_h[b->idmap]))
            return 0;
        if (!x->ok || !y->ok || x->dev_major != y->dev_major || x->dev_minor != y->dev_minor ||
            x->ino != y->ino || x->btime_s != y->btime_s || x->btime_ns != y->btime_ns)
            return 0;
    }
    return 1;
}

/* Removes what sb_make_mountpoint made for b: the mount point, then its
 * parents down to the first one it made, stopping at one another
 * premount still uses (they go children first). */
SB_CHILD static void sb_unmake_mountpoint(const sb_bind *b, int made)
{
    char p[PATH_MAX];
    long n = sb_strlen(b->path);
    if (made <= 0 || n >= (long)sizeof p)
        return;
    for (long i = 0; i <= n; i++)
        p[i] = b->path[i];
    long r = SYS3(SYS_unlinkat, AT_FDCWD, p, b->is_dir ? AT_REMOVEDIR : 0);
    while (r == 0) {
        while (n > 0 && p[n] != '/')
            n--;
        if (n < made)
            return;
        p[n] = '\0';
        r = SYS3(SYS_unlinkat, AT_FDCWD, p, AT_REMOVEDIR);
    }
}

/* After umount2 said EINVAL: the premount is no longer in our namespace
 * (its dir was removed on the host, which detaches it) if its path does
 * not lead to it. Else (a locked mount, say) it must not stay. */
SB_CHILD static long sb_premount_gone(const sb_child *c, int i)
{
    struct statx a, b;
    long r = SYS5(SYS_statx, c->pre_fd[i], "", AT_EMPTY_PATH, STATX_MNT_ID, &a);
    if (r < 0 || !(a.stx_mask & STATX_MNT_ID))
        return -EINVAL;
    r = SYS5(SYS_statx, AT_FDCWD, c->pre[i].path, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &b);
    if (r == -ENOENT)
        return 0;
    if (r < 0 || !(b.stx_mask & STATX_MNT_ID))
        return -EINVAL;
    return a.stx_mnt_id != b.stx_mnt_id ? 0 : -EINVAL;
}

/* The job is not the premounts': they go (children first), through their
 * fds, wherever their paths lead now. One whose dir was removed on the
 * host meanwhile is already gone (EINVAL, and its path leads elsewhere). */
SB_CHILD static void sb_unpremount(sb_child *c)
{
    for (int i = c->pre_made - 1; i >= 0; i--) {
        char path[32] = "/proc/self/fd/";
        char digits[12];
        int n = 14, d = 0;
        long fd = c->pre_fd[i];
        do
            digits[d++] = (char)('0' + fd % 10);
        while ((fd /= 10) && d < 11);
        while (d)
            path[n++] = digits[--d];
        path[n] = '\0';
        long r = SYS2(SYS_umount2, path, MNT_DETACH);
        if (r == -EINVAL)
            r = sb_premount_gone(c, i);
        SYS1(SYS_close, c->pre_fd[i]);
        if (r < 0)
            sb_fail(c, SB_ST_BIND, r);
        sb_unmake_mountpoint(&c->pre[i], c->pre_mk[i]);
    }
    c->pre_made = 0;
}

/* Nothing of the host's hidden directories stays within reach (nor the
 * premounts' fds). */
SB_CHILD static void sb_close_covers(sb_child *c)
{
    for (int i = 0; i < c->pre_made; i++)
        SYS1(SYS_close, c->pre_fd[i]);
    for (int i = 0; i < SB_NCOVER; i++) {
        if (c->cover_fd[i] >= 0)
            SYS1(SYS_close, c->cover_fd[i]);
        c->cover_fd[i] = -1;
    }
    if (c->host_fd >= 0)
        SYS1(SYS_close, c->host_fd);
    c->host_fd = -1;
}

/* Unprivileged: map ourselves in the user namespace we were cloned into. */
SB_CHILD static void sb_write_own_maps(const sb_child *c)
{
    long r = sb_write_file("/proc/self/setgroups", "deny");
    if (r >= 0)
        r = sb_write_file("/proc/self/uid_map", c->uid_map);
    if (r >= 0)
        r = sb_write_file("/proc/self/gid_map", c->gid_map);
    if (r < 0)
        sb_fail(c, SB_ST_IDMAPS, r);
}

/* Root: the command was cloned into a new user namespace; map its uid and
 * gid (we hold CAP_SETUID; it could only map the host root). pid is as
 * seen by our own /proc. */
SB_CHILD static void sb_map_cmd(const sb_child *c, long pid)
{
    char path[48] = "/proc/";
    char digits[20];
    int n = 6, d = 0;
    do
        digits[d++] = (char)('0' + pid % 10);
    while ((pid /= 10) && d < 19);
    while (d)
        path[n++] = digits[--d];
    const char *tail[2] = {"/uid_map", "/gid_map"};
    const char *map[2] = {c->uid_map, c->gid_map};
    for (int i = 0; i < 2; i++) {
        int k = n;
        for (const char *t = tail[i]; *t; t++)
            path[k++] = *t;
        path[k] = '\0';
        long r = sb_write_file(path, map[i]);
        if (r < 0)
            sb_fail(c, SB_ST_IDMAPS, r);
    }
}

/* ---- passing a job and its fds --------------------------------------------- */

#define SB_MAX_FDS (3 + SB_MAX_IDMAPS)

/* Receives one message: a pointer and up to SB_MAX_FDS fds. Returns the
 * number of fds, or < 0 (-EPIPE on EOF: the other side is gone). */
SB_CHILD static long sb_recv_job(int sock, sb_job **job, int *fds)
{
    union {
        char buf[CMSG_SPACE(sizeof(int) * SB_MAX_FDS)];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {job, sizeof *job};
    struct msghdr msg = {0};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = ctl.buf;
    msg.msg_controllen = sizeof ctl.buf;
    long r;
    do
        r = SYS3(SYS_recvmsg, sock, &msg, MSG_CMSG_CLOEXEC);
    while (r == -EINTR);
    if (r == 0)
        return -EPIPE;
    if (r < 0)
        return r;
    if (r != (long)sizeof *job || (msg.msg_flags & MSG_CTRUNC))
        return -EPROTO;
    struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
    if (!cm)
        return 0;
    if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
        return -EPROTO;
    long n = (long)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    const int *src = (const int *)CMSG_DATA(cm);
    for (long i = 0; i < n; i++)
        fds[i] = src[i];
    return n;
}

SB_CHILD static long sb_send_job(int sock, sb_job *job, const int *fds, int nfds)
{
    union {
        char buf[CMSG_SPACE(sizeof(int) * SB_MAX_FDS)];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {&job, sizeof job};
    struct msghdr msg = {0};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (nfds) {
        msg.msg_control = ctl.buf;
        msg.msg_controllen = CMSG_SPACE(sizeof(int) * (unsigned)nfds);
        struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int) * (unsigned)nfds);
        int *dst = (int *)CMSG_DATA(cm);
        for (int i = 0; i < nfds; i++)
            dst[i] = fds[i];
    }
    long r;
    do
        r = SYS3(SYS_sendmsg, sock, &msg, MSG_NOSIGNAL);
    while (r == -EINTR);
    return r == (long)sizeof job ? 0 : (r < 0 ? r : -EPROTO);
}

/* ---- the command ----------------------------------------------------------- */

/* Become the sandbox uid with no supplementary group (the harness's root
 * group would still open root-group files) and no capability. The
 * bounding set is left alone: with no_new_privs and empty permitted,
 * inheritable and ambient sets, exec cannot grant anything. */
SB_CHILD static void sb_drop_privs(const sb_child *c)
{
    long r = 0;
    if (c->set_ids) {
        if ((r = SYS2(SYS_setgroups, 0, 0)) < 0 ||
            (r = SYS3(SYS_setresgid, c->gid, c->gid, c->gid)) < 0 ||
            (r = SYS3(SYS_setresuid, c->uid, c->uid, c->uid)) < 0)
            sb_fail(c, SB_ST_CREDS, r);
    }
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2] = {{0, 0, 0}, {0, 0, 0}};
    r = SYS5(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    if (r >= 0)
        r = SYS2(SYS_capset, &hdr, data);
    if (r < 0)
        sb_fail(c, SB_ST_CAPS, r);
}

/* Everything that does not depend on the job, done while the sandbox is a
 * spare: no_new_privs, the seccomp filter (loading it costs ~100 us), the
 * identity, the session, stdout/stderr. */
SB_CHILD static void sb_cmd_spare(sb_child *c)
{
    /* The sending end stays with the harness and the init only: their
     * closing it is how a discarded spare's command learns it. */
    SYS1(SYS_close, c->go_send);
    long r = SYS5(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    if (r < 0)
        sb_fail(c, SB_ST_CAPS, r);
    if (c->seccomp && (r = SYS3(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, c->seccomp)) < 0)
        sb_fail(c, SB_ST_SECCOMP, r);
    SB_PROF(c, SB_P_C_SECCOMP);
    int m;
    while ((m = __atomic_load_n(&c->mapped, __ATOMIC_ACQUIRE)) == 0)
        SYS4(SYS_futex, &c->mapped, FUTEX_WAIT_PRIVATE, 0, 0);
    if (m < 0)
        sb_exit(125); /* the init failed and said why */
    sb_drop_privs(c);
    SYS0(SYS_setsid); /* no controlling terminal, own process group */
    SYS1(SYS_umask, 022);
    if ((r = SYS3(SYS_dup3, c->null_fd, 0, 0)) < 0 || (r = SYS3(SYS_dup3, c->out_fd, 1, 0)) < 0 ||
        (r = SYS3(SYS_dup3, c->out_fd, 2, 0)) < 0)
        sb_fail(c, SB_ST_STDIO, r);
}

SB_CHILD static int sb_child_cmd(void *arg)
{
    sb_child *c = arg;
    SB_PROF(c, SB_P_C_START);
    sb_cmd_spare(c);
    sb_job *job = 0;
    int fds[SB_MAX_FDS];
    SB_PROF(c, SB_P_C_READY);
    long n = sb_recv_job(c->go_fd, &job, fds);
    SB_PROF(c, SB_P_C_JOB);
    if (n == -EPIPE)
        sb_exit(0); /* never used */
    if (n < 0)
        sb_fail(c, SB_ST_JOB, n);
    int k = 0;
    long r;
    int ruleset = job->has_ruleset ? fds[k++] : -1;
    if (job->has_stdin && (r = SYS3(SYS_dup3, fds[k++], 0, 0)) < 0)
        sb_fail(c, SB_ST_STDIO, r);
    if (ruleset >= 0 && (r = SYS2(SYS_landlock_restrict_self, ruleset, 0)) < 0)
        sb_fail(c, SB_ST_LANDLOCK, r);
    for (int i = 0; i < job->nrlim; i++)
        if ((r = SYS4(SYS_prlimit64, 0, job->rlim[i].resource, &job->rlim[i].lim, 0)) < 0)
            sb_fail(c, SB_ST_RLIMIT, r);
    if ((r = SYS1(SYS_chdir, job->dir)) < 0)
        sb_fail(c, SB_ST_CHDIR, r);
    /* Every fd above 2 goes at exec; the message pipe stays until then so
     * that an exec failure can still be reported. */
    if ((r = SYS3(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC)) < 0)
        sb_fail(c, SB_ST_FDS, r);
    unsigned long none = 0;
    SYS4(SYS_rt_sigprocmask, SIG_SETMASK, &none, 0, 8);
    SB_PROF(c, SB_P_C_EXEC);
    r = SYS3(SYS_execve, job->path, job->argv, job->envp);
    sb_fail(c, SB_ST_EXEC, r);
}

/* ---- the init ------------------------------------------------------------- */

typedef struct sb_reap {
    long cmd;            /* the command's pid, 0 once reaped */
    int cmd_status;
    long maxrss_kb;
    long cpu_us;
} sb_reap;

/* Reaps one child (or, with WNOHANG, none) and accounts for it. Returns
 * wait4's result. */
SB_CHILD static long sb_reap_one(sb_reap *r, int flags)
{
    int st = 0;
    struct rusage ru;
    long w = SYS4(SYS_wait4, -1, &st, __WALL | flags, &ru);
    if (w <= 0)
        return w;
    if (ru.ru_maxrss > r->maxrss_kb)
        r->maxrss_kb = ru.ru_maxrss;
    r->cpu_us += (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000L + ru.ru_utime.tv_usec +
                 ru.ru_stime.tv_usec;
    if (w == r->cmd) {
        r->cmd = 0;
        r->cmd_status = st;
    }
    return w;
}

/* Waits until the command exits or the harness asks us to stop (SIGUSR1:
 * timeout, output flood), reaping orphans on the way; then kills every
 * other process of the namespace and reaps them all, so that their CPU
 * time is counted (the kernel's own clean-up at our exit would discard
 * it) and nothing is left when we report. */
SB_CHILD __attribute__((noreturn)) static void sb_reap_all(const sb_child *c, long cmd)
{
    sb_reap r = {cmd, 0, 0, 0};
    unsigned long wake = (1UL << (SIGCHLD - 1)) | (1UL << (SIGUSR1 - 1));
    int stopped = 0;
    long last = 0;
    while (r.cmd && !stopped) {
        while ((last = sb_reap_one(&r, WNOHANG)) > 0)
            ;
        if (!r.cmd)
            break;
        siginfo_t info;
        long sig = SYS4(SYS_rt_sigtimedwait, &wake, &info, 0, 8);
#ifdef SB_PROFILE
        if (!c->prof[SB_P_I_CHLD])
            SB_PROF((sb_child *)c, SB_P_I_CHLD);
#endif
        if (sig == SIGUSR1 && info.si_pid == 0)
            stopped = 1; /* sent from outside our namespace: the harness */
        last = 0;
    }
    /* With no child left (ECHILD) nobody else is in the namespace: every
     * orphan is handed to us. Else kill(-1), which walks every process of
     * the host, and reap them all. */
    if (last != -ECHILD) {
        SYS2(SYS_kill, -1, SIGKILL);
        long w;
        while ((w = sb_reap_one(&r, 0)) > 0 || w == -EINTR)
            ;
    }
    sb_msg m;
    memset(&m, 0, sizeof m);
    m.kind = SB_MSG_DONE;
    m.wstatus = r.cmd ? 0 : r.cmd_status;
    m.maxrss_kb = r.maxrss_kb;
    m.cpu_us = r.cpu_us;
    SB_PROF((sb_child *)c, SB_P_I_DONE);
    SYS3(SYS_write, c->msg_fd, &m, sizeof m);
    SYS1(SYS_close, c->out_fd);
    sb_exit(0);
}

SB_CHILD static void sb_init_setup(sb_child *c)
{
    /* If the harness's thread that made us dies, so does the sandbox. */
    SYS5(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    sb_reset_signals(c);
    long r = sb_close_except(c->keep, c->nkeep);
    if (r < 0)
        sb_fail(c, SB_ST_FDS, r);
    if (c->write_maps)
        sb_write_own_maps(c);
    /* Creating these (the IPC one alone registers its sysctl tables) costs
     * more than the clone itself: here it overlaps with the harness. */
    if (c->unshare_flags && (r = SYS1(SYS_unshare, c->unshare_flags)) < 0)
        sb_fail(c, SB_ST_USERNS, r);
    SB_PROF(c, SB_P_I_UNSHARED);
    if (c->set_hostname && (r = SYS2(SYS_sethostname, "sandbox", 7)) < 0)
        sb_fail(c, SB_ST_HOSTNAME, r);
    if (c->net_fd >= 0) {
        if ((r = SYS2(SYS_setns, c->net_fd, CLONE_NEWNET)) < 0)
            sb_fail(c, SB_ST_NETNS, r);
        SYS1(SYS_close, c->net_fd);
    }
    /* We share the harness's memory: its environment must not be readable
     * through /proc/1/environ by a command of the same uid. */
    if (c->no_dump && (r = SYS5(SYS_prctl, PR_SET_DUMPABLE, 0, 0, 0, 0)) < 0)
        sb_fail(c, SB_ST_CAPS, r);
    sb_mounts(c);
    SB_PROF(c, SB_P_I_MOUNTED);
}

/* Makes the run's cgroups with their limits and moves the command into
 * them (we stay out of the memory one: we share the harness's memory).
 * Not fatal: without them the rlimits still hold, and cg_ok says so. */
SB_CHILD static void sb_cgroup_enter(sb_child *c, long pid)
{
    __atomic_store_n(&c->cg_ok, -1, __ATOMIC_RELEASE);
    for (int i = 0; i < 2; i++) {
        int again = i == 1 && c->cg_fd[1] == c->cg_fd[0]; /* v2: one dir */
        long r = again ? 0 : SYS3(SYS_mkdirat, c->cg_fd[i], c->cg_name, 0755);
        if (r < 0 && r != -EEXIST)
            return;
        if (sb_write_num_at(c->cg_fd[i], c->cg_lim_path[i], c->cg_lim[i]) < 0)
            return;
        if (!again && sb_write_num_at(c->cg_fd[i], c->cg_procs[i], pid) < 0)
            return;
    }
    __atomic_store_n(&c->cg_ok, 1, __ATOMIC_RELEASE);
}

/* Starts the command, which prepares itself while we map it. */
SB_CHILD static long sb_start_cmd(sb_child *c)
{
    /* The command runs on its own stack in our memory until it execs.
     * glibc's clone() touches no TLS in the child and sets errno only on
     * failure. */
    int flags = CLONE_VM | SIGCHLD | (c->cmd_userns ? CLONE_NEWUSER : 0);
    int pid = clone(sb_child_cmd, c->cmd_stack, flags, c);
    if (pid < 0)
        sb_fail(c, SB_ST_CLONE, -EAGAIN);
    c->cmd_started = 1;
    SB_PROF(c, SB_P_I_CMDCLONED);
    if (c->cmd_userns)
        sb_map_cmd(c, pid);
    if (c->cg_name[0])
        sb_cgroup_enter(c, pid);
    SB_PROF(c, SB_P_I_MAPPED);
    __atomic_store_n(&c->mapped, 1, __ATOMIC_RELEASE);
    SYS3(SYS_futex, &c->mapped, FUTEX_WAKE_PRIVATE, 1);
    /* The command has its own copies. We keep the output pipe open until
     * our report is written: the harness then sees the end of the output
     * and the report together, with one wakeup. */
    SYS1(SYS_close, c->go_fd);
    SYS1(SYS_close, c->null_fd);
    return pid;
}

/* Waits for the job on the job socket (returns 1) or for the command's
 * exit or a stop (0): when the premounts are the job's binds, the harness
 * gives the job straight to the command and we have nothing to do before
 * it ends. Signals stay blocked; a signalfd makes them pollable. */
SB_CHILD static int sb_wait_job(const sb_child *c)
{
    unsigned long wake = (1UL << (SIGCHLD - 1)) | (1UL << (SIGUSR1 - 1));
    long sfd = SYS4(SYS_signalfd4, -1, &wake, 8, SFD_CLOEXEC);
    if (sfd < 0)
        sb_fail(c, SB_ST_JOB, sfd);
    struct pollfd pf[2] = {{c->job_fd, POLLIN, 0}, {(int)sfd, POLLIN, 0}};
    long r;
    do
        r = SYS5(SYS_ppoll, pf, 2, 0, 0, 8);
    while (r == -EINTR);
    SYS1(SYS_close, sfd);
    if (r < 0)
        sb_fail(c, SB_ST_JOB, r);
    if (!pf[0].revents)
        SB_PROF((sb_child *)c, SB_P_I_CHLD);
    return pf[0].revents != 0;
}

SB_CHILD int sb_child_init(void *arg)
{
    sb_child *c = arg;
    SB_PROF(c, SB_P_I_START);
    sb_init_setup(c);
    long pid = sb_start_cmd(c);
    sb_premount(c);
    SB_PROF(c, SB_P_I_PREMOUNTED);

    /* A spare until the job arrives, here or at the command. */
    if (!sb_wait_job(c)) {
        sb_close_covers(c);
        sb_reap_all(c, pid);
    }
    sb_job *job = 0;
    int fds[SB_MAX_FDS];
    long n = sb_recv_job(c->job_fd, &job, fds);
    SB_PROF(c, SB_P_I_JOB);
    if (n == -EPIPE)
        sb_exit(0); /* discarded: the namespace takes the command along */
    if (n < 0)
        sb_fail(c, SB_ST_JOB, n);
    int pass = job->has_ruleset + job->has_stdin;
    if (n != pass + job->nidmap + job->has_disk)
        sb_fail(c, SB_ST_JOB, -EPROTO);
    /* The premounts were not in place yet when the harness looked, or are
     * not the job's binds. */
    if (c->cg_ok == 1 && (job->cg_lim[0] != c->cg_lim[0] || job->cg_lim[1] != c->cg_lim[1])) {
        for (int i = 0; i < 2; i++)
            if (sb_write_num_at(c->cg_fd[i], c->cg_lim_path[i], job->cg_lim[i]) < 0)
                sb_fail(c, SB_ST_CGROUP, -EIO);
    }
    if (sb_pre_match(c, job)) {
        for (int i = 0; i < job->nidmap; i++)
            SYS1(SYS_close, fds[pass + i]);
    } else {
        sb_unpremount(c);
        sb_bind_mounts(c, job, fds + pass, job->has_disk ? fds + pass + job->nidmap : 0);
    }
    sb_close_covers(c);
    SB_PROF(c, SB_P_I_BOUND);
    long r = sb_send_job(c->go_send, job, fds, pass);
    SB_PROF(c, SB_P_I_PASSED);
    if (r < 0)
        sb_fail(c, SB_ST_JOB, r);
    for (int i = 0; i < pass; i++)
        SYS1(SYS_close, fds[i]);
    SYS1(SYS_close, c->go_send);
    SYS1(SYS_close, c->job_fd);
    sb_reap_all(c, pid);
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
    case SB_ST_BIND: return "mount the work dir into the private tmpfs above it";
    case SB_ST_CREDS: return "drop to the sandbox uid";
    case SB_ST_USERNS: return "create the namespaces";
    case SB_ST_IDMAPS: return "write uid_map/gid_map";
    case SB_ST_CAPS: return "drop capabilities";
    case SB_ST_CLONE: return "start the command";
    case SB_ST_WAIT: return "wait for the command";
    case SB_ST_STDIO: return "set up stdin/stdout/stderr";
    case SB_ST_CHDIR: return "enter the work dir (each parent directory must be searchable by the sandbox uid)";
    case SB_ST_RLIMIT: return "set resource limits";
    case SB_ST_LANDLOCK: return "enforce Landlock";
    case SB_ST_SECCOMP: return "load the seccomp filter";
    case SB_ST_EXEC: return "exec";
    case SB_ST_PROC: return "mount /proc";
    case SB_ST_TMPFS: return "mount the private TMPDIR";
    case SB_ST_JOB: return "receive the job";
    case SB_ST_DISK: return "overlay the work dir with its size-bounded layer";
    case SB_ST_CGROUP: return "set the cgroup limits";
    case SB_ST_ROOT: return "enter the run's own root (pivot_root)";
    case SB_ST_RO: return "read-only bind of an ro_paths entry";
    default: return "unknown step";
    }
}
