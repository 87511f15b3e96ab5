/* SPDX-License-Identifier: MIT
 *
 * The system-scope part of the model: turns consecutive raw samples of the `system` source's tables (cpu,
 * system, memory, net, disk) into one wide row of derived values — CPU utilisation fractions, memory in use,
 * load, event rates, PSI stall fractions, per-interface and per-disk byte rates. Column names carry their
 * units (pandas-friendly) and are fixed by the first sample: CPUs, interfaces and disks that appear later are
 * not added, and ones that vanish give missing cells. Rates come from counter_delta() (counter.h): a missing
 * value, a reset or a zero-length interval gives a missing cell, never 0. The live monitor and the recording
 * reader feed it the same js_sample_t, so every consumer sees the same numbers.
 */
#ifndef JOBSCOPE_MODEL_SYSTEM_H
#define JOBSCOPE_MODEL_SYSTEM_H

#include "core/sample.h"
#include "core/cell.h"

#include <stddef.h>

typedef struct model_system model_system_t;

/* model_system_new: an empty model, no sample fed yet. Returns NULL on ENOMEM. */
model_system_t *model_system_new(void);

/* model_system_free: release the model and its column names; accepts NULL. */
void model_system_free(model_system_t *m);

/* model_system_feed: feed the next sample (borrowed for the call; values needed later are copied). The
 * interval is the difference of t_mono_ns in the `samples` table. The first feed fixes the columns.
 * Returns 0 or -ENOMEM (then the model is as before the call, except that the first feed may be retried). */
int model_system_feed(model_system_t *m, const js_sample_t *s);

/* model_system_columns: the column names (owned by the model, valid until model_system_free), through
 * *ret_cols, and their count. Before the first feed: 0 columns and *ret_cols = NULL. */
size_t model_system_columns(const model_system_t *m, const char *const **ret_cols);

/* model_system_row: the cells derived from the last fed sample, model_system_columns() of them, valid until
 * the next feed (text cells none). Rates and fractions are missing after the first feed. NULL before it. */
const js_cell_t *model_system_row(const model_system_t *m);

#endif
