/* SPDX-License-Identifier: MIT
 *
 * Unit tests of the allocation (core/allocation.h): the parsers on strings (CPU lists, cpu.max, CFS quota,
 * memory limits with v2's "max" and v1's unlimited page-counter maximum, SLURM's compressed per-node CPU
 * lists and memory values), and allocation_resolve() on the cgroup fixture trees with SLURM environments:
 * which bound applies and why.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sys/parse.h"
#include "core/allocation.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static void test_cpulist(void **state)
{
    assert_int_equal(cpulist_parse("0-3,8,10-11", NULL, 0), 7);
    assert_int_equal(cpulist_parse("0-3,8,10-11\n", NULL, 0), 7);
    assert_int_equal(cpulist_parse("5", NULL, 0), 1);
    assert_int_equal(cpulist_parse("", NULL, 0), 0);
    assert_int_equal(cpulist_parse("\n", NULL, 0), 0);
    assert_int_equal(cpulist_parse("3-1", NULL, 0), -EINVAL);
    assert_int_equal(cpulist_parse("0-", NULL, 0), -EINVAL);
    assert_int_equal(cpulist_parse("0,,1", NULL, 0), -EINVAL);
    assert_int_equal(cpulist_parse("x", NULL, 0), -EINVAL);
}

static void test_quota(void **state)
{
    double c = 0;
    assert_int_equal(alloc_parse_cpu_max("max 100000\n", &c), -ENODATA);
    assert_int_equal(alloc_parse_cpu_max("150000 100000\n", &c), 0);
    assert_true(c == 1.5);
    assert_int_equal(alloc_parse_cpu_max("50000 0", &c), -EINVAL);
    assert_int_equal(alloc_parse_cpu_max("max", &c), -EINVAL);
    assert_int_equal(alloc_parse_cfs("-1\n", "100000\n", &c), -ENODATA);
    assert_int_equal(alloc_parse_cfs("250000\n", "100000\n", &c), 0);
    assert_true(c == 2.5);
    assert_int_equal(alloc_parse_cfs("x", "100000", &c), -EINVAL);
}

static void test_limits(void **state)
{
    double b = 0;
    assert_int_equal(alloc_parse_limit("max\n", &b), -ENODATA);
    assert_int_equal(alloc_parse_limit("9223372036854771712\n", &b), -ENODATA); /* v1 unlimited */
    assert_int_equal(alloc_parse_limit("4294967296\n", &b), 0);
    assert_true(b == 4294967296.0);
    assert_int_equal(alloc_parse_limit("12 kB", &b), -EINVAL);
    assert_int_equal(alloc_parse_slurm_mem("8192", &b), 0);
    assert_true(b == 8192.0 * 1024 * 1024);
    assert_int_equal(alloc_parse_slurm_mem("16G", &b), 0);
    assert_true(b == 16.0 * 1024 * 1024 * 1024);
    assert_int_equal(alloc_parse_slurm_mem("0", &b), -ENODATA);
    assert_int_equal(alloc_parse_slurm_mem("lots", &b), -EINVAL);
}

static void test_slurm_cpus(void **state)
{
    assert_int_equal(alloc_slurm_cpus_per_node("2(x3),1", 0), 2);
    assert_int_equal(alloc_slurm_cpus_per_node("2(x3),1", 2), 2);
    assert_int_equal(alloc_slurm_cpus_per_node("2(x3),1", 3), 1);
    assert_int_equal(alloc_slurm_cpus_per_node("2(x3),1", 4), -ENODATA);
    assert_int_equal(alloc_slurm_cpus_per_node("2(x3),1", -1),
                     -ENODATA); /* this node unknown, counts differ */
    assert_int_equal(alloc_slurm_cpus_per_node("72(x2)", -1), 72);
    assert_int_equal(alloc_slurm_cpus_per_node("36", -1), 36);
    assert_int_equal(alloc_slurm_cpus_per_node("4(y2)", 0), -EINVAL);
    assert_int_equal(alloc_slurm_cpus_per_node("", 0), -EINVAL);
}

static void open_fixture(const char *name, js_fsroot_t *root)
{
    char proc[512], sys[512];
    snprintf(proc, sizeof(proc), "%s/%s/proc", FIXTURES, name);
    snprintf(sys, sizeof(sys), "%s/%s/sys", FIXTURES, name);
    assert_int_equal(fsroot_open(root, proc, sys), 0);
}

static void test_resolve_v1_slurm(void **state)
{
    js_fsroot_t root;
    open_fixture("cgroup-v1", &root);
    js_cgroup_t *cg = NULL;
    assert_int_equal(cgroupfs_open_pid(&root, 4242, &cg, NULL, 0), 0);
    char *env[] = {"PATH=/bin", "SLURM_CPUS_ON_NODE=4", "SLURM_MEM_PER_NODE=8192", NULL};
    js_allocation_t a;
    assert_int_equal(allocation_resolve(&root, 4242, cg, env, &a), 0);
    /* affinity 2-5 (4), cpuset 2-5 (4), the job's quota 2.5, SLURM 4: the quota applies */
    assert_true(a.value[JS_ALLOC_AFFINITY] == 4);
    assert_true(a.value[JS_ALLOC_CPUSET] == 4);
    assert_true(a.value[JS_ALLOC_CFS_QUOTA] == 2.5);
    assert_true(a.value[JS_ALLOC_SLURM_CPUS_ON_NODE] == 4);
    assert_true(isnan(a.value[JS_ALLOC_CPU_MAX]));
    assert_true(a.cores == 2.5);
    assert_string_equal(allocation_bound_name(a.cores_bound), "cfs_quota");
    assert_string_equal(a.cpuset, "2-5");
    /* hierarchical_memory_limit 4 GiB beats SLURM's 8 GiB */
    assert_true(a.mem_limit_bytes == 4294967296.0);
    assert_string_equal(allocation_bound_name(a.mem_bound), "memory.limit_in_bytes");
    assert_true(a.value[JS_ALLOC_SLURM_MEM_PER_NODE] == 8192.0 * 1024 * 1024);
    assert_true(a.pids_max == 512);

    /* a tighter SLURM word: this node's entry of SLURM_JOB_CPUS_PER_NODE, memory per CPU */
    char *env2[] = {"SLURM_JOB_CPUS_PER_NODE=2(x3),1", "SLURM_NODEID=3", "SLURM_MEM_PER_CPU=1024", NULL};
    assert_int_equal(allocation_resolve(&root, 4242, cg, env2, &a), 0);
    assert_true(a.cores == 1);
    assert_string_equal(allocation_bound_name(a.cores_bound), "SLURM_JOB_CPUS_PER_NODE");
    assert_true(a.mem_limit_bytes == 1024.0 * 1024 * 1024);
    assert_string_equal(allocation_bound_name(a.mem_bound), "SLURM_MEM_PER_CPU");
    cgroupfs_free(cg);
    fsroot_close(&root);
}

static void test_resolve_v2(void **state)
{
    js_fsroot_t root;
    open_fixture("cgroup-v2", &root);
    js_cgroup_t *cg = NULL;
    assert_int_equal(cgroupfs_open_pid(&root, 777, &cg, NULL, 0), 0);
    js_allocation_t a;
    assert_int_equal(allocation_resolve(&root, 777, cg, NULL, &a), 0);
    assert_true(a.value[JS_ALLOC_AFFINITY] == 16);
    assert_true(a.value[JS_ALLOC_CPUSET] == 7);    /* 0-3,8,10-11 */
    assert_true(a.value[JS_ALLOC_CPU_MAX] == 1.5); /* "max 100000" here, 150000/100000 on the parent */
    assert_true(a.cores == 1.5);
    assert_string_equal(allocation_bound_name(a.cores_bound), "cpu.max");
    assert_true(a.mem_limit_bytes == 8589934592.0); /* "max" here, 8 GiB on the parent */
    assert_string_equal(allocation_bound_name(a.mem_bound), "memory.max");
    assert_true(a.memory_high_bytes == 6442450944.0);
    assert_true(isnan(a.swap_max_bytes));
    assert_true(a.pids_max == 1000);
    cgroupfs_free(cg);
    fsroot_close(&root);
}

static void test_resolve_nothing(void **state)
{
    js_fsroot_t root;
    open_fixture("cgroup-v2", &root);
    js_allocation_t a;
    assert_int_equal(allocation_resolve(&root, 0, NULL, NULL, &a), 0);
    assert_true(isnan(a.cores));
    assert_int_equal(a.cores_bound, -1);
    assert_true(isnan(a.mem_limit_bytes));
    assert_string_equal(allocation_bound_name(a.mem_bound), "none");
    /* a process without a status file: no affinity, no error */
    assert_int_equal(allocation_resolve(&root, 31337, NULL, NULL, &a), 0);
    assert_true(isnan(a.value[JS_ALLOC_AFFINITY]));
    fsroot_close(&root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpulist),          cmocka_unit_test(test_quota),
        cmocka_unit_test(test_limits),           cmocka_unit_test(test_slurm_cpus),
        cmocka_unit_test(test_resolve_v1_slurm), cmocka_unit_test(test_resolve_v2),
        cmocka_unit_test(test_resolve_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
