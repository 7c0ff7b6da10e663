/* vec.c - growable arrays with a hard cap. */
#include "common/vec.h"

#include "common/err.h"
#include "common/limits.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int vec_grow(void *pp, size_t *alloc, size_t need, size_t elem, size_t max)
{
    if (need <= *alloc)
        return 0;
    if (need > max || need > SIZE_MAX / elem)
        return RL_ELIMIT;
    size_t n = *alloc < 8 ? 16 : *alloc * 2;
    if (n < need)
        n = need;
    if (n > max)
        n = max;
    if (n > SIZE_MAX / elem)
        n = need;
    void *old;
    memcpy(&old, pp, sizeof old);
    void *p = realloc(old, n * elem);
    if (!p)
        return RL_ENOMEM;
    memcpy(pp, &p, sizeof p);
    *alloc = n;
    return 0;
}

void vec_init(vec_t *v, size_t elem, size_t max)
{
    memset(v, 0, sizeof *v);
    v->elem = elem ? elem : 1;
    v->max = max ? max : RL_VEC_DEFAULT_MAX;
}

void vec_dispose(vec_t *v)
{
    free(v->data);
    v->data = NULL;
    v->len = v->alloc = 0;
}

void vec_clear(vec_t *v)
{
    v->len = 0;
}

int vec_reserve(vec_t *v, size_t n)
{
    return vec_grow(&v->data, &v->alloc, n, v->elem, v->max);
}

int vec_add(vec_t *v, void **slot)
{
    int rc = vec_reserve(v, v->len + 1);
    if (rc < 0)
        return rc;
    char *p = (char *)v->data + v->len * v->elem;
    memset(p, 0, v->elem);
    v->len++;
    *slot = p;
    return 0;
}

int vec_push(vec_t *v, const void *x)
{
    void *slot;
    int rc = vec_add(v, &slot);
    if (rc < 0)
        return rc;
    memcpy(slot, x, v->elem);
    return 0;
}

void *vec_detach(vec_t *v, size_t *len)
{
    void *p = v->len ? v->data : NULL;
    if (!p)
        free(v->data);
    if (len)
        *len = v->len;
    v->data = NULL;
    v->len = v->alloc = 0;
    return p;
}
