/* SPDX-License-Identifier: MIT
 *
 * PNG and PDF from SVG documents, through librsvg and cairo loaded with dlopen (see raster.h, rsvg_abi.h).
 */
#include "report/raster.h"

#include "report/rsvg_abi.h"
#include "sys/dlib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define A4_W 595.276 /* points */
#define A4_H 841.89
#define MARGIN 36.0
#define FOOTER 24.0

static js_rsvg_api_t api;
static js_dlib_t lib_rsvg, lib_cairo, lib_gobject, lib_glib;
static bool loaded;

/* clang-format off */
#define F(name, field, req) {{name}, offsetof(js_rsvg_api_t, field), req}
/* clang-format on */
static const js_dlsym_t rsvg_syms[] = {
    F("rsvg_handle_new_from_data", rsvg_new_from_data, true),
    F("rsvg_handle_render_document", rsvg_render_document, true),
    F("rsvg_handle_get_intrinsic_size_in_pixels", rsvg_intrinsic_size, false),
    F("rsvg_handle_get_dimensions", rsvg_dimensions, true),
};
static const js_dlsym_t gobject_syms[] = {F("g_object_unref", g_object_unref, true)};
static const js_dlsym_t glib_syms[] = {F("g_error_free", g_error_free, true)};
static const js_dlsym_t cairo_syms[] = {
    F("cairo_image_surface_create", image_surface_create, true),
    F("cairo_pdf_surface_create_for_stream", pdf_surface_create_for_stream, true),
    F("cairo_pdf_surface_set_metadata", pdf_set_metadata, false),
    F("cairo_surface_write_to_png_stream", surface_write_to_png_stream, true),
    F("cairo_surface_status", surface_status, true),
    F("cairo_surface_finish", surface_finish, true),
    F("cairo_surface_destroy", surface_destroy, true),
    F("cairo_create", create, true),
    F("cairo_status", status, true),
    F("cairo_destroy", destroy, true),
    F("cairo_save", save, true),
    F("cairo_restore", restore, true),
    F("cairo_translate", translate, true),
    F("cairo_scale", scale, true),
    F("cairo_set_source_rgb", set_source_rgb, true),
    F("cairo_paint", paint, true),
    F("cairo_show_page", show_page, true),
};
#undef F

static void unload(void)
{
    dlib_close(&lib_rsvg);
    dlib_close(&lib_cairo);
    dlib_close(&lib_gobject);
    dlib_close(&lib_glib);
    memset(&api, 0, sizeof(api));
}

/* open_one: one library and its symbols; on failure a reason in why. */
static int open_one(js_dlib_t *lib, const char *env, const char *soname, const js_dlsym_t *syms, size_t n,
                    char *why, size_t cap)
{
    const char *names[] = {soname, NULL};
    int r = dlib_open(lib, env, names, why, cap);
    if (r == 0 && dlib_resolve(lib, syms, n, &api, NULL, why, cap) < 0)
        r = -ENOENT;
    return r;
}

int raster_load(char *err, size_t errlen)
{
    if (loaded)
        return 0;
    char why[700] = "";
    /* librsvg first (the override names it); cairo, GObject and GLib are its own dependencies */
    int r = open_one(&lib_rsvg, RASTER_LIBRARY_ENV, "librsvg-2.so.2", rsvg_syms,
                     sizeof(rsvg_syms) / sizeof(rsvg_syms[0]), why, sizeof(why));
    if (r == 0)
        r = open_one(&lib_cairo, NULL, "libcairo.so.2", cairo_syms,
                     sizeof(cairo_syms) / sizeof(cairo_syms[0]), why, sizeof(why));
    if (r == 0)
        r = open_one(&lib_gobject, NULL, "libgobject-2.0.so.0", gobject_syms, 1, why, sizeof(why));
    if (r == 0)
        r = open_one(&lib_glib, NULL, "libglib-2.0.so.0", glib_syms, 1, why, sizeof(why));
    if (r < 0) {
        snprintf(err, errlen, "PNG and PDF output needs librsvg and cairo (Debian: librsvg2-2): %s", why);
        unload();
        return -ENOENT;
    }
    loaded = true;
    return 0;
}

/* ---- one document ---- */

typedef struct {
    void *h;
    double w, h_px; /* intrinsic size in pixels (CSS px: 1/96 in) */
} doc_t;

static int doc_open(doc_t *d, const char *svg, size_t len, char *err, size_t errlen)
{
    js_gerror_t *ge = NULL;
    d->h = api.rsvg_new_from_data((const uint8_t *)svg, len, &ge);
    if (!d->h) {
        snprintf(err, errlen, "not a valid SVG document: %s",
                 ge && ge->message ? ge->message : "unknown error");
        if (ge)
            api.g_error_free(ge);
        return -EINVAL;
    }
    d->w = d->h_px = 0;
    if (!api.rsvg_intrinsic_size || !api.rsvg_intrinsic_size(d->h, &d->w, &d->h_px)) {
        js_rsvg_dims_t dim = {0};
        api.rsvg_dimensions(d->h, &dim);
        d->w = dim.width;
        d->h_px = dim.height;
    }
    if (!(d->w > 0) || !(d->h_px > 0)) {
        snprintf(err, errlen, "an SVG document without a size (width and height)");
        api.g_object_unref(d->h);
        return -EINVAL;
    }
    return 0;
}

/* doc_draw: the document at its intrinsic size, on cr's current transformation. */
static int doc_draw(doc_t *d, void *cr, char *err, size_t errlen)
{
    js_rsvg_rect_t vp = {0, 0, d->w, d->h_px};
    js_gerror_t *ge = NULL;
    if (!api.rsvg_render_document(d->h, cr, &vp, &ge)) {
        snprintf(err, errlen, "cannot draw the SVG document: %s",
                 ge && ge->message ? ge->message : "unknown");
        if (ge)
            api.g_error_free(ge);
        return -EINVAL;
    }
    return 0;
}

/* stream writer: all of it to the descriptor in closure */
typedef struct {
    int fd;
    int err;
} sink_t;

static int write_fd(void *closure, const unsigned char *data, unsigned int len)
{
    sink_t *s = closure;
    while (len > 0) {
        ssize_t n = write(s->fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            s->err = n < 0 ? errno : EIO;
            return JS_CAIRO_STATUS_WRITE_ERROR;
        }
        data += n;
        len -= (unsigned int)n;
    }
    return JS_CAIRO_STATUS_SUCCESS;
}

int raster_png(const char *svg, size_t len, double scale, int fd, char *err, size_t errlen)
{
    int r = raster_load(err, errlen);
    if (r < 0)
        return r;
    doc_t d;
    if ((r = doc_open(&d, svg, len, err, errlen)) < 0)
        return r;
    scale = scale > 0 ? scale : 1;
    int w = (int)(d.w * scale + 0.5), h = (int)(d.h_px * scale + 0.5);
    void *surf = api.image_surface_create(JS_CAIRO_FORMAT_ARGB32, w, h);
    void *cr = surf ? api.create(surf) : NULL;
    if (!cr || api.status(cr) != JS_CAIRO_STATUS_SUCCESS) {
        snprintf(err, errlen, "cannot make a %dx%d image: out of memory", w, h);
        r = -ENOMEM;
    } else {
        api.set_source_rgb(cr, 1, 1, 1);
        api.paint(cr);
        api.scale(cr, scale, scale);
        r = doc_draw(&d, cr, err, errlen);
    }
    if (r == 0) {
        sink_t s = {.fd = fd};
        if (api.surface_write_to_png_stream(surf, write_fd, &s) != JS_CAIRO_STATUS_SUCCESS) {
            snprintf(err, errlen, "cannot write the PNG image: %s", strerror(s.err ? s.err : EIO));
            r = -(s.err ? s.err : EIO);
        }
    }
    if (cr)
        api.destroy(cr);
    if (surf)
        api.surface_destroy(surf);
    api.g_object_unref(d.h);
    return r;
}

/* ---- PDF ---- */

struct js_pdf {
    sink_t sink;
    void *surf, *cr;
    double y;   /* points used on the current page, from its top */
    int pages;  /* pages begun */
    bool empty; /* nothing drawn on the current page yet */
};

int raster_pdf_open(int fd, const char *title, js_pdf_t **ret, char *err, size_t errlen)
{
    *ret = NULL;
    int r = raster_load(err, errlen);
    if (r < 0)
        return r;
    js_pdf_t *p = calloc(1, sizeof(*p));
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    p->sink.fd = fd;
    p->surf = api.pdf_surface_create_for_stream(write_fd, &p->sink, A4_W, A4_H);
    p->cr = p->surf ? api.create(p->surf) : NULL;
    if (!p->cr || api.status(p->cr) != JS_CAIRO_STATUS_SUCCESS) {
        snprintf(err, errlen, "cannot start the PDF document");
        raster_pdf_close(p);
        return -ENOMEM;
    }
    if (api.pdf_set_metadata) {
        if (title)
            api.pdf_set_metadata(p->surf, JS_CAIRO_PDF_METADATA_TITLE, title);
        api.pdf_set_metadata(p->surf, JS_CAIRO_PDF_METADATA_CREATOR, "jobscope");
    }
    p->y = MARGIN;
    p->pages = 1;
    p->empty = true;
    *ret = p;
    return 0;
}

/* footer: "Page N" at the bottom of the current page. */
static void footer(js_pdf_t *p)
{
    char svg[512], err[128];
    int n = snprintf(
        svg, sizeof(svg),
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"520\" height=\"16\" viewBox=\"0 0 520 16\">"
        "<text x=\"260\" y=\"12\" font-family=\"DejaVu Sans, sans-serif\" font-size=\"9\" "
        "fill=\"#808080\" text-anchor=\"middle\" font-style=\"italic\">Page %d</text></svg>",
        p->pages);
    doc_t d;
    if (doc_open(&d, svg, (size_t)n, err, sizeof(err)) < 0)
        return;
    api.save(p->cr);
    api.translate(p->cr, (A4_W - 520) / 2, A4_H - FOOTER);
    doc_draw(&d, p->cr, err, sizeof(err));
    api.restore(p->cr);
    api.g_object_unref(d.h);
}

void raster_pdf_break(js_pdf_t *p)
{
    if (!p || p->empty)
        return;
    footer(p);
    api.show_page(p->cr);
    p->pages++;
    p->y = MARGIN;
    p->empty = true;
}

int raster_pdf_pages(const js_pdf_t *p)
{
    return p ? (p->empty ? p->pages - 1 : p->pages) : 0;
}

int raster_pdf_draw(js_pdf_t *p, const char *svg, size_t len, double max_scale, char *err, size_t errlen)
{
    doc_t d;
    int r = doc_open(&d, svg, len, err, errlen);
    if (r < 0)
        return r;
    double width = A4_W - 2 * MARGIN, bottom = A4_H - MARGIN - FOOTER;
    double s = width / d.w;
    if (max_scale > 0 && s > max_scale)
        s = max_scale;
    double h = d.h_px * s;
    if (h > bottom - MARGIN) /* taller than a page: shrunk to one */
        s *= (bottom - MARGIN) / h, h = bottom - MARGIN;
    if (p->y + h > bottom)
        raster_pdf_break(p);
    api.save(p->cr);
    api.translate(p->cr, MARGIN + (width - d.w * s) / 2, p->y);
    api.scale(p->cr, s, s);
    r = doc_draw(&d, p->cr, err, errlen);
    api.restore(p->cr);
    api.g_object_unref(d.h);
    p->y += h + 8;
    p->empty = false;
    return r;
}

int raster_pdf_close(js_pdf_t *p)
{
    if (!p)
        return 0;
    int r = 0;
    if (p->cr) {
        if (!p->empty || p->pages == 1)
            footer(p);
        api.show_page(p->cr);
        api.destroy(p->cr);
    }
    if (p->surf) {
        api.surface_finish(p->surf);
        if (api.surface_status(p->surf) != JS_CAIRO_STATUS_SUCCESS || p->sink.err)
            r = -EIO;
        api.surface_destroy(p->surf);
    }
    free(p);
    return r;
}
