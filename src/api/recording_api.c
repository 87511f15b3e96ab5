/* SPDX-License-Identifier: MIT
 *
 * Reading recordings through the public API (include/jobscope.h): js_recording_summary and
 * js_recording_export, for bindings that have no CLI at hand (python/jobscope's read() and compare()). The
 * same replay as `jobscope summary` and `jobscope export` (api/replay.h), and the same export: the view
 * exporter (sinks/view_export.h) that `jobscope export` writes its tables with. The view "summary" is the
 * summary table itself, one row per figure with its unit and method (what Python's Recording.figures reads).
 */
#include "api/api.h"
#include "api/replay.h"

#include "core/json.h"
#include "sinks/view_export.h"
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

/* each_sample: the replay's callback: the view's rows of each sample fed */
static int each_sample(void *arg, const js_recording_t *rec, js_model_t *m, const js_sample_t *s)
{
    (void)rec;
    (void)s;
    return view_export_sample(arg, m);
}

/* The summary as a table ("summary": one row per figure of the summary table, model/figure.h): the path, the
 * value (a number, a whole number, text, or true/false), its unit, kind, whether it is exact, and how it was
 * obtained; after the time columns of the last sample. */
#define NSUMMARY 6

#define NTIME 3 /* time, unix_s and sample: the export's first columns */

/* The summary view's exporter: the tabular sink and the header and row being written. */
typedef struct {
    const js_tab_sink_t *sink;
    FILE *f;
    void *st;
    bool begun;
    const char **cols;
    js_cell_t *cells;
} exp_t;

/* exp_begin: the header of table `t` after the time columns, once. Returns 0 or a negative errno. */
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

static const js_column_t summary_columns[NSUMMARY] = {
    {"figure", "text", JS_TEXT, JS_LABEL, 0, "the figure's path in the summary JSON"},
    {"value", "text", JS_TEXT, JS_GAUGE, 0, "its value"},
    {"unit", "text", JS_TEXT, JS_LABEL, 0, "its unit"},
    {"kind", "text", JS_TEXT, JS_LABEL, 0, "number, integer, bool, text or json"},
    {"exact", "text", JS_TEXT, JS_LABEL, 0, "exact, sampled, or empty where unsaid"},
    {"method", "text", JS_TEXT, JS_LABEL, 0, "how it was obtained"},
};
static const js_table_t summary_view = {"summary", "the summary: one row per figure", NSUMMARY,
                                        summary_columns};

static js_cell_t figure_cell(const js_figure_t *f)
{
    if (!f->present)
        return cell_missing();
    switch (f->kind) {
    case FIG_NUM:
        return cell_real(f->num);
    case FIG_INT:
        return cell_int(f->i);
    case FIG_BOOL:
        return cell_text(f->b ? "true" : "false");
    default:
        return cell_text(f->text);
    }
}

/* export_summary: the rows of the summary of recording `path` into x's sink. Returns 0 or a negative errno.
 */
static int export_summary(const char *path, exp_t *x)
{
    static const char *const kinds[FIG_KIND_MAX] = {"number", "integer", "bool", "text",
                                                    "json",   "object",  "array"};
    static const char *const exact[FIG_EXACT_MAX] = {NULL, "sampled", "exact"};
    js_recording_t *r;
    js_model_t *m;
    char err[1024];
    int rc = replay_open(path, &r, &m, NULL, NULL, err, sizeof(err));
    if (rc < 0)
        return rc;
    js_summary_t su;
    js_run_info_t info;
    replay_summarize(r, path, m, &info, &su);
    js_summary_table_t *t = summary_build(&info, &su, m);
    const js_tree_point_t *p = model_point(m);
    js_buf_t key = {0};
    rc = t ? exp_begin(x, &summary_view) : -ENOMEM;
    char tbuf[40] = "", s2[32];
    if (p) {
        time_t sec = (time_t)(p->t_unix_ns / 1000000000);
        struct tm tm;
        gmtime_r(&sec, &tm);
        strftime(s2, sizeof(s2), "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(tbuf, sizeof(tbuf), "%s.%03dZ", s2, (int)((p->t_unix_ns / 1000000) % 1000));
    }
    const js_figure_t *root = t ? figure_croot(t) : NULL;
    for (const js_figure_t *f = fig_next_row(root, NULL); rc == 0 && f; f = fig_next_row(root, f)) {
        key.len = 0;
        if ((rc = fig_path(f, &key)) < 0)
            break;
        x->cells[0] = p ? cell_text(tbuf) : cell_missing();
        x->cells[1] = p ? cell_real((double)p->t_unix_ns / 1e9) : cell_missing();
        x->cells[2] = p ? cell_int(p->seq) : cell_missing();
        x->cells[NTIME + 0] = cell_text(key.p);
        x->cells[NTIME + 1] = figure_cell(f);
        x->cells[NTIME + 2] = f->unit ? cell_text(f->unit) : cell_missing();
        x->cells[NTIME + 3] = cell_text(kinds[f->kind]);
        x->cells[NTIME + 4] = exact[f->exact] ? cell_text(exact[f->exact]) : cell_missing();
        x->cells[NTIME + 5] = f->method ? cell_text(f->method) : cell_missing();
        rc = x->sink->row(x->st, x->cells);
    }
    buf_free(&key);
    figure_free(t);
    model_free(m);
    recording_close(r);
    return rc;
}

JS_API int js_recording_export(const char *path, const char *view, const char *format, const char *out)
{
    if (!path || !view || !format || !out)
        return -EINVAL;
    const js_tab_sink_t *sink = view_export_format(format);
    if (!sink)
        return -EINVAL;
    bool summary = strcmp(view, "summary") == 0;
    if (!summary && !view_export_known(view, NULL)) /* the view must exist in this build */
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
    FILE *f = NULL;
    if (fd < 0 || !(f = fdopen(fd, "w"))) {
        rc = -errno;
        if (fd >= 0)
            close(fd);
        outfile_abort(&of);
        return rc;
    }
    js_view_export_t *x = NULL;
    js_model_t *m = NULL;
    r = NULL;
    int e = 0;
    if (summary) {
        exp_t sx = {.sink = sink, .f = f};
        rc = export_summary(path, &sx);
        e = sx.begun ? sink->end(sx.st) : 0;
        free(sx.cols);
        free(sx.cells);
    } else {
        rc = view_export_open(&x, sink, f, view, false);
        if (rc == 0)
            rc = replay_open_ex(path, strcmp(view, "process") == 0 ? REPLAY_PROCS : 0, &r, &m, each_sample, x,
                                err, sizeof(err));
        e = x ? view_export_finish(x, m) : 0;
    }
    if (rc == 0 && e < 0)
        rc = e;
    if (fclose(f) != 0 && rc == 0)
        rc = -errno;
    view_export_free(x);
    if (rc == 0)
        rc = outfile_commit(&of);
    else
        outfile_abort(&of);
    model_free(m);
    recording_close(r);
    return rc;
}
