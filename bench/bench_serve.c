/* bench_serve.c - `grpo serve` throughput against in-process generation.
 *
 * For B = 1, 8 and 32 concurrent streams: tokens/s of B clients each
 * asking /v1/completions (streamed, over loopback HTTP with the project's
 * client) for M tokens, against model_sample of the same B prompts and M
 * tokens in this process, with the same checkpoint, in the same run. The
 * ratio in-process / HTTP is the server's overhead (target <= 1.10).
 * Checkpoint: $RL_SERVE_CKPT, else models/policy.safetensors.
 */
#include "common/clock.h"
#include "common/err.h"
#include "grpo/serve.h"
#include "http/http.h"
#include "policy/model_policy.h"
#include "policy/policy.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NEW_TOKENS 64
#define PROMPT_LEN 32

static int port;

typedef struct client_arg {
    int seed;
    long tokens;
    int ok;
} client_arg;

static void *client(void *v)
{
    client_arg *a = v;
    char err[RL_ERR_MAX], url[64], body[1024];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/completions", port);
    int n = snprintf(body, sizeof body, "{\"model\": \"m\", \"max_tokens\": %d, \"ignore_eos\": true, "
                                        "\"seed\": %d, \"stream\": true, \"prompt\": [", NEW_TOKENS, a->seed);
    for (int i = 0; i < PROMPT_LEN; i++)
        n += snprintf(body + n, sizeof body - (size_t)n, "%s%d", i ? "," : "", 100 + (a->seed * 7 + i) % 300);
    snprintf(body + n, sizeof body - (size_t)n, "]}");
    http_client_opts o;
    http_client_opts_default(&o);
    o.retries = 0;
    http_client *c;
    if (http_client_new(&c, &o, err) < 0)
        return NULL;
    http_request rq = {.method = "POST", .url = url, .content_type = "application/json", .body = body,
                       .body_len = strlen(body)};
    http_response rs;
    if (http_client_request(c, &rs, &rq, err) == 0 && rs.status == 200) {
        a->ok = 1;
        for (const char *p = rs.body; (p = strstr(p, "\"token_ids\":[")); p++) {
            p += 13;
            if (*p != ']')
                a->tokens++;
            for (; *p && *p != ']'; p++)
                a->tokens += *p == ',';
        }
    }
    http_response_dispose(&rs);
    http_client_free(c);
    return NULL;
}

static double in_process(model *m, int B)
{
    int *prompts[32], lens[32];
    uint64_t seeds[32];
    for (int b = 0; b < B; b++) {
        prompts[b] = malloc(PROMPT_LEN * sizeof(int));
        for (int i = 0; i < PROMPT_LEN; i++)
            prompts[b][i] = 100 + (b * 7 + i) % 300;
        lens[b] = PROMPT_LEN;
        seeds[b] = (uint64_t)b;
    }
    model_sample_opts so;
    model_sample_opts_default(&so);
    so.seeds = seeds;
    so.max_new = NEW_TOKENS;
    model_sample_out out[32];
    char err[RL_ERR_MAX];
    double t0 = clk_s();
    long toks = 0;
    if (model_sample(m, out, (const int *const *)prompts, lens, B, &so, err) == 0)
        for (int b = 0; b < B; b++) {
            toks += out[b].n;
            model_sample_out_dispose(&out[b]);
        }
    double dt = clk_s() - t0;
    for (int b = 0; b < B; b++)
        free(prompts[b]);
    return toks / dt;
}

static double over_http(int B)
{
    client_arg a[32];
    pthread_t th[32];
    double t0 = clk_s();
    for (int b = 0; b < B; b++) {
        a[b] = (client_arg){.seed = b};
        pthread_create(&th[b], NULL, client, &a[b]);
    }
    long toks = 0;
    for (int b = 0; b < B; b++) {
        pthread_join(th[b], NULL);
        if (!a[b].ok)
            return -1;
        toks += a[b].tokens;
    }
    return toks / (clk_s() - t0);
}

int main(void)
{
    const char *ckpt = getenv("RL_SERVE_CKPT");
    if (!ckpt || !*ckpt)
        ckpt = "models/policy.safetensors";
    char err[RL_ERR_MAX];
    pol_env env;
    pol_env_default(&env);
    policy *p;
    if (model_policy_open(&p, ckpt, &env, err) < 0) {
        fprintf(stderr, "bench_serve: %s\n", err);
        return 1;
    }
    model *m = model_policy_model(p);
    serve_opts so;
    serve_opts_default(&so);
    so.name = "m";
    serve *s;
    http_server_opts ho;
    http_server_opts_default(&ho);
    ho.handler = serve_handle;
    http_server *hs = NULL;
    if (serve_new(&s, m, p->tok, &so, err) < 0 || (ho.ctx = s, http_server_new(&hs, &ho, err)) < 0) {
        fprintf(stderr, "bench_serve: %s\n", err);
        return 1;
    }
    port = http_server_port(hs);
    static const int batches[] = {1, 8, 32};
    int rc = 0;
    for (int i = 0; i < 3; i++) {
        int B = batches[i];
        in_process(m, B); /* warm-up: caches, pages */
        double base = in_process(m, B); /* the scheduler is idle: the model is ours */
        double http = over_http(B);
        if (http <= 0) {
            fprintf(stderr, "bench_serve: requests at %d streams failed\n", B);
            rc = 1;
            break;
        }
        printf("{\"bench\": \"serve_http_%d\", \"value\": %.1f, \"unit\": \"tokens/s\", \"baseline\": "
               "\"model_sample_%d\", \"baseline_value\": %.1f, \"ratio\": %.3f}\n",
               B, http, B, base, base / http);
        fflush(stdout);
    }
    serve_shutdown(s);
    http_server_free(hs);
    serve_free(s);
    pol_free(p);
    return rc;
}
