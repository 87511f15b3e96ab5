/* SPDX-License-Identifier: MIT
 *
 * The `energy` model part: RAPL energy per zone (the `rapl` source's table), with the wrap at
 * max_energy_range_uj handled (counter_delta_range), mean and largest power per zone and for the node, and
 * the share of it attributed to the monitored scope.
 *
 * The node's energy is the sum of its package zones and their dram sub-zones (core and uncore are parts of
 * the package; psys, the whole platform on client parts, overlaps the packages and is reported apart).
 *
 * Attribution (method `busy_cpu_share`). RAPL measures the node, and the scope may be a small part of it.
 * Over each interval i with node energy E_i:
 *   u_i = busy_i / (busy_i + idle_i)        the node's busy share of CPU time, from the `cpu` table's
 * aggregate row (busy = user + nice + system + irq + softirq; idle = idle + iowait; steal, time the CPUs were
 * not ours, counts in neither) s_i = min(1, scope_cpu_i / busy_i)      the scope's share of that busy time
 * (scope CPU seconds from the tree model: the difference of its cumulative cpu_s) scope energy   += s_i * u_i
 * * E_i       the scope's share of the busy part of the energy idle energy    += (1 - u_i) * E_i       the
 * idle part, attributed to no one and reported apart An interval lacking any of the inputs is not attributed
 * and is counted. With the whole node as the scope, s_i is about 1 and the scope's energy is the node's busy
 * energy. This is a linear model (energy follows busy CPU time); it ignores that cores differ in frequency
 * and that memory-bound work draws more DRAM power.
 *
 * Views: `energy`, one row per zone and sample. Summary: an `energy` section when the recording has RAPL
 * zones (with the reason when energy could not be read).
 */
#include "model/figure.h"
#include "model/model.h"
#include "model/track.h"
#include "core/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *zone, *domain;
    bool node;    /* counts in the node total */
    track_t tr;   /* energy, joules */
    double max_w; /* largest power over an interval at least half the nominal one */
    double attributed_j;
    double share; /* this interval's s_i * u_i (NAN when not attributed) */
    int64_t err;  /* errno column of the last row */
    bool seen_now;
} ezone_t;

/* columns of the source tables, resolved by name at the first feed that has them (-1: absent) */
enum { RC_ZONE, RC_DOMAIN, RC_ENERGY, RC_RANGE, RC_ERRNO, RC__MAX };
static const char *const rapl_names[RC__MAX] = {"zone", "domain", "energy_uj", "max_energy_range_uj",
                                                "errno"};
enum { CC_CPU, CC_USER, CC_NICE, CC_SYSTEM, CC_IDLE, CC_IOWAIT, CC_IRQ, CC_SOFTIRQ, CC__MAX };
static const char *const cpu_names[CC__MAX] = {"cpu",        "user_ticks",   "nice_ticks", "system_ticks",
                                               "idle_ticks", "iowait_ticks", "irq_ticks",  "softirq_ticks"};

typedef struct {
    double tck;
    js_model_cfg_t cfg; /* the run's (model_interval_short) */
    bool resolved_rapl, resolved_cpu;
    int rc[RC__MAX], cc[CC__MAX];
    ezone_t *z;
    size_t n, cap;
    /* the node */
    double node_j, node_covered_s, node_max_w, node_w;
    int64_t node_intervals;
    /* attribution */
    bool have_prev_cpu;
    uint64_t prev_busy, prev_idle;
    double prev_scope_cpu;
    double scope_j, busy_j, idle_j, last_share;
    int64_t attributed, unattributed;
    int64_t prev_t;
    int64_t fed;
} energy_t;

/* ---- feeding -------------------------------------------------------------------------------------- */

static void resolve(int *idx, const char *const *names, int n, const js_rows_t *r)
{
    for (int i = 0; i < n; i++)
        idx[i] = table_column(r->table, names[i]);
}

static const js_value_t *cell(const js_value_t *row, int c)
{
    return c >= 0 ? &row[c] : NULL;
}

/* is_node_zone: package-N or package-N/dram */
static bool is_node_zone(const char *domain)
{
    if (strncmp(domain, "package-", 8) != 0)
        return false;
    const char *slash = strchr(domain, '/');
    return !slash || strcmp(slash, "/dram") == 0;
}

static ezone_t *zone_get(energy_t *e, const char *zone, const char *domain)
{
    for (size_t i = 0; i < e->n; i++)
        if (strcmp(e->z[i].zone, zone) == 0)
            return &e->z[i];
    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 8;
        ezone_t *g = realloc(e->z, cap * sizeof(*g));
        if (!g)
            return NULL;
        e->z = g;
        e->cap = cap;
    }
    ezone_t *z = &e->z[e->n];
    memset(z, 0, sizeof(*z));
    z->zone = strdup(zone);
    z->domain = strdup(domain);
    if (!z->zone || !z->domain) {
        free(z->zone);
        free(z->domain);
        return NULL;
    }
    z->node = is_node_zone(domain);
    track_init(&z->tr);
    z->max_w = NAN;
    z->share = NAN;
    e->n++;
    return z;
}

/* cpu_busy_idle: busy and idle ticks of the aggregate row of `cpu`. Returns 0 or -ENODATA. */
static int cpu_busy_idle(const energy_t *e, const js_rows_t *cpu, uint64_t *busy, uint64_t *idle)
{
    for (size_t i = 0; cpu && i < cpu->nrows; i++) {
        const js_value_t *row = rows_row(cpu, i);
        if (e->cc[CC_CPU] < 0 || !row[e->cc[CC_CPU]].present || row[e->cc[CC_CPU]].i != -1)
            continue;
        static const int busy_cols[] = {CC_USER, CC_NICE, CC_SYSTEM, CC_IRQ, CC_SOFTIRQ};
        uint64_t b = 0, d = 0;
        for (size_t k = 0; k < sizeof(busy_cols) / sizeof(busy_cols[0]); k++) {
            int c = e->cc[busy_cols[k]];
            if (c < 0 || !row[c].present) {
                if (busy_cols[k] == CC_IRQ || busy_cols[k] == CC_SOFTIRQ)
                    continue; /* absent before 2.6.0 */
                return -ENODATA;
            }
            b += (uint64_t)row[c].i;
        }
        if (e->cc[CC_IDLE] < 0 || !row[e->cc[CC_IDLE]].present)
            return -ENODATA;
        d = (uint64_t)row[e->cc[CC_IDLE]].i;
        if (e->cc[CC_IOWAIT] >= 0 && row[e->cc[CC_IOWAIT]].present)
            d += (uint64_t)row[e->cc[CC_IOWAIT]].i;
        *busy = b;
        *idle = d;
        return 0;
    }
    return -ENODATA;
}

static int energy_feed(void *state, const js_feed_t *f)
{
    energy_t *e = state;
    const js_rows_t *rapl = sample_rows_named(f->s, "rapl");
    const js_rows_t *cpu = sample_rows_named(f->s, "cpu");
    const js_rows_t *samples = sample_rows(f->s, &table_samples);
    if (!samples || !samples->nrows || !rows_row(samples, 0)[SAMPLES_T_MONO].present)
        return 0;
    int64_t t = rows_row(samples, 0)[SAMPLES_T_MONO].i;
    int64_t dt_ns = e->fed && t > e->prev_t ? t - e->prev_t : 0;
    double dt = dt_ns ? ns_to_s(dt_ns) : NAN;
    e->fed++;
    e->prev_t = t;
    if (rapl && !e->resolved_rapl) {
        resolve(e->rc, rapl_names, RC__MAX, rapl);
        e->resolved_rapl = true;
    }
    if (cpu && !e->resolved_cpu) {
        resolve(e->cc, cpu_names, CC__MAX, cpu);
        e->resolved_cpu = true;
    }

    /* zones */
    for (size_t i = 0; i < e->n; i++)
        e->z[i].seen_now = false;
    for (size_t i = 0; rapl && e->rc[RC_ZONE] >= 0 && i < rapl->nrows; i++) {
        const js_value_t *row = rows_row(rapl, i);
        ezone_t *z =
            zone_get(e, rows_text(rapl, row, e->rc[RC_ZONE], ""), rows_text(rapl, row, e->rc[RC_DOMAIN], ""));
        if (!z)
            return -ENOMEM;
        z->seen_now = true;
        const js_value_t *range = cell(row, e->rc[RC_RANGE]);
        const js_value_t *err = cell(row, e->rc[RC_ERRNO]);
        z->err = err && err->present ? err->i : 0;
        track_step(&z->tr, cell(row, e->rc[RC_ENERGY]), t, track_range,
                   range && range->present && range->i > 0 ? (uint64_t)range->i : 0, 1e-6);
        if (!isnan(z->tr.rate) && !model_interval_short(&e->cfg, z->tr.dt_ns) &&
            (isnan(z->max_w) || z->tr.rate > z->max_w))
            z->max_w = z->tr.rate;
    }
    for (size_t i = 0; i < e->n; i++)
        if (!e->z[i].seen_now)
            track_step(&e->z[i].tr, NULL, t, track_range, 0, 1e-6);

    /* the node: every node zone with a known increase this interval */
    double node = 0;
    size_t nnode = 0;
    bool complete = true;
    for (size_t i = 0; i < e->n; i++) {
        if (!e->z[i].node)
            continue;
        nnode++;
        if (isnan(e->z[i].tr.last))
            complete = false;
        else
            node += e->z[i].tr.last;
    }
    e->node_w = NAN;
    if (nnode && complete && !isnan(dt)) {
        e->node_j += node;
        e->node_covered_s += dt;
        e->node_intervals++;
        e->node_w = node / dt;
        if (!model_interval_short(&e->cfg, dt_ns) && (isnan(e->node_max_w) || e->node_w > e->node_max_w))
            e->node_max_w = e->node_w;
    }

    /* attribution */
    const js_tree_point_t *pt = model_point(f->m);
    double scope_cpu = pt ? pt->cpu_s : NAN;
    uint64_t busy = 0, idle = 0;
    bool have_cpu = cpu_busy_idle(e, cpu, &busy, &idle) == 0;
    e->last_share = NAN;
    for (size_t i = 0; i < e->n; i++)
        e->z[i].share = NAN;
    if (nnode && e->fed > 1) {
        bool ok = complete && have_cpu && e->have_prev_cpu && busy >= e->prev_busy && idle >= e->prev_idle &&
                  !isnan(scope_cpu) && !isnan(e->prev_scope_cpu);
        if (ok) {
            double db = (double)(busy - e->prev_busy), di = (double)(idle - e->prev_idle);
            double u = db + di > 0 ? db / (db + di) : 0;
            double ds = scope_cpu - e->prev_scope_cpu;
            double s = db > 0 ? ds / (db / e->tck) : 0;
            s = s < 0 ? 0 : s > 1 ? 1 : s;
            e->scope_j += s * u * node;
            e->busy_j += u * node;
            e->idle_j += (1 - u) * node;
            e->last_share = s * u;
            for (size_t i = 0; i < e->n; i++) {
                if (!isnan(e->z[i].tr.last)) {
                    e->z[i].attributed_j += s * u * e->z[i].tr.last;
                    e->z[i].share = s * u;
                }
            }
            e->attributed++;
        } else {
            e->unattributed++;
        }
    }
    e->have_prev_cpu = have_cpu;
    if (have_cpu) {
        e->prev_busy = busy;
        e->prev_idle = idle;
    }
    e->prev_scope_cpu = scope_cpu;
    return 0;
}

/* ---- view ----------------------------------------------------------------------------------------- */

enum { EV_ZONE, EV_DOMAIN, EV_ENERGY, EV_POWER, EV_SCOPE_ENERGY, EV_SHARE, EV_ERRNO, EV__MAX };
static const js_column_t energy_view_cols[EV__MAX] = {
    [EV_ZONE] = {"zone", "text", JS_TEXT, JS_LABEL, 0, "powercap zone"},
    [EV_DOMAIN] = {"domain", "text", JS_TEXT, JS_LABEL, 0, "package-0, package-0/dram, psys, ..."},
    [EV_ENERGY] = {"energy_j", "J", JS_REAL, JS_COUNTER, 0, "energy since the first sample (wraps undone)"},
    [EV_POWER] = {"power_w", "W", JS_REAL, JS_GAUGE, 0, "mean power over the last interval"},
    [EV_SCOPE_ENERGY] = {"scope_energy_j", "J", JS_REAL, JS_COUNTER, 0,
                         "the scope's share since the first sample (busy_cpu_share, docs/METRICS.md)"},
    [EV_SHARE] =
        {"scope_share_fraction", "fraction", JS_REAL, JS_GAUGE, 0,
         "the scope's share of this interval's energy: busy CPU share times the node's busy fraction"},
    [EV_ERRNO] = {"errno", "errno", JS_INT, JS_GAUGE, 0,
                  "0, or why energy_uj could not be read (negative errno)"},
};
static const js_table_t energy_view = {
    "energy", "RAPL energy and power per zone, one row per zone and sample", EV__MAX, energy_view_cols};

static const js_table_t *energy_view_table(void *state, size_t i)
{
    (void)state;
    return i == 0 ? &energy_view : NULL;
}

static void set_real(js_value_t *v, double d)
{
    if (!isnan(d))
        val_real(v, d);
}

static int energy_view_fill(void *state, size_t i, js_rows_t *out)
{
    (void)i;
    energy_t *e = state;
    for (size_t k = 0; k < e->n; k++) {
        const ezone_t *z = &e->z[k];
        if (!z->seen_now)
            continue;
        js_value_t *v = rows_add(out);
        if (!v || rows_set_str(out, &v[EV_ZONE], z->zone, strlen(z->zone)) < 0 ||
            rows_set_str(out, &v[EV_DOMAIN], z->domain, strlen(z->domain)) < 0)
            return -ENOMEM;
        if (z->tr.known || !isnan(z->tr.last) || z->tr.prev.present)
            val_real(&v[EV_ENERGY], z->tr.total);
        set_real(&v[EV_POWER], z->tr.rate);
        if (e->attributed)
            val_real(&v[EV_SCOPE_ENERGY], z->attributed_j);
        set_real(&v[EV_SHARE], z->share);
        val_int(&v[EV_ERRNO], z->err);
    }
    return 0;
}

/* ---- summary -------------------------------------------------------------------------------------- */

/* group_of: the domain's kind for the per-kind totals: package, dram, core, uncore, psys, ... */
static const char *group_of(const char *domain, char *buf, size_t cap)
{
    const char *last = strrchr(domain, '/');
    last = last ? last + 1 : domain;
    size_t n = strcspn(last, "-");
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, last, n);
    buf[n] = '\0';
    return buf;
}

static const char *fmt_j(char *buf, size_t cap, double j)
{
    if (isnan(j))
        snprintf(buf, cap, "n/a");
    else if (fabs(j) >= 1e6)
        snprintf(buf, cap, "%.2f MJ", j / 1e6);
    else if (fabs(j) >= 1e4)
        snprintf(buf, cap, "%.2f kJ", j / 1e3);
    else
        snprintf(buf, cap, "%.1f J", j);
    return buf;
}

static double zone_energy(const ezone_t *z)
{
    return z->tr.known ? z->tr.total : NAN;
}

static double zone_mean_w(const ezone_t *z)
{
    return z->tr.covered_s > 0 ? z->tr.total / z->tr.covered_s : NAN;
}

/* first_error: the errno of a zone whose energy was never read, or 0. */
static int64_t first_error(const energy_t *e)
{
    for (size_t i = 0; i < e->n; i++)
        if (!e->z[i].tr.known && e->z[i].err)
            return e->z[i].err;
    return 0;
}

static const char *error_text(int64_t err, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s%s", strerror(err < 0 && err > -4096 ? (int)-err : EINVAL), /* an errno, or not */
             err == -EACCES ? " (energy_uj is root-only since Linux 5.10)" : "");
    return buf;
}

/* groups: per kind of domain (package, dram, psys, ...) the sum of the zones' energy, NAN when a zone of the
 * kind has none. Returns the number of kinds in names/sums (at most max). */
static size_t groups(const energy_t *e, char names[][16], double *sums, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < e->n; i++) {
        char g[16];
        group_of(e->z[i].domain, g, sizeof(g));
        size_t k = 0;
        while (k < n && strcmp(names[k], g) != 0)
            k++;
        if (k == n) {
            if (n == max)
                continue;
            snprintf(names[n], sizeof(names[n]), "%s", g);
            sums[n++] = 0;
        }
        sums[k] += zone_energy(&e->z[i]);
    }
    return n;
}

static void energy_summary(void *state, js_figure_t *r)
{
    energy_t *e = state;
    if (!e->n)
        return;
    char buf[160];
    fig_put_text(r, "energy.source", "RAPL (powercap energy_uj)");
    fig_merge(fig_put_num(r, "energy.node_energy_j", "J", e->node_intervals ? e->node_j : NAN),
              FIG_MERGE_SUM);
    fig_put_text(r, "energy.node_domains", "package + dram (psys reported apart)");
    fig_put_num(r, "energy.node_mean_power_w", "W",
                e->node_covered_s > 0 ? e->node_j / e->node_covered_s : NAN);
    fig_put_num(r, "energy.node_max_power_w", "W", e->node_max_w);
    fig_put_num(r, "energy.covered_s", "s", e->node_covered_s);
    int64_t err = first_error(e);
    fig_put_text(r, "energy.error", err ? error_text(err, buf, sizeof(buf)) : NULL);
    char names[16][16];
    double sums[16];
    size_t ng = groups(e, names, sums, 16);
    fig_put_object(r, "energy.domains_j");
    for (size_t k = 0; k < ng; k++) {
        fig_name(r, "energy.domains_j", names[k]);
        fig_put_num(r, "energy.domains_j.{}", "J", sums[k]);
    }
    fig_put_array(r, "energy.zones");
    for (size_t i = 0; i < e->n; i++) {
        const ezone_t *z = &e->z[i];
        fig_put_elem(r, "energy.zones");
        fig_put_text(r, "energy.zones[].zone", z->zone);
        fig_put_text(r, "energy.zones[].domain", z->domain);
        fig_put_num(r, "energy.zones[].energy_j", "J", zone_energy(z));
        fig_put_num(r, "energy.zones[].mean_power_w", "W", zone_mean_w(z));
        fig_put_num(r, "energy.zones[].max_power_w", "W", z->max_w);
        fig_put_int(r, "energy.zones[].intervals", "count", z->tr.known);
        fig_put_int(r, "energy.zones[].intervals_unknown", "count", z->tr.unknown);
        fig_put_text(r, "energy.zones[].error",
                     !z->tr.known && z->err ? error_text(z->err, buf, sizeof(buf)) : NULL);
    }
    fig_put_text(r, "energy.attribution.method", "busy_cpu_share");
    fig_put_text(
        r, "energy.attribution.description",
        "per interval: node energy x the node's busy CPU fraction x the scope's share of the busy CPU "
        "time; the idle part is attributed to no one");
    bool any = e->attributed > 0;
    fig_put_num(r, "energy.attribution.scope_energy_j", "J", any ? e->scope_j : NAN);
    fig_put_num(r, "energy.attribution.scope_fraction", "fraction",
                any && e->busy_j + e->idle_j > 0 ? e->scope_j / (e->busy_j + e->idle_j) : NAN);
    fig_put_num(r, "energy.attribution.node_busy_energy_j", "J", any ? e->busy_j : NAN);
    fig_put_num(r, "energy.attribution.node_idle_energy_j", "J", any ? e->idle_j : NAN);
    fig_put_int(r, "energy.attribution.intervals", "count", e->attributed);
    fig_put_int(r, "energy.attribution.intervals_unattributed", "count", e->unattributed);
}

static int energy_summary_text(const js_figure_t *r, js_buf_t *b)
{
    if (!fig_get(r, "energy"))
        return 0;
    char a[32], c[32], d[32];
    int err = 0;
    double node_j = fig_num(r, "energy.node_energy_j");
    const char *why = fig_text(r, "energy.error");
    if (isnan(node_j) && why)
        return buf_printf(b, "  energy           not measured: %s\n", why);
    err |= buf_printf(b, "  energy           node %s, mean %s W, max %s W (", fmt_j(a, sizeof(a), node_j),
                      fig_fmt(c, sizeof(c), "%.1f", fig_num(r, "energy.node_mean_power_w")),
                      fig_fmt(d, sizeof(d), "%.1f", fig_num(r, "energy.node_max_power_w")));
    const js_figure_t *dom = fig_get(r, "energy.domains_j");
    for (size_t k = 0; k < fig_count(dom); k++)
        err |= buf_printf(b, "%s%s %s", k ? ", " : "", fig_kid(dom, k)->name,
                          fmt_j(a, sizeof(a), fig_value(fig_kid(dom, k))));
    err |= buf_printf(b, ")\n");
    double scope_j = fig_num(r, "energy.attribution.scope_energy_j");
    if (!isnan(scope_j))
        err |= buf_printf(
            b, "  energy, scope    %s, %s%% of the node's [busy_cpu_share]; idle %s not attributed\n",
            fmt_j(a, sizeof(a), scope_j),
            fig_fmt(c, sizeof(c), "%.1f", fig_num(r, "energy.attribution.scope_fraction") * 100),
            fmt_j(d, sizeof(d), fig_num(r, "energy.attribution.node_idle_energy_j")));
    return err ? -ENOMEM : 0;
}

static int energy_summary_short(const js_figure_t *r, js_buf_t *b)
{
    double node_j = fig_num(r, "energy.node_energy_j");
    if (isnan(node_j))
        return 0;
    char a[32], c[32];
    int err = buf_printf(b, "  energy           node %s (mean %s W)", fmt_j(a, sizeof(a), node_j),
                         fig_fmt(c, sizeof(c), "%.1f", fig_num(r, "energy.node_mean_power_w")));
    double scope_j = fig_num(r, "energy.attribution.scope_energy_j");
    if (!isnan(scope_j))
        err |= buf_printf(b, "; the scope's share %s", fmt_j(a, sizeof(a), scope_j));
    return err | buf_printf(b, "\n");
}

/* ---- life ------------------------------------------------------------------------------------------ */

static int energy_init(const js_model_cfg_t *cfg, void **ret_state)
{
    energy_t *e = calloc(1, sizeof(*e));
    if (!e)
        return -ENOMEM;
    e->tck = cfg->clk_tck > 0 ? (double)cfg->clk_tck : 100;
    e->cfg = *cfg;
    e->node_max_w = NAN;
    e->prev_scope_cpu = NAN;
    e->last_share = NAN;
    for (int i = 0; i < RC__MAX; i++)
        e->rc[i] = -1;
    for (int i = 0; i < CC__MAX; i++)
        e->cc[i] = -1;
    *ret_state = e;
    return 0;
}

static void energy_fini(void *state)
{
    energy_t *e = state;
    if (!e)
        return;
    for (size_t i = 0; i < e->n; i++) {
        free(e->z[i].zone);
        free(e->z[i].domain);
    }
    free(e->z);
    free(e);
}

const js_model_part_t part_energy = {
    .name = "energy",
    .init = energy_init,
    .feed = energy_feed,
    .view_table = energy_view_table,
    .view_fill = energy_view_fill,
    .summary = energy_summary,
    .summary_text = energy_summary_text,
    .summary_short = energy_summary_short,
    .fini = energy_fini,
};
