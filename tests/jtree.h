/* SPDX-License-Identifier: MIT
 *
 * A small JSON reader for tests: it parses what jobscope writes as JSON (the report's chart data blocks, the
 * summary) into a tree, to check it by path ("a.b.0"). The program itself never reads its own JSON back: the
 * report and the job summary read the typed summary table (model/figure.h). RFC 8259 text; \uXXXX escapes
 * (surrogate pairs too) become UTF-8; numbers (of any length) are doubles,
 * ±HUGE_VAL beyond their range. Nesting is limited to 96 levels (JSONCHECK_DEPTH_MAX, the deepest mark data,
 * plus the summary's own). The tree lives in one arena owned by the jt_doc_t.
 */
#ifndef JOBSCOPE_JTREE_H
#define JOBSCOPE_JTREE_H

#include <stdbool.h>
#include <stddef.h>

typedef enum { JT_NULL, JT_BOOL, JT_NUM, JT_STR, JT_ARR, JT_OBJ, JT_TYPE_MAX } jt_type_t;

typedef struct jt jt_t;
struct jt {
    jt_type_t type;
    const char *key; /* the member's name inside an object (NUL-terminated), NULL elsewhere */
    bool b;          /* JT_BOOL */
    double num;      /* JT_NUM */
    const char *str; /* JT_STR: NUL-terminated UTF-8 (may hold a NUL from \u0000: see len) */
    size_t len;      /* JT_STR: bytes; JT_ARR, JT_OBJ: number of children */
    jt_t *child;     /* JT_ARR, JT_OBJ: the first element or member */
    jt_t *next;      /* the next sibling */
};

typedef struct jt_block jt_block_t;
typedef struct {
    jt_t *root;
    jt_block_t *blocks; /* the arena */
} jt_doc_t;

/* jt_parse: parse `len` bytes of `text` into *ret (which the caller frees with jt_free, also on failure).
 * Returns 0, -EINVAL (not one JSON value, or nested deeper than 96) or -ENOMEM. */
int jt_parse(const char *text, size_t len, jt_doc_t *ret);

/* jt_free: release the tree; accepts a zeroed document. */
void jt_free(jt_doc_t *d);

/* jt_get: the member `key` of object `o`, or NULL (also when o is NULL or not an object). */
const jt_t *jt_get(const jt_t *o, const char *key);

/* jt_path: the value at a dotted path below `v`: object members by name, array elements by decimal index
 * ("top.by_cpu.0.comm"). NULL when any step is missing. */
const jt_t *jt_path(const jt_t *v, const char *path);

/* jt_num: the number at `path` below v (jt_path; "" is v itself), or NAN when it is missing or not a number.
 */
double jt_num(const jt_t *v, const char *path);

/* jt_str: the string at `path` below v, or NULL. */
const char *jt_str(const jt_t *v, const char *path);

#endif
