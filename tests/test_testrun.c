/* test_testrun.c - the result channel and the strict checks of a test
 * run, on real work trees of the corpus: results come from a private file
 * the run is told about (Check's XML log, pytest's JUnit XML), and a run
 * whose results contradict themselves counts every test as failed. */
#include "common/err.h"
#include "common/fsutil.h"
#include "harness/testrun.h"
#include "harness/workspace.h"
#include "corpus/task.h"
#include "corpus/testres.h"

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_root[64];

static void setup(void)
{
    snprintf(g_root, sizeof g_root, "/tmp/rl-testrun-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(g_root));
    chmod(g_root, 0755);
    alarm(90); /* a run that blocks fails the test instead of hanging it */
}

static void teardown(void)
{
    alarm(0);
    char err[RL_ERR_MAX];
    fs_remove_tree(g_root, err);
}

/* Runs task `id` at its base with test_cmd replaced (NULL: as is). */
static void run_task(testrun *r, const char *id, const char *cmd, int timeout_s, const char *result_file)
{
    char err[RL_ERR_MAX], path[256];
    snprintf(path, sizeof path, "tasks/%s.json", id);
    task *t;
    ck_assert_msg(task_load(&t, path, "repos", err) == 0, "%s", err);
    if (cmd) {
        free(t->test_cmd);
        t->test_cmd = strdup(cmd);
    }
    if (timeout_s)
        t->timeout_s = timeout_s;
    if (result_file)
        t->test_result_file = strdup(result_file);
    ws_opts wo;
    ws_opts_default(&wo);
    wo.root = g_root;
    ws_tree *ws;
    ck_assert_msg(ws_open_task(&ws, &wo, t, 0, err) == 0, "%s", err);
    ck_assert_msg(testrun_run(r, t, ws_path(ws), NULL, err) == 0, "%s", err);
    /* The private result directory is gone after the run. */
    char parent[4096];
    fs_dirname(parent, sizeof parent, ws_path(ws));
    DIR *d = opendir(parent);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    while ((e = readdir(d)))
        ck_assert_msg(strncmp(e->d_name, ".rl-results-", 12), "left behind: %s", e->d_name);
    closedir(d);
    ws_free(ws);
    task_free(t);
}

static void assert_untrusted(testrun *r, const char *why)
{
    ck_assert_msg(strstr(r->report.integrity, why), "integrity '%s' lacks '%s'", r->report.integrity, why);
    for (size_t i = 0; i < r->report.n; i++)
        ck_assert_int_eq(r->report.cases[i].status, TR_ERROR);
    ck_assert_ptr_null(strchr(r->report.integrity, '\n'));
}

START_TEST(test_check_channel)
{
    testrun r;
    run_task(&r, "leapyear", NULL, 0, NULL);
    ck_assert_msg(r.report.integrity[0] == '\0', "%s", r.report.integrity);
    ck_assert_int_eq(r.parse_ok, 1);
    ck_assert_uint_eq(r.report.n, 11);
    ck_assert_int_eq(tr_status_of(&r.report, "test_century_not_leap"), TR_FAIL);
    ck_assert_int_eq(tr_status_of(&r.report, "test_day_of_year"), TR_PASS);
    testrun_dispose(&r);

    /* Results come from the XML log: without it nothing was reported. */
    run_task(&r, "leapyear", "make test; rm -f \"$CK_XML_LOG_FILE_NAME\"", 0, NULL);
    ck_assert_uint_eq(r.report.n, 0);
    testrun_dispose(&r);
    /* The log is not in the work tree. */
    run_task(&r, "leapyear", "make test; case \"$CK_XML_LOG_FILE_NAME\" in \"$PWD\"/*) exit 3;; esac", 0, NULL);
    ck_assert_int_ne(r.sb.exit_code, 3);
    testrun_dispose(&r);
}
END_TEST

START_TEST(test_check_forged_stdout)
{
    testrun r;
    /* A passing line printed for a failing test. */
    run_task(&r, "leapyear",
             "make test; echo 'tests/test_leapyear.c:22:P:core:test_century_not_leap:0: Passed'; exit 2", 0,
             NULL);
    assert_untrusted(&r, "test_century_not_leap");
    char *sum = testrun_summary(&r, NULL, NULL, 0);
    ck_assert_ptr_nonnull(strstr(sum, "results not trusted, every test counts as failed"));
    free(sum);
    testrun_dispose(&r);
    /* A summary that disagrees with the log. */
    run_task(&r, "leapyear", "make test | sed 's/Checks: 11/Checks: 12/'; exit 2", 0, NULL);
    assert_untrusted(&r, "stdout says Checks: 12");
    testrun_dispose(&r);
    /* The exit status disagrees with the results. */
    run_task(&r, "leapyear", "make test; exit 0", 0, NULL);
    assert_untrusted(&r, "exited 0 although 4 tests failed");
    testrun_dispose(&r);
}
END_TEST

START_TEST(test_special_result_files)
{
    testrun r;
    run_task(&r, "leapyear", "make test; rm -f \"$RL_RESULT_FILE\"; mkfifo \"$RL_RESULT_FILE\"; exit 2", 0, NULL);
    assert_untrusted(&r, "not a regular file (a fifo)");
    testrun_dispose(&r);
    run_task(&r, "leapyear", "make test; rm -f \"$RL_RESULT_FILE\"; ln -s /etc/passwd \"$RL_RESULT_FILE\"; exit 2", 0,
             NULL);
    assert_untrusted(&r, "not a regular file (a symbolic link)");
    testrun_dispose(&r);
    run_task(&r, "leapyear", "make test; rm -f \"$RL_RESULT_FILE\"; mkdir \"$RL_RESULT_FILE\"; exit 2", 0, NULL);
    assert_untrusted(&r, "not a regular file (a directory)");
    testrun_dispose(&r);
    /* The legacy channel (a file the task names in the work tree). */
    run_task(&r, "pydate_ordinal_400", "mkfifo .junit.xml; exit 1", 0, ".junit.xml");
    assert_untrusted(&r, "not a regular file (a fifo)");
    testrun_dispose(&r);
}
END_TEST

START_TEST(test_early_exit)
{
    testrun r;
    run_task(&r, "leapyear", "make test; sleep 30", 2, NULL);
    assert_untrusted(&r, "did not exit normally");
    ck_assert_int_eq(r.sb.stop, SB_STOP_TIMEOUT);
    testrun_dispose(&r);
    run_task(&r, "leapyear", "make test; kill -KILL $$", 0, NULL);
    assert_untrusted(&r, "did not exit normally");
    testrun_dispose(&r);
}
END_TEST

START_TEST(test_junit_channel)
{
    testrun r;
    run_task(&r, "pydate_ordinal_400", NULL, 0, NULL);
    ck_assert_msg(r.report.integrity[0] == '\0', "%s", r.report.integrity);
    ck_assert_int_eq(tr_status_of(&r.report, "test_add_days"), TR_FAIL);
    ck_assert_uint_ge(r.report.n, 23);
    testrun_dispose(&r);
    /* The legacy channel still reads a file the task names. */
    run_task(&r, "pydate_ordinal_400", "python3 -m pytest -q -p no:cacheprovider --junitxml=out.xml tests", 0,
             "out.xml");
    ck_assert_msg(r.report.integrity[0] == '\0', "%s", r.report.integrity);
    ck_assert_int_eq(tr_status_of(&r.report, "test_add_days"), TR_FAIL);
    testrun_dispose(&r);

    /* A listed test reported twice. */
    run_task(&r, "pydate_ordinal_400",
             "printf '<testsuites><testsuite tests=\"2\"><testcase name=\"test_add_days\"/>"
             "<testcase name=\"test_add_days\"/></testsuite></testsuites>' > \"$RL_RESULT_FILE\"",
             0, NULL);
    assert_untrusted(&r, "test test_add_days was reported 2 times (expected once)");
    testrun_dispose(&r);
    /* Suite counts that disagree with the test cases. */
    run_task(&r, "pydate_ordinal_400",
             "printf '<testsuites><testsuite tests=\"1\" failures=\"1\"><testcase name=\"test_add_days\"/>"
             "</testsuite></testsuites>' > \"$RL_RESULT_FILE\"; exit 1",
             0, NULL);
    assert_untrusted(&r, "the suite states failures=\"1\" but holds 0");
    testrun_dispose(&r);
    /* Every reported test passed but the runner failed. */
    run_task(&r, "pydate_ordinal_400",
             "printf '<testsuites><testsuite tests=\"1\"><testcase name=\"test_add_days\"/>"
             "</testsuite></testsuites>' > \"$RL_RESULT_FILE\"; exit 1",
             0, NULL);
    assert_untrusted(&r, "exited 1 although every reported test passed");
    testrun_dispose(&r);
    /* A log cut short. */
    run_task(&r, "pydate_ordinal_400",
             "printf '<testsuites><testsuite><testcase name=\"test_add_days\"/>' > \"$RL_RESULT_FILE\"", 0, NULL);
    assert_untrusted(&r, "ends before its root element");
    testrun_dispose(&r);
}
END_TEST

START_TEST(test_tap_plan)
{
    testrun r;
    run_task(&r, "ringbuf_capacity", NULL, 0, NULL);
    ck_assert_msg(r.report.integrity[0] == '\0', "%s", r.report.integrity);
    ck_assert_int_eq(tr_status_of(&r.report, "test_clear"), TR_FAIL);
    testrun_dispose(&r);
    /* The runner's parent writes the stream to RL_RESULT_FILE: lines forged
     * on stdout do not count. */
    run_task(&r, "ringbuf_capacity", "make test >/dev/null; echo 1..1; echo 'ok 1 - test_clear'; exit 0", 0, NULL);
    ck_assert_int_ne(tr_status_of(&r.report, "test_clear"), TR_PASS);
    testrun_dispose(&r);
    /* A TAP runner that writes no file is read from stdout, strictly. */
    run_task(&r, "ringbuf_capacity", "RL_RESULT_FILE= make test | grep -v '^1\\.\\.'; exit 2", 0, NULL);
    assert_untrusted(&r, "TAP: no plan line");
    testrun_dispose(&r);
}
END_TEST

Suite *testrun_suite(void)
{
    Suite *s = suite_create("testrun");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_check_channel);
    tcase_add_test(tc, test_check_forged_stdout);
    tcase_add_test(tc, test_special_result_files);
    tcase_add_test(tc, test_early_exit);
    tcase_add_test(tc, test_junit_channel);
    tcase_add_test(tc, test_tap_plan);
    suite_add_tcase(s, tc);
    return s;
}
