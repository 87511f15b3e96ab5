/* SPDX-License-Identifier: MIT
 *
 * Numbers for people, written without the C library's locale: fixed and significant-digit formatting (integer
 * arithmetic, so the decimal separator is always '.'), values in human units (bytes -> KiB, MiB, GiB; SI
 * prefixes for W, J, Hz and counts; %, cores, °C), "nice" value-axis ticks in the unit the labels use (0,
 * 0.5, 1, 1.5 GiB), and time-axis ticks and labels in seconds, m:ss, h:mm:ss or wall-clock time. The SVG
 * charts and HTML tables of the report use it; the page's inline JavaScript mirrors units_format() and the
 * time labels, so tooltips and zoomed axes read the same as the static page.
 */
#ifndef JOBSCOPE_UNITS_H
#define JOBSCOPE_UNITS_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    UNIT_GLUE,  /* "1.2 GiB", "45 °C": space, then prefix and suffix */
    UNIT_TIGHT, /* "45%", "1.2k/s", "1.2k": no space */
    UNIT_WORD,  /* "1.2k pages", "1.98 cores": prefix on the number, then a space and the suffix */
    UNIT_STYLE_MAX
} js_unit_style_t;

/* How values of one unit are displayed. */
typedef struct {
    unsigned base;      /* 1024 (Ki, Mi, …), 1000 (k, M, …) or 0 (no prefixes) */
    double mul;         /* shown value = value × mul (1; 100 for fractions shown as %) */
    const char *suffix; /* "B", "B/s", "W", "%", "cores", "" (static or the caller's unit string) */
    js_unit_style_t style;
} js_unit_t;

/* units_lookup: the display rule for `unit`. Known: "bytes"/"B", "bytes/s"/"B/s", "bits/s", "%", "fraction"
 * (shown as %), "cores", "s", "°C", "W", "J", "Hz", "count" and "" (plain numbers with SI prefixes), "/s" and
 * "count/s". Any other string gets SI prefixes and is written after the number ("1.2k pages"); the returned
 * suffix then borrows `unit`. NULL means "". Never fails. */
js_unit_t units_lookup(const char *unit);

/* units_known: whether `unit` is one units_lookup() knows (by name or by its displayed suffix). */
bool units_known(const char *unit);

/* units_fixed: `v` with exactly `decimals` (0..9) decimals, "-0" never written; "NaN" or "inf" when not
 * finite; falls back to shortest round-trip ("1e+300") beyond 9e15. Returns buf (always NUL-terminated). */
char *units_fixed(char *buf, size_t cap, double v, int decimals);

/* units_sig: `v` rounded to `sig` (1..15) significant digits, written compactly: no exponent below 9e15, no
 * trailing zeros ("1288490000", "0.25", "86399.5"). For data handed to the page's script. Returns buf. */
char *units_sig(char *buf, size_t cap, double v, int sig);

/* units_format: `v` in `unit` for people, 3 significant digits, trailing zeros dropped: "1.5 GiB", "12.3
 * MiB/s", "1.98 cores", "45%", "250 W", "1.2 kJ"; "—" when not finite. Returns buf. */
char *units_format(char *buf, size_t cap, double v, const char *unit);

/* Value-axis ticks: lo + i × step for i < n, labelled in one prefix with one number of decimals. */
typedef struct {
    double lo, hi, step; /* in the data's unit; lo and hi are multiples of step enclosing the input range */
    size_t n;
    double div;   /* a label shows v × u.mul / div ... */
    int prefix;   /* ... followed by prefix number `prefix` (0: none; 3: G or Gi) */
    int decimals; /* ... with this many decimals */
    js_unit_t u;
} js_ticks_t;

/* units_ticks: about `target` (>= 2) nice ticks (1, 2 or 5 × 10^k in the label's unit) covering [lo, hi].
 * An empty or non-finite range becomes [0, 1] or [lo, lo + |lo|/10]. Returns 0 or -EINVAL (target < 2). */
int units_ticks(double lo, double hi, unsigned target, const char *unit, js_ticks_t *ret);

/* units_tick_label: the label of value `v` on the axis `tk`, short enough for the chart's left margin: "1.5
 * GiB", "40%", "2 cores", "0 GiB", "0/s" (zero without decimals, or a prefix glued to a unit), "400M" (a unit
 * units_lookup() does not know, such as "events", is left to the chart's title). Returns buf. */
char *units_tick_label(char *buf, size_t cap, const js_ticks_t *tk, double v);

typedef enum {
    JS_TIME_ELAPSED, /* seconds from the start: "30 s", "4:10", "1:02:03" */
    JS_TIME_WALL,    /* wall-clock "14:05:30", "14:05" (steps of a minute or more; "08-31" at midnight) */
    JS_TIME_MODE_MAX
} js_time_mode_t;

/* A time axis: t values are seconds from a run's start; wall-clock labels show t0_unix + t + utc_offset_s. */
typedef struct {
    js_time_mode_t mode;
    double t0_unix;   /* the start, seconds since the epoch (JS_TIME_WALL only) */
    int utc_offset_s; /* added for local time: the caller's tm_gmtoff, 0 for UTC */
} js_timeaxis_t;

typedef enum { TLABEL_S, TLABEL_MS, TLABEL_HMS, TLABEL_WALL, TLABEL_MAX } js_tlabel_t;

/* Time-axis ticks: first + i × step for i < n, all inside the range asked for. */
typedef struct {
    double first, step;
    size_t n;
    double off; /* seconds added before labelling (wall clock), 0 for elapsed time */
    js_tlabel_t style;
    int decimals; /* of the seconds field */
} js_tticks_t;

/* units_time_ticks: ticks on [lo, hi] at about `target` (>= 2) positions, on round steps (1, 2, 5, 10, 15, 30
 * s, 1, 2, 5, 10, 15, 30 min, 1, 2, 3, 6, 12 h, days) aligned to the origin (elapsed) or to the clock (wall).
 * The style follows the largest elapsed time shown: seconds below 2 min, m:ss below 1 h, h:mm:ss above.
 * Returns 0 or -EINVAL (target < 2, NULL axis, range not finite or empty). */
int units_time_ticks(double lo, double hi, unsigned target, const js_timeaxis_t *ax, js_tticks_t *ret);

/* units_time_label: the label of time `t` on the axis `tk` ("1:30", "14:05"). Returns buf. */
char *units_time_label(char *buf, size_t cap, const js_tticks_t *tk, double t);

/* units_time: a single time `t` for a sentence or tooltip: "12.5 s", "4:10", "1:02:03" or "14:05:30" (wall).
 * Returns buf. */
char *units_time(char *buf, size_t cap, double t, const js_timeaxis_t *ax);

#endif
