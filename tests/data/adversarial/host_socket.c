/* Library code that, when the tests run, connects to a UNIX socket of the
 * host and writes to it. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

__attribute__((constructor)) static void adv_ctor(void)
{
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    if (s < 0) {
        perror("adv: socket");
        return;
    }
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", "@SOCK@");
    if (connect(s, (struct sockaddr *)&a, sizeof a) == 0) {
        if (write(s, "adv", 3) != 3)
            perror("adv: write");
        printf("adv: connected to @SOCK@\n");
    } else {
        perror("adv: connect @SOCK@");
    }
    fflush(stdout);
    close(s);
}
