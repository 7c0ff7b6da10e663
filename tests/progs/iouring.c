/* iouring.c - tries io_uring_setup (io_uring can open sockets without
 * socket(2)); prints "io_uring: ERR" or "io_uring: ok". */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_io_uring_setup
#define SYS_io_uring_setup 425
#endif

int main(void)
{
    unsigned char params[120];
    memset(params, 0, sizeof params);
    long fd = syscall(SYS_io_uring_setup, 8, params);
    printf("io_uring: %s\n", fd < 0 ? strerror(errno) : "ok");
    return fd < 0 ? 0 : 1;
}
