/* SPDX-License-Identifier: MIT
 *
 * Summary rendering: JSON for machines, text for people (see summary.h). Every figure says how it was
 * obtained where that matters (exact kernel accounting, sampled, largest single process); a missing figure
 * is null or "n/a", never 0; text that came from the job (command lines, command names) is escaped so no
 * control character reaches the terminal.
 */
#include "model/summary.h"

#include "core/json.h"
#include "model/figure.h"
#include "model/part.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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

/* ---- the run's facts and the tree model's figures, as rows ------------------------------------------ */

static const char pss_method[] =
    "smaps_rollup of every process at the same sample (at the first, every --uss-every (30 s by default), at "
    "the closing sample, and within 1% of a CPU when a process appears, exits, execs or its RSS moves by a "
    "tenth or settles a fiftieth away, and at phase marks); between reads each process's last PSS and USS "
    "move with its RSS. private: the sum of the processes' Private_* pages (USS); shared: PSS - USS, the "
    "shared pages counted once for the tree (a page shared by k processes counts 1/k in each)";

static const char *const scope_kinds[JS_SCOPE_MAX] = {"tree", "user", "cgroup", "node"};

/* put_info: what ran, where, how it ended */
static void put_info(js_figure_t *r, const js_run_info_t *info, const js_summary_t *s)
{
    fig_put_text(r, "jobscope_version", info->version);
    fig_put_json(r, "command", info->command_json ? info->command_json : "[]");
    fig_put_text(r, "command_line", info->command_shell);
    fig_put_text(r, "host", info->host);
    fig_put_text(r, "mode", info->mode);
    if (info->scope)
        fig_put_text(r, "scope", info->scope);
    fig_put_text(r, "scope_kind", s->scope < JS_SCOPE_MAX ? scope_kinds[s->scope] : NULL);
    fig_put_text(r, "state", info->state ? info->state : "complete");
    js_figure_t *ex = fig_put_int(r, "exit_status", NULL, info->exit_status);
    if (!info->have_exit)
        fig_put_null(ex);
    if (info->exec_error)
        fig_put_text(r, "exec_error", info->exec_error);
    fig_put_text(r, "stop_reason", info->stop_reason);
    fig_merge(fig_put_num(r, "wall_time_s", "s", s->wall_s), FIG_MERGE_MAX);
    fig_put_text(r, "recording", info->recording);
}

static void put_cpu(js_figure_t *r, const js_summary_t *s)
{
    bool node = s->scope == JS_SCOPE_NODE; /* the host's own accounting, not a process tree */
    fig_put_num(r, "cpu.user_s", "s", s->user_s);
    fig_put_num(r, "cpu.system_s", "s", s->system_s);
    js_figure_t *total = fig_merge(fig_put_num(r, "cpu.total_s", "s", s->total_s), FIG_MERGE_SUM);
    fig_exact(
        fig_how(total, "total_method",
                node ? "node: the host's accounting of every CPU (/proc/stat busy time: user + nice + "
                       "system + irq + softirq + steal)"
                : s->cpu_from_cgroup ? "cgroup: the kernel's accounting of every task in the scope's cgroup"
                : s->scope == JS_SCOPE_USER
                    ? "the user's processes: their stat at each sample plus what they reaped; processes "
                      "reaped by another user's process (short commands a root daemon, sudo or cron starts "
                      "for the user) are missed"
                    : "process tree: live members' stat plus what they and the monitor reaped"),
        s->exact_cpu);
    if (s->cpu_file)
        fig_put_text(r, "cpu.total_file", s->cpu_file);
    fig_put_num(r, "cpu.tree_total_s", "s", s->tree_total_s);
    fig_put_num(r, "cpu.sampled_s", "s", s->sampled_s);
    fig_put_num(r, "cpu.mean_cores", "cores", s->mean_cores);
    fig_put_num(r, "cpu.max_cores", "cores", s->max_cores);
    fig_put_num(r, "cpu.efficiency", "fraction", s->efficiency);
    fig_put_num(r, "cpu.cores_available", "cores", s->cores_available);
    fig_put_text(r, "cpu.cores_bound", s->cores_bound);
    fig_put_num(r, "cpu.mean_hardware_fraction", "fraction", s->efficiency);
    fig_put_num(r, "cpu.max_hardware_fraction", "fraction",
                s->cores_available > 0 ? s->max_cores / s->cores_available : NAN);
}

static void put_memory(js_figure_t *r, const js_summary_t *s)
{
    bool node = s->scope == JS_SCOPE_NODE;
    js_figure_t *peak = fig_merge(fig_put_num(r, "memory.peak_bytes", "bytes", s->peak_bytes), FIG_MERGE_MAX);
    fig_exact(fig_how(peak, "peak_method", s->peak_method), s->peak_exact);
    fig_how(fig_put_num(r, "memory.peak_pss_bytes", "bytes", s->peak_pss), "pss_method",
            node ? NULL : pss_method);
    fig_put_num(r, "memory.peak_private_bytes", "bytes", s->peak_private);
    fig_put_num(r, "memory.peak_shared_bytes", "bytes", s->peak_shared);
    fig_put_int(r, "memory.pss_samples", "count", s->pss_samples);
    fig_how(fig_put_num(r, "memory.peak_rss_sum_bytes", "bytes", s->peak_rss_sum), "peak_rss_sum_method",
            node ? "sampled: the node's largest memory in use (MemTotal - MemAvailable) at one sample"
                 : "sampled: the largest sum of the members' RSS at one sample; a page shared by k processes "
                   "counts k times");
    js_figure_t *hwm = fig_put_num(r, "memory.peak_rss_kernel_bytes", "bytes", s->peak_rss_kernel);
    fig_exact(
        fig_how(hwm, "peak_rss_kernel_method",
                node ? "kernel: the largest high-water mark (VmHWM) of the top processes that had rows "
                       "(--top N); per process, not a sum"
                     : "kernel: the largest single process's high-water mark (VmHWM of members, ru_maxrss "
                       "of reaped children, at least its largest sampled RSS); per process, not a sum"),
        s->exact_peak_rss);
    js_figure_t *pid = fig_put_int(r, "memory.largest_process.pid", NULL, s->peak_kernel_pid);
    if (!s->peak_kernel_pid)
        fig_put_null(pid);
    fig_put_text(r, "memory.largest_process.comm", s->peak_kernel_comm[0] ? s->peak_kernel_comm : NULL);
    fig_how(fig_put_num(r, "memory.peak_kernel_tree_bytes", "bytes", s->peak_kernel_tree),
            "peak_kernel_tree_method", s->peak_kernel_tree_method);
    fig_put_num(r, "memory.peak_swap_bytes", "bytes", s->peak_swap);
    fig_put_num(r, "memory.main.peak_rss_bytes", "bytes", s->peak_rss_main);
    fig_put_num(r, "memory.descendants.peak_rss_sum_bytes", "bytes", s->peak_rss_desc);
    fig_put_int(r, "memory.uss_unreadable_processes", "count", s->uss_unreadable);
}

static void put_io(js_figure_t *r, const js_summary_t *s)
{
    fig_merge(fig_put_num(r, "io.read_bytes", "bytes", s->io[IO_READ]), FIG_MERGE_SUM);
    fig_merge(fig_put_num(r, "io.write_bytes", "bytes", s->io[IO_WRITE]), FIG_MERGE_SUM);
    fig_merge(fig_put_num(r, "io.read_chars", "bytes", s->io[IO_RCHAR]), FIG_MERGE_SUM);
    fig_merge(fig_put_num(r, "io.write_chars", "bytes", s->io[IO_WCHAR]), FIG_MERGE_SUM);
    fig_put_num(r, "io.read_syscalls", "count", s->io[IO_SYSCR]);
    fig_put_num(r, "io.write_syscalls", "count", s->io[IO_SYSCW]);
    fig_put_int(r, "io.unreadable_processes", "count", s->io_unreadable);
    fig_put_num(r, "faults.minor", "count", s->minflt);
    fig_put_num(r, "faults.major", "count", s->majflt);
    static const char cs_method[] =
        "live members' /proc status (status cadence) plus what the monitor reaped; "
        "children reaped by other members are not included";
    bool node = s->scope == JS_SCOPE_NODE;
    fig_how(fig_put_num(r, "context_switches.voluntary", "count", s->vol_ctxsw), "method",
            node ? NULL : cs_method);
    fig_how(fig_put_num(r, "context_switches.involuntary", "count", s->invol_ctxsw), "method",
            node ? NULL : cs_method);
}

static void put_processes(js_figure_t *r, const js_summary_t *s)
{
    fig_how(fig_put_int(r, "processes.total", "count", s->procs_total), "total_method",
            s->scope == JS_SCOPE_NODE
                ? "node: max_concurrent counts the node's processes at a sample; total, the "
                  "top processes that had rows (--top N)"
                : "sampled: processes seen at a sample; ones that lived between samples "
                  "are not counted (their CPU and I/O are)");
    fig_put_int(r, "processes.reaped_by_monitor", "count", s->procs_reaped);
    fig_put_int(r, "processes.max_concurrent", "count", s->procs_max);
    fig_put_int(r, "processes.max_threads", "count", s->threads_max);
    fig_put_int(r, "processes.unread_samples", "count", s->unread_samples);
    fig_put_int(r, "processes.unread_max", "count", s->unread_max);
    if (s->sigchld_pid) {
        fig_put_int(r, "processes.ignores_sigchld.pid", NULL, s->sigchld_pid);
        fig_put_text(r, "processes.ignores_sigchld.comm", s->sigchld_comm);
    }
    if (s->autoreap_pid || s->autoreap_cpu_s > 0) {
        fig_put_int(r, "processes.auto_reaped.pid", NULL, s->autoreap_pid);
        fig_put_text(r, "processes.auto_reaped.comm", s->autoreap_comm);
        fig_how(fig_put_num(r, "processes.auto_reaped.sampled_cpu_s", "s", s->autoreap_cpu_s), "method",
                "children that vanished while their parent lived, whose CPU never reached its cutime "
                "(SA_NOCLDWAIT or SIGCHLD ignored): their CPU as last sampled is counted");
    }
}

static void put_tops(js_figure_t *r, const char *path, const js_top_t *t, int n)
{
    fig_put_array(r, path);
    char p[64];
    for (int i = 0; i < n; i++) {
        fig_put_elem(r, path);
        snprintf(p, sizeof(p), "%s[].comm", path);
        fig_put_text(r, p, t[i].comm);
        snprintf(p, sizeof(p), "%s[].cpu_s", path);
        fig_put_num(r, p, "s", t[i].cpu_s);
        snprintf(p, sizeof(p), "%s[].peak_rss_bytes", path);
        fig_put_num(r, p, "bytes", t[i].peak_rss);
        snprintf(p, sizeof(p), "%s[].processes", path);
        fig_put_int(r, p, "count", t[i].procs);
    }
}

static void put_rest(js_figure_t *r, const js_summary_t *s)
{
    put_tops(r, "top.by_cpu", s->top_cpu, s->ntop_cpu);
    put_tops(r, "top.by_memory", s->top_rss, s->ntop_rss);
    fig_put_num(r, "top.others_cpu_s", "s", s->others_cpu_s);
    fig_put_int(r, "top.others_commands", "count", s->others_commands);
    fig_how(fig_put_num(r, "top.unattributed_cpu_s", "s", s->unattributed_cpu_s), "method",
            "per command name, from the processes sampling saw (own CPU while monitored, as last seen: a "
            "process older than the monitoring counts from its first row; largest RSS of one process); "
            "unattributed: the exact total less all of those");
    fig_put_num(r, "top.unattributed_floor_s", "s", s->unattributed_floor_s);
    fig_put_num(r, "samples.interval_s", "s", s->interval_s);
    fig_put_int(r, "samples.taken", "count", s->taken);
    fig_put_int(r, "samples.missed", "count", s->missed);
    fig_put_num(r, "monitor.cpu_s", "s", s->mon_cpu_s);
    fig_put_num(r, "monitor.max_rss_bytes", "bytes", s->mon_max_rss);
    fig_put_num(r, "monitor.mean_sample_cost_s", "s", s->mon_mean_cost_s);
    fig_put_int(r, "monitor.write_errors", "count", s->write_errors);
    bool node = s->scope == JS_SCOPE_NODE;
    fig_how(fig_merge(fig_put_bool(r, "exact.cpu", s->exact_cpu), FIG_MERGE_ALL), "cpu_reason",
            !s->exact_cpu        ? s->inexact_cpu_reason
            : node               ? "the host's own accounting (/proc/stat) covers every CPU"
            : s->cpu_from_cgroup ? "the scope's cgroup: kernel accounting of every task in it"
                                 : "kernel accounting covers every process of the scope");
    fig_how(
        fig_put_bool(r, "exact.peak_rss", s->exact_peak_rss), "peak_rss_reason",
        s->exact_peak_rss ? NULL
        : s->sigchld_pid || s->autoreap_pid
            ? "children were reaped by the kernel without accounting: their peak RSS never reached a reaper"
        : s->unread_samples ? "some members could not be read (descriptor limit)"
                            : "sampled: processes that exited between samples are not seen");
    fig_put_bool(r, "exact.memory", s->peak_exact);
}

void summary_put_tree(js_figure_t *r, const js_run_info_t *info, const js_summary_t *s)
{
    put_info(r, info, s);
    put_cpu(r, s);
    put_memory(r, s);
    put_io(r, s);
    put_processes(r, s);
    put_rest(r, s);
}

js_summary_table_t *summary_build(const js_run_info_t *info, const js_summary_t *s, const js_model_t *m)
{
    js_summary_table_t *t = figure_new();
    if (!t)
        return NULL;
    summary_put_tree(figure_root(t), info, s);
    if (m)
        model_parts_summary(m, figure_root(t));
    if (figure_error(t) < 0) {
        figure_free(t);
        return NULL;
    }
    return t;
}

int summary_json(js_buf_t *b, const js_run_info_t *info, const js_summary_t *s, const js_model_t *m)
{
    js_summary_table_t *t = summary_build(info, s, m);
    if (!t)
        return -ENOMEM;
    int rc = figure_json(t, b);
    figure_free(t);
    return rc;
}

/* ---- the text summary, from the table -------------------------------------------------------------- */

static const char *num(char *buf, size_t cap, const char *fmt, double v)
{
    return fig_fmt(buf, cap, fmt, v);
}

static int escaped(js_buf_t *b, const char *s)
{
    return text_escape(b, s ? s : "", s ? strlen(s) : 0);
}

/* text_tops: "name 3.00 s, other 1.20 s" (cpu) or "name 8.80 MiB, ..." (memory) */
static int text_tops(js_buf_t *b, const js_figure_t *tops, bool cpu)
{
    int err = 0;
    char a[64];
    size_t n = fig_count(tops), shown = n < JS_TOP_N ? n : JS_TOP_N;
    for (size_t i = 0; i < shown; i++) {
        const js_figure_t *t = fig_kid(tops, i);
        if (i)
            err |= buf_append(b, ", ", 2);
        err |= escaped(b, fig_text(t, "comm"));
        if (cpu)
            err |= buf_printf(b, " %s s", num(a, sizeof(a), "%.2f", fig_num(t, "cpu_s")));
        else
            err |= buf_printf(b, " %s", fmt_bytes(a, sizeof(a), fig_num(t, "peak_rss_bytes")));
        int64_t procs = fig_int(t, "processes", 0);
        if (procs > 1)
            err |= buf_printf(b, " (%lld processes)", (long long)procs);
    }
    if (n > shown)
        err |= buf_printf(b, ", %zu more", n - shown);
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

static const char *text_or(const js_figure_t *r, const char *path, const char *dflt)
{
    const char *s = fig_text(r, path);
    return s ? s : dflt;
}

/* text_head: the first line (what ran, where) */
static int text_head(js_buf_t *b, const js_figure_t *r)
{
    int err = buf_printf(b, "jobscope %s: ", text_or(r, "jobscope_version", "?"));
    const char *shell = fig_text(r, "command_line");
    if (shell)
        err |= safe_text(b, shell);
    else
        err |= escaped(b, text_or(r, "command", "[]"));
    err |= buf_printf(b, " on ");
    err |= escaped(b, text_or(r, "host", "?"));
    err |= buf_printf(b, "\n");
    return err;
}

/* text_state: the lines about how the run ended that are not its exit status (state, exec error) */
static int text_state(js_buf_t *b, const js_figure_t *r)
{
    int err = 0;
    const char *state = text_or(r, "state", "complete");
    if (strcmp(state, "in progress") == 0)
        err |= buf_printf(
            b, "  state            in progress: the monitor is still recording; figures up to the last "
               "sample\n");
    else if (strcmp(state, "incomplete") == 0)
        err |=
            buf_printf(b, "  state            INCOMPLETE: the monitor stopped without closing the recording "
                          "(killed?); figures up to its last sample\n");
    const char *exec_error = fig_text(r, "exec_error");
    if (exec_error)
        err |= buf_printf(b, "  error            the command could not be started: %s\n", exec_error);
    return err;
}

/* text_cpu_exact: " [exact: ...]" or " [not exact: ...]" after a CPU total */
static int text_cpu_exact(js_buf_t *b, const js_figure_t *r, bool full)
{
    char a[64];
    const js_figure_t *total = fig_get(r, "cpu.total_s");
    if (isnan(fig_value(total)))
        return 0;
    bool from_cgroup = total->method && strncmp(total->method, "cgroup:", 7) == 0;
    if (total->exact == FIG_EXACT && from_cgroup)
        return full ? buf_printf(b, "  [exact: cgroup %s]; process tree %s s",
                                 text_or(r, "cpu.total_file", "accounting"),
                                 num(a, sizeof(a), "%.3f", fig_num(r, "cpu.tree_total_s")))
                    : buf_printf(b, " [exact: cgroup]");
    if (total->exact == FIG_EXACT)
        return buf_printf(b, full ? "  [exact: kernel accounting]" : " [exact]");
    const js_figure_t *ex = fig_get(r, "exact.cpu");
    return buf_printf(b, "%s[not exact: %s]", full ? "  " : " ", ex && ex->method ? ex->method : "?");
}

/* text_cores: "mean 0.36, max 0.91 of 2 available (cpuset); efficiency 18.2%", leaving out what is unknown */
static int text_cores(js_buf_t *b, const js_figure_t *r, bool with_max)
{
    char a[64], c[64], d[64];
    int err = buf_printf(b, "mean %s", num(a, sizeof(a), "%.2f", fig_num(r, "cpu.mean_cores")));
    if (with_max)
        err |= buf_printf(b, ", max %s", num(c, sizeof(c), "%.2f", fig_num(r, "cpu.max_cores")));
    double avail = fig_num(r, "cpu.cores_available");
    if (isnan(avail))
        return err | buf_printf(b, " cores");
    err |= buf_printf(b, " of %s %s", num(d, sizeof(d), "%.4g", avail), with_max ? "available" : "cores");
    const char *bound = fig_text(r, "cpu.cores_bound");
    if (bound)
        err |= buf_printf(b, " (%s)", bound);
    double eff = fig_num(r, "cpu.efficiency");
    if (!isnan(eff))
        err |= buf_printf(b, "; efficiency %s%%", num(a, sizeof(a), "%.1f", eff * 100));
    return err;
}

static bool node_scope(const js_figure_t *r)
{
    const char *k = fig_text(r, "scope_kind");
    return k && strcmp(k, "node") == 0;
}

/* text_memory: the headline, and in one line which figure to request memory by */
static int text_memory(js_buf_t *b, const js_figure_t *r)
{
    char a[64], c[64];
    const js_figure_t *peak = fig_get(r, "memory.peak_bytes");
    double bytes = fig_value(peak);
    if (node_scope(r))
        return buf_printf(b, "  memory in use    peak %s (MemTotal - MemAvailable, sampled)\n",
                          fmt_bytes(a, sizeof(a), bytes));
    if (isnan(bytes))
        return buf_printf(
            b, "  memory           peak n/a (no process was sampled and no high-water mark read)\n");
    const char *m = peak->method;
    const char *how = !m ? "?"
                      : !strncmp(m, "cgroup", 6)
                          ? (peak->exact == FIG_EXACT ? "exact: the cgroup's high-water mark"
                                                      : "the cgroup's high-water mark")
                      : !strncmp(m, "kernel", 6) ? "kernel: the largest process's high-water mark"
                      : strstr(m, "PSS")         ? "sampled: PSS sum"
                                                 : "sampled: RSS sum, shared pages counted per process";
    int err = buf_printf(b, "  memory           peak %s [%s]", fmt_bytes(a, sizeof(a), bytes), how);
    /* the largest process's mark misses children the kernel reaped without a wait (exact.peak_rss) */
    if (m && !strncmp(m, "kernel", 6) &&
        (fig_int(r, "processes.ignores_sigchld.pid", 0) || fig_int(r, "processes.auto_reaped.pid", 0)))
        err |= buf_printf(b, " [not exact: auto-reaped children are not in it]");
    double cg = fig_num(r, "memory.peak_kernel_tree_bytes");
    if (!isnan(cg) && bytes > cg)
        err |= buf_printf(b, ", above the cgroup's %s (pages charged before to another cgroup)",
                          fmt_bytes(c, sizeof(c), cg));
    err |= buf_printf(b, "; request memory by this figure\n");
    return err;
}

/* text_io: storage bytes, and (full) the bytes passed to read and write calls */
static int text_io(js_buf_t *b, const js_figure_t *r, bool full)
{
    char a[64], c[64], d[64], e[64];
    int err = buf_printf(b, "  I/O              read %s, written %s (storage)",
                         fmt_bytes(a, sizeof(a), fig_num(r, "io.read_bytes")),
                         fmt_bytes(c, sizeof(c), fig_num(r, "io.write_bytes")));
    if (full)
        err |= buf_printf(b, "; %s read, %s written through read/write calls",
                          fmt_bytes(d, sizeof(d), fig_num(r, "io.read_chars")),
                          fmt_bytes(e, sizeof(e), fig_num(r, "io.write_chars")));
    int64_t unreadable = fig_int(r, "io.unreadable_processes", 0);
    if (unreadable)
        err |= buf_printf(b, " [%lld process%s unreadable: not in the total]", (long long)unreadable,
                          unreadable == 1 ? "" : "es");
    return err | buf_printf(b, "\n");
}

static bool is_run(const js_figure_t *r)
{
    const char *mode = fig_text(r, "mode");
    return !mode || strcmp(mode, "run") == 0;
}

/* text_flags: what a reader must know before trusting the figures (short form: one line) */
static int text_flags(js_buf_t *b, const js_figure_t *r)
{
    int err = buf_printf(b, "  flags            ");
    int n = 0;
    int64_t sigchld = fig_int(r, "processes.ignores_sigchld.pid", 0);
    if (sigchld) {
        err |= buf_printf(b, "PID %d (", (int)sigchld);
        err |= escaped(b, fig_text(r, "processes.ignores_sigchld.comm"));
        err |= buf_printf(b, ") ignores SIGCHLD: its children's usage is not in the totals");
        n++;
    }
    int64_t unread = fig_int(r, "processes.unread_samples", 0);
    if (unread)
        err |=
            buf_printf(b, "%sup to %lld members NOT READ in %lld samples (out of file descriptors)",
                       n++ ? "; " : "", (long long)fig_int(r, "processes.unread_max", 0), (long long)unread);
    int64_t werr = fig_int(r, "monitor.write_errors", 0);
    if (werr)
        err |= buf_printf(b, "%s%lld samples NOT recorded (write errors)", n++ ? "; " : "", (long long)werr);
    int64_t missed = fig_int(r, "samples.missed", 0);
    if (missed)
        err |= buf_printf(b, "%s%lld samples missed", n++ ? "; " : "", (long long)missed);
    const char *stop = fig_text(r, "stop_reason");
    if (stop && fig_text(r, "mode") && !is_run(r))
        err |= buf_printf(b, "%sstopped by %s", n++ ? "; " : "", stop);
    if (!n)
        err |= buf_printf(b, "none");
    return err | buf_printf(b, "\n");
}

static int text_recording(js_buf_t *b, const js_figure_t *r, bool full)
{
    const char *rec = fig_text(r, "recording");
    if (!rec)
        return 0;
    int err = buf_printf(b, "  recording        ");
    err |= escaped(b, rec);
    if (!full)
        err |= buf_printf(b, " (everything: jobscope summary --summary=full)");
    return err | buf_printf(b, "\n");
}

int summary_parts_text(js_buf_t *b, const js_figure_t *r, js_summary_form_t form)
{
    bool full = form == JS_SUMMARY_FULL;
    for (size_t i = 0; js_model_parts[i]; i++) {
        int (*fn)(const js_figure_t *, js_buf_t *) =
            full ? js_model_parts[i]->summary_text : js_model_parts[i]->summary_short;
        if (fn && fn(r, b) < 0)
            return -ENOMEM;
    }
    return 0;
}

/* exit_known: whether the run's exit status is known (else null) */
static bool exit_known(const js_figure_t *r)
{
    const js_figure_t *f = fig_get(r, "exit_status");
    return f && f->present;
}

/* text_short: at a glance, like seff or time -v: what ran, wall and exit, CPU and efficiency, the memory
 * headline, I/O, GPUs and energy where present, processes, flags, the recording */
static int text_short(js_buf_t *b, const js_figure_t *r)
{
    char a[64];
    int err = text_head(b, r) | text_state(b, r);
    bool run = is_run(r), node = node_scope(r);
    int exit_status = (int)fig_int(r, "exit_status", 0);
    if (fig_text(r, "exec_error") && !fig_int(r, "samples.taken", 0)) {
        if (exit_known(r))
            err |= buf_printf(b, "  exit status      %d\n", exit_status);
        err |= text_recording(b, r, false);
        return err ? -ENOMEM : 0;
    }
    err |= buf_printf(b, "  wall time        %s s", num(a, sizeof(a), "%.3f", fig_num(r, "wall_time_s")));
    if (exit_known(r))
        err |= buf_printf(b, "; exit status %d", exit_status);
    else if (run && strcmp(text_or(r, "state", "complete"), "complete") != 0)
        err |= buf_printf(b, "; exit status unknown (not recorded)");
    const char *scope = fig_text(r, "scope");
    if (scope && !run)
        err |= buf_printf(b, "; %s", scope);
    err |= buf_printf(b, "\n");
    double total = fig_num(r, "cpu.total_s");
    if (isnan(total)) {
        err |= buf_printf(b, "  CPU time         n/a (no sample was recorded)\n");
    } else {
        err |= buf_printf(b, "  CPU time         %s s", num(a, sizeof(a), "%.3f", total));
        err |= text_cpu_exact(b, r, false);
        err |= buf_printf(b, "; ");
        err |= text_cores(b, r, false);
        err |= buf_printf(b, "\n");
    }
    err |= text_memory(b, r);
    if (!node)
        err |= text_io(b, r, false);
    if (summary_parts_text(b, r, JS_SUMMARY_SHORT) < 0)
        err = 1;
    if (node)
        err |= buf_printf(b, "  processes        at most %lld on the node\n",
                          (long long)fig_int(r, "processes.max_concurrent", 0));
    else
        err |= buf_printf(b, "  processes        %lld seen, at most %lld at once, at most %lld threads\n",
                          (long long)fig_int(r, "processes.total", 0),
                          (long long)fig_int(r, "processes.max_concurrent", 0),
                          (long long)fig_int(r, "processes.max_threads", 0));
    err |= text_flags(b, r);
    err |= text_recording(b, r, false);
    return err ? -ENOMEM : 0;
}

/* text_memory_full: the memory figures beside the headline, one per line */
static int text_memory_full(js_buf_t *b, const js_figure_t *r)
{
    char a[64], c[64], d[64];
    int err =
        buf_printf(b,
                   "  PSS              peak %s: private %s, shared %s (smaps_rollup of every process at %lld "
                   "of %lld samples)\n",
                   fmt_bytes(a, sizeof(a), fig_num(r, "memory.peak_pss_bytes")),
                   fmt_bytes(c, sizeof(c), fig_num(r, "memory.peak_private_bytes")),
                   fmt_bytes(d, sizeof(d), fig_num(r, "memory.peak_shared_bytes")),
                   (long long)fig_int(r, "memory.pss_samples", 0), (long long)fig_int(r, "samples.taken", 0));
    int64_t uss_unreadable = fig_int(r, "memory.uss_unreadable_processes", 0);
    if (uss_unreadable)
        err |=
            buf_printf(b, "                   %lld process%s unreadable (another user's): not in the sums\n",
                       (long long)uss_unreadable, uss_unreadable == 1 ? "" : "es");
    err |= buf_printf(b, "  RSS sum          peak %s, a shared page counted once per process",
                      fmt_bytes(a, sizeof(a), fig_num(r, "memory.peak_rss_sum_bytes")));
    const char *kind = fig_text(r, "scope_kind");
    if (kind && strcmp(kind, "tree") == 0)
        err |= buf_printf(b, " (main %s, descendants %s)",
                          fmt_bytes(c, sizeof(c), fig_num(r, "memory.main.peak_rss_bytes")),
                          fmt_bytes(d, sizeof(d), fig_num(r, "memory.descendants.peak_rss_sum_bytes")));
    double hwm = fig_num(r, "memory.peak_rss_kernel_bytes");
    err |= buf_printf(b, "\n  largest process  %s (kernel high-water of one process",
                      fmt_bytes(a, sizeof(a), hwm));
    const char *comm = fig_text(r, "memory.largest_process.comm");
    if (comm) {
        err |= buf_printf(b, ": ");
        err |= escaped(b, comm);
        int64_t pid = fig_int(r, "memory.largest_process.pid", 0);
        if (pid)
            err |= buf_printf(b, ", PID %d", (int)pid);
    }
    err |= buf_printf(b, ")");
    if (fig_int(r, "processes.ignores_sigchld.pid", 0) || fig_int(r, "processes.auto_reaped.pid", 0))
        err |= buf_printf(b, " [not exact: auto-reaped children are not in it]");
    err |= buf_printf(b, "\n");
    double tree = fig_num(r, "memory.peak_kernel_tree_bytes");
    if (!isnan(tree))
        err |= buf_printf(
            b, "  peak, all procs  %s (the cgroup's kernel high-water mark: every page charged to it%s)\n",
            fmt_bytes(a, sizeof(a), tree),
            hwm > tree ? "; below the largest process's, whose pages were partly charged before to "
                         "another cgroup: the memory line takes the larger"
                       : "");
    err |= buf_printf(b, "  swap             peak %s\n",
                      fmt_bytes(a, sizeof(a), fig_num(r, "memory.peak_swap_bytes")));
    return err;
}

/* text_processes_full: faults, switches, processes, unread members, auto-reaping, the top lists */
static int text_processes_full(js_buf_t *b, const js_figure_t *r, bool node)
{
    char a[64], c[64];
    int err = 0;
    if (node) {
        err |= buf_printf(b, "  processes        at most %lld on the node; rows for the top processes only\n",
                          (long long)fig_int(r, "processes.max_concurrent", 0));
    } else {
        err |= text_memory_full(b, r);
        err |= text_io(b, r, true);
        err |= buf_printf(b, "  page faults      %s minor, %s major\n",
                          num(a, sizeof(a), "%.0f", fig_num(r, "faults.minor")),
                          num(c, sizeof(c), "%.0f", fig_num(r, "faults.major")));
        err |= buf_printf(
            b, "  context switches %s voluntary, %s involuntary (live members and reaped by the monitor)\n",
            num(a, sizeof(a), "%.0f", fig_num(r, "context_switches.voluntary")),
            num(c, sizeof(c), "%.0f", fig_num(r, "context_switches.involuntary")));
        err |= buf_printf(b, "  processes        %lld seen by sampling",
                          (long long)fig_int(r, "processes.total", 0));
        int64_t reaped = fig_int(r, "processes.reaped_by_monitor", 0);
        if (reaped)
            err |= buf_printf(b, " (%lld reaped by the monitor)", (long long)reaped);
        err |= buf_printf(b, ", at most %lld at once, at most %lld threads\n",
                          (long long)fig_int(r, "processes.max_concurrent", 0),
                          (long long)fig_int(r, "processes.max_threads", 0));
    }
    int64_t unread = fig_int(r, "processes.unread_samples", 0);
    if (unread)
        err |=
            buf_printf(b, "  NOT READ         up to %lld members in %lld samples (out of file descriptors)\n",
                       (long long)fig_int(r, "processes.unread_max", 0), (long long)unread);
    int64_t sigchld = fig_int(r, "processes.ignores_sigchld.pid", 0);
    if (sigchld) {
        err |= buf_printf(b, "  auto-reaping     PID %d (", (int)sigchld);
        err |= escaped(b, fig_text(r, "processes.ignores_sigchld.comm"));
        err |= buf_printf(b, ") ignores SIGCHLD: its children's usage is not in the totals\n");
    }
    int64_t autoreap = fig_int(r, "processes.auto_reaped.pid", 0);
    if (autoreap && !sigchld) {
        err |= buf_printf(b, "  auto-reaping     PID %d (", (int)autoreap);
        err |= escaped(b, fig_text(r, "processes.auto_reaped.comm"));
        err |= buf_printf(b,
                          ") reaps its children without accounting (SA_NOCLDWAIT): %s s of theirs counted as "
                          "sampled, the rest is missing\n",
                          num(a, sizeof(a), "%.2f", fig_num(r, "processes.auto_reaped.sampled_cpu_s")));
    }
    const js_figure_t *by_cpu = fig_get(r, "top.by_cpu"), *by_mem = fig_get(r, "top.by_memory");
    if (fig_count(by_cpu)) {
        err |= buf_printf(b, "  top CPU          ");
        err |= text_tops(b, by_cpu, true);
        double un = fig_num(r, "top.unattributed_cpu_s");
        if (un > fig_num(r, "top.unattributed_floor_s") && un >= 0.005)
            err |= buf_printf(
                b,
                "; %.2f s not seen by sampling (processes that lived between samples, or a process's "
                "last interval)",
                un);
        err |= buf_printf(b, "\n");
    }
    if (fig_count(by_mem)) {
        err |= buf_printf(b, "  top memory       ");
        err |= text_tops(b, by_mem, false);
        err |= buf_printf(b, "\n");
    }
    return err;
}

/* text_full: everything, one figure per line */
static int text_full(js_buf_t *b, const js_figure_t *r)
{
    char a[64], c[64], d[64];
    int err = text_head(b, r);
    const char *scope = fig_text(r, "scope");
    if (scope)
        err |= buf_printf(b, "  scope            %s\n", scope);
    err |= text_state(b, r);
    const char *stop = fig_text(r, "stop_reason");
    if (stop && fig_text(r, "mode") && !is_run(r)) /* a run ends with its command */
        err |= buf_printf(b, "  stopped by       %s\n", stop);
    if (exit_known(r))
        err |= buf_printf(b, "  exit status      %d\n", (int)fig_int(r, "exit_status", 0));
    else if (strcmp(text_or(r, "state", "complete"), "complete") != 0 && is_run(r))
        err |= buf_printf(b, "  exit status      unknown (not recorded)\n");
    if (fig_text(r, "exec_error") && !fig_int(r, "samples.taken", 0)) {
        err |= text_recording(b, r, true);
        return err ? -ENOMEM : 0;
    }
    err |= buf_printf(b, "  wall time        %s s\n", num(a, sizeof(a), "%.3f", fig_num(r, "wall_time_s")));
    err |= buf_printf(b, "  CPU time         %s s (user %s, system %s)",
                      num(a, sizeof(a), "%.3f", fig_num(r, "cpu.total_s")),
                      num(c, sizeof(c), "%.3f", fig_num(r, "cpu.user_s")),
                      num(d, sizeof(d), "%.3f", fig_num(r, "cpu.system_s")));
    err |= text_cpu_exact(b, r, true);
    err |= buf_printf(b, "\n  cores            ");
    err |= text_cores(b, r, true);
    err |= buf_printf(b, "\n");
    err |= text_memory(b, r);
    err |= text_processes_full(b, r, node_scope(r));
    err |= buf_printf(b, "  samples          %lld every %s s, %lld missed\n",
                      (long long)fig_int(r, "samples.taken", 0),
                      num(a, sizeof(a), "%g", fig_num(r, "samples.interval_s")),
                      (long long)fig_int(r, "samples.missed", 0));
    err |= buf_printf(b, "  monitor          %s s CPU, %s RSS, %s us per sample",
                      num(a, sizeof(a), "%.3f", fig_num(r, "monitor.cpu_s")),
                      fmt_bytes(c, sizeof(c), fig_num(r, "monitor.max_rss_bytes")),
                      num(d, sizeof(d), "%.1f", fig_num(r, "monitor.mean_sample_cost_s") * 1e6));
    int64_t werr = fig_int(r, "monitor.write_errors", 0);
    if (werr)
        err |= buf_printf(b, "; %lld samples NOT recorded (write errors)", (long long)werr);
    err |= buf_printf(b, "\n");
    if (summary_parts_text(b, r, JS_SUMMARY_FULL) < 0)
        err = 1;
    err |= text_recording(b, r, true);
    return err ? -ENOMEM : 0;
}

int summary_render_text(js_buf_t *b, const js_summary_table_t *t, js_summary_form_t form)
{
    const js_figure_t *r = figure_croot(t);
    return form == JS_SUMMARY_FULL ? text_full(b, r) : text_short(b, r);
}

int summary_text(js_buf_t *b, const js_run_info_t *info, const js_summary_t *s, const js_model_t *m,
                 js_summary_form_t form)
{
    js_summary_table_t *t = summary_build(info, s, m);
    if (!t)
        return -ENOMEM;
    int rc = summary_render_text(b, t, form);
    figure_free(t);
    return rc;
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
