/* SPDX-License-Identifier: MIT
 *
 * Min/max-preserving downsampling of one time series for drawing. The time range is cut into B equal buckets;
 * each bucket keeps its smallest and its largest value, in time order, at their exact times. A drawn line
 * then covers, in every bucket (about one pixel), the full range the data reached, so every spike and dip
 * survives and the global maximum and minimum are exact. Missing values (NAN) are breaks in the line and stay
 * breaks. Pure: no allocation, the caller provides the output arrays (downsample_bound() says how large).
 */
#ifndef JOBSCOPE_DOWNSAMPLE_H
#define JOBSCOPE_DOWNSAMPLE_H

#include <stddef.h>

/* downsample_bound: the number of output points downsample_minmax() may write for `n` input points and
 * `buckets` buckets: n when n <= 2 x buckets (the series passes through), else min(n, 8 x buckets). A bucket
 * without missing values gives at most 2 points; one that holds a gap at most 8 (see downsample_minmax). */
size_t downsample_bound(size_t n, size_t buckets);

/* downsample_minmax: reduce the series (t[i] seconds, v[i]), i < n, to at most about 2 x `buckets` points.
 * `t` must be non-decreasing; points whose t is not finite are dropped; a non-finite v is missing (a gap).
 * When n <= 2 x buckets the series is copied unchanged. Otherwise the range [first t, last t] is cut into
 * `buckets` equal buckets, and each bucket contributes, in time order:
 *   without a gap: the point with its minimum and the point with its maximum (one point if they coincide;
 *     the earliest point on ties);
 *   with a gap: min and max of the values before its first missing one; a break (a NAN point at the time of
 *     that missing value); min and max of the values between its first and last missing ones and, if there
 *     were any, another break; min and max of the values after its last missing one.
 * Consecutive breaks are merged and the output never starts with one. Every output point is an input point
 * (same t, same v), so the extremes are exact. Writes ret_t/ret_v (capacity `cap` each; downsample_bound()
 * is always enough) and *ret_n. Returns 0, -EINVAL (buckets == 0, or a NULL array with n > 0) or -ENOSPC
 * (cap too small: the arrays hold the first `cap` points, *ret_n is untouched). */
int downsample_minmax(const double *t, const double *v, size_t n, size_t buckets, double *ret_t,
                      double *ret_v, size_t cap, size_t *ret_n);

#endif
