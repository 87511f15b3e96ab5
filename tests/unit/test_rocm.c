/* SPDX-License-Identifier: MIT
 *
 * Unit tests of the `rocm` source against the fake ROCm SMI library (tests/fakes/rocm): every column of
 * rocm_device at a known scenario time (manual clock), both rsmi_frequencies_t layouts (5.x and 6.x), the
 * compute processes per GPU with rsmi_compute_process_info_by_device_get and, without it (5.2.3), summed over
 * a process's GPUs; the energy counter and its resolution, going backwards at a reload; the KFD check (no
 * class/kfd in the sysfs root: the library is not even loaded); no library; a lost GPU; NOT_SUPPORTED kept
 * once; the selection (--gpus, ROCR_VISIBLE_DEVICES, UUIDs from the unique id).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/sample.h"
#include "core/source.h"
#include "sources/gpu_select.h"
#include "sources/rocm.h"
#include "sources/registry.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROCM_LIB FAKE_ROCM_DIR "/librocm_smi64.so.1"
#define GiB (1024LL * 1024 * 1024)
#define MiB (1024LL * 1024)
#define KFD_SYSFS FIXTURES "/gpu/sys"

static char tmpdir[256], timefile[300], scn[300];

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void set_time(double t)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "%.6f\n", t);
    write_file(timefile, buf);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/jobscope-test-rocm-XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    snprintf(timefile, sizeof(timefile), "%s/time", tmpdir);
    snprintf(scn, sizeof(scn), "%s/scn", tmpdir);
    setenv("JOBSCOPE_ROCM_SMI_LIBRARY", ROCM_LIB, 1);
    setenv("FAKE_ROCM_SMI_TIME_FILE", timefile, 1);
    setenv("JOBSCOPE_TEST_PID", "1234", 1);
    unsetenv("ROCR_VISIBLE_DEVICES");
    unsetenv("HIP_VISIBLE_DEVICES");
    unsetenv("CUDA_VISIBLE_DEVICES");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(timefile);
    unlink(scn);
    rmdir(tmpdir);
    return 0;
}

/* a scenario: the MI210 one with extra lines appended (omit, layout, reload, lost) */
static const char *scenario(const char *extra_global, const char *extra_dev1)
{
    FILE *in = fopen(SCENARIOS "/rocm-mi210x2.scn", "r");
    assert_non_null(in);
    FILE *out = fopen(scn, "w");
    assert_non_null(out);
    if (extra_global)
        fprintf(out, "%s\n", extra_global);
    char line[512];
    while (fgets(line, sizeof(line), in))
        fputs(line, out);
    if (extra_dev1) /* the file ends in device 1's block */
        fprintf(out, "%s\n", extra_dev1);
    fclose(in);
    fclose(out);
    return scn;
}

typedef struct {
    js_ctx_t ctx;
    js_sample_t s;
    void *state;
    js_rows_t *rows[4];
    int init_rc;
    char why[JS_WHY_MAX]; /* the reason init gave */
} run_t;

static void run_open(run_t *r, const char *scen, const char *sysfs, const char *gpus)
{
    memset(r, 0, sizeof(*r));
    setenv("FAKE_ROCM_SMI_SCENARIO", scen, 1);
    r->ctx.mode = JS_MODE_RUN;
    r->ctx.scope.gpus = gpus;
    r->ctx.status_every = 5;
    assert_int_equal(fsroot_open(&r->ctx.root, NULL, sysfs), 0);
    assert_int_equal(sample_init(&r->s), 0);
    for (int i = 0; source_rocm.tables[i]; i++)
        r->rows[i] = sample_rows(&r->s, source_rocm.tables[i]);
    r->init_rc = source_rocm.init(&r->ctx, &r->state, r->why, sizeof(r->why));
}

static void run_collect(run_t *r, uint64_t seq)
{
    sample_clear(&r->s);
    r->ctx.seq = seq;
    assert_int_equal(source_rocm.collect(r->state, &r->ctx, r->rows), 0);
}

static void run_close(run_t *r)
{
    if (r->init_rc == 0)
        source_rocm.fini(r->state);
    sample_free(&r->s);
    fsroot_close(&r->ctx.root);
}

static const js_value_t *dev_row(const run_t *r, int64_t gpu)
{
    const js_rows_t *d = sample_rows(&r->s, &table_rocm_device);
    for (size_t i = 0; i < d->nrows; i++)
        if (rows_row(d, i)[RD_GPU].i == gpu)
            return rows_row(d, i);
    return NULL;
}

/* proc_row: the row of pid on gpu (-1: the row without a gpu) */
static const js_value_t *proc_row(const run_t *r, int64_t gpu, int64_t pid)
{
    const js_rows_t *p = sample_rows(&r->s, &table_rocm_process);
    for (size_t i = 0; i < p->nrows; i++) {
        const js_value_t *v = rows_row(p, i);
        bool g = gpu < 0 ? !v[RP_GPU].present : v[RP_GPU].present && v[RP_GPU].i == gpu;
        if (g && v[RP_PID].i == pid)
            return v;
    }
    return NULL;
}

static int64_t status_rc(const run_t *r, int64_t gpu, const char *metric)
{
    const js_rows_t *p = sample_rows(&r->s, &table_rocm_status);
    for (size_t i = 0; i < p->nrows; i++) {
        const js_value_t *v = rows_row(p, i);
        if (v[RS_GPU].i == gpu && strcmp(rows_str(p, &v[RS_METRIC]), metric) == 0)
            return v[RS_RC].i;
    }
    return -1;
}

static const char *inv(run_t *r, const char *key)
{
    js_rows_t *in = sample_rows(&r->s, &table_inventory);
    if (in->nrows == 0)
        assert_int_equal(source_rocm.inventory(r->state, &r->ctx, in), 0);
    for (size_t i = 0; i < in->nrows; i++) {
        const js_value_t *v = rows_row(in, i);
        if (strcmp(rows_str(in, &v[INV_KEY]), key) == 0)
            return rows_str(in, &v[INV_VALUE]);
    }
    return NULL;
}

#define assert_col(row, c, x)                                                                                \
    do {                                                                                                     \
        assert_true((row)[c].present);                                                                       \
        assert_int_equal((row)[c].i, (x));                                                                   \
    } while (0)

static void check_mi210_at_30(const run_t *r)
{
    const js_value_t *d = dev_row(r, 0);
    assert_non_null(d);
    assert_col(d, RD_LOST, 0);
    assert_col(d, RD_BUSY, 96);     /* 96 + 25/55 */
    assert_col(d, RD_MEM_BUSY, 36); /* 35 + 25/55*3 = 36.36 */
    assert_col(d, RD_VRAM_TOTAL, 64 * GiB);
    assert_col(d, RD_VRAM_USED, 40 * GiB);
    assert_col(d, RD_GTT_USED, 300 * MiB);
    assert_false(d[RD_VIS_VRAM_USED].present); /* not in the scenario */
    assert_col(d, RD_POWER, 284545455);        /* 280 W + 25/55 * 10 W, in uW */
    assert_col(d, RD_POWER_CAP, 300000000);
    assert_true(d[RD_ENERGY].present);
    assert_true(d[RD_ENERGY_RES].present);
    assert_true(fabs(d[RD_ENERGY_RES].d - 15.3) < 1e-5);
    /* the counter times its resolution is the integral of the power: 5 s ramp + 25 s */
    double uj = 5 * (42e6 + 280e6) / 2 + 25 * (280e6 + 284545454.5) / 2;
    assert_true(fabs((double)d[RD_ENERGY].i * d[RD_ENERGY_RES].d - uj) < 100);
    assert_col(d, RD_TEMP_EDGE, 68000);
    assert_col(d, RD_TEMP_JUNCTION, 82000);
    assert_col(d, RD_TEMP_MEMORY, 74000);
    assert_false(d[RD_FAN].present);
    assert_col(d, RD_SCLK, 1700000000); /* level 4 of 500 800 1100 1400 1700 MHz */
    assert_col(d, RD_MCLK, 1600000000);
    assert_col(d, RD_SOCCLK, 1200000000);
    assert_col(d, RD_FCLK, 1600000000);
    assert_col(d, RD_PERF_LEVEL, 0);
    assert_col(d, RD_PCIE_RATE, 16000000000);
    assert_col(d, RD_PCIE_LANES, 16);
    assert_col(d, RD_PCIE_REPLAY, 0);
    d = dev_row(r, 1);
    assert_col(d, RD_BUSY, 89); /* 88 + 25/55*2 */
    assert_col(d, RD_VRAM_USED, 30 * GiB);
    assert_false(d[RD_SOCCLK].present);
}

static void test_mi210_every_column(void **state)
{
    (void)state;
    set_time(30);
    run_t r;
    run_open(&r, SCENARIOS "/rocm-mi210x2.scn", KFD_SYSFS, NULL);
    assert_int_equal(r.init_rc, 0);
    run_collect(&r, 0);
    check_mi210_at_30(&r);
    /* processes: 1234 on both GPUs, 4711 on GPU 1 */
    const js_value_t *p = proc_row(&r, 0, 1234);
    assert_non_null(p);
    assert_col(p, RP_VRAM, 38 * GiB);
    assert_col(p, RP_CU, 92);
    assert_col(p, RP_PASID, 32769);
    assert_col(p, RP_GPUS, 2);
    p = proc_row(&r, 1, 1234);
    assert_col(p, RP_VRAM, 20 * GiB);
    assert_col(p, RP_SDMA, 1500);
    assert_col(p, RP_CU, 60);
    assert_col(proc_row(&r, 1, 4711), RP_VRAM, 8 * GiB);
    assert_null(proc_row(&r, 0, 4711));
    assert_int_equal(sample_rows(&r.s, &table_rocm_process)->nrows, 3);
    assert_col(dev_row(&r, 0), RD_PROCS, 1);
    assert_col(dev_row(&r, 1), RD_PROCS, 2);
    assert_int_equal(status_rc(&r, 0, "fan"), 2);
    assert_int_equal(status_rc(&r, 1, "temperature_memory"), 2);
    /* not at the cadence: no PCIe link, SoC clock, power cap; NOT_SUPPORTED said once */
    run_collect(&r, 1);
    assert_false(dev_row(&r, 0)[RD_PCIE_RATE].present);
    assert_false(dev_row(&r, 0)[RD_POWER_CAP].present);
    assert_true(dev_row(&r, 0)[RD_SCLK].present);
    assert_int_equal(status_rc(&r, 0, "fan"), -1);
    assert_string_equal(inv(&r, "gpu.0.name"), "AMD Instinct MI210");
    assert_string_equal(inv(&r, "gpu.0.uuid"), "GPU-2f1c5d8e9a7b3c41");
    assert_string_equal(inv(&r, "gpu.0.pci_bus_id"), "0000:c1:00.0");
    assert_string_equal(inv(&r, "gpu.1.memory_total_bytes"), "68719476736");
    assert_string_equal(inv(&r, "gpu.0.power_cap_uw"), "300000000");
    assert_string_equal(inv(&r, "driver_version"), "6.1.0");
    assert_string_equal(inv(&r, "process_vram"), "per GPU (by_device_get)");
    run_close(&r);
}

static void test_rocm6_layout(void **state)
{
    (void)state;
    set_time(30);
    run_t r;
    run_open(&r, scenario("frequencies_layout 6", NULL), KFD_SYSFS, NULL);
    assert_int_equal(r.init_rc, 0);
    run_collect(&r, 0);
    check_mi210_at_30(&r);
    run_close(&r);
}

static void test_old_library_process_sums(void **state)
{
    (void)state;
    set_time(30);
    run_t r;
    run_open(&r, scenario("omit rsmi_compute_process_info_by_device_get", NULL), KFD_SYSFS, NULL);
    assert_int_equal(r.init_rc, 0);
    run_collect(&r, 0);
    const js_value_t *p = proc_row(&r, -1, 1234); /* on two GPUs: one row, summed */
    assert_non_null(p);
    assert_col(p, RP_VRAM, 58 * GiB);
    assert_col(p, RP_GPUS, 2);
    assert_col(proc_row(&r, 1, 4711), RP_VRAM, 8 * GiB); /* on one GPU: that GPU */
    assert_string_equal(inv(&r, "process_vram"), "summed over a process's GPUs (by_pid_get)");
    run_close(&r);
}

static void test_reload_lost(void **state)
{
    (void)state;
    set_time(10);
    run_t r;
    run_open(&r, scenario(NULL, "reload 15\nlost 25"), KFD_SYSFS, NULL);
    assert_int_equal(r.init_rc, 0);
    run_collect(&r, 0);
    int64_t e10 = dev_row(&r, 1)[RD_ENERGY].i;
    set_time(20);
    run_collect(&r, 1);
    const js_value_t *d = dev_row(&r, 1);
    assert_true(d[RD_ENERGY].i < e10); /* restarted at 15 s: stored as read */
    assert_col(d, RD_LOST, 0);
    set_time(26);
    run_collect(&r, 2);
    d = dev_row(&r, 1);
    assert_col(d, RD_LOST, 1);
    assert_false(d[RD_BUSY].present);
    assert_col(dev_row(&r, 0), RD_LOST, 0);
    assert_int_equal(status_rc(&r, 1, "busy"), (int64_t)0xFFFFFFFFu);
    run_close(&r);
}

static void test_no_kfd_no_library(void **state)
{
    (void)state;
    run_t r;
    run_open(&r, SCENARIOS "/rocm-mi210x2.scn", FIXTURES "/system/sys", NULL); /* a sysfs without class/kfd */
    assert_int_equal(r.init_rc, -ENODEV);
    assert_non_null(strstr(r.why, "kfd"));
    run_close(&r);
    setenv("JOBSCOPE_ROCM_SMI_LIBRARY", "/nonexistent/librocm_smi64.so.1", 1);
    run_open(&r, SCENARIOS "/rocm-mi210x2.scn", KFD_SYSFS, NULL);
    assert_int_equal(r.init_rc, -ENOENT);
    assert_non_null(strstr(r.why, "/nonexistent"));
    run_close(&r);
    setenv("JOBSCOPE_ROCM_SMI_LIBRARY", ROCM_LIB, 1);
    run_open(&r, SCENARIOS "/rocm-mi210x2.scn", KFD_SYSFS, "none");
    assert_int_equal(r.init_rc, -ECANCELED);
    run_close(&r);
}

static void test_selection(void **state)
{
    (void)state;
    set_time(30);
    static const struct {
        const char *var, *val, *gpus;
        size_t n;
        int64_t first;
    } cases[] = {
        {NULL, NULL, "1", 1, 1},
        {NULL, NULL, "GPU-7a3e1b9c5d2f4e60", 1, 1},
        {NULL, NULL, "2f1c", 1, 0},
        {"ROCR_VISIBLE_DEVICES", "1", NULL, 1, 1},
        {"HIP_VISIBLE_DEVICES", "0", NULL, 1, 0},
        {"ROCR_VISIBLE_DEVICES", "GPU-7a3e1b9c5d2f4e60,0", NULL, 2, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (cases[i].var)
            setenv(cases[i].var, cases[i].val, 1);
        run_t r;
        run_open(&r, SCENARIOS "/rocm-mi210x2.scn", KFD_SYSFS, cases[i].gpus);
        assert_int_equal(r.init_rc, 0);
        run_collect(&r, 0);
        const js_rows_t *d = sample_rows(&r.s, &table_rocm_device);
        assert_int_equal(d->nrows, cases[i].n);
        assert_int_equal(rows_row(d, 0)[RD_GPU].i, cases[i].first);
        if (cases[i].n == 1 && cases[i].first == 0) /* 4711 is on GPU 1 only: not listed */
            assert_null(proc_row(&r, 1, 4711));
        run_close(&r);
        if (cases[i].var)
            unsetenv(cases[i].var);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mi210_every_column),       cmocka_unit_test(test_rocm6_layout),
        cmocka_unit_test(test_old_library_process_sums), cmocka_unit_test(test_reload_lost),
        cmocka_unit_test(test_no_kfd_no_library),        cmocka_unit_test(test_selection),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
