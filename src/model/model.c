/* SPDX-License-Identifier: MIT
 *
 * The model layer (see model.h): per-process state keyed by PID and start time, tree sums per sample, exact
 * cumulative totals, rates with counter resets handled, and the run summary.
 */
#include "model/model.h"

#include "model/part_cgroup.h"

#include "sources/proc_tree.h"
#include "sources/self.h"
#include "core/pidmap.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t start;
    uint64_t stamp;
    int32_t ppid;
    double cpu_all, user_all, sys_all; /* own + reaped children, seconds */
    double own, max_own;               /* own utime+stime, seconds */
    double base_own;          /* attach mode: own CPU before monitoring began (present at the start) */
    double comm_base;         /* own CPU when it took its current comm (an exec) */
    double own_prev, dt_prev; /* own CPU at the row before the last one, and that row's interval */
    double io[IO__MAX];
    uint8_t io_ok;    /* bit per IO_* known */
    bool io_missing;  /* its io could not be read at some sample (while not a zombie) */
    bool uss_missing; /* its smaps_rollup could never be read while others' could (not a zombie) */
    double minflt, majflt;
    double uss, pss;     /* last read (smaps_rollup of every member at once, now and then), NAN before */
    double rss_at_smaps; /* its RSS at that read */
    double rss;          /* its RSS at this sample, NAN when unread */
    double vcsw, ivcsw;  /* last read (status cadence), NAN before the first */
    double peak_rss;
    uint32_t comm_ix; /* index + 1 in the per-command table, 0 before its comm is known */
    bool zombie;      /* last seen exited (state Z): its totals were final */
    /* what it reaped (cutime + cstime, seconds) at its last three rows, newest first, and their samples: a
     * child that vanishes while its parent lives must show up there (check_reaped) */
    double reaped[3];
    uint64_t reaped_stamp[3];
    double owed, owed_user; /* CPU of its children that vanished (as last seen), not yet found in `reaped` */
    double owed_base;       /* its reaped CPU before the first of them vanished */
    uint64_t owed_due;      /* the sample at which `reaped` must have grown by `owed` */
    char comm[64];          /* from proc_info, for the process view */
} mproc_t;

/* Per command name: what its processes used (the summary's top lists). */
typedef struct {
    char comm[64];
    double cpu_gone; /* own CPU of its processes that have vanished */
    double peak_rss;
    int64_t procs;
} mcomm_t;

#define COMMS_MAX 4096 /* distinct command names kept; more are counted under "(other)" */

/* A built view: rows for the sample numbered `built` (-1: not built since the last feed). */
typedef struct {
    const js_table_t *table;
    js_rows_t rows;
    int64_t built;
} view_cache_t;

/* A slurmstepd root (the stepd table): what it has reaped, its tasks' CPU, in seconds. */
typedef struct {
    uint64_t start, stamp;
    double user, sys;
} mstepd_t;

struct js_model {
    js_model_cfg_t cfg;
    js_pidmap_t procs;
    uint64_t stamp;
    int64_t nfed;
    js_tree_point_t pt, prev;
    js_proc_point_t *pp;
    size_t npp, pp_cap;
    int32_t *gone;
    size_t gone_cap;
    /* totals of members that vanished unreaped by anyone we see (attach mode) */
    double lost_cpu, lost_user, lost_sys, lost_io[IO__MAX], lost_minflt, lost_majflt;
    double sampled_gone;  /* sum of max_own - base_own of vanished processes */
    double ctxsw_gone[2]; /* last-seen context switches of vanished processes */
    /* baseline subtracted from cumulative values (attach mode: the first sample) */
    bool have_base;
    double base_cpu, base_user, base_sys, base_io[IO__MAX], base_minflt, base_majflt;
    rate_carry_t cpu_rate;
    js_summary_t sum;
    int64_t t_first, t_last;
    double collect_ns_sum, write_ns_sum;
    int64_t write_n;
    double reaped_maxrss, reaped_ctxsw[2];
    double mon_user, mon_sys; /* embedded: the monitor thread's CPU (self table), seconds */
    /* embedded: the monitor thread's own I/O (cumulative), its threads and the embedding's descriptors in the
     * host's table, from this sample's self row: taken off the root's (NAN: not recorded, nothing taken) */
    double mon_io[IO__MAX], mon_threads, mon_fds;
    /* slurmstepd roots (cfg.stepd_roots): pid -> mstepd_t; what the gone ones had reaped, in seconds */
    js_pidmap_t stepds;
    double stepd_gone_user, stepd_gone_sys;
    bool lost_any;       /* a member vanished with nobody seen to reap it: its last interval is missing */
    bool io_seen;        /* a member's I/O counters were read at some sample */
    double window_ticks; /* start_ticks clock (CLOCK_BOOTTIME, in ticks) at the first sample; NAN unknown */
    const js_rows_t *last_proc_rows; /* the proc rows being fed (their strings) */
    mcomm_t *comms;
    size_t ncomms, comms_cap;
    /* node scope: the host's busy CPU (ticks) and used memory from the system source's tables */
    struct {
        const js_table_t *cpu, *mem, *tree;
        int c_id, c_busy[6], c_user[2], m_total, m_avail, t_nprocs;
        bool have_base;
        double base_busy, base_user;
    } node;
    /* the last fed sample (borrowed: the views read it) and the model parts */
    const js_sample_t *last;
    size_t nparts;
    void **part_state;
    bool *part_on;
    view_cache_t *views;
    size_t nviews, views_cap;
    /* replaying stored aggregates (model_use_stored): tree points from tree_totals, this summary */
    bool stored;
    js_summary_t stored_sum;
    char *stored_reason; /* stored_sum.inexact_cpu_reason's text (owned) */
};

void rate_carry_init(rate_carry_t *c, double cap, double nominal_dt)
{
    c->cap = cap;
    c->min_dt = nominal_dt / 2;
    c->carry = 0;
    c->max_rate = NAN;
    c->prev_dt = c->prev_rate = 0;
}

double rate_carry_step(rate_carry_t *c, double d, double dt)
{
    if (!(dt > 0))
        return NAN;
    if (d > 0)
        c->carry += d;
    double span = dt;
    if (dt < c->min_dt && c->prev_dt > 0) { /* too short on its own: the mean over it and the row before */
        span = dt + c->prev_dt;
        c->carry += c->prev_rate * c->prev_dt;
    }
    double rate = c->carry / span;
    if (c->cap > 0 && rate > c->cap)
        rate = c->cap;
    c->carry -= rate * span;
    if (c->carry < 0)
        c->carry = 0;
    if (span >= c->min_dt && (isnan(c->max_rate) || rate > c->max_rate))
        c->max_rate = rate;
    c->prev_dt = span;
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
    rate_carry_init(&m->cpu_rate, cfg->cores_available, (double)cfg->interval_ns / 1e9);
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

static void totals_load(js_tree_point_t *pt, const js_value_t *v);
static void tree_summary(const js_model_t *m, js_summary_t *ret);

static double v_num(const js_value_t *v)
{
    return v->present ? (double)v->i : NAN;
}

static double fmax_nan(double a, double b)
{
    if (isnan(a))
        return b;
    if (isnan(b))
        return a;
    return a > b ? a : b;
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

/* own_used_as: what it used under its current comm */
static double own_used_as(const mproc_t *e)
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
        m->comms[e->comm_ix - 1].cpu_gone += own_used_as(e);
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

static const js_value_t *first_row(const js_sample_t *s, const js_table_t *t)
{
    const js_rows_t *r = sample_rows(s, t);
    return r && r->nrows ? rows_row(r, 0) : NULL;
}

/* all_or_nan: a tree sum is present only when every live member's value was */
static double all_or_nan(double sum, size_t have, size_t n)
{
    return have == n && n > 0 ? sum : NAN;
}

/* Sums over the live members of one sample. */
typedef struct {
    size_t n;
    double user, sys, io[IO__MAX], minflt, majflt, sampled;
    size_t io_have[IO__MAX];
    double rss, rss_main, rss_desc, shared, threads;
    size_t have_rss, have_shared;
    double opt[6]; /* opt_cols order; HWM is a maximum, the rest sums */
    size_t opt_have[6];
    double uss, pss, ctxsw[2];
    size_t have_uss, have_pss, have_ctxsw;
    size_t pss_read;     /* members whose smaps_rollup was read at this sample */
    size_t uss_left_out; /* members whose smaps_rollup cannot be read (count_uss_unreadable) */
    double max_proc_rss; /* largest single-process RSS */
    int32_t max_proc_pid;
    /* the split part's figures (js_tree_point_t main_*, desc_*) */
    double main_rss, main_uss, main_pss, main_threads, main_own_s, desc_rss, desc_uss, desc_pss, desc_threads;
    bool desc_rss_all, smaps_all;
} live_sums_t;

static const int opt_cols[6] = {PROC_RSS_ANON, PROC_RSS_FILE, PROC_RSS_SHMEM, PROC_SWAP, PROC_HWM, PROC_FDS};
enum { OPT_ANON, OPT_FILE, OPT_SHMEM, OPT_SWAP, OPT_HWM, OPT_FDS };

/* What the monitor has reaped so far (run mode), from the tree row. */
typedef struct {
    double user, sys, io[IO__MAX], minflt, majflt;
    bool have_io; /* the monitor's reaped I/O was read (run mode) */
} reaped_t;

#define SIGCHLD_BIT (UINT64_C(1) << 16) /* SIGCHLD is 17 on Linux: bit 16 of the sigignore mask */

/* feed_proc: one proc row: update the process's state, its per-process rates (*pp) and the live sums. */
static int feed_proc(js_model_t *m, const js_value_t *v, double dt, js_proc_point_t *pp, live_sums_t *ls)
{
    const double tck = (double)m->cfg.clk_tck;
    int32_t pid = (int32_t)v[PROC_PID].i;
    uint64_t start = (uint64_t)v[PROC_START_TICKS].i;
    mproc_t *e = pidmap_get(&m->procs, pid);
    if (e && e->start != start) { /* PID reused within one interval */
        mproc_t old = *e;
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
    double ut = v_num(&v[PROC_UTIME]) / tck, st = v_num(&v[PROC_STIME]) / tck;
    double cut = v_num(&v[PROC_CUTIME]) / tck, cst = v_num(&v[PROC_CSTIME]) / tck;
    if (v[PROC_CPU_NS].present && ut + st >= 0) {
        /* the BPF backend's nanosecond-exact CPU of every thread, split as the ticks are (cputime_adjust) */
        double ns = (double)v[PROC_CPU_NS].i / 1e9, ticks = ut + st;
        ut = ticks > 0 ? ns * ut / ticks : ns;
        st = ns - ut;
    }
    double own = ut + st;
    /* this sample's I/O counters; the embedding process's without its monitor thread's own */
    bool host = m->cfg.embedded && pid == m->cfg.root_pid;
    double io_now[IO__MAX] = {0}; /* every entry set below (initialised for the analyzer) */
    for (int k = 0; k < IO__MAX; k++) {
        io_now[k] = v[PROC_RCHAR + k].present ? (double)v[PROC_RCHAR + k].i : NAN;
        if (host && !isnan(io_now[k]) && !isnan(m->mon_io[k]))
            io_now[k] = fmax(0, io_now[k] - m->mon_io[k]);
    }
    pp->cpu_cores = pp->read_bps = pp->write_bps = NAN;
    if (!fresh && dt > 0) {
        /* a short interval (the closing sample) gives the mean over it and the one before, as for the tree */
        double span = dt, before = e->own;
        if (dt < (double)m->cfg.interval_ns / 2e9 && e->dt_prev > 0) {
            span += e->dt_prev;
            before = e->own_prev;
        }
        pp->cpu_cores = own >= before ? (own - before) / span : NAN;
        if (m->cfg.cores_available > 0 && pp->cpu_cores > m->cfg.cores_available)
            pp->cpu_cores = m->cfg.cores_available; /* whole ticks over a few ms */
        if (!isnan(io_now[IO_READ]) && (e->io_ok & (1u << IO_READ)))
            pp->read_bps = (io_now[IO_READ] - e->io[IO_READ]) / dt;
        if (!isnan(io_now[IO_WRITE]) && (e->io_ok & (1u << IO_WRITE)))
            pp->write_bps = (io_now[IO_WRITE] - e->io[IO_WRITE]) / dt;
        e->own_prev = e->own;
        e->dt_prev = dt;
    }
    e->stamp = m->stamp;
    e->zombie =
        v[PROC_STATE].present && m->last_proc_rows && rows_str(m->last_proc_rows, &v[PROC_STATE])[0] == 'Z';
    e->ppid = v[PROC_PPID].present ? (int32_t)v[PROC_PPID].i : 0;
    if (!isnan(own)) {
        /* attach/watch: what it used before monitoring began is not ours: a process of the first sample, or
         * one older than it first seen later (watch --node --top: it became a top process) counts from its
         * first row (what it used between the first sample and that row is not known: not counted) */
        if (fresh && m->cfg.mode != JS_MODE_RUN && !m->cfg.stepd_roots &&
            (m->nfed == 0 || (double)start < m->window_ticks))
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
        !(v[PROC_STATE].present && m->last_proc_rows &&
          rows_str(m->last_proc_rows, &v[PROC_STATE])[0] == 'X')) {
        e->io_missing = true;
        m->sum.io_unreadable++;
    }
    if (v[PROC_MINFLT].present)
        e->minflt = (double)v[PROC_MINFLT].i + (v[PROC_CMINFLT].present ? (double)v[PROC_CMINFLT].i : 0);
    if (v[PROC_MAJFLT].present)
        e->majflt = (double)v[PROC_MAJFLT].i + (v[PROC_CMAJFLT].present ? (double)v[PROC_CMAJFLT].i : 0);
    ls->user += e->user_all;
    ls->sys += e->sys_all;
    ls->minflt += e->minflt;
    ls->majflt += e->majflt;
    ls->sampled += own_used(e);

    if (v[PROC_RSS].present) {
        double r = (double)v[PROC_RSS].i;
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
    if (v[PROC_SHARED].present) {
        ls->shared += (double)v[PROC_SHARED].i;
        ls->have_shared++;
    }
    for (int k = 0; k < 6; k++) {
        const js_value_t *o = &v[opt_cols[k]];
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
    e->rss = v[PROC_RSS].present ? (double)v[PROC_RSS].i : NAN;
    if (v[PROC_PSS].present || v[PROC_USS].present) {
        e->pss = v[PROC_PSS].present ? (double)v[PROC_PSS].i : NAN;
        e->uss = v[PROC_USS].present ? (double)v[PROC_USS].i : NAN;
        e->rss_at_smaps = e->rss;
        ls->pss_read += v[PROC_PSS].present;
    }
    if (v[PROC_VCSW].present)
        e->vcsw = (double)v[PROC_VCSW].i;
    if (v[PROC_IVCSW].present)
        e->ivcsw = (double)v[PROC_IVCSW].i;
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
    if (v[PROC_SIGIGNORE].present && ((uint64_t)v[PROC_SIGIGNORE].i & SIGCHLD_BIT) && !m->sum.sigchld_pid) {
        m->sum.sigchld_pid = pid; /* its children are reaped by the kernel, their usage accounted to nobody */
        snprintf(m->sum.sigchld_comm, sizeof(m->sum.sigchld_comm), "%s", e->comm);
    }
    double threads = v[PROC_THREADS].present ? (double)v[PROC_THREADS].i : 0;
    if (host && !isnan(m->mon_threads) && threads > m->mon_threads)
        threads -= m->mon_threads; /* the monitor thread is not the job's */
    ls->threads += threads;
    /* the split: the root against the others, each value as read (ticks, not the BPF backend's ns; USS and
     * PSS as this row has them, not moved by RSS) */
    double r_rss = v_num(&v[PROC_RSS]), r_uss = v_num(&v[PROC_USS]), r_pss = v_num(&v[PROC_PSS]),
           r_thr = v_num(&v[PROC_THREADS]);
    ls->smaps_all &= !isnan(r_uss) && !isnan(r_pss);
    if (pid == m->cfg.root_pid) {
        ls->main_rss = r_rss;
        ls->main_uss = r_uss;
        ls->main_pss = r_pss;
        ls->main_threads =
            host && !isnan(m->mon_threads) && r_thr > m->mon_threads ? r_thr - m->mon_threads : r_thr;
        ls->main_own_s = (v_num(&v[PROC_UTIME]) + v_num(&v[PROC_STIME])) / tck;
    } else {
        ls->desc_rss_all &= !isnan(r_rss);
        ls->desc_rss += r_rss;
        ls->desc_uss += r_uss;
        ls->desc_pss += r_pss;
        ls->desc_threads += isnan(r_thr) ? 0 : r_thr;
    }
    return 0;
}

/* count_uss_unreadable: the live members of this sample with no USS/PSS ever read while others' were (another
 * user's smaps_rollup): counted once each in the summary; the sums leave them out (tree_levels). A zombie or
 * a process with no resident memory (a kernel thread) leaves nothing out. Returns how many members of this
 * sample are left out. */
static size_t count_uss_unreadable(js_model_t *m)
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

/* embedded_self: the monitor thread's own I/O, threads and descriptors of this sample (self row), which
 * feed_proc takes off the embedding process's figures; what the row lacks is NAN (nothing is taken off). */
static void embedded_self(js_model_t *m, const js_value_t *self)
{
    for (int k = 0; k < IO__MAX; k++)
        m->mon_io[k] = self && self[SELF_IO_RCHAR + k].present ? (double)self[SELF_IO_RCHAR + k].i : NAN;
    m->mon_threads = self && self[SELF_THREADS].present ? (double)self[SELF_THREADS].i : NAN;
    m->mon_fds = self && self[SELF_FDS].present ? (double)self[SELF_FDS].i : NAN;
}

/* forget_vanished: members not in this sample have gone; account for them and drop their state. */
static int forget_vanished(js_model_t *m)
{
    size_t ngone = 0;
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

/* remember_comms: the command name of each process first seen (or exec'd) in this sample, for the views and
 * the per-command figures. */
static void remember_comms(js_model_t *m, const js_rows_t *info)
{
    for (size_t i = 0; info && i < info->nrows; i++) {
        const js_value_t *v = rows_row(info, i);
        mproc_t *e = v[INFO_PID].present ? pidmap_get(&m->procs, (int32_t)v[INFO_PID].i) : NULL;
        if (!e || !v[INFO_START_TICKS].present || e->start != (uint64_t)v[INFO_START_TICKS].i)
            continue;
        const char *comm = v[INFO_COMM].present ? rows_str(info, &v[INFO_COMM]) : "";
        if (e->comm_ix) { /* an exec: what it used under its former name stays there */
            m->comms[e->comm_ix - 1].cpu_gone += own_used_as(e);
            e->comm_base = e->max_own;
        }
        snprintf(e->comm, sizeof(e->comm), "%s", comm);
        e->comm_ix = comm_index(m, comm);
        if (e->comm_ix)
            m->comms[e->comm_ix - 1].procs++;
        if (m->sum.sigchld_pid == (int32_t)v[INFO_PID].i && !m->sum.sigchld_comm[0])
            snprintf(m->sum.sigchld_comm, sizeof(m->sum.sigchld_comm), "%s", comm);
    }
}

/* read_reaped: the monitor's reaped totals from the tree row (zeros where absent, as in attach mode). */
static void read_reaped(js_model_t *m, const js_value_t *tv, reaped_t *r, js_tree_point_t *pt)
{
    memset(r, 0, sizeof(*r));
    if (!tv)
        return;
    if (tv[TREE_REAPED_UTIME].present)
        r->user = (double)tv[TREE_REAPED_UTIME].i / 1e6;
    if (tv[TREE_REAPED_STIME].present)
        r->sys = (double)tv[TREE_REAPED_STIME].i / 1e6;
    for (int k = 0; k < IO__MAX; k++)
        if (tv[TREE_REAPED_RCHAR + k].present) {
            r->io[k] = (double)tv[TREE_REAPED_RCHAR + k].i;
            r->have_io = true;
        }
    if (tv[TREE_REAPED_MINFLT].present)
        r->minflt = (double)tv[TREE_REAPED_MINFLT].i;
    if (tv[TREE_REAPED_MAJFLT].present)
        r->majflt = (double)tv[TREE_REAPED_MAJFLT].i;
    if (tv[TREE_REAPED_MAXRSS].present)
        m->reaped_maxrss = fmax_nan(m->reaped_maxrss, (double)tv[TREE_REAPED_MAXRSS].i);
    if (tv[TREE_REAPED_NVCSW].present)
        m->reaped_ctxsw[0] = (double)tv[TREE_REAPED_NVCSW].i;
    if (tv[TREE_REAPED_NIVCSW].present)
        m->reaped_ctxsw[1] = (double)tv[TREE_REAPED_NIVCSW].i;
    if (tv[TREE_UNREAD].present && tv[TREE_UNREAD].i > 0) {
        m->sum.unread_samples++;
        if (tv[TREE_UNREAD].i > m->sum.unread_max)
            m->sum.unread_max = tv[TREE_UNREAD].i;
    }
    pt->root_alive = tv[TREE_ROOT_ALIVE].present && tv[TREE_ROOT_ALIVE].i;
    if (m->nfed == 0 && tv[TREE_T_BOOT].present)
        m->window_ticks = (double)tv[TREE_T_BOOT].i / 1e9 * (double)m->cfg.clk_tck;
}

/* node_cumulate: the node scope: totals are the host's own accounting, exact (the aggregate `cpu` line of
 * /proc/stat: busy = user + nice + system + irq + softirq + steal, guest time being inside user and nice;
 * memory in use = MemTotal - MemAvailable), not sums over the top processes that have rows. */
/* tr_rows_proc: whether the sample has process rows */
static bool tr_rows_proc(const js_sample_t *s)
{
    const js_rows_t *p = sample_rows(s, &table_proc);
    return p && p->nrows;
}

static void node_cumulate(js_model_t *m, js_tree_point_t *pt, const js_sample_t *s)
{
    if (!m->node.cpu) { /* resolve the columns by name, once */
        static const char *const busy[6] = {"user_ticks", "nice_ticks",    "system_ticks",
                                            "irq_ticks",  "softirq_ticks", "steal_ticks"};
        m->node.cpu = registry_find_table("cpu");
        m->node.mem = registry_find_table("memory");
        m->node.tree = registry_find_table("tree");
        m->node.c_id = m->node.cpu ? table_column(m->node.cpu, "cpu") : -1;
        for (int i = 0; i < 6; i++)
            m->node.c_busy[i] = m->node.cpu ? table_column(m->node.cpu, busy[i]) : -1;
        m->node.c_user[0] = m->node.c_busy[0];
        m->node.c_user[1] = m->node.c_busy[1];
        m->node.m_total = m->node.mem ? table_column(m->node.mem, "mem_total_bytes") : -1;
        m->node.m_avail = m->node.mem ? table_column(m->node.mem, "mem_available_bytes") : -1;
        m->node.t_nprocs = m->node.tree ? table_column(m->node.tree, "node_processes") : -1;
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
    double rate = rate_carry_step(&m->cpu_rate, pv ? pt->cpu_s - pv->cpu_s : NAN, pt->dt_s);
    pt->cpu_cores = pv ? rate : NAN;
    const js_rows_t *mem = m->node.mem ? sample_rows(s, m->node.mem) : NULL;
    const js_value_t *mv = mem && mem->nrows ? rows_row(mem, 0) : NULL;
    pt->rss = mv && m->node.m_total >= 0 && m->node.m_avail >= 0 && mv[m->node.m_total].present &&
                      mv[m->node.m_avail].present
                  ? (double)(mv[m->node.m_total].i - mv[m->node.m_avail].i)
                  : NAN;
    pt->rss_main = pt->rss_desc = NAN;
    const js_rows_t *tr = m->node.tree ? sample_rows(s, m->node.tree) : NULL;
    if (tr && tr->nrows && m->node.t_nprocs >= 0 && rows_row(tr, 0)[m->node.t_nprocs].present)
        pt->members = (double)rows_row(tr, 0)[m->node.t_nprocs].i;
    else if (pv &&
             !tr_rows_proc(s)) /* not counted this sample (watch --node without --top): the last count */
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

    double dt_since = NAN, dcpu = NAN;
    if (pv) {
        dt_since = pt->dt_s;
        dcpu = pt->cpu_s - pv->cpu_s;
    } else if (m->cfg.mode == JS_MODE_RUN && m->cfg.start_mono_ns > 0) {
        dt_since = ((double)pt->t_mono_ns - (double)m->cfg.start_mono_ns) / 1e9;
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
    pt->pss_read = n_read > 0 && ls->pss_read == n_read;
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
    bool any = pt->members > 0;
    if (!m->nfed)
        m->t_first = pt->t_mono_ns;
    m->t_last = pt->t_mono_ns;
    su->taken++;
    if (sv && sv[SAMPLES_MISSED].present)
        su->missed = sv[SAMPLES_MISSED].i;
    /* a sample without a member (a command that exited before it) holds no figure of the scope's memory */
    bool levels = any || m->cfg.scope == JS_SCOPE_NODE;
    su->peak_rss_sum = fmax_nan(su->peak_rss_sum, levels ? pt->rss : NAN);
    su->peak_rss_main = fmax_nan(su->peak_rss_main, any ? pt->rss_main : NAN);
    su->peak_rss_desc = fmax_nan(su->peak_rss_desc, any ? pt->rss_desc : NAN);
    su->peak_swap = fmax_nan(su->peak_swap, levels ? pt->swap : NAN);
    if (pt->pss_read) { /* the PSS peaks: sums measured at one sample, not the estimates between reads */
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
    const js_rows_t *ex = sample_rows(s, &table_exits);
    su->procs_reaped += ex ? (int64_t)ex->nrows : 0;
    const js_value_t *self = first_row(s, &table_self);
    if (self) {
        if (self[SELF_UTIME].present && self[SELF_STIME].present)
            su->mon_cpu_s = ((double)self[SELF_UTIME].i + (double)self[SELF_STIME].i) / 1e6;
        if (self[SELF_MAXRSS].present)
            su->mon_max_rss = fmax_nan(su->mon_max_rss, (double)self[SELF_MAXRSS].i);
        if (self[SELF_PREV_WRITE].present) {
            m->write_ns_sum += (double)self[SELF_PREV_WRITE].i;
            m->write_n++;
        }
        if (self[SELF_WRITE_ERRORS].present)
            su->write_errors = self[SELF_WRITE_ERRORS].i;
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

/* feed_stepds: this sample's slurmstepd roots (before the vanished members are judged: a task whose
 * slurmstepd lives has been reaped by it). A root seen again with another start time is another process. */
static int feed_stepds(js_model_t *m, const js_rows_t *rows)
{
    double tck = m->cfg.clk_tck > 0 ? (double)m->cfg.clk_tck : 100.0;
    for (size_t i = 0; rows && i < rows->nrows; i++) {
        const js_value_t *v = rows_row(rows, i);
        if (!v[STEPD_PID].present || !v[STEPD_CUTIME].present || !v[STEPD_CSTIME].present)
            continue;
        int fresh = 0;
        mstepd_t *sd = pidmap_put(&m->stepds, (int32_t)v[STEPD_PID].i, &fresh);
        if (!sd)
            return -ENOMEM;
        uint64_t start = v[STEPD_START_TICKS].present ? (uint64_t)v[STEPD_START_TICKS].i : 0;
        if (!fresh && sd->start != start) { /* PID reuse: the old one is gone */
            m->stepd_gone_user += sd->user;
            m->stepd_gone_sys += sd->sys;
        }
        if (fresh || sd->start != start)
            sd->user = sd->sys = 0;
        sd->start = start;
        sd->stamp = m->stamp;
        sd->user = fmax(sd->user, (double)v[STEPD_CUTIME].i / tck);
        sd->sys = fmax(sd->sys, (double)v[STEPD_CSTIME].i / tck);
    }
    return 0;
}

/* stepds_reaped: add what every slurmstepd root reaped (live ones now, gone ones as last seen) to the
 * reaped totals, and forget the roots not seen this sample. */
static int stepds_reaped(js_model_t *m, double *user, double *sys)
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

int model_feed(js_model_t *m, int64_t seq, const js_sample_t *s)
{
    const js_value_t *sv = first_row(s, &table_samples);
    const js_rows_t *proc = sample_rows(s, &table_proc);
    js_tree_point_t *pt = &m->pt;
    int r;

    m->prev = *pt;
    memset(pt, 0, sizeof(*pt));
    pt->seq = seq;
    pt->t_mono_ns = sv && sv[SAMPLES_T_MONO].present ? sv[SAMPLES_T_MONO].i : 0;
    pt->t_unix_ns = sv && sv[SAMPLES_T_UNIX].present ? sv[SAMPLES_T_UNIX].i : 0;
    pt->dt_s = m->nfed ? (double)(pt->t_mono_ns - m->prev.t_mono_ns) / 1e9 : NAN;
    m->stamp++;
    if (m->stored) { /* the point as the recording kept it; the summary is the stored one */
        totals_load(pt, first_row(s, &table_tree_totals));
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
        embedded_self(m, first_row(s, &table_self));
    for (size_t i = 0; i < ls.n; i++)
        if ((r = feed_proc(m, rows_row(proc, i), pt->dt_s, &m->pp[i], &ls)) < 0)
            return r;
    if (ls.have_uss && ls.have_uss < ls.n)
        ls.uss_left_out = count_uss_unreadable(m);
    remember_comms(m, sample_rows(s, &table_proc_info));
    if (m->cfg.stepd_roots && (r = feed_stepds(m, sample_rows(s, &table_stepd))) < 0)
        return r;
    if ((r = forget_vanished(m)) < 0)
        return r;
    reaped_t reaped;
    read_reaped(m, first_row(s, &table_tree), &reaped, pt);
    if (m->cfg.stepd_roots) {
        if ((r = stepds_reaped(m, &reaped.user, &reaped.sys)) < 0)
            return r;
    }
    const js_value_t *self = m->cfg.embedded ? first_row(s, &table_self) : NULL;
    if (self && self[SELF_UTIME].present && self[SELF_STIME].present) {
        m->mon_user = (double)self[SELF_UTIME].i / 1e6;
        m->mon_sys = (double)self[SELF_STIME].i / 1e6;
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

/* top_lists: the command names that used the most CPU and memory (JS_TOP_N each). */
static void top_lists(const js_model_t *m, js_summary_t *ret)
{
    double *cpu = calloc(m->ncomms ? m->ncomms : 1, sizeof(*cpu));
    if (!cpu)
        return;
    for (size_t i = 0; i < m->ncomms; i++)
        cpu[i] = m->comms[i].cpu_gone;
    for (size_t i = 0; i < m->procs.cap; i++) {
        mproc_t *e;
        if (pidmap_at(&m->procs, i, (void **)&e) && e->comm_ix)
            cpu[e->comm_ix - 1] += own_used_as(e);
    }
    bool used_cpu[COMMS_MAX] = {false}, used_rss[COMMS_MAX] = {false};
    for (int k = 0; k < JS_TOP_N; k++) {
        size_t bc = SIZE_MAX, br = SIZE_MAX;
        for (size_t i = 0; i < m->ncomms; i++) {
            if (!used_cpu[i] && cpu[i] > 0 && (bc == SIZE_MAX || cpu[i] > cpu[bc]))
                bc = i;
            if (!used_rss[i] && m->comms[i].peak_rss > 0 &&
                (br == SIZE_MAX || m->comms[i].peak_rss > m->comms[br].peak_rss))
                br = i;
        }
        if (bc != SIZE_MAX) {
            used_cpu[bc] = true;
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
    free(cpu);
}

/* summary_from_cgroup: where the scope's cgroup was made for the run (everything in it is the job's, from 0)
 * or is the scope itself (watch --cgroup), its kernel accounting is the exact CPU total, auto-reaped and
 * unread processes included, and its memory high-water mark the tree-wide peak. */
static void summary_from_cgroup(const js_model_t *m, js_summary_t *ret)
{
    js_cgroup_totals_t cg;
    /* the scope's own cgroup: made for the run, the watched one, or the watched user's (user-UID.slice) */
    if (part_cgroup_totals(m, &cg) < 0 || !cg.present ||
        !(cg.created || m->cfg.scope == JS_SCOPE_CGROUP || m->cfg.scope == JS_SCOPE_USER))
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
    if (!isnan(cg.peak_kernel_tree_bytes)) {
        ret->peak_kernel_tree = cg.peak_kernel_tree_bytes;
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
 * once per process. The node: MemTotal - MemAvailable, sampled. */
static void memory_headline(js_summary_t *s)
{
    s->peak_bytes = NAN;
    s->peak_method = NULL;
    s->peak_exact = false;
    if (s->scope == JS_SCOPE_NODE) {
        s->peak_bytes = s->peak_rss_sum;
        s->peak_method = "sampled: the node's memory in use (MemTotal - MemAvailable), largest at one sample";
        return;
    }
    double hwm = s->peak_rss_kernel;
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

/* tree_summary: the summary of the tree model itself (what the process rows give), before the parts' say. */
static void tree_summary(const js_model_t *m, js_summary_t *ret)
{
    if (m->stored) {
        *ret = m->stored_sum;
        ret->cores_bound = m->cfg.cores_bound;
        return;
    }
    *ret = m->sum;
    const js_tree_point_t *pt = &m->pt;
    ret->interval_s = (double)m->cfg.interval_ns / 1e9;
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
    ret->wall_s = m->t_last >= t0 ? ((double)m->t_last - (double)t0) / 1e9 : NAN;
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
    tree_summary(m, ret);
    if (m->nfed)
        summary_from_cgroup(m, ret);
    memory_headline(ret);
}

static void set_real(js_value_t *v, double d);

/* ---- stored aggregates ------------------------------------------------------------------------------ */

/* clang-format off */
#define TT(n, u, k, h) {n, u, JS_REAL, k, 0, h}
/* clang-format on */

/* table_tree_totals: js_tree_point_t, column by column (tt_off gives each column's field). REAL columns:
 * SQLite stores the whole numbers among them as integers. */
static const js_column_t tt_cols[] = {
    TT("cpu_s", "s", JS_COUNTER, "CPU time of the scope since the start (as the tree view)"),
    TT("user_s", "s", JS_COUNTER, "user CPU time"),
    TT("system_s", "s", JS_COUNTER, "system CPU time"),
    TT("cpu_cores", "cores", JS_GAUGE, "cores busy over the interval"),
    TT("sampled_cpu_s", "s", JS_COUNTER, "CPU time sampling alone sees"),
    TT("rss_bytes", "bytes", JS_GAUGE, "sum of the members' RSS"),
    TT("rss_main_bytes", "bytes", JS_GAUGE, "RSS of the command itself"),
    TT("rss_descendants_bytes", "bytes", JS_GAUGE, "RSS of every other member"),
    TT("shared_bytes", "bytes", JS_GAUGE, "resident file-backed and shared memory"),
    TT("rss_anon_bytes", "bytes", JS_GAUGE, "anonymous RSS"),
    TT("rss_file_bytes", "bytes", JS_GAUGE, "file-backed RSS"),
    TT("rss_shmem_bytes", "bytes", JS_GAUGE, "shared-memory RSS"),
    TT("swap_bytes", "bytes", JS_GAUGE, "swapped out"),
    TT("uss_bytes", "bytes", JS_GAUGE, "unique set size"),
    TT("pss_bytes", "bytes", JS_GAUGE, "proportional set size"),
    TT("hwm_max_bytes", "bytes", JS_GAUGE, "largest single-process VmHWM"),
    TT("members", "count", JS_GAUGE, "live members"),
    TT("threads", "count", JS_GAUGE, "threads of the live members"),
    TT("fds", "count", JS_GAUGE, "open descriptors of the live members"),
    TT("read_chars", "bytes", JS_COUNTER, "bytes passed to read-like calls since the start"),
    TT("write_chars", "bytes", JS_COUNTER, "bytes passed to write-like calls"),
    TT("read_syscalls", "count", JS_COUNTER, "read-like system calls"),
    TT("write_syscalls", "count", JS_COUNTER, "write-like system calls"),
    TT("read_bytes", "bytes", JS_COUNTER, "bytes read from storage"),
    TT("write_bytes", "bytes", JS_COUNTER, "bytes written to storage"),
    TT("read_chars_per_s", "bytes/s", JS_GAUGE, "read-call rate over the interval"),
    TT("write_chars_per_s", "bytes/s", JS_GAUGE, "write-call rate"),
    TT("read_syscalls_per_s", "1/s", JS_GAUGE, "read-like calls per second"),
    TT("write_syscalls_per_s", "1/s", JS_GAUGE, "write-like calls per second"),
    TT("read_bytes_per_s", "bytes/s", JS_GAUGE, "storage read rate"),
    TT("write_bytes_per_s", "bytes/s", JS_GAUGE, "storage write rate"),
    TT("minflt", "count", JS_COUNTER, "minor page faults since the start"),
    TT("majflt", "count", JS_COUNTER, "major page faults since the start"),
    TT("main_rss_bytes", "bytes", JS_GAUGE, "the root process's RSS (the split part)"),
    TT("main_uss_bytes", "bytes", JS_GAUGE, "its USS as its row has it"),
    TT("main_pss_bytes", "bytes", JS_GAUGE, "its PSS as its row has it"),
    TT("main_threads", "count", JS_GAUGE, "its threads (less an embedded monitor's)"),
    TT("main_own_cpu_s", "s", JS_COUNTER, "its own CPU time (utime + stime)"),
    TT("desc_rss_bytes", "bytes", JS_GAUGE, "the other members' RSS (missing when one lacks it)"),
    TT("desc_uss_bytes", "bytes", JS_GAUGE, "the sum of their USS as their rows have it"),
    TT("desc_pss_bytes", "bytes", JS_GAUGE, "the sum of their PSS, likewise"),
    TT("desc_threads", "count", JS_GAUGE, "their threads"),
    TT("smaps_all", "bool", JS_GAUGE, "1 when every member's row has USS and PSS"),
    TT("root_alive", "bool", JS_GAUGE, "1 while the root process lives"),
    TT("pss_read", "bool", JS_GAUGE, "1 when every member's smaps_rollup was read at this sample"),
};
#define TT_N (sizeof(tt_cols) / sizeof(tt_cols[0]))
#define TPO(f) offsetof(js_tree_point_t, f)
#define TPIO(a, k) (offsetof(js_tree_point_t, a) + (k) * sizeof(double))
#define TT_BOOLS 2 /* root_alive, pss_read: the last columns */
static const size_t tt_off[TT_N - TT_BOOLS] = {
    TPO(cpu_s),
    TPO(user_s),
    TPO(system_s),
    TPO(cpu_cores),
    TPO(sampled_cpu_s),
    TPO(rss),
    TPO(rss_main),
    TPO(rss_desc),
    TPO(shared),
    TPO(rss_anon),
    TPO(rss_file),
    TPO(rss_shmem),
    TPO(swap),
    TPO(uss),
    TPO(pss),
    TPO(hwm_max),
    TPO(members),
    TPO(threads),
    TPO(fds),
    TPIO(io, IO_RCHAR),
    TPIO(io, IO_WCHAR),
    TPIO(io, IO_SYSCR),
    TPIO(io, IO_SYSCW),
    TPIO(io, IO_READ),
    TPIO(io, IO_WRITE),
    TPIO(io_rate, IO_RCHAR),
    TPIO(io_rate, IO_WCHAR),
    TPIO(io_rate, IO_SYSCR),
    TPIO(io_rate, IO_SYSCW),
    TPIO(io_rate, IO_READ),
    TPIO(io_rate, IO_WRITE),
    TPO(minflt),
    TPO(majflt),
    TPO(main_rss),
    TPO(main_uss),
    TPO(main_pss),
    TPO(main_threads),
    TPO(main_own_s),
    TPO(desc_rss),
    TPO(desc_uss),
    TPO(desc_pss),
    TPO(desc_threads),
    TPO(smaps_all),
};
#if defined(__LP64__)
/* a field added to js_tree_point_t must be stored too: add it to tt_cols and tt_off (and docs/FORMAT.md) */
_Static_assert(sizeof(js_tree_point_t) == 392, "js_tree_point_t changed: update tt_cols / tt_off");
#endif

const js_table_t table_tree_totals = {
    "tree_totals",
    "per sample: the tree model's point (the tree view's sums), so readers need not re-read "
    "every process row (schema 2)",
    TT_N, tt_cols};

int model_totals_row(const js_model_t *m, js_rows_t *out)
{
    if (!m->nfed)
        return -ENODATA;
    js_value_t *v = rows_add(out);
    if (!v)
        return -ENOMEM;
    for (size_t c = 0; c < TT_N - TT_BOOLS; c++) {
        double d;
        memcpy(&d, (const char *)&m->pt + tt_off[c], sizeof(d));
        set_real(&v[c], d);
    }
    val_real(&v[TT_N - 2], m->pt.root_alive ? 1 : 0);
    val_real(&v[TT_N - 1], m->pt.pss_read ? 1 : 0);
    return 0;
}

/* totals_load: a stored tree_totals row into *pt (times and seq already set); missing values are NAN. */
static void totals_load(js_tree_point_t *pt, const js_value_t *v)
{
    for (size_t c = 0; c < TT_N - TT_BOOLS; c++) {
        double d = v && v[c].present ? v[c].d : NAN;
        memcpy((char *)pt + tt_off[c], &d, sizeof(d));
    }
    pt->root_alive = v && v[TT_N - 2].present && v[TT_N - 2].d != 0;
    pt->pss_read = v && v[TT_N - 1].present && v[TT_N - 1].d != 0;
}

static const js_column_t ss_cols[] = {
    {"key", "text", JS_TEXT, JS_LABEL, 0, "a field of the tree model's summary (model.c, summary fields)"},
    {"num", "value", JS_REAL, JS_GAUGE, 0, "its number (NULL for a missing figure or a text field)"},
    {"text", "text", JS_TEXT, JS_GAUGE, 0, "its text (command names, the reason a total is not exact)"},
};
const js_table_t table_summary_state = {
    "summary_state",
    "at the closing sample: the tree model's summary, so readers need not re-read every process "
    "row (schema 2)",
    3, ss_cols};

/* The numeric fields of js_summary_t the tree model sets (summary_from_cgroup's are the parts' and are
 * recomputed). Bump SUMMARY_STATE_VERSION when the list changes meaning: a recording of another version is
 * then read in full. */
#define SUMMARY_STATE_VERSION 2
enum { SF_D, SF_I64, SF_I32, SF_INT, SF_BOOL };
#define SUO(f) offsetof(js_summary_t, f)
static const struct {
    const char *key;
    int type;
    size_t off;
} sum_fields[] = {
    {"user_s", SF_D, SUO(user_s)},
    {"system_s", SF_D, SUO(system_s)},
    {"total_s", SF_D, SUO(total_s)},
    {"sampled_s", SF_D, SUO(sampled_s)},
    {"mean_cores", SF_D, SUO(mean_cores)},
    {"max_cores", SF_D, SUO(max_cores)},
    {"efficiency", SF_D, SUO(efficiency)},
    {"cores_available", SF_D, SUO(cores_available)},
    {"peak_rss_sum", SF_D, SUO(peak_rss_sum)},
    {"peak_rss_kernel", SF_D, SUO(peak_rss_kernel)},
    {"peak_swap", SF_D, SUO(peak_swap)},
    {"peak_rss_main", SF_D, SUO(peak_rss_main)},
    {"peak_rss_desc", SF_D, SUO(peak_rss_desc)},
    {"peak_pss", SF_D, SUO(peak_pss)},
    {"peak_private", SF_D, SUO(peak_private)},
    {"peak_shared", SF_D, SUO(peak_shared)},
    {"peak_kernel_pid", SF_I32, SUO(peak_kernel_pid)},
    {"io.rchar", SF_D, SUO(io) + IO_RCHAR * sizeof(double)},
    {"io.wchar", SF_D, SUO(io) + IO_WCHAR * sizeof(double)},
    {"io.syscr", SF_D, SUO(io) + IO_SYSCR * sizeof(double)},
    {"io.syscw", SF_D, SUO(io) + IO_SYSCW * sizeof(double)},
    {"io.read", SF_D, SUO(io) + IO_READ * sizeof(double)},
    {"io.write", SF_D, SUO(io) + IO_WRITE * sizeof(double)},
    {"io_unreadable", SF_I64, SUO(io_unreadable)},
    {"uss_unreadable", SF_I64, SUO(uss_unreadable)},
    {"pss_samples", SF_I64, SUO(pss_samples)},
    {"minflt", SF_D, SUO(minflt)},
    {"majflt", SF_D, SUO(majflt)},
    {"vol_ctxsw", SF_D, SUO(vol_ctxsw)},
    {"invol_ctxsw", SF_D, SUO(invol_ctxsw)},
    {"procs_total", SF_I64, SUO(procs_total)},
    {"procs_max", SF_I64, SUO(procs_max)},
    {"threads_max", SF_I64, SUO(threads_max)},
    {"procs_reaped", SF_I64, SUO(procs_reaped)},
    {"unread_samples", SF_I64, SUO(unread_samples)},
    {"unread_max", SF_I64, SUO(unread_max)},
    {"sigchld_pid", SF_I32, SUO(sigchld_pid)},
    {"autoreap_pid", SF_I32, SUO(autoreap_pid)},
    {"autoreap_cpu_s", SF_D, SUO(autoreap_cpu_s)},
    {"ntop_cpu", SF_INT, SUO(ntop_cpu)},
    {"ntop_rss", SF_INT, SUO(ntop_rss)},
    {"unattributed_cpu_s", SF_D, SUO(unattributed_cpu_s)},
    {"unattributed_floor_s", SF_D, SUO(unattributed_floor_s)},
    {"taken", SF_I64, SUO(taken)},
    {"missed", SF_I64, SUO(missed)},
    {"interval_s", SF_D, SUO(interval_s)},
    {"wall_s", SF_D, SUO(wall_s)},
    {"mon_cpu_s", SF_D, SUO(mon_cpu_s)},
    {"mon_max_rss", SF_D, SUO(mon_max_rss)},
    {"mon_mean_cost_s", SF_D, SUO(mon_mean_cost_s)},
    {"write_errors", SF_I64, SUO(write_errors)},
    {"exact_cpu", SF_BOOL, SUO(exact_cpu)},
    {"exact_peak_rss", SF_BOOL, SUO(exact_peak_rss)},
    {"cpu_from_cgroup", SF_BOOL, SUO(cpu_from_cgroup)},
    {"tree_total_s", SF_D, SUO(tree_total_s)},
    {"peak_kernel_tree", SF_D, SUO(peak_kernel_tree)},
    {"scope", SF_INT, SUO(scope)},
};
#define NSUM_FIELDS (sizeof(sum_fields) / sizeof(sum_fields[0]))
#if defined(__LP64__)
/* a field added to js_summary_t must be stored too (or recomputed from the parts): add it to sum_fields, bump
 * SUMMARY_STATE_VERSION, and tests/integration/test_stored.py checks the stored summary against a full read
 */
_Static_assert(sizeof(js_summary_t) == 1560, "js_summary_t changed: update sum_fields (stored summary)");
#endif

static int state_row(js_rows_t *out, const char *key, double num, const char *text)
{
    js_value_t *v = rows_add(out);
    if (!v || rows_set_str(out, &v[0], key, strlen(key)) < 0 ||
        (text && rows_set_str(out, &v[2], text, strlen(text)) < 0))
        return -ENOMEM;
    set_real(&v[1], num);
    return 0;
}

int model_state_rows(const js_model_t *m, js_rows_t *out)
{
    js_summary_t su;
    tree_summary(m, &su);
    int r = state_row(out, "state_version", SUMMARY_STATE_VERSION, NULL);
    for (size_t i = 0; i < NSUM_FIELDS && r == 0; i++) {
        const char *p = (const char *)&su + sum_fields[i].off;
        double d;
        switch (sum_fields[i].type) {
        case SF_D:
            memcpy(&d, p, sizeof(d));
            break;
        case SF_I64: {
            int64_t x;
            memcpy(&x, p, sizeof(x));
            d = (double)x;
            break;
        }
        case SF_I32: {
            int32_t x;
            memcpy(&x, p, sizeof(x));
            d = x;
            break;
        }
        case SF_INT: {
            int x;
            memcpy(&x, p, sizeof(x));
            d = x;
            break;
        }
        default: {
            bool x;
            memcpy(&x, p, sizeof(x));
            d = x;
        }
        }
        r = state_row(out, sum_fields[i].key, d, NULL);
    }
    if (r == 0)
        r = state_row(out, "peak_kernel_comm", NAN, su.peak_kernel_comm);
    if (r == 0)
        r = state_row(out, "sigchld_comm", NAN, su.sigchld_comm);
    if (r == 0)
        r = state_row(out, "autoreap_comm", NAN, su.autoreap_comm);
    if (r == 0)
        r = state_row(out, "inexact_cpu_reason", NAN, su.inexact_cpu_reason);
    for (int l = 0; l < 2 && r == 0; l++) {
        const js_top_t *t = l ? su.top_rss : su.top_cpu;
        int n = l ? su.ntop_rss : su.ntop_cpu;
        for (int k = 0; k < n && r == 0; k++) {
            char key[48];
            snprintf(key, sizeof(key), "%s.%d.", l ? "top_rss" : "top_cpu", k);
            size_t kl = strlen(key);
            snprintf(key + kl, sizeof(key) - kl, "comm");
            r = state_row(out, key, NAN, t[k].comm);
            snprintf(key + kl, sizeof(key) - kl, "cpu_s");
            if (r == 0)
                r = state_row(out, key, t[k].cpu_s, NULL);
            snprintf(key + kl, sizeof(key) - kl, "peak_rss");
            if (r == 0)
                r = state_row(out, key, t[k].peak_rss, NULL);
            snprintf(key + kl, sizeof(key) - kl, "procs");
            if (r == 0)
                r = state_row(out, key, (double)t[k].procs, NULL);
        }
    }
    return r;
}

int model_use_stored(js_model_t *m, const js_rows_t *state)
{
    js_summary_t su;
    memset(&su, 0, sizeof(su));
    bool seen[NSUM_FIELDS] = {false};
    double version = NAN;
    char *reason = NULL;
    for (size_t i = 0; state && i < state->nrows; i++) {
        const js_value_t *v = rows_row(state, i);
        if (!v[0].present)
            continue;
        const char *key = rows_str(state, &v[0]);
        double d = v[1].present ? v[1].d : NAN;
        const char *text = v[2].present ? rows_str(state, &v[2]) : NULL;
        if (!strcmp(key, "state_version")) {
            version = d;
            continue;
        }
        if (!strcmp(key, "peak_kernel_comm") || !strcmp(key, "sigchld_comm") ||
            !strcmp(key, "autoreap_comm")) {
            char *dst = key[0] == 'p'   ? su.peak_kernel_comm
                        : key[0] == 's' ? su.sigchld_comm
                                        : su.autoreap_comm;
            snprintf(dst, sizeof(su.peak_kernel_comm), "%s", text ? text : "");
            continue;
        }
        if (!strcmp(key, "inexact_cpu_reason")) {
            free(reason);
            reason = text ? strdup(text) : NULL;
            if (text && !reason)
                return -ENOMEM;
            continue;
        }
        int k;
        char field[16];
        if (sscanf(key, "top_cpu.%d.%15s", &k, field) == 2 ||
            sscanf(key, "top_rss.%d.%15s", &k, field) == 2) {
            if (k < 0 || k >= JS_TOP_N)
                continue;
            js_top_t *t = key[4] == 'c' ? &su.top_cpu[k] : &su.top_rss[k];
            if (!strcmp(field, "comm"))
                snprintf(t->comm, sizeof(t->comm), "%s", text ? text : "");
            else if (!strcmp(field, "cpu_s"))
                t->cpu_s = d;
            else if (!strcmp(field, "peak_rss"))
                t->peak_rss = d;
            else if (!strcmp(field, "procs"))
                t->procs = isnan(d) ? 0 : (int64_t)d;
            continue;
        }
        for (size_t f = 0; f < NSUM_FIELDS; f++) {
            if (strcmp(key, sum_fields[f].key) != 0)
                continue;
            char *p = (char *)&su + sum_fields[f].off;
            seen[f] = true;
            switch (sum_fields[f].type) {
            case SF_D:
                memcpy(p, &d, sizeof(d));
                break;
            case SF_I64: {
                int64_t x = isnan(d) ? 0 : (int64_t)d;
                memcpy(p, &x, sizeof(x));
                break;
            }
            case SF_I32: {
                int32_t x = isnan(d) ? 0 : (int32_t)d;
                memcpy(p, &x, sizeof(x));
                break;
            }
            case SF_INT: {
                int x = isnan(d) ? 0 : (int)d;
                memcpy(p, &x, sizeof(x));
                break;
            }
            default: {
                bool x = !isnan(d) && d != 0;
                memcpy(p, &x, sizeof(x));
            }
            }
            break;
        }
    }
    bool all = version == SUMMARY_STATE_VERSION;
    for (size_t f = 0; f < NSUM_FIELDS && all; f++)
        all = seen[f];
    if (!all || su.ntop_cpu < 0 || su.ntop_cpu > JS_TOP_N || su.ntop_rss < 0 || su.ntop_rss > JS_TOP_N ||
        (unsigned)su.scope >= JS_SCOPE_MAX) {
        free(reason);
        return -EINVAL;
    }
    free(m->stored_reason);
    m->stored_reason = reason;
    su.inexact_cpu_reason = reason;
    su.cpu_file = su.peak_kernel_tree_method = su.peak_method = NULL; /* the headline: memory_headline */
    m->stored_sum = su;
    m->stored = true;
    return 0;
}

double model_memory_now(const js_model_t *m)
{
    if (!m->nfed)
        return NAN;
    if (m->cfg.scope == JS_SCOPE_NODE)
        return m->pt.rss; /* MemTotal - MemAvailable */
    js_cgroup_totals_t cg;
    if (part_cgroup_totals(m, &cg) == 0 && cg.present &&
        (cg.created || m->cfg.scope == JS_SCOPE_CGROUP || m->cfg.scope == JS_SCOPE_USER) &&
        !isnan(cg.current_bytes))
        return cg.current_bytes;
    return m->pt.pss;
}

/* ---- views ------------------------------------------------------------------------------------------ */

const js_model_cfg_t *model_cfg(const js_model_t *m)
{
    return &m->cfg;
}

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
    const js_rows_t *proc = m->last ? sample_rows(m->last, &table_proc) : NULL;
    const double tck = (double)m->cfg.clk_tck;
    for (size_t i = 0; proc && i < proc->nrows; i++) {
        const js_value_t *r = rows_row(proc, i);
        js_value_t *v = rows_add(out);
        if (!v)
            return -ENOMEM;
        copy_int(&v[PV_PID], &r[PROC_PID]);
        copy_int(&v[PV_PPID], &r[PROC_PPID]);
        copy_int(&v[PV_START], &r[PROC_START_TICKS]);
        const mproc_t *e = pidmap_get(&m->procs, (int32_t)r[PROC_PID].i);
        if (e && e->start == (uint64_t)r[PROC_START_TICKS].i && e->comm[0] &&
            rows_set_str(out, &v[PV_COMM], e->comm, strlen(e->comm)) < 0)
            return -ENOMEM;
        if (r[PROC_STATE].present && rows_set_str(out, &v[PV_STATE], rows_str(proc, &r[PROC_STATE]), 1) < 0)
            return -ENOMEM;
        if (i < m->npp) {
            set_real(&v[PV_CORES], m->pp[i].cpu_cores);
            set_real(&v[PV_READ_RATE], m->pp[i].read_bps);
            set_real(&v[PV_WRITE_RATE], m->pp[i].write_bps);
        }
        ticks_s(&v[PV_UTIME], &r[PROC_UTIME], tck);
        ticks_s(&v[PV_STIME], &r[PROC_STIME], tck);
        if (r[PROC_CUTIME].present && r[PROC_CSTIME].present)
            val_real(&v[PV_CHILDREN], ((double)r[PROC_CUTIME].i + (double)r[PROC_CSTIME].i) / tck);
        static const int direct[][2] = {
            {PV_THREADS, PROC_THREADS}, {PV_RSS, PROC_RSS},           {PV_SHARED, PROC_SHARED},
            {PV_ANON, PROC_RSS_ANON},   {PV_SWAP, PROC_SWAP},         {PV_HWM, PROC_HWM},
            {PV_USS, PROC_USS},         {PV_PSS, PROC_PSS},           {PV_FDS, PROC_FDS},
            {PV_READ, PROC_READ_BYTES}, {PV_WRITE, PROC_WRITE_BYTES}, {PV_RCHAR, PROC_RCHAR},
            {PV_WCHAR, PROC_WCHAR},     {PV_MINFLT, PROC_MINFLT},     {PV_MAJFLT, PROC_MAJFLT},
            {PV_VCSW, PROC_VCSW},       {PV_IVCSW, PROC_IVCSW},
        };
        for (size_t d = 0; d < sizeof(direct) / sizeof(direct[0]); d++)
            copy_int(&v[direct[d][0]], &r[direct[d][1]]);
        if (m->cfg.embedded && r[PROC_PID].i == m->cfg.root_pid) /* the host without its monitor thread */
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

void *model_part_state(const js_model_t *m, const js_model_part_t *part)
{
    for (size_t i = 0; m && i < m->nparts; i++)
        if (js_model_parts[i] == part)
            return m->part_on[i] ? m->part_state[i] : NULL;
    return NULL;
}

void model_parts_summary_json(const js_model_t *m, jw_t *w)
{
    for (size_t i = 0; i < m->nparts; i++)
        if (m->part_on[i] && js_model_parts[i]->summary_json)
            js_model_parts[i]->summary_json(m->part_state[i], w);
}

int model_parts_summary_short(const js_model_t *m, js_buf_t *b)
{
    for (size_t i = 0; i < m->nparts; i++) {
        int r;
        if (m->part_on[i] && js_model_parts[i]->summary_short &&
            (r = js_model_parts[i]->summary_short(m->part_state[i], b)) < 0)
            return r;
    }
    return 0;
}

int model_parts_summary_text(const js_model_t *m, js_buf_t *b)
{
    for (size_t i = 0; i < m->nparts; i++) {
        int r;
        if (m->part_on[i] && js_model_parts[i]->summary_text &&
            (r = js_model_parts[i]->summary_text(m->part_state[i], b)) < 0)
            return r;
    }
    return 0;
}
