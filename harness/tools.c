/* tools.c - tool specs, confined file access, and the five file tools.
 *
 * Layout: specs; context; path checks and confined opening (openat2, or
 * the O_NOFOLLOW walk); whole-file read and write; the directory walker
 * shared by list_files and search; the tools; observation clean-up
 * (valid UTF-8, budget cut); the dispatcher.
 */
#include "harness/tools.h"

#include "common/utf8.h"

#include "common/clock.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/vec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- specs -------------------------------------------------------------- */

static const tc_param P_LIST[] = {
    {"path", TC_STRING, 0, "Directory to list (default: the whole tree)."},
};
#define RL_STR_(x) #x
#define RL_STR(x) RL_STR_(x)
static const tc_param P_READ[] = {
    {"path", TC_STRING, 1, "File to read."},
    {"start_line", TC_INT, 0, "First line to show (default: 1)."},
    {"end_line", TC_INT, 0, "Last line to show (default: the last line; with start_line alone, "
                                 "the " RL_STR(RL_TOOL_READ_WINDOW) " lines from start_line)."},
};
static const tc_param P_SEARCH[] = {
    {"pattern", TC_STRING, 1, "Text to find, on one line."},
    {"path", TC_STRING, 0, "File or directory to search (default: the whole tree)."},
};
static const tc_param P_EDIT[] = {
    {"path", TC_STRING, 1, "File to edit."},
    {"old_string", TC_STRING, 1, "Exact text to replace, whitespace included, without line "
                                   "numbers. It must occur exactly once: include enough lines "
                                   "to make it unique."},
    {"new_string", TC_STRING, 1, "Replacement text."},
};
static const tc_param P_WRITE[] = {
    {"path", TC_STRING, 1, "File to write."},
    {"content", TC_STRING, 1, "The whole content of the file."},
};
static const tc_param P_TESTS[] = {
    {"tests", TC_STRINGS, 0, "Names of the tests to run (default: all)."},
};

static const tc_spec SPECS[] = {
    {"list_files", "List the files of the tree, one path per line.", P_LIST, 1},
    {"read_file", "Show a text file with line numbers.", P_READ, 3},
    {"search", "Find the lines that contain a fixed text (case-sensitive, not a regular "
               "expression); prints path:line: text for each.", P_SEARCH, 2},
    {"edit_file", "Replace one occurrence of old_string by new_string in a file.", P_EDIT, 3},
    {"write_file", "Create a file or overwrite it; missing directories are created.", P_WRITE,
     2},
    {"run_tests", "Build the project and run its tests; prints one line per test and the "
                  "failure messages.", P_TESTS, 1},
    {"submit", "Finish: submit the current state of the files as your fix.", NULL, 0},
};

const tc_spec *tool_specs(size_t *n)
{
    *n = sizeof SPECS / sizeof SPECS[0];
    return SPECS;
}

/* ---- context ------------------------------------------------------------ */

void tool_ctx_default(tool_ctx *c)
{
    memset(c, 0, sizeof *c);
    c->root_fd = -1;
    c->obs_budget = RL_TOOL_OBS_BUDGET;
    c->time_ms = RL_TOOL_TIME_MS;
    c->read_max = RL_TOOL_READ_MAX;
    c->read_window = RL_TOOL_READ_WINDOW;
    c->edit_hints = 1;
    c->write_max = RL_TOOL_WRITE_MAX;
    c->list_show_max = RL_TOOL_LIST_SHOW_MAX;
    c->visit_max = RL_TOOL_LIST_VISIT_MAX;
    c->search_files_max = RL_TOOL_SEARCH_FILES_MAX;
    c->search_bytes_max = RL_TOOL_SEARCH_BYTES_MAX;
    c->search_matches_max = RL_TOOL_SEARCH_MATCHES_MAX;
}

int tool_ctx_init(tool_ctx *c, const char *root, char *err)
{
    int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return rl_err(err, rl_from_errno(errno), "work tree %s: %s: expected a directory", root,
                      strerror(errno));
    if (c->root_fd >= 0)
        close(c->root_fd);
    c->root_fd = fd;
    snprintf(c->root, sizeof c->root, "%s", root);
    return 0;
}

void tool_ctx_dispose(tool_ctx *c)
{
    if (c->root_fd >= 0)
        close(c->root_fd);
    c->root_fd = -1;
}

void tool_result_dispose(tool_result *r)
{
    free(r->obs);
    memset(r, 0, sizeof *r);
}

/* ---- paths -------------------------------------------------------------- */

/* Normal form of a checked path: components joined by '/', "." for the
 * root. out holds RL_TOOL_PATH_MAX + 1 bytes. */
static int path_norm(char *out, const char *path, char *err)
{
    size_t n = strlen(path), o = 0;
    if (!n)
        return rl_err(err, RL_EINVAL, "path is empty: expected a path relative to the work "
                      "tree root, like src/main.c");
    if (n > RL_TOOL_PATH_MAX)
        return rl_err(err, RL_EINVAL, "path is %zu bytes: at most %d", n, RL_TOOL_PATH_MAX);
    if (path[0] == '/')
        return rl_err(err, RL_EDENIED, "path %s is absolute: expected a path relative to the "
                      "work tree root", path);
    for (const char *p = path; *p;) {
        const char *e = strchr(p, '/');
        size_t k = e ? (size_t)(e - p) : strlen(p);
        if (k == 2 && p[0] == '.' && p[1] == '.')
            return rl_err(err, RL_EDENIED, "path %s contains \"..\": expected a path inside "
                          "the work tree without \"..\"", path);
        if (k == 4 && memcmp(p, ".git", 4) == 0)
            return rl_err(err, RL_EDENIED, "path %s is inside .git: version-control internals "
                          "are not accessible", path);
        if (k && !(k == 1 && p[0] == '.')) {
            if (o)
                out[o++] = '/';
            memcpy(out + o, p, k);
            o += k;
        }
        p += k + (e ? 1 : 0);
    }
    if (!o)
        out[o++] = '.';
    out[o] = '\0';
    return 0;
}

int tool_path_check(const char *path, char *err)
{
    char tmp[RL_TOOL_PATH_MAX + 1];
    return path_norm(tmp, path ? path : "", err);
}

/* The portable resolution: one component at a time from the root, never
 * following a symlink. Returns an fd or -errno. */
static int walk_open(int root, const char *path, int flags, mode_t mode)
{
    char buf[RL_TOOL_PATH_MAX + 1];
    snprintf(buf, sizeof buf, "%s", path);
    int dfd = fcntl(root, F_DUPFD_CLOEXEC, 0);
    if (dfd < 0)
        return -errno;
    char *save = NULL, *comp = strtok_r(buf, "/", &save);
    if (!comp || strcmp(path, ".") == 0) { /* normalized: "." only for the root */
        int fd = openat(dfd, ".", flags | O_CLOEXEC, mode);
        int e = errno;
        close(dfd);
        return fd < 0 ? -e : fd;
    }
    for (;;) {
        char *next = strtok_r(NULL, "/", &save);
        struct stat st;
        if (!next) {
            if (fstatat(dfd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
                close(dfd);
                return -ELOOP;
            }
            int fd = openat(dfd, comp, flags | O_NOFOLLOW | O_CLOEXEC, mode);
            int e = errno;
            close(dfd);
            return fd < 0 ? -e : fd;
        }
        if (fstatat(dfd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
            close(dfd);
            return -ELOOP;
        }
        int nfd = openat(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        close(dfd);
        if (nfd < 0)
            return -e;
        dfd = nfd;
        comp = next;
    }
}

/* Opens a normalized path beneath the root. Returns an fd or -errno. */
static int open_beneath(const tool_ctx *c, const char *path, int flags, mode_t mode)
{
    if (!c->walk_only) {
        struct open_how how;
        memset(&how, 0, sizeof how);
        how.flags = (unsigned long long)(flags | O_CLOEXEC);
        how.mode = (flags & O_CREAT) ? mode : 0;
        how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
        for (int tries = 0; tries < 8; tries++) {
            long fd = syscall(SYS_openat2, c->root_fd, path, &how, sizeof how);
            if (fd >= 0)
                return (int)fd;
            if (errno == EAGAIN || errno == EINTR) /* a concurrent rename: retry */
                continue;
            if (errno != ENOSYS)
                return -errno;
            break;
        }
    }
    return walk_open(c->root_fd, path, flags, mode);
}

/* One line for a failed open of path. */
static int open_err(char *err, int e, const char *path)
{
    switch (e) {
    case EXDEV:
        return rl_err(err, RL_EDENIED, "path %s leads outside the work tree (through a symlink): "
                      "refused", path);
    case ELOOP:
        return rl_err(err, RL_EDENIED, "path %s goes through a symlink that is not followed "
                      "here: refused", path);
    case ENOENT:
        return rl_err(err, RL_ENOENT, "no such file or directory: %s", path);
    case ENOTDIR:
        return rl_err(err, RL_ENOENT, "path %s: a parent is not a directory", path);
    case EISDIR:
        return rl_err(err, RL_EINVAL, "%s is a directory: expected a file", path);
    case EACCES:
    case EPERM:
        return rl_err(err, RL_EDENIED, "path %s: permission denied", path);
    case ENAMETOOLONG:
        return rl_err(err, RL_EINVAL, "path %s: a name is too long", path);
    default:
        return rl_err(err, rl_from_errno(e), "path %s: %s", path, strerror(e));
    }
}

static const char *kind_name(mode_t m)
{
    if (S_ISDIR(m)) return "directory";
    if (S_ISLNK(m)) return "symlink";
    if (S_ISFIFO(m)) return "FIFO";
    if (S_ISSOCK(m)) return "socket";
    if (S_ISCHR(m) || S_ISBLK(m)) return "device";
    return "regular file";
}

/* Refuses what is not a plain file: directories, FIFOs, devices, sockets,
 * and files with several links (a hard link may point outside the tree). */
static int regular_check(const struct stat *st, const char *path, char *err)
{
    if (S_ISDIR(st->st_mode))
        return rl_err(err, RL_EINVAL, "%s is a directory: expected a file (list_files lists "
                      "directories)", path);
    if (!S_ISREG(st->st_mode))
        return rl_err(err, RL_EDENIED, "%s is a %s: only regular files can be used", path,
                      kind_name(st->st_mode));
    if (st->st_nlink > 1)
        return rl_err(err, RL_EDENIED, "%s has %lu hard links: only files with one link can be "
                      "used", path, (unsigned long)st->st_nlink);
    return 0;
}

/* Opens an existing regular file for reading. The type is checked on an
 * O_PATH descriptor first, so a FIFO or device is never opened for I/O;
 * the second open must find the same inode. */
static int file_open_read(int *out, struct stat *st, const tool_ctx *c, const char *path,
                          char *err)
{
    int fd = open_beneath(c, path, O_PATH, 0);
    if (fd < 0)
        return open_err(err, -fd, path);
    int rc = fstat(fd, st) ? rl_err(err, RL_EIO, "%s: cannot stat", path) : 0;
    close(fd);
    if (rc || (rc = regular_check(st, path, err)))
        return rc;
    fd = open_beneath(c, path, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
    if (fd < 0)
        return open_err(err, -fd, path);
    struct stat s2;
    if (fstat(fd, &s2) || s2.st_ino != st->st_ino || s2.st_dev != st->st_dev ||
        !S_ISREG(s2.st_mode)) {
        close(fd);
        return rl_err(err, RL_EIO, "%s changed while being opened: try again", path);
    }
    *out = fd;
    return 0;
}

/* Reads at most max bytes of fd into *data (NUL-terminated). */
static int read_upto(char **data, size_t *len, int fd, size_t size_hint, size_t max,
                     const char *path, char *err)
{
    /* room for the hinted size, one byte more (to see the end without
     * growing) and the NUL; never more than max bytes and the NUL */
    char *p = NULL;
    size_t alloc = 0, n = 0, want = size_hint < max ? size_hint + 1 : max;
    if (VEC_GROW(p, alloc, want + 1, max + 1) < 0)
        return rl_err(err, RL_ENOMEM, "%s: out of memory", path);
    while (n < max) {
        if (n + 1 == alloc && VEC_GROW(p, alloc, alloc + 1, max + 1) < 0) {
            free(p);
            return rl_err(err, RL_ENOMEM, "%s: out of memory", path);
        }
        ssize_t r = read(fd, p + n, alloc - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(p);
            return rl_err(err, rl_from_errno(e), "%s: read failed: %s", path, strerror(e));
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    p[n] = '\0';
    *data = p;
    *len = n;
    return 0;
}

/* A checked, normalized path argument; missing means def (NULL: required). */
static int path_arg(char *out, const tc_call *call, const char *name, const char *def,
                    char *err)
{
    const char *p = tc_arg_str(call, name);
    if (!p && !def)
        return rl_err(err, RL_EINVAL, "%s: missing parameter %s", call->name, name);
    return path_norm(out, p ? p : def, err);
}

/* Reads a whole file up to c->read_max bytes; *size is its full size. */
static int file_read(char **data, size_t *len, size_t *size, const tool_ctx *c, const char *path,
                     char *err)
{
    int fd = -1;
    struct stat st;
    int rc = file_open_read(&fd, &st, c, path, err);
    if (rc)
        return rc;
    *size = (size_t)st.st_size;
    rc = read_upto(data, len, fd, (size_t)st.st_size, c->read_max, path, err);
    close(fd);
    return rc;
}

/* mkdir -p of the parents of path, each step resolved beneath the root. */
static int make_parents(const tool_ctx *c, const char *path, char *err)
{
    char pre[RL_TOOL_PATH_MAX + 1];
    for (const char *s = strchr(path, '/'); s; s = strchr(s + 1, '/')) {
        size_t k = (size_t)(s - path);
        memcpy(pre, path, k);
        pre[k] = '\0';
        int fd = open_beneath(c, pre, O_PATH | O_DIRECTORY, 0);
        if (fd >= 0) {
            close(fd);
            continue;
        }
        if (fd != -ENOENT)
            return open_err(err, -fd, pre);
        char *slash = strrchr(pre, '/');
        const char *name = slash ? slash + 1 : pre;
        if (slash)
            *slash = '\0';
        int pfd = open_beneath(c, slash ? pre : ".", O_PATH | O_DIRECTORY, 0);
        if (pfd < 0)
            return open_err(err, -pfd, slash ? pre : ".");
        int r = mkdirat(pfd, name, 0755);
        int e = errno;
        close(pfd);
        if (r && e != EEXIST)
            return rl_err(err, rl_from_errno(e), "cannot create directory for %s: %s", path,
                          strerror(e));
    }
    return 0;
}

/* Writes a whole regular file beneath the root; *created says if it is new.
 * In place (O_TRUNC), not temp + rename: that keeps the inode and its mode
 * (an executable script stays executable) and writes through an in-tree
 * symlink instead of replacing it. Work trees are scratch, reset each
 * episode, so a torn write costs nothing. */
static int file_write(const tool_ctx *c, const char *path, const char *data, size_t len,
                      int create, int *created, char *err)
{
    if (len > c->write_max)
        return rl_err(err, RL_ELIMIT, "content for %s is %zu bytes: at most %zu", path, len,
                      c->write_max);
    if (strcmp(path, ".") == 0)
        return rl_err(err, RL_EINVAL, "path . is the work tree root: expected a file path");
    int rc = create ? make_parents(c, path, err) : 0;
    if (rc)
        return rc;
    struct stat st;
    int fd = open_beneath(c, path, O_PATH, 0);
    *created = 0;
    if (fd >= 0) {
        rc = fstat(fd, &st) ? rl_err(err, RL_EIO, "%s: cannot stat", path) : 0;
        close(fd);
        if (rc || (rc = regular_check(&st, path, err)))
            return rc;
    } else if (fd == -ENOENT && create) {
        *created = 1;
    } else {
        return open_err(err, -fd, path);
    }
    fd = open_beneath(c, path, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_NOCTTY, 0644);
    if (fd < 0)
        return open_err(err, -fd, path);
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        return rl_err(err, RL_EIO, "%s changed while being opened: try again", path);
    }
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : EIO;
            close(fd);
            return rl_err(err, rl_from_errno(e), "writing %s failed: %s", path, strerror(e));
        }
        off += (size_t)w;
    }
    if (close(fd))
        return rl_err(err, rl_from_errno(errno), "writing %s failed: %s", path, strerror(errno));
    return 0;
}

/* ---- directory walk ----------------------------------------------------- */

enum { STOP_NONE, STOP_VISITS, STOP_TIME, STOP_FILES, STOP_BYTES };

typedef struct walk walk;
/* Called for every entry that is not a directory; dfd holds it. Returns
 * nonzero to stop the walk (w->stop says why). */
typedef int (*walk_fn)(walk *w, int dfd, const char *name, const char *rel,
                       const struct stat *st);

struct walk {
    const tool_ctx *c;
    double deadline;
    size_t visited;
    int stop;
    size_t deep;    /* directories not entered: too deep */
    walk_fn fn;
    void *arg;
    int rc;         /* ENOMEM and the like */
};

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of a directory (no ".", "..", ".git"), counting visits. */
static char **dir_names(walk *w, DIR *d, size_t *n)
{
    char **v = NULL;
    size_t cap = 0;
    *n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, ".git"))
            continue;
        if (w->visited >= w->c->visit_max) {
            w->stop = STOP_VISITS;
            break;
        }
        w->visited++;
        if (VEC_GROW(v, cap, *n + 1, w->c->visit_max) < 0) /* visit_max: not reached */
            goto oom;
        if (!(v[*n] = strdup(e->d_name)))
            goto oom;
        (*n)++;
    }
    if (*n > 1)
        qsort(v, *n, sizeof *v, cmp_names);
    return v;
oom:
    w->rc = RL_ENOMEM;
    return v;
}

static void walk_dir(walk *w, int fd, const char *rel, int depth)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    size_t n;
    char **names = dir_names(w, d, &n);
    for (size_t i = 0; i < n && !w->rc; i++) {
        if (w->stop && w->stop != STOP_VISITS)
            break;
        if (clk_ms() >= w->deadline) {
            w->stop = STOP_TIME;
            break;
        }
        char *sub = NULL;
        if (asprintf(&sub, "%s%s%s", rel, *rel ? "/" : "", names[i]) < 0) {
            w->rc = RL_ENOMEM;
            break;
        }
        struct stat st;
        if (fstatat(dirfd(d), names[i], &st, AT_SYMLINK_NOFOLLOW) == 0) {
            if (S_ISDIR(st.st_mode)) {
                int sfd = -1;
                if (depth + 1 >= RL_TOOL_DEPTH_MAX)
                    w->deep++;
                else if ((sfd = openat(dirfd(d), names[i],
                                       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0)
                    walk_dir(w, sfd, sub, depth + 1);
            } else if (w->fn(w, dirfd(d), names[i], sub, &st)) {
                free(sub);
                break;
            }
        }
        free(sub);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    closedir(d);
}

/* Opens the directory path (normalized) and walks it; rel prefix is path. */
static int walk_tree(walk *w, const char *path, char *err)
{
    int fd = open_beneath(w->c, path, O_RDONLY | O_DIRECTORY, 0);
    if (fd < 0)
        return fd == -ENOTDIR ? rl_err(err, RL_EINVAL, "%s is not a directory", path)
                              : open_err(err, -fd, path);
    w->deadline = clk_ms() + w->c->time_ms;
    walk_dir(w, fd, strcmp(path, ".") ? path : "", 0);
    return w->rc ? rl_err(err, w->rc, "walking %s: out of memory", path) : 0;
}

static void walk_notes(buf_t *o, const walk *w)
{
    if (w->stop == STOP_VISITS)
        buf_printf(o, "[stopped after visiting %zu entries: results incomplete]\n",
                   w->c->visit_max);
    if (w->stop == STOP_TIME)
        buf_printf(o, "[stopped after %u ms: results incomplete]\n", w->c->time_ms);
    if (w->deep)
        buf_printf(o, "[%zu directories deeper than %d levels not entered]\n", w->deep,
                   RL_TOOL_DEPTH_MAX);
}

/* ---- list_files ---------------------------------------------------------- */

typedef struct list_st {
    buf_t *out;
    size_t shown, total;
} list_st;

static int list_one(walk *w, int dfd, const char *name, const char *rel, const struct stat *st)
{
    list_st *l = w->arg;
    l->total++;
    if (l->shown >= w->c->list_show_max)
        return 0;
    l->shown++;
    if (S_ISREG(st->st_mode))
        return buf_printf(l->out, "%s\n", rel) ? (w->rc = RL_ELIMIT) : 0;
    if (S_ISLNK(st->st_mode)) {
        char t[256];
        ssize_t k = readlinkat(dfd, name, t, sizeof t - 1);
        t[k > 0 ? k : 0] = '\0';
        return buf_printf(l->out, "%s -> %s\n", rel, t) ? (w->rc = RL_ELIMIT) : 0;
    }
    return buf_printf(l->out, "%s [%s]\n", rel, kind_name(st->st_mode)) ? (w->rc = RL_ELIMIT)
                                                                        : 0;
}

static int tool_list(buf_t *out, const tool_ctx *c, const tc_call *call, char *err)
{
    char path[RL_TOOL_PATH_MAX + 1];
    int rc = path_arg(path, call, "path", ".", err);
    if (rc)
        return rc;
    list_st l = {out, 0, 0};
    walk w = {.c = c, .fn = list_one, .arg = &l};
    if ((rc = walk_tree(&w, path, err)))
        return rc;
    if (!l.total)
        buf_printf(out, "(no files in %s)\n", path);
    if (l.total > l.shown)
        buf_printf(out, "[... %zu more entries not shown]\n", l.total - l.shown);
    walk_notes(out, &w);
    return 0;
}

/* ---- read_file ----------------------------------------------------------- */

static int is_binary(const char *d, size_t n)
{
    return memchr(d, '\0', n < RL_TOOL_BINARY_PROBE ? n : RL_TOOL_BINARY_PROBE) != NULL;
}

static size_t count_lines(const char *d, size_t n)
{
    size_t k = 0;
    for (const char *p = d, *e = d + n; p < e; k++) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        p = nl ? nl + 1 : e;
    }
    return k;
}

static int digits(size_t n)
{
    int k = 1;
    while (n >= 10) {
        n /= 10;
        k++;
    }
    return k;
}

/* Lines [ln, to] as "N| text", numbers right-aligned to w digits, from p,
 * the start of line ln, to e. */
static int put_lines(buf_t *o, const char *p, const char *e, size_t ln, size_t to, int w)
{
    for (; p < e && ln <= to; ln++) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        const char *le = nl ? nl : e;
        int rc = buf_printf(o, "%*zu|%s", w, ln, le > p ? " " : "");
        rc = rc ? rc : buf_append(o, p, (size_t)(le - p));
        rc = rc ? rc : buf_putc(o, '\n');
        if (rc)
            return rc;
        p = nl ? nl + 1 : e;
    }
    return 0;
}

/* Lines [from, to] (1-based) of d as "N| text", numbers right-aligned. */
static int put_numbered(buf_t *o, const char *d, size_t n, size_t from, size_t to)
{
    const char *p = d, *e = d + n;
    for (size_t ln = 1; p < e && ln < from; ln++) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        p = nl ? nl + 1 : e;
    }
    return put_lines(o, p, e, from, to, digits(to));
}

static int tool_read(buf_t *out, const tool_ctx *c, const tc_call *call, char *err)
{
    char path[RL_TOOL_PATH_MAX + 1];
    int rc = path_arg(path, call, "path", NULL, err);
    if (rc)
        return rc;
    long long from = 1, to = 0;
    int has_from = tc_arg_int(call, "start_line", &from);
    int has_to = tc_arg_int(call, "end_line", &to);
    if (has_from && !has_to && c->read_window > 0) {
        to = from + (long long)c->read_window - 1;
        has_to = 1;
    }
    if (from < 1)
        return rl_err(err, RL_EINVAL, "start_line %lld: expected a line number from 1", from);
    if (has_to && to < from)
        return rl_err(err, RL_EINVAL, "end_line %lld is before start_line %lld: expected "
                      "end_line >= start_line", to, from);
    char *d;
    size_t n, size;
    if ((rc = file_read(&d, &n, &size, c, path, err)))
        return rc;
    if (is_binary(d, n)) {
        free(d);
        return rl_err(err, RL_EINVAL, "%s is a binary file (%zu bytes): expected a text file",
                      path, size);
    }
    if (n < size) { /* drop the partial last line of a capped read */
        char *nl = memrchr(d, '\n', n);
        n = nl ? (size_t)(nl - d) + 1 : n;
    }
    size_t lines = count_lines(d, n);
    if (!lines) {
        free(d);
        return buf_printf(out, "%s: empty file\n", path);
    }
    if ((size_t)from > lines) {
        free(d);
        return rl_err(err, RL_EINVAL, "start_line %lld is past the end of %s (%zu lines)", from,
                      path, lines);
    }
    size_t last = has_to && (size_t)to < lines ? (size_t)to : lines;
    if (n < size)
        rc = buf_printf(out, "%s: lines %lld-%zu of the first %zu lines (the file has %zu bytes; "
                        "only the first %zu bytes were read)\n", path, from, last, lines, size, n);
    else
        rc = buf_printf(out, "%s: lines %lld-%zu of %zu\n", path, from, last, lines);
    rc = rc ? rc : put_numbered(out, d, n, (size_t)from, last);
    free(d);
    return rc ? rl_err(err, rc, "read_file %s: output too large", path) : 0;
}

/* ---- search -------------------------------------------------------------- */

typedef struct search_st {
    buf_t *out;
    const char *pat;
    size_t plen;
    size_t files, bytes, matches, shown, large, binary;
} search_st;

static void put_match(search_st *s, size_t line_max, const char *rel, size_t ln, const char *p,
                      const char *le)
{
    if (le > p && le[-1] == '\r')
        le--;
    size_t k = (size_t)(le - p);
    int cut = k > line_max;
    if (cut) {
        k = line_max;
        while (k > 0 && ((unsigned char)p[k] & 0xC0) == 0x80)
            k--;
    }
    buf_printf(s->out, "%s:%zu: ", rel, ln);
    buf_append(s->out, p, k);
    buf_puts(s->out, cut ? "...\n" : "\n");
}

static void search_text(walk *w, search_st *s, const char *rel, const char *d, size_t n)
{
    size_t ln = 1;
    for (const char *p = d, *e = d + n; p < e; ln++) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        const char *le = nl ? nl : e;
        if (memmem(p, (size_t)(le - p), s->pat, s->plen)) {
            s->matches++;
            if (s->shown < w->c->search_matches_max) {
                s->shown++;
                put_match(s, RL_TOOL_SEARCH_LINE_MAX, rel, ln, p, le);
            }
        }
        p = nl ? nl + 1 : e;
    }
}

static int search_one(walk *w, int dfd, const char *name, const char *rel, const struct stat *st)
{
    search_st *s = w->arg;
    if (!S_ISREG(st->st_mode) || st->st_nlink > 1)
        return 0;
    if ((size_t)st->st_size > w->c->read_max) {
        s->large++;
        return 0;
    }
    if (s->files >= w->c->search_files_max) {
        w->stop = STOP_FILES;
        return 1;
    }
    if (s->bytes + (size_t)st->st_size > w->c->search_bytes_max) {
        w->stop = STOP_BYTES;
        return 1;
    }
    int fd = openat(dfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat s2;
    char *d = NULL;
    size_t n = 0;
    char e[RL_ERR_MAX];
    if (!fstat(fd, &s2) && S_ISREG(s2.st_mode) &&
        !read_upto(&d, &n, fd, (size_t)s2.st_size, w->c->read_max, rel, e)) {
        s->files++;
        s->bytes += n;
        if (is_binary(d, n))
            s->binary++;
        else
            search_text(w, s, rel, d, n);
    }
    free(d);
    close(fd);
    return 0;
}

static int tool_search(buf_t *out, const tool_ctx *c, const tc_call *call, char *err)
{
    char path[RL_TOOL_PATH_MAX + 1];
    const char *pat = tc_arg_str(call, "pattern");
    if (!pat || !*pat)
        return rl_err(err, RL_EINVAL, "search: pattern is empty: expected the text to find");
    if (strchr(pat, '\n'))
        return rl_err(err, RL_EINVAL, "search: pattern spans several lines: expected text "
                      "from a single line");
    int rc = path_arg(path, call, "path", ".", err);
    if (rc)
        return rc;
    search_st s = {.out = out, .pat = pat, .plen = strlen(pat)};
    walk w = {.c = c, .fn = search_one, .arg = &s};
    int fd = open_beneath(c, path, O_PATH, 0);
    struct stat st;
    if (fd >= 0 && !fstat(fd, &st) && !S_ISDIR(st.st_mode)) { /* one file */
        close(fd);
        char *d;
        size_t n, size;
        if ((rc = file_read(&d, &n, &size, c, path, err)))
            return rc;
        if (is_binary(d, n)) {
            free(d);
            return rl_err(err, RL_EINVAL, "%s is a binary file: expected a text file", path);
        }
        w.deadline = clk_ms() + c->time_ms;
        search_text(&w, &s, path, d, n);
        free(d);
    } else {
        if (fd >= 0)
            close(fd);
        if ((rc = walk_tree(&w, path, err)))
            return rc;
    }
    if (!s.matches)
        buf_printf(out, "no matches for \"%s\" in %s\n", pat, path);
    else if (s.matches > s.shown)
        buf_printf(out, "[showing %zu of %zu matches]\n", s.shown, s.matches);
    if (s.large)
        buf_printf(out, "[%zu files over %zu bytes not searched]\n", s.large, c->read_max);
    if (w.stop == STOP_FILES)
        buf_printf(out, "[stopped after %zu files: results incomplete]\n", c->search_files_max);
    if (w.stop == STOP_BYTES)
        buf_printf(out, "[stopped after reading %zu bytes: results incomplete]\n", s.bytes);
    walk_notes(out, &w);
    return 0;
}

/* ---- edit_file / write_file ---------------------------------------------- */

static size_t nl_count(const char *d, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += d[i] == '\n';
    return k;
}

static size_t occurrences(const char *d, size_t n, const char *pat, size_t k, const char **first)
{
    size_t count = 0;
    *first = NULL;
    for (const char *p = d, *e = d + n; p < e;) {
        const char *q = memmem(p, (size_t)(e - p), pat, k);
        if (!q)
            break;
        if (!count)
            *first = q;
        count++;
        p = q + k;
    }
    return count;
}

/* Shows the edited region with a little context, at most 40 lines. */
static int put_region(buf_t *o, const char *d, size_t n, size_t first, size_t last)
{
    size_t lines = count_lines(d, n);
    size_t from = first > 2 ? first - 2 : 1, to = last + 2 < lines ? last + 2 : lines;
    if (to > from + 39)
        to = from + 39;
    return put_numbered(o, d, n, from, to);
}

/* ---- edit_file hints ------------------------------------------------------ */

static int is_word_byte(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
           ch >= 0x80;
}

/* The next token of [*p, e): a run of word bytes or one other non-blank
 * byte, as a 16-bit hash; advances *p. -1 at the end. */
static int token_next(const char **p, const char *e)
{
    const unsigned char *q = (const unsigned char *)*p, *end = (const unsigned char *)e;
    while (q < end && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r'))
        q++;
    if (q == end) {
        *p = e;
        return -1;
    }
    uint32_t h = 2166136261u;
    do
        h = (h ^ *q++) * 16777619u;
    while (q < end && is_word_byte(q[-1]) && is_word_byte(*q));
    *p = (const char *)q;
    return (int)((h ^ h >> 16) & 0xffff);
}

/* Counts the tokens of t[0..n) into h; returns how many. */
static size_t tokens_count(uint16_t *h, const char *t, size_t n)
{
    size_t k = 0;
    int x;
    for (const char *p = t, *e = t + n; (x = token_next(&p, e)) >= 0; k++)
        if (h[x] < UINT16_MAX)
            h[x]++;
    return k;
}

/* Where each line of a file starts. */
typedef struct line_tab {
    const char **at; /* at[i]: start of line i; at[n]: end of the data */
    size_t n;
} line_tab;

static int line_tab_make(line_tab *lt, const char *d, size_t n)
{
    size_t k = count_lines(d, n);
    lt->at = malloc((k + 1) * sizeof *lt->at);
    if (!lt->at)
        return RL_ENOMEM;
    lt->n = 0;
    for (const char *p = d, *e = d + n; p < e && lt->n < k;) {
        lt->at[lt->n++] = p;
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        p = nl ? nl + 1 : e;
    }
    lt->at[lt->n] = d + n;
    return 0;
}

/* The windows of as many lines as old spans whose tokens (names, numbers,
 * single punctuation; blanks ignored) overlap old's most, as a Dice
 * coefficient of the two multisets: the best, and up to
 * RL_TOOL_HINT_WINDOWS - 1 others that do not overlap it and score at
 * least 3/4 of it (a short old_string matches several lines about as
 * well), shown numbered in file order. A policy that misremembered a name,
 * a number or the spacing can copy the real text from here. No hint when
 * no token is shared. */
static int hint_nearest(buf_t *h, const char *path, const char *d, size_t n, const char *old, size_t ko)
{
    size_t lines = ko && old[ko - 1] == '\n' ? nl_count(old, ko) : nl_count(old, ko) + 1;
    line_tab lt = {0};
    uint16_t *ref = calloc(1u << 16, sizeof *ref), *win = calloc(1u << 16, sizeof *win);
    double *score = NULL;
    int rc = RL_ENOMEM;
    if (!ref || !win || line_tab_make(&lt, d, n) || !(score = calloc(lt.n + 1, sizeof *score)))
        goto out;
    if (lines > lt.n)
        lines = lt.n;
    size_t n_ref = tokens_count(ref, old, ko), nwin = lines ? lt.n - lines + 1 : 0;
    for (size_t i = 0; n_ref && i < nwin; i++) {
        const char *b = lt.at[i], *e = lt.at[i + lines];
        size_t n_win = tokens_count(win, b, (size_t)(e - b)), common = 0;
        int x;
        for (const char *p = b; (x = token_next(&p, e)) >= 0;)
            if (win[x]) { /* first visit of this token: the smaller count, then clear */
                common += win[x] < ref[x] ? win[x] : ref[x];
                win[x] = 0;
            }
        score[i] = 2.0 * (double)common / (double)(n_ref + n_win);
    }
    size_t pick[RL_TOOL_HINT_WINDOWS], np = 0;
    double top = 0;
    while (np < RL_TOOL_HINT_WINDOWS) { /* greedy: the best window left that overlaps none picked */
        size_t at = nwin;
        for (size_t i = 0; i < nwin; i++)
            if (score[i] > 0 && (at == nwin || score[i] > score[at]))
                at = i;
        if (at == nwin || (np && score[at] < 0.75 * top))
            break;
        if (!np)
            top = score[at];
        pick[np++] = at;
        for (size_t i = at + 1 > lines ? at + 1 - lines : 0; i < at + lines && i < nwin; i++)
            score[i] = 0;
    }
    for (size_t i = 1; i < np; i++) /* file order */
        for (size_t j = i; j > 0 && pick[j - 1] > pick[j]; j--) {
            size_t t = pick[j];
            pick[j] = pick[j - 1];
            pick[j - 1] = t;
        }
    rc = 0;
    if (np)
        rc = buf_printf(h, "the most similar text in %s:\n", path);
    for (size_t k = 0; k < np && !rc; k++)
        rc = put_lines(h, lt.at[pick[k]], d + n, pick[k] + 1, pick[k] + lines, digits(pick[k] + lines));
out:
    free(lt.at);
    free(ref);
    free(win);
    free(score);
    return rc;
}

/* The lines where the first RL_TOOL_HINT_SHOW_MAX occurrences of old start. */
static int hint_occurrences(buf_t *h, const char *path, const char *d, size_t n, const char *old, size_t ko)
{
    int rc = buf_printf(h, "it occurs in %s at:\n", path);
    size_t shown = 0, line = 1;
    const char *counted = d;
    for (const char *p = d, *e = d + n; !rc && p < e && shown < RL_TOOL_HINT_SHOW_MAX;) {
        const char *q = memmem(p, (size_t)(e - p), old, ko);
        if (!q)
            break;
        size_t at = line + nl_count(counted, (size_t)(q - counted));
        counted = q;
        if (at != line || !shown) { /* each line once */
            const char *ls = q;
            while (ls > d && ls[-1] != '\n')
                ls--;
            rc = put_lines(h, ls, e, at, at, digits(at));
            shown++;
        }
        line = at;
        p = q + ko;
    }
    return rc;
}

static int tool_edit(buf_t *out, buf_t *hint, const tool_ctx *c, const tc_call *call, const char **kind,
                     char *err)
{
    char path[RL_TOOL_PATH_MAX + 1];
    int rc = path_arg(path, call, "path", NULL, err);
    if (rc)
        return rc;
    const char *old = tc_arg_str(call, "old_string"), *neu = tc_arg_str(call, "new_string");
    if (!old || !neu)
        return rl_err(err, RL_EINVAL, "edit_file: expected old_string and new_string");
    if (!*old)
        return rl_err(err, RL_EINVAL, "edit_file: old_string is empty: expected the exact text "
                      "to replace (write_file creates files)");
    if (!strcmp(old, neu)) {
        *kind = TOOL_KIND_NO_CHANGE;
        return rl_err(err, RL_EINVAL, "edit_file: old_string and new_string are identical: "
                      "nothing would change");
    }
    char *d;
    size_t n, size;
    if ((rc = file_read(&d, &n, &size, c, path, err)))
        return rc;
    if (n < size || is_binary(d, n)) {
        free(d);
        return rl_err(err, RL_EINVAL, "%s is %s: edit_file edits text files up to %zu bytes",
                      path, n < size ? "too large" : "a binary file", c->read_max);
    }
    size_t ko = strlen(old), kn = strlen(neu);
    const char *at;
    size_t count = occurrences(d, n, old, ko, &at);
    if (count != 1) {
        *kind = count ? TOOL_KIND_NOT_UNIQUE : TOOL_KIND_NO_MATCH;
        if (c->edit_hints && n <= RL_TOOL_HINT_FILE_MAX && ko <= RL_TOOL_HINT_OLD_MAX &&
            (count ? hint_occurrences(hint, path, d, n, old, ko) : hint_nearest(hint, path, d, n, old, ko)))
            buf_clear(hint); /* out of memory for the hint: the error line alone */
        free(d);
        if (!count)
            return rl_err(err, RL_ENOENT, "old_string not found in %s: expected an exact copy "
                          "of existing text (whitespace included, no line numbers)", path);
        return rl_err(err, RL_EINVAL, "old_string occurs %zu times in %s: expected exactly one; "
                      "include more surrounding lines to make it unique", count, path);
    }
    size_t pre = (size_t)(at - d), nn = n - ko + kn;
    char *nd = malloc(nn + 1);
    if (!nd) {
        free(d);
        return rl_err(err, RL_ENOMEM, "edit_file %s: out of memory", path);
    }
    memcpy(nd, d, pre);
    memcpy(nd + pre, neu, kn);
    memcpy(nd + pre + kn, at + ko, n - pre - ko);
    nd[nn] = '\0';
    int created;
    rc = file_write(c, path, nd, nn, 0, &created, err);
    if (!rc) {
        size_t first = 1 + nl_count(d, pre);
        size_t old_last = first + nl_count(old, ko) - (old[ko - 1] == '\n');
        size_t new_last = first + (kn ? nl_count(neu, kn) - (neu[kn - 1] == '\n') : 0);
        buf_printf(out, "edited %s: lines %zu-%zu replaced; the new text is at lines %zu-%zu:\n",
                   path, first, old_last < first ? first : old_last, first,
                   new_last < first ? first : new_last);
        put_region(out, nd, nn, first, new_last < first ? first : new_last);
    }
    free(d);
    free(nd);
    return rc;
}

static int tool_write(buf_t *out, const tool_ctx *c, const tc_call *call, char *err)
{
    char path[RL_TOOL_PATH_MAX + 1];
    int rc = path_arg(path, call, "path", NULL, err);
    if (rc)
        return rc;
    const char *content = tc_arg_str(call, "content");
    if (!content)
        return rl_err(err, RL_EINVAL, "write_file: missing parameter content");
    size_t n = strlen(content);
    int created;
    if ((rc = file_write(c, path, content, n, 1, &created, err)))
        return rc;
    return buf_printf(out, "%s %s (%zu bytes, %zu lines)\n", created ? "created" : "wrote", path,
                      n, count_lines(content, n));
}

/* ---- hooks ----------------------------------------------------------------- */

static int tool_run_tests(buf_t *out, const tool_ctx *c, const tc_call *call, char *err)
{
    if (!c->run_tests)
        return rl_err(err, RL_EUNSUP, "run_tests is not available here (no test runner "
                      "attached)");
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(call->args, "tests");
    const char *names[RL_TC_ARRAY_MAX];
    size_t n = 0;
    for (const cJSON *e = cJSON_IsArray(a) ? a->child : NULL; e && n < RL_TC_ARRAY_MAX;
         e = e->next)
        if (cJSON_IsString(e))
            names[n++] = e->valuestring;
    return c->run_tests(c->user, names, n, out, err);
}

static int tool_submit(buf_t *out, const tool_ctx *c, char *err)
{
    if (!c->submit)
        return rl_err(err, RL_EUNSUP, "submit is not available here (no episode attached)");
    return c->submit(c->user, out, err);
}

/* ---- observations ------------------------------------------------------- */

/* Valid UTF-8 without NUL or terminal control codes: each bad byte becomes
 * U+FFFD, so tokenizers and JSON records see clean text. */
static int sanitize(buf_t *o, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    int rc = 0;
    for (size_t i = 0; i < n && !rc;) {
        size_t k = utf8_seq_len(p + i, n - i);
        int ctl = k == 1 && p[i] < 0x20 && p[i] != '\n' && p[i] != '\t' && p[i] != '\r';
        if (k && !ctl) {
            size_t j = i + k;
            while (j < n && p[j] >= 0x20 && p[j] < 0x80)
                j++; /* plain ASCII runs in one append */
            rc = buf_append(o, s + i, j - i);
            i = j;
        } else {
            rc = buf_append(o, "\xEF\xBF\xBD", 3);
            i++;
        }
    }
    return rc;
}

char *tool_obs_cut(const char *s, size_t len, size_t budget, size_t *out_len, size_t *cut)
{
    size_t head, tail;
    *cut = 0;
    if (!budget || len <= budget) {
        head = len;
        tail = len;
    } else {
        head = budget / 2;
        tail = len - (budget - head);
        const char *nl = memrchr(s, '\n', head);
        if (nl && (size_t)(nl - s) + 1 >= head / 2)
            head = (size_t)(nl - s) + 1; /* end the head on a whole line */
        while (head > 0 && ((unsigned char)s[head] & 0xC0) == 0x80)
            head--;
        nl = memchr(s + tail, '\n', len - tail);
        if (nl && (size_t)(nl - s) + 1 - tail <= (budget - budget / 2) / 2)
            tail = (size_t)(nl - s) + 1; /* start the tail on a whole line */
        while (tail < len && ((unsigned char)s[tail] & 0xC0) == 0x80)
            tail++;
        *cut = tail - head;
    }
    char marker[96] = "";
    if (*cut) {
        size_t lines = 0;
        for (size_t i = head; i < tail; i++)
            lines += s[i] == '\n';
        snprintf(marker, sizeof marker, "%s[... %zu bytes (%zu lines) cut ...]\n",
                 head && s[head - 1] != '\n' ? "\n" : "", *cut, lines);
    }
    size_t ml = strlen(marker), n = head + ml + (len - tail);
    char *o = malloc(n + 1);
    if (!o)
        return NULL;
    memcpy(o, s, head);
    memcpy(o + head, marker, ml);
    memcpy(o + head + ml, s + tail, len - tail);
    o[n] = '\0';
    if (out_len)
        *out_len = n;
    return o;
}

/* ---- dispatch ------------------------------------------------------------ */

/* The record's name of an error code: snake_case, stable across message
 * wording (reports count calls by it). */
static const char *kind_of(int rc)
{
    switch (rc) {
    case RL_EINVAL: return "invalid";
    case RL_ENOMEM: return "no_memory";
    case RL_EIO: return "io";
    case RL_ENOSPC: return "no_space";
    case RL_ENOENT: return "not_found";
    case RL_EPARSE: return "parse";
    case RL_ELIMIT: return "limit";
    case RL_ETIMEOUT: return "timeout";
    case RL_EUNSUP: return "unsupported";
    case RL_EDENIED: return "denied";
    default: return "error";
    }
}

int tool_exec(tool_result *out, const tool_ctx *ctx, const tc_call *call, char *err)
{
    char e[RL_ERR_MAX] = "";
    double t0 = clk_ms();
    memset(out, 0, sizeof *out);
    buf_t obs, hint;
    buf_init(&obs, 0);
    buf_init(&hint, 0);
    const char *name = call && call->name ? call->name : "";
    const char *kind = NULL;
    int file_tool = strcmp(name, "run_tests") && strcmp(name, "submit");
    int rc;
    if (!call || !call->args)
        rc = rl_err(e, RL_EINVAL, "tool call without arguments");
    else if (file_tool && ctx->root_fd < 0)
        rc = rl_err(e, RL_EINVAL, "%s: no work tree is open", name);
    else if (!strcmp(name, "list_files"))
        rc = tool_list(&obs, ctx, call, e);
    else if (!strcmp(name, "read_file"))
        rc = tool_read(&obs, ctx, call, e);
    else if (!strcmp(name, "search"))
        rc = tool_search(&obs, ctx, call, e);
    else if (!strcmp(name, "edit_file"))
        rc = tool_edit(&obs, &hint, ctx, call, &kind, e);
    else if (!strcmp(name, "write_file"))
        rc = tool_write(&obs, ctx, call, e);
    else if (!strcmp(name, "run_tests"))
        rc = tool_run_tests(&obs, ctx, call, e);
    else if (!strcmp(name, "submit"))
        rc = tool_submit(&obs, ctx, e);
    else
        rc = rl_err(e, RL_EINVAL, "unknown tool \"%s\"", name);
    if (rc) { /* the error line, after whatever a hook already wrote */
        if (file_tool)
            buf_clear(&obs);
        if (obs.len && obs.data[obs.len - 1] != '\n')
            buf_putc(&obs, '\n');
        buf_printf(&obs, "error: %s", e);
        if (hint.len) {
            buf_putc(&obs, '\n');
            buf_append(&obs, hint.data, hint.len);
        }
    }
    buf_dispose(&hint);
    buf_t clean;
    buf_init(&clean, 0);
    if (sanitize(&clean, buf_str(&obs), obs.len) == 0)
        out->obs = tool_obs_cut(buf_str(&clean), clean.len, ctx->obs_budget, &out->obs_len,
                                &out->cut);
    buf_dispose(&clean);
    buf_dispose(&obs);
    if (!out->obs) {
        rc = rl_err(e, RL_ENOMEM, "%s: out of memory", name);
        kind = NULL;
        out->obs = strdup("error: out of memory");
        out->obs_len = out->obs ? strlen(out->obs) : 0;
    }
    out->code = rc;
    out->kind = rc ? (kind ? kind : kind_of(rc)) : NULL;
    out->ms = clk_ms() - t0;
    if (rc)
        rl_err(err, rc, "%s", e);
    return rc;
}
