/* membomb.c - allocates and touches 1 MB blocks until allocation fails,
 * then prints how many MB it got and exits 3. argv[1]: stop after N MB
 * (exit 0) instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    long stop = argc > 1 ? atol(argv[1]) : -1;
    long mb = 0;
    for (;;) {
        if (stop >= 0 && mb >= stop) {
            printf("allocated %ld MB\n", mb);
            return 0;
        }
        char *p = malloc(1 << 20);
        if (!p) {
            printf("allocation failed after %ld MB\n", mb);
            return 3;
        }
        memset(p, 0x5a, 1 << 20);
        mb++;
    }
}
