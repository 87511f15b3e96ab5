/* SPDX-License-Identifier: MIT
 *
 * The tree model (see model.h): each sample fed (model_feed): the tree's sums per sample, exact cumulative
 * totals, rates with counter resets handled, the node's own accounting, then every model part; and the run
 * summary. The per-process state is in model_proc.c, the views in model_view.c (model_int.h).
 */
#include "model/model_int.h"

#include "model/part_cgroup.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The names of the columns the tree model reads (model_int.h: each enum follows its list). */
static const char *const proc_names[CP__MAX] = {"pid",
                                                "start_ticks",
                                                "ppid",
                                                "state",
                                                "utime_ticks",
                                                "stime_ticks",
                                                "cutime_ticks",
                                                "cstime_ticks",
                                                "threads",
                                                "minflt",
                                                "majflt",
                                                "cminflt",
                                                "cmajflt",
                                                "rss_bytes",
                                                "shared_bytes",
                                                "rss_anon_bytes",
                                                "rss_file_bytes",
                                                "rss_shmem_bytes",
                                                "swap_bytes",
                                                "hwm_bytes",
                                                "vol_ctxsw",
                                                "invol_ctxsw",
                                                "rchar_bytes",
                                                "wchar_bytes",
                                                "syscr",
                                                "syscw",
                                                "read_bytes",
                                                "write_bytes",
                                                "fds",
                                                "uss_bytes",
                                                "pss_bytes",
                                                "sigignore",
                                                "cpu_ns"};
static const char *const info_names[CI__MAX] = {"pid", "start_ticks", "comm"};
static const char *const tree_names[CT__MAX] = {"root_alive",         "unread",
                                                "node_processes",     "reaped_utime_us",
                                                "reaped_stime_us",    "reaped_maxrss_bytes",
                                                "reaped_minflt",      "reaped_majflt",
                                                "reaped_vol_ctxsw",   "reaped_invol_ctxsw",
                                                "reaped_rchar_bytes", "reaped_wchar_bytes",
                                                "reaped_syscr",       "reaped_syscw",
                                                "reaped_read_bytes",  "reaped_write_bytes",
                                                "t_boot_ns"};
static const char *const stepd_names[CS__MAX] = {"pid", "start_ticks", "cutime_ticks", "cstime_ticks"};
static const char *const self_names[CF__MAX] = {
    "utime_us", "stime_us", "maxrss_bytes", "prev_write_ns", "write_errors", "rchar_bytes", "wchar_bytes",
    "syscr",    "syscw",    "read_bytes",   "write_bytes",   "threads",      "fds"};

void rate_carry_init(rate_carry_t *c, double cap, int64_t nominal_ns)
{
    c->cap = cap;
    c->min_ns = nominal_ns / 2;
    c->carry = 0;
    c->max_rate = NAN;
    c->prev_ns = 0;
    c->prev_rate = 0;
}

double rate_carry_step(rate_carry_t *c, double d, int64_t dt_ns)
{
    if (dt_ns <= 0)
        return NAN;
    if (d > 0)
        c->carry += d;
    int64_t span = dt_ns;
    if (dt_ns < c->min_ns && c->prev_ns > 0) { /* too short on its own: the mean over it and the row before */
        span = dt_ns + c->prev_ns;
        c->carry += c->prev_rate * ns_to_s(c->prev_ns);
    }
    double rate = c->carry / ns_to_s(span);
    if (c->cap > 0 && rate > c->cap)
        rate = c->cap;
    c->carry -= rate * ns_to_s(span);
    if (c->carry < 0)
        c->carry = 0;
    if (span >= c->min_ns && (isnan(c->max_rate) || rate > c->max_rate))
        c->max_rate = rate;
    c->prev_ns = span;
    c->prev_rate = rate;
    return rate;
}

js_model_t *model_new(const js_model_cfg_t *cfg)
{
    js_model_t *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->cfg = *cfg;
    if (m->cfg.clk_tck <= 0)
        m->cfg.clk_tck = 100;
    pidmap_init(&m->procs, sizeof(mproc_t));
    pidmap_init(&m->stepds, sizeof(mstepd_t));
    rate_carry_init(&m->cpu_rate, cfg->cores_available, cfg->interval_ns);
    js_summary_t *s = &m->sum;
    s->peak_rss_sum = s->peak_rss_kernel = s->peak_swap = s->peak_rss_main = s->peak_rss_desc = NAN;
    s->peak_private = s->peak_shared = s->peak_pss = s->peak_bytes = NAN;
    s->mon_cpu_s = s->mon_max_rss = NAN;
    m->reaped_maxrss = NAN;
    m->window_ticks = NAN;
    for (int k = 0; k < IO__MAX; k++)
        m->mon_io[k] = NAN;
    m->mon_threads = m->mon_fds = NAN;
    while (js_model_parts[m->nparts])
        m->nparts++;
    m->part_state = calloc(m->nparts + 1, sizeof(*m->part_state));
    m->part_on = calloc(m->nparts + 1, sizeof(*m->part_on));
    if (!m->part_state || !m->part_on) {
        model_free(m);
        return NULL;
    }
    for (size_t i = 0; i < m->nparts; i++) {
        const js_model_part_t *p = js_model_parts[i];
        m->part_on[i] = !p->init || p->init(&m->cfg, &m->part_state[i]) == 0;
    }
    return m;
}

void model_free(js_model_t *m)
{
    if (!m)
        return;
    for (size_t i = 0; m->part_on && i < m->nparts; i++)
        if (m->part_on[i] && js_model_parts[i]->fini)
            js_model_parts[i]->fini(m->part_state[i]);
    free(m->part_state);
    free(m->part_on);
    for (size_t i = 0; i < m->nviews; i++)
        rows_free(&m->views[i].rows);
    free(m->views);
    pidmap_free(&m->procs);
    pidmap_free(&m->stepds);
    free(m->pp);
    free(m->gone);
    free(m->comms);
    free(m->stored_reason);
    free(m);
}

static const js_value_t *first_row(const js_sample_t *s, const js_table_t *t)
{
    const js_rows_t *r = sample_rows(s, t);
    return r && r->nrows ? rows_row(r, 0) : NULL;
}

/* model_bind: find the tables and columns the model reads in the layout of `s` (once per layout: every
 * sample made from the same table list has it). A table that is absent, or lacks a column, stays unbound:
 * the model then reads nothing from it, as from an empty table. */
static void model_bind(js_model_t *m, const js_sample_t *s)
{
    model_cols_t *c = &m->col;
    if (c->layout == s->tables)
        return;
    c->t[TB_PROC] = (js_bind_t){"proc", proc_names, CP__MAX, c->proc, -1};
    c->t[TB_INFO] = (js_bind_t){"proc_info", info_names, CI__MAX, c->info, -1};
    c->t[TB_TREE] = (js_bind_t){"tree", tree_names, CT__MAX, c->tree, -1};
    c->t[TB_EXITS] = (js_bind_t){"exits", NULL, 0, NULL, -1};
    c->t[TB_STEPD] = (js_bind_t){"stepd", stepd_names, CS__MAX, c->stepd, -1};
    c->t[TB_SELF] = (js_bind_t){"self", self_names, CF__MAX, c->self, -1};
    sample_bind(s, c->t, TB__MAX);
    c->layout = s->tables;
}

/* table_named: the descriptor of the table called `name` in the layout of `s`, or NULL. */
static const js_table_t *table_named(const js_sample_t *s, const char *name)
{
    int i = sample_table_index(s, name);
    return i >= 0 ? s->tables[i] : NULL;
}

/* all_or_nan: a tree sum is present only when every live member's value was */
static double all_or_nan(double sum, size_t have, size_t n)
{
    return have == n && n > 0 ? sum : NAN;
}

/* What the monitor has reaped so far (run mode), from the tree row. */
typedef struct {
    double user, sys, io[IO__MAX], minflt, majflt;
    bool have_io; /* the monitor's reaped I/O was read (run mode) */
} reaped_t;

/* read_reaped: the monitor's reaped totals from the tree row (zeros where absent, as in attach mode). */
static void read_reaped(js_model_t *m, const js_value_t *tv, reaped_t *r, js_tree_point_t *pt)
{
    memset(r, 0, sizeof(*r));
    if (!tv)
        return;
    const int *tc = m->col.tree;
    if (tv[tc[CT_REAPED_UTIME]].present)
        r->user = (double)tv[tc[CT_REAPED_UTIME]].i / 1e6;
    if (tv[tc[CT_REAPED_STIME]].present)
        r->sys = (double)tv[tc[CT_REAPED_STIME]].i / 1e6;
    for (int k = 0; k < IO__MAX; k++)
        if (tv[tc[CT_REAPED_RCHAR + k]].present) {
            r->io[k] = (double)tv[tc[CT_REAPED_RCHAR + k]].i;
            r->have_io = true;
        }
    if (tv[tc[CT_REAPED_MINFLT]].present)
        r->minflt = (double)tv[tc[CT_REAPED_MINFLT]].i;
    if (tv[tc[CT_REAPED_MAJFLT]].present)
        r->majflt = (double)tv[tc[CT_REAPED_MAJFLT]].i;
    if (tv[tc[CT_REAPED_MAXRSS]].present)
        m->reaped_maxrss = fmax_nan(m->reaped_maxrss, (double)tv[tc[CT_REAPED_MAXRSS]].i);
    if (tv[tc[CT_REAPED_NVCSW]].present)
        m->reaped_ctxsw[0] = (double)tv[tc[CT_REAPED_NVCSW]].i;
    if (tv[tc[CT_REAPED_NIVCSW]].present)
        m->reaped_ctxsw[1] = (double)tv[tc[CT_REAPED_NIVCSW]].i;
    if (tv[tc[CT_UNREAD]].present && tv[tc[CT_UNREAD]].i > 0) {
        m->sum.unread_samples++;
        if (tv[tc[CT_UNREAD]].i > m->sum.unread_max)
            m->sum.unread_max = tv[tc[CT_UNREAD]].i;
    }
    pt->root_alive = tv[tc[CT_ROOT_ALIVE]].present && tv[tc[CT_ROOT_ALIVE]].i;
    if (m->nfed == 0 && tv[tc[CT_T_BOOT]].present)
        m->window_ticks = ns_to_s(tv[tc[CT_T_BOOT]].i) * (double)m->cfg.clk_tck;
}

/* node_cumulate: the node scope: totals are the host's own accounting, exact (the aggregate `cpu` line of
 * /proc/stat: busy = user + nice + system + irq + softirq + steal, guest time being inside user and nice;
 * memory in use = MemTotal - MemAvailable), not sums over the top processes that have rows. */
static void node_cumulate(js_model_t *m, js_tree_point_t *pt, const js_sample_t *s)
{
    if (!m->node.cpu) { /* resolve the columns by name, once */
        static const char *const busy[6] = {"user_ticks", "nice_ticks",    "system_ticks",
                                            "irq_ticks",  "softirq_ticks", "steal_ticks"};
        m->node.cpu = table_named(s, "cpu");
        m->node.mem = table_named(s, "memory");
        m->node.c_id = m->node.cpu ? table_column(m->node.cpu, "cpu") : -1;
        for (int i = 0; i < 6; i++)
            m->node.c_busy[i] = m->node.cpu ? table_column(m->node.cpu, busy[i]) : -1;
        m->node.c_user[0] = m->node.c_busy[0];
        m->node.c_user[1] = m->node.c_busy[1];
        m->node.m_total = m->node.mem ? table_column(m->node.mem, "mem_total_bytes") : -1;
        m->node.m_avail = m->node.mem ? table_column(m->node.mem, "mem_available_bytes") : -1;
    }
    const double tck = (double)m->cfg.clk_tck;
    const js_rows_t *cpu = m->node.cpu ? sample_rows(s, m->node.cpu) : NULL;
    double busy = NAN, user = NAN;
    for (size_t i = 0; cpu && m->node.c_id >= 0 && i < cpu->nrows; i++) {
        const js_value_t *v = rows_row(cpu, i);
        if (!v[m->node.c_id].present || v[m->node.c_id].i != -1)
            continue;
        busy = user = 0;
        for (int k = 0; k < 6; k++)
            if (m->node.c_busy[k] >= 0 && v[m->node.c_busy[k]].present)
                busy += (double)v[m->node.c_busy[k]].i;
        for (int k = 0; k < 2; k++)
            if (m->node.c_user[k] >= 0 && v[m->node.c_user[k]].present)
                user += (double)v[m->node.c_user[k]].i;
    }
    const js_tree_point_t *pv = m->nfed ? &m->prev : NULL;
    if (!isnan(busy) && !m->node.have_base) {
        m->node.have_base = true;
        m->node.base_busy = busy;
        m->node.base_user = user;
    }
    pt->cpu_s = isnan(busy) ? (pv ? pv->cpu_s : NAN) : (busy - m->node.base_busy) / tck;
    pt->user_s = isnan(user) ? (pv ? pv->user_s : NAN) : (user - m->node.base_user) / tck;
    pt->system_s = pt->cpu_s - pt->user_s;
    pt->sampled_cpu_s = NAN;
    for (int k = 0; k < IO__MAX; k++)
        pt->io[k] = pt->io_rate[k] = NAN;
    pt->minflt = pt->majflt = NAN;
    double rate = rate_carry_step(&m->cpu_rate, pv ? pt->cpu_s - pv->cpu_s : NAN, pt->dt_ns);
    pt->cpu_cores = pv ? rate : NAN;
    const js_rows_t *mem = m->node.mem ? sample_rows(s, m->node.mem) : NULL;
    const js_value_t *mv = mem && mem->nrows ? rows_row(mem, 0) : NULL;
    pt->rss = mv && m->node.m_total >= 0 && m->node.m_avail >= 0 && mv[m->node.m_total].present &&
                      mv[m->node.m_avail].present
                  ? (double)(mv[m->node.m_total].i - mv[m->node.m_avail].i)
                  : NAN;
    pt->rss_main = pt->rss_desc = NAN;
    const js_value_t *tv = bound_first(m, s, TB_TREE);
    const js_rows_t *proc = bound_rows(m, s, TB_PROC);
    if (tv && tv[m->col.tree[CT_NODE_PROCS]].present)
        pt->members = (double)tv[m->col.tree[CT_NODE_PROCS]].i;
    else if (pv &&
             !(proc && proc->nrows)) /* not counted this sample (watch --node without --top): the last */
        pt->members = pv->members;
}

/* cumulate: the tree's cumulative CPU, I/O and faults (live + reaped + lost, less the attach baseline, never
 * decreasing) and the CPU rate. */
static void cumulate(js_model_t *m, js_tree_point_t *pt, const live_sums_t *ls, const reaped_t *r)
{
    double c_user = ls->user + r->user + m->lost_user, c_sys = ls->sys + r->sys + m->lost_sys;
    c_user -= m->mon_user; /* embedded: the monitor thread's own CPU is in the root's, and is not the job's */
    c_sys -= m->mon_sys;
    double c_io[IO__MAX];
    for (int k = 0; k < IO__MAX; k++) /* unknown when a member's io could not be read, now or before */
        c_io[k] = m->io_seen || r->have_io ? ls->io[k] + r->io[k] + m->lost_io[k]
                                           : NAN; /* unreadable ones left out */
    double c_min = ls->minflt + r->minflt + m->lost_minflt, c_maj = ls->majflt + r->majflt + m->lost_majflt;
    if (!m->have_base) {
        m->have_base = true;
        if (m->cfg.mode != JS_MODE_RUN &&
            !m->cfg.stepd_roots) { /* attach and watch count what was used while
                                    * watched; a job's tasks count from their start */
            m->base_user = c_user;
            m->base_sys = c_sys;
            for (int k = 0; k < IO__MAX; k++)
                m->base_io[k] = isnan(c_io[k]) ? 0 : c_io[k];
            m->base_minflt = c_min;
            m->base_majflt = c_maj;
        }
    }
    /* cumulative values never go backwards: a member read after its parent reaped it is simply missed for
     * one sample, and the kernel's accounting catches up at the next */
    const js_tree_point_t *pv = m->nfed ? &m->prev : NULL;
    pt->user_s = fmax_nan(c_user - m->base_user, pv ? pv->user_s : 0);
    pt->system_s = fmax_nan(c_sys - m->base_sys, pv ? pv->system_s : 0);
    pt->cpu_s = pt->user_s + pt->system_s;
    for (int k = 0; k < IO__MAX; k++) {
        double c = c_io[k] - m->base_io[k];
        pt->io[k] = pv && !isnan(pv->io[k]) && !isnan(c) && pv->io[k] > c ? pv->io[k] : c;
        pt->io_rate[k] = pv && pt->dt_s > 0 ? (pt->io[k] - pv->io[k]) / pt->dt_s : NAN;
    }
    pt->minflt = fmax_nan(c_min - m->base_minflt, pv ? pv->minflt : 0);
    pt->majflt = fmax_nan(c_maj - m->base_majflt, pv ? pv->majflt : 0);
    pt->sampled_cpu_s = ls->sampled + m->sampled_gone;

    int64_t dt_since = 0;
    double dcpu = NAN;
    if (pv) {
        dt_since = pt->dt_ns;
        dcpu = pt->cpu_s - pv->cpu_s;
    } else if (m->cfg.mode == JS_MODE_RUN && m->cfg.start_mono_ns > 0) {
        dt_since = pt->t_mono_ns - m->cfg.start_mono_ns; /* both in [0, 2^62] (replay_model_cfg, sqlite.c) */
        dcpu = pt->cpu_s;
    }
    /* a row's rate covers the interval since the previous sample (none for the first row); the stretch from
     * the command's start to the first sample still feeds the carry and the maximum */
    double rate = rate_carry_step(&m->cpu_rate, dcpu, dt_since);
    pt->cpu_cores = pv ? rate : NAN;
}

/* tree_levels: the tree's memory and count levels of this sample. */
static void tree_levels(js_tree_point_t *pt, const live_sums_t *ls)
{
    size_t n = ls->n;
    pt->rss = ls->have_rss == n && n ? ls->rss : (n ? NAN : 0);
    pt->rss_main = ls->rss_main;
    pt->rss_desc = ls->rss_desc;
    pt->shared = all_or_nan(ls->shared, ls->have_shared, n);
    pt->rss_anon = all_or_nan(ls->opt[OPT_ANON], ls->opt_have[OPT_ANON], n);
    pt->rss_file = all_or_nan(ls->opt[OPT_FILE], ls->opt_have[OPT_FILE], n);
    pt->rss_shmem = all_or_nan(ls->opt[OPT_SHMEM], ls->opt_have[OPT_SHMEM], n);
    pt->swap = all_or_nan(ls->opt[OPT_SWAP], ls->opt_have[OPT_SWAP], n);
    /* the kernel's per-process high-water mark is at least the largest RSS sampled of one process */
    pt->hwm_max = fmax_nan(ls->opt_have[OPT_HWM] ? ls->opt[OPT_HWM] : NAN, ls->max_proc_rss);
    /* the members whose smaps_rollup can be read: one that cannot (another user's) is left out and counted
     * (uss_unreadable), not allowed to void the sums; the PSS sum is missing while a readable member has not
     * been read yet (a new one shares pages it cannot tell); nothing read at all (USS off) is missing */
    size_t n_read = n > ls->uss_left_out ? n - ls->uss_left_out : 0;
    pt->uss = all_or_nan(ls->uss, ls->have_uss, n_read);
    pt->pss = all_or_nan(ls->pss, ls->have_pss, n_read);
    /* a PSS sum is a measurement when every readable member was read at this sample and one of them is alive;
     * a sum of 0 beside a resident RSS is members exiting between their statm and smaps_rollup reads, not a
     * measurement (every peak taken from `pss_read` points inherits this rule: model.c, part_cgroup.c) */
    pt->pss_read = n_read > 0 && ls->pss_read == n_read && ls->live > 0 && !(pt->pss == 0 && pt->rss > 0);
    pt->fds = all_or_nan(ls->opt[OPT_FDS], ls->opt_have[OPT_FDS], n);
    pt->members = (double)n;
    pt->threads = ls->threads;
    pt->main_rss = ls->main_rss;
    pt->main_uss = ls->main_uss;
    pt->main_pss = ls->main_pss;
    pt->main_threads = ls->main_threads;
    pt->main_own_s = ls->main_own_s;
    pt->desc_rss = ls->desc_rss_all ? ls->desc_rss : NAN;
    pt->desc_uss = ls->desc_uss;
    pt->desc_pss = ls->desc_pss;
    pt->smaps_all = n > 0 && ls->smaps_all ? 1 : 0;
    pt->desc_threads = ls->desc_threads;
}

/* summary_add: fold this sample's point and the monitor's own rows into the run summary. */
static void summary_add(js_model_t *m, const js_sample_t *s, const js_value_t *sv, const js_tree_point_t *pt,
                        const live_sums_t *ls)
{
    js_summary_t *su = &m->sum;
    /* a sample of exited members only (zombies: no memory) tells nothing of the scope's memory either */
    bool any = ls->live > 0;
    if (!m->nfed)
        m->t_first = pt->t_mono_ns;
    m->t_last = pt->t_mono_ns;
    su->taken++;
    if (sv && sv[SAMPLES_MISSED].present)
        su->missed = sv[SAMPLES_MISSED].i;
    /* a sample without a live member (a command that exited before it) holds no figure of the scope's memory
     */
    bool levels = any || m->cfg.scope == JS_SCOPE_NODE;
    su->peak_rss_sum = fmax_nan(su->peak_rss_sum, levels ? pt->rss : NAN);
    su->peak_rss_main = fmax_nan(su->peak_rss_main, any ? pt->rss_main : NAN);
    su->peak_rss_desc = fmax_nan(su->peak_rss_desc, any ? pt->rss_desc : NAN);
    su->peak_swap = fmax_nan(su->peak_swap, levels ? pt->swap : NAN);
    /* the PSS peaks: sums measured at one sample (`pss_read`), not the estimates between reads */
    if (pt->pss_read) {
        su->pss_samples++;
        su->peak_pss = fmax_nan(su->peak_pss, pt->pss);
        su->peak_private = fmax_nan(su->peak_private, pt->uss);
        su->peak_shared = fmax_nan(su->peak_shared, pt->pss - pt->uss);
    }
    if (!isnan(pt->hwm_max) && (isnan(su->peak_rss_kernel) || pt->hwm_max > su->peak_rss_kernel)) {
        su->peak_rss_kernel = pt->hwm_max;
        /* which process: the one with the largest RSS now is the best guess when VmHWM was not read */
        const mproc_t *e = ls->max_proc_pid ? pidmap_get(&m->procs, ls->max_proc_pid) : NULL;
        su->peak_kernel_pid = e ? ls->max_proc_pid : 0;
        snprintf(su->peak_kernel_comm, sizeof(su->peak_kernel_comm), "%s", e ? e->comm : "");
    }
    if (pt->members > (double)su->procs_max && pt->members < 9223372036854775808.0)
        su->procs_max = (int64_t)pt->members;
    if (pt->threads > (double)su->threads_max && pt->threads < 9223372036854775808.0)
        su->threads_max = (int64_t)pt->threads;
    const js_rows_t *ex = bound_rows(m, s, TB_EXITS);
    su->procs_reaped += ex ? (int64_t)ex->nrows : 0;
    const js_value_t *self = bound_first(m, s, TB_SELF);
    const int *fc = m->col.self;
    if (self) {
        if (self[fc[CF_UTIME]].present && self[fc[CF_STIME]].present)
            su->mon_cpu_s = ((double)self[fc[CF_UTIME]].i + (double)self[fc[CF_STIME]].i) / 1e6;
        if (self[fc[CF_MAXRSS]].present)
            su->mon_max_rss = fmax_nan(su->mon_max_rss, (double)self[fc[CF_MAXRSS]].i);
        if (self[fc[CF_PREV_WRITE]].present) {
            m->write_ns_sum += (double)self[fc[CF_PREV_WRITE]].i;
            m->write_n++;
        }
        if (self[fc[CF_WRITE_ERRORS]].present)
            su->write_errors = self[fc[CF_WRITE_ERRORS]].i;
    }
    const js_rows_t *ss = sample_rows(s, &table_source_stats);
    for (size_t i = 0; ss && i < ss->nrows; i++) {
        const js_value_t *v = rows_row(ss, i);
        if (v[STATS_DURATION].present)
            m->collect_ns_sum += (double)v[STATS_DURATION].i;
    }
    /* per-command peaks */
    for (size_t i = 0; i < m->procs.cap; i++) {
        mproc_t *e;
        if (pidmap_at(&m->procs, i, (void **)&e) && e->stamp == m->stamp && e->comm_ix && !isnan(e->peak_rss))
            m->comms[e->comm_ix - 1].peak_rss = fmax_nan(m->comms[e->comm_ix - 1].peak_rss, e->peak_rss);
    }
    su->vol_ctxsw = ls->ctxsw[0] + m->ctxsw_gone[0] + m->reaped_ctxsw[0];
    su->invol_ctxsw = ls->ctxsw[1] + m->ctxsw_gone[1] + m->reaped_ctxsw[1];
    if (ls->have_ctxsw != ls->n)
        su->vol_ctxsw = su->invol_ctxsw = NAN;
}

int model_feed(js_model_t *m, int64_t seq, const js_sample_t *s)
{
    model_bind(m, s);
    const js_value_t *sv = first_row(s, &table_samples);
    const js_rows_t *proc = bound_rows(m, s, TB_PROC);
    js_tree_point_t *pt = &m->pt;
    int r;

    m->prev = *pt;
    memset(pt, 0, sizeof(*pt));
    pt->seq = seq;
    pt->t_mono_ns = sv && sv[SAMPLES_T_MONO].present ? sv[SAMPLES_T_MONO].i : 0;
    pt->t_unix_ns = sv && sv[SAMPLES_T_UNIX].present ? sv[SAMPLES_T_UNIX].i : 0;
    pt->dt_ns = m->nfed ? pt->t_mono_ns - m->prev.t_mono_ns : 0;
    pt->dt_s = m->nfed ? ns_to_s(pt->dt_ns) : NAN;
    m->stamp++;
    if (m->stored) { /* the point as the recording kept it; the summary is the stored one */
        model_totals_load(pt, first_row(s, &table_tree_totals));
        if (!m->nfed)
            m->t_first = pt->t_mono_ns;
        m->t_last = pt->t_mono_ns;
        m->npp = 0;
        goto parts;
    }

    live_sums_t ls = {.n = proc ? proc->nrows : 0,
                      .max_proc_rss = NAN,
                      .main_rss = NAN,
                      .main_uss = NAN,
                      .main_pss = NAN,
                      .main_threads = NAN,
                      .main_own_s = NAN,
                      .desc_rss_all = true,
                      .smaps_all = true};
    for (int k = 0; k < 6; k++)
        ls.opt[k] = k == OPT_HWM ? NAN : 0;
    if (ls.n > m->pp_cap) {
        js_proc_point_t *pp = realloc(m->pp, ls.n * sizeof(*pp));
        if (!pp)
            return -ENOMEM;
        m->pp = pp;
        m->pp_cap = ls.n;
    }
    m->npp = ls.n;
    m->last_proc_rows = proc;
    if (m->cfg.embedded)
        mproc_embedded_self(m, bound_first(m, s, TB_SELF));
    for (size_t i = 0; i < ls.n; i++)
        if ((r = mproc_feed(m, rows_row(proc, i), pt->dt_ns, &m->pp[i], &ls)) < 0)
            return r;
    if (ls.have_uss && ls.have_uss < ls.n)
        ls.uss_left_out = mproc_count_uss_unreadable(m);
    mproc_remember_comms(m, bound_rows(m, s, TB_INFO));
    if (m->cfg.stepd_roots && (r = mproc_feed_stepds(m, bound_rows(m, s, TB_STEPD))) < 0)
        return r;
    if ((r = mproc_forget_vanished(m)) < 0)
        return r;
    reaped_t reaped;
    read_reaped(m, bound_first(m, s, TB_TREE), &reaped, pt);
    if (m->cfg.stepd_roots) {
        if ((r = mproc_stepds_reaped(m, &reaped.user, &reaped.sys)) < 0)
            return r;
    }
    const js_value_t *self = m->cfg.embedded ? bound_first(m, s, TB_SELF) : NULL;
    const int *fc = m->col.self;
    if (self && self[fc[CF_UTIME]].present && self[fc[CF_STIME]].present) {
        m->mon_user = (double)self[fc[CF_UTIME]].i / 1e6;
        m->mon_sys = (double)self[fc[CF_STIME]].i / 1e6;
    }
    cumulate(m, pt, &ls, &reaped);
    tree_levels(pt, &ls);
    if (m->cfg.scope == JS_SCOPE_NODE)
        node_cumulate(m, pt, s);
    summary_add(m, s, sv, pt, &ls);
parts:
    m->nfed++;
    m->last = s;
    for (size_t i = 0; i < m->nviews; i++)
        m->views[i].built = -1;
    js_feed_t f = {.seq = seq, .s = s, .m = m};
    for (size_t i = 0; i < m->nparts; i++)
        if (m->part_on[i] && js_model_parts[i]->feed &&
            (r = js_model_parts[i]->feed(m->part_state[i], &f)) < 0)
            return r;
    return 0;
}

const js_tree_point_t *model_point(const js_model_t *m)
{
    return m->nfed ? &m->pt : NULL;
}

const js_proc_point_t *model_procs(const js_model_t *m, size_t *ret_n)
{
    *ret_n = m->npp;
    return m->pp;
}

/* top_lists: the command names that used the most memory (JS_TOP_N) and CPU (JS_TOP_N, then more until
 * they cover JS_TOP_CPU_SHARE of the CPU sampling saw, at most JS_TOP_CPU_MAX; the rest as "others"). */
static void top_lists(const js_model_t *m, js_summary_t *ret)
{
    ret->others_cpu_s = NAN;
    ret->others_commands = 0;
    double *cpu = calloc(m->ncomms ? m->ncomms : 1, sizeof(*cpu));
    if (!cpu)
        return;
    double total = 0, covered = 0;
    for (size_t i = 0; i < m->ncomms; i++)
        cpu[i] = m->comms[i].cpu_gone;
    for (size_t i = 0; i < m->procs.cap; i++) {
        mproc_t *e;
        if (pidmap_at(&m->procs, i, (void **)&e) && e->comm_ix)
            cpu[e->comm_ix - 1] += mproc_own_used_as(e);
    }
    for (size_t i = 0; i < m->ncomms; i++)
        total += cpu[i] > 0 ? cpu[i] : 0;
    bool used_cpu[COMMS_MAX] = {false}, used_rss[COMMS_MAX] = {false};
    for (int k = 0; k < JS_TOP_CPU_MAX; k++) {
        size_t bc = SIZE_MAX, br = SIZE_MAX;
        bool more_cpu = k < JS_TOP_N || covered < JS_TOP_CPU_SHARE * total;
        for (size_t i = 0; i < m->ncomms; i++) {
            if (more_cpu && !used_cpu[i] && cpu[i] > 0 && (bc == SIZE_MAX || cpu[i] > cpu[bc]))
                bc = i;
            if (k < JS_TOP_N && !used_rss[i] && m->comms[i].peak_rss > 0 &&
                (br == SIZE_MAX || m->comms[i].peak_rss > m->comms[br].peak_rss))
                br = i;
        }
        if (bc != SIZE_MAX) {
            used_cpu[bc] = true;
            covered += cpu[bc];
            js_top_t *t = &ret->top_cpu[ret->ntop_cpu++];
            snprintf(t->comm, sizeof(t->comm), "%s", m->comms[bc].comm);
            t->cpu_s = cpu[bc];
            t->peak_rss = m->comms[bc].peak_rss;
            t->procs = m->comms[bc].procs;
        }
        if (br != SIZE_MAX) {
            used_rss[br] = true;
            js_top_t *t = &ret->top_rss[ret->ntop_rss++];
            snprintf(t->comm, sizeof(t->comm), "%s", m->comms[br].comm);
            t->cpu_s = cpu[br];
            t->peak_rss = m->comms[br].peak_rss;
            t->procs = m->comms[br].procs;
        }
    }
    for (size_t i = 0; i < m->ncomms; i++)
        if (!used_cpu[i] && cpu[i] > 0)
            ret->others_commands++;
    if (ret->ntop_cpu)
        ret->others_cpu_s = total - covered > 0 ? total - covered : 0;
    free(cpu);
}

/* scope_totals: the scope's own kernel accounting from the first part that reads it (part.h: the cgroup
 * part), through the parts' interface: the tree model names no part. Returns 0, or -ENOENT. */
static int scope_totals(const js_model_t *m, js_scope_totals_t *ret)
{
    for (size_t i = 0; i < m->nparts; i++)
        if (m->part_on[i] && js_model_parts[i]->scope_totals &&
            js_model_parts[i]->scope_totals(m->part_state[i], ret) == 0 && ret->present)
            return 0;
    return -ENOENT;
}

/* summary_from_cgroup: where the scope's cgroup was made for the run (everything in it is the job's, from 0)
 * or is the scope itself (watch --cgroup), its kernel accounting is the exact CPU total, auto-reaped and
 * unread processes included, and its memory high-water mark the tree-wide peak. */
static void summary_from_cgroup(const js_model_t *m, js_summary_t *ret)
{
    js_scope_totals_t cg;
    /* the scope's own cgroup: made for the run, the watched one, or the watched user's (user-UID.slice) */
    if (scope_totals(m, &cg) < 0)
        return;
    if (!isnan(cg.cpu_s)) {
        ret->cpu_from_cgroup = true;
        ret->cpu_file = cg.cpu_file;
        ret->total_s = cg.cpu_s;
        ret->user_s = cg.user_s;
        ret->system_s = cg.system_s;
        ret->mean_cores = ret->wall_s > 0 ? ret->total_s / ret->wall_s : NAN;
        ret->max_cores = fmax_nan(ret->max_cores, ret->mean_cores);
        ret->efficiency = ret->cores_available > 0 ? ret->mean_cores / ret->cores_available : NAN;
        ret->unattributed_cpu_s = ret->total_s > ret->sampled_s ? ret->total_s - ret->sampled_s : 0;
        ret->exact_cpu = true;
        ret->inexact_cpu_reason = NULL;
    }
    if (!isnan(cg.peak_bytes)) {
        ret->peak_kernel_tree = cg.peak_bytes;
        ret->peak_kernel_tree_method = cg.peak_method;
        ret->exact_peak_rss = true;
    }
}

/* memory_headline: the scope's peak memory counting no page twice, and which figure it is. Where the scope
 * has a cgroup of its own, the cgroup's high-water mark (exact: every page charged to it, page cache
 * included); else the largest PSS sum at one sample (sampled). The kernel's high-water mark of the largest
 * process is a floor (one process held that much at once): where it is above (pages it maps were charged to
 * another cgroup before, shared libraries; or a peak between samples), it is the headline, and the method
 * says so. Without smaps_rollup (--uss-every 0, unreadable), the RSS sum stands in, which counts shared pages
 * once per process. The node: MemTotal - MemAvailable, sampled. A process's VmHWM counts from its start: it
 * is a floor only where every process started within the window (a run, a job's tasks), not for attach and
 * watch, whose processes may have reached it before. */
static void memory_headline(const js_model_t *m, js_summary_t *s)
{
    s->peak_bytes = NAN;
    s->peak_method = NULL;
    s->peak_exact = false;
    if (s->scope == JS_SCOPE_NODE) {
        s->peak_bytes = s->peak_rss_sum;
        s->peak_method = "sampled: the node's memory in use (MemTotal - MemAvailable), largest at one sample";
        return;
    }
    double hwm = m->cfg.mode == JS_MODE_RUN || m->cfg.stepd_roots ? s->peak_rss_kernel : NAN;
    if (!isnan(s->peak_kernel_tree)) {
        if (!(hwm > s->peak_kernel_tree)) {
            s->peak_exact = true;
            s->peak_bytes = s->peak_kernel_tree;
            s->peak_method =
                "cgroup: the kernel's high-water mark of every page charged to the scope's cgroup";
        } else {
            s->peak_bytes = hwm;
            s->peak_method =
                "kernel: the largest process's high-water mark (VmHWM), above the cgroup's: pages it "
                "maps were charged before to another cgroup (shared libraries, page cache)";
        }
        return;
    }
    if (!isnan(s->peak_pss)) {
        if (!(hwm > s->peak_pss)) {
            s->peak_bytes = s->peak_pss;
            s->peak_method = "sampled: the largest sum of the members' PSS at one sample (a page shared by k "
                             "processes counts 1/k in each)";
        } else {
            s->peak_bytes = hwm;
            s->peak_method =
                "kernel: the largest process's high-water mark (VmHWM), above the sampled PSS sum "
                "(shared pages, or a peak between samples)";
        }
        return;
    }
    if (!isnan(s->peak_rss_sum) || !isnan(hwm)) {
        s->peak_bytes = fmax_nan(s->peak_rss_sum, hwm);
        s->peak_method =
            "sampled: the largest sum of the members' RSS at one sample (PSS could not be read: a "
            "page shared by k processes counts k times)";
    }
}

void model_tree_summary(const js_model_t *m, js_summary_t *ret)
{
    if (m->stored) { /* the recording's (model_use_stored) */
        *ret = m->stored_sum;
        ret->cores_bound = m->cfg.cores_bound;
        return;
    }
    *ret = m->sum;
    const js_tree_point_t *pt = &m->pt;
    ret->interval_s = ns_to_s(m->cfg.interval_ns);
    ret->cores_available = m->cfg.cores_available > 0 ? m->cfg.cores_available : NAN;
    ret->ntop_cpu = ret->ntop_rss = 0;
    if (!m->nfed) {
        ret->user_s = ret->system_s = ret->total_s = ret->sampled_s = NAN;
        ret->mean_cores = ret->max_cores = ret->efficiency = ret->wall_s = NAN;
        ret->minflt = ret->majflt = ret->vol_ctxsw = ret->invol_ctxsw = ret->unattributed_cpu_s = NAN;
        for (int k = 0; k < IO__MAX; k++)
            ret->io[k] = NAN;
        ret->mon_mean_cost_s = ret->tree_total_s = ret->peak_kernel_tree = ret->unattributed_floor_s = NAN;
        ret->inexact_cpu_reason = "no sample was recorded";
        ret->scope = m->cfg.scope;
        ret->cores_bound = m->cfg.cores_bound;
        ret->exact_cpu = ret->exact_peak_rss = false;
        return;
    }
    /* the run's start when recorded (not after its first sample: an edited file may say so) */
    int64_t t0 = m->cfg.mode == JS_MODE_RUN && m->cfg.start_mono_ns > 0 && m->cfg.start_mono_ns <= m->t_first
                     ? m->cfg.start_mono_ns
                     : m->t_first;
    ret->wall_s = m->t_last >= t0 ? ns_to_s(m->t_last - t0) : NAN;
    ret->user_s = pt->user_s;
    ret->system_s = pt->system_s;
    ret->total_s = pt->cpu_s;
    ret->sampled_s = pt->sampled_cpu_s;
    ret->minflt = pt->minflt;
    ret->majflt = pt->majflt;
    ret->mean_cores = ret->wall_s > 0 ? ret->total_s / ret->wall_s : NAN;
    /* the whole run is itself one window: the largest rate over any window is at least the mean */
    ret->max_cores = fmax_nan(m->cpu_rate.max_rate, ret->mean_cores);
    ret->efficiency = ret->cores_available > 0 ? ret->mean_cores / ret->cores_available : NAN;
    for (int k = 0; k < IO__MAX; k++)
        ret->io[k] = pt->io[k];
    ret->peak_rss_kernel = fmax_nan(ret->peak_rss_kernel, m->reaped_maxrss);
    if (!isnan(m->reaped_maxrss) && m->reaped_maxrss >= ret->peak_rss_kernel) {
        ret->peak_kernel_pid = 0;
        snprintf(ret->peak_kernel_comm, sizeof(ret->peak_kernel_comm), "(a reaped child)");
    }
    ret->mon_mean_cost_s =
        (m->collect_ns_sum / (double)m->nfed + (m->write_n ? m->write_ns_sum / (double)m->write_n : 0)) / 1e9;
    ret->unattributed_cpu_s = ret->total_s > ret->sampled_s ? ret->total_s - ret->sampled_s : 0;
    ret->unattributed_floor_s = 2.0 * (double)ret->procs_total / (double)m->cfg.clk_tck;
    top_lists(m, ret);
    /* slurmstepd roots: exact while every task that ended was reaped by a slurmstepd seen alive after it */
    bool reaped_all = m->cfg.mode == JS_MODE_RUN || (m->cfg.stepd_roots && !m->lost_any);
    ret->exact_cpu = reaped_all;
    ret->exact_peak_rss = m->cfg.mode == JS_MODE_RUN;
    ret->inexact_cpu_reason = NULL;
    if (!reaped_all && m->cfg.stepd_roots)
        ret->inexact_cpu_reason =
            "a task and its slurmstepd ended within one interval: counted up to its last sample";
    else if (!reaped_all && m->cfg.scope == JS_SCOPE_USER)
        ret->inexact_cpu_reason =
            "sampled: the user's processes up to their last sample, with what they reaped; a "
            "process whose parent is another user's (a root daemon, sudo, cron) is counted "
            "only while sampling sees it, and missed whole if it ends between two samples";
    else if (!reaped_all)
        ret->inexact_cpu_reason = m->cfg.embedded
                                      ? "embedded: exact for the children the process waited for; "
                                        "orphans are counted up to their last sample"
                                      : "sampled: members that exited are counted up to their last sample";
    else if (ret->sigchld_pid)
        ret->inexact_cpu_reason =
            "sampled: a member ignored SIGCHLD: its children were reaped by the kernel, "
            "unaccounted (counted up to their last sample)";
    else if (ret->autoreap_pid)
        ret->inexact_cpu_reason = "sampled: a member's children were reaped by the kernel without accounting "
                                  "(a SIGCHLD handler with SA_NOCLDWAIT): counted up to their last sample";
    else if (ret->unread_samples)
        ret->inexact_cpu_reason = "some members could not be read (descriptor limit)";
    if (ret->inexact_cpu_reason)
        ret->exact_cpu = false;
    /* the largest process's figure rests on ru_maxrss of reaped children, which auto-reaped ones never reach
     */
    if (ret->unread_samples || ret->sigchld_pid || ret->autoreap_pid)
        ret->exact_peak_rss = false;
    ret->scope = m->cfg.scope;
    if (m->cfg.scope == JS_SCOPE_NODE) { /* the host's own accounting (node_cumulate) */
        ret->io_unreadable = 0;
        ret->exact_cpu = true;
        ret->inexact_cpu_reason = NULL;
        ret->sampled_s = ret->unattributed_cpu_s = NAN;
        ret->peak_rss_main = ret->peak_rss_desc = ret->peak_private = ret->peak_shared = ret->peak_pss = NAN;
        ret->peak_swap = NAN;
        ret->vol_ctxsw = ret->invol_ctxsw = NAN;
        ret->sigchld_pid = ret->autoreap_pid = 0;
    }
    ret->tree_total_s = ret->total_s;
    ret->peak_kernel_tree = NAN;
    ret->cores_bound = m->cfg.cores_bound;
}

void model_summary(const js_model_t *m, js_summary_t *ret)
{
    model_tree_summary(m, ret);
    if (!m->nfed)
        return;
    summary_from_cgroup(m, ret);
    memory_headline(m, ret);
}

double model_memory_now(const js_model_t *m)
{
    if (!m->nfed)
        return NAN;
    if (m->cfg.scope == JS_SCOPE_NODE)
        return m->pt.rss; /* MemTotal - MemAvailable */
    js_scope_totals_t cg;
    if (scope_totals(m, &cg) == 0 && !isnan(cg.current_bytes))
        return cg.current_bytes;
    return m->pt.pss;
}

/* ---- views ------------------------------------------------------------------------------------------ */

const js_model_cfg_t *model_cfg(const js_model_t *m)
{
    return &m->cfg;
}

void *model_part_state(const js_model_t *m, const js_model_part_t *part)
{
    for (size_t i = 0; m && i < m->nparts; i++)
        if (js_model_parts[i] == part)
            return m->part_on[i] ? m->part_state[i] : NULL;
    return NULL;
}

void model_parts_summary(const js_model_t *m, js_figure_t *root)
{
    for (size_t i = 0; i < m->nparts; i++)
        if (m->part_on[i] && js_model_parts[i]->summary)
            js_model_parts[i]->summary(m->part_state[i], root);
}
