#include "common/err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

int rl_err(char *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, RL_ERR_MAX, fmt, ap);
        va_end(ap);
    }
    return code;
}

const char *rl_strerror(int code)
{
    switch (code) {
    case RL_OK: return "ok";
    case RL_EINVAL: return "invalid";
    case RL_ENOMEM: return "out of memory";
    case RL_EIO: return "i/o error";
    case RL_ENOSPC: return "no space left";
    case RL_ENOENT: return "not found";
    case RL_EPARSE: return "parse error";
    case RL_ELIMIT: return "limit exceeded";
    case RL_ETIMEOUT: return "timed out";
    case RL_EUNSUP: return "unsupported";
    case RL_EGIT: return "git error";
    case RL_EDENIED: return "denied";
    default: return "unknown error";
    }
}

int rl_from_errno(int e)
{
    switch (e) {
    case 0: return RL_OK;
    case ENOMEM: return RL_ENOMEM;
    case ENOSPC: case EDQUOT: case EFBIG: return RL_ENOSPC;
    case ENOENT: case ENOTDIR: return RL_ENOENT;
    case EACCES: case EPERM: case ELOOP: case EXDEV: return RL_EDENIED;
    case EINVAL: return RL_EINVAL;
    case ETIMEDOUT: return RL_ETIMEOUT;
    case ENOSYS: case EOPNOTSUPP: return RL_EUNSUP;
    default: return RL_EIO;
    }
}
