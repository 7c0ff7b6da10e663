/* test_chat.c - chat messages (protocol/chat), OpenAI JSON, and the
 * Qwen3-style template (protocol/template): exact bytes, origin segments,
 * the keep-history prefix invariant, drop mode, think off, canonical
 * assistant text round trips, the message cap. */
#include "common/err.h"
#include "common/limits.h"
#include "protocol/chat.h"
#include "protocol/template.h"
#include "harness/tools.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const tc_param ONE_P[] = {{"path", TC_STRING, 1, "File to read."}};
static const tc_spec ONE[] = {{"read_file", "Show a file.", ONE_P, 1}};

/* Segments are in order, contiguous, cover the text, and never empty. */
static void check_segments(const tpl_text *t)
{
    size_t off = 0;
    for (size_t i = 0; i < t->nsegs; i++) {
        ck_assert_uint_eq(t->segs[i].off, off);
        ck_assert_uint_gt(t->segs[i].len, 0);
        off += t->segs[i].len;
    }
    ck_assert_uint_eq(off, t->len);
    ck_assert_uint_eq(strlen(t->text), t->len);
}

/* Concatenation of the segments of one origin. */
static char *origin_text(const tpl_text *t, tpl_origin o)
{
    char *s = calloc(t->len + 1, 1);
    size_t n = 0;
    for (size_t i = 0; i < t->nsegs; i++)
        if (t->segs[i].origin == o) {
            memcpy(s + n, t->text + t->segs[i].off, t->segs[i].len);
            n += t->segs[i].len;
        }
    return s;
}

static void add_gen(chat *c, const char *raw)
{
    size_t n;
    const tc_spec *specs = tool_specs(&n);
    tc_parsed p;
    char err[RL_ERR_MAX];
    tc_parse(&p, raw, strlen(raw), specs, n, NULL, err);
    ck_assert_int_eq(chat_add_generated(c, raw, strlen(raw), &p, 0, err), 0);
    tc_parsed_dispose(&p);
}

START_TEST(test_render_exact)
{
    chat *c;
    ck_assert_int_eq(chat_new(&c, NULL), 0);
    char err[RL_ERR_MAX];
    const char *gen = "<think>\nRead it.\n</think>\n\n<tool_call>\n<function=read_file>\n"
                      "<parameter=path>\na.c\n</parameter>\n</function>\n</tool_call>";
    ck_assert_int_eq(chat_add_system(c, "You fix bugs.", err), 0);
    ck_assert_int_eq(chat_add_user(c, "Leap years are wrong.", err), 0);
    add_gen(c, gen);
    ck_assert_int_eq(chat_add_tool(c, "call_0", "read_file", "a.c: lines 1-1 of 1\n1| int x;\n",
                                   err), 0);
    ck_assert_int_eq(chat_add_tool(c, "call_1", "read_file", "error: no such file", err), 0);
    tpl_text t;
    ck_assert_int_eq(tpl_render(&t, NULL, ONE, 1, c->msgs, c->n, err), 0);
    const char *want =
        "<|im_start|>system\nYou fix bugs.\n\n# Tools\n\nYou can call the following tools. "
        "Paths are relative to the root of the repository.\n"
        "\n## read_file\nShow a file.\nParameters:\n- path (string, required): File to read.\n"
        "\n# How to call a tool\n\nWrite each call in this form, one block per call:\n\n"
        "<tool_call>\n<function=TOOL_NAME>\n<parameter=PARAMETER_NAME>\nvalue\n</parameter>\n"
        "</function>\n</tool_call>\n\nPut each value on its own lines between the tags, exactly "
        "as it should be used (code keeps its indentation). Write integers in decimal and "
        "arrays as JSON, like [\"a\", \"b\"]. Leave out optional parameters you do not need. "
        "You may make several calls in one message; write nothing after the last one. Each "
        "result comes back in a <tool_response> block, in the order of the calls.<|im_end|>\n"
        "<|im_start|>user\nLeap years are wrong.<|im_end|>\n"
        "<|im_start|>assistant\n<think>\nRead it.\n</think>\n\n<tool_call>\n"
        "<function=read_file>\n<parameter=path>\na.c\n</parameter>\n</function>\n</tool_call>"
        "<|im_end|>\n"
        "<|im_start|>user\n<tool_response>\na.c: lines 1-1 of 1\n1| int x;\n\n</tool_response>\n"
        "<tool_response>\nerror: no such file\n</tool_response><|im_end|>\n"
        "<|im_start|>assistant\n";
    ck_assert_str_eq(t.text, want);
    check_segments(&t);

    char *s = origin_text(&t, TPL_SYSTEM);
    ck_assert_str_eq(s, "You fix bugs.");
    free(s);
    s = origin_text(&t, TPL_USER);
    ck_assert_str_eq(s, "Leap years are wrong.");
    free(s);
    s = origin_text(&t, TPL_ASSISTANT);
    char want_a[512];
    snprintf(want_a, sizeof want_a, "%s<|im_end|>", gen);
    ck_assert_str_eq(s, want_a);
    free(s);
    s = origin_text(&t, TPL_TOOL);
    ck_assert_str_eq(s, "a.c: lines 1-1 of 1\n1| int x;\nerror: no such file");
    free(s);
    s = origin_text(&t, TPL_TOOLS);
    ck_assert(strncmp(s, "\n\n# Tools\n", 10) == 0);
    free(s);

    size_t bytes[TPL_NORIGINS], sum = 0;
    tpl_origin_bytes(&t, bytes);
    for (int i = 0; i < TPL_NORIGINS; i++)
        sum += bytes[i];
    ck_assert_uint_eq(sum, t.len);
    ck_assert_uint_eq(bytes[TPL_ASSISTANT], strlen(want_a));

    /* deterministic: a second render is byte-identical */
    tpl_text t2;
    ck_assert_int_eq(tpl_render(&t2, NULL, ONE, 1, c->msgs, c->n, err), 0);
    ck_assert_uint_eq(t2.len, t.len);
    ck_assert(memcmp(t2.text, t.text, t.len) == 0);
    ck_assert_uint_eq(t2.nsegs, t.nsegs);
    tpl_text_dispose(&t2);
    tpl_text_dispose(&t);
    chat_free(c);
}
END_TEST

/* A three-turn episode; ctx[k] is the context of turn k, gens[k] what the
 * policy wrote. */
static const char *GENS[] = {
    "<think>\nStart with the tests.\n</think>\n\n<tool_call>\n<function=run_tests>\n</function>\n"
    "</tool_call>",
    "<think>\nThe 1900 case fails.\n</think>\n\nFixing.\n<tool_call>\n<function=edit_file>\n"
    "<parameter=path>\nleap.c\n</parameter>\n<parameter=old_string>\nreturn y % 4 == 0;\n"
    "</parameter>\n<parameter=new_string>\nreturn y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);\n"
    "</parameter>\n</function>\n</tool_call>",
    "<think>\nGreen.\n</think>\n\n<tool_call>\n<function=submit>\n</function>\n</tool_call>",
};

static chat *episode(tpl_text *ctx, const tpl_opts *o, const char *const *gens, size_t turns)
{
    size_t ns;
    const tc_spec *specs = tool_specs(&ns);
    char err[RL_ERR_MAX];
    chat *c;
    ck_assert_int_eq(chat_new(&c, NULL), 0);
    chat_add_system(c, "You fix bugs.", err);
    chat_add_user(c, "is_leap(1900) returns 1.", err);
    for (size_t k = 0; k < turns; k++) {
        ck_assert_int_eq(tpl_render(&ctx[k], o, specs, ns, c->msgs, c->n, err), 0);
        check_segments(&ctx[k]);
        add_gen(c, gens[k]);
        const chat_msg *m = &c->msgs[c->n - 1];
        for (size_t i = 0; i < m->ncalls; i++)
            chat_add_tool(c, m->calls[i].id, m->calls[i].name, "ok", err);
    }
    return c;
}

START_TEST(test_keep_prefix_invariant)
{
    tpl_opts o;
    tpl_opts_default(&o);
    for (int think = 0; think <= 1; think++) {
        o.think = think;
        tpl_text ctx[3];
        const char *const *gens = GENS;
        const char *nothink[3];
        if (!think) { /* the policy continues after the empty think block */
            for (int k = 0; k < 3; k++)
                nothink[k] = strstr(GENS[k], "</think>\n\n") + 10;
            gens = nothink;
        }
        chat *c = episode(ctx, &o, gens, 3);
        char err[RL_ERR_MAX];
        for (int k = 0; k < 2; k++) {
            ck_assert_msg(tpl_check_prefix(ctx[k].text, ctx[k].len, gens[k], strlen(gens[k]),
                                           ctx[k + 1].text, ctx[k + 1].len, err) == 0,
                          "think=%d turn %d: %s", think, k, err);
            ck_assert_int_eq(ctx[k].segs[ctx[k].nsegs - 1].origin, TPL_TEMPLATE);
        }
        ck_assert_int_eq(tpl_check_contexts(ctx, 3, err), 0);
        const char *tail = think ? "<|im_start|>assistant\n"
                                 : "<|im_start|>assistant\n<think>\n\n</think>\n\n";
        ck_assert_str_eq(ctx[2].text + ctx[2].len - strlen(tail), tail);
        /* a full render of the episode without generation prompt ends with
         * the last generated text and its end marker */
        tpl_opts full = o;
        full.gen_prompt = 0;
        tpl_text all;
        size_t ns;
        const tc_spec *specs = tool_specs(&ns);
        ck_assert_int_eq(tpl_render(&all, &full, specs, ns, c->msgs, tpl_turn_start(c, 2) + 1,
                                    err), 0);
        ck_assert_int_eq(tpl_check_prefix(ctx[2].text, ctx[2].len, gens[2], strlen(gens[2]),
                                          all.text, all.len, err), 0);
        ck_assert_uint_eq(all.len, ctx[2].len + strlen(gens[2]) + strlen("<|im_end|>\n"));
        tpl_text_dispose(&all);
        for (int k = 0; k < 3; k++)
            tpl_text_dispose(&ctx[k]);
        chat_free(c);
    }
}
END_TEST

START_TEST(test_prefix_check_detects)
{
    char err[RL_ERR_MAX];
    ck_assert_int_eq(tpl_check_prefix("abc", 3, "de", 2, "abcdef", 6, err), 0);
    ck_assert_int_eq(tpl_check_prefix("abc", 3, "dx", 2, "abcdef", 6, err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "byte 1"));
    ck_assert_int_eq(tpl_check_prefix("abX", 3, NULL, 0, "abcdef", 6, err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "byte 2"));
    ck_assert_int_eq(tpl_check_prefix("abc", 3, "defg", 4, "abcdef", 6, err), RL_EINVAL);
}
END_TEST

START_TEST(test_drop_history)
{
    tpl_opts o;
    tpl_opts_default(&o);
    o.keep_history = 0;
    tpl_text ctx[3];
    chat *c = episode(ctx, &o, GENS, 3);
    char err[RL_ERR_MAX];
    /* earlier thinking is gone from later contexts ... */
    ck_assert_ptr_null(strstr(ctx[2].text, "Start with the tests."));
    ck_assert_ptr_null(strstr(ctx[2].text, "The 1900 case fails."));
    ck_assert_ptr_null(strstr(ctx[2].text, "<think>"));
    /* ... the rest of what the policy wrote stays */
    ck_assert_ptr_nonnull(strstr(ctx[2].text, "<|im_start|>assistant\nFixing.\n<tool_call>"));
    ck_assert_ptr_nonnull(strstr(ctx[2].text, "<|im_start|>assistant\n<tool_call>\n"
                                              "<function=run_tests>"));
    /* so context + generated text is no longer a prefix of the next
     * context; the contexts themselves still extend each other, since every
     * earlier turn is stripped the same way in all of them */
    ck_assert_int_eq(tpl_check_prefix(ctx[0].text, ctx[0].len, GENS[0], strlen(GENS[0]),
                                      ctx[1].text, ctx[1].len, err), RL_EINVAL);
    ck_assert_int_eq(tpl_check_contexts(ctx, 3, err), 0);
    const char *body0 = strstr(GENS[0], "<tool_call>");
    ck_assert_int_eq(tpl_check_prefix(ctx[0].text, ctx[0].len, body0, strlen(body0),
                                      ctx[1].text, ctx[1].len, err), 0);
    /* the context of turn k is what rendering the first messages gives */
    size_t ns;
    const tc_spec *specs = tool_specs(&ns);
    tpl_text again;
    ck_assert_uint_eq(tpl_turn_start(c, 1), 4);
    ck_assert_int_eq(tpl_render(&again, &o, specs, ns, c->msgs, tpl_turn_start(c, 1), err), 0);
    ck_assert_str_eq(again.text, ctx[1].text);
    tpl_text_dispose(&again);
    ck_assert_uint_eq(tpl_turn_start(c, 3), c->n);
    for (int k = 0; k < 3; k++)
        tpl_text_dispose(&ctx[k]);
    chat_free(c);
}
END_TEST

START_TEST(test_truncated_end_marker)
{
    chat *c;
    ck_assert_int_eq(chat_new(&c, NULL), 0);
    char err[RL_ERR_MAX];
    chat_add_user(c, "q", err);
    ck_assert_int_eq(chat_add_generated(c, "<think>\nlong", 12, NULL, 1, err), 0);
    tpl_text t;
    ck_assert_int_eq(tpl_render(&t, NULL, NULL, 0, c->msgs, c->n, err), 0);
    ck_assert_str_eq(t.text, "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n<think>\n"
                             "long<|im_end|>\n<|im_start|>assistant\n");
    char *a = origin_text(&t, TPL_ASSISTANT);
    ck_assert_str_eq(a, "<think>\nlong"); /* the policy did not write <|im_end|> */
    free(a);
    tpl_text_dispose(&t);
    chat_free(c);
}
END_TEST

START_TEST(test_canonical_round_trip)
{
    size_t ns;
    const tc_spec *specs = tool_specs(&ns);
    char err[RL_ERR_MAX];
    chat_call calls[3] = {
        {"call_0", "edit_file",
         "{\"path\":\"a.c\",\"old_string\":\"  x < 1 && y\\n\",\"new_string\":\"\\n  x <= 1\"}"},
        {"call_1", "write_file", "{\"path\":\"p.txt\",\"content\":\"a </parameter>\\nb\"}"},
        {"call_2", "read_file", "{\"path\":\"a.c\",\"start_line\":2}"},
    };
    for (int think = 0; think <= 1; think++) {
        chat *c;
        ck_assert_int_eq(chat_new(&c, NULL), 0);
        ck_assert_int_eq(chat_add_assistant(c, think ? "plan" : NULL, "Edit then write.", calls,
                                            3, err), 0);
        size_t n;
        char *text = tpl_assistant_text(&c->msgs[0], think, &n);
        ck_assert_uint_eq(strlen(text), n);
        ck_assert_int_eq(strncmp(text, "<think>\nplan\n</think>\n\n", 23) == 0, think);
        /* the value holding </parameter> forces the JSON style for that call */
        ck_assert_ptr_nonnull(strstr(text, "<tool_call>\n{\"name\":\"write_file\""));
        ck_assert_ptr_nonnull(strstr(text, "<function=edit_file>"));
        tc_parsed p;
        ck_assert_int_eq(tc_parse(&p, text, n, specs, ns, NULL, err), 0);
        ck_assert_str_eq(p.content, "Edit then write.");
        if (think)
            ck_assert_str_eq(p.think, "plan");
        else
            ck_assert_ptr_null(p.think);
        ck_assert_uint_eq(p.ncalls, 3);
        for (int i = 0; i < 3; i++) {
            char *j = tc_args_json(&p.calls[i]);
            ck_assert_str_eq(j, calls[i].arguments);
            ck_assert_str_eq(p.calls[i].name, calls[i].name);
            free(j);
        }
        tc_parsed_dispose(&p);
        free(text);
        chat_free(c);
    }
}
END_TEST

START_TEST(test_json_round_trip)
{
    char err[RL_ERR_MAX];
    tpl_text ctx[3];
    tpl_opts o;
    tpl_opts_default(&o);
    chat *c = episode(ctx, &o, GENS, 3);
    cJSON *j;
    ck_assert_int_eq(chat_to_json(&j, c, err), 0);
    char *s1 = cJSON_PrintUnformatted(j);
    /* OpenAI form: arguments is a JSON string, type is "function" */
    const cJSON *m2 = cJSON_GetArrayItem(j, 2);
    ck_assert_str_eq(cJSON_GetObjectItem(m2, "role")->valuestring, "assistant");
    ck_assert_str_eq(cJSON_GetObjectItem(m2, "reasoning_content")->valuestring,
                     "Start with the tests.");
    const cJSON *tc = cJSON_GetArrayItem(cJSON_GetObjectItem(m2, "tool_calls"), 0);
    ck_assert_str_eq(cJSON_GetObjectItem(tc, "type")->valuestring, "function");
    ck_assert(cJSON_IsString(cJSON_GetObjectItem(cJSON_GetObjectItem(tc, "function"),
                                                 "arguments")));
    const cJSON *m3 = cJSON_GetArrayItem(j, 3);
    ck_assert_str_eq(cJSON_GetObjectItem(m3, "tool_call_id")->valuestring, "call_0");
    chat *back;
    ck_assert_int_eq(chat_from_json(&back, j, err), 0);
    cJSON *j2;
    ck_assert_int_eq(chat_to_json(&j2, back, err), 0);
    char *s2 = cJSON_PrintUnformatted(j2);
    ck_assert_str_eq(s1, s2);
    /* and the reloaded chat renders the same context */
    size_t ns;
    const tc_spec *specs = tool_specs(&ns);
    tpl_text t;
    ck_assert_int_eq(tpl_render(&t, &o, specs, ns, back->msgs, tpl_turn_start(back, 2), err), 0);
    ck_assert_str_eq(t.text, ctx[2].text);
    tpl_text_dispose(&t);
    free(s1);
    free(s2);
    cJSON_Delete(j);
    cJSON_Delete(j2);
    chat_free(back);
    chat_free(c);
    for (int k = 0; k < 3; k++)
        tpl_text_dispose(&ctx[k]);

    /* imported OpenAI messages: null content, object arguments, unknown keys */
    cJSON *in = cJSON_Parse("[{\"role\":\"user\",\"content\":\"hi\",\"refusal\":null},"
                            "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":"
                            "\"c1\",\"type\":\"function\",\"function\":{\"name\":\"submit\","
                            "\"arguments\":{}}}]}]");
    ck_assert_int_eq(chat_from_json(&back, in, err), 0);
    ck_assert_str_eq(back->msgs[1].content, "");
    ck_assert_str_eq(back->msgs[1].calls[0].arguments, "{}");
    chat_free(back);
    cJSON_Delete(in);
    in = cJSON_Parse("[{\"role\":\"robot\",\"content\":\"x\"}]");
    ck_assert_int_eq(chat_from_json(&back, in, err), RL_EPARSE);
    ck_assert_ptr_nonnull(strstr(err, "message 0"));
    cJSON_Delete(in);
}
END_TEST

START_TEST(test_generated_message_fields)
{
    chat *c;
    ck_assert_int_eq(chat_new(&c, NULL), 0);
    add_gen(c, GENS[1]);
    const chat_msg *m = &c->msgs[0];
    ck_assert_str_eq(m->reasoning, "The 1900 case fails.");
    ck_assert_str_eq(m->content, "Fixing.");
    ck_assert_uint_eq(m->ncalls, 1);
    ck_assert_str_eq(m->calls[0].name, "edit_file");
    ck_assert_ptr_nonnull(strstr(m->calls[0].arguments, "\"old_string\":\"return y % 4 == 0;\""));
    ck_assert_str_eq(m->raw, GENS[1]);
    /* a format error keeps the raw text and records no call */
    char err[RL_ERR_MAX];
    size_t ns;
    const tc_spec *specs = tool_specs(&ns);
    tc_parsed p;
    const char *bad = "<tool_call>\n<function=nope>\n</function>\n</tool_call>";
    ck_assert_int_eq(tc_parse(&p, bad, strlen(bad), specs, ns, NULL, err), RL_EPARSE);
    ck_assert_int_eq(chat_add_generated(c, bad, strlen(bad), &p, 0, err), 0);
    ck_assert_uint_eq(c->msgs[1].ncalls, 0);
    ck_assert_str_eq(c->msgs[1].raw, bad);
    ck_assert_int_eq(chat_add_tool(c, NULL, NULL, p.error, err), 0);
    tc_parsed_dispose(&p);
    tpl_text t;
    ck_assert_int_eq(tpl_render(&t, NULL, NULL, 0, c->msgs, c->n, err), 0);
    ck_assert_ptr_nonnull(strstr(t.text, "<tool_response>\nunknown function \"nope\""));
    tpl_text_dispose(&t);
    chat_free(c);
}
END_TEST

START_TEST(test_render_errors_and_prompts)
{
    chat *c;
    ck_assert_int_eq(chat_new(&c, NULL), 0);
    char err[RL_ERR_MAX];
    chat_add_user(c, "q", err);
    chat_add_system(c, "late", err);
    tpl_text t;
    ck_assert_int_eq(tpl_render(&t, NULL, NULL, 0, c->msgs, c->n, err), RL_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "message 1"));
    chat_free(c);

    char *p;
    for (int v = 1; v <= 2; v++) {
        char name[8];
        snprintf(name, sizeof name, "v%d", v);
        ck_assert_int_eq(tpl_load_prompt(&p, "prompts", name, err), 0);
        ck_assert_ptr_nonnull(strstr(p, "submit"));
        ck_assert(p[strlen(p) - 1] != '\n');
        free(p);
    }
    ck_assert_int_eq(tpl_load_prompt(&p, "prompts", "../etc/passwd", err), RL_EINVAL);
    ck_assert_int_eq(tpl_load_prompt(&p, "prompts", "v999", err), RL_ENOENT);
}
END_TEST

START_TEST(test_message_cap)
{
    chat *c;
    char err[RL_ERR_MAX];
    ck_assert_int_eq(chat_new(&c, err), 0);
    for (size_t i = 0; i < RL_CHAT_MSGS_MAX; i++)
        ck_assert_int_eq(chat_add_user(c, "q", err), 0);
    ck_assert_int_eq(chat_add_tool(c, "call_0", "run_tests", "out", err), RL_ELIMIT);
    ck_assert_ptr_nonnull(strstr(err, "chat: more than 16384 messages"));
    ck_assert_uint_eq(c->n, RL_CHAT_MSGS_MAX);
    chat_free(c);

    /* the same cap on a chat read from JSON (a request to grpo serve) */
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i <= RL_CHAT_MSGS_MAX; i++) {
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "role", "user");
        cJSON_AddStringToObject(m, "content", "q");
        cJSON_AddItemToArray(a, m);
    }
    ck_assert_int_eq(chat_from_json(&c, a, err), RL_ELIMIT);
    ck_assert_ptr_null(c);
    ck_assert_ptr_nonnull(strstr(err, "more than 16384 messages"));
    cJSON_DeleteItemFromArray(a, 0);
    ck_assert_int_eq(chat_from_json(&c, a, err), 0);
    ck_assert_uint_eq(c->n, RL_CHAT_MSGS_MAX);
    chat_free(c);
    cJSON_Delete(a);
}
END_TEST

Suite *chat_suite(void)
{
    Suite *s = suite_create("chat");
    TCase *t = tcase_create("template");
    tcase_add_test(t, test_render_exact);
    tcase_add_test(t, test_keep_prefix_invariant);
    tcase_add_test(t, test_prefix_check_detects);
    tcase_add_test(t, test_drop_history);
    tcase_add_test(t, test_truncated_end_marker);
    tcase_add_test(t, test_canonical_round_trip);
    tcase_add_test(t, test_json_round_trip);
    tcase_add_test(t, test_generated_message_fields);
    tcase_add_test(t, test_render_errors_and_prompts);
    tcase_add_test(t, test_message_cap);
    suite_add_tcase(s, t);
    return s;
}
