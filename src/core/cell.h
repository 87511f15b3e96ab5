/* SPDX-License-Identifier: MIT
 *
 * A cell: one typed value of an output row (an integer, a real, a text or missing), what the model's derived
 * rows hold (model/model_system.h) and the tabular sinks write (sinks/tabsink.h); and fmt_real, the one way
 * a real is written as text (shortest form that reads back as the same double). A leaf module: libc only.
 */
#ifndef JOBSCOPE_CELL_H
#define JOBSCOPE_CELL_H

#include <stddef.h>
#include <stdint.h>

typedef enum { CELL_MISSING, CELL_INT, CELL_REAL, CELL_TEXT, CELL_TYPE_MAX } js_cell_type_t;

typedef struct {
    js_cell_type_t type;
    union {
        int64_t i;
        double d;
        const char *s; /* borrowed for the duration of the call that receives the cell */
    };
} js_cell_t;

static inline js_cell_t cell_int(int64_t i)
{
    js_cell_t c = {.type = CELL_INT, .i = i};
    return c;
}
static inline js_cell_t cell_real(double d)
{
    js_cell_t c = {.type = CELL_REAL, .d = d};
    return c;
}
static inline js_cell_t cell_text(const char *s)
{
    js_cell_t c = {.type = s ? CELL_TEXT : CELL_MISSING, .s = s};
    return c;
}
static inline js_cell_t cell_missing(void)
{
    js_cell_t c = {.type = CELL_MISSING, .i = 0};
    return c;
}

/* fmt_real: format `d` shortest-round-trip (integral values as integers, else "%.Ng" with the fewest digits
 * from 6 to 17 that read back as `d`) into buf (`cap` bytes). Returns buf. */
char *fmt_real(char *buf, size_t cap, double d);

#endif
