/* SPDX-License-Identifier: MIT
 *
 * The `thermal` source (see thermal.h). Sensors are found once, at init; each tempK_input or zone `temp` is
 * opened then and re-read with one pread per sample. A read that fails (a zone that is disabled answers
 * ENODATA or EAGAIN) leaves that sample's value missing. No sensor disables the source (init returns
 * -ENODEV).
 */
#include "sources/thermal.h"

#include "sys/sysattr.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const js_column_t thermal_cols[THERMAL__MAX] = {
    [THERMAL_SENSOR] = {"sensor", "text", JS_TEXT, JS_LABEL, 0, "hwmonN/tempK or thermal_zoneN"},
    [THERMAL_CHIP] = {"chip", "text", JS_TEXT, JS_LABEL, 0, "hwmon chip name, or thermal zone type"},
    [THERMAL_LABEL] = {"label", "text", JS_TEXT, JS_LABEL, 0, "hwmon tempK_label (NULL where there is none)"},
    [THERMAL_TEMP_MC] = {"temp_millicelsius", "millicelsius", JS_INT, JS_GAUGE, 0,
                         "temperature (tempK_input or thermal_zoneN/temp)"},
};
const js_table_t table_thermal = {"thermal", "temperatures from hwmon and thermal zones, one row per sensor",
                                  THERMAL__MAX, thermal_cols};

static const js_table_t *const thermal_tables[] = {&table_thermal, NULL};

typedef struct {
    char sensor[64];
    char chip[64];
    char label[64]; /* "" = none */
    char dir[96];   /* the attribute directory, for the inventory */
    int index;      /* K of tempK (hwmon), -1 for a zone */
    int fd;
} sensor_t;

typedef struct {
    sensor_t *s;
    size_t n, cap;
} thermal_state_t;

static sensor_t *sensor_new(thermal_state_t *st)
{
    if (st->n == st->cap) {
        size_t cap = st->cap ? st->cap * 2 : 8;
        sensor_t *g = realloc(st->s, cap * sizeof(*g));
        if (!g)
            return NULL;
        st->s = g;
        st->cap = cap;
    }
    sensor_t *s = &st->s[st->n];
    memset(s, 0, sizeof(*s));
    s->fd = -1;
    return s;
}

/* temp_index: K for a name "tempK_input", else -1. */
static int temp_index(const char *name)
{
    int64_t k;
    char num[16];
    const char *end = strstr(name, "_input");
    size_t len = end ? (size_t)(end - name) : 0;
    if (!end || strcmp(end, "_input") != 0 || len <= 4 || len - 4 >= sizeof(num))
        return -1;
    memcpy(num, name + 4, len - 4);
    num[len - 4] = '\0';
    return sysattr_parse_i64(num, &k) == 0 && k >= 0 && k < 100000 ? (int)k : -1;
}

/* add_hwmon: the temperature inputs of class/hwmon/`hw`. Returns 0 or -ENOMEM. */
static int add_hwmon(int sys, const char *hw, thermal_state_t *st)
{
    char dir[96], path[192], chip[64];
    char **names = NULL;
    int n = 0;
    /* attributes in hwmonN/, or in hwmonN/device/ for drivers of old kernels */
    static const char *const subdirs[] = {"", "/device"};
    for (size_t d = 0; d < 2; d++) {
        snprintf(dir, sizeof(dir), "class/hwmon/%s%s", hw, subdirs[d]);
        n = sysattr_list(sys, dir, "temp", &names);
        if (n == -ENOMEM)
            return n;
        bool any = false;
        for (int i = 0; i < n && !any; i++)
            any = temp_index(names[i]) >= 0;
        if (any)
            break;
        sysattr_list_free(names);
        names = NULL;
        n = 0;
    }
    if (!names)
        return 0;
    snprintf(path, sizeof(path), "%s/name", dir);
    if (sysattr_read_str(sys, path, chip, sizeof(chip)) <= 0) {
        snprintf(path, sizeof(path), "class/hwmon/%s/name", hw); /* attributes in device/, name above */
        if (sysattr_read_str(sys, path, chip, sizeof(chip)) <= 0)
            snprintf(chip, sizeof(chip), "%s", hw);
    }
    int r = 0;
    for (int i = 0; i < n; i++) {
        int k = temp_index(names[i]);
        if (k < 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        int fd = sysattr_open(sys, path);
        if (fd < 0)
            continue;
        sensor_t *s = sensor_new(st);
        if (!s) {
            close(fd);
            r = -ENOMEM;
            break;
        }
        s->fd = fd;
        s->index = k;
        snprintf(s->sensor, sizeof(s->sensor), "%s/temp%d", hw, k);
        snprintf(s->chip, sizeof(s->chip), "%s", chip);
        snprintf(s->dir, sizeof(s->dir), "%s", dir);
        snprintf(path, sizeof(path), "%s/temp%d_label", dir, k);
        if (sysattr_read_str(sys, path, s->label, sizeof(s->label)) < 0)
            s->label[0] = '\0';
        st->n++;
    }
    sysattr_list_free(names);
    return r;
}

static void thermal_fini(void *state)
{
    thermal_state_t *st = state;
    if (!st)
        return;
    for (size_t i = 0; i < st->n; i++)
        close(st->s[i].fd);
    free(st->s);
    free(st);
}

static int thermal_init(const js_ctx_t *ctx, void **ret_state, char *why, size_t whylen)
{
    if (ctx->root.sys < 0)
        return -ENODEV;
    thermal_state_t *st = calloc(1, sizeof(*st));
    if (!st)
        return -ENOMEM;
    int r = 0;
    char **names;
    int n = sysattr_list(ctx->root.sys, "class/hwmon", "hwmon", &names);
    for (int i = 0; r == 0 && i < n; i++)
        if (strlen(names[i]) < 32)
            r = add_hwmon(ctx->root.sys, names[i], st);
    if (n >= 0)
        sysattr_list_free(names);
    if (n == -ENOMEM)
        r = n;
    n = r == 0 ? sysattr_list(ctx->root.sys, "class/thermal", "thermal_zone", &names) : -1;
    for (int i = 0; r == 0 && i < n; i++) {
        if (strlen(names[i]) >= 32)
            continue;
        char path[128];
        snprintf(path, sizeof(path), "class/thermal/%s/temp", names[i]);
        int fd = sysattr_open(ctx->root.sys, path);
        if (fd < 0)
            continue;
        sensor_t *s = sensor_new(st);
        if (!s) {
            close(fd);
            r = -ENOMEM;
            break;
        }
        s->fd = fd;
        s->index = -1;
        snprintf(s->sensor, sizeof(s->sensor), "%s", names[i]);
        snprintf(s->dir, sizeof(s->dir), "class/thermal/%s", names[i]);
        snprintf(path, sizeof(path), "class/thermal/%s/type", names[i]);
        if (sysattr_read_str(ctx->root.sys, path, s->chip, sizeof(s->chip)) <= 0)
            snprintf(s->chip, sizeof(s->chip), "%s", names[i]);
        st->n++;
    }
    if (n >= 0)
        sysattr_list_free(names);
    if (n == -ENOMEM)
        r = n;
    if (r == 0 && !st->n)
        r = -ENODEV;
    if (r < 0) {
        thermal_fini(st);
        return r;
    }
    *ret_state = st;
    return 0;
}

static int thermal_collect(void *state, js_ctx_t *ctx, js_rows_t *const *rows)
{
    (void)ctx;
    thermal_state_t *st = state;
    js_rows_t *r = rows[0];
    for (size_t i = 0; i < st->n; i++) {
        const sensor_t *s = &st->s[i];
        js_value_t *v = rows_add(r);
        if (!v || rows_set_str(r, &v[THERMAL_SENSOR], s->sensor, strlen(s->sensor)) < 0 ||
            rows_set_str(r, &v[THERMAL_CHIP], s->chip, strlen(s->chip)) < 0 ||
            (s->label[0] && rows_set_str(r, &v[THERMAL_LABEL], s->label, strlen(s->label)) < 0))
            return -ENOMEM;
        int64_t mc;
        if (sysattr_pread_i64(s->fd, &mc) == 0)
            val_int(&v[THERMAL_TEMP_MC], mc);
    }
    return 0;
}

static int thermal_inventory(void *state, const js_ctx_t *ctx, js_rows_t *inv)
{
    thermal_state_t *st = state;
    int r = inventory_addf(inv, "thermal", "sensors", "%zu", st->n);
    for (size_t i = 0; r == 0 && i < st->n; i++) {
        const sensor_t *s = &st->s[i];
        char key[128];
        snprintf(key, sizeof(key), "%s.chip", s->sensor);
        r = inventory_add(inv, "thermal", key, s->chip);
        if (r == 0 && s->label[0]) {
            snprintf(key, sizeof(key), "%s.label", s->sensor);
            r = inventory_add(inv, "thermal", key, s->label);
        }
        /* hwmon limits, where the driver has them */
        static const char *const limits[] = {"max", "crit"};
        for (size_t l = 0; r == 0 && s->index >= 0 && l < 2; l++) {
            char path[192];
            int64_t mc;
            snprintf(path, sizeof(path), "%s/temp%d_%s", s->dir, s->index, limits[l]);
            if (sysattr_read_i64(ctx->root.sys, path, &mc) == 0) {
                snprintf(key, sizeof(key), "%s.%s_millicelsius", s->sensor, limits[l]);
                r = inventory_addf(inv, "thermal", key, "%lld", (long long)mc);
            }
        }
    }
    return r;
}

const js_source_t source_thermal = {
    .name = "thermal",
    .help = "temperatures from hwmon sensors and thermal zones in sysfs",
    .tables = thermal_tables,
    .init = thermal_init,
    .collect = thermal_collect,
    .fini = thermal_fini,
    .inventory = thermal_inventory,
};
