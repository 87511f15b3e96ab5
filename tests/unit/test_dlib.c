/* SPDX-License-Identifier: MIT
 *
 * Unit tests of the dlopen helper (src/sys/dlib.c) against the fake vendor libraries of tests/fakes: loading
 * by soname through LD_LIBRARY_PATH (meson test puts the fake NVML and ROCm SMI directories on it), loading
 * the file an override variable names (and not falling back when that fails), the one-line reasons, the path
 * of the file loaded, binding the first candidate name that resolves (nvmlInit_v2 from the full fake,
 * nvmlInit from the old-ABI one), optional and required misses, a symbol the scenario omits, and that every
 * ROCm SMI name jobscope declares exists in Debian's real librocm_smi64.so.1 when it is installed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sources/nvml_abi.h"
#include "sources/rocm_smi_abi.h"
#include "sys/dlib.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NVML_LIB FAKE_NVML_DIR "/libnvidia-ml.so.1"
#define NVML_OLD_LIB FAKE_NVML_OLD_DIR "/libnvidia-ml.so.1"
#define ROCM_LIB FAKE_ROCM_DIR "/librocm_smi64.so.1"
#define OVERRIDE "JOBSCOPE_TEST_DLIB_LIBRARY"

static const char *const nvml_sonames[] = {"libnvidia-ml.so.1", "libnvidia-ml.so", NULL};

/* A few NVML entry points, as a source would declare them. */
typedef struct {
    nvmlInit_fn *Init;
    nvmlShutdown_fn *Shutdown;
    nvmlDeviceGetCount_fn *DeviceGetCount;
    nvmlDeviceGetMemoryInfo_v2_fn *DeviceGetMemoryInfo_v2;
    nvmlDeviceGetTotalEnergyConsumption_fn *DeviceGetTotalEnergyConsumption;
    nvmlDeviceGetRunningProcesses_v3_fn *DeviceGetComputeRunningProcesses_v3;
    nvmlDeviceGetRunningProcesses_v1_fn *DeviceGetComputeRunningProcesses_v1;
} mini_nvml_t;

#define F(field) offsetof(mini_nvml_t, field)
static const js_dlsym_t mini_table[] = {
    {{"nvmlInit_v2", "nvmlInit"}, F(Init), true},
    {{"nvmlShutdown"}, F(Shutdown), true},
    {{"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"}, F(DeviceGetCount), true},
    {{"nvmlDeviceGetMemoryInfo_v2"}, F(DeviceGetMemoryInfo_v2), false},
    {{"nvmlDeviceGetTotalEnergyConsumption"}, F(DeviceGetTotalEnergyConsumption), false},
    {{"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"},
     F(DeviceGetComputeRunningProcesses_v3),
     false},
    {{"nvmlDeviceGetComputeRunningProcesses"}, F(DeviceGetComputeRunningProcesses_v1), false},
};
#undef F
#define MINI_N (sizeof(mini_table) / sizeof(mini_table[0]))

static char *real(const char *path)
{
    static char buf[PATH_MAX];
    if (!realpath(path, buf))
        fail_msg("realpath(%s)", path);
    return buf;
}

/* The position of `dir` among the entries of LD_LIBRARY_PATH, or -1. */
static int search_path_index(const char *dir)
{
    const char *p = getenv("LD_LIBRARY_PATH");
    size_t len = strlen(dir);
    for (int i = 0; p && *p; i++) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == len && strncmp(p, dir, n) == 0)
            return i;
        p = end ? end + 1 : p + n;
    }
    return -1;
}

/* Whether a dlopen by soname finds the fake in `dir` first (meson test sets LD_LIBRARY_PATH so). */
static bool on_search_path(const char *dir)
{
    int i = search_path_index(dir), old = search_path_index(FAKE_NVML_OLD_DIR);
    return i >= 0 && (old < 0 || old > i);
}

static int setup(void **state)
{
    unsetenv(OVERRIDE);
    unsetenv("FAKE_NVML_SCENARIO");
    return 0;
}

static void test_open_by_soname(void **state)
{
    if (!on_search_path(FAKE_NVML_DIR))
        skip(); /* run through meson test, which sets LD_LIBRARY_PATH */
    js_dlib_t lib;
    char err[512];
    const char *names[] = {"libjobscope-no-such-library.so.7", "libnvidia-ml.so.1", NULL};
    assert_int_equal(dlib_open(&lib, OVERRIDE, names, err, sizeof(err)), 0);
    assert_non_null(lib.handle);
    assert_string_equal(lib.opened_as, "libnvidia-ml.so.1");
    assert_false(lib.from_env);
    assert_string_equal(lib.path, real(NVML_LIB));
    assert_string_equal(err, ""); /* the first candidate's failure is no error once one loaded */
    dlib_close(&lib);
    assert_null(lib.handle);
}

static void test_open_override(void **state)
{
    js_dlib_t lib;
    char err[512];
    setenv(OVERRIDE, NVML_OLD_LIB, 1);
    assert_int_equal(dlib_open(&lib, OVERRIDE, nvml_sonames, err, sizeof(err)), 0);
    assert_true(lib.from_env);
    assert_string_equal(lib.opened_as, NVML_OLD_LIB);
    assert_string_equal(lib.path, real(NVML_OLD_LIB));
    dlib_close(&lib);
}

static void test_override_fails_without_fallback(void **state)
{
    js_dlib_t lib;
    char err[512];
    setenv(OVERRIDE, "/nonexistent/libnvidia-ml.so.1", 1);
    assert_int_equal(dlib_open(&lib, OVERRIDE, nvml_sonames, err, sizeof(err)), -ENOENT);
    assert_null(lib.handle);
    assert_non_null(strstr(err, "$" OVERRIDE ": /nonexistent/libnvidia-ml.so.1"));
    assert_null(strchr(err, '\n'));
}

static void test_empty_override_is_unset(void **state)
{
    if (!on_search_path(FAKE_NVML_DIR))
        skip();
    js_dlib_t lib;
    setenv(OVERRIDE, "", 1);
    assert_int_equal(dlib_open(&lib, OVERRIDE, nvml_sonames, NULL, 0), 0);
    assert_false(lib.from_env);
    assert_string_equal(lib.path, real(NVML_LIB));
    dlib_close(&lib);
}

static void test_nothing_loadable(void **state)
{
    js_dlib_t lib;
    char err[512];
    const char *names[] = {"libjobscope-none-1.so", "libjobscope-none-2.so", NULL};
    assert_int_equal(dlib_open(&lib, NULL, names, err, sizeof(err)), -ENOENT);
    assert_null(lib.handle);
    char *first = strstr(err, "libjobscope-none-1.so");
    char *second = strstr(err, "; libjobscope-none-2.so");
    assert_non_null(first);
    assert_non_null(second);
    assert_true(first < second);

    char small[16];
    assert_int_equal(dlib_open(&lib, NULL, names, small, sizeof(small)), -ENOENT);
    assert_int_equal(strlen(small), sizeof(small) - 1);

    const char *none[] = {NULL};
    assert_int_equal(dlib_open(&lib, NULL, none, err, sizeof(err)), -ENOENT);
    assert_string_equal(err, "no library name given");
}

static void test_resolve_prefers_versioned(void **state)
{
    js_dlib_t lib;
    mini_nvml_t api;
    const char *bound[MINI_N];
    char err[256];
    setenv(OVERRIDE, NVML_LIB, 1);
    assert_int_equal(dlib_open(&lib, OVERRIDE, nvml_sonames, NULL, 0), 0);
    memset(&api, 0xA5, sizeof(api));
    assert_int_equal(dlib_resolve(&lib, mini_table, MINI_N, &api, bound, err, sizeof(err)), (int)MINI_N);
    assert_string_equal(err, "");
    assert_string_equal(bound[0], "nvmlInit_v2");
    assert_string_equal(bound[2], "nvmlDeviceGetCount_v2");
    assert_string_equal(bound[5], "nvmlDeviceGetComputeRunningProcesses_v3");
    assert_non_null(api.DeviceGetTotalEnergyConsumption);
    /* the pointers work: no scenario means no driver */
    assert_int_equal(api.Init(), NVML_ERROR_DRIVER_NOT_LOADED);
    assert_int_equal(api.Shutdown(), NVML_ERROR_UNINITIALIZED);
    dlib_close(&lib);
}

static void test_resolve_falls_back_on_old_abi(void **state)
{
    js_dlib_t lib;
    mini_nvml_t api;
    const char *bound[MINI_N];
    setenv(OVERRIDE, NVML_OLD_LIB, 1);
    assert_int_equal(dlib_open(&lib, OVERRIDE, nvml_sonames, NULL, 0), 0);
    /* MemoryInfo_v2, the energy counter and both _v3/_v2 process lists are absent: optional, left NULL */
    assert_int_equal(dlib_resolve(&lib, mini_table, MINI_N, &api, bound, NULL, 0), (int)MINI_N - 3);
    assert_string_equal(bound[0], "nvmlInit");
    assert_string_equal(bound[2], "nvmlDeviceGetCount");
    assert_null(bound[3]);
    assert_null(api.DeviceGetMemoryInfo_v2);
    assert_null(api.DeviceGetTotalEnergyConsumption);
    assert_null(api.DeviceGetComputeRunningProcesses_v3);
    assert_non_null(api.DeviceGetComputeRunningProcesses_v1);
    dlib_close(&lib);
}

static void test_resolve_required_missing(void **state)
{
    static const js_dlsym_t table[] = {
        {{"nvmlInit"}, offsetof(mini_nvml_t, Init), true},
        {{"nvmlDeviceGetMemoryInfo_v2"}, offsetof(mini_nvml_t, DeviceGetMemoryInfo_v2), true},
        {{"nvmlDeviceGetTotalEnergyConsumption", "nvmlDeviceGetPowerUsage_v9"},
         offsetof(mini_nvml_t, DeviceGetTotalEnergyConsumption),
         true},
    };
    js_dlib_t lib;
    mini_nvml_t api;
    const char *bound[3];
    char err[512];
    setenv(OVERRIDE, NVML_OLD_LIB, 1);
    assert_int_equal(dlib_open(&lib, OVERRIDE, nvml_sonames, NULL, 0), 0);
    assert_int_equal(dlib_resolve(&lib, table, 3, &api, bound, err, sizeof(err)), -ENOENT);
    /* nothing stays bound, not even what resolved */
    assert_null(api.Init);
    assert_null(api.DeviceGetMemoryInfo_v2);
    assert_null(bound[0]);
    assert_non_null(strstr(err, "required symbol missing: nvmlDeviceGetMemoryInfo_v2"));
    assert_null(strstr(err, "nvmlDeviceGetPowerUsage_v9")); /* only the first miss is named */
    dlib_close(&lib);
}

static void test_resolve_scenario_omits(void **state)
{
    char path[] = "/tmp/jobscope-dlib-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char text[] = "omit nvmlDeviceGetComputeRunningProcesses_v3 nvmlDeviceGetTotalEnergyConsumption\n";
    assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
    close(fd);
    setenv("FAKE_NVML_SCENARIO", path, 1);
    setenv(OVERRIDE, NVML_LIB, 1);

    js_dlib_t lib;
    mini_nvml_t api;
    const char *bound[MINI_N];
    assert_int_equal(dlib_open(&lib, OVERRIDE, nvml_sonames, NULL, 0), 0);
    assert_int_equal(dlib_resolve(&lib, mini_table, MINI_N, &api, bound, NULL, 0), (int)MINI_N - 1);
    assert_string_equal(bound[5], "nvmlDeviceGetComputeRunningProcesses_v2");
    assert_null(api.DeviceGetTotalEnergyConsumption);
    assert_int_equal(api.Init(), NVML_SUCCESS); /* a scenario without devices */
    unsigned n = 99;
    assert_int_equal(api.DeviceGetCount(&n), NVML_SUCCESS);
    assert_int_equal(n, 0);
    assert_int_equal(api.Shutdown(), NVML_SUCCESS);
    dlib_close(&lib);
    unlink(path);
}

static void test_resolve_bad_arguments(void **state)
{
    js_dlib_t lib = {0};
    mini_nvml_t api;
    assert_int_equal(dlib_resolve(&lib, mini_table, MINI_N, &api, NULL, NULL, 0), -EINVAL);
    dlib_close(&lib);
    dlib_close(&lib);
    dlib_close(NULL);
}

static void test_rocm_by_soname(void **state)
{
    if (!on_search_path(FAKE_ROCM_DIR))
        skip();
    const char *names[] = {"librocm_smi64.so.1", "librocm_smi64.so", NULL};
    js_dlib_t lib;
    assert_int_equal(dlib_open(&lib, OVERRIDE, names, NULL, 0), 0);
    /* the fake, found before Debian's /usr/lib/librocm_smi64.so.1 */
    assert_string_equal(lib.path, real(ROCM_LIB));
    dlib_close(&lib);
}

/* Every ROCm SMI name jobscope declares, but the 5.7+ by_device call, is in Debian's 5.2.3 library. */
static void test_real_rocm_smi_has_our_names(void **state)
{
    const char *file = "/usr/lib/librocm_smi64.so.1";
    if (access(file, R_OK) != 0)
        skip();
    static const char *const names[] = {"rsmi_init",
                                        "rsmi_shut_down",
                                        "rsmi_status_string",
                                        "rsmi_version_get",
                                        "rsmi_version_str_get",
                                        "rsmi_num_monitor_devices",
                                        "rsmi_dev_name_get",
                                        "rsmi_dev_serial_number_get",
                                        "rsmi_dev_id_get",
                                        "rsmi_dev_unique_id_get",
                                        "rsmi_dev_pci_id_get",
                                        "rsmi_dev_busy_percent_get",
                                        "rsmi_dev_memory_busy_percent_get",
                                        "rsmi_dev_memory_usage_get",
                                        "rsmi_dev_memory_total_get",
                                        "rsmi_dev_power_ave_get",
                                        "rsmi_dev_power_cap_get",
                                        "rsmi_dev_energy_count_get",
                                        "rsmi_dev_temp_metric_get",
                                        "rsmi_dev_fan_speed_get",
                                        "rsmi_dev_fan_speed_max_get",
                                        "rsmi_dev_perf_level_get",
                                        "rsmi_dev_gpu_clk_freq_get",
                                        "rsmi_dev_pci_bandwidth_get",
                                        "rsmi_dev_pci_throughput_get",
                                        "rsmi_dev_pci_replay_counter_get",
                                        "rsmi_compute_process_info_get",
                                        "rsmi_compute_process_info_by_pid_get",
                                        "rsmi_compute_process_gpus_get"};
    enum { N = sizeof(names) / sizeof(names[0]) };
    js_dlsym_t table[N];
    void *slots[N];
    memset(table, 0, sizeof(table));
    for (size_t i = 0; i < N; i++)
        table[i] = (js_dlsym_t){{names[i]}, i * sizeof(void *), true};
    setenv(OVERRIDE, file, 1);
    js_dlib_t lib;
    char err[512];
    assert_int_equal(dlib_open(&lib, OVERRIDE, NULL, err, sizeof(err)), 0);
    assert_int_equal(dlib_resolve(&lib, table, N, slots, NULL, err, sizeof(err)), N);
    dlib_close(&lib);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_open_by_soname, setup),
        cmocka_unit_test_setup(test_open_override, setup),
        cmocka_unit_test_setup(test_override_fails_without_fallback, setup),
        cmocka_unit_test_setup(test_empty_override_is_unset, setup),
        cmocka_unit_test_setup(test_nothing_loadable, setup),
        cmocka_unit_test_setup(test_resolve_prefers_versioned, setup),
        cmocka_unit_test_setup(test_resolve_falls_back_on_old_abi, setup),
        cmocka_unit_test_setup(test_resolve_required_missing, setup),
        cmocka_unit_test_setup(test_resolve_scenario_omits, setup),
        cmocka_unit_test_setup(test_resolve_bad_arguments, setup),
        cmocka_unit_test_setup(test_rocm_by_soname, setup),
        cmocka_unit_test_setup(test_real_rocm_smi_has_our_names, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
