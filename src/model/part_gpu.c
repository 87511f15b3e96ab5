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
#include "model/part_gpu_int.h"

#include "model/summary.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
