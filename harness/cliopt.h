/* cliopt.h - the episode-config flags shared by run, batch and experiment,
 * and small parsers for their values. */
#ifndef RL_CLIOPT_H
#define RL_CLIOPT_H

#include "harness/episode.h"

#include <stddef.h>
#include <stdint.h>

/* Tries argv[*i] as an episode-config flag. Returns 1 (consumed, *i moved
 * past its value), 0 (not a config flag) or 2 (a usage error: err holds one
 * line, "harness CMD: FLAG: expected ..."). */
int cliopt_config(ep_config *c, int *i, int argc, char **argv, const char *cmd, char *err);

/* Help text for the config flags. */
const char *cliopt_config_help(void);

/* "1-3", "1,2,7" or "5" -> seeds; at most max. */
int cliopt_seeds(uint64_t *out, size_t *n, size_t max, const char *s, char *err);


/* Default worker count: the online CPUs. */
long cliopt_workers(void);

#endif
