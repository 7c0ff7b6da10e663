/* Batch runs: kill -9 midway, run again, exactly one record per episode. */
#include "common/err.h"
#include "common/fsutil.h"

#include <cJSON.h>
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *bin(void)
{
    const char *b = getenv("RL_BIN");
    return b && b[0] ? b : "bin";
}

static size_t count_lines(const char *path)
{
    char *data;
    size_t len, n = 0;
    if (fs_read_file(&data, &len, path, 1u << 30, NULL) < 0)
        return 0;
    for (size_t i = 0; i < len; i++)
        n += data[i] == '\n';
    free(data);
    return n;
}

static pid_t start_batch(const char *out, const char *ws)
{
    pid_t pid = fork();
    if (pid == 0) {
        char exe[256];
        snprintf(exe, sizeof exe, "%s/harness", bin());
        setenv("RL_WS_ROOT", ws, 1);
        if (!freopen("/dev/null", "w", stderr) || !freopen("/dev/null", "w", stdout))
            _exit(126);
        execl(exe, exe, "batch", "--tasks", "leapyear,roman_subtractive,base64_lowercase_z", "--policy",
              "oracle", "--seeds", "1-4", "--workers", "2", "--out", out, "--progress", "plain", (char *)NULL);
        _exit(127);
    }
    return pid;
}

START_TEST(test_kill9_then_resume)
{
    char dir[] = "/tmp/rl-batch-XXXXXX", err[RL_ERR_MAX], out[256], file[300], ws[300];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    chmod(dir, 0755);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(ws, sizeof ws, "%s/ws", dir);
    snprintf(file, sizeof file, "%s/trajectories.jsonl", out);
    pid_t pid = start_batch(out, ws);
    /* wait for the first records, then kill -9 in the middle */
    for (int i = 0; i < 600 && count_lines(file) < 3; i++)
        usleep(50 * 1000);
    size_t before = count_lines(file);
    ck_assert_uint_ge(before, 3);
    kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    ck_assert(WIFSIGNALED(st));
    usleep(300 * 1000); /* workers die with their parent */
    size_t after_kill = count_lines(file);
    ck_assert_uint_lt(after_kill, 12);
    /* the same command again finishes only the missing episodes */
    pid = start_batch(out, ws);
    waitpid(pid, &st, 0);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char *data;
    ck_assert_int_eq(fs_read_file(&data, NULL, file, 1u << 30, err), 0);
    char *keys[64];
    int n = 0, passed = 0;
    char *save = NULL;
    for (char *line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        cJSON *r = cJSON_Parse(line);
        ck_assert_ptr_nonnull(r); /* every line whole */
        ck_assert_int_lt(n, 64);
        keys[n++] = strdup(cJSON_GetStringValue(cJSON_GetObjectItem(r, "key")));
        passed += cJSON_GetNumberValue(cJSON_GetObjectItem(r, "reward")) > 0.5;
        cJSON_Delete(r);
    }
    free(data);
    ck_assert_int_eq(n, 12); /* 3 tasks x 4 seeds, no duplicate, none lost */
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            ck_assert_str_ne(keys[i], keys[j]);
    ck_assert_int_eq(passed, 12);
    for (int i = 0; i < n; i++)
        free(keys[i]);
    fs_remove_tree(dir, err);
}
END_TEST

Suite *batch_suite(void)
{
    Suite *s = suite_create("batch");
    TCase *tc = tcase_create("resume");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_kill9_then_resume);
    suite_add_tcase(s, tc);
    return s;
}
