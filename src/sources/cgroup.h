/* SPDX-License-Identifier: MIT
 *
 * The `cgroup` source: the scope's cgroup's own counters (ctx->scope.cgroup: the cgroup made for `jobscope
 * run`, or the one `watch --cgroup` names), read from its directory in each hierarchy (sys/cgroupfs.h)
 * through descriptors opened once and re-read with one pread per file per sample, so the cost does not depend
 * on how many processes the cgroup holds. The kernel keeps these totals for every task that ever ran in the
 * cgroup, including children reaped by nobody (SIGCHLD ignored) and processes that lived between two samples,
 * and the memory high-water mark of the whole tree (v2 memory.peak, v1 memory.max_usage_in_bytes).
 *
 * Values are stored as read, with two lossless conversions: v2 microsecond counters (usage_usec,
 * throttled_usec) are stored in nanoseconds like their v1 counterparts (× 1000), and v2's "max" is missing.
 * Which file gave each figure is in the inventory (`file.TABLE.COLUMN`), with the cgroup's path per
 * controller, its version, and the allocation (core/allocation.h). No cgroup: no rows.
 *
 * The column enums follow their table's column order and end with a __MAX member; the parsers are public so
 * unit tests can feed them strings.
 */
#ifndef JOBSCOPE_SOURCES_CGROUP_H
#define JOBSCOPE_SOURCES_CGROUP_H

#include "core/source.h"
#include "core/table.h"

#include <stdbool.h>

/* table `cgroup`: one row per sample: CPU, tasks and pressure */
enum {
    CG_USAGE_NS,        /* v1 cpuacct.usage; v2 cpu.stat usage_usec × 1000 */
    CG_USER_NS,         /* v1 cpuacct.usage_user; v2 cpu.stat user_usec × 1000 */
    CG_SYSTEM_NS,       /* v1 cpuacct.usage_sys; v2 cpu.stat system_usec × 1000 */
    CG_USER_TICKS,      /* v1 cpuacct.stat user (USER_HZ), read only where cpuacct.usage_user is missing */
    CG_SYSTEM_TICKS,    /* v1 cpuacct.stat system */
    CG_PERIODS,         /* cpu.stat nr_periods: CFS enforcement periods that had runnable tasks */
    CG_THROTTLED,       /* cpu.stat nr_throttled: periods the quota ran out in */
    CG_THROTTLED_NS,    /* v1 cpu.stat throttled_time; v2 throttled_usec × 1000 */
    CG_PIDS,            /* pids.current: tasks (threads) in the cgroup */
    CG_PIDS_PEAK,       /* pids.peak (6.1+) */
    CG_PSI_CPU_SOME_US, /* cpu.pressure some total= (v2 only) */
    CG_PSI_CPU_FULL_US,
    CG_PSI_MEMORY_SOME_US,
    CG_PSI_MEMORY_FULL_US,
    CG_PSI_IO_SOME_US,
    CG_PSI_IO_FULL_US,
    CG__MAX
};

/* table `cgroup_memory`: one row per sample */
enum {
    CGM_CURRENT_BYTES, /* v2 memory.current; v1 memory.usage_in_bytes (page cache and kernel memory included)
                        */
    CGM_PEAK_BYTES,    /* v2 memory.peak (5.19+); v1 memory.max_usage_in_bytes: the tree's high-water mark */
    CGM_ANON_BYTES,    /* memory.stat v2 anon; v1 total_rss */
    CGM_FILE_BYTES,    /* memory.stat v2 file; v1 total_cache (both include shmem/tmpfs) */
    CGM_SHMEM_BYTES,   /* memory.stat v2 shmem; v1 total_shmem */
    CGM_SOCK_BYTES,    /* memory.stat v2 sock */
    CGM_KERNEL_BYTES,  /* memory.stat v2 kernel (5.18+) */
    CGM_SWAP_BYTES,    /* v2 memory.swap.current; v1 memory.stat total_swap */
    CGM_SWAP_PEAK_BYTES,  /* v2 memory.swap.peak (6.5+) */
    CGM_MEMSW_BYTES,      /* v1 memory.memsw.usage_in_bytes (memory + swap) */
    CGM_MEMSW_PEAK_BYTES, /* v1 memory.memsw.max_usage_in_bytes */
    CGM_OOM_COUNT,      /* v2 memory.events oom: allocations that hit the limit and invoked the OOM killer */
    CGM_OOM_KILL_COUNT, /* v2 memory.events oom_kill; v1 memory.oom_control oom_kill (4.13+) */
    CGM_MAX_COUNT,      /* v2 memory.events max: times usage was about to go over memory.max */
    CGM_HIGH_COUNT,     /* v2 memory.events high: times usage went over memory.high (throttled) */
    CGM_FAILCNT,        /* v1 memory.failcnt: times usage hit the limit */
    CGM_UNDER_OOM,      /* v1 memory.oom_control under_oom (1 while OOM-killer-disabled tasks wait) */
    CGM__MAX
};

/* table `cgroup_io`: one row per device per sample */
enum {
    CGIO_MAJOR,         /* label */
    CGIO_MINOR,         /* label */
    CGIO_READ_BYTES,    /* v2 io.stat rbytes; v1 blkio.throttle.io_service_bytes(_recursive) Read */
    CGIO_WRITE_BYTES,   /* v2 wbytes; v1 Write */
    CGIO_READ_IOS,      /* v2 rios; v1 blkio.throttle.io_serviced(_recursive) Read */
    CGIO_WRITE_IOS,     /* v2 wios; v1 Write */
    CGIO_DISCARD_BYTES, /* v2 dbytes (4.19+); v1 Discard (4.19+) */
    CGIO_DISCARD_IOS,   /* v2 dios; v1 Discard */
    CGIO__MAX
};

extern const js_table_t table_cgroup, table_cgroup_memory, table_cgroup_io;
/* their twins for the embedded monitor's job level (sources/levels.c): same columns */
extern const js_table_t table_level_job_cgroup, table_level_job_cgroup_memory, table_level_job_cgroup_io;
extern const js_source_t source_cgroup;

/* cgroup_parse_value: a single-value file ("123\n"; "max" is no value) into `v`. Returns 0, -ENODATA for
 * "max" (v left missing) or -EINVAL. */
int cgroup_parse_value(const char *text, js_value_t *v);

/* cgroup_parse_cpu_stat: v2 cpu.stat (usage_usec, user_usec, system_usec, nr_periods, nr_throttled,
 * throttled_usec) or v1 cpu.stat (nr_periods, nr_throttled, throttled_time) into the `cgroup` row. Keys not
 * in the text leave their columns untouched. Returns 0. */
int cgroup_parse_cpu_stat(const char *text, js_value_t *row);

/* cgroup_parse_cpuacct_stat: v1 cpuacct.stat ("user N\nsystem N", USER_HZ) into the tick columns. Returns 0.
 */
int cgroup_parse_cpuacct_stat(const char *text, js_value_t *row);

/* cgroup_parse_memory_stat: memory.stat of a v1 (`version` 1: the hierarchical total_* keys) or v2 cgroup
 * into the `cgroup_memory` row: anon, file, shmem, sock, kernel, and v1's swap. Returns 0. */
int cgroup_parse_memory_stat(const char *text, int version, js_value_t *mem_row);

/* cgroup_parse_memory_events: v2 memory.events (oom, oom_kill, max, high) into the row. Returns 0. */
int cgroup_parse_memory_events(const char *text, js_value_t *mem_row);

/* cgroup_parse_oom_control: v1 memory.oom_control (under_oom, oom_kill) into the row. Returns 0. */
int cgroup_parse_oom_control(const char *text, js_value_t *mem_row);

/* cgroup_parse_io_stat: v2 io.stat ("MAJ:MIN rbytes=.. wbytes=.. rios=.. wios=.. dbytes=.. dios=..") into
 * one row of `io` per device line. Returns 0 or -ENOMEM. */
int cgroup_parse_io_stat(const char *text, js_rows_t *io);

/* cgroup_parse_blkio: v1 blkio.throttle.io_service_bytes (`bytes`, may be NULL) and io_serviced (`ios`, may
 * be NULL) ("MAJ:MIN Read N" ... lines, a "Total" line) into one row per device of `io`. Returns 0 or
 * -ENOMEM. */
int cgroup_parse_blkio(const char *bytes, const char *ios, js_rows_t *io);

/* cgroup_parse_pressure: a PSI file ("some avg10=.. total=N", "full ...") into the some/full columns
 * `some_col`, `some_col + 1` of the `cgroup` row. Returns 0 or -EINVAL when neither line is there. */
int cgroup_parse_pressure(const char *text, int some_col, js_value_t *row);

#endif
