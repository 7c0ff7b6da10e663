/* sb_landlock.c - the Landlock ruleset of one run.
 *
 * Read and execute everywhere; create, write, remove, rename, truncate only
 * below the work dir, the private temp dir and the extra writable paths;
 * write to /dev/null (or, with a private /dev/shm, to /dev). From ABI 4 no TCP bind/connect (seccomp already
 * refuses the sockets), from ABI 6 scoped signals and abstract unix
 * sockets: the command cannot signal or connect to anything outside its
 * own domain. The ruleset is built in the parent (it opens paths); the
 * command enforces it with landlock_restrict_self before exec.
 *
 * Debian 12's headers stop at ABI 2: the newer constants are defined here.
 */
#include "sandbox/sb_internal.h"

#include "common/err.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#endif

/* The ABI 6 layout of the attribute (older kernels get a prefix of it). */
struct sb_ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

struct sb_ll_path_beneath {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

#define SB_LL_READ (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
/* Rights that apply to a file (not a directory) in a rule. */
#define SB_LL_FILE (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
                    LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE)

/* Every filesystem right the ABI knows, except IOCTL_DEV (ABI 5): left
 * unhandled so that terminal and device ioctls behave as usual; seccomp
 * refuses TIOCSTI. */
static uint64_t sb_ll_fs_rights(int abi)
{
    uint64_t r = (1ULL << 13) - 1; /* ABI 1: EXECUTE .. MAKE_SYM */
    if (abi >= 2)
        r |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3)
        r |= LANDLOCK_ACCESS_FS_TRUNCATE;
    return r;
}

static int sb_ll_add_fd(int rs, int fd, const char *path, uint64_t access, char *err)
{
    struct stat st;
    if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
        access &= SB_LL_FILE; /* directory rights are invalid on a file */
    struct sb_ll_path_beneath pb = {.allowed_access = access, .parent_fd = fd};
    long r = syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
    if (r < 0)
        return rl_err(err, RL_EIO, "landlock: rule for %s: %s", path, strerror(errno));
    return 0;
}

static int sb_ll_add_at(int rs, int dfd, const char *path, uint64_t access, char *err)
{
    int fd = path[0] ? openat(dfd, path, O_PATH | O_CLOEXEC) : fcntl(dfd, F_DUPFD_CLOEXEC, 3);
    if (fd < 0)
        return rl_err(err, rl_from_errno(errno), "landlock: %s: %s", path[0] ? path : "/",
                      strerror(errno));
    int rc = sb_ll_add_fd(rs, fd, path[0] ? path : "/", access, err);
    close(fd);
    return rc;
}

static int sb_ll_add(int rs, const char *path, uint64_t access, char *err)
{
    return sb_ll_add_at(rs, AT_FDCWD, path, access, err);
}

/* The ruleset with the rights this ABI handles; < 0 with err. */
static int sb_ll_create(int abi, uint64_t *fs_out, char *err)
{
    if (abi < 1)
        return rl_err(err, RL_EUNSUP, "landlock: not available on this kernel");
    uint64_t fs = sb_ll_fs_rights(abi);
    struct sb_ll_ruleset_attr attr = {.handled_access_fs = fs};
    size_t size = sizeof(uint64_t);
    if (abi >= 4) {
        attr.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
        size = 2 * sizeof(uint64_t);
    }
    if (abi >= 6) {
        attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
        size = sizeof attr;
    }
    long rs = syscall(SYS_landlock_create_ruleset, &attr, size, 0);
    if (rs < 0)
        return rl_err(err, RL_EIO, "landlock: create ruleset (ABI %d): %s", abi, strerror(errno));
    /* O_CLOEXEC: the harness's other children must not inherit it. */
    if (fcntl((int)rs, F_SETFD, FD_CLOEXEC) < 0) {
        close((int)rs);
        return rl_err(err, RL_EIO, "landlock: ruleset fd: %s", strerror(errno));
    }
    *fs_out = fs;
    return (int)rs;
}

int sb_landlock_ruleset_root(int *out, int abi, int root_fd, int work_fd, const char *const *rw_dirs,
                             char *err)
{
    *out = -1;
    uint64_t fs;
    int rs = sb_ll_create(abi, &fs, err);
    if (rs < 0)
        return rs;
    /* The sandbox's /dev holds only the basic nodes (0666) and its shm
     * dir; its /tmp is its own. */
    int rc = sb_ll_add_at(rs, root_fd, "", SB_LL_READ, err);
    if (!rc)
        rc = sb_ll_add_at(rs, root_fd, "dev", fs & ~LANDLOCK_ACCESS_FS_EXECUTE, err);
    if (!rc)
        rc = sb_ll_add_at(rs, root_fd, "tmp", fs, err);
    if (!rc && work_fd >= 0)
        rc = sb_ll_add_at(rs, work_fd, "", fs, err);
    for (size_t i = 0; rw_dirs && rw_dirs[i] && !rc; i++)
        rc = sb_ll_add(rs, rw_dirs[i], fs, err);
    if (rc) {
        close(rs);
        return rc;
    }
    *out = rs;
    return 0;
}

int sb_landlock_ruleset(int *out, int abi, int dev_rw, const char *const *rw_dirs, char *err)
{
    *out = -1;
    uint64_t fs;
    int rs = sb_ll_create(abi, &fs, err);
    if (rs < 0)
        return rs;
    int rc = sb_ll_add(rs, "/", SB_LL_READ, err);
    /* /dev: the private /dev/shm tmpfs (Python's multiprocessing needs it)
     * hides its mount point from Landlock, so the rule is on /dev, where
     * file permissions leave only the world-writable devices (null, zero,
     * full, random, tty). Without that tmpfs, /dev/null alone. */
    if (!rc && dev_rw)
        rc = sb_ll_add(rs, "/dev", fs & ~LANDLOCK_ACCESS_FS_EXECUTE, err);
    else if (!rc)
        rc = sb_ll_add(rs, "/dev/null", (SB_LL_FILE & fs) & ~LANDLOCK_ACCESS_FS_EXECUTE, err);
    for (size_t i = 0; rw_dirs && rw_dirs[i] && !rc; i++)
        rc = sb_ll_add(rs, rw_dirs[i], fs, err);
    if (rc) {
        close(rs);
        return rc;
    }
    *out = rs;
    return 0;
}

/* ---- cache ------------------------------------------------------------

 * A GRPO group runs the same few work dirs over and over: their rulesets
 * are kept (a ruleset can be enforced any number of times). A rule holds
 * the directory's inode, so the key is the paths plus each directory's
 * device, inode and birth time: a dir removed and made again (even with a
 * recycled inode number) gets a new ruleset. Each run gets its own dup. */


typedef struct sb_ll_ent {
    char key[SB_LL_KEY];
    int fd;
    unsigned long long used;
} sb_ll_ent;

static pthread_mutex_t g_ll_lock = PTHREAD_MUTEX_INITIALIZER;
static sb_ll_ent g_ll[SB_LL_CACHE];
static unsigned long long g_ll_clock;

/* Builds the key; 0 when a dir cannot be identified (then no caching). */
static int sb_ll_key(char *key, int abi, int dev_rw, const char *const *rw_dirs)
{
    size_t n = (size_t)snprintf(key, SB_LL_KEY, "%d/%d", abi, dev_rw);
    for (size_t i = 0; rw_dirs && rw_dirs[i]; i++) {
        struct statx sx;
        if (statx(AT_FDCWD, rw_dirs[i], 0, STATX_INO | STATX_BTIME, &sx) < 0 ||
            !(sx.stx_mask & STATX_BTIME))
            return 0;
        int w = snprintf(key + n, SB_LL_KEY - n, "|%s:%u:%u:%llu:%lld.%u", rw_dirs[i],
                         sx.stx_dev_major, sx.stx_dev_minor, (unsigned long long)sx.stx_ino,
                         (long long)sx.stx_btime.tv_sec, sx.stx_btime.tv_nsec);
        if (w < 0 || (size_t)w >= SB_LL_KEY - n)
            return 0;
        n += (size_t)w;
    }
    return 1;
}

int sb_landlock_ruleset_cached(int *out, int abi, int dev_rw, const char *const *rw_dirs, char *err)
{
    char key[SB_LL_KEY];
    *out = -1;
    if (!sb_ll_key(key, abi, dev_rw, rw_dirs))
        return sb_landlock_ruleset(out, abi, dev_rw, rw_dirs, err);
    pthread_mutex_lock(&g_ll_lock);
    sb_ll_ent *hit = NULL, *victim = &g_ll[0];
    for (int i = 0; i < SB_LL_CACHE; i++) {
        if (g_ll[i].used && !strcmp(g_ll[i].key, key)) {
            hit = &g_ll[i];
            break;
        }
        if (g_ll[i].used < victim->used)
            victim = &g_ll[i];
    }
    int rc = 0;
    if (!hit) {
        int fd;
        rc = sb_landlock_ruleset(&fd, abi, dev_rw, rw_dirs, err);
        if (!rc) {
            if (victim->used)
                close(victim->fd);
            snprintf(victim->key, sizeof victim->key, "%s", key);
            victim->fd = fd;
            hit = victim;
        }
    }
    if (hit) {
        hit->used = ++g_ll_clock;
        *out = fcntl(hit->fd, F_DUPFD_CLOEXEC, 3);
        if (*out < 0)
            rc = rl_err(err, RL_EIO, "landlock: dup ruleset: %s", strerror(errno));
    }
    pthread_mutex_unlock(&g_ll_lock);
    return rc;
}
