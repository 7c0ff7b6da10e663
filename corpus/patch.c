/* patch.c - a small, strict unified-diff reader. */
#include "corpus/patch.h"

#include "common/buf.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "a/path" or "b/path" -> "path"; "/dev/null" -> NULL. */
static char *strip_path(const char *s, size_t len)
{
    while (len && (s[len - 1] == '\r' || s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
    if (len == 9 && !strncmp(s, "/dev/null", 9))
        return NULL;
    if (len > 2 && (s[0] == 'a' || s[0] == 'b') && s[1] == '/') {
        s += 2;
        len -= 2;
    }
    return strndup(s, len);
}

/* Appends a zeroed file to p. Returns 0, RL_ELIMIT or RL_ENOMEM. */
static int add_file(patch_file **out, patch *p)
{
    int rc = VEC_GROW(p->files, p->files_alloc, p->nfiles + 1, RL_PATCH_FILES_MAX);
    if (rc)
        return rc;
    *out = memset(&p->files[p->nfiles++], 0, sizeof **out);
    return 0;
}

/* Appends a zeroed hunk to f. Returns 0, RL_ELIMIT or RL_ENOMEM. */
static int add_hunk(patch_hunk **out, patch_file *f)
{
    int rc = VEC_GROW(f->hunks, f->hunks_alloc, f->nhunks + 1, RL_PATCH_HUNKS_MAX);
    if (rc)
        return rc;
    *out = memset(&f->hunks[f->nhunks++], 0, sizeof **out);
    return 0;
}

/* Removes the trailing newline of a hunk side ("\ No newline at end of
 * file" follows the last line of that side). */
static void drop_last_newline(buf_t *b)
{
    if (b->len && b->data[b->len - 1] == '\n')
        b->data[--b->len] = '\0';
}

int patch_parse(patch *out, const char *text, char *err)
{
    memset(out, 0, sizeof *out);
    patch_file *f = NULL;
    patch_hunk *h = NULL;
    buf_t old, new;
    buf_init(&old, RL_PATCH_HUNK_MAX);
    buf_init(&new, RL_PATCH_HUNK_MAX);
    int old_left = 0, new_left = 0, lineno = 0, rc = 0;
    char last = 0; /* kind of the previous hunk line: ' ', '-', '+' */
    const char *p = text;
    while (*p && rc == 0) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        lineno++;
        if (h && (old_left > 0 || new_left > 0 || (len > 0 && p[0] == '\\'))) {
            char c = len ? p[0] : ' '; /* an empty line is empty context */
            const char *body = len ? p + 1 : p;
            size_t blen = len ? len - 1 : 0;
            if (c == '\\') {
                if (last == '-' || last == ' ')
                    drop_last_newline(&old);
                if (last == '+' || last == ' ')
                    drop_last_newline(&new);
            } else if (c == ' ' || c == '-' || c == '+') {
                if ((c != '+' && old_left-- <= 0) || (c != '-' && new_left-- <= 0)) {
                    rc = rl_err(err, RL_EPARSE, "patch line %d: hunk longer than its header says", lineno);
                    break;
                }
                if ((c != '+' && (buf_append(&old, body, blen) || buf_putc(&old, '\n'))) ||
                    (c != '-' && (buf_append(&new, body, blen) || buf_putc(&new, '\n')))) {
                    rc = rl_err(err, RL_ELIMIT, "patch line %d: hunk over %u bytes", lineno, RL_PATCH_HUNK_MAX);
                    break;
                }
                last = c;
            } else {
                rc = rl_err(err, RL_EPARSE, "patch line %d: expected ' ', '-' or '+' in a hunk", lineno);
                break;
            }
            if (old_left == 0 && new_left == 0) {
                /* a "\ No newline" line may still follow: peek */
                const char *q = nl ? nl + 1 : p + len;
                if (*q != '\\') {
                    h->old_text = buf_detach(&old, NULL);
                    h->new_text = buf_detach(&new, NULL);
                    h = NULL;
                }
            }
        } else if (!strncmp(p, "--- ", 4)) {
            if (h) { /* previous hunk ended by a "\ No newline" line */
                h->old_text = buf_detach(&old, NULL);
                h->new_text = buf_detach(&new, NULL);
                h = NULL;
            }
            const char *q = nl ? nl + 1 : NULL;
            if (!q || strncmp(q, "+++ ", 4)) {
                rc = rl_err(err, RL_EPARSE, "patch line %d: '---' not followed by '+++'", lineno);
                break;
            }
            const char *qnl = strchr(q, '\n');
            size_t qlen = qnl ? (size_t)(qnl - q) : strlen(q);
            if ((rc = add_file(&f, out)) < 0) {
                if (rc == RL_ELIMIT)
                    rl_err(err, rc, "patch line %d: more than %d files", lineno,
                           RL_PATCH_FILES_MAX);
                else
                    rl_err(err, rc, "patch: out of memory");
                break;
            }
            f->old_path = strip_path(p + 4, len - 4);
            f->new_path = strip_path(q + 4, qlen - 4);
            if (!f->old_path && !f->new_path) {
                rc = rl_err(err, RL_EPARSE, "patch line %d: both sides are /dev/null", lineno);
                break;
            }
            lineno++;
            nl = qnl;
            len = 0;
        } else if (!strncmp(p, "@@ ", 3)) {
            if (!f) {
                rc = rl_err(err, RL_EPARSE, "patch line %d: hunk before any file header", lineno);
                break;
            }
            if (h) {
                h->old_text = buf_detach(&old, NULL);
                h->new_text = buf_detach(&new, NULL);
            }
            if ((rc = add_hunk(&h, f)) < 0) {
                h = NULL; /* the previous hunk's texts are detached above */
                if (rc == RL_ELIMIT)
                    rl_err(err, rc, "patch line %d: more than %d hunks in one file", lineno,
                           RL_PATCH_HUNKS_MAX);
                else
                    rl_err(err, rc, "patch: out of memory");
                break;
            }
            int os, oc = 1, ns, nc = 1;
            if (sscanf(p, "@@ -%d,%d +%d,%d @@", &os, &oc, &ns, &nc) != 4 &&
                sscanf(p, "@@ -%d +%d,%d @@", &os, &ns, &nc) != 3 &&
                sscanf(p, "@@ -%d,%d +%d @@", &os, &oc, &ns) != 3 && sscanf(p, "@@ -%d +%d @@", &os, &ns) != 2) {
                rc = rl_err(err, RL_EPARSE, "patch line %d: bad hunk header", lineno);
                break;
            }
            if (oc < 0 || nc < 0 || oc > 1000000 || nc > 1000000) {
                rc = rl_err(err, RL_EPARSE, "patch line %d: bad hunk line counts", lineno);
                break;
            }
            h->old_start = os;
            h->old_count = old_left = oc;
            h->new_start = ns;
            h->new_count = new_left = nc;
            buf_clear(&old);
            buf_clear(&new);
            last = 0;
        }
        /* other lines (diff --git, index, mode, similarity) are headers */
        p = nl ? nl + 1 : p + len;
    }
    if (rc == 0 && h && (old_left > 0 || new_left > 0))
        rc = rl_err(err, RL_EPARSE, "patch: last hunk is shorter than its header says");
    if (rc == 0 && h) {
        h->old_text = buf_detach(&old, NULL);
        h->new_text = buf_detach(&new, NULL);
    }
    if (rc == 0 && out->nfiles == 0)
        rc = rl_err(err, RL_EPARSE, "patch: no file headers ('--- a/...' / '+++ b/...') found");
    buf_dispose(&old);
    buf_dispose(&new);
    if (rc < 0)
        patch_dispose(out);
    return rc;
}

void patch_dispose(patch *p)
{
    for (size_t i = 0; i < p->nfiles; i++) {
        patch_file *f = &p->files[i];
        for (size_t j = 0; j < f->nhunks; j++) {
            free(f->hunks[j].old_text);
            free(f->hunks[j].new_text);
        }
        free(f->hunks);
        free(f->old_path);
        free(f->new_path);
    }
    free(p->files);
    memset(p, 0, sizeof *p);
}
