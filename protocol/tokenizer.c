/* tokenizer.c - byte-level BPE: pre-tokenizer, encode/decode, JSON file,
 * trainer. See tokenizer.h for the model and the file format.
 *
 * Layout of this file:
 *   1. pre-tokenizer (byte classes, piece boundaries)
 *   2. hashing helpers
 *   3. the tok_t object: ids, bytes of ids, merge-rank map, special tokens
 *   4. encode (per-piece BPE, piece cache) and decode
 *   5. JSON load / save
 *   6. trainer (unique pieces with counts, pair counts updated in place,
 *      lazy max-heap of pairs)
 */
#include "protocol/tokenizer.h"
#include "protocol/tokenizer_int.h"

#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "common/vec.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const TOK_DEFAULT_SPECIALS[] = {
    "<|endoftext|>", "<|im_start|>", "<|im_end|>",      "<think>",          "</think>",
    "<tool_call>",   "</tool_call>", "<tool_response>", "</tool_response>",
};
const size_t TOK_DEFAULT_SPECIALS_N = sizeof TOK_DEFAULT_SPECIALS / sizeof TOK_DEFAULT_SPECIALS[0];

#define TOK_MODEL "byte-bpe"
#define TOK_VERSION 1
#define NO_RANK INT32_MAX

/* ======================================================================
 * 1. Pre-tokenizer
 * ====================================================================== */

enum { C_LETTER, C_DIGIT, C_SPACE, C_PUNCT };

/* Letters are A-Z a-z _ and every byte >= 0x80, so identifiers stay whole
 * and UTF-8 sequences (valid or not) are never split from their word. */
static int byte_class(unsigned char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80)
        return C_LETTER;
    if (c >= '0' && c <= '9')
        return C_DIGIT;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f')
        return C_SPACE;
    return C_PUNCT;
}

static unsigned char CLASS[256];
static pthread_once_t class_once = PTHREAD_ONCE_INIT;

static void class_init(void)
{
    for (int c = 0; c < 256; c++)
        CLASS[c] = (unsigned char)byte_class((unsigned char)c);
}

static int is_nl(unsigned char c) { return c == '\n' || c == '\r'; }

/* End of a whitespace run starting at i: up to and including its last
 * newline if it has one; else the whole run, minus its last space when a
 * word or punctuation follows (that space becomes the word's prefix, so
 * "    return" is an indent piece "   " and a word piece " return"). */
static size_t space_end(const unsigned char *s, size_t n, size_t i)
{
    size_t e = i, last_nl = (size_t)-1;
    while (e < n && CLASS[s[e]] == C_SPACE) {
        if (is_nl(s[e]))
            last_nl = e;
        e++;
    }
    if (last_nl != (size_t)-1)
        return last_nl + 1;
    if (e < n && e - i > 1 && s[e - 1] == ' ' && CLASS[s[e]] != C_DIGIT)
        return e - 1;
    return e;
}

size_t tok_pretoken_next(const char *str, size_t n, size_t i)
{
    pthread_once(&class_once, class_init);
    const unsigned char *s = (const unsigned char *)str;
    /* Look at most one piece ahead: a piece never extends past the cap, and
     * scanning a whole 1 MB run for every 256-byte piece would be
     * quadratic. A run reaching the cap is taken whole. */
    if (n - i > RL_TOK_PIECE_MAX)
        n = i + RL_TOK_PIECE_MAX;
    size_t j = i;
    int cls = CLASS[s[i]];
    /* A single space joins the word or punctuation that follows it. */
    if (s[i] == ' ' && i + 1 < n && (CLASS[s[i + 1]] == C_LETTER || CLASS[s[i + 1]] == C_PUNCT)) {
        j = i + 1;
        cls = CLASS[s[j]];
    }
    switch (cls) {
    case C_LETTER:
        while (j < n && CLASS[s[j]] == C_LETTER)
            j++;
        break;
    case C_DIGIT:
        while (j < n && j - i < 3 && CLASS[s[j]] == C_DIGIT)
            j++;
        break;
    case C_PUNCT:
        while (j < n && CLASS[s[j]] == C_PUNCT)
            j++;
        while (j < n && is_nl(s[j]))
            j++;
        break;
    default:
        j = space_end(s, n, i);
        break;
    }
    return j;
}

/* ======================================================================
 * 2. Hashing
 * ====================================================================== */

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static uint64_t hash_bytes(const unsigned char *p, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        h = (h ^ v) * 0xff51afd7ed558ccdull;
        h ^= h >> 31;
        p += 8;
        n -= 8;
    }
    uint64_t v = 0;
    memcpy(&v, p, n);
    return mix64(h ^ v);
}

static uint64_t pair_key(int32_t a, int32_t b) { return (uint64_t)(uint32_t)a << 32 | (uint32_t)b; }

/* ======================================================================
 * 3. The tokenizer object
 * ====================================================================== */


static void specset_free(specset *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->text[i]);
    free(s->text);
    free(s->len);
    memset(s, 0, sizeof *s);
}

/* Untrusted text made fit for a one-line message: at most 60 bytes, bytes
 * outside printable ASCII shown as '?'. */
static const char *shown(char out[64], const char *s)
{
    size_t i = 0;
    for (; s[i] && i < 60; i++)
        out[i] = s[i] >= 0x20 && s[i] <= 0x7e ? s[i] : '?';
    out[i] = '\0';
    return out;
}

static int special_valid(const char *name, char *err)
{
    char tmp[64];
    size_t n = strlen(name);
    if (n == 0 || n > RL_TOK_SPECIAL_LEN_MAX)
        return rl_err(err, RL_EINVAL, "special token '%s': expected 1..%d bytes",
                      shown(tmp, name), RL_TOK_SPECIAL_LEN_MAX);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c < 0x21 || c > 0x7e)
            return rl_err(err, RL_EINVAL,
                          "special token '%s': expected printable ASCII without spaces",
                          shown(tmp, name));
    }
    return 0;
}

/* -1 if absent. */
static long specset_find(const specset *s, const char *name, size_t n)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->len[i] == n && !memcmp(s->text[i], name, n))
            return (long)i;
    return -1;
}

int tok_specset_add_raw(specset *s, const char *name, size_t n, const char *shown_name,
                        char *err)
{
    if (specset_find(s, name, n) >= 0)
        return rl_err(err, RL_EINVAL, "special token '%s': listed twice", shown_name);
    if (s->n >= RL_TOK_SPECIAL_MAX)
        return rl_err(err, RL_ELIMIT, "special token '%s': more than %d special tokens",
                      shown_name, RL_TOK_SPECIAL_MAX);
    int rc = VEC_GROW(s->text, s->text_alloc, s->n + 1, RL_TOK_SPECIAL_MAX);
    if (!rc)
        rc = VEC_GROW(s->len, s->len_alloc, s->n + 1, RL_TOK_SPECIAL_MAX);
    char *copy = rc ? NULL : malloc(n + 1); /* rc is not RL_ELIMIT: checked above */
    if (!copy)
        return rl_err(err, RL_ENOMEM, "special token '%s': out of memory", shown_name);
    memcpy(copy, name, n);
    copy[n] = '\0';
    s->text[s->n] = copy;
    s->len[s->n] = n;
    s->n++;
    s->first[(unsigned char)name[0]] = 1;
    return 0;
}

static int specset_add(specset *s, const char *name, char *err)
{
    int rc = special_valid(name, err);
    return rc ? rc : tok_specset_add_raw(s, name, strlen(name), name, err);
}

/* Finds the first special token at or after pos; returns its position (n
 * if none) and its index in *which. The longest one wins at a position. */
size_t tok_specset_next(const specset *s, const unsigned char *p, size_t n, size_t pos, long *which)
{
    *which = -1;
    if (s->n == 0)
        return n;
    for (size_t i = pos; i < n; i++) {
        if (!s->first[p[i]])
            continue;
        size_t best = 0;
        for (size_t k = 0; k < s->n; k++) {
            size_t l = s->len[k];
            if (l > best && l <= n - i && !memcmp(p + i, s->text[k], l)) {
                best = l;
                *which = (long)k;
            }
        }
        if (*which >= 0)
            return i;
    }
    return n;
}

tok_t *tok_alloc(void)
{
    tok_t *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->off = malloc(256 * sizeof *t->off);
    t->len = malloc(256 * sizeof *t->len);
    t->off_alloc = t->len_alloc = 256;
    t->bytes_cap = 4096;
    t->bytes = malloc(t->bytes_cap);
    t->cache = calloc(1, sizeof *t->cache);
    if (!t->off || !t->len || !t->bytes || !t->cache) {
        free(t->off);
        free(t->len);
        free(t->bytes);
        free(t->cache);
        free(t);
        return NULL;
    }
    pthread_mutex_init(&t->cache->mu, NULL);
    for (int i = 0; i < 256; i++) {
        t->bytes[i] = (char)i;
        t->off[i] = (uint32_t)i;
        t->len[i] = 1;
        t->byte_id[i] = i;
    }
    t->bytes_len = 256;
    t->vocab = 256;
    t->first_special = 256;
    return t;
}

static void cache_free(piece_cache *c)
{
    if (!c)
        return;
    pthread_mutex_destroy(&c->mu);
    free(c->slots);
    free(c->arena);
    free(c);
}

void tok_free(tok_t *t)
{
    if (!t)
        return;
    free(t->merges);
    specset_free(&t->spec);
    free(t->off);
    free(t->len);
    free(t->bytes);
    free(t->rk_keys);
    free(t->rk_vals);
    cache_free(t->cache);
    free(t->merge_out);
    free(t->spec_id);
    free(t->spec_strip);
    free(t->is_added);
    free(t);
}

/* Appends the bytes of a new id (the id tables already have room).
 * Returns 0, RL_ELIMIT (past RL_TOK_BYTES_MAX) or RL_ENOMEM. */
int tok_push_bytes(tok_t *t, int32_t id, const char *p, size_t n)
{
    int rc = VEC_GROW(t->bytes, t->bytes_cap, t->bytes_len + n, RL_TOK_BYTES_MAX);
    if (rc)
        return rc;
    memcpy(t->bytes + t->bytes_len, p, n);
    t->off[id] = (uint32_t)t->bytes_len;
    t->len[id] = (uint16_t)n;
    t->bytes_len += n;
    return 0;
}

/* Room for vocab ids. Returns 0, RL_ELIMIT (past RL_TOK_VOCAB_MAX) or
 * RL_ENOMEM. */
int tok_grow_ids(tok_t *t, int vocab)
{
    int rc = VEC_GROW(t->off, t->off_alloc, (size_t)vocab, RL_TOK_VOCAB_MAX);
    return rc ? rc : VEC_GROW(t->len, t->len_alloc, (size_t)vocab, RL_TOK_VOCAB_MAX);
}

/* The message of a failed tok_grow_ids or tok_push_bytes for `name`. */
int tok_grow_err(char *err, int rc, const char *name)
{
    if (rc == RL_ELIMIT)
        return rl_err(err, rc, "%s: more than %d token ids or %u bytes of tokens", name,
                      RL_TOK_VOCAB_MAX, RL_TOK_BYTES_MAX);
    return rl_err(err, rc, "%s: out of memory", name);
}

static int32_t rank_lookup(const tok_t *t, int32_t a, int32_t b)
{
    if (!t->rk_keys)
        return NO_RANK;
    uint64_t k = pair_key(a, b);
    for (size_t i = mix64(k) & t->rk_mask;; i = (i + 1) & t->rk_mask) {
        if (t->rk_keys[i] == k)
            return t->rk_vals[i];
        if (t->rk_keys[i] == UINT64_MAX)
            return NO_RANK;
    }
}

int tok_rank_map(tok_t *t, const char *name, char *err)
{
    size_t slots = 16;
    while (slots < (size_t)t->nmerges * 2 + 2)
        slots *= 2;
    t->rk_keys = malloc(slots * sizeof *t->rk_keys);
    t->rk_vals = malloc(slots * sizeof *t->rk_vals);
    if (!t->rk_keys || !t->rk_vals)
        return rl_err(err, RL_ENOMEM, "%s: out of memory", name);
    memset(t->rk_keys, 0xff, slots * sizeof *t->rk_keys);
    t->rk_mask = slots - 1;
    for (int r = 0; r < t->nmerges; r++) {
        int32_t a = t->merges[2 * r], b = t->merges[2 * r + 1];
        uint64_t k = pair_key(a, b);
        size_t i = mix64(k) & t->rk_mask;
        while (t->rk_keys[i] != UINT64_MAX && t->rk_keys[i] != k)
            i = (i + 1) & t->rk_mask;
        if (t->rk_keys[i] == k)
            return rl_err(err, RL_EINVAL, "%s: merge %d [%d, %d]: repeats merge %d", name, r, a,
                          b, t->rk_vals[i]);
        t->rk_keys[i] = k;
        t->rk_vals[i] = r;
    }
    return 0;
}

/* Sets the merges (taking ownership of `merges`, 2*m ids) on a tok_t that
 * has no merges or specials yet; checks each merge refers to earlier ids
 * and makes a token of at most RL_TOK_PIECE_MAX bytes, then that none is a
 * repeat (tok_rank_map). */
static int tok_set_merges(tok_t *t, int32_t *merges, int m, const char *name, char *err)
{
    t->merges = merges;
    t->nmerges = m;
    int rc = tok_grow_ids(t, 256 + m);
    if (rc)
        return tok_grow_err(err, rc, name);
    for (int r = 0; r < m; r++) {
        int32_t a = merges[2 * r], b = merges[2 * r + 1];
        if (a < 0 || b < 0 || a >= 256 + r || b >= 256 + r)
            return rl_err(err, RL_EINVAL, "%s: merge %d [%d, %d]: expected ids below %d", name, r,
                          a, b, 256 + r);
        size_t n = (size_t)t->len[a] + t->len[b];
        if (n > RL_TOK_PIECE_MAX)
            return rl_err(err, RL_EINVAL, "%s: merge %d makes a %zu-byte token, limit is %d", name,
                          r, n, RL_TOK_PIECE_MAX);
        /* Copy the halves through a temporary: the arena may move. */
        char tmp[RL_TOK_PIECE_MAX];
        memcpy(tmp, t->bytes + t->off[a], t->len[a]);
        memcpy(tmp + t->len[a], t->bytes + t->off[b], t->len[b]);
        if ((rc = tok_push_bytes(t, 256 + r, tmp, n)))
            return tok_grow_err(err, rc, name);
    }
    if ((rc = tok_rank_map(t, name, err)))
        return rc;
    t->vocab = 256 + m;
    t->first_special = 256 + m;
    return 0;
}

int32_t tok_add_special(tok_t *t, const char *name, char *err)
{
    if (t->kind != TOK_KIND_BUILTIN)
        return rl_err(err, RL_EINVAL, "special token '%s': a Hugging Face tokenizer takes its "
                      "added tokens from its file", name);
    if (t->vocab >= RL_TOK_VOCAB_MAX) {
        char tmp[64];
        return rl_err(err, RL_ELIMIT, "special token '%s': vocabulary is at its limit %d",
                      shown(tmp, name), RL_TOK_VOCAB_MAX);
    }
    int rc = specset_add(&t->spec, name, err);
    if (rc)
        return rc;
    int32_t id = t->vocab;
    if ((rc = tok_grow_ids(t, id + 1)) || (rc = tok_push_bytes(t, id, name, strlen(name)))) {
        /* keep the object consistent: drop the half-added special */
        t->spec.n--;
        free(t->spec.text[t->spec.n]);
        char what[RL_TOK_SPECIAL_LEN_MAX + 32];
        snprintf(what, sizeof what, "special token '%s'", name);
        return tok_grow_err(err, rc, what);
    }
    t->vocab++;
    return id;
}

int tok_vocab_size(const tok_t *t) { return t->vocab; }
int tok_num_merges(const tok_t *t) { return t->nmerges; }
int tok_num_specials(const tok_t *t) { return (int)t->spec.n; }

int tok_merge_at(const tok_t *t, int i, int32_t *a, int32_t *b)
{
    if (i < 0 || i >= t->nmerges)
        return RL_EINVAL;
    *a = t->merges[2 * i];
    *b = t->merges[2 * i + 1];
    return 0;
}

int32_t tok_special_id(const tok_t *t, const char *name)
{
    long k = specset_find(&t->spec, name, strlen(name));
    if (k < 0)
        return -1;
    return t->spec_id ? t->spec_id[k] : t->first_special + (int32_t)k;
}

int tok_is_special(const tok_t *t, int32_t id)
{
    if (id < 0 || id >= t->vocab)
        return 0;
    return t->is_added ? t->is_added[id] : id >= t->first_special;
}

tok_kind_t tok_kind(const tok_t *t) { return t->kind; }

const char *tok_name(const tok_t *t)
{
    return t->kind == TOK_KIND_HF ? "huggingface" : TOK_MODEL;
}

const char *tok_id_to_bytes(const tok_t *t, int32_t id, size_t *len)
{
    if (id < 0 || id >= t->vocab)
        return NULL;
    if (len)
        *len = t->len[id];
    return t->bytes + t->off[id];
}

/* ======================================================================
 * 4. Encode and decode
 * ====================================================================== */


int tok_idvec_push(tok_idvec *o, const int32_t *ids, size_t k)
{
    if (!o->count_only) {
        int rc = VEC_GROW(o->v, o->cap, o->n + k, RL_TOK_TEXT_MAX);
        if (rc)
            return rc;
        memcpy(o->v + o->n, ids, k * sizeof *ids);
    }
    o->n += k;
    return 0;
}

/* BPE inside one piece. ranks[i] is the rank of the pair (ids[i], ids[i+1]);
 * each step merges the leftmost lowest-ranked pair and looks up only the
 * two pairs next to it, so a piece of L bytes costs O(L) hash lookups. */
static size_t bpe_piece(const tok_t *t, const unsigned char *s, size_t n, int32_t *ids,
                        int32_t *ranks)
{
    for (size_t i = 0; i < n; i++)
        ids[i] = t->byte_id[s[i]];
    for (size_t i = 0; i + 1 < n; i++)
        ranks[i] = rank_lookup(t, ids[i], ids[i + 1]);
    size_t m = n;
    while (m > 1) {
        size_t best = 0;
        for (size_t i = 1; i + 1 < m; i++)
            if (ranks[i] < ranks[best])
                best = i;
        if (ranks[best] == NO_RANK)
            break;
        ids[best] = t->merge_out ? t->merge_out[ranks[best]] : 256 + ranks[best];
        memmove(ids + best + 1, ids + best + 2, (m - best - 2) * sizeof *ids);
        memmove(ranks + best + 1, ranks + best + 2, (m - best - 2) * sizeof *ranks);
        m--;
        if (best + 1 < m)
            ranks[best] = rank_lookup(t, ids[best], ids[best + 1]);
        if (best > 0)
            ranks[best - 1] = rank_lookup(t, ids[best - 1], ids[best]);
    }
    return m;
}

/* The same BPE for long pieces in O(L log L): the symbols are a linked
 * list (a symbol is named by the index of its first byte, so index order is
 * text order) and the candidate pairs a min-heap by (rank, index); an entry
 * is stale once either symbol has changed, and is then skipped. */
typedef struct bpe_cand {
    int32_t rank;
    uint32_t left, right;
    int32_t a, b;
} bpe_cand;

static int cand_less(const bpe_cand *x, const bpe_cand *y)
{
    return x->rank < y->rank || (x->rank == y->rank && x->left < y->left);
}

static void cand_push(bpe_cand *h, size_t *n, bpe_cand c)
{
    size_t i = (*n)++;
    while (i > 0 && cand_less(&c, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = c;
}

static bpe_cand cand_pop(bpe_cand *h, size_t *n)
{
    bpe_cand top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && cand_less(&h[c + 1], &h[c]))
            c++;
        if (!cand_less(&h[c], &last))
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n)
        h[i] = last;
    return top;
}

static void cand_add(const tok_t *t, bpe_cand *h, size_t *nh, const int32_t *ids, uint32_t l,
                     uint32_t r)
{
    int32_t rank = rank_lookup(t, ids[l], ids[r]);
    if (rank != NO_RANK)
        cand_push(h, nh, (bpe_cand){rank, l, r, ids[l], ids[r]});
}

static int bpe_piece_long(const tok_t *t, const unsigned char *s, size_t n, tok_idvec *out)
{
    int32_t *ids = malloc(n * sizeof *ids);
    uint32_t *next = malloc(n * sizeof *next), *prev = malloc(n * sizeof *prev);
    bpe_cand *h = malloc(3 * n * sizeof *h); /* n - 1 first, at most 2 per merge */
    int rc = RL_ENOMEM;
    if (!ids || !next || !prev || !h)
        goto done;
    size_t nh = 0;
    const uint32_t END = UINT32_MAX;
    for (size_t i = 0; i < n; i++) {
        ids[i] = t->byte_id[s[i]];
        next[i] = i + 1 < n ? (uint32_t)i + 1 : END;
        prev[i] = i ? (uint32_t)i - 1 : END;
    }
    for (size_t i = 0; i + 1 < n; i++)
        cand_add(t, h, &nh, ids, (uint32_t)i, (uint32_t)i + 1);
    while (nh) {
        bpe_cand c = cand_pop(h, &nh);
        if (ids[c.left] != c.a || next[c.left] != c.right || ids[c.right] != c.b)
            continue; /* stale: a symbol changed since the entry was made */
        ids[c.left] = t->merge_out ? t->merge_out[c.rank] : 256 + c.rank;
        ids[c.right] = -1;
        next[c.left] = next[c.right];
        if (next[c.left] != END)
            prev[next[c.left]] = c.left;
        if (prev[c.left] != END)
            cand_add(t, h, &nh, ids, prev[c.left], c.left);
        if (next[c.left] != END)
            cand_add(t, h, &nh, ids, c.left, next[c.left]);
    }
    size_t m = 0;
    for (uint32_t i = 0; i != END; i = next[i])
        ids[m++] = ids[i];
    rc = tok_idvec_push(out, ids, m);
done:
    free(ids);
    free(next);
    free(prev);
    free(h);
    return rc;
}

/* -- piece cache (only used while the encoder holds the cache lock) -- */

typedef struct cache_entry {
    uint32_t hash;
    uint16_t klen;
    uint16_t nids;
} cache_entry;

static size_t align4(size_t n) { return (n + 3) & ~(size_t)3; }

static const int32_t *cache_get(piece_cache *c, const unsigned char *p, size_t n, uint64_t h,
                                size_t *nids)
{
    if (!c->slots)
        return NULL;
    for (size_t i = h & c->mask; c->slots[i]; i = (i + 1) & c->mask) {
        unsigned char *e = c->arena + c->slots[i] - 1;
        cache_entry ce;
        memcpy(&ce, e, sizeof ce);
        if (ce.hash == (uint32_t)h && ce.klen == n && !memcmp(e + sizeof ce, p, n)) {
            *nids = ce.nids;
            return (const int32_t *)(void *)(e + sizeof ce + align4(n));
        }
    }
    return NULL;
}

static void cache_put(piece_cache *c, const unsigned char *p, size_t n, uint64_t h,
                      const int32_t *ids, size_t nids)
{
    size_t need = sizeof(cache_entry) + align4(n) + nids * sizeof *ids;
    if (!c->slots) {
        c->slots = calloc(CACHE_SLOTS, sizeof *c->slots);
        c->arena = malloc(RL_TOK_CACHE_BYTES);
        if (!c->slots || !c->arena) {
            free(c->slots);
            free(c->arena);
            c->slots = NULL;
            c->arena = NULL;
            return; /* no cache: encoding still works, only slower */
        }
        c->mask = CACHE_SLOTS - 1;
    }
    if (c->arena_len + need > RL_TOK_CACHE_BYTES || c->used >= CACHE_SLOTS / 2) {
        memset(c->slots, 0, CACHE_SLOTS * sizeof *c->slots);
        c->arena_len = 0;
        c->used = 0;
    }
    unsigned char *e = c->arena + c->arena_len;
    cache_entry ce = {(uint32_t)h, (uint16_t)n, (uint16_t)nids};
    memcpy(e, &ce, sizeof ce);
    memcpy(e + sizeof ce, p, n);
    memcpy(e + sizeof ce + align4(n), ids, nids * sizeof *ids);
    size_t i = h & c->mask;
    while (c->slots[i])
        i = (i + 1) & c->mask;
    c->slots[i] = (uint32_t)c->arena_len + 1;
    c->arena_len += need;
    c->used++;
}

int tok_encode_piece(const tok_t *t, piece_cache *cache, const unsigned char *p, size_t n,
                     tok_idvec *out)
{
    if (n == 1)
        return tok_idvec_push(out, &t->byte_id[p[0]], 1);
    if (n > RL_TOK_PIECE_MAX) /* only Hugging Face pieces are longer */
        return bpe_piece_long(t, p, n, out);
    uint64_t h = 0;
    int cacheable = cache && n <= RL_TOK_CACHE_PIECE_MAX;
    if (cacheable) {
        h = hash_bytes(p, n);
        size_t k;
        const int32_t *hit = cache_get(cache, p, n, h, &k);
        if (hit)
            return tok_idvec_push(out, hit, k);
    }
    int32_t ids[RL_TOK_PIECE_MAX], ranks[RL_TOK_PIECE_MAX];
    size_t k = bpe_piece(t, p, n, ids, ranks);
    if (cacheable)
        cache_put(cache, p, n, h, ids, k);
    return tok_idvec_push(out, ids, k);
}

static int encode_plain(const tok_t *t, piece_cache *cache, const unsigned char *s, size_t n,
                        tok_idvec *out)
{
    for (size_t i = 0; i < n;) {
        size_t j = tok_pretoken_next((const char *)s, n, i);
        int rc = tok_encode_piece(t, cache, s + i, j - i, out);
        if (rc)
            return rc;
        i = j;
    }
    return 0;
}

static int encode_run(const tok_t *t, const char *text, size_t len, tok_mode mode, tok_idvec *out,
                      char *err)
{
    if (len > RL_TOK_TEXT_MAX)
        return rl_err(err, RL_ELIMIT, "tokenizer: text of %zu bytes, limit is %zu", len,
                      (size_t)RL_TOK_TEXT_MAX);
    const unsigned char *s = (const unsigned char *)text;
    /* Another thread encoding at the same time simply goes without cache:
     * the cache never changes results, only speed. */
    piece_cache *cache = pthread_mutex_trylock(&t->cache->mu) == 0 ? t->cache : NULL;
    int rc = 0;
    size_t pos = 0;
    if (t->kind == TOK_KIND_HF) {
        rc = tok_hf_encode(t, cache, s, len, mode, out);
        pos = len;
    }
    while (pos < len && !rc) {
        long which = -1;
        size_t at = mode == TOK_SPECIAL_ALLOW ? tok_specset_next(&t->spec, s, len, pos, &which) : len;
        rc = encode_plain(t, cache, s + pos, at - pos, out);
        if (!rc && which >= 0) {
            int32_t id = t->first_special + (int32_t)which;
            rc = tok_idvec_push(out, &id, 1);
            at += t->spec.len[which];
        }
        pos = at;
    }
    if (cache)
        pthread_mutex_unlock(&cache->mu);
    if (rc == RL_ELIMIT)
        return rl_err(err, rc, "tokenizer: more than %zu ids encoding %zu bytes",
                      (size_t)RL_TOK_TEXT_MAX, len);
    if (rc)
        return rl_err(err, rc, "tokenizer: out of memory encoding %zu bytes", len);
    return 0;
}

int tok_encode(int32_t **ids, size_t *n, const tok_t *t, const char *text, size_t len,
               tok_mode mode, char *err)
{
    *ids = NULL;
    *n = 0;
    tok_idvec out = {0};
    int rc = encode_run(t, text, len, mode, &out, err);
    if (rc) {
        free(out.v);
        return rc;
    }
    *ids = out.v;
    *n = out.n;
    return 0;
}

long tok_count(const tok_t *t, const char *text, size_t len, tok_mode mode, char *err)
{
    tok_idvec out = {.count_only = 1};
    int rc = encode_run(t, text, len, mode, &out, err);
    return rc ? rc : (long)out.n;
}

int tok_decode(char **out, size_t *len, const tok_t *t, const int32_t *ids, size_t n, char *err)
{
    *out = NULL;
    if (len)
        *len = 0;
    buf_t b;
    buf_init(&b, RL_TOK_TEXT_MAX);
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= t->vocab) {
            buf_dispose(&b);
            return rl_err(err, RL_EINVAL, "tokenizer: token id %d at position %zu: expected 0..%d",
                          ids[i], i, t->vocab - 1);
        }
        int rc = buf_append(&b, t->bytes + t->off[ids[i]], t->len[ids[i]]);
        if (rc) {
            buf_dispose(&b);
            return rl_err(err, rc, "tokenizer: decoding %zu tokens: output over %zu bytes", n,
                          (size_t)RL_TOK_TEXT_MAX);
        }
    }
    *out = buf_detach(&b, len);
    return 0;
}

/* ======================================================================
 * 5. JSON file
 * ====================================================================== */

/* An integer in [lo, hi] or -1 with err set. */
static int json_int(long *v, const cJSON *x, long lo, long hi, const char *name, const char *what,
                    char *err)
{
    /* range first: casting an out-of-range double to long is undefined */
    if (!cJSON_IsNumber(x) || !(x->valuedouble >= (double)lo && x->valuedouble <= (double)hi) ||
        x->valuedouble != (double)(long)x->valuedouble)
        return rl_err(err, RL_EINVAL, "%s: %s: expected an integer in %ld..%ld", name, what, lo,
                      hi);
    *v = (long)x->valuedouble;
    return 0;
}

static int load_merges(int32_t **out, int *m, const cJSON *arr, const char *name, char *err)
{
    *out = NULL;
    if (!cJSON_IsArray(arr))
        return rl_err(err, RL_EINVAL, "%s: field merges: expected an array", name);
    int n = cJSON_GetArraySize(arr);
    if (n > RL_TOK_VOCAB_MAX - 256)
        return rl_err(err, RL_ELIMIT, "%s: %d merges, limit is %d", name, n, RL_TOK_VOCAB_MAX - 256);
    int32_t *mg = malloc(((size_t)n * 2 + 1) * sizeof *mg);
    if (!mg)
        return rl_err(err, RL_ENOMEM, "%s: out of memory", name);
    int i = 0;
    for (const cJSON *e = arr->child; e; e = e->next, i++) {
        char what[64];
        snprintf(what, sizeof what, "merge %d", i);
        if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 2) {
            free(mg);
            return rl_err(err, RL_EINVAL, "%s: %s: expected a pair [a, b] of token ids", name, what);
        }
        long a, b;
        if (json_int(&a, e->child, 0, 255 + i, name, what, err) ||
            json_int(&b, e->child->next, 0, 255 + i, name, what, err)) {
            free(mg);
            return RL_EINVAL;
        }
        mg[2 * i] = (int32_t)a;
        mg[2 * i + 1] = (int32_t)b;
    }
    *out = mg;
    *m = n;
    return 0;
}

static int load_specials(tok_t *t, const cJSON *arr, const char *name, char *err)
{
    if (!cJSON_IsArray(arr))
        return rl_err(err, RL_EINVAL, "%s: field special_tokens: expected an array", name);
    int k = 0;
    for (const cJSON *e = arr->child; e; e = e->next, k++) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
        const cJSON *content = cJSON_GetObjectItemCaseSensitive(e, "content");
        if (!cJSON_IsObject(e) || cJSON_GetArraySize(e) != 2 || !id || !cJSON_IsString(content))
            return rl_err(err, RL_EINVAL,
                          "%s: special token %d: expected {\"id\": N, \"content\": \"TEXT\"}", name, k);
        long v;
        char what[64];
        snprintf(what, sizeof what, "special token %d id", k);
        if (json_int(&v, id, t->vocab, t->vocab, name, what, err))
            return RL_EINVAL;
        char e2[RL_ERR_MAX];
        int rc = tok_add_special(t, content->valuestring, e2);
        if (rc < 0)
            return rl_err(err, rc, "%s: %s", name, e2);
    }
    return 0;
}

static const char *const TOP_FIELDS[] = {"version",    "model",          "pretokenizer",
                                         "vocab_size", "special_tokens", "merges"};

/* Every field known, present once. */
static int check_fields(const cJSON *root, const char *name, char *err)
{
    int seen[6] = {0};
    for (const cJSON *e = root->child; e; e = e->next) {
        size_t f = 0;
        while (f < 6 && strcmp(e->string, TOP_FIELDS[f]))
            f++;
        if (f == 6) {
            char tmp[64];
            return rl_err(err, RL_EINVAL, "%s: unknown field '%s'", name, shown(tmp, e->string));
        }
        if (seen[f]++)
            return rl_err(err, RL_EINVAL, "%s: field %s given twice", name, TOP_FIELDS[f]);
    }
    for (size_t f = 0; f < 6; f++)
        if (!seen[f])
            return rl_err(err, RL_EINVAL, "%s: missing field %s", name, TOP_FIELDS[f]);
    return 0;
}

static int load_root(tok_t **out, const cJSON *root, const char *name, char *err)
{
    if (!cJSON_IsObject(root))
        return rl_err(err, RL_EINVAL, "%s: expected a JSON object", name);
    /* A Hugging Face tokenizer.json describes its model as an object. */
    if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "model")))
        return tok_hf_load_root(out, root, name, err);
    int rc = check_fields(root, name, err);
    if (rc)
        return rc;
    long v;
    if (json_int(&v, cJSON_GetObjectItemCaseSensitive(root, "version"), TOK_VERSION, TOK_VERSION,
                 name, "field version", err))
        return RL_EINVAL;
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    if (!cJSON_IsString(model) || strcmp(model->valuestring, TOK_MODEL))
        return rl_err(err, RL_EINVAL, "%s: field model: expected \"%s\"", name, TOK_MODEL);
    const cJSON *pre = cJSON_GetObjectItemCaseSensitive(root, "pretokenizer");
    if (!cJSON_IsString(pre) || strcmp(pre->valuestring, TOK_PRETOKENIZER))
        return rl_err(err, RL_EINVAL, "%s: field pretokenizer: expected \"%s\"", name,
                      TOK_PRETOKENIZER);
    int32_t *merges;
    int m = 0;
    rc = load_merges(&merges, &m, cJSON_GetObjectItemCaseSensitive(root, "merges"), name, err);
    if (rc)
        return rc;
    tok_t *t = tok_alloc();
    if (!t) {
        free(merges);
        return rl_err(err, RL_ENOMEM, "%s: out of memory", name);
    }
    rc = tok_set_merges(t, merges, m, name, err);
    if (!rc)
        rc = load_specials(t, cJSON_GetObjectItemCaseSensitive(root, "special_tokens"), name, err);
    if (!rc && json_int(&v, cJSON_GetObjectItemCaseSensitive(root, "vocab_size"), t->vocab,
                        t->vocab, name, "field vocab_size (256 + merges + special tokens)", err))
        rc = RL_EINVAL;
    if (rc) {
        tok_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int tok_load_json(tok_t **out, const char *json, size_t len, const char *name, char *err)
{
    *out = NULL;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
    if (!root) {
        size_t at = end && end >= json ? (size_t)(end - json) : 0;
        return rl_err(err, RL_EPARSE, "%s: not valid JSON (error near byte %zu)", name, at);
    }
    int rc = load_root(out, root, name, err);
    cJSON_Delete(root);
    return rc;
}

int tok_load(tok_t **out, const char *path, char *err)
{
    *out = NULL;
    char *data;
    size_t len;
    int rc = fs_read_file(&data, &len, path, RL_TOK_FILE_MAX, err);
    if (rc)
        return rc;
    rc = tok_load_json(out, data, len, path, err);
    free(data);
    return rc;
}

int tok_to_json(char **out, size_t *len, const tok_t *t, char *err)
{
    *out = NULL;
    if (t->kind != TOK_KIND_BUILTIN)
        return rl_err(err, RL_EINVAL, "tokenizer: a Hugging Face tokenizer is not saved in the "
                      "built-in format (keep its tokenizer.json)");
    buf_t b;
    buf_init(&b, RL_TOK_FILE_MAX);
    int rc = buf_printf(&b,
                        "{\n  \"version\": %d,\n  \"model\": \"%s\",\n  \"pretokenizer\": \"%s\",\n"
                        "  \"vocab_size\": %d,\n  \"special_tokens\": [",
                        TOK_VERSION, TOK_MODEL, TOK_PRETOKENIZER, t->vocab);
    for (size_t k = 0; k < t->spec.n && !rc; k++) {
        rc = buf_printf(&b, "%s\n    {\"id\": %d, \"content\": \"", k ? "," : "",
                        t->first_special + (int)k);
        /* printable ASCII only (checked on add): escape " and \ */
        for (const char *p = t->spec.text[k]; *p && !rc; p++)
            rc = (*p == '"' || *p == '\\') ? buf_printf(&b, "\\%c", *p) : buf_putc(&b, *p);
        if (!rc)
            rc = buf_puts(&b, "\"}");
    }
    if (!rc)
        rc = buf_puts(&b, t->spec.n ? "\n  ],\n  \"merges\": [" : "],\n  \"merges\": [");
    for (int i = 0; i < t->nmerges && !rc; i++)
        rc = buf_printf(&b, "%s\n    [%d, %d]", i ? "," : "", t->merges[2 * i], t->merges[2 * i + 1]);
    if (!rc)
        rc = buf_puts(&b, t->nmerges ? "\n  ]\n}\n" : "]\n}\n");
    if (rc) {
        buf_dispose(&b);
        return rl_err(err, rc, "tokenizer: cannot build the JSON form (%s)", rl_strerror(rc));
    }
    *out = buf_detach(&b, len);
    return 0;
}

int tok_save(const tok_t *t, const char *path, char *err)
{
    char *json;
    size_t len;
    int rc = tok_to_json(&json, &len, t, err);
    if (rc)
        return rc;
    rc = fs_write_atomic(path, json, len, err);
    free(json);
    return rc;
}

/* ======================================================================
 * 6. Trainer
 *
 * The corpus is reduced to its distinct pieces with counts ("words"). A
 * word's ids start as its bytes and shrink in place as merges apply. Pair
 * counts (summed over words, weighted by word counts) live in a hash map;
 * each pair also keeps the list of words it occurred in. A merge visits
 * only those words and updates the counts of the pairs it destroys and
 * creates; the changed pairs are pushed on a max-heap whose stale entries
 * (count no longer current) are skipped when popped. Ties go to the
 * smallest (a, b), so the result does not depend on the input order.
 * ====================================================================== */

typedef struct word {
    uint64_t hash;
    uint64_t count;
    uint32_t off;  /* bytes at arena[off], ids at ids[off] */
    uint16_t len;  /* bytes; then current number of ids */
    uint32_t stamp; /* last merge that visited this word, + 1 */
} word;

typedef struct pair {
    int32_t a, b;
    int64_t count;
    uint32_t *words; /* words the pair was created in (may be stale) */
    uint32_t nw, cw;
    uint32_t stamp; /* last merge that changed the count, + 1 */
} pair;

typedef struct heap_ent {
    int64_t count;
    uint32_t pair;
} heap_ent;

struct tok_trainer {
    tok_train_opts opts;
    specset spec;
    /* distinct pieces */
    unsigned char *arena;
    size_t arena_len, arena_cap;
    word *words;
    size_t nwords, cwords;
    uint32_t *wslots; /* word index + 1 */
    size_t wmask;
    tok_train_stats stats;
    /* pairs, used by finish */
    int32_t *ids;
    pair *pairs;
    size_t npairs, cpairs;
    uint64_t *pkeys;
    uint32_t *pvals;
    size_t pmask;
    heap_ent *heap;
    size_t nheap, cheap;
    uint32_t *touched;
    size_t ntouched, ctouched;
    int finished;
};

tok_train_opts tok_train_opts_default(void)
{
    tok_train_opts o = {0};
    o.vocab_size = 4096;
    o.min_frequency = 2;
    return o;
}

int tok_trainer_new(tok_trainer_t **out, const tok_train_opts *opts, char *err)
{
    *out = NULL;
    tok_trainer_t *tr = calloc(1, sizeof *tr);
    if (!tr)
        return rl_err(err, RL_ENOMEM, "tokenizer trainer: out of memory");
    tr->opts = opts ? *opts : tok_train_opts_default();
    const char *const *sp = tr->opts.specials ? tr->opts.specials : TOK_DEFAULT_SPECIALS;
    size_t nsp = tr->opts.specials ? tr->opts.nspecials : TOK_DEFAULT_SPECIALS_N;
    int rc = 0;
    for (size_t i = 0; i < nsp && !rc; i++)
        rc = specset_add(&tr->spec, sp[i], err);
    for (size_t i = 0; i < tr->opts.nextra_specials && !rc; i++)
        rc = specset_add(&tr->spec, tr->opts.extra_specials[i], err);
    long merges = (long)tr->opts.vocab_size - 256 - (long)tr->spec.n;
    if (!rc && (merges < 0 || tr->opts.vocab_size > RL_TOK_VOCAB_MAX))
        rc = rl_err(err, RL_EINVAL, "tokenizer trainer: vocab size %d: expected %zu..%d",
                    tr->opts.vocab_size, 256 + tr->spec.n, RL_TOK_VOCAB_MAX);
    if (!rc && tr->opts.min_frequency < 1)
        rc = rl_err(err, RL_EINVAL, "tokenizer trainer: min frequency %d: expected >= 1",
                    tr->opts.min_frequency);
    tr->wmask = (1u << 16) - 1;
    if (!rc && !(tr->wslots = calloc(tr->wmask + 1, sizeof *tr->wslots)))
        rc = rl_err(err, RL_ENOMEM, "tokenizer trainer: out of memory");
    if (rc) {
        tok_trainer_free(tr);
        return rc;
    }
    *out = tr;
    return 0;
}

void tok_trainer_free(tok_trainer_t *tr)
{
    if (!tr)
        return;
    specset_free(&tr->spec);
    free(tr->arena);
    free(tr->words);
    free(tr->wslots);
    free(tr->ids);
    for (size_t i = 0; i < tr->npairs; i++)
        free(tr->pairs[i].words);
    free(tr->pairs);
    free(tr->pkeys);
    free(tr->pvals);
    free(tr->heap);
    free(tr->touched);
    free(tr);
}

static int words_rehash(tok_trainer_t *tr)
{
    size_t slots = (tr->wmask + 1) * 2;
    uint32_t *s = calloc(slots, sizeof *s);
    if (!s)
        return RL_ENOMEM;
    for (size_t w = 0; w < tr->nwords; w++) {
        size_t i = tr->words[w].hash & (slots - 1);
        while (s[i])
            i = (i + 1) & (slots - 1);
        s[i] = (uint32_t)w + 1;
    }
    free(tr->wslots);
    tr->wslots = s;
    tr->wmask = slots - 1;
    return 0;
}

/* Counts one occurrence of a piece. Distinct pieces and their bytes are
 * at most the bytes fed (RL_TOK_TRAIN_BYTES_MAX). */
static int words_add(tok_trainer_t *tr, const unsigned char *p, size_t n)
{
    uint64_t h = hash_bytes(p, n);
    size_t i = h & tr->wmask;
    for (; tr->wslots[i]; i = (i + 1) & tr->wmask) {
        word *w = &tr->words[tr->wslots[i] - 1];
        if (w->hash == h && w->len == n && !memcmp(tr->arena + w->off, p, n)) {
            w->count++;
            return 0;
        }
    }
    int rc = VEC_GROW(tr->words, tr->cwords, tr->nwords + 1, RL_TOK_TRAIN_BYTES_MAX);
    if (!rc)
        rc = VEC_GROW(tr->arena, tr->arena_cap, tr->arena_len + n, RL_TOK_TRAIN_BYTES_MAX);
    if (rc)
        return rc;
    memcpy(tr->arena + tr->arena_len, p, n);
    tr->words[tr->nwords] = (word){h, 1, (uint32_t)tr->arena_len, (uint16_t)n, 0};
    tr->arena_len += n;
    tr->wslots[i] = (uint32_t)++tr->nwords;
    if (tr->nwords * 2 > tr->wmask)
        return words_rehash(tr);
    return 0;
}

int tok_trainer_feed(tok_trainer_t *tr, const char *text, size_t len, char *err)
{
    if (tr->finished)
        return rl_err(err, RL_EINVAL, "tokenizer trainer: feed after finish");
    if (len > RL_TOK_TRAIN_BYTES_MAX || tr->stats.bytes + len > RL_TOK_TRAIN_BYTES_MAX)
        return rl_err(err, RL_ELIMIT, "tokenizer trainer: more than %u bytes of training text",
                      RL_TOK_TRAIN_BYTES_MAX);
    const unsigned char *s = (const unsigned char *)text;
    for (size_t pos = 0; pos < len;) {
        long which;
        size_t at = tok_specset_next(&tr->spec, s, len, pos, &which);
        for (size_t i = pos; i < at;) {
            size_t j = tok_pretoken_next(text, at, i);
            int rc = words_add(tr, s + i, j - i);
            if (rc == RL_ELIMIT)
                return rl_err(err, rc, "tokenizer trainer: more than %u bytes of distinct pieces",
                              RL_TOK_TRAIN_BYTES_MAX);
            if (rc)
                return rl_err(err, rc, "tokenizer trainer: out of memory");
            tr->stats.pieces++;
            i = j;
        }
        if (which >= 0) {
            at += tr->spec.len[which];
            tr->stats.tokens++; /* a special token is one token */
        }
        pos = at;
    }
    tr->stats.bytes += len;
    return 0;
}

static int pairs_rehash(tok_trainer_t *tr)
{
    size_t slots = tr->pkeys ? (tr->pmask + 1) * 2 : 1 << 16;
    uint64_t *k = malloc(slots * sizeof *k);
    uint32_t *v = malloc(slots * sizeof *v);
    if (!k || !v) {
        free(k);
        free(v);
        return RL_ENOMEM;
    }
    memset(k, 0xff, slots * sizeof *k);
    for (size_t p = 0; p < tr->npairs; p++) {
        uint64_t key = pair_key(tr->pairs[p].a, tr->pairs[p].b);
        size_t i = mix64(key) & (slots - 1);
        while (k[i] != UINT64_MAX)
            i = (i + 1) & (slots - 1);
        k[i] = key;
        v[i] = (uint32_t)p;
    }
    free(tr->pkeys);
    free(tr->pvals);
    tr->pkeys = k;
    tr->pvals = v;
    tr->pmask = slots - 1;
    return 0;
}

/* Index of pair (a, b), created with count 0 if new; or RL_ELIMIT (more
 * than RL_TOK_TRAIN_ENTRIES_MAX pairs) or RL_ENOMEM. */
static long pair_get(tok_trainer_t *tr, int32_t a, int32_t b)
{
    uint64_t key = pair_key(a, b);
    size_t i = mix64(key) & tr->pmask;
    for (; tr->pkeys[i] != UINT64_MAX; i = (i + 1) & tr->pmask)
        if (tr->pkeys[i] == key)
            return tr->pvals[i];
    int rc = VEC_GROW(tr->pairs, tr->cpairs, tr->npairs + 1, RL_TOK_TRAIN_ENTRIES_MAX);
    if (rc)
        return rc;
    tr->pairs[tr->npairs] = (pair){a, b, 0, NULL, 0, 0, 0};
    tr->pkeys[i] = key;
    tr->pvals[i] = (uint32_t)tr->npairs;
    tr->npairs++;
    if (tr->npairs * 2 > tr->pmask && pairs_rehash(tr))
        return RL_ENOMEM;
    return (long)tr->npairs - 1;
}

/* Adds d to the count of (a, b) during merge number `stamp - 1`; records
 * the pair as touched, and word w (if >= 0) as a place where it occurs. */
static int pair_delta(tok_trainer_t *tr, int32_t a, int32_t b, int64_t d, long w, uint32_t stamp)
{
    long pi = pair_get(tr, a, b);
    if (pi < 0)
        return (int)pi;
    pair *p = &tr->pairs[pi];
    p->count += d;
    if (p->stamp != stamp) {
        p->stamp = stamp;
        int rc = VEC_GROW(tr->touched, tr->ctouched, tr->ntouched + 1, RL_TOK_TRAIN_ENTRIES_MAX);
        if (rc)
            return rc;
        tr->touched[tr->ntouched++] = (uint32_t)pi;
    }
    if (w >= 0 && (p->nw == 0 || p->words[p->nw - 1] != (uint32_t)w)) {
        size_t cw = p->cw; /* 32-bit in the pair: the cap is below UINT32_MAX */
        int rc = VEC_GROW(p->words, cw, (size_t)p->nw + 1, RL_TOK_TRAIN_ENTRIES_MAX);
        p->cw = (uint32_t)cw;
        if (rc)
            return rc;
        p->words[p->nw++] = (uint32_t)w;
    }
    return 0;
}

/* Heap order: higher count first, then smaller (a, b). */
static int heap_before(const tok_trainer_t *tr, heap_ent x, heap_ent y)
{
    if (x.count != y.count)
        return x.count > y.count;
    const pair *p = &tr->pairs[x.pair], *q = &tr->pairs[y.pair];
    if (p->a != q->a)
        return p->a < q->a;
    return p->b < q->b;
}

static int heap_push(tok_trainer_t *tr, uint32_t pi)
{
    int rc = VEC_GROW(tr->heap, tr->cheap, tr->nheap + 1, RL_TOK_TRAIN_ENTRIES_MAX);
    if (rc)
        return rc;
    heap_ent e = {tr->pairs[pi].count, pi};
    size_t i = tr->nheap++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (!heap_before(tr, e, tr->heap[up]))
            break;
        tr->heap[i] = tr->heap[up];
        i = up;
    }
    tr->heap[i] = e;
    return 0;
}

static heap_ent heap_pop(tok_trainer_t *tr)
{
    heap_ent top = tr->heap[0], last = tr->heap[--tr->nheap];
    size_t i = 0, n = tr->nheap;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && heap_before(tr, tr->heap[c + 1], tr->heap[c]))
            c++;
        if (!heap_before(tr, tr->heap[c], last))
            break;
        tr->heap[i] = tr->heap[c];
        i = c;
    }
    if (n)
        tr->heap[i] = last;
    return top;
}

/* Replaces every (a, b) in word w by z, left to right, updating the counts
 * of the pairs around each replacement: (x, a) becomes (x, z) and (b, y)
 * becomes (z, y). The left neighbour x is read from the already-rewritten
 * output, so in "abab" the second replacement turns the (z, a) counted by
 * the first into (z, z), and "aaaa" under (a, a) ends as one (z, z). */
static int merge_word(tok_trainer_t *tr, uint32_t wi, int32_t a, int32_t b, int32_t z,
                      uint32_t stamp)
{
    word *w = &tr->words[wi];
    int32_t *ids = tr->ids + w->off;
    int64_t c = (int64_t)w->count;
    size_t n = w->len, i = 0, j = 0;
    int rc = 0;
    while (i < n && !rc) {
        if (i + 1 < n && ids[i] == a && ids[i + 1] == b) {
            rc = pair_delta(tr, a, b, -c, -1, stamp);
            if (!rc && j > 0) {
                rc = pair_delta(tr, ids[j - 1], a, -c, -1, stamp);
                if (!rc)
                    rc = pair_delta(tr, ids[j - 1], z, c, wi, stamp);
            }
            if (!rc && i + 2 < n) {
                rc = pair_delta(tr, b, ids[i + 2], -c, -1, stamp);
                if (!rc)
                    rc = pair_delta(tr, z, ids[i + 2], c, wi, stamp);
            }
            ids[j++] = z;
            i += 2;
        } else {
            ids[j++] = ids[i++];
        }
    }
    w->len = (uint16_t)j;
    return rc;
}

static int train_init_pairs(tok_trainer_t *tr)
{
    tr->ids = malloc((tr->arena_len + 1) * sizeof *tr->ids);
    if (!tr->ids || pairs_rehash(tr))
        return RL_ENOMEM;
    for (size_t i = 0; i < tr->arena_len; i++)
        tr->ids[i] = tr->arena[i];
    int rc = 0;
    for (size_t wi = 0; wi < tr->nwords && !rc; wi++) {
        word *w = &tr->words[wi];
        const int32_t *ids = tr->ids + w->off;
        for (size_t i = 0; i + 1 < w->len && !rc; i++)
            rc = pair_delta(tr, ids[i], ids[i + 1], (int64_t)w->count, (long)wi, 0);
    }
    tr->ntouched = 0;
    for (size_t p = 0; p < tr->npairs && !rc; p++)
        if (tr->pairs[p].count > 0)
            rc = heap_push(tr, (uint32_t)p);
    return rc;
}

/* One merge: rewrites the words holding the pair, then re-pushes every
 * pair whose count changed. */
static int train_merge(tok_trainer_t *tr, uint32_t pi, int32_t z)
{
    uint32_t stamp = (uint32_t)(z - 256) + 1;
    int32_t a = tr->pairs[pi].a, b = tr->pairs[pi].b;
    uint32_t *list = tr->pairs[pi].words, nw = tr->pairs[pi].nw;
    tr->pairs[pi].words = NULL;
    tr->pairs[pi].nw = tr->pairs[pi].cw = 0;
    tr->ntouched = 0;
    int rc = 0;
    for (uint32_t k = 0; k < nw && !rc; k++) {
        word *w = &tr->words[list[k]];
        if (w->stamp == stamp)
            continue;
        w->stamp = stamp;
        rc = merge_word(tr, list[k], a, b, z, stamp);
    }
    free(list);
    for (size_t k = 0; k < tr->ntouched && !rc; k++)
        if (tr->pairs[tr->touched[k]].count > 0)
            rc = heap_push(tr, tr->touched[k]);
    return rc;
}

static int train_run(tok_trainer_t *tr, int32_t *merges, int target, int *done)
{
    int rc = train_init_pairs(tr);
    int m = 0;
    while (!rc && m < target && tr->nheap) {
        heap_ent e = heap_pop(tr);
        pair *p = &tr->pairs[e.pair];
        if (e.count != p->count || p->count <= 0)
            continue; /* stale */
        if (p->count < tr->opts.min_frequency)
            break;
        merges[2 * m] = p->a;
        merges[2 * m + 1] = p->b;
        rc = train_merge(tr, e.pair, 256 + m);
        m++;
    }
    *done = m;
    return rc;
}

int tok_trainer_finish(tok_t **out, tok_train_stats *stats, tok_trainer_t *tr, char *err)
{
    *out = NULL;
    if (tr->finished)
        return rl_err(err, RL_EINVAL, "tokenizer trainer: finish called twice");
    tr->finished = 1;
    int target = tr->opts.vocab_size - 256 - (int)tr->spec.n;
    int32_t *merges = malloc(((size_t)target * 2 + 1) * sizeof *merges);
    if (!merges)
        return rl_err(err, RL_ENOMEM, "tokenizer trainer: out of memory");
    int m = 0;
    int rc = train_run(tr, merges, target, &m);
    if (rc) {
        free(merges);
        if (rc == RL_ELIMIT)
            return rl_err(err, rc, "tokenizer trainer: more than %u pairs, occurrences or heap "
                          "entries while merging", RL_TOK_TRAIN_ENTRIES_MAX);
        return rl_err(err, rc, "tokenizer trainer: out of memory while merging");
    }
    tok_t *t = tok_alloc();
    if (!t) {
        free(merges);
        return rl_err(err, RL_ENOMEM, "tokenizer trainer: out of memory");
    }
    rc = tok_set_merges(t, merges, m, "tokenizer trainer", err);
    for (size_t k = 0; k < tr->spec.n && !rc; k++) {
        int32_t id = tok_add_special(t, tr->spec.text[k], err);
        rc = id < 0 ? id : 0;
    }
    if (rc) {
        tok_free(t);
        return rc;
    }
    tr->stats.uniq = tr->nwords;
    tr->stats.merges = m;
    for (size_t wi = 0; wi < tr->nwords; wi++)
        tr->stats.tokens += tr->words[wi].count * tr->words[wi].len;
    if (stats)
        *stats = tr->stats;
    *out = t;
    return 0;
}

int tok_train(tok_t **out, const char *text, size_t len, const tok_train_opts *opts, char *err)
{
    *out = NULL;
    tok_trainer_t *tr;
    int rc = tok_trainer_new(&tr, opts, err);
    if (rc)
        return rc;
    rc = tok_trainer_feed(tr, text, len, err);
    if (!rc)
        rc = tok_trainer_finish(out, NULL, tr, err);
    tok_trainer_free(tr);
    return rc;
}
