/* SPDX-License-Identifier: MIT
 *
 * The tree model's per-process state (model_int.h): each process keyed by PID and start time, fed its proc
 * row each sample: its CPU (own and reaped), rates, I/O, faults and memory into the sample's live sums; who
 * accounts for a process that vanished (its live parent, the monitor, or nobody: then its last-seen totals
 * are kept as lost); the command names; the slurmstepd roots of a job without a cgroup.
 */
#include "model/model_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double v_num(const js_value_t *v)
{
    return v->present ? (double)v->i : NAN;
}

static double nan0(double x)
{
    return isnan(x) ? 0 : x;
}

/* comm_entry: the per-command entry of `comm` (created), or NULL when the table is full and cannot grow. */
static uint32_t comm_index(js_model_t *m, const char *comm)
{
    for (size_t i = 0; i < m->ncomms; i++)
        if (strcmp(m->comms[i].comm, comm) == 0)
            return (uint32_t)i + 1;
    if (m->ncomms >= COMMS_MAX) /* the last slot collects every further name */
        return m->ncomms;
    if (m->ncomms == m->comms_cap) {
        size_t cap = m->comms_cap ? m->comms_cap * 2 : 32;
        mcomm_t *c = realloc(m->comms, cap * sizeof(*c));
        if (!c)
            return 0;
        m->comms = c;
        m->comms_cap = cap;
    }
    mcomm_t *c = &m->comms[m->ncomms++];
    memset(c, 0, sizeof(*c));
    snprintf(c->comm, sizeof(c->comm), "%s", m->ncomms == COMMS_MAX ? "(other)" : comm);
    return (uint32_t)m->ncomms;
}

/* own_used: the CPU a process used while monitored (its own, without reaped children), sampled. */
static double own_used(const mproc_t *e)
{
    return e->max_own > e->base_own ? e->max_own - e->base_own : 0;
}

/* mproc_own_used_as: what it used under its current comm */
double mproc_own_used_as(const mproc_t *e)
{
    double base = e->comm_base > e->base_own ? e->comm_base : e->base_own;
    return e->max_own > base ? e->max_own - base : 0;
}

/* lose_io: a vanished member's I/O and faults as last seen (no reaper we can read accounts for them). */
static void lose_io(js_model_t *m, const mproc_t *e)
{
    for (int k = 0; k < IO__MAX; k++)
        if (e->io_ok & (1u << k))
            m->lost_io[k] += e->io[k];
    m->lost_minflt += e->minflt;
    m->lost_majflt += e->majflt;
}

/* check_reaped: parent `e` (just fed) owes the CPU of children that vanished while it lived: its reaped CPU
 * must have grown by as much (the kernel adds a child's utime + cutime to its parent's cutime when the parent
 * waits for it), within 3 ticks (each displayed figure is truncated) and 2%. When it has not, the parent's
 * children were reaped without accounting: by the kernel itself, under a SIGCHLD handler with SA_NOCLDWAIT
 * (which /proc does not show) or with SIGCHLD ignored. What sampling saw of them is added to the totals,
 * which are sampled from then on, and the summary names the parent. */
static void check_reaped(js_model_t *m, int32_t pid, mproc_t *e)
{
    if (!(e->owed > 0) || m->stamp < e->owed_due)
        return;
    double growth = e->reaped[0] - e->owed_base, tol = 3.0 / (double)m->cfg.clk_tck + 0.02 * e->owed;
    double missing = e->owed - (growth > 0 ? growth : 0);
    if (missing > tol) {
        double user = missing * e->owed_user / e->owed;
        m->lost_user += user;
        m->lost_sys += missing - user;
        m->lost_cpu += missing;
        m->sum.autoreap_cpu_s += missing;
        if (!m->sum.autoreap_pid) {
            m->sum.autoreap_pid = pid;
            snprintf(m->sum.autoreap_comm, sizeof(m->sum.autoreap_comm), "%s", e->comm);
        }
    }
    e->owed = e->owed_user = 0;
}

/* owe: child `c` vanished while its parent `up` lives: `up` must have reaped it, and its reaped CPU must grow
 * by the child's figures as last seen. The baseline is the parent's reaped CPU at a row read before the
 * child's last one (a sample earlier; in a tree, where parents are read first, the same sample will do);
 * it is checked one sample later, when a reap just after the parent's row has shown up. */
static void owe(js_model_t *m, mproc_t *up, const mproc_t *c)
{
    int k = -1;
    for (int i = 0; i < 3 && k < 0; i++)
        if (up->reaped_stamp[i] && up->reaped_stamp[i] < c->stamp)
            k = i;
    for (int i = 0; i < 3 && k < 0 && m->cfg.scope == JS_SCOPE_TREE; i++)
        if (up->reaped_stamp[i] && up->reaped_stamp[i] == c->stamp)
            k = i;
    if (k < 0 || !(c->cpu_all > 0))
        return; /* no row of the parent before the child's last: nothing to compare with */
    if (!(up->owed > 0) || up->reaped[k] < up->owed_base)
        up->owed_base = up->reaped[k];
    up->owed += c->cpu_all;
    up->owed_user += c->user_all;
    up->owed_due = m->stamp + 1;
}

/* vanish: a member is gone; decide whether someone we see accounts for its totals. */
static void vanish(js_model_t *m, const mproc_t *e)
{
    mproc_t *parent = pidmap_get(&m->procs, e->ppid);
    if (parent && parent->stamp == m->stamp && e->ppid != m->cfg.monitor_pid)
        owe(m, parent, e);
    m->sampled_gone += own_used(e);
    if (e->comm_ix)
        m->comms[e->comm_ix - 1].cpu_gone += mproc_own_used_as(e);
    if (m->cfg.mode == JS_MODE_RUN)
        return; /* reaped by a live member (its cutime) or by the monitor (RUSAGE_CHILDREN) */
    /* status context switches do not include reaped children: keep the last seen figures */
    m->ctxsw_gone[0] += nan0(e->vcsw);
    m->ctxsw_gone[1] += nan0(e->ivcsw);
    /* up through the members that vanished with it: the first live member above absorbs them all (its
     * cutime and io take each child it reaps, and that child's took its own); with slurmstepd roots, a
     * slurmstepd that still lives has reaped its task, and its reaped CPU absorbs them (not the io, which a
     * root keeps from the job's user: last seen) */
    int32_t pp = e->ppid;
    for (int depth = 0; depth < 4096; depth++) {
        const mproc_t *up = pidmap_get(&m->procs, pp);
        if (up && up->stamp == m->stamp)
            return; /* a live member reaps it (or has) */
        const mstepd_t *sd = m->cfg.stepd_roots ? pidmap_get(&m->stepds, pp) : NULL;
        if (sd && sd->stamp == m->stamp) {
            lose_io(m, e);
            return;
        }
        if (!up || up->ppid == pp)
            break; /* above the members */
        pp = up->ppid;
    }
    if (!e->zombie)
        m->lost_any = true; /* a zombie's totals were final: nothing of it is missing */
    m->lost_cpu += e->cpu_all;
    m->lost_user += e->user_all;
    m->lost_sys += e->sys_all;
    lose_io(m, e);
}

static const int opt_cols[6] = {CP_RSS_ANON, CP_RSS_FILE, CP_RSS_SHMEM, CP_SWAP, CP_HWM, CP_FDS};

#define SIGCHLD_BIT (UINT64_C(1) << 16) /* SIGCHLD is 17 on Linux: bit 16 of the sigignore mask */

/* proc_rates: a process's own CPU and storage rates over the interval (not for one first seen). A short
 * interval (the closing sample) gives the mean over it and the one before, as for the tree. */
static void proc_rates(const js_model_t *m, mproc_t *e, int fresh, double own, const double *io_now,
                       int64_t dt_ns, js_proc_point_t *pp)
{
    pp->cpu_cores = pp->read_bps = pp->write_bps = NAN;
    if (!fresh && dt_ns > 0) {
        double dt = ns_to_s(dt_ns), before = e->own;
        int64_t span = dt_ns;
        if (model_interval_short(&m->cfg, dt_ns) && e->dt_prev_ns > 0) {
            span += e->dt_prev_ns;
            before = e->own_prev;
        }
        pp->cpu_cores = own >= before ? (own - before) / ns_to_s(span) : NAN;
        if (m->cfg.cores_available > 0 && pp->cpu_cores > m->cfg.cores_available)
            pp->cpu_cores = m->cfg.cores_available; /* whole ticks over a few ms */
        if (!isnan(io_now[IO_READ]) && (e->io_ok & (1u << IO_READ)))
            pp->read_bps = (io_now[IO_READ] - e->io[IO_READ]) / dt;
        if (!isnan(io_now[IO_WRITE]) && (e->io_ok & (1u << IO_WRITE)))
            pp->write_bps = (io_now[IO_WRITE] - e->io[IO_WRITE]) / dt;
        e->own_prev = e->own;
        e->dt_prev_ns = dt_ns;
    }
}

/* proc_cpu: a process's CPU state from this row (own, with its reaped children, what it reaped lately). */
static void proc_cpu(js_model_t *m, mproc_t *e, int32_t pid, int fresh, double ut, double st, double cut,
                     double cst)
{
    double own = ut + st;
    /* attach/watch: what it used before monitoring began is not ours: a process of the first sample, or
     * one older than it first seen later (watch --node --top: it became a top process) counts from its
     * first row (what it used between the first sample and that row is not known: not counted) */
    if (fresh && m->cfg.mode != JS_MODE_RUN && !m->cfg.stepd_roots &&
        (m->nfed == 0 || (double)e->start < m->window_ticks))
        e->base_own = own;
    e->own = own;
    e->max_own = fmax_nan(e->max_own, own);
    e->user_all = ut + (isnan(cut) ? 0 : cut);
    e->sys_all = st + (isnan(cst) ? 0 : cst);
    e->cpu_all = e->user_all + e->sys_all;
    if (!isnan(cut) && !isnan(cst)) {
        memmove(&e->reaped[1], &e->reaped[0], 2 * sizeof(e->reaped[0]));
        memmove(&e->reaped_stamp[1], &e->reaped_stamp[0], 2 * sizeof(e->reaped_stamp[0]));
        e->reaped[0] = cut + cst;
        e->reaped_stamp[0] = m->stamp;
        check_reaped(m, pid, e);
    }
}

/* proc_io: a process's I/O counters (this sample's, else the last read) into the live sums; one whose
 * counters cannot be read is counted once as unreadable. */
static void proc_io(js_model_t *m, mproc_t *e, const js_value_t *v, const double *io_now, live_sums_t *ls)
{
    const int *pc = m->col.proc;
    bool io_read = false;
    for (int k = 0; k < IO__MAX; k++) {
        if (!isnan(io_now[k])) {
            e->io[k] = io_now[k];
            e->io_ok |= (uint8_t)(1u << k);
            io_read = true;
        }
        if (e->io_ok & (1u << k)) {
            ls->io[k] += e->io[k];
            ls->io_have[k]++;
        }
    }
    m->io_seen |= io_read;
    /* unreadable is not zero: such a process is left out of the I/O totals and counted; a zombie's own file
     * may be gone, but its I/O arrives in its reaper's counters when it is reaped */
    if (!io_read && !e->io_missing && !e->zombie &&
        !(v[pc[CP_STATE]].present && m->last_proc_rows &&
          rows_str(m->last_proc_rows, &v[pc[CP_STATE]])[0] == 'X')) {
        e->io_missing = true;
        m->sum.io_unreadable++;
    }
}

/* proc_memory: a process's memory, descriptors, context switches and threads into the live sums; a member
 * that ignores SIGCHLD is named. `host`: the embedding process (its monitor thread's share is taken off). */
static void proc_memory(js_model_t *m, mproc_t *e, const js_value_t *v, int32_t pid, bool host,
                        live_sums_t *ls)
{
    const int *pc = m->col.proc;
    if (v[pc[CP_RSS]].present) {
        double r = (double)v[pc[CP_RSS]].i;
        ls->rss += r;
        ls->have_rss++;
        if (pid == m->cfg.root_pid)
            ls->rss_main += r;
        else
            ls->rss_desc += r;
        e->peak_rss = fmax_nan(e->peak_rss, r);
        if (isnan(ls->max_proc_rss) || r > ls->max_proc_rss) {
            ls->max_proc_rss = r;
            ls->max_proc_pid = pid;
        }
    }
    if (v[pc[CP_SHARED]].present) {
        ls->shared += (double)v[pc[CP_SHARED]].i;
        ls->have_shared++;
    }
    for (int k = 0; k < 6; k++) {
        const js_value_t *o = &v[pc[opt_cols[k]]];
        if (!o->present)
            continue;
        ls->opt_have[k]++;
        double x = (double)o->i;
        if (k == OPT_FDS && host && !isnan(m->mon_fds))
            x = fmax(0, x - m->mon_fds); /* the embedding's own descriptors */
        ls->opt[k] = k == OPT_HWM ? fmax_nan(ls->opt[k], x) : ls->opt[k] + x;
    }
    /* USS and PSS are read for every member at once, now and then (proc_tree's read_smaps_all); between reads
     * a process's figures are its last ones moved by its RSS change since (pages it maps or unmaps are its
     * own until the next read shows how they are shared) */
    e->rss = v[pc[CP_RSS]].present ? (double)v[pc[CP_RSS]].i : NAN;
    if (v[pc[CP_PSS]].present || v[pc[CP_USS]].present) {
        e->pss = v[pc[CP_PSS]].present ? (double)v[pc[CP_PSS]].i : NAN;
        e->uss = v[pc[CP_USS]].present ? (double)v[pc[CP_USS]].i : NAN;
        e->rss_at_smaps = e->rss;
        ls->pss_read += v[pc[CP_PSS]].present;
    }
    if (v[pc[CP_VCSW]].present)
        e->vcsw = (double)v[pc[CP_VCSW]].i;
    if (v[pc[CP_IVCSW]].present)
        e->ivcsw = (double)v[pc[CP_IVCSW]].i;
    double moved = !isnan(e->rss) && !isnan(e->rss_at_smaps) ? e->rss - e->rss_at_smaps : 0;
    if (!isnan(e->uss)) {
        ls->uss += fmax(0, e->uss + moved);
        ls->have_uss++;
    }
    if (!isnan(e->pss)) {
        ls->pss += fmax(0, e->pss + moved);
        ls->have_pss++;
    }
    if (!isnan(e->vcsw) && !isnan(e->ivcsw)) {
        ls->ctxsw[0] += e->vcsw;
        ls->ctxsw[1] += e->ivcsw;
        ls->have_ctxsw++;
    }
    if (v[pc[CP_SIGIGNORE]].present && ((uint64_t)v[pc[CP_SIGIGNORE]].i & SIGCHLD_BIT) &&
        !m->sum.sigchld_pid) {
        m->sum.sigchld_pid = pid; /* its children are reaped by the kernel, their usage accounted to nobody */
        snprintf(m->sum.sigchld_comm, sizeof(m->sum.sigchld_comm), "%s", e->comm);
    }
    ls->live += !e->zombie && !(v[pc[CP_RSS]].present && v[pc[CP_RSS]].i == 0); /* RSS 0: exiting, mm gone */
    double threads = v[pc[CP_THREADS]].present ? (double)v[pc[CP_THREADS]].i : 0;
    if (host && !isnan(m->mon_threads) && threads > m->mon_threads)
        threads -= m->mon_threads; /* the monitor thread is not the job's */
    ls->threads += threads;
}

/* proc_split: the split part's figures (js_tree_point_t main_*, desc_*): the root against the others, each
 * value as read (ticks, not the BPF backend's ns; USS and PSS as this row has them, not moved by RSS). */
static void proc_split(js_model_t *m, const js_value_t *v, int32_t pid, bool host, live_sums_t *ls)
{
    const int *pc = m->col.proc;
    const double tck = (double)m->cfg.clk_tck;
    double r_rss = v_num(&v[pc[CP_RSS]]), r_uss = v_num(&v[pc[CP_USS]]), r_pss = v_num(&v[pc[CP_PSS]]),
           r_thr = v_num(&v[pc[CP_THREADS]]);
    ls->smaps_all &= !isnan(r_uss) && !isnan(r_pss);
    if (pid == m->cfg.root_pid) {
        ls->main_rss = r_rss;
        ls->main_uss = r_uss;
        ls->main_pss = r_pss;
        ls->main_threads =
            host && !isnan(m->mon_threads) && r_thr > m->mon_threads ? r_thr - m->mon_threads : r_thr;
        ls->main_own_s = (v_num(&v[pc[CP_UTIME]]) + v_num(&v[pc[CP_STIME]])) / tck;
    } else {
        ls->desc_rss_all &= !isnan(r_rss);
        ls->desc_rss += r_rss;
        ls->desc_uss += r_uss;
        ls->desc_pss += r_pss;
        ls->desc_threads += isnan(r_thr) ? 0 : r_thr;
    }
}

/* mproc_feed: one proc row: update the process's state, its per-process rates (*pp) and the live sums. */
int mproc_feed(js_model_t *m, const js_value_t *v, int64_t dt_ns, js_proc_point_t *pp, live_sums_t *ls)
{
    const int *pc = m->col.proc;
    const double tck = (double)m->cfg.clk_tck;
    int32_t pid = (int32_t)v[pc[CP_PID]].i;
    uint64_t start = (uint64_t)v[pc[CP_START_TICKS]].i;
    mproc_t *e = pidmap_get(&m->procs, pid);
    if (m->seen_stamp != m->stamp) {
        m->seen_stamp = m->stamp;
        m->nseen = 0;
    }
    if (e && e->start != start) { /* PID reused within one interval */
        mproc_t old = *e;
        m->nseen -= old.stamp == m->stamp;
        pidmap_del(&m->procs, pid);
        vanish(m, &old);
        e = NULL;
    }
    int fresh = 0;
    if (!e) {
        e = pidmap_put(&m->procs, pid, &fresh);
        if (!e)
            return -ENOMEM;
        e->start = start;
        e->uss = e->pss = e->vcsw = e->ivcsw = e->peak_rss = e->rss_at_smaps = e->rss = NAN;
        m->sum.procs_total++;
    }
    double ut = v_num(&v[pc[CP_UTIME]]) / tck, st = v_num(&v[pc[CP_STIME]]) / tck;
    double cut = v_num(&v[pc[CP_CUTIME]]) / tck, cst = v_num(&v[pc[CP_CSTIME]]) / tck;
    if (v[pc[CP_CPU_NS]].present && ut + st >= 0) {
        /* the BPF backend's nanosecond-exact CPU of every thread, split as the ticks are (cputime_adjust) */
        double ns = ns_to_s(v[pc[CP_CPU_NS]].i), ticks = ut + st;
        ut = ticks > 0 ? ns * ut / ticks : ns;
        st = ns - ut;
    }
    double own = ut + st;
    /* this sample's I/O counters; the embedding process's without its monitor thread's own */
    bool host = m->cfg.embedded && pid == m->cfg.root_pid;
    double io_now[IO__MAX] = {0}; /* every entry set below (initialised for the analyzer) */
    for (int k = 0; k < IO__MAX; k++) {
        io_now[k] = v[pc[CP_RCHAR + k]].present ? (double)v[pc[CP_RCHAR + k]].i : NAN;
        if (host && !isnan(io_now[k]) && !isnan(m->mon_io[k]))
            io_now[k] = fmax(0, io_now[k] - m->mon_io[k]);
    }
    proc_rates(m, e, fresh, own, io_now, dt_ns, pp);
    m->nseen += fresh || e->stamp != m->stamp;
    e->stamp = m->stamp;
    e->zombie = v[pc[CP_STATE]].present && m->last_proc_rows &&
                rows_str(m->last_proc_rows, &v[pc[CP_STATE]])[0] == 'Z';
    e->ppid = v[pc[CP_PPID]].present ? (int32_t)v[pc[CP_PPID]].i : 0;
    if (!isnan(own))
        proc_cpu(m, e, pid, fresh, ut, st, cut, cst);
    proc_io(m, e, v, io_now, ls);
    if (v[pc[CP_MINFLT]].present)
        e->minflt =
            (double)v[pc[CP_MINFLT]].i + (v[pc[CP_CMINFLT]].present ? (double)v[pc[CP_CMINFLT]].i : 0);
    if (v[pc[CP_MAJFLT]].present)
        e->majflt =
            (double)v[pc[CP_MAJFLT]].i + (v[pc[CP_CMAJFLT]].present ? (double)v[pc[CP_CMAJFLT]].i : 0);
    ls->user += e->user_all;
    ls->sys += e->sys_all;
    ls->minflt += e->minflt;
    ls->majflt += e->majflt;
    ls->sampled += own_used(e);

    proc_memory(m, e, v, pid, host, ls);
    proc_split(m, v, pid, host, ls);
    return 0;
}

/* mproc_count_uss_unreadable: the live members of this sample with no USS/PSS ever read while others' were
 * (another user's smaps_rollup): counted once each in the summary; the sums leave them out (tree_levels). A
 * zombie or a process with no resident memory (a kernel thread) leaves nothing out. Returns how many members
 * of this sample are left out. */
size_t mproc_count_uss_unreadable(js_model_t *m)
{
    size_t out = 0;
    for (size_t i = 0; i < m->procs.cap; i++) {
        mproc_t *e;
        if (!pidmap_at(&m->procs, i, (void **)&e) || e->stamp != m->stamp)
            continue;
        if (isnan(e->uss) && !e->zombie && !e->uss_missing &&
            e->peak_rss != 0) { /* no RSS: a kernel thread */
            e->uss_missing = true;
            m->sum.uss_unreadable++;
        }
        out += e->uss_missing && isnan(e->uss); /* read since: in the sums again */
    }
    return out;
}

/* mproc_embedded_self: the monitor thread's own I/O, threads and descriptors of this sample (self row), which
 * mproc_feed takes off the embedding process's figures; what the row lacks is NAN (nothing is taken off). */
void mproc_embedded_self(js_model_t *m, const js_value_t *self)
{
    const int *fc = m->col.self;
    for (int k = 0; k < IO__MAX; k++)
        m->mon_io[k] = self && self[fc[CF_IO_RCHAR + k]].present ? (double)self[fc[CF_IO_RCHAR + k]].i : NAN;
    m->mon_threads = self && self[fc[CF_THREADS]].present ? (double)self[fc[CF_THREADS]].i : NAN;
    m->mon_fds = self && self[fc[CF_FDS]].present ? (double)self[fc[CF_FDS]].i : NAN;
}

/* mproc_forget_vanished: members not in this sample have gone; account for them and drop their state. */
int mproc_forget_vanished(js_model_t *m)
{
    size_t ngone = 0;
    if (m->seen_stamp == m->stamp && m->nseen == m->procs.count)
        return 0; /* every member was fed this sample: none has gone (no walk over the table) */
    if (m->seen_stamp != m->stamp && !m->procs.count)
        return 0;
    for (size_t i = 0; i < m->procs.cap; i++) {
        mproc_t *e;
        int32_t pid = pidmap_at(&m->procs, i, (void **)&e);
        if (!pid || e->stamp == m->stamp)
            continue;
        if (ngone == m->gone_cap) {
            size_t c = m->gone_cap ? m->gone_cap * 2 : 64;
            int32_t *g = realloc(m->gone, c * sizeof(*g));
            if (!g)
                return -ENOMEM;
            m->gone = g;
            m->gone_cap = c;
        }
        m->gone[ngone++] = pid;
        vanish(m, e);
    }
    for (size_t i = 0; i < ngone; i++)
        pidmap_del(&m->procs, m->gone[i]);
    return 0;
}

/* mproc_remember_comms: the command name of each process first seen (or exec'd) in this sample, for the views
 * and the per-command figures. */
void mproc_remember_comms(js_model_t *m, const js_rows_t *info)
{
    const int *ic = m->col.info;
    for (size_t i = 0; info && i < info->nrows; i++) {
        const js_value_t *v = rows_row(info, i);
        mproc_t *e = v[ic[CI_PID]].present ? pidmap_get(&m->procs, (int32_t)v[ic[CI_PID]].i) : NULL;
        if (!e || !v[ic[CI_START_TICKS]].present || e->start != (uint64_t)v[ic[CI_START_TICKS]].i)
            continue;
        const char *comm = v[ic[CI_COMM]].present ? rows_str(info, &v[ic[CI_COMM]]) : "";
        if (e->comm_ix) { /* an exec: what it used under its former name stays there */
            m->comms[e->comm_ix - 1].cpu_gone += mproc_own_used_as(e);
            e->comm_base = e->max_own;
        }
        snprintf(e->comm, sizeof(e->comm), "%s", comm);
        e->comm_ix = comm_index(m, comm);
        if (e->comm_ix)
            m->comms[e->comm_ix - 1].procs++;
        if (m->sum.sigchld_pid == (int32_t)v[ic[CI_PID]].i && !m->sum.sigchld_comm[0])
            snprintf(m->sum.sigchld_comm, sizeof(m->sum.sigchld_comm), "%s", comm);
    }
}

/* mproc_feed_stepds: this sample's slurmstepd roots (before the vanished members are judged: a task whose
 * slurmstepd lives has been reaped by it). A root seen again with another start time is another process. */
int mproc_feed_stepds(js_model_t *m, const js_rows_t *rows)
{
    double tck = m->cfg.clk_tck > 0 ? (double)m->cfg.clk_tck : 100.0;
    const int *sc = m->col.stepd;
    for (size_t i = 0; rows && i < rows->nrows; i++) {
        const js_value_t *v = rows_row(rows, i);
        if (!v[sc[CS_PID]].present || !v[sc[CS_CUTIME]].present || !v[sc[CS_CSTIME]].present)
            continue;
        int fresh = 0;
        mstepd_t *sd = pidmap_put(&m->stepds, (int32_t)v[sc[CS_PID]].i, &fresh);
        if (!sd)
            return -ENOMEM;
        uint64_t start = v[sc[CS_START_TICKS]].present ? (uint64_t)v[sc[CS_START_TICKS]].i : 0;
        if (!fresh && sd->start != start) { /* PID reuse: the old one is gone */
            m->stepd_gone_user += sd->user;
            m->stepd_gone_sys += sd->sys;
        }
        if (fresh || sd->start != start)
            sd->user = sd->sys = 0;
        sd->start = start;
        sd->stamp = m->stamp;
        sd->user = fmax(sd->user, (double)v[sc[CS_CUTIME]].i / tck);
        sd->sys = fmax(sd->sys, (double)v[sc[CS_CSTIME]].i / tck);
    }
    return 0;
}

/* mproc_stepds_reaped: add what every slurmstepd root reaped (live ones now, gone ones as last seen) to the
 * reaped totals, and forget the roots not seen this sample. */
int mproc_stepds_reaped(js_model_t *m, double *user, double *sys)
{
    size_t ngone = 0;
    for (size_t i = 0; i < m->stepds.cap; i++) {
        mstepd_t *sd;
        int32_t pid = pidmap_at(&m->stepds, i, (void **)&sd);
        if (!pid)
            continue;
        if (sd->stamp != m->stamp) {
            m->stepd_gone_user += sd->user;
            m->stepd_gone_sys += sd->sys;
            if (ngone == m->gone_cap) {
                size_t c = m->gone_cap ? m->gone_cap * 2 : 64;
                int32_t *g = realloc(m->gone, c * sizeof(*g));
                if (!g)
                    return -ENOMEM;
                m->gone = g;
                m->gone_cap = c;
            }
            m->gone[ngone++] = pid;
            continue;
        }
        *user += sd->user;
        *sys += sd->sys;
    }
    for (size_t i = 0; i < ngone; i++)
        pidmap_del(&m->stepds, m->gone[i]);
    *user += m->stepd_gone_user;
    *sys += m->stepd_gone_sys;
    return 0;
}
