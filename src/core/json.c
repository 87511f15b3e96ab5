/* SPDX-License-Identifier: MIT
 *
 * JSON writing helpers (see json.h).
 */
#include "core/json.h"
#include "sinks/tabsink.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int buf_append(js_buf_t *b, const char *s, size_t len)
{
    if (buf_reserve(b, b->len + len + 1) < 0)
        return -ENOMEM;
    memcpy(b->p + b->len, s, len);
    b->len += len;
    b->p[b->len] = '\0';
    return 0;
}

int buf_printf(js_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -EINVAL;
    if (buf_reserve(b, b->len + (size_t)n + 1) < 0)
        return -ENOMEM;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

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

char *fmt_real(char *buf, size_t cap, double d)
{
    if (d == 0) {
        snprintf(buf, cap, "0");
        return buf;
    }
    if (d > -9007199254740992.0 && d < 9007199254740992.0 && d == (double)(int64_t)d) {
        snprintf(buf, cap, "%lld", (long long)d); /* integral values print as integers, never 1e+07 */
        return buf;
    }
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    return buf;
}
