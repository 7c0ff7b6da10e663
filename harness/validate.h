/* validate.h - is a task honest? At the base every FAIL_TO_PASS test
 * fails and every PASS_TO_PASS test passes; with the gold patch all pass.
 * The generator uses the same check, plus a second run at the base to
 * make sure the result is stable. */
#ifndef RL_VALIDATE_H
#define RL_VALIDATE_H

#include "tasks/task.h"
#include "tasks/testres.h"

struct ws_tree;

typedef struct val_result {
    int ok;
    char why[384];      /* first problem found, when !ok */
    double base_ms, gold_ms;
    size_t f2p, p2p;    /* counts in the task */
} val_result;

/* Resets ws to the task's base, runs the tests `base_runs` times (1 or 2;
 * two runs must agree), applies the gold patch and runs them again. */
int val_task(val_result *out, const task *t, struct ws_tree *ws, int base_runs, char *err);

/* The tests a run reports as failed (anything but pass or skip) and
 * passed, as arrays of borrowed names. */
void val_split(const tr_report *r, const char ***failed, size_t *nf, const char ***passed, size_t *np);

#endif
