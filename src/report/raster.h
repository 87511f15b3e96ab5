/* SPDX-License-Identifier: MIT
 *
 * The report's charts as pictures: PNG images and PDF documents drawn from the same SVG the HTML report
 * embeds (svg.h writes each chart also as a standalone SVG document when asked). The drawing is done by
 * librsvg (SVG to cairo) and cairo (PNG and PDF surfaces), which are loaded with dlopen the first time a
 * picture is made (rsvg_abi.h declares the subset used): jobscope builds and runs without them, and only
 * `report --format pdf|png` and `perfmon -r` need them (Debian: librsvg2-2, which brings cairo).
 *
 * Output goes to descriptors the caller opened (jobscope's output rules: never through a symbolic link, never
 * over an existing file unless asked), through cairo's stream writers. Errors come back as a negative errno
 * with one line of text; nothing here prints.
 *
 *     raster_load(err, sizeof(err));                         // -ENOENT: "PNG and PDF need librsvg: ..."
 *     raster_png(svg_doc, len, 2.0, fd, err, sizeof(err));   // one chart, twice its SVG size
 *     js_pdf_t *pdf;
 *     raster_pdf_open(fd, "job 1234", &pdf, err, sizeof(err)); // A4 pages
 *     raster_pdf_draw(pdf, doc, len, &y_mm_used, err, ...);  // stacked top to bottom, a new page when full
 *     raster_pdf_close(pdf);
 */
#ifndef JOBSCOPE_RASTER_H
#define JOBSCOPE_RASTER_H

#include <stdbool.h>
#include <stddef.h>

/* The library is librsvg-2.so.2 unless $JOBSCOPE_RSVG_LIBRARY names the file to load instead (tests). */
#define RASTER_LIBRARY_ENV "JOBSCOPE_RSVG_LIBRARY"

/* raster_load: load librsvg, cairo, GObject and GLib unless done (once per process). Returns 0, or -ENOENT
 * with one line in err ("PNG and PDF output needs librsvg and cairo (Debian: librsvg2-2): REASON"). */
int raster_load(char *err, size_t errlen);

/* raster_png: draw SVG document `svg` (`len` bytes) at `scale` times its intrinsic size (pixels) on white
 * and write it as PNG to `fd`. Returns 0 or -errno (-EINVAL: not a valid SVG document; -EIO: a write
 * failed) with err set. */
int raster_png(const char *svg, size_t len, double scale, int fd, char *err, size_t errlen);

typedef struct js_pdf js_pdf_t;

/* raster_pdf_open: a PDF of A4 pages written to `fd` (`title` in its metadata, may be NULL). Returns 0 or
 * -errno with err set; *ret owned by the caller (raster_pdf_close). */
int raster_pdf_open(int fd, const char *title, js_pdf_t **ret, char *err, size_t errlen);

/* raster_pdf_draw: draw SVG document `svg` below what the current page holds, scaled to the page's width
 * less its margins (never enlarged past `max_scale` times its size, 0: no limit); a document that does not
 * fit the rest of the page starts a new page. Returns 0 or -errno with err set. */
int raster_pdf_draw(js_pdf_t *p, const char *svg, size_t len, double max_scale, char *err, size_t errlen);

/* raster_pdf_break: start a new page (nothing when the current page is empty). */
void raster_pdf_break(js_pdf_t *p);

/* raster_pdf_pages: the pages so far (the current one included once something is drawn on it). */
int raster_pdf_pages(const js_pdf_t *p);

/* raster_pdf_close: finish the document (its last page) and free `p`; accepts NULL. Returns 0 or -EIO
 * (a write failed: the file is incomplete). */
int raster_pdf_close(js_pdf_t *p);

#endif
