/* cmd_serve.c - `grpo serve`: a checkpoint behind an OpenAI-compatible
 * HTTP API (grpo/serve.h, docs/serve.md).
 *
 *   grpo serve --ckpt CKPT [--host 127.0.0.1] [--port 8000]
 *              [--served-model-name NAME] [--max-batch N] [--max-queue N]
 *              [--prefix-cache-mb N] [--stream-interval-ms MS] [--template NAME]
 *              [--token-env VAR] [--dtype f32|bf16] [--min-step-ms MS]
 *
 * The checkpoint and its tokenizer open as `--policy model:CKPT` opens
 * them. One line on stderr says where it listens; SIGINT or SIGTERM ends
 * the requests in flight with 503 and stops.
 */
#include "grpo/cli.h"
#include "grpo/serve.h"
#include "harness/episode.h"
#include "http/http.h"
#include "model/model.h"
#include "policy/model_policy.h"
#include "protocol/template.h"

#include "common/arg.h"
#include "common/err.h"
#include "common/limits.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void serve_usage(FILE *f)
{
    fprintf(f,
            "usage: grpo serve --ckpt CKPT [--host ADDR] [--port N] [--served-model-name NAME]\n"
            "                  [--max-batch N] [--max-queue N] [--prefix-cache-mb N]\n"
            "                  [--stream-interval-ms MS] [--template NAME] [--token-env VAR]\n"
            "                  [--dtype f32|bf16] [--min-step-ms MS]\n"
            "\n"
            "Serves a checkpoint over an OpenAI-compatible HTTP API (docs/serve.md):\n"
            "/v1/models, /v1/completions, /v1/chat/completions, /v1/weights, /health, /metrics.\n"
            "  --host ADDR       address to listen on (default 127.0.0.1: loopback only)\n"
            "  --port N          port, 0 for any free one (default 8000)\n"
            "  --served-model-name NAME  the model name requests must give\n"
            "                    (default: CKPT as written)\n"
            "  --max-batch N     sequences decoded together (default %d, at most %d)\n"
            "  --max-queue N     requests waiting for the batch; more get 429 (default %d)\n"
            "  --prefix-cache-mb N  MiB of finished sequences' KV caches kept so that a prompt\n"
            "                    sharing their prefix skips its prefill (default %d, 0: no reuse)\n"
            "  --stream-interval-ms MS  least time between two events of a stream; the tokens\n"
            "                    decoded in between go out together (default %d, 0: every step)\n"
            "  --template NAME   the chat template /v1/chat/completions renders with (qwen3 or\n"
            "                    qwen3-xml; default: the one the checkpoint speaks, as\n"
            "                    `--policy model:CKPT` finds it)\n"
            "  --token-env VAR   every /v1 request must carry \"Authorization: Bearer $VAR\"\n"
            "  --dtype D         weight matrices in memory: f32 (default) or bf16 (half the\n"
            "                    memory; products still in fp32)\n"
            "  --min-step-ms MS  each decoding step lasts at least MS (0 to %d; default 0): a\n"
            "                    stand-in for an accelerator whose step time does not grow with\n"
            "                    the batch, for benchmarks of rollout scheduling\n"
            "SIGINT or SIGTERM stops the server.\n",
            SERVE_BATCH_DEFAULT, SERVE_BATCH_HARD, SERVE_QUEUE_DEFAULT, SERVE_PREFIX_CACHE_MB_DEFAULT,
            SERVE_STREAM_INTERVAL_MS_DEFAULT, SERVE_MIN_STEP_MS_MAX);
}

int cmd_serve(int argc, char **argv)
{
    const char *ckpt = NULL, *host = "127.0.0.1", *name = NULL, *tpl = NULL, *token_env = NULL;
    int port = 8000, dtype = MODEL_DTYPE_F32;
    serve_opts so;
    serve_opts_default(&so);
    char err[RL_ERR_MAX];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            serve_usage(stdout);
            return 0;
        }
        int rc = 0;
        if (!v && (!strcmp(a, "--ckpt") || !strcmp(a, "--host") || !strcmp(a, "--port") ||
                   !strcmp(a, "--served-model-name") || !strcmp(a, "--max-batch") || !strcmp(a, "--max-queue") ||
                   !strcmp(a, "--prefix-cache-mb") || !strcmp(a, "--stream-interval-ms") ||
                   !strcmp(a, "--template") || !strcmp(a, "--token-env") || !strcmp(a, "--dtype") ||
                   !strcmp(a, "--min-step-ms"))) {
            fprintf(stderr, "grpo serve: %s: expected a value\n", a);
            return 2;
        }
        if (!strcmp(a, "--ckpt"))
            ckpt = v;
        else if (!strcmp(a, "--host"))
            host = v;
        else if (!strcmp(a, "--served-model-name"))
            name = v;
        else if (!strcmp(a, "--token-env"))
            token_env = v;
        else if (!strcmp(a, "--dtype"))
            rc = model_dtype_parse(&dtype, a, v, err);
        else if (!strcmp(a, "--port"))
            rc = arg_int(&port, a, v, 0, 65535, err);
        else if (!strcmp(a, "--max-batch"))
            rc = arg_int(&so.max_batch, a, v, 1, SERVE_BATCH_HARD, err);
        else if (!strcmp(a, "--max-queue"))
            rc = arg_int(&so.max_queue, a, v, 1, SERVE_QUEUE_HARD, err);
        else if (!strcmp(a, "--prefix-cache-mb"))
            rc = arg_int(&so.prefix_cache_mb, a, v, 0, SERVE_PREFIX_CACHE_MB_MAX, err);
        else if (!strcmp(a, "--stream-interval-ms"))
            rc = arg_int(&so.stream_interval_ms, a, v, 0, SERVE_STREAM_INTERVAL_MS_MAX, err);
        else if (!strcmp(a, "--min-step-ms"))
            rc = arg_int(&so.min_step_ms, a, v, 0, SERVE_MIN_STEP_MS_MAX, err);
        else if (!strcmp(a, "--template")) {
            tpl_kind k;
            tpl = v;
            if ((rc = tpl_kind_parse(&k, v, err)) == 0)
                so.chat_template = (int)k;
        } else {
            fprintf(stderr, "grpo serve: unknown option '%s'\n", a);
            serve_usage(stderr);
            return 2;
        }
        if (rc < 0) {
            fprintf(stderr, "grpo serve: %s\n", err);
            return 2;
        }
        i++;
    }
    if (!ckpt) {
        fprintf(stderr, "grpo serve: expected --ckpt CKPT\n");
        serve_usage(stderr);
        return 2;
    }
    if (!host[0] || (name && (!name[0] || strlen(name) >= SERVE_NAME_MAX))) {
        fprintf(stderr, "grpo serve: --host and --served-model-name: expected non-empty values (a name under %d bytes)\n",
                SERVE_NAME_MAX);
        return 2;
    }
    so.name = name ? name : ckpt;
    if (strlen(so.name) >= SERVE_NAME_MAX) {
        fprintf(stderr, "grpo serve: --ckpt %s: a path under %d bytes, or give --served-model-name\n", ckpt,
                SERVE_NAME_MAX);
        return 2;
    }
    so.log = cli_log_stderr;
    if (!tpl) {
        int k = ep_template_of_ckpt(ckpt, err);
        if (k < 0) {
            fprintf(stderr, "grpo serve: %s\n", err);
            return 1;
        }
        so.chat_template = k;
    }
    if (token_env) {
        so.token = getenv(token_env);
        if (!so.token || !so.token[0] || strlen(so.token) > SERVE_TOKEN_MAX) {
            fprintf(stderr, "grpo serve: --token-env %s: expected the variable to hold a token of 1..%d bytes\n",
                    token_env, SERVE_TOKEN_MAX);
            return 2;
        }
    }

    /* the signals go to sigwait below, not to the server's threads */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);

    pol_env env;
    pol_env_default(&env);
    env.model_dtype = dtype;
    policy *p = NULL;
    if (model_policy_open(&p, ckpt, &env, err) < 0) {
        fprintf(stderr, "grpo serve: %s\n", err);
        return 1;
    }
    model *m = model_policy_model(p);
    serve *s = NULL;
    if (serve_new(&s, m, p->tok, &so, err) < 0) {
        fprintf(stderr, "grpo serve: %s\n", err);
        pol_free(p);
        return 1;
    }
    http_server_opts ho;
    http_server_opts_default(&ho);
    ho.host = host;
    ho.port = port;
    ho.handler = serve_handle;
    ho.ctx = s;
    ho.log = cli_log_stderr;
    http_server *hs = NULL;
    if (http_server_new(&hs, &ho, err) < 0) {
        fprintf(stderr, "grpo serve: %s\n", err);
        serve_free(s);
        pol_free(p);
        return 1;
    }
    fprintf(stderr, "grpo serve: serving \"%s\" on http://%s%s%s:%d (window %d tokens, batch %d, template %s)\n",
            so.name, strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "", http_server_port(hs),
            m->cfg.max_seq, so.max_batch, tpl_kind_name((tpl_kind)so.chat_template));
    fflush(stderr);
    int sig = 0;
    sigwait(&sigs, &sig);
    fprintf(stderr, "grpo serve: %s, stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    serve_shutdown(s);
    http_server_free(hs);
    long reqs = 0, toks = 0;
    serve_counters(s, &reqs, &toks);
    serve_free(s);
    pol_free(p);
    fprintf(stderr, "grpo serve: %ld requests, %ld tokens generated\n", reqs, toks);
    return 0;
}
