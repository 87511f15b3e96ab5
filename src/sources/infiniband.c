/* SPDX-License-Identifier: MIT
 *
 * The `infiniband` source (see infiniband.h). Devices, ports and the counter files each port has are found
 * once, at init; every file read later is opened then and re-read with one pread per read. A file that
 * prints something other than a number ("N/A (no PMA)" when the PMA query fails) leaves its value missing.
 * No RDMA device disables the source (init returns -ENODEV).
 */
#include "sources/infiniband.h"

#include "sys/sysattr.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* clang-format off */
#define DATA(n, h) {n, "4bytes", JS_INT, JS_COUNTER, 64, h " (4-byte words; width in data_width_bits)"}
#define PKTS(n, h) {n, "packets", JS_INT, JS_COUNTER, 64, h " (width in data_width_bits)"}
#define ERRS(n, w, h) {n, "count", JS_INT, JS_COUNTER, w, h}
/* clang-format on */

static const js_column_t ib_port_cols[IB__MAX] = {
    [IB_HCA] = {"hca", "text", JS_TEXT, JS_LABEL, 0, "RDMA device (class/infiniband/HCA)"},
    [IB_PORT] = {"port", "id", JS_INT, JS_LABEL, 0, "port number"},
    [IB_DATA_WIDTH] = {"data_width_bits", "bits", JS_INT, JS_GAUGE, 0,
                       "width of the data and packet counters: 64 with the extended set, else 32"},
    [IB_XMIT_DATA] = DATA("xmit_data_4bytes", "counters/port_xmit_data: data sent"),
    [IB_RCV_DATA] = DATA("rcv_data_4bytes", "counters/port_rcv_data: data received"),
    [IB_XMIT_PACKETS] = PKTS("xmit_packets", "counters/port_xmit_packets"),
    [IB_RCV_PACKETS] = PKTS("rcv_packets", "counters/port_rcv_packets"),
    [IB_UNICAST_XMIT_PACKETS] = PKTS("unicast_xmit_packets", "counters/unicast_xmit_packets (extended set)"),
    [IB_UNICAST_RCV_PACKETS] = PKTS("unicast_rcv_packets", "counters/unicast_rcv_packets (extended set)"),
    [IB_MULTICAST_XMIT_PACKETS] =
        PKTS("multicast_xmit_packets", "counters/multicast_xmit_packets (extended set)"),
    [IB_MULTICAST_RCV_PACKETS] =
        PKTS("multicast_rcv_packets", "counters/multicast_rcv_packets (extended set)"),
    [IB_SYMBOL_ERROR] = ERRS("symbol_errors", 16, "counters/symbol_error: minor link errors"),
    [IB_LINK_ERROR_RECOVERY] =
        ERRS("link_error_recoveries", 8, "counters/link_error_recovery: link retrainings that succeeded"),
    [IB_LINK_DOWNED] = ERRS("link_downed", 8, "counters/link_downed: link retrainings that failed"),
    [IB_RCV_ERRORS] = ERRS("rcv_errors", 16, "counters/port_rcv_errors: packets received with errors"),
    [IB_RCV_REMOTE_PHYSICAL_ERRORS] =
        ERRS("rcv_remote_physical_errors", 16,
             "counters/port_rcv_remote_physical_errors: packets marked bad upstream"),
    [IB_RCV_SWITCH_RELAY_ERRORS] =
        ERRS("rcv_switch_relay_errors", 16, "counters/port_rcv_switch_relay_errors: packets not relayed"),
    [IB_XMIT_DISCARDS] = ERRS("xmit_discards", 16, "counters/port_xmit_discards: outbound packets discarded"),
    [IB_XMIT_CONSTRAINT_ERRORS] = ERRS("xmit_constraint_errors", 8, "counters/port_xmit_constraint_errors"),
    [IB_RCV_CONSTRAINT_ERRORS] = ERRS("rcv_constraint_errors", 8, "counters/port_rcv_constraint_errors"),
    [IB_LOCAL_LINK_INTEGRITY_ERRORS] =
        ERRS("local_link_integrity_errors", 4, "counters/local_link_integrity_errors"),
    [IB_EXCESSIVE_BUFFER_OVERRUN_ERRORS] =
        ERRS("excessive_buffer_overrun_errors", 4, "counters/excessive_buffer_overrun_errors"),
    [IB_VL15_DROPPED] = ERRS("vl15_dropped", 16, "counters/VL15_dropped: management packets dropped"),
    [IB_XMIT_WAIT] =
        ERRS("xmit_wait_ticks", 32, "counters/port_xmit_wait: ticks with data to send but no credit"),
};
const js_table_t table_ib_port = {"ib_port", "InfiniBand/RDMA port counters, one row per port", IB__MAX,
                                  ib_port_cols};

static const js_column_t ib_hw_cols[IBHW__MAX] = {
    [IBHW_HCA] = {"hca", "text", JS_TEXT, JS_LABEL, 0, "RDMA device"},
    [IBHW_PORT] = {"port", "id", JS_INT, JS_LABEL, 0, "port number"},
    [IBHW_COUNTER] = {"counter", "text", JS_TEXT, JS_LABEL, 0, "hw_counters file name (driver-specific)"},
    [IBHW_VALUE] = {"value", "count", JS_INT, JS_COUNTER, 64, "its value (u64 in the kernel)"},
};
const js_table_t table_ib_hw = {"ib_hw", "driver counters of each RDMA port (hw_counters/), at the cadence",
                                IBHW__MAX, ib_hw_cols};

static const js_table_t *const ib_tables[] = {&table_ib_port, &table_ib_hw, NULL};

/* counters/ file of each column from IB_XMIT_DATA on */
static const char *const counter_files[IB__MAX] = {
    [IB_XMIT_DATA] = "port_xmit_data",
    [IB_RCV_DATA] = "port_rcv_data",
    [IB_XMIT_PACKETS] = "port_xmit_packets",
    [IB_RCV_PACKETS] = "port_rcv_packets",
    [IB_UNICAST_XMIT_PACKETS] = "unicast_xmit_packets",
    [IB_UNICAST_RCV_PACKETS] = "unicast_rcv_packets",
    [IB_MULTICAST_XMIT_PACKETS] = "multicast_xmit_packets",
    [IB_MULTICAST_RCV_PACKETS] = "multicast_rcv_packets",
    [IB_SYMBOL_ERROR] = "symbol_error",
    [IB_LINK_ERROR_RECOVERY] = "link_error_recovery",
    [IB_LINK_DOWNED] = "link_downed",
    [IB_RCV_ERRORS] = "port_rcv_errors",
    [IB_RCV_REMOTE_PHYSICAL_ERRORS] = "port_rcv_remote_physical_errors",
    [IB_RCV_SWITCH_RELAY_ERRORS] = "port_rcv_switch_relay_errors",
    [IB_XMIT_DISCARDS] = "port_xmit_discards",
    [IB_XMIT_CONSTRAINT_ERRORS] = "port_xmit_constraint_errors",
    [IB_RCV_CONSTRAINT_ERRORS] = "port_rcv_constraint_errors",
    [IB_LOCAL_LINK_INTEGRITY_ERRORS] = "local_link_integrity_errors",
    [IB_EXCESSIVE_BUFFER_OVERRUN_ERRORS] = "excessive_buffer_overrun_errors",
    [IB_VL15_DROPPED] = "VL15_dropped",
    [IB_XMIT_WAIT] = "port_xmit_wait",
};

#define IB_EVERY_SAMPLE_LAST IB_RCV_PACKETS /* columns up to this one are read every sample */

typedef struct {
    char *name;
    int fd;
} hw_counter_t;

typedef struct {
    char hca[64];
    int port;
    int width; /* 32 or 64 */
    int fd[IB__MAX];
    hw_counter_t *hw;
    size_t nhw;
} ib_port_t;

typedef struct {
    ib_port_t *p;
    size_t n, cap;
} ib_state_t;

static void port_close(ib_port_t *p)
{
    for (int c = 0; c < IB__MAX; c++)
        if (p->fd[c] >= 0)
            close(p->fd[c]);
    for (size_t i = 0; i < p->nhw; i++) {
        if (p->hw[i].fd >= 0)
            close(p->hw[i].fd);
        free(p->hw[i].name);
    }
    free(p->hw);
}

static void ib_fini(void *state)
{
    ib_state_t *st = state;
    if (!st)
        return;
    for (size_t i = 0; i < st->n; i++)
        port_close(&st->p[i]);
    free(st->p);
    free(st);
}

/* port_open: open the counter files of port `port` of `hca`. Returns 0 or -ENOMEM. */
static int port_open(int sys, const char *hca, int port, ib_port_t *p)
{
    char path[256];
    memset(p, 0, sizeof(*p));
    snprintf(p->hca, sizeof(p->hca), "%s", hca);
    p->port = port;
    for (int c = 0; c < IB__MAX; c++) {
        p->fd[c] = -1;
        if (!counter_files[c])
            continue;
        snprintf(path, sizeof(path), "class/infiniband/%s/ports/%d/counters/%s", hca, port, counter_files[c]);
        int fd = sysattr_open(sys, path);
        p->fd[c] = fd >= 0 ? fd : -1;
    }
    p->width = p->fd[IB_UNICAST_XMIT_PACKETS] >= 0 ? 64 : 32;
    char **names;
    snprintf(path, sizeof(path), "class/infiniband/%s/ports/%d/hw_counters", hca, port);
    int n = sysattr_list(sys, path, "", &names);
    if (n == -ENOMEM)
        return n;
    if (n <= 0)
        return 0;
    if (!(p->hw = calloc((size_t)n, sizeof(*p->hw)))) {
        sysattr_list_free(names);
        return -ENOMEM;
    }
    for (int i = 0; i < n; i++) {
        if (!strcmp(names[i], "lifespan")) /* a setting (ms the driver caches values), not a counter */
            continue;
        snprintf(path, sizeof(path), "class/infiniband/%s/ports/%d/hw_counters/%s", hca, port, names[i]);
        int fd = sysattr_open(sys, path);
        if (fd < 0)
            continue;
        p->hw[p->nhw].fd = fd;
        if (!(p->hw[p->nhw].name = strdup(names[i]))) {
            close(fd);
            sysattr_list_free(names);
            return -ENOMEM;
        }
        p->nhw++;
    }
    sysattr_list_free(names);
    return 0;
}

static int ib_init(const js_ctx_t *ctx, void **ret_state, char *why, size_t whylen)
{
    if (ctx->root.sys < 0)
        return -ENODEV;
    char **hcas;
    int nh = sysattr_list(ctx->root.sys, "class/infiniband", "", &hcas);
    if (nh < 0)
        return nh == -ENOENT ? -ENODEV : nh;
    ib_state_t *st = calloc(1, sizeof(*st));
    int r = -ENOMEM;
    if (!st)
        goto out;
    for (int h = 0; h < nh; h++) {
        if (strlen(hcas[h]) >= sizeof(st->p[0].hca))
            continue;
        char path[192], **ports;
        snprintf(path, sizeof(path), "class/infiniband/%s/ports", hcas[h]);
        int np = sysattr_list(ctx->root.sys, path, "", &ports);
        if (np == -ENOMEM)
            goto out;
        for (int k = 0; k < np; k++) {
            int64_t num;
            if (sysattr_parse_i64(ports[k], &num) < 0 || num < 0 || num > 65535)
                continue;
            if (st->n == st->cap) {
                size_t cap = st->cap ? st->cap * 2 : 4;
                ib_port_t *g = realloc(st->p, cap * sizeof(*g));
                if (!g) {
                    sysattr_list_free(ports);
                    goto out;
                }
                st->p = g;
                st->cap = cap;
            }
            int pr = port_open(ctx->root.sys, hcas[h], (int)num, &st->p[st->n]);
            st->n++; /* opened files are closed by fini even when port_open failed half-way */
            if (pr < 0) {
                sysattr_list_free(ports);
                goto out;
            }
        }
        sysattr_list_free(ports);
    }
    r = st->n ? 0 : -ENODEV;
out:
    sysattr_list_free(hcas);
    if (r < 0) {
        ib_fini(st);
        return r;
    }
    *ret_state = st;
    return 0;
}

static int ib_collect(void *state, js_ctx_t *ctx, js_rows_t *const *rows)
{
    ib_state_t *st = state;
    unsigned every = ctx->status_every ? ctx->status_every : 1;
    bool all = ctx->seq == 0 || ctx->final || ctx->seq % every == 0;
    js_rows_t *pr = rows[0], *hr = rows[1];
    for (size_t i = 0; i < st->n; i++) {
        ib_port_t *p = &st->p[i];
        js_value_t *v = rows_add(pr);
        if (!v || rows_set_str(pr, &v[IB_HCA], p->hca, strlen(p->hca)) < 0)
            return -ENOMEM;
        val_int(&v[IB_PORT], p->port);
        int last = all ? IB__MAX - 1 : IB_EVERY_SAMPLE_LAST;
        for (int c = IB_XMIT_DATA; c <= last; c++) {
            int64_t x;
            if (p->fd[c] < 0 || sysattr_pread_i64(p->fd[c], &x) < 0 || x < 0)
                continue;
            val_int(&v[c], x);
            /* a 32-bit guess proven wrong by the value itself */
            if (c <= IB_MULTICAST_RCV_PACKETS && p->width == 32 && (uint64_t)x > UINT32_MAX)
                p->width = 64;
        }
        val_int(&v[IB_DATA_WIDTH], p->width);
        for (size_t k = 0; all && k < p->nhw; k++) {
            int64_t x;
            js_value_t *w = rows_add(hr);
            if (!w || rows_set_str(hr, &w[IBHW_HCA], p->hca, strlen(p->hca)) < 0 ||
                rows_set_str(hr, &w[IBHW_COUNTER], p->hw[k].name, strlen(p->hw[k].name)) < 0)
                return -ENOMEM;
            val_int(&w[IBHW_PORT], p->port);
            if (sysattr_pread_i64(p->hw[k].fd, &x) == 0)
                val_int(&w[IBHW_VALUE], x);
        }
    }
    return 0;
}

static int ib_inventory(void *state, const js_ctx_t *ctx, js_rows_t *inv)
{
    ib_state_t *st = state;
    static const char *const port_attrs[] = {"link_layer", "rate", "state", "phys_state"};
    static const char *const dev_attrs[] = {"node_type", "hca_type", "board_id", "fw_ver", "node_guid"};
    int r = inventory_addf(inv, "infiniband", "ports", "%zu", st->n);
    const char *prev_hca = "";
    for (size_t i = 0; r == 0 && i < st->n; i++) {
        const ib_port_t *p = &st->p[i];
        char path[256], key[160], val[256];
        if (strcmp(p->hca, prev_hca) != 0) {
            for (size_t a = 0; r == 0 && a < sizeof(dev_attrs) / sizeof(dev_attrs[0]); a++) {
                snprintf(path, sizeof(path), "class/infiniband/%s/%s", p->hca, dev_attrs[a]);
                if (sysattr_read_str(ctx->root.sys, path, val, sizeof(val)) > 0) {
                    snprintf(key, sizeof(key), "%s.%s", p->hca, dev_attrs[a]);
                    r = inventory_add(inv, "infiniband", key, val);
                }
            }
            prev_hca = p->hca;
        }
        for (size_t a = 0; r == 0 && a < sizeof(port_attrs) / sizeof(port_attrs[0]); a++) {
            snprintf(path, sizeof(path), "class/infiniband/%s/ports/%d/%s", p->hca, p->port, port_attrs[a]);
            if (sysattr_read_str(ctx->root.sys, path, val, sizeof(val)) > 0) {
                snprintf(key, sizeof(key), "%s.%d.%s", p->hca, p->port, port_attrs[a]);
                r = inventory_add(inv, "infiniband", key, val);
            }
        }
        if (r == 0) {
            snprintf(key, sizeof(key), "%s.%d.data_width_bits", p->hca, p->port);
            r = inventory_addf(inv, "infiniband", key, "%d", p->width);
        }
        if (r == 0) {
            snprintf(key, sizeof(key), "%s.%d.hw_counters", p->hca, p->port);
            r = inventory_addf(inv, "infiniband", key, "%zu", p->nhw);
        }
    }
    return r;
}

const js_source_t source_infiniband = {
    .name = "infiniband",
    .help = "InfiniBand/RDMA port traffic, packets, errors and discards from sysfs",
    .tables = ib_tables,
    .init = ib_init,
    .collect = ib_collect,
    .fini = ib_fini,
    .inventory = ib_inventory,
};
