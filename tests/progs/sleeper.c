/* sleeper.c - sleeps in a loop forever, ignoring SIGTERM and SIGINT. */
#include <signal.h>
#include <unistd.h>

int main(void)
{
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    for (;;)
        sleep(1);
}
