/* sb_landlock.c - the Landlock ruleset of one run.
 *
 * Read and execute everywhere; create, write, remove, rename, truncate only
 * below the work dir, the private temp dir and the extra writable paths;
 * write to /dev/null. From ABI 4 no TCP bind/connect (seccomp already
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

static int sb_ll_add(int rs, const char *path, uint64_t access, char *err)
{
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0)
        return rl_err(err, rl_from_errno(errno), "landlock: %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
        access &= SB_LL_FILE; /* directory rights are invalid on a file */
    struct sb_ll_path_beneath pb = {.allowed_access = access, .parent_fd = fd};
    long r = syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
    int e = errno;
    close(fd);
    if (r < 0)
        return rl_err(err, RL_EIO, "landlock: rule for %s: %s", path, strerror(e));
    return 0;
}

int sb_landlock_ruleset(int *out, int abi, const char *const *rw_dirs, char *err)
{
    *out = -1;
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
    int rc = sb_ll_add((int)rs, "/", SB_LL_READ, err);
    if (!rc)
        rc = sb_ll_add((int)rs, "/dev/null", (SB_LL_FILE & fs) & ~LANDLOCK_ACCESS_FS_EXECUTE, err);
    for (size_t i = 0; rw_dirs && rw_dirs[i] && !rc; i++)
        rc = sb_ll_add((int)rs, rw_dirs[i], fs, err);
    if (rc) {
        close((int)rs);
        return rc;
    }
    /* O_CLOEXEC: the harness's other children must not inherit it. */
    if (fcntl((int)rs, F_SETFD, FD_CLOEXEC) < 0) {
        close((int)rs);
        return rl_err(err, RL_EIO, "landlock: ruleset fd: %s", strerror(errno));
    }
    *out = (int)rs;
    return 0;
}
