/* SPDX-License-Identifier: MIT
 *
 * perfmon's plots and job report (see perfmon.h), drawn with the report's chart model: each plot is a
 * js_chart_t written by svg_line_chart (report/svg.h), captured as a standalone SVG document and rendered by
 * raster.h to PNG (plots/NAME_per_node.png, plots/Average_NAME_all_nodes.png or Total_NAME_all_nodes.png, the
 * names perfmon gives them) and to the PDF job report (a page of the job's summary, then the plots in the
 * order of perfmon's GenReport pages).
 *
 * As perfmon's GenPlots: counters become rates (the difference over the interval), per node one line per
 * host, and for all nodes the hosts' values at the same sample index are averaged (CPU load, memory) or
 * summed (traffic, power) at the mean of their times.
 */
#include "cli/perfmon.h"

#include "cli/cli.h"
#include "report/raster.h"
#include "report/svg.h"
#include "sys/fsfile.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { LEVEL, COUNTER, INTERVAL };

typedef struct {
    const char *name; /* perfmon's metric label: the file name with '_' for ' ' */
    pm_file_t file;
    const char *group, *key; /* the series; group "rapl" sums every domain of that kind ("package", "dram") */
    int how;                 /* LEVEL, COUNTER (drawn as its rate) or INTERVAL (a count per interval: / dt) */
    double div;              /* unit conversion (bytes -> MiB, uJ -> J) */
    const char *unit;        /* the chart's unit */
    bool total;              /* all nodes: summed (Total) or averaged (Average) */
} plot_t;

/* perfmon's plots (base, IB, memory bandwidth, RAPL), then jobscope's I/O and perf-counter plots */
static const plot_t plots[] = {
    {"CPU Load", PM_CPU, "", "cpu_percent", LEVEL, 1, "%", false},
    {"Memory", PM_CPU, "memory_info", "rss", LEVEL, 1, "bytes", false},
    {"Memory Bandwidth (Read)", PM_CPU, "", "memory_bw", LEVEL, 1, "bytes/s", false},
    {"Output Traffic", PM_CPU, "net_io_counters", "bytes_sent", COUNTER, 1, "bytes/s", true},
    {"Input Traffic", PM_CPU, "net_io_counters", "bytes_recv", COUNTER, 1, "bytes/s", true},
    {"Packets Output", PM_CPU, "net_io_counters", "packets_sent", COUNTER, 1, "/s", true},
    {"Packets Input", PM_CPU, "net_io_counters", "packets_recv", COUNTER, 1, "/s", true},
    {"Interconnect Output Traffic", PM_CPU, "ib_io_counters", "port_xmit_data", COUNTER, 1, "bytes/s", true},
    {"Interconnect Input Traffic", PM_CPU, "ib_io_counters", "port_rcv_data", COUNTER, 1, "bytes/s", true},
    {"Interconnect Packets Output", PM_CPU, "ib_io_counters", "port_xmit_packets", COUNTER, 1, "/s", true},
    {"Interconnect Packets Input", PM_CPU, "ib_io_counters", "port_rcv_packets", COUNTER, 1, "/s", true},
    {"RAPL Package Power", PM_CPU, "rapl", "package", COUNTER, 1e6, "W", true},
    {"RAPL DRAM Power", PM_CPU, "rapl", "dram", COUNTER, 1e6, "W", true},
    {"RAPL Core Power", PM_CPU, "rapl", "core", COUNTER, 1e6, "W", true},
    {"RAPL Uncore Power", PM_CPU, "rapl", "uncore", COUNTER, 1e6, "W", true},
    {"IO Read Traffic", PM_CPU, "io_counters", "read_bytes", COUNTER, 1, "bytes/s", true},
    {"IO Write Traffic", PM_CPU, "io_counters", "write_bytes", COUNTER, 1, "bytes/s", true},
    {"Instructions", PM_PERF, "hardware_events", "instructions", INTERVAL, 1, "/s", true},
    {"CPU Cycles", PM_PERF, "hardware_events", "cycles", INTERVAL, 1, "/s", true},
    {"Context Switches", PM_PERF, "software_events", "context-switches", INTERVAL, 1, "/s", true},
    {"FLOPS SP", PM_PERF, "FLOPS_SP", "derv_MFLOPS", LEVEL, 1e-6, "/s", true},
    {"FLOPS DP", PM_PERF, "FLOPS_DP", "derv_MFLOPS", LEVEL, 1e-6, "/s", true},
};
#define NPLOTS (sizeof(plots) / sizeof(plots[0]))

/* raw: the values of plot p for host h, summed over RAPL domains of its kind; NULL when the host has none.
 * *ret_t gets the host's timestamps. The caller frees the result. */
static double *raw(const pm_host_t *h, const plot_t *p, const double **ret_t, size_t *ret_n)
{
    const pm_series_t *ts = pm_series(h, p->file, "", "time_stamps");
    if (!ts || !h->nsamples)
        return NULL;
    double *v = calloc(h->nsamples, sizeof(*v));
    if (!v)
        return NULL;
    bool any = false;
    if (!strcmp(p->group, "rapl")) {
        for (size_t i = 0; i < h->ns[PM_CPU]; i++) {
            const pm_series_t *s = &h->s[PM_CPU][i];
            size_t kl = strlen(p->key);
            if (strcmp(s->group, "rapl_powercap") != 0 || strncmp(s->key, p->key, kl) != 0 ||
                s->key[kl] != '-')
                continue;
            for (size_t t = 0; t < h->nsamples; t++)
                v[t] += t < s->n && isfinite(s->v[t]) ? s->v[t] : NAN;
            any = true;
        }
    } else {
        const pm_series_t *s = pm_series(h, p->file, p->group, p->key);
        for (size_t t = 0; s && t < h->nsamples; t++) {
            v[t] = t < s->n ? s->v[t] : NAN;
            any |= isfinite(v[t]);
        }
    }
    if (!any) {
        free(v);
        return NULL;
    }
    *ret_t = ts->v;
    *ret_n = h->nsamples < ts->n ? h->nsamples : ts->n;
    return v;
}

/* to_rate: counters to their rate over each interval (perfmon: diff / interval; a negative one, a counter
 * reset, takes the previous rate), counts per interval to per second, and the unit conversion (/ div). The
 * first sample has no rate (NAN). */
static void to_rate(const plot_t *p, const double *t, double *v, size_t n)
{
    double prev = n ? v[0] : NAN, last = NAN;
    for (size_t i = 0; i < n; i++) {
        double x = v[i], dt = i ? t[i] - t[i - 1] : NAN;
        if (p->how == COUNTER) {
            double r = i && dt > 0 && isfinite(x) && isfinite(prev) ? (x - prev) / dt : NAN;
            if (r < 0)
                r = last;
            if (isfinite(x))
                prev = x;
            if (isfinite(r))
                last = r;
            x = r;
        } else if (p->how == INTERVAL) {
            x = dt > 0 ? x / dt : NAN;
        }
        v[i] = x / p->div;
    }
}

typedef struct {
    double *t, *v;
    size_t n;
    char name[128];
} line_t;

static void mean_max(const line_t *l, size_t n, double *mean, double *max)
{
    double sum = 0, cnt = 0;
    *max = NAN;
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < l[k].n; i++)
            if (isfinite(l[k].v[i])) {
                sum += l[k].v[i];
                cnt++;
                *max = isnan(*max) || l[k].v[i] > *max ? l[k].v[i] : *max;
            }
    *mean = cnt ? sum / cnt : NAN;
}

/* draw: one chart (lines of `lines`) as a standalone SVG document, appended to docs. */
static int draw(js_svgdocs_t *docs, const char *id, const char *title, const char *unit, const line_t *lines,
                size_t n, double t0)
{
    js_series_t *ser = calloc(n ? n : 1, sizeof(*ser));
    if (!ser)
        return -ENOMEM;
    for (size_t k = 0; k < n; k++)
        ser[k] = (js_series_t){.name = lines[k].name, .t = lines[k].t, .v = lines[k].v, .n = lines[k].n};
    js_buf_t page = {0};
    js_html_t h = {.buf = &page, .docs = docs};
    struct tm tm;
    time_t now = (time_t)t0;
    localtime_r(&now, &tm);
    js_chart_t c = {.id = id,
                    .title = title,
                    .unit = unit,
                    .series = ser,
                    .nseries = n,
                    .time = {.mode = JS_TIME_WALL, .t0_unix = t0, .utc_offset_s = (int)tm.tm_gmtoff},
                    .height = 260};
    int r = svg_line_chart(&h, &c);
    buf_free(&page);
    free(ser);
    return r;
}

/* write_png: document d into dir/NAME.png (replacing it, as perfmon does; never through a link). */
static int write_png(const js_svgdoc_t *d, const char *dir, char *err, size_t errlen)
{
    char path[4200], tmp[4300];
    snprintf(path, sizeof(path), "%s/%s.png", dir, d->id);
    snprintf(tmp, sizeof(tmp), "%s/.%s.png.%d", dir, d->id, (int)getpid());
    int fd = fs_create(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(-fd));
        return fd;
    }
    int r = raster_png(d->svg.p, d->svg.len, 2.0, fd, err, errlen);
    if (close(fd) < 0 && r == 0) {
        r = -errno;
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
    }
    if (r == 0 && rename(tmp, path) < 0) {
        r = -errno;
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
    }
    if (r < 0)
        unlink(tmp);
    return r;
}

/* header_doc: perfmon's page header line (job, user, nodes, date). */
static int header_doc(js_buf_t *b, const char *title)
{
    js_html_t o = {.buf = b};
    html_raw(
        &o,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
        "width=\"800\" height=\"26\" viewBox=\"0 0 800 26\"><rect x=\"0.5\" y=\"0.5\" width=\"799\" "
        "height=\"25\" fill=\"#ffffff\" stroke=\"#1a1a1a\"/><text x=\"400\" y=\"17\" "
        "text-anchor=\"middle\" font-family=\"DejaVu Serif, serif\" font-size=\"12\" font-weight=\"bold\" "
        "fill=\"#1a1a1a\">");
    html_text(&o, title);
    return html_raw(&o, "</text></svg>\n");
}

int pm_plots(pm_host_t *const *hosts, size_t n, const char *dir, const char *pdf_path, const char *title,
             const char *summary, char *err, size_t errlen)
{
    int r = raster_load(err, errlen);
    if (r < 0)
        return r;
    if (dir && mkdir(dir, 0755) < 0 && errno != EEXIST) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -errno;
    }
    js_svgdocs_t per = {0}, all = {0}; /* per-node and all-node charts, in plots[] order */
    line_t *lines = calloc(n ? n : 1, sizeof(*lines));
    if (!lines) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    double t0 = INFINITY;
    for (size_t i = 0; i < n; i++) {
        const pm_series_t *ts = pm_series(hosts[i], PM_CPU, "", "time_stamps");
        if (ts && ts->n)
            t0 = fmin(t0, ts->v[0]);
    }
    if (!isfinite(t0))
        t0 = 0;
    for (size_t k = 0; k < NPLOTS && r == 0; k++) {
        const plot_t *p = &plots[k];
        size_t nl = 0, longest = 0;
        for (size_t i = 0; i < n && r == 0; i++) {
            const double *t;
            size_t len;
            double *v = raw(hosts[i], p, &t, &len);
            if (!v)
                continue;
            double *tt = malloc(len * sizeof(*tt));
            if (!tt) {
                free(v);
                r = -ENOMEM;
                break;
            }
            for (size_t j = 0; j < len; j++)
                tt[j] = t[j] - t0;
            to_rate(p, t, v, len);
            lines[nl] = (line_t){.t = tt, .v = v, .n = len};
            snprintf(lines[nl].name, sizeof(lines[nl].name), "%s", hosts[i]->host);
            longest = len > longest ? len : longest;
            nl++;
        }
        if (nl && r == 0) {
            char id[128], ttl[256], mean_s[64], max_s[64];
            double mean, max;
            mean_max(lines, nl, &mean, &max);
            snprintf(id, sizeof(id), "%s_per_node", p->name);
            snprintf(ttl, sizeof(ttl), "%s per node: average %s, max %s", p->name,
                     units_format(mean_s, sizeof(mean_s), mean, p->unit),
                     units_format(max_s, sizeof(max_s), max, p->unit));
            r = draw(&per, id, ttl, p->unit, lines, nl, t0);
            /* all nodes: by sample index, values summed or averaged, at the mean time */
            line_t comb = {
                .t = calloc(longest, sizeof(double)), .v = calloc(longest, sizeof(double)), .n = longest};
            if (r == 0 && (!comb.t || !comb.v))
                r = -ENOMEM;
            for (size_t j = 0; r == 0 && j < longest; j++) {
                double ts = 0, vs = 0, cnt = 0, vc = 0;
                for (size_t i = 0; i < nl; i++)
                    if (j < lines[i].n) {
                        ts += lines[i].t[j];
                        cnt++;
                        if (isfinite(lines[i].v[j])) {
                            vs += lines[i].v[j];
                            vc++;
                        }
                    }
                comb.t[j] = ts / cnt;
                comb.v[j] = !vc ? NAN : p->total ? vs : vs / vc;
            }
            if (r == 0) {
                const char *agg = p->total ? "Total" : "Average";
                snprintf(comb.name, sizeof(comb.name), "%s of %zu node%s", agg, nl, nl == 1 ? "" : "s");
                mean_max(&comb, 1, &mean, &max);
                snprintf(id, sizeof(id), "%s %s_all_nodes", agg, p->name);
                snprintf(ttl, sizeof(ttl), "%s %s, all nodes: average %s, max %s", agg, p->name,
                         units_format(mean_s, sizeof(mean_s), mean, p->unit),
                         units_format(max_s, sizeof(max_s), max, p->unit));
                r = draw(&all, id, ttl, p->unit, &comb, 1, t0);
            }
            free(comb.t);
            free(comb.v);
        }
        for (size_t i = 0; i < nl; i++) {
            free(lines[i].t);
            free(lines[i].v);
        }
    }
    free(lines);
    if (r < 0)
        snprintf(err, errlen, "cannot draw the plots: %s", strerror(-r));
    /* perfmon's file names: the chart's id with '_' for ' ' */
    for (js_svgdocs_t *d = &all; d && r == 0; d = d == &all ? &per : NULL)
        for (size_t i = 0; i < d->n; i++)
            for (char *q = d->v[i].id; *q; q++)
                *q = *q == ' ' ? '_' : *q;
    int written = 0;
    for (js_svgdocs_t *d = &all; dir && d && r == 0; d = d == &all ? &per : NULL)
        for (size_t i = 0; i < d->n && r == 0; i++)
            if ((r = write_png(&d->v[i], dir, err, errlen)) == 0)
                written++;
    if (r == 0 && pdf_path) {
        /* perfmon's GenReport: all-node plots, then per-node plots; a page of the summary first */
        char tmp[4300];
        snprintf(tmp, sizeof(tmp), "%s.%d.part", pdf_path, (int)getpid());
        int fd = fs_create(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
        js_pdf_t *pdf = NULL;
        js_buf_t sum = {0}, head = {0};
        if (fd < 0) {
            r = fd;
            snprintf(err, errlen, "%s: %s", tmp, strerror(-fd));
        } else if ((r = raster_pdf_open(fd, title, &pdf, err, errlen)) == 0) {
            if (header_doc(&head, title) < 0 || svg_text_doc(&sum, "Job summary", summary ? summary : "") < 0)
                r = -ENOMEM;
            if (r == 0)
                r = raster_pdf_draw(pdf, head.p, head.len, 0, err, errlen);
            if (r == 0)
                r = raster_pdf_draw(pdf, sum.p, sum.len, 0.75, err, errlen);
            for (js_svgdocs_t *d = &all; d && r == 0; d = d == &all ? &per : NULL) {
                raster_pdf_break(pdf);
                for (size_t i = 0; i < d->n && r == 0; i++)
                    r = raster_pdf_draw(pdf, d->v[i].svg.p, d->v[i].svg.len, 0, err, errlen);
            }
            int c = raster_pdf_close(pdf);
            if (r == 0 && c < 0) {
                r = c;
                snprintf(err, errlen, "%s: %s", pdf_path, strerror(-c));
            }
        }
        buf_free(&sum);
        buf_free(&head);
        if (fd >= 0 && close(fd) < 0 && r == 0) {
            r = -errno;
            snprintf(err, errlen, "%s: %s", pdf_path, strerror(errno));
        }
        if (r == 0 && rename(tmp, pdf_path) < 0) {
            r = -errno;
            snprintf(err, errlen, "%s: %s", pdf_path, strerror(errno));
        }
        if (r < 0 && fd >= 0)
            unlink(tmp);
    }
    svgdocs_free(&per);
    svgdocs_free(&all);
    return r < 0 ? r : written;
}
