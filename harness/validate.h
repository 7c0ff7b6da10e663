/* validate.h - is a task honest? At the base every FAIL_TO_PASS test
 * fails and every PASS_TO_PASS test passes; with the gold patch all pass.
 * With more than one run per stage, every run of a stage must report the
 * same outcome, the runs after the first under varied conditions
 * (MALLOC_PERTURB_, a larger environment), and with two runs or more a
 * C task (val_sanitized) gets one run more built under
 * AddressSanitizer and UndefinedBehaviorSanitizer: a bug whose tests pass
 * now and then (a read of uninitialized memory, a race, the clock) or
 * only while an overflow lands harmlessly would hand out reward for no
 * fix. A disagreement is named with the variation it appeared under. The
 * generator uses the same check. */
#ifndef RL_VALIDATE_H
#define RL_VALIDATE_H

#include "corpus/task.h"
#include "corpus/testres.h"

struct ws_tree;

typedef struct val_result {
    int ok;
    char why[384];      /* first problem found, when !ok */
    char warn[384];     /* when ok: files the tests leave that no ignore rule covers ("" none) */
    double base_ms, gold_ms;
    size_t f2p, p2p;    /* counts in the task */
} val_result;

/* Resets ws to the task's base, runs the tests `runs` times
 * (1-RL_VALIDATE_RUNS_MAX; all must agree; plus the sanitizer run, see
 * above), applies the gold patch and runs them so again. base_ms and
 * gold_ms are per run. Returns 0 with
 * out->ok 0 and out->why filled when the task is not honest; < 0 (err) when
 * the check itself could not run. */
int val_task(val_result *out, const task *t, struct ws_tree *ws, int runs, char *err);

/* The second half of val_task, for a caller that has checked the base
 * itself (the generator, which runs the base to learn FAIL_TO_PASS):
 * applies the gold patch to ws (at the base), runs the tests `runs` times,
 * resets ws. Fills out->ok, why, gold_ms, f2p, p2p; base_ms is left alone. */
int val_gold(val_result *out, const task *t, struct ws_tree *ws, int runs, char *err);

/* 1 if b reports every test of a with the same status and no other. */
int val_same_outcome(const tr_report *a, const tr_report *b);
/* 1 if every test passes in both reports or in neither (how the sanitized
 * run is compared: a failing assertion that becomes a reported memory
 * error changes no reward). */
int val_same_passes(const tr_report *a, const tr_report *b);
/* 1 when validation (and the generator) run t once more built under ASan
 * and UBSan: its test command runs make, its format is Check or TAP (C),
 * and the sandbox has cgroups (testrun_can_sanitize). */
int val_sanitized(const task *t);

/* The tests a run reports as failed (anything but pass or skip) and
 * passed, as arrays of borrowed names. */
void val_split(const tr_report *r, const char ***failed, size_t *nf, const char ***passed, size_t *np);

#endif
