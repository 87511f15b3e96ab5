/* SPDX-License-Identifier: MIT
 *
 * The embedded monitor (include/jobscope.h: js_monitor_start, js_monitor_sample, js_monitor_stop,
 * js_monitor_summary): jobscope's monitor loop in attach mode over the calling process's own tree, run on a
 * thread of that process in the loop's embedded mode (engine/monitor.h): no signalfd, no reaping, no signal
 * taken from the host. The thread blocks every signal, so process-directed signals go to the host's threads
 * as before. Children the host waits for are counted through its own cutime (exact for those); a child
 * orphaned away from the tree is counted up to its last sample, as in attach mode. The monitor thread's own
 * CPU, I/O, thread and descriptors are recorded (self table) and taken off the host's by the model
 * (cfg.embedded). The descriptors share the host's table (SQLite keeps per-process state of every open
 * database file, which a table of the monitor's own would make point at descriptors the host's threads do
 * not have: a host that reads the recording while it is written would then wait or worse), so the self table
 * counts the embedding's descriptors there (host_fds: those on the kept /proc and /sys files, the recording,
 * the monitor's timers, pidfds, perf and BPF descriptors, its mark sockets and the host's own mark
 * connection) and the model takes them off the host's count. Everything that holds a descriptor is made and
 * closed on the monitor thread, close-on-exec.
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
 *
 * Levels (JS_LEVEL_*, resolve_levels): the caller's user (scope USER, its real UID) and its SLURM job on this
 * node (the job's cgroup when jobs_cgroup_find finds one, else its slurmstepd tasks, as `jobscope job`
 * resolves a job) are resolved here into the context's levels, which the `levels` source reads and the
 * `levels` model part models; the monitor's summary and recording then carry them.
 */
#include "api/api.h"
#include "config.h"

#include "core/batchenv.h"
#include "core/hostinfo.h"
#include "core/jobs.h"
#include "core/json.h"
#include "core/marks.h"
#include "engine/monitor.h"
#include "engine/sampler.h"
#include "model/model.h"
#include "model/summary.h"
#include "sinks/recording.h"
#include "sinks/tabsink.h"
#include "sources/proc_tree.h"
#include "sys/cgroupfs.h"
#include "sys/fsroot.h"
#include "sys/parse.h"
#include "sources/registry.h"
#include "core/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
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
    js_monitor_opts_t opts; /* what js_monitor_start was given (output: em.output), for the monitor thread */
    char output_abs[PATH_MAX]; /* the recording's absolute path (host_fds), "" when none */
    int fds_cached;            /* host_fds: the last count, -1 none */
    int64_t fds_total;         /* and the table's size it was made at */
    int write_rc;              /* the recording's first failure, kept past the thread */
    bool env_set, env_had;
    char *env_saved;
    pid_t target;             /* opts->pid: the attached process, 0 for this process */
    unsigned levels;          /* opts->levels (0 for a version-1 caller) */
    const char *level_job_id; /* opts->job_id, the caller's until js_monitor_start returns */
    /* levels (resolve_levels): what the context's level scopes point to */
    char level_what[JS_LV_MAX][1024];
    char job_id[64], job_node[256], job_cgroup[512];
    js_cgroup_t *job_cg;
    /* shared with the monitor thread (mu) */
    bool done;
    bool set_up; /* the monitor thread made everything (or failed: loop_rc) */
    int loop_rc;
    int64_t last_t;        /* t_mono_ns of the last committed sample, 0 before the first */
    int64_t summary_after; /* build the summary at the first sample taken at or after this; 0: not wanted */
    int64_t summary_t;     /* t_mono_ns of the sample the summary describes */
    js_buf_t summary;      /* the last summary built (kept after stop until the next start) */
    bool have_summary;
} embed_t;

static embed_t em = {
    .api = PTHREAD_MUTEX_INITIALIZER, .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* after_fork_child: the monitor thread does not exist in a forked child, and nothing of its run belongs to
 * the child. Every object of the parent's run is forgotten, never used or closed through the API: the
 * recorder (SQLite must not be used across fork: a write, a checkpoint or a close from the child would
 * corrupt or lock the parent's recording, and write the child's PID into its metadata), the model, the
 * summary. The copies of the marks socket's descriptors are closed so the socket goes when its owner closes
 * it. Other descriptor copies (procfs roots, sources' counters) stay open until the child exits or execs
 * (they are close-on-exec). A Tracker started in the child then works on its own: its own thread,
 * recorder and socket. The memory copies are not freed: the monitor thread may have been changing them. */
static void after_fork_child(void)
{
    pthread_mutex_init(&em.api, NULL);
    pthread_mutex_init(&em.mu, NULL);
    pthread_cond_init(&em.cv, NULL);
    if (em.running)
        marks_drop_inherited(em.marks);
    em.running = false;
    em.rec = NULL;
    em.marks = NULL;
    em.model = NULL;
    em.have_summary = false;
    em.summary = (js_buf_t){0};
    em.env_set = false;
    em.env_saved = NULL;
}

/* ---- the sink: notifications and summaries, on the monitor thread ---------------------------------------
 */

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
    meta_i64("uss_interval_ns", em.mon.ctx.uss_interval_ns);
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
        if (sampler_init_reason(&em.mon.sampler, i)) {
            char key[96];
            snprintf(key, sizeof(key), "source_error.%s", js_sources[i]->name);
            meta_str(key, sampler_init_reason(&em.mon.sampler, i));
        }
    (void)o;
}

static void write_stop_meta(void)
{
    char buf[40];
    meta_i64("stop_mono_ns", em.mon.stop_mono_ns ? em.mon.stop_mono_ns : now_ns(CLOCK_MONOTONIC));
    meta_i64("samples_taken", em.mon.taken);
    meta_i64("samples_missed", em.mon.missed);
    if (em.model) {
        js_summary_t su;
        model_summary(em.model, &su);
        meta_str("monitor_cpu_s", fmt_real(buf, sizeof(buf), su.mon_cpu_s));
        meta_str("monitor_mean_sample_cost_s", fmt_real(buf, sizeof(buf), su.mon_mean_cost_s));
    }
    /* last: its presence says the recording is complete */
    meta_i64("stop_unix_ns", em.mon.stop_unix_ns ? em.mon.stop_unix_ns : now_ns(CLOCK_REALTIME));
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

/* monitor_target: whether a descriptor whose link reads `t` is one the monitor made: a kept /proc or /sys
 * file or directory, the recording (and its WAL, shared-memory and journal files), a timer, pidfd, perf
 * counter or BPF object (the embedded monitor takes no signalfd). */
static bool monitor_target(const char *t)
{
    static const char *const anon[] = {"anon_inode:[timerfd]", "anon_inode:[pidfd]",
                                       "anon_inode:[perf_event]", "anon_inode:bpf"};
    if (fsroot_kernel_path(t))
        return true;
    for (size_t i = 0; i < sizeof(anon) / sizeof(anon[0]); i++)
        if (!strncmp(t, anon[i], strlen(anon[i])))
            return true;
    size_t n = strlen(em.output_abs);
    return n && !strncmp(t, em.output_abs, n) &&
           (!t[n] || !strcmp(t + n, "-wal") || !strcmp(t + n, "-shm") || !strcmp(t + n, "-journal"));
}

/* host_fds: the embedding's descriptors in the host's table (ctx.host_fds, called on the monitor thread right
 * after proc_tree counted `total` descriptors in the table): those whose link monitor_target recognises, the
 * wake-up eventfd, the mark sockets and the host's own mark connection. Listed again when the total changed
 * since the last call (a table of the same size is taken to hold the same descriptors), else the last
 * count; -1 when the listing cannot be read. */
static int host_fds(int64_t total)
{
    int *cached = &em.fds_cached;
    if (*cached >= 0 && total == em.fds_total)
        return *cached;
    em.fds_total = total;
    char path[32];
    snprintf(path, sizeof(path), "%d/fd", (int)getpid());
    DIR *d;
    if (fs_opendir(em.mon.ctx.root.proc, path, &d) < 0)
        return *cached = -1;
    int own = 0, self = dirfd(d);
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        int fd = atoi(de->d_name);
        char link[PATH_MAX];
        ssize_t n = fd == self ? -1 : readlinkat(self, de->d_name, link, sizeof(link) - 1);
        if (n <= 0)
            continue;
        link[n] = '\0';
        own += fd == em.mon.wake_fd || monitor_target(link);
    }
    closedir(d);
    own += (int)marks_fd_count(em.marks) + (client_has_socket() ? 1 : 0);
    return *cached = own;
}

/* teardown: release everything the monitor thread made (on that thread: the descriptors are in its table);
 * the summary stays. */
static void teardown(void)
{
    monitor_finish(&em.mon);
    recorder_close(em.rec);
    em.rec = NULL;
    marks_close(em.marks);
    em.marks = NULL;
    fsroot_close(&em.mon.ctx.root);
    model_free(em.model);
    em.model = NULL;
    free(em.mon.ctx.reaped);
    cgroupfs_free(em.job_cg);
    em.job_cg = NULL;
    int wake = em.mon.wake_fd;
    em.write_rc = em.mon.write_rc;
    memset(&em.mon, 0, sizeof(em.mon));
    em.mon.wake_fd = wake;
}

static int resolve_levels(unsigned levels, const char *job_id);

/* set_up: everything that holds a descriptor, made on the monitor thread. Returns 0 or -errno. */
static int set_up(void)
{
    const js_monitor_opts_t *o = &em.opts;
    char err[1024];
    int r;
    pid_t target = em.target;
    em.mon.ctx.root.proc = em.mon.ctx.root.sys = -1;
    long pid_there;
    if ((r = fsroot_open(&em.mon.ctx.root, NULL, NULL)) < 0 ||
        (r = fsroot_pidns_check(&em.mon.ctx.root, &pid_there)) < 0)
        return r; /* -EXDEV: /proc is another PID namespace's, where this process's tree is not what it sees
                   */
    if (target) {
        char path[32];
        snprintf(path, sizeof(path), "%d/stat", (int)target);
        if (faccessat(em.mon.ctx.root.proc, path, F_OK, 0) < 0)
            return -ESRCH;
    }
    hostinfo_read(&em.mon.ctx.root, target, &em.hi); /* the root's affinity: its cores */
    int64_t start_ticks = self_facts(&em.mon.ctx.root, target ? target : getpid());
    if (em.have_output && (r = recorder_open(em.output, o->overwrite != 0, &em.rec, err, sizeof(err))) < 0)
        return r;
    if (!em.have_output || !realpath(em.output, em.output_abs)) /* as /proc/self/fd shows it (host_fds) */
        em.output_abs[0] = '\0';
    em.mon.ctx.mode = JS_MODE_ATTACH;
    em.mon.ctx.scope.kind = JS_SCOPE_TREE;
    /* own tree: nothing to skip (the monitor is a thread of the root); attached: this process is no member */
    em.mon.ctx.monitor_pid = target ? getpid() : 0;
    em.mon.ctx.root_pid = target ? target : getpid();
    em.mon.ctx.embedded = true;
    em.mon.ctx.host_fds = target ? NULL : host_fds; /* attached: the host's table is not the root's */
    em.mon.ctx.host_fds_now = em.fds_cached = -1;
    em.fds_total = -1;
    em.mon.ctx.uss_every = o->uss_every ? o->uss_every : 30;
    em.mon.ctx.uss_interval_ns = o->uss_every ? 0 : 30000000000LL; /* unset: every 30 s */
    em.mon.ctx.status_every = 5;
    em.mon.embedded = true;
    if ((r = resolve_levels(em.levels, em.level_job_id)) < 0)
        return r;
    if (marks_open(&em.marks) == 0)
        em.mon.marks = em.marks; /* without it the run is monitored, and marks go nowhere */
    if ((r = monitor_prepare(&em.mon)) < 0 ||
        (em.rec && (r = monitor_add_sink(&em.mon, &sink_recording, em.rec)) < 0) ||
        (r = monitor_add_sink(&em.mon, &sink_embed, NULL)) < 0)
        return r;
    em.mon.start_mono_ns = now_ns(CLOCK_MONOTONIC);
    em.mon.start_unix_ns = now_ns(CLOCK_REALTIME);
    js_model_cfg_t cfg = {
        .mode = JS_MODE_ATTACH,
        .embedded = !target, /* attached: the monitor thread is not in the root's figures */
        .clk_tck = em.hi.clk_tck,
        .monitor_pid = getpid(),
        .root_pid = em.mon.ctx.root_pid,
        .interval_ns = em.mon.interval_ns,
        .start_mono_ns = em.mon.start_mono_ns,
        .cores_available = em.hi.cores_available,
    };
    if (!(em.model = model_new(&cfg)))
        return -ENOMEM;
    em.mon.model = em.model;
    write_start_meta(o, start_ticks);
    return 0;
}

static void *monitor_thread(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "jobscope-mon");
    int r = set_up();
    pthread_mutex_lock(&em.mu);
    em.set_up = true;
    em.loop_rc = r;
    pthread_cond_broadcast(&em.cv);
    pthread_mutex_unlock(&em.mu);
    if (r == 0)
        r = monitor_loop(&em.mon);
    if (em.model && r >= 0)
        write_stop_meta();
    if (r < 0 && em.rec && !em.mon.taken) { /* nothing was monitored: the recording just made goes again */
        recorder_close(em.rec);
        em.rec = NULL;
        unlink(em.output);
    }
    teardown();
    pthread_mutex_lock(&em.mu);
    em.loop_rc = r;
    em.done = true;
    pthread_cond_broadcast(&em.cv);
    pthread_mutex_unlock(&em.mu);
    return NULL;
}

extern char **environ;

/* resolve_levels: the levels asked for (JS_LEVEL_* in `levels`) into em.mon.ctx.levels. The job level needs
 * `job_id` or $SLURM_JOB_ID. Returns 0, -EINVAL (an unknown bit, a malformed job id or environment) or
 * -ENOENT (the job level outside a SLURM job). */
static int resolve_levels(unsigned levels, const char *job_id)
{
    js_ctx_t *ctx = &em.mon.ctx;
    if (levels & ~(JS_LEVEL_USER | JS_LEVEL_JOB))
        return -EINVAL;
    if (levels & JS_LEVEL_USER) {
        js_level_scope_t *l = &ctx->levels[JS_LV_USER];
        l->on = true;
        l->scope.kind = JS_SCOPE_USER;
        l->scope.uid = getuid();
        l->monitor_inside = true;
        snprintf(em.level_what[JS_LV_USER], sizeof(em.level_what[0]), "uid %u: every process of the user",
                 (unsigned)getuid());
        l->what = em.level_what[JS_LV_USER];
    }
    if (!(levels & JS_LEVEL_JOB))
        return 0;
    char host[256] = "", why[512] = "";
    if (gethostname(host, sizeof(host) - 1) < 0)
        host[0] = '\0';
    js_batch_job_t b;
    int r = batchenv_parse(environ, host, &b, why, sizeof(why));
    bool env_job = r == 0 && b.kind == JS_BATCH_SLURM;
    if (!job_id && !env_job)
        return r == -EINVAL ? -EINVAL : -ENOENT;
    if (job_id && (!batch_safe_name(job_id) || strlen(job_id) >= sizeof(em.job_id)))
        return -EINVAL;
    snprintf(em.job_id, sizeof(em.job_id), "%s", job_id ? job_id : b.job);
    js_level_scope_t *l = &ctx->levels[JS_LV_JOB];
    l->monitor_inside = env_job && !strcmp(b.job, em.job_id);
    snprintf(em.job_node, sizeof(em.job_node), "%s", env_job && b.node[0] ? b.node : host[0] ? host : "node");
    uid_t uid = getuid() == 0 ? (uid_t)-1 : getuid();
    l->on = true;
    if (jobs_cgroup_find(&ctx->root, em.job_id, NULL, em.job_node, uid, em.job_cgroup,
                         sizeof(em.job_cgroup)) == 0 &&
        cgroupfs_open_path(&ctx->root, em.job_cgroup, &em.job_cg, why, sizeof(why)) == 0) {
        l->scope.kind = JS_SCOPE_CGROUP;
        l->scope.cgroup = em.job_cg;
        l->scope.cgroup_whole = true;
        snprintf(em.level_what[JS_LV_JOB], sizeof(em.level_what[0]), "SLURM job %s on %s: cgroup %s",
                 em.job_id, em.job_node, em.job_cgroup);
    } else {
        l->scope.kind = JS_SCOPE_TREE;
        l->scope.stepd_job = em.job_id;
        l->scope.stepd_node = em.job_node;
        snprintf(em.level_what[JS_LV_JOB], sizeof(em.level_what[0]),
                 "SLURM job %s on %s: the tasks of its slurmstepd processes", em.job_id, em.job_node);
    }
    l->what = em.level_what[JS_LV_JOB];
    return 0;
}

/* the size of version 1 of js_monitor_opts_t (up to set_environment) */
#define OPTS_V1_SIZE (offsetof(js_monitor_opts_t, set_environment) + sizeof(int))

JS_API int js_monitor_start(const js_monitor_opts_t *opts)
{
    if (!opts || opts->size < OPTS_V1_SIZE)
        return -EINVAL;
    bool v2 = opts->size >= offsetof(js_monitor_opts_t, job_id) + sizeof(const char *);
    unsigned levels = v2 ? opts->levels : 0;
    const char *job_id = v2 ? opts->job_id : NULL;
    if (levels & ~(JS_LEVEL_USER | JS_LEVEL_JOB))
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
    memset(&em.mon, 0, sizeof(em.mon));
    em.mon.wake_fd = -1;
    em.mon.ctx.root.proc = em.mon.ctx.root.sys = -1;
    memset(&em.opts, 0, sizeof(em.opts)); /* a version-1 caller's struct is shorter: copy what it has */
    memcpy(&em.opts, opts, opts->size < sizeof(em.opts) ? opts->size : sizeof(em.opts));
    em.opts.size = sizeof(em.opts);
    em.opts.output = NULL;
    em.target = target;
    em.levels = levels;
    em.level_job_id = job_id;
    pthread_mutex_lock(&em.mu);
    em.done = em.set_up = false;
    em.loop_rc = 0;
    em.last_t = em.summary_after = em.summary_t = 0;
    em.have_summary = false;
    em.summary.len = 0;
    pthread_mutex_unlock(&em.mu);
    em.have_output = opts->output != NULL;
    if (em.have_output &&
        snprintf(em.output, sizeof(em.output), "%s", opts->output) >= (int)sizeof(em.output)) {
        r = -ENAMETOOLONG;
        goto fail;
    }
    em.mon.interval_ns = (int64_t)(iv * 1e9 + 0.5); /* every sample committed: the host reads it live */
    /* the one descriptor host and monitor share: requests from the host's threads wake the loop */
    if ((em.mon.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
        r = -errno;
        goto fail;
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
    while (!em.set_up)
        pthread_cond_wait(&em.cv, &em.mu);
    bool ok = em.loop_rc == 0;
    pthread_mutex_unlock(&em.mu);
    if (ok && em.marks) { /* this process's marks (and its children's, with set_environment) go to it */
        if (opts->set_environment)
            set_env(marks_address(em.marks));
        client_point(marks_address(em.marks));
    }
    pthread_mutex_lock(&em.mu);
    while (!em.last_t && !em.done)
        pthread_cond_wait(&em.cv, &em.mu);
    /* attached, the scope may be over at the first sample already: monitored, not failed */
    bool failed = em.done && (em.loop_rc < 0 || !em.last_t);
    r = em.loop_rc;
    pthread_mutex_unlock(&em.mu);
    if (failed) {
        pthread_join(em.thread, NULL);
        restore_env();
        client_point(NULL);
        goto fail;
    }
    em.running = true;
    pthread_mutex_unlock(&em.api);
    return 0;
fail:
    if (em.mon.wake_fd >= 0)
        close(em.mon.wake_fd);
    em.mon.wake_fd = -1;
    pthread_mutex_unlock(&em.api);
    return r < 0 ? r : -EIO;
}

/* wait_sample: ask for an off-schedule sample (with the summary when `summary`) and wait for one taken after
 * the request. Called with em.api held and the monitor running. */
static void wait_sample(bool summary)
{
    int64_t t = now_ns(CLOCK_MONOTONIC);
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
    pthread_join(em.thread, NULL); /* the thread wrote the closing metadata and closed its files */
    em.running = false;
    int r = em.loop_rc < 0 ? em.loop_rc : em.write_rc;
    restore_env();
    client_point(NULL); /* this process's marks follow the environment again (an outer monitor, or none) */
    close(em.mon.wake_fd);
    em.mon.wake_fd = -1;
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

/* At exit (or unload) with a monitor still running (its host never called js_monitor_stop): its mark socket's
 * directory goes, as at a stop; the thread itself ends with the process. */
__attribute__((destructor)) static void embed_at_exit(void)
{
    if (em.running)
        marks_unlink(em.marks);
}

JS_API void js_free(void *p)
{
    free(p);
}

JS_API const char *js_version(void)
{
    return JOBSCOPE_VERSION;
}
