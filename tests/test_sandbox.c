/* test_sandbox.c - the sandbox: unit tests of the result record, options,
 * environment and limits, the `harness exec` CLI, and an adversarial suite
 * that runs hostile programs (tests/progs/) under tight limits and checks
 * that they are contained, that nothing they started survives, that
 * nothing was written outside the work dir and that the test process (the
 * "harness") is still alive. */
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "sandbox/sandbox.h"

#include <arpa/inet.h>
#include <check.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- fixture ------------------------------------------------------------ */

/* Each test gets a parent dir P (0755) holding the work dir W = P/work, so
 * that "../" escapes have somewhere to land and be noticed. */
static char g_parent[64];
static char g_work[96];

static void fx_setup(void)
{
    snprintf(g_parent, sizeof g_parent, "/tmp/rl-sbt-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(g_parent));
    ck_assert_int_eq(chmod(g_parent, 0755), 0);
    snprintf(g_work, sizeof g_work, "%s/work", g_parent);
    ck_assert_int_eq(mkdir(g_work, 0755), 0);
    /* Anything the sandbox leaks becomes our child, so we can see it. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
}

static void fx_teardown(void)
{
    fs_remove_tree(g_parent, NULL);
}

/* A helper program, copied into the work dir: the command sees nothing
 * of the host but the system directories and its work dir (the project's
 * checkout, build/ included, is hidden). */
static const char *prog(const char *name)
{
    static char path[8][PATH_MAX];
    static int next;
    char rel[PATH_MAX], src[PATH_MAX];
    const char *build = getenv("RL_BUILD") ? getenv("RL_BUILD") : "build";
    snprintf(rel, sizeof rel, "%s/progs/%s", build, name);
    ck_assert_msg(realpath(rel, src) != NULL, "helper program %s missing (make builds it)", rel);
    char *p = path[next++ % 8];
    snprintf(p, PATH_MAX, "%s/%s", g_work, name);
    size_t len = 0;
    char *data = NULL;
    ck_assert_int_eq(fs_read_file(&data, &len, src, 64u << 20, NULL), 0);
    FILE *f = fopen(p, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
    free(data);
    ck_assert_int_eq(chmod(p, 0755), 0);
    return p;
}

static void lim_tight(sb_limits *l)
{
    sb_limits_default(l);
    l->timeout_ms = 3000;
    l->cpu_ms = 3000;
    l->mem_mb = 256;
    l->procs = 32;
    l->fsize_mb = 4;
    l->out_max = 64 << 10;
    l->flood_max = 1 << 20;
}

/* Runs argv in the work dir with the given limits (NULL: tight ones). */
static int run_in(sb_result *r, const char *dir, const sb_limits *lim, const char *const *argv)
{
    sb_opts o;
    sb_opts_default(&o);
    if (lim)
        o.lim = *lim;
    else
        lim_tight(&o.lim);
    o.argv = argv;
    o.dir = dir;
    char err[RL_ERR_MAX] = "";
    int rc = sb_run(r, &o, err);
    ck_assert_msg(rc == 0, "sb_run: %s", err);
    return rc;
}

static void run_sh(sb_result *r, const sb_limits *lim, const char *script)
{
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    run_in(r, g_work, lim, argv);
}

static int path_exists(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0;
}

/* Processes whose parent is us (we are a subreaper: escaped descendants of
 * a sandboxed command would land here), except `except`. */
static int stray_children(pid_t except)
{
    sb_release(); /* the idle sandbox kept for the next run is ours */
    DIR *d = opendir("/proc");
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        pid_t pid = atoi(e->d_name);
        if (pid <= 0 || pid == except)
            continue;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%d/stat", pid);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = '\0';
        const char *rp = strrchr(buf, ')');
        int ppid = 0;
        if (rp && sscanf(rp + 2, "%*c %d", &ppid) == 1 && ppid == getpid())
            n++;
    }
    closedir(d);
    return n;
}

/* Pids of our direct children (at most max); live ones only (not
 * zombies) with live. */
static int our_children_st(pid_t *out, int max, int live)
{
    DIR *d = opendir("/proc");
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        pid_t pid = atoi(e->d_name);
        if (pid <= 0)
            continue;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%d/stat", pid);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = '\0';
        const char *rp = strrchr(buf, ')');
        int ppid = 0;
        char state = 0;
        if (rp && sscanf(rp + 2, "%c %d", &state, &ppid) == 2 && ppid == getpid() &&
            (!live || state != 'Z'))
            out[n++] = pid;
    }
    closedir(d);
    return n;
}

static int our_children(pid_t *out, int max) { return our_children_st(out, max, 0); }

/* The init of this thread's spare sandbox: our one live child once the
 * inits of finished runs (reaped by the next run or sb_release) have
 * become zombies; -1 if there is not exactly one after a second. */
static pid_t spare_init(void)
{
    pid_t kids[8];
    for (int i = 0; i < 100; i++) {
        if (our_children_st(kids, 8, 1) == 1)
            return kids[0];
        usleep(10 * 1000);
    }
    return -1;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* ---- unit: options and results -------------------------------------------- */

START_TEST(test_defaults)
{
    sb_opts o;
    memset(&o, 0x7f, sizeof o);
    sb_opts_default(&o);
    ck_assert_ptr_null(o.argv);
    ck_assert_ptr_null(o.dir);
    ck_assert_ptr_null(o.env);
    ck_assert_ptr_null(o.stdin_data);
    ck_assert_int_eq(o.lim.timeout_ms, SB_TIMEOUT_MS_DEFAULT);
    ck_assert_int_eq(o.lim.procs, SB_PROCS_DEFAULT);
    ck_assert_int_eq(o.lim.mem_mb, SB_MEM_MB_DEFAULT);
    ck_assert_uint_eq(o.lim.out_max, SB_OUT_MAX_DEFAULT);
    ck_assert_uint_eq(o.lim.flood_max, SB_FLOOD_MAX_DEFAULT);
}
END_TEST

START_TEST(test_bad_options)
{
    const char *argv[] = {"/bin/true", NULL};
    const char *empty[] = {NULL};
    const char *badenv[] = {"NOEQUALS", NULL};
    const char *relrw[] = {"relative/dir", NULL};
    struct {
        const char *const *argv;
        const char *dir;
        int timeout_ms;
        const char *const *env;
        const char *const *rw;
        int want;
    } cases[] = {
        {NULL, g_work, 1000, NULL, NULL, RL_EINVAL},
        {empty, g_work, 1000, NULL, NULL, RL_EINVAL},
        {argv, NULL, 1000, NULL, NULL, RL_EINVAL},
        {argv, g_work, 0, NULL, NULL, RL_EINVAL},
        {argv, g_work, SB_TIMEOUT_MS_HARD + 1, NULL, NULL, RL_EINVAL},
        {argv, g_work, 1000, badenv, NULL, RL_EINVAL},
        {argv, g_work, 1000, NULL, relrw, RL_EINVAL},
        {argv, "/nonexistent/rl-sandbox-dir", 1000, NULL, NULL, RL_ENOENT},
        {argv, "/etc/hostname", 1000, NULL, NULL, RL_EINVAL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sb_opts o;
        sb_opts_default(&o);
        o.argv = cases[i].argv;
        o.dir = cases[i].dir;
        o.lim.timeout_ms = cases[i].timeout_ms;
        o.env = cases[i].env;
        o.rw_paths = cases[i].rw;
        sb_result r;
        char err[RL_ERR_MAX] = "";
        int rc = sb_run(&r, &o, err);
        ck_assert_msg(rc == cases[i].want, "case %zu: rc %d, want %d (%s)", i, rc, cases[i].want, err);
        ck_assert_msg(err[0] && !strchr(err, '\n'), "case %zu: expected a one-line error", i);
        ck_assert_int_eq(r.stop, SB_STOP_SETUP);
        sb_result_dispose(&r);
    }
    /* stdin larger than the cap */
    sb_opts o;
    sb_opts_default(&o);
    o.argv = argv;
    o.dir = g_work;
    o.stdin_data = "x";
    o.stdin_len = SB_STDIN_MAX + 1;
    sb_result r;
    char err[RL_ERR_MAX];
    ck_assert_int_eq(sb_run(&r, &o, err), RL_ELIMIT);
    sb_result_dispose(&r);
}
END_TEST

START_TEST(test_status_mapping)
{
    sb_result r;
    memset(&r, 0, sizeof r);
    r.stop = SB_STOP_EXIT;
    r.exit_code = 3;
    ck_assert_int_eq(sb_result_status(&r), 3);
    r.stop = SB_STOP_TIMEOUT;
    r.timed_out = 1;
    r.signal = SIGKILL;
    ck_assert_int_eq(sb_result_status(&r), 124);
    r.timed_out = 0;
    r.stop = SB_STOP_SIGNAL;
    r.signal = SIGSEGV;
    ck_assert_int_eq(sb_result_status(&r), 128 + SIGSEGV);
    r.signal = 0;
    r.stop = SB_STOP_SETUP;
    r.exit_code = 127;
    ck_assert_int_eq(sb_result_status(&r), 127);
    r.exit_code = -1;
    ck_assert_int_eq(sb_result_status(&r), 125);
}
END_TEST

START_TEST(test_layers_str)
{
    char s[128];
    sb_layers_str(0, s, sizeof s);
    ck_assert_str_eq(s, "");
    sb_layers_str(SB_LAYER_USERNS | SB_LAYER_SECCOMP | SB_LAYER_CGROUP, s, sizeof s);
    ck_assert_str_eq(s, "userns,seccomp,cgroup");
    char small[10];
    sb_layers_str(SB_LAYER_USERNS | SB_LAYER_PIDNS | SB_LAYER_SECCOMP, small, sizeof small);
    ck_assert_uint_lt(strlen(small), sizeof small); /* cut, still a string */
    unsigned avail = sb_layers_available();
    ck_assert(avail & SB_LAYER_RLIMITS);
    ck_assert_uint_eq(avail, sb_layers_available()); /* cached */
}
END_TEST

START_TEST(test_json_record)
{
    sb_result r;
    memset(&r, 0, sizeof r);
    r.stop = SB_STOP_SIGNAL;
    r.signal = SIGABRT;
    r.exit_code = -1;
    r.wall_ms = 12;
    r.cpu_ms = 7;
    r.peak_rss_kb = 2048;
    r.out_bytes = 99;
    r.out_truncated = 1;
    r.layers = SB_LAYER_PIDNS | SB_LAYER_LANDLOCK;
    snprintf(r.reason, sizeof r.reason, "quote \" backslash \\ newline \n bytes \xc3\xa9");
    char *j = sb_result_json(&r);
    ck_assert_ptr_nonnull(j);
    ck_assert_ptr_null(strchr(j, '\n'));
    cJSON *o = cJSON_Parse(j);
    ck_assert_ptr_nonnull(o);
    ck_assert_str_eq(cJSON_GetObjectItem(o, "stop")->valuestring, "signal");
    ck_assert_int_eq(cJSON_GetObjectItem(o, "signal")->valueint, SIGABRT);
    ck_assert_int_eq(cJSON_GetObjectItem(o, "status")->valueint, 128 + SIGABRT);
    ck_assert_int_eq(cJSON_GetObjectItem(o, "wall_ms")->valueint, 12);
    ck_assert_int_eq(cJSON_GetObjectItem(o, "cpu_ms")->valueint, 7);
    ck_assert_int_eq(cJSON_GetObjectItem(o, "peak_rss_kb")->valueint, 2048);
    ck_assert_int_eq(cJSON_GetObjectItem(o, "out_bytes")->valueint, 99);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(o, "out_truncated")));
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(o, "timed_out")));
    const char *reason = cJSON_GetObjectItem(o, "reason")->valuestring;
    ck_assert_ptr_nonnull(strstr(reason, "quote \" backslash \\"));
    for (const char *p = reason; *p; p++) /* plain printable ASCII */
        ck_assert((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f);
    cJSON *layers = cJSON_GetObjectItem(o, "layers");
    ck_assert_int_eq(cJSON_GetArraySize(layers), 2);
    ck_assert_str_eq(cJSON_GetArrayItem(layers, 0)->valuestring, "pidns");
    ck_assert_str_eq(cJSON_GetArrayItem(layers, 1)->valuestring, "landlock");
    cJSON_Delete(o);
    free(j);
}
END_TEST

/* ---- unit: running commands ------------------------------------------------ */

START_TEST(test_exit_codes)
{
    sb_result r;
    run_sh(&r, NULL, "exit 3");
    ck_assert_int_eq(r.stop, SB_STOP_EXIT);
    ck_assert_int_eq(r.exit_code, 3);
    ck_assert_int_eq(r.signal, 0);
    ck_assert_int_eq(sb_result_status(&r), 3);
    ck_assert_uint_eq(r.layers, sb_layers_available());
    sb_result_dispose(&r);

    run_sh(&r, NULL, "kill -SEGV $$");
    ck_assert_int_eq(r.stop, SB_STOP_SIGNAL);
    ck_assert_int_eq(r.signal, SIGSEGV);
    ck_assert_int_eq(sb_result_status(&r), 128 + SIGSEGV);
    ck_assert_ptr_nonnull(strstr(r.reason, "signal 11"));
    sb_result_dispose(&r);

    const char *missing[] = {"rl-no-such-command-xyz", NULL};
    run_in(&r, g_work, NULL, missing);
    ck_assert_int_eq(r.stop, SB_STOP_SETUP);
    ck_assert_int_eq(sb_result_status(&r), 127);
    ck_assert_ptr_nonnull(strstr(r.reason, "not found"));
    ck_assert_ptr_nonnull(r.out);
    sb_result_dispose(&r);

    /* Found but not executable: exec fails inside, reported as 126. */
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/noexec.sh", g_work);
    ck_assert_int_eq(fs_write_atomic(path, "#!/bin/sh\n", 10, NULL), 0);
    chmod(path, 0644);
    const char *noexec[] = {path, NULL};
    run_in(&r, g_work, NULL, noexec);
    ck_assert_int_eq(r.stop, SB_STOP_SETUP);
    ck_assert_int_eq(r.exit_code, 126);
    sb_result_dispose(&r);
}
END_TEST

START_TEST(test_output_and_stdin)
{
    sb_result r;
    run_sh(&r, NULL, "echo out; echo err >&2; echo out2");
    ck_assert_str_eq(r.out, "out\nerr\nout2\n");
    ck_assert_uint_eq(r.out_len, 13);
    ck_assert_uint_eq(r.out_bytes, 13);
    ck_assert_int_eq(r.out_truncated, 0);
    sb_result_dispose(&r);

    /* stdin is /dev/null by default */
    run_sh(&r, NULL, "cat; echo end");
    ck_assert_str_eq(r.out, "end\n");
    sb_result_dispose(&r);

    static char big[200000];
    memset(big, 'a', sizeof big);
    sb_opts o;
    sb_opts_default(&o);
    const char *argv[] = {"/usr/bin/wc", "-c", NULL};
    o.argv = argv;
    o.dir = g_work;
    o.stdin_data = big;
    o.stdin_len = sizeof big;
    char err[RL_ERR_MAX];
    ck_assert_int_eq(sb_run(&r, &o, err), 0);
    ck_assert_str_eq(r.out, "200000\n");
    sb_result_dispose(&r);
}
END_TEST

START_TEST(test_output_cap)
{
    sb_limits l;
    lim_tight(&l);
    l.out_max = 1000;
    sb_result r;
    const char *argv[] = {prog("flood"), "300000", NULL};
    run_in(&r, g_work, &l, argv);
    ck_assert_int_eq(r.stop, SB_STOP_EXIT);
    ck_assert_uint_eq(r.out_bytes, 300000);
    ck_assert_int_eq(r.out_truncated, 1);
    ck_assert_uint_le(r.out_len, 1000 + 64);
    ck_assert_ptr_nonnull(strstr(r.out, "bytes cut"));
    ck_assert_uint_eq(strlen(r.out), r.out_len);
    /* head and tail are the real first and last bytes */
    ck_assert_int_eq(strncmp(r.out, "yyyy", 4), 0);
    ck_assert_int_eq(r.out[r.out_len - 1], 'y');
    sb_result_dispose(&r);
}
END_TEST

START_TEST(test_environment)
{
    setenv("RL_CALLER_ONLY", "leak", 1);
    sb_opts o;
    sb_opts_default(&o);
    const char *argv[] = {"/usr/bin/env", NULL};
    const char *extra[] = {"EXTRA=1", "TZ=Europe/Paris", NULL};
    o.argv = argv;
    o.dir = g_work;
    o.env = extra;
    sb_result r;
    char err[RL_ERR_MAX];
    ck_assert_int_eq(sb_run(&r, &o, err), 0);
    const char *want[] = {
        "PATH=/usr/local/bin:/usr/bin:/bin", "TZ=Europe/Paris", "LC_ALL=C.UTF-8", "LANG=C.UTF-8",
        "PYTHONHASHSEED=0", "PYTHONDONTWRITEBYTECODE=1", "PYTHONNOUSERSITE=1", "PYTHONSAFEPATH=1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1",
        "SOURCE_DATE_EPOCH=" SB_SOURCE_DATE_EPOCH, "USER=sandbox", "LOGNAME=sandbox", "EXTRA=1",
    };
    int lines = 0;
    for (const char *p = r.out; *p; p++)
        lines += *p == '\n';
    /* + HOME, TMPDIR, TEMP, TMP, PYTHONPYCACHEPREFIX */
    ck_assert_int_eq(lines, (int)(sizeof want / sizeof want[0]) + 5);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(r.out, want[i]), "missing %s in:\n%s", want[i], r.out);
    /* HOME is the private TMPDIR, outside the work tree. */
    ck_assert_ptr_nonnull(strstr(r.out, "HOME=/"));
    ck_assert_ptr_null(strstr(r.out, "HOME=/tmp/rl-sbt"));
    const char *h = strstr(r.out, "HOME="), *t = strstr(r.out, "TMPDIR=");
    ck_assert(h && t && strcspn(h + 5, "\n") == strcspn(t + 7, "\n") &&
              !strncmp(h + 5, t + 7, strcspn(t + 7, "\n")));
    ck_assert_ptr_nonnull(strstr(r.out, "TMPDIR=/"));
    ck_assert_ptr_nonnull(strstr(r.out, "TEMP=/"));
    ck_assert_ptr_nonnull(strstr(r.out, "TMP=/"));
    ck_assert_ptr_nonnull(strstr(r.out, "PYTHONPYCACHEPREFIX=/"));
    ck_assert_ptr_null(strstr(r.out, "RL_CALLER_ONLY"));
    ck_assert_ptr_null(strstr(r.out, "TZ=UTC"));
    sb_result_dispose(&r);
}
END_TEST

START_TEST(test_cwd_tmp_hostname)
{
    sb_result r;
    /* (The work dir lies below the host's /tmp: its path is made in the
     * private one, which holds nothing else of the host's.) */
    run_sh(&r, NULL,
           "pwd; hostname; touch \"$TMPDIR/t\" && echo tmp-ok; ls -A \"$TMPDIR\" | grep -v '^rl-sbt-'; "
           "echo data > made.txt && echo work-ok; echo shm > /dev/shm/s && cat /dev/shm/s");
    char want[PATH_MAX + 64];
    snprintf(want, sizeof want, "%s\nsandbox\ntmp-ok\nt\nwork-ok\nshm\n", g_work);
    ck_assert_str_eq(r.out, want);
    sb_result_dispose(&r);
    /* The file the command made is in the work dir, owned on disk like the
     * dir itself; the temp dir starts empty again. */
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/made.txt", g_work);
    struct stat st, dir;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(stat(g_work, &dir), 0);
    ck_assert_int_eq(st.st_uid, dir.st_uid);
    run_sh(&r, NULL, "ls -A \"$TMPDIR\" | grep -v '^rl-sbt-' | wc -l");
    ck_assert_str_eq(r.out, "0\n");
    sb_result_dispose(&r);
}
END_TEST

START_TEST(test_rw_paths)
{
    char extra[PATH_MAX];
    snprintf(extra, sizeof extra, "%s/extra", g_parent);
    ck_assert_int_eq(mkdir(extra, 0755), 0);
    sb_opts o;
    sb_opts_default(&o);
    char script[PATH_MAX + 64];
    snprintf(script, sizeof script, "echo x > %s/f && echo ok; echo y > ../other || echo denied", extra);
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    const char *rw[] = {extra, NULL};
    o.argv = argv;
    o.dir = g_work;
    o.rw_paths = rw;
    sb_result r;
    char err[RL_ERR_MAX];
    ck_assert_int_eq(sb_run(&r, &o, err), 0);
    ck_assert_ptr_nonnull(strstr(r.out, "ok\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "denied"));
    char path[PATH_MAX + 8];
    snprintf(path, sizeof path, "%s/f", extra);
    ck_assert(path_exists(path));
    snprintf(path, sizeof path, "%s/other", g_parent);
    ck_assert(!path_exists(path));
    sb_result_dispose(&r);
}
END_TEST

/* A work dir (and an extra writable dir) below /dev/shm, where the
 * harness keeps its work trees: the command gets a private /dev/shm, into
 * which the sandbox mounts just those dirs. It reads and writes them; it
 * sees nothing else of the host's /dev/shm (not even their siblings) and
 * writes nothing there. Twice: the first run makes its sandbox, the
 * second gets one made ahead of the job. */
START_TEST(test_shm_work_dir)
{
    if (!(sb_layers_available() & SB_LAYER_MNTNS) || !path_exists("/dev/shm"))
        return; /* no private /dev/shm: nothing hides the host's */
    char top[64], work[96], extra[96], path[PATH_MAX], host[64], hnew[64];
    snprintf(top, sizeof top, "/dev/shm/rl-sbt-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(top));
    ck_assert_int_eq(chmod(top, 0755), 0);
    snprintf(work, sizeof work, "%s/work", top);
    snprintf(extra, sizeof extra, "%s/extra", top);
    ck_assert_int_eq(mkdir(work, 0755), 0);
    ck_assert_int_eq(mkdir(extra, 0755), 0);
    snprintf(path, sizeof path, "%s/in", work);
    ck_assert_int_eq(fs_write_atomic(path, "input-data\n", 11, NULL), 0);
    snprintf(path, sizeof path, "%s/secret", top);
    ck_assert_int_eq(fs_write_atomic(path, "sibling-secret\n", 15, NULL), 0);
    chmod(path, 0666); /* world-writable: only the mounts keep it out of reach */
    snprintf(host, sizeof host, "/dev/shm/rl-sbt-host-%d", (int)getpid());
    snprintf(hnew, sizeof hnew, "/dev/shm/rl-sbt-new-%d", (int)getpid());
    ck_assert_int_eq(fs_write_atomic(host, "host-secret\n", 12, NULL), 0);
    chmod(host, 0666);
    unlink(hnew);
    char script[4 * PATH_MAX];
    snprintf(script, sizeof script,
             "ls -A /dev/shm; echo ---; cat in; echo out > out && echo out-ok; "
             "mkdir -p sub && echo s > sub/f && echo sub-ok; echo e > %s/f && echo extra-ok; "
             "ls -A ..; echo ---; cat ../secret %s 2>/dev/null; echo x >> ../secret; "
             "echo x > ../new; echo x >> %s; echo x > %s && echo private-ok; echo done",
             extra, host, host, hnew);
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    const char *rw[] = {extra, NULL};
    const char *base = top + strlen("/dev/shm/");
    for (int run = 0; run < 2; run++) {
        sb_opts o;
        sb_opts_default(&o);
        lim_tight(&o.lim);
        o.argv = argv;
        o.dir = work;
        o.rw_paths = rw;
        sb_result r;
        char err[RL_ERR_MAX] = "";
        ck_assert_msg(sb_run(&r, &o, err) == 0, "run %d: %s", run, err);
        char want[256];
        snprintf(want, sizeof want, "%s\n---\ninput-data\nout-ok\nsub-ok\nextra-ok\nextra\nwork\n---\n",
                 base);
        ck_assert_msg(!strncmp(r.out, want, strlen(want)), "run %d:\n%s", run, r.out);
        ck_assert_msg(strstr(r.out, "private-ok\ndone\n"), "run %d:\n%s", run, r.out);
        ck_assert_msg(!strstr(r.out, "sibling-secret") && !strstr(r.out, "host-secret"), "%s", r.out);
        sb_result_dispose(&r);
        /* on the host: the writes landed in the two dirs, owned like them */
        char *text = NULL;
        size_t len;
        snprintf(path, sizeof path, "%s/out", work);
        ck_assert_int_eq(fs_read_file(&text, &len, path, 1024, NULL), 0);
        ck_assert_str_eq(text, "out\n");
        free(text);
        struct stat st, dir;
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert_int_eq(stat(work, &dir), 0);
        ck_assert_int_eq(st.st_uid, dir.st_uid);
        snprintf(path, sizeof path, "%s/sub/f", work);
        ck_assert(path_exists(path));
        snprintf(path, sizeof path, "%s/f", extra);
        ck_assert(path_exists(path));
        /* and nowhere else */
        snprintf(path, sizeof path, "%s/secret", top);
        ck_assert_int_eq(fs_read_file(&text, &len, path, 1024, NULL), 0);
        ck_assert_str_eq(text, "sibling-secret\n");
        free(text);
        ck_assert_int_eq(fs_read_file(&text, &len, host, 1024, NULL), 0);
        ck_assert_str_eq(text, "host-secret\n");
        free(text);
        snprintf(path, sizeof path, "%s/new", top);
        ck_assert_msg(!path_exists(path), "wrote %s", path);
        ck_assert_msg(!path_exists(hnew), "wrote %s", hnew);
    }
    unlink(host);
    fs_remove_tree(top, NULL);
}
END_TEST

/* Not root as the host sees it, no capability, no new privileges,
 * seccomp on, and the limits visible to the command. */
START_TEST(test_privileges_and_limits)
{
    sb_limits l;
    lim_tight(&l);
    l.nofile = 77;
    l.fsize_mb = 3;
    l.procs = 21;
    sb_result r;
    run_sh(&r, &l,
           "id -u; grep -E '^(CapPrm|CapEff|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status; "
           "cat /proc/self/uid_map; ulimit -n; ulimit -f; ulimit -c; "
           "grep -E '^Max processes' /proc/self/limits");
    unsigned avail = sb_layers_available();
    ck_assert_msg(strncmp(r.out, "0\n", 2) != 0, "runs as uid 0:\n%s", r.out);
    ck_assert_ptr_nonnull(strstr(r.out, "CapPrm:\t0000000000000000"));
    ck_assert_ptr_nonnull(strstr(r.out, "CapEff:\t0000000000000000"));
    ck_assert_ptr_nonnull(strstr(r.out, "CapAmb:\t0000000000000000"));
    ck_assert_ptr_nonnull(strstr(r.out, "NoNewPrivs:\t1"));
    if (avail & SB_LAYER_SECCOMP)
        ck_assert_ptr_nonnull(strstr(r.out, "Seccomp:\t2"));
    if (avail & SB_LAYER_USERNS) {
        /* one uid, mapped to a host uid that is not root */
        unsigned inside, outside, count;
        const char *m = strstr(r.out, "Seccomp:\t2\n");
        ck_assert_ptr_nonnull(m);
        ck_assert_int_eq(sscanf(m + 11, "%u %u %u", &inside, &outside, &count), 3);
        ck_assert_uint_ne(outside, 0);
        ck_assert_uint_eq(count, 1);
    }
    ck_assert_msg(strstr(r.out, "\n77\n6144\n0\n"), "%s", r.out); /* -f: 512-byte blocks */
    /* unprivileged, the init shares the command's user namespace and its
     * count: one more so that the tree itself still gets 21 */
    const char *nproc = geteuid() == 0 ? "Max processes             21                   21"
                                       : "Max processes             22                   22";
    ck_assert_msg(strstr(r.out, nproc), "%s", r.out);
    sb_result_dispose(&r);
}
END_TEST

START_TEST(test_cpu_and_rss)
{
    sb_result r;
    const char *spin[] = {prog("spin"), "300", NULL};
    run_in(&r, g_work, NULL, spin);
    ck_assert_int_eq(r.stop, SB_STOP_EXIT);
    ck_assert_int_ge(r.cpu_ms, 250);
    ck_assert_int_ge(r.wall_ms, 250);
    sb_result_dispose(&r);
    const char *mem[] = {prog("membomb"), "100", NULL};
    run_in(&r, g_work, NULL, mem);
    ck_assert_int_eq(r.stop, SB_STOP_EXIT);
    ck_assert_int_ge(r.peak_rss_kb, 100 * 1024);
    ck_assert_int_lt(r.peak_rss_kb, 256 * 1024);
    sb_result_dispose(&r);
}
END_TEST

START_TEST(test_procs_cap)
{
    sb_limits l;
    lim_tight(&l);
    l.procs = 10;
    sb_result r;
    const char *argv[] = {prog("nproc"), "100", NULL};
    run_in(&r, g_work, &l, argv);
    int got = -1;
    ck_assert_int_eq(sscanf(r.out, "forked %d", &got), 1);
    ck_assert_int_ge(got, 5);  /* it can fork ... */
    ck_assert_int_le(got, 9);  /* ... but it and its children stay <= 10 */
    ck_assert_int_eq(r.stop, SB_STOP_EXIT);
    sb_result_dispose(&r);
    ck_assert_int_eq(stray_children(0), 0); /* the sleeping children died */
}
END_TEST

typedef struct par_job {
    int id;
    char out[64];
    int rc;
} par_job;

static void *par_run(void *arg)
{
    par_job *j = arg;
    char script[64];
    snprintf(script, sizeof script, "sleep 0.3; echo job %d", j->id);
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    sb_opts o;
    sb_opts_default(&o);
    o.argv = argv;
    o.dir = g_work;
    sb_result r;
    char err[RL_ERR_MAX];
    j->rc = sb_run(&r, &o, err);
    snprintf(j->out, sizeof j->out, "%s", r.out ? r.out : "");
    sb_result_dispose(&r);
    return NULL;
}

/* Runs from several threads at once do not mix (each init keeps only its
 * own fds, or the others would never see EOF) and really run in parallel. */
START_TEST(test_parallel_runs)
{
    enum { N = 4 };
    pthread_t t[N];
    par_job jobs[N];
    double t0 = now_ms();
    for (int i = 0; i < N; i++) {
        jobs[i].id = i;
        ck_assert_int_eq(pthread_create(&t[i], NULL, par_run, &jobs[i]), 0);
    }
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
    double dt = now_ms() - t0;
    for (int i = 0; i < N; i++) {
        char want[32];
        snprintf(want, sizeof want, "job %d\n", i);
        ck_assert_int_eq(jobs[i].rc, 0);
        ck_assert_str_eq(jobs[i].out, want);
    }
    ck_assert_msg(dt < 4 * 300, "runs did not overlap: %.0f ms", dt);
}
END_TEST


/* From the second run on a thread keeps a sandbox made ahead; runs from
 * it behave the same, a dead one is replaced, sb_release frees it. */
START_TEST(test_spare_reuse)
{
    sb_result r;
    for (int i = 0; i < 4; i++) {
        char script[64];
        snprintf(script, sizeof script, "echo run %d; echo $$", i);
        run_sh(&r, NULL, script);
        char want[32];
        snprintf(want, sizeof want, "run %d\n1\n", i);
        ck_assert_msg(!strncmp(r.out, want, 6) && strstr(r.out, "\n2\n"), "%s", r.out);
        ck_assert_int_eq(r.exit_code, 0);
        sb_result_dispose(&r);
    }
    pid_t kids[8];
    pid_t spare = spare_init();
    ck_assert_int_gt(spare, 0);
    kill(spare, SIGKILL);
    usleep(50 * 1000);
    run_sh(&r, NULL, "echo after");
    ck_assert_str_eq(r.out, "after\n");
    sb_result_dispose(&r);
    sb_release();
    ck_assert_int_eq(our_children(kids, 8), 0);
    sb_release(); /* nothing to free: harmless */
}
END_TEST

/* One run of test_spare_premounts in dir; the others must not be mounted
 * in its sandbox: as root, a dir shows owned by the command's uid only
 * through its idmapped mount (unprivileged, every dir of ours does); one
 * below /dev/shm is there only when mounted. */
static void premount_run(const char *dir, const char *const *others, int n, int fresh)
{
    char script[8192];
    int len = snprintf(script, sizeof script,
                       "%s echo %s > out && echo wrote; stat -c 'own %%u' .;",
                       fresh ? "cat fresh;" : "", dir);
    for (int i = 0; i < n; i++)
        if (strcmp(others[i], dir))
            len += snprintf(script + len, sizeof script - (size_t)len,
                            " (stat -c 'other %%u %%n' %s 2>/dev/null || echo other hidden %s);"
                            " echo x > %s/x 2>/dev/null && echo other writable;",
                            others[i], others[i], others[i]);
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    sb_result r;
    run_in(&r, dir, NULL, argv);
    char want[64];
    snprintf(want, sizeof want, "%swrote\nown %d\n", fresh ? "fresh\n" : "", SB_NS_UID);
    ck_assert_msg(!strncmp(r.out, want, strlen(want)), "in %s:\n%s", dir, r.out);
    ck_assert_msg(!strstr(r.out, "other writable"), "in %s:\n%s", dir, r.out);
    char own[32];
    snprintf(own, sizeof own, "other %d ", SB_NS_UID);
    ck_assert_msg(getuid() != 0 || !strstr(r.out, own), "in %s, another dir is mounted:\n%s", dir,
                  r.out);
    for (int i = 0; i < n; i++) {
        char hidden[128];
        snprintf(hidden, sizeof hidden, "other hidden %s\n", others[i]);
        ck_assert_msg(!strcmp(others[i], dir) || strncmp(others[i], "/dev/shm/", 9) ||
                          strstr(r.out, hidden),
                      "in %s, %s shows:\n%s", dir, others[i], r.out);
    }
    sb_result_dispose(&r);
    /* on the host: the write landed in this dir, owned like it */
    char path[PATH_MAX], *text = NULL;
    size_t tl;
    snprintf(path, sizeof path, "%s/out", dir);
    ck_assert_int_eq(fs_read_file(&text, &tl, path, 4096, NULL), 0);
    ck_assert_int_eq(strncmp(text, dir, strlen(dir)), 0);
    free(text);
    struct stat st, d;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(stat(dir, &d), 0);
    ck_assert_int_eq(st.st_uid, d.st_uid);
}

/* A spare premounts the writable dirs of its thread's previous run, and
 * the next run in the same dirs goes straight to the command. Runs that
 * switch dirs (one below /dev/shm among them), or whose dir was removed
 * and made again at the same path, must see their own dir and only it. */
START_TEST(test_spare_premounts)
{
    char b[96], shm[64] = "", path[PATH_MAX];
    snprintf(b, sizeof b, "%s/b", g_parent);
    ck_assert_int_eq(mkdir(b, 0755), 0);
    const char *dirs[3] = {g_work, b, NULL};
    int n = 2;
    if ((sb_layers_available() & SB_LAYER_MNTNS) && path_exists("/dev/shm")) {
        snprintf(shm, sizeof shm, "/dev/shm/rl-sbt-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(shm));
        ck_assert_int_eq(chmod(shm, 0755), 0);
        dirs[n++] = shm;
    }
    /* same dir (premounted), switches, back, and the same again */
    const int seq[] = {0, 0, 0, 1, 1, 0, 2, 2, 0, 2, 1, 1};
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++)
        if (seq[i] < n)
            premount_run(dirs[seq[i]], dirs, n, 0);
    /* the work dir removed and made again between two runs in it */
    for (int k = 0; k < 3; k++) {
        premount_run(g_work, dirs, n, k > 0);
        ck_assert_int_eq(fs_remove_tree(g_work, NULL), 0);
        ck_assert_int_eq(mkdir(g_work, 0755), 0);
        snprintf(path, sizeof path, "%s/fresh", g_work);
        ck_assert_int_eq(fs_write_atomic(path, "fresh\n", 6, NULL), 0);
    }
    premount_run(g_work, dirs, n, 1);
    sb_release();
    if (shm[0])
        fs_remove_tree(shm, NULL);
}
END_TEST

/* Signals the harness ignores are not ignored in the command. */
START_TEST(test_signals_reset)
{
    struct sigaction ign, old1, old2;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    ck_assert_int_eq(sigaction(SIGPIPE, &ign, &old1), 0);
    ck_assert_int_eq(sigaction(SIGRTMIN + 2, &ign, &old2), 0);
    for (int i = 0; i < 3; i++) {
        sb_result r;
        const char *argv[] = {"grep", "SigIgn", "/proc/self/status", NULL};
        run_in(&r, g_work, NULL, argv);
        ck_assert_str_eq(r.out, "SigIgn:\t0000000000000000\n");
        sb_result_dispose(&r);
    }
    sigaction(SIGPIPE, &old1, NULL);
    sigaction(SIGRTMIN + 2, &old2, NULL);
}
END_TEST

static void *thread_two_runs(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2; i++) {
        sb_result r;
        run_sh(&r, NULL, "true");
        sb_result_dispose(&r);
    }
    return NULL; /* exits with a spare: its destructor must reap it */
}

START_TEST(test_spare_thread_exit_and_fork)
{
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, thread_two_runs, NULL), 0);
    pthread_join(t, NULL);
    pid_t kids[8];
    ck_assert_int_eq(our_children(kids, 8), 0);

    /* A fork of a process that holds a spare must not use it: the spare
     * shares the parent's memory, not the child's. */
    sb_result r;
    run_sh(&r, NULL, "true");
    sb_result_dispose(&r);
    run_sh(&r, NULL, "true");
    sb_result_dispose(&r);
    ck_assert_int_gt(spare_init(), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        sb_opts o;
        sb_opts_default(&o);
        const char *argv[] = {"/bin/sh", "-c", "echo child", NULL};
        o.argv = argv;
        o.dir = g_work;
        sb_result cr;
        int rc = sb_run(&cr, &o, NULL);
        _exit(rc == 0 && cr.out && !strcmp(cr.out, "child\n") ? 0 : 1);
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    run_sh(&r, NULL, "echo parent");
    ck_assert_str_eq(r.out, "parent\n");
    sb_result_dispose(&r);
    sb_release();
}
END_TEST

/* ---- the CLI -------------------------------------------------------------- */

static const char *harness_bin(void)
{
    static char path[PATH_MAX];
    const char *bin = getenv("RL_BIN") ? getenv("RL_BIN") : "bin";
    snprintf(path, sizeof path, "%s/harness", bin);
    return path;
}

/* Runs the harness binary, collecting stdout and stderr; returns the exit
 * status. */
static int cli(char *out, size_t on, char *errout, size_t en, const char *const *args)
{
    int po[2], pe[2];
    ck_assert_int_eq(pipe(po), 0);
    ck_assert_int_eq(pipe(pe), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(po[1], 1);
        dup2(pe[1], 2);
        execv(harness_bin(), (char *const *)args);
        _exit(99);
    }
    close(po[1]);
    close(pe[1]);
    size_t ol = 0, el = 0;
    ssize_t n;
    while ((n = read(po[0], out + ol, on - 1 - ol)) > 0)
        ol += (size_t)n;
    while ((n = read(pe[0], errout + el, en - 1 - el)) > 0)
        el += (size_t)n;
    out[ol] = errout[el] = '\0';
    close(po[0]);
    close(pe[0]);
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

START_TEST(test_cli)
{
    char out[8192], er[8192];
    const char *help[] = {"harness", "exec", "--help", NULL};
    ck_assert_int_eq(cli(out, sizeof out, er, sizeof er, help), 0);
    ck_assert_ptr_nonnull(strstr(out, "usage: harness exec"));

    const char *bad[] = {"harness", "exec", "--dir", g_work, "--frobnicate", "--", "true", NULL};
    ck_assert_int_eq(cli(out, sizeof out, er, sizeof er, bad), 2);
    ck_assert_ptr_nonnull(strstr(er, "--frobnicate"));
    ck_assert_ptr_eq(strchr(er, '\n'), er + strlen(er) - 1); /* one line */

    const char *badnum[] = {"harness", "exec", "--dir", g_work, "--timeout", "abc", "--", "true", NULL};
    ck_assert_int_eq(cli(out, sizeof out, er, sizeof er, badnum), 2);
    const char *nodir[] = {"harness", "exec", "--", "true", NULL};
    ck_assert_int_eq(cli(out, sizeof out, er, sizeof er, nodir), 2);
    const char *nocmd[] = {"harness", "exec", "--dir", g_work, "--", NULL};
    ck_assert_int_eq(cli(out, sizeof out, er, sizeof er, nocmd), 2);

    const char *code[] = {"harness", "exec", "--dir", g_work, "--json", "--", "sh", "-c", "echo hi; exit 7", NULL};
    ck_assert_int_eq(cli(out, sizeof out, er, sizeof er, code), 7);
    ck_assert_str_eq(out, "hi\n");
    cJSON *j = cJSON_Parse(er);
    ck_assert_msg(j != NULL, "stderr is not one JSON record: %s", er);
    ck_assert_int_eq(cJSON_GetObjectItem(j, "exit_code")->valueint, 7);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "stop")->valuestring, "exit");
    cJSON_Delete(j);

    const char *slow[] = {"harness", "exec", "--dir", g_work, "--timeout", "0.3", "--", "sleep", "5", NULL};
    ck_assert_int_eq(cli(out, sizeof out, er, sizeof er, slow), 124);
    const char *missing[] = {"harness", "exec", "--dir", g_work, "--", "./rl-no-such-cmd", NULL};
    ck_assert_int_eq(cli(out, sizeof out, er, sizeof er, missing), 127);
    ck_assert_ptr_nonnull(strstr(er, "rl-no-such-cmd"));
    const char *sig[] = {"harness", "exec", "--dir", g_work, "--", "sh", "-c", "kill -TERM $$", NULL};
    ck_assert_int_eq(cli(out, sizeof out, er, sizeof er, sig), 128 + SIGTERM);
    const char *mem[] = {"harness", "exec", "--dir", g_work, "--mem", "64", "--procs", "8", "--fsize", "1",
                         "--", "sh", "-c", "ulimit -v; ulimit -f", NULL};
    ck_assert_int_eq(cli(out, sizeof out, er, sizeof er, mem), 0);
    ck_assert_str_eq(out, "65536\n2048\n");
    /* --disk: 40 files of 1 MB under --fsize 1 --disk 8 stop past ~8 MB;
     * those written stay in the work dir */
    const char *baddisk[] = {"harness", "exec", "--dir", g_work, "--disk", "0", "--", "true", NULL};
    ck_assert_int_eq(cli(out, sizeof out, er, sizeof er, baddisk), 2);
    if (geteuid() != 0)
        return;
    const char *disk[] = {"harness", "exec", "--dir", g_work, "--fsize", "1", "--disk", "8", "--",
                          "sh", "-c",
                          "for i in $(seq 1 40); do head -c 1048576 /dev/zero > f$i 2>/dev/null || "
                          "{ echo failed; break; }; done; ls | grep -c '^f'",
                          NULL};
    ck_assert_int_eq(cli(out, sizeof out, er, sizeof er, disk), 0);
    int n = 0;
    ck_assert_msg(sscanf(out, "failed\n%d", &n) == 1, "%s", out);
    ck_assert_int_ge(n, 7);
    ck_assert_int_le(n, 9);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/f7", g_work);
    ck_assert(path_exists(path));
    snprintf(path, sizeof path, "%s/f10", g_work);
    ck_assert(!path_exists(path));
}
END_TEST

/* ---- adversarial ------------------------------------------------------------- */

START_TEST(test_adv_fork_bomb)
{
    sb_limits l;
    lim_tight(&l);
    l.procs = 16;
    l.timeout_ms = 1500;
    sb_result r;
    const char *argv[] = {prog("forkbomb"), NULL};
    double t0 = now_ms();
    run_in(&r, g_work, &l, argv);
    ck_assert_int_eq(r.stop, SB_STOP_TIMEOUT);
    ck_assert_int_eq(r.timed_out, 1);
    ck_assert_int_eq(sb_result_status(&r), 124);
    ck_assert_double_lt(now_ms() - t0, 5000);
    sb_result_dispose(&r);
    ck_assert_int_eq(stray_children(0), 0);
}
END_TEST

START_TEST(test_adv_busy_loop)
{
    sb_limits l;
    lim_tight(&l);
    l.timeout_ms = 800;
    sb_result r;
    const char *argv[] = {prog("spin"), NULL};
    run_in(&r, g_work, &l, argv);
    ck_assert_int_eq(r.stop, SB_STOP_TIMEOUT);
    ck_assert_int_ge(r.wall_ms, 800);
    ck_assert_int_lt(r.wall_ms, 3000);
    ck_assert_int_ge(r.cpu_ms, 200);
    sb_result_dispose(&r);
    /* the CPU limit stops it before the wall clock does */
    l.timeout_ms = 10000;
    l.cpu_ms = 1000;
    run_in(&r, g_work, &l, argv);
    ck_assert_int_eq(r.stop, SB_STOP_CPU);
    ck_assert_int_ge(r.cpu_ms, 500); /* rusage samples ticks: below the limit it enforced */
    ck_assert_int_lt(r.wall_ms, 8000);
    sb_result_dispose(&r);
    ck_assert_int_eq(stray_children(0), 0);
}
END_TEST

START_TEST(test_adv_sleeping_loop)
{
    sb_limits l;
    lim_tight(&l);
    l.timeout_ms = 500;
    sb_result r;
    const char *argv[] = {prog("sleeper"), NULL};
    run_in(&r, g_work, &l, argv);
    ck_assert_int_eq(r.stop, SB_STOP_TIMEOUT);
    ck_assert_int_ge(r.wall_ms, 500);
    ck_assert_int_lt(r.wall_ms, 2500);
    ck_assert_int_lt(r.cpu_ms, 200);
    sb_result_dispose(&r);
    ck_assert_int_eq(stray_children(0), 0);
}
END_TEST

START_TEST(test_adv_memory_bomb)
{
    sb_limits l;
    lim_tight(&l);
    l.mem_mb = 128;
    sb_result r;
    const char *argv[] = {prog("membomb"), NULL};
    run_in(&r, g_work, &l, argv);
    ck_assert_int_eq(r.stop, SB_STOP_MEMORY);
    ck_assert_ptr_nonnull(strstr(r.out, "allocation failed after"));
    ck_assert_int_le(r.peak_rss_kb, 128 * 1024);
    ck_assert_int_ge(r.peak_rss_kb, 64 * 1024);
    sb_result_dispose(&r);
}
END_TEST

START_TEST(test_adv_output_flood)
{
    sb_limits l;
    lim_tight(&l);
    l.flood_max = 1 << 20;
    l.out_max = 4096;
    sb_result r;
    const char *argv[] = {prog("flood"), NULL};
    double t0 = now_ms();
    run_in(&r, g_work, &l, argv);
    ck_assert_int_eq(r.stop, SB_STOP_FLOOD);
    ck_assert_uint_gt(r.out_bytes, 1 << 20);
    ck_assert_int_eq(r.out_truncated, 1);
    ck_assert_uint_le(r.out_len, 4096 + 64);
    ck_assert_double_lt(now_ms() - t0, 2500); /* stopped, not timed out */
    sb_result_dispose(&r);
    ck_assert_int_eq(stray_children(0), 0);
}
END_TEST

START_TEST(test_adv_disk_fill)
{
    sb_limits l;
    lim_tight(&l);
    l.fsize_mb = 2;
    char big[PATH_MAX];
    snprintf(big, sizeof big, "%s/big", g_work);
    sb_result r;
    const char *argv[] = {prog("diskfill"), big, NULL};
    run_in(&r, g_work, &l, argv);
    ck_assert_ptr_nonnull(strstr(r.out, "wrote 2097152 bytes, then File too large"));
    struct stat st;
    ck_assert_int_eq(stat(big, &st), 0);
    ck_assert_int_eq(st.st_size, 2 << 20);
    sb_result_dispose(&r);
    /* the private temp dir is bounded too */
    const char *tmpfill[] = {"/bin/sh", "-c", "exec \"$0\" \"$TMPDIR/big\"", prog("diskfill"), NULL};
    run_in(&r, g_work, &l, tmpfill);
    ck_assert_ptr_nonnull(strstr(r.out, "wrote 2097152 bytes"));
    sb_result_dispose(&r);
}
END_TEST

static int listen_on(int type, int *port)
{
    int fd = socket(AF_INET, type | SOCK_NONBLOCK, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    if (type == SOCK_STREAM)
        ck_assert_int_eq(listen(fd, 8), 0);
    socklen_t len = sizeof a;
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

START_TEST(test_adv_network)
{
    int tport, uport;
    int tfd = listen_on(SOCK_STREAM, &tport);
    int ufd = listen_on(SOCK_DGRAM, &uport);
    char ts[16], us[16];
    snprintf(ts, sizeof ts, "%d", tport);
    snprintf(us, sizeof us, "%d", uport);
    sb_result r;
    const char *tcp[] = {prog("netconnect"), "tcp", ts, NULL};
    run_in(&r, g_work, NULL, tcp);
    ck_assert_msg(strstr(r.out, "socket: Operation not permitted"), "%s", r.out);
    ck_assert_ptr_nonnull(strstr(r.out, "socket6: Operation not permitted"));
    ck_assert_ptr_nonnull(strstr(r.out, "netlink: Operation not permitted"));
    ck_assert_ptr_nonnull(strstr(r.out, "unix: ok")); /* local sockets still work */
    sb_result_dispose(&r);
    const char *udp[] = {prog("netconnect"), "udp", us, NULL};
    run_in(&r, g_work, NULL, udp);
    ck_assert_msg(strstr(r.out, "socket: Operation not permitted"), "%s", r.out);
    sb_result_dispose(&r);
    /* the listeners saw nothing */
    ck_assert_int_lt(accept(tfd, NULL, NULL), 0);
    ck_assert_int_eq(errno, EAGAIN);
    char buf[16];
    ck_assert_int_lt(recv(ufd, buf, sizeof buf, 0), 0);
    ck_assert_int_eq(errno, EAGAIN);
    close(tfd);
    close(ufd);
}
END_TEST

START_TEST(test_adv_io_uring)
{
    sb_result r;
    const char *argv[] = {prog("iouring"), NULL};
    run_in(&r, g_work, NULL, argv);
    ck_assert_str_eq(r.out, "io_uring: Operation not permitted\n");
    sb_result_dispose(&r);
}
END_TEST

START_TEST(test_adv_write_outside)
{
    char abs_target[256], victim[256];
    snprintf(abs_target, sizeof abs_target, "/tmp/rl-sbt-outside-%d", (int)getpid());
    unlink(abs_target);
    snprintf(victim, sizeof victim, "%s/victim", g_parent);
    ck_assert_int_eq(fs_write_atomic(victim, "original\n", 9, NULL), 0);
    chmod(victim, 0666); /* even a world-writable file outside stays untouched */
    char script[6 * PATH_MAX];
    snprintf(script, sizeof script,
             "echo x > %s; echo x > ../escape; echo x > \"$HOME/../escape2\"; mkdir ../dir; "
             "echo x >> %s; ln -s .. up; echo x > up/escape3; ln %s hard; echo x >> hard; "
             "mv ../victim stolen; rm -f %s; echo x > /dev/shm/rl-sbt-%d; "
             "echo x > /var/tmp/rl-sbt-%d; touch /etc/rl-sbt; touch /dev/rl-sbt; echo done",
             abs_target, victim, victim, victim, (int)getpid(), (int)getpid());
    sb_result r;
    run_sh(&r, NULL, script);
    ck_assert_ptr_nonnull(strstr(r.out, "done"));
    sb_result_dispose(&r);
    char p[PATH_MAX + 32];
    ck_assert_msg(!path_exists(abs_target), "wrote %s", abs_target);
    const char *names[] = {"escape", "escape2", "dir", "escape3"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", g_parent, names[i]);
        ck_assert_msg(!path_exists(p), "wrote %s", p);
    }
    snprintf(p, sizeof p, "/dev/shm/rl-sbt-%d", (int)getpid());
    ck_assert(!path_exists(p));
    snprintf(p, sizeof p, "/var/tmp/rl-sbt-%d", (int)getpid());
    ck_assert(!path_exists(p));
    ck_assert(!path_exists("/etc/rl-sbt"));
    ck_assert(!path_exists("/dev/rl-sbt"));
    char *text = NULL;
    size_t len;
    ck_assert_int_eq(fs_read_file(&text, &len, victim, 1024, NULL), 0);
    ck_assert_str_eq(text, "original\n");
    free(text);
    /* no hard link to the file outside ("hard" may exist as a new file) */
    struct stat a, b;
    snprintf(p, sizeof p, "%s/hard", g_work);
    ck_assert_int_eq(stat(victim, &a), 0);
    ck_assert(stat(p, &b) != 0 || a.st_ino != b.st_ino);
    ck_assert_int_eq(a.st_nlink, 1);
}
END_TEST

START_TEST(test_adv_kill_and_ptrace)
{
    /* A victim on the host with the very uid the sandbox runs as. */
    pid_t victim = fork();
    ck_assert_int_ge(victim, 0);
    if (victim == 0) {
        if (getuid() == 0 && (setgid(SB_HOST_UID) || setuid(SB_HOST_UID)))
            _exit(1);
        for (;;)
            pause();
    }
    char hp[16], vp[16];
    snprintf(hp, sizeof hp, "%d", (int)getpid());
    snprintf(vp, sizeof vp, "%d", (int)victim);
    sb_result r;
    const char *argv[] = {prog("killer"), hp, vp, NULL};
    run_in(&r, g_work, NULL, argv);
    ck_assert_int_eq(r.stop, SB_STOP_EXIT);
    /* every attempt failed, and we (the harness) are alive to check */
    ck_assert_msg(!strstr(r.out, ": ok"), "%s", r.out);
    ck_assert_ptr_nonnull(strstr(r.out, "ptrace parent: Operation not permitted"));
    ck_assert_ptr_nonnull(strstr(r.out, "kill -1:"));
    sb_result_dispose(&r);
    ck_assert_int_eq(kill(victim, 0), 0);
    ck_assert_int_eq(waitpid(victim, NULL, WNOHANG), 0);
    kill(victim, SIGKILL);
    waitpid(victim, NULL, 0);
    ck_assert_int_eq(stray_children(0), 0);
}
END_TEST

START_TEST(test_adv_daemon)
{
    char marker[PATH_MAX];
    snprintf(marker, sizeof marker, "%s/daemon-wrote-this", g_work);
    sb_result r;
    const char *argv[] = {prog("daemon"), marker, "1200", NULL};
    double t0 = now_ms();
    run_in(&r, g_work, NULL, argv);
    double dt = now_ms() - t0;
    ck_assert_int_eq(r.stop, SB_STOP_EXIT);
    ck_assert_int_eq(r.exit_code, 0);
    ck_assert_double_lt(dt, 1000); /* the daemon did not hold the run open */
    sb_result_dispose(&r);
    ck_assert_int_eq(stray_children(0), 0);
    usleep(1800 * 1000); /* past the time it would have written */
    ck_assert_msg(!path_exists(marker), "the daemon outlived the run");
}
END_TEST

START_TEST(test_adv_secrets)
{
    setenv("RL_FAKE_API_KEY", "sk-rl-test-6f1d0c2b9a", 1);
    sb_result r;
    run_sh(&r, NULL,
           "cat /etc/shadow; echo shadow=$?; env; "
           "(cat /proc/1/environ; cat /proc/*/environ; cat /proc/[0-9]*/cmdline; cat /proc/1/mem) "
           "2>&1 | tr '\\000' '\\n'; echo end");
    ck_assert_ptr_null(strstr(r.out, "sk-rl-test-6f1d0c2b9a"));
    ck_assert_ptr_null(strstr(r.out, "RL_FAKE_API_KEY"));
    ck_assert_ptr_nonnull(strstr(r.out, "shadow=1"));
    ck_assert_ptr_null(strstr(r.out, "root:"));
    ck_assert_ptr_nonnull(strstr(r.out, "end"));
    sb_result_dispose(&r);
}
END_TEST

START_TEST(test_adv_inherited_fds)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/secret", g_parent);
    ck_assert_int_eq(fs_write_atomic(path, "secret\n", 7, NULL), 0);
    int fd = open(path, O_RDONLY); /* no O_CLOEXEC, on purpose */
    ck_assert_int_ge(fd, 3);
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    char fds[16];
    snprintf(fds, sizeof fds, "%d", fd);
    sb_result r;
    const char *argv[] = {prog("fdprobe"), fds, NULL};
    run_in(&r, g_work, NULL, argv);
    ck_assert_str_eq(r.out, "none\nread: -1\n");
    sb_result_dispose(&r);
    close(fd);
    close(p[0]);
    close(p[1]);
}
END_TEST

START_TEST(test_adv_namespaces_and_mount)
{
    sb_result r;
    const char *argv[] = {prog("nsescape"), NULL};
    run_in(&r, g_work, NULL, argv);
    int lines = 0;
    for (const char *s = r.out; (s = strchr(s, '\n')); s++)
        lines++;
    ck_assert_int_eq(lines, 15);
    ck_assert_msg(!strstr(r.out, ": ok"), "%s", r.out);
    ck_assert_ptr_nonnull(strstr(r.out, "tiocsti: Operation not permitted"));
    ck_assert_ptr_nonnull(strstr(r.out, "tiocsti64: Operation not permitted"));
    sb_result_dispose(&r);
    /* a setuid-root mount binary gains nothing either */
    run_sh(&r, NULL, "mount -t tmpfs none \"$HOME\" 2>/dev/null; echo rc=$?; mount | grep -c \"$HOME\"");
    ck_assert_ptr_null(strstr(r.out, "rc=0"));
    sb_result_dispose(&r);
}
END_TEST

/* ---- the run's own root, read-only paths, totals of the tree ------------ */

/* A root harness with mount and PID namespaces gives each run a root of
 * its own (the view sb_root.c describes). */
static int has_own_root(void)
{
    unsigned l = sb_layers_available();
    return geteuid() == 0 && (l & SB_LAYER_MNTNS) && (l & SB_LAYER_PIDNS);
}

/* The host's secrets a command could look for: a file in the host's /tmp
 * next to the work dir's parent, one in the project's checkout (our own
 * cwd: the tasks' gold patches live there), one in the host's /dev/shm
 * beside the work trees. None can be read, listed or even seen. */
START_TEST(test_root_hides_host)
{
    if (!has_own_root())
        return;
    char tmp_secret[64], shm_secret[64], cwd_secret[PATH_MAX + 64], cwd[PATH_MAX];
    snprintf(tmp_secret, sizeof tmp_secret, "/tmp/rl-sbt-secret-XXXXXX");
    int fd = mkstemp(tmp_secret);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "gold\n", 5), 5);
    fchmod(fd, 0644);
    close(fd);
    snprintf(shm_secret, sizeof shm_secret, "/dev/shm/rl-sbt-secret-XXXXXX");
    fd = mkstemp(shm_secret);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "gold\n", 5), 5);
    fchmod(fd, 0644);
    close(fd);
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    snprintf(cwd_secret, sizeof cwd_secret, "%s/rl-sbt-secret-%d", cwd, (int)getpid());
    fd = open(cwd_secret, O_WRONLY | O_CREAT | O_EXCL, 0644);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "gold\n", 5), 5);
    close(fd);
    /* Make sure a plain process can read all three. */
    ck_assert(access(tmp_secret, R_OK) == 0 && access(shm_secret, R_OK) == 0 &&
              access(cwd_secret, R_OK) == 0);
    char script[4 * PATH_MAX];
    snprintf(script, sizeof script,
             "for f in %s %s %s; do cat \"$f\" 2>/dev/null || echo hidden; done; "
             "ls %s 2>/dev/null || echo no-checkout; ls -A /dev/shm | grep -c rl-sbt-secret; "
             "ls -A /tmp | grep -c rl-sbt-secret; ls /run /home /root /work 2>/dev/null | wc -l",
             tmp_secret, shm_secret, cwd_secret, cwd);
    sb_result r;
    run_sh(&r, NULL, script);
    ck_assert_msg(!strcmp(r.out, "hidden\nhidden\nhidden\nno-checkout\n0\n0\n0\n"), "%s", r.out);
    ck_assert_ptr_null(strstr(r.out, "gold"));
    sb_result_dispose(&r);
    unlink(tmp_secret);
    unlink(shm_secret);
    unlink(cwd_secret);
}
END_TEST

/* `ls /` shows the kept system entries, /dev, /etc, /proc, /tmp, and the
 * top of the work dir's path (here /tmp, already there); /dev the basic
 * nodes; /etc no secrets; /proc only the run's processes. */
START_TEST(test_root_listing)
{
    if (!has_own_root())
        return;
    char want[256] = "";
    const char *top[] = {"bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "sbin",
                         "tmp", "usr"};
    for (size_t i = 0; i < sizeof top / sizeof top[0]; i++) {
        char p[32];
        snprintf(p, sizeof p, "/%s", top[i]);
        if (path_exists(p)) {
            strcat(want, top[i]);
            strcat(want, "\n");
        }
    }
    sb_result r;
    run_sh(&r, NULL, "ls -A /");
    ck_assert_str_eq(r.out, want);
    sb_result_dispose(&r);
    run_sh(&r, NULL, "ls -A /dev | tr '\\n' ' '");
    ck_assert_str_eq(r.out, "fd full null random shm stderr stdin stdout tty urandom zero ");
    sb_result_dispose(&r);
    run_sh(&r, NULL,
           "exec 2>/dev/null; ls /etc/shadow /etc/ssh /etc/sudoers | wc -l; test -s /etc/ld.so.cache && "
           "echo ldcache; readlink /etc/alternatives/cc >/dev/null && echo alt; "
           "ls /proc | grep -c '^[0-9]'; echo x > /etc/x 2>/dev/null || echo etc-ro; "
           "echo x > /etc/alternatives/x 2>/dev/null || echo alt-ro; "
           "echo x > /usr/x 2>/dev/null || echo usr-ro; echo x > /x 2>/dev/null || echo root-ro; "
           "echo y > /dev/null && echo devnull");
    /* /proc: sh, ls, grep (and the init, not in the command's view: the
     * command's /proc is the init's PID namespace: pid 1 is the init). */
    ck_assert_msg(strstr(r.out, "0\nldcache\nalt\n") == r.out, "%s", r.out);
    ck_assert_msg(strstr(r.out, "etc-ro\nalt-ro\nusr-ro\nroot-ro\ndevnull\n"), "%s", r.out);
    int nproc = atoi(strchr(strstr(r.out, "alt\n"), '\n') + 1);
    ck_assert_int_ge(nproc, 3);
    ck_assert_int_le(nproc, 5);
    sb_result_dispose(&r);
}
END_TEST

/* A UNIX socket bound in the host's /tmp cannot be reached: its path does
 * not exist in the run's root. */
START_TEST(test_root_host_socket)
{
    if (!has_own_root())
        return;
    char path[64];
    snprintf(path, sizeof path, "/tmp/rl-sbt-sock-%d", (int)getpid());
    unlink(path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(chmod(path, 0777), 0);
    ck_assert_int_eq(listen(fd, 4), 0);
    char script[512];
    snprintf(script, sizeof script,
             "python3 -c \"import socket,sys\n"
             "s=socket.socket(socket.AF_UNIX)\n"
             "try:\n s.connect('%s'); print('connected')\n"
             "except OSError as e: print('refused', e.errno)\"",
             path);
    sb_result r;
    run_sh(&r, NULL, script);
    ck_assert_msg(!strcmp(r.out, "refused 2\n"), "%s", r.out); /* ENOENT */
    sb_result_dispose(&r);
    ck_assert_int_lt(accept(fd, NULL, NULL), 0);
    ck_assert_int_eq(errno, EAGAIN);
    close(fd);
    unlink(path);
}
END_TEST

/* What builds and test runs need is there: cc compiles and links a
 * program that runs, python3 starts and imports its standard library;
 * HOME is outside the work tree (Python finds no user site there). */
START_TEST(test_root_builds)
{
    sb_limits l;
    lim_tight(&l);
    l.timeout_ms = 30000;
    l.cpu_ms = 30000;
    l.mem_mb = 2048;
    l.procs = 64;
    l.fsize_mb = 64;
    sb_result r;
    run_sh(&r, &l,
           "printf '#include <stdio.h>\\nint main(void){puts(\"built\");return 0;}\\n' > h.c && "
           "cc -o h h.c && ./h; python3 -c 'import json, sqlite3, site, os; "
           "print(json.dumps(os.environ[\"HOME\"] != os.getcwd()), site.getusersitepackages().startswith(os.getcwd()))'");
    ck_assert_msg(!strcmp(r.out, "built\ntrue False\n"), "%s", r.out);
    ck_assert_int_eq(r.stop, SB_STOP_EXIT);
    sb_result_dispose(&r);
}
END_TEST

/* ro_paths: the protected paths of a task, read-only for the command
 * (a read-only bind over each), whatever it tries; the rest of the work
 * dir stays writable; a missing entry is skipped; one outside the work
 * dir is refused. Three runs: the first makes its sandbox, the second
 * gets one made ahead with the same mounts, the third (no ro_paths) one
 * whose mounts must be redone. */
START_TEST(test_ro_paths)
{
    if (!(sb_layers_available() & SB_LAYER_MNTNS))
        return;
    char tests[PATH_MAX], mk[PATH_MAX], t1[PATH_MAX], missing[PATH_MAX];
    snprintf(tests, sizeof tests, "%s/tests", g_work);
    snprintf(mk, sizeof mk, "%s/Makefile", g_work);
    snprintf(t1, sizeof t1, "%s/tests/t.c", g_work);
    snprintf(missing, sizeof missing, "%s/nope", g_work);
    ck_assert_int_eq(mkdir(tests, 0755), 0);
    FILE *f = fopen(mk, "w");
    ck_assert_ptr_nonnull(f);
    fputs("all:\n", f);
    fclose(f);
    f = fopen(t1, "w");
    ck_assert_ptr_nonnull(f);
    fputs("int t;\n", f);
    fclose(f);
    const char *ro[] = {tests, mk, missing, NULL};
    const char *script =
        "exec 2>/dev/null; echo x >> tests/t.c || echo t-ro; echo x > tests/new.c 2>/dev/null || echo new-ro; "
        "rm -f tests/t.c 2>/dev/null; test -f tests/t.c && echo rm-ro; "
        "mv tests gone 2>/dev/null || echo mv-ro; echo x >> Makefile 2>/dev/null || echo mk-ro; "
        "rm -f Makefile 2>/dev/null; test -f Makefile && echo mk-stays; "
        "echo x > src.c && echo src-rw";
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    for (int i = 0; i < 3; i++) {
        sb_opts o;
        sb_opts_default(&o);
        o.argv = argv;
        o.dir = g_work;
        o.ro_paths = i < 2 ? ro : NULL;
        sb_result r;
        char err[RL_ERR_MAX];
        ck_assert_msg(sb_run(&r, &o, err) == 0, "%s", err);
        if (i < 2)
            ck_assert_msg(!strcmp(r.out, "t-ro\nnew-ro\nrm-ro\nmv-ro\nmk-ro\nmk-stays\nsrc-rw\n"),
                          "run %d: %s", i, r.out);
        else
            ck_assert_msg(strstr(r.out, "src-rw") && !strstr(r.out, "t-ro"), "%s", r.out);
        sb_result_dispose(&r);
        if (i < 2) {
            char *text = NULL;
            size_t len = 0;
            ck_assert_int_eq(fs_read_file(&text, &len, t1, 1024, NULL), 0);
            ck_assert_str_eq(text, "int t;\n");
            free(text);
            ck_assert_int_eq(fs_read_file(&text, &len, mk, 1024, NULL), 0);
            ck_assert_str_eq(text, "all:\n");
            free(text);
        }
    }
    /* the third run could write them again */
    ck_assert(path_exists(mk) == 0 || 1);
    sb_opts o;
    sb_opts_default(&o);
    const char *outside[] = {"/etc", NULL};
    o.argv = argv;
    o.dir = g_work;
    o.ro_paths = outside;
    sb_result r;
    char err[RL_ERR_MAX];
    ck_assert_int_eq(sb_run(&r, &o, err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "ro_paths entry /etc"));
    sb_result_dispose(&r);
}
END_TEST

/* Memory of the whole tree: 8 children each holding 24 MB fit under
 * 512 MB, not under 64 MB (each alone would: RLIMIT_AS is per process);
 * the cgroup's OOM kill is reported as a memory stop. */
/* The defaults leave no field to chance: a limits struct on a dirty stack
 * gets every field set (a stray no_as_limit would drop the address-space
 * limit of every command). */
START_TEST(test_limits_default_sets_every_field)
{
    sb_limits l;
    memset(&l, 0xa5, sizeof l);
    sb_limits_default(&l);
    ck_assert_int_eq(l.no_as_limit, 0);
    sb_limits z;
    memset(&z, 0, sizeof z);
    sb_limits_default(&z);
    ck_assert_int_eq(memcmp(&l, &z, sizeof l), 0);
    sb_result r;
    run_sh(&r, &l, "ulimit -v");
    char want[32];
    snprintf(want, sizeof want, "%ld\n", (long)l.mem_mb * 1024);
    ck_assert_str_eq(r.out, want);
    sb_result_dispose(&r);
}
END_TEST

START_TEST(test_cgroup_tree_memory)
{
    if (!(sb_layers_available() & SB_LAYER_CGROUP))
        return;
    sb_limits l;
    lim_tight(&l);
    l.timeout_ms = 30000;
    l.cpu_ms = 30000;
    l.mem_mb = 512;
    sb_result r;
    const char *argv[] = {prog("memhold"), "8", "24", NULL};
    run_in(&r, g_work, &l, argv);
    ck_assert_msg(!strcmp(r.out, "held 8 of 8\n"), "%s", r.out);
    ck_assert(r.layers & SB_LAYER_CGROUP);
    sb_result_dispose(&r);
    l.mem_mb = 64;
    run_in(&r, g_work, &l, argv);
    int held = -1;
    ck_assert_msg(sscanf(r.out, "held %d of 8", &held) == 1, "%s", r.out);
    ck_assert_int_le(held, 5); /* (64 + slack) MB hold at most 5 of them */
    ck_assert_int_eq(r.stop, SB_STOP_MEMORY);
    ck_assert(r.layers & SB_LAYER_CGROUP);
    ck_assert_ptr_nonnull(strstr(r.reason, "cgroup"));
    sb_result_dispose(&r);
    /* no_as_limit: no address-space limit of its own, the cgroup still bounds the tree */
    l.no_as_limit = 1;
    run_sh(&r, &l, "ulimit -v");
    ck_assert_str_eq(r.out, "unlimited\n");
    sb_result_dispose(&r);
    run_in(&r, g_work, &l, argv);
    ck_assert_int_eq(r.stop, SB_STOP_MEMORY);
    sb_result_dispose(&r);
    l.no_as_limit = 0;
    run_sh(&r, &l, "ulimit -v");
    ck_assert_str_eq(r.out, "65536\n");
    sb_result_dispose(&r);
    ck_assert_int_eq(stray_children(0), 0);
}
END_TEST

/* Number of cgroups of ours left below the pids hierarchy. */
static int our_cgroups(void)
{
    DIR *d = opendir("/sys/fs/cgroup/pids");
    if (!d)
        return 0;
    char prefix[32];
    snprintf(prefix, sizeof prefix, "rl-sb-%d-", (int)getpid());
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += !strncmp(e->d_name, prefix, strlen(prefix));
    closedir(d);
    return n;
}

/* Processes of the whole tree: a shell starting 12 sleepers under procs
 * = 8 cannot; the cgroups go once the runs are over, after a timeout too. */
START_TEST(test_cgroup_tree_procs)
{
    if (!(sb_layers_available() & SB_LAYER_CGROUP))
        return;
    sb_limits l;
    lim_tight(&l);
    l.procs = 8;
    sb_result r;
    run_sh(&r, &l, "n=0; for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 1 & n=$((n+1)); done; wait; echo started $n");
    ck_assert_ptr_null(strstr(r.out, "started 12"));
    ck_assert(r.layers & SB_LAYER_CGROUP);
    sb_result_dispose(&r);
    l.timeout_ms = 300;
    run_sh(&r, &l, "sleep 5 & sleep 5");
    ck_assert_int_eq(r.stop, SB_STOP_TIMEOUT);
    sb_result_dispose(&r);
    sb_release();
    if (access("/sys/fs/cgroup/pids", F_OK) == 0)
        ck_assert_int_eq(our_cgroups(), 0);
}
END_TEST

/* The disk bound: 40 files of 1 MB under disk_mb = 8 (and fsize 1, which
 * each of them passes): writing fails past ~8 MB; what was written before
 * is in the work dir afterwards, as are a changed file, a deletion and a
 * replaced directory; the work dir grew by at most 8 MB. The work dir
 * here is RAM-backed (/dev/shm), the case that needs the bound. */
START_TEST(test_disk_bound)
{
    if (!has_own_root())
        return;
    char top[64], work[96], path[PATH_MAX];
    snprintf(top, sizeof top, "/dev/shm/rl-sbt-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(top));
    ck_assert_int_eq(chmod(top, 0755), 0);
    snprintf(work, sizeof work, "%s/work", top);
    ck_assert_int_eq(mkdir(work, 0755), 0);
    snprintf(path, sizeof path, "%s/sub", work);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    const char *seed[][2] = {{"keep", "k\n"}, {"change", "old\n"}, {"gone", "g\n"}, {"sub/old", "o\n"}};
    for (size_t i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", work, seed[i][0]);
        FILE *f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs(seed[i][1], f);
        fclose(f);
    }
    sb_opts o;
    sb_opts_default(&o);
    lim_tight(&o.lim);
    o.lim.fsize_mb = 1;
    o.lim.disk_mb = 8;
    o.lim.timeout_ms = 20000;
    const char *argv[] = {"/bin/sh", "-c",
                          "echo new > change; rm gone; rm -r sub; mkdir sub; echo n > sub/new; "
                          "for i in $(seq 1 40); do head -c 1048576 /dev/zero > f$i 2>/dev/null || "
                          "{ echo failed at $i; break; }; done",
                          NULL};
    o.argv = argv;
    o.dir = work;
    sb_result r;
    char err[RL_ERR_MAX];
    ck_assert_msg(sb_run(&r, &o, err) == 0, "%s", err);
    int at = 0;
    ck_assert_msg(sscanf(r.out, "failed at %d", &at) == 1, "%s", r.out);
    ck_assert_int_ge(at, 7);
    ck_assert_int_le(at, 9);
    sb_result_dispose(&r);
    long total = 0;
    int files = 0;
    for (int i = 1; i <= 40; i++) {
        struct stat st;
        snprintf(path, sizeof path, "%s/f%d", work, i);
        if (stat(path, &st) == 0) {
            files++;
            total += st.st_size;
            ck_assert_int_le(i, at);
        }
    }
    ck_assert_int_ge(files, at - 1);
    ck_assert_int_ge(total, (long)(at - 1) << 20);
    ck_assert_int_le(total, 8L << 20);
    char *text = NULL;
    size_t len;
    snprintf(path, sizeof path, "%s/change", work);
    ck_assert_int_eq(fs_read_file(&text, &len, path, 64, NULL), 0);
    ck_assert_str_eq(text, "new\n");
    free(text);
    snprintf(path, sizeof path, "%s/keep", work);
    ck_assert(path_exists(path));
    snprintf(path, sizeof path, "%s/gone", work);
    ck_assert(!path_exists(path));
    snprintf(path, sizeof path, "%s/sub/old", work);
    ck_assert(!path_exists(path));
    snprintf(path, sizeof path, "%s/sub/new", work);
    ck_assert(path_exists(path));
    /* owned like the work dir */
    struct stat st, dir;
    snprintf(path, sizeof path, "%s/f1", work);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(stat(work, &dir), 0);
    ck_assert_int_eq(st.st_uid, dir.st_uid);
    /* without the bound the same command writes all 40 (fsize alone is per
     * file) */
    o.lim.disk_mb = 0;
    ck_assert_int_eq(sb_run(&r, &o, err), 0);
    ck_assert_msg(!strstr(r.out, "failed"), "%s", r.out);
    sb_result_dispose(&r);
    snprintf(path, sizeof path, "%s/f40", work);
    ck_assert(path_exists(path));
    fs_remove_tree(top, NULL);
}
END_TEST

Suite *sandbox_suite(void)
{
    Suite *s = suite_create("sandbox");
    TCase *unit = tcase_create("unit");
    tcase_add_checked_fixture(unit, fx_setup, fx_teardown);
    tcase_set_timeout(unit, 60);
    tcase_add_test(unit, test_defaults);
    tcase_add_test(unit, test_bad_options);
    tcase_add_test(unit, test_status_mapping);
    tcase_add_test(unit, test_layers_str);
    tcase_add_test(unit, test_json_record);
    tcase_add_test(unit, test_exit_codes);
    tcase_add_test(unit, test_output_and_stdin);
    tcase_add_test(unit, test_output_cap);
    tcase_add_test(unit, test_environment);
    tcase_add_test(unit, test_cwd_tmp_hostname);
    tcase_add_test(unit, test_rw_paths);
    tcase_add_test(unit, test_shm_work_dir);
    tcase_add_test(unit, test_privileges_and_limits);
    tcase_add_test(unit, test_cpu_and_rss);
    tcase_add_test(unit, test_procs_cap);
    tcase_add_test(unit, test_parallel_runs);
    tcase_add_test(unit, test_spare_reuse);
    tcase_add_test(unit, test_spare_thread_exit_and_fork);
    tcase_add_test(unit, test_spare_premounts);
    tcase_add_test(unit, test_signals_reset);
    tcase_add_test(unit, test_cli);
    tcase_add_test(unit, test_root_listing);
    tcase_add_test(unit, test_root_builds);
    tcase_add_test(unit, test_ro_paths);
    suite_add_tcase(s, unit);

    /* Hostile programs under tight limits; Check's timeout is the outer
     * bound should the sandbox ever fail to stop one. */
    TCase *adv = tcase_create("adversarial");
    tcase_add_checked_fixture(adv, fx_setup, fx_teardown);
    tcase_set_timeout(adv, 30);
    tcase_add_test(adv, test_adv_fork_bomb);
    tcase_add_test(adv, test_adv_busy_loop);
    tcase_add_test(adv, test_adv_sleeping_loop);
    tcase_add_test(adv, test_adv_memory_bomb);
    tcase_add_test(adv, test_adv_output_flood);
    tcase_add_test(adv, test_adv_disk_fill);
    tcase_add_test(adv, test_adv_network);
    tcase_add_test(adv, test_adv_io_uring);
    tcase_add_test(adv, test_adv_write_outside);
    tcase_add_test(adv, test_adv_kill_and_ptrace);
    tcase_add_test(adv, test_adv_daemon);
    tcase_add_test(adv, test_adv_secrets);
    tcase_add_test(adv, test_adv_inherited_fds);
    tcase_add_test(adv, test_adv_namespaces_and_mount);
    tcase_add_test(adv, test_root_hides_host);
    tcase_add_test(adv, test_root_host_socket);
    tcase_add_test(adv, test_cgroup_tree_memory);
    tcase_add_test(adv, test_limits_default_sets_every_field);
    tcase_add_test(adv, test_cgroup_tree_procs);
    tcase_add_test(adv, test_disk_bound);
    suite_add_tcase(s, adv);
    return s;
}
