/* SPDX-License-Identifier: MIT
 *
 * The report's numbers that are not series: lookups of a node's series and their statistics (mean, extremes,
 * quantiles), the node's summary rows, and the facts the advice rules read (advice.h), per node and combined
 * over the nodes of a batch job (sums of cores and CPU time, the worst memory headroom, the largest
 * pressure). Part of the report builder (report_int.h).
 */
#include "report/report_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- series lookups and statistics -------------------------------------------------------------------- */

const rseries_t *find_series(const rnode_t *n, const char *view, const char *col, const char *group)
{
    for (size_t i = 0; i < n->ns; i++)
        if (strcmp(n->s[i].view, view) == 0 && strcmp(n->s[i].col, col) == 0 &&
            (!group || strcmp(n->s[i].group, group) == 0))
            return &n->s[i];
    return NULL;
}

const double *report_series(const js_report_t *r, size_t node, const char *view, const char *col,
                            const char *group, const double **ret_t, size_t *ret_n)
{
    if (node >= r->nnodes)
        return NULL;
    const rnode_t *n = &r->nodes[node];
    const rseries_t *s = find_series(n, view, col, group ? group : "");
    if (!s)
        return NULL;
    *ret_t = n->t;
    *ret_n = n->n;
    return s->v;
}

sstat_t stat_of(const double *v, size_t n)
{
    sstat_t st = {.mean = NAN, .min = NAN, .max = NAN, .last = NAN};
    double sum = 0;
    for (size_t i = 0; v && i < n; i++) {
        if (!isfinite(v[i]))
            continue;
        if (!st.finite || v[i] < st.min)
            st.min = v[i];
        if (!st.finite || v[i] > st.max) {
            st.max = v[i];
            st.imax = i;
        }
        st.nonzero |= v[i] != 0;
        st.last = v[i];
        sum += v[i];
        st.finite++;
    }
    if (st.finite)
        st.mean = sum / (double)st.finite;
    return st;
}

/* sstat: the statistics of series s of node n (computed once the node is finished). */
sstat_t sstat(const rnode_t *n, const rseries_t *s)
{
    return s->st_valid ? s->st : stat_of(s->v, n->n);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* quantile: the q-quantile (nearest rank) of the finite values, NAN when none or on ENOMEM. */
static double quantile(const double *v, size_t n, double q)
{
    double *c = malloc((n ? n : 1) * sizeof(*c));
    size_t k = 0;
    if (!c)
        return NAN;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]))
            c[k++] = v[i];
    double r = NAN;
    if (k) {
        qsort(c, k, sizeof(*c), cmp_double);
        size_t rank = (size_t)ceil(q * (double)k);
        r = c[rank ? rank - 1 : 0];
    }
    free(c);
    return r;
}

static double series_mean(const rnode_t *n, const char *view, const char *col)
{
    const rseries_t *s = find_series(n, view, col, "");
    return s ? sstat(n, s).mean : NAN;
}

/* ---- facts ----------------------------------------------------------------------------------------------
 */

/* gpu_facts: mean utilisation per GPU from a view named "gpu": its first column whose name holds "util" and
 * whose unit is a fraction or a percentage. */
static void gpu_facts(const rnode_t *n, js_facts_t *f, bool prefix)
{
    const rview_t *v = NULL;
    for (size_t i = 0; i < n->nviews && !v; i++)
        if (strcmp(n->views[i].name, "gpu") == 0)
            v = &n->views[i];
    if (!v)
        return;
    for (size_t c = 0; c < v->ncols; c++) {
        const js_column_t *col = &v->table->cols[v->cols[c]];
        bool pct = strcmp(v->units[c], "%") == 0;
        if (!strstr(col->name, "util") || (!pct && strcmp(v->units[c], "fraction") != 0))
            continue;
        for (size_t g = 0; g < v->ngroups && f->ngpus < JS_FACTS_MAX_GPUS; g++) {
            sstat_t st = sstat(n, &n->s[v->sidx[g * v->ncols + c]]);
            if (!st.finite)
                continue;
            const char *gn = v->groups[g][0] ? v->groups[g] : "GPU";
            if (prefix)
                snprintf(f->gpu_name[f->ngpus], sizeof(f->gpu_name[0]), "%s %s", n->name, gn);
            else
                snprintf(f->gpu_name[f->ngpus], sizeof(f->gpu_name[0]), "%s", gn);
            f->gpu_util_mean[f->ngpus++] = pct ? st.mean / 100 : st.mean;
        }
        return;
    }
}

/* The node's summary rows (model/figure.h). */
const js_figure_t *sroot(const rnode_t *n)
{
    return n->sum ? figure_croot(n->sum) : NULL;
}

double snum(const rnode_t *n, const char *path)
{
    return fig_num(sroot(n), path);
}

int64_t sint(const rnode_t *n, const char *path)
{
    return fig_int(sroot(n), path, 0);
}

static double first_num(const rnode_t *n, const char *const *paths)
{
    for (; *paths; paths++) {
        double v = snum(n, *paths);
        if (isfinite(v))
            return v;
    }
    return NAN;
}

static double inv_num(const rnode_t *n, const char *key)
{
    for (size_t i = 0; i < n->ninv; i++)
        if (n->inv[3 * i + 1] && n->inv[3 * i + 2] && strcmp(n->inv[3 * i + 1], key) == 0) {
            char *end;
            double v = strtod(n->inv[3 * i + 2], &end);
            return end != n->inv[3 * i + 2] ? v : NAN;
        }
    return NAN;
}

/* job_pressure: the mean share of the run some task of the job's cgroup stalled: the cgroup view's column,
 * else the summary's total over the wall time; NAN without a cgroup that reports pressure. */
static double job_pressure(const rnode_t *n, const char *col, const char *total, double wall_s)
{
    double v = series_mean(n, "cgroup", col);
    return isfinite(v) ? v : wall_s > 0 ? snum(n, total) / wall_s : NAN;
}

/* peak_demand: the largest, over the samples, of the job cgroup's cores in use plus its CPU pressure (some):
 * the cores its runnable work asked for; NAN without both series. */
static double peak_demand(const rnode_t *n)
{
    const rseries_t *c = find_series(n, "cgroup", "cpu_cores", ""),
                    *p = find_series(n, "cgroup", "psi_cpu_some_fraction", "");
    double m = NAN;
    for (size_t i = 0; c && p && i < n->n; i++)
        if (isfinite(c->v[i]) && isfinite(p->v[i]) && !(c->v[i] + p->v[i] <= m))
            m = c->v[i] + p->v[i];
    return m;
}

/* node_facts: one node's facts. */
void node_facts(const rnode_t *n, js_facts_t *f)
{
    facts_init(f);
    f->complete = n->info.state && strcmp(n->info.state, "complete") == 0;
    f->data_end_s = n->n ? n->t[n->n - 1] : NAN;
    f->wall_s = snum(n, "wall_time_s");
    f->interval_s = snum(n, "samples.interval_s");
    f->taken = sint(n, "samples.taken");
    f->missed = sint(n, "samples.missed");
    double cores = snum(n, "allocation.cores");
    f->cores_available = isfinite(cores) && cores > 0 ? cores : snum(n, "cpu.cores_available");
    f->cpu_s = snum(n, "cpu.total_s");
    f->mean_cores = snum(n, "cpu.mean_cores");
    f->max_cores = snum(n, "cpu.max_cores");
    f->efficiency = f->cores_available > 0 && isfinite(f->mean_cores) ? f->mean_cores / f->cores_available
                                                                      : snum(n, "cpu.efficiency");
    const rseries_t *cores_s = find_series(n, "tree", "cpu_cores", "");
    f->p95_cores = cores_s ? quantile(cores_s->v, n->n, 0.95) : NAN;
    f->unattributed_cpu_s = snum(n, "top.unattributed_cpu_s");
    double periods = snum(n, "cgroup.throttling.periods");
    double throttled = snum(n, "cgroup.throttling.throttled_periods");
    f->throttled_fraction = periods > 0 ? throttled / periods : NAN;
    f->peak_rss = snum(n, "memory.peak_bytes"); /* the memory headline: counts no page twice */
    f->peak_rss_kernel = snum(n, "memory.peak_rss_kernel_bytes");
    static const char *const limit[] = {"allocation.memory_limit_bytes", "cgroup.memory.limit_bytes", NULL};
    f->mem_limit = first_num(n, limit);
    if (!isfinite(f->mem_limit))
        f->mem_limit = inv_num(n, "allocation.memory_limit_bytes");
    if (!(f->mem_limit > 0))
        f->mem_limit = NAN;
    static const char *const peak[] = {"cgroup.memory.peak_kernel_tree_bytes",
                                       "cgroup.memory.peak_sampled_bytes", NULL};
    f->mem_peak = first_num(n, peak);
    if (!isfinite(f->mem_peak))
        f->mem_peak = isfinite(f->peak_rss) ? f->peak_rss : f->peak_rss_kernel;
    const rseries_t *tot = find_series(n, "system", "mem_total_bytes", "");
    f->host_mem_total = tot ? sstat(n, tot).max : NAN;
    f->peak_swap = snum(n, "memory.peak_swap_bytes");
    f->majflt = snum(n, "faults.major");
    f->oom_kills = snum(n, "cgroup.memory.oom_kills");
    f->psi_io_some_mean = series_mean(n, "system", "psi_io_some_fraction");
    f->psi_io_full_mean = series_mean(n, "system", "psi_io_full_fraction");
    f->psi_mem_some_mean = series_mean(n, "system", "psi_memory_some_fraction");
    f->iowait_mean = series_mean(n, "system", "iowait_fraction");
    f->psi_cpu_some_job_mean =
        job_pressure(n, "psi_cpu_some_fraction", "cgroup.pressure.cpu_some_s", f->wall_s);
    f->psi_io_some_job_mean = job_pressure(n, "psi_io_some_fraction", "cgroup.pressure.io_some_s", f->wall_s);
    f->psi_cpu_some_host_mean = series_mean(n, "system", "psi_cpu_some_fraction");
    f->host_busy_mean =
        1 - series_mean(n, "system", "idle_fraction") - series_mean(n, "system", "iowait_fraction");
    f->steal_mean = series_mean(n, "system", "steal_fraction");
    f->peak_demand_cores = peak_demand(n);
    gpu_facts(n, f, false);
    f->mon_cpu_s = snum(n, "monitor.cpu_s");
}

double nan_sum(double a, double b)
{
    return isfinite(a) ? (isfinite(b) ? a + b : a) : b;
}

double nan_max(double a, double b)
{
    return isfinite(a) ? (isfinite(b) && b > a ? b : a) : b;
}

const js_summary_table_t *report_summary(const js_report_t *r, size_t node)
{
    return node < r->nnodes && r->nodes[node].finished ? r->nodes[node].sum : NULL;
}

const js_facts_t *report_facts(js_report_t *r)
{
    if (r->facts_done)
        return r->facts;
    if (!r->nnodes)
        return NULL;
    for (size_t i = 0; i < r->nnodes; i++)
        if (!r->nodes[i].finished)
            return NULL;
    if (!r->facts && !(r->facts = malloc(sizeof(*r->facts))))
        return NULL;
    js_facts_t *f = r->facts;
    node_facts(&r->nodes[0], f);
    if (r->nnodes > 1) {
        js_facts_t *g = malloc(sizeof(*g));
        if (!g)
            return NULL;
        double worst = isfinite(f->mem_limit) ? f->mem_peak / f->mem_limit : NAN;
        f->ngpus = 0;
        gpu_facts(&r->nodes[0], f, true);
        for (size_t i = 1; i < r->nnodes; i++) {
            const rnode_t *n = &r->nodes[i];
            node_facts(n, g);
            f->complete &= g->complete;
            f->data_end_s = nan_max(f->data_end_s, g->data_end_s);
            f->wall_s = nan_max(f->wall_s, g->wall_s);
            f->taken += g->taken;
            f->missed += g->missed;
            f->cores_available = nan_sum(f->cores_available, g->cores_available);
            f->cpu_s = nan_sum(f->cpu_s, g->cpu_s);
            f->mean_cores = nan_sum(f->mean_cores, g->mean_cores);
            f->max_cores = nan_sum(f->max_cores, g->max_cores);
            f->p95_cores = nan_sum(f->p95_cores, g->p95_cores);
            f->unattributed_cpu_s = nan_sum(f->unattributed_cpu_s, g->unattributed_cpu_s);
            f->throttled_fraction = nan_max(f->throttled_fraction, g->throttled_fraction);
            f->peak_rss = nan_max(f->peak_rss, g->peak_rss);
            f->peak_rss_kernel = nan_max(f->peak_rss_kernel, g->peak_rss_kernel);
            double frac = isfinite(g->mem_limit) ? g->mem_peak / g->mem_limit : NAN;
            if (isfinite(frac) && !(frac <= worst)) {
                worst = frac;
                f->mem_peak = g->mem_peak;
                f->mem_limit = g->mem_limit;
            } else if (!isfinite(worst)) {
                f->mem_peak = nan_max(f->mem_peak, g->mem_peak);
            }
            f->host_mem_total = nan_max(f->host_mem_total, g->host_mem_total);
            f->peak_swap = nan_max(f->peak_swap, g->peak_swap);
            f->majflt = nan_sum(f->majflt, g->majflt);
            f->oom_kills = nan_sum(f->oom_kills, g->oom_kills);
            f->psi_io_some_mean = nan_max(f->psi_io_some_mean, g->psi_io_some_mean);
            f->psi_io_full_mean = nan_max(f->psi_io_full_mean, g->psi_io_full_mean);
            f->psi_mem_some_mean = nan_max(f->psi_mem_some_mean, g->psi_mem_some_mean);
            f->iowait_mean = nan_max(f->iowait_mean, g->iowait_mean);
            f->psi_io_some_job_mean = nan_max(f->psi_io_some_job_mean, g->psi_io_some_job_mean);
            f->psi_cpu_some_job_mean = nan_max(f->psi_cpu_some_job_mean, g->psi_cpu_some_job_mean);
            f->psi_cpu_some_host_mean = nan_max(f->psi_cpu_some_host_mean, g->psi_cpu_some_host_mean);
            f->host_busy_mean = nan_max(f->host_busy_mean, g->host_busy_mean);
            f->steal_mean = nan_max(f->steal_mean, g->steal_mean);
            f->peak_demand_cores = nan_sum(f->peak_demand_cores, g->peak_demand_cores);
            f->mon_cpu_s = nan_sum(f->mon_cpu_s, g->mon_cpu_s);
            gpu_facts(n, f, true);
        }
        free(g);
        f->efficiency = f->cores_available > 0 && isfinite(f->wall_s) && f->wall_s > 0
                            ? f->cpu_s / (f->cores_available * f->wall_s)
                            : NAN;
        f->mon_cpu_s = NAN; /* summed over nodes it says nothing about one core */
    }
    f->nnodes = r->nnodes < JS_FACTS_MAX_NODES ? r->nnodes : JS_FACTS_MAX_NODES;
    for (size_t i = 0; i < f->nnodes; i++) {
        snprintf(f->node_name[i], sizeof(f->node_name[0]), "%s", r->nodes[i].name);
        f->node_mean_cores[i] = snum(&r->nodes[i], "cpu.mean_cores");
    }
    r->facts_done = true;
    return f;
}
