/* record.h - the turns of a trajectory record, rebuilt and validated.
 *
 * A record (docs/trajectory-schema.md) stores each turn's context, its
 * segments and its context ids either whole or as a reference to the
 * previous turn plus what the turn adds, so that a record grows linearly
 * with its turns. rec_walk rebuilds them turn by turn, holding one context,
 * one segment list and one id sequence at a time (memory linear in the
 * longest context, not in the sum of all contexts), and checks everything
 * a reader would index with: prefix references point at the previous turn,
 * segments are contiguous spans covering exactly the context, kept counts
 * and ids are in range. Schema 1 (segments always whole) and schema 2 read
 * alike.
 *
 * Every reader of record contexts or segments goes through this walker, so
 * a malformed record is refused in one place, with one line naming the
 * turn and field.
 */
#ifndef RL_RECORD_H
#define RL_RECORD_H

#include "protocol/template.h"

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

/* The schema episode records are written with. */
#define REC_SCHEMA 2

typedef struct rec_seg {
    size_t off, len;
    tpl_origin origin;
} rec_seg;

/* Origin by its record name ("system", "tools", "user", "assistant",
 * "tool", "template"); -1 for any other. */
int rec_origin(const char *name);

typedef struct rec_walk {
    /* The current turn (after rec_walk_next returned 1); the pointers stay
     * valid until the next call. */
    size_t turn;
    const cJSON *json;          /* the turn's object */
    const char *context;        /* context_len bytes; context[context_len] is NUL */
    size_t context_len;
    int context_is_prefix;      /* 1: stored as the previous turn's + append */
    const rec_seg *segs;        /* contiguous, covering [0, context_len) */
    size_t nsegs;
    size_t segs_same;           /* leading segments equal to the previous turn's */
    const int32_t *ctx_ids;     /* when has_ctx_ids */
    size_t n_ctx_ids;
    int has_ctx_ids;
    int ctx_ids_encoded;        /* 1: no sampled ids in them (the context's text
                                   tokenized segment by segment) */
    const char *generated;      /* the turn's generated text (NUL-terminated) */
    size_t generated_len;
    const int32_t *ids;         /* sampled ids, when has_ids */
    size_t n_ids;
    int has_ids;

    /* private */
    const cJSON *turns_json, *next_json;
    const char *where;
    int vocab;
    size_t nturns;
    char *text;
    size_t text_cap;
    rec_seg *segv;
    size_t segv_cap;
    int32_t *ctxv;
    size_t ctxv_cap;
    int32_t *idv;
    size_t idv_cap;
    int started;
} rec_walk;

/* Starts a walk over rec's "turns". `where` prefixes every error ("file:
 * record 3"); vocab bounds every id (0: RL_TOK_VOCAB_MAX). The record's
 * "schema" must be absent, 1 or 2. */
int rec_walk_init(rec_walk *w, const cJSON *rec, const char *where, int vocab, char *err);
/* 1: the next turn is current; 0: no more turns; < 0: the record is
 * malformed (err names the turn and the field). */
int rec_walk_next(rec_walk *w, char *err);
void rec_walk_dispose(rec_walk *w);

#endif
