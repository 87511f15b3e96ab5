/* SPDX-License-Identifier: MIT
 *
 * The page comparing two runs (report_compare_html, report.h): both runs' facts side by side, a table of
 * differences with ratios, the phases of each, the events of each side by side (bounded: the first and last
 * CMP_EVENTS_KEPT of each run), each run's advice, and the same charts overlaid on a common time axis from
 * each run's start (B dashed). It reads the report builder only through compare_int.h.
 */
#include "report/compare_int.h"

#include "report/first.h"
#include "report/units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ADVICE 32
#define EVENT_DATA_SHOWN                                                                                     \
    160 /* bytes of an event's JSON data shown in the table; longer data is cut with "…" */

/* ---- events ---- */

/* shown_events: how many of the kept events of `r` the table lists (at most 2 * CMP_EVENTS_KEPT), and in
 * *ret_total how many the run had; shown_event: the i-th listed, the first and the last CMP_EVENTS_KEPT of
 * those the report kept. */
static size_t shown_events(const js_report_t *r, size_t *ret_total)
{
    size_t kept = report_cmp_events(r, ret_total);
    return kept < 2 * CMP_EVENTS_KEPT ? kept : 2 * CMP_EVENTS_KEPT;
}

static void shown_event(const js_report_t *r, size_t i, cmp_event_t *ret)
{
    size_t total, kept = report_cmp_events(r, &total), shown = shown_events(r, &total);
    report_cmp_event(r, i < CMP_EVENTS_KEPT ? i : kept - (shown - i), ret);
}

/* event_cells: one run's cells of a row of the events table: its i-th kept event (none past the last),
 * with a row saying how many were left out before the kept last ones. */
static void event_cells(js_html_t *h, const js_report_t *r, size_t row)
{
    size_t total, kept = shown_events(r, &total), skipped = total - kept;
    bool gap = skipped > 0;
    if (gap && row == CMP_EVENTS_KEPT) {
        html_printf(h, "<td colspan=\"4\" class=\"note\">\xe2\x80\xa6 %zu more event%s \xe2\x80\xa6</td>",
                    skipped, skipped == 1 ? "" : "s");
        return;
    }
    size_t i = gap && row > CMP_EVENTS_KEPT ? row - 1 : row;
    if (i >= kept) {
        html_raw(h, "<td></td><td></td><td></td><td></td>");
        return;
    }
    cmp_event_t ev, *e = &ev;
    shown_event(r, i, e);
    char tb[48];
    html_printf(h, "<td class=\"n\">%zu</td><td class=\"n\">", e->index + 1);
    html_text(h, units_time(tb, sizeof(tb), e->t, &(js_timeaxis_t){0}));
    html_raw(h, "</td><td>");
    html_text(h, e->name ? e->name : "");
    html_raw(h, "</td><td class=\"x\">");
    if (e->data && strlen(e->data) > EVENT_DATA_SHOWN) {
        char cut[EVENT_DATA_SHOWN + 1];
        size_t n = EVENT_DATA_SHOWN;
        while (n > 0 && ((unsigned char)e->data[n] & 0xC0) == 0x80)
            n--; /* not inside a UTF-8 sequence */
        memcpy(cut, e->data, n);
        cut[n] = '\0';
        html_text(h, cut);
        html_raw(h, "\xe2\x80\xa6");
    } else if (e->data) {
        html_text(h, e->data);
    }
    html_raw(h, "</td>");
}

/* compare_events: the section "Events of each run" (id "events") when either run has events: a row per
 * event, A's i-th beside B's i-th (its number, time from its run's start, name, data), the first and the last
 * CMP_EVENTS_KEPT of each. */
static void compare_events(js_html_t *h, const js_report_t *a, const js_report_t *b, const char *label_a,
                           const char *label_b)
{
    const js_report_t *run[2] = {a, b};
    size_t total[2], shown[2] = {shown_events(a, &total[0]), shown_events(b, &total[1])};
    if (!total[0] && !total[1])
        return;
    html_section_begin(h, "events", "Events of each run");
    html_printf(
        h,
        "<p>%zu event%s in A, %zu in B (marks of kind event: `jobscope mark event NAME --data JSON`), "
        "each with its time from its run's start",
        total[0], total[0] == 1 ? "" : "s", total[1]);
    if (total[0] > 2 * CMP_EVENTS_KEPT || total[1] > 2 * CMP_EVENTS_KEPT)
        html_printf(h, "; of a run with more than %d, the first and the last %d are listed",
                    2 * CMP_EVENTS_KEPT, CMP_EVENTS_KEPT);
    html_raw(h, ".</p>\n<table class=\"tb events\">\n<thead><tr><th scope=\"colgroup\" colspan=\"4\">");
    html_text(h, label_a);
    html_raw(h, " (A)</th><th scope=\"colgroup\" colspan=\"4\">");
    html_text(h, label_b);
    html_raw(h, " (B)</th></tr>\n<tr>");
    for (int k = 0; k < 2; k++)
        html_raw(h, "<th scope=\"col\">#</th><th scope=\"col\">time</th><th scope=\"col\">event</th><th "
                    "scope=\"col\">data</th>");
    html_raw(h, "</tr></thead>\n<tbody>\n");
    size_t rows = 0;
    for (int k = 0; k < 2; k++) {
        size_t n = shown[k] + (total[k] > shown[k]);
        rows = n > rows ? n : rows;
    }
    for (size_t row = 0; row < rows; row++) {
        html_raw(h, "<tr>");
        for (int k = 0; k < 2; k++)
            event_cells(h, run[k], row);
        html_raw(h, "</tr>\n");
    }
    html_raw(h, "</tbody></table>\n");
    html_section_end(h);
}

static js_cell_t num_or_missing(double v)
{
    return isfinite(v) ? cell_real(v) : cell_missing();
}

static void h3(js_html_t *h, const char *title)
{
    html_raw(h, "<h3>");
    html_text(h, title);
    html_raw(h, "</h3>\n");
}

static void diff_row(js_cell_t *c, const char *what, double a, double b, const char *unit,
                     const char **ret_unit)
{
    (void)unit;
    c[0] = cell_text(what);
    c[1] = num_or_missing(a);
    c[2] = num_or_missing(b);
    c[3] = isfinite(a) && isfinite(b) ? cell_real(b - a) : cell_missing();
    c[4] = isfinite(a) && isfinite(b) && a != 0 ? cell_real(b / a) : cell_missing();
    *ret_unit = unit;
}

/* compare_header: the title, and both runs side by side (with a note for a recording not closed). */
static void compare_header(js_html_t *h, const js_report_t *a, const js_report_t *b, const char *title,
                           const char *label_a, const char *label_b)
{
    html_raw(h, "<header>\n<h1>");
    html_text(h, title);
    html_raw(h, "</h1>\n<p class=\"sub\">");
    html_text(h, "Two runs on a common time axis, each from its own start; B is drawn dashed.");
    html_raw(h, "</p>\n</header>\n");
    cmp_run_t run[2];
    report_cmp_run(a, &run[0]);
    report_cmp_run(b, &run[1]);
    const struct {
        const char *what, *a, *b;
        bool code; /* command lines and paths: monospace, wrapped anywhere */
    } rows[] = {
        {"command", run[0].command, run[1].command, true},
        {"host", run[0].host, run[1].host, false},
        {"start", run[0].start, run[1].start, false},
        {"duration", run[0].duration, run[1].duration, false},
        {"exit status", run[0].exit, run[1].exit, false},
        {"recording", run[0].state, run[1].state, false},
        {"interval", run[0].interval, run[1].interval, false},
        {"file", run[0].file, run[1].file, true},
    };
    html_raw(h, "<table class=\"tb runs\">\n<thead><tr><th></th><th scope=\"col\">");
    html_text(h, label_a);
    html_raw(h, " (A)</th><th scope=\"col\">");
    html_text(h, label_b);
    html_raw(h, " (B)</th></tr></thead>\n<tbody>\n");
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        html_raw(h, "<tr><th scope=\"row\">");
        html_text(h, rows[i].what);
        for (int k = 0; k < 2; k++) {
            const char *v = k ? rows[i].b : rows[i].a;
            html_raw(h, rows[i].code ? "</th><td class=\"x\">" + (k ? 5 : 0) : "</th><td>" + (k ? 5 : 0));
            if (v)
                html_text(h, v);
            else
                html_raw(h, "\xe2\x80\x94");
            html_raw(h, "</td>");
        }
        html_raw(h, "</tr>\n");
    }
    html_raw(h, "</tbody></table>\n");
    for (int k = 0; k < 2; k++) {
        if (run[k].note[0]) {
            html_raw(h, "<p class=\"note\">");
            html_text(h, k ? "B: " : "A: ");
            html_text(h, run[k].note);
            html_raw(h, "</p>\n");
        }
    }
}

/* gpu_mean: the mean utilisation of the run's GPUs (NAN: none). */
static double gpu_mean(const js_facts_t *f)
{
    if (!f->ngpus)
        return NAN;
    double g = 0;
    for (size_t i = 0; i < f->ngpus; i++)
        g += f->gpu_util_mean[i] / (double)f->ngpus;
    return g;
}

/* diff_table: the rows of differences, one table-row at a time in one table (html_table takes one unit per
 * column; these rows each have theirs). */
static void diff_table(js_html_t *h, const js_cell_t *cells, const char *const *units, size_t nrows)
{
    static const char *const cols[] = {"", "A", "B", "B \xe2\x88\x92 A", "B / A"};
    html_raw(h, "<table class=\"tb diff\">\n<thead><tr>");
    for (size_t c = 0; c < 5; c++) {
        html_raw(h, "<th scope=\"col\">");
        html_text(h, cols[c]);
        html_raw(h, "</th>");
    }
    html_raw(h, "</tr></thead>\n<tbody>\n");
    for (size_t i = 0; i < nrows; i++) {
        html_raw(h, "<tr><th scope=\"row\">");
        html_text(h, cells[i * 5].s);
        html_raw(h, "</th>");
        for (size_t c = 1; c < 5; c++) {
            const js_cell_t *v = &cells[i * 5 + c];
            html_raw(h, "<td class=\"n\">");
            if (v->type != CELL_REAL)
                html_raw(h, "\xe2\x80\x94");
            else if (c == 4)
                html_printf(h, "%s\xc3\x97", units_sig((char[32]){0}, 32, round(v->d * 1000) / 1000, 4));
            else {
                char tb[48];
                html_raw(h, c == 3 && v->d > 0                                        ? "+"
                            : c == 3 && v->d < 0 && strcmp(units[i], "duration") == 0 ? "\xe2\x88\x92"
                                                                                      : "");
                if (strcmp(units[i], "duration") == 0)
                    html_text(h, units_time(tb, sizeof(tb), fabs(v->d), &(js_timeaxis_t){0}));
                else if (c == 3 && v->d < 0) {
                    html_raw(h, "\xe2\x88\x92");
                    html_value(h, -v->d, units[i]);
                } else
                    html_value(h, v->d, units[i]);
            }
            html_raw(h, "</td>");
        }
        html_raw(h, "</tr>\n");
    }
    html_raw(h, "</tbody></table>\n");
}

/* compare_differences: the section of differences, the summary's rows (a row's unit where `unit` is NULL),
 * then what the advice's facts derive. */
static void compare_differences(js_html_t *h, const js_report_t *a, const js_report_t *b,
                                const js_facts_t *fa, const js_facts_t *fb)
{
    html_section_begin(h, "differences", "Differences");
    enum { ROWS = 17 };
    js_cell_t cells[ROWS * 5];
    const char *units[ROWS];
    size_t r = 0;
    struct {
        const char *what, *path, *unit;
        double a, b;
    } rows[] = {
        {"wall time", "wall_time_s", "duration", NAN, NAN},
        {"CPU time", "cpu.total_s", NULL, NAN, NAN},
        {"mean cores in use", "cpu.mean_cores", NULL, NAN, NAN},
        {"peak cores in use", "cpu.max_cores", NULL, NAN, NAN},
        {"CPU efficiency", NULL, "fraction", fa->efficiency, fb->efficiency},
        {"peak memory", "memory.peak_bytes", NULL, NAN, NAN},
        {"peak RSS sum, sampled", "memory.peak_rss_sum_bytes", NULL, NAN, NAN},
        {"peak RSS, kernel", "memory.peak_rss_kernel_bytes", NULL, NAN, NAN},
        {"read from storage", "io.read_bytes", NULL, NAN, NAN},
        {"written to storage", "io.write_bytes", NULL, NAN, NAN},
        {"read through calls", "io.read_chars", NULL, NAN, NAN},
        {"written through calls", "io.write_chars", NULL, NAN, NAN},
        {"energy of the node (RAPL)", "energy.node_energy_j", NULL, NAN, NAN},
        {"energy of the job (attributed)", "energy.attribution.scope_energy_j", NULL, NAN, NAN},
        {"mean GPU utilisation", NULL, "fraction", gpu_mean(fa), gpu_mean(fb)},
        {"energy of the job's GPUs", "gpu.job.energy_j", NULL, NAN, NAN},
        {"processes seen", "processes.total", "count", NAN, NAN},
        {"samples", "samples.taken", "count", NAN, NAN},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]) && r < ROWS; i++) {
        const char *unit = rows[i].unit;
        if (rows[i].path) {
            const js_figure_t *x = fig_get(report_cmp_root(a), rows[i].path),
                              *y = fig_get(report_cmp_root(b), rows[i].path);
            double scale = 1;
            const char *u = report_cmp_row_unit(x ? x->unit : y ? y->unit : NULL, &scale);
            rows[i].a = fig_value(x) * scale;
            rows[i].b = fig_value(y) * scale;
            if (!unit)
                unit = u;
        }
        if (!isfinite(rows[i].a) && !isfinite(rows[i].b))
            continue;
        diff_row(&cells[r * 5], rows[i].what, rows[i].a, rows[i].b, unit, &units[r]);
        r++;
    }
    diff_table(h, cells, units, r);
    html_section_end(h);
}

/* compare_advice: each run's advice. */
static void compare_advice(js_html_t *h, const js_facts_t *fa, const js_facts_t *fb, const char *label_a,
                           const char *label_b)
{
    html_section_begin(h, "advice", "Advice for each run");
    js_advice_item_t *items = calloc(MAX_ADVICE, sizeof(*items));
    if (!items)
        h->err = -ENOMEM;
    for (int k = 0; k < 2 && items; k++) {
        js_advice_t view[MAX_ADVICE];
        size_t n = advice_eval(k ? fb : fa, items, MAX_ADVICE);
        h3(h, k ? label_b : label_a);
        for (size_t i = 0; i < n; i++)
            view[i] = advice_view(&items[i]);
        if (n)
            html_advice(h, view, n);
        else
            html_para(h, "No rule fired.");
    }
    free(items);
    html_section_end(h);
}

int report_compare_html(js_report_t *a, js_report_t *b, const char *label_a, const char *label_b,
                        js_buf_t *out)
{
    if (!report_summary(a, 0) || !report_summary(b, 0))
        return -EINVAL;
    const js_facts_t *fa0 = report_facts(a), *fb0 = report_facts(b);
    if (!fa0 || !fb0)
        return -ENOMEM;
    js_facts_t *fa = malloc(sizeof(*fa)), *fb = malloc(sizeof(*fb));
    if (!fa || !fb) {
        free(fa);
        free(fb);
        return -ENOMEM;
    }
    *fa = *fa0;
    *fb = *fb0;
    label_a = label_a ? label_a : "A";
    label_b = label_b ? label_b : "B";
    js_html_t h = {.buf = out};
    char title[512];
    snprintf(title, sizeof(title), "jobscope comparison: %s against %s", label_a, label_b);
    html_begin(&h, title);
    compare_header(&h, a, b, title, label_a, label_b);
    compare_differences(&h, a, b, fa, fb);
    first_compare_phases(&h, report_summary(a, 0), report_summary(b, 0), label_a, label_b);
    compare_events(&h, a, b, label_a, label_b);
    compare_advice(&h, fa, fb, label_a, label_b);
    report_cmp_charts(&h, a, b, fa, label_a, label_b);
    free(fa);
    free(fb);
    return html_end(&h);
}
