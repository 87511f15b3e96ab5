/* SPDX-License-Identifier: MIT
 *
 * The marks client: js_phase_begin, js_phase_end, js_event (include/jobscope.h). The first mark of a
 * process reads JOBSCOPE_SOCKET; without it every mark is a no-op (one atomic load and a branch). With it,
 * the process connects once (non-blocking, SOCK_SEQPACKET) and sends one packet per mark with MSG_DONTWAIT:
 * a full queue drops the mark (counted, and the count travels with the next mark), a monitor that has gone
 * turns every later mark into a counted -EPIPE. Nothing here blocks, prints or raises a signal
 * (MSG_NOSIGNAL). Each drop is also added to the monitor's drops counter (the file beside its socket, mapped
 * shared: core/marks.h), so the monitor knows every drop, even those no later mark could carry.
 *
 * Marks go only to a monitor of this user: JOBSCOPE_SOCKET must be an absolute path (a monitor's socket in
 * its private directory, core/marks.h; abstract "@names", which anyone can bind once freed, are refused), and
 * after connecting the listener's credentials (SO_PEERCRED, set by the kernel when it called listen) must be
 * this process's effective user or root. A path that another user made again after the monitor left (in
 * /tmp, where anyone may create names) is refused before a byte is sent; the monitor is then "gone" for this
 * process, with the reason kept for `jobscope mark` to print (client_gone_errno).
 *
 * The socket's descriptor number never changes once made: a reconnection (an embedded monitor started or
 * stopped) builds the new connection aside and dup3()s it over the old number, so a thread sending at that
 * moment uses either connection, never a closed or reused descriptor; the drops counter's page is likewise
 * mapped over the same address (MAP_FIXED), never unmapped. A forked child shares the connection (the monitor
 * tells senders apart by the kernel's credentials) and the counter's page, and starts its own drop count.
 */
#include "api/api.h"
#include "core/marks.h"
#include "core/markwire.h"
#include "sys/fsfile.h"
#include "core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { ST_UNINIT, ST_OFF, ST_ON, ST_GONE };

#define SNDBUF_WANTED (1 << 20) /* queued marks before drops; the kernel caps it at net.core.wmem_max */

static struct {
    pthread_mutex_t lock; /* taken only to connect or redirect */
    atomic_int state;
    int fd; /* fixed once made (see above) */
    int32_t rank;
    char host[MARKWIRE_HOST_MAX + 1];
    size_t host_len;
    atomic_uint_fast64_t dropped;
    js_marks_shared_t *_Atomic shared; /* the monitor's drops counter, mapped (NULL: none) */
    void *page;                        /* where it is mapped (kept: a new one is mapped over it) */
    char shared_for[128];              /* the address it belongs to */
    int gone_errno;                    /* why the announced monitor cannot be reached (state ST_GONE) */
    bool redirected;                   /* client_point() gave an address */
    char addr[128];
    bool atfork_set;
} cl = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

static __thread pid_t tls_tid;

static void after_fork_child(void)
{
    tls_tid = 0;
    atomic_store(&cl.dropped, 0);
    pthread_mutex_init(&cl.lock, NULL); /* the forking thread may not have held it; nothing else exists */
}

int marks_address_parse(const char *value, struct sockaddr_un *ret, socklen_t *ret_len)
{
    if (!value || value[0] != '/')
        return -EINVAL;
    size_t n = strlen(value);
    if (n >= sizeof(ret->sun_path))
        return -EINVAL;
    memset(ret, 0, sizeof(*ret));
    ret->sun_family = AF_UNIX;
    memcpy(ret->sun_path, value, n + 1);
    *ret_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
    return 0;
}

static int32_t rank_from_env(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        if (!v || !*v)
            continue;
        char *end;
        errno = 0;
        long r = strtol(v, &end, 10);
        if (!*end && !errno && r >= 0 && r <= INT32_MAX)
            return (int32_t)r;
    }
    return -1;
}

/* gone: the announced monitor cannot be reached, for reason `e` (an errno). */
static int gone(int e)
{
    cl.gone_errno = e;
    return ST_GONE;
}

/* map_shared: map the drops counter beside the socket at `addr` (once per address): a regular file of this
 * user or root, in the monitor's private directory. Without it (an older monitor, a stranger's file) drops
 * are counted by this process only. Called with cl.lock held. */
static void map_shared(const char *addr)
{
    if (!strcmp(cl.shared_for, addr))
        return;
    snprintf(cl.shared_for, sizeof(cl.shared_for), "%s", addr);
    char path[sizeof(cl.shared_for) + sizeof(MARKS_DROPS_NAME)];
    snprintf(path, sizeof(path), "%s", addr);
    char *slash = strrchr(path, '/');
    atomic_store(&cl.shared, NULL);
    if (!slash)
        return;
    snprintf(slash + 1, sizeof(path) - (size_t)(slash + 1 - path), "%s", MARKS_DROPS_NAME);
    int fd = fs_create(path, O_RDWR | O_NOFOLLOW, 0);
    struct stat st;
    if (fd < 0)
        return;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_uid == geteuid() || st.st_uid == 0) &&
        st.st_size >= MARKS_SHARED_SIZE) {
        /* over the old page when there is one: a thread counting a drop at this moment writes to either
         * counter, never to an unmapped address */
        void *p = mmap(cl.page, MARKS_SHARED_SIZE, PROT_READ | PROT_WRITE,
                       MAP_SHARED | (cl.page ? MAP_FIXED : 0), fd, 0);
        if (p != MAP_FAILED) {
            cl.page = p;
            atomic_store(&cl.shared, (js_marks_shared_t *)p);
        }
    }
    close(fd);
}

/* connect_locked: read the address and connect; the new state. Called with cl.lock held. */
static int connect_locked(void)
{
    if (!cl.atfork_set && pthread_atfork(NULL, NULL, after_fork_child) == 0)
        cl.atfork_set = true;
    const char *addr = cl.redirected ? cl.addr : getenv("JOBSCOPE_SOCKET");
    if (!addr || !*addr)
        return ST_OFF;
    struct sockaddr_un sa;
    socklen_t salen;
    if (marks_address_parse(addr, &sa, &salen) < 0)
        return gone(EINVAL); /* announced, but not a monitor's private socket path */
    map_shared(addr);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return ST_UNINIT; /* out of descriptors: try again at the next mark */
    int sz = SNDBUF_WANTED;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
    if (connect(fd, (struct sockaddr *)&sa, salen) < 0) {
        int e = errno;
        close(fd);
        /* a full accept queue: drop this mark, try again at the next; anything else: no monitor there */
        return e == EAGAIN || e == EINTR ? ST_UNINIT : gone(e);
    }
    /* the listener must be this user's (or root's): never send to a stranger who took the name */
    struct ucred uc;
    socklen_t ul = sizeof(uc);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &ul) < 0 || (uc.uid != geteuid() && uc.uid != 0)) {
        close(fd);
        atomic_store(&cl.shared, NULL); /* not our monitor's either */
        return gone(EPERM);
    }
    if (cl.fd < 0) {
        /* the first connection: the facts every mark carries, written once, before the state that
         * publishes them (a reconnection leaves them alone: a thread may be reading them) */
        cl.rank = rank_from_env();
        char h[MARKWIRE_HOST_MAX + 1] = "";
        if (gethostname(h, sizeof(h) - 1) == 0) {
            memcpy(cl.host, h, sizeof(h));
            cl.host_len = strnlen(cl.host, MARKWIRE_HOST_MAX);
        }
        cl.fd = fd;
    } else if (dup3(fd, cl.fd, O_CLOEXEC) < 0) {
        int e = errno;
        close(fd);
        return gone(e);
    } else {
        close(fd);
    }
    return ST_ON;
}

static int client_state(void)
{
    int st = atomic_load_explicit(&cl.state, memory_order_acquire);
    if (st != ST_UNINIT)
        return st;
    pthread_mutex_lock(&cl.lock);
    st = atomic_load_explicit(&cl.state, memory_order_acquire);
    if (st == ST_UNINIT) {
        st = connect_locked();
        atomic_store_explicit(&cl.state, st, memory_order_release);
    }
    pthread_mutex_unlock(&cl.lock);
    return st;
}

bool client_has_socket(void)
{
    pthread_mutex_lock(&cl.lock);
    bool r = cl.fd >= 0;
    pthread_mutex_unlock(&cl.lock);
    return r;
}

void client_point(const char *addr)
{
    pthread_mutex_lock(&cl.lock);
    cl.redirected = addr != NULL;
    if (addr)
        snprintf(cl.addr, sizeof(cl.addr), "%s", addr);
    atomic_store_explicit(&cl.state, ST_UNINIT, memory_order_release);
    pthread_mutex_unlock(&cl.lock);
}

static int dropped(int rc)
{
    atomic_fetch_add_explicit(&cl.dropped, 1, memory_order_relaxed);
    js_marks_shared_t *sh = atomic_load_explicit(&cl.shared, memory_order_acquire);
    if (sh)
        atomic_fetch_add_explicit(&sh->dropped, 1, memory_order_relaxed);
    return rc;
}

/* encode: the packet of one mark with this process's facts; its length or -EINVAL. */
static int encode(int kind, const char *name, size_t nl, const char *data, size_t dl, uint64_t d,
                  unsigned char *buf, size_t cap)
{
    if (!tls_tid)
        tls_tid = (pid_t)syscall(SYS_gettid);
    markwire_t m = {
        .kind = kind,
        .rank = cl.rank,
        .t_mono_ns = now_ns(CLOCK_MONOTONIC),
        .t_unix_ns = now_ns(CLOCK_REALTIME),
        .tid = (uint32_t)tls_tid,
        .dropped = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d,
        .name = name,
        .name_len = nl,
        .host = cl.host,
        .host_len = cl.host_len,
        .data = data,
        .data_len = dl,
    };
    return markwire_encode(&m, buf, cap);
}

int client_mark(int kind, const char *name, const char *data)
{
    if (!name)
        return -EINVAL;
    size_t nl = strnlen(name, MARKWIRE_NAME_MAX + 1);
    size_t dl = data ? strnlen(data, MARKWIRE_DATA_MAX + 1) : 0;
    if (nl == 0 || nl > MARKWIRE_NAME_MAX || dl > MARKWIRE_DATA_MAX || kind < 0 || kind >= MARKWIRE_KIND_MAX)
        return -EINVAL;
    int st = atomic_load_explicit(&cl.state, memory_order_acquire);
    if (st == ST_OFF)
        return 0;
    if (st == ST_UNINIT && (st = client_state()) == ST_OFF)
        return 0;
    if (st == ST_GONE)
        return dropped(-EPIPE);
    if (st == ST_UNINIT)
        return dropped(-EAGAIN);
    uint64_t d = atomic_load_explicit(&cl.dropped, memory_order_relaxed);
    unsigned char buf[MARKWIRE_MAX];
    int n = encode(kind, name, nl, data, dl, d, buf, sizeof(buf));
    if (n < 0)
        return n;
    ssize_t w;
    do
        w = send(cl.fd, buf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
    while (w < 0 && errno == EINTR);
    if (w == n)
        return 0;
    if (w < 0 && (errno == EAGAIN || errno == ENOBUFS || errno == ENOMEM))
        return dropped(-EAGAIN);
    /* EPIPE, ECONNRESET, EBADF (a child closed every descriptor), ENOTSOCK: the monitor is gone for us */
    int e = w < 0 ? errno : EPIPE;
    int expect = ST_ON;
    if (atomic_compare_exchange_strong(&cl.state, &expect, ST_GONE))
        cl.gone_errno = e;
    return dropped(-EPIPE);
}

int client_gone_errno(void)
{
    if (atomic_load_explicit(&cl.state, memory_order_acquire) != ST_GONE)
        return 0;
    return cl.gone_errno ? cl.gone_errno : EPIPE;
}

JS_API int js_phase_begin(const char *name)
{
    return client_mark(MARKWIRE_BEGIN, name, NULL);
}

JS_API int js_phase_end(const char *name)
{
    return client_mark(MARKWIRE_END, name, NULL);
}

JS_API int js_event(const char *name, const char *json)
{
    return client_mark(MARKWIRE_EVENT, name, json && *json ? json : NULL);
}

JS_API int js_marks_active(void)
{
    return client_state() == ST_ON;
}

JS_API uint64_t js_marks_dropped(void)
{
    return atomic_load_explicit(&cl.dropped, memory_order_relaxed);
}
