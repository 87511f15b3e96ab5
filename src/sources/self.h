/* SPDX-License-Identifier: MIT
 *
 * The self source's table: the monitor's own cost per sample. Column indices are exposed for the model.
 */
#ifndef JOBSCOPE_SELF_H
#define JOBSCOPE_SELF_H

#include "core/sample.h"
#include "core/table.h"

enum {
    SELF_UTIME,
    SELF_STIME,
    SELF_MAXRSS,
    SELF_RSS,
    SELF_PREV_WRITE,
    SELF_WRITE_ERRORS,
    SELF_MARKS,
    SELF_MARKS_REJECTED,
    SELF_MARKS_SENDERS_DROPPED,
    SELF_IO_RCHAR, /* the monitor thread's own I/O (its /proc task io), in proc_tree's io order */
    SELF_IO_WCHAR,
    SELF_IO_SYSCR,
    SELF_IO_SYSCW,
    SELF_IO_READ_BYTES,
    SELF_IO_WRITE_BYTES,
    SELF_THREADS, /* embedded: the monitor's threads inside the watched process */
    SELF_FDS,     /* embedded: the embedding's descriptors in the watched process's table */
    SELF__MAX
};

extern const js_table_t table_self;

/* self_marks_update: set the mark counters of the sample's self row (if it has one) to ctx's, read after the
 * monitor received the marks the sample takes (the row was collected before). */
void self_marks_update(js_sample_t *s, const js_ctx_t *ctx);

#endif
