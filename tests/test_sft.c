/* test_sft.c - supervised fine-tuning: a tiny model on a tiny data set
 * lowers its loss, deterministically; config validation; the `grpo sft`
 * command's exit codes and one-line errors. */
#include "grpo/sft.h"
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
#include <sys/wait.h>
#include <unistd.h>

static char dir[64], tokpath[128], data[128], cfgpath[128];

/* One keep-mode record of a scripted policy: a question and its answer. */
static char *record(int i)
{
    char user[64], gen[128], ctx[256];
    snprintf(user, sizeof user, "what is %d plus %d?", i, i);
    snprintf(gen, sizeof gen, "<think>\nadd them\n</think>\n\nthe answer is %d", 2 * i);
    int a = snprintf(ctx, sizeof ctx, "<|im_start|>user\n");
    int b = snprintf(ctx + a, sizeof ctx - (size_t)a, "%s", user);
    int c = snprintf(ctx + a + b, sizeof ctx - (size_t)(a + b), "<|im_end|>\n<|im_start|>assistant\n");
    cJSON *r = cJSON_CreateObject();
    char key[64];
    snprintf(key, sizeof key, "add%d#cfg=1#seed=1", i);
    cJSON_AddStringToObject(r, "key", key);
    cJSON_AddStringToObject(r, "task", "add");
    cJSON *cf = cJSON_AddObjectToObject(r, "config");
    cJSON_AddStringToObject(cf, "history", "keep");
    cJSON_AddNumberToObject(r, "reward", 1);
    cJSON *t = cJSON_CreateObject();
    cJSON_AddStringToObject(cJSON_AddObjectToObject(t, "context"), "text", ctx);
    cJSON_AddStringToObject(t, "generated", gen);
    double segs[3][2] = {{0, a}, {a, b}, {a + b, c}};
    const char *org[3] = {"template", "user", "template"};
    cJSON *sa = cJSON_AddArrayToObject(t, "segments");
    for (int k = 0; k < 3; k++) {
        cJSON *s = cJSON_CreateDoubleArray(segs[k], 2);
        cJSON_AddItemToArray(s, cJSON_CreateString(org[k]));
        cJSON_AddItemToArray(sa, s);
    }
    cJSON_AddItemToArray(cJSON_AddArrayToObject(r, "turns"), t);
    char *out = cJSON_PrintUnformatted(r);
    cJSON_Delete(r);
    return out;
}

static void write_file(const char *path, const char *text)
{
    char err[RL_ERR_MAX];
    ck_assert_int_eq(fs_write_atomic(path, text, strlen(text), err), 0);
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/rl-sft-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(tokpath, sizeof tokpath, "%s/tok.json", dir);
    snprintf(data, sizeof data, "%s/data.jsonl", dir);
    snprintf(cfgpath, sizeof cfgpath, "%s/sft.json", dir);
    static const char text[] = "<|im_start|>user\nwhat is 1 plus 1?<|im_end|>\n<|im_start|>assistant\n<think>\n"
                               "add them\n</think>\n\nthe answer is 2";
    tok_train_opts o = tok_train_opts_default();
    o.vocab_size = 300;
    char err[RL_ERR_MAX];
    tok_t *tok;
    ck_assert_int_eq(tok_train(&tok, text, sizeof text - 1, &o, err), 0);
    ck_assert_int_eq(tok_save(tok, tokpath, err), 0);
    tok_free(tok);
    for (int i = 1; i <= 6; i++) {
        char *r = record(i);
        ck_assert_int_eq(fs_append_record(data, r, strlen(r), err), 0);
        free(r);
    }
    char cfg[1024];
    snprintf(cfg, sizeof cfg,
             "{\"model\": {\"d_model\": 32, \"n_layer\": 2, \"n_head\": 2, \"n_kv_head\": 1, \"d_ff\": 64, "
             "\"max_seq\": 128},\n \"tokenizer\": \"%s\", \"steps\": 40, \"batch\": 4, \"lr\": 0.003, "
             "\"warmup\": 4, \"seed\": 9, \"threads\": 1, \"micro_tokens\": 64, \"eval_data\": [\"%s\"], "
             "\"eval_every\": 20, \"min_reward\": 1}\n",
             tokpath, data);
    write_file(cfgpath, cfg);
}

static void teardown(void) { fs_remove_tree(dir, NULL); }

static char *slurp(const char *path, size_t *len)
{
    char *s, err[RL_ERR_MAX];
    ck_assert_msg(fs_read_file(&s, len, path, 1 << 26, err) == 0, "%s", err);
    return s;
}

/* The log callback of the in-process runs: counts lines, checks each is
 * one line. */
static void count_log(void *ctx, int level, const char *msg)
{
    (void)level;
    ck_assert_ptr_null(strchr(msg, '\n'));
    (*(int *)ctx)++;
}

START_TEST(test_sft_lowers_loss)
{
    sft_config c;
    sft_config_default(&c);
    char err[RL_ERR_MAX];
    ck_assert_msg(sft_config_load(&c, cfgpath, err) == 0, "%s", err);
    const char *files[1] = {data};
    char out1[160], out2[160], metrics[160];
    snprintf(out1, sizeof out1, "%s/a.safetensors", dir);
    snprintf(out2, sizeof out2, "%s/b.safetensors", dir);
    snprintf(metrics, sizeof metrics, "%s/m.jsonl", dir);
    int logged = 0;
    sft_io io = {.log = count_log, .log_ctx = &logged, .metrics = metrics};
    sft_result r1, r2;
    ck_assert_msg(sft_run(&r1, &c, files, 1, out1, &io, err) == 0, "%s", err);
    ck_assert_int_gt(logged, 2); /* data counts, the plan, steps, the summary: through the callback */
    ck_assert_int_eq(r1.steps, 40);
    ck_assert_uint_eq(r1.train_samples, 6);
    ck_assert_msg(r1.last_loss < 0.5 * r1.first_loss, "loss %g -> %g", r1.first_loss, r1.last_loss);
    ck_assert(isfinite(r1.eval_loss) && r1.eval_loss < 0.5 * r1.first_loss);
    ck_assert(r1.tokens_per_s > 0);
    /* one metrics line per step */
    size_t len;
    char *m = slurp(metrics, &len);
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += m[i] == '\n';
    ck_assert_uint_eq(lines, 40);
    ck_assert_ptr_nonnull(strstr(m, "\"eval_loss\""));
    free(m);
    /* the checkpoint names its tokenizer and the step */
    model *mod;
    model_meta meta;
    ck_assert_int_eq(model_load(&mod, &meta, out1, NULL, err), 0);
    ck_assert_str_eq(meta.tokenizer, tokpath);
    ck_assert_int_eq(meta.step, 40);
    char hash[17];
    ck_assert_int_eq(model_file_hash(hash, tokpath, err), 0);
    ck_assert_str_eq(meta.tokenizer_hash, hash);
    model_free(mod);
    /* deterministic given the seed */
    io.metrics = NULL;
    ck_assert_int_eq(sft_run(&r2, &c, files, 1, out2, &io, err), 0);
    size_t l1, l2;
    char *b1 = slurp(out1, &l1), *b2 = slurp(out2, &l2);
    ck_assert_uint_eq(l1, l2);
    ck_assert_msg(memcmp(b1, b2, l1) == 0, "two runs with one seed wrote different checkpoints");
    free(b1);
    free(b2);
    /* continuing from the checkpoint ("init") starts where it ended */
    sft_config c2;
    sft_config_default(&c2);
    char cfg[512];
    snprintf(cfg, sizeof cfg, "{\"init\": \"%s\", \"steps\": 2, \"batch\": 4, \"threads\": 1}", out1);
    ck_assert_msg(sft_config_parse(&c2, cfg, strlen(cfg), "init.json", err) == 0, "%s", err);
    sft_result r3;
    ck_assert_msg(sft_run(&r3, &c2, files, 1, out2, &io, err) == 0, "%s", err);
    ck_assert_msg(r3.first_loss < 0.5 * r1.first_loss, "init: loss %g", r3.first_loss);
    sft_config_dispose(&c2);
    sft_config_dispose(&c);
}
END_TEST

/* Targets of one step of 4 samples, from its metrics line: all tokens but
 * each sample's first with "loss_on": "all", far fewer by default. */
static void step_targets(const char *loss_on, double *tokens, double *targets)
{
    char err[RL_ERR_MAX], cfg[1024], out[160], metrics[160];
    snprintf(cfg, sizeof cfg,
             "{\"model\": {\"d_model\": 32, \"n_layer\": 1, \"n_head\": 2, \"n_kv_head\": 1, \"d_ff\": 64, "
             "\"max_seq\": 128}, \"tokenizer\": \"%s\", \"steps\": 1, \"batch\": 4, \"threads\": 1, "
             "\"loss_on\": \"%s\"}",
             tokpath, loss_on);
    snprintf(out, sizeof out, "%s/lm.safetensors", dir);
    snprintf(metrics, sizeof metrics, "%s/lm-%s.jsonl", dir, loss_on);
    sft_config c;
    sft_config_default(&c);
    ck_assert_msg(sft_config_parse(&c, cfg, strlen(cfg), "lm.json", err) == 0, "%s", err);
    const char *files[1] = {data};
    sft_io io = {.metrics = metrics};
    sft_result r;
    ck_assert_msg(sft_run(&r, &c, files, 1, out, &io, err) == 0, "%s", err);
    ck_assert(isfinite(r.first_loss));
    size_t len;
    char *m = slurp(metrics, &len);
    cJSON *o = cJSON_Parse(m);
    ck_assert_ptr_nonnull(o);
    *tokens = cJSON_GetNumberValue(cJSON_GetObjectItem(o, "tokens"));
    *targets = cJSON_GetNumberValue(cJSON_GetObjectItem(o, "policy_tokens"));
    cJSON_Delete(o);
    free(m);
    sft_config_dispose(&c);
}

START_TEST(test_loss_on_all)
{
    double tok_all, tgt_all, tok_pol, tgt_pol;
    step_targets("all", &tok_all, &tgt_all);
    step_targets("policy", &tok_pol, &tgt_pol);
    ck_assert_double_eq(tok_all, tok_pol); /* the same samples */
    ck_assert_double_eq(tgt_all, tok_all - 4);
    ck_assert(tgt_pol > 0 && tgt_pol < tgt_all / 2);
}
END_TEST

/* One metrics line: its loss and lr. */
static void metric_at(const char *line, double *loss, double *lr)
{
    cJSON *o = cJSON_Parse(line);
    ck_assert_ptr_nonnull(o);
    *loss = cJSON_GetNumberValue(cJSON_GetObjectItem(o, "loss"));
    *lr = cJSON_GetNumberValue(cJSON_GetObjectItem(o, "lr"));
    cJSON_Delete(o);
}

/* "stop_after" runs the first steps of the longer schedule: the same
 * losses and learning rates as the full run, then it stops. */
START_TEST(test_stop_after)
{
    char err[RL_ERR_MAX], cfg[1024], out[160], mfull[160], mstop[160];
    snprintf(out, sizeof out, "%s/stop.safetensors", dir);
    snprintf(mfull, sizeof mfull, "%s/full.jsonl", dir);
    snprintf(mstop, sizeof mstop, "%s/stop.jsonl", dir);
    const char *files[1] = {data};
    for (int stop = 0; stop <= 1; stop++) {
        snprintf(cfg, sizeof cfg,
                 "{\"model\": {\"d_model\": 32, \"n_layer\": 1, \"n_head\": 2, \"n_kv_head\": 1, \"d_ff\": 64, "
                 "\"max_seq\": 128}, \"tokenizer\": \"%s\", \"steps\": 8, \"warmup\": 0, \"lr\": 0.003, "
                 "\"batch\": 2, \"threads\": 1, \"seed\": 3%s}",
                 tokpath, stop ? ", \"stop_after\": 3" : "");
        sft_config c;
        sft_config_default(&c);
        ck_assert_msg(sft_config_parse(&c, cfg, strlen(cfg), "stop.json", err) == 0, "%s", err);
        sft_io io = {.metrics = stop ? mstop : mfull};
        sft_result r;
        ck_assert_msg(sft_run(&r, &c, files, 1, out, &io, err) == 0, "%s", err);
        ck_assert_int_eq(r.steps, stop ? 3 : 8);
        sft_config_dispose(&c);
    }
    size_t lf, ls;
    char *full = slurp(mfull, &lf), *part = slurp(mstop, &ls);
    char *f = full, *p = part;
    int lines = 0;
    while (*p) {
        double loss_f, lr_f, loss_p, lr_p;
        metric_at(f, &loss_f, &lr_f);
        metric_at(p, &loss_p, &lr_p);
        ck_assert_double_eq_tol(loss_p, loss_f, 1e-9);
        ck_assert_double_eq_tol(lr_p, lr_f, 1e-12);
        ck_assert(lr_p > 0.003 * 0.5); /* still early in the cosine of 8 steps */
        f = strchr(f, '\n') + 1;
        p = strchr(p, '\n') + 1;
        lines++;
    }
    ck_assert_int_eq(lines, 3);
    free(full);
    free(part);
    model *mod;
    model_meta meta;
    ck_assert_int_eq(model_load(&mod, &meta, out, NULL, err), 0);
    ck_assert_int_eq(meta.step, 3);
    model_free(mod);
}
END_TEST

static int parse(const char *json, char *err)
{
    sft_config c;
    sft_config_default(&c);
    int rc = sft_config_parse(&c, json, strlen(json), "cfg.json", err);
    sft_config_dispose(&c);
    return rc;
}

START_TEST(test_config_errors)
{
    char err[RL_ERR_MAX];
    ck_assert_int_eq(parse("{\"tokenizer\": \"t.json\", \"steps\": 3}", err), 0);
    ck_assert_int_eq(parse("{\"tokenizer\": \"t.json\", \"steps\": 3, \"learning_rate\": 1}", err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "unknown field \"learning_rate\""));
    ck_assert_int_eq(parse("{\"tokenizer\": \"t.json\", \"steps\": 3, \"model\": {\"layers\": 2}}", err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "\"layers\""));
    ck_assert_int_eq(parse("{\"tokenizer\": \"t.json\", \"steps\": \"3\"}", err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "\"steps\""));
    ck_assert_int_eq(parse("{\"tokenizer\": \"t.json\", \"steps\": 3, \"batch\": 0}", err), RL_EINVAL);
    ck_assert_int_eq(parse("{\"tokenizer\": \"t.json\", \"steps\": 2.5}", err), RL_EINVAL);
    ck_assert_int_eq(parse("{\"steps\": 3}", err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "tokenizer"));
    ck_assert_int_eq(parse("{\"tokenizer\": \"t.json\"}", err), 0); /* epochs default to 1 */
    ck_assert_int_eq(parse("{\"tokenizer\": \"t.json\", \"model\": {\"head_dim\": 16, \"untied\": 1, \"qkv_bias\": 1, "
                           "\"qk_norm\": 0}}", err), 0);
    ck_assert_int_eq(parse("{\"tokenizer\": \"t.json\", \"epochs\": 0}", err), RL_EINVAL);
    ck_assert_int_eq(parse("{\"init\": \"a\", \"model\": {}, \"steps\": 1}", err), RL_EINVAL);
    ck_assert_int_eq(parse("{\"tokenizer\": \"t.json\", \"steps\": 1, \"steps\": 2}", err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "twice"));
    ck_assert_int_eq(parse("{\"tokenizer\": \"t.json\", \"loss_on\": \"tools\"}", err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "loss_on"));
    ck_assert_int_eq(parse("{\"tokenizer\": \"t.json\", \"loss_on\": \"all\"}", err), 0);
    ck_assert_int_eq(parse("[1, 2]", err), RL_EPARSE);
    ck_assert_int_eq(parse("{\"tokenizer\": \"t.json\", \"eval_data\": [1]}", err), RL_EINVAL);
    ck_assert_ptr_null(strchr(err, '\n'));
}
END_TEST

/* Runs a command; returns its exit status and its stderr (caller frees). */
static int run(const char *args, char **errout)
{
    const char *bin = getenv("RL_BIN") ? getenv("RL_BIN") : "bin";
    char cmd[2048], errf[160];
    snprintf(errf, sizeof errf, "%s/stderr.txt", dir);
    snprintf(cmd, sizeof cmd, "%s/grpo sft %s >/dev/null 2>%s", bin, args, errf);
    int st = system(cmd);
    size_t len;
    *errout = slurp(errf, &len);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

START_TEST(test_cli)
{
    char args[1024], *e;
    /* usage */
    ck_assert_int_eq(run("--config x.json", &e), 2);
    ck_assert_uint_eq(count_lines(e), 1);
    free(e);
    ck_assert_int_eq(run("--bogus 1", &e), 2);
    free(e);
    /* a bad config file: one line naming it, exit 2 */
    char bad[160];
    snprintf(bad, sizeof bad, "%s/bad.json", dir);
    write_file(bad, "{\"tokenizer\": \"t.json\", \"steps\": 3, \"wd\": 0.1}");
    snprintf(args, sizeof args, "--data %s --config %s --out %s/o.safetensors", data, bad, dir);
    ck_assert_int_eq(run(args, &e), 2);
    ck_assert_uint_eq(count_lines(e), 1);
    ck_assert_ptr_nonnull(strstr(e, "bad.json"));
    ck_assert_ptr_nonnull(strstr(e, "\"wd\""));
    free(e);
    /* a bad data file: one line naming file and line, exit 1 */
    char junk[160];
    snprintf(junk, sizeof junk, "%s/junk.jsonl", dir);
    char *good = record(1);
    buf_t b;
    buf_init(&b, 0);
    buf_printf(&b, "%s\nnot json at all\n", good);
    write_file(junk, buf_str(&b));
    buf_dispose(&b);
    free(good);
    snprintf(args, sizeof args, "--data %s --config %s --out %s/o.safetensors --quiet", junk, cfgpath, dir);
    ck_assert_int_eq(run(args, &e), 1);
    ck_assert_uint_eq(count_lines(e), 1);
    ck_assert_msg(strstr(e, "junk.jsonl:2:") != NULL, "%s", e);
    free(e);
    /* a missing data file */
    snprintf(args, sizeof args, "--data %s/none.jsonl --config %s --out %s/o.safetensors --quiet", dir, cfgpath, dir);
    ck_assert_int_eq(run(args, &e), 1);
    ck_assert_uint_eq(count_lines(e), 1);
    free(e);
    /* a good run: progress lines, a checkpoint */
    snprintf(args, sizeof args, "--data %s,%s --config %s --out %s/o.safetensors", data, data, cfgpath, dir);
    ck_assert_int_eq(run(args, &e), 0);
    ck_assert_ptr_nonnull(strstr(e, "step 40/40 loss"));
    ck_assert_ptr_nonnull(strstr(e, "tok/s"));
    ck_assert_ptr_nonnull(strstr(e, "eta"));
    ck_assert_ptr_nonnull(strstr(e, "12 samples"));
    free(e);
    char ck[160];
    snprintf(ck, sizeof ck, "%s/o.safetensors", dir);
    ck_assert_int_eq(access(ck, R_OK), 0);
}
END_TEST

/* Runs a shell command line; returns its exit status and its stdout and
 * stderr (caller frees both). */
static int sh(const char *cmdline, char **out, char **errout)
{
    char cmd[2048], of[160], ef[160];
    snprintf(of, sizeof of, "%s/stdout.txt", dir);
    snprintf(ef, sizeof ef, "%s/stderr.txt", dir);
    snprintf(cmd, sizeof cmd, "%s >%s 2>%s", cmdline, of, ef);
    int st = system(cmd);
    size_t len;
    *out = slurp(of, &len);
    *errout = slurp(ef, &len);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* grpo score on an oracle leapyear episode: its copied tokens (the path,
 * old_string, new_string) are told apart from the rest. */
START_TEST(test_score_cli)
{
    const char *bin = getenv("RL_BIN") ? getenv("RL_BIN") : "bin";
    char cmd[1024], cfg[512], ck[160], rec[160], *out, *e;
    snprintf(ck, sizeof ck, "%s/score.safetensors", dir);
    snprintf(rec, sizeof rec, "%s/oracle.jsonl", dir);
    snprintf(cfg, sizeof cfg, "%s/score.json", dir);
    write_file(cfg, "{\"model\": {\"d_model\": 32, \"n_layer\": 1, \"n_head\": 2, \"n_kv_head\": 1, \"d_ff\": 64,"
                    " \"max_seq\": 4096}, \"tokenizer\": \"models/tokenizer.json\", \"steps\": 1, \"batch\": 1,"
                    " \"threads\": 1}");
    snprintf(cmd, sizeof cmd, "%s/harness run --task leapyear --policy oracle --out %s", bin, rec);
    ck_assert_int_eq(sh(cmd, &out, &e), 0);
    free(out), free(e);
    snprintf(cmd, sizeof cmd, "%s/grpo sft --data %s --config %s --out %s --quiet", bin, rec, cfg, ck);
    ck_assert_int_eq(sh(cmd, &out, &e), 0);
    free(out), free(e);
    snprintf(cmd, sizeof cmd, "%s/grpo score --ckpt %s --data %s --show -100", bin, ck, rec);
    ck_assert_int_eq(sh(cmd, &out, &e), 0);
    ck_assert_msg(strstr(e, "score: 1 samples") != NULL, "%s", e);
    cJSON *o = cJSON_Parse(out); /* the first line: nothing scores below -100 */
    ck_assert_ptr_nonnull(o);
    double n = cJSON_GetNumberValue(cJSON_GetObjectItem(o, "policy_tokens"));
    double cn = cJSON_GetNumberValue(cJSON_GetObjectItem(o, "copy_tokens"));
    double lp = cJSON_GetNumberValue(cJSON_GetObjectItem(o, "logp_mean"));
    /* the path read repeats the listing, old_string ("400 ==") the file read */
    ck_assert_msg(cn >= 4 && cn < n / 4, "copy tokens %g of %g", cn, n);
    ck_assert(lp < 0 && isfinite(lp));
    cJSON_Delete(o);
    free(out), free(e);
    /* usage errors: 2; a missing file: 1, one line naming it */
    snprintf(cmd, sizeof cmd, "%s/grpo score --ckpt %s", bin, ck);
    ck_assert_int_eq(sh(cmd, &out, &e), 2);
    free(out), free(e);
    const char *bad_flags[][2] = {{"--show 2", "--show"},       {"--show x", "--show"},
                                  {"--max 0", "--max"},         {"--max 5x", "--max"},
                                  {"--threads -1", "--threads"}, {"--threads 99999", "--threads"}};
    for (size_t k = 0; k < sizeof bad_flags / sizeof *bad_flags; k++) {
        snprintf(cmd, sizeof cmd, "%s/grpo score --ckpt %s --data %s %s", bin, ck, rec, bad_flags[k][0]);
        ck_assert_int_eq(sh(cmd, &out, &e), 2);
        ck_assert_uint_eq(count_lines(e), 1);
        ck_assert_msg(strstr(e, bad_flags[k][1]) != NULL, "%s: %s", bad_flags[k][0], e);
        free(out), free(e);
    }
    snprintf(cmd, sizeof cmd, "%s/grpo score --ckpt %s --data %s/none.jsonl", bin, ck, dir);
    ck_assert_int_eq(sh(cmd, &out, &e), 1);
    ck_assert_uint_eq(count_lines(e), 1);
    ck_assert_ptr_nonnull(strstr(e, "none.jsonl"));
    free(out), free(e);
}
END_TEST

/* SFT from a checkpoint imported with `grpo import-hf`: a Llama-shaped
 * model (no q/k norm, untied head, head_dim 8 with d_model 32) written in
 * Hugging Face layout in bf16 with a tokenizer.json and
 * tokenizer_config.json beside it. The import names them in the
 * checkpoint, SFT lowers the loss and keeps config and names, and
 * export-hf writes them back out with the weights. */
START_TEST(test_sft_from_imported)
{
    char err[RL_ERR_MAX], hf[160], ck[160], out[160], back[160], cmd[1024], path[200];
    const char *bin = getenv("RL_BIN") ? getenv("RL_BIN") : "bin";
    tok_t *tok;
    ck_assert_int_eq(tok_load(&tok, tokpath, err), 0);
    model_config mc;
    model_config_default(&mc);
    mc.vocab = tok_vocab_size(tok);
    tok_free(tok);
    mc.d_model = 32;
    mc.n_layer = 2;
    mc.n_head = 2;
    mc.n_kv_head = 1;
    mc.d_ff = 64;
    mc.max_seq = 128;
    mc.qk_norm = 0;
    mc.untied = 1;
    mc.head_dim = 8;
    model *m;
    ck_assert_int_eq(model_new(&m, &mc, NULL, err), 0);
    model_random_init(m, 12);
    snprintf(hf, sizeof hf, "%s/hf", dir);
    ck_assert_msg(model_save_hf(m, hf, 1, err) == 0, "%s", err);
    model_free(m);
    snprintf(path, sizeof path, "%s/tokenizer.json", hf);
    write_file(path, "{\"model\": {\"type\": \"BPE\"}}");
    snprintf(path, sizeof path, "%s/tokenizer_config.json", hf);
    write_file(path, "{\"eos_token\": \"<|im_end|>\"}");
    snprintf(ck, sizeof ck, "%s/imported/base.safetensors", dir);
    snprintf(cmd, sizeof cmd, "%s/grpo import-hf %s --out %s --tokenizer %s 2>/dev/null", bin, hf, ck, tokpath);
    ck_assert_int_eq(system(cmd), 0);
    model_meta meta;
    ck_assert_int_eq(model_load(&m, &meta, ck, NULL, err), 0);
    snprintf(path, sizeof path, "%s/imported/tokenizer.json", dir);
    ck_assert_str_eq(meta.hf_tokenizer, path);
    ck_assert_str_eq(meta.tokenizer, tokpath);
    ck_assert_int_eq(access(path, R_OK), 0);
    model_free(m);

    char cfg[512];
    snprintf(cfg, sizeof cfg, "{\"init\": \"%s\", \"steps\": 6, \"batch\": 4, \"lr\": 0.003, \"warmup\": 1, "
             "\"threads\": 1}", ck);
    sft_config c;
    sft_config_default(&c);
    ck_assert_msg(sft_config_parse(&c, cfg, strlen(cfg), "hf.json", err) == 0, "%s", err);
    const char *files[1] = {data};
    snprintf(out, sizeof out, "%s/imported/sft.safetensors", dir);
    sft_io io = {0};
    sft_result r;
    ck_assert_msg(sft_run(&r, &c, files, 1, out, &io, err) == 0, "%s", err);
    ck_assert_int_eq(r.steps, 6);
    ck_assert_msg(r.last_loss < r.first_loss, "loss %g -> %g", r.first_loss, r.last_loss);
    sft_config_dispose(&c);
    ck_assert_int_eq(model_load(&m, &meta, out, NULL, err), 0);
    ck_assert(m->cfg.untied && !m->cfg.qk_norm && m->head_dim == 8);
    ck_assert_str_eq(meta.hf_tokenizer, path);

    snprintf(back, sizeof back, "%s/exported", dir);
    snprintf(cmd, sizeof cmd, "%s/grpo export-hf %s --out %s 2>/dev/null", bin, out, back);
    ck_assert_int_eq(system(cmd), 0);
    model *m2;
    ck_assert_msg(model_load_hf(&m2, back, NULL, err) == 0, "%s", err);
    ck_assert_int_eq(memcmp(m->params, m2->params, m->n_params * sizeof(float)), 0);
    snprintf(path, sizeof path, "%s/tokenizer_config.json", back);
    ck_assert_int_eq(access(path, R_OK), 0);
    model_free(m2);
    model_free(m);
    /* usage errors exit 2, a directory that is not a checkpoint 1 */
    snprintf(cmd, sizeof cmd, "%s/grpo export-hf %s --out %s --dtype f16 2>/dev/null", bin, out, back);
    ck_assert_int_eq(WEXITSTATUS(system(cmd)), 2);
    snprintf(cmd, sizeof cmd, "%s/grpo import-hf %s --out %s/x.safetensors 2>/dev/null", bin, dir, dir);
    ck_assert_int_eq(WEXITSTATUS(system(cmd)), 1);
}
END_TEST

Suite *sft_suite(void)
{
    Suite *s = suite_create("sft");
    TCase *tc = tcase_create("sft");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_sft_lowers_loss);
    tcase_add_test(tc, test_config_errors);
    tcase_add_test(tc, test_loss_on_all);
    tcase_add_test(tc, test_stop_after);
    tcase_add_test(tc, test_cli);
    tcase_add_test(tc, test_score_cli);
    tcase_add_test(tc, test_sft_from_imported);
    suite_add_tcase(s, tc);
    return s;
}
