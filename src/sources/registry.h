/* SPDX-License-Identifier: MIT
 *
 * The registry: the explicit list of sources (js_sources[], in collection order) and the catalog of every
 * table they and the core fill (registry_tables(): core tables first, then each source's in list order). It
 * is the top of the sources layer: the engine runs the listed sources, the recording (sinks/sqlite.c) creates
 * and maps its tables from the catalog, and a sample holds one buffer per catalogued table. Consumers that
 * read a source's rows (the model, the Prometheus exposition) find its table and columns by name in the
 * sample's own table list (sample_table_index, table_bind) and include no source header.
 */
#ifndef JOBSCOPE_SOURCES_REGISTRY_H
#define JOBSCOPE_SOURCES_REGISTRY_H

#include "core/sample.h"
#include "core/source.h"
#include "core/table.h"

/* The explicit list of sources, NULL-terminated (src/sources/registry.c). */
extern const js_source_t *const js_sources[];

/* registry_tables: every table (core first, then each source's), NULL-terminated static array. */
const js_table_t *const *registry_tables(void);

/* registry_find_table: the table descriptor named `name` among the core tables and all sources', or NULL. */
const js_table_t *registry_find_table(const char *name);

/* sample_init: sample_init_tables with every registered table (registry_tables()). Returns 0 or -ENOMEM. */
int sample_init(js_sample_t *s);

#endif
