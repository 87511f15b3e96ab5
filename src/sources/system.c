/* SPDX-License-Identifier: MIT
 *
 * The `system` source: host-wide CPU times, scheduler and PSI counters, memory, network interfaces and block
 * devices, read through ctx->root.proc. Each file is read once per sample into one buffer kept in the state
 * (no allocation once warm) and parsed by the public parsers of system.h, which never allocate except to grow
 * the caller's row buffers. Counter widths follow the kernel's printf types (u64: 64, unsigned long: the
 * platform's long, unsigned int: 32), so the model can tell a wrap from a reset. Only an unreadable stat
 * fails the source; every other missing file (pressure/ without PSI, net/dev in a restricted namespace)
 * leaves its values missing.
 */
#include "sources/system.h"

#include "sys/parse.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define ULONG_BITS ((uint8_t)(sizeof(unsigned long) * CHAR_BIT))

/* ---- table descriptors ---- */

/* clang-format off */
#define TICKS(n, h) {n, "ticks", JS_INT, JS_COUNTER, 64, h " (USER_HZ ticks, see sysconf(_SC_CLK_TCK))"}
/* clang-format on */

static const js_column_t cpu_cols[CPU__MAX] = {
    [CPU_CPU] = {"cpu", "id", JS_INT, JS_LABEL, 0, "CPU number, -1 for the aggregate of all CPUs"},
    [CPU_USER_TICKS] = TICKS("user_ticks", "time in user mode, guest time included"),
    [CPU_NICE_TICKS] = TICKS("nice_ticks", "time in user mode at low priority, guest_nice included"),
    [CPU_SYSTEM_TICKS] = TICKS("system_ticks", "time in kernel mode"),
    [CPU_IDLE_TICKS] = TICKS("idle_ticks", "idle time"),
    [CPU_IOWAIT_TICKS] =
        TICKS("iowait_ticks", "idle time with I/O outstanding (may decrease on some kernels)"),
    [CPU_IRQ_TICKS] = TICKS("irq_ticks", "time servicing interrupts"),
    [CPU_SOFTIRQ_TICKS] = TICKS("softirq_ticks", "time servicing softirqs"),
    [CPU_STEAL_TICKS] = TICKS("steal_ticks", "time stolen by the hypervisor"),
    [CPU_GUEST_TICKS] = TICKS("guest_ticks", "time running a guest (also counted in user)"),
    [CPU_GUEST_NICE_TICKS] = TICKS("guest_nice_ticks", "time running a niced guest (also counted in nice)"),
};
const js_table_t table_cpu = {"cpu", "per-CPU and aggregate time counters from /proc/stat", CPU__MAX,
                              cpu_cols};

/* clang-format off */
#define PSI_TOTAL(n, h) {n, "us", JS_INT, JS_COUNTER, 64, h " (microseconds since boot)"}
#define PSI_AVG(n, h) {n, "percent", JS_REAL, JS_GAUGE, 0, h " (kernel's 10 s running average)"}
/* clang-format on */

static const js_column_t system_cols[SYSTEM__MAX] = {
    [SYSTEM_CTXT_COUNT] = {"ctxt_count", "count", JS_INT, JS_COUNTER, 64, "context switches since boot"},
    [SYSTEM_INTR_COUNT] = {"intr_count", "count", JS_INT, JS_COUNTER, 64, "interrupts serviced since boot"},
    [SYSTEM_FORKS_COUNT] = {"forks_count", "count", JS_INT, JS_COUNTER, ULONG_BITS,
                            "processes and threads created since boot"},
    [SYSTEM_PROCS_RUNNING_COUNT] = {"procs_running_count", "count", JS_INT, JS_GAUGE, 0,
                                    "tasks running or runnable"},
    [SYSTEM_PROCS_BLOCKED_COUNT] = {"procs_blocked_count", "count", JS_INT, JS_GAUGE, 0,
                                    "tasks blocked waiting for I/O"},
    [SYSTEM_BTIME_S] = {"btime_s", "s", JS_INT, JS_GAUGE, 0, "boot time, seconds since the Unix epoch"},
    [SYSTEM_LOAD1] = {"load1", "tasks", JS_REAL, JS_GAUGE, 0, "load average over 1 minute"},
    [SYSTEM_LOAD5] = {"load5", "tasks", JS_REAL, JS_GAUGE, 0, "load average over 5 minutes"},
    [SYSTEM_LOAD15] = {"load15", "tasks", JS_REAL, JS_GAUGE, 0, "load average over 15 minutes"},
    [SYSTEM_RUNNABLE_TASKS_COUNT] = {"runnable_tasks_count", "count", JS_INT, JS_GAUGE, 0,
                                     "runnable scheduling entities (loadavg)"},
    [SYSTEM_TOTAL_TASKS_COUNT] = {"total_tasks_count", "count", JS_INT, JS_GAUGE, 0,
                                  "scheduling entities that exist (loadavg)"},
    [SYSTEM_PSI_CPU_SOME_TOTAL_US] = PSI_TOTAL("psi_cpu_some_total_us", "some task stalled on CPU"),
    [SYSTEM_PSI_CPU_FULL_TOTAL_US] = PSI_TOTAL("psi_cpu_full_total_us", "all tasks stalled on CPU"),
    [SYSTEM_PSI_MEMORY_SOME_TOTAL_US] = PSI_TOTAL("psi_memory_some_total_us", "some task stalled on memory"),
    [SYSTEM_PSI_MEMORY_FULL_TOTAL_US] = PSI_TOTAL("psi_memory_full_total_us", "all tasks stalled on memory"),
    [SYSTEM_PSI_IO_SOME_TOTAL_US] = PSI_TOTAL("psi_io_some_total_us", "some task stalled on I/O"),
    [SYSTEM_PSI_IO_FULL_TOTAL_US] = PSI_TOTAL("psi_io_full_total_us", "all tasks stalled on I/O"),
    [SYSTEM_PSI_CPU_SOME_AVG10_PCT] =
        PSI_AVG("psi_cpu_some_avg10_pct", "share of time some task stalled on CPU"),
    [SYSTEM_PSI_CPU_FULL_AVG10_PCT] =
        PSI_AVG("psi_cpu_full_avg10_pct", "share of time all tasks stalled on CPU"),
    [SYSTEM_PSI_MEMORY_SOME_AVG10_PCT] =
        PSI_AVG("psi_memory_some_avg10_pct", "share of time some task stalled on memory"),
    [SYSTEM_PSI_MEMORY_FULL_AVG10_PCT] =
        PSI_AVG("psi_memory_full_avg10_pct", "share of time all tasks stalled on memory"),
    [SYSTEM_PSI_IO_SOME_AVG10_PCT] =
        PSI_AVG("psi_io_some_avg10_pct", "share of time some task stalled on I/O"),
    [SYSTEM_PSI_IO_FULL_AVG10_PCT] =
        PSI_AVG("psi_io_full_avg10_pct", "share of time all tasks stalled on I/O"),
};
const js_table_t table_system = {"system", "host-wide scheduler, load and pressure (PSI) values, one row",
                                 SYSTEM__MAX, system_cols};

/* clang-format off */
#define MEMB(n, k) {n, "bytes", JS_INT, JS_GAUGE, 0, "meminfo " k}
/* clang-format on */

static const js_column_t memory_cols[MEM__MAX] = {
    [MEM_TOTAL_BYTES] = MEMB("mem_total_bytes", "MemTotal"),
    [MEM_FREE_BYTES] = MEMB("mem_free_bytes", "MemFree"),
    [MEM_AVAILABLE_BYTES] = MEMB("mem_available_bytes", "MemAvailable (3.14+)"),
    [MEM_BUFFERS_BYTES] = MEMB("buffers_bytes", "Buffers"),
    [MEM_CACHED_BYTES] = MEMB("cached_bytes", "Cached"),
    [MEM_SWAP_CACHED_BYTES] = MEMB("swap_cached_bytes", "SwapCached"),
    [MEM_ACTIVE_BYTES] = MEMB("active_bytes", "Active"),
    [MEM_INACTIVE_BYTES] = MEMB("inactive_bytes", "Inactive"),
    [MEM_ANON_PAGES_BYTES] = MEMB("anon_pages_bytes", "AnonPages"),
    [MEM_MAPPED_BYTES] = MEMB("mapped_bytes", "Mapped"),
    [MEM_SHMEM_BYTES] = MEMB("shmem_bytes", "Shmem"),
    [MEM_SLAB_BYTES] = MEMB("slab_bytes", "Slab"),
    [MEM_SRECLAIMABLE_BYTES] = MEMB("sreclaimable_bytes", "SReclaimable"),
    [MEM_SUNRECLAIM_BYTES] = MEMB("sunreclaim_bytes", "SUnreclaim"),
    [MEM_KERNEL_STACK_BYTES] = MEMB("kernel_stack_bytes", "KernelStack"),
    [MEM_PAGE_TABLES_BYTES] = MEMB("page_tables_bytes", "PageTables"),
    [MEM_DIRTY_BYTES] = MEMB("dirty_bytes", "Dirty"),
    [MEM_WRITEBACK_BYTES] = MEMB("writeback_bytes", "Writeback"),
    [MEM_COMMIT_LIMIT_BYTES] = MEMB("commit_limit_bytes", "CommitLimit"),
    [MEM_COMMITTED_AS_BYTES] = MEMB("committed_as_bytes", "Committed_AS"),
    [MEM_SWAP_TOTAL_BYTES] = MEMB("swap_total_bytes", "SwapTotal"),
    [MEM_SWAP_FREE_BYTES] = MEMB("swap_free_bytes", "SwapFree"),
    [MEM_HUGEPAGES_TOTAL_COUNT] = {"hugepages_total_count", "pages", JS_INT, JS_GAUGE, 0,
                                   "meminfo HugePages_Total (huge pages, not bytes)"},
    [MEM_HUGEPAGES_FREE_COUNT] = {"hugepages_free_count", "pages", JS_INT, JS_GAUGE, 0,
                                  "meminfo HugePages_Free (huge pages, not bytes)"},
    [MEM_HUGEPAGESIZE_BYTES] = MEMB("hugepagesize_bytes", "Hugepagesize"),
};
const js_table_t table_memory = {"memory", "host memory from /proc/meminfo, one row", MEM__MAX, memory_cols};

/* The meminfo key of each memory column, without the ':'. */
static const char *const meminfo_keys[MEM__MAX] = {
    [MEM_TOTAL_BYTES] = "MemTotal",
    [MEM_FREE_BYTES] = "MemFree",
    [MEM_AVAILABLE_BYTES] = "MemAvailable",
    [MEM_BUFFERS_BYTES] = "Buffers",
    [MEM_CACHED_BYTES] = "Cached",
    [MEM_SWAP_CACHED_BYTES] = "SwapCached",
    [MEM_ACTIVE_BYTES] = "Active",
    [MEM_INACTIVE_BYTES] = "Inactive",
    [MEM_ANON_PAGES_BYTES] = "AnonPages",
    [MEM_MAPPED_BYTES] = "Mapped",
    [MEM_SHMEM_BYTES] = "Shmem",
    [MEM_SLAB_BYTES] = "Slab",
    [MEM_SRECLAIMABLE_BYTES] = "SReclaimable",
    [MEM_SUNRECLAIM_BYTES] = "SUnreclaim",
    [MEM_KERNEL_STACK_BYTES] = "KernelStack",
    [MEM_PAGE_TABLES_BYTES] = "PageTables",
    [MEM_DIRTY_BYTES] = "Dirty",
    [MEM_WRITEBACK_BYTES] = "Writeback",
    [MEM_COMMIT_LIMIT_BYTES] = "CommitLimit",
    [MEM_COMMITTED_AS_BYTES] = "Committed_AS",
    [MEM_SWAP_TOTAL_BYTES] = "SwapTotal",
    [MEM_SWAP_FREE_BYTES] = "SwapFree",
    [MEM_HUGEPAGES_TOTAL_COUNT] = "HugePages_Total",
    [MEM_HUGEPAGES_FREE_COUNT] = "HugePages_Free",
    [MEM_HUGEPAGESIZE_BYTES] = "Hugepagesize",
};

/* clang-format off */
#define NETC(n, u, h) {n, u, JS_INT, JS_COUNTER, 64, h}
/* clang-format on */

static const js_column_t net_cols[NETDEV__MAX] = {
    [NETDEV_IFACE] = {"iface", "text", JS_TEXT, JS_LABEL, 0, "interface name"},
    [NETDEV_RX_BYTES] = NETC("rx_bytes", "bytes", "bytes received"),
    [NETDEV_RX_PACKETS] = NETC("rx_packets", "packets", "packets received"),
    [NETDEV_RX_ERRS] = NETC("rx_errs", "packets", "receive errors"),
    [NETDEV_RX_DROP] = NETC("rx_drop", "packets", "received packets dropped"),
    [NETDEV_RX_FIFO] = NETC("rx_fifo", "count", "receive FIFO overruns"),
    [NETDEV_RX_FRAME] = NETC("rx_frame", "count", "receive framing errors"),
    [NETDEV_RX_COMPRESSED] = NETC("rx_compressed", "packets", "compressed packets received"),
    [NETDEV_RX_MULTICAST] = NETC("rx_multicast", "packets", "multicast packets received"),
    [NETDEV_TX_BYTES] = NETC("tx_bytes", "bytes", "bytes transmitted"),
    [NETDEV_TX_PACKETS] = NETC("tx_packets", "packets", "packets transmitted"),
    [NETDEV_TX_ERRS] = NETC("tx_errs", "packets", "transmit errors"),
    [NETDEV_TX_DROP] = NETC("tx_drop", "packets", "transmitted packets dropped"),
    [NETDEV_TX_FIFO] = NETC("tx_fifo", "count", "transmit FIFO overruns"),
    [NETDEV_TX_COLLS] = NETC("tx_colls", "count", "collisions"),
    [NETDEV_TX_CARRIER] = NETC("tx_carrier", "count", "carrier losses"),
    [NETDEV_TX_COMPRESSED] = NETC("tx_compressed", "packets", "compressed packets transmitted"),
};
const js_table_t table_net = {"net", "per-interface counters from /proc/net/dev", NETDEV__MAX, net_cols};

/* clang-format off */
#define DISKC(n, u, w, h) {n, u, JS_INT, JS_COUNTER, w, h}
/* clang-format on */

static const js_column_t disk_cols[DISK__MAX] = {
    [DISK_MAJOR] = {"major", "id", JS_INT, JS_LABEL, 0, "device major number"},
    [DISK_MINOR] = {"minor", "id", JS_INT, JS_LABEL, 0, "device minor number"},
    [DISK_DEVICE] = {"device", "text", JS_TEXT, JS_LABEL, 0, "device name (disks and partitions)"},
    [DISK_READS_COMPLETED] = DISKC("reads_completed", "count", ULONG_BITS, "reads completed"),
    [DISK_READS_MERGED] = DISKC("reads_merged", "count", ULONG_BITS, "adjacent reads merged"),
    [DISK_SECTORS_READ] = DISKC("sectors_read", "sectors", ULONG_BITS,
                                "sectors read; always 512-byte units, whatever the device's sector size"),
    [DISK_READ_MS] = DISKC("read_ms", "ms", 32, "time spent reading"),
    [DISK_WRITES_COMPLETED] = DISKC("writes_completed", "count", ULONG_BITS, "writes completed"),
    [DISK_WRITES_MERGED] = DISKC("writes_merged", "count", ULONG_BITS, "adjacent writes merged"),
    [DISK_SECTORS_WRITTEN] =
        DISKC("sectors_written", "sectors", ULONG_BITS,
              "sectors written; always 512-byte units, whatever the device's sector size"),
    [DISK_WRITE_MS] = DISKC("write_ms", "ms", 32, "time spent writing"),
    [DISK_IOS_IN_PROGRESS] = {"ios_in_progress", "count", JS_INT, JS_GAUGE, 0, "I/Os currently in flight"},
    [DISK_IO_MS] = DISKC("io_ms", "ms", 32, "time the device had I/O in flight"),
    [DISK_WEIGHTED_IO_MS] = DISKC("weighted_io_ms", "ms", 32, "I/O time weighted by the number in flight"),
    [DISK_DISCARDS_COMPLETED] =
        DISKC("discards_completed", "count", ULONG_BITS, "discards completed (4.18+)"),
    [DISK_DISCARDS_MERGED] =
        DISKC("discards_merged", "count", ULONG_BITS, "adjacent discards merged (4.18+)"),
    [DISK_SECTORS_DISCARDED] =
        DISKC("sectors_discarded", "sectors", ULONG_BITS, "sectors discarded, 512-byte units (4.18+)"),
    [DISK_DISCARD_MS] = DISKC("discard_ms", "ms", 32, "time spent discarding (4.18+)"),
    [DISK_FLUSH_COMPLETED] = DISKC("flush_completed", "count", ULONG_BITS, "flush requests completed (5.5+)"),
    [DISK_FLUSH_MS] = DISKC("flush_ms", "ms", 32, "time spent flushing (5.5+)"),
};
const js_table_t table_disk = {"disk", "per-device block I/O counters from /proc/diskstats", DISK__MAX,
                               disk_cols};

/* ---- parsers ---- */

/* Start of the line after the one `s` is in, or NULL at the end of the text. */
static const char *next_line(const char *s)
{
    s = strchr(s, '\n');
    return s ? s + 1 : NULL;
}

/* If `line` starts with `key` followed by a blank, the position after the key; else NULL. */
static const char *line_key(const char *line, const char *key)
{
    size_t n = strlen(key);
    if (strncmp(line, key, n) != 0 || (line[n] != ' ' && line[n] != '\t'))
        return NULL;
    return line + n;
}

static void set_u64(js_value_t *v, uint64_t u)
{
    val_int(v, (int64_t)u); /* the raw 64-bit pattern; counter_delta() reads it back as unsigned */
}

/* parse_decimal: a locale-independent "123.45" at *p (blanks skipped) into a double; advances *p.
 * Returns 0 or -EINVAL when no digit is there. */
static int parse_decimal(const char **p, double *ret)
{
    const char *s = *p;
    uint64_t ip;
    if (parse_u64(&s, &ip) < 0)
        return -EINVAL;
    double d = (double)ip;
    if (*s == '.') {
        s++;
        uint64_t frac = 0, scale = 1;
        for (; *s >= '0' && *s <= '9'; s++)
            if (scale < 1000000000000000000ULL) {
                frac = frac * 10 + (uint64_t)(*s - '0');
                scale *= 10;
            }
        d += (double)frac / (double)scale;
    }
    *ret = d;
    *p = s;
    return 0;
}

/* parse_cpu_line: one "cpu..." line (`p` after the "cpu" prefix) into a new row of `cpu`. */
static int parse_cpu_line(const char *p, js_rows_t *cpu)
{
    int64_t id = -1;
    if (*p >= '0' && *p <= '9' && parse_i64(&p, &id) < 0)
        return -EINVAL;
    if (*p != ' ' && *p != '\t')
        return -EINVAL;
    js_value_t *row = rows_add(cpu);
    if (!row)
        return -ENOMEM;
    val_int(&row[CPU_CPU], id);
    for (int c = CPU_USER_TICKS; c < CPU__MAX; c++) {
        uint64_t u;
        if (parse_u64(&p, &u) < 0)
            break;
        set_u64(&row[c], u);
    }
    return 0;
}

int system_parse_stat(const char *text, js_rows_t *cpu, js_value_t *system_row)
{
    static const struct {
        const char *key;
        int col;
    } keys[] = {
        {"ctxt", SYSTEM_CTXT_COUNT},
        {"intr", SYSTEM_INTR_COUNT},
        {"processes", SYSTEM_FORKS_COUNT},
        {"procs_running", SYSTEM_PROCS_RUNNING_COUNT},
        {"procs_blocked", SYSTEM_PROCS_BLOCKED_COUNT},
        {"btime", SYSTEM_BTIME_S},
    };
    bool any_cpu = false;
    for (const char *line = text; line && *line; line = next_line(line)) {
        if (strncmp(line, "cpu", 3) == 0) {
            int r = parse_cpu_line(line + 3, cpu);
            if (r == -ENOMEM)
                return r;
            any_cpu |= r == 0;
            continue;
        }
        if (!system_row)
            continue;
        for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
            const char *p = line_key(line, keys[k].key);
            uint64_t u;
            if (p) {
                if (parse_u64(&p, &u) == 0)
                    set_u64(&system_row[keys[k].col], u);
                break;
            }
        }
    }
    return any_cpu ? 0 : -EINVAL;
}

int system_parse_loadavg(const char *text, js_value_t *system_row)
{
    /* "0.01 0.03 0.01 1/82 3288" */
    static const int load_cols[3] = {SYSTEM_LOAD1, SYSTEM_LOAD5, SYSTEM_LOAD15};
    const char *p = text;
    for (int i = 0; i < 3; i++) {
        double d;
        if (parse_decimal(&p, &d) < 0)
            return -EINVAL;
        val_real(&system_row[load_cols[i]], d);
    }
    uint64_t runnable, total;
    if (parse_u64(&p, &runnable) < 0)
        return -EINVAL;
    set_u64(&system_row[SYSTEM_RUNNABLE_TASKS_COUNT], runnable);
    if (*p != '/')
        return -EINVAL;
    p++;
    if (parse_u64(&p, &total) < 0)
        return -EINVAL;
    set_u64(&system_row[SYSTEM_TOTAL_TASKS_COUNT], total);
    return 0;
}

int system_parse_pressure(const char *text, system_psi_t which, js_value_t *system_row)
{
    static const int cols[SYSTEM_PSI_MAX][2][2] = {
        /* {some total, some avg10}, {full total, full avg10} */
        [SYSTEM_PSI_CPU] = {{SYSTEM_PSI_CPU_SOME_TOTAL_US, SYSTEM_PSI_CPU_SOME_AVG10_PCT},
                            {SYSTEM_PSI_CPU_FULL_TOTAL_US, SYSTEM_PSI_CPU_FULL_AVG10_PCT}},
        [SYSTEM_PSI_MEMORY] = {{SYSTEM_PSI_MEMORY_SOME_TOTAL_US, SYSTEM_PSI_MEMORY_SOME_AVG10_PCT},
                               {SYSTEM_PSI_MEMORY_FULL_TOTAL_US, SYSTEM_PSI_MEMORY_FULL_AVG10_PCT}},
        [SYSTEM_PSI_IO] = {{SYSTEM_PSI_IO_SOME_TOTAL_US, SYSTEM_PSI_IO_SOME_AVG10_PCT},
                           {SYSTEM_PSI_IO_FULL_TOTAL_US, SYSTEM_PSI_IO_FULL_AVG10_PCT}},
    };
    if ((unsigned)which >= SYSTEM_PSI_MAX)
        return -EINVAL;
    bool any = false;
    for (const char *line = text; line && *line; line = next_line(line)) {
        int kind;
        const char *p;
        if ((p = line_key(line, "some")))
            kind = 0;
        else if ((p = line_key(line, "full")))
            kind = 1;
        else
            continue;
        any = true;
        /* "avg10=1.45 avg60=0.40 avg300=0.42 total=3573853", fields found by name */
        const char *end = strchr(p, '\n');
        if (!end)
            end = p + strlen(p);
        for (const char *f = p; f < end; f++) {
            if (f[-1] != ' ' && f[-1] != '\t')
                continue;
            if (strncmp(f, "avg10=", 6) == 0) {
                const char *q = f + 6;
                double d;
                if (parse_decimal(&q, &d) == 0)
                    val_real(&system_row[cols[which][kind][1]], d);
            } else if (strncmp(f, "total=", 6) == 0) {
                const char *q = f + 6;
                uint64_t u;
                if (parse_u64(&q, &u) == 0)
                    set_u64(&system_row[cols[which][kind][0]], u);
            }
        }
    }
    return any ? 0 : -EINVAL;
}

int system_parse_meminfo(const char *text, js_value_t *memory_row)
{
    for (const char *line = text; line && *line; line = next_line(line)) {
        const char *colon = strchr(line, ':');
        const char *nl = strchr(line, '\n');
        if (!colon || (nl && colon > nl))
            continue;
        size_t klen = (size_t)(colon - line);
        for (int c = 0; c < MEM__MAX; c++) {
            if (meminfo_keys[c][0] != line[0] || strncmp(line, meminfo_keys[c], klen) != 0 ||
                meminfo_keys[c][klen] != '\0')
                continue;
            const char *p = colon + 1;
            uint64_t u;
            if (parse_u64(&p, &u) < 0)
                break;
            while (*p == ' ' || *p == '\t')
                p++;
            if (p[0] == 'k' && p[1] == 'B')
                u = u > (uint64_t)INT64_MAX / 1024 ? (uint64_t)INT64_MAX : u * 1024;
            set_u64(&memory_row[c], u);
            break;
        }
    }
    return 0;
}

int system_parse_net_dev(const char *text, js_rows_t *net)
{
    for (const char *line = text; line && *line; line = next_line(line)) {
        const char *nl = strchr(line, '\n');
        const char *end = nl ? nl : line + strlen(line);
        /* the name ends at the last ':' of the line: numbers never contain one */
        const char *colon = NULL;
        for (const char *c = line; c < end; c++)
            if (*c == ':')
                colon = c;
        if (!colon)
            continue;
        const char *name = line;
        while (name < colon && (*name == ' ' || *name == '\t'))
            name++;
        const char *name_end = colon;
        while (name_end > name && (name_end[-1] == ' ' || name_end[-1] == '\t'))
            name_end--;
        if (name_end == name)
            continue;
        js_value_t *row = rows_add(net);
        if (!row)
            return -ENOMEM;
        if (rows_set_str(net, &row[NETDEV_IFACE], name, (size_t)(name_end - name)) < 0)
            return -ENOMEM;
        const char *p = colon + 1;
        for (int c = NETDEV_RX_BYTES; c < NETDEV__MAX; c++) {
            uint64_t u;
            if (parse_u64(&p, &u) < 0)
                break;
            set_u64(&row[c], u);
        }
    }
    return 0;
}

/* disk_ignored: loop, RAM and floppy devices carry no storage traffic worth a row per sample (as
 * node_exporter's default device filter does). */
static bool disk_ignored(const char *name, size_t len)
{
    static const char *const prefixes[] = {"loop", "ram", "zram", "fd"};
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
        size_t pl = strlen(prefixes[i]);
        if (len > pl && strncmp(name, prefixes[i], pl) == 0 && name[pl] >= '0' && name[pl] <= '9')
            return true;
    }
    return false;
}

int system_parse_diskstats(const char *text, js_rows_t *disk)
{
    enum { NFIELDS = DISK__MAX - DISK_READS_COMPLETED };
    /* pre-2.6.25 partition lines: reads, sectors read, writes, sectors written */
    static const int old_partition[4] = {DISK_READS_COMPLETED, DISK_SECTORS_READ, DISK_WRITES_COMPLETED,
                                         DISK_SECTORS_WRITTEN};
    for (const char *line = text; line && *line; line = next_line(line)) {
        const char *p = line;
        int64_t major, minor;
        if (parse_i64(&p, &major) < 0 || parse_i64(&p, &minor) < 0)
            continue;
        while (*p == ' ' || *p == '\t')
            p++;
        const char *name = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\n')
            p++;
        size_t name_len = (size_t)(p - name);
        if (!name_len || disk_ignored(name, name_len))
            continue;
        uint64_t f[NFIELDS];
        int n = 0;
        while (n < NFIELDS && parse_u64(&p, &f[n]) == 0)
            n++;
        js_value_t *row = rows_add(disk);
        if (!row)
            return -ENOMEM;
        val_int(&row[DISK_MAJOR], major);
        val_int(&row[DISK_MINOR], minor);
        if (rows_set_str(disk, &row[DISK_DEVICE], name, name_len) < 0)
            return -ENOMEM;
        if (n == 4) {
            for (int i = 0; i < 4; i++)
                set_u64(&row[old_partition[i]], f[i]);
        } else {
            for (int i = 0; i < n; i++)
                set_u64(&row[DISK_READS_COMPLETED + i], f[i]);
        }
    }
    return 0;
}

/* ---- the source ---- */

enum { T_CPU, T_SYSTEM, T_MEMORY, T_NET, T_DISK, T__MAX };

static const js_table_t *const system_tables[T__MAX + 1] = {
    [T_CPU] = &table_cpu, [T_SYSTEM] = &table_system, [T_MEMORY] = &table_memory,
    [T_NET] = &table_net, [T_DISK] = &table_disk,     [T__MAX] = NULL,
};

enum { F_STAT, F_LOADAVG, F_PSI_CPU, F_PSI_MEMORY, F_PSI_IO, F_MEMINFO, F_NETDEV, F_DISKSTATS, F__MAX };

static const char *const file_paths[F__MAX] = {
    [F_STAT] = "stat",
    [F_LOADAVG] = "loadavg",
    [F_PSI_CPU] = "pressure/cpu",
    [F_PSI_MEMORY] = "pressure/memory",
    [F_PSI_IO] = "pressure/io",
    [F_MEMINFO] = "meminfo",
    [F_NETDEV] = "net/dev",
    [F_DISKSTATS] = "diskstats",
};

typedef struct {
    js_buf_t buf;   /* one file at a time: read, parse, next */
    int fd[F__MAX]; /* kept open across samples and re-read with pread: no open/close per sample */
} system_state_t;

static int system_init(const js_ctx_t *ctx, void **ret_state, char *why, size_t whylen)
{
    system_state_t *st = calloc(1, sizeof(*st));
    if (!st)
        return -ENOMEM;
    for (int i = 0; i < F__MAX; i++)
        st->fd[i] = -1;
    *ret_state = st;
    return 0;
}

static void system_fini(void *state)
{
    system_state_t *st = state;
    if (!st)
        return;
    for (int i = 0; i < F__MAX; i++)
        if (st->fd[i] >= 0)
            close(st->fd[i]);
    buf_free(&st->buf);
    free(st);
}

/* sys_read: read file `f` into st->buf through its kept descriptor (opened on first use). 0 or -errno. */
static int sys_read(system_state_t *st, int dir, int f)
{
    if (st->fd[f] < 0) {
        st->fd[f] = fs_open(dir, file_paths[f]); /* never blocks: a FIFO in a fixture tree is refused */
        if (st->fd[f] < 0) {
            int r = st->fd[f];
            st->fd[f] = -1;
            return r;
        }
    }
    /* stat, loadavg, pressure and meminfo are rendered whole by one read; net/dev and diskstats are record
     * lists served a page at a time */
    if (f == F_NETDEV || f == F_DISKSTATS)
        return fd_read_paged(st->fd[f], &st->buf);
    return fd_read_record(st->fd[f], &st->buf);
}

static int system_collect(void *state, js_ctx_t *ctx, js_rows_t *const *rows)
{
    system_state_t *st = state;
    int dir = ctx->root.proc;

    js_value_t *sys = rows_add(rows[T_SYSTEM]);
    if (!sys)
        return -ENOMEM;
    int stat_rc = sys_read(st, dir, F_STAT);
    if (stat_rc == 0) {
        stat_rc = system_parse_stat(st->buf.p, rows[T_CPU], sys);
        if (stat_rc == -ENOMEM)
            return stat_rc;
    }
    if (sys_read(st, dir, F_LOADAVG) == 0)
        (void)system_parse_loadavg(st->buf.p, sys);
    for (int i = 0; i < SYSTEM_PSI_MAX; i++)
        if (sys_read(st, dir, F_PSI_CPU + i) == 0)
            (void)system_parse_pressure(st->buf.p, (system_psi_t)i, sys);

    js_value_t *mem = rows_add(rows[T_MEMORY]);
    if (!mem)
        return -ENOMEM;
    if (sys_read(st, dir, F_MEMINFO) == 0)
        (void)system_parse_meminfo(st->buf.p, mem);

    int r;
    if (sys_read(st, dir, F_NETDEV) == 0 && (r = system_parse_net_dev(st->buf.p, rows[T_NET])) < 0)
        return r;
    if (sys_read(st, dir, F_DISKSTATS) == 0 && (r = system_parse_diskstats(st->buf.p, rows[T_DISK])) < 0)
        return r;
    return stat_rc;
}

const js_source_t source_system = {
    .name = "system",
    .help = "host CPU, scheduler, pressure, memory, network and disk counters from procfs",
    .tables = system_tables,
    .init = system_init,
    .collect = system_collect,
    .fini = system_fini,
};
