/* SPDX-License-Identifier: MIT
 *
 * The live status, as a live sink: after each sample, the elapsed time, cores busy, memory, processes and
 * samples taken. For `run` (whose command writes to the same terminal) it goes to the terminal's title bar,
 * so it never mixes with the command's output or stays in the scrollback; the title is saved first and
 * restored at the end (xterm's title stack). For attach and watch, which own their terminal, it is one line
 * on stderr redrawn in place and cleared at the end.
 */
#include "cli/cli.h"

#include "engine/sampler.h"

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
    double cores = isnan(p->cpu_cores) ? 0.0 : p->cpu_cores;
    if (sl->title) {
        if (!sl->shown)
            fputs("\033[22;0t", stderr); /* push the current title */
        fprintf(stderr, "\033]0;jobscope %.0fs  cores %.2f  mem %s  procs %.0f\007", el, cores, mem,
                p->members);
    } else {
        fprintf(stderr, "\r\033[K[jobscope] %.1fs  cores %.2f  mem %s  procs %.0f  samples %lld", el, cores,
                mem, p->members, (long long)ev->seq + 1);
    }
    sl->shown = true;
    fflush(stderr);
    return 0;
}

static int status_stop(void *state)
{
    js_status_t *sl = state;
    if (sl->on && sl->shown)
        fputs(sl->title ? "\033[23;0t" : "\r\033[K", stderr); /* pop the title / clear the line */
    sl->shown = false;
    return 0;
}

const js_live_sink_t sink_status = {
    .name = "status",
    .sample = status_sample,
    .stop = status_stop,
};
