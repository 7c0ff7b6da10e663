/* task.c - loading, strict validation, selection and serialization of task
 * specs (format: tasks/README.md).
 *
 * A task file is hand-edited by people and written by the generator, and a
 * bad one must never take the harness down: every check reports the first
 * problem as one line naming the file, the field and what was expected.
 * JSON syntax comes from cJSON (bounded nesting); everything after that is
 * ours and checks types, enums, ranges, lengths (common/limits.h) and
 * cross-field rules (disjoint test lists, id = file name, repo exists).
 */
#include "corpus/task.h"

#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "common/str.h"
#include "common/vec.h"
#include "corpus/testres.h"

#include <cJSON.h>
#include <dirent.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- names ------------------------------------------------------------ */

static const char *const FORMAT_NAMES[] = {"check", "tap", "junit", "unity", "testhelp"};
static const char *const SPLIT_NAMES[] = {"train", "heldout"};
static const char *const KIND_NAMES[] = {"single_edit", "look_again", "cross_file", "generated"};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int name_index(const char *const *names, size_t n, const char *s)
{
    for (size_t i = 0; s && i < n; i++)
        if (!strcmp(names[i], s))
            return (int)i;
    return -1;
}

const char *task_format_name(task_format f)
{
    return (unsigned)f < COUNT(FORMAT_NAMES) ? FORMAT_NAMES[f] : "?";
}
const char *task_split_name(task_split s)
{
    return (unsigned)s < COUNT(SPLIT_NAMES) ? SPLIT_NAMES[s] : "?";
}
const char *task_kind_name(task_kind k)
{
    return (unsigned)k < COUNT(KIND_NAMES) ? KIND_NAMES[k] : "?";
}
int task_format_from_name(const char *s) { return name_index(FORMAT_NAMES, COUNT(FORMAT_NAMES), s); }
int task_split_from_name(const char *s) { return name_index(SPLIT_NAMES, COUNT(SPLIT_NAMES), s); }
int task_kind_from_name(const char *s) { return name_index(KIND_NAMES, COUNT(KIND_NAMES), s); }

/* ---- free ------------------------------------------------------------- */

static void strs_free(task_strs *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

void task_free(task *t)
{
    if (!t)
        return;
    free(t->path);
    free(t->instance_id);
    free(t->repo);
    free(t->repos_dir);
    free(t->problem_statement);
    free(t->bug);
    free(t->patch);
    strs_free(&t->fail_to_pass);
    strs_free(&t->pass_to_pass);
    free(t->test_cmd);
    free(t->test_result_file);
    strs_free(&t->protected_paths);
    free(t->gen_mutation);
    free(t->gen_file);
    cJSON_free(t->extra);
    free(t);
}

/* ---- validation context ----------------------------------------------- */

typedef struct vctx {
    const char *path;
    char *err;
} vctx;

/* `FILE: field "NAME": <message>` */
__attribute__((format(printf, 4, 5)))
static int field_err(vctx *c, int code, const char *field, const char *fmt, ...)
{
    char msg[RL_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return rl_err(c->err, code, "%s: field \"%s\": %s", c->path, field, msg);
}

/* Strings in task files are single-line values except the texts (problem
 * statement, diffs, command); control characters in names and paths would
 * garble tables and messages. */
static int has_ctrl(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 1;
    return 0;
}

static int is_name_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || ch == '-' || ch == '.';
}

static int is_plain_name(const char *s)
{
    if (!*s || !strcmp(s, ".") || !strcmp(s, ".."))
        return 0;
    for (; *s; s++)
        if (!is_name_char(*s))
            return 0;
    return 1;
}

/* A path relative to the work tree that cannot leave it. */
static int is_safe_relpath(const char *s)
{
    if (!*s || *s == '/' || has_ctrl(s) || strchr(s, '\\'))
        return 0;
    const char *p = s;
    while (*p) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return 0;
        if (!e)
            break;
        p = e + 1;
    }
    return 1;
}

/* A path scoring can restore from the base: relative, every component a
 * real name (no "", "." or ".." component, so no leading "./", no "//"),
 * none of them ".git" (the work tree has no git dir to restore). A
 * trailing '/' marks a directory prefix. */
static int is_restorable_path(const char *s)
{
    if (!is_safe_relpath(s))
        return 0;
    const char *p = s;
    for (;;) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 0)
            return !e && p != s; /* only the end after a trailing '/' */
        if ((n == 1 && p[0] == '.') || (n == 4 && !memcmp(p, ".git", 4)))
            return 0;
        if (!e)
            return 1;
        p = e + 1;
    }
}

typedef enum { STR_ANY, STR_NAME, STR_LINE, STR_PATH } str_rule;

/* Copies a string field after checking type, emptiness, length and form. */
static int get_str(char **out, vctx *c, const cJSON *v, const char *field, size_t max,
                   str_rule rule)
{
    if (!cJSON_IsString(v) || !v->valuestring || !*v->valuestring)
        return field_err(c, RL_EINVAL, field, "expected a non-empty string");
    const char *s = v->valuestring;
    size_t n = strlen(s);
    if (n > max)
        return field_err(c, RL_ELIMIT, field, "expected at most %zu bytes, got %zu", max, n);
    if (rule == STR_NAME && !is_plain_name(s))
        return field_err(c, RL_EINVAL, field, "expected only letters, digits, '_', '-' and '.'");
    if (rule == STR_LINE && has_ctrl(s))
        return field_err(c, RL_EINVAL, field, "expected one line without control characters");
    if (rule == STR_PATH && !is_restorable_path(s))
        return field_err(c, RL_EINVAL, field,
                         "expected a relative path inside the work tree (no leading '/', no "
                         "empty, '.' or '..' component, not .git), got \"%s\"",
                         has_ctrl(s) ? "(control characters)" : s);
    *out = strdup(s);
    return *out ? 0 : field_err(c, RL_ENOMEM, field, "out of memory");
}

static int get_strs(task_strs *out, vctx *c, const cJSON *v, const char *field, int nonempty,
                    size_t max_items, size_t max_len, str_rule rule)
{
    const char *what = nonempty ? "expected a non-empty array of strings" : "expected an array of strings";
    if (!cJSON_IsArray(v))
        return field_err(c, RL_EINVAL, field, "%s", what);
    size_t n = (size_t)cJSON_GetArraySize(v);
    if (nonempty && n == 0)
        return field_err(c, RL_EINVAL, field, "%s", what);
    if (n > max_items)
        return field_err(c, RL_ELIMIT, field, "expected at most %zu entries, got %zu", max_items, n);
    out->v = calloc(n ? n : 1, sizeof *out->v);
    if (!out->v)
        return field_err(c, RL_ENOMEM, field, "out of memory");
    const cJSON *it;
    cJSON_ArrayForEach(it, v) {
        char sub[96];
        snprintf(sub, sizeof sub, "%s[%zu]", field, out->n);
        int rc = get_str(&out->v[out->n], c, it, sub, max_len, rule);
        if (rc)
            return rc;
        out->n++;
        for (size_t j = 0; j + 1 < out->n; j++)
            if (!strcmp(out->v[j], out->v[out->n - 1]))
                return field_err(c, RL_EINVAL, field, "\"%s\" appears twice (expected unique entries)",
                                 out->v[j]);
    }
    return 0;
}

static int get_enum(int *out, vctx *c, const cJSON *v, const char *field, const char *const *names,
                    size_t n)
{
    int i = cJSON_IsString(v) ? name_index(names, n, v->valuestring) : -1;
    if (i < 0) {
        char list[256] = "";
        size_t off = 0;
        for (size_t k = 0; k < n && off < sizeof list; k++)
            off += (size_t)snprintf(list + off, sizeof list - off, "%s\"%s\"",
                                    k == 0 ? "" : k + 1 == n ? " or " : ", ", names[k]);
        return field_err(c, RL_EINVAL, field, "expected %s", list);
    }
    *out = i;
    return 0;
}

/* JSON numbers are doubles: an integer is exact up to 2^53. */
static int get_int(long *out, vctx *c, const cJSON *v, const char *field, long lo, long hi)
{
    double d = cJSON_IsNumber(v) ? v->valuedouble : 0.5;
    /* Range first: casting an out-of-range double to long is undefined. */
    if (!cJSON_IsNumber(v) || !(d >= (double)lo && d <= (double)hi) || d != (double)(long)d)
        return field_err(c, RL_EINVAL, field, "expected an integer from %ld to %ld", lo, hi);
    *out = (long)d;
    return 0;
}

/* Enough of a unified diff that a typo (a path instead of a diff, an
 * empty string) is caught at load time; whether it applies is checked by
 * the validator in a work tree. */
static int looks_like_diff(const char *s)
{
    return (!strncmp(s, "--- ", 4) || strstr(s, "\n--- ")) && strstr(s, "\n+++ ") &&
           strstr(s, "\n@@ ");
}

/* ---- fields ------------------------------------------------------------ */

static const char *const FIELDS[] = {
    "instance_id", "repo", "problem_statement", "bug", "patch", "FAIL_TO_PASS", "PASS_TO_PASS",
    "test_cmd", "test_format", "test_result_file", "protected_paths", "timeout_s", "split",
    "kind", "generator", "extra",
};
static const char *const OPTIONAL_FIELDS[] = {"test_result_file", "generator", "extra"};
static const char *const GEN_FIELDS[] = {"seed", "mutation", "file", "line"};

/* Rejects unknown and repeated keys (cJSON keeps both copies of a key). */
static int check_keys(vctx *c, const cJSON *obj, const char *const *names, size_t n,
                      const char *prefix)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, obj) {
        char full[160];
        snprintf(full, sizeof full, "%s%.100s", prefix, it->string ? it->string : "");
        if (name_index(names, n, it->string) < 0) {
            char list[400] = "";
            size_t off = 0;
            for (size_t k = 0; k < n && off < sizeof list; k++)
                off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", k ? ", " : "", names[k]);
            return field_err(c, RL_EINVAL, full, "unknown field (expected one of: %s)", list);
        }
        for (const cJSON *p = obj->child; p != it; p = p->next)
            if (!strcmp(p->string, it->string))
                return field_err(c, RL_EINVAL, full, "appears twice (expected each field once)");
    }
    for (size_t k = 0; k < n; k++) {
        if (!prefix[0] && name_index(OPTIONAL_FIELDS, COUNT(OPTIONAL_FIELDS), names[k]) >= 0)
            continue;
        if (!cJSON_GetObjectItemCaseSensitive(obj, names[k])) {
            char full[160];
            snprintf(full, sizeof full, "%s%s", prefix, names[k]);
            return field_err(c, RL_EINVAL, full, "missing (required field)");
        }
    }
    return 0;
}

static const cJSON *F(const cJSON *o, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(o, name);
}

static int parse_generator(task *t, vctx *c, const cJSON *g)
{
    if (!cJSON_IsObject(g))
        return field_err(c, RL_EINVAL, "generator",
                         "expected an object {\"seed\", \"mutation\", \"file\", \"line\"}");
    int rc = check_keys(c, g, GEN_FIELDS, COUNT(GEN_FIELDS), "generator.");
    long line;
    if (!rc)
        rc = get_int(&t->gen_seed, c, F(g, "seed"), "generator.seed", 0, (1L << 53) - 1);
    if (!rc)
        rc = get_str(&t->gen_mutation, c, F(g, "mutation"), "generator.mutation", RL_TASK_NAME_MAX,
                     STR_NAME);
    if (!rc)
        rc = get_str(&t->gen_file, c, F(g, "file"), "generator.file", RL_TASK_PATH_MAX, STR_PATH);
    if (!rc)
        rc = get_int(&line, c, F(g, "line"), "generator.line", 1, 10000000);
    if (!rc)
        t->gen_line = (int)line;
    return rc;
}

/* The base name of path without ".json", or NULL if it has no such end. */
static int id_from_path(char *out, size_t n, const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t len = strlen(b);
    if (len < 5 || strcmp(b + len - 5, ".json") || len - 5 >= n)
        return 0;
    memcpy(out, b, len - 5);
    out[len - 5] = '\0';
    return 1;
}

static int check_cross(task *t, vctx *c, const char *repos_dir)
{
    char want[RL_TASK_ID_MAX + 64];
    if (id_from_path(want, sizeof want, c->path) && strcmp(want, t->instance_id))
        return field_err(c, RL_EINVAL, "instance_id",
                         "expected \"%s\" (the file name without .json), got \"%s\"", want,
                         t->instance_id);
    for (size_t i = 0; i < t->pass_to_pass.n; i++)
        for (size_t j = 0; j < t->fail_to_pass.n; j++)
            if (!strcmp(t->pass_to_pass.v[i], t->fail_to_pass.v[j]))
                return field_err(c, RL_EINVAL, "PASS_TO_PASS",
                                 "\"%s\" is also in FAIL_TO_PASS (expected disjoint lists)",
                                 t->pass_to_pass.v[i]);
    if (t->fail_to_pass.n + t->pass_to_pass.n > RL_TASK_TESTS_MAX)
        return field_err(c, RL_ELIMIT, "PASS_TO_PASS",
                         "expected at most %d tests in FAIL_TO_PASS and PASS_TO_PASS together",
                         RL_TASK_TESTS_MAX);
    if (t->test_format != TASK_FMT_JUNIT && t->test_result_file)
        return field_err(c, RL_EINVAL, "test_result_file",
                         "expected only with test_format \"junit\"");
    if (t->kind == TASK_KIND_GENERATED && t->gen_seed < 0)
        return field_err(c, RL_EINVAL, "generator", "expected an object when kind is \"generated\"");
    if (t->kind != TASK_KIND_GENERATED && t->gen_seed >= 0)
        return field_err(c, RL_EINVAL, "generator", "expected only when kind is \"generated\"");
    if (repos_dir) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/%s", repos_dir, t->repo);
        if (!fs_is_dir(dir))
            return field_err(c, RL_ENOENT, "repo", "expected a folder %s (not found)", dir);
    }
    return 0;
}

static int parse_fields(task *t, vctx *c, const cJSON *o, const char *repos_dir)
{
    int rc, e;
    long timeout;
    if ((rc = check_keys(c, o, FIELDS, COUNT(FIELDS), "")))
        return rc;
    if ((rc = get_str(&t->instance_id, c, F(o, "instance_id"), "instance_id", RL_TASK_ID_MAX, STR_NAME)) ||
        (rc = get_str(&t->repo, c, F(o, "repo"), "repo", RL_TASK_REPO_MAX, STR_NAME)) ||
        (rc = get_str(&t->problem_statement, c, F(o, "problem_statement"), "problem_statement",
                      RL_TASK_PROBLEM_MAX, STR_ANY)) ||
        (rc = get_str(&t->bug, c, F(o, "bug"), "bug", RL_TASK_DIFF_MAX, STR_ANY)) ||
        (rc = get_str(&t->patch, c, F(o, "patch"), "patch", RL_TASK_DIFF_MAX, STR_ANY)))
        return rc;
    if (!looks_like_diff(t->bug))
        return field_err(c, RL_EINVAL, "bug", "expected a unified diff (with ---, +++ and @@ lines)");
    if (!looks_like_diff(t->patch))
        return field_err(c, RL_EINVAL, "patch", "expected a unified diff (with ---, +++ and @@ lines)");
    if ((rc = get_strs(&t->fail_to_pass, c, F(o, "FAIL_TO_PASS"), "FAIL_TO_PASS", 1,
                       RL_TASK_TESTS_MAX, RL_TASK_TEST_ID_MAX, STR_LINE)) ||
        (rc = get_strs(&t->pass_to_pass, c, F(o, "PASS_TO_PASS"), "PASS_TO_PASS", 0,
                       RL_TASK_TESTS_MAX, RL_TASK_TEST_ID_MAX, STR_LINE)) ||
        (rc = get_str(&t->test_cmd, c, F(o, "test_cmd"), "test_cmd", RL_TASK_CMD_MAX, STR_ANY)) ||
        (rc = get_enum(&e, c, F(o, "test_format"), "test_format", FORMAT_NAMES, COUNT(FORMAT_NAMES))))
        return rc;
    t->test_format = (task_format)e;
    if (F(o, "test_result_file") &&
        (rc = get_str(&t->test_result_file, c, F(o, "test_result_file"), "test_result_file",
                      RL_TASK_PATH_MAX, STR_PATH)))
        return rc;
    if ((rc = get_strs(&t->protected_paths, c, F(o, "protected_paths"), "protected_paths", 0,
                       RL_TASK_PATHS_MAX, RL_TASK_PATH_MAX, STR_PATH)) ||
        (rc = get_int(&timeout, c, F(o, "timeout_s"), "timeout_s", RL_TASK_TIMEOUT_MIN,
                      RL_TASK_TIMEOUT_MAX)))
        return rc;
    t->timeout_s = (int)timeout;
    if ((rc = get_enum(&e, c, F(o, "split"), "split", SPLIT_NAMES, COUNT(SPLIT_NAMES))))
        return rc;
    t->split = (task_split)e;
    if ((rc = get_enum(&e, c, F(o, "kind"), "kind", KIND_NAMES, COUNT(KIND_NAMES))))
        return rc;
    t->kind = (task_kind)e;
    if (F(o, "generator") && (rc = parse_generator(t, c, F(o, "generator"))))
        return rc;
    if (F(o, "extra")) {
        if (!cJSON_IsObject(F(o, "extra")))
            return field_err(c, RL_EINVAL, "extra", "expected an object");
        if (!(t->extra = cJSON_PrintUnformatted(F(o, "extra"))))
            return field_err(c, RL_ENOMEM, "extra", "out of memory");
    }
    return check_cross(t, c, repos_dir);
}

/* Line and column of byte offset off, for JSON syntax errors. */
static void line_col(const char *s, size_t off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off && s[i]; i++) {
        if (s[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

static int task_parse_len(task **out, const char *json, size_t len, const char *path,
                          const char *repos_dir, char *err)
{
    *out = NULL;
    vctx c = {path ? path : "<task>", err};
    if (len > RL_TASK_FILE_MAX)
        return rl_err(err, RL_ELIMIT, "%s: expected at most %u bytes, got %zu", c.path,
                      RL_TASK_FILE_MAX, len);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
    size_t off = end ? (size_t)(end - json) : 0;
    if (root) /* trailing data after the object */
        while (off < len && (json[off] == ' ' || json[off] == '\n' || json[off] == '\t' ||
                             json[off] == '\r'))
            off++;
    if (!root || off < len) {
        int line, col;
        line_col(json, off, &line, &col);
        cJSON_Delete(root);
        return rl_err(err, RL_EPARSE, "%s: invalid JSON at line %d, column %d (expected one JSON object)",
                      c.path, line, col);
    }
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return rl_err(err, RL_EPARSE, "%s: expected a JSON object at the top level", c.path);
    }
    task *t = calloc(1, sizeof *t);
    if (!t || !(t->path = strdup(c.path)) || !(t->repos_dir = strdup(repos_dir ? repos_dir : "repos"))) {
        if (t)
            free(t->path);
        free(t);
        cJSON_Delete(root);
        return rl_err(err, RL_ENOMEM, "%s: out of memory", c.path);
    }
    t->gen_seed = -1;
    int rc = parse_fields(t, &c, root, repos_dir);
    cJSON_Delete(root);
    if (rc) {
        task_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int task_parse(task **out, const char *json, const char *path, const char *repos_dir, char *err)
{
    return task_parse_len(out, json, json ? strlen(json) : 0, path, repos_dir, err);
}

int task_load(task **out, const char *path, const char *repos_dir, char *err)
{
    *out = NULL;
    char *data;
    size_t len;
    int rc = fs_read_file(&data, &len, path, RL_TASK_FILE_MAX, err);
    if (rc)
        return rc;
    rc = task_parse_len(out, data, len, path, repos_dir, err);
    free(data);
    return rc;
}

/* ---- serialization ----------------------------------------------------- */

static cJSON *strs_json(const task_strs *s)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < s->n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(s->v[i]));
    return a;
}

char *task_to_json(const task *t)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "instance_id", t->instance_id);
    cJSON_AddStringToObject(o, "repo", t->repo);
    cJSON_AddStringToObject(o, "problem_statement", t->problem_statement);
    cJSON_AddStringToObject(o, "bug", t->bug);
    cJSON_AddStringToObject(o, "patch", t->patch);
    cJSON_AddItemToObject(o, "FAIL_TO_PASS", strs_json(&t->fail_to_pass));
    cJSON_AddItemToObject(o, "PASS_TO_PASS", strs_json(&t->pass_to_pass));
    cJSON_AddStringToObject(o, "test_cmd", t->test_cmd);
    cJSON_AddStringToObject(o, "test_format", task_format_name(t->test_format));
    if (t->test_result_file)
        cJSON_AddStringToObject(o, "test_result_file", t->test_result_file);
    cJSON_AddItemToObject(o, "protected_paths", strs_json(&t->protected_paths));
    cJSON_AddNumberToObject(o, "timeout_s", t->timeout_s);
    cJSON_AddStringToObject(o, "split", task_split_name(t->split));
    cJSON_AddStringToObject(o, "kind", task_kind_name(t->kind));
    if (t->gen_seed >= 0) {
        cJSON *g = cJSON_AddObjectToObject(o, "generator");
        cJSON_AddNumberToObject(g, "seed", (double)t->gen_seed);
        cJSON_AddStringToObject(g, "mutation", t->gen_mutation ? t->gen_mutation : "");
        cJSON_AddStringToObject(g, "file", t->gen_file ? t->gen_file : "");
        cJSON_AddNumberToObject(g, "line", t->gen_line);
    }
    if (t->extra) {
        cJSON *x = cJSON_Parse(t->extra);
        if (!x) {
            cJSON_Delete(o);
            return NULL;
        }
        cJSON_AddItemToObject(o, "extra", x);
    }
    char *s = cJSON_Print(o);
    cJSON_Delete(o);
    if (!s)
        return NULL;
    /* Hand back malloc() memory with a final newline, as files end. */
    size_t n = strlen(s);
    char *r = malloc(n + 2);
    if (r) {
        memcpy(r, s, n);
        r[n] = '\n';
        r[n + 1] = '\0';
    }
    cJSON_free(s);
    return r;
}

/* ---- sets --------------------------------------------------------------- */

typedef struct walker {
    task_set *set;
    size_t cap;
    const char *repos_dir;
    char *err;
} walker;

static int set_push(walker *w, task *t)
{
    if (w->set->n >= RL_TASK_SET_MAX) {
        int rc = rl_err(w->err, RL_ELIMIT, "%s: more than %d tasks in the set", t->path,
                        RL_TASK_SET_MAX);
        task_free(t);
        return rc;
    }
    if (VEC_GROW(w->set->v, w->cap, w->set->n + 1, RL_TASK_SET_MAX) < 0) {
        task_free(t);
        return rl_err(w->err, RL_ENOMEM, "task set: out of memory");
    }
    w->set->v[w->set->n++] = t;
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Loads the .json files of dir, and its subfolders when depth allows.
 * Entries are visited in name order so the first error is reproducible. */
static int walk_dir(walker *w, const char *dir, int depth, int recurse)
{
    DIR *d = opendir(dir);
    if (!d)
        return rl_err(w->err, RL_ENOENT, "%s: cannot open the tasks folder", dir);
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue; /* ., .., hidden files and editor droppings */
        if ((rc = VEC_GROW(names, cap, n + 1, RL_TASK_DIR_ENTRIES_MAX)) < 0) {
            if (rc == RL_ELIMIT)
                rl_err(w->err, rc, "%s: more than %d entries in the tasks folder", dir,
                       RL_TASK_DIR_ENTRIES_MAX);
            else
                rl_err(w->err, rc, "%s: out of memory", dir);
            break;
        }
        if (!(names[n] = strdup(e->d_name))) {
            rc = rl_err(w->err, RL_ENOMEM, "%s: out of memory", dir);
            break;
        }
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_name);
    for (size_t i = 0; !rc && i < n; i++) {
        char path[4096];
        if (snprintf(path, sizeof path, "%s/%s", dir, names[i]) >= (int)sizeof path) {
            rc = rl_err(w->err, RL_ELIMIT, "%s/%s: path too long", dir, names[i]);
            break;
        }
        struct stat st;
        if (lstat(path, &st) < 0)
            continue; /* vanished meanwhile */
        if (S_ISDIR(st.st_mode)) {
            /* Only generated/ is searched below the top; symlinked folders
             * are not followed (no loops). */
            if (!recurse && depth == 0 && !strcmp(names[i], "generated"))
                rc = walk_dir(w, path, 1, 1);
            else if (recurse && depth < RL_TASK_DIR_DEPTH)
                rc = walk_dir(w, path, depth + 1, 1);
            else if (recurse)
                rc = rl_err(w->err, RL_ELIMIT, "%s: folders nested deeper than %d", path,
                            RL_TASK_DIR_DEPTH);
            continue;
        }
        if (!str_has_suffix(names[i], ".json"))
            continue;
        task *t;
        rc = task_load(&t, path, w->repos_dir, w->err);
        if (!rc)
            rc = set_push(w, t);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

static int cmp_task(const void *a, const void *b)
{
    const task *x = *(task *const *)a, *y = *(task *const *)b;
    return strcmp(x->instance_id, y->instance_id);
}

int task_set_load(task_set *out, const char *tasks_dir, const char *repos_dir, char *err)
{
    out->v = NULL;
    out->n = 0;
    if (!fs_is_dir(tasks_dir))
        return rl_err(err, RL_ENOENT, "%s: expected a folder of task files", tasks_dir);
    walker w = {out, 0, repos_dir, err};
    int rc = walk_dir(&w, tasks_dir, 0, 0);
    if (!rc && out->n)
        qsort(out->v, out->n, sizeof *out->v, cmp_task);
    for (size_t i = 1; !rc && i < out->n; i++)
        if (!strcmp(out->v[i - 1]->instance_id, out->v[i]->instance_id))
            rc = rl_err(err, RL_EINVAL, "%s: duplicate instance_id \"%s\" (also in %s)",
                        out->v[i]->path, out->v[i]->instance_id, out->v[i - 1]->path);
    if (rc)
        task_set_dispose(out);
    return rc;
}

void task_set_dispose(task_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        task_free(s->v[i]);
    task_select_dispose(s);
}

void task_select_dispose(task_set *sel)
{
    free(sel->v);
    sel->v = NULL;
    sel->n = 0;
}

task *task_set_find(const task_set *s, const char *instance_id)
{
    size_t lo = 0, hi = s->n; /* the set is sorted by instance_id */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(s->v[mid]->instance_id, instance_id);
        if (c == 0)
            return s->v[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* A set assembled by hand may be unsorted: fall back to a scan. */
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i]->instance_id, instance_id))
            return s->v[i];
    return NULL;
}

/* ---- selection ------------------------------------------------------------ */

/* Marks the tasks matched by one term; returns how many it matched or a
 * negative code for a malformed term. */
static long select_term(unsigned char *mark, const task_set *all, const char *term, char *err)
{
    long hits = 0;
    int v;
    if (!strcmp(term, "all")) {
        for (size_t i = 0; i < all->n; i++, hits++)
            mark[i] = 1;
    } else if (!strncmp(term, "split:", 6)) {
        if ((v = task_split_from_name(term + 6)) < 0)
            return rl_err(err, RL_EINVAL, "selector \"%s\": expected split:train or split:heldout", term);
        for (size_t i = 0; i < all->n; i++)
            if ((int)all->v[i]->split == v && ++hits)
                mark[i] = 1;
    } else if (!strncmp(term, "kind:", 5)) {
        if ((v = task_kind_from_name(term + 5)) < 0)
            return rl_err(err, RL_EINVAL,
                          "selector \"%s\": expected kind:single_edit, look_again, cross_file or generated",
                          term);
        for (size_t i = 0; i < all->n; i++)
            if ((int)all->v[i]->kind == v && ++hits)
                mark[i] = 1;
    } else if (!strncmp(term, "repo:", 5)) {
        for (size_t i = 0; i < all->n; i++)
            if (!strcmp(all->v[i]->repo, term + 5) && ++hits)
                mark[i] = 1;
    } else if (strpbrk(term, "*?[")) {
        for (size_t i = 0; i < all->n; i++)
            if (!fnmatch(term, all->v[i]->instance_id, 0) && ++hits)
                mark[i] = 1;
    } else {
        for (size_t i = 0; i < all->n; i++)
            if (!strcmp(all->v[i]->instance_id, term) && ++hits)
                mark[i] = 1;
        if (!hits)
            return rl_err(err, RL_ENOENT, "selector \"%s\": no task with that id", term);
    }
    if (!hits)
        return rl_err(err, RL_ENOENT, "selector \"%s\": matches no task", term);
    return hits;
}

/* Trims blanks around a term in place. */
static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

int task_select(task_set *out, const task_set *all, const char *selector, char *err)
{
    out->v = NULL;
    out->n = 0;
    if (!selector || !*selector)
        return rl_err(err, RL_EINVAL, "selector: expected ids, globs, split:S, repo:R, kind:K or all");
    unsigned char *mark = calloc(all->n ? all->n : 1, 1);
    char *copy = strdup(selector);
    int rc = 0;
    if (!mark || !copy) {
        rc = rl_err(err, RL_ENOMEM, "selector: out of memory");
        goto done;
    }
    /* Split by hand: strtok would silently skip an empty term ("a,,b"). */
    size_t terms = 0;
    for (char *p = copy; p && !rc;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        char *term = trim(p);
        p = comma ? comma + 1 : NULL;
        if (!*term)
            rc = rl_err(err, RL_EINVAL, "selector \"%s\": empty term (expected comma-separated terms)",
                        selector);
        else if (++terms > RL_TASK_SELECT_TERMS_MAX)
            rc = rl_err(err, RL_ELIMIT, "selector: more than %d terms", RL_TASK_SELECT_TERMS_MAX);
        else {
            long hits = select_term(mark, all, term, err);
            if (hits < 0)
                rc = (int)hits;
        }
    }
    if (rc)
        goto done;
    size_t n = 0;
    for (size_t i = 0; i < all->n; i++)
        n += mark[i];
    out->v = malloc((n ? n : 1) * sizeof *out->v);
    if (!out->v) {
        rc = rl_err(err, RL_ENOMEM, "selector: out of memory");
        goto done;
    }
    for (size_t i = 0; i < all->n; i++)
        if (mark[i])
            out->v[out->n++] = all->v[i];
done:
    free(mark);
    free(copy);
    return rc;
}

/* ---- scoring ---------------------------------------------------------------- */

static size_t count_passed(const task_strs *ids, const tr_report *r, const char **first_fail)
{
    size_t n = 0;
    *first_fail = NULL;
    for (size_t i = 0; i < ids->n; i++) {
        if (r && tr_status_of(r, ids->v[i]) == TR_PASS)
            n++;
        else if (!*first_fail)
            *first_fail = ids->v[i];
    }
    return n;
}

void task_score(task_outcome *out, const task *t, const tr_report *r)
{
    out->f2p_total = t->fail_to_pass.n;
    out->p2p_total = t->pass_to_pass.n;
    out->f2p_pass = count_passed(&t->fail_to_pass, r, &out->first_f2p_fail);
    out->p2p_pass = count_passed(&t->pass_to_pass, r, &out->first_p2p_fail);
    out->resolved = out->f2p_pass == out->f2p_total && out->p2p_pass == out->p2p_total;
}

int task_parse_results(tr_report *out, const task *t, const char *text, size_t len, char *err)
{
    switch (t->test_format) {
    case TASK_FMT_TAP: return tr_parse_tap(out, text, len, err);
    case TASK_FMT_JUNIT: return tr_parse_junit(out, text, len, err);
    case TASK_FMT_UNITY: return tr_parse_unity(out, text, len, err);
    case TASK_FMT_TESTHELP: return tr_parse_testhelp(out, text, len, err);
    case TASK_FMT_CHECK: break;
    }
    return tr_parse_check(out, text, len, err);
}
