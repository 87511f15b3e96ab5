/* SPDX-License-Identifier: MIT
 *
 * The `perf` model part (see part_perf.h). Each sample, every row of the perf source's table is matched to
 * its series (event, target, target id; at the row's index of the previous sample first, so an unchanged
 * layout costs one comparison per row), and per series:
 *   estimate   count x enabled / running of the cumulative values (perf_scale);
 *   interval   the increase of the count, scaled by the increase of enabled over that of running (the
 *              multiplexing of that interval, as `perf stat -I` does); a series first seen starts from zero
 *              (a counter counts from its open);
 * summed over the targets of each event. A series without a value in a sample keeps its last estimate in the
 * totals and gives its event no interval value (missing, not 0).
 *
 * Derived, per interval (the `perf_derived` view) and over the run (the summary): IPC = instructions /
 * cycles, cache miss fraction = cache_misses / cache_references, branch miss fraction = branch_misses /
 * branch_instructions (each pair is counted as one group, over the same time), FLOPs = sum of FLOP events x
 * weight (perf_flop_weight), memory bytes = CAS commands x 64, CPU cores = task-clock ns / elapsed ns.
 *
 * What each event's status is comes from the source's inventory rows (perf.EVENT.status): the summary lists
 * each missing event once with its reason.
 */
#include "model/part_perf.h"

#include "model/counter.h"
#include "model/figure.h"
#include "model/model.h"
#include "model/part.h"
#include "core/sample.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The perf source's table and the columns read of it, bound by name (sample_bind): no source header. The
 * enum follows the name list. */
enum { PC_EVENT, PC_KIND, PC_TARGET, PC_TARGET_ID, PC_COUNT, PC_ENABLED_NS, PC_RUNNING_NS, PC__MAX };
static const char *const perf_col_names[PC__MAX] = {
    "event", "kind", "target", "target_id", "count", "time_enabled_ns", "time_running_ns"};

double perf_scale(uint64_t count, uint64_t enabled, uint64_t running)
{
    if (enabled == 0 || running == enabled)
        return (double)count;
    if (running == 0)
        return NAN;
    return (double)count * ((double)enabled / (double)running);
}

double perf_flop_weight(const char *name, perf_fp_t *ret_prec)
{
    static const struct {
        const char *name;
        double w;
        perf_fp_t prec;
    } t[] = {
        {"fp_scalar_single", 1, PERF_FP_SINGLE},
        {"fp_scalar_double", 1, PERF_FP_DOUBLE},
        {"fp_128b_packed_single", 4, PERF_FP_SINGLE},
        {"fp_128b_packed_double", 2, PERF_FP_DOUBLE},
        {"fp_256b_packed_single", 8, PERF_FP_SINGLE},
        {"fp_256b_packed_double", 4, PERF_FP_DOUBLE},
        {"fp_512b_packed_single", 16, PERF_FP_SINGLE},
        {"fp_512b_packed_double", 8, PERF_FP_DOUBLE},
        {"fp_flops_any", 1, PERF_FP_ANY},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (strcmp(name, t[i].name) == 0) {
            if (ret_prec)
                *ret_prec = t[i].prec;
            return t[i].w;
        }
    if (ret_prec)
        *ret_prec = PERF_FP_NONE;
    return 0;
}

/* ---- state ---- */

typedef struct {
    char name[40];
    char kind[8];
    char *status;          /* perf.NAME.status from the inventory (owned), NULL if none seen */
    bool have_rows;        /* the event was read at least once */
    int targets;           /* series with a value in the last sample */
    double total;          /* sum of the series' estimates */
    double en, run;        /* sums of the cumulative times, ns */
    double d, d_en, d_run; /* the last interval: scaled increase (NAN if incomplete), time increases */
    bool scaled;           /* some series was multiplexed at some point */
} pev_t;

typedef struct {
    size_t ev;
    char target[32];
    int64_t id;
    js_value_t c, en, run; /* last values read (zero before the first) */
    double est;            /* last estimate */
} series_t;

typedef struct {
    int64_t start_mono_ns;
    pev_t *ev;
    size_t nev, evcap;
    series_t *se;
    size_t nse, secap;
    size_t *hint; /* series of row i of the previous sample */
    size_t nhint, hintcap;
    char *target_desc, *libpfm;
    double paranoid;
    bool user_only;
    bool any; /* a perf row or a perf inventory row was seen */
    int64_t t_first, t_last;
    double dt_s; /* the last interval, NAN for the first sample */
    bool have_t;
    const js_table_t *const *bound; /* the sample layout `tb` was bound against */
    js_bind_t tb;                   /* the perf table, bound by name */
    int pc[PC__MAX];                /* its columns' indices */
} perf_part_t;

static int perf_part_init(const js_model_cfg_t *cfg, void **ret_state)
{
    perf_part_t *p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    p->start_mono_ns = cfg ? cfg->start_mono_ns : 0;
    p->paranoid = NAN;
    p->dt_s = NAN;
    *ret_state = p;
    return 0;
}

static void perf_part_fini(void *state)
{
    perf_part_t *p = state;
    if (!p)
        return;
    for (size_t i = 0; i < p->nev; i++)
        free(p->ev[i].status);
    free(p->ev);
    free(p->se);
    free(p->hint);
    free(p->target_desc);
    free(p->libpfm);
    free(p);
}

/* ev_get: the event named `name` (created when `create`), or NULL (not found, or ENOMEM: *ret_err set). */
static pev_t *ev_get(perf_part_t *p, const char *name, bool create, int *ret_err)
{
    for (size_t i = 0; i < p->nev; i++)
        if (strcmp(p->ev[i].name, name) == 0)
            return &p->ev[i];
    if (!create)
        return NULL;
    if (p->nev == p->evcap) {
        size_t cap = p->evcap ? p->evcap * 2 : 32;
        pev_t *e = realloc(p->ev, cap * sizeof(*e));
        if (!e) {
            *ret_err = -ENOMEM;
            return NULL;
        }
        p->ev = e;
        p->evcap = cap;
    }
    pev_t *e = &p->ev[p->nev++];
    memset(e, 0, sizeof(*e));
    snprintf(e->name, sizeof(e->name), "%s", name);
    return e;
}

static const pev_t *ev_find(const perf_part_t *p, const char *name)
{
    for (size_t i = 0; i < p->nev; i++)
        if (strcmp(p->ev[i].name, name) == 0)
            return &p->ev[i];
    return NULL;
}

static int set_str(char **dst, const char *s)
{
    char *c = strdup(s ? s : "");
    if (!c)
        return -ENOMEM;
    free(*dst);
    *dst = c;
    return 0;
}

/* read_inventory: the perf source's inventory rows (sample 0). */
static int read_inventory(perf_part_t *p, const js_rows_t *inv)
{
    for (size_t i = 0; inv && i < inv->nrows; i++) {
        const js_value_t *v = rows_row(inv, i);
        if (!v[INV_SOURCE].present || !v[INV_KEY].present ||
            strcmp(rows_str(inv, &v[INV_SOURCE]), "perf") != 0)
            continue;
        const char *key = rows_str(inv, &v[INV_KEY]);
        const char *val = v[INV_VALUE].present ? rows_str(inv, &v[INV_VALUE]) : NULL;
        int r = 0;
        p->any = true;
        if (strcmp(key, "perf.target") == 0) {
            r = set_str(&p->target_desc, val);
        } else if (strcmp(key, "perf.libpfm") == 0) {
            r = set_str(&p->libpfm, val);
        } else if (strcmp(key, "perf.paranoid") == 0) {
            p->paranoid = val && *val ? strtod(val, NULL) : NAN;
        } else if (strcmp(key, "perf.user_only") == 0) {
            p->user_only = val && strcmp(val, "1") == 0;
        } else if (strncmp(key, "perf.", 5) == 0) {
            const char *dot = strrchr(key, '.');
            char name[40];
            size_t n = (size_t)(dot - (key + 5));
            if (dot <= key + 5 || n >= sizeof(name))
                continue;
            memcpy(name, key + 5, n);
            name[n] = '\0';
            bool is_status = strcmp(dot, ".status") == 0, is_kind = strcmp(dot, ".kind") == 0;
            if (!is_status && !is_kind)
                continue;
            pev_t *e = ev_get(p, name, true, &r);
            if (!e)
                return r;
            if (is_status)
                r = set_str(&e->status, val);
            else
                snprintf(e->kind, sizeof(e->kind), "%s", val ? val : "");
        }
        if (r < 0)
            return r;
    }
    return 0;
}

static bool series_is(const perf_part_t *p, const series_t *s, const char *ev, const char *target, int64_t id)
{
    return s->id == id && strcmp(s->target, target) == 0 && strcmp(p->ev[s->ev].name, ev) == 0;
}

/* series_of: the series of `row` (row i of the sample), created if new. Returns its index or -ENOMEM. */
static long series_of(perf_part_t *p, const js_rows_t *rows, size_t i, const js_value_t *row)
{
    const char *ev = row[p->pc[PC_EVENT]].present ? rows_str(rows, &row[p->pc[PC_EVENT]]) : "";
    const char *target = row[p->pc[PC_TARGET]].present ? rows_str(rows, &row[p->pc[PC_TARGET]]) : "";
    int64_t id = row[p->pc[PC_TARGET_ID]].present ? row[p->pc[PC_TARGET_ID]].i : -1;
    if (i < p->nhint && p->hint[i] < p->nse && series_is(p, &p->se[p->hint[i]], ev, target, id))
        return (long)p->hint[i];
    for (size_t k = 0; k < p->nse; k++)
        if (series_is(p, &p->se[k], ev, target, id))
            return (long)k;
    int err = 0;
    pev_t *e = ev_get(p, ev, true, &err);
    if (!e)
        return err;
    if (!e->kind[0] && row[p->pc[PC_KIND]].present)
        snprintf(e->kind, sizeof(e->kind), "%s", rows_str(rows, &row[p->pc[PC_KIND]]));
    if (p->nse == p->secap) {
        size_t cap = p->secap ? p->secap * 2 : 32;
        series_t *s = realloc(p->se, cap * sizeof(*s));
        if (!s)
            return -ENOMEM;
        p->se = s;
        p->secap = cap;
    }
    series_t *s = &p->se[p->nse];
    memset(s, 0, sizeof(*s));
    s->ev = (size_t)(e - p->ev);
    snprintf(s->target, sizeof(s->target), "%s", target);
    s->id = id;
    js_value_t zero = {.present = true, .i = 0};
    s->c = s->en = s->run = zero; /* a counter counts from zero when opened */
    return (long)p->nse++;
}

static int perf_part_feed(void *state, const js_feed_t *f)
{
    perf_part_t *p = state;
    int r;
    if ((r = read_inventory(p, sample_rows(f->s, &table_inventory))) < 0)
        return r;

    const js_rows_t *samples = sample_rows(f->s, &table_samples);
    if (samples->nrows && rows_row(samples, 0)[SAMPLES_T_MONO].present) {
        int64_t t = rows_row(samples, 0)[SAMPLES_T_MONO].i;
        p->dt_s = p->have_t && t > p->t_last ? (double)(t - p->t_last) / 1e9 : NAN;
        if (!p->have_t)
            p->t_first = t;
        p->t_last = t;
        p->have_t = true;
    }

    if (p->bound != f->s->tables) { /* once per layout */
        p->tb = (js_bind_t){"perf", perf_col_names, PC__MAX, p->pc, -1};
        sample_bind(f->s, &p->tb, 1);
        p->bound = f->s->tables;
    }
    static const js_rows_t none = {0};
    const js_rows_t *rows = sample_bound(f->s, &p->tb);
    if (!rows)
        rows = &none;
    for (size_t k = 0; k < p->nev; k++) {
        pev_t *e = &p->ev[k];
        e->targets = 0;
        e->d = e->d_en = e->d_run = 0;
    }
    if (rows->nrows) {
        p->any = true;
        if (rows->nrows > p->hintcap) {
            size_t *h = realloc(p->hint, rows->nrows * sizeof(*h));
            if (!h)
                return -ENOMEM;
            p->hint = h;
            p->hintcap = rows->nrows;
        }
    }
    for (size_t i = 0; i < rows->nrows; i++) {
        const js_value_t *row = rows_row(rows, i);
        long si = series_of(p, rows, i, row);
        if (si < 0)
            return (int)si;
        p->hint[i] = (size_t)si;
        series_t *s = &p->se[si];
        pev_t *e = &p->ev[s->ev];
        e->have_rows = true;
        uint64_t dc, den, drun;
        if (!row[p->pc[PC_COUNT]].present || !row[p->pc[PC_ENABLED_NS]].present ||
            !row[p->pc[PC_RUNNING_NS]].present) {
            e->d = NAN; /* no value this sample: the interval of this event is incomplete */
            continue;
        }
        e->targets++;
        if (counter_delta(&s->c, &row[p->pc[PC_COUNT]], 64, &dc) == 0 &&
            counter_delta(&s->en, &row[p->pc[PC_ENABLED_NS]], 64, &den) == 0 &&
            counter_delta(&s->run, &row[p->pc[PC_RUNNING_NS]], 64, &drun) == 0) {
            e->d += perf_scale(dc, den, drun);
            e->d_en += (double)den;
            e->d_run += (double)drun;
        } else {
            e->d = NAN; /* a reset: no interval */
        }
        s->c = row[p->pc[PC_COUNT]];
        s->en = row[p->pc[PC_ENABLED_NS]];
        s->run = row[p->pc[PC_RUNNING_NS]];
        s->est = perf_scale((uint64_t)s->c.i, (uint64_t)s->en.i, (uint64_t)s->run.i);
        if (s->run.i != s->en.i)
            e->scaled = true;
    }
    p->nhint = rows->nrows;
    /* totals: every series' last estimate */
    for (size_t k = 0; k < p->nev; k++)
        p->ev[k].total = p->ev[k].en = p->ev[k].run = 0;
    for (size_t k = 0; k < p->nse; k++) {
        pev_t *e = &p->ev[p->se[k].ev];
        e->total += p->se[k].est;
        e->en += (double)(uint64_t)p->se[k].en.i;
        e->run += (double)(uint64_t)p->se[k].run.i;
    }
    for (size_t k = 0; k < p->nev; k++)
        if (!p->ev[k].have_rows)
            p->ev[k].total = p->ev[k].d = NAN;
    return 0;
}

/* ---- derived figures ---- */

typedef struct {
    double ipc, cache_miss, branch_miss;
    double flop, flop_sp, flop_dp;
    double mem_rd, mem_wr; /* bytes */
    double task_clock_ns, cs, pf;
} derived_t;

/* value: an event's interval increase or run total; NAN when it was not counted. */
static double value(const perf_part_t *p, const char *name, bool interval)
{
    const pev_t *e = ev_find(p, name);
    if (!e || !e->have_rows)
        return NAN;
    return interval ? e->d : e->total;
}

static double ratio(double a, double b)
{
    return isnan(a) || isnan(b) || b <= 0 ? NAN : a / b;
}

static void derive(const perf_part_t *p, bool interval, derived_t *o)
{
    o->ipc = ratio(value(p, "instructions", interval), value(p, "cycles", interval));
    o->cache_miss = ratio(value(p, "cache_misses", interval), value(p, "cache_references", interval));
    o->branch_miss = ratio(value(p, "branch_misses", interval), value(p, "branch_instructions", interval));
    o->flop = o->flop_sp = o->flop_dp = NAN;
    for (size_t k = 0; k < p->nev; k++) {
        perf_fp_t prec;
        double w = perf_flop_weight(p->ev[k].name, &prec);
        if (w == 0 || !p->ev[k].have_rows)
            continue;
        double x = w * value(p, p->ev[k].name, interval); /* NAN stays NAN: unknown, not 0 */
        o->flop = isnan(o->flop) ? x : o->flop + x;
        if (prec == PERF_FP_SINGLE)
            o->flop_sp = isnan(o->flop_sp) ? x : o->flop_sp + x;
        else if (prec == PERF_FP_DOUBLE)
            o->flop_dp = isnan(o->flop_dp) ? x : o->flop_dp + x;
    }
    o->mem_rd = value(p, "mem_cas_read_lines", interval) * PERF_CAS_BYTES;
    o->mem_wr = value(p, "mem_cas_write_lines", interval) * PERF_CAS_BYTES;
    o->task_clock_ns = value(p, "task_clock_ns", interval);
    o->cs = value(p, "context_switches", interval);
    o->pf = value(p, "page_faults", interval);
}

/* elapsed: seconds the counters ran over the whole run (from the start to the last sample). */
static double elapsed_s(const perf_part_t *p)
{
    if (!p->have_t)
        return NAN;
    int64_t t0 = p->start_mono_ns > 0 && p->start_mono_ns <= p->t_first ? p->start_mono_ns : p->t_first;
    return p->t_last > t0 ? (double)(p->t_last - t0) / 1e9 : NAN;
}

static double per_s(double x, double dt)
{
    return isnan(dt) || dt <= 0 ? NAN : x / dt;
}

static bool is_ok(const pev_t *e)
{
    return !e->status || strncmp(e->status, "ok", 2) == 0;
}

static const char *unit_of(const char *name)
{
    size_t n = strlen(name);
    if (n > 3 && strcmp(name + n - 3, "_ns") == 0)
        return "ns";
    if (n > 6 && strcmp(name + n - 6, "_lines") == 0)
        return "lines";
    return "events";
}

/* ---- views ---- */

enum {
    PV_EVENT,
    PV_KIND,
    PV_TARGETS,
    PV_COUNT,
    PV_INTERVAL,
    PV_PER_S,
    PV_RUNNING,
    PV_TOTAL_RUNNING,
    PV__MAX
};

static const js_column_t pv_cols[PV__MAX] = {
    [PV_EVENT] = {"event", "text", JS_TEXT, JS_LABEL, 0, "event name (docs/METRICS.md, perf)"},
    [PV_KIND] = {"kind", "text", JS_TEXT, JS_LABEL, 0, "sw, hw or pfm"},
    [PV_TARGETS] = {"targets", "count", JS_INT, JS_GAUGE, 0, "targets read this sample (tree, tasks, CPUs)"},
    [PV_COUNT] = {"count", "events", JS_REAL, JS_COUNTER, 0,
                  "since the start, summed over targets, scaled for multiplexing (task_clock_ns: ns)"},
    [PV_INTERVAL] = {"interval_count", "events", JS_REAL, JS_GAUGE, 0,
                     "increase over the last interval, scaled"},
    [PV_PER_S] = {"count_per_s", "1/s", JS_REAL, JS_GAUGE, 0, "interval_count per second"},
    [PV_RUNNING] = {"running_fraction", "fraction", JS_REAL, JS_GAUGE, 0,
                    "time counted / time enabled over the interval (1: exact; less: scaled estimate)"},
    [PV_TOTAL_RUNNING] = {"total_running_fraction", "fraction", JS_REAL, JS_GAUGE, 0,
                          "time counted / time enabled since the start"},
};
static const js_table_t view_perf = {"perf", "hardware and software counters: one row per sample and event",
                                     PV__MAX, pv_cols};

enum {
    DV_IPC,
    DV_CACHE_MISS,
    DV_BRANCH_MISS,
    DV_FLOP,
    DV_FLOP_SP,
    DV_FLOP_DP,
    DV_MEM_RD,
    DV_MEM_WR,
    DV_MEM,
    DV_CORES,
    DV_CS,
    DV_PF,
    DV__MAX
};

static const js_column_t dv_cols[DV__MAX] = {
    [DV_IPC] = {"ipc", "ratio", JS_REAL, JS_GAUGE, 0, "instructions per cycle"},
    [DV_CACHE_MISS] = {"cache_miss_fraction", "fraction", JS_REAL, JS_GAUGE, 0,
                       "cache_misses / cache_references"},
    [DV_BRANCH_MISS] = {"branch_miss_fraction", "fraction", JS_REAL, JS_GAUGE, 0,
                        "branch_misses / branch_instructions"},
    [DV_FLOP] = {"flop_per_s", "1/s", JS_REAL, JS_GAUGE, 0,
                 "floating-point operations per second, any precision"},
    [DV_FLOP_SP] = {"flop_sp_per_s", "1/s", JS_REAL, JS_GAUGE, 0, "single-precision FLOPs per second"},
    [DV_FLOP_DP] = {"flop_dp_per_s", "1/s", JS_REAL, JS_GAUGE, 0, "double-precision FLOPs per second"},
    [DV_MEM_RD] = {"mem_read_bytes_per_s", "bytes/s", JS_REAL, JS_GAUGE, 0, "memory-controller reads (node)"},
    [DV_MEM_WR] = {"mem_write_bytes_per_s", "bytes/s", JS_REAL, JS_GAUGE, 0,
                   "memory-controller writes (node)"},
    [DV_MEM] = {"mem_bytes_per_s", "bytes/s", JS_REAL, JS_GAUGE, 0, "memory-controller traffic (node)"},
    [DV_CORES] = {"task_clock_cores", "cores", JS_REAL, JS_GAUGE, 0, "task-clock ns per ns: CPUs busy"},
    [DV_CS] = {"context_switches_per_s", "1/s", JS_REAL, JS_GAUGE, 0, "context switches per second"},
    [DV_PF] = {"page_faults_per_s", "1/s", JS_REAL, JS_GAUGE, 0, "page faults per second"},
};
static const js_table_t view_perf_derived = {
    "perf_derived", "figures derived from the counters: one row per sample", DV__MAX, dv_cols};

static const js_table_t *perf_part_view_table(void *state, size_t i)
{
    (void)state;
    return i == 0 ? &view_perf : i == 1 ? &view_perf_derived : NULL;
}

static void set_real(js_value_t *v, double x)
{
    if (!isnan(x) && !isinf(x))
        val_real(v, x);
}

static int perf_part_view_fill(void *state, size_t i, js_rows_t *out)
{
    perf_part_t *p = state;
    if (i == 0) {
        for (size_t k = 0; k < p->nev; k++) {
            const pev_t *e = &p->ev[k];
            if (!e->have_rows)
                continue;
            js_value_t *v = rows_add(out);
            if (!v || rows_set_str(out, &v[PV_EVENT], e->name, strlen(e->name)) < 0 ||
                rows_set_str(out, &v[PV_KIND], e->kind, strlen(e->kind)) < 0)
                return -ENOMEM;
            val_int(&v[PV_TARGETS], e->targets);
            set_real(&v[PV_COUNT], e->total);
            set_real(&v[PV_INTERVAL], e->d);
            set_real(&v[PV_PER_S], per_s(e->d, p->dt_s));
            set_real(&v[PV_RUNNING], ratio(e->d_run, e->d_en));
            set_real(&v[PV_TOTAL_RUNNING], ratio(e->run, e->en));
        }
        return 0;
    }
    js_value_t *v = rows_add(out);
    if (!v)
        return -ENOMEM;
    derived_t d;
    derive(p, true, &d);
    double dt = p->dt_s;
    set_real(&v[DV_IPC], d.ipc);
    set_real(&v[DV_CACHE_MISS], d.cache_miss);
    set_real(&v[DV_BRANCH_MISS], d.branch_miss);
    set_real(&v[DV_FLOP], per_s(d.flop, dt));
    set_real(&v[DV_FLOP_SP], per_s(d.flop_sp, dt));
    set_real(&v[DV_FLOP_DP], per_s(d.flop_dp, dt));
    set_real(&v[DV_MEM_RD], per_s(d.mem_rd, dt));
    set_real(&v[DV_MEM_WR], per_s(d.mem_wr, dt));
    set_real(&v[DV_MEM], per_s(d.mem_rd + d.mem_wr, dt));
    set_real(&v[DV_CORES], per_s(d.task_clock_ns / 1e9, dt));
    set_real(&v[DV_CS], per_s(d.cs, dt));
    set_real(&v[DV_PF], per_s(d.pf, dt));
    return 0;
}

/* ---- summary ---- */

static void perf_part_summary(void *state, js_figure_t *r)
{
    perf_part_t *p = state;
    if (!p->any)
        return;
    fig_put_text(r, "perf.target", p->target_desc);
    fig_put_num(r, "perf.paranoid", NULL, p->paranoid);
    fig_put_bool(r, "perf.user_mode_only", p->user_only);
    fig_put_text(r, "perf.libpfm", p->libpfm);
    fig_put_object(r, "perf.events");
    for (size_t k = 0; k < p->nev; k++) {
        const pev_t *e = &p->ev[k];
        if (!is_ok(e) && !e->have_rows)
            continue;
        fig_name(r, "perf.events", e->name);
        fig_put_text(r, "perf.events.{}.kind", e->kind);
        fig_put_text(r, "perf.events.{}.unit", unit_of(e->name));
        fig_put_num(r, "perf.events.{}.count", unit_of(e->name), e->total);
        fig_put_num(r, "perf.events.{}.running_fraction", "fraction", ratio(e->run, e->en));
        fig_put_bool(r, "perf.events.{}.scaled", e->scaled);
        int64_t ntargets = 0; /* targets with rows: 0 for an event never read */
        for (size_t j = 0; j < p->nse; j++)
            ntargets += p->se[j].ev == k;
        fig_put_int(r, "perf.events.{}.targets", "count", ntargets);
    }
    fig_put_object(r, "perf.missing");
    for (size_t k = 0; k < p->nev; k++) {
        const pev_t *e = &p->ev[k];
        if (!is_ok(e) && !e->have_rows) {
            fig_name(r, "perf.missing", e->name);
            fig_put_text(r, "perf.missing.{}", e->status);
        }
    }
    derived_t d;
    derive(p, false, &d);
    double el = elapsed_s(p);
    fig_put_num(r, "perf.derived.elapsed_s", "s", el);
    fig_put_num(r, "perf.derived.task_clock_s", "s", d.task_clock_ns / 1e9);
    fig_put_num(r, "perf.derived.task_clock_cores", "cores", per_s(d.task_clock_ns / 1e9, el));
    fig_put_num(r, "perf.derived.ipc", "ratio", d.ipc);
    fig_put_num(r, "perf.derived.cache_miss_fraction", "fraction", d.cache_miss);
    fig_put_num(r, "perf.derived.branch_miss_fraction", "fraction", d.branch_miss);
    fig_put_num(r, "perf.derived.gflop", "GFLOP", d.flop / 1e9);
    fig_put_num(r, "perf.derived.gflop_sp", "GFLOP", d.flop_sp / 1e9);
    fig_put_num(r, "perf.derived.gflop_dp", "GFLOP", d.flop_dp / 1e9);
    fig_put_num(r, "perf.derived.gflop_per_s", "GFLOP/s", per_s(d.flop / 1e9, el));
    fig_put_num(r, "perf.derived.mem_read_bytes", "bytes", d.mem_rd);
    fig_put_num(r, "perf.derived.mem_write_bytes", "bytes", d.mem_wr);
    fig_put_num(r, "perf.derived.mem_gb_per_s", "GB/s", per_s((d.mem_rd + d.mem_wr) / 1e9, el));
}

static const char *fmt_num(char *buf, size_t cap, const char *fmt, double v)
{
    return fig_fmt(buf, cap, fmt, v);
}

/* read_event: event `e` of the summary's perf.events when it was read (targets > 0), else NULL */
static const js_figure_t *read_event(const js_figure_t *e)
{
    return e && fig_int(e, "targets", 0) > 0 ? e : NULL;
}

/* total_text: an event's run total for the text, "n/a" when not counted. */
static const char *total_text(char *buf, size_t cap, const js_figure_t *events, const char *name,
                              double scale, const char *fmt)
{
    const js_figure_t *e = NULL;
    for (size_t k = 0; k < fig_count(events) && !e; k++)
        if (strcmp(fig_kid(events, k)->name, name) == 0)
            e = read_event(fig_kid(events, k));
    return fmt_num(buf, cap, fmt, e ? fig_num(e, "count") * scale : NAN);
}

static int perf_text_events(const js_figure_t *r, js_buf_t *b)
{
    int err = 0;
    char a[6][64], c[96];
    bool sw = false, other = false, scaled = false;
    double frac = 1;
    const js_figure_t *events = fig_get(r, "perf.events");
    for (size_t k = 0; k < fig_count(events); k++) {
        const js_figure_t *e = read_event(fig_kid(events, k));
        if (!e)
            continue;
        const char *kind = fig_text(e, "kind");
        if (kind && strcmp(kind, "sw") == 0)
            sw = true;
        else
            other = true;
        double f = fig_num(e, "running_fraction");
        if (fig_bool(e, "scaled") == 1 && f < frac) {
            scaled = true;
            frac = f;
        }
    }
    if (sw)
        err |= buf_printf(
            b,
            "  perf software    task-clock %s s, %s context switches, %s CPU migrations, %s page faults "
            "(%s minor, %s major)%s\n",
            total_text(a[0], sizeof(a[0]), events, "task_clock_ns", 1e-9, "%.3f"),
            total_text(a[1], sizeof(a[1]), events, "context_switches", 1, "%.0f"),
            total_text(a[2], sizeof(a[2]), events, "cpu_migrations", 1, "%.0f"),
            total_text(a[3], sizeof(a[3]), events, "page_faults", 1, "%.0f"),
            total_text(a[4], sizeof(a[4]), events, "minor_faults", 1, "%.0f"),
            total_text(a[5], sizeof(a[5]), events, "major_faults", 1, "%.0f"),
            fig_bool(r, "perf.user_mode_only") == 1 ? " [user mode only: perf_event_paranoid]" : "");
    if (other) {
        bool first = true;
        for (size_t k = 0; k < fig_count(events); k++) {
            const js_figure_t *e = read_event(fig_kid(events, k));
            const char *kind = e ? fig_text(e, "kind") : NULL;
            if (!e || (kind && strcmp(kind, "sw") == 0))
                continue;
            err |= buf_printf(b, "%s%s %s", first ? "  perf hardware    " : ", ", e->name,
                              fmt_num(a[0], sizeof(a[0]), "%.0f", fig_num(e, "count")));
            first = false;
        }
        if (scaled)
            snprintf(c, sizeof(c), " (multiplexed: some counted only %.0f%% of the time, scaled)",
                     frac * 100);
        err |= buf_printf(b, "%s\n", scaled ? c : "");
    }
    return err;
}

static int perf_part_summary_text(const js_figure_t *r, js_buf_t *b)
{
    if (!fig_get(r, "perf"))
        return 0;
    int err = perf_text_events(r, b);
    struct {
        const char *fmt;
        double v;
    } dl[] = {
        {"IPC %.2f", fig_num(r, "perf.derived.ipc")},
        {"cache misses %.2f%%", fig_num(r, "perf.derived.cache_miss_fraction") * 100},
        {"branch misses %.2f%%", fig_num(r, "perf.derived.branch_miss_fraction") * 100},
        {"%.3g GFLOP/s", fig_num(r, "perf.derived.gflop_per_s")},
        {"memory %.3g GB/s (node)", fig_num(r, "perf.derived.mem_gb_per_s")},
    };
    bool first = true;
    for (size_t i = 0; i < sizeof(dl) / sizeof(dl[0]); i++) {
        if (isnan(dl[i].v))
            continue;
        err |= buf_printf(b, "%s", first ? "  perf derived     " : ", ");
        err |= buf_printf(b, dl[i].fmt, dl[i].v);
        first = false;
    }
    if (!first)
        err |= buf_printf(b, "\n");
    /* missing events, grouped by reason */
    const js_figure_t *missing = fig_get(r, "perf.missing");
    for (size_t k = 0; k < fig_count(missing); k++) {
        const js_figure_t *e = fig_kid(missing, k);
        const char *why = e->present ? e->text : "";
        bool done = false;
        for (size_t j = 0; j < k && !done; j++)
            done = fig_kid(missing, j)->present && strcmp(fig_kid(missing, j)->text, why) == 0;
        if (done)
            continue;
        err |= buf_printf(b, "  perf missing     %s", e->name);
        for (size_t j = k + 1; j < fig_count(missing); j++)
            if (fig_kid(missing, j)->present && strcmp(fig_kid(missing, j)->text, why) == 0)
                err |= buf_printf(b, ", %s", fig_kid(missing, j)->name);
        err |= buf_printf(b, ": %s\n", why);
    }
    return err ? -ENOMEM : 0;
}

const js_model_part_t part_perf = {
    .name = "perf",
    .init = perf_part_init,
    .feed = perf_part_feed,
    .view_table = perf_part_view_table,
    .view_fill = perf_part_view_fill,
    .summary = perf_part_summary,
    .summary_text = perf_part_summary_text,
    .fini = perf_part_fini,
};
