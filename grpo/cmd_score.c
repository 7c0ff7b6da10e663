/* cmd_score.c - `grpo score`: what a checkpoint thinks of recorded trajectories.
 *
 *   grpo score --ckpt CKPT --data TRAJ.jsonl [--max N] [--show LOGP]
 *              [--tokenizer FILE] [--threads N] [--dtype f32|bf16]
 *
 * Scores the policy-written tokens of each record (the SFT samples of
 * grpo/traj, history keep) teacher-forced, and prints one JSON line per
 * sample: the mean logprob of its policy tokens, and the same split into
 * copy tokens and the rest. A copy token is one whose trigram (it and the
 * two tokens before it) already occurred in the context the environment
 * wrote (tool output, the task) since the policy's first turn, so a model
 * that copies from its context (an induction head) can predict it almost
 * surely: a path from a listing, old_string and most of new_string from
 * the file read. A model that cannot copy scores them like any other
 * token. --show prints, under each line, the policy tokens
 * scored below LOGP with the text before them. A summary goes to stderr.
 */
#include "grpo/cli.h"
#include "grpo/traj.h"
#include "model/model.h"
#include "protocol/tokenizer.h"

#include "common/arg.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/vec.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void score_usage(FILE *f)
{
    fprintf(f, "usage: grpo score --ckpt CKPT --data TRAJ.jsonl [--max N] [--show LOGP]\n"
               "                  [--tokenizer FILE] [--threads N] [--dtype f32|bf16]\n"
               "\n"
               "Scores the policy tokens of trajectory records under a checkpoint: one JSON\n"
               "line per sample with the mean logprob, split into copy tokens (their trigram\n"
               "occurs earlier in the tool output) and the others.\n"
               "  --max N        samples at most (default: all)\n"
               "  --show LOGP    also print the policy tokens scored below LOGP, in context\n"
               "  --tokenizer F  tokenizer for records without ids (default: the checkpoint's)\n"
               "  --dtype D      weight matrices in memory: f32 (default) or bf16 (half the\n"
               "                 memory; products still in fp32)\n");
}

/* 1 if tokens[t-2..t] occurred before position t as a trigram of context
 * the policy did not write (tool output, the task), after its first token
 * at `first`: text the policy can copy, not the prompt's fixed format. */
static int is_copy(const int32_t *tok, const unsigned char *mask, size_t first, size_t t)
{
    if (t < 2)
        return 0;
    for (size_t j = first + 2; j < t; j++)
        if (!mask[j] && !mask[j - 1] && !mask[j - 2] && tok[j] == tok[t] && tok[j - 1] == tok[t - 1] &&
            tok[j - 2] == tok[t - 2])
            return 1;
    return 0;
}

/* Prints text with newlines shown as '|' (one line per shown token). */
static void put_flat(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fputc(s[i] == '\n' ? '|' : s[i], stdout);
}

static void show_token(const tok_t *tok, const int32_t *ids, size_t t, double lp)
{
    size_t from = t > 8 ? t - 8 : 0, n;
    const char *b = tok_id_to_bytes(tok, ids[t], &n);
    printf("  %7.2f  ", lp);
    put_flat(b ? b : "", b ? n : 0);
    printf("  after ");
    for (size_t k = from; k < t; k++) {
        b = tok_id_to_bytes(tok, ids[k], &n);
        put_flat(b ? b : "", b ? n : 0);
    }
    fputc('\n', stdout);
}

int cmd_score(int argc, char **argv)
{
    const char *ckpt = NULL, *data = NULL, *tokenizer = NULL;
    long max = 0, threads = 0;
    int dtype = MODEL_DTYPE_F32;
    double show = NAN;
    char aerr[RL_ERR_MAX];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0, rc = 0;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            score_usage(stdout);
            return 0;
        } else if (!v) {
            bad = 1;
        } else if (!strcmp(a, "--ckpt")) {
            ckpt = v;
        } else if (!strcmp(a, "--data")) {
            data = v;
        } else if (!strcmp(a, "--tokenizer")) {
            tokenizer = v;
        } else if (!strcmp(a, "--dtype")) {
            rc = model_dtype_parse(&dtype, a, v, aerr);
        } else if (!strcmp(a, "--max")) {
            rc = arg_long(&max, a, v, 1, 1000000000L, aerr);
        } else if (!strcmp(a, "--threads")) {
            rc = arg_long(&threads, a, v, 0, RL_MODEL_THREADS_MAX, aerr);
        } else if (!strcmp(a, "--show")) {
            rc = arg_double(&show, a, v, -1e6, 0, aerr);
        } else {
            fprintf(stderr, "grpo score: unknown option '%s'\n", a);
            score_usage(stderr);
            return 2;
        }
        if (bad) {
            fprintf(stderr, "grpo score: %s: expected a value\n", a);
            return 2;
        }
        if (rc < 0) {
            fprintf(stderr, "grpo score: %s\n", aerr);
            return 2;
        }
        i++;
    }
    if (!ckpt || !data) {
        fprintf(stderr, "grpo score: --ckpt and --data are required\n");
        score_usage(stderr);
        return 2;
    }
    char err[RL_ERR_MAX];
    model_opts mo;
    model_opts_default(&mo);
    mo.n_threads = (int)threads;
    mo.dtype = dtype;
    model *m = NULL;
    model_meta meta;
    tok_t *tok = NULL;
    traj_set set;
    traj_set_init(&set);
    int rc = model_load(&m, &meta, ckpt, &mo, err);
    const char *tpath = tokenizer ? tokenizer : meta.tokenizer;
    if (rc == 0 && !tpath[0])
        rc = rl_err(err, RL_EINVAL, "%s names no tokenizer: give --tokenizer FILE", ckpt);
    if (rc == 0)
        rc = tok_load(&tok, tpath, err);
    if (rc == 0 && tok_vocab_size(tok) != m->cfg.vocab)
        rc = rl_err(err, RL_EINVAL, "%s has %d ids but %s a vocabulary of %d", tpath, tok_vocab_size(tok), ckpt,
                    m->cfg.vocab);
    traj_opts to;
    traj_opts_default(&to);
    to.tok = tok;
    to.max_len = (size_t)m->cfg.max_seq;
    if (rc == 0)
        rc = traj_load_file(&set, data, &to, err);
    float *lp = NULL;
    size_t lp_alloc = 0;
    double all_sum = 0, copy_sum = 0;
    size_t all_n = 0, copy_n = 0, samples = 0;
    for (size_t i = 0; rc == 0 && i < set.n && (!max || (long)i < max); i++) {
        const traj_sample *x = &set.v[i];
        if (VEC_GROW(lp, lp_alloc, x->n ? x->n : 1, RL_MODEL_SEQ_MAX) < 0) {
            rc = rl_err(err, RL_ENOMEM, "score: sample %zu: no memory for %zu logprobs (at most %d)", i, x->n,
                        RL_MODEL_SEQ_MAX);
            break;
        }
        const int *seq = (const int *)x->tokens;
        int len = (int)x->n;
        if ((rc = model_score(m, &lp, &seq, &len, 1, 1.0f, err)) < 0)
            break;
        double s = 0, cs = 0;
        size_t n = 0, cn = 0, first = 1;
        while (first < x->n && !x->mask[first])
            first++;
        for (size_t t = 1; t < x->n; t++) {
            if (!x->mask[t])
                continue;
            double l = lp[t - 1];
            s += l, n++;
            if (is_copy(x->tokens, x->mask, first, t))
                cs += l, cn++;
        }
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "task", x->task ? x->task : "");
        cJSON_AddNumberToObject(o, "policy_tokens", (double)n);
        cJSON_AddNumberToObject(o, "logp_mean", n ? s / (double)n : 0);
        cJSON_AddNumberToObject(o, "copy_tokens", (double)cn);
        cJSON_AddNumberToObject(o, "copy_logp_mean", cn ? cs / (double)cn : 0);
        cJSON_AddNumberToObject(o, "other_logp_mean", n > cn ? (s - cs) / (double)(n - cn) : 0);
        char *js = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
        if (!js) {
            rc = rl_err(err, RL_ENOMEM, "score: out of memory");
            break;
        }
        puts(js);
        free(js);
        if (!isnan(show))
            for (size_t t = 1; t < x->n; t++)
                if (x->mask[t] && lp[t - 1] < show)
                    show_token(tok, x->tokens, t, lp[t - 1]);
        all_sum += s, all_n += n, copy_sum += cs, copy_n += cn, samples++;
    }
    if (rc == 0)
        fprintf(stderr,
                "score: %zu samples, %zu policy tokens, mean logprob %.4f; %zu copy tokens, mean %.4f; others %.4f\n",
                samples, all_n, all_n ? all_sum / (double)all_n : 0, copy_n, copy_n ? copy_sum / (double)copy_n : 0,
                all_n > copy_n ? (all_sum - copy_sum) / (double)(all_n - copy_n) : 0);
    else
        fprintf(stderr, "grpo score: %s\n", err);
    free(lp);
    traj_set_dispose(&set);
    tok_free(tok);
    model_free(m);
    return rc == 0 ? 0 : 1;
}
