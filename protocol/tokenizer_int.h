/* tokenizer_int.h - the tok_t object as tokenizer.c and tokenizer_hf.c
 * share it. Not part of the protocol layer's interface. */
#ifndef RL_TOKENIZER_INT_H
#define RL_TOKENIZER_INT_H

#include "protocol/tokenizer.h"

#include <pthread.h>
#include <stdint.h>

/* Special-token texts and a first-byte filter, shared by encode and the
 * trainer (both cut special text out before pre-tokenizing). */
typedef struct specset {
    char **text;
    size_t *len;
    size_t n, text_alloc, len_alloc;
    unsigned char first[256]; /* 1 if some special starts with this byte */
} specset;

/* Cache of piece -> ids for short pieces. Entries live in one arena:
 * [u32 hash][u16 klen][u16 nids][key, padded to 4][int32 ids...]. */
typedef struct piece_cache {
    pthread_mutex_t mu;
    uint32_t *slots; /* arena offset + 1, 0 = empty */
    size_t mask;
    size_t used;
    unsigned char *arena;
    size_t arena_len;
} piece_cache;

#define CACHE_SLOTS (1u << 17)

struct tok {
    int nmerges;
    int32_t *merges; /* 2 * nmerges */
    specset spec;
    int32_t first_special; /* = 256 + nmerges */
    /* bytes of every id: id i is bytes[off[i] .. off[i] + len[i]) */
    uint32_t *off;
    uint16_t *len;
    size_t off_alloc, len_alloc;
    char *bytes;
    size_t bytes_len, bytes_cap;
    int vocab; /* 256 + nmerges + nspecials */
    /* merge rank map: pair_key(a, b) -> rank, open addressing */
    uint64_t *rk_keys;
    int32_t *rk_vals;
    size_t rk_mask;
    piece_cache *cache;
    /* What differs between the built-in and a Hugging Face tokenizer. */
    tok_kind_t kind;
    int32_t byte_id[256];       /* id of each single byte */
    int32_t *merge_out;         /* id merge r makes; NULL: 256 + r */
    int32_t *spec_id;           /* id of special k; NULL: first_special + k */
    unsigned char *spec_strip;  /* per special: 1 lstrip, 2 rstrip (HF) */
    size_t spec_cap_id, spec_cap_strip;
    unsigned char *is_added;    /* per id: 1 for an added token (HF) */
    int pretok;                 /* TOK_HF_PRE_* of tokenizer_hf.c */
    int nfc;                    /* 1: NFC-normalize text between added tokens */
};

/* Output of the encoder: ids, or only their count. Every id covers at
 * least one byte of the text, so there are at most RL_TOK_TEXT_MAX. */
typedef struct tok_idvec {
    int32_t *v;
    size_t n, cap;
    int count_only;
} tok_idvec;

tok_t *tok_alloc(void);
/* Room for vocab ids: 0, RL_ELIMIT or RL_ENOMEM. */
int tok_grow_ids(tok_t *t, int vocab);
/* Sets the bytes of id (room made by tok_grow_ids). */
int tok_push_bytes(tok_t *t, int32_t id, const char *p, size_t n);
/* The message of a failed tok_grow_ids or tok_push_bytes. */
int tok_grow_err(char *err, int rc, const char *name);
/* Adds special text k without the built-in's ASCII rule (HF added tokens). */
int tok_specset_add_raw(specset *s, const char *text, size_t n, const char *name, char *err);
/* First special at or after pos (n if none); its index in *which. */
size_t tok_specset_next(const specset *s, const unsigned char *p, size_t n, size_t pos, long *which);
/* Encodes one pre-token piece (any length) into out. */
int tok_encode_piece(const tok_t *t, piece_cache *cache, const unsigned char *p, size_t n,
                     tok_idvec *out);
int tok_idvec_push(tok_idvec *o, const int32_t *ids, size_t k);

/* Builds the pair -> rank map of t->merges; refuses a repeated pair. */
int tok_rank_map(tok_t *t, const char *name, char *err);

/* tokenizer_hf.c */
int tok_hf_load_root(tok_t **out, const void *root, const char *name, char *err);
int tok_hf_encode(const tok_t *t, piece_cache *cache, const unsigned char *s, size_t n,
                  tok_mode mode, tok_idvec *out);

#endif
