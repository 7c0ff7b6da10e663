/* tokenizer.h - byte-level BPE tokenizer of the built-in policy.
 *
 * Ids 0..255 are the 256 byte values, so every byte string is encodable
 * (invalid UTF-8 and NUL bytes included) and decoding returns the exact
 * bytes. Ids 256..256+M-1 are the M learned merges, in the order they were
 * learned: merge i joins two earlier ids into id 256+i. Special tokens
 * (<|im_start|>, <think>, ...) take the ids after the merges and are
 * matched in text as single ids unless the caller asks for plain text.
 *
 * Text is first cut into pieces by a hand-written pre-tokenizer ("code-v1",
 * GPT-style): runs of letters (A-Z a-z _ and any byte >= 0x80) with an
 * optional leading space, 1-3 digits, punctuation runs with an optional
 * leading space and trailing newlines, whitespace up to the last newline,
 * indentation runs (the last space goes to the next word). Merges never
 * cross pieces. Pieces are at most RL_TOK_PIECE_MAX bytes.
 *
 * Encoding applies, inside each piece, the lowest-ranked merge present
 * (leftmost first) until none applies, the standard BPE rule; results of
 * short pieces are cached. A tok_t may be shared by threads: encode and
 * decode only read it (the cache is guarded); tok_add_special is a write
 * and must not run concurrently with them.
 *
 * Stored as JSON:
 *   {"version": 1, "model": "byte-bpe", "pretokenizer": "code-v1",
 *    "vocab_size": N, "merges": [[a, b], ...],
 *    "special_tokens": [{"id": I, "content": "<|im_start|>"}, ...]}
 *
 * tok_load also reads a Hugging Face tokenizer.json of the byte-level BPE
 * kind (Qwen2/Qwen3, GPT-2, Llama 3; protocol/tokenizer_hf.c and
 * docs/tokenizers.md): ids are then the file's, bytes map to their
 * single-byte tokens, text between added tokens is NFC-normalized and cut
 * by the file's pre-tokenizer pattern, and every added token counts as
 * special (tok_special_id finds it, TOK_SPECIAL_ALLOW matches it in text).
 * Such a tokenizer is not saved (tok_to_json refuses) and takes no
 * tok_add_special.
 */
#ifndef RL_TOKENIZER_H
#define RL_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

typedef struct tok tok_t;

#define TOK_PRETOKENIZER "code-v1"

/* The special tokens every trained tokenizer has, in id order. */
extern const char *const TOK_DEFAULT_SPECIALS[];
extern const size_t TOK_DEFAULT_SPECIALS_N;

/* How encode treats special-token text found in the input. */
typedef enum tok_mode {
    TOK_SPECIAL_ALLOW = 0, /* "<|im_end|>" in text becomes its single id */
    TOK_SPECIAL_PLAIN = 1, /* untrusted text: everything is plain bytes */
} tok_mode;

/* Which tokenizer a tok_t is. */
typedef enum tok_kind_t {
    TOK_KIND_BUILTIN = 0, /* this project's byte-bpe / code-v1 file */
    TOK_KIND_HF = 1,      /* a Hugging Face tokenizer.json */
} tok_kind_t;

/* ---- load, save, query ------------------------------------------------ */

/* Loads and strictly validates a tokenizer file. */
int tok_load(tok_t **out, const char *path, char *err);
/* Same from a JSON text in memory (`name` names it in errors). */
int tok_load_json(tok_t **out, const char *json, size_t len, const char *name, char *err);
/* Writes the JSON form atomically (temp file + rename). */
int tok_save(const tok_t *t, const char *path, char *err);
/* The JSON form; caller frees. */
int tok_to_json(char **out, size_t *len, const tok_t *t, char *err);
void tok_free(tok_t *t);

tok_kind_t tok_kind(const tok_t *t);
/* "byte-bpe" or "huggingface". */
const char *tok_name(const tok_t *t);
int tok_vocab_size(const tok_t *t);
int tok_num_merges(const tok_t *t);
int tok_num_specials(const tok_t *t);
/* Merge i (0-based) joins ids *a and *b into id 256 + i (built-in; a
 * Hugging Face merge makes the id of the joined text). */
int tok_merge_at(const tok_t *t, int i, int32_t *a, int32_t *b);
/* Id of a special token by its text, or -1. */
int32_t tok_special_id(const tok_t *t, const char *name);
/* 1 if id is a special token. */
int tok_is_special(const tok_t *t, int32_t id);
/* Bytes of one id (not NUL-terminated), or NULL if id is out of range. */
const char *tok_id_to_bytes(const tok_t *t, int32_t id, size_t *len);
/* Appends a special token (printable ASCII, no whitespace, unique); its id
 * is the new last id. Returns the id or a negative RL_E* code. */
int32_t tok_add_special(tok_t *t, const char *name, char *err);

/* ---- encode, decode ---------------------------------------------------- */

/* Encodes len bytes of text into *ids (caller frees; NULL when *n is 0). */
int tok_encode(int32_t **ids, size_t *n, const tok_t *t, const char *text, size_t len,
               tok_mode mode, char *err);
/* Number of tokens text encodes to, without keeping them (token
 * accounting). Returns the count, or a negative RL_E* code. */
long tok_count(const tok_t *t, const char *text, size_t len, tok_mode mode, char *err);
/* Concatenated bytes of ids; *out is NUL-terminated, caller frees. */
int tok_decode(char **out, size_t *len, const tok_t *t, const int32_t *ids, size_t n, char *err);

/* End of the pre-token piece that starts at pos (pos < n): always > pos and
 * at most pos + RL_TOK_PIECE_MAX (it reads no further than that). Exposed
 * for tests and benchmarks. */
size_t tok_pretoken_next(const char *s, size_t n, size_t pos);

/* ---- training ---------------------------------------------------------- */

typedef struct tok_train_opts {
    int vocab_size;             /* total: 256 bytes + merges + specials (4096) */
    int min_frequency;          /* stop when the best pair occurs fewer times (2) */
    const char *const *specials; /* NULL: TOK_DEFAULT_SPECIALS */
    size_t nspecials;
    const char *const *extra_specials; /* appended after specials (e.g. "<|pad|>") */
    size_t nextra_specials;
} tok_train_opts;

tok_train_opts tok_train_opts_default(void);

typedef struct tok_train_stats {
    uint64_t bytes;    /* bytes fed */
    uint64_t pieces;   /* pre-token pieces (special tokens excluded) */
    uint64_t uniq;     /* distinct pieces */
    uint64_t tokens;   /* tokens the fed text encodes to with the result */
    int merges;        /* merges learned (fewer than asked if pairs ran out) */
} tok_train_stats;

/* Streaming trainer: feed documents one by one (pieces never span two
 * documents), then finish. Special-token text in the documents is cut out
 * and counted as one token, never learned from. */
typedef struct tok_trainer tok_trainer_t;

int tok_trainer_new(tok_trainer_t **out, const tok_train_opts *opts, char *err);
int tok_trainer_feed(tok_trainer_t *tr, const char *text, size_t len, char *err);
/* Learns the merges; the trainer can then only be freed. stats may be NULL. */
int tok_trainer_finish(tok_t **out, tok_train_stats *stats, tok_trainer_t *tr, char *err);
void tok_trainer_free(tok_trainer_t *tr);

/* One-shot: train on one document. */
int tok_train(tok_t **out, const char *text, size_t len, const tok_train_opts *opts, char *err);

#endif
