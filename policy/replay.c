/* replay.c - replays the assistant messages of a recorded trajectory.
 *
 * `replay:FILE[:K]` takes record K (0-based line, default 0) of a JSONL
 * file and answers turn t with that record's turn t generated text,
 * exactly. Past the recorded turns it answers with an empty message (no
 * tool call), which ends the episode.
 */
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "policy/scripted.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct replay {
    char **texts;
    size_t n;
} replay;

static int replay_generate(policy *p, pol_response *resp, const pol_request *req, size_t n, char *err)
{
    replay *r = p->impl;
    for (size_t i = 0; i < n; i++) {
        size_t turn = scripted_turn(req[i].context, req[i].context_len);
        memset(&resp[i], 0, sizeof resp[i]);
        const char *t = turn < r->n ? r->texts[turn] : "";
        resp[i].text = strdup(t);
        if (!resp[i].text)
            return rl_err(err, RL_ENOMEM, "policy replay: out of memory");
        resp[i].text_len = strlen(t);
    }
    return 0;
}

static void replay_free(policy *p)
{
    replay *r = p->impl;
    for (size_t i = 0; r && i < r->n; i++)
        free(r->texts[i]);
    if (r)
        free(r->texts);
    free(r);
}

static const pol_vtable REPLAY_VT = {replay_generate, replay_free};

int replay_open(policy **out, const char *spec, char *err)
{
    *out = NULL;
    char path[4096];
    long k = 0;
    snprintf(path, sizeof path, "%s", spec);
    char *colon = strrchr(path, ':');
    if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
        k = atol(colon + 1);
        *colon = '\0';
    }
    char *data;
    int rc = fs_read_file(&data, NULL, path, RL_REPLAY_FILE_MAX, err);
    if (rc < 0)
        return rl_err(err, rc, "policy replay: %s", err);
    char *save = NULL, *line = strtok_r(data, "\n", &save);
    for (long i = 0; line && i < k; i++)
        line = strtok_r(NULL, "\n", &save);
    cJSON *rec = line ? cJSON_Parse(line) : NULL;
    free(data);
    const cJSON *turns = cJSON_GetObjectItemCaseSensitive(rec, "turns");
    if (!cJSON_IsArray(turns)) {
        cJSON_Delete(rec);
        return rl_err(err, RL_EINVAL, "policy replay: %s: record %ld: expected a trajectory with \"turns\"",
                      path, k);
    }
    replay *r = calloc(1, sizeof *r);
    policy *p = calloc(1, sizeof *p);
    size_t n = (size_t)cJSON_GetArraySize(turns);
    if (r)
        r->texts = calloc(n + 1, sizeof *r->texts);
    rc = (!r || !p || !r->texts) ? RL_ENOMEM : 0;
    for (size_t i = 0; !rc && i < n; i++) {
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(turns, (int)i), "generated");
        if (!cJSON_IsString(g)) {
            rc = rl_err(err, RL_EINVAL, "policy replay: %s: record %ld: turn %zu has no \"generated\" text",
                        path, k, i);
            break;
        }
        if (!(r->texts[r->n++] = strdup(g->valuestring)))
            rc = RL_ENOMEM;
    }
    cJSON_Delete(rec);
    if (rc < 0) {
        if (rc == RL_ENOMEM)
            rl_err(err, rc, "policy replay: out of memory");
        if (r) {
            policy tmp = {.impl = r};
            replay_free(&tmp);
        }
        free(p);
        return rc;
    }
    p->vt = &REPLAY_VT;
    p->impl = r;
    snprintf(p->name, sizeof p->name, "replay");
    *out = p;
    return 0;
}
