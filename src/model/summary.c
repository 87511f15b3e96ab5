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
        if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-") ==
                      strlen(s)) {
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

static void jw_peak(jw_t *w, const char *key, const char *name, double v)
{
    jw_open(w, key);
    jw_num(w, name, v);
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

static const char pss_method[] =
    "smaps_rollup of every process at the same sample (at the first, every --uss-every (30 s by default), at "
    "the closing sample, and within 1% of a CPU when a process appears, exits, execs or its RSS moves by a "
    "tenth or settles a fiftieth away, and at phase marks); between reads each process's last PSS and USS "
    "move with its RSS. private: the sum of the processes' Private_* pages (USS); shared: PSS - USS, the "
    "shared pages counted once for the tree (a page shared by k processes counts 1/k in each)";

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

    bool node = s->scope == JS_SCOPE_NODE; /* the host's own accounting, not a process tree */
    jw_open(&w, "cpu");
    jw_num(&w, "user_s", s->user_s);
    jw_num(&w, "system_s", s->system_s);
    jw_num(&w, "total_s", s->total_s);
    jw_str(
        &w, "total_method",
        node ? "node: the host's accounting of every CPU (/proc/stat busy time: user + nice + system + irq + "
               "softirq + steal)"
        : s->cpu_from_cgroup ? "cgroup: the kernel's accounting of every task in the scope's cgroup"
        : s->scope == JS_SCOPE_USER
            ? "the user's processes: their stat at each sample plus what they reaped; processes reaped by "
              "another user's process (short commands a root daemon, sudo or cron starts for the user) are "
              "missed"
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
    jw_num(&w, "peak_bytes", s->peak_bytes);
    jw_str(&w, "peak_method", s->peak_method);
    jw_num(&w, "peak_pss_bytes", s->peak_pss);
    jw_num(&w, "peak_private_bytes", s->peak_private);
    jw_num(&w, "peak_shared_bytes", s->peak_shared);
    jw_int(&w, "pss_samples", s->pss_samples);
    jw_str(&w, "pss_method", node ? NULL : pss_method);
    jw_num(&w, "peak_rss_sum_bytes", s->peak_rss_sum);
    jw_str(&w, "peak_rss_sum_method",
           node ? "sampled: the node's largest memory in use (MemTotal - MemAvailable) at one sample"
                : "sampled: the largest sum of the members' RSS at one sample; a page shared by k processes "
                  "counts k times");
    jw_num(&w, "peak_rss_kernel_bytes", s->peak_rss_kernel);
    jw_str(
        &w, "peak_rss_kernel_method",
        node
            ? "kernel: the largest high-water mark (VmHWM) of the top processes that had rows (--top N); per "
              "process, not a sum"
            : "kernel: the largest single process's high-water mark (VmHWM of members, ru_maxrss of reaped "
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
    jw_peak(&w, "main", "peak_rss_bytes", s->peak_rss_main);
    jw_peak(&w, "descendants", "peak_rss_sum_bytes", s->peak_rss_desc);
    jw_int(&w, "uss_unreadable_processes", s->uss_unreadable);
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
    jw_str(&w, "method",
           node ? NULL
                : "live members' /proc status (status cadence) plus what the monitor reaped; "
                  "children reaped by other members are not included");
    jw_close(&w);

    jw_open(&w, "processes");
    jw_int(&w, "total", s->procs_total);
    jw_str(&w, "total_method",
           node ? "node: max_concurrent counts the node's processes at a sample; total, the "
                  "top processes that had rows (--top N)"
                : "sampled: processes seen at a sample; ones that lived between samples are "
                  "not counted (their CPU and I/O are)");
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
    if (s->autoreap_pid || s->autoreap_cpu_s > 0) {
        jw_open(&w, "auto_reaped");
        jw_int(&w, "pid", s->autoreap_pid);
        jw_str(&w, "comm", s->autoreap_comm);
        jw_num(&w, "sampled_cpu_s", s->autoreap_cpu_s);
        jw_str(&w, "method",
               "children that vanished while their parent lived, whose CPU never reached its "
               "cutime (SA_NOCLDWAIT or SIGCHLD ignored): their CPU as last sampled is counted");
        jw_close(&w);
    }
    jw_close(&w);

    jw_open(&w, "top");
    jw_tops(&w, "by_cpu", s->top_cpu, s->ntop_cpu);
    jw_tops(&w, "by_memory", s->top_rss, s->ntop_rss);
    jw_num(&w, "unattributed_cpu_s", s->unattributed_cpu_s);
    jw_str(&w, "method",
           "per command name, from the processes sampling saw (own CPU while monitored, as last "
           "seen: a process older than the monitoring counts from its first row; largest RSS of "
           "one process); unattributed: the exact total less all of those");
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
    jw_bool(&w, "memory", s->peak_exact);
    jw_str(
        &w, "peak_rss_reason",
        s->exact_peak_rss ? NULL
        : s->sigchld_pid || s->autoreap_pid
            ? "children were reaped by the kernel without accounting: their peak RSS never reached a reaper"
        : s->unread_samples ? "some members could not be read (descriptor limit)"
                            : "sampled: processes that exited between samples are not seen");
    jw_str(&w, "cpu_reason",
           !s->exact_cpu        ? s->inexact_cpu_reason
           : node               ? "the host's own accounting (/proc/stat) covers every CPU"
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

/* text_head: the first line (what ran, where) and, in the full form, the scope */
static int text_head(js_buf_t *b, const js_run_info_t *info)
{
    int err = buf_printf(b, "jobscope %s: ", info->version ? info->version : "?");
    if (info->command_shell)
        err |= safe_text(b, info->command_shell);
    else
        err |= text_escape(b, info->command_json ? info->command_json : "[]",
                           strlen(info->command_json ? info->command_json : "[]"));
    err |= buf_printf(b, " on ");
    err |= text_escape(b, info->host ? info->host : "?", strlen(info->host ? info->host : "?"));
    err |= buf_printf(b, "\n");
    return err;
}

/* text_state: the lines about how the run ended that are not its exit status (state, exec error) */
static int text_state(js_buf_t *b, const js_run_info_t *info)
{
    int err = 0;
    const char *state = info->state ? info->state : "complete";
    if (strcmp(state, "in progress") == 0)
        err |= buf_printf(
            b, "  state            in progress: the monitor is still recording; figures up to the last "
               "sample\n");
    else if (strcmp(state, "incomplete") == 0)
        err |=
            buf_printf(b, "  state            INCOMPLETE: the monitor stopped without closing the recording "
                          "(killed?); figures up to its last sample\n");
    if (info->exec_error)
        err |= buf_printf(b, "  error            the command could not be started: %s\n", info->exec_error);
    return err;
}

/* text_cpu_exact: " [exact: ...]" or " [not exact: ...]" after a CPU total */
static int text_cpu_exact(js_buf_t *b, const js_summary_t *s, bool full)
{
    char a[64];
    if (isnan(s->total_s))
        return 0;
    if (s->exact_cpu && s->cpu_from_cgroup)
        return full ? buf_printf(b, "  [exact: cgroup %s]; process tree %s s",
                                 s->cpu_file ? s->cpu_file : "accounting",
                                 num(a, sizeof(a), "%.3f", s->tree_total_s))
                    : buf_printf(b, " [exact: cgroup]");
    if (s->exact_cpu)
        return buf_printf(b, full ? "  [exact: kernel accounting]" : " [exact]");
    return buf_printf(b, "%s[not exact: %s]", full ? "  " : " ",
                      s->inexact_cpu_reason ? s->inexact_cpu_reason : "?");
}

/* text_cores: "mean 0.36, max 0.91 of 2 available (cpuset); efficiency 18.2%", leaving out what is unknown */
static int text_cores(js_buf_t *b, const js_summary_t *s, bool with_max)
{
    char a[64], c[64], d[64];
    int err = buf_printf(b, "mean %s", num(a, sizeof(a), "%.2f", s->mean_cores));
    if (with_max)
        err |= buf_printf(b, ", max %s", num(c, sizeof(c), "%.2f", s->max_cores));
    if (isnan(s->cores_available))
        return err | buf_printf(b, " cores");
    err |= buf_printf(b, " of %s %s", num(d, sizeof(d), "%.4g", s->cores_available),
                      with_max ? "available" : "cores");
    if (s->cores_bound)
        err |= buf_printf(b, " (%s)", s->cores_bound);
    if (!isnan(s->efficiency))
        err |= buf_printf(b, "; efficiency %s%%", num(a, sizeof(a), "%.1f", s->efficiency * 100));
    return err;
}

/* text_memory: the headline, and in one line which figure to request memory by */
static int text_memory(js_buf_t *b, const js_summary_t *s)
{
    char a[64], c[64];
    if (s->scope == JS_SCOPE_NODE)
        return buf_printf(b, "  memory in use    peak %s (MemTotal - MemAvailable, sampled)\n",
                          fmt_bytes(a, sizeof(a), s->peak_bytes));
    if (isnan(s->peak_bytes))
        return buf_printf(
            b, "  memory           peak n/a (no process was sampled and no high-water mark read)\n");
    const char *how =
        !s->peak_method ? "?"
        : !strncmp(s->peak_method, "cgroup", 6)
            ? (s->peak_exact ? "exact: the cgroup's high-water mark" : "the cgroup's high-water mark")
        : !strncmp(s->peak_method, "kernel", 6) ? "kernel: the largest process's high-water mark"
        : strstr(s->peak_method, "PSS")         ? "sampled: PSS sum"
                                                : "sampled: RSS sum, shared pages counted per process";
    int err = buf_printf(b, "  memory           peak %s [%s]", fmt_bytes(a, sizeof(a), s->peak_bytes), how);
    if (!isnan(s->peak_kernel_tree) && s->peak_bytes > s->peak_kernel_tree)
        err |= buf_printf(b, ", above the cgroup's %s (pages charged before to another cgroup)",
                          fmt_bytes(c, sizeof(c), s->peak_kernel_tree));
    err |= buf_printf(b, "; request memory by this figure\n");
    return err;
}

/* text_io: storage bytes, and (full) the bytes passed to read and write calls */
static int text_io(js_buf_t *b, const js_summary_t *s, bool full)
{
    char a[64], c[64], d[64], e[64];
    int err = buf_printf(b, "  I/O              read %s, written %s (storage)",
                         fmt_bytes(a, sizeof(a), s->io[IO_READ]), fmt_bytes(c, sizeof(c), s->io[IO_WRITE]));
    if (full)
        err |= buf_printf(b, "; %s read, %s written through read/write calls",
                          fmt_bytes(d, sizeof(d), s->io[IO_RCHAR]), fmt_bytes(e, sizeof(e), s->io[IO_WCHAR]));
    if (s->io_unreadable)
        err |= buf_printf(b, " [%lld process%s unreadable: not in the total]", (long long)s->io_unreadable,
                          s->io_unreadable == 1 ? "" : "es");
    return err | buf_printf(b, "\n");
}

/* text_flags: what a reader must know before trusting the figures (short form: one line) */
static int text_flags(js_buf_t *b, const js_run_info_t *info, const js_summary_t *s)
{
    int err = buf_printf(b, "  flags            ");
    int n = 0;
    if (s->sigchld_pid) {
        err |= buf_printf(b, "PID %d (", (int)s->sigchld_pid);
        err |= text_escape(b, s->sigchld_comm, strlen(s->sigchld_comm));
        err |= buf_printf(b, ") ignores SIGCHLD: its children's usage is not in the totals");
        n++;
    }
    if (s->unread_samples)
        err |= buf_printf(b, "%sup to %lld members NOT READ in %lld samples (out of file descriptors)",
                          n++ ? "; " : "", (long long)s->unread_max, (long long)s->unread_samples);
    if (s->write_errors)
        err |= buf_printf(b, "%s%lld samples NOT recorded (write errors)", n++ ? "; " : "",
                          (long long)s->write_errors);
    if (s->missed)
        err |= buf_printf(b, "%s%lld samples missed", n++ ? "; " : "", (long long)s->missed);
    if (info->stop_reason && info->mode && strcmp(info->mode, "run") != 0)
        err |= buf_printf(b, "%sstopped by %s", n++ ? "; " : "", info->stop_reason);
    if (!n)
        err |= buf_printf(b, "none");
    return err | buf_printf(b, "\n");
}

static int text_recording(js_buf_t *b, const js_run_info_t *info, bool full)
{
    if (!info->recording)
        return 0;
    int err = buf_printf(b, "  recording        ");
    err |= text_escape(b, info->recording, strlen(info->recording));
    if (!full)
        err |= buf_printf(b, " (everything: jobscope summary --summary=full)");
    return err | buf_printf(b, "\n");
}

/* summary_short: at a glance, like seff or time -v: what ran, wall and exit, CPU and efficiency, the memory
 * headline, I/O, GPUs and energy where present, processes, flags, the recording */
static int summary_short(js_buf_t *b, const js_run_info_t *info, const js_summary_t *s, const js_model_t *m)
{
    char a[64], c[64];
    int err = text_head(b, info) | text_state(b, info);
    bool run = !info->mode || strcmp(info->mode, "run") == 0;
    if (info->exec_error && !s->taken) {
        if (info->have_exit)
            err |= buf_printf(b, "  exit status      %d\n", info->exit_status);
        err |= text_recording(b, info, false);
        return err ? -ENOMEM : 0;
    }
    err |= buf_printf(b, "  wall time        %s s", num(a, sizeof(a), "%.3f", s->wall_s));
    if (info->have_exit)
        err |= buf_printf(b, "; exit status %d", info->exit_status);
    else if (run && strcmp(info->state ? info->state : "complete", "complete") != 0)
        err |= buf_printf(b, "; exit status unknown (not recorded)");
    if (info->scope && !run)
        err |= buf_printf(b, "; %s", info->scope);
    err |= buf_printf(b, "\n");
    if (isnan(s->total_s)) {
        err |= buf_printf(b, "  CPU time         n/a (no sample was recorded)\n");
    } else {
        err |= buf_printf(b, "  CPU time         %s s", num(a, sizeof(a), "%.3f", s->total_s));
        err |= text_cpu_exact(b, s, false);
        err |= buf_printf(b, "; ");
        err |= text_cores(b, s, false);
        err |= buf_printf(b, "\n");
    }
    err |= text_memory(b, s);
    if (s->scope != JS_SCOPE_NODE)
        err |= text_io(b, s, false);
    if (m && model_parts_summary_short(m, b) < 0)
        err = 1;
    if (s->scope == JS_SCOPE_NODE)
        err |= buf_printf(b, "  processes        at most %lld on the node\n", (long long)s->procs_max);
    else
        err |= buf_printf(b, "  processes        %lld seen, at most %lld at once, at most %lld threads\n",
                          (long long)s->procs_total, (long long)s->procs_max, (long long)s->threads_max);
    err |= text_flags(b, info, s);
    (void)c;
    err |= text_recording(b, info, false);
    return err ? -ENOMEM : 0;
}

/* summary_full: everything, one figure per line */
static int summary_full(js_buf_t *b, const js_run_info_t *info, const js_summary_t *s, const js_model_t *m)
{
    char a[64], c[64], d[64];
    int err = text_head(b, info);
    if (info->scope)
        err |= buf_printf(b, "  scope            %s\n", info->scope);
    err |= text_state(b, info);
    const char *state = info->state ? info->state : "complete";
    if (info->stop_reason && info->mode && strcmp(info->mode, "run") != 0) /* a run ends with its command */
        err |= buf_printf(b, "  stopped by       %s\n", info->stop_reason);
    if (info->have_exit)
        err |= buf_printf(b, "  exit status      %d\n", info->exit_status);
    else if (strcmp(state, "complete") != 0 && (!info->mode || strcmp(info->mode, "run") == 0))
        err |= buf_printf(b, "  exit status      unknown (not recorded)\n");
    if (info->exec_error && !s->taken) {
        err |= text_recording(b, info, true);
        return err ? -ENOMEM : 0;
    }
    err |= buf_printf(b, "  wall time        %s s\n", num(a, sizeof(a), "%.3f", s->wall_s));
    err |=
        buf_printf(b, "  CPU time         %s s (user %s, system %s)", num(a, sizeof(a), "%.3f", s->total_s),
                   num(c, sizeof(c), "%.3f", s->user_s), num(d, sizeof(d), "%.3f", s->system_s));
    err |= text_cpu_exact(b, s, true);
    err |= buf_printf(b, "\n  cores            ");
    err |= text_cores(b, s, true);
    err |= buf_printf(b, "\n");
    err |= text_memory(b, s);
    if (s->scope == JS_SCOPE_NODE) {
        err |= buf_printf(b, "  processes        at most %lld on the node; rows for the top processes only\n",
                          (long long)s->procs_max);
    } else {
        err |= buf_printf(
            b,
            "  PSS              peak %s: private %s, shared %s (smaps_rollup of every process at %lld "
            "of %lld samples)\n",
            fmt_bytes(a, sizeof(a), s->peak_pss), fmt_bytes(c, sizeof(c), s->peak_private),
            fmt_bytes(d, sizeof(d), s->peak_shared), (long long)s->pss_samples, (long long)s->taken);
        if (s->uss_unreadable)
            err |= buf_printf(
                b, "                   %lld process%s unreadable (another user's): not in the sums\n",
                (long long)s->uss_unreadable, s->uss_unreadable == 1 ? "" : "es");
        err |= buf_printf(b, "  RSS sum          peak %s, a shared page counted once per process",
                          fmt_bytes(a, sizeof(a), s->peak_rss_sum));
        if (s->scope == JS_SCOPE_TREE)
            err |= buf_printf(b, " (main %s, descendants %s)", fmt_bytes(c, sizeof(c), s->peak_rss_main),
                              fmt_bytes(d, sizeof(d), s->peak_rss_desc));
        err |= buf_printf(b, "\n  largest process  %s (kernel high-water of one process",
                          fmt_bytes(a, sizeof(a), s->peak_rss_kernel));
        if (s->peak_kernel_comm[0]) {
            err |= buf_printf(b, ": ");
            err |= text_escape(b, s->peak_kernel_comm, strlen(s->peak_kernel_comm));
            if (s->peak_kernel_pid)
                err |= buf_printf(b, ", PID %d", (int)s->peak_kernel_pid);
        }
        err |= buf_printf(b, ")");
        if (s->sigchld_pid || s->autoreap_pid)
            err |= buf_printf(b, " [not exact: auto-reaped children are not in it]");
        err |= buf_printf(b, "\n");
        if (!isnan(s->peak_kernel_tree))
            err |= buf_printf(
                b,
                "  peak, all procs  %s (the cgroup's kernel high-water mark: every page charged to it%s)\n",
                fmt_bytes(a, sizeof(a), s->peak_kernel_tree),
                s->peak_rss_kernel > s->peak_kernel_tree
                    ? "; below the largest process's, whose pages were partly charged before to "
                      "another cgroup: the memory line takes the larger"
                    : "");
        err |= buf_printf(b, "  swap             peak %s\n", fmt_bytes(a, sizeof(a), s->peak_swap));
        err |= text_io(b, s, true);
        err |= buf_printf(b, "  page faults      %s minor, %s major\n", num(a, sizeof(a), "%.0f", s->minflt),
                          num(c, sizeof(c), "%.0f", s->majflt));
        err |= buf_printf(
            b, "  context switches %s voluntary, %s involuntary (live members and reaped by the monitor)\n",
            num(a, sizeof(a), "%.0f", s->vol_ctxsw), num(c, sizeof(c), "%.0f", s->invol_ctxsw));
        err |= buf_printf(b, "  processes        %lld seen by sampling", (long long)s->procs_total);
        if (s->procs_reaped)
            err |= buf_printf(b, " (%lld reaped by the monitor)", (long long)s->procs_reaped);
        err |= buf_printf(b, ", at most %lld at once, at most %lld threads\n", (long long)s->procs_max,
                          (long long)s->threads_max);
    }
    if (s->unread_samples)
        err |=
            buf_printf(b, "  NOT READ         up to %lld members in %lld samples (out of file descriptors)\n",
                       (long long)s->unread_max, (long long)s->unread_samples);
    if (s->sigchld_pid) {
        err |= buf_printf(b, "  auto-reaping     PID %d (", (int)s->sigchld_pid);
        err |= text_escape(b, s->sigchld_comm, strlen(s->sigchld_comm));
        err |= buf_printf(b, ") ignores SIGCHLD: its children's usage is not in the totals\n");
    }
    if (s->autoreap_pid && !s->sigchld_pid) {
        err |= buf_printf(b, "  auto-reaping     PID %d (", (int)s->autoreap_pid);
        err |= text_escape(b, s->autoreap_comm, strlen(s->autoreap_comm));
        err |= buf_printf(b,
                          ") reaps its children without accounting (SA_NOCLDWAIT): %s s of theirs counted as "
                          "sampled, the rest is missing\n",
                          num(a, sizeof(a), "%.2f", s->autoreap_cpu_s));
    }
    if (s->ntop_cpu) {
        err |= buf_printf(b, "  top CPU          ");
        err |= text_tops(b, s->top_cpu, s->ntop_cpu, true);
        if (s->unattributed_cpu_s > s->unattributed_floor_s && s->unattributed_cpu_s >= 0.005)
            err |= buf_printf(
                b,
                "; %.2f s not seen by sampling (processes that lived between samples, or a process's "
                "last interval)",
                s->unattributed_cpu_s);
        err |= buf_printf(b, "\n");
    }
    if (s->ntop_rss) {
        err |= buf_printf(b, "  top memory       ");
        err |= text_tops(b, s->top_rss, s->ntop_rss, false);
        err |= buf_printf(b, "\n");
    }
    err |= buf_printf(b, "  samples          %lld every %s s, %lld missed\n", (long long)s->taken,
                      num(a, sizeof(a), "%g", s->interval_s), (long long)s->missed);
    err |= buf_printf(b, "  monitor          %s s CPU, %s RSS, %s us per sample",
                      num(a, sizeof(a), "%.3f", s->mon_cpu_s), fmt_bytes(c, sizeof(c), s->mon_max_rss),
                      num(d, sizeof(d), "%.1f", s->mon_mean_cost_s * 1e6));
    if (s->write_errors)
        err |= buf_printf(b, "; %lld samples NOT recorded (write errors)", (long long)s->write_errors);
    err |= buf_printf(b, "\n");
    if (m && model_parts_summary_text(m, b) < 0)
        err = 1;
    err |= text_recording(b, info, true);
    return err ? -ENOMEM : 0;
}

int summary_text(js_buf_t *b, const js_run_info_t *info, const js_summary_t *s, const js_model_t *m,
                 js_summary_form_t form)
{
    return form == JS_SUMMARY_FULL ? summary_full(b, info, s, m) : summary_short(b, info, s, m);
}

int summary_form_parse(const char *s, js_summary_form_t *ret)
{
    if (s && !strcmp(s, "short"))
        *ret = JS_SUMMARY_SHORT;
    else if (s && !strcmp(s, "full"))
        *ret = JS_SUMMARY_FULL;
    else
        return -EINVAL;
    return 0;
}
