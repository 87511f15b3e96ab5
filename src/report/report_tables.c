/* SPDX-License-Identifier: MIT
 *
 * The report's tables: the summary of each node with units people read, one row per node for a batch job,
 * the parts' sections rendered generically from their rows, the inventory and the monitor's own cost. Part
 * of the report builder (report_int.h).
 */
#include "report/report_int.h"

#include "report/units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- tables ----------------------------------------------------------------------------------------------
 */

void fmt_when(char *buf, size_t cap, int64_t unix_ns)
{
    if (unix_ns <= 0) {
        snprintf(buf, cap, "unknown");
        return;
    }
    time_t t = (time_t)(unix_ns / 1000000000);
    struct tm tm;
    gmtime_r(&t, &tm);
    if (strftime(buf, cap, "%Y-%m-%d %H:%M:%S UTC", &tm) == 0 && cap)
        buf[0] = '\0';
}

js_cell_t num_or_missing(double v)
{
    return isfinite(v) ? cell_real(v) : cell_missing();
}

void h3(js_html_t *h, const char *title)
{
    html_raw(h, "<h3>");
    html_text(h, title);
    html_raw(h, "</h3>\n");
}

/* row_unit: the unit the page shows a summary row's unit in, and the factor to it (NULL: a plain number) */
const char *row_unit(const char *unit, double *scale)
{
    static const struct {
        const char *unit, *shown;
        double scale;
    } m[] = {{"MHz", "Hz", 1e6},
             {"celsius",
              "\xc2\xb0"
              "C",
              1},
             {"GB/s", "bytes/s", 1e9},
             {"GFLOP", "FLOP", 1e9},
             {"GFLOP/s", "FLOP/s", 1e9},
             {"ns", "s", 1e-9},
             {"count", NULL, 1},
             {"ratio", NULL, 1},
             {"events", NULL, 1}};
    *scale = 1;
    if (!unit)
        return NULL;
    for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
        if (strcmp(unit, m[i].unit) == 0) {
            *scale = m[i].scale;
            return m[i].shown;
        }
    return unit;
}

/* fig_cell: a summary row as a table cell, in the unit the page shows (*ret_unit). */
static js_cell_t fig_cell(const js_figure_t *f, const char **ret_unit)
{
    double scale;
    *ret_unit = NULL;
    if (!f || !f->present)
        return cell_missing();
    switch (f->kind) {
    case FIG_NUM:
        *ret_unit = row_unit(f->unit, &scale);
        return cell_real(f->num * scale);
    case FIG_INT:
        *ret_unit = row_unit(f->unit, &scale);
        return *ret_unit && scale != 1 ? cell_real((double)f->i * scale) : cell_int(f->i);
    case FIG_BOOL:
        return cell_text(f->b ? "yes" : "no");
    case FIG_TEXT:
    case FIG_JSON:
        return cell_text(f->text);
    default:
        return cell_missing();
    }
}

/* A row of a table of summary figures: its label and path (the value, its unit from the row). */
typedef struct {
    const char *label, *path;
} srow_t;

/* kv_rows: the figures `rows` of node n as a key-value table. */
static void kv_rows(js_html_t *h, const rnode_t *n, const srow_t *rows, size_t nrows)
{
    js_kv_t kv[24];
    size_t k = 0;
    for (size_t i = 0; i < nrows && k < sizeof(kv) / sizeof(kv[0]); i++) {
        kv[k].key = rows[i].label;
        kv[k].value = fig_cell(fig_get(sroot(n), rows[i].path), &kv[k].unit);
        k++;
    }
    html_kv_table(h, kv, k);
}

/* summary_tables: the tree model's figures of one node, as tables with units people read. */
void summary_tables(js_html_t *h, const rnode_t *n)
{
    const js_figure_t *total = fig_get(sroot(n), "cpu.total_s"), *ex = fig_get(sroot(n), "exact.cpu");
    const char *how = total && total->exact == FIG_EXACT ? "exact (kernel accounting of every process)"
                      : ex && ex->method                 ? ex->method
                                                         : "sampled";
    html_raw(h, "<div class=\"cols\">\n<div>\n");
    h3(h, "CPU");
    static const srow_t cpu[] = {
        {"CPU time", "cpu.total_s"},
        {"user CPU time", "cpu.user_s"},
        {"system CPU time", "cpu.system_s"},
        {"mean cores in use", "cpu.mean_cores"},
        {"peak cores in use", "cpu.max_cores"},
        {"cores available", "cpu.cores_available"},
        {"efficiency (mean / available)", "cpu.efficiency"},
        {"CPU not seen by any sample", "top.unattributed_cpu_s"},
    };
    kv_rows(h, n, cpu, sizeof(cpu) / sizeof(cpu[0]));
    html_kv_table(h, &(js_kv_t){"how measured", cell_text(how), NULL}, 1);
    html_raw(h, "</div>\n<div>\n");
    h3(h, "Memory");
    const js_figure_t *peak = fig_get(sroot(n), "memory.peak_bytes");
    const char *comm = fig_text(sroot(n), "memory.largest_process.comm");
    int64_t pid = sint(n, "memory.largest_process.pid");
    char largest[160] = "";
    if (comm && pid > 0)
        snprintf(largest, sizeof(largest), "%s (pid %d)", comm, (int)pid);
    else if (comm)
        snprintf(largest, sizeof(largest), "%s", comm);
    static const srow_t mem[] = {
        {"peak memory (request memory by this)", "memory.peak_bytes"},
        {"peak PSS sum (sampled)", "memory.peak_pss_bytes"},
        {"peak private (USS sum)", "memory.peak_private_bytes"},
        {"peak shared, counted once", "memory.peak_shared_bytes"},
        {"peak RSS sum (shared pages per process)", "memory.peak_rss_sum_bytes"},
        {"peak RSS, kernel (one process)", "memory.peak_rss_kernel_bytes"},
    };
    static const srow_t mem2[] = {
        {"peak RSS of the command", "memory.main.peak_rss_bytes"},
        {"peak RSS of the descendants", "memory.descendants.peak_rss_sum_bytes"},
        {"peak swap", "memory.peak_swap_bytes"},
        {"page faults, major", "faults.major"},
    };
    kv_rows(h, n, mem, 1);
    html_kv_table(h, &(js_kv_t){"how", peak && peak->method ? cell_text(peak->method) : cell_missing(), NULL},
                  1);
    kv_rows(h, n, mem + 1, sizeof(mem) / sizeof(mem[0]) - 1);
    html_kv_table(h, &(js_kv_t){"largest process", largest[0] ? cell_text(largest) : cell_missing(), NULL},
                  1);
    kv_rows(h, n, mem2, sizeof(mem2) / sizeof(mem2[0]));
    html_raw(h, "</div>\n<div>\n");
    h3(h, "I/O");
    static const srow_t io[] = {
        {"read from storage", "io.read_bytes"},
        {"written to storage", "io.write_bytes"},
        {"read calls", "io.read_chars"},
        {"write calls", "io.write_chars"},
        {"read system calls", "io.read_syscalls"},
        {"write system calls", "io.write_syscalls"},
        {"context switches, voluntary", "context_switches.voluntary"},
        {"context switches, involuntary", "context_switches.involuntary"},
    };
    kv_rows(h, n, io, sizeof(io) / sizeof(io[0]));
    html_raw(h, "</div>\n<div>\n");
    h3(h, "Processes and samples");
    static const srow_t pr[] = {
        {"processes seen", "processes.total"},
        {"most at once", "processes.max_concurrent"},
        {"most threads at once", "processes.max_threads"},
        {"reaped by the monitor", "processes.reaped_by_monitor"},
        {"interval", "samples.interval_s"},
        {"samples taken", "samples.taken"},
        {"deadlines missed", "samples.missed"},
    };
    kv_rows(h, n, pr, sizeof(pr) / sizeof(pr[0]));
    html_raw(h, "</div>\n</div>\n");
}

/* nodes_table: one row per node and one for the job. */
void nodes_table(js_html_t *h, const js_report_t *r, const js_facts_t *f)
{
    static const js_col_t cols[] = {{"node", NULL},
                                    {"wall time", "s"},
                                    {"CPU time", "s"},
                                    {"mean cores", "cores"},
                                    {"peak cores", "cores"},
                                    {"cores available", "cores"},
                                    {"efficiency", "fraction"},
                                    {"peak memory", "bytes"},
                                    {"read", "bytes"},
                                    {"written", "bytes"}};
    const size_t nc = sizeof(cols) / sizeof(cols[0]);
    js_cell_t *cells = calloc((r->nnodes + 1) * nc, sizeof(*cells));
    if (!cells) {
        h->err = -ENOMEM;
        return;
    }
    double rd = NAN, wr = NAN;
    for (size_t i = 0; i < r->nnodes; i++) {
        const rnode_t *n = &r->nodes[i];
        js_cell_t *c = &cells[i * nc];
        double mean = snum(n, "cpu.mean_cores"), rb = snum(n, "io.read_bytes"),
               wb = snum(n, "io.write_bytes");
        c[0] = cell_text(n->name);
        c[1] = num_or_missing(snum(n, "wall_time_s"));
        c[2] = num_or_missing(snum(n, "cpu.total_s"));
        c[3] = num_or_missing(mean);
        c[4] = num_or_missing(snum(n, "cpu.max_cores"));
        c[5] = num_or_missing(n->cores_available);
        c[6] = num_or_missing(n->cores_available > 0 ? mean / n->cores_available : NAN);
        c[7] = num_or_missing(snum(n, "memory.peak_bytes"));
        c[8] = num_or_missing(rb);
        c[9] = num_or_missing(wb);
        rd = nan_sum(rd, rb);
        wr = nan_sum(wr, wb);
    }
    size_t nrows = r->nnodes;
    if (r->nnodes > 1) {
        js_cell_t *c = &cells[r->nnodes * nc];
        c[0] = cell_text("job (all nodes)");
        c[1] = num_or_missing(f->wall_s);
        c[2] = num_or_missing(f->cpu_s);
        c[3] = num_or_missing(f->mean_cores);
        c[4] = cell_missing(); /* peaks of different moments do not add up */
        c[5] = num_or_missing(f->cores_available);
        c[6] = num_or_missing(f->efficiency);
        c[7] = num_or_missing(f->peak_rss);
        c[8] = num_or_missing(rd);
        c[9] = num_or_missing(wr);
        nrows++;
    }
    html_table(h, r->nnodes > 1 ? "Per node and for the job (peak memory: the largest node's)" : NULL, cols,
               nc, cells, nrows);
    free(cells);
}

/* ---- the parts' summary sections, rendered from their rows ---- */

static const char *const core_keys[] = {
    "jobscope_version", "command", "command_line", "host",       "mode",        "scope",
    "scope_kind",       "state",   "exit_status",  "exec_error", "stop_reason", "wall_time_s",
    "recording",        "cpu",     "memory",       "io",         "faults",      "context_switches",
    "processes",        "top",     "samples",      "monitor",    "exact",       NULL};

static bool is_core_key(const char *k)
{
    for (size_t i = 0; core_keys[i]; i++)
        if (strcmp(core_keys[i], k) == 0)
            return true;
    return false;
}

/* key_unit: the unit a summary key's suffix names, and the factor to base units. */
static const char *key_unit(const char *key, double *scale)
{
    static const struct {
        const char *suffix, *unit;
        double scale;
    } m[] = {{"_bytes_per_s", "bytes/s", 1},
             {"_per_s", "/s", 1},
             {"_bytes", "bytes", 1},
             {"_fraction", "fraction", 1},
             {"_s", "s", 1},
             {"_j", "J", 1},
             {"_w", "W", 1},
             {"_mhz", "Hz", 1e6},
             {"_hz", "Hz", 1},
             {"_celsius",
              "\xc2\xb0"
              "C",
              1},
             {"_cores", "cores", 1},
             {"cores", "cores", 1}};
    size_t n = strlen(key);
    *scale = 1;
    for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
        size_t k = strlen(m[i].suffix);
        if (n >= k && strcmp(key + n - k, m[i].suffix) == 0) {
            *scale = m[i].scale;
            return m[i].unit;
        }
    }
    return NULL;
}

static void pretty_key(const char *key, char *buf, size_t cap)
{
    pretty_col(key, NULL, buf, cap);
}

/* A member of a summary object as the page lists it: a row, a group, or a row's method (the JSON's member).
 */
typedef struct {
    const char *name;
    const js_figure_t *f; /* NULL for a method */
    const char *method;
} smember_t;

/* members: the members of object g, each row's method after it (once per key, as the JSON has them). */
static size_t members(const js_figure_t *g, smember_t *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < fig_count(g) && n < cap; i++) {
        const js_figure_t *k = fig_kid(g, i);
        out[n++] = (smember_t){k->name, k, NULL};
        if (!k->method_key || n == cap)
            continue;
        bool dup = false;
        for (size_t j = 0; j < n && !dup; j++)
            dup = strcmp(out[j].name, k->method_key) == 0;
        if (!dup)
            out[n++] = (smember_t){k->method_key, NULL, k->method};
    }
    return n;
}

static bool member_scalar(const smember_t *m)
{
    return !m->f || !fig_is_group(m->f) || (m->f->kind == FIG_ARRAY && !fig_count(m->f));
}

static js_cell_t member_cell(const smember_t *m, const char **ret_unit)
{
    *ret_unit = NULL;
    if (!m->f)
        return m->method ? cell_text(m->method) : cell_missing();
    if (m->f->kind == FIG_ARRAY)
        return cell_text(""); /* an empty list */
    return fig_cell(m->f, ret_unit);
}

static void rows_object_table(js_html_t *h, const js_figure_t *o, int depth);

/* rows_array_table: an array of objects as a table, columns = their scalar members (first 12 names met). */
static void rows_array_table(js_html_t *h, const char *caption, const js_figure_t *a)
{
    const char *names[12];
    const char *units[12] = {0};
    size_t nc = 0, nr = fig_count(a) > 64 ? 64 : fig_count(a);
    smember_t *ms = calloc(256, sizeof(*ms));
    if (!ms) {
        h->err = -ENOMEM;
        return;
    }
    for (size_t r = 0; r < nr; r++) {
        size_t nm = members(fig_kid(a, r), ms, 256);
        for (size_t i = 0; i < nm; i++) {
            if (!member_scalar(&ms[i]))
                continue;
            size_t k = 0;
            while (k < nc && strcmp(names[k], ms[i].name) != 0)
                k++;
            const char *u;
            js_cell_t c = member_cell(&ms[i], &u);
            if (k == nc && nc < 12)
                names[nc++] = ms[i].name;
            if (k < nc && !units[k] && c.type == CELL_REAL)
                units[k] = u;
        }
    }
    js_col_t *cols = calloc(nc ? nc : 1, sizeof(*cols));
    js_cell_t *cells = calloc((nr ? nr : 1) * (nc ? nc : 1), sizeof(*cells));
    char(*cn)[64] = calloc(nc ? nc : 1, sizeof(*cn));
    if (!cols || !cells || !cn) {
        h->err = -ENOMEM;
        goto out;
    }
    if (!nr || !nc)
        goto out;
    for (size_t c = 0; c < nc; c++) {
        pretty_key(names[c], cn[c], sizeof(cn[0]));
        cols[c] = (js_col_t){cn[c], units[c]};
    }
    for (size_t r = 0; r < nr; r++) {
        size_t nm = members(fig_kid(a, r), ms, 256);
        for (size_t c = 0; c < nc; c++) {
            cells[r * nc + c] = cell_missing();
            for (size_t i = 0; i < nm; i++)
                if (member_scalar(&ms[i]) && strcmp(ms[i].name, names[c]) == 0) {
                    const char *u;
                    cells[r * nc + c] = member_cell(&ms[i], &u);
                    break;
                }
        }
    }
    html_table(h, caption, cols, nc, cells, nr);
out:
    free(ms);
    free(cols);
    free(cells);
    free(cn);
}

static void rows_object_table(js_html_t *h, const js_figure_t *o, int depth)
{
    smember_t ms[256];
    size_t nm = members(o, ms, sizeof(ms) / sizeof(ms[0])), ns = 0;
    for (size_t i = 0; i < nm; i++)
        ns += member_scalar(&ms[i]);
    if (ns) {
        js_kv_t *kv = calloc(ns, sizeof(*kv));
        char(*keys)[64] = calloc(ns, sizeof(*keys));
        if (!kv || !keys) {
            h->err = -ENOMEM;
        } else {
            size_t k = 0;
            for (size_t i = 0; i < nm; i++) {
                if (!member_scalar(&ms[i]))
                    continue;
                pretty_key(ms[i].name, keys[k], sizeof(keys[0]));
                kv[k].key = keys[k];
                kv[k].value = member_cell(&ms[i], &kv[k].unit);
                k++;
            }
            html_kv_table(h, kv, k);
        }
        free(kv);
        free(keys);
    }
    for (size_t i = 0; i < nm; i++) {
        const js_figure_t *m = ms[i].f;
        if (!m || member_scalar(&ms[i]))
            continue;
        char title[96];
        pretty_key(ms[i].name, title, sizeof(title));
        if (m->kind == FIG_OBJECT && depth < 4) {
            html_raw(h, depth < 2 ? "<h4>" : "<h5>");
            html_text(h, title);
            html_raw(h, depth < 2 ? "</h4>\n" : "</h5>\n");
            rows_object_table(h, m, depth + 1);
        } else if (m->kind == FIG_ARRAY) {
            rows_array_table(h, title, m);
        }
    }
}

/* parts_details: every section of the summary that is not the tree model's own. */
void parts_details(js_html_t *h, const rnode_t *n)
{
    const js_figure_t *root = sroot(n);
    for (size_t i = 0; i < fig_count(root); i++) {
        const js_figure_t *m = fig_kid(root, i);
        if (is_core_key(m->name) || m->kind != FIG_OBJECT)
            continue;
        char title[96];
        pretty_key(m->name, title, sizeof(title));
        if (title[0] >= 'a' && title[0] <= 'z')
            title[0] = (char)(title[0] - 'a' + 'A');
        h3(h, title);
        rows_object_table(h, m, 1);
    }
}

void inventory_table(js_html_t *h, const rnode_t *n)
{
    if (!n->ninv) {
        html_para(h, "The recording holds no inventory.");
        return;
    }
    static const js_col_t cols[] = {{"source", NULL}, {"item", NULL}, {"value", NULL}};
    js_cell_t *cells = calloc(3 * n->ninv, sizeof(*cells));
    if (!cells) {
        h->err = -ENOMEM;
        return;
    }
    char(*human)[96] = calloc(n->ninv, sizeof(*human));
    if (!human) {
        free(cells);
        h->err = -ENOMEM;
        return;
    }
    for (size_t i = 0; i < 3 * n->ninv; i++)
        cells[i] = n->inv[i] ? cell_text(n->inv[i]) : cell_missing();
    /* numbers in base units, by the key's suffix: shown for people, with the exact figure */
    for (size_t i = 0; i < n->ninv; i++) {
        const char *key = n->inv[3 * i + 1], *val = n->inv[3 * i + 2];
        double scale, x;
        char *end, hb[48];
        const char *unit = key ? key_unit(key, &scale) : NULL;
        if (!unit || !val || !*val || ((x = strtod(val, &end)), *end) || !isfinite(x))
            continue;
        units_format(hb, sizeof(hb), x * scale, unit);
        snprintf(human[i], sizeof(human[0]), "%s (%s)", hb, val);
        cells[3 * i + 2] = cell_text(human[i]);
    }
    html_table(h, NULL, cols, 3, cells, n->ninv);
    free(human);
    free(cells);
}

void monitor_tables(js_html_t *h, const rnode_t *n)
{
    double wall = snum(n, "wall_time_s"), mon = snum(n, "monitor.cpu_s");
    static const srow_t rows[] = {{"CPU time of the monitor", "monitor.cpu_s"}};
    static const srow_t rows2[] = {
        {"largest RSS of the monitor", "monitor.max_rss_bytes"},
        {"mean cost per sample (collect and write)", "monitor.mean_sample_cost_s"},
        {"samples taken", "samples.taken"},
        {"deadlines missed", "samples.missed"},
        {"samples that could not be written", "monitor.write_errors"},
    };
    kv_rows(h, n, rows, 1);
    html_kv_table(h, &(js_kv_t){"share of one core", num_or_missing(wall > 0 ? mon / wall : NAN), "fraction"},
                  1);
    kv_rows(h, n, rows2, sizeof(rows2) / sizeof(rows2[0]));
    if (!n->ncosts)
        return;
    static const js_col_t cols[] = {
        {"source", NULL}, {"mean collect time", "s"}, {"samples", NULL}, {"failed samples", NULL}};
    js_cell_t cells[MAX_COSTS * 4];
    for (size_t i = 0; i < n->ncosts; i++) {
        const rcost_t *c = &n->costs[i];
        cells[4 * i] = cell_text(c->name);
        cells[4 * i + 1] = c->n ? cell_real(c->sum_ns / (double)c->n / 1e9) : cell_missing();
        cells[4 * i + 2] = cell_int(c->n);
        cells[4 * i + 3] = cell_int(c->fails);
    }
    html_table(h, "Cost of each source per sample", cols, 4, cells, n->ncosts);
}
