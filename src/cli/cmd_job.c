/* SPDX-License-Identifier: MIT
 *
 * `jobscope job` (cli_job.h): the job from the environment, what to watch on this node, the recording's
 * place, its metadata, and the end of the recording (the move, the completion marker, the automatic merge).
 * The monitoring itself is cmd_run.c's watch path.
 */
#include "cli/cli_job.h"
#include "cli/cli.h"
#include "sinks/merge.h"

#include "core/jobs.h"
#include "sys/cgroupfs.h"
#include "sys/fsfile.h"
#include "core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* network file systems (statfs f_type), where SQLite must not be written */
static const struct {
    unsigned long magic;
    const char *name;
} remote_fs[] = {
    {0x6969UL, "nfs"},      {0x0BD00BD0UL, "lustre"}, {0x47504653UL, "gpfs"},
    {0xFF534D42UL, "cifs"}, {0xFE534D42UL, "smb2"},   {0x19830326UL, "beegfs"},
    {0x00C36400UL, "ceph"}, {0x65735546UL, "fuse"},   {0x5346414FUL, "afs"},
};

static const char *remote_fs_of(const char *dir)
{
    struct statfs s;
    if (statfs(dir, &s) < 0)
        return NULL;
    for (size_t i = 0; i < sizeof(remote_fs) / sizeof(remote_fs[0]); i++)
        if ((unsigned long)s.f_type == remote_fs[i].magic)
            return remote_fs[i].name;
    return NULL;
}

/* plan_files: DIR/JOBID-NODE.db, and a node-local place when DIR is on a network file system. */
static int plan_files(const job_args_t *a, job_plan_t *p)
{
    const char *dir = a->dir ? a->dir : ".";
    struct stat st;
    if (stat(dir, &st) < 0) {
        cli_error("%s: %s", dir, strerror(errno));
        return EXIT_FAIL;
    }
    if (!S_ISDIR(st.st_mode)) {
        cli_error("%s: not a directory", dir);
        return EXIT_FAIL;
    }
    if (snprintf(p->dir, sizeof(p->dir), "%s", dir) >= (int)sizeof(p->dir) ||
        snprintf(p->final_path, sizeof(p->final_path), "%s/%s-%s.db", dir, p->b.job, p->b.node) >=
            (int)sizeof(p->final_path)) {
        cli_error("%s: name too long", dir);
        return EXIT_FAIL;
    }
    if (!a->force && lstat(p->final_path, &st) == 0) {
        cli_error("%s: already exists (another monitor of this job on this node? --force replaces it)",
                  p->final_path);
        return EXIT_FAIL;
    }
    p->fs_name = remote_fs_of(dir);
    if (!p->fs_name && a->node_local)
        p->fs_name = "a file system given --node-local";
    if (!p->fs_name) {
        snprintf(p->write_path, sizeof(p->write_path), "%s", p->final_path);
        return 0;
    }
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp || stat(tmp, &st) < 0 || !S_ISDIR(st.st_mode) || remote_fs_of(tmp))
        tmp = "/tmp";
    if (snprintf(p->write_path, sizeof(p->write_path), "%s/jobscope-%s-%s.%d.db", tmp, p->b.job, p->b.node,
                 (int)getpid()) >= (int)sizeof(p->write_path)) {
        cli_error("%s: name too long", tmp);
        return EXIT_FAIL;
    }
    p->local = true;
    return 0;
}

int job_resolve(const job_args_t *a, js_ctx_t *ctx, js_cgroup_t **ret_cg, job_plan_t *p, char *desc,
                size_t cap)
{
    memset(p, 0, sizeof(*p));
    char host[256] = "";
    if (gethostname(host, sizeof(host) - 1) < 0)
        host[0] = '\0';
    char why[512] = "";
    int r = batchenv_parse(environ, host, &p->b, why, sizeof(why));
    if (r == -EINVAL) {
        cli_error("job: %s", why);
        return EXIT_FAIL;
    }
    bool env_job = r == 0;
    if (env_job && p->b.kind == JS_BATCH_SLURM)
        snprintf(p->own_step, sizeof(p->own_step), "%s", p->b.step);
    if (a->job) {
        if (!batch_safe_name(a->job) || strlen(a->job) >= sizeof(p->b.job))
            return cli_usage_error("job ", "invalid --job '%s'", a->job);
        if (env_job && strcmp(a->job, p->b.job) != 0)
            p->own_step[0] = '\0'; /* the environment is another job's */
        if (!env_job || p->b.kind == JS_BATCH_NONE)
            p->b.kind = JS_BATCH_SLURM; /* the SPANK plugin's word */
        snprintf(p->b.job, sizeof(p->b.job), "%s", a->job);
    } else if (!env_job) {
        cli_error("job: not inside a batch job (no SLURM_JOB_ID, PBS_JOBID or OAR_JOB_ID); give --job ID");
        return EXIT_FAIL;
    }
    if (a->node) {
        if (!batch_safe_name(a->node) || strlen(a->node) >= sizeof(p->b.node))
            return cli_usage_error("job ", "invalid --node '%s'", a->node);
        snprintf(p->b.node, sizeof(p->b.node), "%s", a->node);
    }
    if (!p->b.node[0])
        snprintf(p->b.node, sizeof(p->b.node), "%.*s", (int)sizeof(p->b.node) - 1, host[0] ? host : "node");
    if (a->step && (!batch_safe_name(a->step) || strlen(a->step) >= sizeof(p->step_watched)))
        return cli_usage_error("job ", "invalid --step '%s'", a->step);
    snprintf(p->step_watched, sizeof(p->step_watched), "%s", a->step ? a->step : "all");
    bool all = strcmp(p->step_watched, "all") == 0;
    if (a->stepd_pid > 0 && all && p->b.step[0] && env_job)
        snprintf(p->step_watched, sizeof(p->step_watched), "%s", p->b.step); /* the slurmstepd's own step */
    all = strcmp(p->step_watched, "all") == 0;
    if (a->stepd_pid > 0 && p->b.kind != JS_BATCH_SLURM)
        return cli_usage_error("job ", "--stepd-pid is for SLURM jobs");

    const char *sched = p->b.kind == JS_BATCH_SLURM ? "SLURM" : p->b.kind == JS_BATCH_PBS ? "PBS" : "OAR";
    if (p->b.kind == JS_BATCH_SLURM) {
        uid_t uid = getuid() == 0 ? (uid_t)-1 : getuid();
        int found = -ENOENT;
        if (a->track != JOB_TRACK_STEPD)
            found = jobs_cgroup_find(&ctx->root, p->b.job, all ? NULL : p->step_watched, p->b.node, uid,
                                     p->cgroup, sizeof(p->cgroup));
        if (found == 0) {
            r = cgroupfs_open_path(&ctx->root, p->cgroup, ret_cg, why, sizeof(why));
            if (r < 0) {
                cli_error("job %s: cgroup %s: %s", p->b.job, p->cgroup, why[0] ? why : strerror(-r));
                return EXIT_FAIL;
            }
            ctx->scope.kind = JS_SCOPE_CGROUP;
            ctx->scope.cgroup = *ret_cg;
            ctx->scope.cgroup_whole = true;
            p->how = "cgroup";
            snprintf(desc, cap, "%s job %s%s%s on %s: cgroup %s (%s)", sched, p->b.job, all ? "" : " step ",
                     all ? "" : p->step_watched, p->b.node, p->cgroup, cgroupfs_version_name(*ret_cg));
        } else if (a->track == JOB_TRACK_CGROUP) {
            cli_error("job %s: no cgroup of the job on %s (SLURM's task/cgroup is not in use here)", p->b.job,
                      p->b.node);
            return EXIT_FAIL;
        } else {
            ctx->scope.kind = JS_SCOPE_TREE;
            ctx->scope.stepd_job = p->b.job;
            ctx->scope.stepd_step = all ? NULL : p->step_watched;
            ctx->scope.stepd_skip = all && p->own_step[0] ? p->own_step : NULL;
            ctx->scope.stepd_pid = (pid_t)a->stepd_pid;
            ctx->scope.stepd_node = p->b.node;
            p->how = "slurmstepd";
            if (a->stepd_pid > 0)
                snprintf(desc, cap, "%s job %s step %s on %s: the tasks of slurmstepd %ld", sched, p->b.job,
                         p->step_watched, p->b.node, a->stepd_pid);
            else
                snprintf(desc, cap, "%s job %s on %s: the tasks of slurmstepd [%s.%s]%s%s%s", sched, p->b.job,
                         p->b.node, p->b.job, all ? "*" : p->step_watched,
                         ctx->scope.stepd_skip ? " but step " : "",
                         ctx->scope.stepd_skip ? ctx->scope.stepd_skip : "",
                         ctx->scope.stepd_skip ? " (this monitor's)" : "");
        }
    } else {
        /* PBS and OAR: no cgroup layout or step daemon to go by: the job's user's processes on the node */
        if (a->track == JOB_TRACK_CGROUP || a->track == JOB_TRACK_STEPD)
            return cli_usage_error("job ", "--track cgroup and stepd are for SLURM jobs");
        ctx->scope.kind = JS_SCOPE_USER;
        ctx->scope.uid = getuid();
        p->how = "user";
        snprintf(desc, cap, "%s job %s on %s: the processes of uid %u", sched, p->b.job, p->b.node,
                 (unsigned)getuid());
    }
    return plan_files(a, p);
}

static void meta_num(js_recorder_t *rec, const char *key, double v)
{
    if (isnan(v))
        return;
    char buf[64];
    snprintf(buf, sizeof(buf), "%.17g", v);
    recorder_meta(rec, key, buf);
}

void job_meta(const job_plan_t *p, js_recorder_t *rec, double cores, const char *cores_bound,
              double mem_limit, const char *mem_bound)
{
    recorder_meta(rec, "batch_scheduler", batchenv_kind_name(p->b.kind));
    recorder_meta(rec, "job_id", p->b.job);
    recorder_meta(rec, "job_node", p->b.node);
    recorder_meta(rec, "job_step", p->step_watched);
    if (p->own_step[0])
        recorder_meta(rec, "job_monitor_step", p->own_step);
    if (p->b.nodelist[0])
        recorder_meta(rec, "job_nodelist", p->b.nodelist);
    if (p->b.nnodes > 0)
        meta_num(rec, "job_num_nodes", p->b.nnodes);
    recorder_meta(rec, "job_watch", p->how);
    if (!strcmp(p->how, "slurmstepd"))
        recorder_meta(rec, "job_roots", "slurmstepd");
    /* the job's allocation on this node: the smallest bound that applies (cgroup, then the scheduler's word)
     */
    meta_num(rec, "job_alloc_cores", !isnan(cores) ? cores : p->b.cores);
    recorder_meta(rec, "job_alloc_cores_bound", !isnan(cores) ? cores_bound : "scheduler");
    if (!isnan(mem_limit)) {
        meta_num(rec, "job_alloc_mem_bytes", mem_limit);
        recorder_meta(rec, "job_alloc_mem_bound", mem_bound);
    } else if (!isnan(p->b.mem_bytes)) {
        meta_num(rec, "job_alloc_mem_bytes", p->b.mem_bytes);
        recorder_meta(rec, "job_alloc_mem_bound", p->b.mem_from);
    }
    if (p->b.gpus[0])
        recorder_meta(rec, "job_alloc_gpus", p->b.gpus);
    if (p->b.nodefile[0])
        recorder_meta(rec, "job_nodefile", p->b.nodefile);
    recorder_meta(rec, "job_recording", p->final_path);
    if (p->local) {
        recorder_meta(rec, "job_written_at", p->write_path);
        recorder_meta(rec, "job_dir_fs", p->fs_name);
    }
}

int job_move_into(const char *from, const char *to, bool force)
{
    struct stat st;
    if (!force && lstat(to, &st) == 0)
        return -EEXIST;
    if (rename(from, to) == 0)
        return 0;
    if (errno != EXDEV)
        return -errno;
    char tmp[4200];
    if (snprintf(tmp, sizeof(tmp), "%s.part.%d", to, (int)getpid()) >= (int)sizeof(tmp))
        return -ENAMETOOLONG;
    int r = fs_copy(from, tmp, 0644, true);
    if (r < 0)
        return r;
    if (rename(tmp, to) < 0) {
        r = -errno;
        unlink(tmp);
        return r;
    }
    unlink(from);
    return 0;
}

/* marker_path: DIR/.JOBID-NODE.done */
static int marker_path(char *buf, size_t cap, const char *dir, const char *job, const char *node)
{
    return snprintf(buf, cap, "%s/.%s-%s.done", dir, job, node) >= (int)cap ? -ENAMETOOLONG : 0;
}

typedef struct {
    const job_plan_t *p;
    char **files;
    size_t n;
    bool missing;
} nodes_t;

static int on_node(void *arg, const char *name)
{
    nodes_t *ns = arg;
    char path[4200];
    struct stat st;
    if (marker_path(path, sizeof(path), ns->p->dir, ns->p->b.job, name) < 0 || stat(path, &st) < 0) {
        ns->missing = true;
        return 1; /* stop: not every node is complete */
    }
    char *f = malloc(4200);
    if (!f)
        return -ENOMEM;
    snprintf(f, 4200, "%s/%s-%s.db", ns->p->dir, ns->p->b.job, name);
    ns->files[ns->n++] = f;
    return 0;
}

/* auto_merge: when every node of the job has its marker, the first monitor to see it claims the merge
 * (DIR/.JOBID.merge, O_EXCL) and writes DIR/JOBID.db (its path into `merged`, "" when this monitor did not
 * merge). Quietly nothing when a node is missing. Returns 0, or EXIT_FAIL after one line (the claim stays:
 * `jobscope merge` by hand then). */
static int auto_merge(const job_plan_t *p, bool quiet, char *merged, size_t cap)
{
    merged[0] = '\0';
    const char *list = p->b.nodelist;
    if (!list[0])
        return 0;
    int count = p->b.kind == JS_BATCH_SLURM ? hostlist_count(list) : 0;
    if (p->b.kind != JS_BATCH_SLURM) { /* PBS, OAR: the node file's hosts, joined by commas */
        count = 1;
        for (const char *c = list; *c; c++)
            count += *c == ',';
    }
    if (count <= 0)
        return 0;
    nodes_t ns = {.p = p, .files = calloc((size_t)count, sizeof(char *))};
    if (!ns.files)
        return 0;
    int r;
    if (p->b.kind == JS_BATCH_SLURM) {
        r = hostlist_each(list, on_node, &ns);
    } else {
        char *copy = strdup(list), *save = NULL;
        r = copy ? 0 : -ENOMEM;
        for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t && r == 0; t = strtok_r(NULL, ",", &save))
            r = on_node(&ns, t);
        free(copy);
    }
    int rc = 0;
    if (r >= 0 && !ns.missing && ns.n == (size_t)count) {
        char claim[4200], out[4200];
        snprintf(claim, sizeof(claim), "%s/.%s.merge", p->dir, p->b.job);
        snprintf(out, sizeof(out), "%s/%s.db", p->dir, p->b.job);
        int fd = fs_create(claim, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
        if (fd >= 0) { /* ours: no other node merges */
            close(fd);
            char tmp[4200];
            const char *target = out;
            if (p->local) { /* SQLite is written node-local, then moved */
                snprintf(tmp, sizeof(tmp), "%s.merge", p->write_path);
                target = tmp;
            }
            char err[1024] = "";
            int m = merge_recordings(target, (const char *const *)ns.files, ns.n, 0, err, sizeof(err));
            if (m == 0 && p->local && (m = job_move_into(tmp, out, false)) < 0)
                snprintf(err, sizeof(err), "cannot move %.400s to %.400s: %s", tmp, out, strerror(-m));
            if (m < 0) {
                cli_error("job %s: automatic merge failed: %s", p->b.job, err);
                rc = EXIT_FAIL;
            } else {
                snprintf(merged, cap, "%s", out);
                if (!quiet)
                    fprintf(stderr, "jobscope: job %s: %zu nodes merged into %s\n", p->b.job, ns.n, out);
            }
        }
    }
    for (size_t i = 0; i < ns.n; i++)
        free(ns.files[i]);
    free(ns.files);
    return rc;
}

int job_finish(const job_args_t *a, job_plan_t *p, bool ok, bool quiet)
{
    if (p->local) {
        int r = job_move_into(p->write_path, p->final_path, a->force);
        if (r < 0) {
            cli_error("job %s: the recording stays at %s on %s: cannot move it to %s: %s", p->b.job,
                      p->write_path, p->b.node, p->final_path, strerror(-r));
            return EXIT_FAIL;
        }
    }
    if (!ok) {
        cli_error("job %s: the recording %s is incomplete", p->b.job, p->final_path);
        return EXIT_FAIL;
    }
    char path[4200];
    if (marker_path(path, sizeof(path), p->dir, p->b.job, p->b.node) == 0) {
        int fd = fs_create(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
        if (fd < 0) {
            cli_error("%s: %s", path, strerror(-fd));
            return EXIT_FAIL;
        }
        close(fd);
    }
    const job_hooks_t *h = a->hooks;
    if (!quiet && !(h && h->quiet_end))
        fprintf(stderr, "jobscope: job %s on %s: %s\n", p->b.job, p->b.node, p->final_path);
    char merged[4200] = "";
    if (!a->no_merge) /* a failed merge is said; this node's recording is complete all the same */
        auto_merge(p, quiet || (h && h->quiet_end), merged, sizeof(merged));
    if (h && h->finished)
        return h->finished(h->arg, p, merged[0] ? merged : NULL);
    return 0;
}

/* ---- the end of the job's work ---- */

/* job_stop_check: the monitor's stop check (monitor.h) for a whole-job watch. */
static bool job_stop_check(void *arg, const char **why)
{
    job_plan_t *p = arg;
    const job_hooks_t *h = p->args ? p->args->hooks : NULL;
    if (h && ((h->ipc_file && monitor_file_finished(h->ipc_file)) ||
              (h->ipc_file2 && monitor_file_finished(h->ipc_file2)))) {
        *why = "ipc-file";
        return true;
    }
    if (!p->end)
        return false;
    struct stat st;
    if (p->end_marker[0] && stat(p->end_marker, &st) == 0) {
        *why = "job ended";
        return true;
    }
    if (jobend_check(p->end, now_ns(CLOCK_MONOTONIC)) != 1)
        return false;
    if (p->end_marker[0]) { /* the batch node tells the others (the directory is shared, as for the merge) */
        int fd = fs_create(p->end_marker, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
        if (fd >= 0) {
            static const char word[] = "FINISHED\n";
            cli_write_all(fd, word, sizeof(word) - 1);
            close(fd);
        }
    }
    *why = "job ended";
    return true;
}

int job_end_arm(const job_args_t *a, job_plan_t *p, const js_fsroot_t *root, js_monitor_t *mon)
{
    p->args = a;
    bool whole = !strcmp(p->step_watched, "all") && a->stepd_pid <= 0;
    if (whole && p->b.kind != JS_BATCH_NONE) {
        const char *port = getenv("SLURM_SRUN_COMM_PORT");
        js_jobend_cfg_t cfg = {.kind = p->b.kind,
                               .job = p->b.job,
                               .node = p->b.node,
                               .srun_port = port ? atoi(port) : 0,
                               .self = getpid()};
        if (jobend_new(root, &cfg, &p->end) < 0)
            return -ENOMEM;
        if (p->b.kind == JS_BATCH_SLURM && snprintf(p->end_marker, sizeof(p->end_marker), "%s/.%s.end",
                                                    p->dir, p->b.job) >= (int)sizeof(p->end_marker))
            p->end_marker[0] = '\0';
    }
    if (p->end || (a->hooks && a->hooks->ipc_file)) {
        mon->stop_check = job_stop_check;
        mon->stop_arg = p;
    }
    return 0;
}

void job_end_free(job_plan_t *p)
{
    jobend_free(p->end);
    p->end = NULL;
}
