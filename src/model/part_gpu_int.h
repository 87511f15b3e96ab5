/* SPDX-License-Identifier: MIT
 *
 * The inside of the `gpu` model part (part_gpu.c), shared by its files and by nothing else: the thresholds of
 * its flags, the state of each device and process, and the source columns it reads, bound by name.
 * part_gpu_feed.c turns each sample's nvml_* and rocm_* rows into the devices' state; part_gpu_view.c builds
 * the `gpu`, `gpu_process` and `gpu_mig` views; part_gpu.c makes the summary and holds the part.
 */
#ifndef JOBSCOPE_MODEL_PART_GPU_INT_H
#define JOBSCOPE_MODEL_PART_GPU_INT_H

#include "model/model.h"
#include "model/track.h"
#include "core/util.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#define IDLE_UTIL 0.05      /* "idle": utilisation under 5% */
#define IDLE_SHARE 0.5      /* ... for more than half of the samples with a reading */
#define FULL_SHARE 0.95     /* memory within 5% of the total */
#define THROTTLE_SHARE 0.10 /* throttled more than 10% of the time */
#define HELD_SHARE 0.01     /* without attribution, "memory held": over 1% of the device in use */

typedef enum { VENDOR_NVIDIA, VENDOR_AMD, VENDOR_MAX } vendor_t;
static const char *const vendor_names[VENDOR_MAX] __attribute__((unused)) = {"nvidia", "amd"};

/* clock event reasons (nvmlClocksEventReason*), in bit order */
#define NREASONS 9
static const char *const reason_names[NREASONS] __attribute__((unused)) = {"gpu_idle",
                                                                           "applications_clocks_setting",
                                                                           "sw_power_cap",
                                                                           "hw_slowdown",
                                                                           "sync_boost",
                                                                           "sw_thermal_slowdown",
                                                                           "hw_thermal_slowdown",
                                                                           "hw_power_brake_slowdown",
                                                                           "display_clock_setting"};
#define THROTTLE_BITS (0x4ULL | 0x8ULL | 0x20ULL | 0x40ULL | 0x80ULL)

typedef struct {
    double sum, max;
    int64_t n;
} stat_t;

static inline void stat_init(stat_t *s)
{
    s->sum = 0;
    s->max = NAN;
    s->n = 0;
}

static inline void stat_add(stat_t *s, double v)
{
    if (isnan(v))
        return;
    s->sum += v;
    s->n++;
    if (isnan(s->max) || v > s->max)
        s->max = v;
}

static inline double stat_mean(const stat_t *s)
{
    return s->n ? s->sum / (double)s->n : NAN;
}

/* the per-sample values of a device, in the view's units; NAN = missing */
typedef struct {
    double util, mem_util, mem_used, mem_free, mem_total, mem_reserved, bar1_used, power_w, power_limit_w;
    double temp_c, temp_junction_c, temp_memory_c, fan, clk_graphics, clk_sm, clk_mem, clk_video, pstate;
    double pcie_tx, pcie_rx, enc, dec, energy_j, ecc_corr, ecc_uncorr;
    double job_mem, job_main, job_desc, other_mem, job_util, job_mem_util;
    double procs;
    int64_t reasons;
    bool have_reasons, throttled;
} gnow_t;

typedef struct {
    int64_t mig;
    int64_t gi, ci;
    double mem_total, mem_used, peak_used, job_mem, job_peak;
    char name[128], uuid[96];
    bool seen_now;
} gmig_t;

typedef struct {
    char metric[48];
    int64_t rc;
    char text[120];
} gerr_t;

typedef struct {
    vendor_t vendor;
    int64_t index;
    char name[128], uuid[96], pci[48];
    double inv_mem_total, inv_power_limit_w;
    bool seen_now, lost;
    double lost_at_s;
    gnow_t now;
    /* run */
    stat_t util, mem_util, power, temp, job_util, clk_sm;
    double peak_used, min_free, mem_total, peak_job, peak_main, peak_desc, peak_other, power_limit_w;
    track_t energy;
    double energy_start_j; /* cumulative energy shown in the view: counter if any, else integrated */
    double integrated_j, integrated_s, prev_power_w;
    int64_t prev_power_t;
    bool have_counter;
    track_t viol_power, viol_thermal, ecc_corr, ecc_uncorr;
    double reason_s[NREASONS], throttled_s, reasons_covered_s;
    int64_t samples, util_samples, held_samples, idle_held_samples, job_procs_seen;
    gmig_t *mig;
    size_t nmig;
    gerr_t *err;
    size_t nerr;
} gdev_t;

typedef struct {
    vendor_t vendor;
    int64_t gpu; /* -1: summed over the process's GPUs (ROCm < 5.7) */
    int64_t pid;
    bool compute, graphics, job, main_proc;
    double used;              /* bytes, NAN unknown */
    double sm, mem, enc, dec; /* sums over util samples */
    int64_t nutil;
    double cu;      /* AMD: fraction */
    int64_t gi, ci; /* -1 none */
} gproc_t;

/* column indices by name, per source table (-1: absent) */
enum { NV_DEV, NV_PROC, NV_PUTIL, NV_MIG, NV_STATUS, RO_DEV, RO_PROC, RO_STATUS, NTAB };
#define MAXC 40
/* positions in tab_cols */
enum {
    ND_GPU,
    ND_LOST,
    ND_UTIL,
    ND_MEMUTIL,
    ND_TOTAL,
    ND_USED,
    ND_FREE,
    ND_RESERVED,
    ND_INCL,
    ND_BAR1,
    ND_POWER,
    ND_LIMIT,
    ND_ENERGY,
    ND_TEMP,
    ND_FAN,
    ND_CLKG,
    ND_CLKSM,
    ND_CLKMEM,
    ND_CLKV,
    ND_PSTATE,
    ND_REASONS,
    ND_VPOWER,
    ND_VTHERMAL,
    ND_TX,
    ND_RX,
    ND_ECCC,
    ND_ECCU,
    ND_ENC,
    ND_DEC,
    ND_PUTIL,
    ND_PROCS
};
enum { NP_GPU, NP_PID, NP_TYPE, NP_USED, NP_GI, NP_CI };
enum { NU_GPU, NU_PID, NU_SM, NU_MEM, NU_ENC, NU_DEC };
enum { NM_GPU, NM_MIG, NM_GI, NM_CI, NM_TOTAL, NM_USED };
enum { NS_GPU, NS_METRIC, NS_RC, NS_ERROR };
enum {
    RD_GPU,
    RD_LOST,
    RD_BUSY,
    RD_MEMBUSY,
    RD_TOTAL,
    RD_USED,
    RD_POWER,
    RD_CAP,
    RD_ENERGY,
    RD_RES,
    RD_TEDGE,
    RD_TJUNC,
    RD_TMEM,
    RD_FAN,
    RD_FANMAX,
    RD_SCLK,
    RD_MCLK,
    RD_PROCS
};
enum { RP_GPU, RP_PID, RP_VRAM, RP_CU };

typedef struct {
    js_model_cfg_t cfg;
    int col[NTAB][MAXC];
    bool resolved[NTAB];
    int proc_pid;
    bool proc_resolved;
    gdev_t *d;
    size_t nd, dcap;
    gproc_t *p; /* this sample's processes */
    size_t np, pcap;
    int64_t *members; /* this sample's members, sorted */
    size_t nmembers, mcap;
    int64_t *ever; /* every PID that was a member at some sample, sorted */
    size_t never, ecap;
    bool attribution_off[VENDOR_MAX];
    char pidns[VENDOR_MAX][32];
    int64_t t0, prev_t, fed;
    /* the job over all devices */
    stat_t util_sum, hw_fraction, job_util_sum;
    double peak_job, peak_main, peak_desc;
    double peak_used; /* the largest sum over the devices of their memory in use at one sample */
    int64_t job_mem_known, job_mem_unknown;
    bool any_attribution;
} gpu_t;

/* gpu_feed: the part's feed (part.h): this sample's GPU rows into the devices' state. 0 or -ENOMEM. */
int gpu_feed(void *state, const js_feed_t *f);

/* gpu_view_table, gpu_view_fill: the part's views (part.h): `gpu`, `gpu_process`, `gpu_mig`. */
const js_table_t *gpu_view_table(void *state, size_t i);
int gpu_view_fill(void *state, size_t i, js_rows_t *out);

#endif
