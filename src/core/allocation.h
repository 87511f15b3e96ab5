/* SPDX-License-Identifier: MIT
 *
 * The job's allocation: how many cores and how much memory it may use, and which bound says so. seff and
 * jobstats judge a job against its allocation, not the machine: CPU efficiency is CPU time over cores ×
 * wall time, memory efficiency the peak over the limit. The cores are the smallest of
 *   - the process's CPU affinity mask (Cpus_allowed_list of <procfs>/PID/status),
 *   - its cgroup's cpuset (v2 cpuset.cpus.effective, v1 cpuset.effective_cpus or cpuset.cpus; the nearest
 *     ancestor that has the file),
 *   - its CPU quota as a fractional core count (v2 cpu.max, v1 cpu.cfs_quota_us / cpu.cfs_period_us; the
 *     smallest along the path to the hierarchy's root, since a parent's quota binds its children),
 *   - SLURM's SLURM_CPUS_ON_NODE, else this node's entry of SLURM_JOB_CPUS_PER_NODE ("2(x3),1", indexed by
 *     SLURM_NODEID; without it only when every node has the same count);
 * the memory limit the smallest of
 *   - the cgroup's (v2 memory.max, smallest along the path; v1 hierarchical_memory_limit of memory.stat, else
 *     memory.limit_in_bytes along the path; "max" and v1's "unlimited" page-counter maximum are no limit),
 *   - SLURM_MEM_PER_NODE (MiB), or SLURM_MEM_PER_CPU (MiB) × the node's SLURM CPUs.
 * Ties go to the bound that enforces (quota, then cpuset, then affinity, then SLURM's word; the cgroup's
 * memory limit before SLURM's).
 */
#ifndef JOBSCOPE_ALLOCATION_H
#define JOBSCOPE_ALLOCATION_H

#include "sys/cgroupfs.h"
#include "sys/fsroot.h"

#include <stdint.h>
#include <sys/types.h>

typedef enum {
    /* cores */
    JS_ALLOC_CPU_MAX,                 /* v2 cpu.max */
    JS_ALLOC_CFS_QUOTA,               /* v1 cpu.cfs_quota_us / cpu.cfs_period_us */
    JS_ALLOC_CPUSET,                  /* the cgroup's cpuset */
    JS_ALLOC_AFFINITY,                /* the process's affinity mask */
    JS_ALLOC_SLURM_CPUS_ON_NODE,      /* $SLURM_CPUS_ON_NODE */
    JS_ALLOC_SLURM_JOB_CPUS_PER_NODE, /* $SLURM_JOB_CPUS_PER_NODE, this node's entry */
    /* memory */
    JS_ALLOC_MEMORY_MAX,         /* v2 memory.max */
    JS_ALLOC_MEMORY_LIMIT,       /* v1 hierarchical_memory_limit / memory.limit_in_bytes */
    JS_ALLOC_SLURM_MEM_PER_NODE, /* $SLURM_MEM_PER_NODE */
    JS_ALLOC_SLURM_MEM_PER_CPU,  /* $SLURM_MEM_PER_CPU × the node's SLURM CPUs */
    JS_ALLOC_BOUND_MAX
} js_alloc_bound_t;

#define JS_ALLOC_FIRST_MEMORY JS_ALLOC_MEMORY_MAX

typedef struct {
    double cores;                     /* the smallest core bound; NAN when none is known */
    int cores_bound;                  /* its js_alloc_bound_t, -1 when none */
    double mem_limit_bytes;           /* the smallest memory bound; NAN when none */
    int mem_bound;                    /* its js_alloc_bound_t, -1 when none */
    double value[JS_ALLOC_BOUND_MAX]; /* each bound: cores for the CPU ones, bytes for the memory ones; NAN
                                         absent */
    double memory_high_bytes; /* v2 memory.high (throttling, not a limit), smallest on the path; NAN */
    double swap_max_bytes;    /* v2 memory.swap.max / v1 memsw limit minus memory limit; NAN */
    double pids_max;          /* pids.max, smallest on the path; NAN */
    char cpuset[256];         /* the cpuset list as read ("" when none) */
    char affinity[256];       /* the affinity list as read ("" when none) */
} js_allocation_t;

/* allocation_resolve: the allocation of process `pid` (0: none; affinity then missing) in cgroup `cg` (NULL:
 * no cgroup bounds) with environment `envp` (NULL-terminated "NAME=value" strings, e.g. `environ` or the
 * process's <procfs>/PID/environ split at NULs; NULL: no SLURM bounds). Never fails: what cannot be read is
 * NAN. Returns 0. */
int allocation_resolve(const js_fsroot_t *r, pid_t pid, const js_cgroup_t *cg, char *const *envp,
                       js_allocation_t *ret);

/* allocation_bound_name: "cpu.max", "cfs_quota", "cpuset", "affinity", "SLURM_CPUS_ON_NODE",
 * "SLURM_JOB_CPUS_PER_NODE", "memory.max", "memory.limit_in_bytes", "SLURM_MEM_PER_NODE",
 * "SLURM_MEM_PER_CPU"; "none" for -1. */
const char *allocation_bound_name(int bound);

/* ---- parsers (exposed for tests) ---- */

/* alloc_parse_cpu_max: v2 cpu.max "QUOTA PERIOD" into cores (QUOTA/PERIOD). Returns 0, -ENODATA for "max
 * PERIOD" (no quota) or -EINVAL. */
int alloc_parse_cpu_max(const char *s, double *ret_cores);

/* alloc_parse_cfs: v1 quota and period (microseconds; quota -1 = none) into cores. 0, -ENODATA or -EINVAL. */
int alloc_parse_cfs(const char *quota, const char *period, double *ret_cores);

/* alloc_parse_limit: a memory limit file ("max", a number of bytes; v1's unlimited is a number >= 2^62)
 * into bytes. Returns 0, -ENODATA (no limit) or -EINVAL. */
int alloc_parse_limit(const char *s, double *ret_bytes);

/* alloc_slurm_cpus_per_node: the CPUs of node `node_index` (< 0: unknown) in a SLURM_JOB_CPUS_PER_NODE value
 * such as "72(x2),36" or "4". With an unknown index, the count when every node has the same. Returns the
 * count, -ENODATA (unknown index and different counts, or index past the list) or -EINVAL. */
int alloc_slurm_cpus_per_node(const char *s, long node_index);

/* alloc_parse_slurm_mem: a SLURM_MEM_PER_NODE / SLURM_MEM_PER_CPU value (mebibytes, an optional K/M/G/T
 * suffix) into bytes. Returns 0, -ENODATA for 0 (SLURM's "all the node's memory") or -EINVAL. */
int alloc_parse_slurm_mem(const char *s, double *ret_bytes);

#endif
