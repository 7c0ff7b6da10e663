/* toolcall.h - tool specs and the parser of assistant output into tool calls.
 *
 * A policy's turn is raw text: an optional <think>...</think> block, some
 * prose (the content), then zero or more <tool_call> blocks, each in the
 * XML style of Qwen3-Coder
 *
 *   <tool_call>
 *   <function=read_file>
 *   <parameter=path>
 *   src/leap.c
 *   </parameter>
 *   </function>
 *   </tool_call>
 *
 * or in the JSON style <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>.
 * tc_parse splits the text and validates every call against the tool specs
 * (known function, known parameters, no duplicates, required ones present,
 * values of the declared type). Any defect makes the whole message a format
 * error: no call runs, and a one-line observation says what was wrong and
 * what was expected. The exact rules are in docs/chat-format.md.
 */
#ifndef RL_TOOLCALL_H
#define RL_TOOLCALL_H

#include "common/err.h"

#include <cjson/cJSON.h>
#include <stddef.h>

typedef enum {
    TC_STRING,  /* JSON string; in XML the raw text of the value */
    TC_INT,     /* JSON integer; in XML a decimal number */
    TC_STRINGS, /* JSON array of strings; in XML written as JSON */
} tc_type;

typedef struct tc_param {
    const char *name;
    tc_type type;
    int required;
    const char *desc;
} tc_param;

typedef struct tc_spec {
    const char *name;
    const char *desc;
    const tc_param *params;
    size_t nparams;
} tc_spec;

/* One validated call. args is a JSON object whose members follow the spec:
 * strings, integral numbers, arrays of strings, in the order written. */
typedef struct tc_call {
    char id[32];  /* "call_N" */
    char *name;
    cJSON *args;
    int json_style; /* 1 when written in the JSON style */
} tc_call;

typedef struct tc_opts {
    size_t max_calls;  /* default RL_TC_CALLS_MAX */
    unsigned first_id; /* ids are call_<first_id>, call_<first_id+1>, ... */
} tc_opts;

void tc_opts_default(tc_opts *o);

typedef struct tc_parsed {
    char *think;      /* think text (newlines trimmed), NULL without a block */
    char *content;    /* prose outside think and calls, whitespace-trimmed */
    tc_call *calls; /* empty on a format error */
    size_t ncalls;
    int format_error;
    char error[RL_ERR_MAX]; /* the observation line when format_error */
} tc_parsed;

/* Parses len bytes of generated text (the stop string <|im_end|> not
 * included). Returns 0, RL_EPARSE on a format error (out->format_error set,
 * out->error and err hold the observation, out->think/content hold what
 * was parsed), or RL_ENOMEM. out is always initialised: free it with
 * tc_parsed_dispose. opts may be NULL. */
int tc_parse(tc_parsed *out, const char *text, size_t len, const tc_spec *specs,
             size_t nspecs, const tc_opts *opts, char *err);
void tc_parsed_dispose(tc_parsed *p);

/* Builds a validated call from OpenAI form (arguments: JSON object text,
 * NULL or "" for {}). Same checks and messages as tc_parse. */
int tc_call_init(tc_call *c, const char *id, const char *name, const char *arguments,
                 const tc_spec *specs, size_t nspecs, char *err);
void tc_call_dispose(tc_call *c);

/* The specs as OpenAI tool schemas: [{"type": "function", "function":
 * {"name", "description", "parameters": {JSON Schema}}}]. NULL on
 * allocation failure. */
cJSON *tc_specs_json(const tc_spec *specs, size_t n);

const tc_spec *tc_find_spec(const tc_spec *specs, size_t n, const char *name);
const char *tc_type_name(tc_type t);

/* Argument accessors. NULL / 0 when absent. */
const char *tc_arg_str(const tc_call *c, const char *name);
int tc_arg_int(const tc_call *c, const char *name, long long *v);
/* Compact JSON text of the arguments (caller frees), as in OpenAI's
 * tool_calls[].function.arguments. */
char *tc_args_json(const tc_call *c);

#endif
