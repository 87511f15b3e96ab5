/* SPDX-License-Identifier: MIT
 *
 * Regression tests for what the fuzz targets (fuzz/, scripts/fuzz.sh) found: each test feeds the crashing
 * input, or its essence, to the code that failed, and checks the fixed behaviour. One test per finding; the
 * finding's target and date are in the test's comment. docs/RELIABILITY.md lists them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sys/parse.h"
#include "sources/perf.h"
#include "sys/sysattr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* fuzz_procfs, 2026-11-23: a CPU list holding a number of 20+ digits (parse_u64 saturates it at UINT64_MAX)
 * looped forever in cpulist_parse (the range's end UINT64_MAX, so `c <= b` held after c wrapped to 0) until
 * the int count overflowed (UBSan). It is now one CPU, counted and not set. */
static void cpulist_saturated_number(void **state)
{
    (void)state;
    uint64_t set[2];
    const char *in = "000000000000000000000000000000000000000000000000000000000000000040000000000000000000000"
                     "00000000000000";
    assert_int_equal(cpulist_parse(in, set, 128), 1);
    assert_true(set[0] == 0 && set[1] == 0);
    assert_int_equal(cpulist_parse("18446744073709551615", set, 128), 1);
    assert_int_equal(cpulist_parse("18446744073709551614-18446744073709551615,0", set, 128), 3);
    assert_true(set[0] == 1);
    /* many wide ranges: refused before the count could overflow */
    size_t n = 40 * 20 + 1;
    char *many = calloc(1, n);
    assert_non_null(many);
    for (int i = 0; i < 40; i++)
        strcat(many, i ? ",0-1048576" : "0-1048576");
    assert_int_equal(cpulist_parse(many, NULL, 0), -EINVAL);
    free(many);
}

/* fuzz_procfs (same family, found by reading after the finding above): perf_parse_cpulist's count of many
 * 2^20-wide ranges could overflow its int; refused now. */
static void perf_cpulist_many_ranges(void **state)
{
    (void)state;
    int cpus[4];
    size_t n = 40 * 20 + 1;
    char *many = calloc(1, n);
    assert_non_null(many);
    for (int i = 0; i < 40; i++)
        strcat(many, i ? ",0-1048576" : "0-1048576");
    assert_int_equal(cpulist_parse_ints(many, cpus, 4), -EINVAL);
    free(many);
    assert_int_equal(cpulist_parse_ints("0-3,8\n", cpus, 4), 5);
    assert_int_equal(cpus[3], 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cpulist_saturated_number),
        cmocka_unit_test(perf_cpulist_many_ranges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
