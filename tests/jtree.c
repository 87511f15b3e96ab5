/* SPDX-License-Identifier: MIT
 *
 * The JSON reader of the tests (see jtree.h): a recursive-descent parser into nodes and strings allocated
 * from an arena of blocks, numbers converted with strtod in the "C" locale's syntax (JSON numbers have no
 * locale-dependent form; the text is checked against the JSON grammar first, then converted with a private
 * copy that never holds a decimal comma).
 */
#include "jtree.h"

#include "core/jsoncheck.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The summary holds JSON given by marks (accepted up to JSONCHECK_DEPTH_MAX deep) a few levels down
 * ("events" > name > "last_data"): the bound leaves room for any such value below the summary's own levels,
 * so whatever `jobscope mark` accepts, the report reads. */
#define MAX_DEPTH (JSONCHECK_DEPTH_MAX + 32)

struct jt_block {
    jt_block_t *next;
    size_t used, cap;
    max_align_t data[]; /* cap bytes */
};

typedef struct {
    const char *p, *end;
    jt_doc_t *d;
    int depth;
} parser_t;

static void *arena_alloc(jt_doc_t *d, size_t n)
{
    n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    jt_block_t *b = d->blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 16384 ? n : 16384;
        b = malloc(sizeof(*b) + cap);
        if (!b)
            return NULL;
        b->next = d->blocks;
        b->used = 0;
        b->cap = cap;
        d->blocks = b;
    }
    void *r = (char *)b->data + b->used;
    b->used += n;
    return r;
}

void jt_free(jt_doc_t *d)
{
    if (!d)
        return;
    for (jt_block_t *b = d->blocks, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    d->blocks = NULL;
    d->root = NULL;
}

static void skip_ws(parser_t *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static int hex4(const char *p, unsigned *ret)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -EINVAL;
    }
    *ret = v;
    return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* parse_string: at the opening quote; the decoded text into the arena (an escape never grows: "\u0041" is 6
 * bytes for at most 4, so the raw length bounds the output). */
static int parse_string(parser_t *ps, const char **ret, size_t *ret_len)
{
    const char *p = ps->p + 1, *start = p;
    while (p < ps->end && *p != '"') {
        if ((unsigned char)*p < 0x20)
            return -EINVAL;
        p += *p == '\\' ? 2 : 1;
    }
    if (p >= ps->end)
        return -EINVAL;
    char *out = arena_alloc(ps->d, (size_t)(p - start) + 1);
    if (!out)
        return -ENOMEM;
    size_t n = 0;
    for (const char *q = start; q < p;) {
        if (*q != '\\') {
            out[n++] = *q++;
            continue;
        }
        q++;
        switch (*q++) {
        case '"':
            out[n++] = '"';
            break;
        case '\\':
            out[n++] = '\\';
            break;
        case '/':
            out[n++] = '/';
            break;
        case 'b':
            out[n++] = '\b';
            break;
        case 'f':
            out[n++] = '\f';
            break;
        case 'n':
            out[n++] = '\n';
            break;
        case 'r':
            out[n++] = '\r';
            break;
        case 't':
            out[n++] = '\t';
            break;
        case 'u': {
            unsigned cp, lo;
            if (p - q < 4 || hex4(q, &cp) < 0)
                return -EINVAL;
            q += 4;
            if (cp >= 0xd800 && cp < 0xdc00 && p - q >= 6 && q[0] == '\\' && q[1] == 'u' &&
                hex4(q + 2, &lo) == 0 && lo >= 0xdc00 && lo < 0xe000) {
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                q += 6;
            } else if (cp >= 0xd800 && cp < 0xe000) {
                cp = 0xfffd; /* a lone surrogate */
            }
            n += put_utf8(out + n, cp);
            break;
        }
        default:
            return -EINVAL;
        }
    }
    out[n] = '\0';
    *ret = out;
    *ret_len = n;
    ps->p = p + 1;
    return 0;
}

static int parse_number(parser_t *ps, double *ret)
{
    const char *p = ps->p;
    if (p < ps->end && *p == '-')
        p++;
    if (p >= ps->end || *p < '0' || *p > '9')
        return -EINVAL;
    if (*p == '0')
        p++;
    else
        while (p < ps->end && *p >= '0' && *p <= '9')
            p++;
    if (p < ps->end && *p == '.') {
        p++;
        if (p >= ps->end || *p < '0' || *p > '9')
            return -EINVAL;
        while (p < ps->end && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < ps->end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < ps->end && (*p == '+' || *p == '-'))
            p++;
        if (p >= ps->end || *p < '0' || *p > '9')
            return -EINVAL;
        while (p < ps->end && *p >= '0' && *p <= '9')
            p++;
    }
    char small[64];
    size_t n = (size_t)(p - ps->p);
    /* any length JSON allows (a mark's data may be a number of thousands of digits): strtod rounds it */
    char *tmp = n < sizeof(small) ? small : arena_alloc(ps->d, n + 1);
    if (!tmp)
        return -ENOMEM;
    memcpy(tmp, ps->p, n);
    tmp[n] = '\0';
    /* strtod reads the locale's decimal point: write it in place of the '.' (JSON has only '.') */
    char *dot = strchr(tmp, '.');
    if (dot) {
        char probe[8];
        snprintf(probe, sizeof(probe), "%.1f", 1.5);
        *dot = probe[1];
    }
    *ret = strtod(tmp, NULL);
    ps->p = p;
    return 0;
}

static int literal(parser_t *ps, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
        return -EINVAL;
    ps->p += n;
    return 0;
}

static int parse_value(parser_t *ps, jt_t *v);

/* parse_container: an array or object at its opening bracket. */
static int parse_container(parser_t *ps, jt_t *v, bool object)
{
    if (++ps->depth > MAX_DEPTH)
        return -EINVAL;
    v->type = object ? JT_OBJ : JT_ARR;
    ps->p++;
    skip_ws(ps);
    jt_t **tail = &v->child;
    if (ps->p < ps->end && *ps->p == (object ? '}' : ']')) {
        ps->p++;
        ps->depth--;
        return 0;
    }
    for (;;) {
        jt_t *c = arena_alloc(ps->d, sizeof(*c));
        if (!c)
            return -ENOMEM;
        memset(c, 0, sizeof(*c));
        skip_ws(ps);
        if (object) {
            size_t klen;
            if (ps->p >= ps->end || *ps->p != '"')
                return -EINVAL;
            int r = parse_string(ps, &c->key, &klen);
            if (r < 0)
                return r;
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':')
                return -EINVAL;
            ps->p++;
        }
        int r = parse_value(ps, c);
        if (r < 0)
            return r;
        *tail = c;
        tail = &c->next;
        v->len++;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == (object ? '}' : ']')) {
            ps->p++;
            ps->depth--;
            return 0;
        }
        return -EINVAL;
    }
}

static int parse_value(parser_t *ps, jt_t *v)
{
    skip_ws(ps);
    if (ps->p >= ps->end)
        return -EINVAL;
    switch (*ps->p) {
    case '{':
        return parse_container(ps, v, true);
    case '[':
        return parse_container(ps, v, false);
    case '"':
        v->type = JT_STR;
        return parse_string(ps, &v->str, &v->len);
    case 't':
        v->type = JT_BOOL;
        v->b = true;
        return literal(ps, "true");
    case 'f':
        v->type = JT_BOOL;
        return literal(ps, "false");
    case 'n':
        v->type = JT_NULL;
        return literal(ps, "null");
    default:
        v->type = JT_NUM;
        return parse_number(ps, &v->num);
    }
}

int jt_parse(const char *text, size_t len, jt_doc_t *ret)
{
    memset(ret, 0, sizeof(*ret));
    parser_t ps = {.p = text, .end = text + len, .d = ret};
    jt_t *root = arena_alloc(ret, sizeof(*root));
    if (!root)
        return -ENOMEM;
    memset(root, 0, sizeof(*root));
    int r = parse_value(&ps, root);
    if (r < 0)
        return r;
    skip_ws(&ps);
    if (ps.p != ps.end)
        return -EINVAL;
    ret->root = root;
    return 0;
}

const jt_t *jt_get(const jt_t *o, const char *key)
{
    if (!o || o->type != JT_OBJ)
        return NULL;
    for (const jt_t *c = o->child; c; c = c->next)
        if (strcmp(c->key, key) == 0)
            return c;
    return NULL;
}

const jt_t *jt_path(const jt_t *v, const char *path)
{
    while (v && path && *path) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);
        char step[128];
        if (n >= sizeof(step))
            return NULL;
        memcpy(step, path, n);
        step[n] = '\0';
        if (v->type == JT_ARR) {
            char *end;
            unsigned long i = strtoul(step, &end, 10);
            if (!n || *end)
                return NULL;
            const jt_t *c = v->child;
            for (; c && i; i--)
                c = c->next;
            v = c;
        } else {
            v = jt_get(v, step);
        }
        path = dot ? dot + 1 : NULL;
    }
    return v;
}

double jt_num(const jt_t *v, const char *path)
{
    const jt_t *x = jt_path(v, path);
    return x && x->type == JT_NUM ? x->num : NAN;
}

const char *jt_str(const jt_t *v, const char *path)
{
    const jt_t *x = jt_path(v, path);
    return x && x->type == JT_STR ? x->str : NULL;
}
