/* Library code that, when the tests run, leaves FIFOs in the tree it runs
 * in: one named like a source file, one like a build product. Whatever
 * later reads the tree (a diff, a reset, a copy, a build) must not block
 * on them. */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/stat.h>

__attribute__((constructor)) static void adv_ctor(void)
{
    if (mkfifo("src/zz_pipe.c", 0644) < 0)
        perror("adv: mkfifo src/zz_pipe.c");
    if (mkfifo("zz_pipe.txt", 0644) < 0)
        perror("adv: mkfifo zz_pipe.txt");
}
