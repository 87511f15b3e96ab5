/* SPDX-License-Identifier: MIT
 *
 * The `cgroup` model part (see part_cgroup.h): turns the raw counters of the scope's cgroup into cumulative
 * totals, per-interval rates and the summary's cgroup and allocation sections.
 *
 * Counters: a cgroup made for the run counts from its creation, so its first value already belongs to the
 * job (cumulative = the value); a watched cgroup counts from the first sample (cumulative = the increase
 * since). Increases come from counter_delta() with each column's width; an interval with a missing value or
 * a reset adds nothing, and a rate needs both ends of one interval.
 *
 * Memory: the kernel's tree-wide high-water mark (v2 memory.peak, v1 memory.max_usage_in_bytes) catches a
 * spike between two samples that sampling cannot; it counts page cache and kernel memory, so the anonymous
 * and file parts (memory.stat) are kept beside it as their largest sampled values.
 *
 * Efficiency, seff-style, against the allocation (the cgroup source's inventory): CPU = CPU time / (cores ×
 * wall time), from the cgroup's CPU where there is one, else the tree's; memory = peak / limit, from the
 * cgroup's kernel peak, else the tree's sampled RSS peak.
 */
#include "model/part_cgroup.h"

#include "model/counter.h"
#include "model/summary.h"
#include "model/figure.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the view ---- */

enum {
    V_CPU_S,
    V_USER_S,
    V_SYSTEM_S,
    V_CPU_CORES,
    V_THROTTLED_FRACTION,
    V_THROTTLED_S,
    V_MEM_CURRENT,
    V_MEM_PEAK,
    V_ANON,
    V_FILE,
    V_SWAP,
    V_OOM_KILLS,
    V_IO_READ,
    V_IO_WRITE,
    V_IO_READ_BPS,
    V_IO_WRITE_BPS,
    V_PIDS,
    V_PSI_CPU_SOME,
    V_PSI_MEMORY_SOME,
    V_PSI_MEMORY_FULL,
    V_PSI_IO_SOME,
    V_PSI_IO_FULL,
    V__MAX
};

/* clang-format off */
#define VR(n, u, h) {n, u, JS_REAL, JS_GAUGE, 0, h}
#define VC(n, u, h) {n, u, JS_REAL, JS_COUNTER, 0, h} /* cumulative since the start */
#define VB(n, h) {n, "bytes", JS_INT, JS_GAUGE, 0, h}
/* clang-format on */

static const js_column_t view_cols[V__MAX] = {
    [V_CPU_S] = VC("cpu_s", "s", "CPU time of the cgroup so far (kernel accounting of every task in it)"),
    [V_USER_S] = VC("user_s", "s", "user-mode part"),
    [V_SYSTEM_S] = VC("system_s", "s", "kernel-mode part"),
    [V_CPU_CORES] = VR("cpu_cores", "cores", "CPU rate over the interval"),
    [V_THROTTLED_FRACTION] =
        VR("throttled_fraction", "fraction", "share of the interval's quota periods that were throttled"),
    [V_THROTTLED_S] = VC("throttled_s", "s", "time throttled so far"),
    [V_MEM_CURRENT] =
        VB("memory_current_bytes", "memory charged to the cgroup (page cache and kernel memory included)"),
    [V_MEM_PEAK] = VB("memory_peak_bytes", "the kernel's high-water mark of the cgroup's tree"),
    [V_ANON] = VB("anon_bytes", "anonymous memory"),
    [V_FILE] = VB("file_bytes", "page cache (tmpfs and shmem included)"),
    [V_SWAP] = VB("swap_bytes", "swap used"),
    [V_OOM_KILLS] = VC("oom_kills", "count", "OOM kills so far"),
    [V_IO_READ] = VC("io_read_bytes", "bytes", "block bytes read so far, all devices"),
    [V_IO_WRITE] = VC("io_write_bytes", "bytes", "block bytes written so far, all devices"),
    [V_IO_READ_BPS] = VR("io_read_bytes_per_s", "bytes/s", "block read rate over the interval"),
    [V_IO_WRITE_BPS] = VR("io_write_bytes_per_s", "bytes/s", "block write rate over the interval"),
    [V_PIDS] = {"pids", "count", JS_INT, JS_GAUGE, 0, "tasks in the cgroup"},
    [V_PSI_CPU_SOME] =
        VR("psi_cpu_some_fraction", "fraction", "share of the interval some task waited for CPU"),
    [V_PSI_MEMORY_SOME] =
        VR("psi_memory_some_fraction", "fraction", "share of the interval some task stalled on memory"),
    [V_PSI_MEMORY_FULL] =
        VR("psi_memory_full_fraction", "fraction", "share of the interval all tasks stalled on memory"),
    [V_PSI_IO_SOME] =
        VR("psi_io_some_fraction", "fraction", "share of the interval some task stalled on I/O"),
    [V_PSI_IO_FULL] =
        VR("psi_io_full_fraction", "fraction", "share of the interval all tasks stalled on I/O"),
};
static const js_table_t view_cgroup = {"cgroup", "the scope's cgroup: one row per sample", V__MAX, view_cols};

/* ---- state ---- */

/* One raw counter followed across samples. */
typedef struct {
    bool have;
    js_value_t last;
    int64_t t_last; /* t_mono_ns of `last` */
    double cum;     /* increase so far, raw units */
} acc_t;

typedef struct {
    int64_t major, minor;
    acc_t rd, wr;
} io_dev_t;

/* The cgroup source's tables and the columns read of each, bound by name (sample_bind): no source header.
 * Each enum follows its name list. */
enum { GT_CG, GT_MEM, GT_IO, GT__MAX };
enum {
    GC_USAGE_NS,
    GC_USER_NS,
    GC_SYSTEM_NS,
    GC_USER_TICKS,
    GC_SYSTEM_TICKS,
    GC_PERIODS,
    GC_THROTTLED,
    GC_THROTTLED_NS,
    GC_PSI_CPU_SOME,
    GC_PSI_CPU_FULL,
    GC_PSI_MEM_SOME,
    GC_PSI_MEM_FULL,
    GC_PSI_IO_SOME,
    GC_PSI_IO_FULL,
    GC_PIDS,
    GC_PIDS_PEAK,
    GC__MAX
};
static const char *const cg_names[GC__MAX] = {"usage_ns",
                                              "user_ns",
                                              "system_ns",
                                              "user_ticks",
                                              "system_ticks",
                                              "periods",
                                              "throttled",
                                              "throttled_ns",
                                              "psi_cpu_some_us",
                                              "psi_cpu_full_us",
                                              "psi_memory_some_us",
                                              "psi_memory_full_us",
                                              "psi_io_some_us",
                                              "psi_io_full_us",
                                              "pids",
                                              "pids_peak"};
enum {
    GM_OOM,
    GM_OOM_KILL,
    GM_MAX_EVENTS,
    GM_HIGH_EVENTS,
    GM_FAILCNT,
    GM_CURRENT,
    GM_PEAK,
    GM_ANON,
    GM_FILE,
    GM_SHMEM,
    GM_SWAP,
    GM_SWAP_PEAK,
    GM_MEMSW_PEAK,
    GM__MAX
};
static const char *const mem_names[GM__MAX] = {
    "oom",           "oom_kill",        "max_events",      "high_events", "failcnt",
    "current_bytes", "peak_bytes",      "anon_bytes",      "file_bytes",  "shmem_bytes",
    "swap_bytes",    "swap_peak_bytes", "memsw_peak_bytes"};
enum { GI_MAJOR, GI_MINOR, GI_READ, GI_WRITE, GI__MAX };
static const char *const io_names[GI__MAX] = {"major", "minor", "read_bytes", "write_bytes"};

/* counters of the `cgroup` and `cgroup_memory` tables followed by the part */
enum {
    A_USAGE,
    A_USER,
    A_SYSTEM,
    A_USER_TICKS,
    A_SYSTEM_TICKS,
    A_PERIODS,
    A_THROTTLED,
    A_THROTTLED_NS,
    A_PSI_CPU_SOME,
    A_PSI_CPU_FULL,
    A_PSI_MEM_SOME,
    A_PSI_MEM_FULL,
    A_PSI_IO_SOME,
    A_PSI_IO_FULL,
    A_OOM,
    A_OOM_KILL,
    A_MAX_EVENTS,
    A_HIGH_EVENTS,
    A_FAILCNT,
    A__MAX
};

static const struct {
    int t;   /* GT_CG or GT_MEM */
    int col; /* GC_* or GM_* */
} acc_cols[A__MAX] = {
    [A_USAGE] = {GT_CG, GC_USAGE_NS},
    [A_USER] = {GT_CG, GC_USER_NS},
    [A_SYSTEM] = {GT_CG, GC_SYSTEM_NS},
    [A_USER_TICKS] = {GT_CG, GC_USER_TICKS},
    [A_SYSTEM_TICKS] = {GT_CG, GC_SYSTEM_TICKS},
    [A_PERIODS] = {GT_CG, GC_PERIODS},
    [A_THROTTLED] = {GT_CG, GC_THROTTLED},
    [A_THROTTLED_NS] = {GT_CG, GC_THROTTLED_NS},
    [A_PSI_CPU_SOME] = {GT_CG, GC_PSI_CPU_SOME},
    [A_PSI_CPU_FULL] = {GT_CG, GC_PSI_CPU_FULL},
    [A_PSI_MEM_SOME] = {GT_CG, GC_PSI_MEM_SOME},
    [A_PSI_MEM_FULL] = {GT_CG, GC_PSI_MEM_FULL},
    [A_PSI_IO_SOME] = {GT_CG, GC_PSI_IO_SOME},
    [A_PSI_IO_FULL] = {GT_CG, GC_PSI_IO_FULL},
    [A_OOM] = {GT_MEM, GM_OOM},
    [A_OOM_KILL] = {GT_MEM, GM_OOM_KILL},
    [A_MAX_EVENTS] = {GT_MEM, GM_MAX_EVENTS},
    [A_HIGH_EVENTS] = {GT_MEM, GM_HIGH_EVENTS},
    [A_FAILCNT] = {GT_MEM, GM_FAILCNT},
};

typedef struct {
    char *key, *value;
} kv_t;

typedef struct {
    js_model_cfg_t cfg;
    /* the source tables read, bound by name against the layout `bound` (sample_bind) */
    const js_table_t *const *bound;
    js_bind_t t[GT__MAX];
    int cc[GC__MAX], mc[GM__MAX], ic[GI__MAX];
    bool seen;     /* cgroup rows */
    bool inv_seen; /* the source's inventory */
    bool created;
    bool whole;      /* the cgroup held only the job from its start (cgroup.whole): counted from zero too */
    bool peak_reset; /* the source reset the kernel's peak for its own descriptor (v2 memory.peak, 6.12+) */
    double
        peak_first; /* the kernel's peak at the first sample (a watched cgroup's counts from its creation) */
    char *path, *version;
    kv_t *files; /* file.TABLE.COLUMN inventory rows */
    size_t nfiles;
    double alloc_cores, alloc_mem;
    char *cores_bound, *mem_bound;
    kv_t *bounds; /* allocation.bound.* rows */
    size_t nbounds;
    acc_t acc[A__MAX];
    io_dev_t *io;
    size_t nio;
    /* levels */
    double peak_kernel, current_max, anon_max, file_max, shmem_max, swap_max, pids_max, memsw_peak;
    double max_cores;
    double tree_cpu_s, tree_rss_max, tree_pss_max; /* the tree's CPU; its RSS sum and PSS sum peaks */
    int64_t t_first, t_last, t_prev;
    bool have_t;
    double row[V__MAX]; /* the last sample's view row, NAN missing */
    char peak_method[256];
} cgroup_part_t;

/* ---- helpers ---- */

static void acc_reset(acc_t *a)
{
    memset(a, 0, sizeof(*a));
}

/* acc_feed: follow counter `v` (of `width` bits) at time t. `from_zero`: its first value is an increase
 * already (a cgroup made for the run). *ret_rate_delta gets the increase over the interval since the previous
 * sample when both ends are present, else NAN. */
static void acc_feed(acc_t *a, const js_value_t *v, unsigned width, bool from_zero, int64_t t, int64_t t_prev,
                     double *ret_rate_delta)
{
    if (ret_rate_delta)
        *ret_rate_delta = NAN;
    if (!v || !v->present)
        return;
    if (!a->have) {
        a->have = true;
        a->cum = from_zero ? (double)(uint64_t)v->i : 0;
    } else {
        uint64_t d;
        if (counter_delta(&a->last, v, width, &d) == 0) {
            a->cum += (double)d;
            if (ret_rate_delta && a->t_last == t_prev)
                *ret_rate_delta = (double)d;
        }
    }
    a->last = *v;
    a->t_last = t;
}

static double acc_total(const acc_t *a)
{
    return a->have ? a->cum : NAN;
}

/* cpu_split: the user and system parts of the precise usage total, in seconds. A cgroup's user/system
 * counters are tick-sampled (v1 cpuacct.usage_user/_sys and cpuacct.stat) and drift from the precise
 * cpuacct.usage under load (12% seen on a loaded 2-CPU VM); as the kernel does for a process
 * (cputime_adjust), the tick split is scaled to the precise total, so user + system = total. */
static void cpu_split(const cgroup_part_t *p, double *ret_user, double *ret_sys)
{
    double total = acc_total(&p->acc[A_USAGE]) / 1e9, tck = (double)p->cfg.clk_tck;
    double u =
        p->acc[A_USER].have ? acc_total(&p->acc[A_USER]) / 1e9 : acc_total(&p->acc[A_USER_TICKS]) / tck;
    double s =
        p->acc[A_SYSTEM].have ? acc_total(&p->acc[A_SYSTEM]) / 1e9 : acc_total(&p->acc[A_SYSTEM_TICKS]) / tck;
    if (!isnan(total) && !isnan(u) && !isnan(s) && u + s > 0) {
        u = total * u / (u + s);
        s = total - u;
    }
    *ret_user = u;
    *ret_sys = s;
}

static void max_into(double *m, const js_value_t *v)
{
    if (v && v->present && (isnan(*m) || (double)v->i > *m))
        *m = (double)v->i;
}

static double val_or_nan(const js_value_t *row, int col)
{
    return row && row[col].present ? (double)row[col].i : NAN;
}

static const js_value_t *first_row(const js_sample_t *s, const js_table_t *t)
{
    const js_rows_t *r = sample_rows(s, t);
    return r && r->nrows ? rows_row(r, 0) : NULL;
}

/* bind: the cgroup source's tables and columns in the layout of `s`, once per layout. */
static void bind(cgroup_part_t *p, const js_sample_t *s)
{
    if (p->bound == s->tables)
        return;
    p->t[GT_CG] = (js_bind_t){"cgroup", cg_names, GC__MAX, p->cc, -1};
    p->t[GT_MEM] = (js_bind_t){"cgroup_memory", mem_names, GM__MAX, p->mc, -1};
    p->t[GT_IO] = (js_bind_t){"cgroup_io", io_names, GI__MAX, p->ic, -1};
    sample_bind(s, p->t, GT__MAX);
    p->bound = s->tables;
}

/* bound_first: the first row of bound table `k` in `s`, or NULL. */
static const js_value_t *bound_first(const cgroup_part_t *p, const js_sample_t *s, int k)
{
    const js_rows_t *r = sample_bound(s, &p->t[k]);
    return r && r->nrows ? rows_row(r, 0) : NULL;
}

static int kv_push(kv_t **v, size_t *n, const char *key, const char *value)
{
    kv_t *nv = realloc(*v, (*n + 1) * sizeof(**v));
    if (!nv)
        return -ENOMEM;
    *v = nv;
    nv[*n].key = strdup(key);
    nv[*n].value = strdup(value);
    if (!nv[*n].key || !nv[*n].value) {
        free(nv[*n].key);
        free(nv[*n].value);
        return -ENOMEM;
    }
    (*n)++;
    return 0;
}

static void kv_free(kv_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].key);
        free(v[i].value);
    }
    free(v);
}

static int set_str(char **dst, const char *s)
{
    free(*dst);
    *dst = strdup(s);
    return *dst ? 0 : -ENOMEM;
}

static double parse_num(const char *s)
{
    char *end;
    double d = strtod(s, &end);
    return end != s ? d : NAN;
}

/* read_inventory: the cgroup source's inventory rows of this sample. */
static int read_inventory(cgroup_part_t *p, const js_sample_t *s)
{
    const js_rows_t *inv = sample_rows(s, &table_inventory);
    if (!inv)
        return 0;
    for (size_t i = 0; i < inv->nrows; i++) {
        const js_value_t *r = rows_row(inv, i);
        if (!r[INV_SOURCE].present || !r[INV_KEY].present || !r[INV_VALUE].present ||
            strcmp(rows_str(inv, &r[INV_SOURCE]), "cgroup") != 0)
            continue;
        const char *k = rows_str(inv, &r[INV_KEY]), *v = rows_str(inv, &r[INV_VALUE]);
        int rc = 0;
        p->inv_seen = true;
        if (strcmp(k, "cgroup.path") == 0)
            rc = set_str(&p->path, v);
        else if (strcmp(k, "cgroup.version") == 0)
            rc = set_str(&p->version, v);
        else if (strcmp(k, "cgroup.created") == 0)
            p->created = strcmp(v, "1") == 0;
        else if (strcmp(k, "cgroup.whole") == 0)
            p->whole = strcmp(v, "1") == 0;
        else if (strcmp(k, "cgroup.peak_reset") == 0)
            p->peak_reset = strcmp(v, "1") == 0;
        else if (strncmp(k, "file.", 5) == 0)
            rc = kv_push(&p->files, &p->nfiles, k + 5, v);
        else if (strcmp(k, "allocation.cores") == 0)
            p->alloc_cores = parse_num(v);
        else if (strcmp(k, "allocation.cores_bound") == 0)
            rc = set_str(&p->cores_bound, v);
        else if (strcmp(k, "allocation.memory_limit_bytes") == 0)
            p->alloc_mem = parse_num(v);
        else if (strcmp(k, "allocation.memory_limit_bound") == 0)
            rc = set_str(&p->mem_bound, v);
        else if (strncmp(k, "allocation.bound.", 17) == 0)
            rc = kv_push(&p->bounds, &p->nbounds, k + 17, v);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* file_of: the file behind a figure ("cgroup_memory.peak_bytes"), basename only; NULL if unknown. */
static const char *file_of(const cgroup_part_t *p, const char *figure)
{
    for (size_t i = 0; i < p->nfiles; i++)
        if (strcmp(p->files[i].key, figure) == 0) {
            const char *slash = strrchr(p->files[i].value, '/');
            return slash ? slash + 1 : p->files[i].value;
        }
    return NULL;
}

static io_dev_t *io_dev(cgroup_part_t *p, int64_t major, int64_t minor)
{
    for (size_t i = 0; i < p->nio; i++)
        if (p->io[i].major == major && p->io[i].minor == minor)
            return &p->io[i];
    io_dev_t *n = realloc(p->io, (p->nio + 1) * sizeof(*n));
    if (!n)
        return NULL;
    p->io = n;
    io_dev_t *d = &n[p->nio++];
    memset(d, 0, sizeof(*d));
    d->major = major;
    d->minor = minor;
    acc_reset(&d->rd);
    acc_reset(&d->wr);
    return d;
}

/* ---- the part ---- */

static int cg_init(const js_model_cfg_t *cfg, void **ret_state)
{
    cgroup_part_t *p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    p->cfg = *cfg;
    if (p->cfg.clk_tck <= 0)
        p->cfg.clk_tck = 100;
    p->alloc_cores = p->alloc_mem = NAN;
    p->peak_kernel = p->current_max = p->anon_max = p->file_max = p->shmem_max = p->swap_max = NAN;
    p->pids_max = p->memsw_peak = p->max_cores = p->tree_cpu_s = p->tree_rss_max = p->tree_pss_max = NAN;
    p->peak_first = NAN;
    for (int v = 0; v < V__MAX; v++)
        p->row[v] = NAN;
    *ret_state = p;
    return 0;
}

static void cg_fini(void *state)
{
    cgroup_part_t *p = state;
    if (!p)
        return;
    free(p->path);
    free(p->version);
    free(p->cores_bound);
    free(p->mem_bound);
    kv_free(p->files, p->nfiles);
    kv_free(p->bounds, p->nbounds);
    free(p->io);
    free(p);
}

/* fraction: Δ of a microsecond PSI counter over dt_ns. */
static double psi_fraction(double d_us, int64_t dt_ns)
{
    return isnan(d_us) || dt_ns <= 0 ? NAN : d_us * 1e3 / (double)dt_ns;
}

static int cg_feed(void *state, const js_feed_t *f)
{
    cgroup_part_t *p = state;
    int rc = read_inventory(p, f->s);
    if (rc < 0)
        return rc;
    bind(p, f->s);

    const js_value_t *smp = first_row(f->s, &table_samples);
    if (!smp || !smp[SAMPLES_T_MONO].present)
        return 0;
    int64_t t = smp[SAMPLES_T_MONO].i;
    int64_t t_prev = p->have_t ? p->t_prev : INT64_MIN;
    int64_t dt = p->have_t ? t - p->t_prev : 0;
    if (!p->have_t) {
        p->t_first = t;
        p->have_t = true;
    }
    p->t_prev = p->t_last = t;

    const js_tree_point_t *pt = model_point(f->m);
    if (pt) {
        if (!isnan(pt->cpu_s))
            p->tree_cpu_s = pt->cpu_s;
        if (!isnan(pt->rss) && (isnan(p->tree_rss_max) || pt->rss > p->tree_rss_max))
            p->tree_rss_max = pt->rss;
        if (pt->pss_read && (isnan(p->tree_pss_max) || pt->pss > p->tree_pss_max))
            p->tree_pss_max = pt->pss; /* the summary's headline without a cgroup: no page counted twice */
    }

    const js_value_t *c = bound_first(p, f->s, GT_CG), *m = bound_first(p, f->s, GT_MEM);
    const int *cc = p->cc, *mc = p->mc;
    for (int v = 0; v < V__MAX; v++)
        p->row[v] = NAN;
    if (!c && !m)
        return 0;
    p->seen = true;

    double d[A__MAX] = {0}; /* each set by acc_feed (zeroed for gcc -fanalyzer, which cannot tell) */
    for (int a = 0; a < A__MAX; a++) {
        const js_value_t *row = acc_cols[a].t == GT_CG ? c : m;
        int col = acc_cols[a].t == GT_CG ? cc[acc_cols[a].col] : mc[acc_cols[a].col];
        unsigned width = row ? f->s->tables[p->t[acc_cols[a].t].table]->cols[col].width : 64;
        acc_feed(&p->acc[a], row ? &row[col] : NULL, width, p->created || p->whole, t, t_prev, &d[a]);
    }

    /* CPU */
    p->row[V_CPU_S] = acc_total(&p->acc[A_USAGE]) / 1e9;
    cpu_split(p, &p->row[V_USER_S], &p->row[V_SYSTEM_S]);
    if (dt > 0 && !isnan(d[A_USAGE])) {
        p->row[V_CPU_CORES] = d[A_USAGE] / (double)dt;
        /* the maximum over full intervals only (a closing sample may follow the last one by a few ms) */
        if (!model_interval_short(&p->cfg, dt) && (isnan(p->max_cores) || p->row[V_CPU_CORES] > p->max_cores))
            p->max_cores = p->row[V_CPU_CORES];
    }
    if (!isnan(d[A_PERIODS]) && !isnan(d[A_THROTTLED]) && d[A_PERIODS] > 0)
        p->row[V_THROTTLED_FRACTION] = d[A_THROTTLED] / d[A_PERIODS];
    p->row[V_THROTTLED_S] = acc_total(&p->acc[A_THROTTLED_NS]) / 1e9;
    p->row[V_PIDS] = val_or_nan(c, cc[GC_PIDS]);
    max_into(&p->pids_max, c ? &c[cc[GC_PIDS]] : NULL);
    max_into(&p->pids_max, c ? &c[cc[GC_PIDS_PEAK]] : NULL);
    p->row[V_PSI_CPU_SOME] = psi_fraction(d[A_PSI_CPU_SOME], dt);
    p->row[V_PSI_MEMORY_SOME] = psi_fraction(d[A_PSI_MEM_SOME], dt);
    p->row[V_PSI_MEMORY_FULL] = psi_fraction(d[A_PSI_MEM_FULL], dt);
    p->row[V_PSI_IO_SOME] = psi_fraction(d[A_PSI_IO_SOME], dt);
    p->row[V_PSI_IO_FULL] = psi_fraction(d[A_PSI_IO_FULL], dt);

    /* memory */
    p->row[V_MEM_CURRENT] = val_or_nan(m, mc[GM_CURRENT]);
    p->row[V_MEM_PEAK] = val_or_nan(m, mc[GM_PEAK]);
    p->row[V_ANON] = val_or_nan(m, mc[GM_ANON]);
    p->row[V_FILE] = val_or_nan(m, mc[GM_FILE]);
    p->row[V_SWAP] = val_or_nan(m, mc[GM_SWAP]);
    if (m) {
        if (isnan(p->peak_first) && m[mc[GM_PEAK]].present)
            p->peak_first = (double)m[mc[GM_PEAK]].i;
        max_into(&p->peak_kernel, &m[mc[GM_PEAK]]);
        max_into(&p->current_max, &m[mc[GM_CURRENT]]);
        max_into(&p->anon_max, &m[mc[GM_ANON]]);
        max_into(&p->file_max, &m[mc[GM_FILE]]);
        max_into(&p->shmem_max, &m[mc[GM_SHMEM]]);
        max_into(&p->swap_max, &m[mc[GM_SWAP]]);
        max_into(&p->swap_max, &m[mc[GM_SWAP_PEAK]]);
        max_into(&p->memsw_peak, &m[mc[GM_MEMSW_PEAK]]);
    }
    p->row[V_OOM_KILLS] = acc_total(&p->acc[A_OOM_KILL]);

    /* I/O: every device's increase */
    const js_rows_t *io = sample_bound(f->s, &p->t[GT_IO]);
    const int *ic = p->ic;
    double rbps = NAN, wbps = NAN;
    for (size_t i = 0; io && i < io->nrows; i++) {
        const js_value_t *r = rows_row(io, i);
        io_dev_t *dev = io_dev(p, r[ic[GI_MAJOR]].i, r[ic[GI_MINOR]].i);
        if (!dev)
            return -ENOMEM;
        double dr, dw;
        acc_feed(&dev->rd, &r[ic[GI_READ]], 64, p->created || p->whole, t, t_prev, &dr);
        acc_feed(&dev->wr, &r[ic[GI_WRITE]], 64, p->created || p->whole, t, t_prev, &dw);
        if (dt > 0 && !isnan(dr))
            rbps = (isnan(rbps) ? 0 : rbps) + dr * 1e9 / (double)dt;
        if (dt > 0 && !isnan(dw))
            wbps = (isnan(wbps) ? 0 : wbps) + dw * 1e9 / (double)dt;
    }
    double rsum = NAN, wsum = NAN;
    for (size_t i = 0; i < p->nio; i++) {
        if (p->io[i].rd.have)
            rsum = (isnan(rsum) ? 0 : rsum) + p->io[i].rd.cum;
        if (p->io[i].wr.have)
            wsum = (isnan(wsum) ? 0 : wsum) + p->io[i].wr.cum;
    }
    p->row[V_IO_READ] = rsum;
    p->row[V_IO_WRITE] = wsum;
    p->row[V_IO_READ_BPS] = rbps;
    p->row[V_IO_WRITE_BPS] = wbps;
    return 0;
}

static const js_table_t *cg_view_table(void *state, size_t i)
{
    (void)state;
    return i == 0 ? &view_cgroup : NULL;
}

static int cg_view_fill(void *state, size_t i, js_rows_t *out)
{
    cgroup_part_t *p = state;
    (void)i;
    if (!p->seen)
        return 0;
    js_value_t *v = rows_add(out);
    if (!v)
        return -ENOMEM;
    for (int c = 0; c < V__MAX; c++) {
        if (isnan(p->row[c]))
            continue;
        if (view_cols[c].type == JS_INT &&
            !(p->row[c] >= -9223372036854775808.0 && p->row[c] < 9223372036854775808.0))
            continue; /* beyond an int64: an edited recording */
        if (view_cols[c].type == JS_INT)
            val_int(&v[c], (int64_t)p->row[c]);
        else
            val_real(&v[c], p->row[c]);
    }
    return 0;
}

/* ---- summary ---- */

static double wall_s(const cgroup_part_t *p)
{
    if (!p->have_t)
        return NAN;
    int64_t start =
        p->cfg.start_mono_ns > 0 && p->cfg.start_mono_ns <= p->t_first ? p->cfg.start_mono_ns : p->t_first;
    return (double)(p->t_last - start) / 1e9;
}

/* peak_covers_window: whether the kernel's high-water mark is the monitoring window's. It counts from the
 * cgroup's creation: so it is for a cgroup made for the run or watched whole from its start, for a v2
 * memory.peak reset for the source's own descriptor (Linux 6.12+; other readers keep theirs), and for any
 * mark that rose during the window (its new height was reached in it). A v1 memory.max_usage_in_bytes is
 * never reset by jobscope: it is one mark shared with every other reader (SLURM's accounting among them). */
static bool peak_covers_window(const cgroup_part_t *p)
{
    return !isnan(p->peak_kernel) && (p->created || p->whole || p->peak_reset ||
                                      (!isnan(p->peak_first) && p->peak_kernel > p->peak_first));
}

/* The peak the memory figures rest on, and how it was obtained: the kernel's mark where it covers the window,
 * else the largest usage sampled, with the mark since the cgroup's creation named beside it. */
static double mem_peak(cgroup_part_t *p, const char **ret_method)
{
    const char *file = file_of(p, "cgroup_memory.peak_bytes");
    if (peak_covers_window(p)) {
        int n =
            snprintf(p->peak_method, sizeof(p->peak_method),
                     "kernel: %s, the high-water mark of the whole cgroup tree (page cache and kernel memory "
                     "included)%s",
                     file ? file : "memory peak",
                     p->created || p->whole ? ""
                     : p->peak_reset        ? ", reset for this watch (its own descriptor)"
                                            : ", reached during this watch");
        if (n < 0)
            p->peak_method[0] = '\0';
        *ret_method = p->peak_method;
        return p->peak_kernel;
    }
    if (!isnan(p->peak_kernel) && !isnan(p->current_max)) {
        char b[32];
        int n = snprintf(
            p->peak_method, sizeof(p->peak_method),
            "sampled: largest cgroup memory usage at a sample; the kernel's mark (%s, %s) counts since "
            "the cgroup was created, before this watch, and cannot be reset for it",
            file ? file : "memory peak", fmt_bytes(b, sizeof(b), p->peak_kernel));
        if (n < 0)
            p->peak_method[0] = '\0';
        *ret_method = p->peak_method;
        return p->current_max;
    }
    if (!isnan(p->current_max)) {
        *ret_method = "sampled: largest cgroup memory usage at a sample (no kernel high-water mark here)";
        return p->current_max;
    }
    *ret_method = NULL;
    return NAN;
}

/* The CPU and memory figures efficiency rests on: the cgroup's where known, else the tree's. */
static void eff_basis(cgroup_part_t *p, double *cpu_s, const char **cpu_basis, double *peak,
                      const char **mem_basis)
{
    const char *unused;
    double cg_cpu = p->seen ? p->row[V_CPU_S] : NAN;
    if (p->seen && isnan(cg_cpu))
        cg_cpu = acc_total(&p->acc[A_USAGE]) / 1e9;
    *cpu_s = !isnan(cg_cpu) ? cg_cpu : p->tree_cpu_s;
    *cpu_basis = !isnan(cg_cpu) ? "cgroup" : "tree";
    double cg_peak = mem_peak(p, &unused);
    *peak = !isnan(cg_peak) ? cg_peak : !isnan(p->tree_pss_max) ? p->tree_pss_max : p->tree_rss_max;
    *mem_basis = !isnan(cg_peak) ? "cgroup" : !isnan(p->tree_pss_max) ? "tree's PSS sum" : "tree's RSS sum";
}

static void cg_summary(void *state, js_figure_t *r)
{
    cgroup_part_t *p = state;
    double wall = wall_s(p);
    if (p->seen) {
        const char *method;
        double peak = mem_peak(p, &method);
        const char *cpu_file = file_of(p, "cgroup.usage_ns");
        fig_put_text(r, "cgroup.path", p->path);
        fig_put_text(r, "cgroup.version", p->version);
        fig_put_bool(r, "cgroup.created", p->created);
        fig_put_object(r, "cgroup.files");
        for (size_t i = 0; i < p->nfiles; i++) {
            fig_name(r, "cgroup.files", p->files[i].key);
            fig_put_text(r, "cgroup.files.{}", p->files[i].value);
        }
        double total = acc_total(&p->acc[A_USAGE]) / 1e9;
        fig_how(fig_exact(fig_put_num(r, "cgroup.cpu.total_s", "s", total), true), "method",
                cpu_file ? (strcmp(cpu_file, "cpu.stat") == 0
                                ? "kernel: cpu.stat usage_usec of every task that ran in the cgroup"
                                : "kernel: cpuacct.usage of every task that ran in the cgroup")
                         : NULL);
        double us, ss;
        cpu_split(p, &us, &ss);
        fig_put_num(r, "cgroup.cpu.user_s", "s", us);
        fig_put_num(r, "cgroup.cpu.system_s", "s", ss);
        fig_put_num(r, "cgroup.cpu.mean_cores", "cores", wall > 0 ? total / wall : NAN);
        fig_put_num(r, "cgroup.cpu.max_cores", "cores", p->max_cores);
        fig_put_num(r, "cgroup.cpu.tree_total_s", "s", p->tree_cpu_s);
        fig_put_num(r, "cgroup.throttling.periods", "count", acc_total(&p->acc[A_PERIODS]));
        fig_put_num(r, "cgroup.throttling.throttled_periods", "count", acc_total(&p->acc[A_THROTTLED]));
        fig_put_num(r, "cgroup.throttling.throttled_s", "s", acc_total(&p->acc[A_THROTTLED_NS]) / 1e9);
        fig_how(fig_put_num(r, "cgroup.memory.peak_kernel_tree_bytes", "bytes", peak),
                "peak_kernel_tree_method", method);
        fig_put_num(r, "cgroup.memory.peak_sampled_bytes", "bytes", p->current_max);
        fig_put_num(r, "cgroup.memory.peak_since_created_bytes", "bytes",
                    peak_covers_window(p) ? NAN : p->peak_kernel);
        fig_put_num(r, "cgroup.memory.anon_peak_bytes", "bytes", p->anon_max);
        fig_put_num(r, "cgroup.memory.file_peak_bytes", "bytes", p->file_max);
        fig_put_num(r, "cgroup.memory.shmem_peak_bytes", "bytes", p->shmem_max);
        fig_put_num(r, "cgroup.memory.swap_peak_bytes", "bytes", p->swap_max);
        fig_put_num(r, "cgroup.memory.memsw_peak_bytes", "bytes", p->memsw_peak);
        fig_put_num(r, "cgroup.memory.limit_bytes", "bytes", p->alloc_mem);
        fig_put_text(r, "cgroup.memory.limit_bound", p->mem_bound);
        fig_put_num(r, "cgroup.memory.peak_fraction_of_limit", "fraction",
                    p->alloc_mem > 0 ? peak / p->alloc_mem : NAN);
        fig_put_num(r, "cgroup.memory.oom_kills", "count", acc_total(&p->acc[A_OOM_KILL]));
        fig_put_num(r, "cgroup.memory.oom_events", "count", acc_total(&p->acc[A_OOM]));
        fig_put_num(r, "cgroup.memory.max_events", "count", acc_total(&p->acc[A_MAX_EVENTS]));
        fig_put_num(r, "cgroup.memory.failcnt", "count", acc_total(&p->acc[A_FAILCNT]));
        double rs = NAN, ws = NAN;
        for (size_t i = 0; i < p->nio; i++) {
            if (p->io[i].rd.have)
                rs = (isnan(rs) ? 0 : rs) + p->io[i].rd.cum;
            if (p->io[i].wr.have)
                ws = (isnan(ws) ? 0 : ws) + p->io[i].wr.cum;
        }
        fig_put_num(r, "cgroup.io.read_bytes", "bytes", rs);
        fig_put_num(r, "cgroup.io.write_bytes", "bytes", ws);
        fig_put_num(r, "cgroup.pids_max", "count", p->pids_max);
        fig_put_num(r, "cgroup.pressure.cpu_some_s", "s", acc_total(&p->acc[A_PSI_CPU_SOME]) / 1e6);
        fig_put_num(r, "cgroup.pressure.memory_some_s", "s", acc_total(&p->acc[A_PSI_MEM_SOME]) / 1e6);
        fig_put_num(r, "cgroup.pressure.memory_full_s", "s", acc_total(&p->acc[A_PSI_MEM_FULL]) / 1e6);
        fig_put_num(r, "cgroup.pressure.io_some_s", "s", acc_total(&p->acc[A_PSI_IO_SOME]) / 1e6);
        fig_put_num(r, "cgroup.pressure.io_full_s", "s", acc_total(&p->acc[A_PSI_IO_FULL]) / 1e6);
    }
    if (p->inv_seen && p->cfg.scope != JS_SCOPE_NODE) { /* a node has no allocation to be efficient against */
        double cpu, peak;
        const char *cb, *mb;
        eff_basis(p, &cpu, &cb, &peak, &mb);
        fig_put_num(r, "allocation.cores", "cores", p->alloc_cores);
        fig_put_text(r, "allocation.cores_bound", p->cores_bound);
        fig_put_num(r, "allocation.memory_limit_bytes", "bytes", p->alloc_mem);
        fig_put_text(r, "allocation.memory_limit_bound", p->mem_bound);
        fig_put_object(r, "allocation.bounds");
        for (size_t i = 0; i < p->nbounds; i++) {
            fig_name(r, "allocation.bounds", p->bounds[i].key);
            fig_put_num(r, "allocation.bounds.{}", "cores", parse_num(p->bounds[i].value));
        }
        fig_how(fig_put_num(r, "allocation.cpu_efficiency", "fraction",
                            p->alloc_cores > 0 && wall > 0 ? cpu / (p->alloc_cores * wall) : NAN),
                "cpu_efficiency_basis", cb);
        fig_how(fig_put_num(r, "allocation.memory_efficiency", "fraction",
                            p->alloc_mem > 0 ? peak / p->alloc_mem : NAN),
                "memory_efficiency_basis", mb);
        fig_put_num(r, "allocation.wall_s", "s", wall);
        fig_put_num(r, "allocation.memory_peak_bytes", "bytes", peak);
    }
}

/* file_named: the basename of the file behind figure `key` of the summary's cgroup.files, or NULL. */
static const char *file_named(const js_figure_t *r, const char *key)
{
    const js_figure_t *files = fig_get(r, "cgroup.files");
    for (size_t i = 0; i < fig_count(files); i++) {
        const js_figure_t *f = fig_kid(files, i);
        if (strcmp(f->name, key) == 0 && f->present && f->kind == FIG_TEXT) {
            const char *slash = strrchr(f->text, '/');
            return slash ? slash + 1 : f->text;
        }
    }
    return NULL;
}

static int cg_text_cgroup(const js_figure_t *r, js_buf_t *b)
{
    char a[64], c[64], d[64], e[64], g[64];
    const char *path = fig_text(r, "cgroup.path"), *version = fig_text(r, "cgroup.version");
    int err = buf_printf(b, "  cgroup           %s (%s%s)\n", path ? path : "?", version ? version : "?",
                         fig_bool(r, "cgroup.created") == 1 ? ", made for this run" : "");
    const char *cpu_file = file_named(r, "cgroup.usage_ns"),
               *peak_file = file_named(r, "cgroup_memory.peak_bytes");
    err |= buf_printf(b, "  cgroup CPU       %s s (user %s, system %s) from %s; process tree %s s\n",
                      fig_fmt(a, sizeof(a), "%.3f", fig_num(r, "cgroup.cpu.total_s")),
                      fig_fmt(c, sizeof(c), "%.3f", fig_num(r, "cgroup.cpu.user_s")),
                      fig_fmt(d, sizeof(d), "%.3f", fig_num(r, "cgroup.cpu.system_s")),
                      cpu_file ? cpu_file : "cgroup",
                      fig_fmt(e, sizeof(e), "%.3f", fig_num(r, "cgroup.cpu.tree_total_s")));
    const js_figure_t *peak = fig_get(r, "cgroup.memory.peak_kernel_tree_bytes");
    bool covers = peak && peak->method && strncmp(peak->method, "kernel:", 7) == 0; /* peak_covers_window */
    err |= buf_printf(b, "  cgroup memory    peak %s (%s); anon %s, page cache %s at most (sampled)\n",
                      fmt_bytes(a, sizeof(a), fig_value(peak)),
                      covers ? (peak_file ? peak_file : "kernel high-water") : "sampled",
                      fmt_bytes(c, sizeof(c), fig_num(r, "cgroup.memory.anon_peak_bytes")),
                      fmt_bytes(d, sizeof(d), fig_num(r, "cgroup.memory.file_peak_bytes")));
    double since = fig_num(r, "cgroup.memory.peak_since_created_bytes");
    if (!isnan(since))
        err |= buf_printf(
            b, "  cgroup mark      %s since the cgroup was created (%s: before this watch, not reset)\n",
            fmt_bytes(a, sizeof(a), since), peak_file ? peak_file : "kernel high-water");
    double fc = fig_num(r, "cgroup.memory.failcnt");
    err |= buf_printf(b, "  cgroup events    %s OOM kills%s%s; throttled %s of %s quota periods (%s s)\n",
                      fig_fmt(a, sizeof(a), "%.0f", fig_num(r, "cgroup.memory.oom_kills")),
                      isnan(fc) ? "" : ", failcnt ", isnan(fc) ? "" : fig_fmt(c, sizeof(c), "%.0f", fc),
                      fig_fmt(d, sizeof(d), "%.0f", fig_num(r, "cgroup.throttling.throttled_periods")),
                      fig_fmt(e, sizeof(e), "%.0f", fig_num(r, "cgroup.throttling.periods")),
                      fig_fmt(g, sizeof(g), "%.3f", fig_num(r, "cgroup.throttling.throttled_s")));
    return err;
}

static int cg_text_allocation(const js_figure_t *r, js_buf_t *b)
{
    char a[64], c[64], d[64];
    int err = 0;
    double cores = fig_num(r, "allocation.cores"), wall = fig_num(r, "allocation.wall_s");
    const js_figure_t *ce = fig_get(r, "allocation.cpu_efficiency"),
                      *me = fig_get(r, "allocation.memory_efficiency");
    /* the bound by the name the summary's cores line gives the same count (affinity and cpuset agree) */
    const char *top_bound = fig_text(r, "cpu.cores_bound"), *own = fig_text(r, "allocation.cores_bound");
    const char *bound = top_bound && fig_num(r, "cpu.cores_available") == cores ? top_bound
                        : own                                                   ? own
                                                                                : "none";
    if (isnan(fig_value(ce)))
        err |= buf_printf(b, "  CPU efficiency   n/a (%s)\n",
                          !(cores > 0) ? "no allocation known" : "no wall time");
    else
        err |=
            buf_printf(b,
                       "  CPU efficiency   %.1f%% of %.2f core-s (%g cores x %.3f s wall; bound: %s; "
                       "CPU from the %s)\n",
                       fig_value(ce) * 100, cores * wall, cores, wall, bound, ce->method ? ce->method : "?");
    double limit = fig_num(r, "allocation.memory_limit_bytes"),
           peak = fig_num(r, "allocation.memory_peak_bytes");
    const char *mb = me && me->method ? me->method : "?",
               *mbound = fig_text(r, "allocation.memory_limit_bound");
    if (limit > 0)
        err |= buf_printf(b, "  mem efficiency   %s%% of %s (bound: %s; peak %s from the %s)\n",
                          fig_fmt(a, sizeof(a), "%.1f", peak / limit * 100), fmt_bytes(c, sizeof(c), limit),
                          mbound ? mbound : "none", fmt_bytes(d, sizeof(d), peak), mb);
    else
        err |= buf_printf(b, "  mem efficiency   n/a: no memory limit (peak %s from the %s)\n",
                          fmt_bytes(d, sizeof(d), peak), mb);
    return err;
}

static int cg_summary_text(const js_figure_t *r, js_buf_t *b)
{
    int err = 0;
    if (fig_get(r, "cgroup.cpu"))
        err |= cg_text_cgroup(r, b);
    if (fig_get(r, "allocation.cores"))
        err |= cg_text_allocation(r, b);
    return err ? -ENOMEM : 0;
}

static void totals_of(cgroup_part_t *p, js_cgroup_totals_t *ret);

/* cg_scope_totals: the cgroup's accounting where the cgroup is the scope's own: made for the run, the
 * watched one, or the watched user's (user-UID.slice) */
static int cg_scope_totals(void *state, js_scope_totals_t *ret)
{
    js_cgroup_totals_t cg;
    cgroup_part_t *p = state;
    memset(ret, 0, sizeof(*ret));
    if (!p || !p->seen || !(p->created || p->cfg.scope == JS_SCOPE_CGROUP || p->cfg.scope == JS_SCOPE_USER))
        return -ENOENT;
    totals_of(p, &cg);
    *ret = (js_scope_totals_t){.present = true,
                               .cpu_s = cg.cpu_s,
                               .user_s = cg.user_s,
                               .system_s = cg.system_s,
                               .cpu_file = cg.cpu_file,
                               .peak_bytes = cg.peak_kernel_tree_bytes,
                               .peak_method = cg.peak_method,
                               .current_bytes = cg.current_bytes};
    return 0;
}

const js_model_part_t part_cgroup = {
    .name = "cgroup",
    .init = cg_init,
    .feed = cg_feed,
    .view_table = cg_view_table,
    .view_fill = cg_view_fill,
    .summary = cg_summary,
    .summary_text = cg_summary_text,
    .scope_totals = cg_scope_totals,
    .fini = cg_fini,
};

static void totals_of(cgroup_part_t *p, js_cgroup_totals_t *ret)
{
    memset(ret, 0, sizeof(*ret));
    ret->cpu_s = ret->user_s = ret->system_s = ret->peak_kernel_tree_bytes = ret->peak_since_created_bytes =
        NAN;
    ret->anon_peak_bytes = ret->file_peak_bytes = ret->swap_peak_bytes = ret->oom_kills = ret->failcnt = NAN;
    ret->cores = ret->memory_limit_bytes = ret->current_bytes = NAN;
    ret->present = p->seen;
    ret->created = p->created;
    ret->path = p->path;
    ret->version = p->version;
    ret->cpu_s = acc_total(&p->acc[A_USAGE]) / 1e9;
    cpu_split(p, &ret->user_s, &ret->system_s);
    ret->cpu_file = file_of(p, "cgroup.usage_ns");
    if (!p->seen)
        ret->peak_kernel_tree_bytes = NAN;
    else if (peak_covers_window(p))
        ret->peak_kernel_tree_bytes = mem_peak(p, &ret->peak_method);
    else if (!isnan(p->peak_kernel))
        ret->peak_since_created_bytes = p->peak_kernel;
    ret->anon_peak_bytes = p->anon_max;
    ret->file_peak_bytes = p->file_max;
    ret->swap_peak_bytes = p->swap_max;
    ret->oom_kills = acc_total(&p->acc[A_OOM_KILL]);
    ret->failcnt = acc_total(&p->acc[A_FAILCNT]);
    ret->cores = p->alloc_cores;
    ret->cores_bound = p->cores_bound;
    ret->memory_limit_bytes = p->alloc_mem;
    ret->memory_limit_bound = p->mem_bound;
    ret->current_bytes = p->seen ? p->row[V_MEM_CURRENT] : NAN;
}

int part_cgroup_totals(const js_model_t *m, js_cgroup_totals_t *ret)
{
    memset(ret, 0, sizeof(*ret));
    ret->cpu_s = ret->user_s = ret->system_s = ret->peak_kernel_tree_bytes = ret->peak_since_created_bytes =
        NAN;
    ret->anon_peak_bytes = ret->file_peak_bytes = ret->swap_peak_bytes = ret->oom_kills = ret->failcnt = NAN;
    ret->cores = ret->memory_limit_bytes = ret->current_bytes = NAN;
    cgroup_part_t *p = model_part_state(m, &part_cgroup);
    if (!p)
        return -ENOENT;
    totals_of(p, ret); /* the same, from the part's state */
    return 0;
}
