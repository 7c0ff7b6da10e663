/* test_tools.c - the file tools on a scratch work tree: behaviour of each
 * tool, every confinement case (both path resolvers), caps, observation
 * cutting, and the run_tests / submit hooks. */
#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "harness/tools.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static char root[256];
static char outside[256];
static int have_device;

static void put(const char *rel, const char *text)
{
    char p[512], err[RL_ERR_MAX];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    char d[512];
    fs_dirname(d, sizeof d, p);
    ck_assert_int_eq(fs_mkdirs(d, err), 0);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static char *slurp(const char *rel)
{
    char p[512], err[RL_ERR_MAX], *s = NULL;
    size_t n;
    snprintf(p, sizeof p, "%s/%s", root, rel);
    if (fs_read_file(&s, &n, p, 1 << 20, err))
        return NULL;
    return s;
}

static void in_root(const char *rel, char *out, size_t n) { snprintf(out, n, "%s/%s", root, rel); }

static void setup(void)
{
    char err[RL_ERR_MAX], p[512];
    snprintf(root, sizeof root, "/tmp/rl-tools-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(root));
    snprintf(outside, sizeof outside, "/tmp/rl-outside-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(outside));
    snprintf(p, sizeof p, "%s/secret.txt", outside);
    FILE *f = fopen(p, "w");
    fputs("TOPSECRET\n", f);
    fclose(f);
    put("src/leap.c", "#include <stdio.h>\n\nint is_leap(int y)\n{\n    return y % 4 == 0;\n}\n");
    put("tests/test_leap.c", "int main(void) { return is_leap(1900); }\n");
    put("README", "Leap years.\nis_leap is in src.\n");
    put("a/b/c.txt", "deep\n");
    put(".git/config", "is_leap in git internals\n");
    put("bin.dat", "");
    in_root("bin.dat", p, sizeof p);
    f = fopen(p, "wb");
    fwrite("ab\0cd is_leap", 1, 13, f);
    fclose(f);
    char t[512];
    in_root("link.c", p, sizeof p);
    ck_assert_int_eq(symlink("src/leap.c", p), 0);
    in_root("passwd", p, sizeof p);
    ck_assert_int_eq(symlink("/etc/passwd", p), 0);
    in_root("outdir", p, sizeof p);
    ck_assert_int_eq(symlink(outside, p), 0);
    in_root("src/up", p, sizeof p);
    snprintf(t, sizeof t, "../../%s", strrchr(outside, '/') + 1);
    ck_assert_int_eq(symlink(t, p), 0); /* relative escape through .. */
    in_root("pipe", p, sizeof p);
    ck_assert_int_eq(mkfifo(p, 0644), 0);
    in_root("null", p, sizeof p);
    have_device = mknod(p, S_IFCHR | 0666, makedev(1, 3)) == 0;
    in_root("hard.c", t, sizeof t);
    put("orig.c", "x\n");
    char o[512];
    in_root("orig.c", o, sizeof o);
    ck_assert_int_eq(link(o, t), 0);
    (void)err;
}

static void teardown(void)
{
    char err[RL_ERR_MAX];
    fs_remove_tree(root, err);
    fs_remove_tree(outside, err);
}

static void ctx_open(tool_ctx *c, int walk_only)
{
    char err[RL_ERR_MAX];
    tool_ctx_default(c);
    c->walk_only = walk_only;
    ck_assert_int_eq(tool_ctx_init(c, root, err), 0);
}

/* Runs name(args) and returns the code; *obs gets the observation. */
static const char *g_kind; /* error_kind of the last run(): NULL on success */

static int run(const tool_ctx *c, const char *name, const char *args, char **obs)
{
    size_t n;
    const tc_spec *specs = tool_specs(&n);
    tc_call call;
    char err[RL_ERR_MAX];
    ck_assert_msg(tc_call_init(&call, "call_0", name, args, specs, n, err) == 0, "%s", err);
    tool_result r;
    int rc = tool_exec(&r, c, &call, err);
    ck_assert_int_eq(rc, r.code);
    ck_assert_ptr_nonnull(r.obs);
    ck_assert_uint_eq(strlen(r.obs), r.obs_len);
    ck_assert(r.ms >= 0);
    if (rc)
        ck_assert_msg(strstr(r.obs, "error: ") && strstr(r.obs, err), "obs [%s]", r.obs);
    ck_assert_msg(!rc == !r.kind, "%s: rc %d with kind %s", name, rc, r.kind ? r.kind : "NULL");
    g_kind = r.kind;
    *obs = r.obs;
    tc_call_dispose(&call);
    return rc;
}

static void expect(const tool_ctx *c, const char *name, const char *args, int code,
                   const char *frag)
{
    char *obs;
    int rc = run(c, name, args, &obs);
    ck_assert_msg(rc == code, "%s %s: rc %d, want %d: %s", name, args, rc, code, obs);
    if (frag)
        ck_assert_msg(strstr(obs, frag), "%s %s: [%s] lacks [%s]", name, args, obs, frag);
    free(obs);
}

/* ---- behaviour ---------------------------------------------------------- */

START_TEST(test_list_files)
{
    tool_ctx c;
    ctx_open(&c, 0);
    char *o;
    ck_assert_int_eq(run(&c, "list_files", "{}", &o), 0);
    ck_assert_ptr_nonnull(strstr(o, "README\na/b/c.txt\nbin.dat\n"));
    ck_assert_ptr_nonnull(strstr(o, "src/leap.c\n"));
    ck_assert_ptr_nonnull(strstr(o, "link.c -> src/leap.c\n"));
    ck_assert_ptr_nonnull(strstr(o, "pipe [FIFO]\n"));
    ck_assert_ptr_null(strstr(o, ".git"));
    ck_assert_ptr_null(strstr(o, "TOPSECRET"));
    ck_assert_ptr_null(strstr(o, "secret.txt")); /* outdir is listed, not entered */
    free(o);
    ck_assert_int_eq(run(&c, "list_files", "{\"path\": \"./src/\"}", &o), 0);
    ck_assert(strncmp(o, "src/leap.c\nsrc/up -> ../../rl-outside-", 37) == 0);
    ck_assert_uint_eq(strlen(o), strlen(strchr(o, '\n') + 1) + strlen("src/leap.c\n"));
    free(o);
    c.list_show_max = 2;
    expect(&c, "list_files", "{}", 0, "more entries not shown]");
    c.list_show_max = 100;
    c.visit_max = 3;
    expect(&c, "list_files", "{}", 0, "[stopped after visiting 3 entries");
    c.visit_max = 1000;
    c.time_ms = 0;
    expect(&c, "list_files", "{}", 0, "[stopped after 0 ms: results incomplete]");
    expect(&c, "list_files", "{\"path\": \"nope\"}", RL_ENOENT, "no such file");
    expect(&c, "list_files", "{\"path\": \"README\"}", RL_EINVAL, "not a directory");
    tool_ctx_dispose(&c);
}
END_TEST

START_TEST(test_read_file)
{
    tool_ctx c;
    ctx_open(&c, 0);
    char *o;
    ck_assert_int_eq(run(&c, "read_file", "{\"path\": \"src/leap.c\"}", &o), 0);
    ck_assert_str_eq(o, "src/leap.c: lines 1-6 of 6\n1| #include <stdio.h>\n2|\n"
                        "3| int is_leap(int y)\n4| {\n5|     return y % 4 == 0;\n6| }\n");
    free(o);
    ck_assert_int_eq(run(&c, "read_file", "{\"path\":\"src/leap.c\",\"start_line\":3,"
                                          "\"end_line\":4}", &o), 0);
    ck_assert_str_eq(o, "src/leap.c: lines 3-4 of 6\n3| int is_leap(int y)\n4| {\n");
    free(o);
    expect(&c, "read_file", "{\"path\":\"src/leap.c\",\"start_line\":5,\"end_line\":99}", 0,
           "lines 5-6 of 6\n5|");
    c.read_window = 2; /* start_line alone: a window of read_window lines */
    expect(&c, "read_file", "{\"path\":\"src/leap.c\",\"start_line\":3}", 0,
           "src/leap.c: lines 3-4 of 6\n3| int is_leap(int y)\n4| {\n");
    expect(&c, "read_file", "{\"path\":\"src/leap.c\",\"start_line\":6}", 0, "lines 6-6 of 6\n6| }\n");
    c.read_window = 0; /* no window: to the end */
    expect(&c, "read_file", "{\"path\":\"src/leap.c\",\"start_line\":4}", 0, "lines 4-6 of 6\n");
    c.read_window = RL_TOOL_READ_WINDOW;
    expect(&c, "read_file", "{\"path\":\"src/leap.c\",\"start_line\":7}", RL_EINVAL,
           "past the end of src/leap.c (6 lines)");
    expect(&c, "read_file", "{\"path\":\"src/leap.c\",\"start_line\":0}", RL_EINVAL,
           "expected a line number from 1");
    expect(&c, "read_file", "{\"path\":\"src/leap.c\",\"start_line\":4,\"end_line\":2}",
           RL_EINVAL, "end_line 2 is before start_line 4");
    expect(&c, "read_file", "{\"path\":\"bin.dat\"}", RL_EINVAL, "binary file");
    expect(&c, "read_file", "{\"path\":\"missing.c\"}", RL_ENOENT, "no such file");
    expect(&c, "read_file", "{\"path\":\"src\"}", RL_EINVAL, "is a directory");
    expect(&c, "read_file", "{\"path\":\"\"}", RL_EINVAL, "path is empty");
    expect(&c, "read_file", "{\"path\":\"link.c\"}", 0, "3| int is_leap"); /* stays inside */
    tool_ctx_dispose(&c);
}
END_TEST

START_TEST(test_search)
{
    tool_ctx c;
    ctx_open(&c, 0);
    char *o;
    ck_assert_int_eq(run(&c, "search", "{\"pattern\": \"is_leap\"}", &o), 0);
    ck_assert_str_eq(o, "README:2: is_leap is in src.\nsrc/leap.c:3: int is_leap(int y)\n"
                        "tests/test_leap.c:1: int main(void) { return is_leap(1900); }\n");
    free(o); /* not in .git, not in the binary file, symlinks not followed */
    expect(&c, "search", "{\"pattern\": \"is_leap\", \"path\": \"src/leap.c\"}", 0,
           "src/leap.c:3: int is_leap(int y)\n");
    expect(&c, "search", "{\"pattern\": \"TOPSECRET\"}", 0, "no matches for \"TOPSECRET\" in .");
    expect(&c, "search", "{\"pattern\": \"root:\"}", 0, "no matches");
    c.search_matches_max = 1;
    expect(&c, "search", "{\"pattern\": \"is_leap\"}", 0, "[showing 1 of 3 matches]");
    c.search_matches_max = 100;
    expect(&c, "search", "{\"pattern\": \"\"}", RL_EINVAL, "pattern is empty");
    expect(&c, "search", "{\"pattern\": \"a\\nb\"}", RL_EINVAL, "single line");
    expect(&c, "search", "{\"pattern\": \"x\", \"path\": \"/etc\"}", RL_EDENIED, "absolute");
    expect(&c, "search", "{\"pattern\": \"x\", \"path\": \"outdir\"}", RL_EDENIED,
           "outside the work tree");
    c.search_files_max = 1;
    expect(&c, "search", "{\"pattern\": \"is_leap\"}", 0, "[stopped after 1 files");
    c.search_files_max = 100;
    c.search_bytes_max = 10;
    expect(&c, "search", "{\"pattern\": \"is_leap\"}", 0, "[stopped after reading");
    c.search_bytes_max = 1 << 20;
    c.read_max = 20;
    expect(&c, "search", "{\"pattern\": \"is_leap\"}", 0, "files over 20 bytes not searched]");
    c.read_max = 1 << 20;
    c.time_ms = 0;
    expect(&c, "search", "{\"pattern\": \"is_leap\"}", 0, "results incomplete");
    tool_ctx_dispose(&c);
}
END_TEST

START_TEST(test_edit_file)
{
    tool_ctx c;
    ctx_open(&c, 0);
    char *o;
    ck_assert_int_eq(run(&c, "edit_file", "{\"path\":\"src/leap.c\",\"old_string\":\"    return "
                                          "y % 4 == 0;\\n\",\"new_string\":\"    if (y % 100 == 0)"
                                          "\\n        return y % 400 == 0;\\n    return y % 4 == "
                                          "0;\\n\"}", &o), 0);
    ck_assert_ptr_nonnull(strstr(o, "edited src/leap.c: lines 5-5 replaced; the new text is at "
                                    "lines 5-7:\n3| int is_leap"));
    ck_assert_ptr_nonnull(strstr(o, "6|         return y % 400 == 0;\n"));
    free(o);
    char *s = slurp("src/leap.c");
    ck_assert_str_eq(s, "#include <stdio.h>\n\nint is_leap(int y)\n{\n    if (y % 100 == 0)\n"
                        "        return y % 400 == 0;\n    return y % 4 == 0;\n}\n");
    free(s);
    expect(&c, "edit_file", "{\"path\":\"src/leap.c\",\"old_string\":\"y % 5\",\"new_string\":"
                            "\"y\"}", RL_ENOENT, "old_string not found in src/leap.c");
    ck_assert_str_eq(g_kind, "no_match"); /* records name why an edit failed, apart from the wording */
    expect(&c, "edit_file", "{\"path\":\"src/leap.c\",\"old_string\":\"return y\",\"new_string\":"
                            "\"return z\"}", RL_EINVAL, "old_string occurs 2 times in src/leap.c");
    ck_assert_str_eq(g_kind, "not_unique");
    /* hints: where a failed old_string's text really is */
    expect(&c, "edit_file", "{\"path\":\"src/leap.c\",\"old_string\":\"    if (y % 10 == 0)\\n"
                            "        return y % 40 == 0;\\n\",\"new_string\":\"x\"}", RL_ENOENT,
           "expected an exact copy of existing text (whitespace included, no line numbers)\n"
           "the most similar text in src/leap.c:\n5|     if (y % 100 == 0)\n"
           "6|         return y % 400 == 0;\n");
    expect(&c, "edit_file", "{\"path\":\"src/leap.c\",\"old_string\":\"retrun y % 4 == 0;\",\"new_string\":"
                            "\"x\"}", RL_ENOENT, /* a near tie shows too */
           "similar text in src/leap.c:\n6|         return y % 400 == 0;\n7|     return y % 4 == 0;\n");
    char *h;
    c.edit_hints = 0; /* off: the error line alone */
    ck_assert_int_eq(run(&c, "edit_file", "{\"path\":\"src/leap.c\",\"old_string\":\"retrun y % 4 == 0;\",\"new_string\":"
                                          "\"x\"}", &h), RL_ENOENT);
    ck_assert_msg(!strstr(h, "similar") && !strchr(h, '\n'), "hints off: [%s]", h);
    free(h);
    c.edit_hints = 1;
    ck_assert_int_eq(run(&c, "edit_file", "{\"path\":\"src/leap.c\",\"old_string\":\"zzz qqq\",\"new_string\":"
                                          "\"x\"}", &h), RL_ENOENT);
    ck_assert_msg(!strstr(h, "similar"), "nothing alike, no hint: [%s]", h);
    free(h);
    expect(&c, "edit_file", "{\"path\":\"src/leap.c\",\"old_string\":\"return y\",\"new_string\":"
                            "\"return z\"}", RL_EINVAL, "to make it unique\nit occurs in src/leap.c at:\n"
                            "6|         return y % 400 == 0;\n7|     return y % 4 == 0;\n");
    put("src/many.c", "x = 1;\nx = 1;\nx = 1;\nx = 1;\nx = 1;\nx = 1;\nx = 1;\nx = 1;\nx = 1;\nx = 1;\n");
    ck_assert_int_eq(run(&c, "edit_file", "{\"path\":\"src/many.c\",\"old_string\":\"x = 1;\",\"new_string\":"
                                          "\"x = 2;\"}", &h), RL_EINVAL);
    ck_assert_msg(strstr(h, "occurs 10 times") && strstr(h, "\n8| x = 1;\n") && !strstr(h, "9| x"),
                  "at most %d occurrences shown: [%s]", RL_TOOL_HINT_SHOW_MAX, h);
    free(h);
    put("src/twice.c", "x = x;\n");
    ck_assert_int_eq(run(&c, "edit_file", "{\"path\":\"src/twice.c\",\"old_string\":\"x\",\"new_string\":"
                                          "\"y\"}", &h), RL_EINVAL);
    ck_assert_msg(strstr(h, "occurs 2 times") && strstr(h, "at:\n1| x = x;\n") && !strstr(strstr(h, "1| ") + 1, "1| "),
                  "a line with two occurrences is shown once: [%s]", h);
    free(h);
    expect(&c, "edit_file", "{\"path\":\"src/leap.c\",\"old_string\":\"\",\"new_string\":\"x\"}",
           RL_EINVAL, "old_string is empty");
    ck_assert_str_eq(g_kind, "invalid");
    expect(&c, "edit_file", "{\"path\":\"src/leap.c\",\"old_string\":\"int\",\"new_string\":"
                            "\"int\"}", RL_EINVAL, "identical");
    ck_assert_str_eq(g_kind, "no_change");
    expect(&c, "edit_file", "{\"path\":\"nope.c\",\"old_string\":\"a\",\"new_string\":\"b\"}",
           RL_ENOENT, "no such file");
    ck_assert_str_eq(g_kind, "not_found"); /* the file, not the text */
    expect(&c, "edit_file", "{\"path\":\"bin.dat\",\"old_string\":\"ab\",\"new_string\":\"b\"}",
           RL_EINVAL, "binary");
    /* a failed edit leaves the file alone */
    s = slurp("src/leap.c");
    ck_assert_ptr_nonnull(strstr(s, "return y % 400 == 0;"));
    free(s);
    tool_ctx_dispose(&c);
}
END_TEST

START_TEST(test_write_file)
{
    tool_ctx c;
    ctx_open(&c, 0);
    expect(&c, "write_file", "{\"path\":\"new/deep/f.txt\",\"content\":\"a\\nb\\n\"}", 0,
           "created new/deep/f.txt (4 bytes, 2 lines)");
    char *s = slurp("new/deep/f.txt");
    ck_assert_str_eq(s, "a\nb\n");
    free(s);
    expect(&c, "write_file", "{\"path\":\"README\",\"content\":\"\"}", 0,
           "wrote README (0 bytes, 0 lines)");
    s = slurp("README");
    ck_assert_str_eq(s, "");
    free(s);
    expect(&c, "write_file", "{\"path\":\"src\",\"content\":\"x\"}", RL_EINVAL, "directory");
    expect(&c, "write_file", "{\"path\":\".\",\"content\":\"x\"}", RL_EINVAL, "root");
    expect(&c, "write_file", "{\"path\":\"README/x\",\"content\":\"x\"}", RL_ENOENT,
           "not a directory");
    c.write_max = 3;
    expect(&c, "write_file", "{\"path\":\"big.txt\",\"content\":\"abcd\"}", RL_ELIMIT,
           "at most 3");
    tool_ctx_dispose(&c);
}
END_TEST

/* ---- confinement, with openat2 and with the O_NOFOLLOW walk ------------- */

START_TEST(test_confinement)
{
    int walk = _i;
    tool_ctx c;
    ctx_open(&c, walk);
    expect(&c, "read_file", "{\"path\":\"/etc/passwd\"}", RL_EDENIED, "absolute");
    expect(&c, "read_file", "{\"path\":\"../x\"}", RL_EDENIED, "\"..\"");
    expect(&c, "read_file", "{\"path\":\"src/../../x\"}", RL_EDENIED, "\"..\"");
    expect(&c, "read_file", "{\"path\":\".git/config\"}", RL_EDENIED, ".git");
    expect(&c, "read_file", "{\"path\":\"passwd\"}", RL_EDENIED, "symlink");
    expect(&c, "read_file", "{\"path\":\"outdir/secret.txt\"}", RL_EDENIED, "symlink");
    expect(&c, "read_file", "{\"path\":\"src/up/secret.txt\"}", RL_EDENIED, "symlink");
    expect(&c, "read_file", "{\"path\":\"pipe\"}", RL_EDENIED, "is a FIFO");
    if (have_device)
        expect(&c, "read_file", "{\"path\":\"null\"}", RL_EDENIED, "is a device");
    expect(&c, "read_file", "{\"path\":\"hard.c\"}", RL_EDENIED, "2 hard links");
    /* an inside symlink: followed by openat2, refused by the walk */
    expect(&c, "read_file", "{\"path\":\"link.c\"}", walk ? RL_EDENIED : 0,
           walk ? "symlink" : "is_leap");

    expect(&c, "write_file", "{\"path\":\"../escape.txt\",\"content\":\"x\"}", RL_EDENIED, "..");
    expect(&c, "write_file", "{\"path\":\"outdir/new.txt\",\"content\":\"x\"}", RL_EDENIED,
           "symlink");
    expect(&c, "write_file", "{\"path\":\"outdir/secret.txt\",\"content\":\"x\"}", RL_EDENIED,
           "symlink");
    expect(&c, "write_file", "{\"path\":\"src/up/deeper/new.txt\",\"content\":\"x\"}",
           RL_EDENIED, "symlink");
    expect(&c, "write_file", "{\"path\":\"passwd\",\"content\":\"x\"}", RL_EDENIED, "symlink");
    expect(&c, "write_file", "{\"path\":\"pipe\",\"content\":\"x\"}", RL_EDENIED, "FIFO");
    expect(&c, "write_file", "{\"path\":\"hard.c\",\"content\":\"x\"}", RL_EDENIED,
           "hard links");
    expect(&c, "write_file", "{\"path\":\".git/hooks/pre-commit\",\"content\":\"x\"}",
           RL_EDENIED, ".git");
    expect(&c, "edit_file", "{\"path\":\"outdir/secret.txt\",\"old_string\":\"TOP\","
                            "\"new_string\":\"x\"}", RL_EDENIED, "symlink");
    char p[512], err[RL_ERR_MAX], *s = NULL;
    size_t n;
    snprintf(p, sizeof p, "%s/secret.txt", outside);
    ck_assert_int_eq(fs_read_file(&s, &n, p, 100, err), 0);
    ck_assert_str_eq(s, "TOPSECRET\n");
    free(s);
    snprintf(p, sizeof p, "%s/new.txt", outside);
    ck_assert_int_eq(access(p, F_OK), -1);
    snprintf(p, sizeof p, "%s/deeper", outside);
    ck_assert_int_eq(access(p, F_OK), -1);
    in_root("../escape.txt", p, sizeof p);
    ck_assert_int_eq(access(p, F_OK), -1);
    tool_ctx_dispose(&c);
}
END_TEST

START_TEST(test_huge_file_capped)
{
    tool_ctx c;
    ctx_open(&c, 0);
    c.read_max = 64 << 10;
    c.obs_budget = 2000;
    buf_t b;
    buf_init(&b, 0);
    for (int i = 1; i <= 20000; i++)
        buf_printf(&b, "line %d\n", i);
    put("huge.txt", buf_str(&b));
    buf_dispose(&b);
    char *o;
    ck_assert_int_eq(run(&c, "read_file", "{\"path\":\"huge.txt\"}", &o), 0);
    ck_assert_ptr_nonnull(strstr(o, "only the first 65"));
    ck_assert_ptr_nonnull(strstr(o, "bytes ("));
    ck_assert_ptr_nonnull(strstr(o, "lines) cut ...]\n"));
    ck_assert_uint_le(strlen(o), 2000 + 64);
    ck_assert_ptr_nonnull(strstr(o, "bytes were read)\n   1| line 1\n"));
    ck_assert_ptr_null(strstr(o, "line 20000"));
    free(o);
    expect(&c, "edit_file", "{\"path\":\"huge.txt\",\"old_string\":\"line 1\\n\",\"new_string\":"
                            "\"x\"}", RL_EINVAL, "too large");
    expect(&c, "search", "{\"pattern\":\"line 1999\"}", 0, "not searched");
    tool_ctx_dispose(&c);
}
END_TEST

/* ---- observations --------------------------------------------------------- */

START_TEST(test_obs_cut)
{
    buf_t b;
    buf_init(&b, 0);
    for (int i = 0; i < 100; i++)
        buf_printf(&b, "row %02d é\n", i);
    size_t n, cut;
    char *s = tool_obs_cut(buf_str(&b), b.len, 1 << 20, &n, &cut);
    ck_assert_str_eq(s, buf_str(&b)); /* under budget: unchanged */
    ck_assert_uint_eq(cut, 0);
    free(s);
    s = tool_obs_cut(buf_str(&b), b.len, 200, &n, &cut);
    ck_assert_uint_eq(strlen(s), n);
    ck_assert_uint_gt(cut, 0);
    ck_assert_uint_eq(n, b.len - cut + strlen(strstr(s, "[...")) - strlen(strstr(s, "]\n") + 2));
    ck_assert(strncmp(s, "row 00 é\n", strlen("row 00 é\n")) == 0);
    ck_assert_str_eq(s + n - strlen("row 99 é\n"), "row 99 é\n");
    char want[64];
    snprintf(want, sizeof want, "\n[... %zu bytes (", cut);
    ck_assert_ptr_nonnull(strstr(s, want));
    /* head and tail are whole lines: the marker sits between two rows */
    char *m = strstr(s, "[...");
    ck_assert(m[-1] == '\n');
    ck_assert(strncmp(strstr(m, "]\n") + 2, "row ", 4) == 0);
    free(s);
    /* one long line: cut inside it, never inside a UTF-8 sequence */
    buf_clear(&b);
    for (int i = 0; i < 300; i++)
        buf_puts(&b, "é");
    s = tool_obs_cut(buf_str(&b), b.len, 101, &n, &cut);
    m = strstr(s, "\n[...");
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq((size_t)(m - s) % 2, 0);
    ck_assert_uint_eq(cut % 2, 0);
    free(s);
    buf_dispose(&b);
}
END_TEST

START_TEST(test_obs_sanitized)
{
    tool_ctx c;
    ctx_open(&c, 0);
    put("latin1.txt", "caf\xe9 \x1b[31mred\x1b[0m\n");
    char *o;
    ck_assert_int_eq(run(&c, "read_file", "{\"path\":\"latin1.txt\"}", &o), 0);
    ck_assert_ptr_nonnull(strstr(o, "1| caf\xEF\xBF\xBD \xEF\xBF\xBD[31mred"));
    free(o);
    tool_ctx_dispose(&c);
}
END_TEST

/* ---- hooks and dispatch ------------------------------------------------- */

typedef struct hook_log {
    size_t n;
    char names[4][32];
    int fail;
} hook_log;

static int fake_tests(void *user, const char *const *names, size_t n, buf_t *obs, char *err)
{
    hook_log *h = user;
    h->n = n;
    for (size_t i = 0; i < n && i < 4; i++)
        snprintf(h->names[i], sizeof h->names[i], "%s", names[i]);
    if (h->fail) {
        buf_puts(obs, "build output");
        return rl_err(err, RL_ETIMEOUT, "run_tests: timed out after 30 s");
    }
    return buf_printf(obs, "PASS %zu tests", n);
}

static int fake_submit(void *user, buf_t *obs, char *err)
{
    (void)user;
    (void)err;
    return buf_puts(obs, "submitted");
}

START_TEST(test_hooks)
{
    tool_ctx c;
    ctx_open(&c, 0);
    expect(&c, "run_tests", "{}", RL_EUNSUP, "run_tests is not available");
    expect(&c, "submit", "{}", RL_EUNSUP, "submit is not available");
    hook_log h = {0};
    c.run_tests = fake_tests;
    c.submit = fake_submit;
    c.user = &h;
    expect(&c, "run_tests", "{\"tests\":[\"test_a\",\"test_b\"]}", 0, "PASS 2 tests");
    ck_assert_uint_eq(h.n, 2);
    ck_assert_str_eq(h.names[1], "test_b");
    expect(&c, "run_tests", "{}", 0, "PASS 0 tests");
    h.fail = 1;
    expect(&c, "run_tests", "{}", RL_ETIMEOUT, "build output\nerror: run_tests: timed out");
    expect(&c, "submit", "{}", 0, "submitted");
    tool_ctx_dispose(&c);
}
END_TEST

START_TEST(test_dispatch_errors)
{
    tool_ctx c;
    tool_ctx_default(&c);
    char err[RL_ERR_MAX];
    tool_result r;
    tc_call call = {"call_0", "read_file", cJSON_Parse("{}"), 0};
    /* no work tree */
    ck_assert_int_eq(tool_exec(&r, &c, &call, err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(r.obs, "no work tree"));
    tool_result_dispose(&r);
    ctx_open(&c, 0);
    /* arguments that skipped validation still give an error, not a crash */
    ck_assert_int_eq(tool_exec(&r, &c, &call, err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(r.obs, "missing parameter path"));
    tool_result_dispose(&r);
    cJSON_Delete(call.args);
    call.args = cJSON_Parse("{\"path\": 5, \"start_line\": \"x\"}");
    ck_assert_int_eq(tool_exec(&r, &c, &call, err), RL_EINVAL);
    tool_result_dispose(&r);
    call.name = "rm";
    ck_assert_int_eq(tool_exec(&r, &c, &call, err), RL_EINVAL);
    ck_assert_str_eq(r.obs, "error: unknown tool \"rm\"");
    tool_result_dispose(&r);
    cJSON_Delete(call.args);
    tool_ctx_dispose(&c);
    ck_assert_int_eq(tool_ctx_init(&c, "/nonexistent-rl", err), RL_ENOENT);
}
END_TEST

START_TEST(test_specs)
{
    size_t n;
    const tc_spec *s = tool_specs(&n);
    ck_assert_uint_eq(n, 7);
    const char *names[] = {"list_files", "read_file", "search", "edit_file",
                           "write_file", "run_tests", "submit"};
    for (size_t i = 0; i < n; i++) {
        ck_assert_str_eq(s[i].name, names[i]);
        ck_assert(strlen(s[i].desc) > 10);
    }
    const tc_spec *rt = tc_find_spec(s, n, "run_tests");
    ck_assert_int_eq(rt->params[0].type, TC_STRINGS);
    ck_assert_int_eq(rt->params[0].required, 0);
    ck_assert_uint_eq(tc_find_spec(s, n, "submit")->nparams, 0);
}
END_TEST

Suite *tools_suite(void)
{
    Suite *s = suite_create("tools");
    TCase *t = tcase_create("tools");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, test_list_files);
    tcase_add_test(t, test_read_file);
    tcase_add_test(t, test_search);
    tcase_add_test(t, test_edit_file);
    tcase_add_test(t, test_write_file);
    tcase_add_loop_test(t, test_confinement, 0, 2);
    tcase_add_test(t, test_huge_file_capped);
    tcase_add_test(t, test_obs_cut);
    tcase_add_test(t, test_obs_sanitized);
    tcase_add_test(t, test_hooks);
    tcase_add_test(t, test_dispatch_errors);
    tcase_add_test(t, test_specs);
    suite_add_tcase(s, t);
    return s;
}
