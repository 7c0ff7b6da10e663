/* model_hf.c - Hugging Face checkpoint directories in and out.
 *
 * A directory holds config.json and the weights: model.safetensors, or
 * shards named by model.safetensors.index.json ("weight_map": tensor name
 * -> file name in the same directory). Three architectures map onto
 * model_config:
 *   Qwen3ForCausalLM   per-head q/k RMSNorm (qk_norm 1)
 *   Qwen2ForCausalLM   q/k/v biases (qkv_bias 1)
 *   LlamaForCausalLM   neither
 * each with head_dim, tie_word_embeddings, rope_theta and rms_norm_eps
 * from the config. Settings that change the computation in ways the model
 * does not implement (rope_scaling, a sliding window in use, o_proj or MLP
 * biases, an activation other than silu) are refused in one line.
 *
 * Weight files are memory-mapped and every tensor is checked (name, dtype,
 * shape, offsets within the file) before it is converted: BF16, F16 and
 * F32 become fp32. "lm_head.weight" of a tied model and rotary tables
 * ("*.rotary_emb.inv_freq") are ignored; any other unknown tensor, a
 * missing one or one listed twice is an error.
 */
#include "model/model.h"
#include "model/model_ops.h"

#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "model_hf.c reads tensors in host order, which must be little-endian"
#endif

static const char *const ARCH_NAMES[] = {"Qwen3ForCausalLM", "Qwen2ForCausalLM", "LlamaForCausalLM"};
static const char *const ARCH_TYPES[] = {"qwen3", "qwen2", "llama"};
enum { ARCH_QWEN3, ARCH_QWEN2, ARCH_LLAMA };

/* ---- dtypes ----------------------------------------------------------------- */

static float bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint16_t f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even (values are finite) */
    return (uint16_t)(u >> 16);
}

static float f16_to_f32(uint16_t h)
{
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    float v;
    if (e == 0)
        v = ldexpf((float)m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexpf((float)(m | 1024), e - 25);
    return s ? -v : v;
}

/* ---- config.json ------------------------------------------------------------ */

static int cfg_int(const cJSON *o, const char *key, int def, long lo, long hi, int *out,
                   const char *path, char *err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!it || cJSON_IsNull(it)) {
        if (def < 0)
            return rl_err(err, RL_EPARSE, "%s: \"%s\" missing, expected an integer", path, key);
        *out = def;
        return 0;
    }
    if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) || it->valuedouble < lo ||
        it->valuedouble > hi)
        return rl_err(err, RL_EPARSE, "%s: \"%s\" expected an integer %ld..%ld", path, key, lo, hi);
    *out = (int)it->valuedouble;
    return 0;
}

static int cfg_bool(const cJSON *o, const char *key, int *out, const char *path, char *err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    *out = 0;
    if (!it || cJSON_IsNull(it))
        return 0;
    if (!cJSON_IsBool(it))
        return rl_err(err, RL_EPARSE, "%s: \"%s\" expected true or false", path, key);
    *out = cJSON_IsTrue(it);
    return 0;
}

static int cfg_num(const cJSON *o, const char *key, double def, double *out, const char *path,
                   char *err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!it || cJSON_IsNull(it)) {
        *out = def;
        return 0;
    }
    if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble))
        return rl_err(err, RL_EPARSE, "%s: \"%s\" expected a number", path, key);
    *out = it->valuedouble;
    return 0;
}

/* Refuses a setting whose value changes the computation: present and
 * neither null nor false. */
static int cfg_refuse(const cJSON *o, const char *key, const char *why, const char *path, char *err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (it && !cJSON_IsNull(it) && !cJSON_IsFalse(it))
        return rl_err(err, RL_EINVAL, "%s: \"%s\" is set; %s", path, key, why);
    return 0;
}

static int parse_hf_config(model_config *c, int *arch, const cJSON *o, const char *path, char *err)
{
    const cJSON *archs = cJSON_GetObjectItemCaseSensitive(o, "architectures");
    const cJSON *a0 = cJSON_GetArrayItem(archs, 0);
    if (!cJSON_IsArray(archs) || cJSON_GetArraySize(archs) != 1 || !cJSON_IsString(a0))
        return rl_err(err, RL_EPARSE, "%s: \"architectures\" expected one name", path);
    *arch = -1;
    for (int i = 0; i < 3; i++)
        if (!strcmp(a0->valuestring, ARCH_NAMES[i]))
            *arch = i;
    if (*arch < 0)
        return rl_err(err, RL_EINVAL,
                      "%s: architecture %.64s, expected Qwen3ForCausalLM, Qwen2ForCausalLM or "
                      "LlamaForCausalLM",
                      path, a0->valuestring);
    int rc, tie = 0, sliding = 0, attn_bias = 0, mlp_bias = 0;
    const cJSON *act = cJSON_GetObjectItemCaseSensitive(o, "hidden_act");
    if (act && (!cJSON_IsString(act) || strcmp(act->valuestring, "silu") != 0))
        return rl_err(err, RL_EINVAL, "%s: \"hidden_act\" expected \"silu\"", path);
    if ((rc = cfg_refuse(o, "rope_scaling", "only plain rotary embeddings are supported", path, err)) ||
        (rc = cfg_bool(o, "use_sliding_window", &sliding, path, err)) ||
        (rc = cfg_bool(o, "attention_bias", &attn_bias, path, err)) ||
        (rc = cfg_bool(o, "mlp_bias", &mlp_bias, path, err)) ||
        (rc = cfg_bool(o, "tie_word_embeddings", &tie, path, err)))
        return rc;
    if (sliding)
        return rl_err(err, RL_EINVAL, "%s: \"use_sliding_window\" is true; only full attention is supported", path);
    if (attn_bias || mlp_bias)
        return rl_err(err, RL_EINVAL, "%s: \"%s\" is true; only Qwen2's q/k/v biases are supported", path,
                      attn_bias ? "attention_bias" : "mlp_bias");
    const cJSON *lt = cJSON_GetObjectItemCaseSensitive(o, "layer_types"), *t;
    cJSON_ArrayForEach(t, lt)
    {
        if (!cJSON_IsString(t) || strcmp(t->valuestring, "full_attention") != 0)
            return rl_err(err, RL_EINVAL, "%s: \"layer_types\" expected only \"full_attention\"", path);
    }
    double theta, eps;
    const cJSON *rp = cJSON_GetObjectItemCaseSensitive(o, "rope_parameters");
    const cJSON *theta_from = o;
    if (rp && !cJSON_IsNull(rp)) {
        const cJSON *rt = cJSON_GetObjectItemCaseSensitive(rp, "rope_type");
        if (!cJSON_IsObject(rp) || (rt && (!cJSON_IsString(rt) || strcmp(rt->valuestring, "default") != 0)))
            return rl_err(err, RL_EINVAL, "%s: \"rope_parameters\" expected rope_type \"default\"", path);
        theta_from = rp;
    }
    memset(c, 0, sizeof *c);
    int max_pos;
    if ((rc = cfg_int(o, "vocab_size", -1, 2, RL_MODEL_VOCAB_MAX, &c->vocab, path, err)) ||
        (rc = cfg_int(o, "hidden_size", -1, 2, RL_MODEL_DIM_MAX, &c->d_model, path, err)) ||
        (rc = cfg_int(o, "num_hidden_layers", -1, 1, RL_MODEL_LAYERS_MAX, &c->n_layer, path, err)) ||
        (rc = cfg_int(o, "num_attention_heads", -1, 1, RL_MODEL_HEADS_MAX, &c->n_head, path, err)) ||
        (rc = cfg_int(o, "num_key_value_heads", c->n_head, 1, RL_MODEL_HEADS_MAX, &c->n_kv_head, path, err)) ||
        (rc = cfg_int(o, "intermediate_size", -1, 1, RL_MODEL_DIM_MAX, &c->d_ff, path, err)) ||
        (rc = cfg_int(o, "max_position_embeddings", 4096, 1, 1L << 30, &max_pos, path, err)) ||
        (rc = cfg_int(o, "head_dim", 0, 0, RL_MODEL_DIM_MAX, &c->head_dim, path, err)) ||
        (rc = cfg_num(theta_from, "rope_theta", 10000.0, &theta, path, err)) ||
        (rc = cfg_num(o, "rms_norm_eps", 1e-6, &eps, path, err)))
        return rc;
    c->max_seq = max_pos < RL_MODEL_SEQ_MAX ? max_pos : RL_MODEL_SEQ_MAX;
    c->rope_theta = (float)theta;
    c->norm_eps = (float)eps;
    c->untied = !tie;
    c->qk_norm = *arch == ARCH_QWEN3;
    c->qkv_bias = *arch == ARCH_QWEN2;
    if (c->head_dim == c->d_model / c->n_head && c->d_model % c->n_head == 0)
        c->head_dim = 0;
    char cerr[RL_ERR_MAX];
    if ((rc = model_config_check(c, cerr)) != 0)
        return rl_err(err, rc, "%s: %s", path, cerr);
    return 0;
}

static int read_json(cJSON **out, const char *path, char *err)
{
    char *text;
    size_t len;
    int rc = fs_read_file(&text, &len, path, RL_MODEL_HF_JSON_MAX, err);
    if (rc < 0)
        return rc;
    *out = cJSON_ParseWithLength(text, len);
    free(text);
    if (!cJSON_IsObject(*out)) {
        cJSON_Delete(*out);
        *out = NULL;
        return rl_err(err, RL_EPARSE, "%s: not a JSON object", path);
    }
    return 0;
}

/* ---- weights ------------------------------------------------------------------ */

static int dtype_size(const char *dt)
{
    if (!strcmp(dt, "F32"))
        return 4;
    if (!strcmp(dt, "BF16") || !strcmp(dt, "F16"))
        return 2;
    return 0;
}

static int ignorable(const model *m, const char *name)
{
    size_t n = strlen(name), k = strlen("rotary_emb.inv_freq");
    return (!m->cfg.untied && !strcmp(name, "lm_head.weight")) ||
           (n >= k && !strcmp(name + n - k, "rotary_emb.inv_freq"));
}

/* Converts one header entry's tensor into the model. */
static int load_entry(model *m, char *filled, const cJSON *e, const char *name, const unsigned char *data,
                      uint64_t data_len, const char *path, char *err)
{
    int idx = -1;
    for (int i = 0; i < m->n_tensors && idx < 0; i++)
        if (!strcmp(m->tensors[i].name, name))
            idx = i;
    if (idx < 0) {
        if (ignorable(m, name))
            return 0;
        return rl_err(err, RL_EINVAL, "%s: unexpected tensor %.100s for this config", path, name);
    }
    const model_tensor *t = &m->tensors[idx];
    if (filled[idx])
        return rl_err(err, RL_EINVAL, "%s: tensor %s given twice", path, name);
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    int es = cJSON_IsString(dt) ? dtype_size(dt->valuestring) : 0;
    if (!es)
        return rl_err(err, RL_EINVAL, "%s: tensor %s has dtype %.16s, expected BF16, F16 or F32", path, name,
                      cJSON_IsString(dt) ? dt->valuestring : "(missing)");
    if (!model_shape_matches(t, cJSON_GetObjectItemCaseSensitive(e, "shape")))
        return rl_err(err, RL_EINVAL, "%s: tensor %s: shape expected [%d%s%.0d] for this config", path, name,
                      t->shape[0], t->ndim == 2 ? ", " : "", t->ndim == 2 ? t->shape[1] : 0);
    const cJSON *of = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    const cJSON *b = cJSON_GetArrayItem(of, 0), *en = cJSON_GetArrayItem(of, 1);
    if (!cJSON_IsArray(of) || cJSON_GetArraySize(of) != 2 || !cJSON_IsNumber(b) || !cJSON_IsNumber(en) ||
        b->valuedouble < 0 || en->valuedouble < b->valuedouble || en->valuedouble > (double)data_len)
        return rl_err(err, RL_EPARSE, "%s: tensor %s: data_offsets expected [begin, end] within the %" PRIu64
                      " data bytes", path, name, data_len);
    uint64_t b0 = (uint64_t)b->valuedouble, e0 = (uint64_t)en->valuedouble;
    if (e0 - b0 != (uint64_t)t->numel * (uint64_t)es)
        return rl_err(err, RL_EPARSE, "%s: tensor %s spans %" PRIu64 " bytes, expected %zu", path, name, e0 - b0,
                      t->numel * (size_t)es);
    const unsigned char *src = data + b0;
    float *dst = t->bf16 ? NULL : m->params + t->offset;
    uint16_t *dst16 = t->bf16 ? m->wbf + t->offset : NULL;
    for (size_t j = 0; j < t->numel; j++) {
        uint16_t h;
        float v;
        if (es == 4) {
            memcpy(&v, src + 4 * j, 4);
        } else {
            memcpy(&h, src + 2 * j, 2);
            v = dt->valuestring[0] == 'B' ? bf16_to_f32(h) : f16_to_f32(h);
        }
        if (!isfinite(v))
            return rl_err(err, RL_EINVAL, "%s: tensor %s holds a non-finite value at %zu", path, name, j);
        if (dst16)
            ops_bf16_from_f32(&dst16[j], &v, 1); /* exact for a BF16 source */
        else
            dst[j] = v;
    }
    /* done with the tensor's pages of the file: out of the resident set
     * (the mapping is private and read-only, a later read maps them again) */
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), a0 = (uintptr_t)src & ~(page - 1);
    madvise((void *)a0, (uintptr_t)(src + (e0 - b0)) - a0, MADV_DONTNEED);
    filled[idx] = 1;
    return 0;
}

/* Maps one safetensors file and loads every tensor it holds. */
static int load_file(model *m, char *filled, const char *path, char *err)
{
    struct stat st;
    int fd = fs_open_regular(path, 0, &st, err);
    if (fd < 0)
        return fd;
    uint64_t size = (uint64_t)st.st_size;
    if (size < 8) {
        close(fd);
        return rl_err(err, RL_EPARSE, "%s: %" PRIu64 " bytes, too short for a safetensors header", path, size);
    }
    unsigned char *map = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return rl_err(err, rl_from_errno(errno), "%s: cannot map: %s", path, strerror(errno));
    uint64_t hlen = 0;
    for (int i = 0; i < 8; i++)
        hlen |= (uint64_t)map[i] << (8 * i);
    int rc = 0;
    cJSON *root = NULL;
    if (hlen > size - 8 || hlen < 2 || hlen > RL_MODEL_CKPT_HEADER_MAX) {
        rc = rl_err(err, RL_EPARSE, "%s: header length %" PRIu64 ", expected 2..%u within the file", path, hlen,
                    RL_MODEL_CKPT_HEADER_MAX);
        goto done;
    }
    root = cJSON_ParseWithLength((const char *)map + 8, (size_t)hlen);
    if (!cJSON_IsObject(root)) {
        rc = rl_err(err, RL_EPARSE, "%s: header is not a JSON object", path);
        goto done;
    }
    if (cJSON_GetArraySize(root) > RL_MODEL_CKPT_TENSORS_MAX + 1) {
        rc = rl_err(err, RL_ELIMIT, "%s: more than %d header entries", path, RL_MODEL_CKPT_TENSORS_MAX);
        goto done;
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, root)
    {
        if (!strcmp(it->string, "__metadata__"))
            continue;
        if ((rc = load_entry(m, filled, it, it->string, map + 8 + hlen, size - 8 - hlen, path, err)) != 0)
            break;
    }
done:
    cJSON_Delete(root);
    munmap(map, (size_t)size);
    return rc;
}

/* A shard name from the index: a plain file name in the directory. */
static int shard_name_ok(const char *s)
{
    return s[0] && s[0] != '.' && !strchr(s, '/') && strlen(s) < 256;
}

static int load_weights(model *m, const char *dir, char *err)
{
    char path[RL_MODEL_HF_PATH_MAX + 300];
    char *filled = calloc((size_t)m->n_tensors, 1);
    if (!filled)
        return rl_err(err, RL_ENOMEM, "%s: out of memory", dir);
    int rc = 0;
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    if (access(path, F_OK) == 0) {
        rc = load_file(m, filled, path, err);
    } else {
        snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
        cJSON *idx = NULL;
        if (access(path, F_OK) != 0)
            rc = rl_err(err, RL_ENOENT, "%s: neither model.safetensors nor model.safetensors.index.json", dir);
        else
            rc = read_json(&idx, path, err);
        const cJSON *wm = cJSON_GetObjectItemCaseSensitive(idx, "weight_map"), *e;
        if (!rc && !cJSON_IsObject(wm))
            rc = rl_err(err, RL_EPARSE, "%s: \"weight_map\" expected an object", path);
        /* each distinct file once, in the order first named */
        int n_files = 0;
        const cJSON *walk = rc ? NULL : wm;
        cJSON_ArrayForEach(e, walk)
        {
            if (!cJSON_IsString(e) || !shard_name_ok(e->valuestring)) {
                rc = rl_err(err, RL_EPARSE, "%s: weight_map[%.100s] expected a file name in the directory", path,
                            e->string);
                break;
            }
            int seen = 0;
            for (const cJSON *p = wm->child; p != e && !seen; p = p->next)
                seen = !strcmp(p->valuestring, e->valuestring);
            if (seen)
                continue;
            if (++n_files > RL_MODEL_HF_SHARDS_MAX) {
                rc = rl_err(err, RL_ELIMIT, "%s: more than %d weight files", path, RL_MODEL_HF_SHARDS_MAX);
                break;
            }
            char shard[RL_MODEL_HF_PATH_MAX + 300];
            snprintf(shard, sizeof shard, "%s/%s", dir, e->valuestring);
            if ((rc = load_file(m, filled, shard, err)) != 0)
                break;
        }
        cJSON_Delete(idx);
    }
    for (int i = 0; !rc && i < m->n_tensors; i++)
        if (!filled[i])
            rc = rl_err(err, RL_EINVAL, "%s: tensor %s is missing", dir, m->tensors[i].name);
    free(filled);
    return rc;
}

int model_load_hf(model **out, const char *dir, const model_opts *opts, char *err)
{
    *out = NULL;
    if (strlen(dir) >= RL_MODEL_HF_PATH_MAX)
        return rl_err(err, RL_ELIMIT, "%.64s...: directory path longer than %d bytes", dir, RL_MODEL_HF_PATH_MAX);
    char path[RL_MODEL_HF_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/config.json", dir);
    cJSON *cj;
    int rc = read_json(&cj, path, err);
    if (rc < 0)
        return rc;
    model_config cfg;
    int arch;
    rc = parse_hf_config(&cfg, &arch, cj, path, err);
    cJSON_Delete(cj);
    if (rc)
        return rc;
    model *m;
    if ((rc = model_new(&m, &cfg, opts, err)) != 0)
        return rc;
    if ((rc = load_weights(m, dir, err)) != 0) {
        model_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

/* ---- export ------------------------------------------------------------------- */

int model_hf_arch(const model_config *c, const char **name, char *err)
{
    if (c->qk_norm && !c->qkv_bias)
        *name = ARCH_NAMES[ARCH_QWEN3];
    else if (!c->qk_norm && c->qkv_bias)
        *name = ARCH_NAMES[ARCH_QWEN2];
    else if (!c->qk_norm && !c->qkv_bias)
        *name = ARCH_NAMES[ARCH_LLAMA];
    else
        return rl_err(err, RL_EINVAL,
                      "model config: q/k norm together with q/k/v biases has no Hugging Face architecture");
    return 0;
}

static char *config_json(const model *m, int arch, int bf16)
{
    const model_config *c = &m->cfg;
    cJSON *o = cJSON_CreateObject();
    cJSON *a = cJSON_AddArrayToObject(o, "architectures");
    cJSON_AddItemToArray(a, cJSON_CreateString(ARCH_NAMES[arch]));
    cJSON_AddStringToObject(o, "model_type", ARCH_TYPES[arch]);
    cJSON_AddNumberToObject(o, "vocab_size", c->vocab);
    cJSON_AddNumberToObject(o, "hidden_size", c->d_model);
    cJSON_AddNumberToObject(o, "num_hidden_layers", c->n_layer);
    cJSON_AddNumberToObject(o, "num_attention_heads", c->n_head);
    cJSON_AddNumberToObject(o, "num_key_value_heads", c->n_kv_head);
    cJSON_AddNumberToObject(o, "head_dim", m->head_dim);
    cJSON_AddNumberToObject(o, "intermediate_size", c->d_ff);
    cJSON_AddNumberToObject(o, "max_position_embeddings", c->max_seq);
    cJSON_AddNumberToObject(o, "rope_theta", (double)c->rope_theta);
    cJSON_AddNullToObject(o, "rope_scaling");
    cJSON_AddNumberToObject(o, "rms_norm_eps", (double)c->norm_eps);
    cJSON_AddStringToObject(o, "hidden_act", "silu");
    cJSON_AddBoolToObject(o, "tie_word_embeddings", !c->untied);
    if (arch != ARCH_QWEN2)
        cJSON_AddBoolToObject(o, "attention_bias", 0);
    if (arch == ARCH_LLAMA)
        cJSON_AddBoolToObject(o, "mlp_bias", 0);
    else
        cJSON_AddBoolToObject(o, "use_sliding_window", 0);
    cJSON_AddStringToObject(o, "torch_dtype", bf16 ? "bfloat16" : "float32");
    char *s = cJSON_Print(o);
    cJSON_Delete(o);
    return s;
}

int model_save_hf(const model *m, const char *dir, int bf16, char *err)
{
    if (m->dtype != MODEL_DTYPE_F32)
        return rl_err(err, RL_EINVAL, "%s: the model holds its weights in bf16 (inference only); "
                      "load it in f32 to export it", dir);
    const char *arch_name;
    int rc = model_hf_arch(&m->cfg, &arch_name, err);
    if (rc)
        return rc;
    int arch = 0;
    while (strcmp(ARCH_NAMES[arch], arch_name) != 0)
        arch++;
    if (strlen(dir) >= RL_MODEL_HF_PATH_MAX)
        return rl_err(err, RL_ELIMIT, "%.64s...: directory path longer than %d bytes", dir, RL_MODEL_HF_PATH_MAX);
    if ((rc = fs_mkdirs(dir, err)) < 0)
        return rc;
    char path[RL_MODEL_HF_PATH_MAX + 32];
    char *cfg = config_json(m, arch, bf16);
    if (!cfg)
        return rl_err(err, RL_ENOMEM, "%s: out of memory building config.json", dir);
    snprintf(path, sizeof path, "%s/config.json", dir);
    rc = fs_write_atomic(path, cfg, strlen(cfg), err);
    free(cfg);
    if (rc < 0)
        return rc;

    size_t es = bf16 ? 2 : 4;
    cJSON *root = cJSON_CreateObject();
    cJSON *md = cJSON_AddObjectToObject(root, "__metadata__");
    int ok = md && cJSON_AddStringToObject(md, "format", "pt");
    size_t off = 0;
    for (int i = 0; ok && i < m->n_tensors; i++) {
        const model_tensor *t = &m->tensors[i];
        cJSON *e = cJSON_AddObjectToObject(root, t->name);
        int shape[2] = {t->shape[0], t->shape[1]};
        double offs[2] = {(double)off, (double)(off + t->numel * es)};
        off += t->numel * es;
        ok = e && cJSON_AddStringToObject(e, "dtype", bf16 ? "BF16" : "F32") &&
             cJSON_AddItemToObject(e, "shape", cJSON_CreateIntArray(shape, t->ndim)) &&
             cJSON_AddItemToObject(e, "data_offsets", cJSON_CreateDoubleArray(offs, 2));
    }
    char *hdr = ok ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    if (!hdr)
        return rl_err(err, RL_ENOMEM, "%s: out of memory building the safetensors header", dir);
    size_t hlen = strlen(hdr), padded = (hlen + 7) & ~(size_t)7, total = 8 + padded + off;
    unsigned char *buf = malloc(total);
    if (!buf) {
        free(hdr);
        return rl_err(err, RL_ENOMEM, "%s: out of memory (%zu bytes)", dir, total);
    }
    for (int i = 0; i < 8; i++)
        buf[i] = (unsigned char)((uint64_t)padded >> (8 * i));
    memcpy(buf + 8, hdr, hlen);
    memset(buf + 8 + hlen, ' ', padded - hlen);
    free(hdr);
    unsigned char *p = buf + 8 + padded;
    for (int i = 0; i < m->n_tensors; i++) {
        const model_tensor *t = &m->tensors[i];
        const float *src = m->params + t->offset;
        if (!bf16) {
            memcpy(p, src, t->numel * 4);
        } else {
            for (size_t j = 0; j < t->numel; j++) {
                uint16_t h = f32_to_bf16(src[j]);
                memcpy(p + 2 * j, &h, 2);
            }
        }
        p += t->numel * es;
    }
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    rc = fs_write_atomic(path, buf, total, err);
    free(buf);
    return rc;
}
