/* SPDX-License-Identifier: MIT
 *
 * The model: the one place where raw samples become deltas, rates, tree sums and the run summary. The live
 * monitor feeds it each sample as taken; `jobscope summary` and `jobscope export` feed it the same samples
 * read back from a recording, so all of them agree. Derived values that could not be computed are NAN (absent
 * is not zero). Totals follow the kernel's own accounting (see docs/ARCHITECTURE.md, "Exact totals"): tree
 * CPU(t) = sum over live members of utime+stime+cutime+cstime
 *               + everything the monitor reaped (RUSAGE_CHILDREN; run mode)
 *               + last-seen totals of members that vanished with no live member or the monitor to reap them
 *                 (attach mode; inexact by nature)
 * and likewise for I/O (a parent's /proc/<pid>/io includes the children it reaped) and page faults.
 */
#ifndef JOBSCOPE_MODEL_H
#define JOBSCOPE_MODEL_H

#include "core/sample.h"
#include "core/source.h"
#include "model/part.h"

#include <stdbool.h>
#include <stdint.h>

struct js_model_cfg {
    js_mode_t mode;
    js_scope_kind_t scope; /* what was watched (meta.scope_kind) */
    int64_t clk_tck;       /* sysconf(_SC_CLK_TCK) of the recorded host */
    int32_t monitor_pid;
    int32_t root_pid;
    int64_t interval_ns;
    int64_t start_mono_ns; /* when the command started (run) or monitoring began (attach); 0 = first sample */
    double cores_available;  /* the allocation: smallest of affinity, cpuset, CPU quota, SLURM (may be
                                fractional) */
    const char *cores_bound; /* which bound gave cores_available ("affinity", "cpuset", ...), or NULL */
    bool embedded;           /* mode attach with the monitor a thread of root_pid (js_monitor_start): the
                              * monitor thread's CPU (the self table) is taken off the tree's */
    bool stepd_roots;        /* jobscope job without a cgroup: the tree's roots are slurmstepd processes (the
                              * stepd table), whose reaped CPU is the job's; counted from the tasks' start */
    bool level;              /* the model of one of the embedded monitor's levels (part_levels): no levels of
                              * its own */
};

/* model_interval_short: whether an interval of dt_ns (the model's time is int64 nanoseconds, as sampled) is
 * shorter than half the nominal one, like a closing sample a few ms after the previous one: such an interval
 * is no candidate for a largest rate on its own (docs/ARCHITECTURE.md, "Rates stay physical"). The one place
 * the model compares with the nominal interval. */
static inline bool model_interval_short(const js_model_cfg_t *cfg, int64_t dt_ns)
{
    return dt_ns < cfg->interval_ns / 2;
}

enum { IO_RCHAR, IO_WCHAR, IO_SYSCR, IO_SYSCW, IO_READ, IO_WRITE, IO__MAX };

/* Tree-scope values derived for one sample. NAN = missing. Cumulative values count from the run's start. */
typedef struct {
    int64_t seq;
    int64_t t_mono_ns, t_unix_ns;
    int64_t dt_ns;                  /* since the previous sample; 0 for the first */
    double dt_s;                    /* the same in seconds, for the views; NAN for the first */
    double cpu_s, user_s, system_s; /* cumulative tree CPU time */
    double cpu_cores;               /* CPU rate over the interval (cores busy) */
    double sampled_cpu_s; /* what sampling alone sees: sum of each process's largest own utime+stime */
    double rss;           /* sum of the members' RSS: a page shared by k members counts k times */
    double rss_main, rss_desc, shared, rss_anon, rss_file, rss_shmem, swap, hwm_max;
    /* USS (private pages) and PSS sums: each member's last smaps_rollup figures moved by its RSS change
     * since; `pss_read`: the PSS sum is a measurement of this sample: every readable member's smaps_rollup
     * was read now (proc_tree's read_smaps_all), one member is alive, and the sum is not 0 beside a resident
     * RSS (members exiting between their reads) */
    double uss, pss;
    bool pss_read;
    double members, threads, fds;
    double io[IO__MAX];      /* cumulative */
    double io_rate[IO__MAX]; /* per second over the interval */
    double minflt, majflt;   /* cumulative */
    bool root_alive;
    /* the root process against the other members, as the split part reports them (NAN = missing): the root's
     * RSS, USS, PSS (as its row has them), threads (less an embedded monitor's thread) and own CPU (utime +
     * stime ticks, seconds); the others' RSS sum (missing when one of them lacks it), USS and PSS sums and
     * threads; smaps_all: 1 when every member's row has USS and PSS (a sample that read them all), else 0 */
    double main_rss, main_uss, main_pss, main_threads, main_own_s, desc_rss, desc_uss, desc_pss, desc_threads;
    double smaps_all;
} js_tree_point_t;

/* Per-process values derived for one sample, aligned with the proc rows of that sample. */
typedef struct {
    double cpu_cores; /* own utime+stime rate; NAN for a process first seen */
    double read_bps, write_bps;
} js_proc_point_t;

/* One command name's share of the scope, from the processes sampling saw (top lists in the summary). */
typedef struct {
    char comm[64];
    double cpu_s;    /* own CPU time of its processes, as last seen (sampled) */
    double peak_rss; /* largest RSS of one of its processes at one sample */
    int64_t procs;   /* processes seen with this name */
} js_top_t;

#define JS_TOP_N 5 /* commands by memory; by CPU, at least these */
/* By CPU: more commands, until they cover JS_TOP_CPU_SHARE of the CPU sampling saw (at most JS_TOP_CPU_MAX);
 * the rest are counted as "others". */
#define JS_TOP_CPU_MAX 20
#define JS_TOP_CPU_SHARE 0.9

typedef struct {
    double user_s, system_s, total_s, sampled_s, mean_cores, max_cores, efficiency, cores_available;
    /* the memory headline: the most the scope held at once, counting no page twice (see model_summary) */
    double peak_bytes;
    const char *peak_method; /* static text: which figure it is */
    bool peak_exact;         /* kernel accounting (the cgroup's or one process's high-water mark) */
    double peak_rss_sum; /* largest sum of the members' RSS at one sample (shared pages once per process) */
    double peak_rss_kernel, peak_swap, peak_rss_main, peak_rss_desc;
    double peak_pss; /* largest PSS sum (sampled; see js_tree_point_t) */
    double peak_private,
        peak_shared;         /* largest USS sum; largest PSS - USS sum (shared pages, once for the tree) */
    int32_t peak_kernel_pid; /* the process behind peak_rss_kernel, 0 when it was a reaped child */
    char peak_kernel_comm[64];
    double io[IO__MAX];
    /* processes whose I/O counters could not be read (not zombies): left out of the I/O totals, which cover
     * the others (and what a reaper's counters took of them) */
    int64_t io_unreadable;
    /* live processes whose smaps_rollup could never be read while others' could: left out of the USS/PSS sums
     */
    int64_t uss_unreadable;
    int64_t pss_samples;           /* samples at which every (readable) member's smaps_rollup was read */
    double minflt, majflt;         /* page faults (exact in run mode, like CPU) */
    double vol_ctxsw, invol_ctxsw; /* context switches: live members (status) + what the monitor reaped */
    int64_t procs_total, procs_max, threads_max, procs_reaped;
    int64_t unread_samples, unread_max; /* samples with members that could not be read, and the most in one */
    int32_t sigchld_pid; /* a member that ignored SIGCHLD (its children are reaped unaccounted), 0 if none */
    char sigchld_comm[64];
    int32_t autoreap_pid; /* a member whose children vanished without their CPU reaching its cutime
                           * (SA_NOCLDWAIT or SIGCHLD ignored), 0 if none */
    char autoreap_comm[64];
    double autoreap_cpu_s; /* what sampling saw of such children, added to the totals */
    js_top_t top_cpu[JS_TOP_CPU_MAX], top_rss[JS_TOP_N];
    int ntop_cpu, ntop_rss;
    double others_cpu_s;       /* CPU of the commands not in top_cpu (sampled, as top_cpu); NAN: none seen */
    int64_t others_commands;   /* how many commands that is */
    double unattributed_cpu_s; /* exact total minus what the processes sampling saw used (short-lived ones) */
    double unattributed_floor_s; /* what clock-tick truncation alone can leave unattributed (1 tick each of
                                  * utime and stime per process seen): a figure below it says nothing */
    int64_t taken, missed;
    double interval_s, wall_s;
    double mon_cpu_s, mon_max_rss, mon_mean_cost_s;
    int64_t write_errors;
    bool exact_cpu, exact_peak_rss;
    const char *inexact_cpu_reason; /* static text: why exact_cpu is false (NULL when it is true) */
    /* where the scope has a cgroup of its own (made for the run, or the watched one): its kernel accounting
     * is the exact total; the process tree's figures stay beside it */
    bool cpu_from_cgroup;
    const char *cpu_file;    /* the cgroup file behind total_s ("cpuacct.usage", "cpu.stat") */
    double tree_total_s;     /* the process tree's CPU total (equal to total_s without a cgroup) */
    double peak_kernel_tree; /* the cgroup's memory high-water mark (all its processes together), NAN */
    const char *peak_kernel_tree_method;
    const char *cores_bound; /* which bound gave cores_available */
    js_scope_kind_t scope;   /* what was watched: the node's figures are the host's own accounting */
} js_summary_t;

typedef struct js_model js_model_t;

/* model_new: a model for one run. Returns NULL on ENOMEM. */
js_model_t *model_new(const js_model_cfg_t *cfg);

/* model_free: accepts NULL. */
void model_free(js_model_t *m);

/* model_feed: consume sample `seq`. Returns 0 or -ENOMEM. The derived points stay valid until the next feed.
 */
int model_feed(js_model_t *m, int64_t seq, const js_sample_t *s);

/* model_point: the tree point of the last fed sample (NULL before the first). */
const js_tree_point_t *model_point(const js_model_t *m);

/* model_procs: per-process points of the last fed sample, *ret_n of them (same order as its proc rows). */
const js_proc_point_t *model_procs(const js_model_t *m, size_t *ret_n);

/* model_memory_now: the memory headline's figure at the last fed sample (what phases' peaks and the `tree`
 * view's memory_bytes are made of): memory.current of the scope's own cgroup where it has one (made for the
 * run, or the watched cgroup or user slice; the cgroup part must have been fed this sample), the node's
 * memory in use for the node scope, else the PSS sum (js_tree_point_t.pss). NAN when unknown. */
double model_memory_now(const js_model_t *m);

/* model_summary: the summary of everything fed so far. */
void model_summary(const js_model_t *m, js_summary_t *ret);

/* model_cfg: the configuration the model was made with. */
const js_model_cfg_t *model_cfg(const js_model_t *m);

/* model_view_table: the descriptor of view number i (the tree model's `tree` and `process` views first,
 * then each part's, in js_model_parts order), or NULL past the last. Views whose columns depend on the data
 * are listed only once a sample has been fed. */
const js_table_t *model_view_table(const js_model_t *m, size_t i);

/* model_view: the view named `name` for the last fed sample, built on demand into *ret (owned by the model,
 * valid until the next feed; the fed sample must still be alive). Returns 0, -ENOENT (no such view),
 * -ENODATA (nothing fed yet) or -ENOMEM. */
int model_view(js_model_t *m, const char *name, js_view_t *ret);

/* model_part_state: the state of model part `part` (one of js_model_parts) in this model, for the part's own
 * accessors (part_cgroup_totals, tests); NULL when the part is not listed or its init failed. Borrowed. */
void *model_part_state(const js_model_t *m, const js_model_part_t *part);

/* ---- stored aggregates (docs/FORMAT.md, schema 2) -------------------------------------------------------
 * The recording keeps what this model derives from the process rows, so that a reader need not read those
 * rows again: the tree point of every sample (`tree_totals`, written with each sample) and the tree model's
 * closing summary (`summary_state`, written with the closing sample: its numbers, the peak process's name,
 * the top lists). Both hold the model's own figures (raw counters' totals, not rendered text); the parts are
 * fed again from their own tables. A recording without them (schema 1, or one whose closing sample was never
 * written) is read in full. (model_stored.c) */

extern const js_table_t table_tree_totals;   /* one row per sample: js_tree_point_t */
extern const js_table_t table_summary_state; /* key, num, text: the closing js_summary_t of the tree model */

/* model_totals_row: the last fed sample's tree point as one row of table_tree_totals (appended to `out`).
 * Returns 0, -ENODATA (nothing fed) or -ENOMEM. */
int model_totals_row(const js_model_t *m, js_rows_t *out);

/* model_state_rows: the tree model's summary so far as rows of table_summary_state (appended to `out`).
 * Returns 0 or -ENOMEM. */
int model_state_rows(const js_model_t *m, js_rows_t *out);

/* model_use_stored: make `m` (a model fed nothing yet) take its tree points from each sample's tree_totals
 * row and its tree summary from `state` (the recording's summary_state rows, copied) instead of from process
 * rows; the parts are fed as usual. Returns 0, -EINVAL (the rows are not a summary of this build's model:
 * read in full instead) or -ENOMEM. */
int model_use_stored(js_model_t *m, const js_rows_t *state);

/* model_parts_summary: every running part's rows of the summary table, below `root` (part.h; errors are kept
 * in the table). */
void model_parts_summary(const js_model_t *m, js_figure_t *root);

/* rate_carry_t: turns (CPU delta, dt) pairs into rates that stay physical. The kernel shows a live process's
 * CPU time in whole clock ticks and the exact figure only when it is reaped, so CPU used earlier can become
 * visible at once (up to a tick per exiting process), and a closing sample may follow the previous one by a
 * few ms. A rate is therefore capped at the cores the tree may use, and what is above the cap carries into
 * the following intervals; totals are unaffected. An interval shorter than half the nominal one (a closing
 * sample a few ms after the previous one) reports the mean over itself and the row before, and that mean is a
 * candidate for the maximum like any full interval: a row never shows more than the summary's max_cores.
 * Exposed for tests. */
typedef struct {
    double cap, carry, max_rate;
    int64_t min_ns;   /* half the nominal interval: a shorter row is merged with the one before */
    int64_t prev_ns;  /* the last row's window */
    double prev_rate; /* and its rate */
} rate_carry_t;

/* rate_carry_init: `cap` <= 0 means no cap; `nominal_ns` the sampling interval. */
void rate_carry_init(rate_carry_t *c, double cap, int64_t nominal_ns);

/* rate_carry_step: the rate (cores) over `dt_ns` for `d` CPU seconds, with the carry; NAN if dt_ns <= 0. */
double rate_carry_step(rate_carry_t *c, double d, int64_t dt_ns);

#endif
