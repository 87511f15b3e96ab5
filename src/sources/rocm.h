/* SPDX-License-Identifier: MIT
 *
 * The `rocm` source: AMD GPUs through ROCm SMI (librocm_smi64.so, loaded with dlopen;
 * $JOBSCOPE_ROCM_SMI_LIBRARY names another file). Values are stored as ROCm SMI reports them, units in the
 * column names (uW, millidegrees, Hz, transfers/s, units of the energy counter's resolution); the `gpu` model
 * part (src/model/part_gpu.c) reads these tables by column name. The enums below are for the tests.
 *
 * Tables:
 *   rocm_device   one row per selected GPU and sample
 *   rocm_process  one row per compute process (kfd) and GPU, host PIDs; with a library older than 5.7
 *                 (no rsmi_compute_process_info_by_device_get) a process on several GPUs has one row with
 *                 `gpu` missing and its VRAM summed over them (all the library can tell)
 *   rocm_status   one row the first time a (GPU, metric) call fails with a given rsmi_status_t
 *
 * Cadence: busy, memory, power, energy, temperatures, fan, sclk and mclk every sample; the power cap, SoC and
 * fabric clocks, PCIe link and replay counter at the --status-every cadence, the first and the closing
 * sample. rsmi_dev_pci_throughput_get is never called: it blocks for about a second (the driver counts PCIe
 * traffic over one second inside the call). A metric that returned NOT_SUPPORTED or NOT_YET_IMPLEMENTED, or
 * whose entry point is missing, is not asked again on that GPU.
 */
#ifndef JOBSCOPE_SOURCES_ROCM_H
#define JOBSCOPE_SOURCES_ROCM_H

#include "core/source.h"

/* table `rocm_device` */
enum {
    RD_GPU,           /* label: ROCm SMI device index */
    RD_LOST,          /* 1 when every read of this GPU failed this sample after earlier ones succeeded */
    RD_BUSY,          /* percent */
    RD_MEM_BUSY,      /* percent */
    RD_VRAM_TOTAL,    /* bytes */
    RD_VRAM_USED,     /* bytes */
    RD_VIS_VRAM_USED, /* bytes (CPU-visible VRAM) */
    RD_GTT_USED,      /* bytes (system memory mapped for the GPU) */
    RD_POWER,         /* uW, average socket power */
    RD_POWER_CAP,     /* uW; cadence */
    RD_ENERGY,        /* counter, in units of energy_resolution_uj */
    RD_ENERGY_RES,    /* uJ per counter unit (REAL) */
    RD_ENERGY_TS,     /* ns, the counter's timestamp */
    RD_TEMP_EDGE,     /* millidegrees C */
    RD_TEMP_JUNCTION, /* millidegrees C (hotspot) */
    RD_TEMP_MEMORY,   /* millidegrees C */
    RD_FAN,           /* 0 .. fan_speed_max */
    RD_FAN_MAX,       /* usually 255 */
    RD_SCLK,          /* Hz, current graphics (shader) clock level */
    RD_MCLK,          /* Hz, memory clock */
    RD_SOCCLK,        /* Hz; cadence */
    RD_FCLK,          /* Hz, data fabric; cadence */
    RD_PERF_LEVEL,    /* rsmi_dev_perf_level_t */
    RD_PCIE_RATE,     /* transfers/s of the current PCIe link level; cadence */
    RD_PCIE_LANES,    /* lanes of it; cadence */
    RD_PCIE_REPLAY,   /* count; counter; cadence */
    RD_PROCS,         /* rocm_process rows on this GPU; missing when the process list could not be read */
    RD__MAX
};

/* table `rocm_process` */
enum { RP_GPU, RP_PID, RP_PASID, RP_VRAM, RP_SDMA, RP_CU, RP_GPUS, RP__MAX };

/* table `rocm_status` */
enum { RS_GPU, RS_METRIC, RS_RC, RS_ERROR, RS__MAX };

extern const js_table_t table_rocm_device, table_rocm_process, table_rocm_status;
extern const js_source_t source_rocm;

#endif
