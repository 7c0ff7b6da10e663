/* test_model_policy.c - `model:CKPT` as a policy: sampled logprobs equal
 * the teacher-forced scores of the same weights (importance ratio 1),
 * batched requests, honest answers to contexts past the window, tokenizer
 * checks; and, when the shipped checkpoint exists, a well-formed first
 * turn on leapyear. */
#include "model/model.h"
#include "policy/policy.h"
#include "protocol/tokenizer.h"

#include "common/err.h"
#include "common/fsutil.h"
#include "protocol/chat.h"
#include "protocol/template.h"
#include "protocol/toolcall.h"
#include "harness/tools.h"
#include "corpus/task.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];
static char ckpt[128], tokpath[128];

/* A tiny tokenizer and a tiny random model that names it. */
static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/rl-mpol-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(ckpt, sizeof ckpt, "%s/m.safetensors", dir);
    snprintf(tokpath, sizeof tokpath, "%s/tok.json", dir);
    static const char text[] = "<|im_start|>user\nfix the bug in leap.c please<|im_end|>\n<|im_start|>assistant\n"
                               "<tool_call>\n<function=read_file>\n</function>\n</tool_call>";
    tok_train_opts o = tok_train_opts_default();
    o.vocab_size = 290;
    char err[RL_ERR_MAX];
    tok_t *tok;
    ck_assert_int_eq(tok_train(&tok, text, sizeof text - 1, &o, err), 0);
    ck_assert_int_eq(tok_save(tok, tokpath, err), 0);
    model_config c;
    model_config_default(&c);
    c.vocab = tok_vocab_size(tok);
    c.d_model = 16;
    c.n_layer = 2;
    c.n_head = 2;
    c.n_kv_head = 1;
    c.d_ff = 24;
    c.max_seq = 64;
    model_opts mo;
    model_opts_default(&mo);
    model *m;
    ck_assert_int_eq(model_new(&m, &c, &mo, err), 0);
    model_random_init(m, 11);
    model_meta meta;
    model_meta_default(&meta);
    snprintf(meta.tokenizer, sizeof meta.tokenizer, "%s", tokpath);
    ck_assert_int_eq(model_file_hash(meta.tokenizer_hash, tokpath, err), 0);
    ck_assert_int_eq(model_save(m, ckpt, &meta, err), 0);
    model_free(m);
    tok_free(tok);
}

static void teardown(void) { fs_remove_tree(dir, NULL); }

static policy *open_pol(double temperature)
{
    char spec[160], err[RL_ERR_MAX];
    snprintf(spec, sizeof spec, "model:%s", ckpt);
    pol_env env;
    pol_env_default(&env);
    env.temperature = temperature;
    policy *p;
    ck_assert_msg(pol_open(&p, spec, &env, err) == 0, "%s", err);
    ck_assert_ptr_nonnull(p->tok);
    return p;
}

/* logprobs of ids after prompt under the checkpoint, by model_score */
static void score(float *out, const int32_t *prompt, size_t np, const int32_t *ids, size_t n, float temp)
{
    char err[RL_ERR_MAX];
    model *m;
    ck_assert_int_eq(model_load(&m, NULL, ckpt, NULL, err), 0);
    int len = (int)(np + n);
    int *seq = malloc((size_t)len * sizeof *seq);
    for (size_t i = 0; i < np; i++)
        seq[i] = prompt[i];
    for (size_t i = 0; i < n; i++)
        seq[np + i] = ids[i];
    float *lp = malloc((size_t)len * sizeof *lp);
    const int *seqs[1] = {seq};
    float *lps[1] = {lp};
    ck_assert_int_eq(model_score(m, lps, seqs, &len, 1, temp, err), 0);
    for (size_t i = 0; i < n; i++)
        out[i] = lp[np - 1 + i];
    free(seq);
    free(lp);
    model_free(m);
}

START_TEST(test_sample_equals_score)
{
    policy *p = open_pol(0.9);
    const char *ctx[3] = {"<|im_start|>user\nfix leap.c<|im_end|>\n<|im_start|>assistant\n",
                          "<|im_start|>assistant\n", "please fix the bug"};
    pol_request req[3];
    memset(req, 0, sizeof req);
    for (int i = 0; i < 3; i++) {
        req[i].context = ctx[i];
        req[i].context_len = strlen(ctx[i]);
        req[i].max_tokens = 12;
        req[i].seed = 5;
    }
    pol_response resp[3];
    char err[RL_ERR_MAX];
    ck_assert_msg(pol_generate(p, resp, req, 3, err) == 0, "%s", err);
    int32_t end = tok_special_id(p->tok, "<|im_end|>");
    for (int i = 0; i < 3; i++) {
        pol_response *r = &resp[i];
        ck_assert_uint_ge(r->n_ids, 1);
        ck_assert_uint_le(r->n_ids, 12);
        ck_assert_int_gt(r->gen_ms, 0);
        /* the text is the decoded ids without the stop token */
        int stopped = r->finish == POL_FINISH_STOP;
        ck_assert_int_eq(stopped, r->ids[r->n_ids - 1] == end);
        char *text;
        size_t len;
        ck_assert_int_eq(tok_decode(&text, &len, p->tok, r->ids, r->n_ids - (size_t)stopped, err), 0);
        ck_assert_uint_eq(len, r->text_len);
        ck_assert_int_eq(memcmp(text, r->text, len), 0);
        free(text);
        /* importance ratio 1: the same weights score the same logprobs */
        int32_t *prompt;
        size_t np;
        ck_assert_int_eq(tok_encode(&prompt, &np, p->tok, ctx[i], strlen(ctx[i]), TOK_SPECIAL_ALLOW, err), 0);
        float lp[16];
        score(lp, prompt, np, r->ids, r->n_ids, 0.9f);
        for (size_t k = 0; k < r->n_ids; k++)
            ck_assert_msg(fabsf(lp[k] - r->logprobs[k]) < 1e-4f, "request %d token %zu: sampled %g, scored %g", i, k,
                          (double)r->logprobs[k], (double)lp[k]);
        free(prompt);
    }
    /* same request, same seed, same reply */
    pol_response again;
    ck_assert_int_eq(pol_generate(p, &again, req, 1, err), 0);
    ck_assert_uint_eq(again.n_ids, resp[0].n_ids);
    ck_assert_int_eq(memcmp(again.ids, resp[0].ids, again.n_ids * sizeof(int32_t)), 0);
    pol_response_dispose(&again);
    for (int i = 0; i < 3; i++)
        pol_response_dispose(&resp[i]);
    pol_free(p);
}
END_TEST

/* context_ids are used as given (not the text), greedy at temperature 0 */
START_TEST(test_context_ids_and_window)
{
    policy *p = open_pol(0.0);
    char err[RL_ERR_MAX];
    int32_t ids[64];
    for (int i = 0; i < 64; i++)
        ids[i] = (i * 7) % 250;
    pol_request req;
    memset(&req, 0, sizeof req);
    req.context = "ignored when ids are given";
    req.context_len = strlen(req.context);
    req.context_ids = ids;
    req.n_context_ids = 10;
    req.max_tokens = 100; /* more than the window has room for */
    pol_response r;
    ck_assert_int_eq(pol_generate(p, &r, &req, 1, err), 0);
    ck_assert_uint_le(10 + r.n_ids, 64); /* never past the model's window */
    float lp[64];
    score(lp, ids, 10, r.ids, r.n_ids, 1.0f);
    for (size_t k = 0; k < r.n_ids; k++)
        ck_assert(fabsf(lp[k] - r.logprobs[k]) < 1e-4f);
    if (r.finish == POL_FINISH_LENGTH)
        ck_assert_uint_eq(10 + r.n_ids, 64);
    pol_response_dispose(&r);
    /* a full window: an honest empty reply cut at the length limit */
    req.n_context_ids = 64;
    ck_assert_int_eq(pol_generate(p, &r, &req, 1, err), 0);
    ck_assert_uint_eq(r.n_ids, 0);
    ck_assert_uint_eq(r.text_len, 0);
    ck_assert_str_eq(r.text, "");
    ck_assert_int_eq(r.finish, POL_FINISH_LENGTH);
    pol_response_dispose(&r);
    /* max_tokens is respected */
    req.n_context_ids = 5;
    req.max_tokens = 3;
    ck_assert_int_eq(pol_generate(p, &r, &req, 1, err), 0);
    ck_assert_uint_le(r.n_ids, 3);
    pol_response_dispose(&r);
    /* ids outside the vocabulary are an error, not a crash */
    ids[2] = 100000;
    ck_assert_int_eq(pol_generate(p, &r, &req, 1, err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "context id"));
    pol_free(p);
}
END_TEST

START_TEST(test_tokenizer_checks)
{
    char spec[160], err[RL_ERR_MAX];
    pol_env env;
    pol_env_default(&env);
    policy *p;
    /* the tokenizer changed since the checkpoint was written */
    FILE *f = fopen(tokpath, "a");
    fputs(" ", f);
    fclose(f);
    snprintf(spec, sizeof spec, "model:%s", ckpt);
    ck_assert_int_eq(pol_open(&p, spec, &env, err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "hash"));
    ck_assert_ptr_null(strchr(err, '\n'));
    /* missing */
    unlink(tokpath);
    ck_assert_int_eq(pol_open(&p, spec, &env, err), RL_ENOENT);
    ck_assert_ptr_nonnull(strstr(err, "tokenizer"));
    /* no checkpoint */
    snprintf(spec, sizeof spec, "model:%s/none.safetensors", dir);
    ck_assert_int_lt(pol_open(&p, spec, &env, err), 0);
    ck_assert_int_eq(pol_open(&p, "model:", &env, err), RL_EINVAL);
}
END_TEST

/* ---- the shipped checkpoint ------------------------------------------------- */

#define SHIPPED "models/policy.safetensors"

/* The harness's first context for leapyear (think on, prompt v2), encoded
 * segment by segment as harness/episode.c does. */
static int32_t *leapyear_context(size_t *n, const tok_t *tok)
{
    char err[RL_ERR_MAX];
    task *t;
    ck_assert_msg(task_load(&t, "tasks/leapyear.json", "repos", err) == 0, "%s", err);
    char *prompt;
    ck_assert_int_eq(tpl_load_prompt(&prompt, "prompts", "v2", err), 0);
    chat *c;
    ck_assert_int_eq(chat_new(&c, NULL), 0);
    ck_assert_int_eq(chat_add_system(c, prompt, err), 0);
    ck_assert_int_eq(chat_add_user(c, t->problem_statement, err), 0);
    tpl_opts o;
    tpl_opts_default(&o);
    size_t nspecs;
    const tc_spec *specs = tool_specs(&nspecs);
    tpl_text ctx;
    ck_assert_int_eq(tpl_render(&ctx, &o, specs, nspecs, c->msgs, c->n, err), 0);
    int32_t *all = NULL;
    *n = 0;
    for (size_t i = 0; i < ctx.nsegs; i++) {
        const tpl_seg *s = &ctx.segs[i];
        tok_mode mode = s->origin == TPL_TEMPLATE || s->origin == TPL_ASSISTANT ? TOK_SPECIAL_ALLOW : TOK_SPECIAL_PLAIN;
        int32_t *part;
        size_t pn;
        ck_assert_int_eq(tok_encode(&part, &pn, tok, ctx.text + s->off, s->len, mode, err), 0);
        all = realloc(all, (*n + pn + 1) * sizeof *all);
        memcpy(all + *n, part, pn * sizeof *part);
        *n += pn;
        free(part);
    }
    tpl_text_dispose(&ctx);
    chat_free(c);
    free(prompt);
    task_free(t);
    return all;
}

START_TEST(test_shipped_checkpoint)
{
    if (access(SHIPPED, R_OK) != 0) {
        fprintf(stderr, "test_shipped_checkpoint: %s not present, skipped\n", SHIPPED);
        return;
    }
    char err[RL_ERR_MAX];
    pol_env env;
    pol_env_default(&env);
    env.temperature = 0; /* greedy */
    policy *p;
    ck_assert_msg(pol_open(&p, "model:" SHIPPED, &env, err) == 0, "%s", err);
    size_t n;
    int32_t *ids = leapyear_context(&n, p->tok);
    pol_request req;
    memset(&req, 0, sizeof req);
    req.context_ids = ids;
    req.n_context_ids = n;
    req.max_tokens = 256;
    req.seed = 1;
    pol_response r;
    ck_assert_int_eq(pol_generate(p, &r, &req, 1, err), 0);
    ck_assert_int_eq(r.finish, POL_FINISH_STOP);
    size_t nspecs;
    const tc_spec *specs = tool_specs(&nspecs);
    tc_parsed parsed;
    int rc = tc_parse(&parsed, r.text, r.text_len, specs, nspecs, NULL, err);
    ck_assert_msg(rc == 0 && !parsed.format_error && parsed.ncalls >= 1, "first turn not a well-formed call: %s\n%s",
                  parsed.error, r.text);
    tc_parsed_dispose(&parsed);
    pol_response_dispose(&r);
    free(ids);
    pol_free(p);
}
END_TEST

Suite *model_policy_suite(void)
{
    Suite *s = suite_create("model_policy");
    TCase *tc = tcase_create("policy");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_sample_equals_score);
    tcase_add_test(tc, test_context_ids_and_window);
    tcase_add_test(tc, test_tokenizer_checks);
    suite_add_tcase(s, tc);
    TCase *sh = tcase_create("shipped");
    tcase_set_timeout(sh, 120);
    tcase_add_test(sh, test_shipped_checkpoint);
    suite_add_tcase(s, sh);
    return s;
}
