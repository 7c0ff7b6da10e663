/* cmd_tokenizer.c - `grpo tokenizer`: trains the byte-level BPE tokenizer
 * of the built-in policy on the text of the project's repositories, tasks
 * and prompt templates, and writes it as JSON.
 *
 * Inputs are walked in sorted order (so the byte cap always keeps the same
 * files); hidden entries, symlinks, build folders, binary-looking files
 * (known extensions, or any NUL byte) and files over RL_TOK_TRAIN_FILE_MAX
 * are skipped.
 */
#include "grpo/cli.h"

#include "common/arg.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "common/vec.h"
#include "common/str.h"
#include "protocol/tokenizer.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>

static const char *const DEFAULT_INPUTS[] = {"repos", "tasks", "prompts"};

static const char *const SKIP_DIRS[] = {"build", "build-san", "bin", "node_modules",
                                        "__pycache__", "target", "dist"};

static const char *const SKIP_EXTS[] = {
    ".o",   ".a",   ".so",  ".d",   ".pyc", ".class", ".exe", ".png",  ".jpg",
    ".jpeg", ".gif", ".ico", ".pdf", ".zip", ".gz",    ".tgz", ".bz2",  ".xz",
    ".zst", ".tar", ".bin", ".pt",  ".npy", ".safetensors", ".whl", ".jar",
};

typedef struct walk {
    tok_trainer_t *tr;
    size_t max_bytes;
    size_t bytes;
    size_t files;
    size_t skipped;
    int capped;
} walk;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: grpo tokenizer --vocab N --out FILE [--input PATH ...] [--special TOKEN ...]\n"
            "                      [--min-frequency N] [--max-bytes N]\n"
            "Trains a byte-level BPE tokenizer (vocab N includes the 256 bytes and the special\n"
            "tokens) on the text files under PATH (default: repos/ tasks/ prompts/) and writes\n"
            "it as JSON to FILE. --special adds a special token (e.g. <|pad|>) after the\n"
            "default ones; --max-bytes caps the training text (default and limit %u).\n",
            RL_TOK_TRAIN_BYTES_MAX);
}

static int skip_dir(const char *name)
{
    for (size_t i = 0; i < sizeof SKIP_DIRS / sizeof SKIP_DIRS[0]; i++)
        if (!strcmp(name, SKIP_DIRS[i]))
            return 1;
    return name[0] == '.';
}

static int skip_file(const char *name)
{
    for (size_t i = 0; i < sizeof SKIP_EXTS / sizeof SKIP_EXTS[0]; i++)
        if (str_has_suffix(name, SKIP_EXTS[i]))
            return 1;
    return name[0] == '.';
}

/* Reads one file and feeds it, unless it looks binary or would pass the
 * byte cap (then the walk stops taking files). */
static int walk_file(walk *w, const char *path, const struct stat *st, char *err)
{
    if (w->capped || st->st_size == 0)
        return 0;
    if ((size_t)st->st_size > RL_TOK_TRAIN_FILE_MAX) {
        w->skipped++;
        return 0;
    }
    if (w->bytes + (size_t)st->st_size > w->max_bytes) {
        w->capped = 1;
        return 0;
    }
    char *data;
    size_t len;
    int rc = fs_read_file(&data, &len, path, RL_TOK_TRAIN_FILE_MAX, err);
    if (rc)
        return rc;
    if (memchr(data, '\0', len) || w->bytes + len > w->max_bytes) {
        w->skipped++;
        free(data);
        return 0;
    }
    rc = tok_trainer_feed(w->tr, data, len, err);
    free(data);
    if (rc)
        return rc;
    w->bytes += len;
    w->files++;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int walk_path(walk *w, const char *path, int depth, char *err);

/* Lists a directory, sorts the names, and walks each. */
static int walk_dir(walk *w, const char *path, int depth, char *err)
{
    if (depth > RL_TOK_WALK_DEPTH_MAX)
        return 0;
    DIR *d = opendir(path);
    if (!d)
        return rl_err(err, rl_from_errno(errno), "%s: cannot open directory: %s", path,
                      strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *de;
    while (!rc && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (VEC_GROW(names, cap, n + 1, RL_TOK_WALK_DIR_ENTRIES_MAX) < 0) {
            rc = rl_err(err, RL_ELIMIT, "%s: more than %u entries, or out of memory", path,
                        RL_TOK_WALK_DIR_ENTRIES_MAX);
            break;
        }
        if (!(names[n] = strdup(de->d_name)))
            rc = rl_err(err, RL_ENOMEM, "%s: out of memory", path);
        else
            n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n && !rc; i++) {
        char child[PATH_MAX];
        if (snprintf(child, sizeof child, "%s/%s", path, names[i]) >= (int)sizeof child)
            continue;
        rc = walk_path(w, child, depth + 1, err);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

static int walk_path(walk *w, const char *path, int depth, char *err)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return rl_err(err, rl_from_errno(errno), "%s: %s", path, strerror(errno));
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    /* names are filtered only below the roots the user named */
    if (S_ISDIR(st.st_mode))
        return depth > 0 && skip_dir(base) ? 0 : walk_dir(w, path, depth, err);
    if (S_ISREG(st.st_mode) && !(depth > 0 && skip_file(base)))
        return walk_file(w, path, &st, err);
    return 0;
}

typedef struct args {
    int vocab;
    const char *out;
    const char **inputs;
    size_t ninputs;
    const char **specials;
    size_t nspecials;
    int min_freq;
    uint64_t max_bytes;
} args;

/* 0 ok, 2 usage error (message printed), 1 --help. */
static int parse_args(args *a, int argc, char **argv)
{
    char err[RL_ERR_MAX];
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i];
        if (!strcmp(f, "--help") || !strcmp(f, "-h"))
            return 1;
        if (i + 1 >= argc) {
            fprintf(stderr, "grpo tokenizer: %s: expected a value (see 'grpo tokenizer --help')\n", f);
            return 2;
        }
        const char *v = argv[++i];
        if (!strcmp(f, "--vocab")) {
            rc = arg_int(&a->vocab, f, v, 256, RL_TOK_VOCAB_MAX, err);
        } else if (!strcmp(f, "--out")) {
            a->out = v;
        } else if (!strcmp(f, "--input")) {
            a->inputs[a->ninputs++] = v;
        } else if (!strcmp(f, "--special")) {
            a->specials[a->nspecials++] = v;
        } else if (!strcmp(f, "--min-frequency")) {
            rc = arg_int(&a->min_freq, f, v, 1, INT_MAX, err);
        } else if (!strcmp(f, "--max-bytes")) {
            rc = arg_u64(&a->max_bytes, f, v, 1, RL_TOK_TRAIN_BYTES_MAX, err);
        } else {
            fprintf(stderr, "grpo tokenizer: unknown flag '%s' (see 'grpo tokenizer --help')\n", f);
            return 2;
        }
        if (rc < 0) {
            fprintf(stderr, "grpo tokenizer: %s\n", err);
            return 2;
        }
    }
    if (!a->vocab || !a->out) {
        fprintf(stderr, "grpo tokenizer: %s is required (see 'grpo tokenizer --help')\n",
                !a->vocab ? "--vocab N" : "--out FILE");
        return 2;
    }
    return 0;
}

/* Walks the inputs (explicit ones must exist; missing default ones are
 * skipped), trains and saves. Returns the exit code: options the trainer
 * rejects (a bad --special, a vocab too small) are usage errors. */
static int run(const args *a, char *err)
{
    double t0 = clk_s();
    tok_train_opts o = tok_train_opts_default();
    o.vocab_size = a->vocab;
    o.min_frequency = a->min_freq;
    o.extra_specials = a->specials;
    o.nextra_specials = a->nspecials;
    walk w = {.max_bytes = (size_t)a->max_bytes};
    if (tok_trainer_new(&w.tr, &o, err))
        return 2;
    int rc = 0;
    size_t n = a->ninputs ? a->ninputs : sizeof DEFAULT_INPUTS / sizeof DEFAULT_INPUTS[0];
    for (size_t i = 0; i < n && !rc; i++) {
        const char *p = a->ninputs ? a->inputs[i] : DEFAULT_INPUTS[i];
        struct stat st;
        if (!a->ninputs && stat(p, &st) < 0)
            continue;
        rc = walk_path(&w, p, 0, err);
    }
    if (!rc && w.files == 0)
        rc = rl_err(err, RL_ENOENT, "no text files found in the inputs");
    tok_t *t = NULL;
    tok_train_stats st = {0};
    if (!rc)
        rc = tok_trainer_finish(&t, &st, w.tr, err);
    tok_trainer_free(w.tr);
    if (!rc)
        rc = tok_save(t, a->out, err);
    if (!rc)
        printf("tokenizer: %zu bytes from %zu files (%zu skipped%s), vocab %d (%d merges + %d "
               "special), %.2f s, %.2f bytes/token -> %s\n",
               w.bytes, w.files, w.skipped, w.capped ? ", byte cap reached" : "",
               tok_vocab_size(t), st.merges, tok_num_specials(t), clk_s() - t0,
               st.tokens ? (double)st.bytes / (double)st.tokens : 0.0, a->out);
    tok_free(t);
    return rc ? 1 : 0;
}

int cmd_tokenizer(int argc, char **argv)
{
    size_t nmax = argc > 0 ? (size_t)argc : 1;
    args a = {.min_freq = 2, .max_bytes = RL_TOK_TRAIN_BYTES_MAX};
    a.inputs = calloc(nmax, sizeof *a.inputs);
    a.specials = calloc(nmax, sizeof *a.specials);
    if (!a.inputs || !a.specials) {
        free(a.inputs);
        free(a.specials);
        fprintf(stderr, "grpo tokenizer: out of memory\n");
        return 1;
    }
    int code = parse_args(&a, argc, argv);
    if (code == 1) {
        usage(stdout);
        code = 0;
    } else if (code == 0) {
        char err[RL_ERR_MAX] = "";
        code = run(&a, err);
        if (code)
            fprintf(stderr, "grpo tokenizer: %s\n", err);
    }
    free(a.inputs);
    free(a.specials);
    return code;
}
