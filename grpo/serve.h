/* serve.h - the built-in model behind an OpenAI-compatible HTTP API
 * (`grpo serve`, docs/serve.md).
 *
 * A serve object owns one scheduler thread, the only one that touches the
 * model: it keeps a batch of sequences (model_dec) and advances all of them
 * by one token per step, admitting waiting requests between steps and
 * letting finished ones go (continuous batching). serve_handle is the HTTP
 * handler (http_server_opts.handler with ctx = the serve object): each
 * connection thread parses its request, queues it, and waits for its
 * tokens (or streams them as server-sent events, the tokens of each
 * serve_opts.stream_interval_ms together).
 *
 * Endpoints: GET /v1/models, POST /v1/completions, POST
 * /v1/chat/completions, POST /v1/weights, GET /health, GET /metrics
 * (Prometheus text). With a token every /v1 request needs
 * "Authorization: Bearer TOKEN".
 *
 * Weights: POST /v1/weights {"path", "version"} loads a checkpoint of the
 * served model's config and the scheduler copies it in between two
 * decoding steps (dropping the prefix caches, which hold keys of the old
 * weights). A non-streamed answer carries "policy_version", the version
 * of the weights that drew its first token, and "policy_version_last"
 * when later tokens were drawn with newer ones.
 * Errors are JSON in the OpenAI shape,
 *   {"error": {"message": "...", "type": "invalid_request_error", "param": "FIELD", "code": null}}
 * naming the field at fault.
 *
 * Prefix reuse: a request whose prompt begins as an earlier or running
 * sequence's did (a conversation's next turn, the n choices of one
 * prompt) takes those keys and values from the model_dec's pool instead
 * of prefilling them again (model.h, model_dec_prefix_cache); /metrics
 * counts the tokens saved.
 *
 * Determinism: choice i of a request with seed S draws from the stream of
 * seed S + i (model_sample_opts.seeds), so the tokens of a prompt and a
 * seed are those `--policy model:CKPT` samples for the same context ids
 * and seed, whatever else shares the batch (to the rounding of batched
 * products).
 */
#ifndef RL_GRPO_SERVE_H
#define RL_GRPO_SERVE_H

#include "common/limits.h"
#include "common/log.h"
#include "http/http.h"
#include "model/model.h"
#include "protocol/tokenizer.h"

typedef struct serve_opts {
    const char *name;   /* the served model's name (required) */
    int max_batch;      /* sequences decoded together */
    int max_queue;      /* requests waiting; more get 429 */
    int prefix_cache_mb; /* KV caches kept for prefix reuse (model_dec_prefix_cache); 0: none */
    int stream_interval_ms; /* least time between a stream's wake-ups; 0: every step */
    int min_step_ms;    /* each decoding step lasts at least this long (the scheduler sleeps
                           out the rest, off the lock); 0: as long as it takes */
    int chat_template;  /* the tpl_kind chat requests render with (protocol/template.h);
                           default TPL_QWEN3_XML */
    const char *token;  /* bearer token every /v1 request must carry; NULL: none */
    long version;       /* the policy version of the weights served at start */
    rl_log_fn log;      /* one line per failed step; NULL: silent */
    void *log_ctx;
} serve_opts;

/* max_batch SERVE_BATCH_DEFAULT, max_queue SERVE_QUEUE_DEFAULT,
 * prefix_cache_mb SERVE_PREFIX_CACHE_MB_DEFAULT, stream_interval_ms
 * SERVE_STREAM_INTERVAL_MS_DEFAULT. */
void serve_opts_default(serve_opts *o);

typedef struct serve serve;

/* Starts the scheduler over m and tok (borrowed: they must outlive the
 * serve object; tok must have <|im_end|>). */
int serve_new(serve **out, model *m, const tok_t *tok, const serve_opts *o, char *err);
/* Refuses new requests and ends the ones queued or running with an
 * error (503): call it before stopping the HTTP server, whose stop waits
 * for the handlers. */
void serve_shutdown(serve *s);
/* serve_shutdown, then stops the scheduler and frees. */
void serve_free(serve *s);

/* The http_handler_fn of the API; ctx is the serve object. */
int serve_handle(void *ctx, const http_server_req *req, http_server_resp *resp, char *err);

/* Since start: requests answered, tokens generated. */
void serve_counters(serve *s, long *requests, long *tokens);

#endif
