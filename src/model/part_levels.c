/* SPDX-License-Identifier: MIT
 *
 * The `levels` model part: the embedded monitor's levels (include/jobscope.h JS_LEVEL_*; the `levels` source
 * reads them into the level_* twin tables). Each level is modelled by a model of its own (model_new with the
 * level's scope: `user`, or the `job`'s cgroup or slurmstepd tasks), fed every sample through a shallow copy
 * of the sample in which the scope's tables (proc, proc_info, tree, exits, stepd, cgroup*, inventory) are the
 * level's twins: so a level's totals, rates, memory, I/O and per-phase figures are derived by exactly the
 * code that derives a watched scope's, and a replayed recording gives the same figures as the live monitor.
 * The host's figures (the `system` level of JUmPER) need no level: every recording has them.
 *
 * A level exists when the first sample's inventory says so (source `levels`: `user.scope_kind`, ...).
 * Views (listed for every recording, empty without levels): `levels` (one row per level and sample: the
 * level's `tree` view row, with its name first) and
 * `level_phases` (the level's `phases` view rows, likewise). Summary: a `levels` section, per level its CPU
 * (total, mean and largest rate, exact or not and why), memory peaks, I/O and processes.
 */
#include "model/model.h"

#include "model/summary.h"
#include "model/figure.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const level_names[JS_LV_MAX] = {"user", "job"};

/* the scope's tables and, per level, the twin that stands in for each (NULL: an empty table), by name (the
 * twins have the same columns; sources/levels.c) */
enum { S_PROC, S_INFO, S_TREE, S_EXITS, S_STEPD, S_CG, S_CGM, S_CGIO, S_INV, S__MAX };
static const char *const scope_tables[S__MAX] = {"proc",   "proc_info",     "tree",      "exits",    "stepd",
                                                 "cgroup", "cgroup_memory", "cgroup_io", "inventory"};
static const char *const twins[JS_LV_MAX][S__MAX] = {
    [JS_LV_USER] = {"level_user_proc", "level_user_proc_info", "level_user_tree"},
    [JS_LV_JOB] = {"level_job_proc", "level_job_proc_info", "level_job_tree", NULL, "level_job_stepd",
                   "level_job_cgroup", "level_job_cgroup_memory", "level_job_cgroup_io",
                   "level_job_inventory"},
};

typedef struct {
    js_model_t *m;
    js_sample_t s; /* the shallow copy fed to m (rows copied by value; the buffers are the sample's) */
    js_rows_t empty[S__MAX];
    int dst[S__MAX], src[S__MAX]; /* each scope table's index in the sample, and its twin's (-1: none) */
    char what[256];
} level_t;

typedef struct {
    js_model_cfg_t cfg;
    bool decided; /* the first sample was looked at */
    level_t lv[JS_LV_MAX];
    int nlevels;
    /* views: {level} + the level model's view columns, made at the first feed */
    js_table_t vt[2];
    js_column_t *vcols[2];
    const js_table_t *src_view[2]; /* the level model's `tree` and `phases` descriptors */
} levels_t;

static const char *const view_names[2] = {"levels", "level_phases"};
static const char *const level_view_of[2] = {"tree", "phases"};

static int levels_init(const js_model_cfg_t *cfg, void **ret_state)
{
    if (cfg->level)
        return -ENODEV; /* a level has no levels */
    levels_t *p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    p->cfg = *cfg;
    *ret_state = p;
    return 0;
}

static void levels_fini(void *state)
{
    levels_t *p = state;
    if (!p)
        return;
    for (int i = 0; i < JS_LV_MAX; i++) {
        model_free(p->lv[i].m);
        free(p->lv[i].s.rows);
    }
    for (int k = 0; k < 2; k++)
        free(p->vcols[k]);
    free(p);
}

/* inv_get: the value of inventory row (levels, key) in rows `inv`, or NULL. */
static const char *inv_get(const js_rows_t *inv, const char *key)
{
    for (size_t i = 0; inv && i < inv->nrows; i++) {
        const js_value_t *v = rows_row(inv, i);
        if (v[INV_SOURCE].present && v[INV_KEY].present && v[INV_VALUE].present &&
            !strcmp(rows_str(inv, &v[INV_SOURCE]), "levels") && !strcmp(rows_str(inv, &v[INV_KEY]), key))
            return rows_str(inv, &v[INV_VALUE]);
    }
    return NULL;
}

/* make_views: the `levels` and `level_phases` descriptors, from a level model's own views. */
static int make_views(levels_t *p, const js_model_t *m)
{
    for (int k = 0; k < 2; k++) {
        const js_table_t *t = NULL;
        for (size_t i = 0; (t = model_view_table(m, i)); i++)
            if (!strcmp(t->name, level_view_of[k]))
                break;
        if (!t)
            continue;
        js_column_t *c = calloc(t->ncols + 1, sizeof(*c));
        if (!c)
            return -ENOMEM;
        c[0] = (js_column_t){"level",
                             "text",
                             JS_TEXT,
                             JS_LABEL,
                             0,
                             "the level: user (the user's processes), job "
                             "(the batch job's, on this node)"};
        memcpy(c + 1, t->cols, t->ncols * sizeof(*c));
        p->vcols[k] = c;
        p->vt[k] =
            (js_table_t){view_names[k],
                         k == 0 ? "the embedded monitor's levels: one row per level and sample (as `tree`)"
                                : "per level and phase, cumulative figures so far (as `phases`)",
                         t->ncols + 1, c};
        p->src_view[k] = t;
    }
    return 0;
}

/* start_levels: at the first sample, a model per level its inventory describes. */
static int start_levels(levels_t *p, const js_sample_t *s)
{
    const js_rows_t *inv = sample_rows(s, &table_inventory);
    char key[64];
    for (int i = 0; i < JS_LV_MAX; i++) {
        snprintf(key, sizeof(key), "%s.scope_kind", level_names[i]);
        const char *kind = inv_get(inv, key);
        if (!kind)
            continue;
        level_t *l = &p->lv[i];
        js_model_cfg_t c = p->cfg;
        c.mode = JS_MODE_WATCH;
        c.root_pid = 0; /* as the levels source's instances: no root process */
        c.scope = !strcmp(kind, "user")     ? JS_SCOPE_USER
                  : !strcmp(kind, "cgroup") ? JS_SCOPE_CGROUP
                                            : JS_SCOPE_TREE;
        snprintf(key, sizeof(key), "%s.stepd_job", level_names[i]);
        c.stepd_roots = c.scope == JS_SCOPE_TREE && inv_get(inv, key);
        snprintf(key, sizeof(key), "%s.monitor_inside", level_names[i]);
        const char *inside = inv_get(inv, key);
        c.embedded = p->cfg.embedded && inside && !strcmp(inside, "1"); /* the monitor thread is a member */
        c.level = true;
        snprintf(key, sizeof(key), "%s.what", level_names[i]);
        const char *what = inv_get(inv, key);
        snprintf(l->what, sizeof(l->what), "%s", what ? what : kind);
        if (!(l->m = model_new(&c)))
            return -ENOMEM;
        l->s.ntables = s->ntables;
        l->s.tables = s->tables;
        if (!(l->s.rows = calloc(s->ntables, sizeof(*l->s.rows))))
            return -ENOMEM;
        for (int k = 0; k < S__MAX; k++) { /* the layout of every sample of the run is the first one's */
            l->dst[k] = sample_table_index(s, scope_tables[k]);
            l->src[k] = twins[i][k] ? sample_table_index(s, twins[i][k]) : -1;
            if (l->dst[k] >= 0)
                rows_init(&l->empty[k], s->tables[l->dst[k]]);
        }
        p->nlevels++;
    }
    return 0;
}

static int levels_feed(void *state, const js_feed_t *f)
{
    levels_t *p = state;
    int r;
    if (!p->decided) {
        p->decided = true;
        if ((r = start_levels(p, f->s)) < 0)
            return r;
    }
    for (int i = 0; i < JS_LV_MAX; i++) {
        level_t *l = &p->lv[i];
        if (!l->m)
            continue;
        memcpy(l->s.rows, f->s->rows, f->s->ntables * sizeof(*l->s.rows));
        for (int k = 0; k < S__MAX; k++)
            if (l->dst[k] >= 0)
                l->s.rows[l->dst[k]] = l->src[k] >= 0 ? f->s->rows[l->src[k]] : l->empty[k];
        if ((r = model_feed(l->m, f->seq, &l->s)) < 0)
            return r;
    }
    return 0;
}

static const js_table_t *levels_view_table(void *state, size_t i)
{
    levels_t *p = state;
    if (i < 2 && !p->src_view[0]) {
        /* the views' columns are a level model's: a level's own, else one made for the purpose (only when a
         * view is asked for), so the views are listed, and exportable empty, whether or not there are levels
         */
        js_model_t *m = NULL;
        for (int k = 0; k < JS_LV_MAX && !m; k++)
            m = p->lv[k].m;
        js_model_cfg_t c = p->cfg;
        c.level = true;
        js_model_t *tmp = m ? NULL : model_new(&c);
        if (m || tmp)
            make_views(p, m ? m : tmp);
        model_free(tmp);
    }
    return i < 2 && p->src_view[i] ? &p->vt[i] : NULL;
}

/* copy_value: value v of view row `src` (of buffer `from`) into `dst` of buffer `to`. */
static int copy_value(js_rows_t *to, js_value_t *dst, const js_rows_t *from, const js_value_t *v,
                      js_type_t type)
{
    if (!v->present)
        return 0;
    if (type == JS_TEXT) {
        const char *s = rows_str(from, v);
        return rows_set_str(to, dst, s, strlen(s));
    }
    *dst = *v;
    return 0;
}

static int levels_view_fill(void *state, size_t k, js_rows_t *out)
{
    levels_t *p = state;
    for (int i = 0; i < JS_LV_MAX; i++) {
        level_t *l = &p->lv[i];
        js_view_t v;
        if (!l->m || model_view(l->m, level_view_of[k], &v) < 0)
            continue;
        for (size_t r = 0; r < v.rows->nrows; r++) {
            const js_value_t *src = rows_row(v.rows, r);
            js_value_t *dst = rows_add(out);
            if (!dst || rows_set_str(out, &dst[0], level_names[i], strlen(level_names[i])) < 0)
                return -ENOMEM;
            for (size_t c = 0; c < v.table->ncols && c + 1 < out->table->ncols; c++)
                if (copy_value(out, &dst[c + 1], v.rows, &src[c], v.table->cols[c].type) < 0)
                    return -ENOMEM;
        }
    }
    return 0;
}

/* num_or_null: a figure, or null when it is missing */
/* levels_summary: per level, its scope and the headline figures of its own model (the run's keys where the
 * figure is the same: cpu.total_s, memory.peak_bytes, io.read_bytes ...) */
static void levels_summary(void *state, js_figure_t *r)
{
    levels_t *p = state;
    if (!p->nlevels)
        return;
    fig_put_object(r, "levels");
    for (int i = 0; i < JS_LV_MAX; i++) {
        const level_t *l = &p->lv[i];
        if (!l->m)
            continue;
        js_summary_t su;
        model_summary(l->m, &su);
        js_figure_t *g = fig_name(r, "levels", level_names[i]);
        fig_put_text(g, "{}.scope", l->what);
        fig_put_num(g, "{}.wall_time_s", "s", su.wall_s);
        fig_exact(fig_put_num(g, "{}.cpu.total_s", "s", su.total_s), su.exact_cpu);
        fig_put_num(g, "{}.cpu.user_s", "s", su.user_s);
        fig_put_num(g, "{}.cpu.system_s", "s", su.system_s);
        fig_put_num(g, "{}.cpu.mean_cores", "cores", su.mean_cores);
        fig_put_num(g, "{}.cpu.max_cores", "cores", su.max_cores);
        fig_put_bool(g, "{}.cpu.exact", su.exact_cpu);
        if (su.cpu_from_cgroup)
            fig_put_text(g, "{}.cpu.from", su.cpu_file);
        if (su.inexact_cpu_reason)
            fig_put_text(g, "{}.cpu.inexact_reason", su.inexact_cpu_reason);
        /* the headline, as the run's memory.peak_bytes */
        js_figure_t *peak =
            fig_exact(fig_put_num(g, "{}.memory.peak_bytes", "bytes", su.peak_bytes), su.peak_exact);
        if (su.peak_method)
            fig_how(peak, "peak_method", su.peak_method);
        fig_put_num(g, "{}.memory.peak_pss_bytes", "bytes", su.peak_pss);
        fig_put_num(g, "{}.memory.peak_private_bytes", "bytes", su.peak_private);
        fig_put_num(g, "{}.memory.peak_rss_sum_bytes", "bytes", su.peak_rss_sum);
        fig_put_num(g, "{}.memory.peak_rss_kernel_bytes", "bytes", su.peak_rss_kernel);
        fig_put_num(g, "{}.memory.peak_cgroup_bytes", "bytes", su.peak_kernel_tree);
        fig_put_num(g, "{}.io.read_bytes", "bytes", su.io[IO_READ]);
        fig_put_num(g, "{}.io.write_bytes", "bytes", su.io[IO_WRITE]);
        fig_put_num(g, "{}.io.read_syscalls", "count", su.io[IO_SYSCR]);
        fig_put_num(g, "{}.io.write_syscalls", "count", su.io[IO_SYSCW]);
        fig_put_int(g, "{}.processes.total", "count", su.procs_total);
        fig_put_int(g, "{}.processes.max", "count", su.procs_max);
    }
}

static int levels_summary_text(const js_figure_t *r, js_buf_t *b)
{
    int err = 0;
    const js_figure_t *levels = fig_get(r, "levels");
    for (size_t i = 0; i < fig_count(levels); i++) {
        const js_figure_t *l = fig_kid(levels, i);
        char label[32];
        snprintf(label, sizeof(label), "level %s", l->name);
        char peak[32] = "n/a";
        double bytes = fig_num(l, "memory.peak_bytes");
        if (!isnan(bytes))
            snprintf(peak, sizeof(peak), "%.0f MiB", bytes / 1048576.0);
        const char *what = fig_text(l, "scope");
        err |= buf_printf(b, "  %-17s %.2f s CPU (%s), mean %.2f cores, peak memory %s; %s\n", label,
                          fig_num(l, "cpu.total_s"), fig_bool(l, "cpu.exact") == 1 ? "exact" : "sampled",
                          fig_num(l, "cpu.mean_cores"), peak, what ? what : "(null)");
    }
    return err ? -ENOMEM : 0;
}

const js_model_part_t part_levels = {
    .name = "levels",
    .init = levels_init,
    .feed = levels_feed,
    .view_table = levels_view_table,
    .view_fill = levels_view_fill,
    .summary = levels_summary,
    .summary_text = levels_summary_text,
    .fini = levels_fini,
};
