/* SPDX-License-Identifier: MIT
 *
 * The /metrics endpoint (http.h) on libmicrohttpd. The monitor's thread renders both formats into new
 * snapshots and swaps the pointers under a mutex held for the swap only; a request takes a reference to the
 * current snapshot under the same mutex and libmicrohttpd sends it from its own (epoll) thread, dropping the
 * reference when the response is destroyed.
 *
 * Slow clients: libmicrohttpd closes a connection idle for HTTP_IDLE_TIMEOUT_S, but a client that sends a
 * byte a second is never idle. So every connection is also tracked here (libmicrohttpd's connection and
 * request notifications) with a deadline for its current phase: its request's headers (TLS handshake
 * included; for a kept-alive connection, the next request's) within HTTP_HEADER_DEADLINE_S, the response
 * taken within HTTP_SEND_DEADLINE_S. A guard thread shuts down (shutdown(2): libmicrohttpd then closes it)
 * each connection past its deadline. And slow connections never keep a new one out: when a new connection
 * makes more than HTTP_MAX_CONNECTIONS in all, or more than HTTP_MAX_PER_IP from its address, the oldest
 * slow one (in its phase for HTTP_SLOW_MS or more) is shut down to make room; only when none is slow is the
 * new one refused. Every local user owns all of 127/8, so per-address limits alone protect nothing; a
 * scrape takes milliseconds, so a slow connection is never a scraper that is being served. libmicrohttpd's
 * own limits stay above these, as a backstop.
 *
 * libmicrohttpd is not linked: http_start loads libmicrohttpd.so.12 with dlopen (sys/dlib.h) the first time
 * an endpoint is started, binding the entry points declared in sinks/mhd_abi.h (which keeps libmicrohttpd's
 * names at the call sites). Without it, http_start fails with one line saying why, and nothing else changes.
 */
#include "sinks/http.h"

#include "core/json.h"
#include "core/util.h"
#include "sinks/mhd_abi.h"
#include "sys/dlib.h"
#include "sys/fsroot.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HTTP_MAX_CONNECTIONS 128u /* in all (more make slow ones give way, see above) */
#define HTTP_MAX_PER_IP 64u     /* from one address: 50 concurrent scrapers fit, one client cannot take all */
#define HTTP_MHD_HEADROOM 64u   /* libmicrohttpd's own limit is this much higher: room to make room */
#define HTTP_CONN_MEMORY 32768u /* headers and buffers per connection; larger headers get 431/close */
#define HTTP_IDLE_TIMEOUT_S 10u /* a connection idle this long is closed (stuck readers) */
#define HTTP_HEADER_DEADLINE_S 5 /* a request's headers must have arrived this long after it began */
#define HTTP_SEND_DEADLINE_S 30  /* a response must have been taken this long after the request */
#define HTTP_SLOW_MS 1000        /* a connection this long in its phase gives way to a new one */
#define HTTP_CRED_MAX 65536      /* credential and TLS files larger than this are refused */
#define HTTP_NICE 10             /* the serving thread's niceness above the monitor's */

/* ---- the library ------------------------------------------------------------------------------------ */

/* clang-format off */
#define MHD_SYM(name, field) {{name}, offsetof(js_mhd_api_t, field), true}
/* clang-format on */
static const js_dlsym_t mhd_syms[] = {
    MHD_SYM("MHD_start_daemon", start_daemon),
    MHD_SYM("MHD_stop_daemon", stop_daemon),
    MHD_SYM("MHD_is_feature_supported", is_feature_supported),
    MHD_SYM("MHD_lookup_connection_value", lookup_connection_value),
    MHD_SYM("MHD_basic_auth_get_username_password", basic_auth_get_username_password),
    MHD_SYM("MHD_free", free_mem),
    MHD_SYM("MHD_create_response_from_buffer", create_response_from_buffer),
    MHD_SYM("MHD_create_response_from_buffer_with_free_callback_cls",
            create_response_from_buffer_with_free_callback_cls),
    MHD_SYM("MHD_add_response_header", add_response_header),
    MHD_SYM("MHD_queue_response", queue_response),
    MHD_SYM("MHD_queue_basic_auth_fail_response", queue_basic_auth_fail_response),
    MHD_SYM("MHD_destroy_response", destroy_response),
    MHD_SYM("MHD_get_connection_info", get_connection_info),
};
static const char *const mhd_sonames[] = {HTTP_LIBRARY, NULL};

js_mhd_api_t mhd_api;
static js_dlib_t mhd_lib; /* loaded once, kept for the life of the process */
static pthread_mutex_t mhd_lock = PTHREAD_MUTEX_INITIALIZER;

/* mhd_load: load and bind libmicrohttpd unless done. A failure is not remembered (the next start tries
 * again). Returns 0, or -ENOENT with "HTTP server library ... not loadable: REASON" in err. */
static int mhd_load(char *err, size_t errlen)
{
    int r = 0;
    char why[400];
    pthread_mutex_lock(&mhd_lock);
    if (!mhd_lib.handle) {
        r = dlib_open(&mhd_lib, HTTP_LIBRARY_ENV, mhd_sonames, why, sizeof(why));
        if (r == 0 && dlib_resolve(&mhd_lib, mhd_syms, sizeof(mhd_syms) / sizeof(mhd_syms[0]), &mhd_api, NULL,
                                   why, sizeof(why)) < 0) {
            r = -ENOENT;
            dlib_close(&mhd_lib);
        }
        if (r < 0)
            snprintf(err, errlen, "HTTP server library " HTTP_LIBRARY " not loadable: %s", why);
    }
    pthread_mutex_unlock(&mhd_lock);
    return r;
}

void http_library_unload(void)
{
    pthread_mutex_lock(&mhd_lock);
    dlib_close(&mhd_lib);
    memset(&mhd_api, 0, sizeof(mhd_api));
    pthread_mutex_unlock(&mhd_lock);
}

/* ---- snapshots --------------------------------------------------------------------------------------- */

typedef struct {
    atomic_long refs;
    size_t len;
    char *p;
} snap_t;

typedef struct {
    char *user, *pass;
} cred_t;

/* A connection, as the guard sees it (owned by the list; the socket is libmicrohttpd's). */
typedef struct hconn {
    int fd;
    unsigned char addr[16]; /* the client's address (IPv4 in the first 4 bytes) */
    int family;
    int64_t since_ns; /* start of the current phase */
    bool sending;     /* the request is in, its response being sent */
    bool closing;     /* shut down by the guard: libmicrohttpd will close it */
    struct hconn *prev, *next;
} hconn_t;

struct js_http {
    struct MHD_Daemon *d;
    int fd; /* the listening socket (libmicrohttpd owns it once started, and closes it on stop) */
    struct sockaddr_storage ss;
    size_t sslen;
    bool tls;
    unsigned port;
    /* the guard (slow clients): the connections, its thread, what it did */
    pthread_mutex_t glock;
    pthread_cond_t gcond;
    pthread_t guard;
    bool guard_started, guard_quit;
    hconn_t *conns;
    size_t nconns; /* not yet shut down */
    atomic_uint_fast64_t slow_closed, refused;
    pthread_mutex_t lock;
    snap_t *cur[PROM_FORMAT_MAX];
    size_t last_len[PROM_FORMAT_MAX];
    char *token;
    cred_t *creds;
    size_t ncreds;
    char *cert, *key;
    prom_cfg_t *prom;
    atomic_uint_fast64_t scrapes;
};

static void snap_unref(snap_t *s)
{
    if (s && atomic_fetch_sub(&s->refs, 1) == 1) {
        free(s->p);
        free(s);
    }
}

static void snap_release(void *cls)
{
    snap_unref(cls);
}

/* ---- addresses --------------------------------------------------------------------------------------- */

int http_parse_listen(const char *spec, struct sockaddr_storage *ret, size_t *ret_len, bool *ret_loopback)
{
    char host[64] = "";
    const char *port_s = spec;
    const char *colon = strrchr(spec, ':');
    if (spec[0] == '[') { /* [v6]:port */
        const char *close = strchr(spec, ']');
        if (!close || close[1] != ':' || (size_t)(close - spec - 1) >= sizeof(host))
            return -EINVAL;
        memcpy(host, spec + 1, (size_t)(close - spec - 1));
        host[close - spec - 1] = '\0';
        port_s = close + 2;
    } else if (colon) {
        if ((size_t)(colon - spec) >= sizeof(host) || memchr(spec, ':', (size_t)(colon - spec)))
            return -EINVAL; /* a bare IPv6 address needs brackets */
        memcpy(host, spec, (size_t)(colon - spec));
        host[colon - spec] = '\0';
        port_s = colon + 1;
    }
    char *end;
    errno = 0;
    long port = strtol(port_s, &end, 10);
    if (!*port_s || *end || errno || port < 0 || port > 65535 || port_s[0] == '-' || port_s[0] == '+')
        return -EINVAL;
    memset(ret, 0, sizeof(*ret));
    if (!host[0] || !strcmp(host, "localhost"))
        snprintf(host, sizeof(host), "127.0.0.1");
    struct sockaddr_in *a4 = (struct sockaddr_in *)ret;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ret;
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        *ret_len = sizeof(*a4);
        *ret_loopback = (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
        return 0;
    }
    if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        *ret_len = sizeof(*a6);
        *ret_loopback = IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
        return 0;
    }
    return -EINVAL;
}

/* ---- files ------------------------------------------------------------------------------------------- */

/* slurp: the whole (small) file at `path`, NUL-terminated, in *ret (caller frees). Returns 0 or -errno. */
static int slurp(const char *path, char **ret, size_t *ret_len)
{
    int fd = fs_open(AT_FDCWD, path);
    if (fd < 0)
        return fd;
    js_buf_t b = {0};
    int r = fd_read(fd, &b);
    close(fd);
    if (r == 0 && b.len > HTTP_CRED_MAX)
        r = -EFBIG;
    if (r < 0) {
        buf_free(&b);
        return r;
    }
    if (!b.p && buf_append(&b, "", 0) < 0)
        return -ENOMEM;
    *ret = b.p;
    *ret_len = b.len;
    return 0;
}

static int load_token(js_http_t *h, const char *path, char *err, size_t errlen)
{
    size_t n;
    int r = slurp(path, &h->token, &n);
    if (r < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(-r));
        return r;
    }
    h->token[strcspn(h->token, "\r\n")] = '\0'; /* the first line */
    if (!h->token[0]) {
        snprintf(err, errlen, "%s: the token is empty", path);
        return -EINVAL;
    }
    return 0;
}

static int load_creds(js_http_t *h, const char *path, char *err, size_t errlen)
{
    char *text;
    size_t n;
    int r = slurp(path, &text, &n);
    if (r < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(-r));
        return r;
    }
    int line = 0;
    for (char *save = NULL, *l = strtok_r(text, "\n", &save); l && r == 0; l = strtok_r(NULL, "\n", &save)) {
        line++;
        l[strcspn(l, "\r")] = '\0';
        if (!l[0] || l[0] == '#')
            continue;
        char *c = strchr(l, ':');
        if (!c || c == l) {
            snprintf(err, errlen, "%s:%d: not user:password", path, line);
            r = -EINVAL;
            break;
        }
        *c = '\0';
        if (!c[1]) {
            snprintf(err, errlen, "%s:%d: user %s has an empty password", path, line, l);
            r = -EINVAL;
            break;
        }
        cred_t *x = realloc(h->creds, (h->ncreds + 1) * sizeof(*x));
        if (!x) {
            r = -ENOMEM;
            break;
        }
        h->creds = x;
        x[h->ncreds].user = strdup(l);
        x[h->ncreds].pass = strdup(c + 1);
        h->ncreds++;
        if (!x[h->ncreds - 1].user || !x[h->ncreds - 1].pass)
            r = -ENOMEM;
    }
    if (r == 0 && !h->ncreds) {
        snprintf(err, errlen, "%s: no user:password line", path);
        r = -EINVAL;
    }
    if (r == -ENOMEM)
        snprintf(err, errlen, "out of memory");
    explicit_bzero(text, n);
    free(text);
    return r;
}

/* ---- requests ---------------------------------------------------------------------------------------- */

/* same: constant-time comparison (the time depends on the lengths only). */
static bool same(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), n = la > lb ? la : lb;
    unsigned char d = la != lb;
    for (size_t i = 0; i < n; i++)
        d |= (unsigned char)(i < la ? a[i] : 0) ^ (unsigned char)(i < lb ? b[i] : 0);
    return d == 0;
}

static bool authorized(js_http_t *h, struct MHD_Connection *c)
{
    if (!h->token && !h->ncreds)
        return true;
    const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (h->token && auth && strncasecmp(auth, "Bearer ", 7) == 0) {
        const char *t = auth + 7;
        while (*t == ' ')
            t++;
        return same(t, h->token);
    }
    if (!h->ncreds)
        return false;
    char *pass = NULL;
    char *user = MHD_basic_auth_get_username_password(c, &pass);
    bool ok = false;
    for (size_t i = 0; user && pass && i < h->ncreds; i++)
        ok |= same(user, h->creds[i].user) & same(pass, h->creds[i].pass);
    if (pass) {
        explicit_bzero(pass, strlen(pass));
        MHD_free(pass);
    }
    if (user)
        MHD_free(user);
    return ok;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *body, const char *hname,
                             const char *hvalue)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
    if (hname)
        MHD_add_response_header(r, hname, hvalue);
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static const char index_page[] = "<!DOCTYPE html>\n<html><head><title>jobscope</title></head><body>\n"
                                 "<h1>jobscope</h1><p><a href=\"metrics\">Metrics</a></p>\n</body></html>\n";

/* lower_priority: the serving thread runs HTTP_NICE steps nicer than the monitor, so under a flood of
 * requests the sampling thread still gets the CPU first (Linux niceness is per thread). Once per thread. */
static void lower_priority(void)
{
    static _Thread_local bool done;
    if (done)
        return;
    done = true;
    id_t tid = (id_t)gettid();
    errno = 0;
    int cur = getpriority(PRIO_PROCESS, tid);
    if (cur == -1 && errno)
        return;
    setpriority(PRIO_PROCESS, tid, cur + HTTP_NICE > 19 ? 19 : cur + HTTP_NICE);
}

/* ---- the guard: deadlines and room for new connections ------------------------------------------------ */

static bool same_addr(const hconn_t *a, const hconn_t *b)
{
    return a->family == b->family && memcmp(a->addr, b->addr, sizeof(a->addr)) == 0;
}

/* shut: shut a connection down, counted in `count` (glock held: the socket is still open, libmicrohttpd
 * closes it only after telling us, under the same lock). */
static void shut(js_http_t *h, hconn_t *x, atomic_uint_fast64_t *count)
{
    shutdown(x->fd, SHUT_RDWR);
    x->closing = true;
    h->nconns--;
    atomic_fetch_add(count, 1);
}

/* make_room: when `x` makes more than `limit` connections (all, or from x's address when `per_addr`), shut
 * the oldest slow one down; with none, x itself. glock held. */
static void make_room(js_http_t *h, hconn_t *x, size_t limit, bool per_addr, int64_t now)
{
    size_t n = 0;
    hconn_t *oldest = NULL;
    for (hconn_t *c = h->conns; c; c = c->next) {
        if (c->closing || (per_addr && !same_addr(c, x)))
            continue;
        n++;
        if (c != x && now - c->since_ns >= (int64_t)HTTP_SLOW_MS * 1000000 &&
            (!oldest || c->since_ns < oldest->since_ns))
            oldest = c;
    }
    if (n <= limit)
        return;
    shut(h, oldest ? oldest : x, oldest ? &h->slow_closed : &h->refused);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context, int toe)
{
    js_http_t *h = cls;
    if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        hconn_t *x = *socket_context;
        if (!x)
            return;
        pthread_mutex_lock(&h->glock);
        if (!x->closing)
            h->nconns--;
        if (x->prev)
            x->prev->next = x->next;
        else
            h->conns = x->next;
        if (x->next)
            x->next->prev = x->prev;
        pthread_mutex_unlock(&h->glock);
        free(x);
        *socket_context = NULL;
        return;
    }
    const union MHD_ConnectionInfo *fi = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *ai = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    hconn_t *x = calloc(1, sizeof(*x));
    if (!x || !fi) { /* not tracked: libmicrohttpd's own limits and idle timeout still hold it */
        free(x);
        return;
    }
    x->fd = fi->connect_fd;
    const struct sockaddr *sa = ai ? ai->client_addr : NULL;
    if (sa && sa->sa_family == AF_INET) {
        x->family = AF_INET;
        memcpy(x->addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    } else if (sa && sa->sa_family == AF_INET6) {
        x->family = AF_INET6;
        memcpy(x->addr, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
    }
    int64_t now = now_ns(CLOCK_MONOTONIC);
    x->since_ns = now;
    pthread_mutex_lock(&h->glock);
    x->next = h->conns;
    if (h->conns)
        h->conns->prev = x;
    h->conns = x;
    h->nconns++;
    make_room(h, x, HTTP_MAX_PER_IP, true, now);
    if (!x->closing)
        make_room(h, x, HTTP_MAX_CONNECTIONS, false, now);
    pthread_cond_signal(&h->gcond); /* a new deadline */
    pthread_mutex_unlock(&h->glock);
    *socket_context = x;
}

/* phase: the connection of `c` starts a new phase now (sending its response, or awaiting a request). */
static void phase(js_http_t *h, struct MHD_Connection *c, bool sending)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    hconn_t *x = ci ? ci->socket_context : NULL;
    if (!x)
        return;
    pthread_mutex_lock(&h->glock);
    x->sending = sending;
    x->since_ns = now_ns(CLOCK_MONOTONIC);
    pthread_mutex_unlock(&h->glock);
}

static void guard_request(js_http_t *h, struct MHD_Connection *c)
{
    phase(h, c, true);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, int toe)
{
    (void)con_cls;
    (void)toe;
    phase(cls, c, false); /* kept alive: the next request's headers have their deadline */
}

/* guard_thread: shut down each connection past its phase's deadline; sleep until the next deadline. */
static void *guard_thread(void *arg)
{
    js_http_t *h = arg;
    pthread_mutex_lock(&h->glock);
    while (!h->guard_quit) {
        int64_t now = now_ns(CLOCK_MONOTONIC), next = INT64_MAX;
        for (hconn_t *c = h->conns; c; c = c->next) {
            if (c->closing)
                continue;
            int64_t due = c->since_ns +
                          (int64_t)(c->sending ? HTTP_SEND_DEADLINE_S : HTTP_HEADER_DEADLINE_S) * 1000000000;
            if (due <= now)
                shut(h, c, &h->slow_closed);
            else if (due < next)
                next = due;
        }
        if (next == INT64_MAX) {
            pthread_cond_wait(&h->gcond, &h->glock);
        } else {
            struct timespec ts = {.tv_sec = next / 1000000000, .tv_nsec = next % 1000000000};
            pthread_cond_timedwait(&h->gcond, &h->glock, &ts);
        }
    }
    pthread_mutex_unlock(&h->glock);
    return NULL;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_size,
                              void **con_cls)
{
    js_http_t *h = cls;
    lower_priority();
    (void)version;
    (void)upload_data;
    (void)con_cls;
    guard_request(h, c);
    bool head = strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
    if (!head && strcmp(method, MHD_HTTP_METHOD_GET) != 0)
        return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n", MHD_HTTP_HEADER_ALLOW,
                     "GET, HEAD");
    if (*upload_size) /* a GET with a body: not ours to read */
        return reply(c, MHD_HTTP_BAD_REQUEST, "unexpected request body\n", NULL, NULL);
    bool metrics = strcmp(url, "/metrics") == 0;
    if (!metrics && strcmp(url, "/") != 0)
        return reply(c, MHD_HTTP_NOT_FOUND, "not found: try /metrics\n", NULL, NULL);
    if (!authorized(h, c)) {
        if (h->ncreds) {
            struct MHD_Response *r =
                MHD_create_response_from_buffer(13, (void *)"unauthorized\n", MHD_RESPMEM_PERSISTENT);
            if (!r)
                return MHD_NO;
            enum MHD_Result ret = MHD_queue_basic_auth_fail_response(c, "jobscope", r);
            MHD_destroy_response(r);
            return ret;
        }
        return reply(c, MHD_HTTP_UNAUTHORIZED, "unauthorized\n", MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                     "Bearer realm=\"jobscope\"");
    }
    if (!metrics) {
        struct MHD_Response *r = MHD_create_response_from_buffer(sizeof(index_page) - 1, (void *)index_page,
                                                                 MHD_RESPMEM_PERSISTENT);
        if (!r)
            return MHD_NO;
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/html; charset=utf-8");
        enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
        MHD_destroy_response(r);
        return ret;
    }
    prom_format_t fmt = prom_accept(MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT));
    pthread_mutex_lock(&h->lock);
    snap_t *s = h->cur[fmt];
    if (s)
        atomic_fetch_add(&s->refs, 1);
    pthread_mutex_unlock(&h->lock);
    if (!s)
        return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no sample yet\n", MHD_HTTP_HEADER_RETRY_AFTER, "1");
    struct MHD_Response *r =
        MHD_create_response_from_buffer_with_free_callback_cls(s->len, s->p, snap_release, s);
    if (!r) {
        snap_unref(s);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, prom_content_type[fmt]);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    if (ret == MHD_YES)
        atomic_fetch_add(&h->scrapes, 1);
    return ret;
}

/* ---- life ---------------------------------------------------------------------------------------------- */

static int listen_socket(const struct sockaddr_storage *ss, size_t len, int *ret_fd)
{
    int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (const struct sockaddr *)ss, (socklen_t)len) < 0 || listen(fd, 128) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    *ret_fd = fd;
    return 0;
}

int http_prepare(const http_opts_t *o, js_http_t **ret, char *err, size_t errlen)
{
    struct sockaddr_storage ss;
    size_t sslen;
    bool loopback;
    *ret = NULL;
    if (http_parse_listen(o->listen, &ss, &sslen, &loopback) < 0) {
        snprintf(err, errlen,
                 "invalid listen address '%s' (PORT, ADDR:PORT or [ADDR6]:PORT, ADDR an IP address)",
                 o->listen);
        return -EINVAL;
    }
    if (!o->tls_cert != !o->tls_key) {
        snprintf(err, errlen, "TLS needs both a certificate and a key");
        return -EINVAL;
    }
    js_http_t *h = calloc(1, sizeof(*h));
    if (!h) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    h->fd = -1;
    h->prom = o->prom;
    h->ss = ss;
    h->sslen = sslen;
    h->tls = o->tls_cert != NULL;
    pthread_mutex_init(&h->lock, NULL);
    pthread_mutex_init(&h->glock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&h->gcond, &ca);
    pthread_condattr_destroy(&ca);
    int r = 0;
    size_t n;
    if (o->token_file && (r = load_token(h, o->token_file, err, errlen)) < 0)
        goto fail;
    if (o->basic_auth_file && (r = load_creds(h, o->basic_auth_file, err, errlen)) < 0)
        goto fail;
    if (o->tls_cert && (r = slurp(o->tls_cert, &h->cert, &n)) < 0) {
        snprintf(err, errlen, "%s: %s", o->tls_cert, strerror(-r));
        goto fail;
    }
    if (o->tls_key && (r = slurp(o->tls_key, &h->key, &n)) < 0) {
        snprintf(err, errlen, "%s: %s", o->tls_key, strerror(-r));
        goto fail;
    }
    *ret = h;
    return 0;
fail:
    http_stop(h);
    return r;
}

int http_listen(js_http_t *h, const char *listen, char *err, size_t errlen)
{
    int lr = mhd_load(err, errlen);
    if (lr < 0)
        return lr;
    if (h->tls && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
        snprintf(err, errlen, "this libmicrohttpd was built without TLS");
        return -ENOTSUP;
    }
    int r;
    if ((r = listen_socket(&h->ss, h->sslen, &h->fd)) < 0) {
        snprintf(err, errlen, "cannot listen on %s: %s", listen, strerror(-r));
        return r;
    }
    struct sockaddr_storage bound;
    socklen_t bl = sizeof(bound);
    if (getsockname(h->fd, (struct sockaddr *)&bound, &bl) == 0)
        h->port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                                    : ((struct sockaddr_in *)&bound)->sin_port);
    if ((r = -pthread_create(&h->guard, NULL, guard_thread, h)) < 0) {
        snprintf(err, errlen, "cannot start the HTTP server's guard: %s", strerror(-r));
        close(h->fd);
        h->fd = -1;
        return r;
    }
    h->guard_started = true;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD;
    flags |= MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES ? MHD_USE_EPOLL : MHD_USE_POLL;
    if (h->ss.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    if (h->tls)
        flags |= MHD_USE_TLS;
    /* the limits per address and in all are the guard's (it makes room by closing slow connections);
     * libmicrohttpd's stand above them as a backstop */
    h->d = MHD_start_daemon(flags, 0, NULL, NULL, handle, h, MHD_OPTION_LISTEN_SOCKET, h->fd,
                            MHD_OPTION_CONNECTION_LIMIT, HTTP_MAX_CONNECTIONS + HTTP_MHD_HEADROOM,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, HTTP_MAX_PER_IP + HTTP_MHD_HEADROOM,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_CONN_MEMORY,
                            MHD_OPTION_CONNECTION_TIMEOUT, HTTP_IDLE_TIMEOUT_S, MHD_OPTION_STRICT_FOR_CLIENT,
                            1, MHD_OPTION_NOTIFY_CONNECTION, on_connection, h, MHD_OPTION_NOTIFY_COMPLETED,
                            on_completed, h, h->tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, h->key,
                            MHD_OPTION_HTTPS_MEM_CERT, h->cert, MHD_OPTION_END);
    if (!h->d) {
        r = -EIO;
        snprintf(err, errlen, "cannot start the HTTP server on %s%s", listen,
                 h->tls ? " (is the certificate and key PEM, and the key unencrypted?)" : "");
        close(h->fd);
        h->fd = -1;
        return r;
    }
    return 0;
}

int http_start(const http_opts_t *o, js_http_t **ret, char *err, size_t errlen)
{
    js_http_t *h;
    int r = http_prepare(o, &h, err, errlen);
    if (r == 0 && (r = http_listen(h, o->listen, err, errlen)) < 0)
        http_stop(h);
    *ret = r == 0 ? h : NULL;
    return r;
}

void http_stop(js_http_t *h)
{
    if (!h)
        return;
    if (h->d)
        MHD_stop_daemon(h->d); /* joins its thread and closes the listening socket; no response (and no
                                * snapshot reference) is left after it, and every connection is closed */
    if (h->guard_started) {
        pthread_mutex_lock(&h->glock);
        h->guard_quit = true;
        pthread_cond_signal(&h->gcond);
        pthread_mutex_unlock(&h->glock);
        pthread_join(h->guard, NULL);
    }
    for (int f = 0; f < PROM_FORMAT_MAX; f++)
        snap_unref(h->cur[f]);
    if (h->token) {
        explicit_bzero(h->token, strlen(h->token));
        free(h->token);
    }
    for (size_t i = 0; i < h->ncreds; i++) {
        if (h->creds[i].pass)
            explicit_bzero(h->creds[i].pass, strlen(h->creds[i].pass));
        free(h->creds[i].user);
        free(h->creds[i].pass);
    }
    free(h->creds);
    if (h->key)
        explicit_bzero(h->key, strlen(h->key));
    free(h->key);
    free(h->cert);
    pthread_mutex_destroy(&h->lock);
    pthread_mutex_destroy(&h->glock);
    pthread_cond_destroy(&h->gcond);
    free(h);
}

unsigned http_port(const js_http_t *h)
{
    return h->port;
}

uint64_t http_scrapes(const js_http_t *h)
{
    return atomic_load(&((js_http_t *)h)->scrapes);
}

uint64_t http_slow_closed(const js_http_t *h)
{
    return atomic_load(&((js_http_t *)h)->slow_closed);
}

/* ---- the sink ------------------------------------------------------------------------------------------ */

static int http_sample(void *state, const js_sink_sample_t *ev)
{
    js_http_t *h = state;
    int64_t t0 = now_ns(CLOCK_MONOTONIC);
    for (int f = 0; f < PROM_FORMAT_MAX; f++) {
        js_buf_t b = {0};
        snap_t *s = malloc(sizeof(*s));
        int r = s ? buf_reserve(&b, h->last_len[f] + 4096) : -ENOMEM;
        if (r == 0)
            r = prom_render(&b, (prom_format_t)f, h->prom, ev->model, ev->sample, ev->seq);
        if (r < 0) {
            buf_free(&b);
            free(s);
            return r; /* the previous snapshot stays */
        }
        atomic_init(&s->refs, 1);
        s->p = b.p;
        s->len = b.len;
        h->last_len[f] = b.len;
        pthread_mutex_lock(&h->lock);
        snap_t *old = h->cur[f];
        h->cur[f] = s;
        pthread_mutex_unlock(&h->lock);
        snap_unref(old);
    }
    h->prom->render_s = (double)(now_ns(CLOCK_MONOTONIC) - t0) / 1e9;
    return 0;
}

const js_live_sink_t sink_http = {
    .name = "http",
    .sample = http_sample,
};
