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

/* marks_address_parse: a JOBSCOPE_SOCKET value ("@abstract-name" or "/path") as a sockaddr_un. Returns 0,
 * or -EINVAL (empty, relative, too long). */
int marks_address_parse(const char *value, struct sockaddr_un *ret, socklen_t *ret_len);

/* client_mark: send one mark (kind MARKWIRE_*); the public js_phase_begin and friends call it. */
int client_mark(int kind, const char *name, const char *data);

#endif
