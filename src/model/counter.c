/* SPDX-License-Identifier: MIT
 *
 * Counter deltas with wrap-around for narrow counters and reset detection (see counter.h).
 */
#include "model/counter.h"

#include <errno.h>

int counter_delta(const js_value_t *prev, const js_value_t *cur, unsigned width, uint64_t *ret)
{
    if (!prev || !cur || !prev->present || !cur->present)
        return -ENODATA;
    uint64_t a = (uint64_t)prev->i, b = (uint64_t)cur->i;
    if (b >= a) {
        *ret = b - a;
        return 0;
    }
    if (width == 0 || width >= 64)
        return -ERANGE;
    uint64_t range = UINT64_C(1) << width;
    if (a >= range || b >= range)
        return -ERANGE;
    *ret = range - a + b;
    return 0;
}

int counter_delta_range(const js_value_t *prev, const js_value_t *cur, uint64_t range, uint64_t *ret)
{
    if (!prev || !cur || !prev->present || !cur->present || range == 0)
        return -ENODATA;
    if (prev->i < 0 || cur->i < 0)
        return -ERANGE;
    uint64_t a = (uint64_t)prev->i, b = (uint64_t)cur->i;
    if (a > range || b > range)
        return -ERANGE;
    *ret = b >= a ? b - a : range - a + b;
    return 0;
}

int counter_delta_saturating(const js_value_t *prev, const js_value_t *cur, unsigned width, uint64_t *ret)
{
    if (!prev || !cur || !prev->present || !cur->present)
        return -ENODATA;
    uint64_t a = (uint64_t)prev->i, b = (uint64_t)cur->i;
    if (width > 0 && width < 64) {
        uint64_t max = (UINT64_C(1) << width) - 1;
        if (a > max || b > max)
            return -ERANGE; /* does not fit its width: not this counter */
        if (a == max || b == max)
            return -EOVERFLOW;
    }
    if (b < a)
        return -ERANGE;
    *ret = b - a;
    return 0;
}
