/* optim.c - AdamW, its learning-rate schedule and gradient clipping
 * (see optim.h). */
#include "model/optim.h"

#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void opt_config_default(opt_config *c)
{
    c->lr = 3e-4f;
    c->beta1 = 0.9f;
    c->beta2 = 0.95f;
    c->eps = 1e-8f;
    c->weight_decay = 0.1f;
    c->grad_clip = 1.0f;
    c->warmup_steps = 100;
    c->total_steps = 10000;
    c->min_lr_ratio = 0.1f;
}

int opt_new(adamw **out, const opt_config *cfg, size_t n, const opt_span *spans, int n_spans,
            char *err)
{
    *out = NULL;
    if (n == 0 || n > RL_OPT_PARAMS_MAX)
        return rl_err(err, RL_EINVAL, "optimizer: %zu parameters, expected 1..%u", n,
                      RL_OPT_PARAMS_MAX);
    if (n_spans < 0 || n_spans > RL_OPT_SPANS_MAX)
        return rl_err(err, RL_EINVAL, "optimizer: %d spans, expected 0..%d", n_spans,
                      RL_OPT_SPANS_MAX);
    if (!(cfg->lr >= 0.0f) || !(cfg->beta1 >= 0.0f && cfg->beta1 < 1.0f) ||
        !(cfg->beta2 >= 0.0f && cfg->beta2 < 1.0f) || !(cfg->eps > 0.0f) ||
        !(cfg->weight_decay >= 0.0f) || cfg->warmup_steps < 0 ||
        !(cfg->min_lr_ratio >= 0.0f && cfg->min_lr_ratio <= 1.0f))
        return rl_err(err, RL_EINVAL,
                      "optimizer: expected lr >= 0, betas in [0,1), eps > 0, weight_decay >= 0, "
                      "warmup >= 0, min_lr_ratio in [0,1]");
    adamw *o = calloc(1, sizeof *o);
    if (!o)
        return rl_err(err, RL_ENOMEM, "optimizer: out of memory");
    o->cfg = *cfg;
    o->n = n;
    o->m = calloc(n, sizeof(float));
    o->v = calloc(n, sizeof(float));
    o->decay = calloc(n, 1);
    if (!o->m || !o->v || !o->decay) {
        opt_free(o);
        return rl_err(err, RL_ENOMEM, "optimizer: out of memory for %zu parameters", n);
    }
    for (int i = 0; i < n_spans; i++) {
        if (spans[i].offset > n || spans[i].n > n - spans[i].offset) {
            opt_free(o);
            return rl_err(err, RL_EINVAL, "optimizer: span %d [%zu, +%zu) outside %zu parameters",
                          i, spans[i].offset, spans[i].n, n);
        }
        memset(o->decay + spans[i].offset, spans[i].decay ? 1 : 0, spans[i].n);
    }
    *out = o;
    return 0;
}

void opt_free(adamw *o)
{
    if (!o)
        return;
    free(o->m);
    free(o->v);
    free(o->decay);
    free(o);
}

float opt_lr_at(const opt_config *c, long step)
{
    if (step < c->warmup_steps)
        return c->lr * (float)(step + 1) / (float)c->warmup_steps;
    if (c->total_steps <= c->warmup_steps)
        return c->lr;
    double progress = (double)(step - c->warmup_steps) / (double)(c->total_steps - c->warmup_steps);
    if (progress > 1.0)
        progress = 1.0;
    double floor = c->lr * (double)c->min_lr_ratio;
    return (float)(floor + (c->lr - floor) * 0.5 * (1.0 + cos(M_PI * progress)));
}

double opt_clip_grad_norm(float *g, size_t n, float max_norm)
{
    double ss = 0.0;
    for (size_t i = 0; i < n; i++)
        ss += (double)g[i] * g[i];
    double norm = sqrt(ss);
    if (!isfinite(norm))
        return norm;
    if (max_norm > 0.0f && norm > max_norm) {
        float s = (float)(max_norm / norm);
        for (size_t i = 0; i < n; i++)
            g[i] *= s;
    }
    return norm;
}

int opt_step(adamw *o, float *params, float *grads, double *out_norm, float *out_lr, char *err)
{
    const opt_config *c = &o->cfg;
    double norm = opt_clip_grad_norm(grads, o->n, c->grad_clip);
    if (out_norm)
        *out_norm = norm;
    float lr = opt_lr_at(c, o->step);
    if (out_lr)
        *out_lr = lr;
    if (!isfinite(norm))
        return rl_err(err, RL_EINVAL, "optimizer step %ld: gradient norm is %g, update skipped",
                      o->step, norm);
    long t = o->step + 1;
    float bc1 = 1.0f - powf(c->beta1, (float)t), bc2 = 1.0f - powf(c->beta2, (float)t);
    for (size_t i = 0; i < o->n; i++) {
        float g = grads[i];
        float m = o->m[i] = c->beta1 * o->m[i] + (1.0f - c->beta1) * g;
        float v = o->v[i] = c->beta2 * o->v[i] + (1.0f - c->beta2) * g * g;
        float mhat = m / bc1, vhat = v / bc2;
        float w = params[i];
        if (o->decay[i])
            w -= lr * c->weight_decay * w;
        params[i] = w - lr * mhat / (sqrtf(vhat) + c->eps);
    }
    o->step = t;
    return 0;
}

/* ---- state files ------------------------------------------------------------ */

#define OPT_FORMAT "rl-adamw-v1"

int opt_save(const adamw *o, const char *path, char *err)
{
    cJSON *root = cJSON_CreateObject(), *md = cJSON_AddObjectToObject(root, "__metadata__");
    char step[32], n[32];
    snprintf(step, sizeof step, "%ld", o->step);
    snprintf(n, sizeof n, "%zu", o->n);
    double shape = (double)o->n, bytes = (double)o->n * 4;
    double offm[2] = {0, bytes}, offv[2] = {bytes, 2 * bytes};
    cJSON *m = cJSON_AddObjectToObject(root, "m"), *v = cJSON_AddObjectToObject(root, "v");
    int ok = md && m && v && cJSON_AddStringToObject(md, "format", OPT_FORMAT) &&
             cJSON_AddStringToObject(md, "step", step) && cJSON_AddStringToObject(md, "n", n) &&
             cJSON_AddStringToObject(m, "dtype", "F32") &&
             cJSON_AddItemToObject(m, "shape", cJSON_CreateDoubleArray(&shape, 1)) &&
             cJSON_AddItemToObject(m, "data_offsets", cJSON_CreateDoubleArray(offm, 2)) &&
             cJSON_AddStringToObject(v, "dtype", "F32") &&
             cJSON_AddItemToObject(v, "shape", cJSON_CreateDoubleArray(&shape, 1)) &&
             cJSON_AddItemToObject(v, "data_offsets", cJSON_CreateDoubleArray(offv, 2));
    char *hdr = ok ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    if (!hdr)
        return rl_err(err, RL_ENOMEM, "%s: out of memory building the header", path);
    size_t hlen = strlen(hdr), padded = (hlen + 7) & ~(size_t)7;
    size_t total = 8 + padded + 2 * o->n * sizeof(float);
    unsigned char *buf = malloc(total);
    if (!buf) {
        free(hdr);
        return rl_err(err, RL_ENOMEM, "%s: out of memory (%zu bytes)", path, total);
    }
    for (int i = 0; i < 8; i++)
        buf[i] = (unsigned char)((uint64_t)padded >> (8 * i));
    memcpy(buf + 8, hdr, hlen);
    memset(buf + 8 + hlen, ' ', padded - hlen);
    memcpy(buf + 8 + padded, o->m, o->n * sizeof(float));
    memcpy(buf + 8 + padded + o->n * sizeof(float), o->v, o->n * sizeof(float));
    free(hdr);
    int rc = fs_write_atomic(path, buf, total, err);
    free(buf);
    return rc;
}

/* Checks tensor `name` of the header: F32, shape [n], within the data. */
static int opt_entry(const cJSON *root, const char *name, size_t n, uint64_t data_len,
                     uint64_t *begin, const char *path, char *err)
{
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, name);
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *of = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    const cJSON *s0 = cJSON_GetArrayItem(sh, 0), *b = cJSON_GetArrayItem(of, 0);
    const cJSON *en = cJSON_GetArrayItem(of, 1);
    if (!cJSON_IsString(dt) || strcmp(dt->valuestring, "F32") || cJSON_GetArraySize(sh) != 1 ||
        !cJSON_IsNumber(s0) || s0->valuedouble != (double)n || !cJSON_IsNumber(b) ||
        !cJSON_IsNumber(en) || b->valuedouble < 0 || en->valuedouble - b->valuedouble != 4.0 * n ||
        en->valuedouble > (double)data_len)
        return rl_err(err, RL_EPARSE,
                      "%s: tensor %s: expected F32 [%zu] inside the file's %" PRIu64 " data bytes",
                      path, name, n, data_len);
    *begin = (uint64_t)b->valuedouble;
    return 0;
}

int opt_load(adamw *o, const char *path, char *err)
{
    char *data = NULL;
    size_t len = 0;
    int rc = fs_read_file(&data, &len, path, 16 * (size_t)RL_OPT_PARAMS_MAX + (1u << 20), err);
    if (rc)
        return rc;
    cJSON *root = NULL;
    uint64_t hlen = 0;
    for (int i = 0; len >= 8 && i < 8; i++)
        hlen |= (uint64_t)(unsigned char)data[i] << (8 * i);
    if (len < 8 || hlen > len - 8) {
        rc = rl_err(err, RL_EPARSE, "%s: %zu bytes, header length %" PRIu64 " does not fit", path,
                    len, hlen);
        goto done;
    }
    root = cJSON_ParseWithLength(data + 8, hlen);
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(root, "__metadata__");
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(md, "format");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(md, "step");
    if (!cJSON_IsObject(root) || !cJSON_IsString(fmt) || strcmp(fmt->valuestring, OPT_FORMAT) ||
        !cJSON_IsString(st)) {
        rc = rl_err(err, RL_EPARSE, "%s: not an optimizer state (%s with a step expected)", path,
                    OPT_FORMAT);
        goto done;
    }
    char *end;
    errno = 0;
    long step = strtol(st->valuestring, &end, 10);
    if (errno || *end || end == st->valuestring || step < 0) {
        rc = rl_err(err, RL_EPARSE, "%s: step \"%.40s\", expected an integer >= 0", path,
                    st->valuestring);
        goto done;
    }
    uint64_t data_len = len - 8 - hlen, bm, bv;
    if ((rc = opt_entry(root, "m", o->n, data_len, &bm, path, err)) != 0 ||
        (rc = opt_entry(root, "v", o->n, data_len, &bv, path, err)) != 0)
        goto done;
    const char *base = data + 8 + hlen;
    memcpy(o->m, base + bm, o->n * sizeof(float));
    memcpy(o->v, base + bv, o->n * sizeof(float));
    o->step = step;
done:
    cJSON_Delete(root);
    free(data);
    return rc;
}
