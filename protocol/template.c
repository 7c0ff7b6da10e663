/* template.c - the Qwen3-style rendering of chat messages into a context.
 *
 * Rendering is a plain append of fixed markup and message text into one
 * capped buffer, recording a segment per piece, so the output is byte-exact
 * and deterministic: no locale, no formatting choices, no reordering.
 */
#include "protocol/template.h"

#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "common/vec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char EMPTY_THINK[] = "<think>\n\n</think>\n\n";

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

static void render_system(rend *r, const tc_spec *tools, size_t ntools, const chat_msg *sys)
{
    emits(r, TPL_TEMPLATE, sys ? 0 : -1, "<|im_start|>system\n");
    if (sys)
        emits(r, TPL_SYSTEM, 0, sys->content);
    if (ntools && !r->rc) {
        if (sys && *sys->content)
            emits(r, TPL_TOOLS, -1, "\n\n");
        buf_t t;
        buf_init(&t, RL_TPL_TEXT_MAX);
        if (!(r->rc = tpl_render_tools(&t, tools, ntools)))
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
        render_system(&r, tools, ntools, sys);
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
        case CHAT_ASSISTANT: render_assistant(&r, o, m, (int)i); break;
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
