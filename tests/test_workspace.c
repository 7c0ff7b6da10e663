/* test_workspace.c - Check suite for harness/workspace: open, reset,
 * apply, diff, restore, concurrency (slots and processes), forged files,
 * foreign-uid trees and error messages (disk full on a tiny tmpfs).
 *
 * Every test builds its own small repository in a temp dir; nothing here
 * depends on repos/.
 */
#include "harness/workspace.h"

#include "common/err.h"
#include "common/fsutil.h"
#include "sandbox/sandbox.h"

#include <check.h>
#include <sched.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

/* snprintf into a fixed buffer; paths here are short, a cut is a bug. */
static void fmt(char *out, size_t n, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void fmt(char *out, size_t n, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int r = vsnprintf(out, n, f, ap);
    va_end(ap);
    ck_assert_msg(r >= 0 && (size_t)r < n, "path too long: %s", out);
}

/* ---- fixture ---------------------------------------------------------- */

static char g_tmp[64];
static char g_repos[128];
static char g_root[128];
static ws_opts g_opts;

static const char *UTIL_C = "int add(int a, int b)\n{\n    return a + b;\n}\n"
                            "\nint sub(int a, int b)\n{\n    return a - b;\n}\n";
static const char *TEST_C = "#include <assert.h>\nint add(int, int);\n"
                            "int main(void) { assert(add(2, 2) == 4); return 0; }\n";

/* The bug: add() subtracts. */
static const char *BUG_PATCH =
    "diff --git a/src/util.c b/src/util.c\n"
    "--- a/src/util.c\n"
    "+++ b/src/util.c\n"
    "@@ -1,4 +1,4 @@\n"
    " int add(int a, int b)\n"
    " {\n"
    "-    return a + b;\n"
    "+    return a - b;\n"
    " }\n";

static void put(const char *dir, const char *rel, const char *content)
{
    char path[PATH_MAX], parent[PATH_MAX], err[RL_ERR_MAX];
    fmt(path, sizeof path, "%s/%s", dir, rel);
    fs_dirname(parent, sizeof parent, path);
    ck_assert_msg(fs_mkdirs(parent, err) == 0, "%s", err);
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    fputs(content, f);
    fclose(f);
}

/* Contents of dir/rel, or NULL if it cannot be read as a file. */
static char *get(const char *dir, const char *rel)
{
    char path[PATH_MAX];
    fmt(path, sizeof path, "%s/%s", dir, rel);
    char *data;
    if (fs_read_file(&data, NULL, path, 1 << 20, NULL) != 0)
        return NULL;
    return data;
}

static void ck_file(const char *dir, const char *rel, const char *want)
{
    char *got = get(dir, rel);
    ck_assert_msg(got != NULL, "%s/%s: missing", dir, rel);
    ck_assert_str_eq(got, want);
    free(got);
}

static int exists(const char *dir, const char *rel)
{
    char path[PATH_MAX];
    struct stat st;
    fmt(path, sizeof path, "%s/%s", dir, rel);
    return lstat(path, &st) == 0;
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void make_repo(const char *name)
{
    char dir[PATH_MAX];
    fmt(dir, sizeof dir, "%s/%s", g_repos, name);
    put(dir, "README.md", "# demo\n");
    put(dir, ".gitignore", "*.o\nbuild/\n");
    put(dir, "src/util.c", UTIL_C);
    put(dir, "src/main.c", "int main(void) { return 0; }\n");
    put(dir, "tests/test_util.c", TEST_C);
    put(dir, "tests/data/input.txt", "1 2 3\n");
    put(dir, "bin/run.sh", "#!/bin/sh\necho run\n");
    char p[PATH_MAX];
    fmt(p, sizeof p, "%s/bin/run.sh", dir);
    chmod(p, 0755);
    fmt(p, sizeof p, "%s/docs", dir);
    mkdir(p, 0755);
    fmt(p, sizeof p, "%s/docs/readme-link", dir);
    ck_assert_int_eq(symlink("../README.md", p), 0); /* a tracked symlink */
    /* A build output in the upstream folder must not become tracked. */
    put(dir, "src/util.o", "\x7f" "ELF junk\n");
}

static void setup(void)
{
    fmt(g_tmp, sizeof g_tmp, "/tmp/rl-ws-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(g_tmp));
    fmt(g_repos, sizeof g_repos, "%s/repos", g_tmp);
    fmt(g_root, sizeof g_root, "%s/ws", g_tmp);
    ws_opts_default(&g_opts);
    g_opts.root = g_root;
    g_opts.repos_dir = g_repos;
    make_repo("demo");
}

static void teardown(void)
{
    char err[RL_ERR_MAX];
    fs_remove_tree(g_tmp, err);
}

static ws_tree *open_ok(const char *key, const char *patch, int slot)
{
    ws_tree *t = NULL;
    char err[RL_ERR_MAX] = "";
    int rc = ws_open(&t, &g_opts, "demo", key, patch, slot, err);
    ck_assert_msg(rc == 0, "ws_open: %s", err);
    ck_assert_ptr_nonnull(t);
    return t;
}

static void reset_ok(ws_tree *t)
{
    char err[RL_ERR_MAX] = "";
    ck_assert_msg(ws_reset(t, err) == 0, "ws_reset: %s", err);
}

/* Every path under dir with its kind and content, sorted: two trees are
 * equal iff their snapshots are. */
static int snap_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void snap_walk(const char *root, const char *rel, char ***items, size_t *n)
{
    char path[PATH_MAX];
    fmt(path, sizeof path, "%s/%s", root, rel);
    DIR *d = opendir(path);
    ck_assert_msg(d != NULL, "opendir %s", path);
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        char r[PATH_MAX], full[PATH_MAX];
        fmt(r, sizeof r, "%s%s%s", rel, *rel ? "/" : "", de->d_name);
        fmt(full, sizeof full, "%s/%s", root, r);
        struct stat st;
        ck_assert_int_eq(lstat(full, &st), 0);
        char *item = NULL;
        if (S_ISDIR(st.st_mode)) {
            snap_walk(root, r, items, n);
            ck_assert_int_ge(asprintf(&item, "D %s", r), 0);
        } else if (S_ISLNK(st.st_mode)) {
            char tgt[PATH_MAX] = "";
            ck_assert_int_ge(readlink(full, tgt, sizeof tgt - 1), 0);
            ck_assert_int_ge(asprintf(&item, "L %s -> %s", r, tgt), 0);
        } else {
            char *c = get(root, r);
            ck_assert_ptr_nonnull(c);
            int mode = st.st_mode & 0111 ? 0755 : 0644;
            ck_assert_int_ge(asprintf(&item, "F %s %o\n%s", r, mode, c), 0);
            free(c);
        }
        *items = realloc(*items, (*n + 1) * sizeof **items);
        (*items)[(*n)++] = item;
    }
    closedir(d);
}

static char *snapshot(const char *root)
{
    char **items = NULL;
    size_t n = 0, len = 1;
    snap_walk(root, "", &items, &n);
    qsort(items, n, sizeof *items, snap_cmp);
    for (size_t i = 0; i < n; i++)
        len += strlen(items[i]) + 1;
    char *s = calloc(1, len);
    for (size_t i = 0; i < n; i++) {
        strcat(s, items[i]);
        strcat(s, "\n");
        free(items[i]);
    }
    free(items);
    return s;
}

/* The agent's typical mess: edits, deletions, new files, build outputs. */
static void dirty(const char *wt)
{
    put(wt, "src/util.c", "int add(int a, int b) { return 42; }\n");
    put(wt, "README.md", "# changed\n");
    char p[PATH_MAX];
    fmt(p, sizeof p, "%s/src/main.c", wt);
    ck_assert_int_eq(unlink(p), 0);
    put(wt, "src/new.c", "int extra;\n");
    put(wt, "newdir/deep/x.txt", "x\n");
    put(wt, "src/util.o", "obj\n");
    put(wt, "build/out/a.bin", "bin\n");
    fmt(p, sizeof p, "%s/emptydir", wt);
    ck_assert_int_eq(mkdir(p, 0755), 0);
    put(wt, "vendor/.git/HEAD", "ref: refs/heads/main\n"); /* nested repo */
    put(wt, ".git", "gitdir: /tmp/elsewhere\n");
    fmt(p, sizeof p, "%s/bin/run.sh", wt);
    ck_assert_int_eq(chmod(p, 0644), 0);
    fmt(p, sizeof p, "%s/tests/test_util.c", wt);
    ck_assert_int_eq(chmod(p, 0), 0);
    fmt(p, sizeof p, "%s/docs/readme-link", wt);
    ck_assert_int_eq(unlink(p), 0);
    ck_assert_int_eq(symlink("/etc/passwd", p), 0);
    fmt(p, sizeof p, "%s/src/util.c", wt);
    ck_assert_int_eq(chmod(p, 04755), 0);
    fmt(p, sizeof p, "%s/tests/data/input.txt", wt); /* content kept, mode not */
    ck_assert_int_eq(chmod(p, 06777), 0);
}

/* ---- open ------------------------------------------------------------- */

START_TEST(test_open_layout)
{
    ws_tree *t = open_ok("demo-1", NULL, 0);
    const char *wt = ws_path(t);
    ck_assert_int_eq(wt[0], '/');
    ck_file(wt, "src/util.c", UTIL_C);
    ck_file(wt, "tests/data/input.txt", "1 2 3\n");
    ck_assert(!exists(wt, ".git"));
    ck_assert(!exists(wt, "src/util.o")); /* ignored upstream, not committed */
    struct stat st;
    char p[PATH_MAX];
    fmt(p, sizeof p, "%s/bin/run.sh", wt);
    ck_assert_int_eq(stat(p, &st), 0);
    ck_assert(st.st_mode & 0100);
    /* git dir outside the work tree, sharing the store's objects */
    fmt(p, sizeof p, "%s/git/demo-1-0/objects/info/alternates", g_root);
    char *a = NULL;
    ck_assert_int_eq(fs_read_file(&a, NULL, p, 4096, NULL), 0);
    ck_assert_ptr_nonnull(strstr(a, "/store/demo.git/objects"));
    free(a);
    const char *id = ws_base_id(t);
    ck_assert_uint_eq(strlen(id), 40);
    char id1[41];
    fmt(id1, sizeof id1, "%s", id);
    ws_free(t);

    /* Idempotent: reopening reuses everything and gives the same base. */
    t = open_ok("demo-1", NULL, 0);
    ck_assert_str_eq(ws_base_id(t), id1);
    ws_free(t);

    /* Deterministic: a fresh root gives the same commit id. */
    char root2[160];
    fmt(root2, sizeof root2, "%s/ws2", g_tmp);
    g_opts.root = root2;
    t = open_ok("demo-1", NULL, 0);
    ck_assert_str_eq(ws_base_id(t), id1);
    ws_free(t);
    g_opts.root = g_root;

    /* `git` sees the base as HEAD of the slot's git dir. */
    ck_assert_int_eq(sh("cd %s && test \"$(git --git-dir=%s/git/demo-1-0 rev-parse HEAD)\" = %s",
                        g_tmp, g_root, id1), 0);
}
END_TEST

START_TEST(test_open_bug_patch_and_upstream_change)
{
    ws_tree *up = open_ok("up", NULL, 0);
    ws_tree *t = open_ok("demo-bug", BUG_PATCH, 0);
    ck_assert_str_ne(ws_base_id(t), ws_base_id(up));
    char *u = get(ws_path(t), "src/util.c");
    ck_assert_ptr_nonnull(strstr(u, "return a - b;\n}\n\nint sub"));
    free(u);
    /* the bug is the base: reset keeps it */
    reset_ok(t);
    u = get(ws_path(t), "src/util.c");
    ck_assert_ptr_nonnull(strstr(u, "return a - b;"));
    free(u);
    char id_before[41];
    fmt(id_before, sizeof id_before, "%s", ws_base_id(t));
    ws_free(t);
    ws_free(up);

    /* repos/demo changed: the upstream commit is re-made on the next open */
    char dir[PATH_MAX];
    fmt(dir, sizeof dir, "%s/demo", g_repos);
    put(dir, "README.md", "# demo v2\n");
    t = open_ok("demo-bug", BUG_PATCH, 0);
    ck_assert_str_ne(ws_base_id(t), id_before);
    ck_file(ws_path(t), "README.md", "# demo v2\n");
    u = get(ws_path(t), "src/util.c");
    ck_assert_ptr_nonnull(strstr(u, "return a - b;"));
    free(u);
    ws_free(t);
}
END_TEST

/* ---- reset ------------------------------------------------------------ */

START_TEST(test_reset_dirty_tree)
{
    /* _i = 1: no content cache, every blob read from the store */
    if (_i == 1)
        g_opts.cache_max = 0;
    ws_tree *t = open_ok("demo-1", BUG_PATCH, 0);
    const char *wt = ws_path(t);
    char *clean = snapshot(wt);
    dirty(wt);
    char *d = snapshot(wt);
    ck_assert_str_ne(d, clean);
    free(d);
    reset_ok(t);
    char *after = snapshot(wt);
    ck_assert_str_eq(after, clean);
    free(after);
    struct stat st;
    char p[PATH_MAX];
    fmt(p, sizeof p, "%s/tests/test_util.c", wt);
    ck_assert_int_eq(stat(p, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0644); /* chmod 0 undone */
    fmt(p, sizeof p, "%s/tests/data/input.txt", wt);
    ck_assert_int_eq(stat(p, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0644); /* setuid/setgid gone */
    free(clean);
    ws_free(t);
}
END_TEST

/* Symlinks planted by agent code must not make reset write outside. */
START_TEST(test_reset_symlink_escape)
{
    ws_tree *t = open_ok("demo-1", NULL, 0);
    const char *wt = ws_path(t);
    char *clean = snapshot(wt);
    char outside[PATH_MAX], p[PATH_MAX];
    fmt(outside, sizeof outside, "%s/outside", g_tmp);
    put(outside, "util.c", "precious\n");
    put(outside, "test_util.c", "precious too\n");
    /* tracked dir replaced by a symlink to a folder outside */
    fmt(p, sizeof p, "%s/src", wt);
    ck_assert_int_eq(fs_remove_tree(p, NULL), 0);
    ck_assert_int_eq(symlink(outside, p), 0);
    /* tracked file replaced by a symlink to a file outside */
    fmt(p, sizeof p, "%s/tests/test_util.c", wt);
    ck_assert_int_eq(unlink(p), 0);
    char tgt[PATH_MAX];
    fmt(tgt, sizeof tgt, "%s/test_util.c", outside);
    ck_assert_int_eq(symlink(tgt, p), 0);
    /* tracked file hard-linked to a file outside */
    fmt(p, sizeof p, "%s/README.md", wt);
    ck_assert_int_eq(unlink(p), 0);
    put(outside, "hard.txt", "hard\n");
    fmt(tgt, sizeof tgt, "%s/hard.txt", outside);
    ck_assert_int_eq(link(tgt, p), 0);

    reset_ok(t);
    char *after = snapshot(wt);
    ck_assert_str_eq(after, clean);
    ck_file(outside, "util.c", "precious\n");
    ck_file(outside, "test_util.c", "precious too\n");
    ck_file(outside, "hard.txt", "hard\n");
    free(after);
    free(clean);
    ws_free(t);
}
END_TEST

/* The pitfall: libgit2 trusts an index entry whose size and mtime match.
 * An edit of the same size with the mtime put back must still be undone,
 * and ws_diff must see it. */
START_TEST(test_reset_forged_mtime)
{
    ws_tree *t = open_ok("demo-1", NULL, 0);
    const char *wt = ws_path(t);
    char p[PATH_MAX];
    fmt(p, sizeof p, "%s/src/util.c", wt);
    struct stat before;
    ck_assert_int_eq(stat(p, &before), 0);
    /* Dirty the file and reset, so that the checkout writes it: a stat
     * cache (if any) now holds this very size and mtime. */
    char err[RL_ERR_MAX], *patch = NULL;
    put(wt, "src/util.c", "dirty\n");
    reset_ok(t);
    ck_assert_msg(ws_diff(&patch, t, err) == 0, "%s", err);
    ck_assert_str_eq(patch, "");
    free(patch);
    ck_assert_int_eq(stat(p, &before), 0);

    char *forged = strdup(UTIL_C);
    char *plus = strstr(forged, "a + b");
    plus[2] = '*'; /* same size */
    put(wt, "src/util.c", forged);
    struct timespec ts[2] = {before.st_atim, before.st_mtim};
    ck_assert_int_eq(utimensat(AT_FDCWD, p, ts, 0), 0);
    struct stat after;
    ck_assert_int_eq(stat(p, &after), 0);
    ck_assert_int_eq(after.st_size, before.st_size);
    ck_assert_int_eq(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
    ck_assert_int_eq(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);

    ck_assert_msg(ws_diff(&patch, t, err) == 0, "%s", err);
    ck_assert_ptr_nonnull(strstr(patch, "+    return a * b;"));
    free(patch);
    reset_ok(t);
    ck_file(wt, "src/util.c", UTIL_C);

    /* Also: truncated to empty with mtime 0 (what a zeroed stat cache
     * would hold). */
    put(wt, "src/util.c", "");
    struct timespec zero[2] = {{0, 0}, {0, 0}};
    ck_assert_int_eq(utimensat(AT_FDCWD, p, zero, 0), 0);
    reset_ok(t);
    ck_file(wt, "src/util.c", UTIL_C);
    free(forged);
    ws_free(t);
}
END_TEST

/* A nesting bomb deeper than the clean pass's depth cap. */
START_TEST(test_reset_deep_nesting)
{
    ws_tree *t = open_ok("demo-1", NULL, 0);
    const char *wt = ws_path(t);
    char *clean = snapshot(wt);
    int fd = open(wt, O_RDONLY | O_DIRECTORY);
    ck_assert_int_ge(fd, 0);
    for (int i = 0; i < 300; i++) {
        ck_assert_int_eq(mkdirat(fd, "d", 0755), 0);
        int nfd = openat(fd, "d", O_RDONLY | O_DIRECTORY);
        ck_assert_int_ge(nfd, 0);
        close(fd);
        fd = nfd;
    }
    int ffd = openat(fd, "leaf", O_WRONLY | O_CREAT, 0644);
    ck_assert_int_ge(ffd, 0);
    close(ffd);
    close(fd);
    reset_ok(t);
    char *after = snapshot(wt);
    ck_assert_str_eq(after, clean);
    free(after);
    free(clean);
    ws_free(t);
}
END_TEST

/* The sandbox chowns the tree to an unprivileged uid; agent files belong
 * to that uid. Owner validation must not get in the way. */
static int chown_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return lchown(p, 65534, 65534);
}

START_TEST(test_foreign_uid_tree)
{
    if (geteuid() != 0) {
        fprintf(stderr, "test_foreign_uid_tree: skipped (needs root to chown)\n");
        return;
    }
    ws_tree *t = open_ok("demo-1", NULL, 0);
    const char *wt = ws_path(t);
    char *clean = snapshot(wt);
    ck_assert_int_eq(nftw(wt, chown_cb, 16, FTW_PHYS), 0);
    put(wt, "src/util.c", "changed\n");
    put(wt, "agent.txt", "new\n");
    ck_assert_int_eq(nftw(wt, chown_cb, 16, FTW_PHYS), 0);

    char err[RL_ERR_MAX], *patch = NULL;
    ck_assert_msg(ws_diff(&patch, t, err) == 0, "%s", err);
    ck_assert_ptr_nonnull(strstr(patch, "+changed"));
    ck_assert_ptr_nonnull(strstr(patch, "b/agent.txt"));
    free(patch);
    const char *paths[] = {"src/util.c"};
    ck_assert_msg(ws_restore_paths(t, paths, 1, err) == 0, "%s", err);
    ck_file(wt, "src/util.c", UTIL_C);
    reset_ok(t);
    char *after = snapshot(wt);
    ck_assert_str_eq(after, clean);
    free(after);
    free(clean);
    ws_free(t);
}
END_TEST

/* ---- apply ------------------------------------------------------------ */

START_TEST(test_apply)
{
    ws_tree *t = open_ok("demo-bug", BUG_PATCH, 0);
    const char *wt = ws_path(t);
    char err[RL_ERR_MAX] = "";
    const char *fix = "diff --git a/src/util.c b/src/util.c\n"
                      "--- a/src/util.c\n"
                      "+++ b/src/util.c\n"
                      "@@ -1,4 +1,4 @@\n"
                      " int add(int a, int b)\n"
                      " {\n"
                      "-    return a - b;\n"
                      "+    return a + b;\n"
                      " }\n"
                      "diff --git a/notes.txt b/notes.txt\n"
                      "new file mode 100644\n"
                      "--- /dev/null\n"
                      "+++ b/notes.txt\n"
                      "@@ -0,0 +1 @@\n"
                      "+fixed\n";
    ck_assert_msg(ws_apply(t, fix, err) == 0, "%s", err);
    ck_file(wt, "src/util.c", UTIL_C);
    ck_file(wt, "notes.txt", "fixed\n");

    /* Applying it again fails: the hunk no longer matches. The message
     * names the file and the hunk, and nothing is written. */
    put(wt, "notes.txt", "keep\n");
    ck_assert_int_eq(ws_apply(t, fix, err), RL_EINVAL);
    ck_assert_msg(strstr(err, "src/util.c") && strstr(err, "hunk #1") &&
                      strstr(err, "@@ -1,4 +1,4 @@"),
                  "%s", err);
    ck_assert_ptr_null(strchr(err, '\n'));
    ck_file(wt, "notes.txt", "keep\n");

    /* Second hunk of a file fails: named as #2. */
    reset_ok(t);
    const char *two = "diff --git a/src/util.c b/src/util.c\n"
                      "--- a/src/util.c\n"
                      "+++ b/src/util.c\n"
                      "@@ -1,3 +1,3 @@\n"
                      "-int add(int a, int b)\n"
                      "+int add(int a, int c)\n"
                      " {\n"
                      "     return a - b;\n"
                      "@@ -6,3 +6,3 @@\n"
                      "-int mul(int a, int b)\n"
                      "+int mul(int a, int c)\n"
                      " {\n"
                      "     return a - b;\n";
    ck_assert_int_eq(ws_apply(t, two, err), RL_EINVAL);
    ck_assert_msg(strstr(err, "src/util.c: hunk #2 @@ -6,3 +6,3 @@"), "%s", err);
    char *u = get(wt, "src/util.c");
    ck_assert_ptr_nonnull(strstr(u, "int add(int a, int b)")); /* all or nothing */
    free(u);

    /* A file that is not there. */
    const char *missing = "diff --git a/nope.c b/nope.c\n"
                          "--- a/nope.c\n"
                          "+++ b/nope.c\n"
                          "@@ -1 +1 @@\n"
                          "-a\n"
                          "+b\n";
    ck_assert_int_eq(ws_apply(t, missing, err), RL_EINVAL);
    ck_assert_msg(strstr(err, "nope.c"), "%s", err);

    /* Malformed. */
    ck_assert_int_eq(ws_apply(t, "this is not a patch\n", err), RL_EPARSE);
    const char *torn = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1 @@ garbage\n-a\n";
    ck_assert_int_eq(ws_apply(t, torn, err), RL_EPARSE);
    ck_assert_int_eq(ws_apply(t, "", err), RL_EPARSE);
    ws_free(t);
}
END_TEST

START_TEST(test_apply_refuses_escapes)
{
    ws_tree *t = open_ok("demo-1", NULL, 0);
    const char *wt = ws_path(t);
    char err[RL_ERR_MAX] = "";
    const char *up = "diff --git a/../evil.txt b/../evil.txt\n"
                     "new file mode 100644\n"
                     "--- /dev/null\n"
                     "+++ b/../evil.txt\n"
                     "@@ -0,0 +1 @@\n"
                     "+evil\n";
    int rc = ws_apply(t, up, err);
    ck_assert_msg(rc == RL_EDENIED || rc == RL_EPARSE, "rc %d: %s", rc, err);
    char p[PATH_MAX];
    fmt(p, sizeof p, "%s/../evil.txt", wt);
    ck_assert_int_ne(access(p, F_OK), 0);

    const char *dotgit = "diff --git a/.git/hooks/pre-commit b/.git/hooks/pre-commit\n"
                         "new file mode 100755\n"
                         "--- /dev/null\n"
                         "+++ b/.git/hooks/pre-commit\n"
                         "@@ -0,0 +1 @@\n"
                         "+evil\n";
    ck_assert_int_eq(ws_apply(t, dotgit, err), RL_EDENIED);

    /* Through a symlink planted in the tree. */
    char outside[PATH_MAX];
    fmt(outside, sizeof outside, "%s/outside", g_tmp);
    put(outside, "victim.txt", "a\n");
    fmt(p, sizeof p, "%s/link", wt);
    ck_assert_int_eq(symlink(outside, p), 0);
    const char *via = "diff --git a/link/victim.txt b/link/victim.txt\n"
                      "--- a/link/victim.txt\n"
                      "+++ b/link/victim.txt\n"
                      "@@ -1 +1 @@\n"
                      "-a\n"
                      "+pwned\n";
    ck_assert_int_eq(ws_apply(t, via, err), RL_EDENIED);
    ck_assert_msg(strstr(err, "symlink"), "%s", err);
    ck_file(outside, "victim.txt", "a\n");
    ws_free(t);
}
END_TEST

/* ---- diff ------------------------------------------------------------- */

START_TEST(test_diff_roundtrip_git_apply)
{
    ws_tree *a = open_ok("demo-bug", BUG_PATCH, 0);
    ws_tree *b = open_ok("demo-bug", BUG_PATCH, 1);
    const char *wa = ws_path(a), *wb = ws_path(b);
    char err[RL_ERR_MAX], *patch = NULL;
    ck_assert_msg(ws_diff(&patch, a, err) == 0, "%s", err);
    ck_assert_str_eq(patch, "");
    free(patch);

    put(wa, "src/util.c", UTIL_C); /* the fix */
    put(wa, "README.md", "# demo\nno newline at end");
    char p[PATH_MAX];
    fmt(p, sizeof p, "%s/tests/data/input.txt", wa);
    ck_assert_int_eq(unlink(p), 0);
    fmt(p, sizeof p, "%s/tests/data", wa);
    ck_assert_int_eq(rmdir(p), 0);
    put(wa, "tests/test_new.c", "int t;\n");        /* untracked */
    put(wa, "newdir/deep/x.txt", "x\n");            /* untracked dir */
    put(wa, "empty.txt", "");                        /* untracked, empty */
    put(wa, "src/util.o", "object\n");               /* ignored */
    put(wa, "build/log.txt", "log\n");               /* ignored */
    FILE *f = fopen(strcat(strcpy(p, wa), "/data.bin"), "wb");
    for (int i = 0; i < 300; i++)
        fputc(i % 7 == 0 ? 0 : i & 0xff, f);
    fclose(f);
    fmt(p, sizeof p, "%s/bin/run.sh", wa);
    ck_assert_int_eq(chmod(p, 0644), 0);
    fmt(p, sizeof p, "%s/docs/readme-link", wa); /* retargeted symlink */
    ck_assert_int_eq(unlink(p), 0);
    ck_assert_int_eq(symlink("../src/util.c", p), 0);
    fmt(p, sizeof p, "%s/newlink", wa); /* new symlink */
    ck_assert_int_eq(symlink("README.md", p), 0);

    ck_assert_msg(ws_diff(&patch, a, err) == 0, "%s", err);
    ck_assert_ptr_nonnull(strstr(patch, "diff --git a/src/util.c b/src/util.c"));
    ck_assert_ptr_nonnull(strstr(patch, "+++ b/tests/test_new.c"));
    ck_assert_ptr_nonnull(strstr(patch, "b/newdir/deep/x.txt"));
    ck_assert_ptr_nonnull(strstr(patch, "deleted file mode 100644"));
    ck_assert_ptr_null(strstr(patch, "util.o"));
    ck_assert_ptr_null(strstr(patch, "build/log.txt"));

    /* `git apply` takes it on a fresh checkout of the base and yields the
     * same files (ignored ones aside). */
    char pf[PATH_MAX];
    fmt(pf, sizeof pf, "%s/change.patch", g_tmp);
    ck_assert_int_eq(fs_write_atomic(pf, patch, strlen(patch), err), 0);
    ck_assert_int_eq(sh("cd %s && git apply --check %s", wb, pf), 0);
    ck_assert_int_eq(sh("cd %s && git apply %s", wb, pf), 0);
    fmt(p, sizeof p, "%s/src/util.o", wa);
    unlink(p);
    fmt(p, sizeof p, "%s/build", wa);
    fs_remove_tree(p, NULL);
    char *sa = snapshot(wa), *sb = snapshot(wb);
    ck_assert_str_eq(sa, sb);
    free(sb);

    /* ws_apply takes it too, except the change of an existing symlink
     * (libgit2 reads it through the link): refused, by name. */
    reset_ok(b);
    ck_assert_int_eq(ws_apply(b, patch, err), RL_EUNSUP);
    ck_assert_msg(strstr(err, "docs/readme-link"), "%s", err);
    free(patch);
    fmt(p, sizeof p, "%s/docs/readme-link", wa);
    ck_assert_int_eq(unlink(p), 0);
    ck_assert_int_eq(symlink("../README.md", p), 0);
    free(sa);
    sa = snapshot(wa);
    ck_assert_msg(ws_diff(&patch, a, err) == 0, "%s", err);
    ck_assert_msg(ws_apply(b, patch, err) == 0, "%s", err);
    sb = snapshot(wb);
    ck_assert_str_eq(sa, sb);
    free(sb);
    free(sa);
    free(patch);
    ws_free(b);
    ws_free(a);
}
END_TEST

START_TEST(test_diff_cap_big_file)
{
    ws_tree *t = open_ok("demo-1", NULL, 0);
    char p[PATH_MAX], err[RL_ERR_MAX];
    fmt(p, sizeof p, "%s/huge.txt", ws_path(t));
    FILE *f = fopen(p, "w");
    for (int i = 0; i < (2 << 20) / 8; i++)
        fputs("1234567\n", f);
    fclose(f);
    char *patch = NULL;
    ck_assert_msg(ws_diff(&patch, t, err) == 0, "%s", err);
    ck_assert_str_eq(patch, "diff --git a/huge.txt b/huge.txt\nnew file mode 100644\n"
                            "Binary files /dev/null and b/huge.txt differ\n");
    free(patch);
    ws_free(t);
}
END_TEST

/* ---- restore ---------------------------------------------------------- */

START_TEST(test_restore_paths)
{
    ws_tree *t = open_ok("demo-1", NULL, 0);
    const char *wt = ws_path(t);
    char err[RL_ERR_MAX], p[PATH_MAX];
    put(wt, "tests/test_util.c", "int main(void) { return 0; } /* cheat */\n");
    fmt(p, sizeof p, "%s/tests/data/input.txt", wt);
    ck_assert_int_eq(unlink(p), 0);
    put(wt, "tests/conftest.c", "cheat\n");
    put(wt, "tests/data/extra/more.txt", "cheat\n");
    put(wt, "src/util.c", "agent fix\n");

    const char *dir[] = {"tests/"};
    ck_assert_msg(ws_restore_paths(t, dir, 1, err) == 0, "%s", err);
    ck_file(wt, "tests/test_util.c", TEST_C);
    ck_file(wt, "tests/data/input.txt", "1 2 3\n");
    ck_assert(!exists(wt, "tests/conftest.c"));
    ck_assert(!exists(wt, "tests/data/extra"));
    ck_file(wt, "src/util.c", "agent fix\n"); /* outside the list: kept */

    /* A protected file the agent deleted comes back; one it replaced by a
     * directory too; a listed file the base lacks goes. */
    fmt(p, sizeof p, "%s/tests/test_util.c", wt);
    ck_assert_int_eq(unlink(p), 0);
    fmt(p, sizeof p, "%s/README.md", wt);
    ck_assert_int_eq(unlink(p), 0);
    put(wt, "README.md/inner", "x\n");
    put(wt, "tests/extra.c", "x\n");
    const char *files[] = {"tests/test_util.c", "README.md", "tests/extra.c"};
    ck_assert_msg(ws_restore_paths(t, files, 3, err) == 0, "%s", err);
    ck_file(wt, "tests/test_util.c", TEST_C);
    ck_file(wt, "README.md", "# demo\n");
    ck_assert(!exists(wt, "tests/extra.c"));

    /* The whole tests dir replaced by a symlink to elsewhere. */
    char outside[PATH_MAX];
    fmt(outside, sizeof outside, "%s/outside", g_tmp);
    put(outside, "test_util.c", "outside\n");
    fmt(p, sizeof p, "%s/tests", wt);
    ck_assert_int_eq(fs_remove_tree(p, NULL), 0);
    ck_assert_int_eq(symlink(outside, p), 0);
    const char *one[] = {"tests/test_util.c"};
    ck_assert_msg(ws_restore_paths(t, one, 1, err) == 0, "%s", err);
    ck_file(wt, "tests/test_util.c", TEST_C);
    ck_file(outside, "test_util.c", "outside\n");

    const char *bad[] = {"../etc/passwd"};
    ck_assert_int_eq(ws_restore_paths(t, bad, 1, err), RL_EINVAL);
    const char *bad2[] = {"/etc/passwd"};
    ck_assert_int_eq(ws_restore_paths(t, bad2, 1, err), RL_EINVAL);
    ws_free(t);
}
END_TEST

/* ---- the change as scoring takes it ----------------------------------- */

START_TEST(test_change_hermetic)
{
    ws_tree *t = open_ok("demo-ch", NULL, 0);
    const char *wt = ws_path(t);
    char err[RL_ERR_MAX], *patch = NULL;

    put(wt, "src/util.c", "agent fix\n");          /* tracked, changed: in */
    put(wt, "src/new.c", "int n;\n");               /* new, not ignored: in */
    put(wt, "src/cache.o", "\x7f" "ELF\n");        /* ignored by the base (*.o): out */
    put(wt, "build/run_tests", "binary\n");         /* ignored by the base (build/): out */
    /* An ignore file the tree gained hides nothing: hide.c stays in. */
    put(wt, ".gitignore", "*.o\nbuild/\nhide.c\n");
    put(wt, "src/hide.c", "__attribute__((constructor)) static void f(void) {}\n");
    put(wt, "sub/.gitignore", "*\n");
    put(wt, "sub/x.c", "int x;\n");
    put(wt, "tests/test_util.c", "cheat\n");        /* excluded: protected */
    const char *prot[] = {"tests/", "Makefile"};
    ck_assert_msg(ws_change(&patch, t, prot, 2, err) == 0, "%s", err);
    ck_assert_ptr_nonnull(strstr(patch, "+agent fix"));
    ck_assert_ptr_nonnull(strstr(patch, "b/src/new.c"));
    ck_assert_ptr_nonnull(strstr(patch, "b/src/hide.c"));
    ck_assert_ptr_nonnull(strstr(patch, "b/.gitignore"));
    ck_assert_ptr_nonnull(strstr(patch, "b/sub/x.c"));
    ck_assert_ptr_null(strstr(patch, "cache.o"));
    ck_assert_ptr_null(strstr(patch, "run_tests"));
    ck_assert_ptr_null(strstr(patch, "tests/test_util.c"));

    /* Staged in the companion: exactly the change on a fresh base; the
     * policy's tree is untouched, and what a run leaves in the companion
     * is gone at the next stage. */
    ws_tree *c = NULL;
    ck_assert_msg(ws_stage(&c, t, patch, err) == 0, "%s", err);
    ck_assert_str_ne(ws_path(c), wt);
    ck_file(ws_path(c), "src/util.c", "agent fix\n");
    ck_file(ws_path(c), "sub/x.c", "int x;\n");
    ck_file(ws_path(c), "tests/test_util.c", TEST_C);
    ck_assert(!exists(ws_path(c), "build/run_tests"));
    ck_assert(!exists(ws_path(c), "src/cache.o"));
    ck_file(wt, "build/run_tests", "binary\n");
    put(ws_path(c), "build/leftover", "from a run\n");
    put(ws_path(c), "src/__pycache__/util.pyc", "stale\n");
    free(patch);
    ck_assert_msg(ws_change(&patch, t, prot, 2, err) == 0, "%s", err);
    ck_assert_msg(ws_stage(&c, t, patch, err) == 0, "%s", err);
    ck_assert(!exists(ws_path(c), "build/leftover"));
    ck_assert(!exists(ws_path(c), "src/__pycache__"));
    free(patch);

    /* A clean tree has no change. */
    reset_ok(t);
    ck_assert_msg(ws_change(&patch, t, NULL, 0, err) == 0, "%s", err);
    ck_assert_str_eq(patch, "");
    free(patch);
    ws_free(t);
}
END_TEST

/* ---- concurrency ------------------------------------------------------ */

START_TEST(test_two_slots)
{
    ws_tree *a = open_ok("demo-1", BUG_PATCH, 0);
    ws_tree *b = open_ok("demo-1", BUG_PATCH, 1);
    ck_assert_str_ne(ws_path(a), ws_path(b));
    ck_assert_str_eq(ws_base_id(a), ws_base_id(b));
    put(ws_path(a), "src/util.c", "slot a\n");
    put(ws_path(b), "src/util.c", "slot b\n");
    reset_ok(b);
    ck_file(ws_path(a), "src/util.c", "slot a\n");
    char *u = get(ws_path(b), "src/util.c");
    ck_assert_ptr_nonnull(strstr(u, "return a - b;"));
    free(u);

    /* One slot, one user. */
    ws_tree *c = NULL;
    char err[RL_ERR_MAX];
    ck_assert_int_eq(ws_open(&c, &g_opts, "demo", "demo-1", BUG_PATCH, 0, err), RL_EINVAL);
    ck_assert_msg(strstr(err, "in use"), "%s", err);
    ck_assert_ptr_null(c);
    ws_free(a);
    c = open_ok("demo-1", BUG_PATCH, 0); /* free releases it */
    ws_free(c);
    ws_free(b);
}
END_TEST

/* Several processes open the same repo on a fresh root at the same moment
 * (a GRPO group's workers): all succeed with the same base. */
START_TEST(test_processes_race)
{
    enum { NPROC = 4, ROUNDS = 3 };
    for (int round = 0; round < ROUNDS; round++) {
        char root[160];
        fmt(root, sizeof root, "%s/race%d", g_tmp, round);
        g_opts.root = root;
        int go[2], res[2];
        ck_assert_int_eq(pipe(go), 0);
        ck_assert_int_eq(pipe(res), 0);
        pid_t pids[NPROC];
        for (int i = 0; i < NPROC; i++) {
            pids[i] = fork();
            ck_assert_int_ge(pids[i], 0);
            if (pids[i] == 0) {
                close(go[1]);
                char c;
                if (read(go[0], &c, 1) != 0) /* wait for the start */
                    _exit(3);
                ws_tree *t = NULL;
                char err[RL_ERR_MAX];
                if (ws_open(&t, &g_opts, "demo", "demo-race", BUG_PATCH, i, err)) {
                    fprintf(stderr, "child %d: %s\n", i, err);
                    _exit(1);
                }
                char *u = get(ws_path(t), "src/util.c");
                int ok = u && strstr(u, "return a - b;");
                free(u);
                put(ws_path(t), "junk.txt", "x");
                if (!ok || ws_reset(t, err) || exists(ws_path(t), "junk.txt"))
                    _exit(2);
                char line[64];
                int n = snprintf(line, sizeof line, "%.40s\n", ws_base_id(t));
                if (write(res[1], line, (size_t)n) != n)
                    _exit(4);
                ws_free(t);
                _exit(0);
            }
        }
        close(go[0]);
        close(res[1]);
        close(go[1]); /* all children start now */
        for (int i = 0; i < NPROC; i++) {
            int st;
            ck_assert_int_eq(waitpid(pids[i], &st, 0), pids[i]);
            ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child %d status %d", i, st);
        }
        char buf[NPROC * 41 + 1] = "";
        size_t got = 0;
        ssize_t r;
        while ((r = read(res[0], buf + got, sizeof buf - 1 - got)) > 0)
            got += (size_t)r;
        close(res[0]);
        buf[got] = '\0';
        ck_assert_uint_eq(got, NPROC * 41);
        for (int i = 1; i < NPROC; i++)
            ck_assert_int_eq(memcmp(buf, buf + i * 41, 41), 0);
    }
    g_opts.root = g_root;
}
END_TEST

/* ---- errors ----------------------------------------------------------- */

START_TEST(test_errors)
{
    ws_tree *t = NULL;
    char err[RL_ERR_MAX];
    ck_assert_int_eq(ws_open(&t, &g_opts, "nosuch", "k", NULL, 0, err), RL_ENOENT);
    ck_assert_msg(strstr(err, "repos/nosuch") && strstr(err, "not found"), "%s", err);
    ck_assert_ptr_null(t);

    put(g_repos, "afile", "x\n");
    ck_assert_int_eq(ws_open(&t, &g_opts, "afile", "k", NULL, 0, err), RL_EINVAL);
    ck_assert_msg(strstr(err, "repos/afile") && strstr(err, "not a folder"), "%s", err);

    ck_assert_int_eq(ws_open(&t, &g_opts, "../demo", "k", NULL, 0, err), RL_EINVAL);
    ck_assert_int_eq(ws_open(&t, &g_opts, "demo", "a/b", NULL, 0, err), RL_EINVAL);
    ck_assert_int_eq(ws_open(&t, &g_opts, "demo", "", NULL, 0, err), RL_EINVAL);
    ck_assert_int_eq(ws_open(&t, &g_opts, "demo", "k", NULL, -1, err), RL_EINVAL);

    /* A bug patch that does not apply: which file, which hunk. */
    const char *stale = "diff --git a/src/main.c b/src/main.c\n"
                        "--- a/src/main.c\n"
                        "+++ b/src/main.c\n"
                        "@@ -1 +1 @@\n"
                        "-int main(void) { return 1; }\n"
                        "+int main(void) { return 2; }\n";
    ck_assert_int_eq(ws_open(&t, &g_opts, "demo", "k", stale, 0, err), RL_EINVAL);
    ck_assert_msg(strstr(err, "bug patch of k") && strstr(err, "src/main.c") &&
                      strstr(err, "hunk #1"),
                  "%s", err);
    ck_assert_ptr_null(t);

    /* The root is a file. */
    char root[160];
    fmt(root, sizeof root, "%s/rootfile", g_tmp);
    put(g_tmp, "rootfile", "x");
    g_opts.root = root;
    ck_assert_int_ne(ws_open(&t, &g_opts, "demo", "k", NULL, 0, err), 0);
    ck_assert_msg(strstr(err, "rootfile"), "%s", err);
    g_opts.root = g_root;
}
END_TEST

/* Disk full: the workspace root on a tiny tmpfs. */
START_TEST(test_disk_full)
{
    char mnt[160], err[RL_ERR_MAX];
    fmt(mnt, sizeof mnt, "%s/tiny", g_tmp);
    ck_assert_int_eq(mkdir(mnt, 0755), 0);
    /* A private mount namespace when we can get one: the tmpfs then goes
     * away with this test's process, even if an assertion fails first. */
    if (unshare(CLONE_NEWNS) == 0)
        (void)mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
    if (mount("tmpfs", mnt, "tmpfs", 0, "size=256k") != 0) {
        fprintf(stderr, "test_disk_full: skipped (cannot mount tmpfs: %s)\n", strerror(errno));
        return;
    }
    /* incompressible 512 KB file: its blob cannot fit */
    char dir[PATH_MAX], p[PATH_MAX];
    fmt(dir, sizeof dir, "%s/big", g_repos);
    put(dir, "small.txt", "ok\n");
    fmt(p, sizeof p, "%s/blob.bin", dir);
    FILE *f = fopen(p, "wb");
    unsigned x = 12345;
    for (int i = 0; i < 512 * 1024; i++) {
        x = x * 1103515245u + 12345u;
        fputc((int)(x >> 16) & 0xff, f);
    }
    fclose(f);
    char root[200];
    fmt(root, sizeof root, "%s/ws", mnt);
    g_opts.root = root;
    ws_tree *t = NULL;
    int rc = ws_open(&t, &g_opts, "big", "k", NULL, 0, err);
    ck_assert_msg(rc == RL_ENOSPC, "rc %d: %s", rc, err);
    ck_assert_msg(strstr(err, "no space left") && strstr(err, mnt), "%s", err);
    ck_assert_ptr_null(strchr(err, '\n'));

    /* Full while applying a patch. */
    ck_assert_int_eq(umount(mnt), 0);
    ck_assert_int_eq(mount("tmpfs", mnt, "tmpfs", 0, "size=1m"), 0);
    t = NULL;
    rc = ws_open(&t, &g_opts, "demo", "k", NULL, 0, err);
    ck_assert_msg(rc == 0, "%s", err);
    fmt(p, sizeof p, "%s/filler", mnt);
    f = fopen(p, "wb");
    char chunk[4096] = {0};
    while (fwrite(chunk, 1, sizeof chunk, f) == sizeof chunk && fflush(f) == 0)
        ;
    fclose(f);
    char *big = malloc(200000);
    strcpy(big, "diff --git a/big.txt b/big.txt\nnew file mode 100644\n--- /dev/null\n"
                "+++ b/big.txt\n@@ -0,0 +1,2000 @@\n");
    for (int i = 0; i < 2000; i++) {
        char line[64];
        fmt(line, sizeof line, "+line %d %u\n", i, x = x * 1103515245u + 12345u);
        strcat(big, line);
    }
    rc = ws_apply(t, big, err);
    ck_assert_msg(rc == RL_ENOSPC, "rc %d: %s", rc, err);
    ck_assert_msg(strstr(err, "no space left") && strstr(err, mnt), "%s", err);
    free(big);
    /* Full while reset writes a file back. */
    fmt(p, sizeof p, "%s/src/util.c", ws_path(t));
    ck_assert_int_eq(unlink(p), 0);
    f = fopen(p, "wb"); /* the space the unlink freed goes to filler */
    ck_assert_ptr_nonnull(f);
    while (fwrite(chunk, 1, sizeof chunk, f) == sizeof chunk && fflush(f) == 0)
        ;
    fclose(f);
    fmt(p, sizeof p, "%s/filler2", mnt);
    ck_assert_int_eq(rename(strcat(strcpy(chunk, ws_path(t)), "/src/util.c"), p), 0);
    rc = ws_reset(t, err);
    ck_assert_msg(rc == RL_ENOSPC, "rc %d: %s", rc, err);
    ck_assert_msg(strstr(err, "no space left") && strstr(err, "src/util.c"), "%s", err);
    ck_assert_int_eq(unlink(p), 0);
    fmt(p, sizeof p, "%s/filler", mnt);
    ck_assert_int_eq(unlink(p), 0);
    reset_ok(t); /* space again: the tree comes back */
    ck_file(ws_path(t), "src/util.c", UTIL_C);
    ws_free(t);
    g_opts.root = g_root;
    umount2(mnt, MNT_DETACH);
}
END_TEST

/* ---- default root ----------------------------------------------------- */

/* Without RL_WS_ROOT the work trees go to a folder of ours on /dev/shm
 * when it is a tmpfs. One episode there: open, the agent's command edits
 * and builds in the sandbox (which must see and write the tree under its
 * private /dev/shm), reset restores the base. */
START_TEST(test_default_root_episode)
{
    ws_opts o;
    setenv("RL_WS_ROOT", g_root, 1);
    ws_opts_default(&o);
    ck_assert_str_eq(o.root, g_root);
    unsetenv("RL_WS_ROOT");
    ws_opts_default(&o);
    struct statfs fs;
    if (statfs("/dev/shm", &fs) == 0 && fs.f_type == TMPFS_MAGIC && access("/dev/shm", W_OK) == 0) {
        char want[64];
        fmt(want, sizeof want, "/dev/shm/rl-ws-%u-", (unsigned)geteuid());
        ck_assert_msg(!strncmp(o.root, want, strlen(want)), "default root %s", o.root);
        struct stat st;
        ck_assert_int_eq(lstat(o.root, &st), 0);
        ck_assert(S_ISDIR(st.st_mode));
        ck_assert_uint_eq(st.st_uid, geteuid());
        ck_assert_uint_eq(st.st_mode & 07777, geteuid() == 0 ? 0755 : 0700);
    } else {
        ck_assert_str_eq(o.root, "build/ws");
    }
    ws_opts o2;
    ws_opts_default(&o2);
    ck_assert_str_eq(o2.root, o.root);

    char repo[64], key[64], err[RL_ERR_MAX] = "";
    fmt(repo, sizeof repo, "ck-default-%d", (int)getpid());
    fmt(key, sizeof key, "ck-default-%d", (int)getpid());
    make_repo(repo);
    o.repos_dir = g_repos;
    ws_tree *t = NULL;
    ck_assert_msg(ws_open(&t, &o, repo, key, BUG_PATCH, 0, err) == 0, "ws_open: %s", err);
    char *before = snapshot(ws_path(t));

    const char *argv[] = {"/bin/sh", "-c",
                          "sed -i 's/a - b/a + b/' src/util.c && rm src/main.c && "
                          "echo 'int extra;' > src/new.c && mkdir -p build/out && "
                          "echo bin > build/out/a.bin && cc -c tests/test_util.c -o tests/test_util.o && "
                          "chmod 755 README.md && echo agent-done",
                          NULL};
    sb_opts so;
    sb_opts_default(&so);
    so.argv = argv;
    so.dir = ws_path(t);
    sb_result r;
    ck_assert_msg(sb_run(&r, &so, err) == 0, "sb_run: %s", err);
    ck_assert_msg(r.exit_code == 0 && strstr(r.out, "agent-done"), "%s", r.out);
    sb_result_dispose(&r);
    ck_assert(exists(ws_path(t), "src/new.c"));
    ck_assert(exists(ws_path(t), "tests/test_util.o"));
    ck_assert(!exists(ws_path(t), "src/main.c"));

    reset_ok(t);
    char *after = snapshot(ws_path(t));
    ck_assert_str_eq(after, before);
    char *patch = NULL;
    ck_assert_msg(ws_diff(&patch, t, err) == 0, "%s", err);
    ck_assert_str_eq(patch, "");
    free(patch);
    free(before);
    free(after);
    ws_free(t);

    /* only what this test made goes */
    const char *made[] = {"trees/%s-0", "git/%s-0", "store/%s.git", "locks/store-%s.lock",
                          "locks/tree-%s-0.lock"};
    for (size_t i = 0; i < sizeof made / sizeof made[0]; i++) {
        char rel[128], path[PATH_MAX];
        fmt(rel, sizeof rel, made[i], i == 2 || i == 3 ? repo : key);
        fmt(path, sizeof path, "%s/%s", o.root, rel);
        ck_assert_msg(fs_remove_tree(path, err) == 0, "%s", err);
    }
}
END_TEST

Suite *workspace_suite(void)
{
    Suite *s = suite_create("workspace");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_open_layout);
    tcase_add_test(tc, test_open_bug_patch_and_upstream_change);
    tcase_add_loop_test(tc, test_reset_dirty_tree, 0, 2);
    tcase_add_test(tc, test_reset_symlink_escape);
    tcase_add_test(tc, test_reset_forged_mtime);
    tcase_add_test(tc, test_reset_deep_nesting);
    tcase_add_test(tc, test_foreign_uid_tree);
    tcase_add_test(tc, test_apply);
    tcase_add_test(tc, test_apply_refuses_escapes);
    tcase_add_test(tc, test_diff_roundtrip_git_apply);
    tcase_add_test(tc, test_diff_cap_big_file);
    tcase_add_test(tc, test_restore_paths);
    tcase_add_test(tc, test_change_hermetic);
    tcase_add_test(tc, test_two_slots);
    tcase_add_test(tc, test_processes_race);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_disk_full);
    tcase_add_test(tc, test_default_root_episode);
    suite_add_tcase(s, tc);
    return s;
}
