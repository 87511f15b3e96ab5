/* SPDX-License-Identifier: MIT
 *
 * The process-tree source's slurmstepd roots (a job without a cgroup, ctx->scope.stepd_job or stepd_pid):
 * each sample the job's slurmstepd processes on this node are found (classified once per PID, from their comm
 * and command line), their rows written to the stepd table, and their children become the tree's roots; after
 * the walk their reaped CPU is read again so that a task reaped meanwhile is counted once. Private to
 * proc_tree.c (proc_tree_int.h).
 */
#include "sources/proc_tree_int.h"

#include "core/batchenv.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

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
    if (!v || ptree_push_pid(&st->roots, &st->nroots, &st->roots_cap, pid) < 0)
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

/* ptree_stepd_refresh: this sample's slurmstepd roots (st->roots) and their rows: the explicit one, or every
 * slurmstepd of the job. A process is classified once when first listed (and again every STEPD_RECLASSIFY
 * samples, for a reused PID), so a sample costs one listing of the procfs root and a stat per root. */
int ptree_stepd_refresh(tree_state_t *st, const js_ctx_t *ctx, js_rows_t *srows)
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
    return ptree_forget_unseen(st, &st->stepds, offsetof(sent_t, seen));
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

/* ptree_stepd_settle: after the walk, read the roots' reaped CPU again. A slurmstepd that reaped a task while
 * the tree was walked has it in its cutime now: its row takes the new figures, and a task whose row was taken
 * before it was reaped (it is gone now) leaves this sample's rows, so that it is counted once, through its
 * slurmstepd, not also as a live member. */
void ptree_stepd_settle(tree_state_t *st, const js_ctx_t *ctx, js_rows_t *srows, js_rows_t *proc)
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

/* ptree_stepd_children: every child of every thread of root `pid` (slurmstepd is multi-threaded). */
int ptree_stepd_children(tree_state_t *st, const js_ctx_t *ctx, int32_t pid)
{
    if (st->scan)
        return ptree_scan_children(st, pid);
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
            r = ptree_enqueue_list(st, st->buf2.p);
    }
    pid_iter_close(&it);
    return r;
}
