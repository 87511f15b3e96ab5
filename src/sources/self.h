/* SPDX-License-Identifier: MIT
 *
 * The self source's table: the monitor's own cost per sample. Column indices are exposed for the model.
 */
#ifndef JOBSCOPE_SELF_H
#define JOBSCOPE_SELF_H

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
    SELF__MAX
};

extern const js_table_t table_self;

#endif
