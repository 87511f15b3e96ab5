/* SPDX-License-Identifier: MIT
 *
 * jobscope.h: the public C API of libjobscope (link with -ljobscope; `pkg-config --cflags --libs jobscope`).
 *
 * Two parts:
 *
 *  1. Marks. A program marks parts of its run: phases (js_phase_begin / js_phase_end, by name, nestable and
 *     overlapping across threads and processes) and point events (js_event, with optional JSON data). Inside
 *     a run monitored by jobscope (`jobscope run`, or a monitor embedded with js_monitor_start) every mark is
 *     sent to the monitor, which records it with the sample it falls before and totals CPU, memory, I/O and
 *     energy per phase. Outside a monitored run a mark does nothing and costs a load and a branch. A mark
 *     never blocks: when the monitor cannot keep up the mark is dropped and counted (js_marks_dropped). The
 *     functions are thread-safe and async-signal-unsafe; a forked child keeps marking to the same monitor.
 *     The MPI rank is taken from OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK or SLURM_PROCID.
 *
 *  2. Embedding. js_monitor_start runs jobscope's monitor on a thread of the calling process, over that
 *     process and every descendant, writing the same recording as `jobscope run` (when an output is given)
 *     and keeping the same summary (js_monitor_summary, JSON). The host's signals and children are left
 *     alone: nothing is reaped (children the host waits for are counted through its own cutime), no signal
 *     is blocked or handled outside the monitor thread. The monitor thread's own CPU is not counted as the
 *     host's. Levels (JS_LEVEL_*) add the caller's user's processes and its batch job's beside the tree, each
 *     a scope of its own in the same recording. The Python module (python/jobscope) is built on this.
 *
 * Versioning: the soname is libjobscope.so.0; symbols carry the version node JOBSCOPE_0. JS_API_VERSION
 * counts compatible additions.
 */
#ifndef JOBSCOPE_PUBLIC_H
#define JOBSCOPE_PUBLIC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define JS_API __attribute__((visibility("default")))
#else
#define JS_API
#endif

#define JS_API_VERSION 2

/* Limits of one mark (bytes, UTF-8 recommended; names are stored as given and escaped on output). Data is
 * one JSON value of at most JS_MARK_DATA_MAX bytes nested at most 64 levels (else it is stored as a JSON
 * string); any such value is rendered by every reader (summary, report, compare). */
#define JS_MARK_NAME_MAX 256
#define JS_MARK_DATA_MAX 4096

/* ---- marks ----------------------------------------------------------------------------------------- */

/* js_phase_begin: phase `name` (1..JS_MARK_NAME_MAX bytes, no NUL) begins now. Phases with the same name
 * may overlap (threads, ranks): the phase is active while more have begun than ended.
 * Returns 0 when the mark was sent or when no monitor is present (nothing to do); -EINVAL for a bad name;
 * -EAGAIN when the monitor's queue was full (the mark is dropped and counted); -EPIPE when the monitor that
 * JOBSCOPE_SOCKET announces has gone or cannot be reached (every later mark is a counted no-op). Marks go
 * only to a monitor of this process's effective user (or root): JOBSCOPE_SOCKET must be the absolute path
 * of its socket, and a listener of another user there is refused before anything is sent. */
JS_API int js_phase_begin(const char *name);

/* js_phase_end: phase `name` ends now. Returns as js_phase_begin. */
JS_API int js_phase_end(const char *name);

/* js_event: a point event `name` now, with `json` (a JSON value of at most JS_MARK_DATA_MAX bytes, or NULL
 * for none). Text that is not valid JSON is recorded as a JSON string. Returns as js_phase_begin, and
 * -EINVAL when json is too long. */
JS_API int js_event(const char *name, const char *json);

/* js_marks_active: 1 when marks reach a monitor (JOBSCOPE_SOCKET names one that accepted the connection),
 * else 0. The first call (or the first mark) connects. */
JS_API int js_marks_active(void);

/* js_marks_dropped: marks this process dropped so far because the monitor's queue was full or it had gone
 * (each drop is also added to the monitor's own count, in a page shared with it, and each mark carries this
 * process's count). */
JS_API uint64_t js_marks_dropped(void);

/* ---- embedding -------------------------------------------------------------------------------------- */

/* Options of js_monitor_start. Zero-initialise, set `size` to sizeof(js_monitor_opts_t), then what you
 * need; fields added in later versions are read only when `size` covers them. */
typedef struct {
    size_t size;         /* sizeof(js_monitor_opts_t) */
    double interval_s;   /* time between samples, 0.01..3600 (0: 1 s) */
    const char *output;  /* recording to create (SQLite, docs/FORMAT.md), or NULL for none (summary only) */
    int overwrite;       /* replace `output` when it exists */
    unsigned uss_every;  /* read USS/PSS every N samples; when unset (0): every 30 s per process */
    int set_environment; /* export JOBSCOPE_SOCKET (setenv) so children mark to this monitor: 1 yes, 0 no */
    /* version 2 */
    int pid; /* 0 watches this process and its descendants; > 0 that process and its descendants instead
              * (attach mode: figures count from the first sample, the monitor's process is not a member,
              * marks still go to this monitor) */
    unsigned levels;    /* JS_LEVEL_* bits: scopes monitored beside the tree (0: none), see below */
    const char *job_id; /* JS_LEVEL_JOB: the SLURM job; NULL: $SLURM_JOB_ID of the caller */
} js_monitor_opts_t;

/* Levels: scopes read by the same monitor beside the watched tree, each recorded in tables of its own and
 * modelled as a scope of its own (the recording's `levels` view and the summary's `levels` section: CPU time
 * and rate, memory, I/O, processes, per phase too). JS_LEVEL_USER is every process of the caller's real UID
 * (as `jobscope watch --user`); JS_LEVEL_JOB is the batch job the caller runs in, on this node: the job's
 * cgroup where SLURM's task/cgroup made one (exact CPU, the cgroup's memory), else the tasks of the job's
 * slurmstepd processes and their descendants (as `jobscope job --track stepd`). The node itself needs no
 * level: every recording holds the host's figures (the `system` view). */
#define JS_LEVEL_USER 1u
#define JS_LEVEL_JOB 2u

/* js_monitor_start: start monitoring this process and its descendants (or those of opts->pid) on a new
 * thread. Takes the first sample before returning. At most one embedded monitor per process. With `pid`, the
 * monitor ends by itself when that process and every descendant have exited (js_monitor_stop then returns at
 * once, with the whole run's summary). A child forked while one runs has none (the parent's run, its
 * recording and its socket are left to the parent) and may start its own. `size` may be that of version 1
 * (the fields up to set_environment); later fields are then taken as zero. Returns 0, -EBUSY (one is
 * running), -EINVAL (bad options: an unknown level bit, a negative pid, a bad job id), -ESRCH (no process
 * `pid`), -EEXIST (output exists and not overwrite), -ENOENT (JS_LEVEL_JOB outside a SLURM job and no
 * job_id), -EXDEV (/proc belongs to another PID namespace: mount a procfs for this one), or another -errno.
 */
JS_API int js_monitor_start(const js_monitor_opts_t *opts);

/* js_monitor_sample: take a sample now (off schedule) and wait until it is recorded and in the summary.
 * Returns 0, or -ESRCH when no monitor is running. */
JS_API int js_monitor_sample(void);

/* js_monitor_stop: take the closing sample, stop the thread, close the recording. The summary stays
 * available until the next js_monitor_start. Returns 0, -ESRCH (none running) or the first error the
 * monitor met (the recording could not be written, say). */
JS_API int js_monitor_stop(void);

/* js_monitor_summary: the summary as JSON text (the same object as `jobscope summary --json`, with the
 * `phases` section), malloc'ed: free it with js_free. While running it reflects a sample taken for the call;
 * after js_monitor_stop, the whole run. NULL when no monitor was started (errno ESRCH) or on ENOMEM. */
JS_API char *js_monitor_summary(void);

/* js_monitor_address: the JOBSCOPE_SOCKET value of the running embedded monitor (static storage), or NULL. */
JS_API const char *js_monitor_address(void);

/* ---- recordings ------------------------------------------------------------------------------------- */

/* js_recording_export: write view `view` of the recording `path` ("tree", "process", "system", "marks",
 * "phases", ... as `jobscope export --list` shows) as CSV (format "csv") or JSON Lines ("jsonl") to the new
 * file `out` (replaced when it exists; written under a temporary name beside it and renamed over it when
 * complete, so `out` never holds a partial file). Returns 0, -ENOENT (no such view), or another -errno. */
JS_API int js_recording_export(const char *path, const char *view, const char *format, const char *out);

/* js_recording_summary: the summary of the recording `path` as JSON text (malloc'ed; js_free), or NULL
 * (errno set). */
JS_API char *js_recording_summary(const char *path);

/* ---- misc -------------------------------------------------------------------------------------------- */

/* js_free: free memory returned by this library. Accepts NULL. */
JS_API void js_free(void *p);

/* js_version: the library version, "0.1.0". */
JS_API const char *js_version(void);

#ifdef __cplusplus
}
#endif

#endif
