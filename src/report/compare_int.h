/* SPDX-License-Identifier: MIT
 *
 * What compare.c (the page comparing two runs, report_compare_html) needs of the report builder's internals
 * (report.c), and nothing else: one run's header fields as text, its summary rows, the unit a summary row is
 * shown in, and the charts of two runs overlaid. Private to src/report/.
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
