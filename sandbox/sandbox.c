/* sandbox.c - runs one command under limits and isolation (parent side).
 *
 * A run: check the options, resolve the command, build the scrubbed
 * environment, get the work dir writable for the sandbox uid (idmapped
 * mount, else chown) and visible (one below /dev/shm is mounted into the
 * run's private /dev/shm), build its Landlock ruleset (cached), hand the job
 * to a sandbox made ahead (sb_spare.c, sb_child.c) and read the output
 * with poll() under the wall-clock deadline until the output reaches EOF
 * and the init has reported. That happens only once every process of the
 * run but the init is gone: the init kills and reaps the whole tree when
 * the command exits, or when we ask it to (SIGUSR1) on a timeout or an
 * output flood, then reports and exits; SIGKILL to the init, which takes
 * its PID namespace down, if it does not within a grace period. The init's
 * own exit (tearing its namespaces down) is not waited for: it is reaped
 * later (sb_spare_retire).
 */
#include "sandbox/sb_internal.h"

#include "common/buf.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SB_PATH "/usr/local/bin:/usr/bin:/bin"

#ifdef SB_PROFILE
/* This thread's stamps of its current run (until it has a spare), and of
 * its last finished one. */
static __thread sb_child tl_prof, tl_prof_last;

int sb_prof_last(long long *out, int n)
{
    if (n > SB_P_N)
        n = SB_P_N;
    memcpy(out, tl_prof_last.prof, sizeof out[0] * (size_t)n);
    return SB_P_N;
}
#endif

void sb_limits_default(sb_limits *lim)
{
    memset(lim, 0, sizeof *lim); /* fields without a default below (no_as_limit) are 0 */
    lim->timeout_ms = SB_TIMEOUT_MS_DEFAULT;
    lim->cpu_ms = SB_CPU_MS_DEFAULT;
    lim->mem_mb = SB_MEM_MB_DEFAULT;
    lim->procs = SB_PROCS_DEFAULT;
    lim->fsize_mb = SB_FSIZE_MB_DEFAULT;
    lim->nofile = SB_NOFILE_DEFAULT;
    lim->disk_mb = SB_DISK_MB_DEFAULT;
    lim->out_max = SB_OUT_MAX_DEFAULT;
    lim->flood_max = SB_FLOOD_MAX_DEFAULT;
}

void sb_opts_default(sb_opts *o)
{
    memset(o, 0, sizeof *o);
    sb_limits_default(&o->lim);
}

/* Everything one run owns; released by sb_state_free. */
typedef struct sb_state {
    sb_job job;                  /* read by the sandbox until it is reaped */
    char dir[PATH_MAX];
    char tmp[96];
    int tmp_is_mnt;
    char *path;
    char **envp;
    size_t nenv;
    int ruleset_fd, in_fd;       /* sent with the job */
    int idmap_fd[SB_MAX_IDMAPS]; /* cached, not ours to close */
    char *rw[SB_RW_PATHS_MAX + 1]; /* rw_paths resolved (NULL-terminated) */
    char *ro[SB_RO_PATHS_MAX + 1]; /* ro_paths resolved, existing ones */
    int ovl_fd, up_fd;           /* disk bound: the work dir's overlay (sent
                                    with the job) and its upper dir */
} sb_state;

static void sb_close(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* ---- checks ------------------------------------------------------------- */

static int sb_check_range(const char *name, long v, long lo, long hi, char *err)
{
    if (v < lo || v > hi)
        return rl_err(err, RL_EINVAL, "sandbox: %s = %ld: expected %ld..%ld", name, v, lo, hi);
    return 0;
}

static int sb_check_opts(const sb_opts *o, char *err)
{
    if (!o || !o->argv || !o->argv[0] || !o->argv[0][0])
        return rl_err(err, RL_EINVAL, "sandbox: argv: expected a command");
    if (!o->dir || !o->dir[0])
        return rl_err(err, RL_EINVAL, "sandbox: dir: expected a work directory");
    const sb_limits *l = &o->lim;
    int rc = sb_check_range("timeout_ms", l->timeout_ms, 1, SB_TIMEOUT_MS_HARD, err);
    if (!rc)
        rc = sb_check_range("cpu_ms", l->cpu_ms, 1, SB_TIMEOUT_MS_HARD, err);
    if (!rc)
        rc = sb_check_range("mem_mb", l->mem_mb, 16, SB_MEM_MB_HARD, err);
    if (!rc)
        rc = sb_check_range("procs", l->procs, 1, SB_PROCS_HARD, err);
    if (!rc)
        rc = sb_check_range("fsize_mb", l->fsize_mb, 0, SB_FSIZE_MB_HARD, err);
    if (!rc)
        rc = sb_check_range("nofile", l->nofile, 8, SB_NOFILE_HARD, err);
    if (!rc)
        rc = sb_check_range("disk_mb", l->disk_mb, 0, SB_DISK_MB_HARD, err);
    if (!rc)
        rc = sb_check_range("out_max", (long)l->out_max, 2, SB_OUT_MAX_HARD, err);
    if (!rc)
        rc = sb_check_range("flood_max", (long)l->flood_max, 1, SB_FLOOD_MAX_HARD, err);
    if (rc)
        return rc;
    if (o->stdin_data && o->stdin_len > SB_STDIN_MAX)
        return rl_err(err, RL_ELIMIT, "sandbox: stdin_len = %zu: expected at most %u bytes",
                      o->stdin_len, SB_STDIN_MAX);
    size_t n = 0, bytes = 0;
    for (; o->argv[n]; n++)
        bytes += strlen(o->argv[n]) + 1;
    if (n > SB_ARGV_MAX)
        return rl_err(err, RL_ELIMIT, "sandbox: argv: %zu entries, expected at most %d", n,
                      SB_ARGV_MAX);
    for (n = 0; o->env && o->env[n]; n++) {
        const char *eq = strchr(o->env[n], '=');
        if (!eq || eq == o->env[n])
            return rl_err(err, RL_EINVAL, "sandbox: env entry '%.60s': expected K=V", o->env[n]);
        bytes += strlen(o->env[n]) + 1;
    }
    if (n > SB_ENV_MAX)
        return rl_err(err, RL_ELIMIT, "sandbox: env: %zu entries, expected at most %d", n,
                      SB_ENV_MAX);
    if (bytes > SB_ARGS_BYTES_MAX)
        return rl_err(err, RL_ELIMIT, "sandbox: argv and env: %zu bytes, expected at most %u",
                      bytes, SB_ARGS_BYTES_MAX);
    for (n = 0; o->rw_paths && o->rw_paths[n]; n++)
        if (o->rw_paths[n][0] != '/')
            return rl_err(err, RL_EINVAL, "sandbox: rw_paths entry '%.60s': expected an absolute path",
                          o->rw_paths[n]);
    if (n > SB_RW_PATHS_MAX)
        return rl_err(err, RL_ELIMIT, "sandbox: rw_paths: %zu entries, expected at most %d", n,
                      SB_RW_PATHS_MAX);
    for (n = 0; o->ro_paths && o->ro_paths[n]; n++)
        if (o->ro_paths[n][0] != '/')
            return rl_err(err, RL_EINVAL, "sandbox: ro_paths entry '%.60s': expected an absolute path",
                          o->ro_paths[n]);
    if (n > SB_RO_PATHS_MAX)
        return rl_err(err, RL_ELIMIT, "sandbox: ro_paths: %zu entries, expected at most %d", n,
                      SB_RO_PATHS_MAX);
    return 0;
}

/* ---- environment and command ------------------------------------------- */

static int sb_env_put(sb_state *s, const char *kv)
{
    size_t klen = (size_t)(strchr(kv, '=') - kv) + 1;
    char *copy = strdup(kv);
    if (!copy)
        return RL_ENOMEM;
    for (size_t i = 0; i < s->nenv; i++) {
        if (!strncmp(s->envp[i], kv, klen)) { /* later entries win */
            free(s->envp[i]);
            s->envp[i] = copy;
            return 0;
        }
    }
    s->envp[s->nenv++] = copy;
    return 0;
}

/* The scrubbed, deterministic environment: nothing of the caller's. */
#define SB_ENV_FIXED_MAX 24 /* entries of base[] below, with room to spare */
static int sb_env_build(sb_state *s, const sb_opts *o, char *err)
{
    size_t extra = 0;
    while (o->env && o->env[extra])
        extra++;
    s->envp = calloc(SB_ENV_FIXED_MAX + extra + 1, sizeof *s->envp);
    if (!s->envp)
        return rl_err(err, RL_ENOMEM, "sandbox: environment: out of memory");
    char home[PATH_MAX + 8], tmp[96], tmp2[96], tmp3[96], pyc[128];
    /* Outside the work tree: nothing the command writes there is read as
     * its home (dotfiles, Python's user site). */
    snprintf(home, sizeof home, "HOME=%s", s->tmp);
    snprintf(tmp, sizeof tmp, "TMPDIR=%s", s->tmp);
    /* Check (and Windows-minded tools) look at TEMP/TMP, not TMPDIR: point
     * every name at the private tmp, the only writable scratch place. */
    snprintf(tmp2, sizeof tmp2, "TEMP=%s", s->tmp);
    snprintf(tmp3, sizeof tmp3, "TMP=%s", s->tmp);
    /* Python hardened by construction: no user site, no path entry for the
     * script's or the current directory (the repository's test
     * configuration adds what it needs, e.g. pytest's pythonpath), no
     * plugins loaded by entry point, and bytecode neither written nor read
     * from the work tree (the cache prefix is the private tmp's). */
    snprintf(pyc, sizeof pyc, "PYTHONPYCACHEPREFIX=%s/pycache", s->tmp);
    const char *base[] = {
        "PATH=" SB_PATH, home, tmp, tmp2, tmp3, "TZ=UTC", "LC_ALL=C.UTF-8", "LANG=C.UTF-8",
        "PYTHONHASHSEED=0", "PYTHONDONTWRITEBYTECODE=1", "PYTHONNOUSERSITE=1", "PYTHONSAFEPATH=1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1", pyc,
        "SOURCE_DATE_EPOCH=" SB_SOURCE_DATE_EPOCH, "USER=sandbox", "LOGNAME=sandbox",
    };
    int rc = 0;
    for (size_t i = 0; i < sizeof base / sizeof base[0] && !rc; i++)
        rc = sb_env_put(s, base[i]);
    for (size_t i = 0; i < extra && !rc; i++)
        rc = sb_env_put(s, o->env[i]);
    if (rc)
        return rl_err(err, rc, "sandbox: environment: out of memory");
    return 0;
}

static int sb_is_exec(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111);
}

/* argv[0] through the command's PATH (what execvp would do, done here
 * because the child cannot allocate). NULL: not found. */
static char *sb_resolve(const sb_state *s, const char *cmd)
{
    if (strchr(cmd, '/')) {
        char *p = NULL;
        if (cmd[0] == '/')
            return strdup(cmd);
        if (asprintf(&p, "%s/%s", s->dir, cmd) < 0)
            return NULL;
        return p;
    }
    const char *path = SB_PATH;
    for (size_t i = 0; i < s->nenv; i++)
        if (!strncmp(s->envp[i], "PATH=", 5))
            path = s->envp[i] + 5;
    while (*path) {
        size_t n = strcspn(path, ":");
        char *p = NULL;
        int r = n == 0 ? asprintf(&p, "%s/%s", s->dir, cmd)
                : path[0] == '/' ? asprintf(&p, "%.*s/%s", (int)n, path, cmd)
                : asprintf(&p, "%s/%.*s/%s", s->dir, (int)n, path, cmd);
        if (r >= 0 && sb_is_exec(p))
            return p;
        if (r >= 0)
            free(p);
        path += n + (path[n] == ':');
    }
    return NULL;
}

/* ---- files the command may write ---------------------------------------- */

/* Fallback when the kernel cannot idmap the work dir: hand the tree to the
 * sandbox uid. Never follows symlinks; leaves hard-linked files alone (a
 * previous run could have linked something it should not own). */
static int sb_chown_at(int dfd, const char *name, int depth, long *budget)
{
    struct stat st;
    if (--*budget < 0 || depth > 64 || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return -1;
    if (st.st_uid != SB_HOST_UID && (S_ISDIR(st.st_mode) || st.st_nlink == 1))
        if (fchownat(dfd, name, SB_HOST_UID, SB_HOST_UID, AT_SYMLINK_NOFOLLOW) < 0)
            return -1;
    if (!S_ISDIR(st.st_mode))
        return 0;
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
            rc = sb_chown_at(dirfd(d), e->d_name, depth + 1, budget);
    closedir(d);
    return rc;
}

/* The private tmpfs (SB_COVER_TMP, SB_COVER_SHM) that would hide path
 * from the command, with *rel the offset of the part below its mount
 * point; -1 when none does. path is canonical. */
static int sb_cover_of(const sb_caps *caps, const char *path, int *rel)
{
    const char *cover[SB_NCOVER] = {caps->tmp_mnt[0] ? caps->tmp_mnt : NULL,
                                    caps->shm ? "/dev/shm" : NULL};
    for (int i = 0; i < SB_NCOVER; i++) {
        size_t n = cover[i] ? strlen(cover[i]) : 0;
        if (!n || strncmp(path, cover[i], n) || (path[n] && path[n] != '/'))
            continue;
        *rel = (int)n + (path[n] == '/');
        return i;
    }
    return -1;
}

/* Adds a mount for the init to make, after its ancestors among the others
 * (a parent mounted later would hide it). */
static void sb_bind_add(sb_job *j, const sb_bind *b)
{
    size_t len = strlen(b->path);
    int at = j->nbind;
    while (at > 0 && strlen(j->bind[at - 1].path) > len) {
        j->bind[at] = j->bind[at - 1];
        at--;
    }
    j->bind[at] = *b;
    j->nbind++;
}

/* A path the command may write. Root makes it writable for the sandbox
 * uid, preferably with an idmapped mount (nothing changes on disk), else
 * by chowning; a path below a private tmpfs (/dev/shm) is mounted into it,
 * else the command would not see it. */
static int sb_writable(sb_state *s, const sb_caps *caps, const char *path, char *err)
{
    sb_bind b = {path, -1, 0, -1, 1, 0, 0, {0, 0, 0, 0, 0, 0}};
    if (caps->rootfs)
        b.rel = 1; /* made at its path in the run's own root */
    else
        b.cover = sb_cover_of(caps, path, &b.rel);
    if (!caps->root && b.cover < 0)
        return 0;
    struct statx sx;
    if (statx(AT_FDCWD, path, 0, STATX_BASIC_STATS | STATX_BTIME, &sx) < 0)
        return rl_err(err, rl_from_errno(errno), "sandbox: %s: %s", path, strerror(errno));
    b.is_dir = S_ISDIR(sx.stx_mode);
    /* Compared with what a spare's premount shows (sb_spare.c). */
    b.id.ok = (sx.stx_mask & (STATX_INO | STATX_BTIME)) == (STATX_INO | STATX_BTIME);
    b.id.dev_major = sx.stx_dev_major;
    b.id.dev_minor = sx.stx_dev_minor;
    b.id.ino = sx.stx_ino;
    b.id.btime_s = sx.stx_btime.tv_sec;
    b.id.btime_ns = sx.stx_btime.tv_nsec;
    sb_job *j = &s->job;
    if (j->nbind >= SB_MAX_BINDS)
        return rl_err(err, RL_ELIMIT, "sandbox: %s: expected at most %d writable paths", path,
                      SB_MAX_BINDS);
    if (caps->root && sx.stx_uid != SB_HOST_UID) {
        dev_t dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
        int fd = b.is_dir ? sb_idmap_fd(sx.stx_uid, sx.stx_gid, dev, path) : -1;
        if (fd >= 0 && j->nidmap < SB_MAX_IDMAPS) {
            b.idmap = j->nidmap;
            j->userns_h[j->nidmap] = fd;
            s->idmap_fd[j->nidmap++] = fd;
        } else {
            long budget = SB_CHOWN_MAX;
            if (sb_chown_at(AT_FDCWD, path, 0, &budget) < 0)
                return rl_err(err, RL_EIO, "sandbox: %s: cannot hand it to the sandbox uid: %s",
                              path, budget < 0 ? "too many files" : strerror(errno));
        }
    }
    if (b.idmap >= 0 || b.cover >= 0 || caps->rootfs)
        sb_bind_add(j, &b);
    return 0;
}

/* Is path below (or at) dir? Both canonical. */
static int sb_below(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return !strncmp(path, dir, n) && (path[n] == '/' || !path[n] || (n == 1 && dir[0] == '/'));
}

/* A path the command sees read-only: a read-only bind over it, made after
 * the writable path it lies in. One that does not exist is skipped. */
static int sb_readonly(sb_state *s, const sb_caps *caps, const char *given, size_t k, char *err)
{
    char *path = realpath(given, NULL);
    if (!path) {
        if (errno == ENOENT || errno == ENOTDIR)
            return 0;
        return rl_err(err, rl_from_errno(errno), "sandbox: ro_paths entry %s: %s", given,
                      strerror(errno));
    }
    s->ro[k] = path;
    int inside = sb_below(path, s->dir);
    for (size_t i = 0; s->rw[i] && !inside; i++)
        inside = sb_below(path, s->rw[i]);
    if (!inside)
        return rl_err(err, RL_EINVAL,
                      "sandbox: ro_paths entry %s: expected a path inside the work dir or an rw_paths entry",
                      given);
    if (!(caps->clone_flags & CLONE_NEWNS))
        return rl_err(err, RL_EUNSUP, "sandbox: ro_paths entry %s: needs a mount namespace", given);
    struct statx sx;
    if (statx(AT_FDCWD, path, 0, STATX_BASIC_STATS | STATX_BTIME, &sx) < 0)
        return rl_err(err, rl_from_errno(errno), "sandbox: %s: %s", path, strerror(errno));
    sb_bind b = {path, -1, 0, -1, S_ISDIR(sx.stx_mode), 0, 1, {0, 0, 0, 0, 0, 0}};
    b.id.ok = (sx.stx_mask & (STATX_INO | STATX_BTIME)) == (STATX_INO | STATX_BTIME);
    b.id.dev_major = sx.stx_dev_major;
    b.id.dev_minor = sx.stx_dev_minor;
    b.id.ino = sx.stx_ino;
    b.id.btime_s = sx.stx_btime.tv_sec;
    b.id.btime_ns = sx.stx_btime.tv_nsec;
    if (s->job.nbind >= SB_MAX_BINDS)
        return rl_err(err, RL_ELIMIT, "sandbox: %s: expected at most %d mounts", path, SB_MAX_BINDS);
    sb_bind_add(&s->job, &b);
    return 0;
}

/* TMPDIR: with a mount namespace, a tmpfs the init mounts on a fixed
 * empty directory (nothing to create or remove here); else a fresh
 * directory, removed after the run. */
static int sb_make_tmp(sb_state *s, const sb_caps *caps, char *err)
{
    if (caps->rootfs) {
        snprintf(s->tmp, sizeof s->tmp, "/tmp");
        s->tmp_is_mnt = 1;
        return 0;
    }
    if (caps->tmp_mnt[0]) {
        snprintf(s->tmp, sizeof s->tmp, "%s", caps->tmp_mnt);
        s->tmp_is_mnt = 1;
        return 0;
    }
    snprintf(s->tmp, sizeof s->tmp, "/tmp/rl-sb-XXXXXX");
    if (!mkdtemp(s->tmp)) {
        int e = errno;
        s->tmp[0] = '\0';
        return rl_err(err, rl_from_errno(e), "sandbox: private temp dir in /tmp: %s", strerror(e));
    }
    if (caps->root && chown(s->tmp, SB_HOST_UID, SB_HOST_UID) < 0)
        return rl_err(err, RL_EIO, "sandbox: chown %s: %s", s->tmp, strerror(errno));
    return 0;
}

/* ---- stdin ---------------------------------------------------------------- */

/* stdin_data is written whole before the command starts (it fits in one
 * pipe, SB_STDIN_MAX): no writer to babysit, no SIGPIPE. Without it the
 * command keeps the /dev/null its sandbox opened. */
static int sb_open_stdin(sb_state *s, const sb_opts *o, char *err)
{
    if (!o->stdin_data)
        return 0;
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return rl_err(err, RL_EIO, "sandbox: stdin pipe: %s", strerror(errno));
    s->in_fd = p[0];
    s->job.has_stdin = 1;
    int w = p[1];
    if (o->stdin_len > 65536 && fcntl(w, F_SETPIPE_SZ, (int)o->stdin_len) < 0) {
        close(w);
        return rl_err(err, RL_ELIMIT, "sandbox: stdin of %zu bytes does not fit in a pipe: %s",
                      o->stdin_len, strerror(errno));
    }
    size_t off = 0;
    while (off < o->stdin_len) {
        ssize_t n = write(w, o->stdin_data + off, o->stdin_len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            close(w);
            return rl_err(err, RL_EIO, "sandbox: writing stdin: %s", strerror(errno));
        }
        off += (size_t)n;
    }
    close(w);
    return 0;
}

/* Absolute, without ".", ".." or empty components: usable as is. */
static int sb_is_canonical(const char *p)
{
    if (p[0] != '/')
        return 0;
    for (const char *c = p; *c; c++) {
        if (c[0] != '/')
            continue;
        if (c[1] == '/' || (c[1] == '\0' && c != p))
            return 0;
        if (c[1] == '.' && (c[2] == '/' || c[2] == '\0' || (c[2] == '.' && (c[3] == '/' || c[3] == '\0'))))
            return 0;
    }
    return 1;
}

/* ---- the job --------------------------------------------------------------- */

static void sb_rlim_add(sb_job *j, int res, rlim_t soft, rlim_t hard)
{
    j->rlim[j->nrlim].resource = res;
    j->rlim[j->nrlim].lim.rlim_cur = soft;
    j->rlim[j->nrlim].lim.rlim_max = hard;
    j->nrlim++;
}

static void sb_job_fill(sb_state *s, const sb_opts *o, const sb_caps *caps)
{
    sb_job *j = &s->job;
    const sb_limits *l = &o->lim;
    j->path = s->path;
    j->argv = (char *const *)o->argv;
    j->envp = s->envp;
    j->dir = s->dir;
    j->has_ruleset = s->ruleset_fd >= 0;
    /* The process count: the init is in the command's user namespace only
     * when the harness is not root. */
    rlim_t nproc = (rlim_t)l->procs + (!caps->root && caps->userns);
    sb_rlim_add(j, RLIMIT_NPROC, nproc, nproc);
    rlim_t as = (rlim_t)l->mem_mb << 20;
    if (!l->no_as_limit || !(caps->layers & SB_LAYER_CGROUP))
        sb_rlim_add(j, RLIMIT_AS, as, as);
    /* About the same figures for the whole tree, where it has cgroups. */
    j->cg_lim[0] = (long long)(l->mem_mb + SB_CG_MEM_SLACK_MB) << 20;
    j->cg_lim[1] = l->procs;
    rlim_t fs = (rlim_t)l->fsize_mb << 20;
    sb_rlim_add(j, RLIMIT_FSIZE, fs, fs);
    sb_rlim_add(j, RLIMIT_NOFILE, (rlim_t)l->nofile, (rlim_t)l->nofile);
    sb_rlim_add(j, RLIMIT_CORE, 0, 0);
    /* SIGXCPU at the limit, SIGKILL a second later if it is caught. */
    rlim_t cpu = (rlim_t)(l->cpu_ms + 999) / 1000;
    sb_rlim_add(j, RLIMIT_CPU, cpu, cpu + 1);
}

/* The disk bound: the work dir becomes an overlay whose upper layer is a
 * tmpfs of disk_mb (sb_disk.c). */
static int sb_disk_prepare(sb_state *s, const sb_opts *o, const sb_caps *caps, char *err)
{
    if (!caps->rootfs)
        return rl_err(err, RL_EUNSUP,
                      "sandbox: disk_mb = %ld: needs a root harness with mount and PID namespaces",
                      o->lim.disk_mb);
    sb_bind *wb = NULL;
    for (int i = 0; i < s->job.nbind; i++)
        if (s->job.bind[i].path == s->dir)
            wb = &s->job.bind[i];
    if (!wb)
        return rl_err(err, RL_EINVAL, "sandbox: disk_mb: the work dir %s has no mount", s->dir);
    int rc = sb_disk_make(&s->ovl_fd, &s->up_fd, s->dir, wb->idmap >= 0 ? s->idmap_fd[wb->idmap] : -1,
                          o->lim.disk_mb, err);
    if (rc)
        return rc;
    wb->disk = 1;
    s->job.has_disk = 1;
    return 0;
}

static int sb_prepare(sb_state *s, const sb_opts *o, const sb_caps *caps, char *err)
{
    /* realpath costs a syscall per component: skipped for a canonical
     * path, unless it lies below a private tmpfs, where the mount the
     * init makes must not go through a symlink. */
    int rel;
    if (sb_is_canonical(o->dir) && strlen(o->dir) < sizeof s->dir &&
        sb_cover_of(caps, o->dir, &rel) < 0)
        memcpy(s->dir, o->dir, strlen(o->dir) + 1);
    else if (!realpath(o->dir, s->dir))
        return rl_err(err, rl_from_errno(errno), "sandbox: work dir %s: %s", o->dir, strerror(errno));
    struct stat st;
    if (stat(s->dir, &st) < 0)
        return rl_err(err, rl_from_errno(errno), "sandbox: work dir %s: %s", o->dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return rl_err(err, RL_EINVAL, "sandbox: work dir %s: expected a directory", o->dir);
    int rc = sb_make_tmp(s, caps, err);
    if (!rc)
        rc = sb_env_build(s, o, err);
    if (rc)
        return rc;
    s->path = sb_resolve(s, o->argv[0]);
    if (!s->path)
        return 1; /* command not found: reported as exit 127, no spawn */
    /* Resolved: a mount below /dev/shm needs the real path (one that does
     * not exist is left as given and fails below with its name). */
    for (size_t i = 0; o->rw_paths && o->rw_paths[i]; i++)
        if (!(s->rw[i] = realpath(o->rw_paths[i], NULL)) && !(s->rw[i] = strdup(o->rw_paths[i])))
            return rl_err(err, RL_ENOMEM, "sandbox: rw_paths: out of memory");
    rc = sb_writable(s, caps, s->dir, err);
    for (size_t i = 0; !rc && s->rw[i]; i++)
        rc = sb_writable(s, caps, s->rw[i], err);
    for (size_t i = 0, k = 0; !rc && o->ro_paths && o->ro_paths[i]; i++) {
        rc = sb_readonly(s, caps, o->ro_paths[i], k, err);
        k += s->ro[k] != NULL;
    }
    if (!rc && o->lim.disk_mb > 0)
        rc = sb_disk_prepare(s, o, caps, err);
    if (rc)
        return rc;
    /* With a root of its own, the ruleset names the spare's /dev and /tmp:
     * made once the spare is known (sb_start). */
    if (caps->landlock_abi && !caps->rootfs) {
        const char *rw[SB_RW_PATHS_MAX + 3] = {s->dir, s->tmp_is_mnt ? caps->tmp_rule : s->tmp};
        size_t n = 2;
        for (size_t i = 0; s->rw[i]; i++)
            rw[n++] = s->rw[i];
        rw[n] = NULL;
        if ((rc = sb_landlock_ruleset_cached(&s->ruleset_fd, caps->landlock_abi, caps->shm, rw, err)))
            return rc;
    }
    if ((rc = sb_open_stdin(s, o, err)))
        return rc;
    sb_job_fill(s, o, caps);
    return 0;
}

static void sb_state_free(sb_state *s)
{
    sb_close(&s->ovl_fd);
    sb_close(&s->up_fd);
    sb_close(&s->ruleset_fd);
    sb_close(&s->in_fd);
    if (s->tmp[0] && !s->tmp_is_mnt)
        fs_remove_tree(s->tmp, NULL);
    for (size_t i = 0; i < s->nenv; i++)
        free(s->envp[i]);
    free(s->envp);
    free(s->path);
    for (size_t i = 0; s->rw[i]; i++)
        free(s->rw[i]);
    for (size_t i = 0; s->ro[i]; i++)
        free(s->ro[i]);
}

/* ---- running ---------------------------------------------------------------- */

typedef struct sb_watch {
    buf_ht_t out;
    int stopping, timed_out, flood, hard_killed;
    long grace_end;
    int got_done, got_fail;
    sb_msg done, fail;
} sb_watch;

/* Asks the init to kill and reap everything (it accounts for the CPU
 * time); SIGKILL follows if it has not finished after a grace period. */
static void sb_stop_run(sb_watch *w, pid_t init)
{
    if (w->stopping)
        return;
    kill(init, SIGUSR1);
    w->stopping = 1;
    w->grace_end = clk_ms_int() + SB_STOP_GRACE_MS;
}

static void sb_read_out(sb_spare *s, sb_watch *w, const sb_opts *o, pid_t init)
{
    char buf[65536];
    /* Bounded: a fast writer must not keep us from the deadline. */
    for (int i = 0; i < 64; i++) {
        ssize_t n = read(s->out_r, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return; /* EAGAIN */
        if (n == 0) {
            sb_close(&s->out_r);
            SB_PROF(&s->c, SB_P_H_OUTEOF);
            return;
        }
        buf_ht_append(&w->out, buf, (size_t)n);
        if (w->out.total > o->lim.flood_max && !w->stopping) {
            sb_stop_run(w, init);
            w->flood = 1;
        }
    }
}

static void sb_read_msg(sb_spare *s, sb_watch *w)
{
    sb_msg m;
    ssize_t n = read(s->msg_r, &m, sizeof m);
    if (n < 0 && errno == EINTR)
        return;
    if (n != (ssize_t)sizeof m) {
        sb_close(&s->msg_r);
        SB_PROF(&s->c, SB_P_H_MSGEOF);
        return;
    }
    SB_PROF(&s->c, SB_P_H_MSG);
    if (m.kind == SB_MSG_DONE && !w->got_done) {
        w->done = m;
        w->got_done = 1;
    } else if (m.kind == SB_MSG_FAIL && !w->got_fail) {
        w->fail = m;
        w->got_fail = 1;
    }
}

/* Reads output and messages until every writer of the output is gone and
 * the init has reported (the whole tree is gone) or is gone itself,
 * killing the tree at the deadline. */
static void sb_watch_run(sb_spare *s, sb_watch *w, const sb_opts *o, pid_t init, long t0)
{
    long deadline = t0 + o->lim.timeout_ms;
    while (s->out_r >= 0 || (s->msg_r >= 0 && !w->got_done)) {
        long now = clk_ms_int(), until = -1;
        if (!w->stopping && !w->got_done)
            until = deadline;
        else if (w->stopping && !w->hard_killed)
            until = w->grace_end;
        if (until >= 0 && now >= until) {
            if (!w->stopping) {
                sb_stop_run(w, init);
                w->timed_out = 1;
            } else {
                kill(init, SIGKILL); /* the whole namespace dies with it */
                w->hard_killed = 1;
            }
            continue;
        }
        struct pollfd pf[2] = {{s->out_r, POLLIN, 0}, {s->msg_r, POLLIN, 0}};
        int n = poll(pf, 2, until >= 0 ? (int)(until - now) : -1);
        if (n < 0 && errno != EINTR) {
            kill(init, SIGKILL); /* cannot watch it: do not let it run */
            w->hard_killed = w->stopping = 1;
            break;
        }
        if (n <= 0)
            continue;
        if (pf[0].revents)
            sb_read_out(s, w, o, init);
        if (pf[1].revents)
            sb_read_msg(s, w);
    }
}

static long sb_tv_ms(struct timeval tv) { return tv.tv_sec * 1000L + tv.tv_usec / 1000L; }

static void sb_reason(sb_result *res, const char *fmt, long v)
{
    snprintf(res->reason, sizeof res->reason, fmt, v);
}

/* Turns what the watch saw into the result record. */
static int sb_finish(sb_result *res, const sb_watch *w, const sb_opts *o, int init_st,
                     long harness_rss_kb, long oom_kills, char *err)
{
    const sb_limits *l = &o->lim;
    if (w->got_fail && w->fail.stage != SB_ST_EXEC) {
        snprintf(res->reason, sizeof res->reason, "sandbox setup: %s: %s",
                 sb_stage_name(w->fail.stage), strerror(w->fail.err));
        res->stop = SB_STOP_SETUP;
        res->exit_code = 125;
        return rl_err(err, rl_from_errno(w->fail.err), "%s", res->reason);
    }
    if (w->got_fail) {
        snprintf(res->reason, sizeof res->reason, "exec %s: %s", o->argv[0], strerror(w->fail.err));
        res->stop = SB_STOP_SETUP;
        res->exit_code = w->fail.err == ENOENT ? 127 : 126;
        return 0;
    }
    res->peak_rss_kb = w->got_done ? w->done.maxrss_kb : 0;
    if (w->flood || w->timed_out)
        res->exit_code = -1;
    if (w->flood) {
        res->stop = SB_STOP_FLOOD;
        res->signal = SIGKILL;
        sb_reason(res, "output flood: more than %ld bytes", (long)l->flood_max);
        return 0;
    }
    if (w->timed_out) {
        res->stop = SB_STOP_TIMEOUT;
        res->signal = SIGKILL;
        res->timed_out = 1;
        sb_reason(res, "wall-clock limit of %ld ms", l->timeout_ms);
        return 0;
    }
    if (!w->got_done) {
        snprintf(res->reason, sizeof res->reason, "sandbox init ended without a status (%s %d)",
                 WIFSIGNALED(init_st) ? "signal" : "exit",
                 WIFSIGNALED(init_st) ? WTERMSIG(init_st) : WEXITSTATUS(init_st));
        res->stop = SB_STOP_SETUP;
        res->exit_code = 125;
        return rl_err(err, RL_EIO, "%s", res->reason);
    }
    int st = w->done.wstatus;
    /* Allocation failures under RLIMIT_AS end in an error exit or a crash
     * near the cap; the kernel's OOM killer sends SIGKILL. ru_maxrss of
     * the command cannot be below the harness's (it starts as a vfork of
     * it), so only a peak above the harness's own counts. */
    long cap_kb = l->mem_mb * 1024;
    int near_cap = res->peak_rss_kb >= cap_kb * 3 / 4 && res->peak_rss_kb > harness_rss_kb;
    /* The tree's memory cgroup killed one of its processes: the command
     * itself, or a child whose loss made it fail. */
    if (oom_kills > 0 && (!WIFEXITED(st) || WEXITSTATUS(st))) {
        res->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        res->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
        res->stop = SB_STOP_MEMORY;
        sb_reason(res, "memory cap of the process tree (%ld MB): OOM kill in its cgroup",
                  l->mem_mb + SB_CG_MEM_SLACK_MB);
        return 0;
    }
    if (WIFEXITED(st)) {
        res->exit_code = WEXITSTATUS(st);
        res->stop = res->exit_code && near_cap ? SB_STOP_MEMORY : SB_STOP_EXIT;
        sb_reason(res, res->stop == SB_STOP_MEMORY ? "memory cap: exited with %ld near the cap"
                                                   : "exited with status %ld", res->exit_code);
        return 0;
    }
    res->signal = WTERMSIG(st);
    res->exit_code = -1;
    if (res->signal == SIGXCPU || (res->signal == SIGKILL && res->cpu_ms >= l->cpu_ms)) {
        res->stop = SB_STOP_CPU;
        sb_reason(res, "CPU limit of %ld ms", l->cpu_ms);
    } else if (near_cap || res->signal == SIGKILL) {
        res->stop = SB_STOP_MEMORY;
        sb_reason(res, "memory cap: killed by signal %ld", res->signal);
    } else {
        res->stop = SB_STOP_SIGNAL;
        snprintf(res->reason, sizeof res->reason, "killed by signal %d (%s)", res->signal,
                 strsignal(res->signal));
    }
    return 0;
}

static void sb_result_init(sb_result *res)
{
    memset(res, 0, sizeof *res);
    res->stop = SB_STOP_SETUP;
    res->exit_code = 125;
}

/* Hands the job to a spare sandbox; a spare that died meanwhile (its
 * thread's exit, a failed setup) is replaced once. On failure the reason
 * is the dead spare's own message if it left one. */
static int sb_start(sb_spare **out, sb_state *s, const sb_caps *caps, char *err)
{
    sb_spare *sp = NULL;
    for (int attempt = 0; attempt < 2; attempt++) {
        int rc = sb_spare_get(&sp, caps, err);
        if (rc)
            return rc;
        if (caps->rootfs && caps->landlock_abi) {
            sb_close(&s->ruleset_fd);
            if ((rc = sb_spare_ruleset(sp, &s->job, caps->landlock_abi, s->ovl_fd, &s->ruleset_fd,
                                       err))) {
                sb_spare_free(sp);
                return rc;
            }
            s->job.has_ruleset = 1;
        }
        int fds[3 + SB_MAX_IDMAPS], n = 0;
        if (s->ruleset_fd >= 0)
            fds[n++] = s->ruleset_fd;
        if (s->in_fd >= 0)
            fds[n++] = s->in_fd;
        int npass = n;
        for (int i = 0; i < s->job.nidmap; i++)
            fds[n++] = s->idmap_fd[i];
        if (s->job.has_disk)
            fds[n++] = s->ovl_fd;
#ifdef SB_PROFILE
        sp->c.prof[SB_P_H_ENTER] = tl_prof.prof[SB_P_H_ENTER];
        sp->c.prof[SB_P_H_PREPARED] = tl_prof.prof[SB_P_H_PREPARED];
#endif
        SB_PROF(&sp->c, SB_P_H_SENT);
        if (sb_spare_dispatch(sp, &s->job, fds, npass, n) == 0) {
            *out = sp;
            return 0;
        }
        sb_msg m;
        if (read(sp->msg_r, &m, sizeof m) == (ssize_t)sizeof m && m.kind == SB_MSG_FAIL)
            rl_err(err, rl_from_errno(m.err), "sandbox setup: %s: %s", sb_stage_name(m.stage),
                   strerror(m.err));
        else
            rl_err(err, RL_EIO, "sandbox setup: the sandbox died before its job");
        sb_spare_free(sp);
    }
    return RL_EIO;
}

/* Output and timing go into res whatever happened. */
static int sb_execute(sb_result *res, sb_state *s, const sb_opts *o, const sb_caps *caps, char *err)
{
    sb_watch w;
    memset(&w, 0, sizeof w);
    size_t head = o->lim.out_max / 2;
    if (buf_ht_init(&w.out, head, o->lim.out_max - head)) {
        buf_ht_dispose(&w.out);
        return rl_err(err, RL_ENOMEM, "sandbox: output buffer: out of memory");
    }
    struct rusage self;
    getrusage(RUSAGE_SELF, &self);
    long t0 = clk_ms_int();
    sb_spare *sp;
    int rc = sb_start(&sp, s, caps, err);
    if (rc) {
        buf_ht_dispose(&w.out);
        return rc;
    }
    /* The sandbox has its own copies now. */
    sb_close(&s->ruleset_fd);
    sb_close(&s->in_fd);
    /* While this command runs: the sandbox of the next run. (Made after
     * the result instead, it is not ready when runs follow each other
     * closely: measured 2x slower back to back.) It premounts this run's
     * binds: the next run is most often in the same dirs. */
    sb_spare_refill(caps, s->job.has_disk ? NULL : &s->job);
    SB_PROF(&sp->c, SB_P_H_REFILLED);
    sb_watch_run(sp, &w, o, sp->init, t0);
    int st = 0;
    /* The cgroups really held the run; did their memory limit stop it? */
    unsigned cg_layer = sp->c.cg_ok == 1 ? SB_LAYER_CGROUP : 0;
    long oom_kills = 0;
    if (cg_layer && (!w.got_done || !WIFEXITED(w.done.wstatus) || WEXITSTATUS(w.done.wstatus)))
        oom_kills = sb_cgroup_oom_kills(&sp->c, caps->cg_v2);
    if (w.got_done) {
        /* Everything of the run is gone; the init is exiting. Its CPU time
         * is the sandbox's, the report holds the command's. */
        res->cpu_ms = w.done.cpu_us / 1000;
#ifdef SB_PROFILE
        tl_prof_last = sp->c;
#endif
        sb_spare_retire(sp);
    } else {
        /* Failed, or killed: the init is gone or going. */
        struct rusage ru;
        memset(&ru, 0, sizeof ru);
        while (wait4(sp->init, &st, __WALL, &ru) < 0 && errno == EINTR)
            ;
        sp->reaped = 1;
        SB_PROF(&sp->c, SB_P_H_REAPED);
#ifdef SB_PROFILE
        tl_prof_last = sp->c;
#endif
        sb_spare_free(sp);
        res->cpu_ms = sb_tv_ms(ru.ru_utime) + sb_tv_ms(ru.ru_stime);
    }
    res->wall_ms = clk_ms_int() - t0;
    res->layers = (caps->layers & ~SB_LAYER_CGROUP) | cg_layer;
    res->out_bytes = w.out.total;
    res->out_truncated = buf_ht_cut(&w.out) > 0;
    res->out = buf_ht_render(&w.out, &res->out_len);
    buf_ht_dispose(&w.out);
    if (!res->out) {
        res->out_len = 0;
        return rl_err(err, RL_ENOMEM, "sandbox: output: out of memory");
    }
    return sb_finish(res, &w, o, st, self.ru_maxrss, oom_kills, err);
}

static int sb_run_checked(sb_result *res, const sb_opts *opts, char *err)
{
    SB_PROF(&tl_prof, SB_P_H_ENTER);
    int rc = sb_check_opts(opts, err);
    if (rc)
        return rc;
    const sb_caps *caps = sb_caps_get();
    res->layers = caps->layers & ~SB_LAYER_CGROUP;
    sb_state s;
    memset(&s, 0, sizeof s);
    s.ruleset_fd = s.in_fd = s.ovl_fd = s.up_fd = -1;
    rc = sb_prepare(&s, opts, caps, err);
    SB_PROF(&tl_prof, SB_P_H_PREPARED);
    if (rc == 1) {
        snprintf(res->reason, sizeof res->reason, "command not found: %.100s", opts->argv[0]);
        res->exit_code = 127;
        rc = 0;
    } else if (!rc) {
        rc = sb_execute(res, &s, opts, caps, err);
        /* The tree is gone: its writes go into the work dir. */
        if (s.up_fd >= 0) {
            int rc2 = sb_disk_carry(s.up_fd, s.dir, rc ? NULL : err);
            rc = rc ? rc : rc2;
        }
    }
    sb_state_free(&s);
    SB_PROF(&tl_prof_last, SB_P_H_RETURN);
    return rc;
}

int sb_run(sb_result *res, const sb_opts *opts, char *err)
{
    char local[RL_ERR_MAX] = "";
    if (!err)
        err = local;
    sb_result_init(res);
    int rc = sb_run_checked(res, opts, err);
    if (rc && !res->reason[0])
        snprintf(res->reason, sizeof res->reason, "%.127s", err);
    if (!res->out)
        res->out = calloc(1, 1);
    return rc;
}
