/* SPDX-License-Identifier: MIT
 *
 * The interface of tabular sinks (CSV, JSON Lines): a header of column names once, then rows of cells. The
 * exports feed them rows the model derived from a recording. Numbers are written locale-independently with
 * enough digits to round-trip; a missing cell is an empty CSV field or a JSON null, never 0.
 */
#ifndef JOBSCOPE_TABSINK_H
#define JOBSCOPE_TABSINK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum { CELL_MISSING, CELL_INT, CELL_REAL, CELL_TEXT, CELL_TYPE_MAX } js_cell_type_t;

typedef struct {
    js_cell_type_t type;
    union {
        int64_t i;
        double d;
        const char *s; /* borrowed for the duration of the row() call */
    };
} js_cell_t;

static inline js_cell_t cell_int(int64_t i)
{
    js_cell_t c = {.type = CELL_INT, .i = i};
    return c;
}
static inline js_cell_t cell_real(double d)
{
    js_cell_t c = {.type = CELL_REAL, .d = d};
    return c;
}
static inline js_cell_t cell_text(const char *s)
{
    js_cell_t c = {.type = s ? CELL_TEXT : CELL_MISSING, .s = s};
    return c;
}
static inline js_cell_t cell_missing(void)
{
    js_cell_t c = {.type = CELL_MISSING, .i = 0};
    return c;
}

typedef struct js_tab_sink {
    const char *name; /* "csv", "jsonl" */
    /* begin: start writing to `f` (borrowed) with these column names (borrowed until end()).
     * Returns 0 or -errno; *ret_state is freed by end(). */
    int (*begin)(FILE *f, const char *const *cols, size_t ncols, void **ret_state);
    /* row: write one row of ncols cells. Returns 0 or -EIO when the stream failed (full disk, closed pipe). */
    int (*row)(void *state, const js_cell_t *cells);
    /* end: flush and free the state; returns 0 or the first write error. Accepts NULL. */
    int (*end)(void *state);
} js_tab_sink_t;

extern const js_tab_sink_t sink_csv;
extern const js_tab_sink_t sink_jsonl;

/* fmt_real: format `d` shortest-round-trip ("%.17g" trimmed), locale-independent, into buf. Returns buf. */
char *fmt_real(char *buf, size_t cap, double d);

#endif
