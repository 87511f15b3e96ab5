// SPDX-License-Identifier: MIT OR GPL-2.0-only
/*
 * The BPF task reader: one BPF_PROG_TYPE_SYSCALL program, run by the loader (tasks_bpf.c) with BPF_PROG_RUN
 * once per pass, that walks the processes of interest with the kernel's open-coded iterators and writes one
 * struct tasks_bpf_raw per process into `out`, an array the loader has mapped into its memory: one system
 * call per pass, no copy.
 *
 *   mode 0 (tasks)   every process on the machine (task iterator, BPF_TASK_ITER_ALL_PROCS: leaders only, in
 *                    creation order, so parents before children); keeps those whose PID is in pid_filter (or
 *                    all when no filter is set); with follow, a process whose parent is in the map is added
 *                    to it and reported, so a member's new children and grandchildren are found in one pass;
 *   mode 1 (cgroup)  every process of one cgroup and (unless self_only) its descendants (css iterator
 *                    pre-order, css_task iterator per cgroup, Linux >= 6.7): only the job's processes are
 *                    visited, whatever else runs on the machine.
 *
 * A syscall program rather than iter/task or iter/cgroup writing into the iterator's seq_file: iter/cgroup
 * shows one cgroup per call into an 8-page buffer, so a cgroup of more than ~80 processes failed with E2BIG,
 * and each pass cost an iterator descriptor, reads and copies.
 *
 * Each record carries the figures /proc derives its fields from, read the way fs/proc reads them:
 * - group sums over live threads (signal->thread_head, as for_each_thread) plus what exited threads left in
 *   signal_struct: utime/stime/sum_exec_runtime (thread_group_cputime), min/maj faults (do_task_stat), I/O
 *   (do_io_accounting), context switches (getrusage); the leader's own context switches as /proc/PID/status
 *   shows them. A thread exiting during the walk moves its figures into signal_struct under stats_lock, so
 *   the walk is retried when that seqcount moved, as the kernel's readers do;
 * - the signal's prev_cputime, from which user space rescales utime/stime to sum_exec_runtime exactly as
 *   cputime_adjust() would (the program cannot store the kernel's state);
 * - RSS by type as /proc/PID/status and statm show it: percpu_counter_sum(), the counter's count plus every
 *   CPU's pending delta. The kernel's BTF tags no percpu pointer and its kallsyms lists no per-CPU symbol,
 *   so the per-CPU offsets are found once: the running task's runqueue (se.cfs_rq->rq) is this CPU's copy of
 *   the per-CPU variable `runqueues`; this CPU's `this_cpu_off` lies at a fixed distance from it (both
 *   offsets come from the kernel BTF's .data..percpu section, handed in as pcpu_delta) and holds this CPU's
 *   offset; the other CPUs' offsets follow from where a per-CPU array map puts its value on each CPU, and
 *   each is checked against that CPU's own this_cpu_off. If any step fails, RSS falls back to the counts
 *   alone (flag RSS_EXACT clear);
 * - the open-descriptor count as /proc/PID/fd's st_size: the bits set in the fd table's open_fds.
 * PIDs are given in the reader's PID namespace (the process running the program), translated through struct
 * pid's numbers[] when that is not the initial namespace.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "tasks_bpf_raw.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* kfuncs: open-coded iterators (numbers Linux >= 6.4; tasks, css and css tasks 6.7), RCU, cgroup lookup */
extern int bpf_iter_num_new(struct bpf_iter_num *it, int start, int end) __ksym;
extern int *bpf_iter_num_next(struct bpf_iter_num *it) __ksym;
extern void bpf_iter_num_destroy(struct bpf_iter_num *it) __ksym;
extern int bpf_iter_task_new(struct bpf_iter_task *it, struct task_struct *task, unsigned int flags) __ksym;
extern struct task_struct *bpf_iter_task_next(struct bpf_iter_task *it) __ksym;
extern void bpf_iter_task_destroy(struct bpf_iter_task *it) __ksym;
extern int bpf_iter_css_new(struct bpf_iter_css *it, struct cgroup_subsys_state *start,
                            unsigned int flags) __ksym;
extern struct cgroup_subsys_state *bpf_iter_css_next(struct bpf_iter_css *it) __ksym;
extern void bpf_iter_css_destroy(struct bpf_iter_css *it) __ksym;
extern int bpf_iter_css_task_new(struct bpf_iter_css_task *it, struct cgroup_subsys_state *css,
                                 unsigned int flags) __ksym;
extern struct task_struct *bpf_iter_css_task_next(struct bpf_iter_css_task *it) __ksym;
extern void bpf_iter_css_task_destroy(struct bpf_iter_css_task *it) __ksym;
extern void bpf_rcu_read_lock(void) __ksym;
extern void bpf_rcu_read_unlock(void) __ksym;
extern struct cgroup *bpf_cgroup_from_id(__u64 cgid) __ksym;
extern void bpf_cgroup_release(struct cgroup *cgrp) __ksym;
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

/* ro_task: an untrusted, read-only view of the task at `t` (a pointer or an address; loads through it are
 * probe reads that read 0 where nothing is mapped). Reading a pointer field through a trusted pointer makes
 * the verifier look up a "__safe_trusted" type by name in the whole vmlinux BTF (about 126,000 types) on
 * every explored path; through this view it does not. Nothing here needs a trusted task: the threads of a
 * process are walked on signal->thread_head, as for_each_thread() does under the RCU read lock. */
#define ro_task(t)                                                                                           \
    ((struct task_struct *)bpf_rdonly_cast((const void *)(t), bpf_core_type_id_kernel(struct task_struct)))

#define PF_KTHREAD 0x00200000

/* set by the loader before load */
const volatile __u32 mode = 0;      /* 0 tasks, 1 cgroup */
const volatile __u64 cgroup_id = 0; /* cgroup mode: the subtree's root */
const volatile __u32 cgroup_self_only = 0;
const volatile __u32 filter_on = 0;  /* tasks mode: report only what pid_filter selects */
const volatile __u32 follow = 0;     /* tasks mode: add children of filtered processes to the filter */
const volatile __u32 nr_cpus = 1;    /* possible CPUs */
const volatile __s64 pcpu_delta = 0; /* offset of runqueues minus offset of this_cpu_off in .data..percpu */
const volatile __u32 fd_words_max = 1 << 16; /* cap on open_fds words read (4 M descriptors) */

/* state kept between passes (the loader reads stats after each run) */
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

__u32 filter_kept = 0; /* set by the reader: pid_filter lost and changed no entry since the last pass */
__u32 reuse = 0; /* set by the reader: 1 to reuse a record in place (see tb_visit), 0: every record is full */

/* the records of one pass: an array the loader maps, reached through `outs` so that the loader can put a
 * larger one in its place without loading the program again (BPF_F_INNER_MAP: the array's size is not part of
 * what the verifier checked) */
struct out_map {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(map_flags, BPF_F_MMAPABLE | BPF_F_INNER_MAP);
    __uint(max_entries, 1024); /* the loader sets it */
    __type(key, __u32);
    __type(value, struct tasks_bpf_raw);
} out SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
    __uint(max_entries, 1);
    __type(key, __u32);
    __array(values, struct out_map);
} outs SEC(".maps") = {
    .values = {[0] = &out},
};

/* per-CPU scratch: the fd-bitmap words being counted, and kernel addresses handed to the global functions.
 * An address loaded from a kernel structure is a pointer to the verifier and cannot be passed where a number
 * is expected; stored into map memory (allowed with CAP_PERFMON) and read back, it is a number. */
struct scratch {
    __u64 w[TASKS_BPF_FD_WORDS];
    __u64 ctr[4];  /* the mm counters' per-CPU pointers, in TASKS_BPF_RSS_* order */
    __u64 fd_bits; /* the open_fds bitmap */
    __u64 task;    /* the process being visited (its leader's task_struct) */
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

/* tb_pcpu_init: find every possible CPU's per-CPU offset (see the file comment), once. A global function:
 * the verifier checks it once, on its own. */
__noinline int tb_pcpu_init(void)
{
    __u32 zero = 0;
    if (stats.pcpu_state != 0)
        return 0;
    if (pcpu_delta == 0 || !bpf_core_field_exists(struct sched_entity, cfs_rq)) {
        pcpu_fail(1);
        return 0;
    }
    struct task_struct *cur = bpf_get_current_task_btf();
    __u64 rq = (__u64)BPF_CORE_READ(cur, se.cfs_rq, rq);
    if (!rq) {
        pcpu_fail(2);
        return 0;
    }
    int rq_cpu = -1;
    bpf_probe_read_kernel(&rq_cpu, sizeof(rq_cpu), (void *)(rq + bpf_core_field_offset(struct rq, cpu)));
    __u32 this_cpu = bpf_get_smp_processor_id();
    if (rq_cpu != (int)this_cpu) {
        pcpu_fail(3);
        return 0;
    }
    __u64 tco = rq - (__u64)pcpu_delta; /* this CPU's this_cpu_off */
    __u64 off_here = 0;
    if (bpf_probe_read_kernel(&off_here, sizeof(off_here), (void *)tco) < 0 || off_here == 0) {
        pcpu_fail(4);
        return 0;
    }
    void *here = bpf_map_lookup_elem(&pcpu_probe, &zero);
    if (!here) {
        pcpu_fail(5);
        return 0;
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
        if (bpf_probe_read_kernel(&check, sizeof(check), (void *)(tco - off_here + off)) < 0 ||
            check != off) {
            bad = 8;
            break;
        }
        pcpu_off[cpu & (TASKS_BPF_MAX_CPUS - 1)] = off;
    }
    bpf_iter_num_destroy(&it);
    if (bad) {
        pcpu_fail(bad);
        return 0;
    }
    stats.pcpu_state = 1;
    return 0;
}

/* ns_init: the reader's PID namespace (level and pointer), once. */
static __always_inline void ns_init(void)
{
    if (ns_state)
        return;
    struct task_struct *cur = ro_task(bpf_get_current_task_btf());
    struct pid *p = cur->thread_pid;
    if (p) {
        __u32 level = p->level;
        __u64 ns = 0;
        __u64 pa = (__u64)BPF_CORE_READ(cur, thread_pid);
        bpf_probe_read_kernel(&ns, sizeof(ns),
                              (void *)(pa + bpf_core_field_offset(struct pid, numbers) +
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
    __u64 addr =
        pa + bpf_core_field_offset(struct pid, numbers) + (__u64)ns_level * bpf_core_type_size(struct upid);
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

#define THREADS_MAX (1 << 22) /* a bound for the verifier on the threads one walk visits (pid_max) */

/* tb_sum_group: the group sums (thread_group_cputime, do_task_stat, do_io_accounting, getrusage) of the
 * process whose leader is at sc->task, into r: signal_struct, then every live thread on signal->thread_head
 * (for_each_thread, under the RCU read lock the caller holds). Returns 1 if the stats_lock seqcount stayed
 * even and unchanged across the walk, else 0. A global function, verified once. */
__noinline int tb_sum_group(struct tasks_bpf_raw *r, struct scratch *sc)
{
    if (!r || !sc)
        return 0;
    struct task_struct *task = ro_task(sc->task);
    __u64 sig_addr = 0;
    bpf_probe_read_kernel(&sig_addr, sizeof(sig_addr), &task->signal);
    if (!sig_addr)
        return 1;
    struct signal_struct *sig =
        bpf_rdonly_cast((void *)sig_addr, bpf_core_type_id_kernel(struct signal_struct));
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

    __u64 head = sig_addr + bpf_core_field_offset(struct signal_struct, thread_head);
    __u64 node_off = bpf_core_field_offset(struct task_struct, thread_node);
    __u64 next = 0;
    bpf_probe_read_kernel(&next, sizeof(next), (void *)head); /* thread_head.next */
    struct bpf_iter_num it;
    bpf_iter_num_new(&it, 0, THREADS_MAX);
    while (bpf_iter_num_next(&it)) {
        if (next == head || next == 0)
            break;
        struct task_struct *t = ro_task(next - node_off);
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
        __u64 cur = next;
        next = 0;
        bpf_probe_read_kernel(&next, sizeof(next), (void *)cur); /* thread_node.next */
    }
    bpf_iter_num_destroy(&it);
    asm volatile("" ::: "memory");
    __u32 seq1 = read_seq(sig);
    return !(seq0 & 1) && seq0 == seq1;
}

/* s32_at: the 32-bit value at kernel address `addr` through an untrusted view (0 where nothing is mapped) */
#define s32_at(addr)                                                                                         \
    (((struct in6_addr *)bpf_rdonly_cast((const void *)(addr), bpf_core_type_id_kernel(struct in6_addr)))    \
         ->in6_u.u6_addr32[0])

/* tb_rss_deltas: add every CPU's pending delta of the four counters (per-CPU pointers in sc->ctr) to
 * r->rss_sum, as percpu_counter_sum() does: four inline loads per CPU through an untrusted view (s32_at), not
 * the probe-read helper (a call and its checks each). A global function, verified once. */
__noinline int tb_rss_deltas(struct tasks_bpf_raw *r, struct scratch *sc)
{
    if (!r || !sc || stats.pcpu_state != 1)
        return 0;
    __u64 c_file = sc->ctr[TASKS_BPF_RSS_FILE], c_anon = sc->ctr[TASKS_BPF_RSS_ANON];
    __u64 c_swap = sc->ctr[TASKS_BPF_RSS_SWAP], c_shmem = sc->ctr[TASKS_BPF_RSS_SHMEM];
    __s64 d[4] = {};
    struct bpf_iter_num it;
    int *c;
    bpf_iter_num_new(&it, 0, nr_cpus);
    while ((c = bpf_iter_num_next(&it))) {
        __u64 off = pcpu_off[*c & (TASKS_BPF_MAX_CPUS - 1)];
        /* inline probe loads (no helper call); the four counters of an mm share a cache line on each CPU */
        d[0] += (__s32)s32_at(c_file + off);
        d[1] += (__s32)s32_at(c_anon + off);
        d[2] += (__s32)s32_at(c_swap + off);
        d[3] += (__s32)s32_at(c_shmem + off);
    }
    bpf_iter_num_destroy(&it);
    r->rss_sum[TASKS_BPF_RSS_FILE] += d[0];
    r->rss_sum[TASKS_BPF_RSS_ANON] += d[1];
    r->rss_sum[TASKS_BPF_RSS_SWAP] += d[2];
    r->rss_sum[TASKS_BPF_RSS_SHMEM] += d[3];
    r->flags |= TASKS_BPF_R_RSS_EXACT;
    return 0;
}

/* read_rss: the mm counters, count alone and with every CPU's delta (percpu_counter_sum). The kernel's mm
 * counter enum is anonymous (no CO-RE by name); its order has not changed since 4.5. */
static __always_inline void read_rss(struct tasks_bpf_raw *r, struct scratch *sc, struct mm_struct *mm)
{
    r->rss_count[TASKS_BPF_RSS_FILE] = mm->rss_stat[MM_FILEPAGES].count;
    r->rss_count[TASKS_BPF_RSS_ANON] = mm->rss_stat[MM_ANONPAGES].count;
    r->rss_count[TASKS_BPF_RSS_SWAP] = mm->rss_stat[MM_SWAPENTS].count;
    r->rss_count[TASKS_BPF_RSS_SHMEM] = mm->rss_stat[MM_SHMEMPAGES].count;
    for (int i = 0; i < 4; i++)
        r->rss_sum[i] = r->rss_count[i];
    sc->ctr[TASKS_BPF_RSS_FILE] = (__u64)mm->rss_stat[MM_FILEPAGES].counters;
    sc->ctr[TASKS_BPF_RSS_ANON] = (__u64)mm->rss_stat[MM_ANONPAGES].counters;
    sc->ctr[TASKS_BPF_RSS_SWAP] = (__u64)mm->rss_stat[MM_SWAPENTS].counters;
    sc->ctr[TASKS_BPF_RSS_SHMEM] = (__u64)mm->rss_stat[MM_SHMEMPAGES].counters;
    tb_rss_deltas(r, sc);
}

/* tb_count_fds: r->fds = bits set in the first `words` words of the open_fds bitmap at sc->fd_bits
 * (proc_readfd_count). A global function, verified once. */
__noinline int tb_count_fds(struct tasks_bpf_raw *r, struct scratch *sc, __u32 words)
{
    if (!r || !sc)
        return 0;
    __u64 bits = sc->fd_bits;
    if (!bits)
        return 0;
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
            bpf_probe_read_kernel(sc->w, sizeof(sc->w), (void *)(bits + (__u64)first * 8));
        } else {
            __builtin_memset(sc->w, 0, sizeof(sc->w));
            bpf_probe_read_kernel(sc->w, (left & (TASKS_BPF_FD_WORDS - 1)) * 8,
                                  (void *)(bits + (__u64)first * 8));
        }
        for (int i = 0; i < TASKS_BPF_FD_WORDS; i++)
            n += popcount64(sc->w[i]);
    }
    bpf_iter_num_destroy(&it);
    r->fds = n;
    r->flags |= TASKS_BPF_R_FILES;
    return 0;
}

/* out_slot: record `idx` of the current output array, or NULL past its end. */
static __always_inline struct tasks_bpf_raw *out_slot(__u32 idx)
{
    __u32 zero = 0;
    void *o = bpf_map_lookup_elem(&outs, &zero);
    return o ? bpf_map_lookup_elem(o, &idx) : NULL;
}

/* tb_visit: one process whose leader's task_struct is at sc->task: in tasks mode (`cgroup_walk` 0) apply the
 * filter, then write its record into the next slot of the output array. Past the array's end only the count
 * goes on, so the loader knows how much room the pass needed. The task is read through an untrusted view:
 * nothing here needs a trusted pointer. A global function: the verifier checks it once, not once per path
 * through the walks that call it. */
__noinline int tb_visit(struct scratch *sc, __u32 cgroup_walk)
{
    if (!sc)
        return 0;
    struct task_struct *task = ro_task(sc->task);
    __u32 flags = 0;
    if (!cgroup_walk) {
        if (task->pid == 0)
            return 0; /* the idle task the walk starts from */
        stats.visited++;
        /* a process in the slot its record had in the last pass was reported then; while the filter has
         * lost or changed no entry since (filter_kept), it is reported again: no lookup in the filter */
        struct tasks_bpf_raw *o = filter_on && filter_kept ? out_slot(stats.matched) : NULL;
        if (o && o->size == sizeof(*o) && o->host_pid == task->tgid && o->start_ns == task->start_boottime) {
            flags |= o->flags & TASKS_BPF_R_DISCOVERED;
        } else if (filter_on) {
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
    } else {
        stats.visited++;
    }

    __u32 idx = stats.matched;
    stats.matched = idx + 1;
    struct tasks_bpf_raw *r = out_slot(idx);
    if (!r)
        return 0;
    __s32 host_pid = task->tgid;
    __u64 start_ns = task->start_boottime;
    __u32 state = task->__state, exit_state = task->exit_state;
    /* A process of one thread (its mm has no other user) that is not runnable now and whose runtime has not
     * moved since its last full record has not run since: its CPU, faults, I/O, switches, descriptors, name
     * and credentials are as they were (each changes only when it runs). That record is still in this slot
     * when the process is where it was in the last pass (processes keep their order while none before them
     * leaves): only the identity, state and memory are written again (reclaim shrinks an idle process's RSS
     * without it running). */
    unsigned int tflags = task->flags;
    struct mm_struct *mm = task->mm;
    __u64 runtime = task->se.sum_exec_runtime;
    bool single =
        reuse && mm && !(tflags & PF_KTHREAD) && state != 0 && !exit_state && mm->mm_users.counter == 1;
    bool same = single && r->size == sizeof(*r) && (r->flags & TASKS_BPF_R_BASE) && r->host_pid == host_pid &&
                r->start_ns == start_ns && r->leader_runtime == runtime;
    if (same) {
        static const __u32 fresh = TASKS_BPF_R_RSS_EXACT | TASKS_BPF_R_DISCOVERED | TASKS_BPF_R_PID_HIDDEN;
        r->flags = (r->flags & ~fresh) | flags | TASKS_BPF_R_SAME;
        stats.reused++;
    } else {
        __builtin_memset(r, 0, sizeof(*r));
        r->size = sizeof(*r);
        r->flags = flags;
        r->host_pid = host_pid;
        r->start_ns = start_ns;
        r->leader_runtime = runtime;
    }
    struct task_struct *parent = task->real_parent;
    r->host_ppid = parent ? parent->tgid : 0;
    if (ns_level == 0) {
        r->pid = r->host_pid;
        r->ppid = r->host_ppid;
    } else {
        r->pid = tgid_nr(task);
        r->ppid = parent ? tgid_nr(parent) : 0;
        if (!r->pid)
            r->flags |= TASKS_BPF_R_PID_HIDDEN;
    }
    r->state = state;
    r->exit_state = exit_state;
    r->cpu = task->thread_info.cpu;
    r->nvcsw = task->nvcsw;
    r->nivcsw = task->nivcsw;
    if (same) {
        r->total_vm = mm->total_vm;
        r->hiwater_rss = mm->hiwater_rss;
        read_rss(r, sc, mm);
        stats.written++;
        return 0;
    }
    const struct cred *cred = task->real_cred;
    r->uid = cred ? cred->uid.val : 0;
    __builtin_memcpy(r->comm, task->comm, sizeof(r->comm)); /* two loads */

    struct signal_struct *sig = task->signal;
    if (sig) {
        r->nr_threads = sig->nr_threads;
        r->prev_utime = sig->prev_cputime.utime;
        r->prev_stime = sig->prev_cputime.stime;
        /* a thread that exits during the walk moves its figures into signal_struct: walk once more */
        r->attempts = 1;
        if (!tb_sum_group(r, sc)) {
            r->attempts = 2;
            if (!tb_sum_group(r, sc))
                r->flags |= TASKS_BPF_R_RACED;
        }
    }

    if (tflags & PF_KTHREAD)
        r->flags |= TASKS_BPF_R_KTHREAD;
    if (mm && !(tflags & PF_KTHREAD)) {
        r->flags |= TASKS_BPF_R_MM;
        r->total_vm = mm->total_vm;
        r->hiwater_rss = mm->hiwater_rss;
        read_rss(r, sc, mm);
    }
    struct files_struct *files = task->files;
    struct fdtable *fdt = files ? files->fdt : NULL;
    if (fdt) {
        sc->fd_bits = (__u64)fdt->open_fds;
        tb_count_fds(r, sc, fdt->max_fds / 64);
    }
    if (single) /* the runtime was read before the full record: if it ran meanwhile, the next pass reads again
                 */
        r->flags |= TASKS_BPF_R_BASE;
    stats.written++;
    return 0;
}

/* visit: hand `task` (a pointer from a walk) to tb_visit as a number, through the scratch map. */
static __always_inline void visit(struct task_struct *task, __u32 cgroup_walk)
{
    __u32 zero = 0;
    struct scratch *sc = bpf_map_lookup_elem(&scratch_map, &zero);
    if (!sc)
        return;
    sc->task = (__u64)task;
    tb_visit(sc, cgroup_walk);
}

/* walk_cgroup: CGROUP mode, every process of the cgroup with ID `id`. */
static __always_inline void walk_cgroup(__u64 id)
{
    /* the css_task iterator wants a trusted css: take a reference on the cgroup by its ID */
    struct cgroup *cg = bpf_cgroup_from_id(id);
    if (!cg) {
        stats.missing++;
        return;
    }
    stats.cgroups++;
    struct bpf_iter_css_task it;
    struct task_struct *task;
    bpf_iter_css_task_new(&it, &cg->self, 1 /* CSS_TASK_ITER_PROCS: leaders only */);
    while ((task = bpf_iter_css_task_next(&it)))
        visit(task, 1);
    bpf_iter_css_task_destroy(&it);
    bpf_cgroup_release(cg);
}

SEC("syscall")
int run(void *ctx)
{
    stats.runs++;
    stats.reused = 0;
    stats.visited = 0;
    stats.matched = 0;
    stats.written = 0;
    stats.cgroups = 0;
    stats.root_gone = 0;
    ns_init();
    tb_pcpu_init();
    bpf_rcu_read_lock();
    if (mode == 0) {
        struct bpf_iter_task it;
        struct task_struct *task;
        bpf_iter_task_new(&it, NULL, BPF_TASK_ITER_ALL_PROCS);
        while ((task = bpf_iter_task_next(&it)))
            visit(task, 0);
        bpf_iter_task_destroy(&it);
    } else if (cgroup_self_only) {
        walk_cgroup(cgroup_id);
        if (!stats.cgroups)
            stats.root_gone = 1;
    } else {
        struct cgroup *root = bpf_cgroup_from_id(cgroup_id);
        if (root) {
            struct bpf_iter_css it;
            struct cgroup_subsys_state *css;
            bpf_iter_css_new(&it, &root->self, BPF_CGROUP_ITER_DESCENDANTS_PRE);
            while ((css = bpf_iter_css_next(&it)))
                walk_cgroup(BPF_CORE_READ(css, cgroup, kn, id));
            bpf_iter_css_destroy(&it);
            bpf_cgroup_release(root);
        } else {
            stats.missing++;
            stats.root_gone = 1;
        }
    }
    bpf_rcu_read_unlock();
    return 0;
}
