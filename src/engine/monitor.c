/* SPDX-License-Identifier: MIT
 *
 * The sampling loop: timerfd deadlines, signalfd for SIGCHLD and forwarded signals, wait4 reaping, closing
 * sample, recording and model feed (see monitor.h).
 */
#include "engine/monitor.h"

#include "core/marks.h"
#include "model/model.h"
#include "sources/self.h"
#include "sys/cgroupfs.h"
#include "sys/fsroot.h"
#include "sources/registry.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const int handled_signals[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
#define NHANDLED (sizeof(handled_signals) / sizeof(handled_signals[0]))

static sigset_t saved_mask;

int monitor_block_signals(void)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < NHANDLED; i++)
        sigaddset(&set, handled_signals[i]);
    if (sigprocmask(SIG_BLOCK, &set, &saved_mask) < 0)
        return -errno;
    return 0;
}

int monitor_prepare(js_monitor_t *mon)
{
    int r = sample_init(&mon->sample);
    if (r == 0)
        r = sampler_init(&mon->sampler, &mon->ctx, &mon->sample);
    if (r < 0) {
        sample_free(&mon->sample);
        return r;
    }
    mon->prepared = true;
    return 0;
}

int monitor_add_sink(js_monitor_t *mon, const js_live_sink_t *sink, void *state)
{
    if (mon->nsinks == JS_SINKS_MAX)
        return -ENOSPC;
    mon->sinks[mon->nsinks++] = (js_sink_slot_t){.sink = sink, .state = state};
    return 0;
}

/* The clone3 ABI subset used (linux/sched.h: struct clone_args, version 2 with `cgroup`, Linux 5.7). */
struct js_clone_args {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid, set_tid_size,
        cgroup;
};
#define JS_CLONE_INTO_CGROUP 0x200000000ULL

/* fork_into: fork, the child placed by the kernel in the v2 cgroup directory `cgfd` when cgfd >= 0 and the
 * kernel can (clone3, CLONE_INTO_CGROUP: no move afterwards, so no wait for the global threadgroup lock);
 * *placed says whether it was. Otherwise (no v2 cgroup, a kernel before 5.7, a refusal) a plain fork(). The
 * clone3 child runs nothing but async-signal-safe calls before exec (like a fork() child of a threaded
 * process), so the glibc state fork() would refresh is not needed. Returns fork()'s value. */
static pid_t fork_into(int cgfd, bool *placed)
{
    *placed = false;
#ifdef SYS_clone3
    if (cgfd >= 0) {
        struct js_clone_args a = {
            .flags = JS_CLONE_INTO_CGROUP, .exit_signal = SIGCHLD, .cgroup = (uint64_t)cgfd};
        long r = syscall(SYS_clone3, &a, sizeof(a));
        if (r >= 0) {
            *placed = true;
            return (pid_t)r;
        }
    }
#else
    (void)cgfd;
#endif
    return fork();
}

/* The child's word to the monitor before it waits for the go: the hierarchies it joined, the first error. */
typedef struct {
    unsigned joined;
    int rc;
} join_report_t;

/* read_full: read exactly `n` bytes (EINTR retried). Returns n, fewer at EOF, or -1. */
static ssize_t read_full(int fd, void *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)p + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 && !got ? -1 : (ssize_t)got;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

int monitor_spawn(js_monitor_t *mon, char *const argv[])
{
    int err_pipe[2], go_pipe[2];
    if (pipe2(err_pipe, O_CLOEXEC) < 0)
        return -errno;
    if (pipe2(go_pipe, O_CLOEXEC) < 0) {
        int e = errno;
        close(err_pipe[0]);
        close(err_pipe[1]);
        return -e;
    }
    const js_cgroup_t *cg = mon->ctx.scope.cgroup;
    unsigned v2bit = 0;
    int cgfd = cg ? cgroupfs_clone_dir(cg, &v2bit) : -1;
    bool placed;
    mon->start_mono_ns = now_ns(CLOCK_MONOTONIC);
    mon->start_unix_ns = now_ns(CLOCK_REALTIME);
    pid_t pid = fork_into(cgfd, &placed);
    if (pid < 0) {
        int e = errno;
        close(err_pipe[0]);
        close(err_pipe[1]);
        close(go_pipe[0]);
        close(go_pipe[1]);
        return -e;
    }
    if (pid == 0) {
        close(err_pipe[0]);
        close(go_pipe[1]);
        /* the cgroup made for the command: it moves itself, while it has one thread (cgroupfs_join_self) */
        join_report_t jr = {0};
        if (cg) {
            unsigned skip = placed ? v2bit : 0;
            jr.rc = cgroupfs_join_self(cg, skip, &jr.joined);
            jr.joined |= skip;
        }
        ssize_t w = write(err_pipe[1], &jr, sizeof(jr));
        /* held until the sources have prepared us; EOF (the monitor died) also lets the command start */
        char go;
        while (read(go_pipe[0], &go, 1) < 0 && errno == EINTR)
            ;
        signal(SIGPIPE, SIG_DFL);
        if (mon->restore_nofile)
            setrlimit(RLIMIT_NOFILE, &mon->child_nofile);
        sigprocmask(SIG_SETMASK, &saved_mask, NULL);
        execvp(argv[0], argv);
        int e = errno;
        w = write(err_pipe[1], &e, sizeof(e));
        (void)w;
        _exit(e == ENOENT ? 127 : 126);
    }
    close(err_pipe[1]);
    close(go_pipe[0]);
    mon->child = pid;
    mon->ctx.root_pid = pid;
    join_report_t jr;
    if (read_full(err_pipe[0], &jr, sizeof(jr)) != (ssize_t)sizeof(jr))
        jr = (join_report_t){.joined = 0, .rc = -ECHILD};
    mon->ctx.cg_joined = jr.joined;
    mon->ctx.cg_join_rc = jr.rc;
    if (mon->prepared)
        sampler_prepare_child(&mon->sampler, pid);
    ssize_t w;
    do
        w = write(go_pipe[1], "g", 1);
    while (w < 0 && errno == EINTR);
    close(go_pipe[1]);
    int e = 0;
    ssize_t n = read_full(err_pipe[0], &e, sizeof(e));
    close(err_pipe[0]);
    mon->exec_errno = n == (ssize_t)sizeof(e) ? e : 0;
    return 0;
}

/* reap: collect every exited child without blocking; their rusage goes to ctx->reaped. */
static int reap(js_monitor_t *mon, size_t *cap)
{
    for (;;) {
        int status;
        struct rusage ru;
        pid_t p = wait4(-1, &status, WNOHANG, &ru);
        if (p <= 0)
            return 0;
        if (mon->ctx.nreaped == *cap) {
            size_t c = *cap ? *cap * 2 : 16;
            js_reaped_t *r = realloc(mon->ctx.reaped, c * sizeof(*r));
            if (!r)
                return -ENOMEM;
            mon->ctx.reaped = r;
            *cap = c;
        }
        js_reaped_t *x = &mon->ctx.reaped[mon->ctx.nreaped++];
        x->pid = p;
        x->status = status;
        x->t_unix_ns = now_ns(CLOCK_REALTIME);
        x->ru = ru;
        if (p == mon->child) {
            mon->child_status = status;
            mon->child_reaped = true;
        }
    }
}

/* take: collect one sample; `final` asks the sources to read everything (a stop signal ends the run). A
 * sample taken while phase marks wait for one is the scope at those marks (ctx.for_marks). */
static int take(js_monitor_t *mon, js_sampler_t *sp, js_sample_t *s, int64_t deadline, bool final)
{
    mon->ctx.final = final;
    mon->ctx.interval_ns = mon->interval_ns;
    mon->ctx.end_mono_ns =
        mon->duration_ns > 0 && mon->start_mono_ns ? mon->start_mono_ns + mon->duration_ns : 0;
    mon->take_cpu0_ns = now_ns(CLOCK_THREAD_CPUTIME_ID);
    mon->ctx.for_marks = mon->cut_wanted;
    mon->cut_wanted = false;
    int r = sampler_collect(sp, s, deadline, mon->missed);
    if (r < 0 && mon->ctx.for_marks) { /* not taken: the marks still want theirs */
        mon->cut_wanted = true;
        mon->ctx.for_marks = false;
    }
    return r;
}

/* Phases cut at their marks: a begin or end mark takes a sample of the scope at once (the mark already woke
 * the loop), so cumulative figures are exact at phase boundaries and a phase's peak is that of the samples
 * inside it. Marks in a burst coalesce: samples taken for marks draw on a budget that grows by
 * 1/MARK_GAP_COST of the time passed (at most 5% of one CPU, in the monitor thread's CPU time: a loaded
 * machine's preemption is not the sample's cost) and holds MARK_BURST samples (an end mark and the next
 * begin, a cell's end and the next cell's start, each get their own sample at once); each costs what the last
 * sample cost, at least MARK_GAP_MIN_NS / MARK_GAP_COST (at most 100 a second in a long burst). The marks
 * that arrive while the budget is spent go to the sample taken when it allows one. */
#define MARK_GAP_MIN_NS 10000000 /* 10 ms: at most 100 samples a second for marks, past a burst */
#define MARK_GAP_COST 20         /* at most 5% of one CPU */
#define MARK_BURST 4             /* samples for marks taken at once before the budget paces them */

/* mark_to_sinks: one mark, at once, to every sink that takes marks (failures counted like samples'). */
static int mark_to_sinks(void *arg, const js_mark_t *mk)
{
    js_monitor_t *mon = arg;
    if (mk->kind == JS_MARK_BEGIN || mk->kind == JS_MARK_END)
        mon->cut_wanted = true;
    for (size_t i = 0; i < mon->nsinks; i++) {
        js_sink_slot_t *sl = &mon->sinks[i];
        int w = sl->sink->mark ? sl->sink->mark(sl->state, mk) : 0;
        if (w < 0) {
            sl->errors++;
            if (!sl->first_rc)
                sl->first_rc = w;
        }
    }
    return 0;
}

/* receive_marks: the marks waiting on the job's socket (a bounded amount of work, so a flood never delays a
 * sample; `all`, for the closing sample: until none is left, within 64 times that), to the sinks and kept
 * for the next sample. */
static void receive_marks(js_monitor_t *mon, bool all)
{
    for (int i = 0; i < (all ? 64 : 1); i++)
        if (marks_receive(mon->marks, (int64_t)mon->ctx.seq, mark_to_sinks, mon) <= 0)
            break;
    marks_counts(mon->marks, &mon->ctx.marks_received, &mon->ctx.marks_rejected);
    mon->ctx.marks_senders_dropped = marks_senders_dropped(mon->marks);
}

/* commit: the model consumes the sample, then every live sink in order; each sink is timed and its failures
 * counted, and the durable one's (the recording's) are what the `self` source reports next sample. */
static void commit(js_monitor_t *mon, js_sample_t *s, bool final)
{
    if (final)
        sampler_mark_final(s);
    if (mon->marks) { /* the marks made before this sample was taken become its rows (all of them at the end)
                       */
        receive_marks(mon, final);
        self_marks_update(s, &mon->ctx); /* the sample's mark counts are those of the marks it takes */
        const js_rows_t *sr = sample_rows(s, &table_samples);
        int64_t t = sr->nrows ? rows_row(sr, 0)[SAMPLES_T_MONO].i : INT64_MAX;
        marks_take(mon->marks, sample_rows(s, &table_marks), t, final);
    }
    if (mon->model)
        model_feed(mon->model, (int64_t)mon->ctx.seq, s);
    js_sink_sample_t ev = {.seq = (int64_t)mon->ctx.seq, .sample = s, .model = mon->model, .final = final};
    int64_t sinks_ns = 0;
    for (size_t i = 0; i < mon->nsinks; i++) {
        js_sink_slot_t *sl = &mon->sinks[i];
        int64_t t0 = now_ns(CLOCK_MONOTONIC);
        int w = sl->sink->sample(sl->state, &ev);
        sl->last_ns = now_ns(CLOCK_MONOTONIC) - t0;
        sinks_ns += sl->last_ns;
        if (w < 0) {
            sl->errors++;
            if (!sl->first_rc)
                sl->first_rc = w;
        }
        if (sl->sink->durable) {
            mon->ctx.prev_write_ns = sl->last_ns;
            mon->ctx.write_errors = sl->sink->lost ? sl->sink->lost(sl->state) : sl->errors;
            mon->write_rc = sl->first_rc;
        }
    }
    mon->ctx.prev_sinks_ns = sinks_ns;
    mon->taken++;
    mon->ctx.seq++;
    /* the sample's cost: the monitor thread's CPU for its collect and this commit */
    int64_t now = now_ns(CLOCK_MONOTONIC);
    mon->last_sample_cost_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - mon->take_cpu0_ns;
    if (mon->ctx.for_marks) {
        mon->cut_samples++;
        int64_t cost = mon->last_sample_cost_ns > MARK_GAP_MIN_NS / MARK_GAP_COST
                           ? mon->last_sample_cost_ns
                           : MARK_GAP_MIN_NS / MARK_GAP_COST;
        /* the budget (CPU ns): what the time since the last such sample allows, up to a burst's worth */
        int64_t cap = MARK_BURST * cost, since = now - mon->cut_credit_at_ns;
        mon->cut_credit_ns = mon->cut_credit_at_ns == 0 || since / MARK_GAP_COST >= cap - mon->cut_credit_ns
                                 ? cap
                                 : mon->cut_credit_ns + since / MARK_GAP_COST;
        mon->cut_credit_ns -= cost;
        mon->cut_credit_at_ns = now;
        mon->cut_next_ns =
            mon->cut_credit_ns >= cost ? now : now + (cost - mon->cut_credit_ns) * MARK_GAP_COST;
    }
    mon->ctx.for_marks = false;
}

/* has_children: whether the monitor still has a child (every member of a run-mode tree is a descendant of
 * one). */
static bool has_children(const js_monitor_t *mon)
{
    char path[64], text[64];
    snprintf(path, sizeof(path), "%d/task/%d/children", (int)mon->ctx.monitor_pid, (int)mon->ctx.monitor_pid);
    ssize_t n = fs_read_small(mon->ctx.root.proc, path, text, sizeof(text));
    if (n < 0)
        return true; /* cannot tell: let the next scheduled sample decide */
    for (ssize_t i = 0; i < n; i++)
        if (text[i] >= '0' && text[i] <= '9')
            return true;
    return false;
}

/* scope_over: whether monitoring should end after the sample just taken. A watched user or node has no end
 * of its own (a signal, the duration or the stop file ends it); a watched cgroup ends when it is removed. */
static bool scope_over(js_monitor_t *mon)
{
    bool over;
    if (mon->ctx.mode == JS_MODE_RUN)
        over = mon->child_reaped && (mon->until_main_exits || mon->ctx.live_members == 0);
    else if (mon->ctx.mode == JS_MODE_WATCH)
        over = mon->ctx.scope_gone;
    else
        over = mon->ctx.live_members == 0;
    if (over && !mon->stop_reason)
        mon->stop_reason =
            mon->ctx.scope_gone && mon->ctx.scope.kind == JS_SCOPE_CGROUP ? "scope removed" : "scope ended";
    return over;
}

/* Processes whose exit wakes the loop (ctx.watch_pids: a slurmstepd's tasks), one pidfd each. A PID whose
 * pidfd fired is not watched again (a zombie would fire at once, forever). */
typedef struct {
    int32_t pid;
    int fd;      /* -1 once fired */
    bool listed; /* in this sample's list */
} wpid_t;

typedef struct {
    wpid_t w[JS_WATCH_PIDS_MAX];
    size_t n;
} wpids_t;

/* wpids_sync: follow this sample's list: open a pidfd for each new PID, forget those no longer listed. */
static void wpids_sync(wpids_t *ws, const js_ctx_t *ctx)
{
    for (size_t i = 0; i < ws->n; i++)
        ws->w[i].listed = false;
    for (size_t k = 0; k < ctx->nwatch_pids; k++) {
        size_t i = 0;
        while (i < ws->n && ws->w[i].pid != ctx->watch_pids[k])
            i++;
        if (i < ws->n) {
            ws->w[i].listed = true;
            continue;
        }
        if (ws->n == JS_WATCH_PIDS_MAX)
            continue;
        int fd = (int)syscall(SYS_pidfd_open, (pid_t)ctx->watch_pids[k], 0);
        if (fd < 0)
            continue; /* gone already, or no pidfd (Linux < 5.3): the schedule alone */
        ws->w[ws->n++] = (wpid_t){.pid = ctx->watch_pids[k], .fd = fd, .listed = true};
    }
    for (size_t i = 0; i < ws->n;) {
        if (ws->w[i].listed) {
            i++;
            continue;
        }
        if (ws->w[i].fd >= 0)
            close(ws->w[i].fd);
        ws->w[i] = ws->w[--ws->n];
    }
}

static void wpids_close(wpids_t *ws)
{
    for (size_t i = 0; i < ws->n; i++)
        if (ws->w[i].fd >= 0)
            close(ws->w[i].fd);
    ws->n = 0;
}

enum { UNTIL_NONE, UNTIL_APPEARS, UNTIL_FINISHED };

bool monitor_file_finished(const char *path)
{
    int fd = fs_open(AT_FDCWD, path);
    if (fd < 0)
        return false;
    char buf[4097];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    for (char *p = buf; (p = strstr(p, "FINISHED")); p++) /* the word, not a part of one */
        if ((p == buf || (!isalnum((unsigned char)p[-1]) && p[-1] != '_')) && !isalnum((unsigned char)p[8]) &&
            p[8] != '_')
            return true;
    return false;
}

/* until_file_says_stop: the stop file's verdict (its mode was fixed at the start). The file is the user's,
 * anywhere (a shared directory of a batch job): opened without blocking, its first 4 KiB read. */
static bool until_file_says_stop(const char *path, int mode)
{
    if (mode == UNTIL_APPEARS)
        return access(path, F_OK) == 0;
    return monitor_file_finished(path);
}

/* The loop's own state: its descriptors, its schedule and what wakes it. */
typedef struct {
    int tfd, sfd,
        root_pidfd; /* the deadline timer, the signalfd (not embedded), the watched process (attach) */
    wpids_t wp;     /* processes whose exit wakes the loop */
    size_t reaped_cap;
    int64_t start, iv, stop_at; /* the schedule: deadline k is start + k * iv; --duration's end */
    int until;                  /* UNTIL_*: what --until-file waits for */
    int64_t k;                  /* index of the deadline the next scheduled sample is due at */
} loop_t;

/* loop_open: the loop's descriptors and schedule (the start is now unless the caller set it). */
static int loop_open(js_monitor_t *mon, loop_t *lp)
{
    *lp = (loop_t){.tfd = -1, .sfd = -1, .root_pidfd = -1};
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < NHANDLED; i++)
        sigaddset(&set, handled_signals[i]);
    int r;
    if (!mon->prepared && (r = monitor_prepare(mon)) < 0)
        return r;
    if (!mon->embedded && (lp->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
        return -errno;
    lp->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (lp->tfd < 0)
        return -errno;
    /* pollable exit of the watched process (>= 5.3); embedded, only when it is another process */
    if (mon->ctx.mode == JS_MODE_ATTACH && (!mon->embedded || mon->ctx.root_pid != getpid()))
        lp->root_pidfd = (int)syscall(SYS_pidfd_open, mon->ctx.root_pid, 0);
    if (!mon->start_mono_ns) {
        mon->start_mono_ns = now_ns(CLOCK_MONOTONIC);
        mon->start_unix_ns = now_ns(CLOCK_REALTIME);
    }
    lp->start = mon->start_mono_ns;
    lp->iv = mon->interval_ns;
    lp->stop_at = mon->duration_ns > 0 ? lp->start + mon->duration_ns : INT64_MAX;
    lp->until = !mon->until_file                     ? UNTIL_NONE
                : access(mon->until_file, F_OK) == 0 ? UNTIL_FINISHED
                                                     : UNTIL_APPEARS;
    return 0;
}

/* loop_close: the end of monitoring: its time, and the loop's descriptors closed. */
static void loop_close(js_monitor_t *mon, loop_t *lp)
{
    mon->stop_mono_ns = now_ns(CLOCK_MONOTONIC);
    mon->stop_unix_ns = now_ns(CLOCK_REALTIME);
    if (lp->tfd >= 0)
        close(lp->tfd);
    if (lp->root_pidfd >= 0)
        close(lp->root_pidfd);
    wpids_close(&lp->wp);
    if (lp->sfd >= 0)
        close(lp->sfd);
    free(mon->ctx.reaped);
    mon->ctx.reaped = NULL;
}

/* loop_wait: arm the timer for the next deadline (or the end of --duration, or a marks' gap) and poll every
 * descriptor that can wake the loop into pf (5 + wp.n entries). Returns 0, or -errno (EINTR included). */
static int loop_wait(js_monitor_t *mon, loop_t *lp, struct pollfd *pf)
{
    int64_t deadline = lp->start + lp->k * lp->iv;
    int64_t wake = deadline < lp->stop_at ? deadline : lp->stop_at;
    if (mon->cut_wanted && mon->cut_next_ns < wake) /* marks wait for the end of their gap */
        wake = mon->cut_next_ns;
    struct itimerspec its = {.it_value = {.tv_sec = wake / 1000000000, .tv_nsec = wake % 1000000000}};
    if (timerfd_settime(lp->tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
        return -errno;
    /* a negative fd is ignored by poll: the signalfd (not embedded), the pidfd (attach), the mark socket
     * (when there is one) and the host's wake-up eventfd (embedded) are each optional; a stop file and
     * the stop check are looked at twice a second, whatever the interval */
    pf[0] = (struct pollfd){.fd = lp->tfd, .events = POLLIN};
    pf[1] = (struct pollfd){.fd = lp->sfd, .events = POLLIN};
    pf[2] = (struct pollfd){.fd = lp->root_pidfd, .events = POLLIN};
    pf[3] = (struct pollfd){.fd = mon->marks ? marks_fd(mon->marks) : -1, .events = POLLIN};
    pf[4] = (struct pollfd){.fd = mon->embedded ? mon->wake_fd : -1, .events = POLLIN};
    for (size_t i = 0; i < lp->wp.n; i++) /* watched tasks: read them the moment one exits */
        pf[5 + i] = (struct pollfd){.fd = lp->wp.w[i].fd, .events = POLLIN};
    return poll(pf, 5 + lp->wp.n, lp->until != UNTIL_NONE || mon->stop_check ? 500 : -1) < 0 ? -errno : 0;
}

/* loop_events: what woke the loop, other than the timer and signals: a watched task's exit, marks, the
 * host's requests (embedded), the attached process's exit. Sets *event_sample and *stop. */
static void loop_events(js_monitor_t *mon, loop_t *lp, const struct pollfd *pf, bool *event_sample,
                        bool *stop)
{
    for (size_t i = 0; i < lp->wp.n; i++)
        if (lp->wp.w[i].fd >= 0 && (pf[5 + i].revents & (POLLIN | POLLHUP | POLLERR))) {
            close(lp->wp.w[i].fd);
            lp->wp.w[i].fd = -1;
            *event_sample = true; /* a task exited: its parent still lives, read both now */
        }
    if (pf[3].revents & POLLIN)
        receive_marks(mon, false);
    if (pf[4].revents & POLLIN) {
        uint64_t one;
        ssize_t rd = read(mon->wake_fd, &one, sizeof(one)); /* clears the eventfd */
        (void)rd;
        int req = atomic_exchange(&mon->requests, 0);
        *stop = (req & MONITOR_REQ_STOP) != 0;
        if (*stop)
            mon->stop_reason = "program"; /* js_monitor_stop */
        *event_sample = (req & MONITOR_REQ_SAMPLE) != 0;
    }
    if (lp->root_pidfd >= 0 && (pf[2].revents & (POLLIN | POLLHUP | POLLERR))) {
        /* attach: the watched process has exited; if nothing of its tree is left, end now, not at the
         * next deadline (which may be an hour away) */
        close(lp->root_pidfd);
        lp->root_pidfd = -1;
        *event_sample = true;
    }
}

/* loop_signals: the signals that arrived: attach and watch stop on SIGINT, SIGTERM, SIGHUP, SIGQUIT; run
 * forwards them to the command and reaps. Sets *event_sample and *stop. Returns 0 or -errno. */
static int loop_signals(js_monitor_t *mon, loop_t *lp, bool *event_sample, bool *stop)
{
    struct signalfd_siginfo si;
    while (read(lp->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        int sig = (int)si.ssi_signo;
        if (sig == SIGCHLD)
            continue;
        if (mon->ctx.mode != JS_MODE_RUN) {
            if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT) {
                *stop = true;
                mon->stop_signal = sig;
                mon->stop_reason = "signal";
            }
            continue;
        }
        /* a signal the terminal sent to the whole foreground group already reached the command */
        bool from_tty = si.ssi_code == SI_KERNEL && (sig == SIGINT || sig == SIGQUIT);
        if (!mon->child_reaped && !from_tty)
            kill(mon->child, sig);
    }
    if (mon->ctx.mode != JS_MODE_RUN)
        return 0;
    bool was = mon->child_reaped;
    size_t before = mon->ctx.nreaped;
    int r = reap(mon, &lp->reaped_cap);
    if (r < 0)
        return r;
    /* the command just ended, or something was reaped after it: take the closing sample at once
     * if the scope is over (--until-main-exits, or no child of the monitor is left) */
    if ((!was && mon->child_reaped) || (mon->child_reaped && mon->ctx.nreaped > before))
        *event_sample = mon->until_main_exits || !has_children(mon);
    return 0;
}

/* loop_stop_wanted: whether monitoring ends now for a reason other than the scope's end: --duration,
 * --until-file, the caller's stop check (mon->stop_reason says which). */
static bool loop_stop_wanted(js_monitor_t *mon, const loop_t *lp, int64_t now)
{
    const char *why = NULL;
    if (now >= lp->stop_at)
        mon->stop_reason = "duration";
    else if (lp->until != UNTIL_NONE && until_file_says_stop(mon->until_file, lp->until))
        mon->stop_reason = "until-file";
    else if (mon->stop_check && mon->stop_check(mon->stop_arg, &why))
        mon->stop_reason = why ? why : "stop check";
    else
        return false;
    return true;
}

int monitor_loop(js_monitor_t *mon)
{
    js_sample_t *s = &mon->sample;
    js_sampler_t *sp = &mon->sampler;
    loop_t lp;
    int r = loop_open(mon, &lp);
    if (r < 0)
        goto out;
    /* the first sample, due at the start */
    if (mon->ctx.mode == JS_MODE_RUN && (r = reap(mon, &lp.reaped_cap)) < 0)
        goto out;
    if ((r = take(mon, sp, s, lp.start, false)) < 0) /* the first sample is never interrupted */
        goto out;
    sp->interruptible = !mon->embedded; /* embedded: a pending signal is the host's business */
    sampler_inventory(sp, s);
    bool done = scope_over(mon);
    commit(mon, s, done);
    wpids_sync(&lp.wp, &mon->ctx);
    lp.k = 1;

    while (!done) {
        struct pollfd pf[5 + JS_WATCH_PIDS_MAX];
        if ((r = loop_wait(mon, &lp, pf)) == -EINTR)
            continue;
        if (r < 0)
            goto out;
        bool event_sample = false, stop = false;
        loop_events(mon, &lp, pf, &event_sample, &stop);
        if ((pf[1].revents & POLLIN) && (r = loop_signals(mon, &lp, &event_sample, &stop)) < 0)
            goto out;
        int64_t now = now_ns(CLOCK_MONOTONIC);
        if (mon->cut_wanted && now >= mon->cut_next_ns)
            event_sample = true; /* a sample of the scope at the marks that just arrived */
        stop = stop || loop_stop_wanted(mon, &lp, now);
        int64_t deadline = lp.start + lp.k * lp.iv;
        bool due = now >= deadline;
        if (!due && !event_sample && !stop)
            continue;
        int64_t dl = -1;
        if (due) {
            int64_t kn = (now - lp.start) / lp.iv; /* the latest deadline that has passed */
            if (kn > lp.k)
                mon->missed += kn - lp.k; /* deadlines k..kn-1 passed without a sample */
            dl = lp.start + kn * lp.iv;
            lp.k = kn + 1;
        }
        if ((r = take(mon, sp, s, dl, stop)) == -EINTR)
            continue; /* a stop signal came in mid-sample: handle it first, the next sample reads everything
                       */
        if (r < 0)
            goto out;
        done = stop || scope_over(mon);
        commit(mon, s, done);
        wpids_sync(&lp.wp, &mon->ctx);
    }
    r = 0;
out:
    loop_close(mon, &lp);
    return r;
}

int monitor_request(js_monitor_t *mon, int bits)
{
    atomic_fetch_or(&mon->requests, bits);
    uint64_t one = 1;
    return write(mon->wake_fd, &one, sizeof(one)) == (ssize_t)sizeof(one) ? 0 : -errno;
}

void monitor_finish(js_monitor_t *mon)
{
    for (size_t i = 0; i < mon->nsinks; i++) {
        js_sink_slot_t *sl = &mon->sinks[i];
        int w = sl->sink->stop ? sl->sink->stop(sl->state) : 0;
        if (w < 0) {
            sl->errors++;
            if (!sl->first_rc)
                sl->first_rc = w;
        }
        if (sl->sink->durable) { /* what the last commit lost too */
            mon->ctx.write_errors = sl->sink->lost ? sl->sink->lost(sl->state) : sl->errors;
            if (!mon->write_rc)
                mon->write_rc = sl->first_rc;
        }
    }
    mon->nsinks = 0; /* stopped once: a second call (after a sink's state was freed) touches none */
    if (mon->prepared) {
        sampler_fini(&mon->sampler);
        sample_free(&mon->sample);
        mon->prepared = false;
    }
}
