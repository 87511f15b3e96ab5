/* SPDX-License-Identifier: MIT
 *
 * Unit tests of the `system` source and the system-scope model: each procfs parser on strings (old and new
 * kernel formats, odd interface lines, missing meminfo keys), collect() on the fake procfs roots under
 * tests/fixtures/system (a recent kernel with PSI) and tests/fixtures/system-nopsi (an old kernel: 7-field
 * cpu lines, no MemAvailable, 14-field diskstats, no pressure/), counter_delta() on resets and 32-bit wraps,
 * and model_system on hand-built samples whose expected values are exact.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/counter.h"
#include "model/model_system.h"
#include "core/sample.h"
#include "sources/system.h"

#include <errno.h>
#include <string.h>

/* ---- helpers ---- */

#include "assert_value.h"
#include "sources/registry.h"
#define assert_rval(v, x)                                                                                    \
    do {                                                                                                     \
        assert_true((v).present);                                                                            \
        assert_true((v).d == (x));                                                                           \
    } while (0)

/* ---- parsers ---- */

static void test_parse_stat_modern(void **state)
{
    const char *text = "cpu  1542 3 1807 105062 300 1 27 11 5 2\n"
                       "cpu0 437 0 736 53193 7 0 7 4 0 0\n"
                       "cpu17 1104 3 1071 51869 292 1 20 7 5 2\n"
                       "intr 119581 0 0 14 0 108\n"
                       "ctxt 257934\n"
                       "btime 1795379900\n"
                       "processes 6798\n"
                       "procs_running 2\n"
                       "procs_blocked 1\n"
                       "softirq 86680 0 10660 3 738 32017 0 3 23872 0 19387\n";
    js_rows_t cpu;
    rows_init(&cpu, &table_cpu);
    js_value_t sys[SYSTEM__MAX] = {0};
    assert_int_equal(system_parse_stat(text, &cpu, sys), 0);
    assert_int_equal(cpu.nrows, 3);
    js_value_t *r = rows_row(&cpu, 0);
    assert_ival(r[CPU_CPU], -1);
    assert_ival(r[CPU_USER_TICKS], 1542);
    assert_ival(r[CPU_NICE_TICKS], 3);
    assert_ival(r[CPU_IDLE_TICKS], 105062);
    assert_ival(r[CPU_STEAL_TICKS], 11);
    assert_ival(r[CPU_GUEST_TICKS], 5);
    assert_ival(r[CPU_GUEST_NICE_TICKS], 2);
    r = rows_row(&cpu, 2);
    assert_ival(r[CPU_CPU], 17);
    assert_ival(r[CPU_SYSTEM_TICKS], 1071);
    assert_ival(sys[SYSTEM_CTXT_COUNT], 257934);
    assert_ival(sys[SYSTEM_INTR_COUNT], 119581);
    assert_ival(sys[SYSTEM_FORKS_COUNT], 6798);
    assert_ival(sys[SYSTEM_PROCS_RUNNING_COUNT], 2);
    assert_ival(sys[SYSTEM_PROCS_BLOCKED_COUNT], 1);
    assert_ival(sys[SYSTEM_BTIME_S], 1795379900);
    assert_missing(sys[SYSTEM_LOAD1]);
    assert_missing(sys[SYSTEM_PSI_CPU_SOME_TOTAL_US]);
    rows_free(&cpu);
}

static void test_parse_stat_old(void **state)
{
    /* 2.6.10: seven fields; 2.4: four fields and no procs_* lines */
    const char *text = "cpu  2255 34 2290 22625563 6290 127 456\n"
                       "cpu0 1132 34 1441 11311718\n"
                       "ctxt 1990473\n";
    js_rows_t cpu;
    rows_init(&cpu, &table_cpu);
    js_value_t sys[SYSTEM__MAX] = {0};
    assert_int_equal(system_parse_stat(text, &cpu, sys), 0);
    assert_int_equal(cpu.nrows, 2);
    js_value_t *r = rows_row(&cpu, 0);
    assert_ival(r[CPU_SOFTIRQ_TICKS], 456);
    assert_missing(r[CPU_STEAL_TICKS]);
    assert_missing(r[CPU_GUEST_TICKS]);
    assert_missing(r[CPU_GUEST_NICE_TICKS]);
    r = rows_row(&cpu, 1);
    assert_ival(r[CPU_CPU], 0);
    assert_ival(r[CPU_IDLE_TICKS], 11311718);
    assert_missing(r[CPU_IOWAIT_TICKS]);
    assert_ival(sys[SYSTEM_CTXT_COUNT], 1990473);
    assert_missing(sys[SYSTEM_FORKS_COUNT]);
    assert_missing(sys[SYSTEM_PROCS_RUNNING_COUNT]);

    rows_clear(&cpu);
    assert_int_equal(system_parse_stat("ctxt 1\nintr 2\n", &cpu, NULL), -EINVAL);
    assert_int_equal(system_parse_stat("", &cpu, NULL), -EINVAL);
    assert_int_equal(cpu.nrows, 0);
    rows_free(&cpu);
}

static void test_parse_loadavg(void **state)
{
    js_value_t sys[SYSTEM__MAX] = {0};
    assert_int_equal(system_parse_loadavg("0.08 10.06 123.01 1/97 6799\n", sys), 0);
    assert_rval(sys[SYSTEM_LOAD1], 0.08);
    assert_rval(sys[SYSTEM_LOAD5], 10.06);
    assert_rval(sys[SYSTEM_LOAD15], 123.01);
    assert_ival(sys[SYSTEM_RUNNABLE_TASKS_COUNT], 1);
    assert_ival(sys[SYSTEM_TOTAL_TASKS_COUNT], 97);

    js_value_t bad[SYSTEM__MAX] = {0};
    assert_int_equal(system_parse_loadavg("0.5 garbage", bad), -EINVAL);
    assert_rval(bad[SYSTEM_LOAD1], 0.5);
    assert_missing(bad[SYSTEM_LOAD5]);
}

static void test_parse_pressure(void **state)
{
    js_value_t sys[SYSTEM__MAX] = {0};
    /* cpu before 5.13: no "full" line */
    assert_int_equal(
        system_parse_pressure("some avg10=1.45 avg60=0.40 avg300=0.42 total=3573853\n", SYSTEM_PSI_CPU, sys),
        0);
    assert_ival(sys[SYSTEM_PSI_CPU_SOME_TOTAL_US], 3573853);
    assert_rval(sys[SYSTEM_PSI_CPU_SOME_AVG10_PCT], 1.45);
    assert_missing(sys[SYSTEM_PSI_CPU_FULL_TOTAL_US]);
    assert_missing(sys[SYSTEM_PSI_CPU_FULL_AVG10_PCT]);

    assert_int_equal(system_parse_pressure("some avg10=0.32 avg60=0.10 avg300=0.27 total=2321961\n"
                                           "full avg10=0.18 avg60=0.06 avg300=0.26 total=2233629\n",
                                           SYSTEM_PSI_IO, sys),
                     0);
    assert_ival(sys[SYSTEM_PSI_IO_SOME_TOTAL_US], 2321961);
    assert_ival(sys[SYSTEM_PSI_IO_FULL_TOTAL_US], 2233629);
    assert_rval(sys[SYSTEM_PSI_IO_FULL_AVG10_PCT], 0.18);
    assert_missing(sys[SYSTEM_PSI_MEMORY_SOME_TOTAL_US]);

    assert_int_equal(system_parse_pressure("", SYSTEM_PSI_MEMORY, sys), -EINVAL);
    assert_int_equal(system_parse_pressure("some total=1\n", SYSTEM_PSI_MAX, sys), -EINVAL);
}

static void test_parse_meminfo(void **state)
{
    const char *text = "MemTotal:        1024000 kB\n"
                       "MemFree:          512000 kB\n"
                       "Active(anon):       1480 kB\n"
                       "Inactive(anon):     4792 kB\n"
                       "Active:             7584 kB\n"
                       "SwapTotal:             0 kB\n"
                       "HugePages_Total:      16\n"
                       "HugePages_Free:        4\n"
                       "Hugepagesize:       2048 kB\n"
                       "DirectMap1G:    25165824 kB";
    js_value_t mem[MEM__MAX] = {0};
    assert_int_equal(system_parse_meminfo(text, mem), 0);
    assert_ival(mem[MEM_TOTAL_BYTES], 1024000 * 1024LL);
    assert_ival(mem[MEM_FREE_BYTES], 512000 * 1024LL);
    assert_ival(mem[MEM_ACTIVE_BYTES], 7584 * 1024LL); /* not Active(anon) */
    assert_missing(mem[MEM_INACTIVE_BYTES]);           /* only Inactive(anon) is there */
    assert_ival(mem[MEM_SWAP_TOTAL_BYTES], 0);         /* present zero, not missing */
    assert_missing(mem[MEM_AVAILABLE_BYTES]);          /* before 3.14 */
    assert_missing(mem[MEM_SWAP_FREE_BYTES]);
    assert_ival(mem[MEM_HUGEPAGES_TOTAL_COUNT], 16); /* a count: no kB */
    assert_ival(mem[MEM_HUGEPAGES_FREE_COUNT], 4);
    assert_ival(mem[MEM_HUGEPAGESIZE_BYTES], 2048 * 1024LL);
}

static void test_parse_net_dev(void **state)
{
    const char *text = "Inter-|   Receive                                                |  Transmit\n"
                       " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets "
                       "errs drop fifo colls "
                       "carrier compressed\n"
                       "    lo:    3267      29    0    0    0     0          0         0     3267      29   "
                       " 0    0    0     0    "
                       "   0          0\n"
                       "  eth0:123456789012  9876543    1    2    3     4          5         6 98765432109 "
                       "8765432    7    8    9 "
                       "   10      11         12\n"
                       "br-3f.10:1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"
                       "odd:name: 1 2\n";
    js_rows_t net;
    rows_init(&net, &table_net);
    assert_int_equal(system_parse_net_dev(text, &net), 0);
    assert_int_equal(net.nrows, 4);
    js_value_t *r = rows_row(&net, 0);
    assert_string_equal(rows_str(&net, &r[NETDEV_IFACE]), "lo");
    assert_ival(r[NETDEV_RX_BYTES], 3267);
    assert_ival(r[NETDEV_TX_PACKETS], 29);
    r = rows_row(&net, 1);
    assert_string_equal(rows_str(&net, &r[NETDEV_IFACE]), "eth0");
    assert_ival(r[NETDEV_RX_BYTES], 123456789012LL);
    assert_ival(r[NETDEV_RX_PACKETS], 9876543);
    assert_ival(r[NETDEV_RX_MULTICAST], 6);
    assert_ival(r[NETDEV_TX_BYTES], 98765432109LL);
    assert_ival(r[NETDEV_TX_COLLS], 10);
    assert_ival(r[NETDEV_TX_COMPRESSED], 12);
    r = rows_row(&net, 2);
    assert_string_equal(rows_str(&net, &r[NETDEV_IFACE]), "br-3f.10");
    for (int c = NETDEV_RX_BYTES; c < NETDEV__MAX; c++)
        assert_ival(r[c], c);
    r = rows_row(&net, 3);
    assert_string_equal(rows_str(&net, &r[NETDEV_IFACE]), "odd:name");
    assert_ival(r[NETDEV_RX_PACKETS], 2);
    assert_missing(r[NETDEV_RX_ERRS]);
    rows_free(&net);
}

static void test_parse_diskstats(void **state)
{
    const char *text = "   8       0 sda 4000 100 80000 1200 3000 200 64000 900 0 1800 2100\n"
                       " 254       0 vda 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n"
                       " 259       0 nvme0n1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n"
                       "   3       1 hda1 355 2840 1025 8200\n"
                       "   7       0 loop0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n"
                       "   1       0 ram0 1 2 3 4 5 6 7 8 9 10 11\n"
                       " 253       0 zram0 1 2 3 4 5 6 7 8 9 10 11\n"
                       "   7       9 loopback 1 2 3 4 5 6 7 8 9 10 11\n"
                       "garbage line\n";
    js_rows_t disk;
    rows_init(&disk, &table_disk);
    assert_int_equal(system_parse_diskstats(text, &disk), 0);
    assert_int_equal(disk.nrows, 5); /* loop0, ram0, zram0 skipped; "loopback" is not a loop device */
    assert_string_equal(rows_str(&disk, &rows_row(&disk, 4)[DISK_DEVICE]), "loopback");

    js_value_t *r = rows_row(&disk, 0); /* 14 fields */
    assert_ival(r[DISK_MAJOR], 8);
    assert_ival(r[DISK_MINOR], 0);
    assert_string_equal(rows_str(&disk, &r[DISK_DEVICE]), "sda");
    assert_ival(r[DISK_SECTORS_READ], 80000);
    assert_ival(r[DISK_IOS_IN_PROGRESS], 0);
    assert_ival(r[DISK_WEIGHTED_IO_MS], 2100);
    assert_missing(r[DISK_DISCARDS_COMPLETED]);
    assert_missing(r[DISK_FLUSH_MS]);

    r = rows_row(&disk, 1); /* 18 fields */
    assert_string_equal(rows_str(&disk, &r[DISK_DEVICE]), "vda");
    for (int c = DISK_READS_COMPLETED; c <= DISK_DISCARD_MS; c++)
        assert_ival(r[c], c - DISK_READS_COMPLETED + 1);
    assert_missing(r[DISK_FLUSH_COMPLETED]);
    assert_missing(r[DISK_FLUSH_MS]);

    r = rows_row(&disk, 2); /* 20 fields */
    assert_string_equal(rows_str(&disk, &r[DISK_DEVICE]), "nvme0n1");
    assert_ival(r[DISK_FLUSH_COMPLETED], 16);
    assert_ival(r[DISK_FLUSH_MS], 17);

    r = rows_row(&disk, 3); /* 2.6.24 partition: reads, sectors read, writes, sectors written */
    assert_string_equal(rows_str(&disk, &r[DISK_DEVICE]), "hda1");
    assert_ival(r[DISK_READS_COMPLETED], 355);
    assert_ival(r[DISK_SECTORS_READ], 2840);
    assert_ival(r[DISK_WRITES_COMPLETED], 1025);
    assert_ival(r[DISK_SECTORS_WRITTEN], 8200);
    assert_missing(r[DISK_READS_MERGED]);
    assert_missing(r[DISK_READ_MS]);
    rows_free(&disk);
}

static void test_table_descriptors(void **state)
{
    const js_table_t *const *t = source_system.tables;
    assert_ptr_equal(t[0], &table_cpu);
    assert_ptr_equal(t[1], &table_system);
    assert_ptr_equal(t[2], &table_memory);
    assert_ptr_equal(t[3], &table_net);
    assert_ptr_equal(t[4], &table_disk);
    assert_null(t[5]);
    for (; *t; t++)
        for (size_t i = 0; i < (*t)->ncols; i++) {
            const js_column_t *c = &(*t)->cols[i];
            assert_non_null(c->name);
            assert_non_null(c->unit);
            assert_non_null(c->help);
            assert_int_equal(table_column(*t, c->name), (int)i); /* names unique */
            assert_true(c->kind == JS_COUNTER ? c->width >= 32 : c->width == 0);
        }
    assert_int_equal(table_disk.cols[DISK_READ_MS].width, 32);
    assert_int_equal(table_cpu.ncols, CPU__MAX);
    assert_string_equal(table_cpu.cols[CPU_GUEST_NICE_TICKS].name, "guest_nice_ticks");
    assert_string_equal(table_memory.cols[MEM_HUGEPAGES_TOTAL_COUNT].name, "hugepages_total_count");
}

/* ---- collect() on fixture roots ---- */

typedef struct {
    js_ctx_t ctx;
    void *state;
    js_rows_t rows[5];
    js_rows_t *rowp[5];
} collect_t;

static int collect_open(collect_t *c, const char *root)
{
    memset(c, 0, sizeof(*c));
    assert_int_equal(fsroot_open(&c->ctx.root, root, NULL), 0);
    assert_int_equal(source_system.init(&c->ctx, &c->state, NULL, 0), 0);
    for (int i = 0; i < 5; i++) {
        rows_init(&c->rows[i], source_system.tables[i]);
        c->rowp[i] = &c->rows[i];
    }
    return source_system.collect(c->state, &c->ctx, c->rowp);
}

static void collect_close(collect_t *c)
{
    for (int i = 0; i < 5; i++)
        rows_free(&c->rows[i]);
    source_system.fini(c->state);
    fsroot_close(&c->ctx.root);
}

static void test_collect_fixture(void **state)
{
    collect_t c;
    assert_int_equal(collect_open(&c, FIXTURES "/system"), 0);
    js_rows_t *cpu = &c.rows[0], *sys = &c.rows[1], *mem = &c.rows[2], *net = &c.rows[3], *disk = &c.rows[4];
    assert_int_equal(cpu->nrows, 3);
    assert_ival(rows_row(cpu, 0)[CPU_CPU], -1);
    assert_ival(rows_row(cpu, 0)[CPU_USER_TICKS], 1542);
    assert_ival(rows_row(cpu, 0)[CPU_GUEST_NICE_TICKS], 0);
    assert_ival(rows_row(cpu, 2)[CPU_CPU], 1);

    assert_int_equal(sys->nrows, 1);
    js_value_t *s = rows_row(sys, 0);
    assert_ival(s[SYSTEM_CTXT_COUNT], 257934);
    assert_ival(s[SYSTEM_INTR_COUNT], 119581);
    assert_ival(s[SYSTEM_FORKS_COUNT], 6798);
    assert_rval(s[SYSTEM_LOAD1], 0.08);
    assert_ival(s[SYSTEM_TOTAL_TASKS_COUNT], 97);
    assert_ival(s[SYSTEM_PSI_CPU_FULL_TOTAL_US], 0);
    assert_ival(s[SYSTEM_PSI_MEMORY_FULL_TOTAL_US], 2758954);
    assert_ival(s[SYSTEM_PSI_IO_SOME_TOTAL_US], 1234567);
    assert_ival(s[SYSTEM_PSI_IO_FULL_TOTAL_US], 765432);
    assert_rval(s[SYSTEM_PSI_IO_SOME_AVG10_PCT], 1.5);

    assert_int_equal(mem->nrows, 1);
    js_value_t *m = rows_row(mem, 0);
    assert_ival(m[MEM_TOTAL_BYTES], 24684092LL * 1024);
    assert_ival(m[MEM_AVAILABLE_BYTES], 24396032LL * 1024);
    for (int i = 0; i < MEM__MAX; i++)
        assert_true(m[i].present);

    assert_int_equal(net->nrows, 4);
    assert_string_equal(rows_str(net, &rows_row(net, 2)[NETDEV_IFACE]), "eth0");
    assert_ival(rows_row(net, 2)[NETDEV_RX_BYTES], 123456789012LL);
    assert_string_equal(rows_str(net, &rows_row(net, 3)[NETDEV_IFACE]), "br-3f.10");

    assert_int_equal(disk->nrows, 2); /* loop0, loop1 and zram0 are ignored */
    js_value_t *d = rows_row(disk, 0);
    assert_string_equal(rows_str(disk, &d[DISK_DEVICE]), "vda");
    assert_ival(d[DISK_MAJOR], 254);
    assert_ival(d[DISK_SECTORS_WRITTEN], 463688);
    assert_ival(d[DISK_FLUSH_MS], 18);

    /* a second sample into cleared buffers gives the same rows */
    for (int i = 0; i < 5; i++)
        rows_clear(&c.rows[i]);
    assert_int_equal(source_system.collect(c.state, &c.ctx, c.rowp), 0);
    assert_int_equal(cpu->nrows, 3);
    assert_int_equal(net->nrows, 4);
    assert_string_equal(rows_str(net, &rows_row(net, 3)[NETDEV_IFACE]), "br-3f.10");
    collect_close(&c);
}

static void test_collect_fixture_nopsi(void **state)
{
    collect_t c;
    assert_int_equal(collect_open(&c, FIXTURES "/system-nopsi"), 0);
    js_rows_t *cpu = &c.rows[0], *sys = &c.rows[1], *mem = &c.rows[2], *net = &c.rows[3], *disk = &c.rows[4];
    assert_int_equal(cpu->nrows, 3);
    js_value_t *r = rows_row(cpu, 0);
    assert_ival(r[CPU_SOFTIRQ_TICKS], 456);
    assert_missing(r[CPU_STEAL_TICKS]);
    assert_missing(r[CPU_GUEST_NICE_TICKS]);

    js_value_t *s = rows_row(sys, 0);
    assert_ival(s[SYSTEM_CTXT_COUNT], 1990473);
    assert_ival(s[SYSTEM_INTR_COUNT], 114930548);
    assert_rval(s[SYSTEM_LOAD1], 1.25);
    for (int i = SYSTEM_PSI_CPU_SOME_TOTAL_US; i <= SYSTEM_PSI_IO_FULL_AVG10_PCT; i++)
        assert_missing(s[i]);

    js_value_t *m = rows_row(mem, 0);
    assert_ival(m[MEM_TOTAL_BYTES], 1024000LL * 1024);
    assert_missing(m[MEM_AVAILABLE_BYTES]);
    assert_missing(m[MEM_SRECLAIMABLE_BYTES]);

    assert_int_equal(net->nrows, 2);
    assert_ival(rows_row(net, 1)[NETDEV_RX_BYTES], 4294967295LL);

    assert_int_equal(disk->nrows, 2);
    assert_ival(rows_row(disk, 0)[DISK_WEIGHTED_IO_MS], 2100);
    assert_missing(rows_row(disk, 0)[DISK_DISCARDS_COMPLETED]);
    collect_close(&c);
}

static void test_collect_no_stat(void **state)
{
    collect_t c;
    /* the fixtures directory itself has no stat: the source fails, other files simply missing */
    assert_int_equal(collect_open(&c, FIXTURES), -ENOENT);
    assert_int_equal(c.rows[0].nrows, 0);
    assert_int_equal(c.rows[1].nrows, 1);
    assert_missing(rows_row(&c.rows[1], 0)[SYSTEM_LOAD1]);
    assert_int_equal(c.rows[2].nrows, 1);
    assert_missing(rows_row(&c.rows[2], 0)[MEM_TOTAL_BYTES]);
    collect_close(&c);
}

/* ---- counter_delta ---- */

static js_value_t u(uint64_t x)
{
    js_value_t v = {.present = true, .i = (int64_t)x};
    return v;
}

static void test_counter_delta(void **state)
{
    /* a fake 32-bit counter column, as the kernel prints unsigned int */
    static const js_column_t cols[] = {{"x_ms", "ms", JS_INT, JS_COUNTER, 32, "a 32-bit counter"}};
    static const js_table_t fake = {"fake", "test", 1, cols};
    unsigned w32 = fake.cols[0].width;
    uint64_t d = 99;
    js_value_t none = {.present = false, .i = 0};

    js_value_t a = u(100), b = u(250);
    assert_int_equal(counter_delta(&a, &b, 64, &d), 0);
    assert_int_equal(d, 150);
    a = u(7), b = u(7);
    assert_int_equal(counter_delta(&a, &b, 64, &d), 0);
    assert_int_equal(d, 0);

    d = 99;
    assert_int_equal(counter_delta(&none, &b, 64, &d), -ENODATA);
    assert_int_equal(counter_delta(&a, &none, 64, &d), -ENODATA);
    assert_int_equal(d, 99);

    a = u(1000), b = u(10); /* 64-bit decrease: reset */
    assert_int_equal(counter_delta(&a, &b, 64, &d), -ERANGE);
    assert_int_equal(counter_delta(&a, &b, 0, &d), -ERANGE);
    assert_int_equal(d, 99);

    a = u(UINT32_MAX - 5), b = u(10); /* 32-bit wrap: 6 steps to 0, then 10 */
    assert_int_equal(counter_delta(&a, &b, w32, &d), 0);
    assert_int_equal(d, 16);

    a = u((uint64_t)1 << 33), b = u(10); /* does not fit 32 bits: a reset, not a wrap */
    assert_int_equal(counter_delta(&a, &b, w32, &d), -ERANGE);

    a = u(UINT64_MAX - 1), b = u(UINT64_MAX); /* the full unsigned range */
    assert_int_equal(counter_delta(&a, &b, 64, &d), 0);
    assert_int_equal(d, 1);
}

/* ---- model_system ---- */

static js_value_t *add_row(js_sample_t *s, const js_table_t *t)
{
    js_value_t *row = rows_add(sample_rows(s, t));
    assert_non_null(row);
    return row;
}

static void add_cpu(js_sample_t *s, int64_t id, const uint64_t ticks[10])
{
    js_value_t *r = add_row(s, &table_cpu);
    val_int(&r[CPU_CPU], id);
    for (int i = 0; i < 10; i++)
        r[CPU_USER_TICKS + i] = u(ticks[i]);
}

static void add_named(js_sample_t *s, const js_table_t *t, int label, const char *name, int col, uint64_t x)
{
    js_rows_t *rows = sample_rows(s, t);
    js_value_t *r = rows_add(rows);
    assert_non_null(r);
    assert_int_equal(rows_set_str(rows, &r[label], name, strlen(name)), 0);
    r[col] = u(x);
}

static int col_of(const model_system_t *m, const char *name)
{
    const char *const *cols;
    size_t n = model_system_columns(m, &cols);
    for (size_t i = 0; i < n; i++)
        if (strcmp(cols[i], name) == 0)
            return (int)i;
    fail_msg("no column %s", name);
    return -1;
}

static void assert_cell_real(const js_cell_t *c, double x)
{
    assert_int_equal(c->type, CELL_REAL);
    assert_true(c->d == x);
}

static void test_model_system(void **state)
{
    js_sample_t s;
    assert_int_equal(sample_init(&s), 0);
    model_system_t *m = model_system_new();
    assert_non_null(m);
    const char *const *cols;
    assert_int_equal(model_system_columns(m, &cols), 0);
    assert_null(model_system_row(m));
    int t_col = table_column(&table_samples, "t_mono_ns");
    assert_true(t_col >= 0);

    /* sample A at t = 1 s */
    val_int(&add_row(&s, &table_samples)[t_col], 1000000000);
    /*                      user nice sys idle iowait irq soft steal guest gnice */
    add_cpu(&s, -1, (const uint64_t[10]){100, 0, 50, 800, 50, 0, 0, 0, 10, 0});
    add_cpu(&s, 0, (const uint64_t[10]){50, 0, 25, 400, 25, 0, 0, 0, 5, 0});
    add_cpu(&s, 1, (const uint64_t[10]){50, 0, 25, 400, 25, 0, 0, 0, 5, 0});
    js_value_t *sys = add_row(&s, &table_system);
    sys[SYSTEM_CTXT_COUNT] = u(1000);
    sys[SYSTEM_FORKS_COUNT] = u(500);
    sys[SYSTEM_PSI_CPU_SOME_TOTAL_US] = u(0);
    val_real(&sys[SYSTEM_LOAD1], 0.5);
    js_value_t *mem = add_row(&s, &table_memory);
    mem[MEM_TOTAL_BYTES] = u(1000);
    mem[MEM_AVAILABLE_BYTES] = u(600);
    add_named(&s, &table_net, NETDEV_IFACE, "eth0", NETDEV_RX_BYTES, 1000);
    add_named(&s, &table_disk, DISK_DEVICE, "sda", DISK_SECTORS_READ, 0);

    assert_int_equal(model_system_feed(m, &s), 0);
    size_t n = model_system_columns(m, &cols);
    assert_int_equal(n, 3 + 18 + 2 + 2);
    assert_string_equal(cols[0], "cpu_util_fraction");
    assert_string_equal(cols[1], "cpu0_util_fraction");
    assert_string_equal(cols[2], "cpu1_util_fraction");
    assert_string_equal(cols[3], "iowait_fraction");
    assert_string_equal(cols[n - 4], "net_eth0_rx_bytes_per_s");
    assert_string_equal(cols[n - 3], "net_eth0_tx_bytes_per_s");
    assert_string_equal(cols[n - 2], "disk_sda_read_bytes_per_s");
    assert_string_equal(cols[n - 1], "disk_sda_write_bytes_per_s");
    const js_cell_t *row = model_system_row(m);
    assert_int_equal(row[col_of(m, "cpu_util_fraction")].type, CELL_MISSING);
    assert_int_equal(row[col_of(m, "ctxt_per_s")].type, CELL_MISSING);
    assert_int_equal(row[col_of(m, "net_eth0_rx_bytes_per_s")].type, CELL_MISSING);
    assert_int_equal(row[col_of(m, "mem_total_bytes")].type, CELL_INT);
    assert_int_equal(row[col_of(m, "mem_used_bytes")].i, 400);
    assert_cell_real(&row[col_of(m, "load1")], 0.5);

    /* sample B at t = 3 s */
    sample_clear(&s);
    val_int(&add_row(&s, &table_samples)[t_col], 3000000000);
    /* aggregate: Δbusy = 60 + 20 = 80 (guest +10 already in user), Δidle = 100 + 20 -> 80 / 200 */
    add_cpu(&s, -1, (const uint64_t[10]){160, 0, 70, 900, 70, 0, 0, 0, 20, 0});
    /* cpu0: user went backwards -> reset; cpu1 is gone (offline) */
    add_cpu(&s, 0, (const uint64_t[10]){10, 0, 30, 450, 25, 0, 0, 0, 5, 0});
    sys = add_row(&s, &table_system);
    sys[SYSTEM_CTXT_COUNT] = u(3000);
    sys[SYSTEM_FORKS_COUNT] = u(400); /* reset */
    sys[SYSTEM_PSI_CPU_SOME_TOTAL_US] = u(500000);
    mem = add_row(&s, &table_memory);
    mem[MEM_TOTAL_BYTES] = u(1000);
    add_named(&s, &table_net, NETDEV_IFACE, "eth0", NETDEV_RX_BYTES, 5000);
    add_named(&s, &table_disk, DISK_DEVICE, "sda", DISK_SECTORS_READ, 4000);

    assert_int_equal(model_system_feed(m, &s), 0);
    assert_int_equal(model_system_columns(m, &cols), n);
    row = model_system_row(m);
    assert_cell_real(&row[col_of(m, "cpu_util_fraction")], 0.4);
    assert_cell_real(&row[col_of(m, "iowait_fraction")], 0.1);
    assert_cell_real(&row[col_of(m, "steal_fraction")], 0.0);
    assert_cell_real(&row[col_of(m, "user_fraction")], 0.3); /* user + nice: 60 of 200 */
    assert_cell_real(&row[col_of(m, "idle_fraction")], 0.5); /* idle alone: 100 of 200 */
    assert_int_equal(row[col_of(m, "cpu0_util_fraction")].type, CELL_MISSING);
    assert_int_equal(row[col_of(m, "cpu1_util_fraction")].type, CELL_MISSING);
    assert_cell_real(&row[col_of(m, "ctxt_per_s")], 1000.0);
    assert_int_equal(row[col_of(m, "forks_per_s")].type, CELL_MISSING);
    assert_cell_real(&row[col_of(m, "psi_cpu_some_fraction")], 0.25);
    assert_int_equal(row[col_of(m, "psi_io_full_fraction")].type, CELL_MISSING);
    assert_int_equal(row[col_of(m, "mem_total_bytes")].i, 1000);
    assert_int_equal(row[col_of(m, "mem_used_bytes")].type, CELL_MISSING); /* MemAvailable missing */
    assert_int_equal(row[col_of(m, "mem_available_bytes")].type, CELL_MISSING);
    assert_int_equal(row[col_of(m, "swap_used_bytes")].type, CELL_MISSING);
    assert_int_equal(row[col_of(m, "load1")].type, CELL_MISSING);
    assert_cell_real(&row[col_of(m, "net_eth0_rx_bytes_per_s")], 2000.0);
    assert_int_equal(row[col_of(m, "net_eth0_tx_bytes_per_s")].type, CELL_MISSING);
    assert_cell_real(&row[col_of(m, "disk_sda_read_bytes_per_s")], 4000.0 * 512 / 2);
    assert_int_equal(row[col_of(m, "disk_sda_write_bytes_per_s")].type, CELL_MISSING);

    /* sample C, same time stamp: no interval, every rate missing */
    sample_clear(&s);
    val_int(&add_row(&s, &table_samples)[t_col], 3000000000);
    add_cpu(&s, -1, (const uint64_t[10]){200, 0, 70, 900, 70, 0, 0, 0, 20, 0});
    sys = add_row(&s, &table_system);
    sys[SYSTEM_CTXT_COUNT] = u(4000);
    assert_int_equal(model_system_feed(m, &s), 0);
    row = model_system_row(m);
    assert_cell_real(&row[col_of(m, "cpu_util_fraction")], 1.0); /* ticks, not time: still defined */
    assert_int_equal(row[col_of(m, "ctxt_per_s")].type, CELL_MISSING);

    model_system_free(m);
    model_system_free(NULL);
    sample_free(&s);
}

static void test_model_system_fixture(void **state)
{
    /* the fixture sampled twice one second apart, collected straight into the sample's buffers: every rate
     * present and zero, cells named per entity */
    collect_t c;
    assert_int_equal(collect_open(&c, FIXTURES "/system"), 0);
    js_sample_t s;
    assert_int_equal(sample_init(&s), 0);
    model_system_t *m = model_system_new();
    assert_non_null(m);
    int t_col = table_column(&table_samples, "t_mono_ns");
    for (int k = 0; k < 2; k++) {
        sample_clear(&s);
        val_int(&add_row(&s, &table_samples)[t_col], 1000000000LL * (k + 1));
        js_rows_t *rowp[5];
        for (int i = 0; i < 5; i++)
            rowp[i] = sample_rows(&s, source_system.tables[i]);
        assert_int_equal(source_system.collect(c.state, &c.ctx, rowp), 0);
        assert_int_equal(model_system_feed(m, &s), 0);
    }
    const char *const *cols;
    size_t n = model_system_columns(m, &cols);
    assert_int_equal(n, 3 + 18 + 2 * 4 + 2 * 2);
    const js_cell_t *row = model_system_row(m);
    assert_int_equal(row[col_of(m, "mem_total_bytes")].i, 24684092LL * 1024);
    assert_int_equal(row[col_of(m, "mem_used_bytes")].i, (24684092LL - 24396032LL) * 1024);
    assert_int_equal(row[col_of(m, "cpu_util_fraction")].type, CELL_MISSING); /* no ticks elapsed */
    assert_cell_real(&row[col_of(m, "ctxt_per_s")], 0.0);
    assert_cell_real(&row[col_of(m, "psi_io_full_fraction")], 0.0);
    assert_cell_real(&row[col_of(m, "net_br-3f.10_tx_bytes_per_s")], 0.0);
    assert_cell_real(&row[col_of(m, "disk_vda1_write_bytes_per_s")], 0.0);
    model_system_free(m);
    sample_free(&s);
    collect_close(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_stat_modern), cmocka_unit_test(test_parse_stat_old),
        cmocka_unit_test(test_parse_loadavg),     cmocka_unit_test(test_parse_pressure),
        cmocka_unit_test(test_parse_meminfo),     cmocka_unit_test(test_parse_net_dev),
        cmocka_unit_test(test_parse_diskstats),   cmocka_unit_test(test_table_descriptors),
        cmocka_unit_test(test_collect_fixture),   cmocka_unit_test(test_collect_fixture_nopsi),
        cmocka_unit_test(test_collect_no_stat),   cmocka_unit_test(test_counter_delta),
        cmocka_unit_test(test_model_system),      cmocka_unit_test(test_model_system_fixture),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
