/* utf8.h - UTF-8 decoding, encoding and validation (RFC 3629).
 *
 * Strict: overlong forms, UTF-16 surrogates (U+D800..U+DFFF), code points
 * above U+10FFFF and truncated sequences are all invalid. Strings are byte
 * arrays with an explicit length; they may contain NUL.
 */
#ifndef UTF8_H
#define UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UTF8_MAX_CP 0x10FFFFu
#define UTF8_REPLACEMENT 0xFFFDu

/* decode.c */
/* Length of the sequence that lead byte b starts (1-4), 0 if b cannot
 * start one (a continuation byte, C0, C1, F5..FF). */
int utf8_seq_len(uint8_t b);
/* Decodes one code point from s[0..len); returns the bytes used (1-4), or
 * -1 for an invalid or truncated sequence. */
int utf8_decode(uint32_t *cp, const uint8_t *s, size_t len);

/* encode.c */
/* Bytes needed for cp, or 0 when cp is not a Unicode scalar value. */
int utf8_encoded_len(uint32_t cp);
/* Writes cp into out (at least 4 bytes); returns the length, or 0. */
int utf8_encode(uint8_t *out, uint32_t cp);

/* str.c */
bool utf8_validate(const uint8_t *s, size_t len);
/* Number of code points, or -1 when s is not valid UTF-8. */
long utf8_strlen(const uint8_t *s, size_t len);
/* Byte offset of the code point with index idx, or -1 (invalid / past end). */
long utf8_offset(const uint8_t *s, size_t len, size_t idx);
/* Longest prefix of valid s that is at most max bytes and does not split
 * a code point: its length in bytes. */
size_t utf8_truncate(const uint8_t *s, size_t len, size_t max);
/* Copies s to out replacing each invalid byte sequence with U+FFFD;
 * returns the output length, or -1 when out_size is too small. */
long utf8_sanitize(uint8_t *out, size_t out_size, const uint8_t *s, size_t len);

#endif
