/* chat.h - a conversation: chat messages in OpenAI's form.
 *
 * Messages follow OpenAI's chat form (system / user / assistant / tool, with
 * reasoning and tool_calls on assistant messages) and serialize to it. An
 * assistant message keeps the raw text the policy generated, from which the
 * template (protocol/template.h) renders it byte for byte. The format is
 * specified in docs/chat-format.md.
 */
#ifndef RL_CHAT_H
#define RL_CHAT_H

#include "protocol/toolcall.h"

#include <cjson/cJSON.h>
#include <stddef.h>

/* ---- messages ---------------------------------------------------------- */

typedef enum { CHAT_SYSTEM, CHAT_USER, CHAT_ASSISTANT, CHAT_TOOL } chat_role;

typedef struct chat_call {
    char *id;
    char *name;
    char *arguments; /* JSON object text, as in OpenAI's function.arguments */
} chat_call;

typedef struct chat_msg {
    chat_role role;
    char *content;      /* never NULL */
    char *reasoning;    /* assistant: think text; NULL when none */
    chat_call *calls;   /* assistant */
    size_t ncalls;
    char *tool_call_id; /* tool: the call answered; NULL for a format-error observation */
    char *name;         /* tool: the tool's name; NULL for a format-error observation */
    char *raw;          /* assistant: the exact generated text; NULL if built from fields */
    size_t raw_len;
    int truncated;      /* assistant: generation hit a length limit, no <|im_end|> written */
} chat_msg;

typedef struct chat {
    chat_msg *msgs;
    size_t n, cap; /* at most RL_CHAT_MSGS_MAX messages */
} chat;

/* An empty conversation. Returns 0 or RL_ENOMEM. */
int chat_new(chat **out, char *err);
void chat_free(chat *c);

/* The chat_add_* functions return 0, RL_ELIMIT (past RL_CHAT_MSGS_MAX
 * messages) or RL_ENOMEM; on failure c is unchanged. */
int chat_add_system(chat *c, const char *content, char *err);
int chat_add_user(chat *c, const char *content, char *err);
/* A tool result. call_id and name may be NULL (format-error observation). */
int chat_add_tool(chat *c, const char *call_id, const char *name, const char *content,
                  char *err);
/* An assistant message from fields (scripted policies, imported chats).
 * reasoning may be NULL; calls are copied. */
int chat_add_assistant(chat *c, const char *reasoning, const char *content,
                       const chat_call *calls, size_t ncalls, char *err);
/* An assistant message from what the policy generated (raw, without the
 * stop string) and its parse (p may be NULL or a format error: then the
 * message has no calls). truncated: the policy stopped at a length limit. */
int chat_add_generated(chat *c, const char *raw, size_t len, const tc_parsed *p, int truncated,
                       char *err);

/* OpenAI form: {"role", "content", "reasoning_content"?, "tool_calls"?,
 * "tool_call_id"?, "name"?} plus our "raw" (generated text) and
 * "truncated" when set. chat_from_json accepts null content and ignores
 * unknown keys. */
int chat_msg_to_json(cJSON **out, const chat_msg *m, char *err);
int chat_to_json(cJSON **out, const chat *c, char *err);
int chat_from_json(chat **out, const cJSON *array, char *err);

const char *chat_role_name(chat_role r);

#endif
