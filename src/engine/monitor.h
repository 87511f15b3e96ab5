/* SPDX-License-Identifier: MIT
 *
 * The monitor loop: starts the command (run mode) as a child of a child subreaper, samples on absolute
 * CLOCK_MONOTONIC deadlines (a deadline that passes before its sample can start is counted as missed, never
 * shifted), reaps children with wait4 (their rusage goes to the recording), forwards signals, takes a closing
 * sample the moment the scope ends, and hands every sample to the model and then to each live sink (the
 * recording among them). Library code: it never prints and never exits; errors come back as negative errno.
 *
 * Order of use: monitor_prepare (the sources' init), monitor_add_sink for each sink, monitor_spawn (run mode:
 * the command is forked and held before exec while the sources prepare it), monitor_loop, monitor_finish.
 *
 * Marks: with mon->marks set (core/marks.h), the loop also polls the job's mark socket; each mark goes at
 * once to every sink's mark() and, at the next sample, into that sample's `marks` rows (before the model and
 * the sinks see the sample), so live consumers and readers of the recording see the same marks in sample
 * order.
 *
 * Embedded mode (libjobscope's js_monitor_start): the loop runs on a thread of the process it watches
 * (attach mode over that process's tree). It then touches no signal (no signalfd, no signal mask, no
 * interruption of a sample by a pending signal: the host's signals stay the host's), reaps nothing, and
 * takes requests from the host through wake_fd (an eventfd) and the `requests` bits (monitor_request).
 */
#ifndef JOBSCOPE_MONITOR_H
#define JOBSCOPE_MONITOR_H

#include "core/sample.h"
#include "engine/sampler.h"
#include "core/sink.h"
#include "core/source.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

typedef struct js_monitor js_monitor_t;
typedef struct js_marks js_marks_t;

/* Requests to an embedded monitor (monitor_request). */
enum {
    MONITOR_REQ_SAMPLE = 1, /* take a sample now (off schedule) */
    MONITOR_REQ_STOP = 2,   /* take the closing sample and return */
};

struct js_monitor {
    /* set by the caller */
    js_ctx_t ctx; /* root, mode, scope, root_pid (attach), uss_every, status_every */
    int64_t interval_ns;
    bool until_main_exits;
    bool restore_nofile;    /* run: the command gets child_nofile back (the monitor raised its own) */
    int64_t duration_ns;    /* stop this long after the start (a closing sample then), 0 = no limit */
    const char *until_file; /* stop when this file appears, or, if it exists at the start, when it contains
                             * the word FINISHED (perfmon's convention); NULL = none */
    struct rlimit child_nofile;
    /* another reason to stop, asked twice a second and after every sample (NULL = none): returns true to take
     * the closing sample and stop, with a static reason for stop_reason ("job ended", "ipc-file") */
    bool (*stop_check)(void *arg, const char **ret_reason);
    void *stop_arg;
    js_model_t *model;                  /* borrowed; may be NULL */
    js_sink_slot_t sinks[JS_SINKS_MAX]; /* monitor_add_sink */
    size_t nsinks;
    js_marks_t *marks;   /* the job's mark socket, or NULL (borrowed) */
    bool embedded;       /* see "Embedded mode" above; set ctx.embedded too */
    int wake_fd;         /* embedded: eventfd written by monitor_request (read only when embedded) */
    atomic_int requests; /* embedded: MONITOR_REQ_* bits pending */
    /* the sources and the sample buffers (monitor_prepare) */
    js_sampler_t sampler;
    js_sample_t sample;
    bool prepared;
    /* results */
    pid_t child;      /* run mode: the command */
    int child_status; /* wait status of the command */
    bool child_reaped;
    int exec_errno; /* run mode: why exec failed, 0 if it did not */
    int64_t start_mono_ns, start_unix_ns, stop_mono_ns, stop_unix_ns;
    int64_t taken, missed;
    int stop_signal;         /* attach and watch: the signal that ended monitoring, 0 if none */
    const char *stop_reason; /* why monitoring ended: "scope ended", "signal", "duration", "until-file",
                              * "scope removed", or stop_check's reason (static text) */
    int write_rc;            /* first failure of the durable sink (the recording), 0 if none */
    /* phase marks (begin, end) take a sample of the scope at once, within a budget (monitor.c) */
    bool cut_wanted;             /* a begin or end mark arrived since the last sample */
    int64_t cut_next_ns;         /* CLOCK_MONOTONIC before which no sample is taken for marks */
    int64_t last_sample_cost_ns; /* the monitor thread's CPU the last sample cost (collect and sinks) */
    int64_t take_cpu0_ns;        /* the monitor thread's CPU time when the sample being taken began */
    int64_t cut_credit_ns;       /* samples for marks: the budget left (CPU ns; see monitor.c) */
    int64_t cut_credit_at_ns;    /* CLOCK_MONOTONIC of the last sample for marks (0: none yet) */
    int64_t cut_samples;         /* samples taken for marks */
};

/* monitor_block_signals: block the signals the loop handles (call before monitor_spawn). Returns 0/-errno. */
int monitor_block_signals(void);

/* monitor_prepare: allocate the sample and init every source against mon->ctx (set the context first).
 * A source whose init fails is disabled (mon->sampler.init_rc). Returns 0 or -ENOMEM. */
int monitor_prepare(js_monitor_t *mon);

/* monitor_add_sink: hand every sample (and mark) to `sink` with `state` (borrowed), after the sinks added
 * before it. Returns 0 or -ENOSPC (JS_SINKS_MAX reached). */
int monitor_add_sink(js_monitor_t *mon, const js_live_sink_t *sink, void *state);

/* monitor_spawn: fork the command; the cgroup made for it (ctx.scope.cgroup) it joins before anything else,
 * placed there by clone3 (v2) or moving itself (ctx.cg_joined, ctx.cg_join_rc say where it joined); while it
 * is held before exec, let every source prepare it (sampler_prepare_child); then execvp `argv` with the
 * caller's original signal mask and dispositions. Sets mon->child and mon->start_*; when exec fails,
 * mon->exec_errno is set and the child exits 127 (not found) or 126. Requires monitor_prepare. Returns 0 or
 * -errno (fork failed). */
int monitor_spawn(js_monitor_t *mon, char *const argv[]);

/* monitor_loop: sample until the scope ends (run: every descendant gone, or the command exits with
 * until_main_exits; attach: every member gone; watch: the watched cgroup removed),
 * SIGINT/SIGTERM/SIGHUP/SIGQUIT arrive (attach, watch; run forwards them), duration_ns passes, or until_file
 * or stop_check says so; the last sample is the closing one. Returns 0 or -errno. */
int monitor_loop(js_monitor_t *mon);

/* monitor_file_finished: whether the file at `path` (the user's, anywhere: a plain open of its first 4 KiB,
 * never blocking on a FIFO) contains the word FINISHED, perfmon's stop word. False when it cannot be read. */
bool monitor_file_finished(const char *path);

/* monitor_request: ask an embedded monitor (from another thread) for MONITOR_REQ_* `bits`. Returns 0 or
 * -errno. */
int monitor_request(js_monitor_t *mon, int bits);

/* monitor_finish: stop every sink (flush), fini the sources, free the sample. Accepts an unprepared monitor;
 * a second call stops no sink again (their states may be gone by then). */
void monitor_finish(js_monitor_t *mon);

#endif
