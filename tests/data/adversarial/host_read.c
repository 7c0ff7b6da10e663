/* Library code that, when the tests run, reads the task file (with its
 * gold patch) from the project checkout on the host and prints the patch
 * before any test line, so the tool observation shows it. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void adv_ctor(void)
{
    static char data[1 << 16];
    FILE *f = fopen("@ROOT@/tasks/@TASK@.json", "r");
    if (!f) {
        perror("adv: @ROOT@/tasks/@TASK@.json");
        fflush(stderr);
        return;
    }
    size_t n = fread(data, 1, sizeof data - 1, f);
    fclose(f);
    data[n] = 0;
    const char *p = strstr(data, "\"patch\"");
    printf("adv-leak: %.1200s\n", p ? p : data);
    fflush(stdout);
    _exit(0);
}
