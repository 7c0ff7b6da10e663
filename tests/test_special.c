/* test_special.c - every reader of the harness and trainer refuses a FIFO
 * (or a directory, or, where asked, a symbolic link) in place of its file
 * with one line naming the file, and never blocks on it: task files,
 * trajectory records, checkpoints, optimizer state, configs, tokenizers,
 * experiment files, prompts and report inputs (the result files of a
 * test run: tests/test_testrun.c). Each test runs under
 * alarm(), so a reader that blocks fails instead of hanging. */
#include "common/err.h"
#include "common/fsutil.h"
#include "grpo/grpo.h"
#include "model/optim.h"
#include "grpo/sft.h"
#include "grpo/traj.h"
#include "protocol/template.h"
#include "harness/episode.h"
#include "harness/experiment.h"
#include "harness/report.h"
#include "harness/workspace.h"
#include "model/model.h"
#include "protocol/tokenizer.h"
#include "corpus/task.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_dir[64];

static void setup(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/rl-special-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(g_dir));
    chmod(g_dir, 0755);
    alarm(20);
}

static void teardown(void)
{
    alarm(0);
    char err[RL_ERR_MAX];
    fs_remove_tree(g_dir, err);
}

/* A FIFO named `name` in the test folder; its path into out. */
static void fifo(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", g_dir, name);
    ck_assert_msg(mkfifo(out, 0644) == 0, "mkfifo %s: %s", out, strerror(errno));
}

static void assert_refused(int rc, const char *err, const char *path, const char *what)
{
    ck_assert_msg(rc < 0, "%s: accepted", path);
    ck_assert_msg(strstr(err, path), "'%s' does not name %s", err, path);
    ck_assert_msg(strstr(err, what), "'%s' lacks '%s'", err, what);
    ck_assert_ptr_null(strchr(err, '\n'));
}

#define FIFO_MSG "not a regular file (a fifo)"

START_TEST(test_fsutil)
{
    char p[256], err[RL_ERR_MAX] = "", *data;
    fifo(p, sizeof p, "f");
    assert_refused(fs_read_file(&data, NULL, p, 100, err), err, p, FIFO_MSG);
    FILE *f;
    assert_refused(fs_fopen_read(&f, p, 0, err), err, p, FIFO_MSG);
    assert_refused(fs_open_regular(g_dir, 0, NULL, err), err, g_dir, "not a regular file (a directory)");
    assert_refused(fs_read_file(&data, NULL, "/dev/null", 100, err), err, "/dev/null",
                   "not a regular file (a character device)");
    /* A link to a regular file: followed unless FS_NOFOLLOW. */
    char reg[256], lnk[256];
    snprintf(reg, sizeof reg, "%s/reg", g_dir);
    snprintf(lnk, sizeof lnk, "%s/lnk", g_dir);
    ck_assert_int_eq(fs_write_atomic(reg, "abc", 3, err), 0);
    ck_assert_int_eq(symlink(reg, lnk), 0);
    size_t n;
    ck_assert_int_eq(fs_read_file(&data, &n, lnk, 100, err), 0);
    ck_assert_str_eq(data, "abc");
    free(data);
    assert_refused(fs_read_file_ex(&data, &n, lnk, 100, FS_NOFOLLOW, err), err, lnk,
                   "not a regular file (a symbolic link)");
    ck_assert_int_eq(fs_read_file_ex(&data, &n, reg, 100, FS_NOFOLLOW, err), 0);
    free(data);
    /* The descriptor reads normally (blocking mode restored). */
    int fd = fs_open_regular(reg, FS_NOFOLLOW, NULL, err);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
    close(fd);
    /* The cap still holds. */
    ck_assert_int_eq(fs_read_file(&data, &n, reg, 2, err), RL_ELIMIT);
}
END_TEST

START_TEST(test_task_file)
{
    char p[256], err[RL_ERR_MAX] = "";
    fifo(p, sizeof p, "x.json");
    task *t;
    assert_refused(task_load(&t, p, NULL, err), err, p, FIFO_MSG);
    /* The same inside a tasks folder. */
    task_set s;
    assert_refused(task_set_load(&s, g_dir, NULL, err), err, p, FIFO_MSG);
}
END_TEST

START_TEST(test_records)
{
    char p[256], err[RL_ERR_MAX] = "";
    fifo(p, sizeof p, "trajectories.jsonl");
    traj_set s;
    traj_set_init(&s);
    traj_opts o;
    traj_opts_default(&o);
    assert_refused(traj_load_file(&s, p, &o, err), err, p, FIFO_MSG);
    traj_set_dispose(&s);
    report_opts ro;
    report_opts_default(&ro);
    assert_refused(report_write(g_dir, &ro, err), err, p, FIFO_MSG);
}
END_TEST

START_TEST(test_checkpoints)
{
    char p[256], err[RL_ERR_MAX] = "";
    fifo(p, sizeof p, "model.safetensors");
    model *m;
    model_opts mo;
    model_opts_default(&mo);
    assert_refused(model_load(&m, NULL, p, &mo, err), err, p, FIFO_MSG);
    char h[17];
    assert_refused(model_file_hash(h, p, err), err, p, FIFO_MSG);
    fifo(p, sizeof p, "optim.bin");
    adamw a;
    memset(&a, 0, sizeof a);
    assert_refused(opt_load(&a, p, err), err, p, FIFO_MSG);
}
END_TEST

START_TEST(test_configs)
{
    char p[256], err[RL_ERR_MAX] = "";
    fifo(p, sizeof p, "grpo.json");
    grpo_config g;
    grpo_config_default(&g);
    assert_refused(grpo_config_load(&g, p, err), err, p, FIFO_MSG);
    fifo(p, sizeof p, "sft.json");
    sft_config c;
    sft_config_default(&c);
    assert_refused(sft_config_load(&c, p, err), err, p, FIFO_MSG);
    sft_config_dispose(&c);
    fifo(p, sizeof p, "exp.json");
    experiment *e;
    assert_refused(exp_load(&e, p, err), err, p, FIFO_MSG);
    fifo(p, sizeof p, "reward.json");
    ep_shaping sh;
    assert_refused(ep_shaping_load(&sh, p, err), err, p, FIFO_MSG);
    fifo(p, sizeof p, "tokenizer.json");
    tok_t *t;
    assert_refused(tok_load(&t, p, err), err, p, FIFO_MSG);
    fifo(p, sizeof p, "v9.md");
    char *prompt;
    assert_refused(tpl_load_prompt(&prompt, g_dir, "v9", err), err, p, FIFO_MSG);
}
END_TEST

/* A FIFO the code under test left in the work tree, new or in place of a
 * tracked file: the diff and the reset read past it. */
START_TEST(test_work_tree_fifo)
{
    char err[RL_ERR_MAX] = "", p[4200];
    task *t;
    ck_assert_msg(task_load(&t, "tasks/leapyear.json", "repos", err) == 0, "%s", err);
    ws_opts wo;
    ws_opts_default(&wo);
    wo.root = g_dir;
    ws_tree *ws;
    ck_assert_msg(ws_open_task(&ws, &wo, t, 0, err) == 0, "%s", err);
    snprintf(p, sizeof p, "%s/src/new.fifo", ws_path(ws));
    ck_assert_int_eq(mkfifo(p, 0644), 0);
    snprintf(p, sizeof p, "%s/src/leapyear.c", ws_path(ws));
    ck_assert_int_eq(unlink(p), 0);
    ck_assert_int_eq(mkfifo(p, 0644), 0);
    char *patch = NULL;
    ws_diff(&patch, ws, err); /* whatever it reports, it returns */
    free(patch);
    ck_assert_msg(ws_reset(ws, err) == 0, "%s", err);
    struct stat st;
    ck_assert_int_eq(lstat(p, &st), 0);
    ck_assert(S_ISREG(st.st_mode));
    ws_free(ws);
    task_free(t);
}
END_TEST

Suite *special_files_suite(void)
{
    Suite *s = suite_create("special_files");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_fsutil);
    tcase_add_test(tc, test_task_file);
    tcase_add_test(tc, test_records);
    tcase_add_test(tc, test_checkpoints);
    tcase_add_test(tc, test_configs);
    tcase_add_test(tc, test_work_tree_fifo);
    suite_add_tcase(s, tc);
    return s;
}
