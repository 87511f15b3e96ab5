/* SPDX-License-Identifier: MIT
 *
 * The `cgroup` source (see cgroup.h). At init every file the scope's cgroup offers is opened once, in the
 * hierarchy its controller lives in (a v1 file only where that controller is on v1, a v2 one only where it
 * is on v2); a file that is not there (memory.peak before 5.19, memsw without swap accounting, PSI on a v1
 * host) stays missing for the run and is not retried. Each sample re-reads the open files with one pread
 * each into one buffer and parses them into one row of `cgroup`, one of `cgroup_memory` and one per device of
 * `cgroup_io`. In run mode only the hierarchies the command was attached to are read (prepare_child): a
 * cgroup the command never joined would report zeros, and absent is not zero.
 */
#include "sources/cgroup.h"

#include "core/allocation.h"
#include "sys/cgroupfs.h"
#include "sys/parse.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ULONG_BITS ((uint8_t)(sizeof(unsigned long) * CHAR_BIT))

extern char **environ;

/* ---- table descriptors ---- */

/* clang-format off */
#define NSC(n, h) {n, "ns", JS_INT, JS_COUNTER, 64, h}
#define PSIC(n, h) {n, "us", JS_INT, JS_COUNTER, 64, h " (microseconds; v2 only)"}
#define BYTESG(n, h) {n, "bytes", JS_INT, JS_GAUGE, 0, h}
#define CNT(n, w, h) {n, "count", JS_INT, JS_COUNTER, w, h}
#define IOC(n, u, h) {n, u, JS_INT, JS_COUNTER, 64, h}
/* clang-format on */

static const js_column_t cgroup_cols[CG__MAX] = {
    [CG_USAGE_NS] = NSC(
        "usage_ns",
        "CPU time of every task that ran in the cgroup (v1 cpuacct.usage; v2 cpu.stat usage_usec x 1000)"),
    [CG_USER_NS] = NSC("user_ns", "user-mode part (v1 cpuacct.usage_user; v2 user_usec x 1000)"),
    [CG_SYSTEM_NS] = NSC("system_ns", "kernel-mode part (v1 cpuacct.usage_sys; v2 system_usec x 1000)"),
    [CG_USER_TICKS] = {"user_ticks", "ticks", JS_INT, JS_COUNTER, 64,
                       "v1 cpuacct.stat user (USER_HZ), where cpuacct.usage_user is missing"},
    [CG_SYSTEM_TICKS] = {"system_ticks", "ticks", JS_INT, JS_COUNTER, 64, "v1 cpuacct.stat system (USER_HZ)"},
    [CG_PERIODS] = CNT("periods", 32, "cpu.stat nr_periods: quota enforcement periods with runnable tasks"),
    [CG_THROTTLED] = CNT("throttled", 32, "cpu.stat nr_throttled: periods in which the quota ran out"),
    [CG_THROTTLED_NS] =
        NSC("throttled_ns", "time throttled (v1 cpu.stat throttled_time; v2 throttled_usec x 1000)"),
    [CG_PIDS] = {"pids", "count", JS_INT, JS_GAUGE, 0, "pids.current: tasks (threads) in the cgroup"},
    [CG_PIDS_PEAK] = {"pids_peak", "count", JS_INT, JS_GAUGE, 0, "pids.peak: most tasks at once (6.1+)"},
    [CG_PSI_CPU_SOME_US] = PSIC("psi_cpu_some_us", "cpu.pressure some total"),
    [CG_PSI_CPU_FULL_US] = PSIC("psi_cpu_full_us", "cpu.pressure full total"),
    [CG_PSI_MEMORY_SOME_US] = PSIC("psi_memory_some_us", "memory.pressure some total"),
    [CG_PSI_MEMORY_FULL_US] = PSIC("psi_memory_full_us", "memory.pressure full total"),
    [CG_PSI_IO_SOME_US] = PSIC("psi_io_some_us", "io.pressure some total"),
    [CG_PSI_IO_FULL_US] = PSIC("psi_io_full_us", "io.pressure full total"),
};
const js_table_t table_cgroup = {"cgroup", "the scope's cgroup: CPU, throttling, tasks and pressure, one row",
                                 CG__MAX, cgroup_cols};

static const js_column_t cgroup_memory_cols[CGM__MAX] = {
    [CGM_CURRENT_BYTES] =
        BYTESG("current_bytes", "memory charged to the cgroup, page cache and kernel memory included (v2 "
                                "memory.current; v1 memory.usage_in_bytes)"),
    [CGM_PEAK_BYTES] = BYTESG("peak_bytes", "high-water mark of current_bytes over the whole tree (v2 "
                                            "memory.peak, 5.19+; v1 memory.max_usage_in_bytes)"),
    [CGM_ANON_BYTES] = BYTESG("anon_bytes", "anonymous memory (memory.stat v2 anon; v1 total_rss)"),
    [CGM_FILE_BYTES] =
        BYTESG("file_bytes", "page cache, tmpfs and shmem included (memory.stat v2 file; v1 total_cache)"),
    [CGM_SHMEM_BYTES] =
        BYTESG("shmem_bytes", "shared memory and tmpfs (memory.stat v2 shmem; v1 total_shmem)"),
    [CGM_SOCK_BYTES] = BYTESG("sock_bytes", "network socket buffers (memory.stat v2 sock)"),
    [CGM_KERNEL_BYTES] = BYTESG("kernel_bytes", "kernel memory (memory.stat v2 kernel, 5.18+)"),
    [CGM_SWAP_BYTES] = BYTESG("swap_bytes", "swap used (v2 memory.swap.current; v1 memory.stat total_swap)"),
    [CGM_SWAP_PEAK_BYTES] = BYTESG("swap_peak_bytes", "swap high-water mark (v2 memory.swap.peak, 6.5+)"),
    [CGM_MEMSW_BYTES] = BYTESG("memsw_bytes", "memory + swap (v1 memory.memsw.usage_in_bytes)"),
    [CGM_MEMSW_PEAK_BYTES] =
        BYTESG("memsw_peak_bytes", "memory + swap high-water mark (v1 memory.memsw.max_usage_in_bytes)"),
    [CGM_OOM_COUNT] =
        CNT("oom", ULONG_BITS, "v2 memory.events oom: allocations that hit the limit and ran the OOM killer"),
    [CGM_OOM_KILL_COUNT] = CNT("oom_kill", ULONG_BITS,
                               "processes killed by an OOM killer (v2 memory.events oom_kill; v1 "
                               "memory.oom_control oom_kill, 4.13+)"),
    [CGM_MAX_COUNT] =
        CNT("max_events", ULONG_BITS, "v2 memory.events max: times usage was about to exceed memory.max"),
    [CGM_HIGH_COUNT] =
        CNT("high_events", ULONG_BITS, "v2 memory.events high: times usage exceeded memory.high (throttled)"),
    [CGM_FAILCNT] = CNT("failcnt", ULONG_BITS, "v1 memory.failcnt: times usage hit the limit"),
    [CGM_UNDER_OOM] = {"under_oom", "bool", JS_INT, JS_GAUGE, 0, "v1 memory.oom_control under_oom"},
};
const js_table_t table_cgroup_memory = {"cgroup_memory", "the scope's cgroup: memory, one row", CGM__MAX,
                                        cgroup_memory_cols};

static const js_column_t cgroup_io_cols[CGIO__MAX] = {
    [CGIO_MAJOR] = {"major", "id", JS_INT, JS_LABEL, 0, "device major number"},
    [CGIO_MINOR] = {"minor", "id", JS_INT, JS_LABEL, 0, "device minor number"},
    [CGIO_READ_BYTES] =
        IOC("read_bytes", "bytes", "bytes read (v2 io.stat rbytes; v1 blkio.throttle.io_service_bytes Read)"),
    [CGIO_WRITE_BYTES] = IOC("write_bytes", "bytes", "bytes written (v2 wbytes; v1 Write)"),
    [CGIO_READ_IOS] = IOC("read_ios", "count", "read requests (v2 rios; v1 blkio.throttle.io_serviced Read)"),
    [CGIO_WRITE_IOS] = IOC("write_ios", "count", "write requests (v2 wios; v1 Write)"),
    [CGIO_DISCARD_BYTES] = IOC("discard_bytes", "bytes", "bytes discarded (v2 dbytes; v1 Discard)"),
    [CGIO_DISCARD_IOS] = IOC("discard_ios", "count", "discard requests (v2 dios; v1 Discard)"),
};
const js_table_t table_cgroup_io = {"cgroup_io", "the scope's cgroup: block I/O per device", CGIO__MAX,
                                    cgroup_io_cols};
/* twins for the embedded monitor's job level (sources/levels.c runs a second instance of this source) */
const js_table_t table_level_job_cgroup = {
    "level_job_cgroup", "level job: the job's cgroup: CPU, tasks, pressure", CG__MAX, cgroup_cols};
const js_table_t table_level_job_cgroup_memory = {
    "level_job_cgroup_memory", "level job: the job's cgroup: memory", CGM__MAX, cgroup_memory_cols};
const js_table_t table_level_job_cgroup_io = {"level_job_cgroup_io", "level job: the job's cgroup: block I/O",
                                              CGIO__MAX, cgroup_io_cols};

/* ---- parsers ---- */

static void set_u64(js_value_t *v, uint64_t u)
{
    val_int(v, (int64_t)u); /* the raw pattern; counter_delta() reads it back as unsigned */
}

static const char *next_line(const char *s)
{
    s = strchr(s, '\n');
    return s ? s + 1 : NULL;
}

/* A key of a flat-keyed file ("key value" lines), its column, and a factor (1, or 1000 for usec -> ns). */
typedef struct {
    const char *key;
    int col;
    unsigned scale;
} flat_key_t;

static void parse_flat(const char *text, const flat_key_t *keys, size_t nkeys, js_value_t *row)
{
    for (const char *line = text; line && *line; line = next_line(line)) {
        size_t klen = strcspn(line, " \t\n");
        if (!klen || (line[klen] != ' ' && line[klen] != '\t'))
            continue;
        for (size_t k = 0; k < nkeys; k++) {
            if (strlen(keys[k].key) != klen || memcmp(line, keys[k].key, klen) != 0)
                continue;
            const char *p = line + klen;
            uint64_t u;
            if (parse_u64(&p, &u) == 0)
                set_u64(&row[keys[k].col], u > UINT64_MAX / keys[k].scale ? UINT64_MAX : u * keys[k].scale);
            break;
        }
    }
}

#define NKEYS(a) (sizeof(a) / sizeof((a)[0]))

int cgroup_parse_value(const char *text, js_value_t *v)
{
    const char *p = text;
    while (*p == ' ' || *p == '\t')
        p++;
    if (strncmp(p, "max", 3) == 0)
        return -ENODATA;
    uint64_t u;
    if (parse_u64(&p, &u) < 0)
        return -EINVAL;
    set_u64(v, u);
    return 0;
}

int cgroup_parse_cpu_stat(const char *text, js_value_t *row)
{
    static const flat_key_t keys[] = {
        {"usage_usec", CG_USAGE_NS, 1000},      {"user_usec", CG_USER_NS, 1000},
        {"system_usec", CG_SYSTEM_NS, 1000},    {"nr_periods", CG_PERIODS, 1},
        {"nr_throttled", CG_THROTTLED, 1},      {"throttled_usec", CG_THROTTLED_NS, 1000},
        {"throttled_time", CG_THROTTLED_NS, 1},
    };
    parse_flat(text, keys, NKEYS(keys), row);
    return 0;
}

int cgroup_parse_cpuacct_stat(const char *text, js_value_t *row)
{
    static const flat_key_t keys[] = {{"user", CG_USER_TICKS, 1}, {"system", CG_SYSTEM_TICKS, 1}};
    parse_flat(text, keys, NKEYS(keys), row);
    return 0;
}

int cgroup_parse_memory_stat(const char *text, int version, js_value_t *mem_row)
{
    static const flat_key_t v2[] = {
        {"anon", CGM_ANON_BYTES, 1}, {"file", CGM_FILE_BYTES, 1},     {"shmem", CGM_SHMEM_BYTES, 1},
        {"sock", CGM_SOCK_BYTES, 1}, {"kernel", CGM_KERNEL_BYTES, 1},
    };
    /* the hierarchical totals: a watched v1 job cgroup holds its tasks in child (step) cgroups */
    static const flat_key_t v1[] = {
        {"total_rss", CGM_ANON_BYTES, 1},
        {"total_cache", CGM_FILE_BYTES, 1},
        {"total_shmem", CGM_SHMEM_BYTES, 1},
        {"total_swap", CGM_SWAP_BYTES, 1},
    };
    if (version == 2)
        parse_flat(text, v2, NKEYS(v2), mem_row);
    else
        parse_flat(text, v1, NKEYS(v1), mem_row);
    return 0;
}

int cgroup_parse_memory_events(const char *text, js_value_t *mem_row)
{
    static const flat_key_t keys[] = {
        {"oom", CGM_OOM_COUNT, 1},
        {"oom_kill", CGM_OOM_KILL_COUNT, 1},
        {"max", CGM_MAX_COUNT, 1},
        {"high", CGM_HIGH_COUNT, 1},
    };
    parse_flat(text, keys, NKEYS(keys), mem_row);
    return 0;
}

int cgroup_parse_oom_control(const char *text, js_value_t *mem_row)
{
    static const flat_key_t keys[] = {{"under_oom", CGM_UNDER_OOM, 1}, {"oom_kill", CGM_OOM_KILL_COUNT, 1}};
    parse_flat(text, keys, NKEYS(keys), mem_row);
    return 0;
}

/* parse_devno: "MAJ:MIN" at *p; advances. */
static int parse_devno(const char **p, int64_t *maj, int64_t *min)
{
    const char *s = *p;
    uint64_t a, b;
    if (parse_u64(&s, &a) < 0 || *s != ':')
        return -EINVAL;
    s++;
    if (parse_u64(&s, &b) < 0)
        return -EINVAL;
    *maj = (int64_t)a;
    *min = (int64_t)b;
    *p = s;
    return 0;
}

/* io_row: the row of device maj:min in `io`, added when new. */
static js_value_t *io_row(js_rows_t *io, int64_t maj, int64_t min)
{
    for (size_t i = io->nrows; i-- > 0;) {
        js_value_t *r = rows_row(io, i);
        if (r[CGIO_MAJOR].i == maj && r[CGIO_MINOR].i == min)
            return r;
    }
    js_value_t *r = rows_add(io);
    if (r) {
        val_int(&r[CGIO_MAJOR], maj);
        val_int(&r[CGIO_MINOR], min);
    }
    return r;
}

int cgroup_parse_io_stat(const char *text, js_rows_t *io)
{
    static const struct {
        const char *key;
        int col;
    } keys[] = {{"rbytes=", CGIO_READ_BYTES}, {"wbytes=", CGIO_WRITE_BYTES},   {"rios=", CGIO_READ_IOS},
                {"wios=", CGIO_WRITE_IOS},    {"dbytes=", CGIO_DISCARD_BYTES}, {"dios=", CGIO_DISCARD_IOS}};
    for (const char *line = text; line && *line; line = next_line(line)) {
        const char *p = line;
        int64_t maj, min;
        if (parse_devno(&p, &maj, &min) < 0)
            continue;
        js_value_t *r = io_row(io, maj, min);
        if (!r)
            return -ENOMEM;
        const char *end = strchr(p, '\n');
        if (!end)
            end = p + strlen(p);
        while (p < end) {
            while (p < end && *p == ' ')
                p++;
            for (size_t k = 0; k < NKEYS(keys); k++) {
                size_t n = strlen(keys[k].key);
                if (strncmp(p, keys[k].key, n) == 0) {
                    const char *q = p + n;
                    uint64_t u;
                    if (parse_u64(&q, &u) == 0)
                        set_u64(&r[keys[k].col], u);
                    break;
                }
            }
            while (p < end && *p != ' ')
                p++;
        }
    }
    return 0;
}

/* blkio_one: lines "MAJ:MIN Op N" of one v1 file into the `read`, `write`, `discard` columns. */
static int blkio_one(const char *text, int read_col, int write_col, int discard_col, js_rows_t *io)
{
    for (const char *line = text; line && *line; line = next_line(line)) {
        const char *p = line;
        int64_t maj, min;
        if (parse_devno(&p, &maj, &min) < 0)
            continue; /* "Total N" */
        while (*p == ' ')
            p++;
        int col = strncmp(p, "Read ", 5) == 0      ? read_col
                  : strncmp(p, "Write ", 6) == 0   ? write_col
                  : strncmp(p, "Discard ", 8) == 0 ? discard_col
                                                   : -1;
        if (col < 0)
            continue;
        p = strchr(p, ' ');
        uint64_t u;
        if (!p || parse_u64(&p, &u) < 0)
            continue;
        js_value_t *r = io_row(io, maj, min);
        if (!r)
            return -ENOMEM;
        set_u64(&r[col], u);
    }
    return 0;
}

int cgroup_parse_blkio(const char *bytes, const char *ios, js_rows_t *io)
{
    int rc = 0;
    if (bytes)
        rc = blkio_one(bytes, CGIO_READ_BYTES, CGIO_WRITE_BYTES, CGIO_DISCARD_BYTES, io);
    if (rc == 0 && ios)
        rc = blkio_one(ios, CGIO_READ_IOS, CGIO_WRITE_IOS, CGIO_DISCARD_IOS, io);
    return rc;
}

int cgroup_parse_pressure(const char *text, int some_col, js_value_t *row)
{
    bool any = false;
    for (const char *line = text; line && *line; line = next_line(line)) {
        int col;
        if (strncmp(line, "some ", 5) == 0)
            col = some_col;
        else if (strncmp(line, "full ", 5) == 0)
            col = some_col + 1;
        else
            continue;
        any = true;
        const char *end = strchr(line, '\n');
        if (!end)
            end = line + strlen(line);
        for (const char *f = line + 4; f + 6 < end; f++)
            if (f[-1] == ' ' && strncmp(f, "total=", 6) == 0) {
                const char *q = f + 6;
                uint64_t u;
                if (parse_u64(&q, &u) == 0)
                    set_u64(&row[col], u);
                break;
            }
    }
    return any ? 0 : -EINVAL;
}

/* ---- the files ---- */

enum {
    F_CPUACCT_USAGE, /* v1 */
    F_CPUACCT_USER,
    F_CPUACCT_SYS,
    F_CPUACCT_STAT,
    F_CPU_STAT_V1,
    F_CPU_STAT_V2, /* usage and throttling */
    F_MEM_USAGE_V1,
    F_MEM_MAX_USAGE_V1,
    F_MEM_STAT_V1,
    F_MEMSW_USAGE,
    F_MEMSW_MAX_USAGE,
    F_MEM_FAILCNT,
    F_OOM_CONTROL,
    F_MEM_CURRENT, /* v2 */
    F_MEM_PEAK,
    F_MEM_STAT_V2,
    F_SWAP_CURRENT,
    F_SWAP_PEAK,
    F_MEM_EVENTS,
    F_BLKIO_BYTES, /* v1 */
    F_BLKIO_IOS,
    F_IO_STAT, /* v2 */
    F_PIDS_CURRENT,
    F_PIDS_PEAK,
    F_PSI_CPU,
    F_PSI_MEMORY,
    F_PSI_IO,
    F__MAX
};

typedef struct {
    js_cg_ctrl_t ctrl;
    int version;            /* 0: either */
    const char *name, *alt; /* alt: tried when name is missing */
} file_spec_t;

static const file_spec_t files[F__MAX] = {
    [F_CPUACCT_USAGE] = {JS_CG_CPUACCT, 1, "cpuacct.usage", NULL},
    [F_CPUACCT_USER] = {JS_CG_CPUACCT, 1, "cpuacct.usage_user", NULL},
    [F_CPUACCT_SYS] = {JS_CG_CPUACCT, 1, "cpuacct.usage_sys", NULL},
    [F_CPUACCT_STAT] = {JS_CG_CPUACCT, 1, "cpuacct.stat", NULL},
    [F_CPU_STAT_V1] = {JS_CG_CPU, 1, "cpu.stat", NULL},
    [F_CPU_STAT_V2] = {JS_CG_CPUACCT, 2, "cpu.stat", NULL},
    [F_MEM_USAGE_V1] = {JS_CG_MEMORY, 1, "memory.usage_in_bytes", NULL},
    [F_MEM_MAX_USAGE_V1] = {JS_CG_MEMORY, 1, "memory.max_usage_in_bytes", NULL},
    [F_MEM_STAT_V1] = {JS_CG_MEMORY, 1, "memory.stat", NULL},
    [F_MEMSW_USAGE] = {JS_CG_MEMORY, 1, "memory.memsw.usage_in_bytes", NULL},
    [F_MEMSW_MAX_USAGE] = {JS_CG_MEMORY, 1, "memory.memsw.max_usage_in_bytes", NULL},
    [F_MEM_FAILCNT] = {JS_CG_MEMORY, 1, "memory.failcnt", NULL},
    [F_OOM_CONTROL] = {JS_CG_MEMORY, 1, "memory.oom_control", NULL},
    [F_MEM_CURRENT] = {JS_CG_MEMORY, 2, "memory.current", NULL},
    [F_MEM_PEAK] = {JS_CG_MEMORY, 2, "memory.peak", NULL},
    [F_MEM_STAT_V2] = {JS_CG_MEMORY, 2, "memory.stat", NULL},
    [F_SWAP_CURRENT] = {JS_CG_MEMORY, 2, "memory.swap.current", NULL},
    [F_SWAP_PEAK] = {JS_CG_MEMORY, 2, "memory.swap.peak", NULL},
    [F_MEM_EVENTS] = {JS_CG_MEMORY, 2, "memory.events", NULL},
    [F_BLKIO_BYTES] = {JS_CG_IO, 1, "blkio.throttle.io_service_bytes_recursive",
                       "blkio.throttle.io_service_bytes"},
    [F_BLKIO_IOS] = {JS_CG_IO, 1, "blkio.throttle.io_serviced_recursive", "blkio.throttle.io_serviced"},
    [F_IO_STAT] = {JS_CG_IO, 2, "io.stat", NULL},
    [F_PIDS_CURRENT] = {JS_CG_PIDS, 0, "pids.current", NULL},
    [F_PIDS_PEAK] = {JS_CG_PIDS, 0, "pids.peak", NULL},
    [F_PSI_CPU] = {JS_CG_PSI, 2, "cpu.pressure", NULL},
    [F_PSI_MEMORY] = {JS_CG_PSI, 2, "memory.pressure", NULL},
    [F_PSI_IO] = {JS_CG_PSI, 2, "io.pressure", NULL},
};

/* Which files give each figure, first open one wins (for the inventory's file.TABLE.COLUMN rows). */
static const struct {
    const js_table_t *t;
    int col;
    int f[3]; /* -1 terminated */
} figure_files[] = {
    {&table_cgroup, CG_USAGE_NS, {F_CPUACCT_USAGE, F_CPU_STAT_V2, -1}},
    {&table_cgroup, CG_USER_NS, {F_CPUACCT_USER, F_CPU_STAT_V2, -1}},
    {&table_cgroup, CG_USER_TICKS, {F_CPUACCT_STAT, -1, -1}},
    {&table_cgroup, CG_THROTTLED_NS, {F_CPU_STAT_V1, F_CPU_STAT_V2, -1}},
    {&table_cgroup, CG_PIDS, {F_PIDS_CURRENT, -1, -1}},
    {&table_cgroup, CG_PSI_CPU_SOME_US, {F_PSI_CPU, -1, -1}},
    {&table_cgroup, CG_PSI_MEMORY_SOME_US, {F_PSI_MEMORY, -1, -1}},
    {&table_cgroup, CG_PSI_IO_SOME_US, {F_PSI_IO, -1, -1}},
    {&table_cgroup_memory, CGM_CURRENT_BYTES, {F_MEM_USAGE_V1, F_MEM_CURRENT, -1}},
    {&table_cgroup_memory, CGM_PEAK_BYTES, {F_MEM_MAX_USAGE_V1, F_MEM_PEAK, -1}},
    {&table_cgroup_memory, CGM_ANON_BYTES, {F_MEM_STAT_V1, F_MEM_STAT_V2, -1}},
    {&table_cgroup_memory, CGM_SWAP_BYTES, {F_SWAP_CURRENT, F_MEM_STAT_V1, -1}},
    {&table_cgroup_memory, CGM_MEMSW_PEAK_BYTES, {F_MEMSW_MAX_USAGE, -1, -1}},
    {&table_cgroup_memory, CGM_OOM_KILL_COUNT, {F_MEM_EVENTS, F_OOM_CONTROL, -1}},
    {&table_cgroup_memory, CGM_FAILCNT, {F_MEM_FAILCNT, -1, -1}},
    {&table_cgroup_io, CGIO_READ_BYTES, {F_BLKIO_BYTES, F_IO_STAT, -1}},
};

/* ---- the source ---- */

enum { T_CGROUP, T_MEMORY, T_IO, T__MAX };

static const js_table_t *const cgroup_tables[T__MAX + 1] = {[T_CGROUP] = &table_cgroup,
                                                            [T_MEMORY] = &table_cgroup_memory,
                                                            [T_IO] = &table_cgroup_io,
                                                            [T__MAX] = NULL};

#define FD_ABSENT (-2)

typedef struct {
    const js_cgroup_t *cg;    /* borrowed from ctx->scope */
    int fd[F__MAX];           /* open file, -1 not tried (not joined yet), FD_ABSENT */
    const char *used[F__MAX]; /* the name that opened */
    int version[F__MAX];      /* the hierarchy version each file was opened in */
    int hier[F__MAX];         /* and its index */
    bool run;                 /* run mode: read only what the command joined */
    bool reset_peaks; /* watch: v2 peaks reset for our descriptors (the window's, not the cgroup's life) */
    bool peak_reset;  /* memory.peak was */
    unsigned joined;  /* run mode: hierarchies the command was attached to */
    js_buf_t buf;
    js_buf_t buf2; /* v1 blkio: the second file */
} cgroup_state_t;

static void open_files(cgroup_state_t *st)
{
    for (int f = 0; f < F__MAX; f++) {
        if (st->fd[f] != -1)
            continue;
        st->fd[f] = FD_ABSENT;
        int version, h = cgroupfs_hier(st->cg, files[f].ctrl);
        int dir = cgroupfs_dir(st->cg, files[f].ctrl, &version);
        if (dir < 0 || (files[f].version && files[f].version != version))
            continue;
        if (st->run && !(st->joined & (1u << h)))
            continue;
        const char *name = files[f].name;
        int fd = -1;
        if (st->reset_peaks && version == 2 && (f == F_MEM_PEAK || f == F_SWAP_PEAK) &&
            (fd = cgroupfs_open_peak_reset(dir, name)) >= 0 && f == F_MEM_PEAK)
            st->peak_reset = true;
        if (fd < 0)
            fd = fs_open(dir, name);
        if (fd < 0 && files[f].alt)
            fd = fs_open(dir, name = files[f].alt);
        if (fd < 0)
            continue;
        st->fd[f] = fd;
        st->used[f] = name;
        st->version[f] = version;
        st->hier[f] = h;
    }
    /* nanosecond user/system where the kernel has them; ticks otherwise */
    if (st->fd[F_CPUACCT_USER] >= 0 && st->fd[F_CPUACCT_STAT] >= 0) {
        close(st->fd[F_CPUACCT_STAT]);
        st->fd[F_CPUACCT_STAT] = FD_ABSENT;
    }
}

static int cgroup_init(const js_ctx_t *ctx, void **ret_state, char *why, size_t whylen)
{
    cgroup_state_t *st = calloc(1, sizeof(*st));
    if (!st)
        return -ENOMEM;
    for (int f = 0; f < F__MAX; f++)
        st->fd[f] = -1;
    st->cg = ctx->scope.cgroup;
    st->run = ctx->mode == JS_MODE_RUN;
    /* a cgroup made for a run, or watched whole, counts from 0 already; a fixture tree is not the kernel */
    st->reset_peaks = !st->run && !ctx->scope.cgroup_whole && fsroot_is_live(&ctx->root);
    if (st->cg && !st->run)
        open_files(st);
    *ret_state = st;
    return 0;
}

static void cgroup_fini(void *state)
{
    cgroup_state_t *st = state;
    if (!st)
        return;
    for (int f = 0; f < F__MAX; f++)
        if (st->fd[f] >= 0)
            close(st->fd[f]);
    buf_free(&st->buf);
    buf_free(&st->buf2);
    free(st);
}

static int cgroup_prepare_child(void *state, js_ctx_t *ctx, pid_t child)
{
    cgroup_state_t *st = state;
    if (!st->cg)
        return 0;
    (void)child; /* it joined the cgroup itself, before exec (monitor_spawn) */
    st->joined = ctx->cg_joined;
    open_files(st);
    return ctx->cg_join_rc;
}

/* rd: read file f into b. 0 or -errno (-ENOENT when it is not open). */
static int rd(cgroup_state_t *st, int f, js_buf_t *b)
{
    if (st->fd[f] < 0)
        return -ENOENT;
    return fd_read_record(st->fd[f], b);
}

static int cgroup_collect(void *state, js_ctx_t *ctx, js_rows_t *const *rows)
{
    cgroup_state_t *st = state;
    (void)ctx;
    if (!st->cg || (st->run && !st->joined))
        return 0;
    js_value_t *c = rows_add(rows[T_CGROUP]);
    js_value_t *m = rows_add(rows[T_MEMORY]);
    if (!c || !m)
        return -ENOMEM;
    js_buf_t *b = &st->buf;

    if (rd(st, F_CPUACCT_USAGE, b) == 0)
        (void)cgroup_parse_value(b->p, &c[CG_USAGE_NS]);
    if (rd(st, F_CPUACCT_USER, b) == 0)
        (void)cgroup_parse_value(b->p, &c[CG_USER_NS]);
    if (rd(st, F_CPUACCT_SYS, b) == 0)
        (void)cgroup_parse_value(b->p, &c[CG_SYSTEM_NS]);
    if (rd(st, F_CPUACCT_STAT, b) == 0)
        (void)cgroup_parse_cpuacct_stat(b->p, c);
    if (rd(st, F_CPU_STAT_V1, b) == 0)
        (void)cgroup_parse_cpu_stat(b->p, c);
    if (rd(st, F_CPU_STAT_V2, b) == 0)
        (void)cgroup_parse_cpu_stat(b->p, c);
    if (rd(st, F_PIDS_CURRENT, b) == 0)
        (void)cgroup_parse_value(b->p, &c[CG_PIDS]);
    if (rd(st, F_PIDS_PEAK, b) == 0)
        (void)cgroup_parse_value(b->p, &c[CG_PIDS_PEAK]);
    static const int psi[3][2] = {{F_PSI_CPU, CG_PSI_CPU_SOME_US},
                                  {F_PSI_MEMORY, CG_PSI_MEMORY_SOME_US},
                                  {F_PSI_IO, CG_PSI_IO_SOME_US}};
    for (int i = 0; i < 3; i++)
        if (rd(st, psi[i][0], b) == 0)
            (void)cgroup_parse_pressure(b->p, psi[i][1], c);

    static const int single[][2] = {
        {F_MEM_USAGE_V1, CGM_CURRENT_BYTES}, {F_MEM_MAX_USAGE_V1, CGM_PEAK_BYTES},
        {F_MEMSW_USAGE, CGM_MEMSW_BYTES},    {F_MEMSW_MAX_USAGE, CGM_MEMSW_PEAK_BYTES},
        {F_MEM_FAILCNT, CGM_FAILCNT},        {F_MEM_CURRENT, CGM_CURRENT_BYTES},
        {F_MEM_PEAK, CGM_PEAK_BYTES},        {F_SWAP_CURRENT, CGM_SWAP_BYTES},
        {F_SWAP_PEAK, CGM_SWAP_PEAK_BYTES},
    };
    for (size_t i = 0; i < NKEYS(single); i++)
        if (rd(st, single[i][0], b) == 0)
            (void)cgroup_parse_value(b->p, &m[single[i][1]]);
    if (rd(st, F_MEM_STAT_V1, b) == 0)
        (void)cgroup_parse_memory_stat(b->p, 1, m);
    if (rd(st, F_MEM_STAT_V2, b) == 0)
        (void)cgroup_parse_memory_stat(b->p, 2, m);
    if (rd(st, F_OOM_CONTROL, b) == 0)
        (void)cgroup_parse_oom_control(b->p, m);
    if (rd(st, F_MEM_EVENTS, b) == 0)
        (void)cgroup_parse_memory_events(b->p, m);

    int r = 0;
    if (rd(st, F_IO_STAT, b) == 0)
        r = cgroup_parse_io_stat(b->p, rows[T_IO]);
    if (r == 0 && (st->fd[F_BLKIO_BYTES] >= 0 || st->fd[F_BLKIO_IOS] >= 0)) {
        bool have_b = rd(st, F_BLKIO_BYTES, b) == 0, have_i = rd(st, F_BLKIO_IOS, &st->buf2) == 0;
        r = cgroup_parse_blkio(have_b ? b->p : NULL, have_i ? st->buf2.p : NULL, rows[T_IO]);
    }
    return r;
}

/* split_environ: NUL-separated "NAME=value" strings (a <procfs>/PID/environ) into a NULL-terminated array
 * pointing into `b`. Returns the array (free it) or NULL. */
static char **split_environ(js_buf_t *b)
{
    size_t n = 0;
    for (size_t i = 0; i < b->len; i++)
        n += b->p[i] == '\0';
    char **v = calloc(n + 2, sizeof(*v));
    if (!v)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < b->len && k <= n;) {
        v[k++] = b->p + i;
        i += strlen(b->p + i) + 1;
    }
    v[k] = NULL;
    return v;
}

static void inv_num(js_rows_t *inv, const char *key, double v)
{
    if (isnan(v))
        return;
    if (v == floor(v) && fabs(v) < 9e15)
        inventory_addf(inv, "cgroup", key, "%lld", (long long)v);
    else
        inventory_addf(inv, "cgroup", key, "%.6g", v);
}

/* inventory_allocation: the allocation rows (also without a cgroup of jobscope's own: the process's cgroup).
 */
static void inventory_allocation(const js_ctx_t *ctx, const js_cgroup_t *cg, js_rows_t *inv)
{
    js_cgroup_t *own = NULL;
    pid_t pid = ctx->mode == JS_MODE_WATCH ? 0 : ctx->root_pid;
    if (!cg && pid > 0 && cgroupfs_open_pid(&ctx->root, pid, &own, NULL, 0) == 0)
        cg = own;
    /* run mode: the command inherited the monitor's environment; else the process's own, where readable */
    js_buf_t env = {0};
    char **envp = NULL;
    if (ctx->mode == JS_MODE_RUN) {
        envp = environ;
    } else if (pid > 0) {
        char path[48];
        snprintf(path, sizeof(path), "%d/environ", (int)pid);
        if (fs_read(ctx->root.proc, path, &env) == 0 && env.len)
            envp = split_environ(&env);
    }
    js_allocation_t a;
    allocation_resolve(&ctx->root, pid, cg, envp, &a);
    if (envp && envp != environ)
        free(envp);
    buf_free(&env);
    cgroupfs_free(own);

    inv_num(inv, "allocation.cores", a.cores);
    inventory_add(inv, "cgroup", "allocation.cores_bound", allocation_bound_name(a.cores_bound));
    inv_num(inv, "allocation.memory_limit_bytes", a.mem_limit_bytes);
    inventory_add(inv, "cgroup", "allocation.memory_limit_bound", allocation_bound_name(a.mem_bound));
    for (int b = 0; b < JS_ALLOC_BOUND_MAX; b++) {
        char key[96];
        snprintf(key, sizeof(key), "allocation.bound.%s", allocation_bound_name(b));
        inv_num(inv, key, a.value[b]);
    }
    if (a.cpuset[0])
        inventory_add(inv, "cgroup", "allocation.cpuset", a.cpuset);
    if (a.affinity[0])
        inventory_add(inv, "cgroup", "allocation.affinity", a.affinity);
    inv_num(inv, "limit.memory_high_bytes", a.memory_high_bytes);
    inv_num(inv, "limit.swap_max_bytes", a.swap_max_bytes);
    inv_num(inv, "limit.pids_max", a.pids_max);
}

static int cgroup_inventory(void *state, const js_ctx_t *ctx, js_rows_t *inv)
{
    cgroup_state_t *st = state;
    const js_cgroup_t *cg = st->cg && (!st->run || st->joined) ? st->cg : NULL;
    char buf[4096], key[128];
    if (cg) {
        inventory_add(inv, "cgroup", "cgroup.version", cgroupfs_version_name(cg));
        inventory_add(inv, "cgroup", "cgroup.created", st->run ? "1" : "0");
        if (ctx->scope.cgroup_whole)
            inventory_add(inv, "cgroup", "cgroup.whole",
                          "1"); /* counted from zero, like one made for a run */
        if (st->peak_reset)
            inventory_add(inv, "cgroup", "cgroup.peak_reset",
                          "1"); /* memory.peak counts from the watch's start */
        int main_h = -1;        /* the summary's one path: the memory cgroup's, else the first controller's */
        for (int c = 0; c < JS_CG_CTRL_MAX; c++) {
            int h = cgroupfs_hier(cg, (js_cg_ctrl_t)c);
            if (h < 0 || (st->run && !(st->joined & (1u << h))))
                continue;
            if (main_h < 0 || c == JS_CG_MEMORY)
                main_h = h;
            cgroupfs_describe(cg, h, buf, sizeof(buf));
            snprintf(key, sizeof(key), "cgroup.path.%s", cgroupfs_ctrl_name((js_cg_ctrl_t)c));
            inventory_add(inv, "cgroup", key, buf);
        }
        if (main_h >= 0)
            inventory_add(inv, "cgroup", "cgroup.path", cg->path[main_h]);
        for (size_t i = 0; i < sizeof(figure_files) / sizeof(figure_files[0]); i++)
            for (int k = 0; k < 3 && figure_files[i].f[k] >= 0; k++) {
                int f = figure_files[i].f[k];
                if (st->fd[f] < 0)
                    continue;
                cgroupfs_describe(cg, st->hier[f], buf, sizeof(buf));
                snprintf(key, sizeof(key), "file.%s.%s", figure_files[i].t->name,
                         figure_files[i].t->cols[figure_files[i].col].name);
                inventory_addf(inv, "cgroup", key, "%s/%s", buf, st->used[f]);
                break;
            }
    }
    inventory_allocation(ctx, cg, inv);
    return 0;
}

const js_source_t source_cgroup = {
    .name = "cgroup",
    .help = "the scope's cgroup: exact CPU, the tree's memory high-water mark, I/O, tasks, pressure",
    .tables = cgroup_tables,
    .init = cgroup_init,
    .collect = cgroup_collect,
    .fini = cgroup_fini,
    .prepare_child = cgroup_prepare_child,
    .inventory = cgroup_inventory,
};
