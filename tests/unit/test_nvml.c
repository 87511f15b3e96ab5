/* SPDX-License-Identifier: MIT
 *
 * Unit tests of the `nvml` source against the fake NVML libraries (tests/fakes): every column of
 * nvml_device at a known scenario time (manual clock, $FAKE_NVML_TIME_FILE), the process lists mixing the
 * job's PIDs and foreign ones, process-utilisation samples and lastSeenTimeStamp (NOT_FOUND = no sample),
 * the cadence, NOT_SUPPORTED and NO_PERMISSION kept once in nvml_status, a driver reload (the energy counter
 * goes backwards, stored raw), a GPU lost mid-run, a GPU the user may not open, MIG instances, the old-ABI
 * library (missing entry points, v1 memory and process layouts, legacy PCI bus id), no library at all, no
 * driver, and the selection (--gpus, CUDA_VISIBLE_DEVICES and its CUDA rule, NVIDIA_VISIBLE_DEVICES, MIG
 * UUIDs, an attached process's environ read through the procfs root). Also gpu_select's parser.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/sample.h"
#include "core/source.h"
#include "sources/gpu_select.h"
#include "sources/nvml.h"
#include "sources/registry.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NVML_LIB FAKE_NVML_DIR "/libnvidia-ml.so.1"
#define NVML_OLD_LIB FAKE_NVML_OLD_DIR "/libnvidia-ml.so.1"
#define GiB (1024LL * 1024 * 1024)
#define MiB (1024LL * 1024)

static char tmpdir[256];
static char timefile[300];

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

static void clear_env(void)
{
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("NVIDIA_VISIBLE_DEVICES");
    unsetenv("FAKE_NVML_SCENARIO");
    setenv("JOBSCOPE_NVML_LIBRARY", NVML_LIB, 1);
    setenv("FAKE_NVML_TIME_FILE", timefile, 1);
    setenv("JOBSCOPE_TEST_PID", "1234", 1);
    setenv("JOBSCOPE_TEST_CHILD_PID", "1235", 1);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/jobscope-test-nvml-XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    snprintf(timefile, sizeof(timefile), "%s/time", tmpdir);
    clear_env();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "%s/time", tmpdir);
    unlink(cmd);
    snprintf(cmd, sizeof(cmd), "%s/scn", tmpdir);
    unlink(cmd);
    snprintf(cmd, sizeof(cmd), "%s/proc/4242/environ", tmpdir);
    unlink(cmd);
    snprintf(cmd, sizeof(cmd), "%s/proc/4242", tmpdir);
    rmdir(cmd);
    snprintf(cmd, sizeof(cmd), "%s/proc", tmpdir);
    rmdir(cmd);
    rmdir(tmpdir);
    return 0;
}

/* ---- a source run: init, collect, inventory into a sample of every registered table ---- */

typedef struct {
    js_ctx_t ctx;
    js_sample_t s;
    void *state;
    js_rows_t *rows[6];
    int init_rc;
    char why[JS_WHY_MAX]; /* the reason init gave */
} run_t;

static void run_open(run_t *r, const char *scenario, js_mode_t mode, const char *gpus)
{
    memset(r, 0, sizeof(*r));
    if (scenario)
        setenv("FAKE_NVML_SCENARIO", scenario, 1);
    r->ctx.mode = mode;
    r->ctx.scope.gpus = gpus;
    r->ctx.status_every = 5;
    assert_int_equal(fsroot_open(&r->ctx.root, NULL, NULL), 0);
    assert_int_equal(sample_init(&r->s), 0);
    for (int i = 0; source_nvml.tables[i]; i++)
        r->rows[i] = sample_rows(&r->s, source_nvml.tables[i]);
    r->init_rc = source_nvml.init(&r->ctx, &r->state, r->why, sizeof(r->why));
}

static void run_collect(run_t *r, uint64_t seq)
{
    sample_clear(&r->s);
    r->ctx.seq = seq;
    assert_int_equal(source_nvml.collect(r->state, &r->ctx, r->rows), 0);
}

static void run_close(run_t *r)
{
    if (r->init_rc == 0)
        source_nvml.fini(r->state);
    sample_free(&r->s);
    fsroot_close(&r->ctx.root);
}

static const js_value_t *dev_row(const run_t *r, int64_t gpu)
{
    const js_rows_t *d = sample_rows(&r->s, &table_nvml_device);
    for (size_t i = 0; i < d->nrows; i++)
        if (rows_row(d, i)[NVD_INDEX].i == gpu)
            return rows_row(d, i);
    return NULL;
}

static size_t dev_rows(const run_t *r)
{
    return sample_rows(&r->s, &table_nvml_device)->nrows;
}

static const js_value_t *proc_row(const run_t *r, int64_t gpu, int64_t pid)
{
    const js_rows_t *p = sample_rows(&r->s, &table_nvml_process);
    for (size_t i = 0; i < p->nrows; i++) {
        const js_value_t *v = rows_row(p, i);
        if (v[NVP_INDEX].i == gpu && v[NVP_PID].i == pid)
            return v;
    }
    return NULL;
}

static size_t putil_count(const run_t *r, int64_t gpu, int64_t pid)
{
    const js_rows_t *p = sample_rows(&r->s, &table_nvml_putil);
    size_t n = 0;
    for (size_t i = 0; i < p->nrows; i++) {
        const js_value_t *v = rows_row(p, i);
        n += v[NVU_INDEX].i == gpu && v[NVU_PID].i == pid;
    }
    return n;
}

/* status_rc: the code recorded for (gpu, metric) in this sample's nvml_status, or -1 */
static int64_t status_rc(const run_t *r, int64_t gpu, const char *metric)
{
    const js_rows_t *p = sample_rows(&r->s, &table_nvml_status);
    for (size_t i = 0; i < p->nrows; i++) {
        const js_value_t *v = rows_row(p, i);
        if (v[NVS_INDEX].i == gpu && strcmp(rows_str(p, &v[NVS_METRIC]), metric) == 0)
            return v[NVS_RC].i;
    }
    return -1;
}

static const char *inv(run_t *r, const char *key)
{
    js_rows_t *in = sample_rows(&r->s, &table_inventory);
    if (in->nrows == 0)
        assert_int_equal(source_nvml.inventory(r->state, &r->ctx, in), 0);
    for (size_t i = 0; i < in->nrows; i++) {
        const js_value_t *v = rows_row(in, i);
        if (strcmp(rows_str(in, &v[INV_KEY]), key) == 0)
            return v[INV_VALUE].present ? rows_str(in, &v[INV_VALUE]) : "";
    }
    return NULL;
}

#define assert_col(row, c, x)                                                                                \
    do {                                                                                                     \
        assert_true((row)[c].present);                                                                       \
        assert_int_equal((row)[c].i, (x));                                                                   \
    } while (0)

/* ---- tests ---- */

static void test_busy_every_column(void **state)
{
    (void)state;
    set_time(30);
    run_t r;
    run_open(&r, SCENARIOS "/nvml-h100x2-busy.scn", JS_MODE_RUN, NULL);
    assert_int_equal(r.init_rc, 0);
    run_collect(&r, 0);
    assert_int_equal(dev_rows(&r), 2);
    const js_value_t *d = dev_row(&r, 0);
    assert_non_null(d);
    assert_col(d, NVD_LOST, 0);
    assert_col(d, NVD_GPU_UTIL, 97); /* linear 5:97 60:98 at 30 = 97.45 */
    assert_col(d, NVD_MEM_UTIL, 42); /* 41 + 25/55*3 = 42.36 */
    assert_col(d, NVD_MEM_TOTAL, 85520809984);
    assert_col(d, NVD_MEM_USED, 72 * GiB); /* v2: reserved apart */
    assert_col(d, NVD_MEM_RESERVED, 541065216);
    assert_col(d, NVD_MEM_FREE, 85520809984 - 72 * GiB - 541065216);
    assert_col(d, NVD_MEM_USED_INCL_RESERVED, 0);
    assert_col(d, NVD_BAR1_USED, 18 * MiB);
    assert_col(d, NVD_BAR1_TOTAL, 137438953472);
    assert_col(d, NVD_POWER, 689500);       /* 690000 - 10/40*2000 */
    assert_col(d, NVD_POWER_LIMIT, 700000); /* cadence: read at seq 0 */
    /* energy: 123456789000 mJ + the integral of power from 0 to 30 s in mW*s */
    double integral =
        5 * (72000 + 650000) / 2.0 + 15 * (650000 + 690000) / 2.0 + 10 * (690000 + 689500) / 2.0;
    assert_true(d[NVD_ENERGY].present);
    assert_true(llabs(d[NVD_ENERGY].i - (int64_t)(123456789000.0 + integral)) <= 1);
    assert_col(d, NVD_TEMP, 62);
    assert_false(d[NVD_FAN].present); /* not in the scenario: NOT_SUPPORTED */
    assert_col(d, NVD_CLK_GRAPHICS, 1755);
    assert_col(d, NVD_CLK_SM, 1755);
    assert_col(d, NVD_CLK_MEM, 2619);
    assert_col(d, NVD_CLK_VIDEO, 1755);
    assert_col(d, NVD_PSTATE, 0);
    assert_col(d, NVD_REASONS, 0x4);
    assert_col(d, NVD_VIOL_POWER, 9500000000LL);
    assert_col(d, NVD_VIOL_THERMAL, 0);
    assert_col(d, NVD_PCIE_TX, 1063636); /* 1200000 - 25/55*300000 */
    assert_col(d, NVD_PCIE_RX, 3181818); /* 3500000 - 25/55*700000 */
    assert_col(d, NVD_PCIE_REPLAY, 0);
    assert_col(d, NVD_ECC_CORR, 0);
    assert_col(d, NVD_ECC_UNCORR, 0);
    assert_col(d, NVD_ENC, 0);
    assert_col(d, NVD_DEC, 0);
    assert_col(d, NVD_MIG_MODE, 0);
    assert_col(d, NVD_PROCS, 3);
    assert_int_equal(status_rc(&r, 0, "fan"), 3); /* NOT_SUPPORTED, kept once */

    /* processes: the job's two and a foreign one on GPU 0; the job's and a foreign one on GPU 1 */
    const js_value_t *p = proc_row(&r, 0, 1234);
    assert_non_null(p);
    assert_col(p, NVP_USED, 40 * GiB);
    assert_false(p[NVP_GI].present);
    assert_false(p[NVP_CI].present);
    assert_string_equal(rows_str(sample_rows(&r.s, &table_nvml_process), &p[NVP_TYPE]), "compute");
    assert_col(proc_row(&r, 0, 1235), NVP_USED, 24 * GiB);
    assert_col(proc_row(&r, 0, 4711), NVP_USED, 8 * GiB);
    assert_col(proc_row(&r, 1, 1234), NVP_USED, 62 * GiB);
    assert_col(proc_row(&r, 1, 4712), NVP_USED, 6 * GiB);
    assert_int_equal(sample_rows(&r.s, &table_nvml_process)->nrows, 5);

    /* process utilisation: every sample since init (t=1..30 for 1234 and 4711, t=2..30 for 1235) */
    assert_int_equal(putil_count(&r, 0, 1234), 30);
    assert_int_equal(putil_count(&r, 0, 1235), 29);
    assert_int_equal(putil_count(&r, 0, 4711), 30);
    assert_col(d, NVD_PUTIL_SAMPLES, 89);

    /* the same time again: nothing newer (NOT_FOUND = none, not a failure); not at the cadence */
    run_collect(&r, 1);
    d = dev_row(&r, 0);
    assert_col(d, NVD_PUTIL_SAMPLES, 0);
    assert_int_equal(putil_count(&r, 0, 1234), 0);
    assert_int_equal(status_rc(&r, 0, "process_utilization"), -1);
    assert_false(d[NVD_PCIE_TX].present);
    assert_false(d[NVD_ECC_CORR].present);
    assert_false(d[NVD_POWER_LIMIT].present);
    assert_int_equal(status_rc(&r, 0, "fan"), -1); /* once per run */
    /* one second on: one sample per putil rule */
    set_time(31);
    run_collect(&r, 2);
    assert_int_equal(putil_count(&r, 0, 1234), 1);
    assert_int_equal(putil_count(&r, 1, 1234), 1);
    const js_rows_t *u = sample_rows(&r.s, &table_nvml_putil);
    for (size_t i = 0; i < u->nrows; i++) {
        const js_value_t *v = rows_row(u, i);
        if (v[NVU_INDEX].i == 0 && v[NVU_PID].i == 1234) {
            assert_col(v, NVU_SM, 91);
            assert_col(v, NVU_MEM, 38);
            assert_col(v, NVU_ENC, 0);
        }
    }
    /* the cadence */
    run_collect(&r, 5);
    assert_true(dev_row(&r, 0)[NVD_PCIE_TX].present);

    assert_string_equal(inv(&r, "driver_version"), "550.90.07");
    assert_string_equal(inv(&r, "nvml_version"), "12.550.90.07");
    assert_string_equal(inv(&r, "cuda_driver_version"), "12.4");
    assert_string_equal(inv(&r, "devices"), "2");
    assert_string_equal(inv(&r, "selected"), "0,1");
    assert_string_equal(inv(&r, "gpu.0.name"), "NVIDIA H100 80GB HBM3");
    assert_string_equal(inv(&r, "gpu.0.uuid"), "GPU-6f4e2b1c-9a3d-4c8e-b1f2-0d3c5a7e9b11");
    assert_string_equal(inv(&r, "gpu.0.pci_bus_id"), "00000000:19:00.0");
    assert_string_equal(inv(&r, "gpu.1.pci_bus_id"), "00000000:3B:00.0");
    assert_string_equal(inv(&r, "gpu.0.memory_total_bytes"), "85520809984");
    assert_string_equal(inv(&r, "gpu.0.compute_mode"), "default");
    assert_string_equal(inv(&r, "gpu.0.power_limit_mw"), "700000");
    assert_string_equal(inv(&r, "gpu.0.mig_mode"), "disabled");
    assert_non_null(inv(&r, "pid_namespace"));
    assert_null(inv(&r, "missing_entry_points"));
    run_close(&r);
}

static void test_faults(void **state)
{
    (void)state;
    set_time(5);
    run_t r;
    run_open(&r, SCENARIOS "/nvml-faults.scn", JS_MODE_RUN, NULL);
    assert_int_equal(r.init_rc, 0);
    run_collect(&r, 0);
    assert_int_equal(dev_rows(&r), 2); /* GPU 2: NO_PERMISSION on its handle */
    assert_null(dev_row(&r, 2));
    assert_string_equal(inv(&r, "gpu.2.error"), "Insufficient Permissions");
    assert_string_equal(inv(&r, "selected"), "0,1");
    const js_value_t *d = dev_row(&r, 0);
    assert_false(d[NVD_FAN].present);
    assert_false(d[NVD_CLK_VIDEO].present);
    assert_false(d[NVD_ECC_CORR].present);
    assert_int_equal(status_rc(&r, 0, "ecc_corrected"), 4); /* NO_PERMISSION */
    assert_int_equal(status_rc(&r, 0, "ecc_uncorrected"), 4);
    assert_int_equal(status_rc(&r, 0, "clock_video"), 3);
    assert_int_equal(status_rc(&r, 1, "process_utilization"), 3);
    assert_col(d, NVD_PROCS, 1);
    int64_t e5 = d[NVD_ENERGY].i;
    /* 12 s: the process list is refused (NO_PERMISSION): processes missing, not zero */
    set_time(12);
    run_collect(&r, 1);
    d = dev_row(&r, 0);
    assert_false(d[NVD_PROCS].present);
    assert_null(proc_row(&r, 0, 1234));
    assert_int_equal(status_rc(&r, 0, "compute_processes"), 4);
    /* 16 s: allowed again */
    set_time(16);
    run_collect(&r, 2);
    d = dev_row(&r, 0);
    assert_col(d, NVD_PROCS, 1);
    assert_col(proc_row(&r, 0, 1234), NVP_USED, 20 * GiB);
    int64_t e16 = d[NVD_ENERGY].i;
    assert_true(e16 > e5);
    /* 25 s: reloaded at 20 s: the counter went backwards, and is stored as read */
    set_time(25);
    run_collect(&r, 3);
    d = dev_row(&r, 0);
    assert_true(d[NVD_ENERGY].present);
    assert_true(d[NVD_ENERGY].i < e16);
    assert_true(llabs(d[NVD_ENERGY].i - 5 * 250000) <= 1); /* 5 s at 250 W since the reload */
    /* 31 s: GPU 1 is lost; GPU 0 goes on */
    set_time(31);
    run_collect(&r, 4);
    d = dev_row(&r, 1);
    assert_non_null(d);
    assert_col(d, NVD_LOST, 1);
    assert_int_equal(status_rc(&r, 1, "device"), 15);
    assert_col(dev_row(&r, 0), NVD_LOST, 0);
    assert_true(dev_row(&r, 0)[NVD_POWER].present);
    run_collect(&r, 5);
    d = dev_row(&r, 1);
    assert_col(d, NVD_LOST, 1);
    for (int c = NVD_GPU_UTIL; c < NVD__MAX; c++)
        assert_false(d[c].present);
    assert_int_equal(status_rc(&r, 1, "device"), -1); /* said once */
    run_close(&r);
}

static void test_old_abi(void **state)
{
    (void)state;
    setenv("JOBSCOPE_NVML_LIBRARY", NVML_OLD_LIB, 1);
    set_time(30);
    run_t r;
    run_open(&r, SCENARIOS "/nvml-h100x2-busy.scn", JS_MODE_RUN, NULL);
    assert_int_equal(r.init_rc, 0);
    run_collect(&r, 0);
    const js_value_t *d = dev_row(&r, 0);
    assert_col(d, NVD_MEM_USED, 72 * GiB + 541065216); /* v1: reserved counted as used */
    assert_false(d[NVD_MEM_RESERVED].present);
    assert_col(d, NVD_MEM_USED_INCL_RESERVED, 1);
    assert_false(d[NVD_ENERGY].present);
    assert_int_equal(status_rc(&r, 0, "energy"), 13); /* FUNCTION_NOT_FOUND */
    assert_col(d, NVD_TEMP, 62);                      /* nvmlDeviceGetTemperature */
    assert_col(d, NVD_REASONS, 0x4);                  /* ...ThrottleReasons */
    assert_false(d[NVD_MIG_MODE].present);
    assert_col(proc_row(&r, 0, 1234), NVP_USED, 40 * GiB); /* 16-byte entries */
    assert_false(proc_row(&r, 0, 1234)[NVP_GI].present);
    assert_col(proc_row(&r, 1, 4712), NVP_USED, 6 * GiB);
    assert_string_equal(inv(&r, "gpu.0.pci_bus_id"), "0000:19:00.0"); /* the legacy 52-byte layout */
    const char *missing = inv(&r, "missing_entry_points");
    assert_non_null(missing);
    assert_non_null(strstr(missing, "nvmlDeviceGetTotalEnergyConsumption"));
    assert_non_null(strstr(missing, "nvmlDeviceGetMemoryInfo_v2"));
    run_collect(&r, 1);
    assert_int_equal(status_rc(&r, 0, "energy"), -1); /* once */
    run_close(&r);
    setenv("JOBSCOPE_NVML_LIBRARY", NVML_LIB, 1);
}

static void test_mig(void **state)
{
    (void)state;
    set_time(10);
    run_t r;
    run_open(&r, SCENARIOS "/nvml-mig.scn", JS_MODE_RUN, NULL);
    assert_int_equal(r.init_rc, 0);
    run_collect(&r, 0);
    const js_value_t *d = dev_row(&r, 0);
    assert_col(d, NVD_MIG_MODE, 1);
    assert_false(d[NVD_GPU_UTIL].present);
    assert_int_equal(status_rc(&r, 0, "utilization"), 3);
    assert_int_equal(status_rc(&r, 0, "process_utilization"), 3);
    const js_rows_t *m = sample_rows(&r.s, &table_nvml_mig);
    assert_int_equal(m->nrows, 3);
    static const int64_t idx[3] = {0, 1, 3}, gi[3] = {1, 5, 13}, used[3] = {30 * GiB, 12 * GiB, 6 * GiB};
    for (size_t i = 0; i < 3; i++) {
        const js_value_t *v = rows_row(m, i);
        assert_col(v, NVM_INDEX, 0);
        assert_col(v, NVM_MIG, idx[i]);
        assert_col(v, NVM_GI, gi[i]);
        assert_col(v, NVM_CI, 0);
        assert_col(v, NVM_MEM_USED, used[i]);
    }
    assert_col(rows_row(m, 0), NVM_MEM_TOTAL, 40 * GiB);
    const js_value_t *p = proc_row(&r, 0, 1234);
    assert_col(p, NVP_GI, 1);
    assert_col(p, NVP_CI, 0);
    assert_col(proc_row(&r, 0, 5002), NVP_GI, 13);
    assert_string_equal(inv(&r, "gpu.0.mig_mode"), "enabled");
    assert_string_equal(inv(&r, "gpu.0.mig.1.name"), "NVIDIA H100 80GB HBM3 MIG 2g.20gb");
    assert_string_equal(inv(&r, "gpu.0.mig.3.uuid"), "MIG-c3d4e5f6-a7b8-5c9d-0e1f-2a3b4c5d6e7f");
    assert_string_equal(inv(&r, "gpu.1.mig_mode"), "disabled");
    run_close(&r);
}

static void test_no_library_no_driver(void **state)
{
    (void)state;
    run_t r;
    setenv("JOBSCOPE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    run_open(&r, SCENARIOS "/nvml-h100x2-busy.scn", JS_MODE_RUN, NULL);
    assert_int_equal(r.init_rc, -ENOENT);
    assert_non_null(strstr(r.why, "NVML not loaded: "));
    assert_non_null(strstr(r.why, "/nonexistent/libnvidia-ml.so.1"));
    run_close(&r);
    setenv("JOBSCOPE_NVML_LIBRARY", NVML_LIB, 1);
    unsetenv("FAKE_NVML_SCENARIO"); /* the fake then acts as a machine without the driver */
    run_open(&r, NULL, JS_MODE_RUN, NULL);
    assert_int_equal(r.init_rc, -ENODEV);
    assert_string_equal(r.why, "nvmlInit: Driver Not Loaded");
    run_close(&r);
    run_open(&r, SCENARIOS "/nvml-h100x2-busy.scn", JS_MODE_RUN, "none");
    assert_int_equal(r.init_rc, -ECANCELED);
    assert_string_equal(r.why, "--gpus none");
    run_close(&r);
    run_open(&r, SCENARIOS "/nvml-h100x2-busy.scn", JS_MODE_RUN, NULL);
    assert_int_equal(r.init_rc, 0);
    assert_string_equal(r.why, ""); /* no reason: it did not fail */
    run_close(&r);
}

/* selected: the GPUs a run with this selection collects, as "0,1" */
static void selected(const char *scenario, js_mode_t mode, const char *gpus, const char *want)
{
    set_time(15);
    run_t r;
    run_open(&r, scenario, mode, gpus);
    char got[64] = "";
    if (r.init_rc == 0) {
        run_collect(&r, 0);
        for (size_t i = 0; i < dev_rows(&r); i++) {
            size_t len = strlen(got);
            snprintf(got + len, sizeof(got) - len, "%s%lld", len ? "," : "",
                     (long long)rows_row(sample_rows(&r.s, &table_nvml_device), i)[NVD_INDEX].i);
        }
    } else {
        snprintf(got, sizeof(got), "init %d", r.init_rc);
    }
    assert_string_equal(got, want);
    run_close(&r);
}

static void test_selection(void **state)
{
    (void)state;
    const char *busy = SCENARIOS "/nvml-h100x2-busy.scn";
    selected(busy, JS_MODE_RUN, NULL, "0,1");
    selected(busy, JS_MODE_RUN, "all", "0,1");
    selected(busy, JS_MODE_RUN, "1", "1");
    selected(busy, JS_MODE_RUN, "1,0", "0,1");
    selected(busy, JS_MODE_RUN, "GPU-2b8d0e47-13c5-4f9a-8e6d-7c1a2f3b4d55", "1");
    selected(busy, JS_MODE_RUN, "GPU-2b8d", "1"); /* a unique prefix */
    selected(busy, JS_MODE_RUN, "7,0", "0");      /* --gpus skips what names no GPU */
    selected(busy, JS_MODE_RUN, "7", "init -19");
    selected(busy, JS_MODE_RUN, "none", "init -125");
    setenv("CUDA_VISIBLE_DEVICES", "1", 1);
    selected(busy, JS_MODE_RUN, NULL, "1");
    selected(busy, JS_MODE_RUN, "0", "0"); /* --gpus wins */
    setenv("CUDA_VISIBLE_DEVICES", "GPU-6f4e2b1c-9a3d-4c8e-b1f2-0d3c5a7e9b11,7,1", 1);
    selected(busy, JS_MODE_RUN, NULL, "0"); /* CUDA's rule: the list ends at 7 */
    setenv("CUDA_VISIBLE_DEVICES", "-1", 1);
    selected(busy, JS_MODE_RUN, NULL, "init -19");
    setenv("CUDA_VISIBLE_DEVICES", "", 1);
    selected(busy, JS_MODE_RUN, NULL, "init -19");
    selected(busy, JS_MODE_WATCH, NULL, "0,1"); /* watch: the node's GPUs */
    unsetenv("CUDA_VISIBLE_DEVICES");
    setenv("NVIDIA_VISIBLE_DEVICES", "1", 1);
    selected(busy, JS_MODE_RUN, NULL, "1");
    setenv("NVIDIA_VISIBLE_DEVICES", "all", 1);
    selected(busy, JS_MODE_RUN, NULL, "0,1");
    setenv("CUDA_VISIBLE_DEVICES", "0", 1); /* CUDA_VISIBLE_DEVICES first */
    selected(busy, JS_MODE_RUN, NULL, "0");
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("NVIDIA_VISIBLE_DEVICES");
    /* a MIG instance's UUID selects its GPU */
    setenv("CUDA_VISIBLE_DEVICES", "MIG-b2c3d4e5-f6a7-5b8c-9d0e-1f2a3b4c5d6e", 1);
    selected(SCENARIOS "/nvml-mig.scn", JS_MODE_RUN, NULL, "0");
    unsetenv("CUDA_VISIBLE_DEVICES");
}

static void test_selection_attach_environ(void **state)
{
    (void)state;
    /* attach: the watched process's environment, read through the procfs root */
    char dir[400], path[420];
    snprintf(dir, sizeof(dir), "%s/proc", tmpdir);
    mkdir(dir, 0755);
    snprintf(path, sizeof(path), "%s/4242", dir);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/4242/environ", dir);
    static const char env[] = "HOME=/root\0CUDA_VISIBLE_DEVICES=1\0PATH=/bin\0";
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, env, sizeof(env) - 1), (ssize_t)(sizeof(env) - 1));
    close(fd);
    setenv("CUDA_VISIBLE_DEVICES", "0", 1); /* jobscope's own: not the attached process's */
    set_time(15);
    run_t r;
    memset(&r, 0, sizeof(r));
    setenv("FAKE_NVML_SCENARIO", SCENARIOS "/nvml-h100x2-busy.scn", 1);
    r.ctx.mode = JS_MODE_ATTACH;
    r.ctx.root_pid = 4242;
    r.ctx.status_every = 5;
    assert_int_equal(fsroot_open(&r.ctx.root, dir, NULL), 0);
    assert_int_equal(sample_init(&r.s), 0);
    for (int i = 0; source_nvml.tables[i]; i++)
        r.rows[i] = sample_rows(&r.s, source_nvml.tables[i]);
    r.init_rc = source_nvml.init(&r.ctx, &r.state, r.why, sizeof(r.why));
    assert_int_equal(r.init_rc, 0);
    run_collect(&r, 0);
    assert_int_equal(dev_rows(&r), 1);
    assert_non_null(dev_row(&r, 1));
    assert_string_equal(inv(&r, "selection"), "CUDA_VISIBLE_DEVICES=1");
    assert_string_equal(inv(&r, "pid_namespace"), "unknown"); /* a fixture procfs */
    run_close(&r);
    unsetenv("CUDA_VISIBLE_DEVICES");
}

static void test_select_parse(void **state)
{
    (void)state;
    gpu_sel_t s;
    assert_int_equal(gpu_select_parse(" all ", "--gpus", &s), 0);
    assert_int_equal(s.kind, GPU_SEL_ALL);
    assert_int_equal(gpu_select_parse("NONE", "--gpus", &s), 0);
    assert_int_equal(s.kind, GPU_SEL_NONE);
    assert_int_equal(gpu_select_parse("void", "NVIDIA_VISIBLE_DEVICES", &s), 0);
    assert_int_equal(s.kind, GPU_SEL_NONE);
    assert_int_equal(gpu_select_parse("", "CUDA_VISIBLE_DEVICES", &s), 0);
    assert_int_equal(s.kind, GPU_SEL_NONE);
    assert_int_equal(gpu_select_parse(" 0, GPU-abcd ,,3 ", "--gpus", &s), 0);
    assert_int_equal(s.kind, GPU_SEL_LIST);
    assert_int_equal(s.n, 3);
    assert_string_equal(s.item[0], "0");
    assert_string_equal(s.item[1], "GPU-abcd");
    assert_string_equal(s.item[2], "3");
    char longitem[200];
    memset(longitem, 'a', sizeof(longitem) - 1);
    longitem[sizeof(longitem) - 1] = '\0';
    assert_int_equal(gpu_select_parse(longitem, "--gpus", &s), -EINVAL);
    assert_int_equal(s.kind, GPU_SEL_NONE);
    /* matching: indices, UUID prefixes (with or without GPU-), ambiguity */
    const gpu_dev_id_t devs[2] = {{.index = 0, .uuid = "GPU-aaaa1111"}, {.index = 1, .uuid = "GPU-aaaa2222"}};
    bool sel[2];
    char un[64];
    gpu_select_parse("aaaa2", "--gpus", &s);
    assert_int_equal(gpu_select_apply(&s, devs, 2, sel, un, sizeof(un)), 1);
    assert_false(sel[0]);
    assert_true(sel[1]);
    gpu_select_parse("GPU-aaaa", "--gpus", &s); /* both: ambiguous */
    assert_int_equal(gpu_select_apply(&s, devs, 2, sel, un, sizeof(un)), 0);
    assert_string_equal(un, "GPU-aaaa");
    gpu_select_parse("2,1", "CUDA_VISIBLE_DEVICES", &s);
    s.cuda_rule = true;
    assert_int_equal(gpu_select_apply(&s, devs, 2, sel, un, sizeof(un)), 0);
    gpu_select_parse("2,1", "--gpus", &s);
    assert_int_equal(gpu_select_apply(&s, devs, 2, sel, un, sizeof(un)), 1);
    assert_string_equal(un, "2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_busy_every_column),
        cmocka_unit_test(test_faults),
        cmocka_unit_test(test_old_abi),
        cmocka_unit_test(test_mig),
        cmocka_unit_test(test_no_library_no_driver),
        cmocka_unit_test(test_selection),
        cmocka_unit_test(test_selection_attach_environ),
        cmocka_unit_test(test_select_parse),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
