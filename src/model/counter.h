/* SPDX-License-Identifier: MIT
 *
 * Deltas of raw counters between two samples, the one place that decides what a decrease means. A counter is
 * stored as the kernel's unsigned value in js_value_t.i (the raw 64-bit pattern). A counter of width < 64
 * that decreases has wrapped around (the kernel printed an unsigned int); a 64-bit counter that decreases has
 * been reset (device re-created, module reloaded, iowait going backwards), and no delta exists for that
 * interval.
 */
#ifndef JOBSCOPE_COUNTER_H
#define JOBSCOPE_COUNTER_H

#include "core/table.h"

#include <stdint.h>

/* counter_delta: the increase of a counter of `width` bits (0 or >= 64 means 64, no wrap) from `prev` to
 * `cur`. Returns 0 and sets *ret; -ENODATA when either value is missing; -ERANGE on a reset (a 64-bit counter
 * decreased, or a narrower one holds a value that does not fit its width). *ret is untouched on failure. */
int counter_delta(const js_value_t *prev, const js_value_t *cur, unsigned width, uint64_t *ret);

#endif
