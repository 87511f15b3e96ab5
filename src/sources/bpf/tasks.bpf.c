// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * The BPF task reader: two BPF iterator programs that write one struct tasks_bpf_raw per process into the
 * iterator's seq_file, read by tasks_bpf.c with read() on the iterator descriptor.
 *
 *   dump_task    (iter/task)   every task on the machine; keeps thread-group leaders whose PID is in the
 *                              pid_filter map (or all of them when no filter is set), and, with follow set,
 *                              adds a leader whose parent is in the map to the map, so the children a member
 *                              forked since the last pass are found in the same pass;
 *   dump_cgroup  (iter/cgroup) the cgroups of one subtree; in each, every process through the open-coded
 *                              css_task iterator (Linux >= 6.7), so only the job's processes are visited.
 *
 * Each record carries the figures /proc derives its fields from, read the way fs/proc reads them:
 * - group sums over live threads (open-coded task iterator) plus what exited threads left in signal_struct:
 *   utime/stime/sum_exec_runtime (thread_group_cputime), min/maj faults (do_task_stat), I/O (do_io_accounting),
 *   context switches (getrusage); the leader's own context switches as /proc/PID/status shows them. A thread
 *   exiting during the walk moves its figures into signal_struct under stats_lock, so the walk is retried when
 *   that seqcount moved, as the kernel's readers do;
 * - the signal's prev_cputime, from which user space rescales utime/stime to sum_exec_runtime exactly as
 *   cputime_adjust() would (the program cannot store the kernel's state);
 * - RSS by type as /proc/PID/status and statm show it: percpu_counter_sum(), the counter's count plus every
 *   CPU's pending delta. The kernel's BTF tags no percpu pointer and its kallsyms lists no per-CPU symbol, so
 *   the per-CPU offsets are found once: the running task's runqueue (se.cfs_rq->rq) is this CPU's copy of the
 *   per-CPU variable `runqueues`; this CPU's `this_cpu_off` lies at a fixed distance from it (both offsets come
 *   from the kernel BTF's .data..percpu section, handed in as pcpu_delta) and holds this CPU's offset; the other
 *   CPUs' offsets follow from where a per-CPU array map puts its value on each CPU, and each is checked against
 *   that CPU's own this_cpu_off. If any step fails, RSS falls back to the counts alone (flag RSS_EXACT clear).
 * - the open-descriptor count as /proc/PID/fd's st_size: the bits set in the fd table's open_fds.
 * PIDs are given in the reader's PID namespace (the process reading the iterator), translated through
 * struct pid's numbers[] when that is not the initial namespace.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "tasks_bpf_raw.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* open-coded iterators (kfuncs, Linux >= 6.4 for numbers, 6.7 for tasks and css tasks) */
extern int bpf_iter_num_new(struct bpf_iter_num *it, int start, int end) __ksym;
extern int *bpf_iter_num_next(struct bpf_iter_num *it) __ksym;
extern void bpf_iter_num_destroy(struct bpf_iter_num *it) __ksym;
extern int bpf_iter_task_new(struct bpf_iter_task *it, struct task_struct *task, unsigned int flags) __ksym;
extern struct task_struct *bpf_iter_task_next(struct bpf_iter_task *it) __ksym;
extern void bpf_iter_task_destroy(struct bpf_iter_task *it) __ksym;
extern int bpf_iter_css_task_new(struct bpf_iter_css_task *it, struct cgroup_subsys_state *css,
                                 unsigned int flags) __ksym;
extern struct task_struct *bpf_iter_css_task_next(struct bpf_iter_css_task *it) __ksym;
extern void bpf_iter_css_task_destroy(struct bpf_iter_css_task *it) __ksym;

#define PF_KTHREAD 0x00200000

/* set by the loader before load */
const volatile __u32 filter_on = 0;   /* iter/task: report only what pid_filter selects */
const volatile __u32 follow = 0;      /* iter/task: add children of filtered processes to the filter */
const volatile __u32 nr_cpus = 1;     /* possible CPUs */
const volatile __s64 pcpu_delta = 0;  /* offset of runqueues minus offset of this_cpu_off in .data..percpu */
const volatile __u32 fd_words_max = 1 << 16; /* cap on open_fds words read (4 M descriptors) */

/* state kept between passes (the loader reads stats) */
struct tasks_bpf_stats stats = {};
__u64 pcpu_off[TASKS_BPF_MAX_CPUS] = {};
__u32 ns_state = 0; /* 0: the reader's PID namespace not looked up yet, 1: done */
__u32 ns_level = 0;
__u64 ns_ptr = 0;

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 65536); /* the loader sets it */
    __type(key, __u32);
    __type(value, __u8);
} pid_filter SEC(".maps");

/* the record under construction (too large for the stack) and the fd-bitmap words, per CPU */
struct scratch {
    struct tasks_bpf_raw rec;
    __u64 words[TASKS_BPF_FD_WORDS];
};

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct scratch);
} scratch_map SEC(".maps");

/* only its per-CPU placement matters: where its value lies on each CPU gives the CPUs' offsets */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __u64);
} pcpu_probe SEC(".maps");

static __always_inline __u64 popcount64(__u64 x)
{
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    return (x * 0x0101010101010101ULL) >> 56;
}

/* pcpu_fail: give up on exact RSS; `step` says where (the loader reports it). */
static __always_inline void pcpu_fail(__u64 step)
{
    stats.pcpu_step = step;
    stats.pcpu_state = 2;
}

/* pcpu_init: find every possible CPU's per-CPU offset (see the file comment), once. */
static __always_inline void pcpu_init(void)
{
    __u32 zero = 0;
    if (stats.pcpu_state != 0)
        return;
    if (pcpu_delta == 0 || !bpf_core_field_exists(struct sched_entity, cfs_rq)) {
        pcpu_fail(1);
        return;
    }
    struct task_struct *cur = bpf_get_current_task_btf();
    __u64 rq = (__u64)BPF_CORE_READ(cur, se.cfs_rq, rq);
    if (!rq) {
        pcpu_fail(2);
        return;
    }
    int rq_cpu = -1;
    bpf_probe_read_kernel(&rq_cpu, sizeof(rq_cpu), (void *)(rq + bpf_core_field_offset(struct rq, cpu)));
    __u32 this_cpu = bpf_get_smp_processor_id();
    if (rq_cpu != (int)this_cpu) {
        pcpu_fail(3);
        return;
    }
    __u64 tco = rq - (__u64)pcpu_delta; /* this CPU's this_cpu_off */
    __u64 off_here = 0;
    if (bpf_probe_read_kernel(&off_here, sizeof(off_here), (void *)tco) < 0 || off_here == 0) {
        pcpu_fail(4);
        return;
    }
    void *here = bpf_map_lookup_elem(&pcpu_probe, &zero);
    if (!here) {
        pcpu_fail(5);
        return;
    }
    struct bpf_iter_num it;
    int *c;
    __u32 bad = 0;
    bpf_iter_num_new(&it, 0, nr_cpus);
    while ((c = bpf_iter_num_next(&it))) {
        __u32 cpu = *c;
        if (cpu >= TASKS_BPF_MAX_CPUS) {
            bad = 6;
            break;
        }
        void *there = bpf_map_lookup_percpu_elem(&pcpu_probe, &zero, cpu);
        if (!there) {
            bad = 7;
            break;
        }
        __u64 off = off_here + (__u64)((long)there - (long)here);
        __u64 check = 0;
        /* that CPU's this_cpu_off holds that CPU's offset */
        if (bpf_probe_read_kernel(&check, sizeof(check), (void *)(tco - off_here + off)) < 0 || check != off) {
            bad = 8;
            break;
        }
        pcpu_off[cpu & (TASKS_BPF_MAX_CPUS - 1)] = off;
    }
    bpf_iter_num_destroy(&it);
    if (bad) {
        pcpu_fail(bad);
        return;
    }
    stats.pcpu_state = 1;
}

/* ns_init: the reader's PID namespace (level and pointer), once. */
static __always_inline void ns_init(void)
{
    if (ns_state)
        return;
    struct task_struct *cur = bpf_get_current_task_btf();
    struct pid *p = cur->thread_pid;
    if (p) {
        __u32 level = p->level;
        __u64 ns = 0;
        __u64 pa = (__u64)BPF_CORE_READ(cur, thread_pid);
        bpf_probe_read_kernel(&ns, sizeof(ns), (void *)(pa + bpf_core_field_offset(struct pid, numbers) +
                                                        (__u64)level * bpf_core_type_size(struct upid) +
                                                        bpf_core_field_offset(struct upid, ns)));
        ns_level = level;
        ns_ptr = ns;
    }
    ns_state = 1;
}

/* nr_in_ns: the number of the struct pid at address `pa` in the reader's namespace, 0 if not visible. */
static __always_inline __s32 nr_in_ns(__u64 pa)
{
    if (!pa)
        return 0;
    __u32 level = 0;
    bpf_probe_read_kernel(&level, sizeof(level), (void *)(pa + bpf_core_field_offset(struct pid, level)));
    if (ns_level > level)
        return 0;
    __u64 addr = pa + bpf_core_field_offset(struct pid, numbers) + (__u64)ns_level * bpf_core_type_size(struct upid);
    __s32 nr = 0;
    __u64 ns = 0;
    bpf_probe_read_kernel(&nr, sizeof(nr), (void *)(addr + bpf_core_field_offset(struct upid, nr)));
    bpf_probe_read_kernel(&ns, sizeof(ns), (void *)(addr + bpf_core_field_offset(struct upid, ns)));
    return ns == ns_ptr ? nr : 0;
}

/* tgid_nr: the thread-group ID of `t` in the reader's namespace (t->signal->pids[PIDTYPE_TGID]). */
static __always_inline __s32 tgid_nr(struct task_struct *t)
{
    if (ns_level == 0)
        return BPF_CORE_READ(t, tgid);
    __u64 pa = (__u64)BPF_CORE_READ(t, signal, pids[PIDTYPE_TGID]);
    return nr_in_ns(pa);
}

static __always_inline __u32 read_seq(struct signal_struct *sig)
{
    return *(volatile unsigned int *)&sig->stats_lock.seqcount.seqcount.sequence;
}

/* sum_group: the group sums (thread_group_cputime, do_task_stat, do_io_accounting, getrusage) into r.
 * Returns 1 if the stats_lock seqcount stayed even and unchanged across the walk. */
static __always_inline int sum_group(struct tasks_bpf_raw *r, struct task_struct *task, struct signal_struct *sig)
{
    __u32 seq0 = read_seq(sig);
    asm volatile("" ::: "memory");
    r->utime = sig->utime;
    r->stime = sig->stime;
    r->sum_exec = sig->sum_sched_runtime;
    r->min_flt = sig->min_flt;
    r->maj_flt = sig->maj_flt;
    r->group_nvcsw = sig->nvcsw;
    r->group_nivcsw = sig->nivcsw;
    r->io[0] = sig->ioac.rchar;
    r->io[1] = sig->ioac.wchar;
    r->io[2] = sig->ioac.syscr;
    r->io[3] = sig->ioac.syscw;
    r->io[4] = sig->ioac.read_bytes;
    r->io[5] = sig->ioac.write_bytes;
    r->io[6] = sig->ioac.cancelled_write_bytes;
    r->cutime = sig->cutime;
    r->cstime = sig->cstime;
    r->cmin_flt = sig->cmin_flt;
    r->cmaj_flt = sig->cmaj_flt;
    r->threads_walked = 0;

    struct bpf_iter_task it;
    struct task_struct *t;
    bpf_iter_task_new(&it, task, BPF_TASK_ITER_PROC_THREADS);
    while ((t = bpf_iter_task_next(&it))) {
        r->utime += t->utime;
        r->stime += t->stime;
        r->sum_exec += t->se.sum_exec_runtime;
        r->min_flt += t->min_flt;
        r->maj_flt += t->maj_flt;
        r->group_nvcsw += t->nvcsw;
        r->group_nivcsw += t->nivcsw;
        r->io[0] += t->ioac.rchar;
        r->io[1] += t->ioac.wchar;
        r->io[2] += t->ioac.syscr;
        r->io[3] += t->ioac.syscw;
        r->io[4] += t->ioac.read_bytes;
        r->io[5] += t->ioac.write_bytes;
        r->io[6] += t->ioac.cancelled_write_bytes;
        r->threads_walked++;
    }
    bpf_iter_task_destroy(&it);
    asm volatile("" ::: "memory");
    __u32 seq1 = read_seq(sig);
    return !(seq0 & 1) && seq0 == seq1;
}

/* read_rss: the mm counters, count alone and with every CPU's delta (percpu_counter_sum). */
static __always_inline void read_rss(struct tasks_bpf_raw *r, struct mm_struct *mm)
{
    /* the kernel's mm counter enum is anonymous (no CO-RE by name); its order has not changed since 4.5 */
    int idx[4];
    idx[TASKS_BPF_RSS_FILE] = MM_FILEPAGES;
    idx[TASKS_BPF_RSS_ANON] = MM_ANONPAGES;
    idx[TASKS_BPF_RSS_SWAP] = MM_SWAPENTS;
    idx[TASKS_BPF_RSS_SHMEM] = MM_SHMEMPAGES;
    __u64 ctr[4];
    for (int i = 0; i < 4; i++) {
        int k = idx[i] & 3;
        r->rss_count[i] = mm->rss_stat[k].count;
        r->rss_sum[i] = r->rss_count[i];
        ctr[i] = (__u64)mm->rss_stat[k].counters;
    }
    if (stats.pcpu_state != 1)
        return;
    struct bpf_iter_num it;
    int *c;
    bpf_iter_num_new(&it, 0, nr_cpus);
    while ((c = bpf_iter_num_next(&it))) {
        __u64 off = pcpu_off[*c & (TASKS_BPF_MAX_CPUS - 1)];
        for (int i = 0; i < 4; i++) {
            __s32 v = 0;
            bpf_probe_read_kernel(&v, sizeof(v), (void *)(ctr[i] + off));
            r->rss_sum[i] += v;
        }
    }
    bpf_iter_num_destroy(&it);
    r->flags |= TASKS_BPF_R_RSS_EXACT;
}

/* count_fds: bits set in open_fds over max_fds (proc_readfd_count). */
static __always_inline void count_fds(struct scratch *s, struct files_struct *files)
{
    struct fdtable *fdt = files->fdt;
    if (!fdt)
        return;
    __u32 words = fdt->max_fds / 64;
    __u64 bits = (__u64)BPF_CORE_READ(fdt, open_fds);
    if (!bits)
        return;
    if (words > fd_words_max)
        words = fd_words_max;
    __u32 n = 0;
    struct bpf_iter_num it;
    int *c;
    __u32 chunks = (words + TASKS_BPF_FD_WORDS - 1) / TASKS_BPF_FD_WORDS;
    bpf_iter_num_new(&it, 0, chunks);
    while ((c = bpf_iter_num_next(&it))) {
        __u32 first = (__u32)*c * TASKS_BPF_FD_WORDS;
        __u32 left = words - first;
        if (left >= TASKS_BPF_FD_WORDS) {
            bpf_probe_read_kernel(s->words, sizeof(s->words), (void *)(bits + (__u64)first * 8));
        } else {
            __builtin_memset(s->words, 0, sizeof(s->words));
            bpf_probe_read_kernel(s->words, (left & (TASKS_BPF_FD_WORDS - 1)) * 8, (void *)(bits + (__u64)first * 8));
        }
        for (int i = 0; i < TASKS_BPF_FD_WORDS; i++)
            n += popcount64(s->words[i]);
    }
    bpf_iter_num_destroy(&it);
    s->rec.fds = n;
    s->rec.flags |= TASKS_BPF_R_FILES;
}

/* emit: fill and write the record of the process whose leader is `task` (a trusted pointer). */
static __always_inline void emit(struct seq_file *seq, struct task_struct *task, __u32 flags)
{
    __u32 zero = 0;
    struct scratch *s = bpf_map_lookup_elem(&scratch_map, &zero);
    if (!s)
        return;
    struct tasks_bpf_raw *r = &s->rec;
    __builtin_memset(r, 0, sizeof(*r));
    r->size = sizeof(*r);
    r->flags = flags;
    r->host_pid = task->tgid;
    r->host_ppid = BPF_CORE_READ(task, real_parent, tgid);
    if (ns_level == 0) {
        r->pid = r->host_pid;
        r->ppid = r->host_ppid;
    } else {
        r->pid = tgid_nr(task);
        struct task_struct *parent = task->real_parent;
        r->ppid = parent ? tgid_nr(parent) : 0;
        if (!r->pid)
            r->flags |= TASKS_BPF_R_PID_HIDDEN;
    }
    r->state = task->__state;
    r->exit_state = task->exit_state;
    r->cpu = task->thread_info.cpu;
    r->start_ns = task->start_boottime;
    r->nvcsw = task->nvcsw;
    r->nivcsw = task->nivcsw;
    r->uid = BPF_CORE_READ(task, real_cred, uid.val);
    bpf_probe_read_kernel(r->comm, sizeof(r->comm), task->comm);

    struct signal_struct *sig = task->signal;
    if (sig) {
        r->nr_threads = sig->nr_threads;
        r->prev_utime = sig->prev_cputime.utime;
        r->prev_stime = sig->prev_cputime.stime;
        struct bpf_iter_num it;
        int *c;
        int ok = 0;
        bpf_iter_num_new(&it, 0, 4);
        while ((c = bpf_iter_num_next(&it))) {
            r->attempts++;
            if (sum_group(r, task, sig)) {
                ok = 1;
                break;
            }
        }
        bpf_iter_num_destroy(&it);
        if (!ok)
            r->flags |= TASKS_BPF_R_RACED;
    }

    unsigned int tflags = task->flags;
    if (tflags & PF_KTHREAD)
        r->flags |= TASKS_BPF_R_KTHREAD;
    struct mm_struct *mm = task->mm;
    if (mm && !(tflags & PF_KTHREAD)) {
        r->flags |= TASKS_BPF_R_MM;
        r->total_vm = mm->total_vm;
        r->hiwater_rss = mm->hiwater_rss;
        read_rss(r, mm);
    }
    struct files_struct *files = task->files;
    if (files)
        count_fds(s, files);

    if (bpf_seq_write(seq, r, sizeof(*r)) < 0)
        stats.overflow++;
    else
        stats.emitted++;
}

SEC("iter/task")
int dump_task(struct bpf_iter__task *ctx)
{
    struct seq_file *seq = ctx->meta->seq;
    struct task_struct *task = ctx->task;
    if (!task)
        return 0;
    stats.visited++;
    if (task->pid != task->tgid)
        return 0; /* threads are summed at their leader */
    ns_init();
    pcpu_init();
    __u32 flags = 0;
    if (filter_on) {
        __u32 key = tgid_nr(task);
        if (!key)
            return 0;
        __u8 *f = bpf_map_lookup_elem(&pid_filter, &key);
        if (f) {
            if (!(*f & TASKS_BPF_F_MEMBER))
                return 0;
            if (*f & TASKS_BPF_F_AUTO)
                flags |= TASKS_BPF_R_DISCOVERED;
        } else {
            if (!follow)
                return 0;
            struct task_struct *parent = task->real_parent;
            if (!parent)
                return 0;
            __u32 pkey = tgid_nr(parent);
            if (!pkey || !bpf_map_lookup_elem(&pid_filter, &pkey))
                return 0;
            __u8 v = TASKS_BPF_F_MEMBER | TASKS_BPF_F_AUTO;
            bpf_map_update_elem(&pid_filter, &key, &v, BPF_NOEXIST);
            flags |= TASKS_BPF_R_DISCOVERED;
        }
    }
    emit(seq, task, flags);
    return 0;
}

SEC("iter/cgroup")
int dump_cgroup(struct bpf_iter__cgroup *ctx)
{
    struct seq_file *seq = ctx->meta->seq;
    struct cgroup *cgrp = ctx->cgroup;
    if (!cgrp)
        return 0;
    stats.visited++;
    ns_init();
    pcpu_init();
    struct bpf_iter_css_task it;
    struct task_struct *task;
    bpf_iter_css_task_new(&it, &cgrp->self, 1 /* CSS_TASK_ITER_PROCS */);
    while ((task = bpf_iter_css_task_next(&it)))
        emit(seq, task, 0);
    bpf_iter_css_task_destroy(&it);
    return 0;
}
