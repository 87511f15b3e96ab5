/* SPDX-License-Identifier: MIT
 *
 * SLURM jobs on this node, found by their cgroups, for `jobscope serve --jobs`: one row per job and one per
 * step with the cgroup's CPU time and memory, as two tables the Prometheus exposition renders like views
 * (jobscope_slurm_job_*, jobscope_slurm_step_* with jobid, step, user and node labels). A job that ends takes
 * its cgroups with it, so its rows, and its series, disappear at the next scan.
 *
 * Layouts (read through the sysfs root only, so tests point it at a fixture tree):
 *   cgroup v1  fs/cgroup/{cpuacct,memory,cpuset}/slurm[_NODE]/uid_UID/job_ID/step_STEP
 *              (slurm_NODE: Debian's multiple-slurmd build, one top per node name)
 *   cgroup v2  fs/cgroup/system.slice/[NODE_]slurmstepd.scope/job_ID/step_STEP (user: a task's owner)
 * This is the only file that knows these layouts (jobs_cgroup_find gives `jobscope job` its job's cgroup).
 */
#ifndef JOBSCOPE_JOBS_H
#define JOBSCOPE_JOBS_H

#include "core/table.h"
#include "sys/fsroot.h"

#include <sys/types.h>

enum {
    JOB_ID,
    JOB_USER,
    JOB_NODE,
    JOB_CPU,
    JOB_CPU_USER,
    JOB_CPU_SYSTEM,
    JOB_MEM,
    JOB_MEM_MAX,
    JOB_MEM_LIMIT,
    JOB_RSS,
    JOB_CACHE,
    JOB_CPUS,
    JOB_STEP,
    JOB__MAX
};

/* Both tables share the columns; the job table stops before JOB_STEP (the last). */
extern const js_table_t table_slurm_job;  /* one row per job */
extern const js_table_t table_slurm_step; /* one row per step (batch, extern, 0, 1, ...) */

typedef struct js_jobs js_jobs_t;

/* jobs_new: a scanner (keeps a uid -> user name cache). Returns NULL on ENOMEM. */
js_jobs_t *jobs_new(void);

/* jobs_free: accepts NULL. */
void jobs_free(js_jobs_t *j);

/* jobs_scan: clear `jobs` and `steps` (bound to the tables above) and fill them with the jobs running now
 * under `root` (its sys root; proc for the owner of a v2 job). Returns the number of jobs found, or -ENOMEM.
 * No SLURM cgroup at all is not an error (0). */
int jobs_scan(js_jobs_t *j, const js_fsroot_t *root, js_rows_t *jobs, js_rows_t *steps);

/* jobs_cgroup_find: the cgroup of SLURM job `jobid` on node `node` ("" or NULL: any), and of its step `step`
 * (NULL: the whole job), owned by `uid` ((uid_t)-1: any uid_* directory), in the layouts above: v1 tried in
 * the cpuacct, memory, freezer and cpuset hierarchies under slurm_NODE, then slurm; v2 under
 * NODE_slurmstepd.scope, then slurmstepd.scope. Writes the path as <procfs>/PID/cgroup shows it
 * ("/slurm_n1/uid_1000/job_42", "/system.slice/slurmstepd.scope/job_42/step_0") into `buf`, for
 * cgroupfs_open_path. Returns 0, -ENOENT (no such cgroup: SLURM's task/cgroup is not in use here) or
 * -ENAMETOOLONG. */
int jobs_cgroup_find(const js_fsroot_t *root, const char *jobid, const char *step, const char *node,
                     uid_t uid, char *buf, size_t cap);

#endif
