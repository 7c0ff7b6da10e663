/* grpo_data.c - the run's tasks and the order the train tasks are drawn
 * in: a function of (seed, position) alone, so the data position is one
 * counter and a resumed run draws what the killed one would have. */
#include "grpo/grpo_int.h"

#include "common/err.h"

#include <stdlib.h>
#include <string.h>

/* Fisher-Yates over 0..n-1 from seed s (the train order of one epoch). */
static void shuffle_ids(size_t *a, size_t n, uint64_t s)
{
    for (size_t i = 0; i < n; i++)
        a[i] = i;
    for (size_t i = n; i > 1; i--) {
        s = grpo_mix(s, i);
        size_t j = (size_t)(s % i);
        size_t x = a[i - 1];
        a[i - 1] = a[j];
        a[j] = x;
    }
}

size_t grpo_draw(const grpo_strata *st, uint64_t seed, uint64_t pos, size_t *scratch)
{
    uint64_t round = pos / st->n;
    size_t k = (size_t)(pos % st->n);
    if (st->n > 1) { /* every stratum once per round, in a fresh order */
        shuffle_ids(scratch, st->n, grpo_mix(seed ^ 0x7374726174ull, round));
        k = scratch[k];
    }
    size_t nk = st->start[k + 1] - st->start[k];
    uint64_t epoch = round / nk;
    shuffle_ids(scratch, nk, grpo_mix((seed ^ 0x7461736b73ull) + k, epoch));
    return st->member[st->start[k] + scratch[round % nk]];
}

typedef struct keyed {
    const char *key;
    size_t i;
} keyed;

static int keyed_cmp(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->i > y->i) - (x->i < y->i);
}

int grpo_strata_build(grpo_strata *st, size_t **scratch, const task_set *train, int balance, char *err)
{
    size_t n = train->n;
    memset(st, 0, sizeof *st);
    keyed *ks = calloc(n, sizeof *ks);
    st->start = calloc(n + 1, sizeof *st->start);
    st->member = calloc(n, sizeof *st->member);
    *scratch = calloc(n + 1, sizeof **scratch);
    if (!ks || !st->start || !st->member || !*scratch) {
        free(ks);
        grpo_strata_dispose(st);
        free(*scratch);
        *scratch = NULL;
        return rl_err(err, RL_ENOMEM, "grpo: out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        const task *tk = train->v[i];
        ks[i].i = i;
        ks[i].key = balance == GRPO_BALANCE_MUTATION ? (tk->gen_mutation ? tk->gen_mutation : "")
                    : balance == GRPO_BALANCE_REPO   ? tk->repo
                                                     : "";
    }
    qsort(ks, n, sizeof *ks, keyed_cmp);
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || strcmp(ks[i].key, ks[i - 1].key))
            st->start[st->n++] = i;
        st->member[i] = ks[i].i;
    }
    st->start[st->n] = n;
    free(ks);
    return 0;
}

void grpo_strata_dispose(grpo_strata *st)
{
    free(st->start);
    free(st->member);
    memset(st, 0, sizeof *st);
}

int grpo_data_init(grpo_data *d, const grpo_config *c, char *err)
{
    memset(d, 0, sizeof *d);
    d->seed = c->seed;
    d->group_size = c->group_size;
    int rc = task_set_load(&d->all, c->tasks_dir, c->repos_dir, err);
    if (rc < 0)
        return rc;
    if ((rc = task_select(&d->train, &d->all, c->train_tasks, err)) < 0)
        return rc;
    if (d->train.n == 0)
        return rl_err(err, RL_EINVAL, "train_tasks \"%s\": selects no task", c->train_tasks);
    return grpo_strata_build(&d->strata, &d->scratch, &d->train, c->balance, err);
}

void grpo_data_dispose(grpo_data *d)
{
    task_select_dispose(&d->train);
    task_set_dispose(&d->all);
    grpo_strata_dispose(&d->strata);
    free(d->scratch);
    d->scratch = NULL;
}

int grpo_data_next_group(grpo_group **out, grpo_data *d, char *err)
{
    const task *tk = d->train.v[grpo_draw(&d->strata, (uint64_t)d->seed, d->data_pos++, d->scratch)];
    return grpo_group_new(out, tk, (long)d->groups_drawn++, d->group_size, err);
}
