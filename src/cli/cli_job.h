/* SPDX-License-Identifier: MIT
 *
 * `jobscope job`, the pieces beside the shared monitoring path of cmd_run.c: the job found from the
 * environment (or the SPANK plugin's explicit --job/--step/--node/--stepd-pid), what to watch on this node
 * (the job's cgroup, else its processes under slurmstepd, else for PBS and OAR the user's processes), where the
 * recording goes (DIR/JOBID-NODE.db, written node-local first when DIR is on a network file system), the
 * job's metadata, and the end: the move into DIR, the node's completion marker and the automatic merge by the
 * last node to finish.
 */
#ifndef JOBSCOPE_CLI_JOB_H
#define JOBSCOPE_CLI_JOB_H

#include "core/batchenv.h"
#include "core/source.h"
#include "sinks/recording.h"

#include <stdbool.h>

typedef enum { JOB_TRACK_AUTO, JOB_TRACK_CGROUP, JOB_TRACK_STEPD } job_track_t;

/* What the command line says (all optional). */
typedef struct {
    const char *dir;       /* -d DIR (default ".") */
    const char *job;       /* --job ID */
    const char *step;      /* --step STEP or "all" */
    const char *node;      /* --node NAME */
    long stepd_pid;        /* --stepd-pid PID (0: none) */
    job_track_t track;     /* --track auto|cgroup|stepd */
    bool no_merge;         /* --no-merge */
    bool force;
} job_args_t;

/* The resolved job and its files; the scope's strings point into it (keep it alive for the run). */
typedef struct {
    js_batch_job_t b;
    char step_watched[32]; /* "all" or a step id */
    char own_step[32];     /* the monitor's own step (never a root), "" if none */
    const char *how;       /* "cgroup", "slurmstepd", "user" */
    char cgroup[1024];     /* the cgroup path watched, "" if none */
    char final_path[4096]; /* DIR/JOBID-NODE.db */
    char write_path[4096]; /* where the recording is written: final_path, or node-local when DIR is remote */
    char dir[4096];
    const char *fs_name;   /* DIR's file system when it is a network one ("nfs", "lustre", "gpfs"), else NULL */
    bool local;            /* write_path is node-local */
} job_plan_t;

/* job_resolve: find the job and what to watch on this node; fill ctx->scope (kind, cgroup or slurmstepd
 * roots, uid), *ret_cg (owned by the caller) and a one-line description. Returns 0, or EXIT_FAIL / EXIT_USAGE
 * after one line on stderr. */
int job_resolve(const job_args_t *a, js_ctx_t *ctx, js_cgroup_t **ret_cg, job_plan_t *plan, char *desc,
                size_t cap);

/* job_meta: the job's metadata (scheduler, job, step, node, node list, allocation on the node, what was
 * watched, the recording's final place). */
void job_meta(const job_plan_t *plan, js_recorder_t *rec, double cores, const char *cores_bound,
              double mem_limit_bytes, const char *mem_bound);

/* job_finish: after the recording is closed: move it into DIR (when written node-local), mark this node
 * complete (DIR/.JOBID-NODE.done) and, when every node of the job has, merge them into DIR/JOBID.db (the
 * first to see all complete wins an O_EXCL claim). `ok` says the recording is complete. Returns 0 or EXIT_FAIL
 * after one line. */
int job_finish(const job_args_t *a, job_plan_t *plan, bool ok, bool quiet);

/* job_move_into: move file `from` to `to` (rename, else a synced copy beside `to` renamed over it and the
 * original removed); never over an existing `to` unless `force`. Returns 0 or -errno. */
int job_move_into(const char *from, const char *to, bool force);

#endif
