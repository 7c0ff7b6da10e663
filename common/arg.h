/* arg.h - strict parsers for the values of command-line flags.
 *
 * The whole string must be the number (no sign for unsigned values, no
 * trailing text, no overflow) and lie in the given range; the error names
 * the flag and what was expected, e.g.
 *   "--max-turns: expected an integer 1..1000, got '12x'".
 */
#ifndef RL_ARG_H
#define RL_ARG_H

#include <stdint.h>

/* A decimal integer in lo..hi. Returns 0 or RL_EINVAL (err filled, *out
 * untouched). */
int arg_long(long *out, const char *flag, const char *s, long lo, long hi, char *err);
/* An int in lo..hi (arg_long narrowed). */
int arg_int(int *out, const char *flag, const char *s, int lo, int hi, char *err);
/* An unsigned decimal in lo..hi (seeds, byte counts). */
int arg_u64(uint64_t *out, const char *flag, const char *s, uint64_t lo, uint64_t hi, char *err);
/* A finite number in lo..hi. */
int arg_double(double *out, const char *flag, const char *s, double lo, double hi, char *err);

#endif
