/* serve.c - the OpenAI-compatible API over the built-in model (serve.h).
 *
 * A request becomes a job: its prompt ids, sampling options and n
 * choices. Connection threads queue jobs; the scheduler thread admits a
 * job when the batch has room for all its choices, steps the batch
 * (model_dec_step), copies each choice's new tokens into the job (text,
 * logprobs, top alternatives), ends choices at a stop token, a stop
 * string, their length or a client that left, and wakes the waiting
 * connection threads. One mutex guards the queue, the jobs and the
 * counters; the model and the batch belong to the scheduler thread alone.
 */
#include "grpo/serve.h"

#include "common/buf.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/rng.h"
#include "common/str.h"
#include "common/utf8.h"
#include "protocol/chat.h"
#include "protocol/template.h"
#include "protocol/toolcall.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { EP_MODELS, EP_COMPLETIONS, EP_CHAT, EP_HEALTH, EP_METRICS, EP_WEIGHTS, EP_OTHER, EP_N };
static const char *const EP_NAME[EP_N] = {"models", "completions", "chat_completions", "health", "metrics",
                                          "weights", "other"};

enum { JOB_QUEUED, JOB_RUNNING, JOB_COMPLETE };
enum { FIN_STOP, FIN_LENGTH };

typedef struct choice {
    int slot;       /* batch slot while running, else -1 */
    int done, finish;
    int *ids;       /* every sampled id, stop token included */
    float *lps;
    int *top_ids;   /* top_k per id */
    float *top_lps;
    int n;
    int stop_tok;   /* the last id is a stop token (not in the text) */
    buf_t text;     /* decode of the ids without the stop token */
    size_t text_end; /* the text the answer holds: cut before a stop string */
    int sent_ids;   /* streaming: ids and text already sent */
    size_t sent_text;
    int fin_sent, calls_sent;
} choice;

typedef struct job {
    struct job *next;
    int ep, stream, include_usage;
    int *prompt, plen;
    model_sample_opts so;
    int stop_ids[RL_MODEL_STOP_IDS_MAX];
    uint64_t seed;
    int n, top_k, logprobs, ids_as_text, return_ids;
    const char *stops[SERVE_STOP_MAX];
    int n_stops;
    size_t stop_hold; /* longest stop string less one: held back while streaming */
    choice ch[SERVE_N_MAX];
    int state, cancelled;
    pthread_cond_t cv; /* signalled when the job has news or completes */
    int err_status;
    char err[RL_ERR_MAX];
    /* chat */
    cJSON *doc;
    tc_spec *tools;
    tc_param *params;
    size_t ntools;
    char id[48];
    long created;
    double t0;
    /* streaming */
    buf_t out;
    buf_t snap;      /* text of running choices copied for the next events */
    buf_t scrub;     /* one event's text made valid UTF-8 */
    size_t out_pos;
    int began, ended;
    double woken_ms; /* the scheduler's last wake-up of the stream */
    long version;      /* weights that drew the first token (set at admission) */
    long version_last; /* weights of the latest step that drew a token */
    serve *s;
} job;

typedef struct status_count {
    int ep, status;
    long n;
} status_count;

struct serve {
    model *m;
    const tok_t *tok;
    serve_opts o;
    char name[SERVE_NAME_MAX];
    int im_end;
    model_dec *dec;
    pthread_t th;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t work, progress;
    job *qhead, *qtail;
    int qlen, nactive;
    job **active;
    int stopping, drained, quit;
    uint64_t seed_state;
    /* counters */
    status_count counts[64];
    int n_counts;
    long gen_tokens, prompt_tokens, steps, requests;
    long prefix_reused;      /* copied from the model_dec after each step */
    int prefix_entries;
    size_t prefix_bytes;
    double lat[SERVE_LATENCY_WINDOW], lat_sum;
    long lat_count;
    /* weights: the version decoding now; a loaded update waiting for the
     * scheduler to copy it in between two steps (one at a time) */
    long version;
    model *pending;
    long pending_version;
    long swaps;
    char token[SERVE_TOKEN_MAX + 1];
};

void serve_opts_default(serve_opts *o)
{
    memset(o, 0, sizeof *o);
    o->max_batch = SERVE_BATCH_DEFAULT;
    o->max_queue = SERVE_QUEUE_DEFAULT;
    o->prefix_cache_mb = SERVE_PREFIX_CACHE_MB_DEFAULT;
    o->stream_interval_ms = SERVE_STREAM_INTERVAL_MS_DEFAULT;
    o->version = 0;
}

/* ---- jobs ------------------------------------------------------------------ */

static void job_free(job *j)
{
    if (!j)
        return;
    for (int i = 0; i < SERVE_N_MAX; i++) {
        choice *c = &j->ch[i];
        free(c->ids);
        free(c->lps);
        free(c->top_ids);
        free(c->top_lps);
        buf_dispose(&c->text);
    }
    free(j->prompt);
    free(j->tools);
    free(j->params);
    cJSON_Delete(j->doc);
    buf_dispose(&j->out);
    buf_dispose(&j->snap);
    buf_dispose(&j->scrub);
    pthread_cond_destroy(&j->cv);
    free(j);
}

/* Room for the choices' tokens. */
static int job_alloc_choices(job *j, char *err)
{
    size_t cap = (size_t)j->so.max_new + 1, k = (size_t)j->top_k;
    for (int i = 0; i < j->n; i++) {
        choice *c = &j->ch[i];
        c->slot = -1;
        c->ids = malloc(cap * sizeof *c->ids);
        c->lps = malloc(cap * sizeof *c->lps);
        if (k) {
            c->top_ids = malloc(cap * k * sizeof *c->top_ids);
            c->top_lps = malloc(cap * k * sizeof *c->top_lps);
        }
        buf_init(&c->text, 0);
        if (!c->ids || !c->lps || (k && (!c->top_ids || !c->top_lps)))
            return rl_err(err, RL_ENOMEM, "out of memory for %d tokens", j->so.max_new);
    }
    return 0;
}

/* ---- errors in the OpenAI shape ---------------------------------------------- */

static int reply_json(http_server_resp *resp, int status, cJSON *o)
{
    char *txt = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!txt)
        return RL_ENOMEM;
    int rc = http_reply(resp, status, "application/json", txt, strlen(txt));
    free(txt);
    return rc;
}

/* ---- request parsing ----------------------------------------------------------- */

/* A parse failure: status, the field and the message. */
typedef struct perr {
    int status;
    const char *param;
    char msg[RL_ERR_MAX];
} perr;

static int bad(perr *pe, int status, const char *param, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int bad(perr *pe, int status, const char *param, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    str_vfmt(pe->msg, sizeof pe->msg, fmt, ap);
    va_end(ap);
    pe->status = status;
    pe->param = param;
    return RL_EINVAL;
}

static const cJSON *field(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return v && !cJSON_IsNull(v) ? v : NULL;
}

/* An optional number in lo..hi (integral when integer). */
static int get_num(double *out, const cJSON *o, const char *k, double lo, double hi, int integer, perr *pe)
{
    const cJSON *v = field(o, k);
    if (!v)
        return 0;
    double d = v->valuedouble;
    if (!cJSON_IsNumber(v) || !isfinite(d) || d < lo || d > hi || (integer && d != floor(d)))
        return bad(pe, 400, k, "%s: expected %s in %g..%g", k, integer ? "an integer" : "a number", lo, hi);
    *out = d;
    return 1;
}

static int get_bool(int *out, const cJSON *o, const char *k, perr *pe)
{
    const cJSON *v = field(o, k);
    if (!v)
        return 0;
    if (!cJSON_IsBool(v))
        return bad(pe, 400, k, "%s: expected true or false", k);
    *out = cJSON_IsTrue(v);
    return 1;
}

/* A fresh seed for a request that gives none. */
static uint64_t next_seed(serve *s)
{
    pthread_mutex_lock(&s->mu);
    uint64_t v = rl_splitmix64(&s->seed_state);
    pthread_mutex_unlock(&s->mu);
    return v >> 1;
}

/* The fields both endpoints share. */
static int parse_common(serve *s, job *j, const cJSON *o, perr *pe)
{
    const cJSON *model = field(o, "model");
    if (!model)
        return bad(pe, 400, "model", "model: expected the served model's name \"%s\"", s->name);
    if (!cJSON_IsString(model))
        return bad(pe, 400, "model", "model: expected a string");
    if (strcmp(model->valuestring, s->name))
        return bad(pe, 404, "model", "model '%.200s' does not exist: this server serves \"%s\"", model->valuestring,
                   s->name);
    int rc;
    double d;
    j->so.temperature = 1.0f;
    j->so.top_p = 1.0f;
    if ((rc = get_num(&d, o, "temperature", 0, 1000, 0, pe)) < 0)
        return rc;
    if (rc)
        j->so.temperature = (float)d;
    if ((rc = get_num(&d, o, "top_p", 0, 1, 0, pe)) < 0)
        return rc;
    if (rc) {
        if (d <= 0)
            return bad(pe, 400, "top_p", "top_p: expected a number in (0, 1]");
        j->so.top_p = (float)d;
    }
    j->n = 1;
    if ((rc = get_num(&d, o, "n", 1, SERVE_N_MAX, 1, pe)) < 0)
        return rc;
    if (rc)
        j->n = (int)d;
    if (j->n > s->o.max_batch)
        return bad(pe, 400, "n", "n: %d choices, the batch holds %d: expected at most that", j->n, s->o.max_batch);
    j->seed = next_seed(s);
    if ((rc = get_num(&d, o, "seed", -9.2e18, 9.2e18, 1, pe)) < 0)
        return rc;
    if (rc)
        j->seed = (uint64_t)(int64_t)d;
    j->so.max_new = 0;
    const char *mt = field(o, "max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
    if ((rc = get_num(&d, o, mt, 1, RL_MODEL_SEQ_MAX, 1, pe)) < 0)
        return rc;
    if (rc)
        j->so.max_new = (int)d;
    if ((rc = get_bool(&j->stream, o, "stream", pe)) < 0)
        return rc;
    const cJSON *so = field(o, "stream_options");
    if (so && (!cJSON_IsObject(so) || get_bool(&j->include_usage, so, "include_usage", pe) < 0))
        return bad(pe, 400, "stream_options", "stream_options: expected {\"include_usage\": true|false}");
    if ((rc = get_bool(&j->ids_as_text, o, "return_tokens_as_token_ids", pe)) < 0 ||
        (rc = get_bool(&j->return_ids, o, "return_token_ids", pe)) < 0)
        return rc;
    static const char *const unsupported[] = {"presence_penalty", "frequency_penalty", "logit_bias", "best_of",
                                              "suffix"};
    for (size_t i = 0; i < sizeof unsupported / sizeof *unsupported; i++) {
        const cJSON *v = field(o, unsupported[i]);
        if (v && !(cJSON_IsNumber(v) && v->valuedouble == 0) && !(cJSON_IsObject(v) && !v->child) &&
            !(!strcmp(unsupported[i], "best_of") && cJSON_IsNumber(v) && v->valuedouble == j->n))
            return bad(pe, 400, unsupported[i], "%s: not supported by this server (expected it absent)",
                       unsupported[i]);
    }
    /* stop strings */
    const cJSON *st = field(o, "stop");
    if (st) {
        if (cJSON_IsString(st)) {
            j->stops[j->n_stops++] = st->valuestring;
        } else if (cJSON_IsArray(st)) {
            const cJSON *e;
            cJSON_ArrayForEach(e, st)
            {
                if (!cJSON_IsString(e) || j->n_stops >= SERVE_STOP_MAX)
                    return bad(pe, 400, "stop", "stop: expected a string or up to %d strings", SERVE_STOP_MAX);
                j->stops[j->n_stops++] = e->valuestring;
            }
        } else {
            return bad(pe, 400, "stop", "stop: expected a string or up to %d strings", SERVE_STOP_MAX);
        }
        for (int i = 0; i < j->n_stops; i++) {
            size_t l = strlen(j->stops[i]);
            if (l < 1 || l > SERVE_STOP_LEN_MAX)
                return bad(pe, 400, "stop", "stop: each string expected 1..%d bytes", SERVE_STOP_LEN_MAX);
            if (l - 1 > j->stop_hold)
                j->stop_hold = l - 1;
        }
    }
    /* stop token ids: <|im_end|> unless ignore_eos, plus stop_token_ids */
    int ignore_eos = 0;
    if ((rc = get_bool(&ignore_eos, o, "ignore_eos", pe)) < 0)
        return rc;
    if (!ignore_eos)
        j->stop_ids[j->so.n_stop++] = s->im_end;
    const cJSON *sti = field(o, "stop_token_ids");
    if (sti) {
        const cJSON *e;
        int k = 0;
        if (!cJSON_IsArray(sti))
            return bad(pe, 400, "stop_token_ids", "stop_token_ids: expected an array of token ids");
        cJSON_ArrayForEach(e, sti)
        {
            if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) || e->valuedouble < 0 ||
                e->valuedouble >= s->m->cfg.vocab || ++k > SERVE_STOP_IDS_MAX)
                return bad(pe, 400, "stop_token_ids", "stop_token_ids: expected up to %d ids in 0..%d",
                           SERVE_STOP_IDS_MAX, s->m->cfg.vocab - 1);
            j->stop_ids[j->so.n_stop++] = (int)e->valuedouble;
        }
    }
    j->so.stop_ids = j->stop_ids;
    return 0;
}

/* Checks the prompt's length and sets the allowance of new tokens. */
static int fit_window(serve *s, job *j, const char *param, perr *pe)
{
    int win = s->m->cfg.max_seq;
    if (j->plen < 1)
        return bad(pe, 400, param, "%s: expected at least one token", param);
    if (j->plen > win - 1)
        return bad(pe, 400, param,
                   "%s: %d tokens, the model's window is %d: expected at most %d to leave room for a reply",
                   param, j->plen, win, win - 1);
    int room = win - j->plen;
    if (j->so.max_new <= 0 || j->so.max_new > room)
        j->so.max_new = room;
    return 0;
}

static int encode_text(serve *s, job *j, const char *text, size_t len, const char *param, perr *pe)
{
    int32_t *ids = NULL;
    size_t n = 0;
    char err[RL_ERR_MAX];
    if (tok_encode(&ids, &n, s->tok, text, len, TOK_SPECIAL_ALLOW, err) < 0)
        return bad(pe, 400, param, "%s: %s", param, err);
    if (n > SERVE_PROMPT_MAX) {
        free(ids);
        return bad(pe, 400, param, "%s: %zu tokens, expected at most %d", param, n, s->m->cfg.max_seq - 1);
    }
    j->prompt = malloc((n ? n : 1) * sizeof *j->prompt);
    if (!j->prompt) {
        free(ids);
        return bad(pe, 500, NULL, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        j->prompt[i] = ids[i];
    j->plen = (int)n;
    free(ids);
    return 0;
}

static int parse_completion(serve *s, job *j, const cJSON *o, perr *pe)
{
    int rc = parse_common(s, j, o, pe);
    if (rc < 0)
        return rc;
    double d;
    if ((rc = get_num(&d, o, "logprobs", 0, RL_MODEL_TOP_LOGPROBS_MAX, 1, pe)) < 0) {
        const cJSON *lp = field(o, "logprobs");
        if (!cJSON_IsBool(lp))
            return rc;
        j->logprobs = cJSON_IsTrue(lp); /* some clients send a boolean */
    } else if (rc) {
        j->logprobs = 1;
        j->top_k = (int)d;
    }
    int echo = 0;
    if ((rc = get_bool(&echo, o, "echo", pe)) < 0)
        return rc;
    if (echo)
        return bad(pe, 400, "echo", "echo: not supported by this server (expected false)");
    const cJSON *p = field(o, "prompt");
    if (!p)
        return bad(pe, 400, "prompt", "prompt: expected a string or an array of token ids");
    if (cJSON_IsArray(p) && cJSON_GetArraySize(p) == 1 && !cJSON_IsNumber(p->child))
        p = p->child; /* ["text"] or [[ids]]: one prompt */
    if (cJSON_IsString(p)) {
        if ((rc = encode_text(s, j, p->valuestring, strlen(p->valuestring), "prompt", pe)) < 0)
            return rc;
    } else if (cJSON_IsArray(p)) {
        int n = cJSON_GetArraySize(p);
        if (n > SERVE_PROMPT_MAX)
            return bad(pe, 400, "prompt", "prompt: %d tokens, expected at most %d", n, s->m->cfg.max_seq - 1);
        j->prompt = malloc((size_t)(n ? n : 1) * sizeof *j->prompt);
        if (!j->prompt)
            return bad(pe, 500, NULL, "out of memory");
        const cJSON *e;
        cJSON_ArrayForEach(e, p)
        {
            if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) || e->valuedouble < 0 ||
                e->valuedouble >= s->m->cfg.vocab)
                return bad(pe, 400, "prompt",
                           "prompt: token %d: expected an integer id in 0..%d (one prompt per request)", j->plen,
                           s->m->cfg.vocab - 1);
            j->prompt[j->plen++] = (int)e->valuedouble;
        }
    } else {
        return bad(pe, 400, "prompt", "prompt: expected a string or an array of token ids");
    }
    return fit_window(s, j, "prompt", pe);
}

/* OpenAI tool schemas -> tool specs (strings point into the request). */
static int parse_tools(job *j, const cJSON *tools, perr *pe)
{
    int nt = cJSON_GetArraySize(tools);
    if (!cJSON_IsArray(tools) || nt > SERVE_TOOLS_MAX)
        return bad(pe, 400, "tools", "tools: expected an array of at most %d function tools", SERVE_TOOLS_MAX);
    if (nt == 0)
        return 0;
    j->tools = calloc((size_t)nt, sizeof *j->tools);
    j->params = calloc((size_t)nt * SERVE_TOOL_PARAMS_MAX, sizeof *j->params);
    if (!j->tools || !j->params)
        return bad(pe, 500, NULL, "out of memory");
    const cJSON *t;
    int i = 0;
    cJSON_ArrayForEach(t, tools)
    {
        const cJSON *f = field(t, "function"), *name = f ? field(f, "name") : NULL;
        const cJSON *type = field(t, "type");
        if (!f || !cJSON_IsString(name) || !name->valuestring[0] || (type && (!cJSON_IsString(type) ||
                                                                              strcmp(type->valuestring, "function"))))
            return bad(pe, 400, "tools", "tools[%d]: expected {\"type\": \"function\", \"function\": {\"name\": ...}}",
                       i);
        tc_spec *ts = &j->tools[i];
        ts->name = name->valuestring;
        const cJSON *desc = field(f, "description");
        ts->desc = cJSON_IsString(desc) ? desc->valuestring : "";
        ts->params = j->params + (size_t)i * SERVE_TOOL_PARAMS_MAX;
        const cJSON *ps = field(f, "parameters"), *props = ps ? field(ps, "properties") : NULL;
        const cJSON *req = ps ? field(ps, "required") : NULL;
        if (props && !cJSON_IsObject(props))
            return bad(pe, 400, "tools", "tools[%d].function.parameters.properties: expected an object", i);
        const cJSON *p;
        size_t k = 0;
        cJSON_ArrayForEach(p, props)
        {
            if (k >= SERVE_TOOL_PARAMS_MAX)
                return bad(pe, 400, "tools", "tools[%d]: expected at most %d parameters", i, SERVE_TOOL_PARAMS_MAX);
            tc_param *tp = (tc_param *)&ts->params[k++];
            tp->name = p->string;
            const cJSON *pt = field(p, "type"), *pd = field(p, "description");
            const char *ty = cJSON_IsString(pt) ? pt->valuestring : "string";
            tp->type = !strcmp(ty, "integer") ? TC_INT : !strcmp(ty, "array") ? TC_STRINGS : TC_STRING;
            tp->desc = cJSON_IsString(pd) ? pd->valuestring : "";
            const cJSON *r;
            cJSON_ArrayForEach(r, req) if (cJSON_IsString(r) && !strcmp(r->valuestring, p->string)) tp->required = 1;
        }
        ts->nparams = k;
        i++;
    }
    j->ntools = (size_t)nt;
    return 0;
}

static int parse_chat(serve *s, job *j, const cJSON *o, perr *pe)
{
    int rc = parse_common(s, j, o, pe);
    if (rc < 0)
        return rc;
    if ((rc = get_bool(&j->logprobs, o, "logprobs", pe)) < 0)
        return rc;
    double d;
    if ((rc = get_num(&d, o, "top_logprobs", 0, RL_MODEL_TOP_LOGPROBS_MAX, 1, pe)) < 0)
        return rc;
    if (rc) {
        if (!j->logprobs && d > 0)
            return bad(pe, 400, "top_logprobs", "top_logprobs: expected logprobs: true with it");
        j->top_k = (int)d;
    }
    const cJSON *tools = field(o, "tools"), *choice = field(o, "tool_choice");
    if (choice && !(cJSON_IsString(choice) &&
                    (!strcmp(choice->valuestring, "auto") || !strcmp(choice->valuestring, "none"))))
        return bad(pe, 400, "tool_choice", "tool_choice: expected \"auto\" or \"none\" (others are not supported)");
    if (tools && (rc = parse_tools(j, tools, pe)) < 0)
        return rc;
    tpl_opts to;
    tpl_opts_default(&to);
    to.kind = (tpl_kind)s->o.chat_template;
    const cJSON *kw = field(o, "chat_template_kwargs");
    if (kw && cJSON_IsObject(kw)) {
        int think = 1;
        if (get_bool(&think, kw, "enable_thinking", pe) < 0)
            return bad(pe, 400, "chat_template_kwargs", "chat_template_kwargs.enable_thinking: expected true or false");
        to.think = think;
    }
    const cJSON *msgs = field(o, "messages");
    if (!msgs || !cJSON_IsArray(msgs) || cJSON_GetArraySize(msgs) < 1)
        return bad(pe, 400, "messages", "messages: expected a non-empty array of messages");
    char err[RL_ERR_MAX];
    chat *c = NULL;
    if (chat_from_json(&c, msgs, err) < 0)
        return bad(pe, 400, "messages", "messages: %s", err);
    int with_tools = j->ntools && !(choice && !strcmp(choice->valuestring, "none"));
    tpl_text t;
    rc = tpl_render(&t, &to, with_tools ? j->tools : NULL, with_tools ? j->ntools : 0, c->msgs, c->n, err);
    chat_free(c);
    if (rc < 0)
        return bad(pe, 400, "messages", "messages: %s", err);
    rc = encode_text(s, j, t.text, t.len, "messages", pe);
    tpl_text_dispose(&t);
    if (rc < 0)
        return rc;
    return fit_window(s, j, "messages", pe);
}

/* ---- the scheduler ---------------------------------------------------------------- */

static void count_status(serve *s, int ep, int status)
{
    for (int i = 0; i < s->n_counts; i++)
        if (s->counts[i].ep == ep && s->counts[i].status == status) {
            s->counts[i].n++;
            return;
        }
    if (s->n_counts < (int)(sizeof s->counts / sizeof *s->counts))
        s->counts[s->n_counts++] = (status_count){ep, status, 1};
}

static void job_complete(serve *s, job *j)
{
    j->state = JOB_COMPLETE;
    pthread_cond_signal(&j->cv);
    double dt = clk_s() - j->t0;
    s->lat[s->lat_count % SERVE_LATENCY_WINDOW] = dt;
    s->lat_count++;
    s->lat_sum += dt;
}

static void job_fail(serve *s, job *j, int status, const char *msg)
{
    for (int i = 0; i < j->n; i++) {
        choice *c = &j->ch[i];
        if (c->slot >= 0)
            model_dec_remove(s->dec, c->slot);
        if (!c->done)
            s->gen_tokens += c->n;
        c->slot = -1;
        c->done = 1;
    }
    j->err_status = status;
    str_copy(j->err, sizeof j->err, msg);
    job_complete(s, j);
}

static void active_remove(serve *s, int k)
{
    s->active[k] = s->active[--s->nactive];
}

/* Queued jobs into the batch while all their choices fit. */
static void admit(serve *s)
{
    /* a job whose client left never starts */
    for (job **pp = &s->qhead; *pp;) {
        job *j = *pp;
        if (j->cancelled) {
            *pp = j->next;
            s->qlen--;
            job_complete(s, j);
        } else {
            pp = &j->next;
        }
    }
    s->qtail = NULL;
    for (job *j = s->qhead; j; j = j->next)
        s->qtail = j;
    while (s->qhead && model_dec_free_slots(s->dec) >= s->qhead->n) {
        job *j = s->qhead;
        s->qhead = j->next;
        if (!s->qhead)
            s->qtail = NULL;
        s->qlen--;
        char err[RL_ERR_MAX];
        int rc = 0;
        for (int i = 0; i < j->n && rc == 0; i++) {
            model_sample_opts so = j->so;
            so.seed = j->seed + (uint64_t)i;
            rc = model_dec_add(s->dec, &j->ch[i].slot, j->prompt, j->plen, &so, j->top_k, err);
        }
        if (rc < 0) {
            rl_logf(s->o.log, s->o.log_ctx, RL_LOG_ERROR, "serve: cannot start request %s: %s", j->id, err);
            job_fail(s, j, 500, err);
            continue;
        }
        s->prompt_tokens += (long)j->plen * j->n;
        j->version = j->version_last = s->version;
        j->state = JOB_RUNNING;
        s->active[s->nactive++] = j;
    }
}

/* Where stop string k first occurs in text[from..len), or -1. */
static long find_stop(const buf_t *t, size_t from, const char *stop)
{
    const char *h = t->data ? t->data + from : "";
    size_t hl = t->len - from, sl = strlen(stop);
    for (size_t i = 0; i + sl <= hl; i++)
        if (!memcmp(h + i, stop, sl))
            return (long)(from + i);
    return -1;
}

/* Copies a choice's new tokens from the batch; ends it when due. */
static void collect_choice(serve *s, job *j, choice *c)
{
    const model_sample_out *o = model_dec_out(s->dec, c->slot);
    int dec_done = model_dec_done(s->dec, c->slot);
    size_t old_len = c->text.len;
    const int *tids;
    const float *tlps;
    while (c->n < o->n) {
        int i = c->n, id = o->tokens[i];
        c->ids[i] = id;
        c->lps[i] = o->logprobs[i];
        if (j->top_k && model_dec_top(s->dec, c->slot, i, &tids, &tlps) == j->top_k) {
            memcpy(c->top_ids + (size_t)i * j->top_k, tids, (size_t)j->top_k * sizeof *tids);
            memcpy(c->top_lps + (size_t)i * j->top_k, tlps, (size_t)j->top_k * sizeof *tlps);
        }
        c->n++;
        if (dec_done && c->n == o->n && o->stop == MODEL_STOP_TOKEN) {
            c->stop_tok = 1; /* the stop token ends the choice, outside its text */
            break;
        }
        size_t bl;
        const char *b = tok_id_to_bytes(s->tok, id, &bl);
        if (b && buf_append(&c->text, b, bl) < 0)
            dec_done = 1; /* the text cap: the choice ends here */
    }
    c->text_end = c->text.len;
    int stopped = c->stop_tok;
    if (j->n_stops) {
        size_t from = old_len > j->stop_hold ? old_len - j->stop_hold : 0;
        long best = -1;
        for (int k = 0; k < j->n_stops; k++) {
            long p = find_stop(&c->text, from, j->stops[k]);
            if (p >= 0 && (best < 0 || p < best))
                best = p;
        }
        if (best >= 0) {
            c->text_end = (size_t)best;
            stopped = dec_done = 1;
        }
    }
    if (dec_done || j->cancelled) {
        c->done = 1;
        c->finish = stopped ? FIN_STOP : FIN_LENGTH;
        s->gen_tokens += c->n;
        model_dec_remove(s->dec, c->slot);
        c->slot = -1;
    }
}

static void collect(serve *s)
{
    double now = s->o.stream_interval_ms ? clk_ms() : 0;
    for (int k = 0; k < s->nactive;) {
        job *j = s->active[k];
        j->version_last = s->version; /* the step just taken ran on these weights */
        int all = 1;
        for (int i = 0; i < j->n; i++) {
            if (!j->ch[i].done)
                collect_choice(s, j, &j->ch[i]);
            all &= j->ch[i].done;
        }
        if (all) {
            job_complete(s, j);
            active_remove(s, k);
        } else {
            if (j->stream && (!s->o.stream_interval_ms || now - j->woken_ms >= s->o.stream_interval_ms)) {
                pthread_cond_signal(&j->cv); /* new tokens to send */
                j->woken_ms = now;
            }
            k++;
        }
    }
}

/* Ends every queued and running job (shutdown or a failed step). */
static void fail_all(serve *s, int status, const char *msg)
{
    while (s->qhead) {
        job *j = s->qhead;
        s->qhead = j->next;
        job_fail(s, j, status, msg);
    }
    s->qtail = NULL;
    s->qlen = 0;
    while (s->nactive) {
        job_fail(s, s->active[0], status, msg);
        active_remove(s, 0);
    }
}

static void *sched_main(void *arg)
{
    serve *s = arg;
    char err[RL_ERR_MAX];
    pthread_setname_np(pthread_self(), "rl-serve"); /* named in top, perf and /proc */
    pthread_mutex_lock(&s->mu);
    for (;;) {
        if (s->stopping) {
            fail_all(s, 503, "the server is shutting down");
            s->drained = 1;
            pthread_cond_broadcast(&s->progress);
            if (s->quit)
                break;
            pthread_cond_wait(&s->work, &s->mu);
            continue;
        }
        if (s->pending) { /* between two steps: no sequence is mid-step */
            memcpy(s->m->params, s->pending->params, s->m->n_params * sizeof(float));
            model_dec_prefix_clear(s->dec); /* its keys and values are of the old weights */
            model_free(s->pending);
            s->pending = NULL;
            s->version = s->pending_version;
            s->swaps++;
            pthread_cond_broadcast(&s->progress);
        }
        admit(s);
        if (s->nactive == 0) {
            pthread_cond_wait(&s->work, &s->mu);
            continue;
        }
        pthread_mutex_unlock(&s->mu);
        int rows = 0;
        double t0 = s->o.min_step_ms ? clk_ms() : 0;
        int rc = model_dec_step(s->dec, &rows, err);
        if (s->o.min_step_ms)
            clk_sleep_until_ms(t0 + s->o.min_step_ms);
        pthread_mutex_lock(&s->mu);
        s->steps++;
        if (rc < 0) {
            rl_logf(s->o.log, s->o.log_ctx, RL_LOG_ERROR, "serve: decoding step failed: %s", err);
            fail_all(s, 500, err);
        } else {
            collect(s);
        }
        model_dec_prefix_stats(s->dec, &s->prefix_reused, &s->prefix_entries, &s->prefix_bytes);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

int serve_new(serve **out, model *m, const tok_t *tok, const serve_opts *o, char *err)
{
    *out = NULL;
    if (!o->name || !o->name[0] || strlen(o->name) >= SERVE_NAME_MAX)
        return rl_err(err, RL_EINVAL, "serve: model name: expected 1..%d bytes", SERVE_NAME_MAX - 1);
    if (o->max_batch < 1 || o->max_batch > SERVE_BATCH_HARD)
        return rl_err(err, RL_EINVAL, "serve: max_batch %d: expected 1..%d", o->max_batch, SERVE_BATCH_HARD);
    if (o->max_queue < 1 || o->max_queue > SERVE_QUEUE_HARD)
        return rl_err(err, RL_EINVAL, "serve: max_queue %d: expected 1..%d", o->max_queue, SERVE_QUEUE_HARD);
    if (o->stream_interval_ms < 0 || o->stream_interval_ms > SERVE_STREAM_INTERVAL_MS_MAX)
        return rl_err(err, RL_EINVAL, "serve: stream_interval_ms %d: expected 0..%d", o->stream_interval_ms,
                      SERVE_STREAM_INTERVAL_MS_MAX);
    if (o->min_step_ms < 0 || o->min_step_ms > SERVE_MIN_STEP_MS_MAX)
        return rl_err(err, RL_EINVAL, "serve: min_step_ms %d: expected 0..%d", o->min_step_ms, SERVE_MIN_STEP_MS_MAX);
    if (o->token && (!o->token[0] || strlen(o->token) > SERVE_TOKEN_MAX))
        return rl_err(err, RL_EINVAL, "serve: token: expected 1..%d bytes", SERVE_TOKEN_MAX);
    if (o->version < 0)
        return rl_err(err, RL_EINVAL, "serve: version %ld: expected >= 0", o->version);
    if (o->prefix_cache_mb < 0 || o->prefix_cache_mb > SERVE_PREFIX_CACHE_MB_MAX)
        return rl_err(err, RL_EINVAL, "serve: prefix_cache_mb %d: expected 0..%d", o->prefix_cache_mb,
                      SERVE_PREFIX_CACHE_MB_MAX);
    int im_end = tok_special_id(tok, "<|im_end|>");
    if (im_end < 0)
        return rl_err(err, RL_EINVAL, "serve: the tokenizer has no <|im_end|> token");
    if (tok_vocab_size(tok) > m->cfg.vocab)
        return rl_err(err, RL_EINVAL, "serve: tokenizer vocabulary %d, expected at most the model's %d",
                      tok_vocab_size(tok), m->cfg.vocab);
    model_set_active_vocab(m, tok_vocab_size(tok)); /* padded rows are never drawn */
    serve *s = calloc(1, sizeof *s);
    if (!s)
        return rl_err(err, RL_ENOMEM, "serve: out of memory");
    s->m = m;
    s->tok = tok;
    s->o = *o;
    str_copy(s->name, sizeof s->name, o->name);
    s->o.name = s->name;
    if (o->token) {
        str_copy(s->token, sizeof s->token, o->token);
        s->o.token = s->token;
    }
    s->version = o->version;
    s->im_end = im_end;
    s->seed_state = (uint64_t)clk_ns() ^ (uint64_t)time(NULL) << 20;
    s->active = calloc((size_t)o->max_batch, sizeof *s->active);
    int rc = s->active ? model_dec_new(&s->dec, m, o->max_batch, err)
                       : rl_err(err, RL_ENOMEM, "serve: out of memory");
    if (rc < 0) {
        free(s->active);
        free(s);
        return rc;
    }
    model_dec_prefix_cache(s->dec, (size_t)o->prefix_cache_mb << 20);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->work, NULL);
    pthread_cond_init(&s->progress, NULL);
    if (pthread_create(&s->th, NULL, sched_main, s) != 0) {
        serve_free(s);
        return rl_err(err, RL_EIO, "serve: cannot start the scheduler thread");
    }
    s->started = 1;
    *out = s;
    return 0;
}

void serve_shutdown(serve *s)
{
    if (!s || !s->started)
        return;
    pthread_mutex_lock(&s->mu);
    s->stopping = 1;
    pthread_cond_signal(&s->work);
    while (!s->drained)
        pthread_cond_wait(&s->progress, &s->mu);
    pthread_mutex_unlock(&s->mu);
}

void serve_free(serve *s)
{
    if (!s)
        return;
    if (s->started) {
        serve_shutdown(s);
        pthread_mutex_lock(&s->mu);
        s->quit = 1;
        pthread_cond_signal(&s->work);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->th, NULL);
    }
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->work);
    pthread_cond_destroy(&s->progress);
    model_dec_free(s->dec);
    model_free(s->pending);
    free(s->active);
    free(s);
}

void serve_counters(serve *s, long *requests, long *tokens)
{
    pthread_mutex_lock(&s->mu);
    if (requests)
        *requests = s->requests;
    if (tokens)
        *tokens = s->gen_tokens;
    pthread_mutex_unlock(&s->mu);
}

/* ---- answers ---------------------------------------------------------------------- */

/* The text of a token for logprobs: its bytes (invalid UTF-8 as '?'), or
 * "token_id:N" when the request asked for ids. */
static cJSON *token_str(const serve *s, const job *j, int id)
{
    if (j->ids_as_text) {
        char t[32];
        snprintf(t, sizeof t, "token_id:%d", id);
        return cJSON_CreateString(t);
    }
    size_t bl = 0;
    const char *b = tok_id_to_bytes(s->tok, id, &bl);
    char *t = malloc(bl + 1);
    if (!t)
        return NULL;
    if (b)
        memcpy(t, b, bl);
    t[bl] = '\0';
    utf8_scrub(t, bl);
    for (size_t i = 0; i < bl; i++)
        if (!t[i])
            t[i] = '?';
    cJSON *o = cJSON_CreateString(t);
    free(t);
    return o;
}

static cJSON *text_json(const char *p, size_t n)
{
    char *t = malloc(n + 1);
    if (!t)
        return NULL;
    memcpy(t, p, n);
    t[n] = '\0';
    utf8_scrub(t, n);
    for (size_t i = 0; i < n; i++)
        if (!t[i])
            t[i] = '?';
    cJSON *o = cJSON_CreateString(t);
    free(t);
    return o;
}

static cJSON *ids_json(const int *ids, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(ids[i]));
    return a;
}

/* Completions logprobs of tokens [a, b): tokens, token_logprobs,
 * top_logprobs (one object per token), text_offset. stop_last: token b-1
 * is the stop token (no text). */
static cJSON *completion_logprobs(const serve *s, const job *j, const choice *c, int a, int b, size_t off,
                                  int stop_last)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *tk = cJSON_AddArrayToObject(o, "tokens"), *lp = cJSON_AddArrayToObject(o, "token_logprobs");
    cJSON *top = cJSON_AddArrayToObject(o, "top_logprobs"), *to = cJSON_AddArrayToObject(o, "text_offset");
    for (int i = a; i < b; i++) {
        cJSON_AddItemToArray(tk, token_str(s, j, c->ids[i]));
        cJSON_AddItemToArray(lp, cJSON_CreateNumber(c->lps[i]));
        cJSON *t = cJSON_CreateObject();
        for (int k = 0; k < j->top_k; k++) {
            int id = c->top_ids[(size_t)i * j->top_k + k];
            cJSON *key = token_str(s, j, id);
            if (key && !cJSON_GetObjectItemCaseSensitive(t, key->valuestring))
                cJSON_AddNumberToObject(t, key->valuestring, c->top_lps[(size_t)i * j->top_k + k]);
            cJSON_Delete(key);
        }
        cJSON_AddItemToArray(top, t);
        cJSON_AddItemToArray(to, cJSON_CreateNumber((double)off));
        size_t bl = 0;
        if (!(stop_last && i == b - 1))
            tok_id_to_bytes(s->tok, c->ids[i], &bl);
        off += bl;
    }
    return o;
}

static cJSON *chat_token(const serve *s, const job *j, int id, double lp)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddItemToObject(e, "token", token_str(s, j, id));
    cJSON_AddNumberToObject(e, "logprob", lp);
    cJSON *bytes = cJSON_AddArrayToObject(e, "bytes");
    size_t bl = 0;
    const char *b = tok_id_to_bytes(s->tok, id, &bl);
    for (size_t i = 0; b && i < bl; i++)
        cJSON_AddItemToArray(bytes, cJSON_CreateNumber((unsigned char)b[i]));
    return e;
}

/* Chat logprobs of tokens [a, b): {"content": [...]} */
static cJSON *chat_logprobs(const serve *s, const job *j, const choice *c, int a, int b)
{
    cJSON *o = cJSON_CreateObject(), *content = cJSON_AddArrayToObject(o, "content");
    for (int i = a; i < b; i++) {
        cJSON *e = chat_token(s, j, c->ids[i], c->lps[i]);
        cJSON *top = cJSON_AddArrayToObject(e, "top_logprobs");
        for (int k = 0; k < j->top_k; k++)
            cJSON_AddItemToArray(top, chat_token(s, j, c->top_ids[(size_t)i * j->top_k + k],
                                                 c->top_lps[(size_t)i * j->top_k + k]));
        cJSON_AddItemToArray(content, e);
    }
    return o;
}

static cJSON *usage_json(const job *j)
{
    long gen = 0;
    for (int i = 0; i < j->n; i++)
        gen += j->ch[i].n;
    cJSON *u = cJSON_CreateObject();
    cJSON_AddNumberToObject(u, "prompt_tokens", j->plen);
    cJSON_AddNumberToObject(u, "completion_tokens", (double)gen);
    cJSON_AddNumberToObject(u, "total_tokens", (double)(j->plen + gen));
    return u;
}

static cJSON *answer_head(const serve *s, const job *j, const char *object)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", j->id);
    cJSON_AddStringToObject(o, "object", object);
    cJSON_AddNumberToObject(o, "created", (double)j->created);
    cJSON_AddStringToObject(o, "model", s->name);
    return o;
}

/* The head of a stream event: answer_head and the policy versions that
 * drew the job's tokens so far (the first token's; the latest step's when
 * new weights came in since). */
static cJSON *stream_head(const serve *s, const job *j, const char *object, long version, long version_last)
{
    cJSON *o = answer_head(s, j, object);
    cJSON_AddNumberToObject(o, "policy_version", (double)version);
    if (version_last != version)
        cJSON_AddNumberToObject(o, "policy_version_last", (double)version_last);
    return o;
}

/* The tool calls of a finished chat choice, parsed from its text: the
 * message's parts in *p (disposed by the caller). */
static void parse_calls(const job *j, const choice *c, tc_parsed *p)
{
    char err[RL_ERR_MAX];
    tc_parse(p, c->text.data ? c->text.data : "", c->text_end, j->tools, j->ntools, NULL, err);
}

static cJSON *calls_json(const tc_parsed *p, int with_index)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < p->ncalls; i++) {
        cJSON *t = cJSON_CreateObject();
        if (with_index)
            cJSON_AddNumberToObject(t, "index", (double)i);
        cJSON_AddStringToObject(t, "id", p->calls[i].id);
        cJSON_AddStringToObject(t, "type", "function");
        cJSON *f = cJSON_AddObjectToObject(t, "function");
        cJSON_AddStringToObject(f, "name", p->calls[i].name);
        char *args = tc_args_json(&p->calls[i]);
        cJSON_AddStringToObject(f, "arguments", args ? args : "{}");
        free(args);
        cJSON_AddItemToArray(a, t);
    }
    return a;
}

static const char *finish_name(const job *j, const choice *c, int has_calls)
{
    if (c->finish == FIN_LENGTH)
        return "length";
    return j->ep == EP_CHAT && has_calls ? "tool_calls" : "stop";
}

static int reply_result(serve *s, job *j, http_server_resp *resp)
{
    int chat = j->ep == EP_CHAT;
    cJSON *o = answer_head(s, j, chat ? "chat.completion" : "text_completion");
    cJSON *chs = cJSON_AddArrayToObject(o, "choices");
    for (int i = 0; i < j->n; i++) {
        choice *c = &j->ch[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "index", i);
        int has_calls = 0;
        if (chat) {
            tc_parsed p;
            parse_calls(j, c, &p);
            cJSON *msg = cJSON_AddObjectToObject(e, "message");
            cJSON_AddStringToObject(msg, "role", "assistant");
            if (p.format_error) { /* left in the text, as written */
                cJSON_AddItemToObject(msg, "content", text_json(c->text.data ? c->text.data : "", c->text_end));
            } else {
                cJSON_AddItemToObject(msg, "content", text_json(p.content ? p.content : "",
                                                                p.content ? strlen(p.content) : 0));
                if (p.think)
                    cJSON_AddItemToObject(msg, "reasoning_content", text_json(p.think, strlen(p.think)));
                if (p.ncalls) {
                    cJSON_AddItemToObject(msg, "tool_calls", calls_json(&p, 0));
                    has_calls = 1;
                }
            }
            tc_parsed_dispose(&p);
            if (j->logprobs)
                cJSON_AddItemToObject(e, "logprobs", chat_logprobs(s, j, c, 0, c->n));
            else
                cJSON_AddNullToObject(e, "logprobs");
        } else {
            cJSON_AddItemToObject(e, "text", text_json(c->text.data ? c->text.data : "", c->text_end));
            if (j->logprobs)
                cJSON_AddItemToObject(e, "logprobs", completion_logprobs(s, j, c, 0, c->n, 0, c->stop_tok));
            else
                cJSON_AddNullToObject(e, "logprobs");
        }
        cJSON_AddStringToObject(e, "finish_reason", finish_name(j, c, has_calls));
        cJSON_AddItemToObject(e, "token_ids", ids_json(c->ids, c->n));
        if (j->return_ids)
            cJSON_AddItemToObject(e, "prompt_token_ids", ids_json(j->prompt, j->plen));
        cJSON_AddItemToArray(chs, e);
    }
    cJSON_AddItemToObject(o, "usage", usage_json(j));
    cJSON_AddNumberToObject(o, "policy_version", (double)j->version);
    if (j->version_last != j->version)
        cJSON_AddNumberToObject(o, "policy_version_last", (double)j->version_last);
    return reply_json(resp, 200, o);
}

/* ---- streaming ---------------------------------------------------------------- */

/* End of the text of c that may be sent now: all of it once done; else
 * short of what could still turn out to be a stop string or a tool call,
 * and never in the middle of a UTF-8 sequence. */
static size_t safe_end(const job *j, const choice *c)
{
    if (c->done)
        return c->text_end;
    size_t e = c->text.len > j->stop_hold ? c->text.len - j->stop_hold : 0;
    if (j->ep == EP_CHAT && j->ntools) {
        static const char open[] = "<tool_call>";
        long p = find_stop(&c->text, c->sent_text < c->text.len ? c->sent_text : c->text.len, open);
        size_t hold = c->text.len > sizeof open - 2 ? c->text.len - (sizeof open - 2) : 0;
        if (p >= 0 && (size_t)p < e)
            e = (size_t)p;
        if (hold < e)
            e = hold;
    }
    const unsigned char *t = (const unsigned char *)c->text.data;
    for (size_t back = 1; back <= 3 && back <= e; back++) { /* a lead byte whose sequence is not complete */
        unsigned char b = t[e - back];
        if ((b & 0xC0) == 0x80)
            continue;
        size_t need = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
        if (need > back)
            e -= back;
        break;
    }
    return e < c->sent_text ? c->sent_text : e;
}

static int has_news(const job *j)
{
    if (!j->began || j->state == JOB_COMPLETE)
        return 1;
    for (int i = 0; i < j->n; i++) {
        const choice *c = &j->ch[i];
        if (c->n > c->sent_ids || safe_end(j, c) > c->sent_text || (c->done && !c->fin_sent))
            return 1;
    }
    return 0;
}

static int put_event(job *j, cJSON *o)
{
    char *t = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!t)
        return RL_ENOMEM;
    int rc = buf_printf(&j->out, "data: %s\n\n", t);
    free(t);
    return rc;
}

/* A token event without logprobs or tool calls, the one sent per decoding
 * step, written straight into j->out: the bytes put_event would write for
 * the cJSON tree stream_write builds otherwise (the same fields in the
 * same order, strings escaped and numbers printed as cJSON prints them). */
static int put_token_event(serve *s, job *j, long version, long version_last, const char *object, int index,
                           const char *txt, size_t tn, const char *finish, const int *ids, int nids)
{
    buf_t *b = &j->out;
    buf_clear(&j->scrub);
    int rc = buf_append(&j->scrub, txt, tn);
    if (rc == 0 && tn) { /* as text_json: invalid UTF-8 and NULs as '?' */
        utf8_scrub(j->scrub.data, tn);
        for (size_t i = 0; i < tn; i++)
            if (!j->scrub.data[i])
                j->scrub.data[i] = '?';
    }
    if (rc == 0)
        rc = buf_puts(b, "data: {\"id\":");
    if (rc == 0)
        rc = http_json_str(b, j->id, strlen(j->id));
    if (rc == 0)
        rc = buf_printf(b, ",\"object\":\"%s\",\"created\":%ld,\"model\":", object, j->created);
    if (rc == 0)
        rc = http_json_str(b, s->name, strlen(s->name));
    if (rc == 0)
        rc = buf_printf(b, ",\"policy_version\":%ld", version);
    if (rc == 0 && version_last != version)
        rc = buf_printf(b, ",\"policy_version_last\":%ld", version_last);
    if (rc == 0)
        rc = buf_printf(b, ",\"choices\":[{\"index\":%d,", index);
    if (rc == 0 && j->ep == EP_CHAT) {
        rc = buf_puts(b, tn ? "\"delta\":{\"content\":" : "\"delta\":{}");
        if (rc == 0 && tn)
            rc = http_json_str(b, j->scrub.data, tn);
        if (rc == 0 && tn)
            rc = buf_putc(b, '}');
    } else if (rc == 0) {
        rc = buf_puts(b, "\"text\":");
        if (rc == 0)
            rc = http_json_str(b, tn ? j->scrub.data : "", tn);
    }
    if (rc == 0)
        rc = buf_puts(b, ",\"logprobs\":null,\"finish_reason\":");
    if (rc == 0)
        rc = finish ? buf_printf(b, "\"%s\"", finish) : buf_puts(b, "null");
    if (rc == 0)
        rc = buf_puts(b, ",\"token_ids\":[");
    for (int i = 0; i < nids && rc == 0; i++)
        rc = buf_printf(b, i ? ",%d" : "%d", ids[i]);
    return rc ? rc : buf_puts(b, "]}]}\n\n");
}

/* One event of a choice, decided under the lock and written outside it:
 * the ids [a, b) (stable once the scheduler wrote them) and the text
 * [t0, t1). The text of a running choice may move as the scheduler
 * appends to it, so it is copied into the job's snapshot at `copy`; a
 * finished choice's text no longer changes and is read in place. */
typedef struct ev_choice {
    int i, a, b, fin, stop_last;
    size_t t0, t1, copy;
} ev_choice;

typedef struct ev_plan {
    int head;      /* the chat stream's opening role events */
    int err;       /* the job failed: the error event */
    int complete;  /* the usage event (if asked) and [DONE] */
    long version, version_last; /* the job's policy versions as the plan was made */
    int n;
    ev_choice ch[SERVE_N_MAX];
} ev_plan;

/* What is new in the job (under the lock): the sent marks advance. */
static int stream_plan(job *j, ev_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    buf_clear(&j->snap);
    if (j->err_status) {
        pl->err = 1;
        j->ended = 1;
        return 0;
    }
    pl->head = !j->began && j->ep == EP_CHAT;
    j->began = 1;
    pl->version = j->version;
    pl->version_last = j->version_last;
    for (int i = 0; i < j->n; i++) {
        choice *c = &j->ch[i];
        size_t te = safe_end(j, c);
        int fin = c->done && !c->fin_sent;
        if (c->n == c->sent_ids && te == c->sent_text && !fin)
            continue;
        ev_choice *e = &pl->ch[pl->n++];
        *e = (ev_choice){.i = i, .a = c->sent_ids, .b = c->n, .fin = fin, .stop_last = fin && c->stop_tok,
                         .t0 = c->sent_text, .t1 = te, .copy = j->snap.len};
        if (!fin && te > c->sent_text) {
            int rc = buf_append(&j->snap, c->text.data + c->sent_text, te - c->sent_text);
            if (rc < 0)
                return rc;
        }
        c->sent_ids = c->n;
        c->sent_text = fin ? c->text_end : te;
        c->fin_sent |= fin;
    }
    pl->complete = j->state == JOB_COMPLETE;
    if (pl->complete)
        j->ended = 1;
    return 0;
}

/* The events of a plan into j->out (outside the lock). */
static int stream_write(serve *s, job *j, const ev_plan *pl)
{
    int chat = j->ep == EP_CHAT, rc = 0;
    const char *object = chat ? "chat.completion.chunk" : "text_completion";
    if (pl->err) {
        cJSON *o = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(o, "error");
        cJSON_AddStringToObject(e, "message", j->err);
        cJSON_AddStringToObject(e, "type", "server_error");
        cJSON_AddNumberToObject(e, "code", j->err_status);
        rc = put_event(j, o);
        return rc ? rc : buf_puts(&j->out, "data: [DONE]\n\n");
    }
    for (int i = 0; pl->head && i < j->n && rc == 0; i++) {
        cJSON *o = stream_head(s, j, object, pl->version, pl->version_last);
        cJSON *chs = cJSON_AddArrayToObject(o, "choices");
        cJSON *e = cJSON_CreateObject(), *d = cJSON_AddObjectToObject(e, "delta");
        cJSON_AddNumberToObject(e, "index", i);
        cJSON_AddStringToObject(d, "role", "assistant");
        cJSON_AddStringToObject(d, "content", "");
        cJSON_AddNullToObject(e, "logprobs");
        cJSON_AddNullToObject(e, "finish_reason");
        cJSON_AddItemToArray(chs, e);
        rc = put_event(j, o);
    }
    for (int k = 0; k < pl->n && rc == 0; k++) {
        const ev_choice *ev = &pl->ch[k];
        const choice *c = &j->ch[ev->i];
        const char *txt = ev->fin ? (c->text.data ? c->text.data + ev->t0 : "") : j->snap.data + ev->copy;
        size_t te = ev->t1;
        tc_parsed p;
        memset(&p, 0, sizeof p);
        int has_calls = 0;
        if (ev->fin && chat && j->ntools) {
            parse_calls(j, c, &p);
            has_calls = !p.format_error && p.ncalls;
            if (has_calls) { /* the calls go as tool_calls, not as text */
                long at = find_stop(&c->text, ev->t0, "<tool_call>");
                te = at >= 0 && (size_t)at < te ? (size_t)at : te;
            }
        }
        if (!j->logprobs && !has_calls) {
            size_t tn = te > ev->t0 ? te - ev->t0 : 0;
            rc = put_token_event(s, j, pl->version, pl->version_last, object, ev->i, tn ? txt : "", tn, ev->fin ? finish_name(j, c, 0) : NULL,
                                 c->ids + ev->a, ev->b - ev->a);
            tc_parsed_dispose(&p);
            continue;
        }
        cJSON *o = stream_head(s, j, object, pl->version, pl->version_last);
        cJSON *chs = cJSON_AddArrayToObject(o, "choices");
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "index", ev->i);
        cJSON *text = text_json(te > ev->t0 ? txt : "", te > ev->t0 ? te - ev->t0 : 0);
        if (chat) {
            cJSON *d = cJSON_AddObjectToObject(e, "delta");
            if (te > ev->t0)
                cJSON_AddItemToObject(d, "content", text);
            else
                cJSON_Delete(text);
            if (has_calls)
                cJSON_AddItemToObject(d, "tool_calls", calls_json(&p, 1));
            if (j->logprobs)
                cJSON_AddItemToObject(e, "logprobs", chat_logprobs(s, j, c, ev->a, ev->b));
            else
                cJSON_AddNullToObject(e, "logprobs");
        } else {
            cJSON_AddItemToObject(e, "text", text);
            if (j->logprobs)
                cJSON_AddItemToObject(e, "logprobs",
                                      completion_logprobs(s, j, c, ev->a, ev->b, ev->t0, ev->stop_last));
            else
                cJSON_AddNullToObject(e, "logprobs");
        }
        if (ev->fin)
            cJSON_AddStringToObject(e, "finish_reason", finish_name(j, c, has_calls));
        else
            cJSON_AddNullToObject(e, "finish_reason");
        cJSON_AddItemToObject(e, "token_ids", ids_json(c->ids + ev->a, ev->b - ev->a));
        cJSON_AddItemToArray(chs, e);
        tc_parsed_dispose(&p);
        rc = put_event(j, o);
    }
    if (rc == 0 && pl->complete) {
        if (j->include_usage) {
            cJSON *o = stream_head(s, j, object, pl->version, pl->version_last);
            cJSON_AddArrayToObject(o, "choices");
            cJSON_AddItemToObject(o, "usage", usage_json(j));
            rc = put_event(j, o);
        }
        if (rc == 0)
            rc = buf_puts(&j->out, "data: [DONE]\n\n");
    }
    return rc;
}

/* The next bytes of the stream: waits for news under the lock, writes
 * the events outside it so that the scheduler never waits for them. */
static long stream_next(void *ctx, char *out, size_t max)
{
    job *j = ctx;
    serve *s = j->s;
    for (;;) {
        if (j->out_pos < j->out.len) {
            size_t n = j->out.len - j->out_pos < max ? j->out.len - j->out_pos : max;
            memcpy(out, j->out.data + j->out_pos, n);
            j->out_pos += n;
            return (long)n;
        }
        if (j->ended)
            return 0;
        buf_clear(&j->out);
        j->out_pos = 0;
        ev_plan pl;
        pthread_mutex_lock(&s->mu);
        while (!has_news(j))
            pthread_cond_wait(&j->cv, &s->mu);
        int rc = stream_plan(j, &pl);
        pthread_mutex_unlock(&s->mu);
        if (rc == 0)
            rc = stream_write(s, j, &pl);
        if (rc < 0)
            return -1;
    }
}

/* The answer is over or the client left: a job still running is
 * cancelled, and freed once the scheduler let it go. */
static void stream_done(void *ctx)
{
    job *j = ctx;
    serve *s = j->s;
    pthread_mutex_lock(&s->mu);
    if (j->state != JOB_COMPLETE) {
        j->cancelled = 1;
        pthread_cond_signal(&s->work);
        while (j->state != JOB_COMPLETE)
            pthread_cond_wait(&j->cv, &s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    job_free(j);
}

/* ---- the handler ---------------------------------------------------------------- */

static int reply_models(serve *s, http_server_resp *resp)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "object", "list");
    cJSON *d = cJSON_AddArrayToObject(o, "data"), *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "id", s->name);
    cJSON_AddStringToObject(e, "object", "model");
    cJSON_AddNumberToObject(e, "created", 0);
    cJSON_AddStringToObject(e, "owned_by", "rl-fix");
    cJSON_AddNumberToObject(e, "max_model_len", s->m->cfg.max_seq);
    pthread_mutex_lock(&s->mu);
    cJSON_AddNumberToObject(e, "policy_version", (double)s->version);
    pthread_mutex_unlock(&s->mu);
    cJSON_AddItemToArray(d, e);
    return reply_json(resp, 200, o);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int reply_metrics(serve *s, http_server_resp *resp)
{
    buf_t b;
    buf_init(&b, 1u << 20);
    double lat[SERVE_LATENCY_WINDOW];
    pthread_mutex_lock(&s->mu);
    int nl = s->lat_count < SERVE_LATENCY_WINDOW ? (int)s->lat_count : SERVE_LATENCY_WINDOW;
    memcpy(lat, s->lat, (size_t)nl * sizeof *lat);
    buf_puts(&b, "# HELP rl_serve_requests_total Requests answered, by endpoint and HTTP status.\n"
                 "# TYPE rl_serve_requests_total counter\n");
    for (int i = 0; i < s->n_counts; i++)
        buf_printf(&b, "rl_serve_requests_total{endpoint=\"%s\",code=\"%d\"} %ld\n", EP_NAME[s->counts[i].ep],
                   s->counts[i].status, s->counts[i].n);
    buf_printf(&b,
               "# HELP rl_serve_prompt_tokens_total Prompt tokens of the requests started (one prompt per choice).\n"
               "# TYPE rl_serve_prompt_tokens_total counter\nrl_serve_prompt_tokens_total %ld\n"
               "# HELP rl_serve_prefix_tokens_reused_total Prompt tokens whose keys and values were reused, not prefilled.\n"
               "# TYPE rl_serve_prefix_tokens_reused_total counter\nrl_serve_prefix_tokens_reused_total %ld\n"
               "# HELP rl_serve_prefix_cache_entries Caches of finished sequences kept for prefix reuse.\n"
               "# TYPE rl_serve_prefix_cache_entries gauge\nrl_serve_prefix_cache_entries %d\n"
               "# HELP rl_serve_prefix_cache_bytes Bytes of those caches.\n"
               "# TYPE rl_serve_prefix_cache_bytes gauge\nrl_serve_prefix_cache_bytes %zu\n"
               "# HELP rl_serve_generation_tokens_total Tokens generated.\n"
               "# TYPE rl_serve_generation_tokens_total counter\nrl_serve_generation_tokens_total %ld\n"
               "# HELP rl_serve_steps_total Decoding steps of the batch.\n"
               "# TYPE rl_serve_steps_total counter\nrl_serve_steps_total %ld\n"
               "# HELP rl_serve_queue_length Requests waiting for room in the batch.\n"
               "# TYPE rl_serve_queue_length gauge\nrl_serve_queue_length %d\n"
               "# HELP rl_serve_running_requests Requests in the batch.\n"
               "# TYPE rl_serve_running_requests gauge\nrl_serve_running_requests %d\n"
               "# HELP rl_serve_batch_capacity Sequences the batch holds.\n"
               "# TYPE rl_serve_batch_capacity gauge\nrl_serve_batch_capacity %d\n"
               "# HELP rl_serve_policy_version Version of the weights decoding now.\n"
               "# TYPE rl_serve_policy_version gauge\nrl_serve_policy_version %ld\n"
               "# HELP rl_serve_weight_updates_total Weight updates applied (POST /v1/weights).\n"
               "# TYPE rl_serve_weight_updates_total counter\nrl_serve_weight_updates_total %ld\n",
               s->prompt_tokens, s->prefix_reused, s->prefix_entries, s->prefix_bytes, s->gen_tokens, s->steps, s->qlen, s->nactive, s->o.max_batch,
               s->version, s->swaps);
    double sum = s->lat_sum;
    long count = s->lat_count;
    pthread_mutex_unlock(&s->mu);
    qsort(lat, (size_t)nl, sizeof *lat, cmp_double);
    buf_puts(&b, "# HELP rl_serve_request_latency_seconds Time from a request's arrival to its last token "
                 "(quantiles over the last " "1024 requests).\n"
                 "# TYPE rl_serve_request_latency_seconds summary\n");
    static const double qs[] = {0.5, 0.9, 0.99};
    for (int i = 0; i < 3; i++) {
        double v = nl ? lat[(int)ceil(qs[i] * nl) - 1] : NAN;
        buf_printf(&b, "rl_serve_request_latency_seconds{quantile=\"%g\"} %.6f\n", qs[i], v);
    }
    buf_printf(&b, "rl_serve_request_latency_seconds_sum %.6f\nrl_serve_request_latency_seconds_count %ld\n", sum,
               count);
    int rc = http_reply(resp, 200, "text/plain; version=0.0.4", b.data, b.len);
    buf_dispose(&b);
    return rc;
}

static int handle_generate(serve *s, int ep, const http_server_req *req, http_server_resp *resp, int *status)
{
    perr pe = {0};
    job *j = calloc(1, sizeof *j);
    if (!j)
        return RL_ENOMEM;
    pthread_cond_init(&j->cv, NULL);
    j->ep = ep;
    j->s = s;
    j->t0 = clk_s();
    j->created = (long)time(NULL);
    buf_init(&j->out, 0);
    buf_init(&j->snap, (size_t)SERVE_N_MAX * RL_BUF_DEFAULT_MAX);
    buf_init(&j->scrub, 0);
    for (int i = 0; i < SERVE_N_MAX; i++)
        j->ch[i].slot = -1;
    j->doc = cJSON_ParseWithLength(req->body, req->body_len);
    int rc;
    if (!j->doc || !cJSON_IsObject(j->doc))
        rc = bad(&pe, 400, NULL, "request body: expected a JSON object");
    else
        rc = ep == EP_CHAT ? parse_chat(s, j, j->doc, &pe) : parse_completion(s, j, j->doc, &pe);
    char err[RL_ERR_MAX];
    if (rc == 0 && (rc = job_alloc_choices(j, err)) < 0)
        bad(&pe, 500, NULL, "%s", err);
    if (rc < 0) {
        job_free(j);
        *status = pe.status;
        return http_reply_error(resp, pe.status, pe.param,
                                pe.status == 404 && pe.param && !strcmp(pe.param, "model") ? "model_not_found" : NULL,
                                "%s", pe.msg);
    }
    uint64_t idn = j->seed ^ (uint64_t)clk_ns();
    snprintf(j->id, sizeof j->id, "%s-%016llx", ep == EP_CHAT ? "chatcmpl" : "cmpl", (unsigned long long)idn);

    pthread_mutex_lock(&s->mu);
    const char *refuse = s->stopping ? "the server is shutting down" : s->qlen >= s->o.max_queue ? "queue" : NULL;
    if (refuse) {
        int st = s->stopping ? 503 : 429;
        pthread_mutex_unlock(&s->mu);
        job_free(j);
        *status = st;
        if (st == 429)
            return http_reply_error(resp, 429, NULL, NULL, "the queue holds %d requests, its cap: retry later",
                                    s->o.max_queue);
        return http_reply_error(resp, 503, NULL, NULL, "%s", refuse);
    }
    if (s->qtail)
        s->qtail->next = j;
    else
        s->qhead = j;
    s->qtail = j;
    s->qlen++;
    s->requests++;
    pthread_cond_signal(&s->work);
    if (j->stream) {
        pthread_mutex_unlock(&s->mu);
        *status = 200;
        rc = http_reply_stream(resp, 200, "text/event-stream", stream_next, stream_done, j);
        if (rc == 0)
            http_reply_header(resp, "Cache-Control", "no-cache");
        return rc;
    }
    while (j->state != JOB_COMPLETE)
        pthread_cond_wait(&j->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
    if (j->err_status) {
        *status = j->err_status;
        rc = http_reply_error(resp, j->err_status, NULL, NULL, "%s", j->err);
    } else {
        *status = 200;
        rc = reply_result(s, j, resp);
    }
    job_free(j);
    return rc;
}

/* The first field where a loaded checkpoint's config differs from the
 * served model's, or NULL when they match (values in a and b). */
static const char *config_diff(const model_config *x, const model_config *y, double *a, double *b)
{
#define CFG_FIELD(f)                                                                                                   \
    if (x->f != y->f) {                                                                                                \
        *a = (double)x->f;                                                                                             \
        *b = (double)y->f;                                                                                             \
        return #f;                                                                                                     \
    }
    CFG_FIELD(vocab)
    CFG_FIELD(d_model)
    CFG_FIELD(n_layer)
    CFG_FIELD(n_head)
    CFG_FIELD(n_kv_head)
    CFG_FIELD(d_ff)
    CFG_FIELD(max_seq)
    CFG_FIELD(qk_norm)
    CFG_FIELD(head_dim)
    CFG_FIELD(untied)
    CFG_FIELD(qkv_bias)
    CFG_FIELD(rope_theta)
    CFG_FIELD(norm_eps)
#undef CFG_FIELD
    return NULL;
}

/* POST /v1/weights {"path": CKPT, "version": N}: loads CKPT (a file both
 * the trainer and this server see), checks it has the served model's
 * config, and waits until the scheduler copied it in between two steps. */
static int handle_weights(serve *s, const http_server_req *req, http_server_resp *resp, int *status)
{
    cJSON *doc = cJSON_ParseWithLength(req->body, req->body_len);
    const cJSON *jp = doc ? cJSON_GetObjectItemCaseSensitive(doc, "path") : NULL;
    const cJSON *jv = doc ? cJSON_GetObjectItemCaseSensitive(doc, "version") : NULL;
    int rc;
    *status = 400;
    if (!doc || !cJSON_IsObject(doc))
        rc = http_reply_error(resp, 400, NULL, NULL, "request body: expected a JSON object");
    else if (!cJSON_IsString(jp) || !jp->valuestring[0] || strlen(jp->valuestring) >= SERVE_WEIGHTS_PATH_MAX)
        rc = http_reply_error(resp, 400, "path", NULL, "path: expected the checkpoint's path (1..%d bytes)",
                              SERVE_WEIGHTS_PATH_MAX - 1);
    else if (!cJSON_IsNumber(jv) || jv->valuedouble < 0 || jv->valuedouble > 1e15 ||
             jv->valuedouble != (double)(long)jv->valuedouble)
        rc = http_reply_error(resp, 400, "version", NULL, "version: expected an integer >= 0");
    else
        rc = 1;
    if (rc != 1) {
        cJSON_Delete(doc);
        return rc;
    }
    long version = (long)jv->valuedouble;
    double t0 = clk_ms();
    model_opts mo;
    model_opts_default(&mo);
    mo.n_threads = 1; /* only read: its pool does no work */
    model *nm = NULL;
    char err[RL_ERR_MAX];
    if (model_load(&nm, NULL, jp->valuestring, &mo, err) < 0) {
        rc = http_reply_error(resp, 400, "path", NULL, "path: %s", err);
        cJSON_Delete(doc);
        return rc;
    }
    double a = 0, b = 0;
    const char *diff = config_diff(&nm->cfg, &s->m->cfg, &a, &b);
    if (diff || nm->n_params != s->m->n_params) {
        rc = http_reply_error(resp, 400, "path", NULL, "path: %.200s has %s %g, expected the served model's %g",
                              jp->valuestring, diff ? diff : "n_params", diff ? a : (double)nm->n_params,
                              diff ? b : (double)s->m->n_params);
        model_free(nm);
        cJSON_Delete(doc);
        return rc;
    }
    cJSON_Delete(doc);
    pthread_mutex_lock(&s->mu);
    if (s->stopping || s->pending) {
        int st = s->stopping ? 503 : 409;
        pthread_mutex_unlock(&s->mu);
        model_free(nm);
        *status = st;
        return http_reply_error(resp, st, NULL, NULL, "%s",
                                st == 503 ? "the server is shutting down"
                                          : "another weights update is being applied: retry when it is answered");
    }
    s->pending = nm;
    s->pending_version = version;
    pthread_cond_signal(&s->work);
    while (s->pending == nm && !s->stopping)
        pthread_cond_wait(&s->progress, &s->mu);
    int applied = s->pending != nm;
    if (!applied) { /* stopped first: the scheduler never took it */
        s->pending = NULL;
        model_free(nm);
    }
    pthread_mutex_unlock(&s->mu);
    if (!applied) {
        *status = 503;
        return http_reply_error(resp, 503, NULL, NULL, "the server is shutting down");
    }
    *status = 200;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "policy_version", (double)version);
    cJSON_AddNumberToObject(o, "ms", clk_ms() - t0);
    return reply_json(resp, 200, o);
}

int serve_handle(void *ctx, const http_server_req *req, http_server_resp *resp, char *err)
{
    serve *s = ctx;
    const char *path = req->path;
    int ep = !strcmp(path, "/v1/models")             ? EP_MODELS
             : !strcmp(path, "/v1/completions")      ? EP_COMPLETIONS
             : !strcmp(path, "/v1/chat/completions") ? EP_CHAT
             : !strcmp(path, "/health")              ? EP_HEALTH
             : !strcmp(path, "/metrics")             ? EP_METRICS
             : !strcmp(path, "/v1/weights")          ? EP_WEIGHTS
                                                     : EP_OTHER;
    int post = ep == EP_COMPLETIONS || ep == EP_CHAT || ep == EP_WEIGHTS;
    int status = 200, rc;
    if (ep == EP_OTHER) {
        status = 404;
        rc = http_reply_error(resp, 404, NULL, NULL, "%.100s: no such endpoint (expected /v1/models, /v1/completions, "
                                                     "/v1/chat/completions, /v1/weights, /health or /metrics)", path);
    } else if (!strncmp(path, "/v1/", 4) && !http_server_req_bearer_ok(req, s->o.token)) {
        status = 401;
        http_reply_header(resp, "WWW-Authenticate", "Bearer");
        rc = http_reply_error(resp, 401, "Authorization", NULL,
                              "Authorization: expected the header \"Bearer TOKEN\" with the server's token");
    } else if (strcmp(req->method, post ? "POST" : "GET")) {
        status = 405;
        http_reply_header(resp, "Allow", post ? "POST" : "GET");
        rc = http_reply_error(resp, 405, NULL, NULL, "%s %.100s: expected %s", req->method, path, post ? "POST" : "GET");
    } else if (ep == EP_MODELS) {
        rc = reply_models(s, resp);
    } else if (ep == EP_HEALTH) {
        pthread_mutex_lock(&s->mu);
        int stopping = s->stopping;
        pthread_mutex_unlock(&s->mu);
        status = stopping ? 503 : 200;
        const char *body = stopping ? "{\"status\": \"stopping\"}" : "{\"status\": \"ok\"}";
        rc = http_reply(resp, status, "application/json", body, strlen(body));
    } else if (ep == EP_METRICS) {
        rc = reply_metrics(s, resp);
    } else if (ep == EP_WEIGHTS) {
        rc = handle_weights(s, req, resp, &status);
    } else {
        rc = handle_generate(s, ep, req, resp, &status);
    }
    pthread_mutex_lock(&s->mu);
    count_status(s, ep, rc < 0 ? 500 : status);
    pthread_mutex_unlock(&s->mu);
    if (rc < 0)
        rl_err(err, rc, "%s %s: %s", req->method, path, rl_strerror(rc));
    return rc;
}
