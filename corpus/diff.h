/* diff.h - a unified diff writer, git style, for generated tasks.
 *
 * The generator makes two diffs per candidate bug: the bug (upstream ->
 * mutated) and the gold patch (mutated -> upstream). Both must be accepted
 * by `git apply`: "diff --git a/P b/P", "--- a/P", "+++ b/P", hunks with 3
 * lines of context, "\ No newline at end of file" where a side lacks the
 * final newline. Lines are aligned with Myers' O(ND) algorithm on the part
 * that differs (common head and tail trimmed first).
 */
#ifndef RL_DIFF_H
#define RL_DIFF_H

#include "common/buf.h"

#include <stddef.h>

/* Context lines around each change. */
#define DIFF_CONTEXT 3

/* Appends to out the diff that turns old_text into new_text for the file
 * at path (relative, no whitespace, no ".."). Identical texts append
 * nothing. Both texts are treated as existing files (possibly empty). */
int diff_unified(buf_t *out, const char *path, const char *old_text, size_t old_len,
                 const char *new_text, size_t new_len, char *err);

#endif
