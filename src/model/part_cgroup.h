/* SPDX-License-Identifier: MIT
 *
 * The `cgroup` model part (part_cgroup.c): totals and rates of the scope's cgroup from the `cgroup`,
 * `cgroup_memory` and `cgroup_io` tables, and the allocation from the cgroup source's inventory rows. This
 * header is what the core needs from it: the totals, so the summary's CPU total and kernel memory peak can
 * come from the cgroup where one was made for the run.
 */
#ifndef JOBSCOPE_MODEL_PART_CGROUP_H
#define JOBSCOPE_MODEL_PART_CGROUP_H

#include "model/model.h"
#include "model/part.h"

#include <stdbool.h>

extern const js_model_part_t part_cgroup;

/* What the cgroup part derived from everything fed so far. Numbers are NAN where unknown. */
typedef struct {
    bool present;     /* at least one sample had cgroup rows */
    bool created;     /* the cgroup was made for this run (counts from 0: everything in it is the job's) */
    const char *path; /* the cgroup's path from the hierarchy root (memory's, else the first); may be NULL */
    const char *version; /* "v1", "v2", "hybrid"; may be NULL */
    /* CPU, seconds: from the cgroup's creation (created) or from the first sample; exact kernel accounting of
     * every task that ran in the cgroup */
    double cpu_s, user_s, system_s;
    const char *cpu_file; /* the file behind cpu_s ("cpuacct.usage", "cpu.stat"); may be NULL */
    /* memory, bytes */
    /* the cgroup's own high-water mark (memory.peak / max_usage_in_bytes) where it is the monitoring window's
     * (part_cgroup.c, peak_covers_window), else NAN; and where it is not, the mark since the cgroup's
     * creation */
    double peak_kernel_tree_bytes;
    const char *peak_method; /* how it was obtained, one sentence */
    double peak_since_created_bytes;
    double anon_peak_bytes, file_peak_bytes, swap_peak_bytes; /* largest at a sample */
    double current_bytes;      /* memory charged to it at the last sample (memory.current, usage_in_bytes) */
    double oom_kills, failcnt; /* during monitoring (created: since creation) */
    /* the allocation (inventory; core/allocation.h) */
    double cores;            /* cores allocated, NAN when unknown */
    const char *cores_bound; /* which bound applied ("cpuset", "affinity", "cpu.max", ...) */
    double memory_limit_bytes;
    const char *memory_limit_bound;
} js_cgroup_totals_t;

/* part_cgroup_totals: the totals of model `m`'s cgroup part into *ret (strings borrowed from the part, valid
 * until model_free). Returns 0, or -ENOENT when the part is not running in `m` (then *ret.present is false).
 */
int part_cgroup_totals(const js_model_t *m, js_cgroup_totals_t *ret);

#endif
