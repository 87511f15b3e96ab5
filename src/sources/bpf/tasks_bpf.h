/* SPDX-License-Identifier: MIT
 *
 * The BPF task reader: every per-process figure the process-tree source takes from /proc/PID/{stat,statm,
 * status,io,fd}, for a whole set of processes in one system call per pass (a BPF program run with
 * BPF_PROG_RUN writes one record per process into an array mapped into this process), instead of four or five
 * file reads per process. Two modes:
 *
 *   TASKS_BPF_TASKS   the task iterator visits every process on the machine (threads are not visited: they
 *                     are summed at their leader) and reports those selected by a PID filter
 *                     (tasks_bpf_set_pids), or every process. With `follow`, a process whose parent is in the
 *                     filter is added to it by the BPF program and reported in the same pass (flag
 *                     TASKS_BPF_DISCOVERED); the walk goes in creation order, parents before children, so new
 *                     children and grandchildren are found without reading task/children files.
 *   TASKS_BPF_CGROUP  the css and css_task iterators (Linux >= 6.7): only the processes of one cgroup v2
 *                     and its descendants, whatever else runs on the machine.
 *
 * Each field matches what /proc shows for the same process at the same instant (tests/bpf_compare.c checks
 * it): group sums over live and exited threads, utime/stime rescaled to the scheduler's runtime as
 * cputime_adjust() does, RSS by type with every CPU's pending delta (what statm and status show), VmHWM, I/O
 * of threads plus the signal's, the open-descriptor count. Needs CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN),
 * the kernel's BTF, and Linux >= 6.7 (open-coded task iterators). Built only when Meson found clang, bpftool
 * and libbpf (config.h JOBSCOPE_HAVE_BPF); otherwise every entry point reports -EOPNOTSUPP with a reason.
 *
 * Not thread-safe: one tasks_bpf_t per thread. libbpf's log callback is process-wide; tasks_bpf_open() sets
 * it for the duration of the load and restores the previous one.
 */
#ifndef JOBSCOPE_TASKS_BPF_H
#define JOBSCOPE_TASKS_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    TASKS_BPF_TASKS,  /* every process, selected by a PID filter (or all) */
    TASKS_BPF_CGROUP, /* the processes of a cgroup v2 subtree */
    TASKS_BPF_MODE_MAX
} tasks_bpf_mode_t;

typedef struct {
    tasks_bpf_mode_t mode;
    int sys_fd; /* the sysfs root (js_fsroot_t.sys): its kernel/btf/vmlinux must exist; -1: not checked */
    /* TASKS_BPF_CGROUP */
    int cgroup_fd;         /* an open cgroup v2 directory (only read during open); -1 to use cgroup_id */
    uint64_t cgroup_id;    /* the cgroup's ID (inode number of its directory), when cgroup_fd is -1 */
    bool cgroup_self_only; /* only that cgroup's processes, not its descendants' */
    /* TASKS_BPF_TASKS */
    bool filter;       /* report only what tasks_bpf_set_pids() selects (else every process) */
    bool follow;       /* with filter: also report (and add) processes whose parent is selected */
    uint32_t max_pids; /* filter capacity; 0 means 65536 */
    uint32_t expect;   /* processes a pass is expected to report (the output array is sized for it) */
} tasks_bpf_opts_t;

/* tasks_bpf_opts_init: defaults (TASKS mode, no filter, sys_fd -1, cgroup_fd -1). */
void tasks_bpf_opts_init(tasks_bpf_opts_t *opts);

/* tasks_bpf_record_t.flags */
#define TASKS_BPF_HAS_MM (1u << 0) /* has an address space: vsize and the memory fields are valid */
/* RSS includes every CPU's pending delta (as statm and status show it); else the counters alone (stat 24) */
#define TASKS_BPF_RSS_EXACT (1u << 1)
#define TASKS_BPF_HAS_FDS (1u << 2)    /* the process still has a file table (else fds is 0, as in /proc) */
#define TASKS_BPF_RACED (1u << 3)      /* threads kept exiting during every attempt: group sums may be off */
#define TASKS_BPF_DISCOVERED (1u << 4) /* TASKS mode with follow: added as a child of a selected process */
#define TASKS_BPF_PID_HIDDEN (1u << 5) /* not visible in the reader's PID namespace: pid and ppid are 0 */
#define TASKS_BPF_KTHREAD (1u << 6)    /* a kernel thread */
#define TASKS_BPF_REUSED                                                                                     \
    (1u << 7) /* had not run since its last full read: CPU, I/O, faults, switches,                           \
               * descriptors, name and UID are that read's; memory is read again */

/* One process, with the units /proc uses for it (ticks = sysconf(_SC_CLK_TCK) per second). The source of
 * each field in /proc is given in brackets. */
typedef struct {
    int32_t pid, ppid;                 /* in the reader's PID namespace [stat 1, 4] */
    int32_t host_pid, host_ppid;       /* in the initial PID namespace */
    uint64_t start_ticks;              /* [stat 22] (a time namespace's boot offset is not added) */
    uint64_t start_ns;                 /* start time after boot, ns (start_boottime) */
    char state;                        /* R S D T t X Z P I [stat 3] */
    uint64_t utime_ticks, stime_ticks; /* [stat 14, 15] */
    uint64_t utime_ns, stime_ns;       /* the same before the conversion to ticks */
    uint64_t cpu_ns; /* scheduler runtime of every thread, live and exited (utime_ns + stime_ns) */
    uint64_t cutime_ticks, cstime_ticks;       /* [stat 16, 17] */
    int64_t threads;                           /* [stat 20] */
    uint64_t minflt, majflt, cminflt, cmajflt; /* [stat 10-13] */
    uint64_t vsize_bytes;                      /* [stat 23] */
    uint64_t stat_rss_pages;                   /* [stat 24]: the counters without the per-CPU deltas */
    uint64_t rss_bytes;                        /* [statm resident x page] */
    uint64_t shared_bytes;                     /* [statm shared x page] */
    uint64_t rss_anon_bytes, rss_file_bytes, rss_shmem_bytes, swap_bytes; /* [status RssAnon.. VmSwap] */
    uint64_t hwm_bytes;                                                   /* [status VmHWM] */
    uint64_t vcsw, ivcsw;             /* the leader thread's [status voluntary_ctxt_switches ..] */
    uint64_t group_vcsw, group_ivcsw; /* every thread's, live and exited (getrusage RUSAGE_SELF) */
    uint64_t io[7];         /* [io] rchar wchar syscr syscw read_bytes write_bytes cancelled_write_bytes */
    int32_t processor;      /* [stat 39] */
    uint32_t uid;           /* real UID [status Uid, first] (initial user namespace) */
    int64_t fds;            /* open descriptors [st_size of fd/]; 0 without a file table (zombie), as
                               /proc shows it */
    int32_t threads_walked; /* live threads summed (equals threads unless one came or went meanwhile) */
    uint32_t flags;         /* TASKS_BPF_* above */
    char comm[17];          /* [stat 2], NUL-terminated */
} tasks_bpf_record_t;

/* Called once per process per pass; a negative return stops the pass and is returned by tasks_bpf_read(). */
typedef int (*tasks_bpf_record_cb)(const tasks_bpf_record_t *rec, void *arg);

typedef struct tasks_bpf tasks_bpf_t;

/* What the reader knows about itself, for source_stats / meta. */
typedef struct {
    const char *mode;     /* "tasks", "cgroup" ("none" when not built) */
    bool rss_exact;       /* per-CPU offsets found: RSS is exact (else count-only, flag RSS_EXACT clear) */
    unsigned pcpu_step;   /* where the per-CPU offset search stopped, when not exact (see tasks.bpf.c) */
    uint64_t passes;      /* tasks_bpf_read() calls that completed */
    uint64_t runs;        /* program runs (a pass that outgrew the output array runs again) */
    uint64_t records;     /* records handed to callbacks, all passes */
    uint64_t reused;      /* of those, processes that had not run since their last full read: their CPU,
                           * I/O, faults and descriptors were taken from it, memory read again */
    uint64_t grows;       /* output arrays replaced by a larger one (no reload) */
    uint64_t loads;       /* loads of the program (verifications): 1 */
    uint32_t capacity;    /* records the output array holds */
    uint64_t visited;     /* processes the last pass looked at (tasks mode: every one on the machine) */
    uint64_t cgroups;     /* cgroups the last pass walked (cgroup mode) */
    uint32_t filter_size; /* PIDs in the filter */
} tasks_bpf_info_t;

/* tasks_bpf_available: whether the BPF reader can be opened here, without loading anything: built in, the
 * privileges, the kernel's BTF under `sys_fd` (-1: not checked), the kernel's iterators for `mode`. Returns
 * 0, or -EOPNOTSUPP (not built), -EPERM (privileges), -ENOENT (no BTF), -ENOSYS (kernel too old), with a
 * one-line reason in `why` (may be NULL). */
int tasks_bpf_available(tasks_bpf_mode_t mode, int sys_fd, char *why, size_t whylen);

/* tasks_bpf_open: check as tasks_bpf_available(), load the BPF object and map its output. On success *ret
 * owns it (tasks_bpf_close). Returns 0 or a negative errno with a one-line reason in `why` (may be NULL):
 * -EOPNOTSUPP, -EPERM, -ENOENT, -ENOSYS as above, -EINVAL (bad options; cgroup_fd not a cgroup v2
 * directory), -ENOMEM, or the load's error (the verifier's complaint and libbpf's message in the reason).
 * Test hook: $JOBSCOPE_BPF_FAULT = "load" makes the load fail (a map of size 0), "btf" makes the BTF check
 * look for a file that does not exist; $JOBSCOPE_BPF_NO_REUSE (set) makes every record a full read (the
 * benchmark's before). */
int tasks_bpf_open(const tasks_bpf_opts_t *opts, tasks_bpf_t **ret, char *why, size_t whylen);

/* tasks_bpf_set_pids: TASKS mode with filter: the processes to report, replacing the previous set (only the
 * differences reach the kernel). `how[i]` is TASKS_BPF_PID_MEMBER (report it) or TASKS_BPF_PID_PARENT (report
 * its children when follow is set, not itself: the monitor in run mode); `how` NULL means all MEMBER. PIDs
 * are in the reader's PID namespace. Processes the BPF program added (DISCOVERED) stay until a set without
 * them. Returns 0, -EINVAL (not a filtered TASKS reader), -ENOSPC (more than max_pids), -ENOMEM, or the map
 * update's error. */
#define TASKS_BPF_PID_MEMBER 1u
#define TASKS_BPF_PID_PARENT 2u
int tasks_bpf_set_pids(tasks_bpf_t *t, const int32_t *pids, const uint8_t *how, size_t n);

/* tasks_bpf_read: one pass: `cb` once per process, in the walk's order (TASKS: creation order, parents before
 * children; CGROUP: cgroup by cgroup, pre-order). A pass that finds more processes than the output array
 * holds puts a larger array in its place (the program is not loaded again) and runs again. Returns 0,
 * -ENOENT (CGROUP: the cgroup was removed; no callback), -ENODEV (closed after a failure), -E2BIG (more than
 * 4 M processes), the error of making the larger array, the run's negative errno, or the first negative
 * return of `cb`. */
int tasks_bpf_read(tasks_bpf_t *t, tasks_bpf_record_cb cb, void *arg);

/* tasks_bpf_info: fill *ret (strings are static). */
void tasks_bpf_info(const tasks_bpf_t *t, tasks_bpf_info_t *ret);

/* tasks_bpf_close: unload; accepts NULL. */
void tasks_bpf_close(tasks_bpf_t *t);

/* ---- pure helpers (built always; unit-tested) ---------------------------------------------------------- */

/* tasks_bpf_cputime_adjust: the kernel's cputime_adjust() (kernel/sched/cputime.c) without its side effect:
 * scale the tick-sampled `utime`/`stime` (ns) to the scheduler's runtime `rtime` (ns), never below the
 * previous split (`prev_u`, `prev_s`, as the kernel keeps in signal->prev_cputime), so both stay monotonic.
 * Sets *ret_u + *ret_s = max(rtime, prev_u + prev_s). */
void tasks_bpf_cputime_adjust(uint64_t rtime, uint64_t utime, uint64_t stime, uint64_t prev_u,
                              uint64_t prev_s, uint64_t *ret_u, uint64_t *ret_s);

/* tasks_bpf_ns_to_ticks: nsec_to_clock_t() for `clk_tck` ticks per second (> 0). */
uint64_t tasks_bpf_ns_to_ticks(uint64_t ns, long clk_tck);

/* tasks_bpf_state_char: the state letter /proc shows for a task's __state and exit_state
 * (task_state_index()): R S D T t X Z P I. */
char tasks_bpf_state_char(uint32_t state, uint32_t exit_state);

#endif
