/* SPDX-License-Identifier: MIT
 *
 * The job's allocation (see allocation.h): the cores and memory it may use, from the affinity mask, the
 * cgroup's cpuset, quota and memory limit, and SLURM's environment.
 */
#include "core/allocation.h"

#include "sys/parse.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNLIMITED_BYTES (1ULL << 62) /* v1's "no limit" is the page counter's maximum, about 2^63 */
#define MIB (1024.0 * 1024.0)

static const char *const bound_names[JS_ALLOC_BOUND_MAX] = {
    [JS_ALLOC_CPU_MAX] = "cpu.max",
    [JS_ALLOC_CFS_QUOTA] = "cfs_quota",
    [JS_ALLOC_CPUSET] = "cpuset",
    [JS_ALLOC_AFFINITY] = "affinity",
    [JS_ALLOC_SLURM_CPUS_ON_NODE] = "SLURM_CPUS_ON_NODE",
    [JS_ALLOC_SLURM_JOB_CPUS_PER_NODE] = "SLURM_JOB_CPUS_PER_NODE",
    [JS_ALLOC_MEMORY_MAX] = "memory.max",
    [JS_ALLOC_MEMORY_LIMIT] = "memory.limit_in_bytes",
    [JS_ALLOC_SLURM_MEM_PER_NODE] = "SLURM_MEM_PER_NODE",
    [JS_ALLOC_SLURM_MEM_PER_CPU] = "SLURM_MEM_PER_CPU",
};

const char *allocation_bound_name(int bound)
{
    return bound >= 0 && bound < JS_ALLOC_BOUND_MAX ? bound_names[bound] : "none";
}

/* ---- parsers ---- */

static const char *skip_blanks(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* at_end: only blanks and newlines left. */
static bool at_end(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n')
        s++;
    return *s == '\0';
}

int alloc_parse_cpu_max(const char *s, double *ret_cores)
{
    const char *p = skip_blanks(s);
    bool unlimited = strncmp(p, "max", 3) == 0;
    uint64_t quota = 0, period;
    if (unlimited)
        p += 3;
    else if (parse_u64(&p, &quota) < 0)
        return -EINVAL;
    if (parse_u64(&p, &period) < 0 || period == 0 || !at_end(p))
        return -EINVAL;
    if (unlimited)
        return -ENODATA;
    *ret_cores = (double)quota / (double)period;
    return 0;
}

int alloc_parse_cfs(const char *quota, const char *period, double *ret_cores)
{
    const char *q = quota, *pp = period;
    int64_t qv;
    uint64_t pv;
    if (parse_i64(&q, &qv) < 0 || !at_end(q) || parse_u64(&pp, &pv) < 0 || !at_end(pp))
        return -EINVAL;
    if (qv < 0)
        return -ENODATA;
    if (pv == 0)
        return -EINVAL;
    *ret_cores = (double)qv / (double)pv;
    return 0;
}

int alloc_parse_limit(const char *s, double *ret_bytes)
{
    const char *p = skip_blanks(s);
    if (strncmp(p, "max", 3) == 0 && at_end(p + 3))
        return -ENODATA;
    if (*p == '-') /* v1 accepts -1 on write; a read never shows it, but be safe */
        return -ENODATA;
    uint64_t v;
    if (parse_u64(&p, &v) < 0 || !at_end(p))
        return -EINVAL;
    if (v >= UNLIMITED_BYTES)
        return -ENODATA;
    *ret_bytes = (double)v;
    return 0;
}

int alloc_slurm_cpus_per_node(const char *s, long node_index)
{
    const char *p = skip_blanks(s);
    long node = 0;
    int same = -1;
    bool all_same = true;
    for (;;) {
        uint64_t count, rep = 1;
        if (parse_u64(&p, &count) < 0 || count > 1u << 20)
            return -EINVAL;
        if (*p == '(') {
            p++;
            if (*p != 'x')
                return -EINVAL;
            p++;
            if (parse_u64(&p, &rep) < 0 || rep == 0 || *p != ')')
                return -EINVAL;
            p++;
        }
        if (node_index >= 0 && node_index >= node && (uint64_t)(node_index - node) < rep)
            return (int)count;
        node += rep > (uint64_t)1 << 30 ? 1L << 30 : (long)rep;
        if (same >= 0 && (int)count != same)
            all_same = false;
        same = (int)count;
        p = skip_blanks(p);
        if (*p != ',')
            break;
        p++;
    }
    if (!at_end(p))
        return -EINVAL;
    if (node_index < 0 && all_same && same >= 0)
        return same;
    return -ENODATA;
}

int alloc_parse_slurm_mem(const char *s, double *ret_bytes)
{
    const char *p = skip_blanks(s);
    uint64_t v;
    if (parse_u64(&p, &v) < 0)
        return -EINVAL;
    double scale = MIB;
    switch (*p) {
    case 'K':
    case 'k':
        scale = 1024.0;
        p++;
        break;
    case 'M':
    case 'm':
        p++;
        break;
    case 'G':
    case 'g':
        scale = MIB * 1024;
        p++;
        break;
    case 'T':
    case 't':
        scale = MIB * 1024 * 1024;
        p++;
        break;
    default:
        break;
    }
    if (!at_end(p))
        return -EINVAL;
    if (v == 0)
        return -ENODATA;
    *ret_bytes = (double)v * scale;
    return 0;
}

/* ---- resolution ---- */

static const char *env_get(char *const *envp, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; envp && envp[i]; i++)
        if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
            return envp[i] + n + 1;
    return NULL;
}

/* min_up: the smallest value `parse` gives for `file` from the cgroup up to its hierarchy's root. */
static double min_up(const js_cgroup_t *cg, js_cg_ctrl_t c, const char *file,
                     int (*parse)(const char *, double *))
{
    double best = NAN;
    char buf[128];
    for (unsigned up = 0; up < 256; up++) {
        ssize_t n = cgroupfs_read_up(cg, c, up, file, buf, sizeof(buf));
        if (n == -ERANGE)
            break;
        double v;
        if (n > 0 && parse(buf, &v) == 0 && (isnan(best) || v < best))
            best = v;
    }
    return best;
}

/* v1 CFS quota: smallest quota/period along the path. */
static double cfs_up(const js_cgroup_t *cg)
{
    double best = NAN;
    char q[64], p[64];
    for (unsigned up = 0; up < 256; up++) {
        ssize_t a = cgroupfs_read_up(cg, JS_CG_CPU, up, "cpu.cfs_quota_us", q, sizeof(q));
        if (a == -ERANGE)
            break;
        double v;
        if (a > 0 && cgroupfs_read_up(cg, JS_CG_CPU, up, "cpu.cfs_period_us", p, sizeof(p)) > 0 &&
            alloc_parse_cfs(q, p, &v) == 0 && (isnan(best) || v < best))
            best = v;
    }
    return best;
}

/* the cpuset list: the nearest cgroup on the path that has the file */
static void cpuset_of(const js_cgroup_t *cg, char *buf, size_t cap)
{
    int version = 0;
    buf[0] = '\0';
    if (cgroupfs_dir(cg, JS_CG_CPUSET, &version) < 0)
        return;
    static const char *const v1_files[] = {"cpuset.effective_cpus", "cpuset.cpus"};
    static const char *const v2_files[] = {"cpuset.cpus.effective"};
    const char *const *files = version == 2 ? v2_files : v1_files;
    size_t nf = version == 2 ? 1 : 2;
    for (unsigned up = 0; up < 256; up++)
        for (size_t f = 0; f < nf; f++) {
            ssize_t n = cgroupfs_read_up(cg, JS_CG_CPUSET, up, files[f], buf, cap);
            if (n == -ERANGE) {
                buf[0] = '\0';
                return;
            }
            if (n > 0 && cpulist_parse(buf, NULL, 0) > 0) {
                buf[strcspn(buf, "\n")] = '\0';
                return;
            }
        }
    buf[0] = '\0';
}

/* hierarchical_memory_limit of a v1 memory.stat */
static double v1_hier_limit(const js_cgroup_t *cg)
{
    int dir = cgroupfs_dir(cg, JS_CG_MEMORY, NULL);
    js_buf_t b = {0};
    double v = NAN;
    uint64_t u;
    if (dir >= 0 && fs_read(dir, "memory.stat", &b) == 0 &&
        kv_u64(b.p, "hierarchical_memory_limit", &u) == 0 && u < UNLIMITED_BYTES)
        v = (double)u;
    buf_free(&b);
    return v;
}

static int parse_pids_max(const char *s, double *ret)
{
    return alloc_parse_limit(s, ret); /* "max" or a count */
}

int allocation_resolve(const js_fsroot_t *r, pid_t pid, const js_cgroup_t *cg, char *const *envp,
                       js_allocation_t *ret)
{
    memset(ret, 0, sizeof(*ret));
    for (int i = 0; i < JS_ALLOC_BOUND_MAX; i++)
        ret->value[i] = NAN;
    ret->memory_high_bytes = ret->swap_max_bytes = ret->pids_max = NAN;

    if (pid > 0) {
        char path[48];
        js_buf_t b = {0};
        snprintf(path, sizeof(path), "%d/status", (int)pid);
        if (fs_read_record(r->proc, path, &b) == 0) {
            const char *p = strstr(b.p, "\nCpus_allowed_list:");
            if (p) {
                p = skip_blanks(p + strlen("\nCpus_allowed_list:"));
                size_t n = strcspn(p, "\n");
                if (n < sizeof(ret->affinity)) {
                    memcpy(ret->affinity, p, n);
                    ret->affinity[n] = '\0';
                    int c = cpulist_parse(ret->affinity, NULL, 0);
                    if (c > 0)
                        ret->value[JS_ALLOC_AFFINITY] = c;
                }
            }
        }
        buf_free(&b);
    }

    if (cg) {
        cpuset_of(cg, ret->cpuset, sizeof(ret->cpuset));
        int c = cpulist_parse(ret->cpuset, NULL, 0);
        if (c > 0)
            ret->value[JS_ALLOC_CPUSET] = c;
        int version = 0;
        if (cgroupfs_dir(cg, JS_CG_CPU, &version) >= 0) {
            if (version == 2)
                ret->value[JS_ALLOC_CPU_MAX] = min_up(cg, JS_CG_CPU, "cpu.max", alloc_parse_cpu_max);
            else
                ret->value[JS_ALLOC_CFS_QUOTA] = cfs_up(cg);
        }
        if (cgroupfs_dir(cg, JS_CG_MEMORY, &version) >= 0) {
            if (version == 2) {
                ret->value[JS_ALLOC_MEMORY_MAX] = min_up(cg, JS_CG_MEMORY, "memory.max", alloc_parse_limit);
                ret->memory_high_bytes = min_up(cg, JS_CG_MEMORY, "memory.high", alloc_parse_limit);
                ret->swap_max_bytes = min_up(cg, JS_CG_MEMORY, "memory.swap.max", alloc_parse_limit);
            } else {
                double v = v1_hier_limit(cg);
                if (isnan(v))
                    v = min_up(cg, JS_CG_MEMORY, "memory.limit_in_bytes", alloc_parse_limit);
                ret->value[JS_ALLOC_MEMORY_LIMIT] = v;
                double memsw = min_up(cg, JS_CG_MEMORY, "memory.memsw.limit_in_bytes", alloc_parse_limit);
                if (!isnan(memsw) && !isnan(v) && memsw >= v)
                    ret->swap_max_bytes = memsw - v;
            }
        }
        if (cgroupfs_dir(cg, JS_CG_PIDS, NULL) >= 0)
            ret->pids_max = min_up(cg, JS_CG_PIDS, "pids.max", parse_pids_max);
    }

    const char *v;
    int node_cpus = -1;
    uint64_t u;
    if ((v = env_get(envp, "SLURM_CPUS_ON_NODE")) && parse_u64(&v, &u) == 0 && at_end(v) && u > 0 &&
        u < 1u << 20) {
        node_cpus = (int)u;
        ret->value[JS_ALLOC_SLURM_CPUS_ON_NODE] = node_cpus;
    }
    if ((v = env_get(envp, "SLURM_JOB_CPUS_PER_NODE"))) {
        long idx = -1;
        const char *id = env_get(envp, "SLURM_NODEID");
        if (id && parse_u64(&id, &u) == 0 && at_end(id) && u < 1u << 20)
            idx = (long)u;
        int n = alloc_slurm_cpus_per_node(v, idx);
        if (n > 0) {
            ret->value[JS_ALLOC_SLURM_JOB_CPUS_PER_NODE] = n;
            if (node_cpus < 0)
                node_cpus = n;
        }
    }
    double bytes;
    if ((v = env_get(envp, "SLURM_MEM_PER_NODE")) && alloc_parse_slurm_mem(v, &bytes) == 0)
        ret->value[JS_ALLOC_SLURM_MEM_PER_NODE] = bytes;
    if ((v = env_get(envp, "SLURM_MEM_PER_CPU")) && alloc_parse_slurm_mem(v, &bytes) == 0 && node_cpus > 0)
        ret->value[JS_ALLOC_SLURM_MEM_PER_CPU] = bytes * node_cpus;

    ret->cores = ret->mem_limit_bytes = NAN;
    ret->cores_bound = ret->mem_bound = -1;
    for (int b = 0; b < JS_ALLOC_FIRST_MEMORY; b++) /* enum order is the tie order */
        if (!isnan(ret->value[b]) && ret->value[b] > 0 && (isnan(ret->cores) || ret->value[b] < ret->cores)) {
            ret->cores = ret->value[b];
            ret->cores_bound = b;
        }
    for (int b = JS_ALLOC_FIRST_MEMORY; b < JS_ALLOC_BOUND_MAX; b++)
        if (!isnan(ret->value[b]) && ret->value[b] > 0 &&
            (isnan(ret->mem_limit_bytes) || ret->value[b] < ret->mem_limit_bytes)) {
            ret->mem_limit_bytes = ret->value[b];
            ret->mem_bound = b;
        }
    return 0;
}
