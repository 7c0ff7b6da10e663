/* clock.h - the clocks every module reads.
 *
 * Durations come from CLOCK_MONOTONIC (never jumps with the wall clock);
 * timestamps written into records come from the wall clock, in UTC.
 * clk_ns calls only clock_gettime, which through the vDSO touches neither
 * errno nor TLS: it is safe between fork and exec.
 */
#ifndef RL_CLOCK_H
#define RL_CLOCK_H

#include <stddef.h>

/* Monotonic time in nanoseconds, milliseconds and seconds since an
 * arbitrary origin: only differences mean anything. */
long long clk_ns(void);
double clk_ms(void);
double clk_s(void);
/* Whole monotonic milliseconds, for deadlines in integer arithmetic. */
long clk_ms_int(void);

/* Sleeps until the monotonic clock reads at least ms (clk_ms's origin);
 * returns at once when it already does. Signals do not cut it short. */
void clk_sleep_until_ms(double ms);

/* The current UTC wall time formatted by strftime(3) into out (n bytes),
 * e.g. "%Y-%m-%dT%H:%M:%SZ". Returns 0, or RL_ELIMIT when it does not fit
 * (out is then ""). */
int clk_utc(char *out, size_t n, const char *fmt);

#endif
