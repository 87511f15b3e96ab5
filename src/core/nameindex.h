/* SPDX-License-Identifier: MIT
 *
 * An index from a name (a NUL-terminated string the caller owns and keeps at one address) to a position in
 * the caller's array: an open-addressing hash table of positions (linear probing, FNV-1a), so that finding
 * one of n names costs O(1) instead of n string comparisons. Used where names come from the job and can be
 * many (the phases part's phase and event names: 100,000 distinct event names). Entries are only added,
 * never removed, as the arrays they index only grow.
 */
#ifndef JOBSCOPE_NAMEINDEX_H
#define JOBSCOPE_NAMEINDEX_H

#include <stddef.h>

typedef struct {
    size_t *slot; /* cap entries: position + 1, 0 = empty */
    size_t cap, count;
} js_nameindex_t;

/* nameindex_free: release the table (not the names); the index is empty and reusable afterwards. */
void nameindex_free(js_nameindex_t *x);

/* nameindex_find: the position of `name` in the caller's array, or -1 when absent. `name_at(ctx, i)` returns
 * the name at position i of that array (the index keeps positions, not names). */
long nameindex_find(const js_nameindex_t *x, const char *name,
                    const char *(*name_at)(const void *ctx, size_t i), const void *ctx);

/* nameindex_add: record that `name` is at position `pos` (a name not yet in the index). `name_at` and
 * `ctx` as for nameindex_find (used to rehash when the table grows). 0, or -ENOMEM (the index unchanged). */
int nameindex_add(js_nameindex_t *x, const char *name, size_t pos,
                  const char *(*name_at)(const void *ctx, size_t i), const void *ctx);

#endif
