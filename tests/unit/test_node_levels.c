/* SPDX-License-Identifier: MIT
 *
 * Unit tests of the `cpufreq` and `thermal` sources and the `node` model part. cpufreq: present (the fixture
 * tests/fixtures/node: intel_pstate, 8 CPUs) and absent (tests/fixtures/node-vm, like the development VM: no
 * cpufreq directory, so procfs cpuinfo's "cpu MHz", read at the status cadence), and the cpuinfo parser.
 * thermal: hwmon chips with labelled and unlabelled sensors, a driver with its attributes under device/, an
 * hwmon without temperatures (a fan), thermal zones, one of which answers no number (missing). The model:
 * mean, least and largest frequency, hottest sensor, and the views.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sources/cpufreq.h"
#include "sources/thermal.h"

#include "assert_value.h"
#include "node_fixture.h"
#include "sources/registry.h"

#include <math.h>

static void test_parse_cpuinfo(void **state)
{
    (void)state;
    const char *text = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu MHz\t\t: 2096.010\n\n"
                       "processor\t: 1\ncpu MHz\t\t: 800\n\n"
                       "processor\t: 5\nmodel name\t: no MHz here\n\n"
                       "processor\t: 7\ncpu MHz\t\t: 3400.0009\n";
    js_rows_t r;
    rows_init(&r, &table_cpufreq);
    assert_int_equal(cpufreq_parse_cpuinfo(text, &r), 3);
    assert_ival(rows_row(&r, 0)[CPUFREQ_CPU], 0);
    assert_ival(rows_row(&r, 0)[CPUFREQ_CUR_KHZ], 2096010);
    assert_ival(rows_row(&r, 1)[CPUFREQ_CUR_KHZ], 800000);
    assert_ival(rows_row(&r, 2)[CPUFREQ_CPU], 7);
    assert_ival(rows_row(&r, 2)[CPUFREQ_CUR_KHZ], 3400000);
    rows_clear(&r);
    /* arm64 and friends: no MHz line at all */
    assert_int_equal(cpufreq_parse_cpuinfo("processor\t: 0\nBogoMIPS\t: 50.00\n", &r), 0);
    rows_free(&r);
}

static void test_cpufreq_present(void **state)
{
    (void)state;
    src_run_t r;
    src_open(&r, &source_cpufreq, FIXTURES "/node");
    assert_int_equal(r.init_rc, 0);
    assert_int_equal(src_collect(&r, 1), 0); /* scaling_cur_freq: every sample */
    assert_int_equal(r.rows[0].nrows, 8);
    assert_ival(rows_row(&r.rows[0], 1)[CPUFREQ_CPU], 1);
    assert_ival(rows_row(&r.rows[0], 1)[CPUFREQ_CUR_KHZ], 3901234);
    assert_ival(rows_row(&r.rows[0], 6)[CPUFREQ_CUR_KHZ], 1000000);
    assert_string_equal(src_inv(&r, "source"), "scaling_cur_freq");
    assert_string_equal(src_inv(&r, "driver"), "intel_pstate");
    assert_string_equal(src_inv(&r, "max_khz"), "3900000");
    assert_string_equal(src_inv(&r, "base_khz"), "2500000");
    src_close(&r);
}

static void test_cpufreq_absent_cpuinfo(void **state)
{
    (void)state;
    src_run_t r;
    src_open(&r, &source_cpufreq, FIXTURES "/node-vm");
    assert_int_equal(r.init_rc, 0);
    assert_int_equal(src_collect(&r, 0), 0);
    assert_int_equal(r.rows[0].nrows, 2);
    assert_ival(rows_row(&r.rows[0], 1)[CPUFREQ_CUR_KHZ], 2096011);
    assert_int_equal(src_collect(&r, 1), 0); /* between cadence samples: not read */
    assert_int_equal(r.rows[0].nrows, 0);
    assert_int_equal(src_collect(&r, 5), 0);
    assert_int_equal(r.rows[0].nrows, 2);
    assert_string_equal(src_inv(&r, "source"), "cpuinfo");
    src_close(&r);
}

static void test_thermal_fixture(void **state)
{
    (void)state;
    src_run_t r;
    src_open(&r, &source_thermal, FIXTURES "/node");
    assert_int_equal(r.init_rc, 0);
    assert_int_equal(src_collect(&r, 0), 0);
    const js_rows_t *t = &r.rows[0];
    /* hwmon0 (2 labelled), hwmon1 (unlabelled), hwmon2 (device/), hwmon10 (a fan: none), 2 zones */
    assert_int_equal(t->nrows, 6);
    static const char *const sensor[] = {"hwmon0/temp1", "hwmon0/temp2",  "hwmon1/temp1",
                                         "hwmon2/temp1", "thermal_zone0", "thermal_zone1"};
    static const char *const chip[] = {"coretemp", "coretemp", "nvme", "w83627ehf", "x86_pkg_temp", "acpitz"};
    static const char *const label[] = {"Package id 0", "Core 0", "", "", "", ""};
    static const int64_t mc[] = {45000, 43000, 38850, 30000, 46000, -1};
    for (size_t i = 0; i < 6; i++) {
        assert_string_equal(row_text(t, i, THERMAL_SENSOR), sensor[i]);
        assert_string_equal(row_text(t, i, THERMAL_CHIP), chip[i]);
        assert_string_equal(row_text(t, i, THERMAL_LABEL), label[i]);
        if (mc[i] < 0)
            assert_missing(rows_row(t, i)[THERMAL_TEMP_MC]);
        else
            assert_ival(rows_row(t, i)[THERMAL_TEMP_MC], mc[i]);
    }
    assert_missing(rows_row(t, 2)[THERMAL_LABEL]); /* unlabelled: NULL, not "" */
    assert_string_equal(src_inv(&r, "hwmon0/temp1.crit_millicelsius"), "100000");
    assert_string_equal(src_inv(&r, "hwmon0/temp1.max_millicelsius"), "90000");
    assert_string_equal(src_inv(&r, "sensors"), "6");
    src_close(&r);
}

static void test_thermal_absent(void **state)
{
    (void)state;
    src_run_t r;
    src_open(&r, &source_thermal, FIXTURES "/node-vm"); /* class/thermal exists, empty: like this VM */
    assert_int_equal(r.init_rc, -ENODEV);
    src_close(&r);
}

/* the model on two samples of the fixture, the second with other values */
static void test_model(void **state)
{
    (void)state;
    char dir[64];
    fixture_copy("node", dir, sizeof(dir));
    src_run_t f, t;
    src_open(&f, &source_cpufreq, dir);
    src_open(&t, &source_thermal, dir);
    js_sample_t s;
    assert_int_equal(sample_init(&s), 0);
    js_model_t *m = node_model();
    for (int i = 0; i < 2; i++) {
        if (i == 1) {
            fixture_write(dir, "sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq", "1101234\n");
            fixture_write(dir, "sys/class/hwmon/hwmon0/temp2_input", "81500\n");
            fixture_write(dir, "sys/class/thermal/thermal_zone0/temp", "40000\n");
        }
        assert_int_equal(src_collect(&f, (uint64_t)i), 0);
        assert_int_equal(src_collect(&t, (uint64_t)i), 0);
        sample_base(&s, (1 + i) * SEC, 0, -1, -1);
        src_to_sample(&f, &s);
        src_to_sample(&t, &s);
        if (i == 0)
            assert_int_equal(f.src->inventory(f.state, &f.ctx, sample_rows(&s, &table_inventory)), 0);
        assert_int_equal(model_feed(m, i, &s), 0);
    }
    assert_float_equal(view_value(m, "cpufreq", NULL, NULL, "freq_mhz")->d, 2500.0, 1e-9);
    assert_float_equal(view_value(m, "thermal", "sensor", "hwmon0/temp2", "temp_celsius")->d, 81.5, 1e-9);
    assert_missing(*view_value(m, "thermal", "sensor", "thermal_zone1", "temp_celsius"));
    const js_value_t *lab = view_value(m, "thermal", "sensor", "hwmon1/temp1", "label");
    assert_missing(*lab);
    js_buf_t b = {0};
    summary_of(m, &b, false);
    /* 16 readings: 2 x (2500 + 1200.5 + 2500 + 2500 + 3100 + 1000 + 2600) + 3901.234 + 1101.234 */
    assert_non_null(strstr(b.p, "\"mean_mhz\": 2237.71675,"));
    assert_non_null(strstr(b.p, "\"min_mhz\": 1000,"));
    assert_non_null(strstr(b.p, "\"max_mhz\": 3901.234,"));
    assert_non_null(strstr(b.p, "\"source\": \"scaling_cur_freq\""));
    assert_non_null(strstr(b.p, "\"max_celsius\": 81.5,\n    \"max_sensor\": \"hwmon0/temp2\""));
    summary_of(m, &b, true);
    assert_string_equal(
        b.p, "  cpu frequency    mean 2238 MHz, min 1000, max 3901 over 8 CPUs [scaling_cur_freq]\n"
             "  temperature      max 81.5 C (coretemp Core 0, hwmon0/temp2) over 6 sensors\n");
    buf_free(&b);
    model_free(m);
    sample_free(&s);
    src_close(&f);
    src_close(&t);
    fixture_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_cpuinfo),          cmocka_unit_test(test_cpufreq_present),
        cmocka_unit_test(test_cpufreq_absent_cpuinfo), cmocka_unit_test(test_thermal_fixture),
        cmocka_unit_test(test_thermal_absent),         cmocka_unit_test(test_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
