/* model_io.c - model checkpoints as safetensors files.
 *
 * Layout (the safetensors format): 8 bytes little-endian u64 = length of
 * the JSON header; the header; then the raw tensor bytes. The header maps
 * each tensor name to {"dtype": "F32", "shape": [...], "data_offsets":
 * [begin, end]} (offsets relative to the byte after the header) and holds
 * "__metadata__", a string-to-string map: here the model config, the
 * tokenizer reference and the optimizer step. The header is padded with
 * spaces to a multiple of 8 bytes so the tensors are aligned.
 *
 * The loader trusts nothing: every length, offset, shape and dtype is
 * checked against the file size and the config before anything is read,
 * and every failure is one line naming the file and the defect. Tensors
 * named "extra.*" are ignored (room for optimizer state); any other
 * unknown tensor is an error, as is a missing one.
 */
#include "model/model.h"
#include "model/model_ops.h"

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
#include <sys/stat.h>
#include <unistd.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "model_io.c writes tensors in host order, which must be little-endian"
#endif

#define FORMAT_NAME "rl-qwen3-v1"

void model_meta_default(model_meta *meta)
{
    memset(meta, 0, sizeof *meta);
    meta->step = -1;
}

/* ---- save ------------------------------------------------------------------- */

static int meta_int(cJSON *md, const char *key, long v)
{
    char s[32];
    snprintf(s, sizeof s, "%ld", v);
    return cJSON_AddStringToObject(md, key, s) != NULL;
}

static int meta_float(cJSON *md, const char *key, float v)
{
    char s[32];
    snprintf(s, sizeof s, "%.9g", (double)v);
    return cJSON_AddStringToObject(md, key, s) != NULL;
}

static char *header_json(const model *m, const model_meta *meta)
{
    const model_config *c = &m->cfg;
    /* the fields of the Qwen2 / Llama variants are written only when in use,
     * so a checkpoint of the default layout has the keys it always had */
    int own_head_dim = c->d_model % c->n_head != 0 || m->head_dim != c->d_model / c->n_head;
    cJSON *root = cJSON_CreateObject();
    cJSON *md = cJSON_AddObjectToObject(root, "__metadata__");
    int ok = md && cJSON_AddStringToObject(md, "format", FORMAT_NAME) &&
             meta_int(md, "vocab", c->vocab) && meta_int(md, "d_model", c->d_model) &&
             meta_int(md, "n_layer", c->n_layer) && meta_int(md, "n_head", c->n_head) &&
             meta_int(md, "n_kv_head", c->n_kv_head) && meta_int(md, "d_ff", c->d_ff) &&
             meta_int(md, "max_seq", c->max_seq) && meta_int(md, "qk_norm", c->qk_norm) &&
             (!own_head_dim || meta_int(md, "head_dim", m->head_dim)) &&
             (!c->untied || meta_int(md, "untied", 1)) &&
             (!c->qkv_bias || meta_int(md, "qkv_bias", 1)) &&
             meta_float(md, "rope_theta", c->rope_theta) &&
             meta_float(md, "norm_eps", c->norm_eps) &&
             cJSON_AddStringToObject(md, "tokenizer", meta ? meta->tokenizer : "") &&
             cJSON_AddStringToObject(md, "tokenizer_hash", meta ? meta->tokenizer_hash : "") &&
             (!meta || !meta->hf_tokenizer[0] ||
              cJSON_AddStringToObject(md, "hf_tokenizer", meta->hf_tokenizer)) &&
             (!meta || !meta->hf_tokenizer_config[0] ||
              cJSON_AddStringToObject(md, "hf_tokenizer_config", meta->hf_tokenizer_config)) &&
             (!meta || !meta->chat_template[0] ||
              cJSON_AddStringToObject(md, "chat_template", meta->chat_template)) &&
             meta_int(md, "step", meta ? meta->step : -1);
    for (int i = 0; ok && i < m->n_tensors; i++) {
        const model_tensor *t = &m->tensors[i];
        cJSON *o = cJSON_AddObjectToObject(root, t->name);
        int shape[2] = {t->shape[0], t->shape[1]};
        double offs[2] = {(double)(t->offset * 4), (double)((t->offset + t->numel) * 4)};
        ok = o && cJSON_AddStringToObject(o, "dtype", "F32") &&
             cJSON_AddItemToObject(o, "shape", cJSON_CreateIntArray(shape, t->ndim)) &&
             cJSON_AddItemToObject(o, "data_offsets", cJSON_CreateDoubleArray(offs, 2));
    }
    char *s = ok ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    return s;
}

int model_save(const model *m, const char *path, const model_meta *meta, char *err)
{
    if (m->dtype != MODEL_DTYPE_F32)
        return rl_err(err, RL_EINVAL, "%s: the model holds its weights in bf16 (inference only); "
                      "load it in f32 to save a checkpoint", path);
    char *hdr = header_json(m, meta);
    if (!hdr)
        return rl_err(err, RL_ENOMEM, "%s: out of memory building the header", path);
    size_t hlen = strlen(hdr), padded = (hlen + 7) & ~(size_t)7;
    size_t data = m->n_params * sizeof(float), total = 8 + padded + data;
    unsigned char *buf = malloc(total);
    if (!buf) {
        free(hdr);
        return rl_err(err, RL_ENOMEM, "%s: out of memory (%zu bytes)", path, total);
    }
    uint64_t h = padded;
    for (int i = 0; i < 8; i++)
        buf[i] = (unsigned char)(h >> (8 * i));
    memcpy(buf + 8, hdr, hlen);
    memset(buf + 8 + hlen, ' ', padded - hlen);
    memcpy(buf + 8 + padded, m->params, data);
    free(hdr);
    int rc = fs_write_atomic(path, buf, total, err);
    free(buf);
    return rc;
}

/* ---- load ------------------------------------------------------------------- */

static int get_meta_str(const cJSON *md, const char *key, const char **out, const char *path,
                        char *err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(md, key);
    if (!cJSON_IsString(it) || !it->valuestring)
        return rl_err(err, RL_EPARSE, "%s: __metadata__.%s missing, expected a string", path, key);
    if (strlen(it->valuestring) >= RL_MODEL_CKPT_META_STR_MAX)
        return rl_err(err, RL_ELIMIT, "%s: __metadata__.%s longer than %d bytes", path, key,
                      RL_MODEL_CKPT_META_STR_MAX);
    *out = it->valuestring;
    return 0;
}

static int get_meta_long(const cJSON *md, const char *key, long lo, long hi, long *out,
                         const char *path, char *err)
{
    const char *s;
    int rc = get_meta_str(md, key, &s, path, err);
    if (rc)
        return rc;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return rl_err(err, RL_EPARSE, "%s: __metadata__.%s is \"%s\", expected an integer %ld..%ld",
                      path, key, s, lo, hi);
    *out = v;
    return 0;
}

static int get_meta_float(const cJSON *md, const char *key, float *out, const char *path,
                          char *err)
{
    const char *s;
    int rc = get_meta_str(md, key, &s, path, err);
    if (rc)
        return rc;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v))
        return rl_err(err, RL_EPARSE, "%s: __metadata__.%s is \"%s\", expected a number", path,
                      key, s);
    *out = (float)v;
    return 0;
}

static int parse_config(model_config *c, model_meta *meta, const cJSON *root, const char *path,
                        char *err)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(root, "__metadata__");
    if (!cJSON_IsObject(md))
        return rl_err(err, RL_EPARSE, "%s: no __metadata__ object, expected the model config",
                      path);
    const char *fmt;
    int rc = get_meta_str(md, "format", &fmt, path, err);
    if (rc)
        return rc;
    if (strcmp(fmt, FORMAT_NAME) != 0)
        return rl_err(err, RL_EPARSE, "%s: format \"%s\", expected \"%s\"", path, fmt,
                      FORMAT_NAME);
    struct {
        const char *key;
        int *field;
    } ints[] = {{"vocab", &c->vocab},   {"d_model", &c->d_model},     {"n_layer", &c->n_layer},
                {"n_head", &c->n_head}, {"n_kv_head", &c->n_kv_head}, {"d_ff", &c->d_ff},
                {"max_seq", &c->max_seq}, {"qk_norm", &c->qk_norm}};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        long v;
        if ((rc = get_meta_long(md, ints[i].key, 0, 1L << 30, &v, path, err)) != 0)
            return rc;
        *ints[i].field = (int)v;
    }
    /* absent from checkpoints of the tied, bias-free layout: 0 there */
    struct {
        const char *key;
        int *field;
    } opt_ints[] = {{"head_dim", &c->head_dim}, {"untied", &c->untied}, {"qkv_bias", &c->qkv_bias}};
    for (size_t i = 0; i < sizeof opt_ints / sizeof opt_ints[0]; i++) {
        long v = 0;
        *opt_ints[i].field = 0;
        if (cJSON_GetObjectItemCaseSensitive(md, opt_ints[i].key) &&
            (rc = get_meta_long(md, opt_ints[i].key, 0, 1L << 30, &v, path, err)) != 0)
            return rc;
        *opt_ints[i].field = (int)v;
    }
    if ((rc = get_meta_float(md, "rope_theta", &c->rope_theta, path, err)) != 0 ||
        (rc = get_meta_float(md, "norm_eps", &c->norm_eps, path, err)) != 0)
        return rc;
    char cerr[RL_ERR_MAX];
    if ((rc = model_config_check(c, cerr)) != 0)
        return rl_err(err, rc, "%s: %s", path, cerr);
    if (meta) {
        const char *s;
        long step;
        model_meta_default(meta);
        if (get_meta_str(md, "tokenizer", &s, path, NULL) == 0)
            snprintf(meta->tokenizer, sizeof meta->tokenizer, "%s", s);
        if (get_meta_str(md, "tokenizer_hash", &s, path, NULL) == 0)
            snprintf(meta->tokenizer_hash, sizeof meta->tokenizer_hash, "%s", s);
        if (get_meta_long(md, "step", -1, 1L << 62, &step, path, NULL) == 0)
            meta->step = step;
        if (get_meta_str(md, "hf_tokenizer", &s, path, NULL) == 0)
            snprintf(meta->hf_tokenizer, sizeof meta->hf_tokenizer, "%s", s);
        if (get_meta_str(md, "hf_tokenizer_config", &s, path, NULL) == 0)
            snprintf(meta->hf_tokenizer_config, sizeof meta->hf_tokenizer_config, "%s", s);
        if (get_meta_str(md, "chat_template", &s, path, NULL) == 0)
            snprintf(meta->chat_template, sizeof meta->chat_template, "%s", s);
        if (!meta->tokenizer[0]) /* a checkpoint imported with its tokenizer.json speaks it */
            snprintf(meta->tokenizer, sizeof meta->tokenizer, "%s", meta->hf_tokenizer);
    }
    return 0;
}

int model_shape_matches(const model_tensor *t, const cJSON *sh)
{
    int ok = cJSON_IsArray(sh) && cJSON_GetArraySize(sh) == t->ndim;
    for (int i = 0; ok && i < t->ndim; i++) {
        const cJSON *x = cJSON_GetArrayItem(sh, i);
        ok = cJSON_IsNumber(x) && x->valuedouble == (double)t->shape[i];
    }
    return ok;
}

/* Checks one header entry against the tensor the model expects. */
static int check_entry(const cJSON *e, const model_tensor *t, uint64_t data_len, uint64_t *begin,
                       const char *path, char *err)
{
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    if (!cJSON_IsString(dt) || strcmp(dt->valuestring, "F32") != 0)
        return rl_err(err, RL_EPARSE, "%s: tensor %s has dtype %s, expected F32", path, t->name,
                      cJSON_IsString(dt) ? dt->valuestring : "(missing)");
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(e, "shape");
    if (!model_shape_matches(t, sh)) {
        char want[48];
        if (t->ndim == 2)
            snprintf(want, sizeof want, "[%d, %d]", t->shape[0], t->shape[1]);
        else
            snprintf(want, sizeof want, "[%d]", t->shape[0]);
        char *got = sh ? cJSON_PrintUnformatted(sh) : NULL;
        rl_err(err, RL_EINVAL, "%s: tensor %s has shape %.40s, expected %s for this config", path,
               t->name, got ? got : "(missing)", want);
        free(got);
        return RL_EINVAL;
    }
    const cJSON *of = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    const cJSON *b = cJSON_GetArrayItem(of, 0), *en = cJSON_GetArrayItem(of, 1);
    if (!cJSON_IsArray(of) || cJSON_GetArraySize(of) != 2 || !cJSON_IsNumber(b) ||
        !cJSON_IsNumber(en) || b->valuedouble < 0 || en->valuedouble < b->valuedouble ||
        en->valuedouble > 9e15)
        return rl_err(err, RL_EPARSE, "%s: tensor %s: data_offsets must be [begin, end] with "
                      "0 <= begin <= end", path, t->name);
    uint64_t b0 = (uint64_t)b->valuedouble, e0 = (uint64_t)en->valuedouble;
    if (e0 - b0 != t->numel * 4)
        return rl_err(err, RL_EPARSE, "%s: tensor %s spans %" PRIu64 " bytes, expected %zu", path,
                      t->name, e0 - b0, t->numel * 4);
    if (e0 > data_len)
        return rl_err(err, RL_EPARSE,
                      "%s: tensor %s ends at byte %" PRIu64 " of the data, past its end (%" PRIu64
                      " bytes): truncated file?",
                      path, t->name, e0, data_len);
    *begin = b0;
    return 0;
}


/* Reads one F32 tensor at f's position into the model: straight into
 * params, or (a bf16 matrix) through a bounded buffer, rounded. */
static int read_tensor(model *m, const model_tensor *t, FILE *f, const char *path, char *err)
{
    enum { CHUNK = 1 << 16 };
    float *dst = t->bf16 ? malloc(CHUNK * sizeof(float)) : m->params + t->offset;
    if (!dst)
        return rl_err(err, RL_ENOMEM, "%s: out of memory reading tensor %s", path, t->name);
    int rc = 0;
    for (size_t done = 0; done < t->numel && !rc;) {
        size_t n = t->bf16 ? (t->numel - done < CHUNK ? t->numel - done : CHUNK) : t->numel;
        float *buf = t->bf16 ? dst : dst + done;
        if (fread(buf, 4, n, f) != n) {
            rc = rl_err(err, RL_EIO, "%s: cannot read tensor %s", path, t->name);
            break;
        }
        for (size_t j = 0; j < n && !rc; j++)
            if (!isfinite(buf[j]))
                rc = rl_err(err, RL_EINVAL, "%s: tensor %s holds a non-finite value at %zu", path,
                            t->name, done + j);
        if (!rc && t->bf16)
            ops_bf16_from_f32(m->wbf + t->offset + done, buf, n);
        done += n;
    }
    if (t->bf16)
        free(dst);
    return rc;
}

static int read_tensors(model *m, const cJSON *root, FILE *f, uint64_t data_start,
                        uint64_t data_len, const char *path, char *err)
{
    int n_items = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, root)
    {
        if (++n_items > RL_MODEL_CKPT_TENSORS_MAX + 1)
            return rl_err(err, RL_ELIMIT, "%s: more than %d header entries", path,
                          RL_MODEL_CKPT_TENSORS_MAX);
        if (!strcmp(it->string, "__metadata__") || !strncmp(it->string, "extra.", 6))
            continue;
        int known = 0;
        for (int i = 0; i < m->n_tensors && !known; i++)
            known = !strcmp(m->tensors[i].name, it->string);
        if (!known)
            return rl_err(err, RL_EINVAL, "%s: unexpected tensor %.100s for this config", path,
                          it->string);
    }
    for (int i = 0; i < m->n_tensors; i++) {
        const model_tensor *t = &m->tensors[i];
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, t->name);
        if (!cJSON_IsObject(e))
            return rl_err(err, RL_EINVAL, "%s: tensor %s is missing", path, t->name);
        uint64_t begin = 0;
        int rc = check_entry(e, t, data_len, &begin, path, err);
        if (rc)
            return rc;
        if (fseeko(f, (off_t)(data_start + begin), SEEK_SET) != 0)
            return rl_err(err, RL_EIO, "%s: cannot read tensor %s", path, t->name);
        if ((rc = read_tensor(m, t, f, path, err)) != 0)
            return rc;
    }
    return 0;
}

/* Opens a checkpoint and parses its header: f positioned after it, *root
 * the header's JSON, *hlen its length, *size the file's. */
static int open_header(FILE **fp, cJSON **root, uint64_t *hlen_out, uint64_t *size_out,
                       const char *path, char *err)
{
    *fp = NULL;
    *root = NULL;
    FILE *f;
    int rc = fs_fopen_read(&f, path, 0, err);
    if (rc < 0)
        return rc;
    struct stat st;
    char *hdr = NULL;
    unsigned char lenb[8];
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = rl_err(err, RL_EINVAL, "%s: not a regular file", path);
        goto done;
    }
    uint64_t size = (uint64_t)st.st_size;
    if (size < 8 || fread(lenb, 1, 8, f) != 8) {
        rc = rl_err(err, RL_EPARSE, "%s: %" PRIu64 " bytes, too short for a safetensors header",
                    path, size);
        goto done;
    }
    uint64_t hlen = 0;
    for (int i = 0; i < 8; i++)
        hlen |= (uint64_t)lenb[i] << (8 * i);
    if (hlen > size - 8) {
        rc = rl_err(err, RL_EPARSE,
                    "%s: header length %" PRIu64 " runs past the end of the file (%" PRIu64
                    " bytes)",
                    path, hlen, size);
        goto done;
    }
    if (hlen > RL_MODEL_CKPT_HEADER_MAX || hlen < 2) {
        rc = rl_err(err, RL_ELIMIT, "%s: header length %" PRIu64 ", expected 2..%u", path, hlen,
                    RL_MODEL_CKPT_HEADER_MAX);
        goto done;
    }
    hdr = malloc(hlen + 1);
    if (!hdr || fread(hdr, 1, hlen, f) != hlen) {
        rc = rl_err(err, hdr ? RL_EIO : RL_ENOMEM, "%s: cannot read the header", path);
        goto done;
    }
    hdr[hlen] = 0;
    *root = cJSON_ParseWithLength(hdr, hlen);
    if (!cJSON_IsObject(*root)) {
        cJSON_Delete(*root);
        *root = NULL;
        rc = rl_err(err, RL_EPARSE, "%s: header is not a JSON object", path);
        goto done;
    }
    *hlen_out = hlen;
    *size_out = size;
done:
    free(hdr);
    if (rc)
        fclose(f);
    else
        *fp = f;
    return rc;
}

int model_load(model **out, model_meta *meta, const char *path, const model_opts *opts,
               char *err)
{
    *out = NULL;
    if (fs_is_dir(path)) {
        if (meta)
            model_read_meta(meta, path, NULL);
        return model_load_hf(out, path, opts, err);
    }
    FILE *f;
    cJSON *root;
    uint64_t hlen, size;
    int rc = open_header(&f, &root, &hlen, &size, path, err);
    if (rc)
        return rc;
    model *m = NULL;
    model_config cfg;
    if ((rc = parse_config(&cfg, meta, root, path, err)) != 0)
        goto done;
    if ((rc = model_new(&m, &cfg, opts, err)) != 0)
        goto done;
    rc = read_tensors(m, root, f, 8 + hlen, size - 8 - hlen, path, err);
done:
    if (rc) {
        model_free(m);
        m = NULL;
    }
    cJSON_Delete(root);
    fclose(f);
    *out = m;
    return rc;
}

int model_read_meta(model_meta *meta, const char *path, char *err)
{
    if (fs_is_dir(path)) {
        model_meta_default(meta);
        model_hf_tokenizer_files(meta, path);
        snprintf(meta->tokenizer, sizeof meta->tokenizer, "%s", meta->hf_tokenizer);
        return 0;
    }
    FILE *f;
    cJSON *root;
    uint64_t hlen, size;
    model_config c;
    int rc = open_header(&f, &root, &hlen, &size, path, err);
    if (rc)
        return rc;
    rc = parse_config(&c, meta, root, path, err);
    cJSON_Delete(root);
    fclose(f);
    return rc;
}

/* Copies path into dst (cap bytes) when it names a readable file that fits. */
static void set_if_file(char *dst, size_t cap, const char *path)
{
    size_t n = strlen(path);
    if (n < cap && access(path, R_OK) == 0)
        memcpy(dst, path, n + 1);
}

void model_hf_tokenizer_files(model_meta *meta, const char *dir)
{
    char path[RL_MODEL_HF_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    set_if_file(meta->hf_tokenizer, sizeof meta->hf_tokenizer, path);
    snprintf(path, sizeof path, "%s/tokenizer_config.json", dir);
    set_if_file(meta->hf_tokenizer_config, sizeof meta->hf_tokenizer_config, path);
}

int model_file_hash(char out[17], const char *path, char *err)
{
    FILE *f;
    int orc = fs_fopen_read(&f, path, 0, err);
    if (orc < 0)
        return orc;
    uint64_t h = 0xcbf29ce484222325ull;
    unsigned char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        for (size_t i = 0; i < n; i++) {
            h ^= buf[i];
            h *= 0x100000001b3ull;
        }
    int bad = ferror(f);
    fclose(f);
    if (bad)
        return rl_err(err, RL_EIO, "%s: read error", path);
    snprintf(out, 17, "%016" PRIx64, h);
    return 0;
}
