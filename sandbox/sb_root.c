/* sb_root.c - the root a run sees (a root harness with mount and PID
 * namespaces).
 *
 * Each sandbox gets a root of its own: a tmpfs the harness makes detached
 * (fsopen/fsmount) while it makes the spare, which the init moves into its
 * mount namespace and pivots into. It holds
 *   /usr (and any of bin, sbin, lib* that is a directory on the host) as a
 *     read-only recursive bind; those that are symlinks into /usr on a
 *     merged-/usr system (Debian 12) as the same symlinks;
 *   /etc: a read-only clone of a tmpfs made once per process holding the
 *     host /etc entries that compilers, the dynamic loader, Python and the
 *     test runners read (see SB_ETC_KEEP): files copied (a later change of
 *     one is not seen by that process's runs), directories bound read-only;
 *   /dev with null, zero, full, random, urandom, tty, the fd and stdio
 *     links and an empty shm dir (1777): the run's private /dev/shm;
 *   /tmp (1777): the run's private TMPDIR;
 *   /proc, on which the init mounts the /proc of the run's PID namespace
 *     (hiding the host's root, which the pivot put there);
 * then, made by the init at their own paths (with the directories above
 * them), the work dir and the rw_paths entries, and the read-only binds of
 * ro_paths inside them. Nothing else of the host: not its /tmp, /run,
 * /dev/shm, /home, /root, sockets, nor the checkout of the project. /tmp
 * and /dev/shm share the tmpfs's size (SB_TMPFS_MB + SB_SHM_MB).
 */
#include "sandbox/sb_internal.h"

#include "common/err.h"
#include "common/str.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static int sb_fsmount_tmpfs(const char *opts[][2], int n);

/* The host /etc entries a run gets (those that exist): the loader's cache
 * and config, user and group names, name service and host config, the
 * alternatives links (cc, python3 go through them), time zone, Python's
 * site config, TLS roots (read at import by some libraries), MIME types. */
static const char *const SB_ETC_KEEP[] = {
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "passwd", "group", "nsswitch.conf",
    "alternatives", "localtime", "timezone", "hosts", "host.conf", "gai.conf", "protocols",
    "services", "os-release", "debian_version", "ssl", "mime.types", "environment",
    NULL,
};
/* ... and every entry whose name starts with this (python3, python3.11). */
#define SB_ETC_KEEP_PREFIX "python3"

static const char *const SB_TOP[] = {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", NULL};

int sb_tmpfs_detached(const char *size, const char *inodes, const char *mode)
{
    const char *opts[][2] = {{"size", size}, {"nr_inodes", inodes}, {"mode", mode}};
    return sb_fsmount_tmpfs(opts, 3);
}

static int sb_fsmount_tmpfs(const char *opts[][2], int n)
{
    int fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
    if (fs < 0)
        return -1;
    for (int i = 0; i < n; i++)
        if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, opts[i][0], opts[i][1], 0) < 0)
            goto fail;
    if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
        goto fail;
    int m = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID);
    int e = errno;
    close(fs);
    errno = e;
    return m;
fail:
    e = errno;
    close(fs);
    errno = e;
    return -1;
}

static int sb_root_bind(int root, int dfd, const char *path, unsigned flags, const char *name);

/* Puts the entry name of the host's /etc (src) into dst: a symlink as it
 * is, a regular file readable by everyone as a copy (the sandbox uid could
 * not read the others; a file bind-mounted on the host, as containers do
 * with hosts, is read through), a directory searchable by everyone as a
 * read-only bind (alternatives/ and ssl/certs/ hold hundreds of links:
 * copying them cost ~10 ms per process, a bind microseconds). Best effort:
 * what fails is left out. */
static void sb_etc_put(int src, int dst, const char *name)
{
    struct stat st;
    if (fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return;
    if (S_ISLNK(st.st_mode)) {
        char link[PATH_MAX];
        ssize_t n = readlinkat(src, name, link, sizeof link - 1);
        if (n > 0) {
            link[n] = '\0';
            symlinkat(link, dst, name);
        }
        return;
    }
    if (S_ISDIR(st.st_mode) && (st.st_mode & 0001)) {
        if (mkdirat(dst, name, 0755) == 0 && sb_root_bind(dst, src, name, 0, name) < 0)
            unlinkat(dst, name, AT_REMOVEDIR);
        return;
    }
    if (!S_ISREG(st.st_mode) || !(st.st_mode & 0004) || st.st_size > SB_ETC_FILE_MAX)
        return;
    int in = openat(src, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (in < 0)
        return;
    int out = openat(dst, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (out >= 0) {
        char buf[65536];
        ssize_t n;
        while ((n = read(in, buf, sizeof buf)) > 0)
            if (write(out, buf, (size_t)n) != n)
                break;
        fchmod(out, st.st_mode & 0755);
        close(out);
    }
    close(in);
}

/* The run's /etc: a detached tmpfs with the kept entries, -1 on failure. */
static int sb_etc_snapshot(void)
{
    char size[32];
    snprintf(size, sizeof size, "%dm", SB_ETC_MB);
    const char *opts[][2] = {{"size", size}, {"nr_inodes", "1024"}, {"mode", "0755"}};
    int m = sb_fsmount_tmpfs(opts, 3);
    if (m < 0)
        return -1;
    int src = open("/etc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = src >= 0 ? fdopendir(src) : NULL;
    if (!d) {
        if (src >= 0)
            close(src);
        return m; /* an empty /etc */
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        int keep = str_has_prefix(e->d_name, SB_ETC_KEEP_PREFIX);
        for (int i = 0; SB_ETC_KEEP[i] && !keep; i++)
            keep = !strcmp(e->d_name, SB_ETC_KEEP[i]);
        if (keep)
            sb_etc_put(dirfd(d), m, e->d_name);
    }
    closedir(d);
    return m;
}

void sb_root_probe(sb_caps *c)
{
    c->etc_fd = -1;
    c->ntop = 0;
    for (int i = 0; SB_TOP[i] && c->ntop < SB_ROOT_TOP_MAX; i++) {
        char path[32];
        snprintf(path, sizeof path, "/%s", SB_TOP[i]);
        struct stat st;
        if (lstat(path, &st) < 0)
            continue;
        int k = c->ntop;
        snprintf(c->top[k].name, sizeof c->top[k].name, "%s", SB_TOP[i]);
        c->top[k].link[0] = '\0';
        if (S_ISLNK(st.st_mode)) {
            ssize_t n = readlink(path, c->top[k].link, sizeof c->top[k].link - 1);
            if (n <= 0 || n >= (ssize_t)sizeof c->top[k].link - 1)
                continue;
            c->top[k].link[n] = '\0';
        } else if (!S_ISDIR(st.st_mode)) {
            continue;
        }
        c->ntop++;
    }
    c->etc_fd = sb_etc_snapshot();
    c->rootfs = c->etc_fd >= 0;
}

/* A read-only clone of the tree at (dfd, path) mounted on name in root. */
static int sb_root_bind(int root, int dfd, const char *path, unsigned flags, const char *name)
{
    int t = (int)syscall(SYS_open_tree, dfd, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | flags);
    if (t < 0)
        return -1;
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID};
    int r = (int)syscall(SYS_mount_setattr, t, "", AT_EMPTY_PATH | (flags & AT_RECURSIVE), &attr,
                         sizeof attr);
    if (r == 0)
        r = (int)syscall(SYS_move_mount, t, "", root, name, MOVE_MOUNT_F_EMPTY_PATH);
    int e = errno;
    close(t);
    errno = e;
    return r;
}

int sb_root_make(const sb_caps *caps, char *err)
{
    char size[32], inodes[32];
    snprintf(size, sizeof size, "%ldm", (long)(SB_TMPFS_MB + SB_SHM_MB));
    snprintf(inodes, sizeof inodes, "%d", SB_TMPFS_INODES);
    const char *opts[][2] = {{"size", size}, {"nr_inodes", inodes}, {"mode", "0755"}};
    int m = sb_fsmount_tmpfs(opts, 3);
    if (m < 0)
        return rl_err(err, rl_from_errno(errno), "sandbox: root tmpfs: %s", strerror(errno));
    static const struct {
        const char *name;
        mode_t mode;
        unsigned major, minor;
    } nodes[] = {
        {"dev/null", 0666, 1, 3}, {"dev/zero", 0666, 1, 5},    {"dev/full", 0666, 1, 7},
        {"dev/random", 0666, 1, 8}, {"dev/urandom", 0666, 1, 9}, {"dev/tty", 0666, 5, 0},
    };
    static const char *const links[][2] = {
        {"/proc/self/fd", "dev/fd"}, {"/proc/self/fd/0", "dev/stdin"},
        {"/proc/self/fd/1", "dev/stdout"}, {"/proc/self/fd/2", "dev/stderr"},
    };
    const char *what = "layout";
    int bad = mkdirat(m, "etc", 0755) < 0 || mkdirat(m, "dev", 0755) < 0 ||
              mkdirat(m, "proc", 0555) < 0 || mkdirat(m, "tmp", 0755) < 0 ||
              mkdirat(m, "dev/shm", 0755) < 0 || fchmodat(m, "tmp", 01777, 0) < 0 ||
              fchmodat(m, "dev/shm", 01777, 0) < 0;
    for (size_t i = 0; !bad && i < sizeof nodes / sizeof nodes[0]; i++) {
        what = nodes[i].name;
        bad = mknodat(m, nodes[i].name, S_IFCHR | nodes[i].mode,
                      makedev(nodes[i].major, nodes[i].minor)) < 0 ||
              fchmodat(m, nodes[i].name, nodes[i].mode, 0) < 0;
    }
    for (size_t i = 0; !bad && i < sizeof links / sizeof links[0]; i++)
        bad = symlinkat(links[i][0], m, links[i][1]) < 0;
    for (int i = 0; !bad && i < caps->ntop; i++) {
        what = caps->top[i].name;
        if (caps->top[i].link[0]) {
            bad = symlinkat(caps->top[i].link, m, caps->top[i].name) < 0;
            continue;
        }
        char path[32];
        snprintf(path, sizeof path, "/%s", caps->top[i].name);
        bad = mkdirat(m, caps->top[i].name, 0755) < 0 ||
              sb_root_bind(m, AT_FDCWD, path, AT_RECURSIVE, caps->top[i].name) < 0;
    }
    if (!bad) {
        what = "etc";
        bad = sb_root_bind(m, caps->etc_fd, "", AT_EMPTY_PATH | AT_RECURSIVE, "etc") < 0;
    }
    if (bad) {
        int e = errno;
        close(m);
        return rl_err(err, rl_from_errno(e), "sandbox: root of the run: %s: %s", what, strerror(e));
    }
    return m;
}
