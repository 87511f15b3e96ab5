/* SPDX-License-Identifier: MIT
 *
 * The `nvml` source: NVIDIA GPUs through NVML (libnvidia-ml.so.1, loaded with dlopen; $JOBSCOPE_NVML_LIBRARY
 * names another file). Values are stored as NVML reports them, units in the column names (mW, mJ, MHz,
 * percent, KB/s, ns); the `gpu` model part (src/model/part_gpu.c) derives rates, energy, throttle time and
 * the job's share, reading these tables by column name. The column enums below are for the tests.
 *
 * Tables:
 *   nvml_device   one row per selected GPU and sample (a lost GPU: index and lost = 1 only)
 *   nvml_process  one row per process NVML lists on a selected GPU (compute and graphics lists), host PIDs
 *   nvml_putil    one row per process-utilisation sample NVML returns newer than the last one seen
 *   nvml_mig      one row per MIG instance of a selected GPU and sample
 *   nvml_status   one row the first time a (GPU, metric) call fails with a given NVML return code (the
 *                 reason that metric is missing: NOT_SUPPORTED, NO_PERMISSION, GPU_IS_LOST, or
 *                 FUNCTION_NOT_FOUND for an entry point this library does not have)
 *
 * Cadence: everything every sample, except PCIe throughput (each call measures for 20 ms inside the driver),
 * the PCIe replay counter, ECC counts and the enforced power limit, read at the --status-every cadence, at
 * the first and at the closing sample. A metric that returned NOT_SUPPORTED, or whose entry point is
 * missing, is not asked again on that GPU. A GPU that returned GPU_IS_LOST is not asked anything again.
 */
#ifndef JOBSCOPE_SOURCES_NVML_H
#define JOBSCOPE_SOURCES_NVML_H

#include "core/source.h"

/* table `nvml_device` */
enum {
    NVD_INDEX,                  /* label: NVML index (PCI bus order) */
    NVD_LOST,                   /* 1 once the GPU returned GPU_IS_LOST (fell off the bus), else 0 */
    NVD_GPU_UTIL,               /* percent of the driver's last period a kernel ran */
    NVD_MEM_UTIL,               /* percent of it device memory was read or written */
    NVD_MEM_TOTAL,              /* bytes */
    NVD_MEM_USED,               /* bytes; includes reserved memory when mem_used_includes_reserved = 1 */
    NVD_MEM_FREE,               /* bytes */
    NVD_MEM_RESERVED,           /* bytes, nvmlDeviceGetMemoryInfo_v2 only */
    NVD_MEM_USED_INCL_RESERVED, /* 1: v1 memory info (used = total - free); 0: v2 */
    NVD_BAR1_USED,              /* bytes */
    NVD_BAR1_TOTAL,             /* bytes */
    NVD_POWER,                  /* mW */
    NVD_POWER_LIMIT,            /* mW, enforced; cadence */
    NVD_ENERGY,                 /* mJ since the driver was loaded (restarts at a reload); counter */
    NVD_TEMP,                   /* degrees C, the die */
    NVD_FAN,                    /* percent of the fan's maximum (may exceed 100) */
    NVD_CLK_GRAPHICS,           /* MHz */
    NVD_CLK_SM,
    NVD_CLK_MEM,
    NVD_CLK_VIDEO,
    NVD_PSTATE,        /* 0 (max performance) .. 15, 32 unknown */
    NVD_REASONS,       /* clock event (throttle) reason bits, nvmlClocksEventReason* */
    NVD_VIOL_POWER,    /* ns below requested clocks because of the power limit; counter */
    NVD_VIOL_THERMAL,  /* ns because of temperature; counter */
    NVD_PCIE_TX,       /* KB/s over 20 ms; cadence */
    NVD_PCIE_RX,       /* KB/s; cadence */
    NVD_PCIE_REPLAY,   /* count; counter (32 bits); cadence */
    NVD_ECC_CORR,      /* volatile corrected (single-bit) count; restarts at a reload; cadence */
    NVD_ECC_UNCORR,    /* volatile uncorrected (double-bit) count; cadence */
    NVD_ENC,           /* encoder utilisation, percent */
    NVD_DEC,           /* decoder utilisation, percent */
    NVD_MIG_MODE,      /* current MIG mode: 1 enabled, 0 disabled */
    NVD_PUTIL_SAMPLES, /* process-utilisation samples returned this time (0: none newer), missing when the
                          call failed or is not supported */
    NVD_PROCS,         /* processes listed (compute + graphics entries), missing when a list failed: the
                          model then knows no process on the GPU this sample (not zero) */
    NVD__MAX
};

/* table `nvml_process` */
enum { NVP_INDEX, NVP_PID, NVP_TYPE, NVP_USED, NVP_GI, NVP_CI, NVP__MAX };

/* table `nvml_putil` */
enum { NVU_INDEX, NVU_PID, NVU_TS, NVU_SM, NVU_MEM, NVU_ENC, NVU_DEC, NVU__MAX };

/* table `nvml_mig` */
enum { NVM_INDEX, NVM_MIG, NVM_GI, NVM_CI, NVM_MEM_TOTAL, NVM_MEM_USED, NVM__MAX };

/* table `nvml_status` */
enum { NVS_INDEX, NVS_METRIC, NVS_RC, NVS_ERROR, NVS__MAX };

extern const js_table_t table_nvml_device, table_nvml_process, table_nvml_putil, table_nvml_mig,
    table_nvml_status;
extern const js_source_t source_nvml;

#endif
