/* search.h - internals of the search policy (policy/search*.c).
 *
 * The search policy is a repair agent that only sees the context text. It
 * keeps what it learned from the tool responses in an search_state: the files
 * it has read (reconstructed line by line from read_file output), the
 * failing tests and their messages, the names the failure implicates and
 * how far each is from the failing test (its level), and the candidate
 * repairs it has tried. The pieces:
 *
 *   search_obs.c   parsers of the observations: run_tests summaries,
 *                  read_file listings, search hits, the context itself
 *   search_code.c  a small C/Python scanner: tokens, function definitions,
 *                  names a body calls or refers to
 *   search_cand.c  candidate repairs (corpus/mutate.h sites plus a few
 *                  kinds of its own), their edit blocks and their ranking
 *   search.c       the policy: the state machine and the replies
 *
 * Every parse is bounded (common/limits.h, "search policy") and tolerant:
 * an observation it cannot read leaves the state as it was.
 */
#ifndef RL_SEARCH_H
#define RL_SEARCH_H

#include "corpus/mutate.h"

#include "common/limits.h"

#include <stddef.h>
#include <stdint.h>

/* ---- observations (search_obs.c) ---------------------------------------- */

/* One failing test from a run_tests summary. */
typedef struct search_fail {
    char *name;   /* as reported ("test_x", "tests/t.py::test_x[1]") */
    char *msg;    /* its message, continuation lines included (capped) */
    size_t msg_alloc; /* bytes allocated at msg (at most RL_SEARCH_MSG_MAX + 2) */
} search_fail;

/* A parsed run_tests observation. */
typedef struct search_result {
    int parsed;       /* the "N passed, M failed" line was found */
    long passed, failed;
    int ran;          /* at least one test reported, no stop or build error */
    int cut;          /* part of the observation was cut: names may be missing */
    search_fail *fail;
    size_t nfail;
} search_result;

void search_result_dispose(search_result *r);
/* Parses a run_tests observation (never fails: an unreadable one gives
 * parsed = 0). */
void search_parse_tests(search_result *out, const char *obs);
/* 1 when name is one of r's failing tests. */
int search_result_has(const search_result *r, const char *name);

/* A file as far as read_file showed it. */
typedef struct search_file {
    char *path;
    char **line;      /* line[i] is line i+1 without its newline; NULL: not seen */
    size_t n;         /* lines in the file, as the tool reported */
    mut_lang lang;
    int is_test;      /* a test or test-support file: never edited */
    int stale;        /* an edit failed or was not confirmed: read it again */
    int wanted;       /* it holds a definition the failure implicates */
    int level;        /* best level of a name defined in it (for ordering) */
} search_file;

/* Lines [from, to] (1-based) of a read_file observation for path.
 * Returns 0 and fills the listing's lines into f (creating its line array
 * on first use), or -1 when the observation is not a listing. Lines next
 * to a cut marker are dropped (they may be partial). */
int search_parse_read(search_file *f, const char *obs);
/* 1 when every line of f is known. */
int search_file_complete(const search_file *f);
/* The file text (lines joined with '\n', a final '\n'); NULL when
 * incomplete. Caller frees. */
char *search_file_text(const search_file *f, size_t *len);
/* First and last unknown line (1-based), 0 when complete. */
int search_file_gap(const search_file *f, size_t *from, size_t *to);
/* Replaces the file's lines with those of text (after a confirmed edit). */
int search_file_set_text(search_file *f, const char *text, size_t len);
void search_file_dispose(search_file *f);

/* One search hit: "path:line: text". */
typedef struct search_hit {
    char *path;
    int line;
    char *text;
} search_hit;

/* Parses a search observation into hits (at most max, and at most
 * RL_SEARCH_HITS_MAX). */
size_t search_parse_search(search_hit **out, const char *obs, size_t max);
void search_hits_free(search_hit *h, size_t n);

/* The tool responses of the last user turn of ctx, in order. Returns the
 * count (0 when the context ends with no tool response); *out holds
 * copies, caller frees each and the array. */
size_t search_last_responses(char ***out, const char *ctx, size_t len);
/* The system prompt of ctx (without the tools section); caller frees. */
char *search_system_prompt(const char *ctx, size_t len);
/* 1 when a system prompt spells out the verify loop: run the tests first,
 * run them again after an edit, submit only once they pass. */
int search_prompt_wants_verify(const char *prompt);

/* ---- code (search_code.c) ------------------------------------------------ */

typedef enum { SR_T_IDENT, SR_T_NUM, SR_T_PUNCT, SR_T_STR, SR_T_CHAR } search_tok_kind;

typedef struct search_tok {
    search_tok_kind kind;
    int line;        /* 1-based */
    size_t s, e;     /* byte range in the text */
} search_tok;

/* Tokens of a C or Python text, comments skipped (strings are one token).
 * At most max tokens, and at most RL_SEARCH_TOKENS_MAX. Returns the count;
 * *out is malloc'd. */
size_t search_tokenize(search_tok **out, const char *text, size_t len, mut_lang lang, size_t max);

/* A function (or class) defined in a file. */
typedef struct search_def {
    char name[SR_NAME_MAX];
    char cls[SR_NAME_MAX];   /* enclosing Python class, "" otherwise */
    int start, end;          /* lines of the header and the last body line */
    int is_class;
    int level;               /* distance from the failing tests; SR_LEVEL_NONE */
    int reach;               /* failing tests that reach it within the levels */
} search_def;

#define SR_LEVEL_NONE 99

/* Definitions in text; at most max, and at most RL_SEARCH_DEFS_MAX.
 * Returns the count. */
size_t search_find_defs(search_def **out, const char *text, size_t len, mut_lang lang, size_t max);

/* Names referred to in lines [from, to] of text: the names called (ident
 * followed by '('), and with calls_only = 0 also capitalised names (a
 * Python class used by name). Keywords and the standard library's common
 * names are left out. Appends to names (each SR_NAME_MAX), at most
 * max in total, no duplicates; returns the new count. */
size_t search_refs(char (*names)[SR_NAME_MAX], size_t n, size_t max, const char *text, size_t len,
               mut_lang lang, int from, int to, int calls_only);
/* Names in free text (a failure message, a problem statement) that look
 * like code: name( calls, snake_case or CamelCase words, Cls.method. */
size_t search_text_names(char (*names)[SR_NAME_MAX], size_t n, size_t max, const char *text);
/* 1 for names no repository defines (keywords, libc, builtins, test
 * macros): never searched. */
int search_name_ignored(const char *name);
/* 1 when line text defines name (C header "type name(" without ';',
 * Python "def name(" / "class name"). */
int search_line_defines(const char *line, const char *name);
/* Whole-word occurrence of word in s. */
int search_has_word(const char *s, const char *word);

/* ---- candidates (search_cand.c) ------------------------------------------ */

typedef struct search_cand {
    int file;            /* index into the state's files */
    int line;            /* line of the change */
    char *old_block;     /* edit_file old_string (unique in the file) */
    char *new_block;     /* edit_file new_string (unique in the result) */
    char *desc;          /* "flip '==' to '!=' in is_leap_year() at src/leapyear.c:24" */
    uint64_t key;        /* identity: file, changed lines before and after */
    uint64_t rkey;       /* identity of the reverse change */
    int score;
    uint64_t jitter;     /* seed-dependent order within a score */
    int level;
    uint64_t fn;         /* identity of the enclosing function */
} search_cand;

void search_cand_dispose(search_cand *c);

/* An ordering comparison, oriented "operand OP bound" (a literal on the
 * left is moved to the right and the operator mirrored): what the ranking
 * compares a flipped comparison with. */
typedef struct search_cmp {
    int file;                 /* file index */
    size_t off;               /* byte offset of the operator */
    int line;
    char lkey[SR_NAME_MAX];   /* "c", "rb->len"; "" when not a plain operand */
    char rkey[SR_NAME_MAX];
    int dir;                  /* -1: < or <=, +1: > or >= */
    int strict;               /* < or > */
    char rkind;               /* the bound: 'n' number, 'c' char, 's' string, 'i' name */
} search_cmp;

/* Appends the comparisons of a text (file index `file`) to *out (n used,
 * *cap allocated, at most max and at most RL_SEARCH_CMPS_MAX); returns the
 * new count. */
size_t search_find_cmps(search_cmp **out, size_t n, size_t *cap, size_t max, const char *text, size_t len,
                    mut_lang lang, int file);

/* What the ranking knows about the failure. */
typedef struct search_rank_in {
    const char *hint_text;   /* failure messages and problem statement */
    const char *problem;     /* problem statement alone */
    uint64_t seed;
    /* traceback locations in source files: "path:line" pairs */
    const char *const *loc_path;
    const int *loc_line;
    size_t nloc;
    /* lines where an attempt changed the outcome of a failing test */
    const char *const *hot_path;
    const int *hot_line;
    size_t nhot;
    /* comparisons of every source file read */
    const search_cmp *cmps;
    size_t ncmps;
    /* +1 / -1: failing tests show results one too small / too large */
    int off_by;
    /* sampling temperature: scales the seed's noise on the scores */
    double temperature;
    /* numbers the failing tests got and expected (pairs) */
    const long *got, *want;
    size_t npairs;
} search_rank_in;

/* Candidates for one complete file with its definitions (levels set).
 * Appends to *v (n entries, capacity *cap); returns the new count, capped
 * at max and at RL_SEARCH_CANDS_MAX. */
size_t search_cands_for_file(search_cand **v, size_t n, size_t *cap, size_t max, int file_index,
                         const search_file *f, const search_def *defs, size_t ndefs, const search_rank_in *in);
/* Sorts by score (high first), then jitter; a function's k-th candidate
 * loses k points first, so that one large function does not take the
 * whole budget before its neighbours get a turn. */
void search_cands_sort(search_cand *v, size_t n);
/* Seed-dependent 64-bit hash (splitmix64 of a ^ b). */
uint64_t search_mix(uint64_t a, uint64_t b);
uint64_t search_hash(const void *p, size_t n, uint64_t h);

#endif
