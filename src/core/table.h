/* SPDX-License-Identifier: MIT
 *
 * Tables of raw values: the one shape every source produces and every consumer reads. A source declares its
 * tables with static column descriptors (name with unit suffix, unit, type, counter or gauge, counter width);
 * per sample it appends rows to a js_rows_t buffer. Each value carries a present flag, so a value that could
 * not be read is missing, never zero. Strings live in the buffer's arena and are addressed by offset, so a
 * buffer can grow without invalidating them. The SQLite sink creates its tables from these descriptors and
 * the reader maps stored columns back onto them by name.
 */
#ifndef JOBSCOPE_TABLE_H
#define JOBSCOPE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    JS_INT,  /* int64_t */
    JS_REAL, /* double */
    JS_TEXT, /* string in the row buffer's arena */
    JS_TYPE_MAX
} js_type_t;

typedef enum {
    JS_GAUGE,   /* a level read at an instant */
    JS_COUNTER, /* monotonic count since some origin; may wrap at `width` bits or reset */
    JS_LABEL,   /* identifies the row (pid, cpu number, interface name) */
    JS_KIND_MAX
} js_kind_t;

typedef struct {
    const char *name; /* SQL column name, unit as suffix: utime_ticks, rss_bytes */
    const char *unit; /* ticks, bytes, us, ns, count, pages, fraction, text */
    js_type_t type;
    js_kind_t kind;
    uint8_t width; /* counter width in bits for wrap-around; 0 for gauges and labels */
    const char *help;
} js_column_t;

typedef struct {
    const char *name; /* SQL table name */
    const char *help;
    size_t ncols;
    const js_column_t *cols;
} js_table_t;

typedef struct {
    bool present;
    union {
        int64_t i;
        double d;
        size_t s; /* JS_TEXT: offset into the arena */
    };
} js_value_t;

/* Rows of one table for one sample. */
typedef struct {
    const js_table_t *table;
    size_t nrows;
    size_t cap;    /* rows allocated */
    js_value_t *v; /* nrows * table->ncols values, row-major */
    char *arena;   /* NUL-terminated strings */
    size_t arena_len;
    size_t arena_cap;
} js_rows_t;

/* rows_init: prepare an empty buffer for `table` (no allocation yet). */
void rows_init(js_rows_t *r, const js_table_t *table);

/* rows_clear: forget all rows and strings, keep the allocations for the next sample. */
void rows_clear(js_rows_t *r);

/* rows_free: release the allocations; accepts a zeroed buffer. */
void rows_free(js_rows_t *r);

/* rows_add: append one row with every value missing.
 * Returns a pointer to its ncols values (valid until the next rows_add), or NULL on allocation failure. */
js_value_t *rows_add(js_rows_t *r);

/* rows_set_str: store a copy of `s` (length `len`) as the text value `v`.
 * Returns 0 or -ENOMEM; on failure `v` is left missing. */
int rows_set_str(js_rows_t *r, js_value_t *v, const char *s, size_t len);

/* rows_str: the text of value `v` (which must be a present JS_TEXT value of this buffer). */
static inline const char *rows_str(const js_rows_t *r, const js_value_t *v)
{
    return r->arena + v->s;
}

/* rows_row: values of row `i`. */
static inline js_value_t *rows_row(const js_rows_t *r, size_t i)
{
    return r->v + i * r->table->ncols;
}

static inline void val_int(js_value_t *v, int64_t x)
{
    v->present = true;
    v->i = x;
}

static inline void val_real(js_value_t *v, double x)
{
    v->present = true;
    v->d = x;
}

/* table_column: index of the column named `name` in `t`, or -1. */
int table_column(const js_table_t *t, const char *name);

/* table_bind: the index in `t` of each of the `n` columns named in `names`, into ret_cols[0..n). Returns 0,
 * or -ENOENT when one of them is not a column of `t` (its index is then -1; the others are set). A consumer
 * binds the columns it reads by name, once, instead of including the source's column enum. */
int table_bind(const js_table_t *t, const char *const *names, size_t n, int *ret_cols);

/* rows_text: the text of column `col` of `row` (a row of `r`), or `dflt` when the column is not bound
 * (col < 0) or the value is missing; the caller says what missing text is ("" or NULL). */
static inline const char *rows_text(const js_rows_t *r, const js_value_t *row, int col, const char *dflt)
{
    return col >= 0 && row[col].present ? rows_str(r, &row[col]) : dflt;
}

#endif
