/* diskfill.c - writes argv[1] until a write fails (SIGXFSZ ignored, so
 * the file-size cap shows as EFBIG); prints the bytes written and errno. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    signal(SIGXFSZ, SIG_IGN);
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        printf("open failed: %s\n", strerror(errno));
        return 1;
    }
    static char buf[1 << 16];
    long total = 0;
    for (;;) {
        ssize_t n = write(fd, buf, sizeof buf);
        if (n <= 0) {
            printf("wrote %ld bytes, then %s\n", total, n < 0 ? strerror(errno) : "short write");
            return 0;
        }
        total += n;
    }
}
