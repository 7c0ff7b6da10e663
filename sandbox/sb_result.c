/* sb_result.c - the result record: release, shell status, JSON, layer names. */
#include "sandbox/sb_internal.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const SB_LAYER_NAMES[] = {
    "userns", "pidns", "netns", "mntns", "ipcns", "utsns",
    "seccomp", "landlock", "rlimits", "cgroup",
};
#define SB_NLAYERS (sizeof SB_LAYER_NAMES / sizeof SB_LAYER_NAMES[0])

static const char *sb_stop_name(sb_stop s)
{
    switch (s) {
    case SB_STOP_EXIT: return "exit";
    case SB_STOP_SIGNAL: return "signal";
    case SB_STOP_TIMEOUT: return "timeout";
    case SB_STOP_CPU: return "cpu";
    case SB_STOP_MEMORY: return "memory";
    case SB_STOP_FLOOD: return "flood";
    case SB_STOP_SETUP: return "setup";
    }
    return "unknown";
}

void sb_result_dispose(sb_result *res)
{
    if (!res)
        return;
    free(res->out);
    res->out = NULL;
    res->out_len = 0;
}

int sb_result_status(const sb_result *res)
{
    if (res->stop == SB_STOP_TIMEOUT || res->timed_out)
        return 124;
    if (res->signal > 0)
        return 128 + res->signal;
    if (res->exit_code < 0 || res->exit_code > 255)
        return 125;
    return res->exit_code;
}

void sb_layers_str(unsigned mask, char *out, size_t n)
{
    if (!n)
        return;
    out[0] = '\0';
    size_t len = 0;
    for (size_t i = 0; i < SB_NLAYERS; i++) {
        if (!(mask & (1u << i)))
            continue;
        int w = snprintf(out + len, n - len, "%s%s", len ? "," : "", SB_LAYER_NAMES[i]);
        if (w < 0 || (size_t)w >= n - len)
            return; /* truncated, still NUL-terminated */
        len += (size_t)w;
    }
}

char *sb_result_json(const sb_result *res)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *layers = cJSON_CreateArray();
    if (!o || !layers) {
        cJSON_Delete(o);
        cJSON_Delete(layers);
        return NULL;
    }
    cJSON_AddNumberToObject(o, "status", sb_result_status(res));
    cJSON_AddNumberToObject(o, "exit_code", res->exit_code);
    cJSON_AddNumberToObject(o, "signal", res->signal);
    cJSON_AddBoolToObject(o, "timed_out", res->timed_out != 0);
    cJSON_AddStringToObject(o, "stop", sb_stop_name(res->stop));
    /* The reason can quote argv[0]: keep the JSON plain ASCII. */
    char reason[sizeof res->reason];
    size_t i = 0;
    for (; i + 1 < sizeof reason && res->reason[i]; i++) {
        unsigned char ch = (unsigned char)res->reason[i];
        reason[i] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
    }
    reason[i] = '\0';
    cJSON_AddStringToObject(o, "reason", reason);
    cJSON_AddNumberToObject(o, "wall_ms", (double)res->wall_ms);
    cJSON_AddNumberToObject(o, "cpu_ms", (double)res->cpu_ms);
    cJSON_AddNumberToObject(o, "peak_rss_kb", (double)res->peak_rss_kb);
    cJSON_AddNumberToObject(o, "out_bytes", (double)res->out_bytes);
    cJSON_AddBoolToObject(o, "out_truncated", res->out_truncated != 0);
    for (i = 0; i < SB_NLAYERS; i++)
        if (res->layers & (1u << i))
            cJSON_AddItemToArray(layers, cJSON_CreateString(SB_LAYER_NAMES[i]));
    cJSON_AddItemToObject(o, "layers", layers);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}
