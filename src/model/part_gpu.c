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
#include "model/figure.h"
#include "model/track.h"

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

/* put_stat: {mean, max} of a series, in `unit` */
static void put_stat(js_figure_t *g, const char *key, const char *unit, const stat_t *s)
{
    js_figure_t *o = fig_put_object(g, key);
    fig_put_num(o, "mean", unit, stat_mean(s));
    fig_put_num(o, "max", unit, s->max);
}

static void gpu_summary_device(const gpu_t *g, const gdev_t *d, js_figure_t *r)
{
    js_figure_t *e = fig_put_elem(r, "gpu.devices");
    fig_put_text(r, "gpu.devices[].vendor", vendor_names[d->vendor]);
    fig_put_int(r, "gpu.devices[].index", NULL, d->index);
    fig_put_text(r, "gpu.devices[].name", d->name[0] ? d->name : NULL);
    fig_put_text(r, "gpu.devices[].uuid", d->uuid[0] ? d->uuid : NULL);
    fig_put_text(r, "gpu.devices[].pci_bus_id", d->pci[0] ? d->pci : NULL);
    fig_put_num(r, "gpu.devices[].memory_total_bytes", "bytes", dev_total(d));
    fig_put_int(r, "gpu.devices[].samples", "count", d->samples);
    fig_put_bool(r, "gpu.devices[].lost", d->lost);
    fig_put_num(r, "gpu.devices[].lost_at_s", "s", d->lost ? d->lost_at_s : NAN);
    fig_put_num(r, "gpu.devices[].peak_memory_bytes.device", "bytes", d->peak_used);
    bool split = attributed(g, d) && g->cfg.root_pid > 0; /* watch: no process is the main one */
    fig_put_num(r, "gpu.devices[].peak_memory_bytes.job.main", "bytes", split ? d->peak_main : NAN);
    fig_put_num(r, "gpu.devices[].peak_memory_bytes.job.descendants", "bytes", split ? d->peak_desc : NAN);
    fig_put_num(r, "gpu.devices[].peak_memory_bytes.job.combined", "bytes",
                attributed(g, d) ? d->peak_job : NAN);
    fig_put_num(r, "gpu.devices[].peak_memory_bytes.others", "bytes", attributed(g, d) ? d->peak_other : NAN);
    fig_put_num(r, "gpu.devices[].min_free_bytes", "bytes", d->min_free);
    put_stat(e, "utilization", "fraction", &d->util);
    put_stat(e, "job_utilization", "fraction", &d->job_util);
    put_stat(e, "memory_utilization", "fraction", &d->mem_util);
    put_stat(e, "power_w", "W", &d->power);
    fig_put_num(r, "gpu.devices[].power_limit_w", "W",
                !isnan(d->power_limit_w) ? d->power_limit_w : d->inv_power_limit_w);
    put_stat(e, "temperature_c", "celsius", &d->temp);
    put_stat(e, "clock_sm_mhz", "MHz", &d->clk_sm);
    const char *method;
    double en = dev_energy(d, &method);
    fig_how(fig_put_num(r, "gpu.devices[].energy_j", "J", en), "energy_method", method);
    fig_put_int(r, "gpu.devices[].energy_counter_resets", "count", d->have_counter ? d->energy.unknown : 0);
    fig_put_num(r, "gpu.devices[].energy_covered_s", "s",
                d->have_counter ? d->energy.covered_s : d->integrated_s);
    js_figure_t *thr_s = fig_put_object(r, "gpu.devices[].throttle_s");
    for (int k = 0; k < NREASONS; k++)
        if (d->reasons_covered_s > 0)
            fig_put_num(thr_s, reason_names[k], "s", d->reason_s[k]);
    fig_put_num(r, "gpu.devices[].violation_s.power", "s", d->viol_power.known ? d->viol_power.total : NAN);
    fig_put_num(r, "gpu.devices[].violation_s.thermal", "s",
                d->viol_thermal.known ? d->viol_thermal.total : NAN);
    double thr = dev_throttled(d, &method);
    fig_how(fig_put_num(r, "gpu.devices[].throttled_fraction", "fraction", thr), "throttled_method", method);
    fig_put_num(r, "gpu.devices[].ecc_errors.corrected", "count",
                d->ecc_corr.known ? d->ecc_corr.total : NAN);
    fig_put_num(r, "gpu.devices[].ecc_errors.uncorrected", "count",
                d->ecc_uncorr.known ? d->ecc_uncorr.total : NAN);
    fig_put_int(r, "gpu.devices[].ecc_errors.counter_resets", "count",
                d->ecc_corr.unknown + d->ecc_uncorr.unknown);
    if (d->nmig)
        fig_put_array(r, "gpu.devices[].mig");
    for (size_t k = 0; k < d->nmig; k++) {
        const gmig_t *m = &d->mig[k];
        fig_put_elem(r, "gpu.devices[].mig");
        fig_put_int(r, "gpu.devices[].mig[].mig_index", NULL, m->mig);
        fig_put_text(r, "gpu.devices[].mig[].name", m->name[0] ? m->name : NULL);
        fig_put_text(r, "gpu.devices[].mig[].uuid", m->uuid[0] ? m->uuid : NULL);
        fig_put_num(r, "gpu.devices[].mig[].memory_total_bytes", "bytes", m->mem_total);
        fig_put_num(r, "gpu.devices[].mig[].peak_memory_bytes", "bytes", m->peak_used);
        fig_put_num(r, "gpu.devices[].mig[].job_peak_memory_bytes", "bytes", m->job_peak);
    }
    fig_put_object(r, "gpu.devices[].errors");
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
        fig_name(r, "gpu.devices[].errors", key);
        fig_put_text(r, "gpu.devices[].errors.{}", buf);
    }
}

/* in_use: whether the job used device d: a job process was listed on it (where processes are attributed),
 * else every device that had samples */
static bool in_use(const gpu_t *g, const gdev_t *d)
{
    return d->samples && (attributed(g, d) ? d->job_procs_seen > 0 : true);
}

/* job_energy: the energy of the devices the job used (the one place GPU energy is summed): each in-use
 * device's whole energy, NAN where none of them has a figure; 0 when the job used none. The node's scope
 * uses every device. */
static double job_energy(const gpu_t *g, size_t *ret_used)
{
    double sum = NAN;
    size_t used = 0;
    for (size_t i = 0; i < g->nd; i++) {
        const gdev_t *d = &g->d[i];
        if (!(g->cfg.scope == JS_SCOPE_NODE ? d->samples > 0 : in_use(g, d)))
            continue;
        used++;
        const char *m;
        double e = dev_energy(d, &m);
        if (!isnan(e))
            sum = isnan(sum) ? e : sum + e;
    }
    *ret_used = used;
    return used ? sum : 0;
}

static void gpu_summary_job(const gpu_t *g, size_t shown, js_figure_t *r)
{
    js_figure_t *job = fig_put_object(r, "gpu.job");
    fig_put_num(r, "gpu.job.peak_memory_bytes.main", "bytes",
                g->any_attribution && g->cfg.root_pid > 0 ? g->peak_main : NAN);
    fig_put_num(r, "gpu.job.peak_memory_bytes.descendants", "bytes",
                g->any_attribution && g->cfg.root_pid > 0 ? g->peak_desc : NAN);
    fig_put_num(r, "gpu.job.peak_memory_bytes.combined", "bytes", g->any_attribution ? g->peak_job : NAN);
    put_stat(job, "utilization_sum", "fraction", &g->util_sum);
    put_stat(job, "hardware_fraction", "fraction", &g->hw_fraction);
    put_stat(job, "job_utilization_sum", "fraction", &g->job_util_sum);
    size_t used = 0;
    for (size_t i = 0; i < g->nd; i++)
        used += in_use(g, &g->d[i]);
    fig_merge(fig_put_int(r, "gpu.job.devices", "count", (int64_t)shown), FIG_MERGE_SUM);
    fig_put_int(r, "gpu.job.devices_in_use", "count", (int64_t)used);
    fig_put_num(r, "gpu.job.peak_memory_used_bytes", "bytes",
                g->peak_used); /* every process's, over the devices */
    double total = 0;
    for (size_t i = 0; i < g->nd; i++)
        total += g->d[i].samples && !isnan(dev_total(&g->d[i])) ? dev_total(&g->d[i]) : 0;
    fig_put_num(r, "gpu.job.memory_total_bytes", "bytes", total);
    size_t counted;
    double energy = job_energy(g, &counted);
    js_figure_t *ej = fig_merge(fig_put_num(r, "gpu.job.energy_j", "J", energy), FIG_MERGE_SUM);
    fig_how(ej, "energy_method",
            g->cfg.scope == JS_SCOPE_NODE ? "every device of the node, each its whole energy"
            : g->any_attribution          ? "the devices the job used (a job process was listed on them: "
                                            "devices_in_use), each its whole energy, shared with any other "
                                            "process on it"
                                 : "every device (no per-process attribution: which ones the job used "
                                   "is not known), each its whole energy");
    bool off = false;
    for (int v = 0; v < VENDOR_MAX; v++)
        off |= g->attribution_off[v];
    fig_put_text(r, "gpu.job.attribution.method", off ? "none" : "pid");
    fig_put_text(
        r, "gpu.job.attribution.description",
        off ? "jobscope's procfs is in a nested PID namespace: GPU drivers report PIDs of the initial "
              "namespace, which cannot be mapped from here"
            : "a GPU process is the job's when its PID is a member of the scope at the same sample; main "
              "= the root PID");
    fig_put_int(r, "gpu.job.attribution.samples", "count", g->job_mem_known);
    fig_put_int(r, "gpu.job.attribution.samples_unknown", "count", g->job_mem_unknown);
}

static void gpu_summary(void *state, js_figure_t *r)
{
    gpu_t *g = state;
    size_t shown = 0;
    for (size_t i = 0; i < g->nd; i++)
        shown += g->d[i].samples > 0;
    if (!shown)
        return;
    fig_put_array(r, "gpu.devices");
    for (size_t i = 0; i < g->nd; i++)
        if (g->d[i].samples)
            gpu_summary_device(g, &g->d[i], r);
    gpu_summary_job(g, shown, r);
    gflag_t fl[32];
    size_t nf = flags(g, fl, 32);
    fig_put_array(r, "gpu.flags");
    for (size_t k = 0; k < nf; k++) {
        fig_put_elem(r, "gpu.flags");
        fig_put_text(r, "gpu.flags[].vendor", vendor_names[fl[k].d->vendor]);
        fig_put_int(r, "gpu.flags[].gpu", NULL, fl[k].d->index);
        fig_put_text(r, "gpu.flags[].kind", fl[k].kind);
        fig_put_text(r, "gpu.flags[].text", fl[k].text);
    }
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

/* gpu_label: "gpu 0", "gpu amd 1" */
static const char *gpu_label(char *buf, size_t cap, const js_figure_t *d, const char *index_key)
{
    const char *vendor = fig_text(d, "vendor");
    snprintf(buf, cap, "gpu %s%lld", vendor && !strcmp(vendor, "amd") ? "amd " : "",
             (long long)fig_int(d, index_key, 0));
    return buf;
}

static int gpu_text_device(const js_figure_t *d, js_buf_t *b)
{
    char a[32], c[32], e[32], f[32], h[32], k[32], label[24];
    int err = buf_printf(b, "  %-17s", gpu_label(label, sizeof(label), d, "index"));
    const char *name = fig_text(d, "name");
    err |= text_escape(b, name ? name : "GPU", strlen(name ? name : "GPU"));
    err |= buf_printf(b, ": util %s mean, %s max", pct(a, sizeof(a), fig_num(d, "utilization.mean")),
                      pct(c, sizeof(c), fig_num(d, "utilization.max")));
    double job_util = fig_num(d, "job_utilization.mean");
    if (!isnan(job_util))
        err |= buf_printf(b, " (job %s mean)", pct(a, sizeof(a), job_util));
    err |= buf_printf(b, "; memory peak %s of %s",
                      fmt_bytes(e, sizeof(e), fig_num(d, "peak_memory_bytes.device")),
                      fmt_bytes(f, sizeof(f), fig_num(d, "memory_total_bytes")));
    double main = fig_num(d, "peak_memory_bytes.job.main"),
           comb = fig_num(d, "peak_memory_bytes.job.combined");
    if (!isnan(main))
        err |= buf_printf(b, " (job %s: main %s, descendants %s)", fmt_bytes(h, sizeof(h), comb),
                          fmt_bytes(k, sizeof(k), main),
                          fmt_bytes(a, sizeof(a), fig_num(d, "peak_memory_bytes.job.descendants")));
    else if (!isnan(comb))
        err |= buf_printf(b, " (scope %s)", fmt_bytes(h, sizeof(h), comb));
    double pmean = fig_num(d, "power_w.mean");
    if (!isnan(pmean))
        err |= buf_printf(b, "; power %.0f W mean, %.0f W max", pmean, fig_num(d, "power_w.max"));
    else
        err |= buf_printf(b, "; power n/a");
    const js_figure_t *en = fig_get(d, "energy_j");
    err |=
        buf_printf(b, ", energy %s%s", joule(c, sizeof(c), fig_value(en)),
                   en && en->method && !strcmp(en->method, "integrated_power") ? " [integrated power]" : "");
    int64_t resets = fig_int(d, "energy_counter_resets", 0);
    if (resets)
        err |= buf_printf(b, " [counter reset %lldx: those intervals missing]", (long long)resets);
    double thr = fig_num(d, "throttled_fraction");
    if (!isnan(thr))
        err |= buf_printf(b, "; throttled %s", pct(a, sizeof(a), thr));
    double corr = fig_num(d, "ecc_errors.corrected"), uncorr = fig_num(d, "ecc_errors.uncorrected");
    if (uncorr > 0 || corr > 0)
        err |= buf_printf(b, "; ECC %.0f corrected, %.0f uncorrected", corr, uncorr);
    if (fig_bool(d, "lost") == 1)
        err |= buf_printf(b, "; LOST at %.1f s", fig_num(d, "lost_at_s"));
    return err | buf_printf(b, "\n");
}

static int gpu_summary_text(const js_figure_t *r, js_buf_t *b)
{
    const js_figure_t *devs = fig_get(r, "gpu.devices");
    size_t shown = fig_count(devs);
    if (!shown)
        return 0;
    int err = 0;
    char a[32], c[32], e[32], f[32], h[32], k[32], label[24];
    for (size_t i = 0; i < shown; i++)
        err |= gpu_text_device(fig_kid(devs, i), b);
    err |= buf_printf(b, "  %-17sutil sum %s mean, %s max over %zu GPU%s; in use %s mean", "gpu, job",
                      pct(a, sizeof(a), fig_num(r, "gpu.job.utilization_sum.mean")),
                      pct(c, sizeof(c), fig_num(r, "gpu.job.utilization_sum.max")), shown,
                      shown == 1 ? "" : "s", pct(e, sizeof(e), fig_num(r, "gpu.job.hardware_fraction.mean")));
    double main = fig_num(r, "gpu.job.peak_memory_bytes.main"),
           comb = fig_num(r, "gpu.job.peak_memory_bytes.combined");
    if (!isnan(main))
        err |= buf_printf(b, "; memory peak %s (main %s, descendants %s)", fmt_bytes(f, sizeof(f), comb),
                          fmt_bytes(h, sizeof(h), main),
                          fmt_bytes(k, sizeof(k), fig_num(r, "gpu.job.peak_memory_bytes.descendants")));
    else if (!isnan(comb))
        err |= buf_printf(b, "; memory peak of the scope's processes %s", fmt_bytes(f, sizeof(f), comb));
    else
        err |= buf_printf(b, "; no per-process attribution");
    err |= buf_printf(b, "\n");
    const js_figure_t *fl = fig_get(r, "gpu.flags");
    for (size_t i = 0; i < fig_count(fl); i++) {
        const js_figure_t *x = fig_kid(fl, i);
        const char *text = fig_text(x, "text");
        err |= buf_printf(b, "  %-17s%s: %s\n", i ? "" : "GPU FLAGS",
                          gpu_label(label, sizeof(label), x, "gpu"), text ? text : "");
    }
    return err ? -ENOMEM : 0;
}

static int gpu_summary_short(const js_figure_t *r, js_buf_t *b)
{
    char a[32], c[32], e[32], f[32];
    size_t shown = fig_count(fig_get(r, "gpu.devices"));
    if (!shown)
        return 0;
    size_t nf = fig_count(fig_get(r, "gpu.flags"));
    double comb = fig_num(r, "gpu.job.peak_memory_bytes.combined");
    int err = buf_printf(
        b, "  GPU              %zu GPU%s: util sum %s mean, %s max; memory peak %s%s; energy %s", shown,
        shown == 1 ? "" : "s", pct(a, sizeof(a), fig_num(r, "gpu.job.utilization_sum.mean")),
        pct(c, sizeof(c), fig_num(r, "gpu.job.utilization_sum.max")), fmt_bytes(e, sizeof(e), comb),
        !isnan(comb) ? " (the job's processes)" : "", joule(f, sizeof(f), fig_num(r, "gpu.job.energy_j")));
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
    .summary = gpu_summary,
    .summary_text = gpu_summary_text,
    .summary_short = gpu_summary_short,
    .fini = gpu_fini,
};
