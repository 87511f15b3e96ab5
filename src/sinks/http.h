/* SPDX-License-Identifier: MIT
 *
 * The /metrics endpoint: a live sink that renders each sample's exposition (prometheus.h) on the monitor's
 * thread into a fresh snapshot and swaps it in; libmicrohttpd (loaded with dlopen when the endpoint starts)
 * serves the latest snapshot from its own thread, so sampling never waits for a scraper and a scraper never
 * sees a half-built exposition. Connections are bounded in number, memory and idle time, and each has a
 * deadline for its request's headers and one for taking its response; a slow connection gives way to a new
 * one, so no client (every local user can connect from any of 127/8) keeps scrapes out. Only GET and HEAD
 * of /metrics and / are answered (everything else 4xx). Binds 127.0.0.1 unless given another address; a
 * bearer token and/or basic auth, and TLS, protect a non-loopback endpoint.
 */
#ifndef JOBSCOPE_HTTP_H
#define JOBSCOPE_HTTP_H

#include "core/sink.h"
#include "sinks/prometheus.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *listen;             /* "PORT", ":PORT", "ADDR:PORT" or "[ADDR6]:PORT"; no ADDR = 127.0.0.1 */
    const char *token_file;         /* bearer token (first line), or NULL */
    const char *basic_auth_file;    /* user:password lines (no password may be empty), or NULL */
    const char *tls_cert, *tls_key; /* PEM files, both or neither */
    prom_cfg_t *prom;               /* what to expose (borrowed; its render_s is updated) */
} http_opts_t;

typedef struct js_http js_http_t;

/* http_parse_listen: split `spec` into a socket address. `ret_loopback` tells whether it is a loopback
 * address. Returns 0 or -EINVAL (not an IP literal with a port 1..65535; "localhost" is 127.0.0.1). */
struct sockaddr_storage;
int http_parse_listen(const char *spec, struct sockaddr_storage *ret, size_t *ret_len, bool *ret_loopback);

/* The HTTP server library, loaded with dlopen by the first http_start; $JOBSCOPE_MICROHTTPD_LIBRARY names
 * another file to load instead (for tests). */
#define HTTP_LIBRARY "libmicrohttpd.so.12"
#define HTTP_LIBRARY_ENV "JOBSCOPE_MICROHTTPD_LIBRARY"

/* http_prepare: check what `o` asks for and read the credential and TLS files; nothing is bound yet. On
 * failure (a bad address, half a TLS pair, an unreadable or invalid file, an empty password) returns -errno
 * and a one-line reason in err. *ret owned by the caller (http_stop). */
int http_prepare(const http_opts_t *o, js_http_t **ret, char *err, size_t errlen);

/* http_listen: load libmicrohttpd (once per process), bind (`listen` as given, for messages), and start
 * serving (503 until the first sample). On failure returns -errno and a one-line reason in err: -ENOENT
 * with "HTTP server library libmicrohttpd.so.12 not loadable: REASON" when the library cannot be loaded or
 * lacks an entry point, -ENOTSUP for TLS asked of a library without it, the bind's errno ("cannot listen on
 * ADDR: REASON"), or -EIO when libmicrohttpd does not start (with TLS: a certificate or key it cannot use);
 * h is then still to be released with http_stop. */
int http_listen(js_http_t *h, const char *listen, char *err, size_t errlen);

/* http_start: http_prepare then http_listen; *ret set only on success (NULL otherwise). */
int http_start(const http_opts_t *o, js_http_t **ret, char *err, size_t errlen);

/* http_library_unload: unload libmicrohttpd so that the next http_start loads it again (tests: a changed
 * $JOBSCOPE_MICROHTTPD_LIBRARY). No endpoint may be running. */
void http_library_unload(void);

/* http_stop: stop serving (open connections are closed) and free; accepts NULL. */
void http_stop(js_http_t *h);

/* http_port: the port bound (useful with port 0). */
unsigned http_port(const js_http_t *h);

/* http_scrapes: /metrics requests answered 200 so far. */
uint64_t http_scrapes(const js_http_t *h);

/* http_slow_closed: connections shut down so far for being slow (past a deadline, or to make room). */
uint64_t http_slow_closed(const js_http_t *h);

/* sink_http: the endpoint as a live sink (state: a js_http_t). */
extern const js_live_sink_t sink_http;

#endif
