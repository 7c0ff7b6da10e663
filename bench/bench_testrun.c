/* bench_testrun.c - a real test command (compile and run a small C
 * project) sandboxed against the same command run bare (fork + exec,
 * output read through a pipe), interleaved in the same run. The project is
 * a copy of repos/leapyear when it exists (`make -s test`), else a small
 * two-file program written here (`gcc` twice, link, run the tests).
 * Prints the median wall time per run (ms); target overhead <= 10%. */
#include "sandbox/sandbox.h"

#include "common/err.h"
#include "common/fsutil.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ITERS 25

static const char *LIB_C =
    "int is_leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }\n"
    "int days_in_month(int y, int m) {\n"
    "    static const int d[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};\n"
    "    return m == 2 && is_leap(y) ? 29 : d[m - 1];\n"
    "}\n";
static const char *TEST_C =
    "#include <stdio.h>\n"
    "int is_leap(int y);\n"
    "int days_in_month(int y, int m);\n"
    "static int fails;\n"
    "#define CHECK(c) do { if (!(c)) { printf(\"FAIL %s\\n\", #c); fails++; } "
    "else printf(\"PASS %s\\n\", #c); } while (0)\n"
    "int main(void) {\n"
    "    CHECK(is_leap(2000)); CHECK(!is_leap(1900)); CHECK(is_leap(2024));\n"
    "    CHECK(!is_leap(2023)); CHECK(days_in_month(2024, 2) == 29);\n"
    "    CHECK(days_in_month(2023, 2) == 28); CHECK(days_in_month(2023, 12) == 31);\n"
    "    return fails != 0;\n"
    "}\n";
static const char *CMD_GCC =
    "rm -f *.o t && gcc -O1 -c lib.c && gcc -O1 -c test.c && gcc -o t lib.o test.o && ./t";
static const char *CMD_MAKE = "make -s clean >/dev/null 2>&1; make -s test";

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_testrun: %s\n", what);
    exit(1);
}

/* The same environment the sandbox gives, so that only isolation differs. */
static double bare_run(const char *dir, const char *cmd)
{
    char home[4200];
    snprintf(home, sizeof home, "HOME=%s", dir);
    char *envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", home, "TMPDIR=/tmp", "TZ=UTC",
                    "LC_ALL=C.UTF-8", "LANG=C.UTF-8", NULL};
    char *argv[] = {"/bin/sh", "-c", (char *)cmd, NULL};
    int p[2];
    if (pipe(p))
        die("pipe");
    double t = now_ms();
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 1);
        dup2(p[1], 2);
        close(p[0]);
        close(p[1]);
        if (chdir(dir))
            _exit(126);
        execve(argv[0], argv, envp);
        _exit(127);
    }
    close(p[1]);
    char buf[4096];
    while (read(p[0], buf, sizeof buf) > 0)
        ;
    close(p[0]);
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
        die("the bare test run failed");
    return now_ms() - t;
}

static double sandboxed_run(const char *dir, const char *cmd)
{
    const char *argv[] = {"/bin/sh", "-c", cmd, NULL};
    sb_opts o;
    sb_opts_default(&o);
    o.argv = argv;
    o.dir = dir;
    sb_result r;
    char err[RL_ERR_MAX];
    double t = now_ms();
    int rc = sb_run(&r, &o, err);
    double dt = now_ms() - t;
    if (rc || r.stop != SB_STOP_EXIT || r.exit_code) {
        fprintf(stderr, "bench_testrun: sandboxed run failed: %s\n%s\n", rc ? err : r.reason, r.out);
        exit(1);
    }
    sb_result_dispose(&r);
    return dt;
}

static void copy_tree(const char *from, const char *to)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/cp", "cp", "-a", from, to, (char *)NULL);
        _exit(127);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
        die("cp -a of repos/leapyear failed");
}

int main(void)
{
    char dir[] = "/tmp/rl-bench-testrun-XXXXXX";
    if (!mkdtemp(dir))
        die("mkdtemp");
    chmod(dir, 0755);
    char path[4200];
    const char *cmd, *name;
    if (fs_is_dir("repos/leapyear") && access("repos/leapyear/Makefile", R_OK) == 0) {
        snprintf(path, sizeof path, "%s/leapyear", dir);
        copy_tree("repos/leapyear", path);
        cmd = CMD_MAKE;
        name = "testrun_leapyear_make_test";
    } else {
        snprintf(path, sizeof path, "%s/lib.c", dir);
        if (fs_write_atomic(path, LIB_C, strlen(LIB_C), NULL))
            die("write lib.c");
        snprintf(path, sizeof path, "%s/test.c", dir);
        if (fs_write_atomic(path, TEST_C, strlen(TEST_C), NULL))
            die("write test.c");
        snprintf(path, sizeof path, "%s", dir);
        cmd = CMD_GCC;
        name = "testrun_gcc_compile_and_test";
    }
    static double bare[ITERS], sand[ITERS], pair[ITERS];
    bare_run(path, cmd); /* warm the page cache */
    sandboxed_run(path, cmd);
    for (int i = 0; i < ITERS; i++) {
        bare[i] = bare_run(path, cmd);
        sand[i] = sandboxed_run(path, cmd);
        pair[i] = 100.0 * (sand[i] - bare[i]) / bare[i];
    }
    fs_remove_tree(dir, NULL);
    qsort(bare, ITERS, sizeof bare[0], cmp_double);
    qsort(sand, ITERS, sizeof sand[0], cmp_double);
    /* Runs are interleaved: the median of the pairwise overheads is less
     * sensitive to the load of a shared machine than the ratio of medians. */
    qsort(pair, ITERS, sizeof pair[0], cmp_double);
    double b = bare[ITERS / 2], s = sand[ITERS / 2];
    printf("{\"bench\": \"%s\", \"value\": %.3f, \"unit\": \"ms\", \"baseline\": \"bare_fork_exec\", "
           "\"baseline_value\": %.3f, \"ratio\": %.4f, \"overhead_pct\": %.2f, "
           "\"overhead_pct_paired_median\": %.2f, \"iters\": %d}\n",
           name, s, b, b / s, 100.0 * (s - b) / b, pair[ITERS / 2], ITERS);
    return 0;
}
