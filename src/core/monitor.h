/* SPDX-License-Identifier: MIT
 *
 * The monitor loop: starts the command (run mode) as a child of a child subreaper, samples on absolute
 * CLOCK_MONOTONIC deadlines (a deadline that passes before its sample can start is counted as missed, never
 * shifted), reaps children with wait4 (their rusage goes to the recording), forwards signals, takes a closing
 * sample the moment the scope ends, and hands every sample to the recorder and the model. Library code: it
 * never prints and never exits; errors come back as negative errno with a reason string.
 */
#ifndef JOBSCOPE_MONITOR_H
#define JOBSCOPE_MONITOR_H

#include "core/model.h"
#include "core/sample.h"
#include "core/source.h"
#include "sinks/recording.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct js_monitor js_monitor_t;

/* Called after every sample (for the live status line). */
typedef void (*js_on_sample_fn)(void *arg, const js_model_t *model, int64_t taken);

struct js_monitor {
    /* set by the caller */
    js_ctx_t ctx;              /* root, mode, root_pid (attach), uss_every, status_every */
    int64_t interval_ns;
    bool until_main_exits;
    js_recorder_t *rec;        /* borrowed; may be NULL */
    js_model_t *model;         /* borrowed */
    js_on_sample_fn on_sample;
    void *on_sample_arg;
    /* results */
    pid_t child;               /* run mode: the command */
    int child_status;          /* wait status of the command */
    bool child_reaped;
    int exec_errno;            /* run mode: why exec failed, 0 if it did not */
    int64_t start_mono_ns, start_unix_ns, stop_mono_ns, stop_unix_ns;
    int64_t taken, missed;
    int stop_signal;           /* attach mode: the signal that ended monitoring, 0 if the tree ended */
    int write_rc;              /* first recording write error, 0 if none */
};

/* monitor_block_signals: block the signals the loop handles (call before monitor_spawn). Returns 0/-errno. */
int monitor_block_signals(void);

/* monitor_spawn: fork and execvp `argv` with the caller's original signal mask and dispositions. Sets
 * mon->child and mon->start_*; when exec fails, mon->exec_errno is set and the child exits 127 (not found)
 * or 126. Returns 0 or -errno (fork failed). */
int monitor_spawn(js_monitor_t *mon, char *const argv[]);

/* monitor_loop: sample until the scope ends (run: every descendant gone, or the command exits with
 * until_main_exits; attach: every member gone, or SIGINT/SIGTERM/SIGHUP). Returns 0 or -errno. */
int monitor_loop(js_monitor_t *mon);

#endif
