/* bench_startup.c - whole-process start-up: `harness exec -- /bin/true`
 * and `sbx -- /bin/true` (which `harness exec` executes) each against
 * bubblewrap's equivalent invocation, and `harness --help` against a bare
 * /bin/true, each pair
 * measured interleaved in the same run (paired). Prints one JSON line per
 * comparison: the median (ms) with the low decile, the baseline's, the
 * median of the paired differences. Without bwrap the sandbox lines have
 * baseline null and a reason (the commands still paired with /bin/true). RL_BENCH_STARTUP_ITERS=N runs N pairs
 * instead of 60. Binaries come from $RL_BIN (default bin). */
#include "common/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ITERS_MAX 1000
#define ITERS_DEFAULT 60
#define WARMUP 3

extern char **environ;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Runs argv (stdout and stderr to /dev/null) and returns its wall time in
 * ms, or -1 when it could not run or did not exit 0. */
static double run_ms(char *const *argv)
{
    double t = clk_ms();
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execve(argv[0], argv, environ);
        _exit(127);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
        return -1;
    return clk_ms() - t;
}

/* The path of bwrap in PATH into out, 0; -1 when there is none. */
static int find_bwrap(char *out, size_t n)
{
    const char *path = getenv("PATH");
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
    for (char *save = NULL, *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        snprintf(out, n, "%s/bwrap", d);
        if (access(out, X_OK) == 0)
            return 0;
    }
    return -1;
}

typedef struct stats {
    double med, p10, base_med, base_p10, pair_med;
} stats;

/* n interleaved pairs of a (measured) and b (baseline); -1 when one of
 * them failed (*which names it). */
static int paired(char *const *a, char *const *b, int n, stats *s, const char **which)
{
    static double va[ITERS_MAX], vb[ITERS_MAX], vd[ITERS_MAX];
    for (int i = 0; i < WARMUP + n; i++) {
        double x = run_ms(a), y = run_ms(b);
        if (x < 0 || y < 0) {
            *which = x < 0 ? a[0] : b[0];
            return -1;
        }
        if (i >= WARMUP) {
            va[i - WARMUP] = x;
            vb[i - WARMUP] = y;
            vd[i - WARMUP] = x - y;
        }
    }
    qsort(va, (size_t)n, sizeof va[0], cmp_double);
    qsort(vb, (size_t)n, sizeof vb[0], cmp_double);
    qsort(vd, (size_t)n, sizeof vd[0], cmp_double);
    *s = (stats){va[n / 2], va[n / 10], vb[n / 2], vb[n / 10], vd[n / 2]};
    return 0;
}

int main(void)
{
    const char *it = getenv("RL_BENCH_STARTUP_ITERS");
    int n = it ? atoi(it) : ITERS_DEFAULT;
    if (n < 8 || n > ITERS_MAX) {
        fprintf(stderr, "bench_startup: RL_BENCH_STARTUP_ITERS = %s: expected 8..%d\n", it, ITERS_MAX);
        return 2;
    }
    const char *bin = getenv("RL_BIN") && *getenv("RL_BIN") ? getenv("RL_BIN") : "bin";
    char sbx[4096], harness[4096], bwrap[4096];
    snprintf(sbx, sizeof sbx, "%s/sbx", bin);
    snprintf(harness, sizeof harness, "%s/harness", bin);
    char dir[] = "/tmp/rl-bench-startup-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("bench_startup: mkdtemp");
        return 1;
    }
    chmod(dir, 0755);

    /* `harness exec` (the small harness executing sbx) and sbx itself */
    char *exec_argv[] = {harness, "exec", "--dir", dir, "--", "/bin/true", NULL};
    char *sbx_argv[] = {sbx, "--dir", dir, "--", "/bin/true", NULL};
    char *const *measured[] = {exec_argv, sbx_argv};
    const char *names[] = {"startup_exec", "startup_sbx"};
    const char *which = NULL;
    stats s;
    int have_bwrap = find_bwrap(bwrap, sizeof bwrap) == 0;
    /* bubblewrap's equivalent: user, PID, network, IPC, UTS and mount
     * namespaces, read-only /usr, /lib*, /bin, /etc, a tmpfs /tmp, /dev and
     * /proc, the work dir writable. */
    char *bw_argv[48];
    int k = 0;
    const char *ro[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"};
    bw_argv[k++] = bwrap;
    bw_argv[k++] = "--unshare-all";
    for (size_t i = 0; i < sizeof ro / sizeof ro[0]; i++) {
        bw_argv[k++] = "--ro-bind-try";
        bw_argv[k++] = (char *)ro[i];
        bw_argv[k++] = (char *)ro[i];
    }
    char *rest[] = {"--tmpfs", "/tmp", "--dev", "/dev", "--proc", "/proc", "--bind", dir, dir,
                    "--chdir", dir, "--die-with-parent", "/bin/true"};
    for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++)
        bw_argv[k++] = rest[i];
    bw_argv[k] = NULL;
    char *true_argv[] = {"/bin/true", NULL};
    for (int m = 0; m < 2; m++) {
        if (paired(measured[m], have_bwrap ? bw_argv : true_argv, n, &s, &which)) {
            fprintf(stderr, "bench_startup: %s ... /bin/true failed\n", which);
            rmdir(dir);
            return 1;
        }
        if (have_bwrap)
            printf("{\"bench\": \"%s\", \"value\": %.4f, \"unit\": \"ms\", \"baseline\": \"bwrap_true\", "
                   "\"baseline_value\": %.4f, \"ratio\": %.4f, \"iters\": %d, \"p10\": %.4f, "
                   "\"baseline_p10\": %.4f, \"paired_median_diff_ms\": %.4f}\n",
                   names[m], s.med, s.base_med, s.base_med / s.med, n, s.p10, s.base_p10, s.pair_med);
        else
            printf("{\"bench\": \"%s\", \"value\": %.4f, \"unit\": \"ms\", \"baseline\": null, "
                   "\"baseline_value\": null, \"ratio\": null, \"iters\": %d, \"p10\": %.4f, "
                   "\"reason\": \"bwrap not found in PATH (Debian package bubblewrap)\"}\n",
                   names[m], s.med, n, s.p10);
    }
    rmdir(dir);

    char *help_argv[] = {harness, "--help", NULL};
    if (paired(help_argv, true_argv, n, &s, &which)) {
        fprintf(stderr, "bench_startup: %s failed\n", which);
        return 1;
    }
    printf("{\"bench\": \"startup_help\", \"value\": %.4f, \"unit\": \"ms\", \"baseline\": \"bare_true\", "
           "\"baseline_value\": %.4f, \"ratio\": %.4f, \"iters\": %d, \"p10\": %.4f, "
           "\"baseline_p10\": %.4f, \"paired_median_diff_ms\": %.4f}\n",
           s.med, s.base_med, s.base_med / s.med, n, s.p10, s.base_p10, s.pair_med);
    return 0;
}
