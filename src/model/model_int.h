/* SPDX-License-Identifier: MIT
 *
 * The tree model's inside, shared by its files and by nothing else: the source tables it reads and their
 * columns bound by name, the per-process state, the model's struct, and the functions that cross its files.
 * model.c feeds a sample (the tree's sums, totals and rates) and makes the summary; model_proc.c keeps the
 * state of each process (its CPU, I/O, memory; who reaped whom); model_view.c builds the `tree` and `process`
 * views and finds the parts' views.
 */
#ifndef JOBSCOPE_MODEL_INT_H
#define JOBSCOPE_MODEL_INT_H

#include "model/model.h"

#include "core/pidmap.h"
#include "core/util.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- the source tables the tree model reads, bound by name ----------------------------------------------
 */

/* The tables, and the columns of each that the model reads. Each enum follows its name list; the indices are
 * looked up by name once per table layout (model_bind), so the model includes no source header and a
 * renamed column is a missing table here (and a failing unit test), never a wrong value. */
enum { TB_PROC, TB_INFO, TB_TREE, TB_EXITS, TB_STEPD, TB_SELF, TB__MAX };

enum {
    CP_PID,
    CP_START_TICKS,
    CP_PPID,
    CP_STATE,
    CP_UTIME,
    CP_STIME,
    CP_CUTIME,
    CP_CSTIME,
    CP_THREADS,
    CP_MINFLT,
    CP_MAJFLT,
    CP_CMINFLT,
    CP_CMAJFLT,
    CP_RSS,
    CP_SHARED,
    CP_RSS_ANON,
    CP_RSS_FILE,
    CP_RSS_SHMEM,
    CP_SWAP,
    CP_HWM,
    CP_VCSW,
    CP_IVCSW,
    CP_RCHAR,
    CP_WCHAR,
    CP_SYSCR,
    CP_SYSCW,
    CP_READ_BYTES,
    CP_WRITE_BYTES,
    CP_FDS,
    CP_USS,
    CP_PSS,
    CP_SIGIGNORE,
    CP_CPU_NS,
    CP__MAX
};

enum { CI_PID, CI_START_TICKS, CI_COMM, CI__MAX };

enum {
    CT_ROOT_ALIVE,
    CT_UNREAD,
    CT_NODE_PROCS,
    CT_REAPED_UTIME,
    CT_REAPED_STIME,
    CT_REAPED_MAXRSS,
    CT_REAPED_MINFLT,
    CT_REAPED_MAJFLT,
    CT_REAPED_NVCSW,
    CT_REAPED_NIVCSW,
    CT_REAPED_RCHAR,
    CT_REAPED_WCHAR,
    CT_REAPED_SYSCR,
    CT_REAPED_SYSCW,
    CT_REAPED_READ_BYTES,
    CT_REAPED_WRITE_BYTES,
    CT_T_BOOT,
    CT__MAX
};

enum { CS_PID, CS_START_TICKS, CS_CUTIME, CS_CSTIME, CS__MAX };

enum {
    CF_UTIME,
    CF_STIME,
    CF_MAXRSS,
    CF_PREV_WRITE,
    CF_WRITE_ERRORS,
    CF_IO_RCHAR,
    CF_IO_WCHAR,
    CF_IO_SYSCR,
    CF_IO_SYSCW,
    CF_IO_READ_BYTES,
    CF_IO_WRITE_BYTES,
    CF_THREADS,
    CF_FDS,
    CF__MAX
};

/* The bound layout: each table (sample_bind) and its columns. */
typedef struct {
    const js_table_t *const *layout; /* the sample's table list they were bound against (NULL: not yet) */
    js_bind_t t[TB__MAX];
    int proc[CP__MAX], info[CI__MAX], tree[CT__MAX], stepd[CS__MAX], self[CF__MAX];
} model_cols_t;

typedef struct {
    uint64_t start;
    uint64_t stamp;
    int32_t ppid;
    double cpu_all, user_all, sys_all; /* own + reaped children, seconds */
    double own, max_own;               /* own utime+stime, seconds */
    double base_own;    /* attach mode: own CPU before monitoring began (present at the start) */
    double comm_base;   /* own CPU when it took its current comm (an exec) */
    double own_prev;    /* own CPU at the row before the last one */
    int64_t dt_prev_ns; /* and that row's interval */
    double io[IO__MAX];
    uint8_t io_ok;    /* bit per IO_* known */
    bool io_missing;  /* its io could not be read at some sample (while not a zombie) */
    bool uss_missing; /* its smaps_rollup could never be read while others' could (not a zombie) */
    double minflt, majflt;
    double uss, pss;     /* last read (smaps_rollup of every member at once, now and then), NAN before */
    double rss_at_smaps; /* its RSS at that read */
    double rss;          /* its RSS at this sample, NAN when unread */
    double vcsw, ivcsw;  /* last read (status cadence), NAN before the first */
    double peak_rss;
    uint32_t comm_ix; /* index + 1 in the per-command table, 0 before its comm is known */
    bool zombie;      /* last seen exited (state Z): its totals were final */
    /* what it reaped (cutime + cstime, seconds) at its last three rows, newest first, and their samples: a
     * child that vanishes while its parent lives must show up there (check_reaped) */
    double reaped[3];
    uint64_t reaped_stamp[3];
    double owed, owed_user; /* CPU of its children that vanished (as last seen), not yet found in `reaped` */
    double owed_base;       /* its reaped CPU before the first of them vanished */
    uint64_t owed_due;      /* the sample at which `reaped` must have grown by `owed` */
    char comm[64];          /* from proc_info, for the process view */
} mproc_t;

/* Per command name: what its processes used (the summary's top lists). */
typedef struct {
    char comm[64];
    double cpu_gone; /* own CPU of its processes that have vanished */
    double peak_rss;
    int64_t procs;
} mcomm_t;

#define COMMS_MAX 4096 /* distinct command names kept; more are counted under "(other)" */

/* A built view: rows for the sample numbered `built` (-1: not built since the last feed). */
typedef struct {
    const js_table_t *table;
    js_rows_t rows;
    int64_t built;
} view_cache_t;

/* A slurmstepd root (the stepd table): what it has reaped, its tasks' CPU, in seconds. */
typedef struct {
    uint64_t start, stamp;
    double user, sys;
} mstepd_t;

struct js_model {
    js_model_cfg_t cfg;
    model_cols_t col; /* the source tables read, bound by name (model_bind) */
    js_pidmap_t procs;
    uint64_t stamp;
    uint64_t seen_stamp; /* the stamp `nseen` counts for */
    size_t nseen;        /* entries of `procs` fed at that stamp (mproc_feed), each once */
    int64_t nfed;
    js_tree_point_t pt, prev;
    js_proc_point_t *pp;
    size_t npp, pp_cap;
    int32_t *gone;
    size_t gone_cap;
    /* totals of members that vanished unreaped by anyone we see (attach mode) */
    double lost_cpu, lost_user, lost_sys, lost_io[IO__MAX], lost_minflt, lost_majflt;
    double sampled_gone;  /* sum of max_own - base_own of vanished processes */
    double ctxsw_gone[2]; /* last-seen context switches of vanished processes */
    /* baseline subtracted from cumulative values (attach mode: the first sample) */
    bool have_base;
    double base_cpu, base_user, base_sys, base_io[IO__MAX], base_minflt, base_majflt;
    rate_carry_t cpu_rate;
    js_summary_t sum;
    int64_t t_first, t_last;
    double collect_ns_sum, write_ns_sum;
    int64_t write_n;
    double reaped_maxrss, reaped_ctxsw[2];
    double mon_user, mon_sys; /* embedded: the monitor thread's CPU (self table), seconds */
    /* embedded: the monitor thread's own I/O (cumulative), its threads and the embedding's descriptors in the
     * host's table, from this sample's self row: taken off the root's (NAN: not recorded, nothing taken) */
    double mon_io[IO__MAX], mon_threads, mon_fds;
    /* slurmstepd roots (cfg.stepd_roots): pid -> mstepd_t; what the gone ones had reaped, in seconds */
    js_pidmap_t stepds;
    double stepd_gone_user, stepd_gone_sys;
    bool lost_any;       /* a member vanished with nobody seen to reap it: its last interval is missing */
    bool io_seen;        /* a member's I/O counters were read at some sample */
    double window_ticks; /* start_ticks clock (CLOCK_BOOTTIME, in ticks) at the first sample; NAN unknown */
    const js_rows_t *last_proc_rows; /* the proc rows being fed (their strings) */
    mcomm_t *comms;
    size_t ncomms, comms_cap;
    /* node scope: the host's busy CPU (ticks) and used memory from the system source's tables */
    struct {
        const js_table_t *cpu, *mem;
        int c_id, c_busy[6], c_user[2], m_total, m_avail;
        bool have_base;
        double base_busy, base_user;
    } node;
    /* the last fed sample (borrowed: the views read it) and the model parts */
    const js_sample_t *last;
    size_t nparts;
    void **part_state;
    bool *part_on;
    view_cache_t *views;
    size_t nviews, views_cap;
    /* replaying stored aggregates (model_use_stored): tree points from tree_totals, this summary */
    bool stored;
    js_summary_t stored_sum;
    char *stored_reason; /* stored_sum.inexact_cpu_reason's text (owned) */
};

/* bound_rows: the rows of bound table `k` (TB_*) in `s`, NULL when it is not bound. */
static inline const js_rows_t *bound_rows(const js_model_t *m, const js_sample_t *s, int k)
{
    return sample_bound(s, &m->col.t[k]);
}

/* bound_first: the first row of bound table `k` in `s`, or NULL. */
static inline const js_value_t *bound_first(const js_model_t *m, const js_sample_t *s, int k)
{
    const js_rows_t *r = bound_rows(m, s, k);
    return r && r->nrows ? rows_row(r, 0) : NULL;
}

/* Sums over the live members of one sample. */
typedef struct {
    size_t n;
    size_t live; /* members not exiting (a zombie, or one whose memory is gone already, maps nothing) */
    double user, sys, io[IO__MAX], minflt, majflt, sampled;
    size_t io_have[IO__MAX];
    double rss, rss_main, rss_desc, shared, threads;
    size_t have_rss, have_shared;
    double opt[6]; /* OPT_* order; HWM is a maximum, the rest sums */
    size_t opt_have[6];
    double uss, pss, ctxsw[2];
    size_t have_uss, have_pss, have_ctxsw;
    size_t pss_read;     /* members whose smaps_rollup was read at this sample */
    size_t uss_left_out; /* members whose smaps_rollup cannot be read (count_uss_unreadable) */
    double max_proc_rss; /* largest single-process RSS */
    int32_t max_proc_pid;
    /* the split part's figures (js_tree_point_t main_*, desc_*) */
    double main_rss, main_uss, main_pss, main_threads, main_own_s, desc_rss, desc_uss, desc_pss, desc_threads;
    bool desc_rss_all, smaps_all;
} live_sums_t;

/* The optional per-process levels summed by mproc_feed (live_sums_t.opt). */
enum { OPT_ANON, OPT_FILE, OPT_SHMEM, OPT_SWAP, OPT_HWM, OPT_FDS };

/* ---- model_proc.c: the state of each process ---- */

/* mproc_feed: one proc row: update the process's state, its per-process rates (*pp) and the live sums.
 * `dt_ns`: since the previous sample (0 for the first). Returns 0 or -ENOMEM. */
int mproc_feed(js_model_t *m, const js_value_t *v, int64_t dt_ns, js_proc_point_t *pp, live_sums_t *ls);

/* mproc_count_uss_unreadable: the live members of this sample whose USS/PSS could never be read while others'
 * could (counted once each in the summary). Returns how many of this sample's are left out of the sums. */
size_t mproc_count_uss_unreadable(js_model_t *m);

/* mproc_embedded_self: the embedded monitor thread's own I/O, threads and descriptors from this sample's self
 * row (NULL: none), which mproc_feed takes off the embedding process's figures. */
void mproc_embedded_self(js_model_t *m, const js_value_t *self);

/* mproc_forget_vanished: account for the members not in this sample and drop their state. 0 or -ENOMEM. */
int mproc_forget_vanished(js_model_t *m);

/* mproc_remember_comms: the command name of each process first seen (or exec'd) in this sample's proc_info
 * rows (may be NULL). */
void mproc_remember_comms(js_model_t *m, const js_rows_t *info);

/* mproc_feed_stepds: this sample's slurmstepd roots (stepd rows, may be NULL). Returns 0 or -ENOMEM. */
int mproc_feed_stepds(js_model_t *m, const js_rows_t *rows);

/* mproc_stepds_reaped: add what the slurmstepd roots reaped to *user and *sys (seconds); forget the roots not
 * seen this sample. Returns 0 or -ENOMEM. */
int mproc_stepds_reaped(js_model_t *m, double *user, double *sys);

/* ---- model.c and model_stored.c: the stored aggregates (model.h, schema 2) ---- */

/* model_tree_summary: the summary of the tree model itself (what the process rows give, or the stored one),
 * before the parts' say. */
void model_tree_summary(const js_model_t *m, js_summary_t *ret);

/* model_totals_load: a stored tree_totals row `v` (NULL: none) into *pt (times and seq already set); missing
 * values are NAN. */
void model_totals_load(js_tree_point_t *pt, const js_value_t *v);

/* mproc_own_used_as: the CPU a process used under its current command name, sampled (seconds). */
double mproc_own_used_as(const mproc_t *e);

#endif
