/* SPDX-License-Identifier: MIT
 *
 * The `gpu` model part: NVIDIA GPUs (the `nvml` source's tables) and AMD GPUs (the `rocm` source's) turned
 * into one vendor-neutral picture: per device and sample the levels in SI units (fractions, bytes, W, degC,
 * MHz), energy from the device's counter, throttle time, ECC errors during the run, and the job's share;
 * over the run means and maxima, peaks, totals and flags. Source tables are read by column name, so this
 * part includes no source header.
 *
 * Energy. NVML's total-energy counter (mJ since the driver was loaded) and ROCm SMI's accumulator (units of
 * its resolution) give the energy of an interval as the difference of two readings; a reading lower than the
 * previous one is a driver reload (the counter restarted): that interval has no energy, is counted
 * (`counter_resets`) and said. Only a device without a counter gets its energy from its power readings
 * (trapezoids between consecutive readings), labelled `integrated_power`.
 *
 * Throttling (NVIDIA). Time by clock-event reason: each interval counts, for every reason bit set in the
 * reading that ends it, its length (sampled: a reason that came and went between two samples is not seen).
 * The throttled fraction is the share of covered time with a power or thermal reason set (SW power cap, HW
 * slowdown, SW and HW thermal slowdown, HW power brake); the GPU-idle, application-clock, sync-boost and
 * display-clock bits are reported but are not throttling. The violation counters (time held below requested
 * clocks by the power limit and by temperature, exact) are reported beside it, and stand in for the reasons
 * when a device has none.
 *
 * Attribution. The GPU libraries list the processes using each device, with PIDs of the initial PID
 * namespace; a process is the job's when its PID is a member of the scope at the same sample (a row of the
 * `proc` table) or was one at an earlier sample (the driver may list a process a moment after it exited),
 * the main process when it is the scope's root PID. This is exact only when jobscope's procfs
 * is in the initial namespace too (the sources record `pid_namespace`); inside a container the PIDs cannot be
 * mapped (the kernel shows NSpid only from the reader's namespace inwards), so nothing is attributed and the
 * summary says why. The job's GPU memory at a sample is the sum over its processes (per device: a process in
 * both the compute and the graphics list counted once); its peaks are split main / descendants / combined
 * like the CPU memory peaks, each at its own sample. The job's utilisation of an NVIDIA GPU over an interval
 * is the sum over its processes of the mean SM utilisation of their samples newer than the previous reading
 * (NVML's process utilisation), capped at 1; a process with no sample in the interval was idle (NVML reports
 * only processes with some utilisation). AMD's per-process figures are VRAM and CU occupancy, not time, so
 * the job's utilisation of an AMD GPU is missing.
 *
 * Views: `gpu` (a row per device and sample), `gpu_process` (a row per device, process and sample),
 * `gpu_mig` (a row per MIG instance and sample). Summary: a `gpu` section and one text line per device, plus
 * flags a user acts on (idle GPU holding memory, memory within 5% of full, throttled more than 10% of the
 * time, device lost).
 */
#include "model/model.h"
#include "model/summary.h"
#include "model/track.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IDLE_UTIL 0.05      /* "idle": utilisation under 5% */
#define IDLE_SHARE 0.5      /* ... for more than half of the samples with a reading */
#define FULL_SHARE 0.95     /* memory within 5% of the total */
#define THROTTLE_SHARE 0.10 /* throttled more than 10% of the time */
#define HELD_SHARE 0.01     /* without attribution, "memory held": over 1% of the device in use */

typedef enum { VENDOR_NVIDIA, VENDOR_AMD, VENDOR_MAX } vendor_t;
static const char *const vendor_names[VENDOR_MAX] = {"nvidia", "amd"};

/* clock event reasons (nvmlClocksEventReason*), in bit order */
#define NREASONS 9
static const char *const reason_names[NREASONS] = {"gpu_idle",
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

static void stat_init(stat_t *s)
{
    s->sum = 0;
    s->max = NAN;
    s->n = 0;
}

static void stat_add(stat_t *s, double v)
{
    if (isnan(v))
        return;
    s->sum += v;
    s->n++;
    if (isnan(s->max) || v > s->max)
        s->max = v;
}

static double stat_mean(const stat_t *s)
{
    return s->n ? s->sum / (double)s->n : NAN;
}

static double fmax_nan(double a, double b)
{
    return isnan(a) ? b : isnan(b) ? a : a > b ? a : b;
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
static const char *const tab_names[NTAB] = {"nvml_device", "nvml_process", "nvml_putil",   "nvml_mig",
                                            "nvml_status", "rocm_device",  "rocm_process", "rocm_status"};
#define MAXC 40
static const char *const tab_cols[NTAB][MAXC] = {
    [NV_DEV] = {"gpu",
                "lost",
                "gpu_util_pct",
                "mem_util_pct",
                "mem_total_bytes",
                "mem_used_bytes",
                "mem_free_bytes",
                "mem_reserved_bytes",
                "mem_used_includes_reserved",
                "bar1_used_bytes",
                "power_mw",
                "power_limit_mw",
                "energy_mj",
                "temp_c",
                "fan_pct",
                "clock_graphics_mhz",
                "clock_sm_mhz",
                "clock_mem_mhz",
                "clock_video_mhz",
                "pstate",
                "clocks_event_reasons",
                "violation_power_ns",
                "violation_thermal_ns",
                "pcie_tx_kbs",
                "pcie_rx_kbs",
                "ecc_corrected_count",
                "ecc_uncorrected_count",
                "encoder_pct",
                "decoder_pct",
                "putil_samples",
                "processes",
                NULL},
    [NV_PROC] = {"gpu", "pid", "type", "used_bytes", "gpu_instance", "compute_instance", NULL},
    [NV_PUTIL] = {"gpu", "pid", "sm_pct", "mem_pct", "enc_pct", "dec_pct", NULL},
    [NV_MIG] = {"gpu", "mig_index", "gpu_instance", "compute_instance", "mem_total_bytes", "mem_used_bytes",
                NULL},
    [NV_STATUS] = {"gpu", "metric", "rc", "error", NULL},
    [RO_DEV] = {"gpu", "lost", "busy_pct", "mem_busy_pct", "vram_total_bytes", "vram_used_bytes", "power_uw",
                "power_cap_uw", "energy_count", "energy_resolution_uj", "temp_edge_mc", "temp_junction_mc",
                "temp_memory_mc", "fan_speed", "fan_speed_max", "sclk_hz", "mclk_hz", "processes", NULL},
    [RO_PROC] = {"gpu", "pid", "vram_bytes", "cu_occupancy_pct", NULL},
    [RO_STATUS] = {"gpu", "metric", "rc", "error", NULL},
};
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

/* ---- small helpers ---------------------------------------------------------------------------------- */

static int grow(void **arr, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 8;
    void *g = realloc(*arr, c * size);
    if (!g)
        return -ENOMEM;
    *arr = g;
    *cap = c;
    return 0;
}

/* num: the value of column c of `row` as a double, NAN when absent or missing */
static double num(const js_rows_t *r, const js_value_t *row, int c)
{
    if (c < 0 || !row[c].present)
        return NAN;
    return r->table->cols[c].type == JS_REAL ? row[c].d : (double)row[c].i;
}

static int64_t inum(const js_value_t *row, int c, int64_t dflt)
{
    return c >= 0 && row[c].present ? row[c].i : dflt;
}

static const char *text(const js_rows_t *r, const js_value_t *row, int c)
{
    return c >= 0 && row[c].present && r->table->cols[c].type == JS_TEXT ? rows_str(r, &row[c]) : "";
}

static const js_value_t *cell(const js_value_t *row, int c)
{
    return c >= 0 ? &row[c] : NULL;
}

static const js_rows_t *table_rows(gpu_t *g, const js_sample_t *s, int t)
{
    const js_rows_t *r = sample_rows_named(s, tab_names[t]);
    if (!r)
        return NULL;
    if (!g->resolved[t]) {
        for (int k = 0; k < MAXC && tab_cols[t][k]; k++)
            g->col[t][k] = table_column(r->table, tab_cols[t][k]);
        g->resolved[t] = true;
    }
    return r;
}

static void now_clear(gnow_t *n);

static gdev_t *dev_get(gpu_t *g, vendor_t v, int64_t index)
{
    for (size_t i = 0; i < g->nd; i++)
        if (g->d[i].vendor == v && g->d[i].index == index)
            return &g->d[i];
    if (grow((void **)&g->d, g->nd, &g->dcap, sizeof(*g->d)) < 0)
        return NULL;
    gdev_t *d = &g->d[g->nd++];
    memset(d, 0, sizeof(*d));
    d->vendor = v;
    d->index = index;
    d->inv_mem_total = d->inv_power_limit_w = NAN;
    d->lost_at_s = NAN;
    now_clear(&d->now);
    stat_init(&d->util);
    stat_init(&d->mem_util);
    stat_init(&d->power);
    stat_init(&d->temp);
    stat_init(&d->job_util);
    stat_init(&d->clk_sm);
    d->peak_used = d->min_free = d->mem_total = d->peak_job = d->peak_main = d->peak_desc = d->peak_other =
        NAN;
    d->power_limit_w = d->prev_power_w = NAN;
    track_init(&d->energy);
    track_init(&d->viol_power);
    track_init(&d->viol_thermal);
    track_init(&d->ecc_corr);
    track_init(&d->ecc_uncorr);
    return d;
}

static gmig_t *mig_get(gdev_t *d, int64_t mig)
{
    for (size_t i = 0; i < d->nmig; i++)
        if (d->mig[i].mig == mig)
            return &d->mig[i];
    gmig_t *m = realloc(d->mig, (d->nmig + 1) * sizeof(*m));
    if (!m)
        return NULL;
    d->mig = m;
    m = &d->mig[d->nmig++];
    memset(m, 0, sizeof(*m));
    m->mig = mig;
    m->gi = m->ci = -1;
    m->mem_total = m->mem_used = m->peak_used = m->job_mem = m->job_peak = NAN;
    return m;
}

static int err_add(gdev_t *d, const char *metric, int64_t rc, const char *txt)
{
    for (size_t i = 0; i < d->nerr; i++)
        if (d->err[i].rc == rc && strcmp(d->err[i].metric, metric) == 0)
            return 0;
    gerr_t *e = realloc(d->err, (d->nerr + 1) * sizeof(*e));
    if (!e)
        return -ENOMEM;
    d->err = e;
    e = &d->err[d->nerr++];
    snprintf(e->metric, sizeof(e->metric), "%s", metric);
    e->rc = rc;
    snprintf(e->text, sizeof(e->text), "%s", txt);
    return 0;
}

static bool in_sorted(const int64_t *a, size_t n, int64_t pid)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (a[mid] == pid)
            return true;
        if (a[mid] < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* is_member: a member now, or one that has exited (the driver may list a process for a moment after its
 * exit; a PID is not reused that fast) */
static bool is_member(const gpu_t *g, int64_t pid)
{
    return in_sorted(g->members, g->nmembers, pid) || in_sorted(g->ever, g->never, pid);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* ---- feeding: inventory, members, status ------------------------------------------------------------ */

static void feed_inventory(gpu_t *g, const js_sample_t *s)
{
    const js_rows_t *inv = sample_rows(s, &table_inventory);
    for (size_t i = 0; inv && i < inv->nrows; i++) {
        const js_value_t *row = rows_row(inv, i);
        if (!row[INV_SOURCE].present || !row[INV_KEY].present || !row[INV_VALUE].present)
            continue;
        const char *src = rows_str(inv, &row[INV_SOURCE]), *key = rows_str(inv, &row[INV_KEY]);
        const char *val = rows_str(inv, &row[INV_VALUE]);
        vendor_t v = !strcmp(src, "nvml") ? VENDOR_NVIDIA : !strcmp(src, "rocm") ? VENDOR_AMD : VENDOR_MAX;
        if (v == VENDOR_MAX)
            continue;
        if (!strcmp(key, "pid_namespace")) {
            snprintf(g->pidns[v], sizeof(g->pidns[v]), "%s", val);
            g->attribution_off[v] = !strcmp(val, "nested");
            continue;
        }
        unsigned idx, mig;
        char rest[64];
        if (sscanf(key, "gpu.%u.mig.%u.%63s", &idx, &mig, rest) == 3) {
            gdev_t *d = dev_get(g, v, idx);
            gmig_t *m = d ? mig_get(d, mig) : NULL;
            if (m && !strcmp(rest, "name"))
                snprintf(m->name, sizeof(m->name), "%s", val);
            else if (m && !strcmp(rest, "uuid"))
                snprintf(m->uuid, sizeof(m->uuid), "%s", val);
            continue;
        }
        if (sscanf(key, "gpu.%u.%63s", &idx, rest) != 2)
            continue;
        if (strcmp(rest, "name") && strcmp(rest, "uuid") && strcmp(rest, "pci_bus_id") &&
            strcmp(rest, "memory_total_bytes") && strcmp(rest, "power_limit_mw") &&
            strcmp(rest, "power_cap_uw"))
            continue;
        gdev_t *d = dev_get(g, v, idx);
        if (!d)
            continue;
        if (!strcmp(rest, "name"))
            snprintf(d->name, sizeof(d->name), "%s", val);
        else if (!strcmp(rest, "uuid"))
            snprintf(d->uuid, sizeof(d->uuid), "%s", val);
        else if (!strcmp(rest, "pci_bus_id"))
            snprintf(d->pci, sizeof(d->pci), "%s", val);
        else if (!strcmp(rest, "memory_total_bytes"))
            d->inv_mem_total = strtod(val, NULL);
        else if (!strcmp(rest, "power_limit_mw"))
            d->inv_power_limit_w = strtod(val, NULL) / 1e3;
        else
            d->inv_power_limit_w = strtod(val, NULL) / 1e6;
    }
}

static int feed_members(gpu_t *g, const js_sample_t *s)
{
    g->nmembers = 0;
    const js_rows_t *proc = sample_rows_named(s, "proc");
    if (!proc)
        return 0;
    if (!g->proc_resolved) {
        g->proc_pid = table_column(proc->table, "pid");
        g->proc_resolved = true;
    }
    if (g->proc_pid < 0)
        return 0;
    for (size_t i = 0; i < proc->nrows; i++) {
        const js_value_t *row = rows_row(proc, i);
        if (!row[g->proc_pid].present)
            continue;
        if (grow((void **)&g->members, g->nmembers, &g->mcap, sizeof(*g->members)) < 0)
            return -ENOMEM;
        g->members[g->nmembers++] = row[g->proc_pid].i;
    }
    if (g->nmembers > 1)
        qsort(g->members, g->nmembers, sizeof(*g->members), cmp_i64);
    size_t before = g->never;
    for (size_t i = 0; i < g->nmembers; i++) {
        if (in_sorted(g->ever, before, g->members[i]))
            continue;
        if (grow((void **)&g->ever, g->never, &g->ecap, sizeof(*g->ever)) < 0)
            return -ENOMEM;
        g->ever[g->never++] = g->members[i];
    }
    if (g->never > before)
        qsort(g->ever, g->never, sizeof(*g->ever), cmp_i64);
    return 0;
}

static int feed_status(gpu_t *g, const js_sample_t *s, int t, vendor_t v)
{
    const js_rows_t *r = table_rows(g, s, t);
    const int *c = g->col[t];
    for (size_t i = 0; r && i < r->nrows; i++) {
        const js_value_t *row = rows_row(r, i);
        gdev_t *d = dev_get(g, v, inum(row, c[NS_GPU], -1));
        if (!d ||
            err_add(d, text(r, row, c[NS_METRIC]), inum(row, c[NS_RC], 0), text(r, row, c[NS_ERROR])) < 0)
            return -ENOMEM;
    }
    return 0;
}

/* ---- feeding: devices ------------------------------------------------------------------------------- */

static void now_clear(gnow_t *n)
{
    double *f[] = {&n->util,          &n->mem_util,     &n->mem_used,        &n->mem_free,
                   &n->mem_total,     &n->mem_reserved, &n->bar1_used,       &n->power_w,
                   &n->power_limit_w, &n->temp_c,       &n->temp_junction_c, &n->temp_memory_c,
                   &n->fan,           &n->clk_graphics, &n->clk_sm,          &n->clk_mem,
                   &n->clk_video,     &n->pstate,       &n->pcie_tx,         &n->pcie_rx,
                   &n->enc,           &n->dec,          &n->energy_j,        &n->ecc_corr,
                   &n->ecc_uncorr,    &n->job_mem,      &n->job_main,        &n->job_desc,
                   &n->other_mem,     &n->job_util,     &n->job_mem_util,    &n->procs};
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
        *f[i] = NAN;
    n->reasons = 0;
    n->have_reasons = n->throttled = false;
}

static void feed_nvml_device(gpu_t *g, gdev_t *d, const js_rows_t *r, const js_value_t *row, int64_t t)
{
    const int *c = g->col[NV_DEV];
    gnow_t *n = &d->now;
    if (inum(row, c[ND_LOST], 0) && !d->lost) {
        d->lost = true;
        d->lost_at_s = (double)(t - g->t0) / 1e9;
    }
    n->util = num(r, row, c[ND_UTIL]) / 100;
    n->mem_util = num(r, row, c[ND_MEMUTIL]) / 100;
    n->mem_total = num(r, row, c[ND_TOTAL]);
    n->mem_used = num(r, row, c[ND_USED]);
    n->mem_free = num(r, row, c[ND_FREE]);
    n->mem_reserved = num(r, row, c[ND_RESERVED]);
    n->bar1_used = num(r, row, c[ND_BAR1]);
    n->power_w = num(r, row, c[ND_POWER]) / 1e3;
    n->power_limit_w = num(r, row, c[ND_LIMIT]) / 1e3;
    n->temp_c = num(r, row, c[ND_TEMP]);
    n->fan = num(r, row, c[ND_FAN]) / 100;
    n->clk_graphics = num(r, row, c[ND_CLKG]);
    n->clk_sm = num(r, row, c[ND_CLKSM]);
    n->clk_mem = num(r, row, c[ND_CLKMEM]);
    n->clk_video = num(r, row, c[ND_CLKV]);
    n->pstate = num(r, row, c[ND_PSTATE]);
    n->pcie_tx = num(r, row, c[ND_TX]);
    n->pcie_rx = num(r, row, c[ND_RX]);
    n->enc = num(r, row, c[ND_ENC]) / 100;
    n->dec = num(r, row, c[ND_DEC]) / 100;
    n->procs = num(r, row, c[ND_PROCS]);
    if (c[ND_REASONS] >= 0 && row[c[ND_REASONS]].present) {
        n->have_reasons = true;
        n->reasons = row[c[ND_REASONS]].i;
    }
    track_step(&d->energy, cell(row, c[ND_ENERGY]), t, track_wrapping, 64, 1e-3);
    track_step(&d->viol_power, cell(row, c[ND_VPOWER]), t, track_wrapping, 64, 1e-9);
    track_step(&d->viol_thermal, cell(row, c[ND_VTHERMAL]), t, track_wrapping, 64, 1e-9);
    track_step(&d->ecc_corr, cell(row, c[ND_ECCC]), t, track_wrapping, 64, 1);
    track_step(&d->ecc_uncorr, cell(row, c[ND_ECCU]), t, track_wrapping, 64, 1);
    /* utilisation samples: NAN job utilisation until the processes are folded in (putil_samples present) */
    n->job_util = c[ND_PUTIL] >= 0 && row[c[ND_PUTIL]].present ? 0 : NAN;
    n->job_mem_util = n->job_util;
}

static void feed_rocm_device(gpu_t *g, gdev_t *d, const js_rows_t *r, const js_value_t *row, int64_t t)
{
    const int *c = g->col[RO_DEV];
    gnow_t *n = &d->now;
    if (inum(row, c[RD_LOST], 0) && !d->lost) {
        d->lost = true;
        d->lost_at_s = (double)(t - g->t0) / 1e9;
    } else if (!inum(row, c[RD_LOST], 0)) {
        d->lost = false; /* ROCm: every read failing is noticed per sample, not latched */
    }
    n->util = num(r, row, c[RD_BUSY]) / 100;
    n->mem_util = num(r, row, c[RD_MEMBUSY]) / 100;
    n->mem_total = num(r, row, c[RD_TOTAL]);
    n->mem_used = num(r, row, c[RD_USED]);
    n->mem_free = n->mem_total - n->mem_used;
    n->power_w = num(r, row, c[RD_POWER]) / 1e6;
    n->power_limit_w = num(r, row, c[RD_CAP]) / 1e6;
    n->temp_c = num(r, row, c[RD_TEDGE]) / 1e3;
    n->temp_junction_c = num(r, row, c[RD_TJUNC]) / 1e3;
    n->temp_memory_c = num(r, row, c[RD_TMEM]) / 1e3;
    double fmax = num(r, row, c[RD_FANMAX]);
    n->fan = num(r, row, c[RD_FAN]) / (fmax > 0 ? fmax : 255);
    n->clk_graphics = n->clk_sm = num(r, row, c[RD_SCLK]) / 1e6;
    n->clk_mem = num(r, row, c[RD_MCLK]) / 1e6;
    n->procs = num(r, row, c[RD_PROCS]);
    double res = num(r, row, c[RD_RES]); /* a reading without its resolution cannot be converted */
    track_step(&d->energy, res > 0 ? cell(row, c[RD_ENERGY]) : NULL, t, track_wrapping, 64, res * 1e-6);
}

/* device_finish: the run's figures from this sample's values (after the processes were folded in) */
static void device_finish(gpu_t *g, gdev_t *d, int64_t t, double dt)
{
    gnow_t *n = &d->now;
    d->samples++;
    if (!isnan(n->mem_total))
        d->mem_total = n->mem_total;
    stat_add(&d->util, n->util);
    stat_add(&d->mem_util, n->mem_util);
    stat_add(&d->power, n->power_w);
    stat_add(&d->temp, n->temp_c);
    stat_add(&d->clk_sm, n->clk_sm);
    stat_add(&d->job_util, n->job_util);
    d->peak_used = fmax_nan(d->peak_used, n->mem_used);
    if (!isnan(n->mem_free) && (isnan(d->min_free) || n->mem_free < d->min_free))
        d->min_free = n->mem_free;
    if (!isnan(n->power_limit_w))
        d->power_limit_w = n->power_limit_w;
    d->peak_job = fmax_nan(d->peak_job, n->job_mem);
    d->peak_main = fmax_nan(d->peak_main, n->job_main);
    d->peak_desc = fmax_nan(d->peak_desc, n->job_desc);
    d->peak_other = fmax_nan(d->peak_other, n->other_mem);
    /* energy: counter, and power integrated (used only where there is no counter) */
    if (d->energy.prev.present)
        d->have_counter = true;
    if (!isnan(n->power_w)) {
        if (!isnan(d->prev_power_w) && t > d->prev_power_t) {
            double s = (double)(t - d->prev_power_t) / 1e9;
            d->integrated_j += (d->prev_power_w + n->power_w) / 2 * s;
            d->integrated_s += s;
        }
        d->prev_power_w = n->power_w;
        d->prev_power_t = t;
    }
    n->energy_j = d->have_counter ? (d->energy.known || d->energy.unknown ? d->energy.total : 0)
                  : d->integrated_s > 0 || !isnan(d->prev_power_w) ? d->integrated_j
                                                                   : NAN;
    n->ecc_corr = d->ecc_corr.prev.present ? d->ecc_corr.total : NAN;
    n->ecc_uncorr = d->ecc_uncorr.prev.present ? d->ecc_uncorr.total : NAN;
    /* throttle reasons over the interval this reading ends */
    if (n->have_reasons) {
        n->throttled = (n->reasons & THROTTLE_BITS) != 0;
        if (!isnan(dt) && dt > 0) {
            for (int b = 0; b < NREASONS; b++)
                if (n->reasons & (1LL << b))
                    d->reason_s[b] += dt;
            if (n->throttled)
                d->throttled_s += dt;
            d->reasons_covered_s += dt;
        }
    }
    /* the idle-while-holding-memory flag */
    double u = !isnan(n->job_util) ? n->job_util : n->util;
    bool attributed = !g->attribution_off[d->vendor] && !isnan(n->job_mem);
    double total = !isnan(n->mem_total) ? n->mem_total : d->inv_mem_total;
    bool held = attributed
                    ? n->job_mem > 0
                    : !isnan(n->mem_used) && !isnan(total) && total > 0 && n->mem_used > HELD_SHARE * total;
    if (!isnan(u)) {
        d->util_samples++;
        if (held) {
            d->held_samples++;
            if (u < IDLE_UTIL)
                d->idle_held_samples++;
        }
    }
}

/* ---- feeding: processes ----------------------------------------------------------------------------- */

static gproc_t *proc_get(gpu_t *g, vendor_t v, int64_t gpu, int64_t pid)
{
    for (size_t i = 0; i < g->np; i++)
        if (g->p[i].pid == pid && g->p[i].gpu == gpu && g->p[i].vendor == v)
            return &g->p[i];
    if (grow((void **)&g->p, g->np, &g->pcap, sizeof(*g->p)) < 0)
        return NULL;
    gproc_t *p = &g->p[g->np++];
    memset(p, 0, sizeof(*p));
    p->vendor = v;
    p->gpu = gpu;
    p->pid = pid;
    p->used = p->cu = NAN;
    p->gi = p->ci = -1;
    bool off = g->attribution_off[v];
    p->job = !off && is_member(g, pid);
    p->main_proc = p->job && g->cfg.root_pid > 0 && pid == g->cfg.root_pid;
    return p;
}

static int feed_nvml_procs(gpu_t *g, const js_sample_t *s)
{
    const js_rows_t *r = table_rows(g, s, NV_PROC);
    const int *c = g->col[NV_PROC];
    for (size_t i = 0; r && i < r->nrows; i++) {
        const js_value_t *row = rows_row(r, i);
        gproc_t *p = proc_get(g, VENDOR_NVIDIA, inum(row, c[NP_GPU], -1), inum(row, c[NP_PID], -1));
        if (!p)
            return -ENOMEM;
        const char *type = text(r, row, c[NP_TYPE]);
        if (!strcmp(type, "graphics"))
            p->graphics = true;
        else
            p->compute = true;
        double used = num(r, row, c[NP_USED]);
        p->used = fmax_nan(p->used, used); /* one process in both lists: counted once */
        p->gi = inum(row, c[NP_GI], p->gi);
        p->ci = inum(row, c[NP_CI], p->ci);
    }
    r = table_rows(g, s, NV_PUTIL);
    c = g->col[NV_PUTIL];
    for (size_t i = 0; r && i < r->nrows; i++) {
        const js_value_t *row = rows_row(r, i);
        gproc_t *p = proc_get(g, VENDOR_NVIDIA, inum(row, c[NU_GPU], -1), inum(row, c[NU_PID], -1));
        if (!p)
            return -ENOMEM;
        double sm = num(r, row, c[NU_SM]), mem = num(r, row, c[NU_MEM]);
        double enc = num(r, row, c[NU_ENC]), dec = num(r, row, c[NU_DEC]);
        p->sm += isnan(sm) ? 0 : sm / 100;
        p->mem += isnan(mem) ? 0 : mem / 100;
        p->enc += isnan(enc) ? 0 : enc / 100;
        p->dec += isnan(dec) ? 0 : dec / 100;
        p->nutil++;
    }
    return 0;
}

static int feed_rocm_procs(gpu_t *g, const js_sample_t *s)
{
    const js_rows_t *r = table_rows(g, s, RO_PROC);
    const int *c = g->col[RO_PROC];
    for (size_t i = 0; r && i < r->nrows; i++) {
        const js_value_t *row = rows_row(r, i);
        gproc_t *p = proc_get(g, VENDOR_AMD, inum(row, c[RP_GPU], -1), inum(row, c[RP_PID], -1));
        if (!p)
            return -ENOMEM;
        p->compute = true;
        p->used = num(r, row, c[RP_VRAM]);
        p->cu = num(r, row, c[RP_CU]) / 100;
    }
    return 0;
}

/* fold_procs: the job's memory and utilisation per device, from this sample's processes */
static void fold_procs(gpu_t *g)
{
    for (size_t i = 0; i < g->nd; i++) {
        gdev_t *d = &g->d[i];
        if (!d->seen_now || d->lost)
            continue;
        gnow_t *n = &d->now;
        bool listed = !isnan(n->procs) && !g->attribution_off[d->vendor];
        if (listed)
            n->job_mem = n->job_main = n->job_desc = n->other_mem = 0;
        bool unknown_mem = false;
        for (size_t k = 0; k < g->np; k++) {
            gproc_t *p = &g->p[k];
            if (p->vendor != d->vendor || p->gpu != d->index)
                continue;
            if (p->job && p->nutil && !isnan(n->job_util)) {
                n->job_util += p->sm / (double)p->nutil;
                n->job_mem_util += p->mem / (double)p->nutil;
            }
            if (!listed || !(p->compute || p->graphics))
                continue;
            if (isnan(p->used)) {
                unknown_mem |= p->job;
                continue;
            }
            if (!p->job)
                n->other_mem += p->used;
            else if (p->main_proc)
                n->job_main += p->used;
            else
                n->job_desc += p->used;
            if (p->job) {
                n->job_mem += p->used;
                d->job_procs_seen++;
            }
        }
        if (unknown_mem)
            n->job_mem = n->job_main = n->job_desc = NAN;
        if (!isnan(n->job_util) && n->job_util > 1)
            n->job_util = 1;
        if (!isnan(n->job_mem_util) && n->job_mem_util > 1)
            n->job_mem_util = 1;
        if (g->attribution_off[d->vendor])
            n->job_util = n->job_mem_util = NAN;
    }
}

static int feed_mig(gpu_t *g, const js_sample_t *s)
{
    for (size_t i = 0; i < g->nd; i++)
        for (size_t k = 0; k < g->d[i].nmig; k++)
            g->d[i].mig[k].seen_now = false;
    const js_rows_t *r = table_rows(g, s, NV_MIG);
    const int *c = g->col[NV_MIG];
    for (size_t i = 0; r && i < r->nrows; i++) {
        const js_value_t *row = rows_row(r, i);
        gdev_t *d = dev_get(g, VENDOR_NVIDIA, inum(row, c[NM_GPU], -1));
        gmig_t *m = d ? mig_get(d, inum(row, c[NM_MIG], -1)) : NULL;
        if (!m)
            return -ENOMEM;
        m->seen_now = true;
        m->gi = inum(row, c[NM_GI], -1);
        m->ci = inum(row, c[NM_CI], -1);
        m->mem_total = num(r, row, c[NM_TOTAL]);
        m->mem_used = num(r, row, c[NM_USED]);
        m->peak_used = fmax_nan(m->peak_used, m->mem_used);
        bool listed = !isnan(d->now.procs) && !g->attribution_off[VENDOR_NVIDIA];
        m->job_mem = listed ? 0 : NAN;
        for (size_t k = 0; listed && k < g->np; k++) {
            const gproc_t *p = &g->p[k];
            if (p->vendor == VENDOR_NVIDIA && p->gpu == d->index && p->job && p->gi == m->gi &&
                p->ci == m->ci)
                m->job_mem += isnan(p->used) ? 0 : p->used;
        }
        m->job_peak = fmax_nan(m->job_peak, m->job_mem);
    }
    return 0;
}

static int gpu_feed(void *state, const js_feed_t *f)
{
    gpu_t *g = state;
    const js_rows_t *samples = sample_rows(f->s, &table_samples);
    if (!samples || !samples->nrows || !rows_row(samples, 0)[SAMPLES_T_MONO].present)
        return 0;
    int64_t t = rows_row(samples, 0)[SAMPLES_T_MONO].i;
    const js_rows_t *nd = table_rows(g, f->s, NV_DEV), *rd = table_rows(g, f->s, RO_DEV);
    feed_inventory(g, f->s);
    if (!g->nd && !(nd && nd->nrows) && !(rd && rd->nrows))
        return 0; /* no GPU in this recording (so far) */
    if (!g->fed)
        g->t0 = g->cfg.start_mono_ns ? g->cfg.start_mono_ns : t;
    double dt = g->fed && t > g->prev_t ? (double)(t - g->prev_t) / 1e9 : NAN;
    g->fed++;
    g->prev_t = t;
    int r;
    if ((r = feed_members(g, f->s)) < 0 || (r = feed_status(g, f->s, NV_STATUS, VENDOR_NVIDIA)) < 0 ||
        (r = feed_status(g, f->s, RO_STATUS, VENDOR_AMD)) < 0)
        return r;
    for (size_t i = 0; i < g->nd; i++) {
        g->d[i].seen_now = false;
        now_clear(&g->d[i].now);
    }
    for (size_t i = 0; nd && i < nd->nrows; i++) {
        const js_value_t *row = rows_row(nd, i);
        gdev_t *d = dev_get(g, VENDOR_NVIDIA, inum(row, g->col[NV_DEV][ND_GPU], -1));
        if (!d)
            return -ENOMEM;
        d->seen_now = true;
        feed_nvml_device(g, d, nd, row, t);
    }
    for (size_t i = 0; rd && i < rd->nrows; i++) {
        const js_value_t *row = rows_row(rd, i);
        gdev_t *d = dev_get(g, VENDOR_AMD, inum(row, g->col[RO_DEV][RD_GPU], -1));
        if (!d)
            return -ENOMEM;
        d->seen_now = true;
        feed_rocm_device(g, d, rd, row, t);
    }
    /* a device not in this sample: its counters keep their last reading */
    g->np = 0;
    if ((r = feed_nvml_procs(g, f->s)) < 0 || (r = feed_rocm_procs(g, f->s)) < 0)
        return r;
    fold_procs(g);
    if ((r = feed_mig(g, f->s)) < 0)
        return r;

    /* the job over all devices */
    double usum = 0, hw = 0, jsum = 0, jm = 0, jmain = 0, jdesc = 0, used = 0;
    size_t nu = 0, nin = 0, nj = 0, nmem = 0, nused = 0;
    bool mem_unknown = false;
    for (size_t i = 0; i < g->nd; i++) {
        gdev_t *d = &g->d[i];
        if (!d->seen_now)
            continue;
        device_finish(g, d, t, dt);
        gnow_t *n = &d->now;
        if (d->lost)
            continue;
        if (!isnan(n->util)) {
            usum += n->util;
            nu++;
        }
        if (!isnan(n->mem_used)) {
            used += n->mem_used;
            nused++;
        }
        bool attributed = !g->attribution_off[d->vendor];
        bool in_use = attributed ? n->job_mem > 0 || n->job_util > 0 : true;
        if (in_use && !isnan(n->util)) {
            hw += n->util;
            nin++;
        }
        if (!isnan(n->job_util)) {
            jsum += n->job_util;
            nj++;
        }
        if (attributed) {
            if (isnan(n->job_mem)) {
                mem_unknown = true;
            } else {
                jm += n->job_mem;
                jmain += n->job_main;
                jdesc += n->job_desc;
                nmem++;
            }
        }
    }
    /* processes summed over their GPUs (no per-GPU split): the job's totals only */
    for (size_t k = 0; k < g->np; k++) {
        const gproc_t *p = &g->p[k];
        if (p->gpu >= 0 || !p->job || isnan(p->used))
            continue;
        jm += p->used;
        if (p->main_proc)
            jmain += p->used;
        else
            jdesc += p->used;
        nmem++;
    }
    if (nu)
        stat_add(&g->util_sum, usum);
    if (nused)
        g->peak_used = fmax_nan(g->peak_used, used);
    if (nin)
        stat_add(&g->hw_fraction, hw / (double)nin);
    if (nj)
        stat_add(&g->job_util_sum, jsum);
    if (nmem && !mem_unknown) {
        g->any_attribution = true;
        g->job_mem_known++;
        g->peak_job = fmax_nan(g->peak_job, jm);
        g->peak_main = fmax_nan(g->peak_main, jmain);
        g->peak_desc = fmax_nan(g->peak_desc, jdesc);
    } else if (mem_unknown) {
        g->job_mem_unknown++;
    }
    return 0;
}

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

static const js_table_t *gpu_view_table(void *state, size_t i)
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

static int gpu_view_fill(void *state, size_t i, js_rows_t *out)
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

/* ---- summary ---------------------------------------------------------------------------------------- */

static double dev_total(const gdev_t *d)
{
    return !isnan(d->mem_total) ? d->mem_total : d->inv_mem_total;
}

/* energy: the device's energy over the run and how it was obtained */
static double dev_energy(const gdev_t *d, const char **method)
{
    if (d->have_counter) {
        *method = "counter";
        return d->energy.known ? d->energy.total : NAN;
    }
    *method = d->integrated_s > 0 ? "integrated_power" : NULL;
    return d->integrated_s > 0 ? d->integrated_j : NAN;
}

/* throttled share: from the reasons where there are any, else from the violation counters */
static double dev_throttled(const gdev_t *d, const char **method)
{
    if (d->reasons_covered_s > 0) {
        *method = "clocks_event_reasons";
        return d->throttled_s / d->reasons_covered_s;
    }
    double cov = fmax_nan(d->viol_power.covered_s, d->viol_thermal.covered_s);
    if (cov > 0 && (d->viol_power.known || d->viol_thermal.known)) {
        *method = "violation_counters";
        double v = d->viol_power.total + d->viol_thermal.total;
        return v / cov > 1 ? 1 : v / cov;
    }
    *method = NULL;
    return NAN;
}

static bool attributed(const gpu_t *g, const gdev_t *d)
{
    return !g->attribution_off[d->vendor] && !isnan(d->peak_job);
}

typedef struct {
    const gdev_t *d;
    const char *kind;
    char text[256];
} gflag_t;

/* flags: what a user acts on, at most `cap` */
static size_t flags(const gpu_t *g, gflag_t *out, size_t cap)
{
    size_t n = 0;
    char a[32], b[32];
    for (size_t i = 0; i < g->nd && n < cap; i++) {
        const gdev_t *d = &g->d[i];
        if (!d->samples)
            continue;
        if (d->lost && n < cap) {
            out[n] = (gflag_t){d, "lost", ""};
            snprintf(out[n++].text, sizeof(out[0].text),
                     "lost at %.1f s (every call fails since; the run went on)", d->lost_at_s);
        }
        if (d->held_samples && d->util_samples && n < cap &&
            (double)d->idle_held_samples > IDLE_SHARE * (double)d->util_samples) {
            out[n] = (gflag_t){d, "idle_allocated", ""};
            double held = attributed(g, d) ? d->peak_job : d->peak_used;
            snprintf(
                out[n++].text, sizeof(out[0].text),
                "held %s of memory but was under %.0f%% busy for %.0f%% of the samples: allocated but idle",
                fmt_bytes(a, sizeof(a), held), IDLE_UTIL * 100,
                100.0 * (double)d->idle_held_samples / (double)d->util_samples);
        }
        double total = dev_total(d);
        if (!isnan(d->min_free) && !isnan(total) && total > 0 && d->min_free <= (1 - FULL_SHARE) * total &&
            n < cap) {
            out[n] = (gflag_t){d, "memory_near_full", ""};
            snprintf(out[n++].text, sizeof(out[0].text),
                     "memory peaked at %.1f%% of %s (%s free at the least): "
                     "within %.0f%% of full",
                     100 * (total - d->min_free) / total, fmt_bytes(a, sizeof(a), total),
                     fmt_bytes(b, sizeof(b), d->min_free), (1 - FULL_SHARE) * 100);
        }
        const char *how;
        double thr = dev_throttled(d, &how);
        if (!isnan(thr) && thr > THROTTLE_SHARE && n < cap) {
            out[n] = (gflag_t){d, "throttled", ""};
            snprintf(out[n++].text, sizeof(out[0].text),
                     "clocks held back by power or temperature %.0f%% of the "
                     "time [%s]",
                     100 * thr, how);
        }
    }
    return n;
}

static void json_stat(jw_t *w, const char *key, const stat_t *s, double scale)
{
    jw_open(w, key);
    jw_num(w, "mean", stat_mean(s) * scale);
    jw_num(w, "max", s->max * scale);
    jw_close(w);
}

static void gpu_summary_json(void *state, jw_t *w)
{
    gpu_t *g = state;
    size_t shown = 0;
    for (size_t i = 0; i < g->nd; i++)
        shown += g->d[i].samples > 0;
    if (!shown)
        return;
    jw_open(w, "gpu");
    jw_array(w, "devices");
    for (size_t i = 0; i < g->nd; i++) {
        const gdev_t *d = &g->d[i];
        if (!d->samples)
            continue;
        jw_open(w, NULL);
        jw_str(w, "vendor", vendor_names[d->vendor]);
        jw_int(w, "index", d->index);
        jw_str(w, "name", d->name[0] ? d->name : NULL);
        jw_str(w, "uuid", d->uuid[0] ? d->uuid : NULL);
        jw_str(w, "pci_bus_id", d->pci[0] ? d->pci : NULL);
        jw_num(w, "memory_total_bytes", dev_total(d));
        jw_int(w, "samples", d->samples);
        jw_bool(w, "lost", d->lost);
        jw_num(w, "lost_at_s", d->lost ? d->lost_at_s : NAN);
        jw_open(w, "peak_memory_bytes");
        jw_num(w, "device", d->peak_used);
        jw_open(w, "job");
        bool split = attributed(g, d) && g->cfg.root_pid > 0; /* watch: no process is the main one */
        jw_num(w, "main", split ? d->peak_main : NAN);
        jw_num(w, "descendants", split ? d->peak_desc : NAN);
        jw_num(w, "combined", attributed(g, d) ? d->peak_job : NAN);
        jw_close(w);
        jw_num(w, "others", attributed(g, d) ? d->peak_other : NAN);
        jw_close(w);
        jw_num(w, "min_free_bytes", d->min_free);
        json_stat(w, "utilization", &d->util, 1);
        json_stat(w, "job_utilization", &d->job_util, 1);
        json_stat(w, "memory_utilization", &d->mem_util, 1);
        json_stat(w, "power_w", &d->power, 1);
        jw_num(w, "power_limit_w", !isnan(d->power_limit_w) ? d->power_limit_w : d->inv_power_limit_w);
        json_stat(w, "temperature_c", &d->temp, 1);
        json_stat(w, "clock_sm_mhz", &d->clk_sm, 1);
        const char *method;
        double e = dev_energy(d, &method);
        jw_num(w, "energy_j", e);
        jw_str(w, "energy_method", method);
        jw_int(w, "energy_counter_resets", d->have_counter ? d->energy.unknown : 0);
        jw_num(w, "energy_covered_s", d->have_counter ? d->energy.covered_s : d->integrated_s);
        jw_open(w, "throttle_s");
        for (int b = 0; b < NREASONS; b++)
            if (d->reasons_covered_s > 0)
                jw_num(w, reason_names[b], d->reason_s[b]);
        jw_close(w);
        jw_open(w, "violation_s");
        jw_num(w, "power", d->viol_power.known ? d->viol_power.total : NAN);
        jw_num(w, "thermal", d->viol_thermal.known ? d->viol_thermal.total : NAN);
        jw_close(w);
        double thr = dev_throttled(d, &method);
        jw_num(w, "throttled_fraction", thr);
        jw_str(w, "throttled_method", method);
        jw_open(w, "ecc_errors");
        jw_num(w, "corrected", d->ecc_corr.known ? d->ecc_corr.total : NAN);
        jw_num(w, "uncorrected", d->ecc_uncorr.known ? d->ecc_uncorr.total : NAN);
        jw_int(w, "counter_resets", d->ecc_corr.unknown + d->ecc_uncorr.unknown);
        jw_close(w);
        if (d->nmig) {
            jw_array(w, "mig");
            for (size_t k = 0; k < d->nmig; k++) {
                const gmig_t *m = &d->mig[k];
                jw_open(w, NULL);
                jw_int(w, "mig_index", m->mig);
                jw_str(w, "name", m->name[0] ? m->name : NULL);
                jw_str(w, "uuid", m->uuid[0] ? m->uuid : NULL);
                jw_num(w, "memory_total_bytes", m->mem_total);
                jw_num(w, "peak_memory_bytes", m->peak_used);
                jw_num(w, "job_peak_memory_bytes", m->job_peak);
                jw_close(w);
            }
            jw_array_close(w);
        }
        jw_open(w, "errors");
        for (size_t k = 0; k < d->nerr; k++) {
            char buf[200];
            snprintf(buf, sizeof(buf), "%s (code %" PRId64 ")", d->err[k].text, d->err[k].rc);
            char key[64];
            bool dup = false;
            for (size_t j = 0; j < k; j++)
                dup |= strcmp(d->err[j].metric, d->err[k].metric) == 0;
            if (dup)
                snprintf(key, sizeof(key), "%s#%" PRId64, d->err[k].metric, d->err[k].rc);
            else
                snprintf(key, sizeof(key), "%s", d->err[k].metric);
            jw_str(w, key, buf);
        }
        jw_close(w);
        jw_close(w);
    }
    jw_array_close(w);

    jw_open(w, "job");
    jw_open(w, "peak_memory_bytes");
    jw_num(w, "main", g->any_attribution && g->cfg.root_pid > 0 ? g->peak_main : NAN);
    jw_num(w, "descendants", g->any_attribution && g->cfg.root_pid > 0 ? g->peak_desc : NAN);
    jw_num(w, "combined", g->any_attribution ? g->peak_job : NAN);
    jw_close(w);
    json_stat(w, "utilization_sum", &g->util_sum, 1);
    json_stat(w, "hardware_fraction", &g->hw_fraction, 1);
    json_stat(w, "job_utilization_sum", &g->job_util_sum, 1);
    size_t in_use = 0;
    double energy = 0;
    bool energy_any = false;
    for (size_t i = 0; i < g->nd; i++) {
        const gdev_t *d = &g->d[i];
        in_use += d->samples && (attributed(g, d) ? d->job_procs_seen > 0 : true);
        const char *m;
        double e = dev_energy(d, &m);
        if (!isnan(e)) {
            energy += e;
            energy_any = true;
        }
    }
    jw_int(w, "devices", (int64_t)shown);
    jw_int(w, "devices_in_use", (int64_t)in_use);
    jw_num(w, "peak_memory_used_bytes", g->peak_used); /* every process's, at one sample, over the devices */
    jw_num(w, "energy_j", energy_any ? energy : NAN);
    jw_open(w, "attribution");
    bool off = false;
    for (int v = 0; v < VENDOR_MAX; v++)
        off |= g->attribution_off[v];
    jw_str(w, "method", off ? "none" : "pid");
    jw_str(w, "description",
           off ? "jobscope's procfs is in a nested PID namespace: GPU drivers report PIDs of the initial "
                 "namespace, "
                 "which cannot be mapped from here"
               : "a GPU process is the job's when its PID is a member of the scope at the same sample; main "
                 "= the "
                 "root PID");
    jw_int(w, "samples", g->job_mem_known);
    jw_int(w, "samples_unknown", g->job_mem_unknown);
    jw_close(w);
    jw_close(w);

    gflag_t fl[32];
    size_t nf = flags(g, fl, 32);
    jw_array(w, "flags");
    for (size_t k = 0; k < nf; k++) {
        jw_open(w, NULL);
        jw_str(w, "vendor", vendor_names[fl[k].d->vendor]);
        jw_int(w, "gpu", fl[k].d->index);
        jw_str(w, "kind", fl[k].kind);
        jw_str(w, "text", fl[k].text);
        jw_close(w);
    }
    jw_array_close(w);
    jw_close(w);
}

static const char *pct(char *buf, size_t cap, double f)
{
    if (isnan(f))
        snprintf(buf, cap, "n/a");
    else
        snprintf(buf, cap, "%.0f%%", 100 * f);
    return buf;
}

static const char *joule(char *buf, size_t cap, double j)
{
    if (isnan(j))
        snprintf(buf, cap, "n/a");
    else if (j >= 1e6)
        snprintf(buf, cap, "%.2f MJ", j / 1e6);
    else if (j >= 1e4)
        snprintf(buf, cap, "%.1f kJ", j / 1e3);
    else
        snprintf(buf, cap, "%.1f J", j);
    return buf;
}

static int gpu_summary_text(void *state, js_buf_t *b)
{
    gpu_t *g = state;
    int err = 0;
    char a[32], c[32], e[32], f[32], h[32], k[32];
    char label[24];
    size_t shown = 0;
    for (size_t i = 0; i < g->nd; i++) {
        const gdev_t *d = &g->d[i];
        if (!d->samples)
            continue;
        snprintf(label, sizeof(label), "gpu %s%" PRId64, d->vendor == VENDOR_AMD ? "amd " : "", d->index);
        const char *method, *tmethod;
        double en = dev_energy(d, &method);
        double thr = dev_throttled(d, &tmethod);
        err |= buf_printf(b, "  %-17s", label);
        err |= text_escape(b, d->name[0] ? d->name : "GPU", strlen(d->name[0] ? d->name : "GPU"));
        err |= buf_printf(b, ": util %s mean, %s max", pct(a, sizeof(a), stat_mean(&d->util)),
                          pct(c, sizeof(c), d->util.max));
        if (d->job_util.n)
            err |= buf_printf(b, " (job %s mean)", pct(a, sizeof(a), stat_mean(&d->job_util)));
        err |= buf_printf(b, "; memory peak %s of %s", fmt_bytes(e, sizeof(e), d->peak_used),
                          fmt_bytes(f, sizeof(f), dev_total(d)));
        if (attributed(g, d) && g->cfg.root_pid > 0)
            err |= buf_printf(b, " (job %s: main %s, descendants %s)", fmt_bytes(h, sizeof(h), d->peak_job),
                              fmt_bytes(k, sizeof(k), d->peak_main), fmt_bytes(a, sizeof(a), d->peak_desc));
        else if (attributed(g, d))
            err |= buf_printf(b, " (scope %s)", fmt_bytes(h, sizeof(h), d->peak_job));
        if (d->power.n)
            err |= buf_printf(b, "; power %.0f W mean, %.0f W max", stat_mean(&d->power), d->power.max);
        else
            err |= buf_printf(b, "; power n/a");
        err |= buf_printf(b, ", energy %s%s", joule(c, sizeof(c), en),
                          method && !strcmp(method, "integrated_power") ? " [integrated power]" : "");
        if (d->have_counter && d->energy.unknown)
            err |= buf_printf(b, " [counter reset %" PRId64 "x: those intervals missing]", d->energy.unknown);
        if (!isnan(thr))
            err |= buf_printf(b, "; throttled %s", pct(a, sizeof(a), thr));
        if (d->ecc_uncorr.total > 0 || d->ecc_corr.total > 0)
            err |= buf_printf(b, "; ECC %.0f corrected, %.0f uncorrected", d->ecc_corr.total,
                              d->ecc_uncorr.total);
        if (d->lost)
            err |= buf_printf(b, "; LOST at %.1f s", d->lost_at_s);
        err |= buf_printf(b, "\n");
        shown++;
    }
    if (!shown)
        return 0;
    err |= buf_printf(b, "  %-17sutil sum %s mean, %s max over %zu GPU%s; in use %s mean", "gpu, job",
                      pct(a, sizeof(a), stat_mean(&g->util_sum)), pct(c, sizeof(c), g->util_sum.max), shown,
                      shown == 1 ? "" : "s", pct(e, sizeof(e), stat_mean(&g->hw_fraction)));
    if (g->any_attribution && g->cfg.root_pid > 0)
        err |=
            buf_printf(b, "; memory peak %s (main %s, descendants %s)", fmt_bytes(f, sizeof(f), g->peak_job),
                       fmt_bytes(h, sizeof(h), g->peak_main), fmt_bytes(k, sizeof(k), g->peak_desc));
    else if (g->any_attribution)
        err |=
            buf_printf(b, "; memory peak of the scope's processes %s", fmt_bytes(f, sizeof(f), g->peak_job));
    else
        err |= buf_printf(b, "; no per-process attribution");
    err |= buf_printf(b, "\n");
    gflag_t fl[32];
    size_t nf = flags(g, fl, 32);
    for (size_t i = 0; i < nf; i++) {
        snprintf(label, sizeof(label), "gpu %s%" PRId64, fl[i].d->vendor == VENDOR_AMD ? "amd " : "",
                 fl[i].d->index);
        err |= buf_printf(b, "  %-17s%s: %s\n", i ? "" : "GPU FLAGS", label, fl[i].text);
    }
    return err ? -ENOMEM : 0;
}

static int gpu_summary_short(void *state, js_buf_t *b)
{
    gpu_t *g = state;
    char a[32], c[32], e[32], f[32];
    size_t shown = 0;
    double en = 0;
    bool any_en = false;
    for (size_t i = 0; i < g->nd; i++) {
        const gdev_t *d = &g->d[i];
        if (!d->samples)
            continue;
        shown++;
        const char *method;
        double x = dev_energy(d, &method);
        if (!isnan(x)) {
            en += x;
            any_en = true;
        }
    }
    if (!shown)
        return 0;
    gflag_t fl[32];
    size_t nf = flags(g, fl, 32);
    int err = buf_printf(
        b, "  GPU              %zu GPU%s: util sum %s mean, %s max; memory peak %s%s; energy %s", shown,
        shown == 1 ? "" : "s", pct(a, sizeof(a), stat_mean(&g->util_sum)), pct(c, sizeof(c), g->util_sum.max),
        fmt_bytes(e, sizeof(e), g->peak_job), g->any_attribution ? " (the job's processes)" : "",
        joule(f, sizeof(f), any_en ? en : NAN));
    if (nf)
        err |= buf_printf(b, "; %zu GPU FLAG%s (--summary=full)", nf, nf == 1 ? "" : "S");
    return err | buf_printf(b, "\n");
}

/* ---- life ------------------------------------------------------------------------------------------- */

static int gpu_init(const js_model_cfg_t *cfg, void **ret_state)
{
    gpu_t *g = calloc(1, sizeof(*g));
    if (!g)
        return -ENOMEM;
    g->cfg = *cfg;
    for (int t = 0; t < NTAB; t++)
        for (int k = 0; k < MAXC; k++)
            g->col[t][k] = -1;
    stat_init(&g->util_sum);
    stat_init(&g->hw_fraction);
    stat_init(&g->job_util_sum);
    g->peak_job = g->peak_main = g->peak_desc = g->peak_used = NAN;
    *ret_state = g;
    return 0;
}

static void gpu_fini(void *state)
{
    gpu_t *g = state;
    if (!g)
        return;
    for (size_t i = 0; i < g->nd; i++) {
        free(g->d[i].mig);
        free(g->d[i].err);
    }
    free(g->d);
    free(g->p);
    free(g->members);
    free(g->ever);
    free(g);
}

const js_model_part_t part_gpu = {
    .name = "gpu",
    .init = gpu_init,
    .feed = gpu_feed,
    .view_table = gpu_view_table,
    .view_fill = gpu_view_fill,
    .summary_json = gpu_summary_json,
    .summary_text = gpu_summary_text,
    .summary_short = gpu_summary_short,
    .fini = gpu_fini,
};
