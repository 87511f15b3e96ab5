/* SPDX-License-Identifier: MIT
 *
 * Minimal JSON writing into a js_buf_t: escaped strings, locale-independent numbers, null for missing values.
 * Used by the summary, the JSON Lines sink and the cmdline column. Writing only; jobscope never parses JSON.
 */
#ifndef JOBSCOPE_JSON_H
#define JOBSCOPE_JSON_H

#include "sys/fsroot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* buf_append: append `len` bytes. Returns 0 or -ENOMEM. Keeps the buffer NUL-terminated. */
int buf_append(js_buf_t *b, const char *s, size_t len);

/* buf_printf: append formatted text (printf conventions). Returns 0 or -ENOMEM. */
int buf_printf(js_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* json_str: append `s` (`len` bytes, may hold any byte) as a quoted JSON string; invalid UTF-8 and control
 * bytes are escaped as \u00XX. Returns 0 or -ENOMEM. */
int json_str(js_buf_t *b, const char *s, size_t len);

/* json_num: append `d` as a JSON number (shortest form that round-trips), or null when !present or not
 * finite. Returns 0 or -ENOMEM. */
int json_num(js_buf_t *b, bool present, double d);

/* utf8_len: length of the valid UTF-8 sequence at `s` (at most `n` bytes, n >= 1), or 0 if it is invalid:
 * overlong forms, surrogates and code points above U+10FFFF are invalid (RFC 3629). ASCII bytes are invalid
 * here too (0); callers test them first. */
size_t utf8_len(const unsigned char *s, size_t n);

#endif
