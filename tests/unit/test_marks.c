/* SPDX-License-Identifier: MIT
 *
 * Unit tests of the marks: the wire format (round trip, every malformed shape rejected), the JSON check,
 * the monitor's socket with the real client (8 threads and 4 processes marking at once, every mark accounted
 * for as received or dropped, senders identified by the kernel), its private directory (mode 0700, removed
 * at close, and not by a forked child's copy), a process without a monitor, a monitor killed mid-run (the
 * caller is unaffected: no signal, no block, drops counted), another user can neither connect nor stand in
 * for the monitor (as root), an empty packet, the work one marks_receive does bounded under a flood, every
 * drop counted by the monitor, and marks_take's time order and cut-off.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "api/api.h"
#include "core/jsoncheck.h"
#include "core/markwire.h"
#include "core/marks.h"
#include "jobscope.h"

#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- wire format ----------------------------------------------------------------------------------------
 */

static void test_wire_roundtrip(void **state)
{
    (void)state;
    unsigned char buf[MARKWIRE_MAX];
    markwire_t m = {.kind = MARKWIRE_EVENT,
                    .rank = 3,
                    .t_mono_ns = 123456789,
                    .t_unix_ns = -5,
                    .tid = 77,
                    .dropped = 9,
                    .name = "checkpoint",
                    .name_len = 10,
                    .host = "node1",
                    .host_len = 5,
                    .data = "{\"step\": 10}",
                    .data_len = 12};
    int n = markwire_encode(&m, buf, sizeof(buf));
    assert_int_equal(n, MARKWIRE_HDR + 10 + 5 + 12);
    markwire_t d;
    assert_int_equal(markwire_decode(buf, (size_t)n, &d), 0);
    assert_int_equal(d.kind, MARKWIRE_EVENT);
    assert_int_equal(d.rank, 3);
    assert_int_equal(d.t_mono_ns, 123456789);
    assert_int_equal(d.t_unix_ns, -5);
    assert_int_equal(d.tid, 77);
    assert_int_equal(d.dropped, 9);
    assert_memory_equal(d.name, "checkpoint", 10);
    assert_memory_equal(d.host, "node1", 5);
    assert_memory_equal(d.data, "{\"step\": 10}", 12);
    assert_string_equal(markwire_kind_name(MARKWIRE_BEGIN), "begin");
    assert_null(markwire_kind_name(7));
}

static void test_wire_limits_and_malformed(void **state)
{
    (void)state;
    unsigned char buf[MARKWIRE_MAX + 8];
    char name[MARKWIRE_NAME_MAX + 2];
    memset(name, 'n', sizeof(name));
    markwire_t m = {.kind = MARKWIRE_BEGIN, .name = name, .name_len = MARKWIRE_NAME_MAX};
    assert_true(markwire_encode(&m, buf, sizeof(buf)) > 0); /* exactly the limit */
    m.name_len = MARKWIRE_NAME_MAX + 1;
    assert_int_equal(markwire_encode(&m, buf, sizeof(buf)), -EINVAL);
    m.name_len = 0;
    assert_int_equal(markwire_encode(&m, buf, sizeof(buf)), -EINVAL);
    m.name_len = 1;
    m.kind = MARKWIRE_KIND_MAX;
    assert_int_equal(markwire_encode(&m, buf, sizeof(buf)), -EINVAL);
    m.kind = MARKWIRE_END;
    m.data_len = MARKWIRE_DATA_MAX + 1;
    m.data = name;
    assert_int_equal(markwire_encode(&m, buf, sizeof(buf)), -EINVAL);
    m.data_len = 0;
    int n = markwire_encode(&m, buf, sizeof(buf));
    assert_int_equal(n, MARKWIRE_HDR + 1);
    markwire_t d;
    assert_int_equal(markwire_decode(buf, (size_t)n - 1, &d), -EPROTO);    /* short */
    assert_int_equal(markwire_decode(buf, (size_t)n + 1, &d), -EPROTO);    /* trailing byte */
    assert_int_equal(markwire_decode(buf, MARKWIRE_HDR - 1, &d), -EPROTO); /* no header */
    buf[0] = 'X';
    assert_int_equal(markwire_decode(buf, (size_t)n, &d), -EPROTO); /* magic */
    buf[0] = 'J';
    buf[2] = 2;
    assert_int_equal(markwire_decode(buf, (size_t)n, &d), -EPROTO); /* version */
    buf[2] = MARKWIRE_VERSION;
    buf[3] = 9;
    assert_int_equal(markwire_decode(buf, (size_t)n, &d), -EPROTO); /* kind */
    buf[3] = MARKWIRE_END;
    buf[MARKWIRE_HDR] = '\0';
    assert_int_equal(markwire_decode(buf, (size_t)n, &d), -EPROTO); /* a NUL in the name */
    buf[MARKWIRE_HDR] = 'n';
    assert_int_equal(markwire_decode(buf, (size_t)n, &d), 0);
    assert_int_equal(markwire_decode(buf, 0, &d), -EPROTO); /* empty */
}

static void test_json_check(void **state)
{
    (void)state;
    static const char *const good[] = {"{}",
                                       "[]",
                                       "0",
                                       "-1.5e+3",
                                       "\"x\"",
                                       "true",
                                       "null",
                                       " {\"a\": [1, 2, {\"b\": null}]} ",
                                       "{\"step\": 10}",
                                       "\"\\u00e9\\n\"",
                                       "\"\xc3\xa9\"",
                                       "[[[[]]]]"};
    static const char *const bad[] = {"",         " ",   "{",          "}",     "[1,]", "{\"a\"}", "{\"a\":}",
                                      "{a:1}",    "01",  "1.",         ".5",    "tru",  "\"\\x\"", "\"\x01\"",
                                      "\"\xc3\"", "1 2", "{\"a\":1,}", "[1 2]", "x",    "\"abc"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        assert_true(json_valid(good[i], strlen(good[i])));
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_false(json_valid(bad[i], strlen(bad[i])));
    char deep[200];
    memset(deep, '[', 100);
    memset(deep + 100, ']', 100);
    assert_false(json_valid(deep, 200)); /* deeper than JSONCHECK_DEPTH_MAX */
    assert_true(json_valid(deep + 100 - JSONCHECK_DEPTH_MAX, 2 * JSONCHECK_DEPTH_MAX));
}

/* ---- socket and client -----------------------------------------------------------------------------------
 */

typedef struct {
    size_t n, begins, ends, events;
    int32_t pids[64];
    size_t npids;
    int32_t tids[64];
    size_t ntids;
    bool bad_data;
} seen_t;

static void note(int32_t *set, size_t *n, int32_t v)
{
    for (size_t i = 0; i < *n; i++)
        if (set[i] == v)
            return;
    if (*n < 64)
        set[(*n)++] = v;
}

static int on_mark(void *arg, const js_mark_t *m)
{
    seen_t *s = arg;
    s->n++;
    s->begins += m->kind == JS_MARK_BEGIN;
    s->ends += m->kind == JS_MARK_END;
    s->events += m->kind == JS_MARK_EVENT;
    note(s->pids, &s->npids, m->pid);
    note(s->tids, &s->ntids, m->tid);
    if (m->kind == JS_MARK_EVENT && (!m->data || strcmp(m->data, "{\"i\": 1}") != 0))
        s->bad_data = true;
    return 0;
}

/* drain: receive until `want` marks arrived in total or `ms` passed. */
static void drain(js_marks_t *mk, seen_t *s, size_t want, int ms)
{
    for (int waited = 0; s->n < want && waited < ms; waited += 10) {
        struct pollfd pf = {.fd = marks_fd(mk), .events = POLLIN};
        if (poll(&pf, 1, 10) > 0)
            marks_receive(mk, 0, on_mark, s);
    }
    marks_receive(mk, 0, on_mark, s);
}

#define PAIRS 100
#define THREADS 8
#define PROCS 4

static void *marker(void *arg)
{
    (void)arg;
    for (int i = 0; i < PAIRS; i++) {
        js_phase_begin("solve");
        js_phase_end("solve");
        if (i % 25 == 24)
            sched_yield(); /* all 12 senders share one connection (forked): let the reader keep up */
    }
    js_event("tick", "{\"i\": 1}");
    return NULL;
}

typedef struct {
    js_marks_t *mk;
    seen_t *seen;
    volatile bool stop;
} drainer_t;

static void *drainer(void *arg)
{
    drainer_t *d = arg;
    while (!d->stop) {
        struct pollfd pf = {.fd = marks_fd(d->mk), .events = POLLIN};
        if (poll(&pf, 1, 5) > 0)
            marks_receive(d->mk, 0, on_mark, d->seen);
    }
    return NULL;
}

static void test_threads_and_processes(void **state)
{
    (void)state;
    js_marks_t *mk;
    assert_int_equal(marks_open(&mk), 0);
    /* a socket in a directory of its own that only this user can enter */
    const char *addr = marks_address(mk);
    assert_true(addr[0] == '/' && strstr(addr, "/jobscope-") != NULL);
    char dir[128];
    snprintf(dir, sizeof(dir), "%s", addr);
    *strrchr(dir, '/') = '\0';
    struct stat ds;
    assert_int_equal(lstat(dir, &ds), 0);
    assert_true(S_ISDIR(ds.st_mode));
    assert_int_equal(ds.st_mode & 07777, 0700);
    assert_int_equal(ds.st_uid, geteuid());
    assert_int_equal(lstat(addr, &ds), 0);
    assert_true(S_ISSOCK(ds.st_mode));
    client_point(marks_address(mk));
    assert_int_equal(js_marks_active(), 1);
    uint64_t dropped0 = js_marks_dropped();
    seen_t seen = {0};
    drainer_t d = {.mk = mk, .seen = &seen};
    pthread_t dt;
    assert_int_equal(pthread_create(&dt, NULL, drainer, &d), 0);
    /* 4 processes (each reports its drops through a pipe) and 8 threads, all at once */
    pid_t kids[PROCS];
    int pfd[2], dfd[2];
    assert_int_equal(pipe(pfd), 0);
    assert_int_equal(pipe(dfd), 0);
    for (int k = 0; k < PROCS; k++) {
        kids[k] = fork();
        assert_true(kids[k] >= 0);
        if (kids[k] == 0) {
            char go;
            close(pfd[1]);
            if (read(pfd[0], &go, 1) < 0)
                _exit(255);
            marker(NULL);
            uint64_t dr = js_marks_dropped();
            _exit(write(dfd[1], &dr, sizeof(dr)) == (ssize_t)sizeof(dr) ? 0 : 1);
        }
    }
    close(pfd[0]);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, marker, NULL), 0);
    close(pfd[1]); /* the children start too */
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    uint64_t child_dropped = 0;
    for (int k = 0; k < PROCS; k++) {
        int st;
        assert_int_equal(waitpid(kids[k], &st, 0), kids[k]);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        uint64_t dr;
        assert_int_equal(read(dfd[0], &dr, sizeof(dr)), (ssize_t)sizeof(dr));
        child_dropped += dr;
    }
    close(dfd[0]);
    close(dfd[1]);
    size_t sent = (size_t)(THREADS + PROCS) * (2 * PAIRS + 1);
    uint64_t dropped = js_marks_dropped() - dropped0 + child_dropped;
    for (int waited = 0; seen.n + dropped < sent && waited < 5000; waited += 10)
        usleep(10000);
    d.stop = true;
    pthread_join(dt, NULL);
    marks_receive(mk, 0, on_mark, &seen);
    /* every mark is accounted for: received, or dropped and counted by its sender */
    assert_int_equal(seen.n + dropped, sent);
    assert_true(seen.n > 0);
    assert_false(seen.bad_data);
    /* the kernel tells the senders apart: this process and its 4 children; 8 threads here + 1 per child */
    assert_int_equal(seen.npids, 1 + PROCS);
    assert_int_equal(seen.ntids, THREADS + PROCS);
    uint64_t rec, rej;
    marks_counts(mk, &rec, &rej);
    assert_int_equal(rec, seen.n);
    assert_int_equal(rej, 0);
    /* everything kept is handed over in time order */
    js_rows_t rows;
    rows_init(&rows, &table_marks);
    assert_int_equal(marks_take(mk, &rows, 0, true), (int)seen.n);
    for (size_t i = 1; i < rows.nrows; i++)
        assert_true(rows_row(&rows, i - 1)[MARK_T_MONO].i <= rows_row(&rows, i)[MARK_T_MONO].i);
    assert_string_equal(rows_str(&rows, &rows_row(&rows, 0)[MARK_KIND]), "begin");
    assert_false(rows_row(&rows, 0)[MARK_RANK].present); /* no MPI environment */
    rows_free(&rows);
    client_point(NULL);
    /* a forked child's copy removes nothing of its parent's; the parent's close removes both */
    pid_t kid = fork();
    assert_true(kid >= 0);
    if (kid == 0) {
        marks_close(mk);
        _exit(0);
    }
    assert_int_equal(waitpid(kid, NULL, 0), kid);
    assert_int_equal(lstat(dir, &ds), 0);
    marks_close(mk);
    assert_int_equal(lstat(dir, &ds), -1);
    assert_int_equal(errno, ENOENT);
}

static void test_no_monitor(void **state)
{
    (void)state;
    unsetenv("JOBSCOPE_SOCKET");
    client_point(NULL);
    assert_int_equal(js_phase_begin("x"), 0);
    assert_int_equal(js_marks_active(), 0);
    uint64_t d = js_marks_dropped();
    for (int i = 0; i < 1000; i++) {
        assert_int_equal(js_phase_begin("solve"), 0);
        assert_int_equal(js_phase_end("solve"), 0);
    }
    assert_int_equal(js_marks_dropped(), d); /* nothing to drop */
    /* bad arguments are refused with or without a monitor */
    assert_int_equal(js_phase_begin(NULL), -EINVAL);
    assert_int_equal(js_phase_begin(""), -EINVAL);
    char big[JS_MARK_NAME_MAX + 2];
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(js_phase_begin(big), -EINVAL);
    assert_int_equal(client_gone_errno(), 0);
    /* a monitor announced that cannot be reached: -EPIPE (counted), and the reason is kept. An address that
     * is not an absolute path (an abstract name, which anyone could bind once freed, included) is refused. */
    static const struct {
        const char *addr;
        int why;
    } gone[] = {{"relative/path", EINVAL},
                {"@jobscope-no-such-monitor", EINVAL},
                {"/nonexistent-jobscope-dir/marks", ENOENT}};
    for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++) {
        setenv("JOBSCOPE_SOCKET", gone[i].addr, 1);
        client_point(NULL);
        assert_int_equal(js_marks_active(), 0);
        assert_int_equal(js_phase_begin("x"), -EPIPE);
        assert_int_equal(client_gone_errno(), gone[i].why);
    }
    unsetenv("JOBSCOPE_SOCKET");
    client_point(NULL);
    assert_int_equal(client_gone_errno(), 0);
}

static void test_monitor_killed(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t mon = fork();
    assert_true(mon >= 0);
    if (mon == 0) { /* a monitor that reads nothing, then is killed */
        js_marks_t *mk;
        if (marks_open(&mk) < 0)
            _exit(1);
        char addr[128];
        snprintf(addr, sizeof(addr), "%s", marks_address(mk));
        if (write(p[1], addr, sizeof(addr)) != (ssize_t)sizeof(addr))
            _exit(1);
        for (;;)
            pause();
    }
    char addr[128];
    assert_int_equal(read(p[0], addr, sizeof(addr)), (ssize_t)sizeof(addr));
    close(p[0]);
    close(p[1]);
    client_point(addr);
    assert_int_equal(js_marks_active(), 1);
    uint64_t d0 = js_marks_dropped();
    /* the monitor never reads: the queue fills, marks are dropped, nothing blocks */
    int full = 0;
    for (int i = 0; i < 200000 && !full; i++)
        full = js_phase_begin("fill") == -EAGAIN;
    assert_true(full);
    assert_true(js_marks_dropped() > d0);
    kill(mon, SIGKILL);
    waitpid(mon, NULL, 0);
    /* what a killed monitor leaves: its socket and drops file in its private directory (removed here) */
    assert_int_equal(unlink(addr), 0);
    *strrchr(addr, '/') = '\0';
    char drops[160];
    snprintf(drops, sizeof(drops), "%s/" MARKS_DROPS_NAME, addr);
    assert_int_equal(unlink(drops), 0);
    assert_int_equal(rmdir(addr), 0);
    /* the monitor is gone: no SIGPIPE (the test would die), -EPIPE, then cheap no-ops that count */
    signal(SIGPIPE, SIG_DFL);
    int rc = js_phase_end("fill");
    assert_true(rc == -EPIPE || rc == -EAGAIN);
    uint64_t d1 = js_marks_dropped();
    for (int i = 0; i < 100; i++)
        assert_int_equal(js_event("after", NULL), -EPIPE);
    assert_int_equal(js_marks_dropped(), d1 + 100);
    assert_int_equal(js_marks_active(), 0);
    client_point(NULL);
}

/* as_nobody: run fn(arg) in a child as nobody; its exit status. */
static int as_nobody(int (*fn)(void *), void *arg)
{
    pid_t kid = fork();
    assert_true(kid >= 0);
    if (kid == 0) {
        if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
            _exit(99);
        _exit(fn(arg));
    }
    int st;
    assert_int_equal(waitpid(kid, &st, 0), kid);
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

/* intrude: as another user, connect to the monitor's socket (raw and through the client). 0 when both were
 * refused with EACCES. */
static int intrude(void *arg)
{
    const char *addr = arg;
    struct sockaddr_un sa;
    socklen_t sl;
    if (marks_address_parse(addr, &sa, &sl) < 0)
        return 1;
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sl) == 0 || errno != EACCES)
        return 2;
    close(fd);
    client_point(addr);
    if (js_phase_begin("intruder") != -EPIPE || client_gone_errno() != EACCES)
        return 3;
    return 0;
}

/* Another user can neither connect (so no flood of theirs reaches the monitor) nor mark. */
static void test_other_user_shut_out(void **state)
{
    (void)state;
    if (geteuid() != 0) {
        skip();
        return;
    }
    js_marks_t *mk;
    assert_int_equal(marks_open(&mk), 0);
    char addr[128];
    snprintf(addr, sizeof(addr), "%s", marks_address(mk));
    assert_int_equal(as_nobody(intrude, addr), 0);
    seen_t seen = {0};
    drain(mk, &seen, 1, 300);
    assert_int_equal(seen.n, 0);
    uint64_t rec, rej;
    marks_counts(mk, &rec, &rej);
    assert_int_equal(rec, 0);
    assert_int_equal(rej, 0); /* nothing even reached the monitor to be rejected */
    /* root (this process) may mark */
    client_point(addr);
    assert_int_equal(js_phase_begin("root"), 0);
    drain(mk, &seen, 1, 1000);
    assert_int_equal(seen.n, 1);
    client_point(NULL);
    marks_close(mk);
}

typedef struct {
    char path[108];
    int ready[2], result[2];
} squat_t;

/* squat: as another user, listen at the path a monitor used (made again in a shared directory) and report
 * how many bytes the connections it accepts carry. */
static int squat(void *arg)
{
    squat_t *q = arg;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", q->path);
    int lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 8) < 0)
        return 1;
    char one = 1;
    if (write(q->ready[1], &one, 1) != 1)
        return 2;
    long total = 0;
    struct pollfd pf = {.fd = lfd, .events = POLLIN};
    while (poll(&pf, 1, 1000) > 0) { /* connections until none for a second */
        int c = accept(lfd, NULL, NULL);
        if (c < 0)
            break;
        char buf[8192];
        ssize_t n;
        while ((n = recv(c, buf, sizeof(buf), 0)) > 0)
            total += n;
        close(c);
    }
    return write(q->result[1], &total, sizeof(total)) == (ssize_t)sizeof(total) ? 0 : 3;
}

/* A listener of another user at the path (a name anyone could make again in /tmp once the monitor removed
 * it): the client checks the listener's credentials and sends it nothing. */
static void test_stranger_listener_refused(void **state)
{
    (void)state;
    if (geteuid() != 0) {
        skip();
        return;
    }
    char dir[64];
    snprintf(dir, sizeof(dir), "/tmp/jobscope-test-squat-%d", (int)getpid());
    assert_int_equal(mkdir(dir, 0777), 0);
    assert_int_equal(chmod(dir, 0777), 0);
    squat_t q;
    snprintf(q.path, sizeof(q.path), "%s/marks", dir);
    assert_int_equal(pipe(q.ready), 0);
    assert_int_equal(pipe(q.result), 0);
    pid_t kid = fork();
    assert_true(kid >= 0);
    if (kid == 0)
        _exit(as_nobody(squat, &q));
    char one;
    assert_int_equal(read(q.ready[0], &one, 1), 1);
    client_point(q.path);
    assert_int_equal(js_event("secret", "{\"db_password\": \"x\"}"), -EPIPE);
    assert_int_equal(client_gone_errno(), EPERM);
    assert_int_equal(js_marks_active(), 0);
    client_point(NULL);
    int st;
    assert_int_equal(waitpid(kid, &st, 0), kid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    long total = -1;
    assert_int_equal(read(q.result[0], &total, sizeof(total)), (ssize_t)sizeof(total));
    assert_int_equal(total, 0); /* not a byte reached the other user */
    unlink(q.path);
    rmdir(dir);
    for (int i = 0; i < 2; i++) {
        close(q.ready[i]);
        close(q.result[i]);
    }
}

/* connect_raw: a plain connection to the monitor's socket. */
static int connect_raw(js_marks_t *mk)
{
    struct sockaddr_un sa;
    socklen_t sl;
    assert_int_equal(marks_address_parse(marks_address(mk), &sa, &sl), 0);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sl), 0);
    return fd;
}

/* An empty packet is rejected and counted; the connection goes on (it used to be taken for the sender
 * closing, and later marks on it were lost). */
static void test_empty_packet(void **state)
{
    (void)state;
    js_marks_t *mk;
    assert_int_equal(marks_open(&mk), 0);
    int fd = connect_raw(mk);
    unsigned char buf[MARKWIRE_MAX];
    markwire_t m = {.kind = MARKWIRE_EVENT, .rank = -1, .t_mono_ns = 1, .name = "after", .name_len = 5};
    int n = markwire_encode(&m, buf, sizeof(buf));
    assert_int_equal(send(fd, buf, 0, 0), 0);
    assert_int_equal(send(fd, buf, (size_t)n, 0), n);
    seen_t seen = {0};
    drain(mk, &seen, 1, 1000);
    assert_int_equal(seen.n, 1);
    uint64_t rec, rej;
    marks_counts(mk, &rec, &rej);
    assert_int_equal(rec, 1);
    assert_int_equal(rej, 1);
    close(fd);
    marks_close(mk);
}

/* One marks_receive does a bounded amount of work whatever waits (connections, packets), and what is left
 * is taken by the next calls. */
static void test_receive_bounded(void **state)
{
    (void)state;
    js_marks_t *mk;
    assert_int_equal(marks_open(&mk), 0);
    enum { CONNS = 200, EACH = 60 };
    static int fds[CONNS];
    unsigned char buf[MARKWIRE_MAX];
    markwire_t m = {.kind = MARKWIRE_EVENT, .rank = -1, .t_mono_ns = 1, .name = "flood", .name_len = 5};
    int n = markwire_encode(&m, buf, sizeof(buf));
    for (int i = 0; i < CONNS; i++) {
        fds[i] = connect_raw(mk);
        for (int k = 0; k < EACH; k++)
            assert_int_equal(send(fds[i], buf, (size_t)n, MSG_DONTWAIT), n);
    }
    seen_t seen = {0};
    int calls = 0, w;
    while ((w = marks_receive(mk, 0, on_mark, &seen)) > 0) {
        assert_true(w <= MARKS_ACCEPT_BUDGET + MARKS_READ_BUDGET + 64);
        calls++;
    }
    assert_int_equal(w, 0);
    assert_int_equal(seen.n, CONNS * EACH);
    assert_true(calls >= (CONNS * EACH) / MARKS_READ_BUDGET); /* 12,000 packets: two calls at least */
    for (int i = 0; i < CONNS; i++)
        close(fds[i]);
    marks_close(mk);
}

/* Every drop reaches the monitor's count (the shared drops counter), also those after a sender's last
 * delivered mark, of a sender that leaves by _exit: what the per-mark counts could not carry (the job's
 * dropped_by_senders used to be what its last delivered marks said). */
static void test_drops_counted_by_monitor(void **state)
{
    (void)state;
    js_marks_t *mk;
    assert_int_equal(marks_open(&mk), 0);
    char addr[128];
    snprintf(addr, sizeof(addr), "%s", marks_address(mk));
    int res[2];
    assert_int_equal(pipe(res), 0);
    pid_t kid = fork();
    assert_true(kid >= 0);
    if (kid == 0) { /* a sender: fill its queue (the monitor does not read), drop 50 more, leave by _exit */
        client_point(addr);
        int full = 0;
        for (int i = 0; i < 200000 && !full; i++)
            full = js_phase_begin("fill") == -EAGAIN;
        for (int i = 0; i < 50; i++)
            js_phase_end("fill");
        uint64_t d = js_marks_dropped();
        _exit(full && write(res[1], &d, sizeof(d)) == (ssize_t)sizeof(d) ? 0 : 1);
    }
    int st;
    assert_int_equal(waitpid(kid, &st, 0), kid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    uint64_t d = 0;
    assert_int_equal(read(res[0], &d, sizeof(d)), (ssize_t)sizeof(d));
    assert_true(d >= 51);
    seen_t seen = {0};
    while (marks_receive(mk, 0, on_mark, &seen) > 0)
        ;
    assert_true(seen.n > 0);
    assert_int_equal(marks_senders_dropped(mk), d);
    /* every delivered mark was sent before the queue filled: none carried a drop */
    js_rows_t rows;
    rows_init(&rows, &table_marks);
    assert_int_equal(marks_take(mk, &rows, 0, true), (int)seen.n);
    for (size_t i = 0; i < rows.nrows; i++)
        assert_int_equal(rows_row(&rows, i)[MARK_SENDER_DROPPED].i, 0);
    rows_free(&rows);
    close(res[0]);
    close(res[1]);
    marks_close(mk);
}

/* marks_take: marks made after the sample stay for the next one; late arrivals are put in time order. */
static void test_take_cutoff_and_order(void **state)
{
    (void)state;
    js_marks_t *mk;
    assert_int_equal(marks_open(&mk), 0);
    int fd = connect_raw(mk);
    static const int64_t times[] = {300, 100, 500, 200};
    unsigned char buf[MARKWIRE_MAX];
    for (size_t i = 0; i < 4; i++) {
        markwire_t m = {.kind = MARKWIRE_EVENT,
                        .rank = -1,
                        .t_mono_ns = times[i],
                        .name = "e",
                        .name_len = 1,
                        .data = i == 3 ? "not json" : NULL,
                        .data_len = i == 3 ? 8 : 0};
        int n = markwire_encode(&m, buf, sizeof(buf));
        assert_int_equal(send(fd, buf, (size_t)n, 0), n);
    }
    assert_int_equal(send(fd, "garbage", 7, 0), 7); /* malformed: rejected, counted */
    seen_t seen = {0};
    drain(mk, &seen, 4, 1000);
    assert_int_equal(seen.n, 4);
    js_rows_t rows;
    rows_init(&rows, &table_marks);
    assert_int_equal(marks_take(mk, &rows, 250, false), 2);
    assert_int_equal(rows_row(&rows, 0)[MARK_T_MONO].i, 100);
    assert_int_equal(rows_row(&rows, 1)[MARK_T_MONO].i, 200);
    assert_string_equal(rows_str(&rows, &rows_row(&rows, 1)[MARK_DATA]),
                        "\"not json\""); /* kept as a string */
    assert_int_equal(rows_row(&rows, 0)[MARK_PID].i, getpid());
    rows_clear(&rows);
    assert_int_equal(marks_take(mk, &rows, 250, false), 0);
    assert_int_equal(marks_take(mk, &rows, 0, true), 2); /* the closing sample takes the rest */
    assert_int_equal(rows_row(&rows, 0)[MARK_T_MONO].i, 300);
    assert_int_equal(rows_row(&rows, 1)[MARK_T_MONO].i, 500);
    uint64_t rec, rej;
    marks_counts(mk, &rec, &rej);
    assert_int_equal(rec, 4);
    assert_int_equal(rej, 1);
    rows_free(&rows);
    close(fd);
    marks_close(mk);
}

/* The thread ID travels with each mark (the rank too, read once per process at its first connection: the
 * integration tests set it, test_libjobscope.py). */
/* size limits on the socket: a packet longer than the largest valid one (MARKWIRE_MAX) is cut by the kernel
 * to the receive buffer and rejected (MSG_TRUNC), one with lengths that do not add up too; neither is kept,
 * both are counted, and the connection goes on serving valid marks. */
static void test_socket_size_limits(void **state)
{
    (void)state;
    js_marks_t *mk;
    assert_int_equal(marks_open(&mk), 0);
    int fd = connect_raw(mk);
    static unsigned char big[MARKWIRE_MAX + 4096];
    char name[MARKWIRE_NAME_MAX];
    memset(name, 'n', sizeof(name));
    static char data[MARKWIRE_DATA_MAX];
    memset(data, 'd', sizeof(data));
    markwire_t m = {.kind = MARKWIRE_EVENT,
                    .rank = -1,
                    .name = name,
                    .name_len = sizeof(name),
                    .data = data,
                    .data_len = sizeof(data)};
    int n = markwire_encode(&m, big, sizeof(big));
    assert_true(n > 0);
    memset(big + n, 'x', sizeof(big) - (size_t)n);
    assert_int_equal(send(fd, big, sizeof(big), 0), (ssize_t)sizeof(big)); /* too long: truncated, rejected */
    assert_int_equal(send(fd, big, (size_t)n + 1, 0), n + 1);              /* one byte over: rejected */
    assert_int_equal(send(fd, big, (size_t)n, 0), n);                      /* the largest valid one: kept */
    seen_t seen = {0};
    drain(mk, &seen, 1, 1000);
    uint64_t rec, rej;
    marks_counts(mk, &rec, &rej);
    assert_int_equal(rec, 1);
    assert_int_equal(rej, 2);
    js_rows_t rows;
    rows_init(&rows, &table_marks);
    assert_int_equal(marks_take(mk, &rows, 0, true), 1);
    assert_int_equal(strlen(rows_str(&rows, &rows_row(&rows, 0)[MARK_NAME])), MARKWIRE_NAME_MAX);
    rows_free(&rows);
    close(fd);
    marks_close(mk);
}

static void test_thread_id(void **state)
{
    (void)state;
    js_marks_t *mk;
    assert_int_equal(marks_open(&mk), 0);
    client_point(marks_address(mk));
    assert_int_equal(js_event("r", NULL), 0);
    seen_t seen = {0};
    drain(mk, &seen, 1, 1000);
    js_rows_t rows;
    rows_init(&rows, &table_marks);
    assert_int_equal(marks_take(mk, &rows, 0, true), 1);
    assert_int_equal(rows_row(&rows, 0)[MARK_TID].i, (int64_t)syscall(SYS_gettid));
    assert_int_equal(rows_row(&rows, 0)[MARK_UID].i, (int64_t)geteuid());
    rows_free(&rows);
    client_point(NULL);
    marks_close(mk);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wire_roundtrip),
        cmocka_unit_test(test_wire_limits_and_malformed),
        cmocka_unit_test(test_json_check),
        cmocka_unit_test(test_threads_and_processes),
        cmocka_unit_test(test_no_monitor),
        cmocka_unit_test(test_monitor_killed),
        cmocka_unit_test(test_other_user_shut_out),
        cmocka_unit_test(test_stranger_listener_refused),
        cmocka_unit_test(test_empty_packet),
        cmocka_unit_test(test_receive_bounded),
        cmocka_unit_test(test_drops_counted_by_monitor),
        cmocka_unit_test(test_take_cutoff_and_order),
        cmocka_unit_test(test_thread_id),
        cmocka_unit_test(test_socket_size_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
