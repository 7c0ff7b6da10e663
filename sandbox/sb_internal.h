/* sb_internal.h - what the sandbox's files share and nobody else sees.
 *
 * sandbox.c drives a run (parent side), sb_child.c is the code of the
 * sandbox's init process and of the command before it execs, sb_probe.c
 * finds out once what the kernel offers, sb_seccomp.c and sb_landlock.c
 * build the two filters, sb_result.c formats results.
 */
#ifndef RL_SB_INTERNAL_H
#define RL_SB_INTERNAL_H

#include "common/limits.h"
#include "sandbox/sandbox.h"

#include <linux/filter.h>
#include <sys/resource.h>
#include <sys/types.h>

/* ---- what the kernel offers (sb_probe.c) ----------------------------- */

typedef struct sb_caps {
    int root;            /* euid 0: the command runs as SB_HOST_UID */
    int clone_flags;     /* namespaces of the init (PID and user ones at
                            clone, the others by unshare in the init) */
    int net_fd;          /* an empty network namespace made once, setns'd into
                            by every run (creating one costs ~1 ms); -1 */
    int userns;          /* the command runs in a user namespace of its own
                            (fresh RLIMIT_NPROC count, no capability) */
    int landlock_abi;    /* 0: no Landlock */
    int proc;            /* a fresh /proc can be mounted for the run */
    char tmp_mnt[80];    /* empty dir each run mounts its TMPDIR tmpfs on;
                            "": no mount namespace, TMPDIR is made per run */
    char tmp_rule[80];   /* its parent, where the Landlock rule goes */
    int shm;             /* each run gets a private tmpfs on /dev/shm */
    int rootfs;          /* root harness with mount and PID namespaces: each
                            run gets a root of its own (sb_root_make) */
    int etc_fd;          /* rootfs: detached tmpfs holding the host's /etc
                            entries a build and a test run read (files
                            copied, dirs bound read-only), made once per
                            process; -1 */
    int ntop;            /* rootfs: top-level entries of the host's root
                            kept (bin, lib*, sbin, usr): a symlink of the
                            same text, or a read-only bind of the dir */
    struct {
        char name[16];
        char link[64];   /* "": a directory */
    } top[SB_ROOT_TOP_MAX];
    int cg_fd[2];        /* the harness's own memory and pids cgroup dirs
                            (O_PATH), under which each run gets its own
                            (sb_cgroup.c); v2: both the same dir; -1: none */
    int cg_v2;
    unsigned layers;     /* SB_LAYER_* every run gets */
} sb_caps;

/* Probed on first call, then cached (thread-safe). */
const sb_caps *sb_caps_get(void);

/* A user namespace mapping uid/gid (the owner of a work dir) to
 * SB_HOST_UID, for an idmapped mount of that dir: the command writes files
 * that stay owned by their owner on disk. Returns a cached fd, or -1 when
 * the file system of dev cannot be idmapped (then the caller chowns). */
int sb_idmap_fd(uid_t uid, gid_t gid, dev_t dev, const char *path);

/* rootfs: a fresh root for one sandbox, made by the harness as a detached
 * tmpfs: the kept top-level entries (read-only binds of /usr and the
 * like), a read-only recursive clone of the /etc tmpfs, /dev with the
 * basic nodes and an empty shm dir (1777), /tmp (1777), an empty /proc.
 * Returns its mount fd (O_CLOEXEC) or a negative RL_E* with err. */
int sb_root_make(const sb_caps *caps, char *err);
/* Fills the rootfs fields of caps (the probe, once per process). */
void sb_root_probe(sb_caps *c);

/* ---- cgroups (sb_cgroup.c) --------------------------------------------- */

typedef struct sb_child sb_child;
/* Fills cg_fd (the probe, once per process). */
void sb_cgroup_probe(sb_caps *c);
/* A fresh cgroup name and its file paths for one spare. */
void sb_cgroup_fill(sb_child *c, const sb_caps *caps);
/* Sets the spare's limits (the harness: a job whose limits differ from
 * those the init set). -1 on failure. */
int sb_cgroup_set(const sb_child *c, long long mem, long long pids);
/* OOM kills in the spare's memory cgroup so far. */
long sb_cgroup_oom_kills(const sb_child *c, int v2);
/* Removes the spare's cgroups (its init reaped) and retries earlier ones
 * that were busy; c may be NULL. */
void sb_cgroup_remove(const sb_child *c);
/* Retries the busy cgroups until none is left or SB_CG_FLUSH_MS passed:
 * the kernel drops a reaped tree's tasks from a cgroup a moment after the
 * wait returns, so a removal right after it can find the cgroup busy. */
void sb_cgroup_flush(void);

/* ---- filters ----------------------------------------------------------- */

/* The seccomp program, built once per process; NULL with err on failure. */
const struct sock_fprog *sb_seccomp_prog(char *err);

/* Landlock ruleset: read and execute everywhere, everything below each of
 * rw_dirs (NULL-terminated), write to /dev/null (dev_rw: below /dev, for a
 * private /dev/shm), no TCP, scoped signals and abstract sockets where the
 * ABI has them. *fd is O_CLOEXEC. */
int sb_landlock_ruleset(int *fd, int abi, int dev_rw, const char *const *rw_dirs, char *err);
/* rootfs: the ruleset of one sandbox whose root is the detached tmpfs
 * root_fd: read and execute below its root, write to its /dev and /tmp,
 * everything below each of rw_dirs (paths of the harness's view, which the
 * sandbox shows at the same paths) and below work_fd (an overlay's root,
 * or -1). */
int sb_landlock_ruleset_root(int *fd, int abi, int root_fd, int work_fd, const char *const *rw_dirs,
                             char *err);
/* The same through a small cache keyed by the dirs' identities; *fd is a
 * dup the caller closes. */
int sb_landlock_ruleset_cached(int *fd, int abi, int dev_rw, const char *const *rw_dirs, char *err);

/* ---- profiling stamps (a build with -DSB_PROFILE only) ---------------- */

/* Monotonic stamps of the steps of one spawn, written by the harness, the
 * init and the command (they share memory until the exec): the spare's
 * making, then the run itself. Read with sb_prof_last (sandbox.h). */
enum sb_prof_point {
    SB_P_SP_CLONE0, SB_P_SP_CLONE1, SB_P_I_START, SB_P_I_UNSHARED, SB_P_I_MOUNTED,
    SB_P_I_CMDCLONED, SB_P_I_MAPPED, SB_P_I_PREMOUNTED, SB_P_C_START, SB_P_C_SECCOMP, SB_P_C_READY,
    SB_P_H_ENTER, SB_P_H_PREPARED, SB_P_H_SENT, SB_P_H_REFILLED, SB_P_I_JOB, SB_P_I_BOUND,
    SB_P_I_PASSED, SB_P_C_JOB, SB_P_C_EXEC, SB_P_I_CHLD, SB_P_I_DONE, SB_P_H_OUTEOF,
    SB_P_H_MSG, SB_P_H_MSGEOF, SB_P_H_REAPED, SB_P_H_RETURN, SB_P_N
};
#ifdef SB_PROFILE
#include "common/clock.h"
/* clk_ns is safe on the child side (common/clock.h). */
#define SB_PROF(c, id) ((c)->prof[id] = clk_ns())
#else
#define SB_PROF(c, id) ((void)0)
#endif

/* ---- the child side (sb_child.c) -------------------------------------- */

enum { SB_MSG_FAIL = 1, SB_MSG_DONE = 2 };

/* Steps of the child side, named in setup errors. */
enum sb_stage {
    SB_ST_SIGNALS = 1, SB_ST_FDS, SB_ST_HOSTNAME, SB_ST_NETNS, SB_ST_MOUNTS,
    SB_ST_IDMAP, SB_ST_CREDS, SB_ST_USERNS, SB_ST_IDMAPS, SB_ST_CAPS,
    SB_ST_CLONE, SB_ST_WAIT, SB_ST_STDIO, SB_ST_CHDIR, SB_ST_RLIMIT,
    SB_ST_LANDLOCK, SB_ST_SECCOMP, SB_ST_EXEC, SB_ST_PROC, SB_ST_TMPFS, SB_ST_JOB,
    SB_ST_BIND, SB_ST_ROOT, SB_ST_RO, SB_ST_CGROUP, SB_ST_DISK,
};
const char *sb_stage_name(int stage);

/* One record on the message pipe (fits in PIPE_BUF: written atomically). */
typedef struct sb_msg {
    int kind;        /* SB_MSG_* */
    int stage;       /* SB_MSG_FAIL: the step that failed */
    int err;         /* SB_MSG_FAIL: its errno */
    int wstatus;     /* SB_MSG_DONE: the command's wait status */
    long maxrss_kb;  /* SB_MSG_DONE: largest ru_maxrss of the reaped tree */
    long cpu_us;     /* SB_MSG_DONE: CPU of the command and reaped orphans */
} sb_msg;

#define SB_MAX_IDMAPS (SB_RW_PATHS_MAX + 1)
#define SB_MAX_BINDS (SB_MAX_IDMAPS + SB_RO_PATHS_MAX)
#define SB_MAX_KEEP (11 + SB_MAX_IDMAPS)
#define SB_MAX_RLIM 8

typedef struct sb_rlim {
    int resource;
    struct rlimit lim;
} sb_rlim;

/* The private tmpfs mounts of a run hide what the host has below their
 * mount points: TMPDIR's and /dev/shm ("covers"). The init opens each
 * mount point before covering it, so that a writable path below one can
 * still be reached and mounted into the private tmpfs. */
enum { SB_COVER_TMP, SB_COVER_SHM, SB_NCOVER };

/* One writable path the init mounts for the command: through an idmapping
 * (root: files stay owned by their owner on disk), and/or from below a
 * cover onto the same path in the private tmpfs (its missing parents made
 * there, root-owned 0755). Ancestors come before their descendants. */
/* Which directory (or file) a path showed: device, inode and birth time,
 * so that one removed and made again, even with a recycled inode number,
 * is told apart. */
typedef struct sb_id {
    int ok;                  /* 0: unknown (matches nothing) */
    unsigned dev_major, dev_minor;
    unsigned long long ino;
    long long btime_s;
    unsigned btime_ns;
} sb_id;

typedef struct sb_bind {
    const char *path;        /* absolute, canonical */
    int cover;               /* SB_COVER_* the path lies below, or -1 */
    int rel;                 /* cover >= 0: path + rel is the part below the
                                cover's mount point ("" for the point itself) */
    int idmap;               /* root: index of its user namespace among the
                                job's idmap fds, or -1 (no idmapping) */
    int is_dir;              /* else a file: its mount point is a file */
    int disk;                /* the work dir of a run with a disk bound: the
                                overlay the harness made over it (a detached
                                mount, passed last with the job) */
    int ro;                  /* a read-only bind of a path inside an earlier
                                (writable) bind, cloned from the sandbox's own
                                view of it (its idmapping kept) */
    sb_id id;                /* what path showed when the harness looked */
} sb_bind;

/* What one run asks of a spare sandbox. It lives in the harness's memory,
 * which the init and the command share, until the run is over; the fds
 * travel with it (SCM_RIGHTS), in this order: the Landlock ruleset, stdin,
 * then one user namespace per idmapped bind. It goes to the init over the
 * job socket, which makes the binds and passes it on to the command over
 * the go socket (without the user namespaces); or, when the spare has
 * already made exactly the job's binds (premounts), from the harness
 * straight to the command. */
typedef struct sb_job {
    const char *path;        /* resolved executable */
    char *const *argv;
    char *const *envp;
    const char *dir;         /* absolute work dir */
    int has_ruleset, has_stdin;
    int has_disk;            /* the overlay of the work dir follows the user
                                namespaces (never premounted) */
    int nidmap;              /* user namespace fds sent (root) */
    int userns_h[SB_MAX_IDMAPS]; /* their numbers in the harness (its idmap
                                    cache: one fd per owner mapping) */
    int nbind;               /* mounts the init makes, in this order */
    sb_bind bind[SB_MAX_BINDS];
    sb_rlim rlim[SB_MAX_RLIM];
    int nrlim;
    long long cg_lim[2];     /* memory (bytes) and pids limits of the tree */
} sb_job;

/* The setup of a spare sandbox, shared with its init and command (no
 * allocation, no libc state on their side: they share the harness's
 * memory). All fds are numbers in the init's table, >= 3. */
struct sb_child {
    int out_fd, msg_fd;          /* output pipe, message pipe (write ends) */
    int job_fd;                  /* init's end of the job socket */
    int null_fd;                 /* /dev/null, the command's default stdin */
    int net_fd;                  /* netns to join, or -1 */
    int rootfs;                  /* the run has a root of its own (sb_root.c) */
    int root_fd;                 /* rootfs: the sandbox's root (sb_root_make),
                                    moved onto `tmp` and pivoted into; -1 */
    int host_fd;                 /* rootfs: O_PATH fd of the host's root, the
                                    source of the binds, opened by the init
                                    before the pivot; closed before the
                                    command gets its job; -1 */
    int keep[SB_MAX_KEEP];       /* fds the init keeps, ascending */
    int nkeep;

    int unshare_flags;           /* namespaces the init makes itself (all but
                                    PID and user, made at clone) */
    int set_hostname;            /* only with a UTS namespace of our own */
    int mount_proc;              /* a /proc of the new PID namespace (only
                                    with a mount namespace of our own) */
    const char *tmp;             /* TMPDIR mount point */
    const char *cover[SB_NCOVER]; /* mount points of the private tmpfs
                                    mounts (tmp, /dev/shm), or NULL */
    char tmpfs_opts[96];         /* "": TMPDIR is a directory of the job */
    char shm_opts[96];           /* "": /dev/shm stays the host's (read-only) */
    int write_maps;              /* unprivileged init: write own maps */
    int cmd_userns;              /* root: the command gets a new user
                                    namespace, which the init maps */
    int set_ids;                 /* the command becomes uid/gid below */
    uid_t uid;
    gid_t gid;
    char uid_map[48];
    char gid_map[48];
    int no_dump;                 /* make the init non-dumpable (it shares the
                                    harness's memory and environment) */
    const struct sock_fprog *seccomp;
    char *cmd_stack;             /* top of the command's stack */

    int go_fd;                   /* the command's end of the go socket */
    int go_send;                 /* the other end: the harness's, and the
                                    init's copy of it */

    /* Premounts: the binds of the thread's previous run, made by the init
     * while a spare, so that a run in the same dirs (the common case) goes
     * straight to the command. Undone before the job's own binds when the
     * job is not theirs. pre[i].idmap indexes pre_userns (fds the init
     * inherits from the harness's idmap cache, the job's userns_h). */
    const sb_bind *pre;
    int npre;
    const int *pre_userns;
    int npre_userns;

    /* written by the init */
    int mapped;                  /* futex: 1 once the maps are written, -1 if
                                    the init failed */
    int cmd_started;
    int cover_fd[SB_NCOVER];     /* O_PATH fds of cover[i] opened before the
                                    tmpfs hid it, until the binds are made */
    sb_id pre_id[SB_MAX_BINDS];  /* what each premount shows */
    int pre_fd[SB_MAX_BINDS];    /* each premount (its mount's fd) */
    int pre_mk[SB_MAX_BINDS];    /* rootfs: offset in its path of the first
                                    directory the init made for it, 0: none */
    int pre_made;                /* premounts in place */
    int pre_ok;                  /* 1 (release) once all of them are in place
                                    and pre_id is filled; -1: one failed */
    /* cgroups: made by the init in cg_fd (inherited), the command moved
     * into them before it is released. */
    int cg_fd[2];
    char cg_name[40];            /* "": none */
    char cg_lim_path[2][64];     /* memory and pids limit files, below cg_fd */
    char cg_procs[2][64];
    long long cg_lim[2];         /* the limits set (the hint's, else the job's) */
    int cg_ok;                   /* by the init: 1 once the command is in them,
                                    -1 once it tried and failed, 0 not yet */
#ifdef SB_PROFILE
    long long prof[SB_P_N];
#endif
};

/* Entry point of the init process (clone callback). */
int sb_child_init(void *arg);
/* Are the spare's premounts in place and exactly the job's binds, of the
 * same dirs? (Harness and init: no libc.) */
int sb_pre_match(const sb_child *c, const sb_job *job);

/* ---- spare sandboxes (sb_spare.c) -------------------------------------- */

/* An init and a command already in their namespaces, with their mounts,
 * identity and seccomp filter, waiting for a job: what is left for a run
 * is the part that depends on it (work dir, Landlock, limits, exec). */
typedef struct sb_spare {
    pid_t init;
    pid_t owner;                 /* process that made it (fork safety) */
    int out_r, msg_r, job_fd;    /* our ends */
    int go_fd;                   /* our end of the command's go socket */
    int root_fd;                 /* rootfs: our copy of its root mount (the
                                    Landlock rules of its /dev and /tmp); -1 */
    int ll_fd;                   /* rootfs: the ruleset for the premounts'
                                    writable dirs, made with the spare; -1 */
    void *stacks;
    void *pre;                   /* the premounts' binds, paths, fds */
    int reaped;
    sb_child c;
} sb_spare;

/* Takes this thread's ready spare, or makes one. */
int sb_spare_get(sb_spare **out, const sb_caps *caps, char *err);
/* Makes this thread's next spare (best effort: without one, the next run
 * makes its own), premounting the binds of job (or none). */
void sb_spare_refill(const sb_caps *caps, const sb_job *job);
/* Hands the job and its fds (ruleset and stdin first, npass of them, then
 * the user namespaces of its idmapped binds) to the spare. -1: the spare
 * is dead. */
int sb_spare_dispatch(sb_spare *sp, sb_job *job, const int *fds, int npass, int nfds);
/* rootfs: the Landlock ruleset of job in this spare (its /dev and /tmp
 * are the spare's own): the one made with the spare when job's binds are
 * those it was made for, else a new one. *fd is the caller's. */
int sb_spare_ruleset(sb_spare *sp, const sb_job *job, int abi, int disk_fd, int *fd, char *err);
/* The disk bound (sb_disk.c): the overlay over dir (its lower layer
 * idmapped through userns_fd, or -1) with an upper tmpfs of mb MB, as a
 * detached mount (*ovl_fd), and the upper dir (*up_fd) to carry back. */
int sb_disk_make(int *ovl_fd, int *up_fd, const char *dir, int userns_fd, long mb, char *err);
/* Carries the upper dir's changes back into dir. */
int sb_disk_carry(int up_fd, const char *dir, char *err);
/* A detached tmpfs: the given fsconfig options; -1 with errno. */
int sb_tmpfs_detached(const char *size, const char *inodes, const char *mode);
/* Closes our ends, kills the init if it still runs, reaps it, frees. */
void sb_spare_free(sb_spare *sp);
/* After the init's report: closes our ends and reaps the init if it has
 * exited, else keeps it for a later reaping (the next run of this thread,
 * sb_release, the thread's exit). */
void sb_spare_retire(sb_spare *sp);

#endif
