/* The corpus is honest: every hand-written task and a sample of generated
 * ones validate (base fails where it should, the gold patch fixes it),
 * run through the real `harness validate` under the sandbox. */
#include "common/err.h"
#include "corpus/task.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run(const char *selector)
{
    const char *b = getenv("RL_BIN");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s/harness validate --tasks '%s' --progress plain > /tmp/rl-validate.log 2>&1",
             b && b[0] ? b : "bin", selector);
    int st = system(cmd);
    if (st != 0)
        system("cat /tmp/rl-validate.log >&2");
    return st;
}

START_TEST(test_hand_written_tasks_validate)
{
    ck_assert_int_eq(run("kind:single_edit,kind:look_again,kind:cross_file"), 0);
}
END_TEST

START_TEST(test_generated_sample_validates)
{
    task_set all;
    char err[RL_ERR_MAX];
    ck_assert_msg(task_set_load(&all, "tasks", "repos", err) == 0, "%s", err);
    size_t gen = 0;
    for (size_t i = 0; i < all.n; i++)
        gen += all.v[i]->kind == TASK_KIND_GENERATED;
    task_set_dispose(&all);
    if (gen == 0)
        return; /* no generated tasks in this checkout */
    /* the first task of every repository's seed-1 batch */
    ck_assert_int_eq(run("*__gen1_0000"), 0);
}
END_TEST

/* Same seed, same tasks: two generator runs write identical files. */
START_TEST(test_gen_is_deterministic)
{
    const char *b = getenv("RL_BIN");
    char cmd[1024];
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd, "rm -rf /tmp/rl-gen-%d && %s/harness gen --repo leapyear --count 2 --seed 5 "
                 "--out /tmp/rl-gen-%d --progress plain > /dev/null 2>&1", k, b && b[0] ? b : "bin", k);
        ck_assert_int_eq(system(cmd), 0);
    }
    ck_assert_int_eq(system("diff -r /tmp/rl-gen-0 /tmp/rl-gen-1 > /dev/null"), 0);
    ck_assert_int_eq(system("test $(ls /tmp/rl-gen-0/leapyear | wc -l) -eq 2"), 0);
    ck_assert_int_eq(system("rm -rf /tmp/rl-gen-0 /tmp/rl-gen-1"), 0);
}
END_TEST

Suite *corpus_suite(void)
{
    Suite *s = suite_create("corpus");
    TCase *tc = tcase_create("validate");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_hand_written_tasks_validate);
    tcase_add_test(tc, test_generated_sample_validates);
    tcase_add_test(tc, test_gen_is_deterministic);
    suite_add_tcase(s, tc);
    return s;
}
