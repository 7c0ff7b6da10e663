/* spin.c - burns CPU forever (or for argv[1] ms of CPU, then exits 0). */
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    long ms = argc > 1 ? atol(argv[1]) : -1;
    volatile unsigned long x = 0;
    for (;;) {
        for (int i = 0; i < 1000000; i++)
            x += (unsigned long)i;
        if (ms >= 0 && clock() / (CLOCKS_PER_SEC / 1000) >= ms)
            return 0;
    }
}
