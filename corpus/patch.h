/* patch.h - parse unified diffs (git style) into files and hunks.
 *
 * Used where a diff must be understood rather than applied: the oracle
 * policy turns a gold patch into edit_file calls, the generator checks
 * which files a bug touches. Each hunk gives the exact old and new text
 * it covers (context + removed lines, context + added lines).
 */
#ifndef RL_PATCH_H
#define RL_PATCH_H

#include <stddef.h>

typedef struct patch_hunk {
    int old_start, old_count, new_start, new_count;
    char *old_text; /* context and '-' lines, each with its newline */
    char *new_text; /* context and '+' lines */
} patch_hunk;

typedef struct patch_file {
    char *old_path; /* NULL for a new file (/dev/null) */
    char *new_path; /* NULL for a deleted file */
    patch_hunk *hunks;
    size_t nhunks, hunks_alloc; /* at most RL_PATCH_HUNKS_MAX */
} patch_file;

typedef struct patch {
    patch_file *files;
    size_t nfiles, files_alloc; /* at most RL_PATCH_FILES_MAX */
} patch;

/* Parses text; RL_EPARSE with the line number on malformed input. */
int patch_parse(patch *out, const char *text, char *err);
void patch_dispose(patch *p);

#endif
