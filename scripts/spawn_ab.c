/* spawn_ab.c - two builds of the sandbox compared in one process (see
 * scripts/spawn-ab.sh). bench_spawn runs one build per process; on a
 * machine shared with a CPU-bound job the load changes from one second to
 * the next, more than the builds differ. Here both builds (shared
 * libraries, each with its own spares) run in the same loop: every
 * iteration times a bare fork + exec + waitpid of /bin/true and a
 * sandboxed one for each build, alternating which build goes first, and
 * counts the CPU time (ours and our reaped children's) each step costs.
 *
 * usage: spawn_ab LIB_A LIB_B [PAIRS]   (prints a few lines of figures) */
#include "sandbox/sandbox.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct build {
    const char *name;
    void (*opts_default)(sb_opts *);
    int (*run)(sb_result *, const sb_opts *, char *);
    void (*result_free)(sb_result *);
    double *bare, *sand, *pair, cpu;
} build;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static double cpu_ms(void)
{
    struct rusage a, b;
    getrusage(RUSAGE_SELF, &a);
    getrusage(RUSAGE_CHILDREN, &b);
    return (a.ru_utime.tv_sec + a.ru_stime.tv_sec + b.ru_utime.tv_sec + b.ru_stime.tv_sec) * 1e3 +
           (a.ru_utime.tv_usec + a.ru_stime.tv_usec + b.ru_utime.tv_usec + b.ru_stime.tv_usec) / 1e3;
}

static double bare_true(double *cpu)
{
    double c = cpu_ms(), t = now_ms();
    pid_t pid = fork();
    if (pid == 0) {
        char *argv[] = {"/bin/true", NULL};
        char *envp[] = {NULL};
        execve(argv[0], argv, envp);
        _exit(127);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
        fprintf(stderr, "spawn_ab: bare /bin/true failed\n");
        exit(1);
    }
    double dt = now_ms() - t;
    *cpu += cpu_ms() - c;
    return dt;
}

static double sandboxed_true(build *b, const char *dir)
{
    const char *argv[] = {"/bin/true", NULL};
    sb_opts o;
    b->opts_default(&o);
    o.argv = argv;
    o.dir = dir;
    sb_result r;
    char err[256];
    double c = cpu_ms(), t = now_ms();
    int rc = b->run(&r, &o, err);
    double dt = now_ms() - t;
    b->cpu += cpu_ms() - c;
    if (rc || r.stop != SB_STOP_EXIT || r.exit_code) {
        fprintf(stderr, "spawn_ab: %s: sandboxed /bin/true failed: %s\n", b->name, rc ? err : r.reason);
        exit(1);
    }
    b->result_free(&r);
    return dt;
}

static void load(build *b, const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "spawn_ab: %s\n", dlerror());
        exit(2);
    }
    b->name = path;
    *(void **)&b->opts_default = dlsym(h, "sb_opts_default");
    *(void **)&b->run = dlsym(h, "sb_run");
    *(void **)&b->result_free = dlsym(h, "sb_result_dispose");
    if (!b->opts_default || !b->run || !b->result_free) {
        fprintf(stderr, "spawn_ab: %s: not a sandbox build\n", path);
        exit(2);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double quantile(double *v, int n, double f)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[(int)(f * (n - 1))];
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: spawn_ab LIB_A LIB_B [PAIRS]\n");
        return 2;
    }
    int n = argc > 3 ? atoi(argv[3]) : 400;
    if (n < 10) {
        fprintf(stderr, "spawn_ab: PAIRS = %s: expected at least 10\n", argv[3]);
        return 2;
    }
    build bs[2];
    memset(bs, 0, sizeof bs);
    load(&bs[0], argv[1]);
    load(&bs[1], argv[2]);
    for (int k = 0; k < 2; k++) {
        bs[k].bare = calloc((size_t)n, sizeof(double));
        bs[k].sand = calloc((size_t)n, sizeof(double));
        bs[k].pair = calloc((size_t)n, sizeof(double));
        if (!bs[k].bare || !bs[k].sand || !bs[k].pair)
            return 1;
    }
    char dir[] = "/tmp/rl-spawn-ab-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("spawn_ab: mkdtemp");
        return 1;
    }
    chmod(dir, 0755);
    double bare_cpu = 0;
    for (int i = 0; i < 20; i++)
        for (int k = 0; k < 2; k++) {
            bare_true(&bare_cpu);
            sandboxed_true(&bs[k], dir);
        }
    bare_cpu = bs[0].cpu = bs[1].cpu = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < 2; j++) {
            build *b = &bs[(i + j) % 2];
            b->bare[i] = bare_true(&bare_cpu);
            b->sand[i] = sandboxed_true(b, dir);
            b->pair[i] = b->sand[i] - b->bare[i];
        }
    rmdir(dir);
    printf("%d pairs per build; ms; overhead_p10 = p10(sandboxed) - p10(bare)\n", n);
    for (int k = 0; k < 2; k++) {
        build *b = &bs[k];
        double s10 = quantile(b->sand, n, 0.1), b10 = quantile(b->bare, n, 0.1);
        printf("%s: paired median %.3f (p25 %.3f, p75 %.3f) | sandboxed median %.3f p10 %.3f | "
               "bare median %.3f p10 %.3f | overhead_p10 %.3f | cpu per spawn %.3f (bare %.3f)\n",
               b->name, quantile(b->pair, n, 0.5), quantile(b->pair, n, 0.25),
               quantile(b->pair, n, 0.75), quantile(b->sand, n, 0.5), s10,
               quantile(b->bare, n, 0.5), b10, s10 - b10, b->cpu / n, bare_cpu / (2 * n));
    }
    return 0;
}
