/* SPDX-License-Identifier: MIT
 *
 * The `nvml` source (see nvml.h). At init: load NVML (dlopen "libnvidia-ml.so.1", then "libnvidia-ml.so";
 * $JOBSCOPE_NVML_LIBRARY overrides), bind its entry points, preferring versioned ones (nvmlInit_v2,
 * nvmlDeviceGetCount_v2, ..._v3 process lists, MemoryInfo_v2, PciInfo_v3, TemperatureV, ClocksEventReasons)
 * and falling back to older names; only nvmlInit, nvmlDeviceGetCount and nvmlDeviceGetHandleByIndex are
 * required. A missing entry point makes its metric missing (and recorded once in nvml_status with
 * NVML_ERROR_FUNCTION_NOT_FOUND), never the source. Then nvmlInit, the device handles, the MIG instances of
 * MIG-enabled GPUs, and the selection (gpu_select.h). Init fails, leaving the source absent, when no library
 * loads (-ENOENT), a required entry point is missing (-ENOSYS), nvmlInit fails (-ENODEV: no driver), no GPU
 * is found or selected (-ENODEV), or `--gpus none` (-ECANCELED); init returns the reason in words.
 *
 * Version facts this code relies on (from NVML's headers and the fakes that prove them, tests/fakes):
 * nvmlDeviceGetPciInfo and _v2 write the 52-byte legacy struct, only _v3 fills busId[32]; the unversioned
 * process lists write 16-byte entries, _v2/_v3 24-byte ones with the MIG instance ids; MemoryInfo v1 counts
 * reserved memory as used, v2 reports it apart; nvmlDeviceGetProcessUtilization returns NOT_FOUND when no
 * sample is newer than lastSeenTimeStamp, which means no samples, not a failure.
 *
 * PIDs are stored as NVML gives them. The driver knows no PID namespaces: they are PIDs of the initial
 * namespace. Whether jobscope's procfs is in that namespace is recorded in the inventory (pid_namespace), so
 * the model joins them with the scope's processes only where that is right.
 */
#include "sources/nvml.h"

#include "sources/gpu_select.h"
#include "sources/nvml_abi.h"
#include "sys/dlib.h"
#include "core/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- tables ---- */

/* clang-format off */
#define G(n, u, h) {n, u, JS_INT, JS_GAUGE, 0, h}
#define C(n, u, w, h) {n, u, JS_INT, JS_COUNTER, w, h}
/* clang-format on */

static const js_column_t dev_cols[NVD__MAX] = {
    [NVD_INDEX] = {"gpu", "id", JS_INT, JS_LABEL, 0, "NVML device index (PCI bus order)"},
    [NVD_LOST] =
        G("lost", "bool", "1 once the GPU returned GPU_IS_LOST (fell off the bus): nothing else is read"),
    [NVD_GPU_UTIL] = G("gpu_util_pct", "percent",
                       "nvmlDeviceGetUtilizationRates gpu: share of the driver's last "
                       "sample period in which a kernel ran"),
    [NVD_MEM_UTIL] = G("mem_util_pct", "percent",
                       "nvmlDeviceGetUtilizationRates memory: share of it device memory "
                       "was read or written"),
    [NVD_MEM_TOTAL] = G("mem_total_bytes", "bytes", "nvmlDeviceGetMemoryInfo(_v2) total"),
    [NVD_MEM_USED] =
        G("mem_used_bytes", "bytes", "nvmlDeviceGetMemoryInfo(_v2) used (v1: reserved included)"),
    [NVD_MEM_FREE] = G("mem_free_bytes", "bytes", "nvmlDeviceGetMemoryInfo(_v2) free"),
    [NVD_MEM_RESERVED] =
        G("mem_reserved_bytes", "bytes", "nvmlDeviceGetMemoryInfo_v2 reserved (driver, firmware)"),
    [NVD_MEM_USED_INCL_RESERVED] =
        G("mem_used_includes_reserved", "bool",
          "1 when mem_used_bytes came from the v1 call, which counts reserved memory"),
    [NVD_BAR1_USED] = G("bar1_used_bytes", "bytes", "nvmlDeviceGetBAR1MemoryInfo used"),
    [NVD_BAR1_TOTAL] = G("bar1_total_bytes", "bytes", "nvmlDeviceGetBAR1MemoryInfo total"),
    [NVD_POWER] = G("power_mw", "mW", "nvmlDeviceGetPowerUsage: board power draw"),
    [NVD_POWER_LIMIT] = G("power_limit_mw", "mW", "nvmlDeviceGetEnforcedPowerLimit (status cadence)"),
    [NVD_ENERGY] = C("energy_mj", "mJ", 64,
                     "nvmlDeviceGetTotalEnergyConsumption: since the driver was loaded "
                     "(restarts at a reload)"),
    [NVD_TEMP] = G("temp_c", "degC", "nvmlDeviceGetTemperatureV / nvmlDeviceGetTemperature, GPU die"),
    [NVD_FAN] =
        G("fan_pct", "percent", "nvmlDeviceGetFanSpeed: percent of the fan's maximum (may exceed 100)"),
    [NVD_CLK_GRAPHICS] = G("clock_graphics_mhz", "MHz", "nvmlDeviceGetClockInfo graphics"),
    [NVD_CLK_SM] = G("clock_sm_mhz", "MHz", "nvmlDeviceGetClockInfo SM"),
    [NVD_CLK_MEM] = G("clock_mem_mhz", "MHz", "nvmlDeviceGetClockInfo memory"),
    [NVD_CLK_VIDEO] = G("clock_video_mhz", "MHz", "nvmlDeviceGetClockInfo video"),
    [NVD_PSTATE] = G("pstate", "id", "nvmlDeviceGetPerformanceState: 0 (fastest) to 15, 32 unknown"),
    [NVD_REASONS] = G("clocks_event_reasons", "bits",
                      "nvmlDeviceGetCurrentClocksEventReasons (or ...Throttle...): "
                      "why clocks are below their maximum"),
    [NVD_VIOL_POWER] = C("violation_power_ns", "ns", 64,
                         "nvmlDeviceGetViolationStatus POWER: time held below "
                         "requested clocks by the power limit"),
    [NVD_VIOL_THERMAL] = C("violation_thermal_ns", "ns", 64, "nvmlDeviceGetViolationStatus THERMAL"),
    [NVD_PCIE_TX] = G("pcie_tx_kbs", "KB/s", "nvmlDeviceGetPcieThroughput TX over 20 ms (status cadence)"),
    [NVD_PCIE_RX] = G("pcie_rx_kbs", "KB/s", "nvmlDeviceGetPcieThroughput RX over 20 ms (status cadence)"),
    [NVD_PCIE_REPLAY] =
        C("pcie_replay_count", "count", 32, "nvmlDeviceGetPcieReplayCounter (status cadence)"),
    [NVD_ECC_CORR] = C("ecc_corrected_count", "count", 64,
                       "nvmlDeviceGetTotalEccErrors corrected, volatile "
                       "(restarts at a reload; status cadence)"),
    [NVD_ECC_UNCORR] = C("ecc_uncorrected_count", "count", 64,
                         "nvmlDeviceGetTotalEccErrors uncorrected, volatile "
                         "(status cadence)"),
    [NVD_ENC] = G("encoder_pct", "percent", "nvmlDeviceGetEncoderUtilization"),
    [NVD_DEC] = G("decoder_pct", "percent", "nvmlDeviceGetDecoderUtilization"),
    [NVD_MIG_MODE] = G("mig_mode", "bool", "nvmlDeviceGetMigMode current: 1 MIG enabled"),
    [NVD_PUTIL_SAMPLES] = G("putil_samples", "count",
                            "process-utilisation samples newer than the last seen (0: "
                            "none); missing when the call failed"),
    [NVD_PROCS] = G("processes", "count",
                    "entries of the compute and graphics process lists; missing when a list "
                    "could not be read (then the GPU's processes are unknown, not none)"),
};
const js_table_t table_nvml_device = {
    "nvml_device", "NVIDIA GPUs (NVML), one row per selected GPU and sample", NVD__MAX, dev_cols};

static const js_column_t proc_cols[NVP__MAX] = {
    [NVP_INDEX] = {"gpu", "id", JS_INT, JS_LABEL, 0, "NVML device index"},
    [NVP_PID] = {"pid", "id", JS_INT, JS_LABEL, 0, "process ID as NVML reports it (initial PID namespace)"},
    [NVP_TYPE] = {"type", "text", JS_TEXT, JS_LABEL, 0, "compute or graphics (the list it came from)"},
    [NVP_USED] =
        G("used_bytes", "bytes", "usedGpuMemory; missing when NVML cannot tell (NVML_VALUE_NOT_AVAILABLE)"),
    [NVP_GI] = G("gpu_instance", "id", "MIG GPU instance id; missing without MIG"),
    [NVP_CI] = G("compute_instance", "id", "MIG compute instance id; missing without MIG"),
};
const js_table_t table_nvml_process = {
    "nvml_process", "processes on NVIDIA GPUs, one row per GPU, list and process", NVP__MAX, proc_cols};

static const js_column_t putil_cols[NVU__MAX] = {
    [NVU_INDEX] = {"gpu", "id", JS_INT, JS_LABEL, 0, "NVML device index"},
    [NVU_PID] = {"pid", "id", JS_INT, JS_LABEL, 0, "process ID (initial PID namespace)"},
    [NVU_TS] = G("timestamp_us", "us", "CPU time (CLOCK_REALTIME) of the driver's sample, microseconds"),
    [NVU_SM] =
        G("sm_pct", "percent", "SM (kernel) utilisation of this process over the driver's sample period"),
    [NVU_MEM] = G("mem_pct", "percent", "memory-controller utilisation of this process"),
    [NVU_ENC] = G("enc_pct", "percent", "encoder utilisation of this process"),
    [NVU_DEC] = G("dec_pct", "percent", "decoder utilisation of this process"),
};
const js_table_t table_nvml_putil = {"nvml_putil",
                                     "per-process utilisation samples of NVIDIA GPUs "
                                     "(nvmlDeviceGetProcessUtilization), newer than the last seen",
                                     NVU__MAX, putil_cols};

static const js_column_t mig_cols[NVM__MAX] = {
    [NVM_INDEX] = {"gpu", "id", JS_INT, JS_LABEL, 0, "NVML device index of the GPU"},
    [NVM_MIG] = {"mig_index", "id", JS_INT, JS_LABEL, 0, "MIG device index on that GPU"},
    [NVM_GI] = G("gpu_instance", "id", "GPU instance id"),
    [NVM_CI] = G("compute_instance", "id", "compute instance id"),
    [NVM_MEM_TOTAL] = G("mem_total_bytes", "bytes", "memory of the instance"),
    [NVM_MEM_USED] = G("mem_used_bytes", "bytes", "memory in use in the instance"),
};
const js_table_t table_nvml_mig = {
    "nvml_mig", "MIG instances of NVIDIA GPUs, one row per instance and sample", NVM__MAX, mig_cols};

static const js_column_t status_cols[NVS__MAX] = {
    [NVS_INDEX] = {"gpu", "id", JS_INT, JS_LABEL, 0, "NVML device index (-1: the library)"},
    [NVS_METRIC] = {"metric", "text", JS_TEXT, JS_LABEL, 0,
                    "what could not be read: utilization, memory, ..."},
    [NVS_RC] = G("rc", "nvmlReturn",
                 "the NVML return code (3 NOT_SUPPORTED, 4 NO_PERMISSION, 13 "
                 "FUNCTION_NOT_FOUND, 15 GPU_IS_LOST, ...)"),
    [NVS_ERROR] = {"error", "text", JS_TEXT, JS_GAUGE, 0, "nvmlErrorString of it"},
};
const js_table_t table_nvml_status = {"nvml_status",
                                      "why an NVML metric is missing: a row the first time a GPU "
                                      "and metric fail with a given code",
                                      NVS__MAX, status_cols};

static const js_table_t *const nvml_tables[] = {&table_nvml_device, &table_nvml_process, &table_nvml_putil,
                                                &table_nvml_mig,    &table_nvml_status,  NULL};
enum { T_DEV, T_PROC, T_PUTIL, T_MIG, T_STATUS };

/* ---- entry points ---- */

typedef struct {
    nvmlInit_fn *Init;
    nvmlShutdown_fn *Shutdown;
    nvmlErrorString_fn *ErrorString;
    nvmlSystemGetDriverVersion_fn *SystemGetDriverVersion;
    nvmlSystemGetNVMLVersion_fn *SystemGetNVMLVersion;
    nvmlSystemGetCudaDriverVersion_fn *SystemGetCudaDriverVersion;
    nvmlDeviceGetCount_fn *DeviceGetCount;
    nvmlDeviceGetHandleByIndex_fn *DeviceGetHandleByIndex;
    nvmlDeviceGetName_fn *DeviceGetName;
    nvmlDeviceGetUUID_fn *DeviceGetUUID;
    nvmlDeviceGetPciInfo_v3_fn *DeviceGetPciInfo_v3;
    nvmlDeviceGetPciInfo_v1_fn *DeviceGetPciInfo_v1;
    nvmlDeviceGetMemoryInfo_v2_fn *DeviceGetMemoryInfo_v2;
    nvmlDeviceGetMemoryInfo_fn *DeviceGetMemoryInfo;
    nvmlDeviceGetBAR1MemoryInfo_fn *DeviceGetBAR1MemoryInfo;
    nvmlDeviceGetUtilizationRates_fn *DeviceGetUtilizationRates;
    nvmlDeviceGetPowerUsage_fn *DeviceGetPowerUsage;
    nvmlDeviceGetEnforcedPowerLimit_fn *DeviceGetEnforcedPowerLimit;
    nvmlDeviceGetPowerManagementLimit_fn *DeviceGetPowerManagementLimit;
    nvmlDeviceGetTotalEnergyConsumption_fn *DeviceGetTotalEnergyConsumption;
    nvmlDeviceGetTemperatureV_fn *DeviceGetTemperatureV;
    nvmlDeviceGetTemperature_fn *DeviceGetTemperature;
    nvmlDeviceGetFanSpeed_fn *DeviceGetFanSpeed;
    nvmlDeviceGetClockInfo_fn *DeviceGetClockInfo;
    nvmlDeviceGetPerformanceState_fn *DeviceGetPerformanceState;
    nvmlDeviceGetCurrentClocksEventReasons_fn *DeviceGetCurrentClocksEventReasons;
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
    nvmlDeviceGetGpuInstanceId_fn *DeviceGetGpuInstanceId;
    nvmlDeviceGetComputeInstanceId_fn *DeviceGetComputeInstanceId;
    nvmlDeviceGetRunningProcesses_v3_fn *DeviceGetComputeRunningProcesses_v3;
    nvmlDeviceGetRunningProcesses_v1_fn *DeviceGetComputeRunningProcesses_v1;
    nvmlDeviceGetRunningProcesses_v3_fn *DeviceGetGraphicsRunningProcesses_v3;
    nvmlDeviceGetRunningProcesses_v1_fn *DeviceGetGraphicsRunningProcesses_v1;
    nvmlDeviceGetProcessUtilization_fn *DeviceGetProcessUtilization;
} nvml_api_t;

#define SYM(field, req, ...)                                                                                 \
    {                                                                                                        \
        {__VA_ARGS__}, offsetof(nvml_api_t, field), req                                                      \
    }
static const js_dlsym_t nvml_syms[] = {
    SYM(Init, true, "nvmlInit_v2", "nvmlInit"),
    SYM(Shutdown, false, "nvmlShutdown"),
    SYM(ErrorString, false, "nvmlErrorString"),
    SYM(SystemGetDriverVersion, false, "nvmlSystemGetDriverVersion"),
    SYM(SystemGetNVMLVersion, false, "nvmlSystemGetNVMLVersion"),
    SYM(SystemGetCudaDriverVersion, false, "nvmlSystemGetCudaDriverVersion_v2",
        "nvmlSystemGetCudaDriverVersion"),
    SYM(DeviceGetCount, true, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"),
    SYM(DeviceGetHandleByIndex, true, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"),
    SYM(DeviceGetName, false, "nvmlDeviceGetName"),
    SYM(DeviceGetUUID, false, "nvmlDeviceGetUUID"),
    SYM(DeviceGetPciInfo_v3, false, "nvmlDeviceGetPciInfo_v3"),
    SYM(DeviceGetPciInfo_v1, false, "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo"),
    SYM(DeviceGetMemoryInfo_v2, false, "nvmlDeviceGetMemoryInfo_v2"),
    SYM(DeviceGetMemoryInfo, false, "nvmlDeviceGetMemoryInfo"),
    SYM(DeviceGetBAR1MemoryInfo, false, "nvmlDeviceGetBAR1MemoryInfo"),
    SYM(DeviceGetUtilizationRates, false, "nvmlDeviceGetUtilizationRates"),
    SYM(DeviceGetPowerUsage, false, "nvmlDeviceGetPowerUsage"),
    SYM(DeviceGetEnforcedPowerLimit, false, "nvmlDeviceGetEnforcedPowerLimit"),
    SYM(DeviceGetPowerManagementLimit, false, "nvmlDeviceGetPowerManagementLimit"),
    SYM(DeviceGetTotalEnergyConsumption, false, "nvmlDeviceGetTotalEnergyConsumption"),
    SYM(DeviceGetTemperatureV, false, "nvmlDeviceGetTemperatureV"),
    SYM(DeviceGetTemperature, false, "nvmlDeviceGetTemperature"),
    SYM(DeviceGetFanSpeed, false, "nvmlDeviceGetFanSpeed"),
    SYM(DeviceGetClockInfo, false, "nvmlDeviceGetClockInfo"),
    SYM(DeviceGetPerformanceState, false, "nvmlDeviceGetPerformanceState"),
    SYM(DeviceGetCurrentClocksEventReasons, false, "nvmlDeviceGetCurrentClocksEventReasons",
        "nvmlDeviceGetCurrentClocksThrottleReasons"),
    SYM(DeviceGetViolationStatus, false, "nvmlDeviceGetViolationStatus"),
    SYM(DeviceGetPcieThroughput, false, "nvmlDeviceGetPcieThroughput"),
    SYM(DeviceGetPcieReplayCounter, false, "nvmlDeviceGetPcieReplayCounter"),
    SYM(DeviceGetTotalEccErrors, false, "nvmlDeviceGetTotalEccErrors"),
    SYM(DeviceGetEncoderUtilization, false, "nvmlDeviceGetEncoderUtilization"),
    SYM(DeviceGetDecoderUtilization, false, "nvmlDeviceGetDecoderUtilization"),
    SYM(DeviceGetComputeMode, false, "nvmlDeviceGetComputeMode"),
    SYM(DeviceGetMigMode, false, "nvmlDeviceGetMigMode"),
    SYM(DeviceGetMaxMigDeviceCount, false, "nvmlDeviceGetMaxMigDeviceCount"),
    SYM(DeviceGetMigDeviceHandleByIndex, false, "nvmlDeviceGetMigDeviceHandleByIndex"),
    SYM(DeviceGetGpuInstanceId, false, "nvmlDeviceGetGpuInstanceId"),
    SYM(DeviceGetComputeInstanceId, false, "nvmlDeviceGetComputeInstanceId"),
    SYM(DeviceGetComputeRunningProcesses_v3, false, "nvmlDeviceGetComputeRunningProcesses_v3",
        "nvmlDeviceGetComputeRunningProcesses_v2"),
    SYM(DeviceGetComputeRunningProcesses_v1, false, "nvmlDeviceGetComputeRunningProcesses"),
    SYM(DeviceGetGraphicsRunningProcesses_v3, false, "nvmlDeviceGetGraphicsRunningProcesses_v3",
        "nvmlDeviceGetGraphicsRunningProcesses_v2"),
    SYM(DeviceGetGraphicsRunningProcesses_v1, false, "nvmlDeviceGetGraphicsRunningProcesses"),
    SYM(DeviceGetProcessUtilization, false, "nvmlDeviceGetProcessUtilization"),
};
#define NSYMS (sizeof(nvml_syms) / sizeof(nvml_syms[0]))

/* ---- metrics (the keys of nvml_status) ---- */

enum {
    NM_DEVICE,
    NM_UTILIZATION,
    NM_MEMORY,
    NM_BAR1,
    NM_POWER,
    NM_POWER_LIMIT,
    NM_ENERGY,
    NM_TEMPERATURE,
    NM_FAN,
    NM_CLOCK_GRAPHICS,
    NM_CLOCK_SM,
    NM_CLOCK_MEM,
    NM_CLOCK_VIDEO,
    NM_PSTATE,
    NM_CLOCK_REASONS,
    NM_VIOLATION_POWER,
    NM_VIOLATION_THERMAL,
    NM_PCIE_TX,
    NM_PCIE_RX,
    NM_PCIE_REPLAY,
    NM_ECC_CORRECTED,
    NM_ECC_UNCORRECTED,
    NM_ENCODER,
    NM_DECODER,
    NM_MIG_MODE,
    NM_COMPUTE_PROCESSES,
    NM_GRAPHICS_PROCESSES,
    NM_PROCESS_UTILIZATION,
    NM_MIG_MEMORY,
    NM__MAX
};

static const char *const metric_names[NM__MAX] = {
    [NM_DEVICE] = "device",
    [NM_UTILIZATION] = "utilization",
    [NM_MEMORY] = "memory",
    [NM_BAR1] = "bar1",
    [NM_POWER] = "power",
    [NM_POWER_LIMIT] = "power_limit",
    [NM_ENERGY] = "energy",
    [NM_TEMPERATURE] = "temperature",
    [NM_FAN] = "fan",
    [NM_CLOCK_GRAPHICS] = "clock_graphics",
    [NM_CLOCK_SM] = "clock_sm",
    [NM_CLOCK_MEM] = "clock_mem",
    [NM_CLOCK_VIDEO] = "clock_video",
    [NM_PSTATE] = "pstate",
    [NM_CLOCK_REASONS] = "clocks_event_reasons",
    [NM_VIOLATION_POWER] = "violation_power",
    [NM_VIOLATION_THERMAL] = "violation_thermal",
    [NM_PCIE_TX] = "pcie_tx",
    [NM_PCIE_RX] = "pcie_rx",
    [NM_PCIE_REPLAY] = "pcie_replay",
    [NM_ECC_CORRECTED] = "ecc_corrected",
    [NM_ECC_UNCORRECTED] = "ecc_uncorrected",
    [NM_ENCODER] = "encoder",
    [NM_DECODER] = "decoder",
    [NM_MIG_MODE] = "mig_mode",
    [NM_COMPUTE_PROCESSES] = "compute_processes",
    [NM_GRAPHICS_PROCESSES] = "graphics_processes",
    [NM_PROCESS_UTILIZATION] = "process_utilization",
    [NM_MIG_MEMORY] = "mig_memory",
};

/* ---- state ---- */

#define MIG_MAX 8

typedef struct {
    nvmlDevice_t h;
    unsigned idx; /* MIG device index */
    unsigned gi, ci;
    bool have_ids;
    unsigned long long mem_total;
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
} nvmig_t;

typedef struct {
    unsigned index;
    nvmlDevice_t h;
    nvmlReturn_t handle_rc; /* why there is no handle */
    bool selected;
    bool lost;
    bool skip[NM__MAX];              /* NOT_SUPPORTED or no entry point: not asked again */
    uint32_t seen[NM__MAX];          /* return codes already recorded (bit 31: any code >= 31) */
    unsigned long long last_seen_us; /* newest process-utilisation sample seen */
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    int mig_mode; /* -1 unknown */
    nvmig_t mig[MIG_MAX];
    size_t nmig;
    const char *mig_uuids[MIG_MAX];
} nvdev_t;

typedef struct {
    js_dlib_t lib;
    nvml_api_t api;
    bool initialised;
    nvdev_t *d;
    size_t n;
    gpu_sel_t sel;
    char unmatched[256];
    size_t nselected;
    const char *pidns;
    /* reusable buffers */
    nvmlProcessInfo_t *p3;
    nvmlProcessInfo_v1_t *p1;
    unsigned pcap;
    nvmlProcessUtilizationSample_t *u;
    unsigned ucap;
} nvml_t;

/* ---- helpers ---- */

static const char *err_text(const nvml_t *st, nvmlReturn_t rc)
{
    const char *s = st->api.ErrorString ? st->api.ErrorString(rc) : NULL;
    if (s && *s)
        return s;
    switch (rc) {
    case NVML_ERROR_NOT_SUPPORTED:
        return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
        return "Insufficient Permissions";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
        return "Function Not Found";
    case NVML_ERROR_GPU_IS_LOST:
        return "GPU is lost";
    default:
        return "Unknown Error";
    }
}

/* status: record `rc` for (device d, metric m) once per code; NOT_SUPPORTED and FUNCTION_NOT_FOUND make the
 * metric skipped from now on, GPU_IS_LOST the device lost. */
static void status(nvml_t *st, nvdev_t *d, int m, nvmlReturn_t rc, js_rows_t *out)
{
    if (rc == NVML_ERROR_GPU_IS_LOST) {
        d->lost = true;
        m = NM_DEVICE;
    }
    if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_FUNCTION_NOT_FOUND)
        d->skip[m] = true;
    gpu_status_once(out, &d->seen[m], d->index, metric_names[m], (int64_t)rc, err_text(st, rc));
}
_Static_assert(NVS_INDEX == 0 && NVS_METRIC == 1 && NVS_RC == 2 && NVS_ERROR == 3,
               "gpu_status_once's columns");

/* want: metric m is to be asked on d (its entry point is `bound`; a missing one is recorded once). */
static bool want(nvml_t *st, nvdev_t *d, int m, bool bound, js_rows_t *out)
{
    if (d->lost || d->skip[m])
        return false;
    if (!bound) {
        status(st, d, m, NVML_ERROR_FUNCTION_NOT_FOUND, out);
        return false;
    }
    return true;
}

/* got: rc is success; otherwise it is recorded */
static bool got(nvml_t *st, nvdev_t *d, int m, nvmlReturn_t rc, js_rows_t *out)
{
    if (rc == NVML_SUCCESS)
        return true;
    status(st, d, m, rc, out);
    return false;
}

/* ---- init ---- */

static void nvml_fini(void *state)
{
    nvml_t *st = state;
    if (!st)
        return;
    if (st->initialised && st->api.Shutdown)
        st->api.Shutdown();
    dlib_close(&st->lib);
    free(st->d);
    free(st->p3);
    free(st->p1);
    free(st->u);
    free(st);
}

static void mig_discover(nvml_t *st, nvdev_t *d)
{
    const nvml_api_t *a = &st->api;
    unsigned cur = 0, pending = 0;
    d->mig_mode = -1;
    if (!a->DeviceGetMigMode || a->DeviceGetMigMode(d->h, &cur, &pending) != NVML_SUCCESS)
        return;
    d->mig_mode = (int)cur;
    unsigned max = 0;
    if (cur != NVML_DEVICE_MIG_ENABLE || !a->DeviceGetMaxMigDeviceCount ||
        !a->DeviceGetMigDeviceHandleByIndex || a->DeviceGetMaxMigDeviceCount(d->h, &max) != NVML_SUCCESS)
        return;
    for (unsigned i = 0; i < max && d->nmig < MIG_MAX; i++) {
        nvmig_t *m = &d->mig[d->nmig];
        memset(m, 0, sizeof(*m));
        if (a->DeviceGetMigDeviceHandleByIndex(d->h, i, &m->h) != NVML_SUCCESS)
            continue; /* NOT_FOUND: a free slot */
        m->idx = i;
        if (a->DeviceGetName)
            a->DeviceGetName(m->h, m->name, sizeof(m->name));
        if (a->DeviceGetUUID)
            a->DeviceGetUUID(m->h, m->uuid, sizeof(m->uuid));
        m->have_ids = a->DeviceGetGpuInstanceId && a->DeviceGetComputeInstanceId &&
                      a->DeviceGetGpuInstanceId(m->h, &m->gi) == NVML_SUCCESS &&
                      a->DeviceGetComputeInstanceId(m->h, &m->ci) == NVML_SUCCESS;
        if (a->DeviceGetMemoryInfo_v2) {
            nvmlMemory_v2_t mem = {.version = nvmlMemory_v2};
            if (a->DeviceGetMemoryInfo_v2(m->h, &mem) == NVML_SUCCESS)
                m->mem_total = mem.total;
        } else if (a->DeviceGetMemoryInfo) {
            nvmlMemory_t mem;
            if (a->DeviceGetMemoryInfo(m->h, &mem) == NVML_SUCCESS)
                m->mem_total = mem.total;
        }
        d->mig_uuids[d->nmig] = m->uuid;
        d->nmig++;
    }
}

static int nvml_init(const js_ctx_t *ctx, void **ret_state, char *why, size_t whylen)
{
    static const char *const sonames[] = {"libnvidia-ml.so.1", "libnvidia-ml.so", NULL};
    static const char *const vars[] = {"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", NULL};
    int r;
    nvml_t *st = calloc(1, sizeof(*st));
    if (!st)
        return -ENOMEM;
    if ((r = gpu_select_source(ctx, vars, &st->sel, why, whylen)) < 0 ||
        (r = gpu_load(&st->lib, "JOBSCOPE_NVML_LIBRARY", sonames, nvml_syms, NSYMS, &st->api, "NVML", why,
                      whylen)) < 0)
        goto fail;
    nvmlReturn_t rc = st->api.Init();
    if (rc != NVML_SUCCESS) {
        why_set(why, whylen, "nvmlInit: %s", err_text(st, rc));
        r = -ENODEV;
        goto fail;
    }
    st->initialised = true;
    unsigned count = 0;
    if ((rc = st->api.DeviceGetCount(&count)) != NVML_SUCCESS || count == 0) {
        why_set(why, whylen, rc != NVML_SUCCESS ? "nvmlDeviceGetCount: %s" : "no NVIDIA GPU%s",
                rc != NVML_SUCCESS ? err_text(st, rc) : "");
        r = -ENODEV;
        goto fail;
    }
    if (count > 256)
        count = 256;
    if (!(st->d = calloc(count, sizeof(*st->d)))) {
        r = -ENOMEM;
        goto fail;
    }
    st->n = count;
    gpu_dev_id_t ids[256];
    for (unsigned i = 0; i < count; i++) {
        nvdev_t *d = &st->d[i];
        d->index = i;
        d->mig_mode = -1;
        d->handle_rc = st->api.DeviceGetHandleByIndex(i, &d->h);
        if (d->handle_rc == NVML_SUCCESS) {
            if (st->api.DeviceGetName)
                st->api.DeviceGetName(d->h, d->name, sizeof(d->name));
            if (st->api.DeviceGetUUID)
                st->api.DeviceGetUUID(d->h, d->uuid, sizeof(d->uuid));
            mig_discover(st, d);
        } else {
            d->h = NULL;
        }
        ids[i] = (gpu_dev_id_t){.index = i, .uuid = d->uuid, .sub = d->mig_uuids, .nsub = d->nmig};
    }
    bool sel[256];
    gpu_select_apply(&st->sel, ids, count, sel, st->unmatched, sizeof(st->unmatched));
    for (unsigned i = 0; i < count; i++) {
        st->d[i].selected = sel[i] && st->d[i].h;
        st->nselected += st->d[i].selected;
    }
    if (!st->nselected) {
        char what[300];
        gpu_select_describe(&st->sel, what, sizeof(what));
        why_set(why, whylen, "no usable NVIDIA GPU selected by %s (%u found)", what, count);
        r = -ENODEV;
        goto fail;
    }
    st->pidns = gpu_pid_namespace(&ctx->root);
    int64_t now = now_ns(CLOCK_REALTIME) / 1000;
    for (size_t i = 0; i < st->n; i++)
        st->d[i].last_seen_us = (unsigned long long)now;
    *ret_state = st;
    return 0;
fail:
    nvml_fini(st);
    return r;
}

/* ---- collect ---- */

static void set_u(js_value_t *v, unsigned long long x)
{
    val_int(v, (int64_t)x);
}

/* read_device: the nvml_device row of one GPU (not lost at entry). `full`: the cadence's values too. */
static void read_device(nvml_t *st, nvdev_t *d, js_value_t *v, bool full, js_rows_t *so)
{
    const nvml_api_t *a = &st->api;
    if (want(st, d, NM_UTILIZATION, a->DeviceGetUtilizationRates != NULL, so)) {
        nvmlUtilization_t u;
        if (got(st, d, NM_UTILIZATION, a->DeviceGetUtilizationRates(d->h, &u), so)) {
            set_u(&v[NVD_GPU_UTIL], u.gpu);
            set_u(&v[NVD_MEM_UTIL], u.memory);
        }
    }
    if (!d->lost && !d->skip[NM_MEMORY]) {
        if (a->DeviceGetMemoryInfo_v2) {
            nvmlMemory_v2_t m = {.version = nvmlMemory_v2};
            if (got(st, d, NM_MEMORY, a->DeviceGetMemoryInfo_v2(d->h, &m), so)) {
                set_u(&v[NVD_MEM_TOTAL], m.total);
                set_u(&v[NVD_MEM_USED], m.used);
                set_u(&v[NVD_MEM_FREE], m.free);
                set_u(&v[NVD_MEM_RESERVED], m.reserved);
                val_int(&v[NVD_MEM_USED_INCL_RESERVED], 0);
            }
        } else if (want(st, d, NM_MEMORY, a->DeviceGetMemoryInfo != NULL, so)) {
            nvmlMemory_t m;
            if (got(st, d, NM_MEMORY, a->DeviceGetMemoryInfo(d->h, &m), so)) {
                set_u(&v[NVD_MEM_TOTAL], m.total);
                set_u(&v[NVD_MEM_USED], m.used);
                set_u(&v[NVD_MEM_FREE], m.free);
                val_int(&v[NVD_MEM_USED_INCL_RESERVED], 1);
            }
        }
    }
    if (want(st, d, NM_BAR1, a->DeviceGetBAR1MemoryInfo != NULL, so)) {
        nvmlBAR1Memory_t b;
        if (got(st, d, NM_BAR1, a->DeviceGetBAR1MemoryInfo(d->h, &b), so)) {
            set_u(&v[NVD_BAR1_USED], b.bar1Used);
            set_u(&v[NVD_BAR1_TOTAL], b.bar1Total);
        }
    }
    unsigned x;
    if (want(st, d, NM_POWER, a->DeviceGetPowerUsage != NULL, so) &&
        got(st, d, NM_POWER, a->DeviceGetPowerUsage(d->h, &x), so))
        set_u(&v[NVD_POWER], x);
    if (full && want(st, d, NM_POWER_LIMIT, a->DeviceGetEnforcedPowerLimit != NULL, so) &&
        got(st, d, NM_POWER_LIMIT, a->DeviceGetEnforcedPowerLimit(d->h, &x), so))
        set_u(&v[NVD_POWER_LIMIT], x);
    unsigned long long e;
    if (want(st, d, NM_ENERGY, a->DeviceGetTotalEnergyConsumption != NULL, so) &&
        got(st, d, NM_ENERGY, a->DeviceGetTotalEnergyConsumption(d->h, &e), so))
        set_u(&v[NVD_ENERGY], e);
    if (!d->lost && !d->skip[NM_TEMPERATURE]) {
        if (a->DeviceGetTemperatureV) {
            nvmlTemperature_t t = {.version = nvmlTemperature_v1, .sensorType = NVML_TEMPERATURE_GPU};
            if (got(st, d, NM_TEMPERATURE, a->DeviceGetTemperatureV(d->h, &t), so))
                val_int(&v[NVD_TEMP], t.temperature);
        } else if (want(st, d, NM_TEMPERATURE, a->DeviceGetTemperature != NULL, so) &&
                   got(st, d, NM_TEMPERATURE, a->DeviceGetTemperature(d->h, NVML_TEMPERATURE_GPU, &x), so)) {
            set_u(&v[NVD_TEMP], x);
        }
    }
    if (want(st, d, NM_FAN, a->DeviceGetFanSpeed != NULL, so) &&
        got(st, d, NM_FAN, a->DeviceGetFanSpeed(d->h, &x), so))
        set_u(&v[NVD_FAN], x);
    static const struct {
        int metric, col;
        nvmlClockType_t type;
    } clocks[] = {{NM_CLOCK_GRAPHICS, NVD_CLK_GRAPHICS, NVML_CLOCK_GRAPHICS},
                  {NM_CLOCK_SM, NVD_CLK_SM, NVML_CLOCK_SM},
                  {NM_CLOCK_MEM, NVD_CLK_MEM, NVML_CLOCK_MEM},
                  {NM_CLOCK_VIDEO, NVD_CLK_VIDEO, NVML_CLOCK_VIDEO}};
    for (size_t k = 0; k < sizeof(clocks) / sizeof(clocks[0]); k++)
        if (want(st, d, clocks[k].metric, a->DeviceGetClockInfo != NULL, so) &&
            got(st, d, clocks[k].metric, a->DeviceGetClockInfo(d->h, clocks[k].type, &x), so))
            set_u(&v[clocks[k].col], x);
    nvmlPstates_t ps;
    if (want(st, d, NM_PSTATE, a->DeviceGetPerformanceState != NULL, so) &&
        got(st, d, NM_PSTATE, a->DeviceGetPerformanceState(d->h, &ps), so))
        val_int(&v[NVD_PSTATE], (int64_t)ps);
    if (want(st, d, NM_CLOCK_REASONS, a->DeviceGetCurrentClocksEventReasons != NULL, so) &&
        got(st, d, NM_CLOCK_REASONS, a->DeviceGetCurrentClocksEventReasons(d->h, &e), so))
        set_u(&v[NVD_REASONS], e);
    static const struct {
        int metric, col;
        nvmlPerfPolicyType_t policy;
    } viol[] = {{NM_VIOLATION_POWER, NVD_VIOL_POWER, NVML_PERF_POLICY_POWER},
                {NM_VIOLATION_THERMAL, NVD_VIOL_THERMAL, NVML_PERF_POLICY_THERMAL}};
    for (size_t k = 0; k < 2; k++) {
        nvmlViolationTime_t vt;
        if (want(st, d, viol[k].metric, a->DeviceGetViolationStatus != NULL, so) &&
            got(st, d, viol[k].metric, a->DeviceGetViolationStatus(d->h, viol[k].policy, &vt), so))
            set_u(&v[viol[k].col], vt.violationTime);
    }
    if (full) {
        if (want(st, d, NM_PCIE_TX, a->DeviceGetPcieThroughput != NULL, so) &&
            got(st, d, NM_PCIE_TX, a->DeviceGetPcieThroughput(d->h, NVML_PCIE_UTIL_TX_BYTES, &x), so))
            set_u(&v[NVD_PCIE_TX], x);
        if (want(st, d, NM_PCIE_RX, a->DeviceGetPcieThroughput != NULL, so) &&
            got(st, d, NM_PCIE_RX, a->DeviceGetPcieThroughput(d->h, NVML_PCIE_UTIL_RX_BYTES, &x), so))
            set_u(&v[NVD_PCIE_RX], x);
        if (want(st, d, NM_PCIE_REPLAY, a->DeviceGetPcieReplayCounter != NULL, so) &&
            got(st, d, NM_PCIE_REPLAY, a->DeviceGetPcieReplayCounter(d->h, &x), so))
            set_u(&v[NVD_PCIE_REPLAY], x);
        if (want(st, d, NM_ECC_CORRECTED, a->DeviceGetTotalEccErrors != NULL, so) &&
            got(st, d, NM_ECC_CORRECTED,
                a->DeviceGetTotalEccErrors(d->h, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, &e),
                so))
            set_u(&v[NVD_ECC_CORR], e);
        if (want(st, d, NM_ECC_UNCORRECTED, a->DeviceGetTotalEccErrors != NULL, so) &&
            got(st, d, NM_ECC_UNCORRECTED,
                a->DeviceGetTotalEccErrors(d->h, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &e),
                so))
            set_u(&v[NVD_ECC_UNCORR], e);
    }
    unsigned period;
    if (want(st, d, NM_ENCODER, a->DeviceGetEncoderUtilization != NULL, so) &&
        got(st, d, NM_ENCODER, a->DeviceGetEncoderUtilization(d->h, &x, &period), so))
        set_u(&v[NVD_ENC], x);
    if (want(st, d, NM_DECODER, a->DeviceGetDecoderUtilization != NULL, so) &&
        got(st, d, NM_DECODER, a->DeviceGetDecoderUtilization(d->h, &x, &period), so))
        set_u(&v[NVD_DEC], x);
    if (!d->lost && d->mig_mode >= 0)
        val_int(&v[NVD_MIG_MODE], d->mig_mode);
}

static int grow_procs(nvml_t *st, unsigned need)
{
    if (need <= st->pcap)
        return 0;
    unsigned cap = need + 16;
    nvmlProcessInfo_t *p3 = realloc(st->p3, cap * sizeof(*p3));
    if (p3)
        st->p3 = p3;
    nvmlProcessInfo_v1_t *p1 = realloc(st->p1, cap * sizeof(*p1));
    if (p1)
        st->p1 = p1;
    if (!p3 || !p1)
        return -ENOMEM;
    st->pcap = cap;
    return 0;
}

/* read_procs: one process list (compute or graphics) of d into nvml_process; *ret_n is the number of entries
 * or -1 when the list could not be read. Returns 0 or -ENOMEM. */
static int read_procs(nvml_t *st, nvdev_t *d, bool graphics, js_rows_t *out, js_rows_t *so, long *ret_n)
{
    const nvml_api_t *a = &st->api;
    int m = graphics ? NM_GRAPHICS_PROCESSES : NM_COMPUTE_PROCESSES;
    nvmlDeviceGetRunningProcesses_v3_fn *f3 =
        graphics ? a->DeviceGetGraphicsRunningProcesses_v3 : a->DeviceGetComputeRunningProcesses_v3;
    nvmlDeviceGetRunningProcesses_v1_fn *f1 =
        graphics ? a->DeviceGetGraphicsRunningProcesses_v1 : a->DeviceGetComputeRunningProcesses_v1;
    *ret_n = -1;
    if (!want(st, d, m, f3 || f1, so))
        return 0;
    unsigned n = 0;
    nvmlReturn_t rc = NVML_ERROR_INSUFFICIENT_SIZE;
    for (int tries = 0; tries < 4 && rc == NVML_ERROR_INSUFFICIENT_SIZE; tries++) {
        if (grow_procs(st, n) < 0)
            return -ENOMEM;
        n = st->pcap;
        rc = f3 ? f3(d->h, &n, st->p3) : f1(d->h, &n, st->p1);
    }
    if (!got(st, d, m, rc, so))
        return 0;
    *ret_n = n;
    const char *type = graphics ? "graphics" : "compute";
    for (unsigned i = 0; i < n && i < st->pcap; i++) {
        unsigned pid = f3 ? st->p3[i].pid : st->p1[i].pid;
        unsigned long long used = f3 ? st->p3[i].usedGpuMemory : st->p1[i].usedGpuMemory;
        js_value_t *v = rows_add(out);
        if (!v || rows_set_str(out, &v[NVP_TYPE], type, strlen(type)) < 0)
            return -ENOMEM;
        val_int(&v[NVP_INDEX], d->index);
        val_int(&v[NVP_PID], pid);
        if (used != NVML_VALUE_NOT_AVAILABLE_ULL)
            set_u(&v[NVP_USED], used);
        if (f3 && st->p3[i].gpuInstanceId != NVML_INSTANCE_ID_NONE)
            val_int(&v[NVP_GI], st->p3[i].gpuInstanceId);
        if (f3 && st->p3[i].computeInstanceId != NVML_INSTANCE_ID_NONE)
            val_int(&v[NVP_CI], st->p3[i].computeInstanceId);
    }
    return 0;
}

/* read_putil: the process-utilisation samples of d newer than the last seen, into nvml_putil; *ret_count is
 * their number, or -1 when the call failed or is not asked. Returns 0 or -ENOMEM. */
static int read_putil(nvml_t *st, nvdev_t *d, js_rows_t *out, js_rows_t *so, long *ret_count)
{
    const nvml_api_t *a = &st->api;
    *ret_count = -1;
    if (!want(st, d, NM_PROCESS_UTILIZATION, a->DeviceGetProcessUtilization != NULL, so))
        return 0;
    unsigned n = st->ucap;
    nvmlReturn_t rc = NVML_ERROR_INSUFFICIENT_SIZE;
    for (int tries = 0; tries < 4 && rc == NVML_ERROR_INSUFFICIENT_SIZE; tries++) {
        if (n > st->ucap || !st->u) {
            unsigned cap = (n > 64 ? n : 64) + 16;
            nvmlProcessUtilizationSample_t *u = realloc(st->u, cap * sizeof(*u));
            if (!u)
                return -ENOMEM;
            st->u = u;
            st->ucap = cap;
        }
        n = st->ucap;
        rc = a->DeviceGetProcessUtilization(d->h, st->u, &n, d->last_seen_us);
    }
    if (rc == NVML_ERROR_NOT_FOUND) { /* no sample newer than last_seen: none, not a failure */
        *ret_count = 0;
        return 0;
    }
    if (!got(st, d, NM_PROCESS_UTILIZATION, rc, so))
        return 0;
    unsigned long long newest = d->last_seen_us;
    long kept = 0;
    for (unsigned i = 0; i < n && i < st->ucap; i++) {
        const nvmlProcessUtilizationSample_t *s = &st->u[i];
        if (s->timeStamp <= d->last_seen_us)
            continue; /* a library that ignores lastSeenTimeStamp */
        js_value_t *v = rows_add(out);
        if (!v)
            return -ENOMEM;
        val_int(&v[NVU_INDEX], d->index);
        val_int(&v[NVU_PID], s->pid);
        set_u(&v[NVU_TS], s->timeStamp);
        set_u(&v[NVU_SM], s->smUtil);
        set_u(&v[NVU_MEM], s->memUtil);
        set_u(&v[NVU_ENC], s->encUtil);
        set_u(&v[NVU_DEC], s->decUtil);
        if (s->timeStamp > newest)
            newest = s->timeStamp;
        kept++;
    }
    d->last_seen_us = newest;
    *ret_count = kept;
    return 0;
}

static int read_migs(nvml_t *st, nvdev_t *d, js_rows_t *out, js_rows_t *so)
{
    const nvml_api_t *a = &st->api;
    for (size_t k = 0; k < d->nmig && !d->lost && !d->skip[NM_MIG_MEMORY]; k++) {
        const nvmig_t *m = &d->mig[k];
        js_value_t *v = rows_add(out);
        if (!v)
            return -ENOMEM;
        val_int(&v[NVM_INDEX], d->index);
        val_int(&v[NVM_MIG], m->idx);
        if (m->have_ids) {
            val_int(&v[NVM_GI], m->gi);
            val_int(&v[NVM_CI], m->ci);
        }
        if (m->mem_total)
            set_u(&v[NVM_MEM_TOTAL], m->mem_total);
        nvmlReturn_t rc;
        if (a->DeviceGetMemoryInfo_v2) {
            nvmlMemory_v2_t mem = {.version = nvmlMemory_v2};
            if ((rc = a->DeviceGetMemoryInfo_v2(m->h, &mem)) == NVML_SUCCESS)
                set_u(&v[NVM_MEM_USED], mem.used);
        } else if (a->DeviceGetMemoryInfo) {
            nvmlMemory_t mem;
            if ((rc = a->DeviceGetMemoryInfo(m->h, &mem)) == NVML_SUCCESS)
                set_u(&v[NVM_MEM_USED], mem.used);
        } else {
            rc = NVML_ERROR_FUNCTION_NOT_FOUND;
        }
        got(st, d, NM_MIG_MEMORY, rc, so);
    }
    return 0;
}

static int nvml_collect(void *state, js_ctx_t *ctx, js_rows_t *const *rows)
{
    nvml_t *st = state;
    unsigned every = ctx->status_every ? ctx->status_every : 1;
    bool full = ctx->seq == 0 || ctx->final || ctx->seq % every == 0;
    js_rows_t *so = rows[T_STATUS];
    for (size_t i = 0; i < st->n; i++) {
        nvdev_t *d = &st->d[i];
        if (!d->selected)
            continue;
        js_value_t *v = rows_add(rows[T_DEV]);
        if (!v)
            return -ENOMEM;
        val_int(&v[NVD_INDEX], d->index);
        if (!d->lost) {
            read_device(st, d, v, full, so);
            int r;
            long count, nc, ng;
            if ((r = read_procs(st, d, false, rows[T_PROC], so, &nc)) < 0 ||
                (r = read_procs(st, d, true, rows[T_PROC], so, &ng)) < 0 ||
                (r = read_putil(st, d, rows[T_PUTIL], so, &count)) < 0 ||
                (r = read_migs(st, d, rows[T_MIG], so)) < 0)
                return r;
            if (count >= 0)
                val_int(&v[NVD_PUTIL_SAMPLES], count);
            if (nc >= 0 && (ng >= 0 || d->skip[NM_GRAPHICS_PROCESSES]))
                val_int(&v[NVD_PROCS], nc + (ng > 0 ? ng : 0));
        }
        val_int(&v[NVD_LOST], d->lost);
    }
    return 0;
}

/* ---- inventory ---- */

static const char *compute_mode_name(nvmlComputeMode_t m)
{
    switch (m) {
    case NVML_COMPUTEMODE_DEFAULT:
        return "default";
    case NVML_COMPUTEMODE_EXCLUSIVE_THREAD:
        return "exclusive_thread";
    case NVML_COMPUTEMODE_PROHIBITED:
        return "prohibited";
    case NVML_COMPUTEMODE_EXCLUSIVE_PROCESS:
        return "exclusive_process";
    default:
        return "unknown";
    }
}

#define INV(key, ...) (r == 0 ? (r = inventory_addf(inv, "nvml", key, __VA_ARGS__)) : r)

static int nvml_inventory(void *state, const js_ctx_t *ctx, js_rows_t *inv)
{
    (void)ctx;
    nvml_t *st = state;
    const nvml_api_t *a = &st->api;
    int r = 0;
    char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE], key[160], what[320];
    INV("library", "%s", st->lib.path[0] ? st->lib.path : st->lib.opened_as);
    if (a->SystemGetDriverVersion && a->SystemGetDriverVersion(buf, sizeof(buf)) == NVML_SUCCESS)
        INV("driver_version", "%s", buf);
    if (a->SystemGetNVMLVersion && a->SystemGetNVMLVersion(buf, sizeof(buf)) == NVML_SUCCESS)
        INV("nvml_version", "%s", buf);
    int cuda;
    if (a->SystemGetCudaDriverVersion && a->SystemGetCudaDriverVersion(&cuda) == NVML_SUCCESS)
        INV("cuda_driver_version", "%d.%d", NVML_CUDA_DRIVER_VERSION_MAJOR(cuda),
            NVML_CUDA_DRIVER_VERSION_MINOR(cuda));
    INV("devices", "%zu", st->n);
    gpu_select_describe(&st->sel, what, sizeof(what));
    INV("selection", "%s", what);
    what[0] = '\0';
    for (size_t i = 0; i < st->n; i++)
        if (st->d[i].selected) {
            size_t len = strlen(what);
            snprintf(what + len, sizeof(what) - len, "%s%u", len ? "," : "", st->d[i].index);
        }
    INV("selected", "%s", what);
    if (st->unmatched[0])
        INV("selection_unmatched", "%s", st->unmatched);
    INV("pid_namespace", "%s", st->pidns);
    what[0] = '\0';
    for (size_t k = 0; k < NSYMS; k++) {
        void *fn;
        memcpy(&fn, (const char *)a + nvml_syms[k].offset, sizeof(fn));
        if (!fn) {
            size_t len = strlen(what);
            snprintf(what + len, sizeof(what) - len, "%s%s", len ? "," : "", nvml_syms[k].names[0]);
        }
    }
    if (what[0])
        INV("missing_entry_points", "%s", what);
    for (size_t i = 0; r == 0 && i < st->n; i++) {
        nvdev_t *d = &st->d[i];
        unsigned n = d->index;
#define DKEY(suffix) (snprintf(key, sizeof(key), "gpu.%u." suffix, n), key)
        if (!d->h) {
            INV(DKEY("error"), "%s", err_text(st, d->handle_rc));
            continue;
        }
        if (d->name[0])
            INV(DKEY("name"), "%s", d->name);
        if (d->uuid[0])
            INV(DKEY("uuid"), "%s", d->uuid);
        INV(DKEY("selected"), "%d", d->selected);
        nvmlPciInfo_t pci;
        memset(&pci, 0, sizeof(pci));
        if (a->DeviceGetPciInfo_v3 && a->DeviceGetPciInfo_v3(d->h, &pci) == NVML_SUCCESS) {
            INV(DKEY("pci_bus_id"), "%s", pci.busId);
            INV(DKEY("pci_device_id"), "0x%08X", pci.pciDeviceId);
        } else if (a->DeviceGetPciInfo_v1) {
            nvmlPciInfo_v1_t old;
            memset(&old, 0, sizeof(old));
            if (a->DeviceGetPciInfo_v1(d->h, &old) == NVML_SUCCESS) {
                old.busId[sizeof(old.busId) - 1] = '\0';
                INV(DKEY("pci_bus_id"), "%s", old.busId);
                INV(DKEY("pci_device_id"), "0x%08X", old.pciDeviceId);
            }
        }
        if (a->DeviceGetMemoryInfo_v2) {
            nvmlMemory_v2_t m = {.version = nvmlMemory_v2};
            if (a->DeviceGetMemoryInfo_v2(d->h, &m) == NVML_SUCCESS)
                INV(DKEY("memory_total_bytes"), "%llu", m.total);
        } else if (a->DeviceGetMemoryInfo) {
            nvmlMemory_t m;
            if (a->DeviceGetMemoryInfo(d->h, &m) == NVML_SUCCESS)
                INV(DKEY("memory_total_bytes"), "%llu", m.total);
        }
        nvmlBAR1Memory_t b;
        if (a->DeviceGetBAR1MemoryInfo && a->DeviceGetBAR1MemoryInfo(d->h, &b) == NVML_SUCCESS)
            INV(DKEY("bar1_total_bytes"), "%llu", b.bar1Total);
        nvmlComputeMode_t cm;
        if (a->DeviceGetComputeMode && a->DeviceGetComputeMode(d->h, &cm) == NVML_SUCCESS)
            INV(DKEY("compute_mode"), "%s", compute_mode_name(cm));
        unsigned x;
        if (a->DeviceGetEnforcedPowerLimit && a->DeviceGetEnforcedPowerLimit(d->h, &x) == NVML_SUCCESS)
            INV(DKEY("power_limit_mw"), "%u", x);
        if (a->DeviceGetPowerManagementLimit && a->DeviceGetPowerManagementLimit(d->h, &x) == NVML_SUCCESS)
            INV(DKEY("power_management_limit_mw"), "%u", x);
        INV(DKEY("mig_mode"), "%s", d->mig_mode < 0 ? "unsupported" : d->mig_mode ? "enabled" : "disabled");
        for (size_t k = 0; k < d->nmig; k++) {
            const nvmig_t *m = &d->mig[k];
            snprintf(key, sizeof(key), "gpu.%u.mig.%u.name", n, m->idx);
            INV(key, "%s", m->name);
            snprintf(key, sizeof(key), "gpu.%u.mig.%u.uuid", n, m->idx);
            INV(key, "%s", m->uuid);
            snprintf(key, sizeof(key), "gpu.%u.mig.%u.memory_total_bytes", n, m->idx);
            INV(key, "%llu", m->mem_total);
            if (m->have_ids) {
                snprintf(key, sizeof(key), "gpu.%u.mig.%u.gpu_instance", n, m->idx);
                INV(key, "%u", m->gi);
                snprintf(key, sizeof(key), "gpu.%u.mig.%u.compute_instance", n, m->idx);
                INV(key, "%u", m->ci);
            }
        }
#undef DKEY
    }
    return r;
}

const js_source_t source_nvml = {
    .name = "nvml",
    .help =
        "NVIDIA GPUs through NVML (dlopen): utilisation, memory, power, energy, clocks, throttling, PCIe, "
        "ECC, MIG, and the processes on them",
    .tables = nvml_tables,
    .gpu = true,
    .init = nvml_init,
    .collect = nvml_collect,
    .fini = nvml_fini,
    .inventory = nvml_inventory,
};
