/* sb_disk.c - the disk bound of a run (sb_limits.disk_mb).
 *
 * RLIMIT_FSIZE bounds each file, not their total, and work trees are often
 * RAM-backed (/dev/shm). With a disk bound, the command's work dir is an
 * overlay: the work dir itself as the (read-only) lower layer, and as
 * upper layer a fresh tmpfs of disk_mb (SB_DISK_INODES files). Everything
 * the command creates or changes in its work dir (a changed file is copied
 * up whole) lands in that tmpfs; a write past its size fails with ENOSPC.
 * After the run the harness carries the upper layer back into the work
 * dir: new and changed files, directories and symlinks (owned by the work
 * dir's owner, with their modes and times), deletions (overlay whiteouts),
 * replaced directories (opaque ones); FIFOs, sockets and devices are not
 * carried. So the files written before the limit are in the work dir
 * afterwards, and the work dir grows by at most disk_mb.
 *
 * The harness makes the overlay (a detached mount) and its Landlock rule;
 * the init only moves it onto the work dir's path.
 */
#include "sandbox/sb_internal.h"

#include "common/err.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

int sb_disk_make(int *ovl_fd, int *up_fd, const char *dir, int userns_fd, long mb, char *err)
{
    *ovl_fd = *up_fd = -1;
    struct stat st;
    if (stat(dir, &st) < 0)
        return rl_err(err, rl_from_errno(errno), "sandbox: work dir %s: %s", dir, strerror(errno));
    char size[32], inodes[32];
    snprintf(size, sizeof size, "%ldm", mb);
    snprintf(inodes, sizeof inodes, "%d", SB_DISK_INODES);
    int t = sb_tmpfs_detached(size, inodes, "0755");
    if (t < 0)
        return rl_err(err, rl_from_errno(errno), "sandbox: disk layer tmpfs: %s", strerror(errno));
    int lower = -1, up = -1, wk = -1, fs = -1, rc = 0;
    const char *what = "layer dirs";
    /* The merged work dir shows the upper dir's owner and mode: the
     * command's, as the idmapped work dir shows it. */
    if (mkdirat(t, "up", 0755) < 0 || mkdirat(t, "wk", 0700) < 0 ||
        fchownat(t, "up", SB_HOST_UID, SB_HOST_UID, 0) < 0 || fchmodat(t, "up", st.st_mode & 07777, 0) < 0)
        goto fail;
    what = "work dir clone";
    lower = (int)syscall(SYS_open_tree, AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    if (lower < 0)
        goto fail;
    if (userns_fd >= 0) {
        struct mount_attr attr = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (unsigned)userns_fd};
        what = "idmapping of the work dir";
        if (syscall(SYS_mount_setattr, lower, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0)
            goto fail;
    }
    what = "overlay";
    up = openat(t, "up", O_PATH | O_DIRECTORY | O_CLOEXEC);
    wk = openat(t, "wk", O_PATH | O_DIRECTORY | O_CLOEXEC);
    fs = (int)syscall(SYS_fsopen, "overlay", FSOPEN_CLOEXEC);
    if (up < 0 || wk < 0 || fs < 0 ||
        syscall(SYS_fsconfig, fs, FSCONFIG_SET_FD, "lowerdir+", NULL, lower) < 0 ||
        syscall(SYS_fsconfig, fs, FSCONFIG_SET_FD, "upperdir", NULL, up) < 0 ||
        syscall(SYS_fsconfig, fs, FSCONFIG_SET_FD, "workdir", NULL, wk) < 0 ||
        syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
        goto fail;
    *ovl_fd = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID);
    if (*ovl_fd < 0)
        goto fail;
    *up_fd = openat(t, "up", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (*up_fd < 0)
        goto fail;
    goto done;
fail:
    rc = rl_err(err, rl_from_errno(errno), "sandbox: disk bound of %s: %s: %s", dir, what,
                strerror(errno));
    if (*ovl_fd >= 0)
        close(*ovl_fd);
    *ovl_fd = -1;
done:
    if (fs >= 0)
        close(fs);
    if (up >= 0)
        close(up);
    if (wk >= 0)
        close(wk);
    if (lower >= 0)
        close(lower);
    close(t);
    return rc;
}

/* Removes name in dfd, a tree if it is a directory. */
static int sb_remove_at(int dfd, const char *name, int depth)
{
    if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
        return 0;
    if (errno != EISDIR && errno != EPERM)
        return -1;
    if (depth > SB_DISK_DEPTH_MAX) {
        errno = ELOOP;
        return -1;
    }
    int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while (!rc && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            rc = sb_remove_at(dirfd(d), e->d_name, depth + 1);
    closedir(d);
    return rc ? rc : unlinkat(dfd, name, AT_REMOVEDIR);
}

typedef struct sb_carry {
    uid_t uid;
    gid_t gid;
    long files;
} sb_carry;

static int sb_carry_file(int up, int wd, const char *name, const struct stat *st, const sb_carry *c)
{
    int in = openat(up, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (in < 0)
        return -1;
    /* A new inode: a hard link of the old file elsewhere keeps its data. */
    if (sb_remove_at(wd, name, 0) < 0) {
        close(in);
        return -1;
    }
    int out = openat(wd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (out < 0) {
        close(in);
        return -1;
    }
    int rc = 0;
    off_t left = st->st_size;
    int plain = 0; /* copy_file_range refuses across file systems of two types */
    while (left > 0) {
        ssize_t n = plain ? -1 : copy_file_range(in, NULL, out, NULL, (size_t)left, 0);
        if (n < 0 && !plain && (errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP)) {
            plain = 1;
            continue;
        }
        if (plain) {
            char buf[65536];
            n = read(in, buf, sizeof buf);
            if (n > 0 && write(out, buf, (size_t)n) != n)
                n = -1;
        }
        if (n <= 0) {
            rc = -1;
            break;
        }
        left -= n;
    }
    struct timespec ts[2] = {st->st_atim, st->st_mtim};
    if (!rc && (fchown(out, c->uid, c->gid) < 0 || fchmod(out, st->st_mode & 07777) < 0 ||
                futimens(out, ts) < 0))
        rc = -1;
    close(in);
    close(out);
    return rc;
}

static int sb_carry_dir(int up, int wd, sb_carry *c, int depth);

static int sb_carry_entry(int up, int wd, const char *name, sb_carry *c, int depth)
{
    struct stat st, cur;
    if (++c->files > SB_DISK_INODES) {
        errno = EFBIG;
        return -1;
    }
    if (fstatat(up, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return -1;
    if (S_ISCHR(st.st_mode) && st.st_rdev == 0) /* whiteout: deleted */
        return sb_remove_at(wd, name, 0);
    if (S_ISREG(st.st_mode))
        return sb_carry_file(up, wd, name, &st, c);
    if (S_ISLNK(st.st_mode)) {
        char link[PATH_MAX];
        ssize_t n = readlinkat(up, name, link, sizeof link - 1);
        if (n < 0 || sb_remove_at(wd, name, 0) < 0)
            return -1;
        link[n] = '\0';
        if (symlinkat(link, wd, name) < 0 || fchownat(wd, name, c->uid, c->gid, AT_SYMLINK_NOFOLLOW) < 0)
            return -1;
        return 0;
    }
    if (!S_ISDIR(st.st_mode))
        return 0; /* FIFOs, sockets, devices: not carried */
    if (depth >= SB_DISK_DEPTH_MAX) {
        errno = ELOOP;
        return -1;
    }
    int sub = openat(up, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0)
        return -1;
    char v[4];
    ssize_t xn = fgetxattr(sub, "trusted.overlay.opaque", v, sizeof v);
    int opaque = xn == 1 && v[0] == 'y';
    int have = fstatat(wd, name, &cur, AT_SYMLINK_NOFOLLOW) == 0;
    if (have && (!S_ISDIR(cur.st_mode) || opaque)) { /* replaced by this dir */
        if (sb_remove_at(wd, name, 0) < 0) {
            close(sub);
            return -1;
        }
        have = 0;
    }
    int rc = 0;
    if (!have && mkdirat(wd, name, 0700) < 0)
        rc = -1;
    int wsub = rc ? -1 : openat(wd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (wsub < 0)
        rc = -1;
    if (!rc)
        rc = sb_carry_dir(sub, wsub, c, depth + 1);
    struct timespec ts[2] = {st.st_atim, st.st_mtim};
    if (!rc && (fchown(wsub, c->uid, c->gid) < 0 || fchmod(wsub, st.st_mode & 07777) < 0 ||
                futimens(wsub, ts) < 0))
        rc = -1;
    if (wsub >= 0)
        close(wsub);
    close(sub);
    return rc;
}

static int sb_carry_dir(int up, int wd, sb_carry *c, int depth)
{
    int fd = fcntl(up, F_DUPFD_CLOEXEC, 3);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while (!rc && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            rc = sb_carry_entry(dirfd(d), wd, e->d_name, c, depth);
    closedir(d);
    return rc;
}

int sb_disk_carry(int up_fd, const char *dir, char *err)
{
    int wd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    if (wd < 0 || fstat(wd, &st) < 0) {
        int e = errno;
        if (wd >= 0)
            close(wd);
        return rl_err(err, rl_from_errno(e), "sandbox: work dir %s: %s", dir, strerror(e));
    }
    sb_carry c = {st.st_uid, st.st_gid, 0};
    int rc = sb_carry_dir(up_fd, wd, &c, 0);
    int e = errno;
    close(wd);
    if (rc)
        return rl_err(err, rl_from_errno(e),
                      "sandbox: carrying the run's writes back into %s: %s (at most %d files, %d levels)",
                      dir, strerror(e), SB_DISK_INODES, SB_DISK_DEPTH_MAX);
    return 0;
}
