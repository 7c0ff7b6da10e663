/* test_layers.c - Check suite for the layering of the code (docs/DEVELOPING.md).
 *
 * The map below is the design: each layer may include and call only itself
 * and the layers it lists. The build enforces it two ways, and this suite
 * proves both can fail:
 *   - a layer's sources compile with an include path holding only the
 *     layers below it, so a planted upward include does not compile;
 *   - `make layers` links each layer's whole library against only the
 *     libraries below it, so an upward call is an unresolved symbol. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const struct {
    const char *name;
    const char *header; /* any public header of the layer */
    const char *below;  /* the layers it may use */
} layers[] = {
    {"common", "common/err.h", ""},
    {"sandbox", "sandbox/sandbox.h", "common"},
    {"corpus", "corpus/task.h", "common"},
    {"protocol", "protocol/chat.h", "common"},
    {"http", "http/http.h", "common"},
    {"model", "model/model.h", "common"},
    {"policy", "policy/policy.h", "model http protocol corpus common"},
    {"harness", "harness/episode.h", "policy model http protocol corpus sandbox common"},
    {"grpo", "grpo/grpo.h", "harness policy model http protocol corpus sandbox common"},
};
#define N_LAYERS (sizeof layers / sizeof layers[0])

/* make, run from the checkout, for the build the suite runs in. */
static const char *make_cmd(void)
{
    const char *b = getenv("RL_BUILD");
    return b && strcmp(b, "build-san") == 0 ? "env -u MAKEFLAGS -u MAKELEVEL make -s SAN=1"
                                             : "env -u MAKEFLAGS -u MAKELEVEL make -s";
}

/* Output of cmd (stdout and stderr), at most 64 KiB; returns its exit status. */
static int run_out(const char *cmd, char *out, size_t cap)
{
    char full[4096];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    ck_assert_ptr_nonnull(p);
    size_t n = 0, r;
    while (n < cap - 1 && (r = fread(out + n, 1, cap - 1 - n, p)) > 0)
        n += r;
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int may_use(size_t l, const char *other)
{
    if (strcmp(layers[l].name, other) == 0)
        return 1;
    size_t len = strlen(other);
    for (const char *p = layers[l].below; (p = strstr(p, other)); p += len)
        if ((p == layers[l].below || p[-1] == ' ') && (p[len] == ' ' || p[len] == 0))
            return 1;
    return 0;
}

/* Every layer includes one header of every other layer, with the flags the
 * build compiles that layer with: it compiles exactly when the map allows. */
START_TEST(test_upward_include_fails)
{
    char dir[] = "/tmp/rl-layers-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    static char out[1 << 16];
    size_t checked = 0;
    for (size_t l = 0; l < N_LAYERS; l++) {
        char cmd[4096], flags[2048];
        snprintf(cmd, sizeof cmd, "%s layer-cflags L=%s", make_cmd(), layers[l].name);
        ck_assert_int_eq(run_out(cmd, flags, sizeof flags), 0);
        flags[strcspn(flags, "\n")] = 0;
        for (size_t m = 0; m < N_LAYERS; m++) {
            if (access(layers[m].header, R_OK) != 0)
                continue; /* a layer with no sources yet */
            char src[256];
            snprintf(src, sizeof src, "%s/planted_%s_%s.c", dir, layers[l].name, layers[m].name);
            FILE *f = fopen(src, "w");
            ck_assert_ptr_nonnull(f);
            fprintf(f, "#include \"%s\"\nint planted_%zu;\n", layers[m].header, m);
            fclose(f);
            snprintf(cmd, sizeof cmd, "cc %s -fsyntax-only -MF /dev/null %s", flags, src);
            int rc = run_out(cmd, out, sizeof out);
            int allowed = may_use(l, layers[m].name);
            if (allowed)
                ck_assert_msg(rc == 0, "%s including %s should compile:\n%s", layers[l].name,
                              layers[m].header, out);
            else
                ck_assert_msg(rc != 0 && strstr(out, layers[m].header),
                              "%s including %s (a layer above it) compiled", layers[l].name,
                              layers[m].header);
            unlink(src);
            checked++;
        }
    }
    rmdir(dir);
    ck_assert_uint_ge(checked, (N_LAYERS - 1) * (N_LAYERS - 1));
}
END_TEST

/* `make layers` passes with the map, and fails, naming the layer, once a
 * layer is linked without one it really uses. */
START_TEST(test_layer_links)
{
    static char out[1 << 16];
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s layers", make_cmd());
    ck_assert_msg(run_out(cmd, out, sizeof out) == 0, "make layers failed:\n%s", out);
    ck_assert_ptr_nonnull(strstr(out, "libraries link against only the layers below them"));

    snprintf(cmd, sizeof cmd, "%s layers DEPS_policy=common", make_cmd());
    ck_assert_int_ne(run_out(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "undefined reference") && strstr(out, "libpolicy.a needs a symbol"),
                  "%s", out);
}
END_TEST

Suite *layers_suite(void)
{
    Suite *s = suite_create("layers");
    TCase *tc = tcase_create("layers");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_upward_include_fails);
    tcase_add_test(tc, test_layer_links);
    suite_add_tcase(s, tc);
    return s;
}
