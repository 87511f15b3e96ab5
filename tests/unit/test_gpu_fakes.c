/* SPDX-License-Identifier: MIT
 *
 * Unit tests proving the fake NVML and ROCm SMI libraries (tests/fakes) behave as the vendors document, and
 * that jobscope's ABI headers (src/sources/nvml_abi.h, rocm_smi_abi.h) match them. Each test loads a fake
 * through sys/dlib.h with the override variable, exactly as a source will, from a scenario written for the
 * test (or one of tests/fakes/scenarios), with a manual clock ($FAKE_*_TIME_FILE) so every value is exact.
 * NVML: init reference counting and UNINITIALIZED, inventory and string sizes, memory v1/v2 and the struct
 * version word, series over time, energy integrated from power and going backwards at a driver reload,
 * per-call errors in time windows, a device lost mid-run, process lists of more than 100 entries through the
 * INSUFFICIENT_SIZE protocol in 16-byte v1 and 24-byte v3 layouts, PIDs from variables and files, process
 * utilisation samples and lastSeenTimeStamp, MIG, the old-ABI variant's missing symbols and legacy layouts.
 * ROCm SMI: init and device-index errors, the NULL-pointer support probe, units, the energy counter and its
 * resolution, both rsmi_frequencies_t layouts, and the process calls' num_items convention.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sources/nvml_abi.h"
#include "sources/rocm_smi_abi.h"
#include "sys/dlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NVML_LIB FAKE_NVML_DIR "/libnvidia-ml.so.1"
#define NVML_OLD_LIB FAKE_NVML_OLD_DIR "/libnvidia-ml.so.1"
#define ROCM_LIB FAKE_ROCM_DIR "/librocm_smi64.so.1"
#define GiB (1024ULL * 1024 * 1024)
#define MiB (1024ULL * 1024)

/* ---- the NVML entry points, bound as a source binds them ---- */

typedef struct {
    nvmlInit_fn *Init;
    nvmlInit_fn *InitV1;
    nvmlShutdown_fn *Shutdown;
    nvmlErrorString_fn *ErrorString;
    nvmlSystemGetDriverVersion_fn *SystemGetDriverVersion;
    nvmlSystemGetNVMLVersion_fn *SystemGetNVMLVersion;
    nvmlSystemGetCudaDriverVersion_fn *SystemGetCudaDriverVersion;
    nvmlDeviceGetCount_fn *DeviceGetCount;
    nvmlDeviceGetCount_fn *DeviceGetCountV1;
    nvmlDeviceGetHandleByIndex_fn *DeviceGetHandleByIndex;
    nvmlDeviceGetHandleByIndex_fn *DeviceGetHandleByIndexV1;
    nvmlDeviceGetName_fn *DeviceGetName;
    nvmlDeviceGetUUID_fn *DeviceGetUUID;
    nvmlDeviceGetPciInfo_v3_fn *DeviceGetPciInfo_v3;
    nvmlDeviceGetPciInfo_v1_fn *DeviceGetPciInfo_v2;
    nvmlDeviceGetPciInfo_v1_fn *DeviceGetPciInfo_v1;
    nvmlDeviceGetMemoryInfo_fn *DeviceGetMemoryInfo;
    nvmlDeviceGetMemoryInfo_v2_fn *DeviceGetMemoryInfo_v2;
    nvmlDeviceGetBAR1MemoryInfo_fn *DeviceGetBAR1MemoryInfo;
    nvmlDeviceGetUtilizationRates_fn *DeviceGetUtilizationRates;
    nvmlDeviceGetPowerUsage_fn *DeviceGetPowerUsage;
    nvmlDeviceGetEnforcedPowerLimit_fn *DeviceGetEnforcedPowerLimit;
    nvmlDeviceGetPowerManagementLimit_fn *DeviceGetPowerManagementLimit;
    nvmlDeviceGetTotalEnergyConsumption_fn *DeviceGetTotalEnergyConsumption;
    nvmlDeviceGetTemperature_fn *DeviceGetTemperature;
    nvmlDeviceGetTemperatureV_fn *DeviceGetTemperatureV;
    nvmlDeviceGetFanSpeed_fn *DeviceGetFanSpeed;
    nvmlDeviceGetClockInfo_fn *DeviceGetClockInfo;
    nvmlDeviceGetPerformanceState_fn *DeviceGetPerformanceState;
    nvmlDeviceGetCurrentClocksEventReasons_fn *DeviceGetCurrentClocksEventReasons;
    nvmlDeviceGetCurrentClocksEventReasons_fn *DeviceGetCurrentClocksThrottleReasons;
    nvmlDeviceGetViolationStatus_fn *DeviceGetViolationStatus;
    nvmlDeviceGetPcieThroughput_fn *DeviceGetPcieThroughput;
    nvmlDeviceGetPcieReplayCounter_fn *DeviceGetPcieReplayCounter;
    nvmlDeviceGetTotalEccErrors_fn *DeviceGetTotalEccErrors;
    nvmlDeviceGetEncoderUtilization_fn *DeviceGetEncoderUtilization;
    nvmlDeviceGetDecoderUtilization_fn *DeviceGetDecoderUtilization;
    nvmlDeviceGetComputeMode_fn *DeviceGetComputeMode;
    nvmlDeviceGetMigMode_fn *DeviceGetMigMode;
    nvmlDeviceGetMaxMigDeviceCount_fn *DeviceGetMaxMigDeviceCount;
    nvmlDeviceGetMigDeviceHandleByIndex_fn *DeviceGetMigDeviceHandleByIndex;
    nvmlDeviceIsMigDeviceHandle_fn *DeviceIsMigDeviceHandle;
    nvmlDeviceGetGpuInstanceId_fn *DeviceGetGpuInstanceId;
    nvmlDeviceGetComputeInstanceId_fn *DeviceGetComputeInstanceId;
    nvmlDeviceGetRunningProcesses_v3_fn *DeviceGetComputeRunningProcesses_v3;
    nvmlDeviceGetRunningProcesses_v3_fn *DeviceGetComputeRunningProcesses_v2;
    nvmlDeviceGetRunningProcesses_v1_fn *DeviceGetComputeRunningProcesses_v1;
    nvmlDeviceGetRunningProcesses_v3_fn *DeviceGetGraphicsRunningProcesses_v3;
    nvmlDeviceGetRunningProcesses_v1_fn *DeviceGetGraphicsRunningProcesses_v1;
    nvmlDeviceGetProcessUtilization_fn *DeviceGetProcessUtilization;
} nvml_t;

#define E1(f, a)                                                                                             \
    {                                                                                                        \
        {a}, offsetof(nvml_t, f), false                                                                      \
    }
#define E2(f, a, b)                                                                                          \
    {                                                                                                        \
        {a, b}, offsetof(nvml_t, f), false                                                                   \
    }
static const js_dlsym_t nvml_table[] = {
    {{"nvmlInit_v2", "nvmlInit"}, offsetof(nvml_t, Init), true},
    E1(InitV1, "nvmlInit"),
    {{"nvmlShutdown"}, offsetof(nvml_t, Shutdown), true},
    E1(ErrorString, "nvmlErrorString"),
    E1(SystemGetDriverVersion, "nvmlSystemGetDriverVersion"),
    E1(SystemGetNVMLVersion, "nvmlSystemGetNVMLVersion"),
    E2(SystemGetCudaDriverVersion, "nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"),
    E2(DeviceGetCount, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"),
    E1(DeviceGetCountV1, "nvmlDeviceGetCount"),
    E2(DeviceGetHandleByIndex, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"),
    E1(DeviceGetHandleByIndexV1, "nvmlDeviceGetHandleByIndex"),
    E1(DeviceGetName, "nvmlDeviceGetName"),
    E1(DeviceGetUUID, "nvmlDeviceGetUUID"),
    E1(DeviceGetPciInfo_v3, "nvmlDeviceGetPciInfo_v3"),
    E1(DeviceGetPciInfo_v2, "nvmlDeviceGetPciInfo_v2"),
    E1(DeviceGetPciInfo_v1, "nvmlDeviceGetPciInfo"),
    E1(DeviceGetMemoryInfo, "nvmlDeviceGetMemoryInfo"),
    E1(DeviceGetMemoryInfo_v2, "nvmlDeviceGetMemoryInfo_v2"),
    E1(DeviceGetBAR1MemoryInfo, "nvmlDeviceGetBAR1MemoryInfo"),
    E1(DeviceGetUtilizationRates, "nvmlDeviceGetUtilizationRates"),
    E1(DeviceGetPowerUsage, "nvmlDeviceGetPowerUsage"),
    E1(DeviceGetEnforcedPowerLimit, "nvmlDeviceGetEnforcedPowerLimit"),
    E1(DeviceGetPowerManagementLimit, "nvmlDeviceGetPowerManagementLimit"),
    E1(DeviceGetTotalEnergyConsumption, "nvmlDeviceGetTotalEnergyConsumption"),
    E1(DeviceGetTemperature, "nvmlDeviceGetTemperature"),
    E1(DeviceGetTemperatureV, "nvmlDeviceGetTemperatureV"),
    E1(DeviceGetFanSpeed, "nvmlDeviceGetFanSpeed"),
    E1(DeviceGetClockInfo, "nvmlDeviceGetClockInfo"),
    E1(DeviceGetPerformanceState, "nvmlDeviceGetPerformanceState"),
    E2(DeviceGetCurrentClocksEventReasons, "nvmlDeviceGetCurrentClocksEventReasons",
       "nvmlDeviceGetCurrentClocksThrottleReasons"),
    E1(DeviceGetCurrentClocksThrottleReasons, "nvmlDeviceGetCurrentClocksThrottleReasons"),
    E1(DeviceGetViolationStatus, "nvmlDeviceGetViolationStatus"),
    E1(DeviceGetPcieThroughput, "nvmlDeviceGetPcieThroughput"),
    E1(DeviceGetPcieReplayCounter, "nvmlDeviceGetPcieReplayCounter"),
    E1(DeviceGetTotalEccErrors, "nvmlDeviceGetTotalEccErrors"),
    E1(DeviceGetEncoderUtilization, "nvmlDeviceGetEncoderUtilization"),
    E1(DeviceGetDecoderUtilization, "nvmlDeviceGetDecoderUtilization"),
    E1(DeviceGetComputeMode, "nvmlDeviceGetComputeMode"),
    E1(DeviceGetMigMode, "nvmlDeviceGetMigMode"),
    E1(DeviceGetMaxMigDeviceCount, "nvmlDeviceGetMaxMigDeviceCount"),
    E1(DeviceGetMigDeviceHandleByIndex, "nvmlDeviceGetMigDeviceHandleByIndex"),
    E1(DeviceIsMigDeviceHandle, "nvmlDeviceIsMigDeviceHandle"),
    E1(DeviceGetGpuInstanceId, "nvmlDeviceGetGpuInstanceId"),
    E1(DeviceGetComputeInstanceId, "nvmlDeviceGetComputeInstanceId"),
    E2(DeviceGetComputeRunningProcesses_v3, "nvmlDeviceGetComputeRunningProcesses_v3",
       "nvmlDeviceGetComputeRunningProcesses_v2"),
    E1(DeviceGetComputeRunningProcesses_v2, "nvmlDeviceGetComputeRunningProcesses_v2"),
    E1(DeviceGetComputeRunningProcesses_v1, "nvmlDeviceGetComputeRunningProcesses"),
    E2(DeviceGetGraphicsRunningProcesses_v3, "nvmlDeviceGetGraphicsRunningProcesses_v3",
       "nvmlDeviceGetGraphicsRunningProcesses_v2"),
    E1(DeviceGetGraphicsRunningProcesses_v1, "nvmlDeviceGetGraphicsRunningProcesses"),
    E1(DeviceGetProcessUtilization, "nvmlDeviceGetProcessUtilization"),
};
#undef E1
#undef E2
#define NVML_N (sizeof(nvml_table) / sizeof(nvml_table[0]))

/* ---- the ROCm SMI entry points ---- */

typedef struct {
    rsmi_init_fn *init;
    rsmi_shut_down_fn *shut_down;
    rsmi_status_string_fn *status_string;
    rsmi_version_get_fn *version_get;
    rsmi_version_str_get_fn *version_str_get;
    rsmi_num_monitor_devices_fn *num_monitor_devices;
    rsmi_dev_name_get_fn *dev_name_get;
    rsmi_dev_serial_number_get_fn *dev_serial_number_get;
    rsmi_dev_id_get_fn *dev_id_get;
    rsmi_dev_unique_id_get_fn *dev_unique_id_get;
    rsmi_dev_pci_id_get_fn *dev_pci_id_get;
    rsmi_dev_busy_percent_get_fn *dev_busy_percent_get;
    rsmi_dev_memory_busy_percent_get_fn *dev_memory_busy_percent_get;
    rsmi_dev_memory_usage_get_fn *dev_memory_usage_get;
    rsmi_dev_memory_total_get_fn *dev_memory_total_get;
    rsmi_dev_power_ave_get_fn *dev_power_ave_get;
    rsmi_dev_power_cap_get_fn *dev_power_cap_get;
    rsmi_dev_energy_count_get_fn *dev_energy_count_get;
    rsmi_dev_temp_metric_get_fn *dev_temp_metric_get;
    rsmi_dev_fan_speed_get_fn *dev_fan_speed_get;
    rsmi_dev_fan_speed_max_get_fn *dev_fan_speed_max_get;
    rsmi_dev_perf_level_get_fn *dev_perf_level_get;
    rsmi_dev_gpu_clk_freq_get_fn *dev_gpu_clk_freq_get;
    rsmi_dev_pci_bandwidth_get_fn *dev_pci_bandwidth_get;
    rsmi_dev_pci_throughput_get_fn *dev_pci_throughput_get;
    rsmi_dev_pci_replay_counter_get_fn *dev_pci_replay_counter_get;
    rsmi_compute_process_info_get_fn *compute_process_info_get;
    rsmi_compute_process_info_by_pid_get_fn *compute_process_info_by_pid_get;
    rsmi_compute_process_info_by_device_get_fn *compute_process_info_by_device_get;
    rsmi_compute_process_gpus_get_fn *compute_process_gpus_get;
} rocm_t;

#define R(f)                                                                                                 \
    {                                                                                                        \
        {"rsmi_" #f}, offsetof(rocm_t, f), false                                                             \
    }
static const js_dlsym_t rocm_table[] = {
    {{"rsmi_init"}, offsetof(rocm_t, init), true},
    {{"rsmi_shut_down"}, offsetof(rocm_t, shut_down), true},
    R(status_string),
    R(version_get),
    R(version_str_get),
    R(num_monitor_devices),
    R(dev_name_get),
    R(dev_serial_number_get),
    R(dev_id_get),
    R(dev_unique_id_get),
    R(dev_pci_id_get),
    R(dev_busy_percent_get),
    R(dev_memory_busy_percent_get),
    R(dev_memory_usage_get),
    R(dev_memory_total_get),
    R(dev_power_ave_get),
    R(dev_power_cap_get),
    R(dev_energy_count_get),
    R(dev_temp_metric_get),
    R(dev_fan_speed_get),
    R(dev_fan_speed_max_get),
    R(dev_perf_level_get),
    R(dev_gpu_clk_freq_get),
    R(dev_pci_bandwidth_get),
    R(dev_pci_throughput_get),
    R(dev_pci_replay_counter_get),
    R(compute_process_info_get),
    R(compute_process_info_by_pid_get),
    R(compute_process_info_by_device_get),
    R(compute_process_gpus_get),
};
#undef R
#define ROCM_N (sizeof(rocm_table) / sizeof(rocm_table[0]))

/* ---- fixture: a temporary directory with the scenario, the manual clock and a PID file ---- */

static char dir[64];
static char scenario_path[128], time_path[128], pid_path[128];
static js_dlib_t lib;
static nvml_t nv;
static rocm_t rs;
static const char *nvml_bound[NVML_N];
static const char *rocm_bound[ROCM_N];

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void set_time(double t)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "%.6f\n", t);
    write_text(time_path, buf);
}

static int group_setup(void **state)
{
    snprintf(dir, sizeof(dir), "/tmp/jobscope-gpu-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(scenario_path, sizeof(scenario_path), "%s/scenario", dir);
    snprintf(time_path, sizeof(time_path), "%s/time", dir);
    snprintf(pid_path, sizeof(pid_path), "%s/pid", dir);
    setenv("FAKE_NVML_TIME_FILE", time_path, 1);
    setenv("FAKE_ROCM_SMI_TIME_FILE", time_path, 1);
    unsetenv("FAKE_NVML_SPEED");
    unsetenv("FAKE_ROCM_SMI_SPEED");
    return 0;
}

static int group_teardown(void **state)
{
    unlink(scenario_path);
    unlink(time_path);
    unlink(pid_path);
    rmdir(dir);
    return 0;
}

/* Use `text` as the scenario (NULL: none, a path under SCENARIOS when it starts with '/'). */
static void use_scenario(const char *env, const char *text)
{
    if (!text)
        unsetenv(env);
    else if (text[0] == '/')
        setenv(env, text, 1);
    else {
        write_text(scenario_path, text);
        setenv(env, scenario_path, 1);
    }
}

/* Load an NVML fake with a scenario, at scenario time 0, and bind every entry point it has. */
static void nvml_load(const char *file, const char *text)
{
    use_scenario("FAKE_NVML_SCENARIO", text);
    set_time(0);
    setenv("JOBSCOPE_NVML_LIBRARY", file, 1);
    const char *sonames[] = {"libnvidia-ml.so.1", NULL};
    char err[256];
    assert_int_equal(dlib_open(&lib, "JOBSCOPE_NVML_LIBRARY", sonames, err, sizeof(err)), 0);
    assert_true(dlib_resolve(&lib, nvml_table, NVML_N, &nv, nvml_bound, err, sizeof(err)) > 0);
}

/* The full fake, initialised. */
static void nvml_up(const char *text)
{
    nvml_load(NVML_LIB, text);
    assert_int_equal(nvml_bound[0] ? 0 : 1, 0);
    assert_int_equal(nv.Init(), NVML_SUCCESS);
}

static int nvml_teardown(void **state)
{
    if (lib.handle) {
        for (int i = 0; i < 8 && nv.Shutdown() == NVML_SUCCESS; i++)
            ;
        dlib_close(&lib);
    }
    memset(&nv, 0, sizeof(nv));
    return 0;
}

static nvmlDevice_t dev(unsigned i)
{
    nvmlDevice_t d = NULL;
    assert_int_equal(nv.DeviceGetHandleByIndex(i, &d), NVML_SUCCESS);
    return d;
}

static unsigned power(nvmlDevice_t d)
{
    unsigned p = 0;
    assert_int_equal(nv.DeviceGetPowerUsage(d, &p), NVML_SUCCESS);
    return p;
}

static unsigned long long energy(nvmlDevice_t d)
{
    unsigned long long e = 0;
    assert_int_equal(nv.DeviceGetTotalEnergyConsumption(d, &e), NVML_SUCCESS);
    return e;
}

static uint64_t wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* ---- NVML ---- */

static void test_nvml_uninitialized(void **state)
{
    nvml_load(NVML_LIB, NULL);
    unsigned n = 7;
    nvmlDevice_t d;
    assert_int_equal(nv.DeviceGetCount(&n), NVML_ERROR_UNINITIALIZED);
    assert_int_equal(nv.DeviceGetHandleByIndex(0, &d), NVML_ERROR_UNINITIALIZED);
    assert_int_equal(nv.Shutdown(), NVML_ERROR_UNINITIALIZED);
    char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
    assert_int_equal(nv.SystemGetDriverVersion(buf, sizeof(buf)), NVML_ERROR_UNINITIALIZED);
    /* documented without UNINITIALIZED */
    assert_int_equal(nv.SystemGetNVMLVersion(buf, sizeof(buf)), NVML_SUCCESS);
    assert_string_equal(buf, "12.550.90.07");
    int cuda = 0;
    assert_int_equal(nv.SystemGetCudaDriverVersion(&cuda), NVML_SUCCESS);
    assert_int_equal(NVML_CUDA_DRIVER_VERSION_MAJOR(cuda), 12);
    assert_int_equal(NVML_CUDA_DRIVER_VERSION_MINOR(cuda), 4);
    assert_int_equal(nv.SystemGetCudaDriverVersion(NULL), NVML_ERROR_INVALID_ARGUMENT);
    assert_string_equal(nv.ErrorString(NVML_ERROR_GPU_IS_LOST), "GPU is lost");
    assert_string_equal(nv.ErrorString((nvmlReturn_t)12345), "Unknown Error");
    /* no scenario: no driver */
    assert_int_equal(nv.Init(), NVML_ERROR_DRIVER_NOT_LOADED);
    assert_int_equal(nv.DeviceGetCount(&n), NVML_ERROR_UNINITIALIZED);

    use_scenario("FAKE_NVML_SCENARIO", "init_error NO_PERMISSION\n");
    assert_int_equal(nv.Init(), NVML_ERROR_NO_PERMISSION);
    assert_int_equal(nv.DeviceGetCount(&n), NVML_ERROR_UNINITIALIZED);
    use_scenario("FAKE_NVML_SCENARIO", "device 0\nno_such_directive 1\n");
    assert_int_equal(nv.Init(), NVML_ERROR_UNKNOWN); /* and a line on stderr naming it */
    use_scenario("FAKE_NVML_SCENARIO", "device 0\n");
    assert_int_equal(nv.Init(), NVML_SUCCESS);
    assert_int_equal(nv.DeviceGetCount(&n), NVML_SUCCESS);
    assert_int_equal(n, 1);
}

static void test_nvml_refcount(void **state)
{
    nvml_up("device 0\ndevice 1\n");
    unsigned n = 0;
    assert_int_equal(nv.Init(), NVML_SUCCESS);
    assert_int_equal(nv.Shutdown(), NVML_SUCCESS);
    assert_int_equal(nv.DeviceGetCount(&n), NVML_SUCCESS); /* one reference left */
    assert_int_equal(n, 2);
    assert_int_equal(nv.Shutdown(), NVML_SUCCESS);
    assert_int_equal(nv.DeviceGetCount(&n), NVML_ERROR_UNINITIALIZED);
    assert_int_equal(nv.Shutdown(), NVML_ERROR_UNINITIALIZED);
    assert_int_equal(nv.DeviceGetCount(NULL), NVML_ERROR_UNINITIALIZED);
}

static void test_nvml_inventory(void **state)
{
    nvml_up(SCENARIOS "/nvml-h100x2-busy.scn");
    unsigned n = 0;
    assert_int_equal(nv.DeviceGetCount(&n), NVML_SUCCESS);
    assert_int_equal(n, 2);
    nvmlDevice_t d;
    assert_int_equal(nv.DeviceGetHandleByIndex(2, &d), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(nv.DeviceGetHandleByIndex(0, NULL), NVML_ERROR_INVALID_ARGUMENT);
    d = dev(0);

    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
    assert_int_equal(nv.DeviceGetName(d, name, sizeof(name)), NVML_SUCCESS);
    assert_string_equal(name, "NVIDIA H100 80GB HBM3");
    assert_int_equal(nv.DeviceGetName(d, name, 21), NVML_ERROR_INSUFFICIENT_SIZE); /* 21 chars + NUL */
    assert_int_equal(nv.DeviceGetName(d, name, 22), NVML_SUCCESS);
    assert_int_equal(nv.DeviceGetName(d, NULL, 22), NVML_ERROR_INVALID_ARGUMENT);
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    assert_int_equal(nv.DeviceGetUUID(dev(1), uuid, sizeof(uuid)), NVML_SUCCESS);
    assert_string_equal(uuid, "GPU-2b8d0e47-13c5-4f9a-8e6d-7c1a2f3b4d55");

    nvmlPciInfo_t pci;
    assert_int_equal(nv.DeviceGetPciInfo_v3(d, &pci), NVML_SUCCESS);
    assert_string_equal(pci.busId, "00000000:19:00.0");
    assert_string_equal(pci.busIdLegacy, "0000:19:00.0");
    assert_int_equal(pci.domain, 0);
    assert_int_equal(pci.bus, 0x19);
    assert_int_equal(pci.device, 0);
    assert_int_equal(pci.pciDeviceId, 0x233010DE);
    assert_int_equal(pci.pciSubSystemId, 0x16C110DE);

    char ver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
    assert_int_equal(nv.SystemGetDriverVersion(ver, sizeof(ver)), NVML_SUCCESS);
    assert_string_equal(ver, "550.90.07");
    assert_int_equal(nv.SystemGetDriverVersion(ver, 9), NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(nv.SystemGetNVMLVersion(ver, sizeof(ver)), NVML_SUCCESS);
    assert_string_equal(ver, "12.550.90.07");

    nvmlComputeMode_t mode = NVML_COMPUTEMODE_PROHIBITED;
    assert_int_equal(nv.DeviceGetComputeMode(d, &mode), NVML_SUCCESS);
    assert_int_equal(mode, NVML_COMPUTEMODE_DEFAULT);
    unsigned limit = 0, limit2 = 0;
    assert_int_equal(nv.DeviceGetEnforcedPowerLimit(d, &limit), NVML_SUCCESS);
    assert_int_equal(nv.DeviceGetPowerManagementLimit(d, &limit2), NVML_SUCCESS);
    assert_int_equal(limit, 700000);
    assert_int_equal(limit2, 700000);
    unsigned cur = 9, pend = 9, max = 9;
    assert_int_equal(nv.DeviceGetMigMode(d, &cur, &pend), NVML_SUCCESS);
    assert_int_equal(cur, NVML_DEVICE_MIG_DISABLE);
    assert_int_equal(pend, NVML_DEVICE_MIG_DISABLE);
    assert_int_equal(nv.DeviceGetMaxMigDeviceCount(d, &max), NVML_SUCCESS);
    assert_int_equal(max, 0);
    nvmlMemory_v2_t mem = {.version = nvmlMemory_v2};
    assert_int_equal(nv.DeviceGetMemoryInfo_v2(d, &mem), NVML_SUCCESS);
    assert_int_equal(mem.total, 85520809984ULL);
    /* a handle that is not one: INVALID_ARGUMENT, not a crash */
    unsigned junk[4] = {0};
    assert_int_equal(nv.DeviceGetName((nvmlDevice_t)(void *)junk, name, sizeof(name)),
                     NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(nv.DeviceGetName(NULL, name, sizeof(name)), NVML_ERROR_INVALID_ARGUMENT);
}

static void test_nvml_memory_versions(void **state)
{
    nvml_up("device 0\nmemory_total 80GiB\nvalue mem_used_bytes 10GiB\nvalue mem_reserved_bytes 512MiB\n"
            "device 1\nmemory_total 16GiB\nbar1_total 256MiB\nvalue bar1_used_bytes 8MiB\n");
    nvmlMemory_t m1;
    assert_int_equal(nv.DeviceGetMemoryInfo(dev(0), &m1), NVML_SUCCESS);
    assert_int_equal(m1.total, 80 * GiB);
    assert_int_equal(m1.used, 10 * GiB + 512 * MiB); /* v1 counts the reserved memory as used */
    assert_int_equal(m1.free, m1.total - m1.used);

    nvmlMemory_v2_t m2 = {.version = nvmlMemory_v2};
    assert_int_equal(nvmlMemory_v2, sizeof(nvmlMemory_v2_t) | 2u << 24);
    assert_int_equal(nv.DeviceGetMemoryInfo_v2(dev(0), &m2), NVML_SUCCESS);
    assert_int_equal(m2.version, nvmlMemory_v2);
    assert_int_equal(m2.total, 80 * GiB);
    assert_int_equal(m2.reserved, 512 * MiB);
    assert_int_equal(m2.used, 10 * GiB);
    assert_int_equal(m2.free, m2.total - m2.reserved - m2.used);
    m2.version = 0;
    assert_int_equal(nv.DeviceGetMemoryInfo_v2(dev(0), &m2), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    m2.version = NVML_STRUCT_VERSION(nvmlMemory_v2_t, 1);
    assert_int_equal(nv.DeviceGetMemoryInfo_v2(dev(0), &m2), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    assert_int_equal(nv.DeviceGetMemoryInfo_v2(dev(0), NULL), NVML_ERROR_INVALID_ARGUMENT);

    nvmlBAR1Memory_t b;
    assert_int_equal(nv.DeviceGetBAR1MemoryInfo(dev(0), &b), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(nv.DeviceGetBAR1MemoryInfo(dev(1), &b), NVML_SUCCESS);
    assert_int_equal(b.bar1Total, 256 * MiB);
    assert_int_equal(b.bar1Used, 8 * MiB);
    assert_int_equal(b.bar1Free, 248 * MiB);
    /* device 1 gives no used memory: 0 used of 16 GiB */
    assert_int_equal(nv.DeviceGetMemoryInfo(dev(1), &m1), NVML_SUCCESS);
    assert_int_equal(m1.used, 0);
    assert_int_equal(m1.free, 16 * GiB);
}

static void test_nvml_series_over_time(void **state)
{
    nvml_up("device 0\n"
            "value gpu_util_pct linear 0:0 10:100\nvalue mem_util_pct hold 0:5 5:50\n"
            "value clock_sm_mhz hold 0:300 5:1980\nvalue clock_graphics_mhz 1755\nvalue clock_mem_mhz 2619\n"
            "value clock_video_mhz 1500\nvalue temp_c linear 0:30 10:50\nvalue pstate hold 0:8 3:0\n"
            "value clocks_event_reasons hold 0:0x1 5:0x24\n"
            "value violation_power_ns linear 0:0 10:4e9\nvalue violation_thermal_ns 0\n"
            "value pcie_tx_kbs 1200000\nvalue pcie_rx_kbs linear 0:0 10:3500000\nvalue pcie_replay_count 3\n"
            "value encoder_pct 7\nvalue decoder_pct 9\nvalue fan_pct 110\n");
    nvmlDevice_t d = dev(0);
    nvmlUtilization_t u;
    unsigned v;

    set_time(-1); /* before the first point: the first value */
    assert_int_equal(nv.DeviceGetUtilizationRates(d, &u), NVML_SUCCESS);
    assert_int_equal(u.gpu, 0);
    set_time(2.5);
    assert_int_equal(nv.DeviceGetUtilizationRates(d, &u), NVML_SUCCESS);
    assert_int_equal(u.gpu, 25);
    assert_int_equal(u.memory, 5);
    assert_int_equal(nv.DeviceGetClockInfo(d, NVML_CLOCK_SM, &v), NVML_SUCCESS);
    assert_int_equal(v, 300);
    assert_int_equal(nv.DeviceGetTemperature(d, NVML_TEMPERATURE_GPU, &v), NVML_SUCCESS);
    assert_int_equal(v, 35);
    nvmlTemperature_t tv = {.version = nvmlTemperature_v1, .sensorType = NVML_TEMPERATURE_GPU};
    assert_int_equal(nv.DeviceGetTemperatureV(d, &tv), NVML_SUCCESS);
    assert_int_equal(tv.temperature, 35);
    tv.version = 1;
    assert_int_equal(nv.DeviceGetTemperatureV(d, &tv), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    tv = (nvmlTemperature_t){.version = nvmlTemperature_v1, .sensorType = NVML_TEMPERATURE_COUNT};
    assert_int_equal(nv.DeviceGetTemperatureV(d, &tv), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(nv.DeviceGetTemperature(d, NVML_TEMPERATURE_COUNT, &v), NVML_ERROR_INVALID_ARGUMENT);
    nvmlPstates_t ps;
    assert_int_equal(nv.DeviceGetPerformanceState(d, &ps), NVML_SUCCESS);
    assert_int_equal(ps, 8);
    unsigned long long reasons;
    assert_int_equal(nv.DeviceGetCurrentClocksEventReasons(d, &reasons), NVML_SUCCESS);
    assert_int_equal(reasons, nvmlClocksEventReasonGpuIdle);
    nvmlViolationTime_t v1, v2;
    assert_int_equal(nv.DeviceGetViolationStatus(d, NVML_PERF_POLICY_POWER, &v1), NVML_SUCCESS);
    assert_int_equal(v1.violationTime, 1000000000ULL);
    unsigned long long now = wall_us();
    assert_true(v1.referenceTime > now - 60000000ULL && v1.referenceTime < now + 60000000ULL);

    set_time(5);
    assert_int_equal(nv.DeviceGetUtilizationRates(d, &u), NVML_SUCCESS);
    assert_int_equal(u.gpu, 50);
    assert_int_equal(u.memory, 50);
    assert_int_equal(nv.DeviceGetClockInfo(d, NVML_CLOCK_SM, &v), NVML_SUCCESS);
    assert_int_equal(v, 1980);
    assert_int_equal(nv.DeviceGetCurrentClocksThrottleReasons(d, &reasons), NVML_SUCCESS);
    assert_int_equal(reasons, nvmlClocksEventReasonSwThermalSlowdown | nvmlClocksEventReasonSwPowerCap);
    assert_int_equal(nv.DeviceGetViolationStatus(d, NVML_PERF_POLICY_POWER, &v2), NVML_SUCCESS);
    assert_int_equal(v2.violationTime, 2000000000ULL);
    assert_int_equal(v2.referenceTime - v1.referenceTime, 2500000); /* us of scenario time */
    assert_int_equal(nv.DeviceGetViolationStatus(d, NVML_PERF_POLICY_THERMAL, &v2), NVML_SUCCESS);
    assert_int_equal(v2.violationTime, 0);
    assert_int_equal(nv.DeviceGetViolationStatus(d, NVML_PERF_POLICY_SYNC_BOOST, &v2),
                     NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(nv.DeviceGetViolationStatus(d, (nvmlPerfPolicyType_t)7, &v2),
                     NVML_ERROR_INVALID_ARGUMENT);

    set_time(20); /* after the last point: the last value */
    assert_int_equal(nv.DeviceGetUtilizationRates(d, &u), NVML_SUCCESS);
    assert_int_equal(u.gpu, 100);
    assert_int_equal(nv.DeviceGetClockInfo(d, NVML_CLOCK_GRAPHICS, &v), NVML_SUCCESS);
    assert_int_equal(v, 1755);
    assert_int_equal(nv.DeviceGetClockInfo(d, NVML_CLOCK_MEM, &v), NVML_SUCCESS);
    assert_int_equal(v, 2619);
    assert_int_equal(nv.DeviceGetClockInfo(d, NVML_CLOCK_VIDEO, &v), NVML_SUCCESS);
    assert_int_equal(v, 1500);
    assert_int_equal(nv.DeviceGetClockInfo(d, NVML_CLOCK_COUNT, &v), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(nv.DeviceGetPcieThroughput(d, NVML_PCIE_UTIL_TX_BYTES, &v), NVML_SUCCESS);
    assert_int_equal(v, 1200000);
    assert_int_equal(nv.DeviceGetPcieThroughput(d, NVML_PCIE_UTIL_RX_BYTES, &v), NVML_SUCCESS);
    assert_int_equal(v, 3500000);
    assert_int_equal(nv.DeviceGetPcieThroughput(d, NVML_PCIE_UTIL_COUNT, &v), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(nv.DeviceGetPcieReplayCounter(d, &v), NVML_SUCCESS);
    assert_int_equal(v, 3);
    unsigned period = 0;
    assert_int_equal(nv.DeviceGetEncoderUtilization(d, &v, &period), NVML_SUCCESS);
    assert_int_equal(v, 7);
    assert_true(period > 0);
    assert_int_equal(nv.DeviceGetDecoderUtilization(d, &v, &period), NVML_SUCCESS);
    assert_int_equal(v, 9);
    assert_int_equal(nv.DeviceGetEncoderUtilization(d, &v, NULL), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(nv.DeviceGetFanSpeed(d, &v), NVML_SUCCESS);
    assert_int_equal(v, 110); /* may exceed 100 */
}

static void test_nvml_errors(void **state)
{
    nvml_up("device 0\nvalue power_mw 300000\n"
            "value clock_sm_mhz 1400\nvalue clock_video_mhz 1200\nmemory_total 1GiB\n"
            "error nvmlDeviceGetPowerUsage NO_PERMISSION from 2 to 4\n"
            "error nvmlDeviceGetClockInfo NOT_SUPPORTED arg 3\n"
            "error nvmlDeviceGetComputeRunningProcesses GPU_IS_LOST from 10\n"
            "error nvmlDeviceGetMemoryInfo_v2 NVML_ERROR_UNKNOWN\n"
            "device 1\nvalue power_mw 1\n");
    nvmlDevice_t d = dev(0);
    unsigned v;
    assert_int_equal(nv.DeviceGetFanSpeed(d, &v), NVML_ERROR_NOT_SUPPORTED); /* no fan in the scenario */
    set_time(1.9);
    assert_int_equal(power(d), 300000);
    set_time(2);
    assert_int_equal(nv.DeviceGetPowerUsage(d, &v), NVML_ERROR_NO_PERMISSION);
    assert_int_equal(power(dev(1)), 1); /* a device rule stays on its device */
    set_time(4);
    assert_int_equal(power(d), 300000);
    assert_int_equal(nv.DeviceGetClockInfo(d, NVML_CLOCK_VIDEO, &v), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(nv.DeviceGetClockInfo(d, NVML_CLOCK_SM, &v), NVML_SUCCESS);
    /* a rule without a version suffix matches every version; one with a suffix only that one */
    set_time(10);
    unsigned n = 0;
    assert_int_equal(nv.DeviceGetComputeRunningProcesses_v3(d, &n, NULL), NVML_ERROR_GPU_IS_LOST);
    assert_int_equal(nv.DeviceGetComputeRunningProcesses_v1(d, &n, NULL), NVML_ERROR_GPU_IS_LOST);
    nvmlMemory_v2_t m2 = {.version = nvmlMemory_v2};
    nvmlMemory_t m1;
    assert_int_equal(nv.DeviceGetMemoryInfo_v2(d, &m2), NVML_ERROR_UNKNOWN);
    assert_int_equal(nv.DeviceGetMemoryInfo(d, &m1), NVML_SUCCESS);
    /* NULL outputs */
    assert_int_equal(nv.DeviceGetPowerUsage(d, NULL), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(nv.DeviceGetClockInfo(d, NVML_CLOCK_SM, NULL), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(nv.DeviceGetTotalEccErrors(d, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, NULL),
                     NVML_ERROR_INVALID_ARGUMENT);
}

static void test_nvml_energy_and_reload(void **state)
{
    nvml_up("device 0\nvalue power_mw linear 0:100000 10:300000\nenergy_start 5000\nreload 12\n"
            "value ecc_corrected_count linear 0:10 20:30\nvalue ecc_uncorrected_count 0\n"
            "device 1\nvalue temp_c 40\n");
    nvmlDevice_t d = dev(0);
    unsigned long long agg, vol;
    assert_int_equal(energy(d), 5000);
    set_time(10);
    assert_int_equal(energy(d), 5000 + 2000000); /* mW x s: (100 W + 300 W) / 2 x 10 s */
    set_time(11);
    unsigned long long before = energy(d);
    assert_int_equal(before, 5000 + 2000000 + 300000);
    assert_int_equal(nv.DeviceGetTotalEccErrors(d, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, &vol),
                     NVML_SUCCESS);
    assert_int_equal(vol, 21);
    set_time(13); /* the driver was reloaded at 12 s: the counter starts again */
    unsigned long long after = energy(d);
    assert_int_equal(after, 300000);
    assert_true(after < before);
    assert_int_equal(
        nv.DeviceGetTotalEccErrors(d, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC, &agg),
        NVML_SUCCESS);
    assert_int_equal(nv.DeviceGetTotalEccErrors(d, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, &vol),
                     NVML_SUCCESS);
    assert_int_equal(agg, 23);
    assert_int_equal(vol, 1);
    assert_int_equal(nv.DeviceGetTotalEccErrors(d, NVML_MEMORY_ERROR_TYPE_COUNT, NVML_VOLATILE_ECC, &vol),
                     NVML_ERROR_INVALID_ARGUMENT);
    /* no power draw in the scenario: no energy counter either */
    unsigned long long e;
    assert_int_equal(nv.DeviceGetTotalEnergyConsumption(dev(1), &e), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(
        nv.DeviceGetTotalEccErrors(dev(1), NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, &e),
        NVML_ERROR_NOT_SUPPORTED);
}

static void test_nvml_lost_device(void **state)
{
    nvml_up("device 0\nvalue power_mw 100000\ndevice 1\nvalue power_mw 200000\nmemory_total 1GiB\nlost 5\n");
    nvmlDevice_t d1 = dev(1);
    set_time(4.99);
    assert_int_equal(power(d1), 200000);
    set_time(5);
    unsigned v;
    char name[96];
    nvmlMemory_t m;
    nvmlDevice_t h;
    assert_int_equal(nv.DeviceGetPowerUsage(d1, &v), NVML_ERROR_GPU_IS_LOST);
    assert_int_equal(nv.DeviceGetName(d1, name, sizeof(name)), NVML_ERROR_GPU_IS_LOST);
    assert_int_equal(nv.DeviceGetMemoryInfo(d1, &m), NVML_ERROR_GPU_IS_LOST);
    assert_int_equal(nv.DeviceGetHandleByIndex(1, &h), NVML_ERROR_GPU_IS_LOST);
    assert_int_equal(power(dev(0)), 100000);
    unsigned n = 0;
    assert_int_equal(nv.DeviceGetCount(&n), NVML_SUCCESS);
    assert_int_equal(n, 2);
}

static void test_nvml_process_lists(void **state)
{
    nvml_up("device 0\nproc_range compute 150 100000 used 1MiB\nproc graphics 4242 used 2GiB\n"
            "proc compute 7 used na from 5 to 10\n"
            "device 1\nvalue power_mw 1\n");
    nvmlDevice_t d = dev(0);
    enum { CAP = 200 };
    nvmlProcessInfo_t v3[CAP];
    nvmlProcessInfo_v1_t v1[CAP];
    unsigned n;

    /* sizing: *infoCount = 0 (infos may be NULL) gets the count back */
    n = 0;
    assert_int_equal(nv.DeviceGetComputeRunningProcesses_v3(d, &n, NULL), NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 150);
    n = 10;
    memset(v3, 0xAB, sizeof(v3));
    assert_int_equal(nv.DeviceGetComputeRunningProcesses_v3(d, &n, v3), NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 150);
    assert_int_equal(v3[0].pid, 0xABABABABu); /* nothing written */
    n = 5;
    assert_int_equal(nv.DeviceGetComputeRunningProcesses_v3(d, &n, NULL), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(nv.DeviceGetComputeRunningProcesses_v3(d, NULL, v3), NVML_ERROR_INVALID_ARGUMENT);

    n = CAP;
    assert_int_equal(nv.DeviceGetComputeRunningProcesses_v3(d, &n, v3), NVML_SUCCESS);
    assert_int_equal(n, 150);
    for (unsigned i = 0; i < n; i++) {
        assert_int_equal(v3[i].pid, 100000 + i);
        assert_int_equal(v3[i].usedGpuMemory, MiB);
        assert_int_equal(v3[i].gpuInstanceId, NVML_INSTANCE_ID_NONE);
        assert_int_equal(v3[i].computeInstanceId, NVML_INSTANCE_ID_NONE);
    }
    assert_int_equal(v3[150].pid, 0xABABABABu);
    n = CAP;
    memset(v3, 0, sizeof(v3));
    assert_int_equal(nv.DeviceGetComputeRunningProcesses_v2(d, &n, v3), NVML_SUCCESS);
    assert_int_equal(v3[149].pid, 100149);

    /* v1: 16-byte entries */
    n = 0;
    assert_int_equal(nv.DeviceGetComputeRunningProcesses_v1(d, &n, NULL), NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 150);
    n = CAP;
    assert_int_equal(nv.DeviceGetComputeRunningProcesses_v1(d, &n, v1), NVML_SUCCESS);
    assert_int_equal(n, 150);
    for (unsigned i = 0; i < n; i++) {
        assert_int_equal(v1[i].pid, 100000 + i);
        assert_int_equal(v1[i].usedGpuMemory, MiB);
    }
    unsigned pid120;
    memcpy(&pid120, (const char *)v1 + 120 * 16, sizeof(pid120));
    assert_int_equal(pid120, 100120);
    /* a v3 array handed to the v1 call is packed 16 bytes apart: read as v3 it is wrong */
    n = CAP;
    memset(v3, 0, sizeof(v3));
    assert_int_equal(nv.DeviceGetComputeRunningProcesses_v1(d, &n, (nvmlProcessInfo_v1_t *)(void *)v3),
                     NVML_SUCCESS);
    assert_int_not_equal(v3[1].pid, 100001);

    /* graphics list apart from compute */
    n = CAP;
    assert_int_equal(nv.DeviceGetGraphicsRunningProcesses_v3(d, &n, v3), NVML_SUCCESS);
    assert_int_equal(n, 1);
    assert_int_equal(v3[0].pid, 4242);
    assert_int_equal(v3[0].usedGpuMemory, 2 * GiB);
    n = CAP;
    assert_int_equal(nv.DeviceGetGraphicsRunningProcesses_v1(d, &n, v1), NVML_SUCCESS);
    assert_int_equal(n, 1);

    /* none running: SUCCESS with 0 */
    n = 0;
    assert_int_equal(nv.DeviceGetComputeRunningProcesses_v3(dev(1), &n, NULL), NVML_SUCCESS);
    assert_int_equal(n, 0);

    /* a process starts between the sizing call and the filling call: retry */
    set_time(4);
    n = 0;
    assert_int_equal(nv.DeviceGetComputeRunningProcesses_v3(d, &n, NULL), NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 150);
    set_time(6);
    assert_int_equal(nv.DeviceGetComputeRunningProcesses_v3(d, &n, v3), NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 151);
    assert_int_equal(nv.DeviceGetComputeRunningProcesses_v3(d, &n, v3), NVML_SUCCESS);
    assert_int_equal(v3[150].pid, 7);
    assert_int_equal(v3[150].usedGpuMemory, NVML_VALUE_NOT_AVAILABLE_ULL);
    set_time(10);
    n = 0;
    assert_int_equal(nv.DeviceGetComputeRunningProcesses_v3(d, &n, NULL), NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 150);
}

static void test_nvml_pid_specs(void **state)
{
    char text[512];
    snprintf(text, sizeof(text),
             "device 0\nproc compute $JOBSCOPE_TEST_FAKE_PID used 1GiB\nproc compute file:%s used 2GiB\n"
             "proc compute $JOBSCOPE_TEST_FAKE_UNSET used 3GiB\n",
             pid_path);
    unsetenv("JOBSCOPE_TEST_FAKE_UNSET");
    setenv("JOBSCOPE_TEST_FAKE_PID", "4242", 1);
    write_text(pid_path, "777\n");
    nvml_up(text);
    nvmlProcessInfo_t p[4];
    unsigned n = 4;
    assert_int_equal(nv.DeviceGetComputeRunningProcesses_v3(dev(0), &n, p), NVML_SUCCESS);
    assert_int_equal(n, 2);
    assert_int_equal(p[0].pid, 4242);
    assert_int_equal(p[1].pid, 777);
    assert_int_equal(p[1].usedGpuMemory, 2 * GiB);
    /* read at every call */
    setenv("JOBSCOPE_TEST_FAKE_PID", "5151", 1);
    unlink(pid_path);
    n = 4;
    assert_int_equal(nv.DeviceGetComputeRunningProcesses_v3(dev(0), &n, p), NVML_SUCCESS);
    assert_int_equal(n, 1);
    assert_int_equal(p[0].pid, 5151);
    unsetenv("JOBSCOPE_TEST_FAKE_PID");
}

static void test_nvml_process_utilization(void **state)
{
    nvml_up("device 0\nputil 100 sm 50 mem 10 enc 0 dec 0 every 1\n"
            "putil 200 sm 0 mem 0 enc 0 dec 0 every 1\n"
            "putil 300 sm 5 mem 0 enc 1 dec 2 at 2.5\n");
    nvmlDevice_t d = dev(0);
    nvmlProcessUtilizationSample_t s[64];
    unsigned n;

    set_time(0.5);
    n = 0;
    assert_int_equal(nv.DeviceGetProcessUtilization(d, NULL, &n, 0), NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 1); /* pid 200 never had any utilisation: not reported */
    assert_int_equal(nv.DeviceGetProcessUtilization(d, s, &n, 0), NVML_SUCCESS);
    assert_int_equal(n, 1);
    assert_int_equal(s[0].pid, 100);
    assert_int_equal(s[0].smUtil, 50);
    assert_int_equal(s[0].memUtil, 10);
    unsigned long long t0 = s[0].timeStamp, now = wall_us();
    assert_true(t0 > now - 60000000ULL && t0 <= now + 1000000ULL); /* CPU time in us */
    assert_int_equal(nv.DeviceGetProcessUtilization(d, s, NULL, 0), NVML_ERROR_INVALID_ARGUMENT);

    set_time(3.2); /* samples at 1, 2, 2.5 (pid 300) and 3 are newer than t0 */
    n = 0;
    assert_int_equal(nv.DeviceGetProcessUtilization(d, NULL, &n, t0), NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 4);
    n = 2;
    assert_int_equal(nv.DeviceGetProcessUtilization(d, s, &n, t0), NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 4);
    assert_int_equal(nv.DeviceGetProcessUtilization(d, s, &n, t0), NVML_SUCCESS);
    assert_int_equal(n, 4);
    unsigned long long ts_at[4] = {0};
    for (unsigned i = 0; i < n; i++) {
        assert_true(s[i].timeStamp > t0);
        if (s[i].pid == 300) {
            assert_int_equal(s[i].timeStamp - t0, 2500000);
            assert_int_equal(s[i].encUtil, 1);
            assert_int_equal(s[i].decUtil, 2);
        } else {
            unsigned k = (unsigned)((s[i].timeStamp - t0) / 1000000);
            assert_true(k >= 1 && k <= 3);
            ts_at[k] = s[i].timeStamp;
        }
    }
    /* only what is newer than lastSeenTimeStamp */
    n = 64;
    assert_int_equal(nv.DeviceGetProcessUtilization(d, s, &n, ts_at[2]), NVML_SUCCESS);
    assert_int_equal(n, 2); /* 2.5 s and 3 s */
    n = 64;
    assert_int_equal(nv.DeviceGetProcessUtilization(d, s, &n, ts_at[3]), NVML_ERROR_NOT_FOUND);
    assert_int_equal(n, 0);

    set_time(100); /* the driver keeps the newest 32 samples per process */
    n = 64;
    assert_int_equal(nv.DeviceGetProcessUtilization(d, s, &n, 0), NVML_SUCCESS);
    assert_int_equal(n, 32 + 1);
}

static void test_nvml_mig(void **state)
{
    setenv("JOBSCOPE_TEST_PID", "4242", 1);
    nvml_up(SCENARIOS "/nvml-mig.scn");
    set_time(10);
    nvmlDevice_t gpu = dev(0), mig = NULL;
    unsigned cur, pend, max, id, is;
    assert_int_equal(nv.DeviceGetMigMode(gpu, &cur, &pend), NVML_SUCCESS);
    assert_int_equal(cur, NVML_DEVICE_MIG_ENABLE);
    assert_int_equal(nv.DeviceGetMaxMigDeviceCount(gpu, &max), NVML_SUCCESS);
    assert_int_equal(max, 7);
    assert_int_equal(nv.DeviceGetMigDeviceHandleByIndex(gpu, 2, &mig), NVML_ERROR_NOT_FOUND);
    assert_int_equal(nv.DeviceGetMigDeviceHandleByIndex(gpu, 7, &mig), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(nv.DeviceGetMigDeviceHandleByIndex(gpu, 0, NULL), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(nv.DeviceGetMigDeviceHandleByIndex(gpu, 0, &mig), NVML_SUCCESS);
    assert_int_equal(nv.DeviceIsMigDeviceHandle(mig, &is), NVML_SUCCESS);
    assert_int_equal(is, 1);
    assert_int_equal(nv.DeviceIsMigDeviceHandle(gpu, &is), NVML_SUCCESS);
    assert_int_equal(is, 0);
    assert_int_equal(nv.DeviceGetGpuInstanceId(mig, &id), NVML_SUCCESS);
    assert_int_equal(id, 1);
    assert_int_equal(nv.DeviceGetComputeInstanceId(mig, &id), NVML_SUCCESS);
    assert_int_equal(id, 0);
    assert_int_equal(nv.DeviceGetGpuInstanceId(gpu, &id), NVML_ERROR_NOT_SUPPORTED);
    char name[96];
    assert_int_equal(nv.DeviceGetName(mig, name, sizeof(name)), NVML_SUCCESS);
    assert_string_equal(name, "NVIDIA H100 80GB HBM3 MIG 3g.40gb");
    nvmlMemory_v2_t m = {.version = nvmlMemory_v2};
    assert_int_equal(nv.DeviceGetMemoryInfo_v2(mig, &m), NVML_SUCCESS);
    assert_int_equal(m.total, 40 * GiB);
    assert_int_equal(m.used, 30 * GiB);
    unsigned v;
    assert_int_equal(nv.DeviceGetPowerUsage(mig, &v), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(power(gpu), 420000);

    /* processes: the parent lists all of them with their instance ids, a MIG handle its own */
    nvmlProcessInfo_t p[8];
    unsigned n = 8;
    assert_int_equal(nv.DeviceGetComputeRunningProcesses_v3(gpu, &n, p), NVML_SUCCESS);
    assert_int_equal(n, 3);
    assert_int_equal(p[0].pid, 4242);
    assert_int_equal(p[0].gpuInstanceId, 1);
    assert_int_equal(p[2].gpuInstanceId, 13);
    nvmlDevice_t mig1;
    assert_int_equal(nv.DeviceGetMigDeviceHandleByIndex(gpu, 1, &mig1), NVML_SUCCESS);
    n = 8;
    assert_int_equal(nv.DeviceGetComputeRunningProcesses_v3(mig1, &n, p), NVML_SUCCESS);
    assert_int_equal(n, 1);
    assert_int_equal(p[0].pid, 5001);
    assert_int_equal(p[0].gpuInstanceId, 5);

    /* not on MIG-enabled GPUs */
    nvmlUtilization_t u;
    unsigned period;
    assert_int_equal(nv.DeviceGetUtilizationRates(gpu, &u), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(nv.DeviceGetEncoderUtilization(gpu, &v, &period), NVML_ERROR_NOT_SUPPORTED);
    n = 0;
    assert_int_equal(nv.DeviceGetProcessUtilization(gpu, NULL, &n, 0), NVML_ERROR_NOT_SUPPORTED);

    /* the other GPU has MIG disabled */
    nvmlDevice_t plain = dev(1);
    assert_int_equal(nv.DeviceGetMigMode(plain, &cur, &pend), NVML_SUCCESS);
    assert_int_equal(cur, NVML_DEVICE_MIG_DISABLE);
    assert_int_equal(nv.DeviceGetMaxMigDeviceCount(plain, &max), NVML_SUCCESS);
    assert_int_equal(max, 0);
    assert_int_equal(nv.DeviceGetMigDeviceHandleByIndex(plain, 0, &mig), NVML_ERROR_INVALID_ARGUMENT);
    assert_int_equal(nv.DeviceGetUtilizationRates(plain, &u), NVML_SUCCESS);
    assert_int_equal(u.gpu, 75);
    unsetenv("JOBSCOPE_TEST_PID");
}

static void test_nvml_faults_scenario(void **state)
{
    setenv("JOBSCOPE_TEST_PID", "4242", 1);
    nvml_up(SCENARIOS "/nvml-faults.scn");
    unsigned n = 0, v;
    assert_int_equal(nv.DeviceGetCount(&n), NVML_SUCCESS);
    assert_int_equal(n, 3);
    nvmlDevice_t d0 = dev(0), d1 = dev(1), d2;
    assert_int_equal(nv.DeviceGetHandleByIndex(2, &d2), NVML_ERROR_NO_PERMISSION);
    assert_int_equal(nv.DeviceGetCountV1(&n), NVML_SUCCESS); /* the old count leaves it out */
    assert_int_equal(n, 2);
    assert_int_equal(nv.DeviceGetFanSpeed(d0, &v), NVML_ERROR_NOT_SUPPORTED);
    assert_int_equal(nv.DeviceGetClockInfo(d0, NVML_CLOCK_VIDEO, &v), NVML_ERROR_NOT_SUPPORTED);
    unsigned long long e;
    assert_int_equal(nv.DeviceGetTotalEccErrors(d0, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, &e),
                     NVML_ERROR_NO_PERMISSION);
    assert_int_equal(nv.DeviceGetMigMode(d0, &v, &v), NVML_ERROR_NOT_SUPPORTED);
    n = 0;
    assert_int_equal(nv.DeviceGetProcessUtilization(d1, NULL, &n, 0), NVML_ERROR_NOT_SUPPORTED);
    set_time(12);
    n = 0;
    assert_int_equal(nv.DeviceGetComputeRunningProcesses_v3(d0, &n, NULL), NVML_ERROR_NO_PERMISSION);
    set_time(19);
    unsigned long long before = energy(d0);
    set_time(16);
    n = 0;
    assert_int_equal(nv.DeviceGetComputeRunningProcesses_v3(d0, &n, NULL), NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 1);
    set_time(21);
    assert_true(energy(d0) < before);
    assert_int_equal(power(d1), 180000);
    set_time(30);
    assert_int_equal(nv.DeviceGetPowerUsage(d1, &v), NVML_ERROR_GPU_IS_LOST);
    assert_int_equal(power(d0), 250000);
    unsetenv("JOBSCOPE_TEST_PID");
}

static void test_nvml_old_abi(void **state)
{
    nvml_load(NVML_OLD_LIB, "device 0\npci 0000:19:00.0\nproc_range compute 120 30000 used 4MiB\n"
                            "value power_mw 1000\nvalue clocks_event_reasons 0x4\n"
                            "device 1\nno_permission\ndevice 2\nname \"Third\"\n");
    /* versioned entry points and later drivers' calls are absent; the unversioned ones were bound */
    assert_string_equal(nvml_bound[0], "nvmlInit");
    assert_null(nv.DeviceGetMemoryInfo_v2);
    assert_null(nv.DeviceGetPciInfo_v3);
    assert_null(nv.DeviceGetPciInfo_v2);
    assert_null(nv.DeviceGetTotalEnergyConsumption);
    assert_null(nv.DeviceGetTemperatureV);
    assert_null(nv.DeviceGetMigMode);
    assert_null(nv.DeviceGetComputeRunningProcesses_v3);
    assert_null(nv.DeviceGetGraphicsRunningProcesses_v3);
    assert_non_null(nv.DeviceGetCountV1);
    assert_int_equal(nv.Init(), NVML_SUCCESS);

    /* the old count and index skip the device this user may not open */
    unsigned n = 0;
    assert_int_equal(nv.DeviceGetCount(&n), NVML_SUCCESS);
    assert_int_equal(n, 2);
    nvmlDevice_t d = dev(1);
    char name[96];
    assert_int_equal(nv.DeviceGetName(d, name, sizeof(name)), NVML_SUCCESS);
    assert_string_equal(name, "Third");
    d = dev(0);

    /* 16-byte entries through the same sizing protocol */
    nvmlProcessInfo_v1_t p[128];
    n = 0;
    assert_int_equal(nv.DeviceGetComputeRunningProcesses_v1(d, &n, NULL), NVML_ERROR_INSUFFICIENT_SIZE);
    assert_int_equal(n, 120);
    n = 128;
    assert_int_equal(nv.DeviceGetComputeRunningProcesses_v1(d, &n, p), NVML_SUCCESS);
    assert_int_equal(n, 120);
    assert_int_equal(p[119].pid, 30119);
    assert_int_equal(p[119].usedGpuMemory, 4 * MiB);

    /* the legacy PCI layout: 52 bytes, nothing written past them */
    unsigned char raw[sizeof(nvmlPciInfo_t)];
    memset(raw, 0xAA, sizeof(raw));
    assert_int_equal(nv.DeviceGetPciInfo_v1(d, (nvmlPciInfo_v1_t *)(void *)raw), NVML_SUCCESS);
    nvmlPciInfo_v1_t legacy;
    memcpy(&legacy, raw, sizeof(legacy));
    assert_string_equal(legacy.busId, "0000:19:00.0");
    assert_int_equal(legacy.bus, 0x19);
    assert_int_equal(legacy.pciDeviceId, 0x233010DE);
    for (size_t i = sizeof(nvmlPciInfo_v1_t); i < sizeof(raw); i++)
        assert_int_equal(raw[i], 0xAA);
    /* read as the v3 struct, only the common prefix is meaningful */
    nvmlPciInfo_t as_v3;
    memcpy(&as_v3, raw, sizeof(as_v3));
    assert_string_equal(as_v3.busIdLegacy, "0000:19:00.0");

    unsigned long long reasons;
    assert_int_equal(nv.DeviceGetCurrentClocksEventReasons(d, &reasons), NVML_SUCCESS); /* fell back */
    assert_int_equal(reasons, nvmlClocksEventReasonSwPowerCap);
    assert_int_equal(nv.Shutdown(), NVML_SUCCESS);

    /* the old nvmlInit fails when a GPU is bad at init */
    use_scenario("FAKE_NVML_SCENARIO", "device 0\ndevice 1\nlost 0\n");
    assert_int_equal(nv.Init(), NVML_ERROR_GPU_IS_LOST);
}

static void test_nvml_omit(void **state)
{
    nvml_load(NVML_LIB, "omit nvmlDeviceGetComputeRunningProcesses_v3 nvmlDeviceGetTotalEnergyConsumption\n"
                        "omit nvmlInit_v2\ndevice 0\nvalue power_mw 5\n");
    assert_string_equal(nvml_bound[0], "nvmlInit");
    assert_null(nv.DeviceGetTotalEnergyConsumption);
    assert_non_null(nv.DeviceGetComputeRunningProcesses_v3); /* bound to _v2 */
    assert_int_equal(nv.Init(), NVML_SUCCESS);
    assert_int_equal(power(dev(0)), 5);
}

static void test_nvml_example_scenarios(void **state)
{
    static const struct {
        const char *file;
        unsigned devices;
    } examples[] = {{SCENARIOS "/nvml-h100x2-busy.scn", 2},
                    {SCENARIOS "/nvml-faults.scn", 3},
                    {SCENARIOS "/nvml-mig.scn", 2}};
    nvml_load(NVML_LIB, NULL);
    for (size_t i = 0; i < sizeof(examples) / sizeof(examples[0]); i++) {
        use_scenario("FAKE_NVML_SCENARIO", examples[i].file);
        assert_int_equal(nv.Init(), NVML_SUCCESS);
        unsigned n = 0;
        assert_int_equal(nv.DeviceGetCount(&n), NVML_SUCCESS);
        assert_int_equal(n, examples[i].devices);
        assert_int_equal(nv.Shutdown(), NVML_SUCCESS);
    }
}

static void test_nvml_clock_and_delay(void **state)
{
    /* without the manual clock: CLOCK_MONOTONIC times the speed factor */
    unsetenv("FAKE_NVML_TIME_FILE");
    setenv("FAKE_NVML_SPEED", "1000", 1);
    nvml_up("delay nvmlDeviceGetPowerUsage 30\ndevice 0\nvalue gpu_util_pct linear 0:0 1000:100\n"
            "value power_mw 1\n");
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    assert_int_equal(power(dev(0)), 1);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
    assert_true(ms >= 29);
    nvmlUtilization_t u;
    assert_int_equal(nv.DeviceGetUtilizationRates(dev(0), &u), NVML_SUCCESS);
    assert_true(u.gpu >= 3); /* at least 30 ms x 1000 = 30 scenario seconds have passed */
    setenv("FAKE_NVML_TIME_FILE", time_path, 1);
    unsetenv("FAKE_NVML_SPEED");
}

/* ---- ROCm SMI ---- */

static void rocm_load(const char *text)
{
    use_scenario("FAKE_ROCM_SMI_SCENARIO", text);
    set_time(0);
    setenv("JOBSCOPE_ROCM_SMI_LIBRARY", ROCM_LIB, 1);
    const char *sonames[] = {"librocm_smi64.so.1", NULL};
    assert_int_equal(dlib_open(&lib, "JOBSCOPE_ROCM_SMI_LIBRARY", sonames, NULL, 0), 0);
    assert_true(dlib_resolve(&lib, rocm_table, ROCM_N, &rs, rocm_bound, NULL, 0) > 0);
}

static void rocm_up(const char *text)
{
    rocm_load(text);
    assert_int_equal(rs.init(0), RSMI_STATUS_SUCCESS);
}

static int rocm_teardown(void **state)
{
    if (lib.handle) {
        for (int i = 0; i < 8 && rs.shut_down() == RSMI_STATUS_SUCCESS; i++)
            ;
        dlib_close(&lib);
    }
    memset(&rs, 0, sizeof(rs));
    return 0;
}

static void test_rocm_uninitialized(void **state)
{
    rocm_load(NULL);
    uint32_t n = 9, busy;
    assert_int_equal(rs.num_monitor_devices(&n), RSMI_STATUS_SUCCESS);
    assert_int_equal(n, 0);
    assert_int_equal(rs.num_monitor_devices(NULL), RSMI_STATUS_INVALID_ARGS);
    assert_int_equal(rs.dev_busy_percent_get(0, &busy), RSMI_STATUS_INVALID_ARGS); /* no device 0 yet */
    assert_int_equal(rs.shut_down(), RSMI_STATUS_INIT_ERROR);
    n = 0;
    assert_int_equal(rs.compute_process_info_get(NULL, &n), RSMI_STATUS_NOT_SUPPORTED);
    rsmi_version_t ver;
    assert_int_equal(rs.version_get(&ver), RSMI_STATUS_SUCCESS);
    assert_int_equal(ver.major, 1);
    const char *str = NULL;
    assert_int_equal(rs.status_string(RSMI_STATUS_NOT_SUPPORTED, &str), RSMI_STATUS_SUCCESS);
    assert_non_null(strstr(str, "RSMI_STATUS_NOT_SUPPORTED"));
    assert_int_equal(rs.status_string(RSMI_STATUS_SUCCESS, NULL), RSMI_STATUS_INVALID_ARGS);
    /* no scenario: no amdgpu */
    assert_int_equal(rs.init(0), RSMI_STATUS_INIT_ERROR);
    use_scenario("FAKE_ROCM_SMI_SCENARIO", "init_error PERMISSION\n");
    assert_int_equal(rs.init(0), RSMI_STATUS_PERMISSION);
    /* reference counted */
    use_scenario("FAKE_ROCM_SMI_SCENARIO", "device 0\n");
    assert_int_equal(rs.init(0), RSMI_STATUS_SUCCESS);
    assert_int_equal(rs.init(RSMI_INIT_FLAG_ALL_GPUS), RSMI_STATUS_SUCCESS);
    assert_int_equal(rs.shut_down(), RSMI_STATUS_SUCCESS);
    assert_int_equal(rs.num_monitor_devices(&n), RSMI_STATUS_SUCCESS);
    assert_int_equal(n, 1);
    assert_int_equal(rs.shut_down(), RSMI_STATUS_SUCCESS);
    assert_int_equal(rs.shut_down(), RSMI_STATUS_INIT_ERROR);
    assert_int_equal(rs.num_monitor_devices(&n), RSMI_STATUS_SUCCESS);
    assert_int_equal(n, 0);
}

static void test_rocm_example(void **state)
{
    setenv("JOBSCOPE_TEST_PID", "4242", 1);
    rocm_up(SCENARIOS "/rocm-mi210x2.scn");
    set_time(10);
    uint32_t n = 0;
    assert_int_equal(rs.num_monitor_devices(&n), RSMI_STATUS_SUCCESS);
    assert_int_equal(n, 2);

    char name[64];
    assert_int_equal(rs.dev_name_get(0, name, sizeof(name)), RSMI_STATUS_SUCCESS);
    assert_string_equal(name, "AMD Instinct MI210");
    assert_int_equal(rs.dev_name_get(0, name, 4), RSMI_STATUS_INSUFFICIENT_SIZE);
    assert_string_equal(name, "AMD"); /* truncated, terminated */
    assert_int_equal(rs.dev_name_get(0, name, 0), RSMI_STATUS_INVALID_ARGS);
    assert_int_equal(rs.dev_name_get(2, name, sizeof(name)), RSMI_STATUS_INVALID_ARGS);
    uint64_t u64;
    uint16_t id;
    assert_int_equal(rs.dev_pci_id_get(0, &u64), RSMI_STATUS_SUCCESS);
    assert_int_equal(u64, 0xc1u << 8);
    assert_int_equal(rs.dev_unique_id_get(1, &u64), RSMI_STATUS_SUCCESS);
    assert_int_equal(u64, 0x7a3e1b9c5d2f4e60ULL);
    assert_int_equal(rs.dev_id_get(0, &id), RSMI_STATUS_SUCCESS);
    assert_int_equal(id, 0x740f);
    char ver[32];
    assert_int_equal(rs.version_str_get(RSMI_SW_COMP_DRIVER, ver, sizeof(ver)), RSMI_STATUS_SUCCESS);
    assert_string_equal(ver, "6.1.0");
    assert_int_equal(rs.version_str_get(RSMI_SW_COMP_DRIVER, ver, 3), RSMI_STATUS_INSUFFICIENT_SIZE);
    assert_string_equal(ver, "6.");

    uint32_t busy;
    assert_int_equal(rs.dev_busy_percent_get(0, &busy), RSMI_STATUS_SUCCESS);
    assert_int_equal(busy, 96);
    assert_int_equal(rs.dev_memory_busy_percent_get(1, &busy), RSMI_STATUS_SUCCESS);
    assert_int_equal(busy, 30);
    assert_int_equal(rs.dev_memory_usage_get(0, RSMI_MEM_TYPE_VRAM, &u64), RSMI_STATUS_SUCCESS);
    assert_int_equal(u64, 40 * GiB);
    assert_int_equal(rs.dev_memory_total_get(0, RSMI_MEM_TYPE_VRAM, &u64), RSMI_STATUS_SUCCESS);
    assert_int_equal(u64, 64 * GiB);
    assert_int_equal(rs.dev_memory_usage_get(0, RSMI_MEM_TYPE_GTT, &u64), RSMI_STATUS_SUCCESS);
    assert_int_equal(u64, 300 * MiB);
    assert_int_equal(rs.dev_memory_usage_get(1, RSMI_MEM_TYPE_GTT, &u64), RSMI_STATUS_NOT_SUPPORTED);
    assert_int_equal(rs.dev_power_ave_get(0, 0, &u64), RSMI_STATUS_SUCCESS);
    assert_int_equal(u64, 280909091); /* uW, 5 s into 280 W -> 290 W over 55 s */
    assert_int_equal(rs.dev_power_ave_get(0, 1, &u64), RSMI_STATUS_NOT_SUPPORTED);
    assert_int_equal(rs.dev_power_cap_get(0, 0, &u64), RSMI_STATUS_SUCCESS);
    assert_int_equal(u64, 300000000);
    int64_t temp;
    assert_int_equal(rs.dev_temp_metric_get(0, RSMI_TEMP_TYPE_EDGE, RSMI_TEMP_CURRENT, &temp),
                     RSMI_STATUS_SUCCESS);
    assert_int_equal(temp, 46000); /* millidegrees */
    assert_int_equal(rs.dev_temp_metric_get(0, RSMI_TEMP_TYPE_JUNCTION, RSMI_TEMP_CURRENT, &temp),
                     RSMI_STATUS_SUCCESS);
    assert_int_equal(temp, 52000);
    assert_int_equal(rs.dev_temp_metric_get(1, RSMI_TEMP_TYPE_MEMORY, RSMI_TEMP_CURRENT, &temp),
                     RSMI_STATUS_NOT_SUPPORTED);
    assert_int_equal(rs.dev_temp_metric_get(0, RSMI_TEMP_TYPE_EDGE, RSMI_TEMP_CRITICAL, &temp),
                     RSMI_STATUS_NOT_SUPPORTED);
    int64_t fan;
    assert_int_equal(rs.dev_fan_speed_get(0, 0, &fan), RSMI_STATUS_NOT_SUPPORTED); /* passively cooled */
    rsmi_dev_perf_level_t perf = 99;
    assert_int_equal(rs.dev_perf_level_get(0, &perf), RSMI_STATUS_SUCCESS);
    assert_int_equal(perf, RSMI_DEV_PERF_LEVEL_AUTO);

    /* the support probe: a NULL output is INVALID_ARGS where supported, NOT_SUPPORTED where not */
    assert_int_equal(rs.dev_busy_percent_get(0, NULL), RSMI_STATUS_INVALID_ARGS);
    assert_int_equal(rs.dev_fan_speed_get(0, 0, NULL), RSMI_STATUS_NOT_SUPPORTED);
    assert_int_equal(rs.dev_busy_percent_get(5, NULL), RSMI_STATUS_INVALID_ARGS);

    /* throughput: NULL outputs are skipped, not an error */
    uint64_t sent = 0, recv = 0, pkt = 0;
    assert_int_equal(rs.dev_pci_throughput_get(0, &sent, &recv, &pkt), RSMI_STATUS_SUCCESS);
    assert_int_equal(sent, 900000000);
    assert_int_equal(recv, 2500000000ULL);
    assert_int_equal(pkt, 256);
    assert_int_equal(rs.dev_pci_throughput_get(1, NULL, &recv, NULL), RSMI_STATUS_SUCCESS);
    assert_int_equal(recv, 1900000000);
    assert_int_equal(rs.dev_pci_replay_counter_get(0, &u64), RSMI_STATUS_SUCCESS);
    assert_int_equal(u64, 0);

    rsmi_process_info_t p;
    assert_int_equal(rs.compute_process_info_by_pid_get(4242, &p), RSMI_STATUS_SUCCESS);
    assert_int_equal(p.vram_usage, 58 * GiB);
    unsetenv("JOBSCOPE_TEST_PID");
}

static void test_rocm_energy(void **state)
{
    rocm_up("device 0\nvalue power_uw linear 0:100000000 10:300000000\nreload 12\ndevice 1\n");
    uint64_t counter, ts;
    float res = 0;
    set_time(10);
    assert_int_equal(rs.dev_energy_count_get(0, &counter, &res, &ts), RSMI_STATUS_SUCCESS);
    assert_true(res == 15.3f); /* microjoules per count */
    double uj = (double)counter * (double)res;
    assert_true(fabs(uj - 2e9) <= res);                      /* 2000 J: (100 W + 300 W) / 2 x 10 s */
    assert_int_equal(ts, 1000000000000ULL + 10000000000ULL); /* ns */
    set_time(11);
    uint64_t before;
    assert_int_equal(rs.dev_energy_count_get(0, &before, NULL, &ts), RSMI_STATUS_SUCCESS); /* res optional */
    set_time(13);
    assert_int_equal(rs.dev_energy_count_get(0, &counter, &res, &ts), RSMI_STATUS_SUCCESS);
    assert_true(counter < before); /* the driver was reloaded at 12 s */
    assert_true(fabs((double)counter * (double)res - 3e8) <= res);
    assert_int_equal(rs.dev_energy_count_get(0, NULL, &res, &ts), RSMI_STATUS_INVALID_ARGS);
    assert_int_equal(rs.dev_energy_count_get(0, &counter, &res, NULL), RSMI_STATUS_INVALID_ARGS);
    assert_int_equal(rs.dev_energy_count_get(1, &counter, &res, &ts), RSMI_STATUS_NOT_SUPPORTED);
}

static const char freq_scenario[] = "device 0\nclocks sys 500 800 1700\nvalue sclk_level 2\nclocks mem 1600\n"
                                    "pcie_levels 2.5:16 8:16 16:16\nvalue pcie_level 2\n";

static void test_rocm_frequencies_5x(void **state)
{
    rocm_up(freq_scenario);
    rsmi_frequencies_any_t f;
    memset(&f, 0, sizeof(f));
    assert_int_equal(rs.dev_gpu_clk_freq_get(0, RSMI_CLK_TYPE_SYS, &f.v5), RSMI_STATUS_SUCCESS);
    assert_int_equal(rsmi_frequencies_layout(&f), 5);
    assert_int_equal(f.v5.num_supported, 3);
    assert_int_equal(f.v5.current, 2);
    assert_int_equal(f.v5.frequency[0], 500000000); /* Hz */
    assert_int_equal(f.v5.frequency[2], 1700000000);
    memset(&f, 0, sizeof(f));
    assert_int_equal(rs.dev_gpu_clk_freq_get(0, RSMI_CLK_TYPE_MEM, &f.v5), RSMI_STATUS_SUCCESS);
    assert_int_equal(rsmi_frequencies_layout(&f), 5);
    assert_int_equal(f.v5.num_supported, 1);
    assert_int_equal(f.v5.current, 0xFFFFFFFFu); /* no current level known */
    assert_int_equal(rs.dev_gpu_clk_freq_get(0, RSMI_CLK_TYPE_DF, &f.v5), RSMI_STATUS_NOT_SUPPORTED);
    assert_int_equal(rs.dev_gpu_clk_freq_get(0, RSMI_CLK_TYPE_PCIE, &f.v5), RSMI_STATUS_INVALID_ARGS);
    assert_int_equal(rs.dev_gpu_clk_freq_get(0, RSMI_CLK_TYPE_SYS, NULL), RSMI_STATUS_INVALID_ARGS);

    rsmi_pcie_bandwidth_any_t b;
    memset(&b, 0, sizeof(b));
    assert_int_equal(rs.dev_pci_bandwidth_get(0, &b.v5), RSMI_STATUS_SUCCESS);
    assert_int_equal(rsmi_frequencies_layout((rsmi_frequencies_any_t *)(void *)&b), 5);
    assert_int_equal(b.v5.transfer_rate.num_supported, 3);
    assert_int_equal(b.v5.transfer_rate.current, 2);
    assert_int_equal(b.v5.transfer_rate.frequency[0], 2500000000ULL); /* T/s */
    assert_int_equal(b.v5.lanes[2], 16);
}

static void test_rocm_frequencies_6x(void **state)
{
    char text[512];
    snprintf(text, sizeof(text), "frequencies_layout 6\n%s", freq_scenario);
    rocm_up(text);
    rsmi_frequencies_any_t f;
    memset(&f, 0, sizeof(f));
    assert_int_equal(rs.dev_gpu_clk_freq_get(0, RSMI_CLK_TYPE_SYS, &f.v5), RSMI_STATUS_SUCCESS);
    assert_int_equal(rsmi_frequencies_layout(&f), 6);
    assert_false(f.v6.has_deep_sleep);
    assert_int_equal(f.v6.num_supported, 3);
    assert_int_equal(f.v6.current, 2);
    assert_int_equal(f.v6.frequency[2], 1700000000);
    memset(&f, 0, sizeof(f));
    assert_int_equal(rs.dev_gpu_clk_freq_get(0, RSMI_CLK_TYPE_MEM, &f.v5), RSMI_STATUS_SUCCESS);
    assert_int_equal(rsmi_frequencies_layout(&f), 6);
    assert_int_equal(f.v6.num_supported, 1);
    assert_int_equal(f.v6.current, 0xFFFFFFFFu);

    rsmi_pcie_bandwidth_any_t b;
    memset(&b, 0, sizeof(b));
    assert_int_equal(rs.dev_pci_bandwidth_get(0, &b.v5), RSMI_STATUS_SUCCESS);
    assert_int_equal(rsmi_frequencies_layout((rsmi_frequencies_any_t *)(void *)&b), 6);
    assert_int_equal(b.v6.transfer_rate.frequency[1], 8000000000ULL);
    assert_int_equal(b.v6.lanes[2], 16);

    /* a layout that is neither */
    memset(&f, 0, sizeof(f));
    assert_int_equal(rsmi_frequencies_layout(&f), 0);
}

static void test_rocm_processes(void **state)
{
    rocm_up("device 0\ncu_count 100\nproc 4242 pasid 100 vram 1GiB sdma 10 cu 50\n"
            "proc_range 40 20000 vram 1MiB\n"
            "device 1\ncu_count 60\nproc 4242 pasid 100 vram 3GiB sdma 30 cu 10\n"
            "proc 777 vram 2GiB cu 20 from 5\n");
    rsmi_process_info_t p[64];
    uint32_t n = 0;

    /* procs NULL: the number of processes, each once whatever its GPUs */
    assert_int_equal(rs.compute_process_info_get(NULL, &n), RSMI_STATUS_SUCCESS);
    assert_int_equal(n, 41);
    assert_int_equal(rs.compute_process_info_get(p, NULL), RSMI_STATUS_INVALID_ARGS);
    /* too small: INSUFFICIENT_SIZE, *num_items unchanged (not the count needed, unlike NVML) */
    memset(p, 0xAB, sizeof(p));
    n = 10;
    assert_int_equal(rs.compute_process_info_get(p, &n), RSMI_STATUS_INSUFFICIENT_SIZE);
    assert_int_equal(n, 10);
    assert_int_equal(p[0].process_id, 4242);
    assert_int_equal(p[0].pasid, 100);
    assert_int_equal(p[0].vram_usage, 0xABABABABABABABABULL); /* only pid and pasid are written */
    assert_int_equal(p[9].process_id, 20008);
    assert_int_equal(p[10].process_id, 0xABABABABu);
    n = 64;
    assert_int_equal(rs.compute_process_info_get(p, &n), RSMI_STATUS_SUCCESS);
    assert_int_equal(n, 41);
    set_time(6);
    n = 0;
    assert_int_equal(rs.compute_process_info_get(NULL, &n), RSMI_STATUS_SUCCESS);
    assert_int_equal(n, 42);

    /* by PID: summed over GPUs; CU occupancy over all GPUs' compute units */
    rsmi_process_info_t q;
    assert_int_equal(rs.compute_process_info_by_pid_get(4242, &q), RSMI_STATUS_SUCCESS);
    assert_int_equal(q.process_id, 4242);
    assert_int_equal(q.pasid, 100);
    assert_int_equal(q.vram_usage, 4 * GiB);
    assert_int_equal(q.sdma_usage, 40);
    assert_int_equal(q.cu_occupancy, (50 * 100 + 10 * 60) / 160);
    assert_int_equal(rs.compute_process_info_by_pid_get(999, &q), RSMI_STATUS_NOT_FOUND);
    assert_int_equal(rs.compute_process_info_by_pid_get(4242, NULL), RSMI_STATUS_INVALID_ARGS);
    /* by device (5.7+) */
    assert_int_equal(rs.compute_process_info_by_device_get(4242, 1, &q), RSMI_STATUS_SUCCESS);
    assert_int_equal(q.vram_usage, 3 * GiB);
    assert_int_equal(q.sdma_usage, 30);
    assert_int_equal(q.cu_occupancy, 10);
    assert_int_equal(rs.compute_process_info_by_device_get(777, 0, &q), RSMI_STATUS_SUCCESS);
    assert_int_equal(q.vram_usage, 0);
    assert_int_equal(rs.compute_process_info_by_device_get(4242, 5, &q), RSMI_STATUS_INVALID_ARGS);
    assert_int_equal(rs.compute_process_info_by_device_get(999, 0, &q), RSMI_STATUS_NOT_FOUND);

    /* the GPUs of a process */
    uint32_t gpus[2] = {99, 99};
    n = 0;
    assert_int_equal(rs.compute_process_gpus_get(4242, NULL, &n), RSMI_STATUS_SUCCESS);
    assert_int_equal(n, 2);
    n = 1;
    assert_int_equal(rs.compute_process_gpus_get(4242, gpus, &n), RSMI_STATUS_INSUFFICIENT_SIZE);
    assert_int_equal(n, 1);
    assert_int_equal(gpus[0], 0);
    n = 2;
    assert_int_equal(rs.compute_process_gpus_get(4242, gpus, &n), RSMI_STATUS_SUCCESS);
    assert_int_equal(gpus[1], 1);
    assert_int_equal(rs.compute_process_gpus_get(999, gpus, &n), RSMI_STATUS_NOT_FOUND);
}

static void test_rocm_errors_and_lost(void **state)
{
    rocm_up("device 0\nvalue busy_pct 40\nvalue temp_edge_mc 50000\nvalue temp_junction_mc 60000\n"
            "error rsmi_dev_busy_percent_get PERMISSION from 2 to 4\n"
            "error rsmi_dev_temp_metric_get NOT_SUPPORTED arg 1\n"
            "device 1\nvalue busy_pct 70\nlost 5\ndevice 2\nvalue busy_pct 1\nlost 5 NOT_SUPPORTED\n");
    uint32_t busy;
    int64_t temp;
    set_time(3);
    assert_int_equal(rs.dev_busy_percent_get(0, &busy), RSMI_STATUS_PERMISSION);
    assert_int_equal(rs.dev_busy_percent_get(0, NULL), RSMI_STATUS_INVALID_ARGS); /* the probe comes first */
    set_time(4);
    assert_int_equal(rs.dev_busy_percent_get(0, &busy), RSMI_STATUS_SUCCESS);
    assert_int_equal(rs.dev_temp_metric_get(0, RSMI_TEMP_TYPE_EDGE, RSMI_TEMP_CURRENT, &temp),
                     RSMI_STATUS_SUCCESS);
    assert_int_equal(rs.dev_temp_metric_get(0, RSMI_TEMP_TYPE_JUNCTION, RSMI_TEMP_CURRENT, &temp),
                     RSMI_STATUS_NOT_SUPPORTED);
    assert_int_equal(rs.dev_temp_metric_get(0, RSMI_TEMP_TYPE_JUNCTION, RSMI_TEMP_CURRENT, NULL),
                     RSMI_STATUS_NOT_SUPPORTED);
    assert_int_equal(rs.dev_busy_percent_get(1, &busy), RSMI_STATUS_SUCCESS);
    assert_int_equal(busy, 70);
    set_time(5);
    assert_int_equal(rs.dev_busy_percent_get(1, &busy), RSMI_STATUS_UNKNOWN_ERROR);
    assert_int_equal(rs.dev_busy_percent_get(2, &busy), RSMI_STATUS_NOT_SUPPORTED);
    assert_int_equal(rs.dev_busy_percent_get(0, &busy), RSMI_STATUS_SUCCESS);
    uint32_t n = 0;
    assert_int_equal(rs.num_monitor_devices(&n), RSMI_STATUS_SUCCESS);
    assert_int_equal(n, 3);
}

static void test_rocm_as_debian_5_2_3(void **state)
{
    rocm_load("omit rsmi_compute_process_info_by_device_get\ndevice 0\n");
    assert_null(rs.compute_process_info_by_device_get);
    assert_non_null(rs.compute_process_info_by_pid_get);
    assert_int_equal(rs.init(0), RSMI_STATUS_SUCCESS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_nvml_uninitialized, nvml_teardown),
        cmocka_unit_test_teardown(test_nvml_refcount, nvml_teardown),
        cmocka_unit_test_teardown(test_nvml_inventory, nvml_teardown),
        cmocka_unit_test_teardown(test_nvml_memory_versions, nvml_teardown),
        cmocka_unit_test_teardown(test_nvml_series_over_time, nvml_teardown),
        cmocka_unit_test_teardown(test_nvml_errors, nvml_teardown),
        cmocka_unit_test_teardown(test_nvml_energy_and_reload, nvml_teardown),
        cmocka_unit_test_teardown(test_nvml_lost_device, nvml_teardown),
        cmocka_unit_test_teardown(test_nvml_process_lists, nvml_teardown),
        cmocka_unit_test_teardown(test_nvml_pid_specs, nvml_teardown),
        cmocka_unit_test_teardown(test_nvml_process_utilization, nvml_teardown),
        cmocka_unit_test_teardown(test_nvml_mig, nvml_teardown),
        cmocka_unit_test_teardown(test_nvml_faults_scenario, nvml_teardown),
        cmocka_unit_test_teardown(test_nvml_old_abi, nvml_teardown),
        cmocka_unit_test_teardown(test_nvml_omit, nvml_teardown),
        cmocka_unit_test_teardown(test_nvml_example_scenarios, nvml_teardown),
        cmocka_unit_test_teardown(test_nvml_clock_and_delay, nvml_teardown),
        cmocka_unit_test_teardown(test_rocm_uninitialized, rocm_teardown),
        cmocka_unit_test_teardown(test_rocm_example, rocm_teardown),
        cmocka_unit_test_teardown(test_rocm_energy, rocm_teardown),
        cmocka_unit_test_teardown(test_rocm_frequencies_5x, rocm_teardown),
        cmocka_unit_test_teardown(test_rocm_frequencies_6x, rocm_teardown),
        cmocka_unit_test_teardown(test_rocm_processes, rocm_teardown),
        cmocka_unit_test_teardown(test_rocm_errors_and_lost, rocm_teardown),
        cmocka_unit_test_teardown(test_rocm_as_debian_5_2_3, rocm_teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
