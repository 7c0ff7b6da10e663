/* model_policy.c - placeholder until the built-in model is wired in. */
#include "common/err.h"
#include "policy/scripted.h"

int model_policy_open(policy **out, const char *ckpt, const pol_env *env, char *err)
{
    (void)env;
    *out = NULL;
    return rl_err(err, RL_EUNSUP, "policy model:%s: the built-in model is not wired in yet", ckpt);
}
