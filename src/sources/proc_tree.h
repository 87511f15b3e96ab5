/* SPDX-License-Identifier: MIT
 *
 * The process-tree source: which processes belong to the monitored scope (the command and every descendant,
 * including orphans re-parented to the monitor) and their raw per-process counters. Column indices are
 * exposed so the model reads values without name lookups; parsers are exposed for the unit tests.
 */
#ifndef JOBSCOPE_PROC_TREE_H
#define JOBSCOPE_PROC_TREE_H

#include "core/table.h"
#include "sys/fsroot.h"

#include <regex.h>
#include <stdint.h>

enum {
    PROC_PID,
    PROC_START_TICKS,
    PROC_PPID,
    PROC_STATE,
    PROC_UTIME,
    PROC_STIME,
    PROC_CUTIME,
    PROC_CSTIME,
    PROC_THREADS,
    PROC_MINFLT,
    PROC_MAJFLT,
    PROC_CMINFLT,
    PROC_CMAJFLT,
    PROC_VSIZE,
    PROC_RSS,
    PROC_SHARED,
    PROC_RSS_ANON,
    PROC_RSS_FILE,
    PROC_RSS_SHMEM,
    PROC_SWAP,
    PROC_HWM,
    PROC_VCSW,
    PROC_IVCSW,
    PROC_RCHAR,
    PROC_WCHAR,
    PROC_SYSCR,
    PROC_SYSCW,
    PROC_READ_BYTES,
    PROC_WRITE_BYTES,
    PROC_CANCELLED_WRITE_BYTES,
    PROC_FDS,
    PROC_USS,
    PROC_PSS,
    PROC_SWAP_PSS,
    PROC_PROCESSOR,
    PROC_SIGIGNORE,
    PROC_CPU_NS,
    PROC__MAX
};

enum { INFO_PID, INFO_START_TICKS, INFO_PPID, INFO_UID, INFO_COMM, INFO_CMDLINE, INFO__MAX };

enum {
    TREE_MEMBERS,
    TREE_ROOT_ALIVE,
    TREE_DISCOVERY,
    TREE_UNREAD,
    TREE_NODE_PROCS,
    TREE_BACKEND,
    TREE_REAPED_UTIME,
    TREE_REAPED_STIME,
    TREE_REAPED_MAXRSS,
    TREE_REAPED_MINFLT,
    TREE_REAPED_MAJFLT,
    TREE_REAPED_NVCSW,
    TREE_REAPED_NIVCSW,
    TREE_REAPED_RCHAR,
    TREE_REAPED_WCHAR,
    TREE_REAPED_SYSCR,
    TREE_REAPED_SYSCW,
    TREE_REAPED_READ_BYTES,
    TREE_REAPED_WRITE_BYTES,
    TREE_T_BOOT,
    TREE__MAX
};

enum {
    EXIT_PID,
    EXIT_STATUS,
    EXIT_CODE,
    EXIT_SIGNAL,
    EXIT_T_UNIX,
    EXIT_UTIME,
    EXIT_STIME,
    EXIT_MAXRSS,
    EXIT_MINFLT,
    EXIT_MAJFLT,
    EXIT_INBLOCK,
    EXIT_OUBLOCK,
    EXIT__MAX
};

/* jobscope job without a cgroup: the slurmstepd roots, one row per sample and root (their own CPU is not the
 * job's; what they reaped, cutime and cstime, is: the tasks that exited) */
enum {
    STEPD_PID,
    STEPD_START_TICKS,
    STEPD_STEP,
    STEPD_CUTIME,
    STEPD_CSTIME,
    STEPD_UTIME,
    STEPD_STIME,
    STEPD__MAX
};

extern const js_table_t table_proc;      /* per sample and process */
extern const js_table_t table_proc_info; /* when a process is first seen or execs */
extern const js_table_t table_tree;      /* per sample: membership and what the monitor reaped */
extern const js_table_t table_exits;     /* per child reaped by the monitor (wait4 rusage) */
extern const js_table_t table_stepd;     /* per sample and slurmstepd root (jobscope job without a cgroup) */
/* The twins of the tables above for the embedded monitor's levels (sources/levels.c): same columns. */
extern const js_table_t table_level_user_proc, table_level_user_proc_info, table_level_user_tree;
extern const js_table_t table_level_job_proc, table_level_job_proc_info, table_level_job_tree,
    table_level_job_stepd;

/* The parsed /proc/<pid>/io fields, each with a present flag (the file is root-only for other users). */
typedef struct {
    uint64_t v[7];   /* rchar wchar syscr syscw read_bytes write_bytes cancelled_write_bytes */
    uint8_t present; /* bit i set when v[i] was read */
} js_pid_io_t;

/* proc_parse_io: parse /proc/<pid>/io text. Returns 0 (fields found are flagged) or -EINVAL if none. */
int proc_parse_io(const char *text, js_pid_io_t *ret);

/* proc_parse_statm: parse /proc/<pid>/statm; sets *ret_resident and *ret_shared in pages. 0 or -EINVAL. */
int proc_parse_statm(const char *text, uint64_t *ret_resident, uint64_t *ret_shared);

/* The /proc/<pid>/status fields used, in bytes / counts; absent keys leave their bit clear. */
typedef struct {
    uint64_t rss_anon, rss_file, rss_shmem, swap, hwm, vcsw, ivcsw, uid;
    uint16_t present; /* bits in the order of the fields above */
} js_pid_status_t;

/* proc_parse_status: parse /proc/<pid>/status text. Returns 0. */
int proc_parse_status(const char *text, js_pid_status_t *ret);

/* The smaps_rollup sums used, bytes. USS = Private_Clean + Private_Dirty + Private_Hugetlb. */
typedef struct {
    uint64_t rss, pss, uss, swap_pss;
    bool ok;
} js_pid_smaps_t;

/* proc_parse_smaps_rollup: parse /proc/<pid>/smaps_rollup text. Returns 0 or -EINVAL (no Pss line). */
int proc_parse_smaps_rollup(const char *text, js_pid_smaps_t *ret);

/* proc_cmdline_json: render a NUL-separated cmdline of `len` bytes as a JSON array of strings into `b`.
 * Returns 0 or -ENOMEM. */
int proc_cmdline_json(const char *raw, size_t len, js_buf_t *b);

/* proc_cmdline_redact: a copy of the NUL-separated cmdline `raw` (`len` bytes) into `out` in which every
 * match of `re` within an argument is replaced by "***" (an empty match replaces nothing). `out` holds the
 * same number of NUL-ended arguments. Returns 0 or -ENOMEM. */
int proc_cmdline_redact(const regex_t *re, const char *raw, size_t len, js_buf_t *out);

#endif
