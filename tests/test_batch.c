/* Batch runs: kill -9 midway, run again, exactly one record per episode.
 * `harness show` on a recorded episode: the token table and the transcript. */
#include "common/err.h"
#include "common/fsutil.h"
#include "harness/testrun.h"

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

/* Runs a shell command; its stdout in *out (caller frees); the exit code. */
static int sh_out(const char *cmd, char **out)
{
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t cap = 1 << 20, n = 0, r;
    char *buf = malloc(cap);
    while ((r = fread(buf + n, 1, cap - 1 - n, p)) > 0)
        n += r;
    buf[n] = 0;
    int st = pclose(p);
    *out = buf;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(test_show_transcript)
{
    char dir[] = "/tmp/rl-show-XXXXXX", err[RL_ERR_MAX], rec[300], cmd[1024], *out;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    chmod(dir, 0755);
    snprintf(rec, sizeof rec, "%s/oracle.jsonl", dir);
    snprintf(cmd, sizeof cmd, "RL_WS_ROOT=%s/ws %s/harness run --task leapyear --policy oracle --out %s >/dev/null 2>&1",
             dir, bin(), rec);
    ck_assert_int_eq(system(cmd), 0);

    /* the table alone: one row per turn, the reward, no transcript */
    snprintf(cmd, sizeof cmd, "%s/harness show %s", bin(), rec);
    ck_assert_int_eq(sh_out(cmd, &out), 0);
    ck_assert_ptr_nonnull(strstr(out, "reward 1 (submit)"));
    ck_assert_ptr_null(strstr(out, "transcript"));
    free(out);

    /* the transcript: the oracle's raw replies (its edit 400 == -> 400 !=)
     * and the tool responses, in order */
    snprintf(cmd, sizeof cmd, "%s/harness show %s --transcript", bin(), rec);
    ck_assert_int_eq(sh_out(cmd, &out), 0);
    const char *a = strstr(out, "[assistant, turn 0]"), *t = strstr(out, "[tool run_tests]");
    const char *ed = strstr(out, "<function=edit_file>");
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_nonnull(ed);
    ck_assert(a < t && t < ed);
    ck_assert_ptr_nonnull(strstr(ed, "400 !="));
    free(out);

    /* untrusted text cannot drive the terminal; long tool output is cut */
    char bad[300];
    snprintf(bad, sizeof bad, "%s/bad.jsonl", dir);
    FILE *f = fopen(bad, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "{\"turns\": [], \"reward\": 0, \"messages\": [{\"role\": \"tool\", \"name\": \"run_tests\","
               " \"content\": \"a\\u001b[31mred");
    for (int i = 0; i < 30; i++)
        fprintf(f, "\\nline %d", i);
    fprintf(f, "\"}]}\n");
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s/harness show %s --transcript", bin(), bad);
    ck_assert_int_eq(sh_out(cmd, &out), 0);
    ck_assert_ptr_null(strchr(out, 0x1b));
    ck_assert_ptr_nonnull(strstr(out, "a?[31mred"));
    ck_assert_ptr_nonnull(strstr(out, "[... 11 more lines; --full shows all]"));
    free(out);
    snprintf(cmd, sizeof cmd, "%s/harness show %s --full", bin(), bad);
    ck_assert_int_eq(sh_out(cmd, &out), 0);
    ck_assert_ptr_nonnull(strstr(out, "line 29"));
    free(out);

    /* errors: a record that is not there (1), a bad flag (2) */
    snprintf(cmd, sizeof cmd, "%s/harness show %s --index 5 2>&1", bin(), rec);
    ck_assert_int_eq(sh_out(cmd, &out), 1);
    ck_assert_msg(strstr(out, "--index 5 is past the end: 1 record (0-0)\n"), "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "%s/harness show %s --bogus 2>&1", bin(), rec);
    ck_assert_int_eq(sh_out(cmd, &out), 2);
    free(out);
    fs_remove_tree(dir, err);
}
END_TEST

/* `harness show` reads records of both schemas alike, and refuses one with
 * a malformed segment (offsets and lengths past the context, wrapping,
 * negative) with one line naming the record and the field, exit 1: no
 * pointer is ever formed from them (the sanitizer build runs this too). */
START_TEST(test_show_schemas_and_malformed)
{
    char dir[] = "/tmp/rl-show-XXXXXX", err[RL_ERR_MAX], cmd[1024], *out, *out2;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    /* the same episode in schema 1 and 2: the same table */
    snprintf(cmd, sizeof cmd, "%s/harness show tests/data/traj/v1-oracle-keep.jsonl --tokenizer models/tokenizer.json",
             bin());
    ck_assert_int_eq(sh_out(cmd, &out), 0);
    snprintf(cmd, sizeof cmd, "%s/harness show tests/data/traj/v2-oracle-keep.jsonl --tokenizer models/tokenizer.json",
             bin());
    ck_assert_int_eq(sh_out(cmd, &out2), 0);
    ck_assert_ptr_nonnull(strstr(out, "reward 1 (submit)"));
    ck_assert_str_eq(out, out2);
    free(out);
    free(out2);

    static const struct {
        int turn;
        const char *key, *json, *want;
    } cases[] = {
        {0, "segments", "[[9223372036854775808, 9223372036854775809, \"tool\"]]", "turn 0: segments[0]"},
        {0, "segments", "[[0, 18446744073709551615, \"tool\"]]", "turn 0: segments[0]"},
        {0, "segments", "[[-5, 10, \"tool\"]]", "turn 0: segments[0]"},
        {1, "segments", "[[0, 1e308, \"system\"]]", "turn 1: segments[0]"},
        {2, "segments", "{\"prefix_turn\": 1, \"keep\": 4294967296, \"append\": []}", "turn 2: segments"},
        {2, "segments", "{\"prefix_turn\": 1, \"keep\": 2, \"append\": [[-1, 3, \"tool\"]]}",
         "turn 2: segments.append[0]"},
    };
    static const char *files[2] = {"tests/data/traj/v1-oracle-keep.jsonl", "tests/data/traj/v2-oracle-keep.jsonl"};
    for (int f = 0; f < 2; f++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            char *text, path[300];
            ck_assert_int_eq(fs_read_file(&text, NULL, files[f], 1u << 26, err), 0);
            cJSON *r = cJSON_Parse(text);
            free(text);
            cJSON *t = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "turns"), cases[i].turn);
            cJSON_ReplaceItemInObject(t, cases[i].key, cJSON_Parse(cases[i].json));
            char *line = cJSON_PrintUnformatted(r);
            cJSON_Delete(r);
            /* record 1 of the file: a good record first */
            ck_assert_int_eq(fs_read_file(&text, NULL, files[f], 1u << 26, err), 0);
            snprintf(path, sizeof path, "%s/bad-%d-%zu.jsonl", dir, f, i);
            FILE *fp = fopen(path, "w");
            ck_assert_ptr_nonnull(fp);
            fprintf(fp, "%s%s\n", text, line);
            fclose(fp);
            free(text);
            free(line);
            snprintf(cmd, sizeof cmd, "%s/harness show %s --index 1 2>&1", bin(), path);
            ck_assert_int_eq(sh_out(cmd, &out), 1);
            ck_assert_msg(strstr(out, "record 1: ") && strstr(out, cases[i].want), "file %d case %zu: %s", f, i, out);
            ck_assert_msg(strchr(out, '\n') == out + strlen(out) - 1, "file %d case %zu: not one line: %s", f, i, out);
            free(out);
        }
    fs_remove_tree(dir, err);
}
END_TEST

/* The "policy" of the first record in FILE, copied into out. */
static void record_policy(char *out, size_t cap, const char *file)
{
    char *data, err[RL_ERR_MAX];
    ck_assert_int_eq(fs_read_file(&data, NULL, file, 1u << 30, err), 0);
    char *nl = strchr(data, '\n');
    if (nl)
        *nl = 0;
    cJSON *r = cJSON_Parse(data);
    ck_assert_ptr_nonnull(r);
    const char *p = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "config"), "policy"));
    ck_assert_ptr_nonnull(p);
    snprintf(out, cap, "%s", p);
    cJSON_Delete(r);
    free(data);
}

/* Without --policy, `harness batch` runs what `harness run` runs: the
 * shipped checkpoint when there is one (the tests run from the checkout's
 * root, where models/policy.safetensors is committed). */
START_TEST(test_default_policy_same_for_run_and_batch)
{
    char dir[] = "/tmp/rl-defpol-XXXXXX", err[RL_ERR_MAX], cmd[1024], rec[300], run_pol[256], batch_pol[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    chmod(dir, 0755);
    snprintf(rec, sizeof rec, "%s/run.jsonl", dir);
    snprintf(cmd, sizeof cmd, "RL_WS_ROOT=%s/ws %s/harness run --task leapyear --max-turns 1 --out %s >/dev/null 2>&1",
             dir, bin(), rec);
    ck_assert_int_eq(system(cmd), 0);
    record_policy(run_pol, sizeof run_pol, rec);
    snprintf(cmd, sizeof cmd,
             "RL_WS_ROOT=%s/ws %s/harness batch --tasks leapyear --max-turns 1 --out %s/b --progress plain >/dev/null 2>&1",
             dir, bin(), dir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(rec, sizeof rec, "%s/b/trajectories.jsonl", dir);
    record_policy(batch_pol, sizeof batch_pol, rec);
    ck_assert_str_eq(batch_pol, run_pol);
    ck_assert_str_eq(run_pol, access("models/policy.safetensors", R_OK) == 0 ? "model:models/policy.safetensors" : "oracle");
    fs_remove_tree(dir, err);
}
END_TEST

/* --tasks-dir and --repos-dir: a task whose repository exists only under
 * another folder runs there (the work tree is made from that folder's
 * copy, not from repos/). */
START_TEST(test_repos_dir)
{
    char dir[] = "/tmp/rl-reposdir-XXXXXX", err[RL_ERR_MAX], cmd[2048], *out;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    chmod(dir, 0755);
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/tasks %s/repos && cp -r repos/leapyear %s/repos/leapcopy && "
             "sed 's/\"repo\":[^,]*,/\"repo\": \"leapcopy\",/' tasks/leapyear.json > %s/tasks/leapyear.json",
             dir, dir, dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    /* batch, validate and run all read the two folders; without --repos-dir
     * the task's repository is not found: exit 1, and the message names it */
    static const struct {
        const char *args; /* from the subcommand on; %s: the temp dir, then "" or "2" */
        const char *says; /* with --repos-dir */
    } runs[] = {
        {"batch --tasks leapyear --policy oracle --progress plain --out %s/b%s", "1 passed, 0 errors"},
        {"validate --tasks leapyear --progress plain", "leapyear"},
        {"run --task leapyear --policy oracle --out %s/run%s.jsonl", "leapyear: reward 1"},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        for (int with = 1; with >= 0; with--) {
            char args[512]; /* each its own output: a second batch would resume the first */
            snprintf(args, sizeof args, runs[i].args, dir, with ? "" : "2");
            snprintf(cmd, sizeof cmd, "RL_WS_ROOT=%s/ws %s/harness %s --tasks-dir %s/tasks%s%s%s 2>&1", dir, bin(),
                     args, dir, with ? " --repos-dir " : "", with ? dir : "", with ? "/repos" : "");
            int rc = sh_out(cmd, &out);
            ck_assert_msg(rc == (with ? 0 : 1), "%s: rc %d\n%s", cmd, rc, out);
            ck_assert_msg(strstr(out, with ? runs[i].says : "leapcopy"), "%s\n%s", cmd, out);
            free(out);
        }
    }
    fs_remove_tree(dir, err);
}
END_TEST

/* Writes a TAP task "ID" on repository flip (lib.txt: the bug turns a into
 * b, the gold patch back) with the test command cmd (a C string literal's
 * content: quotes escaped). */
static void flip_task(const char *dir, const char *id, const char *cmd)
{
    char path[256];
    snprintf(path, sizeof path, "%s/tasks/%s.json", dir, id);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f,
            "{\"instance_id\": \"%s\", \"repo\": \"flip\", \"problem_statement\": \"t_a fails.\",\n"
            " \"bug\": \"diff --git a/lib.txt b/lib.txt\\n--- a/lib.txt\\n+++ b/lib.txt\\n@@ -1 +1 @@\\n-a\\n+b\\n\",\n"
            " \"patch\": \"diff --git a/lib.txt b/lib.txt\\n--- a/lib.txt\\n+++ b/lib.txt\\n@@ -1 +1 @@\\n-b\\n+a\\n\",\n"
            " \"FAIL_TO_PASS\": [\"t_a\"], \"PASS_TO_PASS\": [\"t_b\"], \"test_cmd\": \"%s\",\n"
            " \"test_format\": \"tap\", \"protected_paths\": [], \"timeout_s\": 30, \"split\": \"train\", "
            "\"kind\": \"single_edit\"}\n",
            id, cmd);
    fclose(f);
}

/* Every test run starts from a fresh checkout: a task whose outcome hangs
 * on a marker file an earlier run left in the tree sees no marker, ever
 * (it is consistent, and invalid for the right reason). A task whose
 * outcome is a coin toss is rejected by --runs; --runs out of range is a
 * usage error. */
START_TEST(test_validate_runs)
{
    char dir[] = "/tmp/rl-flaky-XXXXXX", err[RL_ERR_MAX], cmd[4096], *out;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    chmod(dir, 0755);
    snprintf(cmd, sizeof cmd, "mkdir -p %s/tasks %s/repos/flip && printf 'a\\n' > %s/repos/flip/lib.txt", dir, dir,
             dir);
    ck_assert_int_eq(system(cmd), 0);
    flip_task(dir, "marker",
              "echo 1..2; if [ -e .x ]; then rm .x; echo 'ok 1 - t_a'; r=0; else touch .x; "
              "echo 'not ok 1 - t_a'; r=1; fi; echo 'ok 2 - t_b'; exit $r");
    flip_task(dir, "coin",
              "echo 1..2; b=$(od -An -N1 -tu1 /dev/urandom); if [ $((b % 2)) = 1 ]; then echo 'ok 1 - t_a'; r=0; "
              "else echo 'not ok 1 - t_a'; r=1; fi; echo 'ok 2 - t_b'; exit $r");
    const char *base = "RL_WS_ROOT=%s/ws %s/harness validate --tasks %s --tasks-dir %s/tasks --repos-dir %s/repos "
                       "--progress plain %s 2>&1";
    snprintf(cmd, sizeof cmd, base, dir, bin(), "marker", dir, dir, "--runs 3");
    ck_assert_int_eq(sh_out(cmd, &out), 1);
    ck_assert_msg(strstr(out, "with the gold patch: FAIL_TO_PASS test t_a fail"), "%s", out);
    ck_assert_msg(!strstr(out, "flaky"), "%s", out);
    free(out);
    /* Accepted only if 24 tosses all came out as a valid task wants:
     * about one chance in 2^24. */
    snprintf(cmd, sizeof cmd, base, dir, bin(), "coin", dir, dir, "--runs 12");
    ck_assert_int_eq(sh_out(cmd, &out), 1);
    ck_assert_msg(strstr(out, "1 tasks, 0 valid, 1 failed"), "%s", out);
    free(out);
    /* t_b passes only in the scoring environment: the second run, under
     * MALLOC_PERTURB_ and a larger environment, tells. */
    flip_task(dir, "envdep",
              "echo 1..2; if grep -q a lib.txt; then echo 'ok 1 - t_a'; r=0; else echo 'not ok 1 - t_a'; r=1; fi; "
              "if [ -z \\\"$MALLOC_PERTURB_\\\" ]; then echo 'ok 2 - t_b'; else echo 'not ok 2 - t_b'; r=1; fi; exit $r");
    snprintf(cmd, sizeof cmd, base, dir, bin(), "envdep", dir, dir, "--runs 1");
    ck_assert_int_eq(sh_out(cmd, &out), 0);
    free(out);
    snprintf(cmd, sizeof cmd, base, dir, bin(), "envdep", dir, dir, "--runs 2");
    ck_assert_int_eq(sh_out(cmd, &out), 1);
    ck_assert_msg(strstr(out, "at the base: run 2 of 2 (MALLOC_PERTURB_=86, environment 1 KiB larger) disagrees "
                              "with run 1"), "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, base, dir, bin(), "coin", dir, dir, "--runs 0");
    ck_assert_int_eq(sh_out(cmd, &out), 2);
    ck_assert_msg(strstr(out, "--runs: expected 1-20, got '0'"), "%s", out);
    free(out);
    fs_remove_tree(dir, err);
}
END_TEST

/* A C task (Check) whose PASS_TO_PASS test writes one byte past a heap
 * block: the plain build passes it (malloc's rounding hides the byte), the
 * build under ASan and UBSan does not, so with --runs 2 the task is
 * rejected, naming the sanitizers; with --runs 1 (no variations) it
 * passes, and so does --runs 2 once the overflow is gone. Where the
 * sandbox has no cgroups there is no sanitizer run. */
START_TEST(test_validate_sanitizer)
{
    char dir[] = "/tmp/rl-asan-XXXXXX", err[RL_ERR_MAX], cmd[8192], *out;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    chmod(dir, 0755);
    static const char *const FILES[][2] = {
        {".gitignore", "build/\n"},
        {"Makefile", "CC := cc\nCFLAGS := -std=c11 -O0 -g\ntest:\n\t@mkdir -p build\n"
                     "\t$(CC) $(CFLAGS) -o build/t src/ovf.c tests/t.c $(shell pkg-config --cflags --libs check)\n"
                     "\t./build/t\n"},
        {"src/ovf.c", "#include <stdlib.h>\n#include <string.h>\nint value(void) { return 1; }\n"
                      "char *dup_str(const char *s) { char *d = malloc(strlen(s)); strcpy(d, s); return d; }\n"},
        {"tests/t.c", "#include <check.h>\n#include <stdlib.h>\nint value(void);\nchar *dup_str(const char *);\n"
                      "START_TEST(t_value) { ck_assert_int_eq(value(), 1); }\nEND_TEST\n"
                      "START_TEST(t_copy) { char *d = dup_str(\"hello\"); ck_assert_str_eq(d, \"hello\"); free(d); }\n"
                      "END_TEST\n"
                      "int main(void) {\n  Suite *s = suite_create(\"ovf\");\n  TCase *tc = tcase_create(\"core\");\n"
                      "  tcase_add_test(tc, t_value);\n  tcase_add_test(tc, t_copy);\n  suite_add_tcase(s, tc);\n"
                      "  SRunner *r = srunner_create(s);\n  srunner_run_all(r, CK_VERBOSE);\n"
                      "  int n = srunner_ntests_failed(r);\n  srunner_free(r);\n  return n ? 1 : 0;\n}\n"},
    };
    snprintf(cmd, sizeof cmd, "mkdir -p %s/tasks %s/repos/ovf/src %s/repos/ovf/tests", dir, dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    for (size_t i = 0; i < sizeof FILES / sizeof FILES[0]; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/repos/ovf/%s", dir, FILES[i][0]);
        ck_assert_int_eq(fs_write_atomic(p, FILES[i][1], strlen(FILES[i][1]), err), 0);
    }
    char path[512];
    snprintf(path, sizeof path, "%s/tasks/ovf1.json", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "{\"instance_id\": \"ovf1\", \"repo\": \"ovf\", \"problem_statement\": \"value() is wrong.\",\n"
               " \"bug\": \"diff --git a/src/ovf.c b/src/ovf.c\\n--- a/src/ovf.c\\n+++ b/src/ovf.c\\n@@ -3 +3 @@\\n"
               "-int value(void) { return 1; }\\n+int value(void) { return 0; }\\n\",\n"
               " \"patch\": \"diff --git a/src/ovf.c b/src/ovf.c\\n--- a/src/ovf.c\\n+++ b/src/ovf.c\\n@@ -3 +3 @@\\n"
               "-int value(void) { return 0; }\\n+int value(void) { return 1; }\\n\",\n"
               " \"FAIL_TO_PASS\": [\"t_value\"], \"PASS_TO_PASS\": [\"t_copy\"], \"test_cmd\": \"make test\",\n"
               " \"test_format\": \"check\", \"protected_paths\": [\"tests/\", \"Makefile\"], \"timeout_s\": 60, "
               "\"split\": \"train\", \"kind\": \"single_edit\"}\n");
    fclose(f);
    const char *base = "RL_WS_ROOT=%s/ws %s/harness validate --tasks ovf1 --tasks-dir %s/tasks --repos-dir %s/repos "
                       "--progress plain %s 2>&1";
    snprintf(cmd, sizeof cmd, base, dir, bin(), dir, dir, "--runs 1");
    ck_assert_msg(sh_out(cmd, &out) == 0, "%s", out);
    free(out);
    if (!testrun_can_sanitize()) {
        fs_remove_tree(dir, err);
        return;
    }
    snprintf(cmd, sizeof cmd, base, dir, bin(), dir, dir, "--runs 2");
    ck_assert_int_eq(sh_out(cmd, &out), 1);
    ck_assert_msg(strstr(out, "at the base: the run built under AddressSanitizer and UndefinedBehaviorSanitizer "
                              "disagrees with run 1"), "%s", out);
    free(out);
    /* without the overflow the sanitized build agrees: the task is valid */
    const char *fixed = "#include <stdlib.h>\n#include <string.h>\nint value(void) { return 1; }\n"
                        "char *dup_str(const char *s) { char *d = malloc(strlen(s) + 1); strcpy(d, s); return d; }\n";
    snprintf(path, sizeof path, "%s/repos/ovf/src/ovf.c", dir);
    ck_assert_int_eq(fs_write_atomic(path, fixed, strlen(fixed), err), 0);
    snprintf(cmd, sizeof cmd, base, dir, bin(), dir, dir, "--runs 2");
    ck_assert_msg(sh_out(cmd, &out) == 0, "%s", out);
    free(out);
    fs_remove_tree(dir, err);
}
END_TEST

/* A valid task whose test run leaves files outside the repository's
 * ignore rules is flagged with a warning naming them (the ignored ones
 * and the gold patch's own file are not named); a tidy one is not. */
START_TEST(test_validate_leftovers)
{
    char dir[] = "/tmp/rl-litter-XXXXXX", err[RL_ERR_MAX], cmd[4096], *out;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    chmod(dir, 0755);
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/tasks %s/repos/flip && printf 'a\\n' > %s/repos/flip/lib.txt && "
             "printf '*.o\\n' > %s/repos/flip/.gitignore",
             dir, dir, dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    const char *tap = "echo 1..2; if grep -q a lib.txt; then echo 'ok 1 - t_a'; r=0; else echo 'not ok 1 - t_a'; "
                      "r=1; fi; echo 'ok 2 - t_b'; ";
    char litter[1024], tidy[1024];
    snprintf(litter, sizeof litter, "%smkdir -p out; echo x > out/log.txt; echo x > lib.o; exit $r", tap);
    snprintf(tidy, sizeof tidy, "%sexit $r", tap);
    flip_task(dir, "litter", litter);
    flip_task(dir, "tidy", tidy);
    snprintf(cmd, sizeof cmd,
             "RL_WS_ROOT=%s/ws %s/harness validate --tasks litter,tidy --tasks-dir %s/tasks --repos-dir %s/repos "
             "--progress plain 2>&1",
             dir, bin(), dir, dir);
    ck_assert_int_eq(sh_out(cmd, &out), 0);
    ck_assert_msg(strstr(out, "ok; warning: the tests leave files no ignore rule covers: out/log.txt\n"), "%s", out);
    ck_assert_msg(!strstr(out, "lib.o") && !strstr(out, "lib.txt"), "%s", out);
    const char *t = strstr(out, "\ntidy ");
    ck_assert_msg(t && strstr(t, " ok\n") && !strstr(t, "warning"), "%s", out);
    ck_assert_msg(strstr(out, "2 tasks, 2 valid, 0 failed"), "%s", out);
    free(out);
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
    TCase *show = tcase_create("show");
    tcase_set_timeout(show, 120);
    tcase_add_test(show, test_show_transcript);
    tcase_add_test(show, test_show_schemas_and_malformed);
    tcase_add_test(show, test_default_policy_same_for_run_and_batch);
    tcase_add_test(show, test_repos_dir);
    tcase_add_test(show, test_validate_runs);
    tcase_add_test(show, test_validate_leftovers);
    tcase_add_test(show, test_validate_sanitizer);
    suite_add_tcase(s, show);
    return s;
}
