/* SPDX-License-Identifier: MIT
 *
 * System-scope model (see model_system.h). The first feed fixes the layout: the aggregate and per-CPU
 * utilisation columns, a fixed block of host columns, then two columns per interface and per disk, each
 * entity remembered by its label (CPU number, interface or device name). Every feed then looks each entity up
 * in the new sample (at its previous row index first, so the usual unchanged order costs one comparison),
 * derives the cells from it and the copy of the previous sample's values, and keeps the new values for the
 * next feed. Only the first feed allocates.
 *
 * CPU utilisation: busy = user + nice + system + irq + softirq + steal (guest and guest_nice are already
 * inside user and nice), idle = idle + iowait, fraction = Δbusy / (Δbusy + Δidle). Fields a kernel lacks
 * (steal before 2.6.11, ...) are left out of both sums, but only if absent from both samples. Summing idle
 * and iowait before the delta also absorbs the kernel's iowait going backwards while idle goes forward.
 * user_fraction (user + nice) and idle_fraction (idle alone) are shares of the same total, aggregate line
 * only (pytyche's run monitor reports these two).
 */
#include "model/model_system.h"
#include "model/part.h"

#include "model/counter.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DISK_SECTOR_BYTES 512 /* diskstats sectors are 512 bytes whatever the device */

/* The fixed block of columns between the per-CPU and the per-interface ones. */
enum {
    F_IOWAIT,
    F_STEAL,
    F_MEM_TOTAL,
    F_MEM_USED,
    F_MEM_AVAILABLE,
    F_SWAP_USED,
    F_LOAD1,
    F_LOAD5,
    F_LOAD15,
    F_CTXT,
    F_FORKS,
    F_PSI_CPU_SOME,
    F_PSI_MEMORY_SOME,
    F_PSI_MEMORY_FULL,
    F_PSI_IO_SOME,
    F_PSI_IO_FULL,
    F_USER,
    F_IDLE,
    F__MAX
};

static const char *const fixed_names[F__MAX] = {
    [F_IOWAIT] = "iowait_fraction",
    [F_STEAL] = "steal_fraction",
    [F_MEM_TOTAL] = "mem_total_bytes",
    [F_MEM_USED] = "mem_used_bytes",
    [F_MEM_AVAILABLE] = "mem_available_bytes",
    [F_SWAP_USED] = "swap_used_bytes",
    [F_LOAD1] = "load1",
    [F_LOAD5] = "load5",
    [F_LOAD15] = "load15",
    [F_CTXT] = "ctxt_per_s",
    [F_FORKS] = "forks_per_s",
    [F_PSI_CPU_SOME] = "psi_cpu_some_fraction",
    [F_PSI_MEMORY_SOME] = "psi_memory_some_fraction",
    [F_PSI_MEMORY_FULL] = "psi_memory_full_fraction",
    [F_PSI_IO_SOME] = "psi_io_some_fraction",
    [F_PSI_IO_FULL] = "psi_io_full_fraction",
    [F_USER] = "user_fraction",
    [F_IDLE] = "idle_fraction",
};

/* The system source's tables and the columns read of each, bound by name (sample_bind): no source header.
 * Each enum follows its name list. */
enum { KT_CPU, KT_SYSTEM, KT_MEMORY, KT_NET, KT_DISK, KT__MAX };
enum { KC_CPU, KC_USER, KC_NICE, KC_SYSTEM, KC_IDLE, KC_IOWAIT, KC_IRQ, KC_SOFTIRQ, KC_STEAL, KC__MAX };
static const char *const cpu_names[KC__MAX] = {"cpu",          "user_ticks",    "nice_ticks",
                                               "system_ticks", "idle_ticks",    "iowait_ticks",
                                               "irq_ticks",    "softirq_ticks", "steal_ticks"};
enum {
    KS_CTXT,
    KS_FORKS,
    KS_LOAD1,
    KS_LOAD5,
    KS_LOAD15,
    KS_PSI_CPU_SOME,
    KS_PSI_MEMORY_SOME,
    KS_PSI_MEMORY_FULL,
    KS_PSI_IO_SOME,
    KS_PSI_IO_FULL,
    KS__MAX
};
static const char *const system_names[KS__MAX] = {"ctxt_count",
                                                  "forks_count",
                                                  "load1",
                                                  "load5",
                                                  "load15",
                                                  "psi_cpu_some_total_us",
                                                  "psi_memory_some_total_us",
                                                  "psi_memory_full_total_us",
                                                  "psi_io_some_total_us",
                                                  "psi_io_full_total_us"};
enum { KM_TOTAL, KM_AVAILABLE, KM_SWAP_TOTAL, KM_SWAP_FREE, KM__MAX };
static const char *const memory_names[KM__MAX] = {"mem_total_bytes", "mem_available_bytes",
                                                  "swap_total_bytes", "swap_free_bytes"};
enum { KN_IFACE, KN_RX, KN_TX, KN__MAX };
static const char *const net_names[KN__MAX] = {"iface", "rx_bytes", "tx_bytes"};
enum { KD_DEVICE, KD_READ, KD_WRITTEN, KD__MAX };
static const char *const disk_names[KD__MAX] = {"device", "sectors_read", "sectors_written"};

/* system-table counter behind each psi_*_fraction column */
static const int psi_source_col[F__MAX] = {
    [F_PSI_CPU_SOME] = KS_PSI_CPU_SOME,       [F_PSI_MEMORY_SOME] = KS_PSI_MEMORY_SOME,
    [F_PSI_MEMORY_FULL] = KS_PSI_MEMORY_FULL, [F_PSI_IO_SOME] = KS_PSI_IO_SOME,
    [F_PSI_IO_FULL] = KS_PSI_IO_FULL,
};

/* One CPU line reduced to what the fractions need. */
typedef struct {
    bool present;
    unsigned mask; /* which optional fields went into the sums */
    uint64_t busy; /* ticks */
    uint64_t idle; /* ticks, idle + iowait */
    js_value_t iowait;
    js_value_t steal;
    js_value_t user_nice; /* user + nice */
    js_value_t idle_only; /* idle without iowait */
} cpu_acc_t;

/* Previous values of one interface or disk: rx/tx bytes, or sectors read/written. */
typedef struct {
    js_value_t v[2];
    size_t hint; /* row index in the last sample */
} pair_prev_t;

struct model_system {
    bool fed;
    int t_col; /* t_mono_ns in table_samples */
    /* the source tables read, bound by name against the layout `bound` (sample_bind) */
    const js_table_t *const *bound;
    js_bind_t t[KT__MAX];
    int cc[KC__MAX], sc[KS__MAX], mc[KM__MAX], nc[KN__MAX], dc[KD__MAX];
    size_t ncpu;
    int64_t *cpu_ids; /* per-CPU columns, in first-sample order */
    size_t nnet;
    char **net_names;
    size_t ndisk;
    char **disk_names;
    size_t ncols;
    char **names;   /* ncols owned strings */
    js_cell_t *row; /* ncols */
    /* the previous sample */
    js_value_t prev_t;
    cpu_acc_t *prev_cpu; /* 1 + ncpu: the aggregate, then per CPU */
    size_t *cpu_hint;    /* 1 + ncpu */
    js_value_t prev_sys[KS__MAX];
    pair_prev_t *prev_net;
    pair_prev_t *prev_disk;
};

/* Column index helpers. */
static size_t col_cpu(size_t i)
{
    return 1 + i; /* 0 is cpu_util_fraction */
}
static size_t col_fixed(const model_system_t *m, int f)
{
    return 1 + m->ncpu + (size_t)f;
}
static size_t col_net(const model_system_t *m, size_t i)
{
    return 1 + m->ncpu + F__MAX + 2 * i;
}
static size_t col_disk(const model_system_t *m, size_t i)
{
    return 1 + m->ncpu + F__MAX + 2 * m->nnet + 2 * i;
}

static char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *str_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

static void free_strv(char **v, size_t n)
{
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* Forget the layout (back to the state before the first feed). */
static void layout_free(model_system_t *m)
{
    free(m->cpu_ids);
    free_strv(m->net_names, m->nnet);
    free_strv(m->disk_names, m->ndisk);
    free_strv(m->names, m->ncols);
    free(m->row);
    free(m->prev_cpu);
    free(m->cpu_hint);
    free(m->prev_net);
    free(m->prev_disk);
    int t_col = m->t_col;
    memset(m, 0, sizeof(*m)); /* the binding too: made again at the next feed */
    m->t_col = t_col;
}

/* bind: the system source's tables and columns in the layout of `s`, once per layout. */
static void bind(model_system_t *m, const js_sample_t *s)
{
    if (m->bound == s->tables)
        return;
    m->t[KT_CPU] = (js_bind_t){"cpu", cpu_names, KC__MAX, m->cc, -1};
    m->t[KT_SYSTEM] = (js_bind_t){"system", system_names, KS__MAX, m->sc, -1};
    m->t[KT_MEMORY] = (js_bind_t){"memory", memory_names, KM__MAX, m->mc, -1};
    m->t[KT_NET] = (js_bind_t){"net", net_names, KN__MAX, m->nc, -1};
    m->t[KT_DISK] = (js_bind_t){"disk", disk_names, KD__MAX, m->dc, -1};
    sample_bind(s, m->t, KT__MAX);
    m->bound = s->tables;
}

/* width: the counter width of column `col` of bound table `k` (for counter_delta). */
static unsigned width(const model_system_t *m, const js_sample_t *s, int k, int col)
{
    return m->t[k].table >= 0 ? s->tables[m->t[k].table]->cols[col].width : 64;
}

model_system_t *model_system_new(void)
{
    model_system_t *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->t_col = table_column(&table_samples, "t_mono_ns");
    return m;
}

void model_system_free(model_system_t *m)
{
    if (!m)
        return;
    layout_free(m);
    free(m);
}

size_t model_system_columns(const model_system_t *m, const char *const **ret_cols)
{
    if (!m->fed) {
        *ret_cols = NULL;
        return 0;
    }
    *ret_cols = (const char *const *)m->names;
    return m->ncols;
}

const js_cell_t *model_system_row(const model_system_t *m)
{
    return m->fed ? m->row : NULL;
}

/* The rows of `t` in `s`, or NULL when the sample has none (table not registered or no row). */
static const js_rows_t *rows_of(const js_sample_t *s, const js_table_t *t)
{
    const js_rows_t *r = sample_rows(s, t);
    return r && r->nrows ? r : NULL;
}

/* The rows of bound table `k` in `s`, or NULL when the sample has none (not bound, or no row). */
static const js_rows_t *bound_of(const model_system_t *m, const js_sample_t *s, int k)
{
    const js_rows_t *r = sample_bound(s, &m->t[k]);
    return r && r->nrows ? r : NULL;
}

/* Row of `r` whose INT label `col` is `id`, trying *hint first; updates *hint. NULL if none. */
static const js_value_t *find_int(const js_rows_t *r, int col, int64_t id, size_t *hint)
{
    if (!r)
        return NULL;
    for (size_t k = 0; k < r->nrows; k++) {
        size_t i = (*hint + k) % r->nrows;
        const js_value_t *row = rows_row(r, i);
        if (row[col].present && row[col].i == id) {
            *hint = i;
            return row;
        }
    }
    return NULL;
}

/* As find_int for a TEXT label. */
static const js_value_t *find_str(const js_rows_t *r, int col, const char *name, size_t *hint)
{
    if (!r)
        return NULL;
    for (size_t k = 0; k < r->nrows; k++) {
        size_t i = (*hint + k) % r->nrows;
        const js_value_t *row = rows_row(r, i);
        if (row[col].present && strcmp(rows_str(r, &row[col]), name) == 0) {
            *hint = i;
            return row;
        }
    }
    return NULL;
}

static js_value_t missing_value(void)
{
    js_value_t v = {.present = false, .i = 0};
    return v;
}

static js_value_t u64_value(uint64_t u)
{
    js_value_t v = {.present = true, .i = (int64_t)u};
    return v;
}

/* Reduce a cpu-table row (or NULL) to busy/idle sums; `c` the bound cpu columns. */
static cpu_acc_t cpu_reduce(const int *c, const js_value_t *row)
{
    static const int required[] = {KC_USER, KC_NICE, KC_SYSTEM, KC_IDLE};
    static const int optional_busy[] = {KC_IRQ, KC_SOFTIRQ, KC_STEAL};
    cpu_acc_t a = {.present = false,
                   .iowait = missing_value(),
                   .steal = missing_value(),
                   .user_nice = missing_value(),
                   .idle_only = missing_value()};
    if (!row)
        return a;
    for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
        if (!row[c[required[i]]].present)
            return a;
    a.present = true;
    a.busy = (uint64_t)row[c[KC_USER]].i + (uint64_t)row[c[KC_NICE]].i + (uint64_t)row[c[KC_SYSTEM]].i;
    a.idle = (uint64_t)row[c[KC_IDLE]].i;
    for (size_t i = 0; i < sizeof(optional_busy) / sizeof(optional_busy[0]); i++)
        if (row[c[optional_busy[i]]].present) {
            a.busy += (uint64_t)row[c[optional_busy[i]]].i;
            a.mask |= 1u << i;
        }
    if (row[c[KC_IOWAIT]].present) {
        a.idle += (uint64_t)row[c[KC_IOWAIT]].i;
        a.mask |= 1u << 3;
    }
    a.iowait = row[c[KC_IOWAIT]];
    a.steal = row[c[KC_STEAL]];
    a.user_nice = u64_value((uint64_t)row[c[KC_USER]].i + (uint64_t)row[c[KC_NICE]].i);
    a.idle_only = row[c[KC_IDLE]];
    return a;
}

/* Δbusy, Δtotal of two reductions. Returns 0, or -ENODATA / -ERANGE when there is no usable interval. */
static int cpu_deltas(const cpu_acc_t *p, const cpu_acc_t *c, uint64_t *ret_busy, uint64_t *ret_total)
{
    if (!p->present || !c->present || p->mask != c->mask)
        return -ENODATA;
    js_value_t pb = u64_value(p->busy), cb = u64_value(c->busy), pi = u64_value(p->idle),
               ci = u64_value(c->idle);
    uint64_t db, di;
    int r = counter_delta(&pb, &cb, 64, &db);
    if (r < 0)
        return r;
    r = counter_delta(&pi, &ci, 64, &di);
    if (r < 0)
        return r;
    if (db + di == 0)
        return -ENODATA;
    *ret_busy = db;
    *ret_total = db + di;
    return 0;
}

/* The increase of one cpu-table tick counter as a fraction of `total` ticks, or missing. */
static js_cell_t tick_fraction(const js_value_t *prev, const js_value_t *cur, uint64_t total)
{
    uint64_t d;
    if (counter_delta(prev, cur, 64, &d) < 0) /* all cpu tick columns are 64-bit */
        return cell_missing();
    return cell_real((double)d / (double)total);
}

/* Rate per second of a counter of `width` bits times `scale`, or missing. `dt_ns` 0 means no interval. */
static js_cell_t rate(const js_value_t *prev, const js_value_t *cur, unsigned width, double scale,
                      int64_t dt_ns)
{
    uint64_t d;
    if (dt_ns <= 0 || counter_delta(prev, cur, width, &d) < 0)
        return cell_missing();
    return cell_real((double)d * scale * 1e9 / (double)dt_ns);
}

static js_cell_t int_cell(const js_value_t *row, int col)
{
    return row && row[col].present ? cell_int(row[col].i) : cell_missing();
}

static js_cell_t real_cell(const js_value_t *row, int col)
{
    return row && row[col].present ? cell_real(row[col].d) : cell_missing();
}

static js_cell_t diff_cell(const js_value_t *row, int a, int b)
{
    int64_t d;
    if (!row || !row[a].present || !row[b].present || __builtin_sub_overflow(row[a].i, row[b].i, &d))
        return cell_missing(); /* an overflow: values no kernel gives (an edited recording) */
    return cell_int(d);
}

/* First feed: fix the entities and column names from `s`. Returns 0 or -ENOMEM (layout freed). */
static int layout_build(model_system_t *m, const js_sample_t *s)
{
    const js_rows_t *cpu = bound_of(m, s, KT_CPU), *net = bound_of(m, s, KT_NET),
                    *disk = bound_of(m, s, KT_DISK);
    const int cpu_col = m->cc[KC_CPU];
    size_t ncpu = 0;
    for (size_t i = 0; cpu && i < cpu->nrows; i++) {
        const js_value_t *row = rows_row(cpu, i);
        ncpu += row[cpu_col].present && row[cpu_col].i >= 0;
    }
    size_t nnet = net ? net->nrows : 0, ndisk = disk ? disk->nrows : 0;
    size_t ncols = 1 + ncpu + F__MAX + 2 * nnet + 2 * ndisk;

    m->cpu_ids = calloc(ncpu + 1, sizeof(*m->cpu_ids));
    m->net_names = calloc(nnet + 1, sizeof(*m->net_names));
    m->disk_names = calloc(ndisk + 1, sizeof(*m->disk_names));
    m->names = calloc(ncols, sizeof(*m->names));
    m->row = calloc(ncols, sizeof(*m->row));
    m->prev_cpu = calloc(ncpu + 1, sizeof(*m->prev_cpu));
    m->cpu_hint = calloc(ncpu + 1, sizeof(*m->cpu_hint));
    m->prev_net = calloc(nnet + 1, sizeof(*m->prev_net));
    m->prev_disk = calloc(ndisk + 1, sizeof(*m->prev_disk));
    if (!m->cpu_ids || !m->net_names || !m->disk_names || !m->names || !m->row || !m->prev_cpu ||
        !m->cpu_hint || !m->prev_net || !m->prev_disk)
        goto fail;
    m->ncols = ncols; /* names freed up to ncols: unset ones are NULL */

    for (size_t i = 0; cpu && i < cpu->nrows; i++) {
        const js_value_t *row = rows_row(cpu, i);
        if (row[cpu_col].present && row[cpu_col].i >= 0) {
            m->cpu_hint[1 + m->ncpu] = i;
            m->cpu_ids[m->ncpu++] = row[cpu_col].i;
        }
    }
    for (size_t i = 0; i < nnet; i++) {
        const js_value_t *row = rows_row(net, i);
        m->prev_net[i].hint = i;
        m->net_names[m->nnet] = strdup(rows_text(net, row, m->nc[KN_IFACE], ""));
        if (!m->net_names[m->nnet++])
            goto fail;
    }
    for (size_t i = 0; i < ndisk; i++) {
        const js_value_t *row = rows_row(disk, i);
        m->prev_disk[i].hint = i;
        m->disk_names[m->ndisk] = strdup(rows_text(disk, row, m->dc[KD_DEVICE], ""));
        if (!m->disk_names[m->ndisk++])
            goto fail;
    }

    m->names[0] = strdup("cpu_util_fraction");
    if (!m->names[0])
        goto fail;
    for (size_t i = 0; i < m->ncpu; i++)
        if (!(m->names[col_cpu(i)] = str_printf("cpu%lld_util_fraction", (long long)m->cpu_ids[i])))
            goto fail;
    for (int f = 0; f < F__MAX; f++)
        if (!(m->names[col_fixed(m, f)] = strdup(fixed_names[f])))
            goto fail;
    for (size_t i = 0; i < m->nnet; i++) {
        if (!(m->names[col_net(m, i)] = str_printf("net_%s_rx_bytes_per_s", m->net_names[i])) ||
            !(m->names[col_net(m, i) + 1] = str_printf("net_%s_tx_bytes_per_s", m->net_names[i])))
            goto fail;
    }
    for (size_t i = 0; i < m->ndisk; i++) {
        if (!(m->names[col_disk(m, i)] = str_printf("disk_%s_read_bytes_per_s", m->disk_names[i])) ||
            !(m->names[col_disk(m, i) + 1] = str_printf("disk_%s_write_bytes_per_s", m->disk_names[i])))
            goto fail;
    }
    m->prev_t = missing_value();
    for (size_t i = 0; i <= m->ncpu; i++)
        m->prev_cpu[i] = cpu_reduce(m->cc, NULL);
    for (int c = 0; c < KS__MAX; c++)
        m->prev_sys[c] = missing_value();
    for (size_t i = 0; i < m->nnet; i++)
        m->prev_net[i].v[0] = m->prev_net[i].v[1] = missing_value();
    for (size_t i = 0; i < m->ndisk; i++)
        m->prev_disk[i].v[0] = m->prev_disk[i].v[1] = missing_value();
    return 0;
fail:
    layout_free(m);
    return -ENOMEM;
}

int model_system_feed(model_system_t *m, const js_sample_t *s)
{
    bind(m, s);
    if (!m->fed) {
        int r = layout_build(m, s);
        if (r < 0)
            return r;
        m->fed = true;
    }

    /* interval */
    const js_rows_t *samples = rows_of(s, &table_samples);
    js_value_t t = missing_value();
    if (samples && m->t_col >= 0)
        t = rows_row(samples, 0)[m->t_col];
    int64_t dt_ns = 0;
    if (t.present && m->prev_t.present && t.i > m->prev_t.i)
        dt_ns = t.i - m->prev_t.i;

    /* CPU */
    const js_rows_t *cpu = bound_of(m, s, KT_CPU);
    for (size_t i = 0; i <= m->ncpu; i++) {
        int64_t id = i == 0 ? -1 : m->cpu_ids[i - 1];
        cpu_acc_t cur = cpu_reduce(m->cc, find_int(cpu, m->cc[KC_CPU], id, &m->cpu_hint[i]));
        const cpu_acc_t *prev = &m->prev_cpu[i];
        uint64_t busy, total;
        bool ok = cpu_deltas(prev, &cur, &busy, &total) == 0;
        m->row[i == 0 ? 0 : col_cpu(i - 1)] = ok ? cell_real((double)busy / (double)total) : cell_missing();
        if (i == 0) {
            m->row[col_fixed(m, F_IOWAIT)] =
                ok ? tick_fraction(&prev->iowait, &cur.iowait, total) : cell_missing();
            m->row[col_fixed(m, F_STEAL)] =
                ok ? tick_fraction(&prev->steal, &cur.steal, total) : cell_missing();
            m->row[col_fixed(m, F_USER)] =
                ok ? tick_fraction(&prev->user_nice, &cur.user_nice, total) : cell_missing();
            m->row[col_fixed(m, F_IDLE)] =
                ok ? tick_fraction(&prev->idle_only, &cur.idle_only, total) : cell_missing();
        }
        m->prev_cpu[i] = cur;
    }

    /* memory and load levels */
    const js_rows_t *mem_rows = bound_of(m, s, KT_MEMORY);
    const js_value_t *mem = mem_rows ? rows_row(mem_rows, 0) : NULL;
    const int *mc = m->mc;
    m->row[col_fixed(m, F_MEM_TOTAL)] = int_cell(mem, mc[KM_TOTAL]);
    m->row[col_fixed(m, F_MEM_USED)] = diff_cell(mem, mc[KM_TOTAL], mc[KM_AVAILABLE]);
    m->row[col_fixed(m, F_MEM_AVAILABLE)] = int_cell(mem, mc[KM_AVAILABLE]);
    m->row[col_fixed(m, F_SWAP_USED)] = diff_cell(mem, mc[KM_SWAP_TOTAL], mc[KM_SWAP_FREE]);

    const js_rows_t *sys_rows = bound_of(m, s, KT_SYSTEM);
    const js_value_t *sys = sys_rows ? rows_row(sys_rows, 0) : NULL;
    const int *sc = m->sc;
    m->row[col_fixed(m, F_LOAD1)] = real_cell(sys, sc[KS_LOAD1]);
    m->row[col_fixed(m, F_LOAD5)] = real_cell(sys, sc[KS_LOAD5]);
    m->row[col_fixed(m, F_LOAD15)] = real_cell(sys, sc[KS_LOAD15]);

    /* system-wide rates */
    js_value_t none = missing_value();
#define SYSV(k) (sys ? &sys[sc[k]] : &none)
    m->row[col_fixed(m, F_CTXT)] =
        rate(&m->prev_sys[KS_CTXT], SYSV(KS_CTXT), width(m, s, KT_SYSTEM, sc[KS_CTXT]), 1.0, dt_ns);
    m->row[col_fixed(m, F_FORKS)] =
        rate(&m->prev_sys[KS_FORKS], SYSV(KS_FORKS), width(m, s, KT_SYSTEM, sc[KS_FORKS]), 1.0, dt_ns);
    for (int f = F_PSI_CPU_SOME; f <= F_PSI_IO_FULL; f++) {
        int k = psi_source_col[f];
        /* Δus / Δt_us = Δus * 1e-6 per second */
        m->row[col_fixed(m, f)] = rate(&m->prev_sys[k], SYSV(k), width(m, s, KT_SYSTEM, sc[k]), 1e-6, dt_ns);
    }
    for (int k = 0; k < KS__MAX; k++)
        m->prev_sys[k] = *SYSV(k);
#undef SYSV

    /* interfaces */
    const js_rows_t *net = bound_of(m, s, KT_NET);
    for (size_t i = 0; i < m->nnet; i++) {
        pair_prev_t *p = &m->prev_net[i];
        const js_value_t *row = find_str(net, m->nc[KN_IFACE], m->net_names[i], &p->hint);
        const int cols[2] = {m->nc[KN_RX], m->nc[KN_TX]};
        for (int k = 0; k < 2; k++) {
            js_value_t cur = row ? row[cols[k]] : none;
            m->row[col_net(m, i) + (size_t)k] =
                rate(&p->v[k], &cur, width(m, s, KT_NET, cols[k]), 1.0, dt_ns);
            p->v[k] = cur;
        }
    }

    /* disks */
    const js_rows_t *disk = bound_of(m, s, KT_DISK);
    for (size_t i = 0; i < m->ndisk; i++) {
        pair_prev_t *p = &m->prev_disk[i];
        const js_value_t *row = find_str(disk, m->dc[KD_DEVICE], m->disk_names[i], &p->hint);
        const int cols[2] = {m->dc[KD_READ], m->dc[KD_WRITTEN]};
        for (int k = 0; k < 2; k++) {
            js_value_t cur = row ? row[cols[k]] : none;
            m->row[col_disk(m, i) + (size_t)k] =
                rate(&p->v[k], &cur, width(m, s, KT_DISK, cols[k]), DISK_SECTOR_BYTES, dt_ns);
            p->v[k] = cur;
        }
    }

    m->prev_t = t;
    return 0;
}

/* ---- the `system` model part: the host's derived row as the `system` view ---------------------------- */

typedef struct {
    model_system_t *m;
    js_column_t *cols; /* built at the first feed from the column names */
    js_table_t view;
} system_part_t;

static int system_part_init(const js_model_cfg_t *cfg, void **ret_state)
{
    (void)cfg;
    system_part_t *p = calloc(1, sizeof(*p));
    if (!p || !(p->m = model_system_new())) {
        free(p);
        return -ENOMEM;
    }
    p->view = (js_table_t){"system", "the host: one row per sample", 0, NULL}; /* columns at the first feed */
    *ret_state = p;
    return 0;
}

static const char *unit_of(const char *name)
{
    static const struct {
        const char *suffix, *unit;
    } units[] = {
        {"_bytes_per_s", "bytes/s"}, {"_per_s", "1/s"}, {"_fraction", "fraction"}, {"_bytes", "bytes"}};
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        size_t k = strlen(units[i].suffix);
        if (n >= k && strcmp(name + n - k, units[i].suffix) == 0)
            return units[i].unit;
    }
    return "tasks"; /* load1/5/15 */
}

static int system_part_feed(void *state, const js_feed_t *f)
{
    system_part_t *p = state;
    int r = model_system_feed(p->m, f->s);
    if (r < 0 || p->cols)
        return r;
    const char *const *names;
    size_t n = model_system_columns(p->m, &names);
    if (!(p->cols = calloc(n ? n : 1, sizeof(*p->cols))))
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const char *u = unit_of(names[i]);
        p->cols[i] = (js_column_t){names[i], u, strcmp(u, "bytes") == 0 ? JS_INT : JS_REAL,
                                   JS_GAUGE, 0, "host-wide (docs/METRICS.md, system scope)"};
    }
    p->view = (js_table_t){"system", "the host: one row per sample", n, p->cols};
    return 0;
}

static const js_table_t *system_part_view_table(void *state, size_t i)
{
    system_part_t *p = state;
    return i == 0 ? &p->view : NULL;
}

static int system_part_view_fill(void *state, size_t i, js_rows_t *out)
{
    system_part_t *p = state;
    (void)i;
    const js_cell_t *cells = model_system_row(p->m);
    js_value_t *v = rows_add(out);
    if (!v)
        return -ENOMEM;
    for (size_t c = 0; cells && c < p->view.ncols; c++) {
        if (cells[c].type == CELL_INT)
            val_int(&v[c], cells[c].i);
        else if (cells[c].type == CELL_REAL)
            val_real(&v[c], cells[c].d);
    }
    return 0;
}

static void system_part_fini(void *state)
{
    system_part_t *p = state;
    if (!p)
        return;
    model_system_free(p->m);
    free(p->cols);
    free(p);
}

const js_model_part_t part_system = {
    .name = "system",
    .init = system_part_init,
    .feed = system_part_feed,
    .view_table = system_part_view_table,
    .view_fill = system_part_view_fill,
    .fini = system_part_fini,
};
