/* SPDX-License-Identifier: MIT
 *
 * Internal pieces shared by the public API's files (include/jobscope.h): the marks client's redirection,
 * used by the embedded monitor so that the process's own marks (and its children's, through the
 * environment) reach it.
 */
#ifndef JOBSCOPE_API_H
#define JOBSCOPE_API_H

#include "jobscope.h"

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/un.h>

/* client_point: make this process's marks go to `addr` (a JOBSCOPE_SOCKET value), or, with NULL, back to
 * what the environment says (read again at the next mark). Thread-safe; a mark in flight on another thread
 * goes to either the old or the new monitor. */
void client_point(const char *addr);

/* client_has_socket: whether this process holds its mark connection's descriptor (made at its first mark to a
 * monitor, then kept). Thread-safe. */
bool client_has_socket(void);

/* marks_address_parse: a JOBSCOPE_SOCKET value (the absolute path of a monitor's socket) as a sockaddr_un.
 * Returns 0, or -EINVAL (empty, relative, an abstract "@name", too long). */
int marks_address_parse(const char *value, struct sockaddr_un *ret, socklen_t *ret_len);

/* client_mark: send one mark (kind MARKWIRE_BEGIN, _END or _EVENT); the public js_phase_begin and friends
 * call it. Returns 0 (sent, or no monitor announced), -EINVAL, -EAGAIN (dropped: the queue was full) or
 * -EPIPE (the announced monitor cannot be reached: client_gone_errno says why). */
int client_mark(int kind, const char *name, const char *data);

/* client_gone_errno: why the announced monitor cannot be reached (ENOENT: it ended; ECONNREFUSED: it was
 * killed; EACCES: not this user's; EPERM: the listener there is another user's; EINVAL: JOBSCOPE_SOCKET is
 * not an absolute path; EPIPE: it went away during the run), or 0 while marks reach it or none is announced.
 */
int client_gone_errno(void);

#endif
