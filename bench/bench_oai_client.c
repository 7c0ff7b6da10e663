/* bench_oai_client.c - the openai policy's own cost per turn.
 *
 * A local server on the project's HTTP layer answers every
 * /v1/completions request at once with the same canned reply (REPLY_IDS
 * sampled ids with their logprobs, as vLLM gives them). The openai policy
 * (completions mode, one request in flight) then runs TURNS turns of a
 * CONTEXT_IDS-token context: building the JSON body, the request over
 * loopback, reading the ids, logprobs and text back. The baseline is the
 * same exchange with the body built once beforehand and the reply left
 * unread (a bare http_client_request), measured in the same run; the
 * difference is what the client adds to a turn beyond the server's time
 * and the transport (target: at most 1 ms). Median and p90 over the turns.
 */
#include "common/clock.h"
#include "common/err.h"
#include "http/http.h"
#include "policy/openai.h"
#include "policy/policy.h"
#include "protocol/tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOKPATH "models/tokenizer.json"
#define CONTEXT_IDS 3000
#define REPLY_IDS 300
#define TURNS 200

static char *reply;
static size_t reply_len;

static int handler(void *ctx, const http_server_req *req, http_server_resp *resp, char *err)
{
    (void)ctx;
    (void)req;
    (void)err;
    return http_reply(resp, 200, "application/json", reply, reply_len);
}

/* The canned reply: vLLM's completions object with token-id strings. */
static int make_reply(const tok_t *tok)
{
    size_t cap = 64 * REPLY_IDS + 1024, n = 0;
    reply = malloc(cap);
    if (!reply)
        return -1;
    int stop = tok_special_id(tok, "<|im_end|>");
    n += (size_t)snprintf(reply + n, cap - n, "{\"id\": \"cmpl-1\", \"object\": \"text_completion\", \"model\": \"m\", "
                                              "\"choices\": [{\"index\": 0, \"text\": \"x\", \"logprobs\": {\"tokens\": [");
    for (int i = 0; i < REPLY_IDS; i++)
        n += (size_t)snprintf(reply + n, cap - n, "%s\"token_id:%d\"", i ? "," : "",
                              i == REPLY_IDS - 1 ? stop : 100 + i % 500);
    n += (size_t)snprintf(reply + n, cap - n, "], \"token_logprobs\": [");
    for (int i = 0; i < REPLY_IDS; i++)
        n += (size_t)snprintf(reply + n, cap - n, "%s-0.%04d", i ? "," : "", 1 + i);
    n += (size_t)snprintf(reply + n, cap - n, "]}, \"finish_reason\": \"stop\"}], \"usage\": {\"prompt_tokens\": %d, "
                                              "\"completion_tokens\": %d, \"total_tokens\": %d}}",
                          CONTEXT_IDS, REPLY_IDS, CONTEXT_IDS + REPLY_IDS);
    reply_len = n;
    return 0;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double q)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    int i = (int)(q * (n - 1) + 0.5);
    return v[i];
}

int main(void)
{
    char err[RL_ERR_MAX], base[64], url[96];
    tok_t *tok;
    if (tok_load(&tok, TOKPATH, err) < 0 || make_reply(tok) < 0) {
        fprintf(stderr, "bench_oai_client: %s\n", err);
        return 1;
    }
    http_server_opts so;
    http_server_opts_default(&so);
    so.handler = handler;
    http_server *srv;
    if (http_server_new(&srv, &so, err) < 0) {
        fprintf(stderr, "bench_oai_client: %s\n", err);
        return 1;
    }
    snprintf(base, sizeof base, "http://127.0.0.1:%d/v1", http_server_port(srv));
    snprintf(url, sizeof url, "%s/completions", base);
    oai_opts o;
    oai_opts_default(&o);
    o.base_url = base;
    o.model = "m";
    o.api = OAI_COMPLETIONS;
    o.max_inflight = 1;
    o.tokenizer = TOKPATH;
    o.retries = 0;
    policy *p;
    if (oai_policy_new(&p, &o, err) < 0) {
        fprintf(stderr, "bench_oai_client: %s\n", err);
        return 1;
    }
    int32_t *ctx = malloc(CONTEXT_IDS * sizeof *ctx);
    for (int i = 0; i < CONTEXT_IDS; i++)
        ctx[i] = 50 + (i * 37) % 3000;
    /* the baseline's body: the same size, built once */
    size_t cap = 8 * CONTEXT_IDS + 512, bl = 0;
    char *body = malloc(cap);
    bl += (size_t)snprintf(body + bl, cap - bl, "{\"model\":\"m\",\"temperature\":0.7,\"top_p\":1,\"max_tokens\":512,"
                                                "\"seed\":12345,\"prompt\":[");
    for (int i = 0; i < CONTEXT_IDS; i++)
        bl += (size_t)snprintf(body + bl, cap - bl, "%s%d", i ? "," : "", ctx[i]);
    bl += (size_t)snprintf(body + bl, cap - bl, "],\"logprobs\":1,\"return_tokens_as_token_ids\":true}");
    http_client_opts ho;
    http_client_opts_default(&ho);
    ho.retries = 0;
    http_client *hc;
    if (http_client_new(&hc, &ho, err) < 0) {
        fprintf(stderr, "bench_oai_client: %s\n", err);
        return 1;
    }
    double *turn = malloc(TURNS * sizeof *turn), *bare = malloc(TURNS * sizeof *bare);
    for (int k = -10; k < TURNS; k++) { /* 10 warm-up rounds */
        pol_request rq = {.context_ids = ctx, .n_context_ids = CONTEXT_IDS, .max_tokens = 512,
                          .seed = (uint64_t)(k + 100)};
        pol_response rs;
        double t0 = clk_ms();
        if (pol_generate(p, &rs, &rq, 1, err) < 0 || rs.error || rs.n_ids != REPLY_IDS) {
            fprintf(stderr, "bench_oai_client: turn failed: %s\n", rs.error ? rs.error : err);
            return 1;
        }
        double t1 = clk_ms();
        pol_response_dispose(&rs);
        http_request hq = {.method = "POST", .url = url, .content_type = "application/json", .body = body,
                           .body_len = bl};
        http_response hr;
        double t2 = clk_ms();
        if (http_client_request(hc, &hr, &hq, err) < 0 || hr.status != 200) {
            fprintf(stderr, "bench_oai_client: bare request failed: %s\n", err);
            return 1;
        }
        double t3 = clk_ms();
        http_response_dispose(&hr);
        if (k >= 0) {
            turn[k] = t1 - t0;
            bare[k] = t3 - t2;
        }
    }
    double qs[2] = {0.5, 0.9};
    const char *names[2] = {"p50", "p90"};
    for (int i = 0; i < 2; i++) {
        double v = pct(turn, TURNS, qs[i]), b = pct(bare, TURNS, qs[i]);
        printf("{\"bench\": \"openai_client_turn_%s\", \"value\": %.3f, \"unit\": \"ms\", \"baseline\": "
               "\"http_request_%s\", \"baseline_value\": %.3f, \"ratio\": %.3f, \"overhead_ms\": %.3f, "
               "\"context_ids\": %d, \"reply_ids\": %d, \"target_overhead_ms\": 1}\n",
               names[i], v, names[i], b, v > 0 ? b / v : 0, v - b, CONTEXT_IDS, REPLY_IDS);
    }
    free(turn);
    free(bare);
    free(body);
    free(ctx);
    http_client_free(hc);
    pol_free(p);
    http_server_free(srv);
    tok_free(tok);
    free(reply);
    return 0;
}
