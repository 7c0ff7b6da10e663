/* sft.c - supervised fine-tuning on policy-written tokens (see sft.h). */
#include "grpo/sft.h"

#include "common/clock.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "grpo/traj.h"
#include "model/model_ops.h"
#include "protocol/tokenizer.h"

#include <cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One progress line to io's log callback (if any). */
static void say(const sft_io *io, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(const sft_io *io, int level, const char *fmt, ...)
{
    if (!io || !io->log)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    io->log(io->log_ctx, level, msg);
}

/* ---- config ---------------------------------------------------------------- */

void sft_config_default(sft_config *c)
{
    memset(c, 0, sizeof *c);
    model_config_default(&c->model);
    c->model.vocab = 0; /* the tokenizer's */
    opt_config_default(&c->opt);
    c->opt.lr = 1e-3f;
    c->opt.warmup_steps = 50;
    c->epochs = 1;
    c->batch = 8;
    c->micro_tokens = RL_SFT_MICRO_TOKENS;
    c->seed = 1;
    c->min_reward = -INFINITY;
    c->eval_max = 64;
    c->log_every = 1;
}

void sft_config_dispose(sft_config *c)
{
    for (int i = 0; i < c->n_eval_data; i++)
        free(c->eval_data[i]);
    free(c->eval_data);
    c->eval_data = NULL;
    c->n_eval_data = 0;
}

/* One numeric field: must be a number in [lo, hi] (integral if asked). */
static int num(double *out, const cJSON *f, double lo, double hi, int integral, const char *name, char *err)
{
    if (!cJSON_IsNumber(f) || !(f->valuedouble >= lo && f->valuedouble <= hi) ||
        (integral && f->valuedouble != floor(f->valuedouble)))
        return rl_err(err, RL_EINVAL, "%s: field \"%s\": expected %s in [%g, %g]", name, f->string,
                      integral ? "an integer" : "a number", lo, hi);
    *out = f->valuedouble;
    return 0;
}

static int str(char *out, size_t cap, const cJSON *f, const char *name, char *err)
{
    if (!cJSON_IsString(f) || !f->valuestring[0] || strlen(f->valuestring) >= cap)
        return rl_err(err, RL_EINVAL, "%s: field \"%s\": expected a non-empty string under %zu bytes", name,
                      f->string, cap);
    snprintf(out, cap, "%s", f->valuestring);
    return 0;
}

static int parse_model(model_config *m, const cJSON *o, const char *name, char *err)
{
    if (!cJSON_IsObject(o))
        return rl_err(err, RL_EINVAL, "%s: field \"model\": expected an object", name);
    const cJSON *f;
    cJSON_ArrayForEach(f, o)
    {
        double v = 0;
        int rc;
        const char *k = f->string;
        int *ip = !strcmp(k, "vocab")       ? &m->vocab
                  : !strcmp(k, "d_model")   ? &m->d_model
                  : !strcmp(k, "n_layer")   ? &m->n_layer
                  : !strcmp(k, "n_head")    ? &m->n_head
                  : !strcmp(k, "n_kv_head") ? &m->n_kv_head
                  : !strcmp(k, "d_ff")      ? &m->d_ff
                  : !strcmp(k, "max_seq")   ? &m->max_seq
                  : !strcmp(k, "qk_norm")   ? &m->qk_norm
                  : !strcmp(k, "head_dim")  ? &m->head_dim
                  : !strcmp(k, "untied")    ? &m->untied
                  : !strcmp(k, "qkv_bias")  ? &m->qkv_bias
                                            : NULL;
        if (ip) {
            if ((rc = num(&v, f, 0, RL_MODEL_SEQ_MAX * 4.0, 1, name, err)) < 0)
                return rc;
            *ip = (int)v;
        } else if (!strcmp(k, "rope_theta") || !strcmp(k, "norm_eps")) {
            if ((rc = num(&v, f, 1e-12, 1e12, 0, name, err)) < 0)
                return rc;
            *(!strcmp(k, "rope_theta") ? &m->rope_theta : &m->norm_eps) = (float)v;
        } else {
            return rl_err(err, RL_EINVAL, "%s: model: unknown field \"%s\" (expected model_config fields: vocab, d_model, "
                          "n_layer, n_head, n_kv_head, d_ff, max_seq, qk_norm, head_dim, untied, qkv_bias, rope_theta, "
                          "norm_eps)", name, k);
        }
    }
    return 0;
}

static int parse_eval_data(sft_config *c, const cJSON *f, const char *name, char *err)
{
    if (!cJSON_IsArray(f) || cJSON_GetArraySize(f) > RL_SFT_DATA_FILES_MAX)
        return rl_err(err, RL_EINVAL, "%s: field \"eval_data\": expected an array of at most %d file names", name,
                      RL_SFT_DATA_FILES_MAX);
    sft_config_dispose(c);
    c->eval_data = calloc((size_t)cJSON_GetArraySize(f) + 1, sizeof *c->eval_data);
    if (!c->eval_data)
        return rl_err(err, RL_ENOMEM, "%s: out of memory", name);
    const cJSON *e;
    cJSON_ArrayForEach(e, f)
    {
        if (!cJSON_IsString(e) || !e->valuestring[0])
            return rl_err(err, RL_EINVAL, "%s: field \"eval_data\": expected file names (strings)", name);
        if (!(c->eval_data[c->n_eval_data++] = strdup(e->valuestring)))
            return rl_err(err, RL_ENOMEM, "%s: out of memory", name);
    }
    return 0;
}

static int parse_field(sft_config *c, const cJSON *f, const char *name, char *err)
{
    const char *k = f->string;
    double v = 0;
    int rc = 0;
    if (!strcmp(k, "model")) {
        c->have_model = 1;
        return parse_model(&c->model, f, name, err);
    }
    if (!strcmp(k, "init"))
        return str(c->init, sizeof c->init, f, name, err);
    if (!strcmp(k, "tokenizer"))
        return str(c->tokenizer, sizeof c->tokenizer, f, name, err);
    if (!strcmp(k, "eval_data"))
        return parse_eval_data(c, f, name, err);
    if (!strcmp(k, "loss_on")) {
        char on[16];
        if ((rc = str(on, sizeof on, f, name, err)) < 0)
            return rc;
        if (strcmp(on, "policy") && strcmp(on, "all"))
            return rl_err(err, RL_EINVAL, "%s: loss_on is \"%s\": expected \"policy\" or \"all\"", name, on);
        c->loss_all = !strcmp(on, "all");
        return 0;
    }
    if (!strcmp(k, "mask_failed_calls")) {
        if (!cJSON_IsBool(f))
            return rl_err(err, RL_EINVAL, "%s: mask_failed_calls: expected true or false", name);
        c->mask_failed = cJSON_IsTrue(f);
        return 0;
    }
    if (!strcmp(k, "min_reward")) {
        if (cJSON_IsNull(f)) {
            c->min_reward = -INFINITY;
            return 0;
        }
        if ((rc = num(&v, f, -1e9, 1e9, 0, name, err)) == 0)
            c->min_reward = v;
        return rc;
    }
    /* plain numbers: name, range, integral, destination */
    static const struct {
        const char *key;
        double lo, hi;
        int integral;
    } F[] = {
        {"lr", 0, 10, 0},           {"min_lr_ratio", 0, 1, 0}, {"warmup", 0, 1e7, 1},
        {"weight_decay", 0, 10, 0}, {"beta1", 0, 0.999999, 0}, {"beta2", 0, 0.999999, 0},
        {"eps", 1e-20, 1, 0},       {"grad_clip", 0, 1e6, 0},  {"steps", 0, RL_SFT_STEPS_MAX, 1},
        {"epochs", 0, 1e6, 0},      {"batch", 1, 65536, 1},    {"seq_len", 0, RL_MODEL_SEQ_MAX, 1},
        {"micro_tokens", 1, RL_MODEL_BATCH_TOKENS_MAX, 1},     {"seed", 0, 9007199254740991.0, 1},
        {"threads", 0, RL_MODEL_THREADS_MAX, 1},               {"eval_every", 0, RL_SFT_STEPS_MAX, 1},
        {"eval_max", 0, RL_TRAJ_SAMPLES_MAX, 1},               {"save_every", 0, RL_SFT_STEPS_MAX, 1},
        {"log_every", 1, RL_SFT_STEPS_MAX, 1},                 {"stop_after", 0, RL_SFT_STEPS_MAX, 1},
    };
    size_t i = 0, nf = sizeof F / sizeof F[0];
    while (i < nf && strcmp(F[i].key, k))
        i++;
    if (i == nf)
        return rl_err(err, RL_EINVAL, "%s: unknown field \"%s\" (see grpo/sft.h for the fields)", name, k);
    if ((rc = num(&v, f, F[i].lo, F[i].hi, F[i].integral, name, err)) < 0)
        return rc;
    switch (i) {
    case 0: c->opt.lr = (float)v; break;
    case 1: c->opt.min_lr_ratio = (float)v; break;
    case 2: c->opt.warmup_steps = (long)v; break;
    case 3: c->opt.weight_decay = (float)v; break;
    case 4: c->opt.beta1 = (float)v; break;
    case 5: c->opt.beta2 = (float)v; break;
    case 6: c->opt.eps = (float)v; break;
    case 7: c->opt.grad_clip = (float)v; break;
    case 8: c->steps = (long)v; break;
    case 9: c->epochs = v; break;
    case 10: c->batch = (int)v; break;
    case 11: c->seq_len = (int)v; break;
    case 12: c->micro_tokens = (int)v; break;
    case 13: c->seed = (uint64_t)v; break;
    case 14: c->threads = (int)v; break;
    case 15: c->eval_every = (long)v; break;
    case 16: c->eval_max = (int)v; break;
    case 17: c->save_every = (long)v; break;
    case 18: c->log_every = (long)v; break;
    case 19: c->stop_after = (long)v; break;
    }
    return 0;
}

int sft_config_parse(sft_config *c, const char *json, size_t len, const char *name, char *err)
{
    cJSON *o = cJSON_ParseWithLength(json, len);
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return rl_err(err, RL_EPARSE, "%s: expected a JSON object", name);
    }
    int rc = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, o)
    {
        for (const cJSON *g = o->child; g != f; g = g->next)
            if (!strcmp(g->string, f->string)) {
                rc = rl_err(err, RL_EINVAL, "%s: field \"%s\" given twice", name, f->string);
                break;
            }
        if (rc < 0 || (rc = parse_field(c, f, name, err)) < 0)
            break;
    }
    if (rc == 0 && c->have_model && c->init[0])
        rc = rl_err(err, RL_EINVAL, "%s: give either \"model\" (a new model) or \"init\" (a checkpoint), not both", name);
    if (rc == 0 && !c->init[0] && !c->tokenizer[0])
        rc = rl_err(err, RL_EINVAL, "%s: field \"tokenizer\": required for a new model", name);
    if (rc == 0 && c->steps == 0 && !(c->epochs > 0))
        rc = rl_err(err, RL_EINVAL, "%s: expected \"steps\" > 0 or \"epochs\" > 0", name);
    cJSON_Delete(o);
    return rc;
}

int sft_config_load(sft_config *c, const char *path, char *err)
{
    char *text;
    size_t len;
    int rc = fs_read_file(&text, &len, path, RL_SFT_CONFIG_MAX, err);
    if (rc < 0)
        return rc;
    rc = sft_config_parse(c, text, len, path, err);
    free(text);
    return rc;
}

/* ---- run ------------------------------------------------------------------- */

typedef struct trainer {
    const sft_config *c;
    model *m;
    tok_t *tok;
    model_meta meta;
    adamw *opt;
    traj_set train, eval;
    int *tok_buf, *tgt_buf;
    float *logp, *dlogp;
    size_t buf_cap;
} trainer;

static void trainer_free(trainer *t)
{
    model_free(t->m);
    tok_free(t->tok);
    opt_free(t->opt);
    traj_set_dispose(&t->train);
    traj_set_dispose(&t->eval);
    free(t->tok_buf);
    free(t->tgt_buf);
    free(t->logp);
    free(t->dlogp);
}

static int open_model(trainer *t, char *err)
{
    const sft_config *c = t->c;
    model_opts mo;
    model_opts_default(&mo);
    mo.n_threads = c->threads;
    model_meta_default(&t->meta);
    int rc;
    if (c->init[0]) {
        if ((rc = model_load(&t->m, &t->meta, c->init, &mo, err)) < 0)
            return rc;
        if (c->tokenizer[0])
            snprintf(t->meta.tokenizer, sizeof t->meta.tokenizer, "%s", c->tokenizer);
        if (!t->meta.tokenizer[0])
            return rl_err(err, RL_EINVAL, "%s: the checkpoint names no tokenizer; give \"tokenizer\"", c->init);
    } else {
        snprintf(t->meta.tokenizer, sizeof t->meta.tokenizer, "%s", c->tokenizer);
    }
    if ((rc = tok_load(&t->tok, t->meta.tokenizer, err)) < 0)
        return rc;
    char hash[17];
    if ((rc = model_file_hash(hash, t->meta.tokenizer, err)) < 0)
        return rc;
    if (c->init[0] && !c->tokenizer[0] && t->meta.tokenizer_hash[0] && strcmp(hash, t->meta.tokenizer_hash))
        return rl_err(err, RL_EINVAL, "%s: tokenizer %s has changed since the checkpoint was written (hash %s, "
                      "expected %s)", c->init, t->meta.tokenizer, hash, t->meta.tokenizer_hash);
    snprintf(t->meta.tokenizer_hash, sizeof t->meta.tokenizer_hash, "%s", hash);
    if (!c->init[0]) {
        model_config mc = c->model;
        if (!mc.vocab)
            mc.vocab = tok_vocab_size(t->tok);
        if ((rc = model_config_check(&mc, err)) < 0)
            return rc;
        if ((rc = model_new(&t->m, &mc, &mo, err)) < 0)
            return rc;
        model_random_init(t->m, c->seed);
    }
    if (tok_vocab_size(t->tok) > t->m->cfg.vocab)
        return rl_err(err, RL_EINVAL, "model vocab %d is smaller than tokenizer %s (%d ids)", t->m->cfg.vocab,
                      t->meta.tokenizer, tok_vocab_size(t->tok));
    model_set_active_vocab(t->m, tok_vocab_size(t->tok)); /* padded rows get no probability */
    if (c->seq_len > t->m->cfg.max_seq)
        return rl_err(err, RL_EINVAL, "seq_len %d is past the model's context of %d tokens", c->seq_len,
                      t->m->cfg.max_seq);
    return 0;
}

static int load_data(trainer *t, traj_set *set, const char *const *files, int n, size_t max, char *err)
{
    traj_opts o;
    traj_opts_default(&o);
    o.tok = t->tok;
    o.max_len = t->c->seq_len ? (size_t)t->c->seq_len : (size_t)t->m->cfg.max_seq;
    o.min_reward = t->c->min_reward;
    o.mask_failed = t->c->mask_failed;
    for (int i = 0; i < n; i++) {
        int rc = traj_load_file(set, files[i], &o, err);
        if (rc < 0)
            return rc;
    }
    if (t->c->loss_all) /* pretraining: every token after the first is a target */
        for (size_t i = 0; i < set->n; i++) {
            traj_sample *x = &set->v[i];
            if (x->n < 2)
                continue;
            set->st.policy_tokens += x->n - 1 - x->n_policy;
            memset(x->mask + 1, 1, x->n - 1);
            x->n_policy = x->n - 1;
        }
    if (max && set->n > max) {
        /* keep an even spread over the files, the same every run */
        size_t keep = 0;
        for (size_t i = 0; i < max; i++) {
            size_t j = i * set->n / max;
            traj_sample tmp = set->v[keep];
            set->v[keep] = set->v[j];
            set->v[j] = tmp;
            keep++;
        }
        for (size_t i = keep; i < set->n; i++)
            traj_sample_dispose(&set->v[i]);
        set->n = keep;
    }
    return 0;
}

static int ensure_bufs(trainer *t, size_t n, char *err)
{
    if (n <= t->buf_cap)
        return 0;
    free(t->tok_buf), free(t->tgt_buf), free(t->logp), free(t->dlogp);
    t->tok_buf = malloc(n * sizeof(int));
    t->tgt_buf = malloc(n * sizeof(int));
    t->logp = malloc(n * sizeof(float));
    t->dlogp = malloc(n * sizeof(float));
    t->buf_cap = n;
    if (!t->tok_buf || !t->tgt_buf || !t->logp || !t->dlogp) {
        t->buf_cap = 0;
        return rl_err(err, RL_ENOMEM, "sft: out of memory for %zu tokens", n);
    }
    return 0;
}

/* Longest first; ties by index, so the order is the same every run. */
static const traj_set *g_sort_set;
static int by_len_desc(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    size_t li = g_sort_set->v[i].n, lj = g_sort_set->v[j].n;
    if (li != lj)
        return li > lj ? -1 : 1;
    return i < j ? -1 : (i > j);
}

typedef struct pass_stats {
    double loss_sum;   /* sum of -logp over target tokens */
    size_t targets;    /* target tokens */
    size_t tokens;     /* real tokens */
} pass_stats;

/* Forward (and backward with coefficient -scale per target when train)
 * over samples idx[0..n) of set, longest first, in micro-batches. */
static int run_pass(trainer *t, const traj_set *set, size_t *idx, size_t n, int train, double scale, pass_stats *ps,
                    char *err)
{
    g_sort_set = set;
    qsort(idx, n, sizeof *idx, by_len_desc);
    size_t budget = (size_t)t->c->micro_tokens;
    for (size_t i = 0; i < n;) {
        size_t T = set->v[idx[i]].n, B = 1;
        while (i + B < n && (B + 1) * T <= budget)
            B++;
        int rc = ensure_bufs(t, B * T, err);
        if (rc < 0)
            return rc;
        for (size_t b = 0; b < B; b++) {
            const traj_sample *s = &set->v[idx[i + b]];
            ps->targets += traj_sample_targets(s, t->tok_buf + b * T, t->tgt_buf + b * T, T);
            ps->tokens += s->n;
        }
        if ((rc = model_forward(t->m, t->tok_buf, t->tgt_buf, (int)B, (int)T, 1.0f, t->logp, NULL, err)) < 0)
            return rc;
        for (size_t j = 0; j < B * T; j++) {
            int on = t->tgt_buf[j] >= 0;
            ps->loss_sum -= on ? (double)t->logp[j] : 0.0;
            t->dlogp[j] = on ? (float)-scale : 0.0f;
        }
        if (train && (rc = model_backward(t->m, t->dlogp, err)) < 0)
            return rc;
        i += B;
    }
    return 0;
}

static int evaluate(trainer *t, double *loss, char *err)
{
    *loss = NAN;
    if (!t->eval.n)
        return 0;
    size_t *idx = malloc(t->eval.n * sizeof *idx);
    if (!idx)
        return rl_err(err, RL_ENOMEM, "sft: out of memory");
    for (size_t i = 0; i < t->eval.n; i++)
        idx[i] = i;
    pass_stats ps = {0};
    int rc = run_pass(t, &t->eval, idx, t->eval.n, 0, 0.0, &ps, err);
    free(idx);
    if (rc == 0 && ps.targets)
        *loss = ps.loss_sum / (double)ps.targets;
    return rc;
}

static int save(trainer *t, const char *out, long step, char *err)
{
    t->meta.step = step;
    return model_save(t->m, out, &t->meta, err);
}

static void fmt_eta(char *b, size_t n, double s)
{
    if (!(s >= 0) || s > 1e8)
        snprintf(b, n, "?");
    else if (s >= 3600)
        snprintf(b, n, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
    else
        snprintf(b, n, "%dm%02ds", (int)(s / 60), (int)s % 60);
}

static void log_metrics(const sft_io *io, long step, double loss, float lr, double gnorm, size_t tokens, size_t targets,
                        double tok_s, double elapsed, double eval_loss)
{
    if (!io || !io->metrics)
        return;
    char line[512], ev[48] = "";
    if (isfinite(eval_loss))
        snprintf(ev, sizeof ev, ", \"eval_loss\": %.6f", eval_loss);
    int n = snprintf(line, sizeof line,
                     "{\"step\": %ld, \"loss\": %.6f, \"lr\": %.6g, \"grad_norm\": %.6g, \"tokens\": %zu, "
                     "\"policy_tokens\": %zu, \"tokens_per_s\": %.1f, \"elapsed_s\": %.1f%s}",
                     step, loss, (double)lr, isfinite(gnorm) ? gnorm : -1.0, tokens, targets, tok_s, elapsed, ev);
    char err[RL_ERR_MAX];
    if (fs_append_record(io->metrics, line, (size_t)n, err) < 0)
        say(io, 1, "sft: metrics: %s", err);
}

/* The next `batch` sample indexes of the shuffled stream (reshuffled with
 * a fresh seed at every epoch boundary). */
typedef struct stream {
    size_t *perm, n, pos;
    long epoch;
    uint64_t seed;
} stream;

static void stream_shuffle(stream *s)
{
    mrng r;
    mrng_seed(&r, s->seed * 0x9e3779b97f4a7c15ull + (uint64_t)s->epoch);
    for (size_t i = 0; i < s->n; i++)
        s->perm[i] = i;
    for (size_t i = s->n; i > 1; i--) {
        size_t j = (size_t)(mrng_next(&r) % i);
        size_t tmp = s->perm[i - 1];
        s->perm[i - 1] = s->perm[j];
        s->perm[j] = tmp;
    }
}

static void stream_take(stream *s, size_t *out, size_t k)
{
    for (size_t i = 0; i < k; i++) {
        if (s->pos == s->n) {
            s->epoch++;
            s->pos = 0;
            stream_shuffle(s);
        }
        out[i] = s->perm[s->pos++];
    }
}

static void report_data(const sft_io *io, const char *what, const traj_stats *st)
{
    char skipped[256] = "", masked[96] = "";
    if (st->skipped_reward || st->skipped_empty || st->skipped_long || st->cut)
        snprintf(skipped, sizeof skipped,
                 "; skipped: %zu under min_reward, %zu without policy tokens, %zu too long (warning); %zu cut "
                 "from the left",
                 st->skipped_reward, st->skipped_empty, st->skipped_long, st->cut);
    if (st->masked_turns)
        snprintf(masked, sizeof masked, "; %zu turns with a failed tool call kept as context", st->masked_turns);
    say(io, 0, "sft: %s: %zu records -> %zu samples (%zu from recorded ids), %zu tokens, %zu policy tokens%s%s", what,
        st->records, st->samples, st->from_ids, st->tokens, st->policy_tokens, skipped, masked);
}

int sft_run(sft_result *res, const sft_config *c, const char *const *data, int n_data, const char *out,
            const sft_io *io, char *err)
{
    memset(res, 0, sizeof *res);
    res->eval_loss = NAN;
    int pf = io && io->log; /* progress lines wanted */
    trainer t = {.c = c};
    int rc = open_model(&t, err);
    if (rc == 0)
        rc = load_data(&t, &t.train, data, n_data, 0, err);
    if (rc == 0)
        rc = load_data(&t, &t.eval, (const char *const *)c->eval_data, c->n_eval_data, (size_t)c->eval_max, err);
    if (rc < 0) {
        trainer_free(&t);
        return rc;
    }
    report_data(io, "train", &t.train.st);
    if (c->n_eval_data)
        report_data(io, "eval", &t.eval.st);
    if (!t.train.n) {
        trainer_free(&t);
        return rl_err(err, RL_EINVAL, "sft: no training samples in the data (see the counts above)");
    }
    res->train_samples = t.train.n;
    res->eval_samples = t.eval.n;
    long total = c->steps ? c->steps : (long)ceil(c->epochs * (double)t.train.n / c->batch);
    if (total < 1)
        total = 1;
    if (total > RL_SFT_STEPS_MAX)
        total = RL_SFT_STEPS_MAX;
    opt_config oc = c->opt;
    oc.total_steps = total;
    /* stop_after: run the first steps of the schedule of `total` steps */
    long run_steps = c->stop_after > 0 && c->stop_after < total ? c->stop_after : total;
    opt_span *spans = calloc((size_t)t.m->n_tensors, sizeof *spans);
    if (!spans) {
        trainer_free(&t);
        return rl_err(err, RL_ENOMEM, "sft: out of memory");
    }
    for (int i = 0; i < t.m->n_tensors; i++)
        spans[i] = (opt_span){t.m->tensors[i].offset, t.m->tensors[i].numel, !t.m->tensors[i].is_norm};
    rc = opt_new(&t.opt, &oc, t.m->n_params, spans, t.m->n_tensors, err);
    free(spans);
    size_t batch = (size_t)c->batch;
    stream st = {.perm = malloc(t.train.n * sizeof(size_t)), .n = t.train.n, .seed = c->seed};
    size_t *idx = malloc(batch * sizeof *idx);
    if (rc == 0 && (!st.perm || !idx))
        rc = rl_err(err, RL_ENOMEM, "sft: out of memory");
    if (rc < 0)
        goto done;
    stream_shuffle(&st);
    if (pf)
        say(io, 0, "sft: %zu parameters, %ld steps of %zu samples (%.2f epochs), lr %g, warmup %ld -> %s",
            t.m->n_params, total, batch, (double)total * batch / t.train.n, (double)oc.lr, oc.warmup_steps, out);
    double t0 = clk_s(), train_time = 0;
    size_t tokens_done = 0, bad_in_row = 0;
    for (long step = 0; step < run_steps; step++) {
        double ts = clk_s();
        stream_take(&st, idx, batch);
        /* token mean over the step: count the targets first */
        size_t targets = 0;
        for (size_t i = 0; i < batch; i++)
            targets += t.train.v[idx[i]].n_policy; /* mask[0] is always 0 */
        if ((rc = model_zero_grad(t.m, err)) < 0)
            goto done;
        pass_stats ps = {0};
        if ((rc = run_pass(&t, &t.train, idx, batch, 1, targets ? 1.0 / (double)targets : 0.0, &ps, err)) < 0)
            goto done;
        double loss = ps.targets ? ps.loss_sum / (double)ps.targets : 0.0, gnorm;
        float lr;
        char oerr[RL_ERR_MAX];
        if (opt_step(t.opt, t.m->params, t.m->grads, &gnorm, &lr, oerr) < 0 || !isfinite(loss)) {
            res->skipped_steps++;
            if (pf)
                say(io, 1, "sft: step %ld: loss %g, gradient norm %g: not finite, update skipped", step + 1, loss,
                    gnorm);
            if (++bad_in_row >= 10) {
                rc = rl_err(err, RL_EINVAL, "sft: 10 steps in a row with a non-finite loss or gradient: stopping");
                goto done;
            }
        } else {
            bad_in_row = 0;
        }
        train_time += clk_s() - ts;
        tokens_done += ps.tokens;
        if (step == 0)
            res->first_loss = loss;
        res->last_loss = loss;
        res->steps = step + 1;
        double tok_s = train_time > 0 ? (double)tokens_done / train_time : 0.0;
        double eval_loss = NAN;
        int last = step + 1 == run_steps;
        if (t.eval.n && ((c->eval_every && (step + 1) % c->eval_every == 0) || last)) {
            if ((rc = evaluate(&t, &eval_loss, err)) < 0)
                goto done;
            res->eval_loss = eval_loss;
        }
        double elapsed = clk_s() - t0;
        log_metrics(io, step + 1, loss, lr, gnorm, ps.tokens, ps.targets, tok_s, elapsed, eval_loss);
        if (pf && ((step + 1) % c->log_every == 0 || last || isfinite(eval_loss))) {
            char eta[32], ev[48] = "";
            fmt_eta(eta, sizeof eta, elapsed / (double)(step + 1) * (double)(run_steps - step - 1));
            if (isfinite(eval_loss))
                snprintf(ev, sizeof ev, " eval %.4f", eval_loss);
            say(io, 0, "step %ld/%ld loss %.4f%s lr %.2e gnorm %.2f tok/s %.0f epoch %.2f elapsed %.0fs eta %s",
                step + 1, total, loss, ev, (double)lr, gnorm, tok_s, (double)(step + 1) * batch / t.train.n, elapsed,
                eta);
        }
        if (c->save_every && (step + 1) % c->save_every == 0 && !last && (rc = save(&t, out, step + 1, err)) < 0)
            goto done;
    }
    res->tokens_per_s = train_time > 0 ? (double)tokens_done / train_time : 0.0;
    rc = save(&t, out, res->steps, err);
    if (rc == 0 && pf)
        say(io, 0, "sft: %ld steps, loss %.4f -> %.4f%s, %.0f tokens/s, checkpoint %s", res->steps, res->first_loss,
            res->last_loss, "", res->tokens_per_s, out);
done:
    free(st.perm);
    free(idx);
    trainer_free(&t);
    return rc;
}
