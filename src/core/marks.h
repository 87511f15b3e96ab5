/* SPDX-License-Identifier: MIT
 *
 * The monitor's end of the mark protocol (core/markwire.h): a listening Unix SOCK_SEQPACKET socket in the
 * abstract namespace, named "jobscope-<monitor pid>-<64 random bits>" and exported to the job as
 * JOBSCOPE_SOCKET=@<name>. Abstract names carry no file permissions, so access is decided from the kernel's
 * credentials of each sender (SO_PEERCRED when it connects, SCM_CREDENTIALS per packet): only the monitor's
 * own effective UID and root may mark; anything else is rejected and counted, like malformed packets.
 *
 * Everything the socket holds is one pollable descriptor (an epoll set of the listener and each
 * connection), so the monitor loop adds a single entry to its poll set. Received marks go at once to a
 * callback (the monitor hands them to its live sinks) and are kept, in time order, until the sample they
 * fall before takes them as rows of the core `marks` table (marks_take), so a recording and a live model see
 * them in sample order. At most MARKS_PENDING_MAX are kept between two samples (more are rejected and
 * counted), and at most MARKS_CONN_MAX connections are open at once (a further one is closed at once: its
 * marks are dropped on the sender's side and counted there).
 */
#ifndef JOBSCOPE_MARKS_H
#define JOBSCOPE_MARKS_H

#include "core/sink.h"
#include "core/table.h"

#include <stdbool.h>
#include <stdint.h>

#define MARKS_PENDING_MAX 100000
#define MARKS_CONN_MAX 4096

/* The core `marks` table: one row per mark, written with the sample the mark falls before. */
enum {
    MARK_T_MONO,
    MARK_T_UNIX,
    MARK_KIND,
    MARK_NAME,
    MARK_PID,
    MARK_TID,
    MARK_UID,
    MARK_RANK,
    MARK_HOST,
    MARK_DATA,
    MARK_SENDER_DROPPED,
    MARK__MAX
};
extern const js_table_t table_marks;

typedef struct js_marks js_marks_t;

/* marks_open: create the listening socket. *ret is owned by the caller (marks_close). Returns 0 or -errno. */
int marks_open(js_marks_t **ret);

/* marks_address: the JOBSCOPE_SOCKET value that reaches this socket ("@jobscope-..."), owned by mk. */
const char *marks_address(const js_marks_t *mk);

/* marks_fd: the descriptor to poll for POLLIN (an epoll set; owned by mk). */
int marks_fd(const js_marks_t *mk);

/* marks_fn: receives each accepted mark (borrowed for the call). Its return value is ignored here. */
typedef int (*marks_fn)(void *arg, const js_mark_t *m);

/* marks_receive: accept waiting connections, read every waiting packet; each valid one from an allowed
 * sender goes to fn (may be NULL) with m->seq = `seq`, and is kept for marks_take. Never blocks. Returns
 * the number of marks accepted, or -ENOMEM. */
int marks_receive(js_marks_t *mk, int64_t seq, marks_fn fn, void *arg);

/* marks_take: append the kept marks made at or before `until_mono_ns` (every kept mark when `all`) to
 * `rows` (a buffer of table_marks), oldest first; later ones stay kept. Returns the number moved, or
 * -ENOMEM (nothing moved). */
int marks_take(js_marks_t *mk, js_rows_t *rows, int64_t until_mono_ns, bool all);

/* marks_counts: marks accepted so far, and packets or connections rejected (malformed, another user's, over
 * the limits). */
void marks_counts(const js_marks_t *mk, uint64_t *ret_received, uint64_t *ret_rejected);

/* marks_close: close every descriptor and free; accepts NULL. */
void marks_close(js_marks_t *mk);

/* marks_drop_inherited: in a child forked while the socket was open, close the child's copies of the
 * listening socket and the epoll set (so the socket and its name live and die with the process that opened
 * it) without touching anything the parent owns (no unlink, no shutdown). mk is not freed and must not be
 * used again in this process. Accepts NULL. Async-signal-safe (only close). */
void marks_drop_inherited(js_marks_t *mk);

#endif
