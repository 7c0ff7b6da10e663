/* cmd_show.c - `harness show FILE [--index K] [--transcript [--full]]`: a
 * recorded trajectory, turn by turn, with token accounting by origin, and
 * on request the transcript itself: what the policy wrote, exactly (the
 * raw reply, malformed calls included), and what the tools answered. */
#include "harness/cli.h"

#include "common/buf.h"
#include "common/arg.h"
#include "common/err.h"
#include "common/fsutil.h"
#include "common/limits.h"
#include "common/vec.h"
#include "harness/cliopt.h"
#include "harness/record.h"
#include "protocol/tokenizer.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long count(const tok_t *tok, const char *s, size_t n, tpl_origin origin)
{
    if (!tok)
        return (long)((n + 3) / 4);
    tok_mode m = origin == TPL_TEMPLATE || origin == TPL_ASSISTANT ? TOK_SPECIAL_ALLOW : TOK_SPECIAL_PLAIN;
    long c = tok_count(tok, s, n, m, NULL);
    return c < 0 ? 0 : c;
}

/* Prints one line; control bytes (escape sequences from agent-written
 * code's output, say) become '?', so a record cannot drive the terminal. */
static void print_line(const char *p, size_t len)
{
    fputs("    ", stdout);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)p[i];
        putchar((c < 0x20 && c != '\t') || c == 0x7f ? '?' : c);
    }
    putchar('\n');
}

/* Prints `text` indented, at most `max_lines` lines (0: all), then how
 * many were left out. */
static void print_block(const char *text, long max_lines)
{
    long shown = 0, total = 0;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (!max_lines || shown < max_lines) {
            print_line(p, len);
            shown++;
        }
        total++;
        p += len + (nl ? 1 : 0);
    }
    if (total > shown)
        printf("    [... %ld more lines; --full shows all]\n", total - shown);
}

/* The messages of the record: system and tool text capped unless `full`;
 * assistant turns as the raw reply when recorded, else reasoning, content
 * and parsed calls. */
static void print_transcript(const cJSON *rec, int full, int color)
{
    const char *b = color ? "\033[1m" : "", *e = color ? "\033[0m" : "";
    printf("\ntranscript\n");
    const cJSON *m;
    int turn = 0;
    cJSON_ArrayForEach(m, cJSON_GetObjectItem(rec, "messages"))
    {
        const char *role = cJSON_GetStringValue(cJSON_GetObjectItem(m, "role")) ?: "?";
        const char *content = cJSON_GetStringValue(cJSON_GetObjectItem(m, "content")) ?: "";
        if (!strcmp(role, "assistant")) {
            printf("%s[assistant, turn %d]%s\n", b, turn++, e);
            const char *raw = cJSON_GetStringValue(cJSON_GetObjectItem(m, "raw"));
            if (raw) {
                print_block(raw, 0);
                continue;
            }
            const char *think = cJSON_GetStringValue(cJSON_GetObjectItem(m, "reasoning_content"));
            if (think && *think) {
                printf("    <think>\n");
                print_block(think, 0);
            }
            if (*content)
                print_block(content, 0);
            const cJSON *c;
            cJSON_ArrayForEach(c, cJSON_GetObjectItem(m, "tool_calls"))
            {
                const cJSON *fn = cJSON_GetObjectItem(c, "function");
                char name[128]; /* a tool name; the arguments go whole, below it */
                int k = snprintf(name, sizeof name, "call %s",
                                 cJSON_GetStringValue(cJSON_GetObjectItem(fn, "name")) ?: "?");
                print_line(name, k < (int)sizeof name ? (size_t)k : sizeof name - 1);
                print_block(cJSON_GetStringValue(cJSON_GetObjectItem(fn, "arguments")) ?: "", 0);
            }
        } else if (!strcmp(role, "tool")) {
            printf("%s[tool %s]%s\n", b, cJSON_GetStringValue(cJSON_GetObjectItem(m, "name")) ?: "?", e);
            print_block(content, full ? 0 : RL_SHOW_TOOL_LINES);
        } else {
            printf("%s[%s]%s\n", b, role, e);
            print_block(content, full || strcmp(role, "system") ? 0 : RL_SHOW_TOOL_LINES);
        }
    }
    const char *patch = cJSON_GetStringValue(cJSON_GetObjectItem(rec, "patch"));
    if (patch && *patch) {
        printf("%s[the work tree's diff at the end]%s\n", b, e);
        print_block(patch, 0);
    }
}

static void usage(FILE *f)
{
    fprintf(f, "usage: harness show FILE [--index K] [--tokenizer FILE] [--transcript [--full]]\n"
               "Renders record K (default 0) of a trajectory JSONL file, with tokens per turn:\n"
               "context, policy-written, tool responses, system + tool descriptions.\n"
               "--transcript then prints the messages: the policy's raw replies in full, tool\n"
               "responses and the system prompt cut to %d lines each; --full (implies\n"
               "--transcript) prints them whole.\n",
            RL_SHOW_TOOL_LINES);
}

int cmd_show(int argc, char **argv)
{
    const char *file = NULL, *tok_path = NULL;
    long index = 0;
    int transcript = 0, full = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--index") && i + 1 < argc) {
            if (arg_long(&index, "--index", argv[++i], 0, 100000000, NULL) < 0) {
                fprintf(stderr, "harness show: --index: expected a record number >= 0, got '%s'\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--tokenizer") && i + 1 < argc) {
            tok_path = argv[++i];
        } else if (!strcmp(argv[i], "--transcript")) {
            transcript = 1;
        } else if (!strcmp(argv[i], "--full")) {
            full = transcript = 1;
        } else if (argv[i][0] == '-' || file) {
            fprintf(stderr, "harness show: unexpected argument '%s' (see --help)\n", argv[i]);
            return 2;
        } else {
            file = argv[i];
        }
    }
    if (!file) {
        usage(stderr);
        return 2;
    }
    char err[RL_ERR_MAX], *data;
    if (fs_read_file(&data, NULL, file, RL_REPLAY_FILE_MAX, err) < 0) {
        fprintf(stderr, "harness show: %s\n", err);
        return 1;
    }
    char *save = NULL, *line = strtok_r(data, "\n", &save);
    long nrec = 0;
    for (; line && nrec < index; nrec++)
        line = strtok_r(NULL, "\n", &save);
    if (!line) {
        if (nrec == 0)
            fprintf(stderr, "harness show: %s: no records (expected a trajectory JSONL file)\n", file);
        else
            fprintf(stderr, "harness show: %s: --index %ld is past the end: %ld record%s (0-%ld)\n", file,
                    index, nrec, nrec == 1 ? "" : "s", nrec - 1);
        free(data);
        return 1;
    }
    cJSON *rec = cJSON_Parse(line);
    free(data);
    const cJSON *turns = cJSON_GetObjectItem(rec, "turns");
    if (!cJSON_IsArray(turns)) {
        fprintf(stderr, "harness show: %s: record %ld: expected a trajectory record with \"turns\"\n", file, index);
        cJSON_Delete(rec);
        return 1;
    }
    tok_t *tok = NULL;
    if (cli_load_tokenizer(&tok, tok_path, tok_path != NULL, err) < 0) {
        fprintf(stderr, "harness show: --tokenizer: %s\n", err);
        cJSON_Delete(rec);
        return 1;
    }
    char where[600];
    snprintf(where, sizeof where, "%.400s: record %ld", file, index);
    rec_walk w;
    if (rec_walk_init(&w, rec, where, tok ? tok_vocab_size(tok) : 0, err) < 0) {
        fprintf(stderr, "harness show: %s\n", err);
        cJSON_Delete(rec);
        tok_free(tok);
        return 1;
    }
    int color = isatty(1);
    const cJSON *cfg = cJSON_GetObjectItem(rec, "config");
    buf_t out; /* the table, printed once the whole record has been read */
    buf_init(&out, 0);
    buf_printf(&out, "%s%s%s  policy %s, prompt %s, think %s, history %s, seed %g\n", color ? "\033[1m" : "",
               cJSON_GetStringValue(cJSON_GetObjectItem(rec, "task")) ?: "?", color ? "\033[0m" : "",
               cJSON_GetStringValue(cJSON_GetObjectItem(cfg, "policy")) ?: "?",
               cJSON_GetStringValue(cJSON_GetObjectItem(cfg, "prompt")) ?: "?",
               cJSON_GetStringValue(cJSON_GetObjectItem(cfg, "think")) ?: "?",
               cJSON_GetStringValue(cJSON_GetObjectItem(cfg, "history")) ?: "?",
               cJSON_GetNumberValue(cJSON_GetObjectItem(cfg, "seed")));
    buf_printf(&out, "tokens counted with %s\n\n", tok ? "the BPE tokenizer" : "bytes/4 (no tokenizer file found)");
    buf_printf(&out, "%4s %9s %8s %8s %12s %6s %9s  %s\n", "turn", "context", "policy", "tool", "system+tools", "user",
               "template", "calls");
    long last[TPL_NORIGINS] = {0}, gen_total = 0, last_gen = 0;
    long *segc = NULL; /* tokens of each segment of the current turn: a
                          segment shared with the previous turn is not
                          counted again */
    size_t segc_cap = 0;
    int rc;
    while ((rc = rec_walk_next(&w, err)) == 1) {
        const cJSON *t = w.json;
        if ((rc = VEC_GROW(segc, segc_cap, w.nsegs, RL_REC_SEGS_MAX)) < 0) {
            if (rc == RL_ELIMIT)
                rl_err(err, rc, "%s: turn %zu: context of more than %u segments", where, w.turn, RL_REC_SEGS_MAX);
            else
                rl_err(err, rc, "%s: out of memory", where);
            break;
        }
        long by[TPL_NORIGINS] = {0}, total = 0;
        for (size_t i = 0; i < w.nsegs; i++) {
            const rec_seg *sg = &w.segs[i];
            if (i >= w.segs_same)
                segc[i] = count(tok, w.context + sg->off, sg->len, sg->origin);
            by[sg->origin] += segc[i];
            total += segc[i];
        }
        const char *g = w.generated;
        long gt = w.has_ids ? (long)w.n_ids : count(tok, g, w.generated_len, TPL_ASSISTANT);
        gen_total += gt;
        buf_t calls;
        buf_init(&calls, 4096);
        const cJSON *c;
        cJSON_ArrayForEach(c, cJSON_GetObjectItem(t, "tool_calls"))
            buf_printf(&calls, "%s%s%s ", cJSON_GetStringValue(cJSON_GetObjectItem(c, "name")) ?: "?",
                       cJSON_IsTrue(cJSON_GetObjectItem(c, "ok")) ? "" : "(error)",
                       cJSON_IsTrue(cJSON_GetObjectItem(c, "identical_to_previous")) ? "(repeat)" : "");
        if (cJSON_IsString(cJSON_GetObjectItem(t, "format_error")))
            buf_puts(&calls, "FORMAT ERROR");
        buf_printf(&out, "%4zu %9ld %8ld %8ld %12ld %6ld %9ld  %s\n", w.turn, total, gt, by[TPL_TOOL],
                   by[TPL_SYSTEM] + by[TPL_TOOLS], by[TPL_USER], by[TPL_TEMPLATE], buf_str(&calls));
        buf_dispose(&calls);
        memcpy(last, by, sizeof last);
        last_gen = gt;
    }
    free(segc);
    rec_walk_dispose(&w);
    if (rc < 0) {
        fprintf(stderr, "harness show: %s\n", err);
        buf_dispose(&out);
        cJSON_Delete(rec);
        tok_free(tok);
        return 1;
    }
    fputs(buf_str(&out), stdout);
    buf_dispose(&out);
    /* The whole trajectory: the last context plus the last reply. The
     * policy's share counts every assistant turn in it. */
    long all = last_gen;
    for (int o = 0; o < TPL_NORIGINS; o++)
        all += last[o];
    printf("\ntrajectory: %ld tokens; the policy wrote %ld (%ld in the final context + %ld in the last reply),\n"
           "tool responses %ld, system prompt + tool descriptions %ld, user %ld, template markup %ld\n",
           all, last[TPL_ASSISTANT] + last_gen, last[TPL_ASSISTANT], last_gen, last[TPL_TOOL],
           last[TPL_SYSTEM] + last[TPL_TOOLS], last[TPL_USER], last[TPL_TEMPLATE]);
    const cJSON *reward = cJSON_GetObjectItem(rec, "reward");
    char rs[32] = "?";
    if (cJSON_IsNumber(reward))
        snprintf(rs, sizeof rs, "%g", reward->valuedouble);
    printf("sampled over all turns: %ld policy tokens; reward %s (%s)\n", gen_total, rs,
           cJSON_GetStringValue(cJSON_GetObjectItem(rec, "end_reason")) ?: "?");
    if (transcript)
        print_transcript(rec, full, color);
    cJSON_Delete(rec);
    tok_free(tok);
    return 0;
}
