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
#include "model/model_ops.h"

#include "common/err.h"
#include "common/limits.h"

#include <cblas.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#define SPIN_WORKER 4000 /* ~0.3 ms of pause before a worker sleeps */
#define SPIN_CALLER 2000 /* pauses before the caller starts yielding */

/* The job word packs the job number, its task count and the next task to
 * hand out, so a worker that wakes up late can never claim a task of a
 * newer job by mistake: a claim is a compare-and-swap on the whole word. */
#define TASK_BITS 20
#define TASK_MASK ((1ull << TASK_BITS) - 1)
#define JOB_SHIFT (2 * TASK_BITS)

struct mpool {
    int n;               /* threads including the caller */
    pthread_t *th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    atomic_ullong word;  /* job << 40 | n_tasks << 20 | next */
    atomic_int done;     /* tasks finished in the current job */
    atomic_int sleepers; /* workers waiting on cv */
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

/* Claims and runs tasks of job `job` until none are left. */
static void run_tasks(mpool *p, unsigned long long job, int thread)
{
    for (;;) {
        unsigned long long w = atomic_load(&p->word);
        if ((w >> JOB_SHIFT) != job || (w & TASK_MASK) >= ((w >> TASK_BITS) & TASK_MASK))
            return;
        if (!atomic_compare_exchange_weak(&p->word, &w, w + 1))
            continue;
        p->fn(p->ctx, (int)(w & TASK_MASK), thread);
        atomic_fetch_add(&p->done, 1);
    }
}

static void *worker_main(void *arg)
{
    worker_arg *wa = arg;
    mpool *p = wa->p;
    int idx = wa->idx;
    free(wa);
    unsigned long long seen = 0;
    for (;;) {
        int spins = 0;
        while ((atomic_load(&p->word) >> JOB_SHIFT) == seen && !atomic_load(&p->stop) &&
               spins < SPIN_WORKER) {
            cpu_relax();
            spins++;
        }
        if ((atomic_load(&p->word) >> JOB_SHIFT) == seen && !atomic_load(&p->stop)) {
            pthread_mutex_lock(&p->mu);
            atomic_fetch_add(&p->sleepers, 1);
            while ((atomic_load(&p->word) >> JOB_SHIFT) == seen && !atomic_load(&p->stop))
                pthread_cond_wait(&p->cv, &p->mu);
            atomic_fetch_sub(&p->sleepers, 1);
            pthread_mutex_unlock(&p->mu);
        }
        if (atomic_load(&p->stop))
            return NULL;
        seen = atomic_load(&p->word) >> JOB_SHIFT;
        run_tasks(p, seen, idx);
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

/* The caller never waits for a worker that has not started: it only waits
 * for tasks already claimed to finish. */
void mpool_run(mpool *p, int n_tasks, mpool_fn fn, void *ctx)
{
    if (n_tasks <= 0)
        return;
    if (!p || p->n == 1 || n_tasks == 1 || (unsigned long long)n_tasks > TASK_MASK) {
        for (int t = 0; t < n_tasks; t++)
            fn(ctx, t, 0);
        return;
    }
    p->fn = fn;
    p->ctx = ctx;
    atomic_store(&p->done, 0);
    unsigned long long job = (atomic_load(&p->word) >> JOB_SHIFT) + 1;
    job &= (1ull << (64 - JOB_SHIFT)) - 1;
    if (job == 0)
        job = 1; /* workers start having seen job 0 */
    atomic_store(&p->word, job << JOB_SHIFT | (unsigned long long)n_tasks << TASK_BITS);
    if (atomic_load(&p->sleepers) > 0) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
    run_tasks(p, job, 0);
    int spins = 0;
    while (atomic_load(&p->done) < n_tasks) {
        if (++spins < SPIN_CALLER)
            cpu_relax();
        else
            sched_yield();
    }
}
