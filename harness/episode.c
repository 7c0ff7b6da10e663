/* episode.c - the episode loop: context, policy, tool calls, reward.
 *
 * State machine: ep_new resets the work tree and builds the opening
 * messages; ep_request renders the context for the next turn (and checks
 * the history invariant); ep_feed parses the policy's reply, runs its tool
 * calls and appends the observations; ep_finish scores the work tree and
 * writes the record. Everything the policy saw and wrote is kept so the
 * record can rebuild every context exactly (docs/trajectory-schema.md).
 */
#include "harness/episode.h"

#include "common/buf.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "common/rng.h"
#include "common/utf8.h"
#include "common/vec.h"
#include "model/model.h"
#include "protocol/chat.h"
#include "protocol/template.h"
#include "harness/integrity.h"
#include "harness/record.h"
#include "harness/testrun.h"
#include "protocol/toolcall.h"
#include "harness/tools.h"
#include "harness/workspace.h"
#include "protocol/tokenizer.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- config ------------------------------------------------------------ */

void ep_shaping_default(ep_shaping *s)
{
    s->on = 0;
    s->pass = 2.0;
    s->fail = -1.0;
    s->tool_ok = 0.5;
    s->well_formed = 0.1;
    s->identical = -1.0;
    s->over_turn = -0.2;
    s->turn_limit = 10;
}

int ep_shaping_load(ep_shaping *s, const char *path, char *err)
{
    char *text;
    int rc = fs_read_file(&text, NULL, path, 1 << 20, err);
    if (rc < 0)
        return rc;
    cJSON *o = cJSON_Parse(text);
    free(text);
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return rl_err(err, RL_EPARSE, "%s: expected a JSON object", path);
    }
    ep_shaping_default(s);
    static const char *keys[] = {"shaped", "pass", "fail", "tool_ok", "well_formed", "identical",
                                 "over_turn", "turn_limit", NULL};
    double *dst[] = {NULL, &s->pass, &s->fail, &s->tool_ok, &s->well_formed, &s->identical, &s->over_turn, NULL};
    const cJSON *f;
    rc = 0;
    cJSON_ArrayForEach(f, o)
    {
        int k = 0;
        while (keys[k] && strcmp(keys[k], f->string))
            k++;
        if (!keys[k]) {
            rc = rl_err(err, RL_EINVAL, "%s: unknown field \"%s\"", path, f->string);
            break;
        }
        if (k == 0) {
            if (!cJSON_IsBool(f)) {
                rc = rl_err(err, RL_EINVAL, "%s: field \"shaped\": expected true or false", path);
                break;
            }
            s->on = cJSON_IsTrue(f);
        } else if (!cJSON_IsNumber(f)) {
            rc = rl_err(err, RL_EINVAL, "%s: field \"%s\": expected a number", path, f->string);
            break;
        } else if (dst[k]) {
            *dst[k] = f->valuedouble;
        } else {
            s->turn_limit = f->valueint;
        }
    }
    cJSON_Delete(o);
    return rc;
}

void ep_config_default(ep_config *c)
{
    memset(c, 0, sizeof *c);
    c->policy = "oracle";
    c->prompt = "v2";
    c->prompts_dir = "prompts";
    c->think = 1;
    c->edit_hints = 1;
    c->history_keep = 1;
    c->chat_template = -1;
    c->max_turns = RL_EP_DEFAULT_TURNS;
    c->max_context_tokens = 0;
    c->max_wall_s = RL_EP_DEFAULT_WALL_S;
    c->max_reply_tokens = RL_EP_REPLY_TOKENS;
    c->seed = 1;
    c->temperature = 0.7;
    c->top_p = 1.0;
    c->obs_budget = RL_EP_OBS_BUDGET;
    c->file_tool_timeout_ms = RL_EP_FILE_TOOL_MS;
    ep_shaping_default(&c->shaping);
}

void ep_config_pol_env(pol_env *env, const ep_config *c)
{
    pol_env_default(env);
    env->seed = c->seed;
    env->temperature = c->temperature;
    env->top_p = c->top_p;
    env->base_url = c->openai.base_url;
    env->model = c->openai.model;
    env->api = c->openai.api;
    env->api_key_env = c->openai.api_key_env;
    env->tokenizer = c->openai.tokenizer;
    env->max_inflight = c->openai.max_inflight;
    env->timeout_ms = c->openai.timeout_ms;
    env->retries = c->openai.retries;
}

int ep_config_is_openai(const ep_config *c) { return c->policy && !strcmp(c->policy, "openai"); }

/* The template named by the "chat_template" string of the JSON file at path:
 * a template name (state.json of a GRPO run) or, jinja set, a Jinja
 * template text (tokenizer_config.json). 0 and *kind set; 1 when the file
 * or the field is not there, or the text is no template of
 * protocol/template.h; RL_EINVAL when a name is unknown. */
static int template_of_file(int *kind, const char *path, int jinja, char *err)
{
    char *text = NULL;
    size_t len;
    if (fs_read_file(&text, &len, path, jinja ? RL_MODEL_HF_TOKENIZER_MAX : RL_GRPO_STATE_MAX, NULL) < 0)
        return 1;
    cJSON *st = cJSON_ParseWithLength(text, len);
    free(text);
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(st, "chat_template"));
    int rc = 1;
    if (name && jinja) {
        *kind = tpl_kind_of_jinja(name, strlen(name));
        rc = *kind < 0;
    } else if (name) {
        tpl_kind k;
        char e[RL_ERR_MAX];
        rc = tpl_kind_parse(&k, name, e) < 0 ? rl_err(err, RL_EINVAL, "%s: chat_template: %s", path, e) : 0;
        *kind = (int)k;
    }
    cJSON_Delete(st);
    return rc;
}

int ep_template_of_ckpt(const char *ckpt, char *err)
{
    const char *slash = strrchr(ckpt, '/');
    char path[4096];
    if (fs_is_dir(ckpt))
        snprintf(path, sizeof path, "%s/state.json", ckpt);
    else
        snprintf(path, sizeof path, "%.*s%sstate.json", slash ? (int)(slash - ckpt + 1) : 0, ckpt,
                 slash ? "" : "./");
    int k, rc = template_of_file(&k, path, 0, err);
    if (rc <= 0)
        return rc < 0 ? rc : k;
    model_meta meta;
    if (model_read_meta(&meta, ckpt, NULL) < 0)
        return TPL_QWEN3_XML;
    if (meta.chat_template[0]) {
        tpl_kind kind;
        char e[RL_ERR_MAX];
        if (tpl_kind_parse(&kind, meta.chat_template, e) < 0)
            return rl_err(err, RL_EINVAL, "%s: chat_template: %s", ckpt, e);
        return (int)kind;
    }
    if (meta.hf_tokenizer_config[0] && template_of_file(&k, meta.hf_tokenizer_config, 1, NULL) == 0)
        return k;
    return TPL_QWEN3_XML;
}

int ep_config_template(const ep_config *c, char *err)
{
    if (c->chat_template >= 0)
        return c->chat_template;
    if (!c->policy || strncmp(c->policy, "model:", 6) || !c->policy[6])
        return TPL_QWEN3_XML;
    return ep_template_of_ckpt(c->policy + 6, err);
}

int ep_config_turn_cap(const ep_config *c)
{
    if (!(c->tail_share > 0) || c->tail_min_turns < 1 || c->tail_max_turns < c->tail_min_turns)
        return c->max_turns;
    /* one draw picks whether the episode is in the tail (its top 53 bits
     * against the share), the next its cap; the constant keeps these draws
     * apart from the policy's own use of the seed */
    uint64_t st = c->seed ^ 0x7475726e2d636170ull;
    double u = (double)(rl_splitmix64(&st) >> 11) * 0x1.0p-53;
    if (u >= c->tail_share)
        return c->max_turns;
    uint64_t span = (uint64_t)(c->tail_max_turns - c->tail_min_turns) + 1;
    return c->tail_min_turns + (int)(rl_splitmix64(&st) % span);
}

static uint64_t fnv(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (h ^ 0xff) * 1099511628211ULL;
}

static void config_json(cJSON *o, const ep_config *c, int with_seed)
{
    cJSON_AddStringToObject(o, "policy", c->policy ? c->policy : "");
    if (ep_config_is_openai(c)) {
        cJSON *oa = cJSON_AddObjectToObject(o, "openai");
        cJSON_AddStringToObject(oa, "base_url", c->openai.base_url ? c->openai.base_url : "");
        cJSON_AddStringToObject(oa, "model", c->openai.model ? c->openai.model : "");
        cJSON_AddStringToObject(oa, "api", c->openai.api ? c->openai.api : "chat");
    }
    cJSON_AddStringToObject(o, "prompt", c->prompt ? c->prompt : "");
    cJSON_AddStringToObject(o, "think", c->think ? "on" : "off");
    cJSON_AddStringToObject(o, "history", c->history_keep ? "keep" : "drop");
    /* the default stays out of the digest, so keys of earlier runs hold */
    int kind = ep_config_template(c, NULL);
    if (with_seed || kind != TPL_QWEN3_XML)
        cJSON_AddStringToObject(o, "template", kind < 0 ? "?" : tpl_kind_name((tpl_kind)kind));
    if (c->max_turns)
        cJSON_AddNumberToObject(o, "max_turns", c->max_turns);
    else
        cJSON_AddStringToObject(o, "max_turns", "unlimited");
    if (c->tail_share > 0) { /* absent: every episode's cap is max_turns */
        cJSON *tl = cJSON_AddObjectToObject(o, "turns_tail");
        cJSON_AddNumberToObject(tl, "share", c->tail_share);
        cJSON_AddNumberToObject(tl, "min_turns", c->tail_min_turns);
        cJSON_AddNumberToObject(tl, "max_turns", c->tail_max_turns);
        if (with_seed) /* this episode's draw; the digest stays the config's */
            cJSON_AddNumberToObject(tl, "cap", ep_config_turn_cap(c));
    }
    cJSON_AddNumberToObject(o, "max_context_tokens", c->max_context_tokens);
    cJSON_AddNumberToObject(o, "max_wall_s", c->max_wall_s);
    cJSON_AddNumberToObject(o, "max_reply_tokens", c->max_reply_tokens);
    if (with_seed)
        cJSON_AddNumberToObject(o, "seed", (double)c->seed);
    cJSON_AddNumberToObject(o, "temperature", c->temperature);
    cJSON_AddNumberToObject(o, "top_p", c->top_p);
    cJSON_AddNumberToObject(o, "obs_budget", (double)c->obs_budget);
    if (!c->edit_hints) /* absent: on */
        cJSON_AddFalseToObject(o, "edit_hints");
    if (c->integrity_flag_only) /* absent: enforce */
        cJSON_AddStringToObject(o, "integrity", "flag");
    const testrun_limits *l = &c->test_limits;
    if (l->mem_mb || l->procs || l->disk_mb) { /* absent: the sandbox's defaults */
        cJSON *tl = cJSON_AddObjectToObject(o, "test_limits");
        cJSON_AddNumberToObject(tl, "mem_mb", (double)l->mem_mb);
        cJSON_AddNumberToObject(tl, "procs", l->procs);
        cJSON_AddNumberToObject(tl, "disk_mb", (double)l->disk_mb);
    }
    cJSON_AddStringToObject(o, "reward", c->shaping.on ? "shaped" : "binary");
    if (c->run)
        cJSON_AddStringToObject(o, "run", c->run);
}

uint64_t ep_config_digest(const ep_config *c)
{
    cJSON *o = cJSON_CreateObject();
    config_json(o, c, 0);
    char *s = cJSON_PrintUnformatted(o);
    uint64_t h = fnv(1469598103934665603ULL, s);
    free(s);
    cJSON_Delete(o);
    return h;
}

/* ---- state ------------------------------------------------------------- */

/* How a turn's context ids are stored (docs/trajectory-schema.md). */
typedef enum {
    IDS_NONE,    /* no tokenizer */
    IDS_FULL,    /* ctx_ids holds them all */
    IDS_SAMPLED, /* the previous turn's context ids + its sampled ids + ctx_ids */
    IDS_KEEP,    /* the first ids_keep of the previous turn's context ids + ctx_ids */
} ids_form;

/* One turn. With history kept every context extends the previous one, so
 * a turn holds only what it adds: its context is bytes [0, context_len)
 * of the episode's current context (ep_state.ctx), its segments the first
 * segs_keep of the previous turn's plus its own, its context ids likewise.
 * With history dropped a turn holds its whole context, segments and ids. */
typedef struct ep_turn {
    char *context;          /* drop: the whole text; keep: NULL */
    size_t context_len;
    size_t segs_keep;       /* keep: leading segments shared with the previous turn */
    tpl_seg *segs;          /* keep: the segments after those; drop: all */
    size_t nsegs;
    ids_form ids_form;
    size_t ids_keep;        /* IDS_KEEP */
    int32_t *ctx_ids;       /* the context ids this turn adds (all for IDS_FULL) */
    size_t n_ctx_ids;
    size_t n_ctx_total;     /* length of the whole context's ids */
    char *generated;        /* the policy's text */
    size_t generated_len;
    int32_t *ids;           /* policy-written ids */
    float *logprobs;
    size_t n_ids;
    int truncated;
    char *format_error;
    cJSON *calls;           /* [{name, arguments, ok, error, ms, identical_to_previous}] */
    long gen_ms;
    long policy_version;
    cJSON *api;             /* the policy's account of the request (openai) */
} ep_turn;

struct ep_state {
    const task *t;
    ep_config cfg;
    int turn_cap;           /* ep_config_turn_cap of cfg: 0 unlimited */
    ws_tree *ws;
    const tok_t *tok;
    chat *chat;
    tool_ctx tools;
    const tc_spec *specs;
    size_t nspecs;
    tpl_opts tpl;
    tpl_text ctx;           /* keep: the latest turn's whole context */
    int32_t *ids;           /* keep: the latest turn's whole context ids */
    size_t n_ids, ids_cap;
    size_t *seg_id_end;     /* keep: ids up to the end of each segment of ctx,
                               when seg_ids_ok (the ids are the context's text
                               encoded segment by segment) */
    size_t seg_id_cap;
    int seg_ids_ok;
    ep_turn *turns;
    size_t nturns, cap;
    int done;
    const char *end_reason;
    char error[RL_ERR_MAX];
    char prev_call[RL_EP_CALL_KEY_MAX]; /* name + arguments of the last call */
    double t_start, t_policy, t_tools, t_reset, t_score;
    unsigned next_call_id;
    int finished;
    double reward, shaped;
    size_t calls_ok, identical, well_formed;
    char *patch;
    testrun_verdict sc;
    int scored;
    integ_report integ;      /* findings of the integrity check */
    int flagged;             /* findings, or the check could not run */
    double test_reward;      /* the tests' reward before the check */
    char integ_error[RL_ERR_MAX];
};

/* ---- transcript -------------------------------------------------------- */

#define C_DIM "\033[2m"
#define C_BOLD "\033[1m"
#define C_BLUE "\033[34m"
#define C_GREEN "\033[32m"
#define C_RED "\033[31m"
#define C_OFF "\033[0m"

static void say(const ep_state *e, const char *color, const char *label, const char *text, size_t max)
{
    if (!e->cfg.log)
        return;
    size_t len = strlen(text);
    char *cut = len > max ? str_cut_middle(text, len, max, NULL) : NULL;
    if (e->cfg.color)
        rl_logf(e->cfg.log, e->cfg.log_ctx, RL_LOG_INFO, "%s%s%s %s", color, label, C_OFF, cut ? cut : text);
    else
        rl_logf(e->cfg.log, e->cfg.log_ctx, RL_LOG_INFO, "%s %s", label, cut ? cut : text);
    free(cut);
}

/* ---- run_tests and submit hooks ----------------------------------------- */

static int hook_run_tests(void *user, const char *const *names, size_t n, buf_t *obs, char *err)
{
    ep_state *e = user;
    testrun r;
    int rc = testrun_fresh(&r, NULL, e->t, e->ws, 0, &e->cfg.test_limits, err);
    if (rc < 0) {
        testrun_dispose(&r);
        return rc;
    }
    char *sum = testrun_summary(&r, e->t, names, n);
    testrun_dispose(&r);
    if (!sum)
        return rl_err(err, RL_ENOMEM, "run_tests: out of memory");
    buf_append_trunc(obs, sum, strlen(sum));
    free(sum);
    return 0;
}

static int hook_submit(void *user, buf_t *obs, char *err)
{
    ep_state *e = user;
    (void)err;
    e->done = 1;
    e->end_reason = "submit";
    buf_puts(obs, "Submitted. The episode ends and the tests decide the reward.");
    return 0;
}

/* ---- new --------------------------------------------------------------- */

int ep_new(ep_state **out, const task *t, const ep_config *cfg, struct ws_tree *ws, char *err)
{
    *out = NULL;
    ep_state *e = calloc(1, sizeof *e);
    if (!e)
        return rl_err(err, RL_ENOMEM, "episode: out of memory");
    e->t = t;
    e->cfg = *cfg;
    e->turn_cap = ep_config_turn_cap(cfg);
    e->ws = ws;
    e->tok = cfg->tok;
    e->t_start = clk_ms();
    e->tpl.think = cfg->think;
    e->tpl.keep_history = cfg->history_keep;
    e->tpl.gen_prompt = 1;
    int rc = ep_config_template(cfg, err);
    if (rc < 0) {
        free(e);
        return rc;
    }
    e->tpl.kind = (tpl_kind)rc;
    e->cfg.chat_template = rc;
    e->specs = tool_specs(&e->nspecs);
    double t0 = clk_ms();
    if ((rc = ws_reset(ws, err)) < 0)
        goto fail;
    e->t_reset = clk_ms() - t0;
    char *prompt = NULL;
    if ((rc = tpl_load_prompt(&prompt, cfg->prompts_dir, cfg->prompt, err)) < 0)
        goto fail;
    if ((rc = chat_new(&e->chat, err)) < 0) {
        free(prompt);
        goto fail;
    }
    rc = chat_add_system(e->chat, prompt, err);
    free(prompt);
    if (rc < 0 || (rc = chat_add_user(e->chat, t->problem_statement, err)) < 0)
        goto fail;
    tool_ctx_default(&e->tools);
    if ((rc = tool_ctx_init(&e->tools, ws_path(ws), err)) < 0)
        goto fail;
    e->tools.obs_budget = cfg->obs_budget;
    e->tools.edit_hints = cfg->edit_hints;
    e->tools.time_ms = (unsigned)cfg->file_tool_timeout_ms;
    e->tools.run_tests = hook_run_tests;
    e->tools.submit = hook_submit;
    e->tools.user = e;
    say(e, C_BOLD, "task", t->instance_id, 200);
    say(e, C_DIM, "problem:", t->problem_statement, 600);
    *out = e;
    return 0;
fail:
    ep_free(e);
    return rc;
}

static void turn_free(ep_turn *t)
{
    free(t->context);
    free(t->segs);
    free(t->ctx_ids);
    free(t->generated);
    free(t->ids);
    free(t->logprobs);
    free(t->format_error);
    cJSON_Delete(t->calls);
    cJSON_Delete(t->api);
}

void ep_free(ep_state *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->nturns; i++)
        turn_free(&e->turns[i]);
    free(e->turns);
    tpl_text_dispose(&e->ctx);
    free(e->ids);
    free(e->seg_id_end);
    chat_free(e->chat);
    tool_ctx_dispose(&e->tools);
    free(e->patch);
    if (e->scored)
        testrun_verdict_dispose(&e->sc);
    integ_report_dispose(&e->integ);
    free(e);
}

/* ---- tokens ------------------------------------------------------------ */

static int push_ids(ep_state *e, const int32_t *ids, size_t n, char *err)
{
    int rc = VEC_GROW(e->ids, e->ids_cap, e->n_ids + n, RL_EP_IDS_MAX);
    if (rc < 0)
        return rc == RL_ELIMIT ? rl_err(err, rc, "episode: context of more than %u ids", RL_EP_IDS_MAX)
                               : rl_err(err, rc, "episode: out of memory");
    if (n)
        memcpy(e->ids + e->n_ids, ids, n * sizeof *ids);
    e->n_ids += n;
    return 0;
}

/* Appends to the episode's id sequence (e->ids) the encoding of the
 * segments of `text` from segment `first`, starting at byte `from` inside
 * it: markup and policy-written text may hold special tokens; everything
 * else (the prompt, the problem, tool output) is untrusted text, encoded as
 * plain bytes so "<|im_end|>" in a file cannot end a turn. With `ends`,
 * notes the ids count at the end of every segment encoded. */
static int encode_segs(ep_state *e, const char *text, const tpl_seg *segs, size_t nsegs, size_t first, size_t from,
                       int ends, char *err)
{
    int rc;
    if (ends && (rc = VEC_GROW(e->seg_id_end, e->seg_id_cap, nsegs, RL_EP_SEGS_MAX)) < 0)
        return rc == RL_ELIMIT ? rl_err(err, rc, "episode: context of more than %u segments", RL_EP_SEGS_MAX)
                               : rl_err(err, rc, "episode: out of memory");
    for (size_t i = first; i < nsegs; i++) {
        size_t s = segs[i].off, end = segs[i].off + segs[i].len;
        if (end > from) {
            if (s < from)
                s = from;
            tok_mode mode = segs[i].origin == TPL_TEMPLATE || segs[i].origin == TPL_ASSISTANT ? TOK_SPECIAL_ALLOW
                                                                                             : TOK_SPECIAL_PLAIN;
            int32_t *part = NULL;
            size_t pn = 0;
            if ((rc = tok_encode(&part, &pn, e->tok, text + s, end - s, mode, err)) < 0)
                return rc;
            rc = push_ids(e, part, pn, err);
            free(part);
            if (rc < 0)
                return rc;
        }
        if (ends)
            e->seg_id_end[i] = e->n_ids;
    }
    return 0;
}

/* Context ids of turn k, whose context is ctx and whose first `same`
 * segments are the previous context's. With history kept the sequence the
 * policy saw is never re-tokenized: after a turn with sampled ids, its
 * context's ids + the sampled ids + the new text's ids; after one without,
 * the ids of the shared segments + the new segments' ids (each segment is
 * encoded on its own, so this is the whole context's encoding). The turn
 * keeps the ids it adds; e->ids holds the whole sequence. */
static int context_ids(ep_state *e, ep_turn *cur, const tpl_text *ctx, size_t same, char *err)
{
    if (!e->tok)
        return 0;
    size_t k = e->nturns - 1;
    ep_turn *prev = k ? &e->turns[k - 1] : NULL;
    size_t base;
    int rc;
    if (!e->cfg.history_keep) {
        e->n_ids = 0;
        if ((rc = encode_segs(e, ctx->text, ctx->segs, ctx->nsegs, 0, 0, 0, err)) < 0)
            return rc;
        cur->ids_form = IDS_FULL;
        base = 0;
    } else if (prev && prev->ids && prev->ids_form != IDS_NONE) {
        size_t from = prev->context_len + prev->generated_len + (prev->truncated ? 0 : strlen("<|im_end|>"));
        e->n_ids = prev->n_ctx_total;
        if ((rc = push_ids(e, prev->ids, prev->n_ids, err)) < 0)
            return rc;
        base = e->n_ids;
        if ((rc = encode_segs(e, ctx->text, ctx->segs, ctx->nsegs, 0, from, 0, err)) < 0)
            return rc;
        cur->ids_form = IDS_SAMPLED;
        e->seg_ids_ok = 0;
    } else if (prev && prev->ids_form != IDS_NONE && e->seg_ids_ok) {
        base = same ? e->seg_id_end[same - 1] : 0;
        e->n_ids = base;
        if ((rc = encode_segs(e, ctx->text, ctx->segs, ctx->nsegs, same, 0, 1, err)) < 0)
            return rc;
        cur->ids_form = IDS_KEEP;
        cur->ids_keep = base;
    } else {
        e->n_ids = 0;
        if ((rc = encode_segs(e, ctx->text, ctx->segs, ctx->nsegs, 0, 0, 1, err)) < 0)
            return rc;
        cur->ids_form = IDS_FULL;
        e->seg_ids_ok = 1;
        base = 0;
    }
    cur->n_ctx_total = e->n_ids;
    cur->n_ctx_ids = e->n_ids - base;
    cur->ctx_ids = malloc((cur->n_ctx_ids + 1) * sizeof *cur->ctx_ids);
    if (!cur->ctx_ids)
        return rl_err(err, RL_ENOMEM, "episode: out of memory");
    if (cur->n_ctx_ids)
        memcpy(cur->ctx_ids, e->ids + base, cur->n_ctx_ids * sizeof *cur->ctx_ids);
    return 0;
}

/* ---- request ------------------------------------------------------------ */

static void end(ep_state *e, const char *why)
{
    if (!e->done) {
        e->done = 1;
        e->end_reason = why;
    }
}

static int check_limits(ep_state *e)
{
    if (e->turn_cap && e->nturns >= (size_t)e->turn_cap)
        end(e, "max_turns");
    else if (e->cfg.max_wall_s && clk_ms() - e->t_start > e->cfg.max_wall_s * 1000.0)
        end(e, "wall_time");
    else if (e->nturns >= RL_EP_HARD_TURNS)
        end(e, "max_turns");
    return e->done;
}

/* Ends the episode at its pending turn, which is not recorded (the policy
 * never answered it); msg, when given, is the record's error. */
static void drop_turn(ep_state *e, const char *msg, const char *why)
{
    e->nturns--;
    turn_free(&e->turns[e->nturns]);
    if (msg)
        snprintf(e->error, sizeof e->error, "%s", msg);
    end(e, why);
}

int ep_request(ep_state *e, pol_request *req)
{
    memset(req, 0, sizeof *req);
    if (e->done || check_limits(e))
        return 0;
    int grc = VEC_GROW(e->turns, e->cap, e->nturns + 1, RL_EP_HARD_TURNS);
    if (grc < 0) {
        if (grc == RL_ELIMIT)
            snprintf(e->error, sizeof e->error, "episode: more than %d turns", RL_EP_HARD_TURNS);
        else
            snprintf(e->error, sizeof e->error, "episode: out of memory");
        end(e, "error");
        return 0;
    }
    ep_turn *cur = &e->turns[e->nturns++];
    memset(cur, 0, sizeof *cur);
    tpl_text ctx;
    char err[RL_ERR_MAX];
    if (tpl_render(&ctx, &e->tpl, e->specs, e->nspecs, e->chat->msgs, e->chat->n, err) < 0) {
        snprintf(e->error, sizeof e->error, "%s", err);
        e->nturns--;
        end(e, strstr(err, "over") ? "max_context" : "error");
        return 0;
    }
    cur->context_len = ctx.len;
    size_t same = 0;
    if (e->cfg.history_keep) {
        /* every context extends the previous one and the text the policy
         * generated, byte for byte; the turn keeps the segments it adds */
        if (e->nturns > 1) {
            ep_turn *prev = &e->turns[e->nturns - 2];
            if (tpl_check_prefix(e->ctx.text, prev->context_len, prev->generated, prev->generated_len, ctx.text,
                                 ctx.len, err) < 0) {
                tpl_text_dispose(&ctx);
                drop_turn(e, err, "error");
                return 0;
            }
            while (same < e->ctx.nsegs && same < ctx.nsegs && e->ctx.segs[same].off == ctx.segs[same].off &&
                   e->ctx.segs[same].len == ctx.segs[same].len && e->ctx.segs[same].origin == ctx.segs[same].origin)
                same++;
        }
        cur->segs_keep = same;
        cur->nsegs = ctx.nsegs - same;
        cur->segs = malloc((cur->nsegs + 1) * sizeof *cur->segs);
        if (!cur->segs) {
            tpl_text_dispose(&ctx);
            drop_turn(e, "episode: out of memory", "error");
            return 0;
        }
        if (cur->nsegs)
            memcpy(cur->segs, ctx.segs + same, cur->nsegs * sizeof *cur->segs);
    } else {
        cur->context = ctx.text;
        cur->segs = ctx.segs;
        cur->nsegs = ctx.nsegs;
    }
    int rc = context_ids(e, cur, &ctx, same, err);
    if (e->cfg.history_keep) {
        tpl_text_dispose(&e->ctx);
        e->ctx = ctx;
    }
    if (rc < 0) {
        drop_turn(e, err, "error");
        return 0;
    }
    size_t ctx_tokens = e->tok ? cur->n_ctx_total : cur->context_len / 4;
    if (e->cfg.max_context_tokens && ctx_tokens > (size_t)e->cfg.max_context_tokens) {
        drop_turn(e, NULL, "max_context");
        return 0;
    }
    if (e->cfg.history_keep) {
        req->context = e->ctx.text;
        req->context_ids = e->ids;
    } else {
        req->context = cur->context;
        req->context_ids = cur->ctx_ids;
    }
    req->context_len = cur->context_len;
    req->n_context_ids = e->tok ? cur->n_ctx_total : 0;
    req->chat = e->chat;
    req->tools = e->specs;
    req->ntools = e->nspecs;
    req->max_tokens = e->cfg.max_reply_tokens;
    /* the sampling stream of this turn: task, episode seed and turn, so the
     * same seed on two tasks does not replay the same random draws (the
     * model policies give each request its own stream of this seed); 53
     * bits, which a server reads exactly from JSON (POL_SEED_MAX) */
    req->seed = fnv(e->cfg.seed * 1000003ULL + (uint64_t)e->nturns, e->t->instance_id) & POL_SEED_MAX;
    return 1;
}

/* ---- feed --------------------------------------------------------------- */

static void run_call(ep_state *e, ep_turn *cur, const tc_call *call)
{
    char err[RL_ERR_MAX] = "";
    char *args = tc_args_json(call);
    char key[RL_EP_CALL_KEY_MAX];
    snprintf(key, sizeof key, "%s %s", call->name, args ? args : "");
    int identical = e->prev_call[0] && !strcmp(key, e->prev_call);
    snprintf(e->prev_call, sizeof e->prev_call, "%s", key);
    say(e, C_BLUE, "call", key, 300);
    tool_result r;
    double t0 = clk_ms();
    tool_exec(&r, &e->tools, call, err);
    e->t_tools += clk_ms() - t0;
    chat_add_tool(e->chat, call->id, call->name, r.obs ? r.obs : "", err);
    say(e, r.code == 0 ? C_DIM : C_RED, r.code == 0 ? "  ->" : "  -> error:", r.obs ? r.obs : "", 400);
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "id", call->id);
    cJSON_AddStringToObject(c, "name", call->name);
    cJSON_AddItemToObject(c, "arguments", cJSON_Duplicate(call->args, 1));
    cJSON_AddBoolToObject(c, "ok", r.code == 0);
    if (r.code == 0)
        cJSON_AddNullToObject(c, "error");
    else {
        cJSON_AddStringToObject(c, "error", err[0] ? err : (r.obs ? r.obs : "error"));
        cJSON_AddStringToObject(c, "error_kind", r.kind ? r.kind : "error");
    }
    cJSON_AddNumberToObject(c, "ms", r.ms);
    cJSON_AddBoolToObject(c, "identical_to_previous", identical);
    if (r.cut)
        cJSON_AddNumberToObject(c, "obs_cut_bytes", (double)r.cut);
    cJSON_AddItemToArray(cur->calls, c);
    e->calls_ok += r.code == 0;
    e->identical += identical;
    tool_result_dispose(&r);
    free(args);
}

int ep_feed(ep_state *e, pol_response *resp, char *err)
{
    if (e->nturns == 0 || e->done)
        return rl_err(err, RL_EINVAL, "episode: no pending request");
    if (resp->error) {
        /* this request failed, the episode ends unanswered */
        ep_abort(e, "policy_error", resp->error);
        pol_response_dispose(resp);
        return 0;
    }
    ep_turn *cur = &e->turns[e->nturns - 1];
    if (resp->meta)
        cur->api = cJSON_Parse(resp->meta);
    if (resp->context_ids && cur->ids_form == IDS_NONE) {
        /* the prompt as the policy's server counted it */
        free(cur->ctx_ids);
        cur->ctx_ids = resp->context_ids;
        cur->n_ctx_ids = cur->n_ctx_total = resp->n_context_ids;
        cur->ids_form = IDS_FULL;
        resp->context_ids = NULL;
    }
    free(resp->meta);
    free(resp->context_ids);
    resp->meta = NULL;
    resp->context_ids = NULL;
    cur->generated = resp->text ? resp->text : strdup("");
    cur->generated_len = resp->text ? resp->text_len : 0;
    cur->ids = resp->ids;
    cur->logprobs = resp->logprobs;
    cur->n_ids = resp->n_ids;
    cur->truncated = resp->finish == POL_FINISH_LENGTH;
    cur->gen_ms = resp->gen_ms;
    cur->policy_version = resp->policy_version;
    e->t_policy += (double)resp->gen_ms;
    memset(resp, 0, sizeof *resp);
    cur->calls = cJSON_CreateArray();
    if (!cur->generated || !cur->calls)
        return rl_err(err, RL_ENOMEM, "episode: out of memory");

    tc_parsed p;
    tc_opts to;
    tc_opts_default(&to);
    to.first_id = e->next_call_id;
    char perr[RL_ERR_MAX] = "";
    int prc = tc_parse(&p, cur->generated, cur->generated_len, e->specs, e->nspecs, &to, perr);
    if (prc == RL_ENOMEM) {
        tc_parsed_dispose(&p);
        return rl_err(err, RL_ENOMEM, "episode: out of memory");
    }
    if (p.think && p.think[0])
        say(e, C_DIM, "think:", p.think, 300);
    if (p.content && p.content[0])
        say(e, C_GREEN, "assistant:", p.content, 600);
    int rc = chat_add_generated(e->chat, cur->generated, cur->generated_len, &p, cur->truncated, err);
    if (rc < 0) {
        tc_parsed_dispose(&p);
        return rc;
    }
    if (p.format_error) {
        /* a malformed reply: the observation says what was wrong, no call
         * runs, the episode goes on */
        cur->format_error = strdup(p.error);
        say(e, C_RED, "format error:", p.error, 300);
        chat_add_tool(e->chat, NULL, NULL, p.error, err);
    } else if (p.ncalls == 0) {
        e->well_formed++;
        end(e, cur->truncated ? "max_context" : "no_tool_call");
    } else {
        e->well_formed++;
        e->next_call_id += (unsigned)p.ncalls;
        for (size_t i = 0; i < p.ncalls && !e->done; i++)
            run_call(e, cur, &p.calls[i]);
    }
    tc_parsed_dispose(&p);
    return 0;
}

/* ---- finish ------------------------------------------------------------- */

/* Every string of the record as valid UTF-8: a policy may write any bytes
 * (half a character), and JSON readers reject invalid UTF-8. Each bad
 * byte becomes '?', so segment offsets stay right; the token ids, not the
 * text, are what training uses, and they are exact. */
static void scrub_strings(cJSON *o)
{
    for (; o; o = o->next) {
        if (cJSON_IsString(o) && o->valuestring)
            utf8_scrub(o->valuestring, strlen(o->valuestring));
        if (o->string)
            utf8_scrub(o->string, strlen(o->string));
        scrub_strings(o->child);
    }
}

static cJSON *ids_json(const int32_t *ids, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(ids[i]));
    return a;
}

static cJSON *floats_json(const float *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++) {
        char s[32];
        snprintf(s, sizeof s, "%.6g", (double)v[i]);
        cJSON_AddItemToArray(a, cJSON_CreateRaw(s));
    }
    return a;
}

static cJSON *segs_json(const tpl_seg *segs, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++) {
        cJSON *s = cJSON_CreateArray();
        cJSON_AddItemToArray(s, cJSON_CreateNumber((double)segs[i].off));
        cJSON_AddItemToArray(s, cJSON_CreateNumber((double)segs[i].len));
        cJSON_AddItemToArray(s, cJSON_CreateString(tpl_origin_name(segs[i].origin)));
        cJSON_AddItemToArray(a, s);
    }
    return a;
}

/* A string of n bytes of text (the text may go on). */
static cJSON *string_n(const char *text, size_t n)
{
    char *s = strndup(text, n);
    cJSON *o = s ? cJSON_CreateString(s) : NULL;
    free(s);
    return o;
}

/* Turn k as recorded. With history kept, turns after the first refer to
 * the previous turn for their context, segments and context ids and store
 * only what they add, so the record grows linearly with the turns. */
static cJSON *turn_json(const ep_state *e, size_t k)
{
    const ep_turn *t = &e->turns[k];
    cJSON *o = cJSON_CreateObject();
    cJSON *ctx = cJSON_AddObjectToObject(o, "context");
    const ep_turn *prev = k ? &e->turns[k - 1] : NULL;
    int keep = e->cfg.history_keep;
    if (keep && prev) {
        size_t from = prev->context_len + prev->generated_len;
        cJSON_AddNumberToObject(ctx, "prefix_turn", (double)(k - 1));
        cJSON_AddItemToObject(ctx, "append", string_n(e->ctx.text + from, t->context_len - from));
    } else {
        cJSON_AddItemToObject(ctx, "text", keep ? string_n(e->ctx.text, t->context_len) : cJSON_CreateString(t->context));
    }
    cJSON_AddStringToObject(o, "generated", t->generated ? t->generated : "");
    if (t->ids_form == IDS_FULL) {
        cJSON_AddItemToObject(o, "context_ids", ids_json(t->ctx_ids, t->n_ctx_ids));
    } else if (t->ids_form != IDS_NONE) {
        cJSON *ci = cJSON_AddObjectToObject(o, "context_ids");
        cJSON_AddNumberToObject(ci, "prefix_turn", (double)(k - 1));
        if (t->ids_form == IDS_KEEP)
            cJSON_AddNumberToObject(ci, "keep", (double)t->ids_keep);
        cJSON_AddItemToObject(ci, "append_ids", ids_json(t->ctx_ids, t->n_ctx_ids));
    }
    if (t->ids) {
        cJSON_AddItemToObject(o, "ids", ids_json(t->ids, t->n_ids));
        cJSON_AddItemToObject(o, "logprobs", floats_json(t->logprobs, t->n_ids));
    }
    if (keep && prev) {
        cJSON *sg = cJSON_AddObjectToObject(o, "segments");
        cJSON_AddNumberToObject(sg, "prefix_turn", (double)(k - 1));
        cJSON_AddNumberToObject(sg, "keep", (double)t->segs_keep);
        cJSON_AddItemToObject(sg, "append", segs_json(t->segs, t->nsegs));
    } else {
        cJSON_AddItemToObject(o, "segments", segs_json(t->segs, t->nsegs));
    }
    cJSON_AddItemToObject(o, "tool_calls", t->calls ? cJSON_Duplicate(t->calls, 1) : cJSON_CreateArray());
    if (t->format_error)
        cJSON_AddStringToObject(o, "format_error", t->format_error);
    else
        cJSON_AddNullToObject(o, "format_error");
    if (t->truncated)
        cJSON_AddTrueToObject(o, "truncated");
    cJSON_AddNumberToObject(o, "gen_ms", (double)t->gen_ms);
    if (t->api) {
        cJSON_AddBoolToObject(o, "tokens_exact",
                              cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t->api, "tokens_exact")));
        cJSON_AddItemToObject(o, "api", cJSON_Duplicate(t->api, 1));
    }
    if (t->policy_version)
        cJSON_AddNumberToObject(o, "policy_version", (double)t->policy_version);
    return o;
}

/* Token counts over the last context plus the last reply, by origin. */
static void token_counts(cJSON *o, const ep_state *e)
{
    size_t policy = 0;
    for (size_t i = 0; i < e->nturns; i++)
        policy += e->turns[i].ids ? e->turns[i].n_ids : 0;
    long by[TPL_NORIGINS] = {0};
    tpl_text full;
    char err[RL_ERR_MAX];
    tpl_opts to = e->tpl;
    to.gen_prompt = 0;
    int have = tpl_render(&full, &to, e->specs, e->nspecs, e->chat->msgs, e->chat->n, err) == 0;
    if (have && e->tok) {
        for (size_t i = 0; i < full.nsegs; i++) {
            const tpl_seg *s = &full.segs[i];
            tok_mode m = s->origin == TPL_TEMPLATE || s->origin == TPL_ASSISTANT ? TOK_SPECIAL_ALLOW
                                                                                 : TOK_SPECIAL_PLAIN;
            long c = tok_count(e->tok, full.text + s->off, s->len, m, NULL);
            by[s->origin] += c > 0 ? c : 0;
        }
    }
    if (!policy)
        for (size_t i = 0; i < e->nturns; i++)
            policy += e->tok ? (size_t)tok_count(e->tok, e->turns[i].generated, e->turns[i].generated_len,
                                                 TOK_SPECIAL_ALLOW, NULL)
                             : 0;
    cJSON_AddNumberToObject(o, "policy", (double)policy);
    cJSON_AddStringToObject(o, "tokenizer", e->tok ? "bpe" : "none");
    if (have) {
        long total = 0;
        for (int i = 0; i < TPL_NORIGINS; i++) {
            total += by[i];
            if (e->tok)
                cJSON_AddNumberToObject(o, tpl_origin_name((tpl_origin)i), (double)by[i]);
        }
        if (e->tok)
            cJSON_AddNumberToObject(o, "total", (double)total);
        cJSON_AddNumberToObject(o, "context_bytes", (double)full.len);
        tpl_text_dispose(&full);
    }
}

static const char *status_name(tr_status s) { return tr_status_name(s); }

/* The integrity check of the scored diff and work tree: findings (or a
 * check that could not run, or no diff to check) flag the episode; when
 * enforcing, a flagged episode's reward is 0. */
static void integrity_check(ep_state *e)
{
    e->test_reward = e->reward;
    integ_opts io;
    integ_opts_default(&io);
    io.protected_paths = (const char *const *)e->t->protected_paths.v;
    io.n_protected = e->t->protected_paths.n;
    /* The tree that was scored: the companion, where the change ran. */
    ws_tree *scored = NULL;
    char cerr[RL_ERR_MAX];
    io.tree_dir = ws_companion(&scored, e->ws, cerr) == 0 ? ws_path(scored) : ws_path(e->ws);
    int rc = integ_scan(&e->integ, e->patch, &io, e->integ_error);
    if (rc == 0 && !e->patch && e->scored)
        snprintf(e->integ_error, sizeof e->integ_error, "integrity: the scored diff is unavailable");
    else if (rc == 0)
        e->integ_error[0] = '\0';
    e->flagged = e->integ_error[0] || e->integ.n > 0 || e->integ.dropped > 0;
    if (e->flagged && !e->cfg.integrity_flag_only)
        e->reward = 0;
}

static cJSON *integrity_json(const ep_state *e)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "mode", e->cfg.integrity_flag_only ? "flag" : "enforce");
    cJSON_AddBoolToObject(o, "flagged", e->flagged);
    cJSON_AddNumberToObject(o, "test_reward", e->test_reward);
    cJSON *arr = cJSON_AddArrayToObject(o, "findings");
    for (size_t i = 0; i < e->integ.n; i++) {
        const integ_finding *f = &e->integ.v[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "rule", f->rule);
        cJSON_AddStringToObject(j, "path", f->path);
        cJSON_AddNumberToObject(j, "line", f->line);
        cJSON_AddStringToObject(j, "text", f->text);
        cJSON_AddItemToArray(arr, j);
    }
    if (e->integ.dropped)
        cJSON_AddNumberToObject(o, "findings_dropped", (double)e->integ.dropped);
    if (e->integ_error[0])
        cJSON_AddStringToObject(o, "error", e->integ_error);
    return o;
}

static int record_json(char **record, ep_state *e, int unscored, size_t nturns, char *err);

int ep_finish(char **record, ep_state *e, char *err)
{
    *record = NULL;
    if (!e->end_reason)
        end(e, "no_tool_call");
    double t0 = clk_ms();
    /* an episode the policy could not answer has no outcome to score: it
     * is recorded as an error, without a reward */
    int unscored = !strcmp(e->end_reason, "policy_error");
    int rc = unscored ? 0 : testrun_score(&e->sc, e->t, e->ws, &e->cfg.test_limits, err);
    e->patch = e->sc.patch;
    e->sc.patch = NULL;
    e->t_score = clk_ms() - t0;
    if (unscored) {
        e->reward = 0;
    } else if (rc < 0) {
        snprintf(e->error, sizeof e->error, "scoring: %s", err);
        e->reward = 0;
    } else {
        e->scored = 1;
        e->reward = e->sc.reward;
    }
    e->finished = 1;
    if (!unscored)
        integrity_check(e);
    if (e->cfg.shaping.on) {
        const ep_shaping *s = &e->cfg.shaping;
        e->shaped = (e->reward > 0.5 ? s->pass : s->fail) + s->tool_ok * (double)e->calls_ok +
                    s->well_formed * (double)e->well_formed + s->identical * (double)e->identical;
        if (s->turn_limit > 0 && e->nturns > (size_t)s->turn_limit)
            e->shaped += s->over_turn * (double)(e->nturns - (size_t)s->turn_limit);
    }

    return record_json(record, e, unscored, e->nturns, err);
}

/* The record of e with its first nturns turns; unscored: no reward or
 * integrity (an unscored end, or an episode still open). */
static int record_json(char **record, ep_state *e, int unscored, size_t nturns, char *err)
{
    char derr[RL_ERR_MAX];
    cJSON *o = cJSON_CreateObject();
    char key[512];
    if (e->cfg.run)
        snprintf(key, sizeof key, "%s#%s#seed=%llu", e->t->instance_id, e->cfg.run,
                 (unsigned long long)e->cfg.seed);
    else
        snprintf(key, sizeof key, "%s#cfg=%016llx#seed=%llu", e->t->instance_id,
                 (unsigned long long)ep_config_digest(&e->cfg), (unsigned long long)e->cfg.seed);
    cJSON_AddNumberToObject(o, "schema", REC_SCHEMA);
    cJSON_AddStringToObject(o, "key", key);
    cJSON_AddStringToObject(o, "task", e->t->instance_id);
    cJSON_AddStringToObject(o, "repo", e->t->repo);
    cJSON_AddStringToObject(o, "split", task_split_name(e->t->split));
    cJSON_AddStringToObject(o, "kind", task_kind_name(e->t->kind));
    config_json(cJSON_AddObjectToObject(o, "config"), &e->cfg, 1);
    cJSON *msgs = NULL;
    if (chat_to_json(&msgs, e->chat, derr) == 0)
        cJSON_AddItemToObject(o, "messages", msgs);
    cJSON *turns = cJSON_AddArrayToObject(o, "turns");
    for (size_t i = 0; i < nturns; i++)
        cJSON_AddItemToArray(turns, turn_json(e, i));
    cJSON *tests = cJSON_AddArrayToObject(o, "tests");
    for (size_t i = 0; e->scored && i < e->sc.n_tests; i++) {
        const testrun_outcome *to = &e->sc.tests[i];
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "name", to->name);
        cJSON_AddBoolToObject(t, "f2p", to->from_f2p);
        cJSON_AddStringToObject(t, "status", status_name(to->status));
        if (to->message)
            cJSON_AddStringToObject(t, "message", to->message);
        else
            cJSON_AddNullToObject(t, "message");
        cJSON_AddItemToArray(tests, t);
    }
    if (e->patch)
        cJSON_AddStringToObject(o, "patch", e->patch);
    else
        cJSON_AddNullToObject(o, "patch");
    if (unscored)
        cJSON_AddNullToObject(o, "reward");
    else
        cJSON_AddNumberToObject(o, "reward", e->reward);
    if (!unscored)
        cJSON_AddItemToObject(o, "integrity", integrity_json(e));
    if (e->cfg.shaping.on)
        cJSON_AddNumberToObject(o, "shaped_reward", e->shaped);
    else
        cJSON_AddNullToObject(o, "shaped_reward");
    if (e->end_reason)
        cJSON_AddStringToObject(o, "end_reason", e->end_reason);
    else
        cJSON_AddNullToObject(o, "end_reason");
    if (e->error[0])
        cJSON_AddStringToObject(o, "error", e->error);
    else
        cJSON_AddNullToObject(o, "error");
    token_counts(cJSON_AddObjectToObject(o, "tokens"), e);
    cJSON *tm = cJSON_AddObjectToObject(o, "timings");
    cJSON_AddNumberToObject(tm, "total_ms", clk_ms() - e->t_start);
    cJSON_AddNumberToObject(tm, "reset_ms", e->t_reset);
    cJSON_AddNumberToObject(tm, "policy_ms", e->t_policy);
    cJSON_AddNumberToObject(tm, "tools_ms", e->t_tools);
    cJSON_AddNumberToObject(tm, "score_ms", e->t_score);
    char when[32];
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    cJSON_AddStringToObject(o, "started_at", when);
    scrub_strings(o);
    *record = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!*record)
        return rl_err(err, RL_ENOMEM, "episode: out of memory writing the record");
    return 0;
}

int ep_snapshot(char **record, ep_state *e, char *err)
{
    *record = NULL;
    if (e->finished)
        return record_json(record, e, !e->scored, e->nturns, err);
    size_t n = e->nturns;
    if (n && !e->turns[n - 1].generated) /* the pending turn: not answered yet */
        n--;
    return record_json(record, e, 1, n, err);
}

const struct chat *ep_chat(const ep_state *e) { return e->chat; }

double ep_reward(const ep_state *e) { return e->reward; }

int ep_done(const ep_state *e) { return e->done; }

void ep_abort(ep_state *e, const char *end_reason, const char *msg)
{
    if (e->nturns && !e->turns[e->nturns - 1].generated) { /* the pending turn */
        e->nturns--;
        turn_free(&e->turns[e->nturns]);
    }
    snprintf(e->error, sizeof e->error, "%.500s", msg ? msg : "");
    end(e, end_reason);
}

int ep_run(char **record, const task *t, const ep_config *cfg, struct ws_tree *ws, policy *pol, char *err)
{
    *record = NULL;
    ep_state *e;
    ep_config c = *cfg;
    if (!c.tok && pol)
        c.tok = pol->tok;
    int rc = ep_new(&e, t, &c, ws, err);
    if (rc < 0)
        return rc;
    pol_request req;
    while (ep_request(e, &req)) {
        pol_response resp;
        char perr[RL_ERR_MAX];
        memset(&resp, 0, sizeof resp);
        double t0 = clk_ms();
        if (pol_generate(pol, &resp, &req, 1, perr) < 0) {
            pol_response_dispose(&resp);
            ep_abort(e, "policy_error", perr);
            break;
        }
        if (!resp.gen_ms)
            resp.gen_ms = (long)(clk_ms() - t0);
        if ((rc = ep_feed(e, &resp, err)) < 0) {
            pol_response_dispose(&resp);
            ep_free(e);
            return rc;
        }
    }
    rc = ep_finish(record, e, err);
    if (rc == 0 && cfg->log) {
        size_t policy_tokens = 0;
        cJSON *r = cJSON_Parse(*record);
        const cJSON *tk = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "tokens"), "policy");
        if (cJSON_IsNumber(tk))
            policy_tokens = (size_t)tk->valuedouble;
        cJSON_Delete(r);
        const char *col = e->reward > 0.5 ? C_GREEN : C_RED;
        rl_logf(cfg->log, cfg->log_ctx, RL_LOG_INFO, "%s%s: reward %g, %zu turns, %zu policy tokens, %.1f s (%s)%s",
                cfg->color ? col : "", t->instance_id, e->reward, e->nturns, policy_tokens,
                (clk_ms() - e->t_start) / 1000.0, e->end_reason, cfg->color ? C_OFF : "");
        if (e->flagged) {
            /* in colour the whole block is red: the reset ends its last line */
            const char *off = cfg->color ? C_OFF : "";
            rl_logf(cfg->log, cfg->log_ctx, RL_LOG_INFO, "%sintegrity (%s): flagged, test reward %g%s%s%s",
                    cfg->color ? C_RED : "", cfg->integrity_flag_only ? "flag" : "enforce", e->test_reward,
                    e->integ_error[0] ? "; " : "", e->integ_error, e->integ.n ? "" : off);
            for (size_t i = 0; i < e->integ.n; i++)
                rl_logf(cfg->log, cfg->log_ctx, RL_LOG_INFO, "  %s %s:%d %s%s", e->integ.v[i].rule,
                        e->integ.v[i].path, e->integ.v[i].line, e->integ.v[i].text,
                        i + 1 == e->integ.n ? off : "");
        }
    }
    ep_free(e);
    return rc;
}
