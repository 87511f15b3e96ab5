/* SPDX-License-Identifier: MIT
 *
 * The Prometheus exposition of the last sample, in the text format 0.0.4 or OpenMetrics 1.0, generated from
 * the column descriptors of the model's views and the monitor's own tables: there is no second list of metric
 * names. For each view, label columns (JS_LABEL, and text columns) become labels; each numeric column becomes
 * a family `jobscope_<view>_<stem>_<unit>[_total]`, its value converted to the base unit its descriptor's
 * unit names (ticks, us, ns -> seconds; uJ -> joules; MHz -> hertz; fraction -> ratio ...), a counter kind
 * gets
 * `_total`, and the descriptor's help is the HELP. The scope's own view (`tree`) is exposed without the view
 * prefix (`jobscope_memory_bytes`). A missing value omits that series for the scrape; it is never 0.
 * docs/PROMETHEUS.md lists the names this gives, the few overrides, and why the per-process view is opt-in.
 *
 * Rendering is plain string building into a js_buf_t: the HTTP endpoint and the textfile sink (http.h,
 * textfile.h) call it on the monitor's thread, once per sample, and serve or write the result.
 */
#ifndef JOBSCOPE_PROMETHEUS_H
#define JOBSCOPE_PROMETHEUS_H

#include "core/sample.h"
#include "core/table.h"
#include "sys/fsroot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct js_model js_model_t;

typedef enum {
    PROM_TEXT,        /* text/plain; version=0.0.4 */
    PROM_OPENMETRICS, /* application/openmetrics-text; version=1.0.0 */
    PROM_FORMAT_MAX
} prom_format_t;

/* The Content-Type of each format. */
extern const char *const prom_content_type[PROM_FORMAT_MAX];

typedef struct {
    const char *name; /* a valid label name */
    const char *value;
} prom_label_t;

/* A table exposed besides the model's views (serve --jobs: the SLURM jobs), rendered like a view. */
typedef struct {
    const char *prefix; /* family prefix after jobscope_, e.g. "slurm_job" */
    const js_table_t *table;
    const js_rows_t *rows; /* borrowed; its owner refreshes it before each sample reaches the sinks */
} prom_extra_t;

#define PROM_LABELS_MAX 8

/* What to expose and with which labels; owned by the caller, read by the sinks at each sample. */
typedef struct {
    prom_label_t labels[PROM_LABELS_MAX]; /* on every series: host, scope, jobid, step, user where known */
    size_t nlabels;
    bool tree;              /* expose the scope's `tree` view (off for serve's node scope) */
    unsigned top_processes; /* the `process` view, for the N busiest processes only (0: not exposed) */
    /* own_processes_only: the process view holds only processes whose procfs entry (PID under the
     * directory proc_dirfd) belongs to own_uid; for an endpoint any local user can read (no authentication):
     * other users' per-process figures are theirs (the kernel refuses them /proc/PID/io, hidepid hides the
     * processes themselves) */
    bool own_processes_only;
    int proc_dirfd;
    unsigned own_uid;
    const prom_extra_t *extra; /* more tables (may be NULL) */
    size_t nextra;
    double render_s; /* how long the previous render took (set by the sink), exposed as a series */
} prom_cfg_t;

/* prom_render: append the whole exposition of the last sample to `out`: every view of `m` (built on demand,
 * so `m` is not const), the monitor's own series from the raw sample `s` (per-source collect duration and
 * success, missed samples, the monitor's CPU and memory), cfg->extra, and `# EOF` for OpenMetrics. `seq` is
 * the sample's number. `m` may be NULL (then only the monitor's series). Returns 0 or -ENOMEM. */
int prom_render(js_buf_t *out, prom_format_t fmt, const prom_cfg_t *cfg, js_model_t *m, const js_sample_t *s,
                int64_t seq);

/* prom_render_table: append the families of one table (a view or any js_table_t with its rows) under
 * `jobscope_<prefix>_` (prefix "" for none), with cfg's labels. `rowsel` lists the rows to expose (NULL: all
 * `nsel` is then ignored). Exposed for tests and for callers with tables of their own. Returns 0 or -ENOMEM.
 */
int prom_render_table(js_buf_t *out, prom_format_t fmt, const prom_cfg_t *cfg, const char *prefix,
                      const js_table_t *t, const js_rows_t *rows, const size_t *rowsel, size_t nsel);

/* prom_render_end: the format's trailer (`# EOF` for OpenMetrics, nothing for text). Returns 0 or -ENOMEM. */
int prom_render_end(js_buf_t *out, prom_format_t fmt);

/* The exposed family of one column. */
typedef struct {
    char name[160];   /* jobscope_..., without `_total` */
    bool counter;     /* samples are name_total */
    bool skip;        /* not exposed (text, or overridden away) */
    double scale;     /* value in the descriptor's unit times scale = value in the base unit */
    const char *unit; /* OpenMetrics UNIT (a suffix of name), or NULL */
    const char *help;
    const char *lname; /* one extra label this column adds (mode="user", cpu="3"), or NULL */
    char lvalue[64];
} prom_family_t;

/* prom_family: the family column `c` of table `t` is exposed as under `prefix` (see the file comment).
 * `clk_tck` converts ticks (0: sysconf). Exposed for tests and for docs/PROMETHEUS.md. */
void prom_family(const char *prefix, const js_table_t *t, size_t c, prom_family_t *ret);

/* prom_accept: the format to serve for an HTTP Accept header (NULL: text): OpenMetrics when the client
 * prefers it (by q-value) to the text format. */
prom_format_t prom_accept(const char *accept);

#endif
