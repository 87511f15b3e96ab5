/* SPDX-License-Identifier: MIT
 *
 * The report builder: turns what the model derives from a recording into the report page (html.h, svg.h).
 * It is the bridge between the model and the rendering library, which knows nothing of either: per sample
 * it keeps the values it will chart from the model's tree point and views (every view that is present: the
 * known ones get curated charts, any other view one chart per unit of its numeric columns, grouped by its
 * label columns), and from the raw sample the inventory and the per-source collection costs; at the end it
 * takes the run summary (the typed summary table of model/figure.h) for the tables and the advice
 * (advice.h). Absent views leave their section out.
 *
 * A report holds one or more nodes: a plain run (run, attach, watch) is one node; a batch job merged from
 * several hosts is one node per host, each fed by its own model, and the page then has per-node tables,
 * charts with one series per node, a nodes x time heat map, and each node's own charts (up to 4 nodes).
 * `jobscope compare` renders two single-node reports overlaid on a common time axis (each from its start).
 *
 *     js_report_t *rep = report_new();
 *     size_t node;
 *     report_add_node(rep, "host1", &node);
 *     for each sample: model_feed(m, seq, s); report_feed(rep, node, m, s);
 *     report_finish_node(rep, node, m, &info, &su, &run);
 *     js_buf_t page = {0};
 *     report_html(rep, &page);      // then write page.p, buf_free(&page), report_free(rep)
 *
 * Memory: the charted values are kept at full resolution (8 bytes per value; a 24 h run at 1 s with 60
 * series is about 40 MiB) and downsampled when drawn (svg.h keeps every minimum and maximum). A view keeps at
 * most REPORT_MAX_GROUPS label groups (rows); per-CPU views (cpufreq) are kept as mean, minimum and maximum.
 */
#ifndef JOBSCOPE_REPORT_H
#define JOBSCOPE_REPORT_H

#include "core/sample.h"
#include "model/model.h"
#include "model/summary.h"
#include "report/advice.h"
#include "report/html.h"
#include "core/buf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REPORT_MAX_GROUPS 32       /* rows (label groups) kept per view; more are counted and left out */
#define REPORT_MAX_NODE_SECTIONS 4 /* a batch job of more nodes shows the combined charts only */

typedef struct js_report js_report_t;

/* What the page's header says about a run beyond js_run_info_t (from the recording's metadata). Strings are
 * copied by report_finish_node(); NULL or 0 means unknown. */
typedef struct {
    int64_t start_unix_ns; /* when the run started (0: the first sample's time) */
    int64_t stop_unix_ns;  /* when the monitor closed the recording (0: it did not) */
    const char *user;      /* who ran it */
    const char *job;       /* a batch job's id or name */
    const char *scope_how; /* how the scope was resolved ("cgroup of job 123", "user alice") */
    const char *kernel;    /* "Linux 6.1.0 x86_64" */
    const char *cpu_model;
} js_report_run_t;

/* report_new: an empty report. Returns NULL on ENOMEM. */
js_report_t *report_new(void);

/* report_free: accepts NULL. */
void report_free(js_report_t *r);

/* report_add_node: add a node named `name` (copied; "" or NULL: "node N") and return its index in
 * *ret_node. Returns 0 or -ENOMEM. */
int report_add_node(js_report_t *r, const char *name, size_t *ret_node);

/* report_feed: after model_feed() of one sample `s` of node `node` into `m`: keep this sample's charted
 * values (m's tree point and views) and, from `s`, the inventory and the sources' collection costs. `s` may
 * be NULL (then only the model is read). Returns 0, -EINVAL (no such node) or -ENOMEM. */
int report_feed(js_report_t *r, size_t node, js_model_t *m, const js_sample_t *s);

/* report_sample / report_view: what report_feed does, in parts, for callers that hold their own views (a
 * merged recording, tests): start sample `seq` of `node` at t_mono_ns (seconds from start_mono_ns, or from
 * the node's first sample when that is 0), then hand each view's rows of that sample (descriptor `t` must
 * stay valid until report_free). A view named "process" is not kept. 0, -EINVAL or -ENOMEM. */
int report_sample(js_report_t *r, size_t node, int64_t seq, int64_t t_mono_ns, int64_t t_unix_ns,
                  int64_t start_mono_ns);
int report_view(js_report_t *r, size_t node, const js_table_t *t, const js_rows_t *rows);

/* report_finish_node: after the last sample of `node`: keep its summary table (summary_build(info, su, m):
 * the tree model's figures and every part's rows, which the page's tables, facts and compare read), its run
 * facts and `run`. All arguments are copied. Returns 0, -EINVAL or -ENOMEM. */
int report_finish_node(js_report_t *r, size_t node, const js_model_t *m, const js_run_info_t *info,
                       const js_summary_t *su, const js_report_run_t *run);

/* report_add_band / report_add_event: a phase [t0, t1] or an event at t (seconds from the run's start),
 * shaded or marked on every time chart of the page. `label` is copied (NULL: none). 0 or -ENOMEM. */
int report_add_band(js_report_t *r, double t0, double t1, const char *label);
int report_add_event(js_report_t *r, double t, const char *label);

/* report_html: append the report page to `out`. Every node must have been finished. Returns 0, -EINVAL (no
 * node, or one not finished) or -ENOMEM. */
int report_html(js_report_t *r, js_buf_t *out);

/* report_html_docs: report_html, and each of the page's charts also as a standalone SVG document appended
 * to `docs` (NULL: none), in page order, for PNG and PDF (raster.h). */
int report_html_docs(js_report_t *r, js_buf_t *out, js_svgdocs_t *docs);

/* report_compare_html: append a page comparing the first node of `a` with the first node of `b` (both
 * finished): their facts side by side, a table of differences with ratios, and the same charts overlaid on a
 * common time axis from each run's start (B dashed). `label_a`/`label_b` name them (NULL: "A", "B"). */
int report_compare_html(js_report_t *a, js_report_t *b, const char *label_a, const char *label_b,
                        js_buf_t *out);

/* report_summary: the summary table of finished node `node` (owned by the report), NULL before. */
const js_summary_table_t *report_summary(const js_report_t *r, size_t node);

/* report_facts: the advice's facts of the whole report (computed on demand after every node is finished;
 * NULL before, or on ENOMEM). For tests and for `jobscope report --json`-like uses. */
const js_facts_t *report_facts(js_report_t *r);

/* report_series: the values kept for `view`.`col` (column name) of label group `group` ("" for a view with
 * one row; "mean", "min", "max" for a per-CPU view) of `node`: *ret_n values at times *ret_t (seconds from
 * the start), NAN where missing. NULL when no such series was kept. For tests. */
const double *report_series(const js_report_t *r, size_t node, const char *view, const char *col,
                            const char *group, const double **ret_t, size_t *ret_n);

#endif
