/* SPDX-License-Identifier: MIT
 *
 * The report builder (see report.h): its public API. Collection, per node: a time axis (seconds from the
 * run's start) and one array of values per kept series (view, column, label group), filled after each model
 * feed; NAN where a value is missing, so gaps stay gaps. Which columns of a view are kept is decided once per
 * view from its descriptor: numeric gauges (and energy counters), not labels, not error codes or
 * identifiers. Marks (phases and events) are kept bounded. Then the page: header, first screen, advice, the
 * tables (report_tables.c), the charts (report_charts.c), and the comparison of two runs. The facts for the
 * advice rules come from report_facts.c; the private types and cross-file functions are in report_int.h.
 */
#include "report/report.h"

#include "config.h"
#include "core/json.h"
#include "report/compare_int.h"
#include "report/first.h"
#include "report/html.h"
#include "report/report_int.h"
#include "report/svg.h"
#include "report/units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
        free(r->events.first[i].data);
        free(r->events.last[i].data);
    }
    for (size_t i = 0; i < r->nopen; i++)
        free(r->open[i].label);
    free(r->open);
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

/* data_copy: at most MARK_DATA_KEPT bytes of s, cut at a UTF-8 character boundary ("..." added). */
static char *data_copy(const char *s)
{
    size_t n = strlen(s);
    if (n <= MARK_DATA_KEPT)
        return strdup(s);
    size_t k = MARK_DATA_KEPT - 3;
    while (k > 0 && ((unsigned char)s[k] & 0xc0) == 0x80)
        k--;
    char *c = malloc(k + 4);
    if (c) {
        memcpy(c, s, k);
        memcpy(c + k, "...", 4);
    }
    return c;
}

/* mlist_add: keep a mark if it is among the first or (so far) the last MARKS_DRAWN of its list. */
static int mlist_add(rmlist_t *l, double t0, double t1, const char *label, const char *data)
{
    char *copy = xstrdup(label), *dcopy = data ? data_copy(data) : NULL;
    if ((label && !copy) || (data && !dcopy)) {
        free(copy);
        free(dcopy);
        return -ENOMEM;
    }
    rmark_t *m =
        l->total < MARKS_DRAWN ? &l->first[l->total] : &l->last[(l->total - MARKS_DRAWN) % MARKS_DRAWN];
    free(m->label);
    free(m->data);
    *m = (rmark_t){.t0 = t0, .t1 = t1, .t = t0, .label = copy, .data = dcopy};
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
    return mlist_add(&r->bands, t0, t1, label, NULL);
}

int report_add_event(js_report_t *r, double t, const char *label)
{
    return report_add_event_data(r, t, label, NULL);
}

int report_add_event_data(js_report_t *r, double t, const char *label, const char *data)
{
    density_add(&r->density, t, false);
    return mlist_add(&r->events, t, t, label, data);
}

void report_events_table(js_html_t *h, const js_report_t *r)
{
    size_t kept = mlist_kept(&r->events);
    if (!kept)
        return;
    html_section_begin(h, "events", "Events");
    html_raw(h, "<table class=\"tb events\">\n<thead><tr><th scope=\"col\">time from start</th>"
                "<th scope=\"col\">name</th><th scope=\"col\">data</th></tr></thead>\n<tbody>\n");
    for (size_t i = 0; i < kept; i++) {
        const rmark_t *m = mlist_get(&r->events, i);
        char when[48];
        if (i == MARKS_DRAWN && r->events.total > kept)
            html_printf(
                h,
                "<tr class=\"gap\"><td colspan=\"3\">\xe2\x80\xa6 %zu more events \xe2\x80\xa6</td></tr>\n",
                r->events.total - kept);
        html_raw(h, "<tr><td class=\"n\">");
        html_text(h, units_time(when, sizeof(when), m->t, &(js_timeaxis_t){0}));
        html_raw(h, "</td><td>");
        html_text(h, m->label ? m->label : "");
        html_raw(h, "</td><td class=\"x\">");
        if (m->data)
            html_text(h, m->data);
        else
            html_raw(h, "\xe2\x80\x94");
        html_raw(h, "</td></tr>\n");
    }
    html_raw(h, "</tbody></table>\n");
    if (r->events.total > kept) {
        char note[200];
        snprintf(
            note, sizeof(note),
            "%zu events in all: the first %d and the last %d are listed (and drawn); %zu are left out here "
            "and counted in the strip along the top of every chart.",
            r->events.total, MARKS_DRAWN, MARKS_DRAWN, r->events.total - kept);
        html_para(h, note);
    }
    html_section_end(h);
}

/* marks_summarised: whether some marks are not drawn one by one (then the density strip is). */
static bool marks_summarised(const js_report_t *r)
{
    return r->bands.total > mlist_kept(&r->bands) || r->events.total > mlist_kept(&r->events) ||
           r->density.total > r->bands.total + r->events.total;
}

/* chart_marks: the kept bands and events for one chart (arrays of at most 2 * MARKS_DRAWN, owned by the
 * caller; none when `none`), and the density strip when marks were summarised. 0 or -ENOMEM. */
int chart_marks(const js_report_t *r, bool none, js_band_t **ret_b, size_t *ret_nb, js_event_t **ret_e,
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
        e[i] = (js_event_t){m->t, m->label, m->data};
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
    int ct = table_column(t, "t_s"), ck = table_column(t, "kind"), cn = table_column(t, "name"),
        cd = table_column(t, "data");
    if (cd >= 0 && t->cols[cd].type != JS_TEXT)
        cd = -1;
    if (ck < 0 || t->cols[ck].type != JS_TEXT || (cn >= 0 && t->cols[cn].type != JS_TEXT) ||
        (ct >= 0 && t->cols[ct].type != JS_REAL))
        return 0;
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
            rc = report_add_event_data(r, at, name, cd >= 0 && v[cd].present ? rows_str(rows, &v[cd]) : NULL);
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
    report_events_table(&h, r);

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

size_t report_cmp_events(const js_report_t *r, size_t *ret_total)
{
    *ret_total = r->events.total;
    return mlist_kept(&r->events);
}

void report_cmp_event(const js_report_t *r, size_t j, cmp_event_t *ret)
{
    const rmark_t *m = mlist_get(&r->events, j);
    size_t kept = mlist_kept(&r->events);
    *ret = (cmp_event_t){.t = m->t,
                         .name = m->label,
                         .data = m->data,
                         .index = j < MARKS_DRAWN ? j : r->events.total - kept + j};
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
