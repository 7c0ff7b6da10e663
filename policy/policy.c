/* policy.c - opening policies by spec, and the calls every policy shares. */
#include "policy/policy.h"

#include "common/err.h"
#include "policy/model_policy.h"
#include "policy/openai.h"
#include "policy/scripted.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pol_env_default(pol_env *e)
{
    memset(e, 0, sizeof *e);
    e->temperature = 1.0;
    e->top_p = 1.0;
}

int pol_open(policy **out, const char *spec, const pol_env *env, char *err)
{
    *out = NULL;
    pol_env dflt;
    if (!env) {
        pol_env_default(&dflt);
        env = &dflt;
    }
    if (!spec || !spec[0])
        return rl_err(err, RL_EINVAL, "policy: empty spec (expected oracle, oracle:recover=PERCENT, search, replay:FILE[:K], model:CKPT or openai)");
    if (!strcmp(spec, "oracle"))
        return oracle_open(out, env, 0, err);
    if (!strncmp(spec, "oracle:recover=", 15)) {
        char *end;
        long pct = strtol(spec + 15, &end, 10);
        if (end == spec + 15 || *end || pct < 0 || pct > 100)
            return rl_err(err, RL_EINVAL, "policy '%s': expected oracle:recover=PERCENT (0-100)", spec);
        return oracle_open(out, env, (int)pct, err);
    }
    if (!strcmp(spec, "search"))
        return search_open(out, env, err);
    if (!strncmp(spec, "replay:", 7))
        return replay_open(out, spec + 7, err);
    if (!strncmp(spec, "model:", 6))
        return model_policy_open(out, spec + 6, env, err);
    if (!strcmp(spec, "openai"))
        return oai_open(out, env, err);
    return rl_err(err, RL_EINVAL, "policy '%s': unknown (expected oracle, oracle:recover=PERCENT, search, replay:FILE[:K], model:CKPT or openai)",
                  spec);
}

void pol_free(policy *p)
{
    if (!p)
        return;
    if (p->vt && p->vt->free)
        p->vt->free(p);
    free(p);
}

int pol_generate(policy *p, pol_response *resp, const pol_request *req, size_t n, char *err)
{
    return p->vt->generate(p, resp, req, n, err);
}

void pol_response_dispose(pol_response *r)
{
    free(r->text);
    free(r->ids);
    free(r->logprobs);
    free(r->error);
    free(r->meta);
    free(r->context_ids);
    memset(r, 0, sizeof *r);
}
