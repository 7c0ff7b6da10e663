/* testres.h - parsers of test-runner output: TAP, JUnit XML, Check, Unity,
 * testhelp.
 *
 * Output is untrusted (agent-written code runs in the test process): the
 * parsers cap everything they keep, never crash on garbage, and report
 * each test's status with its failure message. A test the run never
 * reports (crash, timeout, compile error) is counted as failed by
 * testres_lookup's callers, via testres_status_of.
 */
#ifndef RL_TESTRES_H
#define RL_TESTRES_H

#include "common/limits.h"

#include <stddef.h>

typedef enum tr_status { TR_PASS, TR_FAIL, TR_ERROR, TR_SKIP, TR_MISSING } tr_status;

typedef struct tr_case {
    char *name;     /* test id (see tasks/README.md) */
    tr_status status;
    char *message;  /* failure message, capped; NULL when passed */
    int count;      /* times the run reported this name (merged into one
                       case); a scorer requires 1 for the tests it scores */
} tr_case;

typedef struct tr_report {
    tr_case *cases;
    size_t n;
    /* The first way the results contradict themselves, one line ("" when
     * none): a stated total that disagrees with the per-test results
     * (JUnit testsuite counts, a TAP plan), a log cut short (XML root
     * never closed, TAP "Bail out!"), stdout that disagrees with Check's
     * XML log. A scorer fails the whole run on it (tr_report_fail_all). */
    char integrity[RL_TR_INTEGRITY_MAX];
    /* Results reported, by status, before duplicates were merged. */
    long reported[TR_MISSING + 1];
    /* Check's stdout summary lines "N%: Checks: N, Failures: N, Errors: N"
     * (tr_parse_check): how many, and their totals summed. */
    int summary_lines;
    long summary_checks, summary_failures, summary_errors;
} tr_report;

/* Each parser fills out (possibly empty) and returns 0, or RL_EPARSE with
 * err filled when the input is not of that format at all. Duplicated names
 * keep the worst status and count every report. A parser that finds the
 * input inconsistent with itself fills out->integrity and still returns 0. */
int tr_parse_tap(tr_report *out, const char *text, size_t len, char *err);
int tr_parse_junit(tr_report *out, const char *xml, size_t len, char *err);
/* Check's stdout (CK_VERBOSE result lines and the summary line). */
int tr_parse_check(tr_report *out, const char *text, size_t len, char *err);
/* Check's XML log (CK_XML_LOG_FILE_NAME): <testsuites><suite><test
 * result="success|failure|error"><id>NAME</id><message>..</message>. */
int tr_parse_check_xml(tr_report *out, const char *xml, size_t len, char *err);
/* Unity's stdout, one or more test programs one after the other: result
 * lines "path:line:name:PASS|FAIL|IGNORE[: message]" (IGNORE reads as
 * skip), each program's closed by "N Tests M Failures K Ignored". A
 * summary that disagrees with the lines since the previous one makes the
 * run untrusted; results after the last summary (a program that crashed
 * or exited early) become errors. */
int tr_parse_unity(tr_report *out, const char *text, size_t len, char *err);
/* testhelp.h's stdout (sds, Redis): "N - description: PASSED|FAILED", the
 * test id being the description, and one summary "T tests, P passed, F
 * failed". Numbers out of sequence, a second summary, totals that
 * disagree, or a verdict cut off its line make the run untrusted; results
 * with no summary after them become errors. */
int tr_parse_testhelp(tr_report *out, const char *text, size_t len, char *err);
void tr_report_dispose(tr_report *r);

/* Cross-checks Check's XML log against the same run's stdout: the stdout
 * summary line must be there once and its totals equal the log's counts, every
 * result line on stdout must match the log's status for that test (and
 * appear no more often than the log reports it), and
 * every failure or error of the log must be on stdout (passes may be
 * missing: CK_NORMAL prints only failures). out_cut: stdout lost bytes in
 * the middle (the capture keeps head and tail), so lines and the summary
 * may be missing; what is there must still agree. Returns 0 when they
 * agree, else fills log->integrity and returns RL_EINVAL. */
int tr_check_agrees(tr_report *log, const tr_report *out, int out_cut);

/* Records why the run's results cannot be trusted (kept only when
 * r->integrity is still empty). */
void tr_report_set_integrity(tr_report *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Every case becomes TR_ERROR with r->integrity as its message: a run
 * whose results contradict themselves counts every test as failed. */
void tr_report_fail_all(tr_report *r);

/* Status of a named test; TR_MISSING when the report lacks it. */
tr_status tr_status_of(const tr_report *r, const char *name);
const tr_case *tr_find(const tr_report *r, const char *name);
const char *tr_status_name(tr_status s);

#endif
