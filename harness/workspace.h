/* workspace.h - git work trees for tasks, through libgit2, in process.
 *
 * A repository (repos/<name>/) is materialized once into a bare object
 * store under the workspace root; its upstream files become one commit.
 * A task's base commit is the upstream plus the task's bug patch. Each
 * work tree (one per concurrent episode) has its own git dir outside the
 * work tree (so code under test cannot rewrite history or hooks) sharing
 * the object store, so several work trees of one task run at once, also
 * from several processes.
 *
 * Reset is the hot path (once per episode): tracked files restored,
 * untracked and ignored files removed, and the index rebuilt from the tree
 * first so an edit that keeps size and mtime cannot survive.
 *
 * Layout under the root (default: see ws_opts.root):
 *   store/<repo>.git   bare object store; refs/rl/upstream (the files of
 *                      repos/<repo>/, honouring its .gitignore) and
 *                      refs/rl/base/<key> (upstream + bug patch)
 *   git/<key>-<slot>/  git dir of one work tree: objects/info/alternates
 *                      points at the store, HEAD is the base (detached)
 *   trees/<key>-<slot>/  the work tree itself: plain files, no .git
 *   locks/             flock files: store-<repo>.lock guards creation,
 *                      tree-<key>-<slot>.lock is held while a ws_tree
 *                      is open, so one slot has one user at a time.
 * Reset walks the tree itself and compares every tracked file byte for
 * byte with the base (contents cached in memory, see cache_max): stat
 * data is never trusted, so a forged mtime cannot hide an edit. The
 * work tree holds blob bytes exactly (no eol or filter conversion). For
 * apply and diff, libgit2 sees an always-empty index: no stat cache there
 * either. Work-tree files may belong to another uid (owner validation is
 * off); libgit2 ignores system and user git config.
 */
#ifndef RL_WORKSPACE_H
#define RL_WORKSPACE_H

#include <stddef.h>

typedef struct ws_tree ws_tree;

typedef struct ws_opts {
    const char *root;      /* workspace root; default $RL_WS_ROOT, else
                              /dev/shm/rl-ws-<uid>-<hash of the current
                              directory> when /dev/shm is a tmpfs we can
                              use (resets are several times faster there),
                              else "build/ws" */
    const char *repos_dir; /* where upstream repos live; default "repos" */
    size_t cache_max;      /* bytes of base content each work tree keeps in
                            * memory for reset; default (and cap)
                            * RL_WS_BLOB_CACHE_MAX; the rest is read from
                            * the object store when needed */
} ws_opts;

void ws_opts_default(ws_opts *o);

/* Creates (or reuses) the upstream commit of repos_dir/<repo> and the base
 * commit upstream+bug_patch (bug_patch may be NULL or "": base = upstream),
 * then opens work tree `slot` (0, 1, ...) for it at
 * <root>/trees/<key>-<slot>/, checked out clean at the base. `key` names
 * the base (usually the task's instance_id). Safe to call concurrently
 * from several processes. */
int ws_open(ws_tree **out, const ws_opts *opts, const char *repo, const char *key,
            const char *bug_patch, int slot, char *err);

/* ws_open for a task: its repository (from the folder it was loaded
 * with, which overrides opts->repos_dir), its instance_id as the key, its
 * bug as the patch. opts may be NULL for the defaults. */
struct task;
int ws_open_task(ws_tree **out, const ws_opts *opts, const struct task *t, int slot, char *err);

void ws_free(ws_tree *t);

/* Absolute path of the work tree. */
const char *ws_path(const ws_tree *t);

/* Commit id (40 hex digits) of the base this work tree resets to: the
 * same content gives the same id on every machine (fixed author, time). */
const char *ws_base_id(const ws_tree *t);

/* Back to the base: tracked files restored (content, type, mode exactly
 * 0644/0755, directories 0755), untracked and ignored files and
 * directories removed (also nested .git dirs), hard-linked copies of
 * tracked files replaced; symlinks are never followed. Assumes nothing
 * else writes to the tree meanwhile (the sandbox has ended). */
int ws_reset(ws_tree *t, char *err);

/* Applies a unified diff (git style, a/ b/ prefixes) to the work tree (not
 * committed). Hunks must match at their line numbers (libgit2 applies
 * without offset or fuzz). Nothing is written unless every hunk applies.
 * Errors name the file and hunk that did not apply. Paths that leave the
 * work tree, name .git or go through a symlink are refused. */
int ws_apply(ws_tree *t, const char *patch, char *err);

/* Unified diff of the work tree against the base, untracked files
 * included, ignored files (build outputs, per the work tree's .gitignore)
 * left out, in a form `git apply` accepts (binary files as git binary
 * patches; files over RL_WS_DIFF_FILE_MAX as "Binary files differ").
 * "" when clean. Caller frees *patch. */
int ws_diff(char **patch, ws_tree *t, char *err);

/* The change made in the work tree, as scoring takes it: the diff against
 * the base of every file that differs (tracked, untracked and ignored
 * alike), less the new files that the BASE's ignore rules ignore (an
 * ignore file the tree itself gained hides nothing) and less the paths
 * listed in exclude (entries as for ws_restore_paths: files, or
 * directories ending in '/'). The base's rules are read in the
 * companion tree, which this resets. Caller frees *patch ("" when
 * there is no change). */
int ws_change(char **patch, ws_tree *t, const char *const *exclude, size_t n_exclude, char *err);

/* The tree's companion: a second work tree of the same base, at
 * "<path>.score", owned by t (freed with it, guarded by its slot lock).
 * Test runs and scoring happen there, on a fresh checkout with the
 * change applied, so that nothing a run leaves behind (build products,
 * caches, files its code wrote) reaches the change or the next run.
 * Made on first use. */
int ws_companion(ws_tree **out, ws_tree *t, char *err);

/* Resets t's companion to the base and applies patch there (NULL or ""
 * leaves it at the base); *out is the companion. */
int ws_stage(ws_tree **out, ws_tree *t, const char *patch, char *err);

/* Restores paths (files, or directory prefixes ending in '/') to their
 * base content; files under a directory prefix that the base lacks are
 * removed, and so is a listed file that the base lacks. Paths are
 * relative to the work tree, without "." or ".." components. */
int ws_restore_paths(ws_tree *t, const char *const *paths, size_t n, char *err);

#endif
