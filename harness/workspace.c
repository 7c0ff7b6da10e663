/* workspace.c - git work trees for tasks, through libgit2 (see workspace.h).
 *
 * Three steps make a work tree:
 *   1. store_prepare: under an flock on the repo, the files of
 *      repos/<repo>/ become the upstream commit of a bare store and the
 *      bug patch applied to it becomes the base commit (both re-made
 *      only when their ids change; ids are deterministic).
 *   2. gitdir_prepare: the slot's own git dir, sharing the store's
 *      objects through objects/info/alternates.
 *   3. ws_reset: one walk of the work tree (no libgit2 checkout, see
 *      "reset" below): everything that is not a tracked path of the right
 *      type goes, every tracked file is read and compared byte for byte
 *      with the base blob (kept in memory) and rewritten if it differs,
 *      then what is missing is created. Stat data is never trusted, so
 *      an edit with a forged mtime cannot survive.
 * Apply and diff go through libgit2 with the slot's index kept empty, so
 * libgit2 has no stat cache to trust either.
 */
#include "harness/workspace.h"

#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "common/vec.h"
#include "corpus/task.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <git2.h>
#include <git2/sys/repository.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/* Fixed identity and time: commit ids depend on content only. */
#define WS_SIG_NAME "rl-harness"
#define WS_SIG_EMAIL "rl-harness@localhost"
#define WS_SIG_TIME 946684800 /* 2000-01-01T00:00:00Z */

#define WS_REF_UPSTREAM "refs/rl/upstream"
#define WS_REF_BASE "refs/rl/base/"

typedef struct ws_entry {
    char *path;     /* relative to the work tree, no trailing '/' */
    unsigned mode;  /* git_filemode_t of the base tree entry */
    git_oid id;
    git_blob *blob; /* cached content (blobs and links), or NULL */
} ws_entry;

struct ws_tree {
    git_repository *repo;
    git_index *index; /* always empty: see the header comment */
    git_tree *base;
    git_oid base_id;
    char base_hex[GIT_OID_HEXSZ + 1];
    char *path;   /* absolute work tree path */
    char *gitdir;
    char *store;  /* the repository's bare object store */
    struct ws_tree *companion; /* see ws_companion; NULL until asked for */
    ws_entry *ents; /* every path of the base tree, sorted by strcmp */
    size_t nents;
    unsigned char *seen; /* per entry: found in place during this pass */
    size_t cached;       /* bytes of blob content held in ents[].blob */
    size_t cache_max;
    char *scratch;       /* file contents read for comparison */
    size_t scratch_cap;
    int lock_fd;  /* flock on the slot, held while open */
    int root_fd;  /* work tree, open during a clean pass */
    int moved;    /* the clean pass moved a deep subtree up: run again */
    unsigned trash_seq;
};

/* ---- helpers ---------------------------------------------------------- */

static pthread_once_t ws_once = PTHREAD_ONCE_INIT;
static int ws_init_rc;

static void ws_init_once(void)
{
    if (git_libgit2_init() < 0) {
        ws_init_rc = -1;
        return;
    }
    /* Work-tree files belong to the sandbox uid; the git dirs are ours. */
    git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0);
    /* No system or user config: ~/.gitconfig must not change results
     * (autocrlf, excludesfile, ...). */
    git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_SYSTEM, "");
    git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_XDG, "");
    git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_GLOBAL, "");
    git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_PROGRAMDATA, "");
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    return n < 0 ? NULL : s;
}

/* The last libgit2 error message. libgit2 puts strerror() into messages
 * of OS errors, but some failed writes (a loose object on a full disk)
 * come back with no message at all: then errno, which callers clear
 * before the call, tells. */
static const char *git_msg(void)
{
    const git_error *e = git_error_last();
    if (e && e->message && e->message[0])
        return e->message;
    return errno ? strerror(errno) : "unknown libgit2 error";
}

static int is_nospace(const char *msg)
{
    return strstr(msg, strerror(ENOSPC)) || strstr(msg, strerror(EDQUOT));
}

/* Turns the last libgit2 error into one line about `what` (a path). */
static int git_fail(char *err, const char *what)
{
    const char *msg = git_msg();
    if (is_nospace(msg) && !strcmp(msg, strerror(ENOSPC)))
        return rl_err(err, RL_ENOSPC, "%s: no space left on device", what);
    if (is_nospace(msg))
        return rl_err(err, RL_ENOSPC, "%s: no space left on device (%s)", what, msg);
    return rl_err(err, RL_EGIT, "%s: %s", what, msg);
}

/* Like git_fail, for a step that reads `src` and writes into `dst`: a full
 * disk names dst (where the space ran out), anything else names src. */
static int git_fail_rw(char *err, const char *src, const char *dst)
{
    return git_fail(err, is_nospace(git_msg()) ? dst : src);
}

static int sys_fail(char *err, const char *what, const char *path)
{
    int e = errno;
    return rl_err(err, rl_from_errno(e), "%s: %s: %s", path, what, strerror(e));
}

/* Repo names and keys become file and ref names: [A-Za-z0-9._-], starting
 * with a letter or digit, no "..", not ending in ".lock". */
static int name_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > RL_WS_NAME_MAX || !isalnum((unsigned char)s[0]))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("._-", s[i]))
            return 0;
    return !strstr(s, "..") && !(n >= 5 && !strcmp(s + n - 5, ".lock"));
}

/* A path inside the work tree: relative, no empty, "." or ".." component,
 * no ".git" component (git dirs never live in a work tree). */
static int relpath_ok(const char *p, size_t n)
{
    if (n == 0 || p[0] == '/')
        return 0;
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && p[j] != '/')
            j++;
        size_t l = j - i;
        if (l == 0 || (l == 1 && p[i] == '.') || (l == 2 && !memcmp(p + i, "..", 2)) ||
            (l == 4 && !strncasecmp(p + i, ".git", 4)))
            return 0;
        i = j + 1;
    }
    return 1;
}

/* A process killed inside libgit2 (kill -9 of a batch) leaves its
 * *.lock files behind, and libgit2 then refuses to write that git dir
 * forever. Called with our own flock on the dir held, so no live writer
 * can own them: remove them. */
static int stale_lock_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    size_t n = strlen(p);
    if (flag == FTW_F && n > 5 && !strcmp(p + n - 5, ".lock"))
        unlink(p);
    return 0;
}

static void clear_stale_locks(const char *gitdir)
{
    struct stat st;
    if (stat(gitdir, &st) == 0)
        nftw(gitdir, stale_lock_cb, 16, FTW_PHYS);
}

static int lock_take(int *fd_out, const char *path, int nonblock, char *err)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return sys_fail(err, "cannot open lock file", path);
    int waited_ms = 0;
    while (flock(fd, LOCK_EX | (nonblock ? LOCK_NB : 0)) < 0) {
        if (errno == EINTR)
            continue;
        /* a killed run's last sandboxed processes can hold a slot for a
         * moment after it died: wait a little before calling it busy */
        if (errno == EWOULDBLOCK && waited_ms < RL_WS_SLOT_WAIT_MS) {
            usleep(20 * 1000);
            waited_ms += 20;
            continue;
        }
        int rc = errno != EWOULDBLOCK
                     ? sys_fail(err, "cannot lock", path)
                     : rl_err(err, RL_EINVAL, "%s: work tree slot is in use by another ws_open",
                              path);
        close(fd);
        return rc;
    }
    *fd_out = fd;
    return 0;
}

/* ---- the store: upstream and base commits ------------------------------ */

static int commit_make(git_oid *out, git_repository *repo, const git_oid *tree_id,
                       git_commit *parent, const char *msg)
{
    git_signature *sig = NULL;
    git_tree *tree = NULL;
    int rc = git_signature_new(&sig, WS_SIG_NAME, WS_SIG_EMAIL, WS_SIG_TIME, 0);
    if (!rc)
        rc = git_tree_lookup(&tree, repo, tree_id);
    if (!rc) {
        const git_commit *parents[1] = {parent};
        rc = git_commit_create(out, repo, NULL, sig, sig, NULL, msg, tree, parent ? 1 : 0,
                               parents);
    }
    git_tree_free(tree);
    git_signature_free(sig);
    return rc;
}

/* Points ref at id unless it already does (no write when nothing changed). */
static int ref_set(git_repository *repo, const char *name, const git_oid *id)
{
    git_oid cur;
    if (git_reference_name_to_id(&cur, repo, name) == 0 && git_oid_equal(&cur, id))
        return 0;
    git_reference *ref = NULL;
    int rc = git_reference_create(&ref, repo, name, id, 1, NULL);
    git_reference_free(ref);
    return rc;
}

/* Tree of the files in src, honouring its .gitignore: the store borrows
 * src as its work dir, in memory only, with a throwaway index. */
static int tree_from_folder(git_oid *out, git_repository *repo, const char *src)
{
    git_index *idx = NULL;
    int rc = git_index_new(&idx);
    if (!rc)
        rc = git_repository_set_workdir(repo, src, 0);
    if (!rc)
        git_repository_set_index(repo, idx);
    if (!rc)
        rc = git_index_add_all(idx, NULL, GIT_INDEX_ADD_DEFAULT, NULL, NULL);
    if (!rc)
        rc = git_index_write_tree(out, idx);
    git_index_free(idx);
    return rc;
}

typedef struct apply_ctx {
    char file[512];
    char hunk[128];
    int hunk_no; /* 1-based number of the hunk being applied, 0 = none yet */
} apply_ctx;

static int apply_delta_cb(const git_diff_delta *d, void *payload)
{
    apply_ctx *c = payload;
    const char *p = d->new_file.path ? d->new_file.path : d->old_file.path;
    snprintf(c->file, sizeof c->file, "%s", p ? p : "?");
    c->hunk_no = 0;
    c->hunk[0] = '\0';
    return 0;
}

static int apply_hunk_cb(const git_diff_hunk *h, void *payload)
{
    apply_ctx *c = payload;
    size_t n = h->header_len;
    while (n && (h->header[n - 1] == '\n' || h->header[n - 1] == '\r'))
        n--;
    if (n >= sizeof c->hunk)
        n = sizeof c->hunk - 1;
    memcpy(c->hunk, h->header, n);
    c->hunk[n] = '\0';
    c->hunk_no++;
    return 0;
}

/* One line for a patch that did not apply: which file, which hunk. */
static int apply_fail(char *err, const char *what, int gerr, const apply_ctx *c)
{
    const char *msg = git_msg();
    if (gerr != GIT_EAPPLYFAIL) /* not a mismatch: disk full, i/o, ... */
        return git_fail(err, what);
    if (!c->file[0])
        return rl_err(err, RL_EINVAL, "%s: patch does not apply: %s", what, msg);
    if (c->hunk_no)
        return rl_err(err, RL_EINVAL, "%s: patch does not apply: %s: hunk #%d %s does not match",
                      what, c->file, c->hunk_no, c->hunk);
    if (gerr == GIT_EAPPLYFAIL && !strstr(msg, c->file))
        msg = "file to patch is missing";
    return rl_err(err, RL_EINVAL, "%s: patch does not apply: %s: %s", what, c->file, msg);
}

/* Parses a patch; refuses paths that would leave the work tree. */
static int patch_parse(git_diff **out, const char *patch, const char *what, char *err)
{
    size_t len = strlen(patch);
    if (len > RL_WS_PATCH_MAX)
        return rl_err(err, RL_ELIMIT, "%s: patch is %zu bytes, limit is %u", what, len,
                      RL_WS_PATCH_MAX);
    if (git_diff_from_buffer(out, patch, len) < 0) {
        const git_error *e = git_error_last();
        return rl_err(err, RL_EPARSE, "%s: malformed patch: %s", what,
                      e && e->message ? e->message : "unknown error");
    }
    size_t n = git_diff_num_deltas(*out);
    for (size_t i = 0; i < n; i++) {
        const git_diff_delta *d = git_diff_get_delta(*out, i);
        const char *paths[2] = {d->old_file.path, d->new_file.path};
        for (int k = 0; k < 2; k++) {
            if (paths[k] && !relpath_ok(paths[k], strlen(paths[k]))) {
                int rc = rl_err(err, RL_EDENIED,
                                "%s: patch path '%s' is not a plain path inside the work tree",
                                what, paths[k]);
                git_diff_free(*out);
                *out = NULL;
                return rc;
            }
        }
    }
    if (n == 0) {
        git_diff_free(*out);
        *out = NULL;
        return rl_err(err, RL_EPARSE, "%s: patch contains no file changes", what);
    }
    return 0;
}

/* Base = upstream + bug patch, applied in memory to the upstream tree. */
static int base_make(git_oid *out, git_repository *repo, git_commit *up, const char *key,
                     const char *patch, char *err)
{
    git_diff *diff = NULL;
    git_tree *tree = NULL;
    git_index *idx = NULL;
    git_oid tree_id;
    char what[64 + RL_WS_NAME_MAX];
    snprintf(what, sizeof what, "bug patch of %s", key);
    int rc = patch_parse(&diff, patch, what, err);
    if (rc)
        return rc;
    apply_ctx c = {0};
    git_apply_options ao;
    git_apply_options_init(&ao, GIT_APPLY_OPTIONS_VERSION);
    ao.delta_cb = apply_delta_cb;
    ao.hunk_cb = apply_hunk_cb;
    ao.payload = &c;
    if (git_commit_tree(&tree, up) < 0) {
        rc = git_fail(err, what);
        goto done;
    }
    errno = 0;
    int g = git_apply_to_tree(&idx, repo, tree, diff, &ao);
    if (g < 0) {
        rc = apply_fail(err, what, g, &c);
        goto done;
    }
    char *msg = xasprintf("base %s\n", key);
    if (!msg) {
        rc = rl_err(err, RL_ENOMEM, "%s: out of memory", what);
        goto done;
    }
    if (git_index_write_tree_to(&tree_id, idx, repo) < 0 ||
        commit_make(out, repo, &tree_id, up, msg) < 0)
        rc = git_fail(err, what);
    free(msg);
done:
    git_index_free(idx);
    git_tree_free(tree);
    git_diff_free(diff);
    return rc;
}

/* Under the repo's flock: the store exists, upstream matches src, and
 * refs/rl/base/<key> is upstream + patch. */
static int store_prepare(git_oid *base_out, const char *store, const char *src,
                         const char *repo_name, const char *key, const char *patch, char *err)
{
    git_repository *repo = NULL;
    git_commit *up = NULL;
    git_oid tree_id, up_id;
    int rc = 0;

    if (git_repository_open_bare(&repo, store) < 0 &&
        (errno = 0, git_repository_init(&repo, store, 1) < 0))
        return git_fail(err, store);

    errno = 0;
    if (tree_from_folder(&tree_id, repo, src) < 0) {
        rc = git_fail_rw(err, src, store);
        goto done;
    }
    /* Re-use the upstream commit if its tree is still the folder's. */
    if (git_reference_name_to_id(&up_id, repo, WS_REF_UPSTREAM) == 0 &&
        git_commit_lookup(&up, repo, &up_id) == 0 &&
        !git_oid_equal(git_commit_tree_id(up), &tree_id)) {
        git_commit_free(up);
        up = NULL;
    }
    if (!up) {
        char *msg = xasprintf("upstream %s\n", repo_name);
        if (!msg) {
            rc = rl_err(err, RL_ENOMEM, "%s: out of memory", store);
            goto done;
        }
        int g = commit_make(&up_id, repo, &tree_id, NULL, msg);
        free(msg);
        if (g < 0 || ref_set(repo, WS_REF_UPSTREAM, &up_id) < 0 ||
            git_commit_lookup(&up, repo, &up_id) < 0) {
            rc = git_fail(err, store);
            goto done;
        }
    }

    if (patch && *patch)
        rc = base_make(base_out, repo, up, key, patch, err);
    else
        git_oid_cpy(base_out, &up_id);
    if (!rc) {
        char ref[sizeof WS_REF_BASE + RL_WS_NAME_MAX];
        snprintf(ref, sizeof ref, "%s%s", WS_REF_BASE, key);
        if (ref_set(repo, ref, base_out) < 0)
            rc = git_fail(err, store);
    }
done:
    git_commit_free(up);
    git_repository_free(repo);
    return rc;
}

/* ---- one work tree's git dir ------------------------------------------ */

/* Creates (or repairs) the slot's git dir: a repository that borrows the
 * store's objects and whose config names the work tree, for `git
 * --git-dir=...` users; we set the work dir in memory ourselves. */
static int gitdir_prepare(const char *gitdir, const char *wt, const char *store, char *err)
{
    git_repository *r = NULL;
    git_config *cfg = NULL;
    int rc = 0;
    char *alt = xasprintf("%s/objects/info/alternates", gitdir);
    char *want = xasprintf("%s/objects\n", store);
    if (!alt || !want) {
        rc = rl_err(err, RL_ENOMEM, "%s: out of memory", gitdir);
        goto done;
    }
    if (git_repository_open_ext(&r, gitdir,
                                GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_BARE,
                                NULL) < 0) {
        /* Missing or half made (killed mid-way): start over. */
        if ((rc = fs_remove_tree(gitdir, err)))
            goto done;
        git_repository_init_options io;
        git_repository_init_options_init(&io, GIT_REPOSITORY_INIT_OPTIONS_VERSION);
        io.flags = GIT_REPOSITORY_INIT_MKPATH | GIT_REPOSITORY_INIT_BARE;
        if (git_repository_init_ext(&r, gitdir, &io) < 0 ||
            git_repository_config(&cfg, r) < 0 ||
            git_config_set_bool(cfg, "core.bare", 0) < 0 ||
            git_config_set_string(cfg, "core.worktree", wt) < 0 ||
            git_config_set_bool(cfg, "core.logallrefupdates", 0) < 0) {
            rc = git_fail(err, gitdir);
            goto done;
        }
    }
    /* The root may have moved since: keep the config and alternates true. */
    git_buf cur = {0};
    if (!cfg && git_repository_config(&cfg, r) < 0) {
        rc = git_fail(err, gitdir);
        goto done;
    }
    int same = git_config_get_string_buf(&cur, cfg, "core.worktree") == 0 && !strcmp(cur.ptr, wt);
    git_buf_dispose(&cur);
    if (!same && git_config_set_string(cfg, "core.worktree", wt) < 0) {
        rc = git_fail(err, gitdir);
        goto done;
    }
    char *have = NULL;
    if (fs_read_file(&have, NULL, alt, 1 << 16, NULL) != 0 || strcmp(have, want) != 0)
        rc = fs_write_atomic(alt, want, strlen(want), err);
    free(have);
done:
    git_config_free(cfg);
    git_repository_free(r);
    free(alt);
    free(want);
    return rc;
}

static int ent_cmp(const void *a, const void *b)
{
    return strcmp(((const ws_entry *)a)->path, ((const ws_entry *)b)->path);
}

typedef struct ents_acc {
    ws_tree *t;
    size_t alloc;
    int rc; /* RL_ENOMEM or RL_ELIMIT: the walk stopped */
} ents_acc;

static int ents_walk_cb(const char *root, const git_tree_entry *e, void *payload)
{
    ents_acc *a = payload;
    ws_tree *t = a->t;
    if ((a->rc = VEC_GROW(t->ents, a->alloc, t->nents + 1, RL_WS_TREE_ENTRIES_MAX)) < 0)
        return -1;
    char *p = xasprintf("%s%s", root, git_tree_entry_name(e));
    if (!p)
        goto oom;
    t->ents[t->nents].path = p;
    t->ents[t->nents].mode = git_tree_entry_filemode(e);
    git_oid_cpy(&t->ents[t->nents].id, git_tree_entry_id(e));
    t->ents[t->nents].blob = NULL;
    t->nents++;
    return 0;
oom:
    a->rc = RL_ENOMEM;
    return -1;
}

static int ents_build(ws_tree *t, char *err)
{
    ents_acc a = {t, 0, 0};
    if (git_tree_walk(t->base, GIT_TREEWALK_PRE, ents_walk_cb, &a) < 0) {
        if (a.rc == RL_ELIMIT)
            return rl_err(err, RL_ELIMIT, "%s: base tree of more than %u entries", t->path, RL_WS_TREE_ENTRIES_MAX);
        return a.rc ? rl_err(err, RL_ENOMEM, "%s: out of memory", t->path) : git_fail(err, t->gitdir);
    }
    qsort(t->ents, t->nents, sizeof *t->ents, ent_cmp);
    t->seen = calloc(t->nents ? t->nents : 1, 1);
    if (!t->seen)
        return rl_err(err, RL_ENOMEM, "%s: out of memory", t->path);
    /* Keep the base's contents in memory (up to a cap): reset compares
     * and writes them without touching the object store. */
    for (size_t i = 0; i < t->nents; i++) {
        ws_entry *e = &t->ents[i];
        if (e->mode == GIT_FILEMODE_TREE || e->mode == GIT_FILEMODE_COMMIT)
            continue;
        git_blob *b;
        if (git_blob_lookup(&b, t->repo, &e->id) < 0)
            return git_fail(err, t->gitdir);
        size_t n = (size_t)git_blob_rawsize(b);
        if (t->cached + n > t->cache_max) {
            git_blob_free(b);
            continue;
        }
        e->blob = b;
        t->cached += n;
    }
    return 0;
}

static const ws_entry *ents_find(const ws_tree *t, const char *path)
{
    ws_entry key = {.path = (char *)path};
    return t->nents ? bsearch(&key, t->ents, t->nents, sizeof key, ent_cmp) : NULL;
}

/* ---- open / free ------------------------------------------------------ */

/* Work trees live on tmpfs when the machine has one: a reset of a dirty
 * 40-file tree costs ~0.6 ms there, 2-10 ms on a busy ext4 (bench_reset).
 * The sandbox mounts a work dir below /dev/shm into the private /dev/shm
 * it gives each command, so the command still sees it (and nothing else
 * of the host's /dev/shm).
 *
 * The folder is /dev/shm/rl-ws-<uid>-<hash of the current directory's
 * real path>: one per user and checkout (repos_dir defaults to "repos",
 * relative to it), so two checkouts never share slots or stores. /dev/shm
 * is world-writable: the folder is used only if it is a directory of our
 * own that nobody else may write (the sticky bit keeps others from
 * replacing it), else build/ws. Mode 0755 as root, so that the sandbox uid
 * can search it where the sandbox has no mount namespace of its own; 0700
 * otherwise (the sandbox then runs as our own uid). Found once per
 * process. */
static char g_shm_root[64];
static pthread_once_t g_shm_once = PTHREAD_ONCE_INIT;

static void shm_root_init(void)
{
    struct statfs fs;
    char cwd[PATH_MAX];
    if (statfs("/dev/shm", &fs) < 0 || fs.f_type != TMPFS_MAGIC || access("/dev/shm", W_OK) < 0 ||
        !realpath(".", cwd))
        return;
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (const char *p = cwd; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    char path[sizeof g_shm_root];
    uid_t uid = geteuid();
    snprintf(path, sizeof path, "/dev/shm/rl-ws-%u-%012llx", (unsigned)uid,
             (unsigned long long)(h & 0xffffffffffffULL));
    mode_t mode = uid == 0 ? 0755 : 0700;
    if (mkdir(path, mode) < 0 && errno != EEXIST)
        return;
    struct stat st;
    if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 022))
        return;
    if ((st.st_mode & 07777) != mode && chmod(path, mode) < 0) /* the umask may have cut it */
        return;
    memcpy(g_shm_root, path, sizeof path);
}

/* RL_WS_ROOT, else the folder on /dev/shm, else build/ws. */
static const char *default_root(void)
{
    const char *env = getenv("RL_WS_ROOT");
    if (env && env[0])
        return env;
    pthread_once(&g_shm_once, shm_root_init);
    return g_shm_root[0] ? g_shm_root : "build/ws";
}

void ws_opts_default(ws_opts *o)
{
    o->root = default_root();
    o->repos_dir = "repos";
    o->cache_max = RL_WS_BLOB_CACHE_MAX;
}

const char *ws_path(const ws_tree *t) { return t->path; }

const char *ws_base_id(const ws_tree *t) { return t->base_hex; }

void ws_free(ws_tree *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nents; i++) { /* objects before their repo */
        free(t->ents[i].path);
        git_blob_free(t->ents[i].blob);
    }
    ws_free(t->companion);
    git_tree_free(t->base);
    git_index_free(t->index);
    git_repository_free(t->repo);
    free(t->ents);
    free(t->seen);
    free(t->scratch);
    free(t->path);
    free(t->gitdir);
    free(t->store);
    if (t->lock_fd >= 0)
        close(t->lock_fd); /* releases the slot's flock */
    free(t);
}

/* repos_dir/<repo> must be an existing folder. */
static int src_check(const char *src, char *err)
{
    struct stat st;
    if (stat(src, &st) < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return rl_err(err, RL_ENOENT, "%s: repository folder not found", src);
        return sys_fail(err, "cannot stat repository folder", src);
    }
    if (!S_ISDIR(st.st_mode))
        return rl_err(err, RL_EINVAL, "%s: not a folder (expected a repository folder)", src);
    return 0;
}

/* Opens the slot's repository on its work tree, with an empty index. */
static int tree_attach(ws_tree *t, char *err)
{
    git_commit *c = NULL;
    int rc = 0;
    if (git_repository_open_ext(&t->repo, t->gitdir,
                                GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_BARE,
                                NULL) < 0 ||
        git_repository_set_workdir(t->repo, t->path, 0) < 0 ||
        git_repository_index(&t->index, t->repo) < 0)
        return git_fail(err, t->gitdir);
    /* An empty index file on disk too: git_apply reads and rewrites it. */
    if (git_index_clear(t->index) < 0 || git_index_write(t->index) < 0 ||
        git_commit_lookup(&c, t->repo, &t->base_id) < 0 || git_commit_tree(&t->base, c) < 0 ||
        git_repository_set_head_detached(t->repo, &t->base_id) < 0)
        rc = git_fail(err, t->gitdir);
    git_commit_free(c);
    return rc ? rc : ents_build(t, err);
}

int ws_open(ws_tree **out, const ws_opts *opts, const char *repo, const char *key,
            const char *bug_patch, int slot, char *err)
{
    ws_opts def;
    if (!opts) {
        ws_opts_default(&def);
        opts = &def;
    }
    *out = NULL;
    if (!name_ok(repo))
        return rl_err(err, RL_EINVAL,
                      "repo name '%s': expected 1-%d characters of [A-Za-z0-9._-]",
                      repo ? repo : "(null)", RL_WS_NAME_MAX);
    if (!name_ok(key))
        return rl_err(err, RL_EINVAL, "key '%s': expected 1-%d characters of [A-Za-z0-9._-]",
                      key ? key : "(null)", RL_WS_NAME_MAX);
    if (slot < 0 || slot >= RL_WS_SLOT_MAX)
        return rl_err(err, RL_EINVAL, "slot %d: expected 0..%d", slot, RL_WS_SLOT_MAX - 1);
    pthread_once(&ws_once, ws_init_once);
    if (ws_init_rc)
        return rl_err(err, RL_EGIT, "libgit2: initialization failed");

    int rc;
    char *src = NULL, *root = NULL, *store = NULL, *lock = NULL;
    ws_tree *t = calloc(1, sizeof *t);
    if (!t)
        return rl_err(err, RL_ENOMEM, "ws_open: out of memory");
    t->lock_fd = -1;
    t->root_fd = -1;
    t->cache_max = opts->cache_max < RL_WS_BLOB_CACHE_MAX ? opts->cache_max : RL_WS_BLOB_CACHE_MAX;

    src = xasprintf("%s/%s", opts->repos_dir, repo);
    if (!src) {
        rc = rl_err(err, RL_ENOMEM, "ws_open: out of memory");
        goto fail;
    }
    if ((rc = src_check(src, err)) || (rc = fs_mkdirs(opts->root, err)))
        goto fail;
    if (!(root = realpath(opts->root, NULL))) {
        rc = sys_fail(err, "cannot resolve", opts->root);
        goto fail;
    }
    store = xasprintf("%s/store/%s.git", root, repo);
    lock = xasprintf("%s/locks", root);
    t->path = xasprintf("%s/trees/%s-%d", root, key, slot);
    t->gitdir = xasprintf("%s/git/%s-%d", root, key, slot);
    if (!store || !lock || !t->path || !t->gitdir) {
        rc = rl_err(err, RL_ENOMEM, "ws_open: out of memory");
        goto fail;
    }
    if ((rc = fs_mkdirs(lock, err)))
        goto fail;

    /* 1. store, under the repo lock (other slots and processes wait). */
    int sfd;
    char *slock = xasprintf("%s/store-%s.lock", lock, repo);
    if (!slock) {
        rc = rl_err(err, RL_ENOMEM, "ws_open: out of memory");
        goto fail;
    }
    rc = lock_take(&sfd, slock, 0, err);
    free(slock);
    if (rc)
        goto fail;
    clear_stale_locks(store);
    rc = store_prepare(&t->base_id, store, src, repo, key, bug_patch, err);
    close(sfd);
    if (rc)
        goto fail;
    git_oid_tostr(t->base_hex, sizeof t->base_hex, &t->base_id);
    if (!(t->store = strdup(store))) {
        rc = rl_err(err, RL_ENOMEM, "ws_open: out of memory");
        goto fail;
    }

    /* 2. the slot: its lock is held until ws_free. */
    char *tlock = xasprintf("%s/tree-%s-%d.lock", lock, key, slot);
    if (!tlock) {
        rc = rl_err(err, RL_ENOMEM, "ws_open: out of memory");
        goto fail;
    }
    rc = lock_take(&t->lock_fd, tlock, 1, err);
    free(tlock);
    if (!rc)
        clear_stale_locks(t->gitdir);
    if (rc || (rc = gitdir_prepare(t->gitdir, t->path, store, err)) ||
        (rc = fs_mkdirs(t->path, err)) || (rc = tree_attach(t, err)))
        goto fail;

    /* 3. clean checkout of the base. */
    if ((rc = ws_reset(t, err)))
        goto fail;
    free(src);
    free(root);
    free(store);
    free(lock);
    *out = t;
    return 0;
fail:
    free(src);
    free(root);
    free(store);
    free(lock);
    ws_free(t);
    return rc;
}

int ws_companion(ws_tree **out, ws_tree *t, char *err)
{
    *out = NULL;
    if (t->companion) {
        *out = t->companion;
        return 0;
    }
    /* The companion shares the slot's lock: it is only ever used through
     * the tree that owns it. "-<slot>.score" never ends a primary tree's
     * name (those end in the slot number). */
    int rc;
    ws_tree *c = calloc(1, sizeof *c);
    if (!c)
        return rl_err(err, RL_ENOMEM, "ws_companion: out of memory");
    c->lock_fd = -1;
    c->root_fd = -1;
    c->cache_max = t->cache_max;
    c->base_id = t->base_id;
    memcpy(c->base_hex, t->base_hex, sizeof c->base_hex);
    c->path = xasprintf("%s.score", t->path);
    c->gitdir = xasprintf("%s.score", t->gitdir);
    c->store = strdup(t->store);
    if (!c->path || !c->gitdir || !c->store) {
        rc = rl_err(err, RL_ENOMEM, "ws_companion: out of memory");
        goto fail;
    }
    clear_stale_locks(c->gitdir);
    if ((rc = gitdir_prepare(c->gitdir, c->path, c->store, err)) ||
        (rc = fs_mkdirs(c->path, err)) || (rc = tree_attach(c, err)) || (rc = ws_reset(c, err)))
        goto fail;
    t->companion = c;
    *out = c;
    return 0;
fail:
    ws_free(c);
    return rc;
}

/* ---- reset: our own walk, contents compared byte for byte ------------- */

/* Why not git_checkout_tree: given an empty index it does hash every
 * file, but it also probes .gitattributes and realpath()s each path
 * (~30 syscalls per file), 4-5 ms for 40 files. This walk makes about
 * four syscalls per unchanged file and never trusts stat data: every
 * tracked file is read and compared with the base blob. */

/* Can the file on disk stay (its content is checked next)? A wrong type
 * or a hard link (it may be shared with a file outside) is removed and
 * written anew. */
static int entry_matches(const ws_entry *e, const struct stat *st)
{
    switch (e->mode) {
    case GIT_FILEMODE_LINK:
        return S_ISLNK(st->st_mode);
    case GIT_FILEMODE_BLOB:
    case GIT_FILEMODE_BLOB_EXECUTABLE:
        return S_ISREG(st->st_mode) && st->st_nlink == 1;
    default:
        return 1;
    }
}

static mode_t entry_perm(const ws_entry *e)
{
    return e->mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0755 : 0644;
}

/* errno of a failed write into the work tree, as one line naming it. */
static int wt_fail(const ws_tree *t, const char *what, const char *rel, char *err)
{
    int e = errno;
    if (e == ENOSPC || e == EDQUOT)
        return rl_err(err, RL_ENOSPC, "%s/%s: no space left on device (%s)", t->path, rel, what);
    return rl_err(err, rl_from_errno(e), "%s/%s: %s: %s", t->path, rel, what, strerror(e));
}

static int blob_get(git_blob **out, ws_tree *t, const ws_entry *e, char *err)
{
    if (e->blob) {
        *out = e->blob;
        return 0;
    }
    if (git_blob_lookup(out, t->repo, &e->id) < 0)
        return git_fail(err, t->gitdir);
    return 0;
}

static void blob_put(const ws_entry *e, git_blob *b)
{
    if (b != e->blob)
        git_blob_free(b);
}

/* Room in t->scratch for the n bytes of base entry rel and a NUL. */
static int scratch_grow(ws_tree *t, size_t n, const char *rel, char *err)
{
    int rc = VEC_GROW(t->scratch, t->scratch_cap, n + 1, RL_WS_COMPARE_MAX + 1);
    if (rc == RL_ELIMIT)
        return rl_err(err, rc, "%s/%s: base file of %zu bytes, limit is %u", t->path, rel, n, RL_WS_COMPARE_MAX);
    if (rc < 0)
        return rl_err(err, rc, "%s: out of memory", t->path);
    return 0;
}

/* 1 if fd (whose size was n at fstat) holds exactly data[0..n), 0 if
 * not, < 0 on error. Nothing writes to the tree during a reset (the
 * sandbox has killed every process), so the size cannot change. */
static int fd_same(ws_tree *t, int fd, const void *data, size_t n, const char *rel, char *err)
{
    int rc = scratch_grow(t, n, rel, err);
    if (rc)
        return rc;
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, t->scratch + got, n - got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return wt_fail(t, "cannot read", rel, err);
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return got == n && memcmp(t->scratch, data, n) == 0;
}

/* Writes e's content to name under dfd, never through a symlink, with the
 * exact mode (0644 or 0755). An existing file (old: its stat, a regular
 * file with one link; NULL for a new one) is overwritten in place and cut
 * to size: O_TRUNC would free its blocks and allocate new ones, which
 * costs ~1 ms per file on ext4 with online discard. */
static int blob_write_at(ws_tree *t, int dfd, const char *name, const ws_entry *e,
                         const struct stat *old, const char *rel, char *err)
{
    git_blob *b;
    int rc = blob_get(&b, t, e, err);
    if (rc)
        return rc;
    const char *p = git_blob_rawcontent(b);
    size_t n = (size_t)git_blob_rawsize(b);
    int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (old ? 0 : O_TRUNC);
    int fd = openat(dfd, name, flags, entry_perm(e));
    if (fd < 0) {
        rc = wt_fail(t, "cannot write", rel, err);
        goto done;
    }
    off_t size = (off_t)n;
    while (n && !rc) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = ENOSPC;
            rc = wt_fail(t, "cannot write", rel, err);
            break;
        }
        p += w;
        n -= (size_t)w;
    }
    if (!rc && old && old->st_size > size && ftruncate(fd, size) < 0)
        rc = wt_fail(t, "cannot truncate", rel, err);
    /* exact mode: umask may have cut a new file's, agent code an old one's */
    if (!rc && (!old || (old->st_mode & 07777) != entry_perm(e)) && fchmod(fd, entry_perm(e)) < 0)
        rc = wt_fail(t, "cannot chmod", rel, err);
    if (close(fd) < 0 && !rc)
        rc = wt_fail(t, "cannot write", rel, err);
done:
    blob_put(e, b);
    return rc;
}

static int link_write_at(ws_tree *t, int dfd, const char *name, const ws_entry *e,
                         const char *rel, char *err)
{
    git_blob *b;
    int rc = blob_get(&b, t, e, err);
    if (rc)
        return rc;
    size_t n = (size_t)git_blob_rawsize(b);
    if (!(rc = scratch_grow(t, n, rel, err))) {
        memcpy(t->scratch, git_blob_rawcontent(b), n);
        t->scratch[n] = '\0';
        if (symlinkat(t->scratch, dfd, name) < 0)
            rc = wt_fail(t, "cannot create symlink", rel, err);
    }
    blob_put(e, b);
    return rc;
}

/* name (a file or link of the right type) gets e's content and mode. */
static int entry_sync_at(ws_tree *t, int dfd, const char *name, const ws_entry *e,
                         const struct stat *st, const char *rel, char *err)
{
    if (e->mode != GIT_FILEMODE_LINK && e->mode != GIT_FILEMODE_BLOB &&
        e->mode != GIT_FILEMODE_BLOB_EXECUTABLE)
        return 0;
    git_blob *b;
    int rc = blob_get(&b, t, e, err), same = 0;
    if (rc)
        return rc;
    size_t n = (size_t)git_blob_rawsize(b);
    if (e->mode == GIT_FILEMODE_LINK) {
        if ((rc = scratch_grow(t, n, rel, err)))
            goto done;
        ssize_t r = readlinkat(dfd, name, t->scratch, n + 1);
        if (r == (ssize_t)n && !memcmp(t->scratch, git_blob_rawcontent(b), n))
            goto done;
        if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT)
            rc = wt_fail(t, "cannot remove", rel, err);
        else
            rc = link_write_at(t, dfd, name, e, rel, err);
        goto done;
    }
    if ((size_t)st->st_size == n) {
        int fd = openat(dfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            rc = wt_fail(t, "cannot open", rel, err);
            goto done;
        }
        same = fd_same(t, fd, git_blob_rawcontent(b), n, rel, err);
        close(fd);
        if (same < 0) {
            rc = same;
            goto done;
        }
    }
    if (!same)
        rc = blob_write_at(t, dfd, name, e, st, rel, err);
    else if ((st->st_mode & 07777) != entry_perm(e) &&
             fchmodat(dfd, name, entry_perm(e), 0) < 0) /* chmod +x, 000, setuid */
        rc = wt_fail(t, "cannot chmod", rel, err);
done:
    blob_put(e, b);
    return rc;
}

/* Removes name under dfd (file, symlink or directory tree) without ever
 * following a symlink. Past RL_WS_CLEAN_DEPTH_MAX levels the subtree is
 * renamed to the work tree root instead, for the next pass. */
static int remove_at(ws_tree *t, int dfd, const char *name, int depth, char *err)
{
    if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
        return 0;
    if (errno != EISDIR && errno != EPERM)
        return wt_fail(t, "cannot remove", name, err);
    if (depth >= RL_WS_CLEAN_DEPTH_MAX) {
        char trash[64];
        snprintf(trash, sizeof trash, ".rl-trash-%ld-%u", (long)getpid(), t->trash_seq++);
        if (renameat(dfd, name, t->root_fd, trash) < 0)
            return wt_fail(t, "cannot move deep directory", name, err);
        t->moved = 1;
        return 0;
    }
    int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return wt_fail(t, "cannot open directory", name, err);
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return wt_fail(t, "cannot read directory", name, err);
    }
    int rc = 0;
    struct dirent *de;
    while (!rc && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        rc = remove_at(t, fd, de->d_name, depth + 1, err);
    }
    closedir(d);
    if (!rc && unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
        rc = wt_fail(t, "cannot remove directory", name, err);
    return rc;
}

/* Keeps only tracked paths of the right type in the directory open at
 * fd (rel = its path relative to the work tree, "" or ending in '/'),
 * brings their contents back to the base and marks them seen. Takes fd
 * (a fresh open, never a dup: that would share the read offset). */
static int clean_dir(ws_tree *t, int fd, char *rel, size_t rlen, char *err)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return wt_fail(t, "cannot read directory", rel, err);
    }
    int dfd = dirfd(d);
    int rc = 0;
    struct dirent *de;
    while (!rc && (de = readdir(d))) {
        const char *name = de->d_name;
        if (!strcmp(name, ".") || !strcmp(name, ".."))
            continue;
        size_t nl = strlen(name);
        const ws_entry *e = NULL;
        if (rlen + nl + 2 < PATH_MAX) { /* longer paths are never tracked */
            memcpy(rel + rlen, name, nl + 1);
            e = ents_find(t, rel);
        }
        struct stat st;
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            if (errno != ENOENT)
                rc = wt_fail(t, "cannot stat", rel, err);
        } else if (e && e->mode == GIT_FILEMODE_TREE && S_ISDIR(st.st_mode)) {
            t->seen[e - t->ents] = 1;
            int cfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (cfd < 0) {
                rc = wt_fail(t, "cannot open directory", rel, err);
            } else {
                if ((st.st_mode & 07777) != 0755)
                    (void)fchmod(cfd, 0755); /* a chmod 000 must not outlive the episode */
                rel[rlen + nl] = '/';
                rel[rlen + nl + 1] = '\0';
                rc = clean_dir(t, cfd, rel, rlen + nl + 1, err);
            }
        } else if (!e || e->mode == GIT_FILEMODE_TREE || !entry_matches(e, &st)) {
            rc = remove_at(t, dfd, name, 1, err);
        } else {
            t->seen[e - t->ents] = 1;
            rc = entry_sync_at(t, dfd, name, e, &st, rel, err);
        }
        rel[rlen] = '\0';
    }
    closedir(d);
    return rc;
}

/* Opens the work tree root, re-creating it if agent code removed it. */
static int root_open(ws_tree *t, char *err)
{
    struct stat st;
    if (lstat(t->path, &st) == 0 && !S_ISDIR(st.st_mode) && unlink(t->path) < 0)
        return sys_fail(err, "cannot remove", t->path);
    if (mkdir(t->path, 0755) < 0 && errno != EEXIST)
        return sys_fail(err, "cannot create work tree", t->path);
    t->root_fd = open(t->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (t->root_fd < 0)
        return sys_fail(err, "cannot open work tree", t->path);
    if (fstat(t->root_fd, &st) == 0 && (st.st_mode & 07777) != 0755)
        (void)fchmod(t->root_fd, 0755);
    return 0;
}

static void root_close(ws_tree *t)
{
    if (t->root_fd >= 0)
        close(t->root_fd);
    t->root_fd = -1;
}

static int clean_tree(ws_tree *t, char *err)
{
    char rel[PATH_MAX];
    int passes = 0, rc;
    do {
        if (++passes > RL_WS_CLEAN_PASSES_MAX)
            return rl_err(err, RL_ELIMIT, "%s: untracked directories nested too deep to clean",
                          t->path);
        t->moved = 0;
        rel[0] = '\0';
        /* a fresh open each pass: restart reading at the top */
        int fd = openat(t->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
            return sys_fail(err, "cannot open work tree", t->path);
        if ((rc = clean_dir(t, fd, rel, 0, err)))
            return rc;
    } while (t->moved);
    return 0;
}

/* Removes the deep subtrees a restore moved up to the root (".rl-trash-*"),
 * pass after pass; a full reset needs none of this (they are untracked). */
static int clean_trash(ws_tree *t, char *err)
{
    for (int pass = 0; t->moved; pass++) {
        if (pass >= RL_WS_CLEAN_PASSES_MAX)
            return rl_err(err, RL_ELIMIT, "%s: untracked directories nested too deep to clean",
                          t->path);
        t->moved = 0;
        int fd = openat(t->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fd < 0 ? NULL : fdopendir(fd);
        if (!d) {
            if (fd >= 0)
                close(fd);
            return sys_fail(err, "cannot read directory", t->path);
        }
        int rc = 0;
        struct dirent *de;
        while (!rc && (de = readdir(d)))
            if (!strncmp(de->d_name, ".rl-trash-", 10))
                rc = remove_at(t, t->root_fd, de->d_name, 1, err);
        closedir(d);
        if (rc)
            return rc;
    }
    return 0;
}

/* Is path one of only[] or under one of them? */
static int path_under_any(const char *path, char **only, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(only[i]);
        if (!strncmp(path, only[i], l) && (path[l] == '\0' || path[l] == '/'))
            return 1;
    }
    return 0;
}

/* mkdir -p of rel's leading components (the clean pass made sure that
 * those present are real directories). */
static int parents_make(ws_tree *t, const char *rel, char *err)
{
    char buf[PATH_MAX];
    size_t n = strlen(rel);
    if (n >= sizeof buf)
        return rl_err(err, RL_EINVAL, "%s: path too long", rel);
    memcpy(buf, rel, n + 1);
    for (char *p = strchr(buf, '/'); p; p = strchr(p + 1, '/')) {
        *p = '\0';
        if (mkdirat(t->root_fd, buf, 0755) == 0)
            (void)fchmodat(t->root_fd, buf, 0755, 0);
        else if (errno != EEXIST)
            return wt_fail(t, "cannot create directory", buf, err);
        *p = '/';
    }
    return 0;
}

/* Creates every tracked entry the walk did not find (all of them, or
 * those under only[]). Entries are sorted, so a directory comes before
 * its contents. */
static int create_missing(ws_tree *t, char **only, size_t nonly, char *err)
{
    int rc = 0;
    for (size_t i = 0; i < t->nents && !rc; i++) {
        const ws_entry *e = &t->ents[i];
        if (t->seen[i] || e->mode == GIT_FILEMODE_COMMIT ||
            (nonly && !path_under_any(e->path, only, nonly)))
            continue;
        if (nonly && (rc = parents_make(t, e->path, err)))
            break;
        if (e->mode == GIT_FILEMODE_TREE) {
            if (mkdirat(t->root_fd, e->path, 0755) < 0 && errno != EEXIST)
                rc = wt_fail(t, "cannot create directory", e->path, err);
            else
                (void)fchmodat(t->root_fd, e->path, 0755, 0);
        } else if (e->mode == GIT_FILEMODE_LINK) {
            rc = link_write_at(t, t->root_fd, e->path, e, e->path, err);
        } else {
            rc = blob_write_at(t, t->root_fd, e->path, e, NULL, e->path, err);
        }
        t->seen[i] = 1;
    }
    return rc;
}

int ws_reset(ws_tree *t, char *err)
{
    int rc = root_open(t, err);
    if (!rc) {
        memset(t->seen, 0, t->nents);
        rc = clean_tree(t, err);
    }
    if (!rc)
        rc = create_missing(t, NULL, 0, err);
    root_close(t);
    return rc;
}

/* ---- restore ---------------------------------------------------------- */

/* Brings rel (no trailing '/') back to the base where it stands: every
 * leading component a real directory, the path itself of the right type
 * and content, and under a directory only what the base tracks. What is
 * missing afterwards is created by create_missing. */
static int restore_prep(ws_tree *t, const char *rel, char *err)
{
    char buf[PATH_MAX];
    size_t n = strlen(rel);
    if (n + 2 >= sizeof buf)
        return rl_err(err, RL_EINVAL, "%s: path too long", rel);
    memcpy(buf, rel, n + 1);
    int dfd = openat(t->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;
    if (dfd < 0)
        return sys_fail(err, "cannot open work tree", t->path);
    char *comp = buf;
    for (;;) {
        char *slash = strchr(comp, '/');
        if (slash)
            *slash = '\0';
        const ws_entry *e = ents_find(t, buf);
        struct stat st;
        if (fstatat(dfd, comp, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            if (errno != ENOENT && errno != ENOTDIR)
                rc = wt_fail(t, "cannot stat", buf, err);
            break; /* missing: create_missing makes it */
        }
        if (slash) { /* a leading component */
            if (!S_ISDIR(st.st_mode)) {
                if (e && e->mode == GIT_FILEMODE_TREE)
                    rc = remove_at(t, dfd, comp, 1, err);
                break;
            }
            int cfd = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (cfd < 0) {
                rc = wt_fail(t, "cannot open directory", buf, err);
                break;
            }
            close(dfd);
            dfd = cfd;
            *slash = '/';
            comp = slash + 1;
            continue;
        }
        /* the path itself */
        if (e && e->mode == GIT_FILEMODE_TREE && S_ISDIR(st.st_mode)) {
            t->seen[e - t->ents] = 1;
            int cfd = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (cfd < 0) {
                rc = wt_fail(t, "cannot open directory", buf, err);
                break;
            }
            buf[n] = '/';
            buf[n + 1] = '\0';
            rc = clean_dir(t, cfd, buf, n + 1, err);
        } else if (!e || e->mode == GIT_FILEMODE_TREE || !entry_matches(e, &st)) {
            rc = remove_at(t, dfd, comp, 1, err);
        } else {
            t->seen[e - t->ents] = 1;
            rc = entry_sync_at(t, dfd, comp, e, &st, buf, err);
        }
        break;
    }
    close(dfd);
    return rc;
}

int ws_restore_paths(ws_tree *t, const char *const *paths, size_t n, char *err)
{
    if (n == 0)
        return 0;
    char **rels = calloc(n, sizeof *rels);
    if (!rels)
        return rl_err(err, RL_ENOMEM, "%s: out of memory", t->path);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const char *p = paths[i];
        size_t l = p ? strlen(p) : 0;
        if (l && p[l - 1] == '/')
            l--; /* "dir/" names the directory */
        if (!p || !relpath_ok(p, l))
            rc = rl_err(err, RL_EINVAL,
                        "restore path '%s': expected a relative path without '.', '..' or .git",
                        p ? p : "(null)");
        else if (!(rels[i] = strndup(p, l)))
            rc = rl_err(err, RL_ENOMEM, "%s: out of memory", t->path);
    }
    if (!rc)
        rc = root_open(t, err);
    if (!rc) {
        memset(t->seen, 0, t->nents);
        t->moved = 0;
        for (size_t i = 0; i < n && !rc; i++)
            rc = restore_prep(t, rels[i], err);
        if (!rc && t->moved)
            rc = clean_trash(t, err);
        if (!rc)
            rc = create_missing(t, rels, n, err);
    }
    root_close(t);
    for (size_t i = 0; i < n; i++)
        free(rels[i]);
    free(rels);
    return rc;
}

/* ---- apply and diff --------------------------------------------------- */

/* Refuses a patch path that goes through a symlink in the work tree: the
 * harness writes as its own uid, and agent code may have planted
 * `ln -s /etc dir`. The last component may be a symlink only when the
 * patch says it changes a symlink. */
static int path_no_symlink(ws_tree *t, const char *rel, unsigned mode, char *err)
{
    char buf[PATH_MAX];
    size_t n = strlen(rel);
    if (n >= sizeof buf)
        return rl_err(err, RL_EINVAL, "%s: path too long", rel);
    memcpy(buf, rel, n + 1);
    for (char *p = buf;; p++) {
        int last = (*p == '\0');
        if (*p != '/' && !last)
            continue;
        *p = '\0';
        struct stat st;
        if (fstatat(t->root_fd, buf, &st, AT_SYMLINK_NOFOLLOW) < 0)
            return 0; /* missing: nothing to go through */
        if (S_ISLNK(st.st_mode) && (!last || mode != GIT_FILEMODE_LINK))
            return rl_err(err, RL_EDENIED, "%s: patch path '%s' goes through the symlink '%s'",
                          t->path, rel, buf);
        if (S_ISLNK(st.st_mode)) /* libgit2 reads the preimage through the link */
            return rl_err(err, RL_EUNSUP,
                          "%s: patch changes the symlink '%s': not supported by ws_apply",
                          t->path, rel);
        if (last)
            return 0;
        *p = '/';
    }
}

int ws_apply(ws_tree *t, const char *patch, char *err)
{
    git_diff *diff = NULL;
    int rc = patch_parse(&diff, patch ? patch : "", t->path, err);
    if (rc)
        return rc;
    if ((rc = root_open(t, err)))
        goto done;
    for (size_t i = 0; i < git_diff_num_deltas(diff) && !rc; i++) {
        const git_diff_delta *d = git_diff_get_delta(diff, i);
        rc = path_no_symlink(t, d->old_file.path, d->old_file.mode, err);
        if (!rc)
            rc = path_no_symlink(t, d->new_file.path, d->new_file.mode, err);
    }
    root_close(t);
    if (rc)
        goto done;
    apply_ctx c = {0};
    git_apply_options ao;
    git_apply_options_init(&ao, GIT_APPLY_OPTIONS_VERSION);
    ao.delta_cb = apply_delta_cb;
    ao.hunk_cb = apply_hunk_cb;
    ao.payload = &c;
    if (git_index_entrycount(t->index) && git_index_clear(t->index) < 0) {
        rc = git_fail(err, t->path);
        goto done;
    }
    errno = 0;
    int g = git_apply(t->repo, diff, GIT_APPLY_LOCATION_WORKDIR, &ao);
    if (g < 0)
        rc = apply_fail(err, t->path, g, &c);
done:
    git_diff_free(diff);
    return rc;
}

/* git_diff_print gives context, added and removed lines without their
 * origin character; headers and binary data come whole. */
static int diff_line_cb(const git_diff_delta *d, const git_diff_hunk *h,
                        const git_diff_line *l, void *payload)
{
    (void)d;
    (void)h;
    buf_t *b = payload;
    if (l->origin == GIT_DIFF_LINE_CONTEXT || l->origin == GIT_DIFF_LINE_ADDITION ||
        l->origin == GIT_DIFF_LINE_DELETION) {
        if (buf_putc(b, l->origin))
            return RL_ELIMIT;
    }
    return buf_append(b, l->content, l->content_len) ? RL_ELIMIT : 0;
}

/* Appends prefix+path, C-quoted the way git quotes unusual names. */
static int put_path(buf_t *b, const char *prefix, const char *path)
{
    int quote = 0;
    for (const unsigned char *p = (const unsigned char *)path; *p; p++)
        if (*p < 0x20 || *p >= 0x7f || *p == '"' || *p == '\\')
            quote = 1;
    if (!quote)
        return buf_printf(b, "%s%s", prefix, path);
    int rc = buf_printf(b, "\"%s", prefix);
    for (const unsigned char *p = (const unsigned char *)path; *p && !rc; p++) {
        const char *esc = strchr("\a\b\t\n\v\f\r\"\\", *p);
        if (esc && *p)
            rc = buf_printf(b, "\\%c", "abtnvfr\"\\"[esc - "\a\b\t\n\v\f\r\"\\"]);
        else if (*p < 0x20 || *p >= 0x7f)
            rc = buf_printf(b, "\\%03o", *p);
        else
            rc = buf_putc(b, (char)*p);
    }
    return rc ? rc : buf_putc(b, '"');
}

/* A file over RL_WS_DIFF_FILE_MAX: a header and "Binary files ... differ"
 * (as `git diff` without --binary), never its content. */
static int put_big_delta(buf_t *b, const git_diff_delta *d)
{
    const char *op = d->old_file.path, *np = d->new_file.path;
    int added = d->status == GIT_DELTA_ADDED || d->status == GIT_DELTA_UNTRACKED;
    int deleted = d->status == GIT_DELTA_DELETED;
    int rc = buf_puts(b, "diff --git ");
    rc = rc ? rc : put_path(b, "a/", op);
    rc = rc ? rc : buf_putc(b, ' ');
    rc = rc ? rc : put_path(b, "b/", np);
    if (!rc && added)
        rc = buf_printf(b, "\nnew file mode %o", d->new_file.mode);
    else if (!rc && deleted)
        rc = buf_printf(b, "\ndeleted file mode %o", d->old_file.mode);
    else if (!rc && d->old_file.mode != d->new_file.mode)
        rc = buf_printf(b, "\nold mode %o\nnew mode %o", d->old_file.mode, d->new_file.mode);
    rc = rc ? rc : buf_puts(b, "\nBinary files ");
    rc = rc ? rc : (added ? buf_puts(b, "/dev/null") : put_path(b, "a/", op));
    rc = rc ? rc : buf_puts(b, " and ");
    rc = rc ? rc : (deleted ? buf_puts(b, "/dev/null") : put_path(b, "b/", np));
    return rc ? rc : buf_puts(b, " differ\n");
}

/* Which deltas of a diff go into the patch. */
typedef int (*delta_keep_fn)(const git_diff_delta *d, void *user, char *err);

/* Prints the kept deltas of diff as one patch, one delta at a time so
 * that at most one file's content is in memory. Returns 1 from keep
 * (keep), 0 (skip) or an error. */
static int diff_print(char **patch, ws_tree *t, git_diff *diff, delta_keep_fn keep, void *user,
                      char *err)
{
    *patch = NULL;
    buf_t b;
    buf_init(&b, RL_WS_DIFF_MAX);
    int rc = 0;
    for (size_t i = 0; i < git_diff_num_deltas(diff) && !rc; i++) {
        const git_diff_delta *d = git_diff_get_delta(diff, i);
        if (keep) {
            int k = keep(d, user, err);
            if (k < 0) {
                rc = k;
                break;
            }
            if (!k)
                continue;
        }
        if (d->old_file.size > RL_WS_DIFF_FILE_MAX || d->new_file.size > RL_WS_DIFF_FILE_MAX) {
            if (put_big_delta(&b, d))
                rc = RL_ELIMIT;
            continue;
        }
        git_patch *p = NULL;
        if (git_patch_from_diff(&p, diff, i) < 0) {
            rc = git_fail(err, t->path);
            break;
        }
        int g = p ? git_patch_print(p, diff_line_cb, &b) : 0;
        git_patch_free(p);
        if (g == RL_ELIMIT)
            rc = RL_ELIMIT;
        else if (g < 0)
            rc = git_fail(err, t->path);
    }
    if (rc == RL_ELIMIT)
        rc = rl_err(err, RL_ELIMIT, "%s: diff exceeds %u bytes", t->path, RL_WS_DIFF_MAX);
    if (rc) {
        buf_dispose(&b);
        return rc;
    }
    *patch = buf_detach(&b, NULL);
    return 0;
}

static int diff_workdir(git_diff **out, ws_tree *t, uint32_t flags, char *err)
{
    git_diff_options o;
    git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
    o.flags = flags | GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS |
              GIT_DIFF_SHOW_UNTRACKED_CONTENT | GIT_DIFF_SHOW_BINARY;
    o.max_size = RL_WS_DIFF_FILE_MAX;
    if (git_index_entrycount(t->index) && git_index_clear(t->index) < 0)
        return git_fail(err, t->path);
    if (git_diff_tree_to_workdir(out, t->repo, t->base, &o) < 0)
        return git_fail(err, t->path);
    return 0;
}

int ws_diff(char **patch, ws_tree *t, char *err)
{
    *patch = NULL;
    git_diff *diff = NULL;
    int rc = diff_workdir(&diff, t, 0, err);
    if (!rc)
        rc = diff_print(patch, t, diff, NULL, NULL, err);
    git_diff_free(diff);
    return rc;
}

typedef struct change_ctx {
    ws_tree *rules;              /* at the base: its ignore rules are the base's */
    const char *const *exclude;
    size_t n_exclude;
} change_ctx;

/* path is one of the list: equal to an entry, or, for an entry ending in
 * '/' (a directory), below it or the directory itself. */
static int path_listed(const char *path, const char *const *list, size_t n)
{
    for (size_t i = 0; path && i < n; i++) {
        const char *p = list[i];
        size_t l = strlen(p);
        if (!l)
            continue;
        if (p[l - 1] != '/') {
            if (!strcmp(path, p))
                return 1;
        } else if (!strncmp(path, p, l) || (!strncmp(path, p, l - 1) && path[l - 1] == '\0')) {
            return 1;
        }
    }
    return 0;
}

static int change_keep(const git_diff_delta *d, void *user, char *err)
{
    change_ctx *c = user;
    if (path_listed(d->old_file.path, c->exclude, c->n_exclude) ||
        path_listed(d->new_file.path, c->exclude, c->n_exclude))
        return 0;
    if (d->status != GIT_DELTA_UNTRACKED && d->status != GIT_DELTA_IGNORED)
        return 1;
    int ignored = 0;
    if (git_ignore_path_is_ignored(&ignored, c->rules->repo, d->new_file.path) < 0)
        return git_fail(err, c->rules->path);
    return !ignored;
}

int ws_change(char **patch, ws_tree *t, const char *const *exclude, size_t n_exclude, char *err)
{
    *patch = NULL;
    ws_tree *rules;
    int rc = ws_companion(&rules, t, err);
    if (!rc)
        rc = ws_reset(rules, err);
    if (rc)
        return rc;
    /* The tree's own ignore files must hide nothing: one internal rule
     * that un-ignores every path (libgit2 consults internal rules first
     * and stops at the first match), taken back after the diff. Every new
     * file comes as untracked, with its content, and the base's rules
     * decide in change_keep. */
    git_diff *diff = NULL;
    if (git_ignore_add_rule(t->repo, "!*\n") < 0)
        return git_fail(err, t->path);
    rc = diff_workdir(&diff, t, 0, err);
    if (git_ignore_clear_internal_rules(t->repo) < 0 && !rc)
        rc = git_fail(err, t->path);
    change_ctx c = {rules, exclude, n_exclude};
    if (!rc)
        rc = diff_print(patch, t, diff, change_keep, &c, err);
    git_diff_free(diff);
    return rc;
}

int ws_stage(ws_tree **out, ws_tree *t, const char *patch, char *err)
{
    *out = NULL;
    ws_tree *c;
    int rc = ws_companion(&c, t, err);
    if (!rc)
        rc = ws_reset(c, err);
    if (!rc && patch && *patch)
        rc = ws_apply(c, patch, err);
    if (!rc)
        *out = c;
    return rc;
}

int ws_open_task(ws_tree **out, const ws_opts *opts, const task *t, int slot, char *err)
{
    ws_opts o;
    if (opts)
        o = *opts;
    else
        ws_opts_default(&o);
    if (t->repos_dir)
        o.repos_dir = t->repos_dir;
    return ws_open(out, &o, t->repo, t->instance_id, t->bug, slot, err);
}
