/* SPDX-License-Identifier: MIT
 *
 * A model view as a table (see view_export.h).
 */
#include "sinks/view_export.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct js_view_export {
    const char *view;
    const js_tab_sink_t *sink;
    FILE *f;
    bool node_column;
    const char *node;       /* the node of the next rows (node_column) */
    size_t ntime;           /* time, unix_s, sample (and node) */
    const js_table_t *head; /* the header's view (a node's view may have other data-dependent columns) */
    void *st;               /* the sink's state, once begun */
    bool begun;
    const char **cols;
    js_cell_t *cells;
    size_t ncols;
};

const js_tab_sink_t *view_export_format(const char *format)
{
    if (strcmp(format, "csv") == 0)
        return &sink_csv;
    if (strcmp(format, "jsonl") == 0)
        return &sink_jsonl;
    return NULL;
}

bool view_export_known(const char *name, FILE *list)
{
    js_model_cfg_t cfg = {.clk_tck = 100, .interval_ns = 1000000000};
    js_model_t *m = model_new(&cfg);
    bool found = name && strcmp(name, "system") == 0; /* its columns (and its listing) come after a feed */
    for (size_t i = 0; m; i++) {
        const js_table_t *t = model_view_table(m, i);
        if (!t)
            break;
        if (list) {
            fprintf(list, "%s: %s\n", t->name, t->help);
            for (size_t c = 0; c < t->ncols; c++)
                fprintf(list, "  %-28s %-9s %s\n", t->cols[c].name, t->cols[c].unit, t->cols[c].help);
            if (!t->ncols)
                fprintf(list, "  (columns depend on the recording: CPUs, interfaces, disks)\n");
        }
        found |= name && strcmp(t->name, name) == 0;
    }
    model_free(m);
    return found;
}

int view_export_open(js_view_export_t **ret, const js_tab_sink_t *sink, FILE *f, const char *view,
                     bool node_column)
{
    js_view_export_t *x = calloc(1, sizeof(*x));
    if (!x)
        return -ENOMEM;
    x->view = view;
    x->sink = sink;
    x->f = f;
    x->node_column = node_column;
    x->node = "";
    x->ntime = node_column ? 4 : 3;
    *ret = x;
    return 0;
}

void view_export_node(js_view_export_t *x, const char *node)
{
    x->node = node ? node : "";
}

/* begin: the header, from the view's descriptor (once). */
static int begin(js_view_export_t *x, const js_table_t *t)
{
    if (x->begun)
        return 0;
    x->ncols = x->ntime + t->ncols;
    x->cols = calloc(x->ncols, sizeof(*x->cols));
    x->cells = calloc(x->ncols, sizeof(*x->cells));
    if (!x->cols || !x->cells)
        return -ENOMEM;
    x->head = t;
    x->cols[0] = "time";
    x->cols[1] = "unix_s";
    x->cols[2] = "sample";
    if (x->node_column)
        x->cols[3] = "node";
    for (size_t i = 0; i < t->ncols; i++)
        x->cols[x->ntime + i] = t->cols[i].name;
    x->begun = true;
    return x->sink->begin(x->f, x->cols, x->ncols, &x->st);
}

static js_cell_t value_cell(const js_rows_t *r, const js_column_t *c, const js_value_t *v)
{
    if (!v->present)
        return cell_missing();
    switch (c->type) {
    case JS_INT:
        return cell_int(v->i);
    case JS_REAL:
        return isnan(v->d) ? cell_missing() : cell_real(v->d);
    default:
        return cell_text(rows_str(r, v));
    }
}

/* fmt_time: UTC with milliseconds, "2024-05-01T12:00:00.250Z". */
static void fmt_time(char *buf, size_t cap, int64_t unix_ns)
{
    time_t t = (time_t)(unix_ns / 1000000000);
    struct tm tm;
    gmtime_r(&t, &tm);
    char s[32];
    strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, cap, "%s.%03dZ", s, (int)((unix_ns / 1000000) % 1000));
}

int view_export_sample(js_view_export_t *x, js_model_t *m)
{
    js_view_t v;
    int rc = model_view(m, x->view, &v);
    if (rc == -ENODATA)
        return 0; /* nothing fed yet */
    if (rc == 0)
        rc = begin(x, v.table);
    const js_tree_point_t *p = model_point(m);
    char tbuf[40];
    if (p)
        fmt_time(tbuf, sizeof(tbuf), p->t_unix_ns);
    for (size_t i = 0; rc == 0 && p && i < v.rows->nrows; i++) {
        const js_value_t *row = rows_row(v.rows, i);
        x->cells[0] = cell_text(tbuf);
        x->cells[1] = cell_real((double)p->t_unix_ns / 1e9);
        x->cells[2] = cell_int(p->seq);
        if (x->node_column)
            x->cells[3] = cell_text(x->node);
        if (v.table == x->head || v.table->ncols == x->head->ncols) {
            for (size_t c = 0; c < v.table->ncols; c++)
                x->cells[x->ntime + c] = value_cell(v.rows, &v.table->cols[c], &row[c]);
        } else { /* another node's view with other columns: by name, missing where it has none */
            for (size_t c = 0; c < x->head->ncols; c++) {
                x->cells[x->ntime + c] = cell_missing();
                for (size_t k = 0; k < v.table->ncols; k++)
                    if (!strcmp(v.table->cols[k].name, x->head->cols[c].name))
                        x->cells[x->ntime + c] = value_cell(v.rows, &v.table->cols[k], &row[k]);
            }
        }
        rc = x->sink->row(x->st, x->cells);
    }
    return rc;
}

int view_export_finish(js_view_export_t *x, js_model_t *m)
{
    int rc = 0;
    if (!x->begun && m) { /* no row: still a header */
        const js_table_t *t = NULL;
        for (size_t i = 0; (t = model_view_table(m, i)) && strcmp(t->name, x->view) != 0; i++)
            ;
        rc = t ? begin(x, t) : 0;
    }
    int e = x->begun ? x->sink->end(x->st) : 0;
    x->begun = false;
    x->st = NULL;
    return rc < 0 ? rc : e;
}

void view_export_free(js_view_export_t *x)
{
    if (!x)
        return;
    if (x->begun)
        x->sink->end(x->st);
    free(x->cols);
    free(x->cells);
    free(x);
}
