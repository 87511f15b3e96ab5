/* SPDX-License-Identifier: MIT
 *
 * The model layer (see model.h): per-process state keyed by PID and start time, tree sums per sample, exact
 * cumulative totals, rates with counter resets handled, and the run summary.
 */
#include "core/model.h"

#include "sources/proc_tree.h"
#include "core/pidmap.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

extern const js_table_t table_self;

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

int model_feed(js_model_t *m, int64_t seq, const js_sample_t *s)
{
    const double tck = (double)m->cfg.clk_tck;
    const js_value_t *sv = first_row(s, &table_samples);
    const js_value_t *tv = first_row(s, &table_tree);
    const js_rows_t *proc = sample_rows(s, &table_proc);
    js_tree_point_t *pt = &m->pt;

    m->prev = *pt;
    memset(pt, 0, sizeof(*pt));
    pt->seq = seq;
    pt->t_mono_ns = sv && sv[0].present ? sv[0].i : 0;
    pt->t_unix_ns = sv && sv[1].present ? sv[1].i : 0;
    pt->dt_s = m->nfed ? (double)(pt->t_mono_ns - m->prev.t_mono_ns) / 1e9 : NAN;
    m->stamp++;

    size_t n = proc ? proc->nrows : 0;
    if (n > m->pp_cap) {
        js_proc_point_t *pp = realloc(m->pp, n * sizeof(*pp));
        if (!pp)
            return -ENOMEM;
        m->pp = pp;
        m->pp_cap = n;
    }
    m->npp = n;

    double live_cpu = 0, live_user = 0, live_sys = 0, live_io[IO__MAX] = {0}, live_min = 0, live_maj = 0;
    double sampled_live = 0;
    size_t io_have[IO__MAX] = {0};
    double sums[8] = {0}; /* anon file shmem swap hwm(max) uss pss fds */
    size_t have[8] = {0};
    double rss = 0, rss_main = 0, rss_desc = 0, shared = 0, threads = 0;
    size_t have_rss = 0, have_shared = 0;
    for (size_t i = 0; i < n; i++) {
        const js_value_t *v = rows_row(proc, i);
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
        js_proc_point_t *pp = &m->pp[i];
        pp->cpu_cores = pp->read_bps = pp->write_bps = NAN;
        if (!fresh && pt->dt_s > 0) {
            pp->cpu_cores = own >= e->own ? (own - e->own) / pt->dt_s : NAN;
            if (m->cfg.cores_available > 0 && pp->cpu_cores > m->cfg.cores_available)
                pp->cpu_cores = m->cfg.cores_available; /* whole ticks over a few ms */
            if (v[PROC_READ_BYTES].present && (e->io_ok & (1u << IO_READ)))
                pp->read_bps = ((double)v[PROC_READ_BYTES].i - e->io[IO_READ]) / pt->dt_s;
            if (v[PROC_WRITE_BYTES].present && (e->io_ok & (1u << IO_WRITE)))
                pp->write_bps = ((double)v[PROC_WRITE_BYTES].i - e->io[IO_WRITE]) / pt->dt_s;
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
                live_io[k] += e->io[k];
                io_have[k]++;
            }
        }
        if (v[PROC_MINFLT].present)
            e->minflt = (double)v[PROC_MINFLT].i + (v[PROC_CMINFLT].present ? (double)v[PROC_CMINFLT].i : 0);
        if (v[PROC_MAJFLT].present)
            e->majflt = (double)v[PROC_MAJFLT].i + (v[PROC_CMAJFLT].present ? (double)v[PROC_CMAJFLT].i : 0);
        live_cpu += e->cpu_all;
        live_user += e->user_all;
        live_sys += e->sys_all;
        live_min += e->minflt;
        live_maj += e->majflt;
        sampled_live += e->max_own;

        if (v[PROC_RSS].present) {
            double r = (double)v[PROC_RSS].i;
            rss += r;
            have_rss++;
            if (pid == m->cfg.root_pid)
                rss_main += r;
            else
                rss_desc += r;
        }
        if (v[PROC_SHARED].present) {
            shared += (double)v[PROC_SHARED].i;
            have_shared++;
        }
        static const int opt_cols[8] = {PROC_RSS_ANON, PROC_RSS_FILE, PROC_RSS_SHMEM, PROC_SWAP,
                                        PROC_HWM,      PROC_USS,      PROC_PSS,       PROC_FDS};
        for (int k = 0; k < 8; k++) {
            const js_value_t *o = &v[opt_cols[k]];
            if (!o->present)
                continue;
            have[k]++;
            if (k == 4)
                sums[k] = fmax_nan(sums[k], (double)o->i);
            else
                sums[k] += (double)o->i;
        }
        threads += v[PROC_THREADS].present ? (double)v[PROC_THREADS].i : 0;
    }

    /* members not in this sample have vanished */
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

    /* what the monitor reaped (run mode) */
    double r_user = 0, r_sys = 0, r_io[IO__MAX] = {0}, r_min = 0, r_maj = 0;
    bool r_io_ok[IO__MAX] = {false};
    if (tv) {
        if (tv[TREE_REAPED_UTIME].present)
            r_user = (double)tv[TREE_REAPED_UTIME].i / 1e6;
        if (tv[TREE_REAPED_STIME].present)
            r_sys = (double)tv[TREE_REAPED_STIME].i / 1e6;
        for (int k = 0; k < IO__MAX; k++)
            if (tv[TREE_REAPED_RCHAR + k].present) {
                r_io[k] = (double)tv[TREE_REAPED_RCHAR + k].i;
                r_io_ok[k] = true;
            }
        if (tv[TREE_REAPED_MINFLT].present)
            r_min = (double)tv[TREE_REAPED_MINFLT].i;
        if (tv[TREE_REAPED_MAJFLT].present)
            r_maj = (double)tv[TREE_REAPED_MAJFLT].i;
        if (tv[TREE_REAPED_MAXRSS].present)
            m->reaped_maxrss = fmax_nan(m->reaped_maxrss, (double)tv[TREE_REAPED_MAXRSS].i);
        pt->root_alive = tv[TREE_ROOT_ALIVE].present && tv[TREE_ROOT_ALIVE].i;
    }
    double c_user = live_user + r_user + m->lost_user, c_sys = live_sys + r_sys + m->lost_sys;
    double c_io[IO__MAX];
    for (int k = 0; k < IO__MAX; k++) {
        bool ok = io_have[k] == n || (m->cfg.mode == JS_MODE_RUN && r_io_ok[k] && io_have[k] == n);
        c_io[k] = ok ? live_io[k] + r_io[k] + m->lost_io[k] : NAN;
    }
    double c_min = live_min + r_min + m->lost_minflt, c_maj = live_maj + r_maj + m->lost_majflt;
    if (!m->have_base) {
        m->have_base = true;
        if (m->cfg.mode == JS_MODE_ATTACH) {
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
    pt->sampled_cpu_s = sampled_live + m->sampled_gone;

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

    pt->rss = have_rss == n && n ? rss : (n ? NAN : 0);
    pt->rss_main = rss_main;
    pt->rss_desc = rss_desc;
    pt->shared = all_or_nan(shared, have_shared, n);
    pt->rss_anon = all_or_nan(sums[0], have[0], n);
    pt->rss_file = all_or_nan(sums[1], have[1], n);
    pt->rss_shmem = all_or_nan(sums[2], have[2], n);
    pt->swap = all_or_nan(sums[3], have[3], n);
    pt->hwm_max = have[4] ? sums[4] : NAN;
    pt->uss = all_or_nan(sums[5], have[5], n);
    pt->pss = all_or_nan(sums[6], have[6], n);
    pt->fds = all_or_nan(sums[7], have[7], n);
    pt->members = (double)n;
    pt->threads = threads;

    /* summary accumulators */
    js_summary_t *su = &m->sum;
    if (!m->nfed)
        m->t_first = pt->t_mono_ns;
    m->t_last = pt->t_mono_ns;
    su->taken++;
    if (sv && sv[3].present)
        su->missed = sv[3].i;
    su->peak_rss = fmax_nan(su->peak_rss, pt->rss);
    su->peak_rss_main = fmax_nan(su->peak_rss_main, n ? pt->rss_main : NAN);
    su->peak_rss_desc = fmax_nan(su->peak_rss_desc, n ? pt->rss_desc : NAN);
    su->peak_swap = fmax_nan(su->peak_swap, pt->swap);
    su->peak_uss = fmax_nan(su->peak_uss, pt->uss);
    if (!isnan(pt->uss))
        su->uss_samples++;
    su->peak_pss = fmax_nan(su->peak_pss, pt->pss);
    su->peak_rss_kernel = fmax_nan(su->peak_rss_kernel, pt->hwm_max);
    if ((int64_t)n > su->procs_max)
        su->procs_max = (int64_t)n;
    if ((int64_t)threads > su->threads_max)
        su->threads_max = (int64_t)threads;
    const js_value_t *self = first_row(s, &table_self);
    if (self) {
        if (self[0].present && self[1].present)
            su->mon_cpu_s = (double)(self[0].i + self[1].i) / 1e6;
        if (self[2].present)
            su->mon_max_rss = fmax_nan(su->mon_max_rss, (double)self[2].i);
        if (self[4].present) {
            m->write_ns_sum += (double)self[4].i;
            m->write_n++;
        }
        if (self[5].present)
            su->write_errors = self[5].i;
    }
    const js_rows_t *ss = sample_rows(s, &table_source_stats);
    for (size_t i = 0; ss && i < ss->nrows; i++) {
        const js_value_t *v = rows_row(ss, i);
        if (v[1].present)
            m->collect_ns_sum += (double)v[1].i;
    }
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
