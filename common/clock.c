/* clock.c - monotonic and wall clocks. */
#include "common/clock.h"

#include "common/err.h"

#include <errno.h>
#include <time.h>

long long clk_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

double clk_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

double clk_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

long clk_ms_int(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

void clk_sleep_until_ms(double ms)
{
    if (ms <= 0)
        return;
    struct timespec t;
    t.tv_sec = (time_t)(ms / 1e3);
    t.tv_nsec = (long)((ms - (double)t.tv_sec * 1e3) * 1e6);
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
        ;
}

int clk_utc(char *out, size_t n, const char *fmt)
{
    if (!n)
        return RL_ELIMIT;
    time_t now = time(NULL);
    struct tm tm;
    if (!gmtime_r(&now, &tm) || !strftime(out, n, fmt, &tm)) {
        out[0] = 0;
        return RL_ELIMIT;
    }
    return 0;
}
