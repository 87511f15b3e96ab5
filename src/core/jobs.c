/* SPDX-License-Identifier: MIT
 *
 * SLURM jobs by their cgroups (jobs.h): a walk of the SLURM part of the cgroup tree per scan, a handful of
 * small reads per job and step, and a uid -> user name cache.
 */
#include "core/jobs.h"

#include "sys/parse.h"
#include "sys/fsroot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* clang-format off */
static const js_column_t job_cols[JOB__MAX] = {
    [JOB_ID] = {"jobid", "text", JS_TEXT, JS_LABEL, 0, "SLURM job id"},
    [JOB_USER] = {"user", "text", JS_TEXT, JS_LABEL, 0, "the job's owner (user name, or the uid without one)"},
    [JOB_NODE] = {"node", "text", JS_TEXT, JS_LABEL, 0,
                  "SLURM node name where one host runs several slurmd (cgroup slurm_NODE), else empty"},
    [JOB_CPU] = {"cpu_ns", "ns", JS_INT, JS_COUNTER, 64,
                 "CPU time of the cgroup's tasks (cpuacct.usage; v2 cpu.stat usage_usec)"},
    [JOB_CPU_USER] = {"cpu_user_ns", "ns", JS_INT, JS_COUNTER, 64, "user-mode CPU time of the cgroup's tasks"},
    [JOB_CPU_SYSTEM] = {"cpu_system_ns", "ns", JS_INT, JS_COUNTER, 64, "kernel-mode CPU time of the cgroup's tasks"},
    [JOB_MEM] = {"memory_usage_bytes", "bytes", JS_INT, JS_GAUGE, 0,
                 "memory charged to the cgroup, page cache included (memory.usage_in_bytes; v2 memory.current)"},
    [JOB_MEM_MAX] = {"memory_max_usage_bytes", "bytes", JS_INT, JS_GAUGE, 0,
                     "high-water mark of the memory charged (memory.max_usage_in_bytes; v2 memory.peak)"},
    [JOB_MEM_LIMIT] = {"memory_limit_bytes", "bytes", JS_INT, JS_GAUGE, 0,
                       "the cgroup's memory limit (no series when unlimited)"},
    [JOB_RSS] = {"memory_rss_bytes", "bytes", JS_INT, JS_GAUGE, 0, "anonymous memory (memory.stat total_rss; v2 anon)"},
    [JOB_CACHE] = {"memory_cache_bytes", "bytes", JS_INT, JS_GAUGE, 0, "page cache (memory.stat total_cache; v2 file)"},
    [JOB_CPUS] = {"cpus", "count", JS_INT, JS_GAUGE, 0, "CPUs the cgroup may run on (cpuset effective CPUs)"},
    [JOB_STEP] = {"step", "text", JS_TEXT, JS_LABEL, 0, "job step: batch, extern, 0, 1, ..."},
};
/* clang-format on */
const js_table_t table_slurm_job = {"slurm_job", "SLURM jobs on this node, one row per job", JOB__MAX - 1,
                                    job_cols};
const js_table_t table_slurm_step = {"slurm_step", "SLURM job steps on this node, one row per step", JOB__MAX,
                                     job_cols};

#define UID_CACHE 64

struct js_jobs {
    struct {
        uid_t uid;
        char name[64];
    } users[UID_CACHE];
    size_t nusers, next;
    char text[4096];
};

js_jobs_t *jobs_new(void)
{
    return calloc(1, sizeof(js_jobs_t));
}

void jobs_free(js_jobs_t *j)
{
    free(j);
}

/* user_name: the name of `uid` (cached), or its number. */
static const char *user_name(js_jobs_t *j, uid_t uid)
{
    for (size_t i = 0; i < j->nusers; i++)
        if (j->users[i].uid == uid)
            return j->users[i].name;
    size_t slot = j->nusers < UID_CACHE ? j->nusers++ : (j->next++ % UID_CACHE);
    j->users[slot].uid = uid;
    char buf[4096];
    struct passwd pw, *res = NULL;
    if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res && res->pw_name)
        snprintf(j->users[slot].name, sizeof(j->users[slot].name), "%s", res->pw_name);
    else
        snprintf(j->users[slot].name, sizeof(j->users[slot].name), "%u", (unsigned)uid);
    return j->users[slot].name;
}

static int set_text(js_rows_t *r, js_value_t *v, const char *s)
{
    return rows_set_str(r, v, s, strlen(s));
}

/* read_text: the small file `dir`/`name` under the sys root into j->text. */
static bool read_text(js_jobs_t *j, int sys, const char *dir, const char *name)
{
    char path[1024];
    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
        return false;
    return fs_read_small(sys, path, j->text, sizeof(j->text)) > 0;
}

static void read_u64(js_jobs_t *j, int sys, const char *dir, const char *name, js_value_t *v, uint64_t mul)
{
    const char *p = j->text;
    uint64_t x;
    if (read_text(j, sys, dir, name) && parse_u64(&p, &x) == 0 && x <= (uint64_t)INT64_MAX / mul)
        val_int(v, (int64_t)(x * mul));
}

static void read_kv(js_jobs_t *j, const char *key, js_value_t *v, uint64_t mul)
{
    uint64_t x;
    if (kv_u64(j->text, key, &x) == 0 && x <= (uint64_t)INT64_MAX / mul)
        val_int(v, (int64_t)(x * mul));
}

/* cpus_count: CPUs in a list like "0-3,8\n" (-1 if it is not one). */
static int64_t cpus_count(const char *s)
{
    int64_t n = 0;
    const char *p = s;
    while (*p && *p != '\n') {
        uint64_t a, b;
        if (parse_u64(&p, &a) < 0)
            return -1;
        b = a;
        if (*p == '-') {
            p++;
            if (parse_u64(&p, &b) < 0 || b < a)
                return -1;
        }
        n += (int64_t)(b - a + 1);
        if (*p == ',')
            p++;
        else if (*p && *p != '\n')
            return -1;
    }
    return n;
}

static void read_cpus(js_jobs_t *j, int sys, const char *dir, const char *const *names, js_value_t *v)
{
    for (; *names; names++)
        if (read_text(j, sys, dir, *names)) {
            int64_t n = cpus_count(j->text);
            if (n > 0)
                val_int(v, n);
            return;
        }
}

/* A job or step found: its relative path under each controller, and its labels. */
typedef struct {
    bool v2;
    const char *rel; /* relative to the controllers' roots */
    const char *jobid, *step, *user, *node;
} found_t;

static int add_row(js_jobs_t *j, int sys, const found_t *f, js_rows_t *out)
{
    js_value_t *v = rows_add(out);
    if (!v)
        return -ENOMEM;
    if (set_text(out, &v[JOB_ID], f->jobid) < 0 || set_text(out, &v[JOB_USER], f->user) < 0 ||
        set_text(out, &v[JOB_NODE], f->node) < 0 || (f->step && set_text(out, &v[JOB_STEP], f->step) < 0))
        return -ENOMEM;
    char d[1100];
    if (!f->v2) {
        snprintf(d, sizeof(d), "fs/cgroup/cpuacct/%s", f->rel);
        read_u64(j, sys, d, "cpuacct.usage", &v[JOB_CPU], 1);
        read_u64(j, sys, d, "cpuacct.usage_user", &v[JOB_CPU_USER], 1);
        read_u64(j, sys, d, "cpuacct.usage_sys", &v[JOB_CPU_SYSTEM], 1);
        snprintf(d, sizeof(d), "fs/cgroup/memory/%s", f->rel);
        read_u64(j, sys, d, "memory.usage_in_bytes", &v[JOB_MEM], 1);
        read_u64(j, sys, d, "memory.max_usage_in_bytes", &v[JOB_MEM_MAX], 1);
        read_u64(j, sys, d, "memory.limit_in_bytes", &v[JOB_MEM_LIMIT], 1);
        if (v[JOB_MEM_LIMIT].present && v[JOB_MEM_LIMIT].i >= (INT64_C(1) << 62))
            v[JOB_MEM_LIMIT].present = false; /* PAGE_COUNTER_MAX: no limit */
        if (read_text(j, sys, d, "memory.stat")) {
            read_kv(j, "total_rss ", &v[JOB_RSS], 1);
            read_kv(j, "total_cache ", &v[JOB_CACHE], 1);
        }
        snprintf(d, sizeof(d), "fs/cgroup/cpuset/%s", f->rel);
        static const char *const cpuset_v1[] = {"cpuset.effective_cpus", "cpuset.cpus", NULL};
        read_cpus(j, sys, d, cpuset_v1, &v[JOB_CPUS]);
    } else {
        snprintf(d, sizeof(d), "fs/cgroup/%s", f->rel);
        if (read_text(j, sys, d, "cpu.stat")) {
            read_kv(j, "usage_usec ", &v[JOB_CPU], 1000);
            read_kv(j, "user_usec ", &v[JOB_CPU_USER], 1000);
            read_kv(j, "system_usec ", &v[JOB_CPU_SYSTEM], 1000);
        }
        read_u64(j, sys, d, "memory.current", &v[JOB_MEM], 1);
        read_u64(j, sys, d, "memory.peak", &v[JOB_MEM_MAX], 1);
        read_u64(j, sys, d, "memory.max", &v[JOB_MEM_LIMIT], 1); /* "max": no number, no limit */
        if (read_text(j, sys, d, "memory.stat")) {
            read_kv(j, "anon ", &v[JOB_RSS], 1);
            read_kv(j, "file ", &v[JOB_CACHE], 1);
        }
        static const char *const cpuset_v2[] = {"cpuset.cpus.effective", NULL};
        read_cpus(j, sys, d, cpuset_v2, &v[JOB_CPUS]);
    }
    return 0;
}

static bool is_dir(int dirfd, const struct dirent *e)
{
    if (e->d_type != DT_UNKNOWN)
        return e->d_type == DT_DIR;
    struct stat st;
    return fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

/* each_dir: call fn for every subdirectory of `path` (under the sys root) whose name starts with `prefix`. */
typedef int (*dir_fn)(void *arg, const char *name);
static int each_dir(int sys, const char *path, const char *prefix, dir_fn fn, void *arg)
{
    DIR *d;
    if (fs_opendir(sys, path, &d) < 0)
        return 0; /* absent: nothing there */
    int fd = dirfd(d);
    size_t pl = strlen(prefix);
    int r = 0;
    struct dirent *e;
    while (r >= 0 && (e = readdir(d)))
        if (e->d_name[0] != '.' && strncmp(e->d_name, prefix, pl) == 0 && is_dir(fd, e))
            r = fn(arg, e->d_name);
    closedir(d);
    return r;
}

typedef struct {
    js_jobs_t *j;
    const js_fsroot_t *root;
    js_rows_t *jobs, *steps;
    bool v2;
    char base[512]; /* the controller root (v1: fs/cgroup/cpuacct) or v2's fs/cgroup */
    char top[256];  /* v1: slurm[_NODE]/uid_UID; v2: system.slice/[NODE_]slurmstepd.scope */
    const char *node, *user, *jobid;
    int njobs;
} scan_t;

static int on_step(void *arg, const char *name)
{
    scan_t *s = arg;
    char rel[1024];
    if (snprintf(rel, sizeof(rel), "%s/job_%s/%s", s->top, s->jobid, name) >= (int)sizeof(rel))
        return 0;
    found_t f = {s->v2, rel, s->jobid, name + 5, s->user, s->node};
    return add_row(s->j, s->root->sys, &f, s->steps);
}

/* owner_v2: the uid of the first non-root task under `dir` (v2 has no uid in its path), or -1. */
static long owner_v2(scan_t *s, const char *dir, int depth)
{
    char path[1024];
    if (snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >= (int)sizeof(path))
        return -1;
    char text[512];
    ssize_t n = fs_read_small(s->root->sys, path, text, sizeof(text));
    const char *p = text;
    uint64_t pid;
    while (n > 0 && parse_u64(&p, &pid) == 0) {
        char st[64], buf[2048];
        snprintf(st, sizeof(st), "%llu/status", (unsigned long long)pid);
        uint64_t uid;
        if (fs_read_small(s->root->proc, st, buf, sizeof(buf)) > 0 && kv_u64(buf, "Uid:", &uid) == 0 &&
            uid != 0)
            return (long)uid;
        while (*p == '\n')
            p++;
    }
    if (depth >= 3)
        return -1;
    DIR *d;
    if (fs_opendir(s->root->sys, dir, &d) < 0)
        return -1;
    int fd = dirfd(d);
    long uid = -1;
    struct dirent *e;
    while (uid < 0 && (e = readdir(d)))
        if (e->d_name[0] != '.' && is_dir(fd, e)) {
            if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < (int)sizeof(path))
                uid = owner_v2(s, path, depth + 1);
        }
    closedir(d);
    return uid;
}

static int on_job(void *arg, const char *name)
{
    scan_t *s = arg;
    char rel[1024], dir[1536];
    if (snprintf(rel, sizeof(rel), "%s/%s", s->top, name) >= (int)sizeof(rel) ||
        snprintf(dir, sizeof(dir), "%s/%s", s->base, rel) >= (int)sizeof(dir))
        return 0;
    s->jobid = name + 4;
    if (s->v2) {
        long uid = owner_v2(s, dir, 0);
        s->user = uid >= 0 ? user_name(s->j, (uid_t)uid) : "";
    }
    found_t f = {s->v2, rel, s->jobid, NULL, s->user, s->node};
    int r = add_row(s->j, s->root->sys, &f, s->jobs);
    if (r < 0)
        return r;
    s->njobs++;
    return each_dir(s->root->sys, dir, "step_", on_step, s);
}

static int on_uid(void *arg, const char *name)
{
    scan_t *s = arg;
    char *end;
    unsigned long uid = strtoul(name + 4, &end, 10);
    if (*end)
        return 0;
    char slurm[sizeof(s->top)], dir[1024];
    memcpy(slurm, s->top, sizeof(slurm));
    s->user = user_name(s->j, (uid_t)uid);
    if (snprintf(s->top, sizeof(s->top), "%s/%s", slurm, name) >= (int)sizeof(s->top) ||
        snprintf(dir, sizeof(dir), "%s/%s", s->base, s->top) >= (int)sizeof(dir))
        return 0;
    int r = each_dir(s->root->sys, dir, "job_", on_job, s);
    snprintf(s->top, sizeof(s->top), "%s", slurm);
    return r;
}

static int on_slurm_v1(void *arg, const char *name)
{
    scan_t *s = arg;
    if (strcmp(name, "slurm") != 0 && strncmp(name, "slurm_", 6) != 0)
        return 0;
    s->node = name[5] == '_' ? name + 6 : "";
    char dir[1024];
    if (snprintf(s->top, sizeof(s->top), "%s", name) >= (int)sizeof(s->top) ||
        snprintf(dir, sizeof(dir), "%s/%s", s->base, name) >= (int)sizeof(dir))
        return 0;
    return each_dir(s->root->sys, dir, "uid_", on_uid, s);
}

static int on_scope_v2(void *arg, const char *name)
{
    scan_t *s = arg;
    static const char scope[] = "slurmstepd.scope";
    size_t n = strlen(name), k = sizeof(scope) - 1;
    if (n < k || strcmp(name + n - k, scope) != 0 || (n > k && name[n - k - 1] != '_'))
        return 0;
    char node[128] = "";
    if (n > k && n - k - 1 < sizeof(node)) {
        memcpy(node, name, n - k - 1);
        node[n - k - 1] = '\0';
    }
    s->node = node;
    char dir[1024];
    if (snprintf(s->top, sizeof(s->top), "system.slice/%s", name) >= (int)sizeof(s->top) ||
        snprintf(dir, sizeof(dir), "%s/%s", s->base, s->top) >= (int)sizeof(dir))
        return 0;
    int r = each_dir(s->root->sys, dir, "job_", on_job, s);
    s->node = "";
    return r;
}

int jobs_scan(js_jobs_t *j, const js_fsroot_t *root, js_rows_t *jobs, js_rows_t *steps)
{
    rows_clear(jobs);
    rows_clear(steps);
    if (root->sys < 0)
        return 0;
    scan_t s = {.j = j, .root = root, .jobs = jobs, .steps = steps, .node = "", .user = ""};
    char probe[64];
    bool unified = fs_read_small(root->sys, "fs/cgroup/cgroup.controllers", probe, sizeof(probe)) > 0;
    int r = 0;
    if (!unified) { /* v1, or hybrid (v1 controllers beside an empty unified tree) */
        snprintf(s.base, sizeof(s.base), "fs/cgroup/cpuacct");
        r = each_dir(root->sys, s.base, "slurm", on_slurm_v1, &s);
    } else {
        s.v2 = true;
        snprintf(s.base, sizeof(s.base), "fs/cgroup");
        r = each_dir(root->sys, "fs/cgroup/system.slice", "", on_scope_v2, &s);
    }
    return r < 0 ? r : s.njobs;
}

/* ---- one job's cgroup ---- */

typedef struct {
    const js_fsroot_t *root;
    const char *base, *top, *jobid, *step;
    char *buf;
    size_t cap;
    int found;
} find_t;

/* job_at: whether `base`/`top`/`uidname`/job_ID[/step_STEP] is a directory; sets the path when it is. */
static int job_at(find_t *f, const char *uidname)
{
    char rel[1024], dir[1600];
    int n = f->step ? snprintf(rel, sizeof(rel), "%s%s%s/job_%s/step_%s", f->top, uidname ? "/" : "",
                               uidname ? uidname : "", f->jobid, f->step)
                    : snprintf(rel, sizeof(rel), "%s%s%s/job_%s", f->top, uidname ? "/" : "",
                               uidname ? uidname : "", f->jobid);
    if (n < 0 || (size_t)n >= sizeof(rel) ||
        snprintf(dir, sizeof(dir), "%s/%s", f->base, rel) >= (int)sizeof(dir))
        return 0;
    struct stat st;
    if (fstatat(f->root->sys, dir, &st, 0) < 0 || !S_ISDIR(st.st_mode))
        return 0;
    if (snprintf(f->buf, f->cap, "/%s", rel) >= (int)f->cap)
        return -ENAMETOOLONG;
    f->found = 1;
    return 1;
}

static int on_uid_find(void *arg, const char *name)
{
    return job_at(arg, name);
}

int jobs_cgroup_find(const js_fsroot_t *root, const char *jobid, const char *step, const char *node,
                     uid_t uid, char *buf, size_t cap)
{
    if (root->sys < 0 || !jobid || !*jobid || strchr(jobid, '/') || (step && strchr(step, '/')) ||
        (node && strchr(node, '/')))
        return -ENOENT;
    find_t f = {.root = root, .jobid = jobid, .step = step, .buf = buf, .cap = cap};
    char tops[2][256];
    int ntops = 0;
    char probe[64];
    bool unified = fs_read_small(root->sys, "fs/cgroup/cgroup.controllers", probe, sizeof(probe)) > 0;
    if (!unified) {
        if (node && *node)
            snprintf(tops[ntops++], sizeof(tops[0]), "slurm_%s", node);
        snprintf(tops[ntops++], sizeof(tops[0]), "slurm");
        static const char *const ctrls[] = {"cpuacct", "memory", "freezer", "cpuset", "cpu,cpuacct"};
        for (size_t c = 0; c < sizeof(ctrls) / sizeof(ctrls[0]); c++) {
            char base[64];
            snprintf(base, sizeof(base), "fs/cgroup/%s", ctrls[c]);
            f.base = base;
            for (int t = 0; t < ntops; t++) {
                f.top = tops[t];
                int r;
                if (uid != (uid_t)-1) {
                    char u[32];
                    snprintf(u, sizeof(u), "uid_%u", (unsigned)uid);
                    r = job_at(&f, u);
                } else {
                    char dir[1024];
                    snprintf(dir, sizeof(dir), "%s/%s", base, tops[t]);
                    r = each_dir(root->sys, dir, "uid_", on_uid_find, &f);
                }
                if (r < 0)
                    return r;
                if (f.found)
                    return 0;
            }
        }
        return -ENOENT;
    }
    if (node && *node)
        snprintf(tops[ntops++], sizeof(tops[0]), "system.slice/%s_slurmstepd.scope", node);
    snprintf(tops[ntops++], sizeof(tops[0]), "system.slice/slurmstepd.scope");
    f.base = "fs/cgroup";
    for (int t = 0; t < ntops; t++) {
        f.top = tops[t];
        int r = job_at(&f, NULL);
        if (r < 0)
            return r;
        if (f.found)
            return 0;
    }
    return -ENOENT;
}
