/* cmd_tokenize.c - `grpo tokenize` and `grpo detokenize`: text to token ids
 * and back with any tokenizer file tok_load reads (the built-in one or a
 * Hugging Face tokenizer.json).
 *
 * tokenize prints the ids of the whole input as one JSON array; with
 * --jsonl every input line is a JSON string and every output line the
 * array of its ids. detokenize reads a JSON array of ids and writes the
 * bytes they stand for; with --jsonl one array per line in, one JSON string
 * per line out.
 */
#include "grpo/cli.h"

#include "common/buf.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "protocol/tokenizer.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct targs {
    const char *tokenizer, *file;
    int plain, jsonl;
} targs;

static void usage(FILE *f, int detok)
{
    if (detok)
        fprintf(f,
                "usage: grpo detokenize --tokenizer FILE [--file F] [--jsonl]\n"
                "Reads a JSON array of token ids (from F, or standard input) and writes the\n"
                "text they decode to. --jsonl: one array per line in, one JSON string per line\n"
                "out. FILE is a built-in tokenizer or a Hugging Face tokenizer.json.\n");
    else
        fprintf(f,
                "usage: grpo tokenize --tokenizer FILE [--file F] [--plain] [--jsonl]\n"
                "Prints the token ids of the text of F (or standard input) as one JSON array.\n"
                "FILE is a built-in tokenizer or a Hugging Face tokenizer.json (Qwen2/Qwen3,\n"
                "Llama 3, GPT-2 byte-level BPE). Special and added tokens in the text become\n"
                "their ids unless --plain (untrusted text: encoded as ordinary text).\n"
                "--jsonl: every input line is a JSON string; prints one array per line.\n");
}

/* 0 ok, 1 help, 2 usage error (message printed). */
static int parse(targs *a, int argc, char **argv, const char *cmd, int detok)
{
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "-h") || !strcmp(s, "--help"))
            return 1;
        if ((!strcmp(s, "--tokenizer") || !strcmp(s, "--file")) && i + 1 < argc) {
            *(s[2] == 't' ? &a->tokenizer : &a->file) = argv[++i];
        } else if (!detok && !strcmp(s, "--plain")) {
            a->plain = 1;
        } else if (!strcmp(s, "--jsonl")) {
            a->jsonl = 1;
        } else {
            fprintf(stderr, "%s: unknown argument '%s' (or missing value); see --help\n", cmd, s);
            return 2;
        }
    }
    if (!a->tokenizer) {
        fprintf(stderr, "%s: --tokenizer FILE is required\n", cmd);
        return 2;
    }
    return 0;
}

/* The whole input: a regular file through fs_read_file (a FIFO or device
 * named by --file is refused, not waited on), else standard input. */
static int read_input(char **out, size_t *len, const char *path, char *err)
{
    if (path)
        return fs_read_file(out, len, path, RL_TOK_TEXT_MAX, err);
    buf_t b;
    buf_init(&b, RL_TOK_TEXT_MAX);
    char chunk[65536];
    size_t n;
    int rc = 0;
    while (!rc && (n = fread(chunk, 1, sizeof chunk, stdin)) > 0)
        rc = buf_append(&b, chunk, n);
    if (rc || ferror(stdin)) {
        buf_dispose(&b);
        return rc ? rl_err(err, rc, "standard input: more than %zu bytes", (size_t)RL_TOK_TEXT_MAX)
                  : rl_err(err, RL_EIO, "standard input: read error");
    }
    *out = buf_detach(&b, len);
    return 0;
}

static void print_ids(const int32_t *ids, size_t n)
{
    putchar('[');
    for (size_t i = 0; i < n; i++)
        printf(i ? ",%d" : "%d", ids[i]);
    fputs("]\n", stdout);
}

static int encode_one(const tok_t *t, const char *s, size_t n, const targs *a, char *err)
{
    int32_t *ids;
    size_t k;
    int rc = tok_encode(&ids, &k, t, s, n, a->plain ? TOK_SPECIAL_PLAIN : TOK_SPECIAL_ALLOW, err);
    if (!rc)
        print_ids(ids, k);
    free(ids);
    return rc;
}

/* Parses one JSON line (a string for tokenize, an id array for detokenize). */
static cJSON *json_line(const char *line, size_t n, size_t lineno, int want_string, const char *name,
                        char *err)
{
    cJSON *j = cJSON_ParseWithLength(line, n);
    if (!j || (want_string ? !cJSON_IsString(j) : !cJSON_IsArray(j))) {
        cJSON_Delete(j);
        rl_err(err, RL_EPARSE, "%s line %zu: expected %s", name, lineno,
               want_string ? "a JSON string" : "a JSON array of token ids");
        return NULL;
    }
    return j;
}

static int decode_array(const tok_t *t, const cJSON *arr, int as_json, const char *what, char *err)
{
    size_t n = (size_t)cJSON_GetArraySize(arr), i = 0;
    int32_t *ids = malloc((n + 1) * sizeof *ids);
    if (!ids)
        return rl_err(err, RL_ENOMEM, "%s: out of memory", what);
    for (const cJSON *e = arr->child; e; e = e->next, i++) {
        if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble >= tok_vocab_size(t) ||
            e->valuedouble != (double)(int32_t)e->valuedouble) {
            free(ids);
            return rl_err(err, RL_EINVAL, "%s: element %zu: expected a token id in 0..%d", what,
                          i, tok_vocab_size(t) - 1);
        }
        ids[i] = (int32_t)e->valuedouble;
    }
    char *text;
    size_t len;
    int rc = tok_decode(&text, &len, t, ids, n, err);
    free(ids);
    if (rc)
        return rc;
    if (as_json) {
        cJSON *s = cJSON_CreateString(text);
        char *p = s ? cJSON_PrintUnformatted(s) : NULL;
        if (p)
            puts(p);
        else
            rc = rl_err(err, RL_ENOMEM, "%s: out of memory", what);
        free(p);
        cJSON_Delete(s);
    } else {
        fwrite(text, 1, len, stdout);
    }
    free(text);
    return rc;
}

static int run(const targs *a, int detok, char *err)
{
    tok_t *t;
    int rc = tok_load(&t, a->tokenizer, err);
    if (rc)
        return rc;
    char *in = NULL;
    size_t len = 0;
    rc = read_input(&in, &len, a->file, err);
    const char *name = a->file ? a->file : "standard input";
    if (!rc && !a->jsonl && !detok) {
        rc = encode_one(t, in, len, a, err);
    } else if (!rc && !a->jsonl) {
        cJSON *arr = json_line(in, len, 1, 0, name, err);
        rc = arr ? decode_array(t, arr, 0, name, err) : RL_EPARSE;
        cJSON_Delete(arr);
    } else if (!rc) {
        size_t lineno = 0;
        for (char *p = in; !rc && p < in + len;) {
            char *nl = memchr(p, '\n', (size_t)(in + len - p));
            size_t n = nl ? (size_t)(nl - p) : (size_t)(in + len - p);
            lineno++;
            if (n) {
                cJSON *j = json_line(p, n, lineno, !detok, name, err);
                if (!j)
                    rc = RL_EPARSE;
                else if (detok)
                    rc = decode_array(t, j, 1, name, err);
                else
                    rc = encode_one(t, j->valuestring, strlen(j->valuestring), a, err);
                cJSON_Delete(j);
            }
            p += n + 1;
        }
    }
    free(in);
    tok_free(t);
    if (!rc && fflush(stdout))
        rc = rl_err(err, RL_EIO, "standard output: write error");
    return rc;
}

static int main_common(int argc, char **argv, int detok)
{
    const char *cmd = detok ? "grpo detokenize" : "grpo tokenize";
    targs a = {0};
    int code = parse(&a, argc, argv, cmd, detok);
    if (code == 1) {
        usage(stdout, detok);
        return 0;
    }
    if (code)
        return code;
    char err[RL_ERR_MAX] = "";
    if (run(&a, detok, err)) {
        fprintf(stderr, "%s: %s\n", cmd, err);
        return 1;
    }
    return 0;
}

int cmd_tokenize(int argc, char **argv) { return main_common(argc, argv, 0); }
int cmd_detokenize(int argc, char **argv) { return main_common(argc, argv, 1); }
