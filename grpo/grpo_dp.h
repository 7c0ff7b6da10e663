/* grpo_dp.h - data-parallel training over MPI: the only module that calls
 * MPI, so the rest of the trainer calls plain functions that are no-ops
 * (or copies) at one rank.
 *
 * A build finds MPI at build time (the Makefile asks `mpicc --showme`) and
 * then compiles this module with RL_HAVE_MPI; without it dp_init fails with
 * RL_EUNSUP and every other function behaves as rank 0 of 1.
 *
 * dp_init starts MPI only when asked (`want`) or when the process was
 * started by mpirun (OpenMPI's OMPI_COMM_WORLD_SIZE or PMIx's PMIX_RANK in
 * the environment), so a plain `grpo train` never touches MPI. Errors are
 * fatal to the whole job (MPI_ERRORS_ARE_FATAL): a rank that dies or calls
 * dp_abort ends every rank instead of leaving them in a collective.
 */
#ifndef RL_GRPO_DP_H
#define RL_GRPO_DP_H

#include <stddef.h>
#include <stdint.h>

/* 1 when the build has MPI. */
int dp_available(void);
/* 1 when the environment says this process was started by mpirun with
 * *size ranks (size may be NULL); 0 otherwise. */
int dp_launched(int *size);
/* Starts MPI when want is set or dp_launched says so; RL_EUNSUP (with the
 * one line) when that is needed and the build has no MPI. */
int dp_init(int want, char *err);
/* Ends MPI (collective; a no-op when dp_init did not start it). */
void dp_finalize(void);
/* Ends every rank of the job with exit code `code` (exit at one rank). */
void dp_abort(int code) __attribute__((noreturn));

int dp_rank(void);
int dp_size(void);
/* Ranks of this machine and this rank's index among them
 * (OMPI_COMM_WORLD_LOCAL_SIZE / _LOCAL_RANK; 1 and 0 without MPI). */
int dp_local_size(void);
int dp_local_rank(void);

/* Element-wise sums and maxima over all ranks, in place. */
int dp_allreduce_sum_f(float *buf, size_t n, char *err);
int dp_allreduce_sum_d(double *buf, size_t n, char *err);
int dp_allreduce_max_d(double *buf, size_t n, char *err);
/* Rank root's n bytes to every rank. */
int dp_bcast(void *buf, size_t n, int root, char *err);
/* Every rank's n bytes of buf, concatenated in rank order, to every rank:
 * *out (malloc'ed, caller frees) holds *out_n bytes and offs[r] (size+1
 * entries, caller's) where rank r's part starts. */
int dp_allgather_bytes(char **out, size_t *out_n, size_t *offs, const void *buf, size_t n, char *err);
/* FNV-1a 64 of n bytes (the parameter hash compared across ranks). */
uint64_t dp_hash(const void *buf, size_t n);

#endif
