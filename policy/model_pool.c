/* model_pool.c - the model's thread pool.
 *
 * The model splits its matrix products and attention across a few threads
 * itself and runs OpenBLAS single-threaded inside each of them: OpenBLAS'
 * own threads and ours would otherwise fight for the same two cores.
 *
 * A job is a function and a task count; the caller and the workers take
 * task indices from an atomic counter until none are left. Workers spin
 * briefly before sleeping on a condition variable, because a decoding step
 * issues dozens of short jobs back to back and a futex wake-up per job
 * would cost more than the work.
 */
#include "policy/model_ops.h"

#include "common/err.h"
#include "common/limits.h"

#include <cblas.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#define SPIN_WORKER 4000 /* ~0.3 ms of pause before a worker sleeps */
#define SPIN_CALLER 2000 /* pauses before the caller starts yielding */

struct mpool {
    int n;               /* threads including the caller */
    pthread_t *th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    atomic_ulong gen;    /* bumped once per job */
    atomic_int next;     /* next task index */
    atomic_int active;   /* workers still inside the current job */
    int n_tasks;
    mpool_fn fn;
    void *ctx;
    atomic_int stop;
};

typedef struct worker_arg {
    mpool *p;
    int idx;
} worker_arg;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void run_tasks(mpool *p, int thread)
{
    for (;;) {
        int t = atomic_fetch_add(&p->next, 1);
        if (t >= p->n_tasks)
            break;
        p->fn(p->ctx, t, thread);
    }
}

static void *worker_main(void *arg)
{
    worker_arg *wa = arg;
    mpool *p = wa->p;
    int idx = wa->idx;
    free(wa);
    unsigned long seen = 0;
    for (;;) {
        int spins = 0;
        while (atomic_load(&p->gen) == seen && !atomic_load(&p->stop) && spins < SPIN_WORKER) {
            cpu_relax();
            spins++;
        }
        if (atomic_load(&p->gen) == seen && !atomic_load(&p->stop)) {
            pthread_mutex_lock(&p->mu);
            while (atomic_load(&p->gen) == seen && !atomic_load(&p->stop))
                pthread_cond_wait(&p->cv, &p->mu);
            pthread_mutex_unlock(&p->mu);
        }
        if (atomic_load(&p->stop))
            return NULL;
        seen = atomic_load(&p->gen);
        run_tasks(p, idx);
        atomic_fetch_sub(&p->active, 1);
    }
}

int mpool_new(mpool **out, int n_threads, char *err)
{
    *out = NULL;
    if (n_threads < 1 || n_threads > RL_MODEL_THREADS_MAX)
        return rl_err(err, RL_EINVAL, "model threads: %d, expected 1..%d", n_threads,
                      RL_MODEL_THREADS_MAX);
    mpool *p = calloc(1, sizeof *p);
    if (!p)
        return rl_err(err, RL_ENOMEM, "model thread pool: out of memory");
    p->n = n_threads;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    /* Our threads each call single-threaded sgemm. */
    openblas_set_num_threads(1);
    if (n_threads > 1) {
        p->th = calloc((size_t)n_threads - 1, sizeof *p->th);
        if (!p->th) {
            mpool_free(p);
            return rl_err(err, RL_ENOMEM, "model thread pool: out of memory");
        }
        for (int i = 1; i < n_threads; i++) {
            worker_arg *wa = malloc(sizeof *wa);
            if (wa) {
                wa->p = p;
                wa->idx = i;
            }
            if (!wa || pthread_create(&p->th[i - 1], NULL, worker_main, wa) != 0) {
                free(wa);
                p->n = i; /* only threads 1..i-1 exist */
                mpool_free(p);
                return rl_err(err, RL_EIO, "model thread pool: cannot start thread %d", i);
            }
        }
    }
    *out = p;
    return 0;
}

void mpool_free(mpool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->stop, 1);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 1; i < p->n; i++)
        pthread_join(p->th[i - 1], NULL);
    free(p->th);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p);
}

int mpool_threads(const mpool *p)
{
    return p ? p->n : 1;
}

void mpool_run(mpool *p, int n_tasks, mpool_fn fn, void *ctx)
{
    if (n_tasks <= 0)
        return;
    if (!p || p->n == 1 || n_tasks == 1) {
        for (int t = 0; t < n_tasks; t++)
            fn(ctx, t, 0);
        return;
    }
    p->fn = fn;
    p->ctx = ctx;
    p->n_tasks = n_tasks;
    atomic_store(&p->next, 0);
    atomic_store(&p->active, p->n - 1);
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add(&p->gen, 1);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    run_tasks(p, 0);
    int spins = 0;
    while (atomic_load(&p->active) > 0) {
        if (++spins < SPIN_CALLER)
            cpu_relax();
        else
            sched_yield();
    }
}
