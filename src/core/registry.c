/* SPDX-License-Identifier: MIT
 *
 * The explicit list of metric sources, and the core tables the sampler writes itself. Adding a source means
 * one file in src/sources/ and one X(name) line in JS_SOURCE_LIST below (docs/ARCHITECTURE.md).
 */
#include "core/source.h"
#include "core/marks.h"
#include "model/model.h"

#include "core/json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The sources, in collection order: one line each. X(name) refers to `const js_source_t source_<name>`. */
#define JS_SOURCE_LIST(X)                                                                                    \
    X(proc_tree)                                                                                             \
    X(system)                                                                                                \
    X(host)                                                                                                  \
    X(rapl)                                                                                                  \
    X(infiniband)                                                                                            \
    X(cpufreq)                                                                                               \
    X(thermal)                                                                                               \
    X(cgroup)                                                                                                \
    X(perf)                                                                                                  \
    X(levels)                                                                                                \
    X(nvml)                                                                                                  \
    X(rocm)                                                                                                  \
    X(self)

#define JS_SOURCE_DECLARE(name) extern const js_source_t source_##name;
#define JS_SOURCE_REF(name) &source_##name,
JS_SOURCE_LIST(JS_SOURCE_DECLARE)

const js_source_t *const js_sources[] = {JS_SOURCE_LIST(JS_SOURCE_REF) NULL};

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

const js_table_t *const *registry_tables(void)
{
    static const js_table_t *all[64];
    if (!all[0]) {
        size_t n = 0;
        all[n++] = &table_samples;
        all[n++] = &table_source_stats;
        all[n++] = &table_inventory;
        all[n++] = &table_marks; /* written by the monitor from the job's marks (core/marks.c) */
        /* written by the recording from the model (model/model.h: stored aggregates, schema 2) */
        all[n++] = &table_tree_totals;
        all[n++] = &table_summary_state;
        for (size_t i = 0; js_sources[i]; i++)
            for (size_t j = 0; js_sources[i]->tables[j] && n < 63; j++)
                all[n++] = js_sources[i]->tables[j];
        all[n] = NULL;
    }
    return all;
}

const js_table_t *registry_find_table(const char *name)
{
    const js_table_t *const *t = registry_tables();
    for (; *t; t++)
        if (strcmp((*t)->name, name) == 0)
            return *t;
    return NULL;
}
