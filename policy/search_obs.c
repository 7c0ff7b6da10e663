/* search_obs.c - the search policy's readers of what it sees: the context
 * (system prompt, last tool responses) and the observations of run_tests,
 * read_file and search (formats in harness/tools.c, harness/testrun.c and
 * docs/chat-format.md). Each reader is bounded and tolerant: text it does
 * not recognise is skipped, never trusted. */
#include "policy/search.h"

#include "common/limits.h"
#include "common/vec.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- context ------------------------------------------------------------- */

static const char *find_last(const char *hay, size_t len, const char *needle)
{
    size_t nl = strlen(needle);
    const char *last = NULL, *p = hay, *end = hay + len;
    while (p < end && (p = memmem(p, (size_t)(end - p), needle, nl))) {
        last = p;
        p += 1;
    }
    return last;
}

size_t search_last_responses(char ***out, const char *ctx, size_t len)
{
    *out = NULL;
    static const char OPEN[] = "\n<tool_response>\n", CLOSE[] = "\n</tool_response>";
    const char *gen = find_last(ctx, len, "<|im_start|>assistant\n");
    if (!gen)
        return 0;
    const char *user = find_last(ctx, (size_t)(gen - ctx), "<|im_start|>user");
    if (!user)
        return 0;
    const char *p = user + strlen("<|im_start|>user");
    const char *end = find_last(p, (size_t)(gen - p), "<|im_end|>");
    if (!end)
        return 0;
    size_t n = 0, cap = 0;
    char **v = NULL;
    while (n < RL_SEARCH_FAILS_MAX && (size_t)(end - p) >= sizeof OPEN - 1 &&
           !memcmp(p, OPEN, sizeof OPEN - 1)) {
        const char *c = p + sizeof OPEN - 1, *q = c, *stop = NULL;
        /* The block ends at a close tag followed by the next open tag or by
         * the end of the turn: a file that quotes the tag stays whole. */
        while (q < end && (q = memmem(q, (size_t)(end - q), CLOSE, sizeof CLOSE - 1))) {
            const char *after = q + sizeof CLOSE - 1;
            if (after == end || ((size_t)(end - after) >= sizeof OPEN - 1 &&
                                 !memcmp(after, OPEN, sizeof OPEN - 1))) {
                stop = q;
                break;
            }
            q++;
        }
        if (!stop)
            break;
        if (VEC_GROW(v, cap, n + 1, RL_SEARCH_FAILS_MAX) < 0)
            break; /* out of memory: the loop stays below the cap */
        size_t bl = (size_t)(stop - c);
        if (bl > RL_SEARCH_OBS_MAX)
            bl = RL_SEARCH_OBS_MAX;
        if (!(v[n] = strndup(c, bl)))
            break;
        n++;
        p = stop + sizeof CLOSE - 1;
    }
    *out = v;
    return n;
}

char *search_system_prompt(const char *ctx, size_t len)
{
    static const char TAG[] = "<|im_start|>system\n";
    if (len < sizeof TAG - 1 || memcmp(ctx, TAG, sizeof TAG - 1))
        return strdup("");
    const char *p = ctx + sizeof TAG - 1, *end = ctx + len;
    const char *e = memmem(p, (size_t)(end - p), "<|im_end|>", 10);
    if (!e)
        e = end;
    const char *tools = memmem(p, (size_t)(e - p), "# Tools", 7);
    if (tools)
        e = tools;
    return strndup(p, (size_t)(e - p));
}

int search_prompt_wants_verify(const char *prompt)
{
    size_t n = strlen(prompt);
    if (n > RL_SEARCH_OBS_MAX)
        n = RL_SEARCH_OBS_MAX;
    char *low = malloc(n + 1);
    if (!low)
        return 0;
    for (size_t i = 0; i < n; i++)
        low[i] = (char)tolower((unsigned char)prompt[i]);
    low[n] = 0;
    /* The three parts of the working method, in any wording we know. */
    int first = strstr(low, "tests first") || strstr(low, "run the tests before") ||
                strstr(low, "first run the tests") || strstr(low, "start by running the tests");
    int again = strstr(low, "tests again") || strstr(low, "re-run") || strstr(low, "rerun") ||
                strstr(low, "after each edit") || strstr(low, "after every edit");
    int gate = strstr(low, "only when the tests pass") || strstr(low, "only once the tests pass") ||
               strstr(low, "only after the tests pass") || strstr(low, "until the tests pass") ||
               strstr(low, "submit only when");
    free(low);
    return first && again && gate;
}

/* ---- run_tests ------------------------------------------------------------ */

void search_result_dispose(search_result *r)
{
    for (size_t i = 0; i < r->nfail; i++) {
        free(r->fail[i].name);
        free(r->fail[i].msg);
    }
    free(r->fail);
    memset(r, 0, sizeof *r);
}

int search_result_has(const search_result *r, const char *name)
{
    for (size_t i = 0; i < r->nfail; i++)
        if (!strcmp(r->fail[i].name, name))
            return 1;
    return 0;
}

/* The observation budget's marker, "[... N bytes (L lines) cut ...]"
 * (harness/tools.c). A test message cut by the summary says "[... N bytes
 * cut ...]" without the line count: that one is part of the message. */
static int is_cut_marker(const char *l, size_t n)
{
    return n >= 5 && !memcmp(l, "[... ", 5) && memmem(l, n, " lines) cut ...]", 16);
}

/* "fail NAME: msg" (also error / missing): returns the name length and
 * sets *msg, or 0 when the line is not a failing-test line. */
static size_t fail_line(const char *l, size_t n, const char **name, const char **msg)
{
    static const char *const STATUS[] = {"fail ", "error ", "missing "};
    for (size_t k = 0; k < 3; k++) {
        size_t sl = strlen(STATUS[k]);
        if (n <= sl || memcmp(l, STATUS[k], sl))
            continue;
        const char *p = l + sl, *e = l + n;
        const char *q = p;
        while (q < e && !isspace((unsigned char)*q) && !(*q == ':' && (q + 1 == e || q[1] == ' ')))
            q++;
        if (q == p || q >= e || *q != ':' || (size_t)(q - p) > RL_TASK_TEST_ID_MAX)
            return 0;
        if (!(isalpha((unsigned char)*p) || *p == '_'))
            return 0;
        *name = p;
        *msg = q + 1 < e ? q + 2 : e;
        return (size_t)(q - p);
    }
    return 0;
}

/* Appends a line to f's message, cut at RL_SEARCH_MSG_MAX bytes; the
 * message stays as it was when memory runs out. */
static void msg_append(search_fail *f, const char *s, size_t n)
{
    size_t have = f->msg ? strlen(f->msg) : 0;
    if (have >= RL_SEARCH_MSG_MAX)
        return;
    if (n > RL_SEARCH_MSG_MAX - have)
        n = RL_SEARCH_MSG_MAX - have;
    if (VEC_GROW(f->msg, f->msg_alloc, have + n + 2, RL_SEARCH_MSG_MAX + 2) < 0)
        return;
    char *m = f->msg;
    if (have)
        m[have++] = '\n';
    memcpy(m + have, s, n);
    m[have + n] = 0;
}

void search_parse_tests(search_result *out, const char *obs)
{
    memset(out, 0, sizeof *out);
    size_t total = strnlen(obs, RL_SEARCH_OBS_MAX);
    const char *p = obs, *end = obs + total;
    int in_list = 0, stopped = 0, build_out = 0;
    size_t cap = 0;
    search_fail *cur = NULL;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        const char *l = p;
        p = nl ? nl + 1 : end;
        if (is_cut_marker(l, n)) {
            out->cut = 1;
            cur = NULL;
            continue;
        }
        if (!out->parsed) {
            long a, b;
            int used = 0;
            char tmp[96];
            size_t k = n < sizeof tmp - 1 ? n : sizeof tmp - 1;
            memcpy(tmp, l, k);
            tmp[k] = 0;
            if (!strncmp(tmp, "test command", 12))
                stopped = 1;
            if (sscanf(tmp, "%ld passed, %ld failed%n", &a, &b, &used) == 2 && used > 0 && a >= 0 &&
                b >= 0) {
                out->parsed = 1;
                out->passed = a;
                out->failed = b;
                in_list = 1;
            }
            continue;
        }
        if (!in_list)
            continue;
        if (n >= 12 && !memcmp(l, "exit status ", 12)) {
            build_out = 1;
            in_list = 0;
            continue;
        }
        const char *name, *msg;
        size_t nlen = fail_line(l, n, &name, &msg);
        if (nlen && out->nfail < RL_SEARCH_FAILS_MAX) {
            if (VEC_GROW(out->fail, cap, out->nfail + 1, RL_SEARCH_FAILS_MAX) < 0)
                break; /* out of memory: the test above keeps below the cap */
            cur = &out->fail[out->nfail];
            memset(cur, 0, sizeof *cur);
            if (!(cur->name = strndup(name, nlen)))
                break;
            out->nfail++;
            msg_append(cur, msg, (size_t)(l + n - msg));
        } else if (n >= 8 && !memcmp(l, "not run ", 8)) {
            cur = NULL;
        } else if (cur) {
            msg_append(cur, l, n);
        }
    }
    out->ran = out->parsed && out->passed + out->failed > 0 && !stopped &&
               !(build_out && out->passed == 0);
    if (out->parsed && (size_t)out->failed > out->nfail)
        out->cut = 1;
}

/* ---- read_file ------------------------------------------------------------ */

void search_file_dispose(search_file *f)
{
    if (!f)
        return;
    for (size_t i = 0; f->line && i < f->n; i++)
        free(f->line[i]);
    free(f->line);
    free(f->path);
    memset(f, 0, sizeof *f);
}

int search_file_complete(const search_file *f)
{
    if (!f->line)
        return 0;
    for (size_t i = 0; i < f->n; i++)
        if (!f->line[i])
            return 0;
    return 1;
}

int search_file_gap(const search_file *f, size_t *from, size_t *to)
{
    *from = *to = 0;
    if (!f->line)
        return f->n ? (*from = 1, *to = f->n, 1) : 0;
    for (size_t i = 0; i < f->n; i++) {
        if (f->line[i])
            continue;
        if (!*from)
            *from = i + 1;
        *to = i + 1;
    }
    return *from != 0;
}

char *search_file_text(const search_file *f, size_t *len)
{
    if (!search_file_complete(f) && f->n)
        return NULL;
    size_t total = 1;
    for (size_t i = 0; i < f->n; i++)
        total += strlen(f->line[i]) + 1;
    char *t = malloc(total);
    if (!t)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < f->n; i++) {
        size_t k = strlen(f->line[i]);
        memcpy(t + o, f->line[i], k);
        o += k;
        t[o++] = '\n';
    }
    t[o] = 0;
    if (len)
        *len = o;
    return t;
}

static int file_resize(search_file *f, size_t n)
{
    if (n > RL_SEARCH_FILE_LINES_MAX)
        return -1;
    if (f->line && f->n == n)
        return 0;
    char **nl = calloc(n ? n : 1, sizeof *nl);
    if (!nl)
        return -1;
    for (size_t i = 0; f->line && i < f->n && i < n; i++) {
        nl[i] = f->line[i];
        f->line[i] = NULL;
    }
    for (size_t i = 0; f->line && i < f->n; i++)
        free(f->line[i]);
    free(f->line);
    f->line = nl;
    f->n = n;
    return 0;
}

int search_file_set_text(search_file *f, const char *text, size_t len)
{
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    if (len && text[len - 1] != '\n')
        lines++;
    for (size_t i = 0; f->line && i < f->n; i++) {
        free(f->line[i]);
        f->line[i] = NULL;
    }
    if (file_resize(f, lines) < 0)
        return -1;
    const char *p = text, *end = text + len;
    for (size_t i = 0; i < lines; i++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t k = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (!(f->line[i] = strndup(p, k)))
            return -1;
        p = nl ? nl + 1 : end;
    }
    return 0;
}

/* "  12| text": returns the line number and sets *text, or 0. */
static long listing_line(const char *l, size_t n, const char **text, size_t *tlen)
{
    size_t i = 0;
    while (i < n && l[i] == ' ')
        i++;
    size_t d0 = i;
    long v = 0;
    while (i < n && isdigit((unsigned char)l[i]) && i - d0 < 9)
        v = v * 10 + (l[i++] - '0');
    if (i == d0 || i >= n || l[i] != '|')
        return 0;
    i++;
    if (i < n && l[i] == ' ')
        i++;
    *text = l + i;
    *tlen = n - i;
    return v;
}

int search_parse_read(search_file *f, const char *obs)
{
    size_t total = strnlen(obs, RL_SEARCH_OBS_MAX);
    const char *nl = memchr(obs, '\n', total);
    if (!nl)
        return -1;
    size_t hl = (size_t)(nl - obs), pl = strlen(f->path);
    if (hl <= pl + 2 || memcmp(obs, f->path, pl) || memcmp(obs + pl, ": ", 2))
        return -1;
    char head[256];
    size_t k = hl - pl - 2 < sizeof head - 1 ? hl - pl - 2 : sizeof head - 1;
    memcpy(head, obs + pl + 2, k);
    head[k] = 0;
    long a, b, n;
    if (!strcmp(head, "empty file")) {
        return file_resize(f, 0);
    } else if (sscanf(head, "lines %ld-%ld of the first %ld lines", &a, &b, &n) == 3 ||
               sscanf(head, "lines %ld-%ld of %ld", &a, &b, &n) == 3) {
        if (a < 1 || b < a || n < b || n > RL_SEARCH_FILE_LINES_MAX)
            return -1;
    } else {
        return -1;
    }
    if (file_resize(f, (size_t)n) < 0)
        return -1;
    /* Lines next to a cut marker may be partial: drop them. */
    const char *p = nl + 1, *end = obs + total;
    long prev = 0;
    int after_cut = 0;
    while (p < end) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        size_t ln = e ? (size_t)(e - p) : (size_t)(end - p);
        const char *text;
        size_t tl;
        long no = listing_line(p, ln, &text, &tl);
        if (is_cut_marker(p, ln) || !no) {
            if (prev && prev >= a && prev <= b && is_cut_marker(p, ln)) {
                free(f->line[prev - 1]);
                f->line[prev - 1] = NULL;
            }
            after_cut = is_cut_marker(p, ln);
            prev = 0;
        } else if (no >= a && no <= b && no > prev) {
            if (!after_cut && !(e == NULL && p + ln == end && total == RL_SEARCH_OBS_MAX)) {
                char *s = strndup(text, tl);
                if (s) {
                    free(f->line[no - 1]);
                    f->line[no - 1] = s;
                }
            }
            after_cut = 0;
            prev = no;
        }
        p = e ? e + 1 : end;
    }
    return 0;
}

/* ---- search ---------------------------------------------------------------- */

void search_hits_free(search_hit *h, size_t n)
{
    for (size_t i = 0; h && i < n; i++) {
        free(h[i].path);
        free(h[i].text);
    }
    free(h);
}

size_t search_parse_search(search_hit **out, const char *obs, size_t max)
{
    *out = NULL;
    size_t total = strnlen(obs, RL_SEARCH_OBS_MAX), n = 0, cap = 0;
    const char *p = obs, *end = obs + total;
    search_hit *v = NULL;
    if (max > RL_SEARCH_HITS_MAX)
        max = RL_SEARCH_HITS_MAX;
    while (p < end && n < max) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        size_t ln = e ? (size_t)(e - p) : (size_t)(end - p);
        const char *l = p;
        p = e ? e + 1 : end;
        const char *c = memchr(l, ':', ln);
        if (!c || c == l)
            continue;
        const char *q = c + 1;
        long no = 0;
        while (q < l + ln && isdigit((unsigned char)*q) && no < 100000000)
            no = no * 10 + (*q++ - '0');
        if (q == c + 1 || q + 1 >= l + ln || q[0] != ':' || q[1] != ' ' || no < 1)
            continue;
        if (VEC_GROW(v, cap, n + 1, max) < 0)
            break; /* out of memory: the loop stays below max */
        v[n].path = strndup(l, (size_t)(c - l));
        v[n].line = (int)no;
        v[n].text = strndup(q + 2, (size_t)(l + ln - q - 2));
        if (!v[n].path || !v[n].text) {
            free(v[n].path);
            free(v[n].text);
            break;
        }
        n++;
    }
    *out = v;
    return n;
}
