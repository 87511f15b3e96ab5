/* SPDX-License-Identifier: MIT
 *
 * The batch job of an environment (batchenv.h): SLURM's variables, PBS's and OAR's node files, SLURM's host
 * lists and slurmstepd's command line. Small, allocation-free parsers.
 */
#include "core/batchenv.h"

#include "core/allocation.h"
#include "sys/fsroot.h"
#include "core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HOSTLIST_MAX 65536

const char *batchenv_kind_name(js_batch_kind_t k)
{
    switch (k) {
    case JS_BATCH_SLURM:
        return "slurm";
    case JS_BATCH_PBS:
        return "pbs";
    case JS_BATCH_OAR:
        return "oar";
    default:
        return "none";
    }
}

static const char *env_get(char *const *envp, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; envp && envp[i]; i++)
        if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
            return envp[i] + n + 1;
    return NULL;
}

/* env_first: the first of the names that is set and not empty. */
static const char *env_first(char *const *envp, const char *a, const char *b)
{
    const char *v = env_get(envp, a);
    if ((!v || !*v) && b)
        v = env_get(envp, b);
    return v && *v ? v : NULL;
}

/* copy: `s` into `dst` when it fits; -ENAMETOOLONG otherwise. */
static int copy(char *dst, size_t cap, const char *s)
{
    size_t n = strlen(s);
    if (n >= cap)
        return -ENAMETOOLONG;
    memcpy(dst, s, n + 1);
    return 0;
}

/* ---- SLURM host lists ---- */

/* one_name: expand the single name [s, e) (at most one bracket group) into fn calls. With fn NULL only
 * counts. Returns the number of names or -EINVAL. */
static int one_name(const char *s, const char *e, int (*fn)(void *, const char *), void *arg, int *ret_stop)
{
    const char *lb = memchr(s, '[', (size_t)(e - s));
    char name[256];
    if (!lb) {
        if (e == s || (size_t)(e - s) >= sizeof(name) || memchr(s, ']', (size_t)(e - s)))
            return -EINVAL;
        if (fn) {
            memcpy(name, s, (size_t)(e - s));
            name[e - s] = '\0';
            *ret_stop = fn(arg, name);
        }
        return 1;
    }
    const char *rb = memchr(lb, ']', (size_t)(e - lb));
    if (!rb || memchr(rb + 1, '[', (size_t)(e - rb - 1)) || memchr(rb + 1, ']', (size_t)(e - rb - 1)))
        return -EINVAL;
    size_t plen = (size_t)(lb - s), slen = (size_t)(e - rb - 1);
    int count = 0;
    const char *p = lb + 1;
    while (p < rb) {
        const char *q = p;
        while (q < rb && *q >= '0' && *q <= '9')
            q++;
        if (q == p || q - p > 18)
            return -EINVAL;
        int width = (int)(q - p);
        unsigned long long a = strtoull(p, NULL, 10), b = a;
        if (q < rb && *q == '-') {
            const char *r = ++q;
            while (q < rb && *q >= '0' && *q <= '9')
                q++;
            if (q == r || q - r > 18)
                return -EINVAL;
            b = strtoull(r, NULL, 10);
            if (b < a)
                return -EINVAL;
        }
        if (q < rb && *q != ',')
            return -EINVAL;
        if (b - a >= HOSTLIST_MAX || count + (int)(b - a + 1) > HOSTLIST_MAX)
            return -E2BIG;
        for (unsigned long long v = a; v <= b; v++) {
            count++;
            if (fn && !*ret_stop) {
                int n =
                    snprintf(name, sizeof(name), "%.*s%0*llu%.*s", (int)plen, s, width, v, (int)slen, rb + 1);
                if (n < 0 || (size_t)n >= sizeof(name))
                    return -EINVAL;
                *ret_stop = fn(arg, name);
            }
        }
        p = q < rb ? q + 1 : q;
        if (q < rb && p == rb)
            return -EINVAL; /* a trailing comma */
    }
    return count ? count : -EINVAL;
}

/* hostlist_walk: the names of `list` (commas outside brackets separate them). */
static int hostlist_walk(const char *list, int (*fn)(void *, const char *), void *arg, int *ret_stop)
{
    const char *s = list;
    int total = 0;
    while (*s == ' ')
        s++;
    if (!*s)
        return -EINVAL;
    for (;;) {
        const char *e = s;
        int depth = 0;
        while (*e && (depth || *e != ',')) {
            if (*e == '[')
                depth++;
            else if (*e == ']')
                depth--;
            if (depth < 0 || depth > 1 || *e == ' ' || *e == '\n')
                return -EINVAL;
            e++;
        }
        int n = one_name(s, e, fn, arg, ret_stop);
        if (n < 0)
            return n;
        total += n;
        if (total > HOSTLIST_MAX)
            return -E2BIG;
        if (fn && *ret_stop)
            return total;
        if (!*e)
            return total;
        s = e + 1;
    }
}

int hostlist_each(const char *list, int (*fn)(void *arg, const char *name), void *arg)
{
    int stop = 0;
    int n = hostlist_walk(list, NULL, NULL, &stop);
    if (n < 0 || !fn)
        return n;
    n = hostlist_walk(list, fn, arg, &stop);
    return stop ? stop : n;
}

int hostlist_count(const char *list)
{
    return hostlist_each(list, NULL, NULL);
}

/* ---- node files ---- */

/* same_host: equal, or equal up to the first '.' of either (a short name against a qualified one) */
static bool same_host(const char *a, size_t alen, const char *b)
{
    size_t blen = strlen(b);
    if (alen == blen && memcmp(a, b, alen) == 0)
        return true;
    const char *ad = memchr(a, '.', alen), *bd = strchr(b, '.');
    size_t as = ad ? (size_t)(ad - a) : alen, bs = bd ? (size_t)(bd - b) : blen;
    return (ad || bd) && as == bs && as > 0 && memcmp(a, b, as) == 0;
}

int nodefile_parse(const char *text, const char *host, char *nodes, size_t cap, int *ret_nnodes,
                   int *ret_cores, char ret_node[128])
{
    size_t used = 0;
    int nn = 0, cores = 0;
    ret_node[0] = '\0';
    if (cap)
        nodes[0] = '\0';
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        if (!e)
            e = p + strlen(p);
        const char *a = p, *b = e;
        while (a < b && (*a == ' ' || *a == '\t' || *a == '\r'))
            a++;
        while (b > a && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\r'))
            b--;
        /* OAR and some PBS files may carry more after the host name: keep the first word */
        const char *w = a;
        while (w < b && *w != ' ' && *w != '\t')
            w++;
        size_t len = (size_t)(w - a);
        if (len) {
            if (host && same_host(a, len, host)) {
                cores++;
                if (!ret_node[0] && len < 128) {
                    memcpy(ret_node, a, len);
                    ret_node[len] = '\0';
                }
            }
            /* distinct hosts, in order of first appearance */
            bool seen = false;
            for (const char *q = nodes; used && q < nodes + used;) {
                const char *c = memchr(q, ',', (size_t)(nodes + used - q));
                size_t ql = c ? (size_t)(c - q) : (size_t)(nodes + used - q);
                if (ql == len && memcmp(q, a, len) == 0) {
                    seen = true;
                    break;
                }
                q += ql + 1;
            }
            if (!seen) {
                if (used + len + 2 > cap)
                    return -ENAMETOOLONG;
                if (used)
                    nodes[used++] = ',';
                memcpy(nodes + used, a, len);
                used += len;
                nodes[used] = '\0';
                nn++;
            }
        }
        p = *e ? e + 1 : e;
    }
    if (!nn)
        return -EINVAL;
    *ret_nnodes = nn;
    *ret_cores = cores;
    return 0;
}

/* read_nodefile: a node file of at most 4 MiB into a new string. */
static char *read_nodefile(const char *path, int *ret_errno)
{
    int fd = fs_open(AT_FDCWD, path);
    if (fd < 0) {
        *ret_errno = -fd;
        return NULL;
    }
    size_t cap = 4096, len = 0;
    char *s = malloc(cap);
    while (s) {
        if (len + 1 >= cap) {
            if (cap >= (4u << 20)) {
                *ret_errno = EFBIG;
                free(s);
                s = NULL;
                break;
            }
            char *t = realloc(s, cap * 2);
            if (!t) {
                free(s);
                s = NULL;
                break;
            }
            s = t;
            cap *= 2;
        }
        ssize_t n = read(fd, s + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            *ret_errno = errno;
            free(s);
            s = NULL;
            break;
        }
        if (n == 0) {
            s[len] = '\0';
            break;
        }
        len += (size_t)n;
    }
    if (!s && !*ret_errno)
        *ret_errno = ENOMEM;
    close(fd);
    return s;
}

static int from_nodefile(js_batch_job_t *ret, const char *file, const char *host, char *why, size_t whylen)
{
    if (copy(ret->nodefile, sizeof(ret->nodefile), file) < 0) {
        why_set(why, whylen, "node file name too long");
        return -EINVAL;
    }
    int e = 0;
    char *text = read_nodefile(file, &e);
    if (!text) {
        why_set(why, whylen, "cannot read the node file %s: %s", file, strerror(e));
        return -EINVAL;
    }
    int nn = 0, cores = 0;
    char node[128];
    int r = nodefile_parse(text, host, ret->nodelist, sizeof(ret->nodelist), &nn, &cores, node);
    free(text);
    if (r < 0) {
        why_set(why, whylen, "node file %s: %s", file, r == -EINVAL ? "no host in it" : "too many hosts");
        return -EINVAL;
    }
    ret->nnodes = nn;
    if (cores > 0) {
        ret->cores = cores;
        snprintf(ret->node, sizeof(ret->node), "%s", node);
    } else {
        snprintf(ret->node, sizeof(ret->node), "%s", host ? host : "");
    }
    return 0;
}

bool batch_safe_name(const char *s)
{
    if (!*s || !strcmp(s, ".") || !strcmp(s, ".."))
        return false;
    for (; *s; s++)
        if (*s == '/' || (unsigned char)*s < 0x20 || *s == 0x7f)
            return false;
    return true;
}

static int parse_slurm(char *const *envp, const char *host, js_batch_job_t *ret, char *why, size_t whylen)
{
    const char *job = env_first(envp, "SLURM_JOB_ID", "SLURM_JOBID");
    ret->kind = JS_BATCH_SLURM;
    if (copy(ret->job, sizeof(ret->job), job) < 0 || !batch_safe_name(ret->job)) {
        why_set(why, whylen, "invalid SLURM_JOB_ID '%.64s'", job);
        return -EINVAL;
    }
    const char *step = env_first(envp, "SLURM_STEP_ID", "SLURM_STEPID");
    if (step && copy(ret->step, sizeof(ret->step), step) < 0) {
        why_set(why, whylen, "invalid SLURM_STEP_ID '%.64s'", step);
        return -EINVAL;
    }
    const char *node = env_first(envp, "SLURMD_NODENAME", NULL);
    if (!node)
        node = host;
    if (node && (copy(ret->node, sizeof(ret->node), node) < 0 || !batch_safe_name(ret->node))) {
        why_set(why, whylen, "invalid node name '%.64s'", node);
        return -EINVAL;
    }
    const char *list = env_first(envp, "SLURM_JOB_NODELIST", "SLURM_NODELIST");
    if (list) {
        int n = hostlist_count(list);
        if (n < 0 || copy(ret->nodelist, sizeof(ret->nodelist), list) < 0) {
            why_set(why, whylen, "invalid SLURM_JOB_NODELIST '%.200s'", list);
            return -EINVAL;
        }
        ret->nnodes = n;
    }
    const char *nn = env_first(envp, "SLURM_JOB_NUM_NODES", "SLURM_NNODES");
    if (nn) {
        char *end;
        long v = strtol(nn, &end, 10);
        if (*end || v <= 0 || v > HOSTLIST_MAX || (ret->nnodes && v != ret->nnodes)) {
            why_set(why, whylen, "invalid SLURM_JOB_NUM_NODES '%.32s'", nn);
            return -EINVAL;
        }
        ret->nnodes = (int)v;
    }
    const char *cpus = env_first(envp, "SLURM_CPUS_ON_NODE", NULL);
    if (cpus) {
        char *end;
        long v = strtol(cpus, &end, 10);
        if (*end || v <= 0 || v > 1 << 20) {
            why_set(why, whylen, "invalid SLURM_CPUS_ON_NODE '%.32s'", cpus);
            return -EINVAL;
        }
        ret->cores = (double)v;
    }
    const char *mem = env_first(envp, "SLURM_MEM_PER_NODE", NULL);
    double bytes;
    if (mem) {
        int r = alloc_parse_slurm_mem(mem, &bytes);
        if (r == -EINVAL) {
            why_set(why, whylen, "invalid SLURM_MEM_PER_NODE '%.32s'", mem);
            return -EINVAL;
        }
        if (r == 0) {
            ret->mem_bytes = bytes;
            ret->mem_from = "SLURM_MEM_PER_NODE";
        }
    } else if ((mem = env_first(envp, "SLURM_MEM_PER_CPU", NULL))) {
        int r = alloc_parse_slurm_mem(mem, &bytes);
        if (r == -EINVAL) {
            why_set(why, whylen, "invalid SLURM_MEM_PER_CPU '%.32s'", mem);
            return -EINVAL;
        }
        if (r == 0 && !isnan(ret->cores)) {
            ret->mem_bytes = bytes * ret->cores;
            ret->mem_from = "SLURM_MEM_PER_CPU";
        }
    }
    const char *gpus = env_first(envp, "SLURM_JOB_GPUS", "SLURM_STEP_GPUS");
    if (gpus)
        snprintf(ret->gpus, sizeof(ret->gpus), "%s", gpus);
    return 0;
}

int batchenv_parse(char *const *envp, const char *host, js_batch_job_t *ret, char *why, size_t whylen)
{
    memset(ret, 0, sizeof(*ret));
    ret->cores = ret->mem_bytes = NAN;
    if (why && whylen)
        why[0] = '\0';
    if (env_first(envp, "SLURM_JOB_ID", "SLURM_JOBID"))
        return parse_slurm(envp, host, ret, why, whylen);
    const char *job = env_first(envp, "PBS_JOBID", NULL);
    js_batch_kind_t kind = JS_BATCH_PBS;
    const char *file = env_first(envp, "PBS_NODEFILE_LOCAL", "PBS_NODEFILE");
    if (!job) {
        job = env_first(envp, "OAR_JOB_ID", "OAR_JOBID");
        file = env_first(envp, "OAR_NODEFILE", "OAR_FILE_NODES");
        kind = JS_BATCH_OAR;
    }
    if (!job)
        return -ENOENT;
    ret->kind = kind;
    if (copy(ret->job, sizeof(ret->job), job) < 0 || !batch_safe_name(ret->job)) {
        why_set(why, whylen, "invalid %s '%.64s'", kind == JS_BATCH_PBS ? "PBS_JOBID" : "OAR_JOB_ID", job);
        return -EINVAL;
    }
    if (file) {
        int r = from_nodefile(ret, file, host, why, whylen);
        if (r < 0)
            return r;
    } else if (host) {
        snprintf(ret->node, sizeof(ret->node), "%s", host);
    }
    if (!batch_safe_name(ret->node)) {
        why_set(why, whylen, "invalid node name '%.64s'", ret->node);
        return -EINVAL;
    }
    return 0;
}

/* ---- slurmstepd ---- */

int stepd_parse_cmdline(const char *buf, size_t len, char *job, size_t jobcap, char *step, size_t stepcap)
{
    static const char prefix[] = "slurmstepd: [";
    size_t pl = sizeof(prefix) - 1;
    if (len < pl + 4 || memcmp(buf, prefix, pl) != 0)
        return -EINVAL;
    const char *p = buf + pl, *end = buf + len;
    const char *dot = p;
    while (dot < end && *dot >= '0' && *dot <= '9')
        dot++;
    if (dot == p || dot >= end || *dot != '.')
        return -EINVAL;
    const char *s = dot + 1, *rb = s;
    while (rb < end && *rb != ']' && *rb != '\0')
        rb++;
    if (rb >= end || *rb != ']' || rb == s)
        return -EINVAL;
    for (const char *q = rb + 1; q < end; q++)
        if (*q != '\0' && *q != ' ')
            return -EINVAL;
    for (const char *q = s; q < rb; q++)
        if (!((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'z') || *q == '_' || *q == '+'))
            return -EINVAL;
    size_t jl = (size_t)(dot - p), sl = (size_t)(rb - s);
    if (jl >= jobcap || sl >= stepcap)
        return -EINVAL;
    memcpy(job, p, jl);
    job[jl] = '\0';
    memcpy(step, s, sl);
    step[sl] = '\0';
    return 0;
}
