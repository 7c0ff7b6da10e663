/* daemon.c - double-forks a setsid'ed daemon that writes argv[1] after
 * argv[2] ms (default 1500), then the original process exits 0 at once. */
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    long ms = argc > 2 ? atol(argv[2]) : 1500;
    if (fork() != 0)
        return 0;
    setsid();
    if (fork() != 0)
        _exit(0);
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0)
        (void)!write(fd, "escaped\n", 8);
    return 0;
}
