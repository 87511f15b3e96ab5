/* SPDX-License-Identifier: MIT
 *
 * The subset of NVIDIA's NVML ABI (libnvidia-ml.so.1) that jobscope uses, written from NVML's documented
 * interface (the nvml.h of API version 13, cross-checked against the API 11 header of 2019 for the older
 * entry points) so that no CUDA or NVML header is needed at build time. Names follow NVML's, so code reads
 * like its documentation. Only what jobscope calls is here: return codes, the opaque device handle, the
 * structs those calls fill (with _Static_asserts on every size and the offsets that moved between versions),
 * the enums they take, and one function type per entry point, `<function>_fn`, for dlib tables
 * (`nvmlDeviceGetPowerUsage_fn *DeviceGetPowerUsage;`). Where versions of an entry point take different
 * structs the type carries the version: the unversioned nvmlDeviceGetComputeRunningProcesses fills 16-byte
 * nvmlProcessInfo_v1_t entries, its _v2 and _v3 fill 24-byte nvmlProcessInfo_t entries; the unversioned
 * nvmlDeviceGetPciInfo and its _v2 (API 8, 2016) fill the 52-byte legacy nvmlPciInfo_v1_t, _v3 (API 9+) the
 * 68-byte nvmlPciInfo_t.
 * All of NVML's types are plain C with the x86-64 / aarch64 System V layout; enums are int-sized.
 *
 * Units, from the documentation of each call: memory in bytes; power and power limits in milliwatts; energy
 * in millijoules since the driver was last loaded (it restarts at a driver reload); temperature in degrees C;
 * fan speed in percent of the maximum (may exceed 100); clocks in MHz; PCIe throughput in KB/s over a 20 ms
 * window; violation time in ns with a CPU timestamp in us; process utilisation sample timestamps in us of
 * CPU (wall-clock) time; utilisation in percent over the driver's last sample period.
 */
#ifndef JOBSCOPE_NVML_ABI_H
#define JOBSCOPE_NVML_ABI_H

#include <stddef.h>

/* ---- return codes (nvmlReturn_t) ---- */

typedef enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,       /* nvmlInit not called (or shut down) */
    NVML_ERROR_INVALID_ARGUMENT = 2,    /* bad handle, NULL pointer, index out of range, bad enum */
    NVML_ERROR_NOT_SUPPORTED = 3,       /* this device cannot report this: that metric is missing */
    NVML_ERROR_NO_PERMISSION = 4,       /* not allowed for this user: that metric is missing */
    NVML_ERROR_ALREADY_INITIALIZED = 5, /* deprecated: nvmlInit is reference counted */
    NVML_ERROR_NOT_FOUND = 6,           /* e.g. no MIG device at an index, no process samples */
    NVML_ERROR_INSUFFICIENT_SIZE = 7,   /* buffer too small; the count needed is written back */
    NVML_ERROR_INSUFFICIENT_POWER = 8,  /* external power cables not attached */
    NVML_ERROR_DRIVER_NOT_LOADED = 9,   /* nvmlInit: no NVIDIA kernel driver */
    NVML_ERROR_TIMEOUT = 10,
    NVML_ERROR_IRQ_ISSUE = 11,
    NVML_ERROR_LIBRARY_NOT_FOUND = 12,
    NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    NVML_ERROR_CORRUPTED_INFOROM = 14,
    NVML_ERROR_GPU_IS_LOST = 15, /* the GPU fell off the bus: the device is lost */
    NVML_ERROR_RESET_REQUIRED = 16,
    NVML_ERROR_OPERATING_SYSTEM = 17,
    NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
    NVML_ERROR_IN_USE = 19,
    NVML_ERROR_MEMORY = 20,
    NVML_ERROR_NO_DATA = 21,
    NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
    NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
    NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25, /* a versioned struct's `version` field is wrong */
    NVML_ERROR_DEPRECATED = 26,
    NVML_ERROR_NOT_READY = 27,
    NVML_ERROR_GPU_NOT_FOUND = 28,
    NVML_ERROR_INVALID_STATE = 29,
    NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

/* ---- handles and constants ---- */

typedef struct nvmlDevice_st *nvmlDevice_t; /* opaque; also used for MIG device handles */

#define NVML_DEVICE_NAME_BUFFER_SIZE 64
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96 /* nvmlDeviceGetName never needs more */
#define NVML_DEVICE_UUID_BUFFER_SIZE 80
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96 /* nvmlDeviceGetUUID never needs more */
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE 80
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE 32         /* nvmlPciInfo_t.busId */
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16      /* nvmlPciInfo_t.busIdLegacy, nvmlPciInfo_v1_t.busId */
#define NVML_DEVICE_PCI_BUS_ID_FMT "%08X:%02X:%02X.0" /* busId: domain, bus, device */
#define NVML_DEVICE_PCI_BUS_ID_LEGACY_FMT "%04X:%02X:%02X.0" /* busIdLegacy */

/* usedGpuMemory of a process when the driver cannot tell (always so under Windows WDDM) */
#define NVML_VALUE_NOT_AVAILABLE (-1)
#define NVML_VALUE_NOT_AVAILABLE_ULL 0xFFFFFFFFFFFFFFFFULL

/* gpuInstanceId / computeInstanceId of a process on a GPU without MIG */
#define NVML_INSTANCE_ID_NONE 0xFFFFFFFFu

#define NVML_DEVICE_MIG_DISABLE 0x0
#define NVML_DEVICE_MIG_ENABLE 0x1

/* nvmlSystemGetCudaDriverVersion gives 1000 * major + 10 * minor (12040 is CUDA 12.4) */
#define NVML_CUDA_DRIVER_VERSION_MAJOR(v) ((v) / 1000)
#define NVML_CUDA_DRIVER_VERSION_MINOR(v) (((v) % 1000) / 10)

/* NVML_STRUCT_VERSION: the `version` a versioned struct must carry, sizeof | version << 24 */
#define NVML_STRUCT_VERSION(type, ver) ((unsigned int)(sizeof(type) | ((unsigned int)(ver) << 24U)))

/* ---- structs ---- */

/* nvmlDeviceGetMemoryInfo: used = total - free, the driver's reserved memory included. */
typedef struct {
    unsigned long long total; /* bytes */
    unsigned long long free;  /* bytes */
    unsigned long long used;  /* bytes */
} nvmlMemory_t;

/* nvmlDeviceGetMemoryInfo_v2: `version` must be nvmlMemory_v2 on input; reserved is reported apart, so
 * total = reserved + free + used. */
typedef struct {
    unsigned int version;        /* in: nvmlMemory_v2 */
    unsigned long long total;    /* bytes */
    unsigned long long reserved; /* bytes set aside by the driver and firmware */
    unsigned long long free;     /* bytes */
    unsigned long long used;     /* bytes allocated */
} nvmlMemory_v2_t;
#define nvmlMemory_v2 NVML_STRUCT_VERSION(nvmlMemory_v2_t, 2)

typedef struct {
    unsigned long long bar1Total; /* bytes */
    unsigned long long bar1Free;  /* bytes */
    unsigned long long bar1Used;  /* bytes */
} nvmlBAR1Memory_t;

typedef struct {
    unsigned int gpu;    /* percent of the last sample period a kernel was running */
    unsigned int memory; /* percent of the last sample period device memory was read or written */
} nvmlUtilization_t;

/* Entries of the unversioned nvmlDeviceGet{Compute,Graphics}RunningProcesses (API 10 and older called this
 * nvmlProcessInfo_t). */
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory; /* bytes, or NVML_VALUE_NOT_AVAILABLE_ULL */
} nvmlProcessInfo_v1_t;

/* Entries of the _v2 and _v3 process lists (nvmlProcessInfo_v2_t and nvmlProcessInfo_t in API 11+). */
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory; /* bytes, or NVML_VALUE_NOT_AVAILABLE_ULL */
    unsigned int gpuInstanceId;       /* MIG GPU instance, NVML_INSTANCE_ID_NONE without MIG */
    unsigned int computeInstanceId;   /* MIG compute instance, NVML_INSTANCE_ID_NONE without MIG */
} nvmlProcessInfo_t;
typedef nvmlProcessInfo_t nvmlProcessInfo_v2_t;

typedef struct {
    unsigned int pid;
    unsigned long long timeStamp; /* us of CPU (wall-clock) time when the sample was taken */
    unsigned int smUtil;          /* percent */
    unsigned int memUtil;         /* percent */
    unsigned int encUtil;         /* percent */
    unsigned int decUtil;         /* percent */
} nvmlProcessUtilizationSample_t;

/* nvmlDeviceGetPciInfo_v3 (API 9+). */
typedef struct {
    char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE]; /* "%04X:%02X:%02X.0" */
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;                       /* device id << 16 | vendor id (0x10DE) */
    unsigned int pciSubSystemId;                    /* subsystem device id << 16 | subsystem vendor id */
    char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE]; /* "%08X:%02X:%02X.0" */
} nvmlPciInfo_t;

/* nvmlDeviceGetPciInfo and nvmlDeviceGetPciInfo_v2 fill this layout (nvmlPciInfo_t up to API 8): its first 36
 * bytes are those of nvmlPciInfo_t, so a caller may pass an nvmlPciInfo_t and read busIdLegacy. */
typedef struct {
    char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE]; /* "%04X:%02X:%02X.0" */
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    unsigned int reserved0;
    unsigned int reserved1;
    unsigned int reserved2;
    unsigned int reserved3;
} nvmlPciInfo_v1_t;

typedef struct {
    unsigned long long referenceTime; /* us of CPU time when read */
    unsigned long long violationTime; /* ns spent below application clocks because of this policy */
} nvmlViolationTime_t;

/* ---- enums ---- */

typedef enum {
    NVML_TEMPERATURE_GPU = 0, /* the die */
    NVML_TEMPERATURE_COUNT
} nvmlTemperatureSensors_t;

/* nvmlDeviceGetTemperatureV (API 12.8+): sensorType in, temperature out, `version` = nvmlTemperature_v1. */
typedef struct {
    unsigned int version;
    nvmlTemperatureSensors_t sensorType;
    int temperature; /* degrees C */
} nvmlTemperature_t;
#define nvmlTemperature_v1 NVML_STRUCT_VERSION(nvmlTemperature_t, 1)

typedef enum {
    NVML_CLOCK_GRAPHICS = 0,
    NVML_CLOCK_SM = 1,
    NVML_CLOCK_MEM = 2,
    NVML_CLOCK_VIDEO = 3,
    NVML_CLOCK_COUNT
} nvmlClockType_t;

typedef enum {
    NVML_PSTATE_0 = 0,   /* maximum performance; NVML_PSTATE_1 ... 14 are 1 ... 14 */
    NVML_PSTATE_15 = 15, /* minimum performance */
    NVML_PSTATE_UNKNOWN = 32
} nvmlPstates_t;

typedef enum {
    NVML_MEMORY_ERROR_TYPE_CORRECTED = 0,   /* single-bit ECC errors */
    NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1, /* double-bit ECC errors */
    NVML_MEMORY_ERROR_TYPE_COUNT
} nvmlMemoryErrorType_t;

typedef enum {
    NVML_VOLATILE_ECC = 0,  /* since the driver was loaded */
    NVML_AGGREGATE_ECC = 1, /* lifetime of the device */
    NVML_ECC_COUNTER_TYPE_COUNT
} nvmlEccCounterType_t;

typedef enum {
    NVML_PCIE_UTIL_TX_BYTES = 0, /* KB/s */
    NVML_PCIE_UTIL_RX_BYTES = 1, /* KB/s */
    NVML_PCIE_UTIL_COUNT
} nvmlPcieUtilCounter_t;

typedef enum {
    NVML_PERF_POLICY_POWER = 0,
    NVML_PERF_POLICY_THERMAL = 1,
    NVML_PERF_POLICY_SYNC_BOOST = 2,
    NVML_PERF_POLICY_BOARD_LIMIT = 3,
    NVML_PERF_POLICY_LOW_UTILIZATION = 4,
    NVML_PERF_POLICY_RELIABILITY = 5,
    NVML_PERF_POLICY_TOTAL_APP_CLOCKS = 10,
    NVML_PERF_POLICY_TOTAL_BASE_CLOCKS = 11,
    NVML_PERF_POLICY_COUNT
} nvmlPerfPolicyType_t;

typedef enum {
    NVML_COMPUTEMODE_DEFAULT = 0,
    NVML_COMPUTEMODE_EXCLUSIVE_THREAD = 1, /* support removed */
    NVML_COMPUTEMODE_PROHIBITED = 2,
    NVML_COMPUTEMODE_EXCLUSIVE_PROCESS = 3,
    NVML_COMPUTEMODE_COUNT
} nvmlComputeMode_t;

/* Clock event (formerly "throttle") reasons: bits of nvmlDeviceGetCurrentClocksEventReasons and of the
 * deprecated nvmlDeviceGetCurrentClocksThrottleReasons. */
#define nvmlClocksEventReasonNone 0x0000000000000000ULL
#define nvmlClocksEventReasonGpuIdle 0x0000000000000001ULL
#define nvmlClocksEventReasonApplicationsClocksSetting 0x0000000000000002ULL
#define nvmlClocksEventReasonSwPowerCap 0x0000000000000004ULL
#define nvmlClocksThrottleReasonHwSlowdown 0x0000000000000008ULL
#define nvmlClocksEventReasonSyncBoost 0x0000000000000010ULL
#define nvmlClocksEventReasonSwThermalSlowdown 0x0000000000000020ULL
#define nvmlClocksThrottleReasonHwThermalSlowdown 0x0000000000000040ULL
#define nvmlClocksThrottleReasonHwPowerBrakeSlowdown 0x0000000000000080ULL
#define nvmlClocksEventReasonDisplayClockSetting 0x0000000000000100ULL

/* ---- entry points: one function type each (versions with the same signature share one) ---- */

typedef nvmlReturn_t nvmlInit_fn(void);     /* nvmlInit_v2, nvmlInit (the old one fails if any GPU is bad) */
typedef nvmlReturn_t nvmlShutdown_fn(void); /* reference counted with nvmlInit */
typedef const char *nvmlErrorString_fn(nvmlReturn_t result);
typedef nvmlReturn_t nvmlSystemGetDriverVersion_fn(char *version, unsigned int length);
typedef nvmlReturn_t nvmlSystemGetNVMLVersion_fn(char *version, unsigned int length);
typedef nvmlReturn_t nvmlSystemGetCudaDriverVersion_fn(int *cudaDriverVersion); /* _v2 and unversioned */
typedef nvmlReturn_t nvmlDeviceGetCount_fn(unsigned int *deviceCount);          /* _v2 and unversioned */
typedef nvmlReturn_t nvmlDeviceGetHandleByIndex_fn(unsigned int index, nvmlDevice_t *device); /* _v2, v1 */
typedef nvmlReturn_t nvmlDeviceGetName_fn(nvmlDevice_t device, char *name, unsigned int length);
typedef nvmlReturn_t nvmlDeviceGetUUID_fn(nvmlDevice_t device, char *uuid, unsigned int length);
typedef nvmlReturn_t nvmlDeviceGetPciInfo_v3_fn(nvmlDevice_t device, nvmlPciInfo_t *pci);    /* _v3 */
typedef nvmlReturn_t nvmlDeviceGetPciInfo_v1_fn(nvmlDevice_t device, nvmlPciInfo_v1_t *pci); /* _v2, v1 */
typedef nvmlReturn_t nvmlDeviceGetMemoryInfo_fn(nvmlDevice_t device, nvmlMemory_t *memory);
typedef nvmlReturn_t nvmlDeviceGetMemoryInfo_v2_fn(nvmlDevice_t device, nvmlMemory_v2_t *memory);
typedef nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo_fn(nvmlDevice_t device, nvmlBAR1Memory_t *bar1Memory);
typedef nvmlReturn_t nvmlDeviceGetUtilizationRates_fn(nvmlDevice_t device, nvmlUtilization_t *utilization);
typedef nvmlReturn_t nvmlDeviceGetPowerUsage_fn(nvmlDevice_t device, unsigned int *power);
typedef nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit_fn(nvmlDevice_t device, unsigned int *limit);
typedef nvmlReturn_t nvmlDeviceGetPowerManagementLimit_fn(nvmlDevice_t device, unsigned int *limit);
typedef nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption_fn(nvmlDevice_t device, unsigned long long *energy);
typedef nvmlReturn_t nvmlDeviceGetTemperature_fn(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType,
                                                 unsigned int *temp);
typedef nvmlReturn_t nvmlDeviceGetTemperatureV_fn(nvmlDevice_t device, nvmlTemperature_t *temperature);
typedef nvmlReturn_t nvmlDeviceGetFanSpeed_fn(nvmlDevice_t device, unsigned int *speed);
typedef nvmlReturn_t nvmlDeviceGetClockInfo_fn(nvmlDevice_t device, nvmlClockType_t type,
                                               unsigned int *clock);
typedef nvmlReturn_t nvmlDeviceGetPerformanceState_fn(nvmlDevice_t device, nvmlPstates_t *pState);
/* nvmlDeviceGetCurrentClocksEventReasons (API 12.2+) and nvmlDeviceGetCurrentClocksThrottleReasons */
typedef nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons_fn(nvmlDevice_t device,
                                                               unsigned long long *reasons);
typedef nvmlReturn_t nvmlDeviceGetViolationStatus_fn(nvmlDevice_t device, nvmlPerfPolicyType_t perfPolicyType,
                                                     nvmlViolationTime_t *violTime);
typedef nvmlReturn_t nvmlDeviceGetPcieThroughput_fn(nvmlDevice_t device, nvmlPcieUtilCounter_t counter,
                                                    unsigned int *value);
typedef nvmlReturn_t nvmlDeviceGetPcieReplayCounter_fn(nvmlDevice_t device, unsigned int *value);
typedef nvmlReturn_t nvmlDeviceGetTotalEccErrors_fn(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
                                                    nvmlEccCounterType_t counterType,
                                                    unsigned long long *eccCounts);
typedef nvmlReturn_t nvmlDeviceGetEncoderUtilization_fn(nvmlDevice_t device, unsigned int *utilization,
                                                        unsigned int *samplingPeriodUs);
typedef nvmlReturn_t nvmlDeviceGetDecoderUtilization_fn(nvmlDevice_t device, unsigned int *utilization,
                                                        unsigned int *samplingPeriodUs);
typedef nvmlReturn_t nvmlDeviceGetComputeMode_fn(nvmlDevice_t device, nvmlComputeMode_t *mode);
typedef nvmlReturn_t nvmlDeviceGetMigMode_fn(nvmlDevice_t device, unsigned int *currentMode,
                                             unsigned int *pendingMode);
typedef nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount_fn(nvmlDevice_t device, unsigned int *count);
typedef nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex_fn(nvmlDevice_t device, unsigned int index,
                                                            nvmlDevice_t *migDevice);
typedef nvmlReturn_t nvmlDeviceIsMigDeviceHandle_fn(nvmlDevice_t device, unsigned int *isMigDevice);
typedef nvmlReturn_t nvmlDeviceGetGpuInstanceId_fn(nvmlDevice_t device, unsigned int *id);
typedef nvmlReturn_t nvmlDeviceGetComputeInstanceId_fn(nvmlDevice_t device, unsigned int *id);
/* nvmlDeviceGet{Compute,Graphics}RunningProcesses_v3 and _v2: 24-byte entries */
typedef nvmlReturn_t nvmlDeviceGetRunningProcesses_v3_fn(nvmlDevice_t device, unsigned int *infoCount,
                                                         nvmlProcessInfo_t *infos);
/* nvmlDeviceGet{Compute,Graphics}RunningProcesses (unversioned): 16-byte entries */
typedef nvmlReturn_t nvmlDeviceGetRunningProcesses_v1_fn(nvmlDevice_t device, unsigned int *infoCount,
                                                         nvmlProcessInfo_v1_t *infos);
typedef nvmlReturn_t nvmlDeviceGetProcessUtilization_fn(nvmlDevice_t device,
                                                        nvmlProcessUtilizationSample_t *utilization,
                                                        unsigned int *processSamplesCount,
                                                        unsigned long long lastSeenTimeStamp);

/* ---- the layout the code above relies on ---- */

_Static_assert(sizeof(nvmlReturn_t) == 4, "nvmlReturn_t is an int-sized enum");
_Static_assert(sizeof(nvmlMemory_t) == 24, "nvmlMemory_t");
_Static_assert(sizeof(nvmlMemory_v2_t) == 40 && offsetof(nvmlMemory_v2_t, total) == 8 &&
                   offsetof(nvmlMemory_v2_t, reserved) == 16 && offsetof(nvmlMemory_v2_t, used) == 32,
               "nvmlMemory_v2_t");
_Static_assert(nvmlMemory_v2 == 0x02000028u, "nvmlMemory_v2 version word");
_Static_assert(sizeof(nvmlBAR1Memory_t) == 24, "nvmlBAR1Memory_t");
_Static_assert(sizeof(nvmlUtilization_t) == 8, "nvmlUtilization_t");
_Static_assert(sizeof(nvmlProcessInfo_v1_t) == 16 && offsetof(nvmlProcessInfo_v1_t, usedGpuMemory) == 8,
               "v1 process entries are 16 bytes");
_Static_assert(sizeof(nvmlProcessInfo_t) == 24 && offsetof(nvmlProcessInfo_t, usedGpuMemory) == 8 &&
                   offsetof(nvmlProcessInfo_t, gpuInstanceId) == 16 &&
                   offsetof(nvmlProcessInfo_t, computeInstanceId) == 20,
               "v2/v3 process entries are 24 bytes");
_Static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32 &&
                   offsetof(nvmlProcessUtilizationSample_t, timeStamp) == 8 &&
                   offsetof(nvmlProcessUtilizationSample_t, smUtil) == 16 &&
                   offsetof(nvmlProcessUtilizationSample_t, decUtil) == 28,
               "nvmlProcessUtilizationSample_t");
_Static_assert(sizeof(nvmlPciInfo_t) == 68 && offsetof(nvmlPciInfo_t, domain) == 16 &&
                   offsetof(nvmlPciInfo_t, pciSubSystemId) == 32 && offsetof(nvmlPciInfo_t, busId) == 36,
               "nvmlPciInfo_t (v3)");
_Static_assert(sizeof(nvmlPciInfo_v1_t) == 52 && offsetof(nvmlPciInfo_v1_t, pciSubSystemId) == 32,
               "legacy nvmlPciInfo_t shares its first 36 bytes with the v3 layout");
_Static_assert(sizeof(nvmlViolationTime_t) == 16, "nvmlViolationTime_t");
_Static_assert(sizeof(nvmlTemperature_t) == 12 && nvmlTemperature_v1 == 0x0100000Cu, "nvmlTemperature_v1_t");

#endif
