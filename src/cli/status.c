/* SPDX-License-Identifier: MIT
 *
 * The live status line on the terminal, as a live sink: after each sample, one line with the elapsed time,
 * cores busy, memory, processes and samples taken, redrawn in place on stderr.
 */
#include "cli/cli.h"

#include "core/sampler.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

static int status_sample(void *state, const js_sink_sample_t *ev)
{
    js_status_t *sl = state;
    const js_tree_point_t *p = ev->model ? model_point(ev->model) : NULL;
    if (!sl->on || !p)
        return 0;
    char mem[32];
    fmt_bytes(mem, sizeof(mem), p->rss);
    double el = (double)(now_ns(CLOCK_MONOTONIC) - sl->start_mono_ns) / 1e9;
    fprintf(stderr, "\r\033[K[jobscope] %.1fs  cores %.2f  mem %s  procs %.0f  samples %lld", el,
            isnan(p->cpu_cores) ? 0.0 : p->cpu_cores, mem, p->members, (long long)ev->seq + 1);
    fflush(stderr);
    return 0;
}

static int status_stop(void *state)
{
    js_status_t *sl = state;
    if (sl->on)
        fputs("\r\033[K", stderr);
    return 0;
}

const js_live_sink_t sink_status = {
    .name = "status",
    .sample = status_sample,
    .stop = status_stop,
};
