/* envsrv.c - see envsrv.h.
 *
 * Locks: s->mu guards the episode table (which slots are open, which are
 * busy) and the counters; it is never held while an episode steps, resets
 * or scores. A request that works on an episode marks it busy under the
 * lock and owns it until it clears the mark, so one episode has one user
 * at a time (another request on it gets 409). s->gmu is the test-run
 * queue, s->fmu orders the appends to the records file and guards the
 * ring of finished records.
 */
#include "harness/envsrv.h"

#include "common/buf.h"
#include "common/clock.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "common/str.h"
#include "harness/tools.h"
#include "harness/workspace.h"
#include "protocol/chat.h"
#include "protocol/template.h"
#include "protocol/tokenizer.h"
#include "protocol/toolcall.h"

#include <cJSON.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A finished episode's record in the records file. */
typedef struct sdone {
    char id[ENVSRV_ID_MAX];
    off_t off;               /* where the line starts */
    size_t len;              /* its bytes with the newline */
} sdone;

typedef struct sep {
    int open;                /* an episode lives in this slot */
    int busy;                /* a request owns it */
    char id[ENVSRV_ID_MAX];
    const task *t;
    ep_config cfg;
    char prompt[64];         /* the client's prompt name (cfg.prompt) */
    ep_state *e;
    ws_tree *ws;             /* kept between episodes of the same task */
    const task *ws_task;
    size_t nsent;            /* messages of the conversation already answered */
    double last_ms;          /* last request on it */
    size_t ctx_bytes, ctx_tokens;
    int turn;
    int want_ids;            /* reset asked for "return_context_ids" */
    pol_request req;         /* the pending turn's request (borrows from e) */
} sep;

struct envsrv {
    envsrv_opts o;
    char out[4096], journal[4100]; /* records; journal folder OUT.open.d */
    char server_id[ENVSRV_SERVER_ID_MAX + 1];
    char boot[16];
    int max_runs;
    pthread_mutex_t mu;
    sep *eps;
    int nopen, stopping;
    long seq, opened, steps, finished, restarted;
    double t0;
    double *lat, *latx;      /* rings of ENVSRV_LATENCY_WINDOW step latencies */
    long nlat;
    pthread_mutex_t gmu;
    pthread_cond_t gcv;
    int running, waiting;
    pthread_mutex_t fmu;
    sdone *done;             /* ring of the last finished_keep records (fmu) */
    long ndone;
    pthread_t reaper;
    pthread_cond_t rcv;
    int reaper_started;
};

void envsrv_opts_default(envsrv_opts *o)
{
    memset(o, 0, sizeof *o);
    o->server_id = "env";
    o->max_episodes = ENVSRV_EPISODES_DEFAULT;
    o->idle_timeout_s = ENVSRV_IDLE_S_DEFAULT;
    o->finished_keep = ENVSRV_FINISHED_KEEP;
}

/* ---- replies ------------------------------------------------------------- */

static int reply_json(http_server_resp *resp, int status, cJSON *o)
{
    char *txt = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!txt)
        return http_reply(resp, 500, "application/json",
                          "{\"error\":{\"message\":\"out of memory\",\"type\":\"server_error\"}}", 59);
    int rc = http_reply(resp, status, "application/json", txt, strlen(txt));
    free(txt);
    return rc;
}

static int reply_error(http_server_resp *resp, int status, const char *param, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int reply_error(http_server_resp *resp, int status, const char *param, const char *fmt, ...)
{
    char msg[RL_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    str_vfmt(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return http_reply_error(resp, status, param, NULL, "%s", msg);
}

/* ---- the test-run queue ---------------------------------------------------- */

static void gate_enter(envsrv *s)
{
    pthread_mutex_lock(&s->gmu);
    s->waiting++;
    while (s->running >= s->max_runs)
        pthread_cond_wait(&s->gcv, &s->gmu);
    s->waiting--;
    s->running++;
    pthread_mutex_unlock(&s->gmu);
}

static void gate_leave(envsrv *s)
{
    pthread_mutex_lock(&s->gmu);
    s->running--;
    pthread_cond_signal(&s->gcv);
    pthread_mutex_unlock(&s->gmu);
}

/* ---- records, the finished ring and the journal ------------------------------------ */

/* Where finished episode id's record starts in the records file, or NULL
 * when it is not among the last finished_keep. Under fmu. */
static const sdone *finished_find(const envsrv *s, const char *id)
{
    long keep = s->o.finished_keep, n = s->ndone < keep ? s->ndone : keep;
    for (long k = 0; k < n; k++) {
        const sdone *d = &s->done[(s->ndone - 1 - k) % keep];
        if (!strcmp(d->id, id))
            return d;
    }
    return NULL;
}

/* The journal file of episode id: OUT.open.d/ID.json. */
static void state_path(const envsrv *s, const char *id, char *out, size_t n)
{
    str_fmt(out, n, "%s/%s.json", s->journal, id);
}

/* Appends rec with "episode_id" as its first member and notes where it
 * starts, then removes the episode's journal file: a record is on disk
 * before its episode stops counting as open, so a restart never writes it
 * a second time. */
static int write_record(envsrv *s, const char *id, const char *rec, char *err)
{
    buf_t b;
    buf_init(&b, 0);
    buf_printf(&b, "{\"episode_id\":\"%s\"%s%s", id, rec[1] == '}' ? "" : ",", rec + 1);
    char path[sizeof s->journal + ENVSRV_ID_MAX + 8];
    state_path(s, id, path, sizeof path);
    pthread_mutex_lock(&s->fmu);
    struct stat st;
    off_t off = stat(s->out, &st) == 0 ? st.st_size : 0;
    int rc = b.data ? fs_append_record(s->out, b.data, b.len, err) : rl_err(err, RL_ENOMEM, "record: out of memory");
    if (rc == 0) {
        sdone *d = &s->done[s->ndone++ % s->o.finished_keep];
        str_copy(d->id, sizeof d->id, id);
        d->off = off;
        d->len = b.len + 1;
        unlink(path);
    }
    pthread_mutex_unlock(&s->fmu);
    buf_dispose(&b);
    return rc;
}

/* Writes the episode's journal file: its work tree and its record so far
 * (ep_snapshot), replaced whole (temp file, fsync, rename) at the reset
 * and after every step. A snapshot over ENVSRV_STATE_MAX is not written:
 * the file keeps the last one that fit. */
static int journal_write(envsrv *s, const sep *ep, char *err)
{
    char *rec = NULL;
    int rc = ep_snapshot(&rec, ep->e, err);
    if (rc < 0)
        return rc;
    buf_t b;
    buf_init(&b, ENVSRV_STATE_MAX);
    cJSON *tree = cJSON_CreateString(ws_path(ep->ws));
    char *tq = tree ? cJSON_PrintUnformatted(tree) : NULL;
    cJSON_Delete(tree);
    int w = tq ? buf_printf(&b, "{\"tree\":%s,\"turn\":%d,\"record\":%s}\n", tq, ep->turn, rec) : RL_ENOMEM;
    if (w == RL_ENOMEM)
        rc = rl_err(err, RL_ENOMEM, "journal: out of memory");
    else if (w == 0) { /* over the cap (RL_ELIMIT): the file keeps the last that fit */
        char path[sizeof s->journal + ENVSRV_ID_MAX + 8];
        state_path(s, ep->id, path, sizeof path);
        rc = fs_write_atomic(path, b.data, b.len, err);
    }
    free(tq);
    free(rec);
    buf_dispose(&b);
    return rc;
}

/* Removes a work tree, its companion and their git dirs
 * (ROOT/trees/K-S[.score], ROOT/git/K-S[.score]). */
static void remove_tree(const char *path)
{
    char p[4200], err[RL_ERR_MAX];
    const char *t = strstr(path, "/trees/");
    if (!t || strstr(path, ".."))
        return;
    fs_remove_tree(path, err);
    str_fmt(p, sizeof p, "%s.score", path);
    fs_remove_tree(p, err);
    str_fmt(p, sizeof p, "%.*s/git/%s", (int)(t - path), path, t + 7);
    fs_remove_tree(p, err);
    str_fmt(p, sizeof p, "%.*s/git/%s.score", (int)(t - path), path, t + 7);
    fs_remove_tree(p, err);
}

/* The episode ids of the records file: the "episode_id" each record
 * starts with. */
static void recorded_ids(cJSON *set, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    static const char pre[] = "{\"episode_id\":\"";
    while ((n = getline(&line, &cap, f)) > 0) {
        if ((size_t)n > ENVSRV_RECORD_LINE_MAX)
            break;
        if (strncmp(line, pre, sizeof pre - 1))
            continue;
        char *id = line + sizeof pre - 1, *q = strchr(id, '"');
        if (!q || q - id >= ENVSRV_ID_MAX)
            continue;
        *q = '\0';
        cJSON_AddTrueToObject(set, id);
    }
    free(line);
    fclose(f);
}

/* The record of an episode the last run left open, from its journal file
 * (j, NULL when unreadable): the turns journaled so far, unscored, ended
 * by the restart. */
static char *restart_record(const char *id, const cJSON *j)
{
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(j, "record");
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "episode_id", id);
    if (cJSON_IsObject(rec)) {
        const cJSON *f;
        cJSON_ArrayForEach(f, rec)
        {
            if (strcmp(f->string, "episode_id"))
                cJSON_AddItemToObject(r, f->string, cJSON_Duplicate(f, 1));
        }
    } else {
        cJSON_AddNumberToObject(r, "schema", 2);
        cJSON_AddArrayToObject(r, "messages");
        cJSON_AddArrayToObject(r, "turns");
        cJSON_AddArrayToObject(r, "tests");
    }
    static const char *const nulls[] = {"patch", "reward", "shaped_reward"};
    for (int k = 0; k < 3; k++) {
        cJSON_DeleteItemFromObjectCaseSensitive(r, nulls[k]);
        cJSON_AddNullToObject(r, nulls[k]);
    }
    cJSON_DeleteItemFromObjectCaseSensitive(r, "end_reason");
    cJSON_DeleteItemFromObjectCaseSensitive(r, "error");
    cJSON_AddStringToObject(r, "end_reason", "restart");
    cJSON_AddStringToObject(r, "error", rec ? "the server stopped while the episode was open"
                                            : "the server stopped while the episode was open; its journal was unreadable");
    char *txt = cJSON_PrintUnformatted(r);
    cJSON_Delete(r);
    return txt;
}

/* Records the episodes the journal shows open and the records file lacks
 * (with the turns journaled so far), removes their trees and their
 * journal files. */
static int recover(envsrv *s, char *err)
{
    char **names = NULL;
    size_t n = 0;
    int rc = fs_mkdirs(s->journal, err);
    if (rc == 0)
        rc = fs_list_dir(&names, &n, s->journal, err);
    cJSON *done = cJSON_CreateObject();
    if (rc == 0 && n)
        recorded_ids(done, s->out);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char path[sizeof s->journal + 300], id[ENVSRV_ID_MAX];
        str_fmt(path, sizeof path, "%s/%s", s->journal, names[i]);
        size_t l = strlen(names[i]);
        if (l < 6 || l - 5 >= sizeof id || strcmp(names[i] + l - 5, ".json")) {
            unlink(path); /* a temp file of a write the kill interrupted */
            continue;
        }
        memcpy(id, names[i], l - 5);
        id[l - 5] = '\0';
        char *text = NULL, rerr[RL_ERR_MAX];
        cJSON *j = NULL;
        if (fs_read_file(&text, NULL, path, ENVSRV_STATE_MAX + 1024, rerr) == 0)
            j = cJSON_Parse(text);
        free(text);
        const cJSON *tree = cJSON_GetObjectItemCaseSensitive(j, "tree");
        if (cJSON_IsString(tree))
            remove_tree(tree->valuestring);
        if (!cJSON_GetObjectItemCaseSensitive(done, id)) {
            char *txt = restart_record(id, j);
            rc = txt ? fs_append_record(s->out, txt, strlen(txt), err) : rl_err(err, RL_ENOMEM, "journal: out of memory");
            free(txt);
            if (rc == 0)
                s->restarted++;
        }
        cJSON_Delete(j);
        if (rc == 0)
            unlink(path);
    }
    fs_names_free(names, n);
    cJSON_Delete(done);
    if (rc == 0 && s->restarted)
        rl_logf(s->o.log, s->o.log_ctx, RL_LOG_INFO, "serve: %ld episodes open at the last stop recorded as ended by the restart",
                s->restarted);
    return rc;
}

/* ---- episodes -------------------------------------------------------------------- */

/* Finds the open episode id and marks it busy. 404 / 409 in *status when
 * it cannot. */
static sep *take(envsrv *s, const char *id, int *status)
{
    sep *found = NULL;
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->o.max_episodes && !found; i++)
        if (s->eps[i].open && !strcmp(s->eps[i].id, id))
            found = &s->eps[i];
    if (!found)
        *status = 404;
    else if (found->busy)
        *status = 409, found = NULL;
    else
        found->busy = 1;
    pthread_mutex_unlock(&s->mu);
    return found;
}

/* Replies with the record of finished episode id when it is among the last
 * finished_keep; 0 when it is not (nothing replied). */
static int reply_finished(envsrv *s, const char *id, http_server_resp *resp, int *rc)
{
    pthread_mutex_lock(&s->fmu);
    const sdone *d = finished_find(s, id);
    off_t off = d ? d->off : 0;
    size_t len = d ? d->len : 0;
    pthread_mutex_unlock(&s->fmu);
    if (!d)
        return 0;
    char *line = malloc(len + 1), pre[ENVSRV_ID_MAX + 32];
    int fd = line ? open(s->out, O_RDONLY | O_CLOEXEC) : -1;
    ssize_t got = fd >= 0 ? pread(fd, line, len, off) : -1;
    if (fd >= 0)
        close(fd);
    if (got == (ssize_t)len)
        line[len] = '\0';
    str_fmt(pre, sizeof pre, "{\"episode_id\":\"%s\"", id);
    if (got != (ssize_t)len || strncmp(line, pre, strlen(pre))) { /* the file was moved or cut */
        free(line);
        return 0;
    }
    *rc = http_reply(resp, 200, "application/json", line, len - 1);
    free(line);
    return 1;
}

/* take, or the 409 / 404 answer: NULL then, with the reply set. finished:
 * the id of a finished episode is answered with its record (GET /v1/state). */
static sep *take_or_reply(envsrv *s, const char *id, int finished, http_server_resp *resp)
{
    int status = 0, rc;
    sep *ep = take(s, id, &status);
    if (ep)
        return ep;
    if (status == 409)
        reply_error(resp, 409, "episode_id", "episode_id: '%.80s' has a request running; send one at a time", id);
    else if (!finished)
        reply_error(resp, 404, "episode_id", "episode_id: no open episode '%.80s' (ended, closed or unknown)", id);
    else if (!reply_finished(s, id, resp, &rc))
        reply_error(resp, 404, "episode_id",
                    "episode_id: no episode '%.80s' open or among the last %d finished (unknown, or older: its record is "
                    "in the records file)", id, s->o.finished_keep);
    return NULL;
}

/* Clears the busy mark; active: the request counts as activity (a reset
 * or a step; reading the state does not keep an episode open). */
static void give_back(envsrv *s, sep *ep, int active)
{
    pthread_mutex_lock(&s->mu);
    ep->busy = 0;
    if (active)
        ep->last_ms = clk_ms();
    pthread_mutex_unlock(&s->mu);
}

/* Asks for the next turn: 1 when the episode goes on. */
static int next_turn(sep *ep)
{
    pol_request req;
    if (!ep_request(ep->e, &req))
        return 0;
    ep->req = req;
    ep->ctx_bytes = req.context_len;
    ep->ctx_tokens = req.n_context_ids;
    ep->turn++;
    return 1;
}

/* What a client generating from token ids needs for the pending turn:
 * the context's ids in this server's template and tokenizer, the reply's
 * token cap and the turn's seed. */
static cJSON *generation_json(const sep *ep)
{
    cJSON *o = cJSON_CreateObject();
    buf_t arr; /* one raw array: cJSON would print each id as a double */
    buf_init(&arr, ep->req.n_context_ids * 12 + 16);
    int rc = buf_putc(&arr, '[');
    for (size_t i = 0; rc == 0 && i < ep->req.n_context_ids; i++)
        rc = buf_printf(&arr, i ? ",%d" : "%d", (int)ep->req.context_ids[i]);
    if (rc == 0)
        rc = buf_putc(&arr, ']');
    cJSON_AddItemToObject(o, "context_ids", rc == 0 ? cJSON_CreateRaw(buf_str(&arr)) : cJSON_CreateNull());
    buf_dispose(&arr);
    cJSON_AddNumberToObject(o, "max_tokens", ep->req.max_tokens);
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)(ep->req.seed & POL_SEED_MAX));
    cJSON_AddItemToObject(o, "seed", cJSON_CreateRaw(seed));
    return o;
}

static cJSON *info_json(const sep *ep, const char *end_reason)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "episode_id", ep->id);
    cJSON_AddStringToObject(o, "task", ep->t->instance_id);
    cJSON_AddNumberToObject(o, "turn", ep->turn);
    cJSON_AddNumberToObject(o, "context_bytes", (double)ep->ctx_bytes);
    if (ep->cfg.tok)
        cJSON_AddNumberToObject(o, "context_tokens", (double)ep->ctx_tokens);
    else
        cJSON_AddNullToObject(o, "context_tokens");
    if (end_reason)
        cJSON_AddStringToObject(o, "end_reason", end_reason);
    else
        cJSON_AddNullToObject(o, "end_reason");
    return o;
}

/* Ends ep (reason: why, when the episode had not ended by itself), scores
 * it in the queue, writes its record and frees the slot. The caller owns
 * ep (busy). Fills the reply fields of the final answer into o. *ms_tests
 * gets the time spent queued and scoring. */
static void finish(envsrv *s, sep *ep, const char *why, const char *msg, cJSON *o, double *ms_tests)
{
    char err[RL_ERR_MAX];
    if (why)
        ep_abort(ep->e, why, msg);
    double t0 = clk_ms();
    gate_enter(s);
    char *rec = NULL;
    int rc = ep_finish(&rec, ep->e, err);
    gate_leave(s);
    if (ms_tests)
        *ms_tests += clk_ms() - t0;
    double reward = ep_reward(ep->e);
    if (rc == 0)
        rc = write_record(s, ep->id, rec, err);
    if (rc == 0) {
        cJSON *r = cJSON_Parse(rec);
        const cJSON *er = cJSON_GetObjectItemCaseSensitive(r, "end_reason");
        const cJSON *rw = cJSON_GetObjectItemCaseSensitive(r, "reward");
        if (o) {
            cJSON *info = info_json(ep, cJSON_IsString(er) ? er->valuestring : NULL);
            cJSON_AddStringToObject(info, "key", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "key")));
            cJSON_AddItemToObject(o, "info", info);
            if (cJSON_IsNumber(rw))
                cJSON_AddNumberToObject(o, "reward", reward);
            else
                cJSON_AddNullToObject(o, "reward");
        }
        rl_logf(s->o.log, s->o.log_ctx, RL_LOG_INFO, "serve: %s %s: %s, reward %g, %d turns", ep->id,
                ep->t->instance_id, cJSON_IsString(er) ? er->valuestring : "?", reward, ep->turn);
        cJSON_Delete(r);
    } else {
        rl_logf(s->o.log, s->o.log_ctx, RL_LOG_ERROR, "serve: %s: the record was not written: %s", ep->id, err);
        if (o) {
            cJSON_AddItemToObject(o, "info", info_json(ep, "error"));
            cJSON_AddNullToObject(o, "reward");
        }
    }
    free(rec);
    ep_free(ep->e);
    ep->e = NULL;
    pthread_mutex_lock(&s->mu);
    ep->open = 0;
    ep->busy = 0;
    s->nopen--;
    s->finished++;
    pthread_mutex_unlock(&s->mu);
}

/* The messages of the conversation from index `from` as OpenAI messages. */
static cJSON *messages_from(const sep *ep, size_t from)
{
    const chat *c = ep_chat(ep->e);
    cJSON *a = cJSON_CreateArray();
    char err[RL_ERR_MAX];
    for (size_t i = from; a && i < c->n; i++) {
        cJSON *m = NULL;
        if (chat_msg_to_json(&m, &c->msgs[i], err) == 0)
            cJSON_AddItemToArray(a, m);
    }
    return a;
}

/* ---- request bodies ------------------------------------------------------------------ */

static const cJSON *field(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return v && !cJSON_IsNull(v) ? v : NULL;
}

/* An optional integer lo..hi of config; -1 and a reply on error. */
static int cfg_int(int *out, const cJSON *cfg, const char *k, long lo, long hi, http_server_resp *resp)
{
    const cJSON *v = field(cfg, k);
    if (!v)
        return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < (double)lo ||
        v->valuedouble > (double)hi) {
        char p[64];
        str_fmt(p, sizeof p, "config.%s", k);
        reply_error(resp, 400, p, "config.%s: expected an integer in %ld..%ld", k, lo, hi);
        return -1;
    }
    *out = (int)v->valuedouble;
    return 0;
}

/* The client's config over the server's: the allow-listed settings only,
 * never a path. 0, or -1 with the reply set. */
static int apply_config(sep *ep, const cJSON *cfg, http_server_resp *resp)
{
    if (!cfg)
        return 0;
    if (!cJSON_IsObject(cfg)) {
        reply_error(resp, 400, "config", "config: expected an object");
        return -1;
    }
    static const char *allowed[] = {"prompt",     "think",           "history",          "template",
                                    "max_turns",  "max_context_tokens", "max_wall_s", "max_reply_tokens",
                                    "obs_budget", NULL};
    const cJSON *f;
    cJSON_ArrayForEach(f, cfg)
    {
        int k = 0;
        while (allowed[k] && strcmp(allowed[k], f->string))
            k++;
        if (!allowed[k]) {
            char p[96];
            str_fmt(p, sizeof p, "config.%.60s", f->string);
            reply_error(resp, 400, p,
                        "config.%.60s: not a setting a client may choose (prompt, think, history, template, max_turns, "
                        "max_context_tokens, max_wall_s, max_reply_tokens, obs_budget)",
                        f->string);
            return -1;
        }
    }
    const cJSON *v;
    if ((v = field(cfg, "prompt"))) {
        const char *p = cJSON_GetStringValue(v);
        size_t n = p ? strlen(p) : 0;
        int ok = n > 0 && n < sizeof ep->prompt;
        for (size_t i = 0; ok && i < n; i++)
            ok = (p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') || (p[i] >= '0' && p[i] <= '9') ||
                 p[i] == '_' || p[i] == '-';
        if (!ok) {
            reply_error(resp, 400, "config.prompt", "config.prompt: expected a prompt name ([A-Za-z0-9_-]+, e.g. v2)");
            return -1;
        }
        memcpy(ep->prompt, p, n + 1);
        ep->cfg.prompt = ep->prompt;
    }
    if ((v = field(cfg, "think"))) {
        const char *t = cJSON_GetStringValue(v);
        if (cJSON_IsBool(v))
            ep->cfg.think = cJSON_IsTrue(v);
        else if (t && (!strcmp(t, "on") || !strcmp(t, "off")))
            ep->cfg.think = !strcmp(t, "on");
        else {
            reply_error(resp, 400, "config.think", "config.think: expected true, false, \"on\" or \"off\"");
            return -1;
        }
    }
    if ((v = field(cfg, "history"))) {
        const char *t = cJSON_GetStringValue(v);
        if (!t || (strcmp(t, "keep") && strcmp(t, "drop"))) {
            reply_error(resp, 400, "config.history", "config.history: expected \"keep\" or \"drop\"");
            return -1;
        }
        ep->cfg.history_keep = !strcmp(t, "keep");
    }
    if ((v = field(cfg, "template"))) {
        tpl_kind k;
        char e[RL_ERR_MAX];
        if (tpl_kind_parse(&k, cJSON_GetStringValue(v), e) < 0) {
            reply_error(resp, 400, "config.template", "config.template: %s", e);
            return -1;
        }
        ep->cfg.chat_template = (int)k;
    }
    int n;
    if (cfg_int(&ep->cfg.max_turns, cfg, "max_turns", 1, RL_EP_HARD_TURNS, resp) < 0 ||
        cfg_int(&ep->cfg.max_context_tokens, cfg, "max_context_tokens", 0, 10000000, resp) < 0 ||
        cfg_int(&ep->cfg.max_wall_s, cfg, "max_wall_s", 0, 86400, resp) < 0 ||
        cfg_int(&ep->cfg.max_reply_tokens, cfg, "max_reply_tokens", 1, 1000000, resp) < 0)
        return -1;
    n = (int)ep->cfg.obs_budget;
    if (cfg_int(&n, cfg, "obs_budget", 256, 16 << 20, resp) < 0)
        return -1;
    ep->cfg.obs_budget = (size_t)n;
    return 0;
}

/* ---- endpoints ----------------------------------------------------------------------- */

/* Answers the error and evaluates to -1. */
#define REFUSE(...) (reply_error(resp, __VA_ARGS__), -1)

static int do_reset(envsrv *s, const cJSON *body, http_server_resp *resp)
{
    const cJSON *jt = field(body, "task"), *js = field(body, "seed");
    if (!cJSON_IsString(jt))
        return reply_error(resp, 400, "task", "task: expected a task id (see GET /v1/tasks)");
    const task *t = task_set_find(s->o.tasks, jt->valuestring);
    if (!t)
        return reply_error(resp, 404, "task", "task: no task '%.200s' (see GET /v1/tasks)", jt->valuestring);
    if (js && (!cJSON_IsNumber(js) || js->valuedouble < 0 || js->valuedouble > 2147483647.0 ||
               js->valuedouble != floor(js->valuedouble)))
        return reply_error(resp, 400, "seed", "seed: expected an integer in 0..2147483647");
    /* a slot: free, preferring one whose tree is of this task */
    pthread_mutex_lock(&s->mu);
    if (s->stopping) {
        pthread_mutex_unlock(&s->mu);
        return reply_error(resp, 503, NULL, "the server is stopping");
    }
    int pick = -1;
    for (int i = 0; i < s->o.max_episodes; i++) {
        sep *e = &s->eps[i];
        if (e->open || e->busy)
            continue;
        if (e->ws_task == t) {
            pick = i;
            break;
        }
        if (pick < 0 || (s->eps[pick].ws && !e->ws))
            pick = i;
    }
    if (pick < 0) {
        pthread_mutex_unlock(&s->mu);
        return reply_error(resp, 429, NULL, "%d episodes are open, the most this server holds: close one or retry",
                           s->o.max_episodes);
    }
    sep *ep = &s->eps[pick];
    ep->busy = 1;
    ep->open = 0;
    str_fmt(ep->id, sizeof ep->id, "%s-%s-%ld", s->server_id, s->boot, ++s->seq);
    pthread_mutex_unlock(&s->mu);

    ep->t = t;
    ep->cfg = *s->o.base;
    ep->cfg.policy = "external";
    ep->cfg.log = NULL;
    ep->cfg.seed = js ? (uint64_t)js->valuedouble : 1;
    ep->nsent = 0;
    ep->turn = 0;
    ep->ctx_bytes = ep->ctx_tokens = 0;
    const cJSON *jw = field(body, "return_context_ids");
    ep->want_ids = cJSON_IsTrue(jw);
    int rc = 0;
    if (jw && !cJSON_IsBool(jw))
        rc = REFUSE(400, "return_context_ids", "return_context_ids: expected true or false");
    else if (ep->want_ids && !ep->cfg.tok)
        rc = REFUSE(400, "return_context_ids",
                         "return_context_ids: this server has no tokenizer (start it with one)");
    if (rc == 0)
        rc = apply_config(ep, field(body, "config"), resp);
    char err[RL_ERR_MAX];
    if (rc == 0 && ep->ws_task != t) {
        if (ep->ws) {
            char old[4096];
            str_copy(old, sizeof old, ws_path(ep->ws));
            ws_free(ep->ws);
            remove_tree(old);
        }
        ep->ws = NULL;
        ep->ws_task = NULL;
        ws_opts wo;
        ws_opts_default(&wo);
        if (s->o.ws_root)
            wo.root = s->o.ws_root;
        size_t share = ENVSRV_BLOB_CACHE_TOTAL / (size_t)s->o.max_episodes;
        wo.cache_max = share < wo.cache_max ? share : wo.cache_max;
        if ((rc = ws_open_task(&ep->ws, &wo, t, s->o.slot_base + pick, err)) < 0)
            reply_error(resp, 500, NULL, "reset: %s", err);
        else
            ep->ws_task = t;
    }
    if (rc == 0 && (rc = ep_new(&ep->e, t, &ep->cfg, ep->ws, err)) < 0)
        reply_error(resp, strstr(err, "prompt") ? 400 : 500, strstr(err, "prompt") ? "config.prompt" : NULL,
                    "reset: %s", err);
    if (rc == 0 && !next_turn(ep)) {
        rc = -1;
        reply_error(resp, 400, "config", "reset: the episode ended before its first turn (context over the limits?)");
    }
    if (rc == 0 && (rc = journal_write(s, ep, err)) < 0)
        reply_error(resp, 500, NULL, "reset: %s", err);
    if (rc != 0) {
        ep_free(ep->e);
        ep->e = NULL;
        pthread_mutex_lock(&s->mu);
        ep->busy = 0;
        pthread_mutex_unlock(&s->mu);
        return 0;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "episode_id", ep->id);
    cJSON_AddItemToObject(o, "messages", messages_from(ep, 0));
    size_t nspecs;
    const tc_spec *specs = tool_specs(&nspecs);
    cJSON_AddItemToObject(o, "tools", tc_specs_json(specs, nspecs));
    cJSON_AddItemToObject(o, "info", info_json(ep, NULL));
    if (ep->want_ids)
        cJSON_AddItemToObject(o, "generation", generation_json(ep));
    ep->nsent = ep_chat(ep->e)->n;
    pthread_mutex_lock(&s->mu);
    ep->open = 1;
    ep->busy = 0;
    ep->last_ms = clk_ms();
    s->nopen++;
    s->opened++;
    pthread_mutex_unlock(&s->mu);
    return reply_json(resp, 200, o);
}

/* The assistant text of a step's message: a string as is, an OpenAI
 * assistant message rendered in the chat template. NULL and a reply on
 * error. */
static char *step_text(const sep *ep, const cJSON *m, size_t *len, http_server_resp *resp)
{
    if (cJSON_IsString(m)) {
        *len = strlen(m->valuestring);
        return strdup(m->valuestring);
    }
    if (!cJSON_IsObject(m)) {
        reply_error(resp, 400, "message",
                    "message: expected the assistant's text or an OpenAI assistant message object");
        return NULL;
    }
    const cJSON *role = field(m, "role");
    if (role && (!cJSON_IsString(role) || strcmp(role->valuestring, "assistant"))) {
        reply_error(resp, 400, "message.role", "message.role: expected \"assistant\"");
        return NULL;
    }
    cJSON *copy = cJSON_Duplicate(m, 1);
    if (copy && !role)
        cJSON_AddStringToObject(copy, "role", "assistant");
    cJSON *arr = cJSON_CreateArray();
    cJSON_AddItemToArray(arr, copy);
    chat *c = NULL;
    char err[RL_ERR_MAX];
    int rc = chat_from_json(&c, arr, err);
    cJSON_Delete(arr);
    if (rc < 0) {
        reply_error(resp, 400, "message", "message: %s", err);
        return NULL;
    }
    char *text = c->n == 1 ? tpl_assistant_text(&c->msgs[0], ep->cfg.think, len) : NULL;
    chat_free(c);
    if (!text)
        reply_error(resp, 400, "message", "message: expected one assistant message");
    return text;
}

/* The optional token fields of a step: "token_ids" (the ids sampled, stop
 * token included), "logprobs" (one per id) and "policy_version", recorded
 * with the turn as a local episode records its policy's. -1 and a reply
 * on error. */
static int step_tokens(const sep *ep, const cJSON *body, pol_response *pr, http_server_resp *resp)
{
    const cJSON *ji = field(body, "token_ids"), *jl = field(body, "logprobs"), *jv = field(body, "policy_version");
    if (jv) {
        if (!cJSON_IsNumber(jv) || jv->valuedouble < 0 || jv->valuedouble > 1e15 ||
            jv->valuedouble != floor(jv->valuedouble))
            return REFUSE(400, "policy_version", "policy_version: expected an integer >= 0");
        pr->policy_version = (long)jv->valuedouble;
    }
    if (!ji && !jl)
        return 0;
    int vocab = ep->cfg.tok ? tok_vocab_size(ep->cfg.tok) : 0;
    if (!cJSON_IsArray(ji) || !vocab)
        return REFUSE(400, "token_ids",
                           vocab ? "token_ids: expected an array of token ids"
                                 : "token_ids: this server has no tokenizer to check them against");
    size_t n = (size_t)cJSON_GetArraySize(ji);
    if (!cJSON_IsArray(jl) || (size_t)cJSON_GetArraySize(jl) != n)
        return REFUSE(400, "logprobs", "logprobs: expected an array of numbers, one per token id");
    if (n > ENVSRV_STEP_TOKENS_MAX)
        return REFUSE(400, "token_ids", "token_ids: expected at most %d ids", ENVSRV_STEP_TOKENS_MAX);
    pr->ids = malloc((n + 1) * sizeof *pr->ids);
    pr->logprobs = malloc((n + 1) * sizeof *pr->logprobs);
    if (!pr->ids || !pr->logprobs) {
        pol_response_dispose(pr);
        return REFUSE(500, NULL, "step: out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        const cJSON *a = cJSON_GetArrayItem(ji, (int)i), *b = cJSON_GetArrayItem(jl, (int)i);
        if (!cJSON_IsNumber(a) || a->valuedouble < 0 || a->valuedouble >= vocab || a->valuedouble != floor(a->valuedouble)) {
            pol_response_dispose(pr);
            return REFUSE(400, "token_ids", "token_ids[%zu]: expected an id in 0..%d", i, vocab - 1);
        }
        if (!cJSON_IsNumber(b) || !isfinite(b->valuedouble) || b->valuedouble > 0) {
            pol_response_dispose(pr);
            return REFUSE(400, "logprobs", "logprobs[%zu]: expected a finite number <= 0", i);
        }
        pr->ids[i] = (int32_t)a->valuedouble;
        pr->logprobs[i] = (float)b->valuedouble;
    }
    pr->n_ids = n;
    return 0;
}

/* 1 when text calls run_tests (a test run: it goes through the queue). */
static int calls_tests(const char *text, size_t len)
{
    size_t n;
    const tc_spec *specs = tool_specs(&n);
    tc_parsed p;
    char err[RL_ERR_MAX];
    tc_parse(&p, text, len, specs, n, NULL, err);
    int yes = 0;
    for (size_t i = 0; i < p.ncalls; i++)
        yes |= !strcmp(p.calls[i].name, "run_tests");
    tc_parsed_dispose(&p);
    return yes;
}

static void note_latency(envsrv *s, double ms, double ms_tests)
{
    pthread_mutex_lock(&s->mu);
    long k = s->nlat++ % ENVSRV_LATENCY_WINDOW;
    s->lat[k] = ms;
    s->latx[k] = ms - ms_tests;
    s->steps++;
    pthread_mutex_unlock(&s->mu);
}

static int do_step(envsrv *s, const cJSON *body, http_server_resp *resp)
{
    double t0 = clk_ms(), ms_tests = 0;
    const cJSON *jid = field(body, "episode_id"), *jm = field(body, "message"), *jf = field(body, "finish_reason");
    if (!cJSON_IsString(jid))
        return reply_error(resp, 400, "episode_id", "episode_id: expected the id /v1/reset answered");
    if (!jm)
        return reply_error(resp, 400, "message", "message: expected the assistant's reply (text or message object)");
    int length = 0;
    if (jf) {
        const char *f = cJSON_GetStringValue(jf);
        if (!f || (strcmp(f, "stop") && strcmp(f, "length") && strcmp(f, "tool_calls")))
            return reply_error(resp, 400, "finish_reason", "finish_reason: expected \"stop\", \"tool_calls\" or \"length\"");
        length = !strcmp(f, "length");
    }
    sep *ep = take_or_reply(s, jid->valuestring, 0, resp);
    if (!ep)
        return 0;
    pol_response pr;
    memset(&pr, 0, sizeof pr);
    if (step_tokens(ep, body, &pr, resp) < 0) {
        give_back(s, ep, 1);
        return 0;
    }
    size_t len = 0;
    char *text = step_text(ep, jm, &len, resp);
    if (!text) {
        pol_response_dispose(&pr);
        give_back(s, ep, 1);
        return 0;
    }
    pr.text = text;
    pr.text_len = len;
    pr.finish = length ? POL_FINISH_LENGTH : POL_FINISH_STOP;
    int gated = calls_tests(text, len);
    double tg = clk_ms();
    if (gated)
        gate_enter(s);
    char err[RL_ERR_MAX];
    size_t before = ep_chat(ep->e)->n;
    int rc = ep_feed(ep->e, &pr, err);
    if (gated) {
        gate_leave(s);
        ms_tests += clk_ms() - tg;
    }
    pol_response_dispose(&pr);
    cJSON *o = cJSON_CreateObject();
    /* the assistant message itself is the client's; the rest is news */
    cJSON_AddItemToObject(o, "messages", messages_from(ep, before + 1 <= ep_chat(ep->e)->n ? before + 1 : before));
    ep->nsent = ep_chat(ep->e)->n;
    int more = rc == 0 && next_turn(ep);
    if (rc < 0)
        ep_abort(ep->e, "error", err);
    if (more && journal_write(s, ep, err) < 0)
        rl_logf(s->o.log, s->o.log_ctx, RL_LOG_ERROR, "serve: %s: the journal was not written: %s", ep->id, err);
    if (more) {
        cJSON_AddFalseToObject(o, "done");
        cJSON_AddNullToObject(o, "reward");
        cJSON_AddItemToObject(o, "info", info_json(ep, NULL));
        if (ep->want_ids)
            cJSON_AddItemToObject(o, "generation", generation_json(ep));
        give_back(s, ep, 1);
    } else {
        cJSON_AddTrueToObject(o, "done");
        finish(s, ep, NULL, NULL, o, &ms_tests);
    }
    note_latency(s, clk_ms() - t0, ms_tests);
    return reply_json(resp, 200, o);
}

static int do_close(envsrv *s, const cJSON *body, http_server_resp *resp)
{
    const cJSON *jid = field(body, "episode_id");
    if (!cJSON_IsString(jid))
        return reply_error(resp, 400, "episode_id", "episode_id: expected the id /v1/reset answered");
    sep *ep = take_or_reply(s, jid->valuestring, 0, resp);
    if (!ep)
        return 0;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "episode_id", jid->valuestring);
    cJSON_AddTrueToObject(o, "done");
    finish(s, ep, "closed", "closed by the client", o, NULL);
    return reply_json(resp, 200, o);
}

static int do_state(envsrv *s, const http_server_req *req, http_server_resp *resp)
{
    const char *id = http_server_req_query(req, "episode_id");
    if (!id || !*id)
        return reply_error(resp, 400, "episode_id", "episode_id: expected ?episode_id=ID");
    sep *ep = take_or_reply(s, id, 1, resp);
    if (!ep)
        return 0;
    char *rec = NULL, err[RL_ERR_MAX];
    int rc = ep_snapshot(&rec, ep->e, err);
    give_back(s, ep, 0);
    if (rc < 0)
        return reply_error(resp, 500, NULL, "state: %s", err);
    rc = http_reply(resp, 200, "application/json", rec, strlen(rec));
    free(rec);
    return rc;
}

static int do_tasks(envsrv *s, const http_server_req *req, http_server_resp *resp)
{
    const char *sel = http_server_req_query(req, "select");
    task_set pick;
    char err[RL_ERR_MAX];
    if (task_select(&pick, s->o.tasks, sel && *sel ? sel : "all", err) < 0)
        return reply_error(resp, 400, "select", "select: %s", err);
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < pick.n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "instance_id", pick.v[i]->instance_id);
        cJSON_AddStringToObject(o, "repo", pick.v[i]->repo);
        cJSON_AddStringToObject(o, "kind", task_kind_name(pick.v[i]->kind));
        cJSON_AddStringToObject(o, "split", task_split_name(pick.v[i]->split));
        cJSON_AddItemToArray(a, o);
    }
    task_select_dispose(&pick);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "tasks", a);
    return reply_json(resp, 200, o);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(double *v, long n, double q)
{
    if (n <= 0)
        return NAN;
    long k = (long)ceil(q * (double)n) - 1;
    return v[k < 0 ? 0 : k];
}

void envsrv_get_stats(envsrv *s, envsrv_stats *st)
{
    memset(st, 0, sizeof *st);
    double *a = malloc(2 * ENVSRV_LATENCY_WINDOW * sizeof *a);
    pthread_mutex_lock(&s->mu);
    st->opened = s->opened;
    st->steps = s->steps;
    st->finished = s->finished;
    st->restarted = s->restarted;
    st->open = s->nopen;
    long n = s->nlat < ENVSRV_LATENCY_WINDOW ? s->nlat : ENVSRV_LATENCY_WINDOW;
    if (a) {
        memcpy(a, s->lat, (size_t)n * sizeof *a);
        memcpy(a + ENVSRV_LATENCY_WINDOW, s->latx, (size_t)n * sizeof *a);
    }
    pthread_mutex_unlock(&s->mu);
    pthread_mutex_lock(&s->gmu);
    st->tests_running = s->running;
    st->tests_waiting = s->waiting;
    pthread_mutex_unlock(&s->gmu);
    st->step_ms_p50 = st->step_ms_p99 = st->step_ms_p50_x = st->step_ms_p99_x = NAN;
    if (!a)
        return;
    qsort(a, (size_t)n, sizeof *a, cmp_double);
    qsort(a + ENVSRV_LATENCY_WINDOW, (size_t)n, sizeof *a, cmp_double);
    st->step_ms_p50 = quantile(a, n, 0.5);
    st->step_ms_p99 = quantile(a, n, 0.99);
    st->step_ms_p50_x = quantile(a + ENVSRV_LATENCY_WINDOW, n, 0.5);
    st->step_ms_p99_x = quantile(a + ENVSRV_LATENCY_WINDOW, n, 0.99);
    free(a);
}

static int do_metrics(envsrv *s, http_server_resp *resp)
{
    envsrv_stats st;
    envsrv_get_stats(s, &st);
    double up = (clk_ms() - s->t0) / 1000.0;
    buf_t b;
    buf_init(&b, 1u << 16);
    buf_printf(&b,
               "# HELP rl_env_open_episodes Episodes open now.\n# TYPE rl_env_open_episodes gauge\n"
               "rl_env_open_episodes %d\n"
               "# HELP rl_env_max_episodes Episodes the server holds at most.\n# TYPE rl_env_max_episodes gauge\n"
               "rl_env_max_episodes %d\n"
               "# HELP rl_env_episodes_opened_total Episodes reset.\n# TYPE rl_env_episodes_opened_total counter\n"
               "rl_env_episodes_opened_total %ld\n"
               "# HELP rl_env_episodes_finished_total Episodes recorded (done, closed, idle).\n"
               "# TYPE rl_env_episodes_finished_total counter\nrl_env_episodes_finished_total %ld\n"
               "# HELP rl_env_steps_total Steps answered.\n# TYPE rl_env_steps_total counter\n"
               "rl_env_steps_total %ld\n"
               "# HELP rl_env_steps_per_second Steps per second since the start.\n"
               "# TYPE rl_env_steps_per_second gauge\nrl_env_steps_per_second %.3f\n"
               "# HELP rl_env_test_runs_in_flight Test runs in the sandbox now.\n"
               "# TYPE rl_env_test_runs_in_flight gauge\nrl_env_test_runs_in_flight %d\n"
               "# HELP rl_env_test_queue_length Steps waiting for a test-run place.\n"
               "# TYPE rl_env_test_queue_length gauge\nrl_env_test_queue_length %d\n",
               st.open, s->o.max_episodes, st.opened, st.finished, st.steps, up > 0 ? (double)st.steps / up : 0.0,
               st.tests_running, st.tests_waiting);
    buf_printf(&b,
               "# HELP rl_env_step_latency_ms Step latency (quantiles over the last %d steps).\n"
               "# TYPE rl_env_step_latency_ms summary\n"
               "rl_env_step_latency_ms{quantile=\"0.5\"} %.3f\nrl_env_step_latency_ms{quantile=\"0.99\"} %.3f\n"
               "# HELP rl_env_step_latency_excl_tests_ms Step latency less its test runs and their queue.\n"
               "# TYPE rl_env_step_latency_excl_tests_ms summary\n"
               "rl_env_step_latency_excl_tests_ms{quantile=\"0.5\"} %.3f\n"
               "rl_env_step_latency_excl_tests_ms{quantile=\"0.99\"} %.3f\n",
               ENVSRV_LATENCY_WINDOW, st.step_ms_p50, st.step_ms_p99, st.step_ms_p50_x, st.step_ms_p99_x);
    int rc = b.data ? http_reply(resp, 200, "text/plain; version=0.0.4", b.data, b.len) : RL_ENOMEM;
    buf_dispose(&b);
    return rc;
}

int envsrv_handle(void *ctx, const http_server_req *req, http_server_resp *resp, char *err)
{
    envsrv *s = ctx;
    (void)err;
    const char *m = req->method, *p = req->path;
    int get = !strcmp(m, "GET"), post = !strcmp(m, "POST");
    if (!strcmp(p, "/health")) {
        if (!get)
            return reply_error(resp, 405, NULL, "/health: expected GET");
        cJSON *o = cJSON_CreateObject();
        pthread_mutex_lock(&s->mu);
        cJSON_AddStringToObject(o, "status", s->stopping ? "stopping" : "ok");
        cJSON_AddStringToObject(o, "server_id", s->server_id);
        cJSON_AddNumberToObject(o, "open_episodes", s->nopen);
        cJSON_AddNumberToObject(o, "max_episodes", s->o.max_episodes);
        pthread_mutex_unlock(&s->mu);
        return reply_json(resp, 200, o);
    }
    static const char *const routes[] = {"/v1/reset", "/v1/step", "/v1/close", "/v1/state", "/v1/tasks", "/metrics"};
    int r = -1;
    for (int i = 0; i < 6; i++)
        if (!strcmp(p, routes[i]))
            r = i;
    if (r < 0)
        return reply_error(resp, 404, NULL, "%.200s: no such endpoint (/v1/reset, /v1/step, /v1/close, /v1/state, "
                           "/v1/tasks, /health, /metrics)", p);
    if (!http_server_req_bearer_ok(req, s->o.token)) {
        http_reply_header(resp, "WWW-Authenticate", "Bearer");
        return reply_error(resp, 401, "Authorization", "Authorization: expected the header \"Bearer TOKEN\" with the server's token");
    }
    if (r <= 2 && !post)
        return reply_error(resp, 405, NULL, "%s: expected POST", p);
    if (r >= 3 && !get)
        return reply_error(resp, 405, NULL, "%s: expected GET", p);
    if (r == 3)
        return do_state(s, req, resp);
    if (r == 4)
        return do_tasks(s, req, resp);
    if (r == 5)
        return do_metrics(s, resp);
    cJSON *body = cJSON_ParseWithLength(req->body, req->body_len);
    if (!cJSON_IsObject(body)) {
        cJSON_Delete(body);
        return reply_error(resp, 400, "body", "body: expected a JSON object");
    }
    int rc = r == 0 ? do_reset(s, body, resp) : r == 1 ? do_step(s, body, resp) : do_close(s, body, resp);
    cJSON_Delete(body);
    return rc;
}

/* ---- idle reaper ------------------------------------------------------------------------ */

static void *reaper_main(void *arg)
{
    envsrv *s = arg;
    pthread_mutex_lock(&s->mu);
    while (!s->stopping) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        pthread_cond_timedwait(&s->rcv, &s->mu, &ts);
        if (s->stopping || s->o.idle_timeout_s <= 0)
            continue;
        double now = clk_ms();
        for (int i = 0; i < s->o.max_episodes && !s->stopping; i++) {
            sep *ep = &s->eps[i];
            if (!ep->open || ep->busy || now - ep->last_ms < s->o.idle_timeout_s * 1000.0)
                continue;
            ep->busy = 1;
            pthread_mutex_unlock(&s->mu);
            char msg[96];
            str_fmt(msg, sizeof msg, "no request for %d s", s->o.idle_timeout_s);
            finish(s, ep, "idle_timeout", msg, NULL, NULL);
            pthread_mutex_lock(&s->mu);
        }
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* ---- life ------------------------------------------------------------------------------- */

int envsrv_new(envsrv **out, const envsrv_opts *o, char *err)
{
    *out = NULL;
    if (!o->tasks || !o->base || !o->out || !*o->out)
        return rl_err(err, RL_EINVAL, "serve: the tasks, the base config and the records file are required");
    if (o->max_episodes < 1 || o->max_episodes > ENVSRV_EPISODES_HARD)
        return rl_err(err, RL_EINVAL, "serve: max episodes %d: expected 1..%d", o->max_episodes, ENVSRV_EPISODES_HARD);
    if (o->slot_base < 0 || o->slot_base > RL_WS_SLOT_MAX - o->max_episodes)
        return rl_err(err, RL_EINVAL, "serve: work-tree slots %d..%d: expected within 0..%d", o->slot_base,
                      o->slot_base + o->max_episodes - 1, RL_WS_SLOT_MAX - 1);
    if (o->max_test_runs < 0 || o->max_test_runs > ENVSRV_TEST_RUNS_HARD)
        return rl_err(err, RL_EINVAL, "serve: max test runs %d: expected 0..%d", o->max_test_runs, ENVSRV_TEST_RUNS_HARD);
    if (o->idle_timeout_s < 0 || o->idle_timeout_s > ENVSRV_IDLE_S_HARD)
        return rl_err(err, RL_EINVAL, "serve: idle timeout %d s: expected 0..%d", o->idle_timeout_s, ENVSRV_IDLE_S_HARD);
    const char *id = o->server_id ? o->server_id : "";
    size_t idn = strlen(id);
    int ok = idn > 0 && idn <= ENVSRV_SERVER_ID_MAX;
    for (size_t i = 0; ok && i < idn; i++)
        ok = (id[i] >= 'a' && id[i] <= 'z') || (id[i] >= 'A' && id[i] <= 'Z') || (id[i] >= '0' && id[i] <= '9') ||
             id[i] == '_';
    if (!ok)
        return rl_err(err, RL_EINVAL, "serve: server id '%.40s': expected 1-%d of [A-Za-z0-9_]", id, ENVSRV_SERVER_ID_MAX);
    if (o->finished_keep < 1 || o->finished_keep > ENVSRV_FINISHED_KEEP)
        return rl_err(err, RL_EINVAL, "serve: finished records kept %d: expected 1..%d", o->finished_keep,
                      ENVSRV_FINISHED_KEEP);
    if (o->token && strlen(o->token) > ENVSRV_TOKEN_MAX)
        return rl_err(err, RL_EINVAL, "serve: token: expected at most %d bytes", ENVSRV_TOKEN_MAX);
    if (strlen(o->out) + 8 > sizeof ((envsrv *)0)->out)
        return rl_err(err, RL_EINVAL, "serve: records file name too long");
    envsrv *s = calloc(1, sizeof *s);
    if (!s)
        return rl_err(err, RL_ENOMEM, "serve: out of memory");
    s->o = *o;
    str_copy(s->out, sizeof s->out, o->out);
    str_fmt(s->journal, sizeof s->journal, "%s.open.d", o->out);
    str_copy(s->server_id, sizeof s->server_id, id);
    str_fmt(s->boot, sizeof s->boot, "%lx", (unsigned long)time(NULL) & 0xffffffffUL);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    s->max_runs = o->max_test_runs ? o->max_test_runs : cpus > 0 ? (int)cpus : 1;
    s->t0 = clk_ms();
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->gmu, NULL);
    pthread_mutex_init(&s->fmu, NULL);
    pthread_cond_init(&s->gcv, NULL);
    pthread_cond_init(&s->rcv, NULL);
    s->eps = calloc((size_t)o->max_episodes, sizeof *s->eps);
    s->lat = calloc(ENVSRV_LATENCY_WINDOW, sizeof *s->lat);
    s->latx = calloc(ENVSRV_LATENCY_WINDOW, sizeof *s->latx);
    s->done = calloc((size_t)o->finished_keep, sizeof *s->done);
    int rc;
    char dir[4096];
    fs_dirname(dir, sizeof dir, s->out);
    if (!s->eps || !s->lat || !s->latx || !s->done)
        rc = rl_err(err, RL_ENOMEM, "serve: out of memory");
    else if ((rc = fs_mkdirs(dir, err)) == 0 && (rc = recover(s, err)) == 0) {
        if (pthread_create(&s->reaper, NULL, reaper_main, s) != 0)
            rc = rl_err(err, RL_EIO, "serve: cannot start the idle reaper");
        else
            s->reaper_started = 1;
    }
    if (rc < 0) {
        envsrv_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void envsrv_free(envsrv *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    s->stopping = 1;
    pthread_cond_broadcast(&s->rcv);
    pthread_mutex_unlock(&s->mu);
    if (s->reaper_started)
        pthread_join(s->reaper, NULL);
    for (int i = 0; s->eps && i < s->o.max_episodes; i++) {
        sep *ep = &s->eps[i];
        if (ep->open && ep->e) {
            char *rec = NULL, err[RL_ERR_MAX];
            ep_abort(ep->e, "shutdown", "the server stopped while the episode was open");
            if (ep_snapshot(&rec, ep->e, err) == 0)
                write_record(s, ep->id, rec, err);
            free(rec);
        }
        ep_free(ep->e);
        ws_free(ep->ws);
    }
    free(s->eps);
    free(s->lat);
    free(s->latx);
    free(s->done);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->gmu);
    pthread_mutex_destroy(&s->fmu);
    pthread_cond_destroy(&s->gcv);
    pthread_cond_destroy(&s->rcv);
    free(s);
}
