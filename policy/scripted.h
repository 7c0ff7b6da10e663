/* scripted.h - what the scripted policies share: reading the context the
 * way a model would (turn number, the last tool responses, whether the
 * think block is already closed) and writing replies in the chat format. */
#ifndef RL_SCRIPTED_H
#define RL_SCRIPTED_H

#include "policy/policy.h"

#include <stddef.h>

/* Assistant turns already in the context (the generation prompt's open
 * assistant turn not counted). */
size_t scripted_turn(const char *ctx, size_t len);

/* 1 when the context ends inside an empty think block (thinking off). */
int scripted_think_off(const char *ctx, size_t len);
/* The template (a tpl_kind) the context was rendered with: qwen3 when its
 * system turn lists the tools in <tools></tools>, else qwen3-xml. A
 * scripted reply follows it. */
int scripted_template(const char *ctx, size_t len);

/* The text of the last <tool_response> of the context (a copy; "" when
 * none). Caller frees. */
char *scripted_last_response(const char *ctx, size_t len);

/* The problem statement: the first user turn's text. Caller frees. */
char *scripted_problem(const char *ctx, size_t len);

/* A reply with optional thinking, optional prose and one tool call whose
 * arguments are a JSON object text (NULL: none). The call is written in
 * the chat format's canonical style. Fills resp. */
int scripted_reply(pol_response *resp, const char *ctx, size_t len, const char *think, const char *prose,
              const char *tool, const char *args_json, char *err);

/* Policy constructors (called by pol_open). recover_pct: the share of
 * tasks (0-100, chosen by a hash of the gold patch) whose oracle episode
 * shows a failed edit and its repair (policy/oracle.c). */
int oracle_open(policy **out, const pol_env *env, int recover_pct, char *err);
int search_open(policy **out, const pol_env *env, char *err);
int replay_open(policy **out, const char *spec, char *err);

#endif
