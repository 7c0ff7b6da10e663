/* test_grpo.c - the GRPO trainer: advantages, record -> sequences, config
 * validation, the model policy over borrowed weights, and three real GRPO steps on a tiny model
 * (d 32, 2 layers, a tokenizer trained here) on the leapyear task, whose
 * episodes run through the harness and are scored by its tests. Checks:
 * the loss is finite, masked tokens get exactly zero gradient, a step with
 * only zero-variance groups changes no weight when KL and weight decay are
 * 0, and a run stopped after 2 steps and resumed ends with the same
 * weights, bit for bit, as an uninterrupted 3-step run.
 *
 * The tiny random model never fixes a bug, so these runs replace the
 * reward by a hook (parity of the first reply's ids) to get groups with
 * variance; the real 0/1 reward is still computed and recorded.
 *
 * The grpo_dp suite (data-parallel training, grpo/grpo_dp.h) runs two ranks
 * under mpirun against one process on the same tiny config; its "worker"
 * case is what each rank runs (it does nothing outside mpirun). Without
 * MPI in the build it says so and passes. */
#include "grpo/grpo.h"
#include "grpo/grpo_int.h"
#include "grpo/grpo_dp.h"
#include "policy/model_policy.h"
#include "grpo/loss.h"
#include "grpo/sample.h"
#include "common/stats.h"
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- advantages ------------------------------------------------------------------ */

START_TEST(test_advantage_examples)
{
    grpo_config c;
    grpo_config_default(&c);
    double adv[3];
    double r0[3] = {0, 0, 0}, r1[3] = {0, 1, 1};
    stats_group g = stats_advantages(adv, r0, 3, c.std_mode, c.adv_eps, c.adv_clip);
    ck_assert(g.zero_variance);
    for (int i = 0; i < 3; i++)
        ck_assert(adv[i] == 0.0);
    g = stats_advantages(adv, r1, 3, c.std_mode, c.adv_eps, c.adv_clip);
    ck_assert(!g.zero_variance);
    ck_assert_msg(fabs(adv[0] + 1.414) < 1e-3 && fabs(adv[1] - 0.707) < 1e-3 && fabs(adv[2] - 0.707) < 1e-3,
                  "advantages %g %g %g", adv[0], adv[1], adv[2]);
    /* the default clip is [-2, 2]: one success in eight gives 2.646 unclipped */
    double r2[8] = {1, 0, 0, 0, 0, 0, 0, 0}, a2[8];
    stats_advantages(a2, r2, 8, c.std_mode, c.adv_eps, c.adv_clip);
    ck_assert(a2[0] == 2.0);
}
END_TEST

/* ---- record -> sequences --------------------------------------------------------- */

static const char *KEEP_REC =
    "{\"turns\": ["
    "{\"context_ids\": [1, 2, 3], \"ids\": [10, 11, 5], \"logprobs\": [-0.1, -0.2, -0.3], \"policy_version\": 3},"
    "{\"context_ids\": {\"prefix_turn\": 0, \"append_ids\": [7, 8]}, \"ids\": [12, 5], \"logprobs\": [-0.4, -0.5],"
    " \"policy_version\": 4}]}";

START_TEST(test_sample_keep_one_sequence)
{
    char err[RL_ERR_MAX];
    grpo_seqs S;
    grpo_seqs_init(&S);
    ck_assert_msg(grpo_seqs_add_json(&S, KEEP_REC, 7, 16, 0, err) == 0, "%s", err);
    ck_assert_uint_eq(S.n, 1);
    const grpo_seq *q = &S.v[0];
    int want_tok[10] = {1, 2, 3, 10, 11, 5, 7, 8, 12, 5};
    int want_tgt[10] = {-1, -1, 10, 11, 5, -1, -1, 12, 5, -1};
    float want_lp[10] = {0, 0, -0.1f, -0.2f, -0.3f, 0, 0, -0.4f, -0.5f, 0};
    long want_ver[10] = {0, 0, 3, 3, 3, 0, 0, 4, 4, 0};
    ck_assert_int_eq(q->n, 10);
    ck_assert_int_eq(q->n_policy, 5);
    ck_assert_int_eq(q->traj, 7);
    for (int t = 0; t < 10; t++) {
        ck_assert_int_eq(q->tokens[t], want_tok[t]);
        ck_assert_int_eq(q->targets[t], want_tgt[t]);
        ck_assert(fabsf(q->behav[t] - want_lp[t]) < 1e-6f);
        ck_assert_int_eq(q->version[t], want_ver[t]);
    }
    ck_assert_uint_eq(S.policy_tokens, 5);
    /* too long for max_len: skipped and counted */
    ck_assert_int_eq(grpo_seqs_add_json(&S, KEEP_REC, 8, 16, 9, err), 0);
    ck_assert_uint_eq(S.n, 1);
    ck_assert_uint_eq(S.skipped_long, 1);
    grpo_seqs_dispose(&S);
}
END_TEST

START_TEST(test_sample_drop_per_turn)
{
    char err[RL_ERR_MAX];
    /* history dropped: turn 1's context does not extend turn 0's sequence */
    const char *rec = "{\"turns\": ["
                      "{\"context_ids\": [1, 2, 3], \"ids\": [10, 5], \"logprobs\": [-1, -2]},"
                      "{\"context_ids\": [1, 2, 3, 9, 9], \"ids\": [11, 5], \"logprobs\": [-3, -4]}]}";
    grpo_seqs S;
    grpo_seqs_init(&S);
    ck_assert_msg(grpo_seqs_add_json(&S, rec, 0, 16, 0, err) == 0, "%s", err);
    ck_assert_uint_eq(S.n, 2);
    ck_assert_int_eq(S.v[0].n, 5);
    ck_assert_int_eq(S.v[1].n, 7);
    ck_assert_int_eq(S.v[1].turn, 1);
    /* in turn 1's sample only its own reply is trained: 9 9 are context */
    int want[7] = {-1, -1, -1, -1, 11, 5, -1};
    for (int t = 0; t < 7; t++)
        ck_assert_int_eq(S.v[1].targets[t], want[t]);
    ck_assert(S.v[1].behav[4] == -3.0f && S.v[1].version[4] == 0);
    grpo_seqs_dispose(&S);
    /* a context that happens to extend the sequence exactly joins it */
    const char *ext = "{\"turns\": ["
                      "{\"context_ids\": [1, 2, 3], \"ids\": [10, 5], \"logprobs\": [-1, -2]},"
                      "{\"context_ids\": [1, 2, 3, 10, 5, 6], \"ids\": [11, 5], \"logprobs\": [-3, -4]}]}";
    grpo_seqs_init(&S);
    ck_assert_int_eq(grpo_seqs_add_json(&S, ext, 0, 16, 0, err), 0);
    ck_assert_uint_eq(S.n, 1);
    ck_assert_int_eq(S.v[0].n, 8);
    ck_assert_int_eq(S.v[0].n_policy, 4);
    grpo_seqs_dispose(&S);
}
END_TEST

START_TEST(test_sample_bad_records)
{
    char err[RL_ERR_MAX];
    struct {
        const char *rec;
        int rc;
        const char *msg;
    } cases[] = {
        {"{\"turns\": 3}", RL_EPARSE, "turns"},
        {"[1, 2]", RL_EPARSE, "turns"},
        {"not json", RL_EPARSE, "JSON"},
        {"{\"turns\": [{\"context_ids\": [1], \"ids\": [2, 3], \"logprobs\": [-1]}]}", RL_EPARSE, "logprobs"},
        {"{\"turns\": [{\"context_ids\": [1], \"ids\": [2], \"logprobs\": [0.5]}]}", RL_EPARSE, "logprobs"},
        {"{\"turns\": [{\"context_ids\": [1], \"ids\": [99], \"logprobs\": [-1]}]}", RL_EINVAL, "0..15"},
        {"{\"turns\": [{\"context_ids\": [1, -2], \"ids\": [3], \"logprobs\": [-1]}]}", RL_EINVAL, "context_ids"},
        {"{\"turns\": [{\"context_ids\": [1, 2.5], \"ids\": [3], \"logprobs\": [-1]}]}", RL_EINVAL, "context_ids"},
        {"{\"turns\": [{\"context_ids\": {\"prefix_turn\": 0, \"append_ids\": []}, \"ids\": [3], "
         "\"logprobs\": [-1]}]}",
         RL_EPARSE, "prefix_turn"},
        {"{\"turns\": [{\"context_ids\": [1], \"ids\": [3], \"logprobs\": [-1]},"
         "{\"context_ids\": {\"prefix_turn\": 1, \"append_ids\": [4]}, \"ids\": [3], \"logprobs\": [-1]}]}",
         RL_EPARSE, "prefix_turn"},
        {"{\"turns\": [{\"context\": {\"text\": \"x\"}, \"generated\": \"y\"}]}", RL_EINVAL, "context_ids"},
        {"{\"turns\": [{\"context_ids\": [1, 2]}]}", RL_EINVAL, "no turn has sampled ids"},
        {"{\"turns\": [{\"context_ids\": [1], \"ids\": [3], \"logprobs\": [-1], \"policy_version\": -1}]}",
         RL_EPARSE, "policy_version"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        grpo_seqs S;
        grpo_seqs_init(&S);
        err[0] = '\0';
        int rc = grpo_seqs_add_json(&S, cases[i].rec, 0, 16, 0, err);
        ck_assert_msg(rc == cases[i].rc && strstr(err, cases[i].msg), "case %zu: rc %d, err '%s'", i, rc, err);
        grpo_seqs_dispose(&S);
    }
}
END_TEST


/* ---- the train-task draw ------------------------------------------------------------ */

/* Ten train tasks, seven of one bug kind: unbalanced, each epoch of ten
 * draws is a permutation; balanced by kind, each of the three kinds gets
 * every third draw and walks its own tasks in epochs; both are functions
 * of (seed, position) only. */
START_TEST(test_balanced_draw)
{
    char err[RL_ERR_MAX];
    const char *kinds[10] = {"flip_cmp", "flip_cmp", "off_by_one", "flip_cmp", "flip_cmp",
                             "wrong_return", "flip_cmp", "off_by_one", "flip_cmp", "flip_cmp"};
    task tk[10];
    task *v[10];
    memset(tk, 0, sizeof tk);
    for (int i = 0; i < 10; i++) {
        tk[i].gen_mutation = (char *)kinds[i];
        tk[i].repo = (char *)(i < 5 ? "ra" : "rb");
        v[i] = &tk[i];
    }
    task_set train = {v, 10};
    grpo_strata st;
    size_t *scratch;

    ck_assert_int_eq(grpo_strata_build(&st, &scratch, &train, GRPO_BALANCE_NONE, err), 0);
    ck_assert_uint_eq(st.n, 1);
    for (uint64_t epoch = 0; epoch < 3; epoch++) {
        int seen[10] = {0};
        for (uint64_t p = 0; p < 10; p++)
            seen[grpo_draw(&st, 7, epoch * 10 + p, scratch)]++;
        for (int i = 0; i < 10; i++)
            ck_assert_int_eq(seen[i], 1);
    }
    grpo_strata_dispose(&st);
    free(scratch);

    ck_assert_int_eq(grpo_strata_build(&st, &scratch, &train, GRPO_BALANCE_MUTATION, err), 0);
    ck_assert_uint_eq(st.n, 3);
    int per_kind[3] = {0}, per_task[10] = {0};
    size_t first[60];
    for (uint64_t p = 0; p < 42; p++) { /* 14 rounds: flip_cmp's 7 tasks twice */
        size_t i = grpo_draw(&st, 7, p, scratch);
        ck_assert_uint_lt(i, 10);
        first[p] = i;
        per_task[i]++;
        per_kind[!strcmp(kinds[i], "flip_cmp") ? 0 : !strcmp(kinds[i], "off_by_one") ? 1 : 2]++;
        if (p % 3 == 2) { /* a round visits each kind once */
            ck_assert_int_eq(per_kind[0], (int)(p / 3 + 1));
            ck_assert_int_eq(per_kind[1], (int)(p / 3 + 1));
            ck_assert_int_eq(per_kind[2], (int)(p / 3 + 1));
        }
    }
    for (int i = 0; i < 10; i++) /* epochs within a kind: 14 draws over 7, 2 or 1 tasks */
        ck_assert_int_eq(per_task[i], !strcmp(kinds[i], "flip_cmp") ? 2 : !strcmp(kinds[i], "off_by_one") ? 7 : 14);
    for (uint64_t p = 0; p < 42; p++) /* stateless: the same position draws the same task */
        ck_assert_uint_eq(grpo_draw(&st, 7, p, scratch), first[p]);
    int differs = 0;
    for (uint64_t p = 0; p < 42; p++)
        differs += grpo_draw(&st, 8, p, scratch) != first[p];
    ck_assert_int_gt(differs, 0);
    grpo_strata_dispose(&st);
    free(scratch);

    ck_assert_int_eq(grpo_strata_build(&st, &scratch, &train, GRPO_BALANCE_REPO, err), 0);
    ck_assert_uint_eq(st.n, 2);
    for (uint64_t p = 0; p < 20; p += 2)
        ck_assert_int_ne(grpo_draw(&st, 7, p, scratch) < 5, grpo_draw(&st, 7, p + 1, scratch) < 5);
    grpo_strata_dispose(&st);
    free(scratch);
}
END_TEST

/* SFT vs RL per task on the same seeds: which tasks went up or down, and
 * the passes by bug kind (tasks without a generator kind count only in
 * the up/down split). */
START_TEST(test_compare_by_task)
{
    const char *kinds[6] = {"flip_cmp", "wrong_return", "flip_cmp", NULL, "off_by_one", "flip_cmp"};
    size_t sft[6] = {1, 2, 0, 0, 3, 0}, rl[6] = {4, 0, 0, 2, 3, 1};
    task tk[6];
    task *v[6];
    memset(tk, 0, sizeof tk);
    for (int i = 0; i < 6; i++) {
        tk[i].gen_mutation = (char *)kinds[i];
        v[i] = &tk[i];
    }
    task_set sel = {v, 6};
    grpo_task_compare r;
    ck_assert_int_eq(grpo_compare_by_task(&r, &sel, sft, rl, 4), 0);
    ck_assert_uint_eq(r.up, 3);   /* tasks 0, 3, 5 */
    ck_assert_uint_eq(r.down, 1); /* task 1 */
    /* changes 3, -2, 0, 2, 0, 1: +4 passes over 24 episodes; of the 16 sign
     * patterns of 3, 2, 2, 1, eight reach |sum| >= 4 */
    ck_assert_double_eq_tol(r.diff, 4.0 / 24.0, 1e-12);
    ck_assert_double_eq_tol(r.perm_p, 0.5, 1e-12);
    ck_assert(r.diff_lo < r.diff && r.diff < r.diff_hi);
    ck_assert(r.diff_lo >= -2.0 / 4 && r.diff_hi <= 3.0 / 4);
    ck_assert_uint_eq(r.n_kinds, 3);
    ck_assert_str_eq(r.kind[0].name, "flip_cmp");
    ck_assert_uint_eq(r.kind[0].tasks, 3);
    ck_assert_uint_eq(r.kind[0].sft, 1);
    ck_assert_uint_eq(r.kind[0].rl, 5);
    ck_assert_str_eq(r.kind[1].name, "wrong_return");
    ck_assert_uint_eq(r.kind[1].sft, 2);
    ck_assert_uint_eq(r.kind[1].rl, 0);
    ck_assert_str_eq(r.kind[2].name, "off_by_one");
    ck_assert_uint_eq(r.kind[2].sft + r.kind[2].rl, 6);
}
END_TEST

/* ---- warnings --------------------------------------------------------------------- */

/* Flagged shares of the history warn_on gives (NULL: none recorded). */
static const double *g_flag;

/* Runs the warning rules on a history of n steps; returns how many fired
 * and whether one contains `what`. */
static int warn_on(const double *reward, const double *pass, const double *tool, const double *tokens,
                   const double *kl, const double *fmt, size_t n, const char *what, int *found)
{
    grpo_config c;
    grpo_config_default(&c);
    c.warn_window = 3;
    grpo_history h;
    memset(&h, 0, sizeof h);
    h.reward = (double *)reward;
    h.pass = (double *)pass;
    h.tool = (double *)tool;
    h.tokens = (double *)tokens;
    h.kl = (double *)kl;
    h.fmt = (double *)fmt;
    h.flag = (double *)g_flag;
    h.n = n;
    cJSON *arr = cJSON_CreateArray();
    buf_t line;
    buf_init(&line, 1 << 16);
    grpo_warnings(&h, &c, arr, &line);
    int k = cJSON_GetArraySize(arr);
    *found = what && strstr(buf_str(&line), what) != NULL;
    buf_dispose(&line);
    cJSON_Delete(arr);
    return k;
}

/* A record's tool calls, counted: all calls, and the code edits
 * (edit_file, write_file) apart, applied or not, failed ones by kind. */
START_TEST(test_traj_edit_counts)
{
    const char *rec = "{\"reward\": 1, \"tokens\": {\"policy\": 40}, \"turns\": ["
                      "{\"tool_calls\": [{\"name\": \"run_tests\", \"ok\": true},"
                      " {\"name\": \"edit_file\", \"ok\": false, \"error_kind\": \"not_unique\"}]},"
                      "{\"tool_calls\": [{\"name\": \"edit_file\", \"ok\": true, \"arguments\":"
                      " {\"path\": \"a.c\", \"old_string\": \"\\n  x = 1;\\t \", \"new_string\": \"x  =\\n0;\"}},"
                      " {\"name\": \"edit_file\", \"ok\": false, \"error_kind\": \"no_match\","
                      " \"arguments\": {\"old_string\": \"y\", \"new_string\": \"z\"}},"
                      " {\"name\": \"read_file\", \"ok\": false, \"error_kind\": \"no_match\"},"
                      " {\"name\": \"write_file\", \"ok\": false}, {\"name\": \"read_file\", \"ok\": true}]},"
                      "{\"format_error\": \"no tool call\", \"tool_calls\": []}]}";
    cJSON *j = cJSON_Parse(rec);
    ck_assert_ptr_nonnull(j);
    grpo_traj tr;
    memset(&tr, 0, sizeof tr);
    grpo_traj_parse(&tr, j);
    cJSON_Delete(j);
    ck_assert_int_eq(tr.turns, 3);
    ck_assert_int_eq(tr.calls, 7);
    ck_assert_int_eq(tr.calls_ok, 3);
    ck_assert_int_eq(tr.edits, 4);
    ck_assert_int_eq(tr.edits_ok, 1);
    /* failed edits by kind; a read_file failure is not an edit */
    ck_assert_int_eq(tr.edit_no_match, 1);
    ck_assert_int_eq(tr.edit_not_unique, 1);
    ck_assert_int_eq(tr.edit_no_change, 0);
    /* the not_unique failure was followed by an applied edit; the later two were not */
    ck_assert_int_eq(tr.edit_repaired, 1);
    ck_assert_int_eq(tr.format_errors, 1);
    ck_assert(tr.passed);
    /* the fix is the last applied edit_file, blanks collapsed; a failed one is not */
    ck_assert_str_eq(tr.fix, "x = 1; -> x = 0;");
    ck_assert(tr.fix_hash != 0);
}
END_TEST

static grpo_traj traj_of_edit(const char *old_s, const char *new_s)
{
    cJSON *rec = cJSON_CreateObject(), *turn = cJSON_CreateObject(), *call = cJSON_CreateObject();
    cJSON_AddItemToArray(cJSON_AddArrayToObject(rec, "turns"), turn);
    cJSON_AddItemToArray(cJSON_AddArrayToObject(turn, "tool_calls"), call);
    cJSON_AddStringToObject(call, "name", "edit_file");
    cJSON_AddTrueToObject(call, "ok");
    cJSON *args = cJSON_AddObjectToObject(call, "arguments");
    cJSON_AddStringToObject(args, "old_string", old_s);
    cJSON_AddStringToObject(args, "new_string", new_s);
    grpo_traj tr;
    memset(&tr, 0, sizeof tr);
    grpo_traj_parse(&tr, rec);
    cJSON_Delete(rec);
    return tr;
}

/* Fixes are told apart by their whole text: blanks do not count, a
 * changed character does, and a fix longer than its cap is cut in the
 * text but not in the hash. */
START_TEST(test_traj_fix_identity)
{
    grpo_traj a = traj_of_edit("= 1;", "= 0;"), b = traj_of_edit("  =\t1;\n", "=   0;");
    grpo_traj c = traj_of_edit("= 1;", "= 2;");
    ck_assert_str_eq(a.fix, "= 1; -> = 0;");
    ck_assert(a.fix_hash == b.fix_hash && a.fix_hash != c.fix_hash);
    char l1[300], l2[300];
    memset(l1, 'a', sizeof l1 - 1);
    l1[sizeof l1 - 1] = '\0';
    memcpy(l2, l1, sizeof l2);
    l2[sizeof l2 - 2] = 'b';
    grpo_traj d = traj_of_edit(l1, "x"), e = traj_of_edit(l2, "x");
    ck_assert_uint_eq(strlen(d.fix), RL_GRPO_FIX_TEXT_MAX - 1);
    ck_assert_str_eq(d.fix, e.fix);
    ck_assert(d.fix_hash != e.fix_hash);
    /* write_file and failed edit_file calls leave no fix */
    grpo_traj f;
    memset(&f, 0, sizeof f);
    cJSON *rec = cJSON_Parse("{\"turns\": [{\"tool_calls\": [{\"name\": \"write_file\", \"ok\": true,"
                             " \"arguments\": {\"old_string\": \"a\", \"new_string\": \"b\"}}]}]}");
    grpo_traj_parse(&f, rec);
    cJSON_Delete(rec);
    ck_assert(f.fix_hash == 0 && f.fix[0] == '\0');
}
END_TEST

/* The training curves read metrics.jsonl: a step redone after a resume
 * keeps its last line, and tool success and malformed replies are drawn
 * with the reward (the reward does not see the format). */
START_TEST(test_curves_svg)
{
    char dir[] = "/tmp/rl-curves-XXXXXX", err[RL_ERR_MAX], path[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const char *lines = "{\"step\":1,\"reward_mean\":0.1,\"pass_rate\":0.1,\"tool_success\":0.8,"
                        "\"format_error_rate\":0.02,\"kl\":0,\"clip_frac\":0,\"entropy\":0.05}\n"
                        "{\"step\":2,\"reward_mean\":0.9,\"pass_rate\":0.9,\"tool_success\":0.1,"
                        "\"format_error_rate\":0.9,\"kl\":0.01,\"clip_frac\":0,\"entropy\":0.04}\n"
                        "{\"event\":\"resume\",\"step\":1}\n"
                        "{\"step\":2,\"reward_mean\":0.2,\"pass_rate\":0.2,\"tool_success\":0.7,"
                        "\"format_error_rate\":0.45,\"kl\":0.01,\"clip_frac\":0,\"entropy\":0.04}\n"
                        "{\"event\":\"eval\",\"step\":2,\"pass_rate\":0.05}\n";
    snprintf(path, sizeof path, "%s/metrics.jsonl", dir);
    ck_assert_int_eq(fs_write_atomic(path, lines, strlen(lines), err), 0);
    snprintf(path, sizeof path, "%s/run-curves.svg", dir);
    ck_assert_msg(grpo_write_curves(dir, path, err) == 0, "%s", err);
    char *svg;
    size_t len;
    ck_assert_int_eq(fs_read_file(&svg, &len, path, 1 << 20, err), 0);
    ck_assert_ptr_nonnull(strstr(svg, "malformed replies (train)"));
    ck_assert_ptr_nonnull(strstr(svg, "tool-call success (train)"));
    ck_assert_ptr_nonnull(strstr(svg, "pass rate (held-out eval)"));
    ck_assert_ptr_null(strstr(svg, "nan"));
    /* five series of 2, 2, 2, 2 and 1 points: the redone step 2 is drawn once */
    int polylines = 0;
    for (const char *q = svg; (q = strstr(q, "<polyline")); q++)
        polylines++;
    ck_assert_int_eq(polylines, 5);
    int circles = 0;
    for (const char *q = svg; (q = strstr(q, "<circle")); q++)
        circles++;
    ck_assert_int_eq(circles, 9);
    free(svg);
    snprintf(path, sizeof path, "%s/run-dynamics.svg", dir);
    ck_assert_int_eq(access(path, F_OK), 0);
    fs_remove_tree(dir, err);
}
END_TEST

START_TEST(test_warnings)
{
    double flat[6] = {0.3, 0.3, 0.3, 0.3, 0.3, 0.3}, up[6] = {0.1, 0.1, 0.1, 0.5, 0.5, 0.5};
    double tok[6] = {200, 210, 190, 205, 200, 195}, kl[6] = {0.01, 0.01, 0.01, 0.01, 0.01, 0.012};
    double fmt[6] = {0.05, 0.1, 0.05, 0.1, 0.05, 0.1};
    int found;
    /* healthy: reward and pass rate rise together, nothing fires */
    ck_assert_int_eq(warn_on(up, up, up, tok, kl, fmt, 6, NULL, &found), 0);
    /* reward up, pass rate flat: reward hacking */
    ck_assert_int_eq(warn_on(up, flat, up, tok, kl, fmt, 6, "the pass rate", &found), 1);
    ck_assert(found);
    /* reward up, tool success flat */
    ck_assert_int_eq(warn_on(up, up, flat, tok, kl, fmt, 6, "tool success", &found), 1);
    ck_assert(found);
    /* responses collapse to a fraction of their length */
    double shrink[6] = {200, 210, 190, 205, 200, 40};
    ck_assert_int_eq(warn_on(up, up, up, shrink, kl, fmt, 6, "collapsed", &found), 1);
    ck_assert(found);
    /* KL jumps */
    double jump[6] = {0.01, 0.01, 0.01, 0.01, 0.01, 0.2};
    ck_assert_int_eq(warn_on(up, up, up, tok, jump, fmt, 6, "KL jumped", &found), 1);
    ck_assert(found);
    /* malformed replies spread: 3% -> 38% of turns, window on window */
    double spread[6] = {0.02, 0.03, 0.03, 0.28, 0.45, 0.42};
    ck_assert_int_eq(warn_on(up, up, up, tok, kl, spread, 6, "malformed replies rose from 3% to 38%", &found), 1);
    ck_assert(found);
    /* too little history: no verdict */
    ck_assert_int_eq(warn_on(up, flat, flat, shrink, jump, fmt, 2, NULL, &found), 0);
    /* a step with more episodes flagged by the integrity check than the
     * threshold (5% by default) warns at once; at the threshold it does not */
    double flag_hi[6] = {0, 0, 0, 0, 0, 0.125}, flag_at[6] = {0, 0, 0, 0, 0, 0.05};
    g_flag = flag_hi;
    ck_assert_int_eq(warn_on(up, up, up, tok, kl, fmt, 6, "12% of the step's episodes were flagged by the integrity "
                                                          "check (threshold 5%)", &found), 1);
    ck_assert(found);
    g_flag = flag_at;
    ck_assert_int_eq(warn_on(up, up, up, tok, kl, fmt, 6, NULL, &found), 0);
    g_flag = NULL;
}
END_TEST

/* episode.integrity and warnings.integrity_warn reach the config. */
START_TEST(test_config_integrity)
{
    char err[RL_ERR_MAX];
    grpo_config c;
    grpo_config_default(&c);
    ck_assert_int_eq(c.integrity_flag_only, 0);
    ck_assert_double_eq(c.warn_integrity, 0.05);
    ck_assert_msg(grpo_config_parse(&c, "{\"episode\": {\"integrity\": \"flag\"}, \"warnings\": {\"integrity_warn\": 0.2}}",
                                    "i.json", err) == 0, "%s", err);
    ck_assert_int_eq(c.integrity_flag_only, 1);
    ck_assert_double_eq(c.warn_integrity, 0.2);
    grpo_config_default(&c);
    ck_assert_int_lt(grpo_config_parse(&c, "{\"episode\": {\"integrity\": \"off\"}}", "i.json", err), 0);
    ck_assert_ptr_nonnull(strstr(err, "episode.integrity"));
}
END_TEST

/* episode.template: a known name or "" (the init checkpoint's). */
START_TEST(test_config_template)
{
    char err[RL_ERR_MAX];
    grpo_config c;
    grpo_config_default(&c);
    ck_assert_str_eq(c.chat_template, "");
    ck_assert_msg(grpo_config_parse(&c, "{\"episode\": {\"template\": \"qwen3\"}}", "t.json", err) == 0, "%s", err);
    ck_assert_str_eq(c.chat_template, "qwen3");
    grpo_config_default(&c);
    ck_assert_int_eq(grpo_config_parse(&c, "{\"episode\": {\"template\": \"llama\"}}", "t.json", err), RL_EINVAL);
    ck_assert_str_eq(err, "t.json: episode.template: unknown template \"llama\": expected one of: qwen3-xml, qwen3");
}
END_TEST

/* ---- config ------------------------------------------------------------------------- */

START_TEST(test_config_strict)
{
    char err[RL_ERR_MAX];
    struct {
        const char *json;
        const char *msg;
    } bad[] = {
        {"{\"bogus\": 1}", "bogus: unknown field"},
        {"{\"loss\": {\"eps_lo\": 0.2}}", "loss.eps_lo: unknown field"},
        {"{\"loss\": 3}", "loss: expected an object"},
        {"{\"group_size\": \"8\"}", "group_size: expected an integer"},
        {"{\"group_size\": 1}", "group_size: expected an integer in [2, 256]"},
        {"{\"group_size\": 8.5}", "group_size"},
        {"{\"temperature\": -1}", "temperature"},
        {"{\"loss\": {\"aggregation\": \"mean\"}}", "expected one of \"token_mean\", \"seq_mean\""},
        {"{\"advantage\": {\"std\": \"sample\"}}", "advantage.std"},
        {"{\"episode\": {\"think\": 1}}", "episode.think: expected true or false"},
        {"{\"rollout\": {\"mode\": \"parallel\"}}", "rollout.mode"},
        {"{\"balance\": \"kind\"}", "balance: expected one of \"none\", \"mutation\", \"repo\""},
        {"{\"final\": {\"sets\": [{\"name\": \"a\", \"tasks\": \"split:heldout\"}]}}", "name, tasks and episodes"},
        {"{\"final\": {\"sets\": [{\"name\": \"a\", \"tasks\": \"x\", \"episodes\": 5, \"colour\": 1}]}}",
         "unknown field"},
        {"{\"final\": {\"sets\": [{\"name\": \"a\", \"tasks\": \"x\", \"episodes\": 5, \"split\": \"test\"}]}}",
         "split"},
        {"{\"episode\": {\"max_context_tokens\": 65000, \"max_reply_tokens\": 1000}}", "max_context_tokens"},
        {"{\"loss\": {\"dual_clip\": 0.5}}", "dual_clip"},
        {"{\"init\": \"\", \"model\": {\"n_head\": 3}}", "model"},
        {"[1]", "expected a JSON object"},
        {"{", "not valid JSON"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        grpo_config c;
        grpo_config_default(&c);
        err[0] = '\0';
        int rc = grpo_config_parse(&c, bad[i].json, "cfg.json", err);
        ck_assert_msg(rc < 0 && strstr(err, bad[i].msg) && !strncmp(err, "cfg.json: ", 10), "case %zu: rc %d, '%s'",
                      i, rc, err);
    }
    /* a full config parses, and prints back to itself */
    grpo_config c, d;
    grpo_config_default(&c);
    const char *good = "{\"steps\": 7, \"group_size\": 4, \"temperature\": 0.9, \"loss\": {\"kl_coef\": 0,"
                       " \"aggregation\": \"seq_mean\"}, \"optim\": {\"lr\": 3e-6}, \"episode\": {\"history\": \"drop\"},"
                       " \"advantage\": {\"std\": \"none\"}, \"rollout\": {\"mode\": \"async\", \"lambda\": 0.6},"
                       " \"final\": {\"seed\": 7, \"sets\": [{\"name\": \"h\", \"tasks\": \"split:heldout\","
                       " \"split\": \"heldout\", \"episodes\": 100}]}}";
    ck_assert_msg(grpo_config_parse(&c, good, "good.json", err) == 0, "%s", err);
    ck_assert_int_eq(c.steps, 7);
    ck_assert_int_eq(c.group_size, 4);
    ck_assert(c.loss.kl_coef == 0 && c.loss.agg == GRPO_AGG_SEQ_MEAN && c.std_mode == STATS_STD_NONE);
    ck_assert(c.optim.lr == 3e-6f && !c.history_keep && c.mode == GRPO_ASYNC);
    ck_assert_int_eq(c.n_final, 1);
    ck_assert_int_eq(c.final_sets[0].episodes, 100);
    ck_assert_int_eq(c.final_seed, 7);
    char *json = grpo_config_to_json(&c);
    grpo_config_default(&d);
    ck_assert_msg(grpo_config_parse(&d, json, "printed", err) == 0, "%s", err);
    char what[128];
    ck_assert(grpo_config_same(&c, &d, what, sizeof what));
    d.loss.eps_high = 0.3;
    ck_assert(!grpo_config_same(&c, &d, what, sizeof what));
    ck_assert_str_eq(what, "loss.eps_high");
    free(json);

    /* train_tasks as a probed id list: 40 ids (~800 bytes) fit; one past
     * GRPO_SEL_MAX is refused with the field and the cap */
    size_t cap = (size_t)GRPO_SEL_MAX + 64;
    char *sel = malloc(cap), *doc = malloc(cap + 64);
    ck_assert(sel && doc);
    size_t n = 0;
    for (int i = 0; i < 40; i++)
        n += (size_t)snprintf(sel + n, cap - n, "%sstrutil__gen1_%04d", i ? "," : "", i);
    snprintf(doc, cap + 64, "{\"train_tasks\": \"%s\"}", sel);
    grpo_config_default(&c);
    ck_assert_msg(grpo_config_parse(&c, doc, "probed.json", err) == 0, "%s", err);
    ck_assert_str_eq(c.train_tasks, sel);
    memset(sel, 'a', GRPO_SEL_MAX);
    sel[GRPO_SEL_MAX] = '\0';
    snprintf(doc, cap + 64, "{\"train_tasks\": \"%s\"}", sel);
    grpo_config_default(&c);
    ck_assert(grpo_config_parse(&c, doc, "long.json", err) < 0);
    ck_assert_msg(strstr(err, "train_tasks: expected at most 4095 bytes"), "%s", err);
    free(sel);
    free(doc);
    /* the default recipe: G 8, temperature 0.7, KL 0.05, clip 0.2 / 0.28, advantage clip 2 */
    grpo_config_default(&c);
    ck_assert_int_eq(c.group_size, 8);
    ck_assert(c.temperature == 0.7 && c.loss.kl_coef == 0.05 && c.loss.eps_low == 0.2 && c.loss.eps_high == 0.28);
    ck_assert(c.adv_clip == 2.0 && c.std_mode == STATS_STD_POPULATION && c.optim.lr >= 1e-6f && c.optim.lr <= 5e-6f);
}
END_TEST

/* A config extends another: the base's fields, then its own, field by
 * field inside sections; a list is replaced whole; the path is relative
 * to the file; a cycle and a missing base are errors naming the file. */
START_TEST(test_config_extends)
{
    char dir[] = "/tmp/rl-cfg-XXXXXX", err[RL_ERR_MAX], path[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    struct {
        const char *name, *json;
    } files[] = {
        {"base.json", "{\"out\": \"runs/base\", \"steps\": 36, \"group_size\": 4, \"advantage\": {\"clip\": 2.0,"
                      " \"eps\": 1e-4}, \"final\": {\"seed\": 3, \"sets\": [{\"name\": \"a\", \"tasks\": \"x\","
                      " \"episodes\": 10}, {\"name\": \"b\", \"tasks\": \"y\", \"episodes\": 20}]}}"},
        {"sub/variant.json", "{\"extends\": \"../base.json\", \"out\": \"runs/v\", \"advantage\": {\"clip\": 3.0},"
                             " \"final\": {\"sets\": [{\"name\": \"c\", \"tasks\": \"z\", \"episodes\": 5}]}}"},
        {"sub/deeper.json", "{\"extends\": \"variant.json\", \"steps\": 48}"},
        {"loop1.json", "{\"extends\": \"loop2.json\"}"},
        {"loop2.json", "{\"extends\": \"loop1.json\"}"},
        {"missing.json", "{\"extends\": \"nope.json\"}"},
        {"bad.json", "{\"extends\": 3}"},
    };
    snprintf(path, sizeof path, "%s/sub", dir);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
        ck_assert_int_eq(fs_write_atomic(path, files[i].json, strlen(files[i].json), err), 0);
    }
    grpo_config c;
    grpo_config_default(&c);
    snprintf(path, sizeof path, "%s/sub/deeper.json", dir);
    ck_assert_msg(grpo_config_load(&c, path, err) == 0, "%s", err);
    ck_assert_int_eq(c.steps, 48);      /* deeper */
    ck_assert_str_eq(c.out, "runs/v");  /* variant */
    ck_assert_int_eq(c.group_size, 4);  /* base */
    ck_assert(c.adv_clip == 3.0);       /* variant, inside a section the base also set */
    ck_assert(c.adv_eps == 1e-4);       /* base, the section's other field kept */
    ck_assert_int_eq(c.final_seed, 3);
    ck_assert_int_eq(c.n_final, 1);     /* the list replaced, not appended to */
    ck_assert_str_eq(c.final_sets[0].name, "c");
    const char *bad[][2] = {{"loop1.json", "extends: more than 4 levels"},
                            {"missing.json", "missing.json: extends: "},
                            {"bad.json", "bad.json: extends: expected the path of a config file"}};
    for (int i = 0; i < 3; i++) {
        grpo_config_default(&c);
        snprintf(path, sizeof path, "%s/%s", dir, bad[i][0]);
        err[0] = '\0';
        ck_assert(grpo_config_load(&c, path, err) < 0);
        ck_assert_msg(strstr(err, bad[i][1]), "%s: %s", bad[i][0], err);
    }
    fs_remove_tree(dir, err);
}
END_TEST

/* ---- a tiny model and tokenizer ----------------------------------------------------- */

static char g_tmp[64];

/* Records of the trainer's last step. */
static size_t last_count(grpo_trainer *t)
{
    size_t n;
    grpo_last_records(t, &n);
    return n;
}


static void make_tmp(void)
{
    snprintf(g_tmp, sizeof g_tmp, "/tmp/rl-grpo-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(g_tmp));
    chmod(g_tmp, 0755); /* the sandbox's uid must reach the work trees */
}

/* A small BPE tokenizer trained on the system prompt, saved in g_tmp. */
static tok_t *tiny_tokenizer(char *path, size_t n)
{
    char err[RL_ERR_MAX], *text;
    size_t len;
    ck_assert_msg(fs_read_file(&text, &len, "prompts/v2.md", 1 << 20, err) == 0, "%s", err);
    tok_train_opts o = tok_train_opts_default();
    o.vocab_size = 420;
    tok_t *tok;
    ck_assert_msg(tok_train(&tok, text, len, &o, err) == 0, "%s", err);
    free(text);
    snprintf(path, n, "%s/tok.json", g_tmp);
    ck_assert_msg(tok_save(tok, path, err) == 0, "%s", err);
    return tok;
}

static void tiny_model_config(model_config *c, int vocab)
{
    model_config_default(c);
    c->vocab = vocab;
    c->d_model = 32;
    c->n_layer = 2;
    c->n_head = 2;
    c->n_kv_head = 1;
    c->d_ff = 64;
    c->max_seq = 4096;
    c->rope_theta = 10000.0f;
}

/* ---- model policy over the trained weights ------------------------------------------- */

/* A few steps of cross-entropy teaching the model to end a reply after
 * two tokens: so sampling meets both ways of finishing. */
static void teach_stop(model *m, int stop)
{
    char err[RL_ERR_MAX];
    enum { T = 12 };
    int tok[T], tgt[T];
    float lp[T], coef[T];
    opt_config oc;
    opt_config_default(&oc);
    oc.lr = 3e-2f;
    oc.warmup_steps = 0;
    oc.total_steps = 0;
    oc.weight_decay = 0;
    opt_span sp = {0, m->n_params, 0};
    adamw *opt;
    ck_assert_int_eq(opt_new(&opt, &oc, m->n_params, &sp, 1, err), 0);
    for (int step = 0; step < 60; step++) {
        for (int t = 0; t < T; t++) {
            tok[t] = 40 + (t * 7 + step) % 50;
            tgt[t] = t % 3 == 2 ? stop : -1;
        }
        for (int t = 0; t < T; t++)
            coef[t] = tgt[t] >= 0 ? -1.0f / 4 : 0.0f;
        ck_assert_int_eq(model_forward(m, tok, tgt, 1, T, 1.0f, lp, NULL, err), 0);
        ck_assert_int_eq(model_zero_grad(m, err), 0);
        ck_assert_int_eq(model_backward(m, coef, err), 0);
        ck_assert_int_eq(opt_step(opt, m->params, m->grads, NULL, NULL, err), 0);
    }
    opt_free(opt);
}

START_TEST(test_model_policy_borrowed)
{
    char err[RL_ERR_MAX], path[128];
    make_tmp();
    tok_t *tok = tiny_tokenizer(path, sizeof path);
    int stop = tok_special_id(tok, "<|im_end|>");
    model_config cfg;
    tiny_model_config(&cfg, tok_vocab_size(tok));
    cfg.max_seq = 64;
    model *m;
    ck_assert_int_eq(model_new(&m, &cfg, NULL, err), 0);
    model_random_init(m, 9);
    teach_stop(m, stop);
    model_policy_opts lo;
    model_policy_opts_default(&lo);
    lo.temperature = 1.0f;
    policy *p;
    ck_assert_int_eq(model_policy_new(&p, m, tok, &lo, err), 0);
    ck_assert_ptr_eq(p->tok, tok);
    int32_t ctx[3][60];
    pol_request req[4];
    memset(req, 0, sizeof req);
    for (int i = 0; i < 3; i++) {
        for (int t = 0; t < 60; t++)
            ctx[i][t] = 40 + (t * 5 + i) % 50;
        req[i].context_ids = ctx[i];
        req[i].n_context_ids = (size_t)(10 + 5 * i);
        req[i].max_tokens = 6;
        req[i].seed = (uint64_t)i + 1;
    }
    req[2].n_context_ids = 60; /* room for 4 tokens only (max_seq 64) */
    req[3].context = "abc";    /* no ids: the text is encoded */
    req[3].context_len = 3;
    req[3].max_tokens = 6;
    pol_response r[4], r2[4];
    int stops = 0;
    for (int round = 0; round < 8; round++) {
        for (int i = 0; i < 4; i++)
            req[i].seed += 17;
        ck_assert_msg(pol_generate(p, r, req, 4, err) == 0, "%s", err);
        for (int i = 0; i < 4; i++) {
            size_t cap = i == 2 ? 4 : 6;
            ck_assert(r[i].n_ids >= 1 && r[i].n_ids <= cap);
            int stopped = r[i].finish == POL_FINISH_STOP;
            stops += stopped;
            if (stopped)
                ck_assert_int_eq(r[i].ids[r[i].n_ids - 1], stop);
            else
                ck_assert_uint_eq(r[i].n_ids, cap);
            for (size_t k = 0; k + 1 < r[i].n_ids; k++)
                ck_assert_int_ne(r[i].ids[k], stop);
            char *text;
            size_t len;
            ck_assert_int_eq(tok_decode(&text, &len, tok, r[i].ids, r[i].n_ids - (size_t)stopped, err), 0);
            ck_assert_uint_eq(len, r[i].text_len);
            ck_assert(!memcmp(text, r[i].text, len));
            free(text);
            /* the logprobs are those of the model at the sampling temperature */
            if (i < 3) {
                int seq[70], L = 0;
                for (size_t t = 0; t < req[i].n_context_ids; t++)
                    seq[L++] = req[i].context_ids[t];
                for (size_t t = 0; t < r[i].n_ids; t++)
                    seq[L++] = r[i].ids[t];
                float lp[70];
                float *lps[1] = {lp};
                const int *seqs[1] = {seq};
                ck_assert_int_eq(model_score(m, lps, seqs, &L, 1, 1.0f, err), 0);
                for (size_t t = 0; t < r[i].n_ids; t++)
                    ck_assert_msg(fabsf(lp[req[i].n_context_ids - 1 + t] - r[i].logprobs[t]) < 1e-4f,
                                  "logprob %g vs %g", (double)lp[req[i].n_context_ids - 1 + t],
                                  (double)r[i].logprobs[t]);
            }
        }
        /* the same requests on the same weights: the same replies; a
         * request alone gets the reply it got in the batch of four */
        pol_response solo;
        ck_assert_int_eq(pol_generate(p, &solo, &req[1], 1, err), 0);
        ck_assert_uint_eq(solo.n_ids, r[1].n_ids);
        ck_assert(!memcmp(solo.ids, r[1].ids, solo.n_ids * sizeof(int32_t)));
        pol_response_dispose(&solo);
        ck_assert_int_eq(pol_generate(p, r2, req, 4, err), 0);
        for (int i = 0; i < 4; i++) {
            ck_assert_uint_eq(r[i].n_ids, r2[i].n_ids);
            ck_assert(!memcmp(r[i].ids, r2[i].ids, r[i].n_ids * sizeof(int32_t)));
            pol_response_dispose(&r[i]);
            pol_response_dispose(&r2[i]);
        }
    }
    ck_assert_msg(stops > 0, "no reply ended with <|im_end|>");
    /* a context that leaves no room: an empty truncated reply, not an error */
    int32_t longctx[64];
    for (int t = 0; t < 64; t++)
        longctx[t] = 41;
    pol_request q = {.context_ids = longctx, .n_context_ids = 64, .max_tokens = 5, .seed = 1};
    ck_assert_int_eq(pol_generate(p, r, &q, 1, err), 0);
    ck_assert_uint_eq(r[0].n_ids, 0);
    ck_assert_int_eq(r[0].finish, POL_FINISH_LENGTH);
    ck_assert_str_eq(r[0].text, "");
    pol_response_dispose(&r[0]);
    /* ids outside the model's vocabulary are an error */
    longctx[3] = 100000;
    q.n_context_ids = 10;
    ck_assert_int_eq(pol_generate(p, r, &q, 1, err), RL_EINVAL);
    pol_free(p);
    model_free(m);
    tok_free(tok);
    fs_remove_tree(g_tmp, err);
}
END_TEST


/* ---- the commands ------------------------------------------------------------------- */

/* Runs a shell command; returns its exit code, *out its stdout+stderr. */
static int run_cmd(const char *cmd, char **out)
{
    FILE *f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    buf_t b;
    buf_init(&b, 1 << 20);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        buf_append(&b, chunk, n);
    int st = pclose(f);
    *out = buf_detach(&b, NULL);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(test_train_cli)
{
    const char *bin = getenv("RL_BIN") ? getenv("RL_BIN") : "bin";
    char cmd[1024], path[128], err[RL_ERR_MAX], *out;
    make_tmp();
    /* usage errors: 2 */
    snprintf(cmd, sizeof cmd, "%s/grpo train 2>&1", bin);
    ck_assert_int_eq(run_cmd(cmd, &out), 2);
    ck_assert_ptr_nonnull(strstr(out, "--config"));
    free(out);
    /* a bad flag value: 2, one line naming the flag */
    const char *bad_flags[][2] = {{"train --config x --stop-after 0", "--stop-after"},
                                  {"train --config x --stop-after 3x", "--stop-after"},
                                  {"flywheel --config x --rounds 0", "--rounds"},
                                  {"flywheel --config x --rounds 1001", "--rounds"},
                                  {"flywheel --config x --rounds ''", "--rounds"}};
    for (size_t k = 0; k < sizeof bad_flags / sizeof *bad_flags; k++) {
        snprintf(cmd, sizeof cmd, "%s/grpo %s 2>&1", bin, bad_flags[k][0]);
        ck_assert_int_eq(run_cmd(cmd, &out), 2);
        ck_assert_msg(strstr(out, bad_flags[k][1]) && strchr(out, '\n') == out + strlen(out) - 1, "%s: %s",
                      bad_flags[k][0], out);
        free(out);
    }
    snprintf(cmd, sizeof cmd, "%s/grpo flywheel --bogus 2>&1", bin);
    ck_assert_int_eq(run_cmd(cmd, &out), 2);
    free(out);
    /* a bad config: 1, with the field named */
    snprintf(path, sizeof path, "%s/bad.json", g_tmp);
    const char *bad = "{\"loss\": {\"kl_coef\": -1}}";
    ck_assert_int_eq(fs_write_atomic(path, bad, strlen(bad), err), 0);
    snprintf(cmd, sizeof cmd, "%s/grpo train --config %s 2>&1", bin, path);
    ck_assert_int_eq(run_cmd(cmd, &out), 1);
    ck_assert_msg(strstr(out, "loss.kl_coef"), "%s", out);
    free(out);
    /* the experiment's committed configs are valid */
    const char *cfgs[] = {"configs/grpo-main.json", "configs/grpo-smoke.json"};
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "%s/grpo train --config %s --check 2>&1", bin, cfgs[i]);
        ck_assert_int_eq(run_cmd(cmd, &out), 0);
        grpo_config c;
        grpo_config_default(&c);
        ck_assert_msg(grpo_config_parse(&c, out, cfgs[i], err) == 0, "%s", err);
        ck_assert_int_eq(c.n_final, 2);
        ck_assert(c.final_sets[0].episodes >= (i == 0 ? 100 : 1));
        free(out);
    }
    /* --resume of something that is not a run */
    snprintf(cmd, sizeof cmd, "%s/grpo train --config configs/grpo-smoke.json --resume %s 2>&1", bin, g_tmp);
    ck_assert_int_eq(run_cmd(cmd, &out), 1);
    ck_assert_ptr_nonnull(strstr(out, "neither a checkpoint"));
    free(out);
    fs_remove_tree(g_tmp, err);
}
END_TEST

/* ---- GRPO runs -------------------------------------------------------------------------- */

typedef struct hook_ctx {
    int constant; /* 1: every episode gets reward 1 (zero-variance groups) */
    int calls;
    int nan_calls; /* the next this many episodes get a NaN reward */
} hook_ctx;

/* Parity of the first reply's ids: a reward a random model earns half the
 * time, so groups have variance and the update has a signal. */
static double parity_reward(void *user, const cJSON *rec, double reward)
{
    hook_ctx *h = user;
    (void)reward;
    h->calls++;
    if (h->nan_calls > 0) {
        h->nan_calls--;
        return NAN;
    }
    if (h->constant)
        return 1.0;
    const cJSON *t0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(rec, "turns"), 0);
    const cJSON *ids = cJSON_GetObjectItemCaseSensitive(t0, "ids"), *x;
    long s = 0;
    cJSON_ArrayForEach(x, ids) s += (long)x->valuedouble;
    return (double)(s % 2);
}

static void run_config(grpo_config *c, const char *tok_path, int vocab, const char *out)
{
    grpo_config_default(c);
    snprintf(c->tokenizer, sizeof c->tokenizer, "%s", tok_path);
    snprintf(c->out, sizeof c->out, "%s", out);
    snprintf(c->ws_root, sizeof c->ws_root, "%s/ws", g_tmp);
    snprintf(c->train_tasks, sizeof c->train_tasks, "leapyear");
    tiny_model_config(&c->model, vocab);
    c->steps = 3;
    c->tasks_per_step = 1;
    c->group_size = 3;
    c->max_turns = 1;
    c->max_reply_tokens = 8;
    c->max_context_tokens = 4000;
    c->think = 0;
    c->eval_every = 0;
    c->ckpt_every = 1;
    c->optim.lr = 1e-2f;
    c->optim.warmup_steps = 1;
    /* one model thread: the model's backward sums RMSNorm gain gradients
     * per worker thread in the order tasks were taken, so with several
     * threads two identical passes can differ in the last bits */
    c->threads = 1;
    c->quiet = 1;
}

/* Step lines of a run's metrics.jsonl. */
static int step_lines(cJSON **out, int max, const char *run)
{
    char path[256], *text, err[RL_ERR_MAX];
    snprintf(path, sizeof path, "%s/metrics.jsonl", run);
    ck_assert_msg(fs_read_file(&text, NULL, path, 1 << 24, err) == 0, "%s", err);
    int n = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        cJSON *o = cJSON_Parse(line);
        ck_assert_ptr_nonnull(o);
        if (!cJSON_GetObjectItem(o, "event") && n < max)
            out[n++] = o;
        else
            cJSON_Delete(o);
    }
    free(text);
    return n;
}

/* The trainer's masking on a real record: every position that is not a
 * policy-written target (prompt, tool output, padding) gets a coefficient
 * of exactly 0, and changing what those positions predict leaves the
 * parameter gradient bit for bit the same. */
static void check_masked_zero_grad(grpo_trainer *t)
{
    char err[RL_ERR_MAX];
    ck_assert_uint_gt(last_count(t), 0);
    grpo_seqs S;
    grpo_seqs_init(&S);
    ck_assert_msg(grpo_seqs_add_json(&S, grpo_last_records(t, NULL)[0], 0, grpo_model(t)->cfg.vocab, grpo_model(t)->cfg.max_seq, err) == 0, "%s",
                  err);
    ck_assert_uint_ge(S.n, 1);
    const grpo_seq *q = &S.v[0];
    int n = q->n;
    int *tok = malloc(n * sizeof *tok), *tgt = malloc(n * sizeof *tgt);
    float *lp = malloc(n * sizeof *lp), *adv = malloc(n * sizeof *adv), *w = malloc(n * sizeof *w);
    float *coef = malloc(n * sizeof *coef), *g1 = malloc(grpo_model(t)->n_params * sizeof *g1);
    grpo_loss_opts o;
    grpo_loss_opts_default(&o);
    o.kl_coef = 0;
    /* the masked positions predict something too (the output head runs on
     * every row): their coefficient must still be 0 */
    for (int p = 0; p < n; p++) {
        tok[p] = q->tokens[p];
        tgt[p] = q->targets[p] >= 0 ? q->targets[p] : (p * 7) % grpo_model(t)->cfg.vocab;
        adv[p] = 1.0f;
        w[p] = q->targets[p] >= 0 ? 1.0f / (float)q->n_policy : 0.0f;
    }
    for (int pass = 0; pass < 2; pass++) {
        ck_assert_int_eq(model_forward(grpo_model(t), tok, tgt, 1, n, (float)grpo_config_of(t)->temperature, lp, NULL, err), 0);
        /* behaviour = current logprobs (ratio 1): no token is clipped, so
         * every policy token must get a coefficient (the record's own
         * behaviour logprobs are of the weights before the step) */
        double L = grpo_loss_tokens(coef, NULL, &o, lp, lp, NULL, NULL, adv, w, (size_t)n);
        ck_assert(isfinite(L));
        int trained = 0;
        for (int p = 0; p < n; p++) {
            if (q->targets[p] < 0)
                ck_assert(coef[p] == 0.0f);
            else
                trained += coef[p] != 0.0f;
        }
        ck_assert_int_eq(trained, q->n_policy);
        ck_assert_int_eq(model_zero_grad(grpo_model(t), err), 0);
        ck_assert_int_eq(model_backward(grpo_model(t), coef, err), 0);
        if (pass == 0) {
            memcpy(g1, grpo_model(t)->grads, grpo_model(t)->n_params * sizeof *g1);
            /* they predict other tokens now: the gradient is bit for bit the same */
            for (int p = 0; p < n; p++)
                if (q->targets[p] < 0)
                    tgt[p] = (p * 31 + 5) % grpo_model(t)->cfg.vocab;
        } else {
            ck_assert(!memcmp(g1, grpo_model(t)->grads, grpo_model(t)->n_params * sizeof *g1));
        }
    }
    free(tok), free(tgt), free(lp), free(adv), free(w), free(coef), free(g1);
    grpo_seqs_dispose(&S);
}

START_TEST(test_grpo_three_steps_and_resume)
{
    char err[RL_ERR_MAX], tok_path[128], run_a[128], run_b[128];
    make_tmp();
    tok_t *tok = tiny_tokenizer(tok_path, sizeof tok_path);
    int vocab = tok_vocab_size(tok);
    tok_free(tok);
    snprintf(run_a, sizeof run_a, "%s/a", g_tmp);
    snprintf(run_b, sizeof run_b, "%s/b", g_tmp);
    grpo_config c;
    run_config(&c, tok_path, vocab, run_a);
    hook_ctx h = {0, 0, 0};
    grpo_opts hooks = {.reward = parity_reward, .user = &h};

    /* A: three steps without a stop */
    grpo_trainer *t;
    ck_assert_msg(grpo_open(&t, &c, NULL, &hooks, err) == 0, "%s", err);
    float *w0 = malloc(grpo_model(t)->n_params * sizeof *w0);
    memcpy(w0, grpo_model(t)->params, grpo_model(t)->n_params * sizeof *w0);
    ck_assert_msg(grpo_train(t, 0, err) == 0, "%s", err);
    ck_assert_int_eq(grpo_step_count(t), 3);
    ck_assert_int_eq(h.calls, 9);
    size_t np = grpo_model(t)->n_params;
    float *wa = malloc(np * sizeof *wa);
    memcpy(wa, grpo_model(t)->params, np * sizeof *wa);
    ck_assert(memcmp(w0, wa, np * sizeof *wa) != 0); /* it learned something */
    check_masked_zero_grad(t);
    /* the experiment report on a one-task held-out set, two seeds */
    grpo_final_set *fs = &grpo_config_of(t)->final_sets[0];
    memset(fs, 0, sizeof *fs);
    snprintf(fs->name, sizeof fs->name, "ly");
    snprintf(fs->tasks, sizeof fs->tasks, "leapyear");
    fs->episodes = 2;
    grpo_config_of(t)->n_final = 1;
    snprintf(grpo_config_of(t)->results, sizeof grpo_config_of(t)->results, "%s/results", g_tmp);
    snprintf(grpo_config_of(t)->results_name, sizeof grpo_config_of(t)->results_name, "tiny");
    grpo_config_of(t)->final_seed = 5; /* fresh seeds for the same checkpoints: 5 and 6 */
    ck_assert_msg(grpo_final_report(t, err) == 0, "%s", err);
    char *rep;
    char rpath[256];
    snprintf(rpath, sizeof rpath, "%s/results/tiny.json", g_tmp);
    ck_assert_msg(fs_read_file(&rep, NULL, rpath, 1 << 20, err) == 0, "%s", err);
    cJSON *rj = cJSON_Parse(rep);
    free(rep);
    const cJSON *set0 = cJSON_GetArrayItem(cJSON_GetObjectItem(rj, "sets"), 0);
    ck_assert_ptr_nonnull(set0);
    ck_assert_str_eq(cJSON_GetObjectItem(set0, "name")->valuestring, "ly");
    ck_assert_int_eq((int)cJSON_GetObjectItem(set0, "n")->valuedouble, 2);
    ck_assert_int_eq((int)cJSON_GetObjectItem(set0, "first_seed")->valuedouble, 5);
    ck_assert_int_eq((int)cJSON_GetObjectItem(set0, "seeds")->valuedouble, 2);
    double sft_p = cJSON_GetObjectItem(set0, "sft")->valuedouble, rl_p = cJSON_GetObjectItem(set0, "rl")->valuedouble;
    ck_assert(sft_p >= 0 && sft_p <= 1 && rl_p >= 0 && rl_p <= 1);
    /* one task: it went up, down, or neither, as the pass rates say */
    int up = (int)cJSON_GetObjectItem(set0, "tasks_up")->valuedouble;
    int down = (int)cJSON_GetObjectItem(set0, "tasks_down")->valuedouble;
    ck_assert_int_eq(up, rl_p > sft_p);
    ck_assert_int_eq(down, rl_p < sft_p);
    ck_assert(isfinite(cJSON_GetObjectItem(set0, "z")->valuedouble));
    /* one task is never evidence: the sign test of 1 vs 0 is p 1 */
    ck_assert_double_eq(cJSON_GetObjectItem(set0, "sign_test_p")->valuedouble, 1.0);
    ck_assert_ptr_null(cJSON_GetObjectItem(set0, "by_mutation")); /* leapyear is hand-written */
    for (int k = 0; k < 2; k++) {
        const cJSON *e = cJSON_GetObjectItem(set0, k ? "rl_edits" : "sft_edits");
        ck_assert_ptr_nonnull(e);
        double calls = cJSON_GetObjectItem(e, "calls")->valuedouble;
        double applied = cJSON_GetObjectItem(e, "applied")->valuedouble;
        double edited = cJSON_GetObjectItem(e, "episodes_with_applied")->valuedouble;
        double edited_passed = cJSON_GetObjectItem(e, "passed_with_applied")->valuedouble;
        ck_assert(applied <= calls && edited <= applied && edited <= 2 && edited_passed <= edited);
        double failed = 0;
        const char *kinds[] = {"failed_no_match", "failed_not_unique", "failed_no_change", "failed_other"};
        for (int q = 0; q < 4; q++) {
            const cJSON *v = cJSON_GetObjectItem(e, kinds[q]);
            ck_assert_msg(cJSON_IsNumber(v) && v->valuedouble >= 0, "%s", kinds[q]);
            failed += v->valuedouble;
        }
        ck_assert(failed == calls - applied); /* every failed edit is counted once */
        const cJSON *rep = cJSON_GetObjectItem(e, "failed_then_applied");
        ck_assert(cJSON_IsNumber(rep) && rep->valuedouble >= 0 && rep->valuedouble <= failed);
        /* leapyear fails at the base: no pass without an applied edit */
        ck_assert(edited_passed * 0.5 == (k ? rl_p : sft_p));
        /* fixes are edit_file calls only: at most the episodes with an applied edit */
        double fixed = cJSON_GetObjectItem(e, "episodes_with_fix")->valuedouble;
        double distinct = cJSON_GetObjectItem(e, "distinct_fixes")->valuedouble;
        double top_eps = cJSON_GetObjectItem(e, "top_fix_episodes")->valuedouble;
        double top_passed = cJSON_GetObjectItem(e, "top_fix_passed")->valuedouble;
        const char *top = cJSON_GetObjectItem(e, "top_fix")->valuestring;
        ck_assert(fixed <= edited && distinct <= fixed && top_eps <= fixed && top_passed <= top_eps);
        ck_assert((distinct > 0) == (top_eps > 0) && (top_eps > 0) == (top[0] != '\0'));
    }
    cJSON_Delete(rj);
    snprintf(rpath, sizeof rpath, "%s/results/tiny-ly-rl.jsonl", g_tmp);
    ck_assert_msg(fs_read_file(&rep, NULL, rpath, 1 << 24, err) == 0, "%s", err);
    ck_assert_ptr_nonnull(strstr(rep, "#seed=5\""));
    ck_assert_ptr_nonnull(strstr(rep, "#seed=6\""));
    ck_assert_ptr_null(strstr(rep, "#seed=1\""));
    free(rep);
    snprintf(rpath, sizeof rpath, "%s/results/tiny.md", g_tmp);
    ck_assert_msg(fs_read_file(&rep, NULL, rpath, 1 << 20, err) == 0, "%s", err);
    ck_assert_ptr_nonnull(strstr(rep, "| ly | "));
    ck_assert_ptr_nonnull(strstr(rep, "sign test"));
    ck_assert_ptr_nonnull(strstr(rep, "| most frequent fix |"));
    ck_assert_ptr_nonnull(strstr(rep, "| ly | SFT | "));
    ck_assert_ptr_nonnull(strstr(rep, "| set | policy | failed | no match | not unique | no change | other |"));
    free(rep);
    grpo_close(t);
    cJSON *lines[8];
    int n = step_lines(lines, 8, run_a), updated = 0;
    ck_assert_int_eq(n, 3);
    for (int i = 0; i < n; i++) {
        const cJSON *loss = cJSON_GetObjectItem(lines[i], "loss");
        ck_assert(cJSON_IsNumber(loss) && isfinite(loss->valuedouble));
        ck_assert(cJSON_GetObjectItem(lines[i], "trained_tokens")->valuedouble > 0);
        ck_assert_int_eq((int)cJSON_GetObjectItem(lines[i], "episodes")->valuedouble, 3);
        /* tokens are trained on the weights that sampled them: ratio 1 */
        ck_assert(fabs(cJSON_GetObjectItem(lines[i], "ratio_mean")->valuedouble - 1.0) < 1e-3);
        ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(lines[i], "kl")));
        double ea = cJSON_GetObjectItem(lines[i], "edit_applied")->valuedouble;
        ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(lines[i], "edit_calls")) && ea >= 0 && ea <= 1);
        updated += cJSON_IsTrue(cJSON_GetObjectItem(lines[i], "updated"));
        cJSON_Delete(lines[i]);
    }
    ck_assert_int_ge(updated, 1);
    char path[256];
    snprintf(path, sizeof path, "%s/ckpt/step-00000003/profile.json", run_a);
    ck_assert(access(path, F_OK) == 0);
    /* the checkpoint records the template its episodes rendered with */
    char *state;
    snprintf(path, sizeof path, "%s/ckpt/step-00000003/state.json", run_a);
    ck_assert_int_eq(fs_read_file(&state, NULL, path, 1 << 20, err), 0);
    cJSON *sj = cJSON_Parse(state);
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(sj, "chat_template")), "qwen3-xml");
    cJSON_Delete(sj);
    free(state);

    /* B: stopped after 2 steps (as a kill after the checkpoint would), then
     * resumed to 3: the same weights, bit for bit */
    run_config(&c, tok_path, vocab, run_b);
    h.calls = 0;
    ck_assert_int_eq(grpo_open(&t, &c, NULL, &hooks, err), 0);
    ck_assert_msg(grpo_train(t, 2, err) == 0, "%s", err);
    grpo_close(t);
    char *latest;
    snprintf(path, sizeof path, "%s/ckpt/latest", run_b);
    ck_assert_int_eq(fs_read_file(&latest, NULL, path, 64, err), 0);
    ck_assert_str_eq(latest, "step-00000002\n");
    free(latest);
    /* resuming with a different config is refused, naming the field */
    grpo_config other = c;
    other.loss.eps_high = 0.3;
    ck_assert_int_eq(grpo_open(&t, &other, run_b, &hooks, err), RL_EINVAL);
    ck_assert_msg(strstr(err, "loss.eps_high"), "%s", err);
    /* starting over an existing run is refused */
    ck_assert_int_eq(grpo_open(&t, &c, NULL, &hooks, err), RL_EINVAL);
    ck_assert_msg(grpo_open(&t, &c, run_b, &hooks, err) == 0, "%s", err);
    ck_assert_int_eq(grpo_step_count(t), 2);
    ck_assert_msg(grpo_train(t, 0, err) == 0, "%s", err);
    ck_assert_int_eq(grpo_step_count(t), 3);
    ck_assert_int_eq(h.calls, 9);
    ck_assert_msg(memcmp(wa, grpo_model(t)->params, np * sizeof *wa) == 0, "resumed weights differ from the uninterrupted run");
    grpo_close(t);
    free(w0);
    free(wa);
    fs_remove_tree(g_tmp, err);
}
END_TEST

/* A run in a fresh temp dir on the tiny tokenizer, checkpoints off and
 * weight decay 0 (so a step with no gradient leaves the weights as they
 * are). The config points into the struct, and the trainer into hooks:
 * the struct outlives the trainer. */
typedef struct zv_run {
    char tok[128], dir[128];
    grpo_config c;
    hook_ctx h;
    grpo_opts hooks;
    int log_lines; /* step lines the log callback got */
    float *w1; /* the weights after the first step */
} zv_run;

/* The trainer's log callback in the tests: counts step lines. */
static void count_lines(void *ctx, int level, const char *msg)
{
    (void)level;
    *(int *)ctx += !strncmp(msg, "step ", 5);
}

/* Opens the run with KL coefficient kl (and, when dynamic, one fresh group
 * per zero-variance group) and trains its first step, which has reward
 * signal, so the optimizer has moments. */
static grpo_trainer *zv_open(zv_run *z, double kl, int dynamic, char *err)
{
    make_tmp();
    tok_t *tok = tiny_tokenizer(z->tok, sizeof z->tok);
    int vocab = tok_vocab_size(tok);
    tok_free(tok);
    snprintf(z->dir, sizeof z->dir, "%s/z", g_tmp);
    run_config(&z->c, z->tok, vocab, z->dir);
    z->c.loss.kl_coef = kl;
    z->c.optim.weight_decay = 0;
    z->c.ckpt_every = 0;
    if (dynamic) {
        z->c.dynamic_sampling = 1;
        z->c.max_extra_groups = 1;
    }
    z->h = (hook_ctx){0, 0, 0};
    z->hooks = (grpo_opts){.reward = parity_reward, .user = &z->h, .log = count_lines, .log_ctx = &z->log_lines};
    z->c.quiet = 0; /* lines go to the callback, nothing to stderr */
    grpo_trainer *t;
    ck_assert_msg(grpo_open(&t, &z->c, NULL, &z->hooks, err) == 0, "%s", err);
    z->log_lines = 0;
    ck_assert_msg(grpo_train(t, 1, err) == 0, "%s", err);
    ck_assert_int_eq(z->log_lines, 1); /* one step, one line through the callback */
    size_t np = grpo_model(t)->n_params;
    z->w1 = malloc(np * sizeof *z->w1);
    ck_assert_ptr_nonnull(z->w1);
    memcpy(z->w1, grpo_model(t)->params, np * sizeof *z->w1);
    return t;
}

START_TEST(test_zero_variance_step_changes_nothing)
{
    char err[RL_ERR_MAX];
    zv_run z;
    grpo_trainer *t = zv_open(&z, 0, 0, err);
    hook_ctx *h = &z.h;
    float *w1 = z.w1;
    ck_assert_ptr_null(grpo_reference(t)); /* KL 0: no reference model at all */
    size_t np = grpo_model(t)->n_params;
    h->constant = 1; /* every group all-pass: zero variance */
    ck_assert_msg(grpo_train(t, 2, err) == 0, "%s", err);
    ck_assert_int_eq(grpo_step_count(t), 2);
    ck_assert_msg(memcmp(w1, grpo_model(t)->params, np * sizeof *w1) == 0, "a zero-variance step changed the weights");
    /* a step whose loss is not finite (NaN rewards) rolls back to the last
     * checkpoint and is done again */
    h->nan_calls = 3;
    ck_assert_msg(grpo_train(t, 3, err) == 0, "%s", err);
    ck_assert_int_eq(grpo_step_count(t), 3);
    ck_assert_int_eq(h->calls, 12); /* 3 + 3, then 3 NaN and 3 for the redone step */
    for (size_t i = 0; i < np; i++)
        ck_assert(isfinite(grpo_model(t)->params[i]));
    ck_assert(memcmp(w1, grpo_model(t)->params, np * sizeof *w1) == 0); /* the checkpoint of step 2, unchanged */
    /* the flywheel's fine-tune: cross-entropy on the policy tokens of
     * records goes down from one pass to the next */
    double l1, l2;
    ck_assert_uint_eq(last_count(t), 3);
    ck_assert_msg(grpo_sft(&l1, t, grpo_last_records(t, NULL), last_count(t), 1, 1e-2, err) == 0, "%s", err);
    ck_assert_msg(grpo_sft(&l2, t, grpo_last_records(t, NULL), last_count(t), 1, 1e-2, err) == 0, "%s", err);
    ck_assert_msg(l1 > 0 && l2 < l1, "SFT loss %g -> %g", l1, l2);
    grpo_close(t);
    char mpath[256], *mtext;
    snprintf(mpath, sizeof mpath, "%s/metrics.jsonl", z.dir);
    ck_assert_int_eq(fs_read_file(&mtext, NULL, mpath, 1 << 24, err), 0);
    ck_assert_msg(strstr(mtext, "\"event\":\"rollback\"") && strstr(mtext, "not finite"), "no rollback logged");
    free(mtext);
    cJSON *lines[4];
    int n = step_lines(lines, 4, z.dir);
    ck_assert_int_eq(n, 3);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(lines[0], "updated")));
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(lines[1], "updated")));
    ck_assert_int_eq((int)cJSON_GetObjectItem(lines[1], "zero_var_groups")->valuedouble, 1);
    ck_assert(cJSON_GetObjectItem(lines[1], "reward_mean")->valuedouble == 1.0);
    ck_assert(cJSON_GetObjectItem(lines[1], "pass_rate")->valuedouble == 0.0); /* the tests still fail */
    for (int i = 0; i < n; i++)
        cJSON_Delete(lines[i]);
    free(w1);
    fs_remove_tree(g_tmp, err);
}
END_TEST

/* With dynamic sampling on, groups still without variance after the
 * resampling budget are left out of the batch (DAPO's filter): with KL on
 * and the policy already away from the reference, such a step would
 * otherwise move the weights toward the reference. */
START_TEST(test_dynamic_sampling_filters_zero_variance)
{
    char err[RL_ERR_MAX];
    zv_run z;
    grpo_trainer *t = zv_open(&z, 0.05, 1, err);
    hook_ctx *h = &z.h;
    float *w1 = z.w1;
    ck_assert_ptr_nonnull(grpo_reference(t));
    size_t np = grpo_model(t)->n_params;
    ck_assert(memcmp(w1, grpo_reference(t)->params, np * sizeof *w1) != 0); /* away from the reference */
    h->constant = 1;
    ck_assert_msg(grpo_train(t, 2, err) == 0, "%s", err);
    ck_assert_msg(memcmp(w1, grpo_model(t)->params, np * sizeof *w1) == 0, "a filtered step changed the weights");
    grpo_close(t);
    cJSON *lines[4];
    int n = step_lines(lines, 4, z.dir);
    ck_assert_int_eq(n, 2);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(lines[0], "updated")));
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(lines[1], "updated")));
    ck_assert_int_eq((int)cJSON_GetObjectItem(lines[1], "resampled_groups")->valuedouble, 1);
    ck_assert_int_eq((int)cJSON_GetObjectItem(lines[1], "filtered_records")->valuedouble, 3);
    ck_assert_int_eq((int)cJSON_GetObjectItem(lines[1], "trained_tokens")->valuedouble, 0);
    for (int i = 0; i < n; i++)
        cJSON_Delete(lines[i]);
    free(w1);
    fs_remove_tree(g_tmp, err);
}
END_TEST

/* ---- data-parallel training (grpo/grpo_dp) ------------------------------------------------ */

/* The run both the one-process and the two-rank runs make: two steps of
 * two groups of three episodes (tasks_per_step 2, so each rank runs one
 * group), checkpoints every step. */
static void dp_config(grpo_config *c, const char *tok_path, int vocab, const char *out)
{
    run_config(c, tok_path, vocab, out);
    c->steps = 2;
    c->tasks_per_step = 2;
    c->micro_batch_tokens = 2048; /* several micro-batches: the ranks split them */
    c->optim.lr = 1e-3f;
    /* Adam divides by sqrt(v) + eps: with the default eps a parameter whose
     * gradient is near 0 moves by about lr whatever its sign, so the last
     * bits of a sum taken in another order could move it by lr; this eps
     * keeps such parameters' steps proportional to their gradient */
    c->optim.eps = 1e-4f;
}

/* The keys of a run's records.jsonl; asserts every one is there once. */
static int record_keys(char keys[][200], int max, const char *run)
{
    char path[256], *text, err[RL_ERR_MAX];
    snprintf(path, sizeof path, "%s/records.jsonl", run);
    ck_assert_msg(fs_read_file(&text, NULL, path, 1 << 28, err) == 0, "%s", err);
    int n = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        cJSON *o = cJSON_Parse(line);
        ck_assert_ptr_nonnull(o);
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "key");
        ck_assert(cJSON_IsString(k));
        ck_assert_int_lt(n, max);
        for (int i = 0; i < n; i++)
            ck_assert_msg(strcmp(keys[i], k->valuestring) != 0, "%s: record %s twice", path, k->valuestring);
        snprintf(keys[n++], 200, "%s", k->valuestring);
        cJSON_Delete(o);
    }
    free(text);
    return n;
}

/* One rank of the two-rank run: started by test_dp_two_ranks through
 * mpirun (RL_DP_TEST_DIR names its directory); does nothing otherwise. */
START_TEST(test_dp_worker)
{
    const char *dir = getenv("RL_DP_TEST_DIR");
    if (!dir)
        return;
    char err[RL_ERR_MAX], tok_path[128], out[128];
    snprintf(g_tmp, sizeof g_tmp, "%s", dir);
    snprintf(tok_path, sizeof tok_path, "%s/tok.json", dir);
    snprintf(out, sizeof out, "%s/two", dir);
    ck_assert_msg(dp_init(1, err) == 0, "%s", err);
    tok_t *tok;
    ck_assert_msg(tok_load(&tok, tok_path, err) == 0, "%s", err);
    int vocab = tok_vocab_size(tok);
    tok_free(tok);
    grpo_config c;
    dp_config(&c, tok_path, vocab, out);
    hook_ctx h = {0, 0, 0};
    grpo_opts hooks = {.reward = parity_reward, .user = &h};
    grpo_trainer *t;
    ck_assert_msg(grpo_open(&t, &c, NULL, &hooks, err) == 0, "%s", err);
    ck_assert_msg(grpo_train(t, 0, err) == 0, "%s", err);
    grpo_close(t);
    dp_finalize();
}
END_TEST

/* Two ranks under mpirun against one process, same config and global
 * batch: the same episodes (records.jsonl: every key once, the same keys)
 * and, after two steps, the same weights within float tolerance. */
START_TEST(test_dp_two_ranks)
{
    if (!dp_available() || system("command -v mpirun >/dev/null 2>&1") != 0) {
        fprintf(stderr, "grpo_dp: skipped: this build has no MPI (install openmpi-bin and libopenmpi-dev)\n");
        return;
    }
    char err[RL_ERR_MAX], tok_path[128], one[128], two[128], cmd[1024], path[256];
    make_tmp();
    tok_t *tok = tiny_tokenizer(tok_path, sizeof tok_path);
    int vocab = tok_vocab_size(tok);
    tok_free(tok);
    snprintf(one, sizeof one, "%s/one", g_tmp);
    snprintf(two, sizeof two, "%s/two", g_tmp);

    /* one process */
    grpo_config c;
    dp_config(&c, tok_path, vocab, one);
    hook_ctx h = {0, 0, 0};
    grpo_opts hooks = {.reward = parity_reward, .user = &h};
    grpo_trainer *t;
    ck_assert_msg(grpo_open(&t, &c, NULL, &hooks, err) == 0, "%s", err);
    size_t np = grpo_model(t)->n_params;
    float *w0 = malloc(np * sizeof *w0), *w1 = malloc(np * sizeof *w1);
    memcpy(w0, grpo_model(t)->params, np * sizeof *w0);
    ck_assert_msg(grpo_train(t, 0, err) == 0, "%s", err);
    memcpy(w1, grpo_model(t)->params, np * sizeof *w1);
    model_config mc = grpo_model(t)->cfg;
    grpo_close(t);

    /* two ranks: this program's worker case under mpirun (root needs the
     * two OMPI_ALLOW variables). Under the sanitizers the ranks run without
     * leak detection: OpenMPI's components (unloaded at finalize, so no
     * suppression can name them) leave about 120 KB allocated; the
     * one-process run above keeps leak detection for the trainer's code. */
    const char *bin = getenv("RL_BIN") ? getenv("RL_BIN") : "bin";
    snprintf(cmd, sizeof cmd,
             "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader OMPI_MCA_mpi_yield_when_idle=1 "
             "ASAN_OPTIONS=detect_leaks=0 RL_DP_TEST_DIR=%s CK_RUN_SUITE=grpo_dp CK_RUN_CASE=worker CK_FORK=no "
             "timeout 150 mpirun -n 2 --oversubscribe %s/check_all > %s/mpirun.log 2>&1",
             g_tmp, bin, g_tmp);
    int st = system(cmd);
    snprintf(path, sizeof path, "%s/mpirun.log", g_tmp);
    char *log = NULL;
    fs_read_file(&log, NULL, path, 1 << 20, err);
    size_t loglen = log ? strlen(log) : 0; /* the tail: Check caps a message's length */
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "mpirun -n 2 failed (status %d): ...%s", st,
                  log ? log + (loglen > 1500 ? loglen - 1500 : 0) : "");
    free(log);

    /* the same weights */
    model *m2;
    ck_assert_int_eq(model_new(&m2, &mc, NULL, err), 0);
    snprintf(path, sizeof path, "%s/ckpt/step-00000002/model.safetensors", two);
    ck_assert_msg(grpo_load_weights(m2, path, err) == 0, "%s", err);
    double dmax = 0, moved = 0;
    for (size_t i = 0; i < np; i++) {
        double d = fabs((double)m2->params[i] - w1[i]), mv = fabs((double)w1[i] - w0[i]);
        dmax = d > dmax ? d : dmax;
        moved = mv > moved ? mv : moved;
    }
    fprintf(stderr, "grpo_dp: 2 ranks vs 1 process after 2 steps: largest weight difference %.3g (weights moved up to %.3g)\n",
            dmax, moved);
    ck_assert_msg(moved > 1e-5, "the run did not train (largest change %g)", moved);
    ck_assert_msg(dmax < 1e-5, "2 ranks end %g away from 1 process", dmax);
    model_free(m2);

    /* rank 0 alone wrote the metrics: one line per step */
    cJSON *lines[8];
    int nl = step_lines(lines, 8, two);
    ck_assert_int_eq(nl, 2);
    for (int i = 0; i < nl; i++)
        cJSON_Delete(lines[i]);

    /* the same episodes, each once */
    static char k1[64][200], k2[64][200];
    int n1 = record_keys(k1, 64, one), n2 = record_keys(k2, 64, two);
    ck_assert_int_ge(n1, 12);
    ck_assert_int_eq(n1, n2);
    for (int i = 0; i < n1; i++) {
        int found = 0;
        for (int j = 0; j < n2 && !found; j++)
            found = !strcmp(k1[i], k2[j]);
        ck_assert_msg(found, "record %s of the one-process run is missing at 2 ranks", k1[i]);
    }
    free(w0);
    free(w1);
    fs_remove_tree(g_tmp, err);
}
END_TEST

/* Data-parallel training refuses the async modes: the smoke config
 * (compare mode) at two ranks stops with one line and writes nothing. */
START_TEST(test_dp_refuses_async)
{
    if (!dp_available() || system("command -v mpirun >/dev/null 2>&1") != 0) {
        fprintf(stderr, "grpo_dp: skipped: this build has no MPI (install openmpi-bin and libopenmpi-dev)\n");
        return;
    }
    char err[RL_ERR_MAX], cmd[1024], path[256], *out = NULL;
    make_tmp();
    const char *bin = getenv("RL_BIN") ? getenv("RL_BIN") : "bin";
    snprintf(cmd, sizeof cmd,
             "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1 "
             "timeout 60 mpirun -n 2 --oversubscribe %s/grpo train --config configs/grpo-smoke.json --out %s/run "
             "> %s/log 2>&1",
             bin, g_tmp, g_tmp);
    int st = system(cmd);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d", st);
    snprintf(path, sizeof path, "%s/log", g_tmp);
    ck_assert_msg(fs_read_file(&out, NULL, path, 1 << 20, err) == 0, "%s", err);
    ck_assert_msg(strstr(out, "rollout.mode: data-parallel training (2 ranks) runs the \"sync\" mode only"), "%s",
                  out);
    free(out);
    snprintf(path, sizeof path, "%s/run", g_tmp);
    ck_assert_int_ne(access(path, F_OK), 0);
    fs_remove_tree(g_tmp, err);
}
END_TEST

Suite *grpo_dp_suite(void)
{
    Suite *s = suite_create("grpo_dp");
    TCase *tc = tcase_create("two_ranks");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_dp_refuses_async);
    tcase_add_test(tc, test_dp_two_ranks);
    suite_add_tcase(s, tc);
    TCase *w = tcase_create("worker");
    tcase_set_timeout(w, 200);
    tcase_add_test(w, test_dp_worker);
    suite_add_tcase(s, w);
    return s;
}

/* A GRPO step starts from a Hugging Face directory ("init" names it):
 * a Qwen2-shaped model (q/k/v biases, untied head, head_dim 24 with
 * d_model 32) on the built-in tokenizer's vocabulary. The step changes
 * the biases and the head, and the checkpoint keeps the config and names
 * the directory's tokenizer.json. */
START_TEST(test_grpo_step_from_hf_dir)
{
    char err[RL_ERR_MAX], tok_path[128], hf[160], run[160];
    make_tmp();
    tok_t *tok = tiny_tokenizer(tok_path, sizeof tok_path);
    int vocab = tok_vocab_size(tok);
    tok_free(tok);
    model_config mc;
    tiny_model_config(&mc, vocab);
    mc.qk_norm = 0;
    mc.qkv_bias = 1;
    mc.untied = 1;
    mc.head_dim = 24;
    model *src;
    ck_assert_int_eq(model_new(&src, &mc, NULL, err), 0);
    model_random_init(src, 4);
    for (int i = 0; i < src->n_tensors; i++) /* nonzero biases */
        if (src->tensors[i].is_bias)
            for (size_t j = 0; j < src->tensors[i].numel; j++)
                src->params[src->tensors[i].offset + j] = 0.01f * ((float)(j % 7) - 3.0f);
    snprintf(hf, sizeof hf, "%s/hf", g_tmp);
    ck_assert_msg(model_save_hf(src, hf, 0, err) == 0, "%s", err);
    char tj[200];
    snprintf(tj, sizeof tj, "%s/tokenizer.json", hf);
    ck_assert_int_eq(fs_write_atomic(tj, "{}", 2, err), 0);
    snprintf(run, sizeof run, "%s/run", g_tmp);
    grpo_config c;
    run_config(&c, tok_path, vocab, run);
    snprintf(c.init, sizeof c.init, "%s", hf);
    c.steps = 1;
    hook_ctx h = {0, 0, 0};
    grpo_opts hooks = {.reward = parity_reward, .user = &h};
    grpo_trainer *t;
    ck_assert_msg(grpo_open(&t, &c, NULL, &hooks, err) == 0, "%s", err);
    const model *m = grpo_model(t);
    ck_assert_int_eq(memcmp(m->params, src->params, src->n_params * sizeof(float)), 0);
    ck_assert_msg(grpo_train(t, 0, err) == 0, "%s", err);
    ck_assert_int_eq(grpo_step_count(t), 1);
    int moved_bias = 0, moved_head = 0;
    for (int i = 0; i < m->n_tensors; i++) {
        const model_tensor *tt = &m->tensors[i];
        int moved = memcmp(m->params + tt->offset, src->params + tt->offset, tt->numel * sizeof(float)) != 0;
        moved_bias |= tt->is_bias && moved;
        moved_head |= !strcmp(tt->name, "lm_head.weight") && moved;
    }
    ck_assert_msg(moved_bias && moved_head, "the step left the biases (%d) or the head (%d) unchanged", moved_bias,
                  moved_head);
    grpo_close(t);
    char ck[256];
    snprintf(ck, sizeof ck, "%s/ckpt/step-00000001/model.safetensors", run);
    model *back;
    model_meta meta;
    ck_assert_msg(model_load(&back, &meta, ck, NULL, err) == 0, "%s", err);
    ck_assert_int_eq(memcmp(&back->cfg, &src->cfg, sizeof back->cfg), 0);
    ck_assert_str_eq(meta.hf_tokenizer, tj); /* export-hf finds it there */
    model_free(back);
    model_free(src);
    fs_remove_tree(g_tmp, err);
}
END_TEST

Suite *grpo_suite(void)
{
    Suite *s = suite_create("grpo");
    TCase *tc = tcase_create("units");
    tcase_add_test(tc, test_advantage_examples);
    tcase_add_test(tc, test_sample_keep_one_sequence);
    tcase_add_test(tc, test_sample_drop_per_turn);
    tcase_add_test(tc, test_sample_bad_records);
    tcase_add_test(tc, test_config_strict);
    tcase_add_test(tc, test_config_extends);
    tcase_add_test(tc, test_balanced_draw);
    tcase_add_test(tc, test_compare_by_task);
    tcase_add_test(tc, test_warnings);
    tcase_add_test(tc, test_config_integrity);
    tcase_add_test(tc, test_config_template);
    tcase_add_test(tc, test_curves_svg);
    tcase_add_test(tc, test_traj_edit_counts);
    tcase_add_test(tc, test_traj_fix_identity);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_model_policy_borrowed);
    tcase_add_test(tc, test_train_cli);
    suite_add_tcase(s, tc);
    TCase *runs = tcase_create("runs");
    tcase_set_timeout(runs, 240);
    tcase_add_test(runs, test_grpo_three_steps_and_resume);
    tcase_add_test(runs, test_zero_variance_step_changes_nothing);
    tcase_add_test(runs, test_dynamic_sampling_filters_zero_variance);
    tcase_add_test(runs, test_grpo_step_from_hf_dir);
    suite_add_tcase(s, runs);
    return s;
}
