/* SPDX-License-Identifier: MIT
 *
 * GPU selection and init reasons shared by the nvml and rocm sources (see gpu_select.h).
 */
#include "sources/gpu_select.h"

#include "core/util.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* trimmed: the [*ret_b, *ret_e) range of s[0..len) without surrounding blanks */
static void trimmed(const char *s, size_t len, size_t *ret_b, size_t *ret_e)
{
    size_t b = 0, e = len;
    while (b < e && blank(s[b]))
        b++;
    while (e > b && blank(s[e - 1]))
        e--;
    *ret_b = b;
    *ret_e = e;
}

int gpu_select_parse(const char *spec, const char *origin, gpu_sel_t *ret)
{
    memset(ret, 0, sizeof(*ret));
    ret->kind = GPU_SEL_NONE;
    snprintf(ret->origin, sizeof(ret->origin), "%s", origin ? origin : "");
    snprintf(ret->spec, sizeof(ret->spec), "%s", spec ? spec : "");
    if (!spec)
        return 0;
    size_t b, e;
    trimmed(spec, strlen(spec), &b, &e);
    if (e == b)
        return 0;
    if (e - b == 3 && strncasecmp(spec + b, "all", 3) == 0) {
        ret->kind = GPU_SEL_ALL;
        return 0;
    }
    if ((e - b == 4 && (strncasecmp(spec + b, "none", 4) == 0 || strncasecmp(spec + b, "void", 4) == 0)))
        return 0;
    gpu_sel_t tmp = *ret;
    tmp.kind = GPU_SEL_LIST;
    const char *p = spec + b, *end = spec + e;
    while (p <= end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma ? comma : end;
        size_t ib, ie;
        trimmed(p, (size_t)(stop - p), &ib, &ie);
        if (ie > ib) {
            if (tmp.n == GPU_SEL_MAX || ie - ib >= GPU_SEL_ITEM)
                return -EINVAL;
            memcpy(tmp.item[tmp.n], p + ib, ie - ib);
            tmp.item[tmp.n][ie - ib] = '\0';
            tmp.n++;
        }
        if (!comma)
            break;
        p = comma + 1;
    }
    *ret = tmp;
    return 0;
}

/* env_lookup: the value of `name` in a NUL-separated KEY=VALUE block, or NULL. */
static const char *env_lookup(const char *block, size_t len, const char *name)
{
    size_t nl = strlen(name);
    for (size_t i = 0; i < len; i += strnlen(block + i, len - i) + 1) {
        const char *kv = block + i;
        if (strnlen(kv, len - i) > nl && strncmp(kv, name, nl) == 0 && kv[nl] == '=')
            return kv + nl + 1;
    }
    return NULL;
}

int gpu_select_for(const js_ctx_t *ctx, const char *const *vars, gpu_sel_t *ret)
{
    if (ctx->scope.gpus) {
        int r = gpu_select_parse(ctx->scope.gpus, "--gpus", ret);
        return r;
    }
    if (ctx->mode == JS_MODE_RUN || (ctx->mode == JS_MODE_ATTACH && ctx->root_pid > 0)) {
        js_buf_t env = {0};
        bool have_env = false;
        if (ctx->mode == JS_MODE_ATTACH) {
            char path[32];
            snprintf(path, sizeof(path), "%d/environ", (int)ctx->root_pid);
            have_env = fs_read(ctx->root.proc, path, &env) == 0;
        }
        for (size_t i = 0; vars && vars[i]; i++) {
            const char *v = ctx->mode == JS_MODE_RUN ? getenv(vars[i])
                            : have_env               ? env_lookup(env.p, env.len, vars[i])
                                                     : NULL;
            if (!v)
                continue;
            int r = gpu_select_parse(v, vars[i], ret);
            ret->cuda_rule = true;
            buf_free(&env);
            if (r < 0) /* an unusable variable: as CUDA would, take no device */
                return gpu_select_parse("none", vars[i], ret);
            return 0;
        }
        buf_free(&env);
    }
    gpu_select_parse("all", "default", ret);
    ret->spec[0] = '\0';
    return 0;
}

static bool all_digits(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return false;
    return true;
}

/* uuid_matches: `item` is a prefix of `uuid` (case-insensitive), or of it without its "GPU-"/"MIG-" prefix */
static bool uuid_matches(const char *item, const char *uuid)
{
    if (!uuid || !*uuid)
        return false;
    size_t n = strlen(item);
    if (strncasecmp(uuid, item, n) == 0)
        return true;
    if ((strncasecmp(uuid, "GPU-", 4) == 0 || strncasecmp(uuid, "MIG-", 4) == 0) &&
        strncasecmp(uuid + 4, item, n) == 0)
        return true;
    return false;
}

/* item_device: the position in `devs` of the one device `item` names, or -1 (none, or ambiguous) */
static long item_device(const char *item, const gpu_dev_id_t *devs, size_t n)
{
    if (all_digits(item)) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(item, &end, 10);
        for (size_t i = 0; !errno && i < n; i++)
            if (devs[i].index == v)
                return (long)i;
        return -1;
    }
    if (strlen(item) < 4) /* too short to name one UUID */
        return -1;
    long found = -1;
    for (size_t i = 0; i < n; i++) {
        bool m = uuid_matches(item, devs[i].uuid);
        for (size_t k = 0; !m && k < devs[i].nsub; k++)
            m = uuid_matches(item, devs[i].sub[k]);
        if (m) {
            if (found >= 0)
                return -1;
            found = (long)i;
        }
    }
    return found;
}

static void list_append(char *buf, size_t cap, const char *item)
{
    size_t len = strnlen(buf, cap);
    if (len + 1 >= cap)
        return;
    snprintf(buf + len, cap - len, "%s%s", len ? "," : "", item);
}

size_t gpu_select_apply(const gpu_sel_t *sel, const gpu_dev_id_t *devs, size_t n, bool *ret_selected,
                        char *unmatched, size_t cap)
{
    if (unmatched && cap)
        unmatched[0] = '\0';
    for (size_t i = 0; i < n; i++)
        ret_selected[i] = sel->kind == GPU_SEL_ALL;
    if (sel->kind != GPU_SEL_LIST)
        return sel->kind == GPU_SEL_ALL ? n : 0;
    size_t count = 0;
    for (size_t k = 0; k < sel->n; k++) {
        long i = item_device(sel->item[k], devs, n);
        if (i < 0) {
            if (unmatched && cap)
                list_append(unmatched, cap, sel->item[k]);
            if (sel->cuda_rule)
                break;
            continue;
        }
        if (!ret_selected[i])
            count++;
        ret_selected[i] = true;
    }
    return count;
}

void gpu_select_describe(const gpu_sel_t *sel, char *buf, size_t cap)
{
    const char *what = sel->kind == GPU_SEL_ALL ? "all" : sel->kind == GPU_SEL_NONE ? "none" : sel->spec;
    if (strcmp(sel->origin, "default") == 0)
        snprintf(buf, cap, "all (no --gpus, no visible-devices variable)");
    else if (strcmp(sel->origin, "--gpus") == 0)
        snprintf(buf, cap, "--gpus %s", what);
    else
        snprintf(buf, cap, "%s=%s", sel->origin, sel->spec);
}

#define PROC_PID_INIT_INO 0xEFFFFFFCu /* include/linux/proc_ns.h */

const char *gpu_pid_namespace(const js_fsroot_t *root)
{
    struct stat st;
    if (!fsroot_is_live(root) || fstatat(root->proc, "self/ns/pid", &st, 0) < 0)
        return "unknown";
    return st.st_ino == PROC_PID_INIT_INO ? "initial" : "nested";
}

/* ---- init reasons ---- */

int gpu_select_source(const js_ctx_t *ctx, const char *const *vars, gpu_sel_t *ret, char *why, size_t whylen)
{
    if (gpu_select_for(ctx, vars, ret) < 0) {
        why_set(why, whylen, "invalid --gpus '%s'", ctx->scope.gpus);
        return -EINVAL;
    }
    if (ret->kind == GPU_SEL_NONE && strcmp(ret->origin, "--gpus") == 0) {
        why_set(why, whylen, "--gpus none");
        return -ECANCELED;
    }
    return 0;
}

int gpu_load(js_dlib_t *lib, const char *env, const char *const *sonames, const js_dlsym_t *syms,
             size_t nsyms, void *api, const char *what, char *why, size_t whylen)
{
    char err[1024];
    if (dlib_open(lib, env, sonames, err, sizeof(err)) < 0) {
        why_set(why, whylen, "%s not loaded: %s", what, err);
        return -ENOENT;
    }
    if (dlib_resolve(lib, syms, nsyms, api, NULL, err, sizeof(err)) < 0) {
        why_set(why, whylen, "%s: %s", lib->path[0] ? lib->path : lib->opened_as, err);
        return -ENOSYS;
    }
    return 0;
}

/* The status tables' columns (nvml.h NVS_*, rocm.h RS_*: the same order). */
enum { GS_GPU, GS_METRIC, GS_RC, GS_ERROR };

void gpu_status_once(js_rows_t *out, uint32_t *seen, int64_t index, const char *metric, int64_t rc,
                     const char *text)
{
    uint32_t bit = rc >= 0 && rc < 31 ? 1u << rc : 1u << 31;
    if (*seen & bit)
        return;
    *seen |= bit;
    js_value_t *v = out ? rows_add(out) : NULL;
    if (!v)
        return;
    val_int(&v[GS_GPU], index);
    rows_set_str(out, &v[GS_METRIC], metric, strlen(metric));
    val_int(&v[GS_RC], rc);
    rows_set_str(out, &v[GS_ERROR], text, strlen(text));
}
