/* SPDX-License-Identifier: MIT
 *
 * The monitor measures itself: its own CPU time and memory, and what writing the previous sample to the
 * recording cost. Together with the per-source collect durations in source_stats (written by the sampler)
 * these give the overhead figures every summary reports. An embedded monitor (a thread of the process it
 * watches) measures its own thread: its CPU is RUSAGE_THREAD (collect runs on the monitor thread), its I/O
 * its thread's /proc io, its threads (one) and the descriptors the embedding holds in the host's table are
 * recorded so that the model takes them all off the host's figures; its memory cannot be told apart from the
 * host's (missing).
 */
#include "sources/self.h"

#include "core/source.h"
#include "sources/proc_tree.h"
#include "sys/parse.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

static const js_column_t self_cols[SELF__MAX] = {
    [SELF_UTIME] = {"utime_us", "us", JS_INT, JS_COUNTER, 64, "monitor's own user CPU time"},
    [SELF_STIME] = {"stime_us", "us", JS_INT, JS_COUNTER, 64, "monitor's own system CPU time"},
    [SELF_MAXRSS] = {"maxrss_bytes", "bytes", JS_INT, JS_GAUGE, 0,
                     "monitor's peak RSS (VmHWM; read with the status cadence and at the closing sample)"},
    [SELF_RSS] = {"rss_bytes", "bytes", JS_INT, JS_GAUGE, 0, "monitor's RSS now"},
    [SELF_PREV_WRITE] = {"prev_write_ns", "ns", JS_INT, JS_GAUGE, 0, "time the previous sample's write took"},
    [SELF_WRITE_ERRORS] = {"write_errors", "count", JS_INT, JS_COUNTER, 64, "recording writes that failed"},
    [SELF_MARKS] = {"marks", "count", JS_INT, JS_COUNTER, 64, "marks received from the job so far"},
    [SELF_MARKS_REJECTED] =
        {"marks_rejected", "count", JS_INT, JS_COUNTER, 64,
         "mark packets or connections rejected so far (malformed, another user's, over the "
         "limits)"},
    [SELF_MARKS_SENDERS_DROPPED] = {"marks_senders_dropped", "count", JS_INT, JS_COUNTER, 64,
                                    "marks the job's processes dropped (queue full), as they reported"},
    [SELF_IO_RCHAR] = {"rchar_bytes", "bytes", JS_INT, JS_COUNTER, 64,
                       "monitor thread's bytes passed to reads"},
    [SELF_IO_WCHAR] = {"wchar_bytes", "bytes", JS_INT, JS_COUNTER, 64,
                       "monitor thread's bytes passed to writes"},
    [SELF_IO_SYSCR] = {"syscr", "count", JS_INT, JS_COUNTER, 64, "monitor thread's read-like system calls"},
    [SELF_IO_SYSCW] = {"syscw", "count", JS_INT, JS_COUNTER, 64, "monitor thread's write-like system calls"},
    [SELF_IO_READ_BYTES] = {"read_bytes", "bytes", JS_INT, JS_COUNTER, 64,
                            "monitor thread's reads from storage"},
    [SELF_IO_WRITE_BYTES] = {"write_bytes", "bytes", JS_INT, JS_COUNTER, 64,
                             "monitor thread's writes to storage (the recording)"},
    [SELF_THREADS] = {"threads", "count", JS_INT, JS_GAUGE, 0,
                      "embedded: the monitor's threads inside the watched process (taken off its count)"},
    [SELF_FDS] =
        {"fds", "count", JS_INT, JS_GAUGE, 0,
         "embedded: the embedding's descriptors in the watched process's table (taken off its count)"},
};
const js_table_t table_self = {"self", "one row per sample: the monitor's own cost", SELF__MAX, self_cols};

typedef struct {
    char path[32];        /* PID/statm */
    char status_path[32]; /* PID/status */
    char io_path[48];     /* PID/task/TID/io of the thread that collects (the monitor's) */
    char text[128];
    js_buf_t buf;
    int fd_statm;  /* kept open: one pread per sample */
    int fd_status; /* PID/status, kept open from its first read (kept_read): -1 until then */
    int fd_io;     /* io_path, kept open from its first read: -1 until then */
    long page;
} self_state_t;

static int self_init(const js_ctx_t *ctx, void **ret_state, char *why, size_t whylen)
{
    self_state_t *st = calloc(1, sizeof(*st));
    if (!st)
        return -ENOMEM;
    snprintf(st->path, sizeof(st->path), "%d/statm", (int)ctx->monitor_pid);
    snprintf(st->status_path, sizeof(st->status_path), "%d/status", (int)ctx->monitor_pid);
    st->page = sysconf(_SC_PAGESIZE);
    st->fd_statm = ctx->embedded ? -1 : fs_open(ctx->root.proc, st->path);
    if (st->fd_statm < 0)
        st->fd_statm = -1;
    st->fd_status = -1;
    st->fd_io = -1;
    *ret_state = st;
    return 0;
}

/* kept_read: read the procfs file `path` (under `dirfd`) through *fd, opened at the first call and kept: one
 * pread per sample instead of an open, a read and a close (procfs renders the file again at offset 0). A
 * file that could not be opened is tried again at the next call. Returns 0 or a negative errno. */
static int kept_read(int dirfd, const char *path, int *fd, js_buf_t *b)
{
    if (*fd < 0) {
        int f = fs_open(dirfd, path);
        if (f < 0)
            return f;
        *fd = f;
    }
    return fd_read_record(*fd, b);
}

static int self_collect(void *state, js_ctx_t *ctx, js_rows_t *const *rows)
{
    self_state_t *st = state;
    js_value_t *v = rows_add(rows[0]);
    if (!v)
        return -ENOMEM;
    struct rusage ru;
    bool at_root = ctx->embedded && ctx->mon_at_root; /* as proc_tree read the host (source.h) */
    if (at_root)
        ru = ctx->mon_ru;
    if (at_root || getrusage(ctx->embedded ? RUSAGE_THREAD : RUSAGE_SELF, &ru) == 0) {
        val_int(&v[SELF_UTIME], (int64_t)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec);
        val_int(&v[SELF_STIME], (int64_t)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec);
    }
    /* not ru_maxrss: Linux carries it over from the image that exec'd jobscope (a Python parent, say) */
    uint64_t hwm;
    if (!ctx->embedded && (ctx->final || ctx->seq % (ctx->status_every ? ctx->status_every : 1) == 0) &&
        kept_read(ctx->root.proc, st->status_path, &st->fd_status, &st->buf) == 0 &&
        kv_u64(st->buf.p, "VmHWM:", &hwm) == 0)
        val_int(&v[SELF_MAXRSS], (int64_t)hwm * 1024);
    ssize_t n = st->fd_statm >= 0 ? pread(st->fd_statm, st->text, sizeof(st->text) - 1, 0) : -1;
    if (n > 0) {
        st->text[n] = '\0';
        const char *p = st->text;
        uint64_t size, res;
        if (parse_u64(&p, &size) == 0 && parse_u64(&p, &res) == 0)
            val_int(&v[SELF_RSS], (int64_t)res * st->page);
    }
    /* the monitor thread's own I/O: the embedded monitor's is in the host's /proc io, and taken off again */
    if (!st->io_path[0])
        snprintf(st->io_path, sizeof(st->io_path), "%d/task/%d/io", (int)getpid(), (int)gettid());
    js_pid_io_t io;
    if (at_root && ctx->mon_io_present) {
        for (int i = 0; i < 6; i++)
            if (ctx->mon_io_present & (1u << i))
                val_int(&v[SELF_IO_RCHAR + i], ctx->mon_io[i]);
    } else if (kept_read(ctx->root.proc, st->io_path, &st->fd_io, &st->buf) == 0 &&
               proc_parse_io(st->buf.p, &io) == 0) {
        for (int i = 0; i < 6; i++)
            if (io.present & (1u << i))
                val_int(&v[SELF_IO_RCHAR + i], (int64_t)io.v[i]);
    }
    ctx->mon_at_root = false;
    ctx->mon_io_present = 0;
    if (ctx->embedded) {
        val_int(&v[SELF_THREADS], 1);
        int nfd = ctx->host_fds ? ctx->host_fds_now : -1;
        if (nfd >= 0)
            val_int(&v[SELF_FDS], nfd);
    }
    if (ctx->seq > 0)
        val_int(&v[SELF_PREV_WRITE], ctx->prev_write_ns);
    val_int(&v[SELF_WRITE_ERRORS], (int64_t)ctx->write_errors);
    val_int(&v[SELF_MARKS], (int64_t)ctx->marks_received);
    val_int(&v[SELF_MARKS_REJECTED], (int64_t)ctx->marks_rejected);
    val_int(&v[SELF_MARKS_SENDERS_DROPPED], (int64_t)ctx->marks_senders_dropped);
    return 0;
}

void self_marks_update(js_sample_t *s, const js_ctx_t *ctx)
{
    js_rows_t *r = sample_rows(s, &table_self);
    if (!r->nrows)
        return;
    js_value_t *v = rows_row(r, 0);
    val_int(&v[SELF_MARKS], (int64_t)ctx->marks_received);
    val_int(&v[SELF_MARKS_REJECTED], (int64_t)ctx->marks_rejected);
    val_int(&v[SELF_MARKS_SENDERS_DROPPED], (int64_t)ctx->marks_senders_dropped);
}

static void self_fini(void *state)
{
    self_state_t *st = state;
    if (st) {
        buf_free(&st->buf);
        int fds[] = {st->fd_statm, st->fd_status, st->fd_io};
        for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
            if (fds[i] >= 0)
                close(fds[i]);
    }
    free(st);
}

static const js_table_t *const self_tables[] = {&table_self, NULL};

const js_source_t source_self = {
    .name = "self",
    .help = "the monitor's own CPU, memory and recording cost",
    .tables = self_tables,
    .init = self_init,
    .collect = self_collect,
    .fini = self_fini,
};
