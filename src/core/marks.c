/* SPDX-License-Identifier: MIT
 *
 * The monitor's mark socket (see marks.h).
 */
#include "core/marks.h"

#include "core/json.h"
#include "core/jsoncheck.h"
#include "core/markwire.h"
#include "sys/fsfile.h"
#include "sys/fsroot.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const js_column_t marks_cols[MARK__MAX] = {
    [MARK_T_MONO] = {"t_mono_ns", "ns", JS_INT, JS_GAUGE, 0, "CLOCK_MONOTONIC when the sender made the mark"},
    [MARK_T_UNIX] = {"t_unix_ns", "ns", JS_INT, JS_GAUGE, 0, "CLOCK_REALTIME when the sender made the mark"},
    [MARK_KIND] = {"kind", "text", JS_TEXT, JS_LABEL, 0, "begin, end (of a phase) or event"},
    [MARK_NAME] = {"name", "text", JS_TEXT, JS_LABEL, 0, "phase or event name, as sent"},
    [MARK_PID] = {"pid", "count", JS_INT, JS_LABEL, 0, "sender's process ID (from the kernel's credentials)"},
    [MARK_TID] = {"tid", "count", JS_INT, JS_LABEL, 0, "sender's thread ID (as the sender says)"},
    [MARK_UID] = {"uid", "count", JS_INT, JS_GAUGE, 0, "sender's user ID (from the kernel's credentials)"},
    [MARK_RANK] = {"rank", "count", JS_INT, JS_LABEL, 0,
                   "MPI rank (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK or SLURM_PROCID); missing if none"},
    [MARK_HOST] = {"host", "text", JS_TEXT, JS_LABEL, 0, "sender's host name"},
    [MARK_DATA] =
        {"data", "json", JS_TEXT, JS_GAUGE, 0,
         "JSON given with the mark (text that was not JSON is stored as a JSON string); missing if none"},
    [MARK_SENDER_DROPPED] =
        {"sender_dropped", "count", JS_INT, JS_COUNTER, 32,
         "marks this sender had dropped before this one (its queue to the monitor was full)"},
};
const js_table_t table_marks = {"marks",
                                "one row per phase begin, phase end or event sent by the job, with the "
                                "sample it falls before",
                                MARK__MAX, marks_cols};

typedef struct {
    int fd;
    pid_t pid; /* SO_PEERCRED at connect */
    uid_t uid;
} conn_t;

struct js_marks {
    int lfd, efd;
    char addr[sizeof(((struct sockaddr_un *)0)->sun_path)]; /* the socket's path */
    char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];  /* its private directory */
    bool made_dir, bound;
    pid_t owner; /* the process that made them: only it removes them */
    uid_t allowed;
    conn_t **conns;
    size_t nconns, conns_cap;
    js_rows_t pending, spare;
    uint64_t received, rejected;
    js_marks_shared_t *shared; /* the drops file, mapped (NULL: none) */
    bool made_shared;
    js_buf_t data; /* a mark's data as stored */
    unsigned char pkt[MARKWIRE_MAX + 1];
};

static uint64_t random64(const void *salt)
{
    uint64_t rnd = 0;
    if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd)) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        rnd ^= (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15u ^ (uint64_t)(uintptr_t)salt;
    }
    return rnd;
}

/* private_parent: whether `dir` is a place for the run's directory that only this user can use: an absolute
 * path to a directory owned by the effective user, closed to group and others ($XDG_RUNTIME_DIR). */
static bool private_parent(const char *dir)
{
    struct stat st;
    return dir && dir[0] == '/' && stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
           (st.st_mode & 077) == 0;
}

/* make_dir: a new directory "PARENT/jobscope-PID-RANDOM", mode 0700 whatever the umask, owned by this user,
 * in mk->dir. Returns 0 or -errno. */
static int make_dir(js_marks_t *mk, const char *parent)
{
    for (int attempt = 0; attempt < 16; attempt++) {
        int n = snprintf(mk->dir, sizeof(mk->dir), "%s/jobscope-%d-%016llx", parent, (int)getpid(),
                         (unsigned long long)random64(mk));
        if (n < 0 || (size_t)n + sizeof("/" MARKS_SOCKET_NAME) > sizeof(mk->dir))
            return -ENAMETOOLONG;
        if (mkdir(mk->dir, 0700) < 0) {
            if (errno == EEXIST)
                continue; /* a name taken (by anyone): another one */
            return -errno;
        }
        mk->made_dir = true;
        /* the umask may have taken bits away (0700 & ~0777 would shut out this user too): set them; the
         * directory is checked through its descriptor, never by a path that could have been swapped */
        int fd = fs_open_dir(AT_FDCWD, mk->dir, false);
        struct stat st;
        int r = fd < 0                                                   ? fd
                : fchmod(fd, 0700) < 0 || fstat(fd, &st) < 0             ? -errno
                : st.st_uid != geteuid() || (st.st_mode & 07777) != 0700 ? -EPERM
                                                                         : 0;
        if (fd >= 0)
            close(fd);
        return r;
    }
    return -EEXIST;
}

/* make_shared: the drops file beside the socket, made new (O_EXCL), mode 0600, mapped. 0 or -errno. */
static int make_shared(js_marks_t *mk)
{
    char path[sizeof(mk->dir) + sizeof(MARKS_DROPS_NAME) + 1];
    snprintf(path, sizeof(path), "%s/" MARKS_DROPS_NAME, mk->dir);
    int fd = fs_create(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    if (fd < 0)
        return fd;
    mk->made_shared = true;
    void *p = MAP_FAILED;
    if (ftruncate(fd, MARKS_SHARED_SIZE) == 0)
        p = mmap(NULL, MARKS_SHARED_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int r = p == MAP_FAILED ? -errno : 0;
    close(fd);
    if (r == 0)
        mk->shared = p; /* zero-filled by ftruncate */
    return r;
}

int marks_open(js_marks_t **ret)
{
    js_marks_t *mk = calloc(1, sizeof(*mk));
    if (!mk)
        return -ENOMEM;
    mk->lfd = mk->efd = -1;
    mk->owner = getpid();
    mk->allowed = geteuid();
    rows_init(&mk->pending, &table_marks);
    rows_init(&mk->spare, &table_marks);
    int r;
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    r = private_parent(xdg) ? make_dir(mk, xdg) : -ENOENT;
    if (r < 0) { /* no private runtime directory of this user: a directory of its own in /tmp */
        if (mk->made_dir)
            rmdir(mk->dir);
        mk->made_dir = false;
        if ((r = make_dir(mk, "/tmp")) < 0)
            goto fail_r;
    }
    if (snprintf(mk->addr, sizeof(mk->addr), "%s/" MARKS_SOCKET_NAME, mk->dir) >= (int)sizeof(mk->addr)) {
        r = -ENAMETOOLONG; /* not reached: make_dir left room */
        goto fail_r;
    }
    if ((r = make_shared(mk)) < 0)
        goto fail_r;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    memcpy(sa.sun_path, mk->addr, strlen(mk->addr) + 1);
    int one = 1;
    mk->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (mk->lfd < 0 || setsockopt(mk->lfd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0)
        goto fail;
    if (bind(mk->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        goto fail;
    mk->bound = true;
    if (listen(mk->lfd, 512) < 0)
        goto fail;
    mk->efd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    if (mk->efd < 0 || epoll_ctl(mk->efd, EPOLL_CTL_ADD, mk->lfd, &ev) < 0)
        goto fail;
    *ret = mk;
    return 0;
fail:
    r = -errno;
fail_r:
    marks_close(mk);
    return r;
}

const char *marks_address(const js_marks_t *mk)
{
    return mk->addr;
}

size_t marks_fd_count(const js_marks_t *mk)
{
    return mk ? (mk->lfd >= 0) + (mk->efd >= 0) + mk->nconns : 0;
}

int marks_fd(const js_marks_t *mk)
{
    return mk->efd;
}

static bool allowed(const js_marks_t *mk, uid_t uid)
{
    return uid == mk->allowed || uid == 0;
}

static void conn_drop(js_marks_t *mk, conn_t *c)
{
    epoll_ctl(mk->efd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    for (size_t i = 0; i < mk->nconns; i++)
        if (mk->conns[i] == c) {
            mk->conns[i] = mk->conns[--mk->nconns];
            break;
        }
    free(c);
}

/* accept_some: accept at most `budget` waiting connections. Returns how many were taken from the backlog. */
static int accept_some(js_marks_t *mk, int budget)
{
    int done = 0;
    while (done < budget) {
        int fd = accept4(mk->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return done; /* EAGAIN, or out of descriptors: the connection waits in the backlog */
        done++;
        struct ucred uc;
        socklen_t ul = sizeof(uc);
        int one = 1;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &ul) < 0 || !allowed(mk, uc.uid) ||
            mk->nconns >= MARKS_CONN_MAX || setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0) {
            mk->rejected++;
            close(fd);
            continue;
        }
        if (mk->nconns == mk->conns_cap) {
            size_t cap = mk->conns_cap ? mk->conns_cap * 2 : 16;
            conn_t **g = realloc(mk->conns, cap * sizeof(*g));
            if (!g) {
                close(fd);
                return done;
            }
            mk->conns = g;
            mk->conns_cap = cap;
        }
        conn_t *c = malloc(sizeof(*c));
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        if (!c || (c->fd = fd, epoll_ctl(mk->efd, EPOLL_CTL_ADD, fd, &ev) < 0)) {
            free(c);
            close(fd);
            continue;
        }
        c->pid = uc.pid;
        c->uid = uc.uid;
        mk->conns[mk->nconns++] = c;
    }
    return done;
}

/* keep: one decoded mark from (pid, uid): to the callback, and into the pending rows. */
static int keep(js_marks_t *mk, const markwire_t *w, pid_t pid, uid_t uid, int64_t seq, marks_fn fn,
                void *arg)
{
    if (mk->pending.nrows >= MARKS_PENDING_MAX) {
        mk->rejected++;
        return 0;
    }
    char name[MARKWIRE_NAME_MAX + 1], host[MARKWIRE_HOST_MAX + 1];
    memcpy(name, w->name, w->name_len);
    name[w->name_len] = '\0';
    memcpy(host, w->host, w->host_len);
    host[w->host_len] = '\0';
    const char *data = NULL;
    if (w->data_len) {
        mk->data.len = 0;
        int e = json_valid(w->data, w->data_len) ? buf_append(&mk->data, w->data, w->data_len)
                                                 : json_str(&mk->data, w->data, w->data_len);
        if (e < 0)
            return -ENOMEM;
        data = mk->data.p;
    }
    js_mark_t m = {
        .kind = (js_mark_kind_t)w->kind,
        .t_mono_ns = w->t_mono_ns,
        .t_unix_ns = w->t_unix_ns,
        .seq = seq,
        .pid = pid,
        .tid = (int32_t)w->tid,
        .uid = uid,
        .rank = w->rank,
        .sender_dropped = w->dropped,
        .name = name,
        .host = w->host_len ? host : NULL,
        .data = data,
    };
    js_rows_t *r = &mk->pending;
    js_value_t *v = rows_add(r);
    if (!v)
        return -ENOMEM;
    const char *kind = markwire_kind_name(w->kind);
    val_int(&v[MARK_T_MONO], m.t_mono_ns);
    val_int(&v[MARK_T_UNIX], m.t_unix_ns);
    val_int(&v[MARK_PID], m.pid);
    val_int(&v[MARK_TID], m.tid);
    val_int(&v[MARK_UID], m.uid);
    if (m.rank >= 0)
        val_int(&v[MARK_RANK], m.rank);
    val_int(&v[MARK_SENDER_DROPPED], m.sender_dropped);
    if (rows_set_str(r, &v[MARK_KIND], kind, strlen(kind)) < 0 ||
        rows_set_str(r, &v[MARK_NAME], name, w->name_len) < 0 ||
        (m.host && rows_set_str(r, &v[MARK_HOST], host, w->host_len) < 0) ||
        (data && rows_set_str(r, &v[MARK_DATA], data, mk->data.len) < 0)) {
        r->nrows--;
        return -ENOMEM;
    }
    mk->received++;
    if (fn)
        fn(arg, &m);
    return 1;
}

/* read_conn: the waiting packets of one connection, at most `budget`. *ret_work gets the packets read.
 * Returns marks kept, or -ENOMEM. */
static int read_conn(js_marks_t *mk, conn_t *c, int64_t seq, marks_fn fn, void *arg, int budget,
                     int *ret_work)
{
    int got = 0;
    *ret_work = 0;
    while (*ret_work < budget) {
        union {
            struct cmsghdr h;
            char buf[CMSG_SPACE(sizeof(struct ucred))];
        } ctl;
        struct iovec iov = {.iov_base = mk->pkt, .iov_len = sizeof(mk->pkt)};
        struct msghdr msg = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf)};
        ssize_t n = recvmsg(c->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return got;
        /* A packet always comes with its sender's credentials (SO_PASSCRED); the end of the connection comes
         * with none. So 0 bytes with credentials is an empty packet (rejected below, the connection goes on),
         * without them the sender closed. */
        bool creds = false;
        pid_t pid = c->pid;
        uid_t uid = c->uid;
        for (struct cmsghdr *h = n >= 0 ? CMSG_FIRSTHDR(&msg) : NULL; h; h = CMSG_NXTHDR(&msg, h)) {
            if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_CREDENTIALS &&
                h->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
                struct ucred uc;
                memcpy(&uc, CMSG_DATA(h), sizeof(uc));
                pid = uc.pid;
                uid = uc.uid;
                creds = true;
            } else if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS) {
                /* descriptors nobody asked for: close them */
                size_t nfd = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < nfd; i++) {
                    int fd;
                    memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof(fd));
                    close(fd);
                }
            }
        }
        if (n < 0 || (n == 0 && !creds)) { /* the sender closed, or the connection failed */
            conn_drop(mk, c);
            return got;
        }
        (*ret_work)++;
        markwire_t w;
        if ((msg.msg_flags & MSG_TRUNC) || !allowed(mk, uid) || markwire_decode(mk->pkt, (size_t)n, &w) < 0) {
            mk->rejected++;
            continue;
        }
        int k = keep(mk, &w, pid, uid, seq, fn, arg);
        if (k < 0)
            return k;
        got += k;
    }
    return got;
}

int marks_receive(js_marks_t *mk, int64_t seq, marks_fn fn, void *arg)
{
    int work = 0, accepts = 0;
    /* rounds: every ready connection gets up to MARKS_CONN_BUDGET packets per round, until the call's
     * budget is spent or nothing is waiting (epoll is level-triggered: what is left stays ready) */
    for (int round = 0; round < 64 && work < MARKS_READ_BUDGET; round++) {
        struct epoll_event evs[64];
        int n = epoll_wait(mk->efd, evs, 64, 0);
        if (n <= 0)
            break;
        int progress = 0;
        for (int i = 0; i < n && work < MARKS_READ_BUDGET; i++) {
            conn_t *c = evs[i].data.ptr;
            if (!c) {
                int a = accept_some(mk, MARKS_ACCEPT_BUDGET - accepts);
                accepts += a;
                progress += a;
                continue;
            }
            int left = MARKS_READ_BUDGET - work, did;
            int k = read_conn(mk, c, seq, fn, arg, left < MARKS_CONN_BUDGET ? left : MARKS_CONN_BUDGET, &did);
            if (k < 0)
                return k;
            progress += did + (did == 0); /* a connection that ended is work done too */
        }
        work += progress;
        if (!progress)
            break;
    }
    return work;
}

typedef struct {
    int64_t t;
    size_t i;
} order_t;

static int by_time(const void *a, const void *b)
{
    const order_t *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* copy_row: row i of `from` appended to `to` (same table). 0 or -ENOMEM. */
static int copy_row(const js_rows_t *from, size_t i, js_rows_t *to)
{
    const js_value_t *src = rows_row(from, i);
    js_value_t *dst = rows_add(to);
    if (!dst)
        return -ENOMEM;
    for (size_t c = 0; c < from->table->ncols; c++) {
        if (!src[c].present)
            continue;
        if (from->table->cols[c].type == JS_TEXT) {
            const char *s = rows_str(from, &src[c]);
            if (rows_set_str(to, &dst[c], s, strlen(s)) < 0) {
                to->nrows--;
                return -ENOMEM;
            }
        } else {
            dst[c] = src[c];
        }
    }
    return 0;
}

int marks_take(js_marks_t *mk, js_rows_t *rows, int64_t until_mono_ns, bool all)
{
    size_t n = mk->pending.nrows;
    if (!n)
        return 0;
    order_t *o = malloc(n * sizeof(*o));
    if (!o)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        o[i].t = rows_row(&mk->pending, i)[MARK_T_MONO].i;
        o[i].i = i;
    }
    qsort(o, n, sizeof(*o), by_time);
    size_t before = rows->nrows, moved = 0;
    rows_clear(&mk->spare);
    int r = 0;
    for (size_t k = 0; k < n && r == 0; k++) {
        if (all || o[k].t <= until_mono_ns) {
            r = copy_row(&mk->pending, o[k].i, rows);
            moved++;
        } else {
            r = copy_row(&mk->pending, o[k].i, &mk->spare);
        }
    }
    free(o);
    if (r < 0) {
        rows->nrows = before;
        return r;
    }
    js_rows_t t = mk->pending; /* the kept ones become the pending buffer */
    mk->pending = mk->spare;
    mk->spare = t;
    rows_clear(&mk->spare);
    return (int)moved;
}

void marks_counts(const js_marks_t *mk, uint64_t *ret_received, uint64_t *ret_rejected)
{
    *ret_received = mk->received;
    *ret_rejected = mk->rejected;
}

uint64_t marks_senders_dropped(const js_marks_t *mk)
{
    return mk->shared ? atomic_load_explicit(&mk->shared->dropped, memory_order_relaxed) : 0;
}

void marks_unlink(js_marks_t *mk)
{
    if (!mk || mk->owner != getpid()) /* a forked child's copy: the socket and directory are its parent's */
        return;
    if (mk->bound)
        unlink(mk->addr);
    if (mk->made_shared) {
        char path[sizeof(mk->dir) + sizeof(MARKS_DROPS_NAME) + 1];
        snprintf(path, sizeof(path), "%s/" MARKS_DROPS_NAME, mk->dir);
        unlink(path);
    }
    if (mk->made_dir)
        rmdir(mk->dir);
    mk->bound = mk->made_shared = mk->made_dir = false;
}

void marks_close(js_marks_t *mk)
{
    if (!mk)
        return;
    while (mk->nconns)
        conn_drop(mk, mk->conns[mk->nconns - 1]);
    free(mk->conns);
    if (mk->efd >= 0)
        close(mk->efd);
    if (mk->lfd >= 0)
        close(mk->lfd);
    marks_unlink(mk);
    if (mk->shared)
        munmap(mk->shared, MARKS_SHARED_SIZE);
    rows_free(&mk->pending);
    rows_free(&mk->spare);
    buf_free(&mk->data);
    free(mk);
}

void marks_drop_inherited(js_marks_t *mk)
{
    if (!mk)
        return;
    /* the connections are left: the monitor thread may have been changing their list when the process
     * forked, and a copy of an accepted connection only delays its end until this process exits */
    if (mk->efd >= 0)
        close(mk->efd);
    if (mk->lfd >= 0)
        close(mk->lfd);
}
