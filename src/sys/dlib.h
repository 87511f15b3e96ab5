/* SPDX-License-Identifier: MIT
 *
 * The dlopen helper every vendor-library source uses (NVML, ROCm SMI). jobscope never links against a vendor
 * SDK: a source names the library by soname (so the normal search path, ld.so.cache and LD_LIBRARY_PATH
 * apply), optionally an environment variable whose value is a file to load instead, and a const table of the
 * entry points it wants. Each entry lists candidate names, preferred first ("nvmlInit_v2", then "nvmlInit"),
 * and the offset of a function-pointer field in the caller's struct; dlib_resolve() binds the first candidate
 * that resolves and records which one it was. A missing optional symbol leaves its field NULL (that metric is
 * then missing); a missing required symbol fails the resolve. Failures come back as a negative errno and one
 * line of text (dlerror's reason) in a caller buffer; nothing here prints or exits.
 */
#ifndef JOBSCOPE_DLIB_H
#define JOBSCOPE_DLIB_H

#include <stdbool.h>
#include <stddef.h>

#define DLIB_MAX_NAMES 4   /* candidate names per symbol */
#define DLIB_PATH_MAX 4096 /* room for the path of the loaded file */

/* An opened library. Zero-initialise, or use the result of a failed dlib_open(), for dlib_close(). */
typedef struct {
    void *handle;
    char path[DLIB_PATH_MAX]; /* the file actually mapped (symlinks resolved when possible), "" if unknown */
    char opened_as[256];      /* the candidate that opened it: the override's value or one of the sonames */
    bool from_env;            /* opened through the override variable */
} js_dlib_t;

/* One entry point to resolve into a caller struct: `names` tried in order (unused slots NULL), the address
 * written with memcpy into the function-pointer field at `offset` (POSIX guarantees that a dlsym result
 * converts to a function pointer). A field whose symbol does not resolve is set to NULL. */
typedef struct {
    const char *names[DLIB_MAX_NAMES];
    size_t offset;
    bool required;
} js_dlsym_t;

/* dlib_open: load the first loadable candidate with dlopen(RTLD_NOW | RTLD_LOCAL).
 * `env_override` (may be NULL) is the name of an environment variable: when it is set and non-empty its value
 * is the only candidate (a path or a soname); otherwise `sonames` (NULL-terminated) are tried in order.
 * Returns 0, or -ENOENT when no candidate could be loaded (then `err`, if not NULL, holds one line naming
 * each candidate and dlerror's reason, truncated to `errlen`). On failure `*ret` is left closed (handle
 * NULL). */
int dlib_open(js_dlib_t *ret, const char *env_override, const char *const *sonames, char *err, size_t errlen);

/* dlib_resolve: bind the `n` entries of `table` into the struct at `base`. For entry i, `ret_bound[i]` (if
 * `ret_bound` is not NULL) receives the candidate name that was bound, or NULL. Returns the number of entries
 * bound (>= 0), or -ENOENT when a required entry resolved under none of its names: then every field of the
 * table is reset to NULL and `err` (if not NULL) names the first such entry's candidates. */
int dlib_resolve(const js_dlib_t *lib, const js_dlsym_t *table, size_t n, void *base, const char **ret_bound,
                 char *err, size_t errlen);

/* dlib_close: dlclose the library and reset `lib`; accepts a zeroed or already closed one. Function pointers
 * resolved from it must not be called afterwards. */
void dlib_close(js_dlib_t *lib);

#endif
