/* SPDX-License-Identifier: MIT
 *
 * The `levels` source: the embedded monitor's levels (include/jobscope.h JS_LEVEL_*, js_ctx_t.levels), scopes
 * read beside the monitored one by the same monitor. Each level is a scope of its own read by its own
 * instance of the sources that read scopes: proc_tree (every level: a user's processes, or a batch job's
 * slurmstepd tasks) and cgroup (a job with a cgroup of its own), each over a copy of the monitor's context
 * that carries the level's scope. They write into this source's tables, the twins of theirs (level_user_proc,
 * ..., level_job_cgroup_io: the same columns), so the monitored scope's own tables keep only its members and
 * the model (part_levels) models each level exactly as a scope watched alone. Nothing is derived here.
 *
 * The levels are read from /proc (never the BPF reader: a second load costs more than a user's processes do),
 * and nothing is reaped for them, so their totals are sampled, as `watch --user` and `job --track stepd`
 * without a monitor that reaps (their cgroup, where there is one, is exact). With no level on, the source is
 * disabled (-ENODEV) and the twins stay empty.
 */
#include "core/source.h"
#include "sources/cgroup.h"
#include "sources/proc_tree.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const js_source_t source_proc_tree, source_cgroup;

/* this source's tables, in the order collect() gets their rows */
enum {
    T_USER_PROC,
    T_USER_INFO,
    T_USER_TREE,
    T_JOB_PROC,
    T_JOB_INFO,
    T_JOB_TREE,
    T_JOB_STEPD,
    T_JOB_CG,
    T_JOB_CGM,
    T_JOB_CGIO,
    T_JOB_INV,
    T__MAX
};

static const js_table_t *const levels_tables[T__MAX + 1] = {
    &table_level_user_proc,     &table_level_user_proc_info, &table_level_user_tree,
    &table_level_job_proc,      &table_level_job_proc_info,  &table_level_job_tree,
    &table_level_job_stepd,     &table_level_job_cgroup,     &table_level_job_cgroup_memory,
    &table_level_job_cgroup_io, &table_level_job_inventory,  NULL};

typedef struct {
    bool on;
    js_ctx_t ctx; /* the monitor's context with the level's scope */
    void *tree;   /* proc_tree's state for the level */
    void *cg;     /* cgroup's state (a level with a cgroup), else NULL */
    bool cg_on;
    js_rows_t exits, stepd; /* scratch: nothing is reaped for a level; a user level has no slurmstepd */
} level_t;

typedef struct {
    level_t lv[JS_LV_MAX];
} levels_state_t;

static void levels_fini(void *state)
{
    levels_state_t *st = state;
    if (!st)
        return;
    for (int i = 0; i < JS_LV_MAX; i++) {
        level_t *l = &st->lv[i];
        if (l->tree)
            source_proc_tree.fini(l->tree);
        if (l->cg)
            source_cgroup.fini(l->cg);
        rows_free(&l->exits);
        rows_free(&l->stepd);
    }
    free(st);
}

static int levels_init(const js_ctx_t *ctx, void **ret_state, char *why, size_t whylen)
{
    bool any = false;
    for (int i = 0; i < JS_LV_MAX; i++)
        any |= ctx->levels[i].on;
    if (!any)
        return -ENODEV;
    levels_state_t *st = calloc(1, sizeof(*st));
    if (!st)
        return -ENOMEM;
    int r = 0;
    for (int i = 0; i < JS_LV_MAX && r == 0; i++) {
        level_t *l = &st->lv[i];
        if (!ctx->levels[i].on)
            continue;
        l->ctx = *ctx;
        l->ctx.mode = JS_MODE_WATCH;
        l->ctx.scope = ctx->levels[i].scope;
        l->ctx.backend = JS_BACKEND_PROCFS;
        l->ctx.root_pid = 0; /* a level has no root process: its members are its scope's (a job without
                              * slurmstepd found has none, not the caller's tree) */
        l->ctx.reaped = NULL;
        l->ctx.nreaped = 0;
        memset(l->ctx.levels, 0, sizeof(l->ctx.levels));
        rows_init(&l->exits, &table_exits);
        rows_init(&l->stepd, &table_stepd);
        if ((r = source_proc_tree.init(&l->ctx, &l->tree, why, whylen)) < 0)
            break;
        if (l->ctx.scope.kind == JS_SCOPE_CGROUP && l->ctx.scope.cgroup) {
            r = source_cgroup.init(&l->ctx, &l->cg, NULL, 0);
            l->cg_on = r == 0;
            r = r == -ENOMEM ? r : 0; /* without its files the level is still its processes */
        }
        l->on = true;
    }
    if (r < 0) {
        levels_fini(st);
        return r;
    }
    *ret_state = st;
    return 0;
}

/* follow: what the monitor's context says of this sample, into the level's */
static void follow(js_ctx_t *lc, const js_ctx_t *ctx)
{
    lc->seq = ctx->seq;
    lc->final = ctx->final;
    lc->uss_every = ctx->uss_every;
    lc->status_every = ctx->status_every;
    lc->interruptible = ctx->interruptible;
    lc->prev_write_ns = ctx->prev_write_ns;
    lc->prev_sinks_ns = ctx->prev_sinks_ns;
}

static int levels_collect(void *state, js_ctx_t *ctx, js_rows_t *const *rows)
{
    levels_state_t *st = state;
    int first_err = 0;
    for (int i = 0; i < JS_LV_MAX; i++) {
        level_t *l = &st->lv[i];
        if (!l->on)
            continue;
        follow(&l->ctx, ctx);
        rows_clear(&l->exits);
        rows_clear(&l->stepd);
        bool job = i == JS_LV_JOB;
        js_rows_t *const tr[5] = {rows[job ? T_JOB_PROC : T_USER_PROC], rows[job ? T_JOB_INFO : T_USER_INFO],
                                  rows[job ? T_JOB_TREE : T_USER_TREE], &l->exits,
                                  job ? rows[T_JOB_STEPD] : &l->stepd};
        int r = source_proc_tree.collect(l->tree, &l->ctx, tr);
        if (r == -EINTR || r == -ENOMEM)
            return r;
        if (r < 0 && !first_err)
            first_err = r;
        if (!l->cg_on)
            continue;
        js_rows_t *const cr[3] = {rows[T_JOB_CG], rows[T_JOB_CGM], rows[T_JOB_CGIO]};
        if ((r = source_cgroup.collect(l->cg, &l->ctx, cr)) == -ENOMEM)
            return r;
        if (r < 0 && !first_err)
            first_err = r;
        if (ctx->seq == 0 && source_cgroup.inventory) /* what part_cgroup reads of the level's cgroup */
            source_cgroup.inventory(l->cg, &l->ctx, rows[T_JOB_INV]);
    }
    return first_err;
}

/* levels_inventory: how each level was resolved (part_levels models a level from these rows). */
static int levels_inventory(void *state, const js_ctx_t *ctx, js_rows_t *inv)
{
    static const char *const names[JS_LV_MAX] = {"user", "job"};
    static const char *const kinds[JS_SCOPE_MAX] = {"tree", "user", "cgroup", "node"};
    levels_state_t *st = state;
    char key[64];
    for (int i = 0; i < JS_LV_MAX; i++) {
        const level_t *l = &st->lv[i];
        if (!l->on)
            continue;
        const js_scope_t *sc = &l->ctx.scope;
        snprintf(key, sizeof(key), "%s.scope_kind", names[i]);
        inventory_add(inv, "levels", key, kinds[sc->kind]);
        snprintf(key, sizeof(key), "%s.what", names[i]);
        inventory_add(inv, "levels", key, ctx->levels[i].what ? ctx->levels[i].what : "");
        snprintf(key, sizeof(key), "%s.monitor_inside", names[i]);
        inventory_add(inv, "levels", key, ctx->levels[i].monitor_inside ? "1" : "0");
        if (sc->kind == JS_SCOPE_USER) {
            snprintf(key, sizeof(key), "%s.uid", names[i]);
            inventory_addf(inv, "levels", key, "%u", (unsigned)sc->uid);
        }
        if (sc->stepd_job) {
            snprintf(key, sizeof(key), "%s.stepd_job", names[i]);
            inventory_add(inv, "levels", key, sc->stepd_job);
        }
        if (sc->kind == JS_SCOPE_CGROUP) {
            snprintf(key, sizeof(key), "%s.cgroup_read", names[i]);
            inventory_add(inv, "levels", key, l->cg_on ? "1" : "0");
        }
    }
    return 0;
}

const js_source_t source_levels = {
    .name = "levels",
    .help = "the embedded monitor's levels: a user's and a batch job's processes beside the monitored tree",
    .tables = levels_tables,
    .init = levels_init,
    .collect = levels_collect,
    .fini = levels_fini,
    .inventory = levels_inventory,
};
