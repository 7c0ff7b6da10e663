/* cmd_generate.c - `grpo generate`: sample a continuation from a checkpoint.
 *
 *   grpo generate --ckpt CKPT (--prompt TEXT | --prompt-ids 1,2,3)
 *                 [--max-tokens N] [--temperature T] [--top-p P] [--seed S]
 *                 [--stop ID,...] [--tokenizer FILE|bytes] [--threads N] [--ids]
 *                 [--dtype f32|bf16]
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

#include "common/arg.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/limits.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest --prompt / --prompt-ids accepted, in tokens. */
#define GEN_PROMPT_MAX RL_MODEL_SEQ_MAX

static void gen_usage(FILE *f)
{
    fprintf(f,
            "usage: grpo generate --ckpt CKPT (--prompt TEXT | --prompt-ids ID,...)\n"
            "                     [--max-tokens N] [--temperature T] [--top-p P] [--seed S]\n"
            "                     [--stop ID,...] [--tokenizer FILE|bytes] [--threads N] [--ids]\n"
            "                     [--dtype f32|bf16]\n"
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
            "  --ids             also print {\"tokens\": [...], \"logprobs\": [...]}\n"
            "  --dtype D         weight matrices in memory: f32 (default) or bf16 (half\n"
            "                    the memory; products still in fp32)\n");
}

/* "1,2,3" -> ids in 0..hi (at most max); returns the count, or RL_EINVAL
 * with err naming the flag. */
static int parse_ids(const char *flag, const char *s, int *ids, int max, int hi, char *err)
{
    int n = 0;
    const char *p = s;
    for (;;) {
        char one[32];
        size_t len = strcspn(p, ",");
        if (n >= max || len >= sizeof one)
            return rl_err(err, RL_EINVAL, "%s: expected up to %d comma-separated ids, got '%s'", flag, max, s);
        memcpy(one, p, len);
        one[len] = '\0';
        int rc = arg_int(&ids[n], flag, one, 0, hi, err);
        if (rc < 0)
            return rc;
        n++;
        if (!p[len])
            return n;
        p += len + 1;
    }
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
    int max_tokens = 128, threads = 0, dtype = MODEL_DTYPE_F32;
    uint64_t seed = 0;
    double temperature = 0.8, top_p = 0.95;
    char err[RL_ERR_MAX];
    int show_ids = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0, rc = 0;
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
        } else if (!strcmp(a, "--dtype")) {
            rc = model_dtype_parse(&dtype, a, v, err);
        } else if (!strcmp(a, "--max-tokens")) {
            rc = arg_int(&max_tokens, a, v, 0, RL_MODEL_SEQ_MAX, err);
        } else if (!strcmp(a, "--seed")) {
            rc = arg_u64(&seed, a, v, 0, UINT64_MAX, err);
        } else if (!strcmp(a, "--threads")) {
            rc = arg_int(&threads, a, v, 0, RL_MODEL_THREADS_MAX, err);
        } else if (!strcmp(a, "--temperature")) {
            rc = arg_double(&temperature, a, v, 0, 1e6, err);
        } else if (!strcmp(a, "--top-p")) {
            rc = arg_double(&top_p, a, v, 0, 1, err);
        } else {
            fprintf(stderr, "grpo generate: unknown option '%s'\n", a);
            gen_usage(stderr);
            return 2;
        }
        if (bad) {
            fprintf(stderr, "grpo generate: %s: expected a value\n", a);
            return 2;
        }
        if (rc < 0) {
            fprintf(stderr, "grpo generate: %s\n", err);
            return 2;
        }
        i++;
    }
    if (!ckpt || (!prompt == !prompt_ids)) {
        fprintf(stderr, "grpo generate: needs --ckpt and exactly one of --prompt, --prompt-ids\n");
        gen_usage(stderr);
        return 2;
    }
    if (!(top_p > 0)) {
        fprintf(stderr, "grpo generate: --top-p: expected a number in (0, 1], got 0\n");
        return 2;
    }

    model_opts mo;
    model_opts_default(&mo);
    mo.n_threads = (int)threads;
    mo.dtype = dtype;
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
        n = parse_ids("--prompt-ids", prompt_ids, ids, GEN_PROMPT_MAX, m->cfg.vocab - 1, err);
        if (n < 0) {
            fprintf(stderr, "grpo generate: %s\n", err);
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
        n_stop = parse_ids("--stop", stop, stop_ids, RL_MODEL_STOP_IDS_MAX, m->cfg.vocab - 1, err);
        if (n_stop < 0) {
            fprintf(stderr, "grpo generate: %s\n", err);
            rc = 2;
            goto done;
        }
    }

    model_sample_opts so;
    model_sample_opts_default(&so);
    so.temperature = (float)temperature;
    so.top_p = (float)top_p;
    so.seed = seed;
    so.max_new = max_tokens;
    so.stop_ids = stop_ids;
    so.n_stop = n_stop;
    model_sample_out out;
    const int *prompts[1] = {ids};
    double t0 = clk_s();
    if (model_sample(m, &out, prompts, &n, 1, &so, err)) {
        fprintf(stderr, "grpo generate: %s\n", err);
        goto done;
    }
    double secs = clk_s() - t0;
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
