/* SPDX-License-Identifier: MIT
 *
 * The Prometheus exposition (prometheus.h): family names and unit conversion derived from column descriptors,
 * label and HELP escaping for both formats, the monitor's own series, and content negotiation.
 */
#include "sinks/prometheus.h"

#include "core/json.h"
#include "core/source.h"
#include "model/model.h"
#include "core/util.h"
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const prom_content_type[PROM_FORMAT_MAX] = {
    [PROM_TEXT] = "text/plain; version=0.0.4; charset=utf-8",
    [PROM_OPENMETRICS] = "application/openmetrics-text; version=1.0.0; charset=utf-8",
};

/* ---- names ------------------------------------------------------------------------------------------- */

/* Descriptor units and the base unit they are exposed in. scale 0: clock ticks (sysconf), -1: pages. A column
 * name ending in one of `strip` loses it before the base unit's suffix is added. */
static const struct {
    const char *unit, *suffix;
    double scale;
    const char *strip[3];
} units[] = {
    {"s", "seconds", 1, {"_s", "_seconds", "_sec"}},
    {"ms", "seconds", 1e-3, {"_ms"}},
    {"us", "seconds", 1e-6, {"_us"}},
    {"ns", "seconds", 1e-9, {"_ns"}},
    {"ticks", "seconds", 0, {"_ticks"}},
    {"bytes", "bytes", 1, {"_bytes"}},
    {"kB", "bytes", 1024, {"_kb", "_kib"}},
    {"pages", "bytes", -1, {"_pages"}},
    {"bytes/s", "bytes_per_second", 1, {"_bytes_per_s", "_per_s", "_bps"}},
    {"1/s", "per_second", 1, {"_per_s"}},
    {"fraction", "ratio", 1, {"_fraction", "_ratio"}},
    {"percent", "ratio", 0.01, {"_percent", "_pct"}},
    {"J", "joules", 1, {"_j", "_joules"}},
    {"mJ", "joules", 1e-3, {"_mj"}},
    {"uJ", "joules", 1e-6, {"_uj"}},
    {"W", "watts", 1, {"_w", "_watts"}},
    {"mW", "watts", 1e-3, {"_mw"}},
    {"celsius", "celsius", 1, {"_celsius"}},
    {"millicelsius", "celsius", 1e-3, {"_millicelsius"}},
    {"Hz", "hertz", 1, {"_hz"}},
    {"kHz", "hertz", 1e3, {"_khz"}},
    {"MHz", "hertz", 1e6, {"_mhz"}},
    {"cores", "cores", 1, {"_cores"}},
    {"events", "", 1, {"_count"}}, /* `_count` is reserved for summaries and histograms */
    {"count", "", 1, {"_count"}},
};

/* The few columns whose generated name is not the one to expose: the conventional names (CPU time
 * split by mode, as node_exporter does; the scope's memory headline and RSS sum as memory), and columns not
 * worth a series (the sum of the mode split, per-sample noise, identity that only churns). family NULL = not
 * exposed. */
static const struct {
    const char *table, *column, *family, *lname, *lvalue, *help;
} overrides[] = {
    {"tree", "cpu_s", NULL, NULL, NULL, NULL}, /* = the sum over jobscope_cpu_seconds_total's modes */
    {"tree", "user_s", "cpu_seconds", "mode", "user",
     "CPU time of the scope since the start, by mode (exact in run mode)"},
    {"tree", "system_s", "cpu_seconds", "mode", "system",
     "CPU time of the scope since the start, by mode (exact in run mode)"},
    {"tree", "memory_bytes", "memory_bytes", NULL, NULL,
     "the scope's memory, no page counted twice: its own cgroup's memory.current where it has one, else "
     "the PSS sum of its processes (the summary's memory.peak_bytes is its peak)"},
    {"tree", "rss_sum_bytes", "memory_rss_sum_bytes", NULL, NULL, NULL},
    {"tree", "dt_s", NULL, NULL, NULL, NULL}, /* the interval: jobscope_sample_interval_seconds */
    {"self", "utime_us", "monitor_cpu_seconds", "mode", "user", "the monitor's own CPU time, by mode"},
    {"self", "stime_us", "monitor_cpu_seconds", "mode", "system", "the monitor's own CPU time, by mode"},
    {"self", "prev_write_ns", "monitor_write_seconds", NULL, NULL,
     "time the previous sample's recording write took"},
    {"process", "state", NULL, NULL, NULL, NULL},       /* R/S flips every sample: a label would churn */
    {"process", "start_ticks", NULL, NULL, NULL, NULL}, /* identity with pid; a label would only add churn */
};

/* Wide views hold one column per device (`system`: cpu3_util_fraction, net_eth0_rx_bytes_per_s); the
 * device becomes a label and the columns one family. `digits`: the device is the digits after the prefix;
 * otherwise it runs up to the last `_<tail>` of `tails`. */
static const struct {
    const char *prefix, *family_prefix, *label;
    bool digits;
    const char *tails[4];
} splits[] = {
    {"cpu", "percpu_", "cpu", true, {NULL}},
    {"net_", "net_", "device", false, {"_rx_", "_tx_"}},
    {"disk_", "disk_", "device", false, {"_read_", "_write_"}},
};

static bool ends_with(const char *s, size_t n, const char *suf)
{
    size_t k = strlen(suf);
    return n >= k && memcmp(s + n - k, suf, k) == 0;
}

/* sanitize: append `s` (n bytes) to dst as metric-name characters ([a-zA-Z0-9_]; others become '_'). */
static size_t sanitize(char *dst, size_t at, size_t cap, const char *s, size_t n)
{
    for (size_t i = 0; i < n && at + 1 < cap; i++) {
        char c = s[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        dst[at++] = ok ? c : '_';
    }
    dst[at] = '\0';
    return at;
}

static size_t put(char *dst, size_t at, size_t cap, const char *s)
{
    return sanitize(dst, at, cap, s, strlen(s));
}

/* split_column: a wide column's device label; on success *ret_stem_off/len give the rest of the name. */
static bool split_column(const char *name, prom_family_t *f, const char **ret_fp, const char **ret_rest)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof(splits) / sizeof(splits[0]); i++) {
        size_t k = strlen(splits[i].prefix);
        if (n <= k || strncmp(name, splits[i].prefix, k) != 0)
            continue;
        const char *dev = name + k, *end = NULL;
        if (splits[i].digits) {
            end = dev;
            while (*end >= '0' && *end <= '9')
                end++;
            if (end == dev || *end != '_')
                continue;
        } else {
            for (size_t t = 0; splits[i].tails[t]; t++) {
                for (const char *p = strstr(dev, splits[i].tails[t]); p;
                     p = strstr(p + 1, splits[i].tails[t]))
                    if (!end || p > end)
                        end = p;
            }
            if (!end || end == dev)
                continue;
        }
        size_t dl = (size_t)(end - dev);
        if (dl >= sizeof(f->lvalue))
            continue;
        memcpy(f->lvalue, dev, dl);
        f->lvalue[dl] = '\0';
        f->lname = splits[i].label;
        *ret_fp = splits[i].family_prefix;
        *ret_rest = end + 1;
        return true;
    }
    return false;
}

void prom_family(const char *prefix, const js_table_t *t, size_t c, prom_family_t *f)
{
    const js_column_t *col = &t->cols[c];
    memset(f, 0, sizeof(*f));
    f->help = col->help;
    f->counter = col->kind == JS_COUNTER;
    f->scale = 1;
    if (col->type == JS_TEXT || col->kind == JS_LABEL) {
        f->skip = true;
        return;
    }
    size_t at = put(f->name, 0, sizeof(f->name), "jobscope_");
    for (size_t i = 0; i < sizeof(overrides) / sizeof(overrides[0]); i++) {
        if (strcmp(overrides[i].table, t->name) != 0 || strcmp(overrides[i].column, col->name) != 0)
            continue;
        if (!overrides[i].family) {
            f->skip = true;
            return;
        }
        put(f->name, at, sizeof(f->name), overrides[i].family);
        if (overrides[i].lname) {
            f->lname = overrides[i].lname;
            snprintf(f->lvalue, sizeof(f->lvalue), "%s", overrides[i].lvalue);
        }
        if (overrides[i].help)
            f->help = overrides[i].help;
        /* the unit of an overridden name is its own suffix; the scale follows the descriptor */
        for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++)
            if (strcmp(units[u].unit, col->unit) == 0) {
                f->scale = units[u].scale;
                if (*units[u].suffix && ends_with(f->name, strlen(f->name), units[u].suffix))
                    f->unit = units[u].suffix;
            }
        goto scale;
    }
    if (prefix && *prefix) {
        at = put(f->name, at, sizeof(f->name), prefix);
        at = put(f->name, at, sizeof(f->name), "_");
    }
    const char *stem = col->name, *fp = NULL;
    if (split_column(col->name, f, &fp, &stem))
        at = put(f->name, at, sizeof(f->name), fp);
    else if (prefix && *prefix) {
        /* energy view + energy_j: jobscope_energy_joules_total, not jobscope_energy_energy_... */
        size_t pl = strlen(prefix);
        if (strncmp(stem, prefix, pl) == 0 && stem[pl] == '_' && at > pl + 1) {
            at -= pl + 1;
            f->name[at] = '\0';
        }
    }
    size_t sl = strlen(stem);
    const char *suffix = "";
    for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
        if (strcmp(units[u].unit, col->unit) != 0)
            continue;
        suffix = units[u].suffix;
        f->scale = units[u].scale;
        for (size_t k = 0; k < 3 && units[u].strip[k]; k++)
            if (ends_with(stem, sl, units[u].strip[k]) && sl > strlen(units[u].strip[k])) {
                sl -= strlen(units[u].strip[k]);
                break;
            }
        break;
    }
    at = sanitize(f->name, at, sizeof(f->name), stem, sl);
    if (*suffix) {
        at = put(f->name, at, sizeof(f->name), "_");
        put(f->name, at, sizeof(f->name), suffix);
        f->unit = suffix;
    }
    /* a counter's samples end in _total: its family name must not already */
    if (f->counter && ends_with(f->name, strlen(f->name), "_total"))
        f->name[strlen(f->name) - 6] = '\0';
scale:
    if (f->scale == 0) {
        long tck = sysconf(_SC_CLK_TCK);
        f->scale = 1.0 / (double)(tck > 0 ? tck : 100);
    } else if (f->scale < 0) {
        long pg = sysconf(_SC_PAGESIZE);
        f->scale = (double)(pg > 0 ? pg : 4096);
    }
}

/* ---- writing ----------------------------------------------------------------------------------------- */

/* put_escaped: a label value or HELP text; invalid UTF-8 becomes U+FFFD (Prometheus rejects it). In label
 * values and OpenMetrics HELP `"` is escaped too; the text format's HELP knows only \\ and \n. */
static int put_escaped(js_buf_t *b, const char *s, size_t n, bool quote)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, run = 0;
    int err = 0;
    while (i < n && !err) {
        unsigned char c = u[i];
        const char *rep = NULL;
        size_t adv = 1;
        if (c == '\\')
            rep = "\\\\";
        else if (c == '\n')
            rep = "\\n";
        else if (c == '"' && quote)
            rep = "\\\"";
        else if (c >= 0x80) {
            adv = utf8_len(u + i, n - i);
            if (!adv) {
                rep = "\xef\xbf\xbd";
                adv = 1;
            }
        } else if (c == 0)
            rep = "\xef\xbf\xbd";
        if (rep) {
            err |= buf_append(b, s + i - run, run);
            err |= buf_append(b, rep, strlen(rep));
            run = 0;
        } else {
            run += adv;
        }
        i += adv;
    }
    if (!err && run)
        err = buf_append(b, s + n - run, run);
    return err ? -ENOMEM : 0;
}

/* put_number: a value Prometheus parses; integral values as integers, others with 15 significant digits. */
static int put_number(js_buf_t *b, double d)
{
    char num[40];
    if (isinf(d))
        snprintf(num, sizeof(num), d > 0 ? "+Inf" : "-Inf");
    else if (d > -9007199254740992.0 && d < 9007199254740992.0 && d == (double)(int64_t)d)
        snprintf(num, sizeof(num), "%lld", (long long)d);
    else
        snprintf(num, sizeof(num), "%.15g", d);
    return buf_append(b, num, strlen(num));
}

static int put_header(js_buf_t *b, prom_format_t fmt, const prom_family_t *f)
{
    const char *total = f->counter && fmt == PROM_TEXT ? "_total" : "";
    int err = buf_printf(b, "# HELP %s%s ", f->name, total);
    const char *help = f->help && *f->help ? f->help : "(no description)";
    err |= put_escaped(b, help, strlen(help), fmt == PROM_OPENMETRICS);
    err |= buf_printf(b, "\n# TYPE %s%s %s\n", f->name, total, f->counter ? "counter" : "gauge");
    /* OpenMetrics: a family's unit must be the suffix of its name (a parse error otherwise) */
    size_t nl = strlen(f->name), ul = f->unit ? strlen(f->unit) : 0;
    if (fmt == PROM_OPENMETRICS && ul && nl > ul + 1 && f->name[nl - ul - 1] == '_' &&
        strcmp(f->name + nl - ul, f->unit) == 0)
        err |= buf_printf(b, "# UNIT %s %s\n", f->name, f->unit);
    return err ? -ENOMEM : 0;
}

/* A label list in construction ("a=\"x\",b=\"y\"", no braces). */
typedef struct {
    js_buf_t *b;
    bool first;
    int err;
} lw_t;

static void label(lw_t *w, const char *name, const char *value, size_t vlen)
{
    if (!w->first)
        w->err |= buf_append(w->b, ",", 1);
    w->first = false;
    char n[96];
    size_t at = put(n, 0, sizeof(n), name);
    if (at && n[0] >= '0' && n[0] <= '9')
        n[0] = '_';
    w->err |= buf_append(w->b, n, at);
    w->err |= buf_append(w->b, "=\"", 2);
    w->err |= put_escaped(w->b, value, vlen, true);
    w->err |= buf_append(w->b, "\"", 1);
}

/* overridden_away: a column the overrides remove (no series, and no label either). */
static bool overridden_away(const js_table_t *t, const js_column_t *col)
{
    for (size_t o = 0; o < sizeof(overrides) / sizeof(overrides[0]); o++)
        if (!overrides[o].family && !strcmp(overrides[o].table, t->name) &&
            !strcmp(overrides[o].column, col->name))
            return true;
    return false;
}

static bool is_label_col(const js_table_t *t, const js_column_t *c)
{
    return (c->kind == JS_LABEL || c->type == JS_TEXT) && strcmp(c->unit, "json") != 0 &&
           !overridden_away(t, c);
}

/* cfg_labels: the config's labels, less those the table has a column of the same name for. */
static void cfg_labels(lw_t *w, const prom_cfg_t *cfg, const js_table_t *t)
{
    for (size_t i = 0; cfg && i < cfg->nlabels; i++)
        if (cfg->labels[i].value && !(t && table_column(t, cfg->labels[i].name) >= 0))
            label(w, cfg->labels[i].name, cfg->labels[i].value, strlen(cfg->labels[i].value));
}

/* row_labels: the table's label columns of one row (a missing one with an empty value, so every series of a
 * family has the same label names); `lcols` lists them. */
static void row_labels(lw_t *w, const js_table_t *t, const js_rows_t *rows, const js_value_t *v,
                       const size_t *lcols, size_t nl)
{
    for (size_t k = 0; k < nl; k++) {
        const js_column_t *col = &t->cols[lcols[k]];
        const js_value_t *x = &v[lcols[k]];
        char num[32];
        if (!x->present)
            label(w, col->name, "", 0);
        else if (col->type == JS_TEXT) {
            const char *str = rows_str(rows, x);
            label(w, col->name, str, strlen(str));
        } else if (col->type == JS_INT) {
            snprintf(num, sizeof(num), "%lld", (long long)x->i);
            label(w, col->name, num, strlen(num));
        } else {
            snprintf(num, sizeof(num), "%.15g", x->d);
            label(w, col->name, num, strlen(num));
        }
    }
}

/* put_sample: one sample line; `labels` (llen bytes) are the series' labels less the family's own. */
static int put_sample(js_buf_t *b, const prom_family_t *f, const char *labels, size_t llen, double value)
{
    int err = buf_append(b, f->name, strlen(f->name));
    if (f->counter)
        err |= buf_append(b, "_total", 6);
    bool any = llen || f->lname;
    if (any)
        err |= buf_append(b, "{", 1);
    if (llen)
        err |= buf_append(b, labels, llen);
    if (f->lname) {
        lw_t w = {.b = b, .first = llen == 0};
        label(&w, f->lname, f->lvalue, strlen(f->lvalue));
        err |= w.err;
    }
    if (any)
        err |= buf_append(b, "}", 1);
    err |= buf_append(b, " ", 1);
    err |= put_number(b, value);
    err |= buf_append(b, "\n", 1);
    return err ? -ENOMEM : 0;
}

static bool value_of(const js_column_t *col, const js_value_t *x, double scale, double *ret)
{
    if (!x->present)
        return false;
    double d = col->type == JS_INT ? (double)x->i : x->d;
    if (isnan(d))
        return false;
    *ret = scale == 1 ? d : d * scale;
    return true;
}

int prom_render_table(js_buf_t *out, prom_format_t fmt, const prom_cfg_t *cfg, const char *prefix,
                      const js_table_t *t, const js_rows_t *rows, const size_t *rowsel, size_t nsel)
{
    size_t n = rowsel ? nsel : rows->nrows;
    if (!n || !t->ncols)
        return 0;
    prom_family_t *fams = malloc(t->ncols * sizeof(*fams));
    bool *done = calloc(t->ncols, sizeof(*done));
    size_t *lcols = malloc(t->ncols * sizeof(*lcols)), nl = 0;
    size_t *loff = malloc((n + 1) * sizeof(*loff));
    js_buf_t lab = {0};
    int r = 0;
    if (!fams || !done || !lcols || !loff) {
        r = -ENOMEM;
        goto out;
    }
    for (size_t c = 0; c < t->ncols; c++) {
        prom_family(prefix, t, c, &fams[c]);
        if (is_label_col(t, &t->cols[c]))
            lcols[nl++] = c;
    }
    /* every row's labels once, shared by all its series */
    for (size_t i = 0; i < n; i++) {
        loff[i] = lab.len;
        lw_t w = {.b = &lab, .first = true};
        cfg_labels(&w, cfg, t);
        row_labels(&w, t, rows, rows_row(rows, rowsel ? rowsel[i] : i), lcols, nl);
        if (w.err) {
            r = -ENOMEM;
            goto out;
        }
    }
    loff[n] = lab.len;
    for (size_t c = 0; c < t->ncols && r == 0; c++) {
        if (done[c] || fams[c].skip)
            continue;
        bool header = false;
        /* every column that maps to this family (a mode split, one column per CPU), in column order */
        for (size_t c2 = c; c2 < t->ncols && r == 0; c2++) {
            if (done[c2] || fams[c2].skip || strcmp(fams[c2].name, fams[c].name) != 0)
                continue;
            done[c2] = true;
            if (fams[c2].counter != fams[c].counter)
                continue; /* one family has one type */
            for (size_t i = 0; i < n && r == 0; i++) {
                const js_value_t *v = rows_row(rows, rowsel ? rowsel[i] : i);
                double d;
                if (!value_of(&t->cols[c2], &v[c2], fams[c2].scale, &d))
                    continue;
                if (!header) {
                    r = put_header(out, fmt, &fams[c]);
                    header = true;
                }
                if (r == 0)
                    r = put_sample(out, &fams[c2], lab.p ? lab.p + loff[i] : "", loff[i + 1] - loff[i], d);
            }
        }
    }
out:
    free(fams);
    free(done);
    free(lcols);
    free(loff);
    buf_free(&lab);
    return r;
}

int prom_render_end(js_buf_t *out, prom_format_t fmt)
{
    return fmt == PROM_OPENMETRICS ? buf_append(out, "# EOF\n", 6) : 0;
}

/* ---- the monitor's own series ------------------------------------------------------------------------ */

/* one: a single series with the config's labels and at most one more. */
static int one(js_buf_t *b, prom_format_t fmt, const prom_cfg_t *cfg, const char *name, bool counter,
               const char *unit, const char *help, const char *lname, const char *lvalue, double v,
               bool header)
{
    prom_family_t f = {.counter = counter, .unit = unit, .help = help, .lname = lname};
    snprintf(f.name, sizeof(f.name), "%s", name);
    if (lvalue)
        snprintf(f.lvalue, sizeof(f.lvalue), "%s", lvalue);
    int r = header ? put_header(b, fmt, &f) : 0;
    js_buf_t lab = {0};
    lw_t w = {.b = &lab, .first = true};
    cfg_labels(&w, cfg, NULL);
    if (r == 0)
        r = w.err ? -ENOMEM : put_sample(b, &f, lab.p ? lab.p : "", lab.len, v);
    buf_free(&lab);
    return r;
}

static int monitor_series(js_buf_t *b, prom_format_t fmt, const prom_cfg_t *cfg, js_model_t *m,
                          const js_sample_t *s, int64_t seq)
{
    int r = one(b, fmt, cfg, "jobscope_build_info", false, NULL, "jobscope's version (always 1)", "version",
                JOBSCOPE_VERSION, 1, true);
    const js_rows_t *smp = s ? sample_rows(s, &table_samples) : NULL;
    const js_value_t *sv = smp && smp->nrows ? rows_row(smp, 0) : NULL;
    if (r == 0)
        r = one(b, fmt, cfg, "jobscope_samples", true, NULL, "samples taken since the monitor started", NULL,
                NULL, (double)(seq + 1), true);
    if (r == 0 && sv && sv[SAMPLES_MISSED].present)
        r = one(b, fmt, cfg, "jobscope_samples_missed", true, NULL,
                "sampling deadlines that passed before a sample could start", NULL, NULL,
                (double)sv[SAMPLES_MISSED].i, true);
    if (r == 0 && sv && sv[SAMPLES_T_UNIX].present)
        r = one(b, fmt, cfg, "jobscope_sample_timestamp_seconds", false, "seconds",
                "when the exposed sample was taken (Unix time)", NULL, NULL,
                (double)sv[SAMPLES_T_UNIX].i / 1e9, true);
    const js_model_cfg_t *mc = m ? model_cfg(m) : NULL;
    if (r == 0 && mc && mc->interval_ns > 0)
        r = one(b, fmt, cfg, "jobscope_sample_interval_seconds", false, "seconds", "time between samples",
                NULL, NULL, ns_to_s(mc->interval_ns), true);
    if (r == 0 && mc && mc->cores_available > 0)
        r = one(b, fmt, cfg, "jobscope_cores_available", false, "cores",
                "CPUs the scope may use (the command's affinity mask; the node's for serve)", NULL, NULL,
                mc->cores_available, true);
    if (r == 0 && isfinite(cfg->render_s) && cfg->render_s > 0)
        r = one(b, fmt, cfg, "jobscope_exposition_render_seconds", false, "seconds",
                "time the previous sample's exposition took to render", NULL, NULL, cfg->render_s, true);
    /* per source: collect duration and success */
    const js_rows_t *st = s ? sample_rows(s, &table_source_stats) : NULL;
    for (int k = 0; k < 2 && r == 0 && st; k++) {
        bool header = true;
        for (size_t i = 0; i < st->nrows && r == 0; i++) {
            const js_value_t *v = rows_row(st, i);
            if (!v[STATS_SOURCE].present)
                continue;
            const js_value_t *x = &v[k == 0 ? STATS_DURATION : STATS_RC];
            if (!x->present)
                continue;
            r = one(b, fmt, cfg,
                    k == 0 ? "jobscope_source_collect_duration_seconds" : "jobscope_source_collect_success",
                    false, k == 0 ? "seconds" : NULL,
                    k == 0 ? "wall time the source's collect took for the exposed sample"
                           : "1 if the source's collect succeeded for the exposed sample, else 0",
                    "source", rows_str(st, &v[STATS_SOURCE]),
                    k == 0 ? (double)x->i / 1e9 : (double)(x->i == 0), header);
            header = false;
        }
    }
    const js_rows_t *self = s ? sample_rows_named(s, "self") : NULL; /* the self source's table, by name */
    if (r == 0 && self)
        r = prom_render_table(b, fmt, cfg, "monitor", self->table, self, NULL, 0);
    return r;
}

/* ---- the views --------------------------------------------------------------------------------------- */

typedef struct {
    const js_rows_t *rows;
    int cores, rss;
} top_ctx_t;

static double num_at(const js_rows_t *rows, size_t i, int c)
{
    if (c < 0)
        return -INFINITY;
    const js_value_t *v = &rows_row(rows, i)[c];
    if (!v->present)
        return -INFINITY;
    double d = rows->table->cols[c].type == JS_INT ? (double)v->i : v->d;
    return isnan(d) ? -INFINITY : d;
}

static const top_ctx_t *top_sort_ctx; /* qsort has no argument; rendering happens on one thread */

static int cmp_busiest(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    const top_ctx_t *t = top_sort_ctx;
    double cx = num_at(t->rows, x, t->cores), cy = num_at(t->rows, y, t->cores);
    if (cx != cy)
        return cx > cy ? -1 : 1;
    double rx = num_at(t->rows, x, t->rss), ry = num_at(t->rows, y, t->rss);
    if (rx != ry)
        return rx > ry ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* own_processes: keep in sel[0..n) (in order) the first `want` rows whose process belongs to cfg->own_uid
 * (its procfs entry's owner, read now: a process gone since the sample is left out). Returns how many. */
static size_t own_processes(const prom_cfg_t *cfg, const js_rows_t *rows, int pid_col, size_t *sel, size_t n,
                            size_t want)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k < want && pid_col >= 0; i++) {
        const js_value_t *v = &rows_row(rows, sel[i])[pid_col];
        char name[24];
        struct stat st;
        if (!v->present || v->i <= 0)
            continue;
        snprintf(name, sizeof(name), "%lld", (long long)v->i);
        if (fstatat(cfg->proc_dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_uid == cfg->own_uid)
            sel[k++] = sel[i];
    }
    return k;
}

int prom_render(js_buf_t *out, prom_format_t fmt, const prom_cfg_t *cfg, js_model_t *m, const js_sample_t *s,
                int64_t seq)
{
    int r = monitor_series(out, fmt, cfg, m, s, seq);
    const js_table_t *t;
    for (size_t i = 0; r == 0 && m && (t = model_view_table(m, i)); i++) {
        bool is_tree = strcmp(t->name, "tree") == 0, is_proc = strcmp(t->name, "process") == 0;
        if ((is_tree && !cfg->tree) || (is_proc && !cfg->top_processes))
            continue;
        js_view_t v;
        int e = model_view(m, t->name, &v);
        if (e == -ENOMEM)
            r = e;
        if (e < 0)
            continue;
        if (!is_proc) {
            r = prom_render_table(out, fmt, cfg, is_tree ? "" : t->name, v.table, v.rows, NULL, 0);
            continue;
        }
        size_t n = v.rows->nrows;
        size_t *sel = malloc((n ? n : 1) * sizeof(*sel));
        if (!sel) {
            r = -ENOMEM;
            break;
        }
        for (size_t k = 0; k < n; k++)
            sel[k] = k;
        top_ctx_t tc = {v.rows, table_column(v.table, "cpu_cores"), table_column(v.table, "rss_bytes")};
        top_sort_ctx = &tc;
        qsort(sel, n, sizeof(*sel), cmp_busiest);
        size_t keep = n;
        if (cfg->own_processes_only)
            keep = own_processes(cfg, v.rows, table_column(v.table, "pid"), sel, n, cfg->top_processes);
        r = prom_render_table(out, fmt, cfg, "process", v.table, v.rows, sel,
                              keep < cfg->top_processes ? keep : cfg->top_processes);
        free(sel);
    }
    for (size_t i = 0; r == 0 && i < cfg->nextra; i++)
        r = prom_render_table(out, fmt, cfg, cfg->extra[i].prefix, cfg->extra[i].table, cfg->extra[i].rows,
                              NULL, 0);
    return r ? r : prom_render_end(out, fmt);
}

/* ---- content negotiation ----------------------------------------------------------------------------- */

prom_format_t prom_accept(const char *accept)
{
    double q_om = -1, q_text = -1;
    for (const char *p = accept; p && *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        while (n && (*p == ' ' || *p == '\t')) {
            p++;
            n--;
        }
        size_t tl = 0;
        while (tl < n && p[tl] != ';' && p[tl] != ' ')
            tl++;
        double q = 1;
        for (const char *qp = p; qp < p + n; qp++)
            if (*qp == ';') {
                const char *a = qp + 1;
                while (*a == ' ')
                    a++;
                if ((a[0] == 'q' || a[0] == 'Q') && a[1] == '=')
                    q = strtod(a + 2, NULL);
            }
        if (tl == 28 && strncasecmp(p, "application/openmetrics-text", 28) == 0)
            q_om = q > q_om ? q : q_om;
        else if ((tl == 10 && strncasecmp(p, "text/plain", 10) == 0) ||
                 (tl == 3 && strncmp(p, "*/*", 3) == 0) || (tl == 6 && strncasecmp(p, "text/*", 6) == 0))
            q_text = q > q_text ? q : q_text;
        p = end ? end + 1 : p + n;
    }
    return q_om > 0 && q_om >= q_text ? PROM_OPENMETRICS : PROM_TEXT;
}
