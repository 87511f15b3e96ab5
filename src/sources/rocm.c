/* SPDX-License-Identifier: MIT
 *
 * The `rocm` source (see rocm.h). At init: check that the amdgpu KFD is there (class/kfd under the sysfs
 * root: Debian's librocm_smi64 prints to stderr and fails on a machine without it, so rsmi_init is not even
 * tried; tests give a sysfs root that has it), load ROCm SMI (dlopen "librocm_smi64.so.1",
 * "librocm_smi64.so", "librocm_smi64.so.7", ".so.6", ".so.5"; $JOBSCOPE_ROCM_SMI_LIBRARY overrides), bind its
 * entry points (rsmi_init, rsmi_num_monitor_devices required), rsmi_init(0), the devices and the selection
 * (gpu_select.h; UUIDs are "GPU-" and the 16 hex digits of rsmi_dev_unique_id_get, as ROCR_VISIBLE_DEVICES
 * takes them). Init fails, leaving the source absent, as the nvml source's does.
 *
 * Library facts this code relies on (tests/fakes/README.md): ROCm 6 put a bool first in rsmi_frequencies_t
 * and made it 33 entries long, so clock and PCIe levels are read into rsmi_frequencies_any_t and the layout
 * is recognised (rsmi_frequencies_layout); rsmi_compute_process_info_get fills only pid and pasid, and
 * leaves *num_items unchanged on INSUFFICIENT_SIZE (the count comes from a NULL call); per-process VRAM comes
 * from rsmi_compute_process_info_by_device_get (5.7+) or, before it, rsmi_compute_process_info_by_pid_get
 * (summed over the process's GPUs); rsmi_dev_pci_throughput_get blocks for a second and is never called.
 */
#include "sources/rocm.h"

#include "sources/gpu_select.h"
#include "sources/rocm_smi_abi.h"
#include "sys/dlib.h"
#include "core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- tables ---- */

/* clang-format off */
#define G(n, u, h) {n, u, JS_INT, JS_GAUGE, 0, h}
/* clang-format on */

static const js_column_t dev_cols[RD__MAX] = {
    [RD_GPU] = {"gpu", "id", JS_INT, JS_LABEL, 0, "ROCm SMI device index"},
    [RD_LOST] =
        G("lost", "bool", "1 when every read of the GPU failed this sample after earlier ones succeeded"),
    [RD_BUSY] = G("busy_pct", "percent", "rsmi_dev_busy_percent_get: share of time the GPU was busy"),
    [RD_MEM_BUSY] = G("mem_busy_pct", "percent", "rsmi_dev_memory_busy_percent_get"),
    [RD_VRAM_TOTAL] = G("vram_total_bytes", "bytes", "rsmi_dev_memory_total_get VRAM"),
    [RD_VRAM_USED] = G("vram_used_bytes", "bytes", "rsmi_dev_memory_usage_get VRAM"),
    [RD_VIS_VRAM_USED] =
        G("vis_vram_used_bytes", "bytes", "rsmi_dev_memory_usage_get VIS_VRAM (CPU-visible)"),
    [RD_GTT_USED] = G("gtt_used_bytes", "bytes", "rsmi_dev_memory_usage_get GTT (system memory for the GPU)"),
    [RD_POWER] = G("power_uw", "uW", "rsmi_dev_power_ave_get: average socket power"),
    [RD_POWER_CAP] = G("power_cap_uw", "uW", "rsmi_dev_power_cap_get (status cadence)"),
    [RD_ENERGY] = {"energy_count", "count", JS_INT, JS_COUNTER, 64,
                   "rsmi_dev_energy_count_get accumulator, in units of energy_resolution_uj"},
    [RD_ENERGY_RES] = {"energy_resolution_uj", "uJ", JS_REAL, JS_GAUGE, 0, "microjoules per counter unit"},
    [RD_ENERGY_TS] = G("energy_timestamp_ns", "ns", "the accumulator's timestamp"),
    [RD_TEMP_EDGE] = G("temp_edge_mc", "mdegC", "rsmi_dev_temp_metric_get EDGE CURRENT"),
    [RD_TEMP_JUNCTION] = G("temp_junction_mc", "mdegC", "rsmi_dev_temp_metric_get JUNCTION (hotspot)"),
    [RD_TEMP_MEMORY] = G("temp_memory_mc", "mdegC", "rsmi_dev_temp_metric_get MEMORY"),
    [RD_FAN] = G("fan_speed", "count", "rsmi_dev_fan_speed_get: 0 .. fan_speed_max"),
    [RD_FAN_MAX] = G("fan_speed_max", "count", "rsmi_dev_fan_speed_max_get"),
    [RD_SCLK] = G("sclk_hz", "Hz", "rsmi_dev_gpu_clk_freq_get SYS: the current level's frequency"),
    [RD_MCLK] = G("mclk_hz", "Hz", "rsmi_dev_gpu_clk_freq_get MEM"),
    [RD_SOCCLK] = G("socclk_hz", "Hz", "rsmi_dev_gpu_clk_freq_get SOC (status cadence)"),
    [RD_FCLK] = G("fclk_hz", "Hz", "rsmi_dev_gpu_clk_freq_get DF, data fabric (status cadence)"),
    [RD_PERF_LEVEL] = G("perf_level", "id", "rsmi_dev_perf_level_get (0 auto, 1 low, 2 high, 3 manual, ...)"),
    [RD_PCIE_RATE] = G("pcie_rate_tps", "T/s",
                       "rsmi_dev_pci_bandwidth_get: transfer rate of the current link "
                       "level (status cadence)"),
    [RD_PCIE_LANES] = G("pcie_lanes", "count", "lanes of the current link level (status cadence)"),
    [RD_PCIE_REPLAY] = {"pcie_replay_count", "count", JS_INT, JS_COUNTER, 64,
                        "rsmi_dev_pci_replay_counter_get (status cadence)"},
    [RD_PROCS] = G("processes", "count",
                   "rocm_process rows with this gpu; missing when the process list could not "
                   "be read (then the GPU's processes are unknown, not none)"),
};
const js_table_t table_rocm_device = {
    "rocm_device", "AMD GPUs (ROCm SMI), one row per selected GPU and sample", RD__MAX, dev_cols};

static const js_column_t proc_cols[RP__MAX] = {
    [RP_GPU] = {"gpu", "id", JS_INT, JS_LABEL, 0,
                "ROCm SMI device index; missing: the figures are summed over "
                "the process's GPUs (library older than 5.7)"},
    [RP_PID] = {"pid", "id", JS_INT, JS_LABEL, 0, "process ID as kfd reports it (initial PID namespace)"},
    [RP_PASID] = G("pasid", "id", "process address space ID"),
    [RP_VRAM] = G("vram_bytes", "bytes", "VRAM the process uses"),
    [RP_SDMA] = {"sdma_us", "us", JS_INT, JS_COUNTER, 64, "time the process's SDMA (copy) engines ran"},
    [RP_CU] = G("cu_occupancy_pct", "percent", "share of the compute units its waves occupy"),
    [RP_GPUS] = G("gpus", "count", "GPUs the process uses (rsmi_compute_process_gpus_get)"),
};
const js_table_t table_rocm_process = {"rocm_process",
                                       "compute processes on AMD GPUs (kfd), one row per process "
                                       "and GPU",
                                       RP__MAX, proc_cols};

static const js_column_t status_cols[RS__MAX] = {
    [RS_GPU] = {"gpu", "id", JS_INT, JS_LABEL, 0, "ROCm SMI device index (-1: the library)"},
    [RS_METRIC] = {"metric", "text", JS_TEXT, JS_LABEL, 0, "what could not be read"},
    [RS_RC] = G("rc", "rsmi_status",
                "the rsmi_status_t (2 NOT_SUPPORTED, 4 PERMISSION, 4294967295 UNKNOWN_ERROR, "
                "1000 entry point missing: jobscope's code)"),
    [RS_ERROR] = {"error", "text", JS_TEXT, JS_GAUGE, 0, "rsmi_status_string of it"},
};
const js_table_t table_rocm_status = {"rocm_status",
                                      "why a ROCm SMI metric is missing: a row the first time a GPU "
                                      "and metric fail with a given status",
                                      RS__MAX, status_cols};

static const js_table_t *const rocm_tables[] = {&table_rocm_device, &table_rocm_process, &table_rocm_status,
                                                NULL};
enum { T_DEV, T_PROC, T_STATUS };

#define RSMI_NO_ENTRY_POINT 1000u /* jobscope's status for an entry point the library lacks */

/* ---- entry points ---- */

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
    rsmi_dev_pci_replay_counter_get_fn *dev_pci_replay_counter_get;
    rsmi_compute_process_info_get_fn *compute_process_info_get;
    rsmi_compute_process_info_by_pid_get_fn *compute_process_info_by_pid_get;
    rsmi_compute_process_info_by_device_get_fn *compute_process_info_by_device_get;
    rsmi_compute_process_gpus_get_fn *compute_process_gpus_get;
} rocm_api_t;

#define SYM(field, req)                                                                                      \
    {                                                                                                        \
        {"rsmi_" #field}, offsetof(rocm_api_t, field), req                                                   \
    }
static const js_dlsym_t rocm_syms[] = {
    SYM(init, true),
    SYM(shut_down, false),
    SYM(status_string, false),
    SYM(version_get, false),
    SYM(version_str_get, false),
    SYM(num_monitor_devices, true),
    SYM(dev_name_get, false),
    SYM(dev_serial_number_get, false),
    SYM(dev_id_get, false),
    SYM(dev_unique_id_get, false),
    SYM(dev_pci_id_get, false),
    SYM(dev_busy_percent_get, false),
    SYM(dev_memory_busy_percent_get, false),
    SYM(dev_memory_usage_get, false),
    SYM(dev_memory_total_get, false),
    SYM(dev_power_ave_get, false),
    SYM(dev_power_cap_get, false),
    SYM(dev_energy_count_get, false),
    SYM(dev_temp_metric_get, false),
    SYM(dev_fan_speed_get, false),
    SYM(dev_fan_speed_max_get, false),
    SYM(dev_perf_level_get, false),
    SYM(dev_gpu_clk_freq_get, false),
    SYM(dev_pci_bandwidth_get, false),
    SYM(dev_pci_replay_counter_get, false),
    SYM(compute_process_info_get, false),
    SYM(compute_process_info_by_pid_get, false),
    SYM(compute_process_info_by_device_get, false),
    SYM(compute_process_gpus_get, false),
};
#define NSYMS (sizeof(rocm_syms) / sizeof(rocm_syms[0]))

/* ---- metrics (keys of rocm_status) ---- */

enum {
    RM_BUSY,
    RM_MEM_BUSY,
    RM_VRAM,
    RM_VIS_VRAM,
    RM_GTT,
    RM_POWER,
    RM_POWER_CAP,
    RM_ENERGY,
    RM_TEMP_EDGE,
    RM_TEMP_JUNCTION,
    RM_TEMP_MEMORY,
    RM_FAN,
    RM_SCLK,
    RM_MCLK,
    RM_SOCCLK,
    RM_FCLK,
    RM_PERF_LEVEL,
    RM_PCIE_LINK,
    RM_PCIE_REPLAY,
    RM_PROCESSES,
    RM__MAX
};
static const char *const metric_names[RM__MAX] = {
    [RM_BUSY] = "busy",
    [RM_MEM_BUSY] = "memory_busy",
    [RM_VRAM] = "vram",
    [RM_VIS_VRAM] = "vis_vram",
    [RM_GTT] = "gtt",
    [RM_POWER] = "power",
    [RM_POWER_CAP] = "power_cap",
    [RM_ENERGY] = "energy",
    [RM_TEMP_EDGE] = "temperature_edge",
    [RM_TEMP_JUNCTION] = "temperature_junction",
    [RM_TEMP_MEMORY] = "temperature_memory",
    [RM_FAN] = "fan",
    [RM_SCLK] = "sclk",
    [RM_MCLK] = "mclk",
    [RM_SOCCLK] = "socclk",
    [RM_FCLK] = "fclk",
    [RM_PERF_LEVEL] = "perf_level",
    [RM_PCIE_LINK] = "pcie_link",
    [RM_PCIE_REPLAY] = "pcie_replay",
    [RM_PROCESSES] = "processes",
};

/* ---- state ---- */

typedef struct {
    uint32_t index;
    bool selected;
    bool skip[RM__MAX];
    uint32_t seen[RM__MAX];
    bool ever_read;         /* some read succeeded in an earlier sample */
    int ok_now, failed_now; /* reads this sample */
    char name[128];
    char uuid[40];
    char serial[64];
    uint64_t unique_id;
    bool have_unique_id;
} rdev_t;

typedef struct {
    js_dlib_t lib;
    rocm_api_t api;
    bool initialised;
    rdev_t *d;
    size_t n;
    gpu_sel_t sel;
    char unmatched[256];
    const char *pidns;
    rsmi_process_info_t *p;
    uint32_t pcap;
} rocm_t;

static const char *status_text(const rocm_t *st, rsmi_status_t rc)
{
    if (rc == RSMI_NO_ENTRY_POINT)
        return "entry point missing from this library";
    const char *s = NULL;
    if (st->api.status_string && st->api.status_string(rc, &s) == RSMI_STATUS_SUCCESS && s && *s)
        return s;
    switch (rc) {
    case RSMI_STATUS_NOT_SUPPORTED:
        return "RSMI_STATUS_NOT_SUPPORTED";
    case RSMI_STATUS_PERMISSION:
        return "RSMI_STATUS_PERMISSION";
    default:
        return "ROCm SMI error";
    }
}

static void status(rocm_t *st, rdev_t *d, int m, rsmi_status_t rc, js_rows_t *out)
{
    if (rc == RSMI_STATUS_NOT_SUPPORTED || rc == RSMI_STATUS_NOT_YET_IMPLEMENTED || rc == RSMI_NO_ENTRY_POINT)
        d->skip[m] = true;
    else
        d->failed_now++;
    gpu_status_once(out, &d->seen[m], d->index, metric_names[m], (int64_t)rc, status_text(st, rc));
}
_Static_assert(RS_GPU == 0 && RS_METRIC == 1 && RS_RC == 2 && RS_ERROR == 3, "gpu_status_once's columns");

static bool want(rocm_t *st, rdev_t *d, int m, bool bound, js_rows_t *out)
{
    if (d->skip[m])
        return false;
    if (!bound) {
        status(st, d, m, RSMI_NO_ENTRY_POINT, out);
        return false;
    }
    return true;
}

static bool got(rocm_t *st, rdev_t *d, int m, rsmi_status_t rc, js_rows_t *out)
{
    if (rc == RSMI_STATUS_SUCCESS) {
        d->ok_now++;
        return true;
    }
    status(st, d, m, rc, out);
    return false;
}

/* ---- init ---- */

static void rocm_fini(void *state)
{
    rocm_t *st = state;
    if (!st)
        return;
    if (st->initialised && st->api.shut_down)
        st->api.shut_down();
    dlib_close(&st->lib);
    free(st->d);
    free(st->p);
    free(st);
}

static int rocm_init(const js_ctx_t *ctx, void **ret_state, char *why, size_t whylen)
{
    static const char *const sonames[] = {"librocm_smi64.so.1", "librocm_smi64.so",   "librocm_smi64.so.7",
                                          "librocm_smi64.so.6", "librocm_smi64.so.5", NULL};
    static const char *const vars[] = {"ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES",
                                       NULL};
    int r;
    rocm_t *st = calloc(1, sizeof(*st));
    if (!st)
        return -ENOMEM;
    if ((r = gpu_select_source(ctx, vars, &st->sel, why, whylen)) < 0)
        goto fail;
    if (ctx->root.sys < 0 || faccessat(ctx->root.sys, "class/kfd", F_OK, 0) < 0) {
        why_set(why, whylen, "no AMD GPU driver (no class/kfd in sysfs)");
        r = -ENODEV;
        goto fail;
    }
    if ((r = gpu_load(&st->lib, "JOBSCOPE_ROCM_SMI_LIBRARY", sonames, rocm_syms, NSYMS, &st->api, "ROCm SMI",
                      why, whylen)) < 0)
        goto fail;
    rsmi_status_t rc = st->api.init(0);
    if (rc != RSMI_STATUS_SUCCESS) {
        why_set(why, whylen, "rsmi_init: %s", status_text(st, rc));
        r = -ENODEV;
        goto fail;
    }
    st->initialised = true;
    uint32_t count = 0;
    if ((rc = st->api.num_monitor_devices(&count)) != RSMI_STATUS_SUCCESS || count == 0) {
        why_set(why, whylen, "%s", rc != RSMI_STATUS_SUCCESS ? status_text(st, rc) : "no AMD GPU");
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
    for (uint32_t i = 0; i < count; i++) {
        rdev_t *d = &st->d[i];
        d->index = i;
        if (st->api.dev_name_get)
            st->api.dev_name_get(i, d->name, sizeof(d->name));
        if (st->api.dev_serial_number_get)
            st->api.dev_serial_number_get(i, d->serial, sizeof(d->serial));
        if (st->api.dev_unique_id_get && st->api.dev_unique_id_get(i, &d->unique_id) == RSMI_STATUS_SUCCESS) {
            d->have_unique_id = true;
            snprintf(d->uuid, sizeof(d->uuid), "GPU-%016" PRIx64, d->unique_id);
        }
        ids[i] = (gpu_dev_id_t){.index = i, .uuid = d->uuid};
    }
    bool sel[256];
    size_t nsel = gpu_select_apply(&st->sel, ids, count, sel, st->unmatched, sizeof(st->unmatched));
    for (uint32_t i = 0; i < count; i++)
        st->d[i].selected = sel[i];
    if (!nsel) {
        char what[300];
        gpu_select_describe(&st->sel, what, sizeof(what));
        why_set(why, whylen, "no AMD GPU selected by %s (%u found)", what, count);
        r = -ENODEV;
        goto fail;
    }
    st->pidns = gpu_pid_namespace(&ctx->root);
    *ret_state = st;
    return 0;
fail:
    rocm_fini(st);
    return r;
}

/* ---- collect ---- */

/* level_of: the current level of a frequency table in either layout: its frequency, and lanes[] index */
static bool level_of(const rsmi_frequencies_any_t *f, uint64_t *ret_freq, uint32_t *ret_idx)
{
    int layout = rsmi_frequencies_layout(f);
    uint32_t n, cur;
    const uint64_t *freq;
    if (layout == 5) {
        n = f->v5.num_supported;
        cur = f->v5.current;
        freq = f->v5.frequency;
    } else if (layout == 6) {
        n = f->v6.num_supported;
        cur = f->v6.current;
        freq = f->v6.frequency;
    } else {
        return false;
    }
    if (cur >= n)
        return false;
    *ret_freq = freq[cur];
    *ret_idx = cur;
    return true;
}

static void read_clock(rocm_t *st, rdev_t *d, int m, rsmi_clk_type_t type, js_value_t *v, js_rows_t *so)
{
    if (!want(st, d, m, st->api.dev_gpu_clk_freq_get != NULL, so))
        return;
    rsmi_frequencies_any_t f;
    memset(&f, 0, sizeof(f));
    if (!got(st, d, m, st->api.dev_gpu_clk_freq_get(d->index, type, &f.v5), so))
        return;
    uint64_t hz;
    uint32_t idx;
    if (level_of(&f, &hz, &idx))
        val_int(v, (int64_t)hz);
}

static void read_device(rocm_t *st, rdev_t *d, js_value_t *v, bool full, js_rows_t *so)
{
    const rocm_api_t *a = &st->api;
    uint32_t i = d->index, u32;
    uint64_t u64;
    int64_t s64;
    if (want(st, d, RM_BUSY, a->dev_busy_percent_get != NULL, so) &&
        got(st, d, RM_BUSY, a->dev_busy_percent_get(i, &u32), so))
        val_int(&v[RD_BUSY], u32);
    if (want(st, d, RM_MEM_BUSY, a->dev_memory_busy_percent_get != NULL, so) &&
        got(st, d, RM_MEM_BUSY, a->dev_memory_busy_percent_get(i, &u32), so))
        val_int(&v[RD_MEM_BUSY], u32);
    if (want(st, d, RM_VRAM, a->dev_memory_usage_get != NULL, so) &&
        got(st, d, RM_VRAM, a->dev_memory_usage_get(i, RSMI_MEM_TYPE_VRAM, &u64), so)) {
        val_int(&v[RD_VRAM_USED], (int64_t)u64);
        if (a->dev_memory_total_get &&
            a->dev_memory_total_get(i, RSMI_MEM_TYPE_VRAM, &u64) == RSMI_STATUS_SUCCESS)
            val_int(&v[RD_VRAM_TOTAL], (int64_t)u64);
    }
    if (want(st, d, RM_VIS_VRAM, a->dev_memory_usage_get != NULL, so) &&
        got(st, d, RM_VIS_VRAM, a->dev_memory_usage_get(i, RSMI_MEM_TYPE_VIS_VRAM, &u64), so))
        val_int(&v[RD_VIS_VRAM_USED], (int64_t)u64);
    if (want(st, d, RM_GTT, a->dev_memory_usage_get != NULL, so) &&
        got(st, d, RM_GTT, a->dev_memory_usage_get(i, RSMI_MEM_TYPE_GTT, &u64), so))
        val_int(&v[RD_GTT_USED], (int64_t)u64);
    if (want(st, d, RM_POWER, a->dev_power_ave_get != NULL, so) &&
        got(st, d, RM_POWER, a->dev_power_ave_get(i, 0, &u64), so))
        val_int(&v[RD_POWER], (int64_t)u64);
    if (full && want(st, d, RM_POWER_CAP, a->dev_power_cap_get != NULL, so) &&
        got(st, d, RM_POWER_CAP, a->dev_power_cap_get(i, 0, &u64), so))
        val_int(&v[RD_POWER_CAP], (int64_t)u64);
    float res = 0;
    uint64_t ts = 0;
    if (want(st, d, RM_ENERGY, a->dev_energy_count_get != NULL, so) &&
        got(st, d, RM_ENERGY, a->dev_energy_count_get(i, &u64, &res, &ts), so)) {
        val_int(&v[RD_ENERGY], (int64_t)u64);
        if (res > 0)
            val_real(&v[RD_ENERGY_RES], res);
        val_int(&v[RD_ENERGY_TS], (int64_t)ts);
    }
    static const struct {
        int metric, col;
        uint32_t sensor;
    } temps[] = {{RM_TEMP_EDGE, RD_TEMP_EDGE, RSMI_TEMP_TYPE_EDGE},
                 {RM_TEMP_JUNCTION, RD_TEMP_JUNCTION, RSMI_TEMP_TYPE_JUNCTION},
                 {RM_TEMP_MEMORY, RD_TEMP_MEMORY, RSMI_TEMP_TYPE_MEMORY}};
    for (size_t k = 0; k < 3; k++)
        if (want(st, d, temps[k].metric, a->dev_temp_metric_get != NULL, so) &&
            got(st, d, temps[k].metric, a->dev_temp_metric_get(i, temps[k].sensor, RSMI_TEMP_CURRENT, &s64),
                so))
            val_int(&v[temps[k].col], s64);
    if (want(st, d, RM_FAN, a->dev_fan_speed_get != NULL, so) &&
        got(st, d, RM_FAN, a->dev_fan_speed_get(i, 0, &s64), so)) {
        val_int(&v[RD_FAN], s64);
        if (a->dev_fan_speed_max_get && a->dev_fan_speed_max_get(i, 0, &u64) == RSMI_STATUS_SUCCESS)
            val_int(&v[RD_FAN_MAX], (int64_t)u64);
    }
    read_clock(st, d, RM_SCLK, RSMI_CLK_TYPE_SYS, &v[RD_SCLK], so);
    read_clock(st, d, RM_MCLK, RSMI_CLK_TYPE_MEM, &v[RD_MCLK], so);
    if (full) {
        read_clock(st, d, RM_SOCCLK, RSMI_CLK_TYPE_SOC, &v[RD_SOCCLK], so);
        read_clock(st, d, RM_FCLK, RSMI_CLK_TYPE_DF, &v[RD_FCLK], so);
    }
    rsmi_dev_perf_level_t perf;
    if (want(st, d, RM_PERF_LEVEL, a->dev_perf_level_get != NULL, so) &&
        got(st, d, RM_PERF_LEVEL, a->dev_perf_level_get(i, &perf), so))
        val_int(&v[RD_PERF_LEVEL], perf);
    if (full && want(st, d, RM_PCIE_LINK, a->dev_pci_bandwidth_get != NULL, so)) {
        rsmi_pcie_bandwidth_any_t b;
        memset(&b, 0, sizeof(b));
        if (got(st, d, RM_PCIE_LINK, a->dev_pci_bandwidth_get(i, &b.v5), so)) {
            uint64_t rate;
            uint32_t idx;
            rsmi_frequencies_any_t f; /* transfer_rate starts both layouts of the struct */
            memcpy(&f, &b, sizeof(f));
            int layout = rsmi_frequencies_layout(&f);
            if (level_of(&f, &rate, &idx)) {
                val_int(&v[RD_PCIE_RATE], (int64_t)rate);
                val_int(&v[RD_PCIE_LANES], layout == 6 ? b.v6.lanes[idx] : b.v5.lanes[idx]);
            }
        }
    }
    if (full && want(st, d, RM_PCIE_REPLAY, a->dev_pci_replay_counter_get != NULL, so) &&
        got(st, d, RM_PCIE_REPLAY, a->dev_pci_replay_counter_get(i, &u64), so))
        val_int(&v[RD_PCIE_REPLAY], (int64_t)u64);
}

static rdev_t *dev_of(rocm_t *st, uint32_t index)
{
    return index < st->n ? &st->d[index] : NULL;
}

static int proc_row(js_rows_t *out, int64_t gpu, const rsmi_process_info_t *info, uint32_t ngpus)
{
    js_value_t *v = rows_add(out);
    if (!v)
        return -ENOMEM;
    if (gpu >= 0)
        val_int(&v[RP_GPU], gpu);
    val_int(&v[RP_PID], info->process_id);
    val_int(&v[RP_PASID], info->pasid);
    val_int(&v[RP_VRAM], (int64_t)info->vram_usage);
    val_int(&v[RP_SDMA], (int64_t)info->sdma_usage);
    val_int(&v[RP_CU], info->cu_occupancy);
    if (ngpus)
        val_int(&v[RP_GPUS], ngpus);
    return 0;
}

/* read_procs: the compute processes (each listed once by kfd) and their use of each selected GPU; *ret_ok
 * tells whether the list was read. Returns 0 or -ENOMEM. */
static int read_procs(rocm_t *st, js_rows_t *out, js_rows_t *so, bool *ret_ok)
{
    const rocm_api_t *a = &st->api;
    rdev_t *first = NULL; /* status rows of the process calls go under the first selected GPU */
    for (size_t i = 0; i < st->n && !first; i++)
        if (st->d[i].selected)
            first = &st->d[i];
    if (!first || !want(st, first, RM_PROCESSES, a->compute_process_info_get != NULL, so))
        return 0;
    uint32_t n = 0;
    rsmi_status_t rc = RSMI_STATUS_INSUFFICIENT_SIZE;
    for (int tries = 0; tries < 4 && rc == RSMI_STATUS_INSUFFICIENT_SIZE; tries++) {
        uint32_t need = 0;
        if ((rc = a->compute_process_info_get(NULL, &need)) != RSMI_STATUS_SUCCESS)
            break;
        if (need == 0) {
            n = 0;
            break;
        }
        if (need > st->pcap) {
            uint32_t cap = need + 16;
            rsmi_process_info_t *p = realloc(st->p, cap * sizeof(*p));
            if (!p)
                return -ENOMEM;
            st->p = p;
            st->pcap = cap;
        }
        memset(st->p, 0, st->pcap * sizeof(*st->p));
        n = st->pcap;
        rc = a->compute_process_info_get(st->p, &n); /* INSUFFICIENT_SIZE: more started; count again */
    }
    if (!got(st, first, RM_PROCESSES, rc, so))
        return 0;
    *ret_ok = true;
    for (uint32_t k = 0; k < n && k < st->pcap; k++) {
        uint32_t pid = st->p[k].process_id;
        uint32_t devs[64], nd = 64;
        bool have_devs =
            a->compute_process_gpus_get && a->compute_process_gpus_get(pid, devs, &nd) == RSMI_STATUS_SUCCESS;
        if (have_devs && nd > 64)
            nd = 64;
        rsmi_process_info_t info;
        int r;
        if (a->compute_process_info_by_device_get) {
            for (size_t di = 0; di < st->n; di++) {
                rdev_t *d = &st->d[di];
                if (!d->selected)
                    continue;
                bool uses = !have_devs;
                for (uint32_t j = 0; j < nd && have_devs && !uses; j++)
                    uses = devs[j] == d->index;
                if (!uses ||
                    a->compute_process_info_by_device_get(pid, d->index, &info) != RSMI_STATUS_SUCCESS)
                    continue;
                if (!have_devs && info.vram_usage == 0 && info.cu_occupancy == 0 && info.sdma_usage == 0)
                    continue; /* not on this GPU (the call gives zeros then) */
                info.process_id = pid;
                if ((r = proc_row(out, d->index, &info, have_devs ? nd : 0)) < 0)
                    return r;
            }
        } else if (a->compute_process_info_by_pid_get &&
                   a->compute_process_info_by_pid_get(pid, &info) == RSMI_STATUS_SUCCESS) {
            bool any_selected = !have_devs;
            for (uint32_t j = 0; j < nd && have_devs; j++) {
                rdev_t *d = dev_of(st, devs[j]);
                any_selected |= d && d->selected;
            }
            if (!any_selected)
                continue;
            info.process_id = pid;
            if ((r = proc_row(out, have_devs && nd == 1 ? (int64_t)devs[0] : -1, &info, have_devs ? nd : 0)) <
                0)
                return r;
        }
    }
    return 0;
}

static int rocm_collect(void *state, js_ctx_t *ctx, js_rows_t *const *rows)
{
    rocm_t *st = state;
    unsigned every = ctx->status_every ? ctx->status_every : 1;
    bool full = ctx->seq == 0 || ctx->final || ctx->seq % every == 0;
    for (size_t i = 0; i < st->n; i++) {
        rdev_t *d = &st->d[i];
        if (!d->selected)
            continue;
        js_value_t *v = rows_add(rows[T_DEV]);
        if (!v)
            return -ENOMEM;
        val_int(&v[RD_GPU], d->index);
        d->ok_now = d->failed_now = 0;
        read_device(st, d, v, full, rows[T_STATUS]);
        val_int(&v[RD_LOST], d->ever_read && d->ok_now == 0 && d->failed_now > 0);
        d->ever_read |= d->ok_now > 0;
    }
    bool listed = false;
    int r = read_procs(st, rows[T_PROC], rows[T_STATUS], &listed);
    for (size_t i = 0; r == 0 && listed && i < rows[T_DEV]->nrows; i++) {
        js_value_t *v = rows_row(rows[T_DEV], i);
        int64_t n = 0;
        for (size_t k = 0; k < rows[T_PROC]->nrows; k++) {
            const js_value_t *p = rows_row(rows[T_PROC], k);
            n += p[RP_GPU].present && p[RP_GPU].i == v[RD_GPU].i;
        }
        val_int(&v[RD_PROCS], n);
    }
    return r;
}

/* ---- inventory ---- */

#define INV(key, ...) (r == 0 ? (r = inventory_addf(inv, "rocm", key, __VA_ARGS__)) : r)

static int rocm_inventory(void *state, const js_ctx_t *ctx, js_rows_t *inv)
{
    (void)ctx;
    rocm_t *st = state;
    const rocm_api_t *a = &st->api;
    int r = 0;
    char key[128], what[320];
    INV("library", "%s", st->lib.path[0] ? st->lib.path : st->lib.opened_as);
    rsmi_version_t ver;
    if (a->version_get && a->version_get(&ver) == RSMI_STATUS_SUCCESS)
        INV("library_version", "%u.%u.%u", ver.major, ver.minor, ver.patch);
    char drv[64];
    if (a->version_str_get &&
        a->version_str_get(RSMI_SW_COMP_DRIVER, drv, sizeof(drv)) == RSMI_STATUS_SUCCESS)
        INV("driver_version", "%s", drv);
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
    INV("process_vram", "%s",
        a->compute_process_info_by_device_get ? "per GPU (by_device_get)"
        : a->compute_process_info_by_pid_get  ? "summed over a process's GPUs (by_pid_get)"
                                              : "not available");
    for (size_t i = 0; r == 0 && i < st->n; i++) {
        const rdev_t *d = &st->d[i];
        unsigned n = d->index;
#define DKEY(suffix) (snprintf(key, sizeof(key), "gpu.%u." suffix, n), key)
        if (d->name[0])
            INV(DKEY("name"), "%s", d->name);
        if (d->uuid[0])
            INV(DKEY("uuid"), "%s", d->uuid);
        if (d->serial[0])
            INV(DKEY("serial"), "%s", d->serial);
        INV(DKEY("selected"), "%d", d->selected);
        uint64_t u64;
        uint16_t id;
        if (a->dev_pci_id_get && a->dev_pci_id_get(n, &u64) == RSMI_STATUS_SUCCESS)
            INV(DKEY("pci_bus_id"), "%04x:%02x:%02x.%x", (unsigned)(u64 >> 32) & 0xffffu,
                (unsigned)(u64 >> 8) & 0xffu, (unsigned)(u64 >> 3) & 0x1fu, (unsigned)u64 & 0x7u);
        if (a->dev_id_get && a->dev_id_get(n, &id) == RSMI_STATUS_SUCCESS)
            INV(DKEY("pci_device_id"), "0x%04x", id);
        if (a->dev_memory_total_get &&
            a->dev_memory_total_get(n, RSMI_MEM_TYPE_VRAM, &u64) == RSMI_STATUS_SUCCESS)
            INV(DKEY("memory_total_bytes"), "%" PRIu64, u64);
        if (a->dev_memory_total_get &&
            a->dev_memory_total_get(n, RSMI_MEM_TYPE_GTT, &u64) == RSMI_STATUS_SUCCESS)
            INV(DKEY("gtt_total_bytes"), "%" PRIu64, u64);
        if (a->dev_power_cap_get && a->dev_power_cap_get(n, 0, &u64) == RSMI_STATUS_SUCCESS)
            INV(DKEY("power_cap_uw"), "%" PRIu64, u64);
#undef DKEY
    }
    return r;
}

const js_source_t source_rocm = {
    .name = "rocm",
    .help = "AMD GPUs through ROCm SMI (dlopen): busy, VRAM, power, energy, temperatures, clocks, PCIe link, "
            "and the compute processes on them",
    .tables = rocm_tables,
    .gpu = true,
    .init = rocm_init,
    .collect = rocm_collect,
    .fini = rocm_fini,
    .inventory = rocm_inventory,
};
