/* SPDX-License-Identifier: MIT
 *
 * The explicit list of metric sources, and the core tables the sampler writes itself. Adding a source means
 * one file in src/sources/ and one X(name) line in JS_SOURCE_LIST below (docs/ARCHITECTURE.md).
 */
#include "core/source.h"

#include <string.h>

/* The sources, in collection order: one line each. X(name) refers to `const js_source_t source_<name>`. */
#define JS_SOURCE_LIST(X)                                                                                      \
    X(proc_tree)                                                                                               \
    X(system)                                                                                                  \
    X(self)

#define JS_SOURCE_DECLARE(name) extern const js_source_t source_##name;
#define JS_SOURCE_REF(name) &source_##name,
JS_SOURCE_LIST(JS_SOURCE_DECLARE)

const js_source_t *const js_sources[] = {JS_SOURCE_LIST(JS_SOURCE_REF) NULL};

static const js_column_t samples_cols[SAMPLES__MAX] = {
    {"t_mono_ns", "ns", JS_INT, JS_GAUGE, 0, "CLOCK_MONOTONIC when the sample started"},
    {"t_unix_ns", "ns", JS_INT, JS_GAUGE, 0, "CLOCK_REALTIME when the sample started"},
    {"deadline_ns", "ns", JS_INT, JS_GAUGE, 0, "CLOCK_MONOTONIC deadline the sample was due at"},
    {"missed", "count", JS_INT, JS_COUNTER, 64, "deadlines missed so far (samples that could not start on time)"},
    {"final", "bool", JS_INT, JS_GAUGE, 0, "1 for the closing sample taken when the scope ended"},
};
const js_table_t table_samples = {"samples", "one row per sample (its `sample` column is the sample number)", SAMPLES__MAX, samples_cols};

static const js_column_t source_stats_cols[STATS__MAX] = {
    {"source", "text", JS_TEXT, JS_LABEL, 0, "source name"},
    {"duration_ns", "ns", JS_INT, JS_GAUGE, 0, "wall time collect() took"},
    {"rc", "errno", JS_INT, JS_GAUGE, 0, "0, or the negative errno the source failed with"},
};
const js_table_t table_source_stats = {"source_stats", "per sample and source: collect duration and result", STATS__MAX,
                                       source_stats_cols};

const js_table_t *const *registry_tables(void)
{
    static const js_table_t *all[64];
    if (!all[0]) {
        size_t n = 0;
        all[n++] = &table_samples;
        all[n++] = &table_source_stats;
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
