/* SPDX-License-Identifier: MIT
 *
 * The explicit list of model parts (see part.h), in feeding order: one line each. Adding a part means one
 * file in src/model/ ending in `const js_model_part_t part_<name>`, and one X(name) line below.
 */
#include "model/part.h"

#define JS_PART_LIST(X)                                                                                      \
    X(system)                                                                                                \
    X(cgroup)                                                                                                \
    X(perf)                                                                                                  \
    X(energy)                                                                                                \
    X(network)                                                                                               \
    X(node)                                                                                                  \
    X(gpu)                                                                                                   \
    X(phases)                                                                                                \
    X(split)                                                                                                 \
    X(levels)

#define JS_PART_DECLARE(name) extern const js_model_part_t part_##name;
#define JS_PART_REF(name) &part_##name,
JS_PART_LIST(JS_PART_DECLARE)

const js_model_part_t *const js_model_parts[] = {JS_PART_LIST(JS_PART_REF) NULL};
