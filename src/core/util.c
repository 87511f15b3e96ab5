/* SPDX-License-Identifier: MIT
 *
 * Small shared helpers (see util.h).
 */
#include "core/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int array_grow(void **arr, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 8;
    if (c <= n)
        c = n + 1;
    if (size && c > SIZE_MAX / size)
        return -ENOMEM;
    void *g = realloc(*arr, c * size);
    if (!g)
        return -ENOMEM;
    *arr = g;
    *cap = c;
    return 0;
}

void why_set(char *why, size_t cap, const char *fmt, ...)
{
    if (!why || !cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(why, cap, fmt, ap);
    va_end(ap);
    if (n < 0)
        why[0] = '\0';
}

int64_t now_ns(int clock_id)
{
    struct timespec ts;
    clock_gettime(clock_id, &ts);
    return (int64_t)ts.tv_sec * JS_NS_PER_S + ts.tv_nsec;
}
