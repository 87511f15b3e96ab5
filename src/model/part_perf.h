/* SPDX-License-Identifier: MIT
 *
 * The `perf` model part (part_perf.c): the raw counts of the perf source become scaled counts, per-interval
 * rates and derived figures (IPC, miss rates, GFLOP/s, memory GB/s). The pure arithmetic is exposed here for
 * the unit tests; everything else goes through the part interface (model/part.h).
 *
 * Scaling. A counter that shared its PMU with others was on a counter only part of the time it was enabled;
 * perf_event reports both times, and the estimate is count x enabled / running. The fraction running /
 * enabled is kept next to every scaled figure, so an estimate is never presented as a measurement. Software
 * events are never multiplexed (fraction 1).
 */
#ifndef JOBSCOPE_MODEL_PART_PERF_H
#define JOBSCOPE_MODEL_PART_PERF_H

#include <stdint.h>

/* perf_scale: the estimate of a count read as `count` after `enabled` ns enabled and `running` ns counted.
 * Returns count when enabled is 0 (never enabled: nothing was missed) or running equals enabled; NAN when
 * it was enabled but never counted (running 0: nothing is known). */
double perf_scale(uint64_t count, uint64_t enabled, uint64_t running);

/* Precision of a FLOP event's operations. */
typedef enum { PERF_FP_NONE, PERF_FP_SINGLE, PERF_FP_DOUBLE, PERF_FP_ANY, PERF_FP_MAX } perf_fp_t;

/* perf_flop_weight: FLOPs per count of event `name` (the perf source's names): Intel's FP_ARITH_INST_RETIRED
 * counts instructions, so scalar 1, 128-bit packed 4 single / 2 double, 256-bit 8 / 4, 512-bit 16 / 8; AMD's
 * fp_flops_any counts FLOPs (1, precision unknown). Sets *ret_prec when not NULL. Returns 0 for a name that
 * is not a FLOP event (then *ret_prec is PERF_FP_NONE). */
double perf_flop_weight(const char *name, perf_fp_t *ret_prec);

#define PERF_CAS_BYTES 64 /* bytes per memory-controller CAS command (a 64-byte line) */

#endif
