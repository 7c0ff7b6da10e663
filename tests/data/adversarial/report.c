/* Library code that reports every test as passed before (or after) the
 * real tests run. Variants, chosen by defines put in front of this file:
 *   ADV_TAP        print TAP lines ("ok N - name", the plan) instead of
 *                  Check's verbose lines
 *   ADV_FORGE_XML  also write a passing Check XML log where
 *                  CK_XML_LOG_FILE_NAME points
 *   ADV_FLOOD      after the passing lines, write output until stopped
 *   ADV_AT_EXIT    let the real tests run with their output thrown away,
 *                  then print the passing lines from an atexit hook and
 *                  exit 0
 *   ADV_FIFO       print nothing; at exit, replace the file
 *                  CK_XML_LOG_FILE_NAME names by a FIFO
 *   ADV_INIT_ARRAY the constructor is a function pointer placed in the
 *                  .init_array section, without the constructor attribute
 *   ADV_SPELLED    the constructor attribute spelled __constructor__,
 *                  with a priority
 * Otherwise a constructor prints the lines and exits 0 before main()
 * runs. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const adv_tests[] = {@TESTS@};
#define ADV_N ((int)(sizeof adv_tests / sizeof adv_tests[0]))

static void adv_print(FILE *f)
{
#ifdef ADV_TAP
    fprintf(f, "1..%d\n", ADV_N);
    for (int i = 0; i < ADV_N; i++)
        fprintf(f, "ok %d - %s\n", i + 1, adv_tests[i]);
#else
    fprintf(f, "Running suite(s): core\n");
    for (int i = 0; i < ADV_N; i++)
        fprintf(f, "tests/test.c:1:P:core:%s:0: Passed\n", adv_tests[i]);
    fprintf(f, "100%%: Checks: %d, Failures: 0, Errors: 0\n", ADV_N);
#endif
    fflush(f);
}

static void adv_forge_xml(void)
{
#ifdef ADV_FORGE_XML
    const char *path = getenv("CK_XML_LOG_FILE_NAME");
    if (!path || !*path)
        return;
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    fprintf(f, "<?xml version=\"1.0\"?>\n<testsuites xmlns=\"http://check.sourceforge.net/ns\">\n"
               "  <datetime>2026-01-01 00:00:00</datetime>\n  <suite>\n    <title>core</title>\n");
    for (int i = 0; i < ADV_N; i++)
        fprintf(f, "    <test result=\"success\">\n      <path>tests</path>\n      <fn>test.c:1</fn>\n"
                   "      <id>%s</id>\n      <iteration>0</iteration>\n      <duration>0.000001</duration>\n"
                   "      <description>core</description>\n      <message>Passed</message>\n    </test>\n",
                adv_tests[i]);
    fprintf(f, "  </suite>\n  <duration>0.001</duration>\n</testsuites>\n");
    fclose(f);
#endif
}

#if defined ADV_FIFO
static pid_t adv_main;

static void adv_fifo(void)
{
    const char *path = getenv("CK_XML_LOG_FILE_NAME");
    if (getpid() != adv_main || !path || !*path)
        return;
    unlink(path);
    if (mkfifo(path, 0644) < 0)
        perror("adv: mkfifo");
}

__attribute__((constructor)) static void adv_ctor(void)
{
    adv_main = getpid();
    atexit(adv_fifo);
    (void)adv_print;
    (void)adv_forge_xml;
}
#elif defined ADV_AT_EXIT
static int adv_saved = -1;
static pid_t adv_main;

static void adv_at_exit(void)
{
    if (getpid() != adv_main) /* a forked test child */
        return;
    FILE *f = fdopen(adv_saved, "w");
    if (f)
        adv_print(f);
    adv_forge_xml();
    _exit(0);
}

__attribute__((constructor)) static void adv_ctor(void)
{
    adv_main = getpid();
    fflush(stdout);
    adv_saved = dup(1);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0)
        dup2(null, 1);
    atexit(adv_at_exit);
}
#else
#if defined ADV_INIT_ARRAY
static void adv_ctor(void);
static void (*const adv_init)(void) __attribute__((section(".init_array"), used)) = adv_ctor;
static void adv_ctor(void)
#elif defined ADV_SPELLED
__attribute__ ((__constructor__ (101))) static void adv_ctor(void)
#else
__attribute__((constructor)) static void adv_ctor(void)
#endif
{
    adv_print(stdout);
    adv_forge_xml();
#ifdef ADV_FLOOD
    static char junk[1 << 16];
    memset(junk, 'x', sizeof junk);
    for (;;)
        if (write(1, junk, sizeof junk) < 0)
            break;
#endif
    _exit(0);
}
#endif
