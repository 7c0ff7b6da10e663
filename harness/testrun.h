/* testrun.h - run a task's tests in a work tree, under the sandbox, and
 * read per-test results.
 *
 * This is where the reward comes from. Scoring is hermetic: the change is
 * the work tree's diff against the base (ws_change: new files ignored by
 * the base's own ignore rules and the protected paths left out), applied
 * to a fresh checkout of the base (the tree's companion), where the
 * protected paths are restored and the task's test command runs once in
 * a new sandbox. Nothing a test run of the episode left behind (build
 * products, bytecode, files its code wrote) is part of the change, and
 * editing the tests cannot earn reward. Then the SWE-bench rule: reward 1
 * exactly when every FAIL_TO_PASS and PASS_TO_PASS test passes. A test
 * the run never reports (crash, timeout, compile error) counts as failed.
 *
 * Results come from a structured channel where the framework has one: per
 * run, a fresh directory with a random name (mode 0700, next to the work
 * tree) is made writable for the command and named in its environment:
 * CK_XML_LOG_FILE_NAME (Check's XML log), PYTEST_ADDOPTS=--junitxml=PATH
 * (pytest) and RL_RESULT_FILE (any runner that takes a path). After the
 * run the file is opened without following links and without blocking,
 * checked to be a regular file, read with a cap, and the directory is
 * removed. TAP has no channel of its own: a TAP runner that writes its
 * stream to RL_RESULT_FILE (the corpus's does, from its parent process)
 * is read from there, any other from stdout.
 * A task may instead name a result file in the work tree (test_result_file,
 * a weaker channel, for tasks brought from outside whose runner writes a
 * fixed path).
 *
 * Strict checks (docs/scoring.md): the command exited by itself; its exit
 * status agrees with the results (0 exactly when every reported test
 * passed); no FAIL_TO_PASS or PASS_TO_PASS test is reported twice; the
 * results agree with their own totals (JUnit suite counts, TAP plan,
 * Check's stdout against its XML log) and were not cut short. A run that
 * fails one has report.integrity set and every reported test turned into
 * an error, so it earns nothing; the summary shows the reason.
 */
#ifndef RL_TESTRUN_H
#define RL_TESTRUN_H

#include "sandbox/sandbox.h"
#include "corpus/task.h"
#include "corpus/testres.h"

struct ws_tree;

/* Limits of one test run, over the sandbox's defaults (0 keeps a default).
 * Memory and processes bound the whole command tree (a cgroup where the
 * sandbox has one); disk_mb bounds what the run may add to the work tree
 * as a whole. A RAM-backed work tree's pages count against memory as
 * well: a run writing D MB there holds D MB of its memory bound. */
typedef struct testrun_limits {
    long mem_mb;
    int procs;
    long disk_mb;
    /* 0: the scoring environment. k > 0: a variation validation runs under
     * to catch a task whose outcome depends on memory contents or the
     * environment: MALLOC_PERTURB_ set (malloc fills new and freed memory
     * with a byte that depends on k) and the environment grown by k KiB
     * (moving the initial stack). An honest task's results do not change. */
    int variant;
    /* 1: the build under AddressSanitizer and UndefinedBehaviorSanitizer,
     * for a build that takes its compiler from make's command line (a
     * Makefile's `CC`): the run gets TESTRUN_SANITIZE_MAKEFLAGS, which
     * make reads as `CC=cc -fsanitize=address,undefined ...` given on its
     * command line, and ASan/UBSan options that make a finding end the
     * process with an error (leak checking off: it needs ptrace), and no
     * address-space limit of its own (ASan's shadow): the memory cgroup
     * bounds the run, so it needs a sandbox with cgroups
     * (testrun_can_sanitize). A build that ignores it runs as usual. */
    int sanitize;
} testrun_limits;

/* make takes variable definitions after "--" in MAKEFLAGS, blanks escaped. */
#define TESTRUN_SANITIZE_MAKEFLAGS \
    "MAKEFLAGS=-- CC=cc\\ -fsanitize=address,undefined\\ -fno-sanitize-recover=all\\ -fno-omit-frame-pointer"

typedef struct testrun {
    tr_report report;     /* what the runner reported */
    sb_result sb;         /* the sandboxed run (output, timings, stop) */
    int parse_ok;         /* the output/result file was readable */
                          /* report.integrity: why the results are not
                             trusted ("" when they are) */
} testrun;

/* Runs t->test_cmd in dir under the sandbox with the task's time limit
 * and lim (NULL: the sandbox's defaults, the scoring environment),
 * reads the results and applies the strict checks. Returns 0 when the
 * command ran (whatever the tests said), RL_E* when the sandbox failed or
 * the result directory could not be made. */
int testrun_run(testrun *out, const task *t, const char *dir, const testrun_limits *lim, char *err);
void testrun_dispose(testrun *r);
/* The MALLOC_PERTURB_ byte of variant k > 0: nonzero, different for
 * consecutive variants (0x56, 0xab, 0x01, ...). */
int testrun_perturb_byte(int variant);
/* 1 when a sanitizer run can bound its memory (the sandbox has cgroups). */
int testrun_can_sanitize(void);

/* Runs the tests on ws's change (ws_change) applied to a fresh checkout
 * of the base (ws's companion, reset first); ws itself is only read.
 * With protect, the protected paths are left out of the change, restored
 * in the checkout and read-only while the tests run: the scoring run. *patch (when not NULL) gets
 * the change that ran; caller frees. */
int testrun_fresh(testrun *out, char **patch, const task *t, struct ws_tree *ws, int protect,
                  const testrun_limits *lim, char *err);

/* Per-test outcome of the scoring run. */
typedef struct testrun_outcome {
    const char *name;     /* borrowed from the task */
    int must_pass;        /* always 1: F2P and P2P must both pass */
    int from_f2p;         /* 1 for FAIL_TO_PASS, 0 for PASS_TO_PASS */
    tr_status status;
    const char *message;  /* borrowed from the run's report */
} testrun_outcome;

typedef struct testrun_verdict {
    int reward;           /* 0 or 1 */
    size_t f2p_pass, f2p_total, p2p_pass, p2p_total;
    testrun_outcome *tests;  /* f2p then p2p */
    size_t n_tests;
    testrun run;
    char *patch;          /* the change that was scored, exactly */
    long ms;
} testrun_verdict;

/* Scores ws's change: testrun_fresh with protect, then the rule. */
int testrun_score(testrun_verdict *out, const task *t, struct ws_tree *ws, const testrun_limits *lim, char *err);
void testrun_verdict_dispose(testrun_verdict *s);

/* A compact per-test summary for the agent: counts, then one line per
 * failing test with its (cut) message. `only` filters by name (NULL or
 * n_only = 0 for all). Caller frees. */
char *testrun_summary(const testrun *r, const task *t, const char *const *only, size_t n_only);

#endif
