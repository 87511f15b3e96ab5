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
