/* limits.h - every limit in the project, in one place, with its reason.
 *
 * Untrusted input is everywhere (agent-written code, agent-written tool
 * calls, test output): every buffer that grows from it is capped by a
 * constant from this file. Each module owns one section; keep the reason
 * next to the value. Runtime options may lower these defaults, never
 * raise a hard cap (the HARD ones).
 */
#ifndef RL_LIMITS_H
#define RL_LIMITS_H

/* ---- common ---------------------------------------------------------- */

/* Default cap of a buf_t when the caller gives none: far above any honest
 * tool observation or test log, small enough that a runaway loop fails
 * fast instead of swapping. */
#define RL_BUF_DEFAULT_MAX (64u << 20)

/* Largest file fs_read_file will read: task files, trajectories lines and
 * source files are far smaller; checkpoints use their own reader. */
#define RL_FILE_MAX (256u << 20)

/* ---- sandbox --------------------------------------------------------- */

/* Defaults of sb_limits (sandbox/sandbox.h). A test command (compile and
 * run a small project) finishes in seconds; these leave ample room for
 * honest work and bound a runaway one. */
#define SB_TIMEOUT_MS_DEFAULT 30000   /* wall clock of one command */
#define SB_CPU_MS_DEFAULT 60000       /* per process: 2 cores x wall */
#define SB_MEM_MB_DEFAULT 2048        /* RLIMIT_AS: gcc and python reserve far
                                         more address space than they touch */
#define SB_PROCS_DEFAULT 128          /* make -j, test runners, their threads */
#define SB_FSIZE_MB_DEFAULT 64        /* build outputs of a small repository */
#define SB_NOFILE_DEFAULT 512         /* compilers and test runners use < 100 */
#define SB_OUT_MAX_DEFAULT (256u << 10)   /* captured output: head + tail
                                             kept, plenty for a test log */
#define SB_FLOOD_MAX_DEFAULT (16u << 20)  /* stop a command that writes more:
                                             no honest test log is this big */

/* Hard caps: options may lower them, never exceed them. */
#define SB_TIMEOUT_MS_HARD (3600 * 1000)  /* one hour */
#define SB_MEM_MB_HARD (64L << 10)        /* 64 GB of address space */
#define SB_PROCS_HARD 4096
#define SB_FSIZE_MB_HARD (16L << 10)
#define SB_NOFILE_HARD 65536
#define SB_OUT_MAX_HARD (64u << 20)       /* the captured text lives in memory */
#define SB_FLOOD_MAX_HARD (1u << 30)
#define SB_ARGV_MAX 4096                  /* argv entries */
#define SB_ENV_MAX 256                    /* extra environment entries */
#define SB_RW_PATHS_MAX 16                /* extra writable paths */
#define SB_ARGS_BYTES_MAX (1u << 20)      /* argv + env strings; the kernel's
                                             ARG_MAX is 2 MB */
#define SB_STDIN_MAX (1u << 20)           /* stdin_data is written into the pipe
                                             before the command starts: it must
                                             fit in one pipe (pipe-max-size) */

/* Identity of the command. When the harness runs as root the command runs
 * as this host uid/gid (no account uses it, it owns no file), seen as
 * SB_NS_UID inside its user namespace. Not 65534: nobody owns files and
 * may use the ext4 reserved blocks here. */
#define SB_HOST_UID 100000
#define SB_NS_UID 1000

/* The private TMPDIR of a run is a tmpfs of this size (memory: it is
 * bounded like a file the command writes) and inode count. */
#define SB_TMPFS_MB 256
#define SB_TMPFS_INODES 16384
/* The private /dev/shm: POSIX semaphores and small shared buffers. */
#define SB_SHM_MB 64

/* Fixed SOURCE_DATE_EPOCH (2020-01-01 UTC) so builds are reproducible. */
#define SB_SOURCE_DATE_EPOCH "1577836800"

/* After a timeout or a flood the init kills and reaps the whole tree, in
 * microseconds; only a stuck init waits this long before SIGKILL. */
#define SB_STOP_GRACE_MS 2000

/* Stack of the sandbox's init and of the command before it execs: they only
 * make system calls; ASan builds need the slack. */
#define SB_CHILD_STACK (256u << 10)

/* Caches of one process: child stacks kept for reuse, Landlock rulesets
 * (a GRPO group cycles through a few work dirs; the key holds the dirs'
 * paths), user namespaces for idmapped mounts (one per work-dir owner). */
#define SB_STACK_CACHE 8
#define SB_LL_CACHE 32
#define SB_LL_KEY 1024
#define SB_IDMAP_CACHE 16

/* Entries walked when the work dir must be chowned because the kernel
 * cannot idmap it: a repository work tree has hundreds, not this many. */
#define SB_CHOWN_MAX 200000

/* ---- workspace (harness/workspace) ----------------------------------- */

/* ---- tasks ----------------------------------------------------------- */

/* ---- harness: tools, template, episode ------------------------------- */

/* ---- policy / model --------------------------------------------------- */

/* ---- grpo ------------------------------------------------------------ */

#endif
