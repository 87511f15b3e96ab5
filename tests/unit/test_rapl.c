/* SPDX-License-Identifier: MIT
 *
 * Unit tests of the `rapl` source and the `energy` model part: zones found on the fixture tree
 * tests/fixtures/node/sys/class/powercap (two packages with their dram sub-zones, psys, and an
 * intel-rapl-mmio zone that must be left out), a wrap of energy_uj at max_energy_range_uj between two
 * samples, an unreadable energy_uj recorded as missing with its errno, counter_delta_range(), and the model's
 * energy, power and busy-CPU attribution on hand-built samples whose expected values are exact.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/counter.h"
#include "sources/rapl.h"

#include "assert_value.h"
#include "node_fixture.h"
#include "sources/registry.h"

#include <math.h>

#define PKG1 "sys/class/powercap/intel-rapl:1/energy_uj"
#define PKG0 "sys/class/powercap/intel-rapl:0/energy_uj"

static void test_counter_delta_range(void **state)
{
    (void)state;
    js_value_t a = {.present = true, .i = 100}, b = {.present = true, .i = 250}, none = {0};
    uint64_t d = 7;
    assert_int_equal(counter_delta_range(&a, &b, 1000, &d), 0);
    assert_int_equal(d, 150);
    /* wrap: 900 -> 1000 (range) -> 0 -> 50 */
    a.i = 900;
    b.i = 50;
    assert_int_equal(counter_delta_range(&a, &b, 1000, &d), 0);
    assert_int_equal(d, 150);
    assert_int_equal(counter_delta_range(&none, &b, 1000, &d), -ENODATA);
    assert_int_equal(counter_delta_range(&a, &b, 0, &d), -ENODATA);
    b.i = 1001; /* above the range: not this counter */
    d = 7;
    assert_int_equal(counter_delta_range(&a, &b, 1000, &d), -ERANGE);
    assert_int_equal(d, 7);
    b.i = -1;
    assert_int_equal(counter_delta_range(&a, &b, 1000, &d), -ERANGE);
}

static void test_collect_fixture(void **state)
{
    (void)state;
    src_run_t r;
    src_open(&r, &source_rapl, FIXTURES "/node");
    assert_int_equal(r.init_rc, 0);
    assert_int_equal(src_collect(&r, 0), 0);
    const js_rows_t *z = &r.rows[0];
    assert_int_equal(z->nrows, 5); /* the mmio zone is left out */
    static const char *const zones[] = {"intel-rapl:0", "intel-rapl:0:0", "intel-rapl:1", "intel-rapl:1:0",
                                        "intel-rapl:2"};
    static const char *const domains[] = {"package-0", "package-0/dram", "package-1", "package-1/dram",
                                          "psys"};
    static const int64_t energy[] = {1000000000, 200000000, 262143000000, 300000000, 5000000000};
    static const int64_t range[] = {262143328850, 65712999613, 262143328850, 65712999613, 262143328850};
    for (size_t i = 0; i < 5; i++) {
        assert_string_equal(row_text(z, i, RAPL_ZONE), zones[i]);
        assert_string_equal(row_text(z, i, RAPL_DOMAIN), domains[i]);
        assert_ival(rows_row(z, i)[RAPL_ENERGY_UJ], energy[i]);
        assert_ival(rows_row(z, i)[RAPL_MAX_RANGE_UJ], range[i]);
        assert_ival(rows_row(z, i)[RAPL_ERRNO], 0);
    }
    assert_string_equal(src_inv(&r, "zones"), "5");
    assert_string_equal(src_inv(&r, "package-1/dram.max_energy_range_uj"), "65712999613");
    assert_string_equal(src_inv(&r, "psys.energy"), "readable");
    src_close(&r);
}

/* energy_uj of package-1 passes max_energy_range_uj between two samples: the raw values are stored as read
 * (the model undoes the wrap) */
static void test_wrap_between_samples(void **state)
{
    (void)state;
    char dir[64];
    fixture_copy("node", dir, sizeof(dir));
    src_run_t r;
    src_open(&r, &source_rapl, dir);
    assert_int_equal(r.init_rc, 0);
    assert_int_equal(src_collect(&r, 0), 0);
    assert_ival(rows_row(&r.rows[0], 2)[RAPL_ENERGY_UJ], 262143000000);
    fixture_write(dir, PKG1, "671150\n");
    assert_int_equal(src_collect(&r, 1), 0);
    assert_ival(rows_row(&r.rows[0], 2)[RAPL_ENERGY_UJ], 671150);
    js_value_t prev = {.present = true, .i = 262143000000}, cur = rows_row(&r.rows[0], 2)[RAPL_ENERGY_UJ];
    uint64_t d;
    assert_int_equal(counter_delta_range(&prev, &cur, 262143328850, &d), 0);
    assert_int_equal(d, 1000000); /* 328850 to the range, 671150 after it: 1 J */
    src_close(&r);
    fixture_remove(dir);
}

/* energy_uj that cannot be read (here: absent; on Linux >= 5.10 without root: EACCES) keeps its row, energy
 * missing, the errno recorded */
static void test_unreadable(void **state)
{
    (void)state;
    char dir[64], path[128];
    fixture_copy("node", dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/%s", dir, PKG0);
    assert_int_equal(unlink(path), 0);
    src_run_t r;
    src_open(&r, &source_rapl, dir);
    assert_int_equal(r.init_rc, 0);
    assert_int_equal(src_collect(&r, 0), 0);
    assert_int_equal(r.rows[0].nrows, 5);
    assert_missing(rows_row(&r.rows[0], 0)[RAPL_ENERGY_UJ]);
    assert_ival(rows_row(&r.rows[0], 0)[RAPL_ERRNO], -ENOENT);
    assert_ival(rows_row(&r.rows[0], 1)[RAPL_ENERGY_UJ], 200000000);
    assert_string_equal(src_inv(&r, "package-0.energy"), "unreadable: No such file or directory");
    /* a value that is not a number: missing, -EINVAL */
    fixture_write(dir, "sys/class/powercap/intel-rapl:0:0/energy_uj", "garbage\n");
    assert_int_equal(src_collect(&r, 1), 0);
    assert_missing(rows_row(&r.rows[0], 1)[RAPL_ENERGY_UJ]);
    assert_ival(rows_row(&r.rows[0], 1)[RAPL_ERRNO], -EINVAL);
    src_close(&r);
    fixture_remove(dir);
}

static void test_absent(void **state)
{
    (void)state;
    src_run_t r;
    src_open(&r, &source_rapl, FIXTURES "/node-vm");
    assert_int_equal(r.init_rc, -ENODEV);
    src_close(&r);
}

/* ---- the model ---- */

typedef struct {
    const char *zone, *domain;
    int64_t uj; /* < 0: missing */
    int64_t range;
    int64_t err;
} zone_row_t;

static void add_zones(js_sample_t *s, const zone_row_t *z, size_t n)
{
    js_rows_t *r = sample_rows(s, &table_rapl);
    for (size_t i = 0; i < n; i++) {
        js_value_t *v = rows_add(r);
        rows_set_str(r, &v[RAPL_ZONE], z[i].zone, strlen(z[i].zone));
        rows_set_str(r, &v[RAPL_DOMAIN], z[i].domain, strlen(z[i].domain));
        if (z[i].uj >= 0)
            val_int(&v[RAPL_ENERGY_UJ], z[i].uj);
        val_int(&v[RAPL_MAX_RANGE_UJ], z[i].range);
        val_int(&v[RAPL_ERRNO], z[i].err);
    }
}

#define R64 262143328850LL
#define RD 65712999613LL

static void test_model_energy_and_attribution(void **state)
{
    (void)state;
    js_sample_t s;
    assert_int_equal(sample_init(&s), 0);
    js_model_t *m = node_model();
    /* t = 1 s: the first readings */
    zone_row_t z[5] = {{"intel-rapl:0", "package-0", 1000000000, R64, 0},
                       {"intel-rapl:0:0", "package-0/dram", 200000000, RD, 0},
                       {"intel-rapl:1", "package-1", 262143000000, R64, 0},
                       {"intel-rapl:1:0", "package-1/dram", 300000000, RD, 0},
                       {"intel-rapl:2", "psys", 5000000000, R64, 0}};
    sample_base(&s, 1 * SEC, 0, 100, 700);
    add_zones(&s, z, 5);
    assert_int_equal(model_feed(m, 0, &s), 0);
    assert_missing(*view_value(m, "energy", "zone", "intel-rapl:1", "power_w"));
    /* t = 2 s: node +70 J (package-1 wraps: +1 J); CPU busy 200 of 800 ticks (u = 1/4); the scope 100 ticks
     * of the 200 busy (s = 1/2): scope += 1/2 * 1/4 * 70 = 8.75 J */
    z[0].uj += 50000000;
    z[1].uj += 10000000;
    z[2].uj = 671150;
    z[3].uj += 9000000;
    z[4].uj += 100000000;
    sample_base(&s, 2 * SEC, 100, 300, 1300);
    add_zones(&s, z, 5);
    assert_int_equal(model_feed(m, 1, &s), 0);
    assert_float_equal(view_value(m, "energy", "zone", "intel-rapl:1", "power_w")->d, 1.0, 1e-9);
    assert_float_equal(view_value(m, "energy", "zone", "intel-rapl:1", "energy_j")->d, 1.0, 1e-9);
    assert_float_equal(view_value(m, "energy", "zone", "intel-rapl:0", "scope_share_fraction")->d, 0.125,
                       1e-12);
    /* t = 3 s: node +50 J; busy 400 of 800 (u = 1/2); the scope 400 ticks = all of the busy time (s = 1):
     * scope += 25 J */
    z[0].uj += 30000000;
    z[2].uj += 20000000;
    z[4].uj += 50000000;
    sample_base(&s, 3 * SEC, 500, 700, 1700);
    add_zones(&s, z, 5);
    assert_int_equal(model_feed(m, 2, &s), 0);
    assert_float_equal(view_value(m, "energy", "zone", "intel-rapl:1", "energy_j")->d, 21.0, 1e-9);
    assert_float_equal(view_value(m, "energy", "zone", "intel-rapl:1", "power_w")->d, 20.0, 1e-9);
    assert_float_equal(view_value(m, "energy", "zone", "intel-rapl:1", "scope_energy_j")->d, 10.125, 1e-9);
    assert_float_equal(view_value(m, "energy", "zone", "intel-rapl:2", "energy_j")->d, 150.0, 1e-9);
    assert_ival(*view_value(m, "energy", "zone", "intel-rapl:2", "errno"), 0);

    js_buf_t b = {0};
    summary_of(m, &b, false);
    assert_non_null(strstr(b.p, "\"node_energy_j\": 120,")); /* package + dram, psys apart */
    assert_non_null(strstr(b.p, "\"node_mean_power_w\": 60,"));
    assert_non_null(strstr(b.p, "\"node_max_power_w\": 70,"));
    assert_non_null(strstr(b.p, "\"scope_energy_j\": 33.75,"));
    assert_non_null(strstr(b.p, "\"node_busy_energy_j\": 42.5,"));
    assert_non_null(strstr(b.p, "\"node_idle_energy_j\": 77.5,"));
    assert_non_null(strstr(b.p, "\"method\": \"busy_cpu_share\""));
    assert_non_null(strstr(b.p, "\"psys\": 150"));
    assert_non_null(strstr(b.p, "\"intervals_unattributed\": 0"));
    summary_of(m, &b, true);
    assert_non_null(strstr(b.p, "  energy           node 120.0 J, mean 60.0 W, max 70.0 W (package 101.0 J, "
                                "dram 19.0 J, psys 150.0 J)\n"));
    assert_non_null(strstr(
        b.p,
        "  energy, scope    33.8 J, 28.1% of the node's [busy_cpu_share]; idle 77.5 J not attributed\n"));
    buf_free(&b);
    model_free(m);
    sample_free(&s);
}

/* without the node's CPU line (no system source) the energy is measured but not attributed */
static void test_model_unattributed(void **state)
{
    (void)state;
    js_sample_t s;
    sample_init(&s);
    js_model_t *m = node_model();
    zone_row_t z = {"intel-rapl:0", "package-0", 1000, R64, 0};
    for (int i = 0; i < 3; i++) {
        sample_base(&s, (1 + i) * SEC, 10 * i, -1, -1);
        z.uj = 1000 + 2000000 * i;
        add_zones(&s, &z, 1);
        assert_int_equal(model_feed(m, i, &s), 0);
    }
    js_buf_t b = {0};
    summary_of(m, &b, false);
    assert_non_null(strstr(b.p, "\"node_energy_j\": 4,"));
    assert_non_null(strstr(b.p, "\"scope_energy_j\": null"));
    assert_non_null(strstr(b.p, "\"intervals_unattributed\": 2"));
    summary_of(m, &b, true);
    assert_null(strstr(b.p, "energy, scope"));
    buf_free(&b);
    model_free(m);
    sample_free(&s);
}

/* energy_uj unreadable in every sample: the summary says why, no figure is made up */
static void test_model_unreadable(void **state)
{
    (void)state;
    js_sample_t s;
    sample_init(&s);
    js_model_t *m = node_model();
    zone_row_t z = {"intel-rapl:0", "package-0", -1, R64, -EACCES};
    for (int i = 0; i < 2; i++) {
        sample_base(&s, (1 + i) * SEC, 0, 100 * i, 100 * i);
        add_zones(&s, &z, 1);
        assert_int_equal(model_feed(m, i, &s), 0);
    }
    assert_missing(*view_value(m, "energy", NULL, NULL, "energy_j"));
    assert_ival(*view_value(m, "energy", NULL, NULL, "errno"), -EACCES);
    js_buf_t b = {0};
    summary_of(m, &b, true);
    assert_string_equal(
        b.p,
        "  energy           not measured: Permission denied (energy_uj is root-only since Linux 5.10)\n");
    summary_of(m, &b, false);
    assert_non_null(strstr(b.p, "\"node_energy_j\": null"));
    assert_non_null(
        strstr(b.p, "\"error\": \"Permission denied (energy_uj is root-only since Linux 5.10)\""));
    buf_free(&b);
    model_free(m);
    sample_free(&s);
}

/* no RAPL rows at all: no energy section */
static void test_model_no_rapl(void **state)
{
    (void)state;
    js_sample_t s;
    sample_init(&s);
    js_model_t *m = node_model();
    sample_base(&s, SEC, 0, 1, 1);
    assert_int_equal(model_feed(m, 0, &s), 0);
    js_buf_t b = {0};
    summary_of(m, &b, false);
    assert_null(strstr(b.p, "\"energy\""));
    buf_free(&b);
    model_free(m);
    sample_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counter_delta_range),
        cmocka_unit_test(test_collect_fixture),
        cmocka_unit_test(test_wrap_between_samples),
        cmocka_unit_test(test_unreadable),
        cmocka_unit_test(test_absent),
        cmocka_unit_test(test_model_energy_and_attribution),
        cmocka_unit_test(test_model_unattributed),
        cmocka_unit_test(test_model_unreadable),
        cmocka_unit_test(test_model_no_rapl),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
