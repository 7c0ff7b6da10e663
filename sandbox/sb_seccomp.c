/* sb_seccomp.c - the seccomp filter, built once per process.
 *
 * libseccomp compiles the rules to BPF once (it allocates, so never in a
 * child); the program is exported through a memfd into memory that lives
 * as long as the process, and each command loads it with one seccomp(2)
 * call before exec. Denied calls fail with EPERM (clone3 with ENOSYS, so
 * that libc falls back to clone, which we can inspect): programs see a
 * clean error instead of dying. Calls from another ABI (int 0x80, x32)
 * kill the process: they would bypass the rules.
 */
#include "sandbox/sb_internal.h"

#include "common/err.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

/* Calls with no business in a test run: escape, inspect other processes,
 * or reach the kernel's riskiest surfaces. io_uring can open sockets
 * without socket(2). */
static const char *const SB_DENY[] = {
    "ptrace", "process_vm_readv", "process_vm_writev", "mount", "umount2", "pivot_root",
    "chroot", "unshare", "setns", "bpf", "perf_event_open", "keyctl", "add_key",
    "request_key", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr",
    "open_by_handle_at", "name_to_handle_at", "pidfd_getfd",
};
/* Left out on purpose: calls that need a capability in the initial user
 * namespace (kexec, modules, reboot, swap, acct, iopl...), which the
 * command never holds. Each rule lengthens the filter, and the kernel
 * emulates the filter for every syscall number when it is loaded. */

/* Namespace flags of clone(2): the first argument on x86_64 and arm64. */
static const unsigned long SB_CLONE_NS[] = {
    CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET,
    CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWCGROUP,
};

static struct sock_fprog g_prog;
static char g_err[RL_ERR_MAX];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static int sb_rule(scmp_filter_ctx ctx, int errno_val, const char *name, unsigned n,
                   const struct scmp_arg_cmp *cmp)
{
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR)
        return 0; /* not on this architecture: nothing to deny */
    int rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(errno_val), nr, n, cmp);
    if (rc < 0)
        return rl_err(g_err, RL_EIO, "seccomp: rule for %s: %s", name, strerror(-rc));
    return 0;
}

static int sb_add_rules(scmp_filter_ctx ctx)
{
    int rc = 0;
    for (size_t i = 0; i < sizeof SB_DENY / sizeof SB_DENY[0] && !rc; i++)
        rc = sb_rule(ctx, EPERM, SB_DENY[i], 0, NULL);
    /* Only local sockets: no network, whatever the namespace holds. */
    struct scmp_arg_cmp not_unix = SCMP_A0(SCMP_CMP_NE, AF_UNIX);
    if (!rc)
        rc = sb_rule(ctx, EPERM, "socket", 1, &not_unix);
    if (!rc)
        rc = sb_rule(ctx, EPERM, "socketpair", 1, &not_unix);
    for (size_t i = 0; i < sizeof SB_CLONE_NS / sizeof SB_CLONE_NS[0] && !rc; i++) {
        struct scmp_arg_cmp ns = SCMP_A0(SCMP_CMP_MASKED_EQ, SB_CLONE_NS[i], SB_CLONE_NS[i]);
        rc = sb_rule(ctx, EPERM, "clone", 1, &ns);
    }
    /* clone3 passes its flags in memory, out of the filter's reach. */
    if (!rc)
        rc = sb_rule(ctx, ENOSYS, "clone3", 0, NULL);
    /* Pushing bytes into a terminal's input; the kernel compares only the
     * low 32 bits of the command, so must we. */
    struct scmp_arg_cmp sti = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI);
    struct scmp_arg_cmp lnx = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX);
    if (!rc)
        rc = sb_rule(ctx, EPERM, "ioctl", 1, &sti);
    if (!rc)
        rc = sb_rule(ctx, EPERM, "ioctl", 1, &lnx);
    return rc;
}

/* Exports the compiled program into g_prog. */
static int sb_export(scmp_filter_ctx ctx)
{
    int fd = memfd_create("rl-seccomp", MFD_CLOEXEC);
    if (fd < 0)
        return rl_err(g_err, RL_EIO, "seccomp: memfd_create: %s", strerror(errno));
    int rc = seccomp_export_bpf(ctx, fd);
    off_t size = lseek(fd, 0, SEEK_END);
    if (rc < 0 || size <= 0 || size % sizeof(struct sock_filter)) {
        close(fd);
        return rl_err(g_err, RL_EIO, "seccomp: exporting the BPF program failed");
    }
    struct sock_filter *f = malloc((size_t)size);
    if (!f || pread(fd, f, (size_t)size, 0) != size) {
        free(f);
        close(fd);
        return rl_err(g_err, RL_EIO, "seccomp: reading the BPF program back failed");
    }
    close(fd);
    g_prog.len = (unsigned short)(size / sizeof(struct sock_filter));
    g_prog.filter = f; /* kept for the life of the process */
    return 0;
}

static void sb_build(void)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) {
        rl_err(g_err, RL_EIO, "seccomp: seccomp_init failed");
        return;
    }
    int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    /* A binary tree of syscall numbers instead of a linear chain: shorter
     * paths, and loading it costs ~40% less. */
    if (rc >= 0)
        rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
    if (rc < 0)
        rl_err(g_err, RL_EIO, "seccomp: bad-arch action: %s", strerror(-rc));
    else if (!sb_add_rules(ctx))
        sb_export(ctx);
    seccomp_release(ctx);
}

const struct sock_fprog *sb_seccomp_prog(char *err)
{
    pthread_once(&g_once, sb_build);
    if (!g_prog.filter) {
        rl_err(err, RL_EIO, "%s", g_err[0] ? g_err : "seccomp: filter not built");
        return NULL;
    }
    return &g_prog;
}
