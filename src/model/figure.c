/* SPDX-License-Identifier: MIT
 *
 * The typed summary table (figure.h): a tree of figures, groups and rows, addressed by paths; putting and
 * reading rows, merging a batch job's nodes, and the JSON every consumer of `--summary-json`, `jobscope
 * summary --json`, js_monitor_summary and js_recording_summary reads.
 */
#include "model/figure.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct js_summary_table {
    js_figure_t root;
    int err;
};

#define MAX_STEPS 32

typedef enum { STEP_MEMBER, STEP_INDEX, STEP_LAST, STEP_CUR } step_kind_t;

typedef struct {
    step_kind_t kind;
    const char *name; /* STEP_MEMBER: into the parse buffer */
    size_t index;     /* STEP_INDEX */
} step_t;

typedef struct {
    step_t s[MAX_STEPS];
    size_t n;
    char buf[512];
} steps_t;

/* ---- the table -------------------------------------------------------------------------------------------
 */

js_summary_table_t *figure_new(void)
{
    js_summary_table_t *t = calloc(1, sizeof(*t));
    if (t)
        t->root.kind = FIG_OBJECT;
    return t;
}

static void fig_clear(js_figure_t *f)
{
    for (size_t i = 0; i < f->nkids; i++) {
        fig_clear(f->kids[i]);
        free(f->kids[i]);
    }
    free(f->kids);
    free(f->name);
    free(f->text);
    free(f->method);
    free(f->cur);
}

void figure_free(js_summary_table_t *t)
{
    if (!t)
        return;
    fig_clear(&t->root);
    free(t);
}

js_figure_t *figure_root(js_summary_table_t *t)
{
    return &t->root;
}

const js_figure_t *figure_croot(const js_summary_table_t *t)
{
    return &t->root;
}

int figure_error(const js_summary_table_t *t)
{
    return t->err;
}

/* table_of: the table a figure belongs to (its root is the table's first member). */
static js_summary_table_t *table_of(js_figure_t *f)
{
    while (f->parent)
        f = f->parent;
    return (js_summary_table_t *)(void *)f;
}

static js_figure_t *fail(js_figure_t *at, int err)
{
    js_summary_table_t *t = table_of(at);
    if (!t->err)
        t->err = err;
    return NULL;
}

/* ---- paths -----------------------------------------------------------------------------------------------
 */

/* parse: split `path` into steps (see figure.h). Returns 0 or -EINVAL. */
static int parse(const char *path, steps_t *st)
{
    st->n = 0;
    size_t used = 0;
    const char *p = path;
    while (*p) {
        if (st->n == MAX_STEPS)
            return -EINVAL;
        if (p[0] == '{' && p[1] == '}') {
            st->s[st->n++] = (step_t){.kind = STEP_CUR};
            p += 2;
        } else {
            char *name = st->buf + used;
            size_t len = 0;
            while (*p && *p != '.' && *p != '[') {
                if (*p == '{' || *p == '}' || *p == ']')
                    return -EINVAL; /* reserved: written with a backslash in a name */
                if (*p == '\\' && p[1])
                    p++;
                if (used + len + 1 >= sizeof(st->buf))
                    return -EINVAL;
                name[len++] = *p++;
            }
            if (!len)
                return -EINVAL;
            name[len] = '\0';
            used += len + 1;
            st->s[st->n++] = (step_t){.kind = STEP_MEMBER, .name = name};
        }
        while (*p == '[') {
            if (st->n == MAX_STEPS)
                return -EINVAL;
            p++;
            if (*p == ']') {
                st->s[st->n++] = (step_t){.kind = STEP_LAST};
            } else {
                char *end;
                unsigned long long v = strtoull(p, &end, 10);
                if (end == p || *end != ']')
                    return -EINVAL;
                st->s[st->n++] = (step_t){.kind = STEP_INDEX, .index = (size_t)v};
                p = end;
            }
            p++;
        }
        if (*p == '.' && p[1])
            p++;
        else if (*p)
            return -EINVAL;
    }
    return 0;
}

static js_figure_t *member(const js_figure_t *g, const char *name)
{
    for (size_t i = 0; i < g->nkids; i++)
        if (g->kids[i]->name && strcmp(g->kids[i]->name, name) == 0)
            return g->kids[i];
    return NULL;
}

/* add_kid: a new figure of `kind` appended to group g (named `name` in an object). NULL on ENOMEM. */
static js_figure_t *add_kid(js_figure_t *g, const char *name, js_fig_kind_t kind)
{
    if (g->nkids == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 8;
        js_figure_t **k = realloc(g->kids, cap * sizeof(*k));
        if (!k)
            return NULL;
        g->kids = k;
        g->cap = cap;
    }
    js_figure_t *f = calloc(1, sizeof(*f));
    if (!f || (name && !(f->name = strdup(name)))) {
        free(f);
        return NULL;
    }
    f->kind = kind;
    f->parent = g;
    f->idx = g->nkids;
    g->kids[g->nkids++] = f;
    return f;
}

/* step_in: follow one step from group g: the figure, made as `kind` where missing and `create`; NULL when
 * missing or not a group of the right kind (*err says which when creating). */
static js_figure_t *step_in(js_figure_t *g, const step_t *s, bool create, js_fig_kind_t kind, int *err)
{
    js_figure_t *f = NULL;
    const char *name = NULL;
    switch (s->kind) {
    case STEP_MEMBER:
    case STEP_CUR:
        if (g->kind != FIG_OBJECT)
            break;
        name = s->kind == STEP_CUR ? g->cur : s->name;
        if (!name)
            break;
        f = member(g, name);
        if (!f && create && !(f = add_kid(g, name, kind)))
            *err = -ENOMEM;
        return f;
    case STEP_LAST:
        if (g->kind == FIG_ARRAY && g->nkids)
            return g->kids[g->nkids - 1];
        break;
    case STEP_INDEX:
        if (g->kind == FIG_ARRAY && s->index < g->nkids)
            return g->kids[s->index];
        break;
    }
    *err = -EINVAL;
    return NULL;
}

/* walk: the figure at `path` below `at`; with `create`, groups and the figure itself are made where missing
 * (the figure as `kind`). NULL when missing (reading) or on error (*err, creating). */
static js_figure_t *walk(js_figure_t *at, const char *path, bool create, js_fig_kind_t kind, int *err)
{
    steps_t st;
    *err = 0;
    if (!at)
        return NULL;
    if (parse(path, &st) < 0) {
        *err = -EINVAL;
        return NULL;
    }
    js_figure_t *f = at;
    for (size_t i = 0; i < st.n && f; i++) {
        js_fig_kind_t want = kind;
        if (i + 1 < st.n)
            want = st.s[i + 1].kind == STEP_INDEX || st.s[i + 1].kind == STEP_LAST ? FIG_ARRAY : FIG_OBJECT;
        if (!fig_is_group(f)) {
            *err = -EINVAL;
            return NULL;
        }
        f = step_in(f, &st.s[i], create, want, err);
        if (f && i + 1 < st.n && f->kind != want) {
            *err = -EINVAL;
            return NULL;
        }
    }
    return f;
}

static js_figure_t *put(js_figure_t *at, const char *path, js_fig_kind_t kind)
{
    int err;
    js_figure_t *f = walk(at, path, true, kind, &err);
    if (!f)
        return fail(at, err ? err : -EINVAL);
    bool group = kind == FIG_OBJECT || kind == FIG_ARRAY;
    if (group != fig_is_group(f) || (group && f->kind != kind))
        return fail(at, -EINVAL);
    if (!group) {
        free(f->text);
        f->text = NULL;
        f->kind = kind;
        f->present = true;
    }
    return f;
}

/* ---- putting ---------------------------------------------------------------------------------------------
 */

js_figure_t *fig_put_num(js_figure_t *at, const char *path, const char *unit, double v)
{
    js_figure_t *f = put(at, path, FIG_NUM);
    if (f) {
        f->num = v;
        f->present = !isnan(v);
        f->unit = unit;
    }
    return f;
}

js_figure_t *fig_put_int(js_figure_t *at, const char *path, const char *unit, int64_t v)
{
    js_figure_t *f = put(at, path, FIG_INT);
    if (f) {
        f->i = v;
        f->unit = unit;
    }
    return f;
}

js_figure_t *fig_put_bool(js_figure_t *at, const char *path, bool v)
{
    js_figure_t *f = put(at, path, FIG_BOOL);
    if (f)
        f->b = v;
    return f;
}

static js_figure_t *put_string(js_figure_t *at, const char *path, js_fig_kind_t kind, const char *s)
{
    js_figure_t *f = put(at, path, kind);
    if (f && s && !(f->text = strdup(s)))
        return fail(at, -ENOMEM);
    if (f)
        f->present = s != NULL;
    return f;
}

js_figure_t *fig_put_text(js_figure_t *at, const char *path, const char *s)
{
    return put_string(at, path, FIG_TEXT, s);
}

js_figure_t *fig_put_json(js_figure_t *at, const char *path, const char *json)
{
    return put_string(at, path, FIG_JSON, json);
}

js_figure_t *fig_put_null(js_figure_t *f)
{
    if (f)
        f->present = false;
    return f;
}

js_figure_t *fig_put_object(js_figure_t *at, const char *path)
{
    return put(at, path, FIG_OBJECT);
}

js_figure_t *fig_put_array(js_figure_t *at, const char *path)
{
    return put(at, path, FIG_ARRAY);
}

js_figure_t *fig_put_elem(js_figure_t *at, const char *path)
{
    js_figure_t *a = put(at, path, FIG_ARRAY);
    if (!a)
        return NULL;
    js_figure_t *e = add_kid(a, NULL, FIG_OBJECT);
    return e ? e : fail(at, -ENOMEM);
}

js_figure_t *fig_name(js_figure_t *at, const char *path, const char *name)
{
    js_figure_t *o = put(at, path, FIG_OBJECT);
    if (!o)
        return NULL;
    free(o->cur);
    if (!name || !(o->cur = strdup(name))) {
        o->cur = NULL;
        return fail(at, name ? -ENOMEM : -EINVAL);
    }
    return o;
}

js_figure_t *fig_how(js_figure_t *f, const char *method_key, const char *method)
{
    if (!f)
        return NULL;
    free(f->method);
    f->method = NULL;
    f->method_key = method_key;
    if (method && !(f->method = strdup(method)))
        return fail(f, -ENOMEM);
    return f;
}

js_figure_t *fig_exact(js_figure_t *f, bool exact)
{
    if (f)
        f->exact = exact ? FIG_EXACT : FIG_SAMPLED;
    return f;
}

js_figure_t *fig_merge(js_figure_t *f, js_fig_merge_t how)
{
    if (f)
        f->merge = how;
    return f;
}

/* copy_into: copy the value, unit and attributes of src into d (same kind), then src's members. */
static int copy_into(js_figure_t *d, const js_figure_t *src)
{
    d->present = src->present;
    d->num = src->num;
    d->i = src->i;
    d->b = src->b;
    d->unit = src->unit;
    d->method_key = src->method_key;
    d->exact = src->exact;
    d->merge = src->merge;
    if ((src->text && !(d->text = strdup(src->text))) ||
        (src->method && !(d->method = strdup(src->method))) || (src->cur && !(d->cur = strdup(src->cur))))
        return -ENOMEM;
    for (size_t i = 0; i < src->nkids; i++) {
        const js_figure_t *k = src->kids[i];
        js_figure_t *n = d->kind == FIG_OBJECT ? member(d, k->name) : NULL;
        if (n && n->kind != k->kind)
            return -EINVAL;
        if (!n && !(n = add_kid(d, d->kind == FIG_OBJECT ? k->name : NULL, k->kind)))
            return -ENOMEM;
        int r = copy_into(n, k);
        if (r < 0)
            return r;
    }
    return 0;
}

js_figure_t *fig_copy(js_figure_t *at, const char *path, const js_figure_t *src)
{
    if (!src)
        return fail(at, -EINVAL);
    js_figure_t *d = put(at, path, src->kind);
    if (!d)
        return NULL;
    int r = copy_into(d, src);
    return r < 0 ? fail(at, r) : d;
}

static double add_missing(double a, double b)
{
    return isnan(a) ? b : isnan(b) ? a : a + b;
}

static double max_missing(double a, double b)
{
    return isnan(a) ? b : isnan(b) ? a : (b > a ? b : a);
}

int figure_merge(js_figure_t *dst, const js_figure_t *src)
{
    js_buf_t path = {0};
    int rc = 0;
    for (const js_figure_t *f = fig_next_row(src, NULL); f && rc == 0; f = fig_next_row(src, f)) {
        if (f->merge == FIG_MERGE_NONE)
            continue;
        path.len = 0;
        if (fig_path(f, &path) < 0) {
            rc = -ENOMEM;
            break;
        }
        const char *p = path.p ? path.p : "";
        const js_figure_t *had = fig_get(dst, p);
        js_figure_t *d;
        if (f->kind == FIG_BOOL) {
            bool v = f->present && f->b;
            d = fig_put_bool(dst, p, had && had->kind == FIG_BOOL ? had->b && v : v);
        } else if (f->kind == FIG_NUM || f->kind == FIG_INT) {
            double a = had ? fig_value(had) : NAN, b = fig_value(f);
            double v = !had ? b : f->merge == FIG_MERGE_SUM ? add_missing(a, b) : max_missing(a, b);
            d = f->kind == FIG_INT && !isnan(v) ? fig_put_int(dst, p, f->unit, (int64_t)v)
                                                : fig_put_num(dst, p, f->unit, v);
        } else {
            continue;
        }
        if (!d)
            rc = -ENOMEM;
        else
            d->merge = f->merge;
    }
    buf_free(&path);
    return rc ? rc : table_of(dst)->err;
}

/* ---- reading ---------------------------------------------------------------------------------------------
 */

const js_figure_t *fig_get(const js_figure_t *at, const char *path)
{
    int err;
    return walk((js_figure_t *)(uintptr_t)at, path, false, FIG_NUM, &err);
}

js_figure_t *fig_at(js_figure_t *at, const char *path)
{
    int err;
    return walk(at, path, false, FIG_NUM, &err);
}

double fig_value(const js_figure_t *f)
{
    if (!f || !f->present)
        return NAN;
    switch (f->kind) {
    case FIG_NUM:
        return f->num;
    case FIG_INT:
        return (double)f->i;
    case FIG_BOOL:
        return f->b;
    default:
        return NAN;
    }
}

double fig_num(const js_figure_t *at, const char *path)
{
    const js_figure_t *f = fig_get(at, path);
    return f && f->kind != FIG_BOOL ? fig_value(f) : NAN;
}

int64_t fig_int(const js_figure_t *at, const char *path, int64_t dflt)
{
    const js_figure_t *f = fig_get(at, path);
    if (!f || !f->present)
        return dflt;
    if (f->kind == FIG_INT)
        return f->i;
    if (f->kind == FIG_NUM && isfinite(f->num) && f->num == floor(f->num) && fabs(f->num) < 9e18)
        return (int64_t)f->num;
    return dflt;
}

const char *fig_text(const js_figure_t *at, const char *path)
{
    const js_figure_t *f = fig_get(at, path);
    return f && f->present && (f->kind == FIG_TEXT || f->kind == FIG_JSON) ? f->text : NULL;
}

int fig_bool(const js_figure_t *at, const char *path)
{
    const js_figure_t *f = fig_get(at, path);
    return f && f->present && f->kind == FIG_BOOL ? f->b : -1;
}

size_t fig_count(const js_figure_t *g)
{
    return g && fig_is_group(g) ? g->nkids : 0;
}

const js_figure_t *fig_kid(const js_figure_t *g, size_t i)
{
    return g && fig_is_group(g) && i < g->nkids ? g->kids[i] : NULL;
}

bool fig_is_group(const js_figure_t *f)
{
    return f && (f->kind == FIG_OBJECT || f->kind == FIG_ARRAY);
}

/* first_row: the first row in document order at or below f, NULL when there is none. */
static const js_figure_t *first_row(const js_figure_t *f)
{
    if (!fig_is_group(f))
        return f;
    for (size_t i = 0; i < f->nkids; i++) {
        const js_figure_t *r = first_row(f->kids[i]);
        if (r)
            return r;
    }
    return NULL;
}

const js_figure_t *fig_next_row(const js_figure_t *at, const js_figure_t *prev)
{
    if (!at)
        return NULL;
    if (!prev)
        return first_row(at);
    for (const js_figure_t *f = prev; f && f != at; f = f->parent) {
        const js_figure_t *p = f->parent;
        for (size_t i = f->idx + 1; p && i < p->nkids; i++) {
            const js_figure_t *r = first_row(p->kids[i]);
            if (r)
                return r;
        }
    }
    return NULL;
}

/* name_escaped: append a member name as a path writes it. */
static int name_escaped(js_buf_t *b, const char *name)
{
    int err = 0;
    for (const char *p = name; *p && !err; p++) {
        if (strchr(".[]{}\\", *p))
            err |= buf_append(b, "\\", 1);
        err |= buf_append(b, p, 1);
    }
    return err;
}

int fig_path(const js_figure_t *f, js_buf_t *b)
{
    const js_figure_t *chain[MAX_STEPS * 4] = {NULL};
    size_t n = 0;
    for (; f && f->parent && n < sizeof(chain) / sizeof(chain[0]); f = f->parent)
        chain[n++] = f;
    int err = 0;
    bool first = true;
    while (n--) {
        const js_figure_t *c = chain[n];
        if (c->parent->kind == FIG_ARRAY) {
            err |= buf_printf(b, "[%zu]", c->idx);
        } else {
            if (!first)
                err |= buf_append(b, ".", 1);
            err |= name_escaped(b, c->name ? c->name : "");
        }
        first = false;
    }
    if (!b->p)
        err |= buf_append(b, "", 0);
    return err ? -ENOMEM : 0;
}

/* ---- JSON ------------------------------------------------------------------------------------------------
 */

/* method_written: whether an earlier member of object g carries the method key `key`, or a member is named
 * so (the JSON writes a method key once per object). */
static bool method_written(const js_figure_t *g, size_t upto, const char *key)
{
    for (size_t i = 0; i < g->nkids; i++) {
        const js_figure_t *k = g->kids[i];
        if ((k->name && strcmp(k->name, key) == 0) ||
            (i < upto && k->method_key && !strcmp(k->method_key, key)))
            return true;
    }
    return false;
}

void fig_json_write(jw_t *w, const char *key, const js_figure_t *f)
{
    switch (f->kind) {
    case FIG_NUM:
        jw_num(w, key, f->present ? f->num : NAN);
        break;
    case FIG_INT:
        if (f->present)
            jw_int(w, key, f->i);
        else
            jw_null(w, key);
        break;
    case FIG_BOOL:
        if (f->present)
            jw_bool(w, key, f->b);
        else
            jw_null(w, key);
        break;
    case FIG_TEXT:
        jw_str(w, key, f->present ? f->text : NULL);
        break;
    case FIG_JSON:
        jw_raw(w, key, f->present ? f->text : NULL);
        break;
    case FIG_OBJECT:
        jw_open(w, key);
        for (size_t i = 0; i < f->nkids; i++) {
            const js_figure_t *k = f->kids[i];
            fig_json_write(w, k->name, k);
            if (k->method_key && !method_written(f, i, k->method_key))
                jw_str(w, k->method_key, k->method);
        }
        jw_close(w);
        break;
    case FIG_ARRAY:
        jw_array(w, key);
        for (size_t i = 0; i < f->nkids; i++)
            fig_json_write(w, NULL, f->kids[i]);
        jw_array_close(w);
        break;
    default:
        break;
    }
}

int figure_json(const js_summary_table_t *t, js_buf_t *b)
{
    jw_t w;
    jw_init(&w, b);
    fig_json_write(&w, NULL, &t->root);
    w.err |= buf_append(b, "\n", 1);
    return jw_error(&w);
}

/* ---- formatting ------------------------------------------------------------------------------------------
 */

char *fmt_bytes(char *buf, size_t cap, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    if (isnan(bytes)) {
        snprintf(buf, cap, "n/a");
        return buf;
    }
    int u = 0;
    while (fabs(bytes) >= 1024 && u < 5) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, cap, u ? "%.2f %s" : "%.0f %s", bytes, units[u]);
    return buf;
}

char *fig_fmt(char *buf, size_t cap, const char *fmt, double v)
{
    if (isnan(v))
        snprintf(buf, cap, "n/a");
    else
        snprintf(buf, cap, fmt, v);
    return buf;
}
