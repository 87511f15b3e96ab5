/* SPDX-License-Identifier: MIT
 *
 * Private to the process-tree source (proc_tree.c, proc_tree_bpf.c, proc_tree_stepd.c): its state, the
 * per-process cache entry, and the helpers the three files share. Nothing outside src/sources/proc_tree*.c
 * includes it.
 */
#ifndef JOBSCOPE_PROC_TREE_INT_H
#define JOBSCOPE_PROC_TREE_INT_H

#include "sources/proc_tree.h"

#include "core/pidmap.h"
#include "core/source.h"
#include "core/util.h"
#include "sources/bpf/tasks_bpf.h"
#include "sys/cgroupfs.h"
#include "sys/parse.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int32_t pid;
    uint64_t start;
    int fd_stat, fd_statm, fd_io, fd_children, fd_fddir; /* fd_fddir: O_PATH to /proc/<pid>/fd */
    uint64_t seen;                                       /* sample stamp */
    bool io_denied;
    bool kept;           /* its descriptors are kept open across samples (within the descriptor budget) */
    uint64_t rss_at_uss; /* bytes: RSS when smaps_rollup was last read (0: never) */
    uint64_t rss_prev;   /* bytes: RSS at the last sample (ptree_smaps_moved) */
    uint64_t own_ticks;  /* node scope: utime+stime at the last sample, for the top-N choice */
    uint64_t own_stamp;  /* the sample own_ticks is from */
    bool info_done;    /* its proc_info row was written (the node scope writes rows for some samples only) */
    uint64_t image;    /* js_pid_stat_t.image when its proc_info row was written: another one is an exec */
    uint8_t bad_reads; /* samples in a row whose stat did not parse */
    char comm[64];
} pent_t;

/* user scope: what is known of a process's user, by PID (every process of the node, members or not) */
typedef struct {
    uint32_t ruid, euid; /* real UID (status), and the owner of /proc/PID (its effective UID) when read */
    uint64_t seen;       /* sample stamp */
} uent_t;

/* node scope: a candidate for the top lists */
typedef struct {
    int32_t pid;
    uint64_t cpu; /* ticks over the interval (first sight: since it started) */
    int64_t rss;  /* pages (stat field 24) */
    bool fresh, pick;
    size_t idx; /* BPF backend: the record's index in tree_state_t.recs */
    js_pid_stat_t ps;
} cand_t;

/* stepd roots: what is known of a process of the node, by PID (every process, slurmstepd or not) */
typedef struct {
    uint64_t seen; /* sample stamp */
    int8_t ours;   /* 1: a slurmstepd of the job, a root; -1: any other process */
    int8_t node;   /* its tasks run on this node: 1 yes, -1 no, 0 not known yet (no task to ask) */
    uint8_t young; /* samples left during which it is looked at again: a process first seen may still exec
                    * (slurmd forks, then the child execs slurmstepd, under the same PID) */
    uint8_t asked; /* samples its task could not say (not exec'd yet: still root's, with slurmstepd's empty
                    * environment) */
    char step[24];
} sent_t;

#define STEPD_ASK_MAX 8 /* samples a slurmstepd's node may stay unknown before it is taken as this one's */
#define STEPD_RECLASSIFY 16
#define STEPD_YOUNG                                                                                          \
    3 /* a process is classified again at its first samples (it may exec slurmstepd) */ /* every N samples   \
                                                                                           every process is  \
                                                                                           looked at again   \
                                                                                           (a PID reused by  \
                                                                                           a slurmstepd) */

typedef struct {
    js_pidmap_t procs; /* pid -> pent_t */
    int32_t *order;    /* members of the last sample, parents first */
    size_t norder, order_cap;
    int32_t *queue;
    size_t nqueue, queue_cap;
    js_buf_t buf, buf2, cmd, redacted;
    long page;
    bool fd_by_stat; /* st_size of /proc/<pid>/fd is the fd count (Linux >= 6.2) */
    bool scan;       /* no task/<tid>/children: discover by scanning /proc */
    /* scan mode: (ppid, pid) pairs sorted by ppid */
    int32_t (*pairs)[2];
    size_t npairs, pairs_cap;
    uint64_t stamp;
    int64_t now_ns;          /* CLOCK_MONOTONIC at this sample's start (the node count cadence) */
    int64_t counted_ns;      /* node scope without --top: when the node's processes were last counted */
    int64_t count_period_ns; /* ... and how long until the next count (ptree_node_count_period) */
    bool counted;            /* user and node scope: nprocs counted this sample */
    size_t nzombies;         /* members of the current sample that have exited but are not reaped yet */
    /* run mode: the monitor's own children file and io files, kept open (it is one thread) */
    int fd_mon_children, fd_mon_io, fd_mon_thread_io;
    /* descriptor budget: processes whose files are kept open, and at most how many (from RLIMIT_NOFILE) */
    size_t nkept, keep_max;
    bool keep_capped; /* the limit was hit once: keep_max stays where it was then */
    size_t unread;    /* members of this sample that could not be read (no descriptor left, ...) */
    js_pidmap_t uids; /* user scope: pid -> uent_t */
    cand_t *cand;     /* node scope: this sample's processes */
    size_t ncand, cand_cap;
    size_t nprocs;       /* user and node scope: processes on the node this sample */
    js_cg_pids_t cgpids; /* cgroup scope: this sample's processes of the cgroup */
    int32_t *stale;      /* scratch: cache entries to forget */
    size_t nstale, stale_cap;
    size_t nseen; /* entries of `procs` whose `seen` is this sample's (ptree_mark_seen, ptree_ent_remove) */
    /* the BPF backend (docs/ARCHITECTURE.md, "Backends") */
    tasks_bpf_t *bpf;
    bool bpf_refused;  /* it could not be opened (or failed): /proc from then on */
    char bpf_why[256]; /* why, for the inventory */
    /* auto: /proc's CPU above what the BPF reader would have cost, summed over the samples so far; the reader
     * is loaded once that passes the load's cost (bpf_pays) */
    double bpf_saved_ns, bpf_last_saving_ns;
    uint64_t bpf_loaded_at; /* the sample it was loaded at */
    double bpf_load_cpu_ns; /* what the load cost (thread CPU) */
    size_t fds_closed;      /* procfs descriptors closed when the reader took over */
    const char *backend;    /* this sample's: "procfs", "bpf-tasks", "bpf-cgroup" */
    uint8_t *how;           /* tasks_bpf_set_pids' kinds, beside `queue` */
    size_t how_cap;
    tasks_bpf_record_t *recs; /* node scope: this pass's records */
    size_t nrecs, recs_cap;
    bool live; /* the procfs root is the running kernel's (the BPF reader reads that kernel) */
    /* stepd roots (ctx->scope.stepd_job or stepd_pid) */
    js_pidmap_t stepds; /* pid -> sent_t */
    int32_t *roots;     /* this sample's live roots */
    int32_t *tasks;     /* their children this sample (the monitor is woken when one exits) */
    size_t ntasks, tasks_cap;
    size_t nroots, roots_cap;
    bool stepd_seen;      /* a root was seen once */
    bool stepd_pid_alive; /* the explicit slurmstepd (stepd_pid) exists this sample */
    /* smaps_rollup of every member at once (read_smaps_all) */
    bool smaps_event;    /* this sample: a member is new, exec'd, or its RSS moved since its last read */
    uint64_t smaps_hash; /* membership (pid, start) at the last full read, and its size */
    size_t smaps_n;
    bool smaps_once;       /* a full read was made */
    int64_t smaps_last_ns; /* CLOCK_MONOTONIC of the last full read (--uss-every with a unit) */
    int64_t smaps_next_ns; /* CLOCK_MONOTONIC before which an event does not trigger another one (budget) */
} tree_state_t;

static inline bool stepd_mode(const js_ctx_t *ctx)
{
    return ctx->scope.kind == JS_SCOPE_TREE && (ctx->scope.stepd_job || ctx->scope.stepd_pid > 0);
}

/* auto: what the BPF reader costs, for weighing it against /proc (docs/BENCHMARKS.md: one load 40-60 ms of
 * CPU, a pass 0.3 us per process it reports plus 0.07 us per other process on the node in tasks mode, and the
 * row) */
#define BPF_LOAD_NS 60e6
#define BPF_PASS_NS 5e3
#define BPF_PER_PROC_NS 500.0
#define BPF_PER_VISIT_NS 75.0

/* node scope without --top: the node's processes are counted (a walk of /proc, about 0.5-1 us of CPU per
 * process: most of watch --node's cost at 1 s) at the first sample, at the closing one, and in between every
 * NODE_COUNT_NS or, where the walk costs more, every NODE_COUNT_COST times the CPU the last walk took: the
 * count then costs at most 1/NODE_COUNT_COST of a core (0.005%, a tenth of watch --node's goal) */
#define NODE_COUNT_NS 10000000000LL
#define NODE_COUNT_COST 20000

/* ptree_node_count_period: the time from one count of the node's processes to the next (without --top) when
 * the last walk of /proc took `walk_cpu_ns` of CPU (<= 0: unknown): max(NODE_COUNT_NS, NODE_COUNT_COST times
 * it), at most an hour. */
int64_t ptree_node_count_period(int64_t walk_cpu_ns);

#define KEPT_PER_PROC 5       /* stat, statm, io, children, fd directory */
#define FD_RESERVE 256        /* descriptors left for everything else: the recording, other sources, reads */
#define SMAPS_MOVED_DIV 10    /* a member's RSS moved by more than 1/10 of its value at the last read */
#define SMAPS_SETTLED_DIV 100 /* ... or it settled (moved by at most 1/100 since the last sample) */
#define SMAPS_PLATEAU_DIV 50  /* ... more than 1/50 away from its value at the last read */
#define SMAPS_MOVED_MIN                                                                                      \
    (1u << 20) /* ... and by more than 1 MiB: smaps_rollup is read again for every member */
/* event-driven full reads use at most 1/SMAPS_BUDGET of one CPU (the next one no sooner than its cost times
 * that): a tenth where the PSS sum is the scope's memory headline, a hundredth where the scope has a cgroup
 * of its own (whose high-water mark is the headline) */
#define SMAPS_BUDGET_PSS 10
#define SMAPS_BUDGET_CGROUP 100

/* ---- shared helpers (proc_tree.c) -------------------------------------------------------------------- */

/* ptree_ent_close: close entry `e`'s kept descriptors (each set to -1). */
void ptree_ent_close(pent_t *e);
/* ptree_ent_insert: a new entry for `pid` (not present), descriptors closed; NULL when out of memory.
 * Pointers to entries are invalidated. */
pent_t *ptree_ent_insert(tree_state_t *st, int32_t pid);
/* ptree_ent_remove: close `e`'s descriptors and delete it. Pointers to entries are invalidated. */
void ptree_ent_remove(tree_state_t *st, pent_t *e);
/* ptree_mark_seen: `e` is known this sample (its `seen` stamp set, st->nseen kept; use it for every change of
 * `seen`, so that the sample's end can skip the walk for departures when every entry was seen). */
void ptree_mark_seen(tree_state_t *st, pent_t *e);
/* ptree_push_pid: append `pid` to the growing array *arr (*n used, *cap allocated). Returns 0 or -ENOMEM. */
int ptree_push_pid(int32_t **arr, size_t *n, size_t *cap, int32_t pid);
/* ptree_forget_unseen: delete from `m` every entry whose sample stamp (the uint64_t at `seen_off`) is not
 * this sample's. Returns 0 or -ENOMEM (nothing deleted then). */
int ptree_forget_unseen(tree_state_t *st, js_pidmap_t *m, size_t seen_off);
/* ptree_enqueue_list: push every PID listed (space separated) in `text` on st->queue. Returns 0 or -ENOMEM.
 */
int ptree_enqueue_list(tree_state_t *st, const char *text);
/* ptree_scan_children: scan mode: push the children of `ppid` (from st->pairs) on st->queue. 0 or -ENOMEM. */
int ptree_scan_children(tree_state_t *st, int32_t ppid);
/* ptree_smaps_moved: whether member `e` asks for smaps_rollup of every member this sample (read_smaps_all);
 * remembers `rss` (bytes) for the next sample. */
bool ptree_smaps_moved(pent_t *e, bool fresh, bool exec, uint64_t rss);
/* ptree_emit_info: the proc_info row of `e` (new or exec'd) from `ps` and, when not NULL, `pst` (its UID). */
void ptree_emit_info(tree_state_t *st, const js_ctx_t *ctx, pent_t *e, js_rows_t *info,
                     const js_pid_stat_t *ps, const js_pid_status_t *pst);
/* ptree_thread_cpu_ns: the calling thread's CPU time, in ns. */
int64_t ptree_thread_cpu_ns(void);
/* ptree_pick_top: the node scope's rows: the top N candidates (st->cand) by CPU and by RSS, from their stat
 * (procfs) or their record in st->recs (bpf). Returns 0 or -ENOMEM. */
int ptree_pick_top(tree_state_t *st, js_ctx_t *ctx, js_rows_t *proc, js_rows_t *info, bool bpf);

/* ---- the BPF backend (proc_tree_bpf.c) --------------------------------------------------------------- */

/* ptree_bpf_wanted: whether to read this sample through the BPF reader, loading it now if it is wanted. */
bool ptree_bpf_wanted(tree_state_t *st, js_ctx_t *ctx, bool live);
/* ptree_bpf_account: auto mode, after a /proc sample that cost `spent_ns` of CPU: what BPF would have saved.
 */
void ptree_bpf_account(tree_state_t *st, const js_ctx_t *ctx, double spent_ns);
/* ptree_bpf_drop: the reader failed mid-run (error `r`): /proc from now on, with the reason. */
void ptree_bpf_drop(tree_state_t *st, js_ctx_t *ctx, int r);
/* ptree_bpf_row: the proc row (and proc_info when new or exec'd) of one record. Returns 0 or -ENOMEM. */
int ptree_bpf_row(tree_state_t *st, js_ctx_t *ctx, const tasks_bpf_record_t *rec, js_rows_t *proc,
                  js_rows_t *info);
/* ptree_collect_bpf: one sample through the BPF reader. Returns 0, -ENOMEM, or another negative errno when
 * the reader failed (the caller then drops it and reads /proc; nothing of this sample is kept). */
int ptree_collect_bpf(tree_state_t *st, js_ctx_t *ctx, js_rows_t *proc, js_rows_t *info, bool *root_alive);

/* ---- slurmstepd roots (proc_tree_stepd.c) ------------------------------------------------------------ */

/* ptree_stepd_refresh: this sample's slurmstepd roots (st->roots) and their rows in `srows`. 0 or -errno. */
int ptree_stepd_refresh(tree_state_t *st, const js_ctx_t *ctx, js_rows_t *srows);
/* ptree_stepd_settle: after the walk, the roots' reaped CPU again (see proc_tree_stepd.c). */
void ptree_stepd_settle(tree_state_t *st, const js_ctx_t *ctx, js_rows_t *srows, js_rows_t *proc);
/* ptree_stepd_children: every child of every thread of root `pid` on st->queue. Returns 0 or -ENOMEM. */
int ptree_stepd_children(tree_state_t *st, const js_ctx_t *ctx, int32_t pid);

#endif
