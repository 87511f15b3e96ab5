/* SPDX-License-Identifier: MIT
 *
 * The report builder (see report.h). Three parts:
 *
 *   collection  per node, a time axis (seconds from the run's start) and one array of values per kept
 *               series (view, column, label group), filled after each model feed; NAN where a value is
 *               missing, so gaps stay gaps. Which columns of a view are kept is decided once per view from
 * its descriptor: numeric gauges (and energy counters), not labels, not error codes or identifiers. facts at
 * the end, the node's summary table (summary_build: model/figure.h, every figure a typed row with its
 * unit) and statistics of the series fill js_facts_t for the advice rules (advice.c). page        a fixed
 * table of curated charts for the views jobscope knows (chart_specs[]), then, for every other view, one chart
 * per unit of its kept columns; tables of the summary's rows; the parts' sections rendered generically from
 * their rows; inventory and the monitor's cost.
 */
#include "report/report.h"

#include "config.h"
#include "core/json.h"
#include "report/compare_int.h"
#include "report/first.h"
#include "report/html.h"
#include "report/svg.h"
#include "report/units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
} rmark_t;

/* Marks on the charts. A page's size must not grow with the run's length, nor with its number of marks:
 * of each kind (phases, events) the first MARKS_DRAWN and the last MARKS_DRAWN are kept and drawn one by
 * one; every mark, drawn or not, is also counted in a density strip of MARKS_BINS time buckets (each twice
 * as wide when a mark falls past the last), drawn along the top of every time chart once some were not
 * drawn. So 100,000 events cost what 200 do (docs/REPORT.md, bench/report_bench.py --events). */
#define MARKS_DRAWN 50
#define MARKS_BINS 256
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
    cmp_events_t cmp_events; /* the events with their data, for compare's table (compare.c) */
    rdensity_t density;
    rmark_t *open; /* phases begun (from the marks view) and not ended yet, at most MARKS_OPEN_MAX */
    size_t nopen;
    js_facts_t *facts;
    bool facts_done;
};

static char *xstrdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

js_report_t *report_new(void)
{
    return calloc(1, sizeof(js_report_t));
}

static void node_free(rnode_t *n)
{
    free(n->name);
    free(n->t);
    for (size_t i = 0; i < n->ns; i++) {
        free(n->s[i].view);
        free(n->s[i].col);
        free(n->s[i].group);
        free(n->s[i].v);
    }
    free(n->s);
    for (size_t i = 0; i < n->nviews; i++) {
        free(n->views[i].name);
        for (size_t g = 0; g < n->views[i].ngroups; g++)
            free(n->views[i].groups[g]);
        free(n->views[i].sidx);
    }
    free(n->views);
    for (size_t i = 0; i < 3 * n->ninv; i++)
        free(n->inv[i]);
    free(n->inv);
    for (size_t i = 0; i < sizeof(n->strs) / sizeof(n->strs[0]); i++)
        free(n->strs[i]);
    figure_free(n->sum);
}

void report_free(js_report_t *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nnodes; i++)
        node_free(&r->nodes[i]);
    free(r->nodes);
    for (size_t i = 0; i < MARKS_DRAWN; i++) {
        free(r->bands.first[i].label);
        free(r->bands.last[i].label);
        free(r->events.first[i].label);
        free(r->events.last[i].label);
    }
    for (size_t i = 0; i < r->nopen; i++)
        free(r->open[i].label);
    free(r->open);
    cmp_events_free(&r->cmp_events);
    free(r->facts);
    free(r);
}

int report_add_node(js_report_t *r, const char *name, size_t *ret_node)
{
    rnode_t *nodes = realloc(r->nodes, (r->nnodes + 1) * sizeof(*nodes));
    if (!nodes)
        return -ENOMEM;
    r->nodes = nodes;
    rnode_t *n = &nodes[r->nnodes];
    memset(n, 0, sizeof(*n));
    char def[32];
    snprintf(def, sizeof(def), "node %zu", r->nnodes + 1);
    if (!(n->name = strdup(name && *name ? name : def)))
        return -ENOMEM;
    n->last_seq = -1;
    *ret_node = r->nnodes++;
    r->facts_done = false;
    return 0;
}

static int add_mark(rmark_t **arr, size_t *n, double t0, double t1, const char *label)
{
    rmark_t *a = realloc(*arr, (*n + 1) * sizeof(*a));
    if (!a)
        return -ENOMEM;
    *arr = a;
    a[*n] = (rmark_t){.t0 = t0, .t1 = t1, .t = t0, .label = xstrdup(label)};
    if (label && !a[*n].label)
        return -ENOMEM;
    (*n)++;
    return 0;
}

/* density_add: count a mark at t (seconds from the start; before it or unknown: the first bin). */
static void density_add(rdensity_t *d, double t, bool phase)
{
    if (!(t > 0))
        t = 0;
    if (!(d->width > 0))
        d->width = 0.125;
    while (t >= d->width * MARKS_BINS && isfinite(d->width * 2)) { /* halve the resolution: pairs merge */
        for (size_t i = 0; i < MARKS_BINS / 2; i++)
            d->bin[i] = d->bin[2 * i] + d->bin[2 * i + 1];
        memset(&d->bin[MARKS_BINS / 2], 0, MARKS_BINS / 2 * sizeof(d->bin[0]));
        d->width *= 2;
    }
    size_t i = (size_t)(t / d->width);
    d->bin[i < MARKS_BINS ? i : MARKS_BINS - 1]++;
    d->total++;
    d->nphases += phase;
}

/* mlist_add: keep a mark if it is among the first or (so far) the last MARKS_DRAWN of its list. */
static int mlist_add(rmlist_t *l, double t0, double t1, const char *label)
{
    char *copy = xstrdup(label);
    if (label && !copy)
        return -ENOMEM;
    rmark_t *m =
        l->total < MARKS_DRAWN ? &l->first[l->total] : &l->last[(l->total - MARKS_DRAWN) % MARKS_DRAWN];
    free(m->label);
    *m = (rmark_t){.t0 = t0, .t1 = t1, .t = t0, .label = copy};
    l->total++;
    return 0;
}

/* mlist_get: the i-th kept mark in order of arrival (i < mlist_kept(l)). */
static size_t mlist_kept(const rmlist_t *l)
{
    return l->total < 2 * MARKS_DRAWN ? l->total : 2 * MARKS_DRAWN;
}

static const rmark_t *mlist_get(const rmlist_t *l, size_t i)
{
    if (i < MARKS_DRAWN)
        return &l->first[i];
    size_t inring = l->total - MARKS_DRAWN < MARKS_DRAWN ? l->total - MARKS_DRAWN : MARKS_DRAWN;
    size_t oldest = inring < MARKS_DRAWN ? 0 : (l->total - MARKS_DRAWN) % MARKS_DRAWN;
    return &l->last[(oldest + i - MARKS_DRAWN) % MARKS_DRAWN];
}

int report_add_band(js_report_t *r, double t0, double t1, const char *label)
{
    density_add(&r->density, t0, true);
    return mlist_add(&r->bands, t0, t1, label);
}

int report_add_event(js_report_t *r, double t, const char *label)
{
    density_add(&r->density, t, false);
    return mlist_add(&r->events, t, t, label);
}

/* marks_summarised: whether some marks are not drawn one by one (then the density strip is). */
static bool marks_summarised(const js_report_t *r)
{
    return r->bands.total > mlist_kept(&r->bands) || r->events.total > mlist_kept(&r->events) ||
           r->density.total > r->bands.total + r->events.total;
}

/* chart_marks: the kept bands and events for one chart (arrays of at most 2 * MARKS_DRAWN, owned by the
 * caller; none when `none`), and the density strip when marks were summarised. 0 or -ENOMEM. */
static int chart_marks(const js_report_t *r, bool none, js_band_t **ret_b, size_t *ret_nb, js_event_t **ret_e,
                       size_t *ret_ne, js_chart_t *ch)
{
    size_t nb = none ? 0 : mlist_kept(&r->bands), ne = none ? 0 : mlist_kept(&r->events);
    js_band_t *b = calloc(nb + 1, sizeof(*b));
    js_event_t *e = calloc(ne + 1, sizeof(*e));
    if (!b || !e) {
        free(b);
        free(e);
        return -ENOMEM;
    }
    for (size_t i = 0; i < nb; i++) {
        const rmark_t *m = mlist_get(&r->bands, i);
        b[i] = (js_band_t){m->t0, m->t1, m->label};
    }
    for (size_t i = 0; i < ne; i++) {
        const rmark_t *m = mlist_get(&r->events, i);
        e[i] = (js_event_t){m->t, m->label};
    }
    if (!none && marks_summarised(r)) {
        ch->density = r->density.bin;
        ch->ndensity = MARKS_BINS;
        ch->density_t0 = 0;
        ch->density_t1 = r->density.width * MARKS_BINS;
    }
    *ret_b = b;
    *ret_nb = nb;
    *ret_e = e;
    *ret_ne = ne;
    return 0;
}

/* ---- which columns a view keeps ---- */

/* display_unit: the unit a view column is shown in, and the factor its values are multiplied by; NULL for a
 * column that is not charted (identifiers, error codes, text, cumulative times). */
static const char *display_unit(const js_column_t *c, double *ret_scale)
{
    static const char *const skip[] = {"errno", "id",   "text", "ticks", "bool", "raw",
                                       "mask",  "json", "ns",   "us",    "s"};
    *ret_scale = 1;
    if (!c->unit)
        return "";
    for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
        if (strcmp(c->unit, skip[i]) == 0)
            return NULL;
    if (strcmp(c->unit, "1/s") == 0)
        return "/s";
    if (strcmp(c->unit, "celsius") == 0 || strcmp(c->unit, "degC") == 0)
        return "\xc2\xb0"
               "C";
    if (strcmp(c->unit, "KB/s") == 0) {
        *ret_scale = 1024;
        return "bytes/s";
    }
    if (strcmp(c->unit, "MHz") == 0) {
        *ret_scale = 1e6;
        return "Hz";
    }
    if (strcmp(c->unit, "percent") == 0)
        return "%";
    return c->unit; /* descriptors are static or live as long as the model */
}

static bool is_label(const js_column_t *c)
{
    return c->kind == JS_LABEL || c->type == JS_TEXT;
}

static int plan_view(rview_t *v, const js_table_t *t)
{
    v->table = t;
    /* per process: the summary's top lists instead; marks: shaded phases and events; phases: cumulative
     * figures per phase, which the summary's section shows as a table */
    v->skip =
        strcmp(t->name, "process") == 0 || strcmp(t->name, "marks") == 0 || strcmp(t->name, "phases") == 0;
    v->aggregate = strcmp(t->name, "cpufreq") == 0;
    for (size_t c = 0; c < t->ncols; c++) {
        const js_column_t *col = &t->cols[c];
        if (is_label(col)) {
            if (v->nlabels < sizeof(v->labels) / sizeof(v->labels[0]))
                v->labels[v->nlabels++] = (int)c;
            continue;
        }
        double scale;
        const char *u = display_unit(col, &scale);
        if (!u || strcmp(col->name, "dt_s") == 0)
            continue;
        if (col->kind == JS_COUNTER && strcmp(col->unit, "J") != 0)
            continue; /* cumulative counts: the rates are charted */
        if (v->ncols == MAX_VIEW_COLS)
            break;
        v->cols[v->ncols] = (int)c;
        v->units[v->ncols] = u;
        v->scale[v->ncols] = scale;
        v->ncols++;
    }
    if (v->ncols && !(v->sidx = calloc((size_t)REPORT_MAX_GROUPS * v->ncols, sizeof(*v->sidx))))
        return -ENOMEM;
    return 0;
}

static int node_grow(rnode_t *n)
{
    if (n->n < n->cap)
        return 0;
    size_t cap = n->cap ? n->cap * 2 : 256;
    double *t = realloc(n->t, cap * sizeof(*t));
    if (!t)
        return -ENOMEM;
    n->t = t;
    for (size_t i = 0; i < n->ns; i++) {
        double *v = realloc(n->s[i].v, cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        n->s[i].v = v;
    }
    n->cap = cap;
    return 0;
}

/* new_series: a series whose earlier values are missing. Returns its index or -ENOMEM. */
static long new_series(rnode_t *n, const char *view, const char *col, const char *group, const char *unit)
{
    if (n->ns == n->scap) {
        size_t cap = n->scap ? n->scap * 2 : 64;
        rseries_t *s = realloc(n->s, cap * sizeof(*s));
        if (!s)
            return -ENOMEM;
        n->s = s;
        n->scap = cap;
    }
    rseries_t *s = &n->s[n->ns];
    memset(s, 0, sizeof(*s));
    s->view = strdup(view);
    s->col = strdup(col);
    s->group = strdup(group);
    s->unit = unit;
    s->v = malloc((n->cap ? n->cap : 1) * sizeof(double));
    if (!s->view || !s->col || !s->group || !s->v) {
        free(s->view);
        free(s->col);
        free(s->group);
        free(s->v);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n->n; i++)
        s->v[i] = NAN;
    return (long)n->ns++;
}

/* group_of: the label text of a view row: text labels as they are, numeric ones as "name N", joined by
 * spaces; "" for a view without labels. */
static void group_of(const rview_t *v, const js_rows_t *rows, const js_value_t *row, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < v->nlabels; k++) {
        const js_column_t *c = &v->table->cols[v->labels[k]];
        const js_value_t *x = &row[v->labels[k]];
        if (!x->present)
            continue;
        int w = c->type == JS_TEXT ? snprintf(buf + len, cap - len, "%s%s", len ? " " : "", rows_str(rows, x))
                : c->type == JS_INT
                    ? snprintf(buf + len, cap - len, "%s%s %lld", len ? " " : "", c->name, (long long)x->i)
                    : 0;
        if (w > 0 && (size_t)w < cap - len)
            len += (size_t)w;
    }
}

/* group_index: the group `label` of view v, created (with its series) when new; -1 when the view is full,
 * -ENOMEM. */
static long group_index(rnode_t *n, rview_t *v, const char *label, size_t hint)
{
    if (hint < v->ngroups && strcmp(v->groups[hint], label) == 0)
        return (long)hint;
    for (size_t g = 0; g < v->ngroups; g++)
        if (strcmp(v->groups[g], label) == 0)
            return (long)g;
    if (v->ngroups == REPORT_MAX_GROUPS)
        return -1;
    size_t g = v->ngroups;
    if (!(v->groups[g] = strdup(label)))
        return -ENOMEM;
    for (size_t c = 0; c < v->ncols; c++) {
        long s = new_series(n, v->name, v->table->cols[v->cols[c]].name, label, v->units[c]);
        if (s < 0) {
            free(v->groups[g]);
            return s;
        }
        v->sidx[g * v->ncols + c] = (size_t)s;
    }
    v->ngroups++;
    return (long)g;
}

static double value_of(const js_column_t *c, const js_value_t *x)
{
    if (!x->present)
        return NAN;
    return c->type == JS_INT ? (double)x->i : c->type == JS_REAL ? x->d : NAN;
}

static int feed_view(rnode_t *n, rview_t *v, const js_rows_t *rows)
{
    size_t i = n->n - 1, dropped = 0;
    if (v->aggregate) {
        static const char *const agg[3] = {"mean", "min", "max"};
        for (size_t g = 0; g < 3; g++)
            if (group_index(n, v, agg[g], g) < 0)
                return -ENOMEM;
        for (size_t c = 0; c < v->ncols; c++) {
            const js_column_t *col = &v->table->cols[v->cols[c]];
            double sum = 0, lo = INFINITY, hi = -INFINITY;
            size_t k = 0;
            for (size_t r = 0; r < rows->nrows; r++) {
                double x = value_of(col, &rows_row(rows, r)[v->cols[c]]) * v->scale[c];
                if (!isfinite(x))
                    continue;
                sum += x;
                lo = x < lo ? x : lo;
                hi = x > hi ? x : hi;
                k++;
            }
            if (k) {
                n->s[v->sidx[0 * v->ncols + c]].v[i] = sum / (double)k;
                n->s[v->sidx[1 * v->ncols + c]].v[i] = lo;
                n->s[v->sidx[2 * v->ncols + c]].v[i] = hi;
            }
        }
        return 0;
    }
    for (size_t r = 0; r < rows->nrows; r++) {
        const js_value_t *row = rows_row(rows, r);
        char label[256];
        group_of(v, rows, row, label, sizeof(label));
        long g = group_index(n, v, label, r);
        if (g == -ENOMEM)
            return -ENOMEM;
        if (g < 0) {
            dropped++;
            continue;
        }
        for (size_t c = 0; c < v->ncols; c++) {
            double x = value_of(&v->table->cols[v->cols[c]], &row[v->cols[c]]) * v->scale[c];
            n->s[v->sidx[(size_t)g * v->ncols + c]].v[i] = isfinite(x) ? x : NAN;
        }
    }
    if (dropped)
        v->dropped = dropped;
    return 0;
}

static rview_t *view_of(rnode_t *n, const js_table_t *t)
{
    for (size_t i = 0; i < n->nviews; i++)
        if (n->views[i].table == t || strcmp(n->views[i].name, t->name) == 0) {
            if (n->views[i].table != t && n->views[i].table->ncols != t->ncols)
                return NULL; /* a view whose columns changed: keep the first plan */
            return &n->views[i];
        }
    rview_t *v = realloc(n->views, (n->nviews + 1) * sizeof(*v));
    if (!v)
        return NULL;
    n->views = v;
    rview_t *nv = &v[n->nviews];
    memset(nv, 0, sizeof(*nv));
    if (!(nv->name = strdup(t->name)) || plan_view(nv, t) < 0) {
        free(nv->name);
        free(nv->sidx);
        return NULL;
    }
    n->nviews++;
    return nv;
}

static void feed_costs(rnode_t *n, const js_sample_t *s)
{
    const js_rows_t *st = sample_rows(s, &table_source_stats);
    for (size_t r = 0; st && r < st->nrows; r++) {
        const js_value_t *row = rows_row(st, r);
        if (!row[STATS_SOURCE].present)
            continue;
        const char *name = rows_str(st, &row[STATS_SOURCE]);
        rcost_t *c = NULL;
        for (size_t i = 0; i < n->ncosts && !c; i++)
            if (strcmp(n->costs[i].name, name) == 0)
                c = &n->costs[i];
        if (!c) {
            if (n->ncosts == MAX_COSTS)
                continue;
            c = &n->costs[n->ncosts++];
            snprintf(c->name, sizeof(c->name), "%s", name);
        }
        if (row[STATS_DURATION].present) {
            c->sum_ns += (double)row[STATS_DURATION].i;
            c->n++;
        }
        if (row[STATS_RC].present && row[STATS_RC].i < 0)
            c->fails++;
    }
}

static int feed_inventory(rnode_t *n, const js_sample_t *s)
{
    const js_rows_t *inv = sample_rows(s, &table_inventory);
    if (!inv || !inv->nrows || n->ninv)
        return 0;
    size_t k = inv->nrows < MAX_INVENTORY ? inv->nrows : MAX_INVENTORY;
    if (!(n->inv = calloc(3 * k, sizeof(*n->inv))))
        return -ENOMEM;
    for (size_t r = 0; r < k; r++) {
        const js_value_t *row = rows_row(inv, r);
        for (int c = 0; c < 3; c++)
            if (row[c].present && !(n->inv[3 * r + (size_t)c] = strdup(rows_str(inv, &row[c]))))
                return -ENOMEM;
        n->ninv++;
    }
    return 0;
}

int report_sample(js_report_t *r, size_t node, int64_t seq, int64_t t_mono_ns, int64_t t_unix_ns,
                  int64_t start_mono_ns)
{
    if (node >= r->nnodes)
        return -EINVAL;
    rnode_t *n = &r->nodes[node];
    int rc = node_grow(n);
    if (rc < 0)
        return rc;
    if (n->n == 0) {
        n->t0_mono_ns = start_mono_ns > 0 && start_mono_ns <= t_mono_ns ? start_mono_ns : t_mono_ns;
        n->first_unix_ns = t_unix_ns;
    }
    size_t i = n->n++;
    n->t[i] = (double)(t_mono_ns - n->t0_mono_ns) / 1e9;
    n->last_unix_ns = t_unix_ns;
    n->last_seq = seq;
    for (size_t k = 0; k < n->ns; k++) {
        n->s[k].v[i] = NAN;
        n->s[k].st_valid = false;
    }
    r->facts_done = false;
    return 0;
}

/* feed_marks: phases and events from a `marks` view (rows: the marks made since the last sample, with t_s
 * from the run's start, kind begin/end/event and name). A begun phase is a band once it ends, or at the end
 * of the data. Only the first node's marks are used: every rank of a job marks the same phases. */
static int feed_marks(js_report_t *r, const js_table_t *t, const js_rows_t *rows, double now)
{
    int ct = table_column(t, "t_s"), ck = table_column(t, "kind"), cn = table_column(t, "name");
    int cd = table_column(t, "data");
    if (ck < 0 || t->cols[ck].type != JS_TEXT || (cn >= 0 && t->cols[cn].type != JS_TEXT) ||
        (ct >= 0 && t->cols[ct].type != JS_REAL))
        return 0;
    if (cd >= 0 && t->cols[cd].type != JS_TEXT)
        cd = -1;
    for (size_t i = 0; rows && i < rows->nrows; i++) {
        const js_value_t *v = rows_row(rows, i);
        if (!v[ck].present)
            continue;
        const char *kind = rows_str(rows, &v[ck]);
        const char *name = cn >= 0 && v[cn].present ? rows_str(rows, &v[cn]) : NULL;
        double at = ct >= 0 && v[ct].present && isfinite(v[ct].d) ? v[ct].d : now;
        int rc = 0;
        if (strcmp(kind, "begin") == 0) {
            if (r->nopen < MARKS_OPEN_MAX)
                rc = add_mark(&r->open, &r->nopen, at, at, name);
            else
                density_add(&r->density, at, true); /* counted, never drawn as a band */
        } else if (strcmp(kind, "end") == 0) {
            size_t k = r->nopen;
            while (k > 0 && !((!name && !r->open[k - 1].label) ||
                              (name && r->open[k - 1].label && strcmp(r->open[k - 1].label, name) == 0)))
                k--;
            if (k > 0) {
                rmark_t m = r->open[k - 1];
                memmove(&r->open[k - 1], &r->open[k], (r->nopen - k) * sizeof(*r->open));
                r->nopen--;
                rc = report_add_band(r, m.t0, at, m.label);
                free(m.label);
            }
        } else if (strcmp(kind, "event") == 0) {
            rc = report_add_event(r, at, name);
            if (rc == 0)
                rc = cmp_events_add(&r->cmp_events, at, name,
                                    cd >= 0 && v[cd].present ? rows_str(rows, &v[cd]) : NULL);
        }
        if (rc < 0)
            return rc;
    }
    return 0;
}

int report_view(js_report_t *r, size_t node, const js_table_t *t, const js_rows_t *rows)
{
    if (node >= r->nnodes || !r->nodes[node].n)
        return -EINVAL;
    rnode_t *n = &r->nodes[node];
    if (strcmp(t->name, "marks") == 0)
        return node == 0 ? feed_marks(r, t, rows, n->t[n->n - 1]) : 0;
    rview_t *v = view_of(n, t);
    if (!v)
        return -ENOMEM;
    if (v->skip || !v->ncols || !rows)
        return 0;
    return feed_view(n, v, rows);
}

int report_feed(js_report_t *r, size_t node, js_model_t *m, const js_sample_t *s)
{
    if (node >= r->nnodes)
        return -EINVAL;
    rnode_t *n = &r->nodes[node];
    const js_tree_point_t *p = model_point(m);
    if (!p || p->seq == n->last_seq)
        return 0;
    if (n->n == 0)
        n->cores_available = model_cfg(m)->cores_available;
    int rc = report_sample(r, node, p->seq, p->t_mono_ns, p->t_unix_ns, model_cfg(m)->start_mono_ns);
    if (rc < 0)
        return rc;
    for (size_t k = 0;; k++) {
        const js_table_t *t = model_view_table(m, k);
        if (!t)
            break;
        if (strcmp(t->name, "process") == 0)
            continue;
        js_view_t view;
        rc = model_view(m, t->name, &view);
        if (rc == -ENOENT || rc == -ENODATA)
            continue;
        if (rc < 0 || (rc = report_view(r, node, t, view.rows)) < 0)
            return rc;
    }
    if (s) {
        feed_costs(n, s);
        if ((rc = feed_inventory(n, s)) < 0)
            return rc;
    }
    return 0;
}

static sstat_t stat_of(const double *v, size_t n);

/* keep: a copy of `s` owned by the node (slot k of its strings). */
static const char *keep(rnode_t *n, size_t k, const char *s)
{
    free(n->strs[k]);
    n->strs[k] = xstrdup(s);
    return n->strs[k];
}

int report_finish_node(js_report_t *r, size_t node, const js_model_t *m, const js_run_info_t *info,
                       const js_summary_t *su, const js_report_run_t *run)
{
    if (node >= r->nnodes || !info || !su)
        return -EINVAL;
    rnode_t *n = &r->nodes[node];
    n->info = *info;
    n->run = run ? *run : (js_report_run_t){0};
    const char *in[] = {info->version, info->command_json, info->command_shell, info->host,      info->mode,
                        info->scope,   info->state,        info->exec_error,    info->recording, n->run.user,
                        n->run.job,    n->run.scope_how,   n->run.kernel,       n->run.cpu_model};
    const char **out[] = {
        &n->info.version, &n->info.command_json, &n->info.command_shell, &n->info.host,      &n->info.mode,
        &n->info.scope,   &n->info.state,        &n->info.exec_error,    &n->info.recording, &n->run.user,
        &n->run.job,      &n->run.scope_how,     &n->run.kernel,         &n->run.cpu_model};
    for (size_t k = 0; k < sizeof(in) / sizeof(in[0]); k++)
        if (in[k] && !(*out[k] = keep(n, k, in[k])))
            return -ENOMEM;
    figure_free(n->sum);
    if (!(n->sum = summary_build(&n->info, su, m)))
        return -ENOMEM;
    int rc;
    if (!(n->cores_available > 0))
        n->cores_available = su->cores_available;
    for (size_t i = 0; i < n->ns; i++) {
        n->s[i].st = stat_of(n->s[i].v, n->n);
        n->s[i].st_valid = true;
    }
    /* phases still active when the data ends are shaded up to there */
    while (node == 0 && r->nopen && n->n) {
        rmark_t ph = r->open[--r->nopen];
        rc = report_add_band(r, ph.t0, n->t[n->n - 1], ph.label);
        free(ph.label);
        if (rc < 0)
            return rc;
    }
    n->finished = true;
    r->facts_done = false;
    return 0;
}

/* ---- series lookups and statistics -------------------------------------------------------------------- */

static const rseries_t *find_series(const rnode_t *n, const char *view, const char *col, const char *group)
{
    for (size_t i = 0; i < n->ns; i++)
        if (strcmp(n->s[i].view, view) == 0 && strcmp(n->s[i].col, col) == 0 &&
            (!group || strcmp(n->s[i].group, group) == 0))
            return &n->s[i];
    return NULL;
}

const double *report_series(const js_report_t *r, size_t node, const char *view, const char *col,
                            const char *group, const double **ret_t, size_t *ret_n)
{
    if (node >= r->nnodes)
        return NULL;
    const rnode_t *n = &r->nodes[node];
    const rseries_t *s = find_series(n, view, col, group ? group : "");
    if (!s)
        return NULL;
    *ret_t = n->t;
    *ret_n = n->n;
    return s->v;
}

static sstat_t stat_of(const double *v, size_t n)
{
    sstat_t st = {.mean = NAN, .min = NAN, .max = NAN, .last = NAN};
    double sum = 0;
    for (size_t i = 0; v && i < n; i++) {
        if (!isfinite(v[i]))
            continue;
        if (!st.finite || v[i] < st.min)
            st.min = v[i];
        if (!st.finite || v[i] > st.max) {
            st.max = v[i];
            st.imax = i;
        }
        st.nonzero |= v[i] != 0;
        st.last = v[i];
        sum += v[i];
        st.finite++;
    }
    if (st.finite)
        st.mean = sum / (double)st.finite;
    return st;
}

/* sstat: the statistics of series s of node n (computed once the node is finished). */
static sstat_t sstat(const rnode_t *n, const rseries_t *s)
{
    return s->st_valid ? s->st : stat_of(s->v, n->n);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* quantile: the q-quantile (nearest rank) of the finite values, NAN when none or on ENOMEM. */
static double quantile(const double *v, size_t n, double q)
{
    double *c = malloc((n ? n : 1) * sizeof(*c));
    size_t k = 0;
    if (!c)
        return NAN;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]))
            c[k++] = v[i];
    double r = NAN;
    if (k) {
        qsort(c, k, sizeof(*c), cmp_double);
        size_t rank = (size_t)ceil(q * (double)k);
        r = c[rank ? rank - 1 : 0];
    }
    free(c);
    return r;
}

static double series_mean(const rnode_t *n, const char *view, const char *col)
{
    const rseries_t *s = find_series(n, view, col, "");
    return s ? sstat(n, s).mean : NAN;
}

/* ---- facts ----------------------------------------------------------------------------------------------
 */

/* gpu_facts: mean utilisation per GPU from a view named "gpu": its first column whose name holds "util" and
 * whose unit is a fraction or a percentage. */
static void gpu_facts(const rnode_t *n, js_facts_t *f, bool prefix)
{
    const rview_t *v = NULL;
    for (size_t i = 0; i < n->nviews && !v; i++)
        if (strcmp(n->views[i].name, "gpu") == 0)
            v = &n->views[i];
    if (!v)
        return;
    for (size_t c = 0; c < v->ncols; c++) {
        const js_column_t *col = &v->table->cols[v->cols[c]];
        bool pct = strcmp(v->units[c], "%") == 0;
        if (!strstr(col->name, "util") || (!pct && strcmp(v->units[c], "fraction") != 0))
            continue;
        for (size_t g = 0; g < v->ngroups && f->ngpus < JS_FACTS_MAX_GPUS; g++) {
            sstat_t st = sstat(n, &n->s[v->sidx[g * v->ncols + c]]);
            if (!st.finite)
                continue;
            const char *gn = v->groups[g][0] ? v->groups[g] : "GPU";
            if (prefix)
                snprintf(f->gpu_name[f->ngpus], sizeof(f->gpu_name[0]), "%s %s", n->name, gn);
            else
                snprintf(f->gpu_name[f->ngpus], sizeof(f->gpu_name[0]), "%s", gn);
            f->gpu_util_mean[f->ngpus++] = pct ? st.mean / 100 : st.mean;
        }
        return;
    }
}

/* The node's summary rows (model/figure.h). */
static const js_figure_t *sroot(const rnode_t *n)
{
    return n->sum ? figure_croot(n->sum) : NULL;
}

static double snum(const rnode_t *n, const char *path)
{
    return fig_num(sroot(n), path);
}

static int64_t sint(const rnode_t *n, const char *path)
{
    return fig_int(sroot(n), path, 0);
}

static double first_num(const rnode_t *n, const char *const *paths)
{
    for (; *paths; paths++) {
        double v = snum(n, *paths);
        if (isfinite(v))
            return v;
    }
    return NAN;
}

static double inv_num(const rnode_t *n, const char *key)
{
    for (size_t i = 0; i < n->ninv; i++)
        if (n->inv[3 * i + 1] && n->inv[3 * i + 2] && strcmp(n->inv[3 * i + 1], key) == 0) {
            char *end;
            double v = strtod(n->inv[3 * i + 2], &end);
            return end != n->inv[3 * i + 2] ? v : NAN;
        }
    return NAN;
}

/* job_pressure: the mean share of the run some task of the job's cgroup stalled: the cgroup view's column,
 * else the summary's total over the wall time; NAN without a cgroup that reports pressure. */
static double job_pressure(const rnode_t *n, const char *col, const char *total, double wall_s)
{
    double v = series_mean(n, "cgroup", col);
    return isfinite(v) ? v : wall_s > 0 ? snum(n, total) / wall_s : NAN;
}

/* peak_demand: the largest, over the samples, of the job cgroup's cores in use plus its CPU pressure (some):
 * the cores its runnable work asked for; NAN without both series. */
static double peak_demand(const rnode_t *n)
{
    const rseries_t *c = find_series(n, "cgroup", "cpu_cores", ""),
                    *p = find_series(n, "cgroup", "psi_cpu_some_fraction", "");
    double m = NAN;
    for (size_t i = 0; c && p && i < n->n; i++)
        if (isfinite(c->v[i]) && isfinite(p->v[i]) && !(c->v[i] + p->v[i] <= m))
            m = c->v[i] + p->v[i];
    return m;
}

/* node_facts: one node's facts. */
static void node_facts(const rnode_t *n, js_facts_t *f)
{
    facts_init(f);
    f->complete = n->info.state && strcmp(n->info.state, "complete") == 0;
    f->data_end_s = n->n ? n->t[n->n - 1] : NAN;
    f->wall_s = snum(n, "wall_time_s");
    f->interval_s = snum(n, "samples.interval_s");
    f->taken = sint(n, "samples.taken");
    f->missed = sint(n, "samples.missed");
    double cores = snum(n, "allocation.cores");
    f->cores_available = isfinite(cores) && cores > 0 ? cores : snum(n, "cpu.cores_available");
    f->cpu_s = snum(n, "cpu.total_s");
    f->mean_cores = snum(n, "cpu.mean_cores");
    f->max_cores = snum(n, "cpu.max_cores");
    f->efficiency = f->cores_available > 0 && isfinite(f->mean_cores) ? f->mean_cores / f->cores_available
                                                                      : snum(n, "cpu.efficiency");
    const rseries_t *cores_s = find_series(n, "tree", "cpu_cores", "");
    f->p95_cores = cores_s ? quantile(cores_s->v, n->n, 0.95) : NAN;
    f->unattributed_cpu_s = snum(n, "top.unattributed_cpu_s");
    double periods = snum(n, "cgroup.throttling.periods");
    double throttled = snum(n, "cgroup.throttling.throttled_periods");
    f->throttled_fraction = periods > 0 ? throttled / periods : NAN;
    f->peak_rss = snum(n, "memory.peak_bytes"); /* the memory headline: counts no page twice */
    f->peak_rss_kernel = snum(n, "memory.peak_rss_kernel_bytes");
    static const char *const limit[] = {"allocation.memory_limit_bytes", "cgroup.memory.limit_bytes", NULL};
    f->mem_limit = first_num(n, limit);
    if (!isfinite(f->mem_limit))
        f->mem_limit = inv_num(n, "allocation.memory_limit_bytes");
    if (!(f->mem_limit > 0))
        f->mem_limit = NAN;
    static const char *const peak[] = {"cgroup.memory.peak_kernel_tree_bytes",
                                       "cgroup.memory.peak_sampled_bytes", NULL};
    f->mem_peak = first_num(n, peak);
    if (!isfinite(f->mem_peak))
        f->mem_peak = isfinite(f->peak_rss) ? f->peak_rss : f->peak_rss_kernel;
    const rseries_t *tot = find_series(n, "system", "mem_total_bytes", "");
    f->host_mem_total = tot ? sstat(n, tot).max : NAN;
    f->peak_swap = snum(n, "memory.peak_swap_bytes");
    f->majflt = snum(n, "faults.major");
    f->oom_kills = snum(n, "cgroup.memory.oom_kills");
    f->psi_io_some_mean = series_mean(n, "system", "psi_io_some_fraction");
    f->psi_io_full_mean = series_mean(n, "system", "psi_io_full_fraction");
    f->psi_mem_some_mean = series_mean(n, "system", "psi_memory_some_fraction");
    f->iowait_mean = series_mean(n, "system", "iowait_fraction");
    f->psi_cpu_some_job_mean =
        job_pressure(n, "psi_cpu_some_fraction", "cgroup.pressure.cpu_some_s", f->wall_s);
    f->psi_io_some_job_mean = job_pressure(n, "psi_io_some_fraction", "cgroup.pressure.io_some_s", f->wall_s);
    f->psi_cpu_some_host_mean = series_mean(n, "system", "psi_cpu_some_fraction");
    f->host_busy_mean =
        1 - series_mean(n, "system", "idle_fraction") - series_mean(n, "system", "iowait_fraction");
    f->steal_mean = series_mean(n, "system", "steal_fraction");
    f->peak_demand_cores = peak_demand(n);
    gpu_facts(n, f, false);
    f->mon_cpu_s = snum(n, "monitor.cpu_s");
}

static double nan_sum(double a, double b)
{
    return isfinite(a) ? (isfinite(b) ? a + b : a) : b;
}

static double nan_max(double a, double b)
{
    return isfinite(a) ? (isfinite(b) && b > a ? b : a) : b;
}

const js_summary_table_t *report_summary(const js_report_t *r, size_t node)
{
    return node < r->nnodes && r->nodes[node].finished ? r->nodes[node].sum : NULL;
}

const js_facts_t *report_facts(js_report_t *r)
{
    if (r->facts_done)
        return r->facts;
    if (!r->nnodes)
        return NULL;
    for (size_t i = 0; i < r->nnodes; i++)
        if (!r->nodes[i].finished)
            return NULL;
    if (!r->facts && !(r->facts = malloc(sizeof(*r->facts))))
        return NULL;
    js_facts_t *f = r->facts;
    node_facts(&r->nodes[0], f);
    if (r->nnodes > 1) {
        js_facts_t *g = malloc(sizeof(*g));
        if (!g)
            return NULL;
        double worst = isfinite(f->mem_limit) ? f->mem_peak / f->mem_limit : NAN;
        f->ngpus = 0;
        gpu_facts(&r->nodes[0], f, true);
        for (size_t i = 1; i < r->nnodes; i++) {
            const rnode_t *n = &r->nodes[i];
            node_facts(n, g);
            f->complete &= g->complete;
            f->data_end_s = nan_max(f->data_end_s, g->data_end_s);
            f->wall_s = nan_max(f->wall_s, g->wall_s);
            f->taken += g->taken;
            f->missed += g->missed;
            f->cores_available = nan_sum(f->cores_available, g->cores_available);
            f->cpu_s = nan_sum(f->cpu_s, g->cpu_s);
            f->mean_cores = nan_sum(f->mean_cores, g->mean_cores);
            f->max_cores = nan_sum(f->max_cores, g->max_cores);
            f->p95_cores = nan_sum(f->p95_cores, g->p95_cores);
            f->unattributed_cpu_s = nan_sum(f->unattributed_cpu_s, g->unattributed_cpu_s);
            f->throttled_fraction = nan_max(f->throttled_fraction, g->throttled_fraction);
            f->peak_rss = nan_max(f->peak_rss, g->peak_rss);
            f->peak_rss_kernel = nan_max(f->peak_rss_kernel, g->peak_rss_kernel);
            double frac = isfinite(g->mem_limit) ? g->mem_peak / g->mem_limit : NAN;
            if (isfinite(frac) && !(frac <= worst)) {
                worst = frac;
                f->mem_peak = g->mem_peak;
                f->mem_limit = g->mem_limit;
            } else if (!isfinite(worst)) {
                f->mem_peak = nan_max(f->mem_peak, g->mem_peak);
            }
            f->host_mem_total = nan_max(f->host_mem_total, g->host_mem_total);
            f->peak_swap = nan_max(f->peak_swap, g->peak_swap);
            f->majflt = nan_sum(f->majflt, g->majflt);
            f->oom_kills = nan_sum(f->oom_kills, g->oom_kills);
            f->psi_io_some_mean = nan_max(f->psi_io_some_mean, g->psi_io_some_mean);
            f->psi_io_full_mean = nan_max(f->psi_io_full_mean, g->psi_io_full_mean);
            f->psi_mem_some_mean = nan_max(f->psi_mem_some_mean, g->psi_mem_some_mean);
            f->iowait_mean = nan_max(f->iowait_mean, g->iowait_mean);
            f->psi_io_some_job_mean = nan_max(f->psi_io_some_job_mean, g->psi_io_some_job_mean);
            f->psi_cpu_some_job_mean = nan_max(f->psi_cpu_some_job_mean, g->psi_cpu_some_job_mean);
            f->psi_cpu_some_host_mean = nan_max(f->psi_cpu_some_host_mean, g->psi_cpu_some_host_mean);
            f->host_busy_mean = nan_max(f->host_busy_mean, g->host_busy_mean);
            f->steal_mean = nan_max(f->steal_mean, g->steal_mean);
            f->peak_demand_cores = nan_sum(f->peak_demand_cores, g->peak_demand_cores);
            f->mon_cpu_s = nan_sum(f->mon_cpu_s, g->mon_cpu_s);
            gpu_facts(n, f, true);
        }
        free(g);
        f->efficiency = f->cores_available > 0 && isfinite(f->wall_s) && f->wall_s > 0
                            ? f->cpu_s / (f->cores_available * f->wall_s)
                            : NAN;
        f->mon_cpu_s = NAN; /* summed over nodes it says nothing about one core */
    }
    f->nnodes = r->nnodes < JS_FACTS_MAX_NODES ? r->nnodes : JS_FACTS_MAX_NODES;
    for (size_t i = 0; i < f->nnodes; i++) {
        snprintf(f->node_name[i], sizeof(f->node_name[0]), "%s", r->nodes[i].name);
        f->node_mean_cores[i] = snum(&r->nodes[i], "cpu.mean_cores");
    }
    r->facts_done = true;
    return f;
}

/* ---- charts -----------------------------------------------------------------------------------------------
 */

enum {
    F_FILL = 1 << 0,     /* fill under the first series */
    F_CORES = 1 << 1,    /* a line at the cores available */
    F_LIMIT = 1 << 2,    /* a line at the memory limit, and a marker at the kernel peak */
    F_HOSTMEM = 1 << 3,  /* a line at the host's memory */
    F_RANGE01 = 1 << 4,  /* value axis 0..1 */
    F_NONZERO = 1 << 5,  /* leave out series that are zero throughout */
    F_COMBINED = 1 << 6, /* in the nodes section: one series per node (first column) */
    F_GPUMEM = 1 << 7,   /* a line at the largest GPU's memory */
};

typedef struct {
    const char *id, *section, *title, *unit, *view;
    struct {
        const char *col, *name; /* col may end in '*' (a prefix); name NULL: from the column */
    } s[6];
    unsigned flags;
    unsigned height;
} cspec_t;

/* The known views and their curated charts, in page order. A view listed here gets only these charts. */
/* clang-format off */
static const cspec_t chart_specs[] = {
    {"cpu", "cpu", "Cores in use", "cores", "tree",
     {{"cpu_cores", "cores in use"}}, F_FILL | F_CORES | F_COMBINED, 0},
    {"host-cpu", "cpu", "CPU utilisation of the host", "fraction", "system",
     {{"cpu_util_fraction", "busy"}, {"iowait_fraction", "iowait"}, {"steal_fraction", "steal"}}, F_RANGE01, 200},
    {"cpufreq", "cpu", "CPU frequency (mean, minimum and maximum over the CPUs)", "Hz", "cpufreq",
     {{"freq_mhz", "frequency"}}, 0, 200},
    {"gpu-util", "gpu", "GPU utilisation, per device", "fraction", "gpu",
     {{"util_fraction", NULL}}, F_RANGE01, 0},
    {"gpu-mem", "gpu", "GPU memory in use, per device", "bytes", "gpu",
     {{"mem_used_bytes", NULL}}, F_GPUMEM, 0},
    {"gpu-job-mem", "gpu", "GPU memory of the job's processes, per device", "bytes", "gpu",
     {{"job_mem_bytes", NULL}}, F_NONZERO, 200},
    {"gpu-power", "gpu", "GPU power, per device", "W", "gpu",
     {{"power_w", NULL}}, 0, 200},
    {"gpu-temp", "gpu", "GPU temperature, per device", "\xc2\xb0" "C", "gpu",
     {{"temp_c", NULL}}, 0, 180},
    {"mem", "memory", "Memory of the job", "bytes", "tree",
     {{"memory_bytes", "memory (no page twice)"}, {"rss_sum_bytes", "RSS sum (shared pages per process)"},
      {"rss_main_bytes", "RSS of the command"}, {"uss_bytes", "private (USS)"}, {"pss_bytes", "PSS"}},
     F_FILL | F_LIMIT | F_COMBINED, 0},
    {"swap", "memory", "Swap used by the job", "bytes", "tree",
     {{"swap_bytes", "swap (tree)"}}, F_NONZERO, 180},
    {"host-mem", "memory", "Memory of the host", "bytes", "system",
     {{"mem_used_bytes", "used"}, {"mem_available_bytes", "available"}, {"swap_used_bytes", "swap used"}},
     F_HOSTMEM, 200},
    {"io", "io", "Storage I/O of the job", "bytes/s", "tree",
     {{"read_bytes_per_s", "read"}, {"write_bytes_per_s", "write"}}, 0, 0},
    {"io-calls", "io", "Read and write calls of the job (page cache, pipes and sockets included)", "bytes/s",
     "tree", {{"read_chars_per_s", "read calls"}, {"write_chars_per_s", "write calls"}}, 0, 200},
    {"host-disk", "io", "Disks of the host", "bytes/s", "system",
     {{"disk_*", NULL}}, F_NONZERO, 200},
    {"pressure", "io", "Pressure stall information (PSI) of the host", "fraction", "system",
     {{"psi_cpu_some_fraction", "CPU some"}, {"psi_memory_some_fraction", "memory some"},
      {"psi_memory_full_fraction", "memory full"}, {"psi_io_some_fraction", "I/O some"},
      {"psi_io_full_fraction", "I/O full"}}, F_RANGE01, 200},
    {"net", "network", "Network traffic of the host, per interface", "bytes/s", "network",
     {{"rx_bytes_per_s", "receive"}, {"tx_bytes_per_s", "transmit"}}, F_NONZERO, 0},
    {"net-errors", "network", "Network errors and drops", "/s", "network",
     {{"rx_errors_per_s", "receive errors"}, {"tx_errors_per_s", "transmit errors"},
      {"rx_drops_per_s", "receive drops"}, {"tx_drops_per_s", "transmit drops"}}, F_NONZERO, 180},
    {"ib", "network", "InfiniBand traffic, per port", "bytes/s", "infiniband",
     {{"xmit_bytes_per_s", "send"}, {"rcv_bytes_per_s", "receive"}}, F_NONZERO, 0},
    {"power", "power", "Power (RAPL), per domain", "W", "energy",
     {{"power_w", NULL}}, 0, 0},
    {"energy", "power", "Energy since the start (RAPL), per domain, and the job's share", "J", "energy",
     {{"energy_j", NULL}, {"scope_energy_j", "job's share"}}, 0, 200},
    {"temp", "thermal", "Temperatures", "\xc2\xb0" "C", "thermal",
     {{"temp_celsius", NULL}}, 0, 200},
    {"procs", "procs", "Processes and threads of the job", "count", "tree",
     {{"processes", "processes"}, {"threads", "threads"}}, 0, 180},
};
/* clang-format on */
#define NSPECS (sizeof(chart_specs) / sizeof(chart_specs[0]))

static const struct {
    const char *id, *title;
} sections[] = {
    {"cpu", "CPU"},
    {"gpu", "GPUs"},
    {"memory", "Memory"},
    {"io", "I/O and pressure"},
    {"network", "Network"},
    {"power", "Power and energy"},
    {"thermal", "Temperature"},
    {"procs", "Processes"},
};

/* col_match: whether column `col` matches the spec column `pat` (exact, or a prefix ending in '*'). */
static bool col_match(const char *pat, const char *col)
{
    size_t n = strlen(pat);
    if (n && pat[n - 1] == '*')
        return strncmp(pat, col, n - 1) == 0;
    return strcmp(pat, col) == 0;
}

/* pretty_col: a legend name from a column name: the unit suffix and a matched prefix dropped, '_' as ' '. */
static void pretty_col(const char *col, const char *prefix, char *buf, size_t cap)
{
    static const char *const suffixes[] = {"_bytes_per_s", "_per_s", "_fraction", "_bytes", "_celsius",
                                           "_mhz",         "_w",     "_j",        "_s"};
    size_t skip = prefix && prefix[strlen(prefix) - 1] == '*' ? strlen(prefix) - 1 : 0;
    snprintf(buf, cap, "%s", col + (strlen(col) > skip ? skip : 0));
    size_t n = strlen(buf);
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        size_t k = strlen(suffixes[i]);
        if (n > k && strcmp(buf + n - k, suffixes[i]) == 0) {
            buf[n - k] = '\0';
            break;
        }
    }
    for (char *p = buf; *p; p++)
        if (*p == '_')
            *p = ' ';
}

/* A run (or node) that contributes series to a chart: its data, a name prefix, dashed or not. */
typedef struct {
    const rnode_t *n;
    const char *label; /* NULL: no prefix */
    bool dashed;
} src_t;

/* curated_here: whether `view` is drawn by curated charts for these sources (a view jobscope knows, one of
 * whose curated columns they hold), or not charted at all; otherwise it gets the generic charts, so a view
 * whose columns were renamed still shows. */
static bool curated_here(const src_t *src, size_t nsrc, const char *view)
{
    if (!strcmp(view, "process") || !strcmp(view, "marks") || !strcmp(view, "phases"))
        return true;
    for (size_t i = 0; i < NSPECS; i++) {
        const cspec_t *c = &chart_specs[i];
        if (strcmp(c->view, view) != 0)
            continue;
        for (size_t k = 0; k < sizeof(c->s) / sizeof(c->s[0]) && c->s[k].col; k++)
            for (size_t a = 0; a < nsrc; a++)
                for (size_t j = 0; j < src[a].n->ns; j++)
                    if (!strcmp(src[a].n->s[j].view, view) && col_match(c->s[k].col, src[a].n->s[j].col))
                        return true;
    }
    return false;
}

typedef struct {
    js_series_t s[MAX_CHART_SERIES];
    char names[MAX_CHART_SERIES][160];
    double *own[2 * MAX_CHART_SERIES]; /* compacted copies of sparse series */
    size_t n, nown;
    int err;
} serieslist_t;

static void list_free(serieslist_t *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->nown; i++)
        free(l->own[i]);
    free(l);
}

/* sparse: whether the finite values of v are mostly isolated (a value read every few samples, at a source's
 * cadence): then the points are joined rather than drawn as dots between gaps. */
static bool sparse(const double *v, size_t n, size_t *ret_finite)
{
    size_t finite = 0, pairs = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(v[i]))
            continue;
        finite++;
        pairs += i > 0 && isfinite(v[i - 1]);
    }
    *ret_finite = finite;
    return finite >= 2 && finite < n && pairs * 10 < finite;
}

/* add_series: append a series of node n's values v (name prefixed by `label`); a sparse one is compacted. */
static void add_series(serieslist_t *l, const rnode_t *n, const double *v, const char *name,
                       const char *label, bool dashed, js_colour_t colour, bool fill)
{
    if (l->n == MAX_CHART_SERIES || l->err)
        return;
    if (label)
        snprintf(l->names[l->n], sizeof(l->names[0]), "%s: %s", label, name);
    else
        snprintf(l->names[l->n], sizeof(l->names[0]), "%s", name);
    const double *t = n->t;
    size_t count = n->n, finite;
    if (sparse(v, n->n, &finite)) {
        double *ct = malloc(finite * sizeof(*ct)), *cv = malloc(finite * sizeof(*cv));
        if (!ct || !cv) {
            free(ct);
            free(cv);
            l->err = -ENOMEM;
            return;
        }
        size_t k = 0;
        for (size_t i = 0; i < n->n; i++)
            if (isfinite(v[i])) {
                ct[k] = n->t[i];
                cv[k++] = v[i];
            }
        l->own[l->nown++] = ct;
        l->own[l->nown++] = cv;
        t = ct;
        v = cv;
        count = k;
    }
    l->s[l->n] = (js_series_t){
        .name = l->names[l->n], .t = t, .v = v, .n = count, .colour = colour, .fill = fill, .dashed = dashed};
    l->n++;
}

typedef struct {
    js_html_t *h;
    const js_report_t *r;
    const char *idp; /* id prefix */
    const js_facts_t *facts;
    bool compare;
} page_t;

/* spec_series: the series of chart `c` from the sources. In a comparison each (column, group) keeps one
 * colour across the runs (B dashed); with several nodes (F_COMBINED) each node has its colour and only the
 * first column is drawn. Colours go to the series drawn, in order. */
static void spec_series(const cspec_t *c, const src_t *src, size_t nsrc, bool combined, serieslist_t *l)
{
    size_t key = 0; /* colour position of a (column, group) within the chart */
    for (size_t k = 0; k < sizeof(c->s) / sizeof(c->s[0]) && c->s[k].col; k++) {
        if (combined && k > 0)
            break;
        /* the groups of this column, in the first source that has them, then any other source's */
        for (size_t a = 0; a < nsrc; a++) {
            const rnode_t *n = src[a].n;
            for (size_t i = 0; i < n->ns; i++) {
                const rseries_t *rs = &n->s[i];
                if (strcmp(rs->view, c->view) != 0 || !col_match(c->s[k].col, rs->col))
                    continue;
                /* seen in an earlier source: drawn with it */
                bool earlier = false;
                for (size_t b = 0; b < a && !earlier && !combined; b++)
                    earlier = find_series(src[b].n, rs->view, rs->col, rs->group) != NULL;
                if (earlier)
                    continue;
                bool drawn = false;
                for (size_t b = combined ? a : 0; b < (combined ? a + 1 : nsrc); b++) {
                    const rseries_t *x = b == a ? rs : find_series(src[b].n, rs->view, rs->col, rs->group);
                    if (!x)
                        continue;
                    sstat_t st = sstat(src[b].n, x);
                    if (!st.finite || ((c->flags & F_NONZERO) && !st.nonzero))
                        continue;
                    char name[128], colname[64];
                    const char *cn = c->s[k].name;
                    if (!cn) {
                        pretty_col(rs->col, c->s[k].col, colname, sizeof(colname));
                        cn = colname;
                    }
                    if (combined)
                        snprintf(name, sizeof(name), "%s", src[b].n->name);
                    else if (rs->group[0] && (c->s[1].col || !c->s[k].name))
                        snprintf(name, sizeof(name), "%s %s", rs->group, c->s[k].name ? cn : "");
                    else if (rs->group[0])
                        snprintf(name, sizeof(name), "%s", rs->group);
                    else
                        snprintf(name, sizeof(name), "%s", cn);
                    size_t len = strlen(name);
                    while (len && name[len - 1] == ' ')
                        name[--len] = '\0';
                    js_colour_t col = (js_colour_t)(1 + (combined ? b : key) % (JS_COLOUR_MAX - 1));
                    bool fill = (c->flags & F_FILL) && key == 0 && nsrc == 1;
                    add_series(l, src[b].n, x->v, name, combined ? NULL : src[b].label, src[b].dashed, col,
                               fill);
                    drawn = true;
                }
                key += drawn;
            }
        }
    }
}

/* add_hline: a reference line, unless one at the same value is drawn already (two runs with the same
 * allocation): that one then loses its run prefix (`plain` is the label without it). */
static size_t add_hline(js_hline_t *hl, char (*labels)[200], size_t nh, double v, const char *label,
                        const char *plain)
{
    for (size_t i = 0; i < nh; i++)
        if (hl[i].v == v) {
            snprintf(labels[i], sizeof(labels[0]), "%s", plain);
            return nh;
        }
    snprintf(labels[nh], sizeof(labels[0]), "%s", label);
    hl[nh] = (js_hline_t){v, labels[nh], JS_VERMILLION};
    return nh + 1;
}

/* chart_time: the time range shared by the sources (0 .. the latest end). */
static void chart_time(const src_t *src, size_t nsrc, double *t_min, double *t_max)
{
    *t_min = 0;
    *t_max = 0;
    for (size_t a = 0; a < nsrc; a++)
        if (src[a].n->n && src[a].n->t[src[a].n->n - 1] > *t_max)
            *t_max = src[a].n->t[src[a].n->n - 1];
}

static int emit_spec(page_t *pg, const cspec_t *c, const src_t *src, size_t nsrc, bool combined,
                     const char *id_suffix)
{
    serieslist_t *l = calloc(1, sizeof(*l));
    if (!l)
        return pg->h->err = -ENOMEM;
    spec_series(c, src, nsrc, combined, l);
    if (!l->n || l->err) {
        int e = l->err;
        list_free(l);
        return e ? (pg->h->err = e) : 0;
    }
    js_hline_t hl[4];
    js_marker_t mk[4];
    char hlabel[4][200], mlabel[4][96], vb[48];
    size_t nh = 0, nm = 0;
    for (size_t a = 0; a < nsrc && a < 2; a++) {
        const rnode_t *n = src[a].n;
        const char *who = nsrc > 1 && src[a].label ? src[a].label : NULL;
        char lab[200], plain[96];
        if ((c->flags & F_CORES) && n->cores_available > 0 && !combined) {
            snprintf(plain, sizeof(plain), "cores available %s",
                     units_format(vb, sizeof(vb), n->cores_available, "count"));
            snprintf(lab, sizeof(lab), "%s%s%s", who ? who : "", who ? ": " : "", plain);
            nh = add_hline(hl, hlabel, nh, n->cores_available, lab, plain);
        }
        if ((c->flags & F_LIMIT) && !combined) {
            js_facts_t f;
            node_facts(n, &f);
            if (isfinite(f.mem_limit)) {
                snprintf(plain, sizeof(plain), "memory limit %s",
                         units_format(vb, sizeof(vb), f.mem_limit, "bytes"));
                snprintf(lab, sizeof(lab), "%s%s%s", who ? who : "", who ? ": " : "", plain);
                nh = add_hline(hl, hlabel, nh, f.mem_limit, lab, plain);
            }
            /* the kernel's peak (largest single process) where the largest VmHWM reached it */
            const rseries_t *hwm = find_series(n, "tree", "hwm_max_bytes", "");
            const rseries_t *rss = find_series(n, "tree", "rss_sum_bytes", "");
            const rseries_t *which = hwm ? hwm : rss;
            sstat_t st = which ? sstat(n, which) : stat_of(NULL, 0);
            double hwm_peak = snum(n, "memory.peak_rss_kernel_bytes");
            if (isfinite(hwm_peak) && st.finite && nm < 4) {
                size_t at = st.imax;
                for (size_t i = 0; hwm && i < n->n; i++)
                    if (isfinite(hwm->v[i]) && hwm->v[i] >= hwm_peak) {
                        at = i;
                        break;
                    }
                snprintf(mlabel[nm], sizeof(mlabel[0]), "%s%skernel peak %s (one process)", who ? who : "",
                         who ? ": " : "", units_format(vb, sizeof(vb), hwm_peak, "bytes"));
                mk[nm] = (js_marker_t){n->t[at], hwm_peak, mlabel[nm], JS_BLACK};
                nm++;
            }
        }
        if ((c->flags & F_HOSTMEM) && !combined) {
            const rseries_t *tot = find_series(n, "system", "mem_total_bytes", "");
            sstat_t st = tot ? sstat(n, tot) : stat_of(NULL, 0);
            if (st.finite) {
                snprintf(plain, sizeof(plain), "memory %s", units_format(vb, sizeof(vb), st.max, "bytes"));
                snprintf(lab, sizeof(lab), "%s%s%s", who ? who : "", who ? ": " : "", plain);
                nh = add_hline(hl, hlabel, nh, st.max, lab, plain);
            }
        }
        if ((c->flags & F_GPUMEM) && !combined) {
            double mx = NAN; /* the largest device's memory */
            for (size_t i = 0; i < n->ns; i++)
                if (!strcmp(n->s[i].view, "gpu") && !strcmp(n->s[i].col, "mem_total_bytes"))
                    mx = nan_max(mx, sstat(n, &n->s[i]).max);
            if (isfinite(mx)) {
                snprintf(plain, sizeof(plain), "device memory %s", units_format(vb, sizeof(vb), mx, "bytes"));
                snprintf(lab, sizeof(lab), "%s%s%s", who ? who : "", who ? ": " : "", plain);
                nh = add_hline(hl, hlabel, nh, mx, lab, plain);
            }
        }
    }
    js_band_t *bands = NULL;
    js_event_t *events = NULL;
    size_t nb = 0, ne = 0;
    js_chart_t ch = {0};
    if (chart_marks(pg->r, pg->compare, &bands, &nb, &events, &ne, &ch) < 0) {
        list_free(l);
        return pg->h->err = -ENOMEM;
    }
    char id[96], title[256];
    snprintf(id, sizeof(id), "%s%s%s", pg->idp, c->id, id_suffix ? id_suffix : "");
    snprintf(title, sizeof(title), "%s", c->title);
    if (combined)
        snprintf(title, sizeof(title), "%s, per node", c->title);
    double t_min, t_max;
    chart_time(src, nsrc, &t_min, &t_max);
    ch.id = id;
    ch.title = title;
    ch.unit = c->unit;
    ch.series = l->s;
    ch.nseries = l->n;
    ch.hlines = hl;
    ch.nhlines = nh;
    ch.markers = mk;
    ch.nmarkers = nm;
    ch.bands = bands;
    ch.nbands = nb;
    ch.events = events;
    ch.nevents = ne;
    ch.t_min = t_min;
    ch.t_max = t_max;
    ch.v_min = 0;
    ch.v_max = (c->flags & F_RANGE01) ? 1 : 0;
    ch.height = c->height;
    int rc = svg_line_chart(pg->h, &ch);
    free(bands);
    free(events);
    list_free(l);
    return rc;
}

/* ---- generic charts of views jobscope does not know ---- */

/* generic_units: the distinct display units of the kept series of `view` over the sources, in column order.
 */
static size_t generic_units(const src_t *src, size_t nsrc, const char *view, const char **units, size_t cap)
{
    size_t nu = 0;
    for (size_t a = 0; a < nsrc; a++)
        for (size_t i = 0; i < src[a].n->ns; i++) {
            const rseries_t *rs = &src[a].n->s[i];
            if (strcmp(rs->view, view) != 0)
                continue;
            size_t u = 0;
            while (u < nu && strcmp(units[u], rs->unit) != 0)
                u++;
            if (u == nu && nu < cap)
                units[nu++] = rs->unit;
        }
    return nu;
}

static int emit_generic_view(page_t *pg, const src_t *src, size_t nsrc, const char *view)
{
    const char *units[32];
    size_t nu = generic_units(src, nsrc, view, units, 32);
    for (size_t u = 0; u < nu && !pg->h->err; u++) {
        serieslist_t *l = calloc(1, sizeof(*l));
        if (!l)
            return pg->h->err = -ENOMEM;
        size_t pos = 0;
        for (size_t a = 0; a < nsrc; a++)
            for (size_t i = 0; i < src[a].n->ns; i++) {
                const rseries_t *rs = &src[a].n->s[i];
                if (strcmp(rs->view, view) != 0 || strcmp(rs->unit, units[u]) != 0)
                    continue;
                bool earlier = false;
                for (size_t b = 0; b < a && !earlier; b++)
                    earlier = find_series(src[b].n, rs->view, rs->col, rs->group) != NULL;
                if (earlier)
                    continue;
                size_t p = pos;
                bool drawn = false;
                for (size_t b = 0; b < nsrc; b++) {
                    const rseries_t *x = b == a ? rs : find_series(src[b].n, rs->view, rs->col, rs->group);
                    if (!x || !sstat(src[b].n, x).finite)
                        continue;
                    char colname[64], name[160];
                    pretty_col(rs->col, NULL, colname, sizeof(colname));
                    if (rs->group[0])
                        snprintf(name, sizeof(name), "%s %s", rs->group, colname);
                    else
                        snprintf(name, sizeof(name), "%s", colname);
                    add_series(l, src[b].n, x->v, name, src[b].label, src[b].dashed,
                               (js_colour_t)(1 + p % (JS_COLOUR_MAX - 1)), false);
                    drawn = true;
                }
                pos += drawn;
            }
        if (l->n && !l->err) {
            char id[96], title[160];
            snprintf(id, sizeof(id), "%sv-%s-%zu", pg->idp, view, u);
            snprintf(title, sizeof(title), "%s: %s", view, units[u][0] ? units[u] : "values");
            double t_min, t_max;
            chart_time(src, nsrc, &t_min, &t_max);
            js_band_t *bands = NULL;
            js_event_t *events = NULL;
            size_t nb = 0, ne = 0;
            js_chart_t ch = {0};
            if (chart_marks(pg->r, pg->compare, &bands, &nb, &events, &ne, &ch) < 0) {
                list_free(l);
                return pg->h->err = -ENOMEM;
            }
            bool frac = strcmp(units[u], "fraction") == 0;
            /* the allocation, where the unit is that of one: cores available, the cgroup's memory limit */
            js_hline_t hl[4];
            char hlabel[4][200], vb[48], lab[200], plain[96];
            size_t nh = 0;
            for (size_t a = 0; a < nsrc && a < 2; a++) {
                const char *who = nsrc > 1 && src[a].label ? src[a].label : NULL;
                double lim = NAN;
                if (!strcmp(units[u], "cores") && src[a].n->cores_available > 0) {
                    lim = src[a].n->cores_available;
                    snprintf(plain, sizeof(plain), "cores available %s",
                             units_format(vb, sizeof(vb), lim, "count"));
                } else if (!strcmp(units[u], "bytes") && !strcmp(view, "cgroup")) {
                    js_facts_t f;
                    node_facts(src[a].n, &f);
                    lim = f.mem_limit;
                    snprintf(plain, sizeof(plain), "memory limit %s",
                             units_format(vb, sizeof(vb), lim, "bytes"));
                }
                if (!isfinite(lim))
                    continue;
                snprintf(lab, sizeof(lab), "%s%s%s", who ? who : "", who ? ": " : "", plain);
                nh = add_hline(hl, hlabel, nh, lim, lab, plain);
            }
            ch.id = id;
            ch.title = title;
            ch.unit = units[u];
            ch.series = l->s;
            ch.nseries = l->n;
            ch.hlines = hl;
            ch.nhlines = nh;
            ch.bands = bands;
            ch.nbands = nb;
            ch.events = events;
            ch.nevents = ne;
            ch.t_min = t_min;
            ch.t_max = t_max;
            ch.v_max = frac ? 1 : 0;
            ch.height = 200;
            svg_line_chart(pg->h, &ch);
            free(bands);
            free(events);
        }
        list_free(l);
    }
    return pg->h->err;
}

/* ---- heat maps ---- */

/* cpu_number: N of a column "cpuN_util_fraction", or -1. */
static long cpu_number(const char *col)
{
    if (strncmp(col, "cpu", 3) != 0 || col[3] < '0' || col[3] > '9')
        return -1;
    char *end;
    long k = strtol(col + 3, &end, 10);
    return strcmp(end, "_util_fraction") == 0 ? k : -1;
}

static int emit_cpu_heatmap(page_t *pg, const rnode_t *n)
{
    size_t cnt = 0;
    for (size_t i = 0; i < n->ns; i++)
        cnt += strcmp(n->s[i].view, "system") == 0 && cpu_number(n->s[i].col) >= 0;
    if (cnt < 2)
        return 0;
    js_series_t *rows = calloc(cnt, sizeof(*rows));
    char(*names)[24] = calloc(cnt, sizeof(*names));
    if (!rows || !names) {
        free(rows);
        free(names);
        return pg->h->err = -ENOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < n->ns; i++) {
        long c = strcmp(n->s[i].view, "system") == 0 ? cpu_number(n->s[i].col) : -1;
        if (c < 0)
            continue;
        snprintf(names[k], sizeof(names[0]), "CPU %ld", c);
        rows[k] = (js_series_t){.name = names[k], .t = n->t, .v = n->s[i].v, .n = n->n};
        k++;
    }
    char id[64];
    snprintf(id, sizeof(id), "%scpu-heat", pg->idp);
    int rc =
        svg_heatmap(pg->h, &(js_heatmap_t){.id = id,
                                           .title = "Utilisation of each CPU of the host, CPUs \xc3\x97 time",
                                           .unit = "fraction",
                                           .rows = rows,
                                           .nrows = k,
                                           .cols = n->n < 181 ? n->n : 181,
                                           .v_min = 0,
                                           .v_max = 1});
    free(rows);
    free(names);
    return rc;
}

/* emit_node_heatmap: nodes x time, cores in use over cores available (or cores when that is unknown). */
static int emit_node_heatmap(page_t *pg)
{
    const js_report_t *r = pg->r;
    js_series_t *rows = calloc(r->nnodes, sizeof(*rows));
    double **vals = calloc(r->nnodes, sizeof(*vals));
    if (!rows || !vals) {
        free(rows);
        free(vals);
        return pg->h->err = -ENOMEM;
    }
    bool frac = true;
    for (size_t i = 0; i < r->nnodes; i++)
        frac &= r->nodes[i].cores_available > 0;
    size_t k = 0, maxn = 0;
    for (size_t i = 0; i < r->nnodes; i++) {
        const rnode_t *n = &r->nodes[i];
        const rseries_t *s = find_series(n, "tree", "cpu_cores", "");
        maxn = n->n > maxn ? n->n : maxn;
        if (!s || !(vals[k] = malloc((n->n ? n->n : 1) * sizeof(double))))
            continue;
        for (size_t j = 0; j < n->n; j++)
            vals[k][j] = frac ? s->v[j] / n->cores_available : s->v[j];
        rows[k] = (js_series_t){.name = n->name, .t = n->t, .v = vals[k], .n = n->n};
        k++;
    }
    char id[64];
    snprintf(id, sizeof(id), "%snode-heat", pg->idp);
    int rc = k ? svg_heatmap(pg->h,
                             &(js_heatmap_t){.id = id,
                                             .title = frac ? "CPU use of each node (cores in use / cores "
                                                             "available), nodes \xc3\x97 time"
                                                           : "Cores in use on each node, nodes \xc3\x97 time",
                                             .unit = frac ? "fraction" : "cores",
                                             .rows = rows,
                                             .nrows = k,
                                             .cols = maxn < 181 ? maxn : 181,
                                             .v_min = 0,
                                             .v_max = frac ? 1 : 0})
               : 0;
    for (size_t i = 0; i < r->nnodes; i++)
        free(vals[i]);
    free(vals);
    free(rows);
    return rc;
}

/* ---- bars: the top processes ---- */

/* tops_bars: the bars of one of the summary's top lists (top.by_cpu, top.by_memory); returns how many */
static size_t tops_bars(const rnode_t *n, const char *path, bool cpu, js_bar_t *bars, char (*notes)[128])
{
    const js_figure_t *tops = fig_get(sroot(n), path);
    size_t k = 0;
    for (size_t i = 0; i < fig_count(tops) && k < JS_TOP_CPU_MAX; i++) {
        const js_figure_t *t = fig_kid(tops, i);
        char b1[48];
        int64_t procs = fig_int(t, "processes", 0);
        if (cpu)
            snprintf(notes[k], 128, "%lld process%s, peak RSS %s", (long long)procs, procs == 1 ? "" : "es",
                     units_format(b1, sizeof(b1), fig_num(t, "peak_rss_bytes"), "bytes"));
        else
            snprintf(notes[k], 128, "%lld process%s, CPU %s", (long long)procs, procs == 1 ? "" : "es",
                     units_format(b1, sizeof(b1), fig_num(t, "cpu_s"), "s"));
        const char *comm = fig_text(t, "comm");
        bars[k] = (js_bar_t){comm ? comm : "", fig_num(t, cpu ? "cpu_s" : "peak_rss_bytes"), notes[k]};
        k++;
    }
    int64_t others = fig_int(sroot(n), "top.others_commands", 0);
    if (cpu && k && others > 0) { /* the rest, so that the bars account for all the CPU sampling saw */
        snprintf(notes[k], 128, "%lld other command%s", (long long)others, others == 1 ? "" : "s");
        bars[k] = (js_bar_t){"others", snum(n, "top.others_cpu_s"), notes[k]};
        k++;
    }
    return k;
}

static int emit_tops(page_t *pg, const rnode_t *n)
{
    js_bar_t bars[JS_TOP_CPU_MAX + 1];
    char notes[JS_TOP_CPU_MAX + 1][128];
    char id[64];
    size_t nb = tops_bars(n, "top.by_cpu", true, bars, notes);
    if (nb > 0) {
        snprintf(id, sizeof(id), "%stop-cpu", pg->idp);
        svg_bar_chart(
            pg->h, &(js_bars_t){
                       .id = id,
                       .title = "Top commands by CPU time (processes sampling saw; those covering 90% of it, "
                                "then the others)",
                       .unit = "s",
                       .bars = bars,
                       .nbars = nb});
    }
    nb = tops_bars(n, "top.by_memory", false, bars, notes);
    if (nb > 0) {
        snprintf(id, sizeof(id), "%stop-mem", pg->idp);
        svg_bar_chart(pg->h, &(js_bars_t){.id = id,
                                          .title = "Top commands by memory (largest RSS of one process)",
                                          .unit = "bytes",
                                          .bars = bars,
                                          .nbars = nb,
                                          .colour = JS_ORANGE});
    }
    return pg->h->err;
}

/* ---- tables ----------------------------------------------------------------------------------------------
 */

static void fmt_when(char *buf, size_t cap, int64_t unix_ns)
{
    if (unix_ns <= 0) {
        snprintf(buf, cap, "unknown");
        return;
    }
    time_t t = (time_t)(unix_ns / 1000000000);
    struct tm tm;
    gmtime_r(&t, &tm);
    if (strftime(buf, cap, "%Y-%m-%d %H:%M:%S UTC", &tm) == 0 && cap)
        buf[0] = '\0';
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

/* row_unit: the unit the page shows a summary row's unit in, and the factor to it (NULL: a plain number) */
static const char *row_unit(const char *unit, double *scale)
{
    static const struct {
        const char *unit, *shown;
        double scale;
    } m[] = {{"MHz", "Hz", 1e6},
             {"celsius",
              "\xc2\xb0"
              "C",
              1},
             {"GB/s", "bytes/s", 1e9},
             {"GFLOP", "FLOP", 1e9},
             {"GFLOP/s", "FLOP/s", 1e9},
             {"ns", "s", 1e-9},
             {"count", NULL, 1},
             {"ratio", NULL, 1},
             {"events", NULL, 1}};
    *scale = 1;
    if (!unit)
        return NULL;
    for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
        if (strcmp(unit, m[i].unit) == 0) {
            *scale = m[i].scale;
            return m[i].shown;
        }
    return unit;
}

/* fig_cell: a summary row as a table cell, in the unit the page shows (*ret_unit). */
static js_cell_t fig_cell(const js_figure_t *f, const char **ret_unit)
{
    double scale;
    *ret_unit = NULL;
    if (!f || !f->present)
        return cell_missing();
    switch (f->kind) {
    case FIG_NUM:
        *ret_unit = row_unit(f->unit, &scale);
        return cell_real(f->num * scale);
    case FIG_INT:
        *ret_unit = row_unit(f->unit, &scale);
        return *ret_unit && scale != 1 ? cell_real((double)f->i * scale) : cell_int(f->i);
    case FIG_BOOL:
        return cell_text(f->b ? "yes" : "no");
    case FIG_TEXT:
    case FIG_JSON:
        return cell_text(f->text);
    default:
        return cell_missing();
    }
}

/* A row of a table of summary figures: its label and path (the value, its unit from the row). */
typedef struct {
    const char *label, *path;
} srow_t;

/* kv_rows: the figures `rows` of node n as a key-value table. */
static void kv_rows(js_html_t *h, const rnode_t *n, const srow_t *rows, size_t nrows)
{
    js_kv_t kv[24];
    size_t k = 0;
    for (size_t i = 0; i < nrows && k < sizeof(kv) / sizeof(kv[0]); i++) {
        kv[k].key = rows[i].label;
        kv[k].value = fig_cell(fig_get(sroot(n), rows[i].path), &kv[k].unit);
        k++;
    }
    html_kv_table(h, kv, k);
}

/* summary_tables: the tree model's figures of one node, as tables with units people read. */
static void summary_tables(js_html_t *h, const rnode_t *n)
{
    const js_figure_t *total = fig_get(sroot(n), "cpu.total_s"), *ex = fig_get(sroot(n), "exact.cpu");
    const char *how = total && total->exact == FIG_EXACT ? "exact (kernel accounting of every process)"
                      : ex && ex->method                 ? ex->method
                                                         : "sampled";
    html_raw(h, "<div class=\"cols\">\n<div>\n");
    h3(h, "CPU");
    static const srow_t cpu[] = {
        {"CPU time", "cpu.total_s"},
        {"user CPU time", "cpu.user_s"},
        {"system CPU time", "cpu.system_s"},
        {"mean cores in use", "cpu.mean_cores"},
        {"peak cores in use", "cpu.max_cores"},
        {"cores available", "cpu.cores_available"},
        {"efficiency (mean / available)", "cpu.efficiency"},
        {"CPU not seen by any sample", "top.unattributed_cpu_s"},
    };
    kv_rows(h, n, cpu, sizeof(cpu) / sizeof(cpu[0]));
    html_kv_table(h, &(js_kv_t){"how measured", cell_text(how), NULL}, 1);
    html_raw(h, "</div>\n<div>\n");
    h3(h, "Memory");
    const js_figure_t *peak = fig_get(sroot(n), "memory.peak_bytes");
    const char *comm = fig_text(sroot(n), "memory.largest_process.comm");
    int64_t pid = sint(n, "memory.largest_process.pid");
    char largest[160] = "";
    if (comm && pid > 0)
        snprintf(largest, sizeof(largest), "%s (pid %d)", comm, (int)pid);
    else if (comm)
        snprintf(largest, sizeof(largest), "%s", comm);
    static const srow_t mem[] = {
        {"peak memory (request memory by this)", "memory.peak_bytes"},
        {"peak PSS sum (sampled)", "memory.peak_pss_bytes"},
        {"peak private (USS sum)", "memory.peak_private_bytes"},
        {"peak shared, counted once", "memory.peak_shared_bytes"},
        {"peak RSS sum (shared pages per process)", "memory.peak_rss_sum_bytes"},
        {"peak RSS, kernel (one process)", "memory.peak_rss_kernel_bytes"},
    };
    static const srow_t mem2[] = {
        {"peak RSS of the command", "memory.main.peak_rss_bytes"},
        {"peak RSS of the descendants", "memory.descendants.peak_rss_sum_bytes"},
        {"peak swap", "memory.peak_swap_bytes"},
        {"page faults, major", "faults.major"},
    };
    kv_rows(h, n, mem, 1);
    html_kv_table(h, &(js_kv_t){"how", peak && peak->method ? cell_text(peak->method) : cell_missing(), NULL},
                  1);
    kv_rows(h, n, mem + 1, sizeof(mem) / sizeof(mem[0]) - 1);
    html_kv_table(h, &(js_kv_t){"largest process", largest[0] ? cell_text(largest) : cell_missing(), NULL},
                  1);
    kv_rows(h, n, mem2, sizeof(mem2) / sizeof(mem2[0]));
    html_raw(h, "</div>\n<div>\n");
    h3(h, "I/O");
    static const srow_t io[] = {
        {"read from storage", "io.read_bytes"},
        {"written to storage", "io.write_bytes"},
        {"read calls", "io.read_chars"},
        {"write calls", "io.write_chars"},
        {"read system calls", "io.read_syscalls"},
        {"write system calls", "io.write_syscalls"},
        {"context switches, voluntary", "context_switches.voluntary"},
        {"context switches, involuntary", "context_switches.involuntary"},
    };
    kv_rows(h, n, io, sizeof(io) / sizeof(io[0]));
    html_raw(h, "</div>\n<div>\n");
    h3(h, "Processes and samples");
    static const srow_t pr[] = {
        {"processes seen", "processes.total"},
        {"most at once", "processes.max_concurrent"},
        {"most threads at once", "processes.max_threads"},
        {"reaped by the monitor", "processes.reaped_by_monitor"},
        {"interval", "samples.interval_s"},
        {"samples taken", "samples.taken"},
        {"deadlines missed", "samples.missed"},
    };
    kv_rows(h, n, pr, sizeof(pr) / sizeof(pr[0]));
    html_raw(h, "</div>\n</div>\n");
}

/* nodes_table: one row per node and one for the job. */
static void nodes_table(js_html_t *h, const js_report_t *r, const js_facts_t *f)
{
    static const js_col_t cols[] = {{"node", NULL},
                                    {"wall time", "s"},
                                    {"CPU time", "s"},
                                    {"mean cores", "cores"},
                                    {"peak cores", "cores"},
                                    {"cores available", "cores"},
                                    {"efficiency", "fraction"},
                                    {"peak memory", "bytes"},
                                    {"read", "bytes"},
                                    {"written", "bytes"}};
    const size_t nc = sizeof(cols) / sizeof(cols[0]);
    js_cell_t *cells = calloc((r->nnodes + 1) * nc, sizeof(*cells));
    if (!cells) {
        h->err = -ENOMEM;
        return;
    }
    double rd = NAN, wr = NAN;
    for (size_t i = 0; i < r->nnodes; i++) {
        const rnode_t *n = &r->nodes[i];
        js_cell_t *c = &cells[i * nc];
        double mean = snum(n, "cpu.mean_cores"), rb = snum(n, "io.read_bytes"),
               wb = snum(n, "io.write_bytes");
        c[0] = cell_text(n->name);
        c[1] = num_or_missing(snum(n, "wall_time_s"));
        c[2] = num_or_missing(snum(n, "cpu.total_s"));
        c[3] = num_or_missing(mean);
        c[4] = num_or_missing(snum(n, "cpu.max_cores"));
        c[5] = num_or_missing(n->cores_available);
        c[6] = num_or_missing(n->cores_available > 0 ? mean / n->cores_available : NAN);
        c[7] = num_or_missing(snum(n, "memory.peak_bytes"));
        c[8] = num_or_missing(rb);
        c[9] = num_or_missing(wb);
        rd = nan_sum(rd, rb);
        wr = nan_sum(wr, wb);
    }
    size_t nrows = r->nnodes;
    if (r->nnodes > 1) {
        js_cell_t *c = &cells[r->nnodes * nc];
        c[0] = cell_text("job (all nodes)");
        c[1] = num_or_missing(f->wall_s);
        c[2] = num_or_missing(f->cpu_s);
        c[3] = num_or_missing(f->mean_cores);
        c[4] = cell_missing(); /* peaks of different moments do not add up */
        c[5] = num_or_missing(f->cores_available);
        c[6] = num_or_missing(f->efficiency);
        c[7] = num_or_missing(f->peak_rss);
        c[8] = num_or_missing(rd);
        c[9] = num_or_missing(wr);
        nrows++;
    }
    html_table(h, r->nnodes > 1 ? "Per node and for the job (peak memory: the largest node's)" : NULL, cols,
               nc, cells, nrows);
    free(cells);
}

/* ---- the parts' summary sections, rendered from their rows ---- */

static const char *const core_keys[] = {
    "jobscope_version", "command", "command_line", "host",       "mode",        "scope",
    "scope_kind",       "state",   "exit_status",  "exec_error", "stop_reason", "wall_time_s",
    "recording",        "cpu",     "memory",       "io",         "faults",      "context_switches",
    "processes",        "top",     "samples",      "monitor",    "exact",       NULL};

static bool is_core_key(const char *k)
{
    for (size_t i = 0; core_keys[i]; i++)
        if (strcmp(core_keys[i], k) == 0)
            return true;
    return false;
}

/* key_unit: the unit a summary key's suffix names, and the factor to base units. */
static const char *key_unit(const char *key, double *scale)
{
    static const struct {
        const char *suffix, *unit;
        double scale;
    } m[] = {{"_bytes_per_s", "bytes/s", 1},
             {"_per_s", "/s", 1},
             {"_bytes", "bytes", 1},
             {"_fraction", "fraction", 1},
             {"_s", "s", 1},
             {"_j", "J", 1},
             {"_w", "W", 1},
             {"_mhz", "Hz", 1e6},
             {"_hz", "Hz", 1},
             {"_celsius",
              "\xc2\xb0"
              "C",
              1},
             {"_cores", "cores", 1},
             {"cores", "cores", 1}};
    size_t n = strlen(key);
    *scale = 1;
    for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
        size_t k = strlen(m[i].suffix);
        if (n >= k && strcmp(key + n - k, m[i].suffix) == 0) {
            *scale = m[i].scale;
            return m[i].unit;
        }
    }
    return NULL;
}

static void pretty_key(const char *key, char *buf, size_t cap)
{
    pretty_col(key, NULL, buf, cap);
}

/* A member of a summary object as the page lists it: a row, a group, or a row's method (the JSON's member).
 */
typedef struct {
    const char *name;
    const js_figure_t *f; /* NULL for a method */
    const char *method;
} smember_t;

/* members: the members of object g, each row's method after it (once per key, as the JSON has them). */
static size_t members(const js_figure_t *g, smember_t *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < fig_count(g) && n < cap; i++) {
        const js_figure_t *k = fig_kid(g, i);
        out[n++] = (smember_t){k->name, k, NULL};
        if (!k->method_key || n == cap)
            continue;
        bool dup = false;
        for (size_t j = 0; j < n && !dup; j++)
            dup = strcmp(out[j].name, k->method_key) == 0;
        if (!dup)
            out[n++] = (smember_t){k->method_key, NULL, k->method};
    }
    return n;
}

static bool member_scalar(const smember_t *m)
{
    return !m->f || !fig_is_group(m->f) || (m->f->kind == FIG_ARRAY && !fig_count(m->f));
}

static js_cell_t member_cell(const smember_t *m, const char **ret_unit)
{
    *ret_unit = NULL;
    if (!m->f)
        return m->method ? cell_text(m->method) : cell_missing();
    if (m->f->kind == FIG_ARRAY)
        return cell_text(""); /* an empty list */
    return fig_cell(m->f, ret_unit);
}

static void rows_object_table(js_html_t *h, const js_figure_t *o, int depth);

/* rows_array_table: an array of objects as a table, columns = their scalar members (first 12 names met). */
static void rows_array_table(js_html_t *h, const char *caption, const js_figure_t *a)
{
    const char *names[12];
    const char *units[12] = {0};
    size_t nc = 0, nr = fig_count(a) > 64 ? 64 : fig_count(a);
    smember_t *ms = calloc(256, sizeof(*ms));
    if (!ms) {
        h->err = -ENOMEM;
        return;
    }
    for (size_t r = 0; r < nr; r++) {
        size_t nm = members(fig_kid(a, r), ms, 256);
        for (size_t i = 0; i < nm; i++) {
            if (!member_scalar(&ms[i]))
                continue;
            size_t k = 0;
            while (k < nc && strcmp(names[k], ms[i].name) != 0)
                k++;
            const char *u;
            js_cell_t c = member_cell(&ms[i], &u);
            if (k == nc && nc < 12)
                names[nc++] = ms[i].name;
            if (k < nc && !units[k] && c.type == CELL_REAL)
                units[k] = u;
        }
    }
    js_col_t *cols = calloc(nc ? nc : 1, sizeof(*cols));
    js_cell_t *cells = calloc((nr ? nr : 1) * (nc ? nc : 1), sizeof(*cells));
    char(*cn)[64] = calloc(nc ? nc : 1, sizeof(*cn));
    if (!cols || !cells || !cn) {
        h->err = -ENOMEM;
        goto out;
    }
    if (!nr || !nc)
        goto out;
    for (size_t c = 0; c < nc; c++) {
        pretty_key(names[c], cn[c], sizeof(cn[0]));
        cols[c] = (js_col_t){cn[c], units[c]};
    }
    for (size_t r = 0; r < nr; r++) {
        size_t nm = members(fig_kid(a, r), ms, 256);
        for (size_t c = 0; c < nc; c++) {
            cells[r * nc + c] = cell_missing();
            for (size_t i = 0; i < nm; i++)
                if (member_scalar(&ms[i]) && strcmp(ms[i].name, names[c]) == 0) {
                    const char *u;
                    cells[r * nc + c] = member_cell(&ms[i], &u);
                    break;
                }
        }
    }
    html_table(h, caption, cols, nc, cells, nr);
out:
    free(ms);
    free(cols);
    free(cells);
    free(cn);
}

static void rows_object_table(js_html_t *h, const js_figure_t *o, int depth)
{
    smember_t ms[256];
    size_t nm = members(o, ms, sizeof(ms) / sizeof(ms[0])), ns = 0;
    for (size_t i = 0; i < nm; i++)
        ns += member_scalar(&ms[i]);
    if (ns) {
        js_kv_t *kv = calloc(ns, sizeof(*kv));
        char(*keys)[64] = calloc(ns, sizeof(*keys));
        if (!kv || !keys) {
            h->err = -ENOMEM;
        } else {
            size_t k = 0;
            for (size_t i = 0; i < nm; i++) {
                if (!member_scalar(&ms[i]))
                    continue;
                pretty_key(ms[i].name, keys[k], sizeof(keys[0]));
                kv[k].key = keys[k];
                kv[k].value = member_cell(&ms[i], &kv[k].unit);
                k++;
            }
            html_kv_table(h, kv, k);
        }
        free(kv);
        free(keys);
    }
    for (size_t i = 0; i < nm; i++) {
        const js_figure_t *m = ms[i].f;
        if (!m || member_scalar(&ms[i]))
            continue;
        char title[96];
        pretty_key(ms[i].name, title, sizeof(title));
        if (m->kind == FIG_OBJECT && depth < 4) {
            html_raw(h, depth < 2 ? "<h4>" : "<h5>");
            html_text(h, title);
            html_raw(h, depth < 2 ? "</h4>\n" : "</h5>\n");
            rows_object_table(h, m, depth + 1);
        } else if (m->kind == FIG_ARRAY) {
            rows_array_table(h, title, m);
        }
    }
}

/* parts_details: every section of the summary that is not the tree model's own. */
static void parts_details(js_html_t *h, const rnode_t *n)
{
    const js_figure_t *root = sroot(n);
    for (size_t i = 0; i < fig_count(root); i++) {
        const js_figure_t *m = fig_kid(root, i);
        if (is_core_key(m->name) || m->kind != FIG_OBJECT)
            continue;
        char title[96];
        pretty_key(m->name, title, sizeof(title));
        if (title[0] >= 'a' && title[0] <= 'z')
            title[0] = (char)(title[0] - 'a' + 'A');
        h3(h, title);
        rows_object_table(h, m, 1);
    }
}

static void inventory_table(js_html_t *h, const rnode_t *n)
{
    if (!n->ninv) {
        html_para(h, "The recording holds no inventory.");
        return;
    }
    static const js_col_t cols[] = {{"source", NULL}, {"item", NULL}, {"value", NULL}};
    js_cell_t *cells = calloc(3 * n->ninv, sizeof(*cells));
    if (!cells) {
        h->err = -ENOMEM;
        return;
    }
    char(*human)[96] = calloc(n->ninv, sizeof(*human));
    if (!human) {
        free(cells);
        h->err = -ENOMEM;
        return;
    }
    for (size_t i = 0; i < 3 * n->ninv; i++)
        cells[i] = n->inv[i] ? cell_text(n->inv[i]) : cell_missing();
    /* numbers in base units, by the key's suffix: shown for people, with the exact figure */
    for (size_t i = 0; i < n->ninv; i++) {
        const char *key = n->inv[3 * i + 1], *val = n->inv[3 * i + 2];
        double scale, x;
        char *end, hb[48];
        const char *unit = key ? key_unit(key, &scale) : NULL;
        if (!unit || !val || !*val || ((x = strtod(val, &end)), *end) || !isfinite(x))
            continue;
        units_format(hb, sizeof(hb), x * scale, unit);
        snprintf(human[i], sizeof(human[0]), "%s (%s)", hb, val);
        cells[3 * i + 2] = cell_text(human[i]);
    }
    html_table(h, NULL, cols, 3, cells, n->ninv);
    free(human);
    free(cells);
}

static void monitor_tables(js_html_t *h, const rnode_t *n)
{
    double wall = snum(n, "wall_time_s"), mon = snum(n, "monitor.cpu_s");
    static const srow_t rows[] = {{"CPU time of the monitor", "monitor.cpu_s"}};
    static const srow_t rows2[] = {
        {"largest RSS of the monitor", "monitor.max_rss_bytes"},
        {"mean cost per sample (collect and write)", "monitor.mean_sample_cost_s"},
        {"samples taken", "samples.taken"},
        {"deadlines missed", "samples.missed"},
        {"samples that could not be written", "monitor.write_errors"},
    };
    kv_rows(h, n, rows, 1);
    html_kv_table(h, &(js_kv_t){"share of one core", num_or_missing(wall > 0 ? mon / wall : NAN), "fraction"},
                  1);
    kv_rows(h, n, rows2, sizeof(rows2) / sizeof(rows2[0]));
    if (!n->ncosts)
        return;
    static const js_col_t cols[] = {
        {"source", NULL}, {"mean collect time", "s"}, {"samples", NULL}, {"failed samples", NULL}};
    js_cell_t cells[MAX_COSTS * 4];
    for (size_t i = 0; i < n->ncosts; i++) {
        const rcost_t *c = &n->costs[i];
        cells[4 * i] = cell_text(c->name);
        cells[4 * i + 1] = c->n ? cell_real(c->sum_ns / (double)c->n / 1e9) : cell_missing();
        cells[4 * i + 2] = cell_int(c->n);
        cells[4 * i + 3] = cell_int(c->fails);
    }
    html_table(h, "Cost of each source per sample", cols, 4, cells, n->ncosts);
}

/* ---- the page
 * ---------------------------------------------------------------------------------------------- */

/* command_text: what ran, as a shell would show it (or its JSON arguments). */
static const char *command_text(const rnode_t *n)
{
    return n->info.command_shell ? n->info.command_shell : n->info.command_json ? n->info.command_json : "";
}

static void exit_text(const rnode_t *n, char *buf, size_t cap)
{
    if (n->info.exec_error)
        snprintf(buf, cap, "%d (%s)", n->info.exit_status, n->info.exec_error);
    else if (!n->info.have_exit)
        snprintf(buf, cap, "%s",
                 strcmp(n->info.mode ? n->info.mode : "", "run") == 0 ? "unknown"
                                                                      : "unknown (not started by jobscope)");
    else if (n->info.exit_status > 128)
        snprintf(buf, cap, "%d (signal %d)", n->info.exit_status, n->info.exit_status - 128);
    else
        snprintf(buf, cap, "%d", n->info.exit_status);
}

/* the end of the data of an unclosed recording, in words */
static void data_end_text(const rnode_t *n, char *buf, size_t cap)
{
    char when[48], after[48];
    fmt_when(when, sizeof(when), n->last_unix_ns);
    units_time(after, sizeof(after), n->n ? n->t[n->n - 1] : 0, &(js_timeaxis_t){0});
    const char *state = n->info.state ? n->info.state : "incomplete";
    const char *why = n->info.state && strcmp(n->info.state, "in progress") == 0
                          ? "is still writing it"
                          : "stopped without closing it (killed, crashed or lost power)";
    bool live = n->info.state && strcmp(n->info.state, "in progress") == 0;
    if (!n->n)
        snprintf(buf, cap, "The recording is %s: its monitor %s, and it holds no sample %s.", state, why,
                 live ? "yet" : "at all");
    else
        snprintf(buf, cap,
                 "The recording is %s: its monitor %s. The data ends at %s, %s after the start (sample %lld "
                 "of %zu read); %s.",
                 state, why, when, after, (long long)n->last_seq, n->n,
                 live ? "this page shows the run up to there"
                      : "nothing after that moment is known, and the exit status is missing");
}

static void page_header(page_t *pg)
{
    const js_report_t *r = pg->r;
    const rnode_t *n = &r->nodes[0];
    js_html_t *h = pg->h;
    char start[48], end[48], hosts[512] = "", exitb[160], ival[48], sub[640];
    int64_t st = n->run.start_unix_ns > 0 ? n->run.start_unix_ns : n->first_unix_ns;
    int64_t en = n->run.stop_unix_ns > 0 ? n->run.stop_unix_ns : 0;
    for (size_t i = 1; i < r->nnodes; i++) {
        const rnode_t *x = &r->nodes[i];
        int64_t s2 = x->run.start_unix_ns > 0 ? x->run.start_unix_ns : x->first_unix_ns;
        if (s2 > 0 && (st <= 0 || s2 < st))
            st = s2;
        if (x->run.stop_unix_ns > en && en > 0)
            en = x->run.stop_unix_ns;
        if (x->run.stop_unix_ns <= 0)
            en = 0;
    }
    fmt_when(start, sizeof(start), st);
    if (en > 0)
        fmt_when(end, sizeof(end), en);
    else
        snprintf(end, sizeof(end), "not recorded");
    size_t len = 0;
    for (size_t i = 0; i < r->nnodes && len < sizeof(hosts) - 64; i++) {
        const char *host = r->nodes[i].info.host ? r->nodes[i].info.host : r->nodes[i].name;
        int w = snprintf(hosts + len, sizeof(hosts) - len, "%s%s", i ? ", " : "", host);
        if (w > 0)
            len += (size_t)w;
    }
    exit_text(n, exitb, sizeof(exitb));
    units_format(ival, sizeof(ival), snum(n, "samples.interval_s"), "s");
    const char *title = n->run.job ? n->run.job : command_text(n);
    snprintf(sub, sizeof(sub), "%s, started %s, %s mode, recorded by jobscope %s", hosts, start,
             n->info.mode ? n->info.mode : "run", n->info.version ? n->info.version : "?");
    char scope[320];
    snprintf(scope, sizeof(scope), "%s%s%s%s", n->info.scope ? n->info.scope : "process tree",
             n->run.scope_how ? " (" : "", n->run.scope_how ? n->run.scope_how : "",
             n->run.scope_how ? ")" : "");
    char recby[96];
    snprintf(recby, sizeof(recby), "jobscope %s", n->info.version ? n->info.version : "?");
    js_kv_t facts[16];
    size_t nf = 0;
    if (n->run.job)
        facts[nf++] = (js_kv_t){"command", cell_text(command_text(n)), NULL};
    if (n->run.user)
        facts[nf++] = (js_kv_t){"user", cell_text(n->run.user), NULL};
    facts[nf++] = (js_kv_t){r->nnodes > 1 ? "hosts" : "host", cell_text(hosts), NULL};
    facts[nf++] = (js_kv_t){"start", cell_text(start), NULL};
    facts[nf++] = (js_kv_t){"end", cell_text(end), NULL};
    char dur[48];
    units_time(dur, sizeof(dur), pg->facts->wall_s, &(js_timeaxis_t){0});
    facts[nf++] = (js_kv_t){"duration", isfinite(pg->facts->wall_s) ? cell_text(dur) : cell_missing(), NULL};
    facts[nf++] = (js_kv_t){"exit status", cell_text(exitb), NULL};
    facts[nf++] = (js_kv_t){"recording", cell_text(n->info.state ? n->info.state : "complete"), NULL};
    facts[nf++] = (js_kv_t){"interval", cell_text(ival), NULL};
    facts[nf++] = (js_kv_t){"scope", cell_text(scope), NULL};
    facts[nf++] = (js_kv_t){"samples", cell_int(pg->facts->taken), NULL};
    facts[nf++] = (js_kv_t){"recorded by", cell_text(recby), NULL};
    facts[nf++] = (js_kv_t){"report by", cell_text("jobscope " JOBSCOPE_VERSION), NULL};
    if (n->run.cpu_model)
        facts[nf++] = (js_kv_t){"CPU", cell_text(n->run.cpu_model), NULL};
    html_header(h, title, sub, facts, nf);
    for (size_t i = 0; i < r->nnodes; i++) {
        const rnode_t *x = &r->nodes[i];
        if (!x->info.state || strcmp(x->info.state, "complete") == 0)
            continue;
        char msg[640], pre[96] = "";
        data_end_text(x, msg, sizeof(msg));
        if (r->nnodes > 1)
            snprintf(pre, sizeof(pre), "%s: ", x->name);
        html_raw(h, "<p class=\"note\" id=\"data-end\">");
        html_text(h, pre);
        html_text(h, msg);
        html_raw(h, "</p>\n");
    }
}

static void advice_section(page_t *pg, const js_facts_t *f)
{
    js_advice_item_t *items = calloc(MAX_ADVICE, sizeof(*items));
    js_advice_t view[MAX_ADVICE];
    if (!items) {
        pg->h->err = -ENOMEM;
        return;
    }
    size_t n = advice_eval(f, items, MAX_ADVICE);
    for (size_t i = 0; i < n; i++)
        view[i] = advice_view(&items[i]);
    html_section_begin(pg->h, "advice", "Advice");
    if (n)
        html_advice(pg->h, view, n);
    else
        html_para(pg->h, "Nothing to change: no rule fired (docs/REPORT.md lists the rules and their "
                         "thresholds).");
    html_section_end(pg->h);
    free(items);
}

/* node_charts: every chart of one node (or, with two sources, of a comparison), section by section. */
static void node_charts(page_t *pg, const src_t *src, size_t nsrc, bool with_tops)
{
    js_html_t *h = pg->h;
    char sid[96];
    for (size_t k = 0; k < sizeof(sections) / sizeof(sections[0]); k++) {
        /* the section's charts go to a buffer of their own: a section with nothing drawn is left out */
        js_buf_t body = {0};
        js_html_t sub = {.buf = &body, .ids = h->ids, .docs = h->docs};
        pg->h = &sub;
        for (size_t i = 0; i < NSPECS; i++)
            if (strcmp(chart_specs[i].section, sections[k].id) == 0)
                emit_spec(pg, &chart_specs[i], src, nsrc, false, NULL);
        if (strcmp(sections[k].id, "cpu") == 0 && nsrc == 1)
            emit_cpu_heatmap(pg, src[0].n);
        if (strcmp(sections[k].id, "procs") == 0 && with_tops && nsrc == 1)
            emit_tops(pg, src[0].n);
        pg->h = h;
        h->ids = sub.ids;
        if (sub.err && !h->err)
            h->err = sub.err;
        if (body.len) {
            snprintf(sid, sizeof(sid), "%ssec-%s", pg->idp, sections[k].id);
            html_section_begin(h, sid, sections[k].title);
            html_raw(h, body.p);
            html_section_end(h);
        }
        buf_free(&body);
    }
    /* every other view: one chart per unit */
    const char *done[64];
    size_t ndone = 0;
    for (size_t a = 0; a < nsrc; a++)
        for (size_t i = 0; i < src[a].n->nviews; i++) {
            const rview_t *v = &src[a].n->views[i];
            if (curated_here(src, nsrc, v->name) || !v->ncols || !v->ngroups)
                continue;
            bool seen = false;
            for (size_t d = 0; d < ndone && !seen; d++)
                seen = strcmp(done[d], v->name) == 0;
            if (seen || ndone == 64)
                continue;
            done[ndone++] = v->name;
            char title[160];
            snprintf(title, sizeof(title), "View %s", v->name);
            snprintf(sid, sizeof(sid), "%ssec-v-%s", pg->idp, v->name);
            html_section_begin(h, sid, title);
            html_para(h, v->table->help);
            if (v->dropped) {
                char note[160];
                snprintf(note, sizeof(note),
                         "%zu more rows (label groups) than the %d charted were left out.", v->dropped,
                         REPORT_MAX_GROUPS);
                html_para(h, note);
            }
            emit_generic_view(pg, src, nsrc, v->name);
            html_section_end(h);
        }
}

static void nodes_section(page_t *pg)
{
    const js_report_t *r = pg->r;
    src_t *src = calloc(r->nnodes, sizeof(*src));
    if (!src) {
        pg->h->err = -ENOMEM;
        return;
    }
    for (size_t i = 0; i < r->nnodes; i++)
        src[i] = (src_t){.n = &r->nodes[i]};
    html_section_begin(pg->h, "sec-nodes", "Nodes");
    emit_node_heatmap(pg);
    for (size_t i = 0; i < NSPECS; i++)
        if (chart_specs[i].flags & F_COMBINED)
            emit_spec(pg, &chart_specs[i], src, r->nnodes, true, "-nodes");
    html_section_end(pg->h);
    free(src);
}

/* first_section: the first screen (first.c) from the facts and every node's summary. */
static void first_section(const js_report_t *r, js_html_t *h, const js_facts_t *f)
{
    const js_summary_table_t **sums = calloc(r->nnodes, sizeof(*sums));
    if (!sums) {
        h->err = h->err ? h->err : -ENOMEM;
        return;
    }
    for (size_t i = 0; i < r->nnodes; i++)
        sums[i] = r->nodes[i].sum;
    first_screen(h, f, sums, r->nnodes);
    free(sums);
}

int report_html(js_report_t *r, js_buf_t *out)
{
    return report_html_docs(r, out, NULL);
}

int report_html_docs(js_report_t *r, js_buf_t *out, js_svgdocs_t *docs)
{
    if (!r->nnodes)
        return -EINVAL;
    for (size_t i = 0; i < r->nnodes; i++)
        if (!r->nodes[i].finished)
            return -EINVAL;
    const js_facts_t *f = report_facts(r);
    if (!f)
        return -ENOMEM;
    js_html_t h = {.buf = out, .docs = docs};
    page_t pg = {.h = &h, .r = r, .idp = "", .facts = f};
    const rnode_t *n0 = &r->nodes[0];
    char title[256];
    snprintf(title, sizeof(title), "jobscope report: %s", n0->run.job ? n0->run.job : command_text(n0));
    html_begin(&h, title);
    page_header(&pg);
    first_section(r, &h, f);
    advice_section(&pg, f);

    html_section_begin(&h, "summary", r->nnodes > 1 ? "Summary per node and for the job" : "Summary");
    if (r->nnodes > 1)
        nodes_table(&h, r, f);
    for (size_t i = 0; i < r->nnodes && i < REPORT_MAX_NODE_SECTIONS; i++) {
        if (r->nnodes > 1)
            h3(&h, r->nodes[i].name);
        summary_tables(&h, &r->nodes[i]);
    }
    if (marks_summarised(r)) {
        char note[400];
        snprintf(
            note, sizeof(note),
            "The run has %zu phases and %zu events: the charts draw the first and the last %d of each one "
            "by one, and the strip along the top of every chart shows how many of all of them fall in "
            "each stretch of time (the summary above counts them by name).",
            r->density.nphases, r->density.total - r->density.nphases, MARKS_DRAWN);
        html_para(&h, note);
    }
    html_section_end(&h);

    if (r->nnodes > 1) {
        nodes_section(&pg);
        for (size_t i = 0; i < r->nnodes && i < REPORT_MAX_NODE_SECTIONS; i++) {
            char idp[32], ntitle[160];
            snprintf(idp, sizeof(idp), "n%zu-", i + 1);
            snprintf(ntitle, sizeof(ntitle), "Node %s", r->nodes[i].name);
            html_raw(&h, "<h2 class=\"node\">");
            html_text(&h, ntitle);
            html_raw(&h, "</h2>\n");
            pg.idp = idp;
            src_t src = {.n = &r->nodes[i]};
            node_charts(&pg, &src, 1, true);
        }
        pg.idp = "";
    } else {
        src_t src = {.n = n0};
        node_charts(&pg, &src, 1, true);
    }

    html_section_begin(&h, "details", "Details of each source");
    for (size_t i = 0; i < r->nnodes && i < REPORT_MAX_NODE_SECTIONS; i++) {
        if (r->nnodes > 1) {
            html_raw(&h, "<h3 class=\"node\">");
            html_text(&h, r->nodes[i].name);
            html_raw(&h, "</h3>\n");
        }
        parts_details(&h, &r->nodes[i]);
    }
    html_section_end(&h);

    html_section_begin(&h, "inventory", "Hardware and allocation");
    for (size_t i = 0; i < r->nnodes && i < REPORT_MAX_NODE_SECTIONS; i++) {
        if (r->nnodes > 1)
            h3(&h, r->nodes[i].name);
        inventory_table(&h, &r->nodes[i]);
    }
    html_section_end(&h);

    html_section_begin(&h, "monitor", "The monitor's own cost");
    for (size_t i = 0; i < r->nnodes && i < REPORT_MAX_NODE_SECTIONS; i++) {
        if (r->nnodes > 1)
            h3(&h, r->nodes[i].name);
        monitor_tables(&h, &r->nodes[i]);
    }
    html_section_end(&h);
    return html_end(&h);
}

/* ---- for compare.c (compare_int.h) -------------------------------------------------------------------- */

void report_cmp_run(const js_report_t *r, cmp_run_t *ret)
{
    const rnode_t *n = &r->nodes[0];
    memset(ret, 0, sizeof(*ret));
    ret->command = command_text(n);
    ret->host = n->info.host;
    ret->state = n->info.state;
    ret->file = n->info.recording;
    fmt_when(ret->start, sizeof(ret->start),
             n->run.start_unix_ns > 0 ? n->run.start_unix_ns : n->first_unix_ns);
    exit_text(n, ret->exit, sizeof(ret->exit));
    units_format(ret->interval, sizeof(ret->interval), snum(n, "samples.interval_s"), "s");
    units_time(ret->duration, sizeof(ret->duration), snum(n, "wall_time_s"), &(js_timeaxis_t){0});
    if (n->info.state && strcmp(n->info.state, "complete") != 0)
        data_end_text(n, ret->note, sizeof(ret->note));
}

const cmp_events_t *report_cmp_events(const js_report_t *r)
{
    return &r->cmp_events;
}

const js_figure_t *report_cmp_root(const js_report_t *r)
{
    return r->nnodes ? sroot(&r->nodes[0]) : NULL;
}

const char *report_cmp_row_unit(const char *unit, double *scale)
{
    return row_unit(unit, scale);
}

void report_cmp_charts(js_html_t *h, js_report_t *a, js_report_t *b, const js_facts_t *fa,
                       const char *label_a, const char *label_b)
{
    page_t pg = {.h = h, .r = a, .idp = "", .facts = fa, .compare = true};
    src_t src[2] = {{.n = &a->nodes[0], .label = label_a},
                    {.n = &b->nodes[0], .label = label_b, .dashed = true}};
    node_charts(&pg, src, 2, false);
}
