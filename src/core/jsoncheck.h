/* SPDX-License-Identifier: MIT
 *
 * A JSON syntax check (RFC 8259) for text jobscope stores as JSON without parsing it: the data of a mark.
 * jobscope writes JSON and never interprets it; this only decides whether the text may be embedded as a
 * value (else it is stored as a JSON string). Iterative, bounded nesting, no allocation.
 */
#ifndef JOBSCOPE_JSONCHECK_H
#define JOBSCOPE_JSONCHECK_H

#include <stdbool.h>
#include <stddef.h>

#define JSONCHECK_DEPTH_MAX 64

/* json_valid: whether `s` (`len` bytes) is exactly one JSON value, surrounded by optional whitespace, with
 * valid UTF-8 in its strings and at most JSONCHECK_DEPTH_MAX levels of nesting. */
bool json_valid(const char *s, size_t len);

#endif
