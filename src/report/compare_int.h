/* SPDX-License-Identifier: MIT
 *
 * What compare.c (the page comparing two runs, report_compare_html) needs of the report builder's internals
 * (report.c), and nothing else: one run's header fields as text, its summary rows, the unit a summary row is
 * shown in, the charts of two runs overlaid, and the run's events (kept by report.c as it reads the marks,
 * held by compare.c's event list). Private to src/report/.
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

/* The events (marks of kind event) of a run for compare's table, bounded: the first and the last
 * CMP_EVENTS_KEPT, each with its time from the run's start, name and JSON data, and how many there were. */
#define CMP_EVENTS_KEPT 25
typedef struct {
    double t;   /* seconds from the run's start */
    char *name; /* NULL: none */
    char *data; /* the JSON given with the event; NULL: none */
} cmp_event_t;
typedef struct {
    cmp_event_t first[CMP_EVENTS_KEPT],
        last[CMP_EVENTS_KEPT]; /* last: a ring of the latest, once first is full */
    size_t total;              /* events added */
} cmp_events_t;

/* cmp_events_add: count an event and keep it (name and data copied, either NULL) if it is among the first or,
 * so far, the last CMP_EVENTS_KEPT. 0 or -ENOMEM (then it is counted, not kept). */
int cmp_events_add(cmp_events_t *l, double t, const char *name, const char *data);

/* cmp_events_free: free what `l` holds (not `l`); accepts NULL. */
void cmp_events_free(cmp_events_t *l);

/* report_cmp_events: the events of `r` (owned by `r`). */
const cmp_events_t *report_cmp_events(const js_report_t *r);

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
