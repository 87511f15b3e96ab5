/* SPDX-License-Identifier: MIT
 *
 * The subset of AMD's ROCm SMI ABI (librocm_smi64) that jobscope uses, written from the documented interface
 * of rocm_smi.h as Debian ships it (librocm-smi-dev 5.2.3, identical to upstream tag rocm-5.2.3), so that no
 * ROCm header is needed at build time. Names follow ROCm SMI's. Enumerations that rocm_smi.h declares as C
 * enums are uint32_t here with the same constants: several of them hold 0xFFFFFFFF, which ISO C does not
 * allow in an enum, and a 32-bit unsigned integer is how the System V ABI passes and stores such an enum
 * anyway.
 *
 * One ABI break matters across library generations: ROCm 6.0 (upstream commit 3d40c4b, 2023) put a
 * `bool has_deep_sleep` at the start of rsmi_frequencies_t and raised RSMI_MAX_NUM_FREQUENCIES from 32 to 33,
 * which moves every field of it and of rsmi_pcie_bandwidth_t and makes both larger. Both layouts are declared
 * (rsmi_frequencies_t is 5.x's, rsmi_frequencies_v6_t 6.x's); pass an rsmi_frequencies_any_t (room for
 * either) and let rsmi_frequencies_layout() tell which one the library wrote. All other entry points used
 * here kept their signatures and structs from 5.2.3 to ROCm 6.x.
 *
 * Units, from the documentation of each call: busy in percent; memory in bytes; power and power cap in
 * microwatts; the energy counter in units of `counter_resolution` microjoules (15.3 in every release so far)
 * with a timestamp in ns; temperature in millidegrees C; fan speed relative to RSMI_MAX_FAN_SPEED (255);
 * clock frequencies in Hz; PCIe transfer rates in transfers per second; PCIe throughput in bytes sent and
 * received during one second (the amdgpu driver measures it by waiting about a second on many ASICs, so
 * rsmi_dev_pci_throughput_get blocks); per-process SDMA time in us and CU occupancy in percent.
 */
#ifndef JOBSCOPE_ROCM_SMI_ABI_H
#define JOBSCOPE_ROCM_SMI_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- status codes (rsmi_status_t) ---- */

typedef uint32_t rsmi_status_t;
enum {
    RSMI_STATUS_SUCCESS = 0,
    RSMI_STATUS_INVALID_ARGS = 1,  /* bad device index, NULL pointer where the call is supported */
    RSMI_STATUS_NOT_SUPPORTED = 2, /* this device or kernel cannot report this: that metric is missing */
    RSMI_STATUS_FILE_ERROR = 3,
    RSMI_STATUS_PERMISSION = 4, /* EACCES on the sysfs file: that metric is missing */
    RSMI_STATUS_OUT_OF_RESOURCES = 5,
    RSMI_STATUS_INTERNAL_EXCEPTION = 6,
    RSMI_STATUS_INPUT_OUT_OF_BOUNDS = 7,
    RSMI_STATUS_INIT_ERROR = 8, /* rsmi_init failed (no amdgpu/kfd), or rsmi_shut_down without init */
    RSMI_INITIALIZATION_ERROR = RSMI_STATUS_INIT_ERROR,
    RSMI_STATUS_NOT_YET_IMPLEMENTED = 9,
    RSMI_STATUS_NOT_FOUND = 10,         /* e.g. no process information for a PID */
    RSMI_STATUS_INSUFFICIENT_SIZE = 11, /* buffer too small (the needed count is NOT written back) */
    RSMI_STATUS_INTERRUPT = 12,
    RSMI_STATUS_UNEXPECTED_SIZE = 13,
    RSMI_STATUS_NO_DATA = 14,
    RSMI_STATUS_UNEXPECTED_DATA = 15,
    RSMI_STATUS_BUSY = 16,
    RSMI_STATUS_REFCOUNT_OVERFLOW = 17,
};
#define RSMI_STATUS_UNKNOWN_ERROR 0xFFFFFFFFu

/* rsmi_init flags (a uint64_t argument) */
#define RSMI_INIT_FLAG_ALL_GPUS 0x1ULL

#define RSMI_MAX_NUM_FREQUENCIES 32    /* ROCm SMI 5.x */
#define RSMI_MAX_NUM_FREQUENCIES_V6 33 /* ROCm 6.0 on */
#define RSMI_MAX_FAN_SPEED 255

/* ---- enumerations ---- */

typedef uint32_t rsmi_memory_type_t;
enum { RSMI_MEM_TYPE_VRAM = 0, RSMI_MEM_TYPE_VIS_VRAM = 1, RSMI_MEM_TYPE_GTT = 2 };

typedef uint32_t rsmi_clk_type_t;
enum {
    RSMI_CLK_TYPE_SYS = 0, /* shader/graphics clock (sclk) */
    RSMI_CLK_TYPE_DF = 1,  /* data fabric */
    RSMI_CLK_TYPE_DCEF = 2,
    RSMI_CLK_TYPE_SOC = 3,
    RSMI_CLK_TYPE_MEM = 4, /* memory clock (mclk) */
    RSMI_CLK_TYPE_PCIE = 5,
};
#define RSMI_CLK_INVALID 0xFFFFFFFFu

/* sensor_type argument of rsmi_dev_temp_metric_get (declared uint32_t there) */
typedef uint32_t rsmi_temperature_type_t;
enum {
    RSMI_TEMP_TYPE_EDGE = 0,
    RSMI_TEMP_TYPE_JUNCTION = 1, /* hotspot */
    RSMI_TEMP_TYPE_MEMORY = 2,
    RSMI_TEMP_TYPE_HBM_0 = 3,
    RSMI_TEMP_TYPE_HBM_1 = 4,
    RSMI_TEMP_TYPE_HBM_2 = 5,
    RSMI_TEMP_TYPE_HBM_3 = 6,
};

typedef uint32_t rsmi_temperature_metric_t;
enum {
    RSMI_TEMP_CURRENT = 0,
    RSMI_TEMP_MAX = 1,
    RSMI_TEMP_MIN = 2,
    RSMI_TEMP_MAX_HYST = 3,
    RSMI_TEMP_MIN_HYST = 4,
    RSMI_TEMP_CRITICAL = 5,
    RSMI_TEMP_CRITICAL_HYST = 6,
    RSMI_TEMP_EMERGENCY = 7,
    RSMI_TEMP_EMERGENCY_HYST = 8,
    RSMI_TEMP_CRIT_MIN = 9,
    RSMI_TEMP_CRIT_MIN_HYST = 10,
    RSMI_TEMP_OFFSET = 11,
    RSMI_TEMP_LOWEST = 12,
    RSMI_TEMP_HIGHEST = 13,
};

typedef uint32_t rsmi_dev_perf_level_t;
enum {
    RSMI_DEV_PERF_LEVEL_AUTO = 0,
    RSMI_DEV_PERF_LEVEL_LOW = 1,
    RSMI_DEV_PERF_LEVEL_HIGH = 2,
    RSMI_DEV_PERF_LEVEL_MANUAL = 3,
    RSMI_DEV_PERF_LEVEL_STABLE_STD = 4,
    RSMI_DEV_PERF_LEVEL_STABLE_PEAK = 5,
    RSMI_DEV_PERF_LEVEL_STABLE_MIN_MCLK = 6,
    RSMI_DEV_PERF_LEVEL_STABLE_MIN_SCLK = 7,
    RSMI_DEV_PERF_LEVEL_DETERMINISM = 8,
    RSMI_DEV_PERF_LEVEL_UNKNOWN = 0x100,
};

typedef uint32_t rsmi_sw_component_t;
enum { RSMI_SW_COMP_DRIVER = 0 };

/* ---- structs ---- */

/* Frequencies as ROCm SMI 5.x fills them: `current` indexes `frequency`, or is 0xFFFFFFFF when the driver
 * marked no level current. */
typedef struct {
    uint32_t num_supported;
    uint32_t current;
    uint64_t frequency[RSMI_MAX_NUM_FREQUENCIES]; /* Hz, or T/s for PCIe */
} rsmi_frequencies_t;

/* The same from ROCm 6.0 on. */
typedef struct {
    bool has_deep_sleep;
    uint32_t num_supported;
    uint32_t current;
    uint64_t frequency[RSMI_MAX_NUM_FREQUENCIES_V6];
} rsmi_frequencies_v6_t;

typedef struct {
    rsmi_frequencies_t transfer_rate;         /* T/s */
    uint32_t lanes[RSMI_MAX_NUM_FREQUENCIES]; /* lanes of each transfer rate */
} rsmi_pcie_bandwidth_t;

typedef struct {
    rsmi_frequencies_v6_t transfer_rate;
    uint32_t lanes[RSMI_MAX_NUM_FREQUENCIES_V6];
} rsmi_pcie_bandwidth_v6_t;

/* A buffer either generation can fill. */
typedef union {
    rsmi_frequencies_t v5;
    rsmi_frequencies_v6_t v6;
} rsmi_frequencies_any_t;

typedef union {
    rsmi_pcie_bandwidth_t v5;
    rsmi_pcie_bandwidth_v6_t v6;
} rsmi_pcie_bandwidth_any_t;

typedef struct {
    uint32_t process_id;
    uint32_t pasid;
    uint64_t vram_usage;   /* bytes */
    uint64_t sdma_usage;   /* us */
    uint32_t cu_occupancy; /* percent */
} rsmi_process_info_t;

typedef struct {
    uint32_t major;
    uint32_t minor;
    uint32_t patch;
    const char *build;
} rsmi_version_t;

/* rsmi_frequencies_layout: which layout a successful rsmi_dev_gpu_clk_freq_get / rsmi_dev_pci_bandwidth_get
 * wrote into `f` (zeroed before the call): 5, 6, or 0 when the content fits neither. The two cannot be
 * confused: a 5.x result has num_supported in 1..32 at offset 0 and at offset 4 a `current` below it or
 * 0xFFFFFFFF; a 6.x result has 0 or 1 in the first byte (the bool) and num_supported in 1..33 at offset 4; a
 * 5.x count of 1 would need a 6.x count of 0 or 0xFFFFFFFF there, and a 5.x count above 1 is no bool. */
static inline int rsmi_frequencies_layout(const rsmi_frequencies_any_t *f)
{
    uint32_t w0, w1, w2;
    memcpy(&w0, (const char *)f, 4);
    memcpy(&w1, (const char *)f + 4, 4);
    memcpy(&w2, (const char *)f + 8, 4);
    unsigned char b0 = *(const unsigned char *)f;
    if (w0 >= 1 && w0 <= RSMI_MAX_NUM_FREQUENCIES && (w1 < w0 || w1 == 0xFFFFFFFFu))
        return 5;
    if (b0 <= 1 && w1 >= 1 && w1 <= RSMI_MAX_NUM_FREQUENCIES_V6 && (w2 < w1 || w2 == 0xFFFFFFFFu))
        return 6;
    return 0;
}

/* ---- entry points: one function type each ---- */

typedef rsmi_status_t rsmi_init_fn(uint64_t init_flags); /* reference counted */
typedef rsmi_status_t rsmi_shut_down_fn(void);           /* RSMI_STATUS_INIT_ERROR when not initialised */
typedef rsmi_status_t rsmi_status_string_fn(rsmi_status_t status, const char **status_string);
typedef rsmi_status_t rsmi_version_get_fn(rsmi_version_t *version);
typedef rsmi_status_t rsmi_version_str_get_fn(rsmi_sw_component_t component, char *ver_str, uint32_t len);
typedef rsmi_status_t rsmi_num_monitor_devices_fn(uint32_t *num_devices);
typedef rsmi_status_t rsmi_dev_name_get_fn(uint32_t dv_ind, char *name, size_t len);
typedef rsmi_status_t rsmi_dev_serial_number_get_fn(uint32_t dv_ind, char *serial_num, uint32_t len);
typedef rsmi_status_t rsmi_dev_id_get_fn(uint32_t dv_ind, uint16_t *id);
typedef rsmi_status_t rsmi_dev_unique_id_get_fn(uint32_t dv_ind, uint64_t *id);
/* bdfid = domain << 32 | bus << 8 | device << 3 | function */
typedef rsmi_status_t rsmi_dev_pci_id_get_fn(uint32_t dv_ind, uint64_t *bdfid);
typedef rsmi_status_t rsmi_dev_busy_percent_get_fn(uint32_t dv_ind, uint32_t *busy_percent);
typedef rsmi_status_t rsmi_dev_memory_busy_percent_get_fn(uint32_t dv_ind, uint32_t *busy_percent);
typedef rsmi_status_t rsmi_dev_memory_usage_get_fn(uint32_t dv_ind, rsmi_memory_type_t mem_type,
                                                   uint64_t *used);
typedef rsmi_status_t rsmi_dev_memory_total_get_fn(uint32_t dv_ind, rsmi_memory_type_t mem_type,
                                                   uint64_t *total);
typedef rsmi_status_t rsmi_dev_power_ave_get_fn(uint32_t dv_ind, uint32_t sensor_ind, uint64_t *power);
typedef rsmi_status_t rsmi_dev_power_cap_get_fn(uint32_t dv_ind, uint32_t sensor_ind, uint64_t *cap);
typedef rsmi_status_t rsmi_dev_energy_count_get_fn(uint32_t dv_ind, uint64_t *power,
                                                   float *counter_resolution, uint64_t *timestamp);
typedef rsmi_status_t rsmi_dev_temp_metric_get_fn(uint32_t dv_ind, uint32_t sensor_type,
                                                  rsmi_temperature_metric_t metric, int64_t *temperature);
typedef rsmi_status_t rsmi_dev_fan_speed_get_fn(uint32_t dv_ind, uint32_t sensor_ind, int64_t *speed);
typedef rsmi_status_t rsmi_dev_fan_speed_max_get_fn(uint32_t dv_ind, uint32_t sensor_ind,
                                                    uint64_t *max_speed);
typedef rsmi_status_t rsmi_dev_perf_level_get_fn(uint32_t dv_ind, rsmi_dev_perf_level_t *perf);
typedef rsmi_status_t rsmi_dev_gpu_clk_freq_get_fn(uint32_t dv_ind, rsmi_clk_type_t clk_type,
                                                   rsmi_frequencies_t *f);
typedef rsmi_status_t rsmi_dev_pci_bandwidth_get_fn(uint32_t dv_ind, rsmi_pcie_bandwidth_t *bandwidth);
typedef rsmi_status_t rsmi_dev_pci_throughput_get_fn(uint32_t dv_ind, uint64_t *sent, uint64_t *received,
                                                     uint64_t *max_pkt_sz);
typedef rsmi_status_t rsmi_dev_pci_replay_counter_get_fn(uint32_t dv_ind, uint64_t *counter);
/* procs NULL: *num_items = processes known. Otherwise up to *num_items entries, of which only process_id and
 * pasid are filled; more processes than room gives RSMI_STATUS_INSUFFICIENT_SIZE with *num_items unchanged.
 */
typedef rsmi_status_t rsmi_compute_process_info_get_fn(rsmi_process_info_t *procs, uint32_t *num_items);
/* vram_usage and sdma_usage summed over all GPUs, cu_occupancy over their compute units */
typedef rsmi_status_t rsmi_compute_process_info_by_pid_get_fn(uint32_t pid, rsmi_process_info_t *proc);
/* ROCm 5.7+ only: the same for one GPU */
typedef rsmi_status_t rsmi_compute_process_info_by_device_get_fn(uint32_t pid, uint32_t dv_ind,
                                                                 rsmi_process_info_t *proc);
typedef rsmi_status_t rsmi_compute_process_gpus_get_fn(uint32_t pid, uint32_t *dv_indices,
                                                       uint32_t *num_devices);

/* ---- the layout the code above relies on ---- */

_Static_assert(sizeof(rsmi_frequencies_t) == 264 && offsetof(rsmi_frequencies_t, frequency) == 8,
               "rsmi_frequencies_t (5.x)");
_Static_assert(sizeof(rsmi_frequencies_v6_t) == 280 && offsetof(rsmi_frequencies_v6_t, num_supported) == 4 &&
                   offsetof(rsmi_frequencies_v6_t, current) == 8 &&
                   offsetof(rsmi_frequencies_v6_t, frequency) == 16,
               "rsmi_frequencies_t (6.x)");
_Static_assert(sizeof(rsmi_pcie_bandwidth_t) == 392 && offsetof(rsmi_pcie_bandwidth_t, lanes) == 264,
               "rsmi_pcie_bandwidth_t (5.x)");
_Static_assert(sizeof(rsmi_pcie_bandwidth_v6_t) == 416 && offsetof(rsmi_pcie_bandwidth_v6_t, lanes) == 280,
               "rsmi_pcie_bandwidth_t (6.x)");
_Static_assert(sizeof(rsmi_process_info_t) == 32 && offsetof(rsmi_process_info_t, vram_usage) == 8 &&
                   offsetof(rsmi_process_info_t, sdma_usage) == 16 &&
                   offsetof(rsmi_process_info_t, cu_occupancy) == 24,
               "rsmi_process_info_t");
_Static_assert(sizeof(rsmi_version_t) == 24 && offsetof(rsmi_version_t, build) == 16, "rsmi_version_t");
_Static_assert(sizeof(float) == 4, "counter_resolution is a 32-bit float");

#endif
