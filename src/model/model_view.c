/* SPDX-License-Identifier: MIT
 *
 * The tree model's views (model.h, model_view): its own `tree` (one row per sample) and `process` (one row
 * per sample and live member) built from the last fed sample, and every part's views found in list order and
 * built on demand into a cache that the next feed invalidates.
 */
#include "model/model_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* clang-format off */
#define VR(n, u, k, h) {n, u, JS_REAL, k, 0, h}
#define VI(n, u, k, h) {n, u, JS_INT, k, 0, h}
/* clang-format on */

enum {
    TV_DT,
    TV_CPU,
    TV_USER,
    TV_SYSTEM,
    TV_CORES,
    TV_SAMPLED,
    TV_MEMORY,
    TV_RSS,
    TV_RSS_MAIN,
    TV_RSS_DESC,
    TV_SHARED,
    TV_ANON,
    TV_FILE,
    TV_SHMEM,
    TV_SWAP,
    TV_USS,
    TV_PSS,
    TV_HWM,
    TV_PROCS,
    TV_THREADS,
    TV_FDS,
    TV_READ,
    TV_WRITE,
    TV_RCHAR,
    TV_WCHAR,
    TV_SYSCR,
    TV_SYSCW,
    TV_READ_RATE,
    TV_WRITE_RATE,
    TV_RCHAR_RATE,
    TV_WCHAR_RATE,
    TV_MINFLT,
    TV_MAJFLT,
    TV__MAX
};

static const js_column_t tree_view_cols[TV__MAX] = {
    [TV_DT] = VR("dt_s", "s", JS_GAUGE, "time since the previous sample"),
    [TV_CPU] = VR("cpu_s", "s", JS_COUNTER, "CPU time of the scope since the start (exact in run mode)"),
    [TV_USER] = VR("user_s", "s", JS_COUNTER, "user CPU time, likewise"),
    [TV_SYSTEM] = VR("system_s", "s", JS_COUNTER, "system CPU time, likewise"),
    [TV_CORES] = VR("cpu_cores", "cores", JS_GAUGE, "cores busy over the interval (capped, see METRICS.md)"),
    [TV_SAMPLED] = VR("sampled_cpu_s", "s", JS_COUNTER, "CPU time sampling alone sees"),
    [TV_MEMORY] =
        VI("memory_bytes", "bytes", JS_GAUGE,
           "the memory headline at this sample: memory.current of the scope's own cgroup where it has "
           "one, else the PSS sum"),
    [TV_RSS] = VI("rss_sum_bytes", "bytes", JS_GAUGE,
                  "sum of the members' RSS (a page shared by k members counts k times)"),
    [TV_RSS_MAIN] = VI("rss_main_bytes", "bytes", JS_GAUGE, "RSS of the command itself"),
    [TV_RSS_DESC] = VI("rss_descendants_bytes", "bytes", JS_GAUGE, "RSS of every other member"),
    [TV_SHARED] = VI("shared_bytes", "bytes", JS_GAUGE, "resident file-backed and shared memory"),
    [TV_ANON] = VI("rss_anon_bytes", "bytes", JS_GAUGE, "anonymous RSS (status cadence)"),
    [TV_FILE] = VI("rss_file_bytes", "bytes", JS_GAUGE, "file-backed RSS (status cadence)"),
    [TV_SHMEM] = VI("rss_shmem_bytes", "bytes", JS_GAUGE, "shared-memory RSS (status cadence)"),
    [TV_SWAP] = VI("swap_bytes", "bytes", JS_GAUGE, "swapped out (status cadence)"),
    [TV_USS] = VI("uss_bytes", "bytes", JS_GAUGE,
                  "sum of the members' private pages (USS; smaps_rollup, moved with RSS between reads)"),
    [TV_PSS] =
        VI("pss_bytes", "bytes", JS_GAUGE, "sum of the members' PSS: no page counted twice (likewise)"),
    [TV_HWM] = VI("hwm_max_bytes", "bytes", JS_GAUGE, "largest single-process VmHWM"),
    [TV_PROCS] = VI("processes", "count", JS_GAUGE, "live members"),
    [TV_THREADS] = VI("threads", "count", JS_GAUGE, "threads of the live members"),
    [TV_FDS] = VI("fds", "count", JS_GAUGE, "open file descriptors of the live members"),
    [TV_READ] = VI("read_bytes", "bytes", JS_COUNTER, "bytes read from storage since the start"),
    [TV_WRITE] = VI("write_bytes", "bytes", JS_COUNTER, "bytes written to storage since the start"),
    [TV_RCHAR] = VI("read_chars", "bytes", JS_COUNTER, "bytes passed to read-like calls"),
    [TV_WCHAR] = VI("write_chars", "bytes", JS_COUNTER, "bytes passed to write-like calls"),
    [TV_SYSCR] = VI("read_syscalls", "count", JS_COUNTER, "read-like system calls"),
    [TV_SYSCW] = VI("write_syscalls", "count", JS_COUNTER, "write-like system calls"),
    [TV_READ_RATE] = VR("read_bytes_per_s", "bytes/s", JS_GAUGE, "storage read rate over the interval"),
    [TV_WRITE_RATE] = VR("write_bytes_per_s", "bytes/s", JS_GAUGE, "storage write rate"),
    [TV_RCHAR_RATE] = VR("read_chars_per_s", "bytes/s", JS_GAUGE, "read-call rate"),
    [TV_WCHAR_RATE] = VR("write_chars_per_s", "bytes/s", JS_GAUGE, "write-call rate"),
    [TV_MINFLT] = VR("minflt", "count", JS_COUNTER, "minor page faults since the start"),
    [TV_MAJFLT] = VR("majflt", "count", JS_COUNTER, "major page faults since the start"),
};
static const js_table_t view_tree = {"tree", "the scope: one row per sample", TV__MAX, tree_view_cols};

enum {
    PV_PID,
    PV_PPID,
    PV_START,
    PV_COMM,
    PV_STATE,
    PV_CORES,
    PV_UTIME,
    PV_STIME,
    PV_CHILDREN,
    PV_THREADS,
    PV_RSS,
    PV_SHARED,
    PV_ANON,
    PV_SWAP,
    PV_HWM,
    PV_USS,
    PV_PSS,
    PV_FDS,
    PV_READ,
    PV_WRITE,
    PV_RCHAR,
    PV_WCHAR,
    PV_READ_RATE,
    PV_WRITE_RATE,
    PV_MINFLT,
    PV_MAJFLT,
    PV_VCSW,
    PV_IVCSW,
    PV__MAX
};

static const js_column_t proc_view_cols[PV__MAX] = {
    [PV_PID] = {"pid", "count", JS_INT, JS_LABEL, 0, "process ID"},
    [PV_PPID] = VI("ppid", "count", JS_GAUGE, "parent process ID"),
    [PV_START] = {"start_ticks", "ticks", JS_INT, JS_LABEL, 0, "start time after boot (with pid: identity)"},
    [PV_COMM] = {"comm", "text", JS_TEXT, JS_GAUGE, 0, "command name"},
    [PV_STATE] = {"state", "text", JS_TEXT, JS_GAUGE, 0, "R, S, D, Z, T, t, X, I"},
    [PV_CORES] = VR("cpu_cores", "cores", JS_GAUGE, "cores busy over the interval"),
    [PV_UTIME] = VR("utime_s", "s", JS_COUNTER, "own user CPU time"),
    [PV_STIME] = VR("stime_s", "s", JS_COUNTER, "own system CPU time"),
    [PV_CHILDREN] = VR("children_cpu_s", "s", JS_COUNTER, "CPU time of the children it reaped"),
    [PV_THREADS] = VI("threads", "count", JS_GAUGE, "threads"),
    [PV_RSS] = VI("rss_bytes", "bytes", JS_GAUGE, "resident set size"),
    [PV_SHARED] = VI("shared_bytes", "bytes", JS_GAUGE, "resident file-backed and shared memory"),
    [PV_ANON] = VI("rss_anon_bytes", "bytes", JS_GAUGE, "anonymous RSS (status cadence)"),
    [PV_SWAP] = VI("swap_bytes", "bytes", JS_GAUGE, "swapped out (status cadence)"),
    [PV_HWM] = VI("hwm_bytes", "bytes", JS_GAUGE, "VmHWM (status cadence)"),
    [PV_USS] = VI("uss_bytes", "bytes", JS_GAUGE, "unique set size (uss cadence)"),
    [PV_PSS] = VI("pss_bytes", "bytes", JS_GAUGE, "proportional set size (uss cadence)"),
    [PV_FDS] = VI("fds", "count", JS_GAUGE, "open file descriptors"),
    [PV_READ] = VI("read_bytes", "bytes", JS_COUNTER, "bytes read from storage"),
    [PV_WRITE] = VI("write_bytes", "bytes", JS_COUNTER, "bytes written to storage"),
    [PV_RCHAR] = VI("read_chars", "bytes", JS_COUNTER, "bytes passed to read-like calls"),
    [PV_WCHAR] = VI("write_chars", "bytes", JS_COUNTER, "bytes passed to write-like calls"),
    [PV_READ_RATE] = VR("read_bytes_per_s", "bytes/s", JS_GAUGE, "storage read rate"),
    [PV_WRITE_RATE] = VR("write_bytes_per_s", "bytes/s", JS_GAUGE, "storage write rate"),
    [PV_MINFLT] = VI("minflt", "count", JS_COUNTER, "minor page faults"),
    [PV_MAJFLT] = VI("majflt", "count", JS_COUNTER, "major page faults"),
    [PV_VCSW] = VI("vol_ctxsw", "count", JS_COUNTER, "voluntary context switches (status cadence)"),
    [PV_IVCSW] = VI("invol_ctxsw", "count", JS_COUNTER, "involuntary context switches (status cadence)"),
};
static const js_table_t view_process = {"process", "one row per sample and live member", PV__MAX,
                                        proc_view_cols};

static void set_real(js_value_t *v, double d)
{
    if (!isnan(d))
        val_real(v, d);
}

static void set_int(js_value_t *v, double d)
{
    if (d >= -9223372036854775808.0 &&
        d < 9223372036854775808.0) /* not NaN, and an int64 (an edited recording may hold anything) */
        val_int(v, (int64_t)d);
}

static int fill_tree(const js_model_t *m, js_rows_t *out)
{
    const js_tree_point_t *p = &m->pt;
    js_value_t *v = rows_add(out);
    if (!v)
        return -ENOMEM;
    const double reals[] = {
        [TV_DT] = p->dt_s,         [TV_CPU] = p->cpu_s,       [TV_USER] = p->user_s,
        [TV_SYSTEM] = p->system_s, [TV_CORES] = p->cpu_cores, [TV_SAMPLED] = p->sampled_cpu_s};
    for (int c = 0; c <= TV_SAMPLED; c++)
        set_real(&v[c], reals[c]);
    set_int(&v[TV_MEMORY], model_memory_now(m));
    const double ints[] = {p->rss,      p->rss_main,  p->rss_desc, p->shared, p->rss_anon,
                           p->rss_file, p->rss_shmem, p->swap,     p->uss,    p->pss,
                           p->hwm_max,  p->members,   p->threads,  p->fds};
    for (int c = TV_RSS; c <= TV_FDS; c++)
        set_int(&v[c], ints[c - TV_RSS]);
    static const int io_order[] = {IO_READ, IO_WRITE, IO_RCHAR, IO_WCHAR, IO_SYSCR, IO_SYSCW};
    for (int k = 0; k < 6; k++)
        set_int(&v[TV_READ + k], p->io[io_order[k]]);
    for (int k = 0; k < 4; k++)
        set_real(&v[TV_READ_RATE + k], p->io_rate[io_order[k]]);
    set_real(&v[TV_MINFLT], p->minflt);
    set_real(&v[TV_MAJFLT], p->majflt);
    return 0;
}

static void copy_int(js_value_t *dst, const js_value_t *src)
{
    if (src->present)
        val_int(dst, src->i);
}

static void ticks_s(js_value_t *dst, const js_value_t *src, double tck)
{
    if (src->present)
        val_real(dst, (double)src->i / tck);
}

/* host_row: the embedding process's row of the process view less the monitor thread's own (as feed_proc) */
static void host_row(const js_model_t *m, js_value_t *v)
{
    static const int io[][2] = {
        {PV_READ, IO_READ}, {PV_WRITE, IO_WRITE}, {PV_RCHAR, IO_RCHAR}, {PV_WCHAR, IO_WCHAR}};
    for (size_t k = 0; k < sizeof(io) / sizeof(io[0]); k++)
        if (v[io[k][0]].present && !isnan(m->mon_io[io[k][1]]))
            v[io[k][0]].i = (int64_t)fmax(0, (double)v[io[k][0]].i - m->mon_io[io[k][1]]);
    if (v[PV_THREADS].present && !isnan(m->mon_threads) && (double)v[PV_THREADS].i > m->mon_threads)
        v[PV_THREADS].i -= (int64_t)m->mon_threads;
    if (v[PV_FDS].present && !isnan(m->mon_fds))
        v[PV_FDS].i = (int64_t)fmax(0, (double)v[PV_FDS].i - m->mon_fds);
}

static int fill_process(const js_model_t *m, js_rows_t *out)
{
    const js_rows_t *proc = m->last ? bound_rows(m, m->last, TB_PROC) : NULL;
    const int *pc = m->col.proc;
    const double tck = (double)m->cfg.clk_tck;
    for (size_t i = 0; proc && i < proc->nrows; i++) {
        const js_value_t *r = rows_row(proc, i);
        js_value_t *v = rows_add(out);
        if (!v)
            return -ENOMEM;
        copy_int(&v[PV_PID], &r[pc[CP_PID]]);
        copy_int(&v[PV_PPID], &r[pc[CP_PPID]]);
        copy_int(&v[PV_START], &r[pc[CP_START_TICKS]]);
        const mproc_t *e = pidmap_get(&m->procs, (int32_t)r[pc[CP_PID]].i);
        if (e && e->start == (uint64_t)r[pc[CP_START_TICKS]].i && e->comm[0] &&
            rows_set_str(out, &v[PV_COMM], e->comm, strlen(e->comm)) < 0)
            return -ENOMEM;
        if (r[pc[CP_STATE]].present &&
            rows_set_str(out, &v[PV_STATE], rows_str(proc, &r[pc[CP_STATE]]), 1) < 0)
            return -ENOMEM;
        if (i < m->npp) {
            set_real(&v[PV_CORES], m->pp[i].cpu_cores);
            set_real(&v[PV_READ_RATE], m->pp[i].read_bps);
            set_real(&v[PV_WRITE_RATE], m->pp[i].write_bps);
        }
        ticks_s(&v[PV_UTIME], &r[pc[CP_UTIME]], tck);
        ticks_s(&v[PV_STIME], &r[pc[CP_STIME]], tck);
        if (r[pc[CP_CUTIME]].present && r[pc[CP_CSTIME]].present)
            val_real(&v[PV_CHILDREN], ((double)r[pc[CP_CUTIME]].i + (double)r[pc[CP_CSTIME]].i) / tck);
        static const int direct[][2] = {
            {PV_THREADS, CP_THREADS}, {PV_RSS, CP_RSS},           {PV_SHARED, CP_SHARED},
            {PV_ANON, CP_RSS_ANON},   {PV_SWAP, CP_SWAP},         {PV_HWM, CP_HWM},
            {PV_USS, CP_USS},         {PV_PSS, CP_PSS},           {PV_FDS, CP_FDS},
            {PV_READ, CP_READ_BYTES}, {PV_WRITE, CP_WRITE_BYTES}, {PV_RCHAR, CP_RCHAR},
            {PV_WCHAR, CP_WCHAR},     {PV_MINFLT, CP_MINFLT},     {PV_MAJFLT, CP_MAJFLT},
            {PV_VCSW, CP_VCSW},       {PV_IVCSW, CP_IVCSW},
        };
        for (size_t d = 0; d < sizeof(direct) / sizeof(direct[0]); d++)
            copy_int(&v[direct[d][0]], &r[pc[direct[d][1]]]);
        if (m->cfg.embedded && r[pc[CP_PID]].i == m->cfg.root_pid) /* the host without its monitor thread */
            host_row(m, v);
    }
    return 0;
}

/* view_locate: the part index (nparts for the tree model's own views) and the part's view index of view i. */
static const js_table_t *view_locate(const js_model_t *m, size_t i, size_t *ret_part, size_t *ret_j)
{
    if (i < 2) {
        *ret_part = m->nparts;
        *ret_j = i;
        return i == 0 ? &view_tree : &view_process;
    }
    i -= 2;
    for (size_t p = 0; p < m->nparts; p++) {
        const js_model_part_t *part = js_model_parts[p];
        if (!m->part_on[p] || !part->view_table)
            continue;
        for (size_t j = 0;; j++) {
            const js_table_t *t = part->view_table(m->part_state[p], j);
            if (!t)
                break;
            if (i-- == 0) {
                *ret_part = p;
                *ret_j = j;
                return t;
            }
        }
    }
    return NULL;
}

const js_table_t *model_view_table(const js_model_t *m, size_t i)
{
    size_t p, j;
    return view_locate(m, i, &p, &j);
}

int model_view(js_model_t *m, const char *name, js_view_t *ret)
{
    size_t p = 0, j = 0;
    const js_table_t *t = NULL;
    for (size_t i = 0; (t = view_locate(m, i, &p, &j)); i++)
        if (strcmp(t->name, name) == 0)
            break;
    if (!t)
        return -ENOENT;
    if (!m->nfed)
        return -ENODATA;
    view_cache_t *c = NULL;
    for (size_t i = 0; i < m->nviews && !c; i++)
        if (m->views[i].table == t)
            c = &m->views[i];
    if (!c) {
        if (m->nviews == m->views_cap) {
            size_t cap = m->views_cap ? m->views_cap * 2 : 8;
            view_cache_t *v = realloc(m->views, cap * sizeof(*v));
            if (!v)
                return -ENOMEM;
            m->views = v;
            m->views_cap = cap;
        }
        c = &m->views[m->nviews++];
        c->table = t;
        c->built = -1;
        rows_init(&c->rows, t);
    }
    if (c->built != m->pt.seq) {
        rows_clear(&c->rows);
        int r = p < m->nparts ? js_model_parts[p]->view_fill(m->part_state[p], j, &c->rows)
                : j == 0      ? fill_tree(m, &c->rows)
                              : fill_process(m, &c->rows);
        if (r < 0)
            return r;
        c->built = m->pt.seq;
    }
    ret->table = t;
    ret->rows = &c->rows;
    return 0;
}
