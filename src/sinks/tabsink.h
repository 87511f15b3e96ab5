/* SPDX-License-Identifier: MIT
 *
 * The interface of tabular sinks (CSV, JSON Lines): a header of column names once, then rows of cells. The
 * exports feed them rows the model derived from a recording. Numbers are written locale-independently with
 * enough digits to round-trip; a missing cell is an empty CSV field or a JSON null, never 0.
 */
#ifndef JOBSCOPE_TABSINK_H
#define JOBSCOPE_TABSINK_H

#include "core/cell.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct js_tab_sink {
    const char *name; /* "csv", "jsonl" */
    /* begin: start writing to `f` (borrowed) with these column names (borrowed until end()).
     * Returns 0 or -errno; *ret_state is freed by end(). */
    int (*begin)(FILE *f, const char *const *cols, size_t ncols, void **ret_state);
    /* row: write one row of ncols cells. Returns 0 or -EIO when the stream failed (full disk, closed pipe).
     */
    int (*row)(void *state, const js_cell_t *cells);
    /* end: flush and free the state; returns 0 or the first write error. Accepts NULL. */
    int (*end)(void *state);
} js_tab_sink_t;

extern const js_tab_sink_t sink_csv;
extern const js_tab_sink_t sink_jsonl;

#endif
