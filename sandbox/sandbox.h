/* sandbox.h - run one command under limits and isolation.
 *
 * The sandbox knows nothing of tasks or episodes: it runs argv in a
 * directory with a scrubbed environment, under resource limits and every
 * isolation layer the kernel offers, and returns a result record. It
 * depends on nothing of ours but common/.
 *
 * Layers (each reported in sb_result.layers; where the kernel lacks one the
 * result says so and the others still hold):
 *   SB_LAYER_USERNS   the command has a user namespace of its own: uid
 *                     SB_NS_UID inside, SB_HOST_UID (root harness) or the
 *                     caller's uid outside; no capability anywhere,
 *                     no_new_privs; RLIMIT_NPROC counts this run only
 *   SB_LAYER_PIDNS    PID namespace with its own /proc: the tree dies with
 *                     its init; nothing outside can be seen or signalled
 *   SB_LAYER_NETNS    network namespace with no interface but lo (down)
 *   SB_LAYER_MNTNS    private mounts. A root harness (with PID and mount
 *                     namespaces) gives each run a root of its own
 *                     (sb_root.c): read-only /usr (and /bin, /lib*,
 *                     /sbin as on the host: symlinks into /usr on a
 *                     merged-/usr system), a read-only copy of the /etc
 *                     entries builds and test runs read, /dev with null,
 *                     zero, full, random, urandom, tty and a private shm,
 *                     a private /tmp (TMPDIR), the run's /proc, and the
 *                     work dir and rw_paths at their own paths (parents
 *                     made as needed): nothing else of the host (not its
 *                     /tmp, /run, /dev/shm, /home, sockets, nor the
 *                     project's checkout). Otherwise the host's root
 *                     with tmpfs on TMPDIR and /dev/shm, a work dir (or
 *                     rw_paths entry) below /dev/shm mounted at its path
 *                     in the private one. As root the work dir is
 *                     idmapped (files stay owned by their owner).
 *                     ro_paths entries are read-only binds over
 *                     themselves
 *   SB_LAYER_IPCNS / UTSNS (hostname "sandbox")
 *   SB_LAYER_SECCOMP  seccomp filter (socket only AF_UNIX, no io_uring,
 *                     ptrace, mount, namespaces, bpf, keyctl, ...; EPERM)
 *   SB_LAYER_LANDLOCK writes only below the work dir, TMPDIR, /dev/shm and
 *                     rw_paths; no TCP; signals and abstract sockets
 *                     scoped to the run (ABI >= 6). Landlock only adds
 *                     rights, so below an ro_paths entry it is the
 *                     read-only mount that refuses writes (EROFS; the
 *                     mount point cannot be renamed or removed: EBUSY)
 *   SB_LAYER_RLIMITS  address space, processes, file size, open files,
 *                     CPU, no cores
 *   SB_LAYER_CGROUP   the command's whole process tree in fresh memory and
 *                     pids cgroups nested under the harness's own (cgroup
 *                     v1 controllers, or a v2 dir that delegates both):
 *                     pids.max = procs, memory = mem_mb + SB_CG_MEM_SLACK_MB
 *                     for the tree together; an OOM kill there is
 *                     SB_STOP_MEMORY. Set in a result only when the tree
 *                     really ran in them; without them the rlimits still
 *                     hold (RLIMIT_AS per process, RLIMIT_NPROC counted in
 *                     the run's own user namespace)
 *
 * Memory and disk. The memory cgroup is charged with everything the tree
 * makes resident: its processes' pages and the pages of files it writes
 * on RAM-backed file systems (its /tmp and /dev/shm, a work tree on
 * /dev/shm, the disk layer below). Such pages stay charged after their
 * writer exits, which is why each run gets fresh cgroups. With
 * lim.disk_mb > 0 (a root harness with its own root per run), the work
 * dir is an overlay whose upper layer is a tmpfs of disk_mb (sb_disk.c):
 * everything the command creates or changes there (a changed file counts
 * whole) goes into it, and a write past it fails with ENOSPC; after the
 * run the layer is carried back into the work dir (new and changed files,
 * directories, symlinks, owned like the work dir; deletions; replaced
 * directories; not FIFOs, sockets or devices), so the files written
 * before the limit are there afterwards (the one being written when the
 * limit hit, cut short) and the work dir grew by at most disk_mb. The
 * layer is RAM charged to the writer's memory cgroup, so a tree that
 * writes its work dir holds at most min(disk_mb, its memory limit) of new
 * data there, and what it keeps after the run is bounded by disk_mb.
 *
 * Environment of the command, nothing else: PATH=/usr/local/bin:/usr/bin:
 * /bin, HOME=TMPDIR (outside the work tree: nothing the command writes
 * there is read as its home), TMPDIR, TEMP, TMP (the private tmp), TZ=UTC,
 * LC_ALL=LANG=C.UTF-8, PYTHONHASHSEED=0, PYTHONDONTWRITEBYTECODE=1,
 * PYTHONNOUSERSITE=1, PYTHONSAFEPATH=1 (no script or current directory on
 * sys.path), PYTEST_DISABLE_PLUGIN_AUTOLOAD=1, PYTHONPYCACHEPREFIX (in
 * TMPDIR: bytecode in the work tree is never read), SOURCE_DATE_EPOCH
 * (fixed), USER=LOGNAME=sandbox, then opts->env. stdin is /dev/null or
 * stdin_data; stdout and stderr share one pipe; every other fd is closed.
 *
 * Runs may be made from several threads at once. See sb_release for the
 * sandbox a thread keeps ready for its next run.
 */
#ifndef RL_SANDBOX_H
#define RL_SANDBOX_H

#include <stddef.h>
#include <stdint.h>

enum {
    SB_LAYER_USERNS = 1u << 0,
    SB_LAYER_PIDNS = 1u << 1,
    SB_LAYER_NETNS = 1u << 2,
    SB_LAYER_MNTNS = 1u << 3,
    SB_LAYER_IPCNS = 1u << 4,
    SB_LAYER_UTSNS = 1u << 5,
    SB_LAYER_SECCOMP = 1u << 6,
    SB_LAYER_LANDLOCK = 1u << 7,
    SB_LAYER_RLIMITS = 1u << 8,
    SB_LAYER_CGROUP = 1u << 9,
};

typedef struct sb_limits {
    int timeout_ms;     /* wall clock; whole process tree killed after */
    int cpu_ms;         /* RLIMIT_CPU of each process (rounded up to s) */
    long mem_mb;        /* RLIMIT_AS of each process; with cgroups also
                           (plus SB_CG_MEM_SLACK_MB) the memory of the tree */
    int procs;          /* processes + threads in the tree (RLIMIT_NPROC
                           in the run's own user namespace; pids.max) */
    long fsize_mb;      /* RLIMIT_FSIZE */
    int nofile;         /* RLIMIT_NOFILE */
    long disk_mb;       /* what the command may add to its work dir as a
                           whole (new and changed files), 0: no bound (see
                           "Memory and disk" above) */
    size_t out_max;     /* captured output cap (head + tail kept) */
    size_t flood_max;   /* stop the command once it wrote this much */
    int no_as_limit;    /* 1: no RLIMIT_AS of its own, the memory cgroup
                           alone bounds the tree (AddressSanitizer reserves
                           terabytes of address space for its shadow);
                           ignored where the sandbox has no cgroups
                           (sb_layers_available) */
} sb_limits;

/* Fills the defaults from common/limits.h. */
void sb_limits_default(sb_limits *lim);

typedef struct sb_opts {
    const char *const *argv;     /* argv[0] is looked up in the fixed PATH */
    const char *dir;             /* working directory; writable */
    const char *const *env;      /* extra "K=V" entries added to the scrubbed
                                    environment (NULL-terminated, may be NULL) */
    const char *const *rw_paths; /* extra writable paths (NULL-terminated) */
    const char *const *ro_paths; /* paths inside dir (or an rw_paths entry)
                                    the command sees read-only: a read-only
                                    bind over each (NULL-terminated, may be
                                    NULL; one that does not exist is
                                    skipped, one outside them is an error) */
    sb_limits lim;
    const char *stdin_data;      /* NULL: stdin is /dev/null */
    size_t stdin_len;
} sb_opts;

/* Fills defaults: limits from sb_limits_default, everything else NULL. */
void sb_opts_default(sb_opts *o);

typedef enum sb_stop {
    SB_STOP_EXIT = 0,     /* exited on its own */
    SB_STOP_SIGNAL,       /* killed by a signal it got (segfault, abort) */
    SB_STOP_TIMEOUT,      /* wall-clock limit */
    SB_STOP_CPU,          /* CPU limit */
    SB_STOP_MEMORY,       /* memory cap (OOM or allocation failures) */
    SB_STOP_FLOOD,        /* wrote more than flood_max */
    SB_STOP_SETUP,        /* the sandbox could not start the command */
} sb_stop;

typedef struct sb_result {
    int exit_code;        /* valid when stop == SB_STOP_EXIT */
    int signal;           /* terminating signal, else 0 */
    int timed_out;
    sb_stop stop;
    char reason[128];     /* human-readable why it stopped */
    long wall_ms;
    long cpu_ms;          /* user + system of the whole tree (the processes
                             killed at the end included) */
    long peak_rss_kb;     /* largest ru_maxrss in the tree. The command
                             starts in the harness's memory (CLONE_VM), so
                             for it the kernel counts at least the
                             harness's own peak at exec */
    size_t out_bytes;     /* every byte written to stdout + stderr */
    int out_truncated;    /* the captured text lost bytes in the middle */
    char *out;            /* stdout and stderr interleaved, head + marker +
                             tail, NUL-terminated; owned, see sb_result_dispose */
    size_t out_len;
    unsigned layers;      /* SB_LAYER_* active for this run */
} sb_result;

/* Runs the command. Returns 0 when the command ran (whatever its exit
 * status: read res->stop and res->exit_code; a command that cannot be
 * found or executed is stop SB_STOP_SETUP with exit_code 127 or 126) or a
 * negative RL_E* code with err filled when the sandbox itself failed (bad
 * options, a layer the kernel offers could not be set up: nothing ran).
 * res is always initialized (res->out never NULL) and must be released
 * with sb_result_dispose. */
int sb_run(sb_result *res, const sb_opts *opts, char *err);

void sb_result_dispose(sb_result *res);

/* Shell-style exit status: exit code, 124 on timeout, 128+N on signal N
 * (a flood is stopped with SIGKILL: 137), 125 when the sandbox failed. */
int sb_result_status(const sb_result *res);

/* The record as one JSON object (no newline); caller frees. */
char *sb_result_json(const sb_result *res);

/* Names of the layers in mask, comma separated, into out. */
void sb_layers_str(unsigned mask, char *out, size_t n);

/* Which layers this kernel supports (probed once, cached). */
unsigned sb_layers_available(void);

/* From its second run on, a thread keeps one sandbox made ahead for its
 * next run (an idle init and command, already in their namespaces). And
 * sb_run returns once the command's tree is gone and the sandbox's init
 * has reported, while that init still tears its namespaces down: the
 * thread reaps it later. This frees the spare and waits for those inits
 * now; both also happen when the thread exits. */
void sb_release(void);

#ifdef SB_PROFILE
/* A build with -DSB_PROFILE: the monotonic stamps (ns, 0: not reached) of
 * this thread's last run, SB_P_* of sb_internal.h; returns SB_P_N. */
int sb_prof_last(long long *out, int n);
#endif

#endif
