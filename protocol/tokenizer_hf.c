/* tokenizer_hf.c - a Hugging Face tokenizer.json of the byte-level BPE
 * kind as a tok_t (see tokenizer.h and docs/tokenizers.md).
 *
 *   1. the pre-tokenizer patterns, each a hand-written scanner equal to the
 *      regular expression the file names (as JavaScript runs it: first
 *      matching alternative, backtracking)
 *   2. encoding: added tokens, NFC, pieces, BPE (tokenizer.c)
 *   3. loading and checking the JSON
 */
#include "protocol/tokenizer_int.h"
#include "protocol/unicode.h"

#include "common/buf.h"
#include "common/err.h"
#include "common/limits.h"
#include "common/vec.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PRE_QWEN2 = 1, PRE_LLAMA3 = 2, PRE_GPT2 = 3 };

/* The Split patterns recognized, exactly as tokenizer.json spells them. */
static const char PAT_QWEN2[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char PAT_LLAMA3[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char PAT_GPT2[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

/* ======================================================================
 * 1. Pre-tokenizer scanners
 * ====================================================================== */

/* Class of the character at j (its length in *k). */
static int cls_at(const unsigned char *s, size_t n, size_t j, size_t *k)
{
    if (s[j] < 0x80) {
        *k = 1;
        return uni_class(s[j]);
    }
    return uni_class(uni_decode(s + j, n - j, k));
}

/* End of the run of class c starting at j (at most max characters). */
static size_t run_end(const unsigned char *s, size_t n, size_t j, int c, size_t max)
{
    size_t k, cnt = 0;
    while (j < n && cnt < max && cls_at(s, n, j, &k) == c) {
        j += k;
        cnt++;
    }
    return j;
}

/* Length of a contraction after an apostrophe at p ('s 't 're 've 'm 'll
 * 'd), ASCII case folded when ci; 0 if none. */
static size_t contraction(const unsigned char *p, size_t n, int ci)
{
    if (!n)
        return 0;
    unsigned char a = p[0], b = n > 1 ? p[1] : 0;
    if (ci) {
        a = (unsigned char)(a >= 'A' && a <= 'Z' ? a + 32 : a);
        b = (unsigned char)(b >= 'A' && b <= 'Z' ? b + 32 : b);
    }
    if (a == 's' || a == 't' || a == 'm' || a == 'd')
        return 1;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))
        return 2;
    return 0;
}

/* \s+(?!\S) then \s+ over the whitespace run at i: the run without its last
 * character when a non-space follows and the run has two or more. */
static size_t space_run(const unsigned char *s, size_t n, size_t i, int newlines)
{
    size_t e = i, k, last = i, last_nl = (size_t)-1;
    while (e < n && cls_at(s, n, e, &k) == UNI_SPACE_C) {
        if (s[e] == '\r' || s[e] == '\n')
            last_nl = e;
        last = e;
        e += k;
    }
    if (newlines && last_nl != (size_t)-1) /* \s*[\r\n]+ */
        return last_nl + 1;
    if (e == n || last == i)
        return e;
    return last;
}

static size_t scan_qwen(const unsigned char *s, size_t n, size_t i, size_t digits)
{
    size_t k, k1;
    uint32_t c0 = uni_decode(s + i, n - i, &k);
    int cl = uni_class(c0);
    size_t m = c0 == '\'' ? contraction(s + i + 1, n - i - 1, 1) : 0;
    if (m)
        return i + 1 + m;
    if (cl == UNI_LETTER_C)
        return run_end(s, n, i, UNI_LETTER_C, SIZE_MAX);
    if (c0 != '\r' && c0 != '\n' && cl != UNI_NUMBER_C && i + k < n &&
        cls_at(s, n, i + k, &k1) == UNI_LETTER_C)
        return run_end(s, n, i + k, UNI_LETTER_C, SIZE_MAX);
    if (cl == UNI_NUMBER_C)
        return run_end(s, n, i, UNI_NUMBER_C, digits);
    size_t j = (size_t)-1;
    if (c0 == ' ' && i + 1 < n && cls_at(s, n, i + 1, &k1) == UNI_OTHER)
        j = run_end(s, n, i + 1, UNI_OTHER, SIZE_MAX);
    else if (cl == UNI_OTHER)
        j = run_end(s, n, i, UNI_OTHER, SIZE_MAX);
    if (j != (size_t)-1) {
        while (j < n && (s[j] == '\r' || s[j] == '\n'))
            j++;
        return j;
    }
    return space_run(s, n, i, 1);
}

static size_t scan_gpt2(const unsigned char *s, size_t n, size_t i)
{
    size_t k;
    uint32_t c0 = uni_decode(s + i, n - i, &k);
    int cl = uni_class(c0);
    size_t m = c0 == '\'' ? contraction(s + i + 1, n - i - 1, 0) : 0;
    if (m)
        return i + 1 + m;
    size_t j = i;
    if (c0 == ' ' && i + 1 < n) {
        int c1 = cls_at(s, n, i + 1, &k);
        if (c1 != UNI_SPACE_C) {
            j = i + 1;
            cl = c1;
        }
    }
    if (cl != UNI_SPACE_C)
        return run_end(s, n, j, cl, SIZE_MAX);
    return space_run(s, n, i, 0);
}

/* End of the piece at i (< n): at most RL_TOK_HF_PIECE_MAX bytes, cut at a
 * character boundary. */
static size_t hf_piece_next(int pre, const unsigned char *s, size_t n, size_t i)
{
    if (n - i > RL_TOK_HF_PIECE_MAX) {
        n = i + RL_TOK_HF_PIECE_MAX;
        while (n > i + 1 && (s[n] & 0xc0) == 0x80)
            n--;
    }
    switch (pre) {
    case PRE_QWEN2:
        return scan_qwen(s, n, i, 1);
    case PRE_LLAMA3:
        return scan_qwen(s, n, i, 3);
    default:
        return scan_gpt2(s, n, i);
    }
}

/* ======================================================================
 * 2. Encoding
 * ====================================================================== */

/* NFC of s[0, n) into *out (NULL when it is s unchanged). NFC works
 * segment by segment: a text may be cut before any ASCII character (a
 * starter that never composes with what precedes it), so only segments
 * holding a code point at or above U+0300 are normalized. */
static int nfc_section(char **out, size_t *olen, const unsigned char *s, size_t n)
{
    *out = NULL;
    if (uni_nfc_trivial((const char *)s, n))
        return 0;
    buf_t b;
    buf_init(&b, RL_TOK_TEXT_MAX);
    int rc = 0;
    for (size_t i = 0; i < n && !rc;) {
        size_t k = i; /* next lead byte of U+0300 or above */
        while (k < n && s[k] < 0xcc)
            k++;
        if (k == n) {
            rc = buf_append(&b, (const char *)s + i, n - i);
            break;
        }
        size_t st = k, e = k + 1; /* its segment: from an ASCII byte to the next */
        while (st > i && s[st] >= 0x80)
            st--;
        while (e < n && s[e] >= 0x80)
            e++;
        char *seg = NULL;
        size_t sl;
        rc = buf_append(&b, (const char *)s + i, st - i);
        if (!rc)
            rc = uni_nfc(&seg, &sl, (const char *)s + st, e - st, RL_TOK_TEXT_MAX);
        if (!rc)
            rc = buf_append(&b, seg, sl);
        free(seg);
        i = e;
    }
    if (rc) {
        buf_dispose(&b);
        return rc;
    }
    *out = buf_detach(&b, olen);
    return 0;
}

static int encode_section(const tok_t *t, piece_cache *cache, const unsigned char *s, size_t n,
                          tok_idvec *out)
{
    char *norm = NULL;
    size_t nl;
    int rc = t->nfc ? nfc_section(&norm, &nl, s, n) : 0;
    if (rc)
        return rc;
    if (norm) {
        s = (const unsigned char *)norm;
        n = nl;
    }
    for (size_t i = 0; i < n && !rc;) {
        size_t j = hf_piece_next(t->pretok, s, n, i);
        rc = tok_encode_piece(t, cache, s + i, j - i, out);
        i = j;
    }
    free(norm);
    return rc;
}

/* End of s[0, n) without its trailing whitespace. */
static size_t trim_end(const unsigned char *s, size_t n)
{
    size_t end = 0, k;
    for (size_t i = 0; i < n; i += k)
        if (cls_at(s, n, i, &k) != UNI_SPACE_C)
            end = i + k;
    return end;
}

int tok_hf_encode(const tok_t *t, piece_cache *cache, const unsigned char *s, size_t n,
                  tok_mode mode, tok_idvec *out)
{
    int rc = 0;
    size_t pos = 0, k;
    while (pos < n && !rc) {
        long which = -1;
        size_t at = mode == TOK_SPECIAL_ALLOW ? tok_specset_next(&t->spec, s, n, pos, &which) : n;
        size_t end = at;
        if (which >= 0 && (t->spec_strip[which] & 1))
            end = pos + trim_end(s + pos, at - pos);
        rc = encode_section(t, cache, s + pos, end - pos, out);
        if (!rc && which >= 0) {
            rc = tok_idvec_push(out, &t->spec_id[which], 1);
            at += t->spec.len[which];
            if (t->spec_strip[which] & 2)
                while (at < n && cls_at(s, n, at, &k) == UNI_SPACE_C)
                    at += k;
        }
        pos = at;
    }
    return rc;
}

/* ======================================================================
 * 3. Loading
 * ====================================================================== */

/* The GPT-2 byte-level alphabet: code point -> byte (-1 if none). */
static void byte_alphabet(int inv[324])
{
    for (int i = 0; i < 324; i++)
        inv[i] = -1;
    int extra = 0;
    for (int b = 0; b < 256; b++) {
        int keep = (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
        inv[keep ? b : 256 + extra++] = b;
    }
}

/* Text of the byte-level alphabet -> bytes (into out, at most max). -1 if a
 * character is outside the alphabet or the token is too long. */
static long to_bytes(char *out, size_t max, const char *str, const int inv[324])
{
    const unsigned char *p = (const unsigned char *)str;
    size_t n = strlen(str), o = 0, k;
    for (size_t i = 0; i < n; i += k) {
        uint32_t cp = uni_decode(p + i, n - i, &k);
        if (cp >= 324 || inv[cp] < 0 || o >= max)
            return -1;
        out[o++] = (char)inv[cp];
    }
    return (long)o;
}

/* bytes -> id map used while loading (open addressing). */
typedef struct bmap {
    int32_t *slot; /* id + 1, 0 = empty */
    size_t mask;
} bmap;

static uint64_t fnv(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h ^ h >> 29;
}

static int32_t bmap_get(const bmap *m, const tok_t *t, const char *p, size_t n)
{
    for (size_t i = fnv(p, n) & m->mask; m->slot[i]; i = (i + 1) & m->mask) {
        int32_t id = m->slot[i] - 1;
        if (t->len[id] == n && !memcmp(t->bytes + t->off[id], p, n))
            return id;
    }
    return -1;
}

static void bmap_put(bmap *m, const tok_t *t, int32_t id)
{
    const char *p = t->bytes + t->off[id];
    size_t i = fnv(p, t->len[id]) & m->mask;
    while (m->slot[i])
        i = (i + 1) & m->mask;
    m->slot[i] = id + 1;
}

static const char *str_field(const cJSON *o, const char *f)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, f);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

/* 1 if o's field f is absent, null, false or "" (a feature not in use). */
static int unused(const cJSON *o, const char *f)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, f);
    return !x || cJSON_IsNull(x) || cJSON_IsFalse(x) || (cJSON_IsString(x) && !*x->valuestring);
}

static int is_type(const cJSON *o, const char *type)
{
    const char *s = cJSON_IsObject(o) ? str_field(o, "type") : NULL;
    return s && !strcmp(s, type);
}

static int check_pre(tok_t *t, const cJSON *pre, const char *name, char *err)
{
    const char *want = "pre_tokenizer: expected a Sequence of Split (the Qwen2, Llama 3 or "
                       "GPT-2 pattern, behavior Isolated) and ByteLevel (use_regex false), or "
                       "ByteLevel with use_regex true";
    if (is_type(pre, "ByteLevel")) {
        const cJSON *ur = cJSON_GetObjectItemCaseSensitive(pre, "use_regex");
        if (!unused(pre, "add_prefix_space") || (ur && !cJSON_IsTrue(ur)))
            return rl_err(err, RL_EINVAL, "%s: %s", name, want);
        t->pretok = PRE_GPT2;
        return 0;
    }
    const cJSON *seq = is_type(pre, "Sequence") ? cJSON_GetObjectItemCaseSensitive(pre, "pretokenizers")
                                                : NULL;
    if (!cJSON_IsArray(seq) || cJSON_GetArraySize(seq) != 2)
        return rl_err(err, RL_EINVAL, "%s: %s", name, want);
    const cJSON *split = seq->child, *bl = seq->child->next;
    const cJSON *pat = cJSON_GetObjectItemCaseSensitive(split, "pattern");
    const char *re = cJSON_IsObject(pat) ? str_field(pat, "Regex") : NULL;
    const char *beh = is_type(split, "Split") ? str_field(split, "behavior") : NULL;
    if (!re || !beh || strcmp(beh, "Isolated") || !unused(split, "invert") ||
        !is_type(bl, "ByteLevel") || !unused(bl, "add_prefix_space") || !unused(bl, "use_regex"))
        return rl_err(err, RL_EINVAL, "%s: %s", name, want);
    if (!strcmp(re, PAT_QWEN2))
        t->pretok = PRE_QWEN2;
    else if (!strcmp(re, PAT_LLAMA3))
        t->pretok = PRE_LLAMA3;
    else if (!strcmp(re, PAT_GPT2))
        t->pretok = PRE_GPT2;
    else
        return rl_err(err, RL_EINVAL,
                      "%s: pre_tokenizer Split pattern: expected the Qwen2, Llama 3 or GPT-2 "
                      "pattern (other regular expressions are not supported)", name);
    return 0;
}

static int check_parts(tok_t *t, const cJSON *root, const char *name, char *err)
{
    static const char *const fields[] = {"version",        "truncation",    "padding",
                                         "added_tokens",   "normalizer",    "pre_tokenizer",
                                         "post_processor", "decoder",       "model"};
    for (const cJSON *e = root->child; e; e = e->next) {
        size_t f = 0;
        while (f < sizeof fields / sizeof *fields && strcmp(e->string, fields[f]))
            f++;
        if (f == sizeof fields / sizeof *fields)
            return rl_err(err, RL_EINVAL, "%s: unknown field '%.60s' (a tokenizer.json has %s)",
                          name, e->string, "version, added_tokens, normalizer, pre_tokenizer, "
                          "post_processor, decoder, model, truncation, padding");
    }
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    if (!is_type(model, "BPE"))
        return rl_err(err, RL_EINVAL, "%s: model.type: expected \"BPE\"", name);
    static const char *const off[] = {"dropout", "continuing_subword_prefix", "end_of_word_suffix",
                                      "byte_fallback", "ignore_merges"};
    for (size_t i = 0; i < sizeof off / sizeof *off; i++)
        if (!unused(model, off[i]))
            return rl_err(err, RL_EINVAL, "%s: model.%s: expected null, false or \"\" (not "
                          "supported)", name, off[i]);
    const cJSON *norm = cJSON_GetObjectItemCaseSensitive(root, "normalizer");
    if (norm && !cJSON_IsNull(norm) && !is_type(norm, "NFC"))
        return rl_err(err, RL_EINVAL, "%s: normalizer: expected {\"type\": \"NFC\"} or null", name);
    t->nfc = is_type(norm, "NFC");
    int rc = check_pre(t, cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer"), name, err);
    if (rc)
        return rc;
    const cJSON *post = cJSON_GetObjectItemCaseSensitive(root, "post_processor");
    if (post && !cJSON_IsNull(post) && !is_type(post, "ByteLevel") &&
        !is_type(post, "TemplateProcessing") && !is_type(post, "Sequence"))
        return rl_err(err, RL_EINVAL, "%s: post_processor: expected ByteLevel, "
                      "TemplateProcessing, Sequence or null", name);
    if (!is_type(cJSON_GetObjectItemCaseSensitive(root, "decoder"), "ByteLevel"))
        return rl_err(err, RL_EINVAL, "%s: decoder: expected {\"type\": \"ByteLevel\"}", name);
    return 0;
}

/* Vocabulary size: one more than the largest id of vocab and added_tokens. */
static int vocab_extent(long *v, const cJSON *vocab, const cJSON *added, const char *name,
                        char *err)
{
    long max = -1;
    *v = 0;
    for (const cJSON *e = vocab->child; e; e = e->next) {
        if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble >= RL_TOK_VOCAB_MAX ||
            e->valuedouble != (double)(long)e->valuedouble)
            return rl_err(err, RL_EINVAL, "%s: model.vocab entry: expected an id in 0..%d", name,
                          RL_TOK_VOCAB_MAX - 1);
        if ((long)e->valuedouble > max)
            max = (long)e->valuedouble;
    }
    int k = 0;
    for (const cJSON *e = added->child; e; e = e->next, k++) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
        if (!cJSON_IsNumber(id) || id->valuedouble < 0 || id->valuedouble >= RL_TOK_VOCAB_MAX ||
            id->valuedouble != (double)(long)id->valuedouble)
            return rl_err(err, RL_EINVAL, "%s: added_tokens[%d].id: expected an id in 0..%d",
                          name, k, RL_TOK_VOCAB_MAX - 1);
        if ((long)id->valuedouble > max)
            max = (long)id->valuedouble;
    }
    *v = max + 1;
    return 0;
}

static int load_vocab(tok_t *t, const cJSON *vocab, const cJSON *added, const int inv[324],
                      const char *name, char *err)
{
    long v = 0;
    int rc = vocab_extent(&v, vocab, added, name, err);
    if (rc)
        return rc;
    if (v < 256)
        return rl_err(err, RL_EINVAL, "%s: model.vocab: expected at least the 256 byte tokens",
                      name);
    if ((rc = tok_grow_ids(t, (int)v)))
        return tok_grow_err(err, rc, name);
    t->is_added = calloc((size_t)v, 1);
    unsigned char *seen = calloc((size_t)v, 1);
    if (!t->is_added || !seen) {
        free(seen);
        return rl_err(err, RL_ENOMEM, "%s: out of memory", name);
    }
    t->bytes_len = 0;
    char *tmp = malloc(RL_TOK_HF_PIECE_MAX);
    if (!tmp)
        rc = rl_err(err, RL_ENOMEM, "%s: out of memory", name);
    for (const cJSON *e = vocab->child; e && !rc; e = e->next) {
        int32_t id = (int32_t)e->valuedouble;
        long n = to_bytes(tmp, RL_TOK_HF_PIECE_MAX, e->string, inv);
        if (n <= 0)
            rc = rl_err(err, RL_EINVAL, "%s: model.vocab token %d: expected 1..%d characters of "
                        "the byte-level alphabet", name, id, RL_TOK_HF_PIECE_MAX);
        else if (seen[id]++)
            rc = rl_err(err, RL_EINVAL, "%s: model.vocab: id %d given twice", name, id);
        else if ((rc = tok_push_bytes(t, id, tmp, (size_t)n)))
            rc = tok_grow_err(err, rc, name);
    }
    int k = 0;
    for (const cJSON *e = added->child; e && !rc; e = e->next, k++) {
        int32_t id = (int32_t)cJSON_GetObjectItemCaseSensitive(e, "id")->valuedouble;
        const char *content = str_field(e, "content");
        size_t n = content ? strlen(content) : 0;
        const cJSON *sw = cJSON_GetObjectItemCaseSensitive(e, "single_word");
        if (!n || n > RL_TOK_SPECIAL_LEN_MAX) {
            rc = rl_err(err, RL_EINVAL, "%s: added_tokens[%d].content: expected 1..%d bytes",
                        name, k, RL_TOK_SPECIAL_LEN_MAX);
            break;
        }
        if (sw && !cJSON_IsBool(sw)) {
            rc = rl_err(err, RL_EINVAL, "%s: added_tokens[%d].single_word: expected a boolean",
                        name, k);
            break;
        }
        char what[96], e2[RL_ERR_MAX];
        snprintf(what, sizeof what, "added_tokens[%d]", k);
        if ((rc = tok_specset_add_raw(&t->spec, content, n, what, e2))) {
            rl_err(err, rc, "%s: %s", name, e2);
            break;
        }
        size_t si = t->spec.n - 1;
        rc = VEC_GROW(t->spec_id, t->spec_cap_id, si + 1, RL_TOK_SPECIAL_MAX);
        if (!rc)
            rc = VEC_GROW(t->spec_strip, t->spec_cap_strip, si + 1, RL_TOK_SPECIAL_MAX);
        if (rc) {
            rc = rl_err(err, RL_ENOMEM, "%s: out of memory", name);
            break;
        }
        t->spec_id[si] = id;
        t->spec_strip[si] = (unsigned char)(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "lstrip")) |
                                            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "rstrip")) << 1);
        t->is_added[id] = 1;
        /* An added token may repeat a vocabulary entry: its text wins. */
        seen[id] = 1;
        if ((rc = tok_push_bytes(t, id, content, n)))
            rc = tok_grow_err(err, rc, name);
    }
    for (long i = 0; i < v && !rc; i++)
        if (!seen[i])
            rc = rl_err(err, RL_EINVAL, "%s: id %ld has no token: expected ids 0..%ld each once",
                        name, i, v - 1);
    free(seen);
    free(tmp);
    t->vocab = (int)v;
    t->first_special = (int32_t)v;
    return rc;
}

static int load_merges(tok_t *t, const cJSON *merges, const int inv[324], const char *name,
                       char *err)
{
    bmap m = {0};
    size_t slots = 16;
    while (slots < (size_t)t->vocab * 2)
        slots *= 2;
    m.slot = calloc(slots, sizeof *m.slot);
    m.mask = slots - 1;
    int nm = cJSON_GetArraySize(merges);
    t->merges = malloc(((size_t)nm * 2 + 1) * sizeof *t->merges);
    t->merge_out = malloc(((size_t)nm + 1) * sizeof *t->merge_out);
    if (!m.slot || !t->merges || !t->merge_out) {
        free(m.slot);
        return rl_err(err, RL_ENOMEM, "%s: out of memory", name);
    }
    for (int32_t id = 0; id < t->vocab; id++)
        if (!t->is_added[id])
            bmap_put(&m, t, id);
    int rc = 0;
    for (int b = 0; b < 256 && !rc; b++) {
        char c = (char)b;
        if ((t->byte_id[b] = bmap_get(&m, t, &c, 1)) < 0)
            rc = rl_err(err, RL_EINVAL, "%s: model.vocab: byte 0x%02x has no token: expected "
                        "all 256 byte-level tokens", name, b);
    }
    int r = 0;
    /* two halves, their join, the "A B" text split in place */
    char *scratch = rc ? NULL : malloc(6 * RL_TOK_HF_PIECE_MAX);
    if (!rc && !scratch)
        rc = rl_err(err, RL_ENOMEM, "%s: out of memory", name);
    char *half[2] = {scratch, scratch + RL_TOK_HF_PIECE_MAX};
    char *joined = scratch + 2 * RL_TOK_HF_PIECE_MAX, *pair = scratch + 4 * RL_TOK_HF_PIECE_MAX;
    for (const cJSON *e = merges->child; e && !rc; e = e->next, r++) {
        const char *a = NULL, *b = NULL;
        if (cJSON_IsArray(e) && cJSON_GetArraySize(e) == 2 && cJSON_IsString(e->child) &&
            cJSON_IsString(e->child->next)) {
            a = e->child->valuestring;
            b = e->child->next->valuestring;
        } else if (cJSON_IsString(e) && strlen(e->valuestring) < 2 * RL_TOK_HF_PIECE_MAX) {
            strcpy(pair, e->valuestring);
            char *sp = strchr(pair, ' ');
            if (sp && !strchr(sp + 1, ' ')) {
                *sp = '\0';
                a = pair;
                b = sp + 1;
            }
        }
        long la = a ? to_bytes(half[0], RL_TOK_HF_PIECE_MAX, a, inv) : -1;
        long lb = b ? to_bytes(half[1], RL_TOK_HF_PIECE_MAX, b, inv) : -1;
        int32_t ia = la > 0 ? bmap_get(&m, t, half[0], (size_t)la) : -1;
        int32_t ib = lb > 0 ? bmap_get(&m, t, half[1], (size_t)lb) : -1;
        int32_t io = -1;
        if (ia >= 0 && ib >= 0) {
            memcpy(joined, half[0], (size_t)la);
            memcpy(joined + la, half[1], (size_t)lb);
            io = bmap_get(&m, t, joined, (size_t)(la + lb));
        }
        if (io < 0)
            rc = rl_err(err, RL_EINVAL, "%s: model.merges[%d]: expected \"A B\" or [\"A\", \"B\"] "
                        "with A, B and AB tokens of the vocabulary", name, r);
        t->merges[2 * r] = ia;
        t->merges[2 * r + 1] = ib;
        t->merge_out[r] = io;
    }
    free(m.slot);
    free(scratch);
    t->nmerges = r;
    return rc ? rc : tok_rank_map(t, name, err);
}

int tok_hf_load_root(tok_t **out, const void *rootv, const char *name, char *err)
{
    const cJSON *root = rootv;
    *out = NULL;
    tok_t *t = tok_alloc();
    if (!t)
        return rl_err(err, RL_ENOMEM, "%s: out of memory", name);
    t->kind = TOK_KIND_HF;
    int rc = check_parts(t, root, name, err);
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(model, "vocab");
    const cJSON *merges = cJSON_GetObjectItemCaseSensitive(model, "merges");
    const cJSON *added = cJSON_GetObjectItemCaseSensitive(root, "added_tokens");
    if (!rc && !cJSON_IsObject(vocab))
        rc = rl_err(err, RL_EINVAL, "%s: model.vocab: expected an object of token -> id", name);
    if (!rc && !cJSON_IsArray(merges))
        rc = rl_err(err, RL_EINVAL, "%s: model.merges: expected an array", name);
    if (!rc && added && !cJSON_IsArray(added))
        rc = rl_err(err, RL_EINVAL, "%s: added_tokens: expected an array", name);
    static const cJSON none = {0};
    int inv[324];
    byte_alphabet(inv);
    if (!rc)
        rc = load_vocab(t, vocab, added ? added : &none, inv, name, err);
    if (!rc)
        rc = load_merges(t, merges, inv, name, err);
    if (rc) {
        tok_free(t);
        return rc;
    }
    *out = t;
    return 0;
}
