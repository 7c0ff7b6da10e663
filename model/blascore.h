/* blascore.h - use the OpenBLAS kernels the CPU supports.
 *
 * A DYNAMIC_ARCH OpenBLAS (Debian 12's 0.3.21) picks its kernel set from the
 * CPU model number. On a CPU whose model it does not know (a VM reporting a
 * generic "Intel(R) Xeon(R) Processor") it falls back to Prescott's SSE3
 * kernels even when AVX-512 is there: measured on a 2-core VM, sgemm ran at
 * 37 GFLOP/s instead of 302 and model training 4x slower. The kernel set is
 * fixed when the library loads, before main, and only the environment
 * variable OPENBLAS_CORETYPE changes it; so the fix is to set it and run the
 * program again.
 *
 * The set is chosen from the instructions the CPU and the OS support
 * (__builtin_cpu_supports checks both): SkylakeX for AVX-512 F/BW/DQ/VL,
 * Haswell for AVX2 + FMA, which are the instructions those kernels use.
 * Nothing happens when OPENBLAS_CORETYPE is already set (by the user, or by
 * the first run) or when RL_BLAS_CORE=keep. RL_BLAS_CORE=assume:NAME acts as
 * if OpenBLAS had picked NAME (how the tests reach the re-exec on a CPU that
 * OpenBLAS knows).
 */
#ifndef RL_BLASCORE_H
#define RL_BLASCORE_H

/* The kernel set to ask for, given the one OpenBLAS picked (`current`, as
 * openblas_get_corename() names it) and what the CPU supports; NULL when
 * `current` is already as new as the CPU allows, or a name this does not
 * know (left alone). Pure: the tests call it with made-up CPUs. */
const char *blascore_pick(const char *current, int has_avx512, int has_avx2_fma);

/* What this CPU and its OS support: AVX-512 F/BW/DQ/VL, AVX2 + FMA (both 0
 * off x86). */
void blascore_cpu(int *has_avx512, int *has_avx2_fma);

/* The kernel set this process should ask for, or NULL (see blascore_pick;
 * also NULL when OPENBLAS_CORETYPE is set or RL_BLAS_CORE=keep). */
const char *blascore_wanted(void);

/* Call first thing in main. When blascore_wanted() names a kernel set, sets
 * OPENBLAS_CORETYPE and executes /proc/self/exe again with the same argv;
 * it returns only if there is nothing to do (0) or the exec failed
 * (negative; the program goes on with the kernels it has). */
int blascore_reexec(char **argv);

#endif
