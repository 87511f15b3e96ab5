/* SPDX-License-Identifier: MIT
 *
 * JSON Lines tabular sink: one JSON object per row, keys are the column names, missing cells are null. Text
 * cells are written through text_escape() (json.h) before JSON encoding, so a decoded value equals the CSV
 * sink's cell for the same row.
 */
#include "sinks/tabsink.h"

#include "core/json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    FILE *f;
    const char *const *cols;
    size_t ncols;
    js_buf_t b, esc;
} jsonl_t;

static int jsonl_begin(FILE *f, const char *const *cols, size_t ncols, void **ret_state)
{
    jsonl_t *j = calloc(1, sizeof(*j));
    if (!j)
        return -ENOMEM;
    j->f = f;
    j->cols = cols;
    j->ncols = ncols;
    *ret_state = j;
    return 0;
}

static int jsonl_row(void *state, const js_cell_t *cells)
{
    jsonl_t *j = state;
    js_buf_t *b = &j->b;
    b->len = 0;
    int r = buf_append(b, "{", 1);
    for (size_t i = 0; i < j->ncols && r == 0; i++) {
        if (i)
            r |= buf_append(b, ",", 1);
        r |= json_str(b, j->cols[i], strlen(j->cols[i]));
        r |= buf_append(b, ":", 1);
        switch (cells[i].type) {
        case CELL_INT:
            r |= buf_printf(b, "%lld", (long long)cells[i].i);
            break;
        case CELL_REAL:
            r |= json_num(b, true, cells[i].d);
            break;
        case CELL_TEXT:
            j->esc.len = 0;
            r |= buf_append(&j->esc, "", 0); /* empty and NUL-terminated */
            r |= text_escape(&j->esc, cells[i].s, strlen(cells[i].s));
            r |= r ? 0 : json_str(b, j->esc.p, j->esc.len);
            break;
        default:
            r |= buf_append(b, "null", 4);
        }
    }
    r |= buf_append(b, "}\n", 2);
    if (r)
        return -ENOMEM;
    fwrite(b->p, 1, b->len, j->f);
    return ferror(j->f) ? -EIO : 0;
}

static int jsonl_end(void *state)
{
    jsonl_t *j = state;
    if (!j)
        return 0;
    int r = fflush(j->f) != 0 || ferror(j->f) ? -EIO : 0;
    buf_free(&j->b);
    buf_free(&j->esc);
    free(j);
    return r;
}

const js_tab_sink_t sink_jsonl = {.name = "jsonl", .begin = jsonl_begin, .row = jsonl_row, .end = jsonl_end};
