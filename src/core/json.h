/* SPDX-License-Identifier: MIT
 *
 * Minimal JSON writing into a js_buf_t: escaped strings, locale-independent numbers, null for missing values.
 * Used by the summary, the JSON Lines sink and the cmdline column. Writing only (nothing reads the summary
 * back: its consumers read the typed table, model/figure.h).
 */
#ifndef JOBSCOPE_JSON_H
#define JOBSCOPE_JSON_H

#include "core/buf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* utf8_len: length of the valid UTF-8 sequence at `s` (at most `n` bytes), or 0 if it is not one: overlong
 * forms, surrogates and code points above U+10FFFF are invalid (RFC 3629). */
size_t utf8_len(const unsigned char *s, size_t n);

/* text_escape: append `s` (`len` bytes, any bytes) as text safe for a terminal and valid UTF-8: a backslash
 * as two backslashes, \n \t \r for those controls, \xNN for other control bytes and for bytes that are not
 * UTF-8, \u00NN for C1 controls. Reversible. The exports write command names and lines this way (CSV and JSON
 * Lines alike) and the text summary prints them this way. Returns 0 or -ENOMEM. */
int text_escape(js_buf_t *b, const char *s, size_t len);

/* text_escape_quoted: text_escape, and a single quote as \' too (inside a shell's $'...'). */
int text_escape_quoted(js_buf_t *b, const char *s, size_t len);

/* json_str: append `s` (`len` bytes, may hold any byte) as a quoted JSON string; invalid UTF-8 and control
 * bytes are escaped as \u00XX. Returns 0 or -ENOMEM. */
int json_str(js_buf_t *b, const char *s, size_t len);

/* json_number_text: whether `s` is, whole, a number in JSON's syntax ("-12", "0.5", "1e+09"; not "012",
 * "+1", ".5", "inf", "0x10", ""). */
bool json_number_text(const char *s);

/* json_num: append `d` as a JSON number (shortest form that round-trips), or null when !present or not
 * finite. Returns 0 or -ENOMEM. */
int json_num(js_buf_t *b, bool present, double d);

/* A pretty-printing JSON writer for nested objects and arrays (the summary, `jobscope info`). Errors are
 * sticky: after an allocation failure every call is a no-op and jw_error() returns -ENOMEM. */
typedef struct {
    js_buf_t *b;
    int depth;
    bool first; /* no member written yet in the innermost object or array */
    int err;
} jw_t;

/* jw_init: write into `b` (appending). */
void jw_init(jw_t *w, js_buf_t *b);

/* jw_key: start a member: the comma, the indentation and `"key": ` (key NULL: an array element). */
void jw_key(jw_t *w, const char *key);

/* jw_open / jw_close: an object member `key` (NULL for the top level or an array element) and its end. */
void jw_open(jw_t *w, const char *key);
void jw_close(jw_t *w);

/* jw_array / jw_array_close: an array member `key` (NULL for an array element) and its end. */
void jw_array(jw_t *w, const char *key);
void jw_array_close(jw_t *w);

/* Scalar members; a NAN number and a NULL string are written as null. */
void jw_num(jw_t *w, const char *key, double v);
void jw_int(jw_t *w, const char *key, int64_t v);
void jw_bool(jw_t *w, const char *key, bool v);
void jw_str(jw_t *w, const char *key, const char *s);
void jw_null(jw_t *w, const char *key);

/* jw_raw: a member whose value is `json`, JSON text written as it is (NULL writes null); text that is not
 * one valid JSON value (json_valid: a recording edited by hand) is written as a JSON string instead, so the
 * document stays valid. */
void jw_raw(jw_t *w, const char *key, const char *json);

/* jw_error: 0, or -ENOMEM when any write failed. */
int jw_error(const jw_t *w);

#endif
