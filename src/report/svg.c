/* SPDX-License-Identifier: MIT
 *
 * SVG charts (see svg.h). Layout is in viewBox units (800 wide). The markup's class names are styled by
 * report.css and read by report.js: path.s / path.f with data-s (series line / fill), g.xa (time axis,
 * redrawn on zoom), g.band with data-t0/data-t1, g.ev and g.mk with data-t (and data-y), script.cd (the
 * chart's JSON: plot box, ranges, unit rule, time axis, series). Keep the three files in step.
 */
#include "report/svg.h"
#include "core/json.h"
#include "report/downsample.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 800.0
#define X0 64.0 /* plot box of line charts: left, right, top; bottom = height - 26 */
#define X1 786.0
#define Y0 12.0
#define NPAL 8

static const char *const palette[NPAL] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                          "#CC79A7", "#56B4E9", "#000000", "#F0E442"};
static const char *const viridis[9] = {"#440154", "#472d7b", "#3b528b", "#2c728e", "#21918c",
                                       "#28ae80", "#5ec962", "#addc30", "#fde725"};

const char *svg_colour(js_colour_t c, size_t i)
{
    return c > JS_COLOUR_AUTO && c < JS_COLOUR_MAX ? palette[c - 1] : palette[i % NPAL];
}

/* ---- writing helpers ---- */

/* num: a coordinate, rounded to 0.1 and clamped to ±1e5 (far outside any plot: clipped). */
static void num(js_html_t *h, double v)
{
    char tmp[32];
    v = !isfinite(v) ? 0 : v > 1e5 ? 1e5 : v < -1e5 ? -1e5 : v;
    long long q = llround(v * 10);
    long long a = q < 0 ? -q : q;
    if (a % 10)
        snprintf(tmp, sizeof(tmp), "%s%lld.%lld", q < 0 ? "-" : "", a / 10, a % 10);
    else
        snprintf(tmp, sizeof(tmp), "%s%lld", q < 0 ? "-" : "", a / 10);
    html_raw(h, tmp);
}

/* jnum: a data value for the JSON block, `sig` significant digits, null when missing. */
static void jnum(js_buf_t *j, int *err, double v, int sig)
{
    char tmp[48] = "null";
    if (isfinite(v))
        units_sig(tmp, sizeof(tmp), v, sig);
    if (!*err)
        *err = buf_append(j, tmp, strlen(tmp));
}

static void jraw(js_buf_t *j, int *err, const char *s)
{
    if (!*err)
        *err = buf_append(j, s, strlen(s));
}

static void jstr(js_buf_t *j, int *err, const char *s)
{
    if (!*err)
        *err = json_str(j, s ? s : "", s ? strlen(s) : 0);
}

/* junit: the unit rule and time axis, as report.js reads them. */
static void jcommon(js_buf_t *j, int *err, const char *unit, const js_timeaxis_t *ax)
{
    js_unit_t u = units_lookup(unit);
    jraw(j, err, ",\"u\":{\"b\":");
    jnum(j, err, u.base, 6);
    jraw(j, err, ",\"m\":");
    jnum(j, err, u.mul, 6);
    jraw(j, err, ",\"s\":");
    jstr(j, err, u.suffix);
    jraw(j, err, ",\"y\":");
    jnum(j, err, u.style, 6);
    jraw(j, err, "},\"ax\":{\"m\":");
    jnum(j, err, ax->mode == JS_TIME_WALL, 6);
    jraw(j, err, ",\"o\":");
    if (!*err)
        *err = json_num(j, true, ax->mode == JS_TIME_WALL ? ax->t0_unix + ax->utc_offset_s : 0);
    jraw(j, err, "}");
}

/* put_json: the chart's data block; '<' is written as \u003c so no text can end the script element. */
static void put_json(js_html_t *h, const js_buf_t *j, int err)
{
    if (err && !h->err)
        h->err = err;
    html_raw(h, "<script type=\"application/json\" class=\"cd\">");
    const char *s = j->p ? j->p : "";
    for (const char *lt; (lt = strchr(s, '<')) != NULL; s = lt + 1) {
        if (!h->err && lt > s)
            h->err = buf_append(h->buf, s, (size_t)(lt - s));
        html_raw(h, "\\u003c");
    }
    html_raw(h, s);
    html_raw(h, "</script>\n");
}

/* open_figure: <figure> with caption, and <svg> with its accessible title; desc is written by the caller
 * between the returned state and close_desc(). */
static size_t open_figure(js_html_t *h, const char *kind, const char *id, const char *title, double height,
                          bool zoom)
{
    html_printf(h, "<figure class=\"chart %s\" id=\"%s\">\n<figcaption>", kind, id);
    html_text(h, title);
    if (zoom)
        html_raw(h, "<button type=\"button\" class=\"rz\" hidden>reset zoom</button>");
    html_raw(h, "</figcaption>\n");
    size_t at = h->buf->len;
    html_printf(h, "<svg class=\"ch\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 800 ");
    num(h, height);
    html_printf(h, "\" role=\"img\" aria-labelledby=\"%s-t %s-d\">\n<title id=\"%s-t\">", id, id, id);
    html_text(h, title);
    html_printf(h, "</title>\n<desc id=\"%s-d\">", id);
    return at;
}

/* ---- standalone documents (html.h: js_html_t.docs) ---- */

#define DOC_TITLE 28.0 /* the title's band above the chart */

/* capture: the chart just written into h->buf from offset `at` (its <svg> element, `height` units high) as a
 * standalone document: title, the chart's content, the legend of `series` (may be NULL) below it. */
static void capture(js_html_t *h, size_t at, const char *id, const char *title, double height,
                    const js_series_t *series, size_t nseries)
{
    if (!h->docs || h->err)
        return;
    const char *svg = h->buf->p + at, *end = h->buf->p + h->buf->len;
    const char *body = memchr(svg, '>', (size_t)(end - svg));
    const char *close = end;
    while (close > svg && strncmp(close, "</svg>", 6) != 0)
        close--;
    if (!body || close <= body)
        return;
    body++;
    /* the legend: items in rows of at most 780 units (about 6.2 units a character at 11 px) */
    double lx = 10, ly = 0, rows = nseries ? 1 : 0;
    for (size_t k = 0; k < nseries; k++) {
        double w = 32 + 6.2 * (double)strlen(series[k].name ? series[k].name : "") + 16;
        if (lx + w > 790 && lx > 10) {
            lx = 10;
            rows++;
        }
        lx += w;
    }
    double total = DOC_TITLE + height + rows * 16 + (rows ? 6 : 0);
    if (h->docs->n == h->docs->cap) {
        size_t cap = h->docs->cap ? 2 * h->docs->cap : 16;
        js_svgdoc_t *v = realloc(h->docs->v, cap * sizeof(*v));
        if (!v) {
            h->err = -ENOMEM;
            return;
        }
        h->docs->v = v;
        h->docs->cap = cap;
    }
    js_svgdoc_t *d = &h->docs->v[h->docs->n];
    memset(d, 0, sizeof(*d));
    snprintf(d->id, sizeof(d->id), "%s", id);
    snprintf(d->title, sizeof(d->title), "%s", title ? title : "");
    js_html_t o = {.buf = &d->svg};
    html_raw(&o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
                 "width=\"800\" height=\"");
    num(&o, total);
    html_raw(&o, "\" viewBox=\"0 0 800 ");
    num(&o, total);
    html_raw(
        &o,
        "\" font-family=\"DejaVu Sans, Liberation Sans, Arial, sans-serif\" font-size=\"11\">\n<style>\n");
    if (!o.err)
        o.err = html_svg_style(o.buf);
    html_raw(&o, "</style>\n<rect width=\"800\" height=\"");
    num(&o, total);
    html_raw(&o, "\" fill=\"#ffffff\"/>\n<text x=\"10\" y=\"19\" font-size=\"14\" font-weight=\"bold\" "
                 "fill=\"#1a1a1a\">");
    html_text(&o, title);
    html_printf(&o, "</text>\n<g transform=\"translate(0 %d)\">", (int)DOC_TITLE);
    if (!o.err)
        o.err = buf_append(o.buf, body, (size_t)(close - body));
    html_raw(&o, "</g>\n");
    lx = 10;
    ly = DOC_TITLE + height + 10;
    for (size_t k = 0; k < nseries; k++) {
        const js_series_t *sr = &series[k];
        const char *name = sr->name ? sr->name : "";
        double w = 32 + 6.2 * (double)strlen(name) + 16;
        if (lx + w > 790 && lx > 10) {
            lx = 10;
            ly += 16;
        }
        bool dashed = sr->dashed || (!sr->colour && (k / NPAL) % 2 == 1);
        html_raw(&o, "<line x1=\"");
        num(&o, lx);
        html_raw(&o, "\" x2=\"");
        num(&o, lx + 24);
        html_raw(&o, "\" y1=\"");
        num(&o, ly);
        html_raw(&o, "\" y2=\"");
        num(&o, ly);
        html_printf(&o, "\" stroke=\"%s\" stroke-width=\"3\"%s/><text x=\"", svg_colour(sr->colour, k),
                    dashed ? " stroke-dasharray=\"6 3\"" : "");
        num(&o, lx + 30);
        html_raw(&o, "\" y=\"");
        num(&o, ly + 4);
        html_raw(&o, "\" fill=\"#333333\">");
        html_text(&o, name);
        html_raw(&o, "</text>\n");
        lx += w;
    }
    html_raw(&o, "</svg>\n");
    if (o.err) {
        buf_free(&d->svg);
        h->err = o.err;
        return;
    }
    h->docs->n++;
}

static void time_axis(js_html_t *h, double tlo, double thi, double x0, double x1, double y, unsigned target,
                      const js_timeaxis_t *ax)
{
    js_tticks_t tk;
    html_raw(h, "<line class=\"ax\" x1=\"");
    num(h, x0);
    html_raw(h, "\" x2=\"");
    num(h, x1);
    html_raw(h, "\" y1=\"");
    num(h, y);
    html_raw(h, "\" y2=\"");
    num(h, y);
    html_raw(h, "\"/>\n<g class=\"xa\">");
    if (units_time_ticks(tlo, thi, target, ax, &tk) == 0) {
        for (size_t i = 0; i < tk.n; i++) {
            double t = tk.first + (double)i * tk.step, x = x0 + (t - tlo) * (x1 - x0) / (thi - tlo);
            char label[64];
            const char *text = units_time_label(label, sizeof(label), &tk, t);
            /* a centred label that would run past the plot's right edge (and out of the picture) is
             * right-aligned to its tick instead; 3.5 px is half an average glyph of the axis font */
            bool at_end = x + 3.5 * (double)strlen(text) > x1 + 4;
            html_raw(h, "<line x1=\"");
            num(h, x);
            html_raw(h, "\" x2=\"");
            num(h, x);
            html_raw(h, "\" y1=\"");
            num(h, y);
            html_raw(h, "\" y2=\"");
            num(h, y + 4);
            html_raw(h, "\"/><text x=\"");
            num(h, x);
            html_raw(h, "\" y=\"");
            num(h, y + 16);
            html_raw(h, at_end ? "\" style=\"text-anchor:end\">" : "\">");
            html_text(h, text);
            html_raw(h, "</text>");
        }
    }
    html_raw(h, "</g>\n");
}

/* time_range: the first and last finite time over the series (t is non-decreasing), or [0, 1]. */
static void time_range(const js_series_t *s, size_t ns, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t k = 0; k < ns; k++) {
        for (size_t i = 0; i < s[k].n; i++)
            if (isfinite(s[k].t[i])) {
                *lo = fmin(*lo, s[k].t[i]);
                break;
            }
        for (size_t i = s[k].n; i > 0; i--)
            if (isfinite(s[k].t[i - 1])) {
                *hi = fmax(*hi, s[k].t[i - 1]);
                break;
            }
    }
    if (!(*hi > *lo)) {
        *lo = isfinite(*lo) ? *lo : 0;
        *hi = *lo + 1;
    }
}

static bool series_ok(const js_series_t *s, size_t n)
{
    if (n && !s)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i].n && (!s[i].t || !s[i].v))
            return false;
    return true;
}

/* ---- line chart ---- */

typedef struct {
    double *t, *v;
    size_t n;
} ds_t;

typedef struct {
    double x0, x1, y0, y1, tlo, thi, vlo, vhi;
} geom_t;

static double gx(const geom_t *g, double t)
{
    return g->x0 + (t - g->tlo) * (g->x1 - g->x0) / (g->thi - g->tlo);
}

static double gy(const geom_t *g, double v)
{
    return g->y1 - (v - g->vlo) * (g->y1 - g->y0) / (g->vhi - g->vlo);
}

/* rounded: coordinate in tenths, as written; clamped like num(). */
static long long tenths(double v)
{
    return llround((v > 1e5 ? 1e5 : v < -1e5 ? -1e5 : v) * 10);
}

/* path_d: the line (fill = false) or the area down to the zero line (fill = true) of one downsampled series.
 * Consecutive points that round to the same position are written once; a gap ends a subpath; a subpath of
 * one point gets "h0" so the round cap draws a dot. report.js's paths() writes the same. */
static void path_d(js_html_t *h, const geom_t *g, const ds_t *s, bool fill)
{
    double base = fmin(g->y1, fmax(g->y0, gy(g, 0)));
    bool pen = false;
    size_t segs = 0;
    long long lx = 0, ly = 0;
    for (size_t i = 0; i <= s->n; i++) {
        bool gap = i == s->n || !isfinite(s->v[i]);
        if (gap) {
            if (pen && fill) {
                html_raw(h, "V");
                num(h, base);
                html_raw(h, "Z");
            } else if (pen && segs == 0)
                html_raw(h, "h0");
            pen = false;
            continue;
        }
        double x = gx(g, s->t[i]), y = gy(g, s->v[i]);
        long long qx = tenths(x), qy = tenths(y);
        if (!pen) {
            html_raw(h, "M");
            num(h, x);
            html_raw(h, " ");
            if (fill) {
                num(h, base);
                html_raw(h, "V");
            }
            num(h, y);
            pen = true;
            segs = 0;
        } else if (qx != lx || qy != ly) {
            html_raw(h, fill || segs == 0 ? "L" : " ");
            num(h, x);
            html_raw(h, " ");
            num(h, y);
            segs++;
        }
        lx = qx;
        ly = qy;
    }
}

static void desc_line(js_html_t *h, const js_chart_t *c, const ds_t *ds, const geom_t *g)
{
    char a[64], b[64], t[64];
    if (c->desc) {
        html_text(h, c->desc);
        return;
    }
    html_printf(h, "Line chart of %zu series from ", c->nseries);
    html_text(h, units_time(a, sizeof(a), g->tlo, &c->time));
    html_raw(h, " to ");
    html_text(h, units_time(a, sizeof(a), g->thi, &c->time));
    html_raw(h, ".");
    for (size_t k = 0; k < c->nseries && k < 8; k++) {
        size_t lo = SIZE_MAX, hi = SIZE_MAX;
        for (size_t i = 0; i < ds[k].n; i++) {
            if (!isfinite(ds[k].v[i]))
                continue;
            if (lo == SIZE_MAX || ds[k].v[i] < ds[k].v[lo])
                lo = i;
            if (hi == SIZE_MAX || ds[k].v[i] > ds[k].v[hi])
                hi = i;
        }
        html_raw(h, " ");
        html_text(h, c->series[k].name);
        if (lo == SIZE_MAX) {
            html_raw(h, ": no data.");
            continue;
        }
        html_raw(h, ": ");
        html_text(h, units_format(a, sizeof(a), ds[k].v[lo], c->unit));
        html_raw(h, " to ");
        html_text(h, units_format(b, sizeof(b), ds[k].v[hi], c->unit));
        html_raw(h, ", peak at ");
        html_text(h, units_time(t, sizeof(t), ds[k].t[hi], &c->time));
        html_raw(h, ".");
    }
    if (c->nseries > 8)
        html_printf(h, " And %zu more series.", c->nseries - 8);
}

/* line_ranges: the plot geometry, the value ticks (ranges widened to them unless fixed by the caller). */
static void line_ranges(const js_chart_t *c, const ds_t *ds, geom_t *g, js_ticks_t *tk)
{
    double height = c->height ? c->height : 240;
    *g = (geom_t){.x0 = X0, .x1 = X1, .y0 = Y0, .y1 = height - 26};
    if (c->t_max > c->t_min) {
        g->tlo = c->t_min;
        g->thi = c->t_max;
    } else
        time_range(c->series, c->nseries, &g->tlo, &g->thi);
    unsigned target = (unsigned)fmax(3, (g->y1 - g->y0) / 40);
    if (c->v_max > c->v_min) {
        g->vlo = c->v_min;
        g->vhi = c->v_max;
        units_ticks(g->vlo, g->vhi, target, c->unit, tk);
        return;
    }
    double lo = 0, hi = 0;
    for (size_t k = 0; k < c->nseries; k++)
        for (size_t i = 0; i < ds[k].n; i++)
            if (isfinite(ds[k].v[i])) {
                lo = fmin(lo, ds[k].v[i]);
                hi = fmax(hi, ds[k].v[i]);
            }
    for (size_t i = 0; i < c->nhlines; i++)
        if (isfinite(c->hlines[i].v)) {
            lo = fmin(lo, c->hlines[i].v);
            hi = fmax(hi, c->hlines[i].v);
        }
    for (size_t i = 0; i < c->nmarkers; i++)
        if (isfinite(c->markers[i].v)) {
            lo = fmin(lo, c->markers[i].v);
            hi = fmax(hi, c->markers[i].v);
        }
    units_ticks(lo, hi, target, c->unit, tk);
    g->vlo = tk->lo;
    g->vhi = tk->hi;
}

/* label_width: an upper estimate of `s`'s width in units at 11 px (DejaVu Sans: digits 0.64 em, '.' and ' '
 * 0.32 em, letters up to 0.8 em). */
static double label_width(const char *s)
{
    double w = 0;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c & 0xc0) == 0x80)
            continue;
        w += c == '.' || c == ' ' || c == '/' || c == 'i' ? 3.8 : c >= '0' && c <= '9' ? 7.1 : 8.4;
    }
    return w;
}

static void line_grid(js_html_t *h, const geom_t *g, const js_ticks_t *tk)
{
    /* the value labels sit right-aligned in the left margin: where the widest would not fit, all of them
     * get a smaller font, so none is ever cut at the picture's left edge */
    double widest = 0;
    for (size_t i = 0; i < tk->n; i++) {
        char label[64];
        widest = fmax(widest,
                      label_width(units_tick_label(label, sizeof(label), tk, tk->lo + (double)i * tk->step)));
    }
    double room = g->x0 - 8;
    if (widest > room) {
        html_raw(h, "<g class=\"grid\" style=\"font-size:");
        html_num(h, fmax(6, 11 * room / widest), 3);
        html_raw(h, "px\">");
    } else
        html_raw(h, "<g class=\"grid\">");
    for (size_t i = 0; i < tk->n; i++) {
        double v = tk->lo + (double)i * tk->step, y = gy(g, v);
        if (y < g->y0 - 0.05 || y > g->y1 + 0.05)
            continue; /* a caller's fixed range may not start or end on a tick */
        char label[64];
        html_raw(h, "<line class=\"g\" x1=\"");
        num(h, g->x0);
        html_raw(h, "\" x2=\"");
        num(h, g->x1);
        html_raw(h, "\" y1=\"");
        num(h, y);
        html_raw(h, "\" y2=\"");
        num(h, y);
        html_raw(h, "\"/><text class=\"yl\" x=\"");
        num(h, g->x0 - 6);
        html_raw(h, "\" y=\"");
        num(h, y + 4);
        html_raw(h, "\">");
        html_text(h, units_tick_label(label, sizeof(label), tk, v));
        html_raw(h, "</text>");
    }
    html_raw(h, "</g>\n");
}

static void line_bands(js_html_t *h, const js_chart_t *c, const geom_t *g)
{
    for (size_t i = 0; i < c->nbands; i++) {
        const js_band_t *b = &c->bands[i];
        if (!isfinite(b->t0) || !isfinite(b->t1))
            continue;
        double a = fmax(g->x0, gx(g, b->t0)), z = fmin(g->x1, gx(g, b->t1));
        html_raw(h, "<g class=\"band\" data-t0=\"");
        html_num(h, b->t0, 3);
        html_raw(h, "\" data-t1=\"");
        html_num(h, b->t1, 3);
        html_raw(h, z > a ? "\"><rect x=\"" : "\" style=\"display:none\"><rect x=\"");
        num(h, a);
        html_raw(h, "\" y=\"");
        num(h, g->y0);
        html_raw(h, "\" width=\"");
        num(h, fmax(0, z - a));
        html_raw(h, "\" height=\"");
        num(h, g->y1 - g->y0);
        html_raw(h, "\"/>");
        if (b->label) {
            size_t chars = 0; /* hidden when wider than the band (about 5.6 units a character); report.js
                               * measures it again after a zoom */
            for (const char *p = b->label; *p; p++)
                chars += ((unsigned char)*p & 0xc0) != 0x80;
            html_raw(h, z - a < 5.6 * (double)chars + 6 ? "<text style=\"display:none\" x=\"" : "<text x=\"");
            num(h, a + 3);
            html_raw(h, "\" y=\"");
            num(h, g->y1 - 4);
            html_raw(h, "\">");
            html_text(h, b->label);
            html_raw(h, "</text>");
        }
        html_raw(h, "</g>\n");
    }
}

/* line_density: the density strip, one path in bucket units (x: bucket index, y: units below the plot's
 * top) placed by a transform that report.js recomputes on zoom from data-z0, data-z1 and data-n. */
static void line_density(js_html_t *h, const js_chart_t *c, const geom_t *g)
{
    if (!c->density || !c->ndensity || !(c->density_t1 > c->density_t0))
        return;
    double max = 0, total = 0;
    for (size_t i = 0; i < c->ndensity; i++)
        if (isfinite(c->density[i])) {
            max = fmax(max, c->density[i]);
            total += c->density[i];
        }
    if (!(max > 0))
        return;
    double sx = (gx(g, c->density_t1) - gx(g, c->density_t0)) / (double)c->ndensity;
    html_raw(h, "<path class=\"evd\" data-z0=\"");
    html_num(h, c->density_t0, 6);
    html_raw(h, "\" data-z1=\"");
    html_num(h, c->density_t1, 6);
    html_printf(h, "\" data-n=\"%zu\" transform=\"translate(", c->ndensity);
    num(h, gx(g, c->density_t0));
    html_raw(h, " ");
    num(h, g->y0);
    html_raw(h, ") scale(");
    html_num(h, sx, 6);
    html_raw(h, " 1)\" d=\"");
    for (size_t i = 0; i < c->ndensity; i++) {
        if (!(c->density[i] > 0))
            continue;
        html_printf(h, "M%zu 0h1v", i);
        num(h, 2 + 10 * c->density[i] / max);
        html_raw(h, "h-1z");
    }
    html_printf(
        h, "\"><title>%.0f marks: how many fall in each stretch of time (the largest: %.0f)</title></path>\n",
        total, max);
}

static void line_decorations(js_html_t *h, const js_chart_t *c, const geom_t *g)
{
    char label[96];
    for (size_t i = 0; i < c->nhlines; i++) {
        const js_hline_t *r = &c->hlines[i];
        if (!isfinite(r->v))
            continue;
        const char *col = r->colour ? svg_colour(r->colour, 0) : "#555555";
        double y = gy(g, r->v);
        html_raw(h, "<g class=\"hl\"><line x1=\"");
        num(h, g->x0);
        html_raw(h, "\" x2=\"");
        num(h, g->x1);
        html_raw(h, "\" y1=\"");
        num(h, y);
        html_raw(h, "\" y2=\"");
        num(h, y);
        html_printf(h, "\" stroke=\"%s\"/><text x=\"", col);
        num(h, g->x1 - 4);
        html_raw(h, "\" y=\"");
        num(h, y < g->y0 + 12 ? y + 12 : y - 4);
        html_printf(h, "\" fill=\"%s\">", col);
        html_text(h, r->label ? r->label : units_format(label, sizeof(label), r->v, c->unit));
        html_raw(h, "</text></g>\n");
    }
    for (size_t i = 0; i < c->nevents; i++) {
        const js_event_t *e = &c->events[i];
        if (!isfinite(e->t))
            continue;
        html_raw(h, "<g class=\"ev\" data-t=\"");
        html_num(h, e->t, 3);
        html_raw(h, e->t < g->tlo || e->t > g->thi ? "\" style=\"display:none" : "");
        html_raw(h, "\" transform=\"translate(");
        num(h, gx(g, e->t));
        html_raw(h, " 0)\" tabindex=\"0\"><title>");
        html_text(h, e->label ? e->label : "event");
        html_raw(h, " at ");
        html_text(h, units_time(label, sizeof(label), e->t, &c->time));
        if (e->data) {
            html_raw(h, ": ");
            html_text(h, e->data);
        }
        html_raw(h, "</title><line x1=\"0\" x2=\"0\" y1=\"");
        num(h, g->y0);
        html_raw(h, "\" y2=\"");
        num(h, g->y1);
        html_raw(h, "\"/><rect class=\"hit\" x=\"-4\" width=\"8\" y=\"");
        num(h, g->y0);
        html_raw(h, "\" height=\"");
        num(h, g->y1 - g->y0);
        html_raw(h, "\"/>");
        if (e->label) {
            html_raw(h, "<text x=\"3\" y=\"");
            num(h, g->y0 + 9);
            html_raw(h, "\">");
            html_text(h, e->label);
            html_raw(h, "</text>");
        }
        html_raw(h, "</g>\n");
    }
    for (size_t i = 0; i < c->nmarkers; i++) {
        const js_marker_t *m = &c->markers[i];
        if (!isfinite(m->t) || !isfinite(m->v))
            continue;
        const char *col = m->colour ? svg_colour(m->colour, 0) : "#000000";
        double x = gx(g, m->t), y = gy(g, m->v);
        bool right = x > g->x0 + 0.7 * (g->x1 - g->x0);
        html_raw(h, "<g class=\"mk\" data-t=\"");
        html_num(h, m->t, 3);
        html_raw(h, "\" data-y=\"");
        num(h, y);
        html_raw(h, m->t < g->tlo || m->t > g->thi ? "\" style=\"display:none" : "");
        html_raw(h, "\" transform=\"translate(");
        num(h, x);
        html_raw(h, " ");
        num(h, y);
        html_printf(h, ")\"><circle r=\"3.5\" fill=\"%s\"/><text%s x=\"%d\" y=\"%d\" fill=\"%s\">", col,
                    right ? " class=\"e\"" : "", right ? -6 : 6, y < g->y0 + 14 ? 14 : -7, col);
        html_text(h, m->label ? m->label : units_format(label, sizeof(label), m->v, c->unit));
        html_raw(h, "</text></g>\n");
    }
}

static void line_json(js_html_t *h, const js_chart_t *c, const ds_t *ds, const geom_t *g, unsigned xt)
{
    js_buf_t j = {0};
    int err = 0;
    jraw(&j, &err, "{\"k\":\"line\",\"box\":[");
    jnum(&j, &err, g->x0, 6);
    jraw(&j, &err, ",");
    jnum(&j, &err, g->y0, 6);
    jraw(&j, &err, ",");
    jnum(&j, &err, g->x1, 6);
    jraw(&j, &err, ",");
    jnum(&j, &err, g->y1, 6);
    jraw(&j, &err, "],\"t\":[");
    jnum(&j, &err, g->tlo, 15);
    jraw(&j, &err, ",");
    jnum(&j, &err, g->thi, 15);
    jraw(&j, &err, "],\"v\":[");
    jnum(&j, &err, g->vlo, 15);
    jraw(&j, &err, ",");
    jnum(&j, &err, g->vhi, 15);
    jraw(&j, &err, "],\"xt\":");
    jnum(&j, &err, xt, 6);
    jcommon(&j, &err, c->unit, &c->time);
    jraw(&j, &err, ",\"s\":[");
    for (size_t k = 0; k < c->nseries; k++) {
        jraw(&j, &err, k ? ",{\"n\":" : "{\"n\":");
        jstr(&j, &err, c->series[k].name);
        jraw(&j, &err, ",\"c\":");
        jstr(&j, &err, svg_colour(c->series[k].colour, k));
        jraw(&j, &err, ",\"t\":[");
        for (size_t i = 0; i < ds[k].n; i++) {
            if (i)
                jraw(&j, &err, ",");
            jnum(&j, &err, ds[k].t[i], 7);
        }
        jraw(&j, &err, "],\"v\":[");
        for (size_t i = 0; i < ds[k].n; i++) {
            if (i)
                jraw(&j, &err, ",");
            jnum(&j, &err, ds[k].v[i], 6);
        }
        jraw(&j, &err, "]}");
    }
    jraw(&j, &err, "]}");
    put_json(h, &j, err);
    buf_free(&j);
}

static void legend(js_html_t *h, const js_chart_t *c)
{
    html_raw(h, "<div class=\"lg\">");
    for (size_t k = 0; k < c->nseries; k++) {
        const js_series_t *s = &c->series[k];
        bool dashed = s->dashed || (!s->colour && (k / NPAL) % 2 == 1);
        html_printf(h,
                    "<button type=\"button\" data-s=\"%zu\" aria-pressed=\"true\"><i%s "
                    "style=\"border-top-color:%s\"></i>",
                    k, dashed ? " class=\"d\"" : "", svg_colour(s->colour, k));
        html_text(h, s->name);
        html_raw(h, "</button>");
    }
    html_raw(h, "</div>\n");
}

int svg_line_chart(js_html_t *h, const js_chart_t *c)
{
    if (h->err)
        return h->err;
    if (!c || !series_ok(c->series, c->nseries) || (c->nhlines && !c->hlines) ||
        (c->nmarkers && !c->markers) || (c->nbands && !c->bands) || (c->nevents && !c->events))
        return h->err = -EINVAL;
    size_t buckets = c->buckets ? c->buckets : (size_t)(X1 - X0);
    ds_t *ds = c->nseries ? calloc(c->nseries, sizeof(*ds)) : NULL;
    if (c->nseries && !ds)
        return h->err = -ENOMEM;
    for (size_t k = 0; k < c->nseries && !h->err; k++) {
        size_t cap = downsample_bound(c->series[k].n, buckets);
        if (cap == 0)
            continue;
        ds[k].t = malloc(2 * cap * sizeof(double));
        if (!ds[k].t) {
            h->err = -ENOMEM;
            break;
        }
        ds[k].v = ds[k].t + cap;
        if (downsample_minmax(c->series[k].t, c->series[k].v, c->series[k].n, buckets, ds[k].t, ds[k].v, cap,
                              &ds[k].n) < 0)
            h->err = -EINVAL; /* not reached: the bound is always enough */
    }
    if (!h->err) {
        geom_t g;
        js_ticks_t tk;
        char id[64], clip[80];
        html_id(h, c->id, id, sizeof(id));
        snprintf(clip, sizeof(clip), "%s-c", id);
        line_ranges(c, ds, &g, &tk);
        unsigned xt = (unsigned)((g.x1 - g.x0) / 90);
        size_t at = open_figure(h, "line", id, c->title, g.y1 + 26, true);
        desc_line(h, c, ds, &g);
        html_printf(h, "</desc>\n<defs><clipPath id=\"%s\"><rect x=\"", clip);
        num(h, g.x0);
        html_raw(h, "\" y=\"");
        num(h, g.y0 - 1);
        html_raw(h, "\" width=\"");
        num(h, g.x1 - g.x0);
        html_raw(h, "\" height=\"");
        num(h, g.y1 - g.y0 + 2);
        html_raw(h, "\"/></clipPath></defs>\n");
        line_grid(h, &g, &tk);
        time_axis(h, g.tlo, g.thi, g.x0, g.x1, g.y1, xt, &c->time);
        html_printf(h, "<g clip-path=\"url(#%s)\">\n", clip);
        line_bands(h, c, &g);
        for (size_t k = 0; k < c->nseries; k++) {
            if (!c->series[k].fill)
                continue;
            html_printf(h, "<path class=\"f\" data-s=\"%zu\" fill=\"%s\" d=\"", k,
                        svg_colour(c->series[k].colour, k));
            path_d(h, &g, &ds[k], true);
            html_raw(h, "\"/>\n");
        }
        for (size_t k = 0; k < c->nseries; k++) {
            const js_series_t *s = &c->series[k];
            bool dashed = s->dashed || (!s->colour && (k / NPAL) % 2 == 1);
            html_printf(h, "<path class=\"s%s\" data-s=\"%zu\" stroke=\"%s\" d=\"", dashed ? " d" : "", k,
                        svg_colour(s->colour, k));
            path_d(h, &g, &ds[k], false);
            html_raw(h, "\"/>\n");
        }
        line_density(h, c, &g);
        html_raw(h, "</g>\n");
        line_decorations(h, c, &g);
        html_raw(h, "</svg>\n");
        capture(h, at, id, c->title, g.y1 + 26, c->series, c->nseries);
        legend(h, c);
        line_json(h, c, ds, &g, xt);
        html_raw(h, "</figure>\n");
    }
    for (size_t k = 0; k < c->nseries; k++)
        free(ds[k].t);
    free(ds);
    return h->err;
}

/* ---- bar chart ---- */

int svg_bar_chart(js_html_t *h, const js_bars_t *c)
{
    if (h->err)
        return h->err;
    if (!c || (c->nbars && !c->bars))
        return h->err = -EINVAL;
    const double rh = 22, lx = 236, bx0 = 244, bx1 = 700;
    double height = 8 + rh * (double)(c->nbars ? c->nbars : 1), max = 0;
    for (size_t i = 0; i < c->nbars; i++)
        if (isfinite(c->bars[i].value))
            max = fmax(max, c->bars[i].value);
    if (max <= 0)
        max = 1;
    char id[64], v[96];
    html_id(h, c->id, id, sizeof(id));
    size_t at = open_figure(h, "bars", id, c->title, height, false);
    if (c->desc)
        html_text(h, c->desc);
    else {
        html_printf(h, "Bar chart of %zu values.", c->nbars);
        for (size_t i = 0; i < c->nbars && i < 10; i++) {
            html_raw(h, " ");
            html_text_max(h, c->bars[i].label, 36);
            html_raw(h, ": ");
            html_text(h, units_format(v, sizeof(v), c->bars[i].value, c->unit));
            html_raw(h, ".");
        }
    }
    html_raw(h, "</desc>\n");
    const char *col = svg_colour(c->colour ? c->colour : JS_BLUE, 0);
    for (size_t i = 0; i < c->nbars; i++) {
        const js_bar_t *b = &c->bars[i];
        double y = 4 + rh * (double)i,
               w = isfinite(b->value) && b->value > 0 ? (bx1 - bx0) * b->value / max : 0;
        units_format(v, sizeof(v), b->value, c->unit);
        html_raw(h, "<g><title>");
        html_text(h, b->label);
        if (b->note) {
            html_raw(h, "\n");
            html_text(h, b->note);
        }
        html_raw(h, "\n");
        html_text(h, v);
        html_raw(h, "</title><text class=\"bl\" x=\"");
        num(h, lx);
        html_raw(h, "\" y=\"");
        num(h, y + 15);
        html_raw(h, "\">");
        html_text_max(h, b->label, 36);
        html_raw(h, "</text><rect x=\"");
        num(h, bx0);
        html_raw(h, "\" y=\"");
        num(h, y + 3);
        html_raw(h, "\" width=\"");
        num(h, w);
        html_printf(h, "\" height=\"16\" fill=\"%s\"/><text x=\"", col);
        num(h, bx0 + w + 6);
        html_raw(h, "\" y=\"");
        num(h, y + 15);
        html_raw(h, "\">");
        html_text(h, v);
        html_raw(h, "</text></g>\n");
    }
    html_raw(h, "</svg>\n");
    capture(h, at, id, c->title, height, NULL, 0);
    return html_raw(h, "</figure>\n");
}

/* ---- heat map ---- */

/* heat_cells: bucket each row into cols cells (mean or max of the finite values; NAN when none). */
static int heat_cells(const js_heatmap_t *c, size_t cols, double tlo, double thi, double *cell)
{
    size_t *count = calloc(cols, sizeof(*count));
    if (!count)
        return -ENOMEM;
    for (size_t r = 0; r < c->nrows; r++) {
        double *row = cell + r * cols;
        memset(count, 0, cols * sizeof(*count));
        for (size_t k = 0; k < cols; k++)
            row[k] = 0;
        const js_series_t *s = &c->rows[r];
        for (size_t i = 0; i < s->n; i++) {
            if (!isfinite(s->t[i]) || !isfinite(s->v[i]) || s->t[i] < tlo || s->t[i] > thi)
                continue;
            double f = (s->t[i] - tlo) / (thi - tlo) * (double)cols;
            size_t k = f >= (double)cols ? cols - 1 : f > 0 ? (size_t)f : 0;
            row[k] = count[k] == 0 ? s->v[i] : c->peak ? fmax(row[k], s->v[i]) : row[k] + s->v[i];
            count[k]++;
        }
        for (size_t k = 0; k < cols; k++)
            row[k] = count[k] == 0 ? NAN : c->peak ? row[k] : row[k] / (double)count[k];
    }
    free(count);
    return 0;
}

static int level(double v, double lo, double hi)
{
    if (!isfinite(v))
        return -1;
    double f = (v - lo) / (hi - lo) * 9;
    return f < 0 ? 0 : f >= 9 ? 8 : (int)f;
}

static void heat_json(js_html_t *h, const js_heatmap_t *c, const double *cell, size_t cols, const geom_t *g)
{
    js_buf_t j = {0};
    int err = 0;
    jraw(&j, &err, "{\"k\":\"heat\",\"box\":[");
    jnum(&j, &err, g->x0, 6);
    jraw(&j, &err, ",");
    jnum(&j, &err, g->y0, 6);
    jraw(&j, &err, ",");
    jnum(&j, &err, g->x1, 6);
    jraw(&j, &err, ",");
    jnum(&j, &err, g->y1, 6);
    jraw(&j, &err, "],\"t\":[");
    jnum(&j, &err, g->tlo, 15);
    jraw(&j, &err, ",");
    jnum(&j, &err, g->thi, 15);
    jraw(&j, &err, "],\"n\":");
    jnum(&j, &err, (double)cols, 15);
    jraw(&j, &err, c->peak ? ",\"pk\":1" : ",\"pk\":0");
    jcommon(&j, &err, c->unit, &c->time);
    jraw(&j, &err, ",\"rows\":[");
    for (size_t r = 0; r < c->nrows; r++) {
        if (r)
            jraw(&j, &err, ",");
        jstr(&j, &err, c->rows[r].name);
    }
    jraw(&j, &err, "],\"v\":[");
    for (size_t r = 0; r < c->nrows; r++) {
        jraw(&j, &err, r ? ",[" : "[");
        for (size_t k = 0; k < cols; k++) {
            if (k)
                jraw(&j, &err, ",");
            jnum(&j, &err, cell[r * cols + k], 4);
        }
        jraw(&j, &err, "]");
    }
    jraw(&j, &err, "]}");
    put_json(h, &j, err);
    buf_free(&j);
}

int svg_heatmap(js_html_t *h, const js_heatmap_t *c)
{
    if (h->err)
        return h->err;
    if (!c || !series_ok(c->rows, c->nrows))
        return h->err = -EINVAL;
    size_t cols = c->cols ? c->cols : 181;
    size_t nrows = c->nrows ? c->nrows : 1;
    if (cols > SIZE_MAX / sizeof(double) / nrows)
        return h->err = -ENOMEM;
    double *cell = malloc(nrows * cols * sizeof(double));
    if (!cell)
        return h->err = -ENOMEM;
    /* the line charts' plot box (X0 .. X1) so that a heat map lines up with the charts above it, unless a
     * row label would not fit in their margin (10 px labels, cut at 20 characters) */
    double widest = 0;
    for (size_t r = 0; r < c->nrows; r++) {
        char cut[96];
        snprintf(cut, sizeof(cut), "%.20s", c->rows[r].name ? c->rows[r].name : "");
        widest = fmax(widest, label_width(cut) * 10 / 11);
    }
    geom_t g = {.x0 = widest <= X0 - 8 ? X0 : 130, .x1 = X1, .y0 = 6};
    double rh = c->nrows <= 20 ? 18 : fmax(4, 360.0 / (double)c->nrows);
    g.y1 = g.y0 + rh * (double)nrows;
    if (c->t_max > c->t_min) {
        g.tlo = c->t_min;
        g.thi = c->t_max;
    } else
        time_range(c->rows, c->nrows, &g.tlo, &g.thi);
    if (heat_cells(c, cols, g.tlo, g.thi, cell) < 0) {
        free(cell);
        return h->err = -ENOMEM;
    }
    double lo = 0, hi = -INFINITY;
    if (c->v_max > c->v_min) {
        lo = c->v_min;
        hi = c->v_max;
    } else {
        for (size_t i = 0; i < c->nrows * cols; i++)
            if (isfinite(cell[i])) {
                lo = fmin(lo, cell[i]);
                hi = fmax(hi, cell[i]);
            }
        if (!(hi > lo))
            hi = lo + 1;
    }
    double cw = (g.x1 - g.x0) / (double)cols, height = g.y1 + 26 + 34;
    char id[64], a[64], b[64];
    html_id(h, c->id, id, sizeof(id));
    size_t at = open_figure(h, "heat", id, c->title, height, false);
    if (c->desc)
        html_text(h, c->desc);
    else {
        html_printf(h, "Heat map of %zu rows over time, %s per cell, from ", c->nrows,
                    c->peak ? "peak" : "mean");
        html_text(h, units_format(a, sizeof(a), lo, c->unit));
        html_raw(h, " (dark) to ");
        html_text(h, units_format(b, sizeof(b), hi, c->unit));
        html_raw(h, " (light).");
    }
    html_raw(h, "</desc>\n<g class=\"hm\">");
    for (size_t r = 0; r < c->nrows; r++) {
        double y = g.y0 + rh * (double)r;
        html_raw(h, "<rect class=\"na\" x=\"");
        num(h, g.x0);
        html_raw(h, "\" y=\"");
        num(h, y);
        html_raw(h, "\" width=\"");
        num(h, g.x1 - g.x0);
        html_raw(h, "\" height=\"");
        num(h, rh - (rh > 6 ? 1 : 0));
        html_raw(h, "\"/>");
        for (size_t k = 0; k < cols;) { /* runs of cells of one colour as one rect */
            int lv = level(cell[r * cols + k], lo, hi);
            size_t e = k + 1;
            while (e < cols && level(cell[r * cols + e], lo, hi) == lv)
                e++;
            if (lv >= 0) {
                html_raw(h, "<rect x=\"");
                num(h, g.x0 + cw * (double)k);
                html_raw(h, "\" y=\"");
                num(h, y);
                html_raw(h, "\" width=\"");
                num(h, cw * (double)(e - k));
                html_raw(h, "\" height=\"");
                num(h, rh - (rh > 6 ? 1 : 0));
                html_printf(h, "\" fill=\"%s\"/>", viridis[lv]);
            }
            k = e;
        }
        html_raw(h, "\n");
    }
    html_raw(h, "</g>\n");
    /* the row labels after the cells: on a phone they move inside the map (report.css) */
    html_raw(h, "<g class=\"hy\">");
    size_t every = rh >= 9 ? 1 : (size_t)ceil(9 / rh);
    for (size_t r = 0; r < c->nrows; r += every) {
        html_raw(h, "<text x=\"");
        num(h, g.x0 - 6);
        html_raw(h, "\" y=\"");
        num(h, g.y0 + rh * ((double)r + 0.5) + 3.5);
        html_raw(h, "\">");
        html_text_max(h, c->rows[r].name, 20);
        html_raw(h, "</text>");
    }
    html_raw(h, "</g>\n");
    time_axis(h, g.tlo, g.thi, g.x0, g.x1, g.y1, (unsigned)((g.x1 - g.x0) / 90), &c->time);
    html_raw(h, "<g class=\"hk\">");
    double ky = g.y1 + 30;
    for (int i = 0; i < 9; i++) {
        html_raw(h, "<rect x=\"");
        num(h, g.x0 + 28.0 * i);
        html_raw(h, "\" y=\"");
        num(h, ky);
        html_printf(h, "\" width=\"28\" height=\"10\" fill=\"%s\"/>", viridis[i]);
    }
    for (int i = 0; i <= 9; i += 3) {
        html_raw(h, "<text x=\"");
        num(h, g.x0 + 28.0 * i);
        html_raw(h, "\" y=\"");
        num(h, ky + 22);
        html_raw(h, "\" text-anchor=\"middle\">");
        html_text(h, units_format(a, sizeof(a), lo + (hi - lo) * i / 9, c->unit));
        html_raw(h, "</text>");
    }
    html_raw(h, "</g>\n</svg>\n");
    capture(h, at, id, c->title, height, NULL, 0);
    heat_json(h, c, cell, cols, &g);
    free(cell);
    return html_raw(h, "</figure>\n");
}

int svg_text_doc(js_buf_t *out, const char *title, const char *text)
{
    size_t lines = 1, width = 0, w = 0;
    for (const char *p = text; p && *p; p++) {
        if (*p == '\n') {
            lines++;
            w = 0;
        } else if (((unsigned char)*p & 0xc0) != 0x80 && ++w > width) {
            width = w;
        }
    }
    /* 800 units wide, or wider for long lines (6.4 units a character of 10.5-unit DejaVu Sans Mono) */
    double wd = fmax(800, 6.4 * (double)width + 8), ht = 40 + 13.0 * (double)lines;
    js_html_t o = {.buf = out};
    html_raw(
        &o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"");
    num(&o, wd);
    html_raw(&o, "\" height=\"");
    num(&o, ht);
    html_raw(&o, "\" viewBox=\"0 0 ");
    num(&o, wd);
    html_raw(&o, " ");
    num(&o, ht);
    html_raw(
        &o,
        "\"><rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/><text x=\"0\" y=\"18\" "
        "font-family=\"DejaVu Sans, sans-serif\" font-size=\"16\" font-weight=\"bold\" fill=\"#1a1a1a\">");
    html_text(&o, title);
    html_raw(&o,
             "</text>\n<g font-family=\"DejaVu Sans Mono, monospace\" font-size=\"10.5\" fill=\"#1a1a1a\" "
             "xml:space=\"preserve\">\n");
    double y = 44;
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        html_raw(&o, "<text x=\"0\" y=\"");
        num(&o, y);
        html_raw(&o, "\">");
        html_textn(&o, p, len);
        html_raw(&o, "</text>\n");
        y += 13;
        p = nl ? nl + 1 : p + len;
    }
    return html_raw(&o, "</g></svg>\n");
}
