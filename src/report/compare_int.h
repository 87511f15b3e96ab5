/* SPDX-License-Identifier: MIT
 *
 * What compare.c (the page comparing two runs, report_compare_html) needs of the report builder's internals
 * (report.c), and nothing else: one run's header fields as text, its summary rows, the unit a summary row is
 * shown in, the charts of two runs overlaid, and the run's events (kept by report.c as it reads the marks).
 * Private to src/report/.
 */
#ifndef JOBSCOPE_REPORT_COMPARE_INT_H
#define JOBSCOPE_REPORT_COMPARE_INT_H

#include "model/figure.h"
#include "report/advice.h"
#include "report/html.h"
#include "report/report.h"

/* One run's header as text (the first node of a finished report). */
typedef struct {
    const char *command, *host, *state, *file; /* NULL: not recorded; owned by the report */
    char start[48], exit[160], interval[48], duration[48];
    char note[640]; /* what the end of an unclosed recording means; "" when it is complete */
} cmp_run_t;

/* The events (marks of kind event) of a run for compare's table: the first and the last CMP_EVENTS_KEPT, read
 * from the events the report keeps for its charts and its own table (report.c's event list, which keeps more
 * of them), each with its time from the run's start, name and JSON data. */
#define CMP_EVENTS_KEPT 25
typedef struct {
    double t;         /* seconds from the run's start */
    const char *name; /* NULL: none; owned by the report */
    const char *data; /* the JSON given with the event (at most the report's kept bytes); NULL: none */
    size_t index;     /* its number among all the run's events, from 0 */
} cmp_event_t;

/* report_cmp_events: how many events `r` has kept (the return) and seen in all (*ret_total). */
size_t report_cmp_events(const js_report_t *r, size_t *ret_total);

/* report_cmp_event: the kept event `j` (< report_cmp_events(r)) in order of arrival, into *ret (strings
 * owned by `r`). */
void report_cmp_event(const js_report_t *r, size_t j, cmp_event_t *ret);

/* report_cmp_run: fill *ret from the first node of `r` (finished). */
void report_cmp_run(const js_report_t *r, cmp_run_t *ret);

/* report_cmp_root: the summary rows of the first node of `r` (owned by `r`; NULL before it is finished). */
const js_figure_t *report_cmp_root(const js_report_t *r);

/* report_cmp_row_unit: the unit the page shows a summary row's `unit` in, and in *scale the factor to it
 * (NULL: a plain number). */
const char *report_cmp_row_unit(const char *unit, double *scale);

/* report_cmp_charts: the charts of the first nodes of `a` and `b` overlaid on one time axis from each run's
 * start (B dashed, no marks), labelled `label_a` and `label_b`, appended to `h`; `fa`: a's facts. */
void report_cmp_charts(js_html_t *h, js_report_t *a, js_report_t *b, const js_facts_t *fa,
                       const char *label_a, const char *label_b);

#endif
