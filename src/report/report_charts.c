/* SPDX-License-Identifier: MIT
 *
 * The report's charts: a fixed table of curated charts for the views jobscope knows (chart_specs[]), in page
 * sections; for every other view, one chart per unit of its kept columns; the heat maps (CPUs x time, nodes
 * x time) and the top commands' bars. Each chart takes its series from one node, from the nodes of a batch
 * job (one series per node), or from two runs being compared (the second dashed). Part of the report builder
 * (report_int.h); drawing is svg.c's.
 */
#include "report/report_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- charts -----------------------------------------------------------------------------------------------
 */

enum {
    F_FILL = 1 << 0,     /* fill under the first series */
    F_CORES = 1 << 1,    /* a line at the cores available */
    F_LIMIT = 1 << 2,    /* a line at the memory limit, and a marker at the kernel peak */
    F_HOSTMEM = 1 << 3,  /* a line at the host's memory */
    F_RANGE01 = 1 << 4,  /* value axis 0..1 */
    F_NONZERO = 1 << 5,  /* leave out series that are zero throughout */
    F_COMBINED = 1 << 6, /* in the nodes section: one series per node (first column) */
    F_GPUMEM = 1 << 7,   /* a line at the largest GPU's memory */
};

typedef struct {
    const char *id, *section, *title, *unit, *view;
    struct {
        const char *col, *name; /* col may end in '*' (a prefix); name NULL: from the column */
    } s[6];
    unsigned flags;
    unsigned height;
} cspec_t;

/* The known views and their curated charts, in page order. A view listed here gets only these charts. */
/* clang-format off */
static const cspec_t chart_specs[] = {
    {"cpu", "cpu", "Cores in use", "cores", "tree",
     {{"cpu_cores", "cores in use"}}, F_FILL | F_CORES | F_COMBINED, 0},
    {"host-cpu", "cpu", "CPU utilisation of the host", "fraction", "system",
     {{"cpu_util_fraction", "busy"}, {"iowait_fraction", "iowait"}, {"steal_fraction", "steal"}}, F_RANGE01, 200},
    {"cpufreq", "cpu", "CPU frequency (mean, minimum and maximum over the CPUs)", "Hz", "cpufreq",
     {{"freq_mhz", "frequency"}}, 0, 200},
    {"gpu-util", "gpu", "GPU utilisation, per device", "fraction", "gpu",
     {{"util_fraction", NULL}}, F_RANGE01, 0},
    {"gpu-mem", "gpu", "GPU memory in use, per device", "bytes", "gpu",
     {{"mem_used_bytes", NULL}}, F_GPUMEM, 0},
    {"gpu-job-mem", "gpu", "GPU memory of the job's processes, per device", "bytes", "gpu",
     {{"job_mem_bytes", NULL}}, F_NONZERO, 200},
    {"gpu-power", "gpu", "GPU power, per device", "W", "gpu",
     {{"power_w", NULL}}, 0, 200},
    {"gpu-temp", "gpu", "GPU temperature, per device", "\xc2\xb0" "C", "gpu",
     {{"temp_c", NULL}}, 0, 180},
    {"mem", "memory", "Memory of the job", "bytes", "tree",
     {{"memory_bytes", "memory (no page twice)"}, {"rss_sum_bytes", "RSS sum (shared pages per process)"},
      {"rss_main_bytes", "RSS of the command"}, {"uss_bytes", "private (USS)"}, {"pss_bytes", "PSS"}},
     F_FILL | F_LIMIT | F_COMBINED, 0},
    {"swap", "memory", "Swap used by the job", "bytes", "tree",
     {{"swap_bytes", "swap (tree)"}}, F_NONZERO, 180},
    {"host-mem", "memory", "Memory of the host", "bytes", "system",
     {{"mem_used_bytes", "used"}, {"mem_available_bytes", "available"}, {"swap_used_bytes", "swap used"}},
     F_HOSTMEM, 200},
    {"io", "io", "Storage I/O of the job", "bytes/s", "tree",
     {{"read_bytes_per_s", "read"}, {"write_bytes_per_s", "write"}}, 0, 0},
    {"io-calls", "io", "Read and write calls of the job (page cache, pipes and sockets included)", "bytes/s",
     "tree", {{"read_chars_per_s", "read calls"}, {"write_chars_per_s", "write calls"}}, 0, 200},
    {"host-disk", "io", "Disks of the host", "bytes/s", "system",
     {{"disk_*", NULL}}, F_NONZERO, 200},
    {"pressure", "io", "Pressure stall information (PSI) of the host", "fraction", "system",
     {{"psi_cpu_some_fraction", "CPU some"}, {"psi_memory_some_fraction", "memory some"},
      {"psi_memory_full_fraction", "memory full"}, {"psi_io_some_fraction", "I/O some"},
      {"psi_io_full_fraction", "I/O full"}}, F_RANGE01, 200},
    {"net", "network", "Network traffic of the host, per interface", "bytes/s", "network",
     {{"rx_bytes_per_s", "receive"}, {"tx_bytes_per_s", "transmit"}}, F_NONZERO, 0},
    {"net-errors", "network", "Network errors and drops", "/s", "network",
     {{"rx_errors_per_s", "receive errors"}, {"tx_errors_per_s", "transmit errors"},
      {"rx_drops_per_s", "receive drops"}, {"tx_drops_per_s", "transmit drops"}}, F_NONZERO, 180},
    {"ib", "network", "InfiniBand traffic, per port", "bytes/s", "infiniband",
     {{"xmit_bytes_per_s", "send"}, {"rcv_bytes_per_s", "receive"}}, F_NONZERO, 0},
    {"power", "power", "Power (RAPL), per domain", "W", "energy",
     {{"power_w", NULL}}, 0, 0},
    {"energy", "power", "Energy since the start (RAPL), per domain, and the job's share", "J", "energy",
     {{"energy_j", NULL}, {"scope_energy_j", "job's share"}}, 0, 200},
    {"temp", "thermal", "Temperatures", "\xc2\xb0" "C", "thermal",
     {{"temp_celsius", NULL}}, 0, 200},
    {"procs", "procs", "Processes and threads of the job", "count", "tree",
     {{"processes", "processes"}, {"threads", "threads"}}, 0, 180},
};
/* clang-format on */
#define NSPECS (sizeof(chart_specs) / sizeof(chart_specs[0]))

static const struct {
    const char *id, *title;
} sections[] = {
    {"cpu", "CPU"},
    {"gpu", "GPUs"},
    {"memory", "Memory"},
    {"io", "I/O and pressure"},
    {"network", "Network"},
    {"power", "Power and energy"},
    {"thermal", "Temperature"},
    {"procs", "Processes"},
};

/* col_match: whether column `col` matches the spec column `pat` (exact, or a prefix ending in '*'). */
static bool col_match(const char *pat, const char *col)
{
    size_t n = strlen(pat);
    if (n && pat[n - 1] == '*')
        return strncmp(pat, col, n - 1) == 0;
    return strcmp(pat, col) == 0;
}

/* human_words: a raw name ("rss_bytes" stripped to "rss", "psi_cpu_some", "task_clock") for a legend: '_' as
 * ' ', abbreviations in capitals ("RSS", "PSI CPU some", "task clock"), in place. */
static void human_words(char *buf, size_t cap)
{
    static const struct {
        const char *raw, *human;
    } words[] = {
        {"rss", "RSS"},     {"uss", "USS"},    {"pss", "PSS"},        {"psi", "PSI"},      {"cpu", "CPU"},
        {"gpu", "GPU"},     {"io", "I/O"},     {"ipc", "IPC"},        {"oom", "OOM"},      {"numa", "NUMA"},
        {"irq", "IRQ"},     {"fp", "FP"},      {"cas", "CAS"},        {"hwm", "peak RSS"}, {"rx", "receive"},
        {"tx", "transmit"}, {"mem", "memory"}, {"pids", "processes"}, {"dram", "DRAM"},    {"pkg", "package"},
    };
    char out[256] = "", word[64];
    size_t len = 0;
    for (const char *p = buf; *p;) {
        size_t k = 0;
        while (p[k] && p[k] != '_' && p[k] != ' ')
            k++;
        snprintf(word, sizeof(word), "%.*s", (int)(k < sizeof(word) - 1 ? k : sizeof(word) - 1), p);
        const char *w = word;
        for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
            if (strcmp(word, words[i].raw) == 0)
                w = words[i].human;
        int n = snprintf(out + len, sizeof(out) - len, "%s%s", len ? " " : "", w);
        if (n > 0 && (size_t)n < sizeof(out) - len)
            len += (size_t)n;
        p += k;
        while (*p == '_' || *p == ' ')
            p++;
    }
    snprintf(buf, cap, "%s", out);
}

/* pretty_col: a legend name from a column name: the unit suffix and a matched prefix dropped, the words
 * human_words() gives. */
void pretty_col(const char *col, const char *prefix, char *buf, size_t cap)
{
    static const char *const suffixes[] = {"_bytes_per_s", "_per_s", "_fraction", "_bytes", "_celsius",
                                           "_mhz",         "_w",     "_j",        "_s",     "_ns"};
    size_t skip = prefix && prefix[strlen(prefix) - 1] == '*' ? strlen(prefix) - 1 : 0;
    snprintf(buf, cap, "%s", col + (strlen(col) > skip ? skip : 0));
    size_t n = strlen(buf);
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        size_t k = strlen(suffixes[i]);
        if (n > k && strcmp(buf + n - k, suffixes[i]) == 0) {
            buf[n - k] = '\0';
            break;
        }
    }
    human_words(buf, cap);
}

/* curated_here: whether `view` is drawn by curated charts for these sources (a view jobscope knows, one of
 * whose curated columns they hold), or not charted at all; otherwise it gets the generic charts, so a view
 * whose columns were renamed still shows. */
static bool curated_here(const src_t *src, size_t nsrc, const char *view)
{
    if (!strcmp(view, "process") || !strcmp(view, "marks") || !strcmp(view, "phases"))
        return true;
    for (size_t i = 0; i < NSPECS; i++) {
        const cspec_t *c = &chart_specs[i];
        if (strcmp(c->view, view) != 0)
            continue;
        for (size_t k = 0; k < sizeof(c->s) / sizeof(c->s[0]) && c->s[k].col; k++)
            for (size_t a = 0; a < nsrc; a++)
                for (size_t j = 0; j < src[a].n->ns; j++)
                    if (!strcmp(src[a].n->s[j].view, view) && col_match(c->s[k].col, src[a].n->s[j].col))
                        return true;
    }
    return false;
}

typedef struct {
    js_series_t s[MAX_CHART_SERIES];
    char names[MAX_CHART_SERIES][160];
    double *own[2 * MAX_CHART_SERIES]; /* compacted copies of sparse series */
    size_t n, nown;
    int err;
} serieslist_t;

static void list_free(serieslist_t *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->nown; i++)
        free(l->own[i]);
    free(l);
}

/* sparse: whether the finite values of v are mostly isolated (a value read every few samples, at a source's
 * cadence): then the points are joined rather than drawn as dots between gaps. */
static bool sparse(const double *v, size_t n, size_t *ret_finite)
{
    size_t finite = 0, pairs = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(v[i]))
            continue;
        finite++;
        pairs += i > 0 && isfinite(v[i - 1]);
    }
    *ret_finite = finite;
    return finite >= 2 && finite < n && pairs * 10 < finite;
}

/* add_series: append a series of node n's values v (name prefixed by `label`); a sparse one is compacted. */
static void add_series(serieslist_t *l, const rnode_t *n, const double *v, const char *name,
                       const char *label, bool dashed, js_colour_t colour, bool fill)
{
    if (l->n == MAX_CHART_SERIES || l->err)
        return;
    if (label)
        snprintf(l->names[l->n], sizeof(l->names[0]), "%s: %s", label, name);
    else
        snprintf(l->names[l->n], sizeof(l->names[0]), "%s", name);
    const double *t = n->t;
    size_t count = n->n, finite;
    if (sparse(v, n->n, &finite)) {
        double *ct = malloc(finite * sizeof(*ct)), *cv = malloc(finite * sizeof(*cv));
        if (!ct || !cv) {
            free(ct);
            free(cv);
            l->err = -ENOMEM;
            return;
        }
        size_t k = 0;
        for (size_t i = 0; i < n->n; i++)
            if (isfinite(v[i])) {
                ct[k] = n->t[i];
                cv[k++] = v[i];
            }
        l->own[l->nown++] = ct;
        l->own[l->nown++] = cv;
        t = ct;
        v = cv;
        count = k;
    }
    l->s[l->n] = (js_series_t){
        .name = l->names[l->n], .t = t, .v = v, .n = count, .colour = colour, .fill = fill, .dashed = dashed};
    l->n++;
}

/* spec_series: the series of chart `c` from the sources. In a comparison each (column, group) keeps one
 * colour across the runs (B dashed); with several nodes (F_COMBINED) each node has its colour and only the
 * first column is drawn. Colours go to the series drawn, in order. */
static void spec_series(const cspec_t *c, const src_t *src, size_t nsrc, bool combined, serieslist_t *l)
{
    size_t key = 0; /* colour position of a (column, group) within the chart */
    for (size_t k = 0; k < sizeof(c->s) / sizeof(c->s[0]) && c->s[k].col; k++) {
        if (combined && k > 0)
            break;
        /* the groups of this column, in the first source that has them, then any other source's */
        for (size_t a = 0; a < nsrc; a++) {
            const rnode_t *n = src[a].n;
            for (size_t i = 0; i < n->ns; i++) {
                const rseries_t *rs = &n->s[i];
                if (strcmp(rs->view, c->view) != 0 || !col_match(c->s[k].col, rs->col))
                    continue;
                /* seen in an earlier source: drawn with it */
                bool earlier = false;
                for (size_t b = 0; b < a && !earlier && !combined; b++)
                    earlier = find_series(src[b].n, rs->view, rs->col, rs->group) != NULL;
                if (earlier)
                    continue;
                bool drawn = false;
                for (size_t b = combined ? a : 0; b < (combined ? a + 1 : nsrc); b++) {
                    const rseries_t *x = b == a ? rs : find_series(src[b].n, rs->view, rs->col, rs->group);
                    if (!x)
                        continue;
                    sstat_t st = sstat(src[b].n, x);
                    if (!st.finite || ((c->flags & F_NONZERO) && !st.nonzero))
                        continue;
                    char name[128], colname[64];
                    const char *cn = c->s[k].name;
                    if (!cn) {
                        pretty_col(rs->col, c->s[k].col, colname, sizeof(colname));
                        cn = colname;
                    }
                    if (combined)
                        snprintf(name, sizeof(name), "%s", src[b].n->name);
                    else if (rs->group[0] && (c->s[1].col || !c->s[k].name))
                        snprintf(name, sizeof(name), "%s %s", rs->group, c->s[k].name ? cn : "");
                    else if (rs->group[0])
                        snprintf(name, sizeof(name), "%s", rs->group);
                    else
                        snprintf(name, sizeof(name), "%s", cn);
                    size_t len = strlen(name);
                    while (len && name[len - 1] == ' ')
                        name[--len] = '\0';
                    js_colour_t col = (js_colour_t)(1 + (combined ? b : key) % (JS_COLOUR_MAX - 1));
                    bool fill = (c->flags & F_FILL) && key == 0 && nsrc == 1;
                    add_series(l, src[b].n, x->v, name, combined ? NULL : src[b].label, src[b].dashed, col,
                               fill);
                    drawn = true;
                }
                key += drawn;
            }
        }
    }
}

/* add_hline: a reference line, unless one at the same value is drawn already (two runs with the same
 * allocation): that one then loses its run prefix (`plain` is the label without it). */
static size_t add_hline(js_hline_t *hl, char (*labels)[200], size_t nh, double v, const char *label,
                        const char *plain)
{
    for (size_t i = 0; i < nh; i++)
        if (hl[i].v == v) {
            snprintf(labels[i], sizeof(labels[0]), "%s", plain);
            return nh;
        }
    snprintf(labels[nh], sizeof(labels[0]), "%s", label);
    hl[nh] = (js_hline_t){v, labels[nh], JS_VERMILLION};
    return nh + 1;
}

/* chart_time: the time range shared by the sources (0 .. the latest end). */
static void chart_time(const src_t *src, size_t nsrc, double *t_min, double *t_max)
{
    *t_min = 0;
    *t_max = 0;
    for (size_t a = 0; a < nsrc; a++)
        if (src[a].n->n && src[a].n->t[src[a].n->n - 1] > *t_max)
            *t_max = src[a].n->t[src[a].n->n - 1];
}

/* line_chart: draw `ch` (id, title, unit, lines and value range set by the caller) with the series of `l`
 * (still the caller's) over the time of the sources, with the report's phases and events unless the page is a
 * comparison. Returns svg_line_chart's result, or -ENOMEM (also left in the page). */
static int line_chart(page_t *pg, js_chart_t *ch, const src_t *src, size_t nsrc, const serieslist_t *l)
{
    js_band_t *bands = NULL;
    js_event_t *events = NULL;
    size_t nb = 0, ne = 0;
    if (chart_marks(pg->r, pg->compare, &bands, &nb, &events, &ne, ch) < 0)
        return pg->h->err = -ENOMEM;
    chart_time(src, nsrc, &ch->t_min, &ch->t_max);
    ch->series = l->s;
    ch->nseries = l->n;
    ch->bands = bands;
    ch->nbands = nb;
    ch->events = events;
    ch->nevents = ne;
    int rc = svg_line_chart(pg->h, ch);
    free(bands);
    free(events);
    return rc;
}

static int emit_spec(page_t *pg, const cspec_t *c, const src_t *src, size_t nsrc, bool combined,
                     const char *id_suffix)
{
    serieslist_t *l = calloc(1, sizeof(*l));
    if (!l)
        return pg->h->err = -ENOMEM;
    spec_series(c, src, nsrc, combined, l);
    if (!l->n || l->err) {
        int e = l->err;
        list_free(l);
        return e ? (pg->h->err = e) : 0;
    }
    js_hline_t hl[4];
    js_marker_t mk[4];
    char hlabel[4][200], mlabel[4][96], vb[48];
    size_t nh = 0, nm = 0;
    for (size_t a = 0; a < nsrc && a < 2; a++) {
        const rnode_t *n = src[a].n;
        const char *who = nsrc > 1 && src[a].label ? src[a].label : NULL;
        char lab[200], plain[96];
        if ((c->flags & F_CORES) && n->cores_available > 0 && !combined) {
            snprintf(plain, sizeof(plain), "cores available %s",
                     units_format(vb, sizeof(vb), n->cores_available, "count"));
            snprintf(lab, sizeof(lab), "%s%s%s", who ? who : "", who ? ": " : "", plain);
            nh = add_hline(hl, hlabel, nh, n->cores_available, lab, plain);
        }
        if ((c->flags & F_LIMIT) && !combined) {
            js_facts_t f;
            node_facts(n, &f);
            if (isfinite(f.mem_limit)) {
                snprintf(plain, sizeof(plain), "memory limit %s",
                         units_format(vb, sizeof(vb), f.mem_limit, "bytes"));
                snprintf(lab, sizeof(lab), "%s%s%s", who ? who : "", who ? ": " : "", plain);
                nh = add_hline(hl, hlabel, nh, f.mem_limit, lab, plain);
            }
            /* the kernel's peak (largest single process) where the largest VmHWM reached it */
            const rseries_t *hwm = find_series(n, "tree", "hwm_max_bytes", "");
            const rseries_t *rss = find_series(n, "tree", "rss_sum_bytes", "");
            const rseries_t *which = hwm ? hwm : rss;
            sstat_t st = which ? sstat(n, which) : stat_of(NULL, 0);
            double hwm_peak = snum(n, "memory.peak_rss_kernel_bytes");
            if (isfinite(hwm_peak) && st.finite && nm < 4) {
                size_t at = st.imax;
                for (size_t i = 0; hwm && i < n->n; i++)
                    if (isfinite(hwm->v[i]) && hwm->v[i] >= hwm_peak) {
                        at = i;
                        break;
                    }
                snprintf(mlabel[nm], sizeof(mlabel[0]), "%s%skernel peak %s (one process)", who ? who : "",
                         who ? ": " : "", units_format(vb, sizeof(vb), hwm_peak, "bytes"));
                mk[nm] = (js_marker_t){n->t[at], hwm_peak, mlabel[nm], JS_BLACK};
                nm++;
            }
        }
        if ((c->flags & F_HOSTMEM) && !combined) {
            const rseries_t *tot = find_series(n, "system", "mem_total_bytes", "");
            sstat_t st = tot ? sstat(n, tot) : stat_of(NULL, 0);
            if (st.finite) {
                snprintf(plain, sizeof(plain), "memory %s", units_format(vb, sizeof(vb), st.max, "bytes"));
                snprintf(lab, sizeof(lab), "%s%s%s", who ? who : "", who ? ": " : "", plain);
                nh = add_hline(hl, hlabel, nh, st.max, lab, plain);
            }
        }
        if ((c->flags & F_GPUMEM) && !combined) {
            double mx = NAN; /* the largest device's memory */
            for (size_t i = 0; i < n->ns; i++)
                if (!strcmp(n->s[i].view, "gpu") && !strcmp(n->s[i].col, "mem_total_bytes"))
                    mx = nan_max(mx, sstat(n, &n->s[i]).max);
            if (isfinite(mx)) {
                snprintf(plain, sizeof(plain), "device memory %s", units_format(vb, sizeof(vb), mx, "bytes"));
                snprintf(lab, sizeof(lab), "%s%s%s", who ? who : "", who ? ": " : "", plain);
                nh = add_hline(hl, hlabel, nh, mx, lab, plain);
            }
        }
    }
    char id[96], title[256];
    snprintf(id, sizeof(id), "%s%s%s", pg->idp, c->id, id_suffix ? id_suffix : "");
    snprintf(title, sizeof(title), "%s", c->title);
    if (combined)
        snprintf(title, sizeof(title), "%s, per node", c->title);
    js_chart_t ch = {.id = id,
                     .title = title,
                     .unit = c->unit,
                     .hlines = hl,
                     .nhlines = nh,
                     .markers = mk,
                     .nmarkers = nm,
                     .v_min = 0,
                     .v_max = (c->flags & F_RANGE01) ? 1 : 0,
                     .height = c->height};
    int rc = line_chart(pg, &ch, src, nsrc, l);
    list_free(l);
    return rc;
}

static void emit_perf_view(page_t *pg, const src_t *src, size_t nsrc);

/* ---- generic charts of views jobscope does not know ---- */

/* generic_units: the distinct display units of the kept series of `view` over the sources, in column order.
 */
static size_t generic_units(const src_t *src, size_t nsrc, const char *view, const char **units, size_t cap)
{
    size_t nu = 0;
    for (size_t a = 0; a < nsrc; a++)
        for (size_t i = 0; i < src[a].n->ns; i++) {
            const rseries_t *rs = &src[a].n->s[i];
            if (strcmp(rs->view, view) != 0)
                continue;
            size_t u = 0;
            while (u < nu && strcmp(units[u], rs->unit) != 0)
                u++;
            if (u == nu && nu < cap)
                units[nu++] = rs->unit;
        }
    return nu;
}

static int emit_generic_view(page_t *pg, const src_t *src, size_t nsrc, const char *view)
{
    const char *units[32];
    size_t nu = generic_units(src, nsrc, view, units, 32);
    for (size_t u = 0; u < nu && !pg->h->err; u++) {
        serieslist_t *l = calloc(1, sizeof(*l));
        if (!l)
            return pg->h->err = -ENOMEM;
        size_t pos = 0;
        for (size_t a = 0; a < nsrc; a++)
            for (size_t i = 0; i < src[a].n->ns; i++) {
                const rseries_t *rs = &src[a].n->s[i];
                if (strcmp(rs->view, view) != 0 || strcmp(rs->unit, units[u]) != 0)
                    continue;
                bool earlier = false;
                for (size_t b = 0; b < a && !earlier; b++)
                    earlier = find_series(src[b].n, rs->view, rs->col, rs->group) != NULL;
                if (earlier)
                    continue;
                size_t p = pos;
                bool drawn = false;
                for (size_t b = 0; b < nsrc; b++) {
                    const rseries_t *x = b == a ? rs : find_series(src[b].n, rs->view, rs->col, rs->group);
                    if (!x || !sstat(src[b].n, x).finite)
                        continue;
                    char colname[64], name[160];
                    pretty_col(rs->col, NULL, colname, sizeof(colname));
                    if (rs->group[0])
                        snprintf(name, sizeof(name), "%s %s", rs->group, colname);
                    else
                        snprintf(name, sizeof(name), "%s", colname);
                    add_series(l, src[b].n, x->v, name, src[b].label, src[b].dashed,
                               (js_colour_t)(1 + p % (JS_COLOUR_MAX - 1)), false);
                    drawn = true;
                }
                pos += drawn;
            }
        if (l->n && !l->err) {
            char id[96], title[160];
            snprintf(id, sizeof(id), "%sv-%s-%zu", pg->idp, view, u);
            snprintf(title, sizeof(title), "%s: %s", view, units[u][0] ? units[u] : "values");
            bool frac = strcmp(units[u], "fraction") == 0;
            /* the allocation, where the unit is that of one: cores available, the cgroup's memory limit */
            js_hline_t hl[4];
            char hlabel[4][200], vb[48], lab[200], plain[96];
            size_t nh = 0;
            for (size_t a = 0; a < nsrc && a < 2; a++) {
                const char *who = nsrc > 1 && src[a].label ? src[a].label : NULL;
                double lim = NAN;
                if (!strcmp(units[u], "cores") && src[a].n->cores_available > 0) {
                    lim = src[a].n->cores_available;
                    snprintf(plain, sizeof(plain), "cores available %s",
                             units_format(vb, sizeof(vb), lim, "count"));
                } else if (!strcmp(units[u], "bytes") && !strcmp(view, "cgroup")) {
                    js_facts_t f;
                    node_facts(src[a].n, &f);
                    lim = f.mem_limit;
                    snprintf(plain, sizeof(plain), "memory limit %s",
                             units_format(vb, sizeof(vb), lim, "bytes"));
                }
                if (!isfinite(lim))
                    continue;
                snprintf(lab, sizeof(lab), "%s%s%s", who ? who : "", who ? ": " : "", plain);
                nh = add_hline(hl, hlabel, nh, lim, lab, plain);
            }
            js_chart_t ch = {.id = id,
                             .title = title,
                             .unit = units[u],
                             .hlines = hl,
                             .nhlines = nh,
                             .v_max = frac ? 1 : 0,
                             .height = 200};
            line_chart(pg, &ch, src, nsrc, l);
        }
        list_free(l);
    }
    return pg->h->err;
}

/* ---- heat maps ---- */

/* cpu_number: N of a column "cpuN_util_fraction", or -1. */
static long cpu_number(const char *col)
{
    if (strncmp(col, "cpu", 3) != 0 || col[3] < '0' || col[3] > '9')
        return -1;
    char *end;
    long k = strtol(col + 3, &end, 10);
    return strcmp(end, "_util_fraction") == 0 ? k : -1;
}

static int emit_cpu_heatmap(page_t *pg, const rnode_t *n)
{
    size_t cnt = 0;
    for (size_t i = 0; i < n->ns; i++)
        cnt += strcmp(n->s[i].view, "system") == 0 && cpu_number(n->s[i].col) >= 0;
    if (cnt < 2)
        return 0;
    js_series_t *rows = calloc(cnt, sizeof(*rows));
    char(*names)[24] = calloc(cnt, sizeof(*names));
    if (!rows || !names) {
        free(rows);
        free(names);
        return pg->h->err = -ENOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < n->ns; i++) {
        long c = strcmp(n->s[i].view, "system") == 0 ? cpu_number(n->s[i].col) : -1;
        if (c < 0)
            continue;
        snprintf(names[k], sizeof(names[0]), "CPU %ld", c);
        rows[k] = (js_series_t){.name = names[k], .t = n->t, .v = n->s[i].v, .n = n->n};
        k++;
    }
    char id[64];
    snprintf(id, sizeof(id), "%scpu-heat", pg->idp);
    double t_min, t_max; /* the time axis of the line charts above */
    chart_time(&(src_t){.n = n}, 1, &t_min, &t_max);
    int rc =
        svg_heatmap(pg->h, &(js_heatmap_t){.id = id,
                                           .title = "Utilisation of each CPU of the host, CPUs \xc3\x97 time",
                                           .unit = "fraction",
                                           .rows = rows,
                                           .nrows = k,
                                           .cols = n->n < 181 ? n->n : 181,
                                           .v_min = 0,
                                           .v_max = 1,
                                           .t_min = t_min,
                                           .t_max = t_max});
    free(rows);
    free(names);
    return rc;
}

/* emit_node_heatmap: nodes x time, cores in use over cores available (or cores when that is unknown). */
static int emit_node_heatmap(page_t *pg)
{
    const js_report_t *r = pg->r;
    js_series_t *rows = calloc(r->nnodes, sizeof(*rows));
    double **vals = calloc(r->nnodes, sizeof(*vals));
    if (!rows || !vals) {
        free(rows);
        free(vals);
        return pg->h->err = -ENOMEM;
    }
    bool frac = true;
    for (size_t i = 0; i < r->nnodes; i++)
        frac &= r->nodes[i].cores_available > 0;
    size_t k = 0, maxn = 0;
    for (size_t i = 0; i < r->nnodes; i++) {
        const rnode_t *n = &r->nodes[i];
        const rseries_t *s = find_series(n, "tree", "cpu_cores", "");
        maxn = n->n > maxn ? n->n : maxn;
        if (!s || !(vals[k] = malloc((n->n ? n->n : 1) * sizeof(double))))
            continue;
        for (size_t j = 0; j < n->n; j++)
            vals[k][j] = frac ? s->v[j] / n->cores_available : s->v[j];
        rows[k] = (js_series_t){.name = n->name, .t = n->t, .v = vals[k], .n = n->n};
        k++;
    }
    char id[64];
    snprintf(id, sizeof(id), "%snode-heat", pg->idp);
    double t_min = 0, t_max = 0; /* the time axis of the per-node charts beside it */
    for (size_t i = 0; i < r->nnodes; i++)
        if (r->nodes[i].n && r->nodes[i].t[r->nodes[i].n - 1] > t_max)
            t_max = r->nodes[i].t[r->nodes[i].n - 1];
    int rc = k ? svg_heatmap(pg->h,
                             &(js_heatmap_t){.id = id,
                                             .title = frac ? "CPU use of each node (cores in use / cores "
                                                             "available), nodes \xc3\x97 time"
                                                           : "Cores in use on each node, nodes \xc3\x97 time",
                                             .unit = frac ? "fraction" : "cores",
                                             .rows = rows,
                                             .nrows = k,
                                             .cols = maxn < 181 ? maxn : 181,
                                             .v_min = 0,
                                             .v_max = frac ? 1 : 0,
                                             .t_min = t_min,
                                             .t_max = t_max})
               : 0;
    for (size_t i = 0; i < r->nnodes; i++)
        free(vals[i]);
    free(vals);
    free(rows);
    return rc;
}

/* ---- bars: the top processes ---- */

/* tops_bars: the bars of one of the summary's top lists (top.by_cpu, top.by_memory); returns how many */
static size_t tops_bars(const rnode_t *n, const char *path, bool cpu, js_bar_t *bars, char (*notes)[128])
{
    const js_figure_t *tops = fig_get(sroot(n), path);
    size_t k = 0;
    for (size_t i = 0; i < fig_count(tops) && k < JS_TOP_CPU_MAX; i++) {
        const js_figure_t *t = fig_kid(tops, i);
        char b1[48];
        int64_t procs = fig_int(t, "processes", 0);
        if (cpu)
            snprintf(notes[k], 128, "%lld process%s, peak RSS %s", (long long)procs, procs == 1 ? "" : "es",
                     units_format(b1, sizeof(b1), fig_num(t, "peak_rss_bytes"), "bytes"));
        else
            snprintf(notes[k], 128, "%lld process%s, CPU %s", (long long)procs, procs == 1 ? "" : "es",
                     units_format(b1, sizeof(b1), fig_num(t, "cpu_s"), "s"));
        const char *comm = fig_text(t, "comm");
        bars[k] = (js_bar_t){comm ? comm : "", fig_num(t, cpu ? "cpu_s" : "peak_rss_bytes"), notes[k]};
        k++;
    }
    int64_t others = fig_int(sroot(n), "top.others_commands", 0);
    if (cpu && k && others > 0) { /* the rest, so that the bars account for all the CPU sampling saw */
        snprintf(notes[k], 128, "%lld other command%s", (long long)others, others == 1 ? "" : "s");
        bars[k] = (js_bar_t){"others", snum(n, "top.others_cpu_s"), notes[k]};
        k++;
    }
    return k;
}

static int emit_tops(page_t *pg, const rnode_t *n)
{
    js_bar_t bars[JS_TOP_CPU_MAX + 1];
    char notes[JS_TOP_CPU_MAX + 1][128];
    char id[64];
    size_t nb = tops_bars(n, "top.by_cpu", true, bars, notes);
    if (nb > 0) {
        snprintf(id, sizeof(id), "%stop-cpu", pg->idp);
        svg_bar_chart(
            pg->h, &(js_bars_t){
                       .id = id,
                       .title = "Top commands by CPU time (processes sampling saw; those covering 90% of it, "
                                "then the others)",
                       .unit = "s",
                       .bars = bars,
                       .nbars = nb});
    }
    nb = tops_bars(n, "top.by_memory", false, bars, notes);
    if (nb > 0) {
        snprintf(id, sizeof(id), "%stop-mem", pg->idp);
        svg_bar_chart(pg->h, &(js_bars_t){.id = id,
                                          .title = "Top commands by memory (largest RSS of one process)",
                                          .unit = "bytes",
                                          .bars = bars,
                                          .nbars = nb,
                                          .colour = JS_ORANGE});
    }
    return pg->h->err;
}

void node_charts(page_t *pg, const src_t *src, size_t nsrc, bool with_tops)
{
    js_html_t *h = pg->h;
    char sid[96];
    for (size_t k = 0; k < sizeof(sections) / sizeof(sections[0]); k++) {
        /* the section's charts go to a buffer of their own: a section with nothing drawn is left out */
        js_buf_t body = {0};
        js_html_t sub = {.buf = &body, .ids = h->ids, .docs = h->docs};
        pg->h = &sub;
        for (size_t i = 0; i < NSPECS; i++)
            if (strcmp(chart_specs[i].section, sections[k].id) == 0)
                emit_spec(pg, &chart_specs[i], src, nsrc, false, NULL);
        if (strcmp(sections[k].id, "cpu") == 0 && nsrc == 1)
            emit_cpu_heatmap(pg, src[0].n);
        if (strcmp(sections[k].id, "procs") == 0 && with_tops && nsrc == 1)
            emit_tops(pg, src[0].n);
        pg->h = h;
        h->ids = sub.ids;
        if (sub.err && !h->err)
            h->err = sub.err;
        if (body.len) {
            snprintf(sid, sizeof(sid), "%ssec-%s", pg->idp, sections[k].id);
            html_section_begin(h, sid, sections[k].title);
            html_raw(h, body.p);
            html_section_end(h);
        }
        buf_free(&body);
    }
    /* every other view: one chart per unit */
    const char *done[64];
    size_t ndone = 0;
    for (size_t a = 0; a < nsrc; a++)
        for (size_t i = 0; i < src[a].n->nviews; i++) {
            const rview_t *v = &src[a].n->views[i];
            if (curated_here(src, nsrc, v->name) || !v->ncols || !v->ngroups)
                continue;
            bool seen = false;
            for (size_t d = 0; d < ndone && !seen; d++)
                seen = strcmp(done[d], v->name) == 0;
            if (seen || ndone == 64)
                continue;
            done[ndone++] = v->name;
            char title[160];
            snprintf(title, sizeof(title),
                     strcmp(v->name, "perf") == 0 ? "Perf counters (view %s)" : "View %s", v->name);
            snprintf(sid, sizeof(sid), "%ssec-v-%s", pg->idp, v->name);
            html_section_begin(h, sid, title);
            html_para(h, v->table->help);
            if (v->dropped) {
                char note[160];
                snprintf(note, sizeof(note),
                         "%zu more rows (label groups) than the %d charted were left out.", v->dropped,
                         REPORT_MAX_GROUPS);
                html_para(h, note);
            }
            if (strcmp(v->name, "perf") == 0)
                emit_perf_view(pg, src, nsrc);
            else
                emit_generic_view(pg, src, nsrc, v->name);
            html_section_end(h);
        }
}

void nodes_section(page_t *pg)
{
    const js_report_t *r = pg->r;
    src_t *src = calloc(r->nnodes, sizeof(*src));
    if (!src) {
        pg->h->err = -ENOMEM;
        return;
    }
    for (size_t i = 0; i < r->nnodes; i++)
        src[i] = (src_t){.n = &r->nodes[i]};
    html_section_begin(pg->h, "sec-nodes", "Nodes");
    emit_node_heatmap(pg);
    for (size_t i = 0; i < NSPECS; i++)
        if (chart_specs[i].flags & F_COMBINED)
            emit_spec(pg, &chart_specs[i], src, r->nnodes, true, "-nodes");
    html_section_end(pg->h);
    free(src);
} /* ---- perf counters ---- */

/* perf_kind: what a perf series of event `group` ("task_clock_ns sw") is drawn as: 1 CPU time (an event
 * counting nanoseconds: its rate over 1e9 is cores), 0 a count (a rate per second). Its legend name in buf.
 */
static int perf_kind(const char *group, char *buf, size_t cap)
{
    char ev[128];
    size_t k = strcspn(group, " ");
    snprintf(ev, sizeof(ev), "%.*s", (int)(k < sizeof(ev) - 1 ? k : sizeof(ev) - 1), group);
    size_t n = strlen(ev);
    int ns = n > 3 && strcmp(ev + n - 3, "_ns") == 0;
    if (ns)
        ev[n - 3] = '\0';
    snprintf(buf, cap, "%s", ev);
    human_words(buf, cap);
    return ns;
}

/* perf_chart: one chart of the perf view's column `col`: kind 1 the CPU-time events in cores, 0 the counts
 * per second, -1 (col running_fraction) every event, drawn only where some counter was multiplexed. A
 * series missing or zero throughout is not drawn; the zero ones are named in `zero` (cap bytes). */
static void perf_chart(page_t *pg, const src_t *src, size_t nsrc, const char *col, int kind,
                       const char *title, const char *unit, const char *idsuffix, char *zero, size_t cap)
{
    serieslist_t *l = calloc(1, sizeof(*l));
    if (!l) {
        pg->h->err = -ENOMEM;
        return;
    }
    bool multiplexed = false;
    size_t pos = 0;
    for (size_t a = 0; a < nsrc; a++) {
        const rnode_t *n = src[a].n;
        for (size_t i = 0; i < n->ns && !l->err; i++) {
            const rseries_t *rs = &n->s[i];
            char name[128];
            if (strcmp(rs->view, "perf") != 0 || strcmp(rs->col, col) != 0)
                continue;
            int k = perf_kind(rs->group, name, sizeof(name));
            if (kind >= 0 && k != kind)
                continue;
            sstat_t st = sstat(n, rs);
            if (!st.finite)
                continue;
            if (!st.nonzero) {
                size_t len = strlen(zero);
                if (len + strlen(name) + 3 < cap && !strstr(zero, name))
                    snprintf(zero + len, cap - len, "%s%s", len ? ", " : "", name);
                continue;
            }
            multiplexed |= st.min < 0.999;
            const double *v = rs->v;
            if (kind == 1) { /* ns per second over 1e9: cores */
                double *c = malloc((n->n ? n->n : 1) * sizeof(*c));
                if (!c || l->nown == 2 * MAX_CHART_SERIES) {
                    free(c);
                    l->err = c ? 0 : -ENOMEM;
                    continue;
                }
                for (size_t j = 0; j < n->n; j++)
                    c[j] = rs->v[j] / 1e9;
                l->own[l->nown++] = c;
                v = c;
            }
            add_series(l, n, v, name, src[a].label, src[a].dashed,
                       (js_colour_t)(1 + pos++ % (JS_COLOUR_MAX - 1)), false);
        }
    }
    if (l->n && !l->err && (kind >= 0 || multiplexed)) {
        char id[96];
        snprintf(id, sizeof(id), "%sperf-%s", pg->idp, idsuffix);
        js_hline_t hl[1];
        char hlabel[1][200], vb[48];
        size_t nh = 0;
        if (kind == 1 && nsrc == 1 && src[0].n->cores_available > 0) {
            snprintf(hlabel[0], sizeof(hlabel[0]), "cores available %s",
                     units_format(vb, sizeof(vb), src[0].n->cores_available, "count"));
            hl[nh++] = (js_hline_t){src[0].n->cores_available, hlabel[0], JS_VERMILLION};
        }
        js_chart_t ch = {.id = id,
                         .title = title,
                         .unit = unit,
                         .hlines = hl,
                         .nhlines = nh,
                         .v_max = kind < 0 ? 1 : 0,
                         .height = 200};
        line_chart(pg, &ch, src, nsrc, l);
    }
    if (l->err)
        pg->h->err = l->err;
    list_free(l);
}

/* emit_perf_view: the perf view's section: CPU time counted (events in ns) in cores, counts per second, the
 * share of time counted where counters were multiplexed, and one line naming the counters that could not
 * be opened (the summary's perf.missing) and those zero throughout. The raw columns (targets, counts per
 * interval) are not drawn: a target count and a running fraction of 1 are constant lines. */
static void emit_perf_view(page_t *pg, const src_t *src, size_t nsrc)
{
    char zero[512] = "", none[640] = "", line[1400];
    perf_chart(pg, src, nsrc, "count_per_s", 1,
               "CPU time counted by perf counters, in cores (time counted / wall time)", "cores", "time",
               zero, sizeof(zero));
    perf_chart(pg, src, nsrc, "count_per_s", 0, "Perf counters, events per second", "/s", "rate", zero,
               sizeof(zero));
    char unused[8] = "";
    perf_chart(pg, src, nsrc, "running_fraction", -1,
               "Share of time each perf counter was counted (below 100%: multiplexed, counts scaled)",
               "fraction", "running", unused, 0);
    const char *why = NULL;
    for (size_t a = 0; a < nsrc; a++) {
        const js_figure_t *miss = fig_get(sroot(src[a].n), "perf.missing");
        for (size_t i = 0; i < fig_count(miss); i++) {
            const js_figure_t *m = fig_kid(miss, i);
            char name[128];
            if (!m || !m->name)
                continue;
            perf_kind(m->name, name, sizeof(name));
            size_t len = strlen(none);
            if (!strstr(none, name) && len + strlen(name) + 3 < sizeof(none))
                snprintf(none + len, sizeof(none) - len, "%s%s", len ? ", " : "", name);
            if (!why && m->kind == FIG_TEXT && m->present)
                why = m->text;
        }
    }
    if (none[0]) {
        snprintf(line, sizeof(line), "Counters unavailable on this machine, not drawn: %s%s%s%s.", none,
                 why ? " (" : "", why ? why : "", why ? ")" : "");
        html_raw(pg->h, "<p class=\"perf-none\">");
        html_text(pg->h, line);
        html_raw(pg->h, "</p>\n");
    }
    if (zero[0]) {
        snprintf(line, sizeof(line), "Zero throughout, not drawn: %s.", zero);
        html_para(pg->h, line);
    }
}
