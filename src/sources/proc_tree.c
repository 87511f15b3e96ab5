/* SPDX-License-Identifier: MIT
 *
 * Process-tree source. Each sample it walks the monitored scope breadth-first, parents before children: the
 * roots (run mode: every child of the monitor, which is a child subreaper, so double-forked orphans stay;
 * attach mode: the PID given), then every member seen last sample that is still alive (a member re-parented
 * outside the tree stays a member), then the children of each member from /proc/<pid>/task/<tid>/children, or
 * from a full scan of /proc when the kernel lacks that file. Per member it reads stat, statm, io and the fd
 * count every sample through descriptors kept open between samples (pread from offset 0), status every
 * status_every samples, and cmdline when a process is first seen or its comm changes (exec). smaps_rollup
 * (USS/PSS) is read for every member at the same sample, never for some only, since a process's PSS changes
 * when another maps, forks or exits: every --uss-every (30 s by default, or every N samples) and on events
 * (see read_smaps_all for when). Processes are identified by (pid, start time), so PID reuse is detected. It
 * also records, once per sample, the rusage of everything the monitor has reaped (RUSAGE_CHILDREN) and the
 * I/O of reaped children (the monitor's whole-process io minus its own thread's), which make the CPU and I/O
 * totals exact for children that lived less than one interval.
 */
#include "sources/proc_tree_int.h"

#include "core/batchenv.h"
#include "core/json.h"
#include "core/pidmap.h"
#include "core/util.h"
#include "core/source.h"
#include "sources/bpf/tasks_bpf.h"
#include "sys/cgroupfs.h"
#include "sys/parse.h"

#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- tables ---------------------------------------------------------------------------------------- */

static const js_column_t proc_cols[PROC__MAX] = {
    [PROC_PID] = {"pid", "count", JS_INT, JS_LABEL, 0, "process ID"},
    [PROC_START_TICKS] = {"start_ticks", "ticks", JS_INT, JS_LABEL, 0,
                          "start time after boot (stat field 22)"},
    [PROC_PPID] = {"ppid", "count", JS_INT, JS_GAUGE, 0, "parent process ID"},
    [PROC_STATE] = {"state", "text", JS_TEXT, JS_GAUGE, 0, "R, S, D, Z, T, t, X, I"},
    [PROC_UTIME] = {"utime_ticks", "ticks", JS_INT, JS_COUNTER, 64, "user CPU time of the process"},
    [PROC_STIME] = {"stime_ticks", "ticks", JS_INT, JS_COUNTER, 64, "system CPU time of the process"},
    [PROC_CUTIME] = {"cutime_ticks", "ticks", JS_INT, JS_COUNTER, 64, "user CPU of children it reaped"},
    [PROC_CSTIME] = {"cstime_ticks", "ticks", JS_INT, JS_COUNTER, 64, "system CPU of children it reaped"},
    [PROC_THREADS] = {"threads", "count", JS_INT, JS_GAUGE, 0, "number of threads"},
    [PROC_MINFLT] = {"minflt", "count", JS_INT, JS_COUNTER, 64, "minor page faults"},
    [PROC_MAJFLT] = {"majflt", "count", JS_INT, JS_COUNTER, 64, "major page faults"},
    [PROC_CMINFLT] = {"cminflt", "count", JS_INT, JS_COUNTER, 64, "minor faults of reaped children"},
    [PROC_CMAJFLT] = {"cmajflt", "count", JS_INT, JS_COUNTER, 64, "major faults of reaped children"},
    [PROC_VSIZE] = {"vsize_bytes", "bytes", JS_INT, JS_GAUGE, 0, "virtual memory size"},
    [PROC_RSS] = {"rss_bytes", "bytes", JS_INT, JS_GAUGE, 0, "resident set size (statm resident)"},
    [PROC_SHARED] = {"shared_bytes", "bytes", JS_INT, JS_GAUGE, 0, "resident file-backed + shmem (statm)"},
    [PROC_RSS_ANON] = {"rss_anon_bytes", "bytes", JS_INT, JS_GAUGE, 0, "RssAnon (status cadence)"},
    [PROC_RSS_FILE] = {"rss_file_bytes", "bytes", JS_INT, JS_GAUGE, 0, "RssFile (status cadence)"},
    [PROC_RSS_SHMEM] = {"rss_shmem_bytes", "bytes", JS_INT, JS_GAUGE, 0, "RssShmem (status cadence)"},
    [PROC_SWAP] = {"swap_bytes", "bytes", JS_INT, JS_GAUGE, 0, "VmSwap (status cadence)"},
    [PROC_HWM] = {"hwm_bytes", "bytes", JS_INT, JS_GAUGE, 0, "VmHWM: kernel's peak RSS (status cadence)"},
    [PROC_VCSW] = {"vol_ctxsw", "count", JS_INT, JS_COUNTER, 64,
                   "voluntary context switches (status cadence)"},
    [PROC_IVCSW] = {"invol_ctxsw", "count", JS_INT, JS_COUNTER, 64, "involuntary context switches (status)"},
    [PROC_RCHAR] = {"rchar_bytes", "bytes", JS_INT, JS_COUNTER, 64, "bytes passed to read-like calls"},
    [PROC_WCHAR] = {"wchar_bytes", "bytes", JS_INT, JS_COUNTER, 64, "bytes passed to write-like calls"},
    [PROC_SYSCR] = {"syscr", "count", JS_INT, JS_COUNTER, 64, "read-like system calls"},
    [PROC_SYSCW] = {"syscw", "count", JS_INT, JS_COUNTER, 64, "write-like system calls"},
    [PROC_READ_BYTES] = {"read_bytes", "bytes", JS_INT, JS_COUNTER, 64, "bytes fetched from storage"},
    [PROC_WRITE_BYTES] = {"write_bytes", "bytes", JS_INT, JS_COUNTER, 64, "bytes sent to storage"},
    [PROC_CANCELLED_WRITE_BYTES] = {"cancelled_write_bytes", "bytes", JS_INT, JS_COUNTER, 64,
                                    "written bytes truncated before writeback"},
    [PROC_FDS] = {"fds", "count", JS_INT, JS_GAUGE, 0, "open file descriptors"},
    [PROC_USS] = {"uss_bytes", "bytes", JS_INT, JS_GAUGE, 0, "unique set size (smaps_rollup, uss cadence)"},
    [PROC_PSS] = {"pss_bytes", "bytes", JS_INT, JS_GAUGE, 0, "proportional set size (uss cadence)"},
    [PROC_SWAP_PSS] = {"swap_pss_bytes", "bytes", JS_INT, JS_GAUGE, 0, "proportional swap (uss cadence)"},
    [PROC_PROCESSOR] = {"processor", "count", JS_INT, JS_GAUGE, 0, "CPU last run on"},
    [PROC_CPU_NS] =
        {"cpu_ns", "ns", JS_INT, JS_COUNTER, 64,
         "own CPU of every thread, live and exited, nanosecond-exact (BPF backend; NULL from /proc)"},
    [PROC_SIGIGNORE] =
        {"sigignore", "mask", JS_INT, JS_GAUGE, 0,
         "ignored signals (stat field 33, bit N-1 for signal N): SIGCHLD ignored = auto-reaped children"},
};
const js_table_t table_proc = {"proc", "one row per sample and live member of the scope", PROC__MAX,
                               proc_cols};

static const js_column_t info_cols[INFO__MAX] = {
    [INFO_PID] = {"pid", "count", JS_INT, JS_LABEL, 0, "process ID"},
    [INFO_START_TICKS] = {"start_ticks", "ticks", JS_INT, JS_LABEL, 0, "start time after boot"},
    [INFO_PPID] = {"ppid", "count", JS_INT, JS_GAUGE, 0, "parent when seen"},
    [INFO_UID] = {"uid", "count", JS_INT, JS_GAUGE, 0, "real user ID"},
    [INFO_COMM] = {"comm", "text", JS_TEXT, JS_GAUGE, 0, "command name (may hold any byte)"},
    [INFO_CMDLINE] = {"cmdline", "json", JS_TEXT, JS_GAUGE, 0, "arguments as a JSON array of strings"},
};
const js_table_t table_proc_info = {"proc_info", "a process first seen, or after it changed its comm (exec)",
                                    INFO__MAX, info_cols};

static const js_column_t tree_cols[TREE__MAX] = {
    [TREE_MEMBERS] = {"members", "count", JS_INT, JS_GAUGE, 0, "live processes in the scope"},
    [TREE_ROOT_ALIVE] = {"root_alive", "bool", JS_INT, JS_GAUGE, 0, "1 while the command (root) lives"},
    [TREE_DISCOVERY] =
        {"discovery", "text", JS_TEXT, JS_GAUGE, 0,
         "how members were found: children (task/*/children), scan, slurmstepd, cgroup.procs, uid, node"},
    [TREE_BACKEND] = {"backend", "text", JS_TEXT, JS_GAUGE, 0,
                      "how the processes were read this sample: procfs, bpf-tasks, bpf-cgroup"},
    [TREE_NODE_PROCS] = {"node_processes", "count", JS_INT, JS_GAUGE, 0,
                         "processes on the node this sample (user and node scopes)"},
    [TREE_UNREAD] =
        {"unread", "count", JS_INT, JS_GAUGE, 0,
         "members (or their children lists) that could not be read this sample (descriptor limit)"},
    [TREE_REAPED_UTIME] = {"reaped_utime_us", "us", JS_INT, JS_COUNTER, 64,
                           "user CPU of all the monitor reaped (RUSAGE_CHILDREN); run mode"},
    [TREE_REAPED_STIME] = {"reaped_stime_us", "us", JS_INT, JS_COUNTER, 64, "system CPU, likewise"},
    [TREE_REAPED_MAXRSS] = {"reaped_maxrss_bytes", "bytes", JS_INT, JS_GAUGE, 0,
                            "largest peak RSS of any reaped descendant (ru_maxrss)"},
    [TREE_REAPED_MINFLT] = {"reaped_minflt", "count", JS_INT, JS_COUNTER, 64, "minor faults, likewise"},
    [TREE_REAPED_MAJFLT] = {"reaped_majflt", "count", JS_INT, JS_COUNTER, 64, "major faults, likewise"},
    [TREE_REAPED_NVCSW] = {"reaped_vol_ctxsw", "count", JS_INT, JS_COUNTER, 64, "voluntary switches"},
    [TREE_REAPED_NIVCSW] = {"reaped_invol_ctxsw", "count", JS_INT, JS_COUNTER, 64, "involuntary switches"},
    [TREE_REAPED_RCHAR] = {"reaped_rchar_bytes", "bytes", JS_INT, JS_COUNTER, 64,
                           "rchar of reaped children (monitor io minus its thread's io)"},
    [TREE_REAPED_WCHAR] = {"reaped_wchar_bytes", "bytes", JS_INT, JS_COUNTER, 64, "wchar, likewise"},
    [TREE_REAPED_SYSCR] = {"reaped_syscr", "count", JS_INT, JS_COUNTER, 64, "syscr, likewise"},
    [TREE_REAPED_SYSCW] = {"reaped_syscw", "count", JS_INT, JS_COUNTER, 64, "syscw, likewise"},
    [TREE_REAPED_READ_BYTES] = {"reaped_read_bytes", "bytes", JS_INT, JS_COUNTER, 64, "read_bytes, likewise"},
    [TREE_REAPED_WRITE_BYTES] = {"reaped_write_bytes", "bytes", JS_INT, JS_COUNTER, 64,
                                 "write_bytes, likewise"},
    [TREE_T_BOOT] =
        {"t_boot_ns", "ns", JS_INT, JS_GAUGE, 0,
         "CLOCK_BOOTTIME when the sample began, the clock of start_ticks (live procfs only): a process "
         "that started before the first sample's is older than the monitoring"},
};
const js_table_t table_tree = {"tree", "one row per sample: scope membership and the monitor's reaped totals",
                               TREE__MAX, tree_cols};

static const js_column_t exit_cols[EXIT__MAX] = {
    [EXIT_PID] = {"pid", "count", JS_INT, JS_LABEL, 0, "process ID reaped by the monitor"},
    [EXIT_STATUS] = {"wait_status", "raw", JS_INT, JS_GAUGE, 0, "status word from wait4"},
    [EXIT_CODE] = {"exit_code", "count", JS_INT, JS_GAUGE, 0, "exit status, if it exited"},
    [EXIT_SIGNAL] = {"signal", "count", JS_INT, JS_GAUGE, 0, "terminating signal, if killed"},
    [EXIT_T_UNIX] = {"t_unix_ns", "ns", JS_INT, JS_GAUGE, 0, "when it was reaped"},
    [EXIT_UTIME] = {"utime_us", "us", JS_INT, JS_GAUGE, 0, "user CPU of it and its reaped descendants"},
    [EXIT_STIME] = {"stime_us", "us", JS_INT, JS_GAUGE, 0, "system CPU, likewise"},
    [EXIT_MAXRSS] = {"maxrss_bytes", "bytes", JS_INT, JS_GAUGE, 0, "ru_maxrss"},
    [EXIT_MINFLT] = {"minflt", "count", JS_INT, JS_GAUGE, 0, "minor faults"},
    [EXIT_MAJFLT] = {"majflt", "count", JS_INT, JS_GAUGE, 0, "major faults"},
    [EXIT_INBLOCK] = {"inblock", "count", JS_INT, JS_GAUGE, 0, "512-byte blocks read"},
    [EXIT_OUBLOCK] = {"oublock", "count", JS_INT, JS_GAUGE, 0, "512-byte blocks written"},
};
static const js_column_t stepd_cols[STEPD__MAX] = {
    [STEPD_PID] = {"pid", "count", JS_INT, JS_LABEL, 0, "the slurmstepd's process ID"},
    [STEPD_START_TICKS] = {"start_ticks", "ticks", JS_INT, JS_LABEL, 0, "its start time after boot"},
    [STEPD_STEP] = {"step", "text", JS_TEXT, JS_LABEL, 0, "the job step it runs (0, 1, batch, extern)"},
    [STEPD_CUTIME] = {"cutime_ticks", "ticks", JS_INT, JS_COUNTER, 64, "user CPU of the tasks it reaped"},
    [STEPD_CSTIME] = {"cstime_ticks", "ticks", JS_INT, JS_COUNTER, 64, "system CPU of the tasks it reaped"},
    [STEPD_UTIME] = {"utime_ticks", "ticks", JS_INT, JS_COUNTER, 64, "its own user CPU (not the job's)"},
    [STEPD_STIME] = {"stime_ticks", "ticks", JS_INT, JS_COUNTER, 64, "its own system CPU (not the job's)"},
};
const js_table_t table_stepd = {
    "stepd", "jobscope job without a cgroup: one row per sample and slurmstepd root", STEPD__MAX, stepd_cols};

const js_table_t table_exits = {"exits", "one row per child reaped by the monitor (wait4 rusage)", EXIT__MAX,
                                exit_cols};

/* The same tables for the embedded monitor's levels (sources/levels.c runs a second instance of this source
 * over each level's scope): recorded apart, so the monitored scope's own tables hold only its members. */
#define LEVEL_TWIN(var, name, help, n, cols) const js_table_t var = {name, help, n, cols};
LEVEL_TWIN(table_level_user_proc, "level_user_proc", "level user: one row per sample and process of the user",
           PROC__MAX, proc_cols)
LEVEL_TWIN(table_level_user_proc_info, "level_user_proc_info",
           "level user: a process first seen, or after an exec", INFO__MAX, info_cols)
LEVEL_TWIN(table_level_user_tree, "level_user_tree", "level user: one row per sample (membership)", TREE__MAX,
           tree_cols)
LEVEL_TWIN(table_level_job_proc, "level_job_proc",
           "level job: one row per sample and process of the batch job", PROC__MAX, proc_cols)
LEVEL_TWIN(table_level_job_proc_info, "level_job_proc_info",
           "level job: a process first seen, or after an exec", INFO__MAX, info_cols)
LEVEL_TWIN(table_level_job_tree, "level_job_tree", "level job: one row per sample (membership)", TREE__MAX,
           tree_cols)
LEVEL_TWIN(table_level_job_stepd, "level_job_stepd",
           "level job without a cgroup: one row per sample and slurmstepd", STEPD__MAX, stepd_cols)
#undef LEVEL_TWIN

void ptree_ent_close(pent_t *e)
{
    int *fds[5] = {&e->fd_stat, &e->fd_statm, &e->fd_io, &e->fd_children, &e->fd_fddir};
    for (int i = 0; i < 5; i++) {
        if (*fds[i] >= 0)
            close(*fds[i]);
        *fds[i] = -1;
    }
}

/* ptree_ent_insert: a new entry for `pid` (not present), descriptors closed. Pointers to entries are
 * invalidated.
 */
pent_t *ptree_ent_insert(tree_state_t *st, int32_t pid)
{
    pent_t *e = pidmap_put(&st->procs, pid, NULL);
    if (!e)
        return NULL;
    e->pid = pid;
    e->fd_stat = e->fd_statm = e->fd_io = e->fd_children = e->fd_fddir = -1;
    return e;
}

/* ptree_ent_remove: close `e`'s descriptors and delete it. Pointers to entries are invalidated. */
void ptree_ent_remove(tree_state_t *st, pent_t *e)
{
    ptree_ent_close(e);
    if (e->kept)
        st->nkept--;
    if (e->seen == st->stamp)
        st->nseen--;
    pidmap_del(&st->procs, e->pid);
}

void ptree_mark_seen(tree_state_t *st, pent_t *e)
{
    if (e->seen != st->stamp)
        st->nseen++;
    e->seen = st->stamp;
}

/* evict: out of descriptors: stop keeping the descriptors of up to `n` kept processes other than `keep`, so
 * transient reads can go on, and keep no more than what is left from then on. Returns how many were freed. */
static size_t evict(tree_state_t *st, const pent_t *keep, size_t n)
{
    size_t freed = 0;
    for (size_t i = 0; i < st->procs.cap && freed < n; i++) {
        pent_t *e;
        if (!pidmap_at(&st->procs, i, (void **)&e) || !e->kept || e == keep)
            continue;
        ptree_ent_close(e);
        e->kept = false;
        st->nkept--;
        freed++;
    }
    st->keep_max = st->nkept;
    st->keep_capped = true;
    return freed;
}

/* budget_update: how many processes may keep their descriptors, from the current RLIMIT_NOFILE. */
static void budget_update(tree_state_t *st)
{
    struct rlimit rl;
    if (st->keep_capped || getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return;
    rlim_t cur = rl.rlim_cur == RLIM_INFINITY ? 1048576 : rl.rlim_cur;
    st->keep_max = cur > FD_RESERVE ? (size_t)(cur - FD_RESERVE) / KEPT_PER_PROC : 0;
}

int ptree_push_pid(int32_t **arr, size_t *n, size_t *cap, int32_t pid)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        int32_t *a = realloc(*arr, c * sizeof(*a));
        if (!a)
            return -ENOMEM;
        *arr = a;
        *cap = c;
    }
    (*arr)[(*n)++] = pid;
    return 0;
}

/* ptree_forget_unseen: delete from `m` every entry whose sample stamp (the uint64_t at `seen_off` in the
 * entry) is not this sample's: the processes gone since the last listing. Collected first, since deletion
 * moves entries. Returns 0 or -ENOMEM (nothing deleted then). */
int ptree_forget_unseen(tree_state_t *st, js_pidmap_t *m, size_t seen_off)
{
    st->nstale = 0;
    for (size_t i = 0; i < m->cap; i++) {
        void *e;
        int32_t pid = pidmap_at(m, i, &e);
        uint64_t seen;
        if (!pid)
            continue;
        memcpy(&seen, (const char *)e + seen_off, sizeof(seen));
        if (seen != st->stamp && ptree_push_pid(&st->stale, &st->nstale, &st->stale_cap, pid) < 0)
            return -ENOMEM;
    }
    for (size_t i = 0; i < st->nstale; i++)
        pidmap_del(m, st->stale[i]);
    return 0;
}

enum { READ_RECORD, READ_PAGED, READ_FULL };

static int read_fd(int fd, js_buf_t *b, int how)
{
    return how == READ_RECORD  ? fd_read_record(fd, b)
           : how == READ_PAGED ? fd_read_paged(fd, b)
                               : fd_read(fd, b);
}

/* kept_read: read a file through a descriptor kept open across samples (opened on first use). */
static int kept_read(int dirfd, int *fd, const char *path, js_buf_t *b, int how)
{
    if (*fd < 0 && (*fd = fs_open(dirfd, path)) < 0) {
        int r = *fd;
        *fd = -1;
        return r;
    }
    return read_fd(*fd, b, how);
}

static bool out_of_fds(int r)
{
    return r == -EMFILE || r == -ENFILE;
}

/* pread_proc: read per-process file `path` of entry `e`: through the kept descriptor *fd when the process
 * keeps its descriptors (fd NULL: never kept), else open-read-close. Out of descriptors, the kept
 * descriptors of other processes are closed (they go on with transient reads) and the read is tried once
 * more; -EMFILE then means it could not be read. */
static int pread_proc(tree_state_t *st, const js_ctx_t *ctx, pent_t *e, int *fd, const char *path,
                      js_buf_t *b, int how)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        int r;
        if (fd && e->kept) {
            r = kept_read(ctx->root.proc, fd, path, b, how);
            if (out_of_fds(r)) { /* this process's own kept descriptors are the first to go */
                ptree_ent_close(e);
                e->kept = false;
                st->nkept--;
                continue;
            }
        } else {
            r = how == READ_RECORD ? fs_read_record(ctx->root.proc, path, b)
                                   : fs_read(ctx->root.proc, path, b);
        }
        if (!out_of_fds(r) || attempt == 1)
            return r;
        if (!evict(st, e, 16))
            return r;
    }
    return -EMFILE;
}

static int tree_init(const js_ctx_t *ctx, void **ret_state, char *why, size_t whylen)
{
    tree_state_t *st = calloc(1, sizeof(*st));
    if (!st)
        return -ENOMEM;
    pidmap_init(&st->procs, sizeof(pent_t));
    pidmap_init(&st->uids, sizeof(uent_t));
    pidmap_init(&st->stepds, sizeof(sent_t));
    st->fd_mon_children = st->fd_mon_io = st->fd_mon_thread_io = -1;
    st->page = sysconf(_SC_PAGESIZE);
    if (st->page <= 0)
        st->page = 4096;
    if (fsroot_is_live(&ctx->root)) {
        struct stat s;
        st->fd_by_stat = fstatat(ctx->root.proc, "self/fd", &s, 0) == 0 && s.st_size > 0;
        st->live = true;
    }
    if (ctx->backend == JS_BACKEND_BPF)
        ptree_bpf_wanted(st, (js_ctx_t *)ctx,
                         st->live); /* loaded now; a refusal falls back to /proc, its reason kept */
    /* children files need CONFIG_PROC_CHILDREN; probe on the root (or the monitor) */
    char path[64];
    pid_t probe = ctx->mode == JS_MODE_RUN || ctx->root_pid <= 0 ? ctx->monitor_pid : ctx->root_pid;
    snprintf(path, sizeof(path), "%d/task/%d/children", (int)probe, (int)probe);
    if (faccessat(ctx->root.proc, path, R_OK, 0) < 0) {
        snprintf(path, sizeof(path), "%d/stat", (int)probe);
        st->scan = faccessat(ctx->root.proc, path, R_OK, 0) == 0;
    }
    *ret_state = st;
    return 0;
}

static void tree_fini(void *state)
{
    tree_state_t *st = state;
    if (!st)
        return;
    for (size_t i = 0; i < st->procs.cap; i++) {
        pent_t *e;
        if (pidmap_at(&st->procs, i, (void **)&e))
            ptree_ent_close(e);
    }
    pidmap_free(&st->procs);
    pidmap_free(&st->uids);
    pidmap_free(&st->stepds);
    free(st->roots);
    free(st->tasks);
    free(st->cand);
    free(st->stale);
    free(st->how);
    free(st->recs);
    tasks_bpf_close(st->bpf);
    cgroupfs_pids_free(&st->cgpids);
    int mon_fds[3] = {st->fd_mon_children, st->fd_mon_io, st->fd_mon_thread_io};
    for (int i = 0; i < 3; i++)
        if (mon_fds[i] >= 0)
            close(mon_fds[i]);
    free(st->order);
    free(st->queue);
    free(st->pairs);
    buf_free(&st->buf);
    buf_free(&st->buf2);
    buf_free(&st->cmd);
    buf_free(&st->redacted);
    free(st);
}

/* enqueue_children_text: push every PID listed (space separated) in `text`. */
int ptree_enqueue_list(tree_state_t *st, const char *text)
{
    const char *p = text;
    uint64_t v;
    while (parse_u64(&p, &v) == 0) {
        if (v > 0 && v <= INT32_MAX &&
            ptree_push_pid(&st->queue, &st->nqueue, &st->queue_cap, (int32_t)v) < 0)
            return -ENOMEM;
        while (*p == ' ' || *p == '\n')
            p++;
    }
    return 0;
}

static int cmp_pair(const void *a, const void *b)
{
    const int32_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

/* scan_build: scan mode, read every /proc/<pid>/stat once for its ppid. */
static int scan_build(tree_state_t *st, const js_ctx_t *ctx)
{
    st->npairs = 0;
    js_pid_iter_t it;
    int r = pid_iter_open(&it, ctx->root.proc, ".");
    if (r < 0)
        return r;
    char path[64], text[1024];
    int32_t pid;
    while ((pid = pid_iter_next(&it))) {
        snprintf(path, sizeof(path), "%d/stat", (int)pid);
        if (fs_read_small(ctx->root.proc, path, text, sizeof(text)) <= 0)
            continue;
        js_pid_stat_t ps;
        if (parse_pid_stat(text, &ps) < 0)
            continue;
        if (st->npairs == st->pairs_cap) {
            size_t c = st->pairs_cap ? st->pairs_cap * 2 : 256;
            void *p = realloc(st->pairs, c * sizeof(*st->pairs));
            if (!p) {
                pid_iter_close(&it);
                return -ENOMEM;
            }
            st->pairs = p;
            st->pairs_cap = c;
        }
        st->pairs[st->npairs][0] = ps.ppid;
        st->pairs[st->npairs][1] = pid;
        st->npairs++;
    }
    pid_iter_close(&it);
    qsort(st->pairs, st->npairs, sizeof(*st->pairs), cmp_pair);
    return 0;
}

int ptree_scan_children(tree_state_t *st, int32_t ppid)
{
    size_t lo = 0, hi = st->npairs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (st->pairs[mid][0] < ppid)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < st->npairs && st->pairs[lo][0] == ppid; lo++)
        if (ptree_push_pid(&st->queue, &st->nqueue, &st->queue_cap, st->pairs[lo][1]) < 0)
            return -ENOMEM;
    return 0;
}

/* enqueue_children: children of every thread of `pid`. Single-threaded processes read one children file
 * (kept open when the process keeps its descriptors). */
static int enqueue_children(tree_state_t *st, const js_ctx_t *ctx, pent_t *e, int64_t threads)
{
    if (st->scan)
        return ptree_scan_children(st, e->pid);
    char path[300];
    if (threads <= 1) {
        snprintf(path, sizeof(path), "%d/task/%d/children", (int)e->pid, (int)e->pid);
        int r = pread_proc(st, ctx, e, &e->fd_children, path, &st->buf2, READ_PAGED);
        if (out_of_fds(r))
            st->unread++; /* its children cannot be found this sample */
        return r < 0 ? 0 : ptree_enqueue_list(st, st->buf2.p);
    }
    snprintf(path, sizeof(path), "%d/task", (int)e->pid);
    js_pid_iter_t it;
    int r = pid_iter_open(&it, ctx->root.proc, path);
    if (out_of_fds(r) && evict(st, e, 16))
        r = pid_iter_open(&it, ctx->root.proc, path);
    if (r < 0) {
        if (out_of_fds(r))
            st->unread++;
        return r == -ENOMEM ? r : 0;
    }
    int32_t tid;
    while (r == 0 && (tid = pid_iter_next(&it))) {
        snprintf(path, sizeof(path), "%d/children", (int)tid);
        if (fs_read(pid_iter_fd(&it), path, &st->buf2) == 0)
            r = ptree_enqueue_list(st, st->buf2.p);
    }
    pid_iter_close(&it);
    return r;
}

/* count_fds: open descriptors of `e`. On Linux >= 6.2 the size of /proc/<pid>/fd is the count: an O_PATH
 * descriptor kept on that directory is re-stat'ed without a path lookup (or the path is stat'ed when the
 * process does not keep descriptors); otherwise count the entries. */
static int count_fds(tree_state_t *st, const js_ctx_t *ctx, pent_t *e, int64_t *ret)
{
    char path[48];
    snprintf(path, sizeof(path), "%d/fd", (int)e->pid);
    struct stat s;
    if (st->fd_by_stat) {
        if (!e->kept) {
            if (fstatat(ctx->root.proc, path, &s, 0) < 0)
                return -errno;
        } else {
            if (e->fd_fddir < 0 && (e->fd_fddir = fs_open_dir(ctx->root.proc, path, true)) < 0) {
                int r = e->fd_fddir;
                e->fd_fddir = -1;
                return r;
            }
            if (fstat(e->fd_fddir, &s) < 0)
                return -errno;
        }
        *ret = (int64_t)s.st_size;
        return 0;
    }
    DIR *d;
    int r = fs_opendir(ctx->root.proc, path, &d);
    if (r < 0)
        return r;
    int64_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.')
            n++;
    closedir(d);
    *ret = n;
    return 0;
}

/* ptree_emit_info: the proc_info row for a new process or one that exec'd. */
void ptree_emit_info(tree_state_t *st, const js_ctx_t *ctx, pent_t *e, js_rows_t *info,
                     const js_pid_stat_t *ps, const js_pid_status_t *pst)
{
    js_value_t *v = rows_add(info);
    if (!v)
        return;
    val_int(&v[INFO_PID], ps->pid);
    val_int(&v[INFO_START_TICKS], (int64_t)ps->starttime);
    val_int(&v[INFO_PPID], ps->ppid);
    if (pst && (pst->present & (1u << 7)))
        val_int(&v[INFO_UID], (int64_t)pst->uid);
    rows_set_str(info, &v[INFO_COMM], ps->comm, strlen(ps->comm));
    char path[48];
    snprintf(path, sizeof(path), "%d/cmdline", (int)ps->pid);
    if (pread_proc(st, ctx, e, NULL, path, &st->buf2, READ_FULL) != 0)
        return;
    const char *raw = st->buf2.p;
    size_t len = st->buf2.len;
    if (ctx->redact_cmdline) { /* --redact-cmdline: the secret never reaches a row */
        if (proc_cmdline_redact(ctx->redact_cmdline, raw, len, &st->redacted) < 0)
            return;
        raw = st->redacted.p;
        len = st->redacted.len;
    }
    if (proc_cmdline_json(raw, len, &st->cmd) == 0)
        rows_set_str(info, &v[INFO_CMDLINE], st->cmd.p, st->cmd.len);
}

/* ptree_smaps_moved: whether member `e` asks for smaps_rollup of every member this sample: it is new or
 * exec'd, was never read, or its RSS moved (up or down) by more than a tenth and 1 MiB since its last read;
 * or its RSS settled (within 1% of the last sample's) at a level more than 1/50 and 1 MiB away from its last
 * read: the plateau after a growth that began within a tenth of the last read (with --uss-every 30s no
 * periodic read would catch it in a short run). Remembers `rss` for the next sample. */
bool ptree_smaps_moved(pent_t *e, bool fresh, bool exec, uint64_t rss)
{
    uint64_t prev = e->rss_prev;
    e->rss_prev = rss;
    if (fresh || exec || !e->rss_at_uss)
        return true;
    uint64_t at = e->rss_at_uss, d = rss > at ? rss - at : at - rss;
    if (d > at / SMAPS_MOVED_DIV && d > SMAPS_MOVED_MIN)
        return true;
    uint64_t step = rss > prev ? rss - prev : prev - rss;
    return prev && step <= rss / SMAPS_SETTLED_DIV && d > at / SMAPS_PLATEAU_DIV && d > SMAPS_MOVED_MIN;
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    return x ^ (x >> 33);
}

int64_t ptree_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* read_smaps_all: smaps_rollup (USS, PSS, SwapPss) of every member of this sample (proc rows from `first`),
 * all at the same sample, so that their PSS add up (a page shared by k members counts 1/k in each). Read at
 * the first sample, every --uss-every (ctx->uss_interval_ns since the last full read, or every uss_every
 * samples), at the closing sample, and, within a budget, when the membership
 * changed (a fork shares the parent's pages with the child, an exit gives its share back), when a member
 * exec'd or its RSS moved by more than a tenth (ptree_smaps_moved), or when the sample is taken for phase
 * marks (ctx->for_marks). The budget: after a full read that cost c seconds of CPU, an event triggers the
 * next one no sooner than SMAPS_BUDGET_* x c later (smaps_rollup walks the page tables: about 16 us per MiB
 * resident).
 */
static void read_smaps_all(tree_state_t *st, const js_ctx_t *ctx, js_rows_t *proc, size_t first)
{
    if (!ctx->uss_every)
        return;
    uint64_t hash = 0;
    size_t n = proc->nrows - first;
    for (size_t i = first; i < proc->nrows; i++) {
        const js_value_t *v = rows_row(proc, i);
        hash += mix64(((uint64_t)v[PROC_PID].i << 32) ^ (uint64_t)v[PROC_START_TICKS].i);
    }
    bool event = st->smaps_event || hash != st->smaps_hash || n != st->smaps_n || ctx->for_marks;
    st->smaps_event = false;
    int64_t now = now_ns(CLOCK_MONOTONIC);
    bool every = ctx->uss_interval_ns > 0 ? now - st->smaps_last_ns >= ctx->uss_interval_ns
                                          : ctx->seq % ctx->uss_every == 0;
    bool due = !st->smaps_once || ctx->final || every;
    if (!due && !(event && now >= st->smaps_next_ns))
        return;
    int64_t c0 = ptree_thread_cpu_ns();
    for (size_t i = first; i < proc->nrows; i++) {
        js_value_t *v = rows_row(proc, i);
        pent_t *e = pidmap_get(&st->procs, (int32_t)v[PROC_PID].i);
        if (!e || e->seen != st->stamp || e->start != (uint64_t)v[PROC_START_TICKS].i)
            continue;
        char path[64];
        snprintf(path, sizeof(path), "%d/smaps_rollup", (int)e->pid);
        js_pid_smaps_t sm;
        bool zombie = v[PROC_STATE].present && rows_str(proc, &v[PROC_STATE])[0] == 'Z';
        int r = pread_proc(st, ctx, e, NULL, path, &st->buf, READ_FULL);
        if (r == 0 && proc_parse_smaps_rollup(st->buf.p, &sm) == 0) {
            val_int(&v[PROC_USS], (int64_t)sm.uss);
            val_int(&v[PROC_PSS], (int64_t)sm.pss);
            val_int(&v[PROC_SWAP_PSS], (int64_t)sm.swap_pss);
        } else if (zombie || r == -ENOENT || r == -ESRCH || (r == 0 && st->buf.len == 0)) {
            /* exited or exiting since its stat was read (an empty file: its memory is gone): it maps nothing;
             * a file that cannot be read (another user's process) stays missing */
            val_int(&v[PROC_USS], 0);
            val_int(&v[PROC_PSS], 0);
            val_int(&v[PROC_SWAP_PSS], 0);
        }
        uint64_t rss = v[PROC_RSS].present && v[PROC_RSS].i > 0 ? (uint64_t)v[PROC_RSS].i : 1;
        e->rss_at_uss = rss;
    }
    st->smaps_once = true;
    st->smaps_last_ns = now;
    st->smaps_hash = hash;
    st->smaps_n = n;
    st->smaps_next_ns =
        now + (ptree_thread_cpu_ns() - c0) * (ctx->scope.cgroup ? SMAPS_BUDGET_CGROUP : SMAPS_BUDGET_PSS);
}

/* visit_stat: find or make the entry of `pid` and read its stat into *ps. Returns 1 (read: *ret_e, *ps and
 * *ret_fresh set), 0 (gone, or already visited this sample), 2 (it exists but could not be read: counted as
 * unread, kept for the next sample), or -ENOMEM. */
static int visit_stat(tree_state_t *st, const js_ctx_t *ctx, int32_t pid, pent_t **ret_e, js_pid_stat_t *ps,
                      bool *ret_fresh)
{
    char path[64];
    pent_t *e = pidmap_get(&st->procs, pid);
    if (e && e->seen == st->stamp)
        return 0;
    bool fresh = false;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!e) {
            e = ptree_ent_insert(st, pid);
            if (!e)
                return -ENOMEM;
            fresh = true;
            e->kept = st->nkept < st->keep_max;
            st->nkept += e->kept;
        }
        snprintf(path, sizeof(path), "%d/stat", (int)pid);
        int r = pread_proc(st, ctx, e, &e->fd_stat, path, &st->buf, READ_RECORD);
        bool parsed = r == 0 && parse_pid_stat(st->buf.p, ps) == 0;
        if (parsed && (fresh || ps->starttime == e->start))
            break;
        /* out of descriptors, EIO, EAGAIN, EACCES and the like mean it exists but could not be read: counted,
         * and tried again next sample (its start time is checked then); so is a record cut short, for at most
         * three samples in a row (a file that never parses is not a process). ENOENT (no such PID), ESRCH (a
         * kept descriptor of a process that exited), an empty file, and a file that is not a regular one (a
         * fixture tree) say it is gone. */
        bool transient = r == -EMFILE || r == -ENFILE || r == -EIO || r == -EAGAIN || r == -EACCES ||
                         r == -EPERM || r == -EINTR || r == -ENOMEM || r == -EBUSY;
        bool cut = r == 0 && st->buf.len > 0 && !parsed;
        if (parsed)
            e->bad_reads = 0;
        else if (transient || (cut && ++e->bad_reads <= 3)) {
            st->unread++;
            ptree_mark_seen(st, e);
            return 2;
        }
        /* gone, or the PID was reused by a new process: drop the old entry and retry once fresh (a kept
         * descriptor of the old process says ESRCH where the path may already name a new one) */
        ptree_ent_remove(st, e);
        e = NULL;
        if (fresh)
            return 0;
    }
    if (!e)
        return 0;
    ptree_mark_seen(st, e);
    e->start = ps->starttime;
    *ret_e = e;
    *ret_fresh = fresh;
    return 1;
}

/* monitor_thread_io: the embedded monitor thread's task io into ctx->mon_io (see source.h). */
static void monitor_thread_io(js_ctx_t *ctx)
{
    char path[64], text[512];
    js_pid_io_t io;
    snprintf(path, sizeof(path), "%d/task/%d/io", (int)getpid(), (int)gettid());
    ctx->mon_io_present = 0;
    if (fs_read_small(ctx->root.proc, path, text, sizeof(text)) <= 0 || proc_parse_io(text, &io) < 0)
        return;
    for (int i = 0; i < 6; i++)
        if (io.present & (1u << i)) {
            ctx->mon_io[i] = (int64_t)io.v[i];
            ctx->mon_io_present |= 1u << i;
        }
}

/* visit_row: the proc row of a process whose stat was just read (visit_stat), with its other files, and its
 * proc_info row when it is new or exec'd. Returns 0 or -ENOMEM. */
static int visit_row(tree_state_t *st, js_ctx_t *ctx, pent_t *e, const js_pid_stat_t *ps, bool fresh,
                     js_rows_t *proc, js_rows_t *info)
{
    char path[64];
    int32_t pid = e->pid;
    if (ps->state == 'Z' || ps->state == 'X')
        st->nzombies++; /* exited, waiting for its parent: counted, but it keeps no scope alive */

    bool mon_root = ctx->embedded && pid == ctx->root_pid && ctx->monitor_pid == 0; /* the monitor's host */
    if (mon_root && getrusage(RUSAGE_THREAD, &ctx->mon_ru) == 0)
        ctx->mon_at_root = true; /* the monitor's CPU, as the stat just read includes it */
    js_value_t *v = rows_add(proc);
    if (!v)
        return -ENOMEM;
    val_int(&v[PROC_PID], pid);
    val_int(&v[PROC_START_TICKS], (int64_t)ps->starttime);
    val_int(&v[PROC_PPID], ps->ppid);
    rows_set_str(proc, &v[PROC_STATE], &ps->state, 1);
    val_int(&v[PROC_UTIME], (int64_t)ps->utime);
    val_int(&v[PROC_STIME], (int64_t)ps->stime);
    val_int(&v[PROC_CUTIME], ps->cutime);
    val_int(&v[PROC_CSTIME], ps->cstime);
    val_int(&v[PROC_THREADS], ps->num_threads);
    val_int(&v[PROC_MINFLT], (int64_t)ps->minflt);
    val_int(&v[PROC_MAJFLT], (int64_t)ps->majflt);
    val_int(&v[PROC_CMINFLT], (int64_t)ps->cminflt);
    val_int(&v[PROC_CMAJFLT], (int64_t)ps->cmajflt);
    val_int(&v[PROC_VSIZE], (int64_t)ps->vsize);
    val_int(&v[PROC_PROCESSOR], ps->processor);
    val_int(&v[PROC_SIGIGNORE], (int64_t)ps->sigignore);

    uint64_t res, shared, rss = 0;
    snprintf(path, sizeof(path), "%d/statm", (int)pid);
    if (pread_proc(st, ctx, e, &e->fd_statm, path, &st->buf, READ_RECORD) == 0 &&
        proc_parse_statm(st->buf.p, &res, &shared) == 0) {
        rss = res * (uint64_t)st->page;
        val_int(&v[PROC_RSS], (int64_t)rss);
        val_int(&v[PROC_SHARED], (int64_t)(shared * (uint64_t)st->page));
    } else if (ps->rss >= 0) {
        rss = (uint64_t)ps->rss * (uint64_t)st->page;
        val_int(&v[PROC_RSS], (int64_t)rss);
    }

    if (!e->io_denied) {
        snprintf(path, sizeof(path), "%d/io", (int)pid);
        int r = pread_proc(st, ctx, e, &e->fd_io, path, &st->buf, READ_RECORD);
        js_pid_io_t io;
        if (r == 0 && proc_parse_io(st->buf.p, &io) == 0) {
            for (int i = 0; i < 7; i++)
                if (io.present & (1u << i))
                    val_int(&v[PROC_RCHAR + i], (int64_t)io.v[i]);
            if (mon_root) /* the monitor thread's own, as the io just read includes it */
                monitor_thread_io(ctx);
        } else if (r == -EACCES || r == -EPERM) {
            e->io_denied = true;
        }
    }

    int64_t nfd = 0;
    if (count_fds(st, ctx, e, &nfd) == 0) {
        val_int(&v[PROC_FDS], nfd);
        if (ctx->host_fds && pid == ctx->root_pid) /* the embedding's share, counted at the same instant */
            ctx->host_fds_now = ctx->host_fds(nfd);
    }

    /* an exec changes the comm, or (same program name, e.g. `exec bash script`) the image's addresses */
    bool exec =
        !fresh && (strcmp(e->comm, ps->comm) != 0 || (ps->image && e->image && ps->image != e->image));
    js_pid_status_t pst;
    bool have_status = false;
    if (fresh || exec || ctx->final || ctx->status_every <= 1 || ctx->seq % ctx->status_every == 0) {
        snprintf(path, sizeof(path), "%d/status", (int)pid);
        if (pread_proc(st, ctx, e, NULL, path, &st->buf, READ_RECORD) == 0 &&
            proc_parse_status(st->buf.p, &pst) == 0) {
            have_status = true;
            const uint64_t f[7] = {
                pst.rss_anon, pst.rss_file, pst.rss_shmem, pst.swap,
                pst.hwm,      pst.vcsw,     pst.ivcsw}; /* the order of the PROC_RSS_ANON.. columns */
            for (int i = 0; i < 7; i++)
                if (pst.present & (1u << i))
                    val_int(&v[PROC_RSS_ANON + i], (int64_t)f[i]);
        }
    }
    if (ptree_smaps_moved(e, fresh, exec, rss))
        st->smaps_event = true;
    if (fresh || exec || !e->info_done) {
        ptree_emit_info(st, ctx, e, info, ps, have_status ? &pst : NULL);
        snprintf(e->comm, sizeof(e->comm), "%s", ps->comm);
        e->info_done = true;
    }
    if (ps->image)
        e->image = ps->image;
    return 0;
}

/* visit: sample one process of a tree (row, then its children queued). Returns 1 if it is a live member (row
 * written), 2 if it could not be read (kept as a member), 0 if gone, <0 on ENOMEM. */
static int visit(tree_state_t *st, js_ctx_t *ctx, int32_t pid, js_rows_t *proc, js_rows_t *info,
                 bool children)
{
    pent_t *e = NULL;
    js_pid_stat_t ps;
    bool fresh = false;
    int r = visit_stat(st, ctx, pid, &e, &ps, &fresh);
    if (r != 1)
        return r;
    if ((r = visit_row(st, ctx, e, &ps, fresh, proc, info)) < 0)
        return r;
    /* e stays valid: no insertion happened since it was found */
    r = children ? enqueue_children(st, ctx, e, ps.num_threads) : 0;
    return r < 0 ? r : 1;
}

/* reaped_totals: run mode; what the monitor has reaped so far (its own figures are excluded). */
static void reaped_totals(tree_state_t *st, const js_ctx_t *ctx, js_value_t *t)
{
    struct rusage ru;
    if (getrusage(RUSAGE_CHILDREN, &ru) == 0) {
        val_int(&t[TREE_REAPED_UTIME], (int64_t)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec);
        val_int(&t[TREE_REAPED_STIME], (int64_t)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec);
        val_int(&t[TREE_REAPED_MAXRSS], (int64_t)ru.ru_maxrss * 1024);
        val_int(&t[TREE_REAPED_MINFLT], ru.ru_minflt);
        val_int(&t[TREE_REAPED_MAJFLT], ru.ru_majflt);
        val_int(&t[TREE_REAPED_NVCSW], ru.ru_nvcsw);
        val_int(&t[TREE_REAPED_NIVCSW], ru.ru_nivcsw);
    }
    /* whole-process io = own threads + exited threads + reaped children; the monitor is one thread. Read the
     * thread's first: the whole-process figures then include that one read (its bytes and one syscall),
     * which is taken off again so the result is exactly what the reaped children did. */
    char path[64];
    js_pid_io_t whole, self;
    snprintf(path, sizeof(path), "%d/task/%d/io", (int)ctx->monitor_pid, (int)ctx->monitor_pid);
    if (kept_read(ctx->root.proc, &st->fd_mon_thread_io, path, &st->buf, READ_RECORD) < 0 ||
        proc_parse_io(st->buf.p, &self) < 0)
        return;
    self.v[0] += st->buf.len; /* rchar of the read just made */
    self.v[2] += 1;           /* syscr */
    snprintf(path, sizeof(path), "%d/io", (int)ctx->monitor_pid);
    if (kept_read(ctx->root.proc, &st->fd_mon_io, path, &st->buf, READ_RECORD) < 0 ||
        proc_parse_io(st->buf.p, &whole) < 0)
        return;
    for (int i = 0; i < 6; i++)
        if ((whole.present & self.present & (1u << i)) && whole.v[i] >= self.v[i])
            val_int(&t[TREE_REAPED_RCHAR + i], (int64_t)(whole.v[i] - self.v[i]));
}

static void emit_exits(js_ctx_t *ctx, js_rows_t *exits)
{
    for (size_t i = 0; i < ctx->nreaped; i++) {
        const js_reaped_t *x = &ctx->reaped[i];
        js_value_t *v = rows_add(exits);
        if (!v)
            break;
        val_int(&v[EXIT_PID], x->pid);
        val_int(&v[EXIT_STATUS], x->status);
        if (WIFEXITED(x->status))
            val_int(&v[EXIT_CODE], WEXITSTATUS(x->status));
        if (WIFSIGNALED(x->status))
            val_int(&v[EXIT_SIGNAL], WTERMSIG(x->status));
        val_int(&v[EXIT_T_UNIX], x->t_unix_ns);
        val_int(&v[EXIT_UTIME], (int64_t)x->ru.ru_utime.tv_sec * 1000000 + x->ru.ru_utime.tv_usec);
        val_int(&v[EXIT_STIME], (int64_t)x->ru.ru_stime.tv_sec * 1000000 + x->ru.ru_stime.tv_usec);
        val_int(&v[EXIT_MAXRSS], (int64_t)x->ru.ru_maxrss * 1024);
        val_int(&v[EXIT_MINFLT], x->ru.ru_minflt);
        val_int(&v[EXIT_MAJFLT], x->ru.ru_majflt);
        val_int(&v[EXIT_INBLOCK], x->ru.ru_inblock);
        val_int(&v[EXIT_OUBLOCK], x->ru.ru_oublock);
    }
    ctx->nreaped = 0;
}

/* collect_tree: run and attach: the roots (run: every child of the monitor, a subreaper; the command or the
 * PID given), then last sample's members in their order, then the children of each member, breadth-first. */
static int collect_tree(tree_state_t *st, js_ctx_t *ctx, js_rows_t *proc, js_rows_t *info, bool *root_alive)
{
    if (ctx->mode == JS_MODE_RUN) {
        char path[64];
        snprintf(path, sizeof(path), "%d/task/%d/children", (int)ctx->monitor_pid, (int)ctx->monitor_pid);
        if (!st->scan && kept_read(ctx->root.proc, &st->fd_mon_children, path, &st->buf2, READ_PAGED) == 0 &&
            ptree_enqueue_list(st, st->buf2.p) < 0)
            return -ENOMEM;
        if (st->scan && ptree_scan_children(st, ctx->monitor_pid) < 0)
            return -ENOMEM;
    }
    if (ctx->root_pid > 0 && ptree_push_pid(&st->queue, &st->nqueue, &st->queue_cap, ctx->root_pid) < 0)
        return -ENOMEM;
    size_t first_task = st->nqueue;
    for (size_t i = 0; i < st->nroots; i++) /* stepd roots: their children are the tasks */
        if (ptree_stepd_children(st, ctx, st->roots[i]) < 0)
            return -ENOMEM;
    st->ntasks = 0;
    for (size_t i = first_task; i < st->nqueue; i++)
        if (st->queue[i] != ctx->monitor_pid &&
            ptree_push_pid(&st->tasks, &st->ntasks, &st->tasks_cap, st->queue[i]) < 0)
            return -ENOMEM;
    ctx->watch_pids = st->tasks;
    ctx->nwatch_pids = st->ntasks;
    for (size_t i = 0; i < st->norder; i++)
        if (ptree_push_pid(&st->queue, &st->nqueue, &st->queue_cap, st->order[i]) < 0)
            return -ENOMEM;
    st->norder = 0;
    for (size_t qi = 0; qi < st->nqueue; qi++) {
        int32_t pid = st->queue[qi];
        if (pid == ctx->monitor_pid)
            continue;
        if (ctx->interruptible && (qi & 255) == 255 && sampler_stop_pending())
            return -EINTR; /* a huge tree: let the stop signal through now; the next sample reads it all */
        int v = visit(st, ctx, pid, proc, info, true);
        if (v < 0)
            return v;
        if (v >= 1) { /* 2: a member that could not be read this sample; it is tried again next sample */
            if (ptree_push_pid(&st->order, &st->norder, &st->order_cap, pid) < 0)
                return -ENOMEM;
            if (pid == ctx->root_pid)
                *root_alive = true;
        }
    }
    return 0;
}

/* collect_list: the members are exactly `pids` this sample (a cgroup's processes, a user's). */
static int collect_list(tree_state_t *st, js_ctx_t *ctx, const int32_t *pids, size_t n, js_rows_t *proc,
                        js_rows_t *info)
{
    st->norder = 0;
    for (size_t i = 0; i < n; i++) {
        if (pids[i] == ctx->monitor_pid)
            continue;
        if (ctx->interruptible && (i & 255) == 255 && sampler_stop_pending())
            return -EINTR;
        int v = visit(st, ctx, pids[i], proc, info, false);
        if (v < 0)
            return v;
        if (v >= 1 && ptree_push_pid(&st->order, &st->norder, &st->order_cap, pids[i]) < 0)
            return -ENOMEM;
    }
    return 0;
}

/* list_pids: every process of the procfs root into st->queue (and st->nprocs). */
static int list_pids(tree_state_t *st, const js_ctx_t *ctx)
{
    st->nqueue = 0;
    js_pid_iter_t it;
    int r = pid_iter_open(&it, ctx->root.proc, ".");
    if (r < 0)
        return r;
    int32_t pid;
    while (r == 0 && (pid = pid_iter_next(&it)))
        r = ptree_push_pid(&st->queue, &st->nqueue, &st->queue_cap, pid);
    pid_iter_close(&it);
    st->nprocs = st->nqueue;
    return r;
}

/* collect_user: every process whose real UID is scope.uid, including ones that started since the last sample.
 * The real UID comes from PID/status, read once per process (and again when the owner of /proc/PID, its
 * effective UID, changes: a setuid exec); otherwise a process costs one fstatat per sample. */
static int collect_user(tree_state_t *st, js_ctx_t *ctx, js_rows_t *proc, js_rows_t *info)
{
    int r = list_pids(st, ctx);
    if (r < 0)
        return r;
    size_t nmember = 0;
    char path[48];
    for (size_t i = 0; i < st->nqueue; i++) {
        int32_t pid = st->queue[i];
        struct stat sb;
        snprintf(path, sizeof(path), "%d", (int)pid);
        if (fstatat(ctx->root.proc, path, &sb, 0) < 0)
            continue;
        int fresh = 0;
        uent_t *u = pidmap_put(&st->uids, pid, &fresh);
        if (!u)
            return -ENOMEM;
        if (fresh || u->euid != (uint32_t)sb.st_uid) {
            js_pid_status_t pst;
            snprintf(path, sizeof(path), "%d/status", (int)pid);
            if (fs_read_record(ctx->root.proc, path, &st->buf) < 0 ||
                proc_parse_status(st->buf.p, &pst) < 0 || !(pst.present & (1u << 7))) {
                pidmap_del(&st->uids, pid); /* gone, or unreadable: look again next sample */
                continue;
            }
            u = pidmap_get(&st->uids, pid);
            u->ruid = (uint32_t)pst.uid;
            u->euid = (uint32_t)sb.st_uid;
        }
        u->seen = st->stamp;
        if (u->ruid == (uint32_t)ctx->scope.uid)
            st->queue[nmember++] = pid; /* compacted in place: the members, in /proc order */
    }
    /* forget the processes that are gone (collected first: deletion moves entries) */
    if (ptree_forget_unseen(st, &st->uids, offsetof(uent_t, seen)) < 0)
        return -ENOMEM;
    st->nqueue = nmember;
    return collect_list(st, ctx, st->queue, nmember, proc, info);
}

static int cmp_cand_cpu(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    return x->cpu < y->cpu ? 1 : x->cpu > y->cpu ? -1 : (x->pid > y->pid) - (x->pid < y->pid);
}

static int cmp_cand_rss(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    return x->rss < y->rss ? 1 : x->rss > y->rss ? -1 : (x->pid > y->pid) - (x->pid < y->pid);
}

/* ptree_pick_top: the node scope's rows: the top N candidates by CPU over the interval and the top N by RSS,
 * from their stat (procfs) or their record (BPF). Returns 0 or -ENOMEM. */
int ptree_pick_top(tree_state_t *st, js_ctx_t *ctx, js_rows_t *proc, js_rows_t *info, bool bpf)
{
    size_t n = ctx->scope.top_n < st->ncand ? ctx->scope.top_n : st->ncand;
    for (size_t i = 0; i < st->ncand; i++)
        st->cand[i].pick = false;
    qsort(st->cand, st->ncand, sizeof(*st->cand), cmp_cand_cpu);
    for (size_t i = 0; i < n; i++)
        st->cand[i].pick = true;
    qsort(st->cand, st->ncand, sizeof(*st->cand), cmp_cand_rss);
    for (size_t i = 0; i < n; i++)
        st->cand[i].pick = true;
    st->norder = 0;
    for (size_t i = 0; i < st->ncand; i++) {
        cand_t *c = &st->cand[i];
        pent_t *e = c->pick ? pidmap_get(&st->procs, c->pid) : NULL;
        if (!e)
            continue;
        int r;
        if (bpf) {
            st->nseen -= e->seen == st->stamp;
            e->seen = st->stamp - 1; /* ptree_bpf_row writes a row once per sample (and marks it again) */
            r = ptree_bpf_row(st, ctx, &st->recs[c->idx], proc, info);
        } else {
            r = visit_row(st, ctx, e, &c->ps, c->fresh, proc, info);
        }
        if (r < 0)
            return r;
        if (ptree_push_pid(&st->order, &st->norder, &st->order_cap, c->pid) < 0)
            return -ENOMEM;
    }
    return 0;
}

int64_t ptree_node_count_period(int64_t walk_cpu_ns)
{
    const int64_t hour = 3600LL * 1000000000LL;
    if (walk_cpu_ns <= 0)
        return NODE_COUNT_NS;
    if (walk_cpu_ns >= hour / NODE_COUNT_COST)
        return hour;
    int64_t t = walk_cpu_ns * NODE_COUNT_COST;
    return t > NODE_COUNT_NS ? t : NODE_COUNT_NS;
}

/* thread_cpu_ns: the CPU time of the calling thread (the one that collects) in ns; 0 where it cannot be
 * read. */
static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
        return 0;
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* collect_node: the whole node. Per-process detail only with a top N: every process's stat is read, and full
 * rows are written for the N that used the most CPU over the last interval and the N with the largest RSS. */
static int collect_node(tree_state_t *st, js_ctx_t *ctx, js_rows_t *proc, js_rows_t *info)
{
    st->norder = 0;
    if (!ctx->scope.top_n && st->counted_ns && st->now_ns - st->counted_ns < st->count_period_ns &&
        !ctx->final) {
        st->counted = false; /* without --top the node's processes are only counted, now and then */
        return 0;
    }
    int64_t cpu0 = ctx->scope.top_n ? 0 : thread_cpu_ns();
    int r = list_pids(st, ctx);
    st->counted_ns = st->now_ns;
    if (!ctx->scope.top_n)
        st->count_period_ns = ptree_node_count_period(cpu0 > 0 ? thread_cpu_ns() - cpu0 : 0);
    if (r < 0 || !ctx->scope.top_n)
        return r;
    if (st->nqueue > st->cand_cap) {
        cand_t *c = realloc(st->cand, st->nqueue * sizeof(*c));
        if (!c)
            return -ENOMEM;
        st->cand = c;
        st->cand_cap = st->nqueue;
    }
    st->ncand = 0;
    for (size_t i = 0; i < st->nqueue; i++) {
        int32_t pid = st->queue[i];
        if (pid == ctx->monitor_pid)
            continue;
        if (ctx->interruptible && (i & 255) == 255 && sampler_stop_pending())
            return -EINTR;
        cand_t *c = &st->cand[st->ncand];
        pent_t *e = NULL;
        if ((r = visit_stat(st, ctx, pid, &e, &c->ps, &c->fresh)) < 0)
            return r;
        if (r != 1)
            continue;
        uint64_t own = c->ps.utime + c->ps.stime;
        c->cpu = e->own_stamp + 1 == st->stamp && own >= e->own_ticks ? own - e->own_ticks : own;
        e->own_ticks = own;
        e->own_stamp = st->stamp;
        c->pid = pid;
        c->rss = c->ps.rss;
        c->pick = false;
        st->ncand++;
    }
    return ptree_pick_top(st, ctx, proc, info, false);
}

static int tree_collect(void *state, js_ctx_t *ctx, js_rows_t *const *rows)
{
    tree_state_t *st = state;
    js_rows_t *proc = rows[0], *info = rows[1], *tree = rows[2], *exits = rows[3], *stepd = rows[4];
    int r = 0;
    const size_t first = proc->nrows;
    st->stamp++;
    st->nseen = 0;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    st->now_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    st->nqueue = 0;
    st->nzombies = 0;
    st->counted = true;
    budget_update(st);
    st->unread = 0;
    bool root_alive = false;
    st->backend = "procfs";
    struct timespec boot;
    bool have_boot = st->live && clock_gettime(CLOCK_BOOTTIME, &boot) == 0;
    /* auto: whether to switch to BPF is judged on the last sample's size (st->nprocs for a user or the node),
     * so the count is reset only after the check */
    bool bpf = ptree_bpf_wanted(st, ctx, st->live);
    st->nprocs = 0;
    if (bpf) {
        size_t proc_rows = proc->nrows, info_rows = info->nrows;
        r = ptree_collect_bpf(st, ctx, proc, info, &root_alive);
        if (r == -ENOMEM)
            return r;
        if (r == 0)
            goto done;
        /* the reader failed: drop what it wrote and read this sample, and the next ones, from /proc */
        ptree_bpf_drop(st, ctx, r);
        proc->nrows = proc_rows;
        info->nrows = info_rows;
        st->nzombies = 0;
        root_alive = false;
        st->backend = "procfs";
    }
    /* auto, undecided: what /proc costs, against what the reader would (ptree_bpf_account); not at the first
     * sample, whose opening of every process's files and command lines is no sample's cost */
    bool weigh = ctx->backend == JS_BACKEND_AUTO && !st->bpf && !st->bpf_refused && st->live && ctx->seq > 0;
    double c0 = weigh ? (double)ptree_thread_cpu_ns() : NAN;
    switch (ctx->scope.kind) {
    case JS_SCOPE_CGROUP:
        st->norder = 0;
        if (!ctx->scope.cgroup)
            break;
        r = cgroupfs_pids(ctx->scope.cgroup, true, &st->cgpids);
        if (r == -ENOENT || r == -ENODEV) { /* the cgroup was removed: the scope is over */
            ctx->scope_gone = true;
            r = 0;
            break;
        }
        if (r == 0)
            r = collect_list(st, ctx, st->cgpids.pid, st->cgpids.n, proc, info);
        break;
    case JS_SCOPE_USER:
        r = collect_user(st, ctx, proc, info);
        break;
    case JS_SCOPE_NODE:
        r = collect_node(st, ctx, proc, info);
        break;
    default:
        if (st->scan && (r = scan_build(st, ctx)) < 0)
            return r;
        if (stepd_mode(ctx) && (r = ptree_stepd_refresh(st, ctx, stepd)) < 0)
            return r;
        r = collect_tree(st, ctx, proc, info, &root_alive);
        if (r == 0 && stepd_mode(ctx))
            ptree_stepd_settle(st, ctx, stepd, proc);
    }
    if (r < 0)
        return r;
    if (weigh)
        ptree_bpf_account(st, ctx, (double)ptree_thread_cpu_ns() - c0);
done:
    read_smaps_all(st, ctx, proc, first);
    /* forget processes not seen this sample (collected first: deletion moves entries); none when every entry
     * was seen, as with a steady membership: no walk over the table then */
    st->nqueue = 0;
    for (size_t i = 0; st->nseen != st->procs.count && i < st->procs.cap; i++) {
        pent_t *e;
        int32_t pid = pidmap_at(&st->procs, i, (void **)&e);
        if (pid && e->seen != st->stamp && ptree_push_pid(&st->queue, &st->nqueue, &st->queue_cap, pid) < 0)
            return -ENOMEM;
    }
    for (size_t i = 0; i < st->nqueue; i++)
        ptree_ent_remove(st, pidmap_get(&st->procs, st->queue[i]));
    js_value_t *t = rows_add(tree);
    if (!t)
        return -ENOMEM;
    val_int(&t[TREE_MEMBERS], (int64_t)st->norder);
    if ((ctx->scope.kind == JS_SCOPE_NODE || ctx->scope.kind == JS_SCOPE_USER) && st->counted)
        val_int(&t[TREE_NODE_PROCS], (int64_t)st->nprocs);
    val_int(&t[TREE_ROOT_ALIVE], root_alive);
    const char *how = ctx->scope.kind == JS_SCOPE_CGROUP ? "cgroup.procs"
                      : ctx->scope.kind == JS_SCOPE_USER ? "uid"
                      : ctx->scope.kind == JS_SCOPE_NODE ? "node"
                      : stepd_mode(ctx)                  ? "slurmstepd"
                      : st->scan                         ? "scan"
                                                         : "children";
    rows_set_str(tree, &t[TREE_DISCOVERY], how, strlen(how));
    rows_set_str(tree, &t[TREE_BACKEND], st->backend, strlen(st->backend));
    val_int(&t[TREE_UNREAD], (int64_t)st->unread);
    if (have_boot)
        val_int(&t[TREE_T_BOOT], (int64_t)boot.tv_sec * 1000000000 + boot.tv_nsec);
    if (ctx->mode == JS_MODE_RUN)
        reaped_totals(st, ctx, t);
    emit_exits(ctx, exits); /* last: an interrupted sample keeps them queued for the next */
    if (ctx->backend == JS_BACKEND_AUTO && !st->bpf && !st->bpf_refused && (ctx->seq & 1023) == 1023)
        ctx->inventory_changed = true; /* what auto has weighed so far, now and then */
    ctx->live_members = st->norder - st->nzombies;
    /* stepd roots: the work on this node is over when the explicit slurmstepd is gone, or when the one step
     * watched has no slurmstepd left (after one was seen), and no member is left; a whole job (every step)
     * ends by signal or stop file only, as its steps come and go */
    if (stepd_mode(ctx) && !ctx->live_members &&
        ((ctx->scope.stepd_pid > 0 && !st->stepd_pid_alive) ||
         (ctx->scope.stepd_pid <= 0 && ctx->scope.stepd_step && st->stepd_seen && !st->nroots)))
        ctx->scope_gone = true;
    return 0;
}

/* tree_inventory: which backend reads the processes, and why not BPF when it is not; written at the first
 * sample, when the backend changes, and at the closing sample (the last row of a key is the run's). */
static int tree_inventory(void *state, const js_ctx_t *ctx, js_rows_t *inv)
{
    tree_state_t *st = state;
    static const char *const names[JS_BACKEND_MAX] = {"auto", "bpf", "procfs"};
    int r = inventory_add(inv, "proc_tree", "backend.requested", names[ctx->backend]);
    if (r == 0 && st->bpf) {
        tasks_bpf_info_t bi;
        tasks_bpf_info(st->bpf, &bi);
        r = inventory_addf(inv, "proc_tree", "backend.bpf",
                           "loaded at sample %llu (%s mode; rss %s): %llu load (%.1f ms of CPU), array of %u "
                           "records grown %llu times; %zu procfs descriptors closed",
                           (unsigned long long)st->bpf_loaded_at, bi.mode,
                           bi.rss_exact ? "exact" : "from the counters alone", (unsigned long long)bi.loads,
                           st->bpf_load_cpu_ns / 1e6, bi.capacity, (unsigned long long)bi.grows,
                           st->fds_closed);
    } else if (r == 0 && st->bpf_refused) {
        r = inventory_addf(inv, "proc_tree", "backend.bpf", "refused: %s", st->bpf_why);
    } else if (r == 0 && ctx->backend == JS_BACKEND_PROCFS) {
        r = inventory_add(inv, "proc_tree", "backend.bpf", "not used (--backend procfs)");
    } else if (r == 0) {
        r = inventory_addf(
            inv, "proc_tree", "backend.bpf",
            "not loaded (auto): /proc cost %.2f ms of CPU more than the BPF reader would have, "
            "less than its load (%.0f ms)",
            st->bpf_saved_ns / 1e6, BPF_LOAD_NS / 1e6);
    }
    return r;
}

static const js_table_t *const tree_tables[] = {&table_proc,  &table_proc_info, &table_tree,
                                                &table_exits, &table_stepd,     NULL};

const js_source_t source_proc_tree = {
    .name = "proc_tree",
    .help = "the monitored process tree: per-process counters, membership, reaped totals",
    .tables = tree_tables,
    .init = tree_init,
    .collect = tree_collect,
    .fini = tree_fini,
    .inventory = tree_inventory,
};
