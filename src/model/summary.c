/* SPDX-License-Identifier: MIT
 *
 * Summary rendering: JSON for machines, text for people (see summary.h). Every figure says how it was
 * obtained where that matters (exact kernel accounting, sampled, largest single process); a missing figure
 * is null or "n/a", never 0; text that came from the job (command lines, command names) is escaped so no
 * control character reaches the terminal.
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

/* needs_ansi_c: whether an argument holds a control character or a byte that is not UTF-8 */
static bool needs_ansi_c(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t len = strlen(s);
    for (size_t i = 0; i < len;) {
        if (u[i] < 0x20 || u[i] == 0x7f)
            return true;
        if (u[i] >= 0x80) {
            size_t k = utf8_len(u + i, len - i);
            if (!k || (k == 2 && u[i] == 0xc2 && u[i + 1] < 0xa0))
                return true;
            i += k;
        } else {
            i++;
        }
    }
    return false;
}

int shell_quote(js_buf_t *b, char *const *argv, size_t argc)
{
    int err = 0;
    for (size_t a = 0; a < argc && argv[a] && !err; a++) {
        const char *s = argv[a];
        if (a)
            err |= buf_append(b, " ", 1);
        if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-") == strlen(s)) {
            err |= buf_append(b, s, strlen(s));
        } else if (needs_ansi_c(s)) {
            err |= buf_append(b, "$'", 2);
            err |= text_escape_quoted(b, s, strlen(s));
            err |= buf_append(b, "'", 1);
        } else {
            err |= buf_append(b, "'", 1);
            for (const char *p = s; *p && !err; p++)
                err |= *p == '\'' ? buf_append(b, "'\\''", 4) : buf_append(b, p, 1);
            err |= buf_append(b, "'", 1);
        }
    }
    return err ? -ENOMEM : 0;
}

static void jw_peak(jw_t *w, const char *key, double v)
{
    jw_open(w, key);
    jw_num(w, "peak_rss_bytes", v);
    jw_close(w);
}

static void jw_tops(jw_t *w, const char *key, const js_top_t *t, int n)
{
    jw_array(w, key);
    for (int i = 0; i < n; i++) {
        jw_open(w, NULL);
        jw_str(w, "comm", t[i].comm);
        jw_num(w, "cpu_s", t[i].cpu_s);
        jw_num(w, "peak_rss_bytes", t[i].peak_rss);
        jw_int(w, "processes", t[i].procs);
        jw_close(w);
    }
    jw_array_close(w);
}

static const char uss_method[] = "smaps_rollup of each process at first sight, after an exec, when its RSS "
                                 "grew by more than 10% since its "
                                 "last read, every --uss-every (30 s by default) and at the closing sample; "
                                 "between reads its last value stands";

int summary_json(js_buf_t *b, const js_run_info_t *info, const js_summary_t *s, const js_model_t *m)
{
    jw_t w;
    jw_init(&w, b);
    jw_open(&w, NULL);
    jw_str(&w, "jobscope_version", info->version);
    jw_raw(&w, "command", info->command_json ? info->command_json : "[]");
    jw_str(&w, "host", info->host);
    jw_str(&w, "mode", info->mode);
    if (info->scope)
        jw_str(&w, "scope", info->scope);
    jw_str(&w, "state", info->state ? info->state : "complete");
    if (info->have_exit)
        jw_int(&w, "exit_status", info->exit_status);
    else
        jw_null(&w, "exit_status");
    if (info->exec_error)
        jw_str(&w, "exec_error", info->exec_error);
    jw_str(&w, "stop_reason", info->stop_reason);
    jw_num(&w, "wall_time_s", s->wall_s);
    jw_str(&w, "recording", info->recording);

    jw_open(&w, "cpu");
    jw_num(&w, "user_s", s->user_s);
    jw_num(&w, "system_s", s->system_s);
    jw_num(&w, "total_s", s->total_s);
    jw_str(&w, "total_method", s->cpu_from_cgroup ? "cgroup: the kernel's accounting of every task in the scope's cgroup"
                               : "process tree: live members' stat plus what they and the monitor reaped");
    if (s->cpu_file)
        jw_str(&w, "total_file", s->cpu_file);
    jw_num(&w, "tree_total_s", s->tree_total_s);
    jw_num(&w, "sampled_s", s->sampled_s);
    jw_num(&w, "mean_cores", s->mean_cores);
    jw_num(&w, "max_cores", s->max_cores);
    jw_num(&w, "efficiency", s->efficiency);
    jw_num(&w, "cores_available", s->cores_available);
    jw_str(&w, "cores_bound", s->cores_bound);
    jw_num(&w, "mean_hardware_fraction", s->efficiency);
    jw_num(&w, "max_hardware_fraction", s->cores_available > 0 ? s->max_cores / s->cores_available : NAN);
    jw_close(&w);

    jw_open(&w, "memory");
    jw_num(&w, "peak_rss_bytes", s->peak_rss);
    jw_str(&w, "peak_rss_method", "sampled: largest sum of the members' RSS at one sample");
    jw_num(&w, "peak_rss_kernel_bytes", s->peak_rss_kernel);
    jw_str(&w, "peak_rss_kernel_method",
           "kernel: the largest single process's high-water mark (VmHWM of members, ru_maxrss of reaped "
           "children, at least its largest sampled RSS); per process, not a sum");
    jw_open(&w, "largest_process");
    if (s->peak_kernel_pid)
        jw_int(&w, "pid", s->peak_kernel_pid);
    else
        jw_null(&w, "pid");
    jw_str(&w, "comm", s->peak_kernel_comm[0] ? s->peak_kernel_comm : NULL);
    jw_close(&w);
    jw_num(&w, "peak_kernel_tree_bytes", s->peak_kernel_tree);
    jw_str(&w, "peak_kernel_tree_method", s->peak_kernel_tree_method);
    jw_num(&w, "peak_swap_bytes", s->peak_swap);
    jw_peak(&w, "main", s->peak_rss_main);
    jw_peak(&w, "descendants", s->peak_rss_desc);
    jw_peak(&w, "combined", s->peak_rss);
    jw_num(&w, "peak_uss_bytes", s->peak_uss);
    jw_num(&w, "peak_pss_bytes", s->peak_pss);
    jw_int(&w, "uss_samples", s->uss_samples);
    jw_str(&w, "uss_method", uss_method);
    jw_close(&w);

    jw_open(&w, "io");
    jw_num(&w, "read_bytes", s->io[IO_READ]);
    jw_num(&w, "write_bytes", s->io[IO_WRITE]);
    jw_num(&w, "read_chars", s->io[IO_RCHAR]);
    jw_num(&w, "write_chars", s->io[IO_WCHAR]);
    jw_num(&w, "read_syscalls", s->io[IO_SYSCR]);
    jw_num(&w, "write_syscalls", s->io[IO_SYSCW]);
    jw_int(&w, "unreadable_processes", s->io_unreadable);
    jw_close(&w);

    jw_open(&w, "faults");
    jw_num(&w, "minor", s->minflt);
    jw_num(&w, "major", s->majflt);
    jw_close(&w);

    jw_open(&w, "context_switches");
    jw_num(&w, "voluntary", s->vol_ctxsw);
    jw_num(&w, "involuntary", s->invol_ctxsw);
    jw_str(&w, "method", "live members' /proc status (status cadence) plus what the monitor reaped; children "
                         "reaped by other members are not included");
    jw_close(&w);

    jw_open(&w, "processes");
    jw_int(&w, "total", s->procs_total);
    jw_str(&w, "total_method", "sampled: processes seen at a sample; ones that lived between samples are not "
                               "counted (their CPU and I/O are)");
    jw_int(&w, "reaped_by_monitor", s->procs_reaped);
    jw_int(&w, "max_concurrent", s->procs_max);
    jw_int(&w, "max_threads", s->threads_max);
    jw_int(&w, "unread_samples", s->unread_samples);
    jw_int(&w, "unread_max", s->unread_max);
    if (s->sigchld_pid) {
        jw_open(&w, "ignores_sigchld");
        jw_int(&w, "pid", s->sigchld_pid);
        jw_str(&w, "comm", s->sigchld_comm);
        jw_close(&w);
    }
    jw_close(&w);

    jw_open(&w, "top");
    jw_tops(&w, "by_cpu", s->top_cpu, s->ntop_cpu);
    jw_tops(&w, "by_memory", s->top_rss, s->ntop_rss);
    jw_num(&w, "unattributed_cpu_s", s->unattributed_cpu_s);
    jw_str(&w, "method", "per command name, from the processes sampling saw (own CPU as last seen, largest "
                         "RSS of one process); unattributed: the exact total less all of those");
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
    jw_str(&w, "cpu_reason", !s->exact_cpu        ? s->inexact_cpu_reason
                             : s->cpu_from_cgroup ? "the scope's cgroup: kernel accounting of every task in it"
                                                  : "kernel accounting covers every process of the scope");
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

/* text_tops: "name 3.00 s, other 1.20 s" (cpu) or "name 8.80 MiB, ..." (memory) */
static int text_tops(js_buf_t *b, const js_top_t *t, int n, bool cpu)
{
    int err = 0;
    char a[64];
    for (int i = 0; i < n; i++) {
        if (i)
            err |= buf_append(b, ", ", 2);
        err |= text_escape(b, t[i].comm, strlen(t[i].comm));
        if (cpu)
            err |= buf_printf(b, " %s s", num(a, sizeof(a), "%.2f", t[i].cpu_s));
        else
            err |= buf_printf(b, " %s", fmt_bytes(a, sizeof(a), t[i].peak_rss));
        if (t[i].procs > 1)
            err |= buf_printf(b, " (%lld processes)", (long long)t[i].procs);
    }
    return err;
}

/* safe_text: append text that is already escaped for reading (the shell-quoted command): only control
 * characters and bytes that are not UTF-8 are neutralised (a recording can be edited), backslashes stay. */
static int safe_text(js_buf_t *b, const char *s)
{
    int err = 0;
    for (const char *p = s; *p && !err;) {
        size_t run = strcspn(p, "\\");
        err |= text_escape(b, p, run);
        p += run;
        if (*p == '\\') {
            err |= buf_append(b, p, 1);
            p++;
        }
    }
    return err;
}

int summary_text(js_buf_t *b, const js_run_info_t *info, const js_summary_t *s, const js_model_t *m)
{
    char a[64], c[64], d[64], e[64];
    int err = 0;
    err |= buf_printf(b, "jobscope %s: ", info->version ? info->version : "?");
    if (info->command_shell)
        err |= safe_text(b, info->command_shell);
    else
        err |= text_escape(b, info->command_json ? info->command_json : "[]",
                           strlen(info->command_json ? info->command_json : "[]"));
    err |= buf_printf(b, " on ");
    err |= text_escape(b, info->host ? info->host : "?", strlen(info->host ? info->host : "?"));
    err |= buf_printf(b, "\n");
    if (info->scope)
        err |= buf_printf(b, "  scope            %s\n", info->scope);
    const char *state = info->state ? info->state : "complete";
    if (strcmp(state, "in progress") == 0)
        err |= buf_printf(b, "  state            in progress: the monitor is still recording; figures up to the last "
                             "sample\n");
    else if (strcmp(state, "incomplete") == 0)
        err |= buf_printf(b, "  state            INCOMPLETE: the monitor stopped without closing the recording "
                             "(killed?); figures up to its last sample\n");
    if (info->exec_error)
        err |= buf_printf(b, "  error            the command could not be started: %s\n", info->exec_error);
    if (info->stop_reason && info->mode && strcmp(info->mode, "run") != 0) /* a run ends with its command */
        err |= buf_printf(b, "  stopped by       %s\n", info->stop_reason);
    if (info->have_exit)
        err |= buf_printf(b, "  exit status      %d\n", info->exit_status);
    else if (strcmp(state, "complete") != 0 && (!info->mode || strcmp(info->mode, "run") == 0))
        err |= buf_printf(b, "  exit status      unknown (not recorded)\n");
    if (info->exec_error && !s->taken) {
        if (info->recording)
            err |= buf_printf(b, "  recording        %s\n", info->recording);
        return err ? -ENOMEM : 0;
    }
    err |= buf_printf(b, "  wall time        %s s\n", num(a, sizeof(a), "%.3f", s->wall_s));
    err |= buf_printf(b, "  CPU time         %s s (user %s, system %s)", num(a, sizeof(a), "%.3f", s->total_s),
                      num(c, sizeof(c), "%.3f", s->user_s), num(d, sizeof(d), "%.3f", s->system_s));
    if (s->exact_cpu && s->cpu_from_cgroup)
        err |= buf_printf(b, "  [exact: cgroup %s]; process tree %s s\n", s->cpu_file ? s->cpu_file : "accounting",
                          num(a, sizeof(a), "%.3f", s->tree_total_s));
    else if (s->exact_cpu)
        err |= buf_printf(b, "  [exact: kernel accounting]\n");
    else
        err |= buf_printf(b, "  [not exact: %s]\n", s->inexact_cpu_reason ? s->inexact_cpu_reason : "?");
    err |= buf_printf(b, "  cores            mean %s, max %s of %s available", num(a, sizeof(a), "%.2f", s->mean_cores),
                      num(c, sizeof(c), "%.2f", s->max_cores), num(d, sizeof(d), "%.4g", s->cores_available));
    if (s->cores_bound)
        err |= buf_printf(b, " (%s)", s->cores_bound);
    err |= buf_printf(b, "; efficiency %s%%\n", num(e, sizeof(e), "%.1f", s->efficiency * 100));
    if (s->scope == JS_SCOPE_NODE) {
        err |= buf_printf(b, "  memory in use    peak %s (MemTotal - MemAvailable, sampled)\n",
                          fmt_bytes(a, sizeof(a), s->peak_rss));
        err |= buf_printf(b, "  processes        at most %lld on the node; rows for the top processes only\n",
                          (long long)s->procs_max);
    } else {
        if (s->scope == JS_SCOPE_TREE)
            err |= buf_printf(b, "  peak RSS         %s sampled (main %s, descendants %s)\n",
                              fmt_bytes(a, sizeof(a), s->peak_rss), fmt_bytes(c, sizeof(c), s->peak_rss_main),
                              fmt_bytes(d, sizeof(d), s->peak_rss_desc));
        else
            err |= buf_printf(b, "  peak RSS         %s sampled (sum over the members at one sample)\n",
                              fmt_bytes(a, sizeof(a), s->peak_rss));
        err |= buf_printf(b, "  largest process  %s (kernel high-water of one process", fmt_bytes(a, sizeof(a), s->peak_rss_kernel));
        if (s->peak_kernel_comm[0]) {
            err |= buf_printf(b, ": ");
            err |= text_escape(b, s->peak_kernel_comm, strlen(s->peak_kernel_comm));
            if (s->peak_kernel_pid)
                err |= buf_printf(b, ", PID %d", (int)s->peak_kernel_pid);
        }
        err |= buf_printf(b, ")\n");
        if (!isnan(s->peak_kernel_tree))
            err |= buf_printf(b, "  peak, all procs  %s (the cgroup's kernel high-water mark: every process together)\n",
                              fmt_bytes(a, sizeof(a), s->peak_kernel_tree));
        err |= buf_printf(b, "  peak USS / PSS   %s / %s (at %lld of %lld samples); peak swap %s\n",
                          fmt_bytes(a, sizeof(a), s->peak_uss), fmt_bytes(c, sizeof(c), s->peak_pss),
                          (long long)s->uss_samples, (long long)s->taken, fmt_bytes(d, sizeof(d), s->peak_swap));
        err |= buf_printf(b, "  I/O              read %s, written %s (storage); %s / %s (read/write calls)",
                          fmt_bytes(a, sizeof(a), s->io[IO_READ]), fmt_bytes(c, sizeof(c), s->io[IO_WRITE]),
                          fmt_bytes(d, sizeof(d), s->io[IO_RCHAR]), fmt_bytes(e, sizeof(e), s->io[IO_WCHAR]));
        if (s->io_unreadable)
            err |= buf_printf(b, " [%lld processes unreadable: no total]", (long long)s->io_unreadable);
        err |= buf_printf(b, "\n");
        err |= buf_printf(b, "  page faults      %s minor, %s major\n", num(a, sizeof(a), "%.0f", s->minflt),
                          num(c, sizeof(c), "%.0f", s->majflt));
        err |= buf_printf(b, "  context switches %s voluntary, %s involuntary (live members and reaped by the monitor)\n",
                          num(a, sizeof(a), "%.0f", s->vol_ctxsw), num(c, sizeof(c), "%.0f", s->invol_ctxsw));
        err |= buf_printf(b, "  processes        %lld seen by sampling", (long long)s->procs_total);
        if (s->procs_reaped)
            err |= buf_printf(b, " (%lld reaped by the monitor)", (long long)s->procs_reaped);
        err |= buf_printf(b, ", at most %lld at once, at most %lld threads\n", (long long)s->procs_max,
                          (long long)s->threads_max);
    }
    if (s->unread_samples)
        err |= buf_printf(b, "  NOT READ         up to %lld members in %lld samples (out of file descriptors)\n",
                          (long long)s->unread_max, (long long)s->unread_samples);
    if (s->sigchld_pid) {
        err |= buf_printf(b, "  auto-reaping     PID %d (", (int)s->sigchld_pid);
        err |= text_escape(b, s->sigchld_comm, strlen(s->sigchld_comm));
        err |= buf_printf(b, ") ignores SIGCHLD: its children's usage is not in the totals\n");
    }
    if (s->ntop_cpu) {
        err |= buf_printf(b, "  top CPU          ");
        err |= text_tops(b, s->top_cpu, s->ntop_cpu, true);
        if (s->unattributed_cpu_s >= 0.005)
            err |= buf_printf(b, "; %.2f s in processes sampling never saw", s->unattributed_cpu_s);
        err |= buf_printf(b, "\n");
    }
    if (s->ntop_rss) {
        err |= buf_printf(b, "  top memory       ");
        err |= text_tops(b, s->top_rss, s->ntop_rss, false);
        err |= buf_printf(b, "\n");
    }
    err |= buf_printf(b, "  samples          %lld every %s s, %lld missed\n", (long long)s->taken,
                      num(a, sizeof(a), "%g", s->interval_s), (long long)s->missed);
    err |= buf_printf(b, "  monitor          %s s CPU, %s RSS, %s us per sample", num(a, sizeof(a), "%.3f", s->mon_cpu_s),
                      fmt_bytes(c, sizeof(c), s->mon_max_rss), num(d, sizeof(d), "%.1f", s->mon_mean_cost_s * 1e6));
    if (s->write_errors)
        err |= buf_printf(b, "; %lld samples NOT recorded (write errors)", (long long)s->write_errors);
    err |= buf_printf(b, "\n");
    if (m && model_parts_summary_text(m, b) < 0)
        err = 1;
    if (info->recording) {
        err |= buf_printf(b, "  recording        ");
        err |= text_escape(b, info->recording, strlen(info->recording));
        err |= buf_printf(b, "\n");
    }
    return err ? -ENOMEM : 0;
}
