/* SPDX-License-Identifier: MIT
 *
 * A growable byte buffer, kept NUL-terminated by the writers below: what file readers (sys/fsroot.h), the
 * JSON writer (core/json.h), the summary and the report's HTML write into. A leaf module: it uses libc only,
 * so every layer, src/sys/ included, may use it (docs/ARCHITECTURE.md, "Layers").
 */
#ifndef JOBSCOPE_BUF_H
#define JOBSCOPE_BUF_H

#include <stddef.h>

/* A growable byte buffer, owned by the caller; zero-initialise it before the first use. */
typedef struct {
    char *p;
    size_t len;
    size_t cap;
} js_buf_t;

/* buf_reserve: make room for at least `n` bytes. Returns 0 or -ENOMEM. */
int buf_reserve(js_buf_t *b, size_t n);

/* buf_free: release the buffer; accepts a zeroed buffer and NULL. */
void buf_free(js_buf_t *b);

/* buf_append: append `len` bytes. Returns 0 or -ENOMEM. Keeps the buffer NUL-terminated. */
int buf_append(js_buf_t *b, const char *s, size_t len);

/* buf_printf: append formatted text (printf conventions). Returns 0, -EINVAL (a bad format) or -ENOMEM. */
int buf_printf(js_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
