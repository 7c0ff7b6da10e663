/* cmd_sbx.c - the sandbox command: run one command in a directory under
 * the sandbox, pass its (capped) output through and exit with its status.
 *
 * Program code over the common and sandbox layers only, linked into `sbx`
 * (sandbox/main.c) and into the `harness` front as `harness exec`, so that
 * a sandboxed command started from a shell pays for loading nothing else.
 * Called with argv[0] = "harness exec", that is the name its usage and
 * messages give. */
#include "sandbox/sbx.h"

#include "common/err.h"
#include "common/limits.h"
#include "sandbox/sandbox.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The name in the usage and the messages: "sbx", or "harness exec". */
static const char *g_name = "sbx";

static void exec_usage(FILE *f)
{
    fprintf(f,
            "usage: %s --dir DIR [--timeout S] [--mem MB] [--procs N] [--fsize MB]\n"
            "%*s [--disk MB] [--json] -- CMD [ARGS...]\n"
            "\n"
            "Runs CMD in DIR under the sandbox (namespaces, seccomp, Landlock, limits) with a\n"
            "scrubbed environment, as if after `cd DIR` (CMD is looked up in the fixed PATH,\n"
            "or relative to DIR); stdout and stderr are captured together (head and tail\n"
            "kept) and printed when it ends.\n"
            "\n"
            "  --dir DIR     work directory, the only writable place besides a private TMPDIR\n"
            "  --timeout S   wall-clock limit in seconds (default %d)\n"
            "  --mem MB      address-space limit of each process, and (where the sandbox has\n"
            "                cgroups) about the memory of the whole process tree (default %d)\n"
            "  --procs N     processes and threads of the whole tree (default %d)\n"
            "  --fsize MB    largest file it may write (default %d)\n"
            "  --disk MB     what it may add to DIR as a whole: its writes go to a layer of\n"
            "                this size, carried back into DIR when it ends (default: no bound)\n"
            "  --json        print the result record to stderr as one JSON line at the end\n"
            "\n"
            "Exit status: CMD's own, 124 on timeout, 128+N when killed by signal N,\n"
            "125 when the sandbox itself failed, 2 on a usage error.\n",
            g_name, (int)strlen("usage: ") + (int)strlen(g_name), "", SB_TIMEOUT_MS_DEFAULT / 1000, SB_MEM_MB_DEFAULT, SB_PROCS_DEFAULT, SB_FSIZE_MB_DEFAULT);
}

static int exec_bad(const char *fmt, const char *arg)
{
    fprintf(stderr, "%s: ", g_name);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see '%s --help')\n", g_name);
    return 2;
}

/* A positive number no larger than max. */
static int exec_num(const char *s, double max, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v > 0) || v > max)
        return -1;
    *out = v;
    return 0;
}

typedef struct exec_args {
    const char *dir;
    int json;
    sb_opts o;
} exec_args;

/* Parses the flags; returns -1 to continue, else the exit code. */
static int exec_parse(exec_args *a, int argc, char **argv, int *cmd_at)
{
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i];
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
            exec_usage(stdout);
            return 0;
        }
        if (!strcmp(f, "--")) {
            *cmd_at = i + 1;
            return -1;
        }
        if (f[0] != '-') {
            *cmd_at = i;
            return -1;
        }
        if (!strcmp(f, "--json")) {
            a->json = 1;
            continue;
        }
        if (i + 1 >= argc)
            return exec_bad("%s: expected a value", f);
        const char *v = argv[++i];
        double x;
        sb_limits *l = &a->o.lim;
        if (!strcmp(f, "--dir")) {
            a->dir = v;
        } else if (!strcmp(f, "--timeout")) {
            if (exec_num(v, SB_TIMEOUT_MS_HARD / 1000.0, &x))
                return exec_bad("--timeout %s: expected seconds, > 0 and at most 3600", v);
            l->timeout_ms = (int)(x * 1000 + 0.5) > 0 ? (int)(x * 1000 + 0.5) : 1;
            if (l->cpu_ms < l->timeout_ms)
                l->cpu_ms = l->timeout_ms;
        } else if (!strcmp(f, "--mem")) {
            if (exec_num(v, (double)SB_MEM_MB_HARD, &x) || x < 16)
                return exec_bad("--mem %s: expected megabytes, 16 to 65536", v);
            l->mem_mb = (long)x;
        } else if (!strcmp(f, "--procs")) {
            if (exec_num(v, SB_PROCS_HARD, &x))
                return exec_bad("--procs %s: expected a count, 1 to 4096", v);
            l->procs = (int)x;
        } else if (!strcmp(f, "--disk")) {
            if (exec_num(v, (double)SB_DISK_MB_HARD, &x))
                return exec_bad("--disk %s: expected megabytes, > 0 and at most 16384", v);
            l->disk_mb = (long)x;
        } else if (!strcmp(f, "--fsize")) {
            if (exec_num(v, (double)SB_FSIZE_MB_HARD, &x))
                return exec_bad("--fsize %s: expected megabytes, > 0 and at most 16384", v);
            l->fsize_mb = (long)x;
        } else {
            return exec_bad("unknown flag '%s'", f);
        }
    }
    *cmd_at = argc;
    return -1;
}

int sbx_main(int argc, char **argv)
{
    if (argc > 0 && !strcmp(argv[0], "harness exec"))
        g_name = argv[0];
    exec_args a;
    memset(&a, 0, sizeof a);
    sb_opts_default(&a.o);
    int cmd_at = argc;
    int rc = exec_parse(&a, argc, argv, &cmd_at);
    if (rc >= 0)
        return rc;
    if (!a.dir)
        return exec_bad("%s", "--dir DIR is required");
    if (cmd_at >= argc)
        return exec_bad("%s", "expected a command after --");
    a.o.dir = a.dir;
    a.o.argv = (const char *const *)(argv + cmd_at);

    char err[RL_ERR_MAX] = "";
    sb_result res;
    rc = sb_run(&res, &a.o, err);
    fflush(stdout);
    if (res.out_len)
        fwrite(res.out, 1, res.out_len, stdout);
    fflush(stdout);
    if (rc)
        fprintf(stderr, "%s: %s\n", g_name, err);
    else if (res.stop == SB_STOP_SETUP)
        fprintf(stderr, "%s: %s\n", g_name, res.reason); /* not found, not executable */
    if (a.json) {
        char *j = sb_result_json(&res);
        if (j)
            fprintf(stderr, "%s\n", j);
        free(j);
    }
    int status = rc ? 125 : sb_result_status(&res);
    sb_result_dispose(&res);
    return status;
}
