/* utf8.h - UTF-8 validity, for text that must be valid (JSON, tokenizers).
 *
 * Policies write arbitrary bytes: a byte-level model can emit half of a
 * multi-byte character. JSON records must hold valid UTF-8 (RFC 8259; a
 * strict reader such as Python's rejects the line otherwise).
 */
#ifndef RL_UTF8_H
#define RL_UTF8_H

#include <stddef.h>

/* Length (1-4) of the valid UTF-8 sequence at p, which has n > 0 bytes;
 * 0 if the bytes there are not one (overlong forms, surrogates and code
 * points past U+10FFFF are invalid). */
size_t utf8_seq_len(const unsigned char *p, size_t n);

/* Replaces, in place, each byte of s that is not part of a valid sequence
 * by '?': the length and every offset into s stay the same. Returns the
 * number of bytes replaced. */
size_t utf8_scrub(char *s, size_t n);

#endif
