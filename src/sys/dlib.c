/* SPDX-License-Identifier: MIT
 *
 * dlopen/dlsym/dlclose behind the small interface of dlib.h. dlerror() is cleared before each call and its
 * text copied at once (it is overwritten by the next dl* call). The path of the loaded file comes from
 * dlinfo(RTLD_DI_LINKMAP), resolved with realpath so a soname symlink shows the versioned file behind it.
 * A symbol is missing when dlsym returns NULL, whether or not dlerror() says why.
 */
#include "sys/dlib.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* dlsym's void * is stored into function-pointer fields byte for byte (POSIX requires they convert). */
typedef void (*any_fn_t)(void);
_Static_assert(sizeof(void *) == sizeof(any_fn_t), "function and object pointers differ in size");

/* Append "text" to the one-line buffer `err` (separated by "; "), replacing newlines, truncating. */
static void err_append(char *err, size_t errlen, const char *text)
{
    if (!err || errlen == 0)
        return;
    size_t len = strnlen(err, errlen - 1);
    if (len > 0 && len + 2 < errlen) {
        memcpy(err + len, "; ", 2);
        len += 2;
    }
    for (; *text && len + 1 < errlen; text++)
        err[len++] = (*text == '\n' || *text == '\r') ? ' ' : *text;
    err[len] = '\0';
}

/* Try one candidate; on failure append "prefix" + dlerror's reason to err. */
static void *try_open(const char *name, const char *prefix, char *err, size_t errlen)
{
    dlerror();
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        char line[512];
        snprintf(line, sizeof(line), "%s%s", prefix, why ? why : name);
        err_append(err, errlen, line);
    }
    return h;
}

static void fill_path(js_dlib_t *lib)
{
    lib->path[0] = '\0';
    struct link_map *lm = NULL;
    if (dlinfo(lib->handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_name)
        return;
    char *real = realpath(lm->l_name, NULL);
    snprintf(lib->path, sizeof(lib->path), "%s", real ? real : lm->l_name);
    free(real);
}

int dlib_open(js_dlib_t *ret, const char *env_override, const char *const *sonames, char *err, size_t errlen)
{
    memset(ret, 0, sizeof(*ret));
    if (err && errlen)
        err[0] = '\0';
    const char *override = env_override ? getenv(env_override) : NULL;
    if (override && *override) {
        char prefix[128];
        snprintf(prefix, sizeof(prefix), "$%s: ", env_override);
        ret->handle = try_open(override, prefix, err, errlen);
        snprintf(ret->opened_as, sizeof(ret->opened_as), "%s", override);
        ret->from_env = true;
    } else {
        for (size_t i = 0; sonames && sonames[i] && !ret->handle; i++) {
            ret->handle = try_open(sonames[i], "", err, errlen);
            snprintf(ret->opened_as, sizeof(ret->opened_as), "%s", sonames[i]);
        }
        if (!ret->handle && (!sonames || !sonames[0]))
            err_append(err, errlen, "no library name given");
    }
    if (!ret->handle) {
        memset(ret, 0, sizeof(*ret));
        return -ENOENT;
    }
    if (err && errlen)
        err[0] = '\0'; /* an earlier candidate's failure is no error once one loaded */
    fill_path(ret);
    return 0;
}

static void set_field(void *base, size_t offset, void *sym)
{
    memcpy((char *)base + offset, &sym, sizeof(sym));
}

int dlib_resolve(const js_dlib_t *lib, const js_dlsym_t *table, size_t n, void *base, const char **ret_bound,
                 char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!lib || !lib->handle || !base)
        return -EINVAL;
    int bound = 0;
    bool missing_required = false;
    for (size_t i = 0; i < n; i++) {
        const js_dlsym_t *e = &table[i];
        const char *which = NULL;
        const char *why = NULL;
        void *sym = NULL;
        for (size_t k = 0; k < DLIB_MAX_NAMES && e->names[k] && !sym; k++) {
            dlerror();
            sym = dlsym(lib->handle, e->names[k]);
            if (sym)
                which = e->names[k];
            else
                why = dlerror();
        }
        set_field(base, e->offset, sym);
        if (ret_bound)
            ret_bound[i] = which;
        if (sym) {
            bound++;
        } else if (e->required && !missing_required) {
            missing_required = true;
            char line[512];
            int len = snprintf(line, sizeof(line), "required symbol missing:");
            for (size_t k = 0; k < DLIB_MAX_NAMES && e->names[k] && len > 0 && (size_t)len < sizeof(line);
                 k++)
                len += snprintf(line + len, sizeof(line) - (size_t)len, "%s %s", k ? " or" : "", e->names[k]);
            if (why && len > 0 && (size_t)len < sizeof(line))
                snprintf(line + len, sizeof(line) - (size_t)len, " (%s)", why);
            err_append(err, errlen, line);
        }
    }
    if (missing_required) {
        for (size_t i = 0; i < n; i++) {
            set_field(base, table[i].offset, NULL);
            if (ret_bound)
                ret_bound[i] = NULL;
        }
        return -ENOENT;
    }
    return bound;
}

void dlib_close(js_dlib_t *lib)
{
    if (!lib)
        return;
    if (lib->handle)
        dlclose(lib->handle);
    memset(lib, 0, sizeof(*lib));
}
