/* SPDX-License-Identifier: MIT
 *
 * When a batch job's work is over, seen from a monitor of the job (`jobscope job`, `jobscope perfmon`). The
 * batch idiom of both tools starts one monitor per node in the background and ends the script with `wait`:
 *
 *     srun --ntasks-per-node=1 jobscope job -d DIR &
 *     srun ./app
 *     wait
 *
 * The monitor watches the job's work, and the batch shell then waits for the monitor: without an end of its
 * own, the job would hang until its time limit. The work is over when the batch script has nothing left to do
 * but wait for the monitor:
 *
 *   SLURM, on the job's batch node (the node whose `slurmstepd: [JOB.batch]` runs the script): the monitor's
 *     launcher is found in the batch step's process tree (the srun listening on this monitor's
 *     SLURM_SRUN_COMM_PORT, or the monitor itself when the script started it without srun). Every process
 *     on the path from the batch step's task (the script's shell, or a wrapper such as time(1) above it)
 *     down to the launcher sleeps in wait (wchan do_wait) with no live child but the next one on that path,
 *     down to the first that does not wait (srun itself, or an mpirun above it: the launcher). Each must
 *     stay in that one wait while its children are read (its voluntary context switches are read before and
 *     after), and it must be so at two checks in a row: a shell between two commands is never taken for one
 *     that waits. No step but the monitor's own is then being launched from the script. Other nodes cannot
 *     see the batch shell: the caller shares the verdict (a file in the shared directory, cmd_job.c).
 *   PBS and OAR, on every node: the processes that carry the job in their environment (PBS_JOBID,
 * OAR_JOB_ID), other than the monitor, its descendants and its ancestors (the launcher chain up to the batch
 * shell), were seen once and are gone at two checks in a row, and none of those ancestors is running.
 *
 * Everything is read through the procfs root (tests point it at a fixture tree); nothing is signalled,
 * nothing printed. A check costs a few small reads per process on that path (stat, wchan, status, children);
 * the job's slurmstepd is looked for in a listing of the procfs root until it is found (at most 10 listings,
 * one a second), the launcher once in the batch step's tree (its descriptors read for the socket).
 */
#ifndef JOBSCOPE_JOBEND_H
#define JOBSCOPE_JOBEND_H

#include "core/batchenv.h"
#include "sys/fsroot.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct js_jobend js_jobend_t;

typedef struct {
    js_batch_kind_t kind; /* SLURM, PBS or OAR (NONE: never over) */
    const char *job;      /* the job id as the scheduler writes it */
    const char *node;     /* this node's name (SLURMD_NODENAME); SLURM only */
    int srun_port; /* SLURM_SRUN_COMM_PORT of the monitor (its launcher srun listens there), 0 if none */
    pid_t self;    /* the monitor's PID (in the procfs root's namespace) */
} js_jobend_cfg_t;

/* jobend_new: a checker for `cfg` reading through `root` (borrowed: it must outlive the checker). Strings are
 * copied. Returns 0 or -ENOMEM; *ret owned by the caller (jobend_free). */
int jobend_new(const js_fsroot_t *root, const js_jobend_cfg_t *cfg, js_jobend_t **ret);

/* jobend_free: accepts NULL. */
void jobend_free(js_jobend_t *e);

/* jobend_check: whether the job's work is over as seen from here (see above), at monotonic time `now_ns`
 * (checks closer than 0.4 s to the previous positive one do not count as a second one). Returns 1 (over), 0
 * (not over, or this node cannot tell: not the batch node of a SLURM job) or -ENOMEM. */
int jobend_check(js_jobend_t *e, int64_t now_ns);

/* jobend_batch_node: SLURM: 1 when this node runs the job's batch script, 0 when another node does, -1 while
 * unknown (the batch step not found yet, or not a SLURM job). */
int jobend_batch_node(const js_jobend_t *e);

/* jobend_wchan_waits: whether a /proc/PID/wchan text says the task sleeps in wait(2) ("do_wait", and the
 * names older and newer kernels give the same wait: "do_wait.part.0", "kernel_wait4", "__do_sys_wait4",
 * "do_waitid"). For tests. */
bool jobend_wchan_waits(const char *wchan);

/* jobend_listen_inode: the socket inode of a TCP socket listening on `port` in the text of /proc/net/tcp or
 * /proc/net/tcp6 (`text`), or 0 when none is. For tests. */
uint64_t jobend_listen_inode(const char *text, int port);

#endif
