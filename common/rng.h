/* rng.h - splitmix64, the one small generator behind every seeded choice
 * (bug mutations, report statistics, the model's xoshiro seeding).
 * Ours rather than rand(): the same seed gives the same numbers on every
 * libc, so generated tasks and reports reproduce exactly. */
#ifndef RL_RNG_H
#define RL_RNG_H

#include <stdint.h>

/* Advance *state and return the next 64 random bits. */
static inline uint64_t rl_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#endif
