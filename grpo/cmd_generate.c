/* cmd_generate.c - `grpo generate`: sample a continuation from a checkpoint.
 *
 *   grpo generate --ckpt CKPT (--prompt TEXT | --prompt-ids 1,2,3)
 *                 [--max-tokens N] [--temperature T] [--top-p P] [--seed S]
 *                 [--stop ID,...] [--tokenizer FILE|bytes] [--threads N] [--ids]
 *
 * Text goes through the checkpoint's tokenizer (the file its metadata
 * names; --tokenizer overrides): chat markers such as <|im_start|> in the
 * prompt become their single ids, and sampling stops after <|im_end|> or
 * <|endoftext|> unless --stop says otherwise. "bytes" (token id = byte
 * value, for byte-level models; ids >= 256 printed as <|N|>) is used for a
 * checkpoint without a tokenizer. --prompt-ids feeds ids directly. --ids also prints one JSON line with the sampled ids and
 * their logprobs. A summary line (tokens, speed, stop reason) goes to
 * stderr.
 */
#include "grpo/cli.h"
#include "model/model.h"
#include "protocol/tokenizer.h"

#include "common/err.h"
#include "common/limits.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Longest --prompt / --prompt-ids accepted, in tokens. */
#define GEN_PROMPT_MAX RL_MODEL_SEQ_MAX

static void gen_usage(FILE *f)
{
    fprintf(f,
            "usage: grpo generate --ckpt CKPT (--prompt TEXT | --prompt-ids ID,...)\n"
            "                     [--max-tokens N] [--temperature T] [--top-p P] [--seed S]\n"
            "                     [--stop ID,...] [--tokenizer FILE|bytes] [--threads N] [--ids]\n"
            "\n"
            "Samples a continuation of the prompt from a model checkpoint.\n"
            "  --max-tokens N    new tokens at most (default 128)\n"
            "  --temperature T   0 is greedy (default 0.8)\n"
            "  --top-p P         nucleus size, 0 < P <= 1 (default 0.95)\n"
            "  --seed S          sampling seed (default 0)\n"
            "  --stop ID,...     stop after any of these token ids (default with a\n"
            "                    tokenizer: <|im_end|>, <|endoftext|>)\n"
            "  --tokenizer F     text <-> ids (default: the checkpoint's tokenizer;\n"
            "                    'bytes': id = byte value)\n"
            "  --ids             also print {\"tokens\": [...], \"logprobs\": [...]}\n");
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int parse_float(const char *s, float *out)
{
    char *end;
    errno = 0;
    float v = strtof(s, &end);
    if (errno || end == s || *end)
        return -1;
    *out = v;
    return 0;
}

/* "1,2,3" -> ids (at most max); returns the count or -1. */
static int parse_ids(const char *s, int *ids, int max, long hi)
{
    int n = 0;
    const char *p = s;
    while (*p) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (errno || end == p || v < 0 || v > hi || n >= max)
            return -1;
        ids[n++] = (int)v;
        if (*end == ',')
            end++;
        else if (*end)
            return -1;
        p = end;
    }
    return n;
}

static void print_token(int id)
{
    if (id < 256)
        fputc(id, stdout);
    else
        printf("<|%d|>", id);
}

int cmd_generate(int argc, char **argv)
{
    const char *ckpt = NULL, *prompt = NULL, *prompt_ids = NULL, *stop = NULL;
    const char *tokenizer = NULL; /* NULL: the checkpoint's */
    long max_tokens = 128, seed = 0, threads = 0;
    float temperature = 0.8f, top_p = 0.95f;
    int show_ids = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            gen_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--ids")) {
            show_ids = 1;
            continue;
        } else if (!v) {
            bad = 1;
        } else if (!strcmp(a, "--ckpt")) {
            ckpt = v;
        } else if (!strcmp(a, "--prompt")) {
            prompt = v;
        } else if (!strcmp(a, "--prompt-ids")) {
            prompt_ids = v;
        } else if (!strcmp(a, "--stop")) {
            stop = v;
        } else if (!strcmp(a, "--tokenizer")) {
            tokenizer = v;
        } else if (!strcmp(a, "--max-tokens")) {
            bad = parse_long(v, 0, RL_MODEL_SEQ_MAX, &max_tokens);
        } else if (!strcmp(a, "--seed")) {
            bad = parse_long(v, 0, 0x7fffffffffffffffL, &seed);
        } else if (!strcmp(a, "--threads")) {
            bad = parse_long(v, 0, RL_MODEL_THREADS_MAX, &threads);
        } else if (!strcmp(a, "--temperature")) {
            bad = parse_float(v, &temperature);
        } else if (!strcmp(a, "--top-p")) {
            bad = parse_float(v, &top_p);
        } else {
            fprintf(stderr, "grpo generate: unknown option '%s'\n", a);
            gen_usage(stderr);
            return 2;
        }
        if (bad) {
            fprintf(stderr, "grpo generate: option %s needs a valid value\n", a);
            return 2;
        }
        i++;
    }
    if (!ckpt || (!prompt == !prompt_ids)) {
        fprintf(stderr, "grpo generate: needs --ckpt and exactly one of --prompt, --prompt-ids\n");
        gen_usage(stderr);
        return 2;
    }
    if (!(top_p > 0.0f && top_p <= 1.0f) || !(temperature >= 0.0f && temperature < 1e6f)) {
        fprintf(stderr, "grpo generate: --top-p must be in (0, 1] and --temperature >= 0\n");
        return 2;
    }

    char err[RL_ERR_MAX];
    model_opts mo;
    model_opts_default(&mo);
    mo.n_threads = (int)threads;
    model *m;
    model_meta meta;
    if (model_load(&m, &meta, ckpt, &mo, err)) {
        fprintf(stderr, "grpo generate: %s\n", err);
        return 1;
    }
    int rc = 1;
    tok_t *tok = NULL;
    if (!tokenizer)
        tokenizer = meta.tokenizer[0] ? meta.tokenizer : "bytes";
    if (strcmp(tokenizer, "bytes") != 0) {
        if (tok_load(&tok, tokenizer, err)) {
            fprintf(stderr, "grpo generate: --tokenizer: %s\n", err);
            model_free(m);
            return 1;
        }
        if (tok_vocab_size(tok) != m->cfg.vocab) {
            fprintf(stderr, "grpo generate: tokenizer %s has %d ids, the model %d: expected the "
                            "checkpoint's own tokenizer\n",
                    tokenizer, tok_vocab_size(tok), m->cfg.vocab);
            tok_free(tok);
            model_free(m);
            return 1;
        }
    }
    int *ids = malloc(sizeof(int) * GEN_PROMPT_MAX);
    int stop_ids[RL_MODEL_STOP_IDS_MAX];
    int n_stop = 0, n = 0;
    if (!ids) {
        fprintf(stderr, "grpo generate: out of memory\n");
        goto done;
    }
    if (prompt_ids) {
        n = parse_ids(prompt_ids, ids, GEN_PROMPT_MAX, m->cfg.vocab - 1);
        if (n < 1) {
            fprintf(stderr, "grpo generate: --prompt-ids: expected 1..%d comma-separated ids "
                            "below %d\n",
                    GEN_PROMPT_MAX, m->cfg.vocab);
            rc = 2;
            goto done;
        }
    } else {
        size_t len = strlen(prompt);
        if (len < 1 || len > GEN_PROMPT_MAX) {
            fprintf(stderr, "grpo generate: --prompt: expected 1..%d bytes\n", GEN_PROMPT_MAX);
            rc = 2;
            goto done;
        }
        if (tok) { /* chat markers in the prompt become their single ids */
            int32_t *enc = NULL;
            size_t ne = 0;
            if (tok_encode(&enc, &ne, tok, prompt, len, TOK_SPECIAL_ALLOW, err)) {
                fprintf(stderr, "grpo generate: --prompt: %s\n", err);
                goto done;
            }
            for (size_t i = 0; i < ne && i < GEN_PROMPT_MAX; i++)
                ids[n++] = enc[i];
            free(enc);
        } else {
            if (m->cfg.vocab < 256) {
                fprintf(stderr, "grpo generate: the bytes tokenizer needs vocab >= 256, the model "
                                "has %d\n",
                        m->cfg.vocab);
                goto done;
            }
            for (size_t i = 0; i < len; i++)
                ids[n++] = (unsigned char)prompt[i];
        }
    }
    if (!stop && tok) { /* default: stop at the end of the assistant's message */
        int32_t s1 = tok_special_id(tok, "<|im_end|>"), s2 = tok_special_id(tok, "<|endoftext|>");
        if (s1 >= 0)
            stop_ids[n_stop++] = s1;
        if (s2 >= 0)
            stop_ids[n_stop++] = s2;
    }
    if (stop) {
        n_stop = parse_ids(stop, stop_ids, RL_MODEL_STOP_IDS_MAX, m->cfg.vocab - 1);
        if (n_stop < 1) {
            fprintf(stderr, "grpo generate: --stop: expected up to %d comma-separated ids\n",
                    RL_MODEL_STOP_IDS_MAX);
            rc = 2;
            goto done;
        }
    }

    model_sample_opts so;
    model_sample_opts_default(&so);
    so.temperature = temperature;
    so.top_p = top_p;
    so.seed = (uint64_t)seed;
    so.max_new = (int)max_tokens;
    so.stop_ids = stop_ids;
    so.n_stop = n_stop;
    model_sample_out out;
    const int *prompts[1] = {ids};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (model_sample(m, &out, prompts, &n, 1, &so, err)) {
        fprintf(stderr, "grpo generate: %s\n", err);
        goto done;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (tok) {
        char *text = NULL;
        size_t tl = 0;
        if (tok_decode(&text, &tl, tok, (const int32_t *)out.tokens, (size_t)out.n, err)) {
            fprintf(stderr, "grpo generate: %s\n", err);
            model_sample_out_dispose(&out);
            goto done;
        }
        fwrite(text, 1, tl, stdout);
        free(text);
    } else {
        for (int i = 0; i < out.n; i++)
            print_token(out.tokens[i]);
    }
    printf("\n");
    if (show_ids) {
        printf("{\"tokens\": [");
        for (int i = 0; i < out.n; i++)
            printf("%s%d", i ? ", " : "", out.tokens[i]);
        printf("], \"logprobs\": [");
        for (int i = 0; i < out.n; i++)
            printf("%s%.6f", i ? ", " : "", (double)out.logprobs[i]);
        printf("]}\n");
    }
    double lp = 0.0;
    for (int i = 0; i < out.n; i++)
        lp += out.logprobs[i];
    static const char *why[] = {"length", "stop token", "context"};
    fprintf(stderr, "generate: %d prompt + %d new tokens in %.2f s (%.0f tokens/s), stop: %s, "
                    "mean logprob %.3f\n",
            n, out.n, secs, secs > 0 ? out.n / secs : 0.0, why[out.stop],
            out.n ? lp / out.n : 0.0);
    model_sample_out_dispose(&out);
    fflush(stdout);
    rc = 0;
done:
    free(ids);
    tok_free(tok);
    model_free(m);
    return rc;
}
