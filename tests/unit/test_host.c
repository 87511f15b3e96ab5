/* SPDX-License-Identifier: MIT
 *
 * Unit tests of the `host` inventory source and of the sysfs attribute helpers it and the node sources use.
 * The inventory on tests/fixtures/node (2 sockets x 2 cores x 2 threads with non-contiguous core ids, L1d,
 * L1i, L2 per core and L3 per socket, 2 NUMA nodes) and on tests/fixtures/node-vm (like the development VM:
 * topology but no cache directories, so cpuinfo's "cache size"; one NUMA node). The helpers: CPU lists,
 * whole-string integers, directory listings in natural order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sys/parse.h"
#include "sys/sysattr.h"

#include "node_fixture.h"

extern const js_source_t source_host;

static void test_cpulist(void **state)
{
    (void)state;
    uint64_t set[2];
    assert_int_equal(cpulist_parse("0-3,8,10-11\n", set, 128), 7);
    assert_true(cpulist_has(set, 128, 0) && cpulist_has(set, 128, 3) && cpulist_has(set, 128, 8));
    assert_false(cpulist_has(set, 128, 4) || cpulist_has(set, 128, 9) || cpulist_has(set, 128, 12));
    assert_int_equal(cpulist_parse("64-65", set, 128), 2);
    assert_true(cpulist_has(set, 128, 65));
    assert_int_equal(cpulist_parse("", set, 128), 0);
    assert_int_equal(cpulist_parse("\n", NULL, 0), 0);
    assert_int_equal(cpulist_parse("200", set, 128), 1); /* counted, not set */
    assert_false(cpulist_has(set, 128, 200));
    assert_int_equal(cpulist_parse("3-1", set, 128), -EINVAL);
    assert_int_equal(cpulist_parse("1,x", set, 128), -EINVAL);
    assert_int_equal(cpulist_parse("1-", set, 128), -EINVAL);
    /* one parser, one set of bounds, whichever form the caller wants (the bitmap, the count, the numbers) */
    int c[8];
    assert_int_equal(cpulist_parse_ints("0-2 , 5\n", c, 8), 4);
    assert_true(c[0] == 0 && c[2] == 2 && c[3] == 5);
    assert_int_equal(cpulist_parse(" 0-2 , 5\n", set, 128), 4);
    assert_int_equal(cpulist_parse("0-1048575", NULL, 0), 1048576); /* a range of 2^20 CPUs */
    assert_int_equal(cpulist_parse("0-1048576", NULL, 0), -EINVAL); /* one more: not a CPU list */
    assert_int_equal(cpulist_parse_ints("0-1048576", c, 8), -EINVAL);
    assert_int_equal(cpulist_parse_ints("2147483648", c, 8), -ERANGE); /* not an int */
}

static void test_parse_i64(void **state)
{
    (void)state;
    int64_t v = 0;
    assert_int_equal(sysattr_parse_i64("123", &v), 0);
    assert_int_equal(v, 123);
    assert_int_equal(sysattr_parse_i64(" -45\n", &v), 0);
    assert_int_equal(v, -45);
    assert_int_equal(sysattr_parse_i64("N/A (no PMA)", &v), -EINVAL);
    assert_int_equal(sysattr_parse_i64("", &v), -EINVAL);
    assert_int_equal(sysattr_parse_i64("3.5", &v), -EINVAL);
    assert_int_equal(sysattr_parse_i64("12 13", &v), -EINVAL);
    assert_int_equal(v, -45);
}

static void test_list_natural_order(void **state)
{
    (void)state;
    int sys = open(FIXTURES "/node/sys", O_RDONLY | O_DIRECTORY);
    assert_true(sys >= 0);
    char **names;
    assert_int_equal(sysattr_list(sys, "class/hwmon", "hwmon", &names), 4);
    assert_string_equal(names[0], "hwmon0");
    assert_string_equal(names[1], "hwmon1");
    assert_string_equal(names[2], "hwmon2");
    assert_string_equal(names[3], "hwmon10");
    assert_null(names[4]);
    sysattr_list_free(names);
    assert_int_equal(sysattr_list(sys, "class/nothing", "", &names), -ENOENT);
    assert_null(names);
    char buf[8];
    assert_int_equal(sysattr_read_str(sys, "class/hwmon/hwmon0/name", buf, sizeof(buf)), 7);
    assert_string_equal(buf, "coretem"); /* cut at cap - 1 */
    close(sys);
}

static void test_inventory_two_sockets(void **state)
{
    (void)state;
    src_run_t r;
    src_open(&r, &source_host, FIXTURES "/node");
    assert_int_equal(r.init_rc, 0);
    assert_null(source_host.collect); /* inventory only */
    assert_null(source_host.tables[0]);
    static const char *const expect[][2] = {
        {"hostname", "node042"},
        {"kernel.release", "5.14.0-427.el9.x86_64"},
        {"boot_id", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"},
        {"cpu.vendor", "GenuineIntel"},
        {"cpu.model", "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz"},
        {"cpu.family", "6"},
        {"cpu.model_id", "85"},
        {"cpu.stepping", "7"},
        {"cpu.microcode", "0x5003604"},
        {"cpu.online", "0-7"},
        {"cpu.count", "8"},
        {"cpu.sockets", "2"},
        {"cpu.cores", "4"},
        {"cpu.threads", "8"},
        {"cpu.cores_per_socket", "2"},
        {"cpu.threads_per_core", "2"},
        {"cache.L1d.size_bytes", "32768"},
        {"cache.L1d.instances", "4"},
        {"cache.L1d.total_bytes", "131072"},
        {"cache.L1d.shared_cpus", "2"},
        {"cache.L1i.instances", "4"},
        {"cache.L2.size_bytes", "1048576"},
        {"cache.L2.instances", "4"},
        {"cache.L2.ways", "16"},
        {"cache.L3.size_bytes", "28835840"},
        {"cache.L3.instances", "2"},
        {"cache.L3.total_bytes", "57671680"},
        {"cache.L3.shared_cpus", "4"},
        {"cache.L3.line_bytes", "64"},
        {"numa.nodes", "2"},
        {"numa.node0.cpus", "0-1,4-5"},
        {"numa.node1.cpus", "2-3,6-7"},
        {"numa.node1.mem_total_bytes", "202411376640"},
        {"memory.total_bytes", "404273352704"},
        {"memory.swap_total_bytes", "8589930496"},
        {"dmi.product_name", "PowerEdge R640"},
    };
    for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
        const char *v = src_inv(&r, expect[i][0]);
        if (strcmp(v, expect[i][1]) != 0)
            fail_msg("%s: '%s', expected '%s'", expect[i][0], v, expect[i][1]);
    }
    assert_string_equal(src_inv(&r, "cache.cpuinfo_size_bytes"), ""); /* sysfs caches known: not used */
    assert_string_equal(src_inv(&r, "machine"), "");                  /* a fixture, not the live kernel */
    src_close(&r);
}

static void test_inventory_vm(void **state)
{
    (void)state;
    src_run_t r;
    src_open(&r, &source_host, FIXTURES "/node-vm");
    static const char *const expect[][2] = {
        {"cpu.model", "AMD EPYC"},
        {"cpu.count", "2"},
        {"cpu.sockets", "1"},
        {"cpu.cores_per_socket", "2"},
        {"cpu.threads_per_core", "1"},
        {"numa.nodes", "1"},
        {"cache.cpuinfo_size_bytes", "1048576"},
        {"numa.node0.mem_total_bytes", "5597069312"},
    };
    for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
        const char *v = src_inv(&r, expect[i][0]);
        if (strcmp(v, expect[i][1]) != 0)
            fail_msg("%s: '%s', expected '%s'", expect[i][0], v, expect[i][1]);
    }
    assert_string_equal(src_inv(&r, "cache.L1d.size_bytes"), "");
    assert_string_equal(src_inv(&r, "dmi.sys_vendor"), "");
    src_close(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpulist),
        cmocka_unit_test(test_parse_i64),
        cmocka_unit_test(test_list_natural_order),
        cmocka_unit_test(test_inventory_two_sockets),
        cmocka_unit_test(test_inventory_vm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
