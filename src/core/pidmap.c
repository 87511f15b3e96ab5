/* SPDX-License-Identifier: MIT
 *
 * PID-keyed open-addressing hash map (see pidmap.h).
 */
#include "core/pidmap.h"

#include <stdlib.h>
#include <string.h>

#define KEY(m, i) (*(int32_t *)((m)->slots + (i) * (m)->stride))
#define VAL(m, i) ((void *)((m)->slots + (i) * (m)->stride + 8))

/* hash: PIDs in blocks of 16 consecutive ones, each block at a multiplicative hash of its number: consecutive
 * PIDs (a job's processes, mostly forked in a row, and read in PID order by the BPF reader and /proc
 * listings) sit in neighbouring slots, so a pass over them walks memory in order (one cache miss per block,
 * not per PID), while the blocks spread over the table (a run of PIDs never forms one long probe cluster).
 * The table has at least 64 slots, so a block never wraps. */
#define BLOCK_BITS 4

static size_t hash(int32_t pid, size_t mask)
{
    uint32_t u = (uint32_t)pid, b = (u >> BLOCK_BITS) * 2654435761u;
    return (((size_t)b << BLOCK_BITS) | (u & ((1u << BLOCK_BITS) - 1))) & mask;
}

void pidmap_init(js_pidmap_t *m, size_t vsize)
{
    memset(m, 0, sizeof(*m));
    m->vsize = vsize;
    m->stride = 8 + ((vsize + 7) & ~(size_t)7);
}

void pidmap_free(js_pidmap_t *m)
{
    free(m->slots);
    m->slots = NULL;
    m->cap = m->count = 0;
}

void *pidmap_get(const js_pidmap_t *m, int32_t pid)
{
    if (!m->cap || pid == 0)
        return NULL;
    size_t mask = m->cap - 1;
    for (size_t i = hash(pid, mask);; i = (i + 1) & mask) {
        int32_t k = KEY(m, i);
        if (k == pid)
            return VAL(m, i);
        if (k == 0)
            return NULL;
    }
}

static int grow(js_pidmap_t *m)
{
    js_pidmap_t n = *m;
    n.cap = m->cap ? m->cap * 2 : 64;
    n.slots = calloc(n.cap, n.stride);
    if (!n.slots)
        return -1;
    for (size_t i = 0; i < m->cap; i++) {
        int32_t k = KEY(m, i);
        if (!k)
            continue;
        size_t j = hash(k, n.cap - 1);
        while (KEY(&n, j))
            j = (j + 1) & (n.cap - 1);
        memcpy(n.slots + j * n.stride, m->slots + i * m->stride, m->stride);
    }
    free(m->slots);
    *m = n;
    return 0;
}

void *pidmap_put(js_pidmap_t *m, int32_t pid, int *ret_new)
{
    void *v = pidmap_get(m, pid);
    if (ret_new)
        *ret_new = 0;
    if (v || pid == 0)
        return v;
    if ((m->count + 1) * 2 > m->cap && grow(m) < 0)
        return NULL;
    size_t mask = m->cap - 1, i = hash(pid, mask);
    while (KEY(m, i))
        i = (i + 1) & mask;
    memset(m->slots + i * m->stride, 0, m->stride);
    KEY(m, i) = pid;
    m->count++;
    if (ret_new)
        *ret_new = 1;
    return VAL(m, i);
}

void pidmap_del(js_pidmap_t *m, int32_t pid)
{
    if (!m->cap)
        return;
    size_t mask = m->cap - 1, i = hash(pid, mask);
    while (KEY(m, i) != pid) {
        if (!KEY(m, i))
            return;
        i = (i + 1) & mask;
    }
    for (size_t j = i;;) {
        j = (j + 1) & mask;
        int32_t k = KEY(m, j);
        if (!k)
            break;
        size_t h = hash(k, mask);
        if ((j > i) ? (h <= i || h > j) : (h <= i && h > j)) {
            memcpy(m->slots + i * m->stride, m->slots + j * m->stride, m->stride);
            i = j;
        }
    }
    KEY(m, i) = 0;
    m->count--;
}

int32_t pidmap_at(const js_pidmap_t *m, size_t i, void **ret_val)
{
    if (i >= m->cap)
        return 0;
    if (ret_val)
        *ret_val = VAL(m, i);
    return KEY(m, i);
}
