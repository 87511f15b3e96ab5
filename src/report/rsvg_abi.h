/* SPDX-License-Identifier: MIT
 *
 * The part of the ABI of librsvg 2, cairo, GObject and GLib that the raster backend (src/report/raster.c)
 * uses, declared here so that jobscope builds without their development headers and loads them with dlopen
 * (src/sys/dlib.h) only when a PNG or PDF is written. Transcribed from Debian 12's headers (librsvg2-dev
 * 2.54: rsvg.h and rsvg-cairo.h; libcairo2-dev 1.16: cairo.h, cairo-pdf.h; libglib2.0-dev 2.74: gerror.h,
 * gobject.h); every declaration below is part of their stable C ABIs (librsvg-2.so.2 since 2.46 for
 * rsvg_handle_render_document, cairo 1.x, GLib 2.x). Opaque types are void; enums are int-sized.
 */
#ifndef JOBSCOPE_RSVG_ABI_H
#define JOBSCOPE_RSVG_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t domain; /* GQuark */
    int code;
    char *message;
} js_gerror_t; /* GError */

typedef struct {
    double x, y, width, height;
} js_rsvg_rect_t; /* RsvgRectangle */

typedef struct {
    int width, height;
    double em, ex;
} js_rsvg_dims_t; /* RsvgDimensionData */

typedef int (*js_cairo_write_t)(void *closure, const unsigned char *data, unsigned int length);

#define JS_CAIRO_FORMAT_ARGB32 0
#define JS_CAIRO_STATUS_SUCCESS 0
#define JS_CAIRO_STATUS_WRITE_ERROR 11
#define JS_CAIRO_PDF_METADATA_TITLE 0
#define JS_CAIRO_PDF_METADATA_CREATOR 4

typedef struct {
    /* librsvg-2.so.2 */
    void *(*rsvg_new_from_data)(const uint8_t *data, size_t len, js_gerror_t **error);
    int (*rsvg_render_document)(void *handle, void *cr, const js_rsvg_rect_t *viewport, js_gerror_t **error);
    int (*rsvg_intrinsic_size)(void *handle, double *w, double *h); /* 2.52+, optional */
    void (*rsvg_dimensions)(void *handle, js_rsvg_dims_t *dims);    /* the older way */
    /* libgobject-2.0.so.0, libglib-2.0.so.0 */
    void (*g_object_unref)(void *object);
    void (*g_error_free)(js_gerror_t *error);
    /* libcairo.so.2 */
    void *(*image_surface_create)(int format, int width, int height);
    void *(*pdf_surface_create_for_stream)(js_cairo_write_t write, void *closure, double w_pt, double h_pt);
    void (*pdf_set_metadata)(void *surface, int metadata, const char *utf8); /* 1.16+, optional */
    int (*surface_write_to_png_stream)(void *surface, js_cairo_write_t write, void *closure);
    int (*surface_status)(void *surface);
    void (*surface_finish)(void *surface);
    void (*surface_destroy)(void *surface);
    void *(*create)(void *surface);
    int (*status)(void *cr);
    void (*destroy)(void *cr);
    void (*save)(void *cr);
    void (*restore)(void *cr);
    void (*translate)(void *cr, double tx, double ty);
    void (*scale)(void *cr, double sx, double sy);
    void (*set_source_rgb)(void *cr, double r, double g, double b);
    void (*paint)(void *cr);
    void (*show_page)(void *cr);
} js_rsvg_api_t;

#endif
