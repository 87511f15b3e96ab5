/* SPDX-License-Identifier: MIT
 *
 * Reading recordings through the public API (include/jobscope.h): js_recording_summary and
 * js_recording_export, for bindings that have no CLI at hand (python/jobscope's read() and compare()). The
 * same replay as `jobscope summary` and `jobscope export` (api/replay.h), and the same table layout as the
 * export: time, unix_s and sample first, then the view's columns.
 */
#include "api/api.h"
#include "api/replay.h"

#include "core/json.h"
#include "sinks/tabsink.h"
#include "sys/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

JS_API char *js_recording_summary(const char *path)
{
    if (!path) {
        errno = EINVAL;
        return NULL;
    }
    js_recording_t *r;
    js_model_t *m;
    char err[1024];
    int rc = replay_open(path, &r, &m, NULL, NULL, err, sizeof(err));
    if (rc < 0) {
        errno = -rc;
        return NULL;
    }
    js_summary_t su;
    js_run_info_t info;
    replay_summarize(r, path, m, &info, &su);
    js_buf_t b = {0};
    rc = summary_json(&b, &info, &su, m);
    model_free(m);
    recording_close(r);
    if (rc < 0) {
        buf_free(&b);
        errno = ENOMEM;
        return NULL;
    }
    return b.p;
}

#define NTIME 3

typedef struct {
    const char *view;
    const js_tab_sink_t *sink;
    FILE *f;
    void *st;
    bool begun;
    const char **cols;
    js_cell_t *cells;
    int rc;
} exp_t;

static int exp_begin(exp_t *x, const js_table_t *t)
{
    if (x->begun)
        return 0;
    size_t n = NTIME + t->ncols;
    x->cols = calloc(n, sizeof(*x->cols));
    x->cells = calloc(n, sizeof(*x->cells));
    if (!x->cols || !x->cells)
        return -ENOMEM;
    x->cols[0] = "time";
    x->cols[1] = "unix_s";
    x->cols[2] = "sample";
    for (size_t i = 0; i < t->ncols; i++)
        x->cols[NTIME + i] = t->cols[i].name;
    x->begun = true;
    return x->sink->begin(x->f, x->cols, n, &x->st);
}

static js_cell_t cell_of(const js_rows_t *r, const js_column_t *c, const js_value_t *v)
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

static int exp_each(void *arg, const js_recording_t *rec, js_model_t *m, const js_sample_t *s)
{
    (void)rec;
    (void)s;
    exp_t *x = arg;
    js_view_t v;
    int rc = model_view(m, x->view, &v);
    if (rc == -ENODATA)
        return 0;
    if (rc == 0)
        rc = exp_begin(x, v.table);
    const js_tree_point_t *p = model_point(m);
    char tbuf[40], s2[32];
    time_t t = (time_t)(p->t_unix_ns / 1000000000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(s2, sizeof(s2), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(tbuf, sizeof(tbuf), "%s.%03dZ", s2, (int)((p->t_unix_ns / 1000000) % 1000));
    for (size_t i = 0; rc == 0 && i < v.rows->nrows; i++) {
        const js_value_t *row = rows_row(v.rows, i);
        x->cells[0] = cell_text(tbuf);
        x->cells[1] = cell_real((double)p->t_unix_ns / 1e9);
        x->cells[2] = cell_int(p->seq);
        for (size_t c = 0; c < v.table->ncols; c++)
            x->cells[NTIME + c] = cell_of(v.rows, &v.table->cols[c], &row[c]);
        rc = x->sink->row(x->st, x->cells);
    }
    if (rc < 0)
        x->rc = rc;
    return rc;
}

JS_API int js_recording_export(const char *path, const char *view, const char *format, const char *out)
{
    if (!path || !view || !format || !out)
        return -EINVAL;
    exp_t x = {.view = view};
    if (strcmp(format, "csv") == 0)
        x.sink = &sink_csv;
    else if (strcmp(format, "jsonl") == 0)
        x.sink = &sink_jsonl;
    else
        return -EINVAL;
    /* the view must exist in this build (data-dependent columns aside) */
    js_model_cfg_t cfg = {.clk_tck = 100, .interval_ns = 1000000000};
    js_model_t *probe = model_new(&cfg);
    if (!probe)
        return -ENOMEM;
    bool found = false;
    for (size_t i = 0;; i++) {
        const js_table_t *t = model_view_table(probe, i);
        if (!t)
            break;
        found |= strcmp(t->name, view) == 0;
    }
    model_free(probe);
    if (!found && strcmp(view, "system") != 0) /* `system` has its columns (and its listing) after a feed */
        return -ENOENT;
    char err[1024];
    js_recording_t *r = NULL;
    int rc = recording_open(path, &r, err, sizeof(err));
    recording_close(r);
    if (rc < 0)
        return rc;
    /* written under a temporary name and renamed over `out` when complete (sys/outfile.h) */
    js_outfile_t of;
    if ((rc = outfile_open(&of, out, true, false)) < 0)
        return rc;
    int fd = dup(of.fd);
    if (fd < 0 || !(x.f = fdopen(fd, "w"))) {
        rc = -errno;
        if (fd >= 0)
            close(fd);
        outfile_abort(&of);
        return rc;
    }
    js_model_t *m = NULL;
    r = NULL;
    rc = replay_open_ex(path, strcmp(view, "process") == 0 ? REPLAY_PROCS : 0, &r, &m, exp_each, &x, err,
                        sizeof(err));
    if (rc == 0 && !x.begun && m) { /* no row: still a header */
        const js_table_t *t = NULL;
        for (size_t i = 0; (t = model_view_table(m, i)) && strcmp(t->name, view) != 0; i++)
            ;
        rc = t ? exp_begin(&x, t) : 0;
    }
    int e = x.begun ? x.sink->end(x.st) : 0;
    if (rc == 0 && e < 0)
        rc = e;
    if (fclose(x.f) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0)
        rc = outfile_commit(&of);
    else
        outfile_abort(&of);
    model_free(m);
    recording_close(r);
    free(x.cols);
    free(x.cells);
    return rc;
}
