/* SPDX-License-Identifier: MIT
 *
 * The model layer (see model.h): per-process state keyed by PID and start time, tree sums per sample, exact
 * cumulative totals, rates with counter resets handled, and the run summary.
 */
#include "core/model.h"

#include "sources/proc_tree.h"
#include "sources/self.h"
#include "core/pidmap.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


typedef struct {
    uint64_t start;
    uint64_t stamp;
    int32_t ppid;
    double cpu_all, user_all, sys_all; /* own + reaped children, seconds */
    double own, max_own;               /* own utime+stime, seconds */
    double io[IO__MAX];
    uint8_t io_ok; /* bit per IO_* known */
    double minflt, majflt;
} mproc_t;

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
    double sampled_gone; /* sum of max_own of vanished processes */
    /* baseline subtracted from cumulative values (attach mode: the first sample) */
    bool have_base;
    double base_cpu, base_user, base_sys, base_io[IO__MAX], base_minflt, base_majflt;
    rate_carry_t cpu_rate;
    js_summary_t sum;
    int64_t t_first, t_last;
    double collect_ns_sum, write_ns_sum;
    int64_t write_n;
    double reaped_maxrss;
};

void rate_carry_init(rate_carry_t *c, double cap, double nominal_dt)
{
    c->cap = cap;
    c->min_dt = nominal_dt / 2;
    c->carry = 0;
    c->max_rate = NAN;
}

double rate_carry_step(rate_carry_t *c, double d, double dt)
{
    if (!(dt > 0))
        return NAN;
    if (d > 0)
        c->carry += d;
    double rate = c->carry / dt;
    if (c->cap > 0 && rate > c->cap)
        rate = c->cap;
    c->carry -= rate * dt;
    if (c->carry < 0)
        c->carry = 0;
    if (dt >= c->min_dt && (isnan(c->max_rate) || rate > c->max_rate))
        c->max_rate = rate;
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
    rate_carry_init(&m->cpu_rate, cfg->cores_available, (double)cfg->interval_ns / 1e9);
    js_summary_t *s = &m->sum;
    s->peak_rss = s->peak_rss_kernel = s->peak_swap = s->peak_rss_main = s->peak_rss_desc = NAN;
    s->peak_uss = s->peak_pss = NAN;
    s->mon_cpu_s = s->mon_max_rss = NAN;
    m->reaped_maxrss = NAN;
    return m;
}

void model_free(js_model_t *m)
{
    if (!m)
        return;
    pidmap_free(&m->procs);
    free(m->pp);
    free(m->gone);
    free(m);
}

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

/* vanish: a member is gone; decide whether someone we see accounts for its totals. */
static void vanish(js_model_t *m, const mproc_t *e)
{
    m->sampled_gone += e->max_own;
    if (m->cfg.mode == JS_MODE_RUN)
        return; /* reaped by a live member (its cutime) or by the monitor (RUSAGE_CHILDREN) */
    const mproc_t *parent = pidmap_get(&m->procs, e->ppid);
    if (parent && parent->stamp == m->stamp)
        return; /* its live parent's cutime and io absorb it when it reaps it */
    m->lost_cpu += e->cpu_all;
    m->lost_user += e->user_all;
    m->lost_sys += e->sys_all;
    for (int k = 0; k < IO__MAX; k++)
        if (e->io_ok & (1u << k))
            m->lost_io[k] += e->io[k];
    m->lost_minflt += e->minflt;
    m->lost_majflt += e->majflt;
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
    double opt[8]; /* PROC_RSS_ANON.. in opt_cols order; HWM is a maximum, the rest sums */
    size_t opt_have[8];
} live_sums_t;

static const int opt_cols[8] = {PROC_RSS_ANON, PROC_RSS_FILE, PROC_RSS_SHMEM, PROC_SWAP,
                                PROC_HWM,      PROC_USS,      PROC_PSS,       PROC_FDS};
enum { OPT_ANON, OPT_FILE, OPT_SHMEM, OPT_SWAP, OPT_HWM, OPT_USS, OPT_PSS, OPT_FDS };

/* What the monitor has reaped so far (run mode), from the tree row. */
typedef struct {
    double user, sys, io[IO__MAX], minflt, majflt;
} reaped_t;

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
        m->sum.procs_total++;
    }
    double ut = v_num(&v[PROC_UTIME]) / tck, st = v_num(&v[PROC_STIME]) / tck;
    double cut = v_num(&v[PROC_CUTIME]) / tck, cst = v_num(&v[PROC_CSTIME]) / tck;
    double own = ut + st;
    pp->cpu_cores = pp->read_bps = pp->write_bps = NAN;
    if (!fresh && dt > 0) {
        pp->cpu_cores = own >= e->own ? (own - e->own) / dt : NAN;
        if (m->cfg.cores_available > 0 && pp->cpu_cores > m->cfg.cores_available)
            pp->cpu_cores = m->cfg.cores_available; /* whole ticks over a few ms */
        if (v[PROC_READ_BYTES].present && (e->io_ok & (1u << IO_READ)))
            pp->read_bps = ((double)v[PROC_READ_BYTES].i - e->io[IO_READ]) / dt;
        if (v[PROC_WRITE_BYTES].present && (e->io_ok & (1u << IO_WRITE)))
            pp->write_bps = ((double)v[PROC_WRITE_BYTES].i - e->io[IO_WRITE]) / dt;
    }
    e->stamp = m->stamp;
    e->ppid = v[PROC_PPID].present ? (int32_t)v[PROC_PPID].i : 0;
    if (!isnan(own)) {
        e->own = own;
        e->max_own = fmax_nan(e->max_own, own);
        e->user_all = ut + (isnan(cut) ? 0 : cut);
        e->sys_all = st + (isnan(cst) ? 0 : cst);
        e->cpu_all = e->user_all + e->sys_all;
    }
    for (int k = 0; k < IO__MAX; k++) {
        if (v[PROC_RCHAR + k].present) {
            e->io[k] = (double)v[PROC_RCHAR + k].i;
            e->io_ok |= (uint8_t)(1u << k);
        }
        if (e->io_ok & (1u << k)) {
            ls->io[k] += e->io[k];
            ls->io_have[k]++;
        }
    }
    if (v[PROC_MINFLT].present)
        e->minflt = (double)v[PROC_MINFLT].i + (v[PROC_CMINFLT].present ? (double)v[PROC_CMINFLT].i : 0);
    if (v[PROC_MAJFLT].present)
        e->majflt = (double)v[PROC_MAJFLT].i + (v[PROC_CMAJFLT].present ? (double)v[PROC_CMAJFLT].i : 0);
    ls->user += e->user_all;
    ls->sys += e->sys_all;
    ls->minflt += e->minflt;
    ls->majflt += e->majflt;
    ls->sampled += e->max_own;

    if (v[PROC_RSS].present) {
        double r = (double)v[PROC_RSS].i;
        ls->rss += r;
        ls->have_rss++;
        if (pid == m->cfg.root_pid)
            ls->rss_main += r;
        else
            ls->rss_desc += r;
    }
    if (v[PROC_SHARED].present) {
        ls->shared += (double)v[PROC_SHARED].i;
        ls->have_shared++;
    }
    for (int k = 0; k < 8; k++) {
        const js_value_t *o = &v[opt_cols[k]];
        if (!o->present)
            continue;
        ls->opt_have[k]++;
        ls->opt[k] = k == OPT_HWM ? fmax_nan(ls->opt[k], (double)o->i) : ls->opt[k] + (double)o->i;
    }
    ls->threads += v[PROC_THREADS].present ? (double)v[PROC_THREADS].i : 0;
    return 0;
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
        if (tv[TREE_REAPED_RCHAR + k].present)
            r->io[k] = (double)tv[TREE_REAPED_RCHAR + k].i;
    if (tv[TREE_REAPED_MINFLT].present)
        r->minflt = (double)tv[TREE_REAPED_MINFLT].i;
    if (tv[TREE_REAPED_MAJFLT].present)
        r->majflt = (double)tv[TREE_REAPED_MAJFLT].i;
    if (tv[TREE_REAPED_MAXRSS].present)
        m->reaped_maxrss = fmax_nan(m->reaped_maxrss, (double)tv[TREE_REAPED_MAXRSS].i);
    pt->root_alive = tv[TREE_ROOT_ALIVE].present && tv[TREE_ROOT_ALIVE].i;
}

/* cumulate: the tree's cumulative CPU, I/O and faults (live + reaped + lost, less the attach baseline, never
 * decreasing) and the CPU rate. */
static void cumulate(js_model_t *m, js_tree_point_t *pt, const live_sums_t *ls, const reaped_t *r)
{
    double c_user = ls->user + r->user + m->lost_user, c_sys = ls->sys + r->sys + m->lost_sys;
    double c_io[IO__MAX];
    for (int k = 0; k < IO__MAX; k++) /* unknown when a live member's io could not be read */
        c_io[k] = ls->io_have[k] == ls->n ? ls->io[k] + r->io[k] + m->lost_io[k] : NAN;
    double c_min = ls->minflt + r->minflt + m->lost_minflt, c_maj = ls->majflt + r->majflt + m->lost_majflt;
    if (!m->have_base) {
        m->have_base = true;
        if (m->cfg.mode == JS_MODE_ATTACH) { /* attach counts what was used while watched */
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
        dt_since = (double)(pt->t_mono_ns - m->cfg.start_mono_ns) / 1e9;
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
    pt->hwm_max = ls->opt_have[OPT_HWM] ? ls->opt[OPT_HWM] : NAN;
    pt->uss = all_or_nan(ls->opt[OPT_USS], ls->opt_have[OPT_USS], n);
    pt->pss = all_or_nan(ls->opt[OPT_PSS], ls->opt_have[OPT_PSS], n);
    pt->fds = all_or_nan(ls->opt[OPT_FDS], ls->opt_have[OPT_FDS], n);
    pt->members = (double)n;
    pt->threads = ls->threads;
}

/* summary_add: fold this sample's point and the monitor's own rows into the run summary. */
static void summary_add(js_model_t *m, const js_sample_t *s, const js_value_t *sv, const js_tree_point_t *pt)
{
    js_summary_t *su = &m->sum;
    bool any = pt->members > 0;
    if (!m->nfed)
        m->t_first = pt->t_mono_ns;
    m->t_last = pt->t_mono_ns;
    su->taken++;
    if (sv && sv[SAMPLES_MISSED].present)
        su->missed = sv[SAMPLES_MISSED].i;
    su->peak_rss = fmax_nan(su->peak_rss, pt->rss);
    su->peak_rss_main = fmax_nan(su->peak_rss_main, any ? pt->rss_main : NAN);
    su->peak_rss_desc = fmax_nan(su->peak_rss_desc, any ? pt->rss_desc : NAN);
    su->peak_swap = fmax_nan(su->peak_swap, pt->swap);
    su->peak_uss = fmax_nan(su->peak_uss, pt->uss);
    if (!isnan(pt->uss))
        su->uss_samples++;
    su->peak_pss = fmax_nan(su->peak_pss, pt->pss);
    su->peak_rss_kernel = fmax_nan(su->peak_rss_kernel, pt->hwm_max);
    if ((int64_t)pt->members > su->procs_max)
        su->procs_max = (int64_t)pt->members;
    if ((int64_t)pt->threads > su->threads_max)
        su->threads_max = (int64_t)pt->threads;
    const js_value_t *self = first_row(s, &table_self);
    if (self) {
        if (self[SELF_UTIME].present && self[SELF_STIME].present)
            su->mon_cpu_s = (double)(self[SELF_UTIME].i + self[SELF_STIME].i) / 1e6;
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

    live_sums_t ls = {.n = proc ? proc->nrows : 0};
    if (ls.n > m->pp_cap) {
        js_proc_point_t *pp = realloc(m->pp, ls.n * sizeof(*pp));
        if (!pp)
            return -ENOMEM;
        m->pp = pp;
        m->pp_cap = ls.n;
    }
    m->npp = ls.n;
    for (size_t i = 0; i < ls.n; i++)
        if ((r = feed_proc(m, rows_row(proc, i), pt->dt_s, &m->pp[i], &ls)) < 0)
            return r;
    if ((r = forget_vanished(m)) < 0)
        return r;
    reaped_t reaped;
    read_reaped(m, first_row(s, &table_tree), &reaped, pt);
    cumulate(m, pt, &ls, &reaped);
    tree_levels(pt, &ls);
    summary_add(m, s, sv, pt);
    m->nfed++;
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

void model_summary(const js_model_t *m, js_summary_t *ret)
{
    *ret = m->sum;
    const js_tree_point_t *pt = &m->pt;
    ret->interval_s = (double)m->cfg.interval_ns / 1e9;
    ret->cores_available = m->cfg.cores_available > 0 ? m->cfg.cores_available : NAN;
    if (!m->nfed) {
        ret->user_s = ret->system_s = ret->total_s = ret->sampled_s = NAN;
        ret->mean_cores = ret->max_cores = ret->efficiency = ret->wall_s = NAN;
        for (int k = 0; k < IO__MAX; k++)
            ret->io[k] = NAN;
        ret->mon_mean_cost_s = NAN;
        return;
    }
    int64_t t0 = m->cfg.mode == JS_MODE_RUN && m->cfg.start_mono_ns > 0 ? m->cfg.start_mono_ns : m->t_first;
    ret->wall_s = (double)(m->t_last - t0) / 1e9;
    ret->user_s = pt->user_s;
    ret->system_s = pt->system_s;
    ret->total_s = pt->cpu_s;
    ret->sampled_s = pt->sampled_cpu_s;
    ret->mean_cores = ret->wall_s > 0 ? ret->total_s / ret->wall_s : NAN;
    ret->max_cores = m->cpu_rate.max_rate;
    ret->efficiency = ret->cores_available > 0 ? ret->mean_cores / ret->cores_available : NAN;
    for (int k = 0; k < IO__MAX; k++)
        ret->io[k] = pt->io[k];
    ret->peak_rss_kernel = fmax_nan(ret->peak_rss_kernel, m->reaped_maxrss);
    ret->mon_mean_cost_s =
        (m->collect_ns_sum / (double)m->nfed + (m->write_n ? m->write_ns_sum / (double)m->write_n : 0)) / 1e9;
    ret->exact_cpu = m->cfg.mode == JS_MODE_RUN;
    ret->exact_peak_rss = m->cfg.mode == JS_MODE_RUN;
}
