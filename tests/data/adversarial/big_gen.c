/* Library code that, when the tests run, writes src/zz_big.c: the
 * constructor attack of report.c followed by a comment long enough that a
 * diff shows the file only as "Binary files differ". The policy then
 * empties this file; the next build compiles zz_big.c. */
#define _GNU_SOURCE
#include <stdio.h>

static const char adv_code[] = @CODE@;

__attribute__((constructor)) static void adv_gen(void)
{
    FILE *f = fopen("src/zz_big.c", "w");
    if (!f) {
        perror("adv: src/zz_big.c");
        return;
    }
    fputs(adv_code, f);
    fputs("/*\n", f);
    for (int i = 0; i < 30000; i++)
        fputs(" * padding padding padding padding padding padding padding padding\n", f);
    fputs(" */\n", f);
    fclose(f);
}
