/* memhold.c - starts N (argv[1]) children that each allocate and touch M
 * MB (argv[2]) and hold it for a second; prints how many held it, then
 * exits 0 if all did, else 1. Under a limit of the whole tree they cannot all hold it. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 8;
    long mb = argc > 2 ? atol(argv[2]) : 100;
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0)
            break;
        if (pid == 0) {
            volatile char *p = malloc((size_t)mb << 20);
            if (!p)
                _exit(3);
            for (size_t k = 0; k < (size_t)mb << 20; k += 4096)
                p[k] = 0x5a; /* volatile: the pages are really touched */
            sleep(1);
            _exit(0);
        }
    }
    int held = 0, st;
    while (wait(&st) > 0)
        held += WIFEXITED(st) && WEXITSTATUS(st) == 0;
    printf("held %d of %d\n", held, n);
    return held == n ? 0 : 1;
}
