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

/* counter_delta_range: the increase of a counter that runs from 0 up to `range` and then starts again from 0
 * (RAPL energy_uj, which wraps after max_energy_range_uj: the kernel's conversion of a 32-bit register, so
 * not at a power of two). A decrease is taken as one wrap: range - prev + cur (this under-counts by one
 * register unit, a few tens of microjoules, per wrap; two wraps within one interval cannot be seen).
 * Returns 0 and sets *ret; -ENODATA when either value is missing or range is 0; -ERANGE when a value is
 * negative or above range (not this counter, or the range changed). *ret is untouched on failure. */
int counter_delta_range(const js_value_t *prev, const js_value_t *cur, uint64_t range, uint64_t *ret);

/* counter_delta_saturating: the increase of a counter of `width` bits that stops at its all-ones value
 * instead of wrapping, until something clears it (InfiniBand PortCounters: IBTA vol. 1, ch. 16.1.3.5; the
 * kernel's PMAs clamp the same way). Returns 0 and sets *ret; -ENODATA when either value is missing;
 * -EOVERFLOW when either value is the saturated all-ones value (the increase is unknown: at least
 * cur - prev); -ERANGE when the counter decreased (it was cleared). Width 0 or >= 64 means 64 bits, where
 * saturation does not happen in practice and a decrease is a reset. *ret is untouched on failure. */
int counter_delta_saturating(const js_value_t *prev, const js_value_t *cur, unsigned width, uint64_t *ret);

#endif
