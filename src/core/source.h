/* SPDX-License-Identifier: MIT
 *
 * The source interface. A source is one file in src/sources/ ending in one `const js_source_t` descriptor,
 * listed by hand in src/sources/registry.c. It declares the tables it fills; the sampler calls collect() once
 * per sample with that sample's row buffers. Sources read only through ctx->root (never literal kernel
 * paths), store raw values as read (counters, not rates) and leave unreadable values missing. "Absent
 * hardware" or "permission denied" is a normal state: collect() then fills what it can and returns 0; a
 * negative errno return means the whole source failed this sample (recorded in source_stats, never fatal).
 */
#ifndef JOBSCOPE_SOURCE_H
#define JOBSCOPE_SOURCE_H

#include "core/table.h"
#include "sys/fsroot.h"

#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

typedef enum {
    JS_MODE_RUN,    /* jobscope started the command and is its subreaper */
    JS_MODE_ATTACH, /* jobscope watches an existing process tree */
    JS_MODE_WATCH,  /* jobscope watches a user, a cgroup or the node (js_scope_t says which) */
    JS_MODE_MAX
} js_mode_t;

/* What is watched. run and attach watch a tree; watch and job resolve one of the others. */
typedef enum {
    JS_SCOPE_TREE,   /* the command (or the PID given) and every descendant */
    JS_SCOPE_USER,   /* every process whose real UID is scope.uid, including ones started later */
    JS_SCOPE_CGROUP, /* every process in scope.cgroup */
    JS_SCOPE_NODE,   /* the whole machine */
    JS_SCOPE_MAX
} js_scope_kind_t;

typedef struct js_cgroup js_cgroup_t; /* a resolved cgroup (sys/cgroupfs.h) */

/* How per-process counters are read (--backend). */
typedef enum {
    JS_BACKEND_AUTO, /* the BPF task reader where it pays and is allowed, else /proc */
    JS_BACKEND_BPF,  /* the BPF task reader from the start (falls back to /proc, with the reason, if refused)
                      */
    JS_BACKEND_PROCFS, /* /proc only */
    JS_BACKEND_MAX
} js_backend_t;

typedef struct {
    js_scope_kind_t kind;
    uid_t uid; /* JS_SCOPE_USER */
    const js_cgroup_t
        *cgroup;      /* the scope's cgroup where one exists (watched, or made for a run), else NULL */
    unsigned top_n;   /* JS_SCOPE_NODE: per-process rows for the N busiest and N largest (0: none) */
    const char *gpus; /* --gpus: NULL (default: what the job may use), "all", "none", indices, UUIDs */
    /* JS_SCOPE_TREE of a batch job without a cgroup (jobscope job): the roots are SLURM's slurmstepd
     * processes, never members themselves; their children (the tasks) and every descendant are. Either one
     * slurmstepd by PID (stepd_pid > 0), or every `slurmstepd: [JOB.STEP]` of job `stepd_job` (stepd_step
     * NULL: every step but stepd_skip, the monitor's own), found again each sample. */
    const char *stepd_job;
    const char *stepd_step;
    const char *stepd_skip;
    const char
        *stepd_node; /* this node's name: several slurmd on one host (a test cluster) share the PID
                      * space, so a slurmstepd is this node's only if its tasks say SLURMD_NODENAME so */
    pid_t stepd_pid;
    /* JS_SCOPE_CGROUP: the cgroup holds nothing but the job since the job began (a SLURM job's), so its
     * counters count from zero, not from the first sample */
    bool cgroup_whole;
} js_scope_t;

/* The embedded monitor's levels (include/jobscope.h, JS_LEVEL_*): scopes read beside the monitored one by the
 * `levels` source, each with its own instance of proc_tree (and of cgroup, for a job with a cgroup) writing
 * into tables of its own (level_user_*, level_job_*), and modelled by part_levels as a scope of its own. */
typedef enum {
    JS_LV_USER, /* scope USER: every process of scope.uid */
    JS_LV_JOB,  /* scope CGROUP (the job's, cgroup_whole) or TREE with stepd_job (the job's slurmstepd tasks)
                 */
    JS_LV_MAX
} js_level_ix_t;

typedef struct {
    bool on;
    js_scope_t scope;    /* borrowed strings and cgroup: they outlive the monitor */
    const char *what;    /* how the scope was resolved, for the inventory ("uid 1000", "cgroup /slurm/...") */
    bool monitor_inside; /* the monitored process (the embedded monitor's host) is one of the level's */
} js_level_scope_t;

/* One child reaped by the monitor (wait4), handed to the proc_tree source for the `exits` table. */
typedef struct {
    pid_t pid;
    int status;        /* as from wait4 */
    int64_t t_unix_ns; /* when reaped */
    struct rusage ru;  /* that child's and its reaped descendants' usage */
} js_reaped_t;

#define JS_WATCH_PIDS_MAX 64

/* What the sources may read about the monitored scope and the options. Owned by the monitor. */
typedef struct {
    js_fsroot_t root;
    js_mode_t mode;
    js_scope_t scope;
    pid_t monitor_pid; /* this process: children's ppid in run mode (subreaper) */
    pid_t root_pid;    /* the command (run) or the PID given (attach) */
    /* run mode with a cgroup made for the command: the hierarchies (bits 1u << index into scope.cgroup's) the
     * command joined before exec (monitor_spawn), and 0 or the first -errno of joining; read by prepare_child
     */
    unsigned cg_joined;
    int cg_join_rc;
    uint64_t seq;            /* sample number, from 0 */
    unsigned uss_every;      /* read smaps_rollup every N samples (0 = never) */
    int64_t uss_interval_ns; /* > 0: instead, every this long per process (the default: 30 s) */
    unsigned status_every;   /* read /proc/<pid>/status every N samples (>= 1) */
    js_backend_t backend;    /* how proc_tree reads processes */
    bool final;              /* this is the last sample: read everything */
    bool for_marks;     /* this sample is taken for phase marks (begin/end) that just arrived: the scope at
                         * those marks (read smaps_rollup of every member when the budget allows) */
    bool interruptible; /* a long collect() may give up with -EINTR when sampler_stop_pending() */
    /* reaped children since the last sample (filled by the monitor, drained by proc_tree) */
    js_reaped_t *reaped;
    size_t nreaped;
    /* the recording's cost, for the self source: duration of the previous sample's write, failures so far */
    int64_t prev_write_ns; /* the recording's write of the previous sample */
    int64_t prev_sinks_ns; /* every live sink's handling of the previous sample, the recording included */
    uint64_t write_errors;
    /* set by proc_tree after each collect: members in the scope that have not exited (zombies excluded) */
    size_t live_members;
    bool scope_gone; /* set by a source when the watched scope no longer exists (its cgroup was removed) */
    /* processes whose exit should wake the monitor for an off-schedule sample (set by a source each sample:
     * the tasks of slurmstepd roots, so their CPU is read while their slurmstepd still lives); at most
     * JS_WATCH_PIDS_MAX are watched */
    const int32_t *watch_pids;
    size_t nwatch_pids;
    /* embedded (js_monitor_start): the monitor is one thread of root_pid; monitor_pid is then 0 (nothing is
     * skipped in the tree) and the monitor's own cost is its thread's (the self source) */
    bool embedded;
    /* embedded: the number of descriptors the embedding holds in the host's table of `total` (its recording,
     * kept /proc files, timers, sockets ...), or -1 when they cannot be told from the host's; NULL otherwise
     */
    int (*host_fds)(int64_t total);
    /* embedded: host_fds() as proc_tree called it right after counting the root's descriptors (`total`), at
     * the same instant, for the self source to record; -1 before */
    int host_fds_now;
    /* embedded: the monitor thread's own CPU (RUSAGE_THREAD) and I/O (its task io: rchar, wchar, syscr,
     * syscw, read_bytes, write_bytes; bit i of mon_io_present per value) as proc_tree read them right after
     * the root's stat and io, so that what the model takes off the root's figures is what those reads
     * included (the monitor works on between its reads); the self source records these, and clears
     * mon_at_root */
    bool mon_at_root;
    struct rusage mon_ru;
    int64_t mon_io[6];
    unsigned mon_io_present;
    /* the job's marks so far (core/marks.h), for the self source: received, rejected, and the drops its
     * processes reported */
    uint64_t marks_received, marks_rejected, marks_senders_dropped;
    /* --redact-cmdline: every match in a recorded command-line argument becomes "***" (NULL: none) */
    const regex_t *redact_cmdline;
    /* the sampling plan, for a source weighing a one-time cost against what it saves per sample (set by the
     * monitor before each sample): the interval, and when --duration ends the run (0: not known) */
    int64_t interval_ns;
    int64_t end_mono_ns;
    /* set by a source in collect() when a fact of its inventory changed (proc_tree: a backend loaded, refused
     * or dropped; its closing figures): the sampler writes that source's inventory rows again with this
     * sample, and a reader takes the last row of each key */
    bool inventory_changed;
    /* --perf-per-task (attach, watch --user): perf counters on every task, a row per task (else the job is
     * counted: its cgroup per CPU, or the root with inheritance) */
    bool perf_per_task;
    /* the embedded monitor's levels (js_level_scope_t); none on elsewhere */
    js_level_scope_t levels[JS_LV_MAX];
} js_ctx_t;

#define JS_WHY_MAX 512 /* the longest reason a source's init gives (the buffer the sampler hands it) */

typedef struct js_source {
    const char *name;
    const char *help;
    const js_table_t *const *tables; /* NULL-terminated, in the order collect() receives their rows */
    bool gpu;                        /* the source monitors GPUs (--gpus selects among them) */
    /* init: allocate per-run state in *ret_state (may stay NULL). Returns 0 or -errno: then the source is
     * disabled for the run and the reason is recorded: the one-line reason written into `why` (`whylen`
     * bytes; "NVML not loaded: ...", "--gpus none"), else strerror of the errno. `why` may be NULL (whylen 0:
     * the caller wants no reason; why_set in core/util.h writes nothing then). */
    int (*init)(const js_ctx_t *ctx, void **ret_state, char *why, size_t whylen);
    /* collect: append this sample's rows; rows[i] belongs to tables[i]. Returns 0 or -errno. NULL for a
     * source that only has an inventory (no tables, nothing per sample, no source_stats rows). */
    int (*collect)(void *state, js_ctx_t *ctx, js_rows_t *const *rows);
    /* fini: free the state; accepts NULL. */
    void (*fini)(void *state);
    /* prepare_child: run mode only, may be NULL. The command has been forked and is held before exec, so
     * nothing it runs escapes what is set up here (counters inherited by every descendant; the cgroup made
     * for it the command joined itself: ctx->cg_joined).
     * Returns 0 or -errno: the source then records why and goes on without it; the command still starts. */
    int (*prepare_child)(void *state, js_ctx_t *ctx, pid_t child);
    /* inventory: may be NULL. Append what the source knows about the hardware and the allocation (rows of the
     * core `inventory` table: source, key, value; inventory_add()): at the first sample, and again at a
     * sample whose collect() set ctx->inventory_changed. Returns 0/-errno. */
    int (*inventory)(void *state, const js_ctx_t *ctx, js_rows_t *inv);
} js_source_t;

/* sampler_stop_pending: whether a signal that stops or is forwarded (SIGINT, SIGTERM, SIGHUP, SIGQUIT) is
 * pending; a long collect() (a huge tree) checks it when ctx->interruptible and gives up with -EINTR so the
 * signal is handled at once (src/core/source.c). */
bool sampler_stop_pending(void);

/* Core tables written by the sampler itself (not by a source), and their column indices. */
enum {
    SAMPLES_T_MONO,
    SAMPLES_T_UNIX,
    SAMPLES_DEADLINE,
    SAMPLES_MISSED,
    SAMPLES_FINAL,
    SAMPLES_FOR_MARKS,
    SAMPLES__MAX
};
enum { STATS_SOURCE, STATS_DURATION, STATS_RC, STATS__MAX };
enum { INV_SOURCE, INV_KEY, INV_VALUE, INV_NUMBER, INV__MAX };
extern const js_table_t table_samples;
extern const js_table_t table_source_stats;
extern const js_table_t table_inventory;           /* written with the first sample only */
extern const js_table_t table_level_job_inventory; /* its twin for the embedded monitor's job level */

/* inventory_add: append the inventory row (source, key, value). Returns 0 or -ENOMEM. */
int inventory_add(js_rows_t *inv, const char *source, const char *key, const char *value);

/* inventory_addf: as inventory_add with a printf-formatted value. A format that is exactly one decimal
 * conversion ("%d", "%llu", "%zu", "%.6g", ...) makes a number: the row's `number` column is 1, and `jobscope
 * info --json` writes it as a JSON number. Identifiers that look like numbers (a CPU family, a device ID) are
 * added as text with inventory_add. */
int inventory_addf(js_rows_t *inv, const char *source, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
