/* SPDX-License-Identifier: MIT
 *
 * The `system` source: host-wide counters and levels read from procfs once per sample — per-CPU times
 * (stat), context switches, forks and run-queue state (stat, loadavg), pressure stall information
 * (pressure/{cpu,memory,io}), memory (meminfo), network interfaces (net/dev) and block devices (diskstats).
 * Values are stored raw, as the kernel prints them (counters stay counters; only kB become bytes). Anything a
 * kernel does not provide (PSI before 4.20, the steal/guest CPU fields on old kernels, discard and flush disk
 * fields before 4.18/5.5, MemAvailable before 3.14) is left missing.
 *
 * The column index enums below let the model and tests address columns without name lookups; each enum
 * follows its table's column order exactly and ends with a __MAX member equal to the column count. The
 * parsers are public so unit tests can feed them strings.
 */
#ifndef JOBSCOPE_SOURCES_SYSTEM_H
#define JOBSCOPE_SOURCES_SYSTEM_H

#include "core/source.h"
#include "core/table.h"

/* table `cpu`: one row per cpu line of stat */
enum {
    CPU_CPU,        /* label: -1 for the aggregate "cpu" line, N for "cpuN" */
    CPU_USER_TICKS, /* includes guest */
    CPU_NICE_TICKS, /* includes guest_nice */
    CPU_SYSTEM_TICKS,
    CPU_IDLE_TICKS,
    CPU_IOWAIT_TICKS,     /* 2.5.41+ */
    CPU_IRQ_TICKS,        /* 2.6.0+ */
    CPU_SOFTIRQ_TICKS,    /* 2.6.0+ */
    CPU_STEAL_TICKS,      /* 2.6.11+ */
    CPU_GUEST_TICKS,      /* 2.6.24+ */
    CPU_GUEST_NICE_TICKS, /* 2.6.33+ */
    CPU__MAX
};

/* table `system`: one row */
enum {
    SYSTEM_CTXT_COUNT,          /* stat ctxt */
    SYSTEM_INTR_COUNT,          /* stat intr, first number (the total) */
    SYSTEM_FORKS_COUNT,         /* stat processes */
    SYSTEM_PROCS_RUNNING_COUNT, /* stat procs_running */
    SYSTEM_PROCS_BLOCKED_COUNT, /* stat procs_blocked */
    SYSTEM_BTIME_S,             /* stat btime, unix seconds */
    SYSTEM_LOAD1,               /* loadavg, REAL */
    SYSTEM_LOAD5,
    SYSTEM_LOAD15,
    SYSTEM_RUNNABLE_TASKS_COUNT, /* loadavg 4th field, before the '/' */
    SYSTEM_TOTAL_TASKS_COUNT,    /* loadavg 4th field, after the '/' */
    SYSTEM_PSI_CPU_SOME_TOTAL_US,
    SYSTEM_PSI_CPU_FULL_TOTAL_US, /* 5.13+ */
    SYSTEM_PSI_MEMORY_SOME_TOTAL_US,
    SYSTEM_PSI_MEMORY_FULL_TOTAL_US,
    SYSTEM_PSI_IO_SOME_TOTAL_US,
    SYSTEM_PSI_IO_FULL_TOTAL_US,
    SYSTEM_PSI_CPU_SOME_AVG10_PCT, /* REAL, percent */
    SYSTEM_PSI_CPU_FULL_AVG10_PCT,
    SYSTEM_PSI_MEMORY_SOME_AVG10_PCT,
    SYSTEM_PSI_MEMORY_FULL_AVG10_PCT,
    SYSTEM_PSI_IO_SOME_AVG10_PCT,
    SYSTEM_PSI_IO_FULL_AVG10_PCT,
    SYSTEM__MAX
};

/* table `memory`: one row, meminfo keys in this order (bytes unless noted) */
enum {
    MEM_TOTAL_BYTES,           /* MemTotal */
    MEM_FREE_BYTES,            /* MemFree */
    MEM_AVAILABLE_BYTES,       /* MemAvailable */
    MEM_BUFFERS_BYTES,         /* Buffers */
    MEM_CACHED_BYTES,          /* Cached */
    MEM_SWAP_CACHED_BYTES,     /* SwapCached */
    MEM_ACTIVE_BYTES,          /* Active */
    MEM_INACTIVE_BYTES,        /* Inactive */
    MEM_ANON_PAGES_BYTES,      /* AnonPages */
    MEM_MAPPED_BYTES,          /* Mapped */
    MEM_SHMEM_BYTES,           /* Shmem */
    MEM_SLAB_BYTES,            /* Slab */
    MEM_SRECLAIMABLE_BYTES,    /* SReclaimable */
    MEM_SUNRECLAIM_BYTES,      /* SUnreclaim */
    MEM_KERNEL_STACK_BYTES,    /* KernelStack */
    MEM_PAGE_TABLES_BYTES,     /* PageTables */
    MEM_DIRTY_BYTES,           /* Dirty */
    MEM_WRITEBACK_BYTES,       /* Writeback */
    MEM_COMMIT_LIMIT_BYTES,    /* CommitLimit */
    MEM_COMMITTED_AS_BYTES,    /* Committed_AS */
    MEM_SWAP_TOTAL_BYTES,      /* SwapTotal */
    MEM_SWAP_FREE_BYTES,       /* SwapFree */
    MEM_HUGEPAGES_TOTAL_COUNT, /* HugePages_Total (pages, not bytes) */
    MEM_HUGEPAGES_FREE_COUNT,  /* HugePages_Free (pages, not bytes) */
    MEM_HUGEPAGESIZE_BYTES,    /* Hugepagesize */
    MEM__MAX
};

/* table `net`: one row per interface of net/dev */
enum {
    NETDEV_IFACE, /* label, TEXT */
    NETDEV_RX_BYTES,
    NETDEV_RX_PACKETS,
    NETDEV_RX_ERRS,
    NETDEV_RX_DROP,
    NETDEV_RX_FIFO,
    NETDEV_RX_FRAME,
    NETDEV_RX_COMPRESSED,
    NETDEV_RX_MULTICAST,
    NETDEV_TX_BYTES,
    NETDEV_TX_PACKETS,
    NETDEV_TX_ERRS,
    NETDEV_TX_DROP,
    NETDEV_TX_FIFO,
    NETDEV_TX_COLLS,
    NETDEV_TX_CARRIER,
    NETDEV_TX_COMPRESSED,
    NETDEV__MAX
};

/* table `disk`: one row per line of diskstats */
enum {
    DISK_MAJOR,  /* label */
    DISK_MINOR,  /* label */
    DISK_DEVICE, /* label, TEXT */
    DISK_READS_COMPLETED,
    DISK_READS_MERGED,
    DISK_SECTORS_READ, /* 512-byte sectors, whatever the device's sector size */
    DISK_READ_MS,
    DISK_WRITES_COMPLETED,
    DISK_WRITES_MERGED,
    DISK_SECTORS_WRITTEN,
    DISK_WRITE_MS,
    DISK_IOS_IN_PROGRESS, /* gauge */
    DISK_IO_MS,
    DISK_WEIGHTED_IO_MS,
    DISK_DISCARDS_COMPLETED, /* 4.18+ */
    DISK_DISCARDS_MERGED,
    DISK_SECTORS_DISCARDED,
    DISK_DISCARD_MS,
    DISK_FLUSH_COMPLETED, /* 5.5+ */
    DISK_FLUSH_MS,
    DISK__MAX
};

/* The pressure files, for system_parse_pressure(). */
typedef enum { SYSTEM_PSI_CPU, SYSTEM_PSI_MEMORY, SYSTEM_PSI_IO, SYSTEM_PSI_MAX } system_psi_t;

extern const js_table_t table_cpu, table_memory, table_system, table_net, table_disk;
extern const js_source_t source_system;

/* system_parse_stat: parse the text of stat. Appends one row to `cpu` (a buffer of table_cpu) per cpu line
 * and, when `system_row` (SYSTEM__MAX values) is not NULL, sets its ctxt, intr, forks, procs_running,
 * procs_blocked and btime values (the others untouched). Fields a line lacks stay missing. Returns 0, -EINVAL
 * when the text holds no cpu line, or -ENOMEM (rows added so far are kept). */
int system_parse_stat(const char *text, js_rows_t *cpu, js_value_t *system_row);

/* system_parse_loadavg: parse the text of loadavg into the load and task values of `system_row`.
 * Returns 0 or -EINVAL (malformed; whatever parsed before the fault is set). */
int system_parse_loadavg(const char *text, js_value_t *system_row);

/* system_parse_pressure: parse the text of pressure/<which> ("some ..." and optionally "full ..." lines) into
 * the total_us and avg10_pct values of `which` in `system_row`. A line that is absent leaves its values
 * missing. Returns 0 or -EINVAL when neither line is there. */
int system_parse_pressure(const char *text, system_psi_t which, js_value_t *system_row);

/* system_parse_meminfo: parse the text of meminfo into `memory_row` (MEM__MAX values): the known keys only,
 * "kB" values converted to bytes. Keys not in the text stay missing. Returns 0 (unknown lines are ignored).
 */
int system_parse_meminfo(const char *text, js_value_t *memory_row);

/* system_parse_net_dev: parse the text of net/dev, appending one row per interface to `net` (a buffer of
 * table_net). The name is everything before the last ':' of the line, leading blanks removed; a line without
 * ':' (the two header lines) is skipped. Returns 0 or -ENOMEM. */
int system_parse_net_dev(const char *text, js_rows_t *net);

/* system_parse_diskstats: parse the text of diskstats, appending one row per device line to `disk` (a buffer
 * of table_disk). Lines with 14, 18 or 20 fields fill the fields they have; the pre-2.6.25 partition format
 * (4 numbers: reads, sectors read, writes, sectors written) is mapped onto those columns.
 * Returns 0 or -ENOMEM. */
int system_parse_diskstats(const char *text, js_rows_t *disk);

#endif
