/* openai.h - a policy that asks a model behind an OpenAI-compatible HTTP
 * server (vLLM, SGLang, llama.cpp's server, Ollama, `grpo serve`).
 *
 * `--policy openai --base-url URL --model NAME [--api chat|completions]`.
 * One HTTP request per pol_request; a pol_generate call of n requests
 * sends them all on one thread, at most max_inflight open at once
 * (http_client_many), with the client's timeout and retries. Several
 * threads may call pol_generate at once (policy.concurrent): each call
 * takes an HTTP client of its own from a pool of at most max_inflight,
 * waiting while all are taken.
 *
 * completions (token in, token out): POST BASE/completions with the
 * harness's rendered context as token ids in "prompt" (the request's
 * context_ids, else its text encoded with the policy's tokenizer), and
 * max_tokens, temperature, top_p, seed (the request's), logprobs. The
 * reply's token ids and their logprobs are read when the server gives
 * them (vLLM's "token_id:N" strings with return_tokens_as_token_ids, a
 * "token_ids" array, llama.cpp's logprobs.content[].id); then the
 * response carries them and its text is their decoding. Otherwise the
 * response has the server's text only and the turn's record says
 * tokens_exact false.
 *
 * chat: POST BASE/chat/completions with the conversation (pol_request.chat)
 * as OpenAI messages and the tools (pol_request.tools) as JSON schemas;
 * the system message is the prompt alone, the tool section the harness
 * renders into its own template is not sent. Tool calls come from the
 * reply's tool_calls, written back in the harness's own tool-call format
 * (protocol/toolcall.h) so the episode parses them like any other reply;
 * a reply that leaves its calls in the text is passed on as it is.
 * Prompt token ids are kept (pol_response.context_ids) when the server
 * returns them ("prompt_token_ids"); generated ids never (the text the
 * episode records is the harness's rendering, not what was sampled).
 *
 * Each response carries a one-line JSON object (pol_response.meta) the
 * record keeps: mode, served model, request id, usage, latency, attempts
 * and whether the ids are exact. When the server's answer has a
 * "policy_version" (grpo serve), it goes into pol_response.policy_version
 * and the meta. A request that fails (server down, an
 * answer other than 200 after the retries, malformed JSON, no choice)
 * gets pol_response.error, one line naming the URL and what was wrong;
 * the others of the same call go on.
 *
 * The API key is read once from the environment (OPENAI_API_KEY, or the
 * variable api_key_env names) and sent only in the Authorization header:
 * never in errors, logs or responses. No key: no header (local servers).
 */
#ifndef RL_OPENAI_H
#define RL_OPENAI_H

#include "common/log.h"
#include "policy/policy.h"

typedef enum oai_api { OAI_CHAT = 0, OAI_COMPLETIONS } oai_api;

typedef struct oai_opts {
    const char *base_url;    /* the API root, e.g. http://127.0.0.1:8000/v1; or
                                several, comma-separated: request i goes to
                                the (episode % n)-th, so one episode's turns
                                stay on one server (its prefix cache) */
    const char *model;       /* the served model's name */
    oai_api api;             /* OAI_CHAT */
    const char *api_key_env; /* NULL: OPENAI_API_KEY */
    int max_inflight;        /* requests open at once (OAI_INFLIGHT_DEFAULT) */
    const char *tokenizer;   /* completions: the harness tokenizer; NULL:
                                models/tokenizer.json */
    double temperature;      /* 0.7 */
    double top_p;            /* 1.0 */
    long timeout_ms;         /* per attempt; 0: the http client's default */
    int retries;             /* -1: the http client's default */
    rl_log_fn log;           /* retries; NULL: silent */
    void *log_ctx;
} oai_opts;

void oai_opts_default(oai_opts *o);

/* Parses "chat" or "completions". */
int oai_api_parse(oai_api *out, const char *s, char *err);
const char *oai_api_name(oai_api a);

/* Checks the options, reads the key, loads the tokenizer (completions).
 * The policy's name is "openai:MODEL". */
int oai_policy_new(policy **out, const oai_opts *o, char *err);

/* `openai` from pol_env's fields (pol_open). */
int oai_open(policy **out, const pol_env *env, char *err);

#endif
