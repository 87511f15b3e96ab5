/* SPDX-License-Identifier: MIT OR GPL-2.0-only
 *
 * The record the BPF task reader (tasks.bpf.c) writes for each process, one fixed-size struct per process
 * into an array the loader (tasks_bpf.c) maps, and the counters the program keeps about its work. Shared by
 * the BPF object and user space, so only fixed-width __u32/__s64 types appear. The record holds raw kernel
 * figures (nanoseconds, pages, the raw task state); tasks_bpf.c turns them into what /proc shows (clock
 * ticks, bytes, a state letter). A record starts with its size: the loader rejects a record of another size
 * (an object built from another version of this header).
 */
#ifndef JOBSCOPE_TASKS_BPF_RAW_H
#define JOBSCOPE_TASKS_BPF_RAW_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define TASKS_BPF_MAX_CPUS 1024 /* per-CPU offsets kept; a power of two (the index is masked) */
#define TASKS_BPF_FD_WORDS 8    /* open-fd bitmap words read per probe */

/* pid_filter map values (tasks mode) */
#define TASKS_BPF_F_MEMBER 1u /* report this process */
#define TASKS_BPF_F_PARENT 2u /* report its children (with follow), not itself */
#define TASKS_BPF_F_AUTO 4u   /* added by the BPF program: a child of a filtered process */

/* tasks_bpf_raw.flags */
#define TASKS_BPF_R_MM (1u << 0)         /* has an address space: the memory fields are set */
#define TASKS_BPF_R_RSS_EXACT (1u << 1)  /* rss_sum includes every CPU's pending delta */
#define TASKS_BPF_R_FILES (1u << 2)      /* has a file table: fds is set */
#define TASKS_BPF_R_RACED (1u << 3)      /* a thread exited during every attempt: sums may be off once */
#define TASKS_BPF_R_DISCOVERED (1u << 4) /* tasks mode: added to the filter as a child of a filtered one */
#define TASKS_BPF_R_PID_HIDDEN (1u << 5) /* not visible in the reader's PID namespace (pid = 0) */
#define TASKS_BPF_R_KTHREAD (1u << 6)    /* a kernel thread */
/* the process has not run since its last full record (same start, same leader runtime, one thread), which its
 * slot still held: only the identity, state, CPU, switches and memory were written again over that record */
#define TASKS_BPF_R_SAME (1u << 7)
/* a full record of a process of one thread, not runnable, whose leader's runtime was leader_runtime: the next
 * pass may reuse it in place (same slot, same process, same runtime) */
#define TASKS_BPF_R_BASE (1u << 8)

/* mm counters, in this order in rss_sum / rss_count (the kernel's own order: MM_FILEPAGES .. MM_SHMEMPAGES)
 */
#define TASKS_BPF_RSS_FILE 0
#define TASKS_BPF_RSS_ANON 1
#define TASKS_BPF_RSS_SWAP 2
#define TASKS_BPF_RSS_SHMEM 3

struct tasks_bpf_raw {
    __u32 size;                   /* sizeof(struct tasks_bpf_raw) */
    __u32 flags;                  /* TASKS_BPF_R_* */
    __s32 pid;                    /* thread-group ID in the reader's PID namespace (0: hidden) */
    __s32 ppid;                   /* parent's thread-group ID there (0: none or hidden) */
    __s32 host_pid, host_ppid;    /* the same in the initial PID namespace */
    __s32 nr_threads;             /* signal->nr_threads (stat field 20) */
    __s32 threads_walked;         /* threads summed */
    __u32 state;                  /* leader's __state */
    __u32 exit_state;             /* leader's exit_state */
    __u32 cpu;                    /* leader's CPU (stat field 39) */
    __u32 uid;                    /* real UID (kuid) */
    __u32 fds;                    /* open descriptors (bits set in the fd table's open_fds) */
    __u32 attempts;               /* reads of the group sums (a thread exiting forces a retry) */
    __u64 start_ns;               /* start_boottime */
    __u64 leader_runtime;         /* the leader's se.sum_exec_runtime (read before the rest of the record) */
    __u64 utime, stime;           /* ns, tick-sampled, live threads + exited ones (signal) */
    __u64 sum_exec;               /* ns, scheduler runtime, live threads + exited ones */
    __u64 prev_utime, prev_stime; /* signal->prev_cputime: the last split /proc or getrusage handed out */
    __u64 cutime, cstime;         /* ns, reaped children */
    __u64 min_flt, maj_flt, cmin_flt, cmaj_flt;
    __u64 nvcsw, nivcsw;             /* the leader thread's (what /proc/PID/status shows) */
    __u64 group_nvcsw, group_nivcsw; /* every thread + exited ones (getrusage RUSAGE_SELF) */
    __u64 io[7]; /* rchar wchar syscr syscw read_bytes write_bytes cancelled_write_bytes: threads + signal */
    __u64 total_vm;     /* pages */
    __u64 hiwater_rss;  /* pages, the peak recorded at the last RSS drop */
    __s64 rss_sum[4];   /* pages: count + every CPU's delta (percpu_counter_sum) */
    __s64 rss_count[4]; /* pages: count alone (percpu_counter_read, what stat field 24 sums) */
    char comm[16];
};

/* what the BPF program counts about its own work (the .bss `stats`) */
struct tasks_bpf_stats {
    __u64 runs;       /* passes */
    __u64 visited;    /* processes looked at, last pass (tasks mode: all of the machine's) */
    __u64 matched;    /* processes reported, last pass (more than `out` holds when it was too small) */
    __u64 written;    /* records written into `out`, last pass */
    __u64 cgroups;    /* cgroups walked, last pass */
    __u64 missing;    /* cgroups that vanished under the walk, all passes */
    __u64 root_gone;  /* cgroup mode: the subtree's root cgroup no longer exists (last pass) */
    __u64 pcpu_state; /* 0 not tried, 1 per-CPU offsets found, 2 failed (RSS from the counts alone) */
    __u64 pcpu_step;  /* where the offset search failed */
    __u64 reused;     /* records of the last pass flagged TASKS_BPF_R_SAME */
};

#endif
