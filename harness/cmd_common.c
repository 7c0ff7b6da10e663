/* cmd_common.c - what the subcommands share to talk to a person: the log
 * callback they install in library options, and the progress line of the
 * commands that run a worker pool. */
#include "harness/cli.h"

#include "common/clock.h"
#include "common/limits.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

void cli_log(void *ctx, int level, const char *msg)
{
    (void)level;
    FILE *f = ctx ? ctx : stderr;
    fputs(msg, f);
    fputc('\n', f);
    fflush(f);
}

void cli_progress_init(cli_progress *p, int bar, const char *what)
{
    p->t0 = p->last_line = clk_s();
    p->bar = bar < 0 ? isatty(2) : bar;
    p->what = what;
}

static void fmt_dur(char *out, size_t n, double s)
{
    if (s < 0 || s > 1e7)
        snprintf(out, n, "?");
    else if (s >= 3600)
        snprintf(out, n, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
    else if (s >= 60)
        snprintf(out, n, "%dm%02ds", (int)(s / 60), (int)s % 60);
    else
        snprintf(out, n, "%ds", (int)s);
}

void cli_progress_show(void *ctx, size_t done, size_t total, const char *extra)
{
    cli_progress *p = ctx;
    double el = clk_s() - p->t0;
    char e[32], w[32];
    fmt_dur(e, sizeof e, done ? el / (double)done * (double)(total - done) : -1);
    fmt_dur(w, sizeof w, el);
    if (p->bar) {
        int width = 30, fill = total ? (int)((double)width * (double)done / (double)total) : width;
        fprintf(stderr, "\r[");
        for (int i = 0; i < width; i++)
            fputc(i < fill ? '#' : '.', stderr);
        fprintf(stderr, "] %zu/%zu %s %s elapsed %s ETA %s   ", done, total, p->what, extra ? extra : "", w, e);
        if (done == total)
            fputc('\n', stderr);
    } else if (done == total || clk_s() - p->last_line >= RL_BATCH_PLAIN_EVERY_S) {
        fprintf(stderr, "%zu/%zu %s %s elapsed %s ETA %s\n", done, total, p->what, extra ? extra : "", w, e);
        p->last_line = clk_s();
    }
}
