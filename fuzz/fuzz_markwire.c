/* SPDX-License-Identifier: MIT
 *
 * libFuzzer target: the mark protocol (src/core/markwire.c) and the monitor's receiving side
 * (src/core/marks.c). Each input is decoded in memory (a packet that decodes re-encodes to the same bytes),
 * then sent as one SEQPACKET packet to a real marks socket, received (credentials, validation, the data's
 * JSON check) and taken into rows, as the monitor does between two samples.
 */
#include "fuzz.h"

#include "core/marks.h"
#include "core/markwire.h"
#include "core/sample.h"
#include "sources/registry.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static js_marks_t *mk;
static int client = -1;
static js_sample_t sample;

static int connect_client(void)
{
    const char *addr = marks_address(mk);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t n = strlen(addr);
    if (n >= sizeof(sa.sun_path))
        abort();
    memcpy(sa.sun_path, addr, n);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0 ||
        connect(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)) < 0)
        abort();
    return fd;
}

/* at_exit: the socket's private directory goes with the fuzzer (libFuzzer leaves through exit()) */
static void at_exit(void)
{
    marks_close(mk);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (marks_open(&mk) < 0 || sample_init(&sample) < 0)
        abort();
    atexit(at_exit);
    client = connect_client();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    markwire_t w;
    if (markwire_decode(data, size, &w) == 0) {
        static unsigned char again[MARKWIRE_MAX];
        FUZZ_CHECK(w.kind >= 0 && w.kind < MARKWIRE_KIND_MAX && markwire_kind_name(w.kind));
        int n = markwire_encode(&w, again, sizeof(again));
        /* the three reserved bytes are not checked on decode, so compare everything else */
        FUZZ_CHECK(n == (int)size && memcmp(again, data, 37) == 0 &&
                   memcmp(again + MARKWIRE_HDR, data + MARKWIRE_HDR, size - MARKWIRE_HDR) == 0);
    }
    if (size > MARKWIRE_MAX + 64)
        return 0;
    if (send(client, data, size, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
        close(client); /* the monitor dropped us: reconnect, as a job's next process would */
        client = connect_client();
        return 0;
    }
    js_rows_t *rows = sample_rows(&sample, &table_marks);
    marks_receive(mk, 1, NULL, NULL);
    marks_take(mk, rows, INT64_MAX, true);
    sample_clear(&sample);
    return 0;
}
