/* SPDX-License-Identifier: MIT
 *
 * Row buffers for js_table_t: growth, string arena and column lookup. No I/O here.
 */
#include "core/table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void rows_init(js_rows_t *r, const js_table_t *table)
{
    memset(r, 0, sizeof(*r));
    r->table = table;
}

void rows_clear(js_rows_t *r)
{
    r->nrows = 0;
    r->arena_len = 0;
}

void rows_free(js_rows_t *r)
{
    if (!r)
        return;
    free(r->v);
    free(r->arena);
    r->v = NULL;
    r->arena = NULL;
    r->nrows = r->cap = r->arena_len = r->arena_cap = 0;
}

js_value_t *rows_add(js_rows_t *r)
{
    size_t nc = r->table->ncols;
    if (r->nrows == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        js_value_t *v = realloc(r->v, cap * nc * sizeof(*v));
        if (!v)
            return NULL;
        r->v = v;
        r->cap = cap;
    }
    js_value_t *row = r->v + r->nrows * nc;
    memset(row, 0, nc * sizeof(*row));
    r->nrows++;
    return row;
}

int rows_set_str(js_rows_t *r, js_value_t *v, const char *s, size_t len)
{
    if (r->arena_len + len + 1 > r->arena_cap) {
        size_t cap = r->arena_cap ? r->arena_cap : 256;
        while (cap < r->arena_len + len + 1)
            cap *= 2;
        char *a = realloc(r->arena, cap);
        if (!a) {
            v->present = false;
            return -ENOMEM;
        }
        r->arena = a;
        r->arena_cap = cap;
    }
    memcpy(r->arena + r->arena_len, s, len);
    r->arena[r->arena_len + len] = '\0';
    v->present = true;
    v->s = r->arena_len;
    r->arena_len += len + 1;
    return 0;
}

int table_column(const js_table_t *t, const char *name)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (strcmp(t->cols[i].name, name) == 0)
            return (int)i;
    return -1;
}

int table_bind(const js_table_t *t, const char *const *names, size_t n, int *ret_cols)
{
    int r = 0;
    for (size_t i = 0; i < n; i++)
        if ((ret_cols[i] = table_column(t, names[i])) < 0)
            r = -ENOENT;
    return r;
}
