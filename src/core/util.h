/* SPDX-License-Identifier: MIT
 *
 * Small helpers that were written again in several modules: growing an array, the larger of two values where
 * NAN means unknown, the one-line reason ("why") buffer that library functions fill for the CLI to print,
 * clocks in nanoseconds and their conversion to seconds. A leaf module: libc only, so every layer, src/sys/
 * included, may use it (docs/ARCHITECTURE.md, "Layers").
 */
#ifndef JOBSCOPE_UTIL_H
#define JOBSCOPE_UTIL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define JS_NS_PER_S INT64_C(1000000000)

/* array_grow: make room for element `n` of the array *arr of `size`-byte elements and capacity *cap (both
 * updated; the capacity doubles, from 8). Returns 0 or -ENOMEM (then *arr and *cap are unchanged). */
int array_grow(void **arr, size_t n, size_t *cap, size_t size);

/* fmax_nan: the larger of a and b, NAN meaning unknown: the other one when one is NAN, NAN when both are. */
static inline double fmax_nan(double a, double b)
{
    if (isnan(a))
        return b;
    if (isnan(b))
        return a;
    return a > b ? a : b;
}

/* why_set: write the reason (printf format) into the caller's buffer `why` of `cap` bytes; nothing when `why`
 * is NULL or `cap` 0 (the caller does not want it); an empty string when the format fails. */
void why_set(char *why, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* now_ns: the time of clock `clock_id` (CLOCK_MONOTONIC, CLOCK_REALTIME, ...) in nanoseconds. */
int64_t now_ns(int clock_id);

/* ns_to_s: a time or duration in nanoseconds as seconds, for output (the model keeps int64 nanoseconds). */
static inline double ns_to_s(int64_t ns)
{
    return (double)ns / (double)JS_NS_PER_S;
}

#endif
