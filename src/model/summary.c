/* SPDX-License-Identifier: MIT
 *
 * Summary rendering: JSON for machines, text for people (see summary.h).
 */
#include "model/summary.h"

#include "core/json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

char *fmt_bytes(char *buf, size_t cap, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    if (isnan(bytes)) {
        snprintf(buf, cap, "n/a");
        return buf;
    }
    int u = 0;
    while (fabs(bytes) >= 1024 && u < 5) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, cap, u ? "%.2f %s" : "%.0f %s", bytes, units[u]);
    return buf;
}

static void jw_peak(jw_t *w, const char *key, double v)
{
    jw_open(w, key);
    jw_num(w, "peak_rss_bytes", v);
    jw_close(w);
}

int summary_json(js_buf_t *b, const js_run_info_t *info, const js_summary_t *s, const js_model_t *m)
{
    jw_t w;
    jw_init(&w, b);
    jw_open(&w, NULL);
    jw_str(&w, "jobscope_version", info->version);
    jw_raw(&w, "command", info->command_json ? info->command_json : "[]");
    jw_str(&w, "host", info->host);
    jw_str(&w, "mode", info->mode);
    if (info->have_exit)
        jw_int(&w, "exit_status", info->exit_status);
    else
        jw_str(&w, "exit_status", NULL);
    jw_num(&w, "wall_time_s", s->wall_s);
    jw_str(&w, "recording", info->recording);

    jw_open(&w, "cpu");
    jw_num(&w, "user_s", s->user_s);
    jw_num(&w, "system_s", s->system_s);
    jw_num(&w, "total_s", s->total_s);
    jw_num(&w, "sampled_s", s->sampled_s);
    jw_num(&w, "mean_cores", s->mean_cores);
    jw_num(&w, "max_cores", s->max_cores);
    jw_num(&w, "efficiency", s->efficiency);
    jw_num(&w, "cores_available", s->cores_available);
    jw_num(&w, "mean_hardware_fraction", s->efficiency);
    jw_num(&w, "max_hardware_fraction", s->cores_available > 0 ? s->max_cores / s->cores_available : NAN);
    jw_close(&w);

    jw_open(&w, "memory");
    jw_num(&w, "peak_rss_bytes", s->peak_rss);
    jw_str(&w, "peak_rss_method", "sampled: largest sum of the members' RSS at one sample");
    jw_num(&w, "peak_rss_kernel_bytes", s->peak_rss_kernel);
    jw_str(&w, "peak_rss_kernel_method",
           "kernel: largest single-process high-water mark (VmHWM of members, ru_maxrss of reaped children)");
    jw_num(&w, "peak_swap_bytes", s->peak_swap);
    jw_peak(&w, "main", s->peak_rss_main);
    jw_peak(&w, "descendants", s->peak_rss_desc);
    jw_peak(&w, "combined", s->peak_rss);
    jw_num(&w, "peak_uss_bytes", s->peak_uss);
    jw_num(&w, "peak_pss_bytes", s->peak_pss);
    jw_int(&w, "uss_samples", s->uss_samples);
    jw_close(&w);

    jw_open(&w, "io");
    jw_num(&w, "read_bytes", s->io[IO_READ]);
    jw_num(&w, "write_bytes", s->io[IO_WRITE]);
    jw_num(&w, "read_chars", s->io[IO_RCHAR]);
    jw_num(&w, "write_chars", s->io[IO_WCHAR]);
    jw_num(&w, "read_syscalls", s->io[IO_SYSCR]);
    jw_num(&w, "write_syscalls", s->io[IO_SYSCW]);
    jw_close(&w);

    jw_open(&w, "processes");
    jw_int(&w, "total", s->procs_total);
    jw_int(&w, "max_concurrent", s->procs_max);
    jw_int(&w, "max_threads", s->threads_max);
    jw_close(&w);

    jw_open(&w, "samples");
    jw_num(&w, "interval_s", s->interval_s);
    jw_int(&w, "taken", s->taken);
    jw_int(&w, "missed", s->missed);
    jw_close(&w);

    jw_open(&w, "monitor");
    jw_num(&w, "cpu_s", s->mon_cpu_s);
    jw_num(&w, "max_rss_bytes", s->mon_max_rss);
    jw_num(&w, "mean_sample_cost_s", s->mon_mean_cost_s);
    jw_int(&w, "write_errors", s->write_errors);
    jw_close(&w);

    jw_open(&w, "exact");
    jw_bool(&w, "cpu", s->exact_cpu);
    jw_bool(&w, "peak_rss", s->exact_peak_rss);
    jw_close(&w);
    if (m)
        model_parts_summary_json(m, &w);
    jw_close(&w);
    w.err |= buf_append(b, "\n", 1);
    return jw_error(&w);
}

static const char *num(char *buf, size_t cap, const char *fmt, double v)
{
    if (isnan(v))
        snprintf(buf, cap, "n/a");
    else
        snprintf(buf, cap, fmt, v);
    return buf;
}

int summary_text(js_buf_t *b, const js_run_info_t *info, const js_summary_t *s, const js_model_t *m)
{
    char a[64], c[64], d[64], e[64];
    int err = 0;
    err |= buf_printf(b, "jobscope %s: %s on %s\n", info->version ? info->version : "?", info->command_json,
                      info->host ? info->host : "?");
    if (info->have_exit)
        err |= buf_printf(b, "  exit status      %d\n", info->exit_status);
    err |= buf_printf(b, "  wall time        %s s\n", num(a, sizeof(a), "%.3f", s->wall_s));
    err |= buf_printf(b, "  CPU time         %s s (user %s, system %s)%s\n", num(a, sizeof(a), "%.3f", s->total_s),
                      num(c, sizeof(c), "%.3f", s->user_s), num(d, sizeof(d), "%.3f", s->system_s),
                      s->exact_cpu ? "  [exact: kernel accounting]" : "  [sampled: exited members since their last sample are missing]");
    err |= buf_printf(b, "  cores            mean %s, max %s of %s available; efficiency %s%%\n",
                      num(a, sizeof(a), "%.2f", s->mean_cores), num(c, sizeof(c), "%.2f", s->max_cores),
                      num(d, sizeof(d), "%.0f", s->cores_available), num(e, sizeof(e), "%.1f", s->efficiency * 100));
    err |= buf_printf(b, "  peak RSS         %s sampled (main %s, descendants %s); kernel high-water %s\n",
                      fmt_bytes(a, sizeof(a), s->peak_rss), fmt_bytes(c, sizeof(c), s->peak_rss_main),
                      fmt_bytes(d, sizeof(d), s->peak_rss_desc), fmt_bytes(e, sizeof(e), s->peak_rss_kernel));
    err |= buf_printf(b, "  peak USS / PSS   %s / %s (read at %lld of %lld samples, see --uss-every); peak swap %s\n",
                      fmt_bytes(a, sizeof(a), s->peak_uss), fmt_bytes(c, sizeof(c), s->peak_pss),
                      (long long)s->uss_samples, (long long)s->taken, fmt_bytes(d, sizeof(d), s->peak_swap));
    err |= buf_printf(b, "  I/O              read %s, written %s (storage); %s / %s (read/write calls)\n",
                      fmt_bytes(a, sizeof(a), s->io[IO_READ]), fmt_bytes(c, sizeof(c), s->io[IO_WRITE]),
                      fmt_bytes(d, sizeof(d), s->io[IO_RCHAR]), fmt_bytes(e, sizeof(e), s->io[IO_WCHAR]));
    err |= buf_printf(b, "  processes        %lld seen, at most %lld at once, at most %lld threads\n",
                      (long long)s->procs_total, (long long)s->procs_max, (long long)s->threads_max);
    err |= buf_printf(b, "  samples          %lld every %s s, %lld missed\n", (long long)s->taken,
                      num(a, sizeof(a), "%g", s->interval_s), (long long)s->missed);
    err |= buf_printf(b, "  monitor          %s s CPU, %s RSS, %s us per sample", num(a, sizeof(a), "%.3f", s->mon_cpu_s),
                      fmt_bytes(c, sizeof(c), s->mon_max_rss), num(d, sizeof(d), "%.1f", s->mon_mean_cost_s * 1e6));
    if (s->write_errors)
        err |= buf_printf(b, "; %lld samples NOT recorded (write errors)", (long long)s->write_errors);
    err |= buf_printf(b, "\n");
    if (m && model_parts_summary_text(m, b) < 0)
        err = 1;
    if (info->recording)
        err |= buf_printf(b, "  recording        %s\n", info->recording);
    return err ? -ENOMEM : 0;
}
