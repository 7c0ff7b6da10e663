/* mutate.h - procedural bug injection for the task generator, in the
 * spirit of SWE-smith: small, plausible edits to upstream C or Python
 * sources (flip a comparison, drop a statement, return the wrong variable).
 *
 * mut_enumerate lexes a source text (skipping comments and strings) and
 * lists every candidate site: its kind, line, byte range in the original
 * text, replacement text and a short description. The list is
 * deterministic: the same text, language and seed give the same ordered
 * list (the seed only shuffles the order and picks among equivalent
 * choices, with our own splitmix64, never rand()). mut_apply makes the
 * mutated text for one site. Whether a mutant is a useful bug (it compiles,
 * some test fails) is for the caller's validation to decide; the lexer's
 * heuristics only keep most candidates syntactically valid.
 */
#ifndef RL_MUTATE_H
#define RL_MUTATE_H

#include <stddef.h>
#include <stdint.h>

typedef enum mut_lang { MUT_LANG_NONE, MUT_LANG_C, MUT_LANG_PY } mut_lang;

typedef enum mut_kind {
    MUT_FLIP_CMP,     /* < <= > >= == != : boundary or equality flipped */
    MUT_FLIP_BOOL,    /* && <-> ||, and <-> or */
    MUT_ARITH,        /* + - * / % (and compound assignments) changed */
    MUT_CONST,        /* an integer constant shifted by one */
    MUT_LOOP_BOUND,   /* a loop bound shifted by one (for condition, range()) */
    MUT_SWAP_CMP,     /* operands of an ordering comparison swapped */
    MUT_SWAP_ARGS,    /* arguments of a two-argument call swapped */
    MUT_NEGATE_COND,  /* if / while condition negated */
    MUT_DROP_COND,    /* one side of a && / || condition dropped */
    MUT_DROP_STMT,    /* a simple one-line statement dropped */
    MUT_WRONG_RETURN, /* return a -> return b, b another variable in scope */
    /* Function-level rewrites: each replaces a whole statement or construct,
     * usually over several lines. */
    MUT_DROP_GUARD,     /* a guard clause (if with a lone return/raise/break/continue) removed */
    MUT_SWAP_BRANCHES,  /* the bodies of an if/else swapped */
    MUT_SWAP_STMTS,     /* two adjacent simple statements sharing a name swapped */
    MUT_MOVE_BREAK,     /* a loop's `if ..: break` guard moved above the statement before it */
    MUT_DEFAULT_RETURN, /* one of several returns gives 0 / NULL / None / False instead */
    MUT_DROP_ELIF,      /* a whole else-if / elif branch dropped */
    MUT_KIND_COUNT
} mut_kind;

/* Sets of kinds, as bit masks (1u << kind). The operator kinds are the
 * first MUT_KIND_OPS; mut_enumerate lists those only, so that its order
 * for a seed does not depend on the rewrites. */
#define MUT_KIND_OPS ((int)MUT_DROP_GUARD)
#define MUT_MASK_OPS ((1u << MUT_KIND_OPS) - 1u)
#define MUT_MASK_ALL ((1u << MUT_KIND_COUNT) - 1u)
#define MUT_MASK_REWRITES (MUT_MASK_ALL & ~MUT_MASK_OPS)

typedef struct mut_site {
    mut_kind kind;
    int line;          /* 1-based line of `start` */
    size_t start, end; /* byte range of the original text that is replaced */
    char *repl;        /* replacement text */
    char *desc;        /* e.g. "flip_cmp: '<' -> '<=' in is_leap() at line 12" */
    char *func;        /* enclosing function, or NULL at file level */
} mut_site;

typedef struct mut_list {
    mut_site *v;
    size_t n;
} mut_list;

/* C for .c/.h, Python for .py, else MUT_LANG_NONE. */
mut_lang mut_lang_of_path(const char *path);

/* 1 if the path looks like a test or test-support file: a path component
 * named tests/ or test/, test_*.py, *_test.py, *_test.c, test_*.c,
 * conftest.py. The generator mutates only other files; this helper does
 * not filter anything by itself. */
int mut_is_test_path(const char *path);

/* Every candidate site of text (len bytes, at most RL_MUT_SRC_MAX), in the
 * seed's order: kinds interleaved round-robin so that the first sites are
 * varied, each kind's sites shuffled. Fills out (possibly empty). */
int mut_enumerate(mut_list *out, const char *text, size_t len, mut_lang lang, uint64_t seed, char *err);
/* The same for the kinds in mask (MUT_MASK_*, or 1u << kind ORed): the
 * round-robin goes over those kinds only, so a mask gives the same order
 * for a seed whatever kinds exist outside it. RL_EINVAL for an empty mask. */
int mut_enumerate_kinds(mut_list *out, const char *text, size_t len, mut_lang lang, uint64_t seed,
                        unsigned mask, char *err);
void mut_list_dispose(mut_list *l);

/* The text with one site applied; *out is NUL-terminated, caller frees. */
int mut_apply(char **out, size_t *out_len, const char *text, size_t len, const mut_site *s, char *err);

const char *mut_kind_name(mut_kind k);
/* Name -> kind; -1 for an unknown name. */
int mut_kind_from_name(const char *name);
/* A set of kinds from "ops", "rewrites", "all" or a comma-separated list
 * of kind names into *mask; RL_EINVAL naming the unknown word. */
int mut_mask_parse(unsigned *mask, const char *spec, char *err);

#endif
