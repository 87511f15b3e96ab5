/* SPDX-License-Identifier: MIT
 *
 * JSON writing helpers (see json.h).
 */
#include "core/json.h"
#include "core/cell.h"
#include "core/jsoncheck.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t utf8_len(const unsigned char *s, size_t n)
{
    size_t k;
    unsigned char lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        k = 2;
    else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        k = 3;
        if (s[0] == 0xe0)
            lo = 0xa0;
        else if (s[0] == 0xed)
            hi = 0x9f;
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        k = 4;
        if (s[0] == 0xf0)
            lo = 0x90;
        else if (s[0] == 0xf4)
            hi = 0x8f;
    } else
        return 0;
    if (k > n || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < k; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return k;
}

int json_str(js_buf_t *b, const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    if (buf_append(b, "\"", 1) < 0)
        return -ENOMEM;
    for (size_t i = 0; i < len;) {
        unsigned char c = u[i];
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            if (buf_append(b, esc, 2) < 0)
                return -ENOMEM;
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            const char *e = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : NULL;
            if (e ? buf_append(b, e, 2) : buf_printf(b, "\\u%04x", c))
                return -ENOMEM;
            i++;
        } else if (c < 0x80) {
            if (buf_append(b, (const char *)&u[i], 1) < 0)
                return -ENOMEM;
            i++;
        } else {
            size_t k = utf8_len(u + i, len - i);
            if (k == 0) {
                if (buf_printf(b, "\\u%04x", c) < 0)
                    return -ENOMEM;
                i++;
            } else {
                if (buf_append(b, (const char *)&u[i], k) < 0)
                    return -ENOMEM;
                i += k;
            }
        }
    }
    return buf_append(b, "\"", 1);
}

int json_num(js_buf_t *b, bool present, double d)
{
    if (!present || !isfinite(d))
        return buf_append(b, "null", 4);
    char tmp[40];
    fmt_real(tmp, sizeof(tmp), d);
    return buf_append(b, tmp, strlen(tmp));
}

/* escape_bytes: text_escape, and with `apos` a single quote as \' too (inside $'...') */
static int escape_bytes(js_buf_t *b, const char *s, size_t len, bool apos)
{
    const unsigned char *u = (const unsigned char *)s;
    int err = 0;
    for (size_t i = 0; i < len && !err;) {
        unsigned char c = u[i];
        if (apos && c == '\'') {
            err = buf_append(b, "\\'", 2);
            i++;
        } else if (c >= 0x20 && c < 0x7f && c != '\\') {
            err = buf_append(b, s + i, 1);
            i++;
        } else if (c == '\\') {
            err = buf_append(b, "\\\\", 2);
            i++;
        } else if (c == '\n' || c == '\t' || c == '\r') {
            err = buf_append(b, c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\r", 2);
            i++;
        } else if (c >= 0x80 && utf8_len(u + i, len - i)) {
            size_t k = utf8_len(u + i, len - i);
            /* C1 controls (U+0080..U+009F) are terminal controls too */
            if (k == 2 && c == 0xc2 && u[i + 1] < 0xa0)
                err = buf_printf(b, "\\u%04x", u[i + 1]);
            else
                err = buf_append(b, s + i, k);
            i += k;
        } else {
            err = buf_printf(b, "\\x%02x", c);
            i++;
        }
    }
    return err ? -ENOMEM : 0;
}

int text_escape(js_buf_t *b, const char *s, size_t len)
{
    return escape_bytes(b, s, len, false);
}

int text_escape_quoted(js_buf_t *b, const char *s, size_t len)
{
    return escape_bytes(b, s, len, true);
}

/* ---- nested writer ------------------------------------------------------------------------------------ */

void jw_init(jw_t *w, js_buf_t *b)
{
    w->b = b;
    w->depth = 0;
    w->first = true;
    w->err = 0;
}

void jw_key(jw_t *w, const char *key)
{
    if (w->depth == 0 && w->first) { /* the top-level value: no indentation */
        w->first = false;
        return;
    }
    if (!w->first)
        w->err |= buf_append(w->b, ",", 1);
    w->err |= buf_printf(w->b, "\n%*s", w->depth * 2, "");
    if (key) {
        w->err |= json_str(w->b, key, strlen(key));
        w->err |= buf_append(w->b, ": ", 2);
    }
    w->first = false;
}

static void jw_begin(jw_t *w, const char *key, const char *open)
{
    jw_key(w, key);
    w->err |= buf_append(w->b, open, 1);
    w->depth++;
    w->first = true;
}

static void jw_end(jw_t *w, const char *close)
{
    w->depth--;
    if (!w->first)
        w->err |= buf_printf(w->b, "\n%*s", w->depth * 2, "");
    w->err |= buf_append(w->b, close, 1);
    w->first = false;
}

void jw_open(jw_t *w, const char *key)
{
    jw_begin(w, key, "{");
}

void jw_close(jw_t *w)
{
    jw_end(w, "}");
}

void jw_array(jw_t *w, const char *key)
{
    jw_begin(w, key, "[");
}

void jw_array_close(jw_t *w)
{
    jw_end(w, "]");
}

void jw_num(jw_t *w, const char *key, double v)
{
    jw_key(w, key);
    w->err |= json_num(w->b, !isnan(v), v);
}

void jw_int(jw_t *w, const char *key, int64_t v)
{
    jw_key(w, key);
    w->err |= buf_printf(w->b, "%lld", (long long)v);
}

void jw_bool(jw_t *w, const char *key, bool v)
{
    jw_key(w, key);
    w->err |= buf_append(w->b, v ? "true" : "false", v ? 4 : 5);
}

void jw_str(jw_t *w, const char *key, const char *s)
{
    jw_key(w, key);
    w->err |= s ? json_str(w->b, s, strlen(s)) : buf_append(w->b, "null", 4);
}

void jw_null(jw_t *w, const char *key)
{
    jw_key(w, key);
    w->err |= buf_append(w->b, "null", 4);
}

void jw_raw(jw_t *w, const char *key, const char *json)
{
    if (json && !json_valid(json, strlen(json))) { /* text from a file anyone may have edited: a string */
        jw_str(w, key, json);
        return;
    }
    jw_key(w, key);
    w->err |= json ? buf_append(w->b, json, strlen(json)) : buf_append(w->b, "null", 4);
}

int jw_error(const jw_t *w)
{
    return w->err ? -ENOMEM : 0;
}

bool json_number_text(const char *s)
{
    const char *p = s;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        p += strspn(p, "0123456789");
    else
        return false;
    if (*p == '.') {
        p++;
        size_t n = strspn(p, "0123456789");
        if (!n)
            return false;
        p += n;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        size_t n = strspn(p, "0123456789");
        if (!n)
            return false;
        p += n;
    }
    return *p == '\0';
}
