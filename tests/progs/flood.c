/* flood.c - writes to stdout forever (or argv[1] bytes, then exits 0). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    long left = argc > 1 ? atol(argv[1]) : -1;
    char buf[8192];
    memset(buf, 'y', sizeof buf);
    for (int i = 63; i < (int)sizeof buf; i += 64)
        buf[i] = '\n';
    while (left != 0) {
        size_t n = left < 0 || left > (long)sizeof buf ? sizeof buf : (size_t)left;
        ssize_t w = write(1, buf, n);
        if (w <= 0)
            return 1;
        if (left > 0)
            left -= w;
    }
    return 0;
}
