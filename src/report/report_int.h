/* SPDX-License-Identifier: MIT
 *
 * The report builder's private header, shared by its files and by nothing else: report.c (the public API of
 * report.h, collecting each node's series and marks, the page and the comparison), report_facts.c (series
 * lookups, statistics, the facts for the advice), report_charts.c (the chart table, emitting line charts,
 * heat maps and bars) and report_tables.c (the summary's tables). It holds the collected data's types and
 * the functions one of these files calls in another; each function's contract sits here.
 */
#ifndef JOBSCOPE_REPORT_INT_H
#define JOBSCOPE_REPORT_INT_H

#include "report/html.h"
#include "report/report.h"
#include "report/svg.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAX_VIEW_COLS 256 /* kept columns per view (the system view has one per CPU, interface, disk) */
#define MAX_CHART_SERIES 24
#define MAX_INVENTORY 600
#define MAX_COSTS 48
#define MAX_ADVICE 32

/* ---- collected data ---------------------------------------------------------------------------------- */

typedef struct {
    size_t finite;
    double mean, min, max, last;
    size_t imax; /* index of the first maximum */
    bool nonzero;
} sstat_t;

typedef struct {
    char *view, *col, *group;
    const char *unit; /* display unit (static) */
    double *v;        /* node->cap values */
    bool st_valid;    /* st holds the statistics of the node's n values (set when the node is finished) */
    sstat_t st;
} rseries_t;

typedef struct {
    char *name;
    const js_table_t *table;
    bool aggregate; /* rows reduced to mean, min and max per column (one row per CPU) */
    bool skip;
    size_t nlabels;
    int labels[8];
    size_t ncols;
    int cols[MAX_VIEW_COLS];
    const char *units[MAX_VIEW_COLS];
    double scale[MAX_VIEW_COLS];
    size_t ngroups;
    char *groups[REPORT_MAX_GROUPS];
    size_t *sidx;   /* REPORT_MAX_GROUPS x ncols series indices */
    size_t dropped; /* label groups beyond REPORT_MAX_GROUPS, at the last sample that had any */
} rview_t;

typedef struct {
    char name[32];
    double sum_ns;
    int64_t n, fails;
} rcost_t;

typedef struct {
    char *name;
    size_t n, cap;
    double *t;
    int64_t t0_mono_ns, first_unix_ns, last_unix_ns, last_seq;
    rseries_t *s;
    size_t ns, scap;
    rview_t *views;
    size_t nviews;
    char **inv; /* source, key, value triples */
    size_t ninv;
    rcost_t costs[MAX_COSTS];
    size_t ncosts;
    /* at the end */
    bool finished;
    js_summary_table_t *sum; /* the node's summary: every figure the page shows that is not a series */
    js_run_info_t info;
    js_report_run_t run;
    char *strs[16]; /* copies behind info and run */
    double cores_available;
} rnode_t;

typedef struct {
    double t0, t1, t;
    char *label;
    char *data; /* events: the JSON given with the mark (NULL: none), at most MARK_DATA_KEPT bytes kept */
} rmark_t;

/* Marks on the charts. A page's size must not grow with the run's length, nor with its number of marks:
 * of each kind (phases, events) the first MARKS_DRAWN and the last MARKS_DRAWN are kept and drawn one by
 * one; every mark, drawn or not, is also counted in a density strip of MARKS_BINS time buckets (each twice
 * as wide when a mark falls past the last), drawn along the top of every time chart once some were not
 * drawn. So 100,000 events cost what 200 do (docs/REPORT.md, bench/report_bench.py --events). */
#define MARKS_DRAWN 50
#define MARKS_BINS 256
#define MARK_DATA_KEPT 1024 /* bytes of an event's data kept for its title and the events table */
#define MARKS_OPEN_MAX 1024 /* phases begun and not ended yet, followed one by one (the rest are counted) */

typedef struct {
    rmark_t first[MARKS_DRAWN], last[MARKS_DRAWN]; /* last: a ring of the latest, once first is full */
    size_t total;                                  /* marks added */
} rmlist_t;

typedef struct {
    double width;           /* seconds per bin; 0 before the first mark */
    double bin[MARKS_BINS]; /* marks (phase begins and events) per bin from t = 0 */
    size_t total, nphases;  /* marks counted, of which phases */
} rdensity_t;

struct js_report {
    rnode_t *nodes;
    size_t nnodes;
    rmlist_t bands, events;
    rdensity_t density;
    rmark_t *open; /* phases begun (from the marks view) and not ended yet, at most MARKS_OPEN_MAX */
    size_t nopen;
    js_facts_t *facts;
    bool facts_done;
};
/* A run (or node) that contributes series to a chart: its data, a name prefix, dashed or not. */
typedef struct {
    const rnode_t *n;
    const char *label; /* NULL: no prefix */
    bool dashed;
} src_t;

typedef struct {
    js_html_t *h;
    const js_report_t *r;
    const char *idp; /* id prefix */
    const js_facts_t *facts;
    bool compare;
} page_t;

/* ---- report.c ---- */

/* chart_marks: the kept bands and events for one chart (arrays of at most 2 * MARKS_DRAWN, owned by the
 * caller; none when `none`), and the density strip when marks were summarised. 0 or -ENOMEM. */
int chart_marks(const js_report_t *r, bool none, js_band_t **ret_b, size_t *ret_nb, js_event_t **ret_e,
                size_t *ret_ne, js_chart_t *ch);

/* report_add_event_data: report_add_event() with the JSON `data` given with the mark (NULL: none; copied, cut
 * to MARK_DATA_KEPT bytes at a character boundary). 0 or -ENOMEM. */
int report_add_event_data(js_report_t *r, double t, const char *label, const char *data);

/* report_events_table: the "Events" section: the kept events (the first and last MARKS_DRAWN) with their
 * time from the start, name and data, and a line counting those left out. Nothing without events. */
void report_events_table(js_html_t *h, const js_report_t *r);

/* ---- report_facts.c: series lookups, statistics, facts ---- */

/* find_series: node n's series of (view, col, group), group NULL matching any; NULL if it has none. */
const rseries_t *find_series(const rnode_t *n, const char *view, const char *col, const char *group);

/* stat_of: the statistics of the n values v (NAN values skipped; v may be NULL when n is 0). */
sstat_t stat_of(const double *v, size_t n);

/* sstat: the statistics of series s of node n (computed once the node is finished). */
sstat_t sstat(const rnode_t *n, const rseries_t *s);

/* sroot: the root of node n's summary rows (model/figure.h); NULL before the node is finished. */
const js_figure_t *sroot(const rnode_t *n);

/* snum, sint: the number (NAN when absent) or integer (0 when absent) at `path` of node n's summary. */
double snum(const rnode_t *n, const char *path);
int64_t sint(const rnode_t *n, const char *path);

/* node_facts: fills *f with one node's facts for the advice rules (advice.h). */
void node_facts(const rnode_t *n, js_facts_t *f);

/* nan_sum, nan_max: a + b and max(a, b) where a NAN operand counts as absent (NAN when both are). */
double nan_sum(double a, double b);
double nan_max(double a, double b);

/* ---- report_charts.c ---- */

/* pretty_col: a legend name from a column name into buf (cap bytes): the unit suffix and a matched prefix
 * (`prefix` ending in '*', or NULL) dropped, '_' as ' '. */
void pretty_col(const char *col, const char *prefix, char *buf, size_t cap);

/* node_charts: every chart of one node (nsrc 1) or of a comparison (nsrc 2), section by section, into pg->h;
 * with_tops adds the top-commands bars. Errors are left in pg->h->err. */
void node_charts(page_t *pg, const src_t *src, size_t nsrc, bool with_tops);

/* nodes_section: the "Nodes" section of a multi-node report (heat map, one series per node). */
void nodes_section(page_t *pg);

/* ---- report_tables.c ---- */

/* fmt_when: a Unix time in ns as UTC date and time into buf (cap bytes); "unknown" when <= 0. */
void fmt_when(char *buf, size_t cap, int64_t unix_ns);

/* num_or_missing: a real cell, or a missing one when v is not finite. */
js_cell_t num_or_missing(double v);

/* h3: a third-level heading with text `title`. */
void h3(js_html_t *h, const char *title);

/* row_unit: the unit the page shows a summary row's unit in, and the factor to it (NULL: a plain number). */
const char *row_unit(const char *unit, double *scale);

/* summary_tables: the tree model's figures of one node, as tables with units people read. */
void summary_tables(js_html_t *h, const rnode_t *n);

/* nodes_table: one row per node and one for the job. */
void nodes_table(js_html_t *h, const js_report_t *r, const js_facts_t *f);

/* parts_details: every section of the summary that is not the tree model's own. */
void parts_details(js_html_t *h, const rnode_t *n);

/* inventory_table: the node's inventory (source, key, value). */
void inventory_table(js_html_t *h, const rnode_t *n);

/* monitor_tables: the monitor's own cost on the node: its CPU and memory, each source's cost per sample. */
void monitor_tables(js_html_t *h, const rnode_t *n);

#endif
