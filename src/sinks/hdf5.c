/* SPDX-License-Identifier: MIT
 *
 * The HDF5 export writer (see hdf5.h), on the HDF5 C library. The library is not linked: hdf5_load opens it
 * with dlopen (sys/dlib.h) the first time an HDF5 file is written, trying the sonames of Debian's serial
 * build and of upstream's for HDF5 1.10 to 1.14, binds the entry points and global identifiers declared in
 * sinks/h5_abi.h and calls H5open (which fills those globals). Without it, `export --format hdf5` fails with
 * one line saying why, and nothing else changes. Each column buffers up to CHUNK rows; a full buffer (or the
 * close) extends the column's datasets and writes the rows as one hyperslab.
 */
#include "sinks/hdf5.h"

#include "sinks/h5_abi.h"
#include "sys/dlib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#define CHUNK 4096

typedef struct {
    hid_t ds, mask; /* the column's dataset, its mask dataset (INT and TEXT) or -1 */
    js_type_t type;
    int64_t *i;
    double *d;
    char **s;
    uint8_t *m;
} h5col_t;

typedef struct {
    const js_table_t *t;
    hid_t g;
    hid_t sample; /* the sample-number dataset */
    int64_t *seq;
    h5col_t *cols;
    size_t n;        /* rows buffered */
    hsize_t written; /* rows in the file */
} h5tab_t;

struct js_h5 {
    hid_t f;
    hid_t str_t; /* variable-length UTF-8 string */
    bool deflate;
    h5tab_t *tabs;
    size_t ntabs;
    int err;
};

/* ---- the library ---- */

/* newest first: Debian's serial build (libhdf5_serial.so.N), then the upstream and other names */
static const char *const h5_sonames[] = {"libhdf5_serial.so.310",
                                         "libhdf5_serial.so.200",
                                         "libhdf5_serial.so.103",
                                         "libhdf5.so.310",
                                         "libhdf5.so.200",
                                         "libhdf5.so.103",
                                         NULL};

/* clang-format off */
#define F(name, field) {{name}, offsetof(js_h5_api_t, field), true}
#define V(name, field) {{name}, offsetof(js_h5_vars_t, field), true}
/* clang-format on */
static const js_dlsym_t h5_syms[] = {
    F("H5open", open),
    F("H5get_libversion", get_libversion),
    F("H5dont_atexit", dont_atexit),
    F("H5Eset_auto2", eset_auto2),
    F("H5Zfilter_avail", zfilter_avail),
    F("H5Zget_filter_info", zget_filter_info),
    F("H5Fcreate", fcreate),
    F("H5Fclose", fclose),
    F("H5Gcreate2", gcreate2),
    F("H5Gclose", gclose),
    F("H5Tcopy", tcopy),
    F("H5Tset_size", tset_size),
    F("H5Tset_cset", tset_cset),
    F("H5Tclose", tclose),
    F("H5Screate", screate),
    F("H5Screate_simple", screate_simple),
    F("H5Sselect_hyperslab", sselect_hyperslab),
    F("H5Sclose", sclose),
    F("H5Acreate2", acreate2),
    F("H5Awrite", awrite),
    F("H5Aexists", aexists),
    F("H5Aclose", aclose),
    F("H5Pcreate", pcreate),
    F("H5Pset_chunk", pset_chunk),
    F("H5Pset_fill_value", pset_fill_value),
    F("H5Pset_shuffle", pset_shuffle),
    F("H5Pset_deflate", pset_deflate),
    F("H5Pclose", pclose),
    F("H5Dcreate2", dcreate2),
    F("H5Dset_extent", dset_extent),
    F("H5Dget_space", dget_space),
    F("H5Dwrite", dwrite),
    F("H5Dclose", dclose),
};
/* the global identifiers are data: dlsym gives their addresses, read (after H5open) by h5_abi.h's macros */
static const js_dlsym_t h5_var_syms[] = {
    V("H5T_C_S1_g", c_s1),
    V("H5T_STD_I64LE_g", std_i64le),
    V("H5T_STD_U8LE_g", std_u8le),
    V("H5T_IEEE_F64LE_g", ieee_f64le),
    V("H5T_NATIVE_INT64_g", native_int64),
    V("H5T_NATIVE_UINT8_g", native_uint8),
    V("H5T_NATIVE_DOUBLE_g", native_double),
    V("H5P_CLS_DATASET_CREATE_ID_g", dataset_create),
};
#undef F
#undef V

js_h5_api_t h5_api;
js_h5_vars_t h5_vars;
static js_dlib_t h5_lib; /* loaded once, kept for the life of the process */

int hdf5_load(char *err, size_t errlen)
{
    if (h5_lib.handle)
        return 0;
    char why[700];
    int r = dlib_open(&h5_lib, HDF5_LIBRARY_ENV, h5_sonames, why, sizeof(why));
    if (r < 0) {
        snprintf(err, errlen, "HDF5 library not loadable: %s", why);
        return r;
    }
    const char *file = h5_lib.path[0] ? h5_lib.path : h5_lib.opened_as;
    unsigned maj = 0, min = 0, rel = 0;
    if (dlib_resolve(&h5_lib, h5_syms, sizeof(h5_syms) / sizeof(h5_syms[0]), &h5_api, NULL, why,
                     sizeof(why)) < 0 ||
        dlib_resolve(&h5_lib, h5_var_syms, sizeof(h5_var_syms) / sizeof(h5_var_syms[0]), &h5_vars, NULL, why,
                     sizeof(why)) < 0) {
        snprintf(err, errlen, "HDF5 library not loadable: %.200s: %.400s", file, why);
        r = -ENOENT;
    } else if (H5dont_atexit() < 0 || H5get_libversion(&maj, &min, &rel) < 0 || maj != 1 || min < 10 ||
               min > 14) {
        /* H5dont_atexit first (before any call that initialises the library): HDF5's own exit handler would
         * close again a file whose H5Fclose failed (a full disk) and crash in H5F__close_cb; every file is
         * closed by hdf5_close, and a failed one is left to the process's end like any descriptor */
        snprintf(err, errlen, "HDF5 library %u.%u.%u (%.200s) not supported: jobscope uses HDF5 1.10 to 1.14",
                 maj, min, rel, file);
        r = -ENOTSUP;
    } else if (H5open() < 0) {
        snprintf(err, errlen, "HDF5 library %.200s failed to initialise", file);
        r = -EIO;
    }
    if (r < 0) {
        dlib_close(&h5_lib);
        memset(&h5_api, 0, sizeof(h5_api));
        memset(&h5_vars, 0, sizeof(h5_vars));
    }
    return r;
}

/* ---- the writer ---- */

static hid_t str_type(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0)
        return t;
    if (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

static int attr_str(js_h5_t *w, hid_t obj, const char *name, const char *value)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = sp < 0 ? -1 : H5Acreate2(obj, name, w->str_t, sp, H5P_DEFAULT, H5P_DEFAULT);
    const char *v = value ? value : "";
    int rc = a < 0 || H5Awrite(a, w->str_t, &v) < 0 ? -EIO : 0;
    if (a >= 0)
        H5Aclose(a);
    if (sp >= 0)
        H5Sclose(sp);
    return rc;
}

static int attr_int(hid_t obj, const char *name, int64_t value)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = sp < 0 ? -1 : H5Acreate2(obj, name, H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    int rc = a < 0 || H5Awrite(a, H5T_NATIVE_INT64, &value) < 0 ? -EIO : 0;
    if (a >= 0)
        H5Aclose(a);
    if (sp >= 0)
        H5Sclose(sp);
    return rc;
}

/* attr_strs: an attribute holding an array of strings. */
static int attr_strs(js_h5_t *w, hid_t obj, const char *name, const char **v, size_t n)
{
    hsize_t dims[1] = {n};
    hid_t sp = H5Screate_simple(1, dims, NULL);
    hid_t a = sp < 0 ? -1 : H5Acreate2(obj, name, w->str_t, sp, H5P_DEFAULT, H5P_DEFAULT);
    int rc = a < 0 || H5Awrite(a, w->str_t, v) < 0 ? -EIO : 0;
    if (a >= 0)
        H5Aclose(a);
    if (sp >= 0)
        H5Sclose(sp);
    return rc;
}

/* new_dataset: an empty, extendible, chunked 1-D dataset of `type` in `g`. */
static hid_t new_dataset(js_h5_t *w, hid_t g, const char *name, hid_t type, const void *fill, bool shuffle)
{
    hsize_t dims[1] = {0}, maxd[1] = {H5S_UNLIMITED}, chunk[1] = {CHUNK};
    hid_t sp = H5Screate_simple(1, dims, maxd);
    hid_t pl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t ds = -1;
    if (sp >= 0 && pl >= 0 && H5Pset_chunk(pl, 1, chunk) >= 0 &&
        (!fill || H5Pset_fill_value(pl, type, fill) >= 0) &&
        (!shuffle || !w->deflate || H5Pset_shuffle(pl) >= 0) && (!w->deflate || H5Pset_deflate(pl, 4) >= 0))
        ds = H5Dcreate2(g, name, type, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
    if (pl >= 0)
        H5Pclose(pl);
    if (sp >= 0)
        H5Sclose(sp);
    return ds;
}

static const char *kind_name(js_kind_t k)
{
    return k == JS_COUNTER ? "counter" : k == JS_LABEL ? "label" : "gauge";
}

static int open_table(js_h5_t *w, h5tab_t *tb, const js_table_t *t)
{
    tb->t = t;
    tb->g = tb->sample = -1;
    if (!(tb->seq = malloc(CHUNK * sizeof(*tb->seq))) ||
        !(tb->cols = calloc(t->ncols ? t->ncols : 1, sizeof(*tb->cols))))
        return -ENOMEM;
    for (size_t c = 0; c < t->ncols; c++)
        tb->cols[c].ds = tb->cols[c].mask = -1;
    if ((tb->g = H5Gcreate2(w->f, t->name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0)
        return -EIO;
    const char **names = calloc(t->ncols + 1, sizeof(*names));
    if (!names)
        return -ENOMEM;
    names[0] = "sample";
    for (size_t c = 0; c < t->ncols; c++)
        names[c + 1] = t->cols[c].name;
    int rc = attr_str(w, tb->g, "help", t->help);
    rc |= attr_strs(w, tb->g, "columns", names, t->ncols + 1);
    free(names);
    if (rc)
        return -EIO;
    int64_t zero = 0;
    if ((tb->sample = new_dataset(w, tb->g, "sample", H5T_STD_I64LE, &zero, true)) < 0 ||
        attr_str(w, tb->sample, "unit", "count") < 0 || attr_str(w, tb->sample, "kind", "label") < 0 ||
        attr_str(w, tb->sample, "help", "the sample number (samples.sample)") < 0)
        return -EIO;
    hid_t gm = -1;
    for (size_t c = 0; c < t->ncols; c++) {
        const js_column_t *col = &t->cols[c];
        h5col_t *hc = &tb->cols[c];
        hc->type = col->type;
        static const double nan = NAN;
        if (col->type == JS_REAL) {
            hc->ds = new_dataset(w, tb->g, col->name, H5T_IEEE_F64LE, &nan, true);
            hc->d = malloc(CHUNK * sizeof(*hc->d));
        } else if (col->type == JS_INT) {
            hc->ds = new_dataset(w, tb->g, col->name, H5T_STD_I64LE, &zero, true);
            hc->i = malloc(CHUNK * sizeof(*hc->i));
        } else {
            hc->ds = new_dataset(w, tb->g, col->name, w->str_t, NULL, false);
            hc->s = calloc(CHUNK, sizeof(*hc->s));
        }
        if (hc->ds < 0)
            return -EIO;
        if (!hc->d && !hc->i && !hc->s)
            return -ENOMEM;
        rc = attr_str(w, hc->ds, "unit", col->unit) | attr_str(w, hc->ds, "kind", kind_name(col->kind)) |
             attr_str(w, hc->ds, "help", col->help) |
             attr_str(w, hc->ds, "type",
                      col->type == JS_INT    ? "int"
                      : col->type == JS_REAL ? "real"
                                             : "text");
        if (col->kind == JS_COUNTER && col->width)
            rc |= attr_int(hc->ds, "width", col->width);
        if (rc)
            return -EIO;
        if (col->type == JS_REAL)
            continue;
        if (gm < 0 && (gm = H5Gcreate2(tb->g, "_mask", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0)
            return -EIO;
        uint8_t one = 1;
        if ((hc->mask = new_dataset(w, gm, col->name, H5T_STD_U8LE, &one, false)) < 0 ||
            attr_str(w, hc->mask, "help", "1 where the value is missing") < 0) {
            H5Gclose(gm);
            return -EIO;
        }
        if (!(hc->m = malloc(CHUNK)))
            return -ENOMEM;
    }
    if (gm >= 0)
        H5Gclose(gm);
    return 0;
}

/* append: write `n` buffered rows of `buf` (memory type `mt`) at row `at` of ds. */
static int append(hid_t ds, hid_t mt, hsize_t at, size_t n, const void *buf)
{
    hsize_t size = at + n, start = at, cnt = n;
    if (H5Dset_extent(ds, &size) < 0)
        return -EIO;
    hid_t fs = H5Dget_space(ds);
    hid_t ms = H5Screate_simple(1, &cnt, NULL);
    int rc = fs < 0 || ms < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &cnt, NULL) < 0 ||
                     H5Dwrite(ds, mt, ms, fs, H5P_DEFAULT, buf) < 0
                 ? -EIO
                 : 0;
    if (ms >= 0)
        H5Sclose(ms);
    if (fs >= 0)
        H5Sclose(fs);
    return rc;
}

static int flush_table(js_h5_t *w, h5tab_t *tb)
{
    if (!tb->n)
        return 0;
    int rc = append(tb->sample, H5T_NATIVE_INT64, tb->written, tb->n, tb->seq);
    for (size_t c = 0; rc == 0 && c < tb->t->ncols; c++) {
        h5col_t *hc = &tb->cols[c];
        if (hc->type == JS_REAL)
            rc = append(hc->ds, H5T_NATIVE_DOUBLE, tb->written, tb->n, hc->d);
        else if (hc->type == JS_INT)
            rc = append(hc->ds, H5T_NATIVE_INT64, tb->written, tb->n, hc->i);
        else
            rc = append(hc->ds, w->str_t, tb->written, tb->n, hc->s);
        if (rc == 0 && hc->mask >= 0)
            rc = append(hc->mask, H5T_NATIVE_UINT8, tb->written, tb->n, hc->m);
    }
    for (size_t c = 0; c < tb->t->ncols; c++)
        if (tb->cols[c].s)
            for (size_t r = 0; r < tb->n; r++) {
                free(tb->cols[c].s[r]);
                tb->cols[c].s[r] = NULL;
            }
    tb->written += tb->n;
    tb->n = 0;
    return rc;
}

int hdf5_open(const char *path, const js_table_t *const *tables, js_h5_t **ret, char *err, size_t errlen)
{
    *ret = NULL;
    int lr = hdf5_load(err, errlen);
    if (lr < 0)
        return lr;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* no error stacks printed by the library */
    js_h5_t *w = calloc(1, sizeof(*w));
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    w->f = w->str_t = -1;
    size_t n = 0;
    while (tables[n])
        n++;
    unsigned cfg = 0;
    w->deflate = H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0 &&
                 H5Zget_filter_info(H5Z_FILTER_DEFLATE, &cfg) >= 0 &&
                 (cfg & H5Z_FILTER_CONFIG_ENCODE_ENABLED);
    int rc = 0;
    if (!(w->tabs = calloc(n ? n : 1, sizeof(*w->tabs)))) {
        rc = -ENOMEM;
        goto fail;
    }
    if ((w->str_t = str_type()) < 0) {
        rc = -EIO;
        goto fail;
    }
    if ((w->f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) < 0) {
        snprintf(err, errlen, "%s: cannot create the HDF5 file", path);
        free(w->tabs);
        H5Tclose(w->str_t);
        free(w);
        return -EIO;
    }
    const char **names = calloc(n + 1, sizeof(*names));
    if (!names) {
        rc = -ENOMEM;
        goto fail;
    }
    for (size_t i = 0; i < n; i++)
        names[i] = tables[i]->name;
    rc = attr_str(w, w->f, "jobscope_hdf5", "1") | attr_strs(w, w->f, "tables", names, n);
    free(names);
    if (rc) {
        rc = -EIO;
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        w->ntabs++;
        if ((rc = open_table(w, &w->tabs[i], tables[i])) < 0)
            goto fail;
    }
    *ret = w;
    return 0;
fail:
    snprintf(err, errlen, "%s: %s", path, rc == -ENOMEM ? "out of memory" : "cannot write the HDF5 file");
    w->err = rc;
    hdf5_close(w);
    return rc;
}

int hdf5_meta(js_h5_t *w, const char *key, const char *value)
{
    if (w->err)
        return w->err;
    /* a key already written (a meta key read twice) keeps its first value */
    if (H5Aexists(w->f, key) > 0)
        return 0;
    return attr_str(w, w->f, key, value);
}

/* write_rows: buffer `rows` (of tb's table) as sample `seq`, flushing full chunks. */
static int write_rows(js_h5_t *w, h5tab_t *tb, int64_t seq, const js_rows_t *rows)
{
    for (size_t r = 0; rows && r < rows->nrows; r++) {
        const js_value_t *v = rows_row(rows, r);
        size_t i = tb->n;
        tb->seq[i] = seq;
        for (size_t c = 0; c < tb->t->ncols; c++) {
            h5col_t *hc = &tb->cols[c];
            const js_value_t *x = &v[c];
            if (hc->type == JS_REAL) {
                hc->d[i] = x->present ? x->d : NAN;
                continue;
            }
            hc->m[i] = !x->present;
            if (hc->type == JS_INT) {
                hc->i[i] = x->present ? x->i : 0;
            } else if (!(hc->s[i] = strdup(x->present ? rows_str(rows, x) : ""))) {
                tb->n = i; /* the strings of this row so far are freed with the buffer */
                for (size_t d = 0; d < c; d++)
                    if (tb->cols[d].s) {
                        free(tb->cols[d].s[i]);
                        tb->cols[d].s[i] = NULL;
                    }
                return w->err = -ENOMEM;
            }
        }
        if (++tb->n == CHUNK) {
            int rc = flush_table(w, tb);
            if (rc < 0)
                return w->err = rc;
        }
    }
    return 0;
}

int hdf5_write_sample(js_h5_t *w, int64_t seq, const js_sample_t *s)
{
    if (w->err)
        return w->err;
    for (size_t k = 0; k < w->ntabs; k++) {
        int rc = write_rows(w, &w->tabs[k], seq, sample_rows_named(s, w->tabs[k].t->name));
        if (rc < 0)
            return rc;
    }
    return 0;
}

int hdf5_write_rows(js_h5_t *w, int64_t seq, const js_rows_t *rows)
{
    if (w->err)
        return w->err;
    for (size_t k = 0; k < w->ntabs; k++)
        if (w->tabs[k].t == rows->table)
            return write_rows(w, &w->tabs[k], seq, rows);
    return -EINVAL;
}

int hdf5_close(js_h5_t *w)
{
    if (!w)
        return 0;
    int rc = w->err;
    for (size_t k = 0; k < w->ntabs; k++) {
        h5tab_t *tb = &w->tabs[k];
        if (!rc && tb->cols) {
            int r = flush_table(w, tb);
            rc = rc ? rc : r;
        }
        for (size_t c = 0; tb->cols && c < tb->t->ncols; c++) {
            h5col_t *hc = &tb->cols[c];
            if (hc->ds >= 0)
                H5Dclose(hc->ds);
            if (hc->mask >= 0)
                H5Dclose(hc->mask);
            for (size_t r = 0; hc->s && r < CHUNK; r++)
                free(hc->s[r]);
            free(hc->i);
            free(hc->d);
            free(hc->s);
            free(hc->m);
        }
        if (tb->sample >= 0)
            H5Dclose(tb->sample);
        if (tb->g >= 0)
            H5Gclose(tb->g);
        free(tb->seq);
        free(tb->cols);
    }
    free(w->tabs);
    if (w->str_t >= 0)
        H5Tclose(w->str_t);
    if (w->f >= 0 && H5Fclose(w->f) < 0 && !rc)
        rc = -EIO;
    free(w);
    return rc;
}
