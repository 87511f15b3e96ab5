/* SPDX-License-Identifier: MIT
 *
 * The `infiniband` source: the port counters of every RDMA device under class/infiniband (InfiniBand HCAs,
 * and RoCE/iWARP ports whose driver has a performance management agent): ports/N/counters/ (the IBTA
 * PortCounters and PortCountersExtended attributes, as the kernel's PMA query prints them) and the driver's
 * ports/N/hw_counters/. Values are stored as read: port_xmit_data and port_rcv_data count 4-byte words (the
 * model multiplies by 4).
 *
 * Widths. The error counters have the PortCounters widths (4, 8, 16 or 32 bits). The data and packet
 * counters are 64-bit when the port has the extended set (the kernel then also shows unicast_* and
 * multicast_*), else 32-bit; `data_width_bits` in each row says which (a 32-bit guess is raised to 64 when a
 * value above 2^32-1 is read). IBTA PortCounters do not wrap: they stop at all ones until a fabric manager
 * clears them, and the model treats them so (ib_counter_delta() in the model).
 *
 * Cadence. The four data and packet counters are read every sample; the unicast/multicast, error and wait
 * counters and hw_counters every --status-every samples, at the first and at the closing sample (each read
 * of counters/ is a management datagram to the HCA, so a full set every sample would cost tens of them).
 */
#ifndef JOBSCOPE_SOURCES_INFINIBAND_H
#define JOBSCOPE_SOURCES_INFINIBAND_H

#include "core/source.h"

/* table `ib_port`: one row per port */
enum {
    IB_HCA,                  /* label, TEXT: mlx5_0 */
    IB_PORT,                 /* label: port number */
    IB_DATA_WIDTH,           /* gauge: 32 or 64, the width of the next eight columns */
    IB_XMIT_DATA,            /* counters/port_xmit_data, 4-byte words; every sample */
    IB_RCV_DATA,             /* counters/port_rcv_data, 4-byte words; every sample */
    IB_XMIT_PACKETS,         /* every sample */
    IB_RCV_PACKETS,          /* every sample */
    IB_UNICAST_XMIT_PACKETS, /* extended set only; at the cadence from here on */
    IB_UNICAST_RCV_PACKETS,
    IB_MULTICAST_XMIT_PACKETS,
    IB_MULTICAST_RCV_PACKETS,
    IB_SYMBOL_ERROR,                    /* 16 bits */
    IB_LINK_ERROR_RECOVERY,             /* 8 */
    IB_LINK_DOWNED,                     /* 8 */
    IB_RCV_ERRORS,                      /* 16 */
    IB_RCV_REMOTE_PHYSICAL_ERRORS,      /* 16 */
    IB_RCV_SWITCH_RELAY_ERRORS,         /* 16 */
    IB_XMIT_DISCARDS,                   /* 16 */
    IB_XMIT_CONSTRAINT_ERRORS,          /* 8 */
    IB_RCV_CONSTRAINT_ERRORS,           /* 8 */
    IB_LOCAL_LINK_INTEGRITY_ERRORS,     /* 4 */
    IB_EXCESSIVE_BUFFER_OVERRUN_ERRORS, /* 4 */
    IB_VL15_DROPPED,                    /* 16 */
    IB_XMIT_WAIT,                       /* 32 */
    IB__MAX
};

/* table `ib_hw`: one row per port and driver counter (hw_counters/NAME; the `lifespan` setting excluded) */
enum { IBHW_HCA, IBHW_PORT, IBHW_COUNTER, IBHW_VALUE, IBHW__MAX };

extern const js_table_t table_ib_port, table_ib_hw;
extern const js_source_t source_infiniband;

#endif
