/* oracle.c - the shortest path to a fix, from the gold patch.
 *
 * Run the tests, read each file the fix touches, apply the fix as
 * edit_file calls (one per hunk; write_file for new files), re-run the
 * tests, submit. This is the demonstration SFT data is made of: it shows
 * the tool-call format and a clean working order, never a recovery.
 */
#include "common/err.h"
#include "policy/scripted.h"
#include "tasks/patch.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct step {
    const char *tool;
    char *args;     /* JSON object text */
    const char *why;
} step;

typedef struct oracle {
    step *steps;
    size_t n;
} oracle;

static int push(oracle *o, const char *tool, cJSON *args, const char *why)
{
    step *s = realloc(o->steps, (o->n + 1) * sizeof *s);
    if (!s) {
        cJSON_Delete(args);
        return RL_ENOMEM;
    }
    o->steps = s;
    s[o->n].tool = tool;
    s[o->n].args = cJSON_PrintUnformatted(args);
    s[o->n].why = why;
    cJSON_Delete(args);
    return s[o->n++].args ? 0 : RL_ENOMEM;
}

static int plan(oracle *o, const patch *p)
{
    int rc = push(o, "run_tests", cJSON_CreateObject(), "First, run the tests to see what fails.");
    for (size_t i = 0; !rc && i < p->nfiles; i++) {
        const patch_file *f = &p->files[i];
        if (!f->old_path)
            continue;
        cJSON *a = cJSON_CreateObject();
        cJSON_AddStringToObject(a, "path", f->old_path);
        rc = push(o, "read_file", a, "Read the code the failing test exercises.");
    }
    for (size_t i = 0; !rc && i < p->nfiles; i++) {
        const patch_file *f = &p->files[i];
        for (size_t j = 0; !rc && j < f->nhunks; j++) {
            cJSON *a = cJSON_CreateObject();
            cJSON_AddStringToObject(a, "path", f->new_path ? f->new_path : f->old_path);
            if (!f->old_path) {
                cJSON_AddStringToObject(a, "content", f->hunks[j].new_text);
                rc = push(o, "write_file", a, "Add the missing file.");
            } else {
                cJSON_AddStringToObject(a, "old_string", f->hunks[j].old_text);
                cJSON_AddStringToObject(a, "new_string", f->hunks[j].new_text);
                rc = push(o, "edit_file", a, "Fix the defect with a minimal edit.");
            }
        }
    }
    if (!rc)
        rc = push(o, "run_tests", cJSON_CreateObject(), "Re-run the tests to check the fix.");
    if (!rc)
        rc = push(o, "submit", cJSON_CreateObject(), "The tests pass; submit.");
    return rc;
}

static int oracle_generate(policy *p, pol_response *resp, const pol_request *req, size_t n, char *err)
{
    oracle *o = p->impl;
    for (size_t i = 0; i < n; i++) {
        size_t turn = scr_turn(req[i].context, req[i].context_len);
        int rc;
        if (turn < o->n) {
            const step *s = &o->steps[turn];
            rc = scr_reply(&resp[i], req[i].context, req[i].context_len, s->why, NULL, s->tool, s->args, err);
        } else {
            rc = scr_reply(&resp[i], req[i].context, req[i].context_len, NULL, "Done.", NULL, NULL, err);
        }
        if (rc < 0)
            return rc;
    }
    return 0;
}

static void oracle_free(policy *p)
{
    oracle *o = p->impl;
    for (size_t i = 0; o && i < o->n; i++)
        free(o->steps[i].args);
    if (o)
        free(o->steps);
    free(o);
}

static const pol_vtable ORACLE_VT = {oracle_generate, oracle_free};

int oracle_open(policy **out, const pol_env *env, char *err)
{
    *out = NULL;
    if (!env || !env->gold_patch || !env->gold_patch[0])
        return rl_err(err, RL_EINVAL, "policy oracle: needs the task's gold patch");
    patch pt;
    int rc = patch_parse(&pt, env->gold_patch, err);
    if (rc < 0)
        return rl_err(err, rc, "policy oracle: gold patch: %s", err);
    policy *p = calloc(1, sizeof *p);
    oracle *o = calloc(1, sizeof *o);
    if (!p || !o || plan(o, &pt) < 0) {
        patch_free(&pt);
        free(p);
        if (o) {
            policy tmp = {.impl = o};
            oracle_free(&tmp);
        }
        return rl_err(err, RL_ENOMEM, "policy oracle: out of memory");
    }
    patch_free(&pt);
    p->vt = &ORACLE_VT;
    p->impl = o;
    snprintf(p->name, sizeof p->name, "oracle");
    *out = p;
    return 0;
}
