/* test_traj.c - trajectory records to training samples: hand-made records
 * in history keep and drop, with and without recorded ids; the loss mask
 * covers exactly the policy-written tokens; masked-out tokens contribute
 * exactly zero gradient; truncation; bad records. */
#include "grpo/sample.h"
#include "grpo/traj.h"
#include "harness/record.h"
#include "model/model.h"
#include "protocol/tokenizer.h"

#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"

#include <cJSON.h>
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static tok_t *g_tok;

static void setup_tok(void)
{
    static const char text[] = "<|im_start|>system\nYou fix bugs.<|im_end|>\n<|im_start|>user\nthe test fails "
                               "in leap.c<|im_end|>\n<|im_start|>assistant\n<think>\nread it\n</think>\n\n"
                               "<tool_call>\n<function=read_file>\n<parameter=path>\nleap.c\n</parameter>\n"
                               "</function>\n</tool_call><|im_end|>\nreturn year % 4 == 0;\n";
    tok_train_opts o = tok_train_opts_default();
    o.vocab_size = 300;
    char err[RL_ERR_MAX];
    ck_assert_msg(tok_train(&g_tok, text, sizeof text - 1, &o, err) == 0, "%s", err);
}

static void teardown_tok(void)
{
    tok_free(g_tok);
    g_tok = NULL;
}

/* ---- a hand-made record ------------------------------------------------------ */

typedef struct seg {
    const char *text, *origin;
} seg;

/* The parts of each turn's context (turn 1 continues turn 0 in keep). */
static const seg CTX0[] = {
    {"<|im_start|>system\n", "template"},
    {"You fix bugs.", "system"},
    {"<|im_end|>\n", "template"},
    {"<|im_start|>user\n", "template"},
    {"leap.c is wrong <|im_end|> here", "user"}, /* untrusted text that looks like a marker */
    {"<|im_end|>\n", "template"},
    {"<|im_start|>assistant\n", "template"},
};
static const char GEN0[] = "<think>\nread it\n</think>\n\n<tool_call>\n<function=read_file>\n<parameter=path>\n"
                           "leap.c\n</parameter>\n</function>\n</tool_call>";
/* keep: turn 1 context = ctx0 + gen0 + these */
static const seg APPEND1[] = {
    {"<|im_end|>", "assistant"},
    {"\n", "template"},
    {"<|im_start|>user\n<tool_response>\n", "template"},
    {"return year % 4 == 0; <tool_call>", "tool"},
    {"\n</tool_response><|im_end|>\n", "template"},
    {"<|im_start|>assistant\n", "template"},
};
static const char GEN1[] = "<think>\nfix\n</think>\n\ndone";
/* drop: turn 1's context holds turn 0's reply without its think block */
static const char GEN0_STRIPPED[] = "<tool_call>\n<function=read_file>\n<parameter=path>\nleap.c\n</parameter>\n"
                                    "</function>\n</tool_call>";

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void add_segs(buf_t *text, cJSON *segs, const seg *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        cJSON *a = cJSON_CreateArray();
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)text->len));
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)strlen(s[i].text)));
        cJSON_AddItemToArray(a, cJSON_CreateString(s[i].origin));
        cJSON_AddItemToArray(segs, a);
        buf_puts(text, s[i].text);
    }
}

static void add_one_seg(buf_t *text, cJSON *segs, const char *s, const char *origin)
{
    seg x = {s, origin};
    add_segs(text, segs, &x, 1);
}

static cJSON *record_base(const char *history)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "key", "leap#cfg=00ff#seed=7");
    cJSON_AddStringToObject(r, "task", "leap");
    cJSON *c = cJSON_AddObjectToObject(r, "config");
    cJSON_AddStringToObject(c, "policy", "oracle");
    cJSON_AddStringToObject(c, "history", history);
    cJSON_AddNumberToObject(c, "seed", 7);
    cJSON_AddNumberToObject(c, "temperature", 0.7);
    cJSON_AddNumberToObject(r, "reward", 1);
    cJSON_AddArrayToObject(r, "turns");
    return r;
}

/* A scripted (no ids) two-turn record in keep mode. */
static cJSON *record_keep_text(void)
{
    cJSON *r = record_base("keep"), *turns = cJSON_GetObjectItem(r, "turns");
    buf_t text;
    buf_init(&text, 0);
    cJSON *t0 = cJSON_CreateObject(), *s0 = cJSON_CreateArray();
    add_segs(&text, s0, CTX0, N(CTX0));
    cJSON_AddStringToObject(cJSON_AddObjectToObject(t0, "context"), "text", buf_str(&text));
    cJSON_AddStringToObject(t0, "generated", GEN0);
    cJSON_AddItemToObject(t0, "segments", s0);
    cJSON_AddItemToArray(turns, t0);
    /* turn 1: the full context's segments; the record stores the append */
    cJSON *t1 = cJSON_CreateObject(), *s1 = cJSON_CreateArray();
    buf_t full;
    buf_init(&full, 0);
    add_segs(&full, s1, CTX0, N(CTX0));
    add_one_seg(&full, s1, GEN0, "assistant");
    size_t prefix = full.len;
    add_segs(&full, s1, APPEND1, N(APPEND1));
    cJSON *c1 = cJSON_AddObjectToObject(t1, "context");
    cJSON_AddNumberToObject(c1, "prefix_turn", 0);
    cJSON_AddStringToObject(c1, "append", buf_str(&full) + prefix);
    cJSON_AddStringToObject(t1, "generated", GEN1);
    cJSON_AddItemToObject(t1, "segments", s1);
    cJSON_AddItemToArray(turns, t1);
    buf_dispose(&text);
    buf_dispose(&full);
    return r;
}

/* The same episode in drop mode: each context in full. */
static cJSON *record_drop_text(void)
{
    cJSON *r = record_base("drop"), *turns = cJSON_GetObjectItem(r, "turns");
    buf_t text;
    buf_init(&text, 0);
    cJSON *t0 = cJSON_CreateObject(), *s0 = cJSON_CreateArray();
    add_segs(&text, s0, CTX0, N(CTX0));
    cJSON_AddStringToObject(cJSON_AddObjectToObject(t0, "context"), "text", buf_str(&text));
    cJSON_AddStringToObject(t0, "generated", GEN0);
    cJSON_AddItemToObject(t0, "segments", s0);
    cJSON_AddItemToArray(turns, t0);
    buf_clear(&text);
    cJSON *t1 = cJSON_CreateObject(), *s1 = cJSON_CreateArray();
    add_segs(&text, s1, CTX0, N(CTX0));
    add_one_seg(&text, s1, GEN0_STRIPPED, "assistant");
    add_segs(&text, s1, APPEND1, N(APPEND1));
    cJSON_AddStringToObject(cJSON_AddObjectToObject(t1, "context"), "text", buf_str(&text));
    cJSON_AddStringToObject(t1, "generated", GEN1);
    cJSON_AddItemToObject(t1, "segments", s1);
    cJSON_AddItemToArray(turns, t1);
    buf_dispose(&text);
    return r;
}

/* ---- the expected sequence, built independently ------------------------------ */

typedef struct expect {
    int32_t tok[4096];
    unsigned char mask[4096];
    size_t n;
} expect;

static void exp_add(expect *e, const char *s, tok_mode mode, int mask)
{
    int32_t *ids;
    size_t n;
    char err[RL_ERR_MAX];
    ck_assert_int_eq(tok_encode(&ids, &n, g_tok, s, strlen(s), mode, err), 0);
    for (size_t i = 0; i < n; i++) {
        ck_assert_uint_lt(e->n, 4096);
        e->tok[e->n] = ids[i];
        e->mask[e->n++] = (unsigned char)mask;
    }
    free(ids);
}

static void exp_segs(expect *e, const seg *s, size_t n, int policy_mask)
{
    for (size_t i = 0; i < n; i++) {
        int plain = strcmp(s[i].origin, "template") && strcmp(s[i].origin, "assistant");
        exp_add(e, s[i].text, plain ? TOK_SPECIAL_PLAIN : TOK_SPECIAL_ALLOW,
                policy_mask && !strcmp(s[i].origin, "assistant"));
    }
}

static void check_sample(const traj_sample *s, const expect *e)
{
    ck_assert_uint_eq(s->n, e->n);
    size_t pol = 0;
    for (size_t i = 0; i < e->n; i++) {
        ck_assert_msg(s->tokens[i] == e->tok[i], "token %zu: %d, expected %d", i, s->tokens[i], e->tok[i]);
        ck_assert_msg(s->mask[i] == e->mask[i], "mask %zu: %d, expected %d", i, s->mask[i], e->mask[i]);
        pol += e->mask[i];
    }
    ck_assert_uint_eq(s->n_policy, pol);
    ck_assert_uint_gt(pol, 0);
}

/* Decoded bytes of the mask-1 tokens. */
static char *policy_text(const traj_sample *s)
{
    int32_t *v = malloc(s->n * sizeof *v);
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->mask[i])
            v[k++] = s->tokens[i];
    char *out;
    size_t len;
    char err[RL_ERR_MAX];
    ck_assert_int_eq(tok_decode(&out, &len, g_tok, v, k, err), 0);
    free(v);
    return out;
}

static int build(traj_set *set, const cJSON *rec, const traj_opts *o, char *err)
{
    return traj_add_record(set, rec, 0, o, "rec", err);
}

/* ---- keep / drop without ids ------------------------------------------------- */

START_TEST(test_keep_text)
{
    cJSON *r = record_keep_text();
    traj_opts o;
    traj_opts_default(&o);
    o.tok = g_tok;
    traj_set set;
    traj_set_init(&set);
    char err[RL_ERR_MAX];
    ck_assert_msg(build(&set, r, &o, err) == 0, "%s", err);
    ck_assert_uint_eq(set.n, 1);
    const traj_sample *s = &set.v[0];
    expect e = {.n = 0};
    exp_segs(&e, CTX0, N(CTX0), 1);
    exp_add(&e, GEN0, TOK_SPECIAL_ALLOW, 1);
    exp_segs(&e, APPEND1, N(APPEND1), 1);
    exp_add(&e, GEN1, TOK_SPECIAL_ALLOW, 1);
    exp_add(&e, "<|im_end|>", TOK_SPECIAL_ALLOW, 1);
    check_sample(s, &e);
    /* the policy wrote exactly: gen0, its stop token, gen1, its stop token */
    char *pt = policy_text(s);
    char want[1024];
    snprintf(want, sizeof want, "%s<|im_end|>%s<|im_end|>", GEN0, GEN1);
    ck_assert_str_eq(pt, want);
    free(pt);
    /* the marker inside the user's text stayed plain bytes, unmasked */
    int32_t end = tok_special_id(g_tok, "<|im_end|>");
    size_t ends = 0, masked_ends = 0;
    for (size_t i = 0; i < s->n; i++) {
        ends += s->tokens[i] == end;
        masked_ends += s->tokens[i] == end && s->mask[i];
    }
    ck_assert_uint_eq(ends, 5);        /* 2 system/user turns, 2 replies, 1 tool turn */
    ck_assert_uint_eq(masked_ends, 2); /* the policy's own */
    for (size_t i = 0; i < s->n; i++)
        ck_assert(isnan(s->behav_logp[i]));
    ck_assert_int_eq(s->turn, -1);
    ck_assert_int_eq(s->n_turns, 2);
    ck_assert_str_eq(s->group, "leap#cfg=00ff");
    ck_assert_str_eq(s->task, "leap");
    ck_assert(s->reward == 1.0);
    ck_assert_uint_eq(s->seed, 7);
    ck_assert_uint_eq(set.st.from_ids, 0);
    traj_set_dispose(&set);
    cJSON_Delete(r);
}
END_TEST

START_TEST(test_drop_text)
{
    cJSON *r = record_drop_text();
    traj_opts o;
    traj_opts_default(&o);
    o.tok = g_tok;
    traj_set set;
    traj_set_init(&set);
    char err[RL_ERR_MAX];
    ck_assert_msg(build(&set, r, &o, err) == 0, "%s", err);
    ck_assert_uint_eq(set.n, 2);
    expect e0 = {.n = 0}, e1 = {.n = 0};
    exp_segs(&e0, CTX0, N(CTX0), 0);
    exp_add(&e0, GEN0, TOK_SPECIAL_ALLOW, 1);
    exp_add(&e0, "<|im_end|>", TOK_SPECIAL_ALLOW, 1);
    check_sample(&set.v[0], &e0);
    /* turn 1: the earlier reply in its context is history, not trained on */
    exp_segs(&e1, CTX0, N(CTX0), 0);
    exp_add(&e1, GEN0_STRIPPED, TOK_SPECIAL_ALLOW, 0);
    exp_segs(&e1, APPEND1, N(APPEND1), 0);
    exp_add(&e1, GEN1, TOK_SPECIAL_ALLOW, 1);
    exp_add(&e1, "<|im_end|>", TOK_SPECIAL_ALLOW, 1);
    check_sample(&set.v[1], &e1);
    ck_assert_int_eq(set.v[0].turn, 0);
    ck_assert_int_eq(set.v[1].turn, 1);
    char *pt = policy_text(&set.v[1]);
    char want[256];
    snprintf(want, sizeof want, "%s<|im_end|>", GEN1);
    ck_assert_str_eq(pt, want);
    free(pt);
    traj_set_dispose(&set);
    cJSON_Delete(r);
}
END_TEST

/* mask_failed: a turn whose tool call failed stays in the sequence as
 * context; only the turns after it (the repair) are trained on. */
static void fail_turn0(cJSON *r)
{
    cJSON *t0 = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "turns"), 0), *calls = cJSON_AddArrayToObject(t0, "tool_calls");
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "name", "read_file");
    cJSON_AddFalseToObject(c, "ok");
    cJSON_AddItemToArray(calls, c);
}

START_TEST(test_mask_failed)
{
    traj_opts o;
    traj_opts_default(&o);
    o.tok = g_tok;
    char err[RL_ERR_MAX];
    for (int mask = 0; mask < 2; mask++) {
        cJSON *r = record_keep_text();
        fail_turn0(r);
        o.mask_failed = mask;
        traj_set set;
        traj_set_init(&set);
        ck_assert_msg(build(&set, r, &o, err) == 0, "%s", err);
        ck_assert_uint_eq(set.n, 1);
        expect e = {.n = 0};
        exp_segs(&e, CTX0, N(CTX0), 1);
        exp_add(&e, GEN0, TOK_SPECIAL_ALLOW, !mask);
        exp_segs(&e, APPEND1, N(APPEND1), !mask); /* turn 0's stop token is in the append */
        exp_add(&e, GEN1, TOK_SPECIAL_ALLOW, 1);
        exp_add(&e, "<|im_end|>", TOK_SPECIAL_ALLOW, 1);
        check_sample(&set.v[0], &e);
        ck_assert_uint_eq(set.st.masked_turns, (size_t)mask);
        char *pt = policy_text(&set.v[0]);
        char want[1024];
        if (mask)
            snprintf(want, sizeof want, "%s<|im_end|>", GEN1);
        else
            snprintf(want, sizeof want, "%s<|im_end|>%s<|im_end|>", GEN0, GEN1);
        ck_assert_str_eq(pt, want);
        free(pt);
        traj_set_dispose(&set);
        cJSON_Delete(r);
    }
    /* drop: the failed turn's own sample would train on nothing, so none */
    cJSON *r = record_drop_text();
    fail_turn0(r);
    o.mask_failed = 1;
    traj_set set;
    traj_set_init(&set);
    ck_assert_msg(build(&set, r, &o, err) == 0, "%s", err);
    ck_assert_uint_eq(set.n, 1);
    ck_assert_int_eq(set.v[0].turn, 1);
    traj_set_dispose(&set);
    cJSON_Delete(r);
    /* a turn whose calls succeeded is trained on as before */
    r = record_keep_text();
    fail_turn0(r);
    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "turns"), 0),
                                                                     "tool_calls"), 0), "ok", cJSON_CreateTrue());
    traj_set_init(&set);
    ck_assert_msg(build(&set, r, &o, err) == 0, "%s", err);
    ck_assert_uint_eq(set.st.masked_turns, 0);
    char *pt = policy_text(&set.v[0]);
    ck_assert_ptr_nonnull(strstr(pt, GEN0));
    free(pt);
    traj_set_dispose(&set);
    cJSON_Delete(r);
}
END_TEST

/* A truncated reply (length limit): the policy wrote no stop token. */
START_TEST(test_truncated_turn)
{
    cJSON *r = record_drop_text();
    cJSON *t1 = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "turns"), 1);
    cJSON_AddTrueToObject(t1, "truncated");
    traj_opts o;
    traj_opts_default(&o);
    o.tok = g_tok;
    traj_set set;
    traj_set_init(&set);
    char err[RL_ERR_MAX];
    ck_assert_msg(build(&set, r, &o, err) == 0, "%s", err);
    char *pt = policy_text(&set.v[1]);
    ck_assert_str_eq(pt, GEN1);
    free(pt);
    traj_set_dispose(&set);
    cJSON_Delete(r);
}
END_TEST

/* ---- keep with the policy's ids ---------------------------------------------- */

static cJSON *ids_json(const int32_t *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
    return a;
}

/* Turns the keep record into what a model policy records: context ids
 * (turn 1 as prefix + append_ids), sampled ids that are NOT the canonical
 * encoding of the text (a model may spell text any way it likes), and
 * their logprobs. */
static cJSON *record_keep_ids(expect *e, float *lps)
{
    cJSON *r = record_keep_text(), *turns = cJSON_GetObjectItem(r, "turns");
    cJSON *t0 = cJSON_GetArrayItem(turns, 0), *t1 = cJSON_GetArrayItem(turns, 1);
    int32_t end = tok_special_id(g_tok, "<|im_end|>");
    e->n = 0;
    exp_segs(e, CTX0, N(CTX0), 0);
    size_t c0 = e->n;
    cJSON_AddItemToObject(t0, "context_ids", ids_json(e->tok, c0));
    /* ids0: the bytes 'o', 'k' one by one, then the stop token */
    int32_t ids0[3] = {'o', 'k', end}, ids1[2] = {'!', end};
    float lp0[3] = {-0.5f, -1.25f, -0.125f}, lp1[2] = {-2.0f, -0.75f};
    cJSON_AddItemToObject(t0, "ids", ids_json(ids0, 3));
    cJSON_AddItemToObject(t0, "logprobs", cJSON_CreateFloatArray(lp0, 3));
    for (int i = 0; i < 3; i++) {
        lps[e->n] = lp0[i];
        e->tok[e->n] = ids0[i];
        e->mask[e->n++] = 1;
    }
    size_t a0 = e->n;
    /* the appended text after the policy's stop token */
    exp_segs(e, APPEND1 + 1, N(APPEND1) - 1, 0);
    cJSON *ci = cJSON_AddObjectToObject(t1, "context_ids");
    cJSON_AddNumberToObject(ci, "prefix_turn", 0);
    cJSON_AddItemToObject(ci, "append_ids", ids_json(e->tok + a0, e->n - a0));
    cJSON_AddItemToObject(t1, "ids", ids_json(ids1, 2));
    cJSON_AddItemToObject(t1, "logprobs", cJSON_CreateFloatArray(lp1, 2));
    for (int i = 0; i < 2; i++) {
        lps[e->n] = lp1[i];
        e->tok[e->n] = ids1[i];
        e->mask[e->n++] = 1;
    }
    return r;
}

START_TEST(test_keep_ids)
{
    expect e;
    float lps[4096];
    cJSON *r = record_keep_ids(&e, lps);
    traj_opts o;
    traj_opts_default(&o);
    o.tok = g_tok;
    traj_set set;
    traj_set_init(&set);
    char err[RL_ERR_MAX];
    ck_assert_msg(build(&set, r, &o, err) == 0, "%s", err);
    ck_assert_uint_eq(set.n, 1);
    check_sample(&set.v[0], &e);
    ck_assert_uint_eq(set.v[0].n_policy, 5);
    for (size_t i = 0; i < e.n; i++) {
        if (e.mask[i])
            ck_assert_float_eq(set.v[0].behav_logp[i], lps[i]);
        else
            ck_assert(isnan(set.v[0].behav_logp[i]));
    }
    ck_assert_uint_eq(set.st.from_ids, 1);
    /* a tokenizer is not needed when every id is recorded */
    traj_set s2;
    traj_set_init(&s2);
    o.tok = NULL;
    ck_assert_msg(build(&s2, r, &o, err) == 0, "%s", err);
    check_sample(&s2.v[0], &e);
    traj_set_dispose(&s2);
    /* ids out of the tokenizer's range are refused */
    o.tok = g_tok;
    cJSON *t1 = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "turns"), 1);
    cJSON_ReplaceItemInArray(cJSON_GetObjectItem(t1, "ids"), 0, cJSON_CreateNumber(tok_vocab_size(g_tok)));
    traj_set s3;
    traj_set_init(&s3);
    ck_assert_int_eq(build(&s3, r, &o, err), RL_EPARSE);
    ck_assert_ptr_nonnull(strstr(err, "ids[0]"));
    traj_set_dispose(&s3);
    traj_set_dispose(&set);
    cJSON_Delete(r);
}
END_TEST

/* Recorded context ids that are not this tokenizer's encoding. */
START_TEST(test_tokenizer_mismatch)
{
    cJSON *r = record_drop_text();
    cJSON *t0 = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "turns"), 0);
    expect e = {.n = 0};
    exp_segs(&e, CTX0, N(CTX0), 0);
    e.tok[3] = (e.tok[3] + 1) % 256;
    cJSON_AddItemToObject(t0, "context_ids", ids_json(e.tok, e.n));
    traj_opts o;
    traj_opts_default(&o);
    o.tok = g_tok;
    o.use_ids = 0; /* re-tokenize and compare */
    traj_set set;
    traj_set_init(&set);
    char err[RL_ERR_MAX];
    ck_assert_int_eq(build(&set, r, &o, err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "at token 3"));
    traj_set_dispose(&set);
    cJSON_Delete(r);
}
END_TEST

/* ---- truncation, filters, bad records ----------------------------------------- */

START_TEST(test_truncation)
{
    cJSON *r = record_keep_text();
    traj_opts o;
    traj_opts_default(&o);
    o.tok = g_tok;
    traj_set full, cut, skip;
    traj_set_init(&full);
    traj_set_init(&cut);
    traj_set_init(&skip);
    char err[RL_ERR_MAX];
    ck_assert_int_eq(build(&full, r, &o, err), 0);
    const traj_sample *f = &full.v[0];
    size_t first = 0;
    while (!f->mask[first])
        first++;
    /* cutting first-1 tokens keeps the token that predicts the first policy token */
    o.max_len = f->n - (first - 1);
    ck_assert_int_eq(build(&cut, r, &o, err), 0);
    ck_assert_uint_eq(cut.n, 1);
    ck_assert_uint_eq(cut.v[0].cut, first - 1);
    ck_assert_uint_eq(cut.v[0].n_policy, f->n_policy);
    ck_assert_int_eq(memcmp(cut.v[0].tokens, f->tokens + first - 1, cut.v[0].n * sizeof(int32_t)), 0);
    ck_assert_uint_eq(cut.st.cut, 1);
    /* one token more would lose it: skipped and counted */
    o.max_len--;
    ck_assert_int_eq(build(&skip, r, &o, err), 0);
    ck_assert_uint_eq(skip.n, 0);
    ck_assert_uint_eq(skip.st.skipped_long, 1);
    /* min_reward filters whole records */
    o.max_len = 0;
    o.min_reward = 1.5;
    ck_assert_int_eq(build(&skip, r, &o, err), 0);
    ck_assert_uint_eq(skip.n, 0);
    ck_assert_uint_eq(skip.st.skipped_reward, 1);
    traj_set_dispose(&full);
    traj_set_dispose(&cut);
    traj_set_dispose(&skip);
    cJSON_Delete(r);
}
END_TEST

START_TEST(test_bad_records)
{
    traj_opts o;
    traj_opts_default(&o);
    o.tok = g_tok;
    traj_set set;
    traj_set_init(&set);
    char err[RL_ERR_MAX];
    /* segments that do not cover the context */
    cJSON *r = record_drop_text();
    cJSON *segs = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "turns"), 0), "segments");
    cJSON_DeleteItemFromArray(segs, 2);
    ck_assert_int_eq(build(&set, r, &o, err), RL_EPARSE);
    ck_assert_ptr_nonnull(strstr(err, "segments[2]"));
    cJSON_Delete(r);
    /* a prefix reference to anything but the previous turn */
    r = record_keep_text();
    cJSON *c1 = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "turns"), 1), "context");
    cJSON_ReplaceItemInObject(c1, "prefix_turn", cJSON_CreateNumber(5));
    ck_assert_int_eq(build(&set, r, &o, err), RL_EPARSE);
    ck_assert_ptr_nonnull(strstr(err, "turn 1: context"));
    cJSON_Delete(r);
    /* no tokenizer for a record without ids */
    r = record_keep_text();
    o.tok = NULL;
    ck_assert_int_eq(build(&set, r, &o, err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "tokenizer"));
    cJSON_Delete(r);
    /* unknown history mode */
    r = record_keep_text();
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(r, "config"), "history", cJSON_CreateString("sometimes"));
    o.tok = g_tok;
    ck_assert_int_eq(build(&set, r, &o, err), RL_EPARSE);
    ck_assert_ptr_nonnull(strstr(err, "config.history"));
    cJSON_Delete(r);
    /* an error record without turns is skipped, not an error */
    r = record_base("keep");
    cJSON_DeleteItemFromObject(r, "config");
    ck_assert_int_eq(build(&set, r, &o, err), 0);
    ck_assert_uint_eq(set.st.skipped_empty, 1);
    ck_assert_uint_eq(set.n, 0);
    cJSON_Delete(r);
    traj_set_dispose(&set);
}
END_TEST

START_TEST(test_load_file)
{
    char dir[] = "/tmp/rl-traj-XXXXXX", path[128], err[RL_ERR_MAX];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/t.jsonl", dir);
    cJSON *a = record_keep_text(), *b = record_drop_text();
    char *sa = cJSON_PrintUnformatted(a), *sb = cJSON_PrintUnformatted(b);
    ck_assert_int_eq(fs_append_record(path, sa, strlen(sa), err), 0);
    ck_assert_int_eq(fs_append_record(path, "", 0, err), 0); /* a blank line */
    ck_assert_int_eq(fs_append_record(path, sb, strlen(sb), err), 0);
    traj_opts o;
    traj_opts_default(&o);
    o.tok = g_tok;
    traj_set set;
    traj_set_init(&set);
    ck_assert_msg(traj_load_file(&set, path, &o, err) == 0, "%s", err);
    ck_assert_uint_eq(set.n, 3);
    ck_assert_uint_eq(set.st.records, 2);
    ck_assert_uint_eq(set.v[0].record, 0);
    ck_assert_uint_eq(set.v[2].record, 1);
    traj_set_dispose(&set);
    /* a line that is not JSON: named by file and line */
    ck_assert_int_eq(fs_append_record(path, "{\"task\": oops", 13, err), 0);
    traj_set_init(&set);
    ck_assert_int_eq(traj_load_file(&set, path, &o, err), RL_EPARSE);
    char want[160];
    snprintf(want, sizeof want, "%s:4:", path);
    ck_assert_msg(strstr(err, want) != NULL, "%s", err);
    ck_assert_ptr_null(strchr(err, '\n'));
    traj_set_dispose(&set);
    snprintf(path, sizeof path, "%s/missing.jsonl", dir);
    ck_assert_int_eq(traj_load_file(&set, path, &o, err), RL_ENOENT);
    free(sa);
    free(sb);
    cJSON_Delete(a);
    cJSON_Delete(b);
    fs_remove_tree(dir, NULL);
}
END_TEST

/* ---- the mask gives masked-out tokens exactly zero gradient ------------------ */

/* The gradient of sum over policy targets of logp, computed two ways: (a)
 * every position has its real next-token target and the coefficient is
 * the mask; (b) the targets of masked-out positions are -1 (ignored). If
 * system, user and tool tokens leaked any gradient through the mask, (a)
 * would differ from (b) beyond rounding. Also (c): the coefficient of a
 * masked-out position does not matter at all when its target is -1, and
 * (a) sees nonzero logprobs at the masked-out positions, so the check is
 * not vacuous. */

/* Forward (logprobs into lp), zeroed gradients, backward with dl. */
static void mask_grads(model *m, const int *tok, const int *tgt, int T, const float *dl, float *lp)
{
    char err[RL_ERR_MAX];
    ck_assert_msg(model_forward(m, tok, tgt, 1, T, 1.0f, lp, NULL, err) == 0, "%s", err);
    ck_assert_msg(model_zero_grad(m, err) == 0, "%s", err);
    ck_assert_msg(model_backward(m, dl, err) == 0, "%s", err);
}

START_TEST(test_mask_zero_gradient)
{
    cJSON *r = record_keep_text();
    traj_opts o;
    traj_opts_default(&o);
    o.tok = g_tok;
    traj_set set;
    traj_set_init(&set);
    char err[RL_ERR_MAX];
    ck_assert_int_eq(build(&set, r, &o, err), 0);
    const traj_sample *s = &set.v[0];
    int T = (int)s->n;
    model_config c;
    model_config_default(&c);
    c.vocab = tok_vocab_size(g_tok);
    c.d_model = 16;
    c.n_layer = 2;
    c.n_head = 2;
    c.n_kv_head = 1;
    c.d_ff = 24;
    c.max_seq = 256;
    ck_assert_int_ge(c.max_seq, T);
    model_opts mo;
    model_opts_default(&mo);
    mo.n_threads = 1;
    model *m;
    ck_assert_int_eq(model_new(&m, &c, &mo, err), 0);
    model_random_init(m, 3);
    int *tok = malloc(T * sizeof(int)), *tgt_mask = malloc(T * sizeof(int)), *tgt_all = malloc(T * sizeof(int));
    float *dl = malloc(T * sizeof(float)), *lp = malloc(T * sizeof(float));
    size_t ntg = traj_sample_targets(s, tok, tgt_mask, (size_t)T);
    ck_assert_uint_eq(ntg, s->n_policy);
    size_t zero_mask = 0;
    for (int t = 0; t < T; t++) {
        tgt_all[t] = t + 1 < T ? s->tokens[t + 1] : -1;
        dl[t] = t + 1 < T && s->mask[t + 1] ? -1.0f : 0.0f;
        ck_assert_int_eq(tgt_mask[t] >= 0, dl[t] != 0.0f);
        zero_mask += t + 1 < T && !s->mask[t + 1];
    }
    ck_assert_uint_gt(zero_mask, 50);
    /* (a) all targets, coefficients from the mask */
    mask_grads(m, tok, tgt_all, T, dl, lp);
    for (int t = 0; t + 1 < T; t++)
        if (!s->mask[t + 1])
            ck_assert(lp[t] < 0.0f); /* computed, just not trained on */
    float *ga = malloc(m->n_params * sizeof(float));
    memcpy(ga, m->grads, m->n_params * sizeof(float));
    /* (b) masked-out targets ignored, and their coefficients set to junk */
    for (int t = 0; t < T; t++)
        if (tgt_mask[t] < 0)
            dl[t] = 123.0f;
    mask_grads(m, tok, tgt_mask, T, dl, lp);
    double norm = 0, diff = 0, gmax = 0;
    for (size_t i = 0; i < m->n_params; i++) {
        norm += (double)ga[i] * ga[i];
        gmax = fmax(gmax, fabs((double)ga[i]));
        diff = fmax(diff, fabs((double)ga[i] - m->grads[i]));
    }
    ck_assert(norm > 0);
    /* (a) runs the head GEMM on all T rows, (b) on the policy rows only:
     * the same sums, but a BLAS kernel may order them by the matrix shape
     * (seen on an AVX-512 EPYC: 4.8e-7 apart), so (a) = (b) up to rounding */
    ck_assert_msg(diff <= 1e-5 * gmax, "gradients differ by %g (max %g)", diff, gmax);
    /* (c) the same forward as (b), masked coefficients 0 instead of junk:
     * bit for bit the gradient of (b), so masked positions add exactly 0 */
    float *gb = malloc(m->n_params * sizeof(float));
    memcpy(gb, m->grads, m->n_params * sizeof(float));
    for (int t = 0; t < T; t++)
        if (tgt_mask[t] < 0)
            dl[t] = 0.0f;
    mask_grads(m, tok, tgt_mask, T, dl, lp);
    ck_assert(memcmp(gb, m->grads, m->n_params * sizeof(float)) == 0);
    free(ga);
    free(gb);
    free(tok), free(tgt_mask), free(tgt_all), free(dl), free(lp);
    model_free(m);
    traj_set_dispose(&set);
    cJSON_Delete(r);
}
END_TEST

/* ---- schema 1 and schema 2 records ---------------------------------------------- */

/* tests/data/traj holds the same episodes recorded in schema 1 (every
 * turn's segments whole, context ids whole for a policy without ids) and
 * in schema 2 (turns store what they add): an oracle episode with context
 * ids from models/tokenizer.json, and three turns of the shipped model
 * (sampled ids and logprobs). */
#define DATA "tests/data/traj/"

static cJSON *load_record(const char *path)
{
    char *text, err[RL_ERR_MAX];
    ck_assert_msg(fs_read_file(&text, NULL, path, 1u << 26, err) == 0, "%s", err);
    cJSON *r = cJSON_Parse(text);
    free(text);
    ck_assert_ptr_nonnull(r);
    return r;
}

/* Both records rebuild to the same contexts, segments, context ids and
 * replies, turn by turn. Returns the number of turns. */
static size_t same_walk(const cJSON *a, const cJSON *b)
{
    char err[RL_ERR_MAX];
    rec_walk wa, wb;
    ck_assert_msg(rec_walk_init(&wa, a, "v1", 0, err) == 0, "%s", err);
    ck_assert_msg(rec_walk_init(&wb, b, "v2", 0, err) == 0, "%s", err);
    size_t n = 0;
    for (;;) {
        int ra = rec_walk_next(&wa, err);
        ck_assert_msg(ra >= 0, "%s", err);
        int rb = rec_walk_next(&wb, err);
        ck_assert_msg(rb >= 0, "%s", err);
        ck_assert_int_eq(ra, rb);
        if (!ra)
            break;
        ck_assert_uint_eq(wa.context_len, wb.context_len);
        ck_assert_int_eq(memcmp(wa.context, wb.context, wa.context_len), 0);
        ck_assert_uint_eq(wa.nsegs, wb.nsegs);
        for (size_t i = 0; i < wa.nsegs; i++) {
            ck_assert_uint_eq(wa.segs[i].off, wb.segs[i].off);
            ck_assert_uint_eq(wa.segs[i].len, wb.segs[i].len);
            ck_assert_int_eq(wa.segs[i].origin, wb.segs[i].origin);
        }
        ck_assert_int_eq(wa.has_ctx_ids, wb.has_ctx_ids);
        ck_assert_uint_eq(wa.n_ctx_ids, wb.n_ctx_ids);
        if (wa.has_ctx_ids && wa.n_ctx_ids)
            ck_assert_int_eq(memcmp(wa.ctx_ids, wb.ctx_ids, wa.n_ctx_ids * sizeof *wa.ctx_ids), 0);
        ck_assert_str_eq(wa.generated, wb.generated);
        ck_assert_int_eq(wa.has_ids, wb.has_ids);
        ck_assert_uint_eq(wa.n_ids, wb.n_ids);
        if (wa.has_ids && wa.n_ids)
            ck_assert_int_eq(memcmp(wa.ids, wb.ids, wa.n_ids * sizeof *wa.ids), 0);
        n++;
    }
    rec_walk_dispose(&wa);
    rec_walk_dispose(&wb);
    return n;
}

/* The samples of two files are the same, token for token. */
static void same_samples(const char *fa, const char *fb, const tok_t *tok, int use_ids)
{
    char err[RL_ERR_MAX];
    traj_opts o;
    traj_opts_default(&o);
    o.tok = tok;
    o.use_ids = use_ids;
    traj_set a, b;
    traj_set_init(&a);
    traj_set_init(&b);
    ck_assert_msg(traj_load_file(&a, fa, &o, err) == 0, "%s", err);
    ck_assert_msg(traj_load_file(&b, fb, &o, err) == 0, "%s", err);
    ck_assert_uint_ge(a.n, 1);
    ck_assert_uint_eq(a.n, b.n);
    ck_assert_uint_eq(a.st.from_ids, b.st.from_ids);
    for (size_t i = 0; i < a.n; i++) {
        const traj_sample *x = &a.v[i], *y = &b.v[i];
        ck_assert_uint_eq(x->n, y->n);
        ck_assert_uint_eq(x->n_policy, y->n_policy);
        ck_assert_uint_gt(x->n_policy, 0);
        ck_assert_int_eq(memcmp(x->tokens, y->tokens, x->n * sizeof *x->tokens), 0);
        ck_assert_int_eq(memcmp(x->mask, y->mask, x->n), 0);
        for (size_t t = 0; t < x->n; t++)
            ck_assert(isnan(x->behav_logp[t]) ? isnan(y->behav_logp[t]) : x->behav_logp[t] == y->behav_logp[t]);
    }
    traj_set_dispose(&a);
    traj_set_dispose(&b);
}

START_TEST(test_schema_1_and_2_read_alike)
{
    char err[RL_ERR_MAX];
    tok_t *tok;
    ck_assert_msg(tok_load(&tok, "models/tokenizer.json", err) == 0, "%s", err);
    static const char *pairs[2][2] = {{DATA "v1-oracle-keep.jsonl", DATA "v2-oracle-keep.jsonl"},
                                      {DATA "v1-model-keep.jsonl", DATA "v2-model-keep.jsonl"}};
    for (int p = 0; p < 2; p++) {
        cJSON *a = load_record(pairs[p][0]), *b = load_record(pairs[p][1]);
        ck_assert_int_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(a, "schema")), 1);
        ck_assert_int_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(b, "schema")), 2);
        /* the forms differ: schema 1 repeats every segment, schema 2 refers
         * to the previous turn's */
        const cJSON *t1a = cJSON_GetArrayItem(cJSON_GetObjectItem(a, "turns"), 1);
        const cJSON *t1b = cJSON_GetArrayItem(cJSON_GetObjectItem(b, "turns"), 1);
        ck_assert(cJSON_IsArray(cJSON_GetObjectItem(t1a, "segments")));
        ck_assert(cJSON_IsObject(cJSON_GetObjectItem(t1b, "segments")));
        size_t turns = same_walk(a, b);
        ck_assert_uint_eq(turns, (size_t)cJSON_GetArraySize(cJSON_GetObjectItem(a, "turns")));
        ck_assert_uint_ge(turns, 3);
        /* the trainers' samples: from the recorded ids, and re-tokenized
         * (checked against the recorded context ids where they are an
         * encoding of the text) */
        same_samples(pairs[p][0], pairs[p][1], tok, 1);
        same_samples(pairs[p][0], pairs[p][1], tok, 0);
        if (p == 1) {
            /* GRPO's sequences of the model's records */
            grpo_seqs sa, sb;
            grpo_seqs_init(&sa);
            grpo_seqs_init(&sb);
            ck_assert_msg(grpo_seqs_add_record(&sa, a, 0, tok_vocab_size(tok), 0, err) == 0, "%s", err);
            ck_assert_msg(grpo_seqs_add_record(&sb, b, 0, tok_vocab_size(tok), 0, err) == 0, "%s", err);
            ck_assert_uint_eq(sa.n, 1);
            ck_assert_uint_eq(sa.n, sb.n);
            ck_assert_int_eq(sa.v[0].n, sb.v[0].n);
            ck_assert_int_gt(sa.v[0].n_policy, 0);
            ck_assert_int_eq(memcmp(sa.v[0].tokens, sb.v[0].tokens, (size_t)sa.v[0].n * sizeof(int)), 0);
            ck_assert_int_eq(memcmp(sa.v[0].targets, sb.v[0].targets, (size_t)sa.v[0].n * sizeof(int)), 0);
            ck_assert_int_eq(memcmp(sa.v[0].behav, sb.v[0].behav, (size_t)sa.v[0].n * sizeof(float)), 0);
            grpo_seqs_dispose(&sa);
            grpo_seqs_dispose(&sb);
        }
        cJSON_Delete(a);
        cJSON_Delete(b);
    }
    tok_free(tok);
}
END_TEST

/* Malformed segments and references are refused with the turn and the
 * field named, before anything indexes the context with them. */
START_TEST(test_malformed_segments)
{
    static const struct {
        int turn;
        const char *key, *json, *want;
    } cases[] = {
        /* spans past the context, wrapping size_t, negative, fractional */
        {0, "segments", "[[0, 18446744073709551615, \"system\"]]", "turn 0: segments[0]"},
        {0, "segments", "[[9223372036854775808, 9223372036854775808, \"tool\"]]", "turn 0: segments[0]"},
        {0, "segments", "[[-1, 5, \"tool\"]]", "turn 0: segments[0]"},
        {0, "segments", "[[0, 1e300, \"tool\"]]", "turn 0: segments[0]"},
        {0, "segments", "[[0, 2.5, \"tool\"]]", "turn 0: segments[0]"},
        {0, "segments", "[[0, 10, \"nobody\"]]", "turn 0: segments[0]"},
        {0, "segments", "[[0, 10]]", "turn 0: segments[0]"},
        {0, "segments", "[[0, 10, \"tool\"]]", "turn 0: segments cover 10 of"},
        {0, "segments", "{\"prefix_turn\": -1, \"keep\": 0, \"append\": []}", "turn 0: segments"},
        {0, "segments", "7", "turn 0: segments"},
        /* a kept count past the previous turn's list, a reference to
         * another turn, an appended span that does not continue the kept */
        {2, "segments", "{\"prefix_turn\": 1, \"keep\": 1000000, \"append\": []}", "turn 2: segments"},
        {2, "segments", "{\"prefix_turn\": 1, \"keep\": -3, \"append\": []}", "turn 2: segments"},
        {2, "segments", "{\"prefix_turn\": 0, \"keep\": 1, \"append\": []}", "turn 2: segments"},
        {2, "segments", "{\"prefix_turn\": 1, \"keep\": 1, \"append\": [[0, 5, \"tool\"]]}",
         "turn 2: segments.append[0]"},
        {2, "context_ids", "{\"prefix_turn\": 1, \"keep\": 99999999, \"append_ids\": []}", "turn 2: context_ids"},
        {2, "context_ids", "{\"prefix_turn\": 1, \"keep\": 3, \"append_ids\": [-1]}", "context_ids.append_ids[0]"},
        {2, "context", "{\"prefix_turn\": 7, \"append\": \"x\"}", "turn 2: context"},
    };
    char err[RL_ERR_MAX];
    tok_t *tok;
    ck_assert_msg(tok_load(&tok, "models/tokenizer.json", err) == 0, "%s", err);
    for (size_t i = 0; i < N(cases); i++) {
        cJSON *r = load_record(DATA "v2-oracle-keep.jsonl");
        cJSON *t = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "turns"), cases[i].turn);
        cJSON *v = cJSON_Parse(cases[i].json);
        ck_assert_ptr_nonnull(v);
        cJSON_ReplaceItemInObject(t, cases[i].key, v);
        /* the walker */
        rec_walk w;
        ck_assert_int_eq(rec_walk_init(&w, r, "f.jsonl: record 4", 0, err), 0);
        int rc;
        while ((rc = rec_walk_next(&w, err)) == 1)
            ;
        rec_walk_dispose(&w);
        ck_assert_msg(rc == RL_EPARSE, "case %zu: %d", i, rc);
        ck_assert_msg(strstr(err, cases[i].want) && strstr(err, "f.jsonl: record 4") && !strchr(err, '\n'),
                      "case %zu: %s", i, err);
        /* the trainer, with and without a tokenizer path */
        traj_opts o;
        traj_opts_default(&o);
        o.tok = tok;
        for (int ids = 0; ids < 2; ids++) {
            o.use_ids = ids;
            traj_set set;
            traj_set_init(&set);
            ck_assert_int_eq(traj_add_record(&set, r, 0, &o, "f.jsonl:5", err), RL_EPARSE);
            ck_assert_msg(strstr(err, cases[i].want), "case %zu: %s", i, err);
            traj_set_dispose(&set);
        }
        cJSON_Delete(r);
    }
    /* an unknown schema */
    cJSON *r = load_record(DATA "v2-oracle-keep.jsonl");
    cJSON_ReplaceItemInObject(r, "schema", cJSON_CreateNumber(3));
    rec_walk w;
    ck_assert_int_eq(rec_walk_init(&w, r, "x", 0, err), RL_EPARSE);
    ck_assert_ptr_nonnull(strstr(err, "schema"));
    cJSON_Delete(r);
    tok_free(tok);
}
END_TEST

Suite *traj_suite(void)
{
    Suite *s = suite_create("traj");
    TCase *tc = tcase_create("samples");
    tcase_add_checked_fixture(tc, setup_tok, teardown_tok);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_keep_text);
    tcase_add_test(tc, test_drop_text);
    tcase_add_test(tc, test_mask_failed);
    tcase_add_test(tc, test_truncated_turn);
    tcase_add_test(tc, test_keep_ids);
    tcase_add_test(tc, test_tokenizer_mismatch);
    tcase_add_test(tc, test_truncation);
    tcase_add_test(tc, test_bad_records);
    tcase_add_test(tc, test_load_file);
    tcase_add_test(tc, test_mask_zero_gradient);
    tcase_add_test(tc, test_schema_1_and_2_read_alike);
    tcase_add_test(tc, test_malformed_segments);
    suite_add_tcase(s, tc);
    return s;
}
