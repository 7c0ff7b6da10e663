/* report.h - summary.md, summary.json and SVG plots from trajectory
 * records alone (every *.jsonl file under a directory).
 *
 * Runs are told apart by config.run when set (experiments), else by the
 * config without its seed. Every (task, run) is a GRPO group.
 */
#ifndef RL_REPORT_H
#define RL_REPORT_H

#include "common/log.h"
#include "common/stats.h"

typedef struct report_opts {
    stats_std std_mode;     /* population (default) or unbiased */
    double eps;             /* advantage denominator epsilon, 1e-6 */
    double lambda;          /* partial-rollout fraction, 0.7 */
    double identical_flag;  /* flag runs with more identical calls, 0.05 */
    rl_log_fn log;          /* the summary, one line per run; NULL: none */
    void *log_ctx;
} report_opts;

void report_opts_default(report_opts *o);

/* Reads dir, writes summary.md, summary.json and the SVG plots into dir. */
int report_write(const char *dir, const report_opts *o, char *err);

#endif
