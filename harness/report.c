/* report.c - aggregate trajectory records into a readable report.
 *
 * Reads only the JSONL records (so a report can be rebuilt any time from
 * what a run left behind), then writes summary.md for people,
 * summary.json for programs, and three SVG plots linked from the summary.
 */
#include "harness/report.h"

#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "common/svg.h"
#include "common/vec.h"
#include "harness/tools.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define N_END 8
static const char *END_REASONS[N_END] = {"submit",   "no_tool_call", "max_turns",    "max_context",
                                         "wall_time", "policy_error", "error",        "other"};

/* Failed tool calls by the record's error_kind (harness/tools.h); kinds
 * not in the list count as "other", calls of records older than the
 * field are not counted here. */
#define N_KIND 9
static const char *KINDS[N_KIND] = {TOOL_KIND_NO_MATCH, TOOL_KIND_NOT_UNIQUE, TOOL_KIND_NO_CHANGE, "invalid", "not_found",
                                    "denied",   "limit",      "timeout",   "other"};

/* Rules of the integrity check (harness/integrity.h), counted per run;
 * unknown ones count as "other". */
#define N_RULE 14
static const char *RULES[N_RULE] = {"constructor", "atexit",      "exit_call", "include_next", "shadow_header",
                                    "interpose",   "python_hook", "build_config", "bytecode", "binary",
                                    "ignore_file", "special_file", "link_out",  "other"};

/* One episode, reduced to what the report needs. */
typedef struct ep_row {
    char key[256];       /* the record's key */
    int policy_error;    /* end_reason policy_error: its server did not answer */
    char run[128];
    char task[128];
    double reward;
    int turns;
    long policy_tokens;
    int calls, calls_ok, format_errors, identical;
    int wellformed; /* turns with a tool call and no format error (SWE-RL's format share) */
    int end;             /* index into END_REASONS */
    int failed[N_KIND];  /* failed calls by kind */
    int flagged;         /* the integrity check flagged the scored diff */
    int rules[N_RULE];   /* its findings by rule */
    double dur_s;
} ep_row;

typedef struct rows {
    ep_row *v;
    size_t n, cap;
} rows;

void report_opts_default(report_opts *o)
{
    o->std_mode = STATS_STD_POPULATION;
    o->eps = 1e-6;
    o->lambda = 0.7;
    o->identical_flag = 0.05;
    o->log = NULL;
    o->log_ctx = NULL;
}

static const char *jstr(const cJSON *o, const char *k, const char *dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : dflt;
}

static double jnum(const cJSON *o, const char *k, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* The run a record belongs to: config.run, else the config minus seed. */
static void run_name(char *out, size_t n, const cJSON *cfg)
{
    const char *run = jstr(cfg, "run", NULL);
    if (run) {
        snprintf(out, n, "%s", run);
        return;
    }
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(cfg, "max_turns");
    char turns[32];
    if (cJSON_IsNumber(mt))
        snprintf(turns, sizeof turns, "%d", mt->valueint);
    else
        snprintf(turns, sizeof turns, "unlimited");
    snprintf(out, n, "%s/%s/think-%s/%s/turns-%s", jstr(cfg, "policy", "?"), jstr(cfg, "prompt", "?"),
             jstr(cfg, "think", "?"), jstr(cfg, "history", "?"), turns);
}

/* Index of name in a list whose last entry is "other"; unknown names map there. */
static int index_of(const char *const *list, int n, const char *name)
{
    for (int i = 0; i < n - 1; i++)
        if (!strcmp(name, list[i]))
            return i;
    return n - 1;
}

static int row_from_json(ep_row *r, const cJSON *rec)
{
    memset(r, 0, sizeof *r);
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(rec, "config");
    const char *task = jstr(rec, "task", NULL);
    if (!cJSON_IsObject(cfg) || !task)
        return -1;
    run_name(r->run, sizeof r->run, cfg);
    snprintf(r->task, sizeof r->task, "%s", task);
    snprintf(r->key, sizeof r->key, "%s", jstr(rec, "key", ""));
    r->policy_error = !strcmp(jstr(rec, "end_reason", ""), "policy_error");
    r->reward = jnum(rec, "reward", 0);
    const cJSON *turns = cJSON_GetObjectItemCaseSensitive(rec, "turns");
    r->turns = cJSON_GetArraySize(turns);
    const cJSON *t;
    cJSON_ArrayForEach(t, turns)
    {
        int bad = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(t, "format_error"));
        r->format_errors += bad;
        r->wellformed += !bad && cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(t, "tool_calls")) > 0;
        const cJSON *c;
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(t, "tool_calls"))
        {
            r->calls++;
            r->calls_ok += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "ok"));
            r->identical += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "identical_to_previous"));
            const char *kind = jstr(c, "error_kind", NULL);
            if (kind)
                r->failed[index_of(KINDS, N_KIND, kind)]++;
        }
    }
    const cJSON *tok = cJSON_GetObjectItemCaseSensitive(rec, "tokens");
    r->policy_tokens = (long)jnum(tok, "policy", 0);
    r->end = index_of(END_REASONS, N_END, jstr(rec, "end_reason", "other"));
    const cJSON *ig = cJSON_GetObjectItemCaseSensitive(rec, "integrity"), *f;
    r->flagged = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ig, "flagged"));
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(ig, "findings"))
        r->rules[index_of(RULES, N_RULE, jstr(f, "rule", "other"))]++;
    r->dur_s = jnum(cJSON_GetObjectItemCaseSensitive(rec, "timings"), "total_ms", 0) / 1000.0;
    return 0;
}

static int rows_push(rows *rs, const ep_row *r)
{
    int rc = VEC_GROW(rs->v, rs->cap, rs->n + 1, RL_REPORT_MAX_EPISODES);
    if (rc < 0)
        return rc;
    rs->v[rs->n++] = *r;
    return 0;
}

static int load_file(rows *rs, const char *path, size_t *bad, char *err)
{
    char *data;
    size_t len;
    int rc = fs_read_file(&data, &len, path, RL_REPORT_FILE_MAX, err);
    if (rc < 0)
        return rc;
    char *save = NULL;
    size_t first = rs->n;
    for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        cJSON *rec = cJSON_Parse(line);
        ep_row r;
        if (!rec || row_from_json(&r, rec) < 0) {
            (*bad)++; /* a torn or foreign line: count it, keep going */
            cJSON_Delete(rec);
            continue;
        }
        cJSON_Delete(rec);
        if ((rc = rows_push(rs, &r)) < 0) {
            free(data);
            return rc == RL_ELIMIT ? rl_err(err, rc, "%s: more than %u episodes", path, RL_REPORT_MAX_EPISODES)
                                   : rl_err(err, rc, "%s: out of memory", path);
        }
    }
    free(data);
    /* an episode recorded as a policy error and again by a later run of
     * the batch (same key) counts once, as its later record */
    size_t out = first;
    for (size_t i = first; i < rs->n; i++) {
        int later = 0;
        for (size_t k = i + 1; rs->v[i].policy_error && rs->v[i].key[0] && k < rs->n && !later; k++)
            later = !strcmp(rs->v[k].key, rs->v[i].key);
        if (!later)
            rs->v[out++] = rs->v[i];
    }
    rs->n = out;
    return 0;
}

static int load_dir(rows *rs, const char *dir, int depth, size_t *bad, char *err)
{
    if (depth > 4)
        return 0;
    char **names;
    size_t n;
    int rc = fs_list_dir(&names, &n, dir, err); /* sorted: deterministic reports */
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        struct stat st;
        if (rc == 0 && stat(path, &st) == 0) {
            size_t l = strlen(names[i]);
            if (S_ISDIR(st.st_mode))
                rc = load_dir(rs, path, depth + 1, bad, err);
            else if (l > 6 && !strcmp(names[i] + l - 6, ".jsonl"))
                rc = load_file(rs, path, bad, err);
        }
    }
    fs_names_free(names, n);
    return rc;
}

/* Distinct values of a field, in first-seen order. */
typedef struct names {
    const char **v;
    size_t n, alloc;
} names;

/* Adds x unless present. Returns 0, RL_ELIMIT or RL_ENOMEM. */
static int names_add(names *s, const char *x)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], x))
            return 0;
    int rc = VEC_GROW(s->v, s->alloc, s->n + 1, RL_REPORT_MAX_EPISODES);
    if (rc < 0)
        return rc;
    s->v[s->n++] = x;
    return 0;
}

typedef struct run_stats {
    const char *name;
    size_t n, passed;
    double lo, hi;
    double turns, tokens, call_ok, fmt_err, identical, wellformed;
    size_t calls, turns_total;
    size_t end[N_END];
    size_t failed[N_KIND];
    size_t flagged, rules[N_RULE];
    size_t groups, zero_groups, zero_fail, zero_pass;
    double util_sync, util_partial;
} run_stats;

static void write_group_json(cJSON *arr, const char *run, const char *task, const double *r,
                             const double *adv, size_t n, stats_group g)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "run", run);
    cJSON_AddStringToObject(o, "task", task);
    cJSON_AddItemToObject(o, "rewards", cJSON_CreateDoubleArray(r, (int)n));
    cJSON_AddNumberToObject(o, "mean", g.mean);
    cJSON_AddNumberToObject(o, "std", g.std);
    cJSON_AddItemToObject(o, "advantages", cJSON_CreateDoubleArray(adv, (int)n));
    cJSON_AddBoolToObject(o, "zero_variance", g.zero_variance);
    cJSON_AddItemToArray(arr, o);
}

static int write_svg(const char *dir, const char *name, buf_t *svg, char *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return fs_write_atomic(path, buf_str(svg), svg->len, err);
}

static int plots(const char *dir, const rows *rs, run_stats *st, size_t nruns, const report_opts *o,
                 char *err)
{
    int rc;
    buf_t svg;
    buf_init(&svg, RL_REPORT_SVG_MAX);
    const char **labels = calloc(nruns + 1, sizeof *labels);
    double *v = calloc(nruns + 1, sizeof *v), *lo = calloc(nruns + 1, sizeof *lo),
           *hi = calloc(nruns + 1, sizeof *hi), *dur = calloc(rs->n + 1, sizeof *dur);
    if (!labels || !v || !lo || !hi || !dur) {
        rc = rl_err(err, RL_ENOMEM, "report: out of memory");
        goto out;
    }
    for (size_t i = 0; i < nruns; i++) {
        labels[i] = st[i].name;
        v[i] = st[i].n ? (double)st[i].passed / (double)st[i].n : 0;
        lo[i] = st[i].lo;
        hi[i] = st[i].hi;
    }
    svg_axes ax = {"Pass rate per run (95% Wilson interval)", "run", "pass rate", 0, 1, 0, 0, 0};
    svg_bars(&svg, &ax, labels, v, lo, hi, nruns);
    if ((rc = write_svg(dir, "pass_rate.svg", &svg, err)) < 0)
        goto out;
    for (size_t i = 0; i < rs->n; i++)
        dur[i] = rs->v[i].dur_s;
    buf_clear(&svg);
    svg_axes ax2 = {"Episode durations", "episode wall time (s)", "episodes", 0, 0, 1, 0, 0};
    svg_histogram(&svg, &ax2, dur, rs->n, 20);
    if ((rc = write_svg(dir, "durations.svg", &svg, err)) < 0)
        goto out;
    /* utilization against lambda, over all episodes, one step = every
     * episode of the largest run */
    double lam[10], u[10];
    size_t slots = 0;
    for (size_t i = 0; i < nruns; i++)
        slots = st[i].n > slots ? st[i].n : slots;
    for (int k = 0; k < 10; k++) {
        lam[k] = 0.1 * (k + 1);
        u[k] = stats_utilization(dur, rs->n, slots, lam[k], RL_REPORT_UTIL_STEPS);
    }
    buf_clear(&svg);
    svg_series s = {"utilization", lam, u, 10};
    char title[160];
    snprintf(title, sizeof title, "Generation-slot utilization vs lambda (%zu slots; dashed: lambda %.2f)",
             slots, o->lambda);
    svg_axes ax3 = {title, "lambda: share of a step's episodes finished before training starts",
                    "busy share of slot time", 0, 1, 0, 1, o->lambda};
    svg_lines(&svg, &ax3, &s, 1);
    rc = write_svg(dir, "utilization.svg", &svg, err);
out:
    buf_dispose(&svg);
    free(labels);
    free(v);
    free(lo);
    free(hi);
    free(dur);
    return rc;
}

int report_write(const char *dir, const report_opts *o, char *err)
{
    rows rs = {0};
    size_t bad = 0;
    int rc = load_dir(&rs, dir, 0, &bad, err);
    if (rc < 0) {
        free(rs.v);
        return rc;
    }
    if (rs.n == 0) {
        free(rs.v);
        return rl_err(err, RL_ENOENT, "%s: no trajectory records (*.jsonl) found", dir);
    }
    names runs = {0}, tasks = {0};
    int nrc = 0;
    for (size_t i = 0; i < rs.n && nrc == 0; i++)
        if ((nrc = names_add(&runs, rs.v[i].run)) == 0)
            nrc = names_add(&tasks, rs.v[i].task);
    run_stats *st = calloc(runs.n, sizeof *st);
    double *dur = calloc(rs.n, sizeof *dur), *r = calloc(rs.n, sizeof *r), *adv = calloc(rs.n, sizeof *adv);
    cJSON *root = cJSON_CreateObject(), *jruns = cJSON_AddArrayToObject(root, "runs"),
          *jgroups = cJSON_AddArrayToObject(root, "groups");
    buf_t md, grp;
    buf_init(&md, RL_REPORT_MD_MAX);
    buf_init(&grp, RL_REPORT_MD_MAX);
    if (nrc < 0 || !st || !dur || !r || !adv || !root) {
        rc = rl_err(err, RL_ENOMEM, "report: out of memory");
        goto out;
    }
    for (size_t k = 0; k < runs.n; k++) {
        run_stats *s = &st[k];
        s->name = runs.v[k];
        size_t nd = 0;
        for (size_t i = 0; i < rs.n; i++) {
            const ep_row *e = &rs.v[i];
            if (strcmp(e->run, s->name))
                continue;
            s->n++;
            s->passed += e->reward > 0.5;
            s->turns_total += (size_t)e->turns;
            s->tokens += (double)e->policy_tokens;
            s->calls += (size_t)e->calls;
            s->call_ok += e->calls_ok;
            s->fmt_err += e->format_errors;
            s->wellformed += e->wellformed;
            s->identical += e->identical;
            s->end[e->end]++;
            for (int q = 0; q < N_KIND; q++)
                s->failed[q] += (size_t)e->failed[q];
            s->flagged += e->flagged != 0;
            for (int q = 0; q < N_RULE; q++)
                s->rules[q] += (size_t)e->rules[q];
            dur[nd++] = e->dur_s;
        }
        stats_wilson(&s->lo, &s->hi, s->passed, s->n, 1.96);
        s->util_sync = stats_utilization(dur, nd, nd, 1.0, RL_REPORT_UTIL_STEPS);
        s->util_partial = stats_utilization(dur, nd, nd, o->lambda, RL_REPORT_UTIL_STEPS);
        /* GRPO groups: every task of this run */
        for (size_t t = 0; t < tasks.n; t++) {
            size_t g = 0;
            for (size_t i = 0; i < rs.n; i++)
                if (!strcmp(rs.v[i].run, s->name) && !strcmp(rs.v[i].task, tasks.v[t]))
                    r[g++] = rs.v[i].reward;
            if (!g)
                continue;
            stats_group sg = stats_advantages(adv, r, g, o->std_mode, o->eps, 0);
            s->groups++;
            if (sg.zero_variance) {
                s->zero_groups++;
                if (r[0] > 0.5)
                    s->zero_pass++;
                else
                    s->zero_fail++;
            }
            write_group_json(jgroups, s->name, tasks.v[t], r, adv, g, sg);
            buf_printf(&grp, "| %s | %s | %zu |", s->name, tasks.v[t], g);
            for (size_t i = 0; i < g; i++)
                buf_printf(&grp, "%s%g", i ? ", " : " ", r[i]);
            buf_printf(&grp, " | %.3f | %.3f |", sg.mean, sg.std);
            for (size_t i = 0; i < g; i++)
                buf_printf(&grp, "%s%+.3f", i ? ", " : " ", adv[i]);
            buf_printf(&grp, " | %s |\n",
                       sg.zero_variance ? (r[0] > 0.5 ? "**zero variance: all passed**"
                                                      : "**zero variance: all failed**")
                                        : "");
        }
        cJSON *jr = cJSON_CreateObject();
        cJSON_AddStringToObject(jr, "run", s->name);
        cJSON_AddNumberToObject(jr, "episodes", (double)s->n);
        cJSON_AddNumberToObject(jr, "passed", (double)s->passed);
        cJSON_AddNumberToObject(jr, "pass_rate", s->n ? (double)s->passed / (double)s->n : 0);
        cJSON_AddNumberToObject(jr, "ci95_lo", s->lo);
        cJSON_AddNumberToObject(jr, "ci95_hi", s->hi);
        cJSON_AddNumberToObject(jr, "mean_turns", s->n ? (double)s->turns_total / (double)s->n : 0);
        cJSON_AddNumberToObject(jr, "mean_policy_tokens", s->n ? s->tokens / (double)s->n : 0);
        cJSON_AddNumberToObject(jr, "tool_calls", (double)s->calls);
        cJSON_AddNumberToObject(jr, "tool_success_rate", s->calls ? s->call_ok / (double)s->calls : 0);
        cJSON_AddNumberToObject(jr, "format_error_rate",
                                s->turns_total ? s->fmt_err / (double)s->turns_total : 0);
        cJSON_AddNumberToObject(jr, "wellformed_turn_share",
                                s->turns_total ? s->wellformed / (double)s->turns_total : 0);
        cJSON_AddNumberToObject(jr, "identical_call_share", s->calls ? s->identical / (double)s->calls : 0);
        cJSON *ends = cJSON_AddObjectToObject(jr, "end_reasons");
        for (int e = 0; e < N_END; e++)
            if (s->end[e])
                cJSON_AddNumberToObject(ends, END_REASONS[e], (double)s->end[e]);
        cJSON *fk = cJSON_AddObjectToObject(jr, "failed_calls_by_kind");
        for (int q = 0; q < N_KIND; q++)
            if (s->failed[q])
                cJSON_AddNumberToObject(fk, KINDS[q], (double)s->failed[q]);
        cJSON_AddNumberToObject(jr, "integrity_flagged", (double)s->flagged);
        cJSON_AddNumberToObject(jr, "integrity_flagged_share", s->n ? (double)s->flagged / (double)s->n : 0);
        cJSON *fr = cJSON_AddObjectToObject(jr, "integrity_findings_by_rule");
        for (int q = 0; q < N_RULE; q++)
            if (s->rules[q])
                cJSON_AddNumberToObject(fr, RULES[q], (double)s->rules[q]);
        cJSON_AddNumberToObject(jr, "groups", (double)s->groups);
        cJSON_AddNumberToObject(jr, "zero_variance_groups", (double)s->zero_groups);
        cJSON_AddNumberToObject(jr, "zero_variance_all_failed", (double)s->zero_fail);
        cJSON_AddNumberToObject(jr, "zero_variance_all_passed", (double)s->zero_pass);
        cJSON_AddNumberToObject(jr, "utilization_sync", s->util_sync);
        cJSON_AddNumberToObject(jr, "utilization_partial", s->util_partial);
        cJSON_AddItemToArray(jruns, jr);
    }
    cJSON_AddNumberToObject(root, "episodes", (double)rs.n);
    size_t flagged_all = 0;
    for (size_t k = 0; k < runs.n; k++)
        flagged_all += st[k].flagged;
    cJSON_AddNumberToObject(root, "integrity_flagged", (double)flagged_all);
    cJSON_AddNumberToObject(root, "integrity_flagged_share", (double)flagged_all / (double)rs.n);
    cJSON_AddNumberToObject(root, "unreadable_lines", (double)bad);
    cJSON_AddNumberToObject(root, "lambda", o->lambda);
    cJSON_AddStringToObject(root, "std", o->std_mode == STATS_STD_UNBIASED ? "unbiased" : "population");

    /* summary.md */
    buf_printf(&md, "# Report: %s\n\n%zu episodes in %zu runs", dir, rs.n, runs.n);
    if (bad)
        buf_printf(&md, " (%zu unreadable lines skipped)", bad);
    buf_puts(&md, ".\n\n## Pass rate\n\n![pass rate](pass_rate.svg)\n\n"
                  "| run | episodes | passed | pass rate | 95% interval (Wilson) |\n|---|---|---|---|---|\n");
    for (size_t k = 0; k < runs.n; k++)
        buf_printf(&md, "| %s | %zu | %zu | %.3f | [%.3f, %.3f] |\n", st[k].name, st[k].n, st[k].passed,
                   st[k].n ? (double)st[k].passed / (double)st[k].n : 0, st[k].lo, st[k].hi);
    buf_printf(&md, "\n## Integrity\n\nEpisodes whose scored diff the integrity check flagged (a change "
                    "that acts on the test process instead of fixing code: harness/integrity.h). Enforced, a "
                    "flagged episode scores 0; in flag mode its test reward stands. All runs: %zu of %zu "
                    "(%.1f%%).\n\n| run | episodes | flagged | flagged share | findings by rule |\n|---|---|---|---|---|\n",
               flagged_all, rs.n, 100.0 * (double)flagged_all / (double)rs.n);
    for (size_t k = 0; k < runs.n; k++) {
        buf_printf(&md, "| %s | %zu | %zu | %.1f%% | ", st[k].name, st[k].n, st[k].flagged,
                   st[k].n ? 100.0 * (double)st[k].flagged / (double)st[k].n : 0);
        for (int q = 0; q < N_RULE; q++)
            if (st[k].rules[q])
                buf_printf(&md, "%s %zu; ", RULES[q], st[k].rules[q]);
        buf_puts(&md, "|\n");
    }
    buf_printf(&md, "\n## GRPO groups\n\nEach (run, task) is a group; advantage = (r - mean) / (std + %g), "
                    "%s std. A zero-variance group (all failed or all passed) gives no gradient: "
                    "its rollouts were spent for nothing.\n\n",
               o->eps, o->std_mode == STATS_STD_UNBIASED ? "unbiased" : "population");
    buf_puts(&md, "| run | groups | zero-variance | all failed | all passed |\n|---|---|---|---|---|\n");
    for (size_t k = 0; k < runs.n; k++)
        buf_printf(&md, "| %s | %zu | %zu | %zu | %zu |\n", st[k].name, st[k].groups, st[k].zero_groups,
                   st[k].zero_fail, st[k].zero_pass);
    buf_puts(&md, "\n| run | task | n | rewards | mean | std | advantages | |\n|---|---|---|---|---|---|---|---|\n");
    buf_puts(&md, buf_str(&grp));
    buf_puts(&md, "\n## Behaviour\n\n| run | mean turns | policy tokens / episode | tool calls | "
                  "well-formed call / turn | tool success | format errors / turn | identical to previous call | "
                  "end reasons | failed calls by kind |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t k = 0; k < runs.n; k++) {
        run_stats *s = &st[k];
        double ident = s->calls ? s->identical / (double)s->calls : 0;
        buf_printf(&md, "| %s | %.1f | %.0f | %zu | %.3f | %.3f | %.3f | %.3f%s | ", s->name,
                   s->n ? (double)s->turns_total / (double)s->n : 0, s->n ? s->tokens / (double)s->n : 0,
                   s->calls, s->turns_total ? s->wellformed / (double)s->turns_total : 0, s->calls ? s->call_ok / (double)s->calls : 0,
                   s->turns_total ? s->fmt_err / (double)s->turns_total : 0, ident,
                   ident > o->identical_flag ? " **flag: repeated calls**" : "");
        for (int e = 0; e < N_END; e++)
            if (s->end[e])
                buf_printf(&md, "%s %zu; ", END_REASONS[e], s->end[e]);
        buf_puts(&md, "| ");
        for (int q = 0; q < N_KIND; q++)
            if (s->failed[q])
                buf_printf(&md, "%s %zu; ", KINDS[q], s->failed[q]);
        buf_puts(&md, "|\n");
    }
    buf_printf(&md, "\n## Rollout utilization\n\nFrom the recorded episode durations: the share of "
                    "generation-slot time kept busy when a training step starts only after every "
                    "episode finished (synchronous), and when it starts once a fraction lambda = %.2f "
                    "finished and the rest carry over to the next step (partial rollouts).\n\n"
                    "![durations](durations.svg)\n\n![utilization](utilization.svg)\n\n"
                    "| run | episodes | synchronous | partial (lambda %.2f) |\n|---|---|---|---|\n",
               o->lambda, o->lambda);
    for (size_t k = 0; k < runs.n; k++)
        buf_printf(&md, "| %s | %zu | %.1f%% | %.1f%% |\n", st[k].name, st[k].n, 100 * st[k].util_sync,
                   100 * st[k].util_partial);
    {
        for (size_t i = 0; i < rs.n; i++)
            dur[i] = rs.v[i].dur_s;
        double us = stats_utilization(dur, rs.n, rs.n, 1.0, RL_REPORT_UTIL_STEPS);
        double up = stats_utilization(dur, rs.n, rs.n, o->lambda, RL_REPORT_UTIL_STEPS);
        buf_printf(&md, "| all | %zu | %.1f%% | %.1f%% |\n", rs.n, 100 * us, 100 * up);
        cJSON *ju = cJSON_AddObjectToObject(root, "utilization");
        cJSON_AddNumberToObject(ju, "sync", us);
        cJSON_AddNumberToObject(ju, "partial", up);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/summary.md", dir);
    if ((rc = fs_write_atomic(path, buf_str(&md), md.len, err)) < 0)
        goto out;
    char *js = cJSON_Print(root);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    rc = js ? fs_write_atomic(path, js, strlen(js), err) : rl_err(err, RL_ENOMEM, "report: out of memory");
    free(js);
    if (rc < 0)
        goto out;
    if ((rc = plots(dir, &rs, st, runs.n, o, err)) < 0)
        goto out;
    rl_logf(o->log, o->log_ctx, RL_LOG_INFO, "report: %zu episodes, %zu runs -> %s/summary.md", rs.n, runs.n, dir);
    for (size_t k = 0; k < runs.n; k++)
        rl_logf(o->log, o->log_ctx, RL_LOG_INFO,
                "  %-28s %3zu/%-3zu passed  %.2f [%.2f, %.2f]  zero-variance groups %zu/%zu  flagged %zu", st[k].name,
                st[k].passed, st[k].n, st[k].n ? (double)st[k].passed / (double)st[k].n : 0, st[k].lo, st[k].hi,
                st[k].zero_groups, st[k].groups, st[k].flagged);
out:
    buf_dispose(&md);
    buf_dispose(&grp);
    cJSON_Delete(root);
    free(st);
    free(dur);
    free(r);
    free(adv);
    free(runs.v);
    free(tasks.v);
    free(rs.v);
    return rc;
}
