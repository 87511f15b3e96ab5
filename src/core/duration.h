/* SPDX-License-Identifier: MIT
 *
 * Durations as the CLI accepts them: a decimal number with an optional unit (ns, us, ms, s, m, h; no unit
 * means seconds), e.g. "1s", "0.5", "500ms", "2m". Parsed without the C locale's help (a '.' always).
 */
#ifndef JOBSCOPE_DURATION_H
#define JOBSCOPE_DURATION_H

#include <stdint.h>

#define JS_INTERVAL_MIN_NS 10000000LL      /* 10 ms */
#define JS_INTERVAL_MAX_NS 3600000000000LL /* 1 h */

/* duration_parse: parse `s` into nanoseconds. Returns 0, -EINVAL (not a duration: empty, bad number, unknown
 * unit, negative) or -ERANGE (overflow). `*ret_ns` is untouched on failure. */
int duration_parse(const char *s, int64_t *ret_ns);

/* interval_parse: duration_parse limited to [10ms, 1h]; -ERANGE outside. */
int interval_parse(const char *s, int64_t *ret_ns);

#endif
