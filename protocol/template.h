/* template.h - the rendering of chat messages into a context.
 *
 * Two templates share the Qwen3 turn markup (tpl_kind): "qwen3-xml", whose
 * tool list is prose and whose tool calls are the XML blocks of the coder
 * models, and "qwen3", the Qwen3 chat template itself (tool JSON schemas in
 * <tools></tools>, JSON tool calls), byte-identical to that Jinja template
 * for messages without raw text. A message list (protocol/chat.h) renders
 * into the exact text a policy sees:
 *
 *   <|im_start|>system\n PROMPT \n\n# Tools ... <|im_end|>\n
 *   <|im_start|>user\n PROBLEM <|im_end|>\n
 *   <|im_start|>assistant\n GENERATED <|im_end|>\n
 *   <|im_start|>user\n<tool_response>\n OUTPUT \n</tool_response><|im_end|>\n
 *   ...
 *   <|im_start|>assistant\n                    (generation prompt)
 *
 * An assistant message is rendered from the raw text the policy generated
 * byte for byte, so in history mode "keep" the context of turn k plus the
 * text generated at turn k is a prefix of the context of turn k+1.
 * Rendering also returns the byte spans of every part by origin (template
 * markup, system prompt, tool descriptions, user, assistant, tool output)
 * for token accounting and loss masks. System prompts are loaded from
 * prompts/NAME.md. The format is specified in docs/chat-format.md.
 */
#ifndef RL_TEMPLATE_H
#define RL_TEMPLATE_H

#include "common/buf.h"
#include "protocol/chat.h"
#include "protocol/toolcall.h"

#include <stddef.h>

/* ---- templates --------------------------------------------------------- */

typedef enum {
    TPL_QWEN3_XML, /* "qwen3-xml": prose tool list, XML tool calls */
    TPL_QWEN3,     /* "qwen3": the Qwen3 chat template, JSON schemas and calls */
    TPL_NKINDS
} tpl_kind;

/* "qwen3-xml", "qwen3"; "?" out of range. */
const char *tpl_kind_name(tpl_kind k);
/* The template called name. Unknown: RL_EINVAL, one line listing the
 * known names. */
int tpl_kind_parse(tpl_kind *out, const char *name, char *err);
/* The template whose rendering equals the Jinja chat template text[0..len)
 * (a checkpoint's tokenizer_config.json chat_template): TPL_QWEN3 for the
 * Qwen3 template, byte for byte; -1 for any other text. */
int tpl_kind_of_jinja(const char *text, size_t len);

/* ---- assistant text ---------------------------------------------------- */

/* The text a policy produced (or would produce) for an assistant message:
 * raw when known, else the canonical rendering of reasoning, content and
 * calls (think on: "<think>\nR\n</think>\n\n" first; think off: no think
 * block, it sits in the generation prompt). Tool calls are rendered in the
 * XML style, or in the JSON style when a string value contains
 * "</parameter>". Caller frees. */
char *tpl_assistant_text(const chat_msg *m, int think, size_t *len);
/* The same for template kind: qwen3-xml as above; qwen3 as that template
 * writes an assistant turn after the last user query: think on
 * "<think>\nR\n</think>\n\n" (R stripped of white space) then the content
 * (leading white space removed); then each call as <tool_call>\n{"name": "N",
 * "arguments": ARGS}\n</tool_call>, after "\n" unless it is the first and the
 * content is empty, ARGS the arguments object in the template's tojson form
 * (", " and ": " separators). Caller frees. */
char *tpl_assistant_text_as(const chat_msg *m, tpl_kind kind, int think, size_t *len);

/* Appends v as the Jinja tojson filter of the chat templates writes it
 * (JavaScript JSON.stringify with ", " and ": " separators: shortest
 * round-trip numbers, non-ASCII kept, object keys that are array indices
 * first in ascending order, a repeated key at its first place with its
 * last value). */
int tpl_tojson(buf_t *b, const cJSON *v);

/* ---- rendering --------------------------------------------------------- */

typedef enum {
    TPL_TEMPLATE,  /* markup: <|im_start|>role\n, <|im_end|>\n, <tool_response> tags */
    TPL_SYSTEM,    /* the system prompt */
    TPL_TOOLS,     /* the tool descriptions and calling format */
    TPL_USER,      /* user messages (the problem statement) */
    TPL_ASSISTANT, /* text the policy wrote, its <|im_end|> included */
    TPL_TOOL,      /* tool outputs */
    TPL_NORIGINS
} tpl_origin;

typedef struct tpl_seg {
    size_t off, len;
    tpl_origin origin;
    int msg; /* index of the message it comes from; -1 for the tools and the generation prompt */
} tpl_seg;

typedef struct tpl_opts {
    tpl_kind kind;    /* the template; default TPL_QWEN3_XML */
    int think;        /* 1: generation prompt is "<|im_start|>assistant\n"; 0: plus an
                         empty "<think>\n\n</think>\n\n" the policy continues after */
    int keep_history; /* 1: earlier think blocks stay (contexts are prefixes of each
                         other); 0: they are removed from earlier assistant turns
                         (qwen3, messages without raw text: reasoning_content
                         left out) */
    int gen_prompt;   /* 1: end with the generation prompt */
} tpl_opts;

/* qwen3-xml, think on, keep history, generation prompt on. */
void tpl_opts_default(tpl_opts *o);

typedef struct tpl_text {
    char *text; /* NUL-terminated */
    size_t len;
    tpl_seg *segs; /* in order, contiguous, covering [0, len) */
    size_t nsegs;
} tpl_text;

/* Renders msgs[0..n) (a system message, if any, must come first) with the
 * tool descriptions of tools[0..ntools) in the system turn. */
int tpl_render(tpl_text *out, const tpl_opts *o, const tc_spec *tools, size_t ntools,
               const chat_msg *msgs, size_t n, char *err);
void tpl_text_dispose(tpl_text *t);

/* Number of messages before the k-th assistant message (k from 0): render
 * msgs[0..tpl_turn_start(c, k)) to get the context of turn k. Returns c->n
 * when there are k assistant messages or fewer (the next turn). */
size_t tpl_turn_start(const chat *c, size_t k);

/* The keep-mode invariant for one turn: prev + gen is a prefix of next.
 * gen may be NULL. RL_EINVAL with the offset of the first difference. */
int tpl_check_prefix(const char *prev, size_t plen, const char *gen, size_t glen,
                     const char *next, size_t nlen, char *err);
/* The invariant over a whole episode: every context a prefix of the next. */
int tpl_check_contexts(const tpl_text *ctx, size_t n, char *err);

/* The "# Tools" section of the system turn (no leading blank line) of
 * qwen3-xml; tpl_render_tools_as for either template. */
int tpl_render_tools(buf_t *out, const tc_spec *tools, size_t ntools);
int tpl_render_tools_as(buf_t *out, tpl_kind kind, const tc_spec *tools, size_t ntools);

const char *tpl_origin_name(tpl_origin o);
/* Bytes per origin, summed over the segments. */
void tpl_origin_bytes(const tpl_text *t, size_t bytes[TPL_NORIGINS]);

/* Reads the system prompt dir/name.md (name: [A-Za-z0-9_-]+), trailing
 * whitespace removed. Caller frees. */
int tpl_load_prompt(char **out, const char *dir, const char *name, char *err);

#endif
