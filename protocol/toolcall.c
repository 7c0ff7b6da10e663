/* toolcall.c - parses an assistant message into think, content and calls.
 *
 * The parser walks the raw text once: think block, content up to the first
 * <tool_call>, then one block after another. Every error is reported as a
 * single line naming the defect and what was expected; the first defect
 * wins and no call is returned (a half-valid message runs nothing, so the
 * policy learns the format rather than which half survived).
 */
#include "protocol/toolcall.h"

#include "common/limits.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIT(s) s, (sizeof(s) - 1)

typedef struct pctx {
    const char *end;
    const tc_spec *specs;
    size_t nspecs;
    char *msg; /* RL_ERR_MAX */
} pctx;

void tc_opts_default(tc_opts *o)
{
    o->max_calls = RL_TC_CALLS_MAX;
    o->first_id = 0;
}

const char *tc_type_name(tc_type t)
{
    switch (t) {
    case TC_STRING: return "string";
    case TC_INT: return "integer";
    case TC_STRINGS: return "array of strings";
    }
    return "?";
}

const tc_spec *tc_find_spec(const tc_spec *specs, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(specs[i].name, name) == 0)
            return &specs[i];
    return NULL;
}

static const tc_param *find_param(const tc_spec *s, const char *name)
{
    for (size_t i = 0; i < s->nparams; i++)
        if (strcmp(s->params[i].name, name) == 0)
            return &s->params[i];
    return NULL;
}

/* ---- small text helpers -------------------------------------------- */

static int starts(const char *p, const char *end, const char *lit, size_t n)
{
    return (size_t)(end - p) >= n && memcmp(p, lit, n) == 0;
}

static const char *find(const char *p, const char *end, const char *lit, size_t n)
{
    if (p >= end)
        return NULL;
    return memmem(p, (size_t)(end - p), lit, n);
}

static int is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && is_ws(*p))
        p++;
    return p;
}

/* A printable, one-line excerpt of [p, end) for error messages: at most
 * RL_TC_QUOTE_MAX bytes of the text, newlines shown as \n, never cut inside
 * a UTF-8 sequence. out must hold QUOTE_BUF bytes. */
#define QUOTE_BUF (2 * RL_TC_QUOTE_MAX + 8)
static const char *quote(char *out, const char *p, const char *end)
{
    size_t avail = (size_t)(end - p), n = avail < RL_TC_QUOTE_MAX ? avail : RL_TC_QUOTE_MAX;
    while (n > 0 && n < avail && ((unsigned char)p[n] & 0xC0) == 0x80)
        n--;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '\n') {
            out[o++] = '\\';
            out[o++] = 'n';
        } else {
            out[o++] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
        }
    }
    if (n < avail) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
    return out;
}

static int fail(pctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(pctx *x, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->msg, RL_ERR_MAX, fmt, ap);
    va_end(ap);
    return RL_EPARSE;
}

static void spec_names(char *out, size_t n, const tc_spec *specs, size_t ns)
{
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < ns && o < n; i++)
        o += (size_t)snprintf(out + o, n - o, "%s%s", i ? ", " : "", specs[i].name);
}

static void param_names(char *out, size_t n, const tc_spec *s)
{
    size_t o = 0;
    out[0] = '\0';
    if (!s->nparams)
        snprintf(out, n, "none");
    for (size_t i = 0; i < s->nparams && o < n; i++)
        o += (size_t)snprintf(out + o, n - o, "%s%s", i ? ", " : "", s->params[i].name);
}

static char *dup_range(const char *p, const char *end)
{
    size_t n = (size_t)(end - p);
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, p, n);
        s[n] = '\0';
    }
    return s;
}

/* Copy of [p, end) without the surrounding whitespace. */
static char *dup_trim(const char *p, const char *end)
{
    p = skip_ws(p, end);
    while (end > p && is_ws(end[-1]))
        end--;
    return dup_range(p, end);
}

/* ---- argument validation (shared by both styles) ------------------- */

/* A number is a valid integer argument when integral and exactly
 * representable (|v| < 2^53). */
static int int_ok(const cJSON *v)
{
    if (!cJSON_IsNumber(v))
        return 0;
    double d = v->valuedouble;
    return isfinite(d) && d == floor(d) && fabs(d) < 9007199254740992.0;
}

static int type_ok(pctx *x, const tc_spec *s, const tc_param *p, const cJSON *v)
{
    switch (p->type) {
    case TC_STRING:
        if (cJSON_IsString(v))
            return 0;
        break;
    case TC_INT:
        if (int_ok(v))
            return 0;
        break;
    case TC_STRINGS:
        if (!cJSON_IsArray(v))
            break;
        if (cJSON_GetArraySize(v) > RL_TC_ARRAY_MAX)
            return fail(x, "parameter %s of %s has %d items: at most %d", p->name, s->name,
                        cJSON_GetArraySize(v), RL_TC_ARRAY_MAX);
        for (const cJSON *e = v->child; e; e = e->next)
            if (!cJSON_IsString(e))
                return fail(x, "parameter %s of %s: expected an array of strings, "
                               "found a non-string item", p->name, s->name);
        return 0;
    }
    return fail(x, "parameter %s of %s: expected %s", p->name, s->name, tc_type_name(p->type));
}

/* Checks one named value against the spec and moves it into args (val is
 * consumed either way). */
static int arg_add(pctx *x, const tc_spec *s, cJSON *args, const char *name, cJSON *val)
{
    char names[256];
    const tc_param *p = find_param(s, name);
    int rc = 0;
    if (!p) {
        param_names(names, sizeof names, s);
        rc = fail(x, "unknown parameter \"%s\" for %s: expected one of: %s", name, s->name,
                  names);
    } else if (cJSON_GetObjectItemCaseSensitive(args, name)) {
        rc = fail(x, "parameter %s given twice in the call to %s: expected it once", name,
                  s->name);
    } else if (cJSON_GetArraySize(args) >= RL_TC_PARAMS_MAX) {
        rc = fail(x, "too many parameters in the call to %s: at most %d", s->name,
                  RL_TC_PARAMS_MAX);
    } else {
        rc = type_ok(x, s, p, val);
    }
    if (rc) {
        cJSON_Delete(val);
        return rc;
    }
    if (!cJSON_AddItemToObject(args, name, val)) {
        cJSON_Delete(val);
        return RL_ENOMEM;
    }
    return 0;
}

static int args_complete(pctx *x, const tc_spec *s, const cJSON *args)
{
    for (size_t i = 0; i < s->nparams; i++)
        if (s->params[i].required &&
            !cJSON_GetObjectItemCaseSensitive(args, s->params[i].name))
            return fail(x, "missing required parameter %s in the call to %s", s->params[i].name,
                        s->name);
    return 0;
}

/* Converts an XML parameter value (raw text) to the JSON value its type
 * asks for. */
static int xml_value(cJSON **out, pctx *x, const tc_spec *s, const tc_param *p,
                     const char *v, const char *vend)
{
    char q[QUOTE_BUF];
    *out = NULL;
    if (p->type == TC_STRING) {
        char *t = dup_range(v, vend);
        *out = t ? cJSON_CreateString(t) : NULL;
        free(t);
        return *out ? 0 : RL_ENOMEM;
    }
    char *t = dup_trim(v, vend);
    if (!t)
        return RL_ENOMEM;
    int rc = 0;
    if (p->type == TC_INT) {
        char *e;
        errno = 0;
        long long n = strtoll(t, &e, 10);
        if (!*t || *e || errno || llabs(n) >= (1LL << 53))
            rc = fail(x, "parameter %s of %s: expected an integer, got \"%s\"", p->name, s->name,
                      quote(q, t, t + strlen(t)));
        else if (!(*out = cJSON_CreateNumber((double)n)))
            rc = RL_ENOMEM;
    } else {
        *out = cJSON_Parse(t);
        if (!*out || !cJSON_IsArray(*out))
            rc = fail(x, "parameter %s of %s: expected a JSON array of strings like "
                         "[\"a\", \"b\"], got \"%s\"", p->name, s->name,
                      quote(q, t, t + strlen(t)));
    }
    free(t);
    if (rc) {
        cJSON_Delete(*out);
        *out = NULL;
    }
    return rc;
}

/* ---- XML style ------------------------------------------------------ */

/* Reads NAME in "<tag=NAME>" at p (just after '='); *after points past '>'. */
static int tag_name(char *name, pctx *x, const char *p, const char **after, const char *tag)
{
    char q[QUOTE_BUF];
    const char *e = p;
    while (e < x->end && e - p <= RL_TC_NAME_MAX &&
           (((*e | 32) >= 'a' && (*e | 32) <= 'z') || (*e >= '0' && *e <= '9') || *e == '_' ||
            *e == '-' || *e == '.'))
        e++;
    if (e == p || e >= x->end || *e != '>' || e - p > RL_TC_NAME_MAX)
        return fail(x, "malformed <%s=...> tag at \"%s\": expected <%s=NAME> with NAME of "
                       "letters, digits, _ . -", tag, quote(q, p - strlen(tag) - 2,
                                                           x->end), tag);
    memcpy(name, p, (size_t)(e - p));
    name[e - p] = '\0';
    *after = e + 1;
    return 0;
}

/* The end of a parameter value: the first "</parameter>" that is followed
 * (after whitespace) by <parameter=, </function>, </tool_call> or the end
 * of the text. A "</parameter>" inside code is thus part of the value
 * unless a real tag follows it (documented in docs/chat-format.md). */
static const char *value_end(pctx *x, const char *v, int *seen_close)
{
    *seen_close = 0;
    for (const char *q = find(v, x->end, LIT("</parameter>")); q;
         q = find(q + 1, x->end, LIT("</parameter>"))) {
        *seen_close = 1;
        const char *r = skip_ws(q + 12, x->end);
        if (r == x->end || starts(r, x->end, LIT("<parameter=")) ||
            starts(r, x->end, LIT("</function>")) || starts(r, x->end, LIT("</tool_call>")))
            return q;
    }
    return NULL;
}

static int xml_param(pctx *x, const tc_spec *s, cJSON *args, const char *p, const char **after)
{
    char name[RL_TC_NAME_MAX + 1];
    int rc = tag_name(name, x, p + 11, &p, "parameter");
    if (rc)
        return rc;
    const tc_param *tp = find_param(s, name);
    if (!tp) /* report before the value, which may be anything */
        return arg_add(x, s, args, name, NULL);
    int seen;
    const char *vend = value_end(x, p, &seen);
    if (!vend) {
        if (seen)
            return fail(x, "unexpected text after </parameter> in the call to %s: expected "
                           "<parameter=NAME> or </function>", s->name);
        return fail(x, "unclosed <parameter=%s> in the call to %s: expected </parameter> "
                       "after the value", name, s->name);
    }
    *after = vend + 12;
    /* One newline after the opening tag and one before the closing tag
     * belong to the layout, not to the value. */
    if (p < vend && *p == '\n')
        p++;
    if (vend > p && vend[-1] == '\n')
        vend--;
    cJSON *val;
    if ((rc = xml_value(&val, x, s, tp, p, vend)))
        return rc;
    return arg_add(x, s, args, name, val);
}

static int xml_call(tc_call *c, pctx *x, const char *p, const char **after)
{
    char name[RL_TC_NAME_MAX + 1], names[256], q[QUOTE_BUF];
    int rc = tag_name(name, x, p + 10, &p, "function");
    if (rc)
        return rc;
    const tc_spec *s = tc_find_spec(x->specs, x->nspecs, name);
    if (!s) {
        spec_names(names, sizeof names, x->specs, x->nspecs);
        return fail(x, "unknown function \"%s\": expected one of: %s", name, names);
    }
    if (!(c->name = strdup(name)) || !(c->args = cJSON_CreateObject()))
        return RL_ENOMEM;
    for (;;) {
        p = skip_ws(p, x->end);
        if (starts(p, x->end, LIT("</function>"))) {
            *after = p + 11;
            return args_complete(x, s, c->args);
        }
        if (starts(p, x->end, LIT("<parameter="))) {
            if ((rc = xml_param(x, s, c->args, p, &p)))
                return rc;
            continue;
        }
        if (p == x->end || starts(p, x->end, LIT("</tool_call>")))
            return fail(x, "unclosed <function=%s>: expected </function> after its parameters",
                        name);
        return fail(x, "unexpected text \"%s\" in the call to %s: expected <parameter=NAME> or "
                       "</function>", quote(q, p, x->end), name);
    }
}

/* ---- JSON style ----------------------------------------------------- */

static int json_args(pctx *x, const tc_spec *s, cJSON *args, const cJSON *in)
{
    char q[QUOTE_BUF];
    cJSON *parsed = NULL;
    if (cJSON_IsString(in)) { /* OpenAI style: arguments as a JSON string */
        parsed = cJSON_Parse(in->valuestring);
        if (!parsed)
            return fail(x, "bad JSON in the arguments string of %s: \"%s\": expected a JSON "
                           "object", s->name,
                        quote(q, in->valuestring,
                              in->valuestring + strlen(in->valuestring)));
        in = parsed;
    }
    int rc = 0;
    if (in && !cJSON_IsObject(in))
        rc = fail(x, "arguments of %s: expected a JSON object", s->name);
    for (const cJSON *m = in ? in->child : NULL; m && !rc; m = m->next) {
        cJSON *v = cJSON_Duplicate(m, 1);
        rc = v ? arg_add(x, s, args, m->string, v) : RL_ENOMEM;
    }
    cJSON_Delete(parsed);
    return rc ? rc : args_complete(x, s, args);
}

static int json_call(tc_call *c, pctx *x, const char *p, const char **after)
{
    char q[QUOTE_BUF], names[256];
    const char *stop = NULL;
    cJSON *o = cJSON_ParseWithLengthOpts(p, (size_t)(x->end - p), &stop, 0);
    if (!o) {
        const char *at = stop && stop >= p && stop <= x->end ? stop : p;
        return fail(x, "bad JSON in <tool_call> near \"%s\": expected {\"name\": ..., "
                       "\"arguments\": {...}}", quote(q, at, x->end));
    }
    int rc = 0;
    const cJSON *name = NULL, *args = NULL;
    if (!cJSON_IsObject(o))
        rc = fail(x, "<tool_call> holds JSON that is not an object: expected {\"name\": ..., "
                     "\"arguments\": {...}}");
    for (const cJSON *m = o->child; m && !rc; m = m->next) {
        const cJSON **slot = strcmp(m->string, "name") == 0        ? &name
                             : strcmp(m->string, "arguments") == 0 ? &args
                                                                   : NULL;
        if (!slot)
            rc = fail(x, "unexpected key \"%s\" in a JSON tool call: expected only \"name\" "
                         "and \"arguments\"", m->string);
        else if (*slot)
            rc = fail(x, "key \"%s\" given twice in a JSON tool call", m->string);
        else
            *slot = m;
    }
    const tc_spec *s = NULL;
    if (!rc && !cJSON_IsString(name))
        rc = fail(x, "JSON tool call without a string \"name\": expected {\"name\": ..., "
                     "\"arguments\": {...}}");
    if (!rc && !(s = tc_find_spec(x->specs, x->nspecs, name->valuestring))) {
        spec_names(names, sizeof names, x->specs, x->nspecs);
        rc = fail(x, "unknown function \"%s\": expected one of: %s",
                  quote(q, name->valuestring,
                        name->valuestring + strlen(name->valuestring)),
                  names);
    }
    if (!rc && (!(c->name = strdup(s->name)) || !(c->args = cJSON_CreateObject())))
        rc = RL_ENOMEM;
    if (!rc)
        rc = json_args(x, s, c->args, args);
    cJSON_Delete(o);
    c->json_style = 1;
    *after = stop;
    return rc;
}

/* ---- the message ---------------------------------------------------- */

static int one_call(tc_call *c, pctx *x, const char *p, const char **after)
{
    char q[QUOTE_BUF];
    p = skip_ws(p + 11, x->end); /* past <tool_call> */
    int rc;
    if (starts(p, x->end, LIT("<function=")))
        rc = xml_call(c, x, p, &p);
    else if (p < x->end && *p == '{')
        rc = json_call(c, x, p, &p);
    else if (p == x->end)
        return fail(x, "unclosed <tool_call>: expected <function=NAME> ... </tool_call>");
    else
        return fail(x, "unexpected text \"%s\" after <tool_call>: expected <function=NAME> or "
                       "a JSON object", quote(q, p, x->end));
    if (rc)
        return rc;
    p = skip_ws(p, x->end);
    if (starts(p, x->end, LIT("</tool_call>"))) {
        *after = p + 12;
        return 0;
    }
    if (p == x->end)
        return fail(x, "unclosed <tool_call> (call to %s): expected </tool_call> after the call",
                    c->name);
    return fail(x, "unexpected text \"%s\" after the call to %s: expected </tool_call>",
                quote(q, p, x->end), c->name);
}

static void trim_nl(const char **p, const char **e)
{
    while (*p < *e && (**p == '\n' || **p == '\r'))
        (*p)++;
    while (*e > *p && ((*e)[-1] == '\n' || (*e)[-1] == '\r'))
        (*e)--;
}

/* Think block, content, and the checks that apply to the whole text. */
static int parse_head(tc_parsed *out, pctx *x, const char *text, const char **body)
{
    const char *p = text, *end = x->end, *c;
    if (memchr(text, '\0', (size_t)(end - text)))
        return fail(x, "the message contains a NUL byte: expected text");
    if ((c = find(text, end, LIT("<|im_start|>"))) || (c = find(text, end, LIT("<|im_end|>"))))
        return fail(x, "the message contains the turn marker %s: expected it to end at "
                       "<|im_end|>", starts(c, end, LIT("<|im_start|>")) ? "<|im_start|>"
                                                                          : "<|im_end|>");
    const char *t = skip_ws(p, end);
    if (starts(t, end, LIT("<think>"))) {
        const char *ts = t + 7, *te = find(ts, end, LIT("</think>"));
        if (!te)
            return fail(x, "unclosed <think>: expected </think> before the answer");
        p = te + 8;
        trim_nl(&ts, &te);
        if (!(out->think = dup_range(ts, te)))
            return RL_ENOMEM;
    }
    const char *first = find(p, end, LIT("<tool_call>"));
    const char *ce = first ? first : end;
    if ((c = find(p, ce, LIT("</tool_call>"))))
        return fail(x, "stray </tool_call> without a <tool_call> before it");
    if ((c = find(p, ce, LIT("<function="))))
        return fail(x, "<function=...> outside a tool call: expected it inside "
                       "<tool_call> ... </tool_call>");
    if (!(out->content = dup_trim(p, ce)))
        return RL_ENOMEM;
    *body = ce;
    return 0;
}

static int parse_calls(tc_parsed *out, pctx *x, const char *p, const tc_opts *o)
{
    char q[QUOTE_BUF];
    while (p < x->end) {
        if (out->ncalls >= o->max_calls)
            return fail(x, "more than %zu tool calls in one message: at most %zu per message",
                        o->max_calls, o->max_calls);
        tc_call *c = &out->calls[out->ncalls++];
        memset(c, 0, sizeof *c);
        snprintf(c->id, sizeof c->id, "call_%u", o->first_id + (unsigned)(out->ncalls - 1));
        int rc = one_call(c, x, p, &p);
        if (rc)
            return rc;
        p = skip_ws(p, x->end);
        if (p < x->end && !starts(p, x->end, LIT("<tool_call>")))
            return fail(x, "text after </tool_call>: \"%s\": expected another <tool_call> or "
                           "the end of the message", quote(q, p, x->end));
    }
    return 0;
}

static void calls_free(tc_parsed *p)
{
    for (size_t i = 0; i < p->ncalls; i++)
        tc_call_dispose(&p->calls[i]);
    p->ncalls = 0;
}

int tc_parse(tc_parsed *out, const char *text, size_t len, const tc_spec *specs,
             size_t nspecs, const tc_opts *opts, char *err)
{
    tc_opts def;
    memset(out, 0, sizeof *out);
    if (!opts) {
        tc_opts_default(&def);
        opts = &def;
    }
    pctx x = {text + len, specs, nspecs, out->error};
    int rc;
    const char *body = text;
    if (len > RL_TC_TEXT_MAX)
        rc = fail(&x, "the message is %zu bytes: at most %u", len, (unsigned)RL_TC_TEXT_MAX);
    else if (!(out->calls = calloc(opts->max_calls ? opts->max_calls : 1, sizeof *out->calls)))
        rc = RL_ENOMEM;
    else if (!(rc = parse_head(out, &x, text, &body)))
        rc = parse_calls(out, &x, body, opts);
    if (rc == RL_ENOMEM) {
        calls_free(out);
        return rl_err(err, RL_ENOMEM, "tool-call parser: out of memory");
    }
    if (rc) {
        calls_free(out);
        out->format_error = 1;
        return rl_err(err, RL_EPARSE, "%s", out->error);
    }
    return 0;
}

void tc_parsed_dispose(tc_parsed *p)
{
    calls_free(p);
    free(p->calls);
    free(p->think);
    free(p->content);
    memset(p, 0, sizeof *p);
}

int tc_call_init(tc_call *c, const char *id, const char *name, const char *arguments,
                 const tc_spec *specs, size_t nspecs, char *err)
{
    char msg[RL_ERR_MAX], names[256];
    pctx x = {NULL, specs, nspecs, msg};
    memset(c, 0, sizeof *c);
    snprintf(c->id, sizeof c->id, "%s", id ? id : "call_0");
    const tc_spec *s = tc_find_spec(specs, nspecs, name ? name : "");
    if (!s) {
        spec_names(names, sizeof names, specs, nspecs);
        return rl_err(err, RL_EPARSE, "unknown function \"%s\": expected one of: %s",
                      name ? name : "", names);
    }
    cJSON *in = NULL;
    if (arguments && *arguments && !(in = cJSON_Parse(arguments)))
        return rl_err(err, RL_EPARSE, "arguments of %s: bad JSON: expected a JSON object",
                      name);
    int rc = 0;
    if (!(c->name = strdup(s->name)) || !(c->args = cJSON_CreateObject()))
        rc = RL_ENOMEM;
    else
        rc = json_args(&x, s, c->args, in);
    cJSON_Delete(in);
    if (rc) {
        tc_call_dispose(c);
        return rc == RL_ENOMEM ? rl_err(err, rc, "tool call: out of memory")
                               : rl_err(err, rc, "%s", msg);
    }
    return 0;
}

void tc_call_dispose(tc_call *c)
{
    free(c->name);
    cJSON_Delete(c->args);
    c->name = NULL;
    c->args = NULL;
}

const char *tc_arg_str(const tc_call *c, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->args, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

int tc_arg_int(const tc_call *c, const char *name, long long *v)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(c->args, name);
    if (!int_ok(j))
        return 0;
    *v = (long long)j->valuedouble;
    return 1;
}

char *tc_args_json(const tc_call *c)
{
    return c->args ? cJSON_PrintUnformatted(c->args) : strdup("{}");
}

/* ---- OpenAI tool schemas ------------------------------------------------ */

static const char *json_type(tc_type t)
{
    return t == TC_INT ? "integer" : t == TC_STRINGS ? "array" : "string";
}

cJSON *tc_specs_json(const tc_spec *specs, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "type", "function");
        cJSON *f = cJSON_AddObjectToObject(t, "function");
        cJSON_AddStringToObject(f, "name", specs[i].name);
        cJSON_AddStringToObject(f, "description", specs[i].desc ? specs[i].desc : "");
        cJSON *ps = cJSON_AddObjectToObject(f, "parameters");
        cJSON_AddStringToObject(ps, "type", "object");
        cJSON *props = cJSON_AddObjectToObject(ps, "properties");
        cJSON *req = cJSON_AddArrayToObject(ps, "required");
        for (size_t k = 0; k < specs[i].nparams; k++) {
            const tc_param *pp = &specs[i].params[k];
            cJSON *q = cJSON_AddObjectToObject(props, pp->name);
            cJSON_AddStringToObject(q, "type", json_type(pp->type));
            if (pp->type == TC_STRINGS)
                cJSON_AddStringToObject(cJSON_AddObjectToObject(q, "items"), "type", "string");
            if (pp->desc)
                cJSON_AddStringToObject(q, "description", pp->desc);
            if (pp->required)
                cJSON_AddItemToArray(req, cJSON_CreateString(pp->name));
        }
        cJSON_AddItemToArray(a, t);
    }
    return a;
}
