/* SPDX-License-Identifier: MIT
 *
 * The report's first screen ("At a glance", like the first page of Linaro Performance Reports): where the
 * time went (CPU in use, waiting for CPU, waiting for I/O, idle cores; GPUs busy and idle), the memory
 * headline and what to request with headroom, the totals in units a person reads for the run's size
 * (core-hours and kWh for long or multi-node jobs), and a table of the phases by name. It reads the advice's
 * facts (advice.h) and the nodes' summary tables (model/figure.h), nothing else; docs/REPORT.md shows it.
 * Also `compare`'s table of the two runs' phases, matched by name.
 */
#ifndef JOBSCOPE_FIRST_H
#define JOBSCOPE_FIRST_H

#include "model/figure.h"
#include "report/advice.h"
#include "report/html.h"

#include <stddef.h>

/* At most this many phases are listed on the first screen; the rest are counted (the summary has them all).
 */
#define FIRST_MAX_PHASES 12

/* first_request_bytes: the memory to request for a peak of `peak` bytes: 1.25 x the peak rounded up to
 * 256 MiB (below 4 GiB) or to 1 GiB; NAN for a peak that is missing or not positive. */
double first_request_bytes(double peak);

/* first_duration: a duration for people, units named: "4 ms", "42 s", "12 min 34 s", "1 h 02 min", then hours
 * from 48 h ("866.8 h"). Returns buf (cap 32 or more). */
char *first_duration(char *buf, size_t cap, double s);

/* first_screen: write the section (id "first") from the job's facts `f` and the summaries of its `nsums`
 * nodes (sums[i] may be NULL: that node's figures are missing; phases are the first node's). Returns h->err.
 */
int first_screen(js_html_t *h, const js_facts_t *f, const js_summary_table_t *const *sums, size_t nsums);

/* At most this many phases are compared; the rest are counted. */
#define FIRST_CMP_MAX_PHASES 24

/* first_compare_phases: compare's section "Phases of each run" (id "phases"): the phases of run A (summary
 * `a`) and run B matched by name, A's first in A's order, then those only B has: wall and CPU of each, CPU
 * B / A, peak memory of each. Nothing when neither run has phases. Returns h->err. */
int first_compare_phases(js_html_t *h, const js_summary_table_t *a, const js_summary_table_t *b,
                         const char *label_a, const char *label_b);

#endif
