/* main.c - the `grpo` command: one binary, one subcommand per file
 * (grpo/cmd_*.c). To add one: declare it in grpo/cli.h and add a row. */
#include "common/subcmd.h"
#include "grpo/cli.h"
#include "model/blascore.h"

static const subcmd COMMANDS[] = {
    {"tokenizer", cmd_tokenizer, "train the BPE tokenizer (--vocab N --out FILE)"},
    {"tokenize", cmd_tokenize, "print the token ids of a text as JSON (--tokenizer FILE)"},
    {"detokenize", cmd_detokenize, "decode a JSON array of token ids (--tokenizer FILE)"},
    {"generate", cmd_generate, "sample text from a model checkpoint"},
    {"sft", cmd_sft, "supervised fine-tuning on trajectories (--data F --config C --out CKPT)"},
    {"score", cmd_score, "logprobs of recorded policy tokens, copy tokens apart (--ckpt C --data F)"},
    {"train", cmd_train, "GRPO from the test reward (--config FILE [--resume DIR])"},
    {"flywheel", cmd_flywheel, "rejection-sample successes, fine-tune on them, resume RL"},
    {"serve", cmd_serve, "serve a checkpoint over an OpenAI-compatible HTTP API (--ckpt CKPT)"},
    {"import-hf", cmd_import_hf, "convert a Hugging Face checkpoint directory (DIR --out CKPT)"},
    {"export-hf", cmd_export_hf, "write a checkpoint as a Hugging Face directory (CKPT --out DIR)"},
};

int main(int argc, char **argv)
{
    blascore_reexec(argv); /* returns only when the kernels are already right */
    return subcmd_dispatch("grpo", COMMANDS, sizeof COMMANDS / sizeof COMMANDS[0], argc, argv);
}
