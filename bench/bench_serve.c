/* bench_serve.c - `grpo serve` against in-process generation.
 *
 * Overhead: for B = 1, 8 and 32 concurrent streams, the tokens/s of B
 * clients each asking /v1/completions (streamed, over loopback HTTP with
 * the project's client, the clients in this process) for NEW_TOKENS
 * tokens, against model_sample of the same B prompts and seeds in this
 * process, with the same checkpoint. REPS pairs are run interleaved
 * (in-process, then HTTP) after a warm-up pair, each rep with prompts of
 * its own so that no prefix is cached from an earlier one; the line gives
 * the medians and the median of the pairs' HTTP / in-process throughput
 * ("fraction", target >= 0.90: at most 10% of the in-process speed lost),
 * which the load of a shared machine disturbs less than a ratio of
 * medians. "ratio" is the project's baseline / value (target <= 1.11).
 * "steps" is the median number of decoding steps the server ran for the
 * B requests (in-process: NEW_TOKENS).
 *
 * Checkpoint: $RL_SERVE_CKPT, else models/policy.safetensors.
 * Prefix reuse: 8 conversations of 4 turns each at once (a shared
 * 384-token system prompt, 48 new tokens and a 32-token reply per turn),
 * against a server without prefix reuse and one with the default cache:
 * seconds per request, and the prompt tokens whose prefill was skipped.
 *
 * Usage: bench_serve [--streams N] [--reps R] [--stream-interval-ms MS] [--no-prefix]
 */
#include "common/arg.h"
#include "common/clock.h"
#include "common/err.h"
#include "grpo/serve.h"
#include "http/http.h"
#include "policy/model_policy.h"
#include "policy/policy.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NEW_TOKENS 64
#define PROMPT_LEN 32
#define STREAMS_MAX 64
#define REPS_MAX 64

static int port;
static int stream_interval_ms = SERVE_STREAM_INTERVAL_MS_DEFAULT;

static void die(const char *what, const char *err)
{
    fprintf(stderr, "bench_serve: %s: %s\n", what, err);
    exit(1);
}

/* CPU seconds of every thread of this process. */
static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* CPU seconds of the calling thread. */
static double thread_cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* CPU seconds of the live threads of this process named `name`
 * (/proc/self/task/TID/comm), or of all the others when `others`. */
static double threads_cpu_s(const char *name, int others)
{
    DIR *d = opendir("/proc/self/task");
    double sum = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (!fgets(comm, sizeof comm, f))
            comm[0] = '\0';
        fclose(f);
        comm[strcspn(comm, "\n")] = '\0';
        if (!strcmp(comm, name) == !!others)
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
        unsigned long long ns = 0;
        if ((f = fopen(path, "r"))) {
            if (fscanf(f, "%llu", &ns) != 1)
                ns = 0;
            fclose(f);
        }
        sum += 1e-9 * (double)ns;
    }
    if (d)
        closedir(d);
    return sum;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Prompt token i of stream b in rep r: distinct first tokens across
 * streams and reps. */
static int prompt_tok(int r, int b, int i)
{
    return 100 + (b * 7 + r * 331 + i) % 1500;
}

static http_client *client_new(long timeout_ms)
{
    char err[RL_ERR_MAX];
    http_client_opts o;
    http_client_opts_default(&o);
    o.retries = 0;
    o.timeout_ms = timeout_ms;
    http_client *c;
    if (http_client_new(&c, &o, err) < 0)
        die("http_client_new", err);
    return c;
}

/* One request over HTTP on client c (NULL: a client of its own); returns
 * the body (caller frees) or NULL. */
static char *post_on(http_client *c, const char *path, const char *body, long timeout_ms)
{
    char err[RL_ERR_MAX], url[96];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
    http_client *own = c ? NULL : (c = client_new(timeout_ms));
    http_request rq = {.method = body ? "POST" : "GET", .url = url, .content_type = body ? "application/json" : NULL,
                       .body = body, .body_len = body ? strlen(body) : 0};
    http_response rs;
    char *out = NULL;
    if (http_client_request(c, &rs, &rq, err) == 0 && rs.status == 200)
        out = strdup(rs.body);
    else
        fprintf(stderr, "bench_serve: %s: %s\n", url, err);
    http_response_dispose(&rs);
    http_client_free(own);
    return out;
}

static char *post(const char *path, const char *body, long timeout_ms)
{
    return post_on(NULL, path, body, timeout_ms);
}

/* A counter of /metrics. */
static double metric(const char *name)
{
    char *b = post("/metrics", NULL, 10000);
    double v = -1;
    char key[128];
    snprintf(key, sizeof key, "\n%s ", name);
    const char *p = b ? strstr(b, key) : NULL;
    if (p)
        v = atof(p + strlen(key));
    free(b);
    return v;
}

typedef struct client_arg {
    http_client *c; /* kept from rep to rep: its connection stays open */
    int rep, seed;
    long tokens;
    int ok;
    double cpu; /* the thread's CPU seconds */
} client_arg;

static void *client(void *v)
{
    client_arg *a = v;
    char body[2048];
    int n = snprintf(body, sizeof body, "{\"model\": \"m\", \"max_tokens\": %d, \"ignore_eos\": true, "
                                        "\"seed\": %d, \"stream\": true, \"prompt\": [", NEW_TOKENS, a->seed);
    for (int i = 0; i < PROMPT_LEN; i++)
        n += snprintf(body + n, sizeof body - (size_t)n, "%s%d", i ? "," : "", prompt_tok(a->rep, a->seed, i));
    snprintf(body + n, sizeof body - (size_t)n, "]}");
    char *rs = post_on(a->c, "/v1/completions", body, 600000);
    if (rs) {
        a->ok = 1;
        for (const char *p = rs; (p = strstr(p, "\"token_ids\":[")); p++) {
            p += 13;
            if (*p != ']')
                a->tokens++;
            for (; *p && *p != ']'; p++)
                a->tokens += *p == ',';
        }
    }
    free(rs);
    a->cpu = thread_cpu_s();
    return NULL;
}

/* The same B prompts and seeds through model_sample (*tps_sample) and
 * through a model_dec of this process (returned), all sequences added at
 * once: the engine `grpo serve` runs, without HTTP (with the server's
 * prefix cache, which keeps each finished sequence's keys and values). */
static double in_process(model *m, model_dec *d, int B, int rep, double *tps_sample, double *cpu_per_tok)
{
    int *prompts[STREAMS_MAX], lens[STREAMS_MAX], slot[STREAMS_MAX];
    uint64_t seeds[STREAMS_MAX];
    for (int b = 0; b < B; b++) {
        prompts[b] = malloc(PROMPT_LEN * sizeof(int));
        if (!prompts[b])
            die("in_process", "out of memory");
        for (int i = 0; i < PROMPT_LEN; i++)
            prompts[b][i] = prompt_tok(rep, b, i);
        lens[b] = PROMPT_LEN;
        seeds[b] = (uint64_t)b;
    }
    model_sample_opts so;
    model_sample_opts_default(&so);
    so.seeds = seeds;
    so.max_new = NEW_TOKENS;
    model_sample_out out[STREAMS_MAX];
    char err[RL_ERR_MAX];
    double t0 = clk_s();
    long toks = 0;
    if (model_sample(m, out, (const int *const *)prompts, lens, B, &so, err) < 0)
        die("model_sample", err);
    double dt = clk_s() - t0;
    for (int b = 0; b < B; b++) {
        toks += out[b].n;
        model_sample_out_dispose(&out[b]);
    }
    *tps_sample = toks / dt;

    so.seeds = NULL;
    double c0 = cpu_s();
    t0 = clk_s();
    for (int b = 0; b < B; b++) {
        so.seed = (uint64_t)b;
        if (model_dec_add(d, &slot[b], prompts[b], PROMPT_LEN, &so, 0, err) < 0)
            die("model_dec_add", err);
    }
    int rows = 1;
    while (rows > 0)
        if (model_dec_step(d, &rows, err) < 0)
            die("model_dec_step", err);
    dt = clk_s() - t0;
    double cpu = cpu_s() - c0;
    if (getenv("BENCH_SERVE_THREADS"))
        fprintf(stderr, "B=%d: in-process per token us: %.1f\n", B, 1e6 * cpu / (double)(B * NEW_TOKENS));
    toks = 0;
    for (int b = 0; b < B; b++) {
        toks += model_dec_out(d, slot[b])->n;
        model_dec_remove(d, slot[b]);
        free(prompts[b]);
    }
    *cpu_per_tok = cpu / toks;
    return toks / dt;
}

/* CPU per token of one run over HTTP, in seconds: the server (every
 * thread but the clients'), of which its HTTP threads (libmicrohttpd's),
 * and the clients. */
typedef struct http_cpu {
    double server, http, client;
} http_cpu;

static double over_http(http_client **clients, int B, int rep, double *steps, http_cpu *cpu_per_tok)
{
    client_arg a[STREAMS_MAX];
    pthread_t th[STREAMS_MAX];
    double s0 = metric("rl_serve_steps_total");
    double sch0 = threads_cpu_s("rl-serve", 0), mod0 = threads_cpu_s("bench_serve", 0), lis0 = threads_cpu_s("MHD-listen", 0);
    double c0 = cpu_s(), t0 = clk_s();
    for (int b = 0; b < B; b++) {
        a[b] = (client_arg){.c = clients[b], .rep = rep, .seed = b};
        if (pthread_create(&th[b], NULL, client, &a[b]) != 0)
            die("pthread_create", "cannot start a client thread");
    }
    long toks = 0;
    int ok = 1;
    double ccpu = 0;
    for (int b = 0; b < B; b++) {
        pthread_join(th[b], NULL);
        ok &= a[b].ok;
        toks += a[b].tokens;
        ccpu += a[b].cpu;
    }
    double dt = clk_s() - t0, cpu = cpu_s() - c0 - ccpu;
    double sch = threads_cpu_s("rl-serve", 0) - sch0, mod = threads_cpu_s("bench_serve", 0) - mod0;
    double lis = threads_cpu_s("MHD-listen", 0) - lis0;
    if (getenv("BENCH_SERVE_THREADS"))
        fprintf(stderr, "B=%d: per token us: server %.1f = scheduler %.1f + model workers %.1f + listen %.1f + connections %.1f; clients %.1f\n",
                B, 1e6 * cpu / (double)(B * NEW_TOKENS), 1e6 * sch / (double)(B * NEW_TOKENS), 1e6 * mod / (double)(B * NEW_TOKENS),
                1e6 * lis / (double)(B * NEW_TOKENS), 1e6 * (cpu - sch - mod - lis) / (double)(B * NEW_TOKENS),
                1e6 * ccpu / (double)(B * NEW_TOKENS));
    if (!ok || toks != (long)B * NEW_TOKENS) {
        char msg[96];
        snprintf(msg, sizeof msg, "%ld tokens, expected %d", toks, B * NEW_TOKENS);
        die("requests", ok ? msg : "a request failed");
    }
    *steps = metric("rl_serve_steps_total") - s0;
    *cpu_per_tok = (http_cpu){cpu / toks, (cpu - sch - mod) / toks, ccpu / toks};
    return toks / dt;
}

static void bench_overhead(model *m, int B, int reps)
{
    double base[REPS_MAX], samp[REPS_MAX], http[REPS_MAX], frac[REPS_MAX], cfrac[REPS_MAX], steps[REPS_MAX];
    double c_ins[REPS_MAX], c_srv[REPS_MAX], c_thr[REPS_MAX], c_cli[REPS_MAX];
    double st, ts, c_in;
    http_cpu c_http;
    char err[RL_ERR_MAX];
    model_dec *d;
    if (model_dec_new(&d, m, B, err) < 0)
        die("model_dec_new", err);
    model_dec_prefix_cache(d, (size_t)SERVE_PREFIX_CACHE_MB_DEFAULT << 20); /* as the server's */
    http_client *clients[STREAMS_MAX];
    for (int b = 0; b < B; b++)
        clients[b] = client_new(600000);
    in_process(m, d, B, 0, &ts, &c_in); /* warm-up: pages, caches, the server's threads */
    over_http(clients, B, 0, &st, &c_http);
    for (int r = 0; r < reps; r++) {
        base[r] = in_process(m, d, B, r + 1, &samp[r], &c_in); /* the scheduler is idle: the model is ours */
        http[r] = over_http(clients, B, r + 1, &steps[r], &c_http);
        frac[r] = http[r] / base[r];
        cfrac[r] = c_in / c_http.server;
        c_ins[r] = 1e6 * c_in;
        c_srv[r] = 1e6 * c_http.server;
        c_thr[r] = 1e6 * c_http.http;
        c_cli[r] = 1e6 * c_http.client;
    }
    model_dec_free(d);
    for (int k = 0; k < B; k++)
        http_client_free(clients[k]);
    double b = median(base, reps), h = median(http, reps), f = median(frac, reps), cf = median(cfrac, reps);
    printf("{\"bench\": \"serve_http_%d\", \"value\": %.1f, \"unit\": \"tokens/s\", \"baseline\": "
           "\"model_dec_%d\", \"baseline_value\": %.1f, \"ratio\": %.3f, \"fraction_paired_median\": %.3f, "
           "\"fraction_min\": %.3f, \"fraction_max\": %.3f, \"cpu_fraction_paired_median\": %.3f, "
           "\"cpu_fraction_min\": %.3f, \"target_fraction_min\": 0.90, \"model_sample_value\": %.1f, "
           "\"steps\": %.0f, \"steps_in_process\": %d, \"cpu_us_per_token_in_process\": %.1f, "
           "\"cpu_us_per_token_server\": %.1f, \"cpu_us_per_token_server_http_threads\": %.1f, "
           "\"cpu_us_per_token_clients\": %.1f, \"stream_interval_ms\": %d, \"reps\": %d}\n",
           B, h, B, b, b / h, f, frac[0], frac[reps - 1], cf, cfrac[0], median(samp, reps), median(steps, reps),
           NEW_TOKENS, median(c_ins, reps), median(c_srv, reps), median(c_thr, reps), median(c_cli, reps), stream_interval_ms, reps);
    fflush(stdout);
}

/* ---- prefix reuse: a multi-turn workload ------------------------------------ */

#define CONVS 8
#define TURNS 4
#define SYSTEM_LEN 384 /* a shared system prompt and tool list */
#define USER_LEN 48    /* a tool response or user message per turn */
#define REPLY_LEN 32

typedef struct conv_arg {
    int conv;
    double secs; /* summed over the turns */
    int ok;
} conv_arg;

/* One conversation: each turn's prompt is the last prompt + its reply +
 * a new message, as an agent's episode grows. */
static void *conversation(void *v)
{
    conv_arg *a = v;
    enum { CTX = SYSTEM_LEN + TURNS * (USER_LEN + REPLY_LEN + 1) };
    int *ctx = malloc(CTX * sizeof *ctx), n = 0;
    char *body = malloc(CTX * 8 + 256);
    if (!ctx || !body)
        die("conversation", "out of memory");
    for (int i = 0; i < SYSTEM_LEN; i++)
        ctx[n++] = 200 + (i * 13) % 1000;
    a->ok = 1;
    for (int t = 0; t < TURNS && a->ok; t++) {
        for (int i = 0; i < USER_LEN; i++)
            ctx[n++] = 300 + (a->conv * 101 + t * 37 + i * 7) % 1000;
        int w = sprintf(body, "{\"model\": \"m\", \"max_tokens\": %d, \"ignore_eos\": true, \"seed\": %d, "
                              "\"prompt\": [", REPLY_LEN, a->conv * 10 + t);
        for (int i = 0; i < n; i++)
            w += sprintf(body + w, "%s%d", i ? "," : "", ctx[i]);
        sprintf(body + w, "]}");
        double t0 = clk_s();
        char *rs = post("/v1/completions", body, 600000);
        a->secs += clk_s() - t0;
        const char *p = rs ? strstr(rs, "\"token_ids\":[") : NULL;
        if (!p) {
            a->ok = 0;
        } else {
            for (p += 13; *p && *p != ']' && n < CTX;) {
                ctx[n++] = (int)strtol(p, (char **)&p, 10);
                if (*p == ',')
                    p++;
            }
        }
        free(rs);
    }
    free(ctx);
    free(body);
    return NULL;
}

/* The workload against a server keeping mb MiB of caches: mean seconds
 * per request; *reused, *prompt the /metrics counters. */
static double multi_turn(model *m, const tok_t *tok, int mb, double *reused, double *prompt)
{
    char err[RL_ERR_MAX];
    serve_opts so;
    serve_opts_default(&so);
    so.name = "m";
    so.prefix_cache_mb = mb;
    serve *s;
    http_server_opts ho;
    http_server_opts_default(&ho);
    ho.handler = serve_handle;
    http_server *hs = NULL;
    if (serve_new(&s, m, tok, &so, err) < 0 || (ho.ctx = s, http_server_new(&hs, &ho, err)) < 0)
        die("server", err);
    int keep = port;
    port = http_server_port(hs);
    conv_arg a[CONVS];
    pthread_t th[CONVS];
    for (int c = 0; c < CONVS; c++) {
        a[c] = (conv_arg){.conv = c};
        if (pthread_create(&th[c], NULL, conversation, &a[c]) != 0)
            die("pthread_create", "cannot start a client thread");
    }
    double secs = 0;
    for (int c = 0; c < CONVS; c++) {
        pthread_join(th[c], NULL);
        if (!a[c].ok)
            die("multi-turn", "a request failed");
        secs += a[c].secs;
    }
    *reused = metric("rl_serve_prefix_tokens_reused_total");
    *prompt = metric("rl_serve_prompt_tokens_total");
    serve_shutdown(s);
    http_server_free(hs);
    serve_free(s);
    port = keep;
    return secs / (CONVS * TURNS);
}

static void bench_prefix(model *m, const tok_t *tok)
{
    double r0, p0, r1, p1;
    multi_turn(m, tok, 0, &r0, &p0); /* warm-up */
    double before = multi_turn(m, tok, 0, &r0, &p0);
    double after = multi_turn(m, tok, SERVE_PREFIX_CACHE_MB_DEFAULT, &r1, &p1);
    printf("{\"bench\": \"serve_prefix_reuse\", \"value\": %.4f, \"unit\": \"s/request\", \"baseline\": "
           "\"serve_no_prefix_reuse\", \"baseline_value\": %.4f, \"ratio\": %.3f, \"prompt_tokens\": %.0f, "
           "\"prefix_tokens_reused\": %.0f, \"conversations\": %d, \"turns\": %d}\n",
           after, before, before / after, p1, r1, CONVS, TURNS);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    char err[RL_ERR_MAX];
    int only = 0, reps = 5, prefix = 1;
    for (int i = 1; i < argc; i++) {
        int rc = -1;
        if (!strcmp(argv[i], "--streams") && i + 1 < argc)
            rc = arg_int(&only, argv[i], argv[i + 1], 1, STREAMS_MAX, err);
        else if (!strcmp(argv[i], "--no-prefix")) {
            prefix = 0;
            continue;
        }
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            rc = arg_int(&reps, argv[i], argv[i + 1], 1, REPS_MAX, err);
        else if (!strcmp(argv[i], "--stream-interval-ms") && i + 1 < argc)
            rc = arg_int(&stream_interval_ms, argv[i], argv[i + 1], 0, SERVE_STREAM_INTERVAL_MS_MAX, err);
        else
            snprintf(err, sizeof err, "%s: expected --streams N, --reps R, --stream-interval-ms MS or --no-prefix",
                     argv[i]);
        if (rc < 0) {
            fprintf(stderr, "bench_serve: %s\n", err);
            return 2;
        }
        i++;
    }
    const char *ckpt = getenv("RL_SERVE_CKPT");
    if (!ckpt || !*ckpt)
        ckpt = "models/policy.safetensors";
    pol_env env;
    pol_env_default(&env);
    policy *p;
    if (model_policy_open(&p, ckpt, &env, err) < 0)
        die(ckpt, err);
    model *m = model_policy_model(p);
    serve_opts so;
    serve_opts_default(&so);
    so.name = "m";
    so.stream_interval_ms = stream_interval_ms;
    serve *s;
    http_server_opts ho;
    http_server_opts_default(&ho);
    ho.handler = serve_handle;
    http_server *hs = NULL;
    if (serve_new(&s, m, p->tok, &so, err) < 0 || (ho.ctx = s, http_server_new(&hs, &ho, err)) < 0)
        die("server", err);
    port = http_server_port(hs);
    static const int batches[] = {1, 8, 32};
    for (int i = 0; i < 3; i++)
        if (!only || only == batches[i])
            bench_overhead(m, batches[i], reps);
    if (only && only != 1 && only != 8 && only != 32)
        bench_overhead(m, only, reps);
    serve_shutdown(s);
    http_server_free(hs);
    serve_free(s);
    if (prefix)
        bench_prefix(m, p->tok);
    pol_free(p);
    return 0;
}
