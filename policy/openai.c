/* openai.c - the openai policy (openai.h): requests built, sent together,
 * replies read back into pol_response. */
#include "policy/openai.h"

#include "common/buf.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/str.h"
#include "http/http.h"
#include "protocol/chat.h"
#include "protocol/template.h"
#include "protocol/tokenizer.h"
#include "protocol/toolcall.h"
#include "policy/scripted.h"

#include <cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define OAI_TOKENIZER_DEFAULT "models/tokenizer.json"

typedef struct oai {
    oai_opts o;
    char *base_url, *model;
    char auth[HTTP_HEADER_LINE_MAX]; /* "Authorization: Bearer KEY" or "" */
    /* the servers of a comma-separated base_url: an episode's requests all
     * go to bases[episode % nbase] (its prefix stays in that server's cache) */
    char *bases[OAI_BASE_URLS_MAX];
    char urls[OAI_BASE_URLS_MAX][HTTP_URL_MAX + 32];
    size_t nbase;
    /* HTTP clients, one per pol_generate call under way: at most
     * max_inflight exist; a call takes a free one (the first is made at
     * open, to check the options) or makes one, else waits. Once no call
     * is under way, every client is in free_clients. */
    http_client_opts ho;
    int nclients, nfree;
    http_client *free_clients[OAI_CLIENTS_MAX];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    tok_t *tok;         /* completions */
    int32_t stop_id;    /* <|im_end|> in tok, or -1 */
} oai;

void oai_opts_default(oai_opts *o)
{
    memset(o, 0, sizeof *o);
    o->api = OAI_CHAT;
    o->max_inflight = OAI_INFLIGHT_DEFAULT;
    o->temperature = 0.7;
    o->top_p = 1.0;
    o->retries = -1;
}

int oai_api_parse(oai_api *out, const char *s, char *err)
{
    if (s && !strcmp(s, "chat"))
        *out = OAI_CHAT;
    else if (s && !strcmp(s, "completions"))
        *out = OAI_COMPLETIONS;
    else
        return rl_err(err, RL_EINVAL, "policy openai: api '%s': expected chat or completions", s ? s : "");
    return 0;
}

const char *oai_api_name(oai_api a) { return a == OAI_COMPLETIONS ? "completions" : "chat"; }

static void oai_free(policy *p)
{
    oai *c = p->impl;
    if (!c)
        return;
    for (int i = 0; i < c->nfree; i++)
        http_client_free(c->free_clients[i]);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    tok_free(c->tok);
    free(c->base_url);
    for (size_t i = 0; i < c->nbase; i++)
        free(c->bases[i]);
    free(c->model);
    memset(c->auth, 0, sizeof c->auth);
    free(c);
}

/* ---- requests ------------------------------------------------------------ */

/* The conversation as OpenAI messages. An assistant message goes as its
 * content and calls (its thinking stays here); a format-error observation
 * (a tool message answering no call) goes as a user message. */
static cJSON *messages_json(const chat *ch)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < ch->n; i++) {
        const chat_msg *m = &ch->msgs[i];
        cJSON *o = cJSON_CreateObject();
        if (m->role == CHAT_TOOL && !m->tool_call_id) {
            cJSON_AddStringToObject(o, "role", "user");
            cJSON_AddStringToObject(o, "content", m->content);
        } else if (m->role == CHAT_ASSISTANT) {
            cJSON_AddStringToObject(o, "role", "assistant");
            if (m->ncalls) {
                cJSON_AddStringToObject(o, "content", m->content);
                cJSON *calls = cJSON_AddArrayToObject(o, "tool_calls");
                for (size_t k = 0; k < m->ncalls; k++) {
                    cJSON *c = cJSON_CreateObject(), *f = cJSON_AddObjectToObject(c, "function");
                    cJSON_AddStringToObject(c, "id", m->calls[k].id ? m->calls[k].id : "");
                    cJSON_AddStringToObject(c, "type", "function");
                    cJSON_AddStringToObject(f, "name", m->calls[k].name ? m->calls[k].name : "");
                    cJSON_AddStringToObject(f, "arguments", m->calls[k].arguments ? m->calls[k].arguments : "{}");
                    cJSON_AddItemToArray(calls, c);
                }
            } else {
                /* no valid call: what was written, so the model sees its
                 * own mistake next to the observation about it */
                char *s = m->raw ? strndup(m->raw, m->raw_len) : NULL;
                cJSON_AddStringToObject(o, "content", s ? s : m->content);
                free(s);
            }
        } else {
            cJSON_AddStringToObject(o, "role", chat_role_name(m->role));
            cJSON_AddStringToObject(o, "content", m->content);
            if (m->role == CHAT_TOOL) {
                cJSON_AddStringToObject(o, "tool_call_id", m->tool_call_id);
                if (m->name)
                    cJSON_AddStringToObject(o, "name", m->name);
            }
        }
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static void add_u64(cJSON *o, const char *name, uint64_t v)
{
    char s[32];
    snprintf(s, sizeof s, "%llu", (unsigned long long)v);
    cJSON_AddItemToObject(o, name, cJSON_CreateRaw(s));
}

/* The JSON body of one request (caller frees). */
static int request_body(char **out, const oai *c, const pol_request *r, char *err)
{
    *out = NULL;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "model", c->model);
    cJSON_AddNumberToObject(o, "temperature", c->o.temperature);
    cJSON_AddNumberToObject(o, "top_p", c->o.top_p);
    if (r->max_tokens > 0)
        cJSON_AddNumberToObject(o, "max_tokens", r->max_tokens);
    /* the harness's seeds have 53 bits (POL_SEED_MAX): sent as they are,
     * read exactly by any server */
    add_u64(o, "seed", r->seed & POL_SEED_MAX);
    if (c->o.api == OAI_COMPLETIONS) {
        cJSON *prompt = NULL;
        int32_t *enc = NULL;
        const int32_t *ids = r->context_ids;
        size_t n = r->n_context_ids;
        if (!ids || !n) {
            int rc = tok_encode(&enc, &n, c->tok, r->context ? r->context : "", r->context ? r->context_len : 0,
                                TOK_SPECIAL_ALLOW, err);
            if (rc < 0) {
                cJSON_Delete(o);
                return rc;
            }
            ids = enc;
        }
        /* the ids as one raw JSON array: cJSON prints each number as a
         * double and reads it back to check, which would cost more than
         * the rest of the turn on a long context */
        buf_t arr;
        buf_init(&arr, n * 12 + 16); /* an int32 and its comma each */
        int brc = buf_putc(&arr, '[');
        for (size_t i = 0; brc == 0 && i < n; i++) {
            char num[16];
            int l = snprintf(num, sizeof num, i ? ",%d" : "%d", (int)ids[i]);
            brc = buf_append(&arr, num, (size_t)l);
        }
        if (brc == 0)
            brc = buf_putc(&arr, ']');
        free(enc);
        prompt = brc == 0 ? cJSON_CreateRaw(buf_str(&arr)) : NULL;
        buf_dispose(&arr);
        if (!prompt) {
            cJSON_Delete(o);
            return rl_err(err, RL_ENOMEM, "policy openai: out of memory");
        }
        cJSON_AddItemToObject(o, "prompt", prompt);
        cJSON_AddNumberToObject(o, "logprobs", 1);
        cJSON_AddTrueToObject(o, "return_tokens_as_token_ids");
    } else {
        if (!r->chat) {
            cJSON_Delete(o);
            return rl_err(err, RL_EINVAL, "policy openai (chat): the request carries no conversation");
        }
        cJSON_AddItemToObject(o, "messages", messages_json(r->chat));
        if (r->ntools)
            cJSON_AddItemToObject(o, "tools", tc_specs_json(r->tools, r->ntools));
        cJSON_AddTrueToObject(o, "logprobs");
    }
    *out = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!*out)
        return rl_err(err, RL_ENOMEM, "policy openai: out of memory");
    return 0;
}

/* ---- responses ----------------------------------------------------------- */

/* The server's own message from an OpenAI error body, cut for one line. */
static void error_message(char *out, size_t cap, const char *body)
{
    out[0] = '\0';
    cJSON *j = cJSON_Parse(body);
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
    const cJSON *m = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "message") : e;
    if (cJSON_IsString(m))
        snprintf(out, cap, ": %.160s", m->valuestring);
    cJSON_Delete(j);
    for (char *p = out; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
}

/* Token ids from vLLM's "token_id:N" strings; -1 when a string is not one. */
static int32_t token_id_str(const char *s)
{
    if (!s || strncmp(s, "token_id:", 9))
        return -1;
    char *end;
    long v = strtol(s + 9, &end, 10);
    return end == s + 9 || *end || v < 0 || v > INT32_MAX ? -1 : (int32_t)v;
}

/* Reads the sampled ids and logprobs of a completions choice, whichever
 * way the server gave them. 1 when exact ids were found. */
static int choice_ids(int32_t **ids, float **lps, size_t *n, const cJSON *ch)
{
    *ids = NULL;
    *lps = NULL;
    *n = 0;
    const cJSON *lp = cJSON_GetObjectItemCaseSensitive(ch, "logprobs");
    const cJSON *toks = cJSON_GetObjectItemCaseSensitive(lp, "tokens");
    const cJSON *tlps = cJSON_GetObjectItemCaseSensitive(lp, "token_logprobs");
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(lp, "content");
    const cJSON *tids = cJSON_GetObjectItemCaseSensitive(ch, "token_ids");
    size_t k = 0;
    if (cJSON_IsArray(toks) && cJSON_IsArray(tlps) && cJSON_GetArraySize(toks) == cJSON_GetArraySize(tlps))
        k = (size_t)cJSON_GetArraySize(toks);
    else if (cJSON_IsArray(content))
        k = (size_t)cJSON_GetArraySize(content);
    else
        return 0;
    if (k > (size_t)RL_MODEL_SEQ_MAX)
        return 0;
    int32_t *iv = malloc((k + 1) * sizeof *iv);
    float *fv = malloc((k + 1) * sizeof *fv);
    if (!iv || !fv) {
        free(iv);
        free(fv);
        return 0;
    }
    int ok = 1;
    if (cJSON_IsArray(toks) && cJSON_IsArray(tlps)) {
        int with_ids = cJSON_IsArray(tids) && (size_t)cJSON_GetArraySize(tids) == k;
        for (size_t i = 0; ok && i < k; i++) {
            const cJSON *t = cJSON_GetArrayItem(toks, (int)i), *l = cJSON_GetArrayItem(tlps, (int)i);
            const cJSON *d = with_ids ? cJSON_GetArrayItem(tids, (int)i) : NULL;
            iv[i] = d && cJSON_IsNumber(d) ? (int32_t)d->valuedouble : token_id_str(cJSON_GetStringValue(t));
            ok = iv[i] >= 0 && cJSON_IsNumber(l) && isfinite(l->valuedouble);
            if (ok)
                fv[i] = (float)l->valuedouble;
        }
    } else {
        for (size_t i = 0; ok && i < k; i++) {
            const cJSON *e = cJSON_GetArrayItem(content, (int)i);
            const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
            const cJSON *l = cJSON_GetObjectItemCaseSensitive(e, "logprob");
            ok = cJSON_IsNumber(id) && id->valuedouble >= 0 && id->valuedouble <= INT32_MAX && cJSON_IsNumber(l) &&
                 isfinite(l->valuedouble);
            if (ok) {
                iv[i] = (int32_t)id->valuedouble;
                fv[i] = (float)l->valuedouble;
            }
        }
    }
    if (!ok) {
        free(iv);
        free(fv);
        return 0;
    }
    *ids = iv;
    *lps = fv;
    *n = k;
    return 1;
}

/* Fills a completions response. */
static int read_completion(pol_response *r, const oai *c, const cJSON *ch, int *exact, char *err)
{
    const cJSON *fr = cJSON_GetObjectItemCaseSensitive(ch, "finish_reason");
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(ch, "text");
    r->finish = cJSON_IsString(fr) && !strcmp(fr->valuestring, "length") ? POL_FINISH_LENGTH : POL_FINISH_STOP;
    int32_t *ids;
    float *lps;
    size_t n;
    *exact = 0;
    if (choice_ids(&ids, &lps, &n, ch)) {
        int vocab = tok_vocab_size(c->tok);
        int ok = 1;
        for (size_t i = 0; ok && i < n; i++)
            ok = ids[i] < vocab;
        /* the ids a stopped reply ends with are its stop token: the
         * episode continues the context after them */
        int stopped = n > 0 && ids[n - 1] == c->stop_id;
        if (ok && (stopped || r->finish == POL_FINISH_LENGTH)) {
            r->finish = stopped ? POL_FINISH_STOP : POL_FINISH_LENGTH;
            r->ids = ids;
            r->logprobs = lps;
            r->n_ids = n;
            *exact = 1;
            return tok_decode(&r->text, &r->text_len, c->tok, ids, n - (size_t)stopped, err);
        }
        free(ids);
        free(lps);
    }
    if (!cJSON_IsString(text))
        return rl_err(err, RL_EPARSE, "expected choices[0].text to be a string");
    size_t len = strlen(text->valuestring);
    if (str_has_suffix(text->valuestring, "<|im_end|>"))
        len -= strlen("<|im_end|>");
    r->text = strndup(text->valuestring, len);
    if (!r->text)
        return rl_err(err, RL_ENOMEM, "out of memory");
    r->text_len = len;
    return 0;
}

/* Fills a chat response: the message in the tool-call format of the
 * template kind the context was rendered with. */
static int read_chat(pol_response *r, const cJSON *ch, tpl_kind kind, char *err)
{
    const cJSON *fr = cJSON_GetObjectItemCaseSensitive(ch, "finish_reason");
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(ch, "message");
    if (!cJSON_IsObject(msg))
        return rl_err(err, RL_EPARSE, "expected choices[0].message to be an object");
    r->finish = cJSON_IsString(fr) && !strcmp(fr->valuestring, "length") ? POL_FINISH_LENGTH : POL_FINISH_STOP;
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(msg, "content");
    const cJSON *calls = cJSON_GetObjectItemCaseSensitive(msg, "tool_calls");
    /* a reasoning model's thinking (vLLM and SGLang "reasoning_content",
     * others "reasoning") becomes the reply's think block, which the
     * episode keeps as the assistant's reasoning */
    const cJSON *reasoning = cJSON_GetObjectItemCaseSensitive(msg, "reasoning_content");
    if (!cJSON_IsString(reasoning))
        reasoning = cJSON_GetObjectItemCaseSensitive(msg, "reasoning");
    buf_t out;
    buf_init(&out, RL_OAI_REPLY_MAX);
    if (cJSON_IsString(reasoning) && reasoning->valuestring[0] &&
        !(cJSON_IsString(content) && !strncmp(content->valuestring, "<think>", 7)))
        buf_printf(&out, "<think>\n%s\n</think>\n\n", reasoning->valuestring);
    if (cJSON_IsString(content))
        buf_puts(&out, content->valuestring);
    size_t nc = cJSON_IsArray(calls) ? (size_t)cJSON_GetArraySize(calls) : 0;
    for (size_t i = 0; i < nc; i++) {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(calls, (int)i), "function");
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "name"));
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(f, "arguments");
        if (!name) {
            buf_dispose(&out);
            return rl_err(err, RL_EPARSE, "expected tool_calls[%zu].function.name to be a string", i);
        }
        char *atext = cJSON_IsString(args) ? strdup(args->valuestring)
                      : cJSON_IsObject(args) ? cJSON_PrintUnformatted(args) : strdup("{}");
        cJSON *aj = atext ? cJSON_Parse(atext) : NULL;
        if (cJSON_IsObject(aj)) {
            chat_call cc = {.id = "", .name = (char *)name, .arguments = atext};
            chat_msg m = {.role = CHAT_ASSISTANT, .content = "", .calls = &cc, .ncalls = 1};
            size_t l = 0;
            char *t = tpl_assistant_text_as(&m, kind, 0, &l);
            if (t) {
                if (out.len)
                    buf_puts(&out, kind == TPL_QWEN3 ? "\n" : "\n\n");
                /* the canonical text of a message with only this call */
                const char *s = t;
                while (*s == '\n')
                    s++;
                buf_puts(&out, s);
            }
            free(t);
        } else {
            /* arguments that are not a JSON object: written in the JSON
             * style as they came, for the parser to reject with its
             * usual observation */
            buf_printf(&out, "%s<tool_call>\n{\"name\": \"%s\", \"arguments\": %s}\n</tool_call>",
                       out.len ? "\n\n" : "", name, atext ? atext : "null");
        }
        cJSON_Delete(aj);
        free(atext);
    }
    r->text = buf_detach(&out, &r->text_len);
    if (!r->text)
        return rl_err(err, RL_ELIMIT, "the reply is over %u bytes", (unsigned)RL_OAI_REPLY_MAX);
    return 0;
}

/* Reads one HTTP answer into r (error set on failure) and its meta. */
static void read_response(pol_response *r, const oai *c, const pol_request *req, const http_response *hr, int hrc,
                          const char *herr)
{
    char err[RL_ERR_MAX];
    const char *base = c->bases[(size_t)(req->episode < 0 ? 0 : req->episode) % c->nbase];
    const char *path = c->o.api == OAI_COMPLETIONS ? "completions" : "chat/completions";
    r->gen_ms = hr->elapsed_ms > 0 ? hr->elapsed_ms : 1;
    if (hrc < 0) {
        r->error = strdup(herr);
        return;
    }
    if (hr->status != 200) {
        char m[200];
        error_message(m, sizeof m, hr->body ? hr->body : "");
        snprintf(err, sizeof err, "POST %s/%s: status %ld%s (%d attempts)", base, path, hr->status, m,
                 hr->attempts);
        r->error = strdup(err);
        return;
    }
    cJSON *j = cJSON_Parse(hr->body);
    const cJSON *choices = cJSON_GetObjectItemCaseSensitive(j, "choices");
    const cJSON *ch = cJSON_GetArrayItem(choices, 0);
    int rc = 0, exact = 0;
    err[0] = '\0';
    if (!cJSON_IsObject(j))
        rc = rl_err(err, RL_EPARSE, "malformed JSON (%zu bytes), expected an OpenAI %s object", hr->body_len,
                    c->o.api == OAI_COMPLETIONS ? "completion" : "chat completion");
    else if (!cJSON_IsObject(ch))
        rc = rl_err(err, RL_EPARSE, "expected a non-empty choices array");
    else if (c->o.api == OAI_COMPLETIONS)
        rc = read_completion(r, c, ch, &exact, err);
    else
        rc = read_chat(r, ch, (tpl_kind)scripted_template(req->context, req->context_len), err);
    if (rc < 0) {
        free(r->text);
        free(r->ids);
        free(r->logprobs);
        r->text = NULL;
        r->ids = NULL;
        r->logprobs = NULL;
        r->n_ids = 0;
        char line[RL_ERR_MAX + 64];
        snprintf(line, sizeof line, "POST %s/%s: %s", base, path, err);
        r->error = strndup(line, RL_ERR_MAX - 1);
        cJSON_Delete(j);
        return;
    }
    if (c->o.api == OAI_CHAT) {
        const cJSON *pids = cJSON_GetObjectItemCaseSensitive(j, "prompt_token_ids");
        size_t k = cJSON_IsArray(pids) ? (size_t)cJSON_GetArraySize(pids) : 0;
        if (k && k <= (size_t)RL_MODEL_SEQ_MAX && (r->context_ids = malloc(k * sizeof *r->context_ids))) {
            const cJSON *e;
            size_t i = 0;
            cJSON_ArrayForEach(e, pids) r->context_ids[i++] = cJSON_IsNumber(e) ? (int32_t)e->valuedouble : -1;
            r->n_context_ids = k;
        }
    }
    cJSON *meta = cJSON_CreateObject();
    cJSON_AddStringToObject(meta, "api", oai_api_name(c->o.api));
    const char *served = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "model"));
    cJSON_AddStringToObject(meta, "model", served ? served : c->model);
    const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "id"));
    if (id)
        cJSON_AddStringToObject(meta, "id", id);
    char rid[128];
    if (http_response_header(hr, "x-request-id", rid, sizeof rid) > 0)
        cJSON_AddStringToObject(meta, "request_id", rid);
    const cJSON *usage = cJSON_GetObjectItemCaseSensitive(j, "usage");
    if (cJSON_IsObject(usage))
        cJSON_AddItemToObject(meta, "usage", cJSON_Duplicate(usage, 1));
    cJSON_AddNumberToObject(meta, "latency_ms", (double)hr->elapsed_ms);
    cJSON_AddNumberToObject(meta, "attempts", hr->attempts);
    cJSON_AddBoolToObject(meta, "tokens_exact", exact);
    /* grpo serve: the weights' version that drew the first token (and the
     * last, when they changed during the request) */
    const cJSON *pv = cJSON_GetObjectItemCaseSensitive(j, "policy_version");
    const cJSON *pvl = cJSON_GetObjectItemCaseSensitive(j, "policy_version_last");
    if (cJSON_IsNumber(pv) && pv->valuedouble >= 0 && pv->valuedouble < 1e15) {
        r->policy_version = (long)pv->valuedouble;
        cJSON_AddNumberToObject(meta, "policy_version", pv->valuedouble);
        if (cJSON_IsNumber(pvl))
            cJSON_AddNumberToObject(meta, "policy_version_last", pvl->valuedouble);
    }
    if (c->nbase > 1)
        cJSON_AddStringToObject(meta, "base_url", base);
    r->meta = cJSON_PrintUnformatted(meta);
    cJSON_Delete(meta);
    cJSON_Delete(j);
}

/* A client for one call: a free one, a new one while fewer than
 * max_inflight exist, else the next one given back. */
static int client_take(http_client **out, oai *c, char *err)
{
    int cap = c->o.max_inflight < OAI_CLIENTS_MAX ? c->o.max_inflight : OAI_CLIENTS_MAX;
    pthread_mutex_lock(&c->mu);
    while (c->nfree == 0 && c->nclients >= cap)
        pthread_cond_wait(&c->cv, &c->mu);
    int rc = 0;
    if (c->nfree > 0)
        *out = c->free_clients[--c->nfree];
    else if ((rc = http_client_new(out, &c->ho, err)) == 0)
        c->nclients++;
    pthread_mutex_unlock(&c->mu);
    return rc;
}

static void client_give(oai *c, http_client *h)
{
    pthread_mutex_lock(&c->mu);
    c->free_clients[c->nfree++] = h;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

static int oai_generate(policy *p, pol_response *resp, const pol_request *req, size_t n, char *err)
{
    oai *c = p->impl;
    memset(resp, 0, n * sizeof *resp);
    if (n == 0)
        return 0;
    char **bodies = calloc(n, sizeof *bodies);
    http_request *hq = calloc(n, sizeof *hq);
    http_response *hr = calloc(n, sizeof *hr);
    int *rcs = calloc(n, sizeof *rcs);
    char(*errs)[RL_ERR_MAX] = calloc(n, sizeof *errs);
    const char *hdr[] = {c->auth[0] ? c->auth : NULL, NULL};
    int rc = 0;
    if (!bodies || !hq || !hr || !rcs || !errs)
        rc = rl_err(err, RL_ENOMEM, "policy openai: out of memory");
    size_t ns = 0;
    size_t *which = rc == 0 ? calloc(n, sizeof *which) : NULL;
    if (rc == 0 && !which)
        rc = rl_err(err, RL_ENOMEM, "policy openai: out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char berr[RL_ERR_MAX];
        int brc = request_body(&bodies[i], c, &req[i], berr);
        if (brc == RL_ENOMEM) {
            rc = rl_err(err, RL_ENOMEM, "%s", berr);
            break;
        }
        if (brc < 0) {
            resp[i].error = strdup(berr);
            continue;
        }
        const char *url = c->urls[(size_t)(req[i].episode < 0 ? 0 : req[i].episode) % c->nbase];
        hq[ns] = (http_request){.method = "POST", .url = url, .headers = hdr,
                                .content_type = "application/json", .body = bodies[i],
                                .body_len = strlen(bodies[i])};
        which[ns++] = i;
    }
    http_client *h = NULL;
    if (rc == 0 && ns && (rc = client_take(&h, c, err)) == 0) {
        rc = http_client_many(h, hr, rcs, errs, hq, ns, c->o.max_inflight, err);
        client_give(c, h);
    }
    for (size_t k = 0; rc == 0 && k < ns; k++) {
        read_response(&resp[which[k]], c, &req[which[k]], &hr[k], rcs[k], errs[k]);
        http_response_dispose(&hr[k]);
    }
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (!resp[i].error && !resp[i].text && !(resp[i].text = strdup("")))
            rc = rl_err(err, RL_ENOMEM, "policy openai: out of memory");
    for (size_t i = 0; bodies && i < n; i++)
        free(bodies[i]);
    if (rc < 0)
        for (size_t i = 0; i < n; i++)
            pol_response_dispose(&resp[i]);
    free(bodies);
    free(hq);
    free(hr);
    free(rcs);
    free(errs);
    free(which);
    return rc;
}

static const pol_vtable OAI_VT = {oai_generate, oai_free};

/* One base URL of --base-url. */
static int check_base(const char *u, char *err)
{
    if (strncmp(u, "http://", 7) && strncmp(u, "https://", 8))
        return rl_err(err, RL_EINVAL, "policy openai: --base-url %.200s: expected an http:// or https:// URL", u);
    if (strlen(u) > HTTP_URL_MAX || strpbrk(u, " \t\r\n?#"))
        return rl_err(err, RL_EINVAL,
                      "policy openai: --base-url %.200s: expected a URL without blanks, query or fragment, under %d bytes",
                      u, HTTP_URL_MAX);
    const char *host = strstr(u, "://") + 3;
    if (!*host || *host == '/')
        return rl_err(err, RL_EINVAL, "policy openai: --base-url %.200s: expected a host after '://'", u);
    const char *auth_end = strchr(host, '/');
    const char *at = strchr(host, '@');
    if (at && (!auth_end || at < auth_end))
        return rl_err(err, RL_EINVAL,
                      "policy openai: --base-url: expected no user info in the URL (put the key in OPENAI_API_KEY or --api-key-env)");
    return 0;
}

int oai_policy_new(policy **out, const oai_opts *o, char *err)
{
    *out = NULL;
    if (!o->base_url || !o->base_url[0])
        return rl_err(err, RL_EINVAL, "policy openai: expected --base-url URL (e.g. http://127.0.0.1:8000/v1)");
    if (strlen(o->base_url) > (size_t)OAI_BASE_URLS_MAX * (HTTP_URL_MAX + 1))
        return rl_err(err, RL_EINVAL, "policy openai: --base-url: expected at most %d URLs", OAI_BASE_URLS_MAX);
    if (!o->model || !o->model[0] || strlen(o->model) > 256)
        return rl_err(err, RL_EINVAL, "policy openai: expected --model NAME (the served model's name, 1-256 bytes)");
    if (o->max_inflight < 1 || o->max_inflight > HTTP_MANY_INFLIGHT_MAX)
        return rl_err(err, RL_EINVAL, "policy openai: --max-inflight %d: expected 1..%d", o->max_inflight,
                      HTTP_MANY_INFLIGHT_MAX);
    if (!(o->temperature >= 0 && o->temperature <= 10) || !(o->top_p > 0 && o->top_p <= 1))
        return rl_err(err, RL_EINVAL, "policy openai: temperature %g, top_p %g: expected 0..10 and (0, 1]",
                      o->temperature, o->top_p);
    const char *kv = o->api_key_env && o->api_key_env[0] ? o->api_key_env : "OPENAI_API_KEY";
    const char *key = getenv(kv);
    if (o->api_key_env && o->api_key_env[0] && !key)
        return rl_err(err, RL_EINVAL, "policy openai: --api-key-env %s: the variable is not set", kv);
    if (key && (strlen(key) > HTTP_HEADER_LINE_MAX - 40 || strpbrk(key, "\r\n")))
        return rl_err(err, RL_EINVAL, "policy openai: the key in %s: expected one line under %d bytes", kv,
                      HTTP_HEADER_LINE_MAX - 40);
    policy *p = calloc(1, sizeof *p);
    oai *c = calloc(1, sizeof *c);
    if (!p || !c) {
        free(p);
        free(c);
        return rl_err(err, RL_ENOMEM, "policy openai: out of memory");
    }
    p->vt = &OAI_VT;
    p->impl = c;
    p->concurrent = 1;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    c->o = *o;
    c->stop_id = -1;
    c->base_url = strdup(o->base_url);
    c->model = strdup(o->model);
    int rc = 0;
    if (!c->base_url || !c->model)
        rc = rl_err(err, RL_ENOMEM, "policy openai: out of memory");
    /* a comma-separated list: each base without its trailing slashes */
    for (const char *u = c->base_url; rc == 0 && u && *u;) {
        size_t l = strcspn(u, ",");
        if (c->nbase == OAI_BASE_URLS_MAX) {
            rc = rl_err(err, RL_EINVAL, "policy openai: --base-url: expected at most %d URLs", OAI_BASE_URLS_MAX);
            break;
        }
        char *b = strndup(u, l);
        if (!b) {
            rc = rl_err(err, RL_ENOMEM, "policy openai: out of memory");
            break;
        }
        c->bases[c->nbase++] = b;
        size_t bl = strlen(b);
        while (bl && b[bl - 1] == '/')
            b[--bl] = '\0';
        if ((rc = check_base(b, err)) < 0)
            break;
        snprintf(c->urls[c->nbase - 1], sizeof c->urls[0], "%s/%s", b,
                 o->api == OAI_COMPLETIONS ? "completions" : "chat/completions");
        u += l;
        if (*u == ',')
            u++;
    }
    if (rc == 0 && c->nbase == 0)
        rc = rl_err(err, RL_EINVAL, "policy openai: expected --base-url URL (e.g. http://127.0.0.1:8000/v1)");
    if (rc == 0 && c->nbase == 1) /* the one base as given, without its trailing slashes */
        str_copy(c->base_url, strlen(c->base_url) + 1, c->bases[0]);
    c->o.base_url = c->base_url;
    c->o.model = c->model;
    c->o.api_key_env = NULL;
    c->o.tokenizer = NULL;
    if (key)
        snprintf(c->auth, sizeof c->auth, "Authorization: Bearer %s", key);
    if (rc == 0 && o->api == OAI_COMPLETIONS) {
        const char *tp = o->tokenizer && o->tokenizer[0] ? o->tokenizer : OAI_TOKENIZER_DEFAULT;
        char terr[RL_ERR_MAX];
        if ((rc = tok_load(&c->tok, tp, terr)) < 0)
            rl_err(err, rc, "policy openai (completions): the harness tokenizer: %s", terr);
        else if ((c->stop_id = tok_special_id(c->tok, "<|im_end|>")) < 0)
            rc = rl_err(err, RL_EINVAL, "policy openai (completions): tokenizer %s has no <|im_end|> token", tp);
        p->tok = c->tok;
    }
    if (rc == 0) {
        http_client_opts ho;
        http_client_opts_default(&ho);
        if (o->timeout_ms > 0) {
            ho.timeout_ms = o->timeout_ms;
            if (ho.connect_timeout_ms > ho.timeout_ms)
                ho.connect_timeout_ms = ho.timeout_ms;
        }
        if (o->retries >= 0)
            ho.retries = o->retries;
        if (ho.backoff_ms > ho.backoff_max_ms)
            ho.backoff_ms = ho.backoff_max_ms;
        ho.log = o->log;
        ho.log_ctx = o->log_ctx;
        c->ho = ho;
        if ((rc = http_client_new(&c->free_clients[0], &ho, err)) == 0)
            c->nclients = c->nfree = 1;
    }
    if (rc < 0) {
        pol_free(p);
        return rc;
    }
    snprintf(p->name, sizeof p->name, "openai:%s", c->model);
    *out = p;
    return 0;
}

int oai_open(policy **out, const pol_env *env, char *err)
{
    *out = NULL;
    oai_opts o;
    oai_opts_default(&o);
    o.base_url = env->base_url;
    o.model = env->model;
    if (env->api) {
        int rc = oai_api_parse(&o.api, env->api, err);
        if (rc < 0)
            return rc;
    }
    o.api_key_env = env->api_key_env;
    o.tokenizer = env->tokenizer;
    if (env->max_inflight)
        o.max_inflight = env->max_inflight;
    o.temperature = env->temperature;
    o.top_p = env->top_p;
    o.log = env->log;
    o.log_ctx = env->log_ctx;
    if (env->timeout_ms > 0)
        o.timeout_ms = env->timeout_ms;
    if (env->retries > 0)
        o.retries = env->retries - 1;
    return oai_policy_new(out, &o, err);
}
