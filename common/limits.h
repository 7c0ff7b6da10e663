/* limits.h - every limit in the project, in one place, with its reason.
 *
 * Untrusted input is everywhere (agent-written code, agent-written tool
 * calls, test output): every buffer that grows from it is capped by a
 * constant from this file. Each module owns one section; keep the reason
 * next to the value. Runtime options may lower these defaults, never
 * raise a hard cap (the HARD ones).
 */
#ifndef RL_LIMITS_H
#define RL_LIMITS_H

/* ---- common ---------------------------------------------------------- */

/* Default cap of a buf_t when the caller gives none: far above any honest
 * tool observation or test log, small enough that a runaway loop fails
 * fast instead of swapping. */
#define RL_BUF_DEFAULT_MAX (64u << 20)

/* Largest file fs_read_file will read: task files, trajectories lines and
 * source files are far smaller; checkpoints use their own reader. */
#define RL_FILE_MAX (256u << 20)

/* ---- sandbox --------------------------------------------------------- */

/* ---- workspace (harness/workspace) ----------------------------------- */

/* ---- tasks ----------------------------------------------------------- */

/* ---- harness: tools, template, episode ------------------------------- */

/* ---- policy / model --------------------------------------------------- */

/* -- tokenizer (policy/tokenizer) -- */

/* Longest pre-token piece in bytes; longer runs (minified code, base64,
 * 10k spaces) are cut into pieces of this size. Bounds the per-piece BPE
 * work (quadratic in the piece length) and the byte length of any token,
 * which a loaded file is checked against. Real words and indents are far
 * shorter. */
#define RL_TOK_PIECE_MAX 256

/* HARD cap on the vocabulary of a loaded tokenizer file: the model uses
 * 4-8k, the largest public BPE vocabularies are ~200k. */
#define RL_TOK_VOCAB_MAX (1 << 18)

/* Special tokens: how many, and how long each may be (they are short
 * markers like <|im_end|>; ASCII, no whitespace). */
#define RL_TOK_SPECIAL_MAX 256
#define RL_TOK_SPECIAL_LEN_MAX 64

/* Largest tokenizer JSON file: 2^18 merges at ~16 bytes each is 4 MB. */
#define RL_TOK_FILE_MAX (16u << 20)

/* Largest text one tok_encode / tok_decode call handles: the same as any
 * capped buffer, far above one episode's transcript. */
#define RL_TOK_TEXT_MAX RL_BUF_DEFAULT_MAX

/* Encode cache of piece -> ids: pieces up to this many bytes are cached
 * (longer ones are rare and unique), the cache holds at most this many
 * bytes of keys+ids and is emptied when full. 4 MB covers every distinct
 * word of a few MB of code. */
#define RL_TOK_CACHE_PIECE_MAX 64
#define RL_TOK_CACHE_BYTES (4u << 20)

/* Training input: total bytes the trainer accepts (a few MB is the real
 * use; the trainer needs ~20x the unique-word bytes in memory), and the
 * largest single file `grpo tokenizer` reads while walking the trees
 * (bigger files are data dumps, not code or prose). */
#define RL_TOK_TRAIN_BYTES_MAX (64u << 20)
#define RL_TOK_TRAIN_FILE_MAX (4u << 20)

/* ---- grpo ------------------------------------------------------------ */

#endif
