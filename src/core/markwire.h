/* SPDX-License-Identifier: MIT
 *
 * The mark protocol between a job (libjobscope's js_phase_begin and friends, `jobscope mark`, the Python
 * module) and its monitor. The monitor listens on a Unix SOCK_SEQPACKET socket whose path (in a private
 * directory, core/marks.h) it exports as JOBSCOPE_SOCKET; a job connects once per process and sends one
 * packet per mark. SEQPACKET rather than DGRAM: an unconnected datagram socket queues at most
 * net.unix.max_dgram_qlen packets (10 by default), far too few for a burst of marks from many threads,
 * while a connection queues up to the sender's socket buffer; packet boundaries are kept either way. The
 * sender is identified by the kernel (SO_PEERCRED, SCM_CREDENTIALS), never by what the packet says.
 *
 * A packet is a fixed 40-byte header in the host's byte order (sender and monitor share the host), then the
 * name, the host name and the data, with no terminators:
 *
 *   off size field
 *     0    2 magic 'J' 'S'
 *     2    1 version (1)
 *     3    1 kind: 0 begin, 1 end, 2 event
 *     4    4 rank (int32; -1: none)
 *     8    8 t_mono_ns (CLOCK_MONOTONIC when the mark was made)
 *    16    8 t_unix_ns (CLOCK_REALTIME)
 *    24    4 tid (the sending thread)
 *    28    4 dropped (marks this process dropped before this one, saturating)
 *    32    2 name length, 1..256
 *    34    2 data length, 0..4096
 *    36    1 host length, 0..255
 *    37    3 zero
 *
 * A packet whose length is not exactly 40 + the three lengths, or whose magic, version or kind is unknown,
 * is rejected (counted by the monitor), and so is an empty one. Pure encoding and decoding here: no I/O.
 */
#ifndef JOBSCOPE_MARKWIRE_H
#define JOBSCOPE_MARKWIRE_H

#include <stddef.h>
#include <stdint.h>

#define MARKWIRE_VERSION 1
#define MARKWIRE_HDR 40
#define MARKWIRE_NAME_MAX 256
#define MARKWIRE_DATA_MAX 4096
#define MARKWIRE_HOST_MAX 255
#define MARKWIRE_MAX (MARKWIRE_HDR + MARKWIRE_NAME_MAX + MARKWIRE_DATA_MAX + MARKWIRE_HOST_MAX)

enum { MARKWIRE_BEGIN, MARKWIRE_END, MARKWIRE_EVENT, MARKWIRE_KIND_MAX };

/* One decoded mark; the strings point into the packet (not NUL-terminated). */
typedef struct {
    int kind;
    int32_t rank;
    int64_t t_mono_ns, t_unix_ns;
    uint32_t tid, dropped;
    const char *name, *host, *data;
    size_t name_len, host_len, data_len;
} markwire_t;

/* markwire_encode: write the packet for `m` into buf (at least MARKWIRE_MAX bytes). Returns its length, or
 * -EINVAL when a length is out of range (name empty or too long, data or host too long) or kind unknown. */
int markwire_encode(const markwire_t *m, unsigned char *buf, size_t cap);

/* markwire_decode: parse the packet `p` of `len` bytes into *ret (pointing into p). Returns 0, or -EPROTO
 * for a malformed packet (ret untouched). */
int markwire_decode(const unsigned char *p, size_t len, markwire_t *ret);

/* markwire_kind_name: "begin", "end", "event", or NULL. */
const char *markwire_kind_name(int kind);

#endif
