/* SPDX-License-Identifier: MIT
 *
 * `jobscope perfmon`, a drop-in for SKA SDP perfmon (docs/PERFMON.md): perfmon's command line over
 * `jobscope job`, and perfmon's outputs made from jobscope's model. This header joins the three files of the
 * adapter:
 *
 *   cmd_perfmon.c    the command line (perfmon's options and defaults), the save folder, the log file, the
 *                    run (job_hooks_t over cmd_run's `job`), the check points and the post-processing of the
 *                    node that merges the job (metrics/(cpu_metrics,perf_metrics,meta_data).json, exports,
 * plots, the PDF report) perfmon_data.c   one host's perfmon series, fed sample by sample from the model
 * (live, for the check points, and from the node recordings at the end), and their files: the host objects of
 *                    cpu_metrics.json, perf_metrics.json and meta_data.json, the dataframe tables for CSV and
 *                    HDF5
 *   perfmon_plots.c  perfmon's plots (per node and all nodes: CPU, memory, I/O, network, InfiniBand, energy,
 *                    perf counters) as charts of the report's chart model (report/svg.h), rendered to PNG and
 *                    to the PDF job report by report/raster.h
 *
 * Nothing here samples: every figure is the model's (model/model.h), and the recordings stay the primary
 * data. perfmon's keys, units and shapes are kept; where perfmon samples what jobscope counts exactly, the
 * exact figure is written under perfmon's name (docs/PERFMON.md lists every difference).
 */
#ifndef JOBSCOPE_PERFMON_H
#define JOBSCOPE_PERFMON_H

#include "core/sample.h"
#include "model/model.h"
#include "sys/fsroot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* One metric of one host over time: perfmon's group ("" for a top-level key), key, and dataframe header. */
typedef struct {
    char group[32];
    char key[64];
    char header[96];
    double frame_scale; /* the dataframe's value is v / frame_scale (0: v): memory_bw in MiB/s */
    double *v;          /* one value per timestamp, NAN where jobscope has none */
    size_t n, cap;
} pm_series_t;

typedef enum { PM_CPU, PM_PERF, PM__MAX } pm_file_t;

/* One host's perfmon data. */
typedef struct {
    char host[128];
    double interval_s; /* perfmon's sampling_frequency: the sampling interval in seconds */
    size_t nsamples;
    pm_series_t
        *s[PM__MAX]; /* series of cpu_metrics (time_stamps first) and perf_metrics (time_stamps first) */
    size_t ns[PM__MAX];
    double net[4]; /* cumulative bytes sent, received, packets sent, received (interfaces but lo) */
    double ib[2];  /* cumulative InfiniBand packets sent, received */
    double mem_total;
    char **comms; /* child_proc_md: the distinct command names seen */
    size_t ncomms;
    js_buf_t parent;    /* parent_proc_md: a JSON object */
    js_buf_t inventory; /* meta_data: the node's inventory as a JSON object {source: {key: value}} */
    bool inv_done;
} pm_host_t;

/* pm_host_init: an empty host named `host` sampled every `interval_s` seconds. */
void pm_host_init(pm_host_t *h, const char *host, double interval_s);

/* pm_host_free: release everything; accepts an initialised host. */
void pm_host_free(pm_host_t *h);

/* pm_host_feed: after model_feed() of sample `s` into `m`: append this sample's values (one timestamp).
 * Returns 0 or -ENOMEM. */
int pm_host_feed(pm_host_t *h, js_model_t *m, const js_sample_t *s);

/* pm_series: the series `group`.`key` of file `f`, or NULL. */
const pm_series_t *pm_series(const pm_host_t *h, pm_file_t f, const char *group, const char *key);

/* pm_json_host: append host `h`'s object of cpu_metrics.json (PM_CPU) or perf_metrics.json (PM_PERF), as
 * perfmon writes it per host: host_name, sampling_frequency, time_stamps and every metric, with perfmon's
 * keys and units. Missing values repeat the last one (0 before any), as perfmon's check_metric_data does.
 * Returns 0 or -ENOMEM. */
int pm_json_host(js_buf_t *b, const pm_host_t *h, pm_file_t f);

/* pm_json_meta_host: append host `h`'s object of meta_data.json (its hardware, from the inventory). */
int pm_json_meta_host(js_buf_t *b, const pm_host_t *h);

/* pm_json_file: the whole file of `f` (PM_CPU, PM_PERF, or PM__MAX for meta_data) for `n` hosts:
 * {"host_names": [...], HOST: {...}, ..., "sampling_frequency": S}. Returns 0 or -ENOMEM. */
int pm_json_file(js_buf_t *b, pm_host_t *const *hosts, size_t n, pm_file_t f);

/* pm_csv: the dataframe of `f` (perfmon's CreateDataFrame: one row per host and timestamp, columns Host,
 * Timestamps, then one per metric, named as perfmon's headers) as CSV into `out`. Returns 0 or -errno. */
int pm_csv(FILE *out, pm_host_t *const *hosts, size_t n, pm_file_t f);

/* pm_hdf5: the dataframes of cpu_metrics and perf_metrics as the groups cpu_metrics_JOBID and
 * perf_metrics_JOBID of a new HDF5 file `path` (jobscope's HDF5 layout: a dataset per column; the group's
 * `columns` attribute lists perfmon's headers). Returns 0 or -errno with `err` set. */
int pm_hdf5(const char *path, const char *job, pm_host_t *const *hosts, size_t n, char *err, size_t errlen);

/* ---- plots and the PDF (perfmon_plots.c) ---- */

/* pm_plots: draw perfmon's plots for `hosts` into folder `dir` as PNG files (Name_per_node.png,
 * Average_Name_all_nodes.png / Total_Name_all_nodes.png), and, when `pdf` is not NULL, the job report: a page
 * with the job's summary (`summary`, text lines) and the plots, as perfmon's GenReport lays them out.
 * `title` heads the PDF's pages. Returns the number of plots written, or -errno with `err` set (-ENOENT: the
 * rendering library cannot be loaded). */
int pm_plots(pm_host_t *const *hosts, size_t n, const char *dir, const char *pdf, const char *title,
             const char *summary, char *err, size_t errlen);

#endif
