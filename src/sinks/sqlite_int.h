/* SPDX-License-Identifier: MIT
 *
 * What the recording's writer (sqlite.c) and reader (sqlite_read.c) share, and nothing else includes: the
 * names of the table stored by its changes (schema 2) and the names of a recording's side files.
 */
#ifndef JOBSCOPE_SQLITE_INT_H
#define JOBSCOPE_SQLITE_INT_H

#include "core/table.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define DELTA_TABLE "proc"         /* the table stored by its changes (schema 2) */
#define DELTA_STORE "proc_changes" /* ... in this SQL table, beside proc_gone */

/* storage_name: the SQL table that holds table `t`'s rows (schema 2: the delta table's changes). */
static inline const char *storage_name(const js_table_t *t)
{
    return strcmp(t->name, DELTA_TABLE) == 0 ? DELTA_STORE : t->name;
}

/* side_path: `path` + suffix ("-wal", "-shm", "-journal") into buf. 0, or -ENAMETOOLONG when it does not fit
 * (never a cut name: a cut name could be an unrelated file). */
static inline int side_path(char *buf, size_t cap, const char *path, const char *suffix)
{
    int n = snprintf(buf, cap, "%s%s", path, suffix);
    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* copy_row: append row `v` of `from` to `to` (same table). */
static inline int copy_row(js_rows_t *to, const js_rows_t *from, const js_value_t *v)
{
    js_value_t *o = rows_add(to);
    if (!o)
        return -ENOMEM;
    for (size_t c = 0; c < from->table->ncols; c++) {
        if (from->table->cols[c].type == JS_TEXT) {
            if (v[c].present) {
                const char *txt = rows_str(from, &v[c]);
                if (rows_set_str(to, &o[c], txt, strlen(txt)) < 0)
                    return -ENOMEM;
            }
        } else {
            o[c] = v[c];
        }
    }
    return 0;
}

#endif
