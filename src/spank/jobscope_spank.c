/* SPDX-License-Identifier: MIT
 *
 * jobscope_spank: a SLURM SPANK plugin that runs one `jobscope job` monitor per step and node.
 *
 * It registers `--jobscope[=OPTIONS]` for srun, sbatch and salloc. In slurmstepd (remote context), for a step
 * started with that option, slurm_spank_user_init (once per step and node, before any task is forked) builds
 * the monitor's argv and environment, then forks twice: the first child drops to the job's user for good
 * (setgroups, setresgid, setresuid) and forks the monitor, which starts its own session, closes slurmstepd's
 * descriptors, creates the output folder as the user and execs the jobscope binary; the first child exits at
 * once, so the monitor is re-parented away from slurmstepd: no task and no proctrack container waits for it
 * or counts it as the step's. A pipe reports the monitor's pid and any failure before or at exec back to
 * slurmstepd, which keeps a pidfd and waits (up to 2 s) until the monitor catches or blocks SIGTERM, so it is
 * ready before the tasks start. slurm_spank_exit (the step's end, after its tasks) sends SIGTERM and waits up
 * to stop_timeout for the closing sample, then SIGKILL. Everything is logged through SLURM's log functions,
 * and every hook returns success: the plugin never fails a job (install it as `optional`).
 *
 *     optional /usr/lib/x86_64-linux-gnu/jobscope/jobscope_spank.so bin=/usr/bin/jobscope dir=/scratch/%u/mon
 *
 * No shell, no system(): fork and execve with an explicit argv and environment (spank_config.c builds them).
 */
#include "spank/spank_config.h"
#include "sys/fsfile.h"
#include "sys/fsroot.h"
#include "core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

SPANK_PLUGIN(jobscope, 1)

_Static_assert(JS_SPANK_STEP_BATCH == SLURM_BATCH_SCRIPT, "batch step id");
_Static_assert(JS_SPANK_STEP_EXTERN == SLURM_EXTERN_CONT, "extern step id");
_Static_assert(JS_SPANK_STEP_INTERACTIVE == SLURM_INTERACTIVE_STEP, "interactive step id");
_Static_assert(JS_SPANK_STEP_PENDING == SLURM_PENDING_STEP, "pending step id");

#ifndef JOBSCOPE_DEFAULT_BIN
#define JOBSCOPE_DEFAULT_BIN "/usr/bin/jobscope"
#endif

#define MAX_GROUPS 1024
#define START_TIMEOUT_NS 2000000000LL /* the longest a step's start waits for its monitor to be ready */

static js_spank_config_t config; /* plugstack defaults, then the user's options */
static char admin_errors[1024];  /* plugstack.conf problems, logged when the option is used */
static int admin_bad;
static int option_given;       /* --jobscope was given to this step (or job) */
static char option_text[2048]; /* its argument, "" for none */

/* the monitor of this step on this node (slurmstepd only) */
static pid_t monitor_pid = -1;
static int monitor_pidfd = -1;
static char monitor_step[32];
static char monitor_marker[JS_SPANK_PATH_MAX + 300]; /* its node's completion marker, "" if unknown */
static uint32_t monitor_job;

/* what the forked children need, prepared before the fork (they call async-signal-safe functions only) */
static js_spank_launch_t launch;
static gid_t launch_groups[MAX_GROUPS];
static int launch_ngroups;

static int option_cb(int val, const char *optarg, int remote)
{
    (void)val;
    (void)remote;
    option_given = 1;
    snprintf(option_text, sizeof(option_text), "%s", optarg ? optarg : "");
    return 0; /* never refuse: a bad option is reported and skipped, the job runs */
}

static struct spank_option jobscope_option = {
    .name = "jobscope",
    .arginfo = "[OPTIONS]",
    .usage = "monitor this job's steps with jobscope, one recording per node "
             "(OPTIONS: interval=S,dir=DIR,log=FILE,report,batch; DIR may use %j %s %n %u)",
    .has_arg = 2,
    .val = 0,
    .cb = option_cb,
};

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    spank_context_t ctx = spank_context();
    if (ctx != S_CTX_LOCAL && ctx != S_CTX_REMOTE && ctx != S_CTX_ALLOCATOR)
        return 0;
    spank_config_defaults(&config, JOBSCOPE_DEFAULT_BIN);
    admin_errors[0] = '\0';
    admin_bad = 0;
    for (int i = 0; i < ac; i++) {
        char one[512];
        if (spank_config_apply(&config, av[i], 1, one, sizeof(one)) < 0) {
            size_t used = strlen(admin_errors);
            snprintf(admin_errors + used, sizeof(admin_errors) - used, "%s%s", admin_bad ? "; " : "", one);
            admin_bad++;
        }
    }
    if (spank_option_register(sp, &jobscope_option) != ESPANK_SUCCESS)
        slurm_error("jobscope: cannot register --jobscope; monitoring is off");
    return 0;
}

/* Apply the user's options on top of plugstack.conf's; log every problem (the item is skipped). srun,
 * sbatch and salloc say it on the user's terminal (`loud`); slurmstepd only in its log, since an error there
 * would reach the user once more from every node. */
static void apply_user_options(int loud)
{
    void (*say)(const char *, ...) = loud ? slurm_error : slurm_info;
    if (admin_bad)
        say("jobscope: plugstack.conf: %s (ignored)", admin_errors);
    char err[1024];
    if (spank_config_options(&config, option_text, 0, err, sizeof(err)) > 0)
        say("jobscope: --jobscope=%s: %s (ignored)", option_text, err);
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
    (void)sp;
    (void)ac;
    (void)av;
    /* srun, sbatch and salloc: the user sees problems with the options at once, on stderr */
    spank_context_t ctx = spank_context();
    if (option_given && (ctx == S_CTX_LOCAL || ctx == S_CTX_ALLOCATOR))
        apply_user_options(1);
    return 0;
}

/* A record on the report pipe from the forked children to slurmstepd. */
enum { REPORT_PID = 1, REPORT_ERROR = 2 };
enum { STAGE_GROUPS = 1, STAGE_GID, STAGE_UID, STAGE_FORK, STAGE_SESSION, STAGE_DIR, STAGE_LOG, STAGE_EXEC };
typedef struct {
    int kind;
    int stage;
    int err;
    pid_t pid;
} report_t;

static const char *stage_name(int stage)
{
    switch (stage) {
    case STAGE_GROUPS:
        return "setgroups";
    case STAGE_GID:
        return "setresgid";
    case STAGE_UID:
        return "setresuid";
    case STAGE_FORK:
        return "fork";
    case STAGE_SESSION:
        return "setsid";
    case STAGE_DIR:
        return "creating the output folder";
    case STAGE_LOG:
        return "opening the log file";
    case STAGE_EXEC:
        return "exec";
    }
    return "?";
}

static void child_report(int fd, int kind, int stage, int err, pid_t pid)
{
    report_t r = {.kind = kind, .stage = stage, .err = err, .pid = pid};
    ssize_t w;
    do
        w = write(fd, &r, sizeof(r));
    while (w < 0 && errno == EINTR);
}

/* mkdir -p as the user (the folder's parents may already exist; mode 0755 less the umask). */
static int child_mkdirs(char *path)
{
    for (char *p = path + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char saved = *p;
            *p = '\0';
            int r = mkdir(path, 0755);
            int e = errno;
            *p = saved;
            if (r < 0 && e != EEXIST)
                return e;
            if (saved == '\0')
                return 0;
        }
    }
}

/* The monitor process, after the second fork: detach, set up stdio, exec. Never returns. */
static void monitor_child(int fd)
{
    if (setsid() < 0) {
        child_report(fd, REPORT_ERROR, STAGE_SESSION, errno, 0);
        _exit(127);
    }
    /* slurmstepd's signal mask and ignored signals would survive exec */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            sigaction(sig, &dfl, NULL);
    int e = child_mkdirs(launch.dir);
    if (e) {
        child_report(fd, REPORT_ERROR, STAGE_DIR, e, 0);
        _exit(127);
    }
    /* the monitor's stdin, and its stdout without a log: /dev/null, a device by design (static.sh allows it)
     */
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int out = launch.log[0] ? fs_create(launch.log, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0644)
                            : open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (out < -1) {
        errno = -out;
        out = -1;
    }
    if (in < 0 || out < 0) {
        child_report(fd, REPORT_ERROR, STAGE_LOG, errno, 0);
        _exit(127);
    }
    /* slurmstepd's descriptors (its sockets, the step's I/O) must not live on in the monitor */
    if (syscall(SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */) < 0) {
        for (int i = 3; i < 65536; i++)
            if (i != fd && i != in && i != out)
                close(i);
    }
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0) {
        child_report(fd, REPORT_ERROR, STAGE_LOG, errno, 0);
        _exit(127);
    }
    if (chdir(launch.dir) < 0 && chdir("/") < 0) {
        /* an exec from any folder still works */
    }
    execve(launch.argv[0], launch.argv, launch.envp);
    child_report(fd, REPORT_ERROR, STAGE_EXEC, errno, 0);
    _exit(127);
}

/* The first child: drop to the job's user for good, fork the monitor, report its pid, exit. Never returns. */
static void dropper_child(int fd, uid_t uid, gid_t gid)
{
    /* user_init runs with privileges dropped only temporarily (the saved uid is root): take them back so
     * that every id can be set; then all of real, effective and saved become the user's */
    if (geteuid() != 0)
        (void)seteuid(0); /* on failure, setresuid below fails unless the ids are the user's already */
    if (geteuid() == 0 && setgroups((size_t)launch_ngroups, launch_groups) < 0) {
        child_report(fd, REPORT_ERROR, STAGE_GROUPS, errno, 0);
        _exit(1);
    }
    if (setresgid(gid, gid, gid) < 0) {
        child_report(fd, REPORT_ERROR, STAGE_GID, errno, 0);
        _exit(1);
    }
    if (setresuid(uid, uid, uid) < 0) {
        child_report(fd, REPORT_ERROR, STAGE_UID, errno, 0);
        _exit(1);
    }
    uid_t ru, eu, su;
    if (getresuid(&ru, &eu, &su) < 0 || ru != uid || eu != uid || su != uid) {
        child_report(fd, REPORT_ERROR, STAGE_UID, EPERM, 0);
        _exit(1);
    }
    pid_t pid = fork();
    if (pid < 0) {
        child_report(fd, REPORT_ERROR, STAGE_FORK, errno, 0);
        _exit(1);
    }
    if (pid == 0)
        monitor_child(fd);
    child_report(fd, REPORT_PID, 0, 0, pid);
    _exit(0);
}

/* Read the children's reports until the pipe closes (the monitor exec'd, or every child exited) or the
 * deadline passes. Sets *ret_pid; returns 0, or the failure's errno with *ret_stage set. */
static int read_reports(int fd, int64_t deadline, pid_t *ret_pid, int *ret_stage)
{
    *ret_pid = -1;
    int failure = 0;
    for (;;) {
        int64_t left = deadline - now_ns(CLOCK_MONOTONIC);
        if (left <= 0) {
            *ret_stage = 0;
            return failure ? failure : ETIMEDOUT;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, (int)(left / 1000000) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue;
        report_t rep;
        ssize_t n = read(fd, &rep, sizeof(rep));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return failure;
        if (n != (ssize_t)sizeof(rep))
            return failure ? failure : EIO;
        if (rep.kind == REPORT_PID) {
            *ret_pid = rep.pid;
        } else if (!failure) {
            failure = rep.err ? rep.err : EIO;
            *ret_stage = rep.stage;
        }
    }
}

/* The job's supplementary groups for the monitor (SLURM's list, else none besides the primary group). */
static void load_groups(spank_t sp, gid_t gid)
{
    gid_t *gids = NULL;
    int n = 0;
    launch_ngroups = 0;
    if (spank_get_item(sp, S_JOB_SUPPLEMENTARY_GIDS, &gids, &n) == ESPANK_SUCCESS && gids) {
        for (int i = 0; i < n && launch_ngroups < MAX_GROUPS; i++)
            launch_groups[launch_ngroups++] = gids[i];
    }
    if (launch_ngroups == 0)
        launch_groups[launch_ngroups++] = gid;
}

/* The step as the plugin knows it: SPANK items, the job's environment, and this slurmstepd. */
static int load_job(spank_t sp, js_spank_job_t *job, char ***ret_env)
{
    memset(job, 0, sizeof(*job));
    gid_t gid = 0;
    if (spank_get_item(sp, S_JOB_ID, &job->job_id) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_STEPID, &job->step_id) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_UID, &job->uid) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS) {
        slurm_error("jobscope: cannot read the job's id, step or user; not monitoring this step");
        return -1;
    }
    load_groups(sp, gid);
    /* the node's SLURM name: the step's environment has SLURM_TOPOLOGY_ADDR, set by slurmd for this node,
     * whose last dot-separated part is the node's name (the whole of it without a topology plugin).
     * SLURMD_NODENAME and SLURM_NODEID are set only for the tasks, after user_init: in the step's environment
     * they are stale copies from the srun's own environment (a batch script's: the first node). The host
     * name is the last resort (it can differ from the SLURM name). */
    char topo[1024];
    if (spank_getenv(sp, "SLURM_TOPOLOGY_ADDR", topo, sizeof(topo)) == ESPANK_SUCCESS && topo[0]) {
        const char *dot = strrchr(topo, '.');
        const char *name = dot ? dot + 1 : topo;
        size_t n = strnlen(name, sizeof(job->node) - 1);
        memcpy(job->node, name, n);
        job->node[n] = '\0';
    } else {
        if (gethostname(job->node, sizeof(job->node)) < 0 || !job->node[0])
            snprintf(job->node, sizeof(job->node), "unknown");
        job->node[sizeof(job->node) - 1] = '\0';
    }
    if (spank_get_item(sp, S_JOB_NODEID, &job->node_id) != ESPANK_SUCCESS)
        job->node_id = UINT32_MAX;
    if (spank_getenv(sp, "SLURM_JOB_USER", job->user, sizeof(job->user)) != ESPANK_SUCCESS) {
        job->user[0] = '\0';
        struct passwd pw, *res = NULL;
        char buf[4096];
        if (getpwuid_r(job->uid, &pw, buf, sizeof(buf), &res) == 0 && res)
            snprintf(job->user, sizeof(job->user), "%s", pw.pw_name);
    }
    if (spank_getenv(sp, "SLURM_SUBMIT_DIR", job->submit_dir, sizeof(job->submit_dir)) != ESPANK_SUCCESS)
        job->submit_dir[0] = '\0';
    job->stepd_pid = getpid();
    *ret_env = NULL;
    if (spank_get_item(sp, S_JOB_ENV, ret_env) != ESPANK_SUCCESS)
        *ret_env = NULL;
    return 0;
}

/* Wait until the monitor has exited or `deadline`; 1 when it has. */
static int wait_gone(int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - now_ns(CLOCK_MONOTONIC);
        if (monitor_pidfd >= 0) {
            struct pollfd p = {.fd = monitor_pidfd, .events = POLLIN};
            int r = poll(&p, 1, left > 0 ? (int)(left / 1000000) + 1 : 0);
            if (r > 0)
                return 1;
            if (r < 0 && errno == EINTR)
                continue;
        } else {
            /* no pidfd (kernel before 5.3): the monitor is gone when it cannot be signalled (a zombie
             * waiting for init to reap it still can be: it then counts as running until the deadline) */
            if (kill(monitor_pid, 0) < 0 && errno == ESRCH)
                return 1;
            if (left > 0) {
                struct timespec ts = {0, 20000000};
                nanosleep(&ts, NULL);
            }
        }
        if (left <= 0)
            return 0;
    }
}

/* Whether the monitor is ready for SIGTERM: it catches it (SigCgt: a handler) or blocks it (SigBlk: it waits
 * for it with sigwait or a signalfd) - a SIGTERM that arrives before either would kill it without its closing
 * sample, as in a step shorter than the monitor's start. 1 ready, 0 not yet, -1 unknown (status unreadable:
 * the monitor is gone, or this is no Linux procfs). */
static int ready_for_sigterm(pid_t pid)
{
    js_fsroot_t root;
    if (fsroot_open(&root, NULL, NULL) < 0)
        return -1;
    char path[32], text[8192];
    snprintf(path, sizeof(path), "%d/status", (int)pid);
    ssize_t n = fs_read_small(root.proc, path, text, sizeof(text));
    fsroot_close(&root);
    if (n < 0)
        return -1;
    int seen = 0, ready = 0;
    for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (!strncmp(line, "SigBlk:", 7) || !strncmp(line, "SigCgt:", 7)) {
            unsigned long long mask = strtoull(line + 7, NULL, 16);
            ready |= (mask >> (SIGTERM - 1)) & 1ULL ? 1 : 0;
            seen++;
        }
    }
    return seen == 2 ? ready : -1;
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (!option_given || spank_context() != S_CTX_REMOTE)
        return 0;
    int64_t t0 = now_ns(CLOCK_MONOTONIC);
    apply_user_options(0);

    js_spank_job_t job;
    char **env = NULL;
    if (load_job(sp, &job, &env) < 0)
        return 0;
    char step[32];
    spank_step_name(job.step_id, step, sizeof(step));
    if (job.step_id == JS_SPANK_STEP_EXTERN || job.step_id == JS_SPANK_STEP_PENDING ||
        (job.step_id == JS_SPANK_STEP_BATCH && !config.batch)) {
        slurm_debug("jobscope: step %u.%s is not monitored", job.job_id, step);
        return 0;
    }
    char err[1024];
    if (spank_launch_build(&launch, &config, &job, env, err, sizeof(err)) < 0) {
        slurm_error("jobscope: step %u.%s on %s not monitored: %s", job.job_id, step, job.node, err);
        return 0;
    }
    gid_t gid = 0;
    spank_get_item(sp, S_JOB_GID, &gid);

    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0) {
        slurm_error("jobscope: step %u.%s on %s not monitored: pipe: %s", job.job_id, step, job.node,
                    strerror(errno));
        return 0;
    }
    pid_t first = fork();
    if (first < 0) {
        slurm_error("jobscope: step %u.%s on %s not monitored: fork: %s", job.job_id, step, job.node,
                    strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return 0;
    }
    if (first == 0) {
        close(fds[0]);
        dropper_child(fds[1], job.uid, gid);
    }
    close(fds[1]);
    pid_t pid = -1;
    int stage = 0;
    int e = read_reports(fds[0], now_ns(CLOCK_MONOTONIC) + 10000000000LL, &pid, &stage);
    close(fds[0]);
    int status;
    while (waitpid(first, &status, 0) < 0 && errno == EINTR)
        ;
    if (e) {
        slurm_error("jobscope: step %u.%s on %s not monitored: %s%s%s (monitor %s)", job.job_id, step,
                    job.node, stage ? stage_name(stage) : "waiting for the monitor to start", ": ",
                    strerror(e), launch.argv[0]);
        return 0;
    }
    if (pid <= 0) {
        slurm_error("jobscope: step %u.%s on %s not monitored: the monitor did not start", job.job_id, step,
                    job.node);
        return 0;
    }
    monitor_pid = pid;
    monitor_job = job.job_id;
    snprintf(monitor_step, sizeof(monitor_step), "%s", step);
    monitor_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (spank_done_marker(launch.dir, &job, monitor_marker, sizeof(monitor_marker)) < 0)
        monitor_marker[0] = '\0';
    int64_t t_exec = now_ns(CLOCK_MONOTONIC);

    /* wait (up to START_TIMEOUT) until the monitor is ready for SIGTERM, so that it is set up before the
     * tasks start and a monitor that dies at once (a bad option, an unusable folder) is reported while the
     * user's terminal still shows slurmstepd's errors */
    while (ready_for_sigterm(pid) == 0 && now_ns(CLOCK_MONOTONIC) < t_exec + START_TIMEOUT_NS &&
           !wait_gone(now_ns(CLOCK_MONOTONIC) + 2000000LL))
        ;
    if (wait_gone(now_ns(CLOCK_MONOTONIC))) {
        slurm_error(
            "jobscope: step %u.%s on %s not monitored: the monitor exited at once (log=FILE in --jobscope "
            "keeps its messages)",
            job.job_id, step, job.node);
        if (monitor_pidfd >= 0)
            close(monitor_pidfd);
        monitor_pidfd = -1;
        monitor_pid = -1;
        return 0;
    }
    slurm_info(
        "jobscope: monitor pid %d for step %u.%s on %s started in %.1f ms, ready %.1f ms later, writing "
        "into %s",
        (int)pid, job.job_id, step, job.node, (double)(t_exec - t0) / 1e6,
        (double)(now_ns(CLOCK_MONOTONIC) - t_exec) / 1e6, launch.dir);
    return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
    (void)sp;
    (void)ac;
    (void)av;
    if (monitor_pid <= 0 || spank_context() != S_CTX_REMOTE)
        return 0;
    int64_t t0 = now_ns(CLOCK_MONOTONIC);
    /* a monitor still starting: let it get ready for SIGTERM first (up to stop_timeout) */
    int64_t ready_by = t0 + config.stop_timeout_ns;
    while (ready_for_sigterm(monitor_pid) == 0 && now_ns(CLOCK_MONOTONIC) < ready_by &&
           !wait_gone(now_ns(CLOCK_MONOTONIC) + 10000000LL))
        ;
    int64_t deadline = now_ns(CLOCK_MONOTONIC) + config.stop_timeout_ns;
    if (wait_gone(t0)) {
        slurm_info("jobscope: monitor pid %d of step %u.%s had ended already", (int)monitor_pid, monitor_job,
                   monitor_step);
    } else if (kill(monitor_pid, SIGTERM) < 0) {
        slurm_error("jobscope: cannot stop monitor pid %d of step %u.%s: %s", (int)monitor_pid, monitor_job,
                    monitor_step, strerror(errno));
    } else if (wait_gone(deadline)) {
        slurm_info("jobscope: monitor pid %d of step %u.%s stopped in %.1f ms", (int)monitor_pid, monitor_job,
                   monitor_step, (double)(now_ns(CLOCK_MONOTONIC) - t0) / 1e6);
    } else if (monitor_marker[0] && access(monitor_marker, F_OK) == 0) {
        /* its recording is complete and it is merging the nodes' recordings: detached from slurmstepd, it
         * may finish after the step */
        slurm_info("jobscope: monitor pid %d of step %u.%s has completed its recording and is still running "
                   "%.1f s after SIGTERM (merging the nodes' recordings): left to finish",
                   (int)monitor_pid, monitor_job, monitor_step, (double)config.stop_timeout_ns / 1e9);
    } else {
        slurm_error("jobscope: monitor pid %d of step %u.%s still running %.1f s after SIGTERM; killed, its "
                    "recording has no closing sample",
                    (int)monitor_pid, monitor_job, monitor_step, (double)config.stop_timeout_ns / 1e9);
        kill(monitor_pid, SIGKILL);
    }
    if (monitor_pidfd >= 0)
        close(monitor_pidfd);
    monitor_pidfd = -1;
    monitor_pid = -1;
    return 0;
}
