/* unicode.h - the Unicode properties and the NFC normalization the Hugging
 * Face tokenizer uses (protocol/tokenizer_hf.c).
 *
 * Tables are generated from Python's unicodedata by scripts/gen-unicode.py
 * into unicode_tables.c; UNI_VERSION names the Unicode version. Letters
 * are the general categories L* (Lu Ll Lt Lm Lo), numbers N* (Nd Nl No),
 * whitespace is the set JavaScript's and ECMAScript's \s matches (tab, LF,
 * VT, FF, CR, every Zs, U+2028, U+2029, U+FEFF).
 *
 * Text is UTF-8; a byte that does not start a valid sequence counts as one
 * character of its own that is neither letter, number nor whitespace, and
 * NFC leaves it unchanged.
 */
#ifndef RL_UNICODE_H
#define RL_UNICODE_H

#include <stddef.h>
#include <stdint.h>

extern const char UNI_VERSION[];

/* Generated tables (unicode_tables.c): sorted, non-overlapping. */
extern const uint32_t UNI_LETTER[][2]; /* [first, last] code point */
extern const size_t UNI_LETTER_N;
extern const uint32_t UNI_NUMBER[][2];
extern const size_t UNI_NUMBER_N;
extern const uint32_t UNI_CCC[][3]; /* [first, last, combining class] */
extern const size_t UNI_CCC_N;
extern const uint32_t UNI_DECOMP[][3]; /* [cp, first, second or 0] by cp */
extern const size_t UNI_DECOMP_N;
extern const uint32_t UNI_COMP[][3]; /* [first, second, composite] by pair */
extern const size_t UNI_COMP_N;

/* Character classes of the pre-tokenizer patterns. */
enum { UNI_OTHER = 0, UNI_LETTER_C = 1, UNI_NUMBER_C = 2, UNI_SPACE_C = 3 };

/* The code point at p (n > 0 bytes) and its byte length in *len; an invalid
 * byte gives 0x110000 + the byte value and length 1. */
uint32_t uni_decode(const unsigned char *p, size_t n, size_t *len);
/* UNI_LETTER_C, UNI_NUMBER_C, UNI_SPACE_C or UNI_OTHER. */
int uni_class(uint32_t cp);
/* Canonical combining class (0 for starters and invalid bytes). */
int uni_ccc(uint32_t cp);

/* NFC of len bytes of UTF-8: *out (NUL-terminated, caller frees) and *olen.
 * At most `max` output bytes: RL_ELIMIT past it, RL_ENOMEM. */
int uni_nfc(char **out, size_t *olen, const char *s, size_t len, size_t max);
/* 1 when uni_nfc would return s unchanged for a cheap reason (every code
 * point below U+0300); 0 when it has to run. */
int uni_nfc_trivial(const char *s, size_t len);

#endif
