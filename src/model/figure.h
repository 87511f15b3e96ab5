/* SPDX-License-Identifier: MIT
 *
 * The typed summary table: every figure of a run's summary is one row, { key path, unit, kind, how it was
 * obtained (method text, exact or not), value }, put there by the part of the model that owns it
 * (src/model/summary.c for the tree model's figures, each src/model/part_*.c for its own). Every view
 * renders this one table: the summary JSON (figure_json: the rows' paths are its keys), the text summary
 * (short and full: each part reads its rows back), the report's figures and advice inputs, `compare`, the
 * job summary and, through the JSON, the Python package. Nobody parses a rendered summary back.
 *
 * Rows are grouped the way the JSON nests them: a figure lives in an object (named members) or an array
 * (elements, each an object: the GPUs, the top commands, the phases); the groups are figures too (kinds
 * FIG_OBJECT, FIG_ARRAY), so the table is a tree whose leaves are the rows, in the order they were put.
 *
 * A path names a figure from a group (usually the root): members separated by '.', an array element by its
 * index in brackets after the array's name, and two placeholders that keep a row's whole path in one
 * greppable string while a part loops:
 *   "cpu.total_s"                   a member of a member
 *   "gpu.devices[0].energy_j"      element 0 of array gpu.devices
 *   "gpu.devices[].energy_j"       the last element (the one fig_put_elem just appended)
 *   "perf.events.{}.count"         the member of perf.events that fig_name last named (any text)
 * A member name holding '.', '[', ']', '{', '}' or '\' is written with a backslash before that character
 * (fig_path does so); names given to fig_name are taken as they are.
 *
 * Units (of FIG_NUM and FIG_INT rows) are the views' words: "s", "ns", "bytes", "bytes/s", "count",
 * "fraction", "ratio", "cores", "J", "W", "MHz", "celsius", "events", "GFLOP", "GB/s"; NULL for text, flags,
 * identifiers. Errors are sticky in the table (figure_error), so a part puts its rows without checking each.
 */
#ifndef JOBSCOPE_MODEL_FIGURE_H
#define JOBSCOPE_MODEL_FIGURE_H

#include "core/json.h"
#include "sys/fsroot.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    FIG_NUM,    /* a real number (NAN: missing) */
    FIG_INT,    /* an integer */
    FIG_BOOL,   /* a flag */
    FIG_TEXT,   /* text (a method, a name, a reason) */
    FIG_JSON,   /* a value already written as JSON text (the command's arguments, a mark's data) */
    FIG_OBJECT, /* a group of named members */
    FIG_ARRAY,  /* a group of elements */
    FIG_KIND_MAX
} js_fig_kind_t;

/* Whether a figure is exact: said by the part that owns it where that matters (kernel accounting that covers
 * every process of the scope), else unsaid. */
typedef enum { FIG_UNSAID, FIG_SAMPLED, FIG_EXACT, FIG_EXACT_MAX } js_fig_exact_t;

/* How a figure of one node combines into a batch job's summary (fig_merge): not at all, summed over the
 * nodes, the largest, or true only when true on every node. */
typedef enum { FIG_MERGE_NONE, FIG_MERGE_SUM, FIG_MERGE_MAX, FIG_MERGE_ALL, FIG_MERGE_MAX_ } js_fig_merge_t;

typedef struct js_figure js_figure_t;
struct js_figure {
    char *name; /* the member's name in its object; NULL for an array's element and the root */
    js_fig_kind_t kind;
    bool present;           /* the value is known (false: null; a NAN number, a NULL text) */
    double num;             /* FIG_NUM */
    int64_t i;              /* FIG_INT */
    bool b;                 /* FIG_BOOL */
    char *text;             /* FIG_TEXT, FIG_JSON (owned) */
    const char *unit;       /* FIG_NUM, FIG_INT: static text, NULL for none */
    char *method;           /* how the figure was obtained (owned), or NULL */
    const char *method_key; /* the sibling member the JSON writes `method` under (static), or NULL */
    js_fig_exact_t exact;
    js_fig_merge_t merge;
    /* the tree */
    js_figure_t *parent;
    size_t idx;         /* position among the parent's members or elements */
    js_figure_t **kids; /* FIG_OBJECT, FIG_ARRAY: members or elements, in the order put */
    size_t nkids, cap;
    char *cur; /* FIG_OBJECT: the member "{}" stands for (fig_name) */
};

typedef struct js_summary_table js_summary_table_t;

/* figure_new: an empty table (its root an empty object). NULL on ENOMEM. */
js_summary_table_t *figure_new(void);

/* figure_free: accepts NULL. */
void figure_free(js_summary_table_t *t);

/* figure_root: the root object, the base of the paths below. */
js_figure_t *figure_root(js_summary_table_t *t);
const js_figure_t *figure_croot(const js_summary_table_t *t);

/* figure_error: 0, or the first error of a put: -ENOMEM, or -EINVAL (a path that is not valid here: a value
 * where a group is, "[]" of an empty array, "{}" before fig_name). */
int figure_error(const js_summary_table_t *t);

/* ---- putting rows (each returns the row, or NULL after an error, which the table keeps) ---------------- */

/* fig_put_num / _int / _bool / _text / _json: set the value of the figure at `path` below group `at`,
 * making it and its groups where missing (a figure set twice keeps its place and takes the new value). A
 * NAN number or a NULL text is a missing value (null in the JSON). */
js_figure_t *fig_put_num(js_figure_t *at, const char *path, const char *unit, double v);
js_figure_t *fig_put_int(js_figure_t *at, const char *path, const char *unit, int64_t v);
js_figure_t *fig_put_bool(js_figure_t *at, const char *path, bool v);
js_figure_t *fig_put_text(js_figure_t *at, const char *path, const char *s);
js_figure_t *fig_put_json(js_figure_t *at, const char *path, const char *json);

/* fig_put_null: make the row's value missing (an integer or a flag that is not known). Returns f. */
js_figure_t *fig_put_null(js_figure_t *f);

/* fig_put_object / fig_put_array: the group at `path`, made (empty) where missing. */
js_figure_t *fig_put_object(js_figure_t *at, const char *path);
js_figure_t *fig_put_array(js_figure_t *at, const char *path);

/* fig_put_elem: append a new element (an empty object) to the array at `path` (made where missing); "[]"
 * in later paths stands for it. */
js_figure_t *fig_put_elem(js_figure_t *at, const char *path);

/* fig_name: "{}" in later paths, below the object at `path` (made where missing), stands for its member
 * `name` (any text). Returns the object. */
js_figure_t *fig_name(js_figure_t *at, const char *path, const char *name);

/* fig_how: say how figure f was obtained: `method` (copied; NULL for unknown), written by the JSON as f's
 * sibling member `method_key` (static; NULL: the method is not in the JSON). Returns f (NULL passes). */
js_figure_t *fig_how(js_figure_t *f, const char *method_key, const char *method);

/* fig_exact: say whether figure f is exact. Returns f. */
js_figure_t *fig_exact(js_figure_t *f, bool exact);

/* fig_merge: say how figure f combines over the nodes of a batch job (figure_merge). Returns f. */
js_figure_t *fig_merge(js_figure_t *f, js_fig_merge_t how);

/* fig_copy: put a deep copy of `src` (a group's members, or a value) at `path` below `at`, members after the
 * ones already there. Returns the copy. */
js_figure_t *fig_copy(js_figure_t *at, const char *path, const js_figure_t *src);

/* figure_merge: combine the rows of node summary `src` that say how (fig_merge) into the same paths below
 * `dst`: the first node's value, then summed (a missing value adds nothing; all missing stays missing), the
 * largest, or the flags and-ed. Returns 0 or the table's error. */
int figure_merge(js_figure_t *dst, const js_figure_t *src);

/* ---- reading rows ---------------------------------------------------------------------------------------
 */

/* fig_get: the figure (row or group) at `path` below `at`, or NULL (no such figure; `at` NULL). */
const js_figure_t *fig_get(const js_figure_t *at, const char *path);

/* fig_at: fig_get, for changing the figure's attributes (fig_how, fig_exact, fig_merge). */
js_figure_t *fig_at(js_figure_t *at, const char *path);

/* fig_num: the number at `path` (an integer too), NAN when missing, null or not a number. */
double fig_num(const js_figure_t *at, const char *path);

/* fig_int: the integer at `path` (a whole number too), or `dflt`. */
int64_t fig_int(const js_figure_t *at, const char *path, int64_t dflt);

/* fig_text: the text at `path`, NULL when missing or null. Borrowed from the table. */
const char *fig_text(const js_figure_t *at, const char *path);

/* fig_bool: the flag at `path`: 1, 0, or -1 when missing or null. */
int fig_bool(const js_figure_t *at, const char *path);

/* fig_count: members or elements of group g (0 for NULL or a value). */
size_t fig_count(const js_figure_t *g);

/* fig_kid: member or element i of group g, NULL past the end. */
const js_figure_t *fig_kid(const js_figure_t *g, size_t i);

/* fig_is_group: an object or an array. */
bool fig_is_group(const js_figure_t *f);

/* fig_value: a row's value as a number (NUM, INT; BOOL as 0 or 1), NAN when missing or text. */
double fig_value(const js_figure_t *f);

/* fig_next_row: the row after `prev` in document order below `at` (its first with prev NULL); rows are the
 * values, not the groups. NULL after the last. */
const js_figure_t *fig_next_row(const js_figure_t *at, const js_figure_t *prev);

/* fig_path: append the path of f from the root ("gpu.devices[0].energy_j"). Returns 0 or -ENOMEM. */
int fig_path(const js_figure_t *f, js_buf_t *b);

/* ---- rendering ------------------------------------------------------------------------------------------
 */

/* figure_json: append the table as one JSON object (pretty-printed, trailing newline): the rows at their
 * paths, a row's method under its method key. Returns 0 or -ENOMEM. */
int figure_json(const js_summary_table_t *t, js_buf_t *b);

/* fig_json_write: write figure f as member `key` of w's current object (NULL: an element or the top). */
void fig_json_write(jw_t *w, const char *key, const js_figure_t *f);

/* fmt_bytes: "1.50 GiB"-style text into buf ("n/a" for NAN). Returns buf. */
char *fmt_bytes(char *buf, size_t cap, double bytes);

/* fig_fmt: `v` written with printf format `fmt` (one double conversion) into buf, "n/a" for NAN. Returns
 * buf. */
char *fig_fmt(char *buf, size_t cap, const char *fmt, double v);

#endif
