/* grpo_report.c - the experiment's report: SFT vs RL on held-out sets,
 * with Wilson intervals, and the training curves.
 *
 * The starting weights of a run (ckpt/step-00000000, never pruned) are the
 * SFT policy; the trainer's current weights are the RL policy. Each final
 * set is evaluated with both on the same tasks and seeds (at least
 * `episodes` episodes: tasks x ceil(episodes / tasks) seeds), the records
 * kept next to the report. Outputs in <results>/:
 *   <name>.json        {"sets": [{"name", "n", "sft", "rl", intervals...}], ...}
 *   <name>.md          a table and the figures
 *   <name>-sets.svg    pass rate per set, SFT vs RL, 95% intervals
 *   <name>-curves.svg  reward, train pass rate and held-out pass rate by step
 *   <name>-dynamics.svg KL, clip fraction and entropy by step
 */
#include "grpo/grpo_int.h"

#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "common/svg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- curves from metrics.jsonl ------------------------------------------------------- */

typedef struct curves {
    double *step, *reward, *pass, *tool, *fmt, *kl, *clip, *ent, *step_s, *tps;
    double *groups, *zero_var, *updated, *episodes, *passed;
    size_t n;
    double *estep, *epass;
    size_t ne;
    int has_cmp;           /* a "compare" event: sync vs async figures */
    double cmp[2][3];      /* [sync, async] x [step_s, util, episodes_per_s] */
    double lambda;
} curves;

/* The per-step arrays of c, for allocating and freeing them all. */
#define CURVES_ARRAYS 17
static void curves_arrays(curves *c, double **v[CURVES_ARRAYS])
{
    double **a[CURVES_ARRAYS] = {&c->step,    &c->reward,   &c->pass,   &c->tool,  &c->fmt,   &c->kl,
                                 &c->clip,    &c->ent,      &c->step_s, &c->tps,   &c->groups, &c->zero_var,
                                 &c->updated, &c->episodes, &c->passed, &c->estep, &c->epass};
    memcpy(v, a, sizeof a);
}

static void curves_free(curves *c)
{
    double **v[CURVES_ARRAYS];
    curves_arrays(c, v);
    for (size_t i = 0; i < CURVES_ARRAYS; i++)
        free(*v[i]);
    memset(c, 0, sizeof *c);
}

static double jnum_(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* A curve value that is drawn: missing or not finite is 0. */
static double jnum0_(const cJSON *o, const char *k)
{
    double x = jnum_(o, k);
    return isfinite(x) ? x : 0;
}

/* Reads the step lines (the last line of a step wins: a resumed run may
 * have redone steps after its checkpoint) and the evaluations. */
static int curves_read(curves *c, const char *run_dir, char *err)
{
    memset(c, 0, sizeof *c);
    char path[GRPO_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/metrics.jsonl", run_dir);
    char *text;
    size_t len;
    int rc = fs_read_file(&text, &len, path, RL_REPORT_FILE_MAX, err);
    if (rc < 0)
        return rc;
    size_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    double **v[CURVES_ARRAYS];
    curves_arrays(c, v);
    for (size_t i = 0; i < CURVES_ARRAYS; i++)
        if (!(*v[i] = calloc(lines, sizeof(double)))) {
            free(text);
            curves_free(c);
            return rl_err(err, RL_ENOMEM, "report: out of memory");
        }
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        cJSON *o = cJSON_Parse(line);
        if (!o)
            continue;
        const cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "event");
        double step = jnum_(o, "step");
        if (cJSON_IsString(ev) && !strcmp(ev->valuestring, "compare")) {
            const char *mode[2] = {"sync", "async"}, *key[3] = {"step_s", "util", "episodes_per_s"};
            for (int m = 0; m < 2; m++)
                for (int k = 0; k < 3; k++)
                    c->cmp[m][k] = jnum_(cJSON_GetObjectItemCaseSensitive(o, mode[m]), key[k]);
            c->lambda = jnum_(o, "lambda");
            c->has_cmp = 1;
        } else if (cJSON_IsString(ev) && !strcmp(ev->valuestring, "eval") && isfinite(step)) {
            size_t k = 0;
            while (k < c->ne && c->estep[k] != step)
                k++;
            c->estep[k] = step;
            c->epass[k] = jnum_(o, "pass_rate");
            c->ne += k == c->ne;
        } else if (!ev && isfinite(step)) {
            size_t k = 0;
            while (k < c->n && c->step[k] != step)
                k++;
            if (k < c->n) { /* redone: keep the newer, drop what followed it */
                c->n = k;
            }
            c->step[k] = step;
            c->reward[k] = jnum_(o, "reward_mean");
            c->pass[k] = jnum_(o, "pass_rate");
            c->tool[k] = jnum0_(o, "tool_success");
            c->fmt[k] = jnum0_(o, "format_error_rate");
            c->kl[k] = jnum0_(o, "kl");
            c->clip[k] = jnum_(o, "clip_frac");
            c->ent[k] = jnum_(o, "entropy");
            c->step_s[k] = jnum_(o, "step_s");
            c->groups[k] = jnum_(o, "groups");
            c->zero_var[k] = jnum_(o, "zero_var_groups");
            c->updated[k] = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "updated"));
            c->episodes[k] = jnum_(o, "episodes");
            c->passed[k] = jnum_(o, "pass_rate") * c->episodes[k];
            c->tps[k] = jnum_(o, "train_tokens_per_s");
            c->n = k + 1;
        }
        cJSON_Delete(o);
    }
    free(text);
    return 0;
}

static int write_svg(const char *path, buf_t *b, int rc, char *err)
{
    if (rc < 0) {
        buf_dispose(b);
        return rl_err(err, rc, "%s: could not draw the chart", path);
    }
    rc = fs_write_atomic(path, buf_str(b), b->len, err);
    buf_dispose(b);
    return rc;
}

int grpo_write_curves(const char *run_dir, const char *svg_path, char *err)
{
    curves c;
    int rc = curves_read(&c, run_dir, err);
    if (rc < 0)
        return rc;
    /* tool success and malformed replies with the reward: the reward does
     * not see the format, so a policy can pass more while writing worse calls */
    svg_series s[5] = {{"reward (train)", c.step, c.reward, c.n},
                       {"pass rate (train)", c.step, c.pass, c.n},
                       {"tool-call success (train)", c.step, c.tool, c.n},
                       {"malformed replies (train)", c.step, c.fmt, c.n},
                       {"pass rate (held-out eval)", c.estep, c.epass, c.ne}};
    svg_axes ax = {"GRPO training: reward, pass rate and tool calls by step", "optimizer step", "rate", 0, 1, 0, 0, 0};
    buf_t b;
    buf_init(&b, RL_REPORT_SVG_MAX);
    size_t ns = sizeof s / sizeof s[0] - (c.ne == 0); /* the eval series is last */
    rc = write_svg(svg_path, &b, c.n ? svg_lines(&b, &ax, s, ns) : 0, err);
    if (rc == 0) {
        char dyn[GRPO_PATH_MAX + 64];
        snprintf(dyn, sizeof dyn, "%.*s-dynamics.svg",
                 (int)(strlen(svg_path) > 11 && !strcmp(svg_path + strlen(svg_path) - 11, "-curves.svg")
                           ? strlen(svg_path) - 11
                           : strlen(svg_path) - 4),
                 svg_path);
        svg_series d[3] = {{"KL to reference (k3)", c.step, c.kl, c.n},
                           {"clip fraction", c.step, c.clip, c.n},
                           {"entropy (nats/token)", c.step, c.ent, c.n}};
        svg_axes ad = {"GRPO training: KL, clipping and entropy by step", "optimizer step", "value", 0, 0, 0, 0, 0};
        buf_init(&b, RL_REPORT_SVG_MAX);
        rc = write_svg(dyn, &b, c.n ? svg_lines(&b, &ad, d, 3) : 0, err);
    }
    curves_free(&c);
    return rc;
}

/* ---- final evaluation ---------------------------------------------------------------------- */


/* Resamples of the paired tests: the bootstrap's 2.5% tail then rests on
 * 250 draws, and a permutation p down to 1e-5 can be told from 0. Fixed
 * seeds: a report gives the same numbers on every run. */
enum { REPORT_BOOT_ITERS = 10000, REPORT_PERM_ITERS = 100000 };
#define REPORT_BOOT_SEED 0x626f6f74ull /* "boot" */
#define REPORT_PERM_SEED 0x7065726dull /* "perm" */

int grpo_compare_by_task(grpo_task_compare *r, const task_set *sel, const size_t *sft, const size_t *rl, int seeds)
{
    memset(r, 0, sizeof *r);
    r->perm_p = 1;
    if (sel->n && seeds > 0) {
        double *d = malloc(sel->n * sizeof *d), sum = 0;
        if (!d)
            return RL_ENOMEM;
        for (size_t i = 0; i < sel->n; i++)
            sum += d[i] = (double)rl[i] - (double)sft[i];
        r->diff = sum / ((double)sel->n * seeds);
        int rc = stats_paired_boot_ci(&r->diff_lo, &r->diff_hi, d, sel->n, 1.0 / seeds, REPORT_BOOT_ITERS,
                                      REPORT_BOOT_SEED);
        r->perm_p = stats_paired_perm_p(d, sel->n, REPORT_PERM_ITERS, REPORT_PERM_SEED);
        free(d);
        if (rc < 0)
            return rc;
    }
    for (size_t i = 0; i < sel->n; i++) {
        r->up += rl[i] > sft[i];
        r->down += rl[i] < sft[i];
        const char *name = sel->v[i]->gen_mutation;
        if (!name || !name[0])
            continue;
        size_t k = 0;
        while (k < r->n_kinds && strcmp(r->kind[k].name, name))
            k++;
        if (k == r->n_kinds) {
            if (k == RL_GRPO_REPORT_KINDS_MAX)
                continue;
            r->kind[r->n_kinds++].name = name;
        }
        r->kind[k].tasks++;
        r->kind[k].sft += sft[i];
        r->kind[k].rl += rl[i];
    }
    return 0;
}

int grpo_report_select(task_set *out, const task_set *all, const grpo_final_set *fs, char *err)
{
    task_set sel;
    int rc = task_select(&sel, all, fs->tasks, err);
    if (rc < 0)
        return rc;
    int split = fs->split[0] ? task_split_from_name(fs->split) : -1;
    size_t k = 0;
    for (size_t i = 0; i < sel.n; i++)
        if (split < 0 || (int)sel.v[i]->split == split)
            sel.v[k++] = sel.v[i];
    sel.n = k;
    if (k == 0) {
        task_select_dispose(&sel);
        return rl_err(err, RL_EINVAL, "final set %s: \"%s\"%s%s selects no task", fs->name, fs->tasks,
                      fs->split[0] ? " in split " : "", fs->split);
    }
    *out = sel;
    return 0;
}

static cJSON *interval(size_t k, size_t n)
{
    double lo, hi;
    stats_wilson(&lo, &hi, k, n, 1.96);
    cJSON *a = cJSON_CreateArray();
    cJSON_AddItemToArray(a, cJSON_CreateNumber(lo));
    cJSON_AddItemToArray(a, cJSON_CreateNumber(hi));
    return a;
}

/* Failed edit calls that were neither of the three kinds counted apart. */
static size_t edits_failed_other(const grpo_eval_result *r)
{
    size_t failed = r->edits - r->edits_ok, named = r->edit_no_match + r->edit_not_unique + r->edit_no_change;
    return failed > named ? failed - named : 0;
}

int grpo_report_write(const grpo_config *c, const char *run_dir, long step, const grpo_set_result *sr, int ns,
                      char *err)
{
    char base[GRPO_PATH_MAX + 160], path[GRPO_PATH_MAX + 200];
    snprintf(base, sizeof base, "%s/%s", c->results, c->results_name);
    curves cv;
    int have_curves = curves_read(&cv, run_dir, NULL) == 0;
    double step_s = 0, tps = 0, cmp[2][3] = {{0}}, lambda = 0;
    size_t nstep = 0;
    int has_cmp = have_curves && cv.has_cmp;
    if (has_cmp) {
        memcpy(cmp, cv.cmp, sizeof cmp);
        lambda = cv.lambda;
    }
    /* the training signal: groups with a gradient, steps that moved the weights */
    double groups = 0, zero_var = 0, episodes = 0, passed = 0, updated = 0;
    for (size_t i = 0; have_curves && i < cv.n; i++) {
        groups += isfinite(cv.groups[i]) ? cv.groups[i] : 0;
        zero_var += isfinite(cv.zero_var[i]) ? cv.zero_var[i] : 0;
        episodes += isfinite(cv.episodes[i]) ? cv.episodes[i] : 0;
        passed += isfinite(cv.passed[i]) ? cv.passed[i] : 0;
        updated += cv.updated[i];
    }
    for (size_t i = 0; have_curves && i < cv.n; i++)
        if (isfinite(cv.step_s[i]) && isfinite(cv.tps[i])) {
            step_s += cv.step_s[i];
            tps += cv.tps[i];
            nstep++;
        }
    /* JSON */
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "experiment", c->results_name);
    cJSON_AddStringToObject(o, "run", run_dir);
    cJSON_AddStringToObject(o, "sft_checkpoint", c->init[0] ? c->init : "(random init)");
    cJSON_AddNumberToObject(o, "steps", (double)step);
    cJSON_AddNumberToObject(o, "group_size", c->group_size);
    cJSON_AddNumberToObject(o, "tasks_per_step", c->tasks_per_step);
    cJSON_AddNumberToObject(o, "eval_temperature", c->eval_temperature);
    cJSON *sets = cJSON_AddArrayToObject(o, "sets");
    for (int i = 0; i < ns; i++) {
        cJSON *s = cJSON_CreateObject();
        cJSON_AddStringToObject(s, "name", sr[i].set->name);
        cJSON_AddStringToObject(s, "tasks", sr[i].set->tasks);
        cJSON_AddNumberToObject(s, "task_count", (double)sr[i].tasks);
        cJSON_AddNumberToObject(s, "n", (double)sr[i].n);
        cJSON_AddNumberToObject(s, "first_seed", c->final_seed);
        cJSON_AddNumberToObject(s, "seeds", sr[i].seeds);
        cJSON_AddNumberToObject(s, "sft", sr[i].sft.pass_rate);
        cJSON_AddNumberToObject(s, "rl", sr[i].rl.pass_rate);
        cJSON_AddNumberToObject(s, "sft_passed", (double)sr[i].sft.passed);
        cJSON_AddNumberToObject(s, "rl_passed", (double)sr[i].rl.passed);
        cJSON_AddItemToObject(s, "sft_ci95", interval(sr[i].sft.passed, sr[i].sft.episodes));
        cJSON_AddItemToObject(s, "rl_ci95", interval(sr[i].rl.passed, sr[i].rl.episodes));
        cJSON_AddNumberToObject(s, "sft_tool_success", sr[i].sft.tool_success);
        cJSON_AddNumberToObject(s, "rl_tool_success", sr[i].rl.tool_success);
        cJSON_AddNumberToObject(s, "sft_mean_turns", sr[i].sft.mean_turns);
        cJSON_AddNumberToObject(s, "rl_mean_turns", sr[i].rl.mean_turns);
        cJSON_AddNumberToObject(s, "z", stats_two_prop_z(sr[i].sft.passed, sr[i].sft.episodes, sr[i].rl.passed,
                                                         sr[i].rl.episodes));
        cJSON_AddNumberToObject(s, "tasks_up", (double)sr[i].cmp.up);
        cJSON_AddNumberToObject(s, "tasks_down", (double)sr[i].cmp.down);
        cJSON_AddNumberToObject(s, "sign_test_p", stats_sign_test(sr[i].cmp.up, sr[i].cmp.down));
        cJSON_AddNumberToObject(s, "diff", sr[i].cmp.diff);
        cJSON *dci = cJSON_AddArrayToObject(s, "diff_ci95");
        cJSON_AddItemToArray(dci, cJSON_CreateNumber(sr[i].cmp.diff_lo));
        cJSON_AddItemToArray(dci, cJSON_CreateNumber(sr[i].cmp.diff_hi));
        cJSON_AddNumberToObject(s, "perm_p", sr[i].cmp.perm_p);
        for (int k = 0; k < 2; k++) {
            const grpo_eval_result *r = k ? &sr[i].rl : &sr[i].sft;
            cJSON *e = cJSON_AddObjectToObject(s, k ? "rl_edits" : "sft_edits");
            cJSON_AddNumberToObject(e, "calls", (double)r->edits);
            cJSON_AddNumberToObject(e, "applied", (double)r->edits_ok);
            cJSON_AddNumberToObject(e, "episodes_with_applied", (double)r->edited);
            cJSON_AddNumberToObject(e, "passed_with_applied", (double)r->edited_passed);
            cJSON_AddNumberToObject(e, "failed_no_match", (double)r->edit_no_match);
            cJSON_AddNumberToObject(e, "failed_not_unique", (double)r->edit_not_unique);
            cJSON_AddNumberToObject(e, "failed_no_change", (double)r->edit_no_change);
            cJSON_AddNumberToObject(e, "failed_other", (double)edits_failed_other(r));
            cJSON_AddNumberToObject(e, "failed_then_applied", (double)r->edit_repaired);
            cJSON_AddNumberToObject(e, "episodes_with_fix", (double)r->fix_episodes);
            cJSON_AddNumberToObject(e, "distinct_fixes", (double)r->fixes_distinct);
            cJSON_AddStringToObject(e, "top_fix", r->top_fix);
            cJSON_AddNumberToObject(e, "top_fix_episodes", (double)r->top_fix_episodes);
            cJSON_AddNumberToObject(e, "top_fix_passed", (double)r->top_fix_passed);
        }
        if (sr[i].cmp.n_kinds) {
            cJSON *ka = cJSON_AddArrayToObject(s, "by_mutation");
            for (size_t k = 0; k < sr[i].cmp.n_kinds; k++) {
                const grpo_kind_result *kr = &sr[i].cmp.kind[k];
                cJSON *x = cJSON_CreateObject();
                cJSON_AddStringToObject(x, "mutation", kr->name);
                cJSON_AddNumberToObject(x, "tasks", (double)kr->tasks);
                cJSON_AddNumberToObject(x, "n", (double)(kr->tasks * (size_t)sr[i].seeds));
                cJSON_AddNumberToObject(x, "sft_passed", (double)kr->sft);
                cJSON_AddNumberToObject(x, "rl_passed", (double)kr->rl);
                cJSON_AddItemToArray(ka, x);
            }
        }
        cJSON_AddItemToArray(sets, s);
    }
    cJSON *tr = cJSON_AddObjectToObject(o, "training");
    cJSON_AddNumberToObject(tr, "episodes", episodes);
    cJSON_AddNumberToObject(tr, "episodes_passed", round(passed));
    cJSON_AddNumberToObject(tr, "groups", groups);
    cJSON_AddNumberToObject(tr, "zero_variance_groups", zero_var);
    cJSON_AddNumberToObject(tr, "steps_that_updated", updated);
    cJSON_AddNumberToObject(tr, "mean_step_s", nstep ? step_s / (double)nstep : 0);
    cJSON_AddNumberToObject(tr, "steps_per_s", step_s > 0 ? (double)nstep / step_s : 0);
    cJSON_AddNumberToObject(tr, "train_tokens_per_s", nstep ? tps / (double)nstep : 0);
    if (has_cmp) {
        cJSON *r = cJSON_AddObjectToObject(o, "rollout_modes");
        cJSON_AddNumberToObject(r, "lambda", lambda);
        const char *mode[2] = {"sync", "async"};
        for (int m = 0; m < 2; m++) {
            cJSON *x = cJSON_AddObjectToObject(r, mode[m]);
            cJSON_AddNumberToObject(x, "step_s", cmp[m][0]);
            cJSON_AddNumberToObject(x, "slot_utilization", cmp[m][1]);
            cJSON_AddNumberToObject(x, "episodes_per_s", cmp[m][2]);
        }
    }
    if (have_curves)
        curves_free(&cv);
    char *js = cJSON_Print(o);
    cJSON_Delete(o);
    int rc;
    snprintf(path, sizeof path, "%s.json", base);
    rc = js ? fs_write_atomic(path, js, strlen(js), err) : rl_err(err, RL_ENOMEM, "report: out of memory");
    free(js);
    if (rc < 0)
        return rc;
    /* SVG: SFT vs RL per set */
    const char *labels[2 * GRPO_FINAL_SETS_MAX];
    char names[2 * GRPO_FINAL_SETS_MAX][96];
    double v[2 * GRPO_FINAL_SETS_MAX], lo[2 * GRPO_FINAL_SETS_MAX], hi[2 * GRPO_FINAL_SETS_MAX];
    for (int i = 0; i < ns; i++)
        for (int k = 0; k < 2; k++) {
            const grpo_eval_result *r = k ? &sr[i].rl : &sr[i].sft;
            int j = 2 * i + k;
            snprintf(names[j], sizeof names[j], "%s %s", sr[i].set->name, k ? "RL" : "SFT");
            labels[j] = names[j];
            v[j] = r->pass_rate;
            stats_wilson(&lo[j], &hi[j], r->passed, r->episodes, 1.96);
        }
    buf_t b;
    buf_init(&b, RL_REPORT_SVG_MAX);
    svg_axes ax = {"Held-out pass rate: SFT vs GRPO (95% Wilson intervals)", "set and policy", "pass rate", 0, 1, 0, 0, 0};
    snprintf(path, sizeof path, "%s-sets.svg", base);
    if ((rc = write_svg(path, &b, svg_bars(&b, &ax, labels, v, lo, hi, (size_t)(2 * ns)), err)) < 0)
        return rc;
    snprintf(path, sizeof path, "%s-curves.svg", base);
    if ((rc = grpo_write_curves(run_dir, path, err)) < 0)
        return rc;
    /* markdown */
    buf_t md;
    buf_init(&md, RL_REPORT_MD_MAX);
    buf_printf(&md, "# %s\n\nRun `%s`, %ld GRPO steps (G %d, %d tasks per step) from `%s`.\n\n", c->results_name,
               run_dir, step, c->group_size, c->tasks_per_step, c->init[0] ? c->init : "(random init)");
    buf_printf(&md, "| set | tasks | episodes | SFT pass rate (95%% CI) | RL pass rate (95%% CI) |\n|---|---|---|---|---|\n");
    for (int i = 0; i < ns; i++) {
        double l0, h0, l1, h1;
        stats_wilson(&l0, &h0, sr[i].sft.passed, sr[i].sft.episodes, 1.96);
        stats_wilson(&l1, &h1, sr[i].rl.passed, sr[i].rl.episodes, 1.96);
        buf_printf(&md, "| %s | %zu | %zu | %.3f (%.3f-%.3f) | %.3f (%.3f-%.3f) |\n", sr[i].set->name, sr[i].tasks,
                   sr[i].n, sr[i].sft.pass_rate, l0, h0, sr[i].rl.pass_rate, l1, h1);
    }
    buf_printf(&md, "\nSets (task selector, split): ");
    for (int i = 0; i < ns; i++)
        buf_printf(&md, "%s`%s` = `%s`%s%s", i ? "; " : "", sr[i].set->name, sr[i].set->tasks,
                   sr[i].set->split[0] ? ", split " : "", sr[i].set->split);
    buf_printf(&md, ". Each set is run with both policies on the same tasks and seeds (seeds from %d), at "
                    "temperature %.2f.\n",
               c->final_seed, c->eval_temperature);
    buf_printf(&md, "\nIs the change real? The seeds of a task are not independent, so the change (RL - SFT pass "
                    "rate) gets a 95%% interval from resampling tasks (bootstrap), and a two-sided paired "
                    "permutation test over tasks (signs of the per-task changes flipped); the tasks RL passes more "
                    "or less often than SFT, with a sign test. The per-episode z treats episodes as independent "
                    "and overstates the evidence.\n\n"
                    "| set | change (95%% CI over tasks) | permutation p | tasks up | tasks down | sign test p | z "
                    "per episode |\n|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < ns; i++)
        buf_printf(&md, "| %s | %+.3f (%+.3f to %+.3f) | %.3g | %zu | %zu | %.3g | %.2f |\n", sr[i].set->name,
                   sr[i].cmp.diff, sr[i].cmp.diff_lo, sr[i].cmp.diff_hi, sr[i].cmp.perm_p, sr[i].cmp.up,
                   sr[i].cmp.down, stats_sign_test(sr[i].cmp.up, sr[i].cmp.down),
                   stats_two_prop_z(sr[i].sft.passed, sr[i].sft.episodes, sr[i].rl.passed, sr[i].rl.episodes));
    buf_printf(&md, "\nCode edits (edit_file and write_file calls): how many applied, and whether the episodes "
                    "that changed the code passed. A pass with no applied edit is a task whose tests pass "
                    "without a fix.\n\n| set | policy | edit calls | applied | episodes with an applied edit | "
                    "of those passed | passed without one |\n|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < ns; i++)
        for (int k = 0; k < 2; k++) {
            const grpo_eval_result *r = k ? &sr[i].rl : &sr[i].sft;
            buf_printf(&md, "| %s | %s | %zu | %zu (%.1f%%) | %zu | %zu | %zu |\n", sr[i].set->name, k ? "RL" : "SFT",
                       r->edits, r->edits_ok, r->edits ? 100.0 * (double)r->edits_ok / (double)r->edits : 0.0,
                       r->edited, r->edited_passed, r->passed - r->edited_passed);
        }
    buf_printf(&md, "\nWhy edit calls failed: old_string not in the file (not an exact copy), in it more than "
                    "once, equal to new_string, or another error (a bad path, a protected file); and how many of them a later "
                    "applied edit of the same episode followed (a retry that worked).\n\n"
                    "| set | policy | failed | no match | not unique | no change | other | then applied |\n"
                    "|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < ns; i++)
        for (int k = 0; k < 2; k++) {
            const grpo_eval_result *r = k ? &sr[i].rl : &sr[i].sft;
            buf_printf(&md, "| %s | %s | %zu | %zu | %zu | %zu | %zu | %zu |\n", sr[i].set->name, k ? "RL" : "SFT",
                       r->edits - r->edits_ok, r->edit_no_match, r->edit_not_unique, r->edit_no_change,
                       edits_failed_other(r), r->edit_repaired);
        }
    buf_printf(&md, "\nFixes: an episode's fix is its last applied edit_file call (old -> new, blanks "
                    "collapsed). A policy that applies one string edit to every bug has one fix holding most "
                    "episodes.\n\n| set | policy | episodes with a fix | distinct fixes | most frequent fix | "
                    "its episodes | its passes |\n|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < ns; i++)
        for (int k = 0; k < 2; k++) {
            const grpo_eval_result *r = k ? &sr[i].rl : &sr[i].sft;
            buf_printf(&md, "| %s | %s | %zu | %zu | `", sr[i].set->name, k ? "RL" : "SFT", r->fix_episodes,
                       r->fixes_distinct);
            for (const char *s = r->top_fix; *s; s++) { /* a table cell in code quotes */
                if (*s == '|')
                    buf_puts(&md, "\\|");
                else
                    buf_putc(&md, *s == '`' ? '\'' : *s);
            }
            buf_printf(&md, "` | %zu | %zu |\n", r->top_fix_episodes, r->top_fix_passed);
        }
    int any_kind = 0;
    for (int i = 0; i < ns; i++)
        any_kind |= sr[i].cmp.n_kinds > 0;
    if (any_kind) {
        buf_printf(&md, "\nBy bug kind (generator.mutation), passed episodes:\n\n"
                        "| set | kind | tasks | episodes | SFT | RL |\n|---|---|---|---|---|---|\n");
        for (int i = 0; i < ns; i++)
            for (size_t k = 0; k < sr[i].cmp.n_kinds; k++) {
                const grpo_kind_result *kr = &sr[i].cmp.kind[k];
                buf_printf(&md, "| %s | %s | %zu | %zu | %zu | %zu |\n", sr[i].set->name, kr->name, kr->tasks,
                           kr->tasks * (size_t)sr[i].seeds, kr->sft, kr->rl);
            }
    }
    if (nstep)
        buf_printf(&md, "\nTraining: %.1f s per step (%.4f steps/s), %.0f tokens/s through forward + backward.\n",
                   step_s / (double)nstep, (double)nstep / step_s, tps / (double)nstep);
    if (have_curves && cv.n) {
        buf_printf(&md,
                   "\nTraining signal: %.0f of %.0f training episodes passed; %.0f of %.0f groups had zero "
                   "variance (no gradient); %.0f of %zu steps changed the weights.\n",
                   round(passed), episodes, zero_var, groups, updated, cv.n);
        if (groups > 0 && zero_var == groups)
            buf_printf(&md, "Every group had zero variance: GRPO had nothing to learn from, and the RL "
                            "policy is the SFT policy.\n");
    }
    if (has_cmp)
        buf_printf(&md,
                   "\nRollout modes, measured in the same run: synchronous %.1f s per step, generation-slot "
                   "utilization %.2f, %.3f episodes/s; asynchronous (lambda %.2f) %.1f s per step, utilization %.2f, "
                   "%.3f episodes/s.\n",
                   cmp[0][0], cmp[0][1], cmp[0][2], lambda, cmp[1][0], cmp[1][1], cmp[1][2]);
    buf_printf(&md, "\n![SFT vs RL](%s-sets.svg)\n\n![training curves](%s-curves.svg)\n\n"
                    "![KL, clipping, entropy](%s-dynamics.svg)\n",
               c->results_name, c->results_name, c->results_name);
    snprintf(path, sizeof path, "%s.md", base);
    rc = fs_write_atomic(path, buf_str(&md), md.len, err);
    buf_dispose(&md);
    return rc;
}

