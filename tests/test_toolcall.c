/* test_toolcall.c - the tool-call parser: well-formed calls in both styles,
 * and one test per malformed-output case. */
#include "common/err.h"
#include "common/limits.h"
#include "protocol/toolcall.h"
#include "harness/tools.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse(tc_parsed *p, const char *text)
{
    size_t n;
    const tc_spec *specs = tool_specs(&n);
    char err[RL_ERR_MAX] = "";
    int rc = tc_parse(p, text, strlen(text), specs, n, NULL, err);
    if (rc)
        ck_assert_str_eq(err, p->error);
    return rc;
}

/* A malformed message: RL_EPARSE, the flag, no call, and a one-line
 * observation containing each of the given fragments. */
static void expect_error(const char *text, const char *frag1, const char *frag2)
{
    tc_parsed p;
    ck_assert_int_eq(parse(&p, text), RL_EPARSE);
    ck_assert_int_eq(p.format_error, 1);
    ck_assert_uint_eq(p.ncalls, 0);
    ck_assert_ptr_null(strchr(p.error, '\n'));
    ck_assert_msg(strstr(p.error, frag1), "error \"%s\" lacks \"%s\"", p.error, frag1);
    if (frag2)
        ck_assert_msg(strstr(p.error, frag2), "error \"%s\" lacks \"%s\"", p.error, frag2);
    tc_parsed_dispose(&p);
}

static const char *arg(const tc_parsed *p, size_t i, const char *name)
{
    const char *s = tc_arg_str(&p->calls[i], name);
    ck_assert_msg(s != NULL, "call %zu has no string %s", i, name);
    return s;
}

/* ---- well-formed -------------------------------------------------------- */

START_TEST(test_xml_call)
{
    tc_parsed p;
    const char *t = "<think>\nThe test fails on 1900.\n</think>\n\nLet me read it.\n\n"
                    "<tool_call>\n<function=read_file>\n<parameter=path>\nsrc/leap.c\n"
                    "</parameter>\n<parameter=start_line>\n3\n</parameter>\n</function>\n"
                    "</tool_call>";
    ck_assert_int_eq(parse(&p, t), 0);
    ck_assert_str_eq(p.think, "The test fails on 1900.");
    ck_assert_str_eq(p.content, "Let me read it.");
    ck_assert_uint_eq(p.ncalls, 1);
    ck_assert_str_eq(p.calls[0].name, "read_file");
    ck_assert_str_eq(p.calls[0].id, "call_0");
    ck_assert_str_eq(arg(&p, 0, "path"), "src/leap.c");
    long long v = 0;
    ck_assert_int_eq(tc_arg_int(&p.calls[0], "start_line", &v), 1);
    ck_assert_int_eq(v, 3);
    ck_assert_int_eq(tc_arg_int(&p.calls[0], "end_line", &v), 0);
    char *j = tc_args_json(&p.calls[0]);
    ck_assert_str_eq(j, "{\"path\":\"src/leap.c\",\"start_line\":3}");
    free(j);
    tc_parsed_dispose(&p);
}
END_TEST

START_TEST(test_json_call)
{
    tc_parsed p;
    ck_assert_int_eq(parse(&p, "<tool_call>\n{\"name\": \"search\", \"arguments\": "
                               "{\"pattern\": \"is_leap(\", \"path\": \"src\"}}\n</tool_call>"),
                     0);
    ck_assert_ptr_null(p.think);
    ck_assert_str_eq(p.content, "");
    ck_assert_uint_eq(p.ncalls, 1);
    ck_assert_int_eq(p.calls[0].json_style, 1);
    ck_assert_str_eq(arg(&p, 0, "pattern"), "is_leap(");
    ck_assert_str_eq(arg(&p, 0, "path"), "src");
    tc_parsed_dispose(&p);

    /* OpenAI style: arguments as a JSON string */
    ck_assert_int_eq(parse(&p, "<tool_call>{\"name\":\"read_file\",\"arguments\":"
                               "\"{\\\"path\\\":\\\"a.c\\\"}\"}</tool_call>"),
                     0);
    ck_assert_str_eq(arg(&p, 0, "path"), "a.c");
    tc_parsed_dispose(&p);
}
END_TEST

START_TEST(test_multiple_calls)
{
    tc_parsed p;
    size_t n;
    const tc_spec *specs = tool_specs(&n);
    tc_opts o;
    tc_opts_default(&o);
    o.first_id = 7;
    const char *t = "Two reads.\n<tool_call>\n<function=read_file>\n<parameter=path>\na.c\n"
                    "</parameter>\n</function>\n</tool_call>\n<tool_call>\n{\"name\": "
                    "\"run_tests\", \"arguments\": {\"tests\": [\"test_a\", \"test_b\"]}}\n"
                    "</tool_call>\n<tool_call>\n<function=submit>\n</function>\n</tool_call>\n";
    ck_assert_int_eq(tc_parse(&p, t, strlen(t), specs, n, &o, NULL), 0);
    ck_assert_uint_eq(p.ncalls, 3);
    ck_assert_str_eq(p.calls[0].id, "call_7");
    ck_assert_str_eq(p.calls[2].id, "call_9");
    ck_assert_str_eq(p.calls[1].name, "run_tests");
    const cJSON *a = cJSON_GetObjectItem(p.calls[1].args, "tests");
    ck_assert_int_eq(cJSON_GetArraySize(a), 2);
    ck_assert_str_eq(cJSON_GetArrayItem(a, 1)->valuestring, "test_b");
    ck_assert_str_eq(p.calls[2].name, "submit");
    ck_assert_int_eq(cJSON_GetArraySize(p.calls[2].args), 0);
    tc_parsed_dispose(&p);
}
END_TEST

START_TEST(test_xml_array_param)
{
    tc_parsed p;
    ck_assert_int_eq(parse(&p, "<tool_call>\n<function=run_tests>\n<parameter=tests>\n"
                               "[\"test_leap_1900\"]\n</parameter>\n</function>\n</tool_call>"),
                     0);
    const cJSON *a = cJSON_GetObjectItem(p.calls[0].args, "tests");
    ck_assert(cJSON_IsArray(a));
    ck_assert_str_eq(cJSON_GetArrayItem(a, 0)->valuestring, "test_leap_1900");
    tc_parsed_dispose(&p);
}
END_TEST

START_TEST(test_value_newlines)
{
    tc_parsed p;
    /* one newline after the opening tag and one before the closing tag are
     * layout; every other newline and all indentation belong to the value */
    const char *t = "<tool_call>\n<function=edit_file>\n<parameter=path>\nsrc/leap.c\n"
                    "</parameter>\n<parameter=old_string>\n    if (y % 4 == 0)\n"
                    "        return 1;\n</parameter>\n<parameter=new_string>\n\n"
                    "    if (y % 400 == 0)\n        return 1;\n\n</parameter>\n</function>\n"
                    "</tool_call>";
    ck_assert_int_eq(parse(&p, t), 0);
    ck_assert_str_eq(arg(&p, 0, "old_string"), "    if (y % 4 == 0)\n        return 1;");
    ck_assert_str_eq(arg(&p, 0, "new_string"), "\n    if (y % 400 == 0)\n        return 1;\n");
    tc_parsed_dispose(&p);

    /* a value on the tag's own line */
    ck_assert_int_eq(parse(&p, "<tool_call><function=read_file><parameter=path>a.c</parameter>"
                               "</function></tool_call>"),
                     0);
    ck_assert_str_eq(arg(&p, 0, "path"), "a.c");
    tc_parsed_dispose(&p);

    /* an empty value */
    ck_assert_int_eq(parse(&p, "<tool_call>\n<function=write_file>\n<parameter=path>\ne.txt\n"
                               "</parameter>\n<parameter=content>\n</parameter>\n</function>\n"
                               "</tool_call>"),
                     0);
    ck_assert_str_eq(arg(&p, 0, "content"), "");
    tc_parsed_dispose(&p);
}
END_TEST

START_TEST(test_value_code_chars)
{
    tc_parsed p;
    const char *code = "#include <stdio.h>\nint f(int a, int *b) { return a < 3 && b ? *b : "
                       "a > 1; }\n// &amp; <b>bold</b> <tool_response>";
    char t[1024];
    snprintf(t, sizeof t, "<tool_call>\n<function=write_file>\n<parameter=path>\nf.c\n"
                          "</parameter>\n<parameter=content>\n%s\n</parameter>\n</function>\n"
                          "</tool_call>", code);
    ck_assert_int_eq(parse(&p, t), 0);
    ck_assert_str_eq(arg(&p, 0, "content"), code); /* no entity decoding, no escaping */
    tc_parsed_dispose(&p);
}
END_TEST

START_TEST(test_value_closing_tag_text)
{
    tc_parsed p;
    /* "</parameter>" inside a value ends it only when a tag follows it */
    const char *code = "puts(\"</parameter>\");\n</parameter> is how it ends\n</parameter>x";
    char t[1024];
    snprintf(t, sizeof t, "<tool_call>\n<function=write_file>\n<parameter=content>\n%s\n"
                          "</parameter>\n<parameter=path>\nt.c\n</parameter>\n</function>\n"
                          "</tool_call>", code);
    ck_assert_int_eq(parse(&p, t), 0);
    ck_assert_str_eq(arg(&p, 0, "content"), code);
    ck_assert_str_eq(arg(&p, 0, "path"), "t.c");
    tc_parsed_dispose(&p);

    /* the documented limit: "</parameter>" then "<parameter=" inside a value
     * ends the value there, so the rest parses as a (here unknown) parameter */
    expect_error("<tool_call>\n<function=write_file>\n<parameter=path>\nt.c\n</parameter>\n"
                 "<parameter=content>\na </parameter> <parameter=zzz>\n</parameter>\n"
                 "</function>\n</tool_call>",
                 "unknown parameter \"zzz\"", "write_file");

    /* the JSON style carries any text */
    ck_assert_int_eq(parse(&p, "<tool_call>\n{\"name\":\"write_file\",\"arguments\":{\"path\":"
                               "\"t.c\",\"content\":\"a </parameter>\\n<parameter=x>\\n"
                               "</tool_call>\"}}\n</tool_call>"),
                     0);
    ck_assert_str_eq(arg(&p, 0, "content"), "a </parameter>\n<parameter=x>\n</tool_call>");
    tc_parsed_dispose(&p);
}
END_TEST

START_TEST(test_no_call)
{
    tc_parsed p;
    ck_assert_int_eq(parse(&p, "<think>\ndone\n</think>\n\nThe fix is in place.\n"), 0);
    ck_assert_str_eq(p.think, "done");
    ck_assert_str_eq(p.content, "The fix is in place.");
    ck_assert_uint_eq(p.ncalls, 0);
    ck_assert_int_eq(p.format_error, 0);
    tc_parsed_dispose(&p);
    ck_assert_int_eq(parse(&p, ""), 0);
    ck_assert_str_eq(p.content, "");
    tc_parsed_dispose(&p);
}
END_TEST

START_TEST(test_call_init)
{
    size_t n;
    const tc_spec *specs = tool_specs(&n);
    tc_call c;
    char err[RL_ERR_MAX];
    ck_assert_int_eq(tc_call_init(&c, "call_3", "read_file", "{\"path\":\"a.c\",\"end_line\":9}",
                                  specs, n, err), 0);
    ck_assert_str_eq(c.id, "call_3");
    ck_assert_str_eq(tc_arg_str(&c, "path"), "a.c");
    tc_call_dispose(&c);
    ck_assert_int_eq(tc_call_init(&c, "x", "submit", NULL, specs, n, err), 0);
    tc_call_dispose(&c);
    ck_assert_int_eq(tc_call_init(&c, "x", "read_file", "{\"path\": 3}", specs, n, err),
                     RL_EPARSE);
    ck_assert_ptr_nonnull(strstr(err, "expected string"));
    ck_assert_int_eq(tc_call_init(&c, "x", "rm_rf", "{}", specs, n, err), RL_EPARSE);
    ck_assert_ptr_nonnull(strstr(err, "unknown function"));
}
END_TEST

/* ---- malformed: one test per case --------------------------------------- */

START_TEST(test_err_unclosed_think)
{
    expect_error("<think>\nhmm, the year 1900", "unclosed <think>", "</think>");
}
END_TEST

START_TEST(test_err_unclosed_tool_call)
{
    expect_error("<tool_call>\n<function=read_file>\n<parameter=path>\na.c\n</parameter>\n"
                 "</function>\n", "unclosed <tool_call>", "</tool_call>");
    expect_error("<tool_call>\n", "unclosed <tool_call>", NULL);
}
END_TEST

START_TEST(test_err_unclosed_function)
{
    expect_error("<tool_call>\n<function=read_file>\n<parameter=path>\na.c\n</parameter>\n"
                 "</tool_call>", "unclosed <function=read_file>", "</function>");
}
END_TEST

START_TEST(test_err_unclosed_parameter)
{
    expect_error("<tool_call>\n<function=read_file>\n<parameter=path>\na.c\n",
                 "unclosed <parameter=path>", "</parameter>");
}
END_TEST

START_TEST(test_err_unknown_function)
{
    expect_error("<tool_call>\n<function=delete_file>\n<parameter=path>\na.c\n</parameter>\n"
                 "</function>\n</tool_call>", "unknown function \"delete_file\"", "read_file");
    expect_error("<tool_call>\n{\"name\": \"shell\", \"arguments\": {}}\n</tool_call>",
                 "unknown function \"shell\"", "expected one of");
}
END_TEST

START_TEST(test_err_missing_parameter)
{
    expect_error("<tool_call>\n<function=edit_file>\n<parameter=path>\na.c\n</parameter>\n"
                 "<parameter=old_string>\nx\n</parameter>\n</function>\n</tool_call>",
                 "missing required parameter new_string", "edit_file");
    expect_error("<tool_call>\n{\"name\": \"read_file\", \"arguments\": {}}\n</tool_call>",
                 "missing required parameter path", NULL);
}
END_TEST

START_TEST(test_err_extra_parameter)
{
    expect_error("<tool_call>\n<function=read_file>\n<parameter=path>\na.c\n</parameter>\n"
                 "<parameter=encoding>\nutf-8\n</parameter>\n</function>\n</tool_call>",
                 "unknown parameter \"encoding\" for read_file", "path, start_line, end_line");
    expect_error("<tool_call>\n{\"name\": \"submit\", \"arguments\": {\"now\": \"yes\"}}\n"
                 "</tool_call>", "unknown parameter \"now\" for submit", "none");
}
END_TEST

START_TEST(test_err_duplicate_parameter)
{
    expect_error("<tool_call>\n<function=read_file>\n<parameter=path>\na.c\n</parameter>\n"
                 "<parameter=path>\nb.c\n</parameter>\n</function>\n</tool_call>",
                 "parameter path given twice", "read_file");
    expect_error("<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.c\", "
                 "\"path\": \"b.c\"}}\n</tool_call>", "parameter path given twice", NULL);
}
END_TEST

START_TEST(test_err_bad_json)
{
    expect_error("<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": a.c}}\n"
                 "</tool_call>", "bad JSON", "expected {\"name\"");
    expect_error("<tool_call>\n{\"name\": \"read_file\", \"arguments\": \"{path\"}\n"
                 "</tool_call>", "bad JSON in the arguments string", NULL);
    expect_error("<tool_call>\n[\"read_file\"]\n</tool_call>", "unexpected text", "JSON object");
    expect_error("<tool_call>\n{\"name\": \"read_file\", \"args\": {}}\n</tool_call>",
                 "unexpected key \"args\"", NULL);
}
END_TEST

START_TEST(test_err_wrong_type)
{
    expect_error("<tool_call>\n<function=read_file>\n<parameter=path>\na.c\n</parameter>\n"
                 "<parameter=start_line>\nten\n</parameter>\n</function>\n</tool_call>",
                 "start_line of read_file: expected an integer", "ten");
    expect_error("<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.c\", "
                 "\"end_line\": \"12\"}}\n</tool_call>", "end_line of read_file", "integer");
    expect_error("<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.c\", "
                 "\"end_line\": 1.5}}\n</tool_call>", "expected integer", NULL);
    expect_error("<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": [\"a.c\"]}}\n"
                 "</tool_call>", "path of read_file: expected string", NULL);
    expect_error("<tool_call>\n<function=run_tests>\n<parameter=tests>\ntest_a\n</parameter>\n"
                 "</function>\n</tool_call>", "expected a JSON array of strings", NULL);
    expect_error("<tool_call>\n{\"name\": \"run_tests\", \"arguments\": {\"tests\": [1, 2]}}\n"
                 "</tool_call>", "expected an array of strings", NULL);
}
END_TEST

START_TEST(test_err_text_after_call)
{
    expect_error("<tool_call>\n<function=submit>\n</function>\n</tool_call>\nI have submitted.",
                 "text after </tool_call>", "I have submitted.");
    /* a hallucinated tool response is text after the call too */
    expect_error("<tool_call>\n<function=submit>\n</function>\n</tool_call>\n<tool_response>\nok",
                 "text after </tool_call>", NULL);
    /* whitespace after the last call is fine */
    tc_parsed p;
    ck_assert_int_eq(parse(&p, "<tool_call>\n<function=submit>\n</function>\n</tool_call>\n\n  "),
                     0);
    tc_parsed_dispose(&p);
}
END_TEST

START_TEST(test_err_too_many_calls)
{
    char t[4096] = "";
    for (int i = 0; i <= RL_TC_CALLS_MAX; i++)
        strcat(t, "<tool_call>\n<function=list_files>\n</function>\n</tool_call>\n");
    char want[64];
    snprintf(want, sizeof want, "at most %d per message", RL_TC_CALLS_MAX);
    expect_error(t, "more than", want);
    /* exactly the cap is fine */
    t[strlen(t) - strlen("<tool_call>\n<function=list_files>\n</function>\n</tool_call>\n")] = 0;
    tc_parsed p;
    ck_assert_int_eq(parse(&p, t), 0);
    ck_assert_uint_eq(p.ncalls, RL_TC_CALLS_MAX);
    tc_parsed_dispose(&p);
}
END_TEST

START_TEST(test_err_stray_and_misplaced_tags)
{
    expect_error("Done.\n</tool_call>", "stray </tool_call>", NULL);
    expect_error("<function=submit>\n</function>", "outside a tool call", "<tool_call>");
    expect_error("<tool_call>\n<function read_file>\n</function>\n</tool_call>",
                 "unexpected text", "<function=NAME>");
    expect_error("<tool_call>\n<function=read file>\n</function>\n</tool_call>",
                 "malformed <function=...> tag", NULL);
    expect_error("<tool_call>\n<function=read_file>\npath: a.c\n</function>\n</tool_call>",
                 "unexpected text \"path: a.c", "<parameter=NAME>");
    expect_error("<tool_call>\n<function=submit>\n</function>\nextra\n</tool_call>",
                 "after the call to submit", "expected </tool_call>");
    expect_error("<tool_call>\n<function=read_file>\n<parameter=path>\na.c\n</parameter>\njunk\n"
                 "</function>\n</tool_call>", "unexpected text after </parameter>", NULL);
}
END_TEST

START_TEST(test_err_turn_markers_and_bytes)
{
    expect_error("ok<|im_end|>\n<|im_start|>user\nhi", "turn marker", "<|im_");
    const char t[] = "a\0b";
    tc_parsed p;
    size_t n;
    const tc_spec *specs = tool_specs(&n);
    ck_assert_int_eq(tc_parse(&p, t, 3, specs, n, NULL, NULL), RL_EPARSE);
    ck_assert_ptr_nonnull(strstr(p.error, "NUL"));
    tc_parsed_dispose(&p);
    size_t big = RL_TC_TEXT_MAX + 1;
    char *b = malloc(big);
    memset(b, 'x', big);
    ck_assert_int_eq(tc_parse(&p, b, big, specs, n, NULL, NULL), RL_EPARSE);
    ck_assert_ptr_nonnull(strstr(p.error, "at most"));
    tc_parsed_dispose(&p);
    free(b);
}
END_TEST

START_TEST(test_err_quote_is_short)
{
    /* the observation quotes at most RL_TC_QUOTE_MAX bytes of the offending text */
    char t[2048] = "<tool_call>\n<function=submit>\n</function>\n</tool_call>\n";
    for (int i = 0; i < 100; i++)
        strcat(t, "blah ");
    tc_parsed p;
    ck_assert_int_eq(parse(&p, t), RL_EPARSE);
    ck_assert_uint_lt(strlen(p.error), 200);
    ck_assert_ptr_nonnull(strstr(p.error, "..."));
    tc_parsed_dispose(&p);
}
END_TEST

Suite *toolcall_suite(void)
{
    Suite *s = suite_create("toolcall");
    TCase *t = tcase_create("wellformed");
    tcase_add_test(t, test_xml_call);
    tcase_add_test(t, test_json_call);
    tcase_add_test(t, test_multiple_calls);
    tcase_add_test(t, test_xml_array_param);
    tcase_add_test(t, test_value_newlines);
    tcase_add_test(t, test_value_code_chars);
    tcase_add_test(t, test_value_closing_tag_text);
    tcase_add_test(t, test_no_call);
    tcase_add_test(t, test_call_init);
    suite_add_tcase(s, t);
    t = tcase_create("malformed");
    tcase_add_test(t, test_err_unclosed_think);
    tcase_add_test(t, test_err_unclosed_tool_call);
    tcase_add_test(t, test_err_unclosed_function);
    tcase_add_test(t, test_err_unclosed_parameter);
    tcase_add_test(t, test_err_unknown_function);
    tcase_add_test(t, test_err_missing_parameter);
    tcase_add_test(t, test_err_extra_parameter);
    tcase_add_test(t, test_err_duplicate_parameter);
    tcase_add_test(t, test_err_bad_json);
    tcase_add_test(t, test_err_wrong_type);
    tcase_add_test(t, test_err_text_after_call);
    tcase_add_test(t, test_err_too_many_calls);
    tcase_add_test(t, test_err_stray_and_misplaced_tags);
    tcase_add_test(t, test_err_turn_markers_and_bytes);
    tcase_add_test(t, test_err_quote_is_short);
    suite_add_tcase(s, t);
    return s;
}
