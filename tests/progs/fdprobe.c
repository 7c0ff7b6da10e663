/* fdprobe.c - lists every open fd above 2 ("fd N" lines; "none" if
 * none) and tries to read from argv[1] if given. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int found = 0;
    for (int fd = 3; fd < 4096; fd++)
        if (fcntl(fd, F_GETFD) >= 0) {
            printf("fd %d\n", fd);
            found = 1;
        }
    if (!found)
        printf("none\n");
    if (argc > 1) {
        char buf[64];
        ssize_t n = read(atoi(argv[1]), buf, sizeof buf);
        printf("read: %zd\n", n);
    }
    return 0;
}
