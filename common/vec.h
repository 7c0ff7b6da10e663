/* vec.h - growable arrays with a hard cap on their length.
 *
 * Two forms, one growth rule (double, at least 16 elements, never past
 * the cap):
 * - vec_t owns its elements: a generic array of `elem`-byte elements,
 *   read back typed with VEC_AT, e.g.
 *       vec_t v; vec_init(&v, sizeof(int), 1000);
 *       int x = 7; rc = vec_push(&v, &x);    (0, RL_ELIMIT or RL_ENOMEM)
 *       VEC_AT(&v, int, 0) == 7; vec_dispose(&v);
 * - VEC_GROW grows the array of a struct that keeps its own pointer and
 *   counts (`T *v; size_t n, alloc;`):
 *       if ((rc = VEC_GROW(s->v, s->alloc, s->n + 1, MAX)) < 0) return rc;
 *       s->v[s->n++] = x;
 * Growing past the cap fails with RL_ELIMIT and leaves the array as it was.
 */
#ifndef RL_VEC_H
#define RL_VEC_H

#include <stddef.h>

typedef struct vec {
    void *data;   /* NULL until the first growth */
    size_t len;   /* elements in use */
    size_t alloc; /* elements allocated */
    size_t elem;  /* bytes per element */
    size_t max;   /* cap on len; 0 means RL_VEC_DEFAULT_MAX */
} vec_t;

void vec_init(vec_t *v, size_t elem, size_t max);
/* Frees the elements; v is empty (and reusable) afterwards. */
void vec_dispose(vec_t *v);
/* Keeps the memory, forgets the elements. */
void vec_clear(vec_t *v);
/* Room for n elements in all. Returns 0, RL_ELIMIT (n past the cap) or
 * RL_ENOMEM. */
int vec_reserve(vec_t *v, size_t n);
/* Appends a copy of the elem bytes at x. Returns as vec_reserve. */
int vec_push(vec_t *v, const void *x);
/* Appends a zeroed element and points *slot at it. Returns as vec_reserve. */
int vec_add(vec_t *v, void **slot);
/* Hands the elements to the caller (NULL when empty); v is empty after. */
void *vec_detach(vec_t *v, size_t *len);

#define VEC_AT(v, T, i) (((T *)(v)->data)[i])

/* Grows the array *pp (of elem-byte elements, *alloc of them allocated)
 * to hold need elements, at most max. pp is the address of the array's
 * pointer (a T **). Returns 0, RL_ELIMIT or RL_ENOMEM. */
int vec_grow(void *pp, size_t *alloc, size_t need, size_t elem, size_t max);
#define VEC_GROW(p, alloc, need, max) vec_grow(&(p), &(alloc), (need), sizeof *(p), (max))

#endif
