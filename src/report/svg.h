/* SPDX-License-Identifier: MIT
 *
 * Charts drawn as inline SVG in the report page (html.h): time-series line charts, horizontal bar charts and
 * heat maps. A chart is a title, a unit and a list of series (name, arrays of t and v) plus decorations, with
 * no knowledge of recordings: the report and compare commands fill these structures from the model's derived
 * per-sample views. Each chart is a <figure> holding a caption, an <svg> (viewBox 800 units wide, responsive
 * width, <title> and <desc> for screen readers), an HTML legend whose buttons toggle series, and a JSON block
 * with the drawn data that the page's script reads for tooltips and zoom (no <title> per point). Series are
 * downsampled (downsample.h) to about two points per horizontal unit, so a 24 h run at 1 s costs what a short
 * one does and every peak stays. Coordinates are rounded to 0.1 unit, numbers written locale-independently.
 * All structures are read-only inputs, borrowed for the call; zero-initialised fields mean "automatic".
 */
#ifndef JOBSCOPE_SVG_H
#define JOBSCOPE_SVG_H

#include "report/html.h"
#include "report/units.h"

#include <stdbool.h>
#include <stddef.h>

/* The Okabe-Ito palette, safe for the common colour-vision deficiencies. AUTO: by position in the chart (a
 * series beyond the eighth repeats the colours dashed). */
typedef enum {
    JS_COLOUR_AUTO,
    JS_BLUE,
    JS_ORANGE,
    JS_GREEN,
    JS_VERMILLION,
    JS_PURPLE,
    JS_SKY,
    JS_BLACK,
    JS_YELLOW,
    JS_COLOUR_MAX
} js_colour_t;

typedef struct {
    const char *name; /* legend label */
    const double *t;  /* seconds on the chart's time axis, non-decreasing */
    const double *v;  /* values in the chart's unit; NAN (any non-finite value) is a gap */
    size_t n;
    js_colour_t colour;
    bool fill;   /* fill the area between the line and zero */
    bool dashed; /* dashed line (e.g. the second run of a comparison) */
} js_series_t;

/* A horizontal reference line across the chart ("cores available", "memory limit"). */
typedef struct {
    double v;
    const char *label; /* drawn at the right end; NULL: the value in the chart's unit */
    js_colour_t colour;
} js_hline_t;

/* A labelled point ("kernel peak 1.2 GiB"). */
typedef struct {
    double t, v;
    const char *label; /* NULL: the value in the chart's unit */
    js_colour_t colour;
} js_marker_t;

/* A shaded interval of time (a phase), labelled at the bottom of the plot. */
typedef struct {
    double t0, t1;
    const char *label; /* NULL: none */
} js_band_t;

/* A vertical line at one moment (an event), labelled at the top of the plot. */
typedef struct {
    double t;
    const char *label; /* NULL: none */
    const char *data;  /* what the event carries (its JSON), shown in its tooltip (<title>); NULL: none */
} js_event_t;

typedef struct {
    const char *id;    /* element id prefix (see html_id); NULL: generated */
    const char *title; /* caption and accessible title */
    const char *desc;  /* accessible description; NULL: generated (each series' range and peak time) */
    const char *unit;  /* the value axis's unit (units_lookup) */
    const js_series_t *series;
    size_t nseries;
    const js_hline_t *hlines;
    size_t nhlines;
    const js_marker_t *markers;
    size_t nmarkers;
    const js_band_t *bands;
    size_t nbands;
    const js_event_t *events;
    size_t nevents;
    js_timeaxis_t time;  /* how t is labelled; zero: elapsed seconds */
    double t_min, t_max; /* time range when t_max > t_min; else the series' first to last time */
    double v_min, v_max; /* value range when v_max > v_min; else from the data, reference lines and markers,
                          * including zero, widened to nice ticks */
    unsigned height;     /* in SVG units (the width is 800); 0: 240 */
    size_t buckets;      /* downsampling buckets per series; 0: one per horizontal unit of the plot (724) */
    /* a density strip along the top of the plot (marks too many to draw one by one): ndensity counts over
     * equal buckets from density_t0 to density_t1, drawn as bars up to 12 units tall scaled to the largest;
     * NULL or 0: none */
    const double *density;
    size_t ndensity;
    double density_t0, density_t1;
} js_chart_t;

/* svg_line_chart: append a time-series line chart. Series are drawn in order (later ones on top), gaps as
 * breaks, an isolated point as a dot; fills under the lines; then reference lines, events, the density strip
 * and markers.
 * Returns h->err: 0, -ENOMEM, or -EINVAL (c NULL, or a series with n > 0 and NULL arrays), which also sticks.
 */
int svg_line_chart(js_html_t *h, const js_chart_t *c);

typedef struct {
    const char *label; /* left of the bar, shortened to 36 characters (in full in the bar's tooltip) */
    double value;      /* in the chart's unit; negative values draw no bar, NAN shows "—" */
    const char *note;  /* added to the tooltip (e.g. the full command line); NULL: none */
} js_bar_t;

typedef struct {
    const char *id, *title, *desc, *unit; /* as in js_chart_t */
    const js_bar_t *bars;                 /* drawn in this order, top to bottom */
    size_t nbars;
    js_colour_t colour; /* AUTO: blue */
} js_bars_t;

/* svg_bar_chart: append a horizontal bar chart (the top processes by CPU or memory); bars scale from zero to
 * the largest value. Returns h->err (-EINVAL also for bars NULL with nbars > 0). */
int svg_bar_chart(js_html_t *h, const js_bars_t *c);

typedef struct {
    const char *id, *title, *desc, *unit; /* as in js_chart_t */
    const js_series_t *rows; /* one per node or device: name, t, v (colour, fill, dashed unused) */
    size_t nrows;
    size_t cols; /* time buckets; 0: 181 (4 units each) */
    bool peak;   /* a cell shows the bucket's maximum (true) or mean (false) */
    js_timeaxis_t time;
    double t_min, t_max; /* as in js_chart_t */
    double v_min, v_max; /* colour scale range when v_max > v_min; else zero (or the minimum) to the max */
} js_heatmap_t;

/* svg_heatmap: append a heat map: a row per series, a column per time bucket, coloured on a 9-step viridis
 * scale (colour-blind safe, monotonic in lightness) shown as a legend; empty buckets stay light grey.
 * Returns h->err (-EINVAL also for rows NULL with nrows > 0, or a row with NULL arrays). */
int svg_heatmap(js_html_t *h, const js_heatmap_t *c);

/* svg_text_doc: a standalone SVG document (html.h's js_svgdoc_t form: white background) holding `title` in
 * bold and below it `text`, one line per line in a monospace font (a summary page of a PDF report). Appends
 * to `out`; returns 0 or -ENOMEM. */
int svg_text_doc(js_buf_t *out, const char *title, const char *text);

/* svg_colour: the "#rrggbb" of palette colour `c`; AUTO and out-of-range values give the colour of position
 * `i` in a chart. */
const char *svg_colour(js_colour_t c, size_t i);

#endif
