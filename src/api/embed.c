/* SPDX-License-Identifier: MIT
 *
 * The embedded monitor (include/jobscope.h: js_monitor_start, js_monitor_sample, js_monitor_stop,
 * js_monitor_summary): jobscope's monitor loop in attach mode over the calling process's own tree, run on a
 * thread of that process in the loop's embedded mode (core/monitor.h): no signalfd, no reaping, no signal
 * taken from the host. The thread blocks every signal, so process-directed signals go to the host's threads
 * as before. Children the host waits for are counted through its own cutime (exact for those); a child
 * orphaned away from the tree is counted up to its last sample, as in attach mode. The monitor thread's own
 * CPU is recorded (self table, RUSAGE_THREAD) and taken off the host's by the model (cfg.embedded).
 *
 * A live sink of this file's own tells waiting callers that a sample was committed and builds the summary
 * on the monitor thread, where the model is consistent: a caller that wants a summary (or a sample) asks for
 * an off-schedule sample through monitor_request() and waits for one taken after its request. The marks the
 * process itself sends go to this monitor (client_point), and so do its children's when set_environment
 * exports JOBSCOPE_SOCKET.
 *
 * With opts->pid (API version 2) the scope is another process and its descendants instead: attach mode as
 * `jobscope attach PID` runs it (figures from the first sample, the root's exit wakes the loop, the loop ends
 * by itself when the scope is over), still on a thread of this process, whose own process is then skipped if
 * it is a member. The model is not told `embedded` then: the monitor thread is not in the root's CPU.
 */
#include "api/api.h"
#include "config.h"

#include "core/hostinfo.h"
#include "core/json.h"
#include "core/marks.h"
#include "core/monitor.h"
#include "core/sampler.h"
#include "model/model.h"
#include "model/summary.h"
#include "sinks/recording.h"
#include "sinks/tabsink.h"
#include "sources/proc_tree.h"
#include "sys/parse.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    pthread_mutex_t api; /* one public call at a time */
    pthread_mutex_t mu;  /* the fields shared with the monitor thread (marked below) */
    pthread_cond_t cv;
    bool atfork_set;
    bool running;
    pthread_t thread;
    js_monitor_t mon;
    js_marks_t *marks;
    js_recorder_t *rec;
    js_model_t *model;
    js_hostinfo_t hi;
    js_buf_t cmd, shell;
    char output[4096];
    bool have_output;
    bool env_set, env_had;
    char *env_saved;
    pid_t target; /* opts->pid: the attached process, 0 for this process */
    /* shared with the monitor thread (mu) */
    bool done;
    int loop_rc;
    int64_t last_t;        /* t_mono_ns of the last committed sample, 0 before the first */
    int64_t summary_after; /* build the summary at the first sample taken at or after this; 0: not wanted */
    int64_t summary_t;     /* t_mono_ns of the sample the summary describes */
    js_buf_t summary;      /* the last summary built (kept after stop until the next start) */
    bool have_summary;
} embed_t;

static embed_t em = {.api = PTHREAD_MUTEX_INITIALIZER, .mu = PTHREAD_MUTEX_INITIALIZER,
                     .cv = PTHREAD_COND_INITIALIZER};

static void after_fork_child(void)
{
    /* the monitor thread does not exist in the child: this process monitors nothing (the copies of the
     * parent's descriptors and memory are left alone) */
    pthread_mutex_init(&em.api, NULL);
    pthread_mutex_init(&em.mu, NULL);
    pthread_cond_init(&em.cv, NULL);
    em.running = false;
    em.have_summary = false;
}

/* ---- the sink: notifications and summaries, on the monitor thread --------------------------------------- */

/* build_summary: the summary JSON of what the model has seen (called on the monitor thread, mu held). */
static int build_summary(bool final)
{
    js_summary_t su;
    model_summary(em.model, &su);
    su.write_errors = (int64_t)em.mon.ctx.write_errors;
    js_run_info_t info = {
        .version = JOBSCOPE_VERSION,
        .command_json = em.cmd.p ? em.cmd.p : "[]",
        .command_shell = em.shell.p,
        .host = em.hi.host,
        .mode = em.target ? "attach" : "embedded",
        .scope = em.target ? "process tree of an attached process (embedded monitor)"
                           : "process tree (embedded monitor)",
        .state = final ? "complete" : "in progress",
        .recording = em.have_output ? em.output : NULL,
    };
    em.summary.len = 0;
    int r = summary_json(&em.summary, &info, &su, em.model);
    em.have_summary = r == 0;
    return r;
}

static int embed_sample(void *state, const js_sink_sample_t *ev)
{
    (void)state;
    const js_rows_t *sr = sample_rows(ev->sample, &table_samples);
    int64_t t = sr->nrows && rows_row(sr, 0)[SAMPLES_T_MONO].present ? rows_row(sr, 0)[SAMPLES_T_MONO].i : 1;
    int r = 0;
    pthread_mutex_lock(&em.mu);
    if (ev->final || (em.summary_after && t >= em.summary_after)) {
        r = build_summary(ev->final);
        em.summary_t = t;
        em.summary_after = 0;
    }
    em.last_t = t;
    pthread_cond_broadcast(&em.cv);
    pthread_mutex_unlock(&em.mu);
    return r;
}

static const js_live_sink_t sink_embed = {
    .name = "embed",
    .sample = embed_sample,
};

static void *monitor_thread(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "jobscope-mon");
    int r = monitor_loop(&em.mon);
    pthread_mutex_lock(&em.mu);
    em.loop_rc = r;
    em.done = true;
    pthread_cond_broadcast(&em.cv);
    pthread_mutex_unlock(&em.mu);
    return NULL;
}

/* ---- metadata ------------------------------------------------------------------------------------------ */

static void meta_i64(const char *key, int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%lld", (long long)v);
    if (em.rec)
        recorder_meta(em.rec, key, buf);
}

static void meta_str(const char *key, const char *v)
{
    if (em.rec)
        recorder_meta(em.rec, key, v);
}

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* self_facts: the command line of the root (`pid`: this process, or the attached one; JSON and
 * shell-quoted) and this process's start time in ticks. */
static int64_t self_facts(const js_fsroot_t *root, pid_t pid)
{
    char path[32];
    js_buf_t raw = {0};
    snprintf(path, sizeof(path), "%d/cmdline", (int)pid);
    em.cmd.len = em.shell.len = 0;
    if (fs_read(root->proc, path, &raw) == 0 && raw.len && proc_cmdline_json(raw.p, raw.len, &em.cmd) == 0) {
        char *av[256];
        size_t n = 0;
        for (size_t i = 0; i < raw.len && n < 256; i += strlen(raw.p + i) + 1)
            av[n++] = raw.p + i;
        shell_quote(&em.shell, av, n);
    } else {
        em.cmd.len = 0;
        buf_append(&em.cmd, "[]", 2);
    }
    buf_free(&raw);
    char text[1024];
    js_pid_stat_t ps;
    snprintf(path, sizeof(path), "%d/stat", (int)getpid());
    if (fs_read_small(root->proc, path, text, sizeof(text)) > 0 && parse_pid_stat(text, &ps) == 0)
        return (int64_t)ps.starttime;
    return 0;
}

static void write_start_meta(const js_monitor_opts_t *o, int64_t start_ticks)
{
    meta_str("jobscope_version", JOBSCOPE_VERSION);
    /* attached: read back as attach mode (replay), the monitor thread is not in the root's CPU */
    meta_str("mode", em.target ? "attach" : "embedded");
    meta_str("scope", em.target ? "process tree of an attached process (embedded monitor)"
                                : "process tree (embedded monitor)");
    meta_str("command", em.cmd.p);
    meta_str("command_shell", em.shell.p);
    meta_str("host", em.hi.host);
    meta_str("kernel", em.hi.kernel);
    meta_str("cpu_model", em.hi.cpu_model);
    meta_i64("cpus_online", em.hi.cpus_online);
    meta_i64("mem_total_bytes", em.hi.mem_total_bytes);
    meta_i64("clk_tck", em.hi.clk_tck);
    meta_i64("page_size", em.hi.page_size);
    meta_i64("interval_ns", em.mon.interval_ns);
    meta_i64("uss_every", em.mon.ctx.uss_every);
    meta_i64("status_every", em.mon.ctx.status_every);
    meta_i64("monitor_pid", getpid());
    meta_i64("monitor_start_ticks", start_ticks);
    meta_i64("cores_available", em.hi.cores_available);
    meta_i64("root_pid", em.mon.ctx.root_pid);
    meta_i64("start_mono_ns", em.mon.start_mono_ns);
    meta_i64("start_unix_ns", em.mon.start_unix_ns);
    if (em.marks)
        meta_str("marks_socket", marks_address(em.marks));
    for (size_t i = 0; i < em.mon.sampler.nsources; i++)
        if (em.mon.sampler.init_rc[i] < 0) {
            char key[96];
            snprintf(key, sizeof(key), "source_error.%s", js_sources[i]->name);
            meta_str(key, strerror(-em.mon.sampler.init_rc[i]));
        }
    (void)o;
}

static void write_stop_meta(void)
{
    char buf[40];
    meta_i64("stop_mono_ns", em.mon.stop_mono_ns ? em.mon.stop_mono_ns : clock_ns(CLOCK_MONOTONIC));
    meta_i64("samples_taken", em.mon.taken);
    meta_i64("samples_missed", em.mon.missed);
    if (em.model) {
        js_summary_t su;
        model_summary(em.model, &su);
        meta_str("monitor_cpu_s", fmt_real(buf, sizeof(buf), su.mon_cpu_s));
        meta_str("monitor_mean_sample_cost_s", fmt_real(buf, sizeof(buf), su.mon_mean_cost_s));
    }
    /* last: its presence says the recording is complete */
    meta_i64("stop_unix_ns", em.mon.stop_unix_ns ? em.mon.stop_unix_ns : clock_ns(CLOCK_REALTIME));
}

/* ---- life ---------------------------------------------------------------------------------------------- */

static void set_env(const char *addr)
{
    const char *old = getenv("JOBSCOPE_SOCKET");
    em.env_had = old != NULL;
    free(em.env_saved);
    em.env_saved = old ? strdup(old) : NULL;
    em.env_set = setenv("JOBSCOPE_SOCKET", addr, 1) == 0;
}

static void restore_env(void)
{
    if (!em.env_set)
        return;
    if (em.env_had && em.env_saved)
        setenv("JOBSCOPE_SOCKET", em.env_saved, 1);
    else
        unsetenv("JOBSCOPE_SOCKET");
    free(em.env_saved);
    em.env_saved = NULL;
    em.env_set = false;
}

/* teardown: release everything of a run (the summary stays). */
static void teardown(void)
{
    monitor_finish(&em.mon);
    recorder_close(em.rec);
    em.rec = NULL;
    restore_env();
    client_point(NULL); /* this process's marks follow the environment again (an outer monitor, or none) */
    marks_close(em.marks);
    em.marks = NULL;
    if (em.mon.wake_fd >= 0)
        close(em.mon.wake_fd);
    fsroot_close(&em.mon.ctx.root);
    model_free(em.model);
    em.model = NULL;
    free(em.mon.ctx.reaped);
    memset(&em.mon, 0, sizeof(em.mon));
    em.mon.wake_fd = -1;
}

JS_API int js_monitor_start(const js_monitor_opts_t *opts)
{
    /* version 1 ends at set_environment; later fields are read only when `size` covers them */
    if (!opts || opts->size < offsetof(js_monitor_opts_t, set_environment) + sizeof(opts->set_environment))
        return -EINVAL;
    double iv = opts->interval_s > 0 ? opts->interval_s : 1.0;
    if (!(iv >= 0.01 && iv <= 3600))
        return -EINVAL;
    pid_t target = opts->size >= offsetof(js_monitor_opts_t, pid) + sizeof(opts->pid) ? opts->pid : 0;
    if (target < 0)
        return -EINVAL;
    if (target == getpid())
        target = 0;
    pthread_mutex_lock(&em.api);
    if (!em.atfork_set && pthread_atfork(NULL, NULL, after_fork_child) == 0)
        em.atfork_set = true;
    if (em.running) {
        pthread_mutex_unlock(&em.api);
        return -EBUSY;
    }
    int r;
    char err[1024];
    memset(&em.mon, 0, sizeof(em.mon));
    em.mon.wake_fd = -1;
    em.mon.ctx.root.proc = em.mon.ctx.root.sys = -1;
    pthread_mutex_lock(&em.mu);
    em.done = false;
    em.loop_rc = 0;
    em.last_t = em.summary_after = em.summary_t = 0;
    em.have_summary = false;
    em.summary.len = 0;
    pthread_mutex_unlock(&em.mu);
    em.have_output = opts->output != NULL;
    if (em.have_output && snprintf(em.output, sizeof(em.output), "%s", opts->output) >= (int)sizeof(em.output)) {
        r = -ENAMETOOLONG;
        goto fail;
    }
    em.target = target;
    if ((r = fsroot_open(&em.mon.ctx.root, NULL, NULL)) < 0)
        goto fail;
    if (target) {
        char path[32];
        snprintf(path, sizeof(path), "%d/stat", (int)target);
        if (faccessat(em.mon.ctx.root.proc, path, F_OK, 0) < 0) {
            r = -ESRCH;
            goto fail;
        }
    }
    hostinfo_read(&em.mon.ctx.root, target, &em.hi); /* the root's affinity: its cores */
    int64_t start_ticks = self_facts(&em.mon.ctx.root, target ? target : getpid());
    if (em.have_output && (r = recorder_open(em.output, opts->overwrite != 0, &em.rec, err, sizeof(err))) < 0)
        goto fail;
    em.mon.ctx.mode = JS_MODE_ATTACH;
    em.mon.ctx.scope.kind = JS_SCOPE_TREE;
    /* own tree: nothing to skip (the monitor is a thread of the root); attached: this process is no member */
    em.mon.ctx.monitor_pid = target ? getpid() : 0;
    em.mon.ctx.root_pid = target ? target : getpid();
    em.mon.ctx.embedded = true;
    em.mon.ctx.uss_every = opts->uss_every ? opts->uss_every : 30;
    em.mon.ctx.uss_interval_ns = opts->uss_every ? 0 : 30000000000LL; /* unset: every 30 s per process */
    em.mon.ctx.status_every = 5;
    em.mon.interval_ns =
        (int64_t)(iv * 1e9 + 0.5); /* every sample committed: the host reads the recording live */
    em.mon.embedded = true;
    if ((em.mon.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
        r = -errno;
        goto fail;
    }
    if (marks_open(&em.marks) == 0)
        em.mon.marks = em.marks; /* without it the run is monitored, and marks go nowhere */
    if ((r = monitor_prepare(&em.mon)) < 0 ||
        (em.rec && (r = monitor_add_sink(&em.mon, &sink_recording, em.rec)) < 0) ||
        (r = monitor_add_sink(&em.mon, &sink_embed, NULL)) < 0)
        goto fail;
    em.mon.start_mono_ns = clock_ns(CLOCK_MONOTONIC);
    em.mon.start_unix_ns = clock_ns(CLOCK_REALTIME);
    js_model_cfg_t cfg = {
        .mode = JS_MODE_ATTACH,
        .embedded = !target,
        .clk_tck = em.hi.clk_tck,
        .monitor_pid = getpid(),
        .root_pid = em.mon.ctx.root_pid,
        .interval_ns = em.mon.interval_ns,
        .start_mono_ns = em.mon.start_mono_ns,
        .cores_available = em.hi.cores_available,
    };
    if (!(em.model = model_new(&cfg))) {
        r = -ENOMEM;
        goto fail;
    }
    em.mon.model = em.model;
    write_start_meta(opts, start_ticks);
    if (em.marks) {
        if (opts->set_environment)
            set_env(marks_address(em.marks));
        client_point(marks_address(em.marks));
    }
    /* the thread starts with every signal blocked: none of the host's signals is ever delivered to it */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    r = -pthread_create(&em.thread, NULL, monitor_thread, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (r < 0)
        goto fail;
    pthread_mutex_lock(&em.mu);
    while (!em.last_t && !em.done)
        pthread_cond_wait(&em.cv, &em.mu);
    /* attached, the scope may be over at the first sample already: monitored, not failed */
    bool failed = em.done && (em.loop_rc < 0 || !em.last_t);
    r = em.loop_rc;
    pthread_mutex_unlock(&em.mu);
    if (failed) {
        pthread_join(em.thread, NULL);
        goto fail;
    }
    em.running = true;
    pthread_mutex_unlock(&em.api);
    return 0;
fail:
    if (em.rec) { /* nothing was monitored: the recording just made goes again */
        recorder_close(em.rec);
        em.rec = NULL;
        unlink(em.output);
    }
    teardown();
    pthread_mutex_unlock(&em.api);
    return r < 0 ? r : -EIO;
}

/* wait_sample: ask for an off-schedule sample (with the summary when `summary`) and wait for one taken after
 * the request. Called with em.api held and the monitor running. */
static void wait_sample(bool summary)
{
    int64_t t = clock_ns(CLOCK_MONOTONIC);
    pthread_mutex_lock(&em.mu);
    if (summary)
        em.summary_after = t;
    pthread_mutex_unlock(&em.mu);
    monitor_request(&em.mon, MONITOR_REQ_SAMPLE);
    pthread_mutex_lock(&em.mu);
    while (!em.done && (summary ? em.summary_t < t : em.last_t < t))
        pthread_cond_wait(&em.cv, &em.mu);
    pthread_mutex_unlock(&em.mu);
}

JS_API int js_monitor_sample(void)
{
    pthread_mutex_lock(&em.api);
    int r = -ESRCH;
    if (em.running) {
        wait_sample(false);
        r = 0;
    }
    pthread_mutex_unlock(&em.api);
    return r;
}

JS_API int js_monitor_stop(void)
{
    pthread_mutex_lock(&em.api);
    if (!em.running) {
        pthread_mutex_unlock(&em.api);
        return -ESRCH;
    }
    monitor_request(&em.mon, MONITOR_REQ_STOP);
    pthread_join(em.thread, NULL);
    em.running = false;
    int r = em.loop_rc < 0 ? em.loop_rc : em.mon.write_rc;
    write_stop_meta();
    teardown();
    pthread_mutex_unlock(&em.api);
    return r;
}

JS_API char *js_monitor_summary(void)
{
    pthread_mutex_lock(&em.api);
    if (em.running)
        wait_sample(true);
    char *s = NULL;
    pthread_mutex_lock(&em.mu);
    if (em.have_summary && !(s = strdup(em.summary.p)))
        errno = ENOMEM;
    else if (!em.have_summary)
        errno = ESRCH;
    pthread_mutex_unlock(&em.mu);
    pthread_mutex_unlock(&em.api);
    return s;
}

JS_API const char *js_monitor_address(void)
{
    static char addr[128];
    pthread_mutex_lock(&em.api);
    const char *r = NULL;
    if (em.running && em.marks) {
        snprintf(addr, sizeof(addr), "%s", marks_address(em.marks));
        r = addr;
    }
    pthread_mutex_unlock(&em.api);
    return r;
}

JS_API void js_free(void *p)
{
    free(p);
}

JS_API const char *js_version(void)
{
    return JOBSCOPE_VERSION;
}
