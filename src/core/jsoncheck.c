/* SPDX-License-Identifier: MIT
 *
 * JSON syntax check (see jsoncheck.h): a small state machine with an explicit stack of open containers.
 */
#include "core/jsoncheck.h"
#include "core/json.h"

#include <string.h>

typedef struct {
    const unsigned char *p, *end;
} cur_t;

static void ws(cur_t *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static bool lit(cur_t *c, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0)
        return false;
    c->p += n;
    return true;
}

static bool hex4(cur_t *c)
{
    if (c->end - c->p < 4)
        return false;
    for (int i = 0; i < 4; i++) {
        unsigned char h = c->p[i];
        if (!((h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F')))
            return false;
    }
    c->p += 4;
    return true;
}

static bool string(cur_t *c)
{
    if (c->p >= c->end || *c->p != '"')
        return false;
    c->p++;
    while (c->p < c->end) {
        unsigned char ch = *c->p;
        if (ch == '"') {
            c->p++;
            return true;
        }
        if (ch < 0x20)
            return false;
        if (ch == '\\') {
            c->p++;
            if (c->p >= c->end)
                return false;
            unsigned char e = *c->p++;
            if (e == 'u') {
                if (!hex4(c))
                    return false;
            } else if (!strchr("\"\\/bfnrt", e) || e == '\0') {
                return false;
            }
            continue;
        }
        if (ch < 0x80) {
            c->p++;
            continue;
        }
        size_t k = utf8_len(c->p, (size_t)(c->end - c->p));
        if (!k)
            return false;
        c->p += k;
    }
    return false;
}

static bool digits(cur_t *c)
{
    const unsigned char *s = c->p;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
        c->p++;
    return c->p > s;
}

static bool number(cur_t *c)
{
    if (c->p < c->end && *c->p == '-')
        c->p++;
    if (c->p < c->end && *c->p == '0')
        c->p++;
    else if (!digits(c))
        return false;
    if (c->p < c->end && *c->p == '.') {
        c->p++;
        if (!digits(c))
            return false;
    }
    if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
        c->p++;
        if (c->p < c->end && (*c->p == '+' || *c->p == '-'))
            c->p++;
        if (!digits(c))
            return false;
    }
    return true;
}

/* scalar: one value that is not a container */
static bool scalar(cur_t *c)
{
    if (c->p >= c->end)
        return false;
    switch (*c->p) {
    case '"':
        return string(c);
    case 't':
        return lit(c, "true");
    case 'f':
        return lit(c, "false");
    case 'n':
        return lit(c, "null");
    default:
        return number(c);
    }
}

bool json_valid(const char *s, size_t len)
{
    cur_t c = {(const unsigned char *)s, (const unsigned char *)s + len};
    char stack[JSONCHECK_DEPTH_MAX]; /* '{' or '[' */
    int depth = 0;
    ws(&c);
    for (;;) {
        /* expect a value */
        if (c.p >= c.end)
            return false;
        if (*c.p == '{' || *c.p == '[') {
            if (depth == JSONCHECK_DEPTH_MAX)
                return false;
            char open = (char)*c.p++;
            stack[depth++] = open;
            ws(&c);
            char close = open == '{' ? '}' : ']';
            if (c.p < c.end && *c.p == close) { /* empty container */
                c.p++;
                depth--;
            } else {
                if (open == '{') {
                    if (!string(&c))
                        return false;
                    ws(&c);
                    if (c.p >= c.end || *c.p++ != ':')
                        return false;
                    ws(&c);
                }
                continue; /* its first value */
            }
        } else if (!scalar(&c)) {
            return false;
        }
        /* after a value: a separator, a close, or the end */
        for (;;) {
            ws(&c);
            if (depth == 0)
                return c.p == c.end;
            char close = stack[depth - 1] == '{' ? '}' : ']';
            if (c.p >= c.end)
                return false;
            if (*c.p == close) {
                c.p++;
                depth--;
                continue;
            }
            if (*c.p != ',')
                return false;
            c.p++;
            ws(&c);
            if (stack[depth - 1] == '{') {
                if (!string(&c))
                    return false;
                ws(&c);
                if (c.p >= c.end || *c.p++ != ':')
                    return false;
                ws(&c);
            }
            break; /* the next value */
        }
    }
}
