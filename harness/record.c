/* record.c - rebuilding and validating the turns of a record (record.h). */
#include "harness/record.h"

#include "common/err.h"
#include "common/limits.h"
#include "common/vec.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const ORIGIN_NAMES[TPL_NORIGINS] = {
    [TPL_TEMPLATE] = "template", [TPL_SYSTEM] = "system",       [TPL_TOOLS] = "tools",
    [TPL_USER] = "user",         [TPL_ASSISTANT] = "assistant", [TPL_TOOL] = "tool",
};

int rec_origin(const char *name)
{
    for (int i = 0; name && i < TPL_NORIGINS; i++)
        if (!strcmp(name, ORIGIN_NAMES[i]))
            return i;
    return -1;
}

static const cJSON *item(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

/* A JSON number that is an integer in [0, max]. */
static int get_count(size_t *out, const cJSON *v, size_t max)
{
    if (!cJSON_IsNumber(v))
        return -1;
    double d = v->valuedouble;
    if (!(d >= 0 && d <= (double)max && d == floor(d)))
        return -1;
    *out = (size_t)d;
    return 0;
}

/* The prefix reference of a stored object: the previous turn, always. */
static int is_prev(const cJSON *o, size_t k)
{
    size_t p;
    return k > 0 && get_count(&p, item(o, "prefix_turn"), k - 1) == 0 && p == k - 1;
}

int rec_walk_init(rec_walk *w, const cJSON *rec, const char *where, int vocab, char *err)
{
    memset(w, 0, sizeof *w);
    w->where = where ? where : "record";
    w->vocab = vocab > 0 ? vocab : RL_TOK_VOCAB_MAX;
    const cJSON *turns = item(rec, "turns"), *schema = item(rec, "schema");
    if (!cJSON_IsObject(rec) || !cJSON_IsArray(turns))
        return rl_err(err, RL_EPARSE, "%s: expected a trajectory record with \"turns\" (array)", w->where);
    size_t sv;
    if (schema && (get_count(&sv, schema, REC_SCHEMA) < 0 || sv < 1))
        return rl_err(err, RL_EPARSE, "%s: schema: expected 1 to %d", w->where, REC_SCHEMA);
    w->turns_json = turns;
    w->next_json = turns->child;
    w->nturns = (size_t)cJSON_GetArraySize(turns);
    return 0;
}

void rec_walk_dispose(rec_walk *w)
{
    free(w->text);
    free(w->segv);
    free(w->ctxv);
    free(w->idv);
    memset(w, 0, sizeof *w);
}

/* ---- context text ---------------------------------------------------------- */

static int put_text(rec_walk *w, size_t at, const char *s, size_t n, size_t k, char *err)
{
    if (at + n > RL_REC_TEXT_MAX)
        return rl_err(err, RL_ELIMIT, "%s: turn %zu: context of more than %u bytes", w->where, k, RL_REC_TEXT_MAX);
    if (vec_grow(&w->text, &w->text_cap, at + n + 1, 1, SIZE_MAX) < 0)
        return rl_err(err, RL_ENOMEM, "%s: out of memory", w->where);
    memcpy(w->text + at, s, n);
    w->text[at + n] = '\0';
    return 0;
}

static int walk_context(rec_walk *w, const cJSON *j, size_t k, char *err)
{
    const cJSON *ctx = item(j, "context"), *tx = item(ctx, "text"), *ap = item(ctx, "append");
    int rc;
    if (cJSON_IsString(tx)) {
        w->context_is_prefix = 0;
        w->context_len = strlen(tx->valuestring);
        return put_text(w, 0, tx->valuestring, w->context_len, k, err);
    }
    if (!cJSON_IsObject(ctx) || !is_prev(ctx, k) || !cJSON_IsString(ap))
        return rl_err(err, RL_EPARSE, "%s: turn %zu: context: expected {\"text\"} or {\"prefix_turn\": %zu, \"append\"}",
                      w->where, k, k ? k - 1 : 0);
    /* the previous context + the previous generated text + append */
    size_t at = w->context_len, na = strlen(ap->valuestring);
    if ((rc = put_text(w, at, w->generated, w->generated_len, k, err)) < 0 ||
        (rc = put_text(w, at + w->generated_len, ap->valuestring, na, k, err)) < 0)
        return rc;
    w->context_len = at + w->generated_len + na;
    w->context_is_prefix = 1;
    return 0;
}

/* ---- segments --------------------------------------------------------------- */

/* Parses the spans of `a` into segv from index `first` on, continuing at
 * byte `at`; `field` names the array in errors. */
static int parse_spans(rec_walk *w, const cJSON *a, size_t first, size_t at, size_t old_n, const char *field,
                       size_t k, char *err)
{
    size_t i = first, len = w->context_len, same = first;
    int all_same = 1;
    const cJSON *s;
    cJSON_ArrayForEach(s, a)
    {
        size_t off, n;
        const cJSON *org = cJSON_GetArrayItem(s, 2);
        int o = cJSON_IsString(org) ? rec_origin(org->valuestring) : -1;
        if (!cJSON_IsArray(s) || cJSON_GetArraySize(s) != 3 || get_count(&off, cJSON_GetArrayItem(s, 0), len) < 0 ||
            off != at || get_count(&n, cJSON_GetArrayItem(s, 1), len - at) < 0 || o < 0)
            return rl_err(err, RL_EPARSE,
                          "%s: turn %zu: %s[%zu]: expected [offset, length, origin] continuing at byte %zu of %zu",
                          w->where, k, field, i - first, at, len);
        int rc = vec_grow(&w->segv, &w->segv_cap, i + 1, sizeof *w->segv, RL_REC_SEGS_MAX);
        if (rc == RL_ELIMIT)
            return rl_err(err, rc, "%s: turn %zu: %s: more than %u segments", w->where, k, field, RL_REC_SEGS_MAX);
        if (rc < 0)
            return rl_err(err, RL_ENOMEM, "%s: out of memory", w->where);
        rec_seg v = {off, n, (tpl_origin)o};
        if (all_same && i < old_n && w->segv[i].off == v.off && w->segv[i].len == v.len &&
            w->segv[i].origin == v.origin)
            same++;
        else
            all_same = 0;
        w->segv[i++] = v;
        at += n;
    }
    if (at != len)
        return rl_err(err, RL_EPARSE, "%s: turn %zu: segments cover %zu of %zu context bytes", w->where, k, at, len);
    w->nsegs = i;
    w->segs_same = same;
    return 0;
}

static int walk_segments(rec_walk *w, const cJSON *j, size_t k, char *err)
{
    const cJSON *sg = item(j, "segments");
    if (cJSON_IsArray(sg))
        return parse_spans(w, sg, 0, 0, w->nsegs, "segments", k, err);
    const cJSON *ap = item(sg, "append");
    size_t keep;
    if (!cJSON_IsObject(sg) || !is_prev(sg, k) || get_count(&keep, item(sg, "keep"), w->nsegs) < 0 ||
        !cJSON_IsArray(ap) || !w->context_is_prefix)
        return rl_err(err, RL_EPARSE,
                      "%s: turn %zu: segments: expected an array, or {\"prefix_turn\": %zu, \"keep\": 0..%zu, "
                      "\"append\"} with a context stored the same way",
                      w->where, k, k ? k - 1 : 0, w->nsegs);
    size_t at = keep ? w->segv[keep - 1].off + w->segv[keep - 1].len : 0;
    return parse_spans(w, ap, keep, at, 0, "segments.append", k, err);
}

/* ---- ids ---------------------------------------------------------------------- */

static int put_ids(rec_walk *w, int32_t **v, size_t *cap, size_t at, const cJSON *a, size_t *out_n,
                   const char *field, size_t k, char *err)
{
    size_t n = (size_t)cJSON_GetArraySize(a);
    if (at + n > RL_REC_IDS_MAX)
        return rl_err(err, RL_ELIMIT, "%s: turn %zu: %s: more than %u ids", w->where, k, field, RL_REC_IDS_MAX);
    if (vec_grow(v, cap, at + n + 1, sizeof **v, SIZE_MAX) < 0)
        return rl_err(err, RL_ENOMEM, "%s: out of memory", w->where);
    size_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a)
    {
        double d = cJSON_IsNumber(e) ? e->valuedouble : -1;
        if (!(d >= 0 && d < w->vocab && d == floor(d)))
            return rl_err(err, RL_EPARSE, "%s: turn %zu: %s[%zu]: expected a token id in 0..%d", w->where, k, field, i,
                          w->vocab - 1);
        (*v)[at + i++] = (int32_t)d;
    }
    *out_n = at + i;
    return 0;
}

static int walk_ctx_ids(rec_walk *w, const cJSON *j, size_t k, char *err)
{
    const cJSON *ci = item(j, "context_ids");
    int had = w->has_ctx_ids;
    w->has_ctx_ids = 0;
    if (!ci || cJSON_IsNull(ci))
        return 0;
    int rc;
    if (cJSON_IsArray(ci)) {
        if ((rc = put_ids(w, &w->ctxv, &w->ctxv_cap, 0, ci, &w->n_ctx_ids, "context_ids", k, err)) < 0)
            return rc;
        w->ctx_ids_encoded = 1;
        w->has_ctx_ids = 1;
        return 0;
    }
    const cJSON *ap = item(ci, "append_ids"), *kp = item(ci, "keep");
    size_t keep = 0;
    if (!cJSON_IsObject(ci) || !is_prev(ci, k) || !cJSON_IsArray(ap) || !had ||
        (kp ? get_count(&keep, kp, w->n_ctx_ids) < 0 : !w->has_ids))
        return rl_err(err, RL_EPARSE,
                      "%s: turn %zu: context_ids: expected an array, or {\"prefix_turn\": %zu, \"append_ids\"} after a "
                      "turn with context and sampled ids, or {\"prefix_turn\": %zu, \"keep\": 0..%zu, \"append_ids\"} "
                      "after a turn with context ids",
                      w->where, k, k ? k - 1 : 0, k ? k - 1 : 0, had ? w->n_ctx_ids : 0);
    size_t at;
    if (kp) {
        at = keep; /* the first `keep` ids of the previous context */
    } else {
        /* the previous context's ids + its sampled ids */
        at = w->n_ctx_ids;
        if (at + w->n_ids > RL_REC_IDS_MAX)
            return rl_err(err, RL_ELIMIT, "%s: turn %zu: context_ids: more than %u ids", w->where, k,
                          RL_REC_IDS_MAX);
        if (vec_grow(&w->ctxv, &w->ctxv_cap, at + w->n_ids + 1, sizeof *w->ctxv, SIZE_MAX) < 0)
            return rl_err(err, RL_ENOMEM, "%s: out of memory", w->where);
        memcpy(w->ctxv + at, w->idv, w->n_ids * sizeof *w->idv);
        at += w->n_ids;
        w->ctx_ids_encoded = 0;
    }
    if ((rc = put_ids(w, &w->ctxv, &w->ctxv_cap, at, ap, &w->n_ctx_ids, "context_ids.append_ids", k, err)) < 0)
        return rc;
    w->has_ctx_ids = 1;
    return 0;
}

static int walk_ids(rec_walk *w, const cJSON *j, size_t k, char *err)
{
    const cJSON *ids = item(j, "ids");
    w->has_ids = 0;
    w->n_ids = 0;
    if (!ids || cJSON_IsNull(ids))
        return 0;
    if (!cJSON_IsArray(ids))
        return rl_err(err, RL_EPARSE, "%s: turn %zu: ids: expected an array", w->where, k);
    int rc = put_ids(w, &w->idv, &w->idv_cap, 0, ids, &w->n_ids, "ids", k, err);
    if (rc == 0)
        w->has_ids = 1;
    return rc;
}

/* ---- the walk --------------------------------------------------------------- */

int rec_walk_next(rec_walk *w, char *err)
{
    const cJSON *j = w->next_json;
    if (!j)
        return 0;
    size_t k = w->started ? w->turn + 1 : 0;
    if (!cJSON_IsObject(j))
        return rl_err(err, RL_EPARSE, "%s: turn %zu: expected an object", w->where, k);
    const cJSON *g = item(j, "generated");
    if (!cJSON_IsString(g))
        return rl_err(err, RL_EPARSE, "%s: turn %zu: generated: expected a string", w->where, k);
    int rc;
    if ((rc = walk_context(w, j, k, err)) < 0 || (rc = walk_segments(w, j, k, err)) < 0 ||
        (rc = walk_ctx_ids(w, j, k, err)) < 0 || (rc = walk_ids(w, j, k, err)) < 0)
        return rc;
    w->started = 1;
    w->turn = k;
    w->json = j;
    w->next_json = j->next;
    w->context = w->text;
    w->segs = w->segv;
    w->ctx_ids = w->ctxv;
    w->ids = w->idv;
    w->generated = g->valuestring;
    w->generated_len = strlen(g->valuestring);
    return 1;
}
