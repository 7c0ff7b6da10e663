/* sb_spare.c - spare sandboxes: made ahead, used by the next run.
 *
 * Creating the namespaces, mounting /proc and TMPDIR, making the command's
 * user namespace and loading its seccomp filter take about half a
 * millisecond, and none of it depends on the run. So a sandbox is made
 * before it is needed (sb_child.c: the init and the command then wait on a
 * socket), and a run only hands it the job: to the command itself when the
 * spare has already mounted the job's writable paths (it premounts those
 * of the run that made it), else to the init. Each thread keeps one spare,
 * made right after it dispatched a run (while that command runs) and from
 * its second run on, so a one-shot caller (`harness exec`) makes none. The
 * spare belongs to the thread: the init dies with the thread that cloned
 * it (PR_SET_PDEATHSIG), and a thread-exit destructor reaps it.
 *
 * A run returns once its init has reported, while that init still tears
 * its namespaces down; it is "retired" here and reaped by a later run, by
 * sb_release, or at exit.
 */
#include "sandbox/sb_internal.h"

#include "common/err.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- child stacks --------------------------------------------------------- */

/* Reused: mmap and munmap (with its TLB shootdown across the CPUs the
 * children ran on) cost more than the rest of a spawn's bookkeeping. */
static pthread_mutex_t g_stack_lock = PTHREAD_MUTEX_INITIALIZER;
static void *g_stacks[SB_STACK_CACHE];
static int g_nstacks;

static void *sb_stacks_get(void)
{
    void *p = NULL;
    pthread_mutex_lock(&g_stack_lock);
    if (g_nstacks)
        p = g_stacks[--g_nstacks];
    pthread_mutex_unlock(&g_stack_lock);
    if (p)
        return p;
    p = mmap(NULL, 2 * SB_CHILD_STACK, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void sb_stacks_put(void *p)
{
    pthread_mutex_lock(&g_stack_lock);
    if (g_nstacks < SB_STACK_CACHE) {
        g_stacks[g_nstacks++] = p;
        p = NULL;
    }
    pthread_mutex_unlock(&g_stack_lock);
    if (p)
        munmap(p, 2 * SB_CHILD_STACK);
}

/* ---- fds ------------------------------------------------------------------ */

/* Child-side fds must not be 0..2, or dup3 onto stdio would clobber them. */
static int sb_fd_high(int fd)
{
    if (fd < 0 || fd > 2)
        return fd;
    int h = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    close(fd);
    return h;
}

static void sb_close(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void sb_keep(sb_child *c, int fd)
{
    if (fd < 0)
        return;
    int i = c->nkeep;
    for (int j = 0; j < c->nkeep; j++)
        if (c->keep[j] == fd)
            return;
    while (i > 0 && c->keep[i - 1] > fd) {
        c->keep[i] = c->keep[i - 1];
        i--;
    }
    c->keep[i] = fd;
    c->nkeep++;
}

/* /dev/null, opened once: every spare's init and command get a copy. */
static int g_null_fd = -1;
static pthread_once_t g_null_once = PTHREAD_ONCE_INIT;

static void sb_null_open(void)
{
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    g_null_fd = fd >= 0 ? sb_fd_high(fd) : -1;
}

/* ---- making one ------------------------------------------------------------ */

/* The part of the setup that is the same for every run. */
static void sb_spare_fill(sb_child *c, const sb_caps *caps, const struct sock_fprog *prog)
{
    c->net_fd = caps->net_fd;
    c->seccomp = prog;
    c->unshare_flags = caps->clone_flags & ~(CLONE_NEWPID | CLONE_NEWUSER);
    c->set_hostname = (caps->clone_flags & CLONE_NEWUTS) != 0;
    c->mount_proc = caps->proc;
    c->cover_fd[SB_COVER_TMP] = c->cover_fd[SB_COVER_SHM] = -1;
    c->host_fd = -1;
    if (caps->rootfs) {
        /* The root is moved onto the TMPDIR mount point, then pivoted
         * into; it has its own /tmp and /dev/shm. */
        c->rootfs = 1;
        c->tmp = caps->tmp_mnt;
    } else if (caps->tmp_mnt[0]) {
        c->tmp = caps->tmp_mnt;
        c->cover[SB_COVER_TMP] = c->tmp;
        int id = caps->root ? SB_HOST_UID : SB_NS_UID;
        snprintf(c->tmpfs_opts, sizeof c->tmpfs_opts, "size=%ldm,nr_inodes=%d,mode=0700,uid=%d,gid=%d",
                 (long)SB_TMPFS_MB, SB_TMPFS_INODES, id, id);
    }
    if (caps->shm && !caps->rootfs) {
        c->cover[SB_COVER_SHM] = "/dev/shm";
        int id = caps->root ? SB_HOST_UID : SB_NS_UID;
        snprintf(c->shm_opts, sizeof c->shm_opts, "size=%ldm,nr_inodes=%d,mode=1777,uid=%d,gid=%d",
                 (long)SB_SHM_MB, SB_TMPFS_INODES, id, id);
    }
    if (caps->root) {
        c->set_ids = 1;
        c->cmd_userns = caps->userns;
        c->uid = caps->userns ? SB_NS_UID : SB_HOST_UID;
        c->gid = c->uid;
        snprintf(c->uid_map, sizeof c->uid_map, "%d %d 1", SB_NS_UID, SB_HOST_UID);
        snprintf(c->gid_map, sizeof c->gid_map, "%d %d 1", SB_NS_UID, SB_HOST_UID);
    } else if (caps->userns) {
        c->write_maps = 1;
        snprintf(c->uid_map, sizeof c->uid_map, "%d %u 1", SB_NS_UID, (unsigned)geteuid());
        snprintf(c->gid_map, sizeof c->gid_map, "%d %u 1", SB_NS_UID, (unsigned)getegid());
    }
    /* Without Landlock nothing else stops a command of the same uid from
     * reading the init's (= the harness's) memory through /proc. */
    c->no_dump = !caps->root && !caps->landlock_abi;
}

/* Pipes and sockets: our ends in sp, the init's in sp->c. */
static int sb_spare_fds(sb_spare *sp)
{
    sb_child *c = &sp->c;
    int p[2] = {-1, -1}, q[2] = {-1, -1}, sv[2] = {-1, -1}, gv[2] = {-1, -1};
    if (pipe2(p, O_CLOEXEC) == 0 && pipe2(q, O_CLOEXEC) == 0 &&
        socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0)
        socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, gv);
    sp->out_r = sb_fd_high(p[0]);
    c->out_fd = sb_fd_high(p[1]);
    sp->msg_r = sb_fd_high(q[0]);
    c->msg_fd = sb_fd_high(q[1]);
    sp->job_fd = sb_fd_high(sv[0]);
    c->job_fd = sb_fd_high(sv[1]);
    sp->go_fd = c->go_send = sb_fd_high(gv[0]);
    c->go_fd = sb_fd_high(gv[1]);
    pthread_once(&g_null_once, sb_null_open);
    c->null_fd = g_null_fd;
    if (sp->out_r < 0 || c->out_fd < 0 || sp->msg_r < 0 || c->msg_fd < 0 || sp->job_fd < 0 ||
        c->job_fd < 0 || sp->go_fd < 0 || c->go_fd < 0 || c->null_fd < 0)
        return -1;
    fcntl(sp->out_r, F_SETFL, O_NONBLOCK);
    sb_keep(c, c->out_fd);
    sb_keep(c, c->msg_fd);
    sb_keep(c, c->job_fd);
    sb_keep(c, c->go_send);
    sb_keep(c, c->go_fd);
    sb_keep(c, c->null_fd);
    sb_keep(c, c->net_fd);
    sb_keep(c, c->root_fd);
    if (c->cg_name[0]) {
        sb_keep(c, c->cg_fd[0]);
        sb_keep(c, c->cg_fd[1]);
    }
    for (int i = 0; i < c->npre_userns; i++)
        sb_keep(c, c->pre_userns[i]);
    return 0;
}

/* Our copies of the init's fds (but /dev/null, which stays, and the go
 * socket's sending end, ours too). The record keeps the numbers: the init
 * reads them from it, in its own fd table. */
static void sb_spare_close_child_fds(sb_spare *sp)
{
    int fds[4] = {sp->c.out_fd, sp->c.msg_fd, sp->c.job_fd, sp->c.go_fd};
    /* c.root_fd is ours too (sp->root_fd): the init moves its copy. */
    for (int i = 0; i < 4; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

/* The premounts of a spare: a copy of job's binds (the run that hints
 * them ends before the spare is used), with the user namespace fds they
 * use (from the process's idmap cache: they stay open). */
static int sb_spare_hint(sb_spare *sp, const sb_job *job)
{
    sb_child *c = &sp->c;
    if (!job || !job->nbind)
        return 0;
    size_t strs = 0;
    for (int i = 0; i < job->nbind; i++)
        strs += strlen(job->bind[i].path) + 1;
    size_t nb = sizeof(sb_bind) * (size_t)job->nbind, nu = sizeof(int) * (size_t)job->nidmap;
    char *blob = malloc(nb + nu + strs);
    if (!blob)
        return -1;
    sb_bind *pre = (sb_bind *)blob;
    int *fds = (int *)(blob + nb);
    char *str = blob + nb + nu;
    for (int i = 0; i < job->nbind; i++) {
        pre[i] = job->bind[i];
        size_t n = strlen(pre[i].path) + 1;
        memcpy(str, pre[i].path, n);
        pre[i].path = str;
        str += n;
    }
    if (nu)
        memcpy(fds, job->userns_h, nu);
    sp->pre = blob;
    c->pre = pre;
    c->npre = job->nbind;
    c->pre_userns = fds;
    c->npre_userns = job->nidmap;
    return 0;
}

static int sb_spare_new(sb_spare **out, const sb_caps *caps, const sb_job *hint, char *err)
{
    *out = NULL;
    const struct sock_fprog *prog = NULL;
    if ((caps->layers & SB_LAYER_SECCOMP) && !(prog = sb_seccomp_prog(err)))
        return RL_EIO;
    sb_spare *sp = calloc(1, sizeof *sp);
    if (!sp)
        return rl_err(err, RL_ENOMEM, "sandbox: out of memory");
    sp->owner = getpid();
    sp->init = -1;
    sp->out_r = sp->msg_r = sp->job_fd = sp->go_fd = sp->root_fd = sp->ll_fd = -1;
    sb_child *c = &sp->c;
    c->out_fd = c->msg_fd = c->job_fd = c->null_fd = c->go_fd = c->go_send = c->root_fd = -1;
    sb_spare_fill(c, caps, prog);
    sb_cgroup_fill(c, caps);
    c->cg_lim[0] = hint ? hint->cg_lim[0] : (long long)(SB_MEM_MB_DEFAULT + SB_CG_MEM_SLACK_MB) << 20;
    c->cg_lim[1] = hint ? hint->cg_lim[1] : SB_PROCS_DEFAULT;
    if (caps->rootfs) {
        int rc = sb_root_make(caps, err);
        if (rc < 0) {
            sb_spare_free(sp);
            return rc;
        }
        sp->root_fd = c->root_fd = sb_fd_high(rc);
    }
    int e = 0;
    if (sb_spare_hint(sp, hint) < 0)
        e = ENOMEM;
    else if (sb_spare_fds(sp) < 0)
        e = errno ? errno : EMFILE;
    else if (!(sp->stacks = sb_stacks_get()))
        e = errno ? errno : ENOMEM;
    if (e) {
        sb_spare_close_child_fds(sp);
        sb_spare_free(sp);
        return rl_err(err, rl_from_errno(e), "sandbox: pipes and stacks: %s", strerror(e));
    }
    c->cmd_stack = (char *)sp->stacks + 2 * SB_CHILD_STACK;
    /* The ruleset of the next run, if it is in the hinted dirs (best
     * effort: else the run makes its own). */
    if (caps->rootfs && caps->landlock_abi && hint && hint->nbind &&
        sb_spare_ruleset(sp, hint, caps->landlock_abi, -1, &sp->ll_fd, NULL) < 0)
        sp->ll_fd = -1;
    /* Every signal blocked: the init must never run one of the harness's
     * handlers on its stack. No exit signal (0): a harness that ignores
     * SIGCHLD would otherwise have it reaped behind our back. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    /* Only the PID (and user) namespace at clone: the init makes the others
     * itself with unshare, while we go back to the running command. */
    int at_clone = caps->clone_flags & (CLONE_NEWPID | CLONE_NEWUSER);
    SB_PROF(c, SB_P_SP_CLONE0);
    sp->init = clone(sb_child_init, (char *)sp->stacks + SB_CHILD_STACK, CLONE_VM | at_clone, c);
    e = errno;
    SB_PROF(c, SB_P_SP_CLONE1);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    sb_spare_close_child_fds(sp); /* the init has its own copies */
    if (sp->init < 0) {
        sp->reaped = 1;
        sb_spare_free(sp);
        return rl_err(err, rl_from_errno(e), "sandbox setup: clone: %s", strerror(e));
    }
    *out = sp;
    return 0;
}

void sb_spare_free(sb_spare *sp)
{
    if (!sp)
        return;
    sb_close(&sp->out_r);
    sb_close(&sp->msg_r);
    sb_close(&sp->job_fd); /* an idle init sees EOF and exits */
    sb_close(&sp->go_fd);
    sb_close(&sp->root_fd);
    sb_close(&sp->ll_fd);
    if (sp->owner == getpid()) {
        if (!sp->reaped && sp->init > 0) {
            kill(sp->init, SIGKILL);
            while (waitpid(sp->init, NULL, __WALL) < 0 && errno == EINTR)
                ;
        }
        /* Nothing of the run is left in them. */
        if (sp->init > 0)
            sb_cgroup_remove(&sp->c);
        /* Only now: the children ran on these stacks. */
        if (sp->stacks)
            sb_stacks_put(sp->stacks);
    }
    free(sp->pre); /* the init reads it until it is gone (or: a fork's copy) */
    free(sp);
}

static int sb_send(int sock, sb_job *job, const int *fds, int nfds)
{
    union {
        char buf[CMSG_SPACE(sizeof(int) * (3 + SB_MAX_IDMAPS))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {&job, sizeof job};
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (nfds) {
        memset(&ctl, 0, sizeof ctl);
        msg.msg_control = ctl.buf;
        msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
        struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
        memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
    }
    ssize_t n;
    while ((n = sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    return n == (ssize_t)sizeof job ? 0 : -1;
}

/* Are job's binds those the spare was made for (same paths, same dirs)? */
static int sb_spare_same_binds(const sb_child *c, const sb_job *job)
{
    if (c->npre != job->nbind)
        return 0;
    for (int i = 0; i < job->nbind; i++) {
        const sb_bind *p = &c->pre[i], *b = &job->bind[i];
        const sb_id *x = &p->id, *y = &b->id;
        if (strcmp(p->path, b->path) || p->ro != b->ro || !x->ok || !y->ok ||
            x->dev_major != y->dev_major || x->dev_minor != y->dev_minor || x->ino != y->ino ||
            x->btime_s != y->btime_s || x->btime_ns != y->btime_ns)
            return 0;
    }
    return 1;
}

int sb_spare_ruleset(sb_spare *sp, const sb_job *job, int abi, int disk_fd, int *fd, char *err)
{
    *fd = -1;
    if (sp->ll_fd >= 0 && !job->has_disk && sb_spare_same_binds(&sp->c, job)) {
        *fd = fcntl(sp->ll_fd, F_DUPFD_CLOEXEC, 3);
        return *fd >= 0 ? 0 : rl_err(err, RL_EIO, "landlock: dup ruleset: %s", strerror(errno));
    }
    const char *rw[SB_MAX_BINDS + 1];
    int n = 0;
    for (int i = 0; i < job->nbind; i++)
        if (!job->bind[i].ro && !job->bind[i].disk)
            rw[n++] = job->bind[i].path;
    rw[n] = NULL;
    return sb_landlock_ruleset_root(fd, abi, sp->root_fd, job->has_disk ? disk_fd : -1, rw, err);
}

int sb_spare_dispatch(sb_spare *sp, sb_job *job, const int *fds, int npass, int nfds)
{
    if (sp->owner != getpid() || nfds > 3 + SB_MAX_IDMAPS)
        return -1;
    /* Straight to the command (the init only waits for its end), or to the
     * init, which makes the binds first. */
    if (sb_pre_match(&sp->c, job)) {
        /* The init made the cgroups before the premounts; only limits other
         * than those it set are ours to write. */
        const sb_child *c = &sp->c;
        if (c->cg_ok == 1 && (job->cg_lim[0] != c->cg_lim[0] || job->cg_lim[1] != c->cg_lim[1]) &&
            sb_cgroup_set(c, job->cg_lim[0], job->cg_lim[1]) < 0)
            return -1;
        return sb_send(sp->go_fd, job, fds, npass);
    }
    return sb_send(sp->job_fd, job, fds, nfds);
}

/* ---- retired inits ---------------------------------------------------------- */

/* Inits that reported and are exiting, oldest first. Any thread of the
 * process may reap them (wait4 sees the children of the whole thread
 * group); the process reaps what is left at exit, so that none is handed
 * to a subreaper. */
static pthread_mutex_t g_retired_lock = PTHREAD_MUTEX_INITIALIZER;
static sb_spare *g_retired[SB_RETIRED_MAX];
static int g_nretired;
static pthread_once_t g_atexit_once = PTHREAD_ONCE_INIT;

/* Reaps the retired inits that have exited, or waits for all of them
 * (block; not under the lock). */
static void sb_reap_retired(int block)
{
    sb_spare *done[SB_RETIRED_MAX];
    int n = 0, k = 0;
    pthread_mutex_lock(&g_retired_lock);
    for (int i = 0; i < g_nretired; i++) {
        sb_spare *sp = g_retired[i];
        if (!block && waitpid(sp->init, NULL, __WALL | WNOHANG) == 0) {
            g_retired[k++] = sp; /* still exiting */
            continue;
        }
        sp->reaped = !block; /* else sb_spare_free waits for it */
        done[n++] = sp;
    }
    g_nretired = k;
    pthread_mutex_unlock(&g_retired_lock);
    for (int i = 0; i < n; i++)
        sb_spare_free(done[i]);
}

static void sb_reap_at_exit(void) { sb_reap_retired(1); }
/* A fork's child has none of the parent's children (and another thread of
 * the parent may have held the lock). */
static void sb_retired_forget(void)
{
    pthread_mutex_init(&g_retired_lock, NULL);
    g_nretired = 0;
}
static void sb_atexit_init(void)
{
    atexit(sb_reap_at_exit);
    pthread_atfork(NULL, NULL, sb_retired_forget);
}

void sb_spare_retire(sb_spare *sp)
{
    sb_close(&sp->out_r);
    sb_close(&sp->msg_r);
    sb_close(&sp->job_fd);
    sb_close(&sp->go_fd);
    sb_close(&sp->root_fd); /* what the run left in its /tmp goes with it */
    sb_close(&sp->ll_fd);
    pthread_once(&g_atexit_once, sb_atexit_init);
    sb_spare *old = NULL;
    pthread_mutex_lock(&g_retired_lock);
    if (g_nretired == SB_RETIRED_MAX) {
        old = g_retired[0];
        memmove(g_retired, g_retired + 1, sizeof g_retired[0] * (SB_RETIRED_MAX - 1));
        g_nretired--;
    }
    g_retired[g_nretired++] = sp;
    pthread_mutex_unlock(&g_retired_lock);
    sb_spare_free(old); /* exited long ago, or about to */
}

/* ---- this thread's spare ------------------------------------------------------ */

static pthread_key_t g_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
static __thread sb_spare *tl_spare;
static __thread unsigned tl_runs;

static void sb_spare_dtor(void *p)
{
    sb_spare_free(p);
    sb_reap_retired(1);
}
static void sb_key_init(void) { pthread_key_create(&g_key, sb_spare_dtor); }

static void sb_tl_set(sb_spare *sp)
{
    pthread_once(&g_key_once, sb_key_init);
    tl_spare = sp;
    pthread_setspecific(g_key, sp);
}

int sb_spare_get(sb_spare **out, const sb_caps *caps, char *err)
{
    tl_runs++;
    sb_spare *sp = tl_spare;
    if (sp) {
        sb_tl_set(NULL);
        if (sp->owner == getpid()) {
            *out = sp;
            return 0;
        }
        sb_spare_free(sp); /* inherited through fork(): not ours to use */
    }
    return sb_spare_new(out, caps, NULL, err);
}

void sb_spare_refill(const sb_caps *caps, const sb_job *job)
{
    /* Here, while the command runs: reaping a retired init removes its
     * cgroups (~0.1 ms). */
    sb_reap_retired(0);
    if (tl_spare || tl_runs < 2)
        return;
    sb_spare *sp;
    if (sb_spare_new(&sp, caps, job, NULL) == 0)
        sb_tl_set(sp);
}

void sb_release(void)
{
    sb_spare *sp = tl_spare;
    if (sp) {
        sb_tl_set(NULL);
        sb_spare_free(sp);
    }
    sb_reap_retired(1);
    sb_cgroup_flush();
}
