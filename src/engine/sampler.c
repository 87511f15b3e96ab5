/* SPDX-License-Identifier: MIT
 *
 * Runs the registered sources into one sample (see sampler.h).
 */
#include "engine/sampler.h"

#include "core/util.h"
#include "sources/registry.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int sampler_init(js_sampler_t *sp, js_ctx_t *ctx, js_sample_t *s)
{
    memset(sp, 0, sizeof(*sp));
    sp->ctx = ctx;
    while (js_sources[sp->nsources])
        sp->nsources++;
    sp->state = calloc(sp->nsources, sizeof(*sp->state));
    sp->init_rc = calloc(sp->nsources, sizeof(*sp->init_rc));
    sp->init_why = calloc(sp->nsources, sizeof(*sp->init_why));
    sp->prep_rc = calloc(sp->nsources, sizeof(*sp->prep_rc));
    sp->rows = calloc(sp->nsources, sizeof(*sp->rows));
    if (!sp->state || !sp->init_rc || !sp->init_why || !sp->prep_rc || !sp->rows)
        goto nomem;
    for (size_t i = 0; i < sp->nsources; i++) {
        const js_source_t *src = js_sources[i];
        size_t nt = 0;
        while (src->tables && src->tables[nt])
            nt++;
        sp->rows[i] = calloc(nt + 1, sizeof(js_rows_t *));
        if (!sp->rows[i])
            goto nomem;
        for (size_t t = 0; t < nt; t++)
            sp->rows[i][t] = sample_rows(s, src->tables[t]);
        sp->init_rc[i] =
            src->init ? src->init(ctx, &sp->state[i], sp->init_why[i], sizeof(sp->init_why[i])) : 0;
    }
    return 0;
nomem:
    sampler_fini(sp);
    return -ENOMEM;
}

const char *sampler_init_reason(const js_sampler_t *sp, size_t i)
{
    if (i >= sp->nsources || sp->init_rc[i] >= 0)
        return NULL;
    return sp->init_why[i][0] ? sp->init_why[i] : strerror(-sp->init_rc[i]);
}

int sampler_collect(js_sampler_t *sp, js_sample_t *s, int64_t deadline_ns, int64_t missed)
{
    sample_clear(s);
    js_rows_t *samples = sample_rows(s, &table_samples);
    js_rows_t *stats = sample_rows(s, &table_source_stats);
    js_value_t *v = rows_add(samples);
    if (!v)
        return -ENOMEM;
    val_int(&v[SAMPLES_T_MONO], now_ns(CLOCK_MONOTONIC));
    val_int(&v[SAMPLES_T_UNIX], now_ns(CLOCK_REALTIME));
    if (deadline_ns >= 0)
        val_int(&v[SAMPLES_DEADLINE], deadline_ns);
    val_int(&v[SAMPLES_MISSED], missed);
    val_int(&v[SAMPLES_FINAL], 0);
    val_int(&v[SAMPLES_FOR_MARKS], sp->ctx->for_marks);
    /* A stop signal that came in mid-sample is looked for between sources, but only once a millisecond of
     * the sample has gone by: a sample that short ends soon anyway, and the look is a system call. */
    int64_t checked = now_ns(CLOCK_MONOTONIC);
    for (size_t i = 0; i < sp->nsources; i++) {
        const js_source_t *src = js_sources[i];
        if (sp->init_rc[i] < 0 || !src->collect)
            continue; /* disabled, or an inventory-only source */
        int64_t t0 = now_ns(CLOCK_MONOTONIC);
        if (sp->interruptible && !sp->ctx->final && t0 - checked >= 1000000) {
            checked = t0;
            if (sampler_stop_pending())
                return -EINTR;
        }
        sp->ctx->interruptible = sp->interruptible && !sp->ctx->final;
        sp->ctx->inventory_changed = false;
        int rc = src->collect(sp->state[i], sp->ctx, sp->rows[i]);
        if (rc == -EINTR)
            return rc;
        /* a fact of its inventory changed: its rows again (sampler_inventory writes the first sample's) */
        if (sp->ctx->inventory_changed && sp->ctx->seq > 0 && src->inventory &&
            src->inventory(sp->state[i], sp->ctx, sample_rows(s, &table_inventory)) == -ENOMEM)
            return -ENOMEM;
        sp->ctx->inventory_changed = false;
        int64_t t1 = now_ns(CLOCK_MONOTONIC);
        js_value_t *st = rows_add(stats);
        if (!st)
            return -ENOMEM;
        rows_set_str(stats, &st[STATS_SOURCE], src->name, strlen(src->name));
        val_int(&st[STATS_DURATION], t1 - t0);
        val_int(&st[STATS_RC], rc);
        if (rc == -ENOMEM)
            return rc;
    }
    return 0;
}

void sampler_prepare_child(js_sampler_t *sp, pid_t child)
{
    for (size_t i = 0; i < sp->nsources; i++)
        if (sp->init_rc[i] == 0 && js_sources[i]->prepare_child)
            sp->prep_rc[i] = js_sources[i]->prepare_child(sp->state[i], sp->ctx, child);
}

void sampler_inventory(js_sampler_t *sp, js_sample_t *s)
{
    js_rows_t *inv = sample_rows(s, &table_inventory);
    for (size_t i = 0; i < sp->nsources; i++)
        if (sp->init_rc[i] == 0 && js_sources[i]->inventory)
            js_sources[i]->inventory(sp->state[i], sp->ctx, inv);
}

void sampler_mark_final(js_sample_t *s)
{
    js_rows_t *samples = sample_rows(s, &table_samples);
    if (samples->nrows)
        val_int(&rows_row(samples, 0)[SAMPLES_FINAL], 1);
}

void sampler_fini(js_sampler_t *sp)
{
    if (!sp)
        return;
    for (size_t i = 0; i < sp->nsources; i++) {
        if (sp->state && sp->init_rc && sp->init_rc[i] == 0 && js_sources[i]->fini)
            js_sources[i]->fini(sp->state[i]);
        if (sp->rows)
            free(sp->rows[i]);
    }
    free(sp->state);
    free(sp->init_rc);
    free(sp->init_why);
    free(sp->prep_rc);
    free(sp->rows);
    memset(sp, 0, sizeof(*sp));
}
