/* SPDX-License-Identifier: MIT
 *
 * The `split` model part: the scope's figures split between its main process (the command, or the process
 * that embeds the monitor) and its descendants, beside the whole system's: the figures gpu_tracker's
 * Tracker reports, from jobscope's samples and exact totals (python/jobscope builds its Tracker on them).
 *
 * Memory, per sample: main = the root's RSS (statm resident), descendants = the sum over every other member,
 * combined = both. From smaps_rollup, at the samples that read every member at once (proc_tree): private =
 * the Private_* pages (USS), PSS, and shared = PSS - USS: the pages a process shares, each counted 1/k in
 * each of the k processes mapping it, so that a page shared within the tree counts once in `combined` (not
 * once per process, nor once per mapped file as gpu_tracker counts); private + shared = PSS. Each figure's
 * peak is its own largest sample (the peaks need not be simultaneous), as in gpu_tracker. System: the largest
 * memory in use (MemTotal - MemAvailable) and MemTotal, from the `system` view. Threads: the monitor thread
 * of an embedded monitor is not the main process's.
 *
 * CPU: combined = the tree's exact cumulative CPU (model.h); main = the root's own utime + stime (without
 * what it reaped: that was a descendant's), less the monitor thread's in embedded mode; descendants =
 * combined - main, so children that lived less than an interval are counted. Rates over each interval
 * (cores busy) go through rate_carry_t like the tree's; the mean is the total over the wall time (exact), the
 * maximum the largest interval's. System: the host's busy fraction per interval (the `system` view's
 * cpu_util_fraction) times its CPUs. Threads: the largest count of each at one sample.
 *
 * The per-sample figures of the root and of the others come from the tree point (model.h: main_*, desc_*),
 * which the model sums from the process rows (and a recording of schema 2 keeps), so this part reads no
 * process row itself. No view; summary: a `split` section.
 */
#include "model/figure.h"
#include "model/model.h"
#include "core/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { W_MAIN, W_DESC, W_COMB, W__MAX };
static const char *const who_names[W__MAX] = {"main", "descendants", "combined"};

typedef struct {
    double tck;
    bool embedded, run;
    int32_t root;
    /* self columns, resolved by name at the first feed (-1: absent) */
    bool resolved;
    int s_ut, s_st;
    /* memory and thread peaks */
    double peak_rss[W__MAX], peak_priv[W__MAX], peak_shared[W__MAX], peak_pss[W__MAX], peak_threads[W__MAX];
    double sys_peak_used, sys_total;
    /* CPU */
    bool have_base;
    double base_main, main_s, comb_s;
    double prev_main, prev_comb;
    rate_carry_t rate[W__MAX];
    double sys_max_cores, sys_busy_core_s, sys_covered_s, sys_cores;
    int64_t t_first, t_last, prev_t;
    int64_t fed;
} split_t;

static double num(const js_value_t *row, int c)
{
    return c >= 0 && row[c].present ? (double)row[c].i : NAN;
}

/* view_cell: column `col` of the first row of view `name`, NAN when absent */
static double view_cell(js_model_t *m, const char *name, const char *col)
{
    js_view_t v;
    if (model_view(m, name, &v) < 0 || !v.rows->nrows)
        return NAN;
    int c = table_column(v.table, col);
    if (c < 0)
        return NAN;
    const js_value_t *x = &rows_row(v.rows, 0)[c];
    if (!x->present)
        return NAN;
    return v.table->cols[c].type == JS_REAL ? x->d : (double)x->i;
}

/* cpu_columns: the `system` view's per-CPU columns (cpuN_util_fraction): the host's CPU count */
static double cpu_columns(js_model_t *m)
{
    js_view_t v;
    if (model_view(m, "system", &v) < 0)
        return NAN;
    double n = 0;
    for (size_t i = 0; i < v.table->ncols; i++) {
        const char *name = v.table->cols[i].name;
        if (strncmp(name, "cpu", 3) == 0 && name[3] >= '0' && name[3] <= '9')
            n++;
    }
    return n > 0 ? n : NAN;
}

static int split_feed(void *state, const js_feed_t *f)
{
    split_t *p = state;
    const js_tree_point_t *pt = model_point(f->m);
    js_model_t *m = (js_model_t *)f->m; /* views of the parts fed before this one: built for this sample */
    const js_rows_t *self = sample_rows_named(f->s, "self");
    if (!pt)
        return 0;
    if (!p->resolved) {
        p->resolved = true;
        p->s_ut = self ? table_column(self->table, "utime_us") : -1;
        p->s_st = self ? table_column(self->table, "stime_us") : -1;
    }
    /* memory and threads: the root against the others, as the tree model summed them (model.h); private and
     * shared from smaps_rollup, at the samples that read every member */
    double rss[W__MAX] = {pt->main_rss, pt->desc_rss, NAN};
    double uss[W__MAX] = {pt->main_uss, pt->desc_uss, NAN};
    double pss[W__MAX] = {pt->main_pss, pt->desc_pss, NAN};
    double thr[W__MAX] = {pt->main_threads, pt->desc_threads, NAN}; /* main: not the monitor thread */
    bool have_smaps = pt->smaps_all != 0;
    double main_own = pt->main_own_s;
    rss[W_COMB] = isnan(rss[W_MAIN]) ? rss[W_DESC] : rss[W_MAIN] + rss[W_DESC];
    uss[W_COMB] = isnan(uss[W_MAIN]) ? uss[W_DESC] : uss[W_MAIN] + uss[W_DESC];
    pss[W_COMB] = isnan(pss[W_MAIN]) ? pss[W_DESC] : pss[W_MAIN] + pss[W_DESC];
    thr[W_COMB] = (isnan(thr[W_MAIN]) ? 0 : thr[W_MAIN]) + thr[W_DESC];
    for (int w = 0; w < W__MAX; w++) {
        p->peak_rss[w] = fmax_nan(p->peak_rss[w], rss[w]);
        p->peak_threads[w] = fmax_nan(p->peak_threads[w], thr[w]);
        if (!have_smaps)
            continue;
        p->peak_pss[w] = fmax_nan(p->peak_pss[w], pss[w]);
        p->peak_priv[w] = fmax_nan(p->peak_priv[w], uss[w]);
        p->peak_shared[w] = fmax_nan(p->peak_shared[w], pss[w] - uss[w]);
    }
    p->sys_peak_used = fmax_nan(p->sys_peak_used, view_cell(m, "system", "mem_used_bytes"));
    p->sys_total = fmax_nan(p->sys_total, view_cell(m, "system", "mem_total_bytes"));

    /* CPU: the root's own, less the monitor thread's when embedded */
    if (p->embedded && !isnan(main_own) && self && self->nrows && p->s_ut >= 0 && p->s_st >= 0) {
        const js_value_t *sv = rows_row(self, 0);
        double mon = (num(sv, p->s_ut) + num(sv, p->s_st)) / 1e6;
        if (!isnan(mon))
            main_own -= mon;
    }
    int64_t t = pt->t_mono_ns;
    if (!p->fed++) {
        const js_model_cfg_t *cfg = model_cfg(f->m);
        p->t_first = p->run && cfg->start_mono_ns > 0 && cfg->start_mono_ns < t ? cfg->start_mono_ns : t;
        p->prev_t = p->t_first;
        p->base_main =
            p->run || isnan(main_own) ? 0 : main_own; /* attach and embedded: from the first sample */
        p->have_base = true;
        p->sys_cores = cpu_columns(m);
    }
    if (!isnan(main_own) && main_own - p->base_main > p->main_s)
        p->main_s = main_own - p->base_main; /* the root's own CPU never goes back; after it exits it stays */
    p->comb_s = fmax_nan(p->comb_s, pt->cpu_s);
    int64_t dt_ns = t - p->prev_t;
    if (dt_ns > 0) {
        double dt = ns_to_s(dt_ns);
        double dm = p->main_s - p->prev_main, dc = p->comb_s - p->prev_comb;
        double dd = dc - dm;
        rate_carry_step(&p->rate[W_MAIN], dm, dt_ns);
        rate_carry_step(&p->rate[W_DESC], dd > 0 ? dd : 0, dt_ns);
        rate_carry_step(&p->rate[W_COMB], dc, dt_ns);
        double u = view_cell(m, "system", "cpu_util_fraction");
        if (!isnan(u) && !isnan(p->sys_cores) && p->fed > 1) {
            p->sys_max_cores = fmax_nan(p->sys_max_cores, u * p->sys_cores);
            p->sys_busy_core_s += u * p->sys_cores * dt;
            p->sys_covered_s += dt;
        }
    }
    p->prev_main = p->main_s;
    p->prev_comb = p->comb_s;
    p->prev_t = t;
    p->t_last = t;
    return 0;
}

static void split_summary(void *state, js_figure_t *r)
{
    split_t *p = state;
    if (!p->fed)
        return;
    double wall = (double)(p->t_last - p->t_first) / 1e9;
    double cpu[W__MAX] = {p->main_s, p->comb_s - p->main_s, p->comb_s};
    if (cpu[W_DESC] < 0)
        cpu[W_DESC] = 0;
    fig_put_text(r, "split.main", "the root process: the command, or the process that embeds the monitor");
    fig_put_int(r, "split.main_pid", NULL, p->root);
    fig_put_num(r, "split.wall_s", "s", wall);
    for (int k = 0; k < W__MAX; k++) {
        js_figure_t *g = fig_name(r, "split.memory", who_names[k]);
        fig_put_num(g, "{}.peak_rss_bytes", "bytes", p->peak_rss[k]);
        fig_put_num(g, "{}.peak_pss_bytes", "bytes", p->peak_pss[k]);
        fig_put_num(g, "{}.peak_private_bytes", "bytes", p->peak_priv[k]);
        fig_put_num(g, "{}.peak_shared_bytes", "bytes", p->peak_shared[k]);
    }
    fig_put_num(r, "split.memory.system_peak_used_bytes", "bytes", p->sys_peak_used);
    fig_put_num(r, "split.memory.system_total_bytes", "bytes", p->sys_total);
    for (int k = 0; k < W__MAX; k++) {
        js_figure_t *g = fig_name(r, "split.cpu", who_names[k]);
        fig_put_num(g, "{}.cpu_s", "s", cpu[k]);
        fig_put_num(g, "{}.mean_cores", "cores", wall > 0 ? cpu[k] / wall : NAN);
        fig_put_num(g, "{}.max_cores", "cores",
                    fmax_nan(p->rate[k].max_rate, wall > 0 ? cpu[k] / wall : NAN));
    }
    fig_put_num(r, "split.cpu.system.cores", "cores", p->sys_cores);
    fig_put_num(r, "split.cpu.system.mean_cores", "cores",
                p->sys_covered_s > 0 ? p->sys_busy_core_s / p->sys_covered_s : NAN);
    fig_put_num(r, "split.cpu.system.max_cores", "cores", p->sys_max_cores);
    for (int k = 0; k < W__MAX; k++) {
        fig_name(r, "split.threads", who_names[k]);
        fig_put_num(r, "split.threads.{}", "count", p->peak_threads[k]);
    }
}

static int split_init(const js_model_cfg_t *cfg, void **ret_state)
{
    split_t *p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    p->tck = cfg->clk_tck > 0 ? (double)cfg->clk_tck : 100;
    p->embedded = cfg->embedded;
    p->run = cfg->mode == JS_MODE_RUN;
    p->root = cfg->root_pid;
    for (int w = 0; w < W__MAX; w++) {
        p->peak_rss[w] = p->peak_priv[w] = p->peak_shared[w] = p->peak_pss[w] = p->peak_threads[w] = NAN;
        rate_carry_init(&p->rate[w], cfg->cores_available, cfg->interval_ns);
    }
    p->sys_peak_used = p->sys_total = p->sys_max_cores = p->sys_cores = NAN;
    *ret_state = p;
    return 0;
}

static void split_fini(void *state)
{
    free(state);
}

const js_model_part_t part_split = {
    .name = "split",
    .init = split_init,
    .feed = split_feed,
    .summary = split_summary,
    .fini = split_fini,
};
