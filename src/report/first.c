/* SPDX-License-Identifier: MIT
 *
 * The report's first screen (see first.h): three cards (where the time went, memory, totals) and the phases
 * by name, from the facts and the summary tables alone. A figure that was not recorded says so; none is
 * shown as zero. Also compare's phases: two runs' phases matched by name.
 */
#include "report/first.h"

#include "report/units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define MiB (1024.0 * 1024)
#define GiB (1024.0 * MiB)
#define HEADROOM 1.25
#define LONG_RUN_S 3600.0 /* from one hour of wall time (or several nodes): core-hours and kWh */

double first_request_bytes(double peak)
{
    if (!isfinite(peak) || peak <= 0)
        return NAN;
    double want = peak * HEADROOM, step = want < 4 * GiB ? 256 * MiB : GiB;
    return ceil(want / step) * step;
}

char *first_duration(char *buf, size_t cap, double s)
{
    if (!isfinite(s))
        snprintf(buf, cap, "\u2014");
    else if (s >= 48 * 3600.0)
        snprintf(buf, cap, "%.1f h", s / 3600);
    else if (s >= 3599.5) { /* named units: "2:24" beside "core time" read as a clock time */
        long long m = llround(s / 60);
        snprintf(buf, cap, "%lld h %02lld min", m / 60, m % 60);
    } else if (s >= 119.5) {
        long long r = llround(s);
        snprintf(buf, cap, "%lld min %02lld s", r / 60, r % 60);
    } else if (s > 0 && s < 0.9995) /* "0 s" beside a phase's mean cores reads as nothing */
        snprintf(buf, cap, s < 0.0005 ? "< 1 ms" : "%.0f ms", s * 1e3);
    else
        units_time(buf, cap, s, &(js_timeaxis_t){0});
    return buf;
}

static const js_figure_t *root(const js_summary_table_t *t)
{
    return t ? figure_croot(t) : NULL;
}

/* sum_num: the sum over the nodes of the figure at `path`, NAN when no node has it. */
static double sum_num(const js_summary_table_t *const *sums, size_t n, const char *path)
{
    double v = NAN;
    for (size_t i = 0; i < n; i++) {
        double x = fig_num(root(sums[i]), path);
        if (isfinite(x))
            v = isfinite(v) ? v + x : x;
    }
    return v;
}

static double max_num(const js_summary_table_t *const *sums, size_t n, const char *path)
{
    double v = NAN;
    for (size_t i = 0; i < n; i++) {
        double x = fig_num(root(sums[i]), path);
        if (isfinite(x) && !(x <= v))
            v = x;
    }
    return v;
}

static double add(double a, double b)
{
    return isfinite(a) ? (isfinite(b) ? a + b : a) : b;
}

/* energy: "1.23 kWh" for long runs, else in J/kJ/MJ. */
static char *energy_text(char *buf, size_t cap, double j, bool big)
{
    if (isfinite(j) && big)
        snprintf(buf, cap, "%.3g kWh", j / 3.6e6);
    else
        units_format(buf, cap, j, "J");
    return buf;
}

/* cpu_text: CPU time as core-hours for long runs, else as a duration. */
static char *cpu_text(char *buf, size_t cap, double s, bool big)
{
    if (isfinite(s) && big)
        snprintf(buf, cap, "%.3g core-hours", s / 3600);
    else
        first_duration(buf, cap, s);
    return buf;
}

/* share: one row of "where the time went": a meter and the share, or "not recorded". */
static void share(js_html_t *h, const char *what, double v, const char *basis)
{
    char pct[48];
    html_raw(h, "<tr><th scope=\"row\">");
    html_text(h, what);
    if (isfinite(v)) {
        double c = v < 0 ? 0 : v > 1 ? 1 : v;
        html_printf(h,
                    "</th><td><meter min=\"0\" max=\"1\" value=\"%.4f\"></meter></td><td class=\"n\">%s</td>",
                    c, units_format(pct, sizeof(pct), c, "fraction"));
    } else {
        html_raw(h, "</th><td></td><td class=\"n\">\u2014</td>");
    }
    html_raw(h, "<td class=\"why\">");
    html_text(h, isfinite(v) ? basis : "not recorded");
    html_raw(h, "</td></tr>\n");
}

static double gpu_mean(const js_facts_t *f)
{
    double s = 0;
    size_t n = 0;
    for (size_t g = 0; g < f->ngpus && g < JS_FACTS_MAX_GPUS; g++)
        if (isfinite(f->gpu_util_mean[g])) {
            s += f->gpu_util_mean[g];
            n++;
        }
    return n ? s / (double)n : NAN;
}

static void time_card(js_html_t *h, const js_facts_t *f)
{
    char b[160], c1[48], c2[48];
    html_raw(h, "<div class=\"card\" id=\"first-time\"><h3>Where the time went</h3><table class=\"tw\">\n");
    snprintf(b, sizeof(b), "%s busy of %s", units_format(c1, sizeof(c1), f->mean_cores, "cores"),
             units_format(c2, sizeof(c2), f->cores_available, "cores"));
    share(h, "CPU in use", f->efficiency, b);
    bool job = isfinite(f->psi_cpu_some_job_mean);
    share(h, "waiting for CPU", job ? f->psi_cpu_some_job_mean : f->psi_cpu_some_host_mean,
          job ? "of the time, some task of the job (PSI)" : "of the time, some task of the host (PSI)");
    job = isfinite(f->psi_io_some_job_mean);
    double io = job ? f->psi_io_some_job_mean : f->psi_io_some_mean;
    share(h, "waiting for I/O", isfinite(io) ? io : f->iowait_mean,
          job            ? "of the time, some task of the job (PSI)"
          : isfinite(io) ? "of the time, some task of the host (PSI)"
                         : "CPU iowait of the host");
    share(h, "cores idle", isfinite(f->efficiency) ? 1 - f->efficiency : NAN, "of the cores available");
    if (f->ngpus) {
        double g = gpu_mean(f);
        snprintf(b, sizeof(b), "mean utilisation of %zu GPU%s", f->ngpus, f->ngpus == 1 ? "" : "s");
        share(h, "GPUs busy", g, b);
        share(h, "GPUs idle", isfinite(g) ? 1 - g : NAN, b);
    }
    html_raw(h, "</table></div>\n");
}

static void kv(js_html_t *h, const char *k, const char *v, const char *id)
{
    html_raw(h, "<div");
    if (id)
        html_printf(h, " id=\"%s\"", id);
    html_raw(h, "><dt>");
    html_text(h, k);
    html_raw(h, "</dt><dd>");
    html_text(h, v);
    html_raw(h, "</dd></div>\n");
}

static void memory_card(js_html_t *h, const js_facts_t *f, const js_summary_table_t *const *sums, size_t n)
{
    char b[160], x[48], y[48];
    double peak = max_num(sums, n, "memory.peak_bytes");
    html_raw(h, "<div class=\"card\" id=\"first-memory\"><h3>Memory</h3><dl class=\"facts\">\n");
    kv(h, n > 1 ? "peak (largest node)" : "peak", units_format(x, sizeof(x), peak, "bytes"), "first-peak");
    double want = first_request_bytes(peak);
    if (isfinite(want))
        snprintf(b, sizeof(b), "%s%s (peak + 25%%, rounded up)", units_format(x, sizeof(x), want, "bytes"),
                 n > 1 ? " per node" : "");
    else
        snprintf(b, sizeof(b), "\u2014");
    kv(h, "request", b, "first-request");
    if (isfinite(f->mem_limit)) {
        snprintf(b, sizeof(b), "%s (peak %s of it)", units_format(x, sizeof(x), f->mem_limit, "bytes"),
                 units_format(y, sizeof(y), f->mem_peak / f->mem_limit, "fraction"));
        kv(h, "limit", b, NULL);
    }
    if (isfinite(f->peak_swap) && f->peak_swap > 0)
        kv(h, "swap used", units_format(x, sizeof(x), f->peak_swap, "bytes"), NULL);
    html_raw(h, "</dl></div>\n");
}

static void totals_card(js_html_t *h, const js_facts_t *f, const js_summary_table_t *const *sums, size_t n,
                        bool big)
{
    char x[64], y[64], b[160];
    html_raw(h, "<div class=\"card\" id=\"first-totals\"><h3>Totals</h3><dl class=\"facts\">\n");
    kv(h, "wall time", first_duration(x, sizeof(x), f->wall_s), NULL);
    kv(h, "CPU time", cpu_text(x, sizeof(x), f->cpu_s, big), "first-cpu");
    double alloc = f->cores_available * f->wall_s;
    if (isfinite(alloc)) {
        snprintf(b, sizeof(b), "%s (%s \u00d7 wall time)", cpu_text(x, sizeof(x), alloc, big),
                 units_format(y, sizeof(y), f->cores_available, "cores"));
        kv(h, "core time allocated", b, NULL);
    }
    double io = add(sum_num(sums, n, "io.read_bytes"), sum_num(sums, n, "io.write_bytes"));
    kv(h, "storage read + written", units_format(x, sizeof(x), io, "bytes"), NULL);
    double node_j = sum_num(sums, n, "energy.node_energy_j");
    if (isfinite(node_j)) {
        double job_j = sum_num(sums, n, "energy.attribution.scope_energy_j");
        energy_text(x, sizeof(x), node_j, big);
        if (isfinite(job_j))
            snprintf(b, sizeof(b), "%s, the job's share %s", x, energy_text(y, sizeof(y), job_j, big));
        else
            snprintf(b, sizeof(b), "%s", x);
        kv(h, n > 1 ? "energy of the nodes" : "energy of the node", b, "first-energy");
    }
    double gpu_j = sum_num(sums, n, "gpu.job.energy_j");
    if (isfinite(gpu_j))
        kv(h, "energy of the GPUs", energy_text(x, sizeof(x), gpu_j, big), NULL);
    html_raw(h, "</dl></div>\n");
}

/* phase_row: the cells of one phase: its accumulated figures `acc` (wall_s, cpu_s, mean_cores, read_bytes,
 * write_bytes, energy_j, gpu_energy_j) and its peak memory. */
static void phase_row(const js_figure_t *acc, double peak, const char *name, bool big, js_cell_t *c,
                      char (*txt)[64])
{
    c[0] = cell_text(name);
    c[1] = cell_text(first_duration(txt[0], 64, fig_num(acc, "wall_s")));
    c[2] = cell_text(cpu_text(txt[1], 64, fig_num(acc, "cpu_s"), big));
    double v[3] = {fig_num(acc, "mean_cores"), peak,
                   add(fig_num(acc, "read_bytes"), fig_num(acc, "write_bytes"))};
    for (int k = 0; k < 3; k++)
        c[3 + k] = isfinite(v[k]) ? cell_real(v[k]) : cell_missing();
    c[6] =
        cell_text(energy_text(txt[2], 64, add(fig_num(acc, "energy_j"), fig_num(acc, "gpu_energy_j")), big));
}

static void phases_table(js_html_t *h, const js_figure_t *r, bool big)
{
    const js_figure_t *phs = fig_get(r, "phases.phases");
    size_t n = fig_count(phs), shown = n < FIRST_MAX_PHASES ? n : FIRST_MAX_PHASES;
    if (!n)
        return;
    static const js_col_t cols[] = {
        {"phase", NULL},          {"wall", NULL},           {"CPU", NULL},   {"mean cores", "cores"},
        {"peak memory", "bytes"}, {"storage I/O", "bytes"}, {"energy", NULL}};
    js_cell_t cells[(FIRST_MAX_PHASES + 1) * 7];
    char txt[FIRST_MAX_PHASES + 1][3][64];
    size_t rows = 0;
    for (size_t i = 0; i < shown; i++, rows++) {
        const js_figure_t *p = fig_kid(phs, i);
        const char *name = fig_text(p, "name");
        phase_row(fig_get(p, "self"), fig_num(p, "peak_bytes"), name ? name : "?", big, &cells[rows * 7],
                  txt[rows]);
    }
    const js_figure_t *out = fig_get(r, "phases.outside");
    if (fig_num(out, "wall_s") > 0) { /* the outside group holds its accumulated figures itself */
        phase_row(out, fig_num(out, "peak_bytes"), "(outside every phase)", big, &cells[rows * 7], txt[rows]);
        rows++;
    }
    char cap[96];
    if (n > shown)
        snprintf(cap, sizeof(cap), "Phases (the first %zu of %zu; the summary lists every one)", shown, n);
    else
        snprintf(cap, sizeof(cap), "Phases");
    html_raw(h, "<div class=\"scroll\" id=\"first-phases\">");
    html_table(h, cap, cols, 7, cells, rows);
    html_raw(h, "</div>\n");
}

int first_screen(js_html_t *h, const js_facts_t *f, const js_summary_table_t *const *sums, size_t nsums)
{
    bool big = nsums > 1 || (isfinite(f->wall_s) && f->wall_s >= LONG_RUN_S);
    html_section_begin(h, "first", "At a glance");
    html_raw(h, "<div class=\"glance\">\n");
    time_card(h, f);
    memory_card(h, f, sums, nsums);
    totals_card(h, f, sums, nsums, big);
    html_raw(h, "</div>\n");
    if (nsums)
        phases_table(h, root(sums[0]), big);
    return html_section_end(h);
}

/* phase_of: the phase named `name` in the phases array `phs`, or NULL. */
static const js_figure_t *phase_of(const js_figure_t *phs, const char *name)
{
    for (size_t i = 0; i < fig_count(phs); i++) {
        const char *n = fig_text(fig_kid(phs, i), "name");
        if (n && strcmp(n, name) == 0)
            return fig_kid(phs, i);
    }
    return NULL;
}

#define CMP_COLS 8

static void compare_row(const js_figure_t *pa, const js_figure_t *pb, const char *name, js_cell_t *c,
                        char (*txt)[64])
{
    const js_figure_t *sa = fig_get(pa, "self"), *sb = fig_get(pb, "self");
    double ca = fig_num(sa, "cpu_s"), cb = fig_num(sb, "cpu_s");
    c[0] = cell_text(name);
    c[1] = cell_text(first_duration(txt[0], 64, fig_num(sa, "wall_s")));
    c[2] = cell_text(first_duration(txt[1], 64, fig_num(sb, "wall_s")));
    c[3] = cell_text(first_duration(txt[2], 64, ca));
    c[4] = cell_text(first_duration(txt[3], 64, cb));
    double v[3] = {ca > 0 && isfinite(cb) ? cb / ca : NAN, fig_num(pa, "peak_bytes"),
                   fig_num(pb, "peak_bytes")};
    for (int k = 0; k < 3; k++)
        c[5 + k] = isfinite(v[k]) ? cell_real(v[k]) : cell_missing();
}

int first_compare_phases(js_html_t *h, const js_summary_table_t *a, const js_summary_table_t *b,
                         const char *label_a, const char *label_b)
{
    const js_figure_t *pa = fig_get(root(a), "phases.phases"), *pb = fig_get(root(b), "phases.phases");
    size_t na = fig_count(pa), nb = fig_count(pb);
    if (!na && !nb)
        return h->err;
    char name[CMP_COLS][96];
    snprintf(name[1], sizeof(name[1]), "wall %s", label_a);
    snprintf(name[2], sizeof(name[2]), "wall %s", label_b);
    snprintf(name[3], sizeof(name[3]), "CPU %s", label_a);
    snprintf(name[4], sizeof(name[4]), "CPU %s", label_b);
    snprintf(name[6], sizeof(name[6]), "peak memory %s", label_a);
    snprintf(name[7], sizeof(name[7]), "peak memory %s", label_b);
    const js_col_t cols[CMP_COLS] = {{"phase", NULL},    {name[1], NULL},   {name[2], NULL},
                                     {name[3], NULL},    {name[4], NULL},   {"CPU B / A", NULL},
                                     {name[6], "bytes"}, {name[7], "bytes"}};
    js_cell_t cells[FIRST_CMP_MAX_PHASES * CMP_COLS];
    char txt[FIRST_CMP_MAX_PHASES][4][64];
    size_t rows = 0, left = 0;
    for (size_t i = 0; i < na + nb; i++) { /* A's phases in A's order, then B's that A lacks */
        const js_figure_t *p = i < na ? fig_kid(pa, i) : fig_kid(pb, i - na);
        const char *n = fig_text(p, "name");
        if (!n || (i >= na && phase_of(pa, n)))
            continue;
        if (rows == FIRST_CMP_MAX_PHASES) {
            left++;
            continue;
        }
        compare_row(i < na ? p : NULL, i < na ? phase_of(pb, n) : p, n, &cells[rows * CMP_COLS], txt[rows]);
        rows++;
    }
    html_section_begin(h, "phases", "Phases of each run");
    html_raw(h, "<div class=\"scroll\">");
    html_table(h, NULL, cols, CMP_COLS, cells, rows);
    html_raw(h, "</div>\n");
    if (left) {
        char note[96];
        snprintf(note, sizeof(note), "%zu more phases are not listed (each run's summary lists them all).",
                 left);
        html_para(h, note);
    }
    return html_section_end(h);
}
