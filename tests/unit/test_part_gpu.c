/* SPDX-License-Identifier: MIT
 *
 * Unit tests of the `gpu` model part on hand-built samples (rows of the nvml_* and rocm_* tables and of
 * `proc`, as the sources and the recording reader produce them): energy from the counter with a driver
 * reload in between (no delta for that interval, counted), energy integrated from power only without a
 * counter, throttle time by reason and the throttled fraction, the violation counters, ECC errors during the
 * run, the attribution of memory and utilisation to the scope (main, descendants, foreign processes, a
 * process listed after it exited, a process in both lists counted once, an unknown process list that is not
 * zero), a nested PID namespace (no attribution), AMD rows (counter resolution, a process summed over its
 * GPUs), the flags (idle GPU holding memory, memory near full, throttled, lost), and the views.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/json.h"
#include "core/sample.h"
#include "model/model.h"
#include "sources/nvml.h"
#include "sources/proc_tree.h"
#include "sources/rocm.h"
#include "sources/registry.h"
#include "parts_summary.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GiB (1024.0 * 1024 * 1024)
#define S_NS 1000000000LL

/* ---- building samples ---- */

typedef struct {
    js_sample_t s;
    js_model_t *m;
    int64_t seq;
} fx_t;

static void fx_open(fx_t *f, int32_t root_pid)
{
    memset(f, 0, sizeof(*f));
    assert_int_equal(sample_init(&f->s), 0);
    js_model_cfg_t cfg = {
        .mode = JS_MODE_RUN, .clk_tck = 100, .root_pid = root_pid, .interval_ns = S_NS, .cores_available = 2};
    f->m = model_new(&cfg);
    assert_non_null(f->m);
}

static void fx_close(fx_t *f)
{
    model_free(f->m);
    sample_free(&f->s);
}

/* begin: a new sample at t seconds with these members */
static void begin(fx_t *f, double t, const int *pids, size_t n)
{
    sample_clear(&f->s);
    js_value_t *v = rows_add(sample_rows(&f->s, &table_samples));
    val_int(&v[SAMPLES_T_MONO], (int64_t)(t * 1e9));
    val_int(&v[SAMPLES_T_UNIX], 1700000000LL * S_NS + (int64_t)(t * 1e9));
    val_int(&v[SAMPLES_MISSED], 0);
    for (size_t i = 0; i < n; i++) {
        js_value_t *p = rows_add(sample_rows(&f->s, &table_proc));
        val_int(&p[PROC_PID], pids[i]);
        val_int(&p[PROC_PPID], 1);
        val_int(&p[PROC_START_TICKS], 1000 + pids[i]);
        val_int(&p[PROC_UTIME], 0);
        val_int(&p[PROC_STIME], 0);
        val_int(&p[PROC_CUTIME], 0);
        val_int(&p[PROC_CSTIME], 0);
        val_int(&p[PROC_THREADS], 1);
        val_int(&p[PROC_RSS], 4096);
    }
}

static void feed(fx_t *f)
{
    assert_int_equal(model_feed(f->m, f->seq++, &f->s), 0);
}

static void inv(fx_t *f, const char *source, const char *key, const char *value)
{
    assert_int_equal(inventory_add(sample_rows(&f->s, &table_inventory), source, key, value), 0);
}

/* an nvml_device row with the usual columns; further columns set by the caller */
static js_value_t *nv_dev(fx_t *f, int gpu, double util_pct, double used, double total, double power_mw)
{
    js_value_t *v = rows_add(sample_rows(&f->s, &table_nvml_device));
    val_int(&v[NVD_INDEX], gpu);
    val_int(&v[NVD_LOST], 0);
    if (!isnan(util_pct)) {
        val_int(&v[NVD_GPU_UTIL], (int64_t)util_pct);
        val_int(&v[NVD_MEM_UTIL], (int64_t)(util_pct / 2));
    }
    if (!isnan(used)) {
        val_int(&v[NVD_MEM_USED], (int64_t)used);
        val_int(&v[NVD_MEM_TOTAL], (int64_t)total);
        val_int(&v[NVD_MEM_FREE], (int64_t)(total - used));
    }
    if (!isnan(power_mw))
        val_int(&v[NVD_POWER], (int64_t)power_mw);
    return v;
}

static void nv_proc(fx_t *f, int gpu, int pid, const char *type, double used)
{
    js_rows_t *r = sample_rows(&f->s, &table_nvml_process);
    js_value_t *v = rows_add(r);
    val_int(&v[NVP_INDEX], gpu);
    val_int(&v[NVP_PID], pid);
    rows_set_str(r, &v[NVP_TYPE], type, strlen(type));
    if (!isnan(used))
        val_int(&v[NVP_USED], (int64_t)used);
}

static void nv_putil(fx_t *f, int gpu, int pid, int sm, int mem)
{
    js_value_t *v = rows_add(sample_rows(&f->s, &table_nvml_putil));
    val_int(&v[NVU_INDEX], gpu);
    val_int(&v[NVU_PID], pid);
    val_int(&v[NVU_TS], 1);
    val_int(&v[NVU_SM], sm);
    val_int(&v[NVU_MEM], mem);
    val_int(&v[NVU_ENC], 0);
    val_int(&v[NVU_DEC], 0);
}

/* ---- reading results ---- */

static char *summary(fx_t *f)
{
    js_buf_t b = {0};
    assert_int_equal(parts_json(f->m, &b), 0);
    return b.p;
}

/* jnum: the number at the end of a path of keys found one after the other in the pretty JSON (NAN for null;
 * the test fails when a key is not found). JOB is the gpu section's own `job` member (indented 4 columns),
 * not a device's. */
#define JOB "@\n    \"job\": "
static double jnum(const char *json, const char *const *path)
{
    const char *p = json;
    for (size_t i = 0; path[i]; i++) {
        char key[96];
        if (path[i][0] == '@')
            snprintf(key, sizeof(key), "%s", path[i] + 1);
        else
            snprintf(key, sizeof(key), "\"%s\": ", path[i]);
        p = strstr(p, key);
        if (!p)
            fail_msg("key %s not found", path[i]);
        p += strlen(key);
    }
    if (strncmp(p, "null", 4) == 0)
        return NAN;
    return strtod(p, NULL);
}
#define J(json, ...) jnum(json, (const char *const[]){__VA_ARGS__, NULL})

static void assert_near(double got, double want)
{
    if (!(fabs(got - want) <= 1e-6 * fmax(1, fabs(want))))
        fail_msg("got %.9g, want %.9g", got, want);
}

/* view: the value of column `col` in the row of view `name` whose gpu (and pid, when >= 0) match */
static double view(fx_t *f, const char *name, int gpu, int pid, const char *col)
{
    js_view_t v;
    assert_int_equal(model_view(f->m, name, &v), 0);
    int cg = table_column(v.table, "gpu"), cp = table_column(v.table, "pid"), cc = table_column(v.table, col);
    assert_true(cc >= 0);
    for (size_t i = 0; i < v.rows->nrows; i++) {
        const js_value_t *r = rows_row(v.rows, i);
        if (r[cg].present && r[cg].i == gpu && (pid < 0 || r[cp].i == pid)) {
            if (!r[cc].present)
                return NAN;
            return v.table->cols[cc].type == JS_REAL ? r[cc].d : (double)r[cc].i;
        }
    }
    fail_msg("no row gpu %d pid %d in view %s", gpu, pid, name);
    return NAN;
}

/* ---- tests ---- */

static void test_energy_counter_reload(void **state)
{
    (void)state;
    fx_t f;
    fx_open(&f, 100);
    static const int64_t mj[] = {5000000, 5100000, 5200000, 40000, 140000};
    for (int i = 0; i < 5; i++) {
        begin(&f, i, NULL, 0);
        js_value_t *v = nv_dev(&f, 0, 50, 1 * GiB, 80 * GiB, 100000);
        val_int(&v[NVD_ENERGY], mj[i]);
        feed(&f);
    }
    char *j = summary(&f);
    /* 100 J + 100 J + (reload: none) + 100 J */
    assert_near(J(j, "devices", "energy_j"), 300);
    assert_near(J(j, "devices", "energy_counter_resets"), 1);
    assert_non_null(strstr(j, "\"energy_method\": \"counter\""));
    assert_near(J(j, "devices", "energy_covered_s"), 3);
    assert_near(view(&f, "gpu", 0, -1, "energy_j"), 300);
    assert_near(view(&f, "gpu", 0, -1, "power_w"), 100);
    assert_near(J(j, JOB, "energy_j"), 300);
    free(j);
    js_buf_t b = {0};
    assert_int_equal(parts_text(f.m, &b), 0);
    assert_non_null(strstr(b.p, "counter reset 1x"));
    buf_free(&b);
    fx_close(&f);
}

static void test_energy_integrated_without_counter(void **state)
{
    (void)state;
    fx_t f;
    fx_open(&f, 100);
    static const double mw[] = {100000, 100000, 300000, 300000};
    for (int i = 0; i < 4; i++) {
        begin(&f, i, NULL, 0);
        nv_dev(&f, 0, 50, 1 * GiB, 80 * GiB, mw[i]);
        feed(&f);
    }
    char *j = summary(&f);
    assert_near(J(j, "devices", "energy_j"), 100 + 200 + 300); /* trapezoids */
    assert_non_null(strstr(j, "\"energy_method\": \"integrated_power\""));
    assert_near(J(j, "devices", "power_w", "mean"), 200);
    assert_near(J(j, "devices", "power_w", "max"), 300);
    free(j);
    js_buf_t b = {0};
    assert_int_equal(parts_text(f.m, &b), 0);
    assert_non_null(strstr(b.p, "[integrated power]"));
    buf_free(&b);
    fx_close(&f);
}

static void test_throttle_and_ecc(void **state)
{
    (void)state;
    fx_t f;
    fx_open(&f, 100);
    static const int64_t reasons[] = {0, 0x4, 0x4 | 0x10, 0x0, 0x1};
    static const int64_t viol[] = {0, 500000000, 1500000000, 1500000000, 1500000000};
    static const int64_t ecc[] = {10, 10, 12, 0, 1}; /* a reload before the fourth reading */
    for (int i = 0; i < 5; i++) {
        begin(&f, i, NULL, 0);
        js_value_t *v = nv_dev(&f, 0, 90, 1 * GiB, 80 * GiB, 100000);
        val_int(&v[NVD_REASONS], reasons[i]);
        val_int(&v[NVD_VIOL_POWER], viol[i]);
        val_int(&v[NVD_VIOL_THERMAL], 0);
        val_int(&v[NVD_ECC_CORR], ecc[i]);
        val_int(&v[NVD_ECC_UNCORR], 0);
        feed(&f);
    }
    char *j = summary(&f);
    assert_near(J(j, "throttle_s", "sw_power_cap"), 2);
    assert_near(J(j, "throttle_s", "sync_boost"), 1);
    assert_near(J(j, "throttle_s", "gpu_idle"), 1);
    assert_near(J(j, "throttled_fraction"), 0.5); /* 2 of 4 s: sync boost and idle are not throttling */
    assert_non_null(strstr(j, "\"throttled_method\": \"clocks_event_reasons\""));
    assert_near(J(j, "violation_s", "power"), 1.5);
    assert_near(J(j, "ecc_errors", "corrected"), 3); /* 0 + 2 + (reset) + 1 */
    assert_near(J(j, "ecc_errors", "counter_resets"), 1);
    assert_non_null(strstr(j, "\"kind\": \"throttled\""));
    assert_near(view(&f, "gpu", 0, -1, "ecc_corrected"), 3);
    free(j);
    fx_close(&f);

    /* without reasons: the violation counters */
    fx_open(&f, 100);
    for (int i = 0; i < 3; i++) {
        begin(&f, i, NULL, 0);
        js_value_t *v = nv_dev(&f, 0, 90, 1 * GiB, 80 * GiB, 100000);
        val_int(&v[NVD_VIOL_POWER], i * 50000000LL); /* 5% of the time */
        val_int(&v[NVD_VIOL_THERMAL], 0);
        feed(&f);
    }
    j = summary(&f);
    assert_near(J(j, "throttled_fraction"), 0.05);
    assert_non_null(strstr(j, "\"throttled_method\": \"violation_counters\""));
    assert_null(strstr(j, "\"kind\": \"throttled\"")); /* under 10% */
    free(j);
    fx_close(&f);
}

static void test_attribution(void **state)
{
    (void)state;
    fx_t f;
    fx_open(&f, 100);
    /* sample 0: the command (100) and its child (101); foreign 999; 101 in both lists */
    int both[] = {100, 101};
    begin(&f, 0, both, 2);
    inv(&f, "nvml", "pid_namespace", "initial");
    inv(&f, "nvml", "gpu.0.name", "NVIDIA Test GPU");
    inv(&f, "nvml", "gpu.0.uuid", "GPU-test-0");
    inv(&f, "nvml", "gpu.0.memory_total_bytes", "85899345920");
    js_value_t *v = nv_dev(&f, 0, 90, 40 * GiB, 80 * GiB, 300000);
    val_int(&v[NVD_PROCS], 4);
    val_int(&v[NVD_PUTIL_SAMPLES], 4);
    nv_proc(&f, 0, 100, "compute", 20 * GiB);
    nv_proc(&f, 0, 101, "compute", 4 * GiB);
    nv_proc(&f, 0, 101, "graphics", 4 * GiB);
    nv_proc(&f, 0, 999, "compute", 6 * GiB);
    nv_putil(&f, 0, 100, 60, 20);
    nv_putil(&f, 0, 100, 80, 40);
    nv_putil(&f, 0, 101, 10, 4);
    nv_putil(&f, 0, 999, 5, 1);
    feed(&f);
    assert_near(view(&f, "gpu", 0, -1, "job_mem_bytes"), 24 * GiB);
    assert_near(view(&f, "gpu", 0, -1, "job_mem_main_bytes"), 20 * GiB);
    assert_near(view(&f, "gpu", 0, -1, "job_mem_descendants_bytes"), 4 * GiB);
    assert_near(view(&f, "gpu", 0, -1, "other_mem_bytes"), 6 * GiB);
    assert_near(view(&f, "gpu", 0, -1, "job_util_fraction"), 0.8); /* mean(0.6, 0.8) + 0.1 */
    assert_near(view(&f, "gpu", 0, -1, "util_fraction"), 0.9);
    assert_near(view(&f, "gpu_process", 0, 100, "sm_fraction"), 0.7);
    assert_near(view(&f, "gpu_process", 0, 100, "main"), 1);
    assert_near(view(&f, "gpu_process", 0, 101, "job"), 1);
    assert_near(view(&f, "gpu_process", 0, 101, "main"), 0);
    assert_near(view(&f, "gpu_process", 0, 999, "job"), 0);
    {
        js_view_t pv;
        assert_int_equal(model_view(f.m, "gpu_process", &pv), 0);
        assert_int_equal(pv.rows->nrows, 3); /* 101 once, as compute+graphics */
    }

    /* sample 1: the child has exited but the driver still lists it; the command grew */
    int root_only[] = {100};
    begin(&f, 1, root_only, 1);
    v = nv_dev(&f, 0, 10, 50 * GiB, 80 * GiB, 300000);
    val_int(&v[NVD_PROCS], 3);
    val_int(&v[NVD_PUTIL_SAMPLES], 0);
    nv_proc(&f, 0, 100, "compute", 30 * GiB);
    nv_proc(&f, 0, 101, "compute", 2 * GiB);
    nv_proc(&f, 0, 999, "compute", 6 * GiB);
    feed(&f);
    assert_near(view(&f, "gpu", 0, -1, "job_mem_bytes"), 32 * GiB);
    assert_near(view(&f, "gpu", 0, -1, "job_util_fraction"), 0); /* samples read, none newer: idle */

    /* sample 2: the process list could not be read: the job's memory is unknown, not zero */
    begin(&f, 2, root_only, 1);
    nv_dev(&f, 0, 10, 50 * GiB, 80 * GiB, 300000);
    feed(&f);
    assert_true(isnan(view(&f, "gpu", 0, -1, "job_mem_bytes")));
    assert_true(isnan(view(&f, "gpu", 0, -1, "job_util_fraction")));

    char *j = summary(&f);
    assert_near(J(j, "devices", "peak_memory_bytes", "job", "main"), 30 * GiB);
    assert_near(J(j, "devices", "peak_memory_bytes", "job", "descendants"), 4 * GiB);
    assert_near(J(j, "devices", "peak_memory_bytes", "job", "combined"), 32 * GiB);
    assert_near(J(j, "devices", "peak_memory_bytes", "others"), 6 * GiB);
    assert_near(J(j, "devices", "peak_memory_bytes", "device"), 50 * GiB);
    assert_near(J(j, "devices", "job_utilization", "mean"), 0.4);
    assert_near(J(j, "devices", "job_utilization", "max"), 0.8);
    assert_near(J(j, "devices", "utilization", "mean"), (0.9 + 0.1 + 0.1) / 3);
    assert_near(J(j, JOB, "peak_memory_bytes", "combined"), 32 * GiB);
    assert_near(J(j, JOB, "peak_memory_bytes", "main"), 30 * GiB);
    assert_near(J(j, JOB, "attribution", "samples_unknown"), 1);
    assert_near(J(j, JOB, "devices_in_use"), 1);
    assert_non_null(strstr(j, "\"name\": \"NVIDIA Test GPU\""));
    assert_non_null(strstr(j, "\"uuid\": \"GPU-test-0\""));
    assert_non_null(strstr(j, "\"method\": \"pid\""));
    free(j);
    fx_close(&f);
}

static void test_two_gpus_sums(void **state)
{
    (void)state;
    fx_t f;
    fx_open(&f, 100);
    int members[] = {100};
    static const double u0[] = {100, 80}, u1[] = {50, 0};
    for (int i = 0; i < 2; i++) {
        begin(&f, i, members, 1);
        js_value_t *v = nv_dev(&f, 0, u0[i], 10 * GiB, 80 * GiB, 300000);
        val_int(&v[NVD_PROCS], 1);
        v = nv_dev(&f, 1, u1[i], 10 * GiB, 80 * GiB, 300000);
        val_int(&v[NVD_PROCS], 1);
        nv_proc(&f, 0, 100, "compute", 8 * GiB);
        nv_proc(&f, 1, 999, "compute", 8 * GiB); /* GPU 1: someone else's */
        feed(&f);
    }
    char *j = summary(&f);
    assert_near(J(j, JOB, "utilization_sum", "mean"), (1.5 + 0.8) / 2);
    assert_near(J(j, JOB, "utilization_sum", "max"), 1.5);
    assert_near(J(j, JOB, "hardware_fraction", "mean"), 0.9); /* GPU 0 only is in use */
    assert_near(J(j, JOB, "devices_in_use"), 1);
    assert_near(J(j, JOB, "devices"), 2);
    free(j);
    fx_close(&f);
}

/* The job's GPU energy is the energy of the devices it used (a job process listed on them), each device's
 * whole energy; a device only someone else used is not the job's (it was: 626 J of "job" energy with
 * devices_in_use 0 on the fake NVML). With no device used, the job's GPU energy is 0 J, not missing. */
static void test_job_energy_of_devices_used(void **state)
{
    (void)state;
    for (int used = 0; used < 2; used++) {
        fx_t f;
        fx_open(&f, 100);
        int members[] = {100};
        for (int i = 0; i < 3; i++) {
            begin(&f, i, members, 1);
            js_value_t *v = nv_dev(&f, 0, 50, 10 * GiB, 80 * GiB, 100000);
            val_int(&v[NVD_PROCS], 1);
            val_int(&v[NVD_ENERGY], 1000000 + i * 100000); /* 100 J per second */
            v = nv_dev(&f, 1, 50, 10 * GiB, 80 * GiB, 300000);
            val_int(&v[NVD_PROCS], 1);
            val_int(&v[NVD_ENERGY], 5000000 + i * 300000); /* 300 J per second */
            nv_proc(&f, 0, used ? 100 : 998, "compute", 8 * GiB);
            nv_proc(&f, 1, 999, "compute", 8 * GiB); /* GPU 1: someone else's */
            feed(&f);
        }
        char *j = summary(&f);
        assert_near(J(j, JOB, "devices"), 2);
        assert_near(J(j, JOB, "devices_in_use"), used);
        assert_near(J(j, JOB, "energy_j"), used ? 200 : 0); /* GPU 0's 2 s, or nothing */
        assert_non_null(strstr(j, "\"energy_method\": \"the devices the job used"));
        free(j);
        js_buf_t b = {0};
        js_summary_table_t *t = figure_new();
        model_parts_summary(f.m, figure_root(t));
        assert_int_equal(summary_parts_text(&b, figure_root(t), JS_SUMMARY_SHORT), 0);
        assert_non_null(strstr(b.p, used ? "energy 200.0 J" : "energy 0.0 J"));
        figure_free(t);
        buf_free(&b);
        fx_close(&f);
    }
}

static void test_nested_namespace(void **state)
{
    (void)state;
    fx_t f;
    fx_open(&f, 100);
    int members[] = {100};
    begin(&f, 0, members, 1);
    inv(&f, "nvml", "pid_namespace", "nested");
    js_value_t *v = nv_dev(&f, 0, 50, 10 * GiB, 80 * GiB, 300000);
    val_int(&v[NVD_PROCS], 1);
    val_int(&v[NVD_PUTIL_SAMPLES], 1);
    nv_proc(&f, 0, 100, "compute", 8 * GiB); /* a host PID that happens to equal a member's */
    nv_putil(&f, 0, 100, 50, 10);
    feed(&f);
    assert_true(isnan(view(&f, "gpu", 0, -1, "job_mem_bytes")));
    assert_true(isnan(view(&f, "gpu", 0, -1, "job_util_fraction")));
    assert_true(isnan(view(&f, "gpu_process", 0, 100, "job")));
    char *j = summary(&f);
    assert_true(isnan(J(j, "devices", "peak_memory_bytes", "job", "combined")));
    assert_true(isnan(J(j, JOB, "peak_memory_bytes", "combined")));
    assert_non_null(strstr(j, "\"method\": \"none\""));
    free(j);
    fx_close(&f);
}

static void test_flags(void **state)
{
    (void)state;
    fx_t f;
    fx_open(&f, 100);
    int members[] = {100};
    for (int i = 0; i < 4; i++) {
        begin(&f, i, members, 1);
        /* GPU 0: the job holds 10 GiB and does nothing; GPU 1: 79 of 80 GiB in use, busy */
        js_value_t *v = nv_dev(&f, 0, 2, 10 * GiB, 80 * GiB, 60000);
        val_int(&v[NVD_PROCS], 1);
        v = nv_dev(&f, 1, 99, 79 * GiB, 80 * GiB, 600000);
        val_int(&v[NVD_PROCS], 1);
        nv_proc(&f, 0, 100, "compute", 10 * GiB);
        nv_proc(&f, 1, 100, "compute", 78 * GiB);
        feed(&f);
    }
    /* GPU 2 is lost at 2 s */
    fx_t g;
    fx_open(&g, 100);
    for (int i = 0; i < 4; i++) {
        begin(&g, i, members, 1);
        js_value_t *v = nv_dev(&g, 2, i < 2 ? 50 : NAN, i < 2 ? 1 * GiB : NAN, 80 * GiB, i < 2 ? 1e5 : NAN);
        if (i >= 2)
            val_int(&v[NVD_LOST], 1);
        feed(&g);
    }
    char *j = summary(&f);
    assert_non_null(strstr(j, "\"kind\": \"idle_allocated\""));
    assert_non_null(strstr(j, "\"kind\": \"memory_near_full\""));
    assert_null(strstr(j, "\"kind\": \"throttled\""));
    /* the idle flag is GPU 0's, the full one GPU 1's */
    const char *idle = strstr(j, "\"kind\": \"idle_allocated\"");
    const char *full = strstr(j, "\"kind\": \"memory_near_full\"");
    assert_true(idle && full && idle < full);
    free(j);
    j = summary(&g);
    assert_non_null(strstr(j, "\"kind\": \"lost\""));
    assert_near(J(j, "devices", "lost_at_s"), 2);
    assert_non_null(strstr(j, "\"lost\": true"));
    free(j);
    js_buf_t b = {0};
    assert_int_equal(parts_text(f.m, &b), 0);
    assert_non_null(strstr(b.p, "GPU FLAGS"));
    assert_non_null(strstr(b.p, "allocated but idle"));
    assert_non_null(strstr(b.p, "within 5% of full"));
    buf_free(&b);
    fx_close(&f);
    fx_close(&g);
}

static void test_amd(void **state)
{
    (void)state;
    fx_t f;
    fx_open(&f, 100);
    int members[] = {100, 101};
    for (int i = 0; i < 3; i++) {
        begin(&f, i, members, 2);
        if (i == 0) {
            inv(&f, "rocm", "gpu.0.name", "AMD Instinct MI210");
            inv(&f, "rocm", "pid_namespace", "initial");
        }
        for (int gpu = 0; gpu < 2; gpu++) {
            js_rows_t *r = sample_rows(&f.s, &table_rocm_device);
            js_value_t *v = rows_add(r);
            val_int(&v[RD_GPU], gpu);
            val_int(&v[RD_LOST], 0);
            val_int(&v[RD_BUSY], 50);
            val_int(&v[RD_VRAM_TOTAL], (int64_t)(64 * GiB));
            val_int(&v[RD_VRAM_USED], (int64_t)(20 * GiB));
            val_int(&v[RD_POWER], 200000000);
            val_int(&v[RD_ENERGY], 1000 + i * 1000000); /* 1e6 units of 15 uJ a second: 15 W */
            val_real(&v[RD_ENERGY_RES], 15.0);
            val_int(&v[RD_TEMP_EDGE], 45500);
            val_int(&v[RD_PROCS], gpu == 0 ? 1 : 0);
        }
        js_rows_t *p = sample_rows(&f.s, &table_rocm_process);
        js_value_t *v = rows_add(p);
        val_int(&v[RP_GPU], 0);
        val_int(&v[RP_PID], 100);
        val_int(&v[RP_VRAM], (int64_t)(16 * GiB));
        val_int(&v[RP_CU], 80);
        v = rows_add(p); /* on two GPUs, a library older than 5.7: no gpu */
        val_int(&v[RP_PID], 101);
        val_int(&v[RP_VRAM], (int64_t)(6 * GiB));
        val_int(&v[RP_GPUS], 2);
        feed(&f);
    }
    assert_near(view(&f, "gpu", 0, -1, "temp_c"), 45.5);
    assert_near(view(&f, "gpu", 0, -1, "power_w"), 200);
    assert_near(view(&f, "gpu", 0, -1, "job_mem_bytes"), 16 * GiB);
    assert_true(isnan(view(&f, "gpu", 0, -1, "job_util_fraction")));
    assert_near(view(&f, "gpu_process", 0, 100, "cu_occupancy_fraction"), 0.8);
    char *j = summary(&f);
    assert_near(J(j, "devices", "energy_j"), 30); /* 2 s at 15 W */
    assert_non_null(strstr(j, "\"vendor\": \"amd\""));
    assert_near(J(j, JOB, "peak_memory_bytes", "combined"), 22 * GiB);
    assert_near(J(j, JOB, "peak_memory_bytes", "descendants"), 6 * GiB);
    free(j);
    fx_close(&f);
}

static void test_watch_has_no_main_process(void **state)
{
    (void)state;
    fx_t f;
    fx_open(&f, 0); /* watch: no root PID */
    int members[] = {100, 101};
    begin(&f, 0, members, 2);
    js_value_t *v = nv_dev(&f, 0, 50, 10 * GiB, 80 * GiB, 300000);
    val_int(&v[NVD_PROCS], 2);
    nv_proc(&f, 0, 100, "compute", 3 * GiB);
    nv_proc(&f, 0, 101, "compute", 5 * GiB);
    feed(&f);
    char *j = summary(&f);
    assert_true(isnan(J(j, JOB, "peak_memory_bytes", "main")));
    assert_true(isnan(J(j, JOB, "peak_memory_bytes", "descendants")));
    assert_near(J(j, JOB, "peak_memory_bytes", "combined"), 8 * GiB);
    assert_true(isnan(J(j, "devices", "peak_memory_bytes", "job", "main")));
    free(j);
    fx_close(&f);
}

static void test_no_gpu_no_section(void **state)
{
    (void)state;
    fx_t f;
    fx_open(&f, 100);
    int members[] = {100};
    for (int i = 0; i < 2; i++) {
        begin(&f, i, members, 1);
        feed(&f);
    }
    char *j = summary(&f);
    assert_null(strstr(j, "\"gpu\""));
    free(j);
    js_view_t v;
    assert_int_equal(model_view(f.m, "gpu", &v), 0);
    assert_int_equal(v.rows->nrows, 0);
    fx_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_energy_counter_reload),
        cmocka_unit_test(test_energy_integrated_without_counter),
        cmocka_unit_test(test_throttle_and_ecc),
        cmocka_unit_test(test_attribution),
        cmocka_unit_test(test_two_gpus_sums),
        cmocka_unit_test(test_job_energy_of_devices_used),
        cmocka_unit_test(test_nested_namespace),
        cmocka_unit_test(test_flags),
        cmocka_unit_test(test_amd),
        cmocka_unit_test(test_watch_has_no_main_process),
        cmocka_unit_test(test_no_gpu_no_section),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
