/* SPDX-License-Identifier: MIT
 *
 * The monitor's end of the mark protocol (core/markwire.h): a listening Unix SOCK_SEQPACKET socket at a
 * filesystem path in a private directory, exported to the job as JOBSCOPE_SOCKET=<path>. The directory,
 * "jobscope-<monitor pid>-<64 random bits>", is made new (mkdir, mode 0700) in $XDG_RUNTIME_DIR when that is
 * a directory of the monitor's user closed to others (systemd's /run/user/UID), else in /tmp (sticky: nobody
 * else can rename or remove it). So only the monitor's user and root can reach the socket: another user can
 * neither connect (no flood from strangers can reach the monitor) nor bind the name once the monitor is gone
 * (a socket left by a killed monitor stays in a directory nobody else can enter; a path removed at a normal
 * exit may be made again by anyone in /tmp, which is why the client checks the listener's credentials, see
 * api/marks_client.c). The kernel's credentials of each sender are still checked (SO_PEERCRED when it
 * connects, SCM_CREDENTIALS per packet): only the monitor's own effective UID and root may mark; anything
 * else is rejected and counted, like malformed packets. The process that opened the socket removes the
 * socket file and the directory when it closes it (a forked child's copy removes nothing).
 *
 * Everything the socket holds is one pollable descriptor (an epoll set of the listener and each
 * connection), so the monitor loop adds a single entry to its poll set. Each marks_receive does a bounded
 * amount of work (MARKS_ACCEPT_BUDGET connections, MARKS_READ_BUDGET packets, at most MARKS_CONN_BUDGET of
 * them from one connection per round), so a flood of connections or packets never starves sampling: what is
 * left waits for the next call. Received marks go at once to a callback (the monitor hands them to its live
 * sinks) and are kept, in time order, until the sample they fall before takes them as rows of the core
 * `marks` table (marks_take), so a recording and a live model see them in sample order. At most
 * MARKS_PENDING_MAX are kept between two samples (more are rejected and counted), and at most MARKS_CONN_MAX
 * connections are open at once (a further one is closed at once: its marks are dropped on the sender's side
 * and counted there).
 *
 * Beside the socket, the directory holds MARKS_DROPS_NAME, a small file (mode 0600) that every sender maps
 * (MAP_SHARED) and in which it adds each mark it drops to one atomic counter: the monitor reads the job's
 * exact count of dropped marks there (marks_senders_dropped), including the drops after a process's last
 * delivered mark, of a process that left by _exit or a signal, or that never got connected (the per-mark
 * `sender_dropped` count cannot carry those).
 */
#ifndef JOBSCOPE_MARKS_H
#define JOBSCOPE_MARKS_H

#include "core/sink.h"
#include "core/table.h"

#include <stdbool.h>
#include <stdint.h>

#define MARKS_PENDING_MAX 100000
#define MARKS_CONN_MAX 4096
#define MARKS_ACCEPT_BUDGET 64 /* connections accepted per marks_receive */
#define MARKS_READ_BUDGET 8192 /* packets read per marks_receive (about 5 ms of work) */
#define MARKS_CONN_BUDGET 512  /* packets read from one connection per round, so each gets its turn */

/* The run's directory holds the socket and the drops file (a page mapped by the monitor and every sender). */
#define MARKS_SOCKET_NAME "marks"
#define MARKS_DROPS_NAME "drops"
#define MARKS_SHARED_SIZE 4096
typedef struct {
    _Atomic uint64_t dropped; /* marks the senders dropped (their queue was full, or the monitor's backlog) */
} js_marks_shared_t;

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

/* marks_open: create the private directory and the listening socket in it. *ret is owned by the caller
 * (marks_close). Returns 0 or -errno (no writable place for the directory, a path too long, ...). */
int marks_open(js_marks_t **ret);

/* marks_address: the JOBSCOPE_SOCKET value that reaches this socket (its absolute path), owned by mk. */
const char *marks_address(const js_marks_t *mk);

/* marks_fd: the descriptor to poll for POLLIN (an epoll set; owned by mk). */
int marks_fd(const js_marks_t *mk);

/* marks_fd_count: the descriptors mk holds now (the listening socket, the epoll set, one per open
 * connection); 0 for NULL. */
size_t marks_fd_count(const js_marks_t *mk);

/* marks_fn: receives each accepted mark (borrowed for the call). Its return value is ignored here. */
typedef int (*marks_fn)(void *arg, const js_mark_t *m);

/* marks_receive: accept waiting connections and read waiting packets, within the budgets above; each valid
 * mark from an allowed sender goes to fn (may be NULL) with m->seq = `seq`, and is kept for marks_take. Never
 * blocks. Returns the number of connections and packets handled (0: nothing was waiting, so a caller that
 * must take everything calls it until it returns 0), or -ENOMEM. */
int marks_receive(js_marks_t *mk, int64_t seq, marks_fn fn, void *arg);

/* marks_take: append the kept marks made at or before `until_mono_ns` (every kept mark when `all`) to
 * `rows` (a buffer of table_marks), oldest first; later ones stay kept. Returns the number moved, or
 * -ENOMEM (nothing moved). */
int marks_take(js_marks_t *mk, js_rows_t *rows, int64_t until_mono_ns, bool all);

/* marks_counts: marks accepted so far, and packets or connections rejected (malformed, another user's, over
 * the limits). */
void marks_counts(const js_marks_t *mk, uint64_t *ret_received, uint64_t *ret_rejected);

/* marks_senders_dropped: marks the job's processes dropped so far (the drops file's counter). */
uint64_t marks_senders_dropped(const js_marks_t *mk);

/* marks_unlink: in the process that opened it, remove the socket, the drops file and their directory now;
 * the socket goes on serving the senders already connected. For a process that exits without marks_close
 * (an embedded monitor its host never stopped). Idempotent; marks_close does it too. */
void marks_unlink(js_marks_t *mk);

/* marks_close: close every descriptor and free; in the process that opened it, also remove the socket, the
 * drops file and their directory. Accepts NULL. */
void marks_close(js_marks_t *mk);

/* marks_drop_inherited: in a child forked while the socket was open, close the child's copies of the
 * listening socket and the epoll set (so the socket and its name live and die with the process that opened
 * it) without touching anything the parent owns (no unlink, no shutdown). mk is not freed and must not be
 * used again in this process. Accepts NULL. Async-signal-safe (only close). */
void marks_drop_inherited(js_marks_t *mk);

#endif
