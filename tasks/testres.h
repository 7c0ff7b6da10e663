/* testres.h - parsers of test-runner output: TAP, JUnit XML, Check.
 *
 * Output is untrusted (agent-written code runs in the test process): the
 * parsers cap everything they keep, never crash on garbage, and report
 * each test's status with its failure message. A test the run never
 * reports (crash, timeout, compile error) is counted as failed by
 * testres_lookup's callers, via testres_status_of.
 */
#ifndef RL_TESTRES_H
#define RL_TESTRES_H

#include <stddef.h>

typedef enum tr_status { TR_PASS, TR_FAIL, TR_ERROR, TR_SKIP, TR_MISSING } tr_status;

typedef struct tr_case {
    char *name;     /* test id (see tasks/README.md) */
    tr_status status;
    char *message;  /* failure message, capped; NULL when passed */
} tr_case;

typedef struct tr_report {
    tr_case *cases;
    size_t n;
} tr_report;

/* Each parser fills out (possibly empty) and returns 0, or RL_EPARSE with
 * err filled when the input is not of that format at all. Duplicated names
 * keep the worst status. */
int tr_parse_tap(tr_report *out, const char *text, size_t len, char *err);
int tr_parse_junit(tr_report *out, const char *xml, size_t len, char *err);
int tr_parse_check(tr_report *out, const char *text, size_t len, char *err);
void tr_report_free(tr_report *r);

/* Status of a named test; TR_MISSING when the report lacks it. */
tr_status tr_status_of(const tr_report *r, const char *name);
const tr_case *tr_find(const tr_report *r, const char *name);
const char *tr_status_name(tr_status s);

#endif
