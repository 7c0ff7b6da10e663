/* fsutil.h - file helpers that never lose data.
 *
 * Whole files are written via a temp file in the same directory, fsync,
 * then rename (atomic replace). Records are appended with one write(2) of
 * the whole line to an O_APPEND descriptor, then fsync, so concurrent
 * writers never interleave and a kill never leaves half a line behind
 * the last complete one. Errors name the path and say why (ENOSPC gives
 * "no space left on device").
 */
#ifndef RL_FSUTIL_H
#define RL_FSUTIL_H

#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

/* Every file the harness and trainer read is opened through
 * fs_open_regular: non-blocking (a FIFO or device in its place cannot
 * stall the reader), then checked with fstat to be a regular file before
 * a byte is read, and read with a cap. The error is one line naming the
 * file, e.g. "runs/x.jsonl: not a regular file (a fifo)". */
enum {
    FS_NOFOLLOW = 1u << 0, /* refuse a symbolic link as the last component
                              (files a sandboxed command could have
                              replaced: test results, tool targets) */
};

/* Opens path read-only as above; returns the fd (blocking reads again,
 * close-on-exec) or a negative RL_E* code. st (may be NULL) gets fstat. */
int fs_open_regular(const char *path, unsigned flags, struct stat *st, char *err);

/* The same as a stdio stream, for readers that stream (record files,
 * checkpoints). */
int fs_fopen_read(FILE **out, const char *path, unsigned flags, char *err);

/* Reads a whole regular file (at most max bytes, else RL_ELIMIT). *out is
 * NUL-terminated; caller frees. */
int fs_read_file(char **out, size_t *len, const char *path, size_t max, char *err);
/* fs_read_file with FS_* flags. */
int fs_read_file_ex(char **out, size_t *len, const char *path, size_t max, unsigned flags,
                    char *err);

/* Atomically replaces path with data (temp + fsync + rename). */
int fs_write_atomic(const char *path, const void *data, size_t len, char *err);

/* Appends one record (a '\n' is added if missing) with a single write and
 * fsync. Creates the file (0644) if needed. */
int fs_append_record(const char *path, const char *line, size_t len, char *err);

/* mkdir -p. */
int fs_mkdirs(const char *path, char *err);

/* rm -rf (does not follow symlinks). Missing path is not an error. */
int fs_remove_tree(const char *path, char *err);

/* 1 if path is an existing directory, 0 otherwise. */
int fs_is_dir(const char *path);

/* The names in folder dir, sorted (strcmp), without those starting with
 * '.'. At most RL_DIR_ENTRIES_MAX (else RL_ELIMIT); RL_ENOENT when dir
 * cannot be opened. Free with fs_names_free, also after an error. */
int fs_list_dir(char ***names, size_t *n, const char *dir, char *err);
void fs_names_free(char **names, size_t n);

/* Parent directory of path into out (size n). */
void fs_dirname(char *out, size_t n, const char *path);

#endif
