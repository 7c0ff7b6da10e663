/* netconnect.c - tries to reach 127.0.0.1:PORT over tcp or udp (argv[1],
 * argv[2]) and io_uring; prints one line per attempt: "socket: ERR" or
 * "connect: ERR" or "sent" / "connected". */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    int udp = !strcmp(argv[1], "udp");
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)atoi(argv[2]));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, udp ? SOCK_DGRAM : SOCK_STREAM, 0);
    if (fd < 0) {
        printf("socket: %s\n", strerror(errno));
    } else if (udp) {
        ssize_t n = sendto(fd, "ping", 4, 0, (struct sockaddr *)&a, sizeof a);
        printf(n == 4 ? "sent\n" : "sendto: %s\n", strerror(errno));
    } else {
        int r = connect(fd, (struct sockaddr *)&a, sizeof a);
        printf(r == 0 ? "connected\n" : "connect: %s\n", strerror(errno));
    }
    /* A raw socket and an IPv6 one too. */
    fd = socket(AF_INET6, SOCK_STREAM, 0);
    printf("socket6: %s\n", fd < 0 ? strerror(errno) : "ok");
    fd = socket(AF_NETLINK, SOCK_RAW, 0);
    printf("netlink: %s\n", fd < 0 ? strerror(errno) : "ok");
    int sv[2];
    printf("unix: %s\n", socketpair(AF_UNIX, SOCK_STREAM, 0, sv) ? strerror(errno) : "ok");
    return 0;
}
