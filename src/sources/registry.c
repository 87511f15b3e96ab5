/* SPDX-License-Identifier: MIT
 *
 * The explicit list of metric sources and the catalog of every table (see registry.h). Adding a source means
 * one file in src/sources/ and one X(name) line in JS_SOURCE_LIST below (docs/ARCHITECTURE.md).
 */
#include "sources/registry.h"

#include "core/marks.h"
#include "model/model.h"

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

int sample_init(js_sample_t *s)
{
    return sample_init_tables(s, registry_tables());
}
