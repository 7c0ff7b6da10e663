/* check_sample.c - a small Check program whose real output is captured
 * into the fixtures check_verbose.txt and check_normal.txt (see regen.sh).
 * It covers: passes, a failure whose message holds ':', an error by
 * signal, an early exit, a timeout, a loop test failing on one iteration,
 * and two test cases of one suite. Not built by the Makefile. */
#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

static int add(int a, int b) { return a + b; }

START_TEST(test_add_small) { ck_assert_int_eq(add(2, 3), 5); }
END_TEST

START_TEST(test_parse_time)
{
    const char *got = "12:31:00";
    ck_assert_msg(got[4] == '0', "expected 12:30:00, got %s", got);
}
END_TEST

START_TEST(test_segfault)
{
    raise(SIGSEGV);
}
END_TEST

START_TEST(test_early_exit) { exit(3); }
END_TEST

START_TEST(test_slow)
{
    for (;;)
        pause();
}
END_TEST

START_TEST(test_loop_even)
{
    ck_assert_msg(_i != 2, "iteration %d is not allowed", _i);
}
END_TEST

START_TEST(test_str_eq) { ck_assert_str_eq("a<b", "a<b"); }
END_TEST

START_TEST(test_str_ne) { ck_assert_str_eq("leap", "leaf"); }
END_TEST

int main(void)
{
    Suite *s = suite_create("sample");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_add_small);
    tcase_add_test(core, test_parse_time);
    tcase_add_test(core, test_segfault);
    tcase_add_test(core, test_early_exit);
    tcase_add_loop_test(core, test_loop_even, 0, 4);
    suite_add_tcase(s, core);
    TCase *edge = tcase_create("Edge cases");
    tcase_set_timeout(edge, 1);
    tcase_add_test(edge, test_slow);
    tcase_add_test(edge, test_str_eq);
    tcase_add_test(edge, test_str_ne);
    suite_add_tcase(s, edge);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
