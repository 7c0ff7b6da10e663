/* base64.h - Base64 encoding and decoding (RFC 4648).
 *
 * Two alphabets: the standard one ('+', '/', padded with '=') and the
 * URL- and file-name-safe one ('-', '_', no padding on output; padding is
 * optional on input). The decoder skips CR and LF so MIME-wrapped text
 * decodes directly; any other stray character is an error.
 */
#ifndef BASE64_H
#define BASE64_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum b64_variant { B64_STANDARD, B64_URL } b64_variant;

/* alphabet.c */
char b64_char(unsigned v, b64_variant var);     /* v in 0..63 */
int b64_value(char c, b64_variant var);        /* 0..63, or -1 */
bool b64_is_space(char c);

/* base64.c */
/* Characters needed to encode n bytes (without the terminating NUL). */
size_t b64_encoded_len(size_t n, b64_variant var);
/* Upper bound of the bytes decoded from n characters. */
size_t b64_decoded_max(size_t n);
/* Writes the NUL-terminated encoding; returns its length, or -1 when
 * out_size is too small. */
long b64_encode(char *out, size_t out_size, const uint8_t *in, size_t n, b64_variant var);
/* Decodes n characters; returns the number of bytes, or -1 on a bad
 * character, bad padding, a truncated quantum or a too small buffer. */
long b64_decode(uint8_t *out, size_t out_size, const char *in, size_t n, b64_variant var);
/* Wraps an encoding into lines of `width` characters joined by "\r\n". */
long b64_wrap(char *out, size_t out_size, const char *enc, size_t width);

#endif
