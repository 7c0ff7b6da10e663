/* search.c - placeholder until the search policy lands. */
#include "common/err.h"
#include "policy/scripted.h"

int search_open(policy **out, const pol_env *env, char *err)
{
    (void)env;
    *out = NULL;
    return rl_err(err, RL_EUNSUP, "policy search: not built yet");
}
