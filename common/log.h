/* log.h - how library code reports progress and trouble without printing.
 *
 * A library never writes to stdout or stderr. A function that has
 * something to tell a person (a skipped job, an episode that could not
 * start, a summary) takes a log callback and its context in its options;
 * the program installs one that prints, a test installs one that
 * collects, and NULL discards. Failures are still returned as RL_E* codes:
 * the log carries what happened along the way, not the result.
 *
 *   batch_opts o;
 *   batch_opts_default(&o);
 *   o.log = print_line;          // void print_line(void *ctx, int level, const char *msg)
 *   o.log_ctx = stderr;
 */
#ifndef RL_LOG_H
#define RL_LOG_H

/* Levels, most severe first. A message is one line without its newline. */
enum {
    RL_LOG_ERROR = 0,  /* something failed and was skipped or recorded */
    RL_LOG_WARN = 1,   /* something is off but the work goes on */
    RL_LOG_INFO = 2,   /* what was done: summaries, transcripts */
};

typedef void (*rl_log_fn)(void *ctx, int level, const char *msg);

/* Formats one message (at most RL_LOG_LINE_MAX bytes) and hands it to log;
 * does nothing when log is NULL. */
void rl_logf(rl_log_fn log, void *ctx, int level, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
