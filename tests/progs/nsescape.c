/* nsescape.c - tries to create namespaces, mount, chroot and the like;
 * prints one line per attempt: "NAME: ok" or "NAME: ERR". */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void report(const char *what, long r)
{
    printf("%s: %s\n", what, r >= 0 ? "ok" : strerror(errno));
}

int main(void)
{
    report("unshare user", unshare(CLONE_NEWUSER));
    report("unshare mount", unshare(CLONE_NEWNS));
    report("unshare net", unshare(CLONE_NEWNET));
    long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
    if (pid == 0)
        _exit(0);
    if (pid > 0)
        waitpid((pid_t)pid, NULL, 0);
    report("clone newuser", pid);
    unsigned long long args[11] = {0};
    args[0] = CLONE_NEWUSER;
    args[4] = SIGCHLD;
    pid = syscall(435 /* clone3 */, args, sizeof args);
    if (pid == 0)
        _exit(0);
    if (pid > 0)
        waitpid((pid_t)pid, NULL, 0);
    report("clone3", pid);
    report("mount", mount("none", "/tmp", "tmpfs", 0, NULL));
    report("chroot", chroot("/"));
    report("setns", setns(0, 0));
    report("bpf", syscall(SYS_bpf, 0, NULL, 0));
    report("keyctl", syscall(SYS_keyctl, 0, 0, 0, 0, 0));
    report("userfaultfd", syscall(SYS_userfaultfd, 0));
    report("perf_event_open", syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
    report("process_vm_readv", syscall(SYS_process_vm_readv, 1, NULL, 0, NULL, 0, 0));
    /* TIOCSTI, also with garbage in the upper 32 bits of the command */
    char ch = 'x';
    report("tiocsti", syscall(SYS_ioctl, 0, (unsigned long)TIOCSTI, &ch));
    report("tiocsti64", syscall(SYS_ioctl, 0, 0x100000000UL | TIOCSTI, &ch));
    return 0;
}
