/* SPDX-License-Identifier: MIT
 *
 * Model parts and views. The tree model (model.c) derives the scope's figures; every other family of derived
 * figures (the host, GPUs, energy, hardware counters, phases) is a model part: one file in src/model/, listed
 * once in src/model/parts.c, fed the same samples in the same order as the tree model, after it. A part puts
 * its own rows into the summary table (model/figure.h), renders its lines of the text summary from those rows
 * alone, and exposes views.
 *
 * A view is a derived table: a js_table_t descriptor (column names with their unit suffix, unit, type, gauge
 * or counter, help) and, for the last fed sample, rows of values (missing where they could not be derived).
 * Views are what every consumer reads: `jobscope export --scope VIEW`, the Prometheus exposition, the
 * report's charts. They are built on demand (lazily), so a live run that no consumer asks pays nothing for
 * them.
 */
#ifndef JOBSCOPE_MODEL_PART_H
#define JOBSCOPE_MODEL_PART_H

#include "core/json.h"
#include "model/figure.h"
#include "core/sample.h"
#include "core/table.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct js_model js_model_t;
typedef struct js_model_cfg js_model_cfg_t;

/* The scope's own kernel accounting, where a part reads it (the cgroup part: the cgroup made for the run, the
 * watched cgroup or the watched user's slice): the tree model takes its CPU total and memory high-water mark
 * as the scope's exact figures (model_summary) and its memory in use as the memory headline's (the
 * scope_totals hook). Numbers are NAN where unknown; strings static or the part's, valid until model_free. */
typedef struct {
    bool present; /* the part read the scope's accounting at some sample */
    double cpu_s, user_s, system_s;
    const char *cpu_file; /* the file behind cpu_s ("cpuacct.usage", "cpu.stat"), or NULL */
    double peak_bytes;    /* the high-water mark of the monitoring window (NAN where the kernel's mark
                           * covers more than the window) */
    const char *peak_method;
    double current_bytes; /* memory charged at the last sample */
} js_scope_totals_t;

/* What a part is fed: the sample, and the model (its tree point and per-process points are already derived
 * for this sample: model_point(), model_procs()). Both borrowed for the call. */
typedef struct {
    int64_t seq;
    const js_sample_t *s;
    const js_model_t *m;
} js_feed_t;

typedef struct js_model_part {
    const char *name;
    /* init: per-run state in *ret_state (may stay NULL). Returns 0 or -errno (the part is then skipped). */
    int (*init)(const js_model_cfg_t *cfg, void **ret_state);
    /* feed: consume one sample. Returns 0 or -ENOMEM. */
    int (*feed)(void *state, const js_feed_t *f);
    /* view_table: the descriptor of this part's view number i, or NULL past the last one. A view whose
     * columns depend on the data (one column per CPU, say) may return NULL until the first feed. */
    const js_table_t *(*view_table)(void *state, size_t i);
    /* view_fill: append the rows of view i for the last fed sample to `out` (empty, bound to view_table(i)).
     * Returns 0 or -ENOMEM. */
    int (*view_fill)(void *state, size_t i, js_rows_t *out);
    /* summary: put this part's figures into the summary table below `root`, each a row with its unit and,
     * where it matters, how it was obtained (figure.h); nothing when it saw no data. May be NULL. */
    void (*summary)(void *state, js_figure_t *root);
    /* summary_text: append this part's lines to the full text summary (two-space indent, label padded to 17
     * columns like the core lines), read from the table's rows below `root` (nothing when its rows are
     * absent). May be NULL. Returns 0 or -ENOMEM. */
    int (*summary_text)(const js_figure_t *root, js_buf_t *b);
    /* summary_short: at most one or two lines for the short text summary (summary.h), where the part's
     * figures belong at a glance (GPUs, energy, phases), likewise. May be NULL. Returns 0 or -ENOMEM. */
    int (*summary_short)(const js_figure_t *root, js_buf_t *b);
    /* scope_totals: the scope's own kernel accounting, where this part reads it (see js_scope_totals_t).
     * Returns 0, or -ENOENT when it has none. May be NULL. */
    int (*scope_totals)(void *state, js_scope_totals_t *ret);
    /* fini: free the state; accepts NULL. */
    void (*fini)(void *state);
} js_model_part_t;

/* The explicit list of parts, NULL-terminated (src/model/parts.c). */
extern const js_model_part_t *const js_model_parts[];

/* A view of the last fed sample: its descriptor and rows, owned by the model, valid until the next feed. */
typedef struct {
    const js_table_t *table;
    const js_rows_t *rows;
} js_view_t;

#endif
