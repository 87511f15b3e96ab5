/* SPDX-License-Identifier: MIT
 *
 * The tree model's stored aggregates (recording schema 2, docs/FORMAT.md): the tree point of every sample as
 * one row of `tree_totals`, and the tree model's closing summary as key/value rows of `summary_state`,
 * written by the recording; and read back (model_use_stored), so that `summary`, `report` and `export` of the
 * tree need not decode every process row again. Both hold the model's own figures, column by column.
 */
#include "model/model_int.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void set_real(js_value_t *v, double d)
{
    if (!isnan(d))
        val_real(v, d);
}

/* clang-format off */
#define TT(n, u, k, h) {n, u, JS_REAL, k, 0, h}
/* clang-format on */

/* table_tree_totals: js_tree_point_t, column by column (tt_off gives each column's field). REAL columns:
 * SQLite stores the whole numbers among them as integers. */
static const js_column_t tt_cols[] = {
    TT("cpu_s", "s", JS_COUNTER, "CPU time of the scope since the start (as the tree view)"),
    TT("user_s", "s", JS_COUNTER, "user CPU time"),
    TT("system_s", "s", JS_COUNTER, "system CPU time"),
    TT("cpu_cores", "cores", JS_GAUGE, "cores busy over the interval"),
    TT("sampled_cpu_s", "s", JS_COUNTER, "CPU time sampling alone sees"),
    TT("rss_bytes", "bytes", JS_GAUGE, "sum of the members' RSS"),
    TT("rss_main_bytes", "bytes", JS_GAUGE, "RSS of the command itself"),
    TT("rss_descendants_bytes", "bytes", JS_GAUGE, "RSS of every other member"),
    TT("shared_bytes", "bytes", JS_GAUGE, "resident file-backed and shared memory"),
    TT("rss_anon_bytes", "bytes", JS_GAUGE, "anonymous RSS"),
    TT("rss_file_bytes", "bytes", JS_GAUGE, "file-backed RSS"),
    TT("rss_shmem_bytes", "bytes", JS_GAUGE, "shared-memory RSS"),
    TT("swap_bytes", "bytes", JS_GAUGE, "swapped out"),
    TT("uss_bytes", "bytes", JS_GAUGE, "unique set size"),
    TT("pss_bytes", "bytes", JS_GAUGE, "proportional set size"),
    TT("hwm_max_bytes", "bytes", JS_GAUGE, "largest single-process VmHWM"),
    TT("members", "count", JS_GAUGE, "live members"),
    TT("threads", "count", JS_GAUGE, "threads of the live members"),
    TT("fds", "count", JS_GAUGE, "open descriptors of the live members"),
    TT("read_chars", "bytes", JS_COUNTER, "bytes passed to read-like calls since the start"),
    TT("write_chars", "bytes", JS_COUNTER, "bytes passed to write-like calls"),
    TT("read_syscalls", "count", JS_COUNTER, "read-like system calls"),
    TT("write_syscalls", "count", JS_COUNTER, "write-like system calls"),
    TT("read_bytes", "bytes", JS_COUNTER, "bytes read from storage"),
    TT("write_bytes", "bytes", JS_COUNTER, "bytes written to storage"),
    TT("read_chars_per_s", "bytes/s", JS_GAUGE, "read-call rate over the interval"),
    TT("write_chars_per_s", "bytes/s", JS_GAUGE, "write-call rate"),
    TT("read_syscalls_per_s", "1/s", JS_GAUGE, "read-like calls per second"),
    TT("write_syscalls_per_s", "1/s", JS_GAUGE, "write-like calls per second"),
    TT("read_bytes_per_s", "bytes/s", JS_GAUGE, "storage read rate"),
    TT("write_bytes_per_s", "bytes/s", JS_GAUGE, "storage write rate"),
    TT("minflt", "count", JS_COUNTER, "minor page faults since the start"),
    TT("majflt", "count", JS_COUNTER, "major page faults since the start"),
    TT("main_rss_bytes", "bytes", JS_GAUGE, "the root process's RSS (the split part)"),
    TT("main_uss_bytes", "bytes", JS_GAUGE, "its USS as its row has it"),
    TT("main_pss_bytes", "bytes", JS_GAUGE, "its PSS as its row has it"),
    TT("main_threads", "count", JS_GAUGE, "its threads (less an embedded monitor's)"),
    TT("main_own_cpu_s", "s", JS_COUNTER, "its own CPU time (utime + stime)"),
    TT("desc_rss_bytes", "bytes", JS_GAUGE, "the other members' RSS (missing when one lacks it)"),
    TT("desc_uss_bytes", "bytes", JS_GAUGE, "the sum of their USS as their rows have it"),
    TT("desc_pss_bytes", "bytes", JS_GAUGE, "the sum of their PSS, likewise"),
    TT("desc_threads", "count", JS_GAUGE, "their threads"),
    TT("smaps_all", "bool", JS_GAUGE, "1 when every member's row has USS and PSS"),
    TT("root_alive", "bool", JS_GAUGE, "1 while the root process lives"),
    TT("pss_read", "bool", JS_GAUGE, "1 when every member's smaps_rollup was read at this sample"),
};
#define TT_N (sizeof(tt_cols) / sizeof(tt_cols[0]))
#define TPO(f) offsetof(js_tree_point_t, f)
#define TPIO(a, k) (offsetof(js_tree_point_t, a) + (k) * sizeof(double))
#define TT_BOOLS 2 /* root_alive, pss_read: the last columns */
static const size_t tt_off[TT_N - TT_BOOLS] = {
    TPO(cpu_s),
    TPO(user_s),
    TPO(system_s),
    TPO(cpu_cores),
    TPO(sampled_cpu_s),
    TPO(rss),
    TPO(rss_main),
    TPO(rss_desc),
    TPO(shared),
    TPO(rss_anon),
    TPO(rss_file),
    TPO(rss_shmem),
    TPO(swap),
    TPO(uss),
    TPO(pss),
    TPO(hwm_max),
    TPO(members),
    TPO(threads),
    TPO(fds),
    TPIO(io, IO_RCHAR),
    TPIO(io, IO_WCHAR),
    TPIO(io, IO_SYSCR),
    TPIO(io, IO_SYSCW),
    TPIO(io, IO_READ),
    TPIO(io, IO_WRITE),
    TPIO(io_rate, IO_RCHAR),
    TPIO(io_rate, IO_WCHAR),
    TPIO(io_rate, IO_SYSCR),
    TPIO(io_rate, IO_SYSCW),
    TPIO(io_rate, IO_READ),
    TPIO(io_rate, IO_WRITE),
    TPO(minflt),
    TPO(majflt),
    TPO(main_rss),
    TPO(main_uss),
    TPO(main_pss),
    TPO(main_threads),
    TPO(main_own_s),
    TPO(desc_rss),
    TPO(desc_uss),
    TPO(desc_pss),
    TPO(desc_threads),
    TPO(smaps_all),
};
#if defined(__LP64__)
/* a field added to js_tree_point_t must be stored too: add it to tt_cols and tt_off (and docs/FORMAT.md) */
_Static_assert(sizeof(js_tree_point_t) == 400, "js_tree_point_t changed: update tt_cols / tt_off");
#endif

const js_table_t table_tree_totals = {
    "tree_totals",
    "per sample: the tree model's point (the tree view's sums), so readers need not re-read "
    "every process row (schema 2)",
    TT_N, tt_cols};

int model_totals_row(const js_model_t *m, js_rows_t *out)
{
    if (!m->nfed)
        return -ENODATA;
    js_value_t *v = rows_add(out);
    if (!v)
        return -ENOMEM;
    for (size_t c = 0; c < TT_N - TT_BOOLS; c++) {
        double d;
        memcpy(&d, (const char *)&m->pt + tt_off[c], sizeof(d));
        set_real(&v[c], d);
    }
    val_real(&v[TT_N - 2], m->pt.root_alive ? 1 : 0);
    val_real(&v[TT_N - 1], m->pt.pss_read ? 1 : 0);
    return 0;
}

/* model_totals_load: see model_int.h. */
void model_totals_load(js_tree_point_t *pt, const js_value_t *v)
{
    for (size_t c = 0; c < TT_N - TT_BOOLS; c++) {
        double d = v && v[c].present ? v[c].d : NAN;
        memcpy((char *)pt + tt_off[c], &d, sizeof(d));
    }
    pt->root_alive = v && v[TT_N - 2].present && v[TT_N - 2].d != 0;
    pt->pss_read = v && v[TT_N - 1].present && v[TT_N - 1].d != 0;
}

static const js_column_t ss_cols[] = {
    {"key", "text", JS_TEXT, JS_LABEL, 0, "a field of the tree model's summary (model.c, summary fields)"},
    {"num", "value", JS_REAL, JS_GAUGE, 0, "its number (NULL for a missing figure or a text field)"},
    {"text", "text", JS_TEXT, JS_GAUGE, 0, "its text (command names, the reason a total is not exact)"},
};
const js_table_t table_summary_state = {
    "summary_state",
    "at the closing sample: the tree model's summary, so readers need not re-read every process "
    "row (schema 2)",
    3, ss_cols};

/* The numeric fields of js_summary_t the tree model sets (summary_from_cgroup's are the parts' and are
 * recomputed). Bump SUMMARY_STATE_VERSION when the list changes meaning: a recording of another version is
 * then read in full. */
#define SUMMARY_STATE_VERSION 3
enum { SF_D, SF_I64, SF_I32, SF_INT, SF_BOOL };
#define SUO(f) offsetof(js_summary_t, f)
static const struct {
    const char *key;
    int type;
    size_t off;
} sum_fields[] = {
    {"user_s", SF_D, SUO(user_s)},
    {"system_s", SF_D, SUO(system_s)},
    {"total_s", SF_D, SUO(total_s)},
    {"sampled_s", SF_D, SUO(sampled_s)},
    {"mean_cores", SF_D, SUO(mean_cores)},
    {"max_cores", SF_D, SUO(max_cores)},
    {"efficiency", SF_D, SUO(efficiency)},
    {"cores_available", SF_D, SUO(cores_available)},
    {"peak_rss_sum", SF_D, SUO(peak_rss_sum)},
    {"peak_rss_kernel", SF_D, SUO(peak_rss_kernel)},
    {"peak_swap", SF_D, SUO(peak_swap)},
    {"peak_rss_main", SF_D, SUO(peak_rss_main)},
    {"peak_rss_desc", SF_D, SUO(peak_rss_desc)},
    {"peak_pss", SF_D, SUO(peak_pss)},
    {"peak_private", SF_D, SUO(peak_private)},
    {"peak_shared", SF_D, SUO(peak_shared)},
    {"peak_kernel_pid", SF_I32, SUO(peak_kernel_pid)},
    {"io.rchar", SF_D, SUO(io) + IO_RCHAR * sizeof(double)},
    {"io.wchar", SF_D, SUO(io) + IO_WCHAR * sizeof(double)},
    {"io.syscr", SF_D, SUO(io) + IO_SYSCR * sizeof(double)},
    {"io.syscw", SF_D, SUO(io) + IO_SYSCW * sizeof(double)},
    {"io.read", SF_D, SUO(io) + IO_READ * sizeof(double)},
    {"io.write", SF_D, SUO(io) + IO_WRITE * sizeof(double)},
    {"io_unreadable", SF_I64, SUO(io_unreadable)},
    {"uss_unreadable", SF_I64, SUO(uss_unreadable)},
    {"pss_samples", SF_I64, SUO(pss_samples)},
    {"minflt", SF_D, SUO(minflt)},
    {"majflt", SF_D, SUO(majflt)},
    {"vol_ctxsw", SF_D, SUO(vol_ctxsw)},
    {"invol_ctxsw", SF_D, SUO(invol_ctxsw)},
    {"procs_total", SF_I64, SUO(procs_total)},
    {"procs_max", SF_I64, SUO(procs_max)},
    {"threads_max", SF_I64, SUO(threads_max)},
    {"procs_reaped", SF_I64, SUO(procs_reaped)},
    {"unread_samples", SF_I64, SUO(unread_samples)},
    {"unread_max", SF_I64, SUO(unread_max)},
    {"sigchld_pid", SF_I32, SUO(sigchld_pid)},
    {"autoreap_pid", SF_I32, SUO(autoreap_pid)},
    {"autoreap_cpu_s", SF_D, SUO(autoreap_cpu_s)},
    {"ntop_cpu", SF_INT, SUO(ntop_cpu)},
    {"ntop_rss", SF_INT, SUO(ntop_rss)},
    {"others_cpu_s", SF_D, SUO(others_cpu_s)},
    {"others_commands", SF_I64, SUO(others_commands)},
    {"unattributed_cpu_s", SF_D, SUO(unattributed_cpu_s)},
    {"unattributed_floor_s", SF_D, SUO(unattributed_floor_s)},
    {"taken", SF_I64, SUO(taken)},
    {"missed", SF_I64, SUO(missed)},
    {"interval_s", SF_D, SUO(interval_s)},
    {"wall_s", SF_D, SUO(wall_s)},
    {"mon_cpu_s", SF_D, SUO(mon_cpu_s)},
    {"mon_max_rss", SF_D, SUO(mon_max_rss)},
    {"mon_mean_cost_s", SF_D, SUO(mon_mean_cost_s)},
    {"write_errors", SF_I64, SUO(write_errors)},
    {"exact_cpu", SF_BOOL, SUO(exact_cpu)},
    {"exact_peak_rss", SF_BOOL, SUO(exact_peak_rss)},
    {"cpu_from_cgroup", SF_BOOL, SUO(cpu_from_cgroup)},
    {"tree_total_s", SF_D, SUO(tree_total_s)},
    {"peak_kernel_tree", SF_D, SUO(peak_kernel_tree)},
    {"scope", SF_INT, SUO(scope)},
};
#define NSUM_FIELDS (sizeof(sum_fields) / sizeof(sum_fields[0]))
#if defined(__LP64__)
/* a field added to js_summary_t must be stored too (or recomputed from the parts): add it to sum_fields, bump
 * SUMMARY_STATE_VERSION, and tests/integration/test_stored.py checks the stored summary against a full read
 */
_Static_assert(sizeof(js_summary_t) == 2896, "js_summary_t changed: update sum_fields (stored summary)");
#endif

static int state_row(js_rows_t *out, const char *key, double num, const char *text)
{
    js_value_t *v = rows_add(out);
    if (!v || rows_set_str(out, &v[0], key, strlen(key)) < 0 ||
        (text && rows_set_str(out, &v[2], text, strlen(text)) < 0))
        return -ENOMEM;
    set_real(&v[1], num);
    return 0;
}

int model_state_rows(const js_model_t *m, js_rows_t *out)
{
    js_summary_t su;
    model_tree_summary(m, &su);
    int r = state_row(out, "state_version", SUMMARY_STATE_VERSION, NULL);
    for (size_t i = 0; i < NSUM_FIELDS && r == 0; i++) {
        const char *p = (const char *)&su + sum_fields[i].off;
        double d;
        switch (sum_fields[i].type) {
        case SF_D:
            memcpy(&d, p, sizeof(d));
            break;
        case SF_I64: {
            int64_t x;
            memcpy(&x, p, sizeof(x));
            d = (double)x;
            break;
        }
        case SF_I32: {
            int32_t x;
            memcpy(&x, p, sizeof(x));
            d = x;
            break;
        }
        case SF_INT: {
            int x;
            memcpy(&x, p, sizeof(x));
            d = x;
            break;
        }
        default: {
            bool x;
            memcpy(&x, p, sizeof(x));
            d = x;
        }
        }
        r = state_row(out, sum_fields[i].key, d, NULL);
    }
    if (r == 0)
        r = state_row(out, "peak_kernel_comm", NAN, su.peak_kernel_comm);
    if (r == 0)
        r = state_row(out, "sigchld_comm", NAN, su.sigchld_comm);
    if (r == 0)
        r = state_row(out, "autoreap_comm", NAN, su.autoreap_comm);
    if (r == 0)
        r = state_row(out, "inexact_cpu_reason", NAN, su.inexact_cpu_reason);
    for (int l = 0; l < 2 && r == 0; l++) {
        const js_top_t *t = l ? su.top_rss : su.top_cpu;
        int n = l ? su.ntop_rss : su.ntop_cpu;
        for (int k = 0; k < n && r == 0; k++) {
            char key[48];
            snprintf(key, sizeof(key), "%s.%d.", l ? "top_rss" : "top_cpu", k);
            size_t kl = strlen(key);
            snprintf(key + kl, sizeof(key) - kl, "comm");
            r = state_row(out, key, NAN, t[k].comm);
            snprintf(key + kl, sizeof(key) - kl, "cpu_s");
            if (r == 0)
                r = state_row(out, key, t[k].cpu_s, NULL);
            snprintf(key + kl, sizeof(key) - kl, "peak_rss");
            if (r == 0)
                r = state_row(out, key, t[k].peak_rss, NULL);
            snprintf(key + kl, sizeof(key) - kl, "procs");
            if (r == 0)
                r = state_row(out, key, (double)t[k].procs, NULL);
        }
    }
    return r;
}

int model_use_stored(js_model_t *m, const js_rows_t *state)
{
    js_summary_t su;
    memset(&su, 0, sizeof(su));
    bool seen[NSUM_FIELDS] = {false};
    double version = NAN;
    char *reason = NULL;
    for (size_t i = 0; state && i < state->nrows; i++) {
        const js_value_t *v = rows_row(state, i);
        if (!v[0].present)
            continue;
        const char *key = rows_str(state, &v[0]);
        double d = v[1].present ? v[1].d : NAN;
        const char *text = v[2].present ? rows_str(state, &v[2]) : NULL;
        if (!strcmp(key, "state_version")) {
            version = d;
            continue;
        }
        if (!strcmp(key, "peak_kernel_comm") || !strcmp(key, "sigchld_comm") ||
            !strcmp(key, "autoreap_comm")) {
            char *dst = key[0] == 'p'   ? su.peak_kernel_comm
                        : key[0] == 's' ? su.sigchld_comm
                                        : su.autoreap_comm;
            snprintf(dst, sizeof(su.peak_kernel_comm), "%s", text ? text : "");
            continue;
        }
        if (!strcmp(key, "inexact_cpu_reason")) {
            free(reason);
            reason = text ? strdup(text) : NULL;
            if (text && !reason)
                return -ENOMEM;
            continue;
        }
        int k;
        char field[16];
        if (sscanf(key, "top_cpu.%d.%15s", &k, field) == 2 ||
            sscanf(key, "top_rss.%d.%15s", &k, field) == 2) {
            bool cpu = key[4] == 'c';
            if (k < 0 || k >= (cpu ? JS_TOP_CPU_MAX : JS_TOP_N))
                continue;
            js_top_t *t = cpu ? &su.top_cpu[k] : &su.top_rss[k];
            if (!strcmp(field, "comm"))
                snprintf(t->comm, sizeof(t->comm), "%s", text ? text : "");
            else if (!strcmp(field, "cpu_s"))
                t->cpu_s = d;
            else if (!strcmp(field, "peak_rss"))
                t->peak_rss = d;
            else if (!strcmp(field, "procs"))
                t->procs = isnan(d) ? 0 : (int64_t)d;
            continue;
        }
        for (size_t f = 0; f < NSUM_FIELDS; f++) {
            if (strcmp(key, sum_fields[f].key) != 0)
                continue;
            char *p = (char *)&su + sum_fields[f].off;
            seen[f] = true;
            switch (sum_fields[f].type) {
            case SF_D:
                memcpy(p, &d, sizeof(d));
                break;
            case SF_I64: {
                int64_t x = isnan(d) ? 0 : (int64_t)d;
                memcpy(p, &x, sizeof(x));
                break;
            }
            case SF_I32: {
                int32_t x = isnan(d) ? 0 : (int32_t)d;
                memcpy(p, &x, sizeof(x));
                break;
            }
            case SF_INT: {
                int x = isnan(d) ? 0 : (int)d;
                memcpy(p, &x, sizeof(x));
                break;
            }
            default: {
                bool x = !isnan(d) && d != 0;
                memcpy(p, &x, sizeof(x));
            }
            }
            break;
        }
    }
    bool all = version == SUMMARY_STATE_VERSION;
    for (size_t f = 0; f < NSUM_FIELDS && all; f++)
        all = seen[f];
    if (!all || su.ntop_cpu < 0 || su.ntop_cpu > JS_TOP_CPU_MAX || su.ntop_rss < 0 ||
        su.ntop_rss > JS_TOP_N || (unsigned)su.scope >= JS_SCOPE_MAX) {
        free(reason);
        return -EINVAL;
    }
    free(m->stored_reason);
    m->stored_reason = reason;
    su.inexact_cpu_reason = reason;
    su.cpu_file = su.peak_kernel_tree_method = su.peak_method = NULL; /* the headline: memory_headline */
    m->stored_sum = su;
    m->stored = true;
    return 0;
}
