/* SPDX-License-Identifier: MIT
 *
 * The HDF5 export (`jobscope export --format hdf5`): every raw table of a recording, as it was recorded, for
 * h5py and pandas. Layout (docs/FORMAT.md, "HDF5"):
 *
 *   /                      attributes: every `meta` key of the recording (text), jobscope_hdf5 = "1",
 *                          tables = the table names in recording order
 *   /<table>/              a group per table; attributes: help, columns = "sample" then the column names
 *   /<table>/sample        int64: the sample number of each row
 *   /<table>/<column>      one 1-D dataset per column, all of the table's length, attributes unit, kind
 *                          (gauge, counter, label), help and, for counters, width (bits):
 *                            INT  -> int64, 0 where missing
 *                            REAL -> float64, NaN where missing
 *                            TEXT -> variable-length UTF-8 strings (the bytes recorded), "" where missing
 *   /<table>/_mask/<column> uint8, 1 where the value is missing, for every INT and TEXT column
 *
 * Rows are appended in chunks of 4096 (chunked, deflate-compressed datasets), so memory stays bounded
 * whatever the recording's length. The library's own error printing is turned off: errors come back as
 * negative errno values with a one-line reason. The library is loaded with dlopen (hdf5_load), never linked:
 * where it cannot be loaded hdf5_open fails with the loader's reason.
 */
#ifndef JOBSCOPE_HDF5_H
#define JOBSCOPE_HDF5_H

#include "core/sample.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct js_h5 js_h5_t;

/* The HDF5 library is loaded with dlopen by hdf5_load, from the first of Debian's and upstream's sonames for
 * HDF5 1.10 to 1.14 that loads; $JOBSCOPE_HDF5_LIBRARY names the only file to try instead (for tests). */
#define HDF5_LIBRARY_ENV "JOBSCOPE_HDF5_LIBRARY"

/* hdf5_load: load the HDF5 library unless done (once per process; a failure is retried at the next call).
 * Returns 0, or a negative errno and one line in err: -ENOENT "HDF5 library not loadable: REASON" (no
 * candidate loads, or one lacks an entry point), -ENOTSUP (a version other than 1.10 to 1.14), -EIO (H5open
 * failed). hdf5_open calls it. */
int hdf5_load(char *err, size_t errlen);

/* hdf5_open: create (truncate) the HDF5 file `path` with a group for each of the NULL-terminated `tables`.
 * Returns 0 or a negative errno with a reason in err; *ret owned by the caller (hdf5_close). */
int hdf5_open(const char *path, const js_table_t *const *tables, js_h5_t **ret, char *err, size_t errlen);

/* hdf5_meta: a root attribute `key` = `value` (text). 0 or -EIO. */
int hdf5_meta(js_h5_t *w, const char *key, const char *value);

/* hdf5_write_sample: append the rows of sample `seq` of every table given to hdf5_open (tables of `s` not
 * among them are ignored). 0, -ENOMEM or -EIO (then every later call fails too). */
int hdf5_write_sample(js_h5_t *w, int64_t seq, const js_sample_t *s);

/* hdf5_write_rows: append `rows` as rows of sample `seq` to the group of their table (rows->table, one of the
 * tables given to hdf5_open, which may be any descriptor, not only a recording's). 0, -EINVAL (not one of
 * them), -ENOMEM or -EIO. */
int hdf5_write_rows(js_h5_t *w, int64_t seq, const js_rows_t *rows);

/* hdf5_close: write what is buffered and close the file; accepts NULL. Returns 0 or the first error of the
 * writer's life (the file is then incomplete). */
int hdf5_close(js_h5_t *w);

#endif
