/* SPDX-License-Identifier: MIT
 *
 * The per-sample cost of the node sources (host, rapl, infiniband, cpufreq, thermal, and system for
 * comparison): each registered source named on the command line is initialised on the given roots and its
 * collect() run N times into a reused row buffer, as the sampler does; prints the mean and median wall time
 * and the mean CPU time (user + system of this process) per collect in microseconds, and the rows per
 * collect. A source whose init fails is reported with the reason.
 *
 *   build/bench/node_cost [-n N] [--procfs DIR] [--sysfs DIR] SOURCE...
 */
#include "core/source.h"
#include "core/table.h"
#include "sources/registry.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t cpu_ns(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
           ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static const js_source_t *find(const char *name)
{
    for (size_t i = 0; js_sources[i]; i++)
        if (!strcmp(js_sources[i]->name, name))
            return js_sources[i];
    return NULL;
}

int main(int argc, char **argv)
{
    int n = 1000;
    const char *procfs = NULL, *sysfs = NULL;
    int a = 1;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (!strcmp(argv[a], "-n") && a + 1 < argc)
            n = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--procfs") && a + 1 < argc)
            procfs = argv[++a];
        else if (!strcmp(argv[a], "--sysfs") && a + 1 < argc)
            sysfs = argv[++a];
        else {
            fprintf(stderr, "usage: node_cost [-n N] [--procfs DIR] [--sysfs DIR] SOURCE...\n");
            return 2;
        }
    }
    if (n < 1)
        n = 1;
    js_ctx_t ctx = {.mode = JS_MODE_WATCH, .scope = {.kind = JS_SCOPE_NODE}, .status_every = 5};
    ctx.monitor_pid = getpid();
    if (fsroot_open(&ctx.root, procfs, sysfs) < 0) {
        fprintf(stderr, "node_cost: cannot open the roots\n");
        return 1;
    }
    printf("%-12s %10s %10s %10s %8s\n", "source", "wall_us", "median_us", "cpu_us", "rows");
    int64_t *t = calloc((size_t)n, sizeof(*t));
    if (!t)
        return 1;
    for (; a < argc; a++) {
        const js_source_t *src = find(argv[a]);
        if (!src) {
            printf("%-12s unknown source\n", argv[a]);
            continue;
        }
        if (!src->collect) {
            printf("%-12s no per-sample work (inventory only)\n", src->name);
            continue;
        }
        void *state = NULL;
        int r = src->init ? src->init(&ctx, &state, NULL, 0) : 0;
        if (r < 0) {
            printf("%-12s init failed: %s\n", src->name, strerror(-r));
            continue;
        }
        size_t nt = 0;
        while (src->tables[nt])
            nt++;
        js_rows_t *rows = calloc(nt, sizeof(*rows));
        js_rows_t **rowp = calloc(nt + 1, sizeof(*rowp));
        if (!rows || !rowp)
            return 1;
        for (size_t k = 0; k < nt; k++) {
            rows_init(&rows[k], src->tables[k]);
            rowp[k] = &rows[k];
        }
        size_t nrows = 0;
        int64_t c0 = cpu_ns(), w0 = mono_ns();
        for (int i = 0; i < n; i++) {
            for (size_t k = 0; k < nt; k++)
                rows_clear(&rows[k]);
            ctx.seq = (uint64_t)i;
            int64_t s = mono_ns();
            src->collect(state, &ctx, rowp);
            t[i] = mono_ns() - s;
            if (i == 0)
                for (size_t k = 0; k < nt; k++)
                    nrows += rows[k].nrows;
        }
        int64_t w1 = mono_ns(), c1 = cpu_ns();
        qsort(t, (size_t)n, sizeof(*t), cmp_i64);
        printf("%-12s %10.1f %10.1f %10.1f %8zu\n", src->name, (double)(w1 - w0) / n / 1e3,
               (double)t[n / 2] / 1e3, (double)(c1 - c0) / n / 1e3, nrows);
        for (size_t k = 0; k < nt; k++)
            rows_free(&rows[k]);
        free(rows);
        free(rowp);
        if (src->fini)
            src->fini(state);
    }
    free(t);
    fsroot_close(&ctx.root);
    return 0;
}
