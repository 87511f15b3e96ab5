/* SPDX-License-Identifier: MIT
 *
 * What the source interface (source.h) shares with every source: the core tables the sampler writes itself
 * (samples, source_stats, inventory), the inventory helpers, and the stop-signal check of a long collect.
 */
#include "core/source.h"

#include "core/json.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const js_column_t samples_cols[SAMPLES__MAX] = {
    {"t_mono_ns", "ns", JS_INT, JS_GAUGE, 0, "CLOCK_MONOTONIC when the sample started"},
    {"t_unix_ns", "ns", JS_INT, JS_GAUGE, 0, "CLOCK_REALTIME when the sample started"},
    {"deadline_ns", "ns", JS_INT, JS_GAUGE, 0, "CLOCK_MONOTONIC deadline the sample was due at"},
    {"missed", "count", JS_INT, JS_COUNTER, 64,
     "deadlines missed so far (samples that could not start on time)"},
    {"final", "bool", JS_INT, JS_GAUGE, 0, "1 for the closing sample taken when the scope ended"},
    {"for_marks", "bool", JS_INT, JS_GAUGE, 0,
     "1 when taken for phase marks (begin, end) that had just arrived: the scope at the last of them"},
};
const js_table_t table_samples = {"samples", "one row per sample (its `sample` column is the sample number)",
                                  SAMPLES__MAX, samples_cols};

static const js_column_t source_stats_cols[STATS__MAX] = {
    {"source", "text", JS_TEXT, JS_LABEL, 0, "source name"},
    {"duration_ns", "ns", JS_INT, JS_GAUGE, 0, "wall time collect() took"},
    {"rc", "errno", JS_INT, JS_GAUGE, 0, "0, or the negative errno the source failed with"},
};
const js_table_t table_source_stats = {"source_stats", "per sample and source: collect duration and result",
                                       STATS__MAX, source_stats_cols};

static const js_column_t inventory_cols[INV__MAX] = {
    {"source", "text", JS_TEXT, JS_LABEL, 0, "the source that knows it (or `run` for the monitor)"},
    {"key", "text", JS_TEXT, JS_LABEL, 0, "what it is: cpu.model, gpu.0.uuid, memory.limit_bytes, ..."},
    {"value", "text", JS_TEXT, JS_GAUGE, 0, "its value as text (numbers in base units)"},
    {"number", "bool", JS_INT, JS_GAUGE, 0,
     "1 when the value is a number (a JSON number in `jobscope info --json`)"},
};
const js_table_t table_inventory = {"inventory", "the hardware and the allocation, once per run (sample 0)",
                                    INV__MAX, inventory_cols};
const js_table_t table_level_job_inventory = {
    "level_job_inventory", "level job: what its cgroup source knows (sample 0; sources/levels.c)", INV__MAX,
    inventory_cols};

int inventory_add(js_rows_t *inv, const char *source, const char *key, const char *value)
{
    js_value_t *v = rows_add(inv);
    if (!v)
        return -ENOMEM;
    if (rows_set_str(inv, &v[INV_SOURCE], source, strlen(source)) < 0 ||
        rows_set_str(inv, &v[INV_KEY], key, strlen(key)) < 0 ||
        (value && rows_set_str(inv, &v[INV_VALUE], value, strlen(value)) < 0)) {
        inv->nrows--;
        return -ENOMEM;
    }
    return 0;
}

/* one_number: whether printf format `fmt` is exactly one decimal conversion (flags, width, precision and a
 * length modifier allowed: "%d", "%lld", "%zu", "%.6g"); hexadecimal and text are not numbers here */
static bool one_number(const char *fmt)
{
    if (*fmt++ != '%')
        return false;
    fmt += strspn(fmt, "-+ #0");
    fmt += strspn(fmt, "0123456789");
    if (*fmt == '.') {
        fmt++;
        fmt += strspn(fmt, "0123456789");
    }
    fmt += strspn(fmt, "hljztL");
    return *fmt && strchr("diufeEgG", *fmt) && fmt[1] == '\0';
}

int inventory_addf(js_rows_t *inv, const char *source, const char *key, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0)
        return -EINVAL;
    int r = inventory_add(inv, source, key, buf);           /* a value longer than 1023 bytes is cut there */
    if (r == 0 && one_number(fmt) && json_number_text(buf)) /* not "inf", "nan" */
        val_int(&rows_row(inv, inv->nrows - 1)[INV_NUMBER], 1);
    return r;
}

bool sampler_stop_pending(void)
{
    sigset_t set;
    if (sigpending(&set) < 0)
        return false;
    return sigismember(&set, SIGINT) == 1 || sigismember(&set, SIGTERM) == 1 ||
           sigismember(&set, SIGHUP) == 1 || sigismember(&set, SIGQUIT) == 1;
}
