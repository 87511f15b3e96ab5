/* SPDX-License-Identifier: MIT
 *
 * CSV tabular sink (RFC 4180 quoting, LF line endings as pandas, awk and spreadsheets all read): a header
 * row, then one row per call; fields holding a comma or a quote are quoted with doubled quotes; a missing
 * cell is an empty field. Text cells are written through text_escape() (json.h), as the JSON Lines sink
 * writes them: no control character or invalid UTF-8 byte reaches the file raw, so a line is a row.
 */
#include "sinks/tabsink.h"

#include "core/json.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    FILE *f;
    size_t ncols;
    js_buf_t esc;
} csv_t;

static void put_field(FILE *f, const char *s)
{
    if (strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static int csv_begin(FILE *f, const char *const *cols, size_t ncols, void **ret_state)
{
    csv_t *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->f = f;
    c->ncols = ncols;
    for (size_t i = 0; i < ncols; i++) {
        if (i)
            fputc(',', f);
        put_field(f, cols[i]);
    }
    fputc('\n', f);
    *ret_state = c;
    return ferror(f) ? -EIO : 0;
}

static int csv_row(void *state, const js_cell_t *cells)
{
    csv_t *c = state;
    char num[48];
    for (size_t i = 0; i < c->ncols; i++) {
        if (i)
            fputc(',', c->f);
        switch (cells[i].type) {
        case CELL_INT:
            fprintf(c->f, "%lld", (long long)cells[i].i);
            break;
        case CELL_REAL:
            if (isfinite(cells[i].d)) /* NAN and infinities stay empty */
                fputs(fmt_real(num, sizeof(num), cells[i].d), c->f);
            break;
        case CELL_TEXT:
            c->esc.len = 0;
            if (buf_append(&c->esc, "", 0) < 0 || text_escape(&c->esc, cells[i].s, strlen(cells[i].s)) < 0)
                return -ENOMEM;
            put_field(c->f, c->esc.p);
            break;
        default:
            break;
        }
    }
    fputc('\n', c->f);
    return ferror(c->f) ? -EIO : 0;
}

static int csv_end(void *state)
{
    csv_t *c = state;
    if (!c)
        return 0;
    int r = fflush(c->f) != 0 || ferror(c->f) ? -EIO : 0;
    buf_free(&c->esc);
    free(c);
    return r;
}

const js_tab_sink_t sink_csv = {.name = "csv", .begin = csv_begin, .row = csv_row, .end = csv_end};
