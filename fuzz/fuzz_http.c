/* SPDX-License-Identifier: MIT
 *
 * libFuzzer target: the Prometheus endpoint's request path (src/sinks/http.c on libmicrohttpd, with a bearer
 * token so the authorisation code runs). Each input is sent as raw bytes over TCP to a live endpoint on
 * 127.0.0.1 and the answer read to the end; in memory, the input is also given to prom_accept (the Accept
 * header's format choice) and http_parse_listen (--listen). A crash, a hang (libFuzzer's -timeout) or a leak
 * in the request path is a finding.
 */
#include "fuzz.h"

#include "sinks/http.h"
#include "sinks/prometheus.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

static js_http_t *http;
static prom_cfg_t prom;
static unsigned port;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char tok[] = "/tmp/jobscope-fuzz-token-XXXXXX";
    int fd = mkstemp(tok);
    if (fd < 0 || write(fd, "s3cret\n", 7) != 7)
        abort();
    close(fd);
    http_opts_t o = {.listen = "127.0.0.1:0", .token_file = tok, .prom = &prom};
    char err[256];
    if (http_start(&o, &http, err, sizeof(err)) < 0) {
        fprintf(stderr, "fuzz_http: %s\n", err);
        abort();
    }
    unlink(tok);
    port = http_port(http);
    return 0;
}

/* dial: a connection to the endpoint. Thousands of inputs a second can run the loopback out of ephemeral
 * ports (TIME_WAIT) in a long run: a connect refused for want of ports is retried for up to 20 s. */
static int dial(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (int attempt = 0; attempt < 2000; attempt++) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            abort();
        if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
            return fd;
        int e = errno;
        close(fd);
        if (e != EADDRNOTAVAIL && e != EAGAIN && e != EINTR)
            break;
        usleep(10000);
    }
    abort(); /* the endpoint stopped accepting connections */
}

/* exchange: send `data`, half-close, read the answer until the server closes or `wait_ms` pass without a
 * byte. Returns whether the server answered (sent anything or closed) in time. */
static bool exchange(const uint8_t *data, size_t size, int wait_ms)
{
    int fd = dial();
    size_t off = 0;
    while (off < size) {
        ssize_t n = send(fd, data + off, size - off, MSG_NOSIGNAL);
        if (n <= 0)
            break; /* the server closed early (a bad request): fine */
        off += (size_t)n;
    }
    shutdown(fd, SHUT_WR);
    char buf[4096];
    bool answered = false;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, wait_ms) <= 0)
            break;
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        answered = true;
        if (n <= 0)
            break;
    }
    close(fd);
    return answered;
}

static const char probe[] = "GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret\r\n\r\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *t = fuzz_text(data, size);
    prom_format_t f = prom_accept(t);
    FUZZ_CHECK((int)f >= 0 && f < PROM_FORMAT_MAX);
    struct sockaddr_storage ss;
    size_t sslen;
    bool loop;
    if (size < 200)
        http_parse_listen(t, &ss, &sslen, &loop);
    free(t);
    /* an incomplete request waits for more until the idle timeout (10 s): give each input 100 ms, and when it
     * got no answer check that the endpoint still serves a complete request (a stuck server is a finding).
     * 20 s: the serving thread runs 10 nice steps below the monitor, and a loaded machine (load 14 with the
     * build beside it) once kept it off the CPU for more than 5 s */
    if (!exchange(data, size, 100))
        FUZZ_CHECK(exchange((const uint8_t *)probe, sizeof(probe) - 1, 20000));
    return 0;
}
