/* SPDX-License-Identifier: MIT
 *
 * Unit tests of the `infiniband` source and the InfiniBand half of the `network` model part, on the fixture
 * tests/fixtures/node/sys/class/infiniband/mlx5_0: port 1 has the extended (64-bit) counter set and two
 * driver hw_counters; port 2 stands in for a device with only the 32-bit PortCounters, its port_xmit_data
 * just below 2^32. Covered: the counter widths, the cadence (data and packets every sample, the rest every
 * --status-every samples and at the first and closing sample), the 32-bit counter going past its limit
 * (IBTA counters stop at all ones and are cleared by a fabric manager: the model does not invent a wrap, it
 * keeps the known increases and says the total is a lower bound), bytes = 4 x the data counters, and
 * counter_delta_saturating().
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "model/counter.h"
#include "sources/infiniband.h"

#include "assert_value.h"
#include "node_fixture.h"
#include "sources/registry.h"

#include <math.h>

#define P2_XMIT "sys/class/infiniband/mlx5_0/ports/2/counters/port_xmit_data"
#define P1_XMIT "sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_data"
#define P1_ERR "sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_errors"
#define P1_OOB "sys/class/infiniband/mlx5_0/ports/1/hw_counters/out_of_buffer"

static void test_counter_delta_saturating(void **state)
{
    (void)state;
    js_value_t a = {.present = true, .i = 10}, b = {.present = true, .i = 25}, none = {0};
    uint64_t d = 0;
    assert_int_equal(counter_delta_saturating(&a, &b, 16, &d), 0);
    assert_int_equal(d, 15);
    b.i = 65535; /* all ones: saturated, the increase is unknown */
    assert_int_equal(counter_delta_saturating(&a, &b, 16, &d), -EOVERFLOW);
    a.i = 65535;
    b.i = 3;
    assert_int_equal(counter_delta_saturating(&a, &b, 16, &d), -EOVERFLOW);
    a.i = 60000; /* a decrease below the limit: cleared, not wrapped */
    assert_int_equal(counter_delta_saturating(&a, &b, 16, &d), -ERANGE);
    b.i = 70000; /* does not fit 16 bits */
    assert_int_equal(counter_delta_saturating(&a, &b, 16, &d), -ERANGE);
    a.i = 4000000000;
    b.i = 5000000000;
    assert_int_equal(counter_delta_saturating(&a, &b, 64, &d), 0);
    assert_int_equal(d, 1000000000);
    assert_int_equal(counter_delta_saturating(&b, &a, 64, &d), -ERANGE);
    assert_int_equal(counter_delta_saturating(&none, &a, 64, &d), -ENODATA);
}

static void test_collect_fixture(void **state)
{
    (void)state;
    src_run_t r;
    src_open(&r, &source_infiniband, FIXTURES "/node");
    assert_int_equal(r.init_rc, 0);
    assert_int_equal(src_collect(&r, 0), 0);
    const js_rows_t *p = &r.rows[0], *hw = &r.rows[1];
    assert_int_equal(p->nrows, 2);
    const js_value_t *p1 = rows_row(p, 0), *p2 = rows_row(p, 1);
    assert_string_equal(row_text(p, 0, IB_HCA), "mlx5_0");
    assert_ival(p1[IB_PORT], 1);
    assert_ival(p1[IB_DATA_WIDTH], 64);
    assert_ival(p1[IB_XMIT_DATA], 100000000000);
    assert_ival(p1[IB_RCV_DATA], 200000000000);
    assert_ival(p1[IB_XMIT_PACKETS], 50000000);
    assert_ival(p1[IB_UNICAST_RCV_PACKETS], 59000000);
    assert_ival(p1[IB_MULTICAST_XMIT_PACKETS], 1000);
    assert_ival(p1[IB_LINK_DOWNED], 1);
    assert_ival(p1[IB_RCV_ERRORS], 2);
    assert_ival(p1[IB_XMIT_DISCARDS], 3);
    assert_ival(p1[IB_XMIT_WAIT], 12345);
    assert_ival(p2[IB_PORT], 2);
    assert_ival(p2[IB_DATA_WIDTH], 32);
    assert_ival(p2[IB_XMIT_DATA], 4294967000);
    assert_missing(p2[IB_UNICAST_XMIT_PACKETS]); /* no extended set */
    /* hw_counters of port 1, lifespan left out, in name order */
    assert_int_equal(hw->nrows, 2);
    assert_string_equal(row_text(hw, 0, IBHW_COUNTER), "out_of_buffer");
    assert_ival(rows_row(hw, 0)[IBHW_VALUE], 7);
    assert_ival(rows_row(hw, 0)[IBHW_PORT], 1);
    assert_string_equal(row_text(hw, 1, IBHW_COUNTER), "out_of_sequence");
    /* the descriptors carry the PortCounters widths */
    assert_int_equal(table_ib_port.cols[IB_SYMBOL_ERROR].width, 16);
    assert_int_equal(table_ib_port.cols[IB_LOCAL_LINK_INTEGRITY_ERRORS].width, 4);
    assert_int_equal(table_ib_port.cols[IB_XMIT_WAIT].width, 32);
    assert_string_equal(src_inv(&r, "mlx5_0.1.rate"), "200 Gb/sec (4X HDR)");
    assert_string_equal(src_inv(&r, "mlx5_0.2.data_width_bits"), "32");
    assert_string_equal(src_inv(&r, "mlx5_0.fw_ver"), "20.31.1014");
    assert_string_equal(src_inv(&r, "mlx5_0.1.hw_counters"), "2");
    src_close(&r);
}

static void test_cadence(void **state)
{
    (void)state;
    src_run_t r;
    src_open(&r, &source_infiniband, FIXTURES "/node");
    assert_int_equal(r.init_rc, 0);
    assert_int_equal(src_collect(&r, 1), 0); /* between cadence samples */
    const js_value_t *p1 = rows_row(&r.rows[0], 0);
    assert_ival(p1[IB_XMIT_DATA], 100000000000);
    assert_ival(p1[IB_RCV_PACKETS], 60000000);
    assert_missing(p1[IB_UNICAST_XMIT_PACKETS]);
    assert_missing(p1[IB_RCV_ERRORS]);
    assert_missing(p1[IB_XMIT_WAIT]);
    assert_int_equal(r.rows[1].nrows, 0);
    assert_int_equal(src_collect(&r, 5), 0); /* status_every = 5 */
    assert_ival(rows_row(&r.rows[0], 0)[IB_RCV_ERRORS], 2);
    assert_int_equal(r.rows[1].nrows, 2);
    r.ctx.final = true; /* the closing sample reads everything */
    assert_int_equal(src_collect(&r, 7), 0);
    assert_ival(rows_row(&r.rows[0], 0)[IB_XMIT_WAIT], 12345);
    src_close(&r);
}

/* a 32-bit guess is raised to 64 when a value says so */
static void test_width_promotion(void **state)
{
    (void)state;
    char dir[64];
    fixture_copy("node", dir, sizeof(dir));
    src_run_t r;
    src_open(&r, &source_infiniband, dir);
    fixture_write(dir, P2_XMIT, "5000000000\n");
    assert_int_equal(src_collect(&r, 0), 0);
    assert_ival(rows_row(&r.rows[0], 1)[IB_DATA_WIDTH], 64);
    src_close(&r);
    fixture_remove(dir);
}

static void test_absent(void **state)
{
    (void)state;
    src_run_t r;
    src_open(&r, &source_infiniband, FIXTURES "/node-vm");
    assert_int_equal(r.init_rc, -ENODEV);
    src_close(&r);
}

/* Six samples one second apart through the source and the model. Port 1 (64-bit) sends 1e6 words a second.
 * Port 2's 32-bit port_xmit_data: 4294967000, then 200 (what a wrap would look like: per the IBTA a decrease
 * is a clear, so the interval is unknown, not +496 words), +1000 words (known: 4000 bytes), then stuck at
 * 2^32-1 twice (saturated: unknown), then 0 (cleared after saturation: unknown). */
static void test_model_saturation(void **state)
{
    (void)state;
    char dir[64];
    fixture_copy("node", dir, sizeof(dir));
    src_run_t r;
    src_open(&r, &source_infiniband, dir);
    js_sample_t s;
    assert_int_equal(sample_init(&s), 0);
    js_model_t *m = node_model();
    static const char *const p2[] = {"4294967000", "200", "1200", "4294967295", "4294967295", "0"};
    for (int i = 0; i < 6; i++) {
        char v[32];
        snprintf(v, sizeof(v), "%lld\n", 100000000000LL + 1000000LL * i);
        fixture_write(dir, P1_XMIT, v);
        snprintf(v, sizeof(v), "%s\n", p2[i]);
        fixture_write(dir, P2_XMIT, v);
        if (i == 5) {
            fixture_write(dir, P1_ERR, "6\n");
            fixture_write(dir, P1_OOB, "19\n");
        }
        assert_int_equal(src_collect(&r, (uint64_t)i), 0);
        sample_base(&s, (1 + i) * SEC, 0, -1, -1);
        src_to_sample(&r, &s);
        assert_int_equal(model_feed(m, i, &s), 0);
        if (i == 2) {
            assert_float_equal(view_value(m, "infiniband", "port", NULL, "xmit_bytes_per_s")->d, 4e6, 1e-6);
            assert_float_equal(view_value(m, "infiniband", "port", NULL, "xmit_bytes")->d, 8e6, 1e-6);
        }
    }
    js_buf_t b = {0};
    summary_of(m, &b, false);
    /* port 1: 5 s of 4e6 bytes/s; 4 more receive errors and 12 more out_of_buffer than at the start */
    assert_non_null(strstr(b.p, "\"xmit_bytes\": 20000000,"));
    assert_non_null(strstr(b.p, "\"rcv_errors\": 4"));
    assert_non_null(strstr(b.p, "\"out_of_buffer\": 12"));
    /* port 2: only the known +1000 words; a lower bound */
    const char *port2 = strstr(b.p, "\"port\": 2,");
    assert_non_null(port2);
    assert_non_null(strstr(port2, "\"xmit_bytes\": 4000,"));
    assert_non_null(strstr(port2, "\"complete\": false,"));
    assert_non_null(strstr(port2, "\"saturated_intervals\": 3,"));
    assert_non_null(strstr(port2, "\"cleared_intervals\": 1,"));
    assert_non_null(strstr(b.p, "\"method\": \"none\""));
    summary_of(m, &b, true);
    assert_non_null(strstr(b.p, "  infiniband       mlx5_0/1: sent 19.07 MiB, received 0 B; 4 errors, 0 "
                                "discards (node; not attributed)\n"));
    assert_non_null(
        strstr(b.p, "mlx5_0/2: sent 3.91 KiB, received 0 B (at least: counters saturated or cleared)"));
    buf_free(&b);
    model_free(m);
    sample_free(&s);
    src_close(&r);
    fixture_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counter_delta_saturating),
        cmocka_unit_test(test_collect_fixture),
        cmocka_unit_test(test_cadence),
        cmocka_unit_test(test_width_promotion),
        cmocka_unit_test(test_absent),
        cmocka_unit_test(test_model_saturation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
