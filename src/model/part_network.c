/* SPDX-License-Identifier: MIT
 *
 * The `network` model part: node traffic on InfiniBand/RDMA ports (the `infiniband` source's `ib_port` and
 * `ib_hw` tables) and Ethernet interfaces (the `system` source's `net` table): bytes and packets sent and
 * received, errors and discards, as totals over the run and rates per interval.
 *
 * InfiniBand counters stop at all ones rather than wrapping (IBTA PortCounters), so an increase is taken only
 * between two readings below that value and without a decrease (counter_delta_saturating); an interval where
 * a counter saturated or was cleared by a fabric manager has no increase, is counted, and makes the port's
 * totals a lower bound (`complete`: false). The data counters count 4-byte words: bytes are 4 x that. The
 * width of the data and packet counters is the row's data_width_bits; the error counters have their
 * column's. Ethernet counters are the kernel's unsigned longs and wrap (counter_delta).
 *
 * Attribution: both are node figures. The kernel keeps no per-process or per-cgroup count of socket traffic
 * (net/dev is per network namespace) and RDMA traffic bypasses the kernel altogether, so no share is
 * attributed to the scope; the summary says so beside the node figures.
 *
 * Views: `infiniband` (a row per port) and `network` (a row per interface). Summary: `infiniband` and
 * `network` sections when the recording has ports or interfaces.
 */
#include "model/model.h"
#include "model/figure.h"
#include "model/track.h"
#include "core/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the tracked columns -------------------------------------------------------------------------- */

typedef enum { K_DATA, K_PKT, K_ERR, K_WAIT } kind_t;

typedef struct {
    const char *col; /* column of ib_port */
    kind_t kind;
    const char *key; /* summary key */
} ib_col_t;

static const ib_col_t ib_cols[] = {
    {"xmit_data_4bytes", K_DATA, "xmit_bytes"},
    {"rcv_data_4bytes", K_DATA, "rcv_bytes"},
    {"xmit_packets", K_PKT, "xmit_packets"},
    {"rcv_packets", K_PKT, "rcv_packets"},
    {"symbol_errors", K_ERR, "symbol_errors"},
    {"link_error_recoveries", K_ERR, "link_error_recoveries"},
    {"link_downed", K_ERR, "link_downed"},
    {"rcv_errors", K_ERR, "rcv_errors"},
    {"rcv_remote_physical_errors", K_ERR, "rcv_remote_physical_errors"},
    {"rcv_switch_relay_errors", K_ERR, "rcv_switch_relay_errors"},
    {"xmit_discards", K_ERR, "xmit_discards"},
    {"xmit_constraint_errors", K_ERR, "xmit_constraint_errors"},
    {"rcv_constraint_errors", K_ERR, "rcv_constraint_errors"},
    {"local_link_integrity_errors", K_ERR, "local_link_integrity_errors"},
    {"excessive_buffer_overrun_errors", K_ERR, "excessive_buffer_overrun_errors"},
    {"vl15_dropped", K_ERR, "vl15_dropped"},
    {"xmit_wait_ticks", K_WAIT, "xmit_wait_ticks"},
};
#define NIB (sizeof(ib_cols) / sizeof(ib_cols[0]))
enum { IBC_XMIT_DATA, IBC_RCV_DATA, IBC_XMIT_PKTS, IBC_RCV_PKTS, IBC_XMIT_DISCARDS = 10 };

static const char *const net_cols[] = {"rx_bytes", "tx_bytes", "rx_packets", "tx_packets",
                                       "rx_errs",  "tx_errs",  "rx_drop",    "tx_drop"};
#define NNET (sizeof(net_cols) / sizeof(net_cols[0]))
enum { NC_RX_BYTES, NC_TX_BYTES, NC_RX_PKTS, NC_TX_PKTS, NC_RX_ERRS, NC_TX_ERRS, NC_RX_DROP, NC_TX_DROP };

typedef struct {
    char *hca;
    int64_t port;
    int64_t width;
    track_t tr[NIB];
    int64_t saturated, cleared; /* intervals of a data or packet counter */
    bool seen_now;
} ibport_t;

typedef struct {
    char *hca, *name;
    int64_t port;
    track_t tr;
} ibhw_t;

typedef struct {
    char *iface;
    track_t tr[NNET];
    bool seen_now;
} netif_t;

typedef struct {
    bool resolved_ib, resolved_hw, resolved_net;
    int ib_hca, ib_port, ib_width, ib_idx[NIB];
    int hw_hca, hw_port, hw_name, hw_value;
    int net_iface, net_idx[NNET];
    ibport_t *p;
    size_t np, pcap;
    ibhw_t *h;
    size_t nh, hcap;
    netif_t *n;
    size_t nn, ncap;
} net_t;

/* grow: make room for one more element in *arr (of `size` bytes each). Returns 0 or -ENOMEM. */
static int64_t int_of(const js_value_t *row, int c, int64_t dflt)
{
    return c >= 0 && row[c].present ? row[c].i : dflt;
}

static int64_t t_of(const js_sample_t *s)
{
    const js_rows_t *samples = sample_rows(s, &table_samples);
    return samples && samples->nrows && rows_row(samples, 0)[SAMPLES_T_MONO].present
               ? rows_row(samples, 0)[SAMPLES_T_MONO].i
               : 0;
}

/* ---- feeding -------------------------------------------------------------------------------------- */

static ibport_t *port_get(net_t *n, const char *hca, int64_t port)
{
    for (size_t i = 0; i < n->np; i++)
        if (n->p[i].port == port && strcmp(n->p[i].hca, hca) == 0)
            return &n->p[i];
    if (array_grow((void **)&n->p, n->np, &n->pcap, sizeof(*n->p)) < 0)
        return NULL;
    ibport_t *p = &n->p[n->np];
    memset(p, 0, sizeof(*p));
    if (!(p->hca = strdup(hca)))
        return NULL;
    p->port = port;
    for (size_t k = 0; k < NIB; k++)
        track_init(&p->tr[k]);
    n->np++;
    return p;
}

static ibhw_t *hw_get(net_t *n, const char *hca, int64_t port, const char *name)
{
    for (size_t i = 0; i < n->nh; i++)
        if (n->h[i].port == port && strcmp(n->h[i].name, name) == 0 && strcmp(n->h[i].hca, hca) == 0)
            return &n->h[i];
    if (array_grow((void **)&n->h, n->nh, &n->hcap, sizeof(*n->h)) < 0)
        return NULL;
    ibhw_t *h = &n->h[n->nh];
    memset(h, 0, sizeof(*h));
    h->hca = strdup(hca);
    h->name = strdup(name);
    if (!h->hca || !h->name) {
        free(h->hca);
        free(h->name);
        return NULL;
    }
    h->port = port;
    track_init(&h->tr);
    n->nh++;
    return h;
}

static netif_t *if_get(net_t *n, const char *iface)
{
    for (size_t i = 0; i < n->nn; i++)
        if (strcmp(n->n[i].iface, iface) == 0)
            return &n->n[i];
    if (array_grow((void **)&n->n, n->nn, &n->ncap, sizeof(*n->n)) < 0)
        return NULL;
    netif_t *f = &n->n[n->nn];
    memset(f, 0, sizeof(*f));
    if (!(f->iface = strdup(iface)))
        return NULL;
    for (size_t k = 0; k < NNET; k++)
        track_init(&f->tr[k]);
    n->nn++;
    return f;
}

static int feed_ib(net_t *n, const js_rows_t *r, int64_t t)
{
    if (!n->resolved_ib) {
        n->ib_hca = table_column(r->table, "hca");
        n->ib_port = table_column(r->table, "port");
        n->ib_width = table_column(r->table, "data_width_bits");
        for (size_t k = 0; k < NIB; k++)
            n->ib_idx[k] = table_column(r->table, ib_cols[k].col);
        n->resolved_ib = true;
    }
    for (size_t i = 0; i < n->np; i++)
        n->p[i].seen_now = false;
    for (size_t i = 0; i < r->nrows; i++) {
        const js_value_t *row = rows_row(r, i);
        ibport_t *p = port_get(n, rows_text(r, row, n->ib_hca, ""), int_of(row, n->ib_port, -1));
        if (!p)
            return -ENOMEM;
        p->seen_now = true;
        p->width = int_of(row, n->ib_width, 64);
        for (size_t k = 0; k < NIB; k++) {
            int c = n->ib_idx[k];
            bool data = ib_cols[k].kind == K_DATA || ib_cols[k].kind == K_PKT;
            uint64_t width = data ? (uint64_t)p->width : c >= 0 ? r->table->cols[c].width : 64;
            int rc = track_step(&p->tr[k], c >= 0 ? &row[c] : NULL, t, track_saturating, width,
                                ib_cols[k].kind == K_DATA ? 4.0 : 1.0);
            if (data && rc == -EOVERFLOW)
                p->saturated++;
            else if (data && rc == -ERANGE)
                p->cleared++;
        }
    }
    for (size_t i = 0; i < n->np; i++)
        if (!n->p[i].seen_now)
            for (size_t k = 0; k < NIB; k++)
                track_step(&n->p[i].tr[k], NULL, t, track_saturating, 64, 1.0);
    return 0;
}

static int feed_hw(net_t *n, const js_rows_t *r, int64_t t)
{
    if (!n->resolved_hw) {
        n->hw_hca = table_column(r->table, "hca");
        n->hw_port = table_column(r->table, "port");
        n->hw_name = table_column(r->table, "counter");
        n->hw_value = table_column(r->table, "value");
        n->resolved_hw = true;
    }
    for (size_t i = 0; i < r->nrows; i++) {
        const js_value_t *row = rows_row(r, i);
        ibhw_t *h = hw_get(n, rows_text(r, row, n->hw_hca, ""), int_of(row, n->hw_port, -1),
                           rows_text(r, row, n->hw_name, ""));
        if (!h)
            return -ENOMEM;
        track_step(&h->tr, n->hw_value >= 0 ? &row[n->hw_value] : NULL, t, track_wrapping, 64, 1.0);
    }
    return 0;
}

static int feed_net(net_t *n, const js_rows_t *r, int64_t t)
{
    if (!n->resolved_net) {
        n->net_iface = table_column(r->table, "iface");
        for (size_t k = 0; k < NNET; k++)
            n->net_idx[k] = table_column(r->table, net_cols[k]);
        n->resolved_net = true;
    }
    for (size_t i = 0; i < n->nn; i++)
        n->n[i].seen_now = false;
    for (size_t i = 0; i < r->nrows; i++) {
        const js_value_t *row = rows_row(r, i);
        netif_t *f = if_get(n, rows_text(r, row, n->net_iface, ""));
        if (!f)
            return -ENOMEM;
        f->seen_now = true;
        for (size_t k = 0; k < NNET; k++) {
            int c = n->net_idx[k];
            track_step(&f->tr[k], c >= 0 ? &row[c] : NULL, t, track_wrapping,
                       c >= 0 ? r->table->cols[c].width : 64, 1.0);
        }
    }
    for (size_t i = 0; i < n->nn; i++)
        if (!n->n[i].seen_now)
            for (size_t k = 0; k < NNET; k++)
                track_step(&n->n[i].tr[k], NULL, t, track_wrapping, 64, 1.0);
    return 0;
}

static int net_feed(void *state, const js_feed_t *f)
{
    net_t *n = state;
    int64_t t = t_of(f->s);
    const js_rows_t *r;
    int rc = 0;
    if ((r = sample_rows_named(f->s, "ib_port")) && (r->nrows || n->np) && (rc = feed_ib(n, r, t)) < 0)
        return rc;
    if ((r = sample_rows_named(f->s, "ib_hw")) && r->nrows && (rc = feed_hw(n, r, t)) < 0)
        return rc;
    if ((r = sample_rows_named(f->s, "net")) && (r->nrows || n->nn) && (rc = feed_net(n, r, t)) < 0)
        return rc;
    return 0;
}

/* ---- views ---------------------------------------------------------------------------------------- */

enum {
    IV_HCA,
    IV_PORT,
    IV_XMIT_BPS,
    IV_RCV_BPS,
    IV_XMIT_PPS,
    IV_RCV_PPS,
    IV_XMIT_BYTES,
    IV_RCV_BYTES,
    IV_ERRORS,
    IV_DISCARDS,
    IV__MAX
};
static const js_column_t ib_view_cols[IV__MAX] = {
    [IV_HCA] = {"hca", "text", JS_TEXT, JS_LABEL, 0, "RDMA device"},
    [IV_PORT] = {"port", "id", JS_INT, JS_LABEL, 0, "port number"},
    [IV_XMIT_BPS] = {"xmit_bytes_per_s", "bytes/s", JS_REAL, JS_GAUGE, 0, "data sent over the last interval"},
    [IV_RCV_BPS] = {"rcv_bytes_per_s", "bytes/s", JS_REAL, JS_GAUGE, 0,
                    "data received over the last interval"},
    [IV_XMIT_PPS] = {"xmit_packets_per_s", "1/s", JS_REAL, JS_GAUGE, 0,
                     "packets sent over the last interval"},
    [IV_RCV_PPS] = {"rcv_packets_per_s", "1/s", JS_REAL, JS_GAUGE, 0,
                    "packets received over the last interval"},
    [IV_XMIT_BYTES] = {"xmit_bytes", "bytes", JS_REAL, JS_COUNTER, 0,
                       "data sent since the first sample (known part)"},
    [IV_RCV_BYTES] = {"rcv_bytes", "bytes", JS_REAL, JS_COUNTER, 0,
                      "data received since the first sample (known part)"},
    [IV_ERRORS] = {"errors", "count", JS_REAL, JS_COUNTER, 0,
                   "error counters' increases since the first sample"},
    [IV_DISCARDS] = {"xmit_discards", "count", JS_REAL, JS_COUNTER, 0,
                     "outbound packets discarded since the first sample"},
};
static const js_table_t ib_view = {
    "infiniband", "InfiniBand/RDMA port traffic, one row per port and sample (node)", IV__MAX, ib_view_cols};

enum {
    NV_IFACE,
    NV_RX_BPS,
    NV_TX_BPS,
    NV_RX_PPS,
    NV_TX_PPS,
    NV_RX_EPS,
    NV_TX_EPS,
    NV_RX_DPS,
    NV_TX_DPS,
    NV_RX_ERRS,
    NV_TX_ERRS,
    NV_RX_DROPS,
    NV_TX_DROPS,
    NV__MAX
};
static const js_column_t net_view_cols[NV__MAX] = {
    [NV_IFACE] = {"iface", "text", JS_TEXT, JS_LABEL, 0, "network interface"},
    [NV_RX_BPS] = {"rx_bytes_per_s", "bytes/s", JS_REAL, JS_GAUGE, 0,
                   "bytes received over the last interval"},
    [NV_TX_BPS] = {"tx_bytes_per_s", "bytes/s", JS_REAL, JS_GAUGE, 0, "bytes sent over the last interval"},
    [NV_RX_PPS] = {"rx_packets_per_s", "1/s", JS_REAL, JS_GAUGE, 0, "packets received"},
    [NV_TX_PPS] = {"tx_packets_per_s", "1/s", JS_REAL, JS_GAUGE, 0, "packets sent"},
    [NV_RX_EPS] = {"rx_errors_per_s", "1/s", JS_REAL, JS_GAUGE, 0, "receive errors"},
    [NV_TX_EPS] = {"tx_errors_per_s", "1/s", JS_REAL, JS_GAUGE, 0, "transmit errors"},
    [NV_RX_DPS] = {"rx_drops_per_s", "1/s", JS_REAL, JS_GAUGE, 0, "received packets dropped"},
    [NV_TX_DPS] = {"tx_drops_per_s", "1/s", JS_REAL, JS_GAUGE, 0, "outbound packets dropped"},
    [NV_RX_ERRS] = {"rx_errors", "count", JS_REAL, JS_COUNTER, 0, "receive errors since the first sample"},
    [NV_TX_ERRS] = {"tx_errors", "count", JS_REAL, JS_COUNTER, 0, "transmit errors since the first sample"},
    [NV_RX_DROPS] = {"rx_drops", "count", JS_REAL, JS_COUNTER, 0,
                     "received packets dropped since the first sample"},
    [NV_TX_DROPS] = {"tx_drops", "count", JS_REAL, JS_COUNTER, 0,
                     "outbound packets dropped since the first sample"},
};
static const js_table_t net_view = {"network",
                                    "per-interface traffic, errors and drops, one row per interface and "
                                    "sample (node)",
                                    NV__MAX, net_view_cols};

static const js_table_t *net_view_table(void *state, size_t i)
{
    (void)state;
    return i == 0 ? &ib_view : i == 1 ? &net_view : NULL;
}

static void set_real(js_value_t *v, double d)
{
    if (!isnan(d))
        val_real(v, d);
}

/* total_of: a tracked counter's total, missing before it has one known interval. */
static void set_total(js_value_t *v, const track_t *t)
{
    if (t->known || t->prev.present)
        val_real(v, t->total);
}

static double ib_errors(const ibport_t *p, bool *any)
{
    double e = 0;
    *any = false;
    for (size_t k = 0; k < NIB; k++)
        if (ib_cols[k].kind == K_ERR && (p->tr[k].known || p->tr[k].prev.present)) {
            e += p->tr[k].total;
            *any = true;
        }
    return e;
}

static int net_view_fill(void *state, size_t i, js_rows_t *out)
{
    net_t *n = state;
    if (i == 0) {
        for (size_t k = 0; k < n->np; k++) {
            const ibport_t *p = &n->p[k];
            if (!p->seen_now)
                continue;
            js_value_t *v = rows_add(out);
            if (!v || rows_set_str(out, &v[IV_HCA], p->hca, strlen(p->hca)) < 0)
                return -ENOMEM;
            val_int(&v[IV_PORT], p->port);
            set_real(&v[IV_XMIT_BPS], p->tr[IBC_XMIT_DATA].rate);
            set_real(&v[IV_RCV_BPS], p->tr[IBC_RCV_DATA].rate);
            set_real(&v[IV_XMIT_PPS], p->tr[IBC_XMIT_PKTS].rate);
            set_real(&v[IV_RCV_PPS], p->tr[IBC_RCV_PKTS].rate);
            set_total(&v[IV_XMIT_BYTES], &p->tr[IBC_XMIT_DATA]);
            set_total(&v[IV_RCV_BYTES], &p->tr[IBC_RCV_DATA]);
            bool any;
            double e = ib_errors(p, &any);
            if (any)
                val_real(&v[IV_ERRORS], e);
            set_total(&v[IV_DISCARDS], &p->tr[IBC_XMIT_DISCARDS]);
        }
        return 0;
    }
    for (size_t k = 0; k < n->nn; k++) {
        const netif_t *f = &n->n[k];
        if (!f->seen_now)
            continue;
        js_value_t *v = rows_add(out);
        if (!v || rows_set_str(out, &v[NV_IFACE], f->iface, strlen(f->iface)) < 0)
            return -ENOMEM;
        for (size_t c = 0; c < NNET; c++)
            set_real(&v[NV_RX_BPS + c], f->tr[c].rate);
        for (size_t c = NC_RX_ERRS; c < NNET; c++)
            set_total(&v[NV_RX_ERRS + c - NC_RX_ERRS], &f->tr[c]);
    }
    return 0;
}

/* ---- summary -------------------------------------------------------------------------------------- */

static double total_or_nan(const track_t *t)
{
    return t->known || t->prev.present ? t->total : NAN;
}

static const char ib_not_attributed[] =
    "RDMA traffic bypasses the kernel: it keeps no per-process or per-cgroup count of it";
static const char net_not_attributed[] =
    "the kernel counts socket traffic per network namespace (net/dev), not per process or cgroup";

static double add_missing(double a, double b)
{
    return isnan(a) ? b : isnan(b) ? a : a + b;
}

static void ib_summary(const net_t *n, js_figure_t *r)
{
    fig_put_text(r, "infiniband.attribution.method", "none");
    fig_put_text(r, "infiniband.attribution.reason", ib_not_attributed);
    double rcv = NAN, xmit = NAN;
    fig_put_array(r, "infiniband.ports");
    for (size_t i = 0; i < n->np; i++) {
        const ibport_t *p = &n->p[i];
        js_figure_t *port = fig_put_elem(r, "infiniband.ports");
        fig_put_text(r, "infiniband.ports[].hca", p->hca);
        fig_put_int(r, "infiniband.ports[].port", NULL, p->port);
        fig_put_int(r, "infiniband.ports[].data_width_bits", "bits", p->width);
        for (size_t k = 0; k <= IBC_RCV_PKTS; k++)
            fig_put_num(port, ib_cols[k].key, ib_cols[k].kind == K_DATA ? "bytes" : "count",
                        total_or_nan(&p->tr[k]));
        rcv = add_missing(rcv, total_or_nan(&p->tr[IBC_RCV_DATA]));
        xmit = add_missing(xmit, total_or_nan(&p->tr[IBC_XMIT_DATA]));
        bool complete = true;
        for (size_t k = 0; k <= IBC_RCV_PKTS; k++)
            complete &= p->tr[k].unknown == 0;
        fig_put_bool(r, "infiniband.ports[].complete", complete);
        fig_put_int(r, "infiniband.ports[].saturated_intervals", "count", p->saturated);
        fig_put_int(r, "infiniband.ports[].cleared_intervals", "count", p->cleared);
        bool any;
        double e = ib_errors(p, &any);
        fig_put_num(r, "infiniband.ports[].errors", "count", any ? e : NAN);
        js_figure_t *ec = fig_put_object(r, "infiniband.ports[].error_counters");
        for (size_t k = 0; k < NIB; k++)
            if (ib_cols[k].kind != K_DATA && ib_cols[k].kind != K_PKT && p->tr[k].total > 0)
                fig_put_num(ec, ib_cols[k].key, "count", p->tr[k].total);
        fig_put_object(r, "infiniband.ports[].hw_counters");
        for (size_t h = 0; h < n->nh; h++)
            if (n->h[h].port == p->port && !strcmp(n->h[h].hca, p->hca) && n->h[h].tr.total > 0) {
                fig_name(r, "infiniband.ports[].hw_counters", n->h[h].name);
                fig_put_num(r, "infiniband.ports[].hw_counters.{}", "count", n->h[h].tr.total);
            }
    }
    fig_merge(fig_how(fig_put_num(r, "infiniband.rcv_bytes", "bytes", rcv), "method", "every port, summed"),
              FIG_MERGE_SUM);
    fig_merge(fig_put_num(r, "infiniband.xmit_bytes", "bytes", xmit), FIG_MERGE_SUM);
}

static void net_summary(void *state, js_figure_t *r)
{
    net_t *n = state;
    if (n->np)
        ib_summary(n, r);
    if (!n->nn)
        return;
    fig_put_text(r, "network.attribution.method", "none");
    fig_put_text(r, "network.attribution.reason", net_not_attributed);
    fig_put_array(r, "network.interfaces");
    static const char *const keys[NNET] = {"rx_bytes",  "tx_bytes",  "rx_packets", "tx_packets",
                                           "rx_errors", "tx_errors", "rx_drops",   "tx_drops"};
    double rx = NAN, tx = NAN;
    for (size_t i = 0; i < n->nn; i++) {
        const netif_t *f = &n->n[i];
        js_figure_t *e = fig_put_elem(r, "network.interfaces");
        fig_put_text(r, "network.interfaces[].iface", f->iface);
        for (size_t k = 0; k < NNET; k++)
            fig_put_num(e, keys[k], k < NC_RX_PKTS ? "bytes" : "count", total_or_nan(&f->tr[k]));
        bool complete = true;
        for (size_t k = 0; k < NNET; k++)
            complete &= f->tr[k].unknown == 0;
        fig_put_bool(r, "network.interfaces[].complete", complete);
        if (strcmp(f->iface, "lo") != 0) {
            rx = add_missing(rx, total_or_nan(&f->tr[NC_RX_BYTES]));
            tx = add_missing(tx, total_or_nan(&f->tr[NC_TX_BYTES]));
        }
    }
    fig_merge(
        fig_how(fig_put_num(r, "network.rx_bytes", "bytes", rx), "method", "every interface but lo, summed"),
        FIG_MERGE_SUM);
    fig_merge(fig_put_num(r, "network.tx_bytes", "bytes", tx), FIG_MERGE_SUM);
}

static const char *count_text(char *buf, size_t cap, double v)
{
    return fig_fmt(buf, cap, "%.0f", v);
}

static int ib_summary_text(const js_figure_t *r, js_buf_t *b)
{
    char a[32], c[32], d[32], e[32];
    int err = 0;
    const js_figure_t *ports = fig_get(r, "infiniband.ports");
    for (size_t i = 0; i < fig_count(ports); i++) {
        const js_figure_t *p = fig_kid(ports, i);
        double errors = fig_num(p, "errors");
        /* xmit_discards is among the error counters when above 0; with the error counters read, 0 */
        double discards = fig_num(p, "error_counters.xmit_discards");
        if (isnan(discards) && !isnan(errors))
            discards = 0;
        const char *hca = fig_text(p, "hca");
        err |= buf_printf(
            b, "  %-17s%s/%lld: sent %s, received %s%s; %s errors, %s discards (node; not attributed)\n",
            i ? "" : "infiniband", hca ? hca : "?", (long long)fig_int(p, "port", 0),
            fmt_bytes(a, sizeof(a), fig_num(p, "xmit_bytes")),
            fmt_bytes(c, sizeof(c), fig_num(p, "rcv_bytes")),
            fig_bool(p, "complete") == 1 ? "" : " (at least: counters saturated or cleared)",
            count_text(d, sizeof(d), errors), count_text(e, sizeof(e), discards));
    }
    return err;
}

static int net_summary_text(const js_figure_t *r, js_buf_t *b)
{
    char a[32], c[32], d[32], e[32];
    int err = ib_summary_text(r, b);
    /* interfaces that carried traffic, loopback aside, at most NET_TEXT_MAX of them */
    enum { NET_TEXT_MAX = 6 };
    size_t shown = 0, more = 0;
    const js_figure_t *ifs = fig_get(r, "network.interfaces");
    for (size_t i = 0; i < fig_count(ifs); i++) {
        const js_figure_t *f = fig_kid(ifs, i);
        const char *name = fig_text(f, "iface");
        if (!name || !strcmp(name, "lo") || !(fig_num(f, "rx_bytes") > 0 || fig_num(f, "tx_bytes") > 0))
            continue;
        if (shown == NET_TEXT_MAX) {
            more++;
            continue;
        }
        char g[32], h[32];
        err |= buf_printf(b,
                          "  %-17s%s: received %s, sent %s; errors %s/%s, drops %s/%s (rx/tx; node; not "
                          "attributed)\n",
                          shown++ ? "" : "network", name, fmt_bytes(a, sizeof(a), fig_num(f, "rx_bytes")),
                          fmt_bytes(c, sizeof(c), fig_num(f, "tx_bytes")),
                          count_text(d, sizeof(d), fig_num(f, "rx_errors")),
                          count_text(e, sizeof(e), fig_num(f, "tx_errors")),
                          count_text(g, sizeof(g), fig_num(f, "rx_drops")),
                          count_text(h, sizeof(h), fig_num(f, "tx_drops")));
    }
    if (more)
        err |= buf_printf(b, "  %-17s%zu more interfaces with traffic (see the JSON summary)\n", "", more);
    return err ? -ENOMEM : 0;
}

/* ---- life ------------------------------------------------------------------------------------------ */

static int net_init(const js_model_cfg_t *cfg, void **ret_state)
{
    (void)cfg;
    net_t *n = calloc(1, sizeof(*n));
    if (!n)
        return -ENOMEM;
    *ret_state = n;
    return 0;
}

static void net_fini(void *state)
{
    net_t *n = state;
    if (!n)
        return;
    for (size_t i = 0; i < n->np; i++)
        free(n->p[i].hca);
    for (size_t i = 0; i < n->nh; i++) {
        free(n->h[i].hca);
        free(n->h[i].name);
    }
    for (size_t i = 0; i < n->nn; i++)
        free(n->n[i].iface);
    free(n->p);
    free(n->h);
    free(n->n);
    free(n);
}

const js_model_part_t part_network = {
    .name = "network",
    .init = net_init,
    .feed = net_feed,
    .view_table = net_view_table,
    .view_fill = net_view_fill,
    .summary = net_summary,
    .summary_text = net_summary_text,
    .fini = net_fini,
};
