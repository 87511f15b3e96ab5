/* SPDX-License-Identifier: MIT
 *
 * The process-tree source's BPF backend (docs/ARCHITECTURE.md, "Backends"): when the reader is wanted and
 * loaded (at once with --backend bpf; in auto mode once it pays within the run, its load counted), one pass
 * of the task iterator gives every member's counters, which become the same proc and proc_info rows the /proc
 * walk writes (cmdline and smaps_rollup still come from /proc). Private to proc_tree.c (proc_tree_int.h).
 */
#include "sources/proc_tree_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <time.h>

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

/* ptree_bpf_account: auto mode, after a sample read through /proc that cost `spent_ns` of CPU: add what the
 * BPF reader would have saved. */
void ptree_bpf_account(tree_state_t *st, const js_ctx_t *ctx, double spent_ns)
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
        ptree_ent_close(e);
        e->kept = false;
        st->nkept--;
    }
}

/* ptree_bpf_wanted: whether to read this sample through the BPF reader, loading it now if it is wanted: at
 * once with --backend bpf; in auto mode for a tree or a cgroup when it pays within the run (bpf_pays), never
 * for a user's or the node's processes (the walk of every task missed PID 1 on Linux 6.18). A refusal is
 * final for the run, its reason kept for the inventory. */
bool ptree_bpf_wanted(tree_state_t *st, js_ctx_t *ctx, bool live)
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
    double c0 = (double)ptree_thread_cpu_ns();
    int r = tasks_bpf_open(&o, &st->bpf, st->bpf_why, sizeof(st->bpf_why));
    st->bpf_load_cpu_ns = (double)ptree_thread_cpu_ns() - c0;
    ctx->inventory_changed = true;
    if (r < 0) {
        st->bpf = NULL;
        st->bpf_refused = true; /* the reason stays in bpf_why (inventory and source_stats) */
        return false;
    }
    st->bpf_loaded_at = ctx->seq;
    return true;
}

/* ptree_bpf_drop: the reader failed mid-run: /proc from now on, with the reason. */
void ptree_bpf_drop(tree_state_t *st, js_ctx_t *ctx, int r)
{
    ctx->inventory_changed = true;
    snprintf(st->bpf_why, sizeof(st->bpf_why),
             "the BPF reader failed during the run (%s): /proc from then on", strerror(-r));
    tasks_bpf_close(st->bpf);
    st->bpf = NULL;
    st->bpf_refused = true;
}

/* ptree_bpf_row: the proc row (and proc_info when new or exec'd) of one record; cmdline and smaps_rollup
 * still from /proc. Returns 0 or -ENOMEM. */
int ptree_bpf_row(tree_state_t *st, js_ctx_t *ctx, const tasks_bpf_record_t *rec, js_rows_t *proc,
                  js_rows_t *info)
{
    pent_t *e = pidmap_get(&st->procs, rec->pid);
    if (e && e->start != rec->start_ticks) { /* the PID names another process now */
        ptree_ent_remove(st, e);
        e = NULL;
    }
    bool fresh = !e;
    if (!e) {
        if (!(e = ptree_ent_insert(st, rec->pid)))
            return -ENOMEM;
        e->start = rec->start_ticks;
    }
    if (e->seen == st->stamp)
        return 0;
    ptree_mark_seen(st, e);
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
    if (ptree_smaps_moved(e, fresh, exec, rss))
        st->smaps_event = true;
    if (fresh || exec || !e->info_done) {
        js_pid_stat_t ps = {.pid = rec->pid, .ppid = rec->ppid, .starttime = rec->start_ticks};
        snprintf(ps.comm, sizeof(ps.comm), "%s", rec->comm);
        js_pid_status_t pst = {.uid = rec->uid, .present = 1u << 7};
        ptree_emit_info(st, ctx, e, info, &ps, &pst);
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
    int r = ptree_bpf_row(st, p->ctx, rec, p->proc, p->info);
    if (r < 0)
        return r;
    if (rec->pid == p->ctx->root_pid)
        *p->root_alive = true;
    p->n++;
    return ptree_push_pid(&st->queue, &st->nqueue, &st->queue_cap, rec->pid);
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

/* ptree_collect_bpf: one sample through the BPF reader. Returns 0, -ENOMEM, or another negative errno when
 * the reader failed (the caller then drops it and reads /proc; nothing of this sample is kept). */
int ptree_collect_bpf(tree_state_t *st, js_ctx_t *ctx, js_rows_t *proc, js_rows_t *info, bool *root_alive)
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
                if (ptree_push_pid(&st->queue, &st->nqueue, &st->queue_cap, st->cgpids.pid[i]) < 0)
                    return -ENOMEM;
        } else {
            for (size_t i = 0; i < st->norder; i++)
                if (ptree_push_pid(&st->queue, &st->nqueue, &st->queue_cap, st->order[i]) < 0)
                    return -ENOMEM;
            if (ptree_push_pid(&st->queue, &st->nqueue, &st->queue_cap, ctx->root_pid) < 0 ||
                (ctx->mode == JS_MODE_RUN &&
                 ptree_push_pid(&st->queue, &st->nqueue, &st->queue_cap, ctx->monitor_pid) < 0))
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
            if (ptree_push_pid(&st->order, &st->norder, &st->order_cap, st->queue[i]) < 0)
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
                ptree_ent_remove(st, e);
            if (!(e = ptree_ent_insert(st, rec->pid)))
                return -ENOMEM;
            e->start = rec->start_ticks;
        }
        e->own_ticks = own;
        e->own_stamp = st->stamp;
        ptree_mark_seen(st, e); /* known, whether it gets a row or not */
        st->cand[st->ncand++] = (cand_t){.pid = rec->pid, .cpu = d, .rss = (int64_t)rec->rss_bytes, .idx = i};
    }
    return ptree_pick_top(st, ctx, proc, info, true);
}
