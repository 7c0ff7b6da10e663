/* cli.h - entry points of the `grpo` subcommands (grpo/cmd_*.c).
 * Each takes argv with argv[0] = the subcommand name and returns the exit
 * code: 0 ok, 1 the run or validation failed, 2 usage error. */
#ifndef RL_GRPO_CLI_H
#define RL_GRPO_CLI_H

#include <stdio.h>

/* The log callback the commands give the trainer (grpo_opts.log): each
 * line to stderr. */
static inline void cli_log_stderr(void *ctx, int level, const char *msg)
{
    (void)ctx;
    (void)level;
    fprintf(stderr, "%s\n", msg);
}

/* grpo tokenizer --vocab N --out FILE [--input PATH ...]: trains the BPE
 * tokenizer of the built-in policy (grpo/cmd_tokenizer.c). */
int cmd_tokenizer(int argc, char **argv);
/* grpo tokenize / detokenize --tokenizer FILE [--file F]: text to ids as a
 * JSON array and back (grpo/cmd_tokenize.c). */
int cmd_tokenize(int argc, char **argv);
int cmd_detokenize(int argc, char **argv);
int cmd_generate(int argc, char **argv);
int cmd_sft(int argc, char **argv); /* grpo/cmd_sft.c */
/* grpo score --ckpt CKPT --data FILE: policy-token and copy-token logprobs (grpo/cmd_score.c). */
int cmd_score(int argc, char **argv);
/* grpo train --config FILE [--resume DIR] (grpo/cmd_train.c). */
int cmd_train(int argc, char **argv);
/* grpo flywheel --config FILE [--resume DIR] (grpo/cmd_flywheel.c). */
int cmd_flywheel(int argc, char **argv);
/* grpo serve --ckpt CKPT [--host H] [--port N] (grpo/cmd_serve.c). */
int cmd_serve(int argc, char **argv);
/* grpo import-hf DIR --out CKPT, grpo export-hf CKPT --out DIR (grpo/cmd_hf.c). */
int cmd_import_hf(int argc, char **argv);
int cmd_export_hf(int argc, char **argv);

#endif
