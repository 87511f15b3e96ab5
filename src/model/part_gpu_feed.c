/* SPDX-License-Identifier: MIT
 *
 * The `gpu` part's feed (part_gpu_int.h): each sample's nvml_* and rocm_* rows, read by column name, into
 * the devices' levels, energy, throttle time, errors and MIG instances, and the processes on them into the
 * job's share (the attribution rules are in part_gpu.c's opening comment).
 */
#include "model/part_gpu_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the source tables read, and the columns of each (their positions: part_gpu_int.h) */
static const char *const tab_names[NTAB] = {"nvml_device", "nvml_process", "nvml_putil",   "nvml_mig",
                                            "nvml_status", "rocm_device",  "rocm_process", "rocm_status"};
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

/* ---- small helpers ---------------------------------------------------------------------------------- */

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
    if (array_grow((void **)&g->d, g->nd, &g->dcap, sizeof(*g->d)) < 0)
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
        if (array_grow((void **)&g->members, g->nmembers, &g->mcap, sizeof(*g->members)) < 0)
            return -ENOMEM;
        g->members[g->nmembers++] = row[g->proc_pid].i;
    }
    if (g->nmembers > 1)
        qsort(g->members, g->nmembers, sizeof(*g->members), cmp_i64);
    size_t before = g->never;
    for (size_t i = 0; i < g->nmembers; i++) {
        if (in_sorted(g->ever, before, g->members[i]))
            continue;
        if (array_grow((void **)&g->ever, g->never, &g->ecap, sizeof(*g->ever)) < 0)
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
    if (array_grow((void **)&g->p, g->np, &g->pcap, sizeof(*g->p)) < 0)
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

int gpu_feed(void *state, const js_feed_t *f)
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
