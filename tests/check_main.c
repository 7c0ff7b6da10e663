/* check_main.c - runs every Check suite in tests/ as one runner.
 *
 * Suites register by defining `Suite *NAME_suite(void)` in a source file
 * of tests/; the Makefile collects them into suites.inc. Set CK_RUN_SUITE or
 * CK_RUN_CASE to run a subset. Check's summary line ends the output.
 * Like bin/harness and bin/grpo, it first asks OpenBLAS for the kernels
 * the CPU supports (model/blascore.h).
 */
#include "model/blascore.h"

#include <check.h>
#include <stdlib.h>

#define SUITE(fn) Suite *fn(void);
#include "suites.inc"
#undef SUITE

int main(int argc, char **argv)
{
    (void)argc;
    blascore_reexec(argv); /* the suites run on the kernels the binaries use */
    SRunner *sr = srunner_create(NULL);
#define SUITE(fn) srunner_add_suite(sr, fn());
#include "suites.inc"
#undef SUITE
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
