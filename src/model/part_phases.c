/* SPDX-License-Identifier: MIT
 *
 * The `phases` model part: what each phase of the job used, from the marks the job sent (the core `marks`
 * table, core/marks.h) and the tree model's cumulative totals.
 *
 * A phase is named; it is active while more `begin` than `end` marks of its name have arrived (so the same
 * phase begun by 8 threads or 4 ranks is one phase, active from the first begin to the last end). Phases may
 * nest or overlap. Two sets of totals are kept per phase:
 *   inclusive  everything used while the phase was active (nested phases included);
 *   self       what was used while it was the innermost active phase (the one activated last among those
 *              active). The self totals of all phases plus those of `outside` (no phase active) partition the
 *              run, so they add up to the run's totals exactly: wall, CPU, I/O and energy.
 *
 * Method. Every begin and end mark makes the monitor take a sample at once (engine/monitor.c; such a sample
 * has samples.for_marks = 1): that sample is the scope at the last mark before it, so the cumulative figures
 * (the tree's CPU seconds and I/O bytes, the scope's attributed RAPL energy from the `energy` view, GPU
 * energy from a `gpu` view when one exists) are cut there, and the stretch from that mark to the sample (the
 * monitor's wake-up) gets none of the interval's increase. Marks before it in the same sample (a burst,
 * coalesced) and marks in samples not taken for them (recordings of earlier versions) are interpolated
 * linearly in time between the previous sample and that cut: a phase gets the share of the increase that
 * matches its share of the time. A mark stamped before the previous sample (it reached the monitor late) is
 * placed at that sample. Peak memory: a phase's peak is the largest of the samples inside it, the first
 * (taken at its begin) and the last (taken at its end) included, of the memory headline's figure at each
 * sample (model_memory_now: the scope's own cgroup's memory.current, else the PSS sum), and of the RSS sum
 * apart.
 *
 * Views: `marks` (one row per mark of the sample, with the innermost phase after it) and `phases` (one row
 * per phase seen so far, cumulative figures). Summary: a `phases` section when the job sent any mark.
 *
 * Order: this part reads the `energy` view (and a `gpu` view: columns `energy_j`, a counter, and
 * `mem_used_bytes`, summed over its rows) for the sample being fed, so it must come after those parts in
 * src/model/parts.c.
 */
#include "model/model.h"

#include "core/marks.h"
#include "core/nameindex.h"
#include "model/summary.h"
#include "core/util.h"
#include "model/figure.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The cumulative figures interpolated across marks. */
enum { C_CPU, C_READ, C_WRITE, C_RCHAR, C_WCHAR, C_ENERGY, C_GPU_ENERGY, C__MAX };
static const char *const c_keys[C__MAX] = {"cpu_s",       "read_bytes", "write_bytes", "rchar_bytes",
                                           "wchar_bytes", "energy_j",   "gpu_energy_j"};

typedef struct {
    double wall_s;
    double c[C__MAX];
} acc_t;

typedef struct {
    char *name;
    int64_t open;        /* begins less ends so far (never below 0) */
    int64_t activations; /* times it became active */
    int64_t begins, ends, unmatched_ends;
    int64_t first_begin_unix, last_end_unix; /* 0: none */
    acc_t incl, self;
    double peak_mem, peak_rss,
        peak_gpu_mem; /* memory headline, RSS sum, GPU memory: largest at its samples */
    bool touched;     /* active at some time within the interval being fed */
    size_t id;        /* position in the active stack + 1, 0 when inactive */
} phase_t;

typedef struct {
    char *name;
    int64_t count;
    int64_t first_unix, last_unix;
    char *last_data;
} event_t;

/* a pid's largest reported drop count (the counts are cumulative per sender) */
typedef struct {
    int32_t pid;
    uint32_t dropped;
} sender_t;

/* the rows of the `marks` view for the last fed sample */
typedef struct {
    size_t row;       /* the marks row */
    size_t innermost; /* phase index + 1 active innermost right after this mark, 0 for none */
    size_t depth;     /* active phases after it */
} mark_row_t;

typedef struct {
    int64_t origin_ns; /* run start (run mode) or first sample */
    bool have_prev;
    int64_t prev_t;
    double prev_c[C__MAX];
    phase_t *ph;
    size_t nph, cap;
    size_t *stack; /* active phases, in activation order (index into ph) */
    size_t depth;
    acc_t outside;
    double outside_peak_mem, outside_peak_rss;
    bool outside_touched, any_outside;
    event_t *ev;
    size_t nev, evcap;
    js_nameindex_t ph_ix, ev_ix; /* names -> positions in ph and ev (names come from the job: many) */
    sender_t *snd;
    size_t nsnd, sndcap;
    int64_t marks, begins, ends, events, unmatched;
    int64_t rejected;     /* the monitor's count, from the self table */
    int64_t self_dropped; /* the drops the senders reported, the monitor's count (self table; -1: none) */
    bool self_resolved;
    int self_rejected_col, self_dropped_col;
    /* the last fed sample */
    const js_rows_t *last_marks;
    mark_row_t *mr;
    size_t nmr, mrcap;
    bool any; /* a mark was ever seen */
    double run_c[C__MAX];
    double peak_mem, peak_rss;
    int for_marks_col; /* samples.for_marks, -1 before it is resolved or when absent */
    bool for_marks_resolved;
} phases_t;

/* A sample taken for marks counts as the scope at its last mark when it was taken within CUT_LATE_NS of it,
 * or within a quarter of the time from the previous sample to the mark; later, it is spread over its interval
 * (phases_feed). */
#define CUT_LATE_NS 20000000 /* 20 ms */

/* ---- helpers ---------------------------------------------------------------------------------------- */

static void acc_init(acc_t *a)
{
    a->wall_s = 0;
    for (int k = 0; k < C__MAX; k++)
        a->c[k] = 0;
}

static const char *phase_name_at(const void *ctx, size_t i)
{
    return ((const phases_t *)ctx)->ph[i].name;
}

static const char *event_name_at(const void *ctx, size_t i)
{
    return ((const phases_t *)ctx)->ev[i].name;
}

static phase_t *phase_get(phases_t *p, const char *name, size_t *ret_ix)
{
    long at = nameindex_find(&p->ph_ix, name, phase_name_at, p);
    if (at >= 0) {
        *ret_ix = (size_t)at;
        return &p->ph[at];
    }
    if (p->nph == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        phase_t *g = realloc(p->ph, cap * sizeof(*g));
        size_t *s = g ? realloc(p->stack, cap * sizeof(*s)) : NULL;
        if (g)
            p->ph = g;
        if (!s)
            return NULL;
        p->stack = s;
        p->cap = cap;
    }
    phase_t *ph = &p->ph[p->nph];
    memset(ph, 0, sizeof(*ph));
    if (!(ph->name = strdup(name)))
        return NULL;
    acc_init(&ph->incl);
    acc_init(&ph->self);
    ph->peak_mem = ph->peak_rss = ph->peak_gpu_mem = NAN;
    if (nameindex_add(&p->ph_ix, ph->name, p->nph, phase_name_at, p) < 0) {
        free(ph->name);
        return NULL;
    }
    *ret_ix = p->nph++;
    return ph;
}

static event_t *event_get(phases_t *p, const char *name)
{
    long at = nameindex_find(&p->ev_ix, name, event_name_at, p);
    if (at >= 0)
        return &p->ev[at];
    if (p->nev == p->evcap) {
        size_t cap = p->evcap ? p->evcap * 2 : 16;
        event_t *g = realloc(p->ev, cap * sizeof(*g));
        if (!g)
            return NULL;
        p->ev = g;
        p->evcap = cap;
    }
    event_t *e = &p->ev[p->nev];
    memset(e, 0, sizeof(*e));
    if (!(e->name = strdup(name)))
        return NULL;
    if (nameindex_add(&p->ev_ix, e->name, p->nev, event_name_at, p) < 0) {
        free(e->name);
        return NULL;
    }
    p->nev++;
    return e;
}

static int sender_note(phases_t *p, int32_t pid, uint32_t dropped)
{
    for (size_t i = 0; i < p->nsnd; i++)
        if (p->snd[i].pid == pid) {
            if (dropped > p->snd[i].dropped)
                p->snd[i].dropped = dropped;
            return 0;
        }
    if (p->nsnd == p->sndcap) {
        size_t cap = p->sndcap ? p->sndcap * 2 : 16;
        sender_t *g = realloc(p->snd, cap * sizeof(*g));
        if (!g)
            return -ENOMEM;
        p->snd = g;
        p->sndcap = cap;
    }
    p->snd[p->nsnd++] = (sender_t){pid, dropped};
    return 0;
}

/* senders_dropped: the marks the job's processes dropped: the monitor's count (which also has the drops that
 * only a rejected packet or a process's report at its exit carried), or, in a recording made before it was
 * kept, the sum over the marks' senders of the highest count their marks carried. */
static uint64_t senders_dropped(const phases_t *p)
{
    uint64_t d = 0;
    for (size_t i = 0; i < p->nsnd; i++)
        d += p->snd[i].dropped;
    return p->self_dropped > 0 && (uint64_t)p->self_dropped > d ? (uint64_t)p->self_dropped : d;
}

/* innermost: the phase index + 1 of the innermost active phase, 0 when none */
static size_t innermost(const phases_t *p)
{
    return p->depth ? p->stack[p->depth - 1] + 1 : 0;
}

/* attribute: a stretch of `wall` seconds with increases d[] to the active phases (inclusive), to the
 * innermost one (self) or to `outside`. */
static void attribute(phases_t *p, double wall, const double *d)
{
    for (size_t i = 0; i < p->depth; i++) {
        acc_t *a = &p->ph[p->stack[i]].incl;
        a->wall_s += wall;
        for (int k = 0; k < C__MAX; k++)
            a->c[k] += d[k];
    }
    acc_t *s = p->depth ? &p->ph[p->stack[p->depth - 1]].self : &p->outside;
    s->wall_s += wall;
    for (int k = 0; k < C__MAX; k++)
        s->c[k] += d[k];
    if (!p->depth)
        p->any_outside = p->outside_touched = true;
}

static void activate(phases_t *p, size_t ix)
{
    phase_t *ph = &p->ph[ix];
    p->stack[p->depth++] = ix;
    ph->id = p->depth;
    ph->activations++;
    ph->touched = true;
}

static void deactivate(phases_t *p, size_t ix)
{
    size_t at = p->ph[ix].id - 1;
    memmove(&p->stack[at], &p->stack[at + 1], (p->depth - at - 1) * sizeof(*p->stack));
    p->depth--;
    p->ph[ix].id = 0;
    for (size_t i = at; i < p->depth; i++)
        p->ph[p->stack[i]].id = i + 1;
}

/* view_sum: the sum of column `col` over the rows of view `name` (only rows whose `filter` column passes
 * `keep`, when given); NAN when the view or column is absent or no row has a value. */
static double view_sum(js_model_t *m, const char *name, const char *col, const char *filter,
                       bool (*keep)(const char *))
{
    js_view_t v;
    if (model_view(m, name, &v) < 0)
        return NAN;
    int c = table_column(v.table, col);
    int fc = filter ? table_column(v.table, filter) : -1;
    if (c < 0 || (filter && fc < 0))
        return NAN;
    double sum = 0;
    bool any = false;
    for (size_t i = 0; i < v.rows->nrows; i++) {
        const js_value_t *row = rows_row(v.rows, i);
        if (fc >= 0 && (!row[fc].present || !keep(rows_str(v.rows, &row[fc]))))
            continue;
        if (!row[c].present)
            continue;
        sum += v.table->cols[c].type == JS_REAL ? row[c].d : (double)row[c].i;
        any = true;
    }
    return any ? sum : NAN;
}

/* node_zone: the energy part's node zones (package-N and package-N/dram; see part_energy.c) */
static bool node_zone(const char *domain)
{
    if (strncmp(domain, "package-", 8) != 0)
        return false;
    const char *slash = strchr(domain, '/');
    return !slash || strcmp(slash, "/dram") == 0;
}

/* ---- feeding ---------------------------------------------------------------------------------------- */

static int apply_mark(phases_t *p, const js_rows_t *mr, size_t i)
{
    const js_value_t *v = rows_row(mr, i);
    if (!v[MARK_KIND].present || !v[MARK_NAME].present)
        return 0;
    const char *kind = rows_str(mr, &v[MARK_KIND]), *name = rows_str(mr, &v[MARK_NAME]);
    int64_t tu = v[MARK_T_UNIX].present ? v[MARK_T_UNIX].i : 0;
    p->marks++;
    p->any = true;
    if (v[MARK_PID].present && v[MARK_SENDER_DROPPED].present &&
        sender_note(p, (int32_t)v[MARK_PID].i, (uint32_t)v[MARK_SENDER_DROPPED].i) < 0)
        return -ENOMEM;
    if (strcmp(kind, "event") == 0) {
        event_t *e = event_get(p, name);
        if (!e)
            return -ENOMEM;
        p->events++;
        if (!e->count++)
            e->first_unix = tu;
        e->last_unix = tu;
        free(e->last_data);
        e->last_data = v[MARK_DATA].present ? strdup(rows_str(mr, &v[MARK_DATA])) : NULL;
        return 0;
    }
    size_t ix;
    phase_t *ph = phase_get(p, name, &ix);
    if (!ph)
        return -ENOMEM;
    if (strcmp(kind, "begin") == 0) {
        p->begins++;
        ph->begins++;
        if (!ph->first_begin_unix)
            ph->first_begin_unix = tu;
        if (ph->open++ == 0)
            activate(p, ix);
    } else if (strcmp(kind, "end") == 0) {
        p->ends++;
        ph->ends++;
        if (ph->open == 0) { /* an end without a begin: counted, nothing else */
            ph->unmatched_ends++;
            p->unmatched++;
            return 0;
        }
        ph->last_end_unix = tu;
        if (--ph->open == 0)
            deactivate(p, ix);
    }
    return 0;
}

static int phases_feed(void *state, const js_feed_t *f)
{
    phases_t *p = state;
    const js_tree_point_t *pt = model_point(f->m);
    js_model_t *m = (js_model_t *)f->m; /* views of the parts fed before this one: built for this sample */
    const js_rows_t *mr = sample_rows(f->s, &table_marks);
    p->last_marks = mr;
    p->nmr = 0;
    if (!pt)
        return 0;

    const js_rows_t *self = sample_rows_named(f->s, "self");
    if (self && self->nrows) {
        if (!p->self_resolved) {
            p->self_rejected_col = table_column(self->table, "marks_rejected");
            p->self_dropped_col = table_column(self->table, "marks_senders_dropped");
            p->self_resolved = true;
        }
        const js_value_t *sv = rows_row(self, 0);
        if (p->self_rejected_col >= 0 && sv[p->self_rejected_col].present)
            p->rejected = sv[p->self_rejected_col].i;
        if (p->self_dropped_col >= 0 && sv[p->self_dropped_col].present)
            p->self_dropped = sv[p->self_dropped_col].i;
    }

    double c[C__MAX] = {pt->cpu_s, pt->io[IO_READ], pt->io[IO_WRITE], pt->io[IO_RCHAR], pt->io[IO_WCHAR], NAN,
                        NAN};
    c[C_ENERGY] = view_sum(m, "energy", "scope_energy_j", "domain", node_zone);
    c[C_GPU_ENERGY] = view_sum(m, "gpu", "energy_j", NULL, NULL);
    double gpu_mem = view_sum(m, "gpu", "mem_used_bytes", NULL, NULL);
    const js_model_cfg_t *cfg = model_cfg(f->m);
    int64_t t = pt->t_mono_ns;

    if (!p->have_prev) {
        p->have_prev = true;
        if (cfg->mode == JS_MODE_RUN && cfg->start_mono_ns > 0 && cfg->start_mono_ns < t) {
            p->origin_ns = cfg->start_mono_ns; /* the first interval runs from the command's start */
            p->prev_t = cfg->start_mono_ns;
            for (int k = 0; k < C__MAX; k++)
                p->prev_c[k] = 0;
        } else {
            p->origin_ns = t; /* attach and embedded: figures count from the first sample */
            p->prev_t = t;
            for (int k = 0; k < C__MAX; k++)
                p->prev_c[k] = isnan(c[k]) ? NAN : c[k];
        }
    }
    /* increases over this interval; energy starts from 0 before its first attributed interval */
    double d[C__MAX];
    for (int k = 0; k < C__MAX; k++) {
        double prev = p->prev_c[k];
        if ((k == C_ENERGY || k == C_GPU_ENERGY) && isnan(prev) && !isnan(c[k]))
            prev = 0;
        d[k] = c[k] - prev;
    }
    /* a sample taken for marks is the scope at the last of them: the increase is spread over the time up to
     * that mark (the cut), none of it after */
    if (!p->for_marks_resolved) {
        p->for_marks_resolved = true;
        const js_rows_t *sr = sample_rows_named(f->s, "samples");
        p->for_marks_col = sr ? table_column(sr->table, "for_marks") : -1;
    }
    const js_rows_t *srow = sample_rows_named(f->s, "samples");
    const js_value_t *sv = srow && srow->nrows ? rows_row(srow, 0) : NULL;
    int64_t cut = t;
    if (sv && p->for_marks_col >= 0 && sv[p->for_marks_col].present && sv[p->for_marks_col].i && mr &&
        mr->nrows) {
        int64_t last = p->prev_t; /* the latest mark (senders' rows need not come in time order) */
        for (size_t i = 0; i < mr->nrows; i++) {
            const js_value_t *v = rows_row(mr, i);
            int64_t tm = v[MARK_T_MONO].present ? v[MARK_T_MONO].i : t;
            last = tm > last ? tm : last;
        }
        cut = last > t ? t : last;
        /* a sample the monitor could not take at once (its budget for marks was spent, or a loaded machine
         * delayed it) is not the scope at the mark: what ran after the mark would be given to the time
         * before it (a phase's CPU to the stretch before its begin, at many cores over no time); such a
         * sample is spread over its whole interval like any other */
        if (t - cut > CUT_LATE_NS && t - cut > (cut - p->prev_t) / 4)
            cut = t;
    }
    double span = (double)(cut - p->prev_t), given = 0;
    int64_t cursor = p->prev_t;

    for (size_t i = 0; i < p->nph; i++)
        p->ph[i].touched = p->ph[i].id != 0;
    p->outside_touched = p->depth == 0;

    if (mr && mr->nrows > p->mrcap) {
        mark_row_t *g = realloc(p->mr, mr->nrows * sizeof(*g));
        if (!g)
            return -ENOMEM;
        p->mr = g;
        p->mrcap = mr->nrows;
    }
    for (size_t i = 0; mr && i < mr->nrows; i++) {
        const js_value_t *v = rows_row(mr, i);
        int64_t tm = v[MARK_T_MONO].present ? v[MARK_T_MONO].i : t;
        if (tm < cursor) /* made before the previous sample or an earlier mark: placed there */
            tm = cursor;
        if (tm > t)
            tm = t;
        if (tm > cursor) {
            int64_t a = cursor < cut ? cursor : cut, z = tm < cut ? tm : cut;
            double share = span > 0 ? (double)(z - a) / span : 0, seg[C__MAX];
            given += share;
            for (int k = 0; k < C__MAX; k++)
                seg[k] = d[k] * share;
            attribute(p, (double)(tm - cursor) / 1e9, seg);
            cursor = tm;
        }
        int r = apply_mark(p, mr, i);
        if (r < 0)
            return r;
        if (!p->depth)
            p->outside_touched = true;
        p->mr[p->nmr++] = (mark_row_t){.row = i, .innermost = innermost(p), .depth = p->depth};
    }
    if (t > cursor || given < 1) { /* the rest: every increase is attributed, whatever the rounding */
        double share = given < 1 ? 1 - given : 0, seg[C__MAX];
        for (int k = 0; k < C__MAX; k++)
            seg[k] = d[k] * share;
        attribute(p, (double)(t - cursor) / 1e9, seg);
    }
    /* peaks: this sample is inside every phase active at some time of its interval (the one that begins or
     * ends at it included: a sample taken for a mark is the first or last of its phase) */
    double mem = model_memory_now(f->m), rss = pt->members > 0 ? pt->rss : NAN;
    for (size_t i = 0; i < p->nph; i++)
        if (p->ph[i].touched) {
            p->ph[i].peak_mem = fmax_nan(p->ph[i].peak_mem, mem);
            p->ph[i].peak_rss = fmax_nan(p->ph[i].peak_rss, rss);
            p->ph[i].peak_gpu_mem = fmax_nan(p->ph[i].peak_gpu_mem, gpu_mem);
        }
    if (p->outside_touched) {
        p->outside_peak_mem = fmax_nan(p->outside_peak_mem, mem);
        p->outside_peak_rss = fmax_nan(p->outside_peak_rss, rss);
    }
    p->peak_mem = fmax_nan(p->peak_mem, mem);
    p->peak_rss = fmax_nan(p->peak_rss, rss);
    p->prev_t = t;
    for (int k = 0; k < C__MAX; k++) {
        if (!isnan(c[k]) || (k != C_ENERGY && k != C_GPU_ENERGY))
            p->prev_c[k] = c[k];
        p->run_c[k] = k == C_ENERGY || k == C_GPU_ENERGY ? (isnan(c[k]) ? p->run_c[k] : c[k]) : c[k];
    }
    return 0;
}

/* ---- views ------------------------------------------------------------------------------------------ */

enum {
    MV_T,
    MV_UNIX,
    MV_KIND,
    MV_NAME,
    MV_PID,
    MV_TID,
    MV_RANK,
    MV_HOST,
    MV_DATA,
    MV_PHASE,
    MV_DEPTH,
    MV__MAX
};
static const js_column_t marks_view_cols[MV__MAX] = {
    [MV_T] = {"t_s", "s", JS_REAL, JS_GAUGE, 0, "when the mark was made, seconds since the run's start"},
    [MV_UNIX] = {"mark_unix_s", "s", JS_REAL, JS_GAUGE, 0,
                 "when the mark was made, seconds since the epoch (UTC)"},
    [MV_KIND] = {"kind", "text", JS_TEXT, JS_LABEL, 0, "begin, end or event"},
    [MV_NAME] = {"name", "text", JS_TEXT, JS_LABEL, 0, "phase or event name"},
    [MV_PID] = {"pid", "count", JS_INT, JS_LABEL, 0, "sender's process ID"},
    [MV_TID] = {"tid", "count", JS_INT, JS_LABEL, 0, "sender's thread ID"},
    [MV_RANK] = {"rank", "count", JS_INT, JS_LABEL, 0, "MPI rank, missing if none"},
    [MV_HOST] = {"host", "text", JS_TEXT, JS_LABEL, 0, "sender's host name"},
    [MV_DATA] = {"data", "json", JS_TEXT, JS_GAUGE, 0, "JSON given with the mark"},
    [MV_PHASE] = {"phase", "text", JS_TEXT, JS_GAUGE, 0,
                  "the innermost active phase after this mark, if any"},
    [MV_DEPTH] = {"depth", "count", JS_INT, JS_GAUGE, 0, "active phases after this mark"},
};
static const js_table_t marks_view = {"marks",
                                      "the job's marks, one row per mark, with the phase they leave "
                                      "active",
                                      MV__MAX, marks_view_cols};

enum {
    PV_NAME,
    PV_ACTIVE,
    PV_ACTIVATIONS,
    PV_WALL,
    PV_CPU,
    PV_READ,
    PV_WRITE,
    PV_ENERGY,
    PV_PEAK,
    PV_PEAK_RSS,
    PV_SELF_WALL,
    PV_SELF_CPU,
    PV__MAX
};
static const js_column_t phases_view_cols[PV__MAX] = {
    [PV_NAME] = {"phase", "text", JS_TEXT, JS_LABEL, 0,
                 "phase name; (outside) for time with no phase active"},
    [PV_ACTIVE] = {"active", "bool", JS_INT, JS_GAUGE, 0, "1 while the phase is active at this sample"},
    [PV_ACTIVATIONS] = {"activations", "count", JS_INT, JS_COUNTER, 64, "times the phase became active"},
    [PV_WALL] = {"wall_s", "s", JS_REAL, JS_COUNTER, 0, "time active so far (inclusive)"},
    [PV_CPU] = {"cpu_s", "s", JS_REAL, JS_COUNTER, 0, "tree CPU time while active (inclusive, interpolated)"},
    [PV_READ] = {"read_bytes", "bytes", JS_REAL, JS_COUNTER, 0, "bytes read from storage while active"},
    [PV_WRITE] = {"write_bytes", "bytes", JS_REAL, JS_COUNTER, 0, "bytes written to storage while active"},
    [PV_ENERGY] = {"energy_j", "J", JS_REAL, JS_COUNTER, 0,
                   "the scope's attributed RAPL energy while active"},
    [PV_PEAK] =
        {"peak_bytes", "bytes", JS_REAL, JS_GAUGE, 0,
         "largest memory of the samples inside it (no page counted twice: the scope's cgroup, else PSS)"},
    [PV_PEAK_RSS] = {"peak_rss_sum_bytes", "bytes", JS_REAL, JS_GAUGE, 0,
                     "largest sum of the members' RSS of the samples inside it"},
    [PV_SELF_WALL] = {"self_wall_s", "s", JS_REAL, JS_COUNTER, 0, "time it was the innermost active phase"},
    [PV_SELF_CPU] = {"self_cpu_s", "s", JS_REAL, JS_COUNTER, 0, "tree CPU time while it was the innermost"},
};
static const js_table_t phases_view = {"phases",
                                       "per phase, cumulative figures so far (one row per phase and "
                                       "sample; (outside) is time with no phase active)",
                                       PV__MAX, phases_view_cols};

static const js_table_t *phases_view_table(void *state, size_t i)
{
    (void)state;
    return i == 0 ? &marks_view : i == 1 ? &phases_view : NULL;
}

static void set_real(js_value_t *v, double d)
{
    if (!isnan(d))
        val_real(v, d);
}

static int copy_text(js_rows_t *out, js_value_t *dst, const js_rows_t *in, const js_value_t *src)
{
    if (!src->present)
        return 0;
    const char *s = rows_str(in, src);
    return rows_set_str(out, dst, s, strlen(s));
}

static int fill_phase_row(js_rows_t *out, const char *name, bool active, int64_t act, const acc_t *incl,
                          const acc_t *self, double peak, double peak_rss)
{
    js_value_t *v = rows_add(out);
    if (!v || rows_set_str(out, &v[PV_NAME], name, strlen(name)) < 0)
        return -ENOMEM;
    val_int(&v[PV_ACTIVE], active);
    val_int(&v[PV_ACTIVATIONS], act);
    val_real(&v[PV_WALL], incl->wall_s);
    set_real(&v[PV_CPU], incl->c[C_CPU]);
    set_real(&v[PV_READ], incl->c[C_READ]);
    set_real(&v[PV_WRITE], incl->c[C_WRITE]);
    set_real(&v[PV_ENERGY], incl->c[C_ENERGY]);
    set_real(&v[PV_PEAK], peak);
    set_real(&v[PV_PEAK_RSS], peak_rss);
    val_real(&v[PV_SELF_WALL], self->wall_s);
    set_real(&v[PV_SELF_CPU], self->c[C_CPU]);
    return 0;
}

static int phases_view_fill(void *state, size_t i, js_rows_t *out)
{
    phases_t *p = state;
    if (i == 1) {
        for (size_t k = 0; k < p->nph; k++) {
            const phase_t *ph = &p->ph[k];
            if (fill_phase_row(out, ph->name, ph->id != 0, ph->activations, &ph->incl, &ph->self,
                               ph->peak_mem, ph->peak_rss) < 0)
                return -ENOMEM;
        }
        if (p->any && fill_phase_row(out, "(outside)", p->depth == 0, 0, &p->outside, &p->outside,
                                     p->outside_peak_mem, p->outside_peak_rss) < 0)
            return -ENOMEM;
        return 0;
    }
    const js_rows_t *mr = p->last_marks;
    for (size_t k = 0; mr && k < p->nmr; k++) {
        const js_value_t *src = rows_row(mr, p->mr[k].row);
        js_value_t *v = rows_add(out);
        if (!v)
            return -ENOMEM;
        if (src[MARK_T_MONO].present)
            val_real(&v[MV_T], ((double)src[MARK_T_MONO].i - (double)p->origin_ns) / 1e9);
        if (src[MARK_T_UNIX].present)
            val_real(&v[MV_UNIX], (double)src[MARK_T_UNIX].i / 1e9);
        if (src[MARK_PID].present)
            val_int(&v[MV_PID], src[MARK_PID].i);
        if (src[MARK_TID].present)
            val_int(&v[MV_TID], src[MARK_TID].i);
        if (src[MARK_RANK].present)
            val_int(&v[MV_RANK], src[MARK_RANK].i);
        val_int(&v[MV_DEPTH], (int64_t)p->mr[k].depth);
        const char *ph = p->mr[k].innermost ? p->ph[p->mr[k].innermost - 1].name : NULL;
        if (copy_text(out, &v[MV_KIND], mr, &src[MARK_KIND]) < 0 ||
            copy_text(out, &v[MV_NAME], mr, &src[MARK_NAME]) < 0 ||
            copy_text(out, &v[MV_HOST], mr, &src[MARK_HOST]) < 0 ||
            copy_text(out, &v[MV_DATA], mr, &src[MARK_DATA]) < 0 ||
            (ph && rows_set_str(out, &v[MV_PHASE], ph, strlen(ph)) < 0))
            return -ENOMEM;
    }
    return 0;
}

/* ---- summary ---------------------------------------------------------------------------------------- */

static const char *const c_units[C__MAX] = {"s", "bytes", "bytes", "bytes", "bytes", "J", "J"};

/* put_acc: a phase's (or the run's, or outside's) cumulative figures into group g */
static void put_acc(js_figure_t *g, const acc_t *a, bool energy, bool gpu)
{
    fig_put_num(g, "wall_s", "s", a->wall_s);
    for (int k = 0; k < C__MAX; k++) {
        if ((k == C_ENERGY && !energy) || (k == C_GPU_ENERGY && !gpu))
            continue;
        fig_put_num(g, c_keys[k], c_units[k], a->c[k]);
    }
    fig_put_num(g, "mean_cores", "cores", a->wall_s > 0 ? a->c[C_CPU] / a->wall_s : NAN);
}

static double unix_s(int64_t ns)
{
    return ns ? (double)ns / 1e9 : NAN;
}

static void phases_summary(void *state, js_figure_t *r)
{
    phases_t *p = state;
    if (!p->any)
        return;
    bool energy = !isnan(p->run_c[C_ENERGY]), gpu = !isnan(p->run_c[C_GPU_ENERGY]);
    fig_put_text(
        r, "phases.method",
        "a sample at every begin and end mark (coalesced in bursts): cumulative figures cut there, marks "
        "of a burst interpolated in time; peaks: the largest of the samples inside the phase (its first "
        "and last included)");
    fig_put_int(r, "phases.marks", "count", p->marks);
    fig_put_int(r, "phases.begins", "count", p->begins);
    fig_put_int(r, "phases.ends", "count", p->ends);
    /* (the count was once a second `events` member beside the array below: JSON readers kept the array) */
    fig_put_int(r, "phases.event_count", "count", p->events);
    fig_put_int(r, "phases.unmatched_ends", "count", p->unmatched);
    fig_put_int(r, "phases.dropped_by_senders", "count", (int64_t)senders_dropped(p));
    fig_put_int(r, "phases.rejected_by_monitor", "count", p->rejected);
    acc_t run = p->outside;
    run.wall_s = ((double)p->prev_t - (double)p->origin_ns) / 1e9;
    for (int k = 0; k < C__MAX; k++)
        run.c[k] = p->run_c[k];
    put_acc(fig_put_object(r, "phases.run"), &run, energy, gpu);
    fig_put_num(r, "phases.run.peak_bytes", "bytes", p->peak_mem);
    fig_put_num(r, "phases.run.peak_rss_sum_bytes", "bytes", p->peak_rss);
    fig_put_array(r, "phases.phases");
    for (size_t i = 0; i < p->nph; i++) {
        const phase_t *ph = &p->ph[i];
        js_figure_t *e = fig_put_elem(r, "phases.phases");
        fig_put_text(r, "phases.phases[].name", ph->name);
        fig_put_int(r, "phases.phases[].activations", "count", ph->activations);
        fig_put_int(r, "phases.phases[].begins", "count", ph->begins);
        fig_put_int(r, "phases.phases[].ends", "count", ph->ends);
        fig_put_int(r, "phases.phases[].unmatched_ends", "count", ph->unmatched_ends);
        fig_put_bool(r, "phases.phases[].open_at_end", ph->open > 0);
        fig_put_num(r, "phases.phases[].first_begin_unix_s", "s", unix_s(ph->first_begin_unix));
        fig_put_num(r, "phases.phases[].last_end_unix_s", "s", unix_s(ph->last_end_unix));
        put_acc(e, &ph->incl, energy, gpu);
        fig_put_num(r, "phases.phases[].peak_bytes", "bytes", ph->peak_mem);
        fig_put_num(r, "phases.phases[].peak_rss_sum_bytes", "bytes", ph->peak_rss);
        if (gpu)
            fig_put_num(r, "phases.phases[].peak_gpu_memory_bytes", "bytes", ph->peak_gpu_mem);
        put_acc(fig_put_object(r, "phases.phases[].self"), &ph->self, energy, gpu);
    }
    put_acc(fig_put_object(r, "phases.outside"), &p->outside, energy, gpu);
    fig_put_num(r, "phases.outside.peak_bytes", "bytes", p->any_outside ? p->outside_peak_mem : NAN);
    fig_put_num(r, "phases.outside.peak_rss_sum_bytes", "bytes", p->any_outside ? p->outside_peak_rss : NAN);
    fig_put_bool(r, "phases.outside.seen", p->any_outside);
    fig_put_array(r, "phases.events");
    for (size_t i = 0; i < p->nev; i++) {
        const event_t *e = &p->ev[i];
        fig_put_elem(r, "phases.events");
        fig_put_text(r, "phases.events[].name", e->name);
        fig_put_int(r, "phases.events[].count", "count", e->count);
        fig_put_num(r, "phases.events[].first_unix_s", "s", unix_s(e->first_unix));
        fig_put_num(r, "phases.events[].last_unix_s", "s", unix_s(e->last_unix));
        fig_put_json(r, "phases.events[].last_data", e->last_data);
    }
}

static const char *fmt_n(char *buf, size_t cap, const char *fmt, double v)
{
    return fig_fmt(buf, cap, fmt, v);
}

static int text_line(js_buf_t *b, const char *label, const js_figure_t *a, bool self_only)
{
    char w[32], c[32], k[32], pk[32], rd[32], wr[32];
    js_buf_t esc = {0};
    int err = text_escape(&esc, label, strlen(label));
    double wall = fig_num(a, "wall_s"), cpu = fig_num(a, "cpu_s");
    err |= buf_printf(b, "    %-24.24s %s s wall, %s s CPU (%s cores)%s%s, read %s, written %s\n",
                      esc.p ? esc.p : "", fmt_n(w, sizeof(w), "%.2f", wall), fmt_n(c, sizeof(c), "%.2f", cpu),
                      fmt_n(k, sizeof(k), "%.2f", wall > 0 ? cpu / wall : NAN), self_only ? "" : ", peak ",
                      self_only ? "" : fmt_bytes(pk, sizeof(pk), fig_num(a, "peak_bytes")),
                      fmt_bytes(rd, sizeof(rd), fig_num(a, "read_bytes")),
                      fmt_bytes(wr, sizeof(wr), fig_num(a, "write_bytes")));
    buf_free(&esc);
    return err ? -ENOMEM : 0;
}

static int phases_summary_text(const js_figure_t *r, js_buf_t *b)
{
    if (!fig_get(r, "phases"))
        return 0;
    const js_figure_t *phs = fig_get(r, "phases.phases"), *evs = fig_get(r, "phases.events");
    size_t nph = fig_count(phs), nev = fig_count(evs);
    int64_t events = fig_int(r, "phases.event_count", 0), marks = fig_int(r, "phases.marks", 0);
    int err = buf_printf(b, "  phases           %zu phase%s, %lld event%s (%lld marks", nph,
                         nph == 1 ? "" : "s", (long long)events, events == 1 ? "" : "s", (long long)marks);
    int64_t dropped = fig_int(r, "phases.dropped_by_senders", 0),
            rejected = fig_int(r, "phases.rejected_by_monitor", 0);
    if (dropped || rejected)
        err |= buf_printf(b, "; %llu dropped by the job, %lld rejected", (unsigned long long)dropped,
                          (long long)rejected);
    int64_t unmatched = fig_int(r, "phases.unmatched_ends", 0);
    if (unmatched)
        err |= buf_printf(b, "; %lld end%s without a begin", (long long)unmatched, unmatched == 1 ? "" : "s");
    err |= buf_printf(b, "); inclusive totals, cut at the marks\n");
    for (size_t i = 0; i < nph; i++) {
        const char *name = fig_text(fig_kid(phs, i), "name");
        err |= text_line(b, name ? name : "", fig_kid(phs, i), false);
    }
    if (fig_bool(r, "phases.outside.seen") == 1)
        err |= text_line(b, "(outside any phase)", fig_get(r, "phases.outside"), false);
    for (size_t i = 0; i < nev && i < 20; i++) {
        js_buf_t esc = {0};
        const char *name = fig_text(fig_kid(evs, i), "name");
        err |= text_escape(&esc, name ? name : "", name ? strlen(name) : 0);
        err |= buf_printf(b, "    event %-18.18s x%lld\n", esc.p ? esc.p : "",
                          (long long)fig_int(fig_kid(evs, i), "count", 0));
        buf_free(&esc);
    }
    return err ? -ENOMEM : 0;
}

static int phases_summary_short(const js_figure_t *r, js_buf_t *b)
{
    if (!fig_get(r, "phases"))
        return 0;
    size_t nph = fig_count(fig_get(r, "phases.phases"));
    int64_t events = fig_int(r, "phases.event_count", 0);
    return buf_printf(b,
                      "  phases           %zu phase%s, %lld event%s (each phase's figures: --summary=full)\n",
                      nph, nph == 1 ? "" : "s", (long long)events, events == 1 ? "" : "s");
}

/* ---- life ------------------------------------------------------------------------------------------- */

static int phases_init(const js_model_cfg_t *cfg, void **ret_state)
{
    (void)cfg;
    phases_t *p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    acc_init(&p->outside);
    p->outside_peak_mem = p->outside_peak_rss = p->peak_mem = p->peak_rss = NAN;
    p->for_marks_col = -1;
    p->self_rejected_col = p->self_dropped_col = -1;
    for (int k = 0; k < C__MAX; k++)
        p->run_c[k] = NAN;
    *ret_state = p;
    return 0;
}

static void phases_fini(void *state)
{
    phases_t *p = state;
    if (!p)
        return;
    for (size_t i = 0; i < p->nph; i++)
        free(p->ph[i].name);
    for (size_t i = 0; i < p->nev; i++) {
        free(p->ev[i].name);
        free(p->ev[i].last_data);
    }
    free(p->ph);
    free(p->stack);
    free(p->ev);
    free(p->snd);
    free(p->mr);
    nameindex_free(&p->ph_ix);
    nameindex_free(&p->ev_ix);
    free(p);
}

const js_model_part_t part_phases = {
    .name = "phases",
    .init = phases_init,
    .feed = phases_feed,
    .view_table = phases_view_table,
    .view_fill = phases_view_fill,
    .summary = phases_summary,
    .summary_text = phases_summary_text,
    .summary_short = phases_summary_short,
    .fini = phases_fini,
};
