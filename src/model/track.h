/* SPDX-License-Identifier: MIT
 *
 * One raw counter followed across samples, for the model parts of node counters (energy, InfiniBand,
 * network): the total of its known increases since it was first read, its rate over the last interval, and
 * the intervals whose increase could not be known (a reset, a saturated or cleared counter, a value out of
 * range). A counter read at a cadence (NULL in the samples between) keeps its last reading, so the next
 * reading's increase spans the gap. What a decrease means is the caller's delta function (counter.h).
 */
#ifndef JOBSCOPE_MODEL_TRACK_H
#define JOBSCOPE_MODEL_TRACK_H

#include "core/table.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    js_value_t prev; /* the last reading (missing before the first) */
    int64_t prev_t;  /* its t_mono_ns */
    double total;    /* sum of the known increases, times the scale */
    double last;   /* the increase over the last interval, times the scale; NAN when unknown or no reading */
    double rate;   /* last / interval in seconds; NAN likewise */
    int64_t dt_ns; /* the last interval with a known increase, 0 when none */
    double dt_s;   /* the same in seconds; NAN likewise */
    double covered_s; /* sum of the intervals with a known increase, seconds */
    int64_t known;    /* intervals with a known increase */
    int64_t unknown;  /* intervals without */
    int last_rc;      /* the delta function's result for the last interval (0, -ERANGE, -EOVERFLOW, ...) */
} track_t;

/* The delta of a counter between two readings (counter_delta, counter_delta_saturating, or a wrapper). */
typedef int (*track_delta_fn)(const js_value_t *prev, const js_value_t *cur, uint64_t arg, uint64_t *ret);

/* track_init: a counter not read yet. */
void track_init(track_t *t);

/* track_step: the reading `cur` (may be NULL or missing: no reading this sample) taken at `t_ns`. With a
 * previous reading, the increase comes from `delta(prev, cur, arg)` times `scale`. Returns the delta
 * function's result (0 when it was known), or -ENODATA when there was nothing to compare. */
int track_step(track_t *t, const js_value_t *cur, int64_t t_ns, track_delta_fn delta, uint64_t arg,
               double scale);

/* Adapters of counter.h to track_delta_fn: `arg` is the width in bits, or the range. */
int track_wrapping(const js_value_t *prev, const js_value_t *cur, uint64_t width, uint64_t *ret);
int track_saturating(const js_value_t *prev, const js_value_t *cur, uint64_t width, uint64_t *ret);
int track_range(const js_value_t *prev, const js_value_t *cur, uint64_t range, uint64_t *ret);

#endif
