/* SPDX-License-Identifier: MIT
 *
 * Counters followed across samples (see track.h).
 */
#include "model/track.h"

#include "model/counter.h"
#include "core/util.h"

#include <errno.h>
#include <math.h>

void track_init(track_t *t)
{
    t->prev.present = false;
    t->prev_t = 0;
    t->total = 0;
    t->covered_s = 0;
    t->last = t->rate = t->dt_s = NAN;
    t->dt_ns = 0;
    t->known = t->unknown = 0;
    t->last_rc = -ENODATA;
}

int track_step(track_t *t, const js_value_t *cur, int64_t t_ns, track_delta_fn delta, uint64_t arg,
               double scale)
{
    t->last = t->rate = t->dt_s = NAN;
    t->dt_ns = 0;
    if (!cur || !cur->present)
        return t->last_rc = -ENODATA; /* no reading: keep the previous one for the next */
    int rc = -ENODATA;
    if (t->prev.present) {
        uint64_t d;
        rc = delta(&t->prev, cur, arg, &d);
        if (rc == 0) {
            t->last = (double)d * scale;
            t->total += t->last;
            t->known++;
            if (t_ns > t->prev_t) {
                t->dt_ns = t_ns - t->prev_t;
                t->dt_s = ns_to_s(t->dt_ns);
                t->rate = t->last / t->dt_s;
                t->covered_s += t->dt_s;
            }
        } else {
            t->unknown++;
        }
    }
    t->prev = *cur;
    t->prev_t = t_ns;
    return t->last_rc = rc;
}

int track_wrapping(const js_value_t *prev, const js_value_t *cur, uint64_t width, uint64_t *ret)
{
    return counter_delta(prev, cur, (unsigned)width, ret);
}

int track_saturating(const js_value_t *prev, const js_value_t *cur, uint64_t width, uint64_t *ret)
{
    return counter_delta_saturating(prev, cur, (unsigned)width, ret);
}

int track_range(const js_value_t *prev, const js_value_t *cur, uint64_t range, uint64_t *ret)
{
    return counter_delta_range(prev, cur, range, ret);
}
