/* batch.c - parallel, resumable batches of episodes.
 *
 * Parent: reads the keys already in the output file, forks `workers`
 * processes, sends each a job index through its own pipe, reads
 * "index reward status" lines back from one shared pipe, and keeps a
 * progress bar. Worker: opens the task's work tree in its own slot, runs
 * the episode, appends the record (one write + fsync), reports. The
 * parent writes a record itself only when a worker died mid-job, so every
 * job ends with exactly one record.
 */
#include "harness/batch.h"

#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "harness/workspace.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void batch_opts_default(batch_opts *o)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    o->workers = n > 0 ? (int)n : 1;
    o->out = NULL;
    o->ws_root = NULL;
    o->progress = -1;
    o->quiet = 0;
}

void batch_job_key(char *out, size_t n, const batch_job *j)
{
    if (j->cfg->run)
        snprintf(out, n, "%s#%s#seed=%llu", j->task->instance_id, j->cfg->run,
                 (unsigned long long)j->seed);
    else
        snprintf(out, n, "%s#cfg=%016llx#seed=%llu", j->task->instance_id,
                 (unsigned long long)ep_config_digest(j->cfg), (unsigned long long)j->seed);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Keys of the complete records already in path. A torn last line (the
 * writer was killed inside write(2)) is cut off so appends stay whole. */
static int load_done(char ***keys, size_t *nkeys, const char *path, char *err)
{
    *keys = NULL;
    *nkeys = 0;
    char *data;
    size_t len;
    int rc = fs_read_file(&data, &len, path, RL_BATCH_OUT_MAX, err);
    if (rc == RL_ENOENT)
        return 0;
    if (rc < 0)
        return rc;
    if (len && data[len - 1] != '\n') {
        char *last = strrchr(data, '\n');
        off_t keep = last ? (off_t)(last - data + 1) : 0;
        if (truncate(path, keep) < 0) {
            free(data);
            return rl_err(err, RL_EIO, "%s: cannot cut the torn last record: %s", path, strerror(errno));
        }
        data[keep] = '\0';
    }
    size_t cap = 0;
    char *save = NULL;
    for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        cJSON *rec = cJSON_Parse(line);
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(rec, "key");
        if (cJSON_IsString(k)) {
            if (*nkeys == cap) {
                cap = cap ? cap * 2 : 64;
                char **nk = realloc(*keys, cap * sizeof *nk);
                if (!nk) {
                    cJSON_Delete(rec);
                    free(data);
                    return rl_err(err, RL_ENOMEM, "batch: out of memory");
                }
                *keys = nk;
            }
            (*keys)[(*nkeys)++] = strdup(k->valuestring);
        }
        cJSON_Delete(rec);
    }
    free(data);
    return 0;
}

static int key_done(char **keys, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (keys[i] && !strcmp(keys[i], key))
            return 1;
    return 0;
}

/* A record for an episode that could not produce its own. */
static char *error_record(const batch_job *j, const char *key, const char *why)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddNumberToObject(r, "schema", 1);
    cJSON_AddStringToObject(r, "key", key);
    cJSON_AddStringToObject(r, "task", j->task->instance_id);
    cJSON_AddStringToObject(r, "repo", j->task->repo);
    cJSON *cfg = cJSON_AddObjectToObject(r, "config");
    cJSON_AddStringToObject(cfg, "policy", j->cfg->policy ? j->cfg->policy : "");
    if (j->cfg->run)
        cJSON_AddStringToObject(cfg, "run", j->cfg->run);
    cJSON_AddNumberToObject(cfg, "seed", (double)j->seed);
    cJSON_AddItemToObject(r, "turns", cJSON_CreateArray());
    cJSON_AddNumberToObject(r, "reward", 0);
    cJSON_AddStringToObject(r, "end_reason", "error");
    cJSON_AddStringToObject(r, "error", why);
    char *s = cJSON_PrintUnformatted(r);
    cJSON_Delete(r);
    return s;
}

/* Worker: run jobs until the job pipe closes. */
static void worker_main(int slot, int job_fd, int res_fd, const batch_job *jobs, const batch_opts *o)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* the batch is killed: so are we */
    ws_opts wo;
    ws_opts_default(&wo);
    if (o->ws_root)
        wo.root = o->ws_root;
    uint32_t idx;
    while (read(job_fd, &idx, sizeof idx) == (ssize_t)sizeof idx) {
        const batch_job *j = &jobs[idx];
        char key[512], err[RL_ERR_MAX] = "";
        batch_job_key(key, sizeof key, j);
        ep_config cfg = *j->cfg;
        cfg.seed = j->seed;
        cfg.transcript = NULL;
        ws_tree *ws = NULL;
        char *rec = NULL;
        int rc = ws_open(&ws, &wo, j->task->repo, j->task->instance_id, j->task->bug, slot, err);
        policy *pol = NULL;
        if (rc == 0) {
            pol_env env;
            pol_env_default(&env);
            env.gold_patch = j->task->patch;
            env.seed = j->seed;
            env.temperature = cfg.temperature;
            env.top_p = cfg.top_p;
            rc = pol_open(&pol, cfg.policy, &env, err);
        }
        if (rc == 0)
            rc = ep_run(&rec, j->task, &cfg, ws, pol, err);
        if (rc < 0 || !rec) {
            free(rec);
            rec = error_record(j, key, err[0] ? err : "episode failed");
        }
        double reward = 0;
        cJSON *parsed = cJSON_Parse(rec);
        const cJSON *rw = cJSON_GetObjectItemCaseSensitive(parsed, "reward");
        if (cJSON_IsNumber(rw))
            reward = rw->valuedouble;
        cJSON_Delete(parsed);
        int st = 0;
        if (fs_append_record(o->out, rec, strlen(rec), err) < 0) {
            fprintf(stderr, "batch: %s\n", err);
            st = 2;
        } else if (rc < 0) {
            st = 1;
        }
        free(rec);
        pol_free(pol);
        ws_free(ws);
        char line[64];
        int l = snprintf(line, sizeof line, "%u %.6f %d\n", idx, reward, st);
        if (write(res_fd, line, (size_t)l) != l)
            _exit(3);
    }
    _exit(0);
}

typedef struct worker {
    pid_t pid;
    int job_fd;      /* parent's write end */
    long job;        /* index being run, -1 when idle */
} worker;

static int spawn(worker *w, int slot, int res_w, const batch_job *jobs, const batch_opts *o)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        close(p[1]);
        worker_main(slot, p[0], res_w, jobs, o);
    }
    close(p[0]);
    w->pid = pid;
    w->job_fd = p[1];
    w->job = -1;
    return 0;
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

static void progress(const batch_stats *st, size_t todo, double t0, int bar, double *last_line)
{
    double el = now_s() - t0;
    double eta = st->done ? el / (double)st->done * (double)(todo - st->done) : -1;
    char e[32], w[32];
    fmt_dur(e, sizeof e, eta);
    fmt_dur(w, sizeof w, el);
    double rate = st->done ? (double)st->passed / (double)st->done : 0;
    if (bar) {
        int width = 30, fill = todo ? (int)((double)width * (double)st->done / (double)todo) : width;
        fprintf(stderr, "\r[");
        for (int i = 0; i < width; i++)
            fputc(i < fill ? '#' : '.', stderr);
        fprintf(stderr, "] %zu/%zu pass %.2f errors %zu elapsed %s ETA %s   ", st->done, todo, rate,
                st->errors, w, e);
        if (st->done == todo)
            fputc('\n', stderr);
    } else if (st->done == todo || now_s() - *last_line >= RL_BATCH_PLAIN_EVERY_S) {
        fprintf(stderr, "batch: %zu/%zu episodes, pass rate %.2f, errors %zu, elapsed %s, ETA %s\n",
                st->done, todo, rate, st->errors, w, e);
        *last_line = now_s();
    }
}

int batch_run(batch_stats *st, const batch_job *jobs, size_t n, const batch_opts *o, char *err)
{
    memset(st, 0, sizeof *st);
    st->jobs = n;
    if (!o->out)
        return rl_err(err, RL_EINVAL, "batch: no output file given");
    if (n > RL_BATCH_MAX_JOBS)
        return rl_err(err, RL_ELIMIT, "batch: %zu jobs, limit is %u", n, RL_BATCH_MAX_JOBS);
    char dir[4096];
    fs_dirname(dir, sizeof dir, o->out);
    int rc = fs_mkdirs(dir, err);
    if (rc < 0)
        return rc;
    char **keys;
    size_t nkeys;
    if ((rc = load_done(&keys, &nkeys, o->out, err)) < 0)
        return rc;
    uint32_t *todo = malloc((n ? n : 1) * sizeof *todo);
    size_t ntodo = 0;
    for (size_t i = 0; todo && i < n; i++) {
        char key[512];
        batch_job_key(key, sizeof key, &jobs[i]);
        if (key_done(keys, nkeys, key))
            st->skipped++;
        else
            todo[ntodo++] = (uint32_t)i;
    }
    for (size_t i = 0; i < nkeys; i++)
        free(keys[i]);
    free(keys);
    if (!todo)
        return rl_err(err, RL_ENOMEM, "batch: out of memory");
    int bar = o->progress < 0 ? isatty(2) : o->progress;
    if (!o->quiet && st->skipped)
        fprintf(stderr, "batch: %zu of %zu episodes already recorded in %s; running the other %zu\n",
                st->skipped, n, o->out, ntodo);
    int nw = o->workers < 1 ? 1 : o->workers;
    if ((size_t)nw > ntodo)
        nw = (int)(ntodo ? ntodo : 1);
    double t0 = now_s(), last_line = t0;
    if (ntodo == 0) {
        free(todo);
        return 0;
    }
    int res[2];
    if (pipe2(res, O_CLOEXEC) < 0) {
        free(todo);
        return rl_err(err, RL_EIO, "batch: pipe: %s", strerror(errno));
    }
    worker *ws = calloc((size_t)nw, sizeof *ws);
    size_t next = 0;
    rc = 0;
    for (int i = 0; ws && i < nw; i++) {
        if (spawn(&ws[i], i, res[1], jobs, o) < 0) {
            rc = rl_err(err, RL_EIO, "batch: fork: %s", strerror(errno));
            nw = i;
            break;
        }
    }
    /* hand out the first jobs */
    for (int i = 0; i < nw && next < ntodo; i++) {
        ws[i].job = todo[next];
        if (write(ws[i].job_fd, &todo[next], sizeof todo[next]) != (ssize_t)sizeof todo[next])
            ws[i].job = -1;
        else
            next++;
    }
    char line[256];
    size_t ll = 0;
    while (st->done < ntodo && nw > 0) {
        struct pollfd pf = {res[0], POLLIN, 0};
        int pr = poll(&pf, 1, 200);
        if (pr > 0) {
            ssize_t r = read(res[0], line + ll, sizeof line - 1 - ll);
            if (r > 0)
                ll += (size_t)r;
        }
        /* complete lines: "index reward status" */
        char *nl;
        while ((nl = memchr(line, '\n', ll))) {
            *nl = '\0';
            unsigned idx = 0;
            double reward = 0;
            int s = 0;
            if (sscanf(line, "%u %lf %d", &idx, &reward, &s) == 3) {
                st->done++;
                st->passed += reward > 0.5;
                st->errors += s != 0;
                for (int i = 0; i < nw; i++) {
                    if (ws[i].job != (long)idx)
                        continue;
                    ws[i].job = -1;
                    if (next < ntodo && write(ws[i].job_fd, &todo[next], sizeof todo[next]) ==
                                            (ssize_t)sizeof todo[next])
                        ws[i].job = todo[next++];
                }
            }
            size_t used = (size_t)(nl + 1 - line);
            memmove(line, nl + 1, ll - used);
            ll -= used;
        }
        /* workers that died mid-job: record the error, replace them */
        int wst;
        pid_t dead;
        while ((dead = waitpid(-1, &wst, WNOHANG)) > 0) {
            for (int i = 0; i < nw; i++) {
                if (ws[i].pid != dead)
                    continue;
                close(ws[i].job_fd);
                if (ws[i].job >= 0) {
                    const batch_job *j = &jobs[ws[i].job];
                    char key[512], why[128], e2[RL_ERR_MAX];
                    batch_job_key(key, sizeof key, j);
                    if (WIFSIGNALED(wst))
                        snprintf(why, sizeof why, "worker died during the episode: signal %d", WTERMSIG(wst));
                    else
                        snprintf(why, sizeof why, "worker exited during the episode: status %d", WEXITSTATUS(wst));
                    char *rec = error_record(j, key, why);
                    if (rec && fs_append_record(o->out, rec, strlen(rec), e2) < 0)
                        fprintf(stderr, "batch: %s\n", e2);
                    free(rec);
                    st->done++;
                    st->errors++;
                }
                ws[i].job = -1;
                ws[i].pid = 0;
                if (next < ntodo && spawn(&ws[i], i, res[1], jobs, o) == 0 &&
                    write(ws[i].job_fd, &todo[next], sizeof todo[next]) == (ssize_t)sizeof todo[next])
                    ws[i].job = todo[next++];
            }
        }
        if (!o->quiet)
            progress(st, ntodo, t0, bar, &last_line);
    }
    for (int i = 0; ws && i < nw; i++)
        if (ws[i].pid > 0)
            close(ws[i].job_fd);
    for (int i = 0; ws && i < nw; i++)
        if (ws[i].pid > 0)
            waitpid(ws[i].pid, NULL, 0);
    close(res[0]);
    close(res[1]);
    free(ws);
    free(todo);
    st->wall_s = now_s() - t0;
    return rc;
}
