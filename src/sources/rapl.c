/* SPDX-License-Identifier: MIT
 *
 * The `rapl` source (see rapl.h). The zones are found once, at init: every entry of class/powercap named
 * intel-rapl:P or intel-rapl:P:S (intel-rapl-mmio and intel-rapl-tpmi zones repeat the package domain through
 * another interface and are left out, so no energy is counted twice). Each zone's name and
 * max_energy_range_uj are read then; its energy_uj is opened then and re-read with one pread per sample. A
 * machine with no zone disables the source (init returns -ENODEV), so it costs nothing per sample.
 *
 * energy_uj is the kernel's conversion of a 32-bit RAPL register to microjoules: it wraps at
 * max_energy_range_uj, not at a power of two, which the model handles (counter_delta_range()). Reading it
 * costs an MSR read on the package (an IPI to one of its CPUs), a few microseconds.
 */
#include "sources/rapl.h"

#include "sys/sysattr.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const js_column_t rapl_cols[RAPL__MAX] = {
    [RAPL_ZONE] = {"zone", "text", JS_TEXT, JS_LABEL, 0, "powercap zone (class/powercap/ZONE)"},
    [RAPL_DOMAIN] = {"domain", "text", JS_TEXT, JS_LABEL, 0,
                     "zone names from the top zone down: package-0, package-0/dram, psys"},
    [RAPL_ENERGY_UJ] = {"energy_uj", "uJ", JS_INT, JS_COUNTER, 64,
                        "ZONE/energy_uj as read; wraps to 0 after max_energy_range_uj (same row)"},
    [RAPL_MAX_RANGE_UJ] = {"max_energy_range_uj", "uJ", JS_INT, JS_GAUGE, 0,
                           "ZONE/max_energy_range_uj: the value energy_uj wraps after"},
    [RAPL_ERRNO] =
        {"errno", "errno", JS_INT, JS_GAUGE, 0,
         "0, or the negative errno reading energy_uj failed with (-EACCES: root-only, Linux >= 5.10)"},
};
const js_table_t table_rapl = {"rapl", "RAPL energy counters, one row per powercap zone", RAPL__MAX,
                               rapl_cols};

static const js_table_t *const rapl_tables[] = {&table_rapl, NULL};

typedef struct {
    char zone[64];
    char domain[128];
    int64_t max_range; /* -1 when unreadable */
    int fd;            /* energy_uj, or -1 */
    int open_errno;    /* negative errno of the open when fd < 0 */
} rapl_zone_t;

typedef struct {
    rapl_zone_t *z;
    size_t n;
} rapl_state_t;

/* zone_name_ok: "intel-rapl:N" or "intel-rapl:N:M" with decimal N, M; sets *ret_parent_len to the length of
 * the parent zone's name (0 for a top zone). */
static bool zone_name_ok(const char *name, size_t *ret_parent_len)
{
    static const char prefix[] = "intel-rapl:";
    if (strncmp(name, prefix, sizeof(prefix) - 1) != 0)
        return false;
    const char *p = name + sizeof(prefix) - 1;
    int parts = 0;
    size_t last_colon = sizeof(prefix) - 2;
    for (;;) {
        if (*p < '0' || *p > '9')
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
        parts++;
        if (*p == '\0')
            break;
        if (*p != ':')
            return false;
        last_colon = (size_t)(p - name);
        p++;
    }
    if (parts > 2)
        return false;
    *ret_parent_len = parts == 1 ? 0 : last_colon;
    return true;
}

static void rapl_fini(void *state)
{
    rapl_state_t *st = state;
    if (!st)
        return;
    for (size_t i = 0; i < st->n; i++)
        if (st->z[i].fd >= 0)
            close(st->z[i].fd);
    free(st->z);
    free(st);
}

static int rapl_init(const js_ctx_t *ctx, void **ret_state, char *why, size_t whylen)
{
    if (ctx->root.sys < 0)
        return -ENODEV;
    char **names;
    int n = sysattr_list(ctx->root.sys, "class/powercap", "intel-rapl:", &names);
    if (n < 0)
        return n == -ENOENT ? -ENODEV : n;
    rapl_state_t *st = calloc(1, sizeof(*st));
    if (!st || (n && !(st->z = calloc((size_t)n, sizeof(*st->z))))) {
        free(st);
        sysattr_list_free(names);
        return -ENOMEM;
    }
    for (int i = 0; i < n; i++) {
        size_t plen;
        if (!zone_name_ok(names[i], &plen) || strlen(names[i]) >= sizeof(st->z[0].zone))
            continue;
        rapl_zone_t *z = &st->z[st->n];
        char path[192], zname[64];
        snprintf(z->zone, sizeof(z->zone), "%s", names[i]);
        snprintf(path, sizeof(path), "class/powercap/%s/name", names[i]);
        if (sysattr_read_str(ctx->root.sys, path, zname, sizeof(zname)) <= 0)
            snprintf(zname, sizeof(zname), "%s", names[i]);
        const char *parent = "";
        for (size_t k = 0; plen && k < st->n; k++)
            if (strlen(st->z[k].zone) == plen && strncmp(st->z[k].zone, names[i], plen) == 0)
                parent = st->z[k].domain;
        int w = snprintf(z->domain, sizeof(z->domain), "%s%s%s", parent, *parent ? "/" : "", zname);
        if (w < 0 || (size_t)w >= sizeof(z->domain))
            continue;
        snprintf(path, sizeof(path), "class/powercap/%s/max_energy_range_uj", names[i]);
        if (sysattr_read_i64(ctx->root.sys, path, &z->max_range) < 0 || z->max_range <= 0)
            z->max_range = -1;
        snprintf(path, sizeof(path), "class/powercap/%s/energy_uj", names[i]);
        z->fd = sysattr_open(ctx->root.sys, path);
        z->open_errno = z->fd < 0 ? z->fd : 0;
        if (z->fd < 0)
            z->fd = -1;
        st->n++;
    }
    sysattr_list_free(names);
    if (!st->n) {
        rapl_fini(st);
        return -ENODEV;
    }
    *ret_state = st;
    return 0;
}

static int rapl_collect(void *state, js_ctx_t *ctx, js_rows_t *const *rows)
{
    (void)ctx;
    rapl_state_t *st = state;
    js_rows_t *r = rows[0];
    for (size_t i = 0; i < st->n; i++) {
        const rapl_zone_t *z = &st->z[i];
        js_value_t *v = rows_add(r);
        if (!v || rows_set_str(r, &v[RAPL_ZONE], z->zone, strlen(z->zone)) < 0)
            return -ENOMEM;
        if (rows_set_str(r, &v[RAPL_DOMAIN], z->domain, strlen(z->domain)) < 0)
            return -ENOMEM;
        if (z->max_range > 0)
            val_int(&v[RAPL_MAX_RANGE_UJ], z->max_range);
        int64_t e;
        int rc = z->fd >= 0 ? sysattr_pread_i64(z->fd, &e) : z->open_errno;
        if (rc == 0 && e >= 0)
            val_int(&v[RAPL_ENERGY_UJ], e);
        val_int(&v[RAPL_ERRNO], rc == 0 && e < 0 ? -EINVAL : rc);
    }
    return 0;
}

static int rapl_inventory(void *state, const js_ctx_t *ctx, js_rows_t *inv)
{
    (void)ctx;
    rapl_state_t *st = state;
    int r = inventory_addf(inv, "rapl", "zones", "%zu", st->n);
    for (size_t i = 0; r == 0 && i < st->n; i++) {
        const rapl_zone_t *z = &st->z[i];
        char key[192];
        snprintf(key, sizeof(key), "%s.zone", z->domain);
        r = inventory_add(inv, "rapl", key, z->zone);
        if (r == 0 && z->max_range > 0) {
            snprintf(key, sizeof(key), "%s.max_energy_range_uj", z->domain);
            r = inventory_addf(inv, "rapl", key, "%lld", (long long)z->max_range);
        }
        if (r == 0) {
            snprintf(key, sizeof(key), "%s.energy", z->domain);
            if (z->fd >= 0)
                r = inventory_add(inv, "rapl", key, "readable");
            else
                r = inventory_addf(inv, "rapl", key, "unreadable: %s%s", strerror(-z->open_errno),
                                   z->open_errno == -EACCES ? " (energy_uj is root-only since Linux 5.10)"
                                                            : "");
        }
    }
    return r;
}

const js_source_t source_rapl = {
    .name = "rapl",
    .help = "RAPL energy per powercap zone (package, core, uncore, dram, psys) from sysfs",
    .tables = rapl_tables,
    .init = rapl_init,
    .collect = rapl_collect,
    .fini = rapl_fini,
    .inventory = rapl_inventory,
};
