/* SPDX-License-Identifier: MIT
 *
 * The report page: one self-contained HTML file (inline CSS and JavaScript, no request leaves the page, a
 * Content-Security-Policy that forbids any), printable on A4 (charts and table rows do not split across
 * pages). A js_html_t writes into a caller-owned js_buf_t with a sticky error, like a FILE: every call after
 * a failure does nothing, and html_end() returns the first error. Every text argument is escaped (& < > " '
 * ), and bytes that would make the page invalid (control bytes, invalid UTF-8, U+FFFE/U+FFFF) become U+FFFD,
 * so command lines and file names of any content are safe to pass. The charts (svg.h) write into the same
 * js_html_t.
 *
 *     js_buf_t b = {0};
 *     js_html_t h = {.buf = &b};
 *     html_begin(&h, "jobscope report");
 *     html_header(&h, "make -j8", "host1, 2024-05-01 12:00", facts, nfacts);
 *     html_section_begin(&h, "cpu", "CPU");
 *     svg_line_chart(&h, &chart);
 *     html_section_end(&h);
 *     int r = html_end(&h);   // 0 or -ENOMEM; then write b.p (b.len bytes), buf_free(&b)
 */
#ifndef JOBSCOPE_HTML_H
#define JOBSCOPE_HTML_H

#include "core/buf.h"
#include "core/cell.h"

#include <stdbool.h>
#include <stddef.h>

/* Each chart as a standalone SVG document (svg.h writes one when js_html_t.docs is set): its title above
 * it, its legend below it, the page's chart styles inline, a white background; for PNG and PDF
 * (raster.h). */
typedef struct {
    char id[64];
    char title[160];
    js_buf_t svg;
} js_svgdoc_t;

typedef struct {
    js_svgdoc_t *v;
    size_t n, cap;
} js_svgdocs_t;

/* svgdocs_free: release the documents; accepts a zeroed list. */
void svgdocs_free(js_svgdocs_t *d);

typedef struct {
    js_buf_t *buf;      /* output (caller-owned, grown as needed) */
    int err;            /* first error (negative errno); once set, every call does nothing */
    unsigned ids;       /* counter for generated element ids */
    js_svgdocs_t *docs; /* NULL, or where each chart is also written as a standalone SVG document */
} js_html_t;

/* A key and its value: text, or a number shown in human units (units_format) when `unit` is set. */
typedef struct {
    const char *key;
    js_cell_t value; /* cell_text(), cell_real(), cell_int() or cell_missing() ("—") */
    const char *unit;
} js_kv_t;

/* A column of html_table(): name and the unit of its numeric cells (NULL: numbers as they are). */
typedef struct {
    const char *name;
    const char *unit;
} js_col_t;

typedef enum { ADVICE_INFO, ADVICE_WARN, ADVICE_CRIT, ADVICE_MAX } js_severity_t;

/* One piece of advice: what to do, why (the measured evidence), and the rule that triggered it. */
typedef struct {
    js_severity_t severity;
    const char *sentence;  /* "Request 2 cores instead of 8." */
    const char *evidence;  /* "Peak use 1.9 cores, 95th percentile 1.4 cores." (NULL: none) */
    const char *threshold; /* "peak below 50% of the cores available" (NULL: none) */
    const char *rule;      /* the rule's id, shown with the threshold ("cpu-starved"; NULL: none) */
} js_advice_t;

/* html_begin: the document head (title escaped, inline CSS, CSP) and the opening of the body.
 * Returns h->err (0 or -ENOMEM), like every function below. */
int html_begin(js_html_t *h, const char *title);

/* html_end: the inline script (tooltips, drag-to-zoom, legend toggles) and the end of the document.
 * Returns the first error of the whole page, 0 when the page is complete. */
int html_end(js_html_t *h);

/* html_raw: append markup as it is (the caller's own tags; never data). */
int html_raw(js_html_t *h, const char *markup);

/* html_printf: append formatted markup. Only integers and pre-escaped strings: %f and %g follow the locale
 * (use html_num or units_*); %s arguments are not escaped (use html_text). */
int html_printf(js_html_t *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* html_text: append `s` escaped for text and attribute values. NULL appends nothing. */
int html_text(js_html_t *h, const char *s);

/* html_textn: as html_text for `len` bytes of `s` (which may contain NUL bytes, written as U+FFFD). */
int html_textn(js_html_t *h, const char *s, size_t len);

/* html_text_max: as html_text, shortened to `max_chars` characters (code points) with an ellipsis. */
int html_text_max(js_html_t *h, const char *s, size_t max_chars);

/* html_num: append `v` with `decimals` decimals, trailing zeros dropped, locale-independent. */
int html_num(js_html_t *h, double v, int decimals);

/* html_value: append `v` in human units ("1.5 GiB"; "—" when not finite). */
int html_value(js_html_t *h, double v, const char *unit);

/* html_header: the page header: a title, an optional subtitle line, and facts as a definition list. */
int html_header(js_html_t *h, const char *title, const char *subtitle, const js_kv_t *facts, size_t nfacts);

/* html_section_begin: open a section with an id (letters, digits, '-', '_' kept, others become '_'; NULL:
 * none) and an <h2> title. Close it with html_section_end. */
int html_section_begin(js_html_t *h, const char *id, const char *title);
int html_section_end(js_html_t *h);

/* html_para: a paragraph of escaped text. */
int html_para(js_html_t *h, const char *text);

/* html_kv_table: a two-column table of keys and values. */
int html_kv_table(js_html_t *h, const js_kv_t *kv, size_t n);

/* html_table: a table with a caption (NULL: none), a header row of `ncols` column names, and `nrows` rows of
 * `ncols` cells (row-major). Numbers are right-aligned in human units of their column; text cells are escaped
 * and may wrap anywhere (long command lines); missing cells show "—". */
int html_table(js_html_t *h, const char *caption, const js_col_t *cols, size_t ncols, const js_cell_t *cells,
               size_t nrows);

/* html_advice: a list of `n` pieces of advice, each with its severity in words (not only a colour). */
int html_advice(js_html_t *h, const js_advice_t *a, size_t n);

/* html_svg_style: append the page's style rules for chart elements (those of report.css whose selectors
 * all start with "svg"), rewritten for a standalone SVG document's <style>. Returns 0 or -ENOMEM. */
int html_svg_style(js_buf_t *out);

/* html_id: an element id into buf: `id` with letters, digits, '-' and '_' kept and other bytes replaced by
 * '_', truncated to cap - 1 bytes; NULL or "": "c<N>", numbered within the page (do not use such ids
 * yourself). Returns buf. */
char *html_id(js_html_t *h, const char *id, char *buf, size_t cap);

#endif
