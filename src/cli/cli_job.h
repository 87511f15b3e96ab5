/* SPDX-License-Identifier: MIT
 *
 * `jobscope job`, the pieces beside the shared monitoring path of cmd_run.c: the job found from the
 * environment (or the SPANK plugin's explicit --job/--step/--node/--stepd-pid), what to watch on this node
 * (the job's cgroup, else its processes under slurmstepd, else for PBS and OAR the user's processes), where
 * the recording goes (DIR/JOBID-NODE.db, written node-local first when DIR is on a network file system), the
 * job's metadata, and the end: the move into DIR, the node's completion marker and the automatic merge by the
 * last node to finish.
 */
#ifndef JOBSCOPE_CLI_JOB_H
#define JOBSCOPE_CLI_JOB_H

#include "core/batchenv.h"
#include "core/jobend.h"
#include "engine/monitor.h"
#include "core/sink.h"
#include "core/source.h"
#include "sinks/recording.h"

#include <stdbool.h>

typedef enum { JOB_TRACK_AUTO, JOB_TRACK_CGROUP, JOB_TRACK_STEPD } job_track_t;

typedef struct job_plan job_plan_t;

/* What a command built on `job` adds to it (jobscope perfmon): all optional, borrowed for the run. */
typedef struct {
    const js_live_sink_t *sink; /* a live sink after the recording (perfmon's metrics and check points) */
    void *sink_state;
    const char *ipc_file;  /* stop when this file says FINISHED (perfmon's .ipc-JOBID), whenever it appears */
    const char *ipc_file2; /* and this one (NULL: none) */
    /* after this node's recording is complete and marked: `merged` is the job recording when this node merged
     * every node's (the last to finish), else NULL. Returns 0 or EXIT_FAIL after its own message. */
    int (*finished)(void *arg, const job_plan_t *plan, const char *merged);
    void *arg;
    bool quiet_end; /* no line on stderr at the end (perfmon logs to its own file) */
} job_hooks_t;

/* What the command line says (all optional). */
typedef struct {
    const char *dir;   /* -d DIR (default ".") */
    const char *job;   /* --job ID */
    const char *step;  /* --step STEP or "all" */
    const char *node;  /* --node NAME */
    long stepd_pid;    /* --stepd-pid PID (0: none) */
    job_track_t track; /* --track auto|cgroup|stepd */
    bool no_merge;     /* --no-merge */
    bool node_local;   /* --node-local: as on a network file system, whatever DIR is on */
    bool force;
    const job_hooks_t *hooks; /* NULL for plain `job` */
} job_args_t;

/* The resolved job and its files; the scope's strings point into it (keep it alive for the run). */
struct job_plan {
    js_batch_job_t b;
    char step_watched[32]; /* "all" or a step id */
    char own_step[32];     /* the monitor's own step (never a root), "" if none */
    const char *how;       /* "cgroup", "slurmstepd", "user" */
    char cgroup[1024];     /* the cgroup path watched, "" if none */
    char final_path[4096]; /* DIR/JOBID-NODE.db */
    char write_path[4096]; /* where the recording is written: final_path, or node-local when DIR is remote */
    char dir[4096];
    const char *fs_name; /* DIR's file system when it is a network one ("nfs", "lustre", "gpfs"), else NULL */
    bool local;          /* write_path is node-local */
    /* the end of the job's work (job_end_arm) */
    const job_args_t *args;
    js_jobend_t *end;      /* SLURM and PBS/OAR whole-job watches, else NULL */
    char end_marker[4200]; /* SLURM: DIR/.JOBID.end, left by the batch node's monitor for the others */
};

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
 * first to see all complete wins an O_EXCL claim). `ok` says the recording is complete. Returns 0 when this
 * node's recording is complete and in DIR (a failed merge is said on stderr but does not change that), else
 * EXIT_FAIL after one line. */
int job_finish(const job_args_t *a, job_plan_t *plan, bool ok, bool quiet);

/* job_end_arm: give `mon` its stop check for a whole-job watch (every step): the job's work is over (see
 * core/jobend.h; on SLURM the batch node's monitor leaves DIR/.JOBID.end and every monitor stops when it
 * appears), or the hooks' ipc file says FINISHED. Call after job_resolve, with the procfs root the monitor
 * reads. Returns 0 or -ENOMEM. Release with job_end_free. */
int job_end_arm(const job_args_t *a, job_plan_t *plan, const js_fsroot_t *root, js_monitor_t *mon);

/* job_end_free: accepts a plan that was never armed. */
void job_end_free(job_plan_t *plan);

/* cmd_run_hooks: `jobscope job` (argv[0] "job") with `hooks` (NULL: plain job); cmd_run for the others. */
int cmd_run_hooks(int argc, char **argv, const job_hooks_t *hooks);

/* job_move_into: move file `from` to `to` (rename, else a synced copy beside `to` renamed over it and the
 * original removed); never over an existing `to` unless `force`. Returns 0 or -errno. */
int job_move_into(const char *from, const char *to, bool force);

#endif
