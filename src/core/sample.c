/* SPDX-License-Identifier: MIT
 *
 * js_sample_t: one row buffer per registered table.
 */
#include "core/sample.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

int sample_init_tables(js_sample_t *s, const js_table_t *const *t)
{
    size_t n = 0;
    while (t[n])
        n++;
    s->tables = t;
    s->ntables = n;
    s->rows = calloc(n, sizeof(*s->rows));
    if (!s->rows)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++)
        rows_init(&s->rows[i], t[i]);
    return 0;
}

void sample_clear(js_sample_t *s)
{
    for (size_t i = 0; i < s->ntables; i++)
        rows_clear(&s->rows[i]);
}

void sample_free(js_sample_t *s)
{
    if (!s || !s->rows)
        return;
    for (size_t i = 0; i < s->ntables; i++)
        rows_free(&s->rows[i]);
    free(s->rows);
    s->rows = NULL;
    s->ntables = 0;
}

js_rows_t *sample_rows(const js_sample_t *s, const js_table_t *t)
{
    for (size_t i = 0; i < s->ntables; i++)
        if (s->tables[i] == t)
            return &s->rows[i];
    return NULL;
}

js_rows_t *sample_rows_named(const js_sample_t *s, const char *name)
{
    int i = sample_table_index(s, name);
    return i >= 0 ? &s->rows[i] : NULL;
}

void sample_bind(const js_sample_t *s, js_bind_t *b, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        b[k].table = sample_table_index(s, b[k].name);
        if (b[k].table >= 0 && table_bind(s->tables[b[k].table], b[k].cols, b[k].ncols, b[k].col) < 0)
            b[k].table = -1;
    }
}

int sample_table_index(const js_sample_t *s, const char *name)
{
    for (size_t i = 0; i < s->ntables && i < INT_MAX; i++)
        if (strcmp(s->tables[i]->name, name) == 0)
            return (int)i;
    return -1;
}
