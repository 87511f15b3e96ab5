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
#include "sources/proc_tree.h"

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

/* ---- parsers --------------------------------------------------------------------------------------- */

int proc_parse_io(const char *text, js_pid_io_t *ret)
{
    static const char *const keys[7] = {
        "rchar:", "wchar:", "syscr:", "syscw:", "read_bytes:", "write_bytes:", "cancelled_write_bytes:"};
    ret->present = 0;
    for (int i = 0; i < 7; i++)
        if (kv_u64(text, keys[i], &ret->v[i]) == 0)
            ret->present |= (uint8_t)(1u << i);
    return ret->present ? 0 : -EINVAL;
}

int proc_parse_statm(const char *text, uint64_t *ret_resident, uint64_t *ret_shared)
{
    const char *p = text;
    uint64_t size, res, shared;
    if (parse_u64(&p, &size) < 0 || parse_u64(&p, &res) < 0 || parse_u64(&p, &shared) < 0)
        return -EINVAL;
    *ret_resident = res;
    *ret_shared = shared;
    return 0;
}

int proc_parse_status(const char *text, js_pid_status_t *ret)
{
    static const struct {
        const char *key;
        uint8_t len, bit, kb;
    } keys[] = {
        {"RssAnon:", 8, 0, 1},
        {"RssFile:", 8, 1, 1},
        {"RssShmem:", 9, 2, 1},
        {"VmSwap:", 7, 3, 1},
        {"VmHWM:", 6, 4, 1},
        {"voluntary_ctxt_switches:", 24, 5, 0},
        {"nonvoluntary_ctxt_switches:", 27, 6, 0},
        {"Uid:", 4, 7, 0},
    };
    uint64_t *dst[8] = {&ret->rss_anon, &ret->rss_file, &ret->rss_shmem, &ret->swap,
                        &ret->hwm,      &ret->vcsw,     &ret->ivcsw,     &ret->uid};
    ret->present = 0;
    /* one pass over the lines; only lines starting with R, V, v, n or U can match */
    for (const char *line = text; line && *line;) {
        char c = *line;
        if (c == 'R' || c == 'V' || c == 'v' || c == 'n' || c == 'U') {
            for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
                if (keys[i].key[0] != c || strncmp(line, keys[i].key, keys[i].len) != 0)
                    continue;
                const char *v = line + keys[i].len;
                uint64_t x;
                if (parse_u64(&v, &x) == 0) {
                    *dst[keys[i].bit] = keys[i].kb ? x * 1024 : x;
                    ret->present |= (uint16_t)(1u << keys[i].bit);
                }
                break;
            }
        }
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return 0;
}

int proc_parse_smaps_rollup(const char *text, js_pid_smaps_t *ret)
{
    uint64_t pc = 0, pd = 0, ph = 0;
    memset(ret, 0, sizeof(*ret));
    if (kv_u64(text, "Pss:", &ret->pss) < 0)
        return -EINVAL;
    kv_u64(text, "Rss:", &ret->rss);
    kv_u64(text, "Private_Clean:", &pc);
    kv_u64(text, "Private_Dirty:", &pd);
    kv_u64(text, "Private_Hugetlb:", &ph);
    kv_u64(text, "SwapPss:", &ret->swap_pss);
    ret->rss *= 1024;
    ret->pss *= 1024;
    ret->swap_pss *= 1024;
    ret->uss = (pc + pd + ph) * 1024;
    ret->ok = true;
    return 0;
}

int proc_cmdline_json(const char *raw, size_t len, js_buf_t *b)
{
    b->len = 0;
    if (buf_append(b, "[", 1) < 0)
        return -ENOMEM;
    /* the kernel ends the last argument with a NUL; a process that rewrote its argv may not */
    size_t i = 0;
    bool first = true;
    while (i < len) {
        size_t j = i;
        while (j < len && raw[j] != '\0')
            j++;
        if (!first && buf_append(b, ",", 1) < 0)
            return -ENOMEM;
        if (json_str(b, raw + i, j - i) < 0)
            return -ENOMEM;
        first = false;
        i = j + 1;
    }
    return buf_append(b, "]", 1);
}

int proc_cmdline_redact(const regex_t *re, const char *raw, size_t len, js_buf_t *out)
{
    out->len = 0;
    if (buf_reserve(out, len + 1) < 0)
        return -ENOMEM;
    js_buf_t arg = {0};
    int r = 0;
    for (size_t i = 0; i < len && r == 0;) {
        size_t j = i;
        while (j < len && raw[j] != '\0')
            j++;
        arg.len = 0;
        if ((r = buf_append(&arg, raw + i, j - i)) < 0) /* NUL-terminated for regexec */
            break;
        if (!arg.p && (r = buf_append(&arg, "", 0)) < 0)
            break;
        const char *p = arg.p;
        int flags = 0;
        regmatch_t m;
        while (r == 0 && *p && regexec(re, p, 1, &m, flags) == 0) {
            if (m.rm_eo == m.rm_so) { /* an empty match: keep one character and look on */
                r = buf_append(out, p, 1);
                p++;
            } else {
                if ((r = buf_append(out, p, (size_t)m.rm_so)) == 0)
                    r = buf_append(out, "***", 3);
                p += m.rm_eo;
            }
            flags = REG_NOTBOL;
        }
        if (r == 0)
            r = buf_append(out, p, strlen(p));
        if (r == 0)
            r = buf_append(out, "", 1) < 0 ? -ENOMEM : 0; /* the argument's NUL */
        if (r == 0 && buf_reserve(out, out->len + 1) == 0)
            out->p[out->len] = '\0';
        i = j + 1;
    }
    buf_free(&arg);
    return r < 0 ? -ENOMEM : 0;
}

/* ---- state ------------------------------------------------------------------------------------------ */

typedef struct {
    int32_t pid;
    uint64_t start;
    int fd_stat, fd_statm, fd_io, fd_children, fd_fddir; /* fd_fddir: O_PATH to /proc/<pid>/fd */
    uint64_t seen;                                       /* sample stamp */
    bool io_denied;
    bool kept;           /* its descriptors are kept open across samples (within the descriptor budget) */
    uint64_t rss_at_uss; /* bytes: RSS when smaps_rollup was last read (0: never) */
    uint64_t rss_prev;   /* bytes: RSS at the last sample (smaps_moved) */
    uint64_t own_ticks;  /* node scope: utime+stime at the last sample, for the top-N choice */
    uint64_t own_stamp;  /* the sample own_ticks is from */
    bool info_done;    /* its proc_info row was written (the node scope writes rows for some samples only) */
    uint64_t image;    /* js_pid_stat_t.image when its proc_info row was written: another one is an exec */
    uint8_t bad_reads; /* samples in a row whose stat did not parse */
    char comm[64];
} pent_t;

/* user scope: what is known of a process's user, by PID (every process of the node, members or not) */
typedef struct {
    uint32_t ruid, euid; /* real UID (status), and the owner of /proc/PID (its effective UID) when read */
    uint64_t seen;       /* sample stamp */
} uent_t;

/* node scope: a candidate for the top lists */
typedef struct {
    int32_t pid;
    uint64_t cpu; /* ticks over the interval (first sight: since it started) */
    int64_t rss;  /* pages (stat field 24) */
    bool fresh, pick;
    size_t idx; /* BPF backend: the record's index in tree_state_t.recs */
    js_pid_stat_t ps;
} cand_t;

/* stepd roots: what is known of a process of the node, by PID (every process, slurmstepd or not) */
typedef struct {
    uint64_t seen; /* sample stamp */
    int8_t ours;   /* 1: a slurmstepd of the job, a root; -1: any other process */
    int8_t node;   /* its tasks run on this node: 1 yes, -1 no, 0 not known yet (no task to ask) */
    uint8_t young; /* samples left during which it is looked at again: a process first seen may still exec
                    * (slurmd forks, then the child execs slurmstepd, under the same PID) */
    uint8_t asked; /* samples its task could not say (not exec'd yet: still root's, with slurmstepd's empty
                    * environment) */
    char step[24];
} sent_t;

#define STEPD_ASK_MAX 8 /* samples a slurmstepd's node may stay unknown before it is taken as this one's */
#define STEPD_RECLASSIFY 16
#define STEPD_YOUNG                                                                                          \
    3 /* a process is classified again at its first samples (it may exec slurmstepd) */ /* every N samples   \
                                                                                           every process is  \
                                                                                           looked at again   \
                                                                                           (a PID reused by  \
                                                                                           a slurmstepd) */

typedef struct {
    js_pidmap_t procs; /* pid -> pent_t */
    int32_t *order;    /* members of the last sample, parents first */
    size_t norder, order_cap;
    int32_t *queue;
    size_t nqueue, queue_cap;
    js_buf_t buf, buf2, cmd, redacted;
    long page;
    bool fd_by_stat; /* st_size of /proc/<pid>/fd is the fd count (Linux >= 6.2) */
    bool scan;       /* no task/<tid>/children: discover by scanning /proc */
    /* scan mode: (ppid, pid) pairs sorted by ppid */
    int32_t (*pairs)[2];
    size_t npairs, pairs_cap;
    uint64_t stamp;
    int64_t now_ns;     /* CLOCK_MONOTONIC at this sample's start (the node count cadence) */
    int64_t counted_ns; /* node scope without --top: when the node's processes were last counted */
    bool counted;       /* user and node scope: nprocs counted this sample */
    size_t nzombies;    /* members of the current sample that have exited but are not reaped yet */
    /* run mode: the monitor's own children file and io files, kept open (it is one thread) */
    int fd_mon_children, fd_mon_io, fd_mon_thread_io;
    /* descriptor budget: processes whose files are kept open, and at most how many (from RLIMIT_NOFILE) */
    size_t nkept, keep_max;
    bool keep_capped; /* the limit was hit once: keep_max stays where it was then */
    size_t unread;    /* members of this sample that could not be read (no descriptor left, ...) */
    js_pidmap_t uids; /* user scope: pid -> uent_t */
    cand_t *cand;     /* node scope: this sample's processes */
    size_t ncand, cand_cap;
    size_t nprocs;       /* user and node scope: processes on the node this sample */
    js_cg_pids_t cgpids; /* cgroup scope: this sample's processes of the cgroup */
    int32_t *stale;      /* scratch: cache entries to forget */
    size_t nstale, stale_cap;
    /* the BPF backend (docs/ARCHITECTURE.md, "Backends") */
    tasks_bpf_t *bpf;
    bool bpf_refused;  /* it could not be opened (or failed): /proc from then on */
    char bpf_why[256]; /* why, for the inventory */
    /* auto: /proc's CPU above what the BPF reader would have cost, summed over the samples so far; the reader
     * is loaded once that passes the load's cost (bpf_pays) */
    double bpf_saved_ns, bpf_last_saving_ns;
    uint64_t bpf_loaded_at; /* the sample it was loaded at */
    double bpf_load_cpu_ns; /* what the load cost (thread CPU) */
    size_t fds_closed;      /* procfs descriptors closed when the reader took over */
    const char *backend;    /* this sample's: "procfs", "bpf-tasks", "bpf-cgroup" */
    uint8_t *how;           /* tasks_bpf_set_pids' kinds, beside `queue` */
    size_t how_cap;
    tasks_bpf_record_t *recs; /* node scope: this pass's records */
    size_t nrecs, recs_cap;
    bool live; /* the procfs root is the running kernel's (the BPF reader reads that kernel) */
    /* stepd roots (ctx->scope.stepd_job or stepd_pid) */
    js_pidmap_t stepds; /* pid -> sent_t */
    int32_t *roots;     /* this sample's live roots */
    int32_t *tasks;     /* their children this sample (the monitor is woken when one exits) */
    size_t ntasks, tasks_cap;
    size_t nroots, roots_cap;
    bool stepd_seen;      /* a root was seen once */
    bool stepd_pid_alive; /* the explicit slurmstepd (stepd_pid) exists this sample */
    /* smaps_rollup of every member at once (read_smaps_all) */
    bool smaps_event;    /* this sample: a member is new, exec'd, or its RSS moved since its last read */
    uint64_t smaps_hash; /* membership (pid, start) at the last full read, and its size */
    size_t smaps_n;
    bool smaps_once;       /* a full read was made */
    int64_t smaps_last_ns; /* CLOCK_MONOTONIC of the last full read (--uss-every with a unit) */
    int64_t smaps_next_ns; /* CLOCK_MONOTONIC before which an event does not trigger another one (budget) */
} tree_state_t;

static bool stepd_mode(const js_ctx_t *ctx)
{
    return ctx->scope.kind == JS_SCOPE_TREE && (ctx->scope.stepd_job || ctx->scope.stepd_pid > 0);
}

/* auto: what the BPF reader costs, for weighing it against /proc (docs/BENCHMARKS.md: one load 40-60 ms of
 * CPU, a pass 0.3 us per process it reports plus 0.07 us per other process on the node in tasks mode, and the
 * row) */
#define BPF_LOAD_NS 60e6
#define BPF_PASS_NS 5e3
#define BPF_PER_PROC_NS 500.0
#define BPF_PER_VISIT_NS 75.0

/* node scope without --top: the node's processes are counted (a walk of /proc, about 3 us per process: most
 * of watch --node's cost at 1 s) every this long, and at the closing sample */
#define NODE_COUNT_NS 10000000000LL

#define KEPT_PER_PROC 5       /* stat, statm, io, children, fd directory */
#define FD_RESERVE 256        /* descriptors left for everything else: the recording, other sources, reads */
#define SMAPS_MOVED_DIV 10    /* a member's RSS moved by more than 1/10 of its value at the last read */
#define SMAPS_SETTLED_DIV 100 /* ... or it settled (moved by at most 1/100 since the last sample) */
#define SMAPS_PLATEAU_DIV 50  /* ... more than 1/50 away from its value at the last read */
#define SMAPS_MOVED_MIN                                                                                      \
    (1u << 20) /* ... and by more than 1 MiB: smaps_rollup is read again for every member */
/* event-driven full reads use at most 1/SMAPS_BUDGET of one CPU (the next one no sooner than its cost times
 * that): a tenth where the PSS sum is the scope's memory headline, a hundredth where the scope has a cgroup
 * of its own (whose high-water mark is the headline) */
#define SMAPS_BUDGET_PSS 10
#define SMAPS_BUDGET_CGROUP 100

static void ent_close(pent_t *e)
{
    int *fds[5] = {&e->fd_stat, &e->fd_statm, &e->fd_io, &e->fd_children, &e->fd_fddir};
    for (int i = 0; i < 5; i++) {
        if (*fds[i] >= 0)
            close(*fds[i]);
        *fds[i] = -1;
    }
}

/* ent_insert: a new entry for `pid` (not present), descriptors closed. Pointers to entries are invalidated.
 */
static pent_t *ent_insert(tree_state_t *st, int32_t pid)
{
    pent_t *e = pidmap_put(&st->procs, pid, NULL);
    if (!e)
        return NULL;
    e->pid = pid;
    e->fd_stat = e->fd_statm = e->fd_io = e->fd_children = e->fd_fddir = -1;
    return e;
}

/* ent_remove: close `e`'s descriptors and delete it. Pointers to entries are invalidated. */
static void ent_remove(tree_state_t *st, pent_t *e)
{
    ent_close(e);
    if (e->kept)
        st->nkept--;
    pidmap_del(&st->procs, e->pid);
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
        ent_close(e);
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

static int push_pid(int32_t **arr, size_t *n, size_t *cap, int32_t pid)
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

/* forget_unseen: delete from `m` every entry whose sample stamp (the uint64_t at `seen_off` in the entry) is
 * not this sample's: the processes gone since the last listing. Collected first, since deletion moves
 * entries. Returns 0 or -ENOMEM (nothing deleted then). */
static int forget_unseen(tree_state_t *st, js_pidmap_t *m, size_t seen_off)
{
    st->nstale = 0;
    for (size_t i = 0; i < m->cap; i++) {
        void *e;
        int32_t pid = pidmap_at(m, i, &e);
        uint64_t seen;
        if (!pid)
            continue;
        memcpy(&seen, (const char *)e + seen_off, sizeof(seen));
        if (seen != st->stamp && push_pid(&st->stale, &st->nstale, &st->stale_cap, pid) < 0)
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
                ent_close(e);
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

static bool bpf_wanted(tree_state_t *st, js_ctx_t *ctx, bool live);
static void bpf_opts_for(const js_ctx_t *ctx, tasks_bpf_opts_t *o);

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
        bpf_wanted(st, (js_ctx_t *)ctx,
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
            ent_close(e);
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
static int enqueue_list(tree_state_t *st, const char *text)
{
    const char *p = text;
    uint64_t v;
    while (parse_u64(&p, &v) == 0) {
        if (v > 0 && v <= INT32_MAX && push_pid(&st->queue, &st->nqueue, &st->queue_cap, (int32_t)v) < 0)
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

static int scan_children(tree_state_t *st, int32_t ppid)
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
        if (push_pid(&st->queue, &st->nqueue, &st->queue_cap, st->pairs[lo][1]) < 0)
            return -ENOMEM;
    return 0;
}

/* enqueue_children: children of every thread of `pid`. Single-threaded processes read one children file
 * (kept open when the process keeps its descriptors). */
static int enqueue_children(tree_state_t *st, const js_ctx_t *ctx, pent_t *e, int64_t threads)
{
    if (st->scan)
        return scan_children(st, e->pid);
    char path[300];
    if (threads <= 1) {
        snprintf(path, sizeof(path), "%d/task/%d/children", (int)e->pid, (int)e->pid);
        int r = pread_proc(st, ctx, e, &e->fd_children, path, &st->buf2, READ_PAGED);
        if (out_of_fds(r))
            st->unread++; /* its children cannot be found this sample */
        return r < 0 ? 0 : enqueue_list(st, st->buf2.p);
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
            r = enqueue_list(st, st->buf2.p);
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

/* emit_info: the proc_info row for a new process or one that exec'd. */
static void emit_info(tree_state_t *st, const js_ctx_t *ctx, pent_t *e, js_rows_t *info,
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

/* smaps_moved: whether member `e` asks for smaps_rollup of every member this sample: it is new or exec'd,
 * was never read, or its RSS moved (up or down) by more than a tenth and 1 MiB since its last read; or its
 * RSS settled (within 1% of the last sample's) at a level more than 1/50 and 1 MiB away from its last read:
 * the plateau after a growth that began within a tenth of the last read (with --uss-every 30s no periodic
 * read would catch it in a short run). Remembers `rss` for the next sample. */
static bool smaps_moved(pent_t *e, bool fresh, bool exec, uint64_t rss)
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

static int64_t thread_cpu_ns(void)
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
 * exec'd or its RSS moved by more than a tenth (smaps_moved), or when the sample is taken for phase marks
 * (ctx->for_marks). The budget: after a full read that cost c seconds of CPU, an event triggers the next one
 * no sooner than SMAPS_BUDGET_* x c later (smaps_rollup walks the page tables: about 16 us per MiB resident).
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
    int64_t c0 = thread_cpu_ns();
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
        now + (thread_cpu_ns() - c0) * (ctx->scope.cgroup ? SMAPS_BUDGET_CGROUP : SMAPS_BUDGET_PSS);
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
            e = ent_insert(st, pid);
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
            e->seen = st->stamp;
            return 2;
        }
        /* gone, or the PID was reused by a new process: drop the old entry and retry once fresh (a kept
         * descriptor of the old process says ESRCH where the path may already name a new one) */
        ent_remove(st, e);
        e = NULL;
        if (fresh)
            return 0;
    }
    if (!e)
        return 0;
    e->seen = st->stamp;
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
    if (smaps_moved(e, fresh, exec, rss))
        st->smaps_event = true;
    if (fresh || exec || !e->info_done) {
        emit_info(st, ctx, e, info, ps, have_status ? &pst : NULL);
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

/* stepd_classify: whether process `pid` is a slurmstepd of the job that is a root (1) or not (-1). */
static int8_t stepd_classify(tree_state_t *st, const js_ctx_t *ctx, int32_t pid, sent_t *e)
{
    char path[64], text[1024];
    snprintf(path, sizeof(path), "%d/stat", (int)pid);
    js_pid_stat_t ps;
    if (fs_read_small(ctx->root.proc, path, text, sizeof(text)) <= 0 || parse_pid_stat(text, &ps) < 0 ||
        strcmp(ps.comm, "slurmstepd") != 0)
        return -1;
    snprintf(path, sizeof(path), "%d/cmdline", (int)pid);
    ssize_t n = fs_read_small(ctx->root.proc, path, text, sizeof(text));
    char job[64];
    if (n <= 0 || stepd_parse_cmdline(text, (size_t)n, job, sizeof(job), e->step, sizeof(e->step)) < 0 ||
        strcmp(job, ctx->scope.stepd_job) != 0)
        return -1;
    if (ctx->scope.stepd_step && strcmp(e->step, ctx->scope.stepd_step) != 0)
        return -1;
    if (ctx->scope.stepd_skip && strcmp(e->step, ctx->scope.stepd_skip) == 0)
        return -1;
    (void)st;
    return 1;
}

/* stepd_node_of: whether the tasks of slurmstepd `pid` run on this node: the first task's SLURMD_NODENAME
 * (1 when it is this node's or cannot be read, -1 when it is another's, 0 while the slurmstepd has no task).
 */
static int8_t stepd_node_of(tree_state_t *st, const js_ctx_t *ctx, int32_t pid)
{
    char path[96];
    snprintf(path, sizeof(path), "%d/task", (int)pid);
    js_pid_iter_t it;
    if (pid_iter_open(&it, ctx->root.proc, path) < 0)
        return 0;
    uint64_t child = 0;
    int32_t tid;
    while (!child && (tid = pid_iter_next(&it))) {
        snprintf(path, sizeof(path), "%d/children", (int)tid);
        const char *p = st->buf2.p;
        if (fs_read(pid_iter_fd(&it), path, &st->buf2) == 0 && (p = st->buf2.p) && parse_u64(&p, &child) < 0)
            child = 0;
    }
    pid_iter_close(&it);
    if (!child)
        return 0;
    snprintf(path, sizeof(path), "%llu/environ", (unsigned long long)child);
    int r = fs_read(ctx->root.proc, path, &st->buf2);
    if (r < 0)
        return 0; /* gone, or not readable yet (a task is root's until slurmstepd drops to the job's user) */
    static const char key[] = "SLURMD_NODENAME=";
    for (size_t i = 0; i < st->buf2.len; i += strlen(st->buf2.p + i) + 1)
        if (strncmp(st->buf2.p + i, key, sizeof(key) - 1) == 0)
            return strcmp(st->buf2.p + i + sizeof(key) - 1, ctx->scope.stepd_node) == 0 ? 1 : -1;
    return 0; /* not exec'd yet: slurmstepd's own (empty) environment */
}

/* stepd_root: read root `pid`'s stat into a row of `srows` and add it to this sample's roots, if it lives. */
static int stepd_root(tree_state_t *st, const js_ctx_t *ctx, int32_t pid, const char *step, js_rows_t *srows)
{
    char path[64], text[1024];
    snprintf(path, sizeof(path), "%d/stat", (int)pid);
    js_pid_stat_t ps;
    if (fs_read_small(ctx->root.proc, path, text, sizeof(text)) <= 0 || parse_pid_stat(text, &ps) < 0 ||
        ps.state == 'Z' || ps.state == 'X')
        return 0;
    js_value_t *v = rows_add(srows);
    if (!v || push_pid(&st->roots, &st->nroots, &st->roots_cap, pid) < 0)
        return -ENOMEM;
    val_int(&v[STEPD_PID], pid);
    val_int(&v[STEPD_START_TICKS], (int64_t)ps.starttime);
    if (step && rows_set_str(srows, &v[STEPD_STEP], step, strlen(step)) < 0)
        return -ENOMEM;
    val_int(&v[STEPD_CUTIME], (int64_t)ps.cutime);
    val_int(&v[STEPD_CSTIME], (int64_t)ps.cstime);
    val_int(&v[STEPD_UTIME], (int64_t)ps.utime);
    val_int(&v[STEPD_STIME], (int64_t)ps.stime);
    st->stepd_seen = true;
    return 0;
}

/* stepd_refresh: this sample's slurmstepd roots (st->roots) and their rows: the explicit one, or every
 * slurmstepd of the job. A process is classified once when first listed (and again every STEPD_RECLASSIFY
 * samples, for a reused PID), so a sample costs one listing of the procfs root and a stat per root. */
static int stepd_refresh(tree_state_t *st, const js_ctx_t *ctx, js_rows_t *srows)
{
    st->nroots = 0;
    if (ctx->scope.stepd_pid > 0) {
        int r = stepd_root(st, ctx, (int32_t)ctx->scope.stepd_pid, ctx->scope.stepd_step, srows);
        st->stepd_pid_alive = st->nroots > 0;
        return r;
    }
    js_pid_iter_t it;
    int r = pid_iter_open(&it, ctx->root.proc, ".");
    if (r < 0)
        return r;
    bool again = st->stamp % STEPD_RECLASSIFY == 0;
    int32_t pid;
    while (r == 0 && (pid = pid_iter_next(&it))) {
        int fresh = 0;
        sent_t *e = pidmap_put(&st->stepds, pid, &fresh);
        if (!e) {
            r = -ENOMEM;
            break;
        }
        if (fresh)
            e->young = STEPD_YOUNG;
        if (fresh || again || e->ours == 0 || (e->young && e->ours != 1)) {
            if (e->young)
                e->young--;
            e->ours = stepd_classify(st, ctx, pid, e);
            e->node = ctx->scope.stepd_node && *ctx->scope.stepd_node ? 0 : 1;
            e->asked = 0;
        }
        e->seen = st->stamp;
        if (e->ours == 1 && e->node == 0) {
            e->node = stepd_node_of(st, ctx, pid);
            if (e->node == 0 && ++e->asked >= STEPD_ASK_MAX)
                e->node = 1; /* its tasks never say (a setuid program): one host, one node */
        }
        if (e->ours == 1 && e->node == 1)
            r = stepd_root(st, ctx, pid, e->step, srows);
    }
    pid_iter_close(&it);
    if (r < 0)
        return r;
    /* forget processes gone since the last listing */
    return forget_unseen(st, &st->stepds, offsetof(sent_t, seen));
}

/* drop_member: take `pid`'s row out of this sample's proc rows and members (it was reaped meanwhile). */
static void drop_member(tree_state_t *st, js_rows_t *proc, int32_t pid)
{
    size_t nc = proc->table->ncols;
    for (size_t i = 0; i < proc->nrows; i++)
        if (rows_row(proc, i)[PROC_PID].present && rows_row(proc, i)[PROC_PID].i == pid) {
            memmove(&proc->v[i * nc], &proc->v[(i + 1) * nc], (proc->nrows - i - 1) * nc * sizeof(*proc->v));
            proc->nrows--;
            break;
        }
    for (size_t i = 0; i < st->norder; i++)
        if (st->order[i] == pid) {
            memmove(&st->order[i], &st->order[i + 1], (st->norder - i - 1) * sizeof(*st->order));
            st->norder--;
            break;
        }
}

/* stepd_settle: after the walk, read the roots' reaped CPU again. A slurmstepd that reaped a task while the
 * tree was walked has it in its cutime now: its row takes the new figures, and a task whose row was taken
 * before it was reaped (it is gone now) leaves this sample's rows, so that it is counted once, through its
 * slurmstepd, not also as a live member. */
static void stepd_settle(tree_state_t *st, const js_ctx_t *ctx, js_rows_t *srows, js_rows_t *proc)
{
    bool changed = false;
    for (size_t k = 0; k < srows->nrows; k++) {
        js_value_t *v = rows_row(srows, k);
        char path[64], text[1024];
        snprintf(path, sizeof(path), "%d/stat", (int)v[STEPD_PID].i);
        js_pid_stat_t ps;
        if (fs_read_small(ctx->root.proc, path, text, sizeof(text)) <= 0 || parse_pid_stat(text, &ps) < 0 ||
            (int64_t)ps.starttime != v[STEPD_START_TICKS].i)
            continue; /* gone: its figures as read before the walk */
        if ((int64_t)ps.cutime != v[STEPD_CUTIME].i || (int64_t)ps.cstime != v[STEPD_CSTIME].i) {
            val_int(&v[STEPD_CUTIME], (int64_t)ps.cutime);
            val_int(&v[STEPD_CSTIME], (int64_t)ps.cstime);
            changed = true;
        }
    }
    for (size_t i = 0; changed && i < st->ntasks; i++) {
        char path[64], text[64];
        snprintf(path, sizeof(path), "%d/stat", (int)st->tasks[i]);
        if (fs_read_small(ctx->root.proc, path, text, sizeof(text)) <= 0)
            drop_member(st, proc, st->tasks[i]);
    }
}

/* stepd_children: every child of every thread of root `pid` (slurmstepd is multi-threaded). */
static int stepd_children(tree_state_t *st, const js_ctx_t *ctx, int32_t pid)
{
    if (st->scan)
        return scan_children(st, pid);
    char path[64];
    snprintf(path, sizeof(path), "%d/task", (int)pid);
    js_pid_iter_t it;
    int r = pid_iter_open(&it, ctx->root.proc, path);
    if (r < 0)
        return r == -ENOMEM ? r : 0; /* gone */
    int32_t tid;
    while (r == 0 && (tid = pid_iter_next(&it))) {
        snprintf(path, sizeof(path), "%d/children", (int)tid);
        if (fs_read(pid_iter_fd(&it), path, &st->buf2) == 0)
            r = enqueue_list(st, st->buf2.p);
    }
    pid_iter_close(&it);
    return r;
}

/* collect_tree: run and attach: the roots (run: every child of the monitor, a subreaper; the command or the
 * PID given), then last sample's members in their order, then the children of each member, breadth-first. */
static int collect_tree(tree_state_t *st, js_ctx_t *ctx, js_rows_t *proc, js_rows_t *info, bool *root_alive)
{
    if (ctx->mode == JS_MODE_RUN) {
        char path[64];
        snprintf(path, sizeof(path), "%d/task/%d/children", (int)ctx->monitor_pid, (int)ctx->monitor_pid);
        if (!st->scan && kept_read(ctx->root.proc, &st->fd_mon_children, path, &st->buf2, READ_PAGED) == 0 &&
            enqueue_list(st, st->buf2.p) < 0)
            return -ENOMEM;
        if (st->scan && scan_children(st, ctx->monitor_pid) < 0)
            return -ENOMEM;
    }
    if (ctx->root_pid > 0 && push_pid(&st->queue, &st->nqueue, &st->queue_cap, ctx->root_pid) < 0)
        return -ENOMEM;
    size_t first_task = st->nqueue;
    for (size_t i = 0; i < st->nroots; i++) /* stepd roots: their children are the tasks */
        if (stepd_children(st, ctx, st->roots[i]) < 0)
            return -ENOMEM;
    st->ntasks = 0;
    for (size_t i = first_task; i < st->nqueue; i++)
        if (st->queue[i] != ctx->monitor_pid &&
            push_pid(&st->tasks, &st->ntasks, &st->tasks_cap, st->queue[i]) < 0)
            return -ENOMEM;
    ctx->watch_pids = st->tasks;
    ctx->nwatch_pids = st->ntasks;
    for (size_t i = 0; i < st->norder; i++)
        if (push_pid(&st->queue, &st->nqueue, &st->queue_cap, st->order[i]) < 0)
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
            if (push_pid(&st->order, &st->norder, &st->order_cap, pid) < 0)
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
        if (v >= 1 && push_pid(&st->order, &st->norder, &st->order_cap, pids[i]) < 0)
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
        r = push_pid(&st->queue, &st->nqueue, &st->queue_cap, pid);
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
    if (forget_unseen(st, &st->uids, offsetof(uent_t, seen)) < 0)
        return -ENOMEM;
    st->nqueue = nmember;
    return collect_list(st, ctx, st->queue, nmember, proc, info);
}
/* ---- the BPF backend --------------------------------------------------------------------------------- */

/* bpf_mode_for: the reader's mode for this scope: a cgroup with a v2 directory is walked alone (iter over its
 * css_tasks: only the job's processes are visited); a tree is read through a PID filter that follows
 * children; a user's or the node's processes are every process of the node. */
static void bpf_opts_for(const js_ctx_t *ctx, tasks_bpf_opts_t *o)
{
    tasks_bpf_opts_init(o);
    o->sys_fd = ctx->root.sys;
    const js_cgroup_t *cg = ctx->scope.cgroup;
    bool v2 = cg && cg->m.unified >= 0 && cg->dir[cg->m.unified] >= 0;
    if (v2 && (ctx->scope.kind == JS_SCOPE_CGROUP || ctx->scope.kind == JS_SCOPE_TREE)) {
        o->mode = TASKS_BPF_CGROUP;
        o->cgroup_fd = cg->dir[cg->m.unified];
    } else if (ctx->scope.kind == JS_SCOPE_TREE || ctx->scope.kind == JS_SCOPE_CGROUP) {
        o->mode = TASKS_BPF_TASKS;
        o->filter = true;
        o->follow = ctx->scope.kind == JS_SCOPE_TREE;
    } else {
        o->mode = TASKS_BPF_TASKS; /* the node's every process; a user's are picked by their UID */
    }
}

/* bpf_cost_ns: what one pass of the BPF reader would cost for this sample's processes. */
static double bpf_cost_ns(const tree_state_t *st, const js_ctx_t *ctx)
{
    tasks_bpf_opts_t o;
    bpf_opts_for(ctx, &o);
    size_t n =
        ctx->scope.kind == JS_SCOPE_TREE || ctx->scope.kind == JS_SCOPE_CGROUP ? st->norder : st->nprocs;
    double cost = BPF_PASS_NS + BPF_PER_PROC_NS * (double)n;
    if (o.mode == TASKS_BPF_TASKS && o.filter) { /* the filtered walk visits every task of the node */
        struct sysinfo si;
        if (sysinfo(&si) == 0)
            cost += BPF_PER_VISIT_NS * (double)si.procs;
    }
    return cost;
}

/* bpf_account: auto mode, after a sample read through /proc that cost `spent_ns` of CPU: add what the BPF
 * reader would have saved. */
static void bpf_account(tree_state_t *st, const js_ctx_t *ctx, double spent_ns)
{
    if (isnan(spent_ns))
        return;
    double saving = spent_ns - bpf_cost_ns(st, ctx);
    st->bpf_last_saving_ns = saving > 0 ? saving : 0;
    st->bpf_saved_ns += st->bpf_last_saving_ns;
}

/* bpf_pays: auto mode: whether loading the reader now pays within the run, its load counted. The run's length
 * is not known in general, so the reader is loaded once /proc has cost, over the samples so far, as much more
 * than the reader would have as the load costs: never more than twice the cheaper choice's cost, whatever the
 * run's length (the rent-or-buy rule). When --duration says how many samples are left, at once if what they
 * save at the last sample's rate pays for the load. */
static bool bpf_pays(const tree_state_t *st, const js_ctx_t *ctx)
{
    if (st->bpf_saved_ns >= BPF_LOAD_NS)
        return true;
    if (ctx->end_mono_ns > 0 && ctx->interval_ns > 0 && st->bpf_last_saving_ns > 0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        double left = ((double)ctx->end_mono_ns - ((double)ts.tv_sec * 1e9 + (double)ts.tv_nsec)) /
                      (double)ctx->interval_ns;
        return left * st->bpf_last_saving_ns >= BPF_LOAD_NS;
    }
    return false;
}

/* fds_release: the BPF reader takes over: the descriptors /proc kept open are of no use to it, and closing
 * them first means the reader never competes with them for the descriptor limit (with thousands of processes
 * they can fill it). /proc reopens what it needs should the reader be refused or fail. */
static void fds_release(tree_state_t *st)
{
    for (size_t i = 0; i < st->procs.cap; i++) {
        pent_t *e;
        if (!pidmap_at(&st->procs, i, (void **)&e) || !e->kept)
            continue;
        for (int k = 0; k < 5; k++) {
            int fd = k == 0   ? e->fd_stat
                     : k == 1 ? e->fd_statm
                     : k == 2 ? e->fd_io
                     : k == 3 ? e->fd_children
                              : e->fd_fddir;
            st->fds_closed += fd >= 0;
        }
        ent_close(e);
        e->kept = false;
        st->nkept--;
    }
}

/* bpf_wanted: whether to read this sample through the BPF reader, loading it now if it is wanted: at once
 * with --backend bpf; in auto mode for a tree or a cgroup when it pays within the run (bpf_pays), never for
 * a user's or the node's processes (the walk of every task missed PID 1 on Linux 6.18). A refusal is final
 * for the run, its reason kept for the inventory. */
static bool bpf_wanted(tree_state_t *st, js_ctx_t *ctx, bool live)
{
    if (st->bpf)
        return true;
    if (ctx->backend == JS_BACKEND_PROCFS || st->bpf_refused)
        return false;
    if (stepd_mode(ctx)) { /* the reader follows one root; these roots are found through /proc */
        snprintf(st->bpf_why, sizeof(st->bpf_why), "not used with slurmstepd roots");
        st->bpf_refused = true;
        return false;
    }
    if (!live) {
        snprintf(st->bpf_why, sizeof(st->bpf_why), "the procfs root is not the running kernel's");
        st->bpf_refused = ctx->backend == JS_BACKEND_BPF;
        return false;
    }
    if (ctx->backend == JS_BACKEND_AUTO) {
        if (ctx->scope.kind == JS_SCOPE_NODE && !ctx->scope.top_n) {
            snprintf(st->bpf_why, sizeof(st->bpf_why), "no per-process reads (watch --node without --top)");
            st->bpf_refused = true;
            return false;
        }
        if (ctx->scope.kind == JS_SCOPE_NODE || ctx->scope.kind == JS_SCOPE_USER) {
            /* the walk of every task missed processes (the init process, PID 1, on Linux 6.18, and at
             * times another user's): a node's or a user's processes are read through /proc unless asked */
            snprintf(st->bpf_why, sizeof(st->bpf_why),
                     "auto: not for a user's or the node's processes (--backend bpf to use it)");
            st->bpf_refused = true;
            return false;
        }
        if (!bpf_pays(st, ctx))
            return false;
    }
    tasks_bpf_opts_t o;
    bpf_opts_for(ctx, &o);
    size_t n =
        ctx->scope.kind == JS_SCOPE_TREE || ctx->scope.kind == JS_SCOPE_CGROUP ? st->norder : st->nprocs;
    o.expect = n > UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t)n;
    fds_release(st);
    double c0 = (double)thread_cpu_ns();
    int r = tasks_bpf_open(&o, &st->bpf, st->bpf_why, sizeof(st->bpf_why));
    st->bpf_load_cpu_ns = (double)thread_cpu_ns() - c0;
    ctx->inventory_changed = true;
    if (r < 0) {
        st->bpf = NULL;
        st->bpf_refused = true; /* the reason stays in bpf_why (inventory and source_stats) */
        return false;
    }
    st->bpf_loaded_at = ctx->seq;
    return true;
}

/* bpf_drop: the reader failed mid-run: /proc from now on, with the reason. */
static void bpf_drop(tree_state_t *st, js_ctx_t *ctx, int r)
{
    ctx->inventory_changed = true;
    snprintf(st->bpf_why, sizeof(st->bpf_why),
             "the BPF reader failed during the run (%s): /proc from then on", strerror(-r));
    tasks_bpf_close(st->bpf);
    st->bpf = NULL;
    st->bpf_refused = true;
}

/* bpf_row: the proc row (and proc_info when new or exec'd) of one record; cmdline and smaps_rollup still from
 * /proc. Returns 0 or -ENOMEM. */
static int bpf_row(tree_state_t *st, js_ctx_t *ctx, const tasks_bpf_record_t *rec, js_rows_t *proc,
                   js_rows_t *info)
{
    pent_t *e = pidmap_get(&st->procs, rec->pid);
    if (e && e->start != rec->start_ticks) { /* the PID names another process now */
        ent_remove(st, e);
        e = NULL;
    }
    bool fresh = !e;
    if (!e) {
        if (!(e = ent_insert(st, rec->pid)))
            return -ENOMEM;
        e->start = rec->start_ticks;
    }
    if (e->seen == st->stamp)
        return 0;
    e->seen = st->stamp;
    if (rec->state == 'Z' || rec->state == 'X')
        st->nzombies++;
    js_value_t *v = rows_add(proc);
    if (!v)
        return -ENOMEM;
    val_int(&v[PROC_PID], rec->pid);
    val_int(&v[PROC_START_TICKS], (int64_t)rec->start_ticks);
    val_int(&v[PROC_PPID], rec->ppid);
    rows_set_str(proc, &v[PROC_STATE], &rec->state, 1);
    val_int(&v[PROC_UTIME], (int64_t)rec->utime_ticks);
    val_int(&v[PROC_STIME], (int64_t)rec->stime_ticks);
    val_int(&v[PROC_CUTIME], (int64_t)rec->cutime_ticks);
    val_int(&v[PROC_CSTIME], (int64_t)rec->cstime_ticks);
    val_int(&v[PROC_CPU_NS], (int64_t)rec->cpu_ns);
    val_int(&v[PROC_THREADS], rec->threads);
    val_int(&v[PROC_MINFLT], (int64_t)rec->minflt);
    val_int(&v[PROC_MAJFLT], (int64_t)rec->majflt);
    val_int(&v[PROC_CMINFLT], (int64_t)rec->cminflt);
    val_int(&v[PROC_CMAJFLT], (int64_t)rec->cmajflt);
    val_int(&v[PROC_PROCESSOR], rec->processor);
    uint64_t rss = rec->rss_bytes;
    if (rec->flags & TASKS_BPF_HAS_MM) {
        val_int(&v[PROC_VSIZE], (int64_t)rec->vsize_bytes);
        val_int(&v[PROC_RSS], (int64_t)rec->rss_bytes);
        val_int(&v[PROC_SHARED], (int64_t)rec->shared_bytes);
        val_int(&v[PROC_RSS_ANON], (int64_t)rec->rss_anon_bytes);
        val_int(&v[PROC_RSS_FILE], (int64_t)rec->rss_file_bytes);
        val_int(&v[PROC_RSS_SHMEM], (int64_t)rec->rss_shmem_bytes);
        val_int(&v[PROC_SWAP], (int64_t)rec->swap_bytes);
        val_int(&v[PROC_HWM], (int64_t)rec->hwm_bytes);
    } else {
        val_int(&v[PROC_VSIZE], 0);
        val_int(&v[PROC_RSS], 0);
        rss = 0;
    }
    val_int(&v[PROC_VCSW], (int64_t)rec->vcsw);
    val_int(&v[PROC_IVCSW], (int64_t)rec->ivcsw);
    for (int i = 0; i < 7; i++)
        val_int(&v[PROC_RCHAR + i], (int64_t)rec->io[i]);
    val_int(&v[PROC_FDS], rec->fds);
    if (ctx->host_fds && rec->pid == ctx->root_pid)
        ctx->host_fds_now = ctx->host_fds(rec->fds);
    bool exec = !fresh && strncmp(e->comm, rec->comm, sizeof(rec->comm)) != 0;
    if (smaps_moved(e, fresh, exec, rss))
        st->smaps_event = true;
    if (fresh || exec || !e->info_done) {
        js_pid_stat_t ps = {.pid = rec->pid, .ppid = rec->ppid, .starttime = rec->start_ticks};
        snprintf(ps.comm, sizeof(ps.comm), "%s", rec->comm);
        js_pid_status_t pst = {.uid = rec->uid, .present = 1u << 7};
        emit_info(st, ctx, e, info, &ps, &pst);
        snprintf(e->comm, sizeof(e->comm), "%s", rec->comm);
        e->info_done = true;
    }
    return 0;
}

typedef struct {
    tree_state_t *st;
    js_ctx_t *ctx;
    js_rows_t *proc, *info;
    bool *root_alive;
    size_t n; /* members found */
} bpf_pass_t;

/* bpf_member: a record of a member (tree, cgroup, user): its row, and it joins this sample's members (in
 * `queue`, copied into `order` once the pass succeeded). */
static int bpf_member(const tasks_bpf_record_t *rec, void *arg)
{
    bpf_pass_t *p = arg;
    tree_state_t *st = p->st;
    if (rec->pid <= 0 || rec->pid == p->ctx->monitor_pid || (rec->flags & TASKS_BPF_KTHREAD))
        return 0;
    if (p->ctx->scope.kind == JS_SCOPE_USER && rec->uid != (uint32_t)p->ctx->scope.uid)
        return 0;
    int r = bpf_row(st, p->ctx, rec, p->proc, p->info);
    if (r < 0)
        return r;
    if (rec->pid == p->ctx->root_pid)
        *p->root_alive = true;
    p->n++;
    return push_pid(&st->queue, &st->nqueue, &st->queue_cap, rec->pid);
}

/* bpf_keep: node scope: every process's record, for the top lists. */
static int bpf_keep(const tasks_bpf_record_t *rec, void *arg)
{
    bpf_pass_t *p = arg;
    tree_state_t *st = p->st;
    if (rec->pid <= 0 || rec->pid == p->ctx->monitor_pid || (rec->flags & TASKS_BPF_KTHREAD))
        return 0;
    if (st->nrecs == st->recs_cap) {
        size_t cap = st->recs_cap ? st->recs_cap * 2 : 256;
        tasks_bpf_record_t *r = realloc(st->recs, cap * sizeof(*r));
        if (!r)
            return -ENOMEM;
        st->recs = r;
        st->recs_cap = cap;
    }
    st->recs[st->nrecs++] = *rec;
    return 0;
}

static int pick_top(tree_state_t *st, js_ctx_t *ctx, js_rows_t *proc, js_rows_t *info, bool bpf);

/* collect_bpf: one sample through the BPF reader. Returns 0, -ENOMEM, or another negative errno when the
 * reader failed (the caller then drops it and reads /proc; nothing of this sample is kept). */
static int collect_bpf(tree_state_t *st, js_ctx_t *ctx, js_rows_t *proc, js_rows_t *info, bool *root_alive)
{
    bpf_pass_t p = {.st = st, .ctx = ctx, .proc = proc, .info = info, .root_alive = root_alive};
    tasks_bpf_info_t bi;
    tasks_bpf_info(st->bpf, &bi);
    bool cgroup_mode = strcmp(bi.mode, "cgroup") == 0;
    st->backend = cgroup_mode ? "bpf-cgroup" : "bpf-tasks";
    int r;
    if (!cgroup_mode && (ctx->scope.kind == JS_SCOPE_TREE || ctx->scope.kind == JS_SCOPE_CGROUP)) {
        /* the filter: last sample's members and the root (tree), or the cgroup's processes (a v1 cgroup) */
        st->nqueue = 0;
        if (ctx->scope.kind == JS_SCOPE_CGROUP) {
            if ((r = cgroupfs_pids(ctx->scope.cgroup, true, &st->cgpids)) < 0)
                return r == -ENOENT ? (ctx->scope_gone = true, 0) : r;
            for (size_t i = 0; i < st->cgpids.n; i++)
                if (push_pid(&st->queue, &st->nqueue, &st->queue_cap, st->cgpids.pid[i]) < 0)
                    return -ENOMEM;
        } else {
            for (size_t i = 0; i < st->norder; i++)
                if (push_pid(&st->queue, &st->nqueue, &st->queue_cap, st->order[i]) < 0)
                    return -ENOMEM;
            if (push_pid(&st->queue, &st->nqueue, &st->queue_cap, ctx->root_pid) < 0 ||
                (ctx->mode == JS_MODE_RUN &&
                 push_pid(&st->queue, &st->nqueue, &st->queue_cap, ctx->monitor_pid) < 0))
                return -ENOMEM;
        }
        if (st->nqueue > st->how_cap) {
            uint8_t *h = realloc(st->how, st->nqueue);
            if (!h)
                return -ENOMEM;
            st->how = h;
            st->how_cap = st->nqueue;
        }
        for (size_t i = 0; i < st->nqueue; i++) /* the monitor: only its children (orphans it adopted) */
            st->how[i] = st->queue[i] == ctx->monitor_pid ? TASKS_BPF_PID_PARENT : TASKS_BPF_PID_MEMBER;
        if ((r = tasks_bpf_set_pids(st->bpf, st->queue, st->how, st->nqueue)) < 0)
            return r;
    }
    st->nqueue = 0;
    uint64_t grows = bi.grows;
    if (ctx->scope.kind != JS_SCOPE_NODE) {
        r = tasks_bpf_read(st->bpf, bpf_member, &p);
        if (r == -ENOENT && cgroup_mode) { /* the cgroup was removed */
            ctx->scope_gone = true;
            r = 0;
        }
        if (r < 0)
            return r;
        tasks_bpf_info(st->bpf, &bi);
        ctx->inventory_changed |= bi.grows != grows; /* the array grew: its size in the inventory */
        st->norder = 0;
        for (size_t i = 0; i < st->nqueue; i++)
            if (push_pid(&st->order, &st->norder, &st->order_cap, st->queue[i]) < 0)
                return -ENOMEM;
        if (ctx->scope.kind == JS_SCOPE_USER) {
            tasks_bpf_info(st->bpf, &bi);
            st->nprocs = (size_t)bi.visited;
        }
        return 0;
    }
    /* node: every record, then rows for the top N by CPU over the interval and by RSS */
    st->nrecs = 0;
    if ((r = tasks_bpf_read(st->bpf, bpf_keep, &p)) < 0)
        return r;
    tasks_bpf_info(st->bpf, &bi);
    ctx->inventory_changed |= bi.grows != grows;
    st->nprocs = st->nrecs;
    if (st->nrecs > st->cand_cap) {
        cand_t *c = realloc(st->cand, st->nrecs * sizeof(*c));
        if (!c)
            return -ENOMEM;
        st->cand = c;
        st->cand_cap = st->nrecs;
    }
    st->ncand = 0;
    for (size_t i = 0; i < st->nrecs; i++) {
        const tasks_bpf_record_t *rec = &st->recs[i];
        pent_t *e = pidmap_get(&st->procs, rec->pid);
        uint64_t own = rec->utime_ticks + rec->stime_ticks, d = own;
        if (e && e->start == rec->start_ticks && e->own_stamp + 1 == st->stamp && own >= e->own_ticks)
            d = own - e->own_ticks;
        if (!e || e->start != rec->start_ticks) {
            if (e)
                ent_remove(st, e);
            if (!(e = ent_insert(st, rec->pid)))
                return -ENOMEM;
            e->start = rec->start_ticks;
        }
        e->own_ticks = own;
        e->own_stamp = st->stamp;
        e->seen = st->stamp; /* known, whether it gets a row or not */
        st->cand[st->ncand++] = (cand_t){.pid = rec->pid, .cpu = d, .rss = (int64_t)rec->rss_bytes, .idx = i};
    }
    return pick_top(st, ctx, proc, info, true);
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

/* pick_top: the node scope's rows: the top N candidates by CPU over the interval and the top N by RSS, from
 * their stat (procfs) or their record (BPF). Returns 0 or -ENOMEM. */
static int pick_top(tree_state_t *st, js_ctx_t *ctx, js_rows_t *proc, js_rows_t *info, bool bpf)
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
            e->seen = st->stamp - 1; /* bpf_row writes a row once per sample */
            r = bpf_row(st, ctx, &st->recs[c->idx], proc, info);
        } else {
            r = visit_row(st, ctx, e, &c->ps, c->fresh, proc, info);
        }
        if (r < 0)
            return r;
        if (push_pid(&st->order, &st->norder, &st->order_cap, c->pid) < 0)
            return -ENOMEM;
    }
    return 0;
}

/* collect_node: the whole node. Per-process detail only with a top N: every process's stat is read, and full
 * rows are written for the N that used the most CPU over the last interval and the N with the largest RSS. */
static int collect_node(tree_state_t *st, js_ctx_t *ctx, js_rows_t *proc, js_rows_t *info)
{
    st->norder = 0;
    if (!ctx->scope.top_n && st->counted_ns && st->now_ns - st->counted_ns < NODE_COUNT_NS && !ctx->final) {
        st->counted = false; /* without --top the node's processes are only counted, now and then */
        return 0;
    }
    int r = list_pids(st, ctx);
    st->counted_ns = st->now_ns;
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
    return pick_top(st, ctx, proc, info, false);
}

static int tree_collect(void *state, js_ctx_t *ctx, js_rows_t *const *rows)
{
    tree_state_t *st = state;
    js_rows_t *proc = rows[0], *info = rows[1], *tree = rows[2], *exits = rows[3], *stepd = rows[4];
    int r = 0;
    const size_t first = proc->nrows;
    st->stamp++;
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
    bool bpf = bpf_wanted(st, ctx, st->live);
    st->nprocs = 0;
    if (bpf) {
        size_t proc_rows = proc->nrows, info_rows = info->nrows;
        r = collect_bpf(st, ctx, proc, info, &root_alive);
        if (r == -ENOMEM)
            return r;
        if (r == 0)
            goto done;
        /* the reader failed: drop what it wrote and read this sample, and the next ones, from /proc */
        bpf_drop(st, ctx, r);
        proc->nrows = proc_rows;
        info->nrows = info_rows;
        st->nzombies = 0;
        root_alive = false;
        st->backend = "procfs";
    }
    /* auto, undecided: what /proc costs, against what the reader would (bpf_account); not at the first
     * sample, whose opening of every process's files and command lines is no sample's cost */
    bool weigh = ctx->backend == JS_BACKEND_AUTO && !st->bpf && !st->bpf_refused && st->live && ctx->seq > 0;
    double c0 = weigh ? (double)thread_cpu_ns() : NAN;
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
        if (stepd_mode(ctx) && (r = stepd_refresh(st, ctx, stepd)) < 0)
            return r;
        r = collect_tree(st, ctx, proc, info, &root_alive);
        if (r == 0 && stepd_mode(ctx))
            stepd_settle(st, ctx, stepd, proc);
    }
    if (r < 0)
        return r;
    if (weigh)
        bpf_account(st, ctx, (double)thread_cpu_ns() - c0);
done:
    read_smaps_all(st, ctx, proc, first);
    /* forget processes not seen this sample (collected first: deletion moves entries) */
    st->nqueue = 0;
    for (size_t i = 0; i < st->procs.cap; i++) {
        pent_t *e;
        int32_t pid = pidmap_at(&st->procs, i, (void **)&e);
        if (pid && e->seen != st->stamp && push_pid(&st->queue, &st->nqueue, &st->queue_cap, pid) < 0)
            return -ENOMEM;
    }
    for (size_t i = 0; i < st->nqueue; i++)
        ent_remove(st, pidmap_get(&st->procs, st->queue[i]));
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
