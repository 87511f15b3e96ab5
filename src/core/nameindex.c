/* SPDX-License-Identifier: MIT
 *
 * The name index (nameindex.h): positions in an open-addressing table of a power-of-two size, kept at most
 * half full; a name's slot is found from its FNV-1a hash by linear probing, comparing names through the
 * caller's `name_at`.
 */
#include "core/nameindex.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

void nameindex_free(js_nameindex_t *x)
{
    free(x->slot);
    x->slot = NULL;
    x->cap = x->count = 0;
}

long nameindex_find(const js_nameindex_t *x, const char *name,
                    const char *(*name_at)(const void *ctx, size_t i), const void *ctx)
{
    if (!x->cap)
        return -1;
    for (size_t i = (size_t)fnv1a(name) & (x->cap - 1);; i = (i + 1) & (x->cap - 1)) {
        size_t v = x->slot[i];
        if (!v)
            return -1;
        if (strcmp(name_at(ctx, v - 1), name) == 0)
            return (long)(v - 1);
    }
}

/* put: the position in a table with room (no growth, no duplicate check) */
static void put(size_t *slot, size_t cap, const char *name, size_t pos)
{
    size_t i = (size_t)fnv1a(name) & (cap - 1);
    while (slot[i])
        i = (i + 1) & (cap - 1);
    slot[i] = pos + 1;
}

int nameindex_add(js_nameindex_t *x, const char *name, size_t pos,
                  const char *(*name_at)(const void *ctx, size_t i), const void *ctx)
{
    if (2 * (x->count + 1) > x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 64;
        size_t *slot = calloc(cap, sizeof(*slot));
        if (!slot)
            return -ENOMEM;
        for (size_t i = 0; i < x->cap; i++)
            if (x->slot[i])
                put(slot, cap, name_at(ctx, x->slot[i] - 1), x->slot[i] - 1);
        free(x->slot);
        x->slot = slot;
        x->cap = cap;
    }
    put(x->slot, x->cap, name, pos);
    x->count++;
    return 0;
}
