/* SPDX-License-Identifier: MIT
 *
 * synth_recording: writes a synthetic recording (tests/synth.h: a batch job on an 8-CPU node with phases,
 * memory spikes, I/O bursts, RAPL energy, CPU frequency and temperature) through jobscope's own recorder, so
 * it has the real schema and metadata and every jobscope command reads it. bench/report_bench.py uses it for
 * the size and time of the report of a 24 h run at 1 s.
 *
 * It feeds jobscope's model as a monitor does, so the recording holds the model's stored aggregates too
 * (schema 2: tree_totals, summary_state).
 *
 * usage: synth_recording OUT.db [HOURS [INTERVAL_S [NODE [NPROCS [EVENTS]]]]]   (default 24 h at 1 s, node 0,
 * 6 processes, no events; more processes than 4 per CPU make a task farm: 16 busy at a time on the 8 CPUs,
 * the rest asleep) EVENTS: that many `jobscope mark event` rows spread evenly over the run (names "step" and
 * "ckpt", data {"i": N}), for the report's bound on drawn events (bench/report_bench.py --events).
 * Prints one JSON line: {"samples":N,"seconds":S} (S: time taken to write it).
 */
#include "config.h"
#include "core/marks.h"
#include "core/source.h"
#include "model/model.h"
#include "sinks/recording.h"
#include "synth.h"
#include "sources/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int meta(js_recorder_t *w, const char *key, long long v)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%lld", v);
    return recorder_meta(w, key, buf);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: synth_recording OUT.db [HOURS [INTERVAL_S [NODE [NPROCS [EVENTS]]]]]\n");
        return 2;
    }
    synth_cfg_t cfg = {.hours = argc > 2 ? atof(argv[2]) : 24,
                       .interval_s = argc > 3 ? atof(argv[3]) : 1,
                       .node = argc > 4 ? (unsigned)atoi(argv[4]) : 0,
                       .nprocs = argc > 5 ? (unsigned)atoi(argv[5]) : 0};
    long long events = argc > 6 ? atoll(argv[6]) : 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    synth_t *g = synth_new(&cfg);
    js_sample_t s = {0};
    js_recorder_t *w = NULL;
    char err[1024];
    if (!g || sample_init(&s) < 0) {
        fprintf(stderr, "synth_recording: out of memory\n");
        return 1;
    }
    if (recorder_open(argv[1], false, &w, err, sizeof(err)) < 0) {
        fprintf(stderr, "synth_recording: %s\n", err);
        return 1;
    }
    js_model_cfg_t mc;
    synth_model_cfg(g, &mc);
    int64_t start_unix = 1714564800LL * 1000000000LL;
    char host[32];
    snprintf(host, sizeof(host), "node%03u", cfg.node + 1);
    int rc = recorder_meta(w, "jobscope_version", JOBSCOPE_VERSION);
    rc |= recorder_meta(w, "mode", "run");
    rc |= recorder_meta(w, "scope", "process tree");
    rc |= recorder_meta(w, "host", host);
    rc |= recorder_meta(w, "command", "[\"./run.sh\",\"--synthetic\"]");
    rc |= recorder_meta(w, "command_shell", "./run.sh --synthetic");
    rc |= recorder_meta(w, "cpu_model", "Synthetic CPU @ 2.0GHz");
    rc |= meta(w, "clk_tck", mc.clk_tck);
    rc |= meta(w, "monitor_pid", mc.monitor_pid);
    rc |= meta(w, "root_pid", mc.root_pid);
    rc |= meta(w, "interval_ns", mc.interval_ns);
    rc |= meta(w, "start_mono_ns", mc.start_mono_ns);
    rc |= meta(w, "start_unix_ns", start_unix);
    rc |= meta(w, "cores_available", (long long)mc.cores_available);
    js_model_t *m = model_new(&mc);
    if (!m) {
        fprintf(stderr, "synth_recording: out of memory\n");
        return 1;
    }
    size_t n = 0, total = synth_count(g);
    int r;
    long long made = 0;
    while (rc == 0 && (r = synth_next(g, &s)) == 1) {
        /* the events due by this sample (evenly spread: sample n holds those with index < events*(n+1)/total)
         */
        long long due = total ? (long long)((double)events * (double)(n + 1) / (double)total) : 0;
        const js_rows_t *sr = sample_rows(&s, &table_samples);
        js_rows_t *mr = sample_rows(&s, &table_marks);
        int64_t t_mono = sr->nrows ? rows_row(sr, 0)[SAMPLES_T_MONO].i : 0;
        int64_t t_unix = sr->nrows ? rows_row(sr, 0)[SAMPLES_T_UNIX].i : 0;
        rows_clear(mr);
        for (; made < due && rc == 0; made++) {
            js_value_t *v = rows_add(mr);
            char data[32];
            const char *name = made % 10 == 9 ? "ckpt" : "step";
            snprintf(data, sizeof(data), "{\"i\": %lld}", made);
            if (!v)
                rc = -1;
            else {
                val_int(&v[MARK_T_MONO], t_mono - 1000);
                val_int(&v[MARK_T_UNIX], t_unix - 1000);
                val_int(&v[MARK_PID], mc.root_pid);
                rc |= rows_set_str(mr, &v[MARK_KIND], "event", 5);
                rc |= rows_set_str(mr, &v[MARK_NAME], name, strlen(name));
                rc |= rows_set_str(mr, &v[MARK_DATA], data, strlen(data));
            }
        }
        if (model_feed(m, (int64_t)n, &s) < 0 ||
            recorder_write_model(w, (int64_t)n, &s, m, n + 1 == total) < 0) {
            fprintf(stderr, "synth_recording: cannot write sample %zu\n", n);
            rc = -1;
            break;
        }
        n++;
    }
    double len_s = (double)(synth_count(g) - 1) * cfg.interval_s;
    rc |= meta(w, "exit_status", 0);
    rc |= meta(w, "stop_mono_ns", mc.start_mono_ns + (long long)(len_s * 1e9));
    rc |= meta(w, "stop_unix_ns", start_unix + (long long)(len_s * 1e9));
    rc |= meta(w, "samples_taken", (long long)n);
    rc |= meta(w, "samples_missed", 0);
    recorder_close(w);
    model_free(m);
    sample_free(&s);
    synth_free(g);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc) {
        fprintf(stderr, "synth_recording: cannot write %s\n", argv[1]);
        return 1;
    }
    printf("{\"samples\":%zu,\"seconds\":%.3f}\n", n,
           (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    return 0;
}
