/* blascore.c - ask OpenBLAS for the kernels the CPU supports (see blascore.h). */
#include "model/blascore.h"

#include <cblas.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* Kernel sets older than Haswell's (no AVX2/FMA kernels): OpenBLAS's names,
 * matched without case. */
static const char *const OLD_CORES[] = {
    "katmai",  "coppermine", "northwood",   "prescott", "banias",     "core2",
    "penryn",  "dunnington", "nehalem",     "sandybridge", "atom",    "opteron",
    "barcelona", "bobcat",   "bulldozer",   "piledriver", "steamroller", "excavator",
};
/* Sets with AVX2/FMA but not the AVX-512 kernels. */
static const char *const AVX2_CORES[] = {"haswell", "zen"};

static int in_list(const char *name, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcasecmp(name, list[i]))
            return 1;
    return 0;
}

const char *blascore_pick(const char *current, int has_avx512, int has_avx2_fma)
{
    if (!current)
        return NULL;
    int rank;
    if (in_list(current, OLD_CORES, sizeof OLD_CORES / sizeof OLD_CORES[0]))
        rank = 0;
    else if (in_list(current, AVX2_CORES, sizeof AVX2_CORES / sizeof AVX2_CORES[0]))
        rank = 1;
    else
        return NULL; /* SkylakeX or newer, or unknown: leave it */
    if (has_avx512)
        return "SkylakeX";
    return has_avx2_fma && rank == 0 ? "Haswell" : NULL;
}

void blascore_cpu(int *has_avx512, int *has_avx2_fma)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    *has_avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    *has_avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    *has_avx512 = *has_avx2_fma = 0;
#endif
}

const char *blascore_wanted(void)
{
    const char *user = getenv("OPENBLAS_CORETYPE");
    if (user && *user)
        return NULL;
    const char *mode = getenv("RL_BLAS_CORE");
    if (mode && !strcmp(mode, "keep"))
        return NULL;
    const char *current = openblas_get_corename();
    if (mode && !strncmp(mode, "assume:", 7))
        current = mode + 7; /* the tests' way to reach the re-exec on any CPU */
    int avx512, avx2;
    blascore_cpu(&avx512, &avx2);
    return blascore_pick(current, avx512, avx2);
}

int blascore_reexec(char **argv)
{
    const char *want = blascore_wanted();
    if (!want)
        return 0;
    if (setenv("OPENBLAS_CORETYPE", want, 1) != 0)
        return -errno;
    execv("/proc/self/exe", argv);
    int e = errno;
    unsetenv("OPENBLAS_CORETYPE"); /* this process keeps the kernels it loaded with */
    return -e;
}
