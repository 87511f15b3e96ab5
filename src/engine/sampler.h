/* SPDX-License-Identifier: MIT
 *
 * The sampler: runs every registered source once per sample into a js_sample_t, timing each, and writes the
 * core `samples` and `source_stats` rows. A source whose init failed stays disabled for the run (its failure
 * is kept for the recording's metadata); a source whose collect fails in one sample keeps its partial rows
 * and its errno in source_stats. Nothing here sleeps or knows about deadlines: that is the monitor loop's
 * job.
 */
#ifndef JOBSCOPE_SAMPLER_H
#define JOBSCOPE_SAMPLER_H

#include "core/sample.h"
#include "core/source.h"
#include "core/util.h" /* now_ns, for the users of the sampler */

typedef struct {
    js_ctx_t *ctx;
    size_t nsources;
    void **state;
    int *init_rc;                 /* per source: 0 or the negative errno init() failed with */
    char (*init_why)[JS_WHY_MAX]; /* per source: the reason init() gave for failing ("" if none) */
    int *prep_rc;                 /* per source: 0 or the negative errno prepare_child() failed with */
    js_rows_t ***rows;            /* per source: its tables' buffers in the sample */
    bool interruptible; /* a pending stop signal ends a sample in progress (-EINTR); off for the first */
} js_sampler_t;

/* sampler_init: init every source against `ctx` (borrowed for the sampler's life) and bind the buffers of
 * `s`. Returns 0 or -ENOMEM; a failing source init is not an error (see init_rc). */
int sampler_init(js_sampler_t *sp, js_ctx_t *ctx, js_sample_t *s);

/* sampler_init_reason: why source `i` is disabled for the run (the reason its init gave, else strerror of
 * its errno), or NULL when its init succeeded. Valid while the sampler lives. */
const char *sampler_init_reason(const js_sampler_t *sp, size_t i);

/* sampler_collect: clear `s` and take sample ctx->seq. `deadline_ns` < 0 means an off-schedule sample.
 * Returns 0, -ENOMEM, or -EINTR when a stop signal arrived during the sample (it is then incomplete and must
 * not be committed; nothing is lost: the next sample reads everything again). */
int sampler_collect(js_sampler_t *sp, js_sample_t *s, int64_t deadline_ns, int64_t missed);

/* sampler_prepare_child: run mode; call every enabled source's prepare_child for the held command `child`.
 * A source that fails keeps running; its errno is kept in prep_rc (recorded as `prepare_error.SOURCE`). */
void sampler_prepare_child(js_sampler_t *sp, pid_t child);

/* sampler_inventory: append every enabled source's inventory rows to the `inventory` table of `s`. */
void sampler_inventory(js_sampler_t *sp, js_sample_t *s);

/* sampler_mark_final: set the `final` flag of the sample just collected. */
void sampler_mark_final(js_sample_t *s);

/* sampler_fini: fini every source; accepts a zeroed sampler. */
void sampler_fini(js_sampler_t *sp);

#endif
