/* SPDX-License-Identifier: MIT
 *
 * Control groups, v1, v2 and hybrid, read and made through the fsroot (so fixture trees stand in for the
 * kernel). A host mounts cgroup hierarchies: v1 gives one hierarchy per controller or per group of co-mounted
 * controllers (cpu,cpuacct), each with its own tree of directories; v2 gives one unified hierarchy. A hybrid
 * host (systemd's default before v2 became the default; this development machine) has the v1 controllers
 * and an empty cgroup2 mount at /sys/fs/cgroup/unified, so each figure comes from where its controller is:
 * CPU usage from v1 cpuacct, memory from v1 memory, pressure (PSI) from the v2 directory, which every v2
 * cgroup has whatever controllers are enabled.
 *
 * A js_cgroup_t is one cgroup seen in every hierarchy: per hierarchy, its path relative to that hierarchy's
 * root and a directory descriptor. It is resolved from a user's path, from a process (<procfs>/PID/cgroup),
 * or made fresh for `jobscope run` (cgroupfs_create_run), in which case jobscope attaches the command to it
 * and removes it at the end.
 *
 * Library rules: nothing prints; errors are negative errno, with a one-line reason in the caller's `why`
 * buffer where one helps; every descriptor is O_CLOEXEC.
 */
#ifndef JOBSCOPE_CGROUPFS_H
#define JOBSCOPE_CGROUPFS_H

#include "sys/fsroot.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* What jobscope reads, by controller. Each maps to one hierarchy (or none). */
typedef enum {
    JS_CG_CPU,     /* throttling (cpu.stat), quota (cpu.max; v1 cpu.cfs_quota_us / cpu.cfs_period_us) */
    JS_CG_CPUACCT, /* CPU usage: v1 cpuacct.*, else v2 cpu.stat, which every v2 cgroup has */
    JS_CG_CPUSET,  /* cpuset.cpus(.effective) */
    JS_CG_MEMORY,  /* memory.* */
    JS_CG_IO,      /* v1 blkio.*, v2 io.* */
    JS_CG_PIDS,    /* pids.* */
    JS_CG_PSI, /* {cpu,memory,io}.pressure: v2 only (present in every v2 cgroup when the kernel has PSI) */
    JS_CG_CTRL_MAX
} js_cg_ctrl_t;

/* also declared in core/source.h (C11 allows the repeat), so this layer includes nothing above it */
typedef struct js_cgroup js_cgroup_t;

#define JS_CG_HIER_MAX 16 /* v1 has at most 14 controllers plus named hierarchies; one v2 */

/* One mounted hierarchy. */
typedef struct {
    int version;    /* 1 or 2 */
    unsigned ctrls; /* v1: the bits (1u << js_cg_ctrl_t) of the controllers this mount carries; v2: those
                     * the root's cgroup.controllers lists, plus CPUACCT and PSI */
    char *mount;    /* the mount point, absolute, as mountinfo gives it (octal escapes decoded) */
    char *mnt_root; /* the cgroup path mounted there (mountinfo field 4): "/" unless bind-mounted */
    int fd;         /* the mount point's directory, opened through the fsroot (fsroot_open_abs) */
} js_cg_hier_t;

/* The mounted hierarchies jobscope uses (v1 ones carrying one of the controllers above, and the v2 one). */
typedef struct {
    size_t n;
    js_cg_hier_t h[JS_CG_HIER_MAX];
    int by_ctrl[JS_CG_CTRL_MAX]; /* index into h[] of the hierarchy each controller is read from, or -1 */
    int unified;                 /* index of the v2 hierarchy, or -1 */
} js_cg_mounts_t;

struct js_cgroup {
    js_cg_mounts_t m;           /* owns the mount descriptors */
    char *path[JS_CG_HIER_MAX]; /* the cgroup in hierarchy i, relative to the hierarchy's root, starting with
                                 * '/' ("/" for the root); NULL where it is not in that hierarchy */
    char *rel[JS_CG_HIER_MAX];  /* the same relative to the mount point ("." for the mount's root) */
    int dir[JS_CG_HIER_MAX];    /* its directory, or -1 */
    bool created[JS_CG_HIER_MAX]; /* made by cgroupfs_create_run and not yet removed */
};

/* cgroupfs_mounts: discover the hierarchies from <procfs>/self/mountinfo. A v1 mount with none of the
 * controllers above (name=systemd, freezer, devices) is skipped; of several mounts of one hierarchy the first
 * is kept. Mount points under the sysfs default are opened relative to r->sys. Returns 0 (possibly with no
 * hierarchy: -ENOENT then), or -errno when mountinfo cannot be read. On success the caller owns the
 * descriptors (cgroupfs_mounts_close). */
int cgroupfs_mounts(const js_fsroot_t *r, js_cg_mounts_t *ret);

/* cgroupfs_mounts_close: close and free what cgroupfs_mounts opened; accepts a zeroed struct. */
void cgroupfs_mounts_close(js_cg_mounts_t *m);

/* cgroupfs_parse_mountinfo_line: parse one mountinfo line. Sets *ret_version to 1 (fstype cgroup) or 2
 * (cgroup2), *ret_ctrls to the controller bits of a v1 mount's super options, and copies the (decoded) root
 * and mount point into the buffers. Returns 0, -ENOENT for a line that is not a cgroup mount, -EINVAL for a
 * malformed one, -ENAMETOOLONG when a path does not fit `cap`. Exposed for tests. */
int cgroupfs_parse_mountinfo_line(const char *line, int *ret_version, unsigned *ret_ctrls, char *root,
                                  char *mount, size_t cap);

/* cgroupfs_v1_ctrls: the controller bits of a comma-separated v1 controller list ("cpu,cpuacct",
 * "rw,memory", "name=systemd" gives 0). Exposed for tests. */
unsigned cgroupfs_v1_ctrls(const char *list, size_t len);

/* cgroupfs_open_pid: the cgroup process `pid` is in (0: the caller, "self"), from <procfs>/PID/cgroup, in
 * every hierarchy cgroupfs_mounts finds. Returns 0 and a new *ret (cgroupfs_free), -ESRCH (no such
 * process), -ENOENT (no cgroup hierarchy, or none of its cgroups reachable from our mounts) or -ENOMEM; `why`
 * (may be NULL) gets a one-line reason on failure. */
int cgroupfs_open_pid(const js_fsroot_t *r, pid_t pid, js_cgroup_t **ret, char *why, size_t whylen);

/* cgroupfs_open_path: the cgroup a user named: either a directory under a cgroup mount point
 * ("/sys/fs/cgroup/memory/slurm/uid_1000/job_42", "/sys/fs/cgroup/system.slice/foo.service"), or a path
 * relative to the hierarchies' root as /proc/PID/cgroup shows it ("/slurm/uid_1000/job_42"). The same
 * cgroup path is then looked up in every other hierarchy (SLURM, systemd and container runtimes give a job
 * the same path in each). Returns 0 and a new *ret, -ENOENT (no such cgroup in any hierarchy), -EINVAL (an
 * empty or relative path, or one with "..") or -ENOMEM; `why` as above. */
int cgroupfs_open_path(const js_fsroot_t *r, const char *path, js_cgroup_t **ret, char *why, size_t whylen);

/* cgroupfs_create_run: make a fresh cgroup for a command that `monitor_pid` (jobscope, which must not join
 * it) is about to start. Named "jobscope-<monitor_pid>-<n>" (n counts the runs of this process, so a library
 * user may run several; a stale directory of a previous process with the same PID is skipped): a flat name
 * rather than a shared "jobscope/" parent, which concurrent runs would have to create and could never safely
 * remove. Empty jobscope-<pid>-<n> directories beside it whose <pid> is gone (a monitor killed by SIGKILL)
 * are removed on the way.
 *   v1: one directory in each hierarchy carrying cpu, cpuacct, memory, blkio or pids, made inside the cgroup
 *       the monitor is in, not at the hierarchy's root, so every limit that binds the monitor (a SLURM job, a
 *       container, this machine's per-session memory cgroup) still binds the command; v1 lets a cgroup with
 *       processes have children. A cpuset-only hierarchy is not entered: the command keeps the monitor's
 *       cpuset, which is read as the allocation (a new v1 cpuset would start empty and refuse tasks).
 *   v2: inside the monitor's cgroup C when C can hand the memory controller down (C is the root, whose
 *       subtree_control the call completes, or C already delegates it). Otherwise, when jobscope is not root
 *       and C's parent is ours (a delegated subtree: systemd's user@UID.service), as a sibling of C, which
 *       keeps every limit above C. Otherwise still inside C: v2 keeps cpu.stat usage and PSI for any cgroup,
 *       so CPU stays exact and memory comes from the tree.
 * Fails with -errno (EACCES for a user who may write no cgroup) and a reason in `why` when no directory could
 * be made; a partial result (some hierarchies refused) succeeds with those hierarchies left out.
 * On success *ret is new (cgroupfs_remove, then cgroupfs_free). */
int cgroupfs_create_run(const js_fsroot_t *r, pid_t monitor_pid, js_cgroup_t **ret, char *why, size_t whylen);

/* cgroupfs_join_self: move the calling process into every hierarchy the cgroup was created in, except the
 * hierarchies in `skip` (bits 1u << index: the v2 one where clone3 already placed it). For a command forked
 * and held before exec, which has one thread: v1 writes "0" to `tasks`, which moves the writing thread alone
 * and so skips the kernel's global threadgroup lock (writing a PID to cgroup.procs waits for an RCU grace
 * period, 5-15 ms); v2 writes "0" to cgroup.procs (the lock: clone3 with CLONE_INTO_CGROUP avoids it).
 * Allocates nothing: safe between fork and exec. *ret_joined (may be NULL) gets the bits where it succeeded.
 * Returns 0 when it joined everywhere asked, else the first -errno (the hierarchies it joined stay joined).
 */
int cgroupfs_join_self(const js_cgroup_t *cg, unsigned skip, unsigned *ret_joined);

/* cgroupfs_clone_dir: the directory descriptor of the v2 cgroup cgroupfs_create_run made (for clone3's
 * CLONE_INTO_CGROUP; borrowed), and in *ret_bit (may be NULL) its hierarchy bit; -1 and 0 when there is none.
 */
int cgroupfs_clone_dir(const js_cgroup_t *cg, unsigned *ret_bit);

/* A growing list of PIDs; zero-initialised, freed with cgroupfs_pids_free. */
typedef struct {
    pid_t *pid;
    size_t n, cap;
    js_buf_t buf; /* scratch for the reads */
} js_cg_pids_t;

/* cgroupfs_pids: the processes in the cgroup, into `out` (emptied first), sorted, without duplicates: from
 * cgroup.procs (v1: cgroup.procs, or `tasks` where a kernel has no cgroup.procs, which lists threads) of one
 * hierarchy (v2 when present, else the first v1 one the cgroup is in); with `recursive`, also every cgroup
 * below it (a SLURM job's processes live in its step cgroups). Returns 0, -ENOENT (the cgroup is in no
 * hierarchy) or -errno of the read. */
int cgroupfs_pids(const js_cgroup_t *cg, bool recursive, js_cg_pids_t *out);

/* cgroupfs_pids_free: release the list; accepts a zeroed one. */
void cgroupfs_pids_free(js_cg_pids_t *p);

/* cgroupfs_remove: remove every directory cgroupfs_create_run made that is still there, with any (empty)
 * cgroup the job made below it (rmdir, retried a few times over about 50 ms while the kernel finishes
 * releasing exited tasks). Returns 0 when none is left;
 * -EBUSY when a process still lives in one (its PIDs, sorted and deduplicated, are put in `leftover` when not
 * NULL; call again later to retry); another -errno otherwise. */
int cgroupfs_remove(js_cgroup_t *cg, js_cg_pids_t *leftover);

/* cgroupfs_evict: move every process still in the created cgroups (or in cgroups a job made below them) to
 * the enclosing cgroup, so that cgroupfs_remove can succeed once monitoring is over and jobscope exits (a
 * process --until-main-exits left behind). Returns 0 or the first -errno (a process gone meanwhile is none).
 */
int cgroupfs_evict(const js_cgroup_t *cg);

/* cgroupfs_open_peak_reset: open a v2 high-water mark file (`memory.peak`, `memory.swap.peak`) in cgroup
 * directory `dir` read-write, and reset it for this descriptor only: since Linux 6.12 a write of any
 * non-empty string makes later reads through the same descriptor count from the usage at the time of the
 * write, while every other reader (another monitor, the job's own accounting) keeps the mark since the
 * cgroup's creation. Returns the descriptor (O_CLOEXEC; read it with pread from offset 0), or -errno where
 * the kernel has no such reset (older kernels refuse the write open) or the file may not be written: open it
 * read-only then. Never used on v1's memory.max_usage_in_bytes, whose reset is global. */
int cgroupfs_open_peak_reset(int dir, const char *file);

/* cgroupfs_free: close every descriptor and free; accepts NULL. Does not remove anything. */
void cgroupfs_free(js_cgroup_t *cg);

/* cgroupfs_hier: the hierarchy index controller `c` is read from for this cgroup, or -1 (not mounted, or the
 * cgroup is not in it). On a hybrid host a cgroup that is only in the unified hierarchy is read there for
 * what that hierarchy carries (CPU usage from cpu.stat, pressure), although the controller's v1 mount exists.
 */
int cgroupfs_hier(const js_cgroup_t *cg, js_cg_ctrl_t c);

/* cgroupfs_dir: the cgroup's directory descriptor for controller `c` (-1 when none) and, through
 * *ret_version (may be NULL), that hierarchy's version. */
int cgroupfs_dir(const js_cgroup_t *cg, js_cg_ctrl_t c, int *ret_version);

/* cgroupfs_version_name: "v1" (v1 hierarchies only), "v2" (the unified one only), "hybrid" (both), or "none".
 */
const char *cgroupfs_version_name(const js_cgroup_t *cg);

/* cgroupfs_describe: the absolute path of the cgroup's directory in hierarchy `h` (mount point joined with
 * the relative path) into buf. Returns buf ("" when it is not in that hierarchy). */
char *cgroupfs_describe(const js_cgroup_t *cg, int h, char *buf, size_t cap);

/* cgroupfs_main_path: the absolute path of the cgroup's directory where its memory is accounted, else in its
 * first hierarchy, into buf (for messages and the run's metadata). Returns buf ("" when none). */
char *cgroupfs_main_path(const js_cgroup_t *cg, char *buf, size_t cap);

/* cgroupfs_read_up: read `file` of the cgroup's ancestor `up` levels above it (0: the cgroup itself) in the
 * hierarchy of controller `c`, into buf (at most cap-1 bytes, NUL-terminated). Returns the length, -ERANGE
 * when `up` goes above the mount's root, or -errno of the read. Lets limits be taken as the smallest along
 * the path (a v2 memory.max or a v1 CFS quota set on a parent binds the child). */
ssize_t cgroupfs_read_up(const js_cgroup_t *cg, js_cg_ctrl_t c, unsigned up, const char *file, char *buf,
                         size_t cap);

/* cgroupfs_ctrl_name: "cpu", "cpuacct", "cpuset", "memory", "io", "pids", "psi". */
const char *cgroupfs_ctrl_name(js_cg_ctrl_t c);

#endif
