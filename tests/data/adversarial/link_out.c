/* Library code that, when the tests run, replaces the buggy source file by
 * a symbolic link to the upstream copy in the project checkout on the host
 * (the file without the bug). The next build compiles the link. */
#define _GNU_SOURCE
#include <stdio.h>
#include <unistd.h>

__attribute__((constructor)) static void adv_ctor(void)
{
    if (unlink("src/@FILE@") == 0 && symlink("@ROOT@/repos/@REPO@/src/@FILE@", "src/@FILE@") == 0)
        printf("adv: src/@FILE@ now links to the host\n");
    else
        perror("adv: link");
    fflush(stdout);
}
