/* SPDX-License-Identifier: MIT
 *
 * The `perf` source: hardware and software event counters through perf_event_open(2) (never the perf tool).
 * What is counted depends on the scope:
 *   run            counters opened on the held command between fork and exec, with `inherit` and
 *                  `enable_on_exec`: counting starts at exec and covers every descendant however short-lived
 *                  (the kernel adds an inherited counter's count to its parent's when the child exits, and a
 *                  read() sums the live children's counts in), one target `tree`;
 *   attach         the job, not each task: the tree's own cgroup v2 per CPU with PERF_FLAG_PID_CGROUP where
 *                  it has one (nothing else in it, this monitor included; target `cgroup`), else the root's
 *                  threads with `inherit` (`tree`: the root and what it starts from the attach on); with
 *                  ctx->perf_per_task, one counter set per task (thread) of the tree at attach time, with
 *                  `inherit` for what they start later (targets `task`);
 *   watch cgroup   per CPU with PERF_FLAG_PID_CGROUP when the cgroup is in a hierarchy with the perf_event
 *                  controller (target `cgroup`), else per process of the cgroup;
 *   watch user     the user's cgroup per CPU where it exists (`cgroup`), else per task of the user's
 *                  processes at the start, with `inherit` (`user`; `task` with ctx->perf_per_task);
 *   watch node     per CPU, every task (`cpu`).
 * The counter sets of one target kind (CPUs, threads, tasks) are summed into one row per event (count, time
 * enabled, time running: as the kernel sums an inherited counter's copies); only `task` sets get a row each.
 * Memory-controller (uncore) events are per socket on one CPU of each (targets named after the kernel PMU).
 *
 * The table holds raw values as read: one row per (event, target kind) per sample with the count, time
 * enabled and time running (PERF_FORMAT_TOTAL_TIME_ENABLED|RUNNING), so the model can scale multiplexed
 * counts and say which fraction of the time was counted. Events are read in small groups (PERF_FORMAT_GROUP:
 * one read() per group and target per sample; members of a group are counted over the same time, so their
 * ratios hold). An event that cannot be counted (no such hardware event, forbidden by perf_event_paranoid,
 * unknown to the PMU libpfm4 found) is recorded once in the `inventory` table (`perf.EVENT.status` = `ok` or
 * the errno name and reason) and is absent from the samples; the rest goes on.
 */
#ifndef JOBSCOPE_SOURCES_PERF_H
#define JOBSCOPE_SOURCES_PERF_H

#include "core/source.h"
#include "core/table.h"

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* table `perf`: one row per sample, event and target */
enum {
    PERFC_EVENT,      /* label: event name, unit suffix where not a plain count (task_clock_ns) */
    PERFC_KIND,       /* label: sw, hw or pfm (named through libpfm4) */
    PERFC_TARGET,     /* label: tree, task, cpu, cgroup, or the uncore PMU's name (uncore_imc_0) */
    PERFC_TARGET_ID,  /* label: the command's PID (tree), TID (task), CPU (cpu, cgroup, uncore) */
    PERFC_COUNT,      /* counter, 64 bits: the raw count */
    PERFC_ENABLED_NS, /* counter: time the event was enabled */
    PERFC_RUNNING_NS, /* counter: time it was actually counting (< enabled when multiplexed) */
    PERFC__MAX
};

extern const js_table_t table_perf;

/* The system calls the source makes, overridable by tests (as SQLite's aSyscall[]): perf_event_open, read of
 * a counter, close. */
typedef struct {
    int (*open)(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd, unsigned long flags);
    ssize_t (*read)(int fd, void *buf, size_t n);
    int (*close)(int fd);
} js_perf_syscalls_t;

/* perf_set_syscalls: use `sys` (borrowed, must outlive its use) instead of the real calls; NULL restores
 * them. For tests only; not thread-safe. */
void perf_set_syscalls(const js_perf_syscalls_t *sys);

/* The libpfm4 layer. libpfm4 is not linked: the first perf_pfm_init loads libpfm.so.4 with dlopen (the file
 * named by $JOBSCOPE_LIBPFM_LIBRARY instead, when set: for tests), binding the entry points declared in
 * sources/pfm_abi.h; the last perf_pfm_fini unloads it. Not thread-safe (one monitor per process).
 * perf_pfm_init: load and initialise libpfm4 (honours LIBPFM_FORCE_PMU). Returns 0, -ENOENT (the library
 * cannot be loaded or lacks an entry point) or -ENODEV (it failed to initialise); on failure perf_pfm_error()
 * says why. Pair a success with perf_pfm_fini. */
#define PERF_PFM_LIBRARY_ENV "JOBSCOPE_LIBPFM_LIBRARY"
int perf_pfm_init(void);

/* perf_pfm_error: one line saying why the last perf_pfm_init failed ("libpfm4 not loadable: libpfm.so.4:
 * cannot open shared object file: ..."), "" after a success. Valid until the next perf_pfm_init. */
const char *perf_pfm_error(void);

/* perf_pfm_fini: release libpfm4 (unloaded at the last release); accepts an uninitialised library. */
void perf_pfm_fini(void);

/* perf_pfm_version: pfm_get_version() of the loaded library (major << 16 | minor), or -ENODEV when not
 * initialised. */
int perf_pfm_version(void);

/* perf_pfm_core_pmu: the name of the core PMU model libpfm4 detected (or was forced to), into buf; "" if
 * none. Returns buf. */
char *perf_pfm_core_pmu(char *buf, size_t cap);

/* perf_pfm_encode: resolve a libpfm4 event name (e.g. "FP_ARITH_INST_RETIRED:SCALAR_DOUBLE" or
 * "skx_unc_imc0::UNC_M_CAS_COUNT:RD") to its perf_event_attr type and config words, written into *attr (other
 * fields untouched). The fully qualified name libpfm4 used goes into fstr (cap bytes; may be NULL).
 * Returns 0, -ENODEV (perf_pfm_init not called or failed), -ENOENT (no
 * such event on any PMU that libpfm4 found) or -EINVAL (the name does not parse). */
int perf_pfm_encode(const char *name, struct perf_event_attr *attr, char *fstr, size_t cap);

/* perf_open_cgroup: watch --cgroup: open the counters of the source state `state` (from its init) per CPU for
 * the cgroup whose directory is `cgroup_dirfd` (borrowed; a cgroup v2 directory, or a v1 one of the
 * perf_event hierarchy), or, where the kernel refuses that (no perf_event controller on that hierarchy), per
 * task of the processes listed in its cgroup.procs, re-read each sample for newcomers. Called by the source
 * itself at its first sample with the scope's cgroup; exposed for tests. Returns 0 or -ENOMEM. */
int perf_open_cgroup(void *state, const js_ctx_t *ctx, int cgroup_dirfd);

#endif
