/* grpo_group.c - trajectories and groups: a record's counters, rewards,
 * group advantages, episode seeds, and the small helpers every stage of
 * the trainer uses (clock, seed mixing, loading weights). */
#include "grpo/grpo_int.h"

#include "common/err.h"
#include "common/limits.h"
#include "common/vec.h"
#include "harness/tools.h"

#include <stdlib.h>
#include <string.h>

uint64_t grpo_mix(uint64_t a, uint64_t b)
{
    uint64_t x = a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2));
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Episode seeds are recorded as JSON numbers: keep them below 2^52. */
uint64_t grpo_ep_seed(long seed, uint64_t gid, int i)
{
    return (grpo_mix(grpo_mix((uint64_t)seed, gid), (uint64_t)i) & ((1ull << 52) - 1)) + 1;
}

static double jnum(const cJSON *o, const char *k, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* One character of the fix: into the text (cut at its cap) and into the
 * FNV-1a hash of the whole. */
static void fix_put(grpo_traj *tr, size_t *len, char ch)
{
    tr->fix_hash = (tr->fix_hash ^ (unsigned char)ch) * 0x100000001b3ull;
    if (*len + 1 < sizeof tr->fix)
        tr->fix[(*len)++] = ch;
    tr->fix[*len] = '\0';
}

/* Appends s to the fix with blank runs collapsed to one space and the
 * ends trimmed. */
static void fix_append(grpo_traj *tr, size_t *len, const char *s)
{
    int space = 0, any = 0;
    for (; *s; s++) {
        if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') {
            space = any;
            continue;
        }
        if (space)
            fix_put(tr, len, ' ');
        fix_put(tr, len, *s);
        space = 0;
        any = 1;
    }
}

/* The fix of an applied edit_file call: "old -> new". */
static void fix_set(grpo_traj *tr, const cJSON *args)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(args, "old_string");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(args, "new_string");
    if (!cJSON_IsString(o) || !cJSON_IsString(n))
        return;
    size_t len = 0;
    tr->fix_hash = 0xcbf29ce484222325ull;
    fix_append(tr, &len, o->valuestring);
    for (const char *sep = " -> "; *sep; sep++)
        fix_put(tr, &len, *sep);
    fix_append(tr, &len, n->valuestring);
    tr->fix_hash |= 1; /* 0 means no fix */
}

void grpo_traj_parse(grpo_traj *tr, const cJSON *rec)
{
    tr->passed = jnum(rec, "reward", 0) > 0.5;
    tr->flagged = cJSON_IsTrue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rec, "integrity"), "flagged"));
    const cJSON *turns = cJSON_GetObjectItemCaseSensitive(rec, "turns"), *turn;
    tr->turns = cJSON_GetArraySize(turns);
    int unrepaired = 0; /* failed edits since the last applied one */
    cJSON_ArrayForEach(turn, turns)
    {
        const cJSON *fe = cJSON_GetObjectItemCaseSensitive(turn, "format_error");
        tr->format_errors += fe && cJSON_IsString(fe);
        const cJSON *c;
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(turn, "tool_calls"))
        {
            int ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "ok"));
            const cJSON *name = cJSON_GetObjectItemCaseSensitive(c, "name");
            int edit = cJSON_IsString(name) &&
                       (!strcmp(name->valuestring, "edit_file") || !strcmp(name->valuestring, "write_file"));
            tr->calls++;
            tr->calls_ok += ok;
            tr->edits += edit;
            tr->edits_ok += edit && ok;
            if (edit && ok) {
                tr->edit_repaired += unrepaired;
                unrepaired = 0;
                if (!strcmp(name->valuestring, "edit_file"))
                    fix_set(tr, cJSON_GetObjectItemCaseSensitive(c, "arguments"));
            }
            unrepaired += edit && !ok;
            const cJSON *kind = cJSON_GetObjectItemCaseSensitive(c, "error_kind");
            if (edit && !ok && cJSON_IsString(kind)) {
                tr->edit_no_match += !strcmp(kind->valuestring, TOOL_KIND_NO_MATCH);
                tr->edit_not_unique += !strcmp(kind->valuestring, TOOL_KIND_NOT_UNIQUE);
                tr->edit_no_change += !strcmp(kind->valuestring, TOOL_KIND_NO_CHANGE);
            }
            tr->identical += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "identical_to_previous"));
        }
    }
    tr->policy_tokens = (long)jnum(cJSON_GetObjectItemCaseSensitive(rec, "tokens"), "policy", 0);
    tr->dur_s = jnum(cJSON_GetObjectItemCaseSensitive(rec, "timings"), "total_ms", 0) / 1000.0;
}

int grpo_load_weights(model *m, const char *path, char *err)
{
    model_opts mo;
    model_opts_default(&mo);
    mo.n_threads = 1;
    model *tmp;
    int rc = model_load(&tmp, NULL, path, &mo, err);
    if (rc < 0)
        return rc;
    if (memcmp(&tmp->cfg, &m->cfg, sizeof m->cfg) != 0 || tmp->n_params != m->n_params) {
        model_free(tmp);
        return rl_err(err, RL_EINVAL, "%s: model config differs from the trainer's", path);
    }
    memcpy(m->params, tmp->params, m->n_params * sizeof(float));
    model_free(tmp);
    return 0;
}

/* ---- groups ---------------------------------------------------------------------- */

int grpo_group_new(grpo_group **out, const task *tk, long gid, int G, char *err)
{
    *out = NULL;
    grpo_group *g = calloc(1, sizeof *g);
    if (g) {
        g->tr = calloc((size_t)G, sizeof *g->tr);
        g->adv = calloc((size_t)G, sizeof *g->adv);
    }
    if (!g || !g->tr || !g->adv) {
        grpo_group_free(g);
        return rl_err(err, RL_ENOMEM, "grpo: out of memory for a group of %d", G);
    }
    g->task = tk;
    g->gid = gid;
    g->n = G;
    *out = g;
    return 0;
}

void grpo_group_free(grpo_group *g)
{
    if (!g)
        return;
    for (int i = 0; g->tr && i < g->n; i++)
        free(g->tr[i].rec);
    free(g->tr);
    free(g->adv);
    free(g);
}

static void group_score(grpo_group *g, const grpo_config *c)
{
    double r[RL_GRPO_GROUP_MAX];
    for (int i = 0; i < g->n; i++)
        r[i] = g->tr[i].reward;
    g->st = stats_advantages(g->adv, r, (size_t)g->n, c->std_mode, c->adv_eps, c->adv_clip);
}

static void durs_push(grpo_durs *d, double s)
{
    if (VEC_GROW(d->v, d->cap, d->n + 1, RL_GRPO_CURVE_MAX) < 0)
        return; /* the utilization model sees fewer episodes */
    d->v[d->n++] = s;
}

void grpo_durs_dispose(grpo_durs *d)
{
    free(d->v);
    memset(d, 0, sizeof *d);
}

void grpo_traj_finish(grpo_group *g, int i, char *rec, double reward, const grpo_config *c, const grpo_opts *o,
                      grpo_durs *durs)
{
    grpo_traj *tr = &g->tr[i];
    if (tr->done) { /* cannot happen: one record per tag */
        free(rec);
        return;
    }
    tr->done = 1;
    tr->rec = rec;
    g->n_done++;
    cJSON *j = rec ? cJSON_Parse(rec) : NULL;
    if (!j) {
        tr->error = 1;
        tr->reward = 0;
    } else {
        grpo_traj_parse(tr, j);
        double r = reward;
        if (c->shaping.on)
            r = jnum(j, "shaped_reward", r);
        if (o && o->reward)
            r = o->reward(o->user, j, r);
        tr->reward = r;
        const cJSON *why = cJSON_GetObjectItemCaseSensitive(j, "end_reason");
        tr->error = cJSON_IsString(why) && (!strcmp(why->valuestring, "error") ||
                                            !strcmp(why->valuestring, "policy_error"));
    }
    cJSON_Delete(j);
    if (tr->dur_s > 0 && durs)
        durs_push(durs, tr->dur_s);
    if (g->n_done == g->n)
        group_score(g, c);
}

void grpo_metrics_from_groups(grpo_step_metrics *sm, grpo_group *const *gs, size_t ng)
{
    double rew = 0, tok = 0, turns = 0;
    size_t n = 0, pass = 0, calls = 0, ok = 0, ident = 0, fe = 0, nturns = 0, edits = 0, edits_ok = 0, flagged = 0;
    for (size_t k = 0; k < ng; k++) {
        const grpo_group *g = gs[k];
        sm->groups++;
        sm->zero_var += g->st.zero_variance;
        for (int i = 0; i < g->n; i++) {
            const grpo_traj *tr = &g->tr[i];
            n++;
            sm->errors += tr->error;
            rew += tr->reward;
            pass += tr->passed;
            flagged += tr->flagged != 0;
            calls += (size_t)tr->calls;
            ok += (size_t)tr->calls_ok;
            edits += (size_t)tr->edits;
            edits_ok += (size_t)tr->edits_ok;
            ident += (size_t)tr->identical;
            fe += (size_t)tr->format_errors;
            nturns += (size_t)tr->turns;
            tok += (double)tr->policy_tokens;
            turns += tr->turns;
        }
    }
    sm->episodes = n;
    sm->reward_mean = n ? rew / (double)n : 0;
    sm->pass_rate = n ? (double)pass / (double)n : 0;
    sm->flagged = flagged;
    sm->flagged_share = n ? (double)flagged / (double)n : 0;
    sm->tool_success = calls ? (double)ok / (double)calls : 0;
    sm->identical_share = calls ? (double)ident / (double)calls : 0;
    sm->edit_calls = edits;
    sm->edit_applied = edits ? (double)edits_ok / (double)edits : 0;
    sm->format_error_rate = nturns ? (double)fe / (double)nturns : 0;
    sm->policy_tokens_mean = n ? tok / (double)n : 0;
    sm->turns_mean = n ? turns / (double)n : 0;
}

