/* SPDX-License-Identifier: MIT
 *
 * bench/marks_cost: the cost of a mark (js_phase_begin + js_phase_end pairs) for the caller, the figure
 * docs/PHASES.md promises (under 1 us without a monitor, under 5 us with one). bench/marks.sh runs it
 * without a monitor and under `jobscope run`, and writes the section of docs/BENCHMARKS.md.
 *
 *   marks_cost [PAIRS]           PAIRS begin/end pairs back to back (default 1,000,000): ns per mark, and
 *                                how many marks the monitor's queue could not take (dropped, never waited
 * for) marks_cost --paced [PAIRS]   each mark timed on its own, 20 us apart, so the monitor keeps up and
 * every mark is delivered: the cost of a mark that is sent (median and 99th centile) marks_cost --rate HZ
 * SECONDS HZ begin/end pairs a second for SECONDS (HZ 0: none, the same sleep): what the samples a monitor
 * takes at marks cost it (bench/marks.sh compares the monitor's CPU of both)
 *
 * Output: one JSON object on stdout.
 */
#include "jobscope.h"

#include <stdbool.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t now_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* rate: HZ begin/end pairs a second (sleeping between), for SECONDS */
static int rate(double hz, double seconds)
{
    long failed = 0, pairs = 0;
    int64_t t0 = now_ns(), end = t0 + (int64_t)(seconds * 1e9);
    for (int64_t next = t0; next < end;) {
        if (hz > 0) {
            failed += js_phase_begin("step") != 0;
            failed += js_phase_end("step") != 0;
            pairs++;
            next += (int64_t)(1e9 / hz);
        } else {
            next = end;
        }
        int64_t wait = next - now_ns();
        if (wait > 0) {
            struct timespec ts = {.tv_sec = wait / 1000000000, .tv_nsec = wait % 1000000000};
            nanosleep(&ts, NULL);
        }
    }
    printf("{\"mode\": \"rate\", \"hz\": %g, \"pairs\": %ld, \"not_sent\": %ld}\n", hz, pairs, failed);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--rate") == 0)
        return rate(strtod(argv[2], NULL), strtod(argv[3], NULL));
    bool paced = argc > 1 && strcmp(argv[1], "--paced") == 0;
    long pairs = argc > 1 + paced ? strtol(argv[1 + paced], NULL, 10) : (paced ? 20000 : 1000000);
    if (pairs <= 0)
        return 2;
    int active = js_marks_active(); /* connects (once) before the timing */
    uint64_t d0 = js_marks_dropped();
    long failed = 0;
    if (!paced) {
        /* wall time, and this thread's CPU time: on a busy machine the wall time also counts the time the
         * caller waited for a CPU (the monitor receiving on another core, other jobs) */
        int64_t t0 = now_ns(), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        for (long i = 0; i < pairs; i++) {
            failed += js_phase_begin("bench") != 0;
            failed += js_phase_end("bench") != 0;
        }
        int64_t t1 = now_ns(), c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        printf("{\"mode\": \"back-to-back\", \"monitor\": %s, \"marks\": %ld, \"ns_per_mark\": %.1f, "
               "\"cpu_ns_per_mark\": %.1f, \"not_sent\": %ld, \"dropped\": %llu}\n",
               active ? "true" : "false", 2 * pairs, (double)(t1 - t0) / (2.0 * (double)pairs),
               (double)(c1 - c0) / (2.0 * (double)pairs), failed,
               (unsigned long long)(js_marks_dropped() - d0));
        return 0;
    }
    int64_t *ns = malloc((size_t)(2 * pairs) * sizeof(*ns));
    if (!ns)
        return 1;
    for (long i = 0; i < 2 * pairs; i++) {
        int64_t t0 = now_ns();
        failed += (i % 2 ? js_phase_end("bench") : js_phase_begin("bench")) != 0;
        int64_t t1 = now_ns();
        ns[i] = t1 - t0;
        while (now_ns() - t1 < 20000)
            ; /* let the monitor take it */
    }
    qsort(ns, (size_t)(2 * pairs), sizeof(*ns), cmp_i64);
    printf("{\"mode\": \"paced\", \"monitor\": %s, \"marks\": %ld, \"median_ns\": %lld, \"p99_ns\": %lld, "
           "\"not_sent\": %ld, \"dropped\": %llu}\n",
           active ? "true" : "false", 2 * pairs, (long long)ns[pairs], (long long)ns[(2 * pairs * 99) / 100],
           failed, (unsigned long long)(js_marks_dropped() - d0));
    free(ns);
    return 0;
}
