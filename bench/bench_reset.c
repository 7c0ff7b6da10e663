/* bench_reset.c - ws_reset of a dirty 40-file work tree vs the git CLI.
 *
 * Builds a 40-file repository (nested dirs, a .gitignore for *.o and
 * build/) in a temp dir, opens a work tree on it, then many times: dirty
 * it the way an episode does (edit 5 files, add 3 untracked files, 3
 * object files and a build/ dir; in the second run also delete a tracked
 * file) and time ws_reset alone. The
 * baseline does the same dirtying on a plain git clone of the same files
 * and times `git reset --hard -q` + `git clean -fdxq` as two subprocesses.
 * Both run interleaved in one loop, so they share the machine's load.
 * Every reset is checked (outside the timing) to have really restored
 * the tree. Prints one JSON line (docs/DEVELOPING.md): the median wall ms
 * per reset (the machine is shared; the spread and CPU time go to
 * stderr).
 *
 * The file system decides the wall time, so the headline lines ("reset",
 * "reset_with_delete") run where users' work trees go: a folder in the
 * default workspace root (ws_opts_default: /dev/shm when it is a tmpfs,
 * else build/ws; RL_WS_ROOT overrides). The same two then run on the other
 * kind of file system, named with its kind ("_disk": $TMPDIR, default
 * /tmp; "_tmpfs": /dev/shm).
 */
#include "harness/workspace.h"

#include "common/err.h"
#include "common/fsutil.h"

#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define NFILES 40
#define ITERS_OURS 400
#define ITERS_GIT 100
#define WARMUP 10

static char g_names[NFILES][64];
static char *g_content[NFILES];

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double cpu_ms(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double children_cpu_ms(void)
{
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static void die(const char *what, const char *err)
{
    fprintf(stderr, "bench_reset: %s: %s\n", what, err);
    exit(1);
}

static void put(const char *dir, const char *rel, const char *content)
{
    char path[PATH_MAX], parent[PATH_MAX], err[RL_ERR_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    fs_dirname(parent, sizeof parent, path);
    if (fs_mkdirs(parent, err))
        die("mkdir", err);
    FILE *f = fopen(path, "wb");
    if (!f)
        die("cannot write", path);
    fputs(content, f);
    fclose(f);
}

/* 40 tracked files: 1 .gitignore, 1 README, 1 Makefile, 15 src, 5
 * src/sub, 8 include, 8 tests, 1 docs; 0.5-3 KB of C-like text each. */
static void make_files(const char *dir)
{
    int n = 0;
    snprintf(g_names[n++], 64, ".gitignore");
    snprintf(g_names[n++], 64, "README.md");
    snprintf(g_names[n++], 64, "Makefile");
    for (int i = 0; i < 15; i++)
        snprintf(g_names[n++], 64, "src/mod%02d.c", i);
    for (int i = 0; i < 5; i++)
        snprintf(g_names[n++], 64, "src/sub/deep%02d.c", i);
    for (int i = 0; i < 8; i++)
        snprintf(g_names[n++], 64, "include/mod%02d.h", i);
    for (int i = 0; i < 8; i++)
        snprintf(g_names[n++], 64, "tests/test_mod%02d.c", i);
    snprintf(g_names[n++], 64, "docs/guide.md");
    if (n != NFILES)
        die("fixture", "expected 40 files");
    for (int i = 0; i < NFILES; i++) {
        size_t cap = 4096, len = 0;
        char *c = malloc(cap);
        if (i == 0)
            len = (size_t)snprintf(c, cap, "*.o\nbuild/\n");
        else {
            int lines = 20 + (i * 7) % 80;
            for (int l = 0; l < lines && len + 64 < cap; l++)
                len += (size_t)snprintf(c + len, cap - len,
                                        "int f%d_%d(int x) { return x * %d; }\n", i, l, l + 1);
        }
        g_content[i] = c;
        put(dir, g_names[i], c);
    }
}

/* What an episode leaves behind: edits, new files, build outputs, and
 * (with_delete) one tracked file removed. */
static void dirty(const char *wt, int iter, int with_delete)
{
    char buf[128], path[PATH_MAX];
    for (int k = 0; k < 5; k++) {
        int i = 3 + (iter * 5 + k) % (NFILES - 3);
        snprintf(buf, sizeof buf, "/* edit %d */ int g%d;\n", iter, k);
        put(wt, g_names[i], buf);
    }
    if (with_delete) {
        snprintf(path, sizeof path, "%s/%s", wt, g_names[3 + iter % 10]);
        unlink(path);
    }
    put(wt, "src/new_helper.c", "int helper;\n");
    put(wt, "scratch/notes.txt", "notes\n");
    put(wt, "tests/test_extra.c", "int extra;\n");
    put(wt, "src/mod00.o", "\x7f" "ELF object\n");
    put(wt, "src/mod01.o", "\x7f" "ELF object\n");
    put(wt, "src/sub/deep00.o", "\x7f" "ELF object\n");
    put(wt, "build/app", "binary\n");
    put(wt, "build/obj/a.o", "obj\n");
    put(wt, "build/obj/b.o", "obj\n");
}

/* The reset really happened: all tracked files as committed, no leftovers. */
static void verify(const char *wt)
{
    char path[PATH_MAX];
    for (int i = 0; i < NFILES; i++) {
        snprintf(path, sizeof path, "%s/%s", wt, g_names[i]);
        char *c = NULL;
        if (fs_read_file(&c, NULL, path, 1 << 20, NULL) || strcmp(c, g_content[i]))
            die("not restored", path);
        free(c);
    }
    const char *gone[] = {"src/new_helper.c", "scratch", "tests/test_extra.c", "src/mod00.o",
                          "build"};
    for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", wt, gone[i]);
        if (access(path, F_OK) == 0)
            die("not removed", path);
    }
}

static int run(char *const argv[])
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc)
        return -1;
    int st;
    if (waitpid(pid, &st, 0) < 0)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Prints the spread; returns the median, the figure we report: the
 * machine is shared, and a mean follows whoever else is running. */
static void stats(const char *name, double *t, int n, double *median)
{
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += t[i];
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    *median = t[n / 2];
    fprintf(stderr,
            "bench_reset:   %-8s n=%d p10 %.3f ms, p50 %.3f, mean %.3f, p90 %.3f, max %.3f\n",
            name, n, t[n / 10], t[n / 2], sum / n, t[n * 9 / 10], t[n - 1]);
}

/* Times ITERS resets of t and of the clone, interleaved so both sides
 * see the same machine load, and prints the JSON line. */
static void bench_one(const char *name, ws_tree *t, char *clone, int with_delete)
{
    static double ours[ITERS_OURS], theirs[ITERS_GIT];
    char *reset_argv[] = {"git", "-C", clone, "reset", "--hard", "-q", NULL};
    char *clean_argv[] = {"git", "-C", clone, "clean", "-fdxq", NULL};
    const char *wt = ws_path(t);
    char err[RL_ERR_MAX];
    double cpu_ours = 0, cpu_git = 0;
    for (int i = -WARMUP; i < ITERS_OURS; i++) {
        dirty(wt, i + WARMUP, with_delete);
        double c0 = cpu_ms(CLOCK_THREAD_CPUTIME_ID), t0 = now_ms();
        if (ws_reset(t, err))
            die("ws_reset", err);
        double dt = now_ms() - t0, dc = cpu_ms(CLOCK_THREAD_CPUTIME_ID) - c0;
        verify(wt);
        if (i >= 0) {
            ours[i] = dt;
            cpu_ours += dc;
        }
        if (i >= ITERS_GIT)
            continue;
        dirty(clone, i + WARMUP, with_delete);
        double k0 = children_cpu_ms();
        t0 = now_ms();
        if (run(reset_argv) != 0 || run(clean_argv) != 0)
            die("git reset/clean", clone);
        dt = now_ms() - t0;
        dc = children_cpu_ms() - k0;
        verify(clone);
        if (i >= 0) {
            theirs[i] = dt;
            cpu_git += dc;
        }
    }
    double mo, mt;
    fprintf(stderr, "bench_reset: %s\n", name);
    stats("ws_reset", ours, ITERS_OURS, &mo);
    stats("git cli", theirs, ITERS_GIT, &mt);
    fprintf(stderr, "bench_reset:   cpu per reset: ws_reset %.3f ms, git cli %.3f ms (children)\n",
            cpu_ours / ITERS_OURS, cpu_git / ITERS_GIT);
    printf("{\"bench\": \"%s\", \"value\": %.4f, \"unit\": \"ms\", "
           "\"baseline\": \"git reset --hard && git clean -fdx\", \"baseline_value\": %.4f, "
           "\"ratio\": %.2f}\n",
           name, mo, mt, mt / mo);
    fflush(stdout);
}

/* One file system: both sides work in a fresh folder under td. */
static void bench_fs(const char *td, const char *suffix)
{
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s/rl-bench-reset-XXXXXX", td);
    if (!mkdtemp(tmp))
        die("mkdtemp", td);
    fprintf(stderr, "bench_reset: work trees in %s\n", tmp);
    char repos[PATH_MAX], root[PATH_MAX], src[PATH_MAX], clone[PATH_MAX], err[RL_ERR_MAX];
    snprintf(repos, sizeof repos, "%s/repos", tmp);
    snprintf(root, sizeof root, "%s/ws", tmp);
    snprintf(src, sizeof src, "%s/repos/bench", tmp);
    snprintf(clone, sizeof clone, "%s/clone", tmp);
    make_files(src);
    make_files(clone);

    /* ours */
    ws_opts o;
    ws_opts_default(&o);
    o.root = root;
    o.repos_dir = repos;
    ws_tree *t = NULL;
    if (ws_open(&t, &o, "bench", "bench", NULL, 0, err))
        die("ws_open", err);

    /* baseline: a plain clone of the same files, git CLI as subprocesses */
    char cmd[PATH_MAX + 256];
    snprintf(cmd, sizeof cmd,
             "cd %s && git init -q && git add -A && git -c user.name=b -c user.email=b@b "
             "commit -qm init",
             clone);
    if (system(cmd) != 0)
        die("git init of the baseline clone", clone);

    char name[64];
    snprintf(name, sizeof name, "reset%s", suffix);
    bench_one(name, t, clone, 0);
    /* A deleted tracked file must be created again: a new inode, which
     * on a busy ext4 costs more than everything else together. */
    snprintf(name, sizeof name, "reset_with_delete%s", suffix);
    bench_one(name, t, clone, 1);
    ws_free(t);
    fs_remove_tree(tmp, err);
}

static int is_tmpfs(const char *path)
{
    struct statfs fs;
    return statfs(path, &fs) == 0 && fs.f_type == TMPFS_MAGIC;
}

/* First on the default workspace root's file system (in a folder of its
 * own inside the root), then on the other kind, each against the git CLI
 * on the same file system. */
int main(void)
{
    char err[RL_ERR_MAX];
    ws_opts o;
    ws_opts_default(&o);
    if (fs_mkdirs(o.root, err))
        die("default workspace root", err);
    int root_tmpfs = is_tmpfs(o.root);
    fprintf(stderr, "bench_reset: default workspace root %s (%s)\n", o.root,
            root_tmpfs ? "tmpfs" : "not tmpfs");
    bench_fs(o.root, "");
    const char *other = "/dev/shm";
    if (root_tmpfs) {
        other = getenv("TMPDIR");
        if (!other || !*other || strlen(other) > 256)
            other = "/tmp";
    }
    if (access(other, W_OK) == 0)
        bench_fs(other, is_tmpfs(other) ? "_tmpfs" : "_disk");
    for (int i = 0; i < NFILES; i++)
        free(g_content[i]);
    return 0;
}
