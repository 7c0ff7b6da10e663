#include "common/fsutil.h"

#include "common/err.h"
#include "common/limits.h"
#include "common/vec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int io_err(char *err, const char *what, const char *path)
{
    int e = errno;
    return rl_err(err, rl_from_errno(e), "%s: %s: %s", path, what, strerror(e));
}

static const char *type_name(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a fifo" : S_ISCHR(m) ? "a character device"
           : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : S_ISLNK(m) ? "a symbolic link"
           : "a special file";
}

int fs_open_regular(const char *path, unsigned flags, struct stat *st, char *err)
{
    int of = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
    if (flags & FS_NOFOLLOW)
        of |= O_NOFOLLOW;
    int fd = open(path, of);
    if (fd < 0) {
        if (errno == ELOOP && (flags & FS_NOFOLLOW))
            return rl_err(err, RL_EDENIED, "%s: not a regular file (a symbolic link)", path);
        return io_err(err, "cannot open", path);
    }
    struct stat s;
    if (fstat(fd, &s) < 0) {
        int rc = io_err(err, "cannot stat", path);
        close(fd);
        return rc;
    }
    if (!S_ISREG(s.st_mode)) {
        close(fd);
        return rl_err(err, RL_EINVAL, "%s: not a regular file (%s)", path, type_name(s.st_mode));
    }
    /* A regular file never blocks; clear the flag so stdio sees a normal fd. */
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    if (st)
        *st = s;
    return fd;
}

int fs_fopen_read(FILE **out, const char *path, unsigned flags, char *err)
{
    *out = NULL;
    int fd = fs_open_regular(path, flags, NULL, err);
    if (fd < 0)
        return fd;
    FILE *f = fdopen(fd, "r");
    if (!f) {
        int rc = io_err(err, "cannot open", path);
        close(fd);
        return rc;
    }
    *out = f;
    return 0;
}

int fs_read_file(char **out, size_t *len, const char *path, size_t max, char *err)
{
    return fs_read_file_ex(out, len, path, max, 0, err);
}

int fs_read_file_ex(char **out, size_t *len, const char *path, size_t max, unsigned flags,
                    char *err)
{
    *out = NULL;
    struct stat st;
    int fd = fs_open_regular(path, flags, &st, err);
    if (fd < 0)
        return fd;
    if ((size_t)st.st_size > max) {
        close(fd);
        return rl_err(err, RL_ELIMIT, "%s: file is %lld bytes, limit is %zu", path,
                      (long long)st.st_size, max);
    }
    size_t cap = (size_t)st.st_size, n = 0;
    char *p = malloc(cap + 1);
    if (!p) {
        close(fd);
        return rl_err(err, RL_ENOMEM, "%s: out of memory", path);
    }
    for (;;) {
        if (n == cap) { /* file grew while reading: read up to max */
            if (cap >= max)
                break;
            size_t nc = cap * 2 + 4096 < max ? cap * 2 + 4096 : max;
            char *q = realloc(p, nc + 1);
            if (!q) {
                free(p);
                close(fd);
                return rl_err(err, RL_ENOMEM, "%s: out of memory", path);
            }
            p = q;
            cap = nc;
        }
        ssize_t r = read(fd, p + n, cap - n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int rc = io_err(err, "read failed", path);
            free(p);
            close(fd);
            return rc;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    p[n] = '\0';
    *out = p;
    if (len)
        *len = n;
    return 0;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int fs_write_atomic(const char *path, const void *data, size_t len, char *err)
{
    size_t pl = strlen(path);
    char *tmp = malloc(pl + 32);
    if (!tmp)
        return rl_err(err, RL_ENOMEM, "%s: out of memory", path);
    snprintf(tmp, pl + 32, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        int rc = io_err(err, "cannot create", tmp);
        free(tmp);
        return rc;
    }
    if (write_all(fd, data, len) < 0 || fsync(fd) < 0) {
        int rc = io_err(err, "write failed", path);
        close(fd);
        unlink(tmp);
        free(tmp);
        return rc;
    }
    if (close(fd) < 0 || rename(tmp, path) < 0) {
        int rc = io_err(err, "cannot replace", path);
        unlink(tmp);
        free(tmp);
        return rc;
    }
    free(tmp);
    return 0;
}

int fs_append_record(const char *path, const char *line, size_t len, char *err)
{
    int need_nl = len == 0 || line[len - 1] != '\n';
    char *rec = malloc(len + 1);
    if (!rec)
        return rl_err(err, RL_ENOMEM, "%s: out of memory", path);
    memcpy(rec, line, len);
    if (need_nl)
        rec[len++] = '\n';
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        free(rec);
        return io_err(err, "cannot open for append", path);
    }
    struct stat st;
    off_t before = fstat(fd, &st) == 0 ? st.st_size : -1;
    /* One write(2) of the whole record: O_APPEND makes it atomic with
     * respect to other appenders on a local file system. */
    ssize_t w = write(fd, rec, len);
    free(rec);
    if (w != (ssize_t)len) {
        int rc = w < 0 ? io_err(err, "append failed", path)
                       : rl_err(err, RL_ENOSPC, "%s: short append (disk full?)", path);
        if (w > 0 && before >= 0)
            (void)ftruncate(fd, before); /* never leave half a record */
        close(fd);
        return rc;
    }
    if (fsync(fd) < 0) {
        int rc = io_err(err, "fsync failed", path);
        close(fd);
        return rc;
    }
    close(fd);
    return 0;
}

int fs_mkdirs(const char *path, char *err)
{
    char tmp[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof tmp)
        return rl_err(err, RL_EINVAL, "mkdir: bad path length %zu", n);
    memcpy(tmp, path, n + 1);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
            return io_err(err, "cannot create directory", tmp);
        *p = '/';
    }
    if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
        return io_err(err, "cannot create directory", tmp);
    if (!fs_is_dir(tmp))
        return rl_err(err, RL_EINVAL, "%s: exists and is not a directory", tmp);
    return 0;
}

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p) < 0 && errno != ENOENT ? -1 : 0;
}

int fs_remove_tree(const char *path, char *err)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return errno == ENOENT ? 0 : io_err(err, "cannot stat", path);
    if (nftw(path, rm_cb, 32, FTW_DEPTH | FTW_PHYS) < 0)
        return io_err(err, "cannot remove", path);
    return 0;
}

int fs_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

void fs_dirname(char *out, size_t n, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(out, n, ".");
        return;
    }
    size_t l = (size_t)(slash - path);
    if (l == 0)
        l = 1;
    snprintf(out, n, "%.*s", (int)l, path);
}

static int names_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int fs_list_dir(char ***names, size_t *n, const char *dir, char *err)
{
    *names = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return rl_err(err, RL_ENOENT, "%s: cannot open directory", dir);
    size_t alloc = 0;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if ((rc = VEC_GROW(*names, alloc, *n + 1, RL_DIR_ENTRIES_MAX)) < 0)
            rc = rc == RL_ELIMIT ? rl_err(err, rc, "%s: more than %d entries", dir, RL_DIR_ENTRIES_MAX)
                                 : rl_err(err, rc, "%s: out of memory", dir);
        else if (!((*names)[*n] = strdup(e->d_name)))
            rc = rl_err(err, RL_ENOMEM, "%s: out of memory", dir);
        else
            (*n)++;
    }
    closedir(d);
    if (rc == 0 && *n > 1)
        qsort(*names, *n, sizeof **names, names_cmp);
    return rc;
}

void fs_names_free(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}
