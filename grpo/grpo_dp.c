/* grpo_dp.c - the MPI calls of data-parallel training (grpo_dp.h). */
#include "grpo/grpo_dp.h"

#include "common/err.h"
#include "common/limits.h"

#include <stdlib.h>
#include <string.h>

#ifdef RL_HAVE_MPI
#include <mpi.h>
#endif

#ifdef RL_HAVE_MPI
static int g_started; /* dp_init started MPI */
#endif
static int g_rank, g_size = 1;

int dp_available(void)
{
#ifdef RL_HAVE_MPI
    return 1;
#else
    return 0;
#endif
}

static int env_int(const char *name, int dflt)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end;
    long v = strtol(s, &end, 10);
    return *end || v < 0 || v > 1 << 24 ? dflt : (int)v;
}

int dp_launched(int *size)
{
    int n = env_int("OMPI_COMM_WORLD_SIZE", 0);
    if (n == 0 && getenv("PMIX_RANK"))
        n = env_int("PMIX_SIZE", 1);
    if (size)
        *size = n > 0 ? n : 1;
    return n > 0;
}

int dp_init(int want, char *err)
{
    int n;
    int launched = dp_launched(&n);
    if (!want && !launched)
        return 0;
#ifdef RL_HAVE_MPI
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
            return rl_err(err, RL_EIO, "MPI_Init failed: expected a job started by mpirun");
        g_started = 1;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    return 0;
#else
    (void)err;
    if (!want && n <= 1)
        return 0; /* one process under mpirun: plain training */
    return rl_err(err, RL_EUNSUP,
                  "data-parallel training: this build has no MPI (install openmpi-bin and libopenmpi-dev, then "
                  "rebuild)%s",
                  launched ? "; started by mpirun" : "");
#endif
}

void dp_finalize(void)
{
#ifdef RL_HAVE_MPI
    if (g_started) {
        MPI_Finalize();
        g_started = 0;
    }
#endif
    g_rank = 0;
    g_size = 1;
}

void dp_abort(int code)
{
#ifdef RL_HAVE_MPI
    if (g_size > 1)
        MPI_Abort(MPI_COMM_WORLD, code);
#endif
    exit(code);
}

int dp_rank(void) { return g_rank; }
int dp_size(void) { return g_size; }

int dp_local_size(void)
{
    if (g_size <= 1)
        return 1;
    int n = env_int("OMPI_COMM_WORLD_LOCAL_SIZE", 0);
    if (n == 0)
        n = env_int("PMIX_LOCAL_SIZE", 1);
    return n > 0 ? n : 1;
}

int dp_local_rank(void)
{
    if (g_size <= 1)
        return 0;
    int r = env_int("OMPI_COMM_WORLD_LOCAL_RANK", -1);
    if (r < 0)
        r = env_int("PMIX_LOCAL_RANK", g_rank);
    return r;
}

#ifdef RL_HAVE_MPI
/* MPI counts are ints: large buffers go in pieces of this many elements. */
#define DP_CHUNK (1u << 28)

static int allreduce(void *buf, size_t n, size_t esz, MPI_Datatype t, MPI_Op op, char *err)
{
    for (size_t at = 0; at < n; at += DP_CHUNK) {
        size_t k = n - at < DP_CHUNK ? n - at : DP_CHUNK;
        if (MPI_Allreduce(MPI_IN_PLACE, (char *)buf + at * esz, (int)k, t, op, MPI_COMM_WORLD) != MPI_SUCCESS)
            return rl_err(err, RL_EIO, "MPI_Allreduce of %zu values failed", n);
    }
    return 0;
}
#endif

int dp_allreduce_sum_f(float *buf, size_t n, char *err)
{
#ifdef RL_HAVE_MPI
    if (g_size > 1)
        return allreduce(buf, n, sizeof *buf, MPI_FLOAT, MPI_SUM, err);
#endif
    (void)buf, (void)n, (void)err;
    return 0;
}

int dp_allreduce_sum_d(double *buf, size_t n, char *err)
{
#ifdef RL_HAVE_MPI
    if (g_size > 1)
        return allreduce(buf, n, sizeof *buf, MPI_DOUBLE, MPI_SUM, err);
#endif
    (void)buf, (void)n, (void)err;
    return 0;
}

int dp_allreduce_max_d(double *buf, size_t n, char *err)
{
#ifdef RL_HAVE_MPI
    if (g_size > 1)
        return allreduce(buf, n, sizeof *buf, MPI_DOUBLE, MPI_MAX, err);
#endif
    (void)buf, (void)n, (void)err;
    return 0;
}

int dp_bcast(void *buf, size_t n, int root, char *err)
{
#ifdef RL_HAVE_MPI
    if (g_size > 1)
        for (size_t at = 0; at < n; at += DP_CHUNK) {
            size_t k = n - at < DP_CHUNK ? n - at : DP_CHUNK;
            if (MPI_Bcast((char *)buf + at, (int)k, MPI_BYTE, root, MPI_COMM_WORLD) != MPI_SUCCESS)
                return rl_err(err, RL_EIO, "MPI_Bcast of %zu bytes failed", n);
        }
#endif
    (void)buf, (void)n, (void)root, (void)err;
    return 0;
}

int dp_allgather_bytes(char **out, size_t *out_n, size_t *offs, const void *buf, size_t n, char *err)
{
    *out = NULL;
    *out_n = 0;
    if (n > RL_GRPO_DP_GATHER_MAX)
        return rl_err(err, RL_ELIMIT, "data-parallel exchange: %zu bytes from one rank, at most %u", n,
                      (unsigned)RL_GRPO_DP_GATHER_MAX);
    if (g_size <= 1) {
        if (!(*out = malloc(n ? n : 1)))
            return rl_err(err, RL_ENOMEM, "data-parallel exchange: out of memory");
        if (n)
            memcpy(*out, buf, n);
        *out_n = n;
        offs[0] = 0;
        offs[1] = n;
        return 0;
    }
#ifdef RL_HAVE_MPI
    int *cnt = malloc((size_t)g_size * sizeof *cnt), *dsp = malloc((size_t)g_size * sizeof *dsp);
    int mine = (int)n, rc = 0;
    if (!cnt || !dsp) {
        rc = rl_err(err, RL_ENOMEM, "data-parallel exchange: out of memory");
        goto done;
    }
    if (MPI_Allgather(&mine, 1, MPI_INT, cnt, 1, MPI_INT, MPI_COMM_WORLD) != MPI_SUCCESS) {
        rc = rl_err(err, RL_EIO, "MPI_Allgather of the exchange sizes failed");
        goto done;
    }
    size_t total = 0;
    for (int r = 0; r < g_size; r++) {
        offs[r] = total;
        total += (size_t)cnt[r];
    }
    offs[g_size] = total;
    if (total > (size_t)0x7fffffff) {
        rc = rl_err(err, RL_ELIMIT, "data-parallel exchange: %zu bytes over all ranks, more than MPI counts", total);
        goto done;
    }
    for (int r = 0; r < g_size; r++)
        dsp[r] = (int)offs[r];
    if (!(*out = malloc(total ? total : 1))) {
        rc = rl_err(err, RL_ENOMEM, "data-parallel exchange: out of memory for %zu bytes", total);
        goto done;
    }
    if (MPI_Allgatherv(buf, mine, MPI_BYTE, *out, cnt, dsp, MPI_BYTE, MPI_COMM_WORLD) != MPI_SUCCESS) {
        free(*out);
        *out = NULL;
        rc = rl_err(err, RL_EIO, "MPI_Allgatherv of %zu bytes failed", total);
        goto done;
    }
    *out_n = total;
done:
    free(cnt);
    free(dsp);
    return rc;
#else
    return rl_err(err, RL_EUNSUP, "data-parallel exchange: this build has no MPI");
#endif
}

uint64_t dp_hash(const void *buf, size_t n)
{
    const unsigned char *p = buf;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}
