#include "common/err.h"
#include "common/fsutil.h"
#include "harness/report.h"

#include <cJSON.h>
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void add_rec(const char *path, const char *run, const char *task, int seed, int reward,
                    double ms, int identical)
{
    char line[1024], err[RL_ERR_MAX];
    /* the failed call's kind: known, unknown (counted as other), absent (an older record) */
    const char *kind = seed == 1 ? ",\"error_kind\":\"no_match\"" : seed == 2 ? ",\"error_kind\":\"weird\"" : "";
    snprintf(line, sizeof line,
             "{\"schema\":1,\"task\":\"%s\",\"config\":{\"run\":\"%s\",\"policy\":\"search\",\"seed\":%d},"
             "\"turns\":[{\"tool_calls\":[{\"name\":\"run_tests\",\"ok\":true,\"identical_to_previous\":false}]},"
             "{\"format_error\":\"bad\",\"tool_calls\":[{\"name\":\"run_tests\",\"ok\":false%s,"
             "\"identical_to_previous\":%s}]},{\"generated\":\"no call\"}],"
             "\"tokens\":{\"policy\":10},\"reward\":%d,\"end_reason\":\"submit\",\"timings\":{\"total_ms\":%g}}",
             task, run, seed, kind, identical ? "true" : "false", reward, ms);
    ck_assert_int_eq(fs_append_record(path, line, strlen(line), err), 0);
}

static const cJSON *find_run(const cJSON *root, const char *name)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(root, "runs")) if (!strcmp(
        cJSON_GetObjectItem(r, "run")->valuestring, name)) return r;
    return NULL;
}

/* A log callback that keeps every message, one per line. */
static void collect(void *ctx, int level, const char *msg)
{
    char *buf = ctx;
    size_t l = strlen(buf);
    ck_assert_int_eq(level, RL_LOG_INFO);
    snprintf(buf + l, 4096 - l, "%s\n", msg);
}

START_TEST(test_report_reference_groups)
{
    char dir[] = "/tmp/rl-report-XXXXXX", path[256], err[RL_ERR_MAX];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/trajectories.jsonl", dir);
    /* pd-v1: 0/3, pd-v2: 2/3 (the reference), plus a torn last line */
    add_rec(path, "pd-v1-unlimited", "parse_date", 1, 0, 1000, 0);
    add_rec(path, "pd-v1-unlimited", "parse_date", 2, 0, 2000, 0);
    add_rec(path, "pd-v1-unlimited", "parse_date", 3, 0, 9000, 0);
    add_rec(path, "pd-v2-unlimited", "parse_date", 1, 0, 1000, 1);
    add_rec(path, "pd-v2-unlimited", "parse_date", 2, 1, 1500, 0);
    add_rec(path, "pd-v2-unlimited", "parse_date", 3, 1, 8000, 0);
    FILE *f = fopen(path, "a");
    fputs("{\"task\": \"torn", f);
    fclose(f);

    report_opts o;
    report_opts_default(&o);
    char said[4096] = "";
    o.log = collect;
    o.log_ctx = said;
    ck_assert_int_eq(report_write(dir, &o, err), 0);
    /* the summary goes to the log alone: a header and one line per run */
    char head[512];
    snprintf(head, sizeof head, "report: 6 episodes, 2 runs -> %s/summary.md\n", dir);
    ck_assert_msg(!strncmp(said, head, strlen(head)), "%s", said);
    ck_assert_ptr_nonnull(strstr(said, "  pd-v2-unlimited                2/3   passed  0.67"));
    ck_assert_ptr_nonnull(strstr(said, "  pd-v1-unlimited                0/3   passed  0.00"));
    char *js;
    snprintf(path, sizeof path, "%s/summary.json", dir);
    ck_assert_int_eq(fs_read_file(&js, NULL, path, 1 << 20, err), 0);
    cJSON *root = cJSON_Parse(js);
    ck_assert_ptr_nonnull(root);
    ck_assert_int_eq(cJSON_GetObjectItem(root, "episodes")->valueint, 6);
    ck_assert_int_eq(cJSON_GetObjectItem(root, "unreadable_lines")->valueint, 1);
    const cJSON *v1 = find_run(root, "pd-v1-unlimited"), *v2 = find_run(root, "pd-v2-unlimited");
    ck_assert_ptr_nonnull(v1);
    ck_assert_ptr_nonnull(v2);
    ck_assert_double_eq_tol(cJSON_GetObjectItem(v2, "pass_rate")->valuedouble, 2.0 / 3.0, 1e-9);
    ck_assert_int_eq(cJSON_GetObjectItem(v1, "zero_variance_all_failed")->valueint, 1);
    ck_assert_int_eq(cJSON_GetObjectItem(v2, "zero_variance_groups")->valueint, 0);
    ck_assert_double_eq_tol(cJSON_GetObjectItem(v2, "tool_success_rate")->valuedouble, 0.5, 1e-9);
    ck_assert_double_eq_tol(cJSON_GetObjectItem(v2, "identical_call_share")->valuedouble, 1.0 / 6.0, 1e-9);
    /* of 3 turns: one well-formed call, one format error, one without a call */
    ck_assert_double_eq_tol(cJSON_GetObjectItem(v2, "format_error_rate")->valuedouble, 1.0 / 3.0, 1e-9);
    ck_assert_double_eq_tol(cJSON_GetObjectItem(v2, "wellformed_turn_share")->valuedouble, 1.0 / 3.0, 1e-9);
    const cJSON *fk = cJSON_GetObjectItem(v2, "failed_calls_by_kind");
    ck_assert_int_eq(cJSON_GetArraySize(fk), 2);
    ck_assert_int_eq(cJSON_GetObjectItem(fk, "no_match")->valueint, 1);
    ck_assert_int_eq(cJSON_GetObjectItem(fk, "other")->valueint, 1);
    /* the [0, 1, 1] group's advantages */
    const cJSON *g, *found = NULL;
    cJSON_ArrayForEach(g, cJSON_GetObjectItem(root, "groups")) if (!strcmp(
        cJSON_GetObjectItem(g, "run")->valuestring, "pd-v2-unlimited")) found = g;
    ck_assert_ptr_nonnull(found);
    const cJSON *adv = cJSON_GetObjectItem(found, "advantages");
    ck_assert_double_eq_tol(cJSON_GetArrayItem(adv, 0)->valuedouble, -1.414, 1e-3);
    ck_assert_double_eq_tol(cJSON_GetArrayItem(adv, 1)->valuedouble, 0.707, 1e-3);
    double us = cJSON_GetObjectItem(v1, "utilization_sync")->valuedouble;
    ck_assert_double_eq_tol(us, 12000.0 / (3 * 9000.0), 1e-9);
    cJSON_Delete(root);
    free(js);

    char *md;
    snprintf(path, sizeof path, "%s/summary.md", dir);
    ck_assert_int_eq(fs_read_file(&md, NULL, path, 1 << 20, err), 0);
    ck_assert_ptr_nonnull(strstr(md, "zero variance: all failed"));
    ck_assert_ptr_nonnull(strstr(md, "-1.414, +0.707, +0.707"));
    ck_assert_ptr_nonnull(strstr(md, "**flag: repeated calls**"));
    ck_assert_ptr_nonnull(strstr(md, "utilization.svg"));
    ck_assert_ptr_nonnull(strstr(md, "| submit 3; | no_match 1; other 1; |"));
    free(md);
    const char *svgs[] = {"pass_rate.svg", "durations.svg", "utilization.svg"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, svgs[i]);
        char *s;
        ck_assert_int_eq(fs_read_file(&s, NULL, path, 1 << 20, err), 0);
        ck_assert_ptr_nonnull(strstr(s, "</svg>"));
        free(s);
    }
    fs_remove_tree(dir, err);
}
END_TEST

START_TEST(test_report_empty_dir)
{
    char dir[] = "/tmp/rl-report-XXXXXX", err[RL_ERR_MAX];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    report_opts o;
    report_opts_default(&o);
    ck_assert_int_eq(report_write(dir, &o, err), RL_ENOENT);
    ck_assert_ptr_nonnull(strstr(err, "no trajectory records"));
    ck_assert_int_eq(report_write("/nonexistent-dir", &o, err), RL_ENOENT);
    fs_remove_tree(dir, err);
}
END_TEST

/* The flagged share per run and over all runs, and the findings by rule. */
START_TEST(test_report_integrity)
{
    char dir[] = "/tmp/rl-report-XXXXXX", path[256], err[RL_ERR_MAX];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/trajectories.jsonl", dir);
    const char *recs[] = {
        "{\"task\":\"t\",\"config\":{\"run\":\"a\"},\"reward\":0,\"integrity\":{\"mode\":\"enforce\","
        "\"flagged\":true,\"test_reward\":1,\"findings\":[{\"rule\":\"atexit\",\"path\":\"src/a.c\",\"line\":3,"
        "\"text\":\"atexit(f);\"},{\"rule\":\"exit_call\",\"path\":\"src/a.c\",\"line\":4,\"text\":\"exit(0);\"}]}}",
        "{\"task\":\"t\",\"config\":{\"run\":\"a\"},\"reward\":1,\"integrity\":{\"mode\":\"enforce\","
        "\"flagged\":false,\"test_reward\":1,\"findings\":[]}}",
        "{\"task\":\"t\",\"config\":{\"run\":\"a\"},\"reward\":0}", /* a record before the check */
        "{\"task\":\"t\",\"config\":{\"run\":\"b\"},\"reward\":1,\"integrity\":{\"mode\":\"flag\","
        "\"flagged\":true,\"test_reward\":1,\"findings\":[{\"rule\":\"atexit\",\"path\":\"x.c\",\"line\":1,"
        "\"text\":\"atexit(f);\"}]}}"};
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(fs_append_record(path, recs[i], strlen(recs[i]), err), 0);
    report_opts o;
    report_opts_default(&o);
    ck_assert_int_eq(report_write(dir, &o, err), 0);
    char *js;
    snprintf(path, sizeof path, "%s/summary.json", dir);
    ck_assert_int_eq(fs_read_file(&js, NULL, path, 1 << 20, err), 0);
    cJSON *root = cJSON_Parse(js);
    ck_assert_int_eq(cJSON_GetObjectItem(root, "integrity_flagged")->valueint, 2);
    ck_assert_double_eq_tol(cJSON_GetObjectItem(root, "integrity_flagged_share")->valuedouble, 0.5, 1e-9);
    const cJSON *a = find_run(root, "a"), *b = find_run(root, "b");
    ck_assert_int_eq(cJSON_GetObjectItem(a, "integrity_flagged")->valueint, 1);
    ck_assert_double_eq_tol(cJSON_GetObjectItem(a, "integrity_flagged_share")->valuedouble, 1.0 / 3.0, 1e-9);
    ck_assert_double_eq_tol(cJSON_GetObjectItem(b, "integrity_flagged_share")->valuedouble, 1.0, 1e-9);
    const cJSON *by = cJSON_GetObjectItem(a, "integrity_findings_by_rule");
    ck_assert_int_eq(cJSON_GetObjectItem(by, "atexit")->valueint, 1);
    ck_assert_int_eq(cJSON_GetObjectItem(by, "exit_call")->valueint, 1);
    cJSON_Delete(root);
    free(js);
    char *md;
    snprintf(path, sizeof path, "%s/summary.md", dir);
    ck_assert_int_eq(fs_read_file(&md, NULL, path, 1 << 20, err), 0);
    ck_assert_ptr_nonnull(strstr(md, "All runs: 2 of 4 (50.0%)"));
    ck_assert_ptr_nonnull(strstr(md, "| a | 3 | 1 | 33.3% | atexit 1; exit_call 1; |"));
    ck_assert_ptr_nonnull(strstr(md, "| b | 1 | 1 | 100.0% | atexit 1; |"));
    free(md);
    fs_remove_tree(dir, err);
}
END_TEST

Suite *report_suite(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_report_reference_groups);
    tcase_add_test(tc, test_report_empty_dir);
    tcase_add_test(tc, test_report_integrity);
    suite_add_tcase(s, tc);
    return s;
}
