/* episode.h - one episode: a policy fixes a task's bug in a work tree.
 *
 * Reset the work tree; render the context; ask the policy for the next
 * assistant message; parse its tool calls; run them; append the tool
 * responses; repeat until the policy answers without a tool call or calls
 * submit, or a limit is hit (turns, context tokens, wall time). Then the
 * protected test files are restored and the tests decide the reward.
 *
 * The episode is a state machine (ep_new / ep_request / ep_feed /
 * ep_finish) so that a driver can step many episodes and batch their
 * generation requests into one policy call; ep_run drives one episode.
 */
#ifndef RL_EPISODE_H
#define RL_EPISODE_H

#include "common/log.h"
#include "policy/policy.h"
#include "harness/testrun.h"
#include "corpus/task.h"

#include <stddef.h>
#include <stdint.h>

struct ws_tree;

typedef struct ep_shaping {
    int on;              /* off by default: the reward is the 0/1 result */
    double pass, fail;   /* final tests pass / fail: +2.0 / -1.0 */
    double tool_ok;      /* each successful tool call: +0.5 */
    double well_formed;  /* each well-formed turn: +0.1 */
    double identical;    /* a call identical to the previous one: -1.0 */
    double over_turn;    /* each turn beyond turn_limit: -0.2 */
    int turn_limit;
} ep_shaping;

void ep_shaping_default(ep_shaping *s);
/* Reads a reward config file (JSON: {"shaped": true, "pass": 2.0, ...}). */
int ep_shaping_load(ep_shaping *s, const char *path, char *err);

/* The options of the openai policy (policy/openai.h) as flags and
 * experiment fields give them; base_url, model and api are recorded. */
typedef struct ep_openai {
    const char *base_url, *model, *api, *api_key_env, *tokenizer;
    int max_inflight;        /* 0: the policy's default */
    long timeout_ms;         /* per request attempt; 0: the default */
    int retries;             /* attempts; 0: the default */
} ep_openai;

typedef struct ep_config {
    const char *policy;      /* spec, recorded: "oracle", "search", "model:CKPT" */
    const char *prompt;      /* "v1", "v2" or a path to a prompt file */
    const char *prompts_dir; /* "prompts" */
    int think;               /* 1: thinking on; 0: empty think block */
    int edit_hints;          /* 1: edit_file shows where a failed old_string's text is
                                (tool_ctx.edit_hints); recorded only when 0 */
    int history_keep;        /* 1: keep earlier thinking; 0: drop */
    int chat_template;       /* a tpl_kind (protocol/template.h); -1: the one
                                recorded with a model:CKPT checkpoint, else
                                qwen3-xml (ep_config_template) */
    testrun_limits test_limits; /* limits of each test run (0: the sandbox's
                                   defaults); recorded when set */
    int integrity_flag_only; /* 0 (default): a diff the integrity check flags
                                (harness/integrity.h) scores 0; 1: it is only
                                recorded, the test reward stands */
    int max_turns;           /* 0: unlimited */
    double tail_share;       /* long tail of episode lengths: this share of
                                episodes (chosen by the seed) get a turn cap
                                drawn from [tail_min_turns, tail_max_turns]
                                instead of max_turns (ep_config_turn_cap);
                                0: none. Recorded when set */
    int tail_min_turns, tail_max_turns;
    int max_context_tokens;  /* 0: unlimited */
    int max_wall_s;          /* 0: unlimited */
    int max_reply_tokens;    /* per assistant message */
    uint64_t seed;
    double temperature, top_p;
    size_t obs_budget;       /* bytes of one tool observation */
    int file_tool_timeout_ms;
    ep_shaping shaping;
    const char *run;         /* run label (experiments), or NULL */
    ep_openai openai;        /* policy "openai": its server and options */
    const struct tok *tok;   /* tokenizer for ids and token accounting;
                                NULL: the policy's, if any */
    rl_log_fn log;           /* a readable transcript as it goes, one line per
                                message (RL_LOG_INFO); NULL: none */
    void *log_ctx;
    int color;               /* ANSI colours in the transcript */
} ep_config;

void ep_config_default(ep_config *c);

/* The policy environment of an episode under c (sampling settings, the
 * openai options, the seed); gold_patch is the caller's to set. */
void ep_config_pol_env(pol_env *env, const ep_config *c);

/* 1 when c's policy is the openai client (its episodes are stepped
 * together in one process, so its requests go out together). */
int ep_config_is_openai(const ep_config *c);

/* The template (a tpl_kind) episodes of c render with: c->chat_template
 * when set; else, for a policy model:CKPT, ep_template_of_ckpt(CKPT); else
 * qwen3-xml. */
int ep_config_template(const ep_config *c, char *err);
/* The template a checkpoint speaks: the "chat_template" of the state.json
 * in its directory (or in it, a directory), as GRPO runs record it; else
 * the one named in its metadata (import-hf --template); else, for a
 * checkpoint with a Hugging Face tokenizer_config.json (imported, or a
 * Hugging Face directory), the template whose rendering is that file's
 * chat_template (tpl_kind_of_jinja: "qwen3" for the Qwen3 checkpoints');
 * else qwen3-xml. RL_EINVAL when a file names an unknown template. */
int ep_template_of_ckpt(const char *ckpt, char *err);

/* The turn cap of the episode of c with seed c->seed: max_turns, or,
 * for the tail_share of seeds a splitmix64 draw of the seed selects, a cap
 * drawn uniformly from [tail_min_turns, tail_max_turns] by the same draw
 * (0: unlimited). A function of the config and the seed only, so every
 * rollout of the same episodes (sync, async, another process) sees the
 * same caps. */
int ep_config_turn_cap(const ep_config *c);

/* FNV-1a digest of every recorded config field except the seed: episodes
 * of one config share it (a GRPO group is one task under one digest). */
uint64_t ep_config_digest(const ep_config *c);

typedef struct ep_state ep_state;

/* Prepares an episode of task t in work tree ws (reset here). */
int ep_new(ep_state **out, const task *t, const ep_config *cfg, struct ws_tree *ws, char *err);
void ep_free(ep_state *e);

/* 1 and a filled request when the episode needs the policy's next
 * message, 0 when it is over. The request borrows from the episode. */
int ep_request(ep_state *e, pol_request *req);

/* Gives the policy's reply: parses it, runs its tool calls, appends the
 * observations, checks limits. Takes ownership of resp's buffers. */
int ep_feed(ep_state *e, pol_response *resp, char *err);

/* Scores the episode and returns its record (one JSON line, no newline;
 * caller frees). */
int ep_finish(char **record, ep_state *e, char *err);

/* The record of the episode so far (ep_finish's schema; before the end
 * without the pending turn, "reward" and "end_reason" null). Caller frees. */
int ep_snapshot(char **record, ep_state *e, char *err);

/* The conversation so far (system, user, then assistant and tool
 * messages); it lives as long as e. */
struct chat;
const struct chat *ep_chat(const ep_state *e);

/* Ends the episode before its pending request is answered (the policy
 * failed): end_reason goes into the record with msg as its error. */
void ep_abort(ep_state *e, const char *end_reason, const char *msg);

/* 1 once the episode has ended (submit, no tool call, a limit, an error). */
int ep_done(const ep_state *e);

/* reward of a finished episode (after ep_finish) */
double ep_reward(const ep_state *e);

/* Whole episode with one policy. */
int ep_run(char **record, const task *t, const ep_config *cfg, struct ws_tree *ws, policy *pol,
           char *err);

#endif
