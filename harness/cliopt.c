/* cliopt.c - shared flags for run, batch and experiment. */
#include "harness/cliopt.h"

#include "common/arg.h"
#include "common/err.h"
#include "common/limits.h"
#include "harness/episode.h"
#include "protocol/template.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *cliopt_config_help(void)
{
    return "  --policy P            oracle | search | replay:FILE[:K] | model:CKPT | openai (default:\n"
           "                        the shipped model:models/policy.safetensors, else oracle)\n"
           "  --base-url URL        openai: the server's API root (http://127.0.0.1:8000/v1)\n"
           "  --model NAME          openai: the served model's name\n"
           "  --api chat|completions  openai: messages and tool schemas, or token ids (default chat)\n"
           "  --api-key-env VAR     openai: the variable holding the key (default OPENAI_API_KEY)\n"
           "  --max-inflight N      openai: requests open at once (default 8)\n"
           "  --request-timeout MS  openai: per request attempt (default 300000)\n"
           "  --retries N           openai: attempts per request, 1-11 (default 4)\n"
           "  --openai-tokenizer FILE  openai completions: the harness tokenizer (default\n"
           "                        models/tokenizer.json)\n"
           "  --prompt v1|v2|FILE   system prompt (prompts/NAME.md or a file)\n"
           "  --max-turns N|unlimited\n"
           "  --think on|off        off renders an empty think block\n"
           "  --edit-hints on|off   edit_file answers a failed old_string with the file's lines (default on)\n"
           "  --history keep|drop   keep or drop earlier turns' thinking\n"
           "  --template qwen3-xml|qwen3  the chat template (default: the one a model:CKPT\n"
           "                        checkpoint was trained with, else qwen3-xml)\n"
           "  --seed S\n"
           "  --temperature T       sampling temperature (model policies)\n"
           "  --top-p P\n"
           "  --max-context-tokens N  end the episode past this context size (0: none)\n"
           "  --max-wall S          end the episode after S seconds (0: none)\n"
           "  --obs-budget BYTES    cut tool observations over this size (head + tail)\n"
           "  --reward-config FILE  shaped rewards (off by default: reward = tests pass)\n"
           "  --integrity enforce|flag  a diff the integrity check flags scores 0 (enforce, the\n"
           "                        default) or is only recorded (flag)\n"
           "  --test-mem MB         memory of each test run's whole process tree (0: default)\n"
           "  --test-procs N        processes of each test run's tree (0: default)\n"
           "  --test-disk MB        what a test run may add to the work tree (0: unbounded)\n";
}

static int bad(char *err, const char *cmd, const char *flag, const char *want, const char *got)
{
    rl_err(err, RL_EINVAL, "harness %s: %s: expected %s, got '%s'", cmd, flag, want, got ? got : "(nothing)");
    return 2;
}

int cliopt_config(ep_config *c, int *i, int argc, char **argv, const char *cmd, char *err)
{
    const char *f = argv[*i];
    static const char *flags[] = {"--policy", "--prompt", "--max-turns", "--think", "--history", "--template", "--seed",
                                  "--temperature", "--top-p", "--max-context-tokens", "--max-wall",
                                  "--obs-budget", "--reward-config", "--edit-hints", "--integrity", "--test-mem", "--test-procs",
                                  "--test-disk", "--base-url", "--model", "--api", "--api-key-env", "--max-inflight",
                                  "--request-timeout", "--retries", "--openai-tokenizer", NULL};
    int known = 0;
    for (int k = 0; flags[k]; k++)
        known |= !strcmp(f, flags[k]);
    if (!known)
        return 0;
    if (*i + 1 >= argc)
        return bad(err, cmd, f, "a value", NULL);
    const char *v = argv[++*i];
    long l;
    double d;
    if (!strcmp(f, "--policy")) {
        c->policy = v;
    } else if (!strcmp(f, "--base-url")) {
        if (strncmp(v, "http://", 7) && strncmp(v, "https://", 8))
            return bad(err, cmd, f, "an http:// or https:// URL", v);
        c->openai.base_url = v;
    } else if (!strcmp(f, "--model")) {
        c->openai.model = v;
    } else if (!strcmp(f, "--api")) {
        if (strcmp(v, "chat") && strcmp(v, "completions"))
            return bad(err, cmd, f, "chat or completions", v);
        c->openai.api = v;
    } else if (!strcmp(f, "--api-key-env")) {
        c->openai.api_key_env = v;
    } else if (!strcmp(f, "--openai-tokenizer")) {
        c->openai.tokenizer = v;
    } else if (!strcmp(f, "--max-inflight")) {
        if (arg_long(&l, f, v, 1, HTTP_MANY_INFLIGHT_MAX, NULL) < 0)
            return bad(err, cmd, f, "a request count 1-256", v);
        c->openai.max_inflight = (int)l;
    } else if (!strcmp(f, "--request-timeout")) {
        if (arg_long(&l, f, v, 1, HTTP_TIMEOUT_MS_HARD, NULL) < 0)
            return bad(err, cmd, f, "milliseconds 1-3600000", v);
        c->openai.timeout_ms = l;
    } else if (!strcmp(f, "--retries")) {
        if (arg_long(&l, f, v, 1, HTTP_RETRIES_HARD + 1, NULL) < 0)
            return bad(err, cmd, f, "attempts 1-11", v);
        c->openai.retries = (int)l;
    } else if (!strcmp(f, "--prompt")) {
        c->prompt = v;
    } else if (!strcmp(f, "--max-turns")) {
        if (!strcmp(v, "unlimited"))
            c->max_turns = 0;
        else if (arg_long(&l, f, v, 1, 100000, NULL) == 0)
            c->max_turns = (int)l;
        else
            return bad(err, cmd, f, "a number of turns (1-100000) or 'unlimited'", v);
    } else if (!strcmp(f, "--think")) {
        if (strcmp(v, "on") && strcmp(v, "off"))
            return bad(err, cmd, f, "on or off", v);
        c->think = !strcmp(v, "on");
    } else if (!strcmp(f, "--edit-hints")) {
        if (strcmp(v, "on") && strcmp(v, "off"))
            return bad(err, cmd, f, "on or off", v);
        c->edit_hints = !strcmp(v, "on");
    } else if (!strcmp(f, "--integrity")) {
        if (strcmp(v, "enforce") && strcmp(v, "flag"))
            return bad(err, cmd, f, "enforce or flag", v);
        c->integrity_flag_only = !strcmp(v, "flag");
    } else if (!strcmp(f, "--test-mem") || !strcmp(f, "--test-disk")) {
        if (arg_long(&l, f, v, 0, !strcmp(f, "--test-disk") ? SB_DISK_MB_HARD : RL_TESTRUN_MEM_MB_MAX, NULL) < 0)
            return bad(err, cmd, f, "megabytes (0: default)", v);
        if (!strcmp(f, "--test-mem"))
            c->test_limits.mem_mb = l;
        else
            c->test_limits.disk_mb = l;
    } else if (!strcmp(f, "--test-procs")) {
        if (arg_long(&l, f, v, 0, 100000, NULL) < 0)
            return bad(err, cmd, f, "a process count (0: default)", v);
        c->test_limits.procs = (int)l;
    } else if (!strcmp(f, "--history")) {
        if (strcmp(v, "keep") && strcmp(v, "drop"))
            return bad(err, cmd, f, "keep or drop", v);
        c->history_keep = !strcmp(v, "keep");
    } else if (!strcmp(f, "--template")) {
        tpl_kind k;
        if (tpl_kind_parse(&k, v, NULL) < 0)
            return bad(err, cmd, f, "qwen3-xml or qwen3", v);
        c->chat_template = (int)k;
    } else if (!strcmp(f, "--seed")) {
        if (arg_long(&l, f, v, 0, 0x7fffffffL, NULL) < 0)
            return bad(err, cmd, f, "a seed 0-2147483647", v);
        c->seed = (uint64_t)l;
    } else if (!strcmp(f, "--temperature")) {
        if (arg_double(&d, f, v, 0, 10, NULL) < 0)
            return bad(err, cmd, f, "a temperature in [0, 10]", v);
        c->temperature = d;
    } else if (!strcmp(f, "--top-p")) {
        if (arg_double(&d, f, v, 1e-6, 1, NULL) < 0)
            return bad(err, cmd, f, "a probability in (0, 1]", v);
        c->top_p = d;
    } else if (!strcmp(f, "--max-context-tokens")) {
        if (arg_long(&l, f, v, 0, 10000000, NULL) < 0)
            return bad(err, cmd, f, "a token count (0: no limit)", v);
        c->max_context_tokens = (int)l;
    } else if (!strcmp(f, "--max-wall")) {
        if (arg_long(&l, f, v, 0, 86400, NULL) < 0)
            return bad(err, cmd, f, "seconds 0-86400 (0: no limit)", v);
        c->max_wall_s = (int)l;
    } else if (!strcmp(f, "--obs-budget")) {
        if (arg_long(&l, f, v, 256, 16 << 20, NULL) < 0)
            return bad(err, cmd, f, "a byte count 256-16777216", v);
        c->obs_budget = (size_t)l;
    } else if (!strcmp(f, "--reward-config")) {
        char why[RL_ERR_MAX];
        if (ep_shaping_load(&c->shaping, v, why) < 0) {
            rl_err(err, RL_EINVAL, "harness %s: --reward-config: %s", cmd, why);
            return 2;
        }
    }
    return 1;
}

int cliopt_seeds(uint64_t *out, size_t *n, size_t max, const char *s, char *err)
{
    *n = 0;
    const char *p = s;
    while (*p) {
        char *end;
        errno = 0;
        long a = strtol(p, &end, 10), b;
        if (end == p || a < 0 || errno)
            return rl_err(err, RL_EINVAL, "seeds '%s': expected N, A-B or a comma list", s);
        p = end;
        b = a;
        if (*p == '-') {
            b = strtol(++p, &end, 10);
            if (end == p || b < a || errno)
                return rl_err(err, RL_EINVAL, "seeds '%s': expected A-B with A <= B", s);
            p = end;
        }
        for (long v = a; v <= b; v++) {
            if (*n >= max)
                return rl_err(err, RL_ELIMIT, "seeds '%s': more than %zu seeds", s, max);
            out[(*n)++] = (uint64_t)v;
        }
        if (*p == ',')
            p++;
        else if (*p)
            return rl_err(err, RL_EINVAL, "seeds '%s': unexpected '%c'", s, *p);
    }
    if (*n == 0)
        return rl_err(err, RL_EINVAL, "seeds '%s': expected at least one seed", s);
    return 0;
}

long cliopt_workers(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}
