/* scripted.c - context reading and reply writing for scripted policies. */
#include "policy/scripted.h"

#include "common/err.h"
#include "protocol/chat.h"
#include "protocol/template.h"

#include <stdlib.h>
#include <string.h>

static const char *find_last(const char *hay, size_t len, const char *needle)
{
    size_t nl = strlen(needle);
    const char *last = NULL;
    for (const char *p = hay; (size_t)(p - hay) + nl <= len; p++) {
        p = memmem(p, len - (size_t)(p - hay), needle, nl);
        if (!p)
            break;
        last = p;
    }
    return last;
}

size_t scripted_turn(const char *ctx, size_t len)
{
    static const char tag[] = "<|im_start|>assistant\n";
    size_t n = 0;
    const char *p = ctx, *end = ctx + len;
    while ((p = memmem(p, (size_t)(end - p), tag, sizeof tag - 1))) {
        n++;
        p += sizeof tag - 1;
    }
    return n ? n - 1 : 0;
}

int scripted_think_off(const char *ctx, size_t len)
{
    static const char tail[] = "<think>\n\n</think>\n\n";
    size_t tl = sizeof tail - 1;
    return len >= tl && !memcmp(ctx + len - tl, tail, tl);
}

int scripted_template(const char *ctx, size_t len)
{
    static const char mark[] = "</tools>\n\nFor each function call, return a json object";
    const char *end = memmem(ctx, len, "<|im_end|>", 10);
    size_t sys = end ? (size_t)(end - ctx) : len;
    return memmem(ctx, sys, mark, sizeof mark - 1) ? TPL_QWEN3 : TPL_QWEN3_XML;
}

char *scripted_last_response(const char *ctx, size_t len)
{
    const char *open = find_last(ctx, len, "<tool_response>\n");
    if (!open)
        return strdup("");
    open += strlen("<tool_response>\n");
    const char *close = memmem(open, len - (size_t)(open - ctx), "\n</tool_response>", 17);
    size_t n = close ? (size_t)(close - open) : len - (size_t)(open - ctx);
    return strndup(open, n);
}

char *scripted_problem(const char *ctx, size_t len)
{
    static const char tag[] = "<|im_start|>user\n";
    const char *p = memmem(ctx, len, tag, sizeof tag - 1);
    if (!p)
        return strdup("");
    p += sizeof tag - 1;
    const char *e = memmem(p, len - (size_t)(p - ctx), "<|im_end|>", 10);
    return strndup(p, e ? (size_t)(e - p) : len - (size_t)(p - ctx));
}

int scripted_reply(pol_response *resp, const char *ctx, size_t len, const char *think, const char *prose,
              const char *tool, const char *args_json, char *err)
{
    memset(resp, 0, sizeof *resp);
    int think_on = !scripted_think_off(ctx, len);
    chat_call call = {"call", (char *)tool, (char *)(args_json ? args_json : "{}")};
    chat_msg m = {0};
    m.role = CHAT_ASSISTANT;
    m.content = (char *)(prose ? prose : "");
    m.reasoning = think_on ? (char *)(think ? think : "") : NULL;
    m.calls = tool ? &call : NULL;
    m.ncalls = tool ? 1 : 0;
    size_t n;
    char *text = tpl_assistant_text_as(&m, (tpl_kind)scripted_template(ctx, len), think_on, &n);
    if (!text)
        return rl_err(err, RL_ENOMEM, "scripted policy: out of memory");
    resp->text = text;
    resp->text_len = n;
    resp->finish = POL_FINISH_STOP;
    return 0;
}
