/* SPDX-License-Identifier: MIT
 *
 * One sample: the row buffers of every registered table (core tables first, then each source's, in
 * registry_tables() order, sources/registry.h). The live sampler fills it from the sources; the recording
 * reader fills it from a SQLite file. The model consumes it the same way in both cases, which is why the
 * end-of-run summary, `jobscope summary` and the exports agree.
 */
#ifndef JOBSCOPE_SAMPLE_H
#define JOBSCOPE_SAMPLE_H

#include "core/source.h"
#include "core/table.h"

typedef struct {
    size_t ntables;
    const js_table_t *const *tables; /* registry_tables() */
    js_rows_t *rows;                 /* ntables buffers, same order */
} js_sample_t;

/* sample_init_tables: allocate empty buffers for every table of `tables` (NULL-terminated, borrowed for the
 * sample's life: registry_tables(), which sample_init in sources/registry.h passes). Returns 0 or -ENOMEM. */
int sample_init_tables(js_sample_t *s, const js_table_t *const *tables);

/* sample_clear: empty every buffer (keeps allocations). */
void sample_clear(js_sample_t *s);

/* sample_free: release everything; accepts a zeroed sample. */
void sample_free(js_sample_t *s);

/* sample_rows: the buffer of table `t` (must be a registered table), never NULL for a registered table. */
js_rows_t *sample_rows(const js_sample_t *s, const js_table_t *t);

/* sample_rows_named: the buffer of the table named `name`, or NULL. */
js_rows_t *sample_rows_named(const js_sample_t *s, const char *name);

/* sample_table_index: the index in s->tables (and s->rows) of the table named `name`, or -1. A consumer that
 * reads a source's table finds it by name once (the layout is the same for every sample made from the same
 * table list) and keeps the index; it includes no source header. */
int sample_table_index(const js_sample_t *s, const char *name);

/* A table a consumer reads, with the columns it reads of it, bound by name (sample_bind). */
typedef struct {
    const char *name;        /* the table's name */
    const char *const *cols; /* the names of the columns read, `ncols` of them (may be 0) */
    size_t ncols;
    int *col;  /* out: their indices, `ncols` of them */
    int table; /* out: the table's index in the sample; -1 when absent or a column is missing */
} js_bind_t;

/* sample_bind: bind each of the `n` tables of `b` against the layout of `s` (sample_table_index, table_bind).
 * A table that is absent or lacks one of the columns gets table -1, so its reader reads nothing from it (as
 * from an empty table), never a wrong column. */
void sample_bind(const js_sample_t *s, js_bind_t *b, size_t n);

/* sample_bound: the rows of bound table `b` in `s` (a sample of the layout it was bound against), or NULL. */
static inline const js_rows_t *sample_bound(const js_sample_t *s, const js_bind_t *b)
{
    return b->table >= 0 && (size_t)b->table < s->ntables ? &s->rows[b->table] : NULL;
}

#endif
