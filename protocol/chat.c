/* chat.c - a conversation: chat messages and their OpenAI JSON form. */
#include "protocol/chat.h"

#include "common/err.h"
#include "common/limits.h"
#include "common/vec.h"

#include <stdlib.h>
#include <string.h>

/* ---- messages ---------------------------------------------------------- */

int chat_new(chat **out, char *err)
{
    if (!(*out = calloc(1, sizeof **out)))
        return rl_err(err, RL_ENOMEM, "chat: out of memory");
    return 0;
}

static void call_clear(chat_call *c)
{
    free(c->id);
    free(c->name);
    free(c->arguments);
}

static void msg_clear(chat_msg *m)
{
    free(m->content);
    free(m->reasoning);
    for (size_t i = 0; i < m->ncalls; i++)
        call_clear(&m->calls[i]);
    free(m->calls);
    free(m->tool_call_id);
    free(m->name);
    free(m->raw);
    memset(m, 0, sizeof *m);
}

void chat_free(chat *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        msg_clear(&c->msgs[i]);
    free(c->msgs);
    free(c);
}

const char *chat_role_name(chat_role r)
{
    switch (r) {
    case CHAT_SYSTEM: return "system";
    case CHAT_USER: return "user";
    case CHAT_ASSISTANT: return "assistant";
    case CHAT_TOOL: return "tool";
    }
    return "?";
}

/* strdup that keeps NULL as NULL; *bad is set when an allocation failed. */
static char *dup_opt(const char *s, int *bad)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        *bad = 1;
    return d;
}

/* A zeroed slot at the end of c->msgs, kept by msg_commit. Returns 0, or
 * RL_ELIMIT or RL_ENOMEM with the message in err. */
static int msg_push(chat_msg **out, chat *c, char *err)
{
    int rc = VEC_GROW(c->msgs, c->cap, c->n + 1, RL_CHAT_MSGS_MAX);
    if (rc == RL_ELIMIT)
        return rl_err(err, rc, "chat: more than %d messages", RL_CHAT_MSGS_MAX);
    if (rc)
        return rl_err(err, rc, "chat: out of memory");
    *out = memset(&c->msgs[c->n], 0, sizeof **out);
    return 0;
}

/* Keeps the message pushed by msg_push, or drops it after a failure. */
static int msg_commit(chat *c, chat_msg *m, int bad, char *err)
{
    if (bad || !m->content) {
        msg_clear(m);
        return rl_err(err, RL_ENOMEM, "chat: out of memory adding a %s message",
                      chat_role_name(m->role));
    }
    c->n++;
    return 0;
}

static int add_plain(chat *c, chat_role role, const char *content, char *err)
{
    chat_msg *m;
    int rc = msg_push(&m, c, err);
    if (rc)
        return rc;
    int bad = 0;
    m->role = role;
    m->content = dup_opt(content ? content : "", &bad);
    return msg_commit(c, m, bad, err);
}

int chat_add_system(chat *c, const char *content, char *err)
{
    return add_plain(c, CHAT_SYSTEM, content, err);
}

int chat_add_user(chat *c, const char *content, char *err)
{
    return add_plain(c, CHAT_USER, content, err);
}

int chat_add_tool(chat *c, const char *call_id, const char *name, const char *content,
                  char *err)
{
    chat_msg *m;
    int rc = msg_push(&m, c, err);
    if (rc)
        return rc;
    int bad = 0;
    m->role = CHAT_TOOL;
    m->content = dup_opt(content ? content : "", &bad);
    m->tool_call_id = dup_opt(call_id, &bad);
    m->name = dup_opt(name, &bad);
    return msg_commit(c, m, bad, err);
}

static int copy_calls(chat_msg *m, const chat_call *calls, size_t n)
{
    int bad = 0;
    if (!n)
        return 0;
    if (!(m->calls = calloc(n, sizeof *m->calls)))
        return 1;
    m->ncalls = n;
    for (size_t i = 0; i < n; i++) {
        m->calls[i].id = dup_opt(calls[i].id ? calls[i].id : "", &bad);
        m->calls[i].name = dup_opt(calls[i].name ? calls[i].name : "", &bad);
        m->calls[i].arguments = dup_opt(calls[i].arguments ? calls[i].arguments : "{}", &bad);
    }
    return bad;
}

int chat_add_assistant(chat *c, const char *reasoning, const char *content,
                       const chat_call *calls, size_t ncalls, char *err)
{
    chat_msg *m;
    int rc = msg_push(&m, c, err);
    if (rc)
        return rc;
    int bad = 0;
    m->role = CHAT_ASSISTANT;
    m->content = dup_opt(content ? content : "", &bad);
    m->reasoning = dup_opt(reasoning, &bad);
    bad |= copy_calls(m, calls, ncalls);
    return msg_commit(c, m, bad, err);
}

int chat_add_generated(chat *c, const char *raw, size_t len, const tc_parsed *p, int truncated,
                       char *err)
{
    chat_msg *m;
    int rc = msg_push(&m, c, err);
    if (rc)
        return rc;
    int bad = 0;
    m->role = CHAT_ASSISTANT;
    m->truncated = truncated;
    m->content = dup_opt(p && p->content ? p->content : "", &bad);
    m->reasoning = dup_opt(p ? p->think : NULL, &bad);
    if ((m->raw = malloc(len + 1))) {
        memcpy(m->raw, raw, len);
        m->raw[len] = '\0';
        m->raw_len = len;
    } else {
        bad = 1;
    }
    if (p && p->ncalls && !bad) {
        if (!(m->calls = calloc(p->ncalls, sizeof *m->calls)))
            bad = 1;
        else
            m->ncalls = p->ncalls;
        for (size_t i = 0; i < m->ncalls; i++) {
            m->calls[i].id = dup_opt(p->calls[i].id, &bad);
            m->calls[i].name = dup_opt(p->calls[i].name, &bad);
            if (!(m->calls[i].arguments = tc_args_json(&p->calls[i])))
                bad = 1;
        }
    }
    return msg_commit(c, m, bad, err);
}

/* ---- OpenAI JSON ------------------------------------------------------- */

static cJSON *call_to_json(const chat_call *c)
{
    cJSON *o = cJSON_CreateObject(), *f = cJSON_CreateObject();
    if (!o || !f || !cJSON_AddItemToObject(o, "id", cJSON_CreateString(c->id)) ||
        !cJSON_AddItemToObject(o, "type", cJSON_CreateString("function")) ||
        !cJSON_AddItemToObject(f, "name", cJSON_CreateString(c->name)) ||
        !cJSON_AddItemToObject(f, "arguments", cJSON_CreateString(c->arguments))) {
        cJSON_Delete(o);
        cJSON_Delete(f);
        return NULL;
    }
    if (!cJSON_AddItemToObject(o, "function", f)) {
        cJSON_Delete(o);
        cJSON_Delete(f);
        return NULL;
    }
    return o;
}

int chat_msg_to_json(cJSON **out, const chat_msg *m, char *err)
{
    cJSON *o = cJSON_CreateObject();
    int ok = o && cJSON_AddStringToObject(o, "role", chat_role_name(m->role)) &&
             cJSON_AddStringToObject(o, "content", m->content);
    if (ok && m->reasoning)
        ok = cJSON_AddStringToObject(o, "reasoning_content", m->reasoning) != NULL;
    if (ok && m->ncalls) {
        cJSON *a = cJSON_AddArrayToObject(o, "tool_calls");
        ok = a != NULL;
        for (size_t i = 0; ok && i < m->ncalls; i++) {
            cJSON *c = call_to_json(&m->calls[i]);
            ok = c && cJSON_AddItemToArray(a, c);
        }
    }
    if (ok && m->role == CHAT_TOOL && m->tool_call_id)
        ok = cJSON_AddStringToObject(o, "tool_call_id", m->tool_call_id) != NULL;
    if (ok && m->role == CHAT_TOOL && m->name)
        ok = cJSON_AddStringToObject(o, "name", m->name) != NULL;
    if (ok && m->raw)
        ok = cJSON_AddStringToObject(o, "raw", m->raw) != NULL;
    if (ok && m->truncated)
        ok = cJSON_AddTrueToObject(o, "truncated") != NULL;
    if (!ok) {
        cJSON_Delete(o);
        *out = NULL;
        return rl_err(err, RL_ENOMEM, "chat: out of memory writing JSON");
    }
    *out = o;
    return 0;
}

int chat_to_json(cJSON **out, const chat *c, char *err)
{
    cJSON *a = cJSON_CreateArray();
    if (!a)
        return rl_err(err, RL_ENOMEM, "chat: out of memory writing JSON");
    for (size_t i = 0; i < c->n; i++) {
        cJSON *m;
        int rc = chat_msg_to_json(&m, &c->msgs[i], err);
        if (rc || !cJSON_AddItemToArray(a, m)) {
            cJSON_Delete(a);
            return rc ? rc : rl_err(err, RL_ENOMEM, "chat: out of memory writing JSON");
        }
    }
    *out = a;
    return 0;
}

/* A string member, NULL when absent or null; *bad when of another type. */
static const char *opt_str(const cJSON *o, const char *key, int *bad)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v || cJSON_IsNull(v))
        return NULL;
    if (!cJSON_IsString(v)) {
        *bad = 1;
        return NULL;
    }
    return v->valuestring;
}

static int call_from_json(chat_call *c, const cJSON *j, size_t mi, size_t ci, char *err)
{
    int bad = 0, oom = 0;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(j, "function");
    const char *id = opt_str(j, "id", &bad), *name = opt_str(f, "name", &bad);
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(f, "arguments");
    if (!cJSON_IsObject(j) || !cJSON_IsObject(f) || !name || bad)
        return rl_err(err, RL_EPARSE, "message %zu, tool_calls[%zu]: expected {\"id\": string, "
                      "\"function\": {\"name\": string, \"arguments\": string}}", mi, ci);
    c->id = dup_opt(id ? id : "", &oom);
    c->name = dup_opt(name, &oom);
    if (cJSON_IsString(args))
        c->arguments = dup_opt(args->valuestring, &oom);
    else if (cJSON_IsObject(args))
        oom |= !(c->arguments = cJSON_PrintUnformatted(args));
    else if (!args || cJSON_IsNull(args))
        c->arguments = dup_opt("{}", &oom);
    else
        return rl_err(err, RL_EPARSE, "message %zu, tool_calls[%zu]: arguments: expected a "
                      "JSON string or object", mi, ci);
    return oom ? rl_err(err, RL_ENOMEM, "chat: out of memory reading JSON") : 0;
}

static int role_from_name(chat_role *r, const char *s)
{
    static const chat_role all[] = {CHAT_SYSTEM, CHAT_USER, CHAT_ASSISTANT, CHAT_TOOL};
    for (size_t i = 0; s && i < 4; i++)
        if (strcmp(s, chat_role_name(all[i])) == 0) {
            *r = all[i];
            return 0;
        }
    return -1;
}

static int msg_from_json(chat *c, const cJSON *j, size_t i, char *err)
{
    int bad = 0, oom = 0;
    chat_role role;
    const char *rs = opt_str(j, "role", &bad);
    if (!cJSON_IsObject(j) || role_from_name(&role, rs))
        return rl_err(err, RL_EPARSE, "message %zu: expected an object with \"role\" one of "
                      "system, user, assistant, tool", i);
    const char *content = opt_str(j, "content", &bad);
    const char *reasoning = opt_str(j, "reasoning_content", &bad);
    const char *raw = opt_str(j, "raw", &bad);
    const char *tcid = opt_str(j, "tool_call_id", &bad), *name = opt_str(j, "name", &bad);
    const cJSON *calls = cJSON_GetObjectItemCaseSensitive(j, "tool_calls");
    const cJSON *trunc = cJSON_GetObjectItemCaseSensitive(j, "truncated");
    if (bad || (calls && !cJSON_IsArray(calls) && !cJSON_IsNull(calls)))
        return rl_err(err, RL_EPARSE, "message %zu: content, reasoning_content, raw, "
                      "tool_call_id and name must be strings, tool_calls an array", i);
    chat_msg *m;
    int rc = msg_push(&m, c, err);
    if (rc)
        return rc;
    m->role = role;
    m->content = dup_opt(content ? content : "", &oom);
    if (role == CHAT_ASSISTANT) {
        m->reasoning = dup_opt(reasoning, &oom);
        m->raw = dup_opt(raw, &oom);
        m->raw_len = raw ? strlen(raw) : 0;
        m->truncated = cJSON_IsTrue(trunc);
        size_t n = cJSON_IsArray(calls) ? (size_t)cJSON_GetArraySize(calls) : 0;
        if (n && !(m->calls = calloc(n, sizeof *m->calls)))
            oom = 1;
        size_t k = 0;
        for (const cJSON *e = n ? calls->child : NULL; e && !oom; e = e->next, k++) {
            m->ncalls = k + 1;
            rc = call_from_json(&m->calls[k], e, i, k, err);
            if (rc) {
                msg_clear(m);
                return rc;
            }
        }
    } else if (role == CHAT_TOOL) {
        m->tool_call_id = dup_opt(tcid, &oom);
        m->name = dup_opt(name, &oom);
    }
    return msg_commit(c, m, oom, err);
}

int chat_from_json(chat **out, const cJSON *array, char *err)
{
    *out = NULL;
    if (!cJSON_IsArray(array))
        return rl_err(err, RL_EPARSE, "chat: expected a JSON array of messages");
    chat *c;
    int rc = chat_new(&c, err);
    if (rc)
        return rc;
    size_t i = 0;
    for (const cJSON *e = array->child; e; e = e->next, i++) {
        rc = msg_from_json(c, e, i, err);
        if (rc) {
            chat_free(c);
            return rc;
        }
    }
    *out = c;
    return 0;
}

