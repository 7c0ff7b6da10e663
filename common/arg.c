/* arg.c - strict parsers for flag values. */
#include "common/arg.h"

#include "common/err.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

int arg_long(long *out, const char *flag, const char *s, long lo, long hi, char *err)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || isspace((unsigned char)*s) || v < lo || v > hi)
        return rl_err(err, RL_EINVAL, "%s: expected an integer %ld..%ld, got '%s'", flag, lo, hi, s);
    *out = v;
    return 0;
}

int arg_int(int *out, const char *flag, const char *s, int lo, int hi, char *err)
{
    long v;
    int rc = arg_long(&v, flag, s, lo, hi, err);
    if (rc < 0)
        return rc;
    *out = (int)v;
    return 0;
}

int arg_u64(uint64_t *out, const char *flag, const char *s, uint64_t lo, uint64_t hi, char *err)
{
    char *end;
    errno = 0;
    unsigned long long v = isdigit((unsigned char)*s) ? strtoull(s, &end, 10) : 0;
    if (!isdigit((unsigned char)*s) || errno || *end || v < lo || v > hi)
        return rl_err(err, RL_EINVAL, "%s: expected an integer %" PRIu64 "..%" PRIu64 ", got '%s'",
                      flag, lo, hi, s);
    *out = (uint64_t)v;
    return 0;
}

int arg_double(double *out, const char *flag, const char *s, double lo, double hi, char *err)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || isspace((unsigned char)*s) || !isfinite(v) || !(v >= lo && v <= hi))
        return rl_err(err, RL_EINVAL, "%s: expected a number %g..%g, got '%s'", flag, lo, hi, s);
    *out = v;
    return 0;
}
