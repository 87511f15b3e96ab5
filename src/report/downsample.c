/* SPDX-License-Identifier: MIT
 *
 * Min/max-preserving downsampling (see downsample.h). One pass over the input: the points of one bucket are a
 * contiguous range because t is non-decreasing; each range is split at its first and last missing value.
 */
#include "report/downsample.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

typedef struct {
    double *t, *v;
    size_t n, cap;
    bool full; /* a point did not fit */
} ds_out_t;

static void put(ds_out_t *o, double t, double v)
{
    if (o->n == o->cap) {
        o->full = true;
        return;
    }
    o->t[o->n] = t;
    o->v[o->n] = v;
    o->n++;
}

/* put_break: a gap, unless the output is empty or already ends in one. */
static void put_break(ds_out_t *o, double t)
{
    if (o->n > 0 && !isnan(o->v[o->n - 1]))
        put(o, t, NAN);
}

/* put_minmax: the minimum and maximum of the finite values among points [a, b), in time order. Points with a
 * non-finite t are skipped by the caller's range, never here: [a, b) holds only points of one bucket. */
static void put_minmax(ds_out_t *o, const double *t, const double *v, size_t a, size_t b)
{
    size_t lo = b, hi = b;
    for (size_t i = a; i < b; i++) {
        if (!isfinite(t[i]) || !isfinite(v[i]))
            continue;
        if (lo == b || v[i] < v[lo])
            lo = i;
        if (hi == b || v[i] > v[hi])
            hi = i;
    }
    if (lo == b)
        return;
    size_t first = lo < hi ? lo : hi, second = lo < hi ? hi : lo;
    put(o, t[first], v[first]);
    if (second != first)
        put(o, t[second], v[second]);
}

static bool missing(const double *t, const double *v, size_t i)
{
    return isfinite(t[i]) && !isfinite(v[i]);
}

/* put_bucket: the points [a, b) of one bucket (see downsample_minmax for what is kept). */
static void put_bucket(ds_out_t *o, const double *t, const double *v, size_t a, size_t b)
{
    size_t first = a, last = b;
    while (first < b && !missing(t, v, first))
        first++;
    if (first == b) {
        put_minmax(o, t, v, a, b);
        return;
    }
    while (!missing(t, v, last - 1))
        last--;
    last--; /* index of the last missing value, >= first */
    put_minmax(o, t, v, a, first);
    put_break(o, t[first]);
    size_t before = o->n;
    put_minmax(o, t, v, first + 1, last);
    if (o->n != before)
        put_break(o, t[last]);
    put_minmax(o, t, v, last + 1, b);
}

size_t downsample_bound(size_t n, size_t buckets)
{
    if (buckets == 0 || n / 2 <= buckets)
        return n; /* n <= 2 × buckets (buckets == 0 is rejected by downsample_minmax) */
    return n / 8 < buckets ? n : 8 * buckets;
}

int downsample_minmax(const double *t, const double *v, size_t n, size_t buckets, double *ret_t,
                      double *ret_v, size_t cap, size_t *ret_n)
{
    if (buckets == 0 || (n > 0 && (!t || !v || !ret_t || !ret_v)))
        return -EINVAL;
    ds_out_t o = {.t = ret_t, .v = ret_v, .cap = cap};
    if (n / 2 <= buckets && (n % 2 == 0 || n / 2 < buckets)) { /* n <= 2 × buckets without overflow */
        o.n = n < cap ? n : cap;
        if (o.n) {
            memcpy(ret_t, t, o.n * sizeof(*t));
            memcpy(ret_v, v, o.n * sizeof(*v));
        }
        if (n > cap)
            return -ENOSPC;
        *ret_n = n;
        return 0;
    }
    size_t lo = 0, hi = n;
    while (lo < n && !isfinite(t[lo]))
        lo++;
    while (hi > lo && !isfinite(t[hi - 1]))
        hi--;
    if (lo == hi) {
        *ret_n = 0;
        return 0;
    }
    double t0 = t[lo], span = t[hi - 1] - t[lo];
    size_t a = lo, bucket = 0;
    for (size_t i = lo; i < hi; i++) {
        if (!isfinite(t[i]))
            continue;
        double f = span > 0 ? (t[i] - t0) / span * (double)buckets : 0;
        size_t k = f >= (double)buckets ? buckets - 1 : f > 0 ? (size_t)f : 0;
        if (k != bucket) {
            put_bucket(&o, t, v, a, i);
            a = i;
            bucket = k;
        }
    }
    put_bucket(&o, t, v, a, hi);
    if (o.full)
        return -ENOSPC;
    *ret_n = o.n;
    return 0;
}
