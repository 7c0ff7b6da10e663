#include "common/log.h"

#include "common/limits.h"

#include <stdarg.h>
#include <stdio.h>

void rl_logf(rl_log_fn log, void *ctx, int level, const char *fmt, ...)
{
    if (!log)
        return;
    char msg[RL_LOG_LINE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log(ctx, level, msg);
}
