/* grpo_fleet.c - rollouts on a fleet (docs/grpo.md, "Rollouts on a
 * fleet"): the generation servers (`grpo serve`) and env servers
 * (`harness serve`) of a config's fleet section, checked when the run
 * opens, and the weights pushed to every generation server before a
 * step's rollouts when they changed.
 *
 * The weights go as a checkpoint file at a path every server reads
 * (fleet.weights; default OUT/fleet/weights.safetensors, written under a
 * temporary name and renamed), then POST /v1/weights {"path", "version"}
 * to each generation server at once; the push returns when every server
 * answered that it decodes with them. */
#include "grpo/grpo_int.h"

#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "common/str.h"
#include "http/http.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct grpo_fleet {
    char urls[GRPO_FLEET_URLS_CHARS];  /* generation list, then env list: split in place */
    char envs_buf[GRPO_FLEET_URLS_CHARS];
    const char *gen[OAI_BASE_URLS_MAX];
    const char *env[RL_ROLLOUT_ENV_URLS_MAX];
    int ngen, nenv;
    char weights[GRPO_PATH_MAX];
    char auth[HTTP_HEADER_LINE_MAX];
    http_client *http;
    long version; /* pushed last; -1: none yet */
};

/* Splits a comma-joined list in place into v[0..*n). */
static int split(const char **v, int *n, int max, char *s, const char *what, char *err)
{
    *n = 0;
    for (char *p = s; p && *p;) {
        char *c = strchr(p, ',');
        if (c)
            *c = '\0';
        if (*n == max)
            return rl_err(err, RL_ELIMIT, "fleet.%s: expected at most %d URLs", what, max);
        size_t l = strlen(p);
        while (l && p[l - 1] == '/')
            p[--l] = '\0';
        if (strncmp(p, "http://", 7) && strncmp(p, "https://", 8))
            return rl_err(err, RL_EINVAL, "fleet.%s: %.200s: expected an http:// or https:// URL", what, p);
        v[(*n)++] = p;
        p = c ? c + 1 : NULL;
    }
    return 0;
}

/* GET url: 0 when it answers 200, else an error naming it. */
static int probe(grpo_fleet *f, const char *url, const char *what, char *err)
{
    const char *hdr[] = {f->auth[0] ? f->auth : NULL, NULL};
    http_request rq = {.method = "GET", .url = url, .headers = hdr};
    http_response rs;
    char herr[RL_ERR_MAX];
    int rc = http_client_request(f->http, &rs, &rq, herr);
    if (rc < 0)
        rc = rl_err(err, rc, "fleet: %s %s: %s", what, url, herr);
    else if (rs.status != 200)
        rc = rl_err(err, RL_EIO, "fleet: %s %s: status %ld, expected 200", what, url, rs.status);
    http_response_dispose(&rs);
    return rc;
}

int grpo_fleet_new(grpo_fleet **out, const grpo_config *c, const char *run_dir, char *err)
{
    *out = NULL;
    grpo_fleet *f = calloc(1, sizeof *f);
    if (!f)
        return rl_err(err, RL_ENOMEM, "fleet: out of memory");
    f->version = -1;
    str_copy(f->urls, sizeof f->urls, c->fleet_generate);
    str_copy(f->envs_buf, sizeof f->envs_buf, c->fleet_env);
    int rc = split(f->gen, &f->ngen, OAI_BASE_URLS_MAX, f->urls, "generate", err);
    if (rc == 0)
        rc = split(f->env, &f->nenv, RL_ROLLOUT_ENV_URLS_MAX, f->envs_buf, "env", err);
    if (rc == 0 && (!f->ngen || !f->nenv))
        rc = rl_err(err, RL_EINVAL, "fleet: expected at least one generate and one env URL");
    if (rc == 0 && c->fleet_token_env[0]) {
        const char *tok = getenv(c->fleet_token_env);
        if (!tok || !tok[0] || strlen(tok) > HTTP_HEADER_LINE_MAX - 40 || strpbrk(tok, "\r\n"))
            rc = rl_err(err, RL_EINVAL, "fleet.token_env %s: expected the variable to hold a one-line token",
                        c->fleet_token_env);
        else
            snprintf(f->auth, sizeof f->auth, "Authorization: Bearer %s", tok);
    }
    if (rc == 0) {
        if (c->fleet_weights[0])
            str_copy(f->weights, sizeof f->weights, c->fleet_weights);
        else if (str_fmt(f->weights, sizeof f->weights, "%s/fleet/weights.safetensors", run_dir) < 0)
            rc = rl_err(err, RL_ELIMIT, "fleet: the run directory's path is too long");
    }
    if (rc == 0) {
        http_client_opts ho;
        http_client_opts_default(&ho);
        if (c->fleet_timeout_ms > 0)
            ho.timeout_ms = c->fleet_timeout_ms;
        ho.retries = 1; /* one retry: a server that is down is reported within a second */
        rc = http_client_new(&f->http, &ho, err);
    }
    /* every server answers before the first step */
    char url[HTTP_URL_MAX + 32];
    for (int i = 0; rc == 0 && i < f->ngen; i++) {
        snprintf(url, sizeof url, "%s/models", f->gen[i]);
        rc = probe(f, url, "generation server", err);
    }
    for (int i = 0; rc == 0 && i < f->nenv; i++) {
        snprintf(url, sizeof url, "%s/health", f->env[i]);
        rc = probe(f, url, "env server", err);
    }
    if (rc < 0) {
        grpo_fleet_free(f);
        return rc;
    }
    *out = f;
    return 0;
}

void grpo_fleet_free(grpo_fleet *f)
{
    if (!f)
        return;
    http_client_free(f->http);
    memset(f->auth, 0, sizeof f->auth);
    free(f);
}

const char *const *grpo_fleet_env_urls(const grpo_fleet *f, int *n)
{
    *n = f->nenv;
    return f->env;
}

const char *grpo_fleet_weights_path(const grpo_fleet *f) { return f->weights; }

long grpo_fleet_version(const grpo_fleet *f) { return f->version; }

int grpo_fleet_push(grpo_fleet *f, const model *m, const model_meta *meta, long version, char *err)
{
    char dir[GRPO_PATH_MAX];
    str_copy(dir, sizeof dir, f->weights);
    char *slash = strrchr(dir, '/');
    int rc = 0;
    if (slash && slash != dir) {
        *slash = '\0';
        rc = fs_mkdirs(dir, err);
    }
    if (rc == 0)
        rc = model_save(m, f->weights, meta, err);
    if (rc < 0)
        return rc;
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "path", f->weights);
    cJSON_AddNumberToObject(b, "version", (double)version);
    char *body = cJSON_PrintUnformatted(b);
    cJSON_Delete(b);
    http_request *rq = calloc((size_t)f->ngen, sizeof *rq);
    http_response *rs = calloc((size_t)f->ngen, sizeof *rs);
    int *rcs = calloc((size_t)f->ngen, sizeof *rcs);
    char(*errs)[RL_ERR_MAX] = calloc((size_t)f->ngen, sizeof *errs);
    char(*urls)[HTTP_URL_MAX + 32] = calloc((size_t)f->ngen, sizeof *urls);
    const char *hdr[] = {f->auth[0] ? f->auth : NULL, NULL};
    if (!body || !rq || !rs || !rcs || !errs || !urls)
        rc = rl_err(err, RL_ENOMEM, "fleet: out of memory");
    for (int i = 0; rc == 0 && i < f->ngen; i++) {
        snprintf(urls[i], sizeof urls[i], "%s/weights", f->gen[i]);
        rq[i] = (http_request){.method = "POST", .url = urls[i], .headers = hdr, .content_type = "application/json",
                               .body = body, .body_len = strlen(body)};
    }
    if (rc == 0)
        rc = http_client_many(f->http, rs, rcs, errs, rq, (size_t)f->ngen, f->ngen, err);
    for (int i = 0; rc == 0 && i < f->ngen; i++) {
        if (rcs[i] < 0) {
            rc = rl_err(err, rcs[i], "fleet: generation server %s: weights version %ld: %s", f->gen[i], version,
                        errs[i]);
        } else if (rs[i].status != 200) {
            cJSON *j = cJSON_Parse(rs[i].body ? rs[i].body : "");
            const char *msg = cJSON_GetStringValue(
                cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "error"), "message"));
            rc = rl_err(err, RL_EIO, "fleet: generation server %s: weights version %ld: status %ld%s%.200s",
                        f->gen[i], version, rs[i].status, msg ? ": " : "", msg ? msg : "");
            cJSON_Delete(j);
        }
    }
    for (int i = 0; rs && rcs && i < f->ngen; i++)
        http_response_dispose(&rs[i]);
    free(body);
    free(rq);
    free(rs);
    free(rcs);
    free(errs);
    free(urls);
    if (rc == 0)
        f->version = version;
    return rc;
}
