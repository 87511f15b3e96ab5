/* SPDX-License-Identifier: MIT
 *
 * The `node` model part: CPU frequencies (the `cpufreq` source) and temperatures (the `thermal` source).
 * Frequencies: per CPU the mean, least and largest of its readings, and over all CPUs the mean of the
 * readings, the least and the largest; the summary names where they came from (scaling_cur_freq, or cpuinfo,
 * which on a virtual machine is the nominal clock), as the inventory recorded it. Temperatures: per sensor
 * the largest and the mean reading, and the hottest sensor. Both are levels (gauges): no deltas. Missing
 * readings (a CPU offline, a zone that did not answer) are left out, never counted as 0.
 *
 * Views: `cpufreq` (a row per CPU) and `thermal` (a row per sensor). Summary: `cpufreq` and `thermal`
 * sections when the recording has readings.
 */
#include "model/figure.h"
#include "model/model.h"
#include "core/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double sum, min, max, last; /* last: NAN when this sample had no reading */
    int64_t n;
} stat_t;

static void stat_init(stat_t *s)
{
    s->sum = 0;
    s->min = s->max = s->last = NAN;
    s->n = 0;
}

static void stat_add(stat_t *s, double v)
{
    s->last = v;
    if (isnan(v))
        return;
    s->sum += v;
    s->n++;
    if (isnan(s->min) || v < s->min)
        s->min = v;
    if (isnan(s->max) || v > s->max)
        s->max = v;
}

static double stat_mean(const stat_t *s)
{
    return s->n ? s->sum / (double)s->n : NAN;
}

typedef struct {
    int64_t cpu;
    stat_t mhz;
    bool seen_now;
} fcpu_t;

typedef struct {
    char *sensor, *chip, *label; /* label may be NULL */
    stat_t c;
    bool seen_now;
} tsensor_t;

typedef struct {
    bool resolved_f, resolved_t;
    int f_cpu, f_khz;
    int t_sensor, t_chip, t_label, t_mc;
    fcpu_t *f;
    size_t nf, fcap;
    stat_t all; /* every reading of every CPU */
    char freq_source[32];
    tsensor_t *t;
    size_t nt, tcap;
} node_t;

static fcpu_t *cpu_get(node_t *n, int64_t cpu, size_t hint)
{
    if (hint < n->nf && n->f[hint].cpu == cpu)
        return &n->f[hint];
    for (size_t i = 0; i < n->nf; i++)
        if (n->f[i].cpu == cpu)
            return &n->f[i];
    if (array_grow((void **)&n->f, n->nf, &n->fcap, sizeof(*n->f)) < 0)
        return NULL;
    fcpu_t *c = &n->f[n->nf++];
    c->cpu = cpu;
    stat_init(&c->mhz);
    return c;
}

static tsensor_t *sensor_get(node_t *n, const char *sensor, const char *chip, const char *label, size_t hint)
{
    if (hint < n->nt && !strcmp(n->t[hint].sensor, sensor))
        return &n->t[hint];
    for (size_t i = 0; i < n->nt; i++)
        if (!strcmp(n->t[i].sensor, sensor))
            return &n->t[i];
    if (array_grow((void **)&n->t, n->nt, &n->tcap, sizeof(*n->t)) < 0)
        return NULL;
    tsensor_t *s = &n->t[n->nt];
    memset(s, 0, sizeof(*s));
    s->sensor = strdup(sensor);
    s->chip = strdup(chip ? chip : "");
    s->label = label ? strdup(label) : NULL;
    if (!s->sensor || !s->chip || (label && !s->label)) {
        free(s->sensor);
        free(s->chip);
        free(s->label);
        return NULL;
    }
    stat_init(&s->c);
    n->nt++;
    return s;
}

/* inventory_source: the cpufreq source's `source` row of the inventory, when this sample has it. */
static void inventory_source(node_t *n, const js_sample_t *s)
{
    const js_rows_t *inv = sample_rows(s, &table_inventory);
    for (size_t i = 0; inv && i < inv->nrows; i++) {
        const js_value_t *v = rows_row(inv, i);
        if (v[INV_SOURCE].present && v[INV_KEY].present && v[INV_VALUE].present &&
            !strcmp(rows_str(inv, &v[INV_SOURCE]), "cpufreq") &&
            !strcmp(rows_str(inv, &v[INV_KEY]), "source"))
            snprintf(n->freq_source, sizeof(n->freq_source), "%s", rows_str(inv, &v[INV_VALUE]));
    }
}

static int node_feed(void *state, const js_feed_t *f)
{
    node_t *n = state;
    inventory_source(n, f->s);
    const js_rows_t *r = sample_rows_named(f->s, "cpufreq");
    if (r && r->nrows && !n->resolved_f) {
        n->f_cpu = table_column(r->table, "cpu");
        n->f_khz = table_column(r->table, "cur_freq_khz");
        n->resolved_f = true;
    }
    for (size_t i = 0; i < n->nf; i++) {
        n->f[i].seen_now = false;
        n->f[i].mhz.last = NAN;
    }
    for (size_t i = 0; r && n->resolved_f && n->f_cpu >= 0 && i < r->nrows; i++) {
        const js_value_t *row = rows_row(r, i);
        if (!row[n->f_cpu].present)
            continue;
        fcpu_t *c = cpu_get(n, row[n->f_cpu].i, i);
        if (!c)
            return -ENOMEM;
        c->seen_now = true;
        double mhz = n->f_khz >= 0 && row[n->f_khz].present ? (double)row[n->f_khz].i / 1e3 : NAN;
        stat_add(&c->mhz, mhz);
        if (!isnan(mhz))
            stat_add(&n->all, mhz);
    }

    r = sample_rows_named(f->s, "thermal");
    if (r && r->nrows && !n->resolved_t) {
        n->t_sensor = table_column(r->table, "sensor");
        n->t_chip = table_column(r->table, "chip");
        n->t_label = table_column(r->table, "label");
        n->t_mc = table_column(r->table, "temp_millicelsius");
        n->resolved_t = true;
    }
    for (size_t i = 0; i < n->nt; i++) {
        n->t[i].seen_now = false;
        n->t[i].c.last = NAN;
    }
    for (size_t i = 0; r && n->resolved_t && i < r->nrows; i++) {
        const js_value_t *row = rows_row(r, i);
        const char *sensor = rows_text(r, row, n->t_sensor, NULL);
        if (!sensor)
            continue;
        tsensor_t *s =
            sensor_get(n, sensor, rows_text(r, row, n->t_chip, NULL), rows_text(r, row, n->t_label, NULL), i);
        if (!s)
            return -ENOMEM;
        s->seen_now = true;
        stat_add(&s->c, n->t_mc >= 0 && row[n->t_mc].present ? (double)row[n->t_mc].i / 1e3 : NAN);
    }
    return 0;
}

/* ---- views ---------------------------------------------------------------------------------------- */

enum { FV_CPU, FV_MHZ, FV__MAX };
static const js_column_t freq_view_cols[FV__MAX] = {
    [FV_CPU] = {"cpu", "id", JS_INT, JS_LABEL, 0, "CPU number"},
    [FV_MHZ] = {"freq_mhz", "MHz", JS_REAL, JS_GAUGE, 0, "current frequency"},
};
static const js_table_t freq_view = {"cpufreq", "frequency of each CPU, one row per CPU and sample", FV__MAX,
                                     freq_view_cols};

enum { TV_SENSOR, TV_CHIP, TV_LABEL, TV_CELSIUS, TV__MAX };
static const js_column_t temp_view_cols[TV__MAX] = {
    [TV_SENSOR] = {"sensor", "text", JS_TEXT, JS_LABEL, 0, "hwmonN/tempK or thermal_zoneN"},
    [TV_CHIP] = {"chip", "text", JS_TEXT, JS_LABEL, 0, "hwmon chip name, or thermal zone type"},
    [TV_LABEL] = {"label", "text", JS_TEXT, JS_LABEL, 0, "the sensor's label, where it has one"},
    [TV_CELSIUS] = {"temp_celsius", "celsius", JS_REAL, JS_GAUGE, 0, "temperature"},
};
static const js_table_t temp_view = {"thermal", "temperatures, one row per sensor and sample", TV__MAX,
                                     temp_view_cols};

static const js_table_t *node_view_table(void *state, size_t i)
{
    (void)state;
    return i == 0 ? &freq_view : i == 1 ? &temp_view : NULL;
}

static int node_view_fill(void *state, size_t i, js_rows_t *out)
{
    node_t *n = state;
    if (i == 0) {
        for (size_t k = 0; k < n->nf; k++) {
            if (!n->f[k].seen_now)
                continue;
            js_value_t *v = rows_add(out);
            if (!v)
                return -ENOMEM;
            val_int(&v[FV_CPU], n->f[k].cpu);
            if (!isnan(n->f[k].mhz.last))
                val_real(&v[FV_MHZ], n->f[k].mhz.last);
        }
        return 0;
    }
    for (size_t k = 0; k < n->nt; k++) {
        const tsensor_t *s = &n->t[k];
        if (!s->seen_now)
            continue;
        js_value_t *v = rows_add(out);
        if (!v || rows_set_str(out, &v[TV_SENSOR], s->sensor, strlen(s->sensor)) < 0 ||
            rows_set_str(out, &v[TV_CHIP], s->chip, strlen(s->chip)) < 0 ||
            (s->label && rows_set_str(out, &v[TV_LABEL], s->label, strlen(s->label)) < 0))
            return -ENOMEM;
        if (!isnan(s->c.last))
            val_real(&v[TV_CELSIUS], s->c.last);
    }
    return 0;
}

/* ---- summary -------------------------------------------------------------------------------------- */

static const tsensor_t *hottest(const node_t *n)
{
    const tsensor_t *h = NULL;
    for (size_t i = 0; i < n->nt; i++)
        if (n->t[i].c.n && (!h || n->t[i].c.max > h->c.max))
            h = &n->t[i];
    return h;
}

static void node_summary(void *state, js_figure_t *r)
{
    node_t *n = state;
    if (n->all.n) {
        fig_put_text(r, "cpufreq.source", n->freq_source[0] ? n->freq_source : NULL);
        fig_put_int(r, "cpufreq.cpus", "count", (int64_t)n->nf);
        fig_put_num(r, "cpufreq.mean_mhz", "MHz", stat_mean(&n->all));
        fig_put_num(r, "cpufreq.min_mhz", "MHz", n->all.min);
        fig_put_num(r, "cpufreq.max_mhz", "MHz", n->all.max);
        fig_put_array(r, "cpufreq.per_cpu");
        for (size_t i = 0; i < n->nf; i++) {
            fig_put_elem(r, "cpufreq.per_cpu");
            fig_put_int(r, "cpufreq.per_cpu[].cpu", NULL, n->f[i].cpu);
            fig_put_num(r, "cpufreq.per_cpu[].mean_mhz", "MHz", stat_mean(&n->f[i].mhz));
            fig_put_num(r, "cpufreq.per_cpu[].min_mhz", "MHz", n->f[i].mhz.min);
            fig_put_num(r, "cpufreq.per_cpu[].max_mhz", "MHz", n->f[i].mhz.max);
        }
    }
    const tsensor_t *h = hottest(n);
    if (h) {
        fig_put_num(r, "thermal.max_celsius", "celsius", h->c.max);
        fig_put_text(r, "thermal.max_sensor", h->sensor);
        fig_put_array(r, "thermal.sensors");
        for (size_t i = 0; i < n->nt; i++) {
            const tsensor_t *s = &n->t[i];
            fig_put_elem(r, "thermal.sensors");
            fig_put_text(r, "thermal.sensors[].sensor", s->sensor);
            fig_put_text(r, "thermal.sensors[].chip", s->chip);
            fig_put_text(r, "thermal.sensors[].label", s->label);
            fig_put_num(r, "thermal.sensors[].max_celsius", "celsius", s->c.max);
            fig_put_num(r, "thermal.sensors[].mean_celsius", "celsius", stat_mean(&s->c));
            fig_put_int(r, "thermal.sensors[].readings", "count", s->c.n);
        }
    }
}

static int node_summary_text(const js_figure_t *r, js_buf_t *b)
{
    int err = 0;
    if (fig_get(r, "cpufreq.mean_mhz")) {
        const char *src = fig_text(r, "cpufreq.source");
        err |= buf_printf(b, "  cpu frequency    mean %.0f MHz, min %.0f, max %.0f over %lld CPUs [%s]\n",
                          fig_num(r, "cpufreq.mean_mhz"), fig_num(r, "cpufreq.min_mhz"),
                          fig_num(r, "cpufreq.max_mhz"), (long long)fig_int(r, "cpufreq.cpus", 0),
                          src ? src : "?");
    }
    /* the hottest sensor: the first with the largest maximum (thermal.max_sensor) */
    const js_figure_t *sensors = fig_get(r, "thermal.sensors"), *h = NULL;
    const char *hottest_name = fig_text(r, "thermal.max_sensor");
    for (size_t i = 0; hottest_name && i < fig_count(sensors) && !h; i++) {
        const char *name = fig_text(fig_kid(sensors, i), "sensor");
        if (name && strcmp(name, hottest_name) == 0)
            h = fig_kid(sensors, i);
    }
    if (h) {
        const char *chip = fig_text(h, "chip"), *label = fig_text(h, "label");
        err |= buf_printf(b, "  temperature      max %.1f C (%s%s%s, %s) over %zu sensors\n",
                          fig_num(r, "thermal.max_celsius"), chip ? chip : "(null)", label ? " " : "",
                          label ? label : "", hottest_name, fig_count(sensors));
    }
    return err ? -ENOMEM : 0;
}

/* ---- life ------------------------------------------------------------------------------------------ */

static int node_init(const js_model_cfg_t *cfg, void **ret_state)
{
    (void)cfg;
    node_t *n = calloc(1, sizeof(*n));
    if (!n)
        return -ENOMEM;
    stat_init(&n->all);
    *ret_state = n;
    return 0;
}

static void node_fini(void *state)
{
    node_t *n = state;
    if (!n)
        return;
    for (size_t i = 0; i < n->nt; i++) {
        free(n->t[i].sensor);
        free(n->t[i].chip);
        free(n->t[i].label);
    }
    free(n->t);
    free(n->f);
    free(n);
}

const js_model_part_t part_node = {
    .name = "node",
    .init = node_init,
    .feed = node_feed,
    .view_table = node_view_table,
    .view_fill = node_view_fill,
    .summary = node_summary,
    .summary_text = node_summary_text,
    .fini = node_fini,
};
