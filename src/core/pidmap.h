/* SPDX-License-Identifier: MIT
 *
 * A small open-addressing hash map from PID to a fixed-size value stored inline (linear probing,
 * backward-shift deletion, so no tombstones build up over a long run). Used by the model for per-process
 * state. Pointers to values are invalidated by pidmap_put (growth) and pidmap_del (shifts).
 */
#ifndef JOBSCOPE_PIDMAP_H
#define JOBSCOPE_PIDMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    unsigned char *slots; /* cap * (sizeof(int32_t) + pad + vsize) */
    size_t cap, count, vsize, stride;
} js_pidmap_t;

/* pidmap_init: empty map of values of `vsize` bytes. No allocation yet. */
void pidmap_init(js_pidmap_t *m, size_t vsize);

/* pidmap_free: release; accepts an initialised empty map. */
void pidmap_free(js_pidmap_t *m);

/* pidmap_get: the value of `pid`, or NULL. */
void *pidmap_get(const js_pidmap_t *m, int32_t pid);

/* pidmap_put: the value of `pid`, inserted zeroed if absent (*ret_new set to 1 then). NULL on ENOMEM. */
void *pidmap_put(js_pidmap_t *m, int32_t pid, int *ret_new);

/* pidmap_del: remove `pid` if present. */
void pidmap_del(js_pidmap_t *m, int32_t pid);

/* pidmap_at: iteration over slots 0..cap-1: the pid in slot i (0 if empty) and its value in *ret_val. */
int32_t pidmap_at(const js_pidmap_t *m, size_t i, void **ret_val);

#endif
