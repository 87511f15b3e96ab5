/* SPDX-License-Identifier: MIT
 *
 * report_demo: writes a demo report page with every chart kind, for tests/integration/test_report_render.py
 * and for looking at the rendering by eye. Synthetic, deterministic data for a batch job of `hours` hours
 * sampled every second (default 24 h = 86,400 samples): cores in use with phases, events and the cores
 * available; memory with spikes at known seconds, the kernel peak and a limit; I/O with a gap; network; power
 * and energy; four GPUs (utilisation, memory, power); eight nodes as lines and as a heat map; a comparison of
 * two runs; a wall-clock chart; top processes as bars; tables, advice, and hostile text (markup, quotes,
 * control bytes, invalid UTF-8) in titles, labels and cells.
 *
 * usage: report_demo OUT.html [HOURS]
 * Prints one JSON line on stdout: {"samples":N,"series":S,"bytes":B,"spikes":[[t,v],...],"dip":[t,v]}, the
 * memory chart's spikes and dip that the page must keep exactly.
 */
#include "core/json.h"
#include "report/html.h"
#include "report/svg.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GiB (1024.0 * 1024 * 1024)
#define NODES 8
#define GPUS 4

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

/* rnd: uniform in [0, 1), xorshift64*. */
static double rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
}

static const double spike_t[] = {777, 12345, 43210, 80001};
static const double spike_v[] = {9.1 * GiB, 7.3 * GiB, 11.7 * GiB, 8.8 * GiB};
static const double dip_t = 55555, dip_v = 0.125 * GiB;

static double *series(size_t n)
{
    double *v = malloc(n * sizeof(*v));
    if (!v) {
        perror("report_demo");
        exit(1);
    }
    return v;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: report_demo OUT.html [HOURS]\n");
        return 2;
    }
    double hours = argc > 2 ? atof(argv[2]) : 24;
    size_t n = (size_t)(hours * 3600);
    if (n < 10) {
        fprintf(stderr, "report_demo: HOURS too small\n");
        return 2;
    }
    double end = (double)n - 1, scale = end / 86399; /* events and phases scale with the run */
    size_t nseries = 0;

    double *t = series(n), *cores = series(n), *rss = series(n), *rd = series(n), *wr = series(n);
    double *rx = series(n), *tx = series(n), *pkg = series(n), *dram = series(n), *gpuw = series(n);
    double *energy = series(n), *temp = series(n), *runb = series(n);
    double *gu[GPUS], *gm[GPUS], *gp[GPUS], *node[NODES];
    for (int g = 0; g < GPUS; g++) {
        gu[g] = series(n);
        gm[g] = series(n);
        gp[g] = series(n);
    }
    for (int k = 0; k < NODES; k++)
        node[k] = series(n);
    double e = 0;
    for (size_t i = 0; i < n; i++) {
        double s = (double)i, phase = s < 3600 * scale ? 0.3 : s < 72000 * scale ? 1 : 0.5;
        t[i] = s;
        cores[i] = fmin(8, phase * (5.5 + 1.5 * sin(s / 900)) + rnd());
        rss[i] = (1.5 + 0.5 * sin(s / 7000) + 0.2 * rnd()) * GiB;
        rd[i] = phase * 80e6 * rnd() * rnd();
        wr[i] = (i % 600 < 20 ? 400e6 : 5e6) * rnd();
        rx[i] = 20e6 * (1 + sin(s / 300)) * rnd();
        tx[i] = 5e6 * rnd();
        pkg[i] = 60 + 140 * phase + 10 * rnd();
        dram[i] = 8 + 10 * phase * rnd();
        gpuw[i] = 50 + 250 * phase * rnd();
        e += pkg[i] + dram[i] + gpuw[i];
        energy[i] = e;
        temp[i] = 40 + 30 * phase + 3 * rnd();
        runb[i] = fmin(8, phase * (4.5 + 1.5 * cos(s / 700)) + rnd());
        for (int g = 0; g < GPUS; g++) {
            gu[g][i] = fmin(100, phase * (60 + 10 * g) + 20 * rnd());
            gm[g][i] = (10 + 4 * g + 20 * phase) * GiB * (0.9 + 0.1 * rnd());
            gp[g][i] = 70 + 250 * phase * (0.8 + 0.2 * rnd());
        }
        for (int k = 0; k < NODES; k++)
            node[k][i] = fmin(1, phase * (0.55 + 0.05 * k) + 0.3 * rnd() * sin(s / (1000 + 300 * k)));
    }
    for (size_t k = 0; k < sizeof(spike_t) / sizeof(spike_t[0]); k++)
        if (spike_t[k] < (double)n)
            rss[(size_t)spike_t[k]] = spike_v[k];
    if (dip_t < (double)n)
        rss[(size_t)dip_t] = dip_v;
    for (size_t i = (size_t)(30000 * scale); i < (size_t)(30600 * scale) && i < n; i++)
        rd[i] = wr[i] = NAN; /* an I/O gap: the source was unreadable */
    for (size_t i = (size_t)(60000 * scale); i < (size_t)(64000 * scale) && i < n; i++)
        node[5][i] = NAN; /* a node that stopped reporting */

    const js_band_t phases[] = {{0, 3600 * scale, "setup"},
                                {3600 * scale, 72000 * scale, "compute <main> & \"solve\""},
                                {72000 * scale, end, "teardown"}};
    const js_event_t events[] = {{20000 * scale, "checkpoint 1", "{\"step\":20000}"},
                                 {50000 * scale, "checkpoint 2", NULL},
                                 {71000 * scale, "OOM kill of 'helper'", NULL}};
    js_buf_t b = {0};
    js_html_t h = {.buf = &b};
    html_begin(&h, "jobscope report: solver <demo> & friends");
    const char cmd[] =
        "sh -c 'echo \"<b>&amp;</b>\" | tee /tmp/x' \x01\x1b[31m \xff\xfe caf\xc3\xa9\nnext line";
    const js_kv_t facts[] = {
        {"command", cell_text(cmd), NULL},       {"host", cell_text("node001"), NULL},
        {"duration", cell_real(end), "s"},       {"peak memory", cell_real(11.7 * GiB), "bytes"},
        {"CPU time", cell_real(123456.5), "s"},  {"exit status", cell_int(0), NULL},
        {"samples", cell_int((int64_t)n), NULL}, {"energy", cell_real(e), "J"},
        {"missing", cell_missing(), NULL},
    };
    html_header(&h, "solver <demo> & friends", "node001 … node008, 2024-05-01 12:00 UTC, 1 s interval", facts,
                sizeof(facts) / sizeof(facts[0]));

    html_section_begin(&h, "sec-advice", "Advice");
    const js_advice_t adv[] = {
        {ADVICE_CRIT, "Memory came within 2% of the limit: raise --mem to 16 GiB.",
         "kernel peak 11.7 GiB of 12 GiB", "peak above 95% of the limit", NULL},
        {ADVICE_WARN, "Request 6 cores instead of 8.", "95th percentile 5.9 cores",
         "p95 below 75% of the cores", NULL},
        {ADVICE_INFO, "GPU 3 idles 40% of the time <see below>.", NULL, NULL, NULL},
    };
    html_advice(&h, adv, 3);
    html_section_end(&h);

    html_section_begin(&h, "sec-cpu", "CPU");
    const js_series_t s_cpu[] = {{.name = "cores in use", .t = t, .v = cores, .n = n, .fill = true}};
    const js_hline_t cpu_lim[] = {{8, "cores available 8", JS_VERMILLION}};
    html_para(&h, "Cores in use, with the job's phases shaded and its events marked.");
    svg_line_chart(&h, &(js_chart_t){.id = "cpu",
                                     .title = "Cores in use",
                                     .unit = "cores",
                                     .series = s_cpu,
                                     .nseries = 1,
                                     .hlines = cpu_lim,
                                     .nhlines = 1,
                                     .bands = phases,
                                     .nbands = 3,
                                     .events = events,
                                     .nevents = 3});
    nseries += 1;
    html_section_end(&h);

    html_section_begin(&h, "sec-memory", "Memory");
    const js_series_t s_mem[] = {{.name = "RSS (tree)", .t = t, .v = rss, .n = n, .fill = true}};
    const js_hline_t mem_lim[] = {{12 * GiB, "memory limit 12 GiB", JS_VERMILLION}};
    const js_marker_t mem_pk[] = {{43210 * scale, 11.7 * GiB, "kernel peak 11.7 GiB", JS_BLACK}};
    svg_line_chart(&h, &(js_chart_t){.id = "mem",
                                     .title = "Memory",
                                     .unit = "bytes",
                                     .series = s_mem,
                                     .nseries = 1,
                                     .hlines = mem_lim,
                                     .nhlines = 1,
                                     .markers = mem_pk,
                                     .nmarkers = 1,
                                     .bands = phases,
                                     .nbands = 3,
                                     .events = events,
                                     .nevents = 3});
    nseries += 1;
    html_section_end(&h);

    html_section_begin(&h, "sec-io", "I/O and network");
    const js_series_t s_io[] = {{.name = "read", .t = t, .v = rd, .n = n},
                                {.name = "write", .t = t, .v = wr, .n = n}};
    svg_line_chart(&h, &(js_chart_t){.id = "io",
                                     .title = "Disk I/O",
                                     .unit = "bytes/s",
                                     .series = s_io,
                                     .nseries = 2,
                                     .bands = phases,
                                     .nbands = 3});
    const js_series_t s_net[] = {{.name = "receive", .t = t, .v = rx, .n = n},
                                 {.name = "transmit", .t = t, .v = tx, .n = n}};
    svg_line_chart(&h, &(js_chart_t){.id = "net",
                                     .title = "Network",
                                     .unit = "bytes/s",
                                     .series = s_net,
                                     .nseries = 2,
                                     .bands = phases,
                                     .nbands = 3});
    nseries += 4;
    html_section_end(&h);

    html_section_begin(&h, "sec-power", "Power and energy");
    const js_series_t s_pow[] = {{.name = "package", .t = t, .v = pkg, .n = n},
                                 {.name = "DRAM", .t = t, .v = dram, .n = n},
                                 {.name = "GPUs", .t = t, .v = gpuw, .n = n}};
    svg_line_chart(&h, &(js_chart_t){.id = "power",
                                     .title = "Power",
                                     .unit = "W",
                                     .series = s_pow,
                                     .nseries = 3,
                                     .bands = phases,
                                     .nbands = 3});
    const js_series_t s_en[] = {{.name = "energy", .t = t, .v = energy, .n = n, .fill = true}};
    svg_line_chart(
        &h, &(js_chart_t){
                .id = "energy", .title = "Energy", .unit = "J", .series = s_en, .nseries = 1, .height = 180});
    nseries += 4;
    html_section_end(&h);

    html_section_begin(&h, "sec-gpu", "GPUs");
    js_series_t s_gu[GPUS], s_gm[GPUS], s_gp[GPUS];
    static const char *const gname[GPUS] = {"GPU 0", "GPU 1", "GPU 2", "GPU 3"};
    for (int g = 0; g < GPUS; g++) {
        s_gu[g] = (js_series_t){.name = gname[g], .t = t, .v = gu[g], .n = n};
        s_gm[g] = (js_series_t){.name = gname[g], .t = t, .v = gm[g], .n = n};
        s_gp[g] = (js_series_t){.name = gname[g], .t = t, .v = gp[g], .n = n};
    }
    svg_line_chart(&h, &(js_chart_t){.id = "gpu-util",
                                     .title = "GPU utilisation",
                                     .unit = "%",
                                     .series = s_gu,
                                     .nseries = GPUS,
                                     .v_min = 0,
                                     .v_max = 100,
                                     .bands = phases,
                                     .nbands = 3});
    const js_hline_t gm_lim[] = {{40 * GiB, "GPU memory 40 GiB", JS_COLOUR_AUTO}};
    svg_line_chart(&h, &(js_chart_t){.id = "gpu-mem",
                                     .title = "GPU memory",
                                     .unit = "bytes",
                                     .series = s_gm,
                                     .nseries = GPUS,
                                     .hlines = gm_lim,
                                     .nhlines = 1});
    svg_line_chart(
        &h,
        &(js_chart_t){.id = "gpu-power", .title = "GPU power", .unit = "W", .series = s_gp, .nseries = GPUS});
    nseries += 3 * GPUS;
    html_section_end(&h);

    html_section_begin(&h, "sec-nodes", "Nodes");
    js_series_t s_node[NODES];
    static const char *const nname[NODES] = {"node001", "node002", "node003", "node004",
                                             "node005", "node006", "node007", "node008 <gpu>"};
    for (int k = 0; k < NODES; k++)
        s_node[k] = (js_series_t){.name = nname[k], .t = t, .v = node[k], .n = n};
    svg_line_chart(&h, &(js_chart_t){.id = "node-cpu",
                                     .title = "CPU utilisation per node",
                                     .unit = "fraction",
                                     .series = s_node,
                                     .nseries = NODES,
                                     .v_min = 0,
                                     .v_max = 1});
    svg_heatmap(&h, &(js_heatmap_t){.id = "node-heat",
                                    .title = "CPU utilisation, nodes \xc3\x97 time",
                                    .unit = "fraction",
                                    .rows = s_node,
                                    .nrows = NODES,
                                    .v_min = 0,
                                    .v_max = 1});
    nseries += NODES;
    html_section_end(&h);

    html_section_begin(&h, "sec-compare", "Compare two runs");
    const js_series_t s_cmp[] = {{.name = "A: run 17", .t = t, .v = cores, .n = n},
                                 {.name = "B: run 18", .t = t, .v = runb, .n = n, .dashed = true}};
    svg_line_chart(&h, &(js_chart_t){.id = "cmp",
                                     .title = "Cores in use, A against B",
                                     .unit = "cores",
                                     .series = s_cmp,
                                     .nseries = 2});
    const js_series_t s_temp[] = {{.name = "package", .t = t, .v = temp, .n = n}};
    svg_line_chart(&h, &(js_chart_t){.id = "temp",
                                     .title = "Temperature (wall clock, UTC)",
                                     .unit = "°C",
                                     .series = s_temp,
                                     .nseries = 1,
                                     .height = 180,
                                     .time = {.mode = JS_TIME_WALL, .t0_unix = 1714564800}});
    nseries += 2;
    html_section_end(&h);

    html_section_begin(&h, "sec-procs", "Top processes");
    const js_bar_t by_cpu[] = {
        {"solver --threads 8 <input.dat>", 5.2,
         "pid 4242: solver --threads 8 <input.dat> --out \"/tmp/a&b\""},
        {"python3 post.py", 1.1, "pid 4300"},
        {"gzip -9 \xff\xfe broken", 0.4, NULL},
        {"a-very-long-command-name-that-goes-on-and-on-and-on --with many --options", 0.05, NULL},
    };
    svg_bar_chart(
        &h,
        &(js_bars_t){
            .id = "top-cpu", .title = "Top processes by CPU", .unit = "cores", .bars = by_cpu, .nbars = 4});
    const js_bar_t by_mem[] = {
        {"solver", 11.2 * GiB, NULL}, {"python3", 0.8 * GiB, NULL}, {"gzip", 3e6, NULL}};
    svg_bar_chart(&h, &(js_bars_t){.id = "top-mem",
                                   .title = "Top processes by memory",
                                   .unit = "bytes",
                                   .bars = by_mem,
                                   .nbars = 3,
                                   .colour = JS_ORANGE});
    const js_col_t cols[] = {
        {"process", NULL}, {"pid", NULL}, {"CPU", "cores"}, {"peak RSS", "bytes"}, {"read", "bytes"}};
    const js_cell_t cells[] = {
        cell_text("solver --threads 8 <input.dat>"),
        cell_int(4242),
        cell_real(5.2),
        cell_real(11.2 * GiB),
        cell_real(3.5e9),
        cell_text(cmd),
        cell_int(4300),
        cell_real(1.1),
        cell_real(0.8 * GiB),
        cell_missing(),
    };
    html_table(&h, "Processes", cols, 5, cells, 2);
    html_kv_table(&h, facts, 4);
    html_section_end(&h);

    int r = html_end(&h);
    if (r < 0) {
        fprintf(stderr, "report_demo: rendering failed (%d)\n", r);
        return 1;
    }
    FILE *f = fopen(argv[1], "w");
    if (!f || fwrite(b.p, 1, b.len, f) != b.len || fclose(f) != 0) {
        perror(argv[1]);
        return 1;
    }
    printf("{\"samples\":%zu,\"series\":%zu,\"bytes\":%zu,\"spikes\":[", n, nseries, b.len);
    for (size_t k = 0; k < sizeof(spike_t) / sizeof(spike_t[0]); k++)
        if (spike_t[k] < (double)n)
            printf("%s[%.0f,%.0f]", k ? "," : "", spike_t[k], spike_v[k]);
    printf("],\"dip\":[%.0f,%.0f]}\n", dip_t, dip_v);

    buf_free(&b);
    free(t), free(cores), free(rss), free(rd), free(wr), free(rx), free(tx), free(pkg), free(dram),
        free(gpuw);
    free(energy), free(temp), free(runb);
    for (int g = 0; g < GPUS; g++)
        free(gu[g]), free(gm[g]), free(gp[g]);
    for (int k = 0; k < NODES; k++)
        free(node[k]);
    return 0;
}
