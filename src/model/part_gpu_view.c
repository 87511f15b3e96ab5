/* SPDX-License-Identifier: MIT
 *
 * The `gpu` part's views (part_gpu_int.h): `gpu` (a row per device and sample), `gpu_process` (a row per
 * device, process and sample) and `gpu_mig` (a row per MIG instance and sample), from the last fed sample.
 */
#include "model/part_gpu_int.h"

#include <errno.h>
#include <string.h>

/* ---- views ------------------------------------------------------------------------------------------ */

enum {
    GV_VENDOR,
    GV_GPU,
    GV_LOST,
    GV_UTIL,
    GV_MEM_UTIL,
    GV_MEM_USED,
    GV_MEM_FREE,
    GV_MEM_TOTAL,
    GV_MEM_RESERVED,
    GV_BAR1,
    GV_JOB_MEM,
    GV_JOB_MAIN,
    GV_JOB_DESC,
    GV_OTHER_MEM,
    GV_JOB_UTIL,
    GV_JOB_MEM_UTIL,
    GV_POWER,
    GV_POWER_LIMIT,
    GV_ENERGY,
    GV_TEMP,
    GV_TEMP_JUNCTION,
    GV_TEMP_MEMORY,
    GV_FAN,
    GV_CLKG,
    GV_CLKSM,
    GV_CLKMEM,
    GV_CLKV,
    GV_PSTATE,
    GV_REASONS,
    GV_THROTTLED,
    GV_TX,
    GV_RX,
    GV_ENC,
    GV_DEC,
    GV_ECCC,
    GV_ECCU,
    GV__MAX
};
#define R(n, u, h)                                                                                           \
    {                                                                                                        \
        n, u, JS_REAL, JS_GAUGE, 0, h                                                                        \
    }
static const js_column_t gpu_view_cols[GV__MAX] = {
    [GV_VENDOR] = {"vendor", "text", JS_TEXT, JS_LABEL, 0, "nvidia or amd"},
    [GV_GPU] = {"gpu", "id", JS_INT, JS_LABEL, 0, "the library's device index"},
    [GV_LOST] = {"lost", "bool", JS_INT, JS_GAUGE, 0, "1 once the device is lost (NVIDIA: fell off the bus)"},
    [GV_UTIL] = R("util_fraction", "fraction", "share of time a kernel ran (NVML gpu, ROCm busy)"),
    [GV_MEM_UTIL] = R("mem_util_fraction", "fraction", "share of time device memory was read or written"),
    [GV_MEM_USED] = R("mem_used_bytes", "bytes", "device memory in use (NVML v1: reserved included)"),
    [GV_MEM_FREE] = R("mem_free_bytes", "bytes", "device memory free"),
    [GV_MEM_TOTAL] = R("mem_total_bytes", "bytes", "device memory"),
    [GV_MEM_RESERVED] = R("mem_reserved_bytes", "bytes", "reserved by the driver (NVML v2 only)"),
    [GV_BAR1] = R("bar1_used_bytes", "bytes", "BAR1 in use (NVIDIA)"),
    [GV_JOB_MEM] = R("job_mem_bytes", "bytes", "device memory of the scope's processes"),
    [GV_JOB_MAIN] = R("job_mem_main_bytes", "bytes", "device memory of the main process (root PID)"),
    [GV_JOB_DESC] = R("job_mem_descendants_bytes", "bytes", "device memory of the other members"),
    [GV_OTHER_MEM] = R("other_mem_bytes", "bytes", "device memory of processes outside the scope"),
    [GV_JOB_UTIL] = R("job_util_fraction", "fraction", "SM utilisation of the scope's processes (NVIDIA)"),
    [GV_JOB_MEM_UTIL] = R("job_mem_util_fraction", "fraction", "memory utilisation of the scope's processes"),
    [GV_POWER] = R("power_w", "W", "power draw"),
    [GV_POWER_LIMIT] = R("power_limit_w", "W", "enforced power limit / cap (at the cadence)"),
    [GV_ENERGY] = {"energy_j", "J", JS_REAL, JS_COUNTER, 0,
                   "energy since the first sample (device counter; integrated power without one)"},
    [GV_TEMP] = R("temp_c", "degC", "GPU die (NVIDIA) / edge (AMD) temperature"),
    [GV_TEMP_JUNCTION] = R("temp_junction_c", "degC", "junction (hotspot) temperature (AMD)"),
    [GV_TEMP_MEMORY] = R("temp_memory_c", "degC", "memory temperature (AMD)"),
    [GV_FAN] = R("fan_fraction", "fraction", "fan speed, share of its maximum"),
    [GV_CLKG] = R("clock_graphics_mhz", "MHz", "graphics clock (AMD: sclk)"),
    [GV_CLKSM] = R("clock_sm_mhz", "MHz", "SM clock (AMD: sclk)"),
    [GV_CLKMEM] = R("clock_mem_mhz", "MHz", "memory clock"),
    [GV_CLKV] = R("clock_video_mhz", "MHz", "video clock (NVIDIA)"),
    [GV_PSTATE] = R("pstate", "id", "performance state (NVIDIA)"),
    [GV_REASONS] = {"clocks_event_reasons", "bits", JS_INT, JS_GAUGE, 0, "NVML clock event reason bits"},
    [GV_THROTTLED] = {"throttled", "bool", JS_INT, JS_GAUGE, 0, "1 when a power or thermal reason is set"},
    [GV_TX] = R("pcie_tx_kb_per_s", "KB/s", "PCIe transmit, as NVML gives it (at the cadence)"),
    [GV_RX] = R("pcie_rx_kb_per_s", "KB/s", "PCIe receive (at the cadence)"),
    [GV_ENC] = R("encoder_fraction", "fraction", "encoder utilisation"),
    [GV_DEC] = R("decoder_fraction", "fraction", "decoder utilisation"),
    [GV_ECCC] = {"ecc_corrected", "count", JS_REAL, JS_COUNTER, 0,
                 "corrected ECC errors since the first sample"},
    [GV_ECCU] = {"ecc_uncorrected", "count", JS_REAL, JS_COUNTER, 0,
                 "uncorrected ECC errors since the first sample"},
};
static const js_table_t gpu_view = {"gpu", "GPUs, one row per device and sample", GV__MAX, gpu_view_cols};

enum {
    PV_VENDOR,
    PV_GPU,
    PV_PID,
    PV_TYPE,
    PV_JOB,
    PV_MAIN,
    PV_USED,
    PV_SM,
    PV_MEM,
    PV_ENC,
    PV_DEC,
    PV_CU,
    PV_SAMPLES,
    PV_GI,
    PV_CI,
    PV__MAX
};
static const js_column_t proc_view_cols[PV__MAX] = {
    [PV_VENDOR] = {"vendor", "text", JS_TEXT, JS_LABEL, 0, "nvidia or amd"},
    [PV_GPU] = {"gpu", "id", JS_INT, JS_LABEL, 0, "device index; missing: summed over the process's GPUs"},
    [PV_PID] = {"pid", "id", JS_INT, JS_LABEL, 0, "process ID (initial PID namespace)"},
    [PV_TYPE] = {"type", "text", JS_TEXT, JS_LABEL, 0,
                 "compute, graphics, compute+graphics, or none (utilisation "
                 "samples only)"},
    [PV_JOB] = {"job", "bool", JS_INT, JS_GAUGE, 0, "1: a member of the scope at this sample"},
    [PV_MAIN] = {"main", "bool", JS_INT, JS_GAUGE, 0, "1: the scope's root PID"},
    [PV_USED] = R("used_bytes", "bytes", "device memory of the process"),
    [PV_SM] = R("sm_fraction", "fraction", "mean SM utilisation of its samples in the interval (NVIDIA)"),
    [PV_MEM] = R("mem_fraction", "fraction", "mean memory utilisation (NVIDIA)"),
    [PV_ENC] = R("enc_fraction", "fraction", "mean encoder utilisation (NVIDIA)"),
    [PV_DEC] = R("dec_fraction", "fraction", "mean decoder utilisation (NVIDIA)"),
    [PV_CU] = R("cu_occupancy_fraction", "fraction", "share of compute units its waves occupy (AMD)"),
    [PV_SAMPLES] = {"util_samples", "count", JS_INT, JS_GAUGE, 0,
                    "utilisation samples in the interval (NVIDIA)"},
    [PV_GI] = {"gpu_instance", "id", JS_INT, JS_GAUGE, 0, "MIG GPU instance"},
    [PV_CI] = {"compute_instance", "id", JS_INT, JS_GAUGE, 0, "MIG compute instance"},
};
static const js_table_t proc_view = {
    "gpu_process", "processes on GPUs, one row per device, process and sample", PV__MAX, proc_view_cols};

enum { MV_GPU, MV_MIG, MV_GI, MV_CI, MV_USED, MV_TOTAL, MV_JOB, MV__MAX };
static const js_column_t mig_view_cols[MV__MAX] = {
    [MV_GPU] = {"gpu", "id", JS_INT, JS_LABEL, 0, "NVML index of the GPU"},
    [MV_MIG] = {"mig_index", "id", JS_INT, JS_LABEL, 0, "MIG device index"},
    [MV_GI] = {"gpu_instance", "id", JS_INT, JS_GAUGE, 0, "GPU instance"},
    [MV_CI] = {"compute_instance", "id", JS_INT, JS_GAUGE, 0, "compute instance"},
    [MV_USED] = R("mem_used_bytes", "bytes", "memory in use in the instance"),
    [MV_TOTAL] = R("mem_total_bytes", "bytes", "memory of the instance"),
    [MV_JOB] = R("job_mem_bytes", "bytes", "memory of the scope's processes in the instance"),
};
static const js_table_t mig_view = {"gpu_mig", "MIG instances, one row per instance and sample", MV__MAX,
                                    mig_view_cols};

const js_table_t *gpu_view_table(void *state, size_t i)
{
    (void)state;
    return i == 0 ? &gpu_view : i == 1 ? &proc_view : i == 2 ? &mig_view : NULL;
}

static void set_real(js_value_t *v, double d)
{
    if (!isnan(d))
        val_real(v, d);
}

static int str_of(js_rows_t *out, js_value_t *v, const char *s)
{
    return rows_set_str(out, v, s, strlen(s));
}

int gpu_view_fill(void *state, size_t i, js_rows_t *out)
{
    gpu_t *g = state;
    if (i == 0) {
        for (size_t k = 0; k < g->nd; k++) {
            const gdev_t *d = &g->d[k];
            if (!d->seen_now)
                continue;
            const gnow_t *n = &d->now;
            js_value_t *v = rows_add(out);
            if (!v || str_of(out, &v[GV_VENDOR], vendor_names[d->vendor]) < 0)
                return -ENOMEM;
            val_int(&v[GV_GPU], d->index);
            val_int(&v[GV_LOST], d->lost);
            const double vals[] = {
                [GV_UTIL] = n->util,
                [GV_MEM_UTIL] = n->mem_util,
                [GV_MEM_USED] = n->mem_used,
                [GV_MEM_FREE] = n->mem_free,
                [GV_MEM_TOTAL] = n->mem_total,
                [GV_MEM_RESERVED] = n->mem_reserved,
                [GV_BAR1] = n->bar1_used,
                [GV_JOB_MEM] = n->job_mem,
                [GV_JOB_MAIN] = n->job_main,
                [GV_JOB_DESC] = n->job_desc,
                [GV_OTHER_MEM] = n->other_mem,
                [GV_JOB_UTIL] = n->job_util,
                [GV_JOB_MEM_UTIL] = n->job_mem_util,
                [GV_POWER] = n->power_w,
                [GV_POWER_LIMIT] = n->power_limit_w,
                [GV_ENERGY] = n->energy_j,
                [GV_TEMP] = n->temp_c,
                [GV_TEMP_JUNCTION] = n->temp_junction_c,
                [GV_TEMP_MEMORY] = n->temp_memory_c,
                [GV_FAN] = n->fan,
                [GV_CLKG] = n->clk_graphics,
                [GV_CLKSM] = n->clk_sm,
                [GV_CLKMEM] = n->clk_mem,
                [GV_CLKV] = n->clk_video,
                [GV_PSTATE] = n->pstate,
                [GV_REASONS] = NAN,
                [GV_THROTTLED] = NAN,
                [GV_TX] = n->pcie_tx,
                [GV_RX] = n->pcie_rx,
                [GV_ENC] = n->enc,
                [GV_DEC] = n->dec,
                [GV_ECCC] = n->ecc_corr,
                [GV_ECCU] = n->ecc_uncorr,
            };
            for (int c = GV_UTIL; c < GV__MAX; c++)
                if (c != GV_REASONS && c != GV_THROTTLED)
                    set_real(&v[c], vals[c]);
            if (n->have_reasons) {
                val_int(&v[GV_REASONS], n->reasons);
                val_int(&v[GV_THROTTLED], n->throttled);
            }
        }
        return 0;
    }
    if (i == 1) {
        for (size_t k = 0; k < g->np; k++) {
            const gproc_t *p = &g->p[k];
            js_value_t *v = rows_add(out);
            const char *type = p->compute && p->graphics ? "compute+graphics"
                               : p->compute              ? "compute"
                               : p->graphics             ? "graphics"
                                                         : "none";
            if (!v || str_of(out, &v[PV_VENDOR], vendor_names[p->vendor]) < 0 ||
                str_of(out, &v[PV_TYPE], type) < 0)
                return -ENOMEM;
            if (p->gpu >= 0)
                val_int(&v[PV_GPU], p->gpu);
            val_int(&v[PV_PID], p->pid);
            if (!g->attribution_off[p->vendor]) {
                val_int(&v[PV_JOB], p->job);
                val_int(&v[PV_MAIN], p->main_proc);
            }
            set_real(&v[PV_USED], p->used);
            if (p->vendor == VENDOR_NVIDIA) {
                if (p->nutil) {
                    val_real(&v[PV_SM], p->sm / (double)p->nutil);
                    val_real(&v[PV_MEM], p->mem / (double)p->nutil);
                    val_real(&v[PV_ENC], p->enc / (double)p->nutil);
                    val_real(&v[PV_DEC], p->dec / (double)p->nutil);
                }
                val_int(&v[PV_SAMPLES], p->nutil);
            }
            set_real(&v[PV_CU], p->cu);
            if (p->gi >= 0)
                val_int(&v[PV_GI], p->gi);
            if (p->ci >= 0)
                val_int(&v[PV_CI], p->ci);
        }
        return 0;
    }
    for (size_t k = 0; k < g->nd; k++)
        for (size_t j = 0; j < g->d[k].nmig; j++) {
            const gmig_t *m = &g->d[k].mig[j];
            if (!m->seen_now)
                continue;
            js_value_t *v = rows_add(out);
            if (!v)
                return -ENOMEM;
            val_int(&v[MV_GPU], g->d[k].index);
            val_int(&v[MV_MIG], m->mig);
            if (m->gi >= 0)
                val_int(&v[MV_GI], m->gi);
            if (m->ci >= 0)
                val_int(&v[MV_CI], m->ci);
            set_real(&v[MV_USED], m->mem_used);
            set_real(&v[MV_TOTAL], m->mem_total);
            set_real(&v[MV_JOB], m->job_mem);
        }
    return 0;
}
