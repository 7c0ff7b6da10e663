/* nproc.c - forks children that sleep until it has N (argv[1]) or fork
 * fails; prints how many it got, then exits (the children stay). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int want = argc > 1 ? atoi(argv[1]) : 1000, got = 0;
    for (; got < want; got++) {
        pid_t pid = fork();
        if (pid < 0)
            break;
        if (pid == 0) {
            pause();
            _exit(0);
        }
    }
    printf("forked %d\n", got);
    fflush(stdout);
    return 0;
}
