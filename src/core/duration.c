/* SPDX-License-Identifier: MIT
 *
 * Duration parsing for -i/--interval and friends (see duration.h). Integer arithmetic only, so "0.1" is
 * exactly 100 ms.
 */
#include "core/duration.h"

#include <errno.h>
#include <string.h>

int duration_parse(const char *s, int64_t *ret_ns)
{
    if (!s)
        return -EINVAL;
    const char *p = s;
    uint64_t whole = 0, frac = 0, frac_div = 1;
    int digits = 0;
    for (; *p >= '0' && *p <= '9'; p++, digits++) {
        if (whole > 1000000000000ULL)
            return -ERANGE;
        whole = whole * 10 + (uint64_t)(*p - '0');
    }
    if (*p == '.') {
        p++;
        for (; *p >= '0' && *p <= '9'; p++, digits++) {
            if (frac_div < 1000000000000ULL) {
                frac = frac * 10 + (uint64_t)(*p - '0');
                frac_div *= 10;
            }
        }
    }
    if (digits == 0)
        return -EINVAL;
    static const struct {
        const char *unit;
        uint64_t ns;
    } units[] = {{"", 1000000000ULL},     {"s", 1000000000ULL},   {"ms", 1000000ULL},
                 {"us", 1000ULL},         {"ns", 1ULL},           {"m", 60000000000ULL},
                 {"min", 60000000000ULL}, {"h", 3600000000000ULL}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(p, units[i].unit) != 0)
            continue;
        uint64_t mul = units[i].ns;
        if (whole > (uint64_t)INT64_MAX / mul)
            return -ERANGE;
        /* frac * mul / frac_div without overflow: frac < frac_div <= 1e12, mul <= 3.6e12 */
        long double f = (long double)frac * (long double)mul / (long double)frac_div;
        uint64_t ns = whole * mul + (uint64_t)(f + 0.5L);
        if (ns > (uint64_t)INT64_MAX)
            return -ERANGE;
        *ret_ns = (int64_t)ns;
        return 0;
    }
    return -EINVAL;
}

int interval_parse(const char *s, int64_t *ret_ns)
{
    int64_t ns;
    int r = duration_parse(s, &ns);
    if (r < 0)
        return r;
    if (ns < JS_INTERVAL_MIN_NS || ns > JS_INTERVAL_MAX_NS)
        return -ERANGE;
    *ret_ns = ns;
    return 0;
}
